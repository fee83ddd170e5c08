/* lower_expr.c — values: the register classes of dtypes, element addresses
 * and loads/stores, expressions (arithmetic, Python floor division,
 * transcendentals), and the loops that spread a tile's elements over the
 * threads. */
#include <math.h>
#include <stdio.h>

#include "lower_impl.h"

VType simt_vt(DType t)
{
	switch (t) {
	case DT_BOOL: return VT_PRED;
	case DT_I64: return VT_I64;
	case DT_F16: case DT_BF16: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ: case DT_FP8E5M2FNUZ:
	case DT_F32: return VT_F32;
	case DT_F64: return VT_F64;
	default: return VT_I32;
	}
}

VType simt_storage_vt(DType t)
{
	switch (t) {
	case DT_F16: case DT_BF16: return VT_B16;
	case DT_BOOL: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ: case DT_FP8E5M2FNUZ: return VT_I32;
	default: return simt_vt(t);
	}
}

/* ---- addresses --------------------------------------------------------- */

/* Row-major element index (i64) of idx in global tensor bufid. */
static int32_t global_lin(L *c, int32_t bufid, const int32_t *idx)
{
	const BufLoc *bl = &c->bl[bufid];
	int32_t lin = cvt(c, DT_I64, DT_I32, idx[0]);
	for (int d = 1; d < BUF(bufid)->rank; d++) {
		lin = bin(c, SI_MUL, DT_I64, lin, bl->dim64[d]);
		lin = bin(c, SI_ADD, DT_I64, lin, cvt(c, DT_I64, DT_I32, idx[d]));
	}
	return lin;
}

/* i4/u4 global elements: nibble (lin & 1) of byte lin >> 1, low first. */
int32_t lower_packed_nibble(L *c, int32_t bufid, const int32_t *idx)
{
	return bin(c, SI_AND, DT_I32, cvt(c, DT_I32, DT_I64, global_lin(c, bufid, idx)), i32c(c, 1));
}

/* Address of element idx (i32 registers, a full index) of buffer b. */
/* Register r holds the variable of an unrolled loop copy: its value. */
static bool unrolled_value(const L *c, int32_t r, int64_t *v)
{
	for (int i = c->nureg - 1; i >= 0; i--)
		if (c->ureg[i] == r) {
			*v = c->uval[i];
			return true;
		}
	return false;
}

Addr lower_elem_addr(L *c, int32_t bufid, const int32_t *idx)
{
	const Buffer *b = BUF(bufid);
	const BufLoc *bl = &c->bl[bufid];
	int es = dtype_bytes((DType)b->dtype);
	if (b->scope == SCOPE_GLOBAL) {
		int32_t lin = global_lin(c, bufid, idx);
		/* i4/u4: the byte of the element (two per byte; lower_load_elem/lower_store_elem pick the nibble) */
		lin = dtype_is_packed((DType)b->dtype) ? bin(c, SI_SHR, DT_I64, lin, i32c(c, 1))
		                                       : bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es));
		return (Addr){SP_GLOBAL, bin(c, SI_ADD, DT_I64, bl->base, lin), 0};
	}
	if (b->scope != SCOPE_LOCAL && b->rank == 2) /* the shared-tile layout (lower_swizzle.c) */
		return (Addr){SP_SHARED, lower_sh_addr(c, bufid, idx[0], idx[1]), bl->smem};
	if (b->scope == SCOPE_LOCAL && bl->lreg >= 0) { /* indices all unrolled loop variables: the element */
		int64_t k = 0, v;
		int d = 0;
		for (; d < b->rank && unrolled_value(c, idx[d], &v) && v >= 0 && v < bdim(c, b, d); d++)
			k = k * bdim(c, b, d) + v;
		if (d == b->rank)
			return (Addr){SP_REGS, -1, (int64_t)bufid << 32 | (k * es)};
	}
	int32_t lin = idx[0];
	for (int d = 1; d < b->rank; d++)
		lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, lin, i32c(c, bdim(c, b, d))), idx[d]);
	lin = bin(c, SI_MUL, DT_I32, lin, i32c(c, es));
	if (b->scope == SCOPE_LOCAL && bl->lreg >= 0)
		return (Addr){SP_REGS, lin, (int64_t)bufid << 32};
	if (b->scope == SCOPE_LOCAL) {
		int32_t la = reg(c, VT_I64);
		SInst in = I(SI_LOCALADDR, DT_I64, la, -1, -1);
		in.imm = bl->shadow >= 0 ? bl->shadow : bl->local;
		emit(c, in);
		return (Addr){SP_LOCAL, bin(c, SI_ADD, DT_I64, la, cvt(c, DT_I64, DT_I32, lin)), 0};
	}
	return (Addr){SP_SHARED, bin(c, SI_ADD, DT_I32, c->shbase, lin), bl->smem};
}

/* Register-resident locals: element k of the current copy (the private
 * one inside a body that writes the local).  A load selects among all
 * elements by the byte offset, a store updates each element it may hit
 * (one move for a one-element local: a var). */
static int32_t regs_elem(L *c, int64_t off, int k)
{
	const BufLoc *bl = &c->bl[off >> 32];
	return (bl->lshadow >= 0 ? bl->lshadow : bl->lreg) + k;
}

