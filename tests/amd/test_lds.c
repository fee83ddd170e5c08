/* test_lds.c — the LDS -> MFMA/WMMA side of the AMD gemm (lower_mma.c
 * amd_kblocks, lower_swizzle.c): XOR-swizzled operand tiles without bank
 * conflicts, b128 operand reads, the transposed operand read as u16 +
 * u16_d16_hi without packing, the k loop unrolled, dwordx2 epilogue
 * stores from the swapped MFMA accumulator layout; checked on the
 * emulator against the interpreter for gfx90a, gfx942 and gfx1100. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static const char *const targets[] = {"gfx90a", "gfx942", "gfx1100"};

static char *tileasm(const char *args, int *st)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", env("TILEASM"), args);
	return run_cmd(cmd, st);
}

/* "LDS bank cycles X, of which conflicts Y" of loop 0 (the K-loop) of a
 * --profile output: Y. */
static double k_loop_conflicts(const char *out)
{
	const char *l = strstr(out, "  loop 0 ");
	cr_assert(l, "no loop 0 in:\n%s", out);
	const char *w = strstr(l, "of which conflicts ");
	cr_assert(w, "no bank cycles in:\n%s", out);
	return atof(w + strlen("of which conflicts "));
}

Test(amd_lds, gemm_operand_reads)
{
	static const char *const ex[] = {"gemm", "gemm_bf16_tn"};
	for (int t = 0; t < 3; t++)
		for (int e = 0; e < 2; e++) {
			char args[1024];
			int st;
			bool g11 = !strcmp(targets[t], "gfx1100");
			snprintf(args, sizeof args, "run '%s/examples/%s.tile' --backend=emu --target=%s -D M=128 -D N=128 -D K=64 --profile",
				 env("TILEASM_SRCDIR"), ex[e], targets[t]);
			char *out = tileasm(args, &st);
			cr_assert(st == 0 && strstr(out, "\nPASS"), "%s:\n%s", args, out);
			cr_expect(k_loop_conflicts(out) == 0, "%s %s: bank conflicts in the K-loop:\n%s", ex[e], targets[t], out);
			free(out);
			snprintf(args, sizeof args, "compile '%s/examples/%s.tile' --target=%s --dump-isa -o /dev/null",
				 env("TILEASM_SRCDIR"), ex[e], targets[t]);
			out = tileasm(args, &st);
			cr_assert(st == 0, "%s:\n%s", args, out);
			/* 128x128x32 per block: gfx9 2 waves x 4 strips x 8 column groups x 2 k-steps
			 * (all in one K-iteration: the k loop is unrolled), gfx11 4 waves x 2 x 8 x 2;
			 * twice: the pipelined loop's staged and plain (misaligned) versions */
			cr_expect_eq(count(out, g11 ? "v_wmma_f32_16x16x16" : "v_mfma_f32_16x16x16"), g11 ? 64 : 128, "%s %s",
				     ex[e], targets[t]);
			cr_expect(count(out, g11 ? "ds_load_b128" : "ds_read_b128") > 0, "%s %s: no b128 operand reads", ex[e],
				  targets[t]);
			/* the listing says how deep the pipelined loop runs (stages(3) asked) */
			cr_expect(strstr(out, ": pipelined loop, stages(3): 2 deep for aligned tensors (the copies' loads one "
					     "trip ahead in 32 VGPRs per lane"),
				  "%s %s: no pipelining note in:\n%.400s", ex[e], targets[t], out);
			/* gfx9: the accumulator takes the swapped layout (C^T = B^T A^T), so
			 * the f16 epilogue stores 4 columns per lane and column group:
			 * 128x128 over 128 lanes = 32 dwordx2 per lane (plus the per-element
			 * path for ragged rows) */
			if (!g11)
				cr_expect_eq(count(out, "global_store_dwordx2"), 32, "%s %s", ex[e], targets[t]);
			if (!strcmp(ex[e], "gemm")) { /* B[k][n]: column reads, merged in the high halves */
				cr_expect(count(out, g11 ? "ds_load_u16_d16_hi" : "ds_read_u16_d16_hi") > 0, "%s", targets[t]);
				cr_expect_eq(count(out, "v_lshl_or_b32"), 0, "%s: B packed with VALU", targets[t]);
				cr_expect_eq(count(out, "v_perm_b32"), 0, "%s: B packed with VALU", targets[t]);
			}
			free(out);
		}
}

/* Operand tiles that are also read outside the gemm (copied to a register
 * fragment, read element-wise) get one layout for every access: the
 * results agree with the interpreter (aligned and ragged). */
static const char mixed_src[] =
	"kernel mixed(A: f16[M, K], B: f16[K, N], C: f32[M, N], D: f32[M, K], E: f32[K, N])\n"
	"    grid(ceildiv(N, 64), ceildiv(M, 64)) threads(256) {\n"
	"  A_s = shared f16[64, 32]\n"
	"  B_s = shared f16[32, 64]\n"
	"  C_f = fragment f32[64, 64]\n"
	"  X_f = fragment f32[64, 32]\n"
	"  clear(C_f)\n"
	"  serial ko in 0 .. ceildiv(K, 32) {\n"
	"    copy(A[by * 64, ko * 32], A_s)\n"
	"    copy(B[ko * 32, bx * 64], B_s)\n"
	"    gemm(A_s, B_s, C_f)\n"
	"    copy(A_s, X_f)\n"
	"    copy(X_f, D[by * 64, ko * 32])\n"
	"    if by == 0 {\n"
	"      parallel (k, j) in (32, 64) {\n"
	"        if ko * 32 + k < K {\n"
	"          if bx * 64 + j < N {\n"
	"            E[ko * 32 + k, bx * 64 + j] = f32(B_s[k, j])\n"
	"          }\n"
	"        }\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"  copy(C_f, C[by * 64, bx * 64])\n"
	"}\n";

Test(amd_lds, mixed_uses_keep_layout_consistent)
{
	char src[] = "/tmp/tileasm-lds-XXXXXX.tile";
	int fd = mkstemps(src, 5);
	cr_assert(fd >= 0);
	cr_assert(write(fd, mixed_src, sizeof mixed_src - 1) == (ssize_t)(sizeof mixed_src - 1));
	close(fd);
	static const char *const shapes[] = {"-D M=128 -D N=128 -D K=64", "-D M=70 -D N=100 -D K=40"};
	for (int t = 0; t < 3; t++)
		for (int s = 0; s < 2; s++) {
			char args[1024];
			int st;
			snprintf(args, sizeof args, "run '%s' --backend=emu --target=%s %s", src, targets[t], shapes[s]);
			char *out = tileasm(args, &st);
			cr_assert(st == 0 && strstr(out, "\nPASS"), "%s:\n%s", args, out);
			free(out);
		}
	remove(src);
}
