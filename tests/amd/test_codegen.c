/* test_codegen.c — the AMD backend end to end: every example compiles for
 * gfx1100/gfx90a/gfx942, LLVM's tools accept the code objects (every byte
 * decodes, the notes parse, the descriptor's register counts match what
 * the disassembly uses), the emulator runs them against the interpreter,
 * and the waitcnt/hazard passes place what they must on small snippets. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ctype.h>
#include <sys/wait.h>

#include "amd.h"
#include "mir.h"
#include "testutil.h"

static const char *const examples[] = {"vector_add", "reduce_sum", "softmax", "rmsnorm", "layernorm",
				       "gemm", "gemm_bf16_tn", "mha_fwd"};
static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942"};
#define NEX (sizeof examples / sizeof examples[0])
#define NT 3

static void need_oracle(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "/usr/bin/%s", name);
	cr_assert(access(path, X_OK) == 0, "oracle %s is missing: install LLVM 19 (llvm-19, lld-19)", path);
}

/* Compiles example e for target t into dir; returns the .hsaco path. */
static char *compile(const char *dir, const char *e, const char *t)
{
	char *out = malloc(512), cmd[1024];
	snprintf(out, 512, "%s/%s-%s.hsaco", dir, e, t);
	snprintf(cmd, sizeof cmd, "'%s' compile '%s/examples/%s.tile' --target=%s -o '%s' 2>&1", env("TILEASM"),
		 env("TILEASM_SRCDIR"), e, t, out);
	int st;
	char *log = run_cmd(cmd, &st);
	cr_assert_eq(st, 0, "%s for %s failed:\n%s", e, t, log);
	free(log);
	return out;
}

/* Highest register number + 1 of file c ('s' or 'v') in llvm-objdump text:
 * "v7", "v[2:3]", "s[4:5]" (vcc/exec/ttmp do not match). */
