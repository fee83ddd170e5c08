/* amd_waitcnt.c — s_waitcnt insertion after register allocation.
 *
 * Forward dataflow over the blocks.  For each memory counter (vmcnt,
 * lgkmcnt, and gfx11's vscnt) and each register dword, the state records
 * how many later events of that counter were issued after the event that
 * will write the register (-1: nothing pending).  An instruction that reads
 * or overwrites a pending register waits until at most that many events
 * are outstanding, i.e. exactly until its value has arrived.  SMEM returns
 * out of order, so any lgkm wait while a scalar load is outstanding is
 * lgkmcnt(0).  s_barrier waits for everything (workgroup memory order).
 * At joins the state is the pessimistic merge (pending anywhere, fewest
 * later events).  O(blocks x registers) per sweep; the lattice is finite
 * and merges only add pending entries or lower counts, so it terminates. */
#include "amd.h"

#include <stdlib.h>

enum { C_VM, C_LGKM, C_VS, NC };
enum { NSL = 768 }; /* 256 SGPR + 256 VGPR + 256 AGPR slots */

typedef struct {
	int16_t pend[NC][NSL];
	int16_t outstanding[NC];
	uint8_t smem; /* an SMEM event may be outstanding */
	uint8_t seen;
} WState;

static int slot_of(int kind, int reg)
{
	return kind == ISA_K_SGPR ? reg : kind == ISA_K_VGPR ? 256 + reg : 512 + reg;
}

static int maxcnt(ta_target t, int c)
{
	if (c == C_LGKM)
		return ISA_TARGET(t) == TA_TARGET_GFX1100 ? 63 : 15;
	return 63;
}

/* Counter an instruction increments (-1 none) and whether it is SMEM. */
static int counter_of(ta_target t, const IsaInsn *in, int *smem)
{
	*smem = 0;
	if (in->op >= ISA_NUM_OPS)
		return -1;
	uint32_t f = isa_ops[in->op].flags;
	if (f & ISA_F_SMEM) {
		*smem = 1;
		return C_LGKM;
	}
	if (f & ISA_F_DS)
		return C_LGKM;
	if (f & (ISA_F_GLOBAL | ISA_F_MUBUF)) {
		bool ret = (f & (ISA_F_LOAD | ISA_F_RTN)) != 0;
		if (ISA_TARGET(t) == TA_TARGET_GFX1100 && !ret)
			return C_VS;
		return C_VM;
	}
	return -1;
}

static void merge(WState *dst, const WState *src, int *changed)
{
	if (!dst->seen) {
		*dst = *src;
		*changed = 1;
		return;
	}
	for (int c = 0; c < NC; c++) {
		if (src->outstanding[c] > dst->outstanding[c])
			dst->outstanding[c] = src->outstanding[c], *changed = 1;
		for (int r = 0; r < NSL; r++) {
			int16_t a = dst->pend[c][r], b = src->pend[c][r];
			if (b < 0)
				continue;
			if (a < 0 || b < a)
				dst->pend[c][r] = b, *changed = 1;
		}
	}
	if (src->smem && !dst->smem)
		dst->smem = 1, *changed = 1;
}

/* Applies a wait of need[c] (-1 = none) to the state. */
static void apply_wait(WState *st, const int *need)
{
	for (int c = 0; c < NC; c++) {
		if (need[c] < 0)
			continue;
		for (int r = 0; r < NSL; r++)
			if (st->pend[c][r] >= need[c])
				st->pend[c][r] = -1;
		if (st->outstanding[c] > need[c])
			st->outstanding[c] = (int16_t)need[c];
		if (c == C_LGKM && need[c] == 0)
			st->smem = 0;
	}
}

/* Waits instruction in needs in state st (need[c] = -1: none). */
static void needs(ta_target t, const WState *st, const IsaInsn *in, int *need)
{
	for (int c = 0; c < NC; c++)
		need[c] = -1;
	if (in->op == ISA_S_BARRIER) {
		for (int c = 0; c < NC; c++)
			if (st->outstanding[c] > 0)
				need[c] = 0;
		return;
	}
	for (int k = 0; k < in->nops; k++) {
		const IsaOperand *o = &in->ops[k];
		if (o->kind != ISA_K_SGPR && o->kind != ISA_K_VGPR && o->kind != ISA_K_AGPR)
			continue;
		for (int j = 0; j < o->count; j++) {
			int sl = slot_of(o->kind, o->reg + j);
			if (sl >= NSL)
				continue;
			for (int c = 0; c < NC; c++) {
				int p = st->pend[c][sl];
				if (p >= 0 && (need[c] < 0 || p < need[c]))
					need[c] = p;
			}
		}
	}
	if (need[C_LGKM] > 0 && st->smem)
		need[C_LGKM] = 0;
	for (int c = 0; c < NC; c++)
		if (need[c] > maxcnt(t, c))
			need[c] = maxcnt(t, c);
}

