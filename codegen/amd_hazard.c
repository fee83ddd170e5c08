/* amd_hazard.c — wait states the hardware does not provide by itself.
 *
 * Hazards the code generator can produce (/work/shared/notes/amd-isa.md §9):
 *   gfx90a/gfx942: a VMEM store of more than 8 bytes followed by a VALU
 *           that overwrites its data (s_nop 1 after such stores);
 *   gfx942: a transcendental result used by the next VALU needs one wait
 *           state (s_nop 0 after every transcendental);
 *   gfx1100: VALU use of a transcendental result (VALUTransUseHazard):
 *           s_delay_alu instid0(TRANS32_DEP_1) before the next instruction
 *           makes it wait for the result;
 *   gfx90a/gfx942 MFMA (§9.2, §9.3): an MFMA result read or overwritten by
 *           another instruction, or read as another MFMA's A/B or as an
 *           overlapping (not identical) C, needs wait states that grow
 *           with the pass count; an MFMA reading a VGPR a VALU just wrote
 *           needs 2, after a VALU exec write 4;
 *   gfx1100 WMMA: a WMMA whose A/B overlaps the previous WMMA's D needs a
 *           VALU in between (v_nop).
 * The matrix hazards cross branches (an accumulation loop's back edge), so
 * they are tracked per block over the CFG: each block starts from the
 * union of its predecessors' end states, which two rounds in layout
 * order settle for the loops the lowering emits (entries expire after at
 * most 19 wait states, so only a short path around a back edge matters).
 * Inserted s_nop give k+1 wait states, every other instruction one.
 * DPP, lane-select and VALU-SGPR->VMEM hazards cannot arise yet (no such
 * patterns are generated); see docs/amd-backend.md. */
#include "amd.h"

#include <stdlib.h>

static bool is_trans(unsigned op)
{
	switch (op) {
	case ISA_V_EXP_F32: case ISA_V_LOG_F32: case ISA_V_RCP_F32: case ISA_V_RSQ_F32: case ISA_V_SQRT_F32:
	case ISA_V_SIN_F32: case ISA_V_COS_F32: case ISA_V_RCP_IFLAG_F32:
	case ISA_V_EXP_F16: case ISA_V_LOG_F16: case ISA_V_RCP_F16: case ISA_V_SQRT_F16: case ISA_V_RSQ_F16:
		return true;
	}
	return false;
}

/* ---- matrix-core hazard state -------------------------------------------- */

enum { HZ_MAX = 24, HZ_WINDOW = 20 }; /* entries; no rule needs more than 19 wait states */

typedef struct {
	uint8_t kind;          /* HZ_MFMA (D written, C read), HZ_VALU (VGPRs written) */
	uint8_t file;          /* ISA_K_VGPR / ISA_K_AGPR */
	uint8_t passes, xdl;
	uint16_t reg, cnt;     /* D (or the VALU's destination) */
	uint16_t creg, ccnt;   /* MFMA: C read */
	uint16_t age;          /* wait states since */
} HzEnt;
enum { HZ_MFMA, HZ_VALU };

typedef struct {
	HzEnt e[HZ_MAX];
	int n;
	uint16_t exec_age;     /* since a VALU wrote exec (HZ_WINDOW = long ago) */
	int16_t wmma_reg, wmma_cnt; /* gfx11: previous WMMA's D with no VALU since (cnt 0 = none) */
} HzState;

/* Pass counts (amd-isa.md §9.2/§9.3); unknown MFMAs get the largest. */
static int mfma_passes(ta_target t, unsigned op, int *xdl)
{
	*xdl = 1;
	switch (op) {
	case ISA_V_MFMA_F32_16X16X16_F16: case ISA_V_MFMA_F32_16X16X16_BF16: case ISA_V_MFMA_I32_16X16X32_I8:
	case ISA_V_MFMA_F32_16X16X8_XF32:
		return t == TA_TARGET_GFX942 ? 4 : 8;
	case ISA_V_MFMA_F32_32X32X8_F16: case ISA_V_MFMA_F32_32X32X8_BF16: case ISA_V_MFMA_I32_32X32X16_I8:
		return t == TA_TARGET_GFX942 ? 8 : 16;
	case ISA_V_MFMA_I32_16X16X16I8:
		return 8;
	case ISA_V_MFMA_F32_16X16X4_F32:
		*xdl = 0;
		return 8;
	}
	*xdl = 0; /* non-XDL needs one less on gfx942; 16 passes covers the rest */
	return 16;
}

