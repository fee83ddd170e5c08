/* lower_data.c — block-level statements on buffer data: element stores,
 * copy (16-byte vectors when aligned), clear/fill, atomic_add, reduce (lane
 * groups and butterfly shuffles) and cumsum.  Register fragments go to
 * lower_mma.c (copy_rf) and lower_vec.c (copy_vf, reduce_vf). */
#include <math.h>

#include "lower_impl.h"

/* Block-level element stores to shared/global memory are done by thread 0
 * (all threads would race on read-modify-write code). */
static int32_t single_thread_guard(L *c, int32_t bufid)
{
	if (c->par || BUF(bufid)->scope == SCOPE_LOCAL)
		return -1;
	return setp(c, CMP_EQ, DT_I32, c->tid, i32c(c, 0));
}

void lower_store(L *c, const Stmt *s)
{
	const Buffer *b = BUF(s->dst.buf);
	if (c->bl[s->dst.buf].vf >= 0) {
		int32_t v = expr_as(c, s->value, DT_F32), r = vf_reg(c, s->dst.buf); /* the value may read r lazily */
		vf_def(c, r);
		emit(c, I(SI_MOV, DT_F32, r, v, -1));
		return;
	}
	if (c->bl[s->dst.buf].rr >= 0) {
		emit(c, I(SI_MOV, DT_F32, c->bl[s->dst.buf].rr + c->rr_slot, expr_as(c, s->value, DT_F32), -1));
		return;
	}
	if (c->bl[s->dst.buf].rf >= 0) {
		DType ft = (DType)c->bl[s->dst.buf].rf_dtype;
		emit(c, I(SI_MOV, ft, c->bl[s->dst.buf].rf + c->rf_slot, expr_as(c, s->value, ft), -1));
		return;
	}
	int32_t idx[IR_MAX_RANK];
	for (int i = 0; i < s->dst.nidx; i++)
		idx[i] = expr_as(c, s->dst.idx[i], DT_I32);
	int32_t v = expr_as(c, s->value, (DType)b->dtype);
	lower_store_elem(c, s->dst.buf, idx, v, single_thread_guard(c, s->dst.buf));
}

/* Elements per 16-byte vector for a same-dtype copy that can move whole
 * vectors: the tile's rows and every on-chip side's row pitch and constant
 * column offset are multiples of it.  0 if not. */
static int copy_vec_width(L *c, const Stmt *s, const int64_t *ext, int rank)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	if (a->dtype != b->dtype || a->scope == SCOPE_LOCAL || b->scope == SCOPE_LOCAL || dtype_is_packed((DType)a->dtype))
		return 0;
	int es = dtype_bytes((DType)a->dtype), V = 16 / es;
	if (es > 8 || ext[rank - 1] % V)
		return 0;
	const Region *rg[2] = {&s->src, &s->dst};
	for (int k = 0; k < 2; k++) {
		const Buffer *x = BUF(rg[k]->buf);
		int last = x->rank - 1;
		if (rg[k]->tdim[last] != rank - 1) /* the tile's rows must be contiguous on both sides */
			return 0;
		if (x->scope == SCOPE_GLOBAL)
			continue;
		int64_t off = 0;
		if (bdim(c, x, last) % V || (c->bl[rg[k]->buf].smem % 16))
			return 0;
		if (rg[k]->nidx && (!ir_const_int(c->m, rg[k]->idx[last], &off) || off % V))
			return 0;
	}
	return V;
}

/* Integer expression e is a multiple of V (a power of two, so wrapping
 * keeps it) whatever its variables hold. */
static bool expr_multiple(L *c, int32_t e, int64_t V)
{
	int64_t v;
	if (ir_const_int(c->m, e, &v))
		return v % V == 0;
	const Expr *x = EX(e);
	if (x->kind != E_BINARY)
		return false;
	if (x->op == OP_MUL)
		return expr_multiple(c, x->a, V) || expr_multiple(c, x->b, V);
	if (x->op == OP_ADD || x->op == OP_SUB)
		return expr_multiple(c, x->a, V) && expr_multiple(c, x->b, V);
	return false;
}

/* pred: the global side of a copy allows 16-byte vectors at run time
 * (16-byte aligned base, row length and column offset multiples of V;
 * the offset is not tested when its expression is a multiple of V). */
static int32_t copy_vec_aligned(L *c, const Region *r, int V)
{
	const Buffer *g = BUF(r->buf);
	const BufLoc *bl = &c->bl[r->buf];
	int rank = g->rank;
	int32_t lo = reg(c, VT_I32);
	SInst cv = I(SI_CVT, DT_I32, lo, bl->base, -1);
	cv.type2 = DT_I64;
	emit(c, cv);
	int32_t ok = setp(c, CMP_EQ, DT_I32, bin(c, SI_AND, DT_I32, lo, i32c(c, 15)), i32c(c, 0));
	int32_t pitch = bin(c, SI_AND, DT_I32, bl->dim[rank - 1], i32c(c, V - 1));
	ok = bin(c, SI_AND, DT_BOOL, ok, setp(c, CMP_EQ, DT_I32, pitch, i32c(c, 0)));
	if (r->nidx && !expr_multiple(c, r->idx[rank - 1], V)) {
		int32_t off = bin(c, SI_AND, DT_I32, expr_as(c, r->idx[rank - 1], DT_I32), i32c(c, V - 1));
		ok = bin(c, SI_AND, DT_BOOL, ok, setp(c, CMP_EQ, DT_I32, off, i32c(c, 0)));
	}
	return ok;
}

/* 16 bytes at a into four i32 registers from v (v < 0: new ones; the
 * first is returned); lanes outside guard ok (if any) get zeros. */
static int32_t ld_vec4(L *c, Addr a, int32_t ok, int32_t v)
{
	if (v < 0) {
		v = (int32_t)c->f->regs.len;
		for (int k = 0; k < 4; k++)
			reg(c, VT_I32);
	}
	if (ok >= 0)
		for (int k = 0; k < 4; k++)
			emit(c, I(SI_MOVI, DT_I32, v + k, -1, -1));
	SInst in = I(SI_LD, DT_I32, v, a.addr, -1);
	in.sub = (uint8_t)a.sp;
	in.imm = a.off;
	in.vec = 4;
	in.guard = ok;
	emit(c, in);
	return v;
}

