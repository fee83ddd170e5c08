/* amd_isel_math.c — f64 division, sqrt and roundings, i64 division (part of amd_isel, SIMT IR -> MIR).
 *
 * Everything here is straight-line VALU code on VGPR pairs: the hardware has
 * no f64 divide or correctly rounded f64 sqrt, and no 64-bit integer divide,
 * so each is the sequence LLVM's AMDGPU backend uses (docs/amd-backend.md). */
#include "amd_isel_impl.h"

static Val vtmp2(Isel *s)
{
	return reg(newv(s, MR_V, 2), 0, 2);
}
static Val lo32(Val v)
{
	return v.kind == VK_CONST ? cst(v.bits) : reg(v.vreg, v.sub, 1);
}
static Val hi32(Val v)
{
	return v.kind == VK_CONST ? cst(0) : reg(v.vreg, v.sub + 1, 1);
}
static Val lane_mask(Isel *s)
{
	return reg(newv(s, MR_S, s->lm), 0, s->lm);
}

/* An f64 constant as a VALU source: an inline constant (its high word, the
 * low one zero: 0, +-0.5, +-1, +-2, +-4) or a VGPR pair.  (An integer inline
 * constant would be read as the bits of a denormal, a lone literal as the
 * high word, and gfx9 VOP3 takes no literal.) */
static Val f64c(Isel *s, double x)
{
	uint64_t b;
	memcpy(&b, &x, 8);
	static const uint32_t inl[] = {0, 0x3fe00000u, 0x3ff00000u, 0x40000000u, 0x40100000u};
	for (size_t i = 0; i < TA_ARRAY_LEN(inl) && !(uint32_t)b; i++)
		if ((uint32_t)(b >> 32) == inl[i] || (i && (uint32_t)(b >> 32) == (inl[i] | 0x80000000u)))
			return cst((uint32_t)(b >> 32));
	Val v = vtmp2(s);
	for (int k = 0; k < 2; k++) {
		MInst *mi = valu1(s, ISA_V_MOV_B32, reg(v.vreg, k, 1), cst((uint32_t)(b >> (32 * k))));
		if (!k)
			mi->flags |= MI_DEFALL;
	}
	return v;
}

/* d = c ? x : y on 64-bit values, a v_cndmask per half. */
static void sel64(Isel *s, Val d, Val c, Val x, Val y)
{
	for (int k = 0; k < 2; k++) {
		Val dk = reg(d.vreg, d.sub + k, 1), src[3] = {k ? hi32(y) : lo32(y), k ? hi32(x) : lo32(x), c};
		MInst *mi = valu(s, ISA_V_CNDMASK_B32, 1, &dk, 3, src);
		if (!k)
			mi->flags |= MI_DEFALL;
	}
}

static Val pair_vgpr(Isel *s, Val v)
{
	if (v.kind == VK_CONST) { /* a 64-bit constant is materialized by opnd_all; this is a small one */
		Val p = vtmp2(s);
		valu1(s, ISA_V_MOV_B32, reg(p.vreg, 0, 1), cst(v.bits))->flags |= MI_DEFALL;
		valu1(s, ISA_V_MOV_B32, reg(p.vreg, 1, 1), cst(0));
		return p;
	}
	return to_vgpr(s, v);
}

/* ---- f64 division -----------------------------------------------------
 * IEEE, as the f32 one (sel_fdiv in amd_isel_insn.c) and LLVM's f64 fdiv:
 * v_div_scale moves both operands away from the extremes, a reciprocal with
 * two Newton steps, one on the quotient, v_div_fmas applies the last step
 * and the post-scale (vcc from the numerator's v_div_scale), v_div_fixup
 * the special cases. */