int32_t lower_regs_ld(L *c, DType t, int32_t addr, int64_t off)
{
	const BufLoc *bl = &c->bl[off >> 32];
	int es = dtype_bytes(t);
	int32_t byte = (int32_t)(off & 0xffffffff), r = reg(c, simt_storage_vt(t));
	if (addr < 0) { /* a constant element (lower_elem_addr) */
		emit(c, I(SI_MOV, t, r, regs_elem(c, off, byte / es), -1));
		return r;
	}
	if (byte)
		addr = bin(c, SI_ADD, DT_I32, addr, i32c(c, byte));
	emit(c, I(SI_MOV, t, r, regs_elem(c, off, 0), -1));
	for (int k = 1; k < bl->lreg_n; k++) {
		SInst in = I(SI_SELP, t, r, regs_elem(c, off, k), r);
		in.c = setp(c, CMP_EQ, DT_I32, addr, i32c(c, (int64_t)k * es));
		emit(c, in);
	}
	return r;
}

void lower_regs_st(L *c, DType t, int32_t addr, int64_t off, int32_t val, int32_t guard)
{
	const BufLoc *bl = &c->bl[off >> 32];
	int es = dtype_bytes(t);
	int32_t byte = (int32_t)(off & 0xffffffff);
	if (addr >= 0 && byte)
		addr = bin(c, SI_ADD, DT_I32, addr, i32c(c, byte));
	for (int k = 0; k < bl->lreg_n; k++) {
		int32_t e = regs_elem(c, off, k), p = guard;
		if (addr < 0 && k != byte / es) /* a constant element (lower_elem_addr) */
			continue;
		if (bl->lreg_n > 1 && addr >= 0) {
			int32_t hit = setp(c, CMP_EQ, DT_I32, addr, i32c(c, (int64_t)k * es));
			p = guard >= 0 ? bin(c, SI_AND, DT_BOOL, hit, guard) : hit;
		}
		if (p < 0) {
			emit(c, I(SI_MOV, t, e, val, -1));
		} else {
			SInst in = I(SI_SELP, t, e, val, e);
			in.c = p;
			emit(c, in);
		}
	}
}

int32_t lower_load_elem(L *c, int32_t bufid, const int32_t *idx, int32_t guard)
{
	DType t = (DType)BUF(bufid)->dtype;
	Addr a = lower_elem_addr(c, bufid, idx);
	if (dtype_is_packed(t)) { /* the byte, shifted to the nibble and extended: canonical i32 */
		int32_t v = i32c(c, 0);
		SInst in = I(SI_LD, DT_U8, v, a.addr, -1);
		in.sub = (uint8_t)a.sp;
		in.guard = guard; /* not loaded: 0 */
		emit(c, in);
		int32_t sh = bin(c, SI_SHL, DT_I32, lower_packed_nibble(c, bufid, idx), i32c(c, 2));
		v = bin(c, SI_SHR, DT_U32, v, sh);
		if (t == DT_U4)
			return bin(c, SI_AND, DT_I32, v, i32c(c, 15));
		return bin(c, SI_SHR, DT_I32, bin(c, SI_SHL, DT_I32, v, i32c(c, 28)), i32c(c, 28));
	}
	return unpack(c, t, ld(c, a.sp, t, a.addr, a.off, guard));
}

void lower_store_elem(L *c, int32_t bufid, const int32_t *idx, int32_t val, int32_t guard)
{
	DType t = (DType)BUF(bufid)->dtype;
	Addr a = lower_elem_addr(c, bufid, idx);
	if (dtype_is_packed(t)) { /* neighbours share the byte: a compare-and-swap loop on its word */
		lower_cas_update(c, a.sp, a.addr, t, -1, val, lower_packed_nibble(c, bufid, idx), guard);
		return;
	}
	st(c, a.sp, t, a.addr, a.off, pack(c, t, val), guard);
}

/* ---- expressions ------------------------------------------------------- */

/* The bits of canonical value a (type from) zero-extended in an i32 (i64
 * for 64-bit types), and back: a same-width register move for 32/64-bit
 * floats, the storage form (pack/unpack) for 16- and 8-bit floats. */
int32_t lower_bits_of(L *c, DType from, int32_t a)
{
	int w = dtype_bits(from);
	if (from == DT_F32 || from == DT_F64) {
		int32_t r = reg(c, w == 64 ? VT_I64 : VT_I32);
		emit(c, I(SI_MOV, w == 64 ? DT_I64 : DT_I32, r, a, -1));
		return r;
	}
	if (from == DT_F16 || from == DT_BF16) {
		int32_t r = reg(c, VT_I32);
		emit(c, I(SI_PACK2, DT_I32, r, pack(c, from, a), movi(c, DT_F16, 0)));
		return r;
	}
	if (dtype_is_fp8(from))
		a = pack(c, from, a);
	return w >= 32 ? a : bin(c, SI_AND, DT_I32, a, i32c(c, (1 << w) - 1));
}

