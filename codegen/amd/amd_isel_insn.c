/* amd_isel_insn.c — instruction selection (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- instruction selection --------------------------------------------- */

static int log2_exact(int64_t v)
{
	if (v <= 0 || (v & (v - 1)))
		return -1;
	int k = 0;
	while ((1ll << k) < v)
		k++;
	return k;
}

static const unsigned vcmp_ops[][6] = {
	/* EQ, NE, LT, LE, GT, GE */
	{ISA_V_CMP_EQ_I32, ISA_V_CMP_NE_I32, ISA_V_CMP_LT_I32, ISA_V_CMP_LE_I32, ISA_V_CMP_GT_I32, ISA_V_CMP_GE_I32},
	{ISA_V_CMP_EQ_U32, ISA_V_CMP_NE_U32, ISA_V_CMP_LT_U32, ISA_V_CMP_LE_U32, ISA_V_CMP_GT_U32, ISA_V_CMP_GE_U32},
	{ISA_V_CMP_EQ_F32, ISA_V_CMP_NEQ_F32, ISA_V_CMP_LT_F32, ISA_V_CMP_LE_F32, ISA_V_CMP_GT_F32, ISA_V_CMP_GE_F32},
	{ISA_V_CMP_EQ_F64, ISA_V_CMP_NEQ_F64, ISA_V_CMP_LT_F64, ISA_V_CMP_LE_F64, ISA_V_CMP_GT_F64, ISA_V_CMP_GE_F64},
};
static const unsigned scmp_ops[][6] = {
	{ISA_S_CMP_EQ_I32, ISA_S_CMP_LG_I32, ISA_S_CMP_LT_I32, ISA_S_CMP_LE_I32, ISA_S_CMP_GT_I32, ISA_S_CMP_GE_I32},
	{ISA_S_CMP_EQ_U32, ISA_S_CMP_LG_U32, ISA_S_CMP_LT_U32, ISA_S_CMP_LE_U32, ISA_S_CMP_GT_U32, ISA_S_CMP_GE_U32},
};

/* mask = all-ones if SCC else 0 */
void scc_to_mask(Isel *s, int mask_vreg)
{
	Val d = reg(mask_vreg, 0, s->lm);
	MInst *mi = emit(s, lmop(s, ISA_S_CSELECT_B32, ISA_S_CSELECT_B64), 1);
	put(s, mi, 0, d, ISA_TY_B32);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0xffffffffu));
	mi_phys(mi, 2, isa_const_u32(ISA_TY_B32, 0));
}

/* SCC = (mask != 0) */
void mask_to_scc(Isel *s, Val m)
{
	MInst *mi = emit(s, s->w64 ? ISA_S_CMP_LG_U64 : ISA_S_CMP_LG_U32, 0);
	put(s, mi, 0, m, ISA_TY_B32);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
}