static int max_reg(const char *dis, char c)
{
	int best = 0;
	for (const char *p = dis; *p; p++) {
		if (*p != c || (p > dis && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
			continue;
		int hi = -1;
		if (p[1] == '[') {
			int a, b;
			if (sscanf(p + 2, "%d:%d]", &a, &b) == 2)
				hi = b;
		} else if (isdigit((unsigned char)p[1])) {
			const char *q = p + 1;
			while (isdigit((unsigned char)*q))
				q++;
			if (!isalnum((unsigned char)*q) && *q != '_')
				hi = atoi(p + 1);
		}
		if (hi + 1 > best)
			best = hi + 1;
	}
	return best;
}

static int md_int(const char *notes, const char *key)
{
	const char *p = strstr(notes, key);
	cr_assert(p, "metadata has no %s:\n%s", key, notes);
	return atoi(p + strlen(key) + 1);
}

/* Every example compiles for every target, and the oracles accept the
 * result.  If an example stops compiling, the message names it. */
Test(amd_codegen, examples_compile_and_decode)
{
	need_oracle("llvm-objdump-19");
	need_oracle("llvm-readelf-19");
	char *dir = tmpdir();
	int ok = 0;
	for (size_t e = 0; e < NEX; e++)
		for (int t = 0; t < NT; t++) {
			char *co = compile(dir, examples[e], targets[t]), cmd[1024];
			int st;
			snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=%s '%s' 2>&1", targets[t], co);
			char *dis = run_cmd(cmd, &st);
			cr_assert_eq(st, 0, "%s", dis);
			cr_assert_null(strstr(dis, "<unknown>"), "%s/%s: undecodable bytes", examples[e], targets[t]);
			cr_assert(strstr(dis, "s_endpgm"), "%s/%s: no s_endpgm", examples[e], targets[t]);
			snprintf(cmd, sizeof cmd, "llvm-readelf-19 --notes '%s' 2>&1", co);
			char *notes = run_cmd(cmd, &st);
			cr_assert_eq(st, 0, "%s", notes);
			cr_assert_null(strstr(notes, "warning"), "%s", notes);
			/* Descriptor counts agree with what the code uses: VGPRs
			 * exactly, SGPRs at least (VCC etc. are added on top). */
			int vg = md_int(notes, ".vgpr_count:"), sg = md_int(notes, ".sgpr_count:");
			int uv = max_reg(dis, 'v'), us = max_reg(dis, 's');
			cr_assert_eq(vg, uv, "%s/%s: .vgpr_count %d but the code uses v0..v%d", examples[e], targets[t],
				     vg, uv - 1);
			cr_assert_geq(sg, us, "%s/%s: .sgpr_count %d but the code uses s0..s%d", examples[e], targets[t],
				      sg, us - 1);
			cr_assert(strstr(notes, t == 0 ? ".wavefront_size: 32" : ".wavefront_size: 64"));
			free(dis), free(notes), free(co);
			ok++;
		}
	cr_assert_eq(ok, (int)(NEX * NT));
	rmdir_all(dir);
}

/* Unsupported constructs fail with a clear diagnostic and exit 1, no file. */
Test(amd_codegen, unsupported_is_a_clear_error)
{
	char *dir = tmpdir(), path[512], cmd[1024];
	snprintf(path, sizeof path, "%s/k.tile", dir);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	/* f64 -> f16 is not selected yet (it would round twice through f32) */
	fputs("kernel k(A: f64[N], B: f16[N]) grid(1) threads(64) {\n"
	      "  parallel (i) in (64) {\n    B[i] = f16(A[i])\n  }\n}\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "'%s' compile '%s' --target=gfx942 -o '%s/k.hsaco' 2>&1", env("TILEASM"), path, dir);
	int st;
	char *log = run_cmd(cmd, &st);
	cr_assert_eq(st, 1, "%s", log);
	cr_assert(strstr(log, "error: ") && strstr(log, "not supported yet on gfx942"), "%s", log);
	snprintf(path, sizeof path, "%s/k.hsaco", dir);
	cr_assert_neq(access(path, F_OK), 0, "no output file on error");
	free(log);
	rmdir_all(dir);
}

/* Inputs that once crashed the compiler (tests/fuzz/regress/compile/):
 * every target must end with a diagnostic or an output, never a signal. */
Test(amd_codegen, compile_regressions_do_not_crash)
{
	char dir[512], cmd[2048];
	snprintf(dir, sizeof dir, "%s/tests/fuzz/regress/compile", env("TILEASM_SRCDIR"));
	DIR *dp = opendir(dir);
	cr_assert(dp, "cannot open %s", dir);
	static const char *const all[] = {"gfx1100", "gfx90a", "gfx942", "sm_80", "sm_90a"};
	int files = 0;
	for (struct dirent *de; (de = readdir(dp));) {
		if (!strstr(de->d_name, ".tile"))
			continue;
		files++;
		for (int t = 0; t < 5; t++) {
			snprintf(cmd, sizeof cmd, "'%s' compile '%s/%s' --target=%s -o /dev/null 2>&1", env("TILEASM"), dir,
				 de->d_name, all[t]);
			int st;
			char *log = run_cmd(cmd, &st);
			cr_assert(st == 0 || st == 1, "%s on %s: exit %d\n%s", de->d_name, all[t], st, log);
			free(log);
		}
	}
	closedir(dp);
	cr_assert_gt(files, 0);
}

/* -o /dev/null compiles and leaves the device node alone: the atomic
 * temporary-and-rename must not replace a non-regular file (as root it
 * once turned /dev/null into a regular file full of code objects). */
Test(amd_codegen, output_to_dev_null_keeps_the_device)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s' compile '%s/examples/vector_add.tile' --target=gfx942 -o /dev/null 2>&1",
		 env("TILEASM"), env("TILEASM_SRCDIR"));
	int st;
	char *log = run_cmd(cmd, &st);
	cr_assert_eq(st, 0, "%s", log);
	free(log);
	struct stat sb;
	cr_assert_eq(stat("/dev/null", &sb), 0);
	cr_assert(S_ISCHR(sb.st_mode), "/dev/null is no longer a character device");
}

/* A block's shared memory beyond the target's LDS is a compile error at
 * the kernel, not a code object that fails at dispatch: 80 KiB is over
 * every AMD target's 64 KiB, 64 KiB exactly fits. */
Test(amd_codegen, lds_limit_is_a_compile_error)
{
	char *dir = tmpdir(), path[512], cmd[1024];
	for (int words = 16384; words <= 20480; words += 4096)
		for (size_t t = 0; t < NT; t++) {
			snprintf(path, sizeof path, "%s/k.tile", dir);
			FILE *f = fopen(path, "w");
			cr_assert(f);
			fprintf(f, "kernel k(A: f32[N], B: f32[N]) grid(1) threads(64) {\n  S = shared f32[%d]\n"
				   "  copy(A[0], S)\n  copy(S, B[0])\n}\n", words);
			fclose(f);
			snprintf(cmd, sizeof cmd, "'%s' compile '%s' --target=%s -o '%s/k.hsaco' 2>&1", env("TILEASM"),
				 path, targets[t], dir);
			int st;
			char *log = run_cmd(cmd, &st);
			snprintf(path, sizeof path, "%s/k.hsaco", dir);
			if (words == 16384) {
				cr_assert_eq(st, 0, "%s: %s", targets[t], log);
				cr_assert_eq(unlink(path), 0);
			} else {
				cr_assert_eq(st, 1, "%s: %s", targets[t], log);
				cr_assert(strstr(log, ":1:1: error: kernel 'k' needs 81920 bytes of shared memory") &&
					  strstr(log, "at most 65536"), "%s", log);
				cr_assert_neq(access(path, F_OK), 0, "no output file on error");
			}
			free(log);
		}
	rmdir_all(dir);
}

/* Over the limit because a fragment fell back to shared memory: the
 * message separates the declared bytes, names the fragment and gives the
 * use that kept it there (F[j, i] at line 13:16, a transposed read). */
Test(amd_codegen, lds_limit_names_fragments)
{
	char *dir = tmpdir(), cmd[1024];
	for (size_t t = 0; t < NT; t++) {
		snprintf(cmd, sizeof cmd, "'%s' compile '%s/tests/amd/smem_limit_counts_fragments.tile' --target=%s -o '%s/k.hsaco' 2>&1",
			 env("TILEASM"), env("TILEASM_SRCDIR"), targets[t], dir);
		int st;
		char *log = run_cmd(cmd, &st);
		cr_assert_eq(st, 1, "%s: %s", targets[t], log);
		cr_assert(strstr(log, "needs 65552 bytes of shared memory") &&
			  strstr(log, "shared buffers and scratch 49168 bytes") &&
			  strstr(log, "'F' 16384 bytes (line 13:16: an element is accessed at other indices than the parallel "
			              "loop's own"),
			  "%s: %s", targets[t], log);
		free(log);
	}
	rmdir_all(dir);
}

/* Accumulators and the row fragments that go with them: the message gives
 * the register layouts' reason (rf_analyze), not the element-wise one
 * ("a gemm writes it", which main said for every accumulator). */
Test(amd_codegen, lds_limit_names_accumulator_and_row_reasons)
{
	static const char tiles[] = "its MMA tiles do not spread evenly over the block's warps";
	static const struct {
		const char *file;
		const char *want[NT][3]; /* per target (gfx1100, gfx90a, gfx942) */
	} cases[] = {
		{"smem_limit_acc_tiles",
		 {{"'S_f' 1024 bytes (line 17:3: its MMA tiles", "'O_f' 16384 bytes (line 19:3: its MMA tiles",
		   "'m' 64 bytes (line 18:3: the accumulator it is reduced from stays in shared memory)"},
		  {"'S_f' 1024 bytes (line 17:3: its MMA tiles",
		   "'m' 64 bytes (line 18:3: the accumulator it is reduced from stays in shared memory)", tiles},
		  {"'S_f' 1024 bytes (line 17:3: its MMA tiles",
		   "'m' 64 bytes (line 18:3: the accumulator it is reduced from stays in shared memory)", tiles}}},
		{"smem_limit_rows_spread",
		 {{"'O_f' 8192 bytes (line 14:3: its MMA tiles",
		   "'m' 64 bytes (line 15:3: the accumulator it is reduced from stays in shared memory)", tiles},
		  {"'O_f' 8192 bytes (line 15:3: a row reduction from it needs each row in one warp/wave",
		   "'m' 64 bytes (line 10:3: the MMA layout of the accumulator it goes with spreads a row over several "
		   "warps/waves)", "79872 bytes"},
		  {"'O_f' 8192 bytes (line 15:3: a row reduction from it needs each row in one warp/wave",
		   "'m' 64 bytes (line 10:3: the MMA layout of the accumulator it goes with spreads a row over several "
		   "warps/waves)", "79872 bytes"}}},
		{"smem_limit_rows_shapes",
		 {{"'m' 256 bytes (line 11:3: the accumulators it goes with hold their rows in other threads", "66560 bytes",
		   "66816 bytes"},
		  {"'m' 256 bytes (line 11:3: the accumulators it goes with hold their rows in other threads", "66560 bytes",
		   "66816 bytes"},
		  {"'m' 256 bytes (line 11:3: the accumulators it goes with hold their rows in other threads", "66560 bytes",
		   "66816 bytes"}}},
	};
	char *dir = tmpdir(), cmd[1024];
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		for (size_t t = 0; t < NT; t++) {
			snprintf(cmd, sizeof cmd, "'%s' compile '%s/tests/amd/%s.tile' --target=%s -o '%s/k.hsaco' 2>&1",
				 env("TILEASM"), env("TILEASM_SRCDIR"), cases[k].file, targets[t], dir);
			int st;
			char *log = run_cmd(cmd, &st);
			cr_expect_eq(st, 1, "%s %s: %s", cases[k].file, targets[t], log);
			for (int i = 0; i < 3; i++)
				cr_expect(strstr(log, cases[k].want[t][i]), "%s %s: no \"%s\" in\n%s", cases[k].file, targets[t],
					  cases[k].want[t][i], log);
			cr_expect(!strstr(log, "a gemm, cumsum or atomic writes it"), "%s %s: %s", cases[k].file, targets[t], log);
			free(log);
		}
	/* gfx1100 (no AGPRs): a 128 x 256 accumulator over 128 threads (256 slots per lane; f32 and i32) */
	static const char *const big[] = {"acc_gemm", "acc_gemm_i8"};
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof cmd, "'%s' compile '%s/tests/amd/%s.tile' --target=gfx1100 -o '%s/k.hsaco' 2>&1",
			 env("TILEASM"), env("TILEASM_SRCDIR"), big[k], dir);
		int st;
		char *log = run_cmd(cmd, &st);
		cr_expect(st == 1 && strstr(log, "'C_f' 131072 bytes (line 1") &&
				  strstr(log, ": its MMA layout would take more registers per thread than the limit"),
			  "%s gfx1100: %s", big[k], log);
		free(log);
	}
	rmdir_all(dir);
}

