/* lower_rf.c — register-resident fragments (part of the gemm lowering). */
#include "lower_mma_impl.h"

/* ---- register-resident fragments ---------------------------------------
 *
 * A 2-D f32 fragment that is the accumulator of an mma gemm lives in
 * registers, in the MMA C layout, when every other use is layout-agnostic:
 * clear/fill, whole-buffer copies to or from a non-fragment, and parallel
 * loops over exactly its shape that touch it only at [i, j] with the loop
 * variables.  Thread (warp w, lane l; g = l/4, t = l%4) holds slots
 * e = (s * NB + nb) * 4 + q for strips s < S = tiles / warps:
 *   tile = w + warps * s, row = (tile / ntn) * 16 + g + 8 * (q >> 1),
 *   col = (tile % ntn) * 8 * NB + 8 * nb + 2t + (q & 1).
 * Nothing else can see these elements, so they need no barriers. */

typedef struct {
	uint8_t *bad, *acc;
	const int32_t *par_vars; /* the enclosing parallel's two vars, or NULL */
	const Stmt *par;
	/* MMA-row fragments: rbad (ineligible), rlink (seen with a register
	 * fragment this pass: a reduction or a read in its parallel), the
	 * tile shape they all share (key), the current parallel's row
	 * fragments and 2-D fragments, and whether it does anything else */
	uint8_t *rbad, *rlink;
	int64_t keyR, keyC;
	bool key_off, changed, judge;
	int32_t prow[16], ptile[16];
	int nprow, nptile;
	bool pother;
	/* for the LDS-limit message: why each fragment became ineligible (the
	 * first reason, where: L.frag_why), gemm accumulators (gdst) and row
	 * fragments that go with one (rwith: reduced from one or read over one) */
	const char **why;
	SrcPos *wpos;
	uint8_t *gdst, *rwith;
} RfScan;


/* A candidate MMA-row fragment: an f32 fragment of rank 1. */
static bool rr_cand(L *c, int32_t b)
{
	return is_frag(c, b) && BUF(b)->rank == 1 && BUF(b)->dtype == DT_F32;
}

static void rr_bad(RfScan *r, int32_t b, SrcPos pos, const char *why)
{
	if (!r->rbad[b])
		r->rbad[b] = 1, r->changed = true, r->why[b] = why, r->wpos[b] = pos;
}

static void rf_bad(RfScan *r, int32_t b, SrcPos pos, const char *why)
{
	if (!r->bad[b])
		r->bad[b] = 1, r->changed = true, r->why[b] = why, r->wpos[b] = pos;
}

/* Row fragment b goes with a tile fragment of shape R x C (one key for all). */
static void rr_link(L *c, RfScan *r, int32_t b, int64_t R, int64_t C)
{
	if (!r->keyR)
		r->keyR = R, r->keyC = C;
	if (R != r->keyR || (C != r->keyC && !rr_rows_alike(c, R, C, r->keyC)))
		r->key_off = true;
	r->rlink[b] = 1;
}

/* Slots per lane a register fragment of shape sh may take.  128 fit the
 * VGPRs next to the operands and addresses; on gfx90a/gfx942 (the wave64
 * MFMA shapes) a fragment of 129..256 slots lives in the AGPRs instead:
 * the MFMA reads and writes it there (acc_cd) and the AGPR file holds 256
 * per lane beside the 256 VGPRs.  Smaller fragments stay in VGPRs, where
 * element code needs no v_accvgpr_read/write. */
static int rf_max_slots(L *c, int sh)
{
	(void)c;
	return sh > MMA_M16N8K16 && simt_mma[sh].wave == 64 ? 256 : 128;
}