void sel_setp(Isel *s, const SInst *in)
{
	int t = in->type;
	Val d = dst_of(s, in->dst, 0, s->lm);
	if (s->uni[in->dst] && t != DT_I64) {
		unsigned op = scmp_ops[t == DT_U32][in->sub];
		Val src[2] = {opnd(s, in->a, 0), opnd(s, in->b, 0)};
		salu(s, op, 0, NULL, 2, src);
		scc_to_mask(s, d.vreg);
		return;
	}
	if (s->uni[in->dst]) { /* i64 eq/ne */
		Val src[2] = {opnd_all(s, in->a), opnd_all(s, in->b)}; /* constants materialized */
		salu(s, in->sub == CMP_EQ ? ISA_S_CMP_EQ_U64 : ISA_S_CMP_LG_U64, 0, NULL, 2, src);
		scc_to_mask(s, d.vreg);
		return;
	}
	int row;
	if (t == DT_F32)
		row = 2;
	else if (t == DT_F64)
		row = 3;
	else if (t == DT_U32 || t == DT_U8)
		row = 1;
	else if (t == DT_I64) {
		/* the table has ==, <, > on i64: != <= >= are their negations */
		static const unsigned i64ops[6] = {ISA_V_CMP_EQ_I64, ISA_V_CMP_EQ_I64, ISA_V_CMP_LT_I64, ISA_V_CMP_GT_I64,
						   ISA_V_CMP_GT_I64, ISA_V_CMP_LT_I64};
		bool neg = in->sub == CMP_NE || in->sub == CMP_LE || in->sub == CMP_GE;
		Val m = neg ? reg(newv(s, MR_S, s->lm), 0, s->lm) : d;
		valu2(s, i64ops[in->sub], m, opnd_all(s, in->a), opnd_all(s, in->b));
		if (neg) {
			MInst *mi = emit(s, lmop(s, ISA_S_NOT_B32, ISA_S_NOT_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			put(s, mi, 1, m, ISA_TY_B32);
		}
		return;
	} else
		row = 0;
	if (row == 3) {
		valu2(s, vcmp_ops[3][in->sub], d, opnd_all(s, in->a), opnd_all(s, in->b));
		return;
	}
	valu2(s, vcmp_ops[row][in->sub], d, opnd(s, in->a, 0), opnd(s, in->b, 0));
}

/* IEEE f32 division, LLVM's sequence (f32 denormals are kept, so no mode
 * switch): v_div_scale scales numerator and denominator away from the
 * subnormal and overflow ranges (and sets vcc where the quotient must be
 * scaled back), a reciprocal with two Newton steps on it and two on the
 * quotient, v_div_fmas applies the last step and the post-scale, and
 * v_div_fixup gives the special cases (x/0, x/inf, 0/0, NaN).  vcc is
 * written only here (the allocator never hands it out), and nothing between
 * the second v_div_scale and v_div_fmas writes it; the hazard pass adds the
 * wait states gfx9 needs between them. */
static void sel_fdiv(Isel *s, Val d, Val a, Val b)
{
	/* v_div_fixup reads the original operands; VOP3 on gfx9 takes no literal */
	if (a.kind == VK_CONST && !is_inline(ISA_TY_F32, a.bits) && !s->gfx11)
		a = to_vgpr(s, a);
	if (b.kind == VK_CONST && !is_inline(ISA_TY_F32, b.bits) && !s->gfx11)
		b = to_vgpr(s, b);
	Val ds = vtmp(s), ns = vtmp(s), r = vtmp(s), t = vtmp(s), r2 = vtmp(s), q = vtmp(s), e = vtmp(s);
	Val q2 = vtmp(s), e2 = vtmp(s), f = vtmp(s);
	IsaOperand vcc = isa_special(ISA_SP_VCC_LO, s->lm);
	Val defs[2] = {ds, ds}, src[3] = {b, b, a}; /* defs[1]: a placeholder for vcc */
	mi_phys(valu(s, ISA_V_DIV_SCALE_F32, 2, defs, 3, src), 1, vcc);
	defs[0] = ns, src[0] = a;
	mi_phys(valu(s, ISA_V_DIV_SCALE_F32, 2, defs, 3, src), 1, vcc);
	valu1(s, ISA_V_RCP_F32, r, ds);
	valu3(s, ISA_V_FMA_F32, t, ds, r, cst(0x3f800000u))->in.mod.neg = 1; /* 1 - d*r */
	valu3(s, ISA_V_FMA_F32, r2, t, r, r);
	valu2(s, ISA_V_MUL_F32, q, ns, r2);
	valu3(s, ISA_V_FMA_F32, e, ds, q, ns)->in.mod.neg = 1; /* n - d*q */
	valu3(s, ISA_V_FMA_F32, q2, e, r2, q);
	valu3(s, ISA_V_FMA_F32, e2, ds, q2, ns)->in.mod.neg = 1;
	valu3(s, ISA_V_DIV_FMAS_F32, f, e2, r2, q2);
	valu3(s, ISA_V_DIV_FIXUP_F32, d, f, b, a);
}

/* A 64-bit source of v_lshl_add_u64.  Constants here are zero-extended
 * 32-bit values: only 0..64 are inline as such (a 64-bit inline -1..-16 would
 * sign-extend, a float constant would mean the f64), and gfx9 VOP3 takes no
 * literal, so the rest go to a VGPR pair. */
static Val add64_src(Isel *s, Val v)
{
	if (v.kind != VK_CONST)
		return v;
	if (v.bits <= 64)
		return v;
	v.count = 2; /* to_vgpr: low word = bits, high word = 0 */
	return to_vgpr(s, v);
}

/* 64-bit integer ops on VGPRs. */
void sel_add64(Isel *s, Val d, Val a, Val b, bool sub, bool uni)
{
	if (uni) {
		Val lo = reg(d.vreg, d.sub, 1), hi = reg(d.vreg, d.sub + 1, 1);
		Val al = a.kind == VK_CONST ? cst(a.bits) : reg(a.vreg, a.sub, 1);
		Val ah = a.kind == VK_CONST ? cst(0) : reg(a.vreg, a.sub + 1, 1);
		Val bl = b.kind == VK_CONST ? cst(b.bits) : reg(b.vreg, b.sub, 1);
		Val bh = b.kind == VK_CONST ? cst(0) : reg(b.vreg, b.sub + 1, 1);
		MInst *mi = salu2(s, sub ? ISA_S_SUB_U32 : ISA_S_ADD_U32, lo, al, bl);
		mi->flags |= MI_DEFALL;
		salu2(s, sub ? ISA_S_SUBB_U32 : ISA_S_ADDC_U32, hi, ah, bh);
		return;
	}
	/* gfx942: one v_lshl_add_u64 (shift 0) instead of an add/addc carry
	 * chain; it writes no carry SGPR, so no VALU-writes-SGPR hazard nops. */
	if (!sub && s->it == TA_TARGET_GFX942) {
		Val src[3] = {add64_src(s, a), cst(0), add64_src(s, b)};
		MInst *mi = valu(s, ISA_V_LSHL_ADD_U64, 1, &d, 3, src);
		mi->flags |= MI_DEFALL;
		return;
	}
	int c = newv(s, MR_S, s->lm);
	Val defs[2] = {reg(d.vreg, d.sub, 1), reg(c, 0, s->lm)};
	Val src[3] = {a.kind == VK_CONST ? cst(a.bits) : reg(a.vreg, a.sub, 1),
		      b.kind == VK_CONST ? cst(b.bits) : reg(b.vreg, b.sub, 1)};
	MInst *mi = valu(s, sub ? ISA_V_SUB_CO_U32 : ISA_V_ADD_CO_U32, 2, defs, 2, src);
	mi->flags |= MI_DEFALL;
	int c2 = newv(s, MR_S, s->lm);
	Val defs2[2] = {reg(d.vreg, d.sub + 1, 1), reg(c2, 0, s->lm)};
	Val src2[3] = {a.kind == VK_CONST ? cst(0) : reg(a.vreg, a.sub + 1, 1),
		       b.kind == VK_CONST ? cst(0) : reg(b.vreg, b.sub + 1, 1), reg(c, 0, s->lm)};
	/* carry-in and sources: the bus limit check in valu moves SGPRs. */
	for (int k = 0; k < 2; k++)
		if (vcls(s, src2[k]) == MR_S || (src2[k].kind == VK_CONST && !is_inline(ISA_TY_B32, src2[k].bits)))
			src2[k] = to_vgpr(s, src2[k]);
	MInst *m2 = valu(s, sub ? ISA_V_SUBB_CO_U32 : ISA_V_ADDC_CO_U32, 2, defs2, 3, src2);
	m2->flags |= MI_EARLY;
}

/* gfx942, divergent d = x + o where x = y * 2^k or y << k (k = 1..4, x and
 * y defined once, unguarded, with no label from y's definition to here, so
 * y still holds the value x was made from): one v_lshl_add_u64 d, y, k, o.
 * The scaled address of a load is then one instruction; amd_opt drops the
 * shift when nothing else reads x. */
static bool sel_lshl_add64(Isel *s, const SInst *in, Val d)
{
	const SInst *code = s->sf->code.data;
	int at = (int)(in - code);
	for (int side = 0; side < 2; side++) {
		int x = side ? in->b : in->a, o = side ? in->a : in->b;
		if (x < 0 || o < 0 || s->ndefs[x] != 1 || s->isconst[x])
			continue;
		const SInst *m = &code[s->def1[x]];
		if (m->guard >= 0 || m->type != DT_I64 || m->dst != x || (m->op != SI_MUL && m->op != SI_SHL))
			continue;
		int y = -1, k = -1;
		for (int j = 0; j < 2 && k < 0; j++) {
			int cr = j ? m->a : m->b;
			if (cr < 0 || !s->isconst[cr])
				continue;
			if (m->op == SI_MUL)
				k = log2_exact(s->cval[cr]), y = j ? m->b : m->a;
			else if (j == 0)
				k = s->cval[cr] >= 0 && s->cval[cr] < 64 ? (int)s->cval[cr] : -1, y = m->a;
		}
		if (k < 1 || k > 4 || y < 0 || s->ndefs[y] != 1 || s->isconst[y] || simt_size(s, y) != 2 ||
		    s->def1[y] >= s->def1[x] || s->label_pos[s->next_label[s->def1[y]]] < at)
			continue;
		Val src[3] = {opnd_all(s, y), cst((uint32_t)k), add64_src(s, opnd_all(s, o))};
		MInst *mi = valu(s, ISA_V_LSHL_ADD_U64, 1, &d, 3, src);
		mi->flags |= MI_DEFALL;
		return true;
	}
	return false;
}

static void sel_mul64(Isel *s, const SInst *in, Val d)
{
	/* By a power-of-two constant (element sizes): a shift. */
	for (int side = 0; side < 2; side++) {
		int cr = side ? in->a : in->b, xr = side ? in->b : in->a;
		int k = s->isconst[cr] ? log2_exact(s->cval[cr]) : -1;
		if (k < 0 || k > 31)
			continue;
		if (s->uni[in->dst])
			salu2(s, ISA_S_LSHL_B64, d, opnd_all(s, xr), cst((uint32_t)k));
		else
			valu2(s, ISA_V_LSHLREV_B64, d, cst((uint32_t)k), opnd_all(s, xr));
		return;
	}
	Val a = opnd_all(s, in->a), b = opnd_all(s, in->b);
	int dv = d.vreg;
	bool alias = (a.kind == VK_REG && a.vreg == dv) || (b.kind == VK_REG && b.vreg == dv);
	if (s->uni[in->dst]) {
		int t = alias ? newv(s, MR_S, 2) : dv;
		Val al = a.kind == VK_CONST ? a : reg(a.vreg, 0, 1), ah = a.kind == VK_CONST ? cst(0) : reg(a.vreg, 1, 1);
		Val bl = b.kind == VK_CONST ? b : reg(b.vreg, 0, 1), bh = b.kind == VK_CONST ? cst(0) : reg(b.vreg, 1, 1);
		Val t1 = reg(newv(s, MR_S, 1), 0, 1), t2 = reg(newv(s, MR_S, 1), 0, 1);
		salu2(s, ISA_S_MUL_HI_U32, t1, al, bl);
		salu2(s, ISA_S_MUL_I32, t2, al, bh);
		salu2(s, ISA_S_ADD_U32, t1, t1, t2);
		salu2(s, ISA_S_MUL_I32, t2, ah, bl);
		MInst *mi = salu2(s, ISA_S_MUL_I32, reg(t, 0, 1), al, bl);
		mi->flags |= MI_DEFALL;
		salu2(s, ISA_S_ADD_U32, reg(t, 1, 1), t1, t2);
		if (alias) {
			MInst *c = emit(s, MOP_COPY, 1);
			mi_vreg(c, 0, s->mf, dv, 0, 2);
			mi_vreg(c, 1, s->mf, t, 0, 2);
		}
		return;
	}
	int t = alias ? newv(s, MR_V, 2) : dv;
	Val al = a.kind == VK_CONST ? a : reg(a.vreg, 0, 1), ah = a.kind == VK_CONST ? cst(0) : reg(a.vreg, 1, 1);
	Val bl = b.kind == VK_CONST ? b : reg(b.vreg, 0, 1), bh = b.kind == VK_CONST ? cst(0) : reg(b.vreg, 1, 1);
	/* lo*lo as two 32-bit halves, then add the cross products to the high
	 * half (v_mad_u64_u32 would also need a carry-out SGPR pair). */
	MInst *lo = valu2(s, ISA_V_MUL_LO_U32, reg(t, 0, 1), al, bl);
	lo->flags |= MI_DEFALL;
	valu2(s, ISA_V_MUL_HI_U32, reg(t, 1, 1), al, bl);
	bool ah0 = a.kind == VK_CONST && a.count == 1, bh0 = b.kind == VK_CONST && b.count == 1;
	if (!bh0) {
		Val x = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_MUL_LO_U32, x, al, bh);
		valu2(s, ISA_V_ADD_U32, reg(t, 1, 1), reg(t, 1, 1), x);
	}
	if (!ah0) {
		Val x = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_MUL_LO_U32, x, ah, bl);
		valu2(s, ISA_V_ADD_U32, reg(t, 1, 1), reg(t, 1, 1), x);
	}
	if (alias) {
		MInst *cp = emit(s, MOP_COPY, 1);
		mi_vreg(cp, 0, s->mf, dv, 0, 2);
		mi_vreg(cp, 1, s->mf, t, 0, 2);
	}
}