/* A pipelined loop the AMD lowering cannot stage says so and why in the
 * listing: gemm_splitk's K step of 64 would stage 64 VGPRs next to its 128
 * accumulator VGPRs (in VGPRs on every target: gfx1100 has no AGPRs).
 * test_lds checks the staged gemm's note. */
Test(amd_codegen, pipelining_is_explained_in_the_listing)
{
	for (size_t t = 0; t < NT; t++) {
		char cmd[1536];
		snprintf(cmd, sizeof cmd, "'%s' compile '%s/examples/gemm_splitk.tile' --target=%s --dump-isa -o /dev/null 2>&1",
			 env("TILEASM"), env("TILEASM_SRCDIR"), targets[t]);
		int st;
		char *isa = run_cmd(cmd, &st);
		cr_assert_eq(st, 0, "%s", isa);
		const char *want = ": pipelined loop, stages(4): not overlapped (its staging and accumulator registers "
				   "would exceed the VGPR budget)";
		cr_expect(strstr(isa, want), "%s: no '%s' in:\n%.400s", targets[t], want, isa);
		free(isa);
	}
}

/* The end of a serial loop's body needs no barrier when the next trip's
 * accesses do not conflict with this trip's: rmsnorm's second pass and
 * loop_trip_private.tile write each output column block once (j * 256 of a
 * 256-wide tile); loop_trip_overlap.tile (j * 128) keeps it.  Both match
 * the interpreter on the emulator at a ragged shape. */
