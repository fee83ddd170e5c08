/* test_ptx.c — the NVIDIA path without a GPU: every example's PTX must pass
 * ptxas for sm_80 and sm_90a, the lowering must produce the structures it
 * promises (predicated ragged copies, mma.sync gemms, shuffle reductions,
 * barriers only where data crosses threads), and the CUDA runtime must fail
 * cleanly when there is no driver. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda.h"
#include "ir.h"
#include "lower.h"
#include "ptx.h"
#include "testutil.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

static Module *parse(const char *text, const Define *defs, int ndefs) { return load_text("t.tile", text, defs, ndefs); }

/* name: a file in examples/, or a path from the source root when it has a '/' */
static Module *parse_file_defs(const char *name, const Define *defs, int ndefs)
{
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root, "TILEASM_SRCDIR is not set");
	char path[4096];
	snprintf(path, sizeof path, "%s/%s%s", root, strchr(name, '/') ? "" : "examples/", name);
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text, "cannot read %s", path);
	Module *m = parse(text, defs, ndefs);
	free(text);
	return m;
}

static Module *parse_file(const char *name) { return parse_file_defs(name, NULL, 0); }

static char *compile(const Module *m, ta_target id)
{
	Target t = {.id = id};
	StrBuf sb = {0};
	Diag d;
	diag_init(&d);
	cr_assert(ptx_compile(m, &t, &sb, NULL, &d) == 0, "%s", diag_text(&d));
	diag_free(&d);
	return sb_take(&sb);
}

/* (mha_fwd.tile is in sized_examples_pass_ptxas, at D = 64 and 128) */
static const char *const examples[] = {
	"vector_add.tile", "reduce_sum.tile", "softmax.tile", "rmsnorm.tile", "layernorm.tile",
	"gemm.tile", "gemm_bf16_tn.tile", "gemm_bias_relu.tile", "gemm_bias_gelu.tile",
	"softmax_row.tile", "rmsnorm_row.tile", "layernorm_row.tile", "gemm_batched.tile", "gemm_splitk.tile",
	"gemv.tile", "gemm_int4.tile", "gqa_decode.tile", "gqa_decode_split.tile",
};

Test(ptx, examples_pass_ptxas, .timeout = 600)
{
	static const struct {
		ta_target id;
		const char *arch;
	} tg[] = {{TA_TARGET_SM80, "sm_80"}, {TA_TARGET_SM90A, "sm_90a"}};
	for (size_t i = 0; i < TA_ARRAY_LEN(examples); i++) {
		Module *m = parse_file(examples[i]);
		for (size_t j = 0; j < TA_ARRAY_LEN(tg); j++) {
			char *ptx = compile(m, tg[j].id);
			char log[8192];
			cr_expect(strstr(ptx, tg[j].id == TA_TARGET_SM80 ? ".target sm_80" : ".target sm_90a"));
			int rc = ptxas(ptx, tg[j].arch, log, sizeof log);
			cr_expect(rc == 0, "%s for %s rejected by ptxas:\n%s", examples[i], tg[j].arch, log);
			free(ptx);
		}
		ir_module_free(m);
	}
}

/* Examples at the -D sizes they document, and regression kernels. */
Test(ptx, sized_examples_pass_ptxas, .timeout = 600)
{
	static const struct {
		const char *file;
		Define def[2];
		int ndefs;
	} ex[] = {
		{"mha_fwd.tile", {{"D", 64}}, 1},
		{"mha_fwd.tile", {{"D", 128}}, 1},
		{"tests/emu/regress/atomics.tile", {{"N", 300}}, 1},
		{"tests/emu/regress/copy_rank_reducing.tile", {{"S", 70}}, 1},
		/* SIGFPE in the row-fragment lowering on sm_80/sm_90a before (issue 13.2) */
		{"tests/emu/regress/rowfrag_two_shapes.tile", {{0}}, 0},
		{"tests/emu/regress/rowfrag_wide_acc.tile", {{0}}, 0},
		{"tests/emu/regress/reduce_acc_rows_out.tile", {{0}}, 0},
		{"tests/amd/amd_atomic_add_f16.tile", {{0}}, 0},
		{"tests/amd/amd_atomic_add_f64_encode.tile", {{"N", 50}}, 1},
		{"tests/amd/bf16_atomic_add_msg.tile", {{0}}, 0},
		/* wgmma at G = 2 and 4 warpgroups (lower_wgmma.c), mma.sync on sm_80 */
		{"tests/gpu/gemm_wg.tile", {{0}}, 0},
	};
	static const struct {
		ta_target id;
		const char *arch;
	} tg[] = {{TA_TARGET_SM80, "sm_80"}, {TA_TARGET_SM90A, "sm_90a"}};
	for (size_t i = 0; i < TA_ARRAY_LEN(ex); i++) {
		Module *m = parse_file_defs(ex[i].file, ex[i].def, ex[i].ndefs);
		for (size_t j = 0; j < TA_ARRAY_LEN(tg); j++) {
			char *ptx = compile(m, tg[j].id);
			char log[8192];
			int rc = ptxas(ptx, tg[j].arch, log, sizeof log);
			cr_expect(rc == 0, "%s for %s rejected by ptxas:\n%s", ex[i].file, tg[j].arch, log);
			free(ptx);
		}
		ir_module_free(m);
	}
}

