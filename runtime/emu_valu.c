/* emu_valu.c — VALU (part of the emulator's instruction semantics). */
#include "emu_exec_impl.h"

/* ---- VALU --------------------------------------------------------------- */

typedef struct {
	uint32_t d[2][64];  /* result words */
	int nd;             /* words written (0: none) */
	const IsaOperand *dst;
	uint64_t mask;      /* lanes to write */
	uint64_t sdst;      /* lane-mask result (compares, carries) */
	const IsaOperand *sdst_op;
	int write_exec;     /* v_cmpx */
	int d16_hi;         /* f16 result into the high half (op_sel[3]) */
	int d16;            /* result is 16-bit (merge or zero-extend the high half) */
	int swap;           /* v_swap_b32 */
	const IsaOperand *swap_src;
	uint32_t swap_val[64];
	int sgpr_dst;       /* v_readlane / v_readfirstlane: scalar result in d[0][0] */
	int f32_out;        /* apply clamp / omod / ftz */
} VRes;

static int cmp_f(int c, double a, double b)
{
	int un = isnan(a) || isnan(b);
	switch (c) {
	case 0: return 0;                 /* f */
	case 1: return a < b;             /* lt */
	case 2: return a == b;            /* eq */
	case 3: return a <= b;            /* le */
	case 4: return a > b;             /* gt */
	case 5: return !un && a != b;     /* lg */
	case 6: return a >= b;            /* ge */
	case 7: return !un;               /* o */
	case 8: return un;                /* u */
	case 9: return !(a >= b);         /* nge */
	case 10: return !(a != b && !un); /* nlg */
	case 11: return !(a > b);         /* ngt */
	case 12: return !(a <= b);        /* nle */
	case 13: return !(a == b);        /* neq */
	case 14: return !(a < b);         /* nlt */
	default: return 1;                /* tru */
	}
}

/* Compare ops: condition and operand type, parsed once from the mnemonics. */
typedef struct {
	int8_t cond; /* -1 = not a compare */
	int8_t ty;   /* 0 f32, 1 f16, 2 f64, 3 i32, 4 u32, 5 i64, 6 u64 */
	int8_t cmpx;
} CmpInfo;
static CmpInfo cmp_info[ISA_NUM_OPS];

void build_cmp(void)
{
	static const char *conds[] = {"f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle",
				      "neq", "nlt", "tru", "ne"};
	static const char *tys[] = {"f32", "f16", "f64", "i32", "u32", "i64", "u64"};
	for (unsigned op = 0; op < ISA_NUM_OPS; op++) {
		cmp_info[op].cond = -1;
		const char *n = isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2];
		if (!n || op == ISA_V_CMP_CLASS_F32)
			continue;
		int x = !strncmp(n, "v_cmpx_", 7);
		if (!x && strncmp(n, "v_cmp_", 6))
			continue;
		const char *c = n + (x ? 7 : 6), *u = strchr(c, '_');
		if (!u)
			continue;
		for (int i = 0; i < (int)TA_ARRAY_LEN(conds); i++)
			if ((size_t)(u - c) == strlen(conds[i]) && !strncmp(c, conds[i], (size_t)(u - c)))
				for (int t = 0; t < 7; t++)
					if (!strncmp(u + 1, tys[t], 3)) {
						cmp_info[op].cond = (int8_t)(i == 16 ? 13 : i);
						cmp_info[op].ty = (int8_t)t;
						cmp_info[op].cmpx = (int8_t)x;
					}
	}
}


static uint32_t perm_byte(uint64_t x, unsigned sel)
{
	sel &= 0xff;
	if (sel < 8)
		return (uint32_t)(x >> (8 * sel)) & 0xff;
	if (sel < 12)
		return (x >> (16 * (sel - 8) + 15) & 1) ? 0xff : 0;
	return sel == 12 ? 0 : 0xff;
}


/* Half h of a VOP3P source word with op_sel/op_sel_hi/neg/neg_hi (f16 negation). */
static uint32_t pk_half(const IsaMods *m, int j, int h, uint32_t v, int fneg)
{
	int sel = h ? (m->op_sel_hi >> j & 1) : (m->op_sel >> j & 1);
	uint32_t x = sel ? v >> 16 : v & 0xffff;
	int ng = h ? (m->neg_hi >> j & 1) : (m->neg >> j & 1);
	if (ng)
		x = fneg ? x ^ 0x8000 : (uint32_t)(-(int32_t)x) & 0xffff;
	return x;
}

/* ---- IEEE f32 division: v_div_scale / v_div_fmas / v_div_fixup ----------
 * As the ISA reference's pseudo-code describes them, with two corrections
 * the reference's own macro needs (and LLVM's fdiv relies on): v_div_fmas
 * post-scales by 2^64 or 2^-64 (the reference prints 2^32), by whether the
 * quotient's exponent is large, and v_div_fixup turns a NaN quotient of
 * non-NaN operands (the macro overflowing) into infinity; and "1/S1 is
 * subnormal" is taken in f32 (the reference writes f64, where it never
 * holds for an f32 S1, and x / FLT_MAX then misses by an ulp); when both
 * 1/S1 and the quotient are subnormal the denominator is scaled down, the
 * direction v_div_fmas's post-scale undoes (the reference's "up" would
 * overflow it).  These readings are this emulator's: test_fdiv checks the
 * whole macro against IEEE division, not against hardware. */
static int f32_exp(float x)
{
	return (int)(emu_u(x) >> 23 & 0xff);
}

static float div_scale_f32(float s0, float den, float num, int *vcc)
{
	*vcc = 0;
	if (num == 0 || den == 0)
		return NAN;
	if (f32_exp(num) - f32_exp(den) >= 96) { /* quotient near the top of the range */
		*vcc = 1;
		return s0 == den ? ldexpf(s0, 64) : s0;
	}
	if (fpclassify(den) == FP_SUBNORMAL)
		return ldexpf(s0, 64);
	int rcp_dn = fpclassify((float)(1.0 / den)) == FP_SUBNORMAL, q_dn = fpclassify(num / den) == FP_SUBNORMAL;
	if (rcp_dn && q_dn) { /* the denominator down (the reference: up, which overflows it) */
		*vcc = 1;
		return s0 == den ? ldexpf(s0, -64) : s0;
	}
	if (rcp_dn)
		return ldexpf(s0, -64);
	if (q_dn) { /* subnormal quotient: scale the numerator up, the result down */
		*vcc = 1;
		return s0 == num ? ldexpf(s0, 64) : s0;
	}
	if (f32_exp(num) <= 23) /* tiny numerator */
		return ldexpf(s0, 64);
	return s0;
}

/* fma(a, b, c) * 2^k rounded once to f32: a*b is exact in double and the
 * two-sum s + e is the exact sum, so only an f32 tie at s depends on e. */
static float fma_scaled_f32(float a, float b, float c, int k)
{
	double p = (double)a * b, s = p + c, bv = s - p, e = (p - (s - bv)) + (c - bv);
	if (!isfinite(s))
		return (float)s;
	s = ldexp(s, k), e = ldexp(e, k);
	float f = (float)s;
	if (e != 0 && isfinite(f)) {
		float up = nextafterf(f, INFINITY), dn = nextafterf(f, -INFINITY);
		if (e > 0 && s - f == ((double)up - f) / 2)
			f = up;
		else if (e < 0 && f - s == ((double)f - dn) / 2)
			f = dn;
	}
	return f;
}

static float div_fixup_f32(float q, float den, float num)
{
	int neg = !signbit(den) != !signbit(num);
	if (isnan(num))
		return emu_f(emu_u(num) | 0x400000u);
	if (isnan(den))
		return emu_f(emu_u(den) | 0x400000u);
	if ((den == 0 && num == 0) || (isinf(den) && isinf(num)))
		return emu_f(0xffc00000u);
	if (den == 0 || isinf(num))
		return neg ? -INFINITY : INFINITY;
	if (isinf(den) || num == 0 || f32_exp(num) - f32_exp(den) < -150)
		return neg ? -0.0f : 0.0f;
	if (isnan(q))
		return neg ? -INFINITY : INFINITY;
	return neg ? -fabsf(q) : fabsf(q);
}

/* ---- IEEE f64 division: the same three instructions in f64 -------------
 * The f32 readings above carried over to f64 (ISA reference: scale 2^128,
 * exponent distance 768, tiny numerator below 2^-969, post-scale 2^±128);
 * test_f64math checks the whole macro against IEEE division. */
static double dbits(uint64_t u)
{
	double x;
	memcpy(&x, &u, 8);
	return x;
}
static uint64_t ubits64(double x)
{
	uint64_t u;
	memcpy(&u, &x, 8);
	return u;
}
static int f64_exp(double x)
{
	return (int)(ubits64(x) >> 52 & 0x7ff);
}