void sel_fdiv64(Isel *s, Val d, Val a, Val b)
{
	a = pair_vgpr(s, a), b = pair_vgpr(s, b);
	Val ds = vtmp2(s), ns = vtmp2(s), r = vtmp2(s), f0 = vtmp2(s), f1 = vtmp2(s), f2 = vtmp2(s);
	Val f3 = vtmp2(s), m = vtmp2(s), f4 = vtmp2(s), fm = vtmp2(s), one = f64c(s, 1.0);
	IsaOperand vcc = isa_special(ISA_SP_VCC_LO, s->lm);
	Val defs[2] = {ds, ds}, src[3] = {b, b, a}; /* defs[1]: a placeholder for vcc */
	mi_phys(valu(s, ISA_V_DIV_SCALE_F64, 2, defs, 3, src), 1, vcc);
	valu1(s, ISA_V_RCP_F64, r, ds);
	valu3(s, ISA_V_FMA_F64, f0, ds, r, one)->in.mod.neg = 1; /* 1 - d*r */
	valu3(s, ISA_V_FMA_F64, f1, r, f0, r);
	valu3(s, ISA_V_FMA_F64, f2, ds, f1, one)->in.mod.neg = 1;
	defs[0] = ns, src[0] = a;
	mi_phys(valu(s, ISA_V_DIV_SCALE_F64, 2, defs, 3, src), 1, vcc);
	valu3(s, ISA_V_FMA_F64, f3, f1, f2, f1);
	valu2(s, ISA_V_MUL_F64, m, ns, f3);
	valu3(s, ISA_V_FMA_F64, f4, ds, m, ns)->in.mod.neg = 1; /* n - d*q */
	valu3(s, ISA_V_DIV_FMAS_F64, fm, f4, f3, m);
	valu3(s, ISA_V_DIV_FIXUP_F64, d, fm, b, a);
}

/* ---- f64 sqrt -------------------------------------------------------------
 * Correctly rounded, LLVM's sequence: inputs below 2^-767 are scaled by
 * 2^256 (the result then by 2^-128, exactly), y = rsq(x), g = x*y and
 * h = y/2 refined by one Goldschmidt step, then two Newton corrections of g
 * with the residual x - g*g (the last one rounds).  0 and +inf give
 * themselves; negative inputs and NaN give NaN through v_rsq. */
static void sel_fsqrt64(Isel *s, Val d, Val a)
{
	a = pair_vgpr(s, a);
	Val small = lane_mask(s), x = vtmp2(s), up = vtmp2(s), half = f64c(s, 0.5);
	valu2(s, ISA_V_CMP_LT_F64, small, a, f64c(s, 0x1p-767));
	valu2(s, ISA_V_MUL_F64, up, a, f64c(s, 0x1p256));
	sel64(s, x, small, up, a);
	Val y = vtmp2(s), g = vtmp2(s), h = vtmp2(s), r = vtmp2(s), g1 = vtmp2(s), h1 = vtmp2(s);
	Val d0 = vtmp2(s), g2 = vtmp2(s), d1 = vtmp2(s), q = vtmp2(s), qd = vtmp2(s), res = vtmp2(s);
	valu1(s, ISA_V_RSQ_F64, y, x);
	valu2(s, ISA_V_MUL_F64, g, x, y);
	valu2(s, ISA_V_MUL_F64, h, y, half);
	valu3(s, ISA_V_FMA_F64, r, h, g, half)->in.mod.neg = 1; /* 1/2 - h*g */
	valu3(s, ISA_V_FMA_F64, g1, g, r, g);
	valu3(s, ISA_V_FMA_F64, h1, h, r, h);
	valu3(s, ISA_V_FMA_F64, d0, g1, g1, x)->in.mod.neg = 1; /* x - g1*g1 */
	valu3(s, ISA_V_FMA_F64, g2, d0, h1, g1);
	valu3(s, ISA_V_FMA_F64, d1, g2, g2, x)->in.mod.neg = 1;
	valu3(s, ISA_V_FMA_F64, q, d1, h1, g2);
	valu2(s, ISA_V_MUL_F64, qd, q, f64c(s, 0x1p-128));
	sel64(s, res, small, qd, q);
	Val z = lane_mask(s), inf = lane_mask(s), keep = lane_mask(s);
	valu2(s, ISA_V_CMP_EQ_F64, z, x, cst(0));
	valu2(s, ISA_V_CMP_EQ_F64, inf, x, f64c(s, INFINITY));
	MInst *mi = emit(s, lmop(s, ISA_S_OR_B32, ISA_S_OR_B64), 1);
	put(s, mi, 0, keep, ISA_TY_B32);
	put(s, mi, 1, z, ISA_TY_B32);
	put(s, mi, 2, inf, ISA_TY_B32);
	sel64(s, d, keep, x, res);
}

