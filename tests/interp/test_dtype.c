/* test_dtype.c — dtype conversions (src/dtype.c).
 *
 * Guards the numeric contract of the IR: every decode is exact, every
 * encode rounds once to nearest-even, and the cast rules (saturation,
 * wrapping, NaN handling) are the documented ones.  The references here are
 * written differently from dtype.c on purpose: GCC's _Float16 (soft-fp in
 * libgcc, correct on x86-64 GCC 12), bf16 as the top half of an f32, and a
 * table search with exact distance comparison for the rounding.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "dtype.h"

static uint16_t f16_bits(_Float16 h)
{
	uint16_t u;
	memcpy(&u, &h, 2);
	return u;
}

static _Float16 f16_from_bits(uint16_t u)
{
	_Float16 h;
	memcpy(&h, &u, 2);
	return h;
}

static bool same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return a == b && signbit(a) == signbit(b);
}

Test(dtype, f16_exhaustive_decode_encode)
{
	for (uint32_t u = 0; u < 0x10000; u++) {
		double d = dt_f16_to_double((uint16_t)u);
		double ref = (double)f16_from_bits((uint16_t)u);
		cr_assert(same(d, ref), "f16 %04x decodes to %a, _Float16 says %a", u, d, ref);
		/* Round trip is exact for every pattern, NaN payloads included. */
		cr_assert_eq(dt_f16_from_double(d), u, "f16 %04x round trip gives %04x", u,
		             dt_f16_from_double(d));
		uint16_t buf = (uint16_t)u;
		cr_assert(same(dt_to_double(DT_F16, &buf), ref));
		/* f16 -> f32 -> f16 through the f32 element path. */
		float f;
		dt_store_double(DT_F32, &f, d);
		uint16_t back;
		dt_store_double(DT_F16, &back, dt_to_double(DT_F32, &f));
		if (!isnan(d)) /* f32 conversion may quiet a signalling NaN */
			cr_assert_eq(back, u);
	}
}

Test(dtype, bf16_exhaustive_decode_encode)
{
	for (uint32_t u = 0; u < 0x10000; u++) {
		double d = dt_bf16_to_double((uint16_t)u);
		/* bf16 is the top half of an f32. */
		double ref = dt_f32_from_bits(u << 16);
		cr_assert(same(d, ref), "bf16 %04x decodes to %a, expected %a", u, d, ref);
		cr_assert_eq(dt_bf16_from_double(d), u, "bf16 %04x round trip gives %04x", u,
		             dt_bf16_from_double(d));
		if (!isnan(d))
			cr_assert_eq(dt_f32_bits((float)d), u << 16);
	}
}

/* Independent fp8 decoder: sign * 2^(e-bias) * (1 + m/2^mb), subnormal when
 * e == 0, special patterns given explicitly by the caller. */
static double fp8_ref(uint8_t b, int eb, int mb, int bias)
{
	int s = b >> 7, e = (b >> mb) & ((1 << eb) - 1), m = b & ((1 << mb) - 1);
	double frac = (double)m / (double)(1 << mb);
	double mag = e ? pow(2.0, e - bias) * (1 + frac) : pow(2.0, 1 - bias) * frac;
	return s ? -mag : mag;
}