/* Integer division/remainder by a power-of-two constant. */
static void sel_divrem_pow2(Isel *s, const SInst *in, int k)
{
	bool uni = s->uni[in->dst], sgn = in->type == DT_I32, rem = in->op == SI_REM;
	Val d = dst_of(s, in->dst, 0, 1), a = opnd(s, in->a, 0);
	int cls = uni ? MR_S : MR_V;
	if (a.kind == VK_CONST) {
		a = uni ? to_sgpr_const(s, a.bits) : to_vgpr(s, a);
	}
	if (!sgn) {
		if (rem) {
			uni ? salu2(s, ISA_S_AND_B32, d, a, cst((1u << k) - 1))
			    : valu2(s, ISA_V_AND_B32, d, cst((1u << k) - 1), a);
		} else {
			uni ? salu2(s, ISA_S_LSHR_B32, d, a, cst((uint32_t)k)) : valu2(s, ISA_V_LSHRREV_B32, d, cst((uint32_t)k), a);
		}
		return;
	}
	/* signed: bias = (a >> 31) >>> (32 - k); q = (a + bias) >> k;
	 * r = a - (q << k) */
	Val bias = reg(newv(s, cls, 1), 0, 1), t = reg(newv(s, cls, 1), 0, 1);
	if (uni) {
		salu2(s, ISA_S_ASHR_I32, bias, a, cst(31));
		salu2(s, ISA_S_LSHR_B32, bias, bias, cst((uint32_t)(32 - k)));
		salu2(s, ISA_S_ADD_U32, t, a, bias);
		if (!rem) {
			salu2(s, ISA_S_ASHR_I32, d, t, cst((uint32_t)k));
		} else {
			salu2(s, ISA_S_AND_B32, t, t, cst(~((1u << k) - 1)));
			salu2(s, ISA_S_SUB_U32, d, a, t);
		}
	} else {
		valu2(s, ISA_V_ASHRREV_I32, bias, cst(31), a);
		valu2(s, ISA_V_LSHRREV_B32, bias, cst((uint32_t)(32 - k)), bias);
		valu2(s, ISA_V_ADD_U32, t, a, bias);
		if (!rem) {
			valu2(s, ISA_V_ASHRREV_I32, d, cst((uint32_t)k), t);
		} else {
			valu2(s, ISA_V_AND_B32, t, cst(~((1u << k) - 1)), t);
			valu2(s, ISA_V_SUB_U32, d, a, t);
		}
	}
}

