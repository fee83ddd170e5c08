/* ssa_ra.c — register assignment in one forward pass per block, with
 * live-range splitting by parallel copies (the ACO shape of the design
 * notes, §3), tried before the linear scan of ra.c.
 *
 * Blocks are visited in layout order over a flat register file per class
 * (who holds each SGPR/VGPR/AGPR right now).  At a block's entry the file
 * holds exactly its live-in vregs; a vreg takes registers at its first
 * definition (or first sight) and keeps them wherever it is live, but,
 * unlike the interval hull of ra.c, gives them back as soon as it is dead
 * (after its last read in a block, at the end of a block it is not live
 * out of).  So a value that lives in one arm of a branch does not block
 * the other arm, and a value dead at a loop's back edge is not kept
 * across the whole loop.
 *
 * Choice of registers, in order: the vreg's hint (kernel inputs); the
 * source's registers for a copy whose source dies (affinity: the copy
 * vanishes); a free aligned range that no vreg with a later life has
 * claimed (the hull-like "reserved" count keeps multi-definition vregs
 * and loop-carried values conflict free); any free aligned range; and
 * last a live-range split: the values blocking the emptiest aligned
 * window move to free registers with one parallel copy (MOP_PCOPY,
 * sequenced by pcopy.c in ra_rewrite) and are renamed to new vregs for
 * the rest of the block.  Only values that die in the block are split,
 * so every value sits in its own registers at every block boundary and
 * no edge needs copies; values split are never read across lanes and,
 * for VGPRs, the block does not write exec (a v_mov copies active lanes
 * only).
 *
 * Anything this allocator does not handle — two vregs claiming the same
 * register at a block entry or a redefinition, no window that a bounded
 * split can free, or a result ra_validate rejects (checked before f
 * changes) — makes it return -1 with f unchanged, and the driver falls
 * back to the linear scan (and its spilling).  Each instruction
 * costs O(operands · registers/alignment) in the worst case (window
 * search), every loop is bounded by the file size: linear in practice. */
#include "regalloc.h"

#include <stdlib.h>

#define MAXREG 256
enum { MAXPAIR = ISA_MAX_OPS / 2 };

/* VF_RESV: a vreg that can lose its registers while dead and want them back
 * (several defining instructions, or live into a block from one predecessor
 * but not another): its registers are reserved over its whole hull, so
 * others take them only when nothing else is free.  Single-definition
 * values need no reservation: where they are live they hold their
 * registers, and they are never live again after a dead stretch. */
enum { VF_XLANE = 1, VF_DEF = 2, VF_RESV = 4 };

typedef struct {
	MFunc *f;
	int limit[MR_NCLASS];
	int32_t owner[MR_NCLASS][MAXREG]; /* vreg holding the register now, -1 free, -2/-3 claimed */
	int16_t resv[MR_NCLASS][MAXREG];  /* assigned vregs with a later life using it */
	int16_t hinted[MR_NCLASS][MAXREG];
	/* The same as bits, so find_free skips taken stretches a word at a time. */
	uint64_t freeset[MR_NCLASS][MAXREG / 64]; /* owner == -1 */
	uint64_t blocked[MR_NCLASS][MAXREG / 64]; /* resv or hinted */
	int16_t *phys;   /* per vreg (grows with splits) */
	int32_t *orig;   /* per vreg: original vreg */
	int32_t *ren;    /* per original vreg: current name in this block */
	int32_t *lastpt; /* per original vreg: last instruction where it is live or occurs */
	uint8_t *vflags; /* per original vreg: VF_* */
	uint8_t *tuple;  /* per original vreg: a tuple it is last copied into as
	                  * dword 0, as align << 5 | size (0: none), so that it
	                  * starts where the tuple can and the copy can vanish */
	int nvcap;
	int splits;
	int fail_cls;
} Ssa;

static int cross_lane(const MInst *mi)
{
	unsigned op = mi->in.op;
	return op < MOP_BASE &&
	       (mi->in.enc == ISA_ENC_DPP || op == ISA_V_READLANE_B32 || op == ISA_V_READFIRSTLANE_B32 ||
		op == ISA_DS_BPERMUTE_B32 || op == ISA_DS_PERMUTE_B32 || op == ISA_DS_SWIZZLE_B32 ||
		(isa_ops[op].flags & ISA_F_SWIZZLE));
}