/* An element access F[args] is fine only as F[i, j] of a parallel over F's shape. */
static void rf_access(L *c, RfScan *r, int32_t b, int32_t nargs, const int32_t *args, bool store, SrcPos pos)
{
	if (!is_frag(c, b))
		return;
	const Stmt *p = r->par;
	if (rr_cand(c, b)) { /* D[i] of a parallel over (R) or (R, C); stored only in the former */
		int64_t ext;
		bool ok = p && nargs == 1 && (p->nvars == 1 || p->nvars == 2) && EX(args[0])->kind == E_VAR &&
			  EX(args[0])->var == p->vars[0] && ir_const_int(c->m, p->extents[0], &ext) &&
			  ext == bdim(c, BUF(b), 0) && !(store && p->nvars == 2) && r->nprow < 16;
		if (ok)
			r->prow[r->nprow++] = b;
		else
			rr_bad(r, b, pos, "an element is accessed other than as D[i] of a parallel loop over its rows "
			       "(stored only in a parallel (i))");
		return;
	} else if (p && p->nvars == 1) {
		r->pother = true;
	}
	bool ok = p && p->nvars == 2 && nargs == 2 && BUF(b)->rank == 2;
	for (int d = 0; ok && d < 2; d++) {
		const Expr *x = EX(args[d]);
		int64_t ext;
		ok = x->kind == E_VAR && x->var == p->vars[d] && ir_const_int(c->m, p->extents[d], &ext) &&
		     ext == bdim(c, BUF(b), d);
	}
	if (!ok)
		rf_bad(r, b, pos, "an element is accessed other than as F[i, j] of a parallel loop over its shape, "
		       "which needs another thread's element of the MMA layout");
	else if (r->nptile < 16)
		r->ptile[r->nptile++] = b;
}

static void rf_expr(L *c, RfScan *r, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD)
		rf_access(c, r, e->buf, e->nargs, e->args, false, e->pos);
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		rf_expr(c, r, e->a);
		if (e->kind == E_BINARY)
			rf_expr(c, r, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			rf_expr(c, r, e->args[i]);
}

static void rf_region_exprs(L *c, RfScan *r, const Region *g)
{
	for (int i = 0; i < g->nidx; i++)
		rf_expr(c, r, g->idx[i]);
}

static void rf_block(L *c, RfScan *r, const Block *b);

/* Any other statement on a row fragment makes it ineligible. */
static void rr_bad_region(L *c, RfScan *r, int32_t b, SrcPos pos, const char *why)
{
	if (b >= 0 && rr_cand(c, b))
		rr_bad(r, b, pos, why);
}

