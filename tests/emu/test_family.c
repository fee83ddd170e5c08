/* test_family.c — one test per instruction family, on every target that has
 * it (gfx90a, gfx942, gfx1100 wave32, gfx1100 wave64).  Kernel bodies are
 * tests/emu/fam_*.s (see family.h for the conventions); the expected
 * results are computed here in C. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "family.h"

static float fu(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static uint32_t uf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

#define EACH_TARGET(ft) for (const FamTarget *ft = fam_targets; ft < fam_targets + 4; ft++)

/* Compares R results of every work-item with want(gid, j). */
#define CHECK_ALL(ft, c, out, nthreads, want_expr)                                                          \
	for (uint32_t gid = 0; gid < (nthreads); gid++)                                                     \
		for (int j = 0; j < (c).results; j++) {                                                     \
			uint32_t got_ = (out)[gid * (uint32_t)(c).results + (uint32_t)j], want_ = (want_expr); \
			cr_assert_eq(got_, want_, "%s: %s: work-item %u result %d: got 0x%08x, want 0x%08x",  \
				     (ft)->name, (c).file, gid, j, got_, want_);                              \
		}

Test(emu_family, salu)
{
	uint32_t in[4] = {0x8000001au, 0xfffff123u, 0xffffffffu, 5};
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft);
		FamCase c = {"fam_salu.s", 16, L, 1, in, sizeof in, 0, 0};
		uint32_t *out = fam_run(ft, &c);
		uint32_t a = in[0], b = in[1], cc = in[2], d = in[3];
		uint64_t ab = (uint64_t)b << 32 | a;
		uint32_t carry = (uint32_t)(((uint64_t)a + b) >> 32);
		uint32_t want[16] = {a + b, cc + d + carry, a - b, a << 5, (uint32_t)((int32_t)b >> 3),
				     (uint32_t)(ab >> 40), (uint32_t)(ab >> 40), 0,
				     a * cc, (a >> 4) & 0xff, (int32_t)b < (int32_t)a ? 11u : 22u, 7,
				     (a & 15) * ((a & 15) + 1) / 2, L, 4, a > b ? a : b};
		want[7] = (uint32_t)((ab >> 40) >> 32);
		CHECK_ALL(ft, c, out, L, want[j]);
		free(out);
	}
}

Test(emu_family, valu)
{
	enum { N = 128 };
	uint32_t in[N * 4];
	for (uint32_t g = 0; g < N; g++) {
		in[4 * g] = uf(0.5f * (float)g - 7.25f);
		in[4 * g + 1] = uf(3.0f - (float)g * 0.125f);
		in[4 * g + 2] = 0x9e3779b9u * (g + 1);
		in[4 * g + 3] = g * 12345u + 0x7ffffff0u;
	}
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft);
		FamCase c = {"fam_valu.s", 16, L, N / L, in, sizeof in, 0, 0};
		uint32_t *out = fam_run(ft, &c);
		for (uint32_t g = 0; g < N; g++) {
			float x = fu(in[4 * g]), y = fu(in[4 * g + 1]);
			uint32_t i = in[4 * g + 2], j = in[4 * g + 3];
			uint32_t cy = (uint32_t)(((uint64_t)i + j) >> 32), bw = j > i;
			uint32_t bw2 = (uint64_t)i + bw > j;
			uint32_t w[16] = {uf(x + y), uf(x * y), uf(fmaf(x, y, 1.0f)), uf(fmaxf(x, y)), uf(-x + fabsf(y)),
					  i * j, (uint32_t)((uint64_t)i * j >> 32), i + j, j + cy, i - j, j - i - bw, bw2,
					  (uint32_t)((int32_t)i >> 3), (i >> 4) & 0xff,
					  (uint32_t)((int32_t)i < (int32_t)j ? (int32_t)i : (int32_t)j), i > j ? i : j};
			for (int r = 0; r < 16; r++)
				cr_assert_eq(out[g * 16 + (uint32_t)r], w[r], "%s: work-item %u result %d: got 0x%08x, want 0x%08x",
					     ft->name, g, r, out[g * 16 + (uint32_t)r], w[r]);
		}
		free(out);
	}
}

static uint32_t h16(double v) { return dt_f16_from_double(v); }
static double d16(uint32_t h) { return dt_f16_to_double((uint16_t)h); }
/* f32 -> f16 rounding toward zero. */
static uint32_t h16_rtz(float f)
{
	uint32_t h = h16((double)f);
	if (fabs(d16(h)) > fabs((double)f))
		h--;
	return h;
}

