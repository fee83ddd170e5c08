/* test_lang.c — the expression language (docs/tile-ir.md): bit operations,
 * shifts, math functions, float modulo, clamp, the lazy if_then_else.
 *
 * interp_*: hand-computed values from the interpreter, which defines the
 * semantics.  backends: every tests/lang/NAME.tile on every target —
 * `tileasm run` against the interpreter for each "# run: OPTIONS" line
 * (interpreter, then the emulator on gfx1100, gfx90a and gfx942, each must
 * print PASS), and the PTX for sm_80 and sm_90a through ptxas (with the
 * line's -D options); a "# refuse: MESSAGE" line instead requires every
 * target to refuse the kernel with MESSAGE (%s: the target name),
 * "# refuse-on: TARGET...: MESSAGE" only those, and "# not on: TARGET...
 * (why)" leaves targets out. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../interp/harness.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

static Module *snip(const char *text) { return h_load("snip.tile", text, NULL, 0); }

Test(interp, shifts_and_bit_operations)
{
	Module *m = snip("kernel k(a: i32, n: i32, Oi: i32[12], Ou: u8[4], Ob: i8[2], Ol: i64[3], Pb: bool[2])\n"
	                 "    grid(1) threads(32) {\n"
	                 "  Oi[0] = a >> 1\n"
	                 "  Oi[1] = a << 2\n"
	                 "  Oi[2] = 1 << 31\n"
	                 "  Oi[3] = 1 << n\n"          /* n = 32: out of range, 0 */
	                 "  Oi[4] = a >> n + 8\n"      /* 40: sign fill */
	                 "  Oi[5] = 7 >> n\n"
	                 "  Oi[6] = a << -1\n"
	                 "  Oi[7] = a >> -1\n"
	                 "  Oi[8] = 1 | 2 ^ 3 & 5\n"   /* 1 | (2 ^ (3 & 5)) */
	                 "  Oi[9] = 1 << 2 + 1\n"      /* 1 << 3 */
	                 "  Oi[10] = 6 & 3 << 1\n"     /* 6 & 6 */
	                 "  Oi[11] = ~a ^ 0xff\n"
	                 "  Ou[0] = ~u8(5)\n"
	                 "  Ou[1] = u8(200) >> 3\n"
	                 "  Ou[2] = u8(200) << 1\n"
	                 "  Ou[3] = u8(200) >> u8(n)\n"
	                 "  Ob[0] = i8(100) << 1\n"
	                 "  Ob[1] = i8(-100) >> 3\n"
	                 "  Ol[0] = i64(1) << 40\n"
	                 "  Ol[1] = i64(1) << i64(n) * 2\n"
	                 "  Ol[2] = i64(a) >> 63\n"
	                 "  Pb[0] = a < 0 & n > 0\n"
	                 "  Pb[1] = a < 0 ^ n > 0\n"
	                 "}\n");
	int32_t Oi[12];
	uint8_t Ou[4];
	int8_t Ob[2];
	int64_t Ol[3];
	uint8_t Pb[2];
	Args a = {.m = m};
	h_tensor(&a, "Oi", Oi, sizeof Oi);
	h_tensor(&a, "Ou", Ou, sizeof Ou);
	h_tensor(&a, "Ob", Ob, sizeof Ob);
	h_tensor(&a, "Ol", Ol, sizeof Ol);
	h_tensor(&a, "Pb", Pb, sizeof Pb);
	h_int(&a, "a", -7);
	h_int(&a, "n", 32);
	h_run(&a, NULL);
	static const int32_t wi[12] = {-4, -28, INT32_MIN, 0, -1, 0, 0, -1, 3, 8, 6, 6 ^ 0xff};
	for (int i = 0; i < 12; i++)
		cr_expect_eq(Oi[i], wi[i], "Oi[%d] = %d, want %d", i, Oi[i], wi[i]);
	cr_expect_eq(Ou[0], 250);
	cr_expect_eq(Ou[1], 25);
	cr_expect_eq(Ou[2], 144);
	cr_expect_eq(Ou[3], 0);
	cr_expect_eq(Ob[0], -56);
	cr_expect_eq(Ob[1], -13);
	cr_expect_eq(Ol[0], (int64_t)1 << 40);
	cr_expect_eq(Ol[1], 0, "a count of 64 shifts everything out");
	cr_expect_eq(Ol[2], -1);
	cr_expect_eq(Pb[0], 1);
	cr_expect_eq(Pb[1], 0);
	ir_module_free(m);
}