static void rf_stmt(L *c, RfScan *r, int32_t id)
{
	const Stmt *s = ST(id);
	rf_expr(c, r, s->value);
	rf_region_exprs(c, r, &s->src);
	rf_region_exprs(c, r, &s->dst);
	if (r->par && r->par->nvars == 1 && s->kind != S_STORE && s->kind != S_LET && s->kind != S_FOR &&
	    s->kind != S_IF)
		r->pother = true; /* a row parallel holds only element code */
	switch ((StmtKind)s->kind) {
	case S_STORE:
		if (r->par && r->par->nvars == 1 && !rr_cand(c, s->dst.buf))
			r->pother = true;
		rf_access(c, r, s->dst.buf, s->dst.nidx, s->dst.idx, true, s->pos);
		break;
	case S_COPY:
		if (rr_cand(c, s->src.buf) || rr_cand(c, s->dst.buf)) {
			/* whole copies between row fragments, both in registers or neither */
			bool ok = rr_cand(c, s->src.buf) && rr_cand(c, s->dst.buf) && !s->src.nidx && !s->dst.nidx &&
				  bdim(c, BUF(s->src.buf), 0) == bdim(c, BUF(s->dst.buf), 0) && !r->rbad[s->src.buf] &&
				  !r->rbad[s->dst.buf];
			if (!ok) {
				const char *w = "a copy other than of a whole row fragment to or from another of its length "
				                "(both in registers or neither)";
				rr_bad_region(c, r, s->src.buf, s->pos, w);
				rr_bad_region(c, r, s->dst.buf, s->pos, w);
			}
			break;
		}
		/* whole fragment <-> a non-fragment only, as rows and columns */
		const char *cw = "a copy with another fragment or of a region that is not its rows and columns";
		if (is_frag(c, s->src.buf) && (is_frag(c, s->dst.buf) || !lower_window_ok(c, s, &s->src, &s->dst)))
			rf_bad(r, s->src.buf, s->pos, cw);
		if (is_frag(c, s->dst.buf) && (is_frag(c, s->src.buf) || !lower_window_ok(c, s, &s->dst, &s->src)))
			rf_bad(r, s->dst.buf, s->pos, cw);
		/* a local destination needs every element in every thread */
		if (is_frag(c, s->src.buf) && BUF(s->dst.buf)->scope == SCOPE_LOCAL)
			rf_bad(r, s->src.buf, s->pos, "a copy to a local buffer, which needs every element in every thread");
		break;
	case S_GEMM: {
		const char *ow = "a gemm reads it (an operand, not the accumulator)";
		if (is_frag(c, s->src.buf))
			rf_bad(r, s->src.buf, s->pos, ow);
		if (is_frag(c, s->src2.buf))
			rf_bad(r, s->src2.buf, s->pos, ow);
		rr_bad_region(c, r, s->src.buf, s->pos, ow);
		rr_bad_region(c, r, s->src2.buf, s->pos, ow);
		rr_bad_region(c, r, s->dst.buf, s->pos, "a gemm writes it");
		if (is_frag(c, s->dst.buf))
			r->gdst[s->dst.buf] = 1;
		int sh = gemm_shape(c, s);
		if (sh >= 0) {
			const Buffer *C = BUF(s->dst.buf);
			int nb = gemm_nb(c, bdim(c, C, 0), bdim(c, C, 1));
			int64_t ntiles = (bdim(c, C, 0) / 16) * (bdim(c, C, 1) / (8 * nb));
			int64_t slots = ntiles / (c->nthreads / 32) * nb * 4;
			int W = c->nthreads / 32;
			if (!warp_shape(sh)) {
				AmdTiling t = amd_tiling(c, sh, bdim(c, C, 0), bdim(c, C, 1));
				ntiles = t.ntiles;
				W = t.W;
				slots = ntiles / W * t.NB * simt_mma[sh].nc;
			}
			/* f32 with f16/bf16/fp8 inputs, i32 with i8 (AMD matrix cores) */
			bool i8 = sh == MMA_MFMA16_I8 || sh == MMA_MFMA16X32_I8 || sh == MMA_WMMA16_I8 ||
				  sh == MMA_M16N8K32_I8;
			if (ntiles % W)
				rf_bad(r, s->dst.buf, s->pos, "its MMA tiles do not spread evenly over the block's warps "
				       "(e.g. fewer 16 x 16 tiles than warps/waves), so no register layout");
			else if (slots > rf_max_slots(c, sh))
				rf_bad(r, s->dst.buf, s->pos, "its MMA layout would take more registers per thread than "
				       "the limit (128, or 256 in AGPRs on gfx90a/gfx942)");
			else if (C->dtype != (i8 ? DT_I32 : DT_F32))
				rf_bad(r, s->dst.buf, s->pos, "an accumulator in registers is f32 (i32 with i8 inputs)");
			else
				r->acc[s->dst.buf] = 1;
		} else if (is_frag(c, s->dst.buf)) {
			rf_bad(r, s->dst.buf, s->pos, "the gemm has no MMA shape for its types, shape and threads here "
			       "(the scalar path)");
		}
		break;
	}
	case S_CLEAR:
	case S_FILL:
		if (s->dst.nidx)
			rr_bad_region(c, r, s->dst.buf, s->pos, "a partial clear or fill");
		break;
	case S_REDUCE: {
		/* reduce(F, D, dim=1): F in registers and D an MMA-row fragment */
		int32_t F = s->src.buf, D = s->dst.buf;
		bool whole = is_frag(c, F) && BUF(F)->rank == 2 && BUF(F)->dtype == DT_F32 && s->dim == 1 &&
			     !s->src.nidx && !s->dst.nidx && bdim(c, BUF(F), 0) == bdim(c, BUF(D), 0);
		bool fok = whole && !r->bad[F] && !(r->judge && !r->acc[F]);
		bool ok = fok && rr_cand(c, D) && !r->rbad[D];
		int spr;
		if (is_frag(c, F) && r->gdst[F] && rr_cand(c, D))
			r->rwith[D] = 1;
		if (ok) {
			rr_link(c, r, D, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1));
		} else if (fok && BUF(D)->dtype == DT_F32 && BUF(D)->scope != SCOPE_LOCAL &&
			   rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr) > 0) {
			/* F keeps its registers; D (in shared memory: another accumulator
			 * shape owns the row layout) gets the rows (reduce_rf_mem) */
			rr_bad_region(c, r, D, s->pos, "it is not an f32 row fragment whose other uses keep it in registers");
		} else {
			const char *w = whole ? "the accumulator it is reduced from stays in shared memory"
			                      : "a reduction other than reduce_*(F, D, dim=1) of a whole register "
			                        "accumulator into a row fragment";
			if (is_frag(c, F))
				rf_bad(r, F, s->pos, fok ? "a row reduction from it needs each row in one warp/wave, which "
				                           "its MMA layout does not give"
				                         : "a reduction other than reduce_*(F, D, dim=1) of the whole tile "
				                           "into an f32 row fragment");
			rr_bad_region(c, r, F, s->pos, w);
			rr_bad_region(c, r, D, s->pos, w);
		}
		break;
	}
	case S_ATOMIC_ADD:
		/* tile form from a whole register fragment into a global tensor:
		 * copy_rf's stores become atomics (lower_atomic) */
		if (s->value < 0 && s->sub == ATOMIC_ADD && is_frag(c, s->src.buf) && !is_frag(c, s->dst.buf) &&
		    BUF(s->dst.buf)->scope == SCOPE_GLOBAL && lower_window_ok(c, s, &s->src, &s->dst)) {
			rr_bad_region(c, r, s->src.buf, s->pos, "an atomic uses it");
			rr_bad_region(c, r, s->dst.buf, s->pos, "an atomic uses it");
			break;
		}
		/* fall through */
	case S_CUMSUM: {
		const char *w = "a cumsum or atomic uses it";
		if (is_frag(c, s->src.buf))
			rf_bad(r, s->src.buf, s->pos, w);
		if (is_frag(c, s->dst.buf))
			rf_bad(r, s->dst.buf, s->pos, w);
		rr_bad_region(c, r, s->src.buf, s->pos, w);
		rr_bad_region(c, r, s->dst.buf, s->pos, w);
		break;
	}
	case S_FOR:
		rf_expr(c, r, s->lo);
		rf_expr(c, r, s->hi);
		rf_block(c, r, &s->body);
		break;
	case S_IF:
		rf_block(c, r, &s->body);
		rf_block(c, r, &s->els);
		break;
	case S_PARALLEL: {
		if (r->par) { /* nested: not for row fragments */
			r->pother = true;
			rf_block(c, r, &s->body);
			break;
		}
		r->par = s;
		r->nprow = r->nptile = 0;
		r->pother = false;
		rf_block(c, r, &s->body);
		/* Row fragments in a parallel over (R, C) need a register fragment
		 * there (its layout gives the rows); in a parallel over (R) the body
		 * may touch only row fragments, all in registers or none. */
		int32_t F = -1;
		bool anybad = false;
		for (int i = 0; i < r->nptile; i++)
			if (r->acc[r->ptile[i]] && !r->bad[r->ptile[i]] && BUF(r->ptile[i])->dtype == DT_F32)
				F = r->ptile[i];
		for (int i = 0; i < r->nprow; i++)
			anybad |= r->rbad[r->prow[i]];
		for (int i = 0; i < r->nprow; i++) {
			int32_t D = r->prow[i];
			for (int k = 0; k < r->nptile; k++)
				r->rwith[D] |= r->gdst[r->ptile[k]];
			if (s->nvars == 2 && F >= 0)
				rr_link(c, r, D, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1));
			else if (s->nvars == 2 ? r->judge : (r->pother || anybad))
				rr_bad(r, D, s->pos, s->nvars == 2 ? "it is read in a parallel loop with no accumulator in registers"
				                                   : "a parallel (i) over it touches more than row fragments "
				                                     "in registers");
		}
		r->par = NULL;
		break;
	}
	default: break;
	}
}

