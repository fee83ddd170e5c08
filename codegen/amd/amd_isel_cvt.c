/* amd_isel_cvt.c — conversions, fp8 conversions (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- conversions ---------------------------------------------------------- */

/* f32 -> bf16 bits, round to nearest even (NaN payloads not preserved). */
static void f32_to_bf16_bits(Isel *s, Val d, Val a)
{
	a = to_vgpr(s, a);
	Val t = reg(newv(s, MR_V, 1), 0, 1);
	valu3(s, ISA_V_BFE_U32, t, a, cst(16), cst(1));
	valu3(s, ISA_V_ADD3_U32, t, a, t, cst(0x7fff));
	valu2(s, ISA_V_LSHRREV_B32, d, cst(16), t);
}

/* Reads of SIMT registers: bit 0 any, bit 1 any other than as the value
 * of a 2-byte store (which ignores the high half of its register). */
void scan_uses(Isel *s)
{
	const SimtFunc *sf = s->sf;
	for (size_t i = 0; i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		int ops[4] = {in->a, in->b, in->c, in->guard};
		int n[4] = {1, 1, 1, 1};
		if (in->op == SI_MMA)
			n[0] = simt_mma[in->sub].na, n[1] = simt_mma[in->sub].nb, n[2] = simt_mma[in->sub].nc;
		if (in->op == SI_ST && in->vec > 1)
			n[1] = in->vec;
		bool st16 = in->op == SI_ST && in->vec <= 1 && (in->type == DT_F16 || in->type == DT_BF16);
		bool pack2 = in->op == SI_PACK2; /* reads the low halves of a and b only */
		for (int k = 0; k < 4; k++)
			for (int j = 0; ops[k] >= 0 && j < n[k]; j++)
				s->use[ops[k] + j] |= (uint8_t)((st16 && k == 1) || (pack2 && k < 2) ? 1 : 3);
	}
}

/* ---- fp8 conversions -----------------------------------------------------
 *
 * fp8 storage is a byte in the low bits of a VGPR (bits above it may be
 * anything: every reader below looks at the low byte only).  gfx942 has
 * hardware conversions for the FNUZ formats; everything else uses integer
 * sequences that are exact with f32 denormals kept (the kernel descriptor's
 * FLOAT_DENORM_MODE_32 is 3) and the default round-to-nearest-even mode. */


Fp8Fmt fp8_fmt(int t)
{
	switch (t) {
	case DT_FP8E4M3: return (Fp8Fmt){3, 7, 0x43e00000u};       /* 448 */
	case DT_FP8E5M2: return (Fp8Fmt){2, 15, 0x47600000u};      /* 57344 */
	case DT_FP8E4M3FNUZ: return (Fp8Fmt){3, 8, 0x43700000u};   /* 240 */
	default: return (Fp8Fmt){2, 16, 0x47600000u};              /* e5m2fnuz: 57344 */
	}
}

/* gfx942 converts the FNUZ formats in hardware. */
static bool fp8_native(const Isel *s, int t)
{
	return s->it == TA_TARGET_GFX942 && dtype_is_fnuz((DType)t);
}

