/* test_mma.c — AMD matrix cores for gemm: gfx90a/gfx942 select
 * v_mfma_f32_16x16x16, gfx1100 v_wmma_f32_16x16x16 (no emulated MMA left),
 * llvm-objdump-19 decodes them, gemm shapes outside the examples (several
 * strips, NB = 2, a wave count the tile columns do not divide, the
 * shared-memory accumulator path) match the interpreter on the emulator,
 * and the hazard pass places the MFMA/WMMA wait states of amd-isa.md §9. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "amd.h"
#include "mir.h"
#include "testutil.h"

static char *dump_isa(const char *example, const char *target)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s' compile '%s/examples/%s.tile' --target=%s --dump-isa 2>&1", env("TILEASM"),
		 env("TILEASM_SRCDIR"), example, target);
	int st;
	char *out = run_cmd(cmd, &st);
	cr_assert(st == 0, "%s:\n%s", cmd, out);
	return out;
}

/* Instruction count from the first line of --dump-isa. */
static long ninsns(const char *isa)
{
	const char *p = strstr(isa, " instructions");
	cr_assert(p, "no instruction count in:\n%.300s", isa);
	while (p > isa && (p[-1] >= '0' && p[-1] <= '9'))
		p--;
	return strtol(p, NULL, 10);
}

Test(amd_mma, examples_use_matrix_cores)
{
	static const char *const ex[] = {"gemm", "gemm_bf16_tn", "mha_fwd"};
	static const char *const tg[] = {"gfx90a", "gfx942", "gfx1100"};
	/* gemm instructions before matrix cores: 12.4k; a k-step is now a
	 * few hundred, the rest is the bounds-checked epilogue (the k loops are
	 * unrolled: mha_fwd at D = 64 on gfx1100 is ~3.5k) */
	for (size_t e = 0; e < 3; e++)
		for (size_t t = 0; t < 3; t++) {
			char *isa = dump_isa(ex[e], tg[t]);
			const char *mnem = t == 2 ? "v_wmma_f32_16x16x16_" : "v_mfma_f32_16x16x16";
			cr_assert(count(isa, mnem) >= 4, "%s %s: no %s:\n%.400s", ex[e], tg[t], mnem, isa);
			if (e < 2) /* attention's row reductions shuffle */
				cr_assert(count(isa, "ds_bpermute") == 0, "%s %s still emulates the MMA", ex[e], tg[t]);
			cr_assert(ninsns(isa) < 4000, "%s %s: %ld instructions", ex[e], tg[t], ninsns(isa));
			cr_assert(count(isa, "scratch 0 bytes") == 1, "%s %s spills", ex[e], tg[t]);
			free(isa);
		}
}

/* llvm-objdump-19 decodes every MFMA/WMMA of the code object with the
 * same mnemonic count as our listing. */
Test(amd_mma, objdump_decodes_matrix_instructions)
{
	cr_assert(access("/usr/bin/llvm-objdump-19", X_OK) == 0,
		  "oracle /usr/bin/llvm-objdump-19 is missing: install LLVM 19");
	static const char *const tg[] = {"gfx90a", "gfx942", "gfx1100"};
	for (int t = 0; t < 3; t++) {
		char obj[] = "/tmp/tileasm-mma-XXXXXX";
		int fd = mkstemp(obj);
		cr_assert(fd >= 0);
		close(fd);
		char cmd[1024];
		int st;
		snprintf(cmd, sizeof cmd, "'%s' compile '%s/examples/gemm.tile' --target=%s -o '%s' 2>&1", env("TILEASM"),
			 env("TILEASM_SRCDIR"), tg[t], obj);
		char *log = run_cmd(cmd, &st);
		cr_assert(st == 0, "%s", log);
		free(log);
		snprintf(cmd, sizeof cmd, "/usr/bin/llvm-objdump-19 -d --mcpu=%s '%s' 2>&1", tg[t], obj);
		char *dis = run_cmd(cmd, &st);
		remove(obj);
		cr_assert(st == 0, "%s", dis);
		char *isa = dump_isa("gemm", tg[t]);
		const char *mnem = t == 2 ? "v_wmma_f32_16x16x16_f16" : "v_mfma_f32_16x16x16";
		cr_assert(count(dis, "<unknown>") == 0, "%s: undecodable words", tg[t]);
		cr_assert(count(dis, mnem) > 0 && count(dis, mnem) == count(isa, mnem), "%s: objdump %d vs ours %d", tg[t],
			  count(dis, mnem), count(isa, mnem));
		free(dis);
		free(isa);
	}
}