static void rf_block(L *c, RfScan *r, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		rf_stmt(c, r, b->ids[i]);
}

/* Row slots per thread of the MMA layout of an R x C f32 register
 * fragment (0: the layout spreads a row's column tiles over several
 * warps, which the register row fragments do not handle), and the strips
 * per distinct tile row (ntn when a warp holds all of a row's column tiles,
 * 1 when each strip is another tile row).  follow: the layout the fragment
 * takes when it follows MMA-row fragments (amd_tiling_as), which
 * rf_analyze asks for before it knows whether any will exist. */
static int rr_rows_as(L *c, int64_t R, int64_t C, bool follow, int *strips_per_row)
{
	int sh = target_shape(c, C, DT_F16), W, ntn, S, rps;
	/* Only whole 16x16 tiles spread evenly over the warps have a layout;
	 * anything else (a fuzzed f32[4, 2], a block of 16 threads) has none. */
	if (sh < 0 || R <= 0 || C <= 0 || R % 16 || C % 16 || c->nthreads < simt_mma[sh].wave)
		return 0;
	if (warp_shape(sh)) {
		int NB = gemm_nb(c, R, C);
		W = c->nthreads / 32;
		ntn = (int)(C / (8 * NB));
		S = (int)((R / 16) * ntn / W);
		rps = 2;
	} else {
		AmdTiling t = follow ? amd_tiling_as(c, sh, R, C, true) : amd_tiling(c, sh, R, C);
		W = t.W;
		ntn = t.ntn;
		S = (int)(t.ntiles / W);
		rps = simt_mma[sh].nc;
	}
	if (W <= 0 || ntn <= 0 || (R / 16) * ntn % W || (ntn > 1 && W > 1))
		return 0;
	*strips_per_row = ntn;
	return S / ntn * rps;
}