/* SI_MATH on f64: sqrt, the reciprocal (a division) and the roundings. */
void sel_math64(Isel *s, const SInst *in)
{
	Val d = dst_of(s, in->dst, 0, 2), a = opnd_all(s, in->a);
	switch (in->sub) {
	case MATH_SQRT: sel_fsqrt64(s, d, a); return;
	case MATH_RCP: sel_fdiv64(s, d, f64c(s, 1.0), a); return;
	case MATH_FLOOR: valu1(s, ISA_V_FLOOR_F64, d, pair_vgpr(s, a)); return;
	case MATH_CEIL: valu1(s, ISA_V_CEIL_F64, d, pair_vgpr(s, a)); return;
	case MATH_RNDNE: valu1(s, ISA_V_RNDNE_F64, d, pair_vgpr(s, a)); return;
	case MATH_TRUNC: valu1(s, ISA_V_TRUNC_F64, d, pair_vgpr(s, a)); return;
	default: {
		static const char *const nm[] = {"exp2", "log2"};
		char what[40];
		snprintf(what, sizeof what, "f64 %s", in->sub < TA_ARRAY_LEN(nm) ? nm[in->sub] : "sin/cos");
		unsupported(s, what);
		return;
	}
	}
}

/* ---- i64 division ---------------------------------------------------------
 * Unsigned 64-bit n / d as LLVM expands it: a reciprocal estimate of 2^64/d
 * from f32 (just below the true value), two Newton steps in 64-bit integers
 * (x += mulhi(x, -d*x)), q = mulhi(n, x), then at most two corrections of
 * q and r = n - q*d.  Signed: on magnitudes, with the signs applied after
 * (truncating, like C; the lowering makes it floor division). */

/* d = a * b + c (c 64-bit), v_mad_u64_u32; its carry-out is not used. */
static void mad64(Isel *s, Val d, Val a, Val b, Val c)
{
	Val defs[2] = {d, lane_mask(s)}, src[3] = {a, b, c};
	valu(s, ISA_V_MAD_U64_U32, 2, defs, 3, src);
}

/* The low 64 bits of a * b. */
static Val mullo64(Isel *s, Val a, Val b)
{
	Val t = vtmp2(s), x = vtmp(s), y = vtmp(s);
	mad64(s, t, lo32(a), lo32(b), cst(0));
	valu2(s, ISA_V_MUL_LO_U32, x, lo32(a), hi32(b));
	valu2(s, ISA_V_MUL_LO_U32, y, hi32(a), lo32(b));
	valu3(s, ISA_V_ADD3_U32, hi32(t), hi32(t), x, y);
	return t;
}

/* The high 64 bits of the 128-bit a * b, from the four 32x32 products. */
static Val mulhi64(Isel *s, Val a, Val b)
{
	Val t = vtmp2(s), th = vtmp2(s), u = vtmp2(s), ul = vtmp2(s), uh = vtmp2(s), v = vtmp2(s), vh = vtmp2(s);
	Val w = vtmp2(s), h = vtmp2(s);
	mad64(s, t, lo32(a), lo32(b), cst(0));
	valu2(s, ISA_V_LSHRREV_B64, th, cst(32), t);
	mad64(s, u, lo32(a), hi32(b), th); /* a0 b1 + hi(a0 b0) < 2^64 */
	valu1(s, ISA_V_MOV_B32, lo32(ul), lo32(u))->flags |= MI_DEFALL;
	valu1(s, ISA_V_MOV_B32, hi32(ul), cst(0));
	valu2(s, ISA_V_LSHRREV_B64, uh, cst(32), u);
	mad64(s, v, hi32(a), lo32(b), ul); /* a1 b0 + lo(u): bits 32.. of the product */
	valu2(s, ISA_V_LSHRREV_B64, vh, cst(32), v);
	mad64(s, w, hi32(a), hi32(b), uh);
	sel_add64(s, h, w, vh, false, false);
	return h;
}

static Val add64(Isel *s, Val a, Val b, bool sub)
{
	Val d = vtmp2(s);
	sel_add64(s, d, a, b, sub, false);
	return d;
}

