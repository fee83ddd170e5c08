/* enc.c — operand checking and machine-code encoding, one function per format.
 *
 * Operands are matched against the op's signature (isa_sig) by role; each
 * format then places them into its fields with plain shifts.  Encodings were
 * derived from the ISA manuals and checked against llvm-mc-19 by
 * tests/isa/test_conformance.c. */
#include <string.h>

#include "isa.h"
#include "isa_impl.h"

int isa_special_code(ta_target t, IsaSpecial s)
{
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100;
	switch (s) {
	case ISA_SP_VCC_LO: return 106;
	case ISA_SP_VCC_HI: return 107;
	case ISA_SP_EXEC_LO: return 126;
	case ISA_SP_EXEC_HI: return 127;
	case ISA_SP_M0: return g11 ? 125 : 124;
	case ISA_SP_NULL: return g11 ? 124 : -1;
	case ISA_SP_SCC: return 253;
	case ISA_SP_VCCZ: return 251;
	case ISA_SP_EXECZ: return 252;
	case ISA_SP_FLAT_SCRATCH_LO: return g11 ? -1 : 102;
	case ISA_SP_FLAT_SCRATCH_HI: return g11 ? -1 : 103;
	default: return -1;
	}
}

int isa_code_special(ta_target t, int code)
{
	for (int s = 0; s < ISA_SP_NUM; s++)
		if (isa_special_code(t, (IsaSpecial)s) == code)
			return s;
	return -1;
}

/* Inline float constants 240..248 as f32, f16 and f64-high-word bit patterns. */
static const uint32_t inl_f32[9] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000,
				    0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983};
static const uint32_t inl_f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};
static const uint32_t inl_f64[9] = {0x3fe00000, 0xbfe00000, 0x3ff00000, 0xbff00000, 0x40000000,
				    0xc0000000, 0x40100000, 0xc0100000, 0x3fc45f30};

int isa_inline_code(IsaType ty, uint32_t bits)
{
	int32_t v = (int32_t)bits;
	if (ty == ISA_TY_F16 || ty == ISA_TY_B16 || ty == ISA_TY_PK16 || ty == ISA_TY_PKI16) {
		int16_t h = (int16_t)(bits & 0xffff);
		if ((bits >> 16) && (bits >> 16) != 0xffff)
			return -1;
		if ((bits >> 16) == 0xffff && h >= 0)
			return -1;
		v = h;
		if (v >= 0 && v <= 64)
			return 128 + v;
		if (v >= -16 && v < 0)
			return 192 - v;
		if (ty == ISA_TY_F16 || ty == ISA_TY_PK16)
			for (int i = 0; i < 9; i++)
				if ((bits & 0xffff) == inl_f16[i] && !(bits >> 16))
					return 240 + i;
		return -1;
	}
	if (v >= 0 && v <= 64)
		return 128 + v;
	if (v >= -16 && v < 0)
		return 192 - v;
	const uint32_t *tab = ty == ISA_TY_F64 ? inl_f64 : inl_f32;
	for (int i = 0; i < 9; i++)
		if (bits == tab[i])
			return 240 + i;
	return -1;
}

IsaOperand isa_const_u32(IsaType ty, uint32_t bits)
{
	int c = isa_inline_code(ty, bits);
	if (c >= 0)
		return (IsaOperand){ISA_K_CONST, 1, (uint16_t)c, 0, 0, 0};
	return (IsaOperand){ISA_K_LIT, 1, 0, (int32_t)bits, 0, 0};
}

int isa_e64_opcode(ta_target t, IsaFmt fmt, int opc)
{
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100;
	if (fmt == ISA_FMT_VOPC)
		return opc;
	if (fmt == ISA_FMT_VOP2)
		return 0x100 + opc;
	if (fmt == ISA_FMT_VOP1)
		return (g11 ? 0x180 : 0x140) + opc;
	return opc;
}

/* ---- operand checks -------------------------------------------------- */

/* Which operands of a VALU op are 16-bit values, from its name: v_cvt_<dst>_<src>,
 * otherwise the source type (packed and dot ops use 32-bit registers). */
void isa_16bit_operands(const char *name, IsaType ty, int *dst16, int *src16)
{
	*dst16 = *src16 = 0;
	if (!name || strstr(name, "_pk") || strstr(name, "dot2") || strstr(name, "pkrtz"))
		return;
	if (!strncmp(name, "v_cvt_", 6)) {
		const char *d = name + 6, *u = strchr(d, '_');
		if (!u)
			return;
		*dst16 = (u - d == 3 && !strncmp(d + 1, "16", 2));
		*src16 = strlen(u + 1) == 3 && !strncmp(u + 2, "16", 2);
		return;
	}
	*dst16 = *src16 = ty == ISA_TY_F16 || ty == ISA_TY_B16;
}

int isa_dpp_ctrl_valid(ta_target t, unsigned c)
{
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100;
	if (c <= 0xff || (c >= 0x101 && c <= 0x10f) || (c >= 0x111 && c <= 0x11f) || (c >= 0x121 && c <= 0x12f) ||
	    c == 0x140 || c == 0x141)
		return 1;
	if (g11)
		return (c >= 0x150 && c <= 0x15f) || (c >= 0x160 && c <= 0x16f);
	return c == 0x130 || c == 0x134 || c == 0x138 || c == 0x13c || c == 0x142 || c == 0x143;
}

int isa_sgpr_ok(ta_target t, unsigned reg, unsigned count)
{
	if (reg >= ISA_TTMP_BASE) /* a range stays inside the ttmps */
		return reg + count <= ISA_TTMP_BASE + ISA_TTMP_NUM;
	return reg + count <= (ISA_TARGET(t) == TA_TARGET_GFX1100 ? 106u : 102u);
}

static int reg_ok_align(ta_target t, const IsaOperand *o)
{
	if (o->count < 2)
		return 1;
	if (o->kind == ISA_K_SGPR)
		return o->reg % (o->count >= 4 ? 4 : 2) == 0;
	if ((o->kind == ISA_K_VGPR || o->kind == ISA_K_AGPR) && ISA_TARGET(t) != TA_TARGET_GFX1100)
		return o->reg % 2 == 0;
	return 1;
}

static int special_pair_ok(const IsaOperand *o, unsigned cnt)
{
	if (o->count != cnt)
		return 0;
	if (cnt == 2)
		return o->reg == ISA_SP_VCC_LO || o->reg == ISA_SP_EXEC_LO || o->reg == ISA_SP_FLAT_SCRATCH_LO;
	return cnt == 1;
}