/* d (f32) = the fp8 byte in the low bits of a. */
void fp8_unpack(Isel *s, int t, Val d, Val a)
{
	if (fp8_native(s, t)) { /* reads byte 0 */
		valu1(s, t == DT_FP8E4M3FNUZ ? ISA_V_CVT_F32_FP8 : ISA_V_CVT_F32_BF8, d, to_vgpr(s, a));
		return;
	}
	if (t == DT_FP8E5M2) { /* the high byte of an f16, infinities and NaNs included */
		Val h = vtmp(s);
		valu2(s, ISA_V_LSHLREV_B32, h, cst(8), a);
		valu1(s, ISA_V_CVT_F32_F16, d, h);
		return;
	}
	/* Magnitude bits under the f32 exponent field: exponent e reads as
	 * 2^(e-127) (e == 0 an f32 denormal with the same scale), so one exact
	 * multiply by 2^(127-bias) gives the value.  Then the sign, then NaN. */
	Fp8Fmt f = fp8_fmt(t);
	Val m = vtmp(s), v = vtmp(s), sh = vtmp(s), r = vtmp(s), vcc = reg(newv(s, MR_S, s->lm), 0, s->lm);
	valu2(s, ISA_V_AND_B32, m, cst(0x7f), a);
	valu2(s, ISA_V_LSHLREV_B32, v, cst((uint32_t)(23 - f.mbits)), m);
	valu2(s, ISA_V_MUL_F32, v, cst((uint32_t)(254 - f.bias) << 23), v);
	valu2(s, ISA_V_LSHLREV_B32, sh, cst(24), a); /* the sign at bit 31 */
	valu3(s, ISA_V_BFI_B32, r, cst(0x7fffffffu), v, sh);
	Val nan = cst(0x7fc00000u);
	if (t == DT_FP8E4M3) { /* S.1111.111: NaN with the sign */
		valu2(s, ISA_V_CMP_EQ_U32, vcc, cst(0x7f), m);
		nan = vtmp(s);
		valu3(s, ISA_V_BFI_B32, nan, cst(0x7fffffffu), cst(0x7fc00000u), sh);
	} else { /* FNUZ: 0x80 is the only NaN */
		valu2(s, ISA_V_CMP_EQ_U32, vcc, cst(0x80000000u), sh);
	}
	Val src[3] = {r, nan, vcc};
	valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, src);
}

/* d (the fp8 byte, zero-extended) = f32 a rounded to nearest even with
 * saturation to +-max (infinities too); NaN -> NaN. */
void fp8_pack(Isel *s, int t, Val d, Val a)
{
	Fp8Fmt f = fp8_fmt(t);
	Val vcc = reg(newv(s, MR_S, s->lm), 0, s->lm);
	a = to_vgpr(s, a);
	if (fp8_native(s, t)) {
		/* v_cvt_pk_*8_f32 rounds to nearest even and turns NaN into 0x80,
		 * but saturates only with a clamp bit LLVM does not accept on
		 * gfx942: clamp to +-max first, keeping NaN. */
		Val c = vtmp(s), p = vtmp(s);
		valu3(s, ISA_V_MED3_F32, c, a, cst(f.maxf | 0x80000000u), cst(f.maxf));
		valu2(s, ISA_V_CMP_U_F32, vcc, a, a);
		Val src[3] = {c, a, vcc};
		valu(s, ISA_V_CNDMASK_B32, 1, &c, 3, src);
		valu2(s, t == DT_FP8E4M3FNUZ ? ISA_V_CVT_PK_FP8_F32 : ISA_V_CVT_PK_BF8_F32, p, c, cst(0));
		valu2(s, ISA_V_AND_B32, d, cst(0xff), p); /* the instruction keeps the high half */
		return;
	}
	int sh = 23 - f.mbits;
	uint32_t minnorm = (uint32_t)(128 - f.bias) << 23;  /* 2^(1-bias) */
	uint32_t magic = (uint32_t)(151 - f.bias - f.mbits) << 23; /* 2^(24-bias-mbits): ulp = subnormal step */
	Val u = vtmp(s), sub = vtmp(s), odd = vtmp(s), n = vtmp(s), r = vtmp(s), sb = vtmp(s), res = vtmp(s);
	valu2(s, ISA_V_AND_B32, u, cst(0x7fffffffu), a);
	valu2(s, ISA_V_MIN_U32, u, cst(f.maxf), u); /* satfinite (NaN is fixed below) */
	/* Below the smallest normal: adding 2^(24-bias-mbits) rounds to the
	 * subnormal step (RNE in hardware), the low bits are the encoding. */
	valu2(s, ISA_V_ADD_F32, sub, cst(magic), u);
	valu2(s, ISA_V_SUB_U32, sub, sub, cst(magic));
	/* Normal: rebias the exponent, round the dropped bits to even, shift. */
	valu3(s, ISA_V_BFE_U32, odd, u, cst((uint32_t)sh), cst(1));
	valu3(s, ISA_V_ADD3_U32, n, u, odd, cst(((uint32_t)(f.bias - 127) << 23) + (1u << (sh - 1)) - 1));
	valu2(s, ISA_V_LSHRREV_B32, n, cst((uint32_t)sh), n);
	valu2(s, ISA_V_CMP_GT_U32, vcc, cst(minnorm), u);
	Val s1[3] = {n, sub, vcc};
	valu(s, ISA_V_CNDMASK_B32, 1, &r, 3, s1);
	valu2(s, ISA_V_LSHRREV_B32, sb, cst(24), a);
	valu2(s, ISA_V_AND_B32, sb, cst(0x80), sb);
	valu2(s, ISA_V_OR_B32, res, r, sb);
	Val nan = cst(0x80);
	if (t == DT_FP8E4M3) { /* S.1111.111 */
		nan = vtmp(s);
		valu2(s, ISA_V_OR_B32, nan, cst(0x7f), sb);
	} else if (t == DT_FP8E5M2) { /* quiet NaN keeping the next payload bit, as dtype.c */
		Val q = vtmp(s);
		nan = vtmp(s);
		valu3(s, ISA_V_BFE_U32, q, a, cst(21), cst(1));
		valu3(s, ISA_V_OR3_B32, nan, q, sb, cst(0x7e));
	} else { /* FNUZ has no -0: a zero magnitude keeps no sign */
		Val vz = reg(newv(s, MR_S, s->lm), 0, s->lm);
		valu2(s, ISA_V_CMP_EQ_U32, vz, cst(0), r);
		Val s2[3] = {res, r, vz};
		valu(s, ISA_V_CNDMASK_B32, 1, &res, 3, s2);
	}
	valu2(s, ISA_V_CMP_U_F32, vcc, a, a);
	Val s3[3] = {res, nan, vcc};
	valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, s3);
}

