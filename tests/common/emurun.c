/* emurun.c — see emurun.h. */
#include "emurun.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "emu.h"
#include "interp.h"
#include "lower.h"
#include "ptx.h"
#include "testutil.h"
#include "util.h"

const char *const emurun_targets[3] = {"gfx1100", "gfx90a", "gfx942"};

Module *load_kernel(const char *label, const char *src, const char *file, const Define *defs, int ndefs, Diag *d)
{
	if (src)
		return load_text(label, src, defs, ndefs);
	char rel[512];
	snprintf(rel, sizeof rel, "examples/%s", file);
	return load_src(rel, defs, ndefs);
}

static double rnd(uint32_t *rng)
{
	*rng = *rng * 1664525u + 1013904223u;
	return ((double)(*rng >> 8) / (double)(1u << 24)) * 4.0 - 2.0; /* -2 .. 2 */
}

static double get(DType t, const void *p, size_t i)
{
	switch (t) {
	case DT_F16: return dt_f16_to_double(((const uint16_t *)p)[i]);
	case DT_BF16: return dt_bf16_to_double(((const uint16_t *)p)[i]);
	default: return ((const float *)p)[i];
	}
}

static void set(DType t, void *p, size_t i, double v)
{
	switch (t) {
	case DT_F16: ((uint16_t *)p)[i] = dt_f16_from_double(v); break;
	case DT_BF16: ((uint16_t *)p)[i] = dt_bf16_from_double(v); break;
	default: ((float *)p)[i] = (float)v; break;
	}
}

void emu_vs_interp(Module *m, const EmuRun *r)
{
	Diag d;
	diag_init(&d);
	const char *label = r->label;
	const Kernel *kn = &m->kernels.data[0];
	int na = kn->nargs;
	InterpArg *args = calloc((size_t)na, sizeof *args);
	void **init = calloc((size_t)na, sizeof *init);
	uint32_t rng = 99;
	for (int i = 0; i < na; i++) {
		if (kn->args[i].buf < 0) {
			const char *nm = m->vars.data[kn->args[i].var].name;
			double v = r->scalar_default;
			for (int s = 0; s < r->nscalars; s++)
				if (r->scalars[s].name && !strcmp(r->scalars[s].name, nm))
					v = r->scalars[s].v;
			args[i].fval = v, args[i].ival = (int64_t)v;
			continue;
		}
		const Buffer *b = &m->bufs.data[kn->args[i].buf];
		size_t n = (size_t)ir_buf_elems(m, b);
		args[i].bytes = n * (size_t)dtype_bytes((DType)b->dtype);
		args[i].data = malloc(args[i].bytes + 16);
		init[i] = malloc(args[i].bytes + 16);
		for (size_t e = 0; e < n; e++)
			set((DType)b->dtype, args[i].data, e, rnd(&rng));
		memcpy(init[i], args[i].data, args[i].bytes);
	}
	cr_assert_eq(interp_run(m, 0, args, &d), 0, "%s: %s", label, diag_text(&d));
	int64_t vals[16] = {0};
	uint32_t grid[3] = {1, 1, 1};
	cr_assert_eq(ir_grid(m, 0, vals, grid), 0);
	for (int t = 0; t < 3; t++) {
		const char *tname = emurun_targets[t];
		Target tg;
		cr_assert_eq(target_parse(tname, &tg), 0);
		AmdOutput out;
		memset(&out, 0, sizeof out);
		out.want_listing = 1;
		int rc = amd_compile(m, &tg, &out, &d);
		cr_assert_eq(rc, 0, "%s %s: %s", label, tname, diag_text(&d));
		const AmdKernelInfo *ki = &out.kernels[0];
		if (r->check)
			r->check(r->ctx, t, &out);
		EmuDevice *dev = emu_create(tg.id);
		cr_assert(dev);
		cr_assert_eq(emu_load(dev, out.code_object, out.code_object_len, &d), 0, "%s", diag_text(&d));
		uint8_t *karg = calloc(1, ki->kernarg_size + 8);
		uint64_t *addr = calloc((size_t)na, sizeof *addr);
		for (int i = 0; i < na; i++) {
			if (kn->args[i].buf < 0) {
				const Var *v = &m->vars.data[kn->args[i].var];
				float f = (float)args[i].fval;
				int32_t n = (int32_t)args[i].ival;
				memcpy(karg + ki->param_offset[i], v->type == DT_F32 ? (void *)&f : (void *)&n, 4);
				continue;
			}
			addr[i] = emu_alloc(dev, args[i].bytes + 16);
			cr_assert(addr[i]);
			cr_assert_eq(emu_write(dev, addr[i], init[i], args[i].bytes, &d), 0, "%s", diag_text(&d));
			memcpy(karg + ki->param_offset[i], &addr[i], 8);
		}
		uint32_t block[3] = {(uint32_t)ki->threads, 1, 1};
		cr_assert_eq(emu_launch(dev, ki->name, grid, block, karg, ki->kernarg_size, 0, &d), 0, "%s %s: %s",
			     label, tname, diag_text(&d));
		for (int i = 0; i < na; i++) {
			if (kn->args[i].buf < 0)
				continue;
			const Buffer *b = &m->bufs.data[kn->args[i].buf];
			DType dt = (DType)b->dtype;
			void *got = malloc(args[i].bytes + 16);
			cr_assert_eq(emu_read(dev, addr[i], got, args[i].bytes, &d), 0, "%s", diag_text(&d));
			size_t n = args[i].bytes / (size_t)dtype_bytes(dt);
			double tol = dt == DT_F32 ? 1e-4 : 1e-2;
			for (size_t e = 0; e < n; e++) {
				double w = get(dt, args[i].data, e), g = get(dt, got, e);
				bool ok = (isnan(w) && isnan(g)) || w == g || fabs(w - g) <= tol * (1 + fabs(w));
				cr_assert(ok, "%s %s: %s[%zu] = %.9g, the interpreter says %.9g", label, tname, b->name, e,
					  g, w);
			}
			free(got);
		}
		free(addr);
		free(karg);
		emu_destroy(dev);
		amd_output_free(&out);
	}
	for (int i = 0; i < na; i++)
		free(args[i].data), free(init[i]);
	free(args);
	free(init);
	diag_free(&d);
}

void ptxas_accepts(const char *label, const char *ptx, const char *arch)
{
	char log[4096];
	int rc = ptxas(ptx, arch, log, sizeof log);
	cr_expect_eq(rc, 0, "%s: ptxas: %s", label, log);
}

void ptx_and_ptxas(const Module *m, const char *label, void (*check)(const void *ctx, const char *ptx), const void *ctx)
{
	static const ta_target tt[] = {TA_TARGET_SM80, TA_TARGET_SM90A};
	Diag d;
	diag_init(&d);
	for (int t = 0; t < 2; t++) {
		Target tg = {.id = tt[t]};
		StrBuf sb = {0};
		cr_assert_eq(ptx_compile(m, &tg, &sb, NULL, &d), 0, "%s: %s", label, diag_text(&d));
		if (check)
			check(ctx, sb.buf);
		ptxas_accepts(label, sb.buf, t ? "sm_90a" : "sm_80");
		sb_free(&sb);
	}
	diag_free(&d);
}