static bool overlaps(const IsaOperand *o, int file, int reg, int cnt)
{
	return o->kind == file && o->reg < reg + cnt && reg < o->reg + o->count;
}

static bool is_vreg(const IsaOperand *o)
{
	return o->kind == ISA_K_VGPR || o->kind == ISA_K_AGPR;
}

/* Wait states instruction mi still needs under state st. */
static int hz_need(ta_target t, const HzState *st, const MInst *mi)
{
	const IsaInsn *in = &mi->in;
	uint32_t fl = in->op < ISA_NUM_OPS ? isa_ops[in->op].flags : 0;
	bool mfma = fl & ISA_F_MFMA;
	bool g942 = t == TA_TARGET_GFX942;
	int need = 0;
	for (int i = 0; i < st->n; i++) {
		const HzEnt *e = &st->e[i];
		int w = 0;
		if (e->kind == HZ_VALU) {
			/* a VALU wrote a VGPR an MFMA reads */
			for (int k = 1; mfma && k < in->nops; k++)
				if (overlaps(&in->ops[k], e->file, e->reg, e->cnt))
					w = 2;
		} else {
			int N = e->passes, raw = g942 ? N + (e->xdl ? 3 : 2) : N + 3;
			for (int k = 0; k < in->nops; k++) {
				const IsaOperand *o = &in->ops[k];
				if (!is_vreg(o))
					continue;
				if (overlaps(o, e->file, e->reg, e->cnt)) {
					bool same = o->reg == e->reg && o->count == e->cnt;
					if (mfma && (k == 3 || k == 0) && same && in->nops > 3 &&
					    in->ops[0].reg == in->ops[3].reg && in->ops[0].kind == in->ops[3].kind)
						continue; /* accumulation chain: the same C/D */
					if (mfma && k == 3)
						w = TA_MAX(w, g942 ? N + (e->xdl ? 1 : 0) : N);
					else
						w = TA_MAX(w, raw);
				}
				/* WAR: overwriting what the MFMA still reads as C */
				if (!mfma && k < mi->ndef && overlaps(o, e->file, e->creg, e->ccnt))
					w = TA_MAX(w, N - 1);
			}
		}
		need = TA_MAX(need, w - (int)e->age);
	}
	if (mfma && st->exec_age < 4)
		need = TA_MAX(need, 4 - (int)st->exec_age);
	return need;
}

static void hz_push(HzState *st, HzEnt e)
{
	for (int i = 0; i < st->n; i++) {
		HzEnt *x = &st->e[i];
		if (x->kind == e.kind && x->file == e.file && x->reg == e.reg && x->cnt == e.cnt && x->creg == e.creg &&
		    x->ccnt == e.ccnt && x->passes == e.passes && x->xdl == e.xdl) {
			x->age = TA_MIN(x->age, e.age); /* the same hazard seen again: the nearer one */
			return;
		}
	}
	if (st->n == HZ_MAX) { /* full: drop the oldest (all are younger than the window) */
		int old = 0;
		for (int i = 1; i < st->n; i++)
			if (st->e[i].age > st->e[old].age)
				old = i;
		st->e[old] = st->e[--st->n];
	}
	st->e[st->n++] = e;
}

static void hz_age(HzState *st, int ws)
{
	int j = 0;
	for (int i = 0; i < st->n; i++) {
		st->e[i].age = (uint16_t)TA_MIN(st->e[i].age + ws, HZ_WINDOW);
		if (st->e[i].age < (st->e[i].kind == HZ_VALU ? 2 : HZ_WINDOW))
			st->e[j++] = st->e[i];
	}
	st->n = j;
	st->exec_age = (uint16_t)TA_MIN(st->exec_age + ws, HZ_WINDOW);
}

/* State after instruction mi issues (its own slot counts one wait state
 * for what follows). */