Test(amd_codegen, trip_private_writes_need_no_loop_barrier)
{
	char *dir = tmpdir(), cmd[1536];
	static const char *const files[] = {"tests/amd/loop_trip_private.tile", "tests/amd/loop_trip_overlap.tile",
					    "examples/rmsnorm.tile"};
	for (size_t t = 0; t < NT; t++)
		for (int k = 0; k < 3; k++) {
			snprintf(cmd, sizeof cmd, "'%s' compile '%s/%s' --target=%s --dump-isa -o /dev/null 2>&1", env("TILEASM"),
				 env("TILEASM_SRCDIR"), files[k], targets[t]);
			int st;
			char *isa = run_cmd(cmd, &st);
			cr_assert_eq(st, 0, "%s", isa);
			int bars = count(isa, "s_barrier");
			if (k == 1)
				cr_expect_gt(bars, 0, "%s %s: overlapping trips without a barrier", files[k], targets[t]);
			else
				cr_expect_eq(bars, 0, "%s %s: %d barriers", files[k], targets[t], bars);
			free(isa);
			if (k == 2)
				continue;
			snprintf(cmd, sizeof cmd, "'%s' run '%s/%s' --backend=emu --target=%s -D M=6 -D N=700 2>&1",
				 env("TILEASM"), env("TILEASM_SRCDIR"), files[k], targets[t]);
			char *log = run_cmd(cmd, &st);
			cr_expect(st == 0 && strstr(log, "PASS"), "%s %s:\n%s", files[k], targets[t], log);
			free(log);
		}
	rmdir_all(dir);
}

