/* emu_exec.c — what each instruction does.  emu_step checks the operands an
 * instruction reads (results still in flight, never-written lanes, gfx9
 * wait-state hazards), runs it, and marks what it wrote.
 *
 * VALU instructions fetch every source into a lane array first (SGPRs,
 * inline constants and literals broadcast; DPP permutes src0; VOP3 neg/abs
 * applied for float types), compute into a result array, then write the
 * lanes enabled by exec (and DPP's row/bank masks).  Float arithmetic is the
 * host's IEEE single/double with round-to-nearest-even; f16 goes through
 * double with one rounding (exact for add/sub/mul).  Assumptions are listed
 * in docs/emulator.md. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "emu_impl.h"

void emu_pending_read(EmuDevice *dev, EmuWave *w, int insn, int file, int r);

/* ---- operand roles ------------------------------------------------------ */

enum { RD = 1, WR = 2 };

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
static int special_sreg(int sp)
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
static int operand_access(const EmuDevice *dev, const IsaInsn *in, uint8_t acc[ISA_MAX_OPS])
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
static int check_reads(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, const uint8_t *acc)
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
static uint32_t scalar_val(EmuWave *w, const IsaOperand *o, int ty, int hi)
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

static int is_float_ty(int ty) { return ty == ISA_TY_F32 || ty == ISA_TY_F16 || ty == ISA_TY_F64; }

/* DPP source lane for lane l, or -1 (invalid: bound_ctrl / disabled). */
static int dpp_src(const EmuDevice *dev, int ctrl, int l, int lanes)
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

typedef struct {
	uint32_t v[2][64]; /* word 0 / word 1 per lane */
} Src;

/* Fetches source operand o for every lane (words as needed). */
static void fetch(EmuDevice *dev, EmuWave *w, const IsaOperand *o, int ty, int words, Src *s)
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
static inline float ftz(const EmuDevice *dev, float x)
{
	if (dev->denorm32 != 3 && fpclassify(x) == FP_SUBNORMAL)
		return copysignf(0.0f, x);
	return x;
}

static double h2d(uint32_t h) { return dt_f16_to_double((uint16_t)h); }
static uint32_t d2h(double d) { return dt_f16_from_double(d); }

/* f32 -> f16 rounding toward zero (v_cvt_pkrtz_f16_f32). */
static uint32_t f2h_rtz(float f)
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
static pthread_once_t cmp_once = PTHREAD_ONCE_INIT;

static void build_cmp(void)
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

static int32_t sext(uint32_t v, int bits) { return (int32_t)(v << (32 - bits)) >> (32 - bits); }

static uint32_t perm_byte(uint64_t x, unsigned sel)
{
	sel &= 0xff;
	if (sel < 8)
		return (uint32_t)(x >> (8 * sel)) & 0xff;
	if (sel < 12)
		return (x >> (16 * (sel - 8) + 15) & 1) ? 0xff : 0;
	return sel == 12 ? 0 : 0xff;
}

