/* ptx_sm90_gemm.c — the sm_90a GEMM path (ptx_sm90.h): a pipelined
 * shared-tile gemm loop as TMA + mbarrier ring + wgmma, embedded in the
 * general lowering of the rest of the kernel.
 *
 * The entry (384 threads, one CTA per SM, persistent):
 *   warpgroup 0     producer.  setmaxnreg.dec 40; thread 0 walks the CTA's
 *                   tiles and, per 64-wide k-step, waits for a free stage,
 *                   arms the stage's "full" barrier with its byte count and
 *                   issues the TMA loads of the A tile and the B tiles of
 *                   both IR blocks.
 *   warpgroups 1-2  consumers.  setmaxnreg.inc 232; consumer c runs IR block
 *                   (2j + c, by) of CTA tile j: the kernel's own code as the
 *                   general lowering made it for 128 threads, where the loop
 *                   is BM/64 x 4 wgmma m64nBNk16 per k-step on the ring
 *                   (one wgmma group kept in flight, a stage released one
 *                   k-step late).  A block outside the IR grid (odd grid x)
 *                   only drains the ring.
 * The ring's stage/parity counters run on across tiles, so the producer
 * loads the next tile while the consumers run the epilogue.
 *
 * Shared memory (base rounded up to 1024 B, the 128B swizzle atom):
 *   [A stage 0..ST)  BM x 64 halves, K-major
 *   [B stage 0..ST)  2BN x 64: K-major (transpose_b), or MN-major: 64(k) x
 *                    64(n) slabs, one TMA box each
 *   [full 0..ST) [empty 0..ST)  mbarriers, 8 B each
 *   [consumer 0 area) [consumer 1 area)  the general lowering's shared memory
 */
#include <inttypes.h>
#include <stdio.h>

#include "ptx.h"
#include "ptx_sm90.h"

enum {
	BKT = 64, THREADS = 384, SLAB_BYTES = BKT * 128, /* one 64-column MN-major slab of B */
	GROUP_M = 8, /* tile rows per rasterisation group (L2 reuse) */
	PRODUCER_REGS = 40, CONSUMER_REGS = 232, SMEM_MAX = 227 * 1024,
};

/* ---- matching ---------------------------------------------------------- */

#define EX(id) (&m->exprs.data[id])
#define ST_(id) (&m->stmts.data[id])
#define BUF(id) (&m->bufs.data[id])
#define VAR(id) (&m->vars.data[id])

/* Two shape expressions denote the same size: equal constants, or the same
 * unspecialised symbol. */
static bool same_size(const Module *m, int32_t a, int32_t b)
{
	int64_t x, y;
	bool ca = ir_const_int(m, a, &x), cb = ir_const_int(m, b, &y);
	if (ca || cb)
		return ca && cb && x == y;
	return EX(a)->kind == E_VAR && EX(b)->kind == E_VAR && EX(a)->var == EX(b)->var;
}

static bool is_const(const Module *m, int32_t e, int64_t v)
{
	int64_t x;
	return e >= 0 && ir_const_int(m, e, &x) && x == v;
}

/* e is `var * scale` (either operand order). */
static bool is_scaled_var(const Module *m, int32_t e, int32_t var, int64_t scale)
{
	const Expr *x = EX(e);
	if (x->kind != E_BINARY || x->op != OP_MUL)
		return false;
	const Expr *a = EX(x->a), *b = EX(x->b);
	if (a->kind == E_VAR && a->var == var)
		return is_const(m, x->b, scale);
	if (b->kind == E_VAR && b->var == var)
		return is_const(m, x->a, scale);
	return false;
}

/* e is ceildiv(size, d) with size the same as shape expression `size`, or, when
 * both are constants, its value (a front end such as the Python DSL folds the
 * trip count of a specialised shape to a literal). */
static bool is_ceildiv(const Module *m, int32_t e, int32_t size, int64_t d)
{
	const Expr *x = EX(e);
	int64_t n, sz;
	if (ir_const_int(m, e, &n) && ir_const_int(m, size, &sz))
		return d > 0 && sz >= 0 && n == (sz + d - 1) / d;
	return x->kind == E_CALL && x->op == OP_CEILDIV && x->nargs == 2 && same_size(m, x->args[0], size) &&
	       is_const(m, x->args[1], d);
}

static int64_t dim(const Module *m, int32_t buf, int d)
{
	return ir_buf_dim(m, BUF(buf), d);
}

static int arg_of_buf(const Kernel *k, int32_t buf)
{
	for (int i = 0; i < k->nargs; i++)
		if (k->args[i].buf == buf)
			return i;
	return -1;
}

static bool is_half(DType t)
{
	return t == DT_F16 || t == DT_BF16;
}

/* copy(G[r0, c0], S), or copy(G[bz, r0, c0], S) for a rank-3 G (a batch of
 * matrices, the rank-reducing copy), with S a whole shared buffer of the
 * dtype of G.  Sets *g to G's buffer id and *off to the index of r0. */
static bool match_load(const Module *m, const Kernel *k, const Stmt *s, int32_t *g, int32_t *sh, int *off)
{
	if (s->kind != S_COPY || s->src.hi || s->dst.nidx != 0) /* the offsets form only */
		return false;
	const Buffer *src = BUF(s->src.buf), *dst = BUF(s->dst.buf);
	if (src->scope != SCOPE_GLOBAL || src->view || dst->scope != SCOPE_SHARED || dst->rank != 2 ||
	    src->dtype != dst->dtype) /* a view's TMA descriptor would need its own shape: not matched */
		return false;
	if (src->rank == 2 && s->src.nidx == 2) {
		*off = 0;
	} else if (src->rank == 3 && s->src.nidx == 3 && k->blockidx[2] >= 0 && EX(s->src.idx[0])->kind == E_VAR &&
		   EX(s->src.idx[0])->var == k->blockidx[2]) {
		*off = 1;
	} else {
		return false;
	}
	*g = s->src.buf;
	*sh = s->dst.buf;
	return true;
}

/* ---- range expressions ------------------------------------------------- */

/* The loop bounds of a split-K loop are evaluated by the entry itself, by
 * the producer and by the consumers alike (each needs the trip count of the
 * tile it is on): integer (i32) expressions of constants, shape symbols, i32
 * scalar parameters, by, bz and top-level lets of those, emitted as PTX into
 * the registers %xr<n>.  With o == NULL, only checks that e has that form. */
typedef struct {
	const Module *m;
	const Kernel *k;
	int32_t loop;  /* statement id of the loop: lets must come before it */
	StrBuf *o;
	int n;         /* registers used */
} Rx;

/* The value of `let var = value` at the kernel's top level before the loop, or -1. */
static int32_t top_let(const Rx *x, int32_t var)
{
	const Module *m = x->m;
	for (int i = 0; i < x->k->body.n && x->k->body.ids[i] != x->loop; i++) {
		const Stmt *s = ST_(x->k->body.ids[i]);
		if (s->kind == S_LET && s->var == var)
			return s->value;
	}
	return -1;
}