/* Lowers the only kernel of text and returns its SIMT dump. */
static char *simt(const char *text, ta_target id, SimtFunc *keep)
{
	Module *m = parse(text, NULL, 0);
	Target t = {.id = id};
	SimtFunc f;
	Diag d;
	diag_init(&d);
	cr_assert(lower_kernel(m, 0, &t, &f, &d) == 0, "%s", diag_text(&d));
	diag_free(&d);
	StrBuf sb = {0};
	simt_print(&f, &sb);
	if (keep) {
		keep->smem_bytes = f.smem_bytes;
		keep->nmma = f.nmma;
	}
	simt_free(&f);
	ir_module_free(m);
	return sb_take(&sb);
}

Test(lower, ragged_copy_is_predicated)
{
	/* 6 elements: no 16-byte vector path, one element per step */
	char *s = simt("kernel k(A: f32[N], B: f32[N]) grid(ceildiv(N, 6)) threads(32) {\n"
	               "  T = shared f32[6]\n  copy(A[bx * 6], T)\n  copy(T, B[bx * 6])\n}\n",
	               TA_TARGET_SM80, NULL);
	/* the global load is guarded (out of bounds gives 0) and so is the store */
	cr_expect(strstr(s, "ld.global.f32"), "%s", s);
	cr_expect(count(s, "ld.global") == 1 && strstr(s, "@%"), "%s", s);
	const char *ldg = strstr(s, "ld.global");
	cr_assert(ldg);
	cr_expect(ldg[-1] == ' ' && strchr(s, '@') && strchr(s, '@') < ldg, "load not predicated:\n%s", s);
	const char *stg = strstr(s, "st.global");
	cr_assert(stg);
	const char *line = stg;
	while (line > s && line[-1] != '\n')
		line--;
	cr_expect(line[2] == '@', "store not predicated:\n%s", s);
	/* the shared tile is written by one thread and read by another: one barrier */
	cr_expect(count(s, "bar") == 1, "%s", s);
	free(s);
}

Test(lower, aligned_copies_use_vectors)
{
	char *s = simt("kernel k(A: f16[M, N], B: f16[M, N]) grid(1) threads(64) {\n"
	               "  T = shared f16[16, 64]\n  copy(A[0, 8], T)\n  copy(T, B[3, 16])\n}\n",
	               TA_TARGET_SM80, NULL);
	/* each copy: a predicated 16-byte path plus the element fallback for
	 * unaligned tensors; global -> shared vectors are cp.async (sm_80+) */
	cr_expect(count(s, "cp.async") == 2 /* 128 vectors, 64 threads: unrolled */ && count(s, "cp.wait") == 1 && count(s, "ld.global.v4.i32") == 0, "%s", s);
	cr_expect(count(s, "ld.shared.v4.i32") == 1 && count(s, "st.global.v4.i32") == 1, "%s", s);
	cr_expect(count(s, "ld.global.f16") == 1 && count(s, "st.global.f16") == 1, "%s", s);
	free(s);
}

/* The element path of a vector-fragment copy (a tensor the 16-byte chunks do
 * not fit): one 64-bit address per chunk of V = 8 f16, its elements at
 * offsets +0 .. +14 from it, not one address computation per element.
 * layernorm_row's fast branch: 3 loads + 1 store of 2 chunks per thread, the
 * long-row branch 5 + 1 more (layernorm_row was 192 mul.lo.s64, 4103 PTX
 * instructions; now 52, 3459). */