static uint32_t clz32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 0xffffffffu; }

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
		/* vcc is an implicit source: check it like an operand. */
		for (int k = 0; k < (L == 64 ? 2 : 1); k++) {
			if (!w->sinit[ES_VCC + k] && (dev->checks & EMU_CHECK_UNINIT)) {
				emu_fail(dev, w, insn, "reads vcc+%d, which nothing has written", k);
				return -1;
			}
			if (!dev->g11 && (dev->checks & EMU_CHECK_HAZARD) && w->swrite_valu[ES_VCC + k] &&
			    w->clock - w->swrite_valu[ES_VCC + k] - 1 < 4) {
				emu_fail(dev, w, insn, "v_div_fmas reads vcc %llu wait states after a VALU wrote it; gfx9 "
					 "needs 4", (unsigned long long)(w->clock - w->swrite_valu[ES_VCC + k] - 1));
				return -1;
			}
		}
		uint64_t vcc = (uint64_t)w->s[ES_VCC + 1] << 32 | w->s[ES_VCC];
		EACH D[l] = vcc >> l & 1 ? U(fma_scaled_f32(F(a[l]), F(b[l]), F(c[l]), f32_exp(F(c[l])) > 127 ? 64 : -64))
				       : U(fmaf(F(a[l]), F(b[l]), F(c[l])));
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
	case ISA_V_ADD_F64: case ISA_V_MUL_F64: case ISA_V_FMA_F64: EACH {
		uint64_t ux = (uint64_t)a1[l] << 32 | a[l], uy = (uint64_t)b1[l] << 32 | b[l], uz = (uint64_t)c1[l] << 32 | c[l];
		double x, y, z, res;
		memcpy(&x, &ux, 8), memcpy(&y, &uy, 8), memcpy(&z, &uz, 8);
		res = op == ISA_V_ADD_F64 ? x + y : op == ISA_V_MUL_F64 ? x * y : fma(x, y, z);
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

static int exec_valu(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, const uint8_t *acc)
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

/* ---- SALU --------------------------------------------------------------- */

static void swrite(EmuDevice *dev, EmuWave *w, int insn, const IsaOperand *o, uint64_t v, int n)
{
	int base = o->kind == ISA_K_SGPR ? o->reg : o->kind == ISA_K_SPECIAL ? special_sreg(o->reg) : -1;
	if (base < 0)
		return;
	for (int i = 0; i < n && base + i < ES_NSGPR; i++) {
		if (w->spend[base + i] && (dev->checks & EMU_CHECK_WAITCNT)) {
			emu_fail(dev, w, insn, "overwrites s%d while a load into it is still pending", base + i);
			return;
		}
		w->s[base + i] = (uint32_t)(v >> (32 * i));
		w->sinit[base + i] = 1;
		w->swrite_valu[base + i] = 0;
	}
}

static uint64_t sread(EmuWave *w, const IsaOperand *o, int n)
{
	int ty = n == 2 ? ISA_TY_B64 : ISA_TY_B32;
	uint64_t v = scalar_val(w, o, ty, 0);
	if (n == 2) {
		if (o->kind == ISA_K_CONST || o->kind == ISA_K_LIT)
			v = o->kind == ISA_K_LIT ? (uint64_t)(int64_t)o->imm : (uint64_t)scalar_val(w, o, ty, 1) << 32 | v;
		else
			v |= (uint64_t)scalar_val(w, o, ty, 1) << 32;
	}
	return v;
}

static int branch_to(EmuDevice *dev, EmuWave *w, int insn, int32_t simm)
{
	EmuKernel *k = dev->k;
	int64_t tgt = (int64_t)k->off[insn] + k->len[insn] + (int64_t)(int16_t)simm * 4; /* simm16, signed */
	if (tgt < 0 || tgt >= (int64_t)k->size || k->at[tgt / 4] < 0) {
		emu_fail(dev, w, insn, "branch to +0x%llx, which is not an instruction of the kernel", (long long)tgt);
		return -1;
	}
	w->pc = k->at[tgt / 4];
	dev->stats.branches++;
	return 0;
}

static int exec_salu(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	unsigned op = in->op;
	const IsaOperand *o = in->ops;
	int w64 = isa_ops[op].type == ISA_TY_B64;
	int n = w64 ? 2 : 1;
	uint64_t a = 0, b = 0, res = 0;
	int scc = w->scc, wscc = (isa_ops[op].flags & ISA_F_WSCC) != 0;
	dev->stats.salu++;
	IsaFmt fmt = isa_op_fmt(dev->wt, op);
	if (fmt == ISA_FMT_SOP2) {
		a = sread(w, &o[1], o[1].count == 2 ? 2 : n);
		b = sread(w, &o[2], o[2].count == 2 ? 2 : (op == ISA_S_LSHL_B64 || op == ISA_S_LSHR_B64 || op == ISA_S_ASHR_I64 ||
							    op == ISA_S_BFE_U64 || op == ISA_S_BFE_I64) ? 1 : n);
	} else if (fmt == ISA_FMT_SOP1 && in->nops >= 2) {
		a = sread(w, &o[1], o[1].count == 2 ? 2 : n);
	} else if (fmt == ISA_FMT_SOPC) {
		a = sread(w, &o[0], o[0].count == 2 ? 2 : n);
		b = sread(w, &o[1], o[1].count == 2 ? 2 : (op == ISA_S_BITCMP0_B64 || op == ISA_S_BITCMP1_B64) ? 1 : n);
	}
	uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
	uint64_t ex = emu_exec_mask(w);
	int dst_n = n;
	switch (op) {
	/* SOP2 */
	case ISA_S_ADD_U32: res = (uint64_t)a32 + b32; scc = res >> 32 & 1; res = (uint32_t)res; break;
	case ISA_S_SUB_U32: res = (uint32_t)(a32 - b32); scc = b32 > a32; break;
	case ISA_S_ADD_I32: res = (uint32_t)(a32 + b32); scc = ((~(a32 ^ b32) & (a32 ^ (uint32_t)res)) >> 31) & 1; break;
	case ISA_S_SUB_I32: res = (uint32_t)(a32 - b32); scc = (((a32 ^ b32) & (a32 ^ (uint32_t)res)) >> 31) & 1; break;
	case ISA_S_ADDC_U32: res = (uint64_t)a32 + b32 + (uint64_t)w->scc; scc = res >> 32 & 1; res = (uint32_t)res; break;
	case ISA_S_SUBB_U32: res = (uint32_t)(a32 - b32 - (uint32_t)w->scc); scc = (uint64_t)b32 + (uint64_t)w->scc > a32; break;
	case ISA_S_MIN_I32: res = (uint32_t)((int32_t)a32 < (int32_t)b32 ? a32 : b32); scc = (int32_t)a32 < (int32_t)b32; break;
	case ISA_S_MIN_U32: res = a32 < b32 ? a32 : b32; scc = a32 < b32; break;
	case ISA_S_MAX_I32: res = (uint32_t)((int32_t)a32 > (int32_t)b32 ? a32 : b32); scc = (int32_t)a32 > (int32_t)b32; break;
	case ISA_S_MAX_U32: res = a32 > b32 ? a32 : b32; scc = a32 > b32; break;
	case ISA_S_CSELECT_B32: case ISA_S_CSELECT_B64: res = w->scc ? a : b; break;
	case ISA_S_AND_B32: case ISA_S_AND_B64: res = a & b; break;
	case ISA_S_OR_B32: case ISA_S_OR_B64: res = a | b; break;
	case ISA_S_XOR_B32: case ISA_S_XOR_B64: res = a ^ b; break;
	case ISA_S_ANDN2_B32: case ISA_S_ANDN2_B64: res = a & ~b; break;
	case ISA_S_ORN2_B32: case ISA_S_ORN2_B64: res = a | ~b; break;
	case ISA_S_NAND_B32: case ISA_S_NAND_B64: res = ~(a & b); break;
	case ISA_S_NOR_B32: case ISA_S_NOR_B64: res = ~(a | b); break;
	case ISA_S_XNOR_B32: case ISA_S_XNOR_B64: res = ~(a ^ b); break;
	case ISA_S_LSHL_B32: res = (uint32_t)(a32 << (b32 & 31)); break;
	case ISA_S_LSHR_B32: res = a32 >> (b32 & 31); break;
	case ISA_S_ASHR_I32: res = (uint32_t)((int32_t)a32 >> (b32 & 31)); break;
	case ISA_S_LSHL_B64: res = a << (b32 & 63); break;
	case ISA_S_LSHR_B64: res = a >> (b32 & 63); break;
	case ISA_S_ASHR_I64: res = (uint64_t)((int64_t)a >> (b32 & 63)); break;
	case ISA_S_BFM_B32: res = (uint32_t)(((1ull << (a32 & 31)) - 1) << (b32 & 31)); break;
	case ISA_S_MUL_I32: res = (uint32_t)(a32 * b32); break;
	case ISA_S_BFE_U32: { uint32_t off = b32 & 31, wd = b32 >> 16 & 0x7f; res = wd ? (a32 >> off) & (wd >= 32 ? ~0u : (1u << wd) - 1) : 0; scc = res != 0; break; }
	case ISA_S_BFE_I32: { uint32_t off = b32 & 31, wd = b32 >> 16 & 0x7f; res = wd ? (uint32_t)sext(a32 >> off, wd >= 32 ? 32 : (int)wd) : 0; scc = res != 0; break; }
	case ISA_S_BFE_U64: { uint32_t off = b32 & 63, wd = b32 >> 16 & 0x7f; res = wd ? (a >> off) & (wd >= 64 ? ~0ull : (1ull << wd) - 1) : 0; scc = res != 0; break; }
	case ISA_S_BFE_I64: { uint32_t off = b32 & 63, wd = b32 >> 16 & 0x7f; res = wd ? (uint64_t)((int64_t)((a >> off) << (64 - TA_MIN(wd, 64u))) >> (64 - TA_MIN(wd, 64u))) : 0; scc = res != 0; break; }
	case ISA_S_ABSDIFF_I32: { int32_t d = (int32_t)a32 - (int32_t)b32; res = (uint32_t)(d < 0 ? -d : d); scc = res != 0; break; }
	case ISA_S_MUL_HI_U32: res = (uint32_t)((uint64_t)a32 * b32 >> 32); break;
	case ISA_S_MUL_HI_I32: res = (uint32_t)((int64_t)(int32_t)a32 * (int32_t)b32 >> 32); break;
	case ISA_S_LSHL1_ADD_U32: case ISA_S_LSHL2_ADD_U32: case ISA_S_LSHL3_ADD_U32: case ISA_S_LSHL4_ADD_U32: {
		int sh = op == ISA_S_LSHL1_ADD_U32 ? 1 : op == ISA_S_LSHL2_ADD_U32 ? 2 : op == ISA_S_LSHL3_ADD_U32 ? 3 : 4;
		uint64_t t = ((uint64_t)a32 << sh) + b32;
		res = (uint32_t)t;
		scc = t >> 32 != 0;
		break;
	}
	case ISA_S_PACK_LL_B32_B16: res = (a32 & 0xffff) | b32 << 16; break;
	case ISA_S_PACK_LH_B32_B16: res = (a32 & 0xffff) | (b32 & 0xffff0000u); break;
	case ISA_S_PACK_HH_B32_B16: res = a32 >> 16 | (b32 & 0xffff0000u); break;
	/* SOP1 */
	case ISA_S_MOV_B32: case ISA_S_MOV_B64: res = a; break;
	case ISA_S_CMOV_B32: case ISA_S_CMOV_B64:
		if (!w->scc)
			goto done;
		res = a;
		break;
	case ISA_S_NOT_B32: case ISA_S_NOT_B64: res = ~a; break;
	case ISA_S_BREV_B32: { uint32_t y = 0; for (int i = 0; i < 32; i++) y |= (a32 >> i & 1) << (31 - i); res = y; break; }
	case ISA_S_BREV_B64: { uint64_t y = 0; for (int i = 0; i < 64; i++) y |= (a >> i & 1) << (63 - i); res = y; break; }
	case ISA_S_BCNT0_I32_B32: res = (uint32_t)(32 - __builtin_popcount(a32)); dst_n = 1; scc = res != 0; break;
	case ISA_S_BCNT1_I32_B32: res = (uint32_t)__builtin_popcount(a32); scc = res != 0; break;
	case ISA_S_BCNT1_I32_B64: res = (uint32_t)__builtin_popcountll(a); dst_n = 1; scc = res != 0; break;
	case ISA_S_FF1_I32_B32: res = a32 ? (uint32_t)__builtin_ctz(a32) : 0xffffffffu; break;
	case ISA_S_FF1_I32_B64: res = a ? (uint32_t)__builtin_ctzll(a) : 0xffffffffu; dst_n = 1; break;
	case ISA_S_FLBIT_I32_B32: res = clz32(a32); break;
	case ISA_S_SEXT_I32_I8: res = (uint32_t)(int32_t)(int8_t)a32; break;
	case ISA_S_SEXT_I32_I16: res = (uint32_t)(int32_t)(int16_t)a32; break;
	case ISA_S_BITSET0_B32: res = (uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0) & ~(1u << (a32 & 31)); break;
	case ISA_S_BITSET1_B32: res = (uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0) | 1u << (a32 & 31); break;
	case ISA_S_ABS_I32: res = (uint32_t)((int32_t)a32 < 0 ? -(int64_t)(int32_t)a32 : (int32_t)a32); scc = res != 0; break;
	case ISA_S_WQM_B32: case ISA_S_WQM_B64: {
		uint64_t y = 0;
		for (int i = 0; i < 64; i += 4)
			if (a >> i & 15)
				y |= 15ull << i;
		res = n == 1 ? (uint32_t)y : y;
		break;
	}
	case ISA_S_QUADMASK_B32: case ISA_S_QUADMASK_B64: {
		uint64_t y = 0;
		for (int i = 0; i < 16; i++)
			if (a >> (4 * i) & 15)
				y |= 1ull << i;
		res = y;
		break;
	}
	case ISA_S_AND_SAVEEXEC_B32: case ISA_S_AND_SAVEEXEC_B64: case ISA_S_OR_SAVEEXEC_B32: case ISA_S_OR_SAVEEXEC_B64:
	case ISA_S_XOR_SAVEEXEC_B32: case ISA_S_XOR_SAVEEXEC_B64: case ISA_S_AND_NOT1_SAVEEXEC_B32: case ISA_S_ANDN2_SAVEEXEC_B64:
	case ISA_S_OR_NOT1_SAVEEXEC_B32: case ISA_S_ORN2_SAVEEXEC_B64: {
		uint64_t ne;
		switch (op) {
		case ISA_S_AND_SAVEEXEC_B32: case ISA_S_AND_SAVEEXEC_B64: ne = a & ex; break;
		case ISA_S_OR_SAVEEXEC_B32: case ISA_S_OR_SAVEEXEC_B64: ne = a | ex; break;
		case ISA_S_XOR_SAVEEXEC_B32: case ISA_S_XOR_SAVEEXEC_B64: ne = a ^ ex; break;
		case ISA_S_AND_NOT1_SAVEEXEC_B32: case ISA_S_ANDN2_SAVEEXEC_B64: ne = a & ~ex; break;
		default: ne = a | ~ex; break;
		}
		if (w->lanes == 32)
			ne &= 0xffffffffull;
		swrite(dev, w, insn, &o[0], ex, n);
		w->s[ES_EXEC] = (uint32_t)ne;
		if (n == 2)
			w->s[ES_EXEC + 1] = (uint32_t)(ne >> 32);
		w->scc = ne != 0;
		return 0;
	}
	case ISA_S_GETPC_B64: res = 0x1000ull + dev->k->off[insn] + 4; break;
	case ISA_S_SETPC_B64: { /* to an instruction of this kernel, addressed as s_getpc gives them
	                          * (amd_emit's long branches); calls (s_swappc) are not emulated */
		int64_t tgt = (int64_t)sread(w, &o[0], 2) - 0x1000;
		EmuKernel *k = dev->k;
		if (tgt < 0 || tgt >= (int64_t)k->size || (tgt & 3) || k->at[tgt / 4] < 0) {
			emu_fail(dev, w, insn, "s_setpc to 0x%llx, which is not an instruction of the kernel",
				 (long long)(tgt + 0x1000));
			return -1;
		}
		w->pc = k->at[tgt / 4];
		dev->stats.branches++;
		return 0;
	}
	case ISA_S_SWAPPC_B64:
		emu_fail(dev, w, insn, "indirect calls are not emulated");
		return -1;
	/* SOPK */
	case ISA_S_MOVK_I32: res = (uint32_t)(int32_t)(int16_t)o[1].imm; dst_n = 1; break;
	case ISA_S_CMOVK_I32:
		if (!w->scc)
			goto done;
		res = (uint32_t)(int32_t)(int16_t)o[1].imm;
		break;
	case ISA_S_ADDK_I32: {
		uint32_t x = (uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0), y = (uint32_t)(int32_t)(int16_t)o[1].imm;
		res = (uint32_t)(x + y);
		scc = ((~(x ^ y) & (x ^ (uint32_t)res)) >> 31) & 1;
		break;
	}
	case ISA_S_MULK_I32: res = (uint32_t)((uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0) * (uint32_t)(int32_t)(int16_t)o[1].imm); break;
	case ISA_S_WAITCNT_VSCNT: emu_wait(dev, w, -1, -1, o[1].imm & 0x3f); goto done;
	case ISA_S_WAITCNT_VMCNT: emu_wait(dev, w, o[1].imm & 0x3f, -1, -1); goto done;
	case ISA_S_WAITCNT_LGKMCNT: emu_wait(dev, w, -1, o[1].imm & 0x3f, -1); goto done;
	case ISA_S_WAITCNT_EXPCNT: goto done;
	/* SOPC */
	case ISA_S_CMP_EQ_I32: case ISA_S_CMP_EQ_U32: case ISA_S_CMP_EQ_U64: scc = a == b; goto done_scc;
	case ISA_S_CMP_LG_I32: case ISA_S_CMP_LG_U32: case ISA_S_CMP_LG_U64: scc = a != b; goto done_scc;
	case ISA_S_CMP_GT_I32: scc = (int32_t)a32 > (int32_t)b32; goto done_scc;
	case ISA_S_CMP_GE_I32: scc = (int32_t)a32 >= (int32_t)b32; goto done_scc;
	case ISA_S_CMP_LT_I32: scc = (int32_t)a32 < (int32_t)b32; goto done_scc;
	case ISA_S_CMP_LE_I32: scc = (int32_t)a32 <= (int32_t)b32; goto done_scc;
	case ISA_S_CMP_GT_U32: scc = a32 > b32; goto done_scc;
	case ISA_S_CMP_GE_U32: scc = a32 >= b32; goto done_scc;
	case ISA_S_CMP_LT_U32: scc = a32 < b32; goto done_scc;
	case ISA_S_CMP_LE_U32: scc = a32 <= b32; goto done_scc;
	case ISA_S_BITCMP0_B32: scc = !(a32 >> (b32 & 31) & 1); goto done_scc;
	case ISA_S_BITCMP1_B32: scc = a32 >> (b32 & 31) & 1; goto done_scc;
	case ISA_S_BITCMP0_B64: scc = !(a >> (b32 & 63) & 1); goto done_scc;
	case ISA_S_BITCMP1_B64: scc = a >> (b32 & 63) & 1; goto done_scc;
	/* SOPP */
	case ISA_S_NOP: w->clock += (uint64_t)(o[0].imm & 15); goto done;
	case ISA_S_ENDPGM: w->done = 1; return 1;
	case ISA_S_BRANCH: return branch_to(dev, w, insn, o[0].imm);
	case ISA_S_CBRANCH_SCC0: return !w->scc ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_CBRANCH_SCC1: return w->scc ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_CBRANCH_VCCZ: case ISA_S_CBRANCH_VCCNZ: {
		uint64_t vcc = w->s[ES_VCC] | (w->lanes == 64 ? (uint64_t)w->s[ES_VCC + 1] << 32 : 0);
		if (!w->sinit[ES_VCC] && (dev->checks & EMU_CHECK_UNINIT)) {
			emu_fail(dev, w, insn, "reads vcc, which nothing has written");
			return -1;
		}
		int z = vcc == 0;
		return (op == ISA_S_CBRANCH_VCCZ ? z : !z) ? branch_to(dev, w, insn, o[0].imm) : 0;
	}
	case ISA_S_CBRANCH_EXECZ: return !ex ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_CBRANCH_EXECNZ: return ex ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_BARRIER: w->at_barrier = 1; return 1;
	case ISA_S_WAITCNT: {
		int vm, exp, lgkm;
		isa_waitcnt_decode(dev->target, (uint16_t)o[0].imm, &vm, &exp, &lgkm);
		emu_wait(dev, w, vm, lgkm, -1);
		goto done;
	}
	case ISA_S_CLAUSE: case ISA_S_SLEEP: case ISA_S_SETPRIO: case ISA_S_ICACHE_INV: case ISA_S_DELAY_ALU: case ISA_S_SENDMSG:
	case ISA_S_WAITCNT_DEPCTR: /* hazard waits: instructions here complete in order */
		goto done;
	case ISA_S_CODE_END:
		emu_fail(dev, w, insn, "execution ran into the code-end padding (missing s_endpgm?)");
		return -1;
	case ISA_S_SETHALT:
		emu_fail(dev, w, insn, "s_sethalt: the wave halted");
		return -1;
	default:
		emu_fail(dev, w, insn, "instruction not emulated");
		return -1;
	}
	if (in->nops)
		swrite(dev, w, insn, &o[0], res, o[0].count == 2 ? 2 : dst_n);
	if (wscc) {
		if (op >= ISA_S_AND_B32 && op <= ISA_S_XNOR_B64)
			scc = res != 0;
		if (op == ISA_S_LSHL_B32 || op == ISA_S_LSHR_B32 || op == ISA_S_ASHR_I32 || op == ISA_S_LSHL_B64 ||
		    op == ISA_S_LSHR_B64 || op == ISA_S_ASHR_I64 || op == ISA_S_NOT_B32 || op == ISA_S_NOT_B64 ||
		    op == ISA_S_WQM_B32 || op == ISA_S_WQM_B64 || op == ISA_S_QUADMASK_B32 || op == ISA_S_QUADMASK_B64 ||
		    (op >= ISA_S_AND_B64 && op <= ISA_S_XNOR_B64))
			scc = res != 0;
		w->scc = scc;
	}
done:
	return dev->failed ? -1 : 0;
done_scc:
	w->scc = scc;
	return 0;
}

/* ---- memory ------------------------------------------------------------- */

/* Per-op memory shape: bytes per element, elements (dwords), sign, d16 half. */
typedef struct {
	uint8_t bytes, dwords, sign, d16; /* d16: 1 low, 2 high */
} MemShape;

static MemShape mem_shape(unsigned op, int ndst)
{
	MemShape s = {4, (uint8_t)(ndst ? ndst : 1), 0, 0};
	const char *n = isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2] ? isa_ops[op].name[2] : "";
	if (strstr(n, "byte") || strstr(n, "_u8") || strstr(n, "_i8") || strstr(n, "_b8"))
		s.bytes = 1, s.dwords = 1;
	else if (strstr(n, "short") || strstr(n, "_u16") || strstr(n, "_i16") || strstr(n, "_b16"))
		s.bytes = 2, s.dwords = 1;
	if (strstr(n, "sbyte") || strstr(n, "sshort") || strstr(n, "_i8") || strstr(n, "_i16"))
		s.sign = 1;
	if (strstr(n, "d16"))
		s.d16 = strstr(n, "d16_hi") ? 2 : 1;
	return s;
}

