/* test_vec.c — register-resident element-wise fragments (docs/lowering.md,
 * "Vector fragments"): fragments that no gemm touches, used only by whole
 * copies, element-wise parallel loops, row reductions and clear/fill, live
 * in registers in the vector layout; everything else keeps the shared-memory
 * path.
 *  - Every kernel runs on the emulator (gfx1100, gfx90a, gfx942, the
 *    vector layout is on by default) against the
 *    interpreter, at ragged shapes: rows not a multiple of the tile, row
 *    lengths that are not a multiple of the vector (the per-element path),
 *    shorter than one vector, and aligned ones (the vector path).
 *  - The path taken is checked: no LDS at all and 16-byte global loads
 *    (global_load_b128 / global_load_dwordx4) where the layout applies,
 *    LDS where it does not (an index other than [i, k], a dim-0 reduction);
 *    on NVIDIA (on by default) ld.global.v4 and no bar.sync in loop-free
 *    kernels, and ptxas accepts the PTX for sm_80 and sm_90a. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amd.h"
#include "dtype.h"
#include "emu.h"
#include "interp.h"
#include "lower.h"
#include "ptx.h"
#include "util.h"
#include "emurun.h"
#include "testutil.h"

/* What a kernel must show. */
enum { EXPECT_VEC = 1, EXPECT_LDS = 2, EXPECT_NOBAR = 4, EXPECT_PARTIALS = 8 };

typedef struct {
	const char *label;
	const char *src;   /* kernel text, or NULL for examples/<file> */
	const char *file;
	Define defs[3];
	int ndefs;
	unsigned expect;
} Case;

static Module *load(const Case *k, Diag *d)
{
	return load_kernel(k->label, k->src, k->file, k->defs, k->ndefs, d);
}

/* The path taken, from the listing. */
static void path_check(const void *ctx, int t, const AmdOutput *out)
{
	const Case *k = ctx;
	const AmdKernelInfo *ki = &out->kernels[0];
	const char *l = out->listing.buf;
	if (k->expect & EXPECT_PARTIALS) { /* a few bytes: the warps' partials, an area per reduce statement */
		cr_expect(ki->lds_bytes > 0 && ki->lds_bytes <= 256, "%s %s: %d LDS bytes", k->label, emurun_targets[t],
			  ki->lds_bytes);
	} else if (k->expect & EXPECT_LDS) {
		cr_expect_gt(ki->lds_bytes, 0, "%s %s: the fallback uses LDS", k->label, emurun_targets[t]);
	} else {
		cr_expect_eq(ki->lds_bytes, 0, "%s %s: %d LDS bytes", k->label, emurun_targets[t], ki->lds_bytes);
		cr_expect_null(strstr(l, "ds_write") ? strstr(l, "ds_write") : strstr(l, "ds_store"),
			       "%s %s: LDS stores", k->label, emurun_targets[t]);
	}
	if (k->expect & EXPECT_VEC)
		cr_expect(strstr(l, t == 0 ? "global_load_b128" : "global_load_dwordx4"),
			  "%s %s: no 16-byte loads", k->label, emurun_targets[t]);
	if (k->expect & EXPECT_NOBAR)
		cr_expect_null(strstr(l, "s_barrier"), "%s %s: a barrier", k->label, emurun_targets[t]);
}

/* Runs case k on the interpreter and on the emulator for every AMD target
 * (f32 scalars: eps). */
static void run_case(const Case *k)
{
	Diag d;
	diag_init(&d);
	Module *m = load(k, &d);
	EmuRun r = {k->label, NULL, 0, 1e-5, path_check, k};
	emu_vs_interp(m, &r);
	ir_module_free(m);
	diag_free(&d);
}

/* The PTX (vector layout on by default) for sm_80 and sm_90a: the path's
 * marks, and ptxas accepts it. */
static void ptx_check(const void *ctx, const char *p)
{
	const Case *k = ctx;
	if (k->expect & EXPECT_VEC)
		cr_expect(strstr(p, "ld.global.v4.b32"), "%s: no ld.global.v4", k->label);
	if (k->expect & (EXPECT_LDS | EXPECT_PARTIALS))
		cr_expect(strstr(p, "st.shared"), "%s: the fallback stores to shared memory", k->label);
	else
		cr_expect_eq(count(p, "st.shared") + count(p, "ld.shared"), 0, "%s: shared memory", k->label);
	if (k->expect & EXPECT_NOBAR)
		cr_expect_eq(count(p, "bar.sync"), 0, "%s: %d bar.sync", k->label, count(p, "bar.sync"));
}

static void ptx_case(const Case *k)
{
	Diag d;
	diag_init(&d);
	Module *m = load(k, &d);
	ptx_and_ptxas(m, k->label, ptx_check, k);
	ir_module_free(m);
	diag_free(&d);
}

/* Row reductions of every kind, clear and not, 16 rows per block over 128
 * threads: 16 lanes per row, two rows per thread. */