/* Atomics a target has no instruction for were silently wrong, failed to
 * encode or named the wrong backend; they now run a compare-and-swap loop
 * (lower_data.c): each repro on the emulator against the interpreter on
 * the three AMD targets, and compiled for both PTX targets (ptxas checks
 * the PTX in tests/ptx). */
Test(amd_codegen, software_atomics_run_like_the_interpreter)
{
	static const char *const files[] = {"amd_atomic_add_f16", "amd_atomic_add_f64_encode", "bf16_atomic_add_msg"};
	static const char *const amd[] = {"gfx942", "gfx90a", "gfx1100"}, *const ptx[] = {"sm_80", "sm_90a"};
	char *dir = tmpdir(), cmd[1024];
	for (size_t i = 0; i < TA_ARRAY_LEN(files); i++) {
		const char *defs = strstr(files[i], "f64") ? "-D N=50" : "";
		for (size_t t = 0; t < TA_ARRAY_LEN(amd); t++) {
			snprintf(cmd, sizeof cmd, "'%s' run '%s/tests/amd/%s.tile' --backend=emu --target=%s %s 2>&1",
				 env("TILEASM"), env("TILEASM_SRCDIR"), files[i], amd[t], defs);
			int st;
			char *log = run_cmd(cmd, &st);
			cr_assert(st == 0 && strstr(log, "\nPASS"), "%s %s: %s", files[i], amd[t], log);
			free(log);
		}
		for (size_t t = 0; t < TA_ARRAY_LEN(ptx); t++) {
			snprintf(cmd, sizeof cmd, "'%s' compile '%s/tests/amd/%s.tile' --target=%s %s -o '%s/k.out' 2>&1",
				 env("TILEASM"), env("TILEASM_SRCDIR"), files[i], ptx[t], defs, dir);
			int st;
			char *log = run_cmd(cmd, &st);
			cr_assert(st == 0, "%s %s: %s", files[i], ptx[t], log);
			free(log);
		}
	}
	rmdir_all(dir);
}