static void st_vec4(L *c, Addr a, int32_t v, int32_t ok)
{
	SInst in = I(SI_ST, DT_I32, -1, a.addr, v);
	in.sub = (uint8_t)a.sp;
	in.imm = a.off;
	in.vec = 4;
	in.guard = ok;
	emit(c, in);
}

static void tile_ext(const Stmt *s, int64_t *ext)
{
	for (int d = 0; d < s->trank; d++)
		ext[d] = s->text[d];
}

static bool copy_unrolls(L *c, int64_t total);
static int32_t copy_lane_fits(L *c, const Region *r, const int64_t *ext);
static void copy_vectors_unrolled(L *c, const Stmt *s, const int64_t *vext, int rank, int V, int64_t total);

/* Vector p (i32) of a global -> shared copy's tile as one cp.async (NVIDIA,
 * lower_async.c); out-of-bounds vectors are zero-filled. */
static void copy_vector_async(L *c, const Stmt *s, const int64_t *vext, int rank, int V, int32_t p)
{
	int32_t ti[IR_MAX_RANK], si[IR_MAX_RANK], di[IR_MAX_RANK];
	lower_decompose(c, p, vext, rank, ti);
	ti[rank - 1] = bin(c, SI_MUL, DT_I32, ti[rank - 1], i32c(c, V));
	lower_region_idx(c, &s->src, ti, si);
	lower_region_idx(c, &s->dst, ti, di);
	int32_t sok = lower_inbounds(c, s->src.buf, si);
	Addr sa = lower_elem_addr(c, s->src.buf, si), da = lower_elem_addr(c, s->dst.buf, di);
	int32_t src = sa.off ? bin(c, SI_ADD, DT_I64, sa.addr, movi(c, DT_I64, sa.off)) : sa.addr;
	SInst cp = I(SI_CP_ASYNC, DT_VOID, -1, da.addr, src);
	cp.imm = da.off;
	cp.c = sok;
	emit(c, cp);
	c->cp_pending = true;
}

/* The vector path: each step moves 16 bytes; a vector is entirely inside
 * or outside the global tensor because everything is V-aligned.  NVIDIA
 * global -> shared copies are cp.async, unrolled when their vectors split
 * evenly over the block (all of a thread's loads in flight together). */
static void copy_vectors(L *c, const Stmt *s, const int64_t *ext, int rank, int V)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	int64_t vext[IR_MAX_RANK], total = 1;
	for (int d = 0; d < rank; d++) {
		vext[d] = d == rank - 1 ? ext[d] / V : ext[d];
		total *= vext[d];
	}
	if (copy_unrolls(c, total)) {
		copy_vectors_unrolled(c, s, vext, rank, V, total);
		return;
	}
	bool async = lower_copy_async(c, s);
	if (async && total % c->nthreads == 0 && total / c->nthreads <= 16) {
		for (int64_t k = 0; k < total / c->nthreads; k++)
			copy_vector_async(c, s, vext, rank, V,
					  k ? bin(c, SI_ADD, DT_I32, c->tid, i32c(c, k * c->nthreads)) : c->tid);
		return;
	}
	DLoop l = lower_dloop_begin(c, total, true);
	if (async) {
		copy_vector_async(c, s, vext, rank, V, l.p);
		lower_dloop_end(c, &l);
		return;
	}
	int32_t ti[IR_MAX_RANK], si[IR_MAX_RANK], di[IR_MAX_RANK];
	lower_decompose(c, l.p, vext, rank, ti);
	ti[rank - 1] = bin(c, SI_MUL, DT_I32, ti[rank - 1], i32c(c, V));
	lower_region_idx(c, &s->src, ti, si);
	lower_region_idx(c, &s->dst, ti, di);
	int32_t sok = a->scope == SCOPE_GLOBAL ? lower_inbounds(c, s->src.buf, si) : -1;
	int32_t dok = b->scope == SCOPE_GLOBAL ? lower_inbounds(c, s->dst.buf, di) : -1;
	Addr sa = lower_elem_addr(c, s->src.buf, si);
	int32_t v = ld_vec4(c, sa, sok, -1);
	st_vec4(c, lower_elem_addr(c, s->dst.buf, di), v, dok);
	lower_dloop_end(c, &l);
}

/* AMD has no downstream optimiser (PTX gets these from ptxas): a vector
 * copy of at most COPY_UNROLL steps per thread is straight-line code.
 * The thread's tile index is decomposed once; a step adds a constant to it
 * (along dim 0 when the thread count is a multiple of the inner extents).
 * A global side is addressed as one uniform 64-bit base (the region origin:
 * SGPRs) plus the step's 32-bit lane offset, which depends only on the
 * thread, the step and the pitches, so it can be computed once outside the
 * loops around the copy (copy_lane_fits checks at run time that it fits
 * 31 bits).  The shared side goes through lower_elem_addr (the shared-tile
 * layout).  Loads of a group of steps are issued before its stores, so their
 * latencies overlap (partial vmcnt waits) instead of one round trip each. */
enum { COPY_UNROLL = 16, COPY_GROUP = 8 };

static bool copy_unrolls(L *c, int64_t total)
{
	return target_is_amd(c->t->id) && (total + c->nthreads - 1) / c->nthreads <= COPY_UNROLL;
}

/* pred: every lane offset of a tile of extents ext on global side r is
 * below 2^31 bytes (the 32-bit VGPR offset of the SGPR-base addressing);
 * -1 when the shape already says so. */