static const char red_src[] =
	"kernel red(X: f32[M, N], A: f32[M], B: f32[M], C: f32[M], D: f32[M], E: f32[M]) grid(ceildiv(M, 16))"
	" threads(128) {\n"
	"  X_f = fragment f32[16, 64]\n  a = fragment f32[16]\n  b = fragment f32[16]\n  c = fragment f32[16]\n"
	"  e = fragment f32[16]\n  g = fragment f32[16]\n"
	"  fill(a, 0.5)\n  clear(e)\n"
	"  copy(X[bx * 16, 0], X_f)\n"
	"  parallel (i, k) in (16, 64) {\n    if k >= N {\n      X_f[i, k] = -1.0\n    }\n  }\n"
	"  reduce_max(X_f, a, dim=1, clear=false)\n  reduce_min(X_f, b, dim=1)\n"
	"  reduce_abssum(X_f, c, dim=1)\n  reduce_absmax(X_f, g, dim=1)\n"
	"  reduce_sum(X_f, e, dim=1, clear=false)\n"
	"  parallel (i) in (16) {\n    let t = e[i] * 0.5\n    e[i] = t + a[i]\n  }\n"
	"  copy(a, A[bx * 16])\n  copy(b, B[bx * 16])\n  copy(c, C[bx * 16])\n  copy(g, D[bx * 16])\n"
	"  copy(e, E[bx * 16])\n}\n";

/* Two rows per block of 128 threads: duplicated row groups; a bf16 input,
 * an f16 column fragment, an f32 column copy-out, f16 output. */
static const char dup_src[] =
	"kernel dup(X: bf16[M, N], W: f16[N], Y: f16[M, N], S: f32[M], W2: f32[N]) grid(ceildiv(M, 2)) threads(128) {\n"
	"  X_f = fragment f32[2, 64]\n  W_f = fragment f32[64]\n  s = fragment f32[2]\n"
	"  copy(X[bx * 2, 0], X_f)\n  copy(W[0], W_f)\n"
	"  reduce_sum(X_f, s, dim=1)\n"
	"  parallel (i, k) in (2, 64) {\n    X_f[i, k] = X_f[i, k] * W_f[k] + s[i]\n  }\n"
	"  parallel (i) in (2) {\n    s[i] = s[i] * 2.0\n  }\n"
	"  copy(X_f, Y[bx * 2, 0])\n  copy(s, S[bx * 2])\n  copy(W_f, W2[0])\n}\n";

/* A shared tile on the other side of the copies (element path). */
static const char shared_src[] =
	"kernel sh(X: f32[M, N], Y: f32[M, N]) grid(ceildiv(M, 4)) threads(64) {\n"
	"  S = shared f32[4, 32]\n  X_f = fragment f32[4, 32]\n"
	"  copy(X[bx * 4, 0], S)\n  copy(S, X_f)\n"
	"  parallel (i, k) in (4, 32) {\n    X_f[i, k] = X_f[i, k] * X_f[i, k] + 1.0\n  }\n"
	"  copy(X_f, S)\n  copy(S, Y[bx * 4, 0])\n}\n";

/* One row of 2048 over 256 threads (8 warps per row: partials through
 * shared memory), softmax-like; two f32 rows of 1024 (4 warps per row). */
static const char wide_src[] =
	"kernel wide(X: f16[M, N], Y: f16[M, N], S: f32[M]) grid(M) threads(256) {\n"
	"  X_f = fragment f32[1, 2048]\n  m = fragment f32[1]\n  s = fragment f32[1]\n"
	"  copy(X[bx, 0], X_f)\n"
	"  parallel (i, k) in (1, 2048) {\n    X_f[i, k] = select(k < N, X_f[i, k], -inf)\n  }\n"
	"  reduce_max(X_f, m, dim=1)\n"
	"  parallel (i, k) in (1, 2048) {\n    X_f[i, k] = exp(X_f[i, k] - m[i])\n  }\n"
	"  reduce_sum(X_f, s, dim=1)\n"
	"  parallel (i, k) in (1, 2048) {\n    X_f[i, k] = X_f[i, k] / s[i]\n  }\n"
	"  copy(X_f, Y[bx, 0])\n  copy(s, S[bx])\n}\n";
static const char wide2_src[] =
	"kernel wide2(X: f32[M, N], Y: f32[M]) grid(ceildiv(M, 2)) threads(256) {\n"
	"  X_f = fragment f32[2, 1024]\n  y = fragment f32[2]\n  fill(y, 1.0)\n"
	"  copy(X[bx * 2, 0], X_f)\n  reduce_abssum(X_f, y, dim=1, clear=false)\n  copy(y, Y[bx * 2])\n}\n";

/* Not eligible: a mirrored index, and a dim-0 reduction. */
static const char mirror_src[] =
	"kernel mirror(X: f32[M, N], Y: f32[M, N]) grid(ceildiv(M, 4)) threads(128) {\n"
	"  X_f = fragment f32[4, 64]\n  Z_f = fragment f32[4, 64]\n"
	"  copy(X[bx * 4, 0], X_f)\n"
	"  parallel (i, k) in (4, 64) {\n    Z_f[i, k] = X_f[i, 63 - k]\n  }\n"
	"  copy(Z_f, Y[bx * 4, 0])\n}\n";