Test(dtype, fp8_exhaustive)
{
	int nnan[4] = {0};
	for (uint32_t u = 0; u < 256; u++) {
		uint8_t b = (uint8_t)u;
		/* E4M3FN: S.1111.111 is NaN, no inf. */
		double d = dt_e4m3_to_double(b);
		if ((u & 0x7f) == 0x7f) {
			cr_assert(isnan(d));
			nnan[0]++;
		} else {
			cr_assert(same(d, fp8_ref(b, 4, 3, 7)), "e4m3 %02x: %a", u, d);
		}
		cr_assert_eq(dt_e4m3_from_double(d), u, "e4m3 %02x round trip", u);
		/* E5M2: IEEE. */
		d = dt_e5m2_to_double(b);
		if ((u & 0x7f) == 0x7c)
			cr_assert(isinf(d) && !!signbit(d) == (int)(u >> 7));
		else if ((u & 0x7c) == 0x7c)
			{ cr_assert(isnan(d)); nnan[1]++; }
		else
			cr_assert(same(d, fp8_ref(b, 5, 2, 15)), "e5m2 %02x: %a", u, d);
		/* Infinities saturate in the IR cast, so only non-inf round-trips. */
		if (!isinf(d))
			cr_assert_eq(dt_e5m2_from_double(d), u, "e5m2 %02x round trip", u);
		/* FNUZ: 0x80 is the only NaN, there is no -0 and no inf. */
		d = dt_e4m3fnuz_to_double(b);
		if (u == 0x80)
			{ cr_assert(isnan(d)); nnan[2]++; }
		else
			cr_assert(same(d, fp8_ref(b, 4, 3, 8)), "e4m3fnuz %02x: %a", u, d);
		cr_assert_eq(dt_e4m3fnuz_from_double(d, false), u);
		cr_assert_eq(dt_e4m3fnuz_from_double(d, true), u);
		d = dt_e5m2fnuz_to_double(b);
		if (u == 0x80)
			{ cr_assert(isnan(d)); nnan[3]++; }
		else
			cr_assert(same(d, fp8_ref(b, 5, 2, 16)), "e5m2fnuz %02x: %a", u, d);
		cr_assert_eq(dt_e5m2fnuz_from_double(d, false), u);
	}
	cr_assert_eq(nnan[0], 2);
	cr_assert_eq(nnan[1], 6);
	cr_assert_eq(nnan[2], 1);
	cr_assert_eq(nnan[3], 1);
	cr_assert_eq(dt_e4m3_to_double(0x7e), 448.0);
	cr_assert_eq(dt_e4m3_to_double(0x01), 0x1p-9);
	cr_assert_eq(dt_e5m2_to_double(0x7b), 57344.0);
	cr_assert_eq(dt_e5m2_to_double(0x01), 0x1p-16);
	cr_assert_eq(dt_e4m3fnuz_to_double(0x7f), 240.0);
	cr_assert_eq(dt_e4m3fnuz_to_double(0x01), 0x1p-10);
	cr_assert_eq(dt_e5m2fnuz_to_double(0x7f), 57344.0);
	cr_assert_eq(dt_e5m2fnuz_to_double(0x01), 0x1p-17);
	cr_assert_eq(mf_max(FMT_E4M3), 448.0);
	cr_assert_eq(mf_max(FMT_F16), 65504.0);
	cr_assert_eq(mf_max(FMT_BF16), 0x1.fep127);
}

/* ---- rounding against a table search -------------------------------- */

typedef struct {
	MiniFmt f;
	const char *name;
	bool ieee; /* has inf: overflow without saturation gives inf */
	uint32_t sign, inf_or_nan; /* sign bit; the non-saturated overflow pattern (magnitude) */
} FmtInfo;

static const FmtInfo infos[] = {
	{FMT_F16, "f16", true, 0x8000, 0x7c00},
	{FMT_BF16, "bf16", true, 0x8000, 0x7f80},
	{FMT_E4M3, "e4m3", false, 0x80, 0x7f},
	{FMT_E5M2, "e5m2", true, 0x80, 0x7c},
	{FMT_E4M3FNUZ, "e4m3fnuz", false, 0x80, 0x80},
	{FMT_E5M2FNUZ, "e5m2fnuz", false, 0x80, 0x80},
};

/* Positive finite values of a format in increasing order with their bits
 * (the encodings of positive values increase with the value). */
typedef struct {
	double *val;
	uint32_t *bits;
	int n;
} Table;