int32_t lower_from_bits(L *c, DType to, int32_t x)
{
	int w = dtype_bits(to);
	if (to == DT_F32 || to == DT_F64) {
		int32_t r = reg(c, simt_vt(to));
		emit(c, I(SI_MOV, to, r, x, -1));
		return r;
	}
	if (to == DT_F16 || to == DT_BF16) {
		int32_t h = reg(c, VT_B16);
		emit(c, I(SI_HALF, DT_I32, h, x, -1));
		return unpack(c, to, h);
	}
	if (dtype_is_fp8(to))
		return unpack(c, to, bin(c, SI_AND, DT_I32, x, i32c(c, 0xff)));
	if (w >= 32)
		return x;
	if (dtype_is_signed(to)) /* sign-extend the low w bits */
		return bin(c, SI_SHR, DT_I32, bin(c, SI_SHL, DT_I32, x, i32c(c, 32 - w)), i32c(c, 32 - w));
	return bin(c, SI_AND, DT_I32, x, i32c(c, (1 << w) - 1));
}

/* reinterpret(to, a): integers of one width are a cast (a wrap); otherwise
 * through the bits. */
static int32_t reinterpret(L *c, DType to, DType from, int32_t a)
{
	if (dtype_is_int(to) && dtype_is_int(from))
		return cvt(c, to, from, a);
	return lower_from_bits(c, to, lower_bits_of(c, from, a));
}

/* Python floor division / modulo on signed ints (op type t). */
static int32_t floordivmod(L *c, DType t, int32_t a, int32_t b, bool mod)
{
	if (t == DT_U32)
		return bin(c, mod ? SI_REM : SI_DIV, t, a, b);
	int32_t q = bin(c, SI_DIV, t, a, b), r = bin(c, SI_REM, t, a, b);
	int32_t z = t == DT_I64 ? movi(c, DT_I64, 0) : i32c(c, 0);
	/* adjust when r != 0 and sign(r) != sign(b) */
	int32_t rnz = setp(c, CMP_NE, t, r, z);
	int32_t sx = bin(c, SI_XOR, t, r, b);
	int32_t neg = setp(c, CMP_LT, t, sx, z);
	int32_t adj = bin(c, SI_AND, DT_BOOL, rnz, neg);
	if (mod)
		return selp(c, t, adj, bin(c, SI_ADD, t, r, b), r);
	int32_t one = t == DT_I64 ? movi(c, DT_I64, 1) : i32c(c, 1);
	return selp(c, t, adj, bin(c, SI_SUB, t, q, one), q);
}

static int32_t mathf(L *c, MathOp mo, DType o, int32_t a)
{
	int32_t r = reg(c, o == DT_F64 ? VT_F64 : VT_F32);
	SInst in = I(SI_MATH, o, r, a, -1);
	in.sub = (uint8_t)mo;
	emit(c, in);
	return r;
}

static int32_t math(L *c, MathOp mo, int32_t a) { return mathf(c, mo, DT_F32, a); }

static int32_t f32c(L *c, double v) { return movf(c, DT_F32, v); }
static int32_t fmul(L *c, int32_t a, int32_t b) { return bin(c, SI_MUL, DT_F32, a, b); }
static int32_t fadd(L *c, int32_t a, int32_t b) { return bin(c, SI_ADD, DT_F32, a, b); }

/* exp(x) in f32 */
static int32_t fexp(L *c, int32_t x) { return math(c, MATH_EX2, fmul(c, x, f32c(c, 1.4426950408889634))); }

/* sin/cos: reduce to [-pi, pi] by k = rint(x / 2pi) in two steps (2pi =
 * C1 + C2, C1 = 6.28125 has 8 bits, so k * C1 is exact for |k| < 2^16),
 * then the hardware's approximation. */
static int32_t sincos(L *c, bool cosine, int32_t x)
{
	int32_t k = math(c, MATH_RNDNE, fmul(c, x, f32c(c, 0.15915494309189535)));
	int32_t r = bin(c, SI_SUB, DT_F32, x, fmul(c, k, f32c(c, 6.28125)));
	r = bin(c, SI_SUB, DT_F32, r, fmul(c, k, f32c(c, 0.0019353071795864769)));
	return math(c, cosine ? MATH_COS : MATH_SIN, r);
}

/* erf(x) in f32: x (2/sqrt(pi)) (1 - x^2/3 + x^4/10 - ...) for |x| < 0.5,
 * else Abramowitz & Stegun 7.1.26, 1 - (a1 t + ... + a5 t^5) exp(-x^2) with
 * t = 1 / (1 + p |x|) (absolute error 1.5e-7), with x's sign. */
static int32_t ferf(L *c, int32_t x)
{
	int32_t ax = un(c, SI_ABS, DT_F32, x), x2 = fmul(c, x, x);
	static const double taylor[] = {-1.0 / 1320, 1.0 / 216, -1.0 / 42, 1.0 / 10, -1.0 / 3};
	int32_t s = f32c(c, 1.0 / 9360); /* Horner in x^2 */
	for (size_t i = 0; i < TA_ARRAY_LEN(taylor); i++)
		s = fadd(c, fmul(c, s, x2), f32c(c, taylor[i]));
	int32_t small = fmul(c, fmul(c, x, f32c(c, 1.1283791670955126)), fadd(c, f32c(c, 1.0), fmul(c, x2, s)));
	int32_t t = bin(c, SI_DIV, DT_F32, f32c(c, 1.0), fadd(c, f32c(c, 1.0), fmul(c, ax, f32c(c, 0.3275911))));
	static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
	int32_t poly = f32c(c, a[0]);
	for (size_t i = 1; i < TA_ARRAY_LEN(a); i++)
		poly = fadd(c, fmul(c, poly, t), f32c(c, a[i]));
	poly = fmul(c, poly, t);
	int32_t big = bin(c, SI_SUB, DT_F32, f32c(c, 1.0), fmul(c, poly, fexp(c, un(c, SI_NEG, DT_F32, x2))));
	big = selp(c, DT_F32, setp(c, CMP_LT, DT_F32, x, f32c(c, 0)), un(c, SI_NEG, DT_F32, big), big);
	int32_t r = selp(c, DT_F32, setp(c, CMP_LT, DT_F32, ax, f32c(c, 0.5)), small, big);
	return selp(c, DT_F32, setp(c, CMP_NE, DT_F32, x, x), x, r); /* NaN in, NaN out */
}