/* Lines of text holding both a and b. */
static int count_lines_with(const char *text, const char *a, const char *b)
{
	int n = 0;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[256];
		snprintf(line, sizeof line, "%.*s", (int)len, l);
		n += strstr(line, a) && strstr(line, b);
		l += len + (e != NULL);
	}
	return n;
}

Test(lower, element_path_addresses_per_chunk)
{
	Module *m = parse_file("layernorm_row.tile");
	char *ptx = compile(m, TA_TARGET_SM90A);
	int ld = count(ptx, "ld.global.b16"), st = count(ptx, "st.global.b16");
	cr_expect_eq(ld, 128, "%d element loads", ld);
	cr_expect_eq(st, 32, "%d element stores", st);
	for (int j = 0; j < 8; j++) { /* every chunk: one element at each offset */
		char off[16];
		snprintf(off, sizeof off, "+%d]", 2 * j);
		cr_expect_eq(count_lines_with(ptx, "ld.global.b16", off), ld / 8, "loads at %s", off);
		cr_expect_eq(count_lines_with(ptx, "st.global.b16", off), st / 8, "stores at %s", off);
	}
	cr_expect(count(ptx, "mul.lo.s64") <= 60, "%d 64-bit multiplies", count(ptx, "mul.lo.s64"));
	free(ptx);
	ir_module_free(m);
}

Test(lower, independent_copies_share_no_barrier)
{
	char *s = simt("kernel k(A: f16[N], B: f16[N]) grid(1) threads(64) {\n"
	               "  X = shared f16[64]\n  Y = shared f16[64]\n  copy(A[0], X)\n  copy(B[0], Y)\n}\n",
	               TA_TARGET_SM80, NULL);
	cr_expect(count(s, "bar") == 0, "%s", s);
	free(s);
}