static Table make_table(const FmtInfo *fi)
{
	Table t = {malloc(sizeof(double) * 0x8000), malloc(sizeof(uint32_t) * 0x8000), 0};
	for (uint32_t b = 0; b < fi->sign; b++) {
		double v = mf_decode(fi->f, b);
		if (isnan(v) || isinf(v))
			break;
		if (t.n)
			cr_assert_gt(v, t.val[t.n - 1], "%s not monotone at %x", fi->name, b);
		t.val[t.n] = v;
		t.bits[t.n++] = b;
	}
	return t;
}

/* Reference RNE of x >= 0: find neighbours lo <= x < hi by binary search and
 * compare the distances.  x - lo and hi - x are exact in double (Sterbenz:
 * neighbours are within a factor of two, or lo is 0).  Beyond the largest
 * finite value the next "value" is max + ulp, which is inf for IEEE. */
static uint32_t ref_round(const FmtInfo *fi, const Table *t, double x, bool sat)
{
	double max = t->val[t->n - 1];
	double ulp = max - t->val[t->n - 2];
	uint32_t over = sat ? t->bits[t->n - 1] : fi->inf_or_nan;
	if (isinf(x))
		return over;
	if (x >= max) {
		double hi = max + ulp, dlo = x - max, dhi = hi - x;
		/* A tie goes to the even encoding: max is odd for IEEE formats,
		 * even for E4M3FN (S.1111.110), odd for FNUZ. */
		bool max_even = !(t->bits[t->n - 1] & 1);
		if (x >= hi || dhi < dlo || (dhi == dlo && !max_even))
			return over;
		return t->bits[t->n - 1];
	}
	int a = 0, b = t->n - 1; /* val[a] <= x < val[b] */
	while (b - a > 1) {
		int m = (a + b) / 2;
		if (t->val[m] <= x)
			a = m;
		else
			b = m;
	}
	double dlo = x - t->val[a], dhi = t->val[b] - x;
	if (dlo < dhi)
		return t->bits[a];
	if (dhi < dlo)
		return t->bits[b];
	return (t->bits[a] & 1) ? t->bits[b] : t->bits[a];
}

static void check_point(const FmtInfo *fi, const Table *t, double x, int *nchecked)
{
	for (int sat = 0; sat < 2; sat++) {
		uint32_t want = ref_round(fi, t, x, sat);
		uint32_t got = mf_encode(fi->f, x, sat);
		cr_assert_eq(got, want, "%s(%a) sat=%d: got %x want %x", fi->name, x, sat, got, want);
		/* Negative side: sign flips, except fnuz zero and NaN. */
		uint32_t wneg = want | fi->sign;
		if (fi->f == FMT_E4M3FNUZ || fi->f == FMT_E5M2FNUZ)
			wneg = (want == 0 || want == 0x80) ? want : want | 0x80;
		got = mf_encode(fi->f, -x, sat);
		cr_assert_eq(got, wneg, "%s(%a) sat=%d: got %x want %x", fi->name, -x, sat, got, wneg);
	}
	if (fi->f == FMT_F16) {
		/* GCC's double -> _Float16 conversion rounds once, like ours. */
		cr_assert_eq(dt_f16_from_double(x), f16_bits((_Float16)x), "f16(%a)", x);
		cr_assert_eq(dt_f16_from_double(-x), f16_bits((_Float16)-x), "f16(%a)", -x);
		float xf = (float)x;
		cr_assert_eq(dt_f16_from_double(xf), f16_bits((_Float16)xf), "f16(float %a)", xf);
	}
	++*nchecked;
}