static int32_t copy_lane_fits(L *c, const Region *r, const int64_t *ext)
{
	const Buffer *g = BUF(r->buf);
	const BufLoc *bl = &c->bl[r->buf];
	int es = dtype_bytes((DType)g->dtype);
	/* known pitches (the shape specialised): decided here */
	int64_t slin = 0;
	bool known = true;
	for (int d = 0; d < g->rank && known; d++) {
		int64_t dim = bdim(c, g, d), e = r->tdim[d] >= 0 ? ext[r->tdim[d]] - 1 : 0;
		known = d == 0 || (dim > 0 && slin <= (INT64_C(1) << 40) / dim);
		slin = d ? slin * dim + e : e;
	}
	if (known && slin * es < (INT64_C(1) << 31) - 16)
		return -1;
	int32_t lin = -1;
	for (int d = 0; d < g->rank; d++) {
		int64_t e = r->tdim[d] >= 0 ? ext[r->tdim[d]] - 1 : 0;
		int32_t t = movi(c, DT_I64, e);
		lin = lin < 0 ? t : bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, lin, bl->dim64[d]), t);
	}
	/* (lin * es + 16) >> 31 == 0, in uniform (scalar) operations */
	int32_t bytes = bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)), movi(c, DT_I64, 16));
	return setp(c, CMP_EQ, DT_I64, bin(c, SI_SHR, DT_I64, bytes, movi(c, DT_I64, 31)), movi(c, DT_I64, 0));
}

/* One side of an unrolled copy: the region origin, evaluated once. */
typedef struct {
	const Region *r;
	int32_t o[IR_MAX_RANK]; /* origin index per buffer dim, -1 = 0 */
	int32_t gbase;          /* global: base + origin (i64, uniform) */
} CopySide;

static void side_begin(L *c, CopySide *cs, const Region *r)
{
	const Buffer *b = BUF(r->buf);
	const BufLoc *bl = &c->bl[r->buf];
	cs->r = r;
	for (int d = 0; d < b->rank; d++)
		cs->o[d] = r->nidx ? expr_as(c, r->idx[d], DT_I32) : -1;
	cs->gbase = -1;
	if (b->scope != SCOPE_GLOBAL)
		return;
	int32_t lin = -1;
	for (int d = 0; d < b->rank; d++) {
		int32_t o = cs->o[d] < 0 ? movi(c, DT_I64, 0) : cvt(c, DT_I64, DT_I32, cs->o[d]);
		lin = lin < 0 ? o : bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, lin, bl->dim64[d]), o);
	}
	int es = dtype_bytes((DType)b->dtype);
	cs->gbase = bin(c, SI_ADD, DT_I64, bl->base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)));
}

/* Buffer index of tile index ti on a side. */
static void side_idx(L *c, const CopySide *cs, const int32_t *ti, int32_t *idx)
{
	const Region *r = cs->r;
	for (int d = 0; d < BUF(r->buf)->rank; d++) {
		int32_t t = r->tdim[d] >= 0 ? ti[r->tdim[d]] : -1;
		idx[d] = cs->o[d] < 0 ? (t < 0 ? i32c(c, 0) : t) : t < 0 ? cs->o[d] : bin(c, SI_ADD, DT_I32, cs->o[d], t);
	}
}

/* Address of tile index ti. */
static Addr side_addr(L *c, const CopySide *cs, const int32_t *ti)
{
	const Region *r = cs->r;
	const Buffer *b = BUF(r->buf);
	const BufLoc *bl = &c->bl[r->buf];
	if (b->scope != SCOPE_GLOBAL) {
		int32_t idx[IR_MAX_RANK];
		side_idx(c, cs, ti, idx);
		return lower_elem_addr(c, r->buf, idx);
	}
	int32_t lane = -1;
	for (int d = 0; d < b->rank; d++) {
		int32_t t = r->tdim[d] >= 0 ? ti[r->tdim[d]] : i32c(c, 0);
		lane = lane < 0 ? t : bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, lane, bl->dim[d]), t);
	}
	lane = bin(c, SI_MUL, DT_I32, lane, i32c(c, dtype_bytes((DType)b->dtype)));
	return (Addr){SP_GLOBAL, bin(c, SI_ADD, DT_I64, cs->gbase, cvt(c, DT_I64, DT_U32, lane)), 0};
}

/* pred: tile index ti inside a global side (-1: not global). */
static int32_t side_ok(L *c, const CopySide *cs, const int32_t *ti)
{
	if (BUF(cs->r->buf)->scope != SCOPE_GLOBAL)
		return -1;
	int32_t idx[IR_MAX_RANK];
	side_idx(c, cs, ti, idx);
	return lower_inbounds(c, cs->r->buf, idx);
}

/* pred (uniform): the whole tile of extents ext lies inside global side
 * cs (-1: not global), so its steps need no bounds guard. */
static int32_t side_inside(L *c, const CopySide *cs, const int64_t *ext)
{
	const Region *r = cs->r;
	const Buffer *b = BUF(r->buf);
	if (b->scope != SCOPE_GLOBAL)
		return -1;
	const BufLoc *bl = &c->bl[r->buf];
	int32_t ok = -1;
	for (int d = 0; d < b->rank; d++) {
		int32_t o = cs->o[d] < 0 ? i32c(c, 0) : cs->o[d], in;
		if (r->tdim[d] >= 0) /* 0 <= o and o + ext <= dim */
			in = bin(c, SI_AND, DT_BOOL, setp(c, CMP_GE, DT_I32, o, i32c(c, 0)),
			         setp(c, CMP_LE, DT_I32, bin(c, SI_ADD, DT_I32, o, i32c(c, ext[r->tdim[d]])), bl->dim[d]));
		else
			in = setp(c, CMP_LT, DT_U32, o, bl->dim[d]);
		ok = ok < 0 ? in : bin(c, SI_AND, DT_BOOL, ok, in);
	}
	return ok;
}

/* The steps of one unrolled vector copy at the current values of the
 * variables its regions use. */
typedef struct {
	int64_t n;
	int32_t ti[COPY_UNROLL][IR_MAX_RANK];
	int32_t step[COPY_UNROLL]; /* the ragged last step's thread guard, or -1 */
	CopySide src, dst;
} CopyPlan;