/* reinterpret and i4/u4 by hand: bit patterns, nibble order, 4-bit wrap
 * and saturation. */
Test(interp, reinterpret_and_int4_values)
{
	Module *m = snip("kernel k(W: i4[5], U: u4[4], Oi: i32[4], Oh: i16[2], Of: f32[2], Oq: i4[4], Ou: u4[2])\n"
	                 "    grid(1) threads(32) {\n"
	                 "  Oi[0] = reinterpret(i32, 1.0)\n"
	                 "  Oi[1] = i32(W[0]) * 100 + i32(W[1]) * 10 + i32(W[4])\n"
	                 "  Oi[2] = i32(U[3])\n"
	                 "  Oi[3] = i32(W[2] + W[3])\n"         /* 7 + 7 wraps to -2 */
	                 "  Oh[0] = reinterpret(i16, f16(-2.0))\n"
	                 "  Oh[1] = reinterpret(i16, bf16(1.0))\n"
	                 "  Of[0] = reinterpret(f32, 0x40490fdb)\n"
	                 "  Of[1] = f32(reinterpret(i4, U[3]))\n"  /* 15 -> -1 */
	                 "  Oq[0] = f32(100.0)\n"                       /* saturates to 7 */
	                 "  Oq[1] = i32(-100)\n"                       /* wraps: -100 & 15 = 12 -> -4 */
	                 "  Oq[2] = W[1]\n"
	                 "  Oq[3] = i4(-8)\n"
	                 "  Ou[0] = f32(-3.5)\n"                       /* saturates to 0 */
	                 "  Ou[1] = i32(31)\n"                         /* wraps to 15 */
	                 "}\n");
	uint8_t W[4] = {0x9e, 0x77, 0x05, 0}; /* W = -2, -7, 7, 7, 5 */
	uint8_t U[4] = {0, 0xf0, 0, 0};        /* U[3] = 15 */
	int32_t Oi[4];
	int16_t Oh[2];
	float Of[2];
	uint8_t Oq[4] = {0}, Ou[4] = {0};
	Args a = {.m = m};
	h_tensor(&a, "W", W, sizeof W);
	h_tensor(&a, "U", U, sizeof U);
	h_tensor(&a, "Oi", Oi, sizeof Oi);
	h_tensor(&a, "Oh", Oh, sizeof Oh);
	h_tensor(&a, "Of", Of, sizeof Of);
	h_tensor(&a, "Oq", Oq, sizeof Oq);
	h_tensor(&a, "Ou", Ou, sizeof Ou);
	h_run(&a, NULL);
	cr_expect_eq(Oi[0], 0x3f800000);
	cr_expect_eq(Oi[1], -2 * 100 + -7 * 10 + 5);
	cr_expect_eq(Oi[2], 15);
	cr_expect_eq(Oi[3], -2);
	cr_expect_eq((uint16_t)Oh[0], 0xc000);
	cr_expect_eq((uint16_t)Oh[1], 0x3f80);
	cr_expect_eq(Of[0], 3.14159274f);
	cr_expect_eq(Of[1], -1.0f);
	cr_expect_eq(Oq[0], 0x07 | 0xc0, "Oq[0..1] = 7, -4: byte %#x", Oq[0]);
	cr_expect_eq(Oq[1], 0x89, "Oq[2..3] = -7, -8: byte %#x", Oq[1]);
	cr_expect_eq(Ou[0], 0xf0, "Ou = 0, 15: byte %#x", Ou[0]);
	ir_module_free(m);
}

