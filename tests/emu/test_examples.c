/* test_examples.c — every example kernel, compiled by the AMD backend and run
 * in the emulator through `tileasm run --backend=emu`, on gfx90a, gfx942 and
 * gfx1100 at an aligned and a ragged shape; `tileasm run` compares every
 * written tensor with the interpreter and prints PASS. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *const targets[] = {"gfx90a", "gfx942", "gfx1100"};

/* Runs `tileasm run` and asserts it passed; returns nothing on success. */
static void run_example(const char *example, const char *target, const char *defs)
{
	const char *exe = getenv("TILEASM"), *src = getenv("TILEASM_SRCDIR");
	cr_assert(exe && src, "TILEASM and TILEASM_SRCDIR must be set (meson test does)");
	char out[] = "/tmp/tileasm-emu-ex-XXXXXX";
	int fd = mkstemp(out);
	cr_assert(fd >= 0);
	close(fd);
	char cmd[1024];
	/* a name without '/' is an example; a path is relative to the source root */
	snprintf(cmd, sizeof cmd, "%s run %s/%s%s.tile --backend=emu --target=%s %s >%s 2>&1", exe, src,
		 strchr(example, '/') ? "" : "examples/", example, target, defs, out);
	int rc = system(cmd);
	size_t n = 0;
	char *text = read_file(out, &n);
	remove(out);
	cr_assert(text, "no output from: %s", cmd);
	int pass = rc == 0 && strstr(text, "\nPASS") != NULL;
	cr_assert(pass, "%s %s %s: failed (exit %d):\n%s", example, target, defs, rc, text);
	cr_assert(strstr(text, "emu: ") != NULL, "%s %s: the emulator did not run:\n%s", example, target, text);
	free(text);
}

static void each_target(const char *example, const char *defs)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(targets); i++)
		run_example(example, targets[i], defs);
}

Test(emu_examples, vector_add) { each_target("vector_add", "-D N=2048"); each_target("vector_add", "-D N=3001"); }
Test(emu_examples, reduce_sum) { each_target("reduce_sum", "-D M=16 -D N=256"); each_target("reduce_sum", "-D M=21 -D N=301"); }
Test(emu_examples, softmax) { each_target("softmax", "-D M=8 -D N=256"); each_target("softmax", "-D M=11 -D N=203"); }
Test(emu_examples, layernorm) { each_target("layernorm", "-D M=8 -D N=256"); each_target("layernorm", "-D M=9 -D N=201"); }
Test(emu_examples, rmsnorm) { each_target("rmsnorm", "-D M=8 -D N=256"); each_target("rmsnorm", "-D M=7 -D N=199"); }
Test(emu_examples, gemm) { each_target("gemm", "-D M=128 -D N=128 -D K=32"); each_target("gemm", "-D M=130 -D N=77 -D K=40"); }
Test(emu_examples, gemm_bf16_tn)
{
	each_target("gemm_bf16_tn", "-D M=128 -D N=128 -D K=32");
	each_target("gemm_bf16_tn", "-D M=67 -D N=130 -D K=24");
}
/* Matrix cores (MFMA on gfx9, WMMA on gfx1100): several k-steps and
 * pipeline stages, two blocks per dimension, ragged M/N/K, TN bf16. */