/* Emits e; returns its register number, or -1 if e is not of the form. */
static int rx_emit(Rx *x, int32_t e, int depth)
{
	const Module *m = x->m;
	const Expr *ex = EX(e);
	if (depth > IR_MAX_HEIGHT || ex->type != DT_I32)
		return -1;
	int r = x->n++;
	switch (ex->kind) {
	case E_INT:
		if (x->o)
			sb_printf(x->o, "\tmov.s32 %%xr%d, %" PRId64 ";\n", r, ex->ival);
		return r;
	case E_VAR: {
		const Var *v = VAR(ex->var);
		if (v->kind == V_SYMBOL && v->has_value) {
			if (x->o)
				sb_printf(x->o, "\tmov.s32 %%xr%d, %" PRId64 ";\n", r, v->value);
			return r;
		}
		if (v->kind == V_SYMBOL || v->kind == V_PARAM) {
			for (int i = 0; i < x->k->nargs; i++)
				if (x->k->args[i].var == ex->var) {
					if (x->o)
						sb_printf(x->o, "\tld.param.u32 %%xr%d, [_p%d];\n", r, i);
					return r;
				}
			return -1;
		}
		if (v->kind == V_BLOCKIDX && v->index > 0) { /* not bx: both IR blocks of a CTA share the range */
			if (x->o)
				sb_printf(x->o, "\tmov.u32 %%xr%d, %s;\n", r, v->index == 1 ? "%vby" : "%vbz");
			return r;
		}
		int32_t val = v->kind == V_LET ? top_let(x, ex->var) : -1;
		if (val < 0)
			return -1;
		int a = rx_emit(x, val, depth + 1);
		if (a >= 0 && x->o)
			sb_printf(x->o, "\tmov.s32 %%xr%d, %%xr%d;\n", r, a);
		return a < 0 ? -1 : r;
	}
	case E_BINARY:
	case E_CALL: {
		Op op = (Op)ex->op;
		int32_t ea = ex->kind == E_BINARY ? ex->a : ex->nargs == 2 ? ex->args[0] : -1;
		int32_t eb = ex->kind == E_BINARY ? ex->b : ex->nargs == 2 ? ex->args[1] : -1;
		bool ok = ex->kind == E_BINARY ? (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_FLOORDIV || op == OP_MOD)
					      : (op == OP_MIN || op == OP_MAX || op == OP_CEILDIV);
		if (!ok || ea < 0 || eb < 0)
			return -1;
		int a = rx_emit(x, ea, depth + 1), b = a < 0 ? -1 : rx_emit(x, eb, depth + 1);
		if (b < 0)
			return -1;
		if (!x->o)
			return r;
		static const char *const simple[OP_COUNT] = {[OP_ADD] = "add.s32", [OP_SUB] = "sub.s32", [OP_MUL] = "mul.lo.s32",
							     [OP_MIN] = "min.s32", [OP_MAX] = "max.s32"};
		if (simple[op]) {
			sb_printf(x->o, "\t%s %%xr%d, %%xr%d, %%xr%d;\n", simple[op], r, a, b);
			return r;
		}
		/* The IR's integer division rounds down (ceildiv up), its % takes the
		 * divisor's sign: fix PTX's truncating div/rem where the signs differ. */
		sb_printf(x->o,
			"\tdiv.s32 %%xq, %%xr%d, %%xr%d;\n"
			"\trem.s32 %%xm, %%xr%d, %%xr%d;\n"
			"\tsetp.ne.s32 %%xp0, %%xm, 0;\n"
			"\txor.b32 %%xt, %%xm, %%xr%d;\n"
			"\tsetp.lt.s32 %%xp1, %%xt, 0;\n"
			"\tand.pred %%xp1, %%xp1, %%xp0;\n",
			a, b, a, b, b);
		if (op == OP_MOD)
			sb_printf(x->o, "\t@%%xp1 add.s32 %%xm, %%xm, %%xr%d;\n\tmov.s32 %%xr%d, %%xm;\n", b, r);
		else if (op == OP_FLOORDIV)
			sb_printf(x->o, "\t@%%xp1 sub.s32 %%xq, %%xq, 1;\n\tmov.s32 %%xr%d, %%xq;\n", r);
		else /* ceildiv = floor + (remainder != 0) */
			sb_printf(x->o, "\t@%%xp1 sub.s32 %%xq, %%xq, 1;\n\t@%%xp0 add.s32 %%xq, %%xq, 1;\n\tmov.s32 %%xr%d, %%xq;\n", r);
		return r;
	}
	default:
		return -1;
	}
}

/* Does expression e (recursively) read buffer b? */
static bool expr_uses(const Module *m, int32_t e, int32_t b)
{
	if (e < 0)
		return false;
	const Expr *x = EX(e);
	if (x->kind == E_LOAD && x->buf == b)
		return true;
	if ((x->kind == E_UNARY || x->kind == E_BINARY || x->kind == E_CAST) && expr_uses(m, x->a, b))
		return true;
	if (x->kind == E_BINARY && expr_uses(m, x->b, b))
		return true;
	if (x->kind == E_LOAD || x->kind == E_CALL)
		for (int i = 0; i < x->nargs; i++)
			if (expr_uses(m, x->args[i], b))
				return true;
	return false;
}

static bool region_uses(const Module *m, const Region *r, int32_t b)
{
	if (r->buf == b)
		return true;
	for (int i = 0; i < r->nidx; i++)
		if (expr_uses(m, r->idx[i], b))
			return true;
	return false;
}

/* Does block bl use buffer b anywhere outside statement `skip`? */
static bool block_uses(const Module *m, const Block *bl, int32_t b, int32_t skip)
{
	for (int i = 0; i < bl->n; i++) {
		int32_t id = bl->ids[i];
		const Stmt *s = ST_(id);
		if (id == skip || (s->kind == S_ALLOC))
			continue;
		if (region_uses(m, &s->dst, b) || region_uses(m, &s->src, b) || region_uses(m, &s->src2, b) ||
		    expr_uses(m, s->value, b) || expr_uses(m, s->lo, b) || expr_uses(m, s->hi, b))
			return true;
		for (int j = 0; s->kind == S_PARALLEL && j < s->nvars; j++)
			if (expr_uses(m, s->extents[j], b))
				return true;
		if (block_uses(m, &s->body, b, skip) || block_uses(m, &s->els, b, skip))
			return true;
	}
	return false;
}

