/* bench_amd_profile.c — the emulator's profile (tileasm.h ta_profile) of
 * every example on every AMD target, next to TileLang's GEMM code objects
 * (/work/shared/ref/tilelang_gemm_{gfx942,gfx1100}.hsaco, 128x128x32 tile,
 * specialised for M = N = K = 1024) at the same tile.
 *
 *   bench_amd_profile [SRCDIR] [--ref DIR] [--tileasm EXE] [--verbose]
 *
 * --verbose also prints each full profile (loops with their byte offsets,
 * for tools/bench/prof_vs_mca.py).
 *
 * Per row, per K-iteration (the outermost loop that holds MFMA/WMMA
 * instructions) and per wave, or per wave for the whole kernel when there is
 * no such loop: executed wave instructions; modelled cycles of the wave's own
 * timeline; CU cycles per wave (the per-CU bound divided by the waves the CU
 * holds: comparable across occupancies); LDS bank-conflict cycles; waves per
 * SIMD; matrix-pipe utilisation and the model's limiter.  Results are
 * checked: each example is first run by `tileasm run --backend=emu` at the
 * same shape, which compares the emulator's output with the interpreter's;
 * the TileLang tile is compared with a C reference GEMM.  A failed check is
 * reported and makes the benchmark exit 1.
 * the TileLang tile is compared with a C reference GEMM. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "tileasm.h"
#include "util.h"

typedef struct {
	const char *example;
	const char *defs;  /* -D values: the shape */
	size_t elems;      /* elements of the largest tensor */
} Case;

static const Case cases[] = {
	{"gemm", "M=128 N=128 K=256", 128 * 256},
	{"gemm_bf16_tn", "M=128 N=128 K=256", 128 * 256},
	{"mha_fwd", "B=1 H=1 S=128", 128 * 64},
	{"vector_add", "N=65536", 65536},
	{"reduce_sum", "M=64 N=1024", 64 * 1024},
	{"softmax", "M=32 N=1024", 32 * 1024},
	{"layernorm", "M=32 N=1024", 32 * 1024},
	{"rmsnorm", "M=32 N=1024", 32 * 1024},
};
static const char *const targets[] = {"gfx942", "gfx90a", "gfx1100"};

typedef struct {
	double insns, wave_cycles, cycles, conflicts, mma;
	int waves_per_simd;
	const char *limiter, *what;
} Row;

/* The K-loop: the outermost loop with matrix instructions. */
static int verbose;

static void summarise(const ta_profile *p, Row *r)
{
	if (verbose) {
		char *t = ta_profile_format(p);
		if (t)
			fputs(t, stderr);
		ta_free(t);
	}
	memset(r, 0, sizeof *r);
	r->waves_per_simd = p->waves_per_simd;
	double nw = p->waves ? (double)p->waves : 1;
	const ta_profile_counts *c = &p->c;
	const ta_profile_bound *b = &p->cu;
	double per = nw, cu_per = 1;
	r->what = "kernel/wave";
	for (int l = 0; l < p->nloops; l++)
		if (p->loops[l].c.insns[TA_IC_MMA] && p->loops[l].trips) {
			c = &p->loops[l].c;
			b = &p->loops[l].cu;
			per = (double)p->loops[l].trips;
			cu_per = per / nw;
			r->what = "K-iter/wave";
			break;
		}
	for (int i = 0; i < TA_IC_COUNT; i++)
		r->insns += (double)c->insns[i] / per;
	r->wave_cycles = (double)c->cycles / per;
	r->cycles = b->cycles_per_wave / cu_per;
	r->conflicts = (double)c->lds_conflict_cycles / per;
	r->mma = 100.0 * b->mma_utilisation;
	r->limiter = ta_limiter_name(b->limiter);
}

/* Fills host memory with small values of the tensor's type. */
static void fill(uint8_t *p, size_t n, int dtype, uint32_t *seed)
{
	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 1664525u + 1013904223u;
		float v = (float)((*seed >> 9) % 2001) / 1000.0f - 1.0f;
		if (dtype == TA_F16) {
			uint16_t h = dt_f16_from_double(v);
			memcpy(p + 2 * i, &h, 2);
		} else if (dtype == TA_BF16) {
			uint16_t h = dt_bf16_from_double(v);
			memcpy(p + 2 * i, &h, 2);
		} else
			memcpy(p + 4 * i, &v, 4);
	}
}