static void copy_plan(L *c, CopyPlan *pl, const Stmt *s, const int64_t *vext, int rank, int V, int64_t total)
{
	const int64_t T = c->nthreads, n = (total + T - 1) / T;
	int64_t inner = 1;
	for (int d = 1; d < rank; d++)
		inner *= vext[d];
	bool dim0 = T % inner == 0;
	int32_t tq[IR_MAX_RANK];
	lower_decompose(c, c->tid, vext, rank, tq);
	pl->n = n;
	side_begin(c, &pl->src, &s->src);
	side_begin(c, &pl->dst, &s->dst);
	for (int64_t i = 0; i < n; i++) {
		int32_t *ti = pl->ti[i];
		if (dim0) {
			for (int d = 0; d < rank; d++)
				ti[d] = tq[d];
			if (i)
				ti[0] = bin(c, SI_ADD, DT_I32, tq[0], i32c(c, i * T / inner));
		} else {
			lower_decompose(c, i ? bin(c, SI_ADD, DT_I32, c->tid, i32c(c, i * T)) : c->tid, vext, rank, ti);
		}
		ti[rank - 1] = bin(c, SI_MUL, DT_I32, ti[rank - 1], i32c(c, V));
		/* the last step of a ragged split: only the threads it has */
		pl->step[i] = total % T && i == n - 1 ? setp(c, CMP_LT, DT_I32, c->tid, i32c(c, total - T * i)) : -1;
	}
}

static int32_t and_pred(L *c, int32_t a, int32_t b)
{
	return a < 0 ? b : b < 0 ? a : bin(c, SI_AND, DT_BOOL, a, b);
}

/* Loads of steps [g0, g1) into val[i] (4 registers each; val[i] < 0: new
 * ones), each guarded by its bounds, zeros outside.  versioned: also an
 * unguarded version (but for a ragged step) taken when the whole tile is
 * inside the global source (staged copies only: in other loops the second
 * version's registers cost more than the guards, flash attention spilled). */
static void copy_plan_loads(L *c, const CopyPlan *pl, const int64_t *ext, int64_t g0, int64_t g1, int32_t *val,
			    bool versioned)
{
	Addr sa[COPY_UNROLL]; /* before the branch: both versions use them */
	for (int64_t i = g0; i < g1; i++)
		sa[i] = side_addr(c, &pl->src, pl->ti[i]);
	int32_t inside = versioned ? side_inside(c, &pl->src, ext) : -1;
	int32_t lguard = -1, lend = -1;
	if (inside >= 0) {
		lguard = label(c), lend = label(c);
		bra(c, lguard, inside, true);
	}
	if (inside >= 0) {
		for (int64_t i = g0; i < g1; i++)
			val[i] = ld_vec4(c, sa[i], pl->step[i], val[i]);
		bra(c, lend, -1, false);
		place(c, lguard);
	}
	for (int64_t i = g0; i < g1; i++)
		val[i] = ld_vec4(c, sa[i], and_pred(c, side_ok(c, &pl->src, pl->ti[i]), pl->step[i]), val[i]);
	if (inside >= 0)
		place(c, lend);
}

static void copy_plan_stores(L *c, const CopyPlan *pl, int64_t g0, int64_t g1, const int32_t *val)
{
	for (int64_t i = g0; i < g1; i++) {
		Addr da = side_addr(c, &pl->dst, pl->ti[i]);
		st_vec4(c, da, val[i], and_pred(c, side_ok(c, &pl->dst, pl->ti[i]), pl->step[i]));
	}
}

static void copy_vectors_unrolled(L *c, const Stmt *s, const int64_t *vext, int rank, int V, int64_t total)
{
	CopyPlan pl;
	copy_plan(c, &pl, s, vext, rank, V, total);
	for (int64_t g0 = 0; g0 < pl.n; g0 += COPY_GROUP) {
		int64_t g1 = TA_MIN(pl.n, g0 + COPY_GROUP);
		int32_t val[COPY_UNROLL];
		for (int64_t i = g0; i < g1; i++)
			val[i] = -1;
		int64_t ext[IR_MAX_RANK];
		tile_ext(s, ext);
		copy_plan_loads(c, &pl, ext, g0, g1, val, false);
		copy_plan_stores(c, &pl, g0, g1, val);
	}
}

/* ---- staged copies (pipelined loops on AMD, lower.c lower_for_staged) ---- */


/* A global -> shared copy whose vector path is unrolled and whose
 * vector-path test does not depend on loop variables (the column offset
 * is a multiple of the vector by its form), so its loads can run a trip
 * ahead into registers. */
bool lower_copy_stageable(L *c, const Stmt *s)
{
	if (s->kind != S_COPY || !target_is_amd(c->t->id))
		return false;
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	if (a->scope != SCOPE_GLOBAL || b->scope != SCOPE_SHARED)
		return false;
	const BufLoc *la = &c->bl[s->src.buf], *lb = &c->bl[s->dst.buf];
	if (la->rf >= 0 || la->vf >= 0 || la->rr >= 0 || lb->rf >= 0 || lb->vf >= 0 || lb->rr >= 0 || !c->ro ||
	    !c->ro[s->src.buf])
		return false;
	int64_t total = 1, ext[IR_MAX_RANK];
	tile_ext(s, ext);
	for (int d = 0; d < s->trank; d++)
		total *= ext[d];
	int V = copy_vec_width(c, s, ext, s->trank);
	if (!V || !copy_unrolls(c, total / V))
		return false;
	return !s->src.nidx || expr_multiple(c, s->src.idx[a->rank - 1], V);
}

/* Registers per thread that the stageable copy's loads stay in while
 * staged: 4 per 16-byte step (ld_vec4). */
int lower_copy_stage_regs(L *c, const Stmt *s)
{
	int64_t ext[IR_MAX_RANK], total = 1;
	tile_ext(s, ext);
	for (int d = 0; d < s->trank; d++)
		total *= ext[d];
	int64_t vecs = total / copy_vec_width(c, s, ext, s->trank);
	return (int)(4 * ((vecs + c->nthreads - 1) / c->nthreads));
}

/* The stageable copy's vector-path predicate (uniform). */
int32_t lower_copy_stage_pred(L *c, const Stmt *s)
{
	int64_t ext[IR_MAX_RANK];
	tile_ext(s, ext);
	int V = copy_vec_width(c, s, ext, s->trank);
	int32_t ok = copy_vec_aligned(c, &s->src, V), fits = copy_lane_fits(c, &s->src, ext);
	return fits >= 0 ? bin(c, SI_AND, DT_BOOL, ok, fits) : ok;
}

static void stage_plan(L *c, const Stmt *s, CopyPlan *pl)
{
	int64_t ext[IR_MAX_RANK];
	tile_ext(s, ext);
	int V = copy_vec_width(c, s, ext, s->trank);
	int64_t vext[IR_MAX_RANK], total = 1;
	for (int d = 0; d < s->trank; d++) {
		vext[d] = d == s->trank - 1 ? ext[d] / V : ext[d];
		total *= vext[d];
	}
	copy_plan(c, pl, s, vext, s->trank, V, total);
}