/* Runs an example on the emulator with the given arguments; asserts PASS. */
static void emu_run(const char *dir, const char *e, const char *t, const char *args)
{
	char *co = compile(dir, e, t), cmd[1536];
	snprintf(cmd, sizeof cmd, "TILEASM_RUN_HSACO='%s' '%s' run '%s/examples/%s.tile' --backend=emu --target=%s %s 2>&1",
		 co, env("TILEASM"), env("TILEASM_SRCDIR"), e, t, args);
	int st;
	char *log = run_cmd(cmd, &st);
	cr_assert(st == 0 && strstr(log, "PASS"), "%s on %s (%s):\n%s", e, t, args, log);
	free(log);
	free(co);
}

/* Correctness by execution against the interpreter: every example on
 * every target, at shapes with ragged tails and several tiles (rows,
 * columns, key tiles, K steps) so loops, exec masking and the wave64 half
 * warps are all exercised. */
Test(amd_codegen, emulator_all_examples)
{
	char *dir = tmpdir();
	static const struct { const char *e, *args; } cases[] = {
		{"vector_add", "--arg N=5000"},
		{"vector_add", "--arg N=77"},
		{"reduce_sum", "--arg M=37 --arg N=1000"},
		{"softmax", "--arg M=66 --arg N=1000"},
		{"softmax", "--arg M=1 --arg N=255"},
		{"rmsnorm", "--arg M=70 --arg N=520 --arg eps=0.00001"},
		{"layernorm", "--arg M=70 --arg N=520 --arg eps=0.00001"},
		{"gemm", "--arg M=200 --arg N=260 --arg K=64"},
		{"gemm_bf16_tn", "--arg M=130 --arg N=136 --arg K=48"},
		{"mha_fwd", "--arg B=1 --arg H=1 --arg S=130 --arg scale=0.125 --arg causal=1"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int t = 0; t < NT; t++)
			emu_run(dir, cases[c].e, targets[t], cases[c].args);
	rmdir_all(dir);
}

/* Integer division and remainder by runtime values (the float-reciprocal
 * expansion), signed and unsigned divisors, against the interpreter. */
Test(amd_codegen, emulator_integer_division)
{
	char *dir = tmpdir(), path[512];
	snprintf(path, sizeof path, "%s/divk.tile", dir);
	static const char src[] =
		"kernel divk(A: i32[N], B: i32[N], Q: i32[N], R: i32[N], d: i32)\n"
		"    grid(ceildiv(N, 256)) threads(256) {\n"
		"  parallel (i) in (256) {\n"
		"    let j = bx * 256 + i\n"
		"    if (j < N) {\n"
		"      Q[j] = A[j] // (B[j] * B[j] + 1) + A[j] // d\n"
		"      R[j] = A[j] % (B[j] * B[j] + 1) + (A[j] * 3) % 7\n"
		"    }\n  }\n}\n";
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(src, f);
	fclose(f);
	for (int t = 0; t < NT; t++)
		for (int k = 0; k < 2; k++) {
			char co[600], cmd[8192];
			snprintf(co, sizeof co, "%s/divk-%s.hsaco", dir, targets[t]);
			snprintf(cmd, sizeof cmd,
				 "'%s' compile '%s' --target=%s -o '%s' 2>&1 && TILEASM_RUN_HSACO='%s' '%s' run '%s' "
				 "--backend=emu --target=%s --arg N=1000 --arg d=%s 2>&1",
				 env("TILEASM"), path, targets[t], co, co, env("TILEASM"), path, targets[t],
				 k ? "-3" : "100003");
			int st;
			char *log = run_cmd(cmd, &st);
			cr_assert(st == 0 && strstr(log, "PASS"), "%s:\n%s", targets[t], log);
			free(log);
		}
	rmdir_all(dir);
}

/* ---- waitcnt and hazard snippets ---------------------------------------- */

static MInst *phys(MFunc *f, unsigned op, int ndef, int nops, const IsaOperand *o)
{
	MInst *mi = mir_emit(f, op, ndef);
	for (int i = 0; i < nops; i++)
		mi_phys(mi, i, o[i]);
	return mi;
}

static char *listing(MFunc *f)
{
	StrBuf sb = {0};
	for (size_t i = 0; i < f->insns.len; i++) {
		isa_print(f->target, &f->insns.data[i].in, &sb);
		sb_putc(&sb, '\n');
	}
	return sb.buf;
}

static void gload(MFunc *f, int dst, int addr)
{
	IsaOperand o[3] = {isa_vgpr(dst, 1), isa_vgpr(addr, 2), isa_off()};
	phys(f, ISA_GLOBAL_LOAD_DWORD, 1, 3, o);
}

static void vadd(MFunc *f, int d, int a, int b)
{
	IsaOperand o[3] = {isa_vgpr(d, 1), isa_vgpr(a, 1), isa_vgpr(b, 1)};
	phys(f, ISA_V_ADD_F32, 1, 3, o);
}

Test(amd_waitcnt, waits_only_for_what_is_read)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	mir_block(&f);
	gload(&f, 1, 10);
	gload(&f, 2, 12);
	vadd(&f, 3, 1, 1); /* needs the first load only: vmcnt(1) */
	vadd(&f, 4, 2, 3); /* then the second: vmcnt(0) */
	vadd(&f, 5, 4, 4); /* nothing pending */
	IsaOperand e = isa_imm(0);
	(void)e;
	phys(&f, ISA_S_ENDPGM, 0, 0, NULL);
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_waitcnt(&f, &d), 0);
	char *l = listing(&f);
	cr_assert_str_eq(l, "global_load_dword v1, v[10:11], off\n"
			    "global_load_dword v2, v[12:13], off\n"
			    "s_waitcnt vmcnt(1)\n"
			    "v_add_f32_e32 v3, v1, v1\n"
			    "s_waitcnt vmcnt(0)\n"
			    "v_add_f32_e32 v4, v2, v3\n"
			    "v_add_f32_e32 v5, v4, v4\n"
			    "s_endpgm\n");
	free(l);
	diag_free(&d);
	mir_free(&f);
}

