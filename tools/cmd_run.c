/* cmd_run.c — `tileasm run FILE.tile --backend=B`: random inputs, one run on
 * the backend, one on the interpreter, and a comparison of every tensor the
 * kernel writes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "cli.h"
#include "dtype.h"
#include "run.h"
#include "tileasm.h"

/* splitmix64: a seeded generator so failures reproduce with --seed. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill_random(DType t, void *data, int64_t n, uint64_t *seed)
{
	if (dtype_is_packed(t)) /* the padding nibbles too */
		memset(data, 0, (size_t)dtype_storage_bytes(t, n));
	for (int64_t i = 0; i < n; i++) {
		uint64_t r = next_rand(seed);
		if (dtype_is_float(t))
			dt_set_double(t, data, i, (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0);
		else if (t == DT_BOOL)
			dt_set_int(t, data, i, (int64_t)(r & 1));
		else if (dtype_is_packed(t))
			dt_set_int(t, data, i, (int64_t)(r % 16));
		else
			dt_set_int(t, data, i, (int64_t)(r % 17) - (dtype_is_signed(t) ? 8 : 0));
	}
}

/* Outputs start as NaN (floats) or 0xA5 bytes so unwritten elements show. */
static void poison(DType t, void *data, int64_t n)
{
	int sz = dtype_bytes(t);
	if (!dtype_is_float(t)) {
		memset(data, 0xA5, (size_t)dtype_storage_bytes(t, n));
		return;
	}
	for (int64_t i = 0; i < n; i++)
		dt_store_double(t, (char *)data + i * sz, NAN);
}

typedef struct {
	double atol, rtol;
} Tol;

static Tol tolerance(DType t)
{
	switch (t) {
	case DT_F16: return (Tol){2e-3, 1e-2};
	case DT_BF16: return (Tol){1e-2, 3e-2};
	case DT_FP8E4M3:
	case DT_FP8E5M2:
	case DT_FP8E4M3FNUZ:
	case DT_FP8E5M2FNUZ: return (Tol){6e-2, 2.5e-1};
	case DT_F32: return (Tol){1e-4, 1e-4};
	case DT_F64: return (Tol){1e-10, 1e-10};
	default: return (Tol){0, 0};
	}
}

/* The spacing of t's values at |x| (x > 0): 2^(exponent of x - fraction bits). */
static double ulp_at(DType t, double x)
{
	int frac;
	switch (t) {
	case DT_F16: frac = 10; break;
	case DT_BF16: frac = 7; break;
	case DT_FP8E4M3:
	case DT_FP8E4M3FNUZ: frac = 3; break;
	case DT_FP8E5M2:
	case DT_FP8E5M2FNUZ: frac = 2; break;
	case DT_F32: frac = 23; break;
	default: frac = 52; break;
	}
	int e;
	frexp(x, &e);
	return x > 0 ? ldexp(1.0, e - 1 - frac) : 0;
}

/* Compares one tensor; prints a line; returns the number of bad elements.
 * slack (or NULL): interp_run_slack's {sum of |values|, adds} per element of a
 * tensor the kernel atomically adds floats into; each add rounds, and the GPU
 * may apply them in another order than the interpreter, so the tolerance there
 * grows by adds * ulp(sum of |values|). */
static int64_t compare(const char *name, DType t, const void *got, const void *want, int64_t n, const double *slack)
{
	Tol tol = tolerance(t);
	double max_abs = 0, max_rel = 0;
	int64_t bad = 0, first_bad = -1;
	for (int64_t i = 0; i < n; i++) {
		double g = dt_get_double(t, got, i), w = dt_get_double(t, want, i);
		if (!dtype_is_float(t)) {
			g = (double)dt_get_int(t, got, i);
			w = (double)dt_get_int(t, want, i);
		}
		if (isnan(w) && isnan(g))
			continue;
		double err = fabs(g - w);
		double order = slack ? slack[2 * i + 1] * ulp_at(t, slack[2 * i]) : 0;
		bool ok = err <= tol.atol + tol.rtol * fabs(w) + order;
		if (isnan(err) || (isinf(g) || isinf(w)))
			ok = g == w;
		if (!ok && bad++ == 0)
			first_bad = i;
		if (!isnan(err) && !isinf(err)) {
			max_abs = fmax(max_abs, err);
			if (fabs(w) > 1e-6)
				max_rel = fmax(max_rel, err / fabs(w));
		}
	}
	printf("  %-10s %-8s %10lld elems  max abs err %.3g  max rel err %.3g", name, dtype_name(t), (long long)n,
	       max_abs, max_rel);
	if (bad)
		printf("  %lld bad (first at %lld: got %g, want %g)", (long long)bad, (long long)first_bad,
		       dt_get_double(t, got, first_bad), dt_get_double(t, want, first_bad));
	printf("\n");
	return bad;
}

