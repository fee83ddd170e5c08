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
 * later events); the lattice is finite and merges only add pending entries
 * or lower counts, so it terminates.  The number of outstanding events
 * itself only matters at s_barrier (wait if any), so it is kept as a
 * flag: a count would climb by one per trip around a loop that stores
 * without waiting and hold the fixed point back for up to 63 sweeps.
 *
 * Cost.  Inside a block the state is kept as sequence numbers: each
 * counter numbers its events, a register remembers the number of the event
 * that writes it, and a wait raises the counter's floor (events below it
 * have arrived).  "Later events" is then seq - 1 - ev, clamped to the field
 * maximum, so issuing an event or applying a wait is O(1) instead of a
 * sweep over all 768 register slots.  Between blocks the state is a sorted
 * list of only the pending registers, so block entry, exit and the merge at
 * joins cost O(pending registers), not O(register file). */
#include "amd.h"

#include <stdlib.h>

enum { C_VM, C_LGKM, C_VS, NC };
enum { NSL = 768 };  /* 256 SGPR + 256 VGPR + 256 AGPR slots */
enum { SEQ0 = 64 };  /* first event number in a block: above every field maximum */

/* One pending register at a block boundary. */
typedef struct {
	uint16_t key; /* counter * NSL + slot: lists are sorted by it */
	uint8_t pend; /* later events of the counter (0..63) */
} Pend;

/* State at a block's entry. */
typedef struct {
	VEC(Pend) p;
	uint8_t busy[NC]; /* events of the counter may be outstanding */
	uint8_t smem;     /* an SMEM event may be outstanding */
	uint8_t seen;
} WState;

/* State while walking a block's instructions. */
typedef struct {
	int32_t ev[NC * NSL];     /* event writing the slot, -1 none; pending iff >= floor */
	int32_t seq[NC], floor[NC];
	uint8_t busy[NC];
	int16_t mx[NC];           /* field maxima */
	uint8_t smem;
	uint8_t listed[NC * NSL]; /* key is in `touched` */
	VEC(uint16_t) touched;    /* keys whose ev was set in this block */
} Cur;

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

/* Later events of counter c after the one writing key (-1: not pending). */
static int pend_of(ta_target t, const Cur *cs, int c, int key)
{
	int32_t e = cs->ev[key];
	if (e < cs->floor[c])
		return -1;
	int p = cs->seq[c] - 1 - e;
	return p < cs->mx[c] ? p : cs->mx[c];
}

static int set_ev(Cur *cs, int key, int32_t e)
{
	cs->ev[key] = e;
	if (cs->listed[key])
		return 0;
	cs->listed[key] = 1;
	return vec_push(&cs->touched, (uint16_t)key);
}

