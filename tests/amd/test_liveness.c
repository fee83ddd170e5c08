/* test_liveness.c — regalloc/liveness.c against a dense reference: random
 * block graphs (fallthrough chains, loops, diamonds, jumps into loop
 * bodies, lane-resume edges, unreachable blocks) with random full, partial,
 * tied and sub-range definitions and uses.  The reference below is the
 * textbook formulation: blocks x vregs boolean matrices, every block
 * recomputed from its instructions until nothing changes. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "mir.h"
#include "regalloc.h"

static uint64_t rng_state;
static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (unsigned)((rng_state * 0x2545f4914f6cdd1dull) >> 33) % n;
}

/* Shapes of the block graph: 0 random edges anywhere (irreducible loops
 * and jumps into bodies), 1 diamonds, 2 nested loops, 3 a mix. */
static void random_func(MFunc *f, int shape)
{
	static const ta_target ts[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100};
	mir_init(f, ts[rnd(3)]);
	int nv = 1 + (int)rnd(100); /* across several 64-bit words */
	for (int i = 0; i < nv; i++) {
		static const int sizes[] = {1, 1, 1, 2, 2, 4};
		int c = rnd(8);
		mir_vreg(f, c < 3 ? MR_S : c < 7 ? MR_V : MR_A, sizes[rnd(6)]);
	}
	int nb = 1 + (int)rnd(24);
	for (int b = 0; b < nb; b++) {
		mir_block(f);
		int ni = (int)rnd(8);
		for (int i = 0; i < ni; i++) {
			MInst *mi = mir_emit(f, ISA_V_ADD_F32, 1);
			if (rnd(6)) { /* else no definition: the instruction only reads */
				int d = (int)rnd((unsigned)nv);
				const MVreg *dv = &f->vregs.data[d];
				int sub = dv->size > 1 && rnd(4) == 0 ? (int)rnd(dv->size) : 0;
				mi_vreg(mi, 0, f, d, sub, sub ? 1 : dv->size - (dv->size > 1 && rnd(6) == 0));
				unsigned fl = rnd(16);
				mi->flags = (uint8_t)((fl & 1 ? MI_PARTIAL : 0) | (fl == 2 ? MI_TIED : 0) |
						      (fl == 4 || fl == 6 ? MI_DEFALL : 0) | (fl == 8 ? MI_EARLY : 0));
			}
			int nuse = (int)rnd(3);
			for (int k = 0; k < nuse; k++) {
				int u = (int)rnd((unsigned)nv);
				mi_vreg(mi, 1 + k, f, u, (int)rnd(f->vregs.data[u].size), 1);
			}
		}
	}
	for (int b = 0; b < nb; b++) {
		MBlock *bl = &f->blocks.data[b];
		if (b + 1 < nb && rnd(12))
			bl->succ[0] = b + 1;
		int r = shape == 3 ? (int)rnd(3) : shape;
		if (r == 0 && rnd(3) == 0)
			bl->succ[1] = (int)rnd((unsigned)nb);
		else if (r == 1 && b + 2 < nb && rnd(2)) /* b -> b+1, b+2 -> join */
			bl->succ[1] = b + 2 + (int)rnd((unsigned)TA_MIN(3, nb - b - 2));
		else if (r == 2 && rnd(3) == 0) /* a back edge to a header at or before b */
			bl->succ[1] = b - (int)rnd((unsigned)TA_MIN(b + 1, 6));
		if (rnd(5) == 0)
			bl->succ[2] = (int)rnd((unsigned)nb);
	}
}

typedef struct {
	int nb, nv;
	uint8_t *in, *out; /* nb x nv */
} Ref;

static int full_def(const MFunc *f, const MInst *mi, int k)
{
	const MVreg *v = &f->vregs.data[mi->vr[k]];
	return !(mi->flags & MI_PARTIAL) &&
	       ((mi->sub[k] == 0 && mi->in.ops[k].count == v->size) || (k == 0 && (mi->flags & MI_DEFALL)));
}