static int set_arg(const Module *m, const Kernel *k, InterpArg *args, bool *given, const char *spec)
{
	const char *eq = strchr(spec, '=');
	if (!eq) {
		fprintf(stderr, "tileasm: error: --arg expects NAME=VALUE, got '%s'\n", spec);
		return -1;
	}
	for (int i = 0; i < k->nargs; i++) {
		if (k->args[i].var < 0)
			continue;
		const Var *v = &m->vars.data[k->args[i].var];
		if (strlen(v->name) != (size_t)(eq - spec) || strncmp(v->name, spec, (size_t)(eq - spec)))
			continue;
		char *end;
		errno = 0;
		if (dtype_is_float((DType)v->type)) {
			args[i].fval = strtod(eq + 1, &end);
		} else {
			args[i].ival = strtoll(eq + 1, &end, 0);
		}
		if (errno || end == eq + 1 || *end) {
			fprintf(stderr, "tileasm: error: --arg %s: bad value\n", spec);
			return -1;
		}
		if (v->kind == V_SYMBOL && (args[i].ival < 1 || args[i].ival > INT32_MAX)) {
			/* as -D: a shape symbol is a positive i32 */
			fprintf(stderr, "tileasm: error: --arg %s: shape symbols are 1 to 2147483647\n", spec);
			return -1;
		}
		if (v->kind != V_SYMBOL && !dtype_is_float((DType)v->type) && v->type != DT_BOOL &&
		    dt_wrap_int((DType)v->type, args[i].ival) != args[i].ival) {
			fprintf(stderr, "tileasm: error: --arg %s: out of range for %s\n", spec, dtype_name((DType)v->type));
			return -1;
		}
		given[i] = true;
		return 0;
	}
	fprintf(stderr, "tileasm: error: --arg %.*s: the kernel has no scalar parameter or unspecialised symbol of "
	                "that name\n", (int)(eq - spec), spec);
	return -1;
}