Test(dtype, rounding_at_every_midpoint)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(infos); i++) {
		const FmtInfo *fi = &infos[i];
		Table t = make_table(fi);
		int n = 0;
		for (int k = 0; k + 1 < t.n; k++) {
			double lo = t.val[k], hi = t.val[k + 1];
			double mid = lo + (hi - lo) / 2; /* exact: <= 12 significant bits */
			double pts[] = {lo, hi, mid, nextafter(mid, 0), nextafter(mid, INFINITY),
			                lo + (hi - lo) / 4, hi - (hi - lo) / 4, nextafter(lo, INFINITY),
			                nextafter(hi, 0)};
			for (size_t p = 0; p < TA_ARRAY_LEN(pts); p++)
				check_point(fi, &t, pts[p], &n);
		}
		/* Overflow region and specials. */
		double max = t.val[t.n - 1], ulp = max - t.val[t.n - 2];
		double over[] = {max + ulp / 2, nextafter(max + ulp / 2, 0), nextafter(max + ulp / 2, INFINITY),
		                 max + ulp, 2 * max, 1e300, INFINITY, 0x1p-1074, 0x1p-300};
		for (size_t p = 0; p < TA_ARRAY_LEN(over); p++)
			check_point(fi, &t, over[p], &n);
		cr_assert_gt(n, 200);
		free(t.val);
		free(t.bits);
	}
}

Test(dtype, specials)
{
	cr_assert_eq(dt_f16_from_double(-0.0), 0x8000);
	cr_assert_eq(dt_bf16_from_double(-0.0), 0x8000);
	cr_assert_eq(dt_e4m3_from_double(-0.0), 0x80);
	cr_assert_eq(dt_e4m3fnuz_from_double(-0.0, false), 0x00);
	cr_assert_eq(dt_e4m3fnuz_from_double(-0x1p-20, false), 0x00); /* underflow: no -0 */
	cr_assert_eq(dt_f16_from_double(INFINITY), 0x7c00);
	cr_assert_eq(dt_f16_from_double(-INFINITY), 0xfc00);
	cr_assert_eq(dt_f16_from_double(65520.0), 0x7c00); /* tie to even = inf */
	cr_assert_eq(dt_f16_from_double(65519.99), 0x7bff);
	cr_assert_eq(dt_f16_from_double(0x1p-25), 0x0000);  /* tie to even = 0 */
	cr_assert_eq(dt_f16_from_double(0x1.0000000000001p-25), 0x0001);
	cr_assert_eq(dt_f16_from_double(NAN) & 0x7e00, 0x7e00);
	/* satfinite fp8 */
	cr_assert_eq(dt_e4m3_from_double(1000.0), 0x7e);
	cr_assert_eq(dt_e4m3_from_double(INFINITY), 0x7e);
	cr_assert_eq(dt_e4m3_from_double(-INFINITY), 0xfe);
	cr_assert_eq(dt_e4m3_from_double(464.0), 0x7e);
	cr_assert_eq(dt_e4m3_from_double(NAN), 0x7f);
	cr_assert_eq(dt_e5m2_from_double(60000.0), 0x7b);
	cr_assert_eq(dt_e5m2_from_double(INFINITY), 0x7b);
	cr_assert_eq(dt_e5m2_from_double(-1e10), 0xfb);
	cr_assert(isnan(dt_e5m2_to_double(dt_e5m2_from_double(NAN))));
	/* fnuz without saturation overflows to NaN */
	cr_assert_eq(dt_e4m3fnuz_from_double(1000.0, false), 0x80);
	cr_assert_eq(dt_e4m3fnuz_from_double(1000.0, true), 0x7f);
	cr_assert_eq(dt_e5m2fnuz_from_double(-INFINITY, true), 0xff);
	cr_assert_eq(dt_e5m2fnuz_from_double(NAN, true), 0x80);
}

/* ---- cast rules through the element stores ------------------------- */

static int64_t store_d_load_i(DType t, double v)
{
	uint8_t buf[8] = {0};
	dt_store_double(t, buf, v);
	return dt_to_int(t, buf);
}

static int64_t store_i_load_i(DType t, int64_t v)
{
	uint8_t buf[8] = {0};
	dt_store_int(t, buf, v);
	return dt_to_int(t, buf);
}

static double store_i_load_d(DType t, int64_t v)
{
	uint8_t buf[8] = {0};
	dt_store_int(t, buf, v);
	return dt_to_double(t, buf);
}