/* One instruction backwards on the live row: kill full definitions, then
 * add every read (mi_is_use: tied and partial definitions read too). */
static void step(const MFunc *f, const MInst *mi, uint8_t *live)
{
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
		if ((mi->vmask >> k & 1) && full_def(f, mi, k))
			live[mi->vr[k]] = 0;
	for (int k = 0; k < mi->in.nops; k++)
		if ((mi->vmask >> k & 1) && mi_is_use(mi, k))
			live[mi->vr[k]] = 1;
}

static void reference(const MFunc *f, Ref *r)
{
	int nb = r->nb = (int)f->blocks.len, nv = r->nv = (int)f->vregs.len;
	r->in = calloc((size_t)nb * nv + 1, 1);
	r->out = calloc((size_t)nb * nv + 1, 1);
	uint8_t *row = malloc((size_t)nv + 1);
	for (int changed = 1; changed;) {
		changed = 0;
		for (int b = 0; b < nb; b++) {
			const MBlock *bl = &f->blocks.data[b];
			uint8_t *out = r->out + (size_t)b * nv;
			for (int s = 0; s < 3; s++)
				for (int v = 0; bl->succ[s] >= 0 && v < nv; v++)
					if (r->in[(size_t)bl->succ[s] * nv + v] && (s != 2 || f->vregs.data[v].cls != MR_S))
						out[v] = 1;
			memcpy(row, out, (size_t)nv);
			for (int i = bl->last - 1; i >= bl->first; i--)
				step(f, &f->insns.data[i], row);
			if (memcmp(row, r->in + (size_t)b * nv, (size_t)nv))
				memcpy(r->in + (size_t)b * nv, row, (size_t)nv), changed = 1;
		}
	}
	free(row);
}

static void add(RaDemand *d, const MVreg *v, int n)
{
	if (v->cls == MR_S)
		d->s = (int16_t)(d->s + n * v->size);
	else if (v->cls == MR_V)
		d->v = (int16_t)(d->v + n * v->size);
	else
		d->a = (int16_t)(d->a + n * v->size);
}

/* Dwords live across instruction i of block b: live after it, plus its
 * definitions that are dead (they still take registers), plus its reads
 * (live before it). */
static RaDemand ref_demand(const MFunc *f, const Ref *r, int b, int i, uint8_t *row)
{
	const MBlock *bl = &f->blocks.data[b];
	memcpy(row, r->out + (size_t)b * r->nv, (size_t)r->nv);
	for (int j = bl->last - 1; j > i; j--)
		step(f, &f->insns.data[j], row);
	const MInst *mi = &f->insns.data[i];
	RaDemand after = {0, 0, 0}, before = {0, 0, 0};
	for (int v = 0; v < r->nv; v++)
		if (row[v])
			add(&after, &f->vregs.data[v], 1);
	uint8_t dead[ISA_MAX_OPS] = {0};
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
		int seen = 0;
		for (int j = 0; j < k; j++)
			seen |= dead[j] && mi->vr[j] == mi->vr[k];
		if ((mi->vmask >> k & 1) && !row[mi->vr[k]] && !seen)
			dead[k] = 1, add(&after, &f->vregs.data[mi->vr[k]], 1);
	}
	step(f, mi, row);
	for (int v = 0; v < r->nv; v++)
		if (row[v])
			add(&before, &f->vregs.data[v], 1);
	/* across = max(after with the dead defs, before) per file */
	RaDemand d = after;
	d.s = TA_MAX(d.s, before.s), d.v = TA_MAX(d.v, before.v), d.a = TA_MAX(d.a, before.a);
	return d;
}