bool sm90_gemm_match(const Module *m, int ki, Sm90Gemm *g)
{
	memset(g, 0, sizeof *g);
	if (!m->verified || ki < 0 || (size_t)ki >= m->kernels.len)
		return false;
	const Kernel *k = &m->kernels.data[ki];
	/* use_swizzle fixes the block order; this path's persistent CTAs walk
	 * tiles in their own grouped order, so such a kernel keeps the general
	 * lowering, which applies the remap (lower_raster.c). */
	if (k->raster)
		return false;
	if (k->threads != 128) /* one IR block = one consumer warpgroup */
		return false;
	/* The one top-level pipelined loop {copy; copy; gemm}. */
	const Stmt *loop = NULL;
	for (int i = 0; i < k->body.n; i++) {
		const Stmt *s = ST_(k->body.ids[i]);
		if (s->kind != S_FOR || s->sub != LOOP_PIPELINED || s->body.n != 3 || ST_(s->body.ids[2])->kind != S_GEMM)
			continue;
		if (loop)
			return false;
		loop = s;
		g->loop = k->body.ids[i];
	}
	if (!loop)
		return false;
	const Stmt *gm = ST_(loop->body.ids[2]);
	int32_t cf = gm->dst.buf;
	const Buffer *cfb = BUF(cf);
	if (gm->flag_a || gm->flag_clear || gm->dst.nidx || gm->src.nidx || gm->src2.nidx ||
	    cfb->scope != SCOPE_FRAGMENT || cfb->dtype != DT_F32 || cfb->rank != 2)
		return false;
	int32_t g0, s0, g1, s1;
	int o0, o1;
	if (!match_load(m, k, ST_(loop->body.ids[0]), &g0, &s0, &o0) ||
	    !match_load(m, k, ST_(loop->body.ids[1]), &g1, &s1, &o1))
		return false;
	int32_t a, as, b, bs;
	int oa = o0, ob = o1;
	const Stmt *la = ST_(loop->body.ids[0]), *lb = ST_(loop->body.ids[1]);
	if (s0 == gm->src.buf && s1 == gm->src2.buf) {
		a = g0, as = s0, b = g1, bs = s1;
	} else if (s1 == gm->src.buf && s0 == gm->src2.buf) {
		a = g1, as = s1, b = g0, bs = s0;
		oa = o1, ob = o0;
		const Stmt *t = la;
		la = lb;
		lb = t;
	} else {
		return false;
	}
	const Buffer *A = BUF(a), *B = BUF(b);
	if (a == b || as == bs || !is_half(A->dtype) || B->dtype != A->dtype)
		return false;
	bool tb = gm->flag_b;
	int64_t bm = dim(m, as, 0), bk = dim(m, as, 1), bn = dim(m, cf, 1);
	if (dim(m, cf, 0) != bm || bk <= 0 || !(bm == 64 || bm == 128) || !(bn == 64 || bn == 128))
		return false;
	if (tb ? (dim(m, bs, 0) != bn || dim(m, bs, 1) != bk) : (dim(m, bs, 0) != bk || dim(m, bs, 1) != bn))
		return false;
	/* Sizes: A [(Bt,) M, K], B [(Bt,) K, N] or [(Bt,) N, K]. */
	int32_t K = A->shape[oa + 1];
	if (!same_size(m, B->shape[ob + (tb ? 1 : 0)], K))
		return false;
	/* Tiles: A[by * BM, ko * BK], B[ko * BK, bx * BN] (or [bx * BN, ko * BK]),
	 * after the batch index bz of a rank-3 operand.  Any grid z extent. */
	int32_t bx = k->blockidx[0], by = k->blockidx[1], ko = loop->var;
	if (bx < 0 || by < 0 || k->ngrid < 2)
		return false;
	if (!is_scaled_var(m, la->src.idx[oa], by, bm) || !is_scaled_var(m, la->src.idx[oa + 1], ko, bk))
		return false;
	int32_t bi_n = lb->src.idx[ob + (tb ? 0 : 1)], bi_k = lb->src.idx[ob + (tb ? 1 : 0)];
	if (!is_scaled_var(m, bi_n, bx, bn) || !is_scaled_var(m, bi_k, ko, bk))
		return false;
	/* The loop covers exactly K (any BK: the entry steps by 64), or, with BK
	 * = 64, a range the entry computes per tile (split-K); the operand tiles
	 * are the loop's alone. */
	if (loop->step >= 0 && !is_const(m, loop->step, 1))
		return false;
	bool whole = is_const(m, loop->lo, 0) && is_ceildiv(m, loop->hi, K, bk);
	Rx rx = {m, k, g->loop, NULL, 0};
	if (!whole && (bk != BKT || rx_emit(&rx, loop->lo, 0) < 0 || rx_emit(&rx, loop->hi, 0) < 0))
		return false;
	if (block_uses(m, &k->body, as, g->loop) || block_uses(m, &k->body, bs, g->loop) ||
	    block_uses(m, &loop->body, cf, loop->body.ids[2]))
		return false;
	int ia = arg_of_buf(k, a), ib = arg_of_buf(k, b);
	if (ia < 0 || ib < 0)
		return false;
	g->kernel = ki;
	g->a = a, g->b = b, g->as = as, g->bs = bs, g->cf = cf;
	g->in_dtype = A->dtype;
	g->b_kmajor = tb;
	g->a_batched = oa == 1, g->b_batched = ob == 1;
	g->ir_bm = (int32_t)bm, g->ir_bn = (int32_t)bn, g->ir_bk = (int32_t)bk, g->ir_stages = loop->stages;
	Sm90Launch *l = &g->launch;
	snprintf(l->entry, sizeof l->entry, "%s_sm90", k->name);
	l->ngeneric = k->nargs;
	l->ntmaps = 2;
	l->tmaps[0] = (Sm90Tmap){ia, A->dtype, (uint8_t)(2 + oa), {64, (uint32_t)bm, 1}, 3};
	l->tmaps[1] = (Sm90Tmap){ib, A->dtype, (uint8_t)(2 + ob), {64, tb ? 2 * (uint32_t)bn : 64, 1}, 3};
	l->threads = THREADS;
	l->cluster[0] = l->cluster[1] = l->cluster[2] = 1;
	l->tile_m = (uint32_t)bm, l->tile_n = 2 * (uint32_t)bn, l->tile_k = BKT;
	l->b_kmajor = tb;
	l->k_range = !whole;
	return true;
}

/* ---- launch helpers ----------------------------------------------------- */

void sm90_grid(const Sm90Launch *l, const uint32_t irgrid[3], int sm_count, uint32_t grid[3])
{
	(void)l;
	int64_t tiles = (int64_t)((irgrid[0] + 1ull) / 2) * irgrid[1] * irgrid[2];
	if (sm_count < 1)
		sm_count = 1;
	grid[0] = (uint32_t)TA_MIN(tiles, (int64_t)sm_count);
	grid[1] = grid[2] = 1;
}