void sel_small_pack(Isel *s, int t, Val d, Val a, bool low_only)
{
	if (t == DT_F16 && low_only) { /* only 2-byte stores read it */
		valu1(s, ISA_V_CVT_F16_F32, d, a);
	} else if (t == DT_F16) {
		Val x = reg(newv(s, MR_V, 1), 0, 1);
		valu1(s, ISA_V_CVT_F16_F32, x, a);
		valu3(s, ISA_V_BFE_U32, d, x, cst(0), cst(16)); /* clear the high half */
	} else if (t == DT_BF16) {
		f32_to_bf16_bits(s, d, a);
	} else {
		fp8_pack(s, t, d, a);
	}
}

/* SI_UNPACK of SI_HALF(w, half) defined just before it (lower_vec.c: the
 * halves of a packed f16/bf16 load): convert from w itself, one instruction
 * instead of extract + convert.  f16 low half: v_cvt_f32_f16 reads bits 15:0;
 * high half: v_fma_mix_f32 w.hi (f16) * 1.0 + -0.0 (exact, keeps -0);
 * bf16: the shift drops the high half, a mask keeps it.  The SI_HALF is left
 * for dead-code elimination. */
bool sel_unpack_half(Isel *s, const SInst *in, Val d)
{
	const SInst *code = s->sf->code.data;
	int a = in->a, t = in->type;
	if (a < 0 || s->ndefs[a] != 1 || s->isconst[a] || s->def1[a] != (int)(in - code) - 1)
		return false;
	const SInst *h = &code[s->def1[a]];
	if (h->op != SI_HALF || h->guard >= 0 || in->guard >= 0 || s->isconst[h->a] || vcls(s, opnd(s, h->a, 0)) != MR_V)
		return false;
	Val w = opnd(s, h->a, 0);
	if (t == DT_BF16)
		h->imm ? (void)valu2(s, ISA_V_AND_B32, d, cst(0xffff0000u), w) : (void)valu2(s, ISA_V_LSHLREV_B32, d, cst(16), w);
	else if (!h->imm)
		valu1(s, ISA_V_CVT_F32_F16, d, w);
	else {
		MInst *mi = valu3(s, ISA_V_FMA_MIX_F32, d, w, cst(0x3f800000u), cst(0));
		mi->in.mod.op_sel = 1;    /* src0 from the high half */
		mi->in.mod.op_sel_hi = 1; /* src0 is f16, src1/src2 f32 */
		mi->in.mod.neg = 4;       /* src2 = -0.0 */
	}
	return true;
}

void sel_small_unpack(Isel *s, int t, Val d, Val a)
{
	if (t == DT_F16)
		valu1(s, ISA_V_CVT_F32_F16, d, a);
	else if (t == DT_BF16)
		valu2(s, ISA_V_LSHLREV_B32, d, cst(16), a);
	else
		fp8_unpack(s, t, d, a);
}