/* The layout the fragment has now. */
int rr_rows(L *c, int64_t R, int64_t C, int *strips_per_row)
{
	return rr_rows_as(c, R, C, false, strips_per_row);
}

/* Register fragments R x C1 and R x C2 hold the same rows in every thread,
 * so row fragments reduced from one serve the other (attention's S and O
 * at D = 128).  PTX: layouts whose strips each span a whole row (one
 * column tile).  AMD: one MFMA/WMMA shape whose row layout exists for
 * both (laid out to follow the rows): row slot k of a lane is then row
 * 16 (wave + W (k / nc)) + h hrow + (k % nc) qrow whatever the width, as
 * ntn is 1 or the block is one wave; only the slots per row differ. */
bool rr_rows_alike(L *c, int64_t R, int64_t C1, int64_t C2)
{
	int s1 = 0, s2 = 0;
	if (C1 == C2)
		return true;
	int sh1 = target_shape(c, C1, DT_F16), sh2 = target_shape(c, C2, DT_F16);
	if (sh1 < 0 || sh2 < 0)
		return false;
	if (!warp_shape(sh1) || !warp_shape(sh2))
		return sh1 == sh2 && rr_rows_as(c, R, C1, true, &s1) > 0 && rr_rows_as(c, R, C2, true, &s2) > 0;
	return rr_rows(c, R, C1, &s1) > 0 && rr_rows(c, R, C2, &s2) > 0 && s1 == 1 && s2 == 1;
}

/* Marks the eligible fragments (bl[].rf = 1 and bl[].rr = 1 as flags;
 * registers come later).  Register fragments and row fragments depend on
 * each other (a reduction needs both), so the scan repeats until nothing
 * more is found ineligible; a pass is judged only once every gemm has
 * been seen (judge). */
void rf_analyze(L *c)
{
	RfScan r = {.bad = lower_kb_bytes(c), .acc = lower_kb_bytes(c), .rbad = lower_kb_bytes(c), .rlink = lower_kb_bytes(c),
		    .gdst = lower_kb_bytes(c), .rwith = lower_kb_bytes(c), .why = c->frag_why, .wpos = c->frag_wpos};
	if (!r.bad || !r.acc || !r.rbad || !r.rlink || !r.gdst || !r.rwith) {
		c->failed = true;
		goto out;
	}
	for (int pass = 0; pass < 64; pass++) {
		r.changed = false;
		r.judge = pass > 0;
		r.keyR = r.keyC = 0;
		r.key_off = false;
		FOR_KBUF(c, b)
			r.rlink[b] = 0;
		rf_block(c, &r, &c->k->body);
		int spr;
		bool layout = r.keyR && !r.key_off && rr_rows_as(c, r.keyR, r.keyC, true, &spr) > 0;
		const char *w = !r.keyR || layout ? "it goes with no accumulator in registers"
		              : r.key_off ? "the accumulators it goes with hold their rows in other threads (other row "
		                            "counts or MMA shapes)"
		                          : "the MMA layout of the accumulator it goes with spreads a row over several "
		                            "warps/waves";
		FOR_KBUF(c, b)
			if (r.judge && rr_cand(c, (int32_t)b) && !r.rbad[b] && (!layout || !r.rlink[b]))
				rr_bad(&r, (int32_t)b, BUF(b)->pos, w);
		if (!r.changed && pass > 0)
			break;
		if (pass == 63) /* not settled: nothing in registers */
			FOR_KBUF(c, b) {
				r.bad[b] = r.rbad[b] = 1;
				r.why[b] = "the register layout analysis did not settle", r.wpos[b] = BUF(b)->pos;
			}
	}
	FOR_KBUF(c, b) {
		if (r.acc[b] && !r.bad[b] && BUF(b)->rank == 2 && (BUF(b)->dtype == DT_F32 || BUF(b)->dtype == DT_I32))
			c->bl[b].rf = 1;
		if (rr_cand(c, (int32_t)b) && !r.rbad[b])
			c->bl[b].rr = 1;
	}
	/* the row layout's tile, only when some row fragment uses it: a
	 * parallel over a fragment of that shape then tracks row slots, which
	 * needs rr_rows > 0 (two accumulator shapes leave the rows in shared) */
	bool any_rr = false;
	FOR_KBUF(c, b)
		any_rr |= c->bl[b].rr == 1;
	FOR_KBUF(c, b)
		if (any_rr && c->rr_tile < 0 && c->bl[b].rf == 1 && BUF(b)->dtype == DT_F32 && bdim(c, BUF(b), 0) == r.keyR &&
		    bdim(c, BUF(b), 1) == r.keyC)
			c->rr_tile = (int32_t)b;
	int spr;
	if (c->rr_tile >= 0 && rr_rows(c, r.keyR, r.keyC, &spr) <= 0)
		c->rr_tile = -1;
	if (c->rr_tile < 0) /* no row layout: the row fragments live in shared memory */
		FOR_KBUF(c, b) {
			if (c->bl[b].rr == 1 && !r.why[b])
				r.why[b] = "no accumulator in registers gives the row layout", r.wpos[b] = BUF(b)->pos;
			c->bl[b].rr = -1;
		}
	/* keep the reasons of accumulators and of the rows that go with them;
	 * vf_analyze gives the others' */
	FOR_KBUF(c, b)
		if (!r.gdst[b] && !(rr_cand(c, (int32_t)b) && r.rwith[b]))
			r.why[b] = NULL;
out:
	free(r.bad);
	free(r.acc);
	free(r.rbad);
	free(r.rlink);
	free(r.gdst);
	free(r.rwith);
}