/* Is operand o acceptable for signature entry s?  e64 relaxes VGPR-only sources. */
static const char *check_one(ta_target t, unsigned s, const IsaOperand *o, int e64, int mem)
{
	unsigned role = SIG_ROLE(s), cnt = SIG_CNT(s);
	int k = o->kind;
	int reg = k == ISA_K_SGPR || k == ISA_K_VGPR || k == ISA_K_AGPR;
	if (reg && o->count != cnt && role != ISA_R_FA && role != ISA_R_MVA && role != ISA_R_RSRC && role != ISA_R_FS && role != ISA_R_SB)
		return "invalid register count for operand";
	if (reg && !(k == ISA_K_SGPR ? isa_sgpr_ok(t, o->reg, o->count) : o->reg + o->count <= 256u))
		return "register index is out of range";
	if (reg && !reg_ok_align(t, o))
		return "invalid register alignment";
	if (k == ISA_K_SPECIAL && isa_special_code(t, (IsaSpecial)o->reg) < 0)
		return "register not available on this GPU";
	if (role == ISA_R_VV && e64)
		role = ISA_R_VS;
	switch (role) {
	case ISA_R_SD:
		if (k == ISA_K_SGPR || (k == ISA_K_SPECIAL && special_pair_ok(o, cnt) && o->reg != ISA_SP_SCC &&
					 o->reg != ISA_SP_VCCZ && o->reg != ISA_SP_EXECZ))
			return NULL;
		return "invalid operand for instruction: expected a scalar register";
	case ISA_R_SS: case ISA_R_MSO:
		if (k == ISA_K_SGPR || k == ISA_K_CONST || k == ISA_K_LIT ||
		    (k == ISA_K_SPECIAL && (special_pair_ok(o, cnt) || cnt == 1)))
			return NULL;
		return "invalid operand for instruction: expected a scalar source";
	case ISA_R_LM:
		if ((k == ISA_K_SGPR && cnt == o->count) ||
		    (k == ISA_K_SPECIAL && o->reg == ISA_SP_NULL && ISA_TARGET(t) == TA_TARGET_GFX1100) ||
		    (k == ISA_K_SPECIAL && o->reg == ISA_SP_VCC_LO && o->count == cnt))
			return NULL;
		return cnt == 2 ? "invalid operand for instruction: expected vcc or an SGPR pair"
				: "invalid operand for instruction: expected vcc_lo or an SGPR";
	case ISA_R_VD: case ISA_R_DD:
		if (k == ISA_K_AGPR && mem && ISA_TARGET(t) != TA_TARGET_GFX1100)
			return NULL; /* gfx90a+: memory data in AGPRs */
		/* fallthrough */
	case ISA_R_WD: case ISA_R_VV: case ISA_R_WV: case ISA_R_DA: case ISA_R_FA:
		if (k == ISA_K_VGPR)
			return NULL;
		return "invalid operand for instruction: expected a VGPR";
	case ISA_R_VS:
		if (k == ISA_K_VGPR || k == ISA_K_SGPR || k == ISA_K_CONST || k == ISA_K_LIT ||
		    (k == ISA_K_SPECIAL && (o->count == cnt || (cnt == 2 && o->count == 1 && 0))))
			return NULL;
		return "invalid operand for instruction";
	case ISA_R_AVD:
		return k == ISA_K_VGPR || k == ISA_K_AGPR ? NULL : "invalid operand for instruction: expected a VGPR or AGPR";
	case ISA_R_AVS:
		return k == ISA_K_VGPR || k == ISA_K_AGPR || k == ISA_K_CONST ? NULL
			: "invalid operand for instruction: expected a VGPR or AGPR";
	case ISA_R_AD: case ISA_R_AS:
		return k == ISA_K_AGPR ? NULL : "invalid operand for instruction: expected an AGPR";
	case ISA_R_K16:
		if (k == ISA_K_IMM && o->imm >= -32768 && o->imm <= 65535)
			return NULL;
		return k == ISA_K_IMM ? "invalid immediate: only 16-bit values are legal" : "expected an immediate";
	case ISA_R_I16: case ISA_R_WAIT: case ISA_R_DELAY: case ISA_R_MSG:
		if (k == ISA_K_IMM && o->imm >= 0 && o->imm <= 65535)
			return NULL;
		return k == ISA_K_IMM ? "invalid immediate: only 16-bit values are legal" : "expected an immediate";
	case ISA_R_LBL:
		if (k == ISA_K_LABEL || (k == ISA_K_IMM && o->imm >= -32768 && o->imm <= 65535))
			return NULL;
		return "branch target is out of range";
	case ISA_R_K32: case ISA_R_I32:
		return k == ISA_K_LIT || k == ISA_K_IMM ? NULL : "expected a literal constant";
	case ISA_R_HWREG:
		if (k == ISA_K_IMM && o->imm >= 0 && o->imm <= 65535)
			return NULL;
		return k == ISA_K_IMM ? "invalid immediate: only 16-bit values are legal" : "expected a hwreg() operand";
	case ISA_R_SB:
		return k == ISA_K_SGPR ? NULL : "invalid operand for instruction: expected an SGPR base";
	case ISA_R_SOFF:
		if (k == ISA_K_SGPR && o->count == 1)
			return NULL;
		if (k == ISA_K_SPECIAL && o->count == 1 && (o->reg == ISA_SP_M0 || o->reg == ISA_SP_NULL))
			return NULL;
		if (k == ISA_K_IMM) {
			int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100;
			if (g11 ? (o->imm < -(1 << 20) || o->imm >= (1 << 20)) : (o->imm < 0 || o->imm >= (1 << 20)))
				return "expected a 21-bit signed offset";
			return NULL;
		}
		return "invalid operand for instruction";
	case ISA_R_FS:
		return k == ISA_K_OFF || (k == ISA_K_SGPR && o->count == 2) ? NULL
			: "invalid operand for instruction: expected off or an SGPR pair";
	case ISA_R_XA:
		return k == ISA_K_OFF || (k == ISA_K_VGPR && o->count == 1) ? NULL
			: "invalid operand for instruction: expected off or a VGPR";
	case ISA_R_XS:
		return k == ISA_K_OFF || (k == ISA_K_SGPR && o->count == 1) ||
				       (k == ISA_K_SPECIAL && o->count == 1 && (o->reg == ISA_SP_M0 || o->reg == ISA_SP_VCC_LO ||
							   o->reg == ISA_SP_VCC_HI))
			       ? NULL : "invalid operand for instruction: expected off or an SGPR";
	case ISA_R_MVA:
		return k == ISA_K_OFF || k == ISA_K_VGPR ? NULL : "invalid operand for instruction";
	case ISA_R_RSRC:
		return k == ISA_K_SGPR && o->count == 4 ? NULL : "invalid operand for instruction: expected s[n:n+3]";
	}
	return "invalid operand for instruction";
}

/* Checks in against the op's signature; returns NULL or a message, and the
 * offending operand index in *bad (-1: the whole instruction).  sig (room
 * for 2 * ISA_MAX_SIG) receives the op's signature, *nsig its length, for
 * the encoder to reuse. */
static const char *unencoded_mods(ta_target t, const IsaInsn *in);

/* float -> int conversions (1; 3 for the rounding ones, rpi/flr, which have no omod) and
 * int -> float ones (2), whose modifiers differ from their operand types' (llvm-mc-19). */
int isa_cvt_kind(const IsaOpInfo *oi, ta_target t)
{
	const char *nm = oi->name[isa_tidx(t)];
	if (strncmp(nm, "v_cvt_", 6) || (oi->flags & ISA_F_NOMODS))
		return 0;
	if (strstr(nm, "_rpi_") || strstr(nm, "_flr_") || strstr(nm, "_nearest_") || strstr(nm, "_floor_"))
		return 3;
	if (strstr(nm, "_i32_f") || strstr(nm, "_u32_f") || strstr(nm, "_i16_f") || strstr(nm, "_u16_f"))
		return 1;
	return nm[6] == 'f' && (oi->type == ISA_TY_B32 || oi->type == ISA_TY_B16) ? 2 : 0;
}

/* A float op whose src1 is an integer (ldexp's exponent, cmp_class's class mask):
 * no neg/abs there, sext allowed. */
static int int_src1(const IsaOpInfo *oi, ta_target t)
{
	const char *nm = oi->name[isa_tidx(t)];
	return strstr(nm, "ldexp") || strstr(nm, "_class_");
}