Test(amd_waitcnt, smem_is_out_of_order_and_barrier_waits_all_gfx11)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX1100);
	mir_block(&f);
	IsaOperand l1[3] = {isa_sgpr(4, 2), isa_sgpr(0, 2), isa_imm(0)};
	IsaOperand l2[3] = {isa_sgpr(6, 2), isa_sgpr(0, 2), isa_imm(8)};
	phys(&f, ISA_S_LOAD_DWORDX2, 1, 3, l1);
	phys(&f, ISA_S_LOAD_DWORDX2, 1, 3, l2);
	IsaOperand st[3] = {isa_vgpr(0, 2), isa_vgpr(2, 1), isa_sgpr(4, 2)};
	phys(&f, ISA_GLOBAL_STORE_DWORD, 0, 3, st); /* reads s[4:5]: lgkmcnt(0), SMEM is unordered */
	phys(&f, ISA_S_BARRIER, 0, 0, NULL);        /* the store must be visible: vscnt(0) */
	phys(&f, ISA_S_ENDPGM, 0, 0, NULL);
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_waitcnt(&f, &d), 0);
	char *l = listing(&f);
	cr_assert_str_eq(l, "s_load_b64 s[4:5], s[0:1], 0x0\n"
			    "s_load_b64 s[6:7], s[0:1], 0x8\n"
			    "s_waitcnt lgkmcnt(0)\n"
			    "global_store_b32 v[0:1], v2, s[4:5]\n"
			    "s_waitcnt_vscnt null, 0x0\n"
			    "s_barrier\n"
			    "s_endpgm\n",
			 "got:\n%s", l);
	free(l);
	diag_free(&d);
	mir_free(&f);
}

