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
 * definition on some path), finds for each the blocks its definitions may
 * reach while it is live (a search from its defining blocks through the
 * blocks it is live into, so the cost is that of its live range), and on
 * every edge
 * p -> s where the vreg is live into s and defined on some path to s but
 * not on any path to the end of p, puts a MOP_UNDEF of it at the end of p
 * (before p's branch).  The path through p then carries a defined (if
 * meaningless) value, so the vreg is live only from there: its registers
 * are free before, and the validator sees one value on every path.
 * MOP_UNDEF emits nothing (ra_rewrite drops it).  Cost: O(n + B) plus the
 * blocks those vregs are live into, then one liveness; at most
 * RA_UNDEF_MAX insertions per vreg. */
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
	int nb = (int)f->blocks.len, nv = (int)f->vregs.len, rc = -1, nins = 0;
	LiveSet entry = nb ? lv_in(lv, 0) : (LiveSet){NULL, 0};
	int nu = entry.n;
	int32_t *uidx = NULL, *dstart = NULL, *dblk = NULL, *pstart = NULL, *pred = NULL, *seen = NULL, *gen = NULL;
	int32_t *stack = NULL, *ins = NULL, *cnt = NULL, *sorted = NULL, *reach = NULL, *istamp = NULL;
	size_t nalloc = 0;
	MInstVec nw_insns = {0};
	if (!nu) {
		rc = given ? 0 : 1;
		goto out;
	}
	uidx = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	dstart = calloc((size_t)nu + 2, sizeof(int32_t));
	pstart = calloc((size_t)nb + 2, sizeof(int32_t));
	pred = malloc(sizeof(int32_t) * (3 * (size_t)nb + 1));
	seen = malloc(sizeof(int32_t) * ((size_t)nb + 1)); /* per block: U index last reached */
	gen = malloc(sizeof(int32_t) * ((size_t)nb + 1));  /* per block: U index last defining it */
	stack = malloc(sizeof(int32_t) * ((size_t)nb + 1));
	cnt = calloc((size_t)nb + 2, sizeof(int32_t));
	reach = malloc(sizeof(int32_t) * ((size_t)nb + 1));
	istamp = malloc(sizeof(int32_t) * ((size_t)nb + 1)); /* per block: U index last given a MOP_UNDEF */
	if (!uidx || !dstart || !pstart || !pred || !seen || !gen || !stack || !cnt || !reach || !istamp)
		goto out;
	for (int v = 0; v < nv; v++)
		uidx[v] = -1;
	for (int j = 0; j < nu; j++)
		uidx[entry.v[j]] = j;
	/* The blocks defining each U vreg (CSR by U index; a block may repeat). */
	for (int pass = 0; pass < 2; pass++) {
		for (int b = 0; b < nb; b++) {
			const MBlock *bl = &f->blocks.data[b];
			for (int i = bl->first; i < bl->last; i++) {
				const MInst *mi = &f->insns.data[i];
				for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
					int j = (mi->vmask >> k & 1) ? uidx[mi->vr[k]] : -1;
					if (j < 0)
						continue;
					if (pass)
						dblk[dstart[j + 1]++] = b;
					else
						dstart[j + 2]++;
				}
			}
		}
		if (!pass) {
			for (int j = 0; j < nu; j++)
				dstart[j + 2] += dstart[j + 1];
			if (!(dblk = malloc(sizeof(int32_t) * ((size_t)dstart[nu + 1] + 1))))
				goto out;
		}
	}
	/* Predecessors with the edge kind (pred = 4 * block + succ slot). */
	for (int b = 0; b < nb; b++)
		for (int e = 0; e < 3; e++)
			if (f->blocks.data[b].succ[e] >= 0)
				pstart[f->blocks.data[b].succ[e] + 2]++;
	for (int b = 0; b < nb; b++)
		pstart[b + 2] += pstart[b + 1];
	for (int b = 0; b < nb; b++)
		for (int e = 0; e < 3; e++) {
			int s = f->blocks.data[b].succ[e];
			if (s >= 0)
				pred[pstart[s + 1]++] = 4 * b + e;
		}
	for (int b = 0; b < nb; b++)
		seen[b] = gen[b] = istamp[b] = -1;
	for (int j = 0; j < nu; j++) {
		int v = entry.v[j], lane = f->vregs.data[v].cls != MR_S, top = 0, nreach = 0;
		for (int k = dstart[j]; k < dstart[j + 1]; k++)
			if (gen[dblk[k]] != j)
				gen[dblk[k]] = j, stack[top++] = dblk[k];
		/* Reached: blocks v is live into that a definition may reach. */
		while (top) {
			int b = stack[--top];
			for (int e = 0; e < 3; e++) {
				int s = f->blocks.data[b].succ[e];
				if (s < 0 || seen[s] == j || (e == 2 && !lane) || !lv_has(lv_in(lv, s), v))
					continue;
				seen[s] = j;
				reach[nreach++] = s;
				if (gen[s] != j)
					stack[top++] = s;
			}
		}
		/* Reached blocks entered from where no definition reaches.  A
		 * vreg that would need more than RA_UNDEF_MAX of them, or more
		 * than half the instructions in all, stays as it was (live from
		 * the entry): an undefined path that meets defined ones at every
		 * label of a deep nest would otherwise cost a MOP_UNDEF per label
		 * and vreg (250 nested loops: 250,000 of them). */
		int mark = nins;
		for (int r = 0; r < nreach && nins - mark <= RA_UNDEF_MAX; r++) {
			int t = reach[r];
			for (int q = pstart[t]; q < pstart[t + 1]; q++) {
				int p = pred[q] >> 2, pe = pred[q] & 3;
				if ((pe == 2 && !lane) || gen[p] == j || seen[p] == j || istamp[p] == j)
					continue;
				istamp[p] = j;
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
		if (nins - mark > RA_UNDEF_MAX || (size_t)nins > f->insns.len / 2)
			nins = mark;
	}
	if (!nins) {
		rc = given ? 0 : 1;
		goto out;
	}
	/* By block (counting sort), one MOP_UNDEF per (block, vreg). */
	if (!(sorted = malloc(sizeof(int32_t) * (size_t)nins)))
		goto out;
	for (int k = 0; k < nins; k++)
		cnt[ins[2 * k] + 1]++;
	for (int b = 0; b < nb; b++)
		cnt[b + 1] += cnt[b];
	for (int k = 0; k < nins; k++)
		sorted[cnt[ins[2 * k]]++] = ins[2 * k + 1];
	nw_insns = mir_spare(f);
	if (vec_reserve(&nw_insns, f->insns.len + (size_t)nins + 1))
		goto out;
	for (int b = 0, k = 0; b < nb; b++) {
		MBlock *bl = &f->blocks.data[b];
		int end = bl->last, first = (int)nw_insns.len;
		while (end > bl->first && is_branch(&f->insns.data[end - 1]))
			end--;
		for (int i = bl->first; i < end; i++)
			nw_insns.data[nw_insns.len++] = f->insns.data[i];
		for (; k < cnt[b]; k++) {
			int v = sorted[k];
			MInst mi;
			memset(&mi, 0, sizeof mi);
			isa_insn_init(&mi.in, MOP_UNDEF);
			for (int o = 0; o < ISA_MAX_OPS; o++)
				mi.vr[o] = -1;
			mi.ndef = 1;
			mi.in.nops = 1;
			mi_vreg(&mi, 0, f, v, 0, f->vregs.data[v].size);
			nw_insns.data[nw_insns.len++] = mi;
		}
		for (int i = end; i < bl->last; i++)
			nw_insns.data[nw_insns.len++] = f->insns.data[i];
		bl->first = first, bl->last = (int)nw_insns.len;
	}
	mir_set_insns(f, &nw_insns);
	if (lv == &own)
		liveness_free(&own), lv = NULL;
	if (liveness_compute(f, out))
		goto out;
	*ndefs = nins;
	rc = 1;
out:
	if (nw_insns.data)
		mir_put_spare(f, &nw_insns);
	if (lv == &own) {
		if (rc == 1)
			*out = own; /* unchanged f: its liveness is the answer */
		else
			liveness_free(&own);
	}
	free(uidx), free(dstart), free(dblk), free(pstart), free(pred), free(seen), free(gen), free(stack), free(ins),
		free(cnt), free(sorted), free(reach), free(istamp);
	return rc;
}
