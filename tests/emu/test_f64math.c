/* test_f64math.c — the AMD software sequences for 64-bit math, on the
 * emulator against the host (the interpreter's arithmetic), bit for bit:
 * f64 '/' (a varying and a uniform divisor), sqrt and rsqrt on every pair of
 * operand classes (±0, ±inf, NaN, subnormals, the extremes, quotients that
 * overflow or underflow, exact cases) and 60,000 random bit patterns; i64 '//'
 * and '%' (floor semantics, docs/tile-ir.md) on edge values and random
 * operands of every magnitude.  Each instruction of the sequences is
 * byte-checked against llvm-mc-19 by isa_conformance; this checks what they
 * compute.  Issue 13.6 / 18.1. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "emu.h"
#include "tileasm.h"

static const char kernel_src[] =
	"kernel m64(A: f64[N], B: f64[N], I: i64[N], J: i64[N], Q: f64[N], P: f64[N], R: f64[N], S: f64[N],\n"
	"           D: i64[N], M: i64[N], s: f64)\n"
	"    grid(ceildiv(N, 256)) threads(256) {\n"
	"  parallel (i) in (256) {\n"
	"    let j = bx * 256 + i\n"
	"    if (j < N) {\n"
	"      Q[j] = A[j] / B[j]\n"
	"      P[j] = A[j] / s\n"
	"      R[j] = sqrt(A[j])\n"
	"      S[j] = rsqrt(A[j])\n"
	"      D[j] = I[j] // J[j]\n"
	"      M[j] = I[j] % J[j]\n"
	"    }\n  }\n}\n";

enum { NIN = 4, NOUT = 6, NBUF = NIN + NOUT };

static double dbits(uint64_t u)
{
	double f;
	memcpy(&f, &u, 8);
	return f;
}
static uint64_t ubits(double f)
{
	uint64_t u;
	memcpy(&u, &f, 8);
	return u;
}

static const uint64_t fspec[] = {
	0x0000000000000000ull, 0x8000000000000000ull, /* ±0 */
	0x7ff0000000000000ull, 0xfff0000000000000ull, /* ±inf */
	0x7ff8000000000000ull, 0xfff8000000000001ull, 0x7ff0000000000001ull, /* NaNs */
	0x0000000000000001ull, 0x8000000000000001ull, /* smallest subnormals */
	0x0008000000000000ull, 0x000fffffffffffffull, 0x800fffffffffffffull, /* subnormals */
	0x0010000000000000ull, 0x8010000000000000ull, /* smallest normals */
	0x7fefffffffffffffull, 0xffefffffffffffffull, /* largest normals */
	0x3ff0000000000000ull, 0xbff8000000000000ull, 0x401c000000000000ull, /* 1, -1.5, 7 */
	0x4010000000000000ull, 0x4022000000000000ull, /* 4, 9: exact roots */
	0x7e37e43c8800759cull, 0x0000000000000003ull, /* 1e300, 3 * 2^-1074 */
	0x3000000000000000ull, 0x5000000000000000ull, /* 2^-255, 2^257 */
	0x1000000000000000ull, 0x0ff0000000000000ull, /* 2^-767 (sqrt scaling edge), 2^-768 */
	0x3ca0000000000000ull, 0x4330000000000000ull, /* 2^-53, 2^52 */
	0x3fb999999999999aull, 0x4024000000000000ull, /* 0.1, 10 */
};
#define NFSPEC (sizeof fspec / sizeof fspec[0])

static const int64_t ispec[] = {
	0, 1, -1, 2, -2, 3, -3, 7, -7, 10, 1000000007, -1000000007, INT32_MAX, INT32_MIN, 0xffffffffll,
	0x100000000ll, 0x100000001ll, -0x100000000ll, 0x7fffffff00000000ll, INT64_MAX, INT64_MIN, INT64_MIN + 1,
	0x4000000000000000ll, 0x123456789abcdefll, -0x123456789abcdefll, 0x5555555555555555ll,
};
#define NISPEC (sizeof ispec / sizeof ispec[0])

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static bool same(double got, double want)
{
	return (isnan(got) && isnan(want)) || ubits(got) == ubits(want);
}

