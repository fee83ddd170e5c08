/* amd_sched.c — pre-RA scheduling: hoist loads (with their address chains)
 * away from their uses.
 *
 * A global or LDS load issued right before its first use stalls the wave
 * for the whole memory latency at the s_waitcnt that amd_waitcnt puts in
 * front of the use.  Moving the load up lets independent work hide that
 * latency, and moving several loads up to the same point forms a clause
 * (back-to-back loads of one kind, which the hardware issues as a group).
 *
 * The mover (ACO's pre-RA scheduler, simplified to one direction): for each
 * load L of a block, in order, walk upward over at most SCHED_WINDOW
 * instructions while the one above, X, can be passed:
 *   - X defines nothing L reads, and reads or writes nothing L writes
 *     (vreg ids compared, so sub-ranges of one vreg count as conflicts);
 *   - X is not a memory write, atomic, barrier, wait, branch, pseudo op
 *     other than COPY, exec/vcc/m0 writer or physical-register writer: the
 *     per-resource dependency chains reduced to "stop at the last one";
 *   - X is not a load of the same kind (that is where the clause forms);
 *   - the register demand across X plus L's result stays within the limit.
 * L moves to the highest position found.  isel computes most addresses
 * right before the load, so first L's address chain climbs the same way:
 * the plain VALU ops within the window that compute what L reads (at most
 * SCHED_CONE, see alu_movable), top op first.  Each load costs O(W) to find
 * its chain and at most SCHED_CONE + 1 hoists of O(W), so a block costs
 * O(n·W).
 *
 * The limit comes from the demand: the most VGPRs (and SGPRs) that keep the
 * kernel's current occupancy, less a margin for the allocator (its interval
 * hulls need a few registers more than the demand).  The demand of every
 * passed instruction is raised by L's size as L moves, so the bound holds
 * without recomputing liveness.  Afterwards the maximum of that bound is
 * checked; if it crossed the limit (it cannot, unless the bookkeeping is
 * wrong) the moves are undone from a log and the mover retries with
 * a limit one cliff lower, at most SCHED_RETRIES times, then keeps the
 * source order.  One liveness pass in all. */
#include "amd.h"

#include <stdlib.h>

#include "isa.h"
#include "regalloc.h"

enum { SCHED_WINDOW = 64, SCHED_CONE = 8, SCHED_RETRIES = 8, SCHED_MARGIN_V = 4, SCHED_MARGIN_S = 6 };

/* Load kind for clause grouping, 0 = not a movable load. */
static int load_kind(const MInst *mi)
{
	unsigned op = mi->in.op;
	if (op >= MOP_BASE)
		return 0;
	uint32_t fl = isa_ops[op].flags;
	if (!(fl & ISA_F_LOAD) || (fl & (ISA_F_ATOMIC | ISA_F_STORE | ISA_F_WEXEC | ISA_F_WVCC | ISA_F_WSCC)))
		return 0;
	if (mi->flags)
		return 0; /* merges with an old value or is tied: keep in place */
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
		if (!(mi->vmask & (1u << k)))
			return 0; /* writes a physical register */
	if (fl & ISA_F_GLOBAL)
		return 1;
	if (fl & ISA_F_DS)
		return 2;
	if (fl & ISA_F_MUBUF)
		return 3;
	return 0; /* SMEM stays: scalar registers are the scarcer file */
}

/* Can an instruction being hoisted (a load of `kind`, or 0: a plain VALU
 * op of a load's address chain) pass X upward, ignoring vreg dependencies? */
static int passable(const MInst *x, int kind)
{
	unsigned op = x->in.op;
	if (op == MOP_COPY)
		return 1;
	if (op >= MOP_BASE || x->ndef == 0)
		return 0;
	uint32_t fl = isa_ops[op].flags;
	if (fl & (ISA_F_STORE | ISA_F_ATOMIC | ISA_F_BRANCH | ISA_F_ENDPGM | ISA_F_WAIT | ISA_F_WEXEC | ISA_F_WVCC))
		return 0;
	for (int k = 0; k < x->ndef && k < x->in.nops; k++)
		if (!(x->vmask & (1u << k)))
			return 0;
	if (kind && load_kind(x) == kind)
		return 0;
	return 1;
}

/* A VALU op that may move with its load: one virtual result, every register
 * operand virtual, no implicit SCC/VCC/M0/exec use, no modifiers that tie it
 * to other lanes (DPP), no merge flags, not a matrix op. */
