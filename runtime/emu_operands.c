/* emu_operands.c — operand roles, source fetch (part of the emulator's instruction semantics). */
#include "emu_exec_impl.h"

/* ---- operand roles ------------------------------------------------------ */


/* Read/write role of operand j; sig/ns describe the (component) op. */
static int access_of(const uint16_t *sig, int ns, int j, uint32_t flags)
{
	if (j >= ns)
		return 0;
	int r = ISA_SIG_ROLE(sig[j]);
	switch (r) {
	case ISA_R_SD: case ISA_R_VD: case ISA_R_AVD: case ISA_R_AD: case ISA_R_WD:
		return WR | (j == 0 && (flags & ISA_F_TIED) ? RD : 0);
	case ISA_R_LM:
		if (j == 0 || (j == 1 && ISA_SIG_ROLE(sig[0]) == ISA_R_VD))
			return WR;
		return RD;
	case ISA_R_SS: case ISA_R_VS: case ISA_R_VV: case ISA_R_AVS: case ISA_R_AS: case ISA_R_WV:
	case ISA_R_SB: case ISA_R_SOFF: case ISA_R_DA: case ISA_R_DD: case ISA_R_FA: case ISA_R_FS:
	case ISA_R_MVA: case ISA_R_RSRC: case ISA_R_MSO: case ISA_R_K32:
		return RD;
	default:
		return 0;
	}
}

/* Internal SGPR index of a special operand, or -1 (scc, vccz, execz, null). */
int special_sreg(int sp)
{
	switch (sp) {
	case ISA_SP_VCC_LO: return ES_VCC;
	case ISA_SP_VCC_HI: return ES_VCC + 1;
	case ISA_SP_EXEC_LO: return ES_EXEC;
	case ISA_SP_EXEC_HI: return ES_EXEC + 1;
	case ISA_SP_M0: return ES_M0;
	case ISA_SP_FLAT_SCRATCH_LO: return 102;
	case ISA_SP_FLAT_SCRATCH_HI: return 103;
	default: return -1;
	}
}

/* Operand access table for an instruction: acc[j] = RD/WR bits. */
int operand_access(const EmuDevice *dev, const IsaInsn *in, uint8_t acc[ISA_MAX_OPS])
{
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(dev->wt, in->op, sig), k = 0;
	uint32_t fl = isa_ops[in->op].flags;
	for (int j = 0; j < n && k < ISA_MAX_OPS; j++)
		acc[k++] = (uint8_t)access_of(sig, n, j, fl);
	if (isa_op_fmt(dev->wt, in->op) == ISA_FMT_VOPD) {
		int ny = isa_sig(dev->wt, in->op_y, sig);
		fl = isa_ops[in->op_y].flags;
		for (int j = 0; j < ny && k < ISA_MAX_OPS; j++)
			acc[k++] = (uint8_t)access_of(sig, ny, j, fl);
	}
	for (int j = k; j < ISA_MAX_OPS; j++)
		acc[j] = 0;
	return k;
}

/* MFMA pass counts and whether it is XDL (gfx942 hazard tables); emu_mma.c. */
int emu_mma_passes(const EmuDevice *dev, unsigned op, int *xdl);