/* Python floor division and modulo, as the interpreter defines them. */
static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b, r = a % b;
	return r != 0 && (r < 0) != (b < 0) ? q - 1 : q;
}
static int64_t floormod(int64_t a, int64_t b)
{
	int64_t r = a % b;
	return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* Runs the kernel on target t with n elements: buf[0..3] in, buf[4..9] out. */
static void run(const char *target, ta_target t, void *const *buf, double s, int n)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *b = NULL;
	ta_status st = ta_compile_source(ctx, "m64.tile", kernel_src, sizeof kernel_src - 1, target, &b);
	cr_assert_eq(st, TA_OK, "%s: %s", target, ta_ctx_diagnostics(ctx));
	size_t len;
	const void *code = ta_binary_data(b, &len);
	const ta_kernel_info *k = ta_binary_kernel(b, 0);
	cr_assert_eq(k->nargs, NBUF + 2);
	EmuDevice *dev = emu_create(t);
	cr_assert(dev);
	Diag d;
	diag_init(&d);
	size_t bytes = (size_t)n * 8;
	uint64_t a[NBUF];
	unsigned char ka[512] = {0};
	int rc = 0;
	for (int i = 0; i < NBUF; i++) {
		a[i] = emu_alloc(dev, bytes);
		memcpy(ka + k->args[i].offset, &a[i], 8);
		if (i < NIN)
			rc |= emu_write(dev, a[i], buf[i], bytes, &d);
	}
	memcpy(ka + k->args[NBUF].offset, &s, 8);
	int32_t nn = n;
	memcpy(ka + k->args[NBUF + 1].offset, &nn, 4);
	int64_t vals[NBUF + 2] = {[NBUF + 1] = n};
	uint32_t grid[3], block[3] = {(uint32_t)k->threads, 1, 1};
	cr_assert_eq(ta_binary_grid(b, 0, vals, grid), TA_OK);
	rc = rc || emu_load(dev, code, len, &d) || emu_launch(dev, k->name, grid, block, ka, k->kernarg_size, 0, &d);
	for (int i = NIN; i < NBUF && !rc; i++)
		rc = emu_read(dev, a[i], buf[i], bytes, &d);
	cr_assert_eq(rc, 0, "%s: %s", target, diag_text(&d));
	emu_destroy(dev);
	diag_free(&d);
	ta_binary_release(b);
	ta_ctx_destroy(ctx);
}

static void check_target(const char *target, ta_target t)
{
	enum { NRAND = 60000 };
	int n = (int)(NFSPEC * NFSPEC) + NRAND;
	double *A = malloc((size_t)n * 8), *B = malloc((size_t)n * 8), *Q = malloc((size_t)n * 8);
	double *P = malloc((size_t)n * 8), *R = malloc((size_t)n * 8), *S = malloc((size_t)n * 8);
	int64_t *I = malloc((size_t)n * 8), *J = malloc((size_t)n * 8), *D = malloc((size_t)n * 8);
	int64_t *M = malloc((size_t)n * 8);
	int m = 0;
	for (size_t i = 0; i < NFSPEC; i++)
		for (size_t j = 0; j < NFSPEC; j++, m++)
			A[m] = dbits(fspec[i]), B[m] = dbits(fspec[j]);
	for (; m < n; m++) {
		A[m] = dbits(rnd());
		/* half the divisors near the numerator's exponent, so ordinary quotients show next to the extremes */
		uint64_t e = (ubits(A[m]) >> 52 & 0x7ff) + rnd() % 120 - 60;
		B[m] = m & 1 ? dbits(rnd()) : dbits((rnd() & 0x800fffffffffffffull) | (e & 0x7ff) << 52);
	}
	for (m = 0; m < n; m++) {
		if (m < (int)(NISPEC * NISPEC))
			I[m] = ispec[m / NISPEC], J[m] = ispec[m % NISPEC];
		else /* every magnitude of numerator and divisor */
			I[m] = (int64_t)(rnd() >> (rnd() % 64)) * (rnd() & 1 ? 1 : -1),
			J[m] = (int64_t)(rnd() >> (rnd() % 64)) * (rnd() & 1 ? 1 : -1);
		if (J[m] == 0 || (I[m] == INT64_MIN && J[m] == -1)) /* an error in the interpreter; overflow */
			J[m] = 3;
	}
	void *buf[NBUF] = {A, B, I, J, Q, P, R, S, D, M};
	int bad = 0;
	for (size_t sv = 0; sv < NFSPEC; sv += 7) {
		double s = dbits(fspec[sv]);
		run(target, t, buf, s, n);
		for (int i = 0; i < n && bad < 10; i++) {
			const char *what = NULL;
			double want = 0, got = 0;
			double r = 1.0 / sqrt(A[i]);
			if (!same(Q[i], A[i] / B[i]))
				what = "/", got = Q[i], want = A[i] / B[i];
			else if (!same(P[i], A[i] / s))
				what = "/ uniform", got = P[i], want = A[i] / s;
			else if (!same(R[i], sqrt(A[i])))
				what = "sqrt", got = R[i], want = sqrt(A[i]);
			else if (!same(S[i], r))
				what = "rsqrt", got = S[i], want = r;
			if (what) {
				fprintf(stderr, "%s: %a %s %a = %a, want %a\n", target, A[i], what,
					what[1] == 'u' ? s : B[i], got, want);
				bad++;
			}
			if (D[i] != floordiv(I[i], J[i]) || M[i] != floormod(I[i], J[i])) {
				fprintf(stderr, "%s: %lld // %lld = %lld, %% = %lld, want %lld, %lld\n", target, (long long)I[i],
					(long long)J[i], (long long)D[i], (long long)M[i], (long long)floordiv(I[i], J[i]),
					(long long)floormod(I[i], J[i]));
				bad++;
			}
		}
	}
	free(A), free(B), free(Q), free(P), free(R), free(S), free(I), free(J), free(D), free(M);
	cr_assert_eq(bad, 0, "%s: %d wrong results (see stderr)", target, bad);
}

Test(f64math, gfx942)
{
	check_target("gfx942", TA_TARGET_GFX942);
}
Test(f64math, gfx90a)
{
	check_target("gfx90a", TA_TARGET_GFX90A);
}
Test(f64math, gfx1100)
{
	check_target("gfx1100", TA_TARGET_GFX1100);
}