/* A TN gemm whose tiles do not fill the examples' pattern: 256 threads on
 * a 64 x 96 fragment.  gfx9 (4 waves, 12 tiles of 16 x 32): 3 strips with
 * NB = 2 and per-strip B fragments (4 waves, 3 tile columns); gfx1100 (8
 * waves): 12 tiles do not split evenly, so C_f stays in shared memory and
 * the tile-loop path runs.  K = 80 is five k-steps of 16, ragged M/N. */
static const char g2_src[] =
	"kernel g2(A: f16[M, K], B: f16[N, K], C: f32[M, N])\n"
	"    grid(ceildiv(N, 96), ceildiv(M, 64)) threads(256) {\n"
	"  A_s = shared f16[64, 16]\n"
	"  B_s = shared f16[96, 16]\n"
	"  C_f = fragment f32[64, 96]\n"
	"  clear(C_f)\n"
	"  serial ko in 0 .. ceildiv(K, 16) {\n"
	"    copy(A[by * 64, ko * 16], A_s)\n"
	"    copy(B[bx * 96, ko * 16], B_s)\n"
	"    gemm(A_s, B_s, C_f, transpose_b=true)\n"
	"  }\n"
	"  copy(C_f, C[by * 64, bx * 96])\n"
	"}\n";

Test(amd_mma, emulator_odd_tilings)
{
	char src[] = "/tmp/tileasm-mma-XXXXXX.tile";
	int fd = mkstemps(src, 5);
	cr_assert(fd >= 0);
	cr_assert(write(fd, g2_src, sizeof g2_src - 1) == (ssize_t)(sizeof g2_src - 1));
	close(fd);
	static const char *const tg[] = {"gfx90a", "gfx942", "gfx1100"};
	static const char *const shapes[] = {"-D M=64 -D N=96 -D K=80", "-D M=70 -D N=100 -D K=40"};
	for (int t = 0; t < 3; t++)
		for (int s = 0; s < 2; s++) {
			char cmd[1024];
			int st;
			snprintf(cmd, sizeof cmd, "'%s' run '%s' --backend=emu --target=%s %s 2>&1", env("TILEASM"), src, tg[t],
				 shapes[s]);
			char *out = run_cmd(cmd, &st);
			cr_assert(st == 0 && strstr(out, "\nPASS") && strstr(out, "emu: "), "%s:\n%s", cmd, out);
			cr_assert(strstr(out, " MFMA/WMMA)") && !strstr(out, ", 0 MFMA/WMMA"), "%s: no matrix instructions:\n%s",
				  cmd, out);
			free(out);
		}
	remove(src);
}

/* ---- hazard snippets ------------------------------------------------------ */

static MInst *phys(MFunc *f, unsigned op, int ndef, int nops, const IsaOperand *o)
{
	MInst *mi = mir_emit(f, op, ndef);
	for (int i = 0; i < nops; i++)
		mi_phys(mi, i, o[i]);
	return mi;
}

static void mfma(MFunc *f, int d, int a, int b, int c)
{
	IsaOperand o[4] = {isa_vgpr(d, 4), isa_vgpr(a, 2), isa_vgpr(b, 2), isa_vgpr(c, 4)};
	phys(f, ISA_V_MFMA_F32_16X16X16_F16, 1, 4, o);
}

