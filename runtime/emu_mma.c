/* emu_mma.c — matrix instructions: gfx90a/gfx942 MFMA and gfx11 WMMA, with
 * the operand lane layouts of amd-isa.md §6 and the MFMA wait-state rules
 * of §9.2/§9.3.
 *
 * MFMA (single block, M = N, wave64): G = 64 / M lane groups, each lane
 * holds kper = K / G consecutive k values of one row of A (lane l: row
 * l % M, k = (l / M) * kper + j) and of one column of B.  D/C register r of
 * lane l is row (r / 4) * 4G + (l / M) * 4 + r % 4, column l % M.
 * Products are summed in double and rounded once to the output type (the
 * hardware's internal accumulation order is not modelled).
 *
 * WMMA (16x16x16): lane l holds row l % 16 of A and column l % 16 of B (the
 * upper lanes duplicate the lower ones; lanes 0-15 are read).  D register i
 * of lane l is row i * (L / 16) + l / 16, column l % 16: wave32 rows 2i and
 * 2i + 1, wave64 rows 4i .. 4i + 3 in its four 16-lane groups (RDNA3 ISA
 * §7.9 "Wave Matrix Multiply Accumulate"; AMD's matrix instruction
 * calculator, -a rdna3 -w 64 --matrix-layout, prints the same table).
 * f16/bf16 results use the half op_sel[2] selects. */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "emu_impl.h"

typedef enum { T_F32, T_F16, T_BF16, T_I8, T_FP8, T_BF8, T_XF32, T_IU4 } InTy;

typedef struct {
	uint16_t op;
	uint8_t m, k;
	uint8_t ta, tb; /* InTy of A and B */
	uint8_t out;    /* 0 f32, 1 i32 */
	uint8_t p90, p942, xdl; /* pass counts; XDL (gfx942 hazard class) */
} MfmaInfo;

static const MfmaInfo mfma[] = {
	{ISA_V_MFMA_F32_32X32X2_F32, 32, 2, T_F32, T_F32, 0, 16, 16, 0},
	{ISA_V_MFMA_F32_16X16X4_F32, 16, 4, T_F32, T_F32, 0, 8, 8, 0},
	{ISA_V_MFMA_F32_32X32X8_F16, 32, 8, T_F16, T_F16, 0, 16, 8, 1},
	{ISA_V_MFMA_F32_16X16X16_F16, 16, 16, T_F16, T_F16, 0, 8, 4, 1},
	{ISA_V_MFMA_F32_32X32X8_BF16, 32, 8, T_BF16, T_BF16, 0, 16, 8, 1},
	{ISA_V_MFMA_F32_16X16X16_BF16, 16, 16, T_BF16, T_BF16, 0, 8, 4, 1},
	{ISA_V_MFMA_I32_32X32X8I8, 32, 8, T_I8, T_I8, 1, 16, 16, 1},
	{ISA_V_MFMA_I32_16X16X16I8, 16, 16, T_I8, T_I8, 1, 8, 8, 1},
	{ISA_V_MFMA_I32_32X32X16_I8, 32, 16, T_I8, T_I8, 1, 16, 8, 1},
	{ISA_V_MFMA_I32_16X16X32_I8, 16, 32, T_I8, T_I8, 1, 8, 4, 1},
	{ISA_V_MFMA_F32_32X32X4_XF32, 32, 4, T_XF32, T_XF32, 0, 16, 8, 1},
	{ISA_V_MFMA_F32_16X16X8_XF32, 16, 8, T_XF32, T_XF32, 0, 8, 4, 1},
	{ISA_V_MFMA_F32_16X16X32_FP8_FP8, 16, 32, T_FP8, T_FP8, 0, 8, 4, 1},
	{ISA_V_MFMA_F32_16X16X32_FP8_BF8, 16, 32, T_FP8, T_BF8, 0, 8, 4, 1},
	{ISA_V_MFMA_F32_16X16X32_BF8_FP8, 16, 32, T_BF8, T_FP8, 0, 8, 4, 1},
	{ISA_V_MFMA_F32_16X16X32_BF8_BF8, 16, 32, T_BF8, T_BF8, 0, 8, 4, 1},
	{ISA_V_MFMA_F32_32X32X16_FP8_FP8, 32, 16, T_FP8, T_FP8, 0, 16, 8, 1},
	{ISA_V_MFMA_F32_32X32X16_FP8_BF8, 32, 16, T_FP8, T_BF8, 0, 16, 8, 1},
	{ISA_V_MFMA_F32_32X32X16_BF8_FP8, 32, 16, T_BF8, T_FP8, 0, 16, 8, 1},
	{ISA_V_MFMA_F32_32X32X16_BF8_BF8, 32, 16, T_BF8, T_BF8, 0, 16, 8, 1},
};

static const MfmaInfo *find_mfma(unsigned op)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(mfma); i++)
		if (mfma[i].op == op)
			return &mfma[i];
	return NULL;
}