static void hz_step(ta_target t, HzState *st, const MInst *mi)
{
	const IsaInsn *in = &mi->in;
	uint32_t fl = in->op < ISA_NUM_OPS ? isa_ops[in->op].flags : 0;
	int ws = in->op == ISA_S_NOP ? (int)(in->ops[0].imm & 15) + 1 : 1;
	hz_age(st, ws);
	if (fl & ISA_F_WMMA) {
		st->wmma_reg = (int16_t)in->ops[0].reg, st->wmma_cnt = in->ops[0].count;
	} else if (fl & ISA_F_VALU) {
		st->wmma_cnt = 0;
	}
	if (t != TA_TARGET_GFX90A && t != TA_TARGET_GFX942)
		return;
	if (fl & ISA_F_MFMA) {
		HzEnt e = {HZ_MFMA, in->ops[0].kind, 0, 0, in->ops[0].reg, in->ops[0].count, 0, 0, 0};
		int xdl;
		e.passes = (uint8_t)mfma_passes(t, in->op, &xdl);
		e.xdl = (uint8_t)xdl;
		if (in->nops > 3 && is_vreg(&in->ops[3]))
			e.creg = in->ops[3].reg, e.ccnt = in->ops[3].count;
		hz_push(st, e);
		return;
	}
	if (!(fl & ISA_F_VALU))
		return;
	if (fl & ISA_F_WEXEC)
		st->exec_age = 0;
	for (int k = 0; k < mi->ndef && k < in->nops; k++) {
		const IsaOperand *o = &in->ops[k];
		if (o->kind == ISA_K_SPECIAL && (o->reg == ISA_SP_EXEC_LO || o->reg == ISA_SP_EXEC_HI))
			st->exec_age = 0;
		if (is_vreg(o))
			hz_push(st, (HzEnt){HZ_VALU, o->kind, 0, 0, o->reg, o->count, 0, 0, 0});
	}
}

/* st |= o: every entry of o, and the nearer exec write / pending WMMA. */
static void hz_merge(HzState *st, const HzState *o)
{
	for (int i = 0; i < o->n; i++)
		hz_push(st, o->e[i]);
	st->exec_age = TA_MIN(st->exec_age, o->exec_age);
	if (o->wmma_cnt && !st->wmma_cnt)
		st->wmma_reg = o->wmma_reg, st->wmma_cnt = o->wmma_cnt;
}

static void hz_init(HzState *st)
{
	st->n = 0;
	st->exec_age = HZ_WINDOW;
	st->wmma_reg = st->wmma_cnt = 0;
}

static MInst nop_insn(unsigned op, int imm)
{
	MInst w;
	memset(&w, 0, sizeof w);
	isa_insn_init(&w.in, op);
	if (op != ISA_V_NOP) {
		w.in.nops = 1;
		w.in.ops[0] = isa_imm(imm);
	}
	return w;
}

/* Runs block b from state st: with out != NULL appends the code with the
 * wait states it needs; st ends as the block's end state. */
static int run_block(const MFunc *mf, const MBlock *bl, HzState *st, MInstVec *out)
{
	ta_target t = ISA_TARGET(mf->target);
	bool gfx9 = t == TA_TARGET_GFX942 || t == TA_TARGET_GFX90A;
	for (int i = bl->first; i < bl->last; i++) {
		const MInst *mi = &mf->insns.data[i];
		const IsaInsn *cur = &mi->in;
		uint32_t fl = cur->op < ISA_NUM_OPS ? isa_ops[cur->op].flags : 0;
		MInst pre[3];
		int npre = 0;
		if (gfx9) {
			for (int need = hz_need(t, st, mi); need > 0 && npre < 3; need -= 16)
				pre[npre++] = nop_insn(ISA_S_NOP, TA_MIN(need, 16) - 1);
		} else if ((fl & ISA_F_WMMA) && st->wmma_cnt) {
			for (int k = 1; k <= 2 && k < cur->nops; k++)
				if (overlaps(&cur->ops[k], ISA_K_VGPR, st->wmma_reg, st->wmma_cnt) && !npre)
					pre[npre++] = nop_insn(ISA_V_NOP, 0);
		}
		for (int k = 0; k < npre; k++) {
			hz_step(t, st, &pre[k]);
			if (out && vec_push(out, pre[k]))
				return -1;
		}
		hz_step(t, st, mi);
		if (out && vec_push(out, *mi))
			return -1;
		MInst w;
		bool post = false;
		if (gfx9 && (fl & (ISA_F_GLOBAL | ISA_F_MUBUF)) && (fl & ISA_F_STORE) && cur->nops > 1 &&
		    cur->ops[1].count > 2) {
			/* VMEM store of more than 8 bytes: the next VALU must not
			 * overwrite its data yet (1 wait state on gfx90a, 2 on
			 * gfx940+); s_nop 1 covers both. */
			w = nop_insn(ISA_S_NOP, 1);
			post = true;
		} else if (is_trans(cur->op) && t == TA_TARGET_GFX942) {
			w = nop_insn(ISA_S_NOP, 0);
			post = true;
		} else if (is_trans(cur->op) && t == TA_TARGET_GFX1100) {
			w = nop_insn(ISA_S_DELAY_ALU, 5); /* instid0(TRANS32_DEP_1) */
			post = true;
		}
		if (post) {
			hz_step(t, st, &w);
			if (out && vec_push(out, w))
				return -1;
		}
	}
	return 0;
}