/* Does mi change exec?  (Then a VGPR copy before it would move other lanes
 * than the reads after it see.) */
static int writes_exec(const MInst *mi)
{
	if (mi->in.op >= MOP_BASE)
		return 0;
	/* The table's flag covers s_*saveexec* and v_cmpx (implicit exec). */
	if (isa_ops[mi->in.op].flags & ISA_F_WEXEC)
		return 1;
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
		if (mi->in.ops[k].kind == ISA_K_SPECIAL &&
		    (mi->in.ops[k].reg == ISA_SP_EXEC_LO || mi->in.ops[k].reg == ISA_SP_EXEC_HI))
			return 1;
	return 0;
}

static int ssa_default_limit(ta_target t, int cls)
{
	if (cls == MR_S)
		return 96; /* as ra.c: below VCC/XNACK/flat-scratch and the gfx9 102 cap */
	return cls == MR_A && ISA_TARGET(t) == TA_TARGET_GFX1100 ? 0 : 256;
}

static int range_free(const Ssa *s, int c, int r, int n)
{
	if (r < 0 || r + n > s->limit[c])
		return 0;
	for (int i = r; i < r + n; i++)
		if (s->owner[c][i] != -1)
			return 0;
	return 1;
}

static void set_reg(Ssa *s, int c, int i, int32_t v)
{
	uint64_t bit = 1ull << (i & 63);
	s->owner[c][i] = v;
	if (v == -1)
		s->freeset[c][i >> 6] |= bit;
	else
		s->freeset[c][i >> 6] &= ~bit;
}

/* Every register free (owner -1 is all bits set). */
static void free_all(Ssa *s)
{
	memset(s->owner, 0xff, sizeof s->owner);
	memset(s->freeset, 0xff, sizeof s->freeset);
}

static void set_owner(Ssa *s, int c, int r, int n, int32_t v)
{
	for (int i = r; i < r + n; i++)
		set_reg(s, c, i, v);
}

static void set_blocked(Ssa *s, int c, int i)
{
	uint64_t bit = 1ull << (i & 63);
	if (s->resv[c][i] || s->hinted[c][i])
		s->blocked[c][i >> 6] |= bit;
	else
		s->blocked[c][i >> 6] &= ~bit;
}

/* Lowest i >= from whose bit in set is `want`, or MAXREG. */
static int scan_bits(const uint64_t *set, int from, int want)
{
	for (int w = from >> 6; w < MAXREG / 64; w++) {
		uint64_t x = want ? set[w] : ~set[w];
		if (w == from >> 6)
			x &= ~0ull << (from & 63);
		if (x)
			return w * 64 + __builtin_ctzll(x);
	}
	return MAXREG;
}

/* First aligned range of n free registers (also unreserved if asked), or
 * -1: the same answer as trying every aligned window in order, but each
 * step jumps to the next usable register, then past the first unusable one
 * inside the window. */
static int find_free(const Ssa *s, int c, int n, int align, int want_unreserved)
{
	uint64_t avail[MAXREG / 64];
	for (int w = 0; w < MAXREG / 64; w++)
		avail[w] = s->freeset[c][w] & (want_unreserved ? ~s->blocked[c][w] : ~0ull);
	int a = align > 0 ? align : 1;
	for (int r = 0;;) {
		r = scan_bits(avail, r, 1);
		r = (r + a - 1) / a * a;
		if (r + n > s->limit[c])
			return -1;
		int q = scan_bits(avail, r, 0);
		if (q >= r + n)
			return r;
		r = q + 1;
	}
}

/* New vreg like v (a split copy), or -1. */
static int new_vreg(Ssa *s, int v)
{
	MFunc *f = s->f;
	MVreg mv = f->vregs.data[v];
	mv.hint = -1;
	if (vec_push(&f->vregs, mv))
		return -1;
	int nv = (int)f->vregs.len;
	if (nv > s->nvcap) {
		int cap = s->nvcap * 2 + 16;
		int16_t *p = realloc(s->phys, sizeof(int16_t) * cap);
		if (!p)
			return -1;
		s->phys = p;
		int32_t *o = realloc(s->orig, sizeof(int32_t) * cap);
		if (!o)
			return -1;
		s->orig = o;
		s->nvcap = cap;
	}
	s->phys[nv - 1] = -1;
	s->orig[nv - 1] = s->orig[v];
	return nv - 1;
}