static void vadd(MFunc *f, int d, int a, int b)
{
	IsaOperand o[3] = {isa_vgpr(d, 1), isa_vgpr(a, 1), isa_vgpr(b, 1)};
	phys(f, ISA_V_ADD_F32, 1, 3, o);
}

/* Wait states inserted (sum of s_nop k + 1) before instruction `nth` of
 * the original code, after running the hazard pass. */
static int nops_before(const MFunc *f, int nth)
{
	int seen = 0, ws = 0;
	for (size_t i = 0; i < f->insns.len; i++) {
		const IsaInsn *in = &f->insns.data[i].in;
		if (in->op == ISA_S_NOP) {
			ws += (int)in->ops[0].imm + 1;
			continue;
		}
		if (seen++ == nth)
			return ws;
		ws = 0;
	}
	cr_assert_fail("instruction %d not found", nth);
	return -1;
}

static void hazard(MFunc *f)
{
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_hazard(f, &d), 0);
	diag_free(&d);
}

Test(amd_mma, hazard_mfma_result_and_operands)
{
	static const ta_target ts[2] = {TA_TARGET_GFX90A, TA_TARGET_GFX942};
	static const int raw[2] = {11, 7}; /* 16x16x16 f16: 8 / 4 passes, + 3 */
	for (int k = 0; k < 2; k++) {
		MFunc f;
		mir_init(&f, ts[k]);
		mir_block(&f);
		vadd(&f, 4, 20, 21);    /* 0: VALU writes A */
		mfma(&f, 0, 4, 6, 0);   /* 1: reads it: 2 wait states */
		mfma(&f, 0, 4, 6, 0);   /* 2: same C/D chain: none */
		mfma(&f, 8, 0, 6, 8);   /* 3: A overlaps 2's D */
		vadd(&f, 12, 9, 9);     /* 4: reads 3's D */
		vadd(&f, 13, 20, 20);   /* 5: unrelated: none */
		mfma(&f, 16, 4, 6, 16); /* 6: new chain */
		mfma(&f, 20, 4, 6, 18); /* 7: C overlaps 6's D, not identical */
		hazard(&f);
		cr_assert_eq(nops_before(&f, 1), 2, "target %d", k);
		cr_assert_eq(nops_before(&f, 2), 0, "target %d", k);
		cr_assert_eq(nops_before(&f, 3), raw[k], "target %d", k);
		cr_assert_eq(nops_before(&f, 4), raw[k], "target %d", k);
		cr_assert_eq(nops_before(&f, 5), 0, "target %d", k);
		cr_assert_eq(nops_before(&f, 6), 0, "target %d", k);
		/* SrcC overlap: gfx90a N = 8, gfx942 XDL N + 1 = 5 */
		cr_assert_eq(nops_before(&f, 7), k ? 5 : 8, "target %d", k);
		mir_free(&f);
	}
}

/* An accumulation loop whose result is read at the loop head through the
 * back edge: the wait states cross the branch. */
Test(amd_mma, hazard_crosses_back_edge)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX90A);
	int b0 = mir_block(&f);
	vadd(&f, 12, 0, 0); /* reads the MFMA D of the previous iteration */
	int b1 = mir_block(&f);
	mfma(&f, 0, 4, 6, 0);
	mir_block(&f);
	f.blocks.data[b0].succ[0] = b1;
	f.blocks.data[b1].succ[0] = b0; /* back edge */
	f.blocks.data[b1].succ[1] = 2;
	hazard(&f);
	cr_assert_eq(nops_before(&f, 0), 11);
	mir_free(&f);
}

