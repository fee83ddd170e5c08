/* test_sm90.c — the sm_90a GEMM path on the build machine (no GPU):
 * which kernels it recognises, that its PTX for both GEMM examples is
 * accepted by ptxas -arch=sm_90a without spills or serialised wgmma, and
 * the launch arithmetic (grid, tensor-map extents, shape checks). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir.h"
#include "ptx.h"
#include "ptx_sm90.h"
#include "target.h"
#include "testutil.h"
#include "tileasm.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

static char *example_text(const char *file)
{
	char rel[512];
	snprintf(rel, sizeof rel, "examples/%s", file);
	return src_text(rel);
}

static Module *load_example(const char *file, const Define *defs, int ndefs)
{
	char *text = example_text(file);
	Module *m = load_text(file, text, defs, ndefs);
	free(text);
	return m;
}

/* Runs ptxas -arch=sm_90a -v on ptx; returns its exit status and its
 * combined output in *log (caller frees). */
static int run_ptxas(const char *ptx, size_t len, char **log)
{
	cr_assert(access(PTXAS, X_OK) == 0, "%s is missing: the sm_90a tests need the CUDA ptxas (CI installs it)",
		  PTXAS);
	char dir[] = "/tmp/tileasm-sm90-XXXXXX";
	cr_assert(mkdtemp(dir), "mkdtemp");
	char in[128], out[128], lg[128], cmd[600];
	snprintf(in, sizeof in, "%s/k.ptx", dir);
	snprintf(out, sizeof out, "%s/k.cubin", dir);
	snprintf(lg, sizeof lg, "%s/log", dir);
	cr_assert_eq(write_file_atomic(in, ptx, len), 0);
	snprintf(cmd, sizeof cmd, "%s -arch=sm_90a -v %s -o %s >%s 2>&1", PTXAS, in, out, lg);
	int st = system(cmd);
	size_t n;
	*log = read_file(lg, &n);
	cr_assert(*log);
	unlink(in), unlink(out), unlink(lg), rmdir(dir);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_ptxas_clean(const char *ptx, size_t len, int nentries)
{
	char *log;
	int rc = run_ptxas(ptx, len, &log);
	cr_assert_eq(rc, 0, "ptxas rejected the PTX:\n%s", log);
	/* C7511: wgmma serialised; C7504: setmaxnreg ignored; C7519/C7517:
	 * injected warpgroup syncs — each costs speed, so none may appear. */
	cr_expect_null(strstr(log, "C75"), "ptxas performance warning:\n%s", log);
	int reports = 0, clean = 0, entries = 0;
	for (const char *p = log; (p = strstr(p, "bytes spill stores")); p++)
		reports++;
	for (const char *p = log; (p = strstr(p, " 0 bytes spill stores, 0 bytes spill loads")); p++)
		clean++;
	for (const char *p = log; (p = strstr(p, "_sm90' for 'sm_90a'")); p++)
		entries++;
	cr_expect(reports > 0 && clean == reports, "spills:\n%s", log);
	cr_expect_eq(entries, nentries, "expected %d sm90 entries:\n%s", nentries, log);
	free(log);
}

/* The sm90 entry of kernel 0 alone, in a module of its own, with the
 * LOWER_NV_* paths in nvidia_off switched off. */
static Sm90Launch *emit_entry_off(Module *m, StrBuf *sb, unsigned nvidia_off)
{
	Target t;
	cr_assert_eq(target_parse("sm_90a", &t), 0);
	sb_puts(sb, ".version 8.1\n.target sm_90a\n.address_size 64\n"); /* as ptx_compile_split's */
	LowerOptions o = {.nvidia_off = nvidia_off};
	return sm90_gemm_try(m, 0, &t, &o, sb);
}

static Sm90Launch *emit_entry(Module *m, StrBuf *sb) { return emit_entry_off(m, sb, 0); }

static void emit_one(const char *file, bool b_kmajor, DType in, const Define *defs, int ndefs)
{
	Module *m = load_example(file, defs, ndefs);
	Sm90Gemm g;
	cr_assert(sm90_gemm_match(m, 0, &g), "%s does not match the sm90 GEMM loop", file);
	cr_expect_eq(g.b_kmajor, b_kmajor);
	cr_expect_eq(g.in_dtype, in);
	cr_expect_eq(g.ir_bm, 128);
	cr_expect_eq(g.ir_bn, 128);
	cr_expect_eq(g.ir_bk, 32);
	cr_expect_eq(g.ir_stages, 3);
	StrBuf sb = {0};
	Sm90Launch *l = emit_entry(m, &sb);
	cr_assert(l, "%s: no sm90 entry (the accumulator did not get the wgmma layout)", file);
	cr_assert(!sb.oom);
	cr_expect_eq(l->ntmaps, 2);
	cr_expect_eq(l->threads, 384);
	/* 3 ring stages beside the two consumers' staging buffers of the
	 * accumulator's bulk store (128 rows of 256 + 16 bytes each) */
	cr_expect_eq(l->stages, 3);
	cr_expect_eq(l->tile_m, 128);
	cr_expect_eq(l->tile_n, 256);
	cr_expect_eq(l->smem_bytes, 3 * (16384 + 32768 + 16) + 2 * 128 * 272 + 1024);
	cr_expect_eq(l->ngeneric, (int)m->kernels.data[0].nargs);
	/* The Hopper instructions the design depends on are all there, and the
	 * header comment says what changed against the IR. */
	const char *need[] = {"cp.async.bulk.tensor.", "mbarrier.arrive.expect_tx", "wgmma.mma_async.sync.aligned.m64n256k16",
	                      "setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232",
	                      ".param .align 64 .b8 _tmA[128]", "wgmma.wait_group.sync.aligned 1",
	                      "IR block 128x128, k step 32, 3 stages", "emitted\n// with k step 64 and 3 TMA stages",
	                      "cp.async.bulk.wait_group.read 0", "fence.proxy.async.shared::cta",
	                      "cp.async.bulk.global.shared::cta.bulk_group", "cp.async.bulk.commit_group",
	                      "cp.async.bulk.wait_group 0", "through a shared staging buffer"};
	for (size_t i = 0; i < sizeof need / sizeof *need; i++)
		cr_expect(strstr(sb.buf, need[i]), "%s: no '%s' in the PTX", file, need[i]);
	check_ptxas_clean(sb.buf, sb.len, 1);
	free(l);
	sb_free(&sb);
	ir_module_free(m);
}

Test(sm90, gemm_f16_nn_ptxas)
{
	emit_one("gemm.tile", false, DT_F16, NULL, 0);
}

Test(sm90, gemm_bf16_tn_ptxas)
{
	emit_one("gemm_bf16_tn.tile", true, DT_BF16, NULL, 0);
}

/* The epilogue (bias + ReLU over the accumulator) is the general lowering's,
 * inside the sm90 entry, over the wgmma registers. */
Test(sm90, gemm_bias_relu_ptxas)
{
	emit_one("gemm_bias_relu.tile", false, DT_F16, NULL, 0);
	Module *m = load_example("gemm_bias_relu.tile", NULL, 0);
	StrBuf sb = {0};
	Sm90Launch *l = emit_entry(m, &sb);
	cr_assert(l);
	cr_expect(strstr(sb.buf, "max.f32"), "the ReLU is not in the sm90 entry");
	cr_expect_eq(l->ngeneric, 7); /* A, B, Bias, C, M, K, N */
	free(l);
	sb_free(&sb);
	ir_module_free(m);
}

/* GELU (tanh form) in the epilogue: the general lowering's tanh (exp form)
 * over the wgmma registers, inside the sm90 entry. */
Test(sm90, gemm_bias_gelu_ptxas)
{
	emit_one("gemm_bias_gelu.tile", false, DT_F16, NULL, 0);
	Module *m = load_example("gemm_bias_gelu.tile", NULL, 0);
	StrBuf sb = {0};
	Sm90Launch *l = emit_entry(m, &sb);
	cr_assert(l);
	cr_expect(strstr(sb.buf, "ex2.approx"), "the tanh is not in the sm90 entry");
	free(l);
	sb_free(&sb);
	ir_module_free(m);
}

/* Batched GEMM (rank-3 A and B indexed [bz, ...], grid z = Bt): rank-3
 * maps, 3-D TMA loads with the batch as the outermost coordinate, and the
 * consumer's bz is the tile's. */
Test(sm90, gemm_batched_ptxas)
{
	emit_one("gemm_batched.tile", false, DT_F16, NULL, 0);
	Module *m = load_example("gemm_batched.tile", NULL, 0);
	Sm90Gemm g;
	cr_assert(sm90_gemm_match(m, 0, &g));
	cr_expect(g.a_batched && g.b_batched);
	cr_expect(!g.launch.k_range);
	cr_expect_eq(g.launch.tmaps[0].rank, 3);
	cr_expect_eq(g.launch.tmaps[1].rank, 3);
	cr_expect_eq(g.launch.tmaps[0].box[2], 1);
	StrBuf sb = {0};
	Sm90Launch *l = emit_entry(m, &sb);
	cr_assert(l);
	cr_expect(strstr(sb.buf, "cp.async.bulk.tensor.3d"), "no 3-D TMA load");
	cr_expect(strstr(sb.buf, "[%tmA, {%k0, %m0, %vbz}]"), "A's batch coordinate is not the tile's bz");
	cr_expect(strstr(sb.buf, "div.u32 %vbz, %tile, %per_z"), "the tile walk has no z");
	cr_expect(strstr(sb.buf, "batched operands (bz)"), "the header does not say so");
	/* K is A's last dimension (arguments A, B, C, Bt, M, K, N), not its second */
	cr_expect(strstr(sb.buf, "ld.param.u32 %K, [_p5];"), "the trip count does not come from K");
	/* C[bz, ...]: the consumer's bz is the tile's */
	cr_expect(strstr(sb.buf, ", %vbz;"), "the epilogue does not read %vbz");
	Sm90Dims td = {{{8, 100, 72}, {8, 72, 136}}};
	cr_expect_null(sm90_check_shapes(l, &td));
	uint64_t d[3];
	sm90_tmap_dims(l, 0, &td, d);
	cr_expect(d[0] == 72 && d[1] == 100 && d[2] == 8, "A map {K, M, Bt}");
	free(l);
	sb_free(&sb);
	ir_module_free(m);
	/* one operand batched, the other shared by every batch */
	const char *half =
		"kernel g(A: f16[Bt, M, K], B: f16[K, N], C: f16[Bt, M, N]) grid(ceildiv(N, 128), ceildiv(M, 128), Bt) threads(128) {\n"
		"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
		"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[bz, by * 128, ko * 32], A_s)\n"
		"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[bz, by * 128, bx * 128])\n}\n";
	m = load_text("half.tile", half, NULL, 0);
	cr_assert(sm90_gemm_match(m, 0, &g));
	cr_expect(g.a_batched && !g.b_batched);
	ir_module_free(m);
	/* a batch index other than bz is not the tile's batch */
	const char *other =
		"kernel g(A: f16[Bt, M, K], B: f16[Bt, K, N], C: f16[Bt, M, N]) grid(ceildiv(N, 128), ceildiv(M, 128), Bt) threads(128) {\n"
		"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
		"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[0, by * 128, ko * 32], A_s)\n"
		"    copy(B[bz, ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[bz, by * 128, bx * 128])\n}\n";
	m = load_text("other.tile", other, NULL, 0);
	cr_expect(!sm90_gemm_match(m, 0, &g), "A[0, ...] matched");
	ir_module_free(m);
}

/* Split-K: the loop's own K range per block (BK = 64), computed by the
 * entry per tile in both roles; element atomics in the epilogue. */
Test(sm90, gemm_splitk_ptxas)
{
	Module *m = load_example("gemm_splitk.tile", NULL, 0);
	Sm90Gemm g;
	cr_assert(sm90_gemm_match(m, 0, &g));
	cr_expect(g.launch.k_range);
	cr_expect_eq(g.ir_bk, 64);
	cr_expect_eq(g.ir_stages, 4);
	StrBuf sb = {0};
	Sm90Launch *l = emit_entry(m, &sb);
	cr_assert(l, "no sm90 entry");
	cr_expect(strstr(sb.buf, "the loop's K range per tile"), "the header does not say so");
	cr_expect(strstr(sb.buf, "IR block 128x128, k step 64, 4 stages"));
	cr_expect(strstr(sb.buf, "add.u32 %k0, %kt, %klo"), "the producer ignores the range");
	/* the tile atomic_add from the accumulator's registers: column pairs as
	 * one v2 red each where the row half is inside C, else per element */
	cr_expect(strstr(sb.buf, "red.global.add.v2.f32"), "no paired f32 atomics");
	cr_expect(strstr(sb.buf, "red.global.add.f32"), "no per-element f32 atomics for ragged edges");
	/* the range is computed twice per tile: producer and consumers */
	int n = 0;
	for (const char *p = sb.buf; (p = strstr(p, "mov.u32 %klo, %xr")); p++)
		n++;
	cr_expect_eq(n, 2);
	check_ptxas_clean(sb.buf, sb.len, 1);
	free(l);
	sb_free(&sb);
	ir_module_free(m);
	/* BK = 32 with a range of its own: the entry's k step (64) would not match it */
	char *text = example_text("gemm_splitk.tile");
	for (char *p; (p = strstr(text, "64"));)
		p[0] = '3', p[1] = '2';
	m = load_text("splitk32.tile", text, NULL, 0);
	cr_expect(!sm90_gemm_match(m, 0, &g), "BK = 32 split-K matched");
	ir_module_free(m);
	free(text);
	/* a range that depends on bx (the two IR blocks of a CTA would differ) */
	text = example_text("gemm_splitk.tile");
	char *at = strstr(text, "let kt = ceildiv(ceildiv(K, 64), S)");
	cr_assert(at);
	memcpy(at, "let kt = ceildiv(ceildiv(K, 64), bx)", strlen("let kt = ceildiv(ceildiv(K, 64), bx)"));
	m = load_text("splitkbx.tile", text, NULL, 0);
	cr_expect(!sm90_gemm_match(m, 0, &g), "a bx-dependent range matched");
	ir_module_free(m);
	free(text);
}

/* The staged bulk store is only for a copy whose tensor no other statement
 * mentions (its stores complete asynchronously); otherwise, and with
 * LOWER_NV_BULK_STORE off, the copy is the general stores and the ring has
 * its 4 stages. */
Test(sm90, staged_store_only_unobserved)
{
	const char *reads =
		"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
		"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
		"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
		"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n"
		"  parallel (i, j) in (128, 128) {\n    C_f[i, j] = C_f[i, j] + f32(C[by * 128 + i, bx * 128 + j])\n  }\n"
		"  copy(C_f, C[by * 128, bx * 128])\n}\n";
	Module *m = load_text("reads.tile", reads, NULL, 0);
	StrBuf sb = {0};
	Sm90Launch *l = emit_entry(m, &sb);
	cr_assert(l, "no sm90 entry");
	cr_expect_null(strstr(sb.buf, "cp.async.bulk.global"), "a copy to a tensor the kernel reads was staged");
	cr_expect_eq(l->stages, 4);
	char *log = NULL; /* (its per-element loads of C spill a little: not this test's subject) */
	cr_expect_eq(run_ptxas(sb.buf, sb.len, &log), 0, "ptxas rejected the PTX:\n%s", log);
	free(log);
	free(l);
	sb_free(&sb);
	ir_module_free(m);
	m = load_example("gemm.tile", NULL, 0);
	l = emit_entry_off(m, &sb, LOWER_NV_BULK_STORE);
	cr_assert(l);
	cr_expect_null(strstr(sb.buf, "cp.async.bulk.global"), "LOWER_NV_BULK_STORE did not switch it off");
	cr_expect_eq(l->stages, 4);
	cr_expect_eq(l->smem_bytes, 4 * (16384 + 32768 + 16) + 1024);
	free(l);
	sb_free(&sb);
	ir_module_free(m);
}

/* Row split: with BM = 128 and a staged store, consumer c computes rows
 * 64c.. of both IR blocks (one m64n256k16 per k16) and the two swap
 * accumulator halves after the loop, and before it too when the code there
 * leaves C_f element-dependent (an accumulator loaded from C0). */
Test(sm90, row_split)
{
	Module *m = load_example("gemm.tile", NULL, 0);
	StrBuf sb = {0};
	Sm90Launch *l = emit_entry(m, &sb);
	cr_assert(l);
	cr_expect(strstr(sb.buf, "wgmma.mma_async.sync.aligned.m64n256k16"), "no m64n256k16");
	cr_expect_null(strstr(sb.buf, "wgmma.mma_async.sync.aligned.m64n128k16"), "m64n128k16 left");
	cr_expect(strstr(sb.buf, "Row split"), "the header does not say so");
	int bars = 0;
	for (const char *p = sb.buf; (p = strstr(p, "bar.sync 3, 256;")); p++)
		bars++;
	cr_expect_eq(bars, 6, "two swaps (in the grid and outside it) of three barriers: %d", bars);
	/* the consumer outside the IR grid computes rows 64.. of block 2j too:
	 * its 128 accumulator registers start at zero (device call 2 found
	 * garbage there at odd grid x, e.g. bf16 A B^T 131x78x48) */
	const char *out = strstr(sb.buf, "@%wp0 bra $C_BODY;"), *loop1 = out ? strstr(out, "$C_K1:") : NULL;
	cr_assert(out && loop1, "no out-of-grid loop");
	int zeros = 0;
	for (const char *p = out; (p = strstr(p, ", 0f00000000;")) && p < loop1; p++)
		zeros++;
	cr_expect_eq(zeros, 128, "out-of-grid accumulator not cleared: %d", zeros);
	free(l);
	sb_free(&sb);
	l = emit_entry_off(m, &sb, LOWER_NV_WG_ROWS);
	cr_assert(l);
	cr_expect(strstr(sb.buf, "wgmma.mma_async.sync.aligned.m64n128k16"), "LOWER_NV_WG_ROWS did not switch it off");
	cr_expect_null(strstr(sb.buf, "bar.sync 3, 256;"));
	free(l);
	sb_free(&sb);
	ir_module_free(m);
	char *text = example_text("../tests/gpu/gemm_acc.tile");
	m = load_text("gemm_acc.tile", text, NULL, 0);
	free(text);
	l = emit_entry(m, &sb);
	cr_assert(l, "gemm_acc: no sm90 entry");
	cr_expect(strstr(sb.buf, "before and after it"), "no swap before the loop");
	bars = 0;
	for (const char *p = sb.buf; (p = strstr(p, "bar.sync 3, 256;")); p++)
		bars++;
	cr_expect_eq(bars, 12, "four swaps: %d", bars);
	check_ptxas_clean(sb.buf, sb.len, 1);
	free(l);
	sb_free(&sb);
	ir_module_free(m);
}

/* Specialised sizes become constants; the kernel then has no u32 params. */
Test(sm90, gemm_specialised_ptxas)
{
	Define defs[] = {{"M", 300}, {"N", 264}, {"K", 72}};
	emit_one("gemm.tile", false, DT_F16, defs, 3);
	Module *m = load_example("gemm.tile", defs, 3);
	Sm90Gemm g;
	cr_assert(sm90_gemm_match(m, 0, &g));
	cr_expect_eq(g.launch.ngeneric, 3);
	ir_module_free(m);
}

/* Through ptx_compile for sm_90a: the module holds the generic entry and the
 * sm90 entry, and the whole module assembles. */
Test(sm90, ptx_compile_module)
{
	Module *m = load_example("gemm_bf16_tn.tile", NULL, 0);
	Target t;
	cr_assert_eq(target_parse("sm_90a", &t), 0);
	StrBuf sb = {0};
	PtxKernelInfo *info = NULL;
	Diag d;
	diag_init(&d);
	cr_assert_eq(ptx_compile(m, &t, &sb, &info, &d), 0, "%s", diag_text(&d));
	cr_assert(strstr(sb.buf, ".entry gemm_bf16_tn_sm90("), "ptx_compile did not call the sm90 path");
	cr_assert(info[0].sm90, "PtxKernelInfo.sm90 not set");
	cr_expect_str_eq(info[0].sm90->entry, "gemm_bf16_tn_sm90");
	check_ptxas_clean(sb.buf, sb.len, 1);
	ptx_info_free(info, (int)m->kernels.len);
	sb_free(&sb);
	diag_free(&d);
	ir_module_free(m);

	/* sm_80 never takes it. */
	m = load_example("gemm_bf16_tn.tile", NULL, 0);
	cr_assert_eq(target_parse("sm_80", &t), 0);
	cr_assert_eq(ptx_compile(m, &t, &sb, &info, &d), 0, "%s", diag_text(&d));
	cr_expect_null(strstr(sb.buf, "_sm90"));
	cr_expect_null(info[0].sm90);
	ptx_info_free(info, (int)m->kernels.len);
	sb_free(&sb);
	diag_free(&d);
	ir_module_free(m);
}

/* A trip count folded to a literal (the Python DSL writes TileLang's
 * T.ceildiv(K, block_K) of a constant K as 128) is the same loop; a literal
 * one short of covering K is not. */
static const char *const const_trip =
	"kernel g(A: f16[4096, 4096], B: f16[4096, 4096], C: f16[4096, 4096]) grid(32, 32) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. TRIP stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n"
	"  parallel (i, j) in (128, 128) {\n    C_f[i, j] = max(C_f[i, j], 0)\n  }\n"
	"  copy(C_f, C[by * 128, bx * 128])\n}\n";

Test(sm90, constant_trip_count)
{
	const char *trips[] = {"128", "127"};
	for (int i = 0; i < 2; i++) {
		char text[1024];
		const char *at = strstr(const_trip, "TRIP");
		snprintf(text, sizeof text, "%.*s%s%s", (int)(at - const_trip), const_trip, trips[i], at + 4);
		Module *m = load_text("trip.tile", text, NULL, 0);
		Sm90Gemm g;
		cr_expect_eq(sm90_gemm_match(m, 0, &g), i == 0, "trip count %s", trips[i]);
		ir_module_free(m);
	}
}

/* Kernels that are almost a GEMM stay on the generic path. */
static const char *const near_misses[] = {
	/* transpose_a */
	"kernel g(A: f16[K, M], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[32, 128]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[ko * 32, by * 128], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f, transpose_a=true)\n  }\n"
	"  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* 256 threads: an IR block is not one warpgroup */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(256) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* the loop skips the first K block */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 1 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* the shared A tile is read after the loop: it must exist in shared memory */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(A_s, C[by * 128, bx * 128])\n}\n",
	/* A and B tiles swapped in the index expressions */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[bx * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, by * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* use_swizzle: the path's persistent CTAs walk tiles in their own order, which would replace the kernel's */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  use_swizzle(4)\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
};

Test(sm90, near_misses_do_not_match)
{
	for (size_t i = 0; i < sizeof near_misses / sizeof *near_misses; i++) {
		Module *m = load_text("miss.tile", near_misses[i], NULL, 0);
		Sm90Gemm g;
		cr_expect(!sm90_gemm_match(m, 0, &g), "near miss %zu matched", i);
		ir_module_free(m);
	}
	/* Non-GEMM examples never match. */
	const char *others[] = {"softmax.tile", "rmsnorm.tile", "vector_add.tile", "mha_fwd.tile"};
	for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
		Module *m = load_example(others[i], NULL, 0);
		for (size_t k = 0; k < m->kernels.len; k++) {
			Sm90Gemm g;
			cr_expect(!sm90_gemm_match(m, (int)k, &g), "%s matched", others[i]);
		}
		ir_module_free(m);
	}
}

Test(sm90, launch_arithmetic)
{
	Module *m = load_example("gemm.tile", NULL, 0);
	Sm90Gemm g;
	cr_assert(sm90_gemm_match(m, 0, &g));
	const Sm90Launch *l = &g.launch;
	uint32_t grid[3];
	sm90_grid(l, (uint32_t[]){32, 32, 1}, 132, grid);
	cr_expect_eq(grid[0], 132); /* 4096^2: 16 x 32 CTA tiles of two IR blocks, persistent */
	sm90_grid(l, (uint32_t[]){3, 2, 1}, 132, grid);
	cr_expect_eq(grid[0], 4); /* 2 x 2 CTA tiles (the last column has one IR block) */
	sm90_grid(l, (uint32_t[]){3, 2, 5}, 132, grid);
	cr_expect_eq(grid[0], 20); /* and a grid z extent: 5 times as many */
	sm90_grid(l, (uint32_t[]){3, 0, 1}, 132, grid);
	cr_expect_eq(grid[0], 0);
	/* the maps' tensors A [M, K], B [K, N] */
	cr_expect_null(sm90_check_shapes(l, &(Sm90Dims){{{100, 72}, {72, 136}}}));
	cr_expect_not_null(sm90_check_shapes(l, &(Sm90Dims){{{100, 70}, {70, 136}}})); /* K % 8 */
	cr_expect_not_null(sm90_check_shapes(l, &(Sm90Dims){{{100, 72}, {72, 130}}})); /* N % 8 for [K, N] B */
	uint64_t d[3];
	Sm90Dims td = {{{100, 72}, {72, 136}}};
	sm90_tmap_dims(l, 0, &td, d);
	cr_expect(d[0] == 72 && d[1] == 100 && d[2] == 1, "A map {K, M}");
	sm90_tmap_dims(l, 1, &td, d);
	cr_expect(d[0] == 136 && d[1] == 72, "B map {N, K}");
	cr_expect_eq(l->tmaps[0].rank, 2);
	cr_expect_eq(l->tmaps[1].box[0], 64);
	cr_expect_eq(l->tmaps[1].box[1], 64);
	cr_expect_eq(l->tmaps[0].box[1], 128);
	/* The generic entry's parameters (A, B, C, M, K, N), then the maps and the grid. */
	cr_expect_eq(l->ngeneric, 6);
	cr_expect_eq(l->tmaps[0].arg, 0);
	cr_expect_eq(l->tmaps[1].arg, 1);
	ir_module_free(m);

	m = load_example("gemm_bf16_tn.tile", NULL, 0);
	cr_assert(sm90_gemm_match(m, 0, &g));
	cr_expect_null(sm90_check_shapes(&g.launch, &(Sm90Dims){{{100, 72}, {130, 72}}})); /* N % 8 != 0 is fine for [N, K] B */
	cr_expect_null(sm90_check_shapes(&g.launch, &(Sm90Dims){{{100, 72}, {131, 72}}})); /* odd N too: the general stores */
	td = (Sm90Dims){{{100, 72}, {130, 72}}};
	sm90_tmap_dims(&g.launch, 1, &td, d);
	cr_expect(d[0] == 72 && d[1] == 130, "B map {K, N}");
	cr_expect_eq(g.launch.tmaps[1].box[1], 256); /* both IR blocks' B rows */
	ir_module_free(m);
}

/* The public API: a binary for sm_90a carries the fast entry in a module of
 * its own (ptxas-clean), its tensor-map metadata, and the generic PTX alone;
 * ta_binary_fast_launch refuses what the generic entry must run. */
Test(sm90, public_api_fast_entry)
{
	char *text = example_text("gemm_bias_relu.tile");
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *bin = NULL;
	cr_assert_eq(ta_compile_source(ctx, "gemm_bias_relu.tile", text, strlen(text), "sm_90a", &bin), TA_OK, "%s",
		     ta_ctx_diagnostics(ctx));
	const ta_kernel_info *k = ta_binary_kernel(bin, 0);
	cr_assert(k->fast, "no fast entry in ta_kernel_info");
	cr_expect_str_eq(k->fast->name, "gemm_bias_relu_sm90");
	cr_expect_eq(k->fast->threads, 384);
	cr_expect_eq(k->fast->ntmaps, 2);
	cr_expect_eq(k->fast->tmaps[0].arg, 0); /* A */
	cr_expect_eq(k->fast->tmaps[1].arg, 1); /* B */
	cr_expect_eq(k->fast->tmaps[0].box[1], 128);
	cr_expect_eq(k->fast->tmaps[0].swizzle, 3);
	cr_expect_eq(k->fast->ptx_size, strlen(k->fast->ptx));
	size_t n;
	const char *generic = ta_binary_data(bin, &n);
	cr_expect(!strstr(generic, "_sm90"), "the generic module holds the fast entry too (a host would JIT both)");
	check_ptxas_clean(k->fast->ptx, k->fast->ptx_size, 1);
	/* K % 8 != 0: the generic entry's job, said before any driver call */
	int64_t vals[7] = {0, 0, 0, 0, 256, 70, 256}; /* A, B, Bias, C, M, K, N */
	uint64_t dptr[7] = {0x10000, 0x20000, 0x30000, 0x40000};
	int32_t sym[3] = {256, 70, 256};
	void *params[7] = {&dptr[0], &dptr[1], &dptr[2], &dptr[3], &sym[0], &sym[1], &sym[2]};
	ta_fast_launch fl;
	cr_expect_eq(ta_binary_fast_launch(ctx, bin, 0, dptr, vals, params, &fl), TA_ERR_UNSUPPORTED);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "K % 8"), "%s", ta_ctx_diagnostics(ctx));
	cr_expect_eq(ta_binary_fast_launch(ctx, bin, 0, NULL, vals, params, &fl), TA_ERR_INVALID);
	ta_binary_release(bin);
	/* sm_80: no fast entry */
	cr_assert_eq(ta_compile_source(ctx, "gemm_bias_relu.tile", text, strlen(text), "sm_80", &bin), TA_OK);
	cr_expect_null(ta_binary_kernel(bin, 0)->fast);
	ta_binary_release(bin);
	ta_ctx_destroy(ctx);
	free(text);
}