static const char dim0_src[] =
	"kernel cols(X: f32[M, N], Y: f32[N]) grid(1) threads(64) {\n"
	"  X_f = fragment f32[8, 32]\n  y = fragment f32[32]\n"
	"  copy(X[0, 0], X_f)\n  reduce_sum(X_f, y, dim=0)\n  copy(y, Y[0])\n}\n";

static const Case cases[] = {
	{"red 21x64", red_src, NULL, {{"M", 21}, {"N", 64}}, 2, EXPECT_VEC | EXPECT_NOBAR},
	{"red 21x50", red_src, NULL, {{"M", 21}, {"N", 50}}, 2, EXPECT_VEC | EXPECT_NOBAR},
	{"red 5x3", red_src, NULL, {{"M", 5}, {"N", 3}}, 2, EXPECT_VEC | EXPECT_NOBAR},
	{"dup 5x64", dup_src, NULL, {{"M", 5}, {"N", 64}}, 2, EXPECT_NOBAR},
	{"dup 5x37", dup_src, NULL, {{"M", 5}, {"N", 37}}, 2, EXPECT_NOBAR},
	{"wide 3x2048", wide_src, NULL, {{"M", 3}, {"N", 2048}}, 2, EXPECT_VEC | EXPECT_PARTIALS},
	{"wide 2x1500", wide_src, NULL, {{"M", 2}, {"N", 1500}}, 2, EXPECT_VEC | EXPECT_PARTIALS},
	{"wide 1x7", wide_src, NULL, {{"M", 1}, {"N", 7}}, 2, EXPECT_VEC | EXPECT_PARTIALS},
	{"wide2 5x1024", wide2_src, NULL, {{"M", 5}, {"N", 1024}}, 2, EXPECT_VEC | EXPECT_PARTIALS},
	{"wide2 3x999", wide2_src, NULL, {{"M", 3}, {"N", 999}}, 2, EXPECT_VEC | EXPECT_PARTIALS},
	{"shared 7x32", shared_src, NULL, {{"M", 7}, {"N", 32}}, 2, EXPECT_LDS},
	{"mirror 6x64", mirror_src, NULL, {{"M", 6}, {"N", 64}}, 2, EXPECT_LDS},
	{"cols 5x30", dim0_src, NULL, {{"M", 5}, {"N", 30}}, 2, EXPECT_LDS},
	{"softmax 11x203", NULL, "softmax.tile", {{"M", 11}, {"N", 203}}, 2, EXPECT_VEC},
	{"softmax 6x512", NULL, "softmax.tile", {{"M", 6}, {"N", 512}}, 2, EXPECT_VEC},
	{"softmax 1x5", NULL, "softmax.tile", {{"M", 1}, {"N", 5}}, 2, EXPECT_VEC},
	{"rmsnorm 7x520", NULL, "rmsnorm.tile", {{"M", 7}, {"N", 520}}, 2, EXPECT_VEC},
	{"layernorm 9x264", NULL, "layernorm.tile", {{"M", 9}, {"N", 264}}, 2, EXPECT_VEC},
	{"layernorm 3x201", NULL, "layernorm.tile", {{"M", 3}, {"N", 201}}, 2, EXPECT_VEC},
	{"reduce_sum 19x1024", NULL, "reduce_sum.tile", {{"M", 19}, {"N", 1024}}, 2, EXPECT_VEC},
	{"reduce_sum 37x1001", NULL, "reduce_sum.tile", {{"M", 37}, {"N", 1001}}, 2, EXPECT_VEC},
};
#define NCASES (sizeof cases / sizeof cases[0])

Test(vec, kernels_match_the_interpreter_on_the_emulator, .timeout = 120)
{
	for (size_t i = 0; i < NCASES; i++)
		run_case(&cases[i]);
}

Test(vec, ptx_takes_the_path_and_passes_ptxas, .timeout = 120)
{
	for (size_t i = 0; i < NCASES; i++)
		if (!cases[i].file || strstr(cases[i].label, "1x5") || strstr(cases[i].label, "x1024"))
			ptx_case(&cases[i]);
}

/* The default is on for AMD too: the first case compiles for gfx942 with
 * no LDS (its fragments are registers). */
Test(vec, default_is_on_for_amd)
{
	Diag d;
	diag_init(&d);
	Module *m = load(&cases[0], &d);
	Target tg;
	cr_assert_eq(target_parse("gfx942", &tg), 0);
	AmdOutput out;
	memset(&out, 0, sizeof out);
	cr_assert_eq(amd_compile(m, &tg, &out, &d), 0, "%s", diag_text(&d));
	cr_expect_eq(out.kernels[0].lds_bytes, 0);
	amd_output_free(&out);
	ir_module_free(m);
	diag_free(&d);
}
