/* liveness.c — live vreg sets per block and register demand per instruction.
 *
 * Classic backward dataflow over the block graph with bitsets (one bit per
 * vreg), iterated to a fixed point with a worklist; then one backward walk
 * per block records how many dwords of each file are live across every
 * instruction (ACO's live_var_analysis).  Cost O(n + V*B/64) per sweep. */
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

/* use/def sets of each block, then the fixed point. */
static void block_use_def(const MFunc *f, const MBlock *b, uint64_t *use, uint64_t *def)
{
	for (int i = b->last - 1; i >= b->first; i--) {
		const MInst *mi = &f->insns.data[i];
		for (unsigned m = def_mask(mi); m; m &= m - 1) {
			int k = __builtin_ctz(m), v = mi->vr[k];
			/* A partial def (sub-range or exec-masked) does not kill. */
			bool full = ((mi->sub[k] == 0 && mi->in.ops[k].count == f->vregs.data[v].size) ||
				     (k == 0 && (mi->flags & MI_DEFALL))) &&
				    !(mi->flags & MI_PARTIAL);
			if (full) {
				def[v >> 6] |= 1ull << (v & 63);
				use[v >> 6] &= ~(1ull << (v & 63));
			}
		}
		for (unsigned m = use_mask(mi); m; m &= m - 1) {
			int v = mi->vr[__builtin_ctz(m)];
			use[v >> 6] |= 1ull << (v & 63);
		}
	}
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
	int nb = (int)f->blocks.len, nw = ((int)f->vregs.len + 63) / 64;
	if (nw == 0)
		nw = 1;
	lv->nwords = nw;
	size_t words = (size_t)nb * nw;
	uint64_t *use = calloc(words + 1, 8), *def = calloc(words + 1, 8), *tmp = calloc(nw, 8);
	uint64_t *lanemask = calloc(nw, 8);
	lv->live_in = calloc(words + 1, 8);
	lv->live_out = calloc(words + 1, 8);
	lv->demand = calloc(f->insns.len + 1, sizeof *lv->demand);
	/* Worklist of blocks, processed last-to-first; preds recomputed here. */
	int *npred = calloc(nb + 1, sizeof(int)), *predoff = calloc(nb + 2, sizeof(int));
	int *preds = calloc(3 * (size_t)nb + 1, sizeof(int)), *work = calloc(nb + 1, sizeof(int));
	char *inwork = calloc(nb + 1, 1);
	/* Word ranges that may be nonzero: [rng[4b], rng[4b+1]) of live_in[b]
	 * (what its predecessors OR in), [rng[4b+2], rng[4b+3]) of use[b] and
	 * live_out[b] (where live_in[b] can change).  Vreg ids grow along
	 * the kernel, so the words of values defined later than a block (and
	 * of short-lived earlier ones) are often empty there; the ranges are
	 * only as narrow as the live set (synthetic 100x: about 30% saved). */
	int *rng = calloc(4 * (size_t)nb + 1, sizeof(int));
	/* Per block, the dwords live into it (the demand walk's end count). */
	RaDemand *insum = calloc(nb + 1, sizeof(RaDemand));
	int rc = -1;
	if (!use || !def || !tmp || !lanemask || !lv->live_in || !lv->live_out || !lv->demand || !npred || !predoff ||
	    !preds || !work || !inwork || !rng || !insum)
		goto out;
	for (int b = 0; b < nb; b++) {
		const uint64_t *ub = use + (size_t)b * nw;
		block_use_def(f, &f->blocks.data[b], use + (size_t)b * nw, def + (size_t)b * nw);
		int lo = 0, hi = nw;
		while (lo < hi && !ub[lo])
			lo++;
		while (hi > lo && !ub[hi - 1])
			hi--;
		rng[4 * b + 2] = lo, rng[4 * b + 3] = hi;
		for (int s = 0; s < 3; s++)
			if (f->blocks.data[b].succ[s] >= 0)
				npred[f->blocks.data[b].succ[s]]++;
	}
	for (int b = 0; b < nb; b++)
		predoff[b + 1] = predoff[b] + npred[b];
	memset(npred, 0, sizeof(int) * nb);
	for (int b = 0; b < nb; b++)
		for (int s = 0; s < 3; s++) {
			int t = f->blocks.data[b].succ[s];
			if (t >= 0)
				preds[predoff[t] + npred[t]++] = b;
		}
	for (size_t v = 0; v < f->vregs.len; v++)
		if (f->vregs.data[v].cls != MR_S)
			lanemask[v >> 6] |= 1ull << (v & 63);
	int nwork = 0;
	for (int b = 0; b < nb; b++)
		work[nwork++] = b, inwork[b] = 1;
	while (nwork) {
		int b = work[--nwork];
		inwork[b] = 0;
		uint64_t *out = lv->live_out + (size_t)b * nw, *in = lv->live_in + (size_t)b * nw;
		const MBlock *bl = &f->blocks.data[b];
		int *r = &rng[4 * b];
		for (int s = 0; s < 3; s++) {
			int t = bl->succ[s];
			if (t < 0 || rng[4 * t] == rng[4 * t + 1])
				continue;
			/* succ[2] is where parked lanes resume: only their per-lane
			 * (VGPR/AGPR) values travel that way; SGPRs follow the
			 * machine edges. */
			for (int w = rng[4 * t]; w < rng[4 * t + 1]; w++)
				out[w] |= lv->live_in[(size_t)t * nw + w] & (s == 2 ? lanemask[w] : ~0ull);
			if (r[2] == r[3])
				r[2] = rng[4 * t], r[3] = rng[4 * t + 1];
			r[2] = TA_MIN(r[2], rng[4 * t]), r[3] = TA_MAX(r[3], rng[4 * t + 1]);
		}
		int changed = 0, lo = r[3], hi = r[2];
		for (int w = r[2]; w < r[3]; w++) {
			uint64_t x = use[(size_t)b * nw + w] | (out[w] & ~def[(size_t)b * nw + w]);
			if (x) /* x has every bit of in[w]: the sets only grow */
				lo = TA_MIN(lo, w), hi = w + 1;
			if (x != in[w])
				in[w] = x, changed = 1;
		}
		if (lo < hi)
			r[0] = lo, r[1] = hi;
		if (changed)
			for (int p = predoff[b]; p < predoff[b + 1]; p++)
				if (!inwork[preds[p]])
					work[nwork++] = preds[p], inwork[preds[p]] = 1;
	}
	/* Demand: walk each block backwards keeping dword counts, the last
	 * block first.  A block whose only edge leads to a later block lives
	 * out what that one lives in: its count is known. */
	for (int b = nb - 1; b >= 0; b--) {
		const MBlock *bl = &f->blocks.data[b];
		RaDemand cur = {0, 0, 0};
		int t = bl->succ[0] >= 0 ? bl->succ[0] : bl->succ[1];
		for (int s = 0; s < 3; s++)
			if (bl->succ[s] >= 0 && (s == 2 || bl->succ[s] != t))
				t = -1;
		memcpy(tmp, lv->live_out + (size_t)b * nw, 8 * (size_t)nw);
		if (t > b) {
			cur = insum[t];
		} else {
			for (int w = 0; w < nw; w++)
				for (uint64_t x = tmp[w]; x; x &= x - 1)
					add_demand(&cur, &f->vregs.data[w * 64 + __builtin_ctzll(x)], 1);
		}
		for (int i = bl->last - 1; i >= bl->first; i--) {
			const MInst *mi = &f->insns.data[i];
			RaDemand across = cur;
			for (unsigned m = def_mask(mi); m; m &= m - 1) {
				int k = __builtin_ctz(m), v = mi->vr[k];
				if (!lv_test(tmp, v)) { /* dead def still occupies registers */
					add_demand(&across, &f->vregs.data[v], 1);
				} else if (!(mi->flags & MI_PARTIAL) &&
					   ((mi->sub[k] == 0 && mi->in.ops[k].count == f->vregs.data[v].size) ||
					    (k == 0 && (mi->flags & MI_DEFALL)))) {
					tmp[v >> 6] &= ~(1ull << (v & 63));
					add_demand(&cur, &f->vregs.data[v], -1);
				}
			}
			for (unsigned m = use_mask(mi); m; m &= m - 1) {
				int v = mi->vr[__builtin_ctz(m)];
				if (!lv_test(tmp, v)) {
					tmp[v >> 6] |= 1ull << (v & 63);
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
	free(use), free(def), free(tmp), free(lanemask), free(npred), free(predoff), free(preds), free(work), free(inwork), free(rng), free(insum);
	if (rc)
		liveness_free(lv);
	return rc;
}

void liveness_free(Liveness *lv)
{
	free(lv->live_in);
	free(lv->live_out);
	free(lv->demand);
	memset(lv, 0, sizeof *lv);
}
