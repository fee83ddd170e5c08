/* ra.c — register assignment by linear scan over live intervals, and the
 * rewrite of MIR to physical registers.
 *
 * Each vreg gets one interval: the hull of the program points where it is
 * defined, used or live (points: 2i = reads of instruction i, 2i+1 = its
 * writes; a block's live-in/out extend to its first/last point).  One
 * register range per vreg for its whole life is what divergent code needs:
 * a VGPR written under a partial exec mask keeps the other lanes' values in
 * the same register.  Intervals are visited by start; active ones sit in a
 * min-heap by end; free registers are a bitmap per file, so assignment is
 * O(n log n) overall and cannot loop.  No spilling yet: if a file runs out
 * the kernel is rejected with the demand in the message. */
#include "regalloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	int32_t start, end, v;
} Ival;

static int ival_cmp(const void *a, const void *b)
{
	const Ival *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->v - y->v;
}

/* Min-heap of active intervals by end. */
typedef struct {
	Ival *h;
	int n;
} Heap;

static void heap_push(Heap *hp, Ival x)
{
	int i = hp->n++;
	while (i > 0) {
		int p = (i - 1) / 2;
		if (hp->h[p].end <= x.end)
			break;
		hp->h[i] = hp->h[p];
		i = p;
	}
	hp->h[i] = x;
}

static Ival heap_pop(Heap *hp)
{
	Ival top = hp->h[0], x = hp->h[--hp->n];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= hp->n)
			break;
		if (c + 1 < hp->n && hp->h[c + 1].end < hp->h[c].end)
			c++;
		if (hp->h[c].end >= x.end)
			break;
		hp->h[i] = hp->h[c];
		i = c;
	}
	if (hp->n)
		hp->h[i] = x;
	return top;
}

#define MAXREG 256
typedef struct {
	uint64_t busy[MAXREG / 64];
} RegFile;

static int range_free(const RegFile *rf, int r, int n, int limit)
{
	if (r < 0 || r + n > limit)
		return 0;
	for (int i = r; i < r + n; i++)
		if ((rf->busy[i >> 6] >> (i & 63)) & 1)
			return 0;
	return 1;
}

static void range_set(RegFile *rf, int r, int n, int on)
{
	for (int i = r; i < r + n; i++) {
		if (on)
			rf->busy[i >> 6] |= 1ull << (i & 63);
		else
			rf->busy[i >> 6] &= ~(1ull << (i & 63));
	}
}

/* First free aligned run: skip whole busy words, then test candidates. */
static int find_free(const RegFile *rf, int n, int align, int limit)
{
	for (int r = 0; r + n <= limit; r += align) {
		if (rf->busy[r >> 6] == ~0ull) {
			r = ((r >> 6) + 1) * 64 - align;
			continue;
		}
		if (range_free(rf, r, n, limit))
			return r;
	}
	return -1;
}

static int default_limit(ta_target t, int cls)
{
	OccInfo o;
	occ_info(t, &o);
	if (cls == MR_S)
		return 96; /* below VCC/XNACK/flat-scratch and the gfx9 102 cap */
	return cls == MR_A && ISA_TARGET(t) == TA_TARGET_GFX1100 ? 0 : 256;
}

static int allocate_live(const MFunc *f, const RaOptions *opt, const Liveness *lvp, RaResult *r, Diag *d);

int ra_allocate(const MFunc *f, const RaOptions *opt, const Liveness *known, RaResult *r, Diag *d)
{
	if (known)
		return allocate_live(f, opt, known, r, d);
	Liveness lv;
	if (liveness_compute(f, &lv)) {
		memset(r, 0, sizeof *r);
		r->fail_cls = -1;
		r->fail_at = -1;
		return -1;
	}
	int rc = allocate_live(f, opt, &lv, r, d);
	liveness_free(&lv);
	return rc;
}