static void check_set(LiveSet s, const uint8_t *row, int nv, unsigned seed, int b, const char *what)
{
	int n = 0;
	for (int k = 0; k < s.n; k++) {
		cr_assert(s.v[k] >= 0 && s.v[k] < nv, "seed %u block %d %s: vreg %d", seed, b, what, s.v[k]);
		cr_assert(k == 0 || s.v[k - 1] < s.v[k], "seed %u block %d %s: not ascending at %d", seed, b, what, k);
		cr_assert(row[s.v[k]], "seed %u block %d %s: %%%d is not live", seed, b, what, s.v[k]);
	}
	for (int v = 0; v < nv; v++) {
		n += row[v];
		cr_assert_eq(lv_has(s, v), row[v], "seed %u block %d %s: lv_has(%%%d)", seed, b, what, v);
	}
	cr_assert_eq(s.n, n, "seed %u block %d %s: %d vregs, reference %d", seed, b, what, s.n, n);
}

Test(liveness, sparse_sets_equal_the_dense_reference)
{
	long live_in = 0, live_out = 0, lanes_only = 0, blocks = 0;
	for (unsigned seed = 1; seed <= 3000; seed++) {
		rng_state = (uint64_t)seed * 0x9e3779b97f4a7c15ull;
		MFunc f;
		random_func(&f, (int)(seed % 4));
		Ref r;
		reference(&f, &r);
		Liveness lv;
		cr_assert_eq(liveness_compute(&f, &lv), 0, "seed %u", seed);
		uint8_t *row = malloc((size_t)r.nv + 1);
		RaDemand mx = {0, 0, 0};
		for (int b = 0; b < r.nb; b++) {
			check_set(lv_in(&lv, b), r.in + (size_t)b * r.nv, r.nv, seed, b, "live-in");
			check_set(lv_out(&lv, b), r.out + (size_t)b * r.nv, r.nv, seed, b, "live-out");
			live_in += lv_in(&lv, b).n, live_out += lv_out(&lv, b).n;
			/* An SGPR live into a lane-resume target only: not live out. */
			int t = f.blocks.data[b].succ[2];
			for (int v = 0; t >= 0 && v < r.nv; v++)
				lanes_only += r.in[(size_t)t * r.nv + v] && !r.out[(size_t)b * r.nv + v];
			const MBlock *bl = &f.blocks.data[b];
			for (int i = bl->first; i < bl->last; i++) {
				RaDemand d = ref_demand(&f, &r, b, i, row);
				cr_assert(d.s == lv.demand[i].s && d.v == lv.demand[i].v && d.a == lv.demand[i].a,
					  "seed %u insn %d: demand s%d v%d a%d, reference s%d v%d a%d", seed, i,
					  lv.demand[i].s, lv.demand[i].v, lv.demand[i].a, d.s, d.v, d.a);
				mx.s = TA_MAX(mx.s, d.s), mx.v = TA_MAX(mx.v, d.v), mx.a = TA_MAX(mx.a, d.a);
			}
		}
		cr_assert(mx.s == lv.max.s && mx.v == lv.max.v && mx.a == lv.max.a, "seed %u: max demand", seed);
		blocks += r.nb;
		free(row);
		free(r.in), free(r.out);
		liveness_free(&lv);
		mir_free(&f);
	}
	/* The graphs must be interesting, or the comparison proves little. */
	cr_assert_gt(live_in, 20 * blocks / 10, "%ld live-in entries over %ld blocks", live_in, blocks);
	cr_assert_gt(live_out, 20 * blocks / 10, "%ld live-out entries over %ld blocks", live_out, blocks);
	cr_assert_gt(lanes_only, 100, "%ld SGPRs stopped at lane-resume edges", lanes_only);
}

/* An empty function and one block without vregs. */
Test(liveness, empty)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	Liveness lv;
	cr_assert_eq(liveness_compute(&f, &lv), 0);
	liveness_free(&lv);
	mir_block(&f);
	mir_emit(&f, ISA_S_ENDPGM, 0);
	cr_assert_eq(liveness_compute(&f, &lv), 0);
	cr_expect_eq(lv_in(&lv, 0).n, 0);
	cr_expect_eq(lv_out(&lv, 0).n, 0);
	liveness_free(&lv);
	mir_free(&f);
}