/* q = n / d, r = n % d, unsigned, n and d VGPR pairs. */
static void udivrem64(Isel *s, Val n, Val d, Val *qo, Val *ro)
{
	Val cl = vtmp(s), ch = vtmp(s), m1 = vtmp(s), rc = vtmp(s), mul1 = vtmp(s), mul2 = vtmp(s), tr = vtmp(s);
	Val m2 = vtmp(s), x = vtmp2(s);
	valu1(s, ISA_V_CVT_F32_U32, cl, lo32(d));
	valu1(s, ISA_V_CVT_F32_U32, ch, hi32(d));
	valu3(s, ISA_V_FMA_F32, m1, ch, cst(0x4f800000u), cl); /* d as f32: hi * 2^32 + lo */
	valu1(s, ISA_V_RCP_F32, rc, m1);
	valu2(s, ISA_V_MUL_F32, mul1, cst(0x5f7ffffcu), rc); /* just under 2^64 */
	valu2(s, ISA_V_MUL_F32, mul2, cst(0x2f800000u), mul1); /* 2^-32 */
	valu1(s, ISA_V_TRUNC_F32, tr, mul2);
	valu3(s, ISA_V_FMA_F32, m2, tr, cst(0xcf800000u), mul1); /* - hi * 2^32 */
	valu1(s, ISA_V_CVT_U32_F32, lo32(x), m2)->flags |= MI_DEFALL;
	valu1(s, ISA_V_CVT_U32_F32, hi32(x), tr);
	Val nd = add64(s, cst(0), d, true);
	for (int k = 0; k < 2; k++) /* x += mulhi(x, -d * x) */
		x = add64(s, x, mulhi64(s, x, mullo64(s, nd, x)), false);
	Val q = mulhi64(s, n, x);
	Val r = add64(s, n, mullo64(s, d, q), true);
	for (int k = 0; k < 2; k++) {
		Val lt = lane_mask(s), q1 = add64(s, q, cst(1), false), r1 = add64(s, r, d, true);
		Val qn = vtmp2(s), rn = vtmp2(s);
		valu2(s, ISA_V_CMP_LT_U64, lt, r, d);
		sel64(s, qn, lt, q, q1);
		sel64(s, rn, lt, r, r1);
		q = qn, r = rn;
	}
	*qo = q, *ro = r;
}

void sel_divrem64(Isel *s, const SInst *in)
{
	bool rem = in->op == SI_REM;
	Val n = pair_vgpr(s, opnd_all(s, in->a)), d = pair_vgpr(s, opnd_all(s, in->b));
	Val sa = vtmp2(s), sb = vtmp2(s), an = vtmp2(s), ad = vtmp2(s);
	/* |x| = (x + s) ^ s with s = x >> 63 (all ones or zero) */
	valu2(s, ISA_V_ASHRREV_I64, sa, cst(63), n);
	valu2(s, ISA_V_ASHRREV_I64, sb, cst(63), d);
	Val xs[2] = {n, d}, ss[2] = {sa, sb}, ms[2] = {an, ad};
	for (int i = 0; i < 2; i++) {
		Val t = add64(s, xs[i], ss[i], false);
		valu2(s, ISA_V_XOR_B32, lo32(ms[i]), lo32(t), lo32(ss[i]))->flags |= MI_DEFALL;
		valu2(s, ISA_V_XOR_B32, hi32(ms[i]), hi32(t), lo32(ss[i]));
	}
	Val q, r;
	udivrem64(s, an, ad, &q, &r);
	Val res = rem ? r : q, sg = sa, x = vtmp2(s);
	if (!rem) { /* the quotient's sign: sa ^ sb; the remainder's is the numerator's */
		sg = vtmp2(s);
		valu2(s, ISA_V_XOR_B32, lo32(sg), lo32(sa), lo32(sb))->flags |= MI_DEFALL;
		valu2(s, ISA_V_XOR_B32, hi32(sg), hi32(sa), hi32(sb));
	}
	valu2(s, ISA_V_XOR_B32, lo32(x), lo32(res), lo32(sg))->flags |= MI_DEFALL;
	valu2(s, ISA_V_XOR_B32, hi32(x), hi32(res), lo32(sg));
	sel_add64(s, dst_of(s, in->dst, 0, 2), x, sg, true, false);
}