Test(emu_family, f16_and_conversions)
{
	enum { N = 64 };
	uint32_t in[N * 4];
	for (uint32_t g = 0; g < N; g++) {
		in[4 * g] = uf(0.37f * (float)g - 7.25f);
		in[4 * g + 1] = uf(3.0f - (float)g * 0.1f);
		in[4 * g + 2] = h16(0.25 * g - 3.125) | h16(1.5 + g / 8.0) << 16;
		in[4 * g + 3] = (g * 7919u) ^ (g & 1 ? 0x80000000u : 0);
	}
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft);
		FamCase c = {"fam_f16.s", 16, L, N / L, in, sizeof in, 0, 0};
		uint32_t *out = fam_run(ft, &c);
		for (uint32_t g = 0; g < N; g++) {
			float x = fu(in[4 * g]), y = fu(in[4 * g + 1]);
			uint32_t ha = in[4 * g + 2] & 0xffff, hb = in[4 * g + 2] >> 16, i = in[4 * g + 3];
			double a = d16(ha), b = d16(hb);
			uint32_t bx = dt_bf16_from_double((double)x);
			uint32_t w[16] = {h16((double)x), uf((float)a), uf((float)(int32_t)i), (uint32_t)(int32_t)x,
					  y < 0 ? 0 : (uint32_t)y, uf((float)i), h16(a + a), h16(a * a + a),
					  h16(a + a) | h16(b + b) << 16, h16(b * a) | h16(a * b) << 16,
					  h16(-a * a + a) | h16(b * b + b) << 16, h16_rtz(x) | h16_rtz(y) << 16,
					  uf((float)(a * a + b * b + (double)x)), bx, uf(fu(bx << 16) * y),
					  (ha & 0x7fff) | (hb & 0x7fff) << 16};
			for (int r = 0; r < 16; r++)
				cr_assert_eq(out[g * 16 + (uint32_t)r], w[r], "%s: work-item %u result %d: got 0x%08x, want 0x%08x",
					     ft->name, g, r, out[g * 16 + (uint32_t)r], w[r]);
		}
		free(out);
	}
}

/* Distance in float ulps between got and the exact value ref. */
static double ulps(float got, double ref)
{
	if (isinf(ref) || isnan(ref))
		return (double)got == ref || (isnan(got) && isnan(ref)) ? 0 : INFINITY;
	float r = (float)ref;
	double ulp = fabs((double)nextafterf(r, INFINITY) - (double)r);
	if (ulp == 0 || ref == 0)
		ulp = 0x1p-149;
	return fabs((double)got - ref) / ulp;
}

Test(emu_family, transcendental)
{
	enum { N = 128 };
	float in[N];
	for (uint32_t g = 0; g < N; g++)
		in[g] = 0.013f + (float)g * 0.29f;
	/* Documented precision: 1 ulp for exp/log/rcp/rsq/sqrt (the ISA
	 * manuals); sin/cos are compared with an absolute 2^-20. */
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft);
		FamCase c = {"fam_trans.s", 8, L, N / L, in, sizeof in, 0, 0};
		uint32_t *out = fam_run(ft, &c);
		for (uint32_t g = 0; g < N; g++) {
			double x = in[g], fr = x - floor(x);
			double ref[6] = {exp2(x), log2(x), 1 / x, 1 / sqrt(x), sqrt(x), exp2(-x)};
			for (int r = 0; r < 6; r++)
				cr_assert_leq(ulps(fu(out[g * 8 + (uint32_t)r]), ref[r]), 1.0,
					      "%s: work-item %u (x = %a) result %d: got %a, want %a", ft->name, g, x, r,
					      (double)fu(out[g * 8 + (uint32_t)r]), ref[r]);
			double s = sin(fr * 2 * M_PI), co = cos(fr * 2 * M_PI);
			cr_assert_leq(fabs((double)fu(out[g * 8 + 6]) - s), 0x1p-20, "%s: sin at %u", ft->name, g);
			cr_assert_leq(fabs((double)fu(out[g * 8 + 7]) - co), 0x1p-20, "%s: cos at %u", ft->name, g);
		}
		free(out);
	}
}