static const char *check_sig(ta_target t, const IsaInsn *in, int *bad, uint16_t *sig, int *nsig)
{
	*bad = -1;
	*nsig = 0;
	if (in->op >= ISA_NUM_OPS || !isa_op_exists(t, in->op))
		return "instruction not supported on this GPU";
	IsaFmt fmt = isa_op_fmt(t, in->op);
	int n = isa_sig(t, in->op, sig);
	*nsig = n;
	if (fmt == ISA_FMT_VOPD) {
		if (!isa_op_exists(t, in->op_y) || isa_op_fmt(t, in->op_y) != ISA_FMT_VOPD)
			return "invalid VOPD second component";
		if (isa_ops[in->op].flags & ISA_F_VOPDY)
			return "this operation is only valid as the second VOPD component";
		n += isa_sig(t, in->op_y, sig + n);
	}
	if (in->nops != n)
		return "invalid number of operands";
	const char *um = unencoded_mods(t, in);
	if (um)
		return um;
	/* VGPR-only sources relax in VOP3 forms of VOP1/VOP2/VOPC ops (gfx11 has some
	 * only as VOP3, e.g. v_add_co_u32). */
	int e64 = in->enc == ISA_ENC_E64 || ISA_ENC_IS_XDPP(in->enc) || in->enc == ISA_ENC_SDWA ||
		  (fmt == ISA_FMT_VOP3 && (isa_ops[in->op].fmt[0] == ISA_FMT_VOP2 || isa_ops[in->op].fmt[2] == ISA_FMT_VOP2));
	int is_fa = 0;
	for (int i = 0; i < n; i++) {
		const char *m = check_one(t, sig[i], &in->ops[i], e64,
					  fmt == ISA_FMT_DS || fmt == ISA_FMT_GLOBAL || fmt == ISA_FMT_MUBUF ||
					  fmt == ISA_FMT_FLAT || fmt == ISA_FMT_SCRATCH);
		if (m) {
			*bad = i;
			return m;
		}
		if (SIG_ROLE(sig[i]) == ISA_R_FA)
			is_fa = i + 1;
	}
	if (fmt == ISA_FMT_VOPD && ISA_IS_W64(t))
		return "instruction requires wavesize=32";
	if (fmt == ISA_FMT_VOPD) {
		/* Register-bank rules of dual issue: src0s and vsrc1s in different banks (reg % 4),
		 * one destination even and the other odd. */
		int nx = n - isa_sig(t, in->op_y, sig + n), src0[2] = {-1, -1}, src1[2] = {-1, -1};
		for (int i = 0; i < n; i++) {
			int h = i >= nx, first = h ? nx : 0;
			unsigned r = SIG_ROLE(sig[i]);
			const IsaOperand *o = &in->ops[i];
			if (r == ISA_R_VS && o->kind == ISA_K_VGPR && i == first + 1)
				src0[h] = o->reg;
			else if (r == ISA_R_VV)
				src1[h] = o->reg;
		}
		if (src0[0] >= 0 && src0[1] >= 0 && src0[0] % 4 == src0[1] % 4) {
			*bad = nx + 1;
			return "src0 operands must use different VGPR banks";
		}
		if (src1[0] >= 0 && src1[1] >= 0 && src1[0] % 4 == src1[1] % 4) {
			*bad = nx + 2;
			return "src1 operands must use different VGPR banks";
		}
		if ((in->ops[0].reg & 1) == (in->ops[nx].reg & 1)) {
			*bad = nx;
			return "one dst register must be even and the other odd";
		}
	}
	const IsaOpInfo *oi = &isa_ops[in->op];
	const IsaMods *m = &in->mod;
	if ((oi->flags & ISA_F_NOMODS) && (m->neg || m->abs || m->clamp || m->omod))
		return "not a valid operand: this instruction takes no input/output modifiers";
	IsaType ty = (IsaType)oi->type;
	int fp = ty == ISA_TY_F32 || ty == ISA_TY_F16 || ty == ISA_TY_F64 || ty == ISA_TY_PK16;
	int xdpp = ISA_ENC_IS_XDPP(in->enc);
	if (xdpp) { /* gfx11 VOP3 DPP: the table says which ops have it; src0 (and src1) VGPRs, no literal */
		if (ISA_TARGET(t) != TA_TARGET_GFX1100 || !(oi->forms & ISA_FORM_XDPP))
			return "e64_dpp variant of this instruction is not supported";
		for (int i = 0, k = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			if (in->ops[i].kind == ISA_K_LIT) {
				*bad = i;
				return "invalid operand for instruction: literal operands are not supported with DPP";
			}
			if (!(r == ISA_R_VS || r == ISA_R_VV || r == ISA_R_SS || (r == ISA_R_LM && i > 1)))
				continue;
			if (k < 2 && in->ops[i].kind != ISA_K_VGPR) {
				*bad = i;
				return "invalid operand for instruction: DPP src0/src1 must be VGPRs";
			}
			k++;
		}
	}
	if (in->enc == ISA_ENC_SDWA) { /* gfx9 SDWA: the table says which ops; no literal, 32-bit operands */
		int ti = isa_tidx(t);
		if (ti > 1 || !(oi->forms & (ti ? ISA_FORM_SDWA942 : ISA_FORM_SDWA90A)))
			return "sdwa variant of this instruction is not supported";
		for (int i = 0; i < n; i++) {
			if (in->ops[i].kind == ISA_K_LIT) {
				*bad = i;
				return "invalid operand for instruction: literal operands are not supported with SDWA";
			}
			if (in->ops[i].count > 1 && SIG_ROLE(sig[i]) != ISA_R_LM)
				return "sdwa variant of this instruction is not supported";
		}
		if (fmt == ISA_FMT_VOPC && (m->dst_sel || m->dst_unused))
			return "not a valid operand: compares have no dst_sel/dst_unused";
		if (fmt == ISA_FMT_VOP1 && m->src_sel[1])
			return "not a valid operand: src1_sel on a one-source instruction";
		/* sext is for integer sources: src1 of ldexp/cmp_class (exponent, class mask) is one */
		if (((m->sext & 1) && (fp || in->op == ISA_V_CNDMASK_B32)) ||
		    ((m->sext & 2) && (fp || in->op == ISA_V_CNDMASK_B32) && !int_src1(oi, t)))
			return "not a valid operand: sext on a floating-point source";
		if ((m->neg | m->abs | m->sext) & ~3u)
			return "not a valid operand: SDWA modifiers exist for src0 and src1 only";
		if (m->omod && (!fp || in->op == ISA_V_CNDMASK_B32 || isa_cvt_kind(oi, t) & 1) && isa_cvt_kind(oi, t) != 2)
			return "not a valid operand: omod";
	}
	int vop3 = fmt == ISA_FMT_VOP3 || in->enc == ISA_ENC_E64 || in->enc == ISA_ENC_DPP || xdpp ||
		   in->enc == ISA_ENC_SDWA;
	if (vop3 && (m->neg || m->abs || m->omod) && !fp && in->op != ISA_V_CNDMASK_B32 &&
	    (m->neg || m->abs || isa_cvt_kind(oi, t) != 2)) /* int -> float conversions have omod */
		return "not a valid operand: integer instructions take no neg/abs/omod modifiers";
	if (m->omod && fp && isa_cvt_kind(oi, t) == 3)
		return "not a valid operand: omod";
	if (vop3 && m->clamp && !fp && fmt != ISA_FMT_VOP3P && !(oi->flags & ISA_F_WMMA) && isa_cvt_kind(oi, t) != 2) {
		/* integer clamp means saturation: only arithmetic has it */
		static const char *const sat[] = {"v_add_co", "v_add_u", "v_add_i", "v_add_nc", "v_addc", "v_sub",
						  "v_mad_u", "v_mad_i", "v_mul_u32_u24", "v_mul_i32_i24"};
		const char *nm = oi->name[isa_tidx(t)];
		int ok = 0;
		for (size_t i = 0; i < TA_ARRAY_LEN(sat); i++)
			ok |= !strncmp(nm, sat[i], strlen(sat[i]));
		if (!ok)
			return "not a valid operand: clamp";
	}
	for (int i = 0; i < n; i++)
		if (SIG_ROLE(sig[i]) == ISA_R_MSG) {
			unsigned v = (unsigned)in->ops[i].imm;
			if (!isa_sendmsg_ok(t, v))
				return "unsupported s_sendmsg value (tileasm takes llvm-mc's messages and sendmsg(id, op, stream) "
				       "with the fields in range)";
		}
	if ((oi->flags & ISA_F_MFMA) && (m->cbsz || m->abid) && strstr(oi->name[isa_tidx(t)], "f64"))
		return "not a valid operand: cbsz/abid on an f64 MFMA";
	if (fmt == ISA_FMT_VOPC && m->omod) /* clamp is there on float compares (e64 and e64_dpp), as llvm-mc has it */
		return "not a valid operand: compares take no omod";
	if (fmt == ISA_FMT_VOP2 && in->enc == ISA_ENC_E64 && (oi->flags & ISA_F_RVCC) && m->omod)
		return "not a valid operand";
	/* VOP3B (a lane-mask destination second: v_div_scale, v_mad_u64_u32)
	 * keeps its SDST where VOP3A has abs and op_sel. */
	if (fmt == ISA_FMT_VOP3 && n > 1 && SIG_ROLE(sig[1]) == ISA_R_LM && (m->abs || m->op_sel))
		return m->abs ? "ABS not allowed in VOP3B instructions" : "not a valid operand: op_sel in VOP3B";
	if (fmt == ISA_FMT_VOP3P && ISA_TARGET(t) == TA_TARGET_GFX942 && (m->op_sel || (m->op_sel_hi & 7) != 7) &&
	    !strncmp(oi->name[1], "v_dot", 5))
		return "invalid op_sel operand"; /* gfx940 dot ops: op_sel 0, op_sel_hi all 1 (llvm-mc) */
	if (ISA_ENC_IS_DPP16(in->enc) && !isa_dpp_ctrl_valid(t, m->dpp_ctrl))
		return "invalid dpp_ctrl value";
	if (ISA_TARGET(t) == TA_TARGET_GFX1100 && in->enc != ISA_ENC_E64 && !xdpp &&
	    (fmt == ISA_FMT_VOP1 || fmt == ISA_FMT_VOP2 || fmt == ISA_FMT_VOPC)) {
		/* gfx11 16-bit e32/DPP operands address v0-v127 only. */
		int d16, s16;
		isa_16bit_operands(oi->name[2], ty, &d16, &s16);
		for (int i = 0; i < n; i++) {
			const IsaOperand *o = &in->ops[i];
			int is_dst = i == 0 && SIG_ROLE(sig[0]) == ISA_R_VD;
			if (o->kind == ISA_K_VGPR && o->reg + o->count > 128 && (is_dst ? d16 : s16)) {
				*bad = i;
				return "invalid register: 16-bit e32 operands must be v0-v127";
			}
		}
	}
	if (fmt == ISA_FMT_SMEM && n && in->ops[0].kind == ISA_K_SPECIAL &&
	    (in->ops[0].reg == ISA_SP_EXEC_LO || in->ops[0].reg == ISA_SP_EXEC_HI || in->ops[0].reg == ISA_SP_M0)) {
		*bad = 0; /* scalar loads never write exec or m0 (llvm-mc: SReg_32_XM0_XEXEC) */
		return "invalid operand for instruction";
	}
	if (fmt == ISA_FMT_SOPK)
		for (int i = 0; i < n; i++) /* the 7-bit SDST field holds a register, never a constant */
			if ((SIG_ROLE(sig[i]) == ISA_R_SD || SIG_ROLE(sig[i]) == ISA_R_SS) &&
			    (in->ops[i].kind == ISA_K_CONST || in->ops[i].kind == ISA_K_LIT || in->ops[i].kind == ISA_K_IMM)) {
				*bad = i;
				return "invalid operand for instruction";
			}
	if (fmt == ISA_FMT_SOPK && n == 2 && in->ops[1].imm < 0 && !strncmp(oi->name[isa_tidx(t)], "s_cmpk_", 7) &&
	    strstr(oi->name[isa_tidx(t)], "_u32")) {
		*bad = 1; /* unsigned compares take 0..65535 */
		return "invalid operand for instruction";
	}
	if ((oi->flags & ISA_F_BRANCH) && fmt == ISA_FMT_SOP1)
		for (int i = 0; i < n; i++)
			if (in->ops[i].kind != ISA_K_SGPR) {
				*bad = i;
				return "invalid operand for instruction: expected an SGPR pair";
			}
	if (in->enc == ISA_ENC_DPP || in->enc == ISA_ENC_DPP8)
		for (int i = 0; i < n; i++)
			if (in->ops[i].count > 1 && in->ops[i].kind != ISA_K_SPECIAL)
				return "dpp variant of this instruction is not supported for 64-bit operands";
	if (oi->flags & ISA_F_MFMA)
		for (int i = 1; i < 3 && i < n; i++)
			if (in->ops[i].kind != ISA_K_VGPR && in->ops[i].kind != ISA_K_AGPR) {
				*bad = i;
				return "invalid operand for instruction: MFMA A/B must be registers";
			}
	if (oi->flags & ISA_F_WMMA) {
		if (m->op_sel || m->op_sel_hi != 7)
			return "not a valid operand: op_sel on WMMA";
		if (m->clamp && oi->type != ISA_TY_B32)
			return "not a valid operand: clamp on a float WMMA";
		if (m->clamp && strstr(oi->name[2], "_iu") == NULL)
			return "not a valid operand: clamp";
	}
	if (m->gds)
		return "gds is not supported by tileasm";
	if ((in->enc == ISA_ENC_DPP || in->enc == ISA_ENC_DPP8) && (oi->flags & ISA_F_NOE64))
		return "dpp variant of this instruction is not supported";
	if ((m->cpol & ISA_CPOL_SC1) && ISA_TARGET(t) == TA_TARGET_GFX90A && (oi->flags & ISA_F_ATOMIC))
		return "scc is not supported on atomics";
	if (m->omod && !strcmp(oi->name[isa_tidx(t)], "v_pack_b32_f16"))
		return "not a valid operand: omod";
	if (((m->neg | m->abs) & 2) && int_src1(oi, t)) /* name test last: it is slow */
		return "not a valid operand: the integer src1 (exponent, class mask) takes no modifiers";
	if (m->clamp && in->op == ISA_V_CMP_CLASS_F32)
		return "not a valid operand: clamp";
	for (int i = 0; i < n; i++)
		if (SIG_ROLE(sig[i]) == ISA_R_DELAY) {
			unsigned v = (unsigned)in->ops[i].imm;
			if ((v & 15) > 11 || (v >> 4 & 7) > 5 || (v >> 7 & 15) > 11 || v >> 11)
				return "invalid s_delay_alu value";
		}
	if (fmt == ISA_FMT_VOP3 || fmt == ISA_FMT_VOP3P || in->enc == ISA_ENC_E64 || in->enc == ISA_ENC_DPP || xdpp) {
		/* Modifier bits must not name sources the instruction does not have. */
		int ns = 0;
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			if (r == ISA_R_VS || r == ISA_R_VV || r == ISA_R_SS || r == ISA_R_WV || (r == ISA_R_LM && i > 1))
				ns++;
		}
		unsigned extra = 7u & ~((1u << ns) - 1);
		for (int i = 0, k = 0; i < n; i++) { /* scalar-only sources (lane masks, lane selects) take no modifiers */
			unsigned r = SIG_ROLE(sig[i]);
			if (!(r == ISA_R_VS || r == ISA_R_VV || r == ISA_R_SS || r == ISA_R_WV || (r == ISA_R_LM && i > 1)))
				continue;
			if ((r == ISA_R_LM || r == ISA_R_SS) && ((m->neg | m->abs) >> k & 1) && fmt != ISA_FMT_VOP3P)
				return "not a valid operand: modifiers on a scalar-only source";
			k++;
		}
		unsigned hi_def = (oi->flags & ISA_F_MIX) ? 0 : 7;
		if (((m->neg | m->abs | m->neg_hi | (m->op_sel & 7)) & extra) ||
		    (fmt == ISA_FMT_VOP3P && (m->op_sel_hi & extra) != (hi_def & extra)))
			return "not a valid operand: modifier on a missing source";
		if (fmt == ISA_FMT_VOP3P && (m->neg || m->neg_hi) && ty != ISA_TY_PK16 && ty != ISA_TY_F32 &&
		    ty != ISA_TY_F16 && !(oi->flags & ISA_F_WMMA))
			return "not a valid operand: integer packed instructions take no neg_lo/neg_hi";
	}
	if (m->op_sel && fmt != ISA_FMT_VOP3P && fmt != ISA_FMT_MAI &&
	    !((oi->flags & ISA_F_OPSEL) && fmt == ISA_FMT_VOP3 && in->enc != ISA_ENC_E64))
		return "not a valid operand: op_sel is not supported by this instruction";
	if ((in->enc == ISA_ENC_DPP || in->enc == ISA_ENC_DPP8) && (oi->flags & ISA_F_NODPP))
		return "dpp variant of this instruction is not supported";
	if (fmt >= ISA_FMT_VOP1 && fmt <= ISA_FMT_VOP3P) {
		/* Constant bus: distinct SGPRs and literals read by a VALU op. */
		int nb = 0, lit = 0;
		uint16_t seen[ISA_MAX_OPS];
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			const IsaOperand *o = &in->ops[i];
			int src = r == ISA_R_VS || r == ISA_R_SS || r == ISA_R_VV || (r == ISA_R_LM && i > 1) ||
				  (r == ISA_R_LM && i == 0 && fmt == ISA_FMT_VOPC && 0);
			if (!src)
				continue;
			if (o->kind == ISA_K_LIT)
				lit = 1;
			if (o->kind != ISA_K_SGPR && o->kind != ISA_K_SPECIAL)
				continue;
			uint16_t key = (uint16_t)(o->kind << 12 | o->reg);
			int dup = 0;
			for (int j = 0; j < nb; j++)
				dup |= seen[j] == key;
			if (!dup)
				seen[nb++] = key;
		}
		if (nb + lit > (ISA_TARGET(t) == TA_TARGET_GFX1100 ? 2 : 1))
			return "invalid operand (violates constant bus restrictions)";
	}
	if (fmt == ISA_FMT_SCRATCH) { /* address: vaddr, saddr, or (gfx942/gfx11) both or neither */
		int va = -1, sa = -1;
		for (int i = 0; i < n; i++)
			if (SIG_ROLE(sig[i]) == ISA_R_XA)
				va = in->ops[i].kind == ISA_K_VGPR;
			else if (SIG_ROLE(sig[i]) == ISA_R_XS)
				sa = in->ops[i].kind != ISA_K_OFF;
		if (!va && !sa && ISA_TARGET(t) == TA_TARGET_GFX90A)
			return "operands are not valid for this GPU or mode";
		if (va && sa && ISA_TARGET(t) == TA_TARGET_GFX90A)
			return "operands are not valid for this GPU or mode";
	}
	if (fmt == ISA_FMT_MUBUF) /* vaddr: off without offen/idxen, one VGPR with either, two with both */
		for (int i = 0; i < n; i++)
			if (SIG_ROLE(sig[i]) == ISA_R_MVA) {
				const IsaOperand *o = &in->ops[i];
				int want = (m->offen != 0) + (m->idxen != 0);
				if (o->kind == ISA_K_OFF ? want != 0 : o->count != want) {
					*bad = i;
					return "invalid operand for instruction: vaddr does not match offen/idxen";
				}
			}
	if (is_fa && fmt == ISA_FMT_FLAT && in->ops[is_fa - 1].count != 2) {
		*bad = is_fa - 1;
		return "invalid operand for instruction: expected a 64-bit VGPR address";
	}
	if (is_fa && fmt == ISA_FMT_GLOBAL) { /* global address: 64-bit with `off`, 32-bit offset with saddr */
		int saddr = in->ops[n - 1].kind == ISA_K_SGPR;
		if (in->ops[is_fa - 1].count != (saddr ? 1 : 2)) {
			*bad = is_fa - 1;
			return saddr ? "invalid operand for instruction: expected a 32-bit VGPR offset"
				     : "invalid operand for instruction: expected a 64-bit VGPR address";
		}
	}
	return NULL;
}

