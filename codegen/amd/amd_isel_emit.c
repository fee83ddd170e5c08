/* amd_isel_emit.c — SALU/VALU emission with operand legalization, SIMT operands (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- SALU / VALU emission with operand legalization -------------------- */

/* v_mov_b32 of a value into a fresh VGPR (literals, extra SGPRs). */
Val to_vgpr(Isel *s, Val v)
{
	if (vcls(s, v) == MR_V)
		return v;
	Val out = reg(newv(s, MR_V, v.count), 0, v.count);
	for (int k = 0; k < v.count; k++) {
		MInst *mi = emit(s, ISA_V_MOV_B32, 1);
		mi_vreg(mi, 0, s->mf, out.vreg, k, 1);
		if (v.kind == VK_CONST)
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, k ? 0 : v.bits));
		else
			mi_vreg(mi, 1, s->mf, v.vreg, v.sub + k, 1);
	}
	return out;
}

Val to_sgpr_const(Isel *s, uint32_t bits)
{
	Val out = reg(newv(s, MR_S, 1), 0, 1);
	MInst *mi = emit(s, ISA_S_MOV_B32, 1);
	mi_vreg(mi, 0, s->mf, out.vreg, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, bits));
	return out;
}

/* VALU instruction: defs then sources (Val).  Picks e32/e64, moves
 * literals and extra SGPRs (constant-bus limit: 1 on gfx9, 2 on gfx11)
 * into VGPRs.  Returns the MInst for extra flags. */
MInst *valu(Isel *s, unsigned op, int ndef, const Val *defs, int nsrc, Val *src)
{
	IsaType ty = optype(op);
	int fmt = isa_op_fmt(s->it, op);
	int bus_limit = s->gfx11 ? 2 : 1;
	bool carry = op == ISA_V_CNDMASK_B32 || op == ISA_V_ADDC_CO_U32 || op == ISA_V_SUBB_CO_U32 ||
		     op == ISA_V_ADD_CO_U32 || op == ISA_V_SUB_CO_U32;
	/* e32 (VOP1/VOP2) only when src1 is a VGPR; VOPC and the carry ops
	 * always use e64 so their lane masks can be any SGPRs, not vcc. */
	bool e64 = fmt == ISA_FMT_VOPC || carry ||
		   (fmt == ISA_FMT_VOP2 && nsrc >= 2 && vcls(s, src[1]) != MR_V);
	/* gfx11 e32 encodes 16-bit operands in 7 bits (v0-v127): use e64. */
	if (s->gfx11 && (ty == ISA_TY_F16 || ty == ISA_TY_B16 || op == ISA_V_CVT_F32_F16 || op == ISA_V_CVT_F16_F32))
		e64 = true;
	bool vop3 = e64 || fmt == ISA_FMT_VOP3 || fmt == ISA_FMT_VOP3P;
	int32_t sg[8];
	int nsg = 0, nlit = 0;
	/* Lane-mask sources (cndmask, addc carry-in) are SGPRs by nature. */
	if (carry && nsrc && vcls(s, src[nsrc - 1]) == MR_S && src[nsrc - 1].count == s->lm)
		sg[nsg++] = src[nsrc - 1].vreg;
	for (int i = 0; i < nsrc; i++) {
		if (carry && i == nsrc - 1 && nsg)
			continue;
		if (src[i].kind == VK_CONST) {
			if (is_inline(ty, src[i].bits))
				continue;
			/* A literal: src0 of e32, or (gfx11) any VOP3 slot, one per
			 * instruction, and it uses the constant bus. */
			bool ok = vop3 ? s->gfx11 && fmt != ISA_FMT_VOP3P : i == 0;
			if (ok && nlit == 0 && nsg < bus_limit) {
				nlit++, nsg++;
				continue;
			}
			src[i] = to_vgpr(s, src[i]);
		} else if (vcls(s, src[i]) == MR_S) {
			bool seen = false;
			for (int j = 0; j < nsg; j++)
				seen |= sg[j] == src[i].vreg;
			if (seen)
				continue;
			if (nsg < bus_limit && !(!vop3 && i == 1)) {
				sg[nsg++] = src[i].vreg;
				continue;
			}
			src[i] = to_vgpr(s, src[i]);
		}
	}
	MInst *mi = emit(s, op, ndef);
	int k = 0;
	for (int i = 0; i < ndef; i++)
		put(s, mi, k++, defs[i], ty);
	for (int i = 0; i < nsrc; i++)
		put(s, mi, k++, src[i], ty);
	if (fmt == ISA_FMT_VOP1 || fmt == ISA_FMT_VOP2 || fmt == ISA_FMT_VOPC)
		mi->in.enc = e64 ? ISA_ENC_E64 : ISA_ENC_DEFAULT;
	return mi;
}

