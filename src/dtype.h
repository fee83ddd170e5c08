/* dtype.h — exact conversions between the Tile IR dtypes.
 *
 * These define the numeric contract of the language (docs: tile-ir.md,
 * "Casts"): every conversion from a wider value rounds ONCE, to nearest with
 * ties to even, straight to the target format.  The interpreter uses them for
 * every load, store and cast, and backends' emulators use the raw-bit helpers
 * to check their output.
 *
 * Values travel as double for floats (every IR float type, and every value
 * of those types, is exactly representable in double) and as int64_t for
 * integers (every IR integer type fits).  The DType predicates and names
 * (dtype_bytes, dtype_is_float, ...) live in ir.h / module.c.
 */
#ifndef TILEASM_DTYPE_H
#define TILEASM_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

/* ---- loads and stores of one element in its real byte format ---------- */

/* Value of the element at p.  Integers and bool convert exactly; floats
 * decode exactly (NaN payloads are kept in the top mantissa bits). */
double dt_to_double(DType t, const void *p);
/* Integer value of the element at p.  Floats truncate toward zero and
 * saturate to the int64 range, NaN gives 0. */
int64_t dt_to_int(DType t, const void *p);

/* Store v into an element of type t with the cast rules:
 * float targets round to nearest even (f16/bf16/f32/f64 overflow to inf, the
 * fp8 types saturate to their largest finite value, NaN stays NaN); integer
 * targets truncate toward zero and saturate to the type's range, NaN -> 0;
 * bool stores v != 0. */
void dt_store_double(DType t, void *p, double v);
/* Store integer v: integer targets wrap (two's complement truncation), float
 * targets round to nearest even ONCE (also for |v| > 2^53), bool is v != 0. */
void dt_store_int(DType t, void *p, int64_t v);

/* Element i of an array of type t at base, with the rules above; i4/u4
 * arrays hold element i in nibble i & 1 (low first) of byte i >> 1. */
double dt_get_double(DType t, const void *base, int64_t i);
int64_t dt_get_int(DType t, const void *base, int64_t i);
void dt_set_double(DType t, void *base, int64_t i, double v);
void dt_set_int(DType t, void *base, int64_t i, int64_t v);

/* The value t holds after storing v (as dt_store_double then dt_to_double):
 * "round v to the type".  For integer types the result is the integer. */
double dt_round_double(DType t, double v);
/* Wrap v to an integer type's width (sign- or zero-extended back to int64). */
int64_t dt_wrap_int(DType t, int64_t v);
/* v << n (left) or v >> n (arithmetic for signed t, logical for unsigned)
 * in integer type t, wrapped to t.  A count outside [0, bits of t) shifts
 * every bit out: the result is 0, or -1 for >> of a negative signed value. */
int64_t dt_shift(DType t, int64_t v, int64_t n, bool left);
/* Saturating float -> integer conversion of the cast rules (NaN -> 0). */
int64_t dt_sat_int(DType t, double v);
/* The int64 v rounded ONCE to float type t (exact for f64 up to RNE). */
double dt_int_to_float(DType t, int64_t v);

/* ---- raw-bit helpers --------------------------------------------------- */

/* Small binary floating-point formats.  IEEE formats have infinities and
 * NaNs at the all-ones exponent; FN (OCP E4M3FN) has no infinities and only
 * S.1111.111 is NaN; FNUZ (gfx942 fp8) has no infinities, no negative zero,
 * and 0x80 is the only NaN. */
typedef enum {
	FMT_F16,      /* 1.5.10, bias 15, IEEE */
	FMT_BF16,     /* 1.8.7, bias 127, IEEE */
	FMT_E4M3,     /* 1.4.3, bias 7, FN: max 448 */
	FMT_E5M2,     /* 1.5.2, bias 15, IEEE: max 57344 */
	FMT_E4M3FNUZ, /* 1.4.3, bias 8, FNUZ: max 240 */
	FMT_E5M2FNUZ, /* 1.5.2, bias 16, FNUZ: max 57344 */
	FMT_COUNT
} MiniFmt;

/* Decode bits of format f exactly. */
double mf_decode(MiniFmt f, uint32_t bits);
/* Encode v with one RNE rounding.  sat: values beyond the largest finite
 * value (and infinities) become +-max; otherwise they become inf (IEEE) or
 * NaN (FN, FNUZ). */
uint32_t mf_encode(MiniFmt f, double v, bool sat);
/* Largest finite value of the format. */
double mf_max(MiniFmt f);

/* Shorthands with the IR's cast rules (IEEE overflow -> inf, fp8 satfinite). */
uint16_t dt_f16_from_double(double v);
uint16_t dt_bf16_from_double(double v);
uint8_t dt_e4m3_from_double(double v);
uint8_t dt_e5m2_from_double(double v);
double dt_f16_to_double(uint16_t h);
double dt_bf16_to_double(uint16_t h);
double dt_e4m3_to_double(uint8_t b);
double dt_e5m2_to_double(uint8_t b);
/* gfx942 fnuz fp8 (not IR dtypes; for the AMD emulator).  sat as in
 * mf_encode: v_cvt_pk_fp8_f32 saturates only with its clamp bit. */
uint8_t dt_e4m3fnuz_from_double(double v, bool sat);
uint8_t dt_e5m2fnuz_from_double(double v, bool sat);
double dt_e4m3fnuz_to_double(uint8_t b);
double dt_e5m2fnuz_to_double(uint8_t b);
/* f32 <-> raw bits. */
uint32_t dt_f32_bits(float f);
float dt_f32_from_bits(uint32_t u);

#endif