/* Modifier fields that differ from isa_insn_init's defaults (ISA_M_*). */
static unsigned mods_set(const IsaInsn *in)
{
	const IsaMods *m = &in->mod;
	unsigned hi_def = in->op < ISA_NUM_OPS && (isa_ops[in->op].flags & ISA_F_MIX) ? 0 : 7;
	return (m->neg ? ISA_M_NEG : 0) | (m->abs ? ISA_M_ABS : 0) | (m->neg_hi ? ISA_M_NEGHI : 0) |
	       (m->op_sel ? ISA_M_OPSEL : 0) | (m->op_sel_hi != hi_def ? ISA_M_OPSELHI : 0) |
	       (m->clamp ? ISA_M_CLAMP : 0) | (m->omod ? ISA_M_OMOD : 0) | (m->offset ? ISA_M_OFFSET : 0) |
	       (m->offset0 || m->offset1 ? ISA_M_OFF01 : 0) | (m->offen ? ISA_M_OFFEN : 0) |
	       (m->idxen ? ISA_M_IDXEN : 0) | (m->gds ? ISA_M_GDS : 0) |
	       (m->cbsz || m->abid || m->blgp ? ISA_M_MAI : 0) |
	       (m->dpp_ctrl || m->row_mask != 0xf || m->bank_mask != 0xf || m->bound_ctrl ? ISA_M_DPP16 : 0) |
	       (m->fi ? ISA_M_FI : 0) | (m->dpp8 ? ISA_M_DPP8 : 0) |
	       (m->dst_sel || m->dst_unused || m->src_sel[0] || m->src_sel[1] || m->sext ? ISA_M_SDWA : 0);
}

