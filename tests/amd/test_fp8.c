/* test_fp8.c — the four fp8 dtypes on the AMD backend (docs/amd-backend.md,
 * "fp8"), checked by execution on the emulator against the interpreter:
 *  - conversions: every byte pattern decoded and a dense sweep of floats
 *    (every 8-bit mantissa step over the whole range, the f32 neighbours
 *    of every tie, subnormals, overflow, infinities, NaNs) encoded, bit
 *    for bit, on gfx1100/gfx90a/gfx942 for each dtype;
 *  - gemm with fp8 inputs at a ragged and a multi-tile shape;
 *  - gfx942 with FNUZ inputs uses the fp8 MFMA, LLVM decodes every byte
 *    and the gemm does not spill;
 *  - NVIDIA targets reject the FNUZ (AMD-only) dtypes at the kernel. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "amd.h"
#include "dtype.h"
#include "emu.h"
#include "interp.h"
#include "testutil.h"

static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942"};
static const char *const fp8s[] = {"fp8e4m3", "fp8e5m2", "fp8e4m3fnuz", "fp8e5m2fnuz"};
#define NT 3

/* tests/amd/<file> with every "fp8e4m3fnuz" replaced by dtype. */
static char *kernel_text(const char *file, const char *dtype)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/amd/%s", env("TILEASM_SRCDIR"), file);
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text, "cannot read %s", path);
	const char *key = "fp8e4m3fnuz";
	StrBuf sb = {0};
	const char *p = text, *q;
	while ((q = strstr(p, key))) {
		sb_putn(&sb, p, (size_t)(q - p));
		sb_puts(&sb, dtype);
		p = q + strlen(key);
	}
	sb_puts(&sb, p);
	free(text);
	return sb_take(&sb);
}

/* The text written to dir/name (returns the path). */
static char *write_tmp(const char *dir, const char *name, const char *text)
{
	char *path = malloc(1024);
	snprintf(path, 1024, "%s/%s", dir, name);
	cr_assert_eq(write_file_atomic(path, text, strlen(text)), 0, "cannot write %s", path);
	return path;
}

static Module *load(const char *text) { return load_text("fp8.tile", text, NULL, 0); }

/* ---- conversions, bit for bit ------------------------------------------- */

enum { NA = 32768, NX = 256, NBUF = 6 };

/* f32 inputs: (1 + m/256) * 2^e for every m < 256 and e in [-28, 19]
 * (every tie of a 2- and 3-bit mantissa, subnormal steps of all four
 * formats, underflow to zero, overflow past 57344), the f32 neighbours of
 * (1 + j/32) * 2^e (just off each tie), both signs, then specials. */
static void sweep(float *a)
{
	int n = 0;
	for (int e = -28; e <= 19; e++)
		for (int m = 0; m < 256; m++) {
			float v = ldexpf(1.0f + (float)m / 256.0f, e);
			a[n++] = v;
			a[n++] = -v;
		}
	for (int e = -28; e <= 19; e++)
		for (int j = 0; j < 32; j++) {
			float v = ldexpf(1.0f + (float)j / 32.0f, e);
			a[n++] = nextafterf(v, INFINITY);
			a[n++] = -nextafterf(v, 0);
		}
	static const uint32_t specials[] = {
		0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7fe00000u,
		0xffa00000u, 0x00000001u, 0x807fffffu, 0x00400000u, 0x7f7fffffu, 0xff7fffffu,
		0x43e00000u, 0x43e80000u, 0x43e7ffffu, 0x43700000u, 0x43780000u, 0x43780001u, /* 448, 464, 240, 248 */
		0x47600000u, 0x47700000u, 0x476fffffu, 0x47700001u, /* 57344, 61440 */
	};
	for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
		a[n++] = dt_f32_from_bits(specials[i]);
	uint32_t x = 12345; /* the rest: random f32 patterns in [2^-30, 2^20) */
	while (n < NA) {
		x = x * 1664525u + 1013904223u;
		uint32_t u = (x & 0x807fffffu) | ((97u + (x >> 8) % 50u) << 23);
		a[n++] = dt_f32_from_bits(u);
	}
}

