/* liveness.c — live vreg sets per block and register demand per instruction.
 *
 * Sparse backward liveness.  First each block's upward-exposed uses and
 * full definitions, listed per vreg.  Then a search backwards from the
 * blocks using a vreg, through predecessors, stopping at blocks that
 * define all of it (v is live into b when b uses it, or when it is live
 * out of b and b does not kill it; live out of p when live into a
 * successor).  The search runs on windows of 64 consecutive vregs at once,
 * one bit each in a few words per block that the window touches (cleared
 * on first touch, so the scratch is one array of blocks, not blocks x
 * vregs), with a worklist of blocks that have bits not yet passed on.
 * Each bit reaches each block once: the cost is that of the live sets
 * (divided by up to 64) times the predecessors, whatever the loop nesting,
 * where a dataflow sweep over the blocks until nothing changes needs one
 * sweep per nesting level (250 nested loops: 251 sweeps, 2.1 s measured).
 * Windows in order and bits in order put every block's set ascending into
 * one CSR pool.  Then one backward walk per block records how many dwords
 * of each file are live across every instruction (ACO's
 * live_var_analysis).  Memory and time are those of the sets, not blocks x
 * vregs (a long else-if chain: thousands of both, a few live per block). */
#include "regalloc.h"

#include <stdlib.h>

/* Virtual operands written (mask of operand indices), and read (tied and
 * partial definitions read the old value too). */
static unsigned def_mask(const MInst *mi)
{
	unsigned all = (1u << mi->in.nops) - 1;
	return mi->vmask & all & ((1u << mi->ndef) - 1);
}

static unsigned use_mask(const MInst *mi)
{
	unsigned all = (1u << mi->in.nops) - 1, m = mi->vmask & all & ~((1u << mi->ndef) - 1);
	if (mi->flags & (MI_TIED | MI_PARTIAL))
		m |= mi->vmask & all & 1u;
	return m;
}

/* Operand k of mi starts a new value of all of its vreg (a kill).  A
 * partial def (sub-range or exec-masked) does not. */
static bool full_def(const MFunc *f, const MInst *mi, int k)
{
	int v = mi->vr[k];
	return ((mi->sub[k] == 0 && mi->in.ops[k].count == f->vregs.data[v].size) ||
		(k == 0 && (mi->flags & MI_DEFALL))) &&
	       !(mi->flags & MI_PARTIAL);
}

