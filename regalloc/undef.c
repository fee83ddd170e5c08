/* undef.c — definitions for values that are undefined on some paths.
 *
 * SIMT code under exec masks defines many values only on paths where some
 * lane is active: a loop's induction variable is set after the label that
 * an exec-empty wave jumps over, so on the jump's path the value reaching
 * the loop is undefined.  Backward liveness cannot tell: a value read on
 * such a path is live all the way back to the kernel entry, and every
 * sequential loop kept one more register from the entry on (the synthetic
 * kernel of bench_compile spilled from ~230 loops).
 *
 * This pass finds the vregs live into the entry block (read before any
 * definition on some path), computes where a definition of each may have
 * happened (forward dataflow over those vregs only), and on every edge
 * p -> s where the vreg is live into s and defined on some path to s but
 * not on any path to the end of p, puts a MOP_UNDEF of it at the end of p
 * (before p's branch).  The path through p then carries a defined (if
 * meaningless) value, so the vreg is live only from there: its registers
 * are free before, and the validator sees one value on every path.
 * MOP_UNDEF emits nothing (ra_rewrite drops it).  Cost: O(n) plus the
 * dataflow over the U vregs, O(B * U / 64) per sweep. */
#include "regalloc.h"

#include <stdlib.h>

static int is_branch(const MInst *mi)
{
	return mi->in.op < MOP_BASE && (isa_ops[mi->in.op].flags & (ISA_F_BRANCH | ISA_F_ENDPGM));
}