const char *sm90_check_shapes(const Sm90Launch *l, const Sm90Dims *t)
{
	for (int i = 0; i < l->ntmaps && i < 2; i++) {
		int r = l->tmaps[i].rank;
		for (int j = 0; j < r; j++) {
			if (t->d[i][j] < 0)
				return "negative size";
			if (t->d[i][j] > INT32_MAX)
				return "a size exceeds 2^31-1";
		}
		if (t->d[i][r - 1] % 8 != 0)
			return i == 0 || l->b_kmajor
			       ? "the sm_90a GEMM path needs K % 8 == 0 (TMA row strides are multiples of 16 bytes)"
			       : "the sm_90a GEMM path needs N % 8 == 0 for a [K, N] B (TMA row strides are multiples of 16 bytes)";
		if (r == 3 && t->d[i][1] * t->d[i][2] * 2 >= (1ll << 40))
			return "a batch stride reaches 2^40 bytes (TMA's limit)";
	}
	return NULL;
}

void sm90_tmap_dims(const Sm90Launch *l, int i, const Sm90Dims *t, uint64_t dims[3])
{
	int r = l->tmaps[i].rank;
	for (int j = 0; j < 3; j++)
		dims[j] = j < r ? (uint64_t)t->d[i][r - 1 - j] : 1;
}

/* ---- emission ----------------------------------------------------------- */

/* Layout constants of one entry. */
typedef struct {
	const Module *m;
	const Target *t;
	const Sm90Gemm *g;
	const SimtFunc *f;
	int BM, BN, ST;          /* IR block tile, ring stages */
	int a_bytes, b_bytes;    /* per stage */
	int64_t body_bytes;      /* the general lowering's shared memory per consumer */
	const char *range;       /* split-K: PTX setting %klo and %KT for the tile (%vby, %vbz), or NULL */
	int nrx;                 /* registers %xr<n> it uses */
	bool staged;             /* the lowering staged an accumulator copy for bulk stores (SI_BULK) */
	bool rows;               /* row split: consumer c computes rows 64c.. of both IR blocks (emit_swap) */
	int32_t acc;             /* C_f's first register (the row split's out-of-grid consumer uses them) */
	bool preswap;            /* the code before the loop leaves C_f in a layout the row split must swap */
	int64_t xoff;            /* the staging buffer's offset in a consumer's area (the swap's buffer) */
} Em;

/* Tile index %tile -> %vbz (IR block z), %vby (IR block row) and %cj (CTA
 * tile column): z outermost, then grouped order, GROUP_M tile rows at a
 * time, rows fastest inside a group, so CTAs running together share A and
 * B tiles in L2.  Then the tile's K range (split-K), the same in the
 * producer and the consumers. */
static void emit_tile_coords(const Em *e, StrBuf *o)
{
	sb_printf(o,
		"\tdiv.u32 %%vbz, %%tile, %%per_z;\n"
		"\trem.u32 %%zt, %%tile, %%per_z;\n"
		"\tdiv.u32 %%grp, %%zt, %%per_group;\n"
		"\trem.u32 %%gin, %%zt, %%per_group;\n"
		"\tmul.lo.u32 %%vby, %%grp, %d;\n"
		"\tsub.u32 %%gm, %%gy, %%vby;\n"
		"\tmin.u32 %%gm, %%gm, %d;\n"
		"\trem.u32 %%t0, %%gin, %%gm;\n"
		"\tadd.u32 %%vby, %%vby, %%t0;\n"
		"\tdiv.u32 %%cj, %%gin, %%gm;\n",
		GROUP_M, GROUP_M);
	if (e->range)
		sb_puts(o, e->range);
}

/* Advance the ring position: stage = (stage + 1) % ST, flipping the parity
 * on wrap-around. */
static void emit_ring_advance(const Em *e, StrBuf *o)
{
	sb_printf(o,
		"\tadd.u32 %%stage, %%stage, 1;\n"
		"\tsetp.eq.u32 %%pw, %%stage, %d;\n"
		"\t@%%pw mov.u32 %%stage, 0;\n"
		"\t@%%pw xor.b32 %%phase, %%phase, 1;\n",
		e->ST);
}

static void emit_producer(const Em *e, StrBuf *o)
{
	const Sm90Gemm *g = e->g;
	sb_printf(o,
		"\t// ---- producer warpgroup: one thread issues every TMA load ----\n"
		"\tsetmaxnreg.dec.sync.aligned.u32 %d;\n"
		"\tsetp.ne.u32 %%wp0, %%tw, 0;\n"
		"\t@%%wp0 bra $DONE;\n"
		"\tmov.u32 %%stage, 0;\n"
		"\tmov.u32 %%phase, 0;\n"
		"\tmov.u32 %%tile, %%ctaid.x;\n"
		"$P_TILE:\n"
		"\tsetp.ge.u32 %%wp0, %%tile, %%ntiles;\n"
		"\t@%%wp0 bra $DONE;\n",
		PRODUCER_REGS);
	emit_tile_coords(e, o);
	sb_printf(o,
		"\tmul.lo.u32 %%m0, %%vby, %d;\n"
		"\tmul.lo.u32 %%n0, %%cj, %d;\n"
		"\tsetp.eq.u32 %%wp0, %%KT, 0;\n"
		"\t@%%wp0 bra $P_NEXT;\n"
		"\tmov.u32 %%kt, 0;\n"
		"$P_K:\n"
		"\tshl.b32 %%t0, %%stage, 3;\n"
		"\tadd.u32 %%fb, %%bars, %%t0;\n"
		"\tadd.u32 %%eb, %%fb, %d;\n"
		"\txor.b32 %%t1, %%phase, 1;\n" /* a fresh barrier passes parity 1: first pass never blocks */
		"$P_WAIT:\n"
		"\tmbarrier.try_wait.parity.shared::cta.b64 %%pw, [%%eb], %%t1;\n"
		"\t@!%%pw bra $P_WAIT;\n"
		"\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%%fb], %d;\n"
		"\tmad.lo.u32 %%sa, %%stage, %d, %%base;\n"
		"\tmad.lo.u32 %%sb, %%stage, %d, %%base_b;\n"
		"\tadd.u32 %%k0, %%kt, %%klo;\n"
		"\tshl.b32 %%k0, %%k0, 6;\n",
		e->BM, 2 * e->BN, 8 * e->ST, e->a_bytes + e->b_bytes, e->a_bytes, e->b_bytes);
	/* A batched operand's map has the batch as its third (outermost) coordinate. */
	const char *za = g->a_batched ? ", %vbz" : "", *zb = g->b_batched ? ", %vbz" : "";
	sb_printf(o, "\tcp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     " [%%sa], [%%tmA, {%%k0, %%m0%s}], [%%fb];\n", g->a_batched ? 3 : 2, za);
	if (g->b_kmajor) {
		sb_printf(o, "\tcp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
			     " [%%sb], [%%tmB, {%%k0, %%n0%s}], [%%fb];\n", g->b_batched ? 3 : 2, zb);
	} else {
		/* [K, N] B: 64-column slabs; TMA clips each at N (zero fill). */
		for (int j = 0; j < 2 * e->BN / 64; j++) {
			sb_printf(o, "\tadd.u32 %%t2, %%n0, %d;\n\tadd.u32 %%t3, %%sb, %d;\n", 64 * j, SLAB_BYTES * j);
			sb_printf(o, "\tcp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
				     " [%%t3], [%%tmB, {%%t2, %%k0%s}], [%%fb];\n", g->b_batched ? 3 : 2, zb);
		}
	}
	emit_ring_advance(e, o);
	sb_puts(o,
		"\tadd.u32 %kt, %kt, 1;\n"
		"\tsetp.lt.u32 %wp0, %kt, %KT;\n"
		"\t@%wp0 bra $P_K;\n"
		"$P_NEXT:\n"
		"\tadd.u32 %tile, %tile, %nct;\n"
		"\tbra $P_TILE;\n");
}

/* Shared-memory matrix descriptors, 128B swizzle (layout 1 in bits 63:62).
 * K-major: SBO = 1024 (8 rows of 128 B), LBO unused (1).  MN-major B: LBO =
 * distance between 64-element MN slabs, SBO = 1024 between 8-row K groups. */
static void emit_desc(const char *dst, const char *addr, uint64_t hi_bits, StrBuf *o)
{
	sb_printf(o,
		"\tcvt.u64.u32 %s, %s;\n"
		"\tshr.u64 %s, %s, 4;\n"
		"\tand.b64 %s, %s, 16383;\n"
		"\tor.b64 %s, %s, 0x%016" PRIx64 ";\n",
		dst, addr, dst, dst, dst, dst, dst, dst, hi_bits);
}

static const uint64_t DESC_KMAJOR = (1ull << 62) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 16);
static const uint64_t DESC_MNMAJOR = (1ull << 62) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)(SLAB_BYTES >> 4) << 16);

