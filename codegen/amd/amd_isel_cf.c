/* amd_isel_cf.c — control flow (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- control flow -------------------------------------------------------- */

void start_block(Isel *s)
{
	if (mir_block(s->mf) < 0)
		s->err = 1;
}

/* Record that the current block's branch targets (SIMT labels) must be
 * resolved after selection: succ[k] temporarily holds -(label + 2). */
void set_succ_label(Isel *s, int k, int label)
{
	MBlock *b = &s->mf->blocks.data[s->mf->blocks.len - 1];
	b->succ[k] = -(label + 2);
}

/* Before an exec-empty jump from SIMT position i to label N: park masks
 * whose zeroing point the jump skips (i < init <= N) and whose label is
 * not skipped must be zeroed here too.  Only the first such jump of a
 * stretch of code without labels does it: the code between two of them is
 * straight-line (every branch in it leaves for N or later) and writes no
 * mask whose zeroing point is still ahead, so zeroing them again at every
 * jump (each level of nested ifs re-zeroed all inner masks: quadratic code)
 * adds nothing.  A jump can skip whole loops (plan_parks), so the masks are
 * found with zmax, a max tree over zeroing points of their labels'
 * positions: the cost is the masks zeroed, times log n. */
static void zero_skipped_parks(Isel *s, int i, int N)
{
	if (s->seg_zeroed[N] == s->nseg + 1)
		return;
	s->seg_zeroed[N] = s->nseg + 1;
	int n = (int)s->sf->code.len, m = n + 1, np = s->label_pos[N], nz = 0;
	int32_t *t = s->zmax, *pos = s->zmax + 2 * m, stack[64];
	int l = i + 1 + m, r = TA_MIN(np, n - 1) + m + 1;
	for (; l < r; l >>= 1, r >>= 1) { /* the range's nodes, then down those holding a mask */
		int k[2] = {l & 1 ? l++ : 0, r & 1 ? --r : 0};
		for (int j = 0; j < 2; j++) {
			int ns = 0;
			if (k[j] && t[k[j]] >= np)
				stack[ns++] = k[j];
			while (ns) {
				int x = stack[--ns];
				if (x >= m)
					pos[nz++] = x - m;
				else
					for (int c = 2 * x; c <= 2 * x + 1; c++)
						if (t[c] >= np)
							stack[ns++] = c;
			}
		}
	}
	for (int a = 1; a < nz; a++) /* few: in code order, as they were found before */
		for (int b = a; b > 0 && pos[b - 1] > pos[b]; b--) {
			int32_t x = pos[b];
			pos[b] = pos[b - 1], pos[b - 1] = x;
		}
	for (int a = 0; a < nz; a++)
		for (int X = s->init_at[pos[a]]; X >= 0; X = s->init_next[X]) {
			if (s->park[X] < 0 || s->label_pos[X] < np)
				continue;
			MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
			put(s, mi, 0, reg(s->park[X], 0, s->lm), ISA_TY_B32);
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
		}
}

MInst *branch_to(Isel *s, unsigned op, int label)
{
	MInst *mi = emit(s, op, 0);
	IsaOperand o = {ISA_K_LABEL, 1, 0, label, NULL, 0};
	mi_phys(mi, 0, o);
	return mi;
}

/* A uniform conditional (or unconditional) forward branch at SIMT insn i
 * is a plain s_cbranch_scc / s_branch when plan_parks found that no run of
 * labels it jumps over waits for lanes parked by an earlier branch: every
 * active lane goes the same way, so nothing is parked.  Decided there, in
 * code order (next_label[i] < 0), so that only labels with parked lanes get
 * a mask. */
bool scalar_branch_ok(const Isel *s, int i, int L)
{
	(void)L;
	return s->next_label[i] < 0;
}

/* That branch (p.kind VK_CONST: unconditional, s_branch).  No mask needs
 * zeroing here: plan_parks put the zeroing point of every mask whose span
 * it jumps into before it. */