Test(emu_examples, gemm_matrix_cores)
{
	each_target("gemm", "-D M=128 -D N=256 -D K=96");
	each_target("gemm", "-D M=200 -D N=144 -D K=72");
	each_target("gemm_bf16_tn", "-D M=100 -D N=130 -D K=96");
	each_target("mha_fwd", "-D B=1 -D H=1 -D S=192");
}
/* int4 weights: packed i4 -> i8 tile copies, dequantisation, matrix cores. */
Test(emu_examples, gemm_int4)
{
	each_target("gemm_int4", "-D M=128 -D N=128 -D K=64");
	each_target("gemm_int4", "-D M=67 -D N=130 -D K=72");
}
/* GQA decode: a 16-row query tile of one kv head's group, middle-index region copies of the KV cache. */
Test(emu_examples, gqa_decode)
{
	each_target("gqa_decode", "--arg B=2 --arg HKV=2 --arg S=100 --arg scale=0.088");
	each_target("gqa_decode", "-D D=64 -D G=4 --arg B=1 --arg HKV=3 --arg S=64 --arg scale=0.125");
}
/* GQA decode with the KV split: short and empty splits (S = 300: split 3 is empty), then the combine. */
Test(emu_examples, gqa_decode_split)
{
	each_target("gqa_decode_split", "--kernel gqa_decode_split --arg B=2 --arg HKV=2 --arg S=300 --arg scale=0.088");
	each_target("gqa_decode_split", "--kernel gqa_decode_split -D D=64 -D G=4 --arg B=1 --arg HKV=3 --arg S=65 --arg scale=0.125");
	/* NS=3 at S=65: the third split is empty, its waves' exec goes empty before the key loop, and the
	 * exec-empty jump used to land on the loop head, whose code read an SGPR mask set in the skipped
	 * preheader ("s_not_b64 s[26:27], s[6:7]: reads s6, which nothing has written", gfx942). */
	each_target("gqa_decode_split", "--kernel gqa_decode_split -D NS=3 --arg B=1 --arg HKV=3 --arg S=65 --arg scale=0.088");
	each_target("gqa_decode_split", "--kernel gqa_combine --arg B=2 --arg HKV=3");
}
/* Thread-level code: 2-D blocks, locals and vars in registers, shuffles. */
Test(emu_examples, gemv)
{
	each_target("gemv", "--kernel gemv --arg N=77 --arg K=600");
	each_target("gemv", "--kernel gemv -D N=64 -D K=512");
	each_target("gemv", "--kernel gemv_splitk --arg N=130 --arg K=33");
	each_target("gemv", "--kernel gemv_splitk -D N=64 -D K=256");
}
/* Multi-head attention [B, H, S, D]: rank-reducing copies, two accumulator
 * shapes (S 64x64, O 64x128) sharing the row statistics at D = 128; one
 * head (B = H = 1) with the shape fixed at compile time, as the single-head
 * example it replaced was run. */
Test(emu_examples, mha_fwd)
{
	each_target("mha_fwd", "-D B=1 -D H=1 -D S=64");
	each_target("mha_fwd", "-D B=1 -D H=1 -D S=100");
	each_target("mha_fwd", "-D D=128 -D B=1 -D H=1 -D S=100 --arg causal=0");
	each_target("mha_fwd", "-D D=64 --arg B=2 --arg H=2 --arg S=64 --arg causal=0 --arg scale=0.125");
	each_target("mha_fwd", "-D D=64 --arg B=1 --arg H=3 --arg S=100 --arg causal=1 --arg scale=0.125");
	each_target("mha_fwd", "-D D=128 --arg B=2 --arg H=1 --arg S=77 --arg causal=1 --arg scale=0.125");
	each_target("mha_fwd", "-D D=128 --arg B=1 --arg H=2 --arg S=128 --arg causal=0 --arg scale=0.125");
}

/* Regression kernels (tests/emu/regress/): each from a report, run on every
 * AMD target against the interpreter. */
Test(emu_regress, accumulator_shapes)
{
	/* a row statistic of a 64x64 (16x16) accumulator used over a 64x128 (16x256) one (SIGFPE before) */
	each_target("tests/emu/regress/rowfrag_two_shapes", "");
	each_target("tests/emu/regress/rowfrag_wide_acc", "");
	/* reduce from a register accumulator into a row fragment that is copied out */
	each_target("tests/emu/regress/reduce_acc_rows_out", "");
}

Test(emu_regress, rank_reducing_copies)
{
	each_target("tests/emu/regress/copy_rank_reducing", "--arg B=2 --arg H=3 --arg S=70");
	each_target("tests/emu/regress/copy_rank_reducing", "--arg B=1 --arg H=2 --arg S=128");
}

/* pow(-0, odd) keeps the sign (tests/emu/regress/pow_neg_zero.tile, a fuzz_diff find) */
Test(emu_regress, pow_of_negative_zero) { each_target("tests/emu/regress/pow_neg_zero", ""); }

/* Native atomics: add/max/min, element and tile forms, global and shared
 * (tests/emu/regress/atomics.tile; ptxas checks it in tests/ptx). */
Test(emu_regress, atomics)
{
	each_target("tests/emu/regress/atomics", "--arg N=300");
	each_target("tests/emu/regress/atomics", "--arg N=64");
}

/* Compare-and-swap atomics (tests/emu/regress/atomics_cas_shared.tile):
 * f16/bf16/fp8/i8/u8/i16/f64 add and f16/bf16/f64/i64 max/min into shared
 * tiles (ds_cmpst_rtn / ds_cmpstore_rtn loops), f64 max/min into global
 * tensors (cmpswap_x2 loops); eight lanes of a wave per element, so the
 * loops retry. */
Test(emu_regress, atomics_cas_shared)
{
	each_target("tests/emu/regress/atomics_cas_shared", "--arg N=300");
	each_target("tests/emu/regress/atomics_cas_shared", "--arg N=77 --seed 5");
}