static uint32_t ld_elem(const uint8_t *p, MemShape s)
{
	uint32_t v = 0;
	memcpy(&v, p, s.bytes);
	if (s.sign)
		v = (uint32_t)sext(v, 8 * s.bytes);
	return v;
}

/* Atomic read-modify-write on 32/64-bit memory; returns the old value. */
static uint64_t atomic_rmw(unsigned op, uint8_t *p, uint64_t v, uint64_t cmp, int b64)
{
	uint64_t old = 0;
	memcpy(&old, p, b64 ? 8 : 4);
	uint64_t nv = old;
	const char *n = isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2];
	int32_t so = (int32_t)old, sv = (int32_t)v;
	if (strstr(n, "cmpswap"))
		nv = old == cmp ? v : old;
	else if (strstr(n, "add_f32")) {
		float f = emu_f((uint32_t)old) + emu_f((uint32_t)v);
		nv = emu_u(f);
	} else if (strstr(n, "pk_add_f16"))
		nv = d2h(h2d((uint32_t)old) + h2d((uint32_t)v)) | d2h(h2d((uint32_t)old >> 16) + h2d((uint32_t)v >> 16)) << 16;
	else if (strstr(n, "min_f32"))
		nv = emu_u(fminf(emu_f((uint32_t)old), emu_f((uint32_t)v)));
	else if (strstr(n, "max_f32"))
		nv = emu_u(fmaxf(emu_f((uint32_t)old), emu_f((uint32_t)v)));
	else if (strstr(n, "rsub"))
		nv = v - old;
	else if (strstr(n, "add"))
		nv = old + v;
	else if (strstr(n, "sub"))
		nv = old - v;
	else if (strstr(n, "smax") || strstr(n, "max_i"))
		nv = b64 ? (uint64_t)TA_MAX((int64_t)old, (int64_t)v) : (uint32_t)TA_MAX(so, sv);
	else if (strstr(n, "smin") || strstr(n, "min_i"))
		nv = b64 ? (uint64_t)TA_MIN((int64_t)old, (int64_t)v) : (uint32_t)TA_MIN(so, sv);
	else if (strstr(n, "umax") || strstr(n, "max_u"))
		nv = TA_MAX(old, v);
	else if (strstr(n, "umin") || strstr(n, "min_u"))
		nv = TA_MIN(old, v);
	else if (strstr(n, "and"))
		nv = old & v;
	else if (strstr(n, "xor"))
		nv = old ^ v;
	else if (strstr(n, "or"))
		nv = old | v;
	else if (strstr(n, "swap") || strstr(n, "wrxchg"))
		nv = v;
	else if (strstr(n, "inc"))
		nv = old >= v ? 0 : old + 1;
	else if (strstr(n, "dec"))
		nv = old == 0 || old > v ? v : old - 1;
	memcpy(p, &nv, b64 ? 8 : 4);
	return old;
}