int emu_mma_passes(const EmuDevice *dev, unsigned op, int *xdl);
int emu_mma_passes(const EmuDevice *dev, unsigned op, int *xdl)
{
	const MfmaInfo *mi = find_mfma(op);
	if (!mi)
		return 0;
	*xdl = mi->xdl;
	return dev->target == TA_TARGET_GFX942 ? mi->p942 : mi->p90;
}

static int per_word(InTy t)
{
	switch (t) {
	case T_F32: case T_XF32: return 1;
	case T_F16: case T_BF16: return 2;
	case T_IU4: return 8;
	default: return 4;
	}
}

/* Element j of the packed values in registers regs[0..] (one lane). */
static double elem(InTy t, const uint32_t *const *regs, int lane, int j, int sign)
{
	int pw = per_word(t), bits = 32 / pw;
	uint32_t word = regs[j / pw][lane];
	uint32_t v = pw == 1 ? word : word >> (bits * (j % pw)) & ((1u << bits) - 1);
	switch (t) {
	case T_F32: case T_XF32: return emu_f(v);
	case T_F16: return dt_f16_to_double((uint16_t)v);
	case T_BF16: return dt_bf16_to_double((uint16_t)v);
	case T_FP8: return dt_e4m3fnuz_to_double((uint8_t)v);
	case T_BF8: return dt_e5m2fnuz_to_double((uint8_t)v);
	case T_I8: return sign ? (double)(int8_t)v : (double)v;
	case T_IU4: return sign ? (double)((int32_t)(v << 28) >> 28) : (double)v;
	}
	return 0;
}

static int mfma_exec(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, const MfmaInfo *mi)
{
	const IsaOperand *od = &in->ops[0], *oa = &in->ops[1], *ob = &in->ops[2], *oc = &in->ops[3];
	if (in->mod.cbsz || in->mod.abid || in->mod.blgp) {
		emu_fail(dev, w, insn, "MFMA broadcast controls (cbsz/abid/blgp) are not emulated");
		return -1;
	}
	if (oa->kind != ISA_K_VGPR && oa->kind != ISA_K_AGPR) {
		emu_fail(dev, w, insn, "MFMA with a non-register A/B operand is not emulated");
		return -1;
	}
	int M = mi->m, K = mi->k, G = 64 / M, kper = K / G;
	const uint32_t *ar[8], *br[8];
	for (int i = 0; i < oa->count && i < 8; i++)
		ar[i] = emu_vreg(w, oa->kind == ISA_K_AGPR, oa->reg + i);
	for (int i = 0; i < ob->count && i < 8; i++)
		br[i] = emu_vreg(w, ob->kind == ISA_K_AGPR, ob->reg + i);
	int nd = od->count;
	static _Thread_local uint32_t out[16][64]; /* scratch, per thread */
	/* Decode every lane's A and B values once (kper <= 16). */
	static _Thread_local double av[64][16], bv[64][16];
	for (int l = 0; l < 64; l++)
		for (int j = 0; j < kper && j < 16; j++)
			av[l][j] = elem(mi->ta, ar, l, j, 1), bv[l][j] = elem(mi->tb, br, l, j, 1);
	for (int r = 0; r < nd; r++)
		for (int l = 0; l < 64; l++) {
			int row = (r / 4) * 4 * G + (l / M) * 4 + r % 4, col = l % M;
			double acc = 0;
			int64_t iacc = 0;
			for (int k = 0; k < K; k++) {
				int la = row + M * (k / kper), lb = col + M * (k / kper), j = k % kper;
				double x = av[la][j], y = bv[lb][j];
				if (mi->out)
					iacc += (int64_t)x * (int64_t)y;
				else
					acc += x * y;
			}
			uint32_t c;
			if (oc->kind == ISA_K_VGPR || oc->kind == ISA_K_AGPR)
				c = emu_vreg(w, oc->kind == ISA_K_AGPR, oc->reg + r)[l];
			else
				c = oc->kind == ISA_K_CONST && oc->reg >= 128 && oc->reg <= 208
					? (uint32_t)(oc->reg <= 192 ? oc->reg - 128 : 192 - oc->reg)
					: (uint32_t)oc->imm;
			if (mi->out)
				out[r][l] = (uint32_t)((int64_t)(int32_t)c + iacc);
			else
				out[r][l] = emu_u((float)((double)emu_f(c) + acc));
		}
	int ag = od->kind == ISA_K_AGPR;
	for (int r = 0; r < nd; r++)
		memcpy(emu_vreg(w, ag, od->reg + r), out[r], sizeof out[r]);
	emu_vwritten(dev, w, insn, ag, od->reg, nd, ~0ull);
	/* Hazard bookkeeping (gfx9): when D may be read by VALU/VMEM/LDS or
	 * as another MFMA's A/B. */
	int passes = dev->target == TA_TARGET_GFX942 ? mi->p942 : mi->p90;
	int waits = dev->target == TA_TARGET_GFX942 ? passes + (mi->xdl ? 3 : 2) : passes + 3;
	uint64_t *ready = ag ? w->aready : w->vready;
	for (int r = 0; r < nd; r++)
		ready[od->reg + r] = w->clock + 1 + (uint64_t)waits;
	w->last_mfma_dreg = od->reg;
	w->last_mfma_dn = nd;
	w->last_mfma_afile = ag;
	return dev->failed ? -1 : 0;
}