/* Row split (Em.rows): consumer c computes rows 64c .. 64c+63 of both IR
 * blocks of the CTA tile as one m64n(2BN) accumulator, whose first BN/2
 * registers are block 2j's columns and the rest block 2j+1's; one wgmma per
 * k16 reads each operand from shared memory once (two m64nBN per consumer
 * read B twice: more shared-memory traffic than the SM has at the tensor
 * cores' rate).  The IR layout gives consumer c block 2j+c's two m-blocks
 * (registers acc .. and acc + BN/2 ..); swapping consumer 0's second half
 * with consumer 1's first turns either layout into the other.  The swap
 * goes through each consumer's staging buffer (copy_rf_staged's, free once
 * this thread's bulk stores have read it), 16 bytes per thread and step. */
static void emit_swap(const Em *e, int32_t acc, int id, StrBuf *o)
{
	int half = e->BN / 2;
	sb_printf(o,
		"\t// ---- swap accumulator halves with the other consumer (row split <-> IR blocks) ----\n"
		"\tcp.async.bulk.wait_group.read 0;\n"
		"\tbar.sync 3, 256;\n"
		"\tsetp.ne.u32 %%wp1, %%cw, 0;\n"
		"\tshl.b32 %%t1, %%tw, 4;\n"
		"\tadd.u32 %%t0, %%wsm, %" PRId64 ";\n"
		"\tadd.u32 %%t0, %%t0, %%t1;\n"
		"\txor.b32 %%t3, %%cw, 1;\n"
		"\tmad.lo.u32 %%t2, %%t3, %" PRId64 ", %%body;\n"
		"\tadd.u32 %%t2, %%t2, %" PRId64 ";\n"
		"\tadd.u32 %%t2, %%t2, %%t1;\n",
		e->xoff, e->body_bytes, e->xoff);
	for (int ld = 0; ld < 2; ld++) {
		sb_printf(o, "\t@%%wp1 bra $SW%d_%d;\n", id, 2 * ld);
		for (int c = 0; c < 2; c++) {
			int base = acc + (c ? 0 : half); /* consumer 0 trades its second half, consumer 1 its first */
			for (int r = 0; r < half; r += 4) {
				int q = base + r;
				if (ld)
					sb_printf(o, "\tld.shared.v4.f32 {%%f%d, %%f%d, %%f%d, %%f%d}, [%%t2+%d];\n", q, q + 1, q + 2,
						  q + 3, r / 4 * 2048);
				else
					sb_printf(o, "\tst.shared.v4.f32 [%%t0+%d], {%%f%d, %%f%d, %%f%d, %%f%d};\n", r / 4 * 2048, q,
						  q + 1, q + 2, q + 3);
			}
			if (!c)
				sb_printf(o, "\tbra $SW%d_%d;\n$SW%d_%d:\n", id, 2 * ld + 1, id, 2 * ld);
		}
		sb_printf(o, "$SW%d_%d:\n\tbar.sync 3, 256;\n", id, 2 * ld + 1);
	}
}

/* The consumer side of the ring for all of K, accumulating into the f32
 * registers from acc (M-block s of 64 rows holds acc + s*BN/2 ..: the wgmma
 * layout lower_kernel_wg gave C_f; with the row split, the row-split
 * layout).  `id` makes the labels unique (the loop is emitted twice with
 * the row split). */