/* pow(x, y) = 2^(y log2|x|), negated for x < 0 or -0 and odd integral y, NaN for
 * x < 0 and non-integral y; pow(x, 0) = pow(1, y) = 1 as in C. */
static int32_t fpow(L *c, int32_t x, int32_t y)
{
	int32_t r = math(c, MATH_EX2, fmul(c, y, math(c, MATH_LG2, un(c, SI_ABS, DT_F32, x))));
	int32_t yint = setp(c, CMP_EQ, DT_F32, math(c, MATH_FLOOR, y), y);
	int32_t half = fmul(c, y, f32c(c, 0.5));
	int32_t yodd = bin(c, SI_AND, DT_BOOL, yint, setp(c, CMP_NE, DT_F32, math(c, MATH_FLOOR, half), half));
	int32_t neg = setp(c, CMP_LT, DT_F32, x, f32c(c, 0));
	/* x's sign bit, -0 included (1/-0 = -inf): pow(-0, -3) = -inf, pow(-0, 3) = -0 as in C */
	int32_t negz = bin(c, SI_AND, DT_BOOL, setp(c, CMP_EQ, DT_F32, x, f32c(c, 0)),
	                   setp(c, CMP_LT, DT_F32, bin(c, SI_DIV, DT_F32, f32c(c, 1.0), x), f32c(c, 0)));
	int32_t sign = bin(c, SI_OR, DT_BOOL, neg, negz);
	r = selp(c, DT_F32, bin(c, SI_AND, DT_BOOL, sign, yodd), un(c, SI_NEG, DT_F32, r), r);
	r = selp(c, DT_F32, bin(c, SI_AND, DT_BOOL, neg, un(c, SI_NOT, DT_BOOL, yint)), f32c(c, NAN), r);
	int32_t one = bin(c, SI_OR, DT_BOOL, setp(c, CMP_EQ, DT_F32, y, f32c(c, 0)),
	                  setp(c, CMP_EQ, DT_F32, x, f32c(c, 1.0)));
	return selp(c, DT_F32, one, f32c(c, 1.0), r);
}

/* fmod (trunc) or Python's % (floor) on floats: r = a - n b with n the
 * rounded quotient, then moved into range when the quotient's rounding made
 * n one too large or small (r of the wrong sign).  Exact while n b is (|a /
 * b| below about 2^12 in f32); docs/tile-ir.md states the limit. */
static int32_t fmodulo(L *c, DType o, int32_t a, int32_t b, bool floor_mod)
{
	int32_t z = movf(c, o, 0);
	int32_t n = mathf(c, MATH_TRUNC, o, bin(c, SI_DIV, o, a, b));
	int32_t r = bin(c, SI_SUB, o, a, bin(c, SI_MUL, o, n, b));
	/* fmod's result has a's sign: add |b| with a's sign when it has not */
	int32_t ab = un(c, SI_ABS, o, b), an = setp(c, CMP_LT, o, a, z);
	int32_t sb = selp(c, o, an, un(c, SI_NEG, o, ab), ab);
	int32_t wrong = bin(c, SI_AND, DT_BOOL, setp(c, CMP_NE, o, r, z),
	                    bin(c, SI_XOR, DT_BOOL, setp(c, CMP_LT, o, r, z), an));
	r = selp(c, o, wrong, bin(c, SI_ADD, o, r, sb), r);
	if (floor_mod) { /* then to b's sign */
		int32_t bn = setp(c, CMP_LT, o, b, z);
		int32_t move = bin(c, SI_AND, DT_BOOL, setp(c, CMP_NE, o, r, z),
		                   bin(c, SI_XOR, DT_BOOL, setp(c, CMP_LT, o, r, z), bn));
		r = selp(c, o, move, bin(c, SI_ADD, o, r, b), r);
	}
	return r;
}

/* Transcendentals and roundings.  f64 has only what is exact in f64
 * (roundings, sqrt); the rest would silently be f32, so it is refused. */