static void issue(ta_target t, WState *st, const MInst *mi)
{
	int smem, c = counter_of(t, &mi->in, &smem);
	if (c < 0)
		return;
	/* Counts saturate at the field maximum (a wait can ask no more), which
	 * also bounds the dataflow lattice: the fixed point comes quickly. */
	int mx = maxcnt(t, c);
	for (int r = 0; r < NSL; r++)
		if (st->pend[c][r] >= 0 && st->pend[c][r] < mx)
			st->pend[c][r]++;
	if (st->outstanding[c] < mx)
		st->outstanding[c]++;
	if (smem)
		st->smem = 1;
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
		const IsaOperand *o = &mi->in.ops[k];
		if (o->kind != ISA_K_SGPR && o->kind != ISA_K_VGPR && o->kind != ISA_K_AGPR)
			continue;
		for (int j = 0; j < o->count; j++) {
			int sl = slot_of(o->kind, o->reg + j);
			if (sl < NSL)
				st->pend[c][sl] = 0;
		}
	}
}

static void init_state(WState *st)
{
	memset(st, 0, sizeof *st);
	for (int c = 0; c < NC; c++)
		for (int r = 0; r < NSL; r++)
			st->pend[c][r] = -1;
}

static int emit_wait(ta_target t, MInstVec *out, const int *need)
{
	MInst mi;
	memset(&mi, 0, sizeof mi);
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi.vr[i] = -1;
	if (need[C_VM] >= 0 || need[C_LGKM] >= 0) {
		isa_insn_init(&mi.in, ISA_S_WAITCNT);
		mi.in.nops = 1;
		int vm = need[C_VM] >= 0 ? need[C_VM] : 63;
		int lg = need[C_LGKM] >= 0 ? need[C_LGKM] : maxcnt(t, C_LGKM);
		mi.in.ops[0] = isa_imm(isa_waitcnt_encode(t, vm, 7, lg));
		if (vec_push(out, mi))
			return -1;
	}
	if (need[C_VS] >= 0) {
		isa_insn_init(&mi.in, ISA_S_WAITCNT_VSCNT);
		mi.in.nops = 2;
		mi.in.ops[0] = isa_special(ISA_SP_NULL, 1);
		mi.in.ops[1] = isa_imm(need[C_VS]);
		if (vec_push(out, mi))
			return -1;
	}
	return 0;
}

int amd_waitcnt(MFunc *mf, Diag *d)
{
	ta_target t = mf->target;
	int nb = (int)mf->blocks.len;
	WState *in = calloc((size_t)nb + 1, sizeof(WState)), cur;
	int *work = malloc(sizeof(int) * ((size_t)nb + 1));
	char *inwork = calloc((size_t)nb + 1, 1);
	MInstVec out = {0};
	int rc = -1, nw = 0;
	if (!in || !work || !inwork)
		goto out;
	if (nb) {
		init_state(&in[0]);
		in[0].seen = 1;
		work[nw++] = 0, inwork[0] = 1;
	}
	while (nw) {
		/* Lowest block id first keeps the sweep close to layout order. */
		int bi = 0;
		for (int k = 1; k < nw; k++)
			if (work[k] < work[bi])
				bi = k;
		int b = work[bi];
		work[bi] = work[--nw];
		inwork[b] = 0;
		cur = in[b];
		const MBlock *bl = &mf->blocks.data[b];
		for (int i = bl->first; i < bl->last; i++) {
			int need[NC];
			needs(t, &cur, &mf->insns.data[i].in, need);
			apply_wait(&cur, need);
			issue(t, &cur, &mf->insns.data[i]);
		}
		for (int s = 0; s < 3; s++) {
			int sb = bl->succ[s];
			if (sb < 0)
				continue;
			int changed = 0;
			merge(&in[sb], &cur, &changed);
			in[sb].seen = 1;
			if (changed && !inwork[sb])
				work[nw++] = sb, inwork[sb] = 1;
		}
	}
	/* Rewrite with the waits. */
	for (int b = 0; b < nb; b++) {
		MBlock *bl = &mf->blocks.data[b];
		cur = in[b];
		if (!cur.seen)
			init_state(&cur);
		int first = (int)out.len;
		for (int i = bl->first; i < bl->last; i++) {
			int need[NC];
			needs(t, &cur, &mf->insns.data[i].in, need);
			apply_wait(&cur, need);
			if (emit_wait(t, &out, need) || vec_push(&out, mf->insns.data[i]))
				goto out;
			issue(t, &cur, &mf->insns.data[i]);
		}
		bl->first = first;
		bl->last = (int)out.len;
	}
	vec_free(&mf->insns);
	mf->insns = out;
	out = (MInstVec){0};
	rc = 0;
out:
	if (rc)
		diag_error(d, "out of memory in waitcnt insertion");
	vec_free(&out);
	free(in), free(work), free(inwork);
	return rc;
}