static void emit_loop(const Em *e, int32_t acc, int id, StrBuf *o)
{
	const Sm90Gemm *g = e->g;
	const char *ty = g->in_dtype == DT_BF16 ? "bf16" : "f16";
	int nmb = e->rows ? 1 : e->BM / 64, per = e->BN / 2, wn = e->rows ? 2 * e->BN : e->BN;
	sb_printf(o,
		"\t// ---- the pipelined gemm loop: wgmma on the TMA ring ----\n"
		"\tsetp.eq.u32 %%wp0, %%KT, 0;\n"
		"\t@%%wp0 bra $C_KEND%d;\n"
		"\tmov.u32 %%kt, 0;\n"
		"$C_K%d:\n"
		"\tshl.b32 %%t0, %%stage, 3;\n"
		"\tadd.u32 %%fb, %%bars, %%t0;\n"
		"$C_WAIT%d:\n"
		"\tmbarrier.try_wait.parity.shared::cta.b64 %%pw, [%%fb], %%phase;\n"
		"\t@!%%pw bra $C_WAIT%d;\n",
		id, id, id, id);
	sb_printf(o,
		"\tmad.lo.u32 %%sa, %%stage, %d, %%base;\n"
		"\tmad.lo.u32 %%sb, %%stage, %d, %s;\n", /* %base_bw: this consumer's B columns */
		e->a_bytes, e->b_bytes, e->rows ? "%base_b" : "%base_bw");
	if (e->rows) /* this consumer's 64 rows of A */
		sb_puts(o, "\tmad.lo.u32 %sa, %cw, 8192, %sa;\n");
	/* Every descriptor is computed before wgmma.fence (no injected arrives). */
	emit_desc("%db0", "%sb", g->b_kmajor ? DESC_KMAJOR : DESC_MNMAJOR, o);
	int bstep = g->b_kmajor ? 2 : (16 * 128) >> 4; /* k16: 32 B along a K-major row, 16 rows of MN-major */
	for (int s = 0; s < nmb; s++) {
		char nm[16];
		snprintf(nm, sizeof nm, "%%da%d", 4 * s);
		if (s)
			sb_printf(o, "\tadd.u32 %%t1, %%sa, %d;\n", s * 64 * 128);
		emit_desc(nm, s ? "%t1" : "%sa", DESC_KMAJOR, o);
	}
	for (int s = 0; s < nmb; s++)
		for (int k = 1; k < 4; k++)
			sb_printf(o, "\tadd.s64 %%da%d, %%da%d, %d;\n", 4 * s + k, 4 * s, 2 * k);
	for (int k = 1; k < 4; k++)
		sb_printf(o, "\tadd.s64 %%db%d, %%db0, %d;\n", k, bstep * k);
	sb_puts(o, "\twgmma.fence.sync.aligned;\n");
	for (int k = 0; k < 4; k++)
		for (int s = 0; s < nmb; s++) {
			sb_printf(o, "\twgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", wn, ty, ty);
			for (int i = 0; i < wn / 2; i++)
				sb_printf(o, "%s%%f%d", i ? ", " : "", acc + s * per + i);
			sb_printf(o, "}, %%da%d, %%db%d, %%ptrue, 1, 1, 0, %d;\n", 4 * s + k, k, g->b_kmajor ? 0 : 1);
		}
	/* One group stays in flight: the wait leaves only this k-step's group
	 * running, so the previous stage can go back to the producer. */
	sb_printf(o,
		"\twgmma.commit_group.sync.aligned;\n"
		"\twgmma.wait_group.sync.aligned 1;\n"
		"\tsetp.ne.u32 %%wp1, %%kt, 0;\n"
		"\tand.pred %%wp1, %%wp1, %%plead;\n"
		"\t@%%wp1 mbarrier.arrive.shared::cta.b64 _, [%%prev_eb];\n"
		"\tadd.u32 %%prev_eb, %%fb, %d;\n",
		8 * e->ST);
	emit_ring_advance(e, o);
	sb_printf(o,
		"\tadd.u32 %%kt, %%kt, 1;\n"
		"\tsetp.lt.u32 %%wp0, %%kt, %%KT;\n"
		"\t@%%wp0 bra $C_K%d;\n"
		"\twgmma.wait_group.sync.aligned 0;\n"
		"\t@%%plead mbarrier.arrive.shared::cta.b64 _, [%%prev_eb];\n"
		"$C_KEND%d:\n",
		id, id);
}

/* SI_WG_GEMM_LOOP (ptx.h PtxWg): the loop over C_f's registers acc .. acc+n-1. */
static void emit_gemm_loop(const PtxWg *w, int32_t acc, int32_t n, StrBuf *o)
{
	const Em *e = w->ctx;
	(void)n;
	if (e->rows && e->preswap)
		emit_swap(e, acc, 0, o);
	emit_loop(e, acc, 0, o);
	if (e->rows)
		emit_swap(e, acc, 1, o);
}

/* Loads a problem size into register `reg`: a constant after -D, or the
 * u32 parameter of the shape symbol. */
static void emit_size(const Em *e, int32_t shape_expr, const char *reg, StrBuf *o)
{
	const Module *m = e->m;
	int64_t v;
	if (ir_const_int(m, shape_expr, &v)) {
		sb_printf(o, "\tmov.u32 %s, %" PRId64 ";\n", reg, v);
		return;
	}
	const Kernel *k = &m->kernels.data[e->g->kernel];
	int32_t var = EX(shape_expr)->var;
	for (int i = 0; i < k->nargs; i++)
		if (k->args[i].var == var) {
			sb_printf(o, "\tld.param.u32 %s, [_p%d];\n", reg, i);
			return;
		}
	sb_printf(o, "\tmov.u32 %s, 0;\n", reg); /* unreachable for a verified module */
}

static void emit_drain(const Em *e, StrBuf *o);

static void emit_consumer(const Em *e, StrBuf *o)
{
	const Sm90Gemm *g = e->g;
	/* this consumer's B columns: the second IR block's are BN further on */
	int boff = g->b_kmajor ? e->BN * 128 : (e->BN / 64) * SLAB_BYTES;
	sb_printf(o,
		"\t// ---- consumer warpgroups: IR block (2j + c, by), the kernel as lowered for 128 threads ----\n"
		"$CONSUMER:\n"
		"\tsetmaxnreg.inc.sync.aligned.u32 %d;\n"
		"\tsub.u32 %%cw, %%wg, 1;\n"
		"\tadd.u32 %%wbar, %%cw, 1;\n"
		"\tsetp.eq.u32 %%plead, %%tw, 0;\n"
		"\tsetp.eq.u32 %%ptrue, %%tw, %%tw;\n"
		"\tmad.lo.u32 %%base_bw, %%cw, %d, %%base_b;\n"
		"\tmad.lo.u32 %%wsm, %%cw, %" PRId64 ", %%body;\n"
		"\tmov.u32 %%stage, 0;\n"
		"\tmov.u32 %%phase, 0;\n"
		"\tmov.u32 %%tile, %%ctaid.x;\n"
		"$C_TILE:\n"
		"\tsetp.ge.u32 %%wp0, %%tile, %%ntiles;\n"
		"\t@%%wp0 bra $C_DONE;\n",
		CONSUMER_REGS, boff, e->body_bytes);
	emit_tile_coords(e, o);
	sb_printf(o,
		"\tshl.b32 %%vbx, %%cj, 1;\n"
		"\tadd.u32 %%vbx, %%vbx, %%cw;\n"
		"\tsetp.lt.u32 %%wp0, %%vbx, %%gx;\n"
		"\t@%%wp0 bra $C_BODY;\n");
	if (e->rows) {
		/* outside the IR grid (consumer 1 only): the row split still needs
		 * its half of the other block, and the swaps; no code of its own.
		 * Its registers hold rows 64.. of block 2j in the loop: without a
		 * swap before it they start as the clear made them, zero. */
		if (e->preswap)
			emit_swap(e, e->acc, 2, o);
		else
			for (int i = 0; i < e->BN; i++)
				sb_printf(o, "\tmov.f32 %%f%d, 0f00000000;\n", e->acc + i);
		emit_loop(e, e->acc, 1, o);
		emit_swap(e, e->acc, 3, o);
		sb_puts(o, "\tbra $C_NEXT;\n");
	} else {
		emit_drain(e, o);
	}
	sb_puts(o, "$C_BODY:\n");
	PtxWg w = {emit_gemm_loop, e};
	ptx_emit_code(e->f, e->t, &w, o);
	sb_puts(o,
		"$C_NEXT:\n"
		"\tadd.u32 %tile, %tile, %nct;\n"
		"\tbra $C_TILE;\n"
		/* the staged stores' shared source must outlive them */
		"$C_DONE:\n"
		"\tcp.async.bulk.wait_group 0;\n"
		"\tbra $DONE;\n");
}