/* Data registers may be AGPRs (gfx90a/gfx942 acc forms). */
#define VREG(o, i) emu_vreg(w, (o)->kind == ISA_K_AGPR, (o)->reg + (i))
#define FILE(o) ((o)->kind == ISA_K_AGPR ? 'a' : 'v')

/* Finds operands by role. */
static const IsaOperand *op_role(const EmuDevice *dev, const IsaInsn *in, int role, int nth)
{
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(dev->wt, in->op, sig);
	for (int j = 0; j < n && j < in->nops; j++)
		if (ISA_SIG_ROLE(sig[j]) == role && nth-- == 0)
			return &in->ops[j];
	return NULL;
}

const IsaOperand *emu_op_role(const EmuDevice *dev, const IsaInsn *in, int role, int nth)
{
	return op_role(dev, in, role, nth);
}

/* Scratch for load results: per thread, so devices may run in several threads. */
static _Thread_local uint32_t tmp_data[16 * 64];

static int exec_smem(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	const IsaOperand *sd = &in->ops[0], *sb = &in->ops[1], *so = &in->ops[2];
	dev->stats.smem++;
	uint64_t base = (uint64_t)w->s[sb->reg] | (uint64_t)w->s[sb->reg + 1] << 32;
	if (sb->count == 4) /* buffer descriptor: 48-bit base */
		base &= 0xffffffffffffull;
	uint64_t off = so->kind == ISA_K_IMM ? (uint64_t)(int64_t)so->imm : scalar_val(w, so, ISA_TY_B32, 0);
	uint64_t addr = (base + off) & ~3ull;
	int n = sd->count;
	if (sb->count == 4) {
		/* s_buffer_load: reads past num_records return 0. */
		uint32_t nrec = w->s[sb->reg + 2];
		for (int i = 0; i < n; i++) {
			uint64_t o = off + 4ull * (uint64_t)i;
			const uint8_t *p = o + 4 <= nrec ? emu_gmem(dev, w, insn, addr + 4ull * (uint64_t)i, 4, 0) : NULL;
			if (dev->failed)
				return -1;
			tmp_data[i] = 0;
			if (p)
				memcpy(&tmp_data[i], p, 4);
		}
	} else {
		const uint8_t *p = emu_gmem(dev, w, insn, addr, (size_t)n * 4, 0);
		if (!p)
			return -1;
		memcpy(tmp_data, p, (size_t)n * 4);
	}
	int reg = sd->kind == ISA_K_SGPR ? sd->reg : special_sreg(sd->reg);
	if (reg < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (w->spend[reg + i] && (dev->checks & EMU_CHECK_WAITCNT)) {
			emu_fail(dev, w, insn, "overwrites s%d while a load into it is still pending", reg + i);
			return -1;
		}
	return emu_pend(dev, w, 1, 1, 's', reg, n, 0, tmp_data, 0, insn);
}

/* Scratch (private segment): scratch_* on gfx942/gfx1100, where the
 * hardware has set FLAT_SCRATCH to the wave's area (w->scratch_base), and
 * MUBUF through a swizzled V# (ADD_TID_ENABLE: gfx90a's private segment
 * buffer, base + wave offset).  Both interleave the lanes' dwords: byte o of
 * lane l's private memory is at (o / 4 * L + l) * 4 + o % 4 in the wave's
 * area, L = the V#'s index stride (64) or the wave size.  Dword accesses
 * only; a per-lane offset outside the kernel's PRIVATE_SEGMENT_FIXED_SIZE is
 * an error (as is any access outside the scratch buffer itself). */
static int exec_private(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, int mubuf)
{
	unsigned op = in->op;
	uint32_t fl = isa_ops[op].flags;
	const IsaOperand *vd = op_role(dev, in, ISA_R_VD, 0), *dd = op_role(dev, in, ISA_R_DD, 0), *va;
	int n = vd ? vd->count : dd ? dd->count : 1;
	if (mem_shape(op, n).bytes != 4 || (fl & ISA_F_ATOMIC) || in->mod.idxen || n > 4) {
		emu_fail(dev, w, insn, "only dword loads and stores of scratch are emulated");
		return -1;
	}
	uint64_t ex = emu_exec_mask(w), base;
	int64_t lane_off = 0;
	int stride, use_va;
	if (mubuf) {
		const IsaOperand *rs = op_role(dev, in, ISA_R_RSRC, 0), *so = op_role(dev, in, ISA_R_MSO, 0);
		va = op_role(dev, in, ISA_R_MVA, 0);
		use_va = in->mod.offen;
		base = (uint64_t)w->s[rs->reg] | (uint64_t)(w->s[rs->reg + 1] & 0xffff) << 32;
		stride = 8 << (w->s[rs->reg + 3] >> 21 & 3);
		base += so ? scalar_val(w, so, ISA_TY_B32, 0) : 0; /* the wave offset */
	} else {
		const IsaOperand *xs = op_role(dev, in, ISA_R_XS, 0);
		va = op_role(dev, in, ISA_R_XA, 0);
		use_va = va && va->kind == ISA_K_VGPR;
		base = w->scratch_base;
		stride = w->lanes;
		if (!base) {
			emu_fail(dev, w, insn, "scratch access, but the descriptor does not enable the private segment");
			return -1;
		}
		if (xs && xs->kind == ISA_K_SGPR)
			lane_off = (int32_t)w->s[xs->reg];
	}
	dev->stats.vmem++;
	int load = (fl & ISA_F_LOAD) != 0;
	if (load)
		memset(tmp_data, 0, sizeof(uint32_t) * 64 * (size_t)n);
	for (int l = 0; l < w->lanes; l++) {
		if (!(ex >> l & 1))
			continue;
		int64_t o = in->mod.offset + lane_off + (use_va ? (int64_t)(int32_t)w->v[va->reg][l] : 0);
		if (o < 0 || o % 4 || o + 4 * n > (int64_t)dev->priv_size) {
			emu_fail(dev, w, insn, "lane %d: scratch access of %d bytes at offset %lld is outside the private "
				 "segment (%u bytes per work-item)", l, 4 * n, (long long)o, dev->priv_size);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			uint64_t addr = base + ((uint64_t)(o / 4 + i) * (uint64_t)stride + (uint64_t)l) * 4;
			uint8_t *p = emu_gmem(dev, w, insn, addr, 4, !load);
			if (!p)
				return -1;
			uint8_t *init = addr - dev->scr_base < dev->scr_size ? &dev->scr_init[(addr - dev->scr_base) / 4] : NULL;
			if (load && init && !*init && (dev->checks & EMU_CHECK_UNINIT)) {
				emu_fail(dev, w, insn, "lane %d reads scratch offset %lld, which nothing has written", l,
					 (long long)(o + 4 * i));
				return -1;
			}
			if (init && !load)
				*init = 1;
			if (load)
				memcpy(&tmp_data[i * 64 + l], p, 4);
			else
				memcpy(p, &VREG(dd, i)[l], 4);
		}
	}
	if (load)
		return emu_pend(dev, w, 0, 0, FILE(vd), vd->reg, n, ex, tmp_data, 0, insn);
	return emu_pend(dev, w, dev->g11 ? 2 : 0, 0, 0, 0, 0, 0, NULL, 0, insn);
}

/* Global and buffer memory.  Loads read memory at issue and deliver at the
 * covering s_waitcnt; stores and atomics update memory at issue. */
static int exec_vmem(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	unsigned op = in->op;
	uint32_t fl = isa_ops[op].flags;
	int L = w->lanes;
	uint64_t ex = emu_exec_mask(w);
	const IsaOperand *vd = op_role(dev, in, ISA_R_VD, 0), *dd = op_role(dev, in, ISA_R_DD, 0);
	MemShape sh = mem_shape(op, vd ? vd->count : dd ? dd->count : 1);
	int atomic = (fl & ISA_F_ATOMIC) != 0, rtn = vd != NULL && atomic;
	int b64 = atomic && dd && (dd->count == 2 || dd->count == 4) && !strstr(isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2], "cmpswap") ? 1
		: atomic && dd && dd->count == 4;
	int cmpswap = atomic && strstr(isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2], "cmpswap") != NULL;
	if (cmpswap)
		b64 = dd->count == 4;
	uint64_t addr[64];
	if (isa_op_fmt(dev->wt, op) == ISA_FMT_SCRATCH)
		return exec_private(dev, w, insn, in, 0);
	if ((fl & ISA_F_MUBUF) && (w->s[op_role(dev, in, ISA_R_RSRC, 0)->reg + 3] >> 23 & 1))
		return exec_private(dev, w, insn, in, 1); /* ADD_TID_ENABLE: a scratch V# */
	dev->stats.vmem++;
	if (fl & ISA_F_GLOBAL) {
		const IsaOperand *fa = op_role(dev, in, ISA_R_FA, 0), *fs = op_role(dev, in, ISA_R_FS, 0);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			if (fs && fs->kind == ISA_K_SGPR)
				addr[l] = ((uint64_t)w->s[fs->reg] | (uint64_t)w->s[fs->reg + 1] << 32) + w->v[fa->reg][l];
			else
				addr[l] = (uint64_t)w->v[fa->reg][l] | (uint64_t)w->v[fa->reg + 1][l] << 32;
			addr[l] += (uint64_t)(int64_t)in->mod.offset;
		}
	} else {
		/* MUBUF: V# base, stride, num_records; out-of-range accesses
		 * return 0 and drop writes (raw buffer bounds check). */
		const IsaOperand *va = op_role(dev, in, ISA_R_MVA, 0), *rs = op_role(dev, in, ISA_R_RSRC, 0),
				 *so = op_role(dev, in, ISA_R_MSO, 0);
		uint64_t base = ((uint64_t)w->s[rs->reg] | (uint64_t)(w->s[rs->reg + 1] & 0xffff) << 32);
		uint32_t stride = w->s[rs->reg + 1] >> 16 & 0x3fff, nrec = w->s[rs->reg + 2];
		uint32_t soff = so ? (uint32_t)scalar_val(w, so, ISA_TY_B32, 0) : 0;
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint64_t off = (uint64_t)in->mod.offset, idx = 0;
			if (in->mod.idxen)
				idx = w->v[va->reg][l];
			if (in->mod.offen)
				off += w->v[va->reg + (in->mod.idxen ? 1 : 0)][l];
			uint64_t range_off = off + idx * stride;
			uint64_t bytes = (uint64_t)sh.bytes * sh.dwords;
			addr[l] = range_off + bytes > nrec ? ~0ull : base + soff + range_off;
		}
	}
	int n = sh.dwords;
	size_t bytes = (size_t)sh.bytes * (sh.bytes == 4 ? (size_t)n : 1);
	if ((fl & ISA_F_LOAD) && !atomic) {
		memset(tmp_data, 0, sizeof(uint32_t) * 64 * (size_t)n);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			if (addr[l] == ~0ull)
				continue;
			const uint8_t *p = emu_gmem(dev, w, insn, addr[l], bytes, 0);
			if (!p)
				return -1;
			for (int i = 0; i < n; i++)
				tmp_data[i * 64 + l] = sh.bytes == 4 ? ld_elem(p + 4 * i, sh) : ld_elem(p, sh);
		}
		return emu_pend(dev, w, 0, 0, FILE(vd), vd->reg, n, ex, tmp_data, sh.d16, insn);
	}
	/* Stores and atomics. */
	int nd = dd ? dd->count : 0;
	for (int l = 0; l < L; l++) {
		if (!(ex >> l & 1) || addr[l] == ~0ull)
			continue;
		if (atomic) {
			uint8_t *p = emu_gmem(dev, w, insn, addr[l], b64 ? 8 : 4, 1);
			if (!p)
				return -1;
			uint64_t v = VREG(dd, 0)[l], cmp = 0;
			if (b64)
				v |= (uint64_t)VREG(dd, 1)[l] << 32;
			if (cmpswap) {
				int half = nd / 2;
				cmp = VREG(dd, half)[l];
				if (b64)
					cmp |= (uint64_t)VREG(dd, half + 1)[l] << 32;
			}
			uint64_t old = atomic_rmw(op, p, v, cmp, b64);
			tmp_data[l] = (uint32_t)old;
			tmp_data[64 + l] = (uint32_t)(old >> 32);
			continue;
		}
		uint8_t *p = emu_gmem(dev, w, insn, addr[l], sh.bytes == 4 ? (size_t)nd * 4 : sh.bytes, 1);
		if (!p)
			return -1;
		if (sh.bytes == 4)
			for (int i = 0; i < nd; i++)
				memcpy(p + 4 * i, &VREG(dd, i)[l], 4);
		else {
			uint32_t v = VREG(dd, 0)[l] >> (sh.d16 == 2 ? 16 : 0);
			memcpy(p, &v, sh.bytes);
		}
	}
	if (rtn)
		return emu_pend(dev, w, 0, 0, FILE(vd), vd->reg, vd->count, ex, tmp_data, 0, insn);
	return emu_pend(dev, w, dev->g11 ? 2 : 0, 0, 0, 0, 0, 0, NULL, 0, insn);
}

