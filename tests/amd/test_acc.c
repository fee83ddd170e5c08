/* test_acc.c — register fragments beyond f32 and 128 slots (docs/lowering.md,
 * "Register-resident accumulators"; docs/amd-backend.md, "AGPR accumulators"):
 *  - i8 gemms accumulate in an i32 register fragment on gfx1100, gfx90a and
 *    gfx942: results match the interpreter at ragged and multi-tile shapes,
 *    with i32 epilogue arithmetic and i32 -> i16 / f32 copy-outs;
 *  - the 128x128 i8 gemm of issue #6 fits LDS (16 KiB: only A_s and B_s),
 *    with no accumulator stores to LDS and byte loads only for the B
 *    operand;
 *  - on gfx90a/gfx942 a 256-slot accumulator (f32 and i32) lives in AGPRs:
 *    MFMAs with C and D in AGPRs, .agpr_count 256 in the metadata, no
 *    scratch, every byte decoded by LLVM, results matching the interpreter
 *    (the emulator also checks MFMA / v_accvgpr wait states);
 *  - amd_hazard's wait states for the acc_cd forms are LLVM 19's (checked
 *    with llc-19 -run-pass=post-RA-hazard-rec on the same instructions);
 *  - NVIDIA: i8 gemms use mma.sync.m16n8k32.s8 with the i32 accumulator in
 *    registers; ptxas accepts the PTX for sm_80 and sm_90a (the results
 *    were checked on an H200 with `tileasm run --backend=cuda`, see
 *    docs/lowering.md; CI has no GPU). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "amd.h"
#include "emu.h"
#include "interp.h"
#include "lower.h"
#include "mir.h"
#include "util.h"
#include "testutil.h"

static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942"};

/* tests/amd/<file> on the emulator against the interpreter (`tileasm run`
 * compares every output; integers exactly). */
static void run_emu(const char *file, const char *target, const char *args)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' run '%s/tests/amd/%s' --backend=emu --target=%s %s 2>&1", env("TILEASM"),
		 env("TILEASM_SRCDIR"), file, target, args);
	int st;
	char *log = run_cmd(cmd, &st);
	cr_assert(st == 0 && strstr(log, "PASS") && strstr(log, "MFMA/WMMA"), "%s on %s (%s):\n%s", file, target, args,
		  log);
	cr_assert_null(strstr(log, " 0 MFMA/WMMA"), "%s on %s: no matrix instructions ran:\n%s", file, target, log);
	free(log);
}

/* `tileasm compile --dump-isa` of tests/amd/<file>; the code object goes to co. */
static char *compile_isa(const char *file, const char *target, const char *co)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' compile '%s/tests/amd/%s' --target=%s -o '%s' --dump-isa 2>&1", env("TILEASM"),
		 env("TILEASM_SRCDIR"), file, target, co);
	int st;
	char *isa = run_cmd(cmd, &st);
	cr_assert_eq(st, 0, "%s on %s:\n%s", file, target, isa);
	return isa;
}

/* The kernel summary line of a --dump-isa listing. */
static const char *summary(const char *isa)
{
	const char *k = strstr(isa, "; kernel");
	cr_assert(k, "no kernel summary in the listing");
	return k;
}

/* ---- i32 register fragments ------------------------------------------------ */

Test(amd_acc, i8_gemm_matches_the_interpreter)
{
	static const char *const shapes[] = {
		"--arg M=70 --arg N=100 --arg K=40",    /* ragged, inside one tile */
		"--arg M=256 --arg N=256 --arg K=128",  /* 2x2 tiles, two K steps */
		"--arg M=130 --arg N=200 --arg K=70",   /* ragged, multi-tile */
	};
	for (int t = 0; t < 3; t++)
		for (int s = 0; s < 3; s++)
			run_emu("i8_gemm.tile", targets[t], shapes[s]);
}

Test(amd_acc, i8_gemm_epilogue_matches_the_interpreter)
{
	for (int t = 0; t < 3; t++) {
		run_emu("i8_gemm_ep.tile", targets[t], "--arg M=130 --arg N=300 --arg K=70 --arg s=5");
		run_emu("i8_gemm_ep.tile", targets[t], "--arg M=64 --arg N=48 --arg K=64 --arg s=-3");
		/* transposed operands; a shared-memory and a register accumulator */
		run_emu("i8_gemm_tt.tile", targets[t], "--arg M=130 --arg N=100 --arg K=70");
	}
}