int lv_has(LiveSet s, int v)
{
	int lo = 0, hi = s.n;
	while (lo < hi) {
		int m = (lo + hi) / 2;
		if (s.v[m] < v)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < s.n && s.v[lo] == v;
}

/* A window of 64 vregs (ids 64g..64g+63) during the search: bit i of
 * each word is vreg 64g+i.  sent: the live-in bits already passed on to
 * the predecessors. */
typedef struct {
	uint64_t in, out, kill, sent;
	int32_t window; /* g: the words hold window g's bits */
	int32_t queued;
} Win;

/* b's words for window g, cleared the first time g touches b. */
static inline int touch(Win *w, int b, int g, int32_t *touched, int nt)
{
	if (w[b].window == g)
		return nt;
	w[b] = (Win){0, 0, 0, 0, g, 0};
	touched[nt] = b;
	return nt + 1;
}

static void add_demand(RaDemand *d, const MVreg *v, int sign)
{
	int n = sign * v->size;
	if (v->cls == MR_S)
		d->s = (int16_t)(d->s + n);
	else if (v->cls == MR_V)
		d->v = (int16_t)(d->v + n);
	else
		d->a = (int16_t)(d->a + n);
}

static void max_demand(RaDemand *m, RaDemand d)
{
	m->s = TA_MAX(m->s, d.s);
	m->v = TA_MAX(m->v, d.v);
	m->a = TA_MAX(m->a, d.a);
}

int liveness_compute(const MFunc *f, Liveness *lv)
{
	memset(lv, 0, sizeof *lv);
	int nb = (int)f->blocks.len, nv = (int)f->vregs.len;
	size_t nops = 0;
	for (size_t i = 0; i < f->insns.len; i++)
		nops += (size_t)__builtin_popcount(f->insns.data[i].vmask & ((1u << f->insns.data[i].in.nops) - 1));
	/* Per vreg: the blocks where it is an upward-exposed use at
	 * ublk[uoff[v]..uoff[v+1]), those defining all of it at kblk[koff[v]..
	 * koff[v+1]) (at most one entry per virtual operand). */
	int32_t *uoff = calloc((size_t)nv + 2, sizeof(int32_t)), *koff = calloc((size_t)nv + 2, sizeof(int32_t));
	int32_t *ublk = malloc(sizeof(int32_t) * (nops + 1)), *kblk = malloc(sizeof(int32_t) * (nops + 1));
	uint8_t *st = calloc((size_t)nv + 1, 1); /* per vreg in the current block: 1 used, 2 defined */
	int32_t *mark = malloc(sizeof(int32_t) * ((size_t)nv + 1)); /* touched list, later live stamps */
	/* Predecessor edges, 4 * block + succ slot, at pred[poff[b]..poff[b+1]). */
	int32_t *poff = calloc((size_t)nb + 2, sizeof(int32_t)), *pred = malloc(sizeof(int32_t) * (3 * (size_t)nb + 1));
	/* Per block, the current window's bits; the blocks it touched; the
	 * search's worklist. */
	Win *w = malloc(sizeof(Win) * ((size_t)nb + 1));
	int32_t *touched = malloc(sizeof(int32_t) * ((size_t)nb + 1)), *stack = malloc(sizeof(int32_t) * ((size_t)nb + 1));
	/* Per block, the dwords live into it (the demand walk's end count). */
	RaDemand *insum = calloc((size_t)nb + 1, sizeof(RaDemand));
	lv->off = calloc(2 * (size_t)nb + 2, sizeof(size_t));
	lv->demand = calloc(f->insns.len + 1, sizeof *lv->demand);
	int rc = -1;
	if (!uoff || !koff || !ublk || !kblk || !st || !mark || !poff || !pred || !w || !touched || !stack ||
	    !insum || !lv->off || !lv->demand)
		goto out;
	/* use/def of each block: one backward walk; counted per vreg in the
	 * first pass, placed in the second (blocks ascending per vreg). */
	for (int pass = 0; pass < 2; pass++) {
		for (int b = 0; b < nb; b++) {
			const MBlock *bl = &f->blocks.data[b];
			int nt = 0;
			for (int i = bl->last - 1; i >= bl->first; i--) {
				const MInst *mi = &f->insns.data[i];
				for (unsigned m = def_mask(mi); m; m &= m - 1) {
					int k = __builtin_ctz(m), v = mi->vr[k];
					if (full_def(f, mi, k)) {
						if (!st[v])
							mark[nt++] = v;
						st[v] = (uint8_t)((st[v] & ~1) | 2);
					}
				}
				for (unsigned m = use_mask(mi); m; m &= m - 1) {
					int v = mi->vr[__builtin_ctz(m)];
					if (!st[v])
						mark[nt++] = v;
					st[v] |= 1;
				}
			}
			for (int k = 0; k < nt; k++) {
				int v = mark[k];
				if (st[v] & 1) {
					if (pass)
						ublk[uoff[v + 1]++] = b;
					else
						uoff[v + 2]++;
				}
				if (st[v] & 2) {
					if (pass)
						kblk[koff[v + 1]++] = b;
					else
						koff[v + 2]++;
				}
				st[v] = 0;
			}
		}
		if (!pass)
			for (int v = 0; v < nv; v++)
				uoff[v + 2] += uoff[v + 1], koff[v + 2] += koff[v + 1];
	}
	for (int b = 0; b < nb; b++)
		for (int e = 0; e < 3; e++)
			if (f->blocks.data[b].succ[e] >= 0)
				poff[f->blocks.data[b].succ[e] + 2]++;
	for (int b = 0; b < nb; b++)
		poff[b + 2] += poff[b + 1];
	for (int b = 0; b < nb; b++)
		for (int e = 0; e < 3; e++) {
			int t = f->blocks.data[b].succ[e];
			if (t >= 0)
				pred[poff[t + 1]++] = 4 * b + e;
		}
	/* The search, twice: first counting the members of each set (set 2b
	 * live into b, 2b+1 live out of it), then placing them (vregs come
	 * ascending).  Searching again costs less than keeping the pairs
	 * (where undefined values are live from the entry, before undef.c,
	 * there are 84M of them for 20k blocks). */
	for (int pass = 0; pass < 2; pass++) {
		int32_t *vals = pass ? lv->vals : NULL;
		for (int b = 0; b < nb; b++)
			w[b].window = -1;
		for (int g = 0; 64 * g < nv; g++) {
			int v0 = 64 * g, v1 = TA_MIN(nv, v0 + 64), nt = 0, top = 0;
			/* succ[2] is where parked lanes resume: only per-lane
			 * (VGPR/AGPR) values travel that way; SGPRs follow the
			 * machine edges. */
			uint64_t lanes = 0;
			for (int v = v0; v < v1; v++) {
				if (f->vregs.data[v].cls != MR_S)
					lanes |= 1ull << (v - v0);
				for (int k = koff[v]; k < koff[v + 1]; k++) {
					int b = kblk[k];
					nt = touch(w, b, g, touched, nt);
					w[b].kill |= 1ull << (v - v0);
				}
			}
			for (int v = v0; v < v1; v++)
				for (int k = uoff[v]; k < uoff[v + 1]; k++) {
					int b = ublk[k];
					nt = touch(w, b, g, touched, nt);
					w[b].in |= 1ull << (v - v0);
					if (!w[b].queued)
						w[b].queued = 1, stack[top++] = b;
				}
			while (top) {
				int b = stack[--top];
				uint64_t fresh = w[b].in & ~w[b].sent;
				w[b].queued = 0, w[b].sent |= fresh;
				for (int q = poff[b]; q < poff[b + 1]; q++) {
					int p = pred[q] >> 2;
					nt = touch(w, p, g, touched, nt);
					uint64_t o = fresh & ((pred[q] & 3) == 2 ? lanes : ~0ull) & ~w[p].out;
					w[p].out |= o;
					o &= ~w[p].kill & ~w[p].in;
					if (o) {
						w[p].in |= o;
						if (!w[p].queued)
							w[p].queued = 1, stack[top++] = p;
					}
				}
			}
			for (int k = 0; k < nt; k++) {
				int b = touched[k];
				if (!vals) {
					lv->off[2 * b + 2] += (size_t)__builtin_popcountll(w[b].in);
					lv->off[2 * b + 3] += (size_t)__builtin_popcountll(w[b].out);
					continue;
				}
				int32_t *o = vals + lv->off[2 * b + 1];
				for (uint64_t x = w[b].in; x; x &= x - 1)
					*o++ = v0 + __builtin_ctzll(x);
				lv->off[2 * b + 1] = (size_t)(o - vals);
				o = vals + lv->off[2 * b + 2];
				for (uint64_t x = w[b].out; x; x &= x - 1)
					*o++ = v0 + __builtin_ctzll(x);
				lv->off[2 * b + 2] = (size_t)(o - vals);
			}
		}
		if (pass)
			break;
		for (int j = 0; j < 2 * nb; j++)
			lv->off[j + 2] += lv->off[j + 1];
		if (!(lv->vals = malloc(sizeof(int32_t) * (lv->off[2 * nb + 1] + 1))))
			goto out;
	}
	/* Demand: walk each block backwards keeping dword counts, the last
	 * block first; mark[v] == b: v live at this point of block b.  A
	 * block whose only edge leads to a later block lives out what that
	 * one lives in: its count is known. */
	for (int v = 0; v < nv; v++)
		mark[v] = -1;
	for (int b = nb - 1; b >= 0; b--) {
		const MBlock *bl = &f->blocks.data[b];
		RaDemand cur = {0, 0, 0};
		int t = bl->succ[0] >= 0 ? bl->succ[0] : bl->succ[1];
		for (int s = 0; s < 3; s++)
			if (bl->succ[s] >= 0 && (s == 2 || bl->succ[s] != t))
				t = -1;
		LiveSet lo = lv_out(lv, b);
		for (int k = 0; k < lo.n; k++) {
			mark[lo.v[k]] = b;
			if (t <= b)
				add_demand(&cur, &f->vregs.data[lo.v[k]], 1);
		}
		if (t > b)
			cur = insum[t];
		for (int i = bl->last - 1; i >= bl->first; i--) {
			const MInst *mi = &f->insns.data[i];
			RaDemand across = cur;
			for (unsigned m = def_mask(mi); m; m &= m - 1) {
				int k = __builtin_ctz(m), v = mi->vr[k];
				if (mark[v] != b) { /* dead def still occupies registers */
					add_demand(&across, &f->vregs.data[v], 1);
				} else if (full_def(f, mi, k)) {
					mark[v] = -1;
					add_demand(&cur, &f->vregs.data[v], -1);
				}
			}
			for (unsigned m = use_mask(mi); m; m &= m - 1) {
				int v = mi->vr[__builtin_ctz(m)];
				if (mark[v] != b) {
					mark[v] = b;
					add_demand(&cur, &f->vregs.data[v], 1);
				}
			}
			max_demand(&across, cur);
			lv->demand[i] = across;
			max_demand(&lv->max, across);
		}
		insum[b] = cur;
	}
	rc = 0;
out:
	free(uoff), free(koff), free(ublk), free(kblk), free(st), free(mark), free(poff), free(pred), free(w),
		free(touched), free(stack), free(insum);
	if (rc)
		liveness_free(lv);
	return rc;
}

void liveness_free(Liveness *lv)
{
	free(lv->off);
	free(lv->vals);
	free(lv->demand);
	memset(lv, 0, sizeof *lv);
}