static int allocate_live(const MFunc *f, const RaOptions *opt, const Liveness *lvp, RaResult *r, Diag *d)
{
	memset(r, 0, sizeof *r);
	r->fail_cls = -1;
	r->fail_at = -1;
	int nv = (int)f->vregs.len;
	const Liveness lv = *lvp; /* (a shallow copy: shorter names) */
	r->phys = malloc(sizeof(int16_t) * (nv + 1));
	Ival *iv = malloc(sizeof(Ival) * (nv + 1));
	Heap hp = {malloc(sizeof(Ival) * (nv + 1)), 0};
	int rc = -1;
	if (!r->phys || !iv || !hp.h)
		goto out;
	for (int v = 0; v < nv; v++)
		iv[v] = (Ival){INT_MAX, -1, v}, r->phys[v] = -1;
	/* Interval hulls. */
	for (size_t b = 0; b < f->blocks.len; b++) {
		const MBlock *bl = &f->blocks.data[b];
		LiveSet in = lv_in(&lv, (int)b), outs = lv_out(&lv, (int)b);
		for (int k = 0; k < in.n; k++) {
			int v = in.v[k];
			iv[v].start = TA_MIN(iv[v].start, 2 * bl->first);
			iv[v].end = TA_MAX(iv[v].end, 2 * bl->first);
		}
		for (int k = 0; k < outs.n; k++) {
			int v = outs.v[k];
			iv[v].start = TA_MIN(iv[v].start, 2 * bl->last);
			iv[v].end = TA_MAX(iv[v].end, 2 * bl->last);
		}
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *mi = &f->insns.data[i];
			int dp = (mi->flags & MI_EARLY) ? 2 * i : 2 * i + 1;
			for (int k = 0; k < mi->in.nops; k++) {
				if (!(mi->vmask & (1u << k)))
					continue;
				int v = mi->vr[k];
				if (mi_is_use(mi, k)) {
					iv[v].start = TA_MIN(iv[v].start, 2 * i);
					iv[v].end = TA_MAX(iv[v].end, 2 * i);
				}
				if (mi_is_def(mi, k)) {
					iv[v].start = TA_MIN(iv[v].start, dp);
					iv[v].end = TA_MAX(iv[v].end, 2 * i + 1);
				}
			}
		}
	}
	int n = 0;
	for (int v = 0; v < nv; v++)
		if (iv[v].end >= 0)
			iv[n++] = iv[v];
	qsort(iv, (size_t)n, sizeof *iv, ival_cmp);
	r->ninterval = n;
	RegFile rf[MR_NCLASS], hinted[MR_NCLASS];
	int limit[MR_NCLASS];
	memset(rf, 0, sizeof rf);
	/* Registers some vreg would like (kernel inputs): others take them
	 * only when nothing else is free, so the entry copies vanish. */
	memset(hinted, 0, sizeof hinted);
	for (int v = 0; v < nv; v++) {
		const MVreg *hv = &f->vregs.data[v];
		if (hv->hint >= 0 && hv->hint + hv->size <= MAXREG)
			range_set(&hinted[hv->cls], hv->hint, hv->size, 1);
	}
	for (int c = 0; c < MR_NCLASS; c++) {
		limit[c] = opt && opt->reg_limit[c] ? opt->reg_limit[c] : default_limit(f->target, c);
		if (limit[c] > MAXREG)
			limit[c] = MAXREG;
	}
	for (int i = 0; i < n; i++) {
		Ival x = iv[i];
		while (hp.n && hp.h[0].end < x.start) {
			Ival e = heap_pop(&hp);
			const MVreg *ev = &f->vregs.data[e.v];
			range_set(&rf[ev->cls], r->phys[e.v], ev->size, 0);
		}
		const MVreg *vr = &f->vregs.data[x.v];
		int c = vr->cls, reg = -1;
		if (vr->hint >= 0 && vr->hint % vr->align == 0 && range_free(&rf[c], vr->hint, vr->size, limit[c]))
			reg = vr->hint;
		if (reg < 0) {
			RegFile both = rf[c];
			for (int w = 0; w < MAXREG / 64; w++)
				both.busy[w] |= hinted[c].busy[w];
			reg = find_free(&both, vr->size, vr->align, limit[c]);
		}
		if (reg < 0)
			reg = find_free(&rf[c], vr->size, vr->align, limit[c]);
		if (reg < 0) {
			static const char *names[] = {"SGPR", "VGPR", "AGPR"};
			int at = x.start / 2;
			RaDemand dm = at < (int)f->insns.len ? lv.demand[at] : lv.max;
			int dem = c == MR_S ? dm.s : c == MR_V ? dm.v : dm.a;
			r->fail_cls = c;
			r->fail_at = at;
			diag_error(d,
				"register allocation failed: %d %ss live at instruction %d exceed the %d available "
				"(spilling is not supported yet)", dem, names[c], at, limit[c]);
			goto out;
		}
		r->phys[x.v] = (int16_t)reg;
		range_set(&rf[c], reg, vr->size, 1);
		r->used[c] = TA_MAX(r->used[c], reg + vr->size);
		heap_push(&hp, x);
	}
	rc = 0;