Test(dtype, float_to_int_truncates_and_saturates)
{
	cr_assert_eq(store_d_load_i(DT_I32, 3.7), 3);
	cr_assert_eq(store_d_load_i(DT_I32, -3.7), -3);
	cr_assert_eq(store_d_load_i(DT_I32, 1e20), INT32_MAX);
	cr_assert_eq(store_d_load_i(DT_I32, -1e20), INT32_MIN);
	cr_assert_eq(store_d_load_i(DT_I32, NAN), 0);
	cr_assert_eq(store_d_load_i(DT_I32, INFINITY), INT32_MAX);
	cr_assert_eq(store_d_load_i(DT_U8, -1.5), 0);
	cr_assert_eq(store_d_load_i(DT_U8, 300.0), 255);
	cr_assert_eq(store_d_load_i(DT_I8, -200.0), -128);
	cr_assert_eq(store_d_load_i(DT_U32, 4294967295.9), 4294967295);
	cr_assert_eq(store_d_load_i(DT_U32, 5e9), 4294967295);
	cr_assert_eq(store_d_load_i(DT_I64, 1e19), INT64_MAX);
	cr_assert_eq(store_d_load_i(DT_I64, -0x1p63), INT64_MIN);
	cr_assert_eq(store_d_load_i(DT_I64, 0x1p62), (int64_t)1 << 62);
	cr_assert_eq(store_d_load_i(DT_BOOL, 0.0), 0);
	cr_assert_eq(store_d_load_i(DT_BOOL, -0.0), 0);
	cr_assert_eq(store_d_load_i(DT_BOOL, 0.25), 1);
	cr_assert_eq(store_d_load_i(DT_BOOL, NAN), 1); /* NaN != 0 */
	uint16_t h = 0xfc00; /* -inf */
	cr_assert_eq(dt_to_int(DT_F16, &h), INT64_MIN);
	cr_assert_eq(dt_sat_int(DT_I16, -40000.5), INT16_MIN);
}

Test(dtype, int_to_int_wraps)
{
	cr_assert_eq(store_i_load_i(DT_I8, 200), -56);
	cr_assert_eq(store_i_load_i(DT_U8, -1), 255);
	cr_assert_eq(store_i_load_i(DT_I16, 40000), 40000 - 65536);
	cr_assert_eq(store_i_load_i(DT_U32, -1), 4294967295);
	cr_assert_eq(store_i_load_i(DT_I32, 0x180000000ll), INT32_MIN);
	cr_assert_eq(store_i_load_i(DT_BOOL, 256), 1); /* != 0, not truncation */
	cr_assert_eq(dt_wrap_int(DT_I32, INT64_MIN), 0);
}

Test(dtype, int_to_float_rounds_once)
{
	cr_assert_eq(store_i_load_d(DT_F16, 2049), 2048.0); /* tie -> even */
	cr_assert_eq(store_i_load_d(DT_F16, 2051), 2052.0);
	cr_assert_eq(store_i_load_d(DT_F16, 65519), 65504.0);
	cr_assert(isinf(store_i_load_d(DT_F16, 65520)));
	cr_assert_eq(store_i_load_d(DT_FP8E4M3, 100000), 448.0);
	cr_assert_eq(store_i_load_d(DT_FP8E4M3, -17), -16.0); /* 16, 18: tie -> even mantissa */
	/* 2^60 + 2^36 + 1: via double it would be a tie and round down to 2^60. */
	int64_t v = ((int64_t)1 << 60) + ((int64_t)1 << 36) + 1;
	cr_assert_eq(store_i_load_d(DT_F32, v), 0x1p60 + 0x1p37);
	int64_t w = ((int64_t)1 << 62) + ((int64_t)1 << 54) + 1;
	cr_assert_eq(store_i_load_d(DT_BF16, w), 0x1p62 + 0x1p55);
	cr_assert_eq(store_i_load_d(DT_BF16, -w), -(0x1p62 + 0x1p55));
	cr_assert_eq(store_i_load_d(DT_F64, INT64_MIN), -0x1p63);
	cr_assert_eq(dt_int_to_float(DT_F16, 0), 0.0);
	cr_assert_eq(store_i_load_d(DT_U32, 4000000000ll), 4000000000.0);
}