Test(interp, math_functions)
{
	Module *m = snip("kernel k(x: f32, O: f32[22]) grid(1) threads(32) {\n"
	                 "  O[0] = floor(x)\n"
	                 "  O[1] = ceil(x)\n"
	                 "  O[2] = round(x)\n"          /* half to even */
	                 "  O[3] = round(x + 1.0)\n"
	                 "  O[4] = pow(2.0, 10.0)\n"
	                 "  O[5] = pow(x, 3.0)\n"
	                 "  O[6] = pow(x, 0.5)\n"       /* NaN */
	                 "  O[7] = clamp(5.0, 0.0, 3.0)\n"
	                 "  O[8] = clamp(nan, 0.0, 3.0)\n"
	                 "  O[9] = fmod(-7.0, 2.0)\n"
	                 "  O[10] = -7.0 % 2.0\n"
	                 "  O[11] = 7.0 % -2.0\n"
	                 "  O[12] = sigmoid(0.0)\n"
	                 "  O[13] = erf(0.5)\n"
	                 "  O[14] = sin(1.5707963267948966)\n"
	                 "  O[15] = cos(0.0)\n"
	                 "  O[16] = f32(clamp(-9, -3, 2))\n"
	                 "  O[17] = round(-x)\n"
	                 "  O[18] = 5.5 % 2.0\n"
	                 "  O[19] = fmod(5.5, -2.0)\n"
	                 "  O[20] = pow(x, 0.0)\n"
	                 "  O[21] = if_then_else(x < 0.0, 1.0, 2.0)\n"
	                 "}\n");
	float O[22];
	Args a = {.m = m};
	h_tensor(&a, "O", O, sizeof O);
	h_float(&a, "x", -2.5);
	h_run(&a, NULL);
	static const float w[22] = {-3, -2, -2, -2, 1024, -15.625f, NAN, 3, NAN, -1, 1, -1, 0.5f,
	                            0.52049987781304654f, 1, 1, -3, 2, 1.5f, 1.5f, 1, 1};
	for (int i = 0; i < 22; i++) {
		bool ok = isnan(w[i]) ? isnan(O[i]) : O[i] == w[i];
		cr_expect(ok, "O[%d] = %.9g, want %.9g", i, O[i], w[i]);
	}
	ir_module_free(m);
}

Test(interp, if_then_else_evaluates_only_the_chosen_side)
{
	/* the same guard with select is an out-of-bounds error (test_snippets.c) */
	Module *m = snip("kernel k(Out: f32[N]) grid(1) threads(32) {\n"
	                 "  let i = 5\n"
	                 "  Out[0] = if_then_else(i < N, Out[i], 7.0)\n"
	                 "  Out[1] = if_then_else(i >= N, 8.0, Out[i])\n"
	                 "}\n");
	float Out[4] = {0};
	Args a = {.m = m};
	h_tensor(&a, "Out", Out, sizeof Out);
	h_int(&a, "N", 4);
	h_run(&a, NULL);
	cr_expect_eq(Out[0], 7.0f);
	cr_expect_eq(Out[1], 8.0f);
	ir_module_free(m);
}

Test(interp, thread_level_code)
{
	/* threads(16, 4): tx fastest; a var keeps per-thread state through a
	 * loop with a per-thread trip count and a break; shuffles of the 32-lane
	 * warp (own value when the source lane is outside it) */
	Module *m = snip("kernel k(A: f32[64], O: f32[64], P: i32[64], Q: i32[64], V: f32[2]) grid(1) threads(16, 4) {\n"
	                 "  var acc: f32 = 0.0\n"
	                 "  var n = 0\n"
	                 "  V[0] = acc\n"
	                 "  if ty < 4 {\n"
	                 "    let i = tx + 16 * ty\n"
	                 "    acc = A[i]\n"
	                 "    serial j in 0 .. tx % 4 + 1 {\n"
	                 "      if j == 2 { break }\n"
	                 "      acc = acc * 2.0\n"
	                 "      n = n + 1\n"
	                 "    }\n"
	                 "    let s1 = acc + shfl_xor(acc, 1)\n"
	                 "    let s2 = s1 + shfl_xor(s1, 16)\n"
	                 "    O[i] = s2 + shfl_down(s2, 8)\n"
	                 "    P[i] = shfl_up(i, 3) * 100 + shfl_idx(n, i + 5)\n"
	                 "    Q[i] = tz\n"
	                 "  }\n"
	                 "  acc = acc + 1.0\n"
	                 "  V[1] = acc\n"
	                 "}\n");
	float A[64], O[64], V[2];
	int32_t P[64], Q[64];
	for (int i = 0; i < 64; i++)
		A[i] = (float)(i % 7) - 3.0f;
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "O", O, sizeof O);
	h_tensor(&a, "P", P, sizeof P);
	h_tensor(&a, "Q", Q, sizeof Q);
	h_tensor(&a, "V", V, sizeof V);
	h_run(&a, NULL);
	float acc[64], s1[64], s2[64];
	int n[64];
	for (int i = 0; i < 64; i++) {
		int tx = i % 16, it = tx % 4 + 1 < 2 ? tx % 4 + 1 : 2;
		acc[i] = A[i] * (float)(1 << it);
		n[i] = it;
	}
	for (int i = 0; i < 64; i++)
		s1[i] = acc[i] + acc[i ^ 1];
	for (int i = 0; i < 64; i++)
		s2[i] = s1[i] + s1[i ^ 16];
	for (int i = 0; i < 64; i++) {
		int lane = i % 32, base = i - lane;
		float want = s2[i] + (lane + 8 < 32 ? s2[i + 8] : s2[i]);
		cr_expect_eq(O[i], want, "O[%d] = %g, want %g", i, O[i], want);
		int up = lane >= 3 ? i - 3 : i, idx = base + (i + 5) % 32;
		cr_expect_eq(P[i], up * 100 + n[idx], "P[%d] = %d, want %d", i, P[i], up * 100 + n[idx]);
		cr_expect_eq(Q[i], 0);
	}
	cr_expect_eq(V[0], 0.0f);
	cr_expect_eq(V[1], 1.0f, "the per-thread writes of acc are discarded at the end of the if");
	ir_module_free(m);
}