static int32_t transcend(L *c, const Expr *e, Op op, DType t, int32_t x)
{
	static const MathOp rnd[] = {[OP_FLOOR - OP_FLOOR] = MATH_FLOOR, [OP_CEIL - OP_FLOOR] = MATH_CEIL,
	                             [OP_ROUND - OP_FLOOR] = MATH_RNDNE};
	if (op == OP_FLOOR || op == OP_CEIL || op == OP_ROUND)
		return fix(c, t, mathf(c, rnd[op - OP_FLOOR], op_type(t), x));
	if (t == DT_F64 && (op == OP_SQRT || op == OP_RSQRT)) {
		int32_t r = mathf(c, MATH_SQRT, DT_F64, x);
		return op == OP_SQRT ? r : bin(c, SI_DIV, DT_F64, movf(c, DT_F64, 1.0), r);
	}
	if (t == DT_F64) {
		char what[160];
		snprintf(what, sizeof what, "f64 '%s' is not supported on %s (it is implemented in f32 only; cast to "
		         "f32 explicitly)", op_name(op), target_name(c->t->id));
		fail(c, e->pos, "%s", what);
		return x;
	}
	int32_t r;
	switch (op) {
	case OP_EXP: r = fexp(c, x); break;
	case OP_EXP2: r = math(c, MATH_EX2, x); break;
	case OP_LOG: r = fmul(c, math(c, MATH_LG2, x), f32c(c, 0.6931471805599453)); break;
	case OP_LOG2: r = math(c, MATH_LG2, x); break;
	case OP_SQRT: r = math(c, MATH_SQRT, x); break;
	case OP_RSQRT: r = bin(c, SI_DIV, DT_F32, f32c(c, 1.0), math(c, MATH_SQRT, x)); break;
	case OP_SIN: r = sincos(c, false, x); break;
	case OP_COS: r = sincos(c, true, x); break;
	case OP_ERF: r = ferf(c, x); break;
	case OP_SIGMOID: /* 1 / (1 + exp(-x)): exp overflows to inf for x < -88, giving 0 */
		r = bin(c, SI_DIV, DT_F32, f32c(c, 1.0), fadd(c, f32c(c, 1.0), fexp(c, un(c, SI_NEG, DT_F32, x))));
		break;
	default: { /* tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|) */
		int32_t ax = un(c, SI_ABS, DT_F32, x);
		int32_t e2 = math(c, MATH_EX2, fmul(c, ax, f32c(c, -2.8853900817779268)));
		int32_t one = f32c(c, 1.0);
		int32_t v = bin(c, SI_DIV, DT_F32, bin(c, SI_SUB, DT_F32, one, e2), fadd(c, one, e2));
		/* small |x|: tanh(x) ~ x - x^3/3 keeps relative accuracy */
		int32_t x3 = fmul(c, fmul(c, ax, ax), ax);
		int32_t s = bin(c, SI_SUB, DT_F32, ax, fmul(c, x3, f32c(c, 1.0 / 3.0)));
		v = selp(c, DT_F32, setp(c, CMP_LT, DT_F32, ax, f32c(c, 0.004)), s, v);
		int32_t neg = setp(c, CMP_LT, DT_F32, x, f32c(c, 0));
		v = selp(c, DT_F32, neg, un(c, SI_NEG, DT_F32, v), v);
		/* NaN in, NaN out */
		r = selp(c, DT_F32, setp(c, CMP_NE, DT_F32, x, x), x, v);
		break;
	}
	}
	return fix(c, t, r);
}

/* a << n, a >> n in dtype t.  The IR shifts every bit out for a count
 * outside [0, bits) (dt_shift); SI_SHL/SHR need the count in range, so a
 * count that is not a constant in range is checked here. */
static int32_t shift(L *c, const Expr *e, DType t)
{
	DType o = op_type(t);
	int bits = o == DT_I64 ? 64 : 32; /* small types live widened: counts 8..31 already clear them */
	bool left = e->op == OP_SHL, arith = !left && o != DT_U32;
	int32_t a = expr_as(c, e->a, t), n = expr_as(c, e->b, t);
	int32_t n32 = o == DT_I64 ? cvt(c, DT_I32, DT_I64, n) : n;
	int64_t k;
	if (ir_const_int(c->m, e->b, &k) && k >= 0 && k < bits) {
		int32_t r = bin(c, left ? SI_SHL : SI_SHR, o, a, n32);
		return left ? fix(c, t, r) : r;
	}
	int32_t in;
	if (o == DT_I64)
		in = bin(c, SI_AND, DT_BOOL, setp(c, CMP_GT, DT_I64, n, movi(c, DT_I64, -1)), /* AMD has > and <, not >= */
		         setp(c, CMP_LT, DT_I64, n, movi(c, DT_I64, 64)));
	else /* unsigned: negative counts are huge */
		in = setp(c, CMP_LT, DT_U32, n, i32c(c, bits));
	if (arith) /* sign fill: shift by bits - 1 */
		return bin(c, SI_SHR, o, a, selp(c, DT_I32, in, n32, i32c(c, bits - 1)));
	int32_t r = bin(c, left ? SI_SHL : SI_SHR, o, a, n32);
	r = selp(c, o, in, r, o == DT_I64 ? movi(c, DT_I64, 0) : i32c(c, 0));
	return left ? fix(c, t, r) : r;
}

/* if_then_else(p, a, b): only the chosen side runs, as the lowering of an if
 * statement (lower.c lower_if) does it. */
static int32_t lazy_select(L *c, const Expr *e, DType t)
{
	int32_t p = expr_as(c, e->args[0], DT_BOOL);
	int32_t r = reg(c, simt_vt(t));
	int32_t lelse = label(c), lend = label(c);
	bra(c, lelse, p, true);
	emit(c, I(SI_MOV, t, r, expr_as(c, e->args[1], t), -1));
	bra(c, lend, -1, false);
	place(c, lelse);
	emit(c, I(SI_MOV, t, r, expr_as(c, e->args[2], t), -1));
	place(c, lend);
	return r;
}