/* Its loads at the loop variables' current registers into val[0..steps)
 * (registers allocated where val[i] < 0); returns the steps. */
int lower_copy_stage_load(L *c, const Stmt *s, int32_t *val)
{
	CopyPlan pl;
	stage_plan(c, s, &pl);
	int64_t ext[IR_MAX_RANK];
	tile_ext(s, ext);
	copy_plan_loads(c, &pl, ext, 0, pl.n, val, true);
	return (int)pl.n;
}

void lower_copy_stage_store(L *c, const Stmt *s, const int32_t *val)
{
	CopyPlan pl;
	stage_plan(c, s, &pl);
	copy_plan_stores(c, &pl, 0, pl.n, val);
}

static void copy_elements(L *c, const Stmt *s, const int64_t *ext, int64_t total);

void lower_copy(L *c, const Stmt *s)
{
	if (c->bl[s->src.buf].rr >= 0) { /* between row fragments of one layout */
		for (int k = 0; k < c->bl[s->src.buf].rr_n; k++)
			emit(c, I(SI_MOV, DT_F32, c->bl[s->dst.buf].rr + k, c->bl[s->src.buf].rr + k, -1));
		return;
	}
	if (c->bl[s->src.buf].vf >= 0 || c->bl[s->dst.buf].vf >= 0) {
		copy_vf(c, s);
		return;
	}
	if (c->bl[s->src.buf].rf >= 0 || c->bl[s->dst.buf].rf >= 0) {
		copy_rf(c, s);
		return;
	}
	int64_t ext[IR_MAX_RANK], total = 1;
	for (int d = 0; d < s->trank; d++)
		total *= ext[d] = s->text[d];
	int V = copy_vec_width(c, s, ext, s->trank);
	if (!V) {
		copy_elements(c, s, ext, total);
		return;
	}
	/* uniform branch: vectors when the global side is aligned */
	int32_t ok = -1;
	bool unrolled = copy_unrolls(c, total / V);
	const Region *rg[2] = {&s->src, &s->dst};
	for (int k = 0; k < 2; k++) {
		if (BUF(rg[k]->buf)->scope != SCOPE_GLOBAL)
			continue;
		int32_t o2 = copy_vec_aligned(c, rg[k], V);
		int32_t fits = unrolled ? copy_lane_fits(c, rg[k], ext) : -1;
		if (fits >= 0)
			o2 = bin(c, SI_AND, DT_BOOL, o2, fits);
		ok = ok < 0 ? o2 : bin(c, SI_AND, DT_BOOL, ok, o2);
	}
	if (ok < 0) {
		copy_vectors(c, s, ext, s->trank, V);
		return;
	}
	int32_t lscalar = label(c), lend = label(c);
	bra(c, lscalar, ok, true);
	copy_vectors(c, s, ext, s->trank, V);
	bra(c, lend, -1, false);
	place(c, lscalar);
	copy_elements(c, s, ext, total);
	place(c, lend);
}

/* One element per step, with conversion when the dtypes differ. */
static void copy_elements(L *c, const Stmt *s, const int64_t *ext, int64_t total)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	DType ta = (DType)a->dtype, tb = (DType)b->dtype;
	DLoop l = lower_dloop_begin(c, total, b->scope != SCOPE_LOCAL);
	int32_t ti[IR_MAX_RANK], si[IR_MAX_RANK], di[IR_MAX_RANK];
	lower_decompose(c, l.p, ext, s->trank, ti);
	lower_region_idx(c, &s->src, ti, si);
	lower_region_idx(c, &s->dst, ti, di);
	int32_t sok = a->scope == SCOPE_GLOBAL ? lower_inbounds(c, s->src.buf, si) : -1;
	int32_t dok = b->scope == SCOPE_GLOBAL ? lower_inbounds(c, s->dst.buf, di) : -1;
	if (dtype_is_packed(ta) || dtype_is_packed(tb)) { /* i4/u4 tensors: by value */
		int32_t v = cvt(c, tb, ta, lower_load_elem(c, s->src.buf, si, sok));
		lower_store_elem(c, s->dst.buf, di, v, dok);
		lower_dloop_end(c, &l);
		return;
	}
	Addr sa = lower_elem_addr(c, s->src.buf, si);
	int32_t v;
	if (sok >= 0) {
		v = zero_storage(c, ta);
		SInst in = I(SI_LD, ta, v, sa.addr, -1);
		in.sub = (uint8_t)sa.sp;
		in.imm = sa.off;
		in.guard = sok;
		emit(c, in);
	} else {
		v = ld(c, sa.sp, ta, sa.addr, sa.off, -1);
	}
	if (ta != tb)
		v = pack(c, tb, cvt(c, tb, ta, unpack(c, ta, v)));
	Addr da = lower_elem_addr(c, s->dst.buf, di);
	st(c, da.sp, tb, da.addr, da.off, v, dok);
	lower_dloop_end(c, &l);
}

void lower_fill(L *c, const Stmt *s)
{
	const Buffer *b = BUF(s->dst.buf);
	DType t = (DType)b->dtype;
	int32_t v = s->kind == S_CLEAR ? zero_canon(c, t) : expr_as(c, s->value, t);
	if (c->bl[s->dst.buf].vf >= 0) {
		for (int e = 0; e < c->bl[s->dst.buf].vf_n; e++) {
			vf_def(c, c->bl[s->dst.buf].vf + e);
			emit(c, I(SI_MOV, t, c->bl[s->dst.buf].vf + e, v, -1));
		}
		return;
	}
	if (c->bl[s->dst.buf].rr >= 0) {
		for (int k = 0; k < c->bl[s->dst.buf].rr_n; k++)
			emit(c, I(SI_MOV, t, c->bl[s->dst.buf].rr + k, v, -1));
		return;
	}
	if (c->bl[s->dst.buf].rf >= 0) {
		for (int e = 0; e < c->bl[s->dst.buf].rf_n; e++)
			emit(c, I(SI_MOV, t, c->bl[s->dst.buf].rf + e, v, -1));
		return;
	}
	v = pack(c, t, v);
	int64_t ext[IR_MAX_RANK], total;
	lower_shape_of(c, b, ext, &total);
	DLoop l = lower_dloop_begin(c, total, b->scope != SCOPE_LOCAL);
	int32_t idx[IR_MAX_RANK];
	lower_decompose(c, l.p, ext, b->rank, idx);
	Addr da = lower_elem_addr(c, s->dst.buf, idx);
	st(c, da.sp, t, da.addr, da.off, v, -1);
	lower_dloop_end(c, &l);
}

