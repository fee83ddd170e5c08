/* amd_licm.c — loop-invariant code motion on the SIMT IR, before AMD
 * instruction selection.
 *
 * The lowering computes every address where it is used: a copy inside a
 * K-loop recomputes its lanes' offsets (thread index divided into rows and
 * columns, products with the pitches) on every trip.  PTX leaves that to
 * ptxas; the AMD backend has no such optimiser, so this pass moves the pure
 * computations whose operands do not change in a loop to just before the
 * loop's head label.
 *
 * Loops are the lowering's: a label L at position h and the unconditional
 * backward branches to it, the last at position j.  A loop is used only
 * when it is entered by falling into L (no branch from outside [h, j] to a
 * label in [h, j]) and nests properly with the others.  An instruction of
 * the loop moves when
 *   - it is pure (arithmetic, compares, selects, conversions, constants:
 *     nothing that touches memory, lanes, control flow or the matrix
 *     unit) and unguarded, and defines one register that has no other
 *     definition and is not part of a register tuple (MMA operands, vector
 *     stores, accumulators: isel groups those by position);
 *   - each operand has one definition, either moved to the same head in
 *     this round, or at a position d < h that runs whenever h is reached:
 *     no forward branch from before d lands in (d, h] (it would skip d but
 *     not h; this also keeps a read of a never-written register, which the
 *     emulator reports, out of the hoisted code).
 * Moving a pure instruction out of a conditional part of the body is
 * speculation: it may compute a value nobody uses, which costs an
 * instruction per loop entry instead of one per trip.
 *
 * The moved code keeps its order.  A round moves instructions out of their
 * innermost loop; rounds repeat (at most LICM_ROUNDS) so invariants of
 * nested loops climb out of every level.  A round is O(n log n) for n
 * instructions (the skip test sorts the forward branches). */
#include "amd.h"

#include <stdlib.h>
#include <string.h>

enum { LICM_ROUNDS = 8 };

static bool pure_op(const SInst *in)
{
	switch (in->op) {
	case SI_MOVI: case SI_MOVF: case SI_MOV: case SI_ADD: case SI_SUB: case SI_MUL: case SI_DIV: case SI_REM:
	case SI_MIN: case SI_MAX: case SI_NEG: case SI_ABS: case SI_AND: case SI_OR: case SI_XOR: case SI_NOT:
	case SI_SHL: case SI_SHR: case SI_SETP: case SI_SELP: case SI_CVT: case SI_PACK: case SI_UNPACK:
	case SI_PACK2: case SI_HALF: case SI_MATH:
		return true;
	default:
		return false;
	}
}

/* SIMT registers an instruction defines: dst..dst+n-1. */
static int defs_of(const SInst *in)
{
	if (in->dst < 0)
		return 0;
	if (in->op == SI_MMA)
		return simt_mma[in->sub].nc;
	if (in->op == SI_LD && in->vec > 1)
		return in->vec;
	return 1;
}

typedef struct {
	int32_t h, j; /* head label position, last back edge */
	bool ok;
} Loop;

static int cmp_loop(const void *a, const void *b)
{
	const Loop *x = a, *y = b;
	return x->h != y->h ? (x->h > y->h) - (x->h < y->h) : (x->j < y->j) - (x->j > y->j);
}

typedef struct {
	int32_t b, t; /* forward branch at b to position t */
} Fwd;

static int cmp_fwd(const void *a, const void *b)
{
	const Fwd *x = a, *y = b;
	return (x->b > y->b) - (x->b < y->b);
}