/* Checks every register the instruction reads. */
int check_reads(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, const uint8_t *acc)
{
	uint32_t fl = isa_ops[in->op].flags;
	int mma = (fl & (ISA_F_MFMA | ISA_F_WMMA)) != 0, vmem = (fl & (ISA_F_GLOBAL | ISA_F_MUBUF)) != 0;
	int valu_like = (fl & (ISA_F_VALU | ISA_F_DS | ISA_F_GLOBAL | ISA_F_MUBUF)) != 0;
	uint64_t lanes = mma ? w->live : emu_exec_mask(w);
	int lane_specific = in->enc == ISA_ENC_DPP || in->op == ISA_V_READLANE_B32 || in->op == ISA_V_READFIRSTLANE_B32 ||
			    in->op == ISA_DS_BPERMUTE_B32 || in->op == ISA_DS_SWIZZLE_B32 ||
			    in->op == ISA_V_PERMLANE16_B32 || in->op == ISA_V_PERMLANEX16_B32;
	for (int j = 0; j < in->nops; j++) {
		if (!(acc[j] & RD))
			continue;
		const IsaOperand *o = &in->ops[j];
		if (o->kind == ISA_K_SGPR || o->kind == ISA_K_SPECIAL) {
			int base = o->kind == ISA_K_SGPR ? o->reg : special_sreg(o->reg);
			if (base < 0)
				continue;
			int cnt = o->kind == ISA_K_SPECIAL ? (o->count == 2 ? 2 : 1) : o->count;
			if (o->kind == ISA_K_SPECIAL && w->lanes == 32 && (o->reg == ISA_SP_VCC_LO || o->reg == ISA_SP_EXEC_LO))
				cnt = 1;
			for (int r = base; r < base + cnt && r < ES_NSGPR; r++) {
				if (w->spend[r] && (dev->checks & EMU_CHECK_WAITCNT)) {
					emu_pending_read(dev, w, insn, 's', r);
					return -1;
				}
				if (!w->sinit[r] && (dev->checks & EMU_CHECK_UNINIT)) {
					emu_fail(dev, w, insn, "reads %s%d, which nothing has written",
						 r == ES_VCC || r == ES_VCC + 1 ? "vcc+" : r == ES_M0 ? "m0+" : "s",
						 r == ES_VCC || r == ES_VCC + 1 ? r - ES_VCC : r == ES_M0 ? 0 : r);
					return -1;
				}
				if (vmem && !dev->g11 && (dev->checks & EMU_CHECK_HAZARD) && w->swrite_valu[r] &&
				    w->clock - w->swrite_valu[r] - 1 < 5) {
					emu_fail(dev, w, insn, "VMEM reads s%d %llu wait states after a VALU wrote it; gfx9 "
						 "needs 5 (insert s_nop %llu)", r,
						 (unsigned long long)(w->clock - w->swrite_valu[r] - 1),
						 (unsigned long long)(4 - (w->clock - w->swrite_valu[r] - 1)));
					return -1;
				}
			}
		} else if (o->kind == ISA_K_VGPR || o->kind == ISA_K_AGPR) {
			int ag = o->kind == ISA_K_AGPR;
			const uint8_t *pend = ag ? w->apend : w->vpend;
			const uint64_t *init = ag ? w->ainit : w->vinit;
			const uint64_t *ready = ag ? w->aready : w->vready;
			/* MFMA SrcC identical to the previous MFMA's D: back-to-back
			 * accumulation needs no wait states. */
			int same_c = mma && j == 3 && w->last_mfma_dn && o->reg == w->last_mfma_dreg &&
				     o->count == w->last_mfma_dn && ag == w->last_mfma_afile;
			for (int r = o->reg; r < o->reg + o->count; r++) {
				if (pend[r] && (dev->checks & EMU_CHECK_WAITCNT)) {
					emu_pending_read(dev, w, insn, ag ? 'a' : 'v', r);
					return -1;
				}
				uint64_t need = lanes & ((j == 1 || j == 0) && lane_specific ? 0 : ~0ull);
				if (in->op == ISA_V_READLANE_B32 || in->op == ISA_DS_BPERMUTE_B32)
					need = 0;
				if ((init[r] & need) != need && (dev->checks & EMU_CHECK_UNINIT)) {
					int l = __builtin_ctzll(need & ~init[r]);
					emu_fail(dev, w, insn, "reads %c%d in lane %d, which nothing has written", ag ? 'a' : 'v', r,
						 l);
					return -1;
				}
				if (!dev->g11 && !ag && in->enc == ISA_ENC_DPP && j == 1 && w->vvalu[r] &&
				    w->clock - w->vvalu[r] - 1 < 2 && (dev->checks & EMU_CHECK_HAZARD)) {
					emu_fail(dev, w, insn, "DPP reads v%d %llu wait states after a VALU wrote it; gfx9 needs 2 "
						 "(insert s_nop)", r, (unsigned long long)(w->clock - w->vvalu[r] - 1));
					return -1;
				}
				if (!dev->g11 && valu_like && !same_c && ready[r] > w->clock && (dev->checks & EMU_CHECK_HAZARD)) {
					emu_fail(dev, w, insn, "reads %c%d too soon after the MFMA that writes it: %llu more wait "
						 "states needed (insert s_nop)", ag ? 'a' : 'v', r,
						 (unsigned long long)(ready[r] - w->clock));
					return -1;
				}
			}
		}
	}
	return 0;
}

/* ---- source fetch ------------------------------------------------------- */

static uint32_t inline_const(int code, int ty, int hi)
{
	if (code >= 128 && code <= 208) {
		int32_t v = code <= 192 ? code - 128 : 192 - code;
		if (ty == ISA_TY_F64 || ty == ISA_TY_B64)
			return hi ? (uint32_t)(v < 0 ? -1 : 0) : (uint32_t)v;
		return (uint32_t)v;
	}
	static const uint32_t f32[9] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000,
					0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983};
	static const uint16_t f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};
	static const uint32_t f64hi[9] = {0x3fe00000, 0xbfe00000, 0x3ff00000, 0xbff00000, 0x40000000,
					  0xc0000000, 0x40100000, 0xc0100000, 0x3fc45f30};
	int i = code - 240;
	if (i < 0 || i > 8)
		return 0;
	switch (ty) {
	case ISA_TY_F16: case ISA_TY_B16: case ISA_TY_PK16: case ISA_TY_PKI16:
		return f16[i];
	case ISA_TY_F64: case ISA_TY_B64:
		return hi ? f64hi[i] : (i == 8 ? 0x6dc9c882u : 0);
	default:
		return f32[i];
	}
}