Test(dtype, double_to_f32_rounds_once)
{
	/* 1 + 2^-24 + 2^-50: nearest f32 is 1 + 2^-23; a rounding to fewer than
	 * 50 bits first would make it a tie and give 1. */
	float f;
	dt_store_double(DT_F32, &f, 1 + 0x1p-24 + 0x1p-50);
	cr_assert_eq(f, 1 + 0x1p-23f);
	dt_store_double(DT_F32, &f, 1e40);
	cr_assert(isinf(f));
	dt_store_double(DT_F32, &f, 0x1p-149);
	cr_assert_eq(f, 0x1p-149f);
	/* f16 from a double just above an f16 midpoint that rounds to the
	 * midpoint in f32: single rounding must go up. */
	double x = 1 + 0x1p-11 + 0x1p-40; /* f16 ulp at 1 is 2^-10 */
	cr_assert_eq(dt_f16_from_double(x), 0x3c01);
	cr_assert_eq(dt_f16_from_double((float)x), 0x3c00); /* the double-rounding answer */
	cr_assert_eq(dt_round_double(DT_F16, x), 1 + 0x1p-10);
	cr_assert_eq(dt_round_double(DT_FP8E4M3, 500), 448.0);
	cr_assert_eq(dt_round_double(DT_I8, 500), 127.0);
}

Test(dtype, integer_loads)
{
	uint8_t b = 0xff;
	cr_assert_eq(dt_to_int(DT_U8, &b), 255);
	cr_assert_eq(dt_to_int(DT_I8, &b), -1);
	cr_assert_eq(dt_to_int(DT_BOOL, &b), 1);
	cr_assert_eq(dt_to_double(DT_I8, &b), -1.0);
	uint32_t w = 0xffffffffu;
	cr_assert_eq(dt_to_int(DT_U32, &w), 4294967295);
	cr_assert_eq(dt_to_int(DT_I32, &w), -1);
	uint16_t h = 0x8000;
	cr_assert_eq(dt_to_int(DT_I16, &h), -32768);
	int64_t q = INT64_MIN;
	cr_assert_eq(dt_to_int(DT_I64, &q), INT64_MIN);
	double d = 2.75;
	cr_assert_eq(dt_to_int(DT_F64, &d), 2);
	float f = -2.75f;
	cr_assert_eq(dt_to_int(DT_F32, &f), -2);
}

/* ---- the FNUZ IR dtypes (fp8e4m3fnuz, fp8e5m2fnuz) -------------------- */

Test(dtype, fnuz_dtypes_decode_every_pattern)
{
	static const struct { DType t; int eb, mb, bias; } fs[] = {
		{DT_FP8E4M3FNUZ, 4, 3, 8}, {DT_FP8E5M2FNUZ, 5, 2, 16}};
	for (size_t i = 0; i < TA_ARRAY_LEN(fs); i++) {
		cr_assert(dtype_is_float(fs[i].t) && dtype_is_fp8(fs[i].t) && dtype_is_fnuz(fs[i].t));
		cr_assert_eq(dtype_bytes(fs[i].t), 1);
		const char *name = dtype_name(fs[i].t);
		cr_assert_eq(dtype_from_name(name, strlen(name)), fs[i].t);
		for (uint32_t u = 0; u < 256; u++) {
			uint8_t b = (uint8_t)u, back;
			double d = dt_to_double(fs[i].t, &b);
			if (u == 0x80)
				cr_assert(isnan(d), "%s 80 is NaN", name);
			else
				cr_assert(same(d, fp8_ref(b, fs[i].eb, fs[i].mb, fs[i].bias)), "%s %02x: %a", name, u, d);
			dt_store_double(fs[i].t, &back, d);
			cr_assert_eq(back, u, "%s %02x round trip gives %02x", name, u, back);
			cr_assert(same(dt_round_double(fs[i].t, d), d));
		}
	}
	cr_assert(!dtype_is_fnuz(DT_FP8E4M3) && dtype_is_fp8(DT_FP8E5M2) && !dtype_is_fp8(DT_F16));
}