out:
	free(iv);
	free(hp.h);
	if (rc)
		ra_result_free(r);
	return rc;
}

void ra_result_free(RaResult *r)
{
	free(r->phys);
	r->phys = NULL;
}

/* ---- rewrite ------------------------------------------------------------ */

static int push_insn(MInstVec *out, const MInst *mi)
{
	return vec_push(out, *mi);
}

static IsaOperand preg(int cls, int reg, int count)
{
	return (IsaOperand){(uint8_t)mir_cls_kind(cls), (uint8_t)count, (uint16_t)reg, 0, 0, 0};
}

/* One dword move dst <- src (files may differ: S->V, V->A, A->V). */
static int emit_move(MInstVec *out, int dcls, int dst, int scls, int src)
{
	MInst mi;
	memset(&mi, 0, sizeof mi);
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi.vr[i] = -1;
	unsigned op;
	if (dcls == MR_S)
		op = ISA_S_MOV_B32; /* V->S copies are not produced: readfirstlane is explicit */
	else if (dcls == MR_V)
		op = scls == MR_A ? ISA_V_ACCVGPR_READ_B32 : ISA_V_MOV_B32;
	else
		op = scls == MR_A ? ISA_V_ACCVGPR_MOV_B32 : ISA_V_ACCVGPR_WRITE_B32;
	isa_insn_init(&mi.in, op);
	mi.ndef = 1;
	mi.in.nops = 2;
	mi.in.ops[0] = preg(dcls, dst, 1);
	mi.in.ops[1] = preg(scls, src, 1);
	return push_insn(out, &mi);
}

static int emit_swap(MInstVec *out, int cls, int a, int b)
{
	MInst mi;
	memset(&mi, 0, sizeof mi);
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi.vr[i] = -1;
	if (cls == MR_V) {
		isa_insn_init(&mi.in, ISA_V_SWAP_B32);
		mi.ndef = 2;
		mi.in.nops = 2;
		mi.in.ops[0] = preg(MR_V, a, 1);
		mi.in.ops[1] = preg(MR_V, b, 1);
		return push_insn(out, &mi);
	}
	/* SGPRs: a ^= b; b ^= a; a ^= b (clobbers SCC, never live across a copy). */
	int seq[3][2] = {{a, b}, {b, a}, {a, b}};
	for (int k = 0; k < 3; k++) {
		isa_insn_init(&mi.in, ISA_S_XOR_B32);
		mi.ndef = 1;
		mi.in.nops = 3;
		mi.in.ops[0] = preg(MR_S, seq[k][0], 1);
		mi.in.ops[1] = preg(MR_S, seq[k][0], 1);
		mi.in.ops[2] = preg(MR_S, seq[k][1], 1);
		if (push_insn(out, &mi))
			return -1;
	}
	return 0;
}

