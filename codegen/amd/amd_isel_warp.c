/* amd_isel_warp.c — warp operations (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- warp operations ---------------------------------------------------- */

/* d = value of v in SIMT lane (lane ^ x) where addr = lane' * 4 (VGPR). */
static void bpermute(Isel *s, Val d, Val addr, Val v)
{
	v = to_vgpr(s, v);
	MInst *mi = emit(s, ISA_DS_BPERMUTE_B32, 1);
	put(s, mi, 0, d, ISA_TY_B32);
	put(s, mi, 1, addr, ISA_TY_B32);
	put(s, mi, 2, v, ISA_TY_B32);
}

/* gfx9: butterfly exchanges inside a 16-lane row as DPP moves instead of a
 * ds_bpermute round trip: xor 1 and 2 are quad_perms, xor 8 row_ror:8, xor 4
 * two moves, row_shl:4 into banks 0 and 2 (lanes 0-3, 8-11 of each row) and
 * row_shr:4 into banks 1 and 3.  bound_ctrl: a disabled source lane reads 0,
 * as with ds_bpermute.  Not on gfx1100: there the moves would be VALU work
 * queued behind WMMA (flash attention's row maxima), which the emulator's
 * model puts at +6% per CU (docs/performance.md). */
static bool shfl_dpp(Isel *s, Val d, Val v, int64_t x)
{
	unsigned ctrl[2] = {0, 0};
	uint8_t bank[2] = {0xf, 0xf};
	int n = 1;
	if (s->gfx11)
		return false;
	switch (x) {
	case 1: ctrl[0] = 0xb1; break;  /* quad_perm:[1,0,3,2] */
	case 2: ctrl[0] = 0x4e; break;  /* quad_perm:[2,3,0,1] */
	case 8: ctrl[0] = 0x128; break; /* row_ror:8 */
	case 4: ctrl[0] = 0x104, bank[0] = 0x5, ctrl[1] = 0x114, bank[1] = 0xa, n = 2; break;
	default: return false;
	}
	v = to_vgpr(s, v);
	for (int i = 0; i < n; i++) {
		MInst *mi = valu1(s, ISA_V_MOV_B32, d, v);
		mi->in.enc = ISA_ENC_DPP;
		mi->in.mod.dpp_ctrl = (uint16_t)ctrl[i];
		mi->in.mod.row_mask = 0xf;
		mi->in.mod.bank_mask = bank[i];
		mi->in.mod.bound_ctrl = 1;
		if (i)
			mi->flags |= MI_PARTIAL; /* the other banks keep the first move's lanes */
	}
	return true;
}

/* SI_SHFL: lane b of the wave, by ds_bpermute (byte address b * 4). */
void sel_shfl_lane(Isel *s, const SInst *in)
{
	Val addr = reg(newv(s, MR_V, 1), 0, 1);
	valu2(s, ISA_V_LSHLREV_B32, addr, cst(2), opnd(s, in->b, 0));
	bpermute(s, dst_of(s, in->dst, 0, 1), addr, opnd(s, in->a, 0));
}

void sel_shfl(Isel *s, const SInst *in)
{
	if (shfl_dpp(s, dst_of(s, in->dst, 0, 1), opnd(s, in->a, 0), in->imm))
		return;
	Val addr = reg(newv(s, MR_V, 1), 0, 1);
	valu2(s, ISA_V_XOR_B32, addr, cst((uint32_t)(in->imm * 4)), reg(s->lane4, 0, 1));
	bpermute(s, dst_of(s, in->dst, 0, 1), addr, opnd(s, in->a, 0));
}

/* SI_MMA emulated with lane exchanges and FMAs (PTX m16n8k16 layout).
 * Lane l: g = l >> 2, q = l & 3.  A regs: a0 (row g, k 2q..2q+1),
 * a1 (row g+8, k 2q..), a2 (row g, k 2q+8..), a3 (row g+8, k 2q+8..).
 * B regs: b0 (k 2q..2q+1, col g), b1 (k 2q+8.., col g).  C/D: c0,c1 (row
 * g, cols 2q, 2q+1), c2,c3 (row g+8, same cols). */