/* Outside the IR grid (odd grid x): take this consumer's part of the ring, no code. */
static void emit_drain(const Em *e, StrBuf *o)
{
	sb_printf(o,
		"\tsetp.eq.u32 %%wp0, %%KT, 0;\n"
		"\t@%%wp0 bra $C_NEXT;\n"
		"\tmov.u32 %%kt, 0;\n"
		"$C_DRAIN:\n"
		"\tshl.b32 %%t0, %%stage, 3;\n"
		"\tadd.u32 %%fb, %%bars, %%t0;\n"
		"$C_DWAIT:\n"
		"\tmbarrier.try_wait.parity.shared::cta.b64 %%pw, [%%fb], %%phase;\n"
		"\t@!%%pw bra $C_DWAIT;\n"
		"\t@%%plead mbarrier.arrive.shared::cta.b64 _, [%%fb+%d];\n",
		8 * e->ST);
	emit_ring_advance(e, o);
	sb_puts(o,
		"\tadd.u32 %kt, %kt, 1;\n"
		"\tsetp.lt.u32 %wp0, %kt, %KT;\n"
		"\t@%wp0 bra $C_DRAIN;\n"
		"\tbra $C_NEXT;\n");
}

#define SMEM_DECL ".extern .shared .align 1024 .b8 ta_sm90_smem[];\n"

static void sm90_emit(const Em *e, StrBuf *o)
{
	const Module *m = e->m;
	const Sm90Gemm *g = e->g;
	const Kernel *k = &m->kernels.data[g->kernel];
	const Sm90Launch *l = &g->launch;
	const SimtFunc *f = e->f;
	sb_printf(o,
		"\n// %s: tileasm sm_90a GEMM path.  IR block %dx%d, k step %d, %d stages, 128 threads; emitted\n"
		"// with k step %d and %d TMA stages (one 128-byte swizzle row per k step; the ring's depth),\n"
		"// two IR blocks per CTA (%ux%u), 1 TMA producer + 2 wgmma consumer warpgroups, %s B,\n"
		"// persistent grid%s%s.  Outside the loop: the general lowering of the kernel for 128 threads%s.\n",
		k->name, g->ir_bm, g->ir_bn, g->ir_bk, g->ir_stages, BKT, e->ST, l->tile_m, l->tile_n,
		g->b_kmajor ? "K-major" : "N-major", g->a_batched || g->b_batched ? ", batched operands (bz)" : "",
		l->k_range ? ", the loop's K range per tile" : "",
		e->staged ? ";\n// the accumulator's copy to global memory goes through a shared staging buffer and per-row\n"
			    "// bulk stores (cp.async.bulk) that complete during the next tile's loop" : "");
	if (e->rows)
		sb_printf(o, "// Row split: in the loop, consumer c computes rows 64c..64c+63 of both IR blocks (one m64n%dk16\n"
			     "// per k16), and swaps accumulator halves with the other consumer %safter it.\n",
			  2 * e->BN, e->preswap ? "before and " : "");
	/* What a launcher must do (ptx_sm90.h's launch contract, with this entry's numbers). */
	sb_printf(o, "// launch: parameters = %s's, then\n", k->name);
	for (int i = 0; i < l->ntmaps; i++) {
		const Sm90Tmap *tm = &l->tmaps[i];
		sb_printf(o, "//   _tm%c: CUtensorMap of %s (%s, rank %d, box %ux%u%s innermost first, 128B swizzle, zero fill)\n",
			  "AB"[i], BUF(k->args[tm->arg].buf)->name, dtype_name((DType)tm->dtype), tm->rank, tm->box[0],
			  tm->box[1], tm->rank == 3 ? "x1" : "");
	}
	sb_printf(o, "//   then u32 gx, gy, gz = the IR grid; block (%u, 1, 1), grid (min(ceil(gx / 2) * gy * gz, SMs), 1, 1),\n"
		     "//   %lld bytes of dynamic shared memory (raise the function's limit first).  Each map's rows must be\n"
		     "//   16-byte multiples with a 16-byte aligned base (K %% 8 == 0%s); else launch %s.\n",
		  l->threads, (long long)l->smem_bytes, g->b_kmajor ? "" : ", N % 8 == 0", k->name);
	/* One declaration per module, shared by every sm90 entry in it. */
	if (!o->buf || !strstr(o->buf, SMEM_DECL))
		sb_puts(o, SMEM_DECL);
	sb_printf(o, ".visible .entry %s(", l->entry);
	for (size_t i = 0; i < f->params.len; i++) {
		static const char *const pt[VT_COUNT] = {"u32", "b16", "u32", "u64", "f32", "f64"};
		sb_printf(o, "\n\t.param .%s _p%zu /* %s */,", pt[f->params.data[i].vt], i, f->params.data[i].name);
	}
	sb_puts(o, "\n\t.param .align 64 .b8 _tmA[128],\n\t.param .align 64 .b8 _tmB[128],\n"
		   "\t.param .u32 _gx,\n\t.param .u32 _gy,\n\t.param .u32 _gz)\n");
	sb_printf(o, ".maxntid %d, 1, 1\n.minnctapersm 1\n{\n", THREADS);
	ptx_emit_decls(f, o);
	sb_puts(o,
		"\t.reg .pred %wp0, %wp1, %pw, %ptrue, %plead;\n"
		"\t.reg .b32 %thr, %wg, %tw, %cw, %wbar, %wsm, %K, %KT, %gx, %gy, %ntiles, %per_group, %nct;\n"
		"\t.reg .b32 %base, %base_b, %base_bw, %bars, %body, %stage, %phase, %tile, %grp, %gin, %gm;\n"
		"\t.reg .b32 %vbx, %vby, %cj, %m0, %n0, %kt, %k0, %fb, %eb, %prev_eb, %sa, %sb, %t0, %t1, %t2, %t3;\n"
		"\t.reg .b32 %vbz, %gz, %per_z, %zt, %klo, %xq, %xm, %xt;\n"
		"\t.reg .pred %xp0, %xp1;\n"
		"\t.reg .b64 %tmA, %tmB, %db0, %db1, %db2, %db3;\n");
	sb_printf(o, "\t.reg .b64 %%da<%d>;\n", 4 * (e->BM / 64));
	if (e->nrx)
		sb_printf(o, "\t.reg .b32 %%xr<%d>;\n", e->nrx);
	emit_size(e, BUF(g->a)->shape[BUF(g->a)->rank - 1], "%K", o); /* A [(Bt,) M, K] */
	int64_t ring = (int64_t)e->ST * (e->a_bytes + e->b_bytes);
	sb_printf(o,
		"\tld.param.u32 %%gx, [_gx];\n"
		"\tld.param.u32 %%gy, [_gy];\n"
		"\tld.param.u32 %%gz, [_gz];\n"
		"\tmov.u32 %%thr, %%tid.x;\n"
		"\tshr.u32 %%wg, %%thr, 7;\n"
		"\tand.b32 %%tw, %%thr, 127;\n"
		"\tmov.u32 %%nct, %%nctaid.x;\n"
		"\tmov.u32 %%klo, 0;\n" /* the whole of K, unless the tile's range says otherwise */
		"\tadd.u32 %%t0, %%K, %d;\n\tshr.u32 %%KT, %%t0, 6;\n"
		"\tadd.u32 %%t0, %%gx, 1;\n\tshr.u32 %%t0, %%t0, 1;\n" /* CTA tile columns: IR blocks in pairs */
		"\tmul.lo.u32 %%per_z, %%t0, %%gy;\n"
		"\tmul.lo.u32 %%ntiles, %%per_z, %%gz;\n"
		"\tmul.lo.u32 %%per_group, %%t0, %d;\n"
		"\tmov.u32 %%base, ta_sm90_smem;\n"
		"\tadd.u32 %%base, %%base, 1023;\n"
		"\tand.b32 %%base, %%base, -1024;\n"
		"\tadd.u32 %%base_b, %%base, %d;\n"
		"\tadd.u32 %%bars, %%base, %" PRId64 ";\n"
		"\tadd.u32 %%body, %%bars, %d;\n"
		"\tmov.b64 %%tmA, _tmA;\n\tcvta.param.u64 %%tmA, %%tmA;\n"
		"\tmov.b64 %%tmB, _tmB;\n\tcvta.param.u64 %%tmB, %%tmB;\n"
		"\tsetp.ne.u32 %%wp0, %%thr, 0;\n"
		"\t@%%wp0 bra $SYNC0;\n"
		"\tprefetch.tensormap [%%tmA];\n"
		"\tprefetch.tensormap [%%tmB];\n",
		BKT - 1, GROUP_M, e->ST * e->a_bytes, ring, 16 * e->ST);
	for (int s = 0; s < e->ST; s++)
		sb_printf(o,
			"\tmbarrier.init.shared::cta.b64 [%%bars+%d], 1;\n"
			"\tmbarrier.init.shared::cta.b64 [%%bars+%d], 2;\n",
			8 * s, 8 * (e->ST + s));
	sb_puts(o,
		"\tfence.mbarrier_init.release.cluster;\n"
		"$SYNC0:\n"
		"\tbar.sync 0;\n"
		"\tsetp.ne.u32 %wp0, %wg, 0;\n"
		"\t@%wp0 bra $CONSUMER;\n");
	emit_producer(e, o);
	emit_consumer(e, o);
	sb_puts(o, "$DONE:\n\tret;\n}\n");
}

