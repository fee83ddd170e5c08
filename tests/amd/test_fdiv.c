/* test_fdiv.c — f32 division and rsqrt on the AMD targets are IEEE: every
 * pair of operand classes (±0, ±inf, NaN, subnormals, the largest and
 * smallest normals, quotients that overflow or underflow) and 30,000 random
 * bit patterns, divided by a varying and by a uniform (SGPR) divisor, run on
 * the emulator and compared bit for bit with the host's f32 division (the
 * interpreter's arithmetic).  rsqrt(x) = 1/sqrt(x): exact on the special
 * values (rsqrt(inf) = 0, rsqrt(0) = inf, rsqrt(-0) = -inf, rsqrt(x < 0) =
 * NaN), within 2 ulp elsewhere (two roundings).  Issue 18.1. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "emu.h"
#include "tileasm.h"

static const char kernel_src[] =
	"kernel fdiv(A: f32[N], B: f32[N], Q: f32[N], P: f32[N], R: f32[N], s: f32)\n"
	"    grid(ceildiv(N, 256)) threads(256) {\n"
	"  parallel (i) in (256) {\n"
	"    let j = bx * 256 + i\n"
	"    if (j < N) {\n"
	"      Q[j] = A[j] / B[j]\n"
	"      P[j] = A[j] / s\n"
	"      R[j] = rsqrt(A[j])\n"
	"    }\n  }\n}\n";

static float fbits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static uint32_t ubits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static const uint32_t specials[] = {
	0x00000000u, 0x80000000u,             /* ±0 */
	0x7f800000u, 0xff800000u,             /* ±inf */
	0x7fc00000u, 0xffc00001u, 0x7f800001u, /* quiet and signalling NaN */
	0x00000001u, 0x80000001u,             /* smallest subnormals */
	0x00400000u, 0x007fffffu, 0x807fffffu, /* subnormals */
	0x00800000u, 0x80800000u,             /* smallest normals */
	0x7f7fffffu, 0xff7fffffu,             /* largest normals */
	0x3f800000u, 0xbfc00000u, 0x40e00000u, /* 1, -1.5, 7 */
	0x7e967699u,                          /* 1e38 */
	0x0da24260u,                          /* 1e-30 */
	0x1e3ce508u, 0x60ad78ecu,             /* 1e-20, 1e20 */
	0x5f800000u, 0x1f800000u,             /* 2^64, 2^-64 */
	0x33800000u, 0x4b000000u,             /* 2^-24, 2^23 */
};
#define NSPEC (sizeof specials / sizeof specials[0])

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static bool same(float got, float want)
{
	return (isnan(got) && isnan(want)) || ubits(got) == ubits(want);
}

/* Runs the kernel on target t with n elements; fills Q, P, R. */
static void run(const char *target, ta_target t, const float *A, const float *B, float s, float *Q, float *P,
		float *R, int n)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *b = NULL;
	ta_status st = ta_compile_source(ctx, "fdiv.tile", kernel_src, sizeof kernel_src - 1, target, &b);
	cr_assert_eq(st, TA_OK, "%s: %s", target, ta_ctx_diagnostics(ctx));
	size_t len;
	const void *code = ta_binary_data(b, &len);
	const ta_kernel_info *k = ta_binary_kernel(b, 0);
	EmuDevice *dev = emu_create(t);
	cr_assert(dev);
	Diag d;
	diag_init(&d);
	size_t bytes = (size_t)n * 4;
	uint64_t a[5];
	for (int i = 0; i < 5; i++)
		a[i] = emu_alloc(dev, bytes);
	unsigned char ka[512] = {0};
	for (int i = 0; i < 5; i++)
		memcpy(ka + k->args[i].offset, &a[i], 8);
	memcpy(ka + k->args[5].offset, &s, 4);
	int32_t nn = n;
	cr_assert_eq(k->nargs, 7);
	memcpy(ka + k->args[6].offset, &nn, 4);
	int64_t vals[7] = {0, 0, 0, 0, 0, 0, n};
	uint32_t grid[3], block[3] = {(uint32_t)k->threads, 1, 1};
	cr_assert_eq(ta_binary_grid(b, 0, vals, grid), TA_OK);
	int rc = emu_write(dev, a[0], A, bytes, &d) || emu_write(dev, a[1], B, bytes, &d) || emu_load(dev, code, len, &d) ||
		 emu_launch(dev, k->name, grid, block, ka, k->kernarg_size, 0, &d) || emu_read(dev, a[2], Q, bytes, &d) ||
		 emu_read(dev, a[3], P, bytes, &d) || emu_read(dev, a[4], R, bytes, &d);
	cr_assert_eq(rc, 0, "%s: %s", target, diag_text(&d));
	emu_destroy(dev);
	diag_free(&d);
	ta_binary_release(b);
	ta_ctx_destroy(ctx);
}

static void check_target(const char *target, ta_target t)
{
	enum { NRAND = 30000 };
	int n = (int)(NSPEC * NSPEC) + NRAND;
	float *A = malloc((size_t)n * 4), *B = malloc((size_t)n * 4), *Q = malloc((size_t)n * 4);
	float *P = malloc((size_t)n * 4), *R = malloc((size_t)n * 4);
	int m = 0;
	for (size_t i = 0; i < NSPEC; i++)
		for (size_t j = 0; j < NSPEC; j++, m++)
			A[m] = fbits(specials[i]), B[m] = fbits(specials[j]);
	for (; m < n; m++) {
		A[m] = fbits(rnd());
		/* half the divisors share the numerator's exponent range, so that
		 * ordinary quotients are well represented next to the extremes */
		B[m] = m & 1 ? fbits(rnd()) : fbits((rnd() & 0x807fffffu) | (rnd() % 60 + 97) << 23);
	}
	int bad = 0;
	/* the uniform divisor: each special value in turn, a launch per value */
	for (size_t sv = 0; sv < NSPEC; sv += 5) {
		float s = fbits(specials[sv]);
		run(target, t, A, B, s, Q, P, R, n);
		for (int i = 0; i < n && bad < 10; i++) {
			float q = A[i] / B[i], p = A[i] / s;
			if (!same(Q[i], q)) {
				fprintf(stderr, "%s: %a / %a = %a, want %a\n", target, (double)A[i], (double)B[i], (double)Q[i],
					(double)q);
				bad++;
			}
			if (!same(P[i], p)) {
				fprintf(stderr, "%s: %a / uniform %a = %a, want %a\n", target, (double)A[i], (double)s,
					(double)P[i], (double)p);
				bad++;
			}
			float r = (float)(1.0 / sqrt((double)A[i]));
			bool special = A[i] == 0 || isinf(A[i]) || isnan(A[i]) || A[i] < 0;
			bool ok = special ? same(R[i], r)
					  : fabs((double)R[i] - r) <= 2 * (nextafterf(r, INFINITY) - (double)r);
			if (!ok) {
				fprintf(stderr, "%s: rsqrt(%a) = %a, want %a\n", target, (double)A[i], (double)R[i], (double)r);
				bad++;
			}
		}
	}
	free(A), free(B), free(Q), free(P), free(R);
	cr_assert_eq(bad, 0, "%s: %d wrong quotients (see stderr)", target, bad);
}

Test(fdiv, gfx942)
{
	check_target("gfx942", TA_TARGET_GFX942);
}
Test(fdiv, gfx90a)
{
	check_target("gfx90a", TA_TARGET_GFX90A);
}
Test(fdiv, gfx1100)
{
	check_target("gfx1100", TA_TARGET_GFX1100);
}