void sel_mma(Isel *s, const SInst *in)
{
	bool bf = in->type == DT_BF16;
	Val lane4 = reg(s->lane4, 0, 1);
	/* Base lane addresses: row lanes (same g, q' = 0..3): (l & ~3) + q';
	 * column lanes for col 2q+j: g' = 2q + j -> lane 4*(2q+j) + q'.  In
	 * byte units (x4), keeping the wave64 half (bit 5 of the lane). */
	Val half = reg(newv(s, MR_V, 1), 0, 1), rowb = reg(newv(s, MR_V, 1), 0, 1), q4 = reg(newv(s, MR_V, 1), 0, 1);
	valu2(s, ISA_V_AND_B32, half, cst(128), lane4);          /* (l & 32) * 4 */
	valu2(s, ISA_V_AND_B32, rowb, cst(0x70), lane4);         /* (l & 28) * 4 ... without half */
	valu2(s, ISA_V_OR_B32, rowb, rowb, half);
	valu2(s, ISA_V_AND_B32, q4, cst(12), lane4);             /* q * 4 */
	/* colb[j] = half + (4*(2q+j))*4 = half + 32q + 16j */
	Val colb[2];
	for (int j = 0; j < 2; j++) {
		colb[j] = reg(newv(s, MR_V, 1), 0, 1);
		valu3(s, ISA_V_LSHL_ADD_U32, colb[j], q4, cst(3), cst((uint32_t)(16 * j)));
		valu2(s, ISA_V_OR_B32, colb[j], colb[j], half);
	}
	/* Accumulators start from C. */
	Val acc[4];
	for (int i = 0; i < 4; i++) {
		acc[i] = reg(newv(s, MR_V, 1), 0, 1);
		valu1(s, ISA_V_MOV_B32, acc[i], opnd(s, in->c + i, 0));
	}
	for (int qp = 0; qp < 4; qp++) {
		/* Row data from lane (g, qp): a0..a3 hold k = 2qp..+1 and 2qp+8..+9. */
		Val ra = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_ADD_U32, ra, rowb, cst((uint32_t)(4 * qp)));
		Val av[4];
		for (int r = 0; r < 4; r++) {
			av[r] = reg(newv(s, MR_V, 1), 0, 1);
			bpermute(s, av[r], ra, opnd(s, in->a + r, 0));
		}
		for (int j = 0; j < 2; j++) {
			Val cb = reg(newv(s, MR_V, 1), 0, 1);
			valu2(s, ISA_V_ADD_U32, cb, colb[j], cst((uint32_t)(4 * qp)));
			Val bv[2];
			for (int r = 0; r < 2; r++) {
				bv[r] = reg(newv(s, MR_V, 1), 0, 1);
				bpermute(s, bv[r], cb, opnd(s, in->b + r, 0));
			}
			/* k halves: (a0|a1, b0) and (a2|a3, b1), lo and hi 16 bits. */
			for (int kh = 0; kh < 2; kh++) {
				for (int hh = 0; hh < 2; hh++) {
					Val bf32 = reg(newv(s, MR_V, 1), 0, 1);
					Val bsrc = bv[kh];
					if (bf) {
						if (hh)
							valu2(s, ISA_V_AND_B32, bf32, cst(0xffff0000u), bsrc);
						else
							valu2(s, ISA_V_LSHLREV_B32, bf32, cst(16), bsrc);
					} else {
						Val t = bsrc;
						if (hh) {
							t = reg(newv(s, MR_V, 1), 0, 1);
							valu2(s, ISA_V_LSHRREV_B32, t, cst(16), bsrc);
						}
						valu1(s, ISA_V_CVT_F32_F16, bf32, t);
					}
					for (int rr = 0; rr < 2; rr++) { /* row g (a0/a2) or g+8 (a1/a3) */
						Val asrc = av[kh * 2 + rr];
						Val af32 = reg(newv(s, MR_V, 1), 0, 1);
						if (bf) {
							if (hh)
								valu2(s, ISA_V_AND_B32, af32, cst(0xffff0000u), asrc);
							else
								valu2(s, ISA_V_LSHLREV_B32, af32, cst(16), asrc);
						} else {
							Val t = asrc;
							if (hh) {
								t = reg(newv(s, MR_V, 1), 0, 1);
								valu2(s, ISA_V_LSHRREV_B32, t, cst(16), asrc);
							}
							valu1(s, ISA_V_CVT_F32_F16, af32, t);
						}
						Val *ac = &acc[rr * 2 + j];
						valu3(s, ISA_V_FMA_F32, *ac, af32, bf32, *ac);
					}
				}
			}
		}
	}
	for (int i = 0; i < 4; i++)
		valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst + i, 0, 1), acc[i]);
}