/* Per strip s of register fragment b: the row of q = 0 (rb) and the
 * column of nb = 0, q = 0 (cb) for this thread.  Slot e = (s * NB + nb) * 4
 * + q is then at (rb[s] + 8 * (q >> 1), cb[s] + 8 * nb + (q & 1)). */
int rf_bases(L *c, int32_t b, int32_t *rb, int32_t *cb)
{
	const BufLoc *bl = &c->bl[b];
	if (!warp_shape(bl->rf_shape)) { /* rb: row of q = 0, cb: column of nb = 0 */
		const MmaInfo *mi = &simt_mma[bl->rf_shape];
		int S = bl->rf_n / (bl->rf_nb * mi->nc), W = c->nthreads / mi->wave;
		AmdLane ln = amd_lane(c, mi->wave);
		int32_t hr = bin(c, SI_MUL, DT_I32, ln.h, i32c(c, mi->hrow));
		for (int si = 0; si < S; si++) {
			int32_t tile = bin(c, SI_ADD, DT_I32, ln.wave, i32c(c, W * si));
			int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn));
			int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn));
			/* swapped: the lane's row is i, its columns start at h * hrow */
			rb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)), bl->rf_swap ? ln.i : hr);
			cb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 16 * bl->rf_nb)),
				     bl->rf_swap ? hr : ln.i);
		}
		return S;
	}
	int NB = bl->rf_nb, W = c->nthreads / 32, S = bl->rf_n / (NB * 4);
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t g = bin(c, SI_DIV, DT_U32, lane, i32c(c, 4));
	int32_t t2 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, 2));
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, warp, i32c(c, W * si));
		int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn));
		int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn));
		rb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)), g);
		cb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 8 * NB)), t2);
	}
	return S;
}

void rf_rowcol(L *c, int32_t b, const int32_t *rb, const int32_t *cb, int e, int32_t *row, int32_t *col)
{
	int NB = c->bl[b].rf_nb;
	if (!warp_shape(c->bl[b].rf_shape)) {
		const MmaInfo *mi = &simt_mma[c->bl[b].rf_shape];
		int si = e / (NB * mi->nc), nb = (e / mi->nc) % NB, q = e % mi->nc;
		if (c->bl[b].rf_swap) {
			int dc = 16 * nb + q * mi->qrow;
			*row = rb[si];
			*col = dc ? bin(c, SI_ADD, DT_I32, cb[si], i32c(c, dc)) : cb[si];
			return;
		}
		*row = q ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, q * mi->qrow)) : rb[si];
		*col = nb ? bin(c, SI_ADD, DT_I32, cb[si], i32c(c, 16 * nb)) : cb[si];
		return;
	}
	int si = e / (NB * 4), nb = (e / 4) % NB, q = e % 4;
	*row = q >> 1 ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, 8)) : rb[si];
	*col = 8 * nb + (q & 1) ? bin(c, SI_ADD, DT_I32, cb[si], i32c(c, 8 * nb + (q & 1))) : cb[si];
}