int ra_define_undef(MFunc *f, const Liveness *given, Liveness *out, int *ndefs)
{
	Liveness own;
	const Liveness *lv = given;
	*ndefs = 0;
	if (!lv) {
		if (liveness_compute(f, &own))
			return -1;
		lv = &own;
	}
	int nb = (int)f->blocks.len, nv = (int)f->vregs.len, nw = lv->nwords, nu = 0;
	for (int w = 0; w < nw && nb; w++)
		for (uint64_t x = lv->live_in[w]; x; x &= x - 1)
			nu++;
	if (!nu) {
		if (!given)
			*out = own;
		return given ? 0 : 1;
	}
	int uw = (nu + 63) / 64, rc = -1, nins = 0;
	int32_t *uv = malloc(sizeof(int32_t) * (size_t)nu), *uidx = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	uint64_t *gen = calloc((size_t)nb * uw + 1, 8), *din = calloc((size_t)nb * uw + 1, 8);
	uint64_t *dout = calloc((size_t)nb * uw + 1, 8), *lanes = calloc((size_t)uw, 8);
	int *heap = malloc(sizeof(int) * ((size_t)nb + 1));
	char *queued = calloc((size_t)nb + 1, 1);
	/* Insertions: (block, vreg) pairs, in block order. */
	int32_t *ins = NULL, *stamp = malloc(sizeof(int32_t) * (size_t)nu);
	size_t nalloc = 0;
	MInstVec nw_insns = {0};
	if (!uv || !uidx || !gen || !din || !dout || !lanes || !heap || !queued || !stamp)
		goto out;
	for (int v = 0; v < nv; v++)
		uidx[v] = -1;
	nu = 0;
	for (int w = 0; w < nw; w++)
		for (uint64_t x = lv->live_in[w]; x; x &= x - 1) {
			int v = w * 64 + __builtin_ctzll(x);
			if (f->vregs.data[v].cls != MR_S)
				lanes[nu >> 6] |= 1ull << (nu & 63);
			stamp[nu] = -1;
			uidx[v] = nu, uv[nu++] = v;
		}
	/* gen: blocks that write a U vreg (any write: some lanes get a value). */
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *mi = &f->insns.data[i];
			for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
				if ((mi->vmask >> k & 1) && uidx[mi->vr[k]] >= 0) {
					int j = uidx[mi->vr[k]];
					gen[(size_t)b * uw + (j >> 6)] |= 1ull << (j & 63);
				}
		}
	}
	/* May-be-defined: forward to a fixed point, lowest block first. */
	int nh = 0;
	for (int b = 0; b < nb; b++)
		mir_work_push(heap, &nh, b), queued[b] = 1;
	while (nh) {
		int b = mir_work_pop(heap, &nh);
		queued[b] = 0;
		uint64_t *o = dout + (size_t)b * uw;
		const uint64_t *i = din + (size_t)b * uw, *g = gen + (size_t)b * uw;
		for (int w = 0; w < uw; w++)
			o[w] = i[w] | g[w];
		for (int e = 0; e < 3; e++) {
			int s = f->blocks.data[b].succ[e];
			if (s < 0)
				continue;
			uint64_t *si = din + (size_t)s * uw, changed = 0;
			for (int w = 0; w < uw; w++) {
				uint64_t x = o[w] & (e == 2 ? lanes[w] : ~0ull);
				changed |= x & ~si[w];
				si[w] |= x;
			}
			if (changed && !queued[s])
				mir_work_push(heap, &nh, s), queued[s] = 1;
		}
	}
	/* Edges where an undefined path meets a defined one. */
	for (int p = 0; p < nb; p++)
		for (int e = 0; e < 3; e++) {
			int s = f->blocks.data[p].succ[e];
			if (s < 0)
				continue;
			const uint64_t *si = din + (size_t)s * uw, *po = dout + (size_t)p * uw;
			const uint64_t *live = lv->live_in + (size_t)s * nw;
			for (int w = 0; w < uw; w++)
				for (uint64_t x = si[w] & ~po[w] & (e == 2 ? lanes[w] : ~0ull); x; x &= x - 1) {
					int j = w * 64 + __builtin_ctzll(x), v = uv[j];
					if (!lv_test(live, v) || stamp[j] == p)
						continue;
					stamp[j] = p;
					if ((size_t)nins + 1 > nalloc) {
						nalloc = nalloc ? 2 * nalloc : 64;
						int32_t *g = realloc(ins, sizeof(int32_t) * 2 * nalloc);
						if (!g)
							goto out;
						ins = g;
					}
					ins[2 * nins] = p, ins[2 * nins + 1] = v;
					nins++;
				}
		}
	if (!nins) {
		rc = given ? 0 : 1;
		if (!given)
			*out = own, given = &own; /* handed over, not freed below */
		goto out;
	}
	nw_insns = mir_spare(f);
	if (vec_reserve(&nw_insns, f->insns.len + (size_t)nins + 1))
		goto out;
	for (int b = 0, k = 0; b < nb; b++) {
		MBlock *bl = &f->blocks.data[b];
		int end = bl->last;
		while (end > bl->first && is_branch(&f->insns.data[end - 1]))
			end--;
		int first = (int)nw_insns.len;
		for (int i = bl->first; i < end; i++)
			nw_insns.data[nw_insns.len++] = f->insns.data[i];
		for (; k < nins && ins[2 * k] == b; k++) {
			MInst mi;
			memset(&mi, 0, sizeof mi);
			isa_insn_init(&mi.in, MOP_UNDEF);
			for (int o = 0; o < ISA_MAX_OPS; o++)
				mi.vr[o] = -1;
			mi.ndef = 1;
			mi.in.nops = 1;
			mi_vreg(&mi, 0, f, ins[2 * k + 1], 0, f->vregs.data[ins[2 * k + 1]].size);
			nw_insns.data[nw_insns.len++] = mi;
		}
		for (int i = end; i < bl->last; i++)
			nw_insns.data[nw_insns.len++] = f->insns.data[i];
		bl->first = first, bl->last = (int)nw_insns.len;
	}
	mir_set_insns(f, &nw_insns);
	if (liveness_compute(f, out))
		goto out;
	*ndefs = nins;
	rc = 1;
out:
	if (nw_insns.data)
		mir_put_spare(f, &nw_insns);
	if (lv == &own && given != &own)
		liveness_free(&own);
	free(uv), free(uidx), free(gen), free(din), free(dout), free(lanes), free(heap), free(queued), free(ins),
		free(stamp);
	return rc;
}