static int32_t var_value(L *c, int32_t v, SrcPos pos)
{
	const Var *var = VAR(v);
	if (var->kind == V_SYMBOL && var->has_value)
		return i32c(c, var->value);
	if (c->varreg[v] < 0) {
		fail(c, pos, "internal: variable '%s' has no value in the lowering", var->name);
		return reg(c, simt_vt((DType)var->type));
	}
	return c->varreg[v];
}

/* Warp shuffles (docs/tile-ir.md): the source lane j of the 32-lane warp
 * (the thread's own lane when j falls outside 0..31), as a lane of the
 * hardware wave (the upper half of a 64-lane wave holds the second warp). */
static int32_t shuffle(L *c, const Expr *e, DType t)
{
	Op op = (Op)e->op;
	int32_t v = expr_as(c, e->args[0], t), x = expr_as(c, e->args[1], DT_I32);
	int32_t lane = bin(c, SI_AND, DT_I32, c->tid, i32c(c, 31)), j;
	switch (op) {
	case OP_SHFL_XOR: j = bin(c, SI_XOR, DT_I32, lane, x); break;
	case OP_SHFL_DOWN: j = bin(c, SI_ADD, DT_I32, lane, x); break;
	case OP_SHFL_UP: j = bin(c, SI_SUB, DT_I32, lane, x); break;
	default: j = bin(c, SI_AND, DT_I32, x, i32c(c, 31)); break;
	}
	if (op != OP_SHFL_IDX) /* unsigned: negative j is out of range too */
		j = selp(c, DT_I32, setp(c, CMP_LE, DT_U32, j, i32c(c, 31)), j, lane);
	int w = target_wave_size(c->t->id);
	if (w > 32)
		j = bin(c, SI_OR, DT_I32, j, bin(c, SI_AND, DT_I32, c->tid, i32c(c, w - 32)));
	int32_t d = reg(c, simt_vt(t));
	emit(c, I(SI_SHFL, dtype_is_float(t) ? DT_F32 : DT_I32, d, v, j));
	return d;
}