Val vtmp(Isel *s)
{
	return reg(newv(s, MR_V, 1), 0, 1);
}

/* c ? x : y per lane (c a lane mask vreg). */
static void vsel(Isel *s, Val d, Val c, Val x, Val y)
{
	Val src[3] = {y, x, c};
	valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, src);
}

/* 32-bit integer division/remainder by a runtime value (VALU): reciprocal
 * estimate of 2^32/d in float, one Newton step in integers, the quotient
 * from mul_hi, then at most two corrections.  Signed: on magnitudes, with
 * the signs applied afterwards (truncating, like C). */
static void sel_divrem_general(Isel *s, const SInst *in)
{
	bool sgn = in->type == DT_I32, rem = in->op == SI_REM;
	Val n = to_vgpr(s, opnd(s, in->a, 0)), d = to_vgpr(s, opnd(s, in->b, 0));
	Val sa = {0}, sb = {0};
	if (sgn) {
		sa = vtmp(s), sb = vtmp(s);
		Val an = vtmp(s), ad = vtmp(s);
		valu2(s, ISA_V_ASHRREV_I32, sa, cst(31), n);
		valu2(s, ISA_V_ASHRREV_I32, sb, cst(31), d);
		valu2(s, ISA_V_ADD_U32, an, n, sa);
		valu2(s, ISA_V_XOR_B32, an, an, sa);
		valu2(s, ISA_V_ADD_U32, ad, d, sb);
		valu2(s, ISA_V_XOR_B32, ad, ad, sb);
		n = an, d = ad;
	}
	Val z = vtmp(s), t = vtmp(s), q = vtmp(s), r = vtmp(s);
	valu1(s, ISA_V_CVT_F32_U32, t, d);
	valu1(s, ISA_V_RCP_IFLAG_F32, t, t);
	valu2(s, ISA_V_MUL_F32, t, cst(0x4f7ffffeu), t); /* just under 2^32 */
	valu1(s, ISA_V_CVT_U32_F32, z, t);
	valu2(s, ISA_V_SUB_U32, t, cst(0), d);
	valu2(s, ISA_V_MUL_LO_U32, t, t, z);
	valu2(s, ISA_V_MUL_HI_U32, t, z, t);
	valu2(s, ISA_V_ADD_U32, z, z, t);
	valu2(s, ISA_V_MUL_HI_U32, q, n, z);
	valu2(s, ISA_V_MUL_LO_U32, t, q, d);
	valu2(s, ISA_V_SUB_U32, r, n, t);
	for (int k = 0; k < 2; k++) {
		Val c = reg(newv(s, MR_S, s->lm), 0, s->lm), q1 = vtmp(s), r1 = vtmp(s);
		valu2(s, ISA_V_CMP_GE_U32, c, r, d);
		valu2(s, ISA_V_ADD_U32, q1, q, cst(1));
		valu2(s, ISA_V_SUB_U32, r1, r, d);
		vsel(s, q, c, q1, q);
		vsel(s, r, c, r1, r);
	}
	Val res = rem ? r : q, dst = dst_of(s, in->dst, 0, 1);
	if (!sgn) {
		valu1(s, ISA_V_MOV_B32, dst, res);
		return;
	}
	Val sg = rem ? sa : vtmp(s);
	if (!rem)
		valu2(s, ISA_V_XOR_B32, sg, sa, sb);
	valu2(s, ISA_V_XOR_B32, res, res, sg);
	valu2(s, ISA_V_SUB_U32, dst, res, sg);
}

