/* test_fa.c — MMA-row fragments (docs/lowering.md, "MMA-row fragments"):
 * an f32 fragment D[R] that goes with register fragments F[R, C] in the
 * MMA layout (reduce(F, D, dim=1), D[i] in their parallel loops, parallel
 * (i) over row fragments, copies between them, clear/fill) lives in
 * registers, and reductions of F into it are per-thread folds plus
 * butterfly shuffles.
 *  - Attention (examples/mha_fwd.tile, one head, D = 64 and 128, causal
 *    and not, ragged S) and small kernels that hit the path (gemm results
 *    reduced with max/sum/absmax, clear=false, row arithmetic) run on the
 *    emulator for gfx1100, gfx90a and gfx942 against the interpreter.
 *  - The path is checked: on AMD the LDS holds only the shared tiles (no
 *    score tile, no row fragments; at D = 128 see cases[]); on NVIDIA the
 *    attention PTX has at most 5 bar.sync (9 before), shfl.sync.bfly for
 *    the reductions, and ptxas accepts it for sm_80 and sm_90a. */
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

typedef struct {
	const char *label;
	const char *src;   /* kernel text, or NULL for examples/<file> */
	const char *file;
	Define defs[4];
	int ndefs;
	ScalarArg sc[2];      /* scalar arguments by name (others: 0) */
	int lds;           /* expected LDS bytes on every AMD target */
	int maxbar;        /* at most this many bar.sync in the PTX (-1: not checked) */
} Case;

static Module *load(const Case *k, Diag *d)
{
	return load_kernel(k->label, k->src, k->file, k->defs, k->ndefs, d);
}

static void lds_check(const void *ctx, int t, const AmdOutput *out)
{
	const Case *k = ctx;
	const AmdKernelInfo *ki = &out->kernels[0];
	if (k->lds >= 0)
		cr_expect_eq(ki->lds_bytes, k->lds, "%s %s: %d LDS bytes, want %d (the score tile and the row "
			     "fragments in registers)", k->label, emurun_targets[t], ki->lds_bytes, k->lds);
}

/* Runs case k on the interpreter and on the emulator for every AMD target. */
static void run_case(const Case *k)
{
	Diag d;
	diag_init(&d);
	Module *m = load(k, &d);
	EmuRun r = {k->label, k->sc, 2, 0, lds_check, k};
	emu_vs_interp(m, &r);
	ir_module_free(m);
	diag_free(&d);
}

/* The PTX for sm_80 and sm_90a: the path's marks, and ptxas accepts it. */
static void bar_check(const void *ctx, const char *p)
{
	const Case *k = ctx;
	if (k->maxbar >= 0) {
		cr_expect_leq(count(p, "bar.sync"), k->maxbar, "%s: %d bar.sync", k->label, count(p, "bar.sync"));
		cr_expect_geq(count(p, "shfl.sync.bfly"), 4, "%s: no butterfly reductions", k->label);
	}
}

static void ptx_case(const Case *k)
{
	Diag d;
	diag_init(&d);
	Module *m = load(k, &d);
	ptx_and_ptxas(m, k->label, bar_check, k);
	ir_module_free(m);
	diag_free(&d);
}

/* A gemm result reduced into row fragments: max and sum with
 * clear=false (after fill), absmax, parallel (i) arithmetic on the rows, a
 * copy between row fragments, and the rows read back in the tile's
 * parallel loop.  64 x 64 over 128 threads. */
static const char rows_src[] =
	"kernel rows(A: f16[M, 32], B: f16[64, 32], Y: f32[M, 64]) grid(ceildiv(M, 64)) threads(128) {\n"
	"  A_s = shared f16[64, 32]\n  B_s = shared f16[64, 32]\n  C_f = fragment f32[64, 64]\n"
	"  mx = fragment f32[64]\n  sm = fragment f32[64]\n  t = fragment f32[64]\n  u = fragment f32[64]\n"
	"  copy(A[bx * 64, 0], A_s)\n  copy(B[0, 0], B_s)\n  fill(mx, 0.25)\n  fill(sm, 1.0)\n"
	"  gemm(A_s, B_s, C_f, transpose_b=true, clear=true)\n"
	"  reduce_max(C_f, mx, dim=1, clear=false)\n  reduce_sum(C_f, sm, dim=1, clear=false)\n"
	"  reduce_absmax(C_f, t, dim=1)\n"
	"  parallel (i) in (64) {\n    let w = sm[i] * 0.5\n    sm[i] = w - mx[i] + t[i]\n  }\n"
	"  copy(sm, u)\n"
	"  parallel (i, j) in (64, 64) {\n    C_f[i, j] = C_f[i, j] - mx[i] + u[i] * 0.001\n  }\n"
	"  copy(C_f, Y[bx * 64, 0])\n}\n";

/* A 32 x 128 tile over 64 threads (one wave on gfx90a/gfx942, two warps
 * on NVIDIA/gfx1100: where a row's column tiles lie in two warps the rows
 * stay in shared memory), min and abssum, a softmax-like rescale. */
