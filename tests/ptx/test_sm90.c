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

#define PTXAS "/usr/local/cuda/bin/ptxas"

static Module *load_text(const char *name, const char *text, const Define *defs, int ndefs)
{
	Diag d;
	diag_init(&d);
	Module *m = ir_parse(name, text, strlen(text), &d);
	cr_assert(m, "parse failed:\n%s", diag_text(&d));
	if (ndefs)
		cr_assert_eq(ir_specialize(m, defs, ndefs, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(ir_verify(m, &d), 0, "verify failed:\n%s", diag_text(&d));
	diag_free(&d);
	return m;
}

static char *example_text(const char *file)
{
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root, "TILEASM_SRCDIR is not set (run through meson test)");
	char path[1024];
	snprintf(path, sizeof path, "%s/examples/%s", root, file);
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text, "cannot read %s", path);
	return text;
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

static void emit_one(const char *file, bool b_kmajor, DType in, const Define *defs, int ndefs)
{
	Module *m = load_example(file, defs, ndefs);
	Sm90Gemm g;
	cr_assert(sm90_gemm_match(m, 0, &g), "%s does not match the sm90 GEMM pattern", file);
	cr_expect_eq(g.b_kmajor, b_kmajor);
	cr_expect_eq(g.in_dtype, in);
	cr_expect_eq(g.launch.ntmaps, 2);
	cr_expect_eq(g.launch.threads, 384);
	cr_expect_eq(g.launch.smem_bytes, 4 * (16384 + 32768) + 64 + 1024);
	cr_expect_eq(g.ir_bm, 128);
	cr_expect_eq(g.ir_bk, 32);
	cr_expect_eq(g.ir_stages, 3);
	StrBuf sb = {0};
	sm90_module_header(&sb);
	sm90_gemm_emit(m, &g, &sb);
	cr_assert(!sb.oom);
	/* The Hopper instructions the design depends on are all there. */
	const char *need[] = {"cp.async.bulk.tensor.2d", "mbarrier.arrive.expect_tx", "wgmma.mma_async.sync.aligned.m64n256k16",
	                      "setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232",
	                      ".param .align 64 .b8 p0[128]", "wgmma.wait_group.sync.aligned 1"};
	for (size_t i = 0; i < sizeof need / sizeof *need; i++)
		cr_expect(strstr(sb.buf, need[i]), "%s: no '%s' in the PTX", file, need[i]);
	check_ptxas_clean(sb.buf, sb.len, 1);
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

/* Specialised sizes become constants; the kernel then has no u32 params. */
Test(sm90, gemm_specialised_ptxas)
{
	Define defs[] = {{"M", 300}, {"N", 264}, {"K", 72}};
	emit_one("gemm.tile", false, DT_F16, defs, 3);
	Module *m = load_example("gemm.tile", defs, 3);
	Sm90Gemm g;
	cr_assert(sm90_gemm_match(m, 0, &g));
	cr_expect_eq(g.launch.nparams, 3);
	for (int i = 0; i < g.launch.nparams; i++)
		cr_expect_neq(g.launch.params[i].kind, SM90P_U32);
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

/* Kernels that are almost a GEMM stay on the generic path. */
static const char *const near_misses[] = {
	/* transpose_a */
	"kernel g(A: f16[K, M], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[32, 128]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[ko * 32, by * 128], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f, transpose_a=true)\n  }\n"
	"  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* the grid covers only half of N */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 256), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* the loop skips the first K block */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 1 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* no clear: C_f would start undefined */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  fill(C_f, 1.0)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[by * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
	/* A and B tiles swapped in the index expressions */
	"kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N]) grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
	"  A_s = shared f16[128, 32]\n  B_s = shared f16[32, 128]\n  C_f = fragment f32[128, 128]\n  clear(C_f)\n"
	"  pipelined ko in 0 .. ceildiv(K, 32) stages(3) {\n    copy(A[bx * 128, ko * 32], A_s)\n"
	"    copy(B[ko * 32, by * 128], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 128, bx * 128])\n}\n",
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
	const char *others[] = {"softmax.tile", "rmsnorm.tile", "vector_add.tile", "flash_attention_fwd.tile"};
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
	sm90_grid(l, 4096, 4096, 132, grid);
	cr_expect_eq(grid[0], 132); /* 512 tiles, persistent */
	sm90_grid(l, 129, 257, 132, grid);
	cr_expect_eq(grid[0], 4); /* 2 x 2 tiles */
	sm90_grid(l, 0, 257, 132, grid);
	cr_expect_eq(grid[0], 0);
	cr_expect_null(sm90_check_shapes(l, 100, 136, 72));
	cr_expect_not_null(sm90_check_shapes(l, 100, 136, 70)); /* K % 8 */
	cr_expect_not_null(sm90_check_shapes(l, 100, 130, 72)); /* N % 8 for [K, N] B */
	uint64_t d[2];
	sm90_tmap_dims(l, 0, 100, 136, 72, d);
	cr_expect(d[0] == 72 && d[1] == 100, "A map {K, M}");
	sm90_tmap_dims(l, 1, 100, 136, 72, d);
	cr_expect(d[0] == 136 && d[1] == 72, "B map {N, K}");
	cr_expect_eq(l->tmaps[1].box[0], 64);
	cr_expect_eq(l->tmaps[1].box[1], 64);
	/* Parameters follow Kernel.args: A, B as maps, C as a pointer, then the symbols. */
	cr_expect_eq(l->params[0].kind, SM90P_TMAP);
	cr_expect_eq(l->params[1].kind, SM90P_TMAP);
	cr_expect_eq(l->params[2].kind, SM90P_PTR);
	cr_expect_eq(l->params[3].kind, SM90P_U32);
	ir_module_free(m);

	m = load_example("gemm_bf16_tn.tile", NULL, 0);
	cr_assert(sm90_gemm_match(m, 0, &g));
	cr_expect_null(sm90_check_shapes(&g.launch, 100, 130, 72)); /* N % 8 != 0 is fine for [N, K] B */
	cr_expect_not_null(sm90_check_shapes(&g.launch, 100, 131, 72)); /* odd N: pair stores */
	sm90_tmap_dims(&g.launch, 1, 100, 130, 72, d);
	cr_expect(d[0] == 72 && d[1] == 130, "B map {K, N}");
	cr_expect_eq(g.launch.tmaps[1].box[1], 256);
	ir_module_free(m);
}