int32_t lower_expr(L *c, int32_t id)
{
	const Expr *e = EX(id);
	DType t = (DType)e->type;
	switch ((ExprKind)e->kind) {
	case E_INT:
		if (dtype_is_float(t))
			return fix(c, t, movf(c, t == DT_F64 ? DT_F64 : DT_F32, (double)e->ival));
		return t == DT_BOOL ? movi(c, DT_BOOL, e->ival != 0) : movi(c, op_type(t), e->ival);
	case E_FLOAT:
		if (!dtype_is_float(t))
			return movi(c, op_type(t == DT_VOID ? DT_I32 : t), (int64_t)e->fval);
		return fix(c, t, movf(c, t == DT_F64 ? DT_F64 : DT_F32, e->fval));
	case E_BOOL: return movi(c, DT_BOOL, e->ival != 0);
	case E_VAR: return var_value(c, e->var, e->pos);
	case E_LOAD: {
		if (c->bl[e->buf].vf >= 0)
			return vf_val(c, vf_reg(c, e->buf));
		if (c->bl[e->buf].rr >= 0) /* eligibility guarantees D[i] of the current row */
			return c->bl[e->buf].rr + c->rr_slot;
		if (c->bl[e->buf].rf >= 0) /* eligibility guarantees F[i, j] of the current slot */
			return rf_get(c, e->buf, c->rf_slot);
		int32_t idx[IR_MAX_RANK];
		for (int i = 0; i < e->nargs; i++)
			idx[i] = expr_as(c, e->args[i], DT_I32);
		return lower_load_elem(c, e->buf, idx, -1);
	}
	case E_CAST:
		if (e->op)
			return reinterpret(c, (DType)e->cast_to, (DType)EX(e->a)->type, lower_expr(c, e->a));
		return expr_as(c, e->a, (DType)e->cast_to);
	case E_UNARY: {
		if (e->op == OP_NOT)
			return un(c, SI_NOT, DT_BOOL, expr_as(c, e->a, DT_BOOL));
		int32_t a = expr_as(c, e->a, t);
		DType o = op_type(t);
		if (e->op == OP_BNOT)
			return fix(c, t, un(c, SI_NOT, o, a));
		if (o == DT_U32)
			return fix(c, t, bin(c, SI_SUB, o, i32c(c, 0), a));
		return fix(c, t, un(c, SI_NEG, o, a));
	}
	case E_BINARY: {
		Op op = (Op)e->op;
		if (op == OP_AND || op == OP_OR)
			return bin(c, op == OP_AND ? SI_AND : SI_OR, DT_BOOL, expr_as(c, e->a, DT_BOOL),
			           expr_as(c, e->b, DT_BOOL));
		if (op >= OP_EQ && op <= OP_GE) {
			DType ta = (DType)EX(e->a)->type;
			if (ta == DT_VOID)
				ta = (DType)EX(e->b)->type;
			int32_t a = expr_as(c, e->a, ta), b = expr_as(c, e->b, ta);
			if (ta == DT_BOOL) { /* compare preds as 0/1 */
				a = cvt(c, DT_I32, DT_BOOL, a);
				b = cvt(c, DT_I32, DT_BOOL, b);
				ta = DT_I32;
			}
			static const Cmp cm[] = {CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE};
			return setp(c, cm[op - OP_EQ], op_type(ta), a, b);
		}
		if (op == OP_SHL || op == OP_SHR)
			return shift(c, e, t);
		DType o = op_type(t);
		int32_t a = expr_as(c, e->a, t), b = expr_as(c, e->b, t);
		switch (op) {
		case OP_BAND: return bin(c, SI_AND, o, a, b); /* of canonical (extended) values: canonical */
		case OP_BOR: return bin(c, SI_OR, o, a, b);
		case OP_BXOR: return bin(c, SI_XOR, o, a, b);
		case OP_ADD: return fix(c, t, bin(c, SI_ADD, o, a, b));
		case OP_SUB: return fix(c, t, bin(c, SI_SUB, o, a, b));
		case OP_MUL: return fix(c, t, bin(c, SI_MUL, o, a, b));
		case OP_DIV: return fix(c, t, bin(c, SI_DIV, o, a, b));
		case OP_FLOORDIV:
		case OP_MOD:
			if (dtype_is_float(t)) /* float '%' (there is no float '//') */
				return fix(c, t, fmodulo(c, o, a, b, true));
			return fix(c, t, floordivmod(c, o, a, b, op == OP_MOD));
		default: fail(c, e->pos, "internal: unexpected operator%s", ""); return a;
		}
	}
	case E_CALL: {
		Op op = (Op)e->op;
		DType o = op_type(t);
		int fv = op == OP_SELECT || op == OP_IF_THEN_ELSE ? lower_fold_value(c, e->args[0]) : -1;
		if (fv >= 0) /* decided for the whole tile (lower_fold.c) */
			return expr_as(c, e->args[fv ? 1 : 2], t);
		if (op == OP_IF_THEN_ELSE)
			return lazy_select(c, e, t);
		if (op >= OP_SHFL_XOR && op <= OP_SHFL_IDX)
			return shuffle(c, e, t);
		if (op == OP_CLAMP) {
			int32_t x = expr_as(c, e->args[0], t);
			int32_t r = bin(c, SI_MIN, o, bin(c, SI_MAX, o, x, expr_as(c, e->args[1], t)), expr_as(c, e->args[2], t));
			if (dtype_is_float(t)) /* NaN stays NaN */
				r = selp(c, o, setp(c, CMP_NE, o, x, x), x, r);
			return fix(c, t, r);
		}
		if (op == OP_FMOD)
			return fix(c, t, fmodulo(c, o, expr_as(c, e->args[0], t), expr_as(c, e->args[1], t), false));
		if (op == OP_POW) {
			if (t == DT_F64) {
				fail(c, e->pos, "f64 'pow' is not supported on %s (it is implemented in f32 only; cast to f32 explicitly)",
				     target_name(c->t->id));
				return 0;
			}
			return fix(c, t, fpow(c, expr_as(c, e->args[0], t), expr_as(c, e->args[1], t)));
		}
		if (op == OP_SELECT) {
			int32_t p = expr_as(c, e->args[0], DT_BOOL);
			int32_t a = expr_as(c, e->args[1], t), b = expr_as(c, e->args[2], t);
			if (t == DT_BOOL)
				return bin(c, SI_OR, DT_BOOL, bin(c, SI_AND, DT_BOOL, p, a),
				           bin(c, SI_AND, DT_BOOL, un(c, SI_NOT, DT_BOOL, p), b));
			return selp(c, t, p, a, b);
		}
		if (op == OP_MIN || op == OP_MAX)
			return bin(c, op == OP_MIN ? SI_MIN : SI_MAX, o, expr_as(c, e->args[0], t),
			           expr_as(c, e->args[1], t));
		if (op == OP_ABS)
			return o == DT_U32 ? expr_as(c, e->args[0], t) : fix(c, t, un(c, SI_ABS, o, expr_as(c, e->args[0], t)));
		if (op == OP_CEILDIV) {
			/* ceildiv(a, b) = -((-a) // b) */
			int32_t a = expr_as(c, e->args[0], t), b = expr_as(c, e->args[1], t);
			if (o == DT_U32) {
				int32_t s = bin(c, SI_SUB, o, bin(c, SI_ADD, o, a, b), i32c(c, 1));
				return fix(c, t, bin(c, SI_DIV, o, s, b));
			}
			int32_t q = floordivmod(c, o, un(c, SI_NEG, o, a), b, false);
			return fix(c, t, un(c, SI_NEG, o, q));
		}
		return transcend(c, e, op, t, expr_as(c, e->args[0], t));
	}
	}
	return 0;
}

/* ---- loops over elements ------------------------------------------------ */

/* for (p = dist ? tid : 0; p < total; p += dist ? threads : 1) */
DLoop lower_dloop_begin(L *c, int64_t total, bool dist)
{
	DLoop l;
	l.p = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, l.p, dist ? c->tid : i32c(c, 0), -1));
	l.step = i32c(c, dist ? c->nthreads : 1);
	l.top = label(c);
	l.end = label(c);
	int32_t tot = i32c(c, total);
	place(c, l.top);
	bra(c, l.end, setp(c, CMP_GE, DT_I32, l.p, tot), false);
	return l;
}

void lower_dloop_end(L *c, DLoop *l)
{
	emit(c, I(SI_ADD, DT_I32, l->p, l->p, l->step));
	bra(c, l->top, -1, false);
	place(c, l->end);
}