/* The lowering keeps the i32 accumulator out of shared memory. */
Test(amd_acc, i8_accumulator_is_not_in_shared_memory)
{
	Module *m = load_src("tests/amd/i8_gemm.tile", NULL, 0);
	Diag d;
	diag_init(&d);
	for (int t = 0; t < 3; t++) {
		Target tg;
		cr_assert_eq(target_parse(targets[t], &tg), 0);
		SimtFunc f;
		cr_assert_eq(lower_kernel(m, 0, &tg, &f, &d), 0, "%s: %s", targets[t], diag_text(&d));
		/* A_s (8 KiB) + B_s (8 KiB); C_f in shared memory would add 64 KiB */
		cr_assert_eq(f.smem_bytes, 16384, "%s: %lld bytes of shared memory", targets[t], (long long)f.smem_bytes);
		cr_assert_eq(f.acc.len, 0, "%s: 128 slots per lane stay in VGPRs", targets[t]);
		/* the pipelined loop's staged and plain versions */
		cr_assert_eq(f.nmma, 2, "%s", targets[t]);
		simt_free(&f);
	}
	ir_module_free(m);
	diag_free(&d);
}

/* In the machine code: 16 KiB of LDS, no 4-byte LDS stores (the
 * accumulator's), byte loads exactly those of the transposed B operand
 * (4 per B register, NB = 4 column groups per k-step: the 128 columns are
 * two column tiles of a 2-wide wave grid, lower_mma.c amd_tiling), no
 * scratch, and every byte decoded by llvm-objdump-19. */
Test(amd_acc, i8_gemm_machine_code)
{
	cr_assert(access("/usr/bin/llvm-objdump-19", X_OK) == 0,
		  "oracle /usr/bin/llvm-objdump-19 is missing: install LLVM 19 (llvm-19)");
	static const int bregs[3] = {4, 1, 2}; /* B registers per instruction: wmma iu8, mfma i8, mfma 16x16x32 i8 */
	static const char *const mma[3] = {"v_wmma_i32_16x16x16_iu8", "v_mfma_i32_16x16x16i8",
					   "v_mfma_i32_16x16x32_i8"};
	char *dir = tmpdir();
	for (int t = 0; t < 3; t++) {
		char co[1100], cmd[4096];
		snprintf(co, sizeof co, "%s/i8.%s.co", dir, targets[t]);
		char *isa = compile_isa("i8_gemm.tile", targets[t], co);
		const char *k = summary(isa);
		cr_assert(strstr(k, "lds 16384 bytes,") && strstr(k, "scratch 0 bytes,"), "%s: %.200s", targets[t], k);
		cr_assert(strstr(isa, mma[t]), "%s: no %s", targets[t], mma[t]);
		cr_assert_eq(count(isa, "ds_write_b32") + count(isa, "ds_store_b32"), 0,
			     "%s: the accumulator is stored to LDS", targets[t]);
		int u8 = count(isa, "ds_read_u8") + count(isa, "ds_load_u8");
		/* twice: the staged and the plain version of the pipelined loop */
		int vers = 2;
		cr_assert_eq(u8, vers * 4 * bregs[t] * 4, "%s: %d byte loads from LDS", targets[t], u8);
		free(isa);
		snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=%s '%s' 2>&1", targets[t], co);
		int st;
		char *dis = run_cmd(cmd, &st);
		cr_assert_eq(st, 0, "%s", dis);
		cr_assert_null(strstr(dis, "<unknown>"), "%s: undecodable bytes", targets[t]);
		free(dis);
	}
	rmdir_all(dir);
}

/* ---- AGPR accumulators (gfx90a, gfx942) ------------------------------------- */

Test(amd_acc, agpr_gemm_matches_the_interpreter)
{
	for (int t = 1; t < 3; t++) {
		run_emu("acc_gemm.tile", targets[t], "--arg M=70 --arg N=100 --arg K=40 --arg s=0.75");
		run_emu("acc_gemm.tile", targets[t], "--arg M=130 --arg N=300 --arg K=70 --arg s=-1.5");
		run_emu("acc_gemm_i8.tile", targets[t], "--arg M=130 --arg N=300 --arg K=70");
		run_emu("acc_gemm_i8.tile", targets[t], "--arg M=256 --arg N=256 --arg K=128");
	}
}