/* Native atomics: PTX red.{add,max,min} and AMD global/ds atomics.  The
 * rest is refused with the target and the combination. */
bool lower_atomic_native(L *c, AtomicOp op, Space sp, DType t)
{
	bool ptx = c->t->id == TA_TARGET_SM80 || c->t->id == TA_TARGET_SM90A;
	bool i32 = t == DT_I32 || t == DT_U32;
	if (op == ATOMIC_ADD)
		return i32 || t == DT_I64 || t == DT_F32 ||
		       (ptx && (t == DT_F64 || t == DT_F16 || (t == DT_BF16 && c->t->id == TA_TARGET_SM90A)));
	if (i32)
		return true;
	if (t == DT_I64)
		return ptx || sp == SP_GLOBAL; /* LDS has only unsigned 64-bit max/min */
	return t == DT_F32 && !ptx && sp == SP_SHARED; /* ds_max_f32 / ds_min_f32 */
}

/* The software atomics: the combinations without an instruction run a
 * compare-and-swap loop on the aligned 32-bit word that holds the element
 * (on the element itself for 4- and 8-byte types): read the word, compute
 * the new element, swap it in if the word is unchanged, else retry with
 * the word the swap saw.  The other bytes of the word are written back as
 * read, so neighbours updated by other threads are never lost.  Global
 * and shared memory on every target (global_atomic_cmpswap / ds_cmpst,
 * atom.cas). */
static bool atomic_cas_ok(DType t)
{
	return t != DT_BOOL;
}

/* Element of type t at byte address ea (i64 global, i32 shared) becomes
 * op(element, v) (op < 0: v itself; v canonical, or the bits for i4/u4).
 * nib >= 0 (i4/u4): an i32 register 0 or 1, the nibble in the byte.
 * Guarded by guard (-1: always). */
void lower_cas_update(L *c, Space sp, int32_t ea, DType t, int op, int32_t v, int32_t nib, int32_t guard)
{
	int w = dtype_bits(t);
	bool w64 = w == 64;
	DType at = sp == SP_GLOBAL ? DT_I64 : DT_I32, wt = w64 ? DT_I64 : DT_I32;
	int32_t end = label(c), top = label(c);
	if (guard >= 0)
		bra(c, end, guard, true);
	int32_t wa = ea, sh = -1, mask = -1;
	if (w < 32) {
		int32_t lo = sp == SP_GLOBAL ? cvt(c, DT_I32, DT_I64, ea) : ea;
		wa = bin(c, SI_AND, at, ea, movi(c, at, -4));
		sh = bin(c, SI_SHL, DT_I32, bin(c, SI_AND, DT_I32, lo, i32c(c, 3)), i32c(c, 3));
		if (nib >= 0)
			sh = bin(c, SI_OR, DT_I32, sh, bin(c, SI_SHL, DT_I32, nib, i32c(c, 2)));
		mask = bin(c, SI_SHL, DT_I32, i32c(c, (1 << w) - 1), sh);
	}
	int32_t old = reg(c, w64 ? VT_I64 : VT_I32);
	emit(c, I(SI_MOV, wt, old, ld(c, sp, w64 ? DT_I64 : DT_U32, wa, 0, -1), -1));
	place(c, top);
	int32_t e = -1, nv;
	if (op >= 0) {
		e = lower_from_bits(c, t, w < 32 ? bin(c, SI_SHR, DT_U32, old, sh) : old);
		DType o = op_type(t);
		e = op == ATOMIC_ADD ? fix(c, t, bin(c, SI_ADD, o, e, v)) : bin(c, op == ATOMIC_MAX ? SI_MAX : SI_MIN, o, e, v);
	}
	int32_t b = op >= 0 ? lower_bits_of(c, t, e) : nib >= 0 ? bin(c, SI_AND, DT_I32, v, i32c(c, 0xf)) : lower_bits_of(c, t, v);
	if (w < 32)
		nv = bin(c, SI_OR, DT_I32, bin(c, SI_AND, DT_I32, old, un(c, SI_NOT, DT_I32, mask)),
		         bin(c, SI_SHL, DT_I32, b, sh));
	else
		nv = b;
	int32_t prev = reg(c, w64 ? VT_I64 : VT_I32);
	SInst in = I(SI_ATOM_CAS, wt, prev, wa, old);
	in.c = nv;
	in.sub = (uint8_t)sp;
	emit(c, in);
	int32_t done = setp(c, CMP_EQ, wt, prev, old);
	emit(c, I(SI_MOV, wt, old, prev, -1));
	bra(c, end, done, false);
	bra(c, top, -1, false);
	place(c, end);
}

static void atomic_elem(L *c, const Stmt *s, const int32_t *idx, int32_t v, int32_t guard)
{
	DType t = (DType)BUF(s->dst.buf)->dtype;
	Addr a = lower_elem_addr(c, s->dst.buf, idx);
	if (!lower_atomic_native(c, (AtomicOp)s->sub, a.sp, t)) {
		DType at = a.sp == SP_GLOBAL ? DT_I64 : DT_I32;
		int32_t ea = a.off ? bin(c, SI_ADD, at, a.addr, movi(c, at, a.off)) : a.addr;
		int32_t nib = dtype_is_packed(t) ? lower_packed_nibble(c, s->dst.buf, idx) : -1;
		lower_cas_update(c, a.sp, ea, t, s->sub, v, nib, guard);
		return;
	}
	static const uint8_t ops[] = {SI_ATOM_ADD, SI_ATOM_MAX, SI_ATOM_MIN};
	SInst in = I(ops[s->sub], t, -1, a.addr, pack(c, t, v));
	in.sub = (uint8_t)a.sp;
	in.imm = a.off;
	in.guard = guard;
	emit(c, in);
}