typedef struct {
	const int32_t *ops; /* vregs the current instruction names */
	int nops;
	int block;
	int exec_ok;        /* the block never writes exec */
	LiveSet live_out;   /* the block's */
} Ctx;

static int splittable(const Ssa *s, const Ctx *cx, int x)
{
	if (x < 0)
		return 0;
	for (int k = 0; k < cx->nops; k++)
		if (cx->ops[k] == x)
			return 0;
	int o = s->orig[x];
	if (lv_has(cx->live_out, o))
		return 0;
	int c = s->f->vregs.data[x].cls;
	if (c != MR_S && (!cx->exec_ok || (s->vflags[o] & VF_XLANE)))
		return 0;
	return 1;
}

/* Frees [r, r+n) of class c by moving the vregs there to free registers
 * elsewhere with one parallel copy appended to out.  Returns 0 (the range
 * is then free), 1 (not possible: nothing changed) or -1 (memory). */
static int make_room(Ssa *s, const Ctx *cx, int c, int r, int n, MInstVec *out)
{
	if (r < 0 || r + n > s->limit[c])
		return 1;
	int blk[MAXPAIR], nb = 0;
	for (int i = r; i < r + n; i++) {
		int x = s->owner[c][i];
		if (x == -1 || (nb && blk[nb - 1] == x))
			continue;
		if (!splittable(s, cx, x) || nb == MAXPAIR)
			return 1;
		blk[nb++] = x;
	}
	if (!nb)
		return 0;
	/* Claim the window, then find each blocker a new home outside it. */
	int32_t saved[MAXREG];
	uint64_t saved_free[MAXREG / 64];
	memcpy(saved, s->owner[c], sizeof saved);
	memcpy(saved_free, s->freeset[c], sizeof saved_free);
	for (int k = 0; k < nb; k++) {
		const MVreg *xv = &s->f->vregs.data[blk[k]];
		set_owner(s, c, s->phys[blk[k]], xv->size, -1);
	}
	set_owner(s, c, r, n, -2);
	/* Reads of the current instruction whose registers were freed for
	 * its defs still happen after the copy: not a home for a blocker. */
	for (int k = 0; k < cx->nops; k++) {
		int v = cx->ops[k];
		if (v >= 0 && s->phys[v] >= 0 && s->f->vregs.data[v].cls == c)
			for (int i = s->phys[v]; i < s->phys[v] + s->f->vregs.data[v].size; i++)
				if (s->owner[c][i] == -1)
					set_reg(s, c, i, -3);
	}
	int to[MAXPAIR];
	for (int k = 0; k < nb; k++) {
		const MVreg *xv = &s->f->vregs.data[blk[k]];
		to[k] = find_free(s, c, xv->size, xv->align, 0);
		if (to[k] < 0) {
			memcpy(s->owner[c], saved, sizeof saved);
			memcpy(s->freeset[c], saved_free, sizeof saved_free);
			return 1;
		}
		set_owner(s, c, to[k], xv->size, -2);
	}
	set_owner(s, c, r, n, -1);
	for (int i = 0; i < MAXREG; i++)
		if (s->owner[c][i] == -3)
			set_reg(s, c, i, -1);
	MInst mi;
	memset(&mi, 0, sizeof mi);
	isa_insn_init(&mi.in, MOP_PCOPY);
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi.vr[i] = -1;
	mi.ndef = (uint8_t)nb;
	mi.in.nops = (uint8_t)(2 * nb);
	for (int k = 0; k < nb; k++) {
		int x = blk[k], y = new_vreg(s, x);
		if (y < 0)
			return -1;
		int size = s->f->vregs.data[x].size;
		s->phys[y] = (int16_t)to[k];
		set_owner(s, c, to[k], size, y);
		s->ren[s->orig[x]] = y;
		mi_vreg(&mi, k, s->f, y, 0, size);
		mi_vreg(&mi, nb + k, s->f, x, 0, size);
		s->splits++;
	}
	return vec_push(out, mi) ? -1 : 0;
}