Test(amd_mma, hazard_wmma_needs_valu_between)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX1100);
	mir_block(&f);
	IsaOperand w1[4] = {isa_vgpr(0, 8), isa_vgpr(8, 8), isa_vgpr(16, 8), isa_vgpr(0, 8)};
	phys(&f, ISA_V_WMMA_F32_16X16X16_F16, 1, 4, w1);
	IsaOperand w2[4] = {isa_vgpr(24, 8), isa_vgpr(8, 8), isa_vgpr(16, 8), isa_vgpr(24, 8)};
	phys(&f, ISA_V_WMMA_F32_16X16X16_F16, 1, 4, w2); /* independent: no v_nop */
	IsaOperand w3[4] = {isa_vgpr(32, 8), isa_vgpr(24, 8), isa_vgpr(16, 8), isa_vgpr(32, 8)};
	phys(&f, ISA_V_WMMA_F32_16X16X16_F16, 1, 4, w3); /* A = previous D */
	hazard(&f);
	cr_assert_eq(f.insns.len, 4);
	cr_assert_eq(f.insns.data[2].in.op, ISA_V_NOP);
	cr_assert_eq(f.insns.data[3].in.ops[1].reg, 24);
	mir_free(&f);
}

/* i8 gemm (i32 accumulator in shared memory, B untransposed: bytes packed
 * four to a register): v_mfma_i32_16x16x16i8 on gfx90a, 16x16x32_i8 on
 * gfx942 (K = 32 per instruction), v_wmma_i32_16x16x16_iu8 neg_lo:[1,1,0]
 * on gfx1100; exact on the emulator; objdump decodes it; the listing
 * reassembles to the same code object. */
static const char i8_src[] =
	"kernel gemm_i8(A: i8[M, K], B: i8[K, N], C: i32[M, N])\n"
	"    grid(ceildiv(N, 64), ceildiv(M, 64)) threads(128) {\n"
	"  A_s = shared i8[64, 32]\n"
	"  B_s = shared i8[32, 64]\n"
	"  C_f = fragment i32[64, 64]\n"
	"  clear(C_f)\n"
	"  serial ko in 0 .. ceildiv(K, 32) {\n"
	"    copy(A[by * 64, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 64], B_s)\n"
	"    gemm(A_s, B_s, C_f)\n"
	"  }\n"
	"  copy(C_f, C[by * 64, bx * 64])\n"
	"}\n";

Test(amd_mma, i8_gemm)
{
	cr_assert(access("/usr/bin/llvm-objdump-19", X_OK) == 0,
		  "oracle /usr/bin/llvm-objdump-19 is missing: install LLVM 19");
	char src[] = "/tmp/tileasm-mma8-XXXXXX.tile";
	int fd = mkstemps(src, 5);
	cr_assert(fd >= 0);
	cr_assert(write(fd, i8_src, sizeof i8_src - 1) == (ssize_t)(sizeof i8_src - 1));
	close(fd);
	static const char *const tg[] = {"gfx90a", "gfx942", "gfx1100"};
	static const char *const mnem[] = {"v_mfma_i32_16x16x16i8", "v_mfma_i32_16x16x32_i8",
					   "v_wmma_i32_16x16x16_iu8"};
	static const char *const shapes[] = {"-D M=64 -D N=128 -D K=96", "-D M=70 -D N=100 -D K=40"};
	for (int t = 0; t < 3; t++) {
		char cmd[2048], a[64], b[64], s[64];
		int st;
		snprintf(a, sizeof a, "%s.%s.a.hsaco", src, tg[t]);
		snprintf(b, sizeof b, "%s.%s.b.hsaco", src, tg[t]);
		snprintf(s, sizeof s, "%s.%s.s", src, tg[t]);
		snprintf(cmd, sizeof cmd,
			 "'%s' compile '%s' --target=%s -o '%s' && '%s' compile '%s' --target=%s --dump-isa >'%s' && "
			 "'%s' asm '%s' --target=%s -o '%s' && cmp '%s' '%s' && /usr/bin/llvm-objdump-19 -d --mcpu=%s '%s' 2>&1",
			 env("TILEASM"), src, tg[t], a, env("TILEASM"), src, tg[t], s, env("TILEASM"), s, tg[t], b, a, b, tg[t],
			 a);
		char *dis = run_cmd(cmd, &st);
		remove(a), remove(b), remove(s);
		cr_assert(st == 0, "%s:\n%s", cmd, dis);
		cr_assert(count(dis, mnem[t]) > 0 && count(dis, "<unknown>") == 0, "%s:\n%s", tg[t], dis);
		if (t == 2)
			cr_assert(count(dis, "neg_lo:[1,1,0]") > 0, "signed iu8 WMMA expected:\n%s", dis);
		free(dis);
		for (int k = 0; k < 2; k++) {
			snprintf(cmd, sizeof cmd, "'%s' run '%s' --backend=emu --target=%s %s 2>&1", env("TILEASM"), src, tg[t],
				 shapes[k]);
			char *out = run_cmd(cmd, &st);
			cr_assert(st == 0 && strstr(out, "\nPASS") && strstr(out, "max abs err 0 "), "%s:\n%s", cmd, out);
			free(out);
		}
	}
	remove(src);
}