Test(amd_waitcnt, loop_carried_pending_load)
{
	/* bb0: load v1; bb1 (loop): v2 = v1 + v1; load v1; branch bb1.  The
	 * read in bb1 must wait on both entries (first from bb0, then from
	 * the back edge). */
	MFunc f;
	mir_init(&f, TA_TARGET_GFX90A);
	mir_block(&f);
	gload(&f, 1, 10);
	int b1 = mir_block(&f);
	vadd(&f, 2, 1, 1);
	gload(&f, 1, 10);
	IsaOperand lb = {ISA_K_LABEL, 1, 0, 1, NULL, 0};
	phys(&f, ISA_S_BRANCH, 0, 1, &lb);
	int b2 = mir_block(&f);
	phys(&f, ISA_S_ENDPGM, 0, 0, NULL);
	f.blocks.data[0].succ[0] = b1;
	f.blocks.data[b1].succ[0] = b1;
	f.blocks.data[b1].succ[1] = b2;
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_waitcnt(&f, &d), 0);
	const MBlock *bl = &f.blocks.data[b1];
	cr_assert_eq(f.insns.data[bl->first].in.op, ISA_S_WAITCNT, "wait at the top of the loop");
	diag_free(&d);
	mir_free(&f);
}

Test(amd_hazard, transcendental_and_wide_store)
{
	static const ta_target ts[3] = {TA_TARGET_GFX942, TA_TARGET_GFX1100, TA_TARGET_GFX90A};
	static const char *const want[3] = {
		"v_exp_f32_e32 v1, v0\ns_nop 0\nv_add_f32_e32 v2, v1, v1\n"
		"global_store_dwordx4 v[4:5], v[8:11], off\ns_nop 1\nv_add_f32_e32 v8, v1, v1\n",
		"v_exp_f32_e32 v1, v0\ns_waitcnt_depctr 0xfff\nv_add_f32_e32 v2, v1, v1\n"
		"global_store_b128 v[4:5], v[8:11], off\nv_add_f32_e32 v8, v1, v1\n",
		"v_exp_f32_e32 v1, v0\nv_add_f32_e32 v2, v1, v1\n"
		"global_store_dwordx4 v[4:5], v[8:11], off\ns_nop 0\nv_add_f32_e32 v8, v1, v1\n",
	};
	for (int k = 0; k < 3; k++) {
		MFunc f;
		mir_init(&f, ts[k]);
		mir_block(&f);
		IsaOperand ex[2] = {isa_vgpr(1, 1), isa_vgpr(0, 1)};
		phys(&f, ISA_V_EXP_F32, 1, 2, ex);
		vadd(&f, 2, 1, 1);
		IsaOperand st[3] = {isa_vgpr(4, 2), isa_vgpr(8, 4), isa_off()};
		phys(&f, ISA_GLOBAL_STORE_DWORDX4, 0, 3, st);
		vadd(&f, 8, 1, 1);
		Diag d;
		diag_init(&d);
		cr_assert_eq(amd_hazard(&f, &d), 0);
		char *l = listing(&f);
		cr_assert_str_eq(l, want[k], "target %d got:\n%s", k, l);
		free(l);
		diag_free(&d);
		mir_free(&f);
	}
}
