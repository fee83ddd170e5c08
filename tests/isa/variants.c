/* variants.c — representative instructions for every table entry on a target:
 * several operand/modifier variants per op, built through the public API.
 * Shared by the conformance test and tools/bench/bench_isa.c. */
#include <string.h>

#include "isa.h"
#include "isa_impl.h"
#include "variants.h"

static IsaOperand reg_for(ta_target t, unsigned role, int cnt, int var, int idx)
{
	int base = 2 + 4 * idx + (var & 1) * 40;
	int al = cnt >= 4 ? 4 : 2;
	int sbase = ((base + al - 1) / al) * al;
	switch (role) {
	case ISA_R_SD: case ISA_R_SS: case ISA_R_SB:
		if (cnt >= 8)
			return isa_sgpr(16 + (var & 1) * 32, cnt);
		return isa_sgpr(cnt == 1 ? base + 1 : sbase, cnt);
	case ISA_R_LM:
		return isa_special(ISA_SP_VCC_LO, cnt);
	case ISA_R_AD: case ISA_R_AS:
		return isa_agpr(cnt == 1 ? base + 1 : sbase, cnt);
	case ISA_R_RSRC:
		return isa_sgpr(8 + (var & 1) * 4, 4);
	default: {
		int vb = cnt == 1 ? base + 1 + (var & 2) * 50 : sbase + (var & 2) * 50;
		if (vb + cnt > 256)
			vb = 256 - cnt - (256 - cnt) % 2;
		if (ISA_TARGET(t) == TA_TARGET_GFX1100 && (var & 4) && cnt > 1)
			vb |= 1; /* gfx11 allows odd tuples */
		return isa_vgpr(vb, cnt);
	}
	}
}

/* Variant 7: the op's extra encoding (gfx9 SDWA, gfx11 VOP3 DPP) on top of
 * variant 0's operands. */
static int form_variant(ta_target t, unsigned op, IsaInsn *in)
{
	if (!isa_variant(t, op, 0, in))
		return 0;
	const IsaOpInfo *oi = &isa_ops[op];
	IsaFmt fmt = isa_op_fmt(t, op);
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100, g942 = ISA_TARGET(t) == TA_TARGET_GFX942;
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(t, op, sig);
	IsaType ty = (IsaType)oi->type;
	if (!g11) { /* gfx9 SDWA: every select off its default, source modifiers by type */
		if (!(oi->forms & (g942 ? ISA_FORM_SDWA942 : ISA_FORM_SDWA90A)))
			return 0;
		for (int i = 0; i < n; i++)
			if (in->ops[i].kind == ISA_K_LIT)
				return 0;
		int fp = ty == ISA_TY_F32 || ty == ISA_TY_F16;
		in->enc = ISA_ENC_SDWA;
		in->mod.src_sel[0] = (uint8_t)(1 + (op % 6));
		if (fmt != ISA_FMT_VOP1)
			in->mod.src_sel[1] = 5; /* WORD_0 */
		if (fmt != ISA_FMT_VOPC)
			in->mod.dst_sel = 6, in->mod.dst_unused = 1; /* WORD_1, UNUSED_PAD */
		if (op == ISA_V_CMP_CLASS_F32) /* src1 is the integer class mask */
			in->mod.neg = 1, in->mod.sext = 2;
		else if (fp && !(oi->flags & ISA_F_NOMODS))
			in->mod.neg = 1, in->mod.abs = fmt == ISA_FMT_VOP1 ? 0 : 2;
		else if (!fp)
			in->mod.sext = 1;
		if (fp && fmt != ISA_FMT_VOPC && !(oi->flags & ISA_F_NOMODS)) /* no omod on SDWA float -> int */
			in->mod.clamp = 1, in->mod.omod = ty == ISA_TY_F32 && !isa_cvt_kind(oi, t) ? 1 : 0;
		else if (isa_cvt_kind(oi, t) == 2) /* int -> float: clamp and omod, sext */
			in->mod.clamp = 1, in->mod.omod = 2;
		return 1;
	}
	{ /* gfx11 VOP3 DPP (_e64_dpp): DPP16 or DPP8 by opcode parity, src0/src1 VGPRs */
		if (!g11 || !(oi->forms & ISA_FORM_XDPP))
			return 0;
		for (int i = 0, k = 0; i < n; i++) {
			unsigned r = sig[i] >> 8;
			if (!(r == ISA_R_VS || r == ISA_R_VV || r == ISA_R_SS || (r == ISA_R_LM && i > 1)))
				continue;
			if (k++ < 2 && in->ops[i].kind != ISA_K_VGPR)
				in->ops[i] = isa_vgpr(20 + 2 * i, 1);
			if (in->ops[i].kind == ISA_K_LIT)
				return 0;
		}
		if (op & 1) {
			in->enc = ISA_ENC_E64_DPP8;
			in->mod.dpp8 = 0x053977 ^ (uint32_t)op;
		} else {
			in->enc = ISA_ENC_E64_DPP;
			in->mod.dpp_ctrl = (uint16_t)(0x121 + op % 15);
			in->mod.row_mask = 0x5, in->mod.bank_mask = 0xa, in->mod.bound_ctrl = 1;
		}
		in->mod.fi = (op >> 1) & 1;
		if ((ty == ISA_TY_F32 || ty == ISA_TY_F16) && fmt != ISA_FMT_VOP3P && !(oi->flags & ISA_F_NOMODS))
			in->mod.neg = 1;
		if (fmt == ISA_FMT_VOPC && (ty == ISA_TY_F32 || ty == ISA_TY_F16) && op != ISA_V_CMP_CLASS_F32)
			in->mod.clamp = 1;
		return 1;
	}
}