static int alu_movable(const MInst *x)
{
	unsigned op = x->in.op;
	if (op >= MOP_BASE || x->flags || x->ndef != 1 || x->in.enc == ISA_ENC_DPP)
		return 0;
	uint32_t fl = isa_ops[op].flags;
	if (!(fl & ISA_F_VALU) || (fl & (ISA_F_RSCC | ISA_F_WSCC | ISA_F_RVCC | ISA_F_WVCC | ISA_F_WEXEC | ISA_F_REXEC |
					 ISA_F_RM0 | ISA_F_LOAD | ISA_F_STORE | ISA_F_MFMA | ISA_F_WMMA)))
		return 0;
	for (int k = 0; k < x->in.nops; k++) {
		int kd = x->in.ops[k].kind;
		if ((kd == ISA_K_SGPR || kd == ISA_K_VGPR || kd == ISA_K_AGPR || kd == ISA_K_SPECIAL) &&
		    !(x->vmask & (1u << k)))
			return 0;
	}
	return 1;
}

/* L's vregs in mark[] (1: read, 2: written), so that each instruction
 * the walk passes is checked in O(its operands). */
static void mark_vregs(uint8_t *mark, const MInst *l, int on)
{
	for (int a = 0; a < l->in.nops; a++)
		if (l->vmask & (1u << a))
			mark[l->vr[a]] = on ? (uint8_t)(mark[l->vr[a]] | (mi_is_def(l, a) ? 2 : 1)) : 0;
}

/* vreg conflicts between load L (marked) and X above it. */
static int depends(const uint8_t *mark, const MInst *x)
{
	for (int b = 0; b < x->in.nops; b++) {
		if (!(x->vmask & (1u << b)))
			continue;
		int m = mark[x->vr[b]];
		if (m && (mi_is_def(x, b) || (m & 2)))
			return 1; /* RAW, WAR or WAW */
	}
	return 0;
}

static int def_size(const MFunc *f, const MInst *l, int *cls)
{
	int n = 0;
	*cls = MR_V;
	for (int k = 0; k < l->ndef && k < l->in.nops; k++) {
		n += l->in.ops[k].count;
		*cls = f->vregs.data[l->vr[k]].cls;
	}
	return n;
}

/* Largest count that keeps the waves of `have` (≤ 256). */
static int cliff(ta_target t, int have, int agprs, int sgprs)
{
	int w = occ_waves(t, TA_MAX(have, 1), agprs, sgprs, 0, 0, NULL), n = TA_MAX(have, 1);
	while (n < 256 && occ_waves(t, n + 1, agprs, sgprs, 0, 0, NULL) >= w)
		n++;
	return n;
}

typedef struct {
	MFunc *f;
	RaDemand *dm;
	int lim_v, lim_s;
	int32_t *log; /* (from, to) per move */
	int moves, cap;
	uint8_t *mark; /* per vreg, zero between hoists (see mark_vregs) */
} Mover;

/* Hoists the instruction at i within block [first, i) as far as it may go;
 * kind: its load kind, 0 for an address-chain VALU op.  Returns its new
 * position. */
static int hoist(Mover *m, int first, int i, int kind)
{
	MFunc *f = m->f;
	RaDemand *dm = m->dm;
	const MInst *l = &f->insns.data[i];
	int cls, sz = def_size(f, l, &cls), lim = cls == MR_S ? m->lim_s : cls == MR_V ? m->lim_v : 0;
	int to = i;
	if (m->moves >= m->cap)
		return i;
	mark_vregs(m->mark, l, 1);
	for (int j = i - 1; j >= first && i - j <= SCHED_WINDOW; j--) {
		const MInst *x = &f->insns.data[j];
		if (!passable(x, kind) || depends(m->mark, x))
			break;
		int have = cls == MR_S ? dm[j].s : cls == MR_V ? dm[j].v : dm[j].a;
		if (have + sz > lim)
			break;
		to = j;
	}
	mark_vregs(m->mark, l, 0);
	if (to == i)
		return i;
	MInst save = *l;
	RaDemand dsave = dm[i];
	memmove(&f->insns.data[to + 1], &f->insns.data[to], sizeof(MInst) * (size_t)(i - to));
	for (int j = i; j > to; j--) {
		dm[j] = dm[j - 1];
		if (cls == MR_S)
			dm[j].s = (int16_t)(dm[j].s + sz);
		else if (cls == MR_V)
			dm[j].v = (int16_t)(dm[j].v + sz);
	}
	f->insns.data[to] = save;
	dm[to] = dsave;
	m->log[2 * m->moves] = i;
	m->log[2 * m->moves + 1] = to;
	m->moves++;
	return to;
}

/* Does x define one of the vregs in need[0..n)? */
static int defines_any(const MInst *x, const int32_t *need, int n)
{
	for (int k = 0; k < x->ndef && k < x->in.nops; k++)
		if (x->vmask & (1u << k))
			for (int j = 0; j < n; j++)
				if (x->vr[k] == need[j])
					return 1;
	return 0;
}

/* One pass over every block.  For each load: find its address chain (the
 * plain VALU ops above it, within the window, that compute what it reads,
 * at most SCHED_CONE of them), hoist those top first, then the load. */