/* The register fragment that a parallel body touches, or -1. */
static int32_t rf_find_expr(L *c, int32_t id)
{
	if (id < 0)
		return -1;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD && c->bl[e->buf].rf >= 0)
		return e->buf;
	int32_t r = -1;
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		r = rf_find_expr(c, e->a);
		if (r < 0 && e->kind == E_BINARY)
			r = rf_find_expr(c, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs && r < 0; i++)
			r = rf_find_expr(c, e->args[i]);
	return r;
}

int32_t rf_find_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		int32_t r = rf_find_expr(c, s->value);
		if (r < 0 && s->kind == S_STORE && c->bl[s->dst.buf].rf >= 0)
			r = s->dst.buf;
		for (int k = 0; r < 0 && k < s->dst.nidx; k++)
			r = rf_find_expr(c, s->dst.idx[k]);
		if (r < 0 && s->kind == S_FOR) {
			r = rf_find_expr(c, s->lo);
			if (r < 0)
				r = rf_find_expr(c, s->hi);
		}
		if (r < 0 && (s->kind == S_FOR || s->kind == S_IF))
			r = rf_find_block(c, &s->body);
		if (r < 0 && s->kind == S_IF)
			r = rf_find_block(c, &s->els);
		if (r >= 0)
			return r;
	}
	return -1;
}

/* Registers for the fragments rf_analyze accepted (after place_bufs). */
void rf_place(L *c, int32_t b)
{
	const Buffer *buf = BUF(b);
	BufLoc *bl = &c->bl[b];
	int64_t M = bdim(c, buf, 0), N = bdim(c, buf, 1);
	/* f32 accumulators have f16/bf16 (or fp8, laid out alike) inputs, i32 ones i8 */
	DType ft = (DType)buf->dtype;
	int sh = target_shape(c, N, ft == DT_I32 ? DT_I8 : DT_F16);
	bl->rf_shape = (uint8_t)sh;
	bl->rf_dtype = (uint8_t)ft;
	if (!warp_shape(sh)) {
		AmdTiling t = amd_tiling(c, sh, M, N);
		bl->rf_nb = (int16_t)t.NB;
		bl->rf_ntn = (int16_t)t.ntn;
		bl->rf_n = (int32_t)(t.ntiles / t.W * t.NB * simt_mma[sh].nc);
		bl->rf = (int32_t)c->f->regs.len;
		for (int i = 0; i < bl->rf_n; i++)
			reg(c, simt_vt(ft));
		bl->rf_agpr = bl->rf_n > 128;
		/* swz_analyze left rf_swap set when only copies, clear/fill and
		 * k-block gemms touch the accumulator */
		bl->rf_swap = bl->rf_swap && simt_mma[sh].wave == 64 && c->rr_tile < 0;
		if (bl->rf_agpr && (vec_push(&c->f->acc, bl->rf) || vec_push(&c->f->acc, bl->rf_n)))
			c->failed = true;
		return;
	}
	int NB = gemm_nb(c, M, N);
	bl->rf_nb = (int16_t)NB;
	bl->rf_ntn = (int16_t)(N / (8 * NB));
	int64_t ntiles = (M / 16) * bl->rf_ntn;
	bl->rf_n = (int32_t)(ntiles / (c->nthreads / 32) * NB * 4);
	bl->rf = (int32_t)c->f->regs.len;
	for (int i = 0; i < bl->rf_n; i++)
		reg(c, simt_vt(ft));
}

/* Slot e of register fragment b as a value: the register itself, or for
 * an AGPR fragment a copy (only moves may name those registers). */
int32_t rf_get(L *c, int32_t b, int e)
{
	const BufLoc *bl = &c->bl[b];
	if (!bl->rf_agpr)
		return bl->rf + e;
	int32_t r = reg(c, simt_vt((DType)bl->rf_dtype));
	emit(c, I(SI_MOV, (DType)bl->rf_dtype, r, bl->rf + e, -1));
	return r;
}
