/* dtype.c — exact dtype conversions (see dtype.h).
 *
 * All small float formats go through one table-driven encoder: scale |v| so
 * that the representable values around it are the integers, round that
 * integer once (ties to even), and assemble the bits.  Scaling by a power of
 * two is exact in double, and every format here has at most 11 significant
 * bits, so the rounding decision is made on the exact value of v.
 */
#include "dtype.h"

#include <math.h>

enum { K_IEEE, K_FN, K_FNUZ };

static const struct {
	int ebits, mbits, bias, kind;
} fmts[FMT_COUNT] = {
	[FMT_F16] = {5, 10, 15, K_IEEE},
	[FMT_BF16] = {8, 7, 127, K_IEEE},
	[FMT_E4M3] = {4, 3, 7, K_FN},
	[FMT_E5M2] = {5, 2, 15, K_IEEE},
	[FMT_E4M3FNUZ] = {4, 3, 8, K_FNUZ},
	[FMT_E5M2FNUZ] = {5, 2, 16, K_FNUZ},
};

/* Encoding of the largest finite magnitude: below the inf exponent for IEEE,
 * one below the NaN pattern for FN, all ones for FNUZ. */
static uint32_t max_bits(MiniFmt f)
{
	uint32_t emask = (1u << fmts[f].ebits) - 1, mmask = (1u << fmts[f].mbits) - 1;
	switch (fmts[f].kind) {
	case K_IEEE: return ((emask - 1) << fmts[f].mbits) | mmask;
	case K_FN: return (emask << fmts[f].mbits) | (mmask - 1);
	default: return (emask << fmts[f].mbits) | mmask;
	}
}

static uint64_t dbits(double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	return u;
}

static double from_dbits(uint64_t u)
{
	double v;
	memcpy(&v, &u, sizeof v);
	return v;
}

double mf_max(MiniFmt f) { return mf_decode(f, max_bits(f)); }

double mf_decode(MiniFmt f, uint32_t bits)
{
	int eb = fmts[f].ebits, mb = fmts[f].mbits;
	uint32_t emask = (1u << eb) - 1, mmask = (1u << mb) - 1;
	uint32_t sign = (bits >> (eb + mb)) & 1, e = (bits >> mb) & emask, m = bits & mmask;
	switch (fmts[f].kind) {
	case K_FNUZ:
		if (bits == 1u << (eb + mb))
			return NAN;
		break;
	case K_FN:
		if (e == emask && m == mmask)
			return sign ? -NAN : NAN;
		break;
	default:
		if (e == emask) {
			if (m == 0)
				return sign ? -INFINITY : INFINITY;
			/* Keep the payload in the top mantissa bits so a decode/encode
			 * round trip reproduces every NaN pattern. */
			return from_dbits((uint64_t)sign << 63 | 0x7ffull << 52 | (uint64_t)m << (52 - mb));
		}
	}
	double mag = e == 0 ? ldexp(m, 1 - fmts[f].bias - mb)
	                    : ldexp(m | (1u << mb), (int)e - fmts[f].bias - mb);
	return sign ? -mag : mag;
}