/* The modifiers (ISA_M_*) and cache-policy bits in's encoding has fields for. */
unsigned isa_mods_ok(ta_target t, const IsaInsn *in, unsigned *cpol)
{
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100;
	IsaFmt fmt = isa_op_fmt(t, in->op);
	unsigned ok = 0;
	*cpol = 0;
	if (ISA_ENC_IS_XDPP(in->enc)) { /* the VOP3/VOP3P fields plus the DPP dword's */
		IsaInsn v3 = *in;
		v3.enc = fmt == ISA_FMT_VOP1 || fmt == ISA_FMT_VOP2 || fmt == ISA_FMT_VOPC ? ISA_ENC_E64 : ISA_ENC_DEFAULT;
		return isa_mods_ok(t, &v3, cpol) | ISA_M_FI | (in->enc == ISA_ENC_E64_DPP ? ISA_M_DPP16 : ISA_M_DPP8);
	}
	if (in->enc == ISA_ENC_SDWA) /* VOPC's SDWA word holds sdst where VOP1/VOP2 have clamp/omod */
		return ISA_M_NEG | ISA_M_ABS | ISA_M_SDWA | (fmt == ISA_FMT_VOPC ? 0 : ISA_M_CLAMP | ISA_M_OMOD);
	if (in->enc == ISA_ENC_DPP)
		return ISA_M_NEG | ISA_M_ABS | ISA_M_DPP16 | (g11 ? ISA_M_FI : 0);
	if (in->enc == ISA_ENC_DPP8)
		return g11 ? ISA_M_DPP8 | ISA_M_FI : 0;
	if (in->enc == ISA_ENC_E64)
		return ISA_M_NEG | ISA_M_ABS | ISA_M_CLAMP | ISA_M_OMOD;
	switch (fmt) {
	case ISA_FMT_SMEM: *cpol = ISA_CPOL_GLC | (g11 ? ISA_CPOL_DLC : 0); break;
	case ISA_FMT_VOP3:
		ok = ISA_M_NEG | ISA_M_ABS | ISA_M_CLAMP | ISA_M_OMOD | (isa_ops[in->op].flags & ISA_F_OPSEL ? ISA_M_OPSEL : 0);
		break;
	case ISA_FMT_VOP3P: /* v_fma_mix negates with -x/|x|, WMMA has no op_sel */
		ok = ISA_M_NEG | ISA_M_NEGHI | ISA_M_CLAMP |
		     (isa_ops[in->op].flags & ISA_F_MIX ? 0 : ISA_M_NEGLO) |
		     (isa_ops[in->op].flags & ISA_F_WMMA ? 0 : ISA_M_OPSEL | ISA_M_OPSELHI);
		break;
	case ISA_FMT_MAI: /* gfx942 f64 MFMAs take neg:[..] (in the blgp field) */
		if (isa_ops[in->op].flags & ISA_F_MFMA)
			ok = ISA_M_MAI | (ISA_TARGET(t) == TA_TARGET_GFX942 && strstr(isa_ops[in->op].name[1], "f64")
						  ? ISA_M_NEGLO : 0);
		break;
	case ISA_FMT_DS: ok = (isa_ops[in->op].flags & ISA_F_DS2 ? ISA_M_OFF01 : ISA_M_OFFSET) | ISA_M_GDS; break;
	case ISA_FMT_GLOBAL: case ISA_FMT_FLAT: case ISA_FMT_SCRATCH: case ISA_FMT_MUBUF:
		if (!in->nops) /* buffer_gl*_inv */
			break;
		ok = ISA_M_OFFSET | (fmt == ISA_FMT_MUBUF ? ISA_M_OFFEN | ISA_M_IDXEN : 0);
		*cpol = ISA_CPOL_GLC | ISA_CPOL_SLC | (g11 ? ISA_CPOL_DLC : ISA_CPOL_SC1);
		break;
	default: break;
	}
	return ok;
}

/* A modifier the chosen encoding has no field for is an error, never dropped. */
static const char *unencoded_mods(ta_target t, const IsaInsn *in)
{
	unsigned cpol, set = mods_set(in), ok = isa_mods_ok(t, in, &cpol);
	if ((ISA_ENC_IS_DPP8(in->enc) || ISA_ENC_IS_XDPP(in->enc)) && ISA_TARGET(t) != TA_TARGET_GFX1100)
		return ISA_ENC_IS_XDPP(in->enc) ? "e64_dpp variant of this instruction is not supported"
					       : "not a valid operand: dpp8 is gfx11 only";
	if (set & ~ok)
		return in->enc == ISA_ENC_DEFAULT && (set & (ISA_M_DPP16 | ISA_M_FI | ISA_M_DPP8))
			? "not a valid operand: DPP modifiers without a DPP control"
			: "not a valid operand: modifier not supported by this instruction's encoding";
	if (in->mod.cpol & ~cpol)
		return isa_op_fmt(t, in->op) == ISA_FMT_SMEM ? "invalid cache policy for SMEM instruction"
			: "not a valid operand: cache policy not supported by this instruction";
	/* glc (sc0) is what makes a memory atomic return its old value */
	uint32_t fl = isa_ops[in->op].flags;
	if ((fl & ISA_F_ATOMIC) && isa_op_fmt(t, in->op) != ISA_FMT_DS) {
		if ((fl & ISA_F_RTN) && !(in->mod.cpol & ISA_CPOL_GLC))
			return "invalid operand for instruction: a returning atomic must use glc (sc0)";
		if (!(fl & ISA_F_RTN) && (in->mod.cpol & ISA_CPOL_GLC))
			return "invalid operand for instruction: instruction must not use glc (sc0)";
	}
	return NULL;
}

const char *isa_check(ta_target t, const IsaInsn *in, int *bad)
{
	uint16_t sig[ISA_MAX_SIG * 2];
	int n;
	return check_sig(t, in, bad, sig, &n);
}

/* ---- encoding -------------------------------------------------------- */