Test(interp, shuffle_from_a_thread_that_does_not_take_part)
{
	Module *m = snip("kernel k(O: f32[64]) grid(1) threads(64) {\n"
	                 "  if tx < 40 {\n"
	                 "    O[tx] = shfl_xor(f32(tx), 8)\n"
	                 "  }\n"
	                 "}\n");
	float O[64];
	Args a = {.m = m};
	h_tensor(&a, "O", O, sizeof O);
	char *out;
	cr_expect_neq(h_run(&a, &out), 0);
	cr_expect(strstr(out, "shfl_xor in thread 32 reads thread 40, which does not execute it"), "%s", out);
	free(out);
	ir_module_free(m);
}

/* ---- every backend against the interpreter -------------------------------- */

static const char *const amd_targets[] = {"gfx1100", "gfx90a", "gfx942"};
static const char *const all_targets[] = {"gfx1100", "gfx90a", "gfx942", "sm_80", "sm_90a"};

/* Runs cmd; returns its exit status and its output, stderr included (caller
 * frees; tests/common's run_out). */
static int run_merged(const char *cmd, char **out)
{
	char full[8192];
	snprintf(full, sizeof full, "%s 2>&1", cmd);
	return run_out(full, out);
}

/* The -D NAME=VALUE options of a run line. */
static void defines_of(const char *opts, char *out, size_t n)
{
	out[0] = 0;
	for (const char *p = opts; (p = strstr(p, "-D ")); p += 3) {
		const char *e = p + 3;
		while (*e && *e != ' ')
			e++;
		size_t len = strlen(out);
		snprintf(out + len, n - len, " %.*s", (int)(e - p), p);
	}
}

/* Does the line at p (up to its end or stop) name target as a word? */
static bool names_target(const char *p, const char *target, char stop)
{
	const char *eol = strchr(p, '\n'), *end = strchr(p, stop);
	if (!end || (eol && eol < end))
		end = eol;
	size_t n = strlen(target);
	for (const char *q = p; (q = strstr(q, target)) && (!end || q < end); q++)
		if (q[-1] == ' ' && (q[n] == ' ' || q[n] == '\n' || q[n] == stop))
			return true;
	return false;
}

/* "# not on: T1 T2 (why)" and "# refuse-on: T1 T2: MESSAGE": targets the
 * file does not run on */
static bool skips(const char *text, const char *target)
{
	const char *p = strstr(text, "# not on: "), *r = strstr(text, "# refuse-on: ");
	return (p && names_target(p + 9, target, '(')) || (r && names_target(r + 12, target, ':'));
}