/* An operand tuple of n registers from SIMT r..r+n-1: the registers
 * themselves when grouped, else a copy. */
static Val mma_tuple(Isel *s, int r, int n)
{
	if (is_tuple(s, r, n))
		return dst_of(s, r, 0, n);
	Val t = reg(newv(s, MR_V, n), 0, n);
	for (int k = 0; k < n; k++) {
		MInst *mi = valu1(s, ISA_V_MOV_B32, reg(t.vreg, k, 1), opnd(s, r + k, 0));
		if (k == 0 && n > 1)
			mi->flags |= MI_DEFALL;
	}
	return t;
}

/* SI_MMA of an AMD shape: one v_mfma / v_wmma. */
void sel_mma_amd(Isel *s, const SInst *in)
{
	const MmaInfo *m = &simt_mma[in->sub];
	bool bf = in->type == DT_BF16;
	unsigned op;
	switch (in->sub) {
	case MMA_WMMA16: op = bf ? ISA_V_WMMA_F32_16X16X16_BF16 : ISA_V_WMMA_F32_16X16X16_F16; break;
	case MMA_MFMA16: op = bf ? ISA_V_MFMA_F32_16X16X16_BF16 : ISA_V_MFMA_F32_16X16X16_F16; break;
	case MMA_MFMA16_I8: op = ISA_V_MFMA_I32_16X16X16I8; break;
	case MMA_MFMA16X32_I8: op = ISA_V_MFMA_I32_16X16X32_I8; break;
	case MMA_MFMA16X32_FP8:
		op = in->type == DT_FP8E4M3FNUZ ? ISA_V_MFMA_F32_16X16X32_FP8_FP8 : ISA_V_MFMA_F32_16X16X32_BF8_BF8;
		break;
	case MMA_WMMA16_I8: op = ISA_V_WMMA_I32_16X16X16_IU8; break;
	default: unsupported(s, "this matrix shape"); return; /* PTX's m16n8k32.s8: NVIDIA only */
	}
	if (m->wave == 64 && !s->w64) {
		unsupported(s, "a wave64 MFMA in wave32 code");
		return;
	}
	Val a = mma_tuple(s, in->a, m->na), b = mma_tuple(s, in->b, m->nb), c = mma_tuple(s, in->c, m->nc);
	bool same = in->c == in->dst && is_tuple(s, in->dst, m->nc);
	Val d = same ? c : reg(newv(s, MR_V, m->nc), 0, m->nc);
	MInst *mi = emit(s, op, 1);
	put(s, mi, 0, d, ISA_TY_B32);
	put(s, mi, 1, a, ISA_TY_B32);
	put(s, mi, 2, b, ISA_TY_B32);
	put(s, mi, 3, c, ISA_TY_B32);
	if (op == ISA_V_WMMA_I32_16X16X16_IU8)
		mi->in.mod.neg = 3; /* neg_lo:[1,1,0]: A and B are signed */
	for (int k = 0; k < m->nc && !same; k++)
		valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst + k, 0, 1), reg(d.vreg, k, 1));
}

/* An A/B fragment tuple r..r+n-1 whose registers are each defined once,
 * unguarded, in order and in straight-line code (the lowering's fragment
 * loads): the definition of r starts a new value of the whole tuple
 * (MI_DEFALL), so the tuple is not live before it — otherwise its
 * partial writes would keep it live around the whole kernel. */
/* defpos[r]: r's first definition; lastpos[r]: its last one, where the
 * only later ones are 16-bit high-half merges (hi_merge) into it. */