static double div_scale_f64(double s0, double den, double num, int *vcc)
{
	*vcc = 0;
	if (num == 0 || den == 0)
		return NAN;
	if (f64_exp(num) - f64_exp(den) >= 768) {
		*vcc = 1;
		return s0 == den ? ldexp(s0, 128) : s0;
	}
	if (fpclassify(den) == FP_SUBNORMAL)
		return ldexp(s0, 128);
	int rcp_dn = fpclassify(1.0 / den) == FP_SUBNORMAL, q_dn = fpclassify(num / den) == FP_SUBNORMAL;
	if (rcp_dn && q_dn) {
		*vcc = 1;
		return s0 == den ? ldexp(s0, -128) : s0;
	}
	if (rcp_dn)
		return ldexp(s0, -128);
	if (q_dn) {
		*vcc = 1;
		return s0 == num ? ldexp(s0, 128) : s0;
	}
	if (f64_exp(num) <= 53)
		return ldexp(s0, 128);
	return s0;
}

/* a + b = s + e exactly (Knuth's two-sum). */
static void two_sum(double a, double b, double *s, double *e)
{
	*s = a + b;
	double bv = *s - a;
	*e = (a - (*s - bv)) + (b - bv);
}

/* The sign of x[0] + ... + x[n-1] (n <= 4), exactly: an expansion of
 * non-overlapping parts (Shewchuk), whose largest nonzero part has it. */
static int exact_sign(const double *x, int n)
{
	double e[8];
	int m = 0;
	for (int i = 0; i < n; i++) {
		double q = x[i], h;
		int k = 0;
		for (int j = 0; j < m; j++) {
			two_sum(q, e[j], &q, &h);
			if (h != 0)
				e[k++] = h;
		}
		e[k++] = q;
		m = k;
	}
	for (int j = m - 1; j >= 0; j--)
		if (e[j] != 0)
			return e[j] > 0 ? 1 : -1;
	return 0;
}

/* fma(a, b, c) * 2^k rounded once.  Only a subnormal result is rounded
 * twice by fma then ldexp, and that matters only when the fma lands on a
 * tie of the subnormal grid: then the exact residual's sign decides. */
static double fma_scaled_f64(double a, double b, double c, int k)
{
	double r = fma(a, b, c), y = ldexp(r, k);
	if (!isfinite(r) || fpclassify(y) != FP_SUBNORMAL)
		return y;
	double diff = r - ldexp(y, -k); /* exact: r and y * 2^-k are neighbours */
	if (fabs(diff) != ldexp(0x1p-1074, -k - 1))
		return y;
	double p = a * b, pe = fma(a, b, -p); /* a * b = p + pe */
	double parts[4] = {c, p, pe, -r};
	int sg = exact_sign(parts, 4);
	if (sg != 0 && (sg > 0) == (diff > 0)) /* beyond the tie, away from y */
		return nextafter(y, diff > 0 ? INFINITY : -INFINITY);
	return y;
}

static double div_fixup_f64(double q, double den, double num)
{
	int neg = !signbit(den) != !signbit(num);
	if (isnan(num))
		return dbits(ubits64(num) | 0x8000000000000ull);
	if (isnan(den))
		return dbits(ubits64(den) | 0x8000000000000ull);
	if ((den == 0 && num == 0) || (isinf(den) && isinf(num)))
		return dbits(0xfff8000000000000ull);
	if (den == 0 || isinf(num))
		return neg ? -INFINITY : INFINITY;
	if (isinf(den) || num == 0 || f64_exp(num) - f64_exp(den) < -1075)
		return neg ? -0.0 : 0.0;
	if (isnan(q))
		return neg ? -INFINITY : INFINITY;
	return neg ? -fabs(q) : fabs(q);
}

/* v_div_fmas reads vcc implicitly: checked like an operand (written, and on
 * gfx9 4 wait states after a VALU wrote it). */
static int vcc_read_ok(EmuDevice *dev, EmuWave *w, int insn)
{
	for (int k = 0; k < (w->lanes == 64 ? 2 : 1); k++) {
		if (!w->sinit[ES_VCC + k] && (dev->checks & EMU_CHECK_UNINIT)) {
			emu_fail(dev, w, insn, "reads vcc+%d, which nothing has written", k);
			return 0;
		}
		if (!dev->g11 && (dev->checks & EMU_CHECK_HAZARD) && w->swrite_valu[ES_VCC + k] &&
		    w->clock - w->swrite_valu[ES_VCC + k] - 1 < 4) {
			emu_fail(dev, w, insn, "v_div_fmas reads vcc %llu wait states after a VALU wrote it; gfx9 "
				 "needs 4", (unsigned long long)(w->clock - w->swrite_valu[ES_VCC + k] - 1));
			return 0;
		}
	}
	return 1;
}