int amd_hazard(MFunc *mf, Diag *d)
{
	size_t nb = mf->blocks.len;
	MInstVec out = {0};
	HzState *end = malloc(sizeof(HzState) * (nb ? nb : 1));
	int32_t *npred = calloc(nb + 1, sizeof(int32_t));
	int32_t *pstart = calloc(nb + 2, sizeof(int32_t)), *preds = malloc(sizeof(int32_t) * (3 * nb + 1));
	if (!end || !npred || !pstart || !preds)
		goto oom;
	/* predecessor lists (CSR) from the successor edges */
	for (size_t b = 0; b < nb; b++)
		for (int k = 0; k < 3; k++)
			if (mf->blocks.data[b].succ[k] >= 0 && (size_t)mf->blocks.data[b].succ[k] < nb)
				npred[mf->blocks.data[b].succ[k]]++;
	for (size_t b = 0; b < nb; b++)
		pstart[b + 1] = pstart[b] + npred[b];
	for (size_t b = 0; b < nb; b++)
		npred[b] = pstart[b];
	for (size_t b = 0; b < nb; b++)
		for (int k = 0; k < 3; k++) {
			int s = mf->blocks.data[b].succ[k];
			if (s >= 0 && (size_t)s < nb)
				preds[npred[s]++] = (int32_t)b;
		}
	for (size_t b = 0; b < nb; b++)
		hz_init(&end[b]);
	/* end states: a few rounds in layout order (2 settle the loop nests
	 * the lowering produces around matrix instructions: a back edge's
	 * state reaches the loop head in the second), then the emitting
	 * round; without matrix instructions every hazard is block-local */
	int rounds = 1;
	for (size_t i = 0; i < mf->insns.len && rounds == 1; i++) {
		unsigned op = mf->insns.data[i].in.op;
		if (op < ISA_NUM_OPS && (isa_ops[op].flags & (ISA_F_MFMA | ISA_F_WMMA)))
			rounds = 3;
	}
	for (int round = 0; round < rounds; round++) {
		bool emit = round == rounds - 1;
		for (size_t b = 0; b < nb; b++) {
			MBlock *bl = &mf->blocks.data[b];
			HzState st;
			hz_init(&st);
			for (int p = pstart[b]; p < pstart[b + 1]; p++)
				hz_merge(&st, &end[preds[p]]);
			if (b > 0 && pstart[b] == pstart[b + 1]) /* no recorded edge: layout fallthrough */
				hz_merge(&st, &end[b - 1]);
			int first = (int)out.len;
			if (run_block(mf, bl, &st, emit ? &out : NULL))
				goto oom;
			end[b] = st;
			if (emit) {
				bl->first = first;
				bl->last = (int)out.len;
			}
		}
	}
	vec_free(&mf->insns);
	mf->insns = out;
	free(end), free(npred), free(pstart), free(preds);
	return 0;
oom:
	vec_free(&out);
	free(end), free(npred), free(pstart), free(preds);
	diag_error(d, "out of memory in hazard pass");
	return -1;
}