static void check_file(const char *exe, const char *path)
{
	char *text = read_file(path, NULL);
	cr_assert(text, "cannot read %s", path);
	int nrun = 0;
	bool refuse = strstr(text, "# refuse: ") != NULL; /* then only the interpreter runs it */
	char cmd[4096], *out;
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char *eol = strchr(line, '\n');
		int len = eol ? (int)(eol - line) : (int)strlen(line);
		if (!strncmp(line, "# run: ", 7)) {
			char opts[512], defs[512];
			snprintf(opts, sizeof opts, "%.*s", len - 7, line + 7);
			defines_of(opts, defs, sizeof defs);
			nrun++;
			snprintf(cmd, sizeof cmd, "%s run %s --backend=interp %s", exe, path, opts);
			int rc = run_merged(cmd, &out);
			cr_expect(rc == 0 && strstr(out, "\nPASS"), "%s: interpreter failed:\n%s", cmd, out);
			free(out);
			if (refuse)
				continue;
			for (size_t t = 0; t < TA_ARRAY_LEN(amd_targets); t++) {
				if (skips(text, amd_targets[t]))
					continue;
				snprintf(cmd, sizeof cmd, "%s run %s --backend=emu --target=%s %s", exe, path, amd_targets[t],
				         opts);
				rc = run_merged(cmd, &out);
				cr_expect(rc == 0 && strstr(out, "\nPASS") && strstr(out, "emu: "), "%s: failed:\n%s", cmd, out);
				free(out);
			}
			for (int sm = 0; sm < 2; sm++) {
				const char *arch = sm ? "sm_90a" : "sm_80";
				if (skips(text, arch))
					continue;
				char ptx[] = "/tmp/tileasm-lang-ptx-XXXXXX";
				int fd = mkstemp(ptx);
				cr_assert(fd >= 0);
				close(fd);
				snprintf(cmd, sizeof cmd, "%s compile %s --target=%s%s -o %s", exe, path, arch, defs, ptx);
				rc = run_merged(cmd, &out);
				cr_expect(rc == 0, "%s: failed:\n%s", cmd, out);
				free(out);
				snprintf(cmd, sizeof cmd, PTXAS " -arch=%s %s -o /dev/null", arch, ptx);
				rc = run_merged(cmd, &out);
				cr_expect(rc == 0, "%s (%s): ptxas rejected the PTX:\n%s", path, arch, out);
				free(out);
				remove(ptx);
			}
		} else if (!strncmp(line, "# refuse-on: ", 13)) {
			const char *colon = strchr(line + 13, ':');
			cr_assert(colon && (!eol || colon < eol), "%s: '# refuse-on: TARGETS: MESSAGE'", path);
			char fmt[256], want[300];
			snprintf(fmt, sizeof fmt, "%.*s", (int)(len - (colon + 2 - line)), colon + 2);
			int nt = 0;
			for (size_t t = 0; t < TA_ARRAY_LEN(all_targets); t++) {
				if (!names_target(line + 12, all_targets[t], ':'))
					continue;
				nt++;
				snprintf(want, sizeof want, fmt, all_targets[t]);
				snprintf(cmd, sizeof cmd, "%s compile %s --target=%s -o /dev/null", exe, path, all_targets[t]);
				int rc = run_merged(cmd, &out);
				cr_expect(rc != 0 && strstr(out, want), "%s: want a refusal '%s', got (exit %d):\n%s", cmd, want, rc,
				          out);
				free(out);
			}
			cr_expect(nt > 0, "%s: refuse-on names no target", path);
		} else if (!strncmp(line, "# refuse: ", 10)) {
			char fmt[256], want[300];
			snprintf(fmt, sizeof fmt, "%.*s", len - 10, line + 10);
			for (size_t t = 0; t < TA_ARRAY_LEN(all_targets); t++) {
				snprintf(want, sizeof want, fmt, all_targets[t]);
				snprintf(cmd, sizeof cmd, "%s compile %s --target=%s -o /dev/null", exe, path, all_targets[t]);
				int rc = run_merged(cmd, &out);
				cr_expect(rc != 0 && strstr(out, want), "%s: want a refusal '%s', got (exit %d):\n%s", cmd, want, rc,
				          out);
				free(out);
			}
		}
	}
	cr_expect(nrun > 0, "%s has no '# run:' line", path);
	free(text);
}

Test(backends, lang_tiles_agree_with_the_interpreter, .timeout = 300)
{
	const char *exe = getenv("TILEASM"), *src = getenv("TILEASM_SRCDIR");
	cr_assert(exe && src, "TILEASM and TILEASM_SRCDIR must be set (meson test does)");
	struct stat st;
	cr_assert(stat(PTXAS, &st) == 0, PTXAS " is missing: install the CUDA toolkit (CI needs ptxas)");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/lang", src);
	DIR *dp = opendir(dir);
	cr_assert(dp, "cannot open %s", dir);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".tile"))
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		check_file(exe, path);
		n++;
	}
	closedir(dp);
	cr_expect_geq(n, 6, "expected the tests/lang tiles, found %d", n);
}