Test(emu_family, fp8_gfx942)
{
	enum { N = 128 };
	float in[2 * N];
	for (uint32_t g = 0; g < N; g++) {
		in[2 * g] = ((float)g - 64.0f) * 0.173f * (float)(g % 7 + 1); /* up to ~±80 */
		in[2 * g + 1] = (float)g * (float)g * 0.31f - 100.0f;        /* up to ~5000: overflows e4m3fnuz */
	}
	in[2] = 1e-6f, in[3] = -3e-5f; /* below the smallest subnormals */
	const FamTarget *ft = &fam_targets[1];
	FamCase c = {"fam_fp8_gfx9.s", 8, 64, N / 64, in, sizeof in, 0, 0};
	uint32_t *out = fam_run(ft, &c);
	for (uint32_t g = 0; g < N; g++) {
		double x = in[2 * g], y = in[2 * g + 1];
		uint32_t f8 = dt_e4m3fnuz_from_double(x, false) | (uint32_t)dt_e4m3fnuz_from_double(y, false) << 8;
		uint32_t b8 = dt_e5m2fnuz_from_double(x, false) | (uint32_t)dt_e5m2fnuz_from_double(y, false) << 8;
		uint32_t w[8] = {f8, b8, uf((float)dt_e4m3fnuz_to_double((uint8_t)f8)),
				 uf((float)dt_e4m3fnuz_to_double((uint8_t)(f8 >> 8))),
				 uf((float)dt_e5m2fnuz_to_double((uint8_t)b8)), uf((float)dt_e5m2fnuz_to_double((uint8_t)(b8 >> 8))),
				 uf((float)dt_e4m3fnuz_to_double((uint8_t)f8)),
				 uf((float)dt_e5m2fnuz_to_double((uint8_t)b8))};
		for (int r = 0; r < 8; r++) {
			uint32_t got = out[g * 8 + (uint32_t)r];
			if (isnan(fu(w[r])) && r >= 2 && isnan(fu(got)))
				continue; /* NaN payloads are not compared */
			cr_assert_eq(got, w[r], "gfx942: work-item %u (x = %g, y = %g) result %d: got 0x%08x, want 0x%08x", g,
				     x, y, r, got, w[r]);
		}
	}
	free(out);
}

Test(emu_family, lds_barrier_atomics)
{
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft), B = 4 * L, G = 2;
		FamCase c = {"fam_lds.s", 6, B, G, NULL, 0, B * 4 - 1, B * 4 + 8};
		uint32_t *out = fam_run(ft, &c);
		for (uint32_t wg = 0; wg < G; wg++) {
			uint8_t seen[256] = {0};
			for (uint32_t lid = 0; lid < B; lid++) {
				uint32_t gid = wg * B + lid, *r = out + gid * 6;
				cr_assert_eq(r[0], wg * B + (lid + 64) % B, "%s: wi %u r0 %u", ft->name, gid, r[0]);
				cr_assert_lt(r[1], B, "%s: wi %u counter %u", ft->name, gid, r[1]);
				cr_assert(!seen[r[1]], "%s: ds_add_rtn returned %u twice", ft->name, r[1]);
				seen[r[1]] = 1;
				cr_assert_eq(r[2], B, "%s: wi %u: counter after the barrier %u", ft->name, gid, r[2]);
				cr_assert_eq(r[3], wg * B + B - 1, "%s: wi %u: max %u", ft->name, gid, r[3]);
				cr_assert_eq(r[4], gid, "%s: wi %u: read2 lo %u", ft->name, gid, r[4]);
				cr_assert_eq(r[5], lid + 1 < B ? gid + 1 : B, "%s: wi %u: read2 hi %u", ft->name, gid, r[5]);
			}
		}
		free(out);
	}
}

Test(emu_family, cross_lane)
{
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft), N = 128;
		FamCase c = {"fam_xlane.s", 9, L, N / L, NULL, 0, 777, 0};
		uint32_t *out = fam_run(ft, &c);
		for (uint32_t gid = 0; gid < N; gid++) {
			uint32_t l = gid % L, wb = gid - l, *r = out + gid * 9, rl = l % 16;
			uint32_t w[9] = {gid ^ 3, rl ? 2 * gid - 1 : 1000, gid - rl + 15 - rl, gid ^ 1, wb + ((l & ~31u) | ((l & 31) ^ 16)),
					 wb + 5, wb, l == 7 ? 777 : gid, L * wb + L * (L - 1) / 2};
			for (int j = 0; j < 9; j++)
				cr_assert_eq(r[j], w[j], "%s: work-item %u result %d: got %u, want %u", ft->name, gid, j, r[j], w[j]);
		}
		free(out);
	}
}