void sel_scalar_branch(Isel *s, int i, int L, Val p, bool neg)
{
	(void)i;
	if (p.kind == VK_CONST) {
		branch_to(s, ISA_S_BRANCH, L);
		set_succ_label(s, 0, L);
	} else {
		mask_to_scc(s, p);
		branch_to(s, neg ? ISA_S_CBRANCH_SCC0 : ISA_S_CBRANCH_SCC1, L);
		set_succ_label(s, 1, L);
	}
	start_block(s);
}

/* Forward branch from SIMT insn i to label L with lane mask p (Val; count
 * 0 = all active lanes). */
void sel_fwd_branch(Isel *s, int i, int L, Val p, bool neg, bool all)
{
	int W = s->park[L];
	Val w = reg(W, 0, s->lm);
	Val t = reg(newv(s, MR_S, s->lm), 0, s->lm);
	if (all) {
		MInst *mi = emit(s, lmop(s, ISA_S_OR_B32, ISA_S_OR_B64), 1);
		put(s, mi, 0, w, ISA_TY_B32);
		put(s, mi, 1, w, ISA_TY_B32);
		mi_phys(mi, 2, exec_op(s));
		mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
		mi_phys(mi, 0, exec_op(s));
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	} else {
		/* t = exec & p (or & ~p); W |= t; exec &= ~t */
		MInst *mi = emit(s, neg ? lmop(s, ISA_S_ANDN2_B32, ISA_S_ANDN2_B64) : lmop(s, ISA_S_AND_B32, ISA_S_AND_B64), 1);
		put(s, mi, 0, t, ISA_TY_B32);
		mi_phys(mi, 1, exec_op(s));
		put(s, mi, 2, p, ISA_TY_B32);
		mi = emit(s, lmop(s, ISA_S_OR_B32, ISA_S_OR_B64), 1);
		put(s, mi, 0, w, ISA_TY_B32);
		put(s, mi, 1, w, ISA_TY_B32);
		put(s, mi, 2, t, ISA_TY_B32);
		mi = emit(s, lmop(s, ISA_S_ANDN2_B32, ISA_S_ANDN2_B64), 1);
		mi_phys(mi, 0, exec_op(s));
		mi_phys(mi, 1, exec_op(s));
		put(s, mi, 2, t, ISA_TY_B32);
	}
	int next = s->skip_label[i];
	zero_skipped_parks(s, i, next);
	branch_to(s, ISA_S_CBRANCH_EXECZ, next);
	set_succ_label(s, 1, next);
	set_succ_label(s, 2, L);
	start_block(s);
}

void sel_label(Isel *s, int L)
{
	start_block(s);
	s->nseg++;
	s->label_block[L] = (int32_t)s->mf->blocks.len - 1;
	if (s->park[L] < 0)
		return;
	/* Not the last label of its run (same mask): the lanes resume there. */
	int q = s->label_pos[L] + 1;
	if (L < s->nlabels - 1 && q < (int)s->sf->code.len && s->sf->code.data[q].op == SI_LABEL &&
	    s->park[s->sf->code.data[q].imm] == s->park[L])
		return;
	MInst *mi = emit(s, lmop(s, ISA_S_OR_B32, ISA_S_OR_B64), 1);
	mi_phys(mi, 0, exec_op(s));
	mi_phys(mi, 1, exec_op(s));
	put(s, mi, 2, reg(s->park[L], 0, s->lm), ISA_TY_B32);
	if (L < s->nlabels - 1) { /* still nobody here: on to the next label */
		int next = s->skip_label[s->label_pos[L]];
		zero_skipped_parks(s, s->label_pos[L], next);
		branch_to(s, ISA_S_CBRANCH_EXECZ, next);
		set_succ_label(s, 1, next);
		start_block(s);
	}
}

void zero_parks(Isel *s, int i)
{
	for (int L = s->init_at[i]; L >= 0; L = s->init_next[L]) {
		MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
		put(s, mi, 0, reg(s->park[L], 0, s->lm), ISA_TY_B32);
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	}
}