/* d = min/max(a, b) of i64 values (two dwords each). */
void sel_minmax64(Isel *s, Val d, Val a, Val b, bool max)
{
	Val m = reg(newv(s, MR_S, s->lm), 0, s->lm);
	valu2(s, max ? ISA_V_CMP_GT_I64 : ISA_V_CMP_LT_I64, m, a, b);
	for (int k = 0; k < 2; k++) {
		Val dk = reg(d.vreg, d.sub + k, 1);
		Val ak = a.kind == VK_CONST ? a : reg(a.vreg, a.sub + k, 1), bk = b.kind == VK_CONST ? b : reg(b.vreg, b.sub + k, 1);
		Val src[3] = {bk, ak, m};
		MInst *mi = valu(s, ISA_V_CNDMASK_B32, 1, &dk, 3, src);
		if (!k)
			mi->flags |= MI_DEFALL;
	}
}

/* Binary integer/float arithmetic (32-bit). */
void sel_arith(Isel *s, const SInst *in)
{
	int t = in->type;
	bool fl = t == DT_F32, uni = s->uni[in->dst], u = t == DT_U32;
	if (t == DT_F64) { /* IEEE v_add/v_mul_f64; a - b is a + (-b) by the neg modifier */
		Val d = dst_of(s, in->dst, 0, 2), a = opnd_all(s, in->a), b = in->b >= 0 ? opnd_all(s, in->b) : cst(0);
		switch (in->op) {
		case SI_ADD: valu2(s, ISA_V_ADD_F64, d, a, b); return;
		case SI_SUB: valu2(s, ISA_V_ADD_F64, d, a, b)->in.mod.neg = 2; return;
		case SI_MUL: valu2(s, ISA_V_MUL_F64, d, a, b); return;
		case SI_MAX: valu2(s, ISA_V_MAX_F64, d, a, b); return;
		case SI_MIN: valu2(s, ISA_V_MIN_F64, d, a, b); return;
		case SI_DIV: sel_fdiv64(s, d, a, b); return;
		default: unsupported(s, "this f64 operation"); return;
		}
	}
	if (t == DT_F16 || t == DT_BF16) {
		unsupported(s, "f16 arithmetic in registers");
		return;
	}
	if (t == DT_I64) {
		Val d = dst_of(s, in->dst, 0, 2);
		switch (in->op) {
		case SI_ADD: case SI_SUB: {
			Val a = opnd_all(s, in->a), b = opnd_all(s, in->b);
			bool alias = (a.kind == VK_REG && a.vreg == d.vreg) || (b.kind == VK_REG && b.vreg == d.vreg);
			(void)alias; /* lo is written first and read only through a.lo/b.lo: safe */
			if (in->op == SI_ADD && !uni && s->it == TA_TARGET_GFX942 && sel_lshl_add64(s, in, d))
				return;
			sel_add64(s, d, a, b, in->op == SI_SUB, uni);
			return;
		}
		case SI_MUL: sel_mul64(s, in, d); return;
		case SI_MIN: case SI_MAX: /* vector only (salu_capable): compare, then select each half */
			sel_minmax64(s, d, opnd_all(s, in->a), opnd_all(s, in->b), in->op == SI_MAX);
			return;
		case SI_DIV: case SI_REM: sel_divrem64(s, in); return;
		case SI_AND: case SI_OR: case SI_XOR: {
			unsigned sop = in->op == SI_AND ? ISA_S_AND_B64 : in->op == SI_OR ? ISA_S_OR_B64 : ISA_S_XOR_B64;
			unsigned vop = in->op == SI_AND ? ISA_V_AND_B32 : in->op == SI_OR ? ISA_V_OR_B32 : ISA_V_XOR_B32;
			if (uni) {
				salu2(s, sop, d, opnd_all(s, in->a), opnd_all(s, in->b));
				return;
			}
			for (int k = 0; k < 2; k++) {
				MInst *mi = valu2(s, vop, dst_of(s, in->dst, k, 1), opnd(s, in->a, k), opnd(s, in->b, k));
				if (!k)
					mi->flags |= MI_DEFALL;
			}
			return;
		}
		case SI_SHL: case SI_SHR: {
			Val amt = opnd(s, in->b, 0);
			if (uni) {
				unsigned op = in->op == SI_SHL ? ISA_S_LSHL_B64 : ISA_S_ASHR_I64;
				salu2(s, op, d, opnd_all(s, in->a), amt);
				return;
			}
			unsigned op = in->op == SI_SHL ? ISA_V_LSHLREV_B64 : ISA_V_ASHRREV_I64;
			valu2(s, op, d, amt, opnd_all(s, in->a));
			return;
		}
		default:
			unsupported(s, "this 64-bit integer operation");
			return;
		}
	}
	Val d = dst_of(s, in->dst, 0, 1), a = opnd(s, in->a, 0), b = in->b >= 0 ? opnd(s, in->b, 0) : cst(0);
	if ((in->op == SI_DIV || in->op == SI_REM) && !fl) {
		int k = in->b >= 0 && s->isconst[in->b] ? log2_exact(s->cval[in->b]) : -1;
		if (k < 0) {
			if (t != DT_I32 && t != DT_U32) {
				unsupported(s, "division of this integer type");
				return;
			}
			sel_divrem_general(s, in);
			return;
		}
		if (k == 0) {
			if (in->op == SI_DIV)
				uni ? (void)salu1(s, ISA_S_MOV_B32, d, a) : (void)valu1(s, ISA_V_MOV_B32, d, a);
			else
				uni ? (void)salu1(s, ISA_S_MOV_B32, d, cst(0)) : (void)valu1(s, ISA_V_MOV_B32, d, cst(0));
			return;
		}
		sel_divrem_pow2(s, in, k);
		return;
	}
	if (uni) {
		unsigned op = 0;
		switch (in->op) {
		case SI_ADD: op = ISA_S_ADD_U32; break;
		case SI_SUB: op = ISA_S_SUB_U32; break;
		case SI_MUL: op = ISA_S_MUL_I32; break;
		case SI_AND: op = t == DT_BOOL ? lmop(s, ISA_S_AND_B32, ISA_S_AND_B64) : ISA_S_AND_B32; break;
		case SI_OR: op = t == DT_BOOL ? lmop(s, ISA_S_OR_B32, ISA_S_OR_B64) : ISA_S_OR_B32; break;
		case SI_XOR: op = t == DT_BOOL ? lmop(s, ISA_S_XOR_B32, ISA_S_XOR_B64) : ISA_S_XOR_B32; break;
		case SI_SHL: op = ISA_S_LSHL_B32; break;
		case SI_SHR: op = u ? ISA_S_LSHR_B32 : ISA_S_ASHR_I32; break;
		case SI_MIN: op = u ? ISA_S_MIN_U32 : ISA_S_MIN_I32; break;
		case SI_MAX: op = u ? ISA_S_MAX_U32 : ISA_S_MAX_I32; break;
		default: unsupported(s, "this scalar operation"); return;
		}
		salu2(s, op, d, a, b);
		return;
	}
	switch (in->op) {
	case SI_ADD: valu2(s, fl ? ISA_V_ADD_F32 : ISA_V_ADD_U32, d, a, b); return;
	case SI_SUB: valu2(s, fl ? ISA_V_SUB_F32 : ISA_V_SUB_U32, d, a, b); return;
	case SI_MUL: valu2(s, fl ? ISA_V_MUL_F32 : ISA_V_MUL_LO_U32, d, a, b); return;
	case SI_DIV: sel_fdiv(s, d, a, b); return;
	case SI_MIN: valu2(s, fl ? ISA_V_MIN_F32 : u ? ISA_V_MIN_U32 : ISA_V_MIN_I32, d, a, b); return;
	case SI_MAX: valu2(s, fl ? ISA_V_MAX_F32 : u ? ISA_V_MAX_U32 : ISA_V_MAX_I32, d, a, b); return;
	case SI_AND: valu2(s, ISA_V_AND_B32, d, a, b); return;
	case SI_OR: valu2(s, ISA_V_OR_B32, d, a, b); return;
	case SI_XOR: valu2(s, ISA_V_XOR_B32, d, a, b); return;
	case SI_SHL: valu2(s, ISA_V_LSHLREV_B32, d, b, a); return;
	case SI_SHR: valu2(s, u ? ISA_V_LSHRREV_B32 : ISA_V_ASHRREV_I32, d, b, a); return;
	default: unsupported(s, "this vector operation"); return;
	}
}