/* Stores through the DType path (the interpreter's) against the table
 * search with saturation: ties, subnormals, the overflow region, +-inf,
 * NaN (0x80) and tiny negatives (0x00: there is no -0). */
Test(dtype, fnuz_dtypes_store_rounds_satfinite)
{
	static const struct { DType t; const FmtInfo *fi; } fs[] = {
		{DT_FP8E4M3FNUZ, &infos[4]}, {DT_FP8E5M2FNUZ, &infos[5]}};
	for (size_t i = 0; i < TA_ARRAY_LEN(fs); i++) {
		const FmtInfo *fi = fs[i].fi;
		Table t = make_table(fi);
		double max = t.val[t.n - 1], ulp = max - t.val[t.n - 2];
		int n = 0;
		for (int k = -1; k + 1 < t.n; k++) {
			double lo = k < 0 ? 0 : t.val[k], hi = k < 0 ? t.val[0] : t.val[k + 1];
			double pts[] = {lo, hi, lo + (hi - lo) / 2, nextafter(lo + (hi - lo) / 2, 0),
			                nextafter(lo + (hi - lo) / 2, INFINITY), lo + (hi - lo) / 8, max + ulp / 2,
			                max + ulp, 1e30, INFINITY, (float)nextafter(max + ulp / 2, INFINITY)};
			for (size_t p = 0; p < TA_ARRAY_LEN(pts); p++)
				for (int sg = 0; sg < 2; sg++) {
					double x = sg ? -pts[p] : pts[p];
					uint32_t want = ref_round(fi, &t, pts[p], true);
					if (sg && want != 0)
						want |= 0x80;
					uint8_t got;
					dt_store_double(fs[i].t, &got, x);
					cr_assert_eq(got, want, "%s(%a): got %02x want %02x", fi->name, x, got, want);
					double r = dt_round_double(fs[i].t, x);
					cr_assert(same(r, mf_decode(fi->f, want)), "%s round(%a) = %a", fi->name, x, r);
					n++;
				}
		}
		uint8_t got;
		dt_store_double(fs[i].t, &got, NAN);
		cr_assert_eq(got, 0x80);
		dt_store_double(fs[i].t, &got, -NAN);
		cr_assert_eq(got, 0x80);
		dt_store_double(fs[i].t, &got, -0.0);
		cr_assert_eq(got, 0x00);
		dt_store_int(fs[i].t, &got, -1000000);
		cr_assert_eq(got, 0xff, "%s(int -1e6) saturates to -max", fi->name);
		cr_assert_eq(dt_int_to_float(fs[i].t, 17), 16.0); /* e4m3fnuz: 16|18 tie to even; e5m2fnuz: 16|20 */
		cr_assert_gt(n, 300);
		free(t.val);
		free(t.bits);
	}
	cr_assert_eq(dt_round_double(DT_FP8E4M3FNUZ, 250), 240.0);
	cr_assert_eq(dt_round_double(DT_FP8E4M3FNUZ, 0x1p-11), 0.0);      /* tie to even (0) */
	cr_assert_eq(dt_round_double(DT_FP8E4M3FNUZ, 0x1.8p-10), 0x1p-9); /* tie to even (2) */
	cr_assert_eq(dt_round_double(DT_FP8E5M2FNUZ, 1e9), 57344.0);
	cr_assert_eq(dt_round_double(DT_FP8E5M2FNUZ, 0x1p-18), 0.0);
}