MInst *valu1(Isel *s, unsigned op, Val d, Val a)
{
	return valu(s, op, 1, &d, 1, &a);
}
MInst *valu2(Isel *s, unsigned op, Val d, Val a, Val b)
{
	Val src[2] = {a, b};
	return valu(s, op, 1, &d, 2, src);
}
MInst *valu3(Isel *s, unsigned op, Val d, Val a, Val b, Val c)
{
	Val src[3] = {a, b, c};
	return valu(s, op, 1, &d, 3, src);
}

/* SALU: at most one literal. */
MInst *salu(Isel *s, unsigned op, int ndef, const Val *defs, int nsrc, Val *src)
{
	IsaType ty = optype(op);
	int nlit = 0;
	for (int i = 0; i < nsrc; i++) {
		if (src[i].kind == VK_CONST && !is_inline(ty, src[i].bits) && src[i].count == 1) {
			if (nlit++)
				src[i] = to_sgpr_const(s, src[i].bits);
		}
	}
	MInst *mi = emit(s, op, ndef);
	int k = 0;
	for (int i = 0; i < ndef; i++)
		put(s, mi, k++, defs[i], ty);
	for (int i = 0; i < nsrc; i++)
		put(s, mi, k++, src[i], ty);
	return mi;
}
MInst *salu2(Isel *s, unsigned op, Val d, Val a, Val b)
{
	Val src[2] = {a, b};
	return salu(s, op, 1, &d, 2, src);
}
MInst *salu1(Isel *s, unsigned op, Val d, Val a)
{
	return salu(s, op, 1, &d, 1, &a);
}

/* Lane-mask ops (b32 in wave32, b64 in wave64). */
unsigned lmop(const Isel *s, unsigned op32, unsigned op64)
{
	return s->w64 ? op64 : op32;
}
IsaOperand exec_op(const Isel *s)
{
	return isa_special(ISA_SP_EXEC_LO, s->lm);
}

/* ---- SIMT operands ------------------------------------------------------ */

int simt_size(const Isel *s, int r)
{
	int vt = s->sf->regs.data[r];
	if (vt == VT_PRED)
		return s->lm;
	return vt == VT_I64 || vt == VT_F64 ? 2 : 1;
}

/* Operand dword k of SIMT register r (constants folded). */
Val opnd(Isel *s, int r, int k)
{
	if (s->isconst[r]) {
		uint64_t b = (uint64_t)s->cval[r];
		return cst(k ? (uint32_t)(b >> 32) : (uint32_t)b);
	}
	return reg(s->vr[r], s->vsub[r] + k, 1);
}
Val opnd_all(Isel *s, int r)
{
	if (s->isconst[r] && simt_size(s, r) == 1)
		return cst((uint32_t)s->cval[r]);
	if (s->isconst[r]) { /* 64-bit constant: materialize */
		int v = newv(s, s->uni[r] ? MR_S : MR_V, 2);
		for (int k = 0; k < 2; k++) {
			MInst *mi = emit(s, s->uni[r] ? ISA_S_MOV_B32 : ISA_V_MOV_B32, 1);
			mi_vreg(mi, 0, s->mf, v, k, 1);
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, (uint32_t)((uint64_t)s->cval[r] >> (32 * k))));
		}
		return reg(v, 0, 2);
	}
	return reg(s->vr[r], s->vsub[r], simt_size(s, r));
}
Val dst_of(Isel *s, int r, int k, int count)
{
	return reg(s->vr[r], s->vsub[r] + k, count);
}

/* SIMT registers r..r+n-1 as one MIR tuple, when they are dwords
 * [sub, sub + n) of one vreg (grouped by group_mma_tuples). */
bool is_tuple(const Isel *s, int r, int n)
{
	for (int k = 1; k < n; k++)
		if (s->vr[r + k] != s->vr[r] || s->vsub[r + k] != s->vsub[r] + k)
			return false;
	return !s->isconst[r];
}