static IsaOperand ttmp(int n, int count)
{
	return isa_sgpr(ISA_TTMP_BASE + n, count);
}

/* Fills in the variant `var` of op; returns 0 if this variant doesn't apply. */
int isa_variant(ta_target t, unsigned op, int var, IsaInsn *in)
{
	if (!isa_op_exists(t, op))
		return 0;
	const IsaOpInfo *oi = &isa_ops[op];
	IsaFmt fmt = isa_op_fmt(t, op);
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100, g942 = ISA_TARGET(t) == TA_TARGET_GFX942;
	int w64 = ISA_IS_W64(t);
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(t, op, sig);
	if (var == 7)
		return form_variant(t, op, in);
	isa_insn_init(in, op);
	if (fmt == ISA_FMT_VOPD) {
		if (var > 1 || w64 || (oi->flags & ISA_F_VOPDY))
			return 0;
		/* X = op, Y = v_dual_mov_b32 or v_dual_add_nc_u32 (var 1). */
		in->op_y = var ? ISA_V_DUAL_ADD_NC_U32 : ISA_V_DUAL_MOV_B32;
		for (int i = 0; i < n; i++)
			in->ops[i] = (sig[i] >> 8) == ISA_R_K32 ? (IsaOperand){ISA_K_LIT, 1, 0, 0x41000000, 0, 0}
								: isa_vgpr(i == 0 ? 10 : i == 1 ? 21 : 32 + var, 1);
		if (var && n > 1)
			in->ops[1] = isa_const_u32(ISA_TY_F32, 0x3f800000);
		uint16_t sy[ISA_MAX_SIG];
		int ny = isa_sig(t, in->op_y, sy);
		for (int i = 0; i < ny; i++)
			in->ops[n + i] = isa_vgpr(i == 0 ? 7 : i == 1 ? 14 : 40, 1);
		in->nops = (uint8_t)(n + ny);
		return 1;
	}
	if (var > 5)
		return 0;
	int nsrc = 0;
	for (int i = 0; i < n; i++) {
		unsigned r = sig[i] >> 8, cnt = sig[i] & 0xff;
		IsaOperand *o = &in->ops[i];
		switch (r) {
		case ISA_R_K16: *o = isa_imm(var ? 0x8000 + var : 0x1234); break;
		case ISA_R_I16: *o = isa_imm(var); break;
		case ISA_R_LBL: *o = isa_imm(var ? -var * 3 : 4); break;
		case ISA_R_WAIT: {
			static const int vm[6] = {0, 63, 5, 0, 63, 2}, ex[6] = {0, 7, 7, 0, 0, 7},
					 lg[6] = {0, 0, 63, 15, 63, 1};
			*o = isa_imm(isa_waitcnt_encode(t, vm[var], ex[var], lg[var] > (g11 ? 63 : 15) ? 15 : lg[var]));
			break;
		}
		case ISA_R_DELAY: {
			static const int dv[6] = {1, 0x91, 0xb3, 0x102, 0x9, 0x5};
			*o = isa_imm(dv[var]);
			break;
		}
		case ISA_R_MSG: { /* symbolic messages (with GS op and stream on gfx9), numeric ones */
			static const int m9[6] = {1, 0x22, 0x333, 0x1f, 0, 0x375}, m11[6] = {1, 3, 0x80, 0x86, 0, 200};
			*o = isa_imm(g11 ? m11[var] : m9[var]);
			break;
		}
		case ISA_R_K32: *o = (IsaOperand){ISA_K_LIT, 1, 0, var ? 0x41000000 : 0x12345, 0, 0}; break;
		case ISA_R_I32: *o = (IsaOperand){ISA_K_LIT, 1, 0, var == 1 ? -1 : var == 2 ? 7 : 0x12345678, 0, 0}; break;
		case ISA_R_HWREG: { /* MODE whole, MODE bits 2..5, an unnamed id with every field at its maximum */
			static const int hv[3] = {0xf801, 0x1881, 0xffff};
			*o = isa_imm(hv[var % 3]);
			break;
		}
		case ISA_R_SOFF:
			*o = var == 1 ? isa_sgpr(20, 1) : isa_imm(var * 0x10 + (var == 3 ? 0x1000 : 0));
			break;
		case ISA_R_DA: *o = isa_vgpr(1 + var, 1); break;
		case ISA_R_FA: *o = isa_vgpr(2 * var + 2, (var & 1) && fmt == ISA_FMT_GLOBAL ? 1 : 2); break;
		case ISA_R_XA: *o = var == 1 ? isa_off() : isa_vgpr(1 + var, 1); break;
		case ISA_R_XS:
			*o = var == 1 || (var == 2 && ISA_TARGET(t) != TA_TARGET_GFX90A) ? isa_sgpr(3 + var, 1)
			   : var == 3 && ISA_TARGET(t) != TA_TARGET_GFX90A ? isa_special(ISA_SP_M0, 1) : isa_off();
			break;
		case ISA_R_FS: *o = (var & 1) ? isa_sgpr(4 + 2 * var, 2) : isa_off(); break;
		case ISA_R_MVA: *o = var == 0 ? isa_off() : isa_vgpr(1 + var, 1); break;
		case ISA_R_MSO: *o = var == 2 ? isa_sgpr(3, 1) : isa_const_u32(ISA_TY_B32, 0); break;
		default: *o = reg_for(t, r, (int)cnt, var, i); break;
		}
		if ((r == ISA_R_SS || r == ISA_R_VS) && i > 0)
			nsrc++;
		if (r == ISA_R_SS && (oi->flags & ISA_F_WAIT))
			*o = isa_special(ISA_SP_NULL, 1);
		if (r == ISA_R_SS && fmt >= ISA_FMT_VOP1 && var != 4 && nsrc > 1)
			*o = isa_const_u32(ISA_TY_B32, 3);
		/* VALU sources that are SGPRs: only one per instruction (constant bus). */
		if (r == ISA_R_VS && nsrc > 1 && o->kind == ISA_K_SGPR)
			*o = reg_for(t, ISA_R_VV, (int)cnt, var, i);
		if (r == ISA_R_VS && o->kind == ISA_K_SGPR && i == 1 && var != 3 && fmt != ISA_FMT_SOP1)
			*o = reg_for(t, ISA_R_VV, (int)cnt, var, i);
		if (r == ISA_R_AVS && i == 3 && in->ops[0].kind == ISA_K_AGPR)
			*o = isa_agpr(in->ops[0].reg, (int)cnt);
		if (r == ISA_R_AVS && i == 3 && in->ops[0].kind == ISA_K_VGPR)
			*o = isa_vgpr(in->ops[0].reg, (int)cnt);
	}
	in->nops = (uint8_t)n;

	/* Per-format variants. */
	int first_src = -1;
	for (int i = 0; i < n; i++) {
		unsigned r = sig[i] >> 8;
		if ((r == ISA_R_VS || r == ISA_R_SS) && first_src < 0 &&
		    !(i == 0 && fmt >= ISA_FMT_VOP1 && fmt <= ISA_FMT_VOP3))
			first_src = i;
	}
	int wide = first_src >= 0 && (sig[first_src] & 0xff) > 1;
	IsaType ty = (IsaType)oi->type;
	switch (fmt) {
	case ISA_FMT_SOP1: case ISA_FMT_SOP2: case ISA_FMT_SOPC:
		if (var >= 5 || (var && (oi->flags & ISA_F_BRANCH)))
			return 0;
		if (var == 4) { /* every scalar register a trap temporary (aligned ranges) */
			for (int i = 0; i < n; i++)
				if (in->ops[i].kind == ISA_K_SGPR)
					in->ops[i] = ttmp(i ? 14 - 2 * i : 4, in->ops[i].count);
			break;
		}
		if (first_src >= 0 && var == 1)
			in->ops[first_src] = isa_const_u32(ty, wide ? 0xfffffff0u : 64);
		else if (first_src >= 0 && var == 2)
			in->ops[first_src] = isa_const_u32(ty, wide ? 0x3ff00000u : 0x3f800000u);
		else if (first_src >= 0 && var == 3 && !wide)
			in->ops[first_src] = isa_const_u32(ty, 0x12345678);
		else if (first_src >= 0 && var == 3 && wide)
			in->ops[first_src] = isa_special(ISA_SP_EXEC_LO, 2);
		else if (var > 0 && first_src < 0 && var > 1)
			return 0;
		if (var == 1 && n > 0 && (sig[0] >> 8) == ISA_R_SD)
			in->ops[0] = (sig[0] & 0xff) == 2 ? isa_special(ISA_SP_VCC_LO, 2)
							   : isa_special(ISA_SP_M0, 1);
		break;
	case ISA_FMT_SOPK:
		if (var > 2)
			return 0;
		break;
	case ISA_FMT_SOPP:
		if (n == 0 && var)
			return 0;
		if (n && (sig[0] >> 8) == ISA_R_MSG && var > 5)
			return 0;
		/* s_waitcnt_depctr: the values the hazard pass emits (va_vdst(0),
		 * sa_sdst(0)) and others with the unused bits 6:5 set, which
		 * llvm-mc prints in hex as we do (bits 6:5 clear print symbolically). */
		if (op == ISA_S_WAITCNT_DEPCTR) {
			static const int dc[6] = {0x0fff, 0xfffe, 0xffff, 0x1234, 0xf1ff, 0xfffd};
			in->ops[0] = isa_imm(dc[var]);
		}
		break;
	case ISA_FMT_SMEM:
		if (var > 4)
			return 0;
		if (var == 4) /* trap temporaries: data ttmp[16-n:15] (aligned), base ttmp[4:..], offset ttmp13 */
			in->ops[0] = ttmp(16 - (int)(sig[0] & 0xff), (int)(sig[0] & 0xff)),
			in->ops[1] = ttmp(4, (int)(sig[1] & 0xff)), in->ops[2] = ttmp(13, 1);
		if (var == 2)
			in->mod.cpol = ISA_CPOL_GLC | (g11 ? ISA_CPOL_DLC : 0);
		if (var == 3 && !g11)
			in->ops[2] = isa_imm(0xfffff);
		if (var == 3 && g11)
			in->ops[2] = isa_imm((sig[1] & 0xff) == 2 ? -16 : 0x1000);
		break;
	case ISA_FMT_VOP1: case ISA_FMT_VOP2: case ISA_FMT_VOPC: {
		int e64ok = !(oi->flags & ISA_F_NOE64);
		int has_lm = 0;
		for (int i = 0; i < n; i++)
			has_lm |= (sig[i] >> 8) == ISA_R_LM;
		if (var == 1 && first_src >= 0)
			in->ops[first_src] = isa_const_u32(ty, ty == ISA_TY_F16 || ty == ISA_TY_B16 ? 0x3c00
							 : ty == ISA_TY_F64 ? 0x40000000u : 0x3f800000u);
		else if (var == 2 && first_src >= 0 && !wide && !(fmt == ISA_FMT_VOP2 && (oi->flags & ISA_F_NOE64) && n > 3))
			in->ops[first_src] = isa_const_u32(ty, ty == ISA_TY_F16 || ty == ISA_TY_B16 ? 0x1234 : 0x12345);
		else if (var == 2 && first_src >= 0)
			in->ops[first_src] = isa_const_u32(ty, (uint32_t)-7);
		else if (var == 3) {
			if (!e64ok)
				return 0;
			in->enc = ISA_ENC_E64;
			if (has_lm)
				for (int i = 0; i < n; i++)
					if ((sig[i] >> 8) == ISA_R_LM)
						in->ops[i] = isa_sgpr(i == 0 || i == 1 ? 12 : 20, w64 ? 2 : 1);
			if (ty == ISA_TY_F32 && first_src >= 0 && in->ops[first_src].kind == ISA_K_VGPR && !(oi->flags & ISA_F_NOMODS))
				in->mod.neg = 1, in->mod.abs = op == ISA_V_CMP_CLASS_F32 ? 1 : 2 & ((1 << (n - first_src)) - 1);
			if (ty == ISA_TY_F32 && !(oi->flags & (ISA_F_NOE64 | ISA_F_NOMODS)) && op != ISA_V_CMP_CLASS_F32)
				in->mod.clamp = 1, /* compares and rounding conversions: clamp, no omod */
				in->mod.omod = fmt != ISA_FMT_VOPC && isa_cvt_kind(oi, t) != 3;
			else if (isa_cvt_kind(oi, t) == 2) /* int -> float: clamp and omod, no neg/abs */
				in->mod.clamp = 1, in->mod.omod = 3;
		} else if (var == 4) { /* DPP16 (gfx11 VOPC too) */
			if ((fmt == ISA_FMT_VOPC && !g11) || (oi->flags & ISA_F_NODPP) || !first_src || first_src < 0 ||
			    in->ops[first_src].kind != ISA_K_VGPR || (has_lm && fmt != ISA_FMT_VOPC) ||
			    (oi->flags & ISA_F_NOE64) || wide || (sig[0] & 0xff) > 1 || n > 3)
				return 0;
			in->enc = ISA_ENC_DPP;
			in->mod.dpp_ctrl = g11 ? 0x151 : 0x111;
			in->mod.row_mask = 0xa;
			in->mod.bound_ctrl = 1;
		} else if (var == 5 || var == 6) { /* quad_perm with fi; gfx11 dpp8 (fi on VOPC) */
			if ((fmt == ISA_FMT_VOPC && !g11) || (oi->flags & ISA_F_NODPP) || first_src < 0 ||
			    in->ops[first_src].kind != ISA_K_VGPR || (has_lm && fmt != ISA_FMT_VOPC) ||
			    (oi->flags & ISA_F_NOE64) || wide || (sig[0] & 0xff) > 1 || n > 3 || (var == 6 && !g11))
				return 0;
			in->enc = var == 6 ? ISA_ENC_DPP8 : ISA_ENC_DPP;
			if (var == 6)
				in->mod.dpp8 = 0x053977 ^ (uint32_t)op, in->mod.fi = fmt == ISA_FMT_VOPC;
			else
				in->mod.dpp_ctrl = 0x1b, in->mod.fi = (uint8_t)g11;
		} else if (var)
			return 0;
		break;
	}
	case ISA_FMT_VOP3:
		if (var == 1 && first_src >= 0)
			in->ops[first_src] = isa_const_u32(ty, ty == ISA_TY_F16 ? 0x3800 : 0xfffffffcu);
		else if (var == 2 && first_src >= 0 && g11 && !wide && (sig[first_src] >> 8) != ISA_R_SS)
			in->ops[first_src] = isa_const_u32(ty, ty == ISA_TY_F16 || ty == ISA_TY_B16 ? 0x1234 : 0x12345);
		else if (var == 3 && (ty == ISA_TY_F32 || ty == ISA_TY_F64) && first_src >= 0 && !(oi->flags & ISA_F_NOMODS))
			in->mod.neg = 2, in->mod.abs = 1, in->mod.clamp = 1, in->mod.omod = 3;
		else if (var == 4 && (oi->flags & ISA_F_OPSEL))
			in->mod.op_sel = 1 | 8, in->mod.neg = ty == ISA_TY_F16 ? 2 : 0;
		else if (var)
			return 0;
		break;
	case ISA_FMT_VOP3P:
		if (oi->flags & ISA_F_WMMA) {
			if (var > 1)
				return 0;
			if (var == 1)
				in->mod.neg = 1, in->mod.neg_hi = 2;
			break;
		}
		if (var == 1 && first_src >= 0)
			in->ops[first_src] = isa_const_u32(ty, ty == ISA_TY_F32 ? 0x3f800000u : 0x3c00);
		else if (var == 2 && ty != ISA_TY_F32 && strncmp(oi->name[isa_tidx(t)], "v_fma_mix", 9) &&
			 strncmp(oi->name[isa_tidx(t)], "v_dot", 5))
			in->mod.op_sel = 1, in->mod.op_sel_hi = 6, in->mod.neg = ty == ISA_TY_PK16 ? 2 : 0,
			in->mod.neg_hi = ty == ISA_TY_PK16 ? 1 : 0;
		else if (var == 3 && (ty == ISA_TY_PK16 || ty == ISA_TY_F32))
			in->mod.clamp = 1;
		else if (var)
			return 0;
		break;
	case ISA_FMT_MAI:
		if (!(oi->flags & ISA_F_MFMA)) {
			if (var == 1 && (sig[1] >> 8) == ISA_R_VS)
				in->ops[1] = isa_const_u32(ISA_TY_B32, 7);
			else if (var)
				return 0;
			break;
		}
		if (var == 1) { /* accumulate in VGPRs */
			in->ops[0] = isa_vgpr(64, in->ops[0].count);
			in->ops[3] = isa_vgpr(64, in->ops[3].count);
		} else if (var == 2) {
			if (strstr(oi->name[isa_tidx(t)], "f64"))
				return 0;
			in->mod.cbsz = 1, in->mod.abid = 1, in->mod.blgp = 2;
		} else if (var == 3) {
			in->ops[1] = isa_agpr(100, in->ops[1].count);
		} else if (var)
			return 0;
		break;
	case ISA_FMT_DS: case ISA_FMT_GLOBAL: case ISA_FMT_MUBUF: case ISA_FMT_FLAT: case ISA_FMT_SCRATCH:
		if (var == 4 && !g11) { /* gfx90a+: data in AGPRs */
			int any = 0;
			isa_variant(t, op, 1, in);
			for (int i = 0; i < n; i++)
				if (((sig[i] >> 8) == ISA_R_VD || (sig[i] >> 8) == ISA_R_DD)) {
					in->ops[i].kind = ISA_K_AGPR;
					any = 1;
				}
			return any;
		}
		break;
	default:
		break;
	}
	switch (fmt) {
	case ISA_FMT_DS:
		if (var > 3)
			return 0;
		if (oi->flags & ISA_F_SWIZZLE) {
			static const int sw[4] = {0x80e4, 0x041f, 0x001c, 0x7c1f};
			in->mod.offset = sw[var];
		} else if (oi->flags & ISA_F_DS2) {
			in->mod.offset0 = (uint8_t)(var * 3);
			in->mod.offset1 = (uint8_t)(var ? 255 - var : 1);
		} else
			in->mod.offset = var == 1 ? 16 : var == 2 ? 65535 : 0;
		if (var == 3 && (oi->flags & ISA_F_DS2))
			return 0;
		break;
	case ISA_FMT_GLOBAL: case ISA_FMT_FLAT: case ISA_FMT_SCRATCH:
		if (var > 3)
			return 0;
		in->mod.offset = var == 0 ? 0 : var == 1 ? (fmt == ISA_FMT_FLAT ? 8 : -4096) : var == 2 ? 4095 : 64;
		if (oi->flags & ISA_F_RTN)
			in->mod.cpol = ISA_CPOL_GLC;
		if (var == 2)
			in->mod.cpol |= ISA_CPOL_SLC | (g942 ? ISA_CPOL_SC1 : 0) | (g11 ? ISA_CPOL_DLC : 0);
		if (var == 3 && !(oi->flags & ISA_F_RTN) && !(oi->flags & ISA_F_ATOMIC))
			in->mod.cpol |= ISA_CPOL_GLC;
		break;
	case ISA_FMT_MUBUF:
		if (var > 3 || (!in->nops && var > 0)) /* buffer_gl*_inv: no operands, no modifiers */
			return 0;
		if (!in->nops)
			break;
		in->mod.offen = var == 1 || var == 3;
		in->mod.idxen = var == 2;
		in->mod.offset = var == 0 ? 0 : var == 1 ? 4095 : 16;
		if (var == 0)
			in->ops[1] = isa_off();
		if (var == 3)
			in->mod.cpol = ISA_CPOL_GLC | ISA_CPOL_SLC | (g942 ? ISA_CPOL_SC1 : 0) | (g11 ? ISA_CPOL_DLC : 0);
		break;
	default:
		break;
	}
	return 1;
}