void lower_atomic(L *c, const Stmt *s)
{
	const Buffer *g = BUF(s->dst.buf);
	DType t = (DType)g->dtype;
	Space sp = g->scope == SCOPE_SHARED ? SP_SHARED : SP_GLOBAL;
	if (!lower_atomic_native(c, (AtomicOp)s->sub, sp, t) && !atomic_cas_ok(t)) {
		if (!c->failed)
			diag_at(c->d, DIAG_ERROR, &c->m->src, s->pos, "%s on %s %s is not supported on %s",
			        atomic_name((AtomicOp)s->sub), sp == SP_SHARED ? "shared" : "global", dtype_name(t),
			        target_name(c->t->id));
		c->failed = true;
		return;
	}
	if (s->value >= 0) {
		int32_t idx[IR_MAX_RANK];
		for (int i = 0; i < s->dst.nidx; i++)
			idx[i] = expr_as(c, s->dst.idx[i], DT_I32);
		atomic_elem(c, s, idx, expr_as(c, s->value, t), single_thread_guard(c, s->dst.buf));
		return;
	}
	if (c->bl[s->src.buf].rf >= 0) { /* a register fragment: copy_rf's layout walk, atomically */
		c->rf_atomic = true;
		copy_rf(c, s);
		c->rf_atomic = false;
		return;
	}
	const Buffer *x = BUF(s->src.buf);
	int64_t ext[IR_MAX_RANK], total = 1;
	for (int d = 0; d < s->trank; d++)
		total *= ext[d] = s->text[d];
	DLoop l = lower_dloop_begin(c, total, true);
	int32_t ti[IR_MAX_RANK], gi[IR_MAX_RANK], xi[IR_MAX_RANK];
	lower_decompose(c, l.p, ext, s->trank, ti);
	lower_region_idx(c, &s->dst, ti, gi);
	lower_region_idx(c, &s->src, ti, xi);
	/* a global tile skips elements outside the tensor (shared: verify/interp rule) */
	int32_t ok = sp == SP_GLOBAL ? lower_inbounds(c, s->dst.buf, gi) : -1;
	int32_t v = cvt(c, t, (DType)x->dtype, lower_load_elem(c, s->src.buf, xi, -1));
	atomic_elem(c, s, gi, v, ok);
	lower_dloop_end(c, &l);
}

/* Combine acc with x in dtype t arithmetic (x already converted to t). */
int32_t lower_combine(L *c, ReduceOp op, DType t, int32_t acc, int32_t x)
{
	DType o = op_type(t);
	if (op == RED_SUM || op == RED_ABSSUM)
		return fix(c, t, bin(c, SI_ADD, o, acc, x));
	return bin(c, op == RED_MIN ? SI_MIN : SI_MAX, o, acc, x);
}

static int32_t red_identity(L *c, ReduceOp op, DType t)
{
	if (op == RED_SUM || op == RED_ABSSUM)
		return zero_canon(c, t);
	bool mx = op != RED_MIN;
	if (dtype_is_float(t))
		return movf(c, t == DT_F64 ? DT_F64 : DT_F32, mx ? -INFINITY : INFINITY);
	int64_t lo, hi;
	switch (t) {
	case DT_I8: lo = -128, hi = 127; break;
	case DT_U8: lo = 0, hi = 255; break;
	case DT_I16: lo = -32768, hi = 32767; break;
	case DT_U32: lo = 0, hi = 0xffffffffLL; break;
	case DT_I64: lo = INT64_MIN, hi = INT64_MAX; break;
	default: lo = INT32_MIN, hi = INT32_MAX; break;
	}
	return movi(c, op_type(t), mx ? lo : hi);
}

static int pow2_floor(int64_t v)
{
	int p = 1;
	while ((int64_t)p * 2 <= v && p < 32)
		p *= 2;
	return p;
}