static int wmma_exec(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	const IsaOperand *od = &in->ops[0], *oa = &in->ops[1], *ob = &in->ops[2], *oc = &in->ops[3];
	unsigned op = in->op;
	InTy t = op == ISA_V_WMMA_F32_16X16X16_F16 || op == ISA_V_WMMA_F16_16X16X16_F16 ? T_F16
	       : op == ISA_V_WMMA_I32_16X16X16_IU8 ? T_I8 : op == ISA_V_WMMA_I32_16X16X16_IU4 ? T_IU4 : T_BF16;
	int out16 = op == ISA_V_WMMA_F16_16X16X16_F16 || op == ISA_V_WMMA_BF16_16X16X16_BF16;
	int iout = t == T_I8 || t == T_IU4;
	int sa = in->mod.neg & 1, sb = in->mod.neg >> 1 & 1; /* iu8/iu4: neg_lo marks signed inputs */
	int hi = in->mod.op_sel >> 2 & 1;
	int L = w->lanes;
	/* gfx11 hazard: A/B must not overlap the previous WMMA's D without a
	 * VALU instruction in between. */
	if (w->last_mfma_dn && (dev->checks & EMU_CHECK_HAZARD)) {
		int d0 = w->last_mfma_dreg, d1 = d0 + w->last_mfma_dn;
		for (int s = 1; s <= 2; s++) {
			const IsaOperand *o = &in->ops[s];
			if (o->reg < d1 && o->reg + o->count > d0) {
				emu_fail(dev, w, insn, "WMMA reads v%d, written by the previous WMMA with no VALU instruction "
					 "between (insert v_nop)", o->reg > d0 ? o->reg : d0);
				return -1;
			}
		}
	}
	const uint32_t *ar[8], *br[8];
	for (int i = 0; i < oa->count && i < 8; i++)
		ar[i] = emu_vreg(w, 0, oa->reg + i);
	for (int i = 0; i < ob->count && i < 8; i++)
		br[i] = emu_vreg(w, 0, ob->reg + i);
	int nd = od->count;
	static _Thread_local uint32_t out[8][64]; /* scratch, per thread */
	static _Thread_local double av[16][16], bv[16][16]; /* A rows / B columns, decoded once */
	for (int i = 0; i < 16; i++)
		for (int k = 0; k < 16; k++)
			av[i][k] = elem(t, ar, i, k, sa), bv[i][k] = elem(t, br, i, k, sb);
	for (int r = 0; r < nd; r++)
		for (int l = 0; l < L; l++) {
			int row = r * (L / 16) + l / 16, col = l % 16;
			double acc = 0;
			int64_t iacc = 0;
			for (int k = 0; k < 16; k++) {
				double x = av[row][k], y = bv[col][k];
				if (iout)
					iacc += (int64_t)x * (int64_t)y;
				else
					acc += x * y;
			}
			uint32_t c = emu_vreg(w, 0, oc->reg + r)[l];
			if (iout)
				out[r][l] = (uint32_t)((int64_t)(int32_t)c + iacc);
			else if (!out16)
				out[r][l] = emu_u((float)((double)emu_f(c) + acc));
			else {
				uint32_t ch = hi ? c >> 16 : c & 0xffff;
				double cv = t == T_F16 ? dt_f16_to_double((uint16_t)ch) : dt_bf16_to_double((uint16_t)ch);
				uint32_t h = t == T_F16 ? dt_f16_from_double(cv + acc) : dt_bf16_from_double(cv + acc);
				uint32_t old = emu_vreg(w, 0, od->reg + r)[l];
				out[r][l] = hi ? (old & 0xffff) | h << 16 : (old & 0xffff0000u) | h;
			}
		}
	for (int r = 0; r < nd; r++)
		memcpy(emu_vreg(w, 0, od->reg + r), out[r], (size_t)L * 4);
	emu_vwritten(dev, w, insn, 0, od->reg, nd, L == 64 ? ~0ull : 0xffffffffull);
	w->last_mfma_dreg = od->reg;
	w->last_mfma_dn = nd;
	w->last_mfma_afile = 0;
	return dev->failed ? -1 : 0;
}

int emu_mma(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	if (isa_ops[in->op].flags & ISA_F_WMMA)
		return wmma_exec(dev, w, insn, in);
	const MfmaInfo *mi = find_mfma(in->op);
	if (!mi) {
		emu_fail(dev, w, insn, "this MFMA variant is not emulated (multi-block and f64 forms are not)");
		return -1;
	}
	return mfma_exec(dev, w, insn, in, mi);
}