static void mark_tuple_start(Isel *s, const int32_t *defpos, const int32_t *lastpos, const uint8_t *nmerge, int r,
			     int n)
{
	const SimtFunc *sf = s->sf;
	int first = defpos[r], last = first;
	for (int k = 0; k < n; k++) {
		if (s->ndefs[r + k] - nmerge[r + k] != 1 || defpos[r + k] < first)
			return;
		last = TA_MAX(last, lastpos[r + k]);
	}
	for (int i = first; i <= last; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op == SI_LABEL || in->op == SI_BRA || (i == first && in->guard >= 0))
			return;
	}
	s->tfirst[r] = 1;
}

/* Before vregs are made: each AMD-shape SI_MMA operand range of
 * non-uniform dword registers becomes one tuple vreg (vsub = position), so
 * fragments load straight into it and accumulators stay in place.  A
 * register already in another tuple keeps that one (sel copies). */
void group_mma_tuples(Isel *s)
{
	const SimtFunc *sf = s->sf;
	/* SIMT registers the lowering put in AGPRs (SimtFunc.acc): the MFMA
	 * accumulates there (acc_cd) and moves are the only other access. */
	uint8_t *inacc = calloc(sf->regs.len + 1, 1);
	for (size_t i = 0; inacc && i + 1 < sf->acc.len; i += 2)
		for (int32_t k = 0; k < sf->acc.data[i + 1]; k++)
			inacc[sf->acc.data[i] + k] = 1;
	int32_t *defpos = malloc(sizeof(int32_t) * (sf->regs.len + 1));
	int32_t *lastpos = malloc(sizeof(int32_t) * (sf->regs.len + 1));
	uint8_t *nmerge = calloc(sf->regs.len + 1, 1);
	if (!lastpos || !nmerge) {
		free(defpos);
		defpos = NULL;
	}
	for (size_t r = 0; defpos && r < sf->regs.len; r++)
		defpos[r] = -1;
	for (size_t i = 0; defpos && i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		for (int k = 0; in->dst >= 0 && k < dst_count(in); k++) {
			int32_t r = in->dst + k;
			if (hi_merge(in) && nmerge[r] < 255)
				nmerge[r]++;
			else if (defpos[r] < 0)
				defpos[r] = (int32_t)i;
			lastpos[r] = (int32_t)i;
		}
	}
	/* MMA A/B operand ranges that overlap the destination of a wide shared
	 * load (one ds_read_b128 serving two MFMA k-steps, or two loads
	 * filling one WMMA operand: lower_mma.c amd_kblocks) are merged with
	 * it into one tuple; each operand is then a range of it.  ext[r]: end
	 * of the merged range starting at r (0: none). */
	int32_t *ext = calloc(sf->regs.len + 1, sizeof(int32_t));
	uint8_t *wide = calloc(sf->regs.len + 1, 1);
	for (size_t i = 0; ext && wide && i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op == SI_LD && in->vec > 1 && in->sub == SP_SHARED && in->guard < 0)
			for (int k = 0; k < in->vec; k++)
				wide[in->dst + k] = 1;
	}
	for (size_t i = 0; ext && wide && i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op != SI_MMA || in->sub == MMA_M16N8K16)
			continue;
		int rs[2] = {in->a, in->b}, ns[2] = {simt_mma[in->sub].na, simt_mma[in->sub].nb};
		for (int o = 0; o < 2; o++)
			if (wide[rs[o]])
				ext[rs[o]] = TA_MAX(ext[rs[o]], rs[o] + ns[o]);
	}
	for (size_t i = 0; ext && wide && i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op == SI_LD && in->vec > 1 && ext[in->dst])
			ext[in->dst] = TA_MAX(ext[in->dst], in->dst + in->vec);
	}
	for (int32_t r = 0; ext && wide && r < (int32_t)sf->regs.len; r++) {
		if (!ext[r])
			continue;
		int32_t e = ext[r]; /* absorb ranges starting inside [r, e) */
		for (int32_t q = r + 1; q < e; q++)
			if (ext[q])
				e = TA_MAX(e, ext[q]), ext[q] = 0;
		int n = e - r;
		bool ok = n <= 16;
		for (int k = 0; k < n && ok; k++) {
			int vt = sf->regs.data[r + k];
			ok = wide[r + k] && (vt == VT_I32 || vt == VT_F32) && !s->uni[r + k] && !s->isconst[r + k] &&
			     s->vr[r + k] < 0 && s->ndefs[r + k] == 1;
		}
		if (ok) {
			int v = newv(s, MR_V, n);
			for (int k = 0; k < n; k++)
				s->vr[r + k] = v, s->vsub[r + k] = (uint8_t)k;
			if (defpos)
				mark_tuple_start(s, defpos, lastpos, nmerge, r, n);
		}
		r = e - 1;
	}
	free(ext);
	free(wide);
	for (size_t i = 0; i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op != SI_MMA || in->sub == MMA_M16N8K16)
			continue;
		const MmaInfo *m = &simt_mma[in->sub];
		int rs[3] = {in->a, in->b, in->dst}, ns[3] = {m->na, m->nb, m->nc};
		for (int o = 0; o < 3; o++) {
			int r = rs[o], n = ns[o];
			bool ok = s->vr[r] < 0 || is_tuple(s, r, n);
			if (s->vr[r] >= 0)
				continue; /* already grouped (the same fragment used again) */
			for (int k = 0; k < n && ok; k++) {
				int vt = sf->regs.data[r + k];
				ok = (vt == VT_I32 || vt == VT_F32) && !s->uni[r + k] && !s->isconst[r + k] && s->vr[r + k] < 0;
			}
			if (!ok)
				continue;
			bool acc = o == 2 && s->w64 && inacc && inacc[r];
			for (int k = 0; acc && k < n; k++)
				acc = inacc[r + k];
			int v = newv(s, acc ? MR_A : MR_V, n);
			for (int k = 0; k < n; k++)
				s->vr[r + k] = v, s->vsub[r + k] = (uint8_t)k;
			if (o < 2 && defpos)
				mark_tuple_start(s, defpos, lastpos, nmerge, r, n);
		}
	}
	free(defpos);
	free(lastpos);
	free(nmerge);
	free(inacc);
}