void lower_reduce(L *c, const Stmt *s)
{
	if (c->bl[s->src.buf].vf >= 0) {
		reduce_vf(c, s);
		return;
	}
	if (c->bl[s->dst.buf].rr >= 0) {
		reduce_rr(c, s);
		return;
	}
	if (c->bl[s->src.buf].rf >= 0) {
		reduce_rf_mem(c, s);
		return;
	}
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	DType ta = (DType)a->dtype, t = (DType)b->dtype;
	ReduceOp op = (ReduceOp)s->sub;
	int D = s->dim;
	int64_t len = bdim(c, a, D), inner = 1, outs = 1;
	for (int d = 0; d < a->rank; d++)
		if (d != D)
			outs *= bdim(c, a, d);
	for (int d = D + 1; d < a->rank; d++)
		inner *= bdim(c, a, d);
	bool local = b->scope == SCOPE_LOCAL;
	/* floats accumulate in f32 (f64 for f64) and round once into dst, as
	 * the interpreter does (docs/tile-ir.md) */
	DType at = dtype_is_float(t) && t != DT_F64 ? DT_F32 : t;
	VType vt = simt_vt(at);
	int G = (local || (vt != VT_F32 && vt != VT_I32) || c->nthreads % 32) ? 1
	        : pow2_floor(TA_MIN(c->nthreads / TA_MAX(outs, 1), len));
	int64_t ngroups = local ? 1 : c->nthreads / G;
	int64_t rounds = (outs + ngroups - 1) / ngroups;
	int32_t lane = local ? i32c(c, 0) : bin(c, SI_REM, DT_U32, c->tid, i32c(c, G));
	int32_t grp = local ? i32c(c, 0) : bin(c, SI_DIV, DT_U32, c->tid, i32c(c, G));
	/* for round: o = round * ngroups + grp (uniform trip count: shuffles need the whole warp) */
	int32_t rd = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, rd, i32c(c, 0), -1));
	int32_t rtop = label(c), rend = label(c);
	place(c, rtop);
	bra(c, rend, setp(c, CMP_GE, DT_I32, rd, i32c(c, rounds)), false);
	int32_t o = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, rd, i32c(c, ngroups)), grp);
	int32_t valid = setp(c, CMP_LT, DT_I32, o, i32c(c, outs));
	/* src linear index of (o, k) = (o / inner) * len * inner + k * inner + o % inner */
	int32_t oo = bin(c, SI_DIV, DT_U32, o, i32c(c, inner)), oi = bin(c, SI_REM, DT_U32, o, i32c(c, inner));
	int32_t sbase = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, oo, i32c(c, len * inner)), oi);
	int32_t acc = reg(c, vt);
	emit(c, I(SI_MOV, op_type(at), acc, red_identity(c, op, at), -1));
	int32_t k = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, k, lane, -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	int32_t kdone = setp(c, CMP_GE, DT_I32, k, i32c(c, len));
	kdone = bin(c, SI_OR, DT_BOOL, kdone, un(c, SI_NOT, DT_BOOL, valid));
	bra(c, kend, kdone, false);
	{
		int32_t lin = bin(c, SI_ADD, DT_I32, sbase, bin(c, SI_MUL, DT_I32, k, i32c(c, inner)));
		Addr sa = {SP_SHARED, 0, 0};
		if (a->scope == SCOPE_LOCAL && c->bl[s->src.buf].lreg >= 0) {
			sa = (Addr){SP_REGS, bin(c, SI_MUL, DT_I32, lin, i32c(c, dtype_bytes(ta))), (int64_t)s->src.buf << 32};
		} else if (a->scope == SCOPE_LOCAL) { /* flat byte offset into the local array */
			int32_t la = reg(c, VT_I64);
			SInst in = I(SI_LOCALADDR, DT_I64, la, -1, -1);
			in.imm = c->bl[s->src.buf].shadow >= 0 ? c->bl[s->src.buf].shadow : c->bl[s->src.buf].local;
			emit(c, in);
			int32_t off = bin(c, SI_MUL, DT_I32, lin, i32c(c, dtype_bytes(ta)));
			sa = (Addr){SP_LOCAL, bin(c, SI_ADD, DT_I64, la, cvt(c, DT_I64, DT_I32, off)), 0};
		} else {
			int32_t off = bin(c, SI_MUL, DT_I32, lin, i32c(c, dtype_bytes(ta)));
			sa = (Addr){SP_SHARED, bin(c, SI_ADD, DT_I32, c->shbase, off), c->bl[s->src.buf].smem};
		}
		int32_t x = cvt(c, at, ta, unpack(c, ta, ld(c, sa.sp, ta, sa.addr, sa.off, -1)));
		if ((op == RED_ABSSUM || op == RED_ABSMAX) && op_type(at) != DT_U32)
			x = un(c, SI_ABS, op_type(at), x);
		emit(c, I(SI_MOV, op_type(at), acc, lower_combine(c, op, at, acc, x), -1));
		emit(c, I(SI_ADD, DT_I32, k, k, i32c(c, G)));
		bra(c, ktop, -1, false);
	}
	place(c, kend);
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	for (int off = G / 2; off >= 1; off /= 2) {
		int32_t other = reg(c, vt);
		SInst in = I(SI_SHFL_BFLY, op_type(at), other, acc, -1);
		in.imm = off;
		emit(c, in);
		emit(c, I(SI_MOV, op_type(at), acc, lower_combine(c, cop, at, acc, other), -1));
	}
	/* lane 0 of the group writes dst[o] */
	int32_t w = bin(c, SI_AND, DT_BOOL, valid, setp(c, CMP_EQ, DT_I32, lane, i32c(c, 0)));
	int32_t skip = label(c);
	bra(c, skip, w, true);
	{
		int32_t didx[IR_MAX_RANK];
		int64_t dext[IR_MAX_RANK];
		for (int d = 0; d < b->rank; d++)
			dext[d] = bdim(c, b, d);
		lower_decompose(c, o, dext, b->rank, didx);
		int32_t v = acc;
		if (!s->flag_clear)
			v = lower_combine(c, cop, at, cvt(c, at, t, lower_load_elem(c, s->dst.buf, didx, -1)), acc);
		lower_store_elem(c, s->dst.buf, didx, cvt(c, t, at, v), -1);
	}
	place(c, skip);
	emit(c, I(SI_ADD, DT_I32, rd, rd, i32c(c, 1)));
	bra(c, rtop, -1, false);
	place(c, rend);
}

void lower_cumsum(L *c, const Stmt *s)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	DType ta = (DType)a->dtype, t = (DType)b->dtype;
	int D = s->dim;
	int64_t len = bdim(c, a, D), inner = 1, lines = 1;
	for (int d = 0; d < a->rank; d++)
		if (d != D)
			lines *= bdim(c, a, d);
	for (int d = D + 1; d < a->rank; d++)
		inner *= bdim(c, a, d);
	DLoop l = lower_dloop_begin(c, lines, b->scope != SCOPE_LOCAL);
	int32_t oo = bin(c, SI_DIV, DT_U32, l.p, i32c(c, inner)), oi = bin(c, SI_REM, DT_U32, l.p, i32c(c, inner));
	int32_t base = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, oo, i32c(c, len * inner)), oi);
	int32_t acc = reg(c, simt_vt(t));
	emit(c, I(SI_MOV, op_type(t), acc, zero_canon(c, t), -1));
	int32_t k = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, k, i32c(c, 0), -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, k, i32c(c, len)), false);
	int32_t kk = s->flag_reverse ? bin(c, SI_SUB, DT_I32, i32c(c, len - 1), k) : k;
	int32_t lin = bin(c, SI_ADD, DT_I32, base, bin(c, SI_MUL, DT_I32, kk, i32c(c, inner)));
	/* src and dst have the same shape: one multi-index serves both */
	int32_t idx[IR_MAX_RANK];
	int64_t ext[IR_MAX_RANK], n;
	lower_shape_of(c, a, ext, &n);
	lower_decompose(c, lin, ext, a->rank, idx);
	int32_t x = cvt(c, t, ta, lower_load_elem(c, s->src.buf, idx, -1));
	emit(c, I(SI_MOV, op_type(t), acc, fix(c, t, bin(c, SI_ADD, op_type(t), acc, x)), -1));
	lower_store_elem(c, s->dst.buf, idx, acc, -1);
	emit(c, I(SI_ADD, DT_I32, k, k, i32c(c, 1)));
	bra(c, top, -1, false);
	place(c, end);
	lower_dloop_end(c, &l);
}