static void run_interp(Module *m, void **bufs, const size_t *bytes)
{
	InterpArg args[NBUF];
	memset(args, 0, sizeof args);
	for (int i = 0; i < NBUF; i++)
		args[i].data = bufs[i], args[i].bytes = bytes[i];
	Diag d;
	diag_init(&d);
	cr_assert_eq(interp_run(m, 0, args, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
}

/* Compiles m for target t and runs kernel 0 (all-tensor parameters) on
 * the emulator with grid[0] blocks. */
static void run_emu(Module *m, const char *tname, uint32_t blocks, void **bufs, const size_t *bytes, int nbuf)
{
	Target t;
	cr_assert_eq(target_parse(tname, &t), 0);
	Diag d;
	diag_init(&d);
	AmdOutput out;
	memset(&out, 0, sizeof out);
	cr_assert_eq(amd_compile(m, &t, &out, &d), 0, "%s: %s", tname, diag_text(&d));
	const AmdKernelInfo *ki = &out.kernels[0];
	cr_assert_eq(ki->nparams, nbuf);
	EmuDevice *dev = emu_create(t.id);
	cr_assert(dev);
	cr_assert_eq(emu_load(dev, out.code_object, out.code_object_len, &d), 0, "%s", diag_text(&d));
	uint8_t *karg = calloc(1, ki->kernarg_size + 8);
	uint64_t addr[NBUF];
	for (int i = 0; i < nbuf; i++) {
		addr[i] = emu_alloc(dev, bytes[i]);
		cr_assert(addr[i]);
		cr_assert_eq(emu_write(dev, addr[i], bufs[i], bytes[i], &d), 0, "%s", diag_text(&d));
		memcpy(karg + ki->param_offset[i], &addr[i], 8);
	}
	uint32_t grid[3] = {blocks, 1, 1}, block[3] = {(uint32_t)ki->threads, 1, 1};
	cr_assert_eq(emu_launch(dev, ki->name, grid, block, karg, ki->kernarg_size, 0, &d), 0, "%s: %s", tname,
		     diag_text(&d));
	for (int i = 0; i < nbuf; i++)
		cr_assert_eq(emu_read(dev, addr[i], bufs[i], bytes[i], &d), 0, "%s", diag_text(&d));
	free(karg);
	emu_destroy(dev);
	amd_output_free(&out);
	diag_free(&d);
}

Test(amd_fp8, conversions_match_the_interpreter_bit_for_bit)
{
	float *a = malloc(sizeof(float) * NA);
	sweep(a);
	uint8_t x[NX];
	for (int i = 0; i < NX; i++)
		x[i] = (uint8_t)i;
	size_t bytes[NBUF] = {NA * 4, NA, NA * 4, NX, NX * 4, NX};
	void *want[NBUF], *got[NBUF];
	for (int i = 0; i < NBUF; i++)
		want[i] = malloc(bytes[i]), got[i] = malloc(bytes[i]);
	int nchecked = 0;
	for (size_t f = 0; f < sizeof fp8s / sizeof fp8s[0]; f++) {
		char *text = kernel_text("fp8_convert.tile", fp8s[f]);
		Module *m = load(text);
		for (int i = 0; i < NBUF; i++)
			memset(want[i], 0xA5, bytes[i]);
		memcpy(want[0], a, bytes[0]);
		memcpy(want[3], x, bytes[3]);
		run_interp(m, want, bytes);
		for (int t = 0; t < NT; t++) {
			for (int i = 0; i < NBUF; i++)
				memset(got[i], 0xA5, bytes[i]);
			memcpy(got[0], a, bytes[0]);
			memcpy(got[3], x, bytes[3]);
			run_emu(m, targets[t], NA / 256, got, bytes, NBUF);
			const uint8_t *P = got[1], *WP = want[1], *Z = got[5], *WZ = want[5];
			const uint32_t *B = got[2], *WB = want[2], *Y = got[4], *WY = want[4];
			for (int i = 0; i < NA; i++) {
				cr_assert_eq(P[i], WP[i], "%s on %s: %s(%a = 0x%08x) is 0x%02x, the interpreter says 0x%02x",
					     fp8s[f], targets[t], fp8s[f], (double)a[i], dt_f32_bits(a[i]), P[i], WP[i]);
				cr_assert_eq(B[i], WB[i], "%s on %s: f32(%s(0x%08x)) is 0x%08x, the interpreter says 0x%08x",
					     fp8s[f], targets[t], fp8s[f], dt_f32_bits(a[i]), B[i], WB[i]);
			}
			for (int i = 0; i < NX; i++) {
				cr_assert_eq(Y[i], WY[i], "%s on %s: byte 0x%02x decodes to 0x%08x, the interpreter says 0x%08x",
					     fp8s[f], targets[t], i, Y[i], WY[i]);
				cr_assert_eq(Z[i], WZ[i], "%s on %s: x + x * 0.5 for x = 0x%02x is 0x%02x, the interpreter says "
					     "0x%02x", fp8s[f], targets[t], i, Z[i], WZ[i]);
			}
			nchecked++;
		}
		ir_module_free(m);
		free(text);
	}
	cr_assert_eq(nchecked, 12);
	for (int i = 0; i < NBUF; i++)
		free(want[i]), free(got[i]);
	free(a);
}

/* ---- gemm ------------------------------------------------------------------ */

/* Every byte pattern (NaN, infinities, max, subnormals, both zeros) as a
 * gemm operand: C[m][n] = sum_k A[m][k] * B[k][n] with A and B holding
 * all 256 patterns in different orders.  NaN and inf results must agree
 * exactly; finite ones within the f32 rounding of another summation order
 * (1e-6 of the sum of |products|, computed here in double). */
Test(amd_fp8, gemm_of_every_byte_pattern)
{
	static const char src[] =
		"kernel g(A: fp8e4m3fnuz[64, 32], B: fp8e4m3fnuz[32, 64], C: f32[64, 64]) grid(1) threads(128) {\n"
		"  A_s = shared fp8e4m3fnuz[64, 32]\n"
		"  B_s = shared fp8e4m3fnuz[32, 64]\n"
		"  C_f = fragment f32[64, 64]\n"
		"  copy(A, A_s)\n"
		"  copy(B, B_s)\n"
		"  gemm(A_s, B_s, C_f, clear=true)\n"
		"  copy(C_f, C)\n"
		"}\n";
	enum { M = 64, N = 64, K = 32 };
	uint8_t a[M * K], b[K * N];
	/* A row m: patterns 4m.. (mod 256) in k order; B column n: a
	 * different walk, so each pattern meets many partners */
	for (int m = 0; m < M; m++)
		for (int k = 0; k < K; k++)
			a[m * K + k] = (uint8_t)(m * 4 + k * 67);
	for (int k = 0; k < K; k++)
		for (int n = 0; n < N; n++)
			b[k * N + n] = (uint8_t)(n * 4 + k * 8 + 1);
	for (size_t f = 0; f < sizeof fp8s / sizeof fp8s[0]; f++) {
		StrBuf sb = {0};
		const char *p = src, *q;
		while ((q = strstr(p, "fp8e4m3fnuz"))) {
			sb_putn(&sb, p, (size_t)(q - p));
			sb_puts(&sb, fp8s[f]);
			p = q + strlen("fp8e4m3fnuz");
		}
		sb_puts(&sb, p);
		char *text = sb_take(&sb);
		Module *m = load(text);
		DType dt = (DType)m->bufs.data[0].dtype;
		float want[M * N], got[M * N];
		size_t bytes[3] = {sizeof a, sizeof b, sizeof want};
		void *wb[3] = {a, b, want}, *gb[3];
		uint8_t a2[M * K], b2[K * N];
		InterpArg args[3];
		memset(args, 0, sizeof args);
		for (int i = 0; i < 3; i++)
			args[i].data = wb[i], args[i].bytes = bytes[i];
		Diag d;
		diag_init(&d);
		cr_assert_eq(interp_run(m, 0, args, &d), 0, "%s", diag_text(&d));
		diag_free(&d);
		for (int t = 0; t < NT; t++) {
			memcpy(a2, a, sizeof a), memcpy(b2, b, sizeof b);
			gb[0] = a2, gb[1] = b2, gb[2] = got;
			run_emu(m, targets[t], 1, gb, bytes, 3);
			int nnan = 0;
			for (int i = 0; i < M; i++)
				for (int j = 0; j < N; j++) {
					double bound = 0;
					for (int k = 0; k < K; k++)
						bound += fabs(dt_to_double(dt, &a[i * K + k]) * dt_to_double(dt, &b[k * N + j]));
					float w = want[i * N + j], g = got[i * N + j];
					bool ok = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabs((double)g - w) <= 1e-6 * bound;
					nnan += isnan(w);
					cr_assert(ok, "%s on %s: C[%d][%d] = %a, the interpreter says %a", fp8s[f], targets[t], i, j,
						  (double)g, (double)w);
				}
			cr_assert_gt(nnan, 0, "the patterns include NaN");
		}
		ir_module_free(m);
		free(text);
	}
}

/* The gemm against the interpreter with `tileasm run` (random inputs; the
 * f32 tolerance allows another summation order): fp8_gemm.tile at a ragged
 * shape inside one tile and at 2x2 tiles of two K steps each,
 * fp8_gemm_tt.tile (transposed operands) at a ragged multi-tile shape. */
Test(amd_fp8, gemm_matches_the_interpreter)
{
	static const char *const dts[] = {"fp8e4m3", "fp8e4m3fnuz", "fp8e5m2fnuz"};
	static const struct { const char *file, *args; } runs[] = {
		{"fp8_gemm.tile", "--arg M=70 --arg N=100 --arg K=40"},
		{"fp8_gemm.tile", "--arg M=256 --arg N=256 --arg K=64"},
		{"fp8_gemm_tt.tile", "--arg M=130 --arg N=100 --arg K=70 --arg s=0.75"},
	};
	char *dir = tmpdir();
	for (size_t f = 0; f < sizeof dts / sizeof dts[0]; f++)
		for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
			char *text = kernel_text(runs[r].file, dts[f]), name[64];
			snprintf(name, sizeof name, "%s-%s", dts[f], runs[r].file);
			char *path = write_tmp(dir, name, text);
			for (int t = 0; t < NT; t++) {
				char cmd[2048];
				snprintf(cmd, sizeof cmd, "'%s' run '%s' --backend=emu --target=%s %s 2>&1", env("TILEASM"), path,
					 targets[t], runs[r].args);
				int st;
				char *log = run_cmd(cmd, &st);
				cr_assert(st == 0 && strstr(log, "PASS") && strstr(log, "MFMA/WMMA"), "%s on %s (%s):\n%s", name,
					  targets[t], runs[r].args, log);
				cr_assert_null(strstr(log, " 0 MFMA/WMMA"), "%s on %s: no matrix instructions ran:\n%s", name,
					       targets[t], log);
				free(log);
			}
			free(path);
			free(text);
		}
	rmdir_all(dir);
}

/* gfx942 with FNUZ inputs runs the fp8 MFMA (bf8 for e5m2), other fp8
 * gemms the f16 matrix instructions; no gemm spills; LLVM decodes every
 * byte of every fp8 kernel. */
Test(amd_fp8, gemm_instructions_spills_and_decoding)
{
	cr_assert(access("/usr/bin/llvm-objdump-19", X_OK) == 0,
		  "oracle /usr/bin/llvm-objdump-19 is missing: install LLVM 19 (llvm-19)");
	char *dir = tmpdir();
	int ndecoded = 0;
	for (size_t f = 0; f < sizeof fp8s / sizeof fp8s[0]; f++)
		for (int k = 0; k < 2; k++) {
			char *text = kernel_text(k ? "fp8_gemm.tile" : "fp8_convert.tile", fp8s[f]), name[64];
			snprintf(name, sizeof name, "%s-%s.tile", k ? "gemm" : "conv", fp8s[f]);
			char *path = write_tmp(dir, name, text);
			for (int t = 0; t < NT; t++) {
				char cmd[2048];
				int st;
				snprintf(cmd, sizeof cmd, "'%s' compile '%s' --target=%s -o '%s.%s.co' --dump-isa 2>&1",
					 env("TILEASM"), path, targets[t], path, targets[t]);
				char *isa = run_cmd(cmd, &st);
				cr_assert_eq(st, 0, "%s", isa);
				bool fnuz942 = t == 2 && strstr(fp8s[f], "fnuz");
				if (k) {
					static const char *const f16mma[NT] = {"v_wmma_f32_16x16x16_f16", "v_mfma_f32_16x16x16f16",
										"v_mfma_f32_16x16x16_f16"};
					const char *want = !fnuz942 ? f16mma[t]
						: strstr(fp8s[f], "e4m3") ? "v_mfma_f32_16x16x32_fp8_fp8" : "v_mfma_f32_16x16x32_bf8_bf8";
					cr_assert(strstr(isa, want), "%s gemm on %s: no %s", fp8s[f], targets[t], want);
					cr_assert(strstr(isa, "scratch 0 bytes"), "%s gemm on %s spills:\n%.300s", fp8s[f],
						  targets[t], strstr(isa, "; kernel") ? strstr(isa, "; kernel") : isa);
				} else if (fnuz942) {
					cr_assert(strstr(isa, strstr(fp8s[f], "e4m3") ? "v_cvt_pk_fp8_f32" : "v_cvt_pk_bf8_f32"));
					cr_assert(strstr(isa, strstr(fp8s[f], "e4m3") ? "v_cvt_f32_fp8" : "v_cvt_f32_bf8"));
				}
				free(isa);
				snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=%s '%s.%s.co' 2>&1", targets[t], path,
					 targets[t]);
				char *dis = run_cmd(cmd, &st);
				cr_assert_eq(st, 0, "%s", dis);
				cr_assert_null(strstr(dis, "<unknown>"), "%s %s on %s: undecodable bytes", name, fp8s[f],
					       targets[t]);
				cr_assert(strstr(dis, "s_endpgm"));
				free(dis);
				ndecoded++;
			}
			free(path);
			free(text);
		}
	cr_assert_eq(ndecoded, 24);
	rmdir_all(dir);
}