static uint8_t *lds_at(EmuDevice *dev, EmuWave *w, int insn, uint64_t addr, size_t n)
{
	if (addr + n > dev->lds_size) {
		emu_fail(dev, w, insn, "out-of-bounds LDS access of %zu bytes at 0x%llx (the workgroup has %u bytes)", n,
			 (unsigned long long)addr, dev->lds_size);
		return NULL;
	}
	return dev->lds + addr;
}

static int exec_ds(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	unsigned op = in->op;
	uint32_t fl = isa_ops[op].flags;
	int L = w->lanes;
	uint64_t ex = emu_exec_mask(w);
	const IsaOperand *vd = op_role(dev, in, ISA_R_VD, 0), *da = op_role(dev, in, ISA_R_DA, 0),
			 *d0 = op_role(dev, in, ISA_R_DD, 0), *d1 = op_role(dev, in, ISA_R_DD, 1);
	const IsaMods *m = &in->mod;
	dev->stats.lds++;
	if (m->gds) {
		emu_fail(dev, w, insn, "GDS is not emulated");
		return -1;
	}
	if (op == ISA_DS_BPERMUTE_B32 || op == ISA_DS_PERMUTE_B32) {
		/* Lane shuffles through the LDS crossbar; no LDS memory used. */
		memset(tmp_data, 0, 64 * 4);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint32_t sel = ((w->v[da->reg][l] + (uint32_t)m->offset) >> 2) % (uint32_t)L;
			if (op == ISA_DS_BPERMUTE_B32)
				tmp_data[l] = ex >> sel & 1 ? VREG(d0, 0)[sel] : 0;
			else
				tmp_data[sel] = VREG(d0, 0)[l];
		}
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, 1, ex, tmp_data, 0, insn);
	}
	if (op == ISA_DS_SWIZZLE_B32) {
		uint32_t off = (uint32_t)m->offset;
		for (int l = 0; l < L; l++) {
			int s;
			if (off & 0x8000) { /* quad permute */
				s = (l & ~3) | (int)(off >> (2 * (l & 3)) & 3);
			} else {
				int and_m = (int)(off & 31), or_m = (int)(off >> 5 & 31), xor_m = (int)(off >> 10 & 31);
				s = (l & ~31) | ((((l & 31) & and_m) | or_m) ^ xor_m);
			}
			tmp_data[l] = ex >> s & 1 ? w->v[da->reg][s] : 0;
		}
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, 1, ex, tmp_data, 0, insn);
	}
	MemShape sh = mem_shape(op, vd ? vd->count : d0 ? d0->count : 1);
	if (fl & ISA_F_DS2) {
		/* read2/write2: two elements at offset0/offset1 × size (×64 for st64). */
		const char *nm = isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2];
		int esz = strstr(nm, "b64") ? 8 : 4, st = strstr(nm, "st64") ? 64 : 1;
		int words = esz / 4;
		memset(tmp_data, 0, sizeof tmp_data);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint64_t base = w->v[da->reg][l];
			for (int e = 0; e < 2; e++) {
				uint64_t a = base + (uint64_t)(e ? m->offset1 : m->offset0) * (uint64_t)esz * (uint64_t)st;
				uint8_t *p = lds_at(dev, w, insn, a, (size_t)esz);
				if (!p)
					return -1;
				const IsaOperand *src = e ? d1 : d0;
				for (int i = 0; i < words; i++) {
					if (fl & ISA_F_LOAD)
						memcpy(&tmp_data[(e * words + i) * 64 + l], p + 4 * i, 4);
					else
						memcpy(p + 4 * i, &VREG(src, i)[l], 4);
				}
			}
		}
		if (fl & ISA_F_LOAD)
			return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, vd->count, ex, tmp_data, 0, insn);
		return emu_pend(dev, w, 1, 0, 0, 0, 0, 0, NULL, 0, insn);
	}
	int atomic = (fl & ISA_F_ATOMIC) != 0 || op == ISA_DS_WRXCHG_RTN_B32 ||
		     (vd && d0); /* returning atomics carry both */
	int n = sh.dwords;
	if ((fl & ISA_F_LOAD) && !atomic) {
		memset(tmp_data, 0, sizeof(uint32_t) * 64 * (size_t)n);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint64_t a = (uint64_t)w->v[da->reg][l] + (uint32_t)m->offset;
			const uint8_t *p = lds_at(dev, w, insn, a, sh.bytes == 4 ? (size_t)n * 4 : sh.bytes);
			if (!p)
				return -1;
			for (int i = 0; i < n; i++)
				tmp_data[i * 64 + l] = sh.bytes == 4 ? ld_elem(p + 4 * i, sh) : ld_elem(p, sh);
		}
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, n, ex, tmp_data, sh.d16, insn);
	}
	int b64 = d0 && d0->count == 2 && atomic;
	for (int l = 0; l < L; l++) {
		if (!(ex >> l & 1))
			continue;
		uint64_t a = (uint64_t)w->v[da->reg][l] + (uint32_t)m->offset;
		if (atomic) {
			uint8_t *p = lds_at(dev, w, insn, a, b64 ? 8 : 4);
			if (!p)
				return -1;
			uint64_t v = VREG(d0, 0)[l];
			if (b64)
				v |= (uint64_t)VREG(d0, 1)[l] << 32;
			uint64_t old = atomic_rmw(op, p, v, 0, b64);
			tmp_data[l] = (uint32_t)old;
			continue;
		}
		int nd = d0->count;
		uint8_t *p = lds_at(dev, w, insn, a, sh.bytes == 4 ? (size_t)nd * 4 : sh.bytes);
		if (!p)
			return -1;
		if (sh.bytes == 4)
			for (int i = 0; i < nd; i++)
				memcpy(p + 4 * i, &VREG(d0, i)[l], 4);
		else {
			uint32_t v = VREG(d0, 0)[l] >> (sh.d16 == 2 ? 16 : 0);
			memcpy(p, &v, sh.bytes);
		}
	}
	if (atomic && vd)
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, 1, ex, tmp_data, 0, insn);
	return emu_pend(dev, w, 1, 0, 0, 0, 0, 0, NULL, 0, insn);
}

