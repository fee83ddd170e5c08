/* harness.h — helpers shared by the interpreter tests: parse + verify a
 * source text (tests/common's load_text / load_src), bind kernel arguments
 * by name, deterministic random data. */
#ifndef TEST_INTERP_HARNESS_H
#define TEST_INTERP_HARNESS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "dtype.h"
#include "interp.h"
#include "ir.h"
#include "testutil.h"

/* Parses and verifies text; fails the test with the diagnostics otherwise. */
static inline Module *h_load(const char *name, const char *text, const Define *defs, int ndefs)
{
	return load_text(name, text, defs, ndefs);
}

/* Loads TILEASM_SRCDIR/examples/<file> with -D defines. */
static inline Module *h_load_example_defs(const char *file, const Define *defs, int ndefs)
{
	char rel[512];
	snprintf(rel, sizeof rel, "examples/%s", file);
	return load_src(rel, defs, ndefs);
}

/* Loads TILEASM_SRCDIR/examples/<file>. */
static inline Module *h_load_example(const char *file) { return h_load_example_defs(file, NULL, 0); }

/* Argument list of kernel 0 with lookup by name. */
typedef struct {
	Module *m;
	int k;
	InterpArg args[32];
} Args;

static inline int h_argi(Args *a, const char *name)
{
	const Kernel *k = &a->m->kernels.data[a->k];
	cr_assert_leq(k->nargs, 32);
	for (int i = 0; i < k->nargs; i++) {
		const char *n = k->args[i].buf >= 0 ? a->m->bufs.data[k->args[i].buf].name
		                                    : a->m->vars.data[k->args[i].var].name;
		if (!strcmp(n, name))
			return i;
	}
	cr_assert_fail("kernel has no argument '%s'", name);
	return -1;
}

static inline void h_tensor(Args *a, const char *name, void *data, size_t bytes)
{
	int i = h_argi(a, name);
	a->args[i].data = data;
	a->args[i].bytes = bytes;
}

static inline void h_int(Args *a, const char *name, int64_t v) { a->args[h_argi(a, name)].ival = v; }
static inline void h_float(Args *a, const char *name, double v) { a->args[h_argi(a, name)].fval = v; }

/* Runs; returns interp_run's result and leaves the diagnostics in *out
 * (caller frees) when out is non-NULL, else fails on error. */
static inline int h_run(Args *a, char **out)
{
	Diag d;
	diag_init(&d);
	int rc = interp_run(a->m, a->k, a->args, &d);
	if (out)
		*out = strdup(diag_text(&d));
	else
		cr_assert_eq(rc, 0, "interp_run failed:\n%s", diag_text(&d));
	diag_free(&d);
	return rc;
}

/* Deterministic data in [-1, 1). */
static inline double h_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) * 0x1p-52 - 1.0;
}

static inline uint16_t *h_f16_array(size_t n, uint64_t seed, double scale)
{
	uint16_t *p = malloc(n * 2 + 2);
	for (size_t i = 0; i < n; i++)
		p[i] = dt_f16_from_double(h_rand(&seed) * scale);
	return p;
}

static inline uint16_t *h_bf16_array(size_t n, uint64_t seed, double scale)
{
	uint16_t *p = malloc(n * 2 + 2);
	for (size_t i = 0; i < n; i++)
		p[i] = dt_bf16_from_double(h_rand(&seed) * scale);
	return p;
}

static inline float *h_f32_array(size_t n, uint64_t seed, double scale)
{
	float *p = malloc(n * 4 + 4);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(h_rand(&seed) * scale);
	return p;
}

/* |got - want| <= atol + rtol * |want| for every element; reports the worst. */
static inline void h_close(const char *what, const double *got, const double *want, size_t n, double atol,
                           double rtol)
{
	for (size_t i = 0; i < n; i++) {
		double err = fabs(got[i] - want[i]);
		cr_assert(err <= atol + rtol * fabs(want[i]) && !isnan(got[i]),
		          "%s: element %zu is %.8g, reference %.8g (error %.3g)", what, i, got[i], want[i], err);
	}
}

#endif