/* Computes one VALU op into r.  src operands start after the destinations. */
static int valu_compute(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, unsigned op, const IsaOperand *ops,
			int nops, const uint8_t *acc, VRes *r)
{
	int L = w->lanes;
	int ty = isa_ops[op].type;
	const IsaMods *m = &in->mod;
	uint64_t ex = emu_exec_mask(w);
	memset(r, 0, offsetof(VRes, swap_val));
	r->sgpr_dst = 0; /* after swap_val: not covered by the memset (a stale 1 dropped every VALU write after a v_readlane) */
	r->mask = ex;
	/* Destinations and sources by role. */
	static _Thread_local Src S[4]; /* scratch: per thread, so devices may run in several threads */
	const IsaOperand *src[4] = {0};
	int ns = 0, srcw[4] = {1, 1, 1, 1};
	/* Source widths come from the signature: a 64-bit source (v_mad_u64_u32's
	 * src2, v_lshl_add_u64) given as an inline constant still needs its high
	 * word (the sign extension), not whatever the previous instruction left. */
	uint16_t sig[ISA_MAX_SIG];
	int nsig = isa_sig(dev->wt, op, sig);
	for (int j = 0; j < nops; j++) {
		if ((acc[j] & WR) && !r->dst && ops[j].kind != ISA_K_SPECIAL && !(j == 1 && r->dst && ops[j].kind == ISA_K_SGPR))
			r->dst = &ops[j];
		else if ((acc[j] & WR))
			r->sdst_op = &ops[j];
		if ((acc[j] & RD) && !(acc[j] & WR) && ns < 4) {
			srcw[ns] = j < nsig && ISA_SIG_CNT(sig[j]) >= 2 ? 2 : 1;
			src[ns++] = &ops[j];
		}
	}
	/* Lane-mask destinations: VOPC/e64 compares write ops[0] (SGPR or vcc). */
	if (r->dst && (r->dst->kind == ISA_K_SGPR) && cmp_info[op].cond >= 0) {
		r->sdst_op = r->dst;
		r->dst = NULL;
	}
	if ((acc[0] & WR) && ops[0].kind == ISA_K_SPECIAL)
		r->sdst_op = &ops[0];
	int words = ty == ISA_TY_F64 || ty == ISA_TY_B64 ? 2 : 1;
	for (int i = 0; i < ns; i++) {
		int wd = words;
		if (src[i]->count >= 2 || srcw[i] == 2)
			wd = 2;
		if (op == ISA_V_LSHLREV_B64 || op == ISA_V_LSHRREV_B64 || op == ISA_V_ASHRREV_I64)
			wd = i == 0 ? 1 : 2;
		fetch(dev, w, src[i], wd == 2 && ty == ISA_TY_B32 ? ISA_TY_B64 : ty, wd, &S[i]);
		/* VOP3 / DPP float modifiers. */
		if (is_float_ty(ty) && (m->neg >> i & 1 || m->abs >> i & 1) && !(isa_ops[op].flags & ISA_F_NOMODS) &&
		    isa_op_fmt(dev->wt, op) != ISA_FMT_VOP3P) {
			int hw = ty == ISA_TY_F64 ? 1 : 0;
			uint32_t bit = ty == ISA_TY_F16 ? 0x8000u : 0x80000000u;
			for (int l = 0; l < L; l++) {
				if (m->abs >> i & 1)
					S[i].v[hw][l] &= ~bit;
				if (m->neg >> i & 1)
					S[i].v[hw][l] ^= bit;
			}
		}
		if (ty == ISA_TY_F32 && dev->denorm32 != 3 && !(isa_ops[op].flags & ISA_F_NOMODS))
			for (int l = 0; l < L; l++)
				S[i].v[0][l] = emu_u(ftz(dev, emu_f(S[i].v[0][l])));
		/* VOP3 op_sel on 16-bit ops: the high half of source i. */
		if ((ty == ISA_TY_F16 || ty == ISA_TY_B16) && (m->op_sel >> i & 1) && isa_op_fmt(dev->wt, op) != ISA_FMT_VOP3P)
			for (int l = 0; l < L; l++)
				S[i].v[0][l] >>= 16;
	}
	/* DPP: permute src0 lanes; invalid sources either read 0 (bound_ctrl)
	 * or leave the destination lane unwritten. */
	if (in->enc == ISA_ENC_DPP) {
		uint32_t tmp[64];
		memcpy(tmp, S[0].v[0], sizeof tmp);
		for (int l = 0; l < L; l++) {
			int s = dpp_src(dev, m->dpp_ctrl, l, L);
			if (s == -2) {
				emu_fail(dev, w, insn, "DPP control 0x%x is not emulated", m->dpp_ctrl);
				return -1;
			}
			int row_ok = m->row_mask >> (l / 16) & 1, bank_ok = m->bank_mask >> ((l & 15) / 4) & 1;
			if (!row_ok || !bank_ok)
				r->mask &= ~(1ull << l);
			if (s < 0 || !(ex >> s & 1)) {
				if (m->bound_ctrl || (dev->g11 && m->fi && s >= 0))
					S[0].v[0][l] = s >= 0 ? tmp[s] : 0;
				else
					r->mask &= ~(1ull << l);
			} else
				S[0].v[0][l] = tmp[s];
		}
	}
	uint32_t *a = S[0].v[0], *b = S[1].v[0], *c = S[2].v[0];
	uint32_t *a1 = S[0].v[1], *b1 = S[1].v[1], *c1 = S[2].v[1];
	uint32_t *D = r->d[0], *D1 = r->d[1];
	r->nd = 1;
	r->f32_out = ty == ISA_TY_F32;
#define EACH for (int l = 0; l < L; l++)
#define F(x) emu_f(x)
#define U(x) emu_u(x)
	CmpInfo ci = cmp_info[op];
	if (ci.cond >= 0) {
		uint64_t bits = 0;
		EACH {
			int t;
			switch (ci.ty) {
			case 0: t = cmp_f(ci.cond, F(a[l]), F(b[l])); break;
			case 1: t = cmp_f(ci.cond, h2d(a[l] & 0xffff), h2d(b[l] & 0xffff)); break;
			case 2: {
				uint64_t x = (uint64_t)a1[l] << 32 | a[l], y = (uint64_t)b1[l] << 32 | b[l];
				double dx, dy;
				memcpy(&dx, &x, 8), memcpy(&dy, &y, 8);
				t = cmp_f(ci.cond, dx, dy);
				break;
			}
			case 3: t = cmp_f(ci.cond, (double)(int32_t)a[l], (double)(int32_t)b[l]); break;
			case 4: t = cmp_f(ci.cond, (double)a[l], (double)b[l]); break;
			case 5: {
				int64_t x = (int64_t)((uint64_t)a1[l] << 32 | a[l]), y = (int64_t)((uint64_t)b1[l] << 32 | b[l]);
				t = ci.cond == 1 ? x < y : ci.cond == 2 ? x == y : ci.cond == 4 ? x > y : ci.cond == 13 ? x != y
				  : ci.cond == 3 ? x <= y : ci.cond == 6 ? x >= y : ci.cond == 15;
				break;
			}
			default: {
				uint64_t x = (uint64_t)a1[l] << 32 | a[l], y = (uint64_t)b1[l] << 32 | b[l];
				t = ci.cond == 1 ? x < y : ci.cond == 2 ? x == y : ci.cond == 4 ? x > y : ci.cond == 13 ? x != y
				  : ci.cond == 3 ? x <= y : ci.cond == 6 ? x >= y : ci.cond == 15;
				break;
			}
			}
			if (t && (r->mask >> l & 1))
				bits |= 1ull << l;
		}
		r->sdst = bits;
		r->nd = 0;
		r->write_exec = ci.cmpx;
		if (ci.cmpx && dev->g11)
			r->sdst_op = NULL;
		if (!r->sdst_op && !ci.cmpx) {
			static const IsaOperand vcc = {ISA_K_SPECIAL, 2, ISA_SP_VCC_LO, 0, 0, 0};
			r->sdst_op = &vcc;
		}
		return 0;
	}
	switch (op) {
	case ISA_V_NOP: r->nd = 0; break;
	case ISA_V_MOV_B32: case ISA_V_ACCVGPR_READ_B32: case ISA_V_ACCVGPR_WRITE_B32: case ISA_V_ACCVGPR_MOV_B32:
	case ISA_V_DUAL_MOV_B32:
		EACH D[l] = a[l];
		r->f32_out = 0;
		break;
	case ISA_V_MOV_B64:
		EACH D[l] = a[l], D1[l] = a1[l];
		r->nd = 2;
		break;
	case ISA_V_SWAP_B32:
		/* dst <- src, src <- dst: the source operand is also written. */
		EACH D[l] = a[l];
		memcpy(r->swap_val, emu_vreg(w, 0, r->dst->reg), (size_t)L * 4);
		r->swap = 1;
		r->swap_src = src[0];
		break;
	case ISA_V_READFIRSTLANE_B32: {
		int l0 = ex ? __builtin_ctzll(ex) : 0;
		r->sgpr_dst = 1;
		D[0] = a[l0];
		break;
	}
	case ISA_V_READLANE_B32:
		r->sgpr_dst = 1;
		D[0] = a[b[0] % (uint32_t)L];
		break;
	case ISA_V_WRITELANE_B32: {
		uint32_t lane = b[0] % (uint32_t)L;
		memcpy(D, emu_vreg(w, 0, r->dst->reg), (size_t)L * 4);
		D[lane] = a[0];
		r->mask = 1ull << lane;
		break;
	}
	case ISA_V_CVT_F32_I32: EACH D[l] = U((float)(int32_t)a[l]); break;
	case ISA_V_CVT_F32_U32: EACH D[l] = U((float)a[l]); break;
	case ISA_V_CVT_U32_F32: EACH {
		float x = F(a[l]);
		D[l] = isnan(x) || x <= 0 ? 0 : x >= 4294967296.0f ? 0xffffffffu : (uint32_t)x;
	} r->f32_out = 0; break;
	case ISA_V_CVT_I32_F32: EACH {
		float x = F(a[l]);
		D[l] = isnan(x) ? 0 : x >= 2147483648.0f ? 0x7fffffffu : x < -2147483648.0f ? 0x80000000u : (uint32_t)(int32_t)x;
	} r->f32_out = 0; break;
	case ISA_V_CVT_RPI_I32_F32: EACH D[l] = isnan(F(a[l])) ? 0 : (uint32_t)(int32_t)floorf(F(a[l]) + 0.5f); r->f32_out = 0; break;
	case ISA_V_CVT_FLR_I32_F32: EACH D[l] = isnan(F(a[l])) ? 0 : (uint32_t)(int32_t)floorf(F(a[l])); r->f32_out = 0; break;
	case ISA_V_CVT_F16_F32: EACH D[l] = d2h((double)F(a[l])); r->d16 = 1; r->f32_out = 0; break;
	case ISA_V_CVT_F32_F16: EACH D[l] = U((float)h2d(a[l] & 0xffff)); break;
	case ISA_V_CVT_F32_UBYTE0: EACH D[l] = U((float)(a[l] & 0xff)); break;
	case ISA_V_CVT_F32_UBYTE1: EACH D[l] = U((float)(a[l] >> 8 & 0xff)); break;
	case ISA_V_CVT_F32_UBYTE2: EACH D[l] = U((float)(a[l] >> 16 & 0xff)); break;
	case ISA_V_CVT_F32_UBYTE3: EACH D[l] = U((float)(a[l] >> 24)); break;
	case ISA_V_FRACT_F32: EACH {
		float x = F(a[l]);
		D[l] = isinf(x) ? U(NAN) : U(fminf(x - floorf(x), 0x1.fffffep-1f));
	} break;
	case ISA_V_TRUNC_F32: EACH D[l] = U(truncf(F(a[l]))); break;
	case ISA_V_CEIL_F32: EACH D[l] = U(ceilf(F(a[l]))); break;
	case ISA_V_RNDNE_F32: EACH D[l] = U(rintf(F(a[l]))); break;
	case ISA_V_FLOOR_F32: EACH D[l] = U(floorf(F(a[l]))); break;
	case ISA_V_EXP_F32: EACH D[l] = U(exp2f(F(a[l]))); break;
	case ISA_V_LOG_F32: EACH D[l] = U(log2f(F(a[l]))); break;
	case ISA_V_RCP_F32: case ISA_V_RCP_IFLAG_F32: EACH D[l] = U(1.0f / F(a[l])); break;
	case ISA_V_RSQ_F32: EACH D[l] = U((float)(1.0 / sqrt((double)F(a[l])))); break;
	case ISA_V_SQRT_F32: EACH D[l] = U(sqrtf(F(a[l]))); break;
	case ISA_V_SIN_F32: EACH D[l] = U((float)sin((double)F(a[l]) * 6.283185307179586)); break;
	case ISA_V_COS_F32: EACH D[l] = U((float)cos((double)F(a[l]) * 6.283185307179586)); break;
	case ISA_V_NOT_B32: EACH D[l] = ~a[l]; break;
	case ISA_V_BFREV_B32: EACH {
		uint32_t x = a[l], y = 0;
		for (int i = 0; i < 32; i++)
			y |= (x >> i & 1) << (31 - i);
		D[l] = y;
	} break;
	case ISA_V_FFBH_U32: EACH D[l] = clz32(a[l]); break;
	case ISA_V_FFBL_B32: EACH D[l] = a[l] ? (uint32_t)__builtin_ctz(a[l]) : 0xffffffffu; break;
	case ISA_V_FFBH_I32: EACH {
		int32_t x = (int32_t)a[l];
		D[l] = x == 0 || x == -1 ? 0xffffffffu : clz32((uint32_t)(x < 0 ? ~x : x));
	} break;
	case ISA_V_CVT_F16_U16: EACH D[l] = d2h((double)(a[l] & 0xffff)); r->d16 = 1; break;
	case ISA_V_CVT_F16_I16: EACH D[l] = d2h((double)(int16_t)a[l]); r->d16 = 1; break;
	case ISA_V_CVT_U16_F16: EACH {
		double x = h2d(a[l] & 0xffff);
		D[l] = isnan(x) || x <= 0 ? 0 : x >= 65535 ? 65535 : (uint32_t)x;
	} r->d16 = 1; break;
	case ISA_V_CVT_I16_F16: EACH {
		double x = h2d(a[l] & 0xffff);
		D[l] = (uint32_t)(isnan(x) ? 0 : x >= 32767 ? 32767 : x <= -32768 ? -32768 : (int32_t)x) & 0xffff;
	} r->d16 = 1; break;
	case ISA_V_RCP_F16: EACH D[l] = d2h(1.0 / h2d(a[l])); r->d16 = 1; break;
	case ISA_V_SQRT_F16: EACH D[l] = d2h(sqrt(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_RSQ_F16: EACH D[l] = d2h(1.0 / sqrt(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_LOG_F16: EACH D[l] = d2h(log2(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_EXP_F16: EACH D[l] = d2h(exp2(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_SIN_F16: EACH D[l] = d2h(sin(h2d(a[l]) * 6.283185307179586)); r->d16 = 1; break;
	case ISA_V_COS_F16: EACH D[l] = d2h(cos(h2d(a[l]) * 6.283185307179586)); r->d16 = 1; break;
	case ISA_V_FLOOR_F16: EACH D[l] = d2h(floor(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_CEIL_F16: EACH D[l] = d2h(ceil(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_TRUNC_F16: EACH D[l] = d2h(trunc(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_RNDNE_F16: EACH D[l] = d2h(nearbyint(h2d(a[l]))); r->d16 = 1; break;
	case ISA_V_FRACT_F16: EACH {
		double x = h2d(a[l]);
		D[l] = d2h(fmin(x - floor(x), 0.99951171875));
	} r->d16 = 1; break;
	case ISA_V_CVT_F64_F32: EACH {
		double x = (double)F(a[l]);
		uint64_t u;
		memcpy(&u, &x, 8);
		D[l] = (uint32_t)u, D1[l] = (uint32_t)(u >> 32);
	} r->nd = 2; r->f32_out = 0; break;
	case ISA_V_CVT_F64_I32: EACH {
		double x = (double)(int32_t)a[l];
		uint64_t u;
		memcpy(&u, &x, 8);
		D[l] = (uint32_t)u, D1[l] = (uint32_t)(u >> 32);
	} r->nd = 2; break;
	case ISA_V_RCP_F64: case ISA_V_RSQ_F64: case ISA_V_SQRT_F64: case ISA_V_FLOOR_F64: case ISA_V_CEIL_F64:
	case ISA_V_TRUNC_F64: case ISA_V_RNDNE_F64: EACH {
		/* v_rcp/v_rsq are approximations on hardware (the sequences refine them); here libm's */
		double x = dbits((uint64_t)a1[l] << 32 | a[l]);
		double y = op == ISA_V_RCP_F64 ? 1.0 / x : op == ISA_V_RSQ_F64 ? 1.0 / sqrt(x) : op == ISA_V_SQRT_F64 ? sqrt(x)
			 : op == ISA_V_FLOOR_F64 ? floor(x) : op == ISA_V_CEIL_F64 ? ceil(x) : op == ISA_V_TRUNC_F64 ? trunc(x)
			 : rint(x);
		uint64_t u = ubits64(y);
		D[l] = (uint32_t)u, D1[l] = (uint32_t)(u >> 32);
	} r->nd = 2; break;
	case ISA_V_CVT_F64_U32: EACH {
		uint64_t u = ubits64((double)a[l]);
		D[l] = (uint32_t)u, D1[l] = (uint32_t)(u >> 32);
	} r->nd = 2; break;
	case ISA_V_CVT_U32_F64: EACH {
		double x = dbits((uint64_t)a1[l] << 32 | a[l]);
		D[l] = isnan(x) || x <= 0 ? 0 : x >= 4294967295.0 ? 0xffffffffu : (uint32_t)x;
	} r->f32_out = 0; break;
	case ISA_V_CVT_F32_F64: case ISA_V_CVT_I32_F64: EACH {
		uint64_t u = (uint64_t)a1[l] << 32 | a[l];
		double x;
		memcpy(&x, &u, 8);
		if (op == ISA_V_CVT_F32_F64)
			D[l] = U((float)x);
		else
			D[l] = isnan(x) ? 0 : x >= 2147483647.0 ? 0x7fffffffu : x <= -2147483648.0 ? 0x80000000u : (uint32_t)(int32_t)x;
	} r->f32_out = 0; break;
	case ISA_V_CVT_F32_FP8: case ISA_V_CVT_F32_BF8: EACH {
		uint8_t byte = (uint8_t)(a[l] >> (8 * (m->op_sel & 3)));
		double x = op == ISA_V_CVT_F32_FP8 ? dt_e4m3fnuz_to_double(byte) : dt_e5m2fnuz_to_double(byte);
		D[l] = U((float)x);
	} r->f32_out = 0; break;
	case ISA_V_CVT_PK_F32_FP8: case ISA_V_CVT_PK_F32_BF8: EACH {
		uint32_t x = m->op_sel & 1 ? a[l] >> 16 : a[l];
		double (*cv)(uint8_t) = op == ISA_V_CVT_PK_F32_FP8 ? dt_e4m3fnuz_to_double : dt_e5m2fnuz_to_double;
		D[l] = U((float)cv((uint8_t)x)), D1[l] = U((float)cv((uint8_t)(x >> 8)));
	} r->nd = 2; r->f32_out = 0; break;
	case ISA_V_CVT_PK_FP8_F32: case ISA_V_CVT_PK_BF8_F32: {
		/* Two f32 into bytes [1:0] (or [3:2] with op_sel[3]); the other half
		 * of the destination is kept. */
		int hi = m->op_sel >> 3 & 1;
		const uint32_t *old = emu_vreg(w, 0, r->dst->reg);
		EACH {
			uint8_t x, y;
			if (op == ISA_V_CVT_PK_FP8_F32) {
				x = dt_e4m3fnuz_from_double((double)F(a[l]), m->clamp);
				y = dt_e4m3fnuz_from_double((double)F(b[l]), m->clamp);
			} else {
				x = dt_e5m2fnuz_from_double((double)F(a[l]), m->clamp);
				y = dt_e5m2fnuz_from_double((double)F(b[l]), m->clamp);
			}
			uint32_t pk = (uint32_t)x | (uint32_t)y << 8;
			D[l] = hi ? (old[l] & 0xffff) | pk << 16 : (old[l] & 0xffff0000u) | pk;
		}
		r->f32_out = 0;
		break;
	}
	case ISA_V_CNDMASK_B32: case ISA_V_DUAL_CNDMASK_B32: {
		/* Third source is the lane mask (vcc or an SGPR pair). */
		EACH {
			uint32_t mw = l < 32 ? c[l] : c1[l];
			if (ns < 3) /* VOPD: implicit vcc */
				mw = l < 32 ? w->s[ES_VCC] : w->s[ES_VCC + 1];
			D[l] = (mw >> (l & 31) & 1) ? b[l] : a[l];
		}
		r->f32_out = 0;
		break;
	}
	case ISA_V_ADD_F32: case ISA_V_DUAL_ADD_F32: EACH D[l] = U(F(a[l]) + F(b[l])); break;
	case ISA_V_SUB_F32: case ISA_V_DUAL_SUB_F32: EACH D[l] = U(F(a[l]) - F(b[l])); break;
	case ISA_V_SUBREV_F32: case ISA_V_DUAL_SUBREV_F32: EACH D[l] = U(F(b[l]) - F(a[l])); break;
	case ISA_V_MUL_F32: case ISA_V_DUAL_MUL_F32: EACH D[l] = U(F(a[l]) * F(b[l])); break;
	case ISA_V_DUAL_MUL_DX9_ZERO_F32: EACH D[l] = F(a[l]) == 0 || F(b[l]) == 0 ? 0 : U(F(a[l]) * F(b[l])); break;
	case ISA_V_MIN_F32: case ISA_V_DUAL_MIN_F32: EACH D[l] = U(fminf(F(a[l]), F(b[l]))); break;
	case ISA_V_MAX_F32: case ISA_V_DUAL_MAX_F32: EACH D[l] = U(fmaxf(F(a[l]), F(b[l]))); break;
	case ISA_V_MUL_I32_I24: EACH D[l] = (uint32_t)(sext(a[l], 24) * sext(b[l], 24)); r->f32_out = 0; break;
	case ISA_V_MUL_HI_I32_I24: EACH D[l] = (uint32_t)((int64_t)sext(a[l], 24) * sext(b[l], 24) >> 32); break;
	case ISA_V_MUL_U32_U24: EACH D[l] = (a[l] & 0xffffff) * (b[l] & 0xffffff); break;
	case ISA_V_MUL_HI_U32_U24: EACH D[l] = (uint32_t)((uint64_t)(a[l] & 0xffffff) * (b[l] & 0xffffff) >> 32); break;
	case ISA_V_MIN_I32: EACH D[l] = (int32_t)a[l] < (int32_t)b[l] ? a[l] : b[l]; break;
	case ISA_V_MAX_I32: EACH D[l] = (int32_t)a[l] > (int32_t)b[l] ? a[l] : b[l]; break;
	case ISA_V_MIN_U32: EACH D[l] = a[l] < b[l] ? a[l] : b[l]; break;
	case ISA_V_MAX_U32: EACH D[l] = a[l] > b[l] ? a[l] : b[l]; break;
	case ISA_V_LSHRREV_B32: EACH D[l] = b[l] >> (a[l] & 31); break;
	case ISA_V_ASHRREV_I32: EACH D[l] = (uint32_t)((int32_t)b[l] >> (a[l] & 31)); break;
	case ISA_V_LSHLREV_B32: case ISA_V_DUAL_LSHLREV_B32: EACH D[l] = b[l] << (a[l] & 31); break;
	case ISA_V_AND_B32: case ISA_V_DUAL_AND_B32: EACH D[l] = a[l] & b[l]; break;
	case ISA_V_OR_B32: EACH D[l] = a[l] | b[l]; break;
	case ISA_V_XOR_B32: EACH D[l] = a[l] ^ b[l]; break;
	case ISA_V_XNOR_B32: EACH D[l] = ~(a[l] ^ b[l]); break;
	case ISA_V_ADD_U32: case ISA_V_DUAL_ADD_NC_U32: EACH D[l] = a[l] + b[l]; break;
	case ISA_V_SUB_U32: EACH D[l] = a[l] - b[l]; break;
	case ISA_V_SUBREV_U32: EACH D[l] = b[l] - a[l]; break;
	case ISA_V_ADD_F16: EACH D[l] = d2h(h2d(a[l]) + h2d(b[l])); r->d16 = 1; break;
	case ISA_V_SUB_F16: EACH D[l] = d2h(h2d(a[l]) - h2d(b[l])); r->d16 = 1; break;
	case ISA_V_SUBREV_F16: EACH D[l] = d2h(h2d(b[l]) - h2d(a[l])); r->d16 = 1; break;
	case ISA_V_MUL_F16: EACH D[l] = d2h(h2d(a[l]) * h2d(b[l])); r->d16 = 1; break;
	case ISA_V_MAX_F16: EACH D[l] = d2h(fmax(h2d(a[l]), h2d(b[l]))); r->d16 = 1; break;
	case ISA_V_MIN_F16: EACH D[l] = d2h(fmin(h2d(a[l]), h2d(b[l]))); r->d16 = 1; break;
	case ISA_V_LDEXP_F16: EACH D[l] = d2h(ldexp(h2d(a[l]), sext(b[l], 16))); r->d16 = 1; break;
	case ISA_V_LDEXP_F32: EACH D[l] = U(ldexpf(F(a[l]), (int32_t)b[l])); break;
	case ISA_V_CVT_PKRTZ_F16_F32: EACH D[l] = f2h_rtz(F(a[l])) | f2h_rtz(F(b[l])) << 16; r->f32_out = 0; break;
	case ISA_V_FMAC_F32: case ISA_V_DUAL_FMAC_F32: {
		const uint32_t *d0 = emu_vreg(w, 0, r->dst->reg);
		EACH D[l] = U(fmaf(F(a[l]), F(b[l]), ftz(dev, F(d0[l]))));
		break;
	}
	case ISA_V_FMAC_F16: {
		const uint32_t *d0 = emu_vreg(w, 0, r->dst->reg);
		EACH D[l] = d2h(fma(h2d(a[l]), h2d(b[l]), h2d(d0[l])));
		r->d16 = 1;
		break;
	}
	case ISA_V_FMAMK_F32: EACH D[l] = U(fmaf(F(a[l]), F(b[l]), F(c[l]))); break; /* src0 * K + src1 */
	case ISA_V_FMAAK_F32: EACH D[l] = U(fmaf(F(a[l]), F(b[l]), F(c[l]))); break; /* src0 * src1 + K */
	case ISA_V_DOT2C_F32_F16: case ISA_V_DUAL_DOT2ACC_F32_F16: {
		const uint32_t *d0 = emu_vreg(w, 0, r->dst->reg);
		EACH D[l] = U((float)((double)F(d0[l]) + h2d(a[l]) * h2d(b[l]) + h2d(a[l] >> 16) * h2d(b[l] >> 16)));
		break;
	}
	case ISA_V_PK_FMAC_F16: {
		const uint32_t *d0 = emu_vreg(w, 0, r->dst->reg);
		EACH D[l] = d2h(fma(h2d(a[l]), h2d(b[l]), h2d(d0[l]))) |
			    d2h(fma(h2d(a[l] >> 16), h2d(b[l] >> 16), h2d(d0[l] >> 16))) << 16;
		r->f32_out = 0;
		break;
	}
	case ISA_V_ADD_CO_U32: case ISA_V_SUB_CO_U32: case ISA_V_SUBREV_CO_U32: case ISA_V_ADDC_CO_U32:
	case ISA_V_SUBB_CO_U32: case ISA_V_SUBBREV_CO_U32: {
		uint64_t cy = 0;
		EACH {
			uint64_t x = a[l], y = b[l], cin = 0, res;
			if (op == ISA_V_ADDC_CO_U32 || op == ISA_V_SUBB_CO_U32 || op == ISA_V_SUBBREV_CO_U32)
				cin = (l < 32 ? c[l] : c1[l]) >> (l & 31) & 1;
			if (op == ISA_V_SUBREV_CO_U32 || op == ISA_V_SUBBREV_CO_U32) {
				uint64_t t = x;
				x = y, y = t;
			}
			int carry;
			if (op == ISA_V_ADD_CO_U32 || op == ISA_V_ADDC_CO_U32) {
				res = x + y + cin;
				carry = res >> 32 & 1;
			} else {
				res = x - y - cin;
				carry = y + cin > x;
			}
			D[l] = (uint32_t)res;
			if (carry && (r->mask >> l & 1))
				cy |= 1ull << l;
		}
		r->sdst = cy;
		if (!r->sdst_op || r->sdst_op == r->dst) {
			static const IsaOperand vcc = {ISA_K_SPECIAL, 2, ISA_SP_VCC_LO, 0, 0, 0};
			r->sdst_op = &vcc;
		}
		break;
	}
	case ISA_V_ADD_U16: EACH D[l] = (a[l] + b[l]) & 0xffff; r->d16 = 1; break;
	case ISA_V_SUB_U16: EACH D[l] = (a[l] - b[l]) & 0xffff; r->d16 = 1; break;
	case ISA_V_MUL_LO_U16: EACH D[l] = (a[l] * b[l]) & 0xffff; r->d16 = 1; break;
	case ISA_V_LSHLREV_B16: EACH D[l] = (b[l] << (a[l] & 15)) & 0xffff; r->d16 = 1; break;
	case ISA_V_MAX_U16: EACH D[l] = (a[l] & 0xffff) > (b[l] & 0xffff) ? a[l] & 0xffff : b[l] & 0xffff; r->d16 = 1; break;
	case ISA_V_CMP_CLASS_F32: {
		uint64_t bits = 0;
		EACH {
			float x = F(a[l]);
			int cls;
			uint32_t u = a[l];
			int neg = u >> 31;
			switch (fpclassify(x)) {
			case FP_NAN: cls = (u & 0x400000) ? 1 : 0; break;
			case FP_INFINITE: cls = neg ? 2 : 9; break;
			case FP_NORMAL: cls = neg ? 3 : 8; break;
			case FP_SUBNORMAL: cls = neg ? 4 : 7; break;
			default: cls = neg ? 5 : 6; break;
			}
			if ((b[l] >> cls & 1) && (r->mask >> l & 1))
				bits |= 1ull << l;
		}
		r->sdst = bits;
		r->nd = 0;
		if (!r->sdst_op) {
			static const IsaOperand vcc = {ISA_K_SPECIAL, 2, ISA_SP_VCC_LO, 0, 0, 0};
			r->sdst_op = &vcc;
		}
		if (r->dst && r->dst->kind == ISA_K_SGPR)
			r->sdst_op = r->dst, r->dst = NULL;
		break;
	}
	case ISA_V_FMA_F32: EACH D[l] = U(fmaf(F(a[l]), F(b[l]), F(c[l]))); break;
	case ISA_V_MAD_U32_U24: EACH D[l] = (a[l] & 0xffffff) * (b[l] & 0xffffff) + c[l]; break;
	case ISA_V_MAD_I32_I24: EACH D[l] = (uint32_t)(sext(a[l], 24) * sext(b[l], 24)) + c[l]; break;
	case ISA_V_MUL_LO_U32: EACH D[l] = a[l] * b[l]; break;
	case ISA_V_MUL_HI_U32: EACH D[l] = (uint32_t)((uint64_t)a[l] * b[l] >> 32); break;
	case ISA_V_MUL_HI_I32: EACH D[l] = (uint32_t)((int64_t)(int32_t)a[l] * (int32_t)b[l] >> 32); break;
	case ISA_V_LSHL_ADD_U32: EACH D[l] = (a[l] << (b[l] & 31)) + c[l]; break;
	case ISA_V_ADD_LSHL_U32: EACH D[l] = (a[l] + b[l]) << (c[l] & 31); break;
	case ISA_V_LSHL_OR_B32: EACH D[l] = (a[l] << (b[l] & 31)) | c[l]; break;
	case ISA_V_AND_OR_B32: EACH D[l] = (a[l] & b[l]) | c[l]; break;
	case ISA_V_OR3_B32: EACH D[l] = a[l] | b[l] | c[l]; break;
	case ISA_V_ADD3_U32: EACH D[l] = a[l] + b[l] + c[l]; break;
	case ISA_V_XAD_U32: EACH D[l] = (a[l] ^ b[l]) + c[l]; break;
	case ISA_V_BFE_U32: EACH {
		uint32_t off = b[l] & 31, wd = c[l] & 31;
		D[l] = wd ? (a[l] >> off) & ((1u << wd) - 1) : 0;
	} break;
	case ISA_V_BFE_I32: EACH {
		uint32_t off = b[l] & 31, wd = c[l] & 31;
		D[l] = wd ? (uint32_t)sext(a[l] >> off, (int)wd) : 0;
	} break;
	case ISA_V_BFI_B32: EACH D[l] = (a[l] & b[l]) | (~a[l] & c[l]); break;
	case ISA_V_PERM_B32: EACH {
		uint64_t x = (uint64_t)a[l] << 32 | b[l];
		uint32_t s = c[l];
		D[l] = perm_byte(x, s) | perm_byte(x, s >> 8) << 8 | perm_byte(x, s >> 16) << 16 | perm_byte(x, s >> 24) << 24;
	} break;
	case ISA_V_ALIGNBIT_B32: EACH D[l] = (uint32_t)(((uint64_t)a[l] << 32 | b[l]) >> (c[l] & 31)); break;
	case ISA_V_ALIGNBYTE_B32: EACH D[l] = (uint32_t)(((uint64_t)a[l] << 32 | b[l]) >> (8 * (c[l] & 3))); break;
	case ISA_V_MIN3_F32: EACH D[l] = U(fminf(fminf(F(a[l]), F(b[l])), F(c[l]))); break;
	case ISA_V_MAX3_F32: EACH D[l] = U(fmaxf(fmaxf(F(a[l]), F(b[l])), F(c[l]))); break;
	case ISA_V_MED3_F32: EACH {
		float x = F(a[l]), y = F(b[l]), z = F(c[l]);
		D[l] = U(fmaxf(fminf(x, y), fminf(fmaxf(x, y), z)));
	} break;
	case ISA_V_MIN3_I32: EACH {
		int32_t x = (int32_t)a[l], y = (int32_t)b[l], z = (int32_t)c[l];
		D[l] = (uint32_t)TA_MIN(TA_MIN(x, y), z);
	} break;
	case ISA_V_MAX3_I32: EACH {
		int32_t x = (int32_t)a[l], y = (int32_t)b[l], z = (int32_t)c[l];
		D[l] = (uint32_t)TA_MAX(TA_MAX(x, y), z);
	} break;
	case ISA_V_MED3_I32: EACH {
		int32_t x = (int32_t)a[l], y = (int32_t)b[l], z = (int32_t)c[l];
		D[l] = (uint32_t)TA_MAX(TA_MIN(x, y), TA_MIN(TA_MAX(x, y), z));
	} break;
	case ISA_V_MIN3_U32: EACH D[l] = TA_MIN(TA_MIN(a[l], b[l]), c[l]); break;
	case ISA_V_MAX3_U32: EACH D[l] = TA_MAX(TA_MAX(a[l], b[l]), c[l]); break;
	case ISA_V_MED3_U32: EACH D[l] = TA_MAX(TA_MIN(a[l], b[l]), TA_MIN(TA_MAX(a[l], b[l]), c[l])); break;
	case ISA_V_FMA_F16: EACH D[l] = d2h(fma(h2d(a[l]), h2d(b[l]), h2d(c[l]))); r->d16 = 1; break;
	case ISA_V_DIV_FIXUP_F32: EACH D[l] = U(div_fixup_f32(F(a[l]), F(b[l]), F(c[l]))); break;
	case ISA_V_DIV_SCALE_F32: {
		uint64_t bits = 0;
		EACH {
			int v;
			D[l] = U(div_scale_f32(F(a[l]), F(b[l]), F(c[l]), &v));
			if (v && (r->mask >> l & 1))
				bits |= 1ull << l;
		}
		r->sdst = bits;
		break;
	}
	case ISA_V_DIV_FMAS_F32: {
		if (!vcc_read_ok(dev, w, insn))
			return -1;
		uint64_t vcc = (uint64_t)w->s[ES_VCC + 1] << 32 | w->s[ES_VCC];
		EACH D[l] = vcc >> l & 1 ? U(fma_scaled_f32(F(a[l]), F(b[l]), F(c[l]), f32_exp(F(c[l])) > 127 ? 64 : -64))
				       : U(fmaf(F(a[l]), F(b[l]), F(c[l])));
		break;
	}
	case ISA_V_DIV_FIXUP_F64: case ISA_V_DIV_FMAS_F64: case ISA_V_DIV_SCALE_F64: {
		if (op == ISA_V_DIV_FMAS_F64 && !vcc_read_ok(dev, w, insn))
			return -1;
		uint64_t vcc = (uint64_t)w->s[ES_VCC + 1] << 32 | w->s[ES_VCC], bits = 0;
		EACH {
			double x = dbits((uint64_t)a1[l] << 32 | a[l]), y = dbits((uint64_t)b1[l] << 32 | b[l]);
			double z = dbits((uint64_t)c1[l] << 32 | c[l]), res;
			int v = 0;
			if (op == ISA_V_DIV_FIXUP_F64)
				res = div_fixup_f64(x, y, z);
			else if (op == ISA_V_DIV_SCALE_F64)
				res = div_scale_f64(x, y, z, &v);
			else
				res = vcc >> l & 1 ? fma_scaled_f64(x, y, z, f64_exp(z) > 1023 ? 128 : -128) : fma(x, y, z);
			if (v && (r->mask >> l & 1))
				bits |= 1ull << l;
			uint64_t u = ubits64(res);
			D[l] = (uint32_t)u, D1[l] = (uint32_t)(u >> 32);
		}
		if (op == ISA_V_DIV_SCALE_F64)
			r->sdst = bits;
		r->nd = 2;
		break;
	}
	case ISA_V_LERP_U8: EACH {
		uint32_t y = 0;
		for (int i = 0; i < 32; i += 8)
			y |= (((a[l] >> i & 0xff) + (b[l] >> i & 0xff) + (c[l] >> i & 1)) >> 1) << i;
		D[l] = y;
	} break;
	case ISA_V_LSHLREV_B64: case ISA_V_LSHRREV_B64: case ISA_V_ASHRREV_I64: EACH {
		uint64_t x = (uint64_t)b1[l] << 32 | b[l];
		unsigned s = a[l] & 63;
		x = op == ISA_V_LSHLREV_B64 ? x << s : op == ISA_V_LSHRREV_B64 ? x >> s : (uint64_t)((int64_t)x >> s);
		D[l] = (uint32_t)x, D1[l] = (uint32_t)(x >> 32);
	} r->nd = 2; break;
	case ISA_V_LSHL_ADD_U64: EACH {
		uint64_t x = (uint64_t)a1[l] << 32 | a[l], z = (uint64_t)c1[l] << 32 | c[l];
		x = (x << (b[l] & 7)) + z;
		D[l] = (uint32_t)x, D1[l] = (uint32_t)(x >> 32);
	} r->nd = 2; break;
	case ISA_V_ADD_F64: case ISA_V_MUL_F64: case ISA_V_FMA_F64: case ISA_V_MAX_F64: case ISA_V_MIN_F64: EACH {
		uint64_t ux = (uint64_t)a1[l] << 32 | a[l], uy = (uint64_t)b1[l] << 32 | b[l], uz = (uint64_t)c1[l] << 32 | c[l];
		double x, y, z, res;
		memcpy(&x, &ux, 8), memcpy(&y, &uy, 8), memcpy(&z, &uz, 8);
		res = op == ISA_V_ADD_F64 ? x + y : op == ISA_V_MUL_F64 ? x * y : op == ISA_V_MAX_F64 ? fmax(x, y)
		    : op == ISA_V_MIN_F64 ? fmin(x, y) : fma(x, y, z);
		memcpy(&ux, &res, 8);
		D[l] = (uint32_t)ux, D1[l] = (uint32_t)(ux >> 32);
	} r->nd = 2; break;
	case ISA_V_MBCNT_LO_U32_B32: EACH D[l] = (uint32_t)__builtin_popcount(a[l] & (l >= 32 ? 0xffffffffu : (1u << l) - 1)) + b[l]; break;
	case ISA_V_MBCNT_HI_U32_B32: EACH D[l] = (uint32_t)(l < 32 ? 0 : __builtin_popcount(a[l] & (l == 63 ? 0x7fffffffu : (1u << (l - 32)) - 1))) + b[l]; break;
	case ISA_V_BCNT_U32_B32: EACH D[l] = (uint32_t)__builtin_popcount(a[l]) + b[l]; break;
	case ISA_V_PACK_B32_F16: EACH D[l] = (a[l] & 0xffff) | (b[l] & 0xffff) << 16; r->f32_out = 0; break;
	case ISA_V_BFM_B32: EACH D[l] = (uint32_t)(((1ull << (a[l] & 31)) - 1) << (b[l] & 31)); break;
	case ISA_V_CVT_PK_U16_U32: EACH D[l] = TA_MIN(a[l], 0xffffu) | TA_MIN(b[l], 0xffffu) << 16; break;
	case ISA_V_CVT_PK_I16_I32: EACH {
		int32_t x = TA_MAX(TA_MIN((int32_t)a[l], 32767), -32768), y = TA_MAX(TA_MIN((int32_t)b[l], 32767), -32768);
		D[l] = ((uint32_t)x & 0xffff) | (uint32_t)y << 16;
	} break;
	case ISA_V_CVT_PKNORM_I16_F32: EACH {
		float x = fmaxf(-1.0f, fminf(1.0f, F(a[l]))), y = fmaxf(-1.0f, fminf(1.0f, F(b[l])));
		D[l] = ((uint32_t)(int32_t)rintf(x * 32767.0f) & 0xffff) | (uint32_t)(int32_t)rintf(y * 32767.0f) << 16;
	} r->f32_out = 0; break;
	case ISA_V_MAD_U64_U32: case ISA_V_MAD_I64_I32: EACH {
		uint64_t acc64 = (uint64_t)c1[l] << 32 | c[l], p, res;
		if (op == ISA_V_MAD_U64_U32)
			p = (uint64_t)a[l] * b[l];
		else
			p = (uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]);
		res = p + acc64;
		D[l] = (uint32_t)res, D1[l] = (uint32_t)(res >> 32);
	} r->nd = 2; r->sdst = 0; break;
	case ISA_V_PERMLANE16_B32: case ISA_V_PERMLANEX16_B32: {
		uint64_t sel = (uint64_t)c[0] << 32 | b[0];
		const uint32_t *old = emu_vreg(w, 0, r->dst->reg);
		EACH {
			int row = l / 16, nib = (int)(sel >> (4 * (l % 16)) & 15);
			if (op == ISA_V_PERMLANEX16_B32)
				row ^= 1;
			int s = row * 16 + nib;
			D[l] = s < L ? a[s] : old[l];
		}
		break;
	}
	/* VOP3P packed 16-bit. */
	case ISA_V_PK_ADD_F16: case ISA_V_PK_MUL_F16: case ISA_V_PK_MAX_F16: case ISA_V_PK_MIN_F16: case ISA_V_PK_FMA_F16:
		EACH {
			uint32_t res = 0;
			for (int h = 0; h < 2; h++) {
				double x = h2d(pk_half(m, 0, h, a[l], 1)), y = h2d(pk_half(m, 1, h, b[l], 1)), z = 0;
				if (op == ISA_V_PK_FMA_F16)
					z = h2d(pk_half(m, 2, h, c[l], 1));
				double v = op == ISA_V_PK_ADD_F16 ? x + y : op == ISA_V_PK_MUL_F16 ? x * y
					 : op == ISA_V_PK_MAX_F16 ? fmax(x, y) : op == ISA_V_PK_MIN_F16 ? fmin(x, y) : fma(x, y, z);
				res |= d2h(v) << (16 * h);
			}
			D[l] = res;
		}
		r->f32_out = 0;
		break;
	case ISA_V_PK_ADD_U16: case ISA_V_PK_ADD_I16: case ISA_V_PK_SUB_U16: case ISA_V_PK_SUB_I16: case ISA_V_PK_MUL_LO_U16:
	case ISA_V_PK_LSHLREV_B16: case ISA_V_PK_LSHRREV_B16: case ISA_V_PK_ASHRREV_I16: case ISA_V_PK_MAX_I16:
	case ISA_V_PK_MIN_I16: case ISA_V_PK_MAX_U16: case ISA_V_PK_MIN_U16: case ISA_V_PK_MAD_U16: case ISA_V_PK_MAD_I16:
		EACH {
			uint32_t res = 0;
			for (int h = 0; h < 2; h++) {
				uint32_t x = pk_half(m, 0, h, a[l], 0), y = pk_half(m, 1, h, b[l], 0), z = pk_half(m, 2, h, c[l], 0), v;
				int32_t sx = (int16_t)x, sy = (int16_t)y;
				switch (op) {
				case ISA_V_PK_ADD_U16: case ISA_V_PK_ADD_I16: v = x + y; break;
				case ISA_V_PK_SUB_U16: case ISA_V_PK_SUB_I16: v = x - y; break;
				case ISA_V_PK_MUL_LO_U16: v = x * y; break;
				case ISA_V_PK_LSHLREV_B16: v = y << (x & 15); break;
				case ISA_V_PK_LSHRREV_B16: v = y >> (x & 15); break;
				case ISA_V_PK_ASHRREV_I16: v = (uint32_t)(sy >> (x & 15)); break;
				case ISA_V_PK_MAX_I16: v = (uint32_t)TA_MAX(sx, sy); break;
				case ISA_V_PK_MIN_I16: v = (uint32_t)TA_MIN(sx, sy); break;
				case ISA_V_PK_MAX_U16: v = TA_MAX(x, y); break;
				case ISA_V_PK_MIN_U16: v = TA_MIN(x, y); break;
				default: v = x * y + z; break;
				}
				res |= (v & 0xffff) << (16 * h);
			}
			D[l] = res;
		}
		break;
	case ISA_V_DOT2_F32_F16: case ISA_V_DOT2_F32_BF16: EACH {
		double s = F(c[l]);
		for (int h = 0; h < 2; h++) {
			uint32_t x = pk_half(m, 0, h, a[l], 1), y = pk_half(m, 1, h, b[l], 1);
			s += op == ISA_V_DOT2_F32_F16 ? h2d(x) * h2d(y) : dt_bf16_to_double((uint16_t)x) * dt_bf16_to_double((uint16_t)y);
		}
		D[l] = U((float)s);
	} break;
	case ISA_V_DOT2_I32_I16: case ISA_V_DOT2_U32_U16: EACH {
		uint32_t s = c[l];
		for (int h = 0; h < 2; h++) {
			uint32_t x = a[l] >> (16 * h) & 0xffff, y = b[l] >> (16 * h) & 0xffff;
			s += op == ISA_V_DOT2_I32_I16 ? (uint32_t)((int16_t)x * (int16_t)y) : x * y;
		}
		D[l] = s;
	} break;
	case ISA_V_DOT4_I32_I8: case ISA_V_DOT4_U32_U8: EACH {
		uint32_t s = c[l];
		for (int i = 0; i < 4; i++) {
			uint32_t x = a[l] >> (8 * i) & 0xff, y = b[l] >> (8 * i) & 0xff;
			s += op == ISA_V_DOT4_I32_I8 ? (uint32_t)((int8_t)x * (int8_t)y) : x * y;
		}
		D[l] = s;
	} break;
	case ISA_V_DOT8_I32_I4: case ISA_V_DOT8_U32_U4: EACH {
		uint32_t s = c[l];
		for (int i = 0; i < 8; i++) {
			uint32_t x = a[l] >> (4 * i) & 15, y = b[l] >> (4 * i) & 15;
			s += op == ISA_V_DOT8_I32_I4 ? (uint32_t)(sext(x, 4) * sext(y, 4)) : x * y;
		}
		D[l] = s;
	} break;
	case ISA_V_FMA_MIX_F32: case ISA_V_FMA_MIXLO_F16: case ISA_V_FMA_MIXHI_F16: EACH {
		double v[3];
		uint32_t in3[3] = {a[l], b[l], c[l]};
		for (int j = 0; j < 3; j++) {
			if (m->op_sel_hi >> j & 1)
				v[j] = h2d(m->op_sel >> j & 1 ? in3[j] >> 16 : in3[j] & 0xffff);
			else
				v[j] = F(in3[j]);
			if (m->abs >> j & 1)
				v[j] = fabs(v[j]);
			if (m->neg >> j & 1)
				v[j] = -v[j];
		}
		float res = fmaf((float)v[0], (float)v[1], (float)v[2]);
		if (op == ISA_V_FMA_MIX_F32)
			D[l] = U(res);
		else {
			const uint32_t *old = emu_vreg(w, 0, r->dst->reg);
			uint32_t h = d2h((double)res);
			D[l] = op == ISA_V_FMA_MIXLO_F16 ? (old[l] & 0xffff0000u) | h : (old[l] & 0xffff) | h << 16;
		}
	} break;
	case ISA_V_PK_FMA_F32: case ISA_V_PK_MUL_F32: case ISA_V_PK_ADD_F32: EACH {
		uint32_t sa[2] = {a[l], a1[l]}, sb[2] = {b[l], b1[l]}, sc[2] = {c[l], c1[l]};
		for (int h = 0; h < 2; h++) {
			int sel0 = h ? m->op_sel_hi & 1 : m->op_sel & 1, sel1 = h ? m->op_sel_hi >> 1 & 1 : m->op_sel >> 1 & 1,
			    sel2 = h ? m->op_sel_hi >> 2 & 1 : m->op_sel >> 2 & 1;
			float x = F(sa[sel0]), y = F(sb[sel1]), z = F(sc[sel2]);
			uint8_t ng = h ? m->neg_hi : m->neg;
			if (ng & 1) x = -x;
			if (ng & 2) y = -y;
			if (ng & 4) z = -z;
			float v = op == ISA_V_PK_FMA_F32 ? fmaf(x, y, z) : op == ISA_V_PK_MUL_F32 ? x * y : x + y;
			r->d[h][l] = U(v);
		}
	} r->nd = 2; r->f32_out = 0; break;
	case ISA_V_PK_MOV_B32: EACH {
		D[l] = m->op_sel & 1 ? a1[l] : a[l];
		D1[l] = m->op_sel & 2 ? b1[l] : b[l];
	} r->nd = 2; break;
	default:
		emu_fail(dev, w, insn, "instruction not emulated");
		return -1;
	}
#undef EACH
	/* 16-bit VOP3 results into the high half with op_sel[3]. */
	if (r->d16 && (m->op_sel >> 3 & 1))
		r->d16_hi = 1;
	return 0;
}

/* Writes a lane-mask result (compare / carry) to its SGPR(s) or vcc. */
static void write_lanemask(EmuDevice *dev, EmuWave *w, const IsaOperand *o, uint64_t bits, int valu)
{
	int base = o->kind == ISA_K_SGPR ? o->reg : special_sreg(o->reg);
	if (base < 0)
		return; /* null */
	int n = w->lanes == 64 ? 2 : 1;
	for (int i = 0; i < n && base + i < ES_NSGPR; i++) {
		w->s[base + i] = (uint32_t)(bits >> (32 * i));
		w->sinit[base + i] = 1;
		if (valu && !dev->g11)
			w->swrite_valu[base + i] = w->clock;
	}
}

static int valu_write(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, VRes *r)
{
	int L = w->lanes;
	const IsaMods *m = &in->mod;
	if (r->sgpr_dst) {
		const IsaOperand *o = r->dst ? r->dst : r->sdst_op;
		if (o && o->kind == ISA_K_SGPR) {
			w->s[o->reg] = r->d[0][0];
			w->sinit[o->reg] = 1;
			if (!dev->g11)
				w->swrite_valu[o->reg] = w->clock;
		} else if (o && o->kind == ISA_K_SPECIAL && special_sreg(o->reg) >= 0) {
			w->s[special_sreg(o->reg)] = r->d[0][0];
			w->sinit[special_sreg(o->reg)] = 1;
		}
		return 0;
	}
	if (r->sdst_op)
		write_lanemask(dev, w, r->sdst_op, r->sdst, 1);
	if (r->write_exec) {
		w->s[ES_EXEC] = (uint32_t)r->sdst;
		if (L == 64)
			w->s[ES_EXEC + 1] = (uint32_t)(r->sdst >> 32);
	}
	if (!r->nd || !r->dst)
		return 0;
	if (r->dst->kind != ISA_K_VGPR && r->dst->kind != ISA_K_AGPR)
		return 0;
	int ag = r->dst->kind == ISA_K_AGPR;
	uint64_t mask = r->mask & (L == 64 ? ~0ull : 0xffffffffull);
	for (int h = 0; h < r->nd && h < r->dst->count; h++) {
		uint32_t *d = emu_vreg(w, ag, r->dst->reg + h);
		for (int l = 0; l < L; l++) {
			if (!(mask >> l & 1))
				continue;
			uint32_t v = r->d[h][l];
			if (r->f32_out) {
				float f = emu_f(v);
				if (m->omod == 1) f *= 2.0f;
				else if (m->omod == 2) f *= 4.0f;
				else if (m->omod == 3) f *= 0.5f;
				if (m->clamp)
					f = isnan(f) ? 0.0f : fminf(fmaxf(f, 0.0f), 1.0f);
				v = emu_u(ftz(dev, f));
			}
			if (r->d16) {
				v &= 0xffff;
				if (r->d16_hi)
					v = (d[l] & 0xffff) | v << 16;
				else if (dev->g11)
					v |= d[l] & 0xffff0000u; /* gfx11 keeps the high half */
			}
			d[l] = v;
		}
	}
	emu_vwritten(dev, w, insn, ag, r->dst->reg, TA_MIN(r->nd, r->dst->count), mask);
	for (int h = 0; !ag && !dev->g11 && h < r->nd && h < r->dst->count; h++)
		w->vvalu[r->dst->reg + h] = w->clock;
	if (r->swap && r->swap_src->kind == ISA_K_VGPR) {
		uint32_t *d = emu_vreg(w, 0, r->swap_src->reg);
		for (int l = 0; l < L; l++)
			if (mask >> l & 1)
				d[l] = r->swap_val[l];
		emu_vwritten(dev, w, insn, 0, r->swap_src->reg, 1, mask);
	}
	return dev->failed ? -1 : 0;
}

int exec_valu(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, const uint8_t *acc)
{
	static _Thread_local VRes rx, ry; /* scratch, per thread (devices may run in several threads) */
	dev->stats.valu++;
	if (dev->g11)
		w->last_mfma_dn = 0; /* a VALU between WMMAs clears the WMMA hazard */
	if (isa_op_fmt(dev->wt, in->op) == ISA_FMT_VOPD) {
		/* Both halves read the old register state, then both write. */
		uint16_t sig[ISA_MAX_SIG];
		int nx = isa_sig(dev->wt, in->op, sig);
		if (valu_compute(dev, w, insn, in, in->op, in->ops, nx, acc, &rx) ||
		    valu_compute(dev, w, insn, in, in->op_y, in->ops + nx, in->nops - nx, acc + nx, &ry))
			return -1;
		return valu_write(dev, w, insn, in, &rx) || valu_write(dev, w, insn, in, &ry) ? -1 : 0;
	}
	if (valu_compute(dev, w, insn, in, in->op, in->ops, in->nops, acc, &rx))
		return -1;
	return valu_write(dev, w, insn, in, &rx);
}