int cli_run(int argc, char **argv)
{
	const char *file = NULL, *backend = NULL, *target = NULL, *kname = NULL, *val;
	const char *argspecs[64];
	int nargspecs = 0, bench = 0, profile = 0, r, rc = 2;
	uint64_t seed = 1, max_steps = 0;
	ta_ctx *ctx = ta_ctx_create();
	ta_module *tm = NULL;
	InterpArg *args = NULL, *ref = NULL;
	bool *written = NULL, *accumulated = NULL, *given = NULL;
	double **slack = NULL; /* per argument: interp_run_slack's record, for float tensors atomically added into */
	int nargs = 0;
	if (!ctx)
		return 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((r = cli_opt(argc, argv, &i, "backend", &val)) || (r = cli_opt(argc, argv, &i, "target", &val)) ||
		    (r = cli_opt(argc, argv, &i, "seed", &val)) || (r = cli_opt(argc, argv, &i, "kernel", &val)) ||
		    (r = cli_opt(argc, argv, &i, "arg", &val)) || (r = cli_opt(argc, argv, &i, "max-steps", &val))) {
			if (r < 0) {
				fprintf(stderr, "tileasm: error: option '%s' needs a value\n", a);
				goto done;
			}
			if (!strncmp(a, "--backend", 9))
				backend = val;
			else if (!strncmp(a, "--target", 8))
				target = val;
			else if (!strncmp(a, "--kernel", 8))
				kname = val;
			else if (!strncmp(a, "--arg", 5)) {
				if (nargspecs == 64) {
					fprintf(stderr, "tileasm: error: too many --arg options\n");
					goto done;
				}
				argspecs[nargspecs++] = val;
			} else if (!strncmp(a, "--max-steps", 11)) {
				char *end;
				errno = 0;
				max_steps = strtoull(val, &end, 0);
				if (*end || !*val || *val == '-' || errno || !max_steps) {
					fprintf(stderr, "tileasm: error: --max-steps needs a positive integer\n");
					goto done;
				}
			} else {
				char *end;
				seed = strtoull(val, &end, 0);
				if (*end || !*val) {
					fprintf(stderr, "tileasm: error: --seed needs an integer\n");
					goto done;
				}
			}
		} else if (!strcmp(a, "--bench")) {
			bench = 1;
		} else if (!strcmp(a, "--profile")) {
			profile = 1;
		} else if (!strncmp(a, "-D", 2)) {
			const char *def = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			if (!def || cli_parse_define(ctx, def))
				goto done;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "tileasm: error: unknown option '%s' (see tileasm --help)\n", a);
			goto done;
		} else if (file) {
			fprintf(stderr, "tileasm: error: more than one input file\n");
			goto done;
		} else {
			file = a;
		}
	}
	if (!file || !backend) {
		fprintf(stderr, "tileasm: error: usage: tileasm run FILE.tile --backend=interp|emu|cuda|hsa [-D N=V]...\n");
		goto done;
	}
	Target tgt = {0};
	if (target && target_parse(target, &tgt)) {
		fprintf(stderr, "tileasm: error: unknown target '%s' (see tileasm targets)\n", target);
		goto done;
	}
	enum { B_INTERP, B_CUDA, B_EMU, B_HSA } be;
	if (!strcmp(backend, "interp"))
		be = B_INTERP;
	else if (!strcmp(backend, "cuda"))
		be = B_CUDA;
	else if (!strcmp(backend, "emu"))
		be = B_EMU;
	else if (!strcmp(backend, "hsa"))
		be = B_HSA;
	else {
		fprintf(stderr, "tileasm: error: unknown backend '%s' (interp, emu, cuda, hsa)\n", backend);
		goto done;
	}
	if ((be == B_EMU || be == B_HSA) && !target)
		tgt.id = TA_TARGET_GFX942;
	if ((be == B_EMU || be == B_HSA) && !target_is_amd(tgt.id)) {
		fprintf(stderr, "tileasm: error: --backend=%s needs an AMD target (gfx1100, gfx90a or gfx942)\n", backend);
		goto done;
	}
	if (be == B_CUDA && !target)
		tgt.id = TA_TARGET_SM90A;
	if (be == B_CUDA && !target_is_nvidia(tgt.id)) {
		fprintf(stderr, "tileasm: error: --backend=cuda needs an NVIDIA target (sm_80 or sm_90a)\n");
		goto done;
	}
	rc = 1;
	tm = cli_load_module(ctx, file);
	if (!tm)
		goto done;
	const Module *m = ta_module_ir(tm);
	int kid = 0;
	if (kname) {
		for (kid = 0; (size_t)kid < m->kernels.len && strcmp(m->kernels.data[kid].name, kname); kid++)
			;
		if ((size_t)kid == m->kernels.len) {
			fprintf(stderr, "tileasm: error: no kernel named '%s' in %s\n", kname, file);
			goto done;
		}
	}
	const Kernel *k = &m->kernels.data[kid];
	nargs = k->nargs;
	args = calloc((size_t)nargs + 1, sizeof *args);
	ref = calloc((size_t)nargs + 1, sizeof *ref);
	written = calloc((size_t)nargs + 1, sizeof *written);
	accumulated = calloc((size_t)nargs + 1, sizeof *accumulated);
	given = calloc((size_t)nargs + 1, sizeof *given);
	slack = calloc((size_t)nargs + 1, sizeof *slack);
	if (!args || !ref || !written || !accumulated || !given || !slack)
		goto oom;
	/* Scalars: --arg values, else 0.5 for floats and 1 for integers. */
	for (int i = 0; i < nargs; i++) {
		args[i].fval = 0.5;
		args[i].ival = 1;
	}
	for (int i = 0; i < nargspecs; i++)
		if (set_arg(m, k, args, given, argspecs[i]))
			goto done;
	for (int i = 0; i < nargs; i++) {
		int32_t v = k->args[i].var;
		if (v >= 0 && m->vars.data[v].kind == V_SYMBOL && !given[i]) {
			fprintf(stderr, "tileasm: error: shape symbol '%s' needs a value: pass -D %s=N (specialise) or "
			        "--arg %s=N (runtime argument)\n", m->vars.data[v].name, m->vars.data[v].name,
			        m->vars.data[v].name);
			goto done;
		}
	}
	ir_written_args(m, kid, written, accumulated);
	printf("%s: kernel %s, backend %s%s%s, seed %llu\n", file, k->name, backend, target ? ", target " : "",
	       target ? target_name(tgt.id) : "", (unsigned long long)seed);
	for (int i = 0; i < nargs; i++) {
		ref[i] = args[i];
		if (k->args[i].buf < 0) {
			const Var *v = &m->vars.data[k->args[i].var];
			if (dtype_is_float((DType)v->type))
				printf("  %s = %g\n", v->name, args[i].fval);
			else
				printf("  %s = %lld\n", v->name, (long long)args[i].ival);
			continue;
		}
		const Buffer *b = &m->bufs.data[k->args[i].buf];
		int64_t n = interp_tensor_elems(m, kid, args, i);
		if (n < 0) {
			fprintf(stderr, "tileasm: error: cannot size tensor '%s' (negative or huge shape)\n", b->name);
			goto done;
		}
		size_t bytes = (size_t)dtype_storage_bytes((DType)b->dtype, n);
		args[i].data = malloc(bytes ? bytes : 1);
		ref[i].data = malloc(bytes ? bytes : 1);
		args[i].bytes = ref[i].bytes = bytes;
		if (!args[i].data || !ref[i].data)
			goto oom;
		if (accumulated[i] && dtype_is_float((DType)b->dtype) && !(slack[i] = calloc((size_t)n * 2 + 1, sizeof **slack)))
			goto oom;
		if (written[i] && !accumulated[i])
			poison((DType)b->dtype, args[i].data, n);
		else
			fill_random((DType)b->dtype, args[i].data, n, &seed);
		memcpy(ref[i].data, args[i].data, bytes);
	}
	/* The reference run. */
	Diag d;
	diag_init(&d);
	clock_t t0 = clock();
	uint64_t bound = max_steps ? max_steps : INTERP_DEFAULT_MAX_STEPS;
	int ir = interp_run_slack(m, kid, ref, bound, slack, &d);
	double interp_ms = (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC;
	fputs(diag_text(&d), stderr);
	diag_free(&d);
	if (ir) {
		fprintf(stderr, "tileasm: error: the interpreter failed; no comparison made\n");
		goto done;
	}
	RunCase run = {m, kid, tgt, args, written, bench, profile, max_steps, ctx, tm, target ? target : target_name(tgt.id)};
	int br;
	if (be == B_INTERP) {
		/* The interpreter against itself: a second run from poisoned outputs
		 * must reproduce the first exactly (no reads of unwritten data). */
		diag_init(&d);
		br = interp_run_bounded(m, kid, args, bound, &d);
		fputs(diag_text(&d), stderr);
		diag_free(&d);
		printf("  interpreter: %.1f ms\n", interp_ms);
	} else if (be == B_EMU) {
		br = run_backend_emu(&run);
	} else if (be == B_HSA) {
		br = run_backend_hsa(&run);
	} else {
		br = run_backend_cuda(&run);
	}
	if (br) {
		rc = br;
		goto done;
	}
	int64_t bad = 0;
	for (int i = 0; i < nargs; i++) {
		if (!written[i])
			continue;
		const Buffer *b = &m->bufs.data[k->args[i].buf];
		bad += compare(b->name, (DType)b->dtype, args[i].data, ref[i].data, interp_tensor_elems(m, kid, args, i),
		               slack[i]);
	}
	printf("%s\n", bad ? "FAIL" : "PASS");
	rc = bad ? 1 : 0;
	goto done;
oom:
	fprintf(stderr, "tileasm: error: out of memory\n");
	rc = 1;
done:
	for (int i = 0; args && i < nargs; i++) {
		free(args[i].data);
		free(ref[i].data);
		if (slack)
			free(slack[i]);
	}
	free(slack);
	free(args);
	free(ref);
	free(written);
	free(accumulated);
	free(given);
	ta_module_destroy(tm);
	ta_ctx_destroy(ctx);
	return rc;
}