uint32_t mf_encode(MiniFmt f, double v, bool sat)
{
	int eb = fmts[f].ebits, mb = fmts[f].mbits, kind = fmts[f].kind;
	uint32_t emask = (1u << eb) - 1, mmask = (1u << mb) - 1;
	uint32_t signbit_ = 1u << (eb + mb);
	uint32_t sign = signbit(v) ? signbit_ : 0;
	uint32_t maxb = max_bits(f);

	if (isnan(v)) {
		if (kind == K_FNUZ)
			return signbit_;
		if (kind == K_FN)
			return sign | (emask << mb) | mmask;
		uint32_t payload = (uint32_t)(dbits(v) >> (52 - mb)) & mmask;
		if (payload == 0) /* would read as inf: make it a quiet NaN */
			payload = 1u << (mb - 1);
		return sign | (emask << mb) | payload;
	}
	double a = fabs(v);
	uint32_t enc = 0;
	bool overflow = isinf(a);
	if (!overflow && a != 0) {
		int e2;
		frexp(a, &e2);
		int E = e2 - 1, emin = 1 - fmts[f].bias;
		/* Quantum (unit in the last place) at a's binade; subnormals share
		 * the quantum of the smallest normal binade. */
		int qexp = (E < emin ? emin : E) - mb;
		double q = ldexp(a, -qexp); /* exact: < 2^(mb+1) */
		double r = floor(q), frac = q - r;
		if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0))
			r += 1;
		uint64_t R = (uint64_t)r;
		if (E < emin) {
			/* R == 2^mb is the smallest normal: the bits come out right. */
			enc = (uint32_t)R;
		} else {
			if (R == 1ull << (mb + 1)) { /* rounded up into the next binade */
				R >>= 1;
				E++;
			}
			int64_t ef = (int64_t)E + fmts[f].bias;
			if (ef > (int64_t)emask)
				overflow = true;
			else
				enc = (uint32_t)(ef << mb) | (uint32_t)(R & mmask);
		}
		if (enc > maxb)
			overflow = true;
	}
	if (overflow) {
		if (sat)
			enc = maxb;
		else if (kind == K_IEEE)
			enc = emask << mb;
		else if (kind == K_FN)
			return sign | (emask << mb) | mmask;
		else
			return signbit_;
	}
	if (kind == K_FNUZ && enc == 0) /* no negative zero: 0x80 is NaN */
		return 0;
	return sign | enc;
}

uint16_t dt_f16_from_double(double v) { return (uint16_t)mf_encode(FMT_F16, v, false); }
uint16_t dt_bf16_from_double(double v) { return (uint16_t)mf_encode(FMT_BF16, v, false); }
uint8_t dt_e4m3_from_double(double v) { return (uint8_t)mf_encode(FMT_E4M3, v, true); }
uint8_t dt_e5m2_from_double(double v) { return (uint8_t)mf_encode(FMT_E5M2, v, true); }
double dt_f16_to_double(uint16_t h) { return mf_decode(FMT_F16, h); }
double dt_bf16_to_double(uint16_t h) { return mf_decode(FMT_BF16, h); }
double dt_e4m3_to_double(uint8_t b) { return mf_decode(FMT_E4M3, b); }
double dt_e5m2_to_double(uint8_t b) { return mf_decode(FMT_E5M2, b); }
uint8_t dt_e4m3fnuz_from_double(double v, bool sat) { return (uint8_t)mf_encode(FMT_E4M3FNUZ, v, sat); }
uint8_t dt_e5m2fnuz_from_double(double v, bool sat) { return (uint8_t)mf_encode(FMT_E5M2FNUZ, v, sat); }
double dt_e4m3fnuz_to_double(uint8_t b) { return mf_decode(FMT_E4M3FNUZ, b); }
double dt_e5m2fnuz_to_double(uint8_t b) { return mf_decode(FMT_E5M2FNUZ, b); }

uint32_t dt_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

float dt_f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* The MiniFmt of a 16- or 8-bit IR float type, or -1. */
static int mini_fmt(DType t)
{
	switch (t) {
	case DT_F16: return FMT_F16;
	case DT_BF16: return FMT_BF16;
	case DT_FP8E4M3: return FMT_E4M3;
	case DT_FP8E5M2: return FMT_E5M2;
	case DT_FP8E4M3FNUZ: return FMT_E4M3FNUZ;
	case DT_FP8E5M2FNUZ: return FMT_E5M2FNUZ;
	default: return -1;
	}
}

/* The float DTypes are contiguous in ir.h (kept local so this file does not
 * depend on module.c). */
static bool is_float(DType t) { return t >= DT_F16 && t <= DT_FP8E5M2FNUZ; }

/* ---- integers ---------------------------------------------------------- */

static void int_range(DType t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case DT_BOOL: *lo = 0, *hi = 1; break;
	case DT_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
	case DT_U8: *lo = 0, *hi = UINT8_MAX; break;
	case DT_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
	case DT_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
	case DT_U32: *lo = 0, *hi = UINT32_MAX; break;
	case DT_I4: *lo = -8, *hi = 7; break;
	case DT_U4: *lo = 0, *hi = 15; break;
	default: *lo = INT64_MIN, *hi = INT64_MAX; break;
	}
}