/* Min-heap of landing positions. */
static void heap_push(int32_t *hp, int *n, int32_t v)
{
	int i = (*n)++;
	while (i && hp[(i - 1) / 2] > v) {
		hp[i] = hp[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	hp[i] = v;
}

static void heap_pop(int32_t *hp, int *n)
{
	int32_t v = hp[--*n];
	int i = 0;
	for (;;) {
		int k = 2 * i + 1;
		if (k >= *n)
			break;
		if (k + 1 < *n && hp[k + 1] < hp[k])
			k++;
		if (hp[k] >= v)
			break;
		hp[i] = hp[k];
		i = k;
	}
	if (*n)
		hp[i] = v;
}

typedef struct {
	SimtFunc *f;
	int n, nr;
	int32_t *ndefs, *defpos, *label_pos, *loop_of, *reach, *inner, *dest, *bit;
	uint8_t *tupled;
	Loop *loops;
	int nloops;
	Fwd *fwd;
	int nfwd;
	int32_t *heap;
} Licm;

static int ops_of(const SInst *in, int32_t *o)
{
	int k = 0;
	if (in->a >= 0)
		o[k++] = in->a;
	if (in->b >= 0)
		o[k++] = in->b;
	if (in->c >= 0)
		o[k++] = in->c;
	if (in->guard >= 0)
		o[k++] = in->guard;
	return k;
}

/* Registers that must not move: tuples isel groups by position. */
static void mark_tuples(Licm *z)
{
	const SimtFunc *f = z->f;
	for (int i = 0; i < z->n; i++) {
		const SInst *in = &f->code.data[i];
		if (in->op == SI_MMA) {
			const MmaInfo *m = &simt_mma[in->sub];
			int rs[3] = {in->a, in->b, in->c}, ns[3] = {m->na, m->nb, m->nc};
			for (int o = 0; o < 3; o++)
				for (int k = 0; rs[o] >= 0 && k < ns[o]; k++)
					z->tupled[rs[o] + k] = 1;
		} else if (in->op == SI_ST && in->vec > 1) {
			for (int k = 0; k < in->vec; k++)
				z->tupled[in->b + k] = 1;
		}
	}
	for (size_t i = 0; i + 1 < f->acc.len; i += 2)
		for (int32_t k = 0; k < f->acc.data[i + 1]; k++)
			z->tupled[f->acc.data[i] + k] = 1;
}

/* Positions, definitions, loops and the skip test of the current code. */
static int scan(Licm *z)
{
	const SimtFunc *f = z->f;
	int n = z->n;
	memset(z->ndefs, 0, sizeof(int32_t) * (size_t)z->nr);
	for (int L = 0; L <= f->nlabels; L++)
		z->label_pos[L] = z->loop_of[L] = -1;
	z->nfwd = 0;
	z->nloops = 0;
	for (int i = 0; i < n; i++) {
		const SInst *in = &f->code.data[i];
		for (int k = 0; k < defs_of(in); k++)
			z->ndefs[in->dst + k]++, z->defpos[in->dst + k] = i;
		if (in->op == SI_LABEL)
			z->label_pos[in->imm] = i;
	}
	for (int i = 0; i < n; i++) {
		const SInst *in = &f->code.data[i];
		int32_t t = in->op == SI_BRA ? z->label_pos[in->imm] : in->op == SI_RET ? n : -1;
		if (t < 0 && in->op == SI_BRA)
			return -1; /* a branch to a label that is not placed: leave the code alone */
		if (t > i)
			z->fwd[z->nfwd++] = (Fwd){i, t};
		else if (t >= 0 && in->op == SI_BRA && in->guard < 0) {
			int32_t *k = &z->loop_of[in->imm];
			if (*k < 0)
				*k = z->nloops, z->loops[z->nloops++] = (Loop){t, i, true};
			else
				z->loops[*k].j = i;
		}
	}
	qsort(z->loops, (size_t)z->nloops, sizeof(Loop), cmp_loop);
	qsort(z->fwd, (size_t)z->nfwd, sizeof(Fwd), cmp_fwd);
	/* Entered only by falling into the head: no forward branch from b < h
	 * lands in [h, j] (a Fenwick tree of the landings of the branches
	 * before h, loops by ascending h); properly nested. */
	memset(z->bit, 0, sizeof(int32_t) * ((size_t)n + 2));
	for (int k = 0, e = 0; k < z->nloops; k++) {
		Loop *lp = &z->loops[k];
		for (; e < z->nfwd && z->fwd[e].b < lp->h; e++)
			for (int x = z->fwd[e].t + 1; x <= n + 1; x += x & -x)
				z->bit[x]++;
		int32_t cnt = 0;
		for (int x = lp->j + 1; x > 0; x -= x & -x)
			cnt += z->bit[x];
		for (int x = lp->h; x > 0; x -= x & -x)
			cnt -= z->bit[x];
		if (cnt)
			lp->ok = false;
	}
	for (int k = 0; k < z->nloops; k++) {
		Loop *lp = &z->loops[k];
		for (int q = k + 1; q < z->nloops && z->loops[q].h <= lp->j; q++)
			if (z->loops[q].j > lp->j)
				lp->ok = z->loops[q].ok = false;
	}
	/* inner[i]: the innermost usable loop holding i (as its body), -1 none. */
	int top = 0, *stack = malloc(sizeof(int) * ((size_t)z->nloops + 1));
	if (!stack)
		return -1;
	for (int i = 0, k = 0; i < n; i++) {
		while (top && z->loops[stack[top - 1]].j < i)
			top--;
		while (k < z->nloops && z->loops[k].h == i)
			stack[top++] = k++;
		int in = -1;
		for (int s = top - 1; s >= 0 && in < 0; s--)
			if (z->loops[stack[s]].ok)
				in = stack[s];
		z->inner[i] = in;
	}
	free(stack);
	/* reach[d]: the nearest landing t of a forward branch b < d < t. */
	int hn = 0;
	for (int d = 0, e = 0; d < n; d++) {
		while (hn && z->heap[0] <= d)
			heap_pop(z->heap, &hn);
		z->reach[d] = hn ? z->heap[0] : n + 1;
		while (e < z->nfwd && z->fwd[e].b <= d)
			heap_push(z->heap, &hn, z->fwd[e++].t);
	}
	return 0;
}

/* One round; returns the number of instructions moved, -1 on OOM. */
static int round_(Licm *z)
{
	SimtFunc *f = z->f;
	int n = z->n;
	if (scan(z))
		return 0;
	int moved = 0;
	for (int i = 0; i < n; i++) {
		z->dest[i] = -1;
		const SInst *in = &f->code.data[i];
		int lk = z->inner[i];
		if (lk < 0 || !pure_op(in) || in->guard >= 0 || in->dst < 0 || defs_of(in) != 1)
			continue;
		int32_t h = z->loops[lk].h;
		if (i == h || z->ndefs[in->dst] != 1 || z->tupled[in->dst] || f->regs.data[in->dst] == VT_PRED)
			continue;
		int32_t o[4];
		int no = ops_of(in, o);
		bool ok = true;
		for (int k = 0; k < no && ok; k++) {
			int32_t r = o[k], d = z->defpos[r];
			if (z->ndefs[r] != 1)
				ok = false;
			else if (d < h)
				ok = z->reach[d] > h;
			else
				ok = d < i && z->dest[d] == h;
		}
		if (ok)
			z->dest[i] = h, moved++;
	}
	if (!moved)
		return 0;
	SInst *nc = malloc(sizeof(SInst) * (size_t)n);
	int32_t *byhead = malloc(sizeof(int32_t) * ((size_t)n + 1));
	if (!nc || !byhead) {
		free(nc), free(byhead);
		return -1;
	}
	/* Moved instructions listed per head, in order (a counting sort). */
	memset(byhead, 0, sizeof(int32_t) * ((size_t)n + 1));
	for (int i = 0; i < n; i++)
		if (z->dest[i] >= 0)
			byhead[z->dest[i] + 1]++;
	for (int i = 0; i < n; i++)
		byhead[i + 1] += byhead[i];
	int32_t *order = malloc(sizeof(int32_t) * ((size_t)moved + 1));
	if (!order) {
		free(nc), free(byhead);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (z->dest[i] >= 0)
			order[byhead[z->dest[i]]++] = i;
	/* byhead[h] is now the end of h's list; its start is the previous end. */
	int w = 0, start = 0;
	for (int i = 0; i < n; i++) {
		int end = byhead[i];
		for (int q = start; q < end; q++)
			nc[w++] = f->code.data[order[q]];
		start = end;
		if (z->dest[i] < 0)
			nc[w++] = f->code.data[i];
	}
	memcpy(f->code.data, nc, sizeof(SInst) * (size_t)n);
	free(nc), free(byhead), free(order);
	return moved;
}

int amd_licm(SimtFunc *f)
{
	Licm z = {.f = f, .n = (int)f->code.len, .nr = (int)f->regs.len};
	size_t n = (size_t)z.n + 2, nr = (size_t)z.nr + 1, nl = (size_t)f->nlabels + 2;
	z.ndefs = malloc(sizeof(int32_t) * nr);
	z.defpos = malloc(sizeof(int32_t) * nr);
	z.tupled = calloc(nr, 1);
	z.label_pos = malloc(sizeof(int32_t) * nl);
	z.loop_of = malloc(sizeof(int32_t) * nl);
	z.bit = malloc(sizeof(int32_t) * n);
	z.reach = malloc(sizeof(int32_t) * n);
	z.inner = malloc(sizeof(int32_t) * n);
	z.dest = malloc(sizeof(int32_t) * n);
	z.loops = malloc(sizeof(Loop) * n);
	z.fwd = malloc(sizeof(Fwd) * n);
	z.heap = malloc(sizeof(int32_t) * n);
	int rc = -1;
	if (z.ndefs && z.defpos && z.tupled && z.label_pos && z.loop_of && z.bit && z.reach && z.inner && z.dest && z.loops && z.fwd && z.heap) {
		mark_tuples(&z);
		rc = 0;
		for (int r = 0; r < LICM_ROUNDS; r++) {
			int m = round_(&z);
			if (m < 0)
				rc = -1;
			if (m <= 0)
				break;
		}
	}
	free(z.ndefs), free(z.defpos), free(z.tupled), free(z.label_pos), free(z.loop_of), free(z.bit), free(z.reach), free(z.inner), free(z.dest);
	free(z.loops), free(z.fwd), free(z.heap);
	return rc;
}