Test(lower, gemm_uses_mma)
{
	SimtFunc f;
	const char *src = "kernel g(A: f16[M, K], B: f16[K, N], C: f32[M, N]) grid(1) threads(128) {\n"
	                  "  A_s = shared f16[64, 32]\n  B_s = shared f16[32, 64]\n  C_f = fragment f32[64, 64]\n"
	                  "  copy(A[0, 0], A_s)\n  copy(B[0, 0], B_s)\n  gemm(A_s, B_s, C_f, clear=true)\n"
	                  "  copy(C_f, C[0, 0])\n}\n";
	char *s = simt(src, TA_TARGET_SM80, &f);
	cr_expect(f.nmma == 1);
	cr_expect(strstr(s, "mma.m16n8k16.f16"), "%s", s);
	/* the accumulator lives in registers (MMA C layout): only A_s and B_s in shared memory */
	cr_expect(f.smem_bytes == 64 * 32 * 2 + 32 * 64 * 2, "smem %lld", (long long)f.smem_bytes);
	cr_expect(!strstr(s, "st.shared.f32") && strstr(s, "st.global.f32"), "%s", s);
	free(s);
	Module *m = parse(src, NULL, 0);
	char *ptx = compile(m, TA_TARGET_SM90A);
	cr_expect(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
	free(ptx);
	ir_module_free(m);
}

Test(lower, reduced_fragment_keeps_registers)
{
	SimtFunc f;
	/* S_f feeds a reduction whose row result r is copied out, so r cannot
	 * live in registers; S_f still does (reduce_rf_mem), r is in shared */
	char *s = simt("kernel g(A: f16[64, 64], R: f32[64]) grid(1) threads(128) {\n"
	               "  A_s = shared f16[64, 64]\n  S_f = fragment f32[64, 64]\n  r = fragment f32[64]\n"
	               "  copy(A, A_s)\n  gemm(A_s, A_s, S_f, clear=true)\n  reduce_max(S_f, r)\n  copy(r, R)\n}\n",
	               TA_TARGET_SM80, &f);
	cr_expect(f.nmma == 1);
	cr_expect(f.smem_bytes == 64 * 64 * 2 + 64 * 4, "smem %lld", (long long)f.smem_bytes);
	free(s);
}

Test(lower, odd_gemm_falls_back_to_scalar)
{
	SimtFunc f;
	char *s = simt("kernel g(C: f32[4, 4]) grid(1) threads(32) {\n"
	               "  A_s = shared f32[4, 3]\n  B_s = shared f32[3, 4]\n  C_f = fragment f32[4, 4]\n"
	               "  fill(A_s, 1.0)\n  fill(B_s, 2.0)\n  gemm(A_s, B_s, C_f, clear=true)\n  copy(C_f, C)\n}\n",
	               TA_TARGET_SM80, &f);
	cr_expect(f.nmma == 0);
	cr_expect(!strstr(s, "mma"), "%s", s);
	free(s);
}

Test(lower, reduce_uses_shuffles)
{
	char *s = simt("kernel r(X: f32[4, 64], Y: f32[4]) grid(1) threads(128) {\n"
	               "  X_f = fragment f32[4, 64]\n  y = fragment f32[4]\n  copy(X, X_f)\n"
	               "  reduce_sum(X_f, y, dim=1)\n  copy(y, Y)\n}\n",
	               TA_TARGET_SM80, NULL);
	/* 128 threads over 4 rows: 32 lanes per row, 5 butterfly steps */
	cr_expect(count(s, "shfl.bfly") == 5, "%s", s);
	free(s);
}

Test(lower, fp8_needs_sm90a)
{
	const char *src = "kernel c(A: f32[N], B: fp8e4m3[N]) grid(1) threads(32) {\n"
	                  "  T = shared f32[32]\n  U = shared fp8e4m3[32]\n  copy(A[0], T)\n  copy(T, U)\n"
	                  "  copy(U, B[0])\n}\n";
	Module *m = parse(src, NULL, 0);
	Target t = {.id = TA_TARGET_SM80};
	StrBuf sb = {0};
	Diag d;
	diag_init(&d);
	cr_expect(ptx_compile(m, &t, &sb, NULL, &d) != 0);
	cr_expect(strstr(diag_text(&d), "sm_90a"), "%s", diag_text(&d));
	diag_free(&d);
	sb_free(&sb);
	char *ptx = compile(m, TA_TARGET_SM90A);
	char log[8192];
	cr_expect(strstr(ptx, "cvt.rn.satfinite.e4m3x2.f32"));
	cr_expect(ptxas(ptx, "sm_90a", log, sizeof log) == 0, "%s", log);
	free(ptx);
	ir_module_free(m);
}

Test(lower, dtypes_and_ops_pass_ptxas, .timeout = 60)
{
	/* every arithmetic path of the expression lowering in one kernel */
	const char *src =
		"kernel e(A: i8[N], B: bf16[N], C: f64[N], D: u8[N], E: i64[N], s: f16, flag: bool)"
		" grid(1) threads(64) {\n"
		"  L = local f32[4]\n"
		"  fill(L, 1.5)\n"
		"  parallel (i) in (64) {\n"
		"    if i < N {\n"
		"      L[0] = f32(B[i]) * 2.0\n"
		"      A[i] = i8(A[i] * 3 + i8(i) // 2 - A[i] % 5)\n"
		"      B[i] = bf16(exp(f32(B[i])) + tanh(L[0]) + f32(s))\n"
		"      C[i] = sqrt(abs(C[i])) + f64(log2(f32(i) + 1.0))\n"
		"      D[i] = select(flag, max(D[i], u8(7)), min(D[i], u8(3)))\n"
		"      E[i] = E[i] * 3 - i64(ceildiv(i, 3))\n"
		"    }\n"
		"  }\n"
		"}\n";
	Module *m = parse(src, NULL, 0);
	for (int tgt = 0; tgt < 2; tgt++) {
		char *ptx = compile(m, tgt ? TA_TARGET_SM90A : TA_TARGET_SM80);
		char log[8192];
		cr_expect(ptxas(ptx, tgt ? "sm_90a" : "sm_80", log, sizeof log) == 0, "%s\n%s", log, ptx);
		free(ptx);
	}
	ir_module_free(m);
}

Test(ptx, grid_and_params)
{
	Module *m = parse_file("gemm.tile");
	Target t = {.id = TA_TARGET_SM80};
	StrBuf sb = {0};
	PtxKernelInfo *info = NULL;
	Diag d;
	diag_init(&d);
	cr_assert(ptx_compile(m, &t, &sb, &info, &d) == 0, "%s", diag_text(&d));
	cr_expect_str_eq(info[0].name, "gemm");
	cr_expect(info[0].threads == 128);
	cr_expect(info[0].smem_bytes == 2 * 128 * 32 * 2, "A_s + B_s (%lld)", (long long)info[0].smem_bytes);
	cr_expect(info[0].nparams == 6);
	cr_expect(info[0].params[0].kind == PK_TENSOR && info[0].params[3].kind == PK_SYMBOL);
	int64_t vals[6] = {0};
	for (int i = 0; i < info[0].nparams; i++) {
		const char *n = info[0].params[i].name;
		vals[info[0].params[i].arg] = !strcmp(n, "M") ? 200 : !strcmp(n, "N") ? 130 : !strcmp(n, "K") ? 70 : 0;
	}
	uint32_t grid[3];
	cr_assert(ir_grid(m, 0, vals, grid) == 0);
	cr_expect(grid[0] == 2 && grid[1] == 2 && grid[2] == 1, "grid %u %u %u", grid[0], grid[1], grid[2]);
	ptx_info_free(info, (int)m->kernels.len);
	sb_free(&sb);
	diag_free(&d);
	ir_module_free(m);
}

Test(cuda, no_driver_is_a_clear_error)
{
	CudaRt *rt = NULL;
	int rc = cuda_open(0, &rt);
	cr_assert(rt);
	if (rc) {
		/* CI has no GPU: the message must say what is missing */
		cr_expect(strstr(cuda_error(rt), "CUDA"), "%s", cuda_error(rt));
		cr_expect(strlen(cuda_error(rt)) > 20);
	} else {
		cr_expect(cuda_device_cc(rt) >= 50);
	}
	cuda_close(rt);
}

Test(cli, compile_writes_ptx)
{
	const char *exe = getenv("TILEASM"), *root = getenv("TILEASM_SRCDIR");
	cr_assert(exe && root);
	char cmd[8192], out[] = "/tmp/tileasm-cli-XXXXXX";
	int fd = mkstemp(out);
	cr_assert(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "%s compile %s/examples/softmax.tile --target=sm_90a -o %s", exe, root, out);
	cr_expect(system(cmd) == 0);
	size_t len;
	char *text = read_file(out, &len);
	cr_assert(text);
	cr_expect(strstr(text, ".visible .entry softmax("));
	free(text);
	unlink(out);
	snprintf(cmd, sizeof cmd, "%s compile %s/examples/softmax.tile --target=sm_80 --dump-isa | grep -q 'target sm_80'",
	         exe, root);
	cr_expect(system(cmd) == 0);
}

/* `compile --target=sm_90a` writes every entry the library builds in one
 * module: the generic ones, then each sm_90a fast entry (ta_kernel_info.fast,
 * a module of its own in the binary) with its launch comment; ptxas accepts
 * the file.  Two gemm kernels in one file: one sm90 .extern declaration.
 * --dump-isa prints the same text; for sm_80 the CLI writes exactly
 * ptx_compile's module. */
Test(cli, compile_writes_sm90_entries, .timeout = 120)
{
	char *dir = tmpdir(), *gemm = src_text("examples/gemm.tile"), cmd[8192], *p;
	char two_path[1024], out[1024], log[8192];
	const char *exe = env("TILEASM");
	/* the gemm kernel twice, the second renamed */
	StrBuf two = {0};
	sb_puts(&two, gemm);
	cr_assert((p = strstr(gemm, "kernel gemm(")));
	sb_printf(&two, "\nkernel gemm2(%s", p + strlen("kernel gemm("));
	snprintf(two_path, sizeof two_path, "%s/two.tile", dir);
	cr_assert(write_file_atomic(two_path, two.buf, two.len) == 0);
	snprintf(out, sizeof out, "%s/two.ptx", dir);
	snprintf(cmd, sizeof cmd, "%s compile %s --target=sm_90a -o %s", exe, two_path, out);
	cr_assert(system(cmd) == 0, "%s", cmd);
	size_t len;
	char *text = read_file(out, &len);
	cr_assert(text);
	for (int i = 0; i < 4; i++) {
		static const char *const entry[] = {"gemm(", "gemm2(", "gemm_sm90(", "gemm2_sm90("};
		char e[64];
		snprintf(e, sizeof e, ".visible .entry %s", entry[i]);
		cr_expect_eq(count(text, e), 1, "%s: %d times", e, count(text, e));
	}
	cr_expect_eq(count(text, ".version"), 1);
	cr_expect_eq(count(text, ".extern .shared .align 1024 .b8 ta_sm90_smem[];"), 1);
	/* the launch needs, and the K step / stages the entry changed from the IR (k step 32, 3 stages) */
	cr_expect_eq(count(text, "// launch: parameters = gemm's, then"), 1);
	cr_expect_eq(count(text, "//   _tmA: CUtensorMap of A (f16, rank 2, box 64x128"), 2);
	cr_expect_eq(count(text, "IR block 128x128, k step 32, 3 stages"), 2);
	cr_expect_eq(count(text, "emitted\n// with k step 64 and "), 2);
	cr_expect(strstr(text, "bytes of dynamic shared memory (raise the function's limit first)"));
	cr_expect(ptxas(text, "sm_90a", log, sizeof log) == 0, "ptxas -arch=sm_90a rejected the CLI's module:\n%s", log);
	/* --dump-isa prints what -o writes */
	char *dumped = NULL;
	snprintf(cmd, sizeof cmd, "%s compile %s --target=sm_90a --dump-isa", exe, two_path);
	cr_expect_eq(run_out(cmd, &dumped), 0);
	cr_expect(dumped && !strcmp(dumped, text), "--dump-isa differs from -o");
	free(dumped);
	free(text);
	/* sm_80: no fast entries, the CLI's file is the library's module */
	snprintf(cmd, sizeof cmd, "%s compile %s/examples/gemm.tile --target=sm_80 -o %s", exe, env("TILEASM_SRCDIR"), out);
	cr_assert(system(cmd) == 0);
	text = read_file(out, &len);
	Module *m = load_text("gemm.tile", gemm, NULL, 0);
	char *lib = compile(m, TA_TARGET_SM80);
	cr_expect(text && !strstr(text, "_sm90"));
	cr_expect(text && !strcmp(text, lib), "CLI sm_80 output differs from ptx_compile");
	free(lib);
	ir_module_free(m);
	free(text);
	sb_free(&two);
	free(gemm);
	rmdir_all(dir);
}

/* The attention loop of examples/mha_fwd.tile on NVIDIA (lower_async.c,
 * lower_mma_ldm.c): K/V prefetched one iteration ahead with cp.async (one
 * wait per tile, counting the other tile's group), every gemm operand by
 * ldmatrix from swizzled tiles, P·V's A from S_f's registers (P_s never
 * stored), and with the paths switched off (LowerOptions.nvidia_off) the
 * plain lowering.  Per D: ldmatrix count = gemm 1 (D/16 k steps x (1 A + 4
 * B)) + gemm 2 (4 k steps x D/16 B). */
static char *lower_file(const char *name, const Define *defs, int ndefs, ta_target id, unsigned nvidia_off)
{
	Module *m = parse_file_defs(name, defs, ndefs);
	Target t = {.id = id};
	LowerOptions o = {.nvidia_off = nvidia_off};
	SimtFunc f;
	Diag d;
	diag_init(&d);
	cr_assert(lower_kernel_opts(m, 0, &t, &o, &f, &d) == 0, "%s", diag_text(&d));
	diag_free(&d);
	StrBuf sb = {0};
	simt_print(&f, &sb);
	simt_free(&f);
	ir_module_free(m);
	return sb_take(&sb);
}

Test(lower, attention_loop_nvidia_paths)
{
	for (int D = 64; D <= 128; D += 64) {
		Define def = {"D", D};
		char *s = lower_file("mha_fwd.tile", &def, 1, TA_TARGET_SM80, 0);
		int ldm = D / 16 * 5 + 4 * (D / 16);
		cr_expect_eq(count(s, "ldmatrix"), ldm, "D=%d: %d ldmatrix", D, count(s, "ldmatrix"));
		cr_expect_eq(count(s, "cp.wait #1"), 2, "D=%d: waits for K and V", D);
		cr_expect_eq(count(s, "mma.m16n8k16"), 2 * (64 / 8) * (D / 16) / 2 + (D / 8) * 4, "D=%d", D);
		cr_expect_eq(count(s, "st.shared.f32"), 0, "D=%d: row statistics in registers", D);
		char *p = lower_file("mha_fwd.tile", &def, 1, TA_TARGET_SM80,
				     LOWER_NV_CP_ASYNC | LOWER_NV_PREFETCH | LOWER_NV_LDMATRIX | LOWER_NV_SWIZZLE);
		cr_expect_eq(count(p, "ldmatrix") + count(p, "cp.async"), 0, "D=%d", D);
		/* element stores: the unaligned-tensor fallbacks of the Q, K, V copies
		 * (K and V twice: before the loop and the prefetch), and in the plain
		 * lowering P_s's 64 x 64 halves, 32 per thread */
		cr_expect_eq(count(s, "st.shared.f16"), 5, "D=%d: P_s not stored", D);
		cr_expect_eq(count(p, "st.shared.f16"), 3 + 32, "D=%d: P_s stored", D);
		free(p);
		free(s);
		/* sm_90a (lower_wgmma.c): both gemms one SI_WGMMA each (S = Q K^T from
		 * two shared tiles, O += P V with A from S_f's registers), no ldmatrix,
		 * P_s never stored; K/V still prefetched with cp.async */
		char *h = lower_file("mha_fwd.tile", &def, 1, TA_TARGET_SM90A, 0);
		cr_expect_eq(count(h, "wgmma."), 2, "D=%d: %d wgmma", D, count(h, "wgmma."));
		cr_expect_eq(count(h, "ldmatrix") + count(h, "mma.m16n8k16"), 0, "D=%d: no mma.sync path", D);
		cr_expect_eq(count(h, "cp.wait #1"), 2, "D=%d: waits for K and V", D);
		cr_expect_eq(count(h, "st.shared.f16"), 5, "D=%d: P_s not stored", D);
		char *hl = lower_file("mha_fwd.tile", &def, 1, TA_TARGET_SM90A, LOWER_NV_WGMMA);
		cr_expect_eq(count(hl, "wgmma."), 0, "D=%d", D);
		cr_expect_eq(count(hl, "ldmatrix"), ldm, "D=%d: the sm_80 path with wgmma off", D);
		free(hl);
		free(h);
		char *a = lower_file("mha_fwd.tile", &def, 1, TA_TARGET_GFX942, 0);
		cr_expect_eq(count(a, "ldmatrix") + count(a, "cp.async") + count(a, "cp.wait"), 0, "D=%d: AMD", D);
		free(a);
	}
}

/* wgmma for blocks of G warpgroups (lower_wgmma.c): a 64 G-row accumulator
 * at 128 G threads, warpgroup g's A rows starting at byte 64 g * 128 of each
 * column block of Q_s, both for A from shared memory (S = Q K^T) and A
 * from registers (O += P V); the k step of a two-block A skips 64 G rows.
 * G = 5 is past wgmma's limit here and takes ldmatrix + mma.sync. */
Test(lower, wgmma_warpgroups, .timeout = 60)
{
	for (int G = 1; G <= 5; G++) {
		int M = 64 * G;
		char text[2048];
		snprintf(text, sizeof text,
			 "kernel k(Q: f16[S, 128], K: f16[S, 128], V: f16[S, 64], O: f32[S, 64]) grid(1) threads(%d) {\n"
			 "  Q_s = shared f16[%d, 128]\n  K_s = shared f16[64, 128]\n  V_s = shared f16[64, 64]\n"
			 "  P_s = shared f16[%d, 64]\n  S_f = fragment f32[%d, 64]\n  O_f = fragment f32[%d, 64]\n"
			 "  copy(Q[0, 0], Q_s)\n  clear(O_f)\n"
			 "  pipelined kb in 0 .. ceildiv(S, 64) stages(2) {\n"
			 "    copy(K[kb * 64, 0], K_s)\n    copy(V[kb * 64, 0], V_s)\n"
			 "    gemm(Q_s, K_s, S_f, transpose_b=true, clear=true)\n"
			 "    parallel (i, j) in (%d, 64) {\n      S_f[i, j] = exp(S_f[i, j])\n    }\n"
			 "    copy(S_f, P_s)\n    gemm(P_s, V_s, O_f)\n  }\n  copy(O_f, O[0, 0])\n}\n",
			 128 * G, M, M, M, M, M);
		char *s = simt(text, TA_TARGET_SM90A, NULL);
		int want = G <= 4 ? 2 : 0;
		cr_expect_eq(count(s, "wgmma."), want, "G=%d: %d wgmma", G, count(s, "wgmma."));
		cr_expect_eq(count(s, "mma.m16n8k16") > 0, G > 4, "G=%d: mma.sync only past 4 warpgroups", G);
		free(s);
		Module *m = parse(text, NULL, 0);
		char *ptx = compile(m, TA_TARGET_SM90A);
		char log[8192];
		cr_expect(ptxas(ptx, "sm_90a", log, sizeof log) == 0, "G=%d rejected by ptxas:\n%s", G, log);
		/* Q_s's second column block is 64 G rows further: k step 4 adds
		 * (64 G * 128 - 3 * 32) / 16 to the descriptor */
		char step[64];
		snprintf(step, sizeof step, "add.s64 %%wa, %%wa, %d;", (M * 128 - 3 * 32) / 16);
		cr_expect_eq(strstr(ptx, step) != NULL, G <= 4, "G=%d: %s", G, step);
		/* P V: A from S_f's registers (P_s never stored), 4 k steps */
		int areg = 0;
		for (const char *w = ptx; (w = strstr(w, "wgmma.mma_async")); w++) {
			const char *r = strstr(w, "}, {%r"), *e = strchr(w, '\n');
			areg += r && e && r < e;
		}
		cr_expect_eq(areg, G <= 4 ? 4 : 0, "G=%d: %d wgmma with A from registers", G, areg);
		free(ptx);
		ir_module_free(m);
	}
}

/* Whole-tile tests (lower_fold.c): attention's mask `k < S && (causal == 0
 * || k <= q)` is affine in the loop indices, so the masking loop gets its
 * fast copies behind a uniform test on sm_80 and sm_90a (not AMD yet); a condition
 * that is not affine (g * g) or reads an element gets none; one the box
 * decides at compile time (j < 64 over 0..63) is folded with no test. */
Test(lower, whole_tile_tests)
{
	static const ta_target tg[] = {TA_TARGET_SM80, TA_TARGET_SM90A, TA_TARGET_GFX942};
	for (size_t t = 0; t < TA_ARRAY_LEN(tg); t++) {
		bool nv = tg[t] != TA_TARGET_GFX942; /* AMD: not yet (lower_fold.c: SGPR pressure) */
		for (int D = 64; D <= 128; D += 64) {
			Define def = {"D", D};
			char *s = lower_file("mha_fwd.tile", &def, 1, tg[t], 0);
			cr_expect_eq(strstr(s, "; whole-tile tests: 1 parallel loops\n") != NULL, nv,
				     "mha_fwd D=%d target %d: fast copy %s expected", D, (int)tg[t], nv ? "" : "not");
			/* the mask's 32 slots per thread: selp in the general copy only */
			if (nv)
				cr_expect_eq(count(s, "selp.f32"), 32, "D=%d target %d: %d selp.f32", D, (int)tg[t],
					     count(s, "selp.f32"));
			free(s);
		}
	}
	const char *head = "kernel k(A: f32[N], B: f32[N]) grid(ceildiv(N, 256)) threads(128) {\n"
			   "  parallel (i) in (256) {\n    let g = bx * 256 + i\n";
	static const struct {
		const char *cond;
		int folded;
	} cases[] = {
		{"g < N", 1},
		{"g >= N - 7 || !(g != 3)", 1},
		{"g * g < N", 0},    /* not affine */
		{"A[g] > 0.0", 0},   /* reads an element */
		{"i % 2 == 0", 0},   /* not affine */
		{"i < 256", 1},      /* true over the whole box: no test */
	};
	for (size_t i = 0; i < TA_ARRAY_LEN(cases); i++) {
		char text[512];
		snprintf(text, sizeof text, "%s    if %s {\n      B[g] = A[g] * 2.0\n    }\n  }\n}\n", head, cases[i].cond);
		char *s = simt(text, TA_TARGET_SM80, NULL);
		cr_expect_eq(strstr(s, "; whole-tile tests: 1 parallel loops\n") != NULL, cases[i].folded, "%s:\n%s",
			     cases[i].cond, s);
		if (i + 1 == TA_ARRAY_LEN(cases))
			cr_expect_eq(count(s, "setp"), 1, "decided at compile time: only the loop's bound test\n%s", s);
		free(s);
	}
}