/* Scalar value of operand o (word `hi` of a 64-bit pair). */
uint32_t scalar_val(EmuWave *w, const IsaOperand *o, int ty, int hi)
{
	switch (o->kind) {
	case ISA_K_SGPR:
		return w->s[o->reg + (hi && o->count > 1 ? 1 : 0)];
	case ISA_K_CONST:
		return inline_const(o->reg, ty, hi);
	case ISA_K_LIT:
		if (hi)
			return ty == ISA_TY_F64 ? (uint32_t)o->imm : 0;
		return ty == ISA_TY_F64 ? 0 : (uint32_t)o->imm;
	case ISA_K_IMM:
		return (uint32_t)o->imm;
	case ISA_K_SPECIAL:
		switch (o->reg) {
		case ISA_SP_SCC: return (uint32_t)w->scc;
		case ISA_SP_VCCZ: return (w->s[ES_VCC] | (w->lanes == 64 ? w->s[ES_VCC + 1] : 0)) == 0;
		case ISA_SP_EXECZ: return emu_exec_mask(w) == 0;
		case ISA_SP_NULL: return 0;
		default: {
			int r = special_sreg(o->reg);
			return r < 0 ? 0 : w->s[r + (hi ? 1 : 0)];
		}
		}
	default:
		return 0;
	}
}


/* DPP source lane for lane l, or -1 (invalid: bound_ctrl / disabled). */
int dpp_src(const EmuDevice *dev, int ctrl, int l, int lanes)
{
	int row = l & ~15, r = l & 15;
	if (ctrl <= 0xff)
		return (l & ~3) | (ctrl >> ((l & 3) * 2) & 3);
	if (ctrl >= 0x101 && ctrl <= 0x10f) { /* row_shl */
		int s = r + (ctrl & 15);
		return s < 16 ? row + s : -1;
	}
	if (ctrl >= 0x111 && ctrl <= 0x11f) { /* row_shr */
		int s = r - (ctrl & 15);
		return s >= 0 ? row + s : -1;
	}
	if (ctrl >= 0x121 && ctrl <= 0x12f) /* row_ror */
		return row + ((r + (ctrl & 15)) & 15);
	if (ctrl == 0x140) /* row_mirror */
		return row + 15 - r;
	if (ctrl == 0x141) /* row_half_mirror */
		return row + ((r & 8) | (7 - (r & 7)));
	if (!dev->g11) {
		if (ctrl == 0x130) /* wave_shl:1 */
			return l + 1 < lanes ? l + 1 : -1;
		if (ctrl == 0x134) /* wave_rol:1 */
			return (l + 1) % lanes;
		if (ctrl == 0x138) /* wave_shr:1 */
			return l - 1;
		if (ctrl == 0x13c) /* wave_ror:1 */
			return (l + lanes - 1) % lanes;
		if (ctrl == 0x142) /* row_bcast:15 */
			return row >= 16 && r >= 0 ? row - 1 : -1;
		if (ctrl == 0x143) /* row_bcast:31 */
			return l >= 32 ? 31 : -1;
	} else {
		if (ctrl >= 0x150 && ctrl <= 0x15f) /* row_share */
			return row + (ctrl & 15);
		if (ctrl >= 0x160 && ctrl <= 0x16f) /* row_xmask */
			return row + ((r ^ ctrl) & 15);
	}
	return -2; /* unknown control */
}


/* Fetches source operand o for every lane (words as needed). */
void fetch(EmuDevice *dev, EmuWave *w, const IsaOperand *o, int ty, int words, Src *s)
{
	int L = w->lanes;
	for (int h = 0; h < words && h < 2; h++) {
		if (o->kind == ISA_K_VGPR || o->kind == ISA_K_AGPR) {
			const uint32_t *p = emu_vreg(w, o->kind == ISA_K_AGPR, o->reg + (h < o->count ? h : 0));
			memcpy(s->v[h], p, (size_t)L * 4);
		} else {
			uint32_t x = scalar_val(w, o, ty, h);
			for (int l = 0; l < L; l++)
				s->v[h][l] = x;
		}
	}
	(void)dev;
}

/* Flush f32 denormals when the descriptor asks for it. */
float ftz(const EmuDevice *dev, float x)
{
	if (dev->denorm32 != 3 && fpclassify(x) == FP_SUBNORMAL)
		return copysignf(0.0f, x);
	return x;
}


/* f32 -> f16 rounding toward zero (v_cvt_pkrtz_f16_f32). */
uint32_t f2h_rtz(float f)
{
	uint32_t h = d2h((double)f);
	if (isnan(f) || isinf(f))
		return h;
	double back = h2d(h);
	if (fabs(back) > fabs((double)f)) /* rounded away from zero: step back one ulp */
		h = h - 1;
	if ((h & 0x7fff) == 0x7c00)
		h -= 1; /* no overflow to inf toward zero */
	return h & 0xffff;
}