static int check_example(const char *exe, const char *src, const Case *c, const char *target)
{
	StrBuf cmd = {0};
	sb_printf(&cmd, "%s run %s/examples/%s.tile --backend=emu --target=%s", exe, src, c->example, target);
	char defs[128];
	snprintf(defs, sizeof defs, "%s", c->defs);
	for (char *t = strtok(defs, " "); t; t = strtok(NULL, " "))
		sb_printf(&cmd, " -D %s", t);
	sb_puts(&cmd, " 2>&1");
	FILE *f = popen(cmd.buf, "r");
	int pass = 0;
	char line[512];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "PASS", 4))
			pass = 1;
	int rc = f ? pclose(f) : -1;
	if (!pass || rc)
		fprintf(stderr, "bench_amd_profile: FAILED: %s\n", cmd.buf);
	sb_free(&cmd);
	return pass && !rc ? 0 : -1;
}

/* Compiles and profiles one example; 0 or -1. */
static int profile_example(const char *src, const Case *c, const char *target, Row *row)
{
	ta_ctx *ctx = ta_ctx_create(); /* its own -D values */
	if (!ctx)
		return -1;
	StrBuf path = {0};
	sb_printf(&path, "%s/examples/%s.tile", src, c->example);
	size_t n = 0;
	char *text = read_file(path.buf, &n);
	int rc = -1;
	ta_binary *b = NULL;
	ta_emu *e = NULL;
	uint8_t *host = NULL;
	if (!text)
		goto out;
	char defs[128];
	snprintf(defs, sizeof defs, "%s", c->defs);
	int64_t vals[16];
	int nv = 0;
	for (char *t = strtok(defs, " "); t; t = strtok(NULL, " ")) {
		char *eq = strchr(t, '=');
		*eq = 0;
		ta_ctx_define(ctx, t, atoll(eq + 1));
		vals[nv++] = atoll(eq + 1);
	}
	if (ta_compile_source(ctx, path.buf, text, n, target, &b) || ta_emu_create(ctx, target, &e))
		goto out;
	const ta_kernel_info *ki = ta_binary_kernel(b, 0);
	size_t dsz;
	const void *co = ta_binary_data(b, &dsz);
	uint8_t ka[512] = {0};
	int64_t argv_[64] = {0};
	uint32_t seed = 1;
	host = malloc(c->elems * 4);
	if (!host || ta_emu_load(e, co, dsz))
		goto out;
	for (int i = 0; i < ki->nargs; i++) {
		const ta_arg_info *a = &ki->args[i];
		if (a->kind == TA_ARG_TENSOR) {
			uint64_t d;
			fill(host, c->elems, a->dtype, &seed);
			if (ta_emu_alloc(e, c->elems * 4, &d) || ta_emu_write(e, d, host, c->elems * 4))
				goto out;
			memcpy(ka + a->offset, &d, 8);
		} else if (a->dtype == TA_F32) {
			float v = 1e-5f;
			memcpy(ka + a->offset, &v, 4);
		}
	}
	(void)vals;
	uint32_t grid[3], block[3] = {(uint32_t)ki->threads, 1, 1};
	if (ta_binary_grid(b, 0, argv_, grid))
		goto out;
	ta_emu_set_profile(e, 1);
	if (ta_emu_launch(e, ki->name, grid, block, ka, ki->kernarg_size, 0))
		goto out;
	summarise(ta_emu_profile(e), row);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "bench_amd_profile: %s %s: %s\n", c->example, target, ta_ctx_diagnostics(ctx));
	ta_ctx_clear_diagnostics(ctx);
	free(host);
	ta_emu_destroy(e);
	ta_binary_release(b);
	free(text);
	sb_free(&path);
	ta_ctx_destroy(ctx);
	return rc;
}

/* TileLang's GEMM: one workgroup (the tile at block (0, 0)) of the 1024^3
 * kernel, checked against a C GEMM on that tile.  1: no code object. */