/* One dword into or out of an AGPR (gfx90a/gfx942 accumulators):
 * v_accvgpr_write takes a VGPR or an inline constant, v_accvgpr_read
 * writes a VGPR. */
void acc_move(Isel *s, Val d, Val a)
{
	bool toacc = vcls(s, d) == MR_A, fromacc = vcls(s, a) == MR_A;
	if (toacc && !fromacc && (a.kind != VK_CONST || !is_inline(ISA_TY_B32, a.bits)))
		a = to_vgpr(s, a);
	unsigned op = toacc ? fromacc ? ISA_V_ACCVGPR_MOV_B32 : ISA_V_ACCVGPR_WRITE_B32 : ISA_V_ACCVGPR_READ_B32;
	if (!toacc && vcls(s, d) != MR_V) { /* never: an MFMA result is not uniform */
		unsupported(s, "a uniform copy of an AGPR accumulator");
		return;
	}
	MInst *mi = emit(s, op, 1);
	put(s, mi, 0, d, ISA_TY_B32);
	put(s, mi, 1, a, ISA_TY_B32);
}

void copy_val(Isel *s, Val d, Val a, bool uni)
{
	if (vcls(s, d) == MR_A || vcls(s, a) == MR_A) {
		for (int k = 0; k < d.count; k++)
			acc_move(s, reg(d.vreg, d.sub + k, 1), a.kind == VK_CONST ? cst(k ? 0 : a.bits)
									 : reg(a.vreg, a.sub + k, 1));
		return;
	}
	for (int k = 0; k < d.count; k++) {
		Val dk = reg(d.vreg, d.sub + k, 1);
		Val ak = a.kind == VK_CONST ? cst(k ? 0 : a.bits) : reg(a.vreg, a.sub + k, 1);
		MInst *mi = uni ? salu1(s, ISA_S_MOV_B32, dk, ak) : valu1(s, ISA_V_MOV_B32, dk, ak);
		if (!k && d.count > 1)
			mi->flags |= MI_DEFALL;
	}
}