static void mover(Mover *m)
{
	MFunc *f = m->f;
	for (size_t b = 0; b < f->blocks.len; b++) {
		const MBlock *bl = &f->blocks.data[b];
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *l = &f->insns.data[i];
			int kind = load_kind(l);
			if (!kind)
				continue;
			int32_t need[4 * ISA_MAX_OPS];
			int nneed = 0, cone[SCHED_CONE], nc = 0;
			for (int k = l->ndef; k < l->in.nops; k++)
				if (l->vmask & (1u << k))
					need[nneed++] = l->vr[k];
			for (int j = i - 1; j >= bl->first && i - j <= SCHED_WINDOW; j--) {
				const MInst *x = &f->insns.data[j];
				if (!defines_any(x, need, nneed))
					continue;
				if (!alu_movable(x) || nc == SCHED_CONE)
					break;
				cone[nc++] = j;
				for (int k = x->ndef; k < x->in.nops && nneed < 4 * ISA_MAX_OPS; k++)
					if (x->vmask & (1u << k))
						need[nneed++] = x->vr[k];
			}
			/* Top first: a move only shifts instructions above the mover,
			 * so the positions of the members below stay valid. */
			for (int c = nc - 1; c >= 0; c--)
				hoist(m, bl->first, cone[c], 0);
			hoist(m, bl->first, i, kind);
		}
	}
}

/* Undoes the logged moves, last first: the source order again. */
static void undo(MFunc *f, const int32_t *log, int moves)
{
	for (int k = moves - 1; k >= 0; k--) {
		int from = log[2 * k], to = log[2 * k + 1];
		MInst save = f->insns.data[to];
		memmove(&f->insns.data[to], &f->insns.data[to + 1], sizeof(MInst) * (size_t)(from - to));
		f->insns.data[from] = save;
	}
}

int amd_sched(MFunc *f, AmdSchedStats *st)
{
	Liveness lv;
	int rc = amd_sched_live(f, st, &lv);
	liveness_free(&lv);
	return rc;
}

int amd_sched_live(MFunc *f, AmdSchedStats *st, Liveness *lvp)
{
	AmdSchedStats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	size_t n = f->insns.len;
	if (liveness_compute(f, lvp))
		return -1;
	Liveness lv = *lvp; /* (a shallow copy: shorter names) */
	size_t cap = 4 * n + 16; /* moves: a chain op may move again for a later load */
	int32_t *log = malloc(sizeof(int32_t) * 2 * cap);
	RaDemand *dm = malloc(sizeof(RaDemand) * (n + 1));
	uint8_t *mark = calloc(f->vregs.len + 1, 1);
	int rc = -1;
	if (!log || !dm || !mark)
		goto out;
	RaDemand mx = lv.max;
	int lim_v = cliff(f->target, mx.v, mx.a, mx.s + 2);
	int lim_s = 96 - SCHED_MARGIN_S; /* the allocator's SGPR bound (ra.c) */
	lim_v = TA_MIN(lim_v, 256) - SCHED_MARGIN_V;
	st->limit_v = lim_v;
	st->limit_s = lim_s;
	for (int attempt = 0; attempt <= SCHED_RETRIES; attempt++) {
		memcpy(dm, lv.demand, sizeof(RaDemand) * n);
		Mover mv = {f, dm, lim_v, lim_s, log, 0, (int)TA_MIN(cap, (size_t)1 << 30), mark};
		mover(&mv);
		int moves = mv.moves;
		if (!moves)
			break;
		/* dm[] is an upper bound of the new demand (moves only add L's
		 * result where it now lives; operands freed earlier are not
		 * credited), so checking it needs no second liveness pass. */
		RaDemand nmax = {0, 0, 0};
		for (size_t i = 0; i < n; i++) {
			nmax.s = TA_MAX(nmax.s, dm[i].s);
			nmax.v = TA_MAX(nmax.v, dm[i].v);
		}
		int okv = nmax.v <= TA_MAX(lim_v, mx.v), oks = nmax.s <= TA_MAX(lim_s, mx.s);
		if (okv && oks) {
			st->moves = moves;
			st->attempts = attempt + 1;
			break;
		}
		/* Restore and try one cliff lower. */
		undo(f, log, moves);
		st->attempts = attempt + 1;
		int w = occ_waves(f->target, TA_MAX(lim_v, 1), mx.a, mx.s + 2, 0, 0, NULL);
		int lower = lim_v;
		while (lower > mx.v && occ_waves(f->target, lower, mx.a, mx.s + 2, 0, 0, NULL) <= w)
			lower--;
		if (lower <= mx.v) {
			st->fallback = 1;
			break; /* no room left: keep the source order */
		}
		lim_v = lower;
		st->limit_v = lim_v;
		if (attempt == SCHED_RETRIES)
			st->fallback = 1;
	}
	rc = 0;
out:
	free(log);
	free(dm);
	free(mark);
	/* The block sets go to the caller; the demand is that of the order
	 * before the moves. */
	free(lvp->demand);
	lvp->demand = NULL;
	if (rc)
		liveness_free(lvp);
	return rc;
}