/* Puts v (already assigned) into its registers; splits what is in the
 * way.  Returns 0, 1 (conflict) or -1. */
static int occupy(Ssa *s, const Ctx *cx, int v, MInstVec *out)
{
	/* Copied out: make_room may grow (move) the vreg array. */
	int c = s->f->vregs.data[v].cls, n = s->f->vregs.data[v].size, r = s->phys[v];
	if (s->owner[c][r] == v)
		return 0;
	for (int i = r; i < r + n; i++)
		if (s->owner[c][i] != -1) {
			int e = cx ? make_room(s, cx, c, r, n, out) : 1;
			if (e)
				return e;
			break;
		}
	set_owner(s, c, r, n, v);
	return 0;
}

/* occupy() at a block entry, where nothing can be split: v (assigned)
 * takes its registers; 1 if another vreg holds one of them. */
static int enter(Ssa *s, int v)
{
	const MVreg *mv = &s->f->vregs.data[v];
	int c = mv->cls, r = s->phys[v], n = mv->size;
	int32_t *own = s->owner[c];
	if (own[r] == v)
		return 0;
	for (int i = r; i < r + n; i++)
		if (own[i] != -1)
			return 1;
	for (int i = r; i < r + n; i++) {
		own[i] = v;
		s->freeset[c][i >> 6] &= ~(1ull << (i & 63));
	}
	return 0;
}

static void claim(Ssa *s, int v, int reg)
{
	const MVreg *mv = &s->f->vregs.data[v];
	s->phys[v] = (int16_t)reg;
	set_owner(s, mv->cls, reg, mv->size, v);
	if (s->orig[v] == v && (s->vflags[v] & VF_RESV)) /* reserved until the hull's end */
		for (int i = reg; i < reg + mv->size; i++) {
			s->resv[mv->cls][i]++;
			set_blocked(s, mv->cls, i);
		}
}

/* Gives v registers.  affin: preferred first register or -1.  Returns 0,
 * 1 (no room) or -1 (memory). */
static int assign(Ssa *s, const Ctx *cx, int v, int affin, MInstVec *out)
{
	const MVreg *mv = &s->f->vregs.data[v]; /* not used past make_room (it may move) */
	int c = mv->cls, n = mv->size, a = mv->align ? mv->align : 1;
	if (mv->hint >= 0 && mv->hint % a == 0 && range_free(s, c, mv->hint, n)) {
		claim(s, v, mv->hint);
		return 0;
	}
	if (affin >= 0 && affin % a == 0 && range_free(s, c, affin, n)) {
		claim(s, v, affin);
		return 0;
	}
	int r = -1, tu = s->orig[v] == v ? s->tuple[v] : 0;
	if ((tu & 31) > n) /* room for the tuple it moves into */
		r = find_free(s, c, tu & 31, TA_MAX(tu >> 5, 1), 1);
	if (r < 0)
		r = find_free(s, c, n, a, 1);
	if (r < 0)
		r = find_free(s, c, n, a, 0);
	if (r >= 0) {
		claim(s, v, r);
		return 0;
	}
	/* Live-range split: the aligned window with the fewest occupied
	 * dwords first would need a sort; the first window that works is
	 * enough (at most limit/align tries, each O(n)). */
	if (cx)
		for (r = 0; r + n <= s->limit[c]; r += a) {
			int e = make_room(s, cx, c, r, n, out);
			if (e < 0)
				return -1;
			if (e == 0) {
				claim(s, v, r);
				return 0;
			}
		}
	s->fail_cls = c;
	return 1;
}

static void release(Ssa *s, int v)
{
	const MVreg *mv = &s->f->vregs.data[v];
	if (s->phys[v] >= 0 && s->owner[mv->cls][s->phys[v]] == v)
		set_owner(s, mv->cls, s->phys[v], mv->size, -1);
}

static int allocate_ssa_live(MFunc *f, const RaOptions *opt, const Liveness *lvp, RaResult *r, Diag *d);