typedef struct {
	ta_target t;
	int g11;
	int nlit;
	uint32_t lit;
	const char *err;
} Enc;

static unsigned scode(Enc *e, const IsaOperand *o)
{
	switch (o->kind) {
	case ISA_K_SGPR: return o->reg;
	case ISA_K_SPECIAL: return (unsigned)isa_special_code(e->t, (IsaSpecial)o->reg);
	case ISA_K_CONST: return o->reg;
	case ISA_K_LIT: case ISA_K_IMM:
		if (e->nlit && e->lit != (uint32_t)o->imm)
			e->err = "only one unique literal operand is allowed";
		e->nlit = 1;
		e->lit = (uint32_t)o->imm;
		return 255;
	case ISA_K_VGPR: case ISA_K_AGPR: return 256u + o->reg;
	case ISA_K_OFF: return 0;
	}
	return 0;
}

static void put32(uint8_t *p, uint32_t w)
{
	p[0] = (uint8_t)w, p[1] = (uint8_t)(w >> 8), p[2] = (uint8_t)(w >> 16), p[3] = (uint8_t)(w >> 24);
}

static int finish(Enc *e, uint8_t *out, uint32_t w0, int two, uint32_t w1, int lit_ok, Diag *d)
{
	int n = 4;
	put32(out, w0);
	if (two) {
		put32(out + 4, w1);
		n = 8;
	}
	if (e->nlit) {
		if (!lit_ok) {
			diag_error(d, "literal operands are not supported");
			return -1;
		}
		put32(out + n, e->lit);
		n += 4;
	}
	if (e->err) {
		diag_error(d, "%s", e->err);
		return -1;
	}
	return n;
}

/* VOP3 / VOP3P source list: the operands that are sources, in order. */
static int vop3_fields(Enc *e, const IsaInsn *in, const uint16_t *sig, int n, unsigned *dst,
		       unsigned *sdst, unsigned src[3])
{
	int ns = 0;
	*dst = 0, *sdst = 0;
	src[0] = src[1] = src[2] = 0;
	for (int i = 0; i < n; i++) {
		unsigned r = SIG_ROLE(sig[i]);
		const IsaOperand *o = &in->ops[i];
		if (i == 0 && (r == ISA_R_VD || r == ISA_R_WD || r == ISA_R_AVD || r == ISA_R_AD))
			*dst = o->reg;
		else if (i == 0 && (r == ISA_R_SD || r == ISA_R_LM))
			*dst = scode(e, o);
		else if (i == 1 && r == ISA_R_LM)
			*sdst = scode(e, o);
		else if (ns < 3)
			src[ns++] = scode(e, o);
	}
	return ns;
}

static int encode_sig(ta_target t, const IsaInsn *in, uint8_t out[16], Diag *d, const uint16_t *sig, int n);

/* gfx11 VOP3 DPP: src0 becomes 250 (DPP16) or 233/234 (DPP8, fi) and its VGPR
 * moves into the DPP dword that takes the literal's place. */
static int xdpp_src0(Enc *e, const IsaInsn *in, unsigned src[3], Diag *d)
{
	const IsaMods *m = &in->mod;
	if (src[0] < 256) {
		diag_error(d, "invalid operand for instruction: DPP src0 must be a VGPR");
		return -1;
	}
	if (e->nlit) {
		diag_error(d, "literal operands are not supported with DPP");
		return -1;
	}
	e->nlit = 1;
	if (in->enc == ISA_ENC_E64_DPP8) {
		e->lit = (src[0] - 256) | (m->dpp8 & 0xffffff) << 8;
		src[0] = m->fi ? 234 : 233;
	} else {
		e->lit = (src[0] - 256) | (uint32_t)(m->dpp_ctrl & 0x1ff) << 8 | (uint32_t)(m->fi & 1) << 18 |
			 (uint32_t)(m->bound_ctrl & 1) << 19 | (uint32_t)(m->bank_mask & 15) << 24 |
			 (uint32_t)(m->row_mask & 15) << 28;
		src[0] = 250;
	}
	return 0;
}

/* The signature is looked up once for the check and the encoding. */
int isa_encode(ta_target t, const IsaInsn *in, uint8_t out[16], Diag *d)
{
	int bad, n;
	uint16_t sig[ISA_MAX_SIG * 2];
	const char *msg = check_sig(t, in, &bad, sig, &n);
	if (msg) {
		diag_error(d, "%s", msg);
		return -1;
	}
	return encode_sig(t, in, out, d, sig, n);
}

/* isa_encode after isa_check succeeded. */
int isa_encode_checked(ta_target t, const IsaInsn *in, uint8_t out[16], Diag *d)
{
	uint16_t sig[ISA_MAX_SIG * 2];
	int n = isa_sig(t, in->op, sig);
	return encode_sig(t, in, out, d, sig, n);
}