int64_t dt_wrap_int(DType t, int64_t v)
{
	switch (t) {
	case DT_BOOL: return v != 0;
	case DT_I8: return (int8_t)(uint8_t)v;
	case DT_U8: return (uint8_t)v;
	case DT_I16: return (int16_t)(uint16_t)v;
	case DT_I32: return (int32_t)(uint32_t)v;
	case DT_U32: return (uint32_t)v;
	case DT_I4: return (int64_t)((uint64_t)v & 15) - ((v & 8) ? 16 : 0);
	case DT_U4: return v & 15;
	default: return v;
	}
}

int64_t dt_shift(DType t, int64_t v, int64_t n, bool left)
{
	int bits = t == DT_BOOL ? 1 : dtype_bits(t);
	v = dt_wrap_int(t, v);
	if (n < 0 || n >= bits)
		return left || !dtype_is_signed(t) || v >= 0 ? 0 : -1;
	if (left)
		return dt_wrap_int(t, (int64_t)((uint64_t)v << n));
	if (dtype_is_signed(t))
		return v < 0 ? ~(~v >> n) : v >> n; /* arithmetic without relying on >> of negatives */
	return (int64_t)((uint64_t)v >> n); /* v is zero-extended for unsigned t */
}

int64_t dt_sat_int(DType t, double v)
{
	if (t == DT_BOOL)
		return v != 0;
	if (isnan(v))
		return 0;
	int64_t lo, hi;
	int_range(t, &lo, &hi);
	/* Compare in double before converting: out-of-range conversion is UB.
	 * -2^63 and 2^63 are exact doubles; the int32 and smaller bounds too. */
	if (v <= (double)lo)
		return lo;
	if (t == DT_I64 ? v >= 0x1p63 : v >= (double)hi)
		return hi;
	return (int64_t)trunc(v);
}

/* v as a double rounded to odd: exact when |v| < 2^53, else the low bits
 * are folded into a sticky bit.  A later RNE rounding to <= 51 bits then
 * gives the same result as rounding the exact integer once. */
static double int_to_double_odd(int64_t v)
{
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int s = 0;
	while ((u >> s) >= (1ull << 53))
		s++;
	uint64_t kept = u >> s;
	if (s && (u & ((1ull << s) - 1)))
		kept |= 1;
	double d = ldexp((double)kept, s);
	return v < 0 ? -d : d;
}

double dt_int_to_float(DType t, int64_t v)
{
	switch (t) {
	case DT_F64: return (double)v;
	case DT_F32: return (float)v;
	default: {
		int f = mini_fmt(t);
		if (f < 0)
			return (double)v;
		bool sat = t != DT_F16 && t != DT_BF16; /* the fp8 types are satfinite */
		return mf_decode((MiniFmt)f, mf_encode((MiniFmt)f, int_to_double_odd(v), sat));
	}
	}
}

double dt_round_double(DType t, double v)
{
	switch (t) {
	case DT_F64: return v;
	case DT_F32: return (float)v;
	case DT_F16:
	case DT_BF16:
		return mf_decode((MiniFmt)mini_fmt(t), mf_encode((MiniFmt)mini_fmt(t), v, false));
	case DT_FP8E4M3:
	case DT_FP8E5M2:
	case DT_FP8E4M3FNUZ:
	case DT_FP8E5M2FNUZ:
		return mf_decode((MiniFmt)mini_fmt(t), mf_encode((MiniFmt)mini_fmt(t), v, true));
	default: return (double)dt_sat_int(t, v);
	}
}

/* ---- element loads and stores ------------------------------------------ */

static int64_t load_int(DType t, const void *p)
{
	switch (t) {
	case DT_BOOL: return *(const uint8_t *)p != 0;
	case DT_I8: return *(const int8_t *)p;
	case DT_U8: return *(const uint8_t *)p;
	case DT_I16: { int16_t x; memcpy(&x, p, 2); return x; }
	case DT_I32: { int32_t x; memcpy(&x, p, 4); return x; }
	case DT_U32: { uint32_t x; memcpy(&x, p, 4); return x; }
	case DT_I4: case DT_U4: return dt_wrap_int(t, *(const uint8_t *)p); /* the low nibble */
	default: { int64_t x; memcpy(&x, p, 8); return x; }
	}
}