/* Is SIMT register r's only value a zero-extended 16-bit load (f16/bf16
 * storage: ds_read_u16 / global_load_ushort)?  Then pack2 needs no mask. */
bool zext16(const Isel *s, int r)
{
	if (r < 0 || s->ndefs[r] != 1 || s->isconst[r])
		return false;
	const SInst *d = &s->sf->code.data[s->def1[r]];
	return d->op == SI_LD && d->dst == r && d->vec <= 1 && d->guard < 0 &&
	       (d->type == DT_F16 || d->type == DT_BF16) && d->sub != SP_LOCAL;
}

/* Is SIMT register r's only value an f32 -> f16 conversion (SI_PACK)? */
bool f16_packed(const Isel *s, int r)
{
	if (r < 0 || s->ndefs[r] != 1 || s->isconst[r])
		return false;
	const SInst *d = &s->sf->code.data[s->def1[r]];
	return d->op == SI_PACK && d->type == DT_F16 && d->dst == r;
}

/* The fp8 byte behind f16 register r when r = SI_PACK(f16, SI_UNPACK(fp8,
 * v)) with v = w >> 8*pos (or v = w, pos 0), every link defined once and
 * unguarded (the fp8 gemm fallback's fragments, lower_mma.c amd_frag_fp8_f16):
 * returns the fp8 type and sets *w, *pos; 0 otherwise. */
static int fp8_f16_src(const Isel *s, int r, int32_t *w, int *pos)
{
	const SInst *code = s->sf->code.data;
	if (r < 0 || s->ndefs[r] != 1 || s->isconst[r])
		return 0;
	const SInst *p = &code[s->def1[r]];
	if (p->op != SI_PACK || p->type != DT_F16 || p->guard >= 0 || s->ndefs[p->a] != 1 || s->isconst[p->a])
		return 0;
	const SInst *u = &code[s->def1[p->a]];
	if (u->op != SI_UNPACK || !dtype_is_fp8((DType)u->type) || u->guard >= 0 || s->ndefs[u->a] != 1 ||
	    s->isconst[u->a])
		return 0;
	*w = u->a, *pos = 0;
	const SInst *sh = &code[s->def1[u->a]];
	if (sh->op == SI_SHR && sh->type == DT_U32 && sh->guard < 0 && sh->b >= 0 && s->isconst[sh->b] &&
	    s->cval[sh->b] % 8 == 0 && s->cval[sh->b] >= 8 && s->cval[sh->b] < 32 && s->ndefs[sh->a] == 1 &&
	    !s->isconst[sh->a])
		*w = sh->a, *pos = (int)(s->cval[sh->b] / 8);
	return u->type;
}