Test(amd_acc, agpr_gemm_machine_code)
{
	cr_assert(access("/usr/bin/llvm-objdump-19", X_OK) == 0,
		  "oracle /usr/bin/llvm-objdump-19 is missing: install LLVM 19 (llvm-19)");
	cr_assert(access("/usr/bin/llvm-readelf-19", X_OK) == 0,
		  "oracle /usr/bin/llvm-readelf-19 is missing: install LLVM 19 (llvm-19)");
	static const char *const files[] = {"acc_gemm.tile", "acc_gemm_i8.tile"};
	static const char *const mma[2][2] = {{"v_mfma_f32_16x16x16f16 a[", "v_mfma_f32_16x16x16_f16 a["},
					      {"v_mfma_i32_16x16x16i8 a[", "v_mfma_i32_16x16x32_i8 a["}};
	char *dir = tmpdir();
	for (int f = 0; f < 2; f++)
		for (int t = 1; t < 3; t++) {
			char co[1100], cmd[4096];
			snprintf(co, sizeof co, "%s/%d.%s.co", dir, f, targets[t]);
			char *isa = compile_isa(files[f], targets[t], co);
			const char *k = summary(isa);
			cr_assert(strstr(k, "agprs 256,") && strstr(k, "scratch 0 bytes,"), "%s on %s: %.200s", files[f],
				  targets[t], k);
			/* acc_cd: D and C both AGPRs, every k-step */
			cr_assert(strstr(isa, mma[f][t - 1]), "%s on %s: no %s", files[f], targets[t], mma[f][t - 1]);
			char *m = strstr(isa, mma[f][t - 1]), *eol = strchr(m, '\n');
			*eol = 0;
			cr_assert(strstr(m + strlen(mma[f][t - 1]), ", a["), "%s on %s: C is not in AGPRs: %s", files[f],
				  targets[t], m);
			*eol = '\n';
			cr_assert(strstr(isa, "v_accvgpr_write_b32 a0, 0"), "%s on %s: clear", files[f], targets[t]);
			cr_assert(strstr(isa, "v_accvgpr_read_b32 v"), "%s on %s: no reads", files[f], targets[t]);
			cr_assert_eq(count(isa, "ds_write_b32"), 0, "%s on %s: the accumulator is stored to LDS", files[f],
				     targets[t]);
			free(isa);
			int st;
			snprintf(cmd, sizeof cmd, "llvm-readelf-19 --notes '%s' 2>&1", co);
			char *notes = run_cmd(cmd, &st);
			cr_assert_eq(st, 0, "%s", notes);
			cr_assert(strstr(notes, ".agpr_count:     256"), "%s on %s:\n%s", files[f], targets[t], notes);
			cr_assert(strstr(notes, ".private_segment_fixed_size: 0"), "%s on %s:\n%s", files[f], targets[t],
				  notes);
			free(notes);
			snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=%s '%s' 2>&1", targets[t], co);
			char *dis = run_cmd(cmd, &st);
			cr_assert_eq(st, 0, "%s", dis);
			cr_assert_null(strstr(dis, "<unknown>"), "%s on %s: undecodable bytes", files[f], targets[t]);
			cr_assert(strstr(dis, "v_accvgpr_read_b32"), "%s on %s", files[f], targets[t]);
			free(dis);
		}
	rmdir_all(dir);
}

/* Fragments of at most 128 slots stay in VGPRs (no AGPR in the code), and
 * gfx1100, which has no AGPRs, keeps the 128-slot limit: the 256-slot
 * fragment falls back to shared memory, which it does not fit. */
Test(amd_acc, agprs_only_for_big_fragments_on_cdna)
{
	char *dir = tmpdir();
	for (int t = 1; t < 3; t++) {
		char co[1100];
		snprintf(co, sizeof co, "%s/ep.%s.co", dir, targets[t]);
		char *isa = compile_isa("i8_gemm_ep.tile", targets[t], co);
		cr_assert(strstr(summary(isa), "agprs 0,"), "%s: %.200s", targets[t], summary(isa));
		cr_assert_null(strstr(isa, "v_accvgpr"), "%s", targets[t]);
		free(isa);
	}
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' compile '%s/tests/amd/acc_gemm.tile' --target=gfx1100 -o '%s/x.co' 2>&1",
		 env("TILEASM"), env("TILEASM_SRCDIR"), dir);
	int st;
	char *log = run_cmd(cmd, &st);
	cr_assert(st != 0 && strstr(log, "bytes of shared memory"), "%s", log);
	free(log);
	rmdir_all(dir);
}

/* With the VGPRs cut to 24, the allocator spills VGPRs next to a full
 * AGPR file (the 256-slot accumulator): to scratch, not to AGPRs.  The
 * result still matches the interpreter exactly on the emulator. */