int ra_allocate_ssa(MFunc *f, const RaOptions *opt, const Liveness *known, RaResult *r, Diag *d)
{
	if (known)
		return allocate_ssa_live(f, opt, known, r, d);
	Liveness lv;
	if (liveness_compute(f, &lv)) {
		memset(r, 0, sizeof *r);
		r->fail_cls = -1;
		diag_error(d, "out of memory in register allocation");
		return -1;
	}
	int rc = allocate_ssa_live(f, opt, &lv, r, d);
	liveness_free(&lv);
	return rc;
}

/* Only the block live sets are read (not the demand), so sets computed
 * before amd_sched's moves serve as well (regalloc.h). */
static int allocate_ssa_live(MFunc *f, const RaOptions *opt, const Liveness *lvp, RaResult *r, Diag *d)
{
	memset(r, 0, sizeof *r);
	r->fail_cls = -1;
	int nv = (int)f->vregs.len, nb = (int)f->blocks.len, ni = (int)f->insns.len;
	const Liveness lv = *lvp; /* (a shallow copy: shorter names) */
	Ssa *s = calloc(1, sizeof *s);
	uint8_t *relmask = calloc((size_t)ni + 1, 1); /* per insn: operands not live after it */
	uint8_t *exec_ok = calloc((size_t)nb + 1, 1);
	int32_t *bucket = malloc(sizeof(int32_t) * ((size_t)nv + 1)), *bhead = malloc(sizeof(int32_t) * ((size_t)ni + 1));
	int32_t *mark = malloc(sizeof(int32_t) * ((size_t)nv + 1)); /* per vreg: seen, then live stamps */
	int32_t *nrange = malloc(sizeof(int32_t) * (2 * (size_t)nb + 1));
	int32_t *fresh = malloc(sizeof(int32_t) * ((size_t)nv + 1)); /* live-ins without registers yet */
	/* per block, the vregs whose hull end the block's live sets set last
	 * (lists through setnext); setval: that end */
	int32_t *sethead = malloc(sizeof(int32_t) * (2 * (size_t)nv + (size_t)nb + 1)), *setnext = NULL, *setval = NULL;
	MInstVec out = mir_spare(f);
	int rc = -1, mem = 0;
	/* Room for the instructions, splits, and what waitcnt and the hazard
	 * pass add later: those passes write into this array or the one it
	 * replaces, and an array that has to grow is fresh memory again
	 * (a page fault per 4 KiB, see docs/performance.md).  Capacity never
	 * written costs address space only. */
	if (vec_reserve(&out, 2 * (size_t)ni + 64))
		goto fail_mem;
	if (!s || !relmask || !exec_ok || !bucket || !bhead || !mark || !nrange || !fresh || !sethead)
		goto fail_mem;
	setnext = sethead + nb, setval = setnext + nv;
	s->f = f;
	s->fail_cls = -1;
	s->nvcap = nv + 16;
	s->phys = malloc(sizeof(int16_t) * s->nvcap);
	s->orig = malloc(sizeof(int32_t) * s->nvcap);
	s->ren = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	s->lastpt = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	s->vflags = calloc((size_t)nv + 1, 1);
	s->tuple = calloc((size_t)nv + 1, 1);
	if (!s->phys || !s->orig || !s->ren || !s->lastpt || !s->vflags || !s->tuple)
		goto fail_mem;
	for (int v = 0; v < nv; v++)
		s->phys[v] = -1, s->orig[v] = v, s->ren[v] = v, s->lastpt[v] = -1;
	for (int c = 0; c < MR_NCLASS; c++) {
		s->limit[c] = opt && opt->reg_limit[c] ? opt->reg_limit[c] : ssa_default_limit(f->target, c);
		if (s->limit[c] > MAXREG)
			s->limit[c] = MAXREG;
	}
	free_all(s);
	for (int v = 0; v < nv; v++) {
		const MVreg *hv = &f->vregs.data[v];
		if (hv->hint >= 0 && hv->hint + hv->size <= MAXREG)
			for (int i = hv->hint; i < hv->hint + hv->size; i++) {
				s->hinted[hv->cls][i] = 1;
				set_blocked(s, hv->cls, i);
			}
	}
	/* A vreg's hull end is set by the last block whose live-in or live-out
	 * set holds it (its first instruction, or its last if live-out) and
	 * raised by the operands from there on.  Only that last block
	 * matters: a sweep from the end takes each vreg at the first block
	 * seen (mark[v] set), walking both sets in ascending order. */
	memset(mark, 0, sizeof(int32_t) * (size_t)nv);
	for (int b = nb - 1; b >= 0; b--) {
		const MBlock *bl = &f->blocks.data[b];
		LiveSet lin = lv_in(&lv, b), lout = lv_out(&lv, b);
		sethead[b] = -1;
		for (int i = 0, j = 0; i < lin.n || j < lout.n;) {
			int v, isout = j < lout.n && (i >= lin.n || lout.v[j] <= lin.v[i]);
			if (isout) {
				v = lout.v[j++];
				if (i < lin.n && lin.v[i] == v)
					i++;
			} else {
				v = lin.v[i++];
			}
			if (mark[v])
				continue;
			mark[v] = 1;
			setval[v] = isout ? TA_MAX(bl->first, bl->last - 1) : bl->first;
			setnext[v] = sethead[b], sethead[b] = v;
		}
	}
	/* Per block (backwards): which operands are dead after their
	 * instruction; end of each vreg's hull in layout order; exec writes.
	 * mark[v] == b: v live at this point of block b. */
	for (int v = 0; v < nv; v++)
		mark[v] = -1;
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		LiveSet lout = lv_out(&lv, b);
		for (int v = sethead[b]; v >= 0; v = setnext[v])
			s->lastpt[v] = setval[v];
		exec_ok[b] = 1;
		for (int k = 0; k < lout.n; k++)
			mark[lout.v[k]] = b;
		for (int i = bl->last - 1; i >= bl->first; i--) {
			const MInst *mi = &f->insns.data[i];
			if (writes_exec(mi))
				exec_ok[b] = 0;
			int xl = cross_lane(mi);
			for (int k = 0; k < mi->in.nops; k++) {
				if (!(mi->vmask & (1u << k)))
					continue;
				int v = mi->vr[k];
				s->lastpt[v] = TA_MAX(s->lastpt[v], i);
				if (mark[v] != b)
					relmask[i] |= (uint8_t)(1u << k);
				if (xl && mi_is_use(mi, k))
					s->vflags[v] |= VF_XLANE;
			}
			unsigned op = mi->in.op;
			if ((op == MOP_COPY || op == ISA_V_MOV_B32 || op == ISA_S_MOV_B32) && mi->ndef == 1 &&
			    (mi->vmask & 3) == 3 && (relmask[i] & 2) && mi->sub[0] == 0 && mi->sub[1] == 0 &&
			    f->vregs.data[mi->vr[0]].size > f->vregs.data[mi->vr[1]].size &&
			    f->vregs.data[mi->vr[0]].cls == f->vregs.data[mi->vr[1]].cls)
				s->tuple[mi->vr[1]] = (uint8_t)(f->vregs.data[mi->vr[0]].align << 5 |
								 TA_MIN(f->vregs.data[mi->vr[0]].size, 31));
			for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
				if (!(mi->vmask & (1u << k)))
					continue;
				int v = mi->vr[k], again = 0;
				for (int j = 0; j < k; j++)
					again |= (mi->vmask >> j & 1) && mi->vr[j] == v;
				if (!again)
					s->vflags[v] |= (s->vflags[v] & VF_DEF) ? VF_RESV : VF_DEF;
				if (mark[v] == b && !(mi->flags & MI_PARTIAL) &&
				    ((mi->sub[k] == 0 && mi->in.ops[k].count == f->vregs.data[v].size) ||
				     (k == 0 && (mi->flags & MI_DEFALL))))
					mark[v] = -1;
			}
			for (int k = 0; k < mi->in.nops; k++)
				if ((mi->vmask & (1u << k)) && mi_is_use(mi, k))
					mark[mi->vr[k]] = b;
		}
	}
	/* Live into a block along one edge but not another: reserve. */
	for (int b = 0; b < nb; b++)
		for (int e = 0; e < 3; e++) {
			int t = f->blocks.data[b].succ[e];
			if (t < 0)
				continue;
			LiveSet lin = lv_in(&lv, t), lout = lv_out(&lv, b);
			for (int i = 0, j = 0; i < lin.n; i++) { /* lin - lout */
				while (j < lout.n && lout.v[j] < lin.v[i])
					j++;
				if (j >= lout.n || lout.v[j] != lin.v[i])
					s->vflags[lin.v[i]] |= VF_RESV;
			}
		}
	for (int k = 0, n = nb ? lv_in(&lv, 0).n : 0; k < n; k++) /* read before any definition */
		s->vflags[lv_in(&lv, 0).v[k]] |= VF_RESV;
	/* Buckets: vregs whose reservation ends after instruction i. */
	for (int i = 0; i <= ni; i++)
		bhead[i] = -1;
	for (int v = 0; v < nv; v++)
		if (s->lastpt[v] >= 0)
			bucket[v] = bhead[s->lastpt[v]], bhead[s->lastpt[v]] = v;
	for (int b = 0; b < nb; b++) {
		MBlock *bl = &f->blocks.data[b];
		LiveSet lin = lv_in(&lv, b);
		Ctx cx = {NULL, 0, b, exec_ok[b], lv_out(&lv, b)};
		free_all(s);
		/* Names given by the last block's splits: back to the originals
		 * (splits are block-local), touching only those renamed. */
		for (size_t y = (size_t)nv; y < f->vregs.len; y++)
			s->ren[s->orig[y]] = s->orig[y];
		/* Entry: live-ins in their registers; then first-seen ones get
		 * some (collected on the way: one walk over the set). */
		int nfresh = 0;
		for (int k = 0; k < lin.n; k++) {
			int v = lin.v[k];
			if (s->phys[v] < 0)
				fresh[nfresh++] = v;
			else if (enter(s, v))
				goto fail;
		}
		for (int k = 0; k < nfresh; k++) {
			int e = assign(s, NULL, fresh[k], -1, &out);
			if (e < 0)
				goto fail_mem;
			if (e)
				goto fail;
		}
		int first = (int)out.len;
		for (int i = bl->first; i < bl->last; i++) {
			/* f->insns does not change in this loop (splits go to out). */
			const MInst *mi = &f->insns.data[i];
			int32_t names[ISA_MAX_OPS];
			for (int k = 0; k < mi->in.nops; k++) {
				names[k] = -1;
				if (mi->vmask & (1u << k))
					names[k] = s->ren[mi->vr[k]];
			}
			cx.ops = names;
			cx.nops = mi->in.nops;
			/* Reads (and tied/partial defs) first. */
			for (int k = 0; k < mi->in.nops; k++) {
				if (names[k] < 0 || (mi_is_def(mi, k) && !mi_is_use(mi, k)))
					continue;
				int e = s->phys[names[k]] >= 0 ? occupy(s, &cx, names[k], &out)
								: assign(s, &cx, names[k], -1, &out);
				if (e < 0)
					goto fail_mem;
				if (e)
					goto fail;
			}
			/* Reads that die here free their registers for the defs,
			 * unless the instruction writes before it has read all. */
			int early = mi->flags & MI_EARLY;
			for (int pass = early ? 1 : 0; pass < 2; pass++) {
				if (pass == 1) {
					for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
						if (names[k] < 0)
							continue;
						int v = names[k], affin = -1;
						unsigned op = mi->in.op;
						int is_copy = op == MOP_COPY || op == MOP_PCOPY || op == ISA_S_MOV_B32 ||
							      op == ISA_V_MOV_B32 || op == ISA_S_MOV_B64;
						if (s->phys[v] < 0 && is_copy && mi->in.nops >= 2) {
							int src = op == MOP_PCOPY ? mi->in.nops / 2 + k : 1;
							if (src < mi->in.nops && names[src] >= 0 && mi->sub[src] == 0 &&
							    mi->sub[k] == 0 &&
							    f->vregs.data[names[src]].cls == f->vregs.data[v].cls)
								affin = s->phys[names[src]];
						}
						int e = s->phys[v] >= 0 ? occupy(s, &cx, v, &out) : assign(s, &cx, v, affin, &out);
						if (e < 0)
							goto fail_mem;
						if (e)
							goto fail;
					}
				}
				if (pass == 0 || early)
					for (int k = 0; k < mi->in.nops; k++)
						if (names[k] >= 0 && (relmask[i] >> k & 1) && k >= mi->ndef) {
							int defd = 0;
							for (int j = 0; j < mi->ndef; j++)
								defd |= names[j] == names[k];
							if (!defd)
								release(s, names[k]);
						}
			}
			for (int k = 0; k < mi->in.nops; k++)
				if (names[k] >= 0 && (relmask[i] >> k & 1))
					release(s, names[k]);
			if (vec_push(&out, *mi))
				goto fail_mem;
			for (int k = 0; k < mi->in.nops; k++) /* the names in this block */
				if (names[k] >= 0)
					out.data[out.len - 1].vr[k] = names[k];
			/* Reservations of vregs with no life after this point end. */
			for (int v = bhead[i]; v >= 0; v = bucket[v])
				if (s->phys[v] >= 0 && (s->vflags[v] & VF_RESV)) {
					const MVreg *mv = &f->vregs.data[v];
					for (int j = s->phys[v]; j < s->phys[v] + mv->size; j++) {
						s->resv[mv->cls][j]--;
						set_blocked(s, mv->cls, j);
					}
				}
		}
		nrange[2 * b] = first; /* applied on success only */
		nrange[2 * b + 1] = (int)out.len;
	}
	/* Checked before f changes: an assignment the validator rejects is a
	 * give-up like any other (the linear scan takes over), never a
	 * miscompile.  The view shares f's vregs, with the new code. */
	{
		MFunc view = *f;
		view.insns = out;
		view.blocks.data = malloc(sizeof(MBlock) * ((size_t)nb + 1));
		if (!view.blocks.data)
			goto fail_mem;
		for (int b = 0; b < nb; b++) {
			view.blocks.data[b] = f->blocks.data[b];
			view.blocks.data[b].first = nrange[2 * b], view.blocks.data[b].last = nrange[2 * b + 1];
		}
		StrBuf err = {0};
		int bad = ra_validate(&view, s->phys, &err);
		free(view.blocks.data);
		if (bad) {
			diag_error(d, "SSA register allocation is invalid (%s); the linear scan takes over",
				   err.buf ? err.buf : "?");
			sb_free(&err);
			f->vregs.len = (size_t)nv;
			r->fail_cls = -1;
			goto done;
		}
		sb_free(&err);
	}
	/* Success: f takes the new instruction stream. */
	for (int b = 0; b < nb; b++)
		f->blocks.data[b].first = nrange[2 * b], f->blocks.data[b].last = nrange[2 * b + 1];
	mir_set_insns(f, &out);
	r->phys = s->phys;
	s->phys = NULL;
	for (size_t v = 0; v < f->vregs.len; v++)
		if (r->phys[v] >= 0) {
			const MVreg *mv = &f->vregs.data[v];
			r->used[mv->cls] = TA_MAX(r->used[mv->cls], r->phys[v] + mv->size);
		}
	r->ninterval = (int)f->vregs.len;
	r->splits = s->splits;
	r->allocator = RA_SSA;
	rc = 0;
	goto done;
fail_mem:
	mem = 1;
fail:
	f->vregs.len = (size_t)nv; /* the split copies' vregs go; insns and blocks were not touched */
	if (mem)
		diag_error(d, "out of memory in register allocation");
	else
		diag_error(d, "SSA register allocation gave up (%s); the linear scan takes over",
			   s && s->fail_cls >= 0 ? (s->fail_cls == MR_S ? "SGPRs" : s->fail_cls == MR_V ? "VGPRs" : "AGPRs")
						 : "conflicting registers at a block entry or redefinition");
	r->fail_cls = s ? s->fail_cls : -1;
done:
	if (s) {
		free(s->phys), free(s->orig), free(s->ren), free(s->lastpt), free(s->vflags), free(s->tuple);
		free(s);
	}
	mir_put_spare(f, &out);
	free(relmask), free(exec_ok), free(bucket), free(bhead), free(mark), free(nrange), free(fresh), free(sethead);
	return rc;
}