/* ---- park-mask planning (after uniformity, before selection) ---------- */

/* Binary min-heap of SIMT positions. */
static void heap_push(int32_t *h, int *nh, int32_t v)
{
	int i = (*nh)++;
	for (; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = v;
}

static void heap_pop(int32_t *h, int *nh)
{
	int n = --*nh, i = 0;
	int32_t v = h[n];
	for (int c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
	}
	h[i] = v;
}

/* Minimum of t's leaves l..r (bottom-up segment tree over m leaves). */
static int32_t seg_min(const int32_t *t, int m, int l, int r)
{
	int32_t best = INT32_MAX;
	for (l += m, r += m + 1; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			best = TA_MIN(best, t[l]), l++;
		if (r & 1)
			r--, best = TA_MIN(best, t[r]);
	}
	return best;
}

/* The zeroing point at moved out of every loop that contains it but not
 * the label at lpos (back edges at positions [at, lpos) whose head is
 * before at), repeatedly: the mask must not be re-zeroed per iteration. */
static int out_of_loops(const int32_t *be_j, const int32_t *be_h, int nbe, int at, int lpos)
{
	for (int moved = 1; moved;) {
		moved = 0;
		for (int e = first_edge_after(be_j, nbe, at - 1); e < nbe && be_j[e] < lpos; e++)
			if (be_h[e] < at)
				at = be_h[e], moved = 1;
	}
	return at;
}

/* Park masks (see amd_isel_impl.h), in three steps (n log n, plus one walk
 * over the back edges inside each mask's span per hoisting step):
 *  - Labels with no code between them are one join point.  A branch to any
 *    of them parks its lanes in the mask of the run's last label, which
 *    alone resumes them, so the arms of an else-if chain (all ending at one
 *    run of labels) share one mask instead of one each live across the rest
 *    of the chain.  A loop head starts a new run: its back edge must not
 *    resume again lanes parked before the loop.
 *  - In code order, a uniform or unguarded forward branch is scalar when no
 *    run it jumps over has lanes parked by an earlier branch (a heap of the
 *    positions of runs with parked lanes still ahead); the others park.
 *    Only runs (and the end label, for returns) with a parking branch get
 *    a mask.
 *  - A mask is zeroed before its first parking branch, moved out of loops
 *    that contain that point but not the label, and before any scalar
 *    branch that would jump from above that point into the mask's span. */
void plan_parks(Isel *s, const int32_t *be_j, const int32_t *be_h, int nbe)
{
	const SInst *code = s->sf->code.data;
	int n = (int)s->sf->code.len, m = n + 1, end = s->nlabels - 1;
	int32_t *lpos = s->label_pos, *fs = s->first_src;
	int32_t *rep = malloc(sizeof(int32_t) * ((size_t)end + 1));
	int32_t *heap = malloc(sizeof(int32_t) * ((size_t)end + 1));
	int32_t *seg = malloc(sizeof(int32_t) * 2 * (size_t)m); /* scalar branch sources by landing position */
	uint8_t *head = calloc((size_t)m, 1);                    /* position is a loop head */
	int32_t *loop_end = malloc(sizeof(int32_t) * (size_t)m);  /* loop head position -> its last back edge */
	int32_t *after = malloc(sizeof(int32_t) * (size_t)m);     /* position -> exec-empty target (below) */
	if (!rep || !heap || !seg || !head || !loop_end || !after) {
		if (!s->err)
			diag_error(s->d, "out of memory");
		s->err = 1;
		goto out;
	}
	for (int e = 0; e < nbe; e++)
		head[be_h[e]] = 1;
	for (int L = 0; L <= end; L++)
		rep[L] = L, fs[L] = n;
	for (int i = n - 2; i >= 0; i--)
		if (code[i].op == SI_LABEL && code[i + 1].op == SI_LABEL && !head[i + 1])
			rep[code[i].imm] = rep[code[i + 1].imm];
	for (int k = 0; k < 2 * m; k++)
		seg[k] = INT32_MAX;
	int nh = 0;
	for (int i = 0; i < n; i++) {
		const SInst *in = &code[i];
		if (in->op == SI_RET && i + 1 < n && fs[end] == n)
			fs[end] = i;
		if (in->op != SI_BRA || lpos[in->imm] < i)
			continue;
		int R = rep[in->imm], t = lpos[R];
		while (nh && heap[0] < i)
			heap_pop(heap, &nh);
		if ((in->guard < 0 || s->uni[in->guard]) && (!nh || heap[0] >= t)) {
			s->next_label[i] = -1; /* scalar */
			seg[m + lpos[in->imm]] = TA_MIN(seg[m + lpos[in->imm]], i);
		} else if (fs[R] == n) {
			fs[R] = i;
			heap_push(heap, &nh, t);
		}
	}
	for (int k = m - 1; k > 0; k--)
		seg[k] = TA_MIN(seg[2 * k], seg[2 * k + 1]);
	/* Masks in order of their first parking branch. */
	for (int i = 0; i < n; i++) {
		const SInst *in = &code[i];
		int R = in->op == SI_RET ? end : in->op == SI_BRA && lpos[in->imm] > i ? rep[in->imm] : -1;
		if (R < 0 || fs[R] != i)
			continue;
		int at = i;
		for (;;) {
			at = out_of_loops(be_j, be_h, nbe, at, lpos[R]);
			int32_t src = seg_min(seg, m, at, lpos[R]);
			if (src >= at)
				break;
			at = src;
		}
		s->park[R] = newv(s, MR_S, s->lm);
		s->init_pos[R] = at;
		s->init_next[R] = s->init_at[at];
		s->init_at[at] = R;
	}
	for (int L = 0; L < end; L++)
		s->park[L] = s->park[rep[L]];
	/* Where an exec-empty wave goes (skip_label): on in code order to the
	 * next label where lanes can resume (one with a mask), but
	 *  - over a loop as a whole: no lane can be parked in a loop the wave
	 *    has not entered, and the loop run with no lanes would read values
	 *    whose definitions the jump skipped (gqa_decode_split's inner loop
	 *    read an SGPR mask from its skipped preheader) and count with a trip
	 *    counter nobody set;
	 *  - along a scalar unconditional forward branch: no lane is parked in
	 *    what it jumps over (that is what made it scalar), and what it jumps
	 *    over may be another path altogether (a kernel's other variant).
	 * after[p]: the target for a wave at position p, p's label included.
	 * Back edges are sorted by position, so a head's last one ends its loop. */
	for (int e = 0; e < nbe; e++)
		loop_end[be_h[e]] = be_j[e];
	after[n] = end;
	for (int i = n - 1; i >= 0; i--) {
		const SInst *in = &code[i];
		int nl = after[i + 1];
		if (in->op == SI_LABEL && s->park[in->imm] >= 0)
			nl = (int)in->imm;
		else if (in->op == SI_LABEL && head[i])
			nl = after[loop_end[i] + 1];
		else if (in->op == SI_BRA && in->guard < 0 && s->next_label[i] == -1 && lpos[in->imm] > i)
			nl = after[lpos[in->imm]];
		after[i] = nl;
		s->skip_label[i] = after[i + 1];
	}
	int32_t *zt = s->zmax;
	for (int q = 0; q < m; q++) {
		zt[m + q] = -1;
		for (int X = q < n ? s->init_at[q] : -1; X >= 0; X = s->init_next[X])
			if (s->park[X] >= 0)
				zt[m + q] = TA_MAX(zt[m + q], lpos[X]);
	}
	for (int k = m - 1; k > 0; k--)
		zt[k] = TA_MAX(zt[2 * k], zt[2 * k + 1]);
out:
	free(rep);
	free(heap);
	free(seg);
	free(head);
	free(loop_end);
	free(after);
}