static int profile_tilelang(ta_ctx *ctx, const char *dir, const char *target, Row *row, double *err)
{
	StrBuf path = {0};
	sb_printf(&path, "%s/tilelang_gemm_%s.hsaco", dir, target);
	size_t n = 0;
	uint8_t *co = (uint8_t *)read_file(path.buf, &n);
	sb_free(&path);
	if (!co)
		return 1;
	enum { S = 1024, T = 128 };
#define TL_LDS_BYTES 16384 /* its dynamic shared memory: A and B tiles, 8 KiB each */
	int rc = -1;
	ta_emu *e = NULL;
	uint16_t *a = malloc((size_t)S * S * 2), *bm = malloc((size_t)S * S * 2), *cm = malloc((size_t)S * S * 2);
	uint64_t da, db, dc;
	uint32_t seed = 7;
	if (!a || !bm || !cm || ta_emu_create(ctx, target, &e) || ta_emu_load(e, co, n))
		goto out;
	fill((uint8_t *)a, (size_t)S * S, TA_F16, &seed);
	fill((uint8_t *)bm, (size_t)S * S, TA_F16, &seed);
	if (ta_emu_alloc(e, (size_t)S * S * 2, &da) || ta_emu_alloc(e, (size_t)S * S * 2, &db) ||
	    ta_emu_alloc(e, (size_t)S * S * 2, &dc) || ta_emu_write(e, da, a, (size_t)S * S * 2) ||
	    ta_emu_write(e, db, bm, (size_t)S * S * 2))
		goto out;
	uint64_t ka[3] = {da, db, dc};
	uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
	ta_emu_set_profile(e, 1);
	const char *lds = getenv("TL_LDS");
	if (ta_emu_launch(e, "gemm_kernel", grid, block, ka, sizeof ka, lds ? (uint32_t)atoi(lds) : TL_LDS_BYTES) || ta_emu_read(e, dc, cm, (size_t)S * S * 2))
		goto out;
	summarise(ta_emu_profile(e), row);
	/* C = A (row-major M x K) * B (row-major K x N), f32 accumulation. */
	*err = 0;
	for (int i = 0; i < T; i++)
		for (int j = 0; j < T; j++) {
			double s = 0;
			for (int k = 0; k < S; k++)
				s += (double)dt_f16_to_double(a[(size_t)i * S + k]) * dt_f16_to_double(bm[(size_t)k * S + j]);
			double d = fabs(dt_f16_to_double(cm[(size_t)i * S + j]) - s) / (1 + fabs(s));
			*err = d > *err ? d : *err;
		}
	rc = *err < 1e-2 ? 0 : -1;
	if (rc)
		fprintf(stderr, "bench_amd_profile: TileLang %s: the tile differs from the reference (%g)\n", target, *err);
out:
	if (rc < 0 && *ta_ctx_diagnostics(ctx))
		fprintf(stderr, "bench_amd_profile: TileLang %s: %s\n", target, ta_ctx_diagnostics(ctx));
	ta_ctx_clear_diagnostics(ctx);
	ta_emu_destroy(e);
	free(a);
	free(bm);
	free(cm);
	free(co);
	return rc;
}

static void print_row(const char *who, const char *target, const char *shape, const Row *r)
{
	printf("| %-22s | %-7s | %-18s | %-11s | %7.1f | %8.1f | %8.1f | %7.1f | %4d | %5.1f%% | %s |\n", who, target, shape,
	       r->what, r->insns, r->wave_cycles, r->cycles, r->conflicts, r->waves_per_simd, r->mma, r->limiter);
}

int main(int argc, char **argv)
{
	const char *src = getenv("TILEASM_SRCDIR") ? getenv("TILEASM_SRCDIR") : ".";
	const char *ref = "/work/shared/ref", *exe = "build/tools/tileasm";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ref") && i + 1 < argc)
			ref = argv[++i];
		else if (!strcmp(argv[i], "--verbose"))
			verbose = 1;
		else if (!strcmp(argv[i], "--tileasm") && i + 1 < argc)
			exe = argv[++i];
		else
			src = argv[i];
	}
	ta_ctx *ctx = ta_ctx_create();
	if (!ctx)
		return 1;
	int bad = 0;
	printf("| kernel | target | shape | per | insns | wave cycles | CU cycles/wave | LDS conflict cycles | waves/SIMD | "
	       "MMA util | limiter |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t t = 0; t < TA_ARRAY_LEN(targets); t++) {
		Row r;
		double err = 0;
		int tl = profile_tilelang(ctx, ref, targets[t], &r, &err);
		if (tl == 0)
			print_row("TileLang gemm (peer)", targets[t], "1024^3, 1 block", &r);
		else if (tl < 0)
			bad = 1;
		for (size_t i = 0; i < TA_ARRAY_LEN(cases); i++) {
			if (check_example(exe, src, &cases[i], targets[t])) {
				bad = 1;
				continue;
			}
			if (profile_example(src, &cases[i], targets[t], &r)) {
				bad = 1;
				continue;
			}
			print_row(cases[i].example, targets[t], cases[i].defs, &r);
		}
	}
	ta_ctx_destroy(ctx);
	return bad;
}