/* transpose_a (A fragments packed from 16-bit loads) with bf16, and an i8
 * TN gemm (contiguous byte fragments: ds_read_b32/b64/b128) on 256 threads. */
static const char ta_src[] =
	"kernel gta(A: bf16[K, M], B: bf16[K, N], C: f32[M, N])\n"
	"    grid(ceildiv(N, 64), ceildiv(M, 32)) threads(128) {\n"
	"  A_s = shared bf16[32, 32]\n"
	"  B_s = shared bf16[32, 64]\n"
	"  C_f = fragment f32[32, 64]\n"
	"  clear(C_f)\n"
	"  serial ko in 0 .. ceildiv(K, 32) {\n"
	"    copy(A[ko * 32, by * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 64], B_s)\n"
	"    gemm(A_s, B_s, C_f, transpose_a=true)\n"
	"  }\n"
	"  copy(C_f, C[by * 32, bx * 64])\n"
	"}\n";
static const char i8tn_src[] =
	"kernel gi8t(A: i8[M, K], B: i8[N, K], C: i32[M, N])\n"
	"    grid(ceildiv(N, 64), ceildiv(M, 64)) threads(256) {\n"
	"  A_s = shared i8[64, 64]\n"
	"  B_s = shared i8[64, 64]\n"
	"  C_f = fragment i32[64, 64]\n"
	"  clear(C_f)\n"
	"  serial ko in 0 .. ceildiv(K, 64) {\n"
	"    copy(A[by * 64, ko * 64], A_s)\n"
	"    copy(B[bx * 64, ko * 64], B_s)\n"
	"    gemm(A_s, B_s, C_f, transpose_b=true)\n"
	"  }\n"
	"  copy(C_f, C[by * 64, bx * 64])\n"
	"}\n";

Test(amd_mma, emulator_transpose_a_and_i8_tn)
{
	const char *const srcs[] = {ta_src, i8tn_src};
	static const char *const tg[] = {"gfx90a", "gfx942", "gfx1100"};
	for (int k = 0; k < 2; k++) {
		char src[] = "/tmp/tileasm-mmat-XXXXXX.tile";
		int fd = mkstemps(src, 5);
		cr_assert(fd >= 0);
		size_t n = strlen(srcs[k]);
		cr_assert(write(fd, srcs[k], n) == (ssize_t)n);
		close(fd);
		for (int t = 0; t < 3; t++) {
			char cmd[1024];
			int st;
			snprintf(cmd, sizeof cmd, "'%s' run '%s' --backend=emu --target=%s -D M=80 -D N=100 -D K=96 2>&1",
				 env("TILEASM"), src, tg[t]);
			char *out = run_cmd(cmd, &st);
			cr_assert(st == 0 && strstr(out, "\nPASS") && !strstr(out, ", 0 MFMA/WMMA"), "%s:\n%s", cmd, out);
			free(out);
		}
		remove(src);
	}
}