Test(amd_acc, agpr_accumulator_next_to_vgpr_spills)
{
	enum { M = 130, N = 300, K = 70 };
	const Define defs[] = {{"M", M}, {"N", N}, {"K", K}};
	Module *m = load_src("tests/amd/acc_gemm_i8.tile", defs, 3);
	Diag d;
	diag_init(&d);
	int8_t *a = malloc(M * K), *b = malloc(K * N);
	float *want = calloc(M * N, sizeof(float)), *got = malloc(M * N * sizeof(float));
	uint32_t x = 7;
	for (int i = 0; i < M * K; i++)
		x = x * 1664525u + 1013904223u, a[i] = (int8_t)(x >> 24);
	for (int i = 0; i < K * N; i++)
		x = x * 1664525u + 1013904223u, b[i] = (int8_t)(x >> 24);
	InterpArg args[3];
	memset(args, 0, sizeof args);
	args[0].data = a, args[0].bytes = M * K;
	args[1].data = b, args[1].bytes = K * N;
	args[2].data = want, args[2].bytes = M * N * sizeof(float);
	cr_assert_eq(interp_run(m, 0, args, &d), 0, "%s", diag_text(&d));
	for (int t = 1; t < 3; t++) {
		Target tg;
		cr_assert_eq(target_parse(targets[t], &tg), 0);
		AmdOutput out;
		memset(&out, 0, sizeof out);
		out.reg_limit[MR_V] = 24;
		cr_assert_eq(amd_compile(m, &tg, &out, &d), 0, "%s: %s", targets[t], diag_text(&d));
		const AmdKernelInfo *ki = &out.kernels[0];
		cr_assert(ki->scratch_bytes > 0 && ki->agprs == 256 && ki->vgprs <= 24, "%s: scratch %d, %d AGPRs, %d VGPRs",
			  targets[t], ki->scratch_bytes, ki->agprs, ki->vgprs);
		cr_assert_eq(ki->nparams, 3);
		EmuDevice *dev = emu_create(tg.id);
		cr_assert(dev);
		cr_assert_eq(emu_load(dev, out.code_object, out.code_object_len, &d), 0, "%s", diag_text(&d));
		uint8_t *karg = calloc(1, ki->kernarg_size + 8);
		uint64_t addr[3];
		for (int i = 0; i < 3; i++) {
			addr[i] = emu_alloc(dev, args[i].bytes);
			cr_assert(addr[i]);
			if (i < 2)
				cr_assert_eq(emu_write(dev, addr[i], args[i].data, args[i].bytes, &d), 0, "%s", diag_text(&d));
			memcpy(karg + ki->param_offset[i], &addr[i], 8);
		}
		uint32_t grid[3] = {(N + 255) / 256, (M + 127) / 128, 1}, block[3] = {(uint32_t)ki->threads, 1, 1};
		cr_assert_eq(emu_launch(dev, ki->name, grid, block, karg, ki->kernarg_size, 0, &d), 0, "%s: %s",
			     targets[t], diag_text(&d));
		cr_assert_eq(emu_read(dev, addr[2], got, M * N * sizeof(float), &d), 0, "%s", diag_text(&d));
		for (int i = 0; i < M * N; i++)
			cr_assert_eq(got[i], want[i], "%s: C[%d][%d] = %g, the interpreter says %g", targets[t], i / N, i % N,
				     (double)got[i], (double)want[i]);
		free(karg);
		emu_destroy(dev);
		amd_output_free(&out);
	}
	free(a), free(b), free(want), free(got);
	ir_module_free(m);
	diag_free(&d);
}

/* ---- wait states of the acc_cd forms ----------------------------------------- */

/* Wait states amd_hazard puts between the two instructions of src (one
 * definition each, straight-line code) on target t. */