/* ---- one step ----------------------------------------------------------- */

int emu_step(EmuDevice *dev, EmuWave *w)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, build_cmp);
	(void)cmp_once;
	EmuKernel *k = dev->k;
	int i = w->pc;
	if (i < 0 || i >= k->ninsn) {
		emu_fail(dev, w, -1, "execution ran past the end of the kernel's code (missing s_endpgm?)");
		return -1;
	}
	const IsaInsn *in = &k->insn[i];
	if (in->op >= ISA_NUM_OPS) {
		emu_fail(dev, w, -1, "+0x%x: cannot decode the instruction here", k->off[i]);
		return -1;
	}
	w->executed++;
	dev->stats.insns++;
	w->pc = i + 1;
	uint8_t acc[ISA_MAX_OPS];
	operand_access(dev, in, acc);
	if (check_reads(dev, w, i, in, acc))
		return -1;
	uint32_t fl = isa_ops[in->op].flags;
	int rc;
	if (dev->prof_on)
		emu_prof_pre(dev, w, i, in);
	if (fl & ISA_F_SALU)
		rc = exec_salu(dev, w, i, in);
	else if (fl & ISA_F_SMEM)
		rc = exec_smem(dev, w, i, in);
	else if (fl & (ISA_F_MFMA | ISA_F_WMMA)) {
		dev->stats.mma++;
		rc = emu_mma(dev, w, i, in);
	} else if (fl & ISA_F_VALU)
		rc = exec_valu(dev, w, i, in, acc);
	else if (fl & ISA_F_DS)
		rc = exec_ds(dev, w, i, in);
	else if (in->op == ISA_BUFFER_GL0_INV || in->op == ISA_BUFFER_GL1_INV)
		rc = 0; /* cache invalidations: the emulator has no caches */
	else if (fl & (ISA_F_GLOBAL | ISA_F_MUBUF))
		rc = exec_vmem(dev, w, i, in);
	else {
		emu_fail(dev, w, i, "instruction not emulated");
		rc = -1;
	}
	w->clock++;
	if (dev->failed)
		return -1;
	if (dev->prof_on)
		emu_prof_post(dev, w, i);
	return rc;
}