Test(emu_family, global_atomics)
{
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft), N = 256, in[8] = {0};
		FamCase c = {"fam_gatomic.s", 4, L, N / L, in, sizeof in, 0, 0};
		uint32_t *out = fam_run(ft, &c);
		uint8_t seen[256] = {0};
		uint32_t winners = 0, winner = 0, fwinners = 0, fwinner = 0;
		for (uint32_t g = 0; g < N; g++) {
			cr_assert_lt(out[4 * g], N, "%s: wi %u: counter %u", ft->name, g, out[4 * g]);
			cr_assert(!seen[out[4 * g]], "%s: atomic add returned %u twice", ft->name, out[4 * g]);
			seen[out[4 * g]] = 1;
			if (out[4 * g + 1] == 0)
				winners++, winner = g;
			if (out[4 * g + 2] == 0 && out[4 * g + 3] == 0)
				fwinners++, fwinner = g;
		}
		cr_assert_eq(winners, 1, "%s: %u cmpswap winners", ft->name, winners);
		cr_assert_eq(fwinners, 1, "%s: %u flat cmpswap_x2 winners", ft->name, fwinners);
		for (uint32_t g = 0; g < N; g++) {
			if (g != winner)
				cr_assert_eq(out[4 * g + 1], winner + 1, "%s: wi %u saw %u", ft->name, g, out[4 * g + 1]);
			if (g != fwinner)
				cr_assert(out[4 * g + 2] == fwinner + 1 && out[4 * g + 3] == 7, "%s: wi %u saw 0x%x:0x%x (flat)",
					  ft->name, g, out[4 * g + 3], out[4 * g + 2]);
		}
		free(out);
	}
}

/* LDS compare-and-swap (ds_cmpst_* on gfx9, ds_cmpstore_* on gfx11, whose
 * data operands are the other way round): returning and plain forms, 32 and
 * 64 bits, a CAS add loop that must retry, and the LDS contents after. */
Test(emu_family, lds_cmpst)
{
	EACH_TARGET(ft) {
		uint32_t L = (uint32_t)fam_lanes(ft), B = 2 * L, G = 2;
		const char *file = ft->t == TA_TARGET_GFX1100 ? "fam_lds_cas_gfx11.s" : "fam_lds_cas_gfx9.s";
		FamCase c = {file, 10, B, G, NULL, 0, 0, 32};
		uint32_t *out = fam_run(ft, &c);
		for (uint32_t wg = 0; wg < G; wg++) {
			const uint32_t *o = out + wg * B * 10;
			uint32_t w32 = B, w64 = B, trips = 0;
			for (uint32_t lid = 0; lid < B; lid++) {
				if (o[lid * 10] == 0) {
					cr_assert_eq(w32, B, "%s: two ds_cmpst_rtn_b32 winners", ft->name);
					w32 = lid;
				}
				if (o[lid * 10 + 1] == 0 && o[lid * 10 + 2] == 0) {
					cr_assert_eq(w64, B, "%s: two ds_cmpst_rtn_b64 winners", ft->name);
					w64 = lid;
				}
			}
			cr_assert(w32 < B && w64 < B, "%s: no compare-and-swap winner", ft->name);
			for (uint32_t lid = 0; lid < B; lid++) {
				const uint32_t *r = o + lid * 10;
				if (lid != w32)
					cr_assert_eq(r[0], w32 + 1, "%s: lid %u saw 0x%x in the b32 slot", ft->name, lid, r[0]);
				if (lid != w64)
					cr_assert(r[1] == w64 + 1 && r[2] == w64 + 1000, "%s: lid %u saw 0x%x 0x%x in the b64 slot",
						  ft->name, lid, r[1], r[2]);
				cr_assert_eq(r[3], B * (B + 1) / 2, "%s: lid %u: CAS-loop sum %u", ft->name, lid, r[3]);
				cr_assert(r[4] >= 1 && r[4] <= B, "%s: lid %u: %u trips", ft->name, lid, r[4]);
				trips += r[4];
				cr_assert_eq(r[5], 77, "%s: lid %u: ds_cmpst_b32 slot %u", ft->name, lid, r[5]);
				cr_assert(r[6] == 103 && r[7] == 7, "%s: lid %u: ds_cmpst_b64 slot 0x%x 0x%x", ft->name, lid, r[6], r[7]);
				cr_assert(r[8] == w64 + 1 && r[9] == w64 + 1000, "%s: lid %u: b64 slot after 0x%x 0x%x", ft->name, lid,
					  r[8], r[9]);
			}
			cr_assert_gt(trips, B, "%s: the CAS loop never retried (%u trips)", ft->name, trips);
		}
		free(out);
	}
}