static int waits(ta_target t, const char *first, const char *second)
{
	MFunc f;
	mir_init(&f, t);
	mir_block(&f);
	const char *lines[2] = {first, second};
	for (int i = 0; i < 2; i++) {
		IsaInsn in;
		Diag d;
		diag_init(&d);
		cr_assert_eq(isa_parse_insn(t, lines[i], &in, NULL, (SrcPos){1, 1}, &d), 0, "%s: %s", lines[i],
			     diag_text(&d));
		diag_free(&d);
		MInst *mi = mir_emit(&f, in.op, 1);
		cr_assert(mi);
		mi->in = in;
	}
	f.blocks.data[0].succ[0] = f.blocks.data[0].succ[1] = f.blocks.data[0].succ[2] = -1;
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_hazard(&f, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
	int n = 0, seen = 0;
	for (size_t i = 0; i < f.insns.len; i++) {
		const IsaInsn *in = &f.insns.data[i].in;
		if (in->op == ISA_S_NOP) {
			cr_assert_eq(seen, 1, "a wait before the first instruction");
			n += (int)in->ops[0].imm + 1;
		} else {
			seen++;
		}
	}
	cr_assert_eq(seen, 2);
	mir_free(&f);
	return n;
}

Test(amd_acc, acc_cd_wait_states_are_llvms)
{
	static const struct { ta_target t; const char *mfma; int raw, war; } tg[] = {
		{TA_TARGET_GFX90A, "v_mfma_f32_16x16x16f16", 11, 7},
		{TA_TARGET_GFX942, "v_mfma_f32_16x16x16_f16", 7, 3},
	};
	for (int i = 0; i < 2; i++) {
		char acc[128], other[128], chain[128];
		snprintf(acc, sizeof acc, "%s a[0:3], v[4:5], v[6:7], a[0:3]", tg[i].mfma);
		snprintf(other, sizeof other, "%s a[4:7], v[4:5], v[6:7], a[0:3]", tg[i].mfma);
		snprintf(chain, sizeof chain, "%s a[0:3], v[8:9], v[6:7], a[0:3]", tg[i].mfma);
		/* reading or overwriting an AGPR result (RAW, WAW) */
		cr_assert_eq(waits(tg[i].t, acc, "v_accvgpr_read_b32 v8, a0"), tg[i].raw);
		cr_assert_eq(waits(tg[i].t, acc, "v_accvgpr_write_b32 a1, v9"), tg[i].raw);
		/* overwriting the C an MFMA still reads (WAR) */
		cr_assert_eq(waits(tg[i].t, other, "v_accvgpr_write_b32 a0, v9"), tg[i].war);
		/* a cleared AGPR read as C: 2 */
		cr_assert_eq(waits(tg[i].t, "v_accvgpr_write_b32 a0, 0", acc), 2);
		/* the accumulation chain (same C and D): none */
		cr_assert_eq(waits(tg[i].t, acc, chain), 0);
		/* an unrelated AGPR: none */
		cr_assert_eq(waits(tg[i].t, acc, "v_accvgpr_read_b32 v8, a4"), 0);
	}
}

/* ---- NVIDIA ------------------------------------------------------------------- */

#define PTXAS "/usr/local/cuda/bin/ptxas"

/* i8 gemms on sm_80/sm_90a: m16n8k32.s8 MMAs (8 column groups per k-step
 * for each register strip), the 128x128 i32 accumulator in registers (16
 * KiB of shared memory), and ptxas accepts the code. */
Test(amd_acc, nvidia_i8_gemm_ptx)
{
	cr_assert(access(PTXAS, X_OK) == 0, PTXAS " is missing: install the CUDA toolkit (CI needs ptxas)");
	static const char *const sms[] = {"sm_80", "sm_90a"};
	static const struct { const char *file, *shared; int mmas; } k[] = {
		{"i8_gemm.tile", "16384 bytes of dynamic shared memory", 32},
		{"i8_gemm_tt.tile", "24832 bytes of dynamic shared memory", 16},
	};
	char *dir = tmpdir();
	for (int s = 0; s < 2; s++)
		for (int f = 0; f < 2; f++) {
			char ptx[1100], cmd[4096];
			snprintf(ptx, sizeof ptx, "%s/%d.%s.ptx", dir, f, sms[s]);
			snprintf(cmd, sizeof cmd, "'%s' compile '%s/tests/amd/%s' --target=%s -o '%s' 2>&1", env("TILEASM"),
				 env("TILEASM_SRCDIR"), k[f].file, sms[s], ptx);
			int st;
			char *log = run_cmd(cmd, &st);
			cr_assert_eq(st, 0, "%s on %s:\n%s", k[f].file, sms[s], log);
			free(log);
			size_t len;
			char *text = read_file(ptx, &len);
			cr_assert(text);
			int n = count(text, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 ");
			cr_assert_eq(n, k[f].mmas, "%s on %s: %d m16n8k32 MMAs", k[f].file, sms[s], n);
			cr_assert(strstr(text, k[f].shared), "%s on %s: shared memory", k[f].file, sms[s]);
			free(text);
			snprintf(cmd, sizeof cmd, PTXAS " -arch=%s '%s' -o '%s.cubin' 2>&1", sms[s], ptx, ptx);
			log = run_cmd(cmd, &st);
			cr_assert_eq(st, 0, "ptxas %s for %s:\n%s", k[f].file, sms[s], log);
			free(log);
		}
	rmdir_all(dir);
}