/* Lowers a COPY/PCOPY (physical operands already substituted). */
static int lower_copy(MInstVec *out, const MInst *mi)
{
	int npair = mi->in.op == MOP_COPY ? 1 : mi->in.nops / 2;
	/* Expand to dword moves, grouped by (dst file, src file); cross-file
	 * moves never form cycles with same-file ones because files are
	 * disjoint, so each group is sequenced independently. */
	PMove mv[3][3][64], seq[128];
	int nm[3][3] = {{0}};
	for (int p = 0; p < npair; p++) {
		const IsaOperand *d = &mi->in.ops[p], *s = &mi->in.ops[npair + p];
		int dc = mir_kind_cls(d->kind);
		int sc = mir_kind_cls(s->kind);
		for (int k = 0; k < d->count; k++) {
			if (sc < 0) { /* constant/special source: move it as is */
				MInst m2 = *mi;
				isa_insn_init(&m2.in, dc == MR_S ? ISA_S_MOV_B32 : ISA_V_MOV_B32);
				m2.ndef = 1, m2.vmask = 0, m2.in.nops = 2;
				m2.in.ops[0] = preg(dc, d->reg + k, 1);
				m2.in.ops[1] = *s;
				if (push_insn(out, &m2))
					return -1;
				continue;
			}
			if (nm[dc][sc] >= 64)
				return -1;
			mv[dc][sc][nm[dc][sc]++] = (PMove){(int16_t)(d->reg + k), (int16_t)(s->reg + k), 0};
		}
	}
	for (int dc = 0; dc < 3; dc++)
		for (int sc = 0; sc < 3; sc++) {
			if (!nm[dc][sc])
				continue;
			if (dc != sc) { /* different files: no overlap, plain moves */
				for (int k = 0; k < nm[dc][sc]; k++)
					if (emit_move(out, dc, mv[dc][sc][k].dst, sc, mv[dc][sc][k].src))
						return -1;
				continue;
			}
			int ns = pcopy_sequence(mv[dc][sc], nm[dc][sc], seq);
			for (int k = 0; k < ns; k++) {
				int e = seq[k].swap ? emit_swap(out, dc, seq[k].dst, seq[k].src)
						    : emit_move(out, dc, seq[k].dst, dc, seq[k].src);
				if (e)
					return -1;
			}
		}
	return 0;
}

int ra_rewrite(MFunc *f, const RaResult *r, Diag *d)
{
	MInstVec out = mir_spare(f);
	for (size_t b = 0; b < f->blocks.len; b++) {
		MBlock *bl = &f->blocks.data[b];
		int first = (int)out.len;
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *src = &f->insns.data[i];
			if (src->in.op == MOP_LABEL || src->in.op == MOP_UNDEF)
				continue;
			/* Built in place at the end of out (dropped again if it
			 * turns out to be a vanished or pseudo copy). */
			if (vec_reserve(&out, out.len + 1)) {
				mir_put_spare(f, &out);
				diag_error(d, "out of memory in register rewrite");
				return -1;
			}
			MInst *mi = &out.data[out.len];
			*mi = *src;
			for (unsigned m = mi->vmask; m; m &= m - 1) {
				int k = __builtin_ctz(m);
				mi->in.ops[k].reg = (uint16_t)(r->phys[mi->vr[k]] + mi->sub[k]);
			}
			mi->vmask = 0;
			int e = 0;
			if (mi->in.op == MOP_COPY || mi->in.op == MOP_PCOPY) {
				MInst cp = *mi; /* lower_copy appends to out */
				e = lower_copy(&out, &cp);
			} else if ((mi->in.op == ISA_S_MOV_B32 || mi->in.op == ISA_V_MOV_B32 || mi->in.op == ISA_S_MOV_B64) &&
				   mi->in.ops[0].kind == mi->in.ops[1].kind && mi->in.ops[0].reg == mi->in.ops[1].reg &&
				   mi->in.ops[0].kind != ISA_K_SPECIAL && mi->in.ops[0].kind != ISA_K_CONST) {
				continue; /* the allocator made a copy vanish */
			} else {
				out.len++;
			}
			if (e) {
				mir_put_spare(f, &out);
				diag_error(d, "out of memory in register rewrite");
				return -1;
			}
		}
		bl->first = first;
		bl->last = (int)out.len;
	}
	mir_set_insns(f, &out);
	return 0;
}