void sel_cvt(Isel *s, const SInst *in)
{
	int to = in->type, from = in->type2;
	bool uni = s->uni[in->dst];
	bool fi = dtype_is_float((DType)from), ti = dtype_is_float((DType)to);
	Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
	if (from == DT_BOOL) {
		Val m = opnd_all(s, in->a);
		uint32_t one = ti ? 0x3f800000u : 1;
		if (to == DT_F64 || to == DT_I64) {
			unsupported(s, "bool to 64-bit conversion");
			return;
		}
		Val src[3] = {cst(0), cst(one), m};
		Val dd = reg(d.vreg, d.sub, 1);
		valu(s, ISA_V_CNDMASK_B32, 1, &dd, 3, src);
		return;
	}
	if (to == DT_BOOL) {
		if (fi) {
			valu2(s, ISA_V_CMP_NEQ_F32, d, opnd(s, in->a, 0), cst(0));
			return;
		}
		if (uni && from != DT_I64) {
			Val src[2] = {opnd(s, in->a, 0), cst(0)};
			salu(s, ISA_S_CMP_LG_U32, 0, NULL, 2, src);
			scc_to_mask(s, d.vreg);
		} else if (from == DT_I64) {
			Val z = cst(0);
			z.count = 2;
			valu2(s, ISA_V_CMP_NE_U64, d, opnd_all(s, in->a), z);
		} else {
			valu2(s, ISA_V_CMP_NE_U32, d, opnd(s, in->a, 0), cst(0));
		}
		return;
	}
	if (!fi && !ti) {
		if (to == DT_I64) {
			bool zext = from == DT_U8 || from == DT_U32;
			Val a = opnd(s, in->a, 0);
			if (from == DT_I64) {
				copy_val(s, d, opnd_all(s, in->a), uni);
				return;
			}
			MInst *mi = uni ? salu1(s, ISA_S_MOV_B32, reg(d.vreg, 0, 1), a)
					: valu1(s, ISA_V_MOV_B32, reg(d.vreg, 0, 1), a);
			mi->flags |= MI_DEFALL;
			Val hi = reg(d.vreg, 1, 1);
			if (zext)
				uni ? (void)salu1(s, ISA_S_MOV_B32, hi, cst(0)) : (void)valu1(s, ISA_V_MOV_B32, hi, cst(0));
			else if (uni)
				salu2(s, ISA_S_ASHR_I32, hi, reg(d.vreg, 0, 1), cst(31));
			else
				valu2(s, ISA_V_ASHRREV_I32, hi, cst(31), reg(d.vreg, 0, 1));
			return;
		}
		/* to 32-bit or narrower: take the low dword, then wrap. */
		Val a = opnd(s, in->a, 0);
		switch (to) {
		case DT_I8: case DT_U8: case DT_I16:
			if (uni) {
				unsigned op = to == DT_I8 ? ISA_S_SEXT_I32_I8 : to == DT_I16 ? ISA_S_SEXT_I32_I16 : ISA_S_AND_B32;
				if (op == ISA_S_AND_B32)
					salu2(s, op, d, a, cst(255));
				else
					salu1(s, op, d, a);
			} else {
				valu3(s, to == DT_U8 ? ISA_V_BFE_U32 : ISA_V_BFE_I32, d, a, cst(0), cst(to == DT_I16 ? 16 : 8));
			}
			return;
		default:
			copy_val(s, d, a, uni);
			return;
		}
	}
	if (!fi && ti) {
		if (to == DT_F64 || from == DT_I64) {
			unsupported(s, "64-bit int/float conversion");
			return;
		}
		bool u = from == DT_U32 || from == DT_U8;
		valu1(s, u ? ISA_V_CVT_F32_U32 : ISA_V_CVT_F32_I32, d, opnd(s, in->a, 0));
		/* fp8: ints beyond 2^24 (rounded by the f32 step) saturate anyway */
		if (to == DT_F16 || to == DT_BF16 || dtype_is_fp8((DType)to)) {
			Val b = reg(newv(s, MR_V, 1), 0, 1);
			sel_small_pack(s, to, b, d, false);
			sel_small_unpack(s, to, d, b);
		}
		return;
	}
	if (fi && !ti) {
		if (from == DT_F64 || to == DT_I64) {
			unsupported(s, "64-bit float/int conversion");
			return;
		}
		bool u = to == DT_U32 || to == DT_U8;
		if (to == DT_I8 || to == DT_U8 || to == DT_I16) {
			/* v_cvt saturates to 32 bits (NaN -> 0, negative -> 0 for u32),
			 * then clamp to the small range: the IR's truncate-and-saturate */
			Val w = vtmp(s);
			valu1(s, u ? ISA_V_CVT_U32_F32 : ISA_V_CVT_I32_F32, w, opnd(s, in->a, 0));
			if (u) {
				valu2(s, ISA_V_MIN_U32, d, cst(255), w);
				return;
			}
			int32_t lim = to == DT_I8 ? 127 : 32767;
			Val m = vtmp(s);
			valu2(s, ISA_V_MAX_I32, m, cst((uint32_t)(-lim - 1)), w);
			valu2(s, ISA_V_MIN_I32, d, cst((uint32_t)lim), m);
			return;
		}
		valu1(s, u ? ISA_V_CVT_U32_F32 : ISA_V_CVT_I32_F32, d, opnd(s, in->a, 0));
		return;
	}
	/* float -> float */
	if (to == DT_F64 || from == DT_F64) {
		if (to == DT_F64 && from == DT_F32)
			valu1(s, ISA_V_CVT_F64_F32, d, opnd(s, in->a, 0));
		else if (to == DT_F32 && from == DT_F64)
			valu1(s, ISA_V_CVT_F32_F64, d, opnd_all(s, in->a));
		else
			unsupported(s, "this f64 conversion");
		return;
	}
	/* canonical registers hold exact f32 values: widening is a move,
	 * narrowing rounds through the storage format */
	if (to == DT_F32 || dtype_is_float((DType)to) == 0) {
		valu1(s, ISA_V_MOV_B32, d, opnd(s, in->a, 0));
		return;
	}
	Val b = reg(newv(s, MR_V, 1), 0, 1);
	sel_small_pack(s, to, b, opnd(s, in->a, 0), false);
	sel_small_unpack(s, to, d, b);
}