static const char wide_src[] =
	"kernel wide(A: f16[M, 16], B: f16[16, 128], Y: f32[M, 128]) grid(ceildiv(M, 32)) threads(64) {\n"
	"  A_s = shared f16[32, 16]\n  B_s = shared f16[16, 128]\n  C_f = fragment f32[32, 128]\n"
	"  mn = fragment f32[32]\n  s = fragment f32[32]\n"
	"  copy(A[bx * 32, 0], A_s)\n  copy(B[0, 0], B_s)\n  clear(s)\n"
	"  gemm(A_s, B_s, C_f, clear=true)\n"
	"  reduce_min(C_f, mn, dim=1)\n"
	"  parallel (i, j) in (32, 128) {\n    C_f[i, j] = exp((mn[i] - C_f[i, j]) * 0.1)\n  }\n"
	"  reduce_abssum(C_f, s, dim=1, clear=false)\n"
	"  parallel (i, j) in (32, 128) {\n    C_f[i, j] = C_f[i, j] / s[i]\n  }\n"
	"  copy(C_f, Y[bx * 32, 0])\n}\n";

/* Two accumulator shapes (issue 13.2): rows reduced from a 64 x 64 S_f
 * scale a 64 x 128 O_f, rows reduced from O_f go back over it, and a row
 * parallel mixes both.  Both accumulators take the row layout of their MMA
 * shape (rr_rows_alike), so the rows stay in registers: the LDS holds only
 * A_s and B_s (8 + 16 KiB) on every AMD target.  two_src: 128 threads (2
 * waves of 64 / 4 of 32); two1_src: 64 threads, 32 rows (one wave of 64). */
#define TWO_SRC(NAME, R, T)                                                                               \
	"kernel " NAME "(A: f16[M, 64], B: f16[64, 128], Y: f32[M, 128]) grid(ceildiv(M, " #R ")) threads(" #T \
	") {\n  A_s = shared f16[" #R ", 64]\n  B_s = shared f16[64, 128]\n  S_f = fragment f32[" #R ", " #R  \
	"]\n  O_f = fragment f32[" #R ", 128]\n  m = fragment f32[" #R "]\n  l = fragment f32[" #R "]\n"       \
	"  t = fragment f32[" #R "]\n  copy(A[bx * " #R ", 0], A_s)\n  copy(B[0, 0], B_s)\n"                  \
	"  gemm(A_s, A_s, S_f, transpose_b=true, clear=true)\n  reduce_max(S_f, m, dim=1)\n"                 \
	"  gemm(A_s, B_s, O_f, clear=true)\n"                                                             \
	"  parallel (i, j) in (" #R ", 128) {\n    O_f[i, j] = exp((O_f[i, j] - m[i]) * 0.01)\n  }\n"        \
	"  reduce_sum(O_f, l, dim=1)\n  parallel (i) in (" #R ") {\n    t[i] = m[i] * 0.5 + l[i]\n  }\n"    \
	"  parallel (i, j) in (" #R ", 128) {\n    O_f[i, j] = O_f[i, j] / l[i] + t[i] * 0.001\n  }\n"       \
	"  copy(O_f, Y[bx * " #R ", 0])\n}\n"
static const char two_src[] = TWO_SRC("two", 64, 128);
static const char two1_src[] = TWO_SRC("two1", 32, 64);

/* Attention (examples/mha_fwd.tile, one head: B = H = 1): Q_s, K_s, V_s,
 * P_s (4 x 8 KiB at D = 64) are the only LDS.  At D = 128 (Q_s, K_s, V_s
 * 16 KiB each) too: the row fragments m, m_prev, l, r from the 64 x 64
 * S_f also serve the 64 x 128 O_f in registers (they were 4 x 256 bytes of
 * LDS on AMD before, issue 13.2).  PTX barriers: Q's, and per iteration
 * two per prefetched tile (K, V: the wait before its first reader, and the
 * one before it is reloaded). */
#define FA_LDS 32768
#define FA_LDS_D128 (3 * 16384 + 8192)
#define MHA1(S) {"B", 1}, {"H", 1}, {"S", S}
static const Case cases[] = {
	{"fa S=130 causal", NULL, "mha_fwd.tile", {MHA1(130)}, 3, {{"scale", 0.125}, {"causal", 1}}, FA_LDS, 5},
	{"fa S=130", NULL, "mha_fwd.tile", {MHA1(130)}, 3, {{"scale", 0.125}, {"causal", 0}}, FA_LDS, 5},
	{"fa S=77 causal", NULL, "mha_fwd.tile", {MHA1(77)}, 3, {{"scale", 0.3}, {"causal", 1}}, FA_LDS, 5},
	{"fa S=200", NULL, "mha_fwd.tile", {MHA1(200)}, 3, {{"scale", 0.125}, {"causal", 0}}, FA_LDS, 5},
	{"fa D=128 S=130 causal", NULL, "mha_fwd.tile", {MHA1(130), {"D", 128}}, 4, {{"scale", 0.088}, {"causal", 1}},
	 FA_LDS_D128, 5},
	{"rows M=100", rows_src, NULL, {{"M", 100}}, 1, {{0}}, 8192, 3},
	{"rows M=64", rows_src, NULL, {{"M", 64}}, 1, {{0}}, 8192, 3},
	{"wide M=45", wide_src, NULL, {{"M", 45}}, 1, {{0}}, -1, -1},
	{"two shapes M=100", two_src, NULL, {{"M", 100}}, 1, {{0}}, 8192 + 16384, -1},
	{"two shapes M=70, 64 threads", two1_src, NULL, {{"M", 70}}, 1, {{0}}, 4096 + 16384, -1},
};
#define NCASES (sizeof cases / sizeof cases[0])

Test(fa, kernels_match_the_interpreter_on_the_emulator, .timeout = 120)
{
	for (size_t i = 0; i < NCASES; i++)
		run_case(&cases[i]);
}

Test(fa, ptx_takes_the_path_and_passes_ptxas, .timeout = 120)
{
	for (size_t i = 0; i < NCASES; i++)
		ptx_case(&cases[i]);
}