/* SI_PACK2 of two fp8 bytes converted to f16 (exact for every fp8 value):
 * straight from the bytes, two halves at once.  v_perm_b32 puts each byte
 * at bits 8..15 of its half, which is already the f16 for e5m2; e4m3 and
 * e4m3fnuz shift the magnitude under the f16 exponent field and scale both
 * halves with one exact v_pk_mul_f16 (f16 denormals are kept), then mark
 * their NaN patterns.  e5m2fnuz (whose top exponent is finite) keeps the
 * generic path.  Returns false when the pattern does not apply. */
bool sel_pack2_fp8(Isel *s, const SInst *in)
{
	int32_t w0, w1;
	int p0, p1;
	int t = fp8_f16_src(s, in->a, &w0, &p0);
	if (!t || t == DT_FP8E5M2FNUZ || fp8_f16_src(s, in->b, &w1, &p1) != t)
		return false;
	/* Reading the bytes here gives the chain's values only when they
	 * were defined earlier in the same straight-line run (no label in
	 * between: no loop can redefine them first).  Fragments are short. */
	int at = (int)(in - s->sf->code.data), from = TA_MIN(s->def1[w0], s->def1[w1]);
	if (from >= at || at - from > 256)
		return false;
	for (int i = from + 1; i < at; i++)
		if (s->sf->code.data[i].op == SI_LABEL)
			return false;
	Val d = dst_of(s, in->dst, 0, 1);
	Val x = t == DT_FP8E5M2 ? d : vtmp(s);
	/* v_perm_b32 selectors: 0-3 bytes of src1, 4-7 of src0, 0x0c zero */
	uint32_t sel = (uint32_t)(4 + p1) << 24 | 0x0cu << 16 | (uint32_t)p0 << 8 | 0x0cu;
	valu3(s, ISA_V_PERM_B32, x, opnd(s, w1, 0), opnd(s, w0, 0), cst(sel));
	if (t == DT_FP8E5M2)
		return true;
	Val y = vtmp(s), z = vtmp(s), n = vtmp(s);
	uint32_t scale = (uint32_t)(30 - fp8_fmt(t).bias) << 10; /* f16 2^(15 - bias) */
	valu2(s, ISA_V_LSHRREV_B32, y, cst(1), x);
	valu2(s, ISA_V_AND_B32, y, cst(0x3f803f80u), y);
	valu3(s, ISA_V_AND_OR_B32, y, x, cst(0x80008000u), y);
	valu2(s, ISA_V_PK_MUL_F16, z, y, cst(scale | scale << 16));
	if (t == DT_FP8E4M3) {
		/* magnitude 0x7f: adding 1 carries into bit 15 of the half; the
		 * half is then 480 (0x5f80), and with 0x2000 an f16 NaN */
		valu2(s, ISA_V_AND_B32, n, cst(0x7f007f00u), x);
		valu2(s, ISA_V_ADD_U32, n, cst(0x01000100u), n);
		valu2(s, ISA_V_LSHRREV_B32, n, cst(2), n);
		valu3(s, ISA_V_AND_OR_B32, d, n, cst(0x20002000u), z);
	} else {
		/* 0x80 (sign, zero magnitude: -0 so far) becomes 0xfe00: a zero
		 * magnitude plus 0x7f carries nothing into bit 15 */
		Val m = vtmp(s);
		valu2(s, ISA_V_AND_B32, m, cst(0x7f007f00u), x);
		valu2(s, ISA_V_ADD_U32, m, cst(0x7f007f00u), m);
		valu3(s, ISA_V_BFI_B32, n, m, cst(0), x); /* ~m & x */
		valu2(s, ISA_V_AND_B32, n, cst(0x80008000u), n);
		valu2(s, ISA_V_LSHRREV_B32, n, cst(15), n);
		valu2(s, ISA_V_MUL_U32_U24, n, cst(0x7e00), n);
		valu2(s, ISA_V_OR_B32, d, n, z);
	}
	return true;
}