static void store_int_bits(DType t, void *p, int64_t v)
{
	switch (t) {
	case DT_BOOL: *(uint8_t *)p = v != 0; break;
	case DT_I8:
	case DT_U8: *(uint8_t *)p = (uint8_t)v; break;
	case DT_I4:
	case DT_U4: *(uint8_t *)p = (uint8_t)((*(uint8_t *)p & 0xf0) | (v & 15)); break; /* the low nibble */
	case DT_I16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case DT_I32:
	case DT_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

double dt_to_double(DType t, const void *p)
{
	switch (t) {
	case DT_F64: { double x; memcpy(&x, p, 8); return x; }
	case DT_F32: { float x; memcpy(&x, p, 4); return x; }
	case DT_F16:
	case DT_BF16: { uint16_t x; memcpy(&x, p, 2); return mf_decode((MiniFmt)mini_fmt(t), x); }
	case DT_FP8E4M3:
	case DT_FP8E5M2:
	case DT_FP8E4M3FNUZ:
	case DT_FP8E5M2FNUZ: return mf_decode((MiniFmt)mini_fmt(t), *(const uint8_t *)p);
	default: return (double)load_int(t, p);
	}
}

int64_t dt_to_int(DType t, const void *p)
{
	if (is_float(t))
		return dt_sat_int(DT_I64, dt_to_double(t, p));
	return load_int(t, p);
}

void dt_store_double(DType t, void *p, double v)
{
	switch (t) {
	case DT_F64: memcpy(p, &v, 8); break;
	case DT_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
	case DT_F16:
	case DT_BF16: { uint16_t x = (uint16_t)mf_encode((MiniFmt)mini_fmt(t), v, false); memcpy(p, &x, 2); break; }
	case DT_FP8E4M3:
	case DT_FP8E5M2:
	case DT_FP8E4M3FNUZ:
	case DT_FP8E5M2FNUZ: *(uint8_t *)p = (uint8_t)mf_encode((MiniFmt)mini_fmt(t), v, true); break;
	default: store_int_bits(t, p, dt_sat_int(t, v)); break;
	}
}

void dt_store_int(DType t, void *p, int64_t v)
{
	if (is_float(t))
		dt_store_double(t, p, dt_int_to_float(t, v));
	else
		store_int_bits(t, p, dt_wrap_int(t, v));
}

/* ---- elements by index (i4/u4: nibble i & 1 of byte i >> 1) ------------ */

double dt_get_double(DType t, const void *base, int64_t i)
{
	if (t == DT_I4 || t == DT_U4)
		return (double)dt_get_int(t, base, i);
	return dt_to_double(t, (const char *)base + i * dtype_bytes(t));
}

int64_t dt_get_int(DType t, const void *base, int64_t i)
{
	if (t == DT_I4 || t == DT_U4)
		return dt_wrap_int(t, ((const uint8_t *)base)[i >> 1] >> (4 * (i & 1)));
	return dt_to_int(t, (const char *)base + i * dtype_bytes(t));
}

static void set_nibble(void *base, int64_t i, int64_t v)
{
	uint8_t *p = (uint8_t *)base + (i >> 1);
	int sh = 4 * (int)(i & 1);
	*p = (uint8_t)((*p & ~(15 << sh)) | (v & 15) << sh);
}

void dt_set_double(DType t, void *base, int64_t i, double v)
{
	if (t == DT_I4 || t == DT_U4)
		set_nibble(base, i, dt_sat_int(t, v));
	else
		dt_store_double(t, (char *)base + i * dtype_bytes(t), v);
}

void dt_set_int(DType t, void *base, int64_t i, int64_t v)
{
	if (t == DT_I4 || t == DT_U4)
		set_nibble(base, i, v);
	else
		dt_store_int(t, (char *)base + i * dtype_bytes(t), v);
}