/* Starts a block from its entry state (cs holds no slot). */
static int load(Cur *cs, const WState *w)
{
	for (int c = 0; c < NC; c++) {
		cs->seq[c] = SEQ0;
		cs->floor[c] = SEQ0; /* lowered to the oldest pending entry below */
		cs->busy[c] = w->busy[c];
	}
	cs->smem = w->smem;
	for (size_t i = 0; i < w->p.len; i++) {
		int key = w->p.data[i].key, e = SEQ0 - 1 - w->p.data[i].pend;
		if (set_ev(cs, key, e))
			return -1;
		cs->floor[key / NSL] = TA_MIN(cs->floor[key / NSL], e);
	}
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* Ends a block: its pending registers into *exit (sorted, if exit is not
 * NULL), and cs emptied for the next block. */
static int unload(ta_target t, Cur *cs, WState *exit)
{
	int rc = 0;
	if (exit) {
		exit->p.len = 0;
		memcpy(exit->busy, cs->busy, sizeof exit->busy);
		exit->smem = cs->smem;
		exit->seen = 1;
		if (cs->touched.len) /* qsort(NULL, 0, ...) is undefined */
			qsort(cs->touched.data, cs->touched.len, sizeof(uint16_t), cmp_key);
	}
	for (size_t i = 0; i < cs->touched.len; i++) {
		int key = cs->touched.data[i], p = pend_of(t, cs, key / NSL, key);
		if (exit && p >= 0 && vec_push(&exit->p, ((Pend){(uint16_t)key, (uint8_t)p})))
			rc = -1;
		cs->ev[key] = -1;
		cs->listed[key] = 0;
	}
	cs->touched.len = 0;
	return rc;
}

/* dst = merge(dst, src) with a linear merge of the sorted lists; tmp is
 * scratch.  *changed is set when dst grows. */
static int merge(WState *dst, const WState *src, WState *tmp, int *changed)
{
	if (!dst->seen) {
		dst->p.len = 0;
		if (vec_reserve(&dst->p, src->p.len))
			return -1;
		if (src->p.len)
			memcpy(dst->p.data, src->p.data, src->p.len * sizeof(Pend));
		dst->p.len = src->p.len;
		memcpy(dst->busy, src->busy, sizeof dst->busy);
		dst->smem = src->smem;
		dst->seen = 1;
		*changed = 1;
		return 0;
	}
	for (int c = 0; c < NC; c++)
		if (src->busy[c] && !dst->busy[c])
			dst->busy[c] = 1, *changed = 1;
	if (src->smem && !dst->smem)
		dst->smem = 1, *changed = 1;
	tmp->p.len = 0;
	if (vec_reserve(&tmp->p, dst->p.len + src->p.len))
		return -1;
	size_t i = 0, j = 0;
	Pend *o = tmp->p.data;
	while (i < dst->p.len || j < src->p.len) {
		const Pend *a = i < dst->p.len ? &dst->p.data[i] : NULL;
		const Pend *b = j < src->p.len ? &src->p.data[j] : NULL;
		if (a && (!b || a->key < b->key)) {
			*o++ = *a, i++;
		} else if (!a || b->key < a->key) {
			*o++ = *b, j++, *changed = 1;
		} else {
			*o = *a;
			if (b->pend < a->pend)
				o->pend = b->pend, *changed = 1;
			o++, i++, j++;
		}
	}
	tmp->p.len = (size_t)(o - tmp->p.data);
	/* Swap the lists (tmp keeps dst's old storage as scratch). */
	VEC(Pend) sw;
	memcpy(&sw, &dst->p, sizeof sw);
	memcpy(&dst->p, &tmp->p, sizeof sw);
	memcpy(&tmp->p, &sw, sizeof sw);
	return 0;
}

/* Applies a wait of need[c] (-1 = none) to the state. */
static void apply_wait(Cur *cs, const int *need)
{
	for (int c = 0; c < NC; c++) {
		if (need[c] < 0)
			continue;
		/* Pending with need[c] or more later events = arrived. */
		int32_t f = cs->seq[c] - need[c];
		if (f > cs->floor[c])
			cs->floor[c] = f;
		if (need[c] == 0)
			cs->busy[c] = 0;
		if (c == C_LGKM && need[c] == 0)
			cs->smem = 0;
	}
}

/* Waits instruction in needs in state cs (need[c] = -1: none). */
static void needs(ta_target t, const Cur *cs, const IsaInsn *in, int *need)
{
	for (int c = 0; c < NC; c++)
		need[c] = -1;
	if (in->op == ISA_S_BARRIER) {
		for (int c = 0; c < NC; c++)
			if (cs->busy[c])
				need[c] = 0;
		return;
	}
	/* Only a counter with an event at or above its floor can have a
	 * pending register (gfx9 never uses vscnt, and often nothing is in
	 * flight). */
	int act[NC], na = 0;
	for (int c = 0; c < NC; c++)
		if (cs->floor[c] < cs->seq[c])
			act[na++] = c;
	for (int k = 0; k < in->nops && na; k++) {
		const IsaOperand *o = &in->ops[k];
		if (o->kind != ISA_K_SGPR && o->kind != ISA_K_VGPR && o->kind != ISA_K_AGPR)
			continue;
		int s0 = slot_of(o->kind, o->reg), s1 = TA_MIN(s0 + o->count, NSL);
		for (int a = 0; a < na; a++) {
			int c = act[a];
			/* The most recent event is the fewest later events. */
			int32_t e = -1;
			for (int sl = s0; sl < s1; sl++)
				e = TA_MAX(e, cs->ev[c * NSL + sl]);
			if (e < cs->floor[c])
				continue;
			int p = TA_MIN(cs->seq[c] - 1 - e, cs->mx[c]);
			if (need[c] < 0 || p < need[c])
				need[c] = p;
		}
	}
	if (need[C_LGKM] > 0 && cs->smem)
		need[C_LGKM] = 0;
	for (int c = 0; c < NC; c++)
		if (need[c] > cs->mx[c])
			need[c] = cs->mx[c];
}

static int issue(ta_target t, Cur *cs, const MInst *mi)
{
	int smem, c = counter_of(t, &mi->in, &smem);
	if (c < 0)
		return 0;
	/* Counts saturate at the field maximum (a wait can ask no more), which
	 * also bounds the dataflow lattice: the fixed point comes quickly. */
	int32_t e = cs->seq[c]++;
	cs->busy[c] = 1;
	if (smem)
		cs->smem = 1;
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
		const IsaOperand *o = &mi->in.ops[k];
		if (o->kind != ISA_K_SGPR && o->kind != ISA_K_VGPR && o->kind != ISA_K_AGPR)
			continue;
		for (int j = 0; j < o->count; j++) {
			int sl = slot_of(o->kind, o->reg + j);
			if (sl < NSL && set_ev(cs, c * NSL + sl, e))
				return -1;
		}
	}
	return 0;
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
	WState *in = calloc((size_t)nb + 1, sizeof(WState)), exit = {0}, tmp = {0}, empty = {0};
	Cur *cs = malloc(sizeof(Cur));
	int *work = malloc(sizeof(int) * ((size_t)nb + 1));
	char *inwork = calloc((size_t)nb + 1, 1), *ran = calloc((size_t)nb + 1, 1);
	size_t ni = mf->insns.len;
	int8_t(*wneed)[NC] = malloc(sizeof *wneed * (ni + 1)); /* waits found by the last run */
	MInstVec out = mir_spare(mf);
	int rc = -1, nw = 0;
	if (!in || !cs || !work || !inwork || !ran || !wneed || vec_reserve(&out, ni + ni / 4 + 16))
		goto out;
	memset(cs, 0, sizeof *cs);
	for (int k = 0; k < NC * NSL; k++)
		cs->ev[k] = -1;
	for (int c = 0; c < NC; c++)
		cs->mx[c] = (int16_t)maxcnt(t, c);
	if (nb) {
		in[0].seen = 1;
		mir_work_push(work, &nw, 0), inwork[0] = 1;
	}
	while (nw) {
		int b = mir_work_pop(work, &nw);
		inwork[b] = 0;
		ran[b] = 1;
		if (load(cs, &in[b]))
			goto out;
		const MBlock *bl = &mf->blocks.data[b];
		for (int i = bl->first; i < bl->last; i++) {
			int need[NC];
			needs(t, cs, &mf->insns.data[i].in, need);
			apply_wait(cs, need);
			for (int c = 0; c < NC; c++)
				wneed[i][c] = (int8_t)need[c];
			if (issue(t, cs, &mf->insns.data[i]))
				goto out;
		}
		if (unload(t, cs, &exit))
			goto out;
		for (int s = 0; s < 3; s++) {
			int sb = bl->succ[s];
			if (sb < 0)
				continue;
			int changed = 0;
			if (merge(&in[sb], &exit, &tmp, &changed))
				goto out;
			if (changed && !inwork[sb])
				mir_work_push(work, &nw, sb), inwork[sb] = 1;
		}
	}
	/* Rewrite with the waits.  A block's last run above started from its
	 * final entry state (any change queued it again), so the waits it
	 * recorded are the answer; blocks the sweep never reached run here
	 * from the empty state. */
	for (int b = 0; b < nb; b++) {
		MBlock *bl = &mf->blocks.data[b];
		if (!ran[b] && load(cs, &empty))
			goto out;
		int first = (int)out.len;
		for (int i = bl->first; i < bl->last; i++) {
			int need[NC];
			if (ran[b]) {
				for (int c = 0; c < NC; c++)
					need[c] = wneed[i][c];
			} else {
				needs(t, cs, &mf->insns.data[i].in, need);
				apply_wait(cs, need);
				if (issue(t, cs, &mf->insns.data[i]))
					goto out;
			}
			if (emit_wait(t, &out, need) || vec_push(&out, mf->insns.data[i]))
				goto out;
		}
		if (!ran[b])
			unload(t, cs, NULL);
		bl->first = first;
		bl->last = (int)out.len;
	}
	mir_set_insns(mf, &out);
	rc = 0;
out:
	if (rc)
		diag_error(d, "out of memory in waitcnt insertion");
	mir_put_spare(mf, &out);
	for (int b = 0; in && b < nb; b++)
		vec_free(&in[b].p);
	vec_free(&exit.p), vec_free(&tmp.p);
	if (cs)
		vec_free(&cs->touched);
	free(in), free(cs), free(work), free(inwork), free(ran), free(wneed);
	return rc;
}