/* The first top-level copy(C_f -> global tile) after the loop whose tensor
 * no other statement mentions: nothing in the kernel can observe when its
 * stores complete, so the lowering may make them asynchronous (copy_rf's
 * staged bulk store), or -1. */
static int32_t async_copy(const Module *m, const Kernel *k, const Sm90Gemm *g)
{
	bool after = false;
	for (int i = 0; i < k->body.n; i++) {
		int32_t id = k->body.ids[i];
		const Stmt *s = ST_(id);
		after = after || id == g->loop;
		if (after && s->kind == S_COPY && s->src.buf == g->cf && !s->src.nidx && BUF(s->dst.buf)->scope == SCOPE_GLOBAL &&
		    !block_uses(m, &k->body, s->dst.buf, id))
			return id;
	}
	return -1;
}

/* Does the code before the loop leave C_f anything but zero (a whole clear)?
 * Then the row split must swap it into its layout before the loop too (the
 * consumer outside the IR grid runs no such code: without the swap it
 * clears its registers itself). */
static bool acc_set_before(const Module *m, const Kernel *k, const Sm90Gemm *g)
{
	for (int i = 0; i < k->body.n && k->body.ids[i] != g->loop; i++) {
		int32_t id = k->body.ids[i];
		const Stmt *s = ST_(id);
		if (s->kind == S_CLEAR && s->dst.buf == g->cf && !s->dst.nidx)
			continue;
		Block one = {1, &id};
		if (block_uses(m, &one, g->cf, -1))
			return true;
	}
	return false;
}

Sm90Launch *sm90_gemm_try(const Module *m, int k, const Target *t, const LowerOptions *o, StrBuf *out)
{
	Sm90Gemm g;
	if (!sm90_gemm_match(m, k, &g))
		return NULL;
	LowerWg wg = {g.loop, g.cf, {g.as, g.bs}, async_copy(m, &m->kernels.data[k], &g)};
	SimtFunc f;
	Diag d;
	diag_init(&d);
	bool ok = false;
	Sm90Launch *l = NULL;
	StrBuf range = {0};
	if (lower_kernel_wg(m, k, t, o, &wg, &f, &ok, &d) || !ok)
		goto out;
	Em e = {m, t, &g, &f, g.ir_bm, g.ir_bn, 4, g.ir_bm * BKT * 2, 2 * g.ir_bn * BKT * 2, (f.smem_bytes + 15) & ~15LL,
		NULL, 0, false, false, -1, false, 0};
	for (size_t i = 0; i < f.code.len; i++) {
		e.staged = e.staged || f.code.data[i].op == SI_BULK;
		if (f.code.data[i].op == SI_WG_GEMM_LOOP)
			e.acc = f.code.data[i].dst;
	}
	/* the row split swaps through the staging buffer (64 BN bytes per thread row of the
	 * swap <= its R * (2 BN + 16)), so it needs one; two m-blocks per IR block */
	e.rows = e.staged && g.ir_bm == 128 && f.wg_stage >= 0 && !(o && (o->nvidia_off & LOWER_NV_WG_ROWS));
	e.preswap = acc_set_before(m, &m->kernels.data[k], &g);
	e.xoff = f.wg_stage;
	if (g.launch.k_range) { /* %klo = LO, %KT = max(HI - LO, 0) */
		const Stmt *loop = ST_(g.loop);
		Rx rx = {m, &m->kernels.data[k], g.loop, &range, 0};
		int lo = rx_emit(&rx, loop->lo, 0), hi = rx_emit(&rx, loop->hi, 0);
		sb_printf(&range, "\tmov.u32 %%klo, %%xr%d;\n\tsub.s32 %%KT, %%xr%d, %%xr%d;\n\tmax.s32 %%KT, %%KT, 0;\n", lo, hi,
			  lo);
		if (lo < 0 || hi < 0 || range.oom)
			goto out;
		e.range = range.buf;
		e.nrx = rx.n;
	}
	/* The deepest ring (at most 4 stages) that fits beside the two consumers' own shared memory. */
	int64_t total = 0;
	for (; e.ST >= 2; e.ST--) {
		total = (int64_t)e.ST * (e.a_bytes + e.b_bytes + 16) + 2 * e.body_bytes + 1024;
		if (total <= SMEM_MAX)
			break;
	}
	if (e.ST < 2)
		goto out;
	g.launch.stages = (uint32_t)e.ST;
	g.launch.smem_bytes = total;
	l = malloc(sizeof *l);
	if (!l)
		goto out;
	*l = g.launch;
	sm90_emit(&e, out);
out:
	sb_free(&range);
	simt_free(&f);
	diag_free(&d);
	return l;
}