/* sig, n: the op's signature (isa_sig). */
static int encode_sig(ta_target t, const IsaInsn *in, uint8_t out[16], Diag *d, const uint16_t *sig, int n)
{
	Enc e = {t, ISA_TARGET(t) == TA_TARGET_GFX1100, 0, 0, NULL};
	int ti = isa_tidx(t);
	const IsaOpInfo *oi = &isa_ops[in->op];
	IsaFmt fmt = oi->fmt[ti];
	uint32_t op = (uint32_t)oi->opc[ti];
	const IsaMods *m = &in->mod;
	const IsaOperand *o = in->ops;
	int g11 = e.g11;

	int xdpp = ISA_ENC_IS_XDPP(in->enc);
	if ((fmt == ISA_FMT_VOP1 || fmt == ISA_FMT_VOP2 || fmt == ISA_FMT_VOPC) && (in->enc == ISA_ENC_E64 || xdpp)) {
		if (oi->flags & ISA_F_NOE64) {
			diag_error(d, "e64 variant is not supported for this instruction");
			return -1;
		}
		op = (uint32_t)isa_e64_opcode(t, fmt, (int)op);
		fmt = ISA_FMT_VOP3;
	} else if ((in->enc == ISA_ENC_E64 && fmt != ISA_FMT_VOP3) || (xdpp && fmt != ISA_FMT_VOP3 && fmt != ISA_FMT_VOP3P)) {
		diag_error(d, "e64 variant is not supported for this instruction");
		return -1;
	}
	if ((in->enc == ISA_ENC_DPP || in->enc == ISA_ENC_DPP8) && fmt != ISA_FMT_VOP1 && fmt != ISA_FMT_VOP2 &&
	    !(fmt == ISA_FMT_VOPC && g11)) {
		diag_error(d, "dpp variant is not supported for this instruction");
		return -1;
	}
	if (in->enc == ISA_ENC_SDWA && (g11 || (fmt != ISA_FMT_VOP1 && fmt != ISA_FMT_VOP2 && fmt != ISA_FMT_VOPC))) {
		diag_error(d, "sdwa variant of this instruction is not supported");
		return -1;
	}

	switch (fmt) {
	case ISA_FMT_SOP2:
		return finish(&e, out, 0x80000000u | op << 23 | scode(&e, &o[0]) << 16 | scode(&e, &o[2]) << 8 |
				  scode(&e, &o[1]), 0, 0, 1, d);
	case ISA_FMT_SOP1: {
		unsigned sd = 0, s0 = 0;
		for (int i = 0; i < n; i++)
			if (SIG_ROLE(sig[i]) == ISA_R_SD)
				sd = scode(&e, &o[i]);
			else
				s0 = scode(&e, &o[i]);
		return finish(&e, out, 0xBE800000u | sd << 16 | op << 8 | s0, 0, 0, 1, d);
	}
	case ISA_FMT_SOPK: { /* sdst (or s_setreg's source) and simm16 by role; s_setreg_imm32's literal */
		uint32_t sd = 0, imm = 0;
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			if (r == ISA_R_SD || r == ISA_R_SS)
				sd = scode(&e, &o[i]);
			else if (r == ISA_R_I32)
				e.nlit = 1, e.lit = (uint32_t)o[i].imm;
			else
				imm = (uint32_t)o[i].imm & 0xffff;
		}
		return finish(&e, out, 0xB0000000u | op << 23 | sd << 16 | imm, 0, 0, 1, d);
	}
	case ISA_FMT_SOPC:
		return finish(&e, out, 0xBF000000u | op << 16 | scode(&e, &o[1]) << 8 | scode(&e, &o[0]), 0, 0, 1, d);
	case ISA_FMT_SOPP: {
		uint32_t imm = n ? (uint32_t)o[0].imm & 0xffff : 0;
		if (n && o[0].kind == ISA_K_LABEL) {
			diag_error(d, "unresolved branch target '%.*s'", (int)o[0].sym_len, o[0].sym);
			return -1;
		}
		return finish(&e, out, 0xBF800000u | op << 16 | imm, 0, 0, 1, d);
	}
	case ISA_FMT_SMEM: {
		unsigned sdata = o[0].kind == ISA_K_SGPR ? o[0].reg : scode(&e, &o[0]);
		unsigned sbase = o[1].reg >> 1;
		int imm = o[2].kind == ISA_K_IMM;
		uint32_t w0, w1;
		if (g11) {
			w0 = 0xF4000000u | op << 18 | (m->cpol & ISA_CPOL_GLC ? 1u << 14 : 0) |
			     (m->cpol & ISA_CPOL_DLC ? 1u << 13 : 0) | sdata << 6 | sbase;
			w1 = imm ? (0x7Cu << 25 | ((uint32_t)o[2].imm & 0x1fffff)) : scode(&e, &o[2]) << 25;
		} else {
			w0 = 0xC0000000u | op << 18 | (imm ? 1u << 17 : 0) | (m->cpol & ISA_CPOL_GLC ? 1u << 16 : 0) |
			     sdata << 6 | sbase;
			w1 = imm ? ((uint32_t)o[2].imm & 0xfffff) : scode(&e, &o[2]);
		}
		return finish(&e, out, w0, 1, w1, 0, d);
	}
	case ISA_FMT_VOP1: case ISA_FMT_VOP2: case ISA_FMT_VOPC: {
		unsigned dst = 0, s0 = 0, s1 = 0, sdst = 0;
		int ns = 0, k32 = -1, sdwa = in->enc == ISA_ENC_SDWA;
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			if (r == ISA_R_LM && sdwa && i == 0 && fmt == ISA_FMT_VOPC && o[i].kind != ISA_K_SPECIAL) {
				sdst = 0x80 | scode(&e, &o[i]); /* SDWA compares may write an SGPR pair (SD bit) */
				continue;
			}
			if (r == ISA_R_LM) {
				if (o[i].kind != ISA_K_SPECIAL) {
					diag_error(d, "invalid operand for instruction: e32 form requires vcc");
					return -1;
				}
				continue;
			}
			if (i == 0 && r == ISA_R_SD)
				dst = scode(&e, &o[i]);
			else if (i == 0 && (r == ISA_R_VD || r == ISA_R_AD))
				dst = o[i].reg;
			else if (r == ISA_R_K32)
				k32 = i;
			else if (ns++ == 0)
				s0 = r == ISA_R_VV || r == ISA_R_AS ? 256u + o[i].reg : scode(&e, &o[i]);
			else if (sdwa)
				s1 = o[i].kind == ISA_K_VGPR ? 256u + o[i].reg : scode(&e, &o[i]);
			else {
				if (o[i].kind != ISA_K_VGPR) {
					diag_error(d, "invalid operand for instruction: src1 of e32 form must be a VGPR");
					return -1;
				}
				s1 = o[i].reg;
			}
		}
		if (k32 >= 0) {
			if (e.nlit && e.lit != (uint32_t)o[k32].imm) {
				diag_error(d, "only one unique literal operand is allowed");
				return -1;
			}
			e.nlit = 1, e.lit = (uint32_t)o[k32].imm;
		}
		if (in->enc == ISA_ENC_DPP) {
			if (s0 < 256) {
				diag_error(d, "invalid operand for instruction: DPP src0 must be a VGPR");
				return -1;
			}
			uint32_t dpp = (s0 - 256) | (uint32_t)(m->dpp_ctrl & 0x1ff) << 8 | (uint32_t)(m->fi & 1) << 18 |
				       (uint32_t)(m->bound_ctrl & 1) << 19 | (uint32_t)(m->neg & 1) << 20 |
				       (uint32_t)(m->abs & 1) << 21 | (uint32_t)(m->neg >> 1 & 1) << 22 |
				       (uint32_t)(m->abs >> 1 & 1) << 23 | (uint32_t)(m->bank_mask & 15) << 24 |
				       (uint32_t)(m->row_mask & 15) << 28;
			s0 = 250;
			if (e.nlit) {
				diag_error(d, "literal operands are not supported with DPP");
				return -1;
			}
			e.nlit = 1, e.lit = dpp;
		} else if (in->enc == ISA_ENC_DPP8) {
			if (s0 < 256) {
				diag_error(d, "invalid operand for instruction: DPP src0 must be a VGPR");
				return -1;
			}
			if (e.nlit) {
				diag_error(d, "literal operands are not supported with DPP");
				return -1;
			}
			e.nlit = 1, e.lit = (s0 - 256) | (m->dpp8 & 0xffffff) << 8;
			s0 = m->fi ? 234 : 233;
		} else if (sdwa) {
			/* src0/src1: a VGPR, or with S0/S1 an SGPR / inline constant code */
			if (e.nlit || s0 == 255 || s1 == 255) {
				diag_error(d, "literal operands are not supported with SDWA");
				return -1;
			}
			uint32_t w = (s0 & 0xff) | (s0 < 256 ? 1u << 23 : 0) | (uint32_t)ISA_SDWA_SEL(m->src_sel[0]) << 16 |
				     (uint32_t)(m->sext & 1) << 19 | (uint32_t)(m->neg & 1) << 20 | (uint32_t)(m->abs & 1) << 21 |
				     (uint32_t)ISA_SDWA_SEL(m->src_sel[1]) << 24 | (uint32_t)(m->sext >> 1 & 1) << 27 |
				     (uint32_t)(m->neg >> 1 & 1) << 28 | (uint32_t)(m->abs >> 1 & 1) << 29 |
				     (fmt != ISA_FMT_VOP1 && s1 < 256 ? 1u << 31 : 0);
			if (fmt == ISA_FMT_VOPC)
				w |= sdst << 8;
			else
				w |= (uint32_t)ISA_SDWA_SEL(m->dst_sel) << 8 | (uint32_t)ISA_SDWA_UNUSED(m->dst_unused) << 11 |
				     (uint32_t)(m->clamp & 1) << 13 | (uint32_t)(m->omod & 3) << 14;
			if (fmt == ISA_FMT_VOP1)
				w &= ~(7u << 24); /* no src1: its select field stays 0 (llvm-mc) */
			s0 = 249, s1 &= 0xff;
			e.nlit = 1, e.lit = w;
		} else if (m->neg || m->abs || m->clamp || m->omod) {
			diag_error(d, "invalid operand for instruction: modifiers require the e64 form");
			return -1;
		}
		uint32_t w;
		if (fmt == ISA_FMT_VOP1)
			w = 0x7E000000u | dst << 17 | op << 9 | s0;
		else if (fmt == ISA_FMT_VOP2)
			w = op << 25 | dst << 17 | s1 << 9 | s0;
		else
			w = 0x7C000000u | op << 17 | s1 << 9 | s0;
		return finish(&e, out, w, 0, 0, 1, d);
	}
	case ISA_FMT_VOP3: {
		unsigned dst, sdst, src[3];
		vop3_fields(&e, in, sig, n, &dst, &sdst, src);
		if ((oi->flags & ISA_F_CMPX) && g11)
			dst = 126; /* exec_lo */
		if (xdpp && xdpp_src0(&e, in, src, d))
			return -1;
		uint32_t w0 = (g11 ? 0xD4000000u : 0xD0000000u) | op << 16 | (uint32_t)(m->clamp & 1) << 15 |
			      (uint32_t)(m->op_sel & 15) << 11 | (uint32_t)(m->abs & 7) << 8 | (dst & 0xff);
		if (sdst)
			w0 = (w0 & ~0x7f00u) | sdst << 8;
		uint32_t w1 = (uint32_t)(m->neg & 7) << 29 | (uint32_t)(m->omod & 3) << 27 | src[2] << 18 |
			      src[1] << 9 | src[0];
		return finish(&e, out, w0, 1, w1, g11, d);
	}
	case ISA_FMT_VOP3P: {
		unsigned dst, sdst, src[3];
		vop3_fields(&e, in, sig, n, &dst, &sdst, src);
		if (xdpp && xdpp_src0(&e, in, src, d))
			return -1;
		uint32_t w0 = (g11 ? 0xCC000000u : 0xD3800000u) | op << 16 | (uint32_t)(m->clamp & 1) << 15 |
			      (uint32_t)(m->op_sel_hi >> 2 & 1) << 14 | (uint32_t)(m->op_sel & 7) << 11 |
			      (uint32_t)(m->neg_hi & 7) << 8 | (dst & 0xff);
		uint32_t w1 = (uint32_t)(m->neg & 7) << 29 | (uint32_t)(m->op_sel_hi & 3) << 27 | src[2] << 18 |
			      src[1] << 9 | src[0];
		return finish(&e, out, w0, 1, w1, g11, d);
	}
	case ISA_FMT_MAI: {
		unsigned dst, sdst, src[3];
		vop3_fields(&e, in, sig, n, &dst, &sdst, src);
		uint32_t w0 = 0xD3800000u | op << 16 | (dst & 0xff), w1;
		if (oi->flags & ISA_F_MFMA) {
			w0 |= (o[0].kind == ISA_K_AGPR ? 1u << 15 : 0) | (uint32_t)(m->abid & 15) << 11 |
			      (uint32_t)(m->cbsz & 7) << 8;
			w1 = (uint32_t)(m->blgp & 7) << 29 | (o[1].kind == ISA_K_AGPR ? 1u << 27 : 0) |
			     (o[2].kind == ISA_K_AGPR ? 1u << 28 : 0) | src[2] << 18 | src[1] << 9 | src[0];
		} else { /* v_accvgpr_read/write: VOP3P with the default op_sel_hi */
			w0 |= 1u << 14;
			w1 = 3u << 27 | src[0];
		}
		return finish(&e, out, w0, 1, w1, 0, d);
	}
	case ISA_FMT_VOPD: {
		uint16_t sy[ISA_MAX_SIG];
		int nx = n, ny = isa_sig(t, in->op_y, sy);
		unsigned opy = (unsigned)isa_ops[in->op_y].opc[ti], f[2][3] = {{0, 0, 0}, {0, 0, 0}};
		for (int h = 0; h < 2; h++) { /* dst, src0, vsrc1 of each half */
			const IsaOperand *x = h ? o + nx : o;
			const uint16_t *sg = h ? sy : sig;
			for (int i = 0; i < (h ? ny : nx); i++) {
				unsigned r = SIG_ROLE(sg[i]);
				if (i == 0)
					f[h][0] = x[i].reg;
				else if (r == ISA_R_VS)
					f[h][1] = scode(&e, &x[i]);
				else if (r == ISA_R_VV)
					f[h][2] = x[i].reg;
				else if (r == ISA_R_K32)
					scode(&e, &x[i]);
			}
		}
		uint32_t w0 = 0xC8000000u | op << 22 | opy << 17 | f[0][2] << 9 | f[0][1];
		uint32_t w1 = f[0][0] << 24 | (f[1][0] >> 1) << 17 | f[1][2] << 9 | f[1][1];
		return finish(&e, out, w0, 1, w1, 1, d);
	}
	case ISA_FMT_DS: {
		unsigned vdst = 0, addr = 0, dat[2] = {0, 0};
		int nd = 0, acc = 0;
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			if (r == ISA_R_VD)
				vdst = o[i].reg;
			else if (r == ISA_R_DA)
				addr = o[i].reg;
			else if (r == ISA_R_DD && nd < 2)
				dat[nd++] = o[i].reg;
			acc |= o[i].kind == ISA_K_AGPR;
		}
		unsigned off0, off1;
		if (oi->flags & ISA_F_DS2)
			off0 = m->offset0, off1 = m->offset1;
		else {
			if (m->offset < 0 || m->offset > 0xffff) {
				diag_error(d, "invalid offset: expected a 16-bit unsigned offset");
				return -1;
			}
			off0 = (unsigned)m->offset & 0xff, off1 = (unsigned)m->offset >> 8;
		}
		uint32_t w0 = g11 ? 0xD8000000u | op << 18 | (uint32_t)(m->gds & 1) << 17
				  : 0xD8000000u | (uint32_t)acc << 25 | op << 17 | (uint32_t)(m->gds & 1) << 16;
		w0 |= off1 << 8 | off0;
		return finish(&e, out, w0, 1, vdst << 24 | dat[1] << 16 | dat[0] << 8 | addr, 0, d);
	}
	case ISA_FMT_GLOBAL: case ISA_FMT_FLAT: case ISA_FMT_SCRATCH: {
		unsigned seg = fmt == ISA_FMT_GLOBAL ? 2 : fmt == ISA_FMT_SCRATCH ? 1 : 0;
		unsigned vdst = 0, addr = 0, data = 0, acc = 0, sve = 0;
		unsigned saddr = fmt == ISA_FMT_FLAT && !g11 ? 0 : g11 ? 0x7C : 0x7F;
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			acc |= o[i].kind == ISA_K_AGPR;
			if (r == ISA_R_VD)
				vdst = o[i].reg;
			else if (r == ISA_R_FA)
				addr = o[i].reg;
			else if (r == ISA_R_XA && o[i].kind == ISA_K_VGPR)
				addr = o[i].reg, sve = 1;
			else if (r == ISA_R_DD)
				data = o[i].reg;
			else if ((r == ISA_R_FS || r == ISA_R_XS) && o[i].kind != ISA_K_OFF)
				saddr = o[i].kind == ISA_K_SGPR ? o[i].reg : scode(&e, &o[i]);
		}
		int lo = fmt == ISA_FMT_FLAT ? 0 : -4096, hi = 4095;
		if (m->offset < lo || m->offset > hi) {
			diag_error(d, fmt == ISA_FMT_FLAT ? "invalid offset: expected a 12-bit unsigned offset"
							  : "invalid offset: expected a 13-bit signed offset");
			return -1;
		}
		uint32_t off = (uint32_t)m->offset & 0x1fff, w0, w1;
		if (g11) {
			w0 = 0xDC000000u | op << 18 | seg << 16 | (m->cpol & ISA_CPOL_SLC ? 1u << 15 : 0) |
			     (m->cpol & ISA_CPOL_GLC ? 1u << 14 : 0) | (m->cpol & ISA_CPOL_DLC ? 1u << 13 : 0) | off;
			w1 = vdst << 24 | (fmt == ISA_FMT_SCRATCH ? sve : 0) << 23 | saddr << 16 | data << 8 | addr;
		} else {
			w0 = 0xDC000000u | (m->cpol & ISA_CPOL_SC1 ? 1u << 25 : 0) | op << 18 |
			     (m->cpol & ISA_CPOL_SLC ? 1u << 17 : 0) | (m->cpol & ISA_CPOL_GLC ? 1u << 16 : 0) |
			     seg << 14 | (sve && ISA_TARGET(t) == TA_TARGET_GFX942 ? 1u << 13 : 0) | off;
			w1 = vdst << 24 | acc << 23 | saddr << 16 | data << 8 | addr;
		}
		return finish(&e, out, w0, 1, w1, 0, d);
	}
	case ISA_FMT_MUBUF: {
		unsigned vdata = 0, vaddr = 0, rsrc = 0, soff = 0, acc = 0;
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			acc |= o[i].kind == ISA_K_AGPR;
			if (r == ISA_R_VD || r == ISA_R_DD)
				vdata = o[i].reg;
			else if (r == ISA_R_MVA)
				vaddr = o[i].kind == ISA_K_VGPR ? o[i].reg : 0;
			else if (r == ISA_R_RSRC)
				rsrc = o[i].reg >> 2;
			else if (r == ISA_R_MSO)
				soff = scode(&e, &o[i]);
		}
		if (m->offset < 0 || m->offset > 4095) {
			diag_error(d, "invalid offset: expected a 12-bit unsigned offset");
			return -1;
		}
		uint32_t w0, w1 = soff << 24 | acc << 23 | rsrc << 16 | vdata << 8 | vaddr;
		if (g11) {
			w0 = 0xE0000000u | op << 18 | (m->cpol & ISA_CPOL_GLC ? 1u << 14 : 0) |
			     (m->cpol & ISA_CPOL_DLC ? 1u << 13 : 0) | (m->cpol & ISA_CPOL_SLC ? 1u << 12 : 0) |
			     (uint32_t)m->offset;
			w1 |= (uint32_t)(m->idxen & 1) << 23 | (uint32_t)(m->offen & 1) << 22;
		} else {
			w0 = 0xE0000000u | op << 18 | (m->cpol & ISA_CPOL_SLC ? 1u << 17 : 0) |
			     (m->cpol & ISA_CPOL_SC1 ? 1u << 15 : 0) | (m->cpol & ISA_CPOL_GLC ? 1u << 14 : 0) |
			     (uint32_t)(m->idxen & 1) << 13 | (uint32_t)(m->offen & 1) << 12 | (uint32_t)m->offset;
		}
		return finish(&e, out, w0, 1, w1, 0, d);
	}
	default:
		break;
	}
	diag_error(d, "instruction not supported on this GPU");
	return -1;
}