Test(interp, loop_steps)
{
	Module *m = snip("kernel k(lo: i32, hi: i32, Out: i32[4]) grid(1) threads(32) {\n"
	                 "  Out[0] = 0\n"
	                 "  serial i in lo .. hi step 7 { Out[0] = Out[0] * 3 + i }\n"
	                 "  Out[1] = 0\n"
	                 "  serial i in hi .. lo step -4 { Out[1] = Out[1] * 3 + i }\n"
	                 "  Out[2] = 0\n"
	                 "  unroll i in 0 .. 10 step 3 { Out[2] = Out[2] * 10 + i }\n"
	                 "  Out[3] = 0\n"
	                 "  serial i in hi .. lo step 2 { Out[3] = 1 }\n" /* empty */
	                 "}\n");
	static const int32_t cases[][2] = {{0, 40}, {-9, 13}, {5, 5}, {3, 4}, {-20, -1}, {10, 3}};
	for (size_t t = 0; t < TA_ARRAY_LEN(cases); t++) {
		int32_t lo = cases[t][0], hi = cases[t][1], Out[4], w0 = 0, w1 = 0;
		for (int32_t i = lo; i < hi; i += 7)
			w0 = w0 * 3 + i;
		for (int32_t i = hi; i > lo; i -= 4)
			w1 = w1 * 3 + i;
		Args a = {.m = m};
		h_tensor(&a, "Out", Out, sizeof Out);
		h_int(&a, "lo", lo);
		h_int(&a, "hi", hi);
		h_run(&a, NULL);
		cr_expect_eq(Out[0], w0, "lo %d hi %d: %d, want %d", lo, hi, Out[0], w0);
		cr_expect_eq(Out[1], w1, "lo %d hi %d: %d, want %d", lo, hi, Out[1], w1);
		cr_expect_eq(Out[2], 369, "0, 3, 6, 9");
		cr_expect_eq(Out[3], hi < lo ? 1 : 0);
	}
	ir_module_free(m);
}

Test(interp, dimension_expressions)
{
	/* symbols become arguments in order of first appearance, inside expressions too */
	Module *m = snip("kernel k(A: f32[M * 2, K * K], B: f32[ceildiv(M, 4), K]) grid(1) threads(32) {\n"
	                 "  B[0, 0] = A[2 * M - 1, K * K - 1]\n"
	                 "}\n");
	const Kernel *k = &m->kernels.data[0];
	cr_assert_eq(k->nargs, 4);
	cr_expect_str_eq(m->vars.data[k->args[2].var].name, "M");
	cr_expect_str_eq(m->vars.data[k->args[3].var].name, "K");
	float A[6 * 9], B[2 * 3] = {0};
	for (int i = 0; i < 54; i++)
		A[i] = (float)i;
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "B", B, sizeof B);
	h_int(&a, "M", 3);
	h_int(&a, "K", 3);
	int64_t dims[IR_MAX_RANK];
	cr_assert_eq(interp_tensor_dims(m, 0, a.args, 0, dims), 2);
	cr_expect(dims[0] == 6 && dims[1] == 9);
	cr_assert_eq(interp_tensor_dims(m, 0, a.args, 1, dims), 2);
	cr_expect(dims[0] == 1 && dims[1] == 3);
	h_run(&a, NULL);
	cr_expect_eq(B[0], 53.0f, "A[5, 8] is the last element");
	ir_module_free(m);
}

Test(interp, break_leaves_the_innermost_loop)
{
	Module *m = snip("kernel k(n: i32, Out: i32[3]) grid(1) threads(32) {\n"
	                 "  Out[0] = 0\n"
	                 "  serial i in 0 .. 100 {\n"
	                 "    if i == n { break }\n"
	                 "    Out[0] = Out[0] + i\n"
	                 "  }\n"
	                 "  Out[1] = 0\n"
	                 "  serial i in 0 .. 4 {\n"
	                 "    serial j in 0 .. 4 { if j > i { break } Out[1] = Out[1] + 1 }\n"
	                 "    Out[1] = Out[1] + 100\n"
	                 "  }\n"
	                 "  Out[2] = 0\n"
	                 "  serial i in 10 .. 0 step -1 { Out[2] = i if i < 7 { break } }\n"
	                 "}\n");
	int32_t Out[3];
	Args a = {.m = m};
	h_tensor(&a, "Out", Out, sizeof Out);
	h_int(&a, "n", 5);
	h_run(&a, NULL);
	cr_expect_eq(Out[0], 0 + 1 + 2 + 3 + 4);
	cr_expect_eq(Out[1], 1 + 2 + 3 + 4 + 400, "the inner loop runs i + 1 times, the outer all 4");
	cr_expect_eq(Out[2], 6);
	ir_module_free(m);
}