/* ---- NVIDIA ---------------------------------------------------------------- */

Test(amd_fp8, nvidia_rejects_fnuz_at_the_kernel)
{
	char *dir = tmpdir();
	for (int k = 0; k < 2; k++) {
		const char *dt = k ? "fp8e5m2fnuz" : "fp8e4m3fnuz";
		char *text = kernel_text("fp8_convert.tile", dt), name[64];
		snprintf(name, sizeof name, "conv-%s.tile", dt);
		char *path = write_tmp(dir, name, text);
		for (int t = 0; t < 2; t++) {
			char cmd[2048], want[256];
			int st;
			snprintf(cmd, sizeof cmd, "'%s' compile '%s' --target=%s -o '%s.ptx' 2>&1", env("TILEASM"), path,
				 t ? "sm_90a" : "sm_80", path);
			char *log = run_cmd(cmd, &st);
			snprintf(want, sizeof want,
				 "%s:4:1: error: kernel 'conv' uses %s, which is an AMD format; NVIDIA targets support "
				 "fp8e4m3 and fp8e5m2", path, dt);
			cr_assert_eq(st, 1, "%s", log);
			cr_assert(strstr(log, want), "expected '%s', got:\n%s", want, log);
			snprintf(cmd, sizeof cmd, "%s.ptx", path);
			cr_assert_neq(access(cmd, F_OK), 0, "no output file on error");
			free(log);
		}
		free(path);
		free(text);
	}
	/* The OCP types stay accepted on sm_90a. */
	char *text = kernel_text("fp8_convert.tile", "fp8e4m3"), cmd[2048];
	char *path = write_tmp(dir, "conv-ocp.tile", text);
	snprintf(cmd, sizeof cmd, "'%s' compile '%s' --target=sm_90a -o '%s.ptx' 2>&1", env("TILEASM"), path, path);
	int st;
	char *log = run_cmd(cmd, &st);
	cr_assert_eq(st, 0, "%s", log);
	free(log), free(path), free(text);
	rmdir_all(dir);
}