/* idx[0..r) = multi-index of linear p in shape ext (row-major). */
void lower_decompose(L *c, int32_t p, const int64_t *ext, int r, int32_t *idx)
{
	for (int d = r - 1; d >= 0; d--) {
		if (d == 0) {
			idx[0] = p;
			break;
		}
		int32_t e = i32c(c, ext[d]);
		idx[d] = ext[d] == 1 ? i32c(c, 0) : bin(c, SI_REM, DT_U32, p, e);
		p = ext[d] == 1 ? p : bin(c, SI_DIV, DT_U32, p, e);
	}
}

void lower_shape_of(L *c, const Buffer *b, int64_t *ext, int64_t *total)
{
	*total = 1;
	for (int d = 0; d < b->rank; d++) {
		ext[d] = bdim(c, b, d);
		*total *= ext[d];
	}
}

/* pred: idx (per dim, i32) lies inside global buffer b. */
int32_t lower_inbounds(L *c, int32_t bufid, const int32_t *idx)
{
	const Buffer *b = BUF(bufid);
	int32_t ok = -1;
	for (int d = 0; d < b->rank; d++) {
		/* unsigned compare catches negative indices too */
		int32_t in = setp(c, CMP_LT, DT_U32, idx[d], c->bl[bufid].dim[d]);
		ok = ok < 0 ? in : bin(c, SI_AND, DT_BOOL, ok, in);
	}
	return ok;
}

/* Buffer index of tile element ti of a copy/atomic side: its offsets plus
 * the tile index along the dims the tile runs on (Region.tdim). */
void lower_region_idx(L *c, const Region *r, const int32_t *ti, int32_t *out)
{
	for (int d = 0; d < BUF(r->buf)->rank; d++) {
		int32_t t = r->tdim[d] >= 0 ? ti[r->tdim[d]] : -1;
		int32_t o = r->nidx ? expr_as(c, r->idx[d], DT_I32) : -1;
		out[d] = o < 0 ? (t < 0 ? i32c(c, 0) : t) : t < 0 ? o : bin(c, SI_ADD, DT_I32, o, t);
	}
}

/* A register-fragment copy reads or writes its other side as rows and
 * columns: it needs the fragment side whole and in order, and the tile's
 * last dim on the other side's last (contiguous) dimension. */
bool lower_window_ok(L *c, const Stmt *s, const Region *f, const Region *o)
{
	const Buffer *fb = BUF(f->buf), *ob = BUF(o->buf);
	if (f->nidx || s->trank != fb->rank || o->tdim[ob->rank - 1] != s->trank - 1 || dtype_is_packed((DType)ob->dtype))
		return false; /* i4/u4: element copies (lower_load_elem) */
	for (int d = 0; d < fb->rank; d++)
		if (f->tdim[d] != d)
			return false;
	return true;
}

/* The other side of such a copy (lower_window_ok) as a row-major window:
 * its fixed indices folded into the base, the row dim's pitch. */
Window lower_window(L *c, const Stmt *s, const Region *o)
{
	const Buffer *b = BUF(o->buf);
	const BufLoc *bl = &c->bl[o->buf];
	bool glob = b->scope == SCOPE_GLOBAL;
	int rank = b->rank, cd = rank - 1, rd = -1;
	for (int d = 0; d < rank; d++)
		if (s->trank == 2 && o->tdim[d] == 0)
			rd = d;
	Window w = {.ok = -1, .rdim = rd};
	w.off[0] = rd >= 0 && o->nidx ? expr_as(c, o->idx[rd], DT_I32) : i32c(c, 0);
	w.off[1] = o->nidx ? expr_as(c, o->idx[cd], DT_I32) : i32c(c, 0);
	if (glob) {
		w.bound[0] = rd >= 0 ? bl->dim[rd] : -1;
		w.bound[1] = bl->dim[cd];
	}
	/* pitch of the row dim; base = element offset of the fixed indices */
	int32_t lin = -1, stride = -1;
	int64_t cstride = 1;
	for (int d = rank - 1; d >= 0; d--) {
		if (d < cd) {
			if (glob)
				stride = stride < 0 ? bl->dim64[d + 1] : bin(c, SI_MUL, DT_I64, stride, bl->dim64[d + 1]);
			else
				cstride *= bdim(c, b, d + 1);
		}
		if (d == rd)
			w.pitch = glob ? stride : i32c(c, cstride);
		if (o->tdim[d] >= 0 || !o->nidx)
			continue;
		int32_t x = expr_as(c, o->idx[d], DT_I32);
		if (glob) {
			int32_t in = setp(c, CMP_LT, DT_U32, x, bl->dim[d]);
			w.ok = w.ok < 0 ? in : bin(c, SI_AND, DT_BOOL, w.ok, in);
			int32_t t = bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, x), stride);
			lin = lin < 0 ? t : bin(c, SI_ADD, DT_I64, lin, t);
		} else {
			int32_t t = bin(c, SI_MUL, DT_I32, x, i32c(c, cstride));
			lin = lin < 0 ? t : bin(c, SI_ADD, DT_I32, lin, t);
		}
	}
	if (glob)
		w.base = lin < 0 ? bl->base
		                 : bin(c, SI_ADD, DT_I64, bl->base,
		                       bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, dtype_bytes((DType)b->dtype))));
	else
		w.base = lin;
	return w;
}
