/* ptx_sm90_gemm.c — GEMM-shaped Tile IR kernels as warp-specialised Hopper
 * kernels (TMA + mbarrier ring + wgmma), see ptx_sm90.h for the contract.
 *
 * The emitted kernel (384 threads, one CTA per SM, persistent):
 *   warpgroup 0     producer.  setmaxnreg.dec 40; thread 0 walks the CTA's
 *                   tiles and, per k-step, waits for a free stage, arms the
 *                   stage's "full" barrier with the stage's byte count and
 *                   issues the TMA loads of the A and B tiles.
 *   warpgroups 1-2  consumers.  setmaxnreg.inc 232; each owns 64 rows of the
 *                   128x256 tile (128 f32 accumulators per thread), issues
 *                   4 x wgmma m64n256k16 per k-step, keeps one wgmma group in
 *                   flight and releases a stage one k-step late, then writes
 *                   its rows of C (packed column-pair stores, each
 *                   predicated on M and N).
 * The ring's stage/parity counters run on across tiles, so the producer
 * loads the next tile while the consumers are in the epilogue.
 *
 * Shared memory (base rounded up to 1024 B, the 128B swizzle atom):
 *   [A stage 0..ST)  128x64 halves, K-major, 16 KiB each
 *   [B stage 0..ST)  32 KiB each: K-major 256x64 (transpose_b), or MN-major:
 *                    four 64(k)x64(n) slabs, one TMA box each
 *   [full 0..ST) [empty 0..ST)  mbarriers, 8 B each
 */
#include <inttypes.h>
#include <stdio.h>

#include "ptx_sm90.h"

enum {
	BM = 128, BN = 256, BK = 64, ST = 4, THREADS = 384,
	A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES,
	SLAB_BYTES = BK * 128,  /* one 64-column MN-major slab of B */
	GROUP_M = 8,            /* tile rows per rasterisation group (L2 reuse) */
	PRODUCER_REGS = 40, CONSUMER_REGS = 232,
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

/* e is ceildiv(size, d) with size the same as shape expression `size`. */
static bool is_ceildiv(const Module *m, int32_t e, int32_t size, int64_t d)
{
	const Expr *x = EX(e);
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

/* copy(G[r0, c0], S) with S a whole shared buffer of the dtype of G.
 * Sets *g to G's buffer id. */
static bool match_load(const Module *m, const Stmt *s, int32_t *g, int32_t *sh)
{
	if (s->kind != S_COPY || s->src.nidx != 2 || s->dst.nidx != 0)
		return false;
	const Buffer *src = BUF(s->src.buf), *dst = BUF(s->dst.buf);
	if (src->scope != SCOPE_GLOBAL || src->rank != 2 || dst->scope != SCOPE_SHARED || dst->rank != 2 ||
	    src->dtype != dst->dtype)
		return false;
	*g = s->src.buf;
	*sh = s->dst.buf;
	return true;
}

bool sm90_gemm_match(const Module *m, int ki, Sm90Gemm *g)
{
	memset(g, 0, sizeof *g);
	if (!m->verified || ki < 0 || (size_t)ki >= m->kernels.len)
		return false;
	const Kernel *k = &m->kernels.data[ki];
	/* Statements: allocations, then clear; pipelined loop; copy out. */
	int32_t body[3];
	int nb = 0;
	for (int i = 0; i < k->body.n; i++) {
		const Stmt *s = ST_(k->body.ids[i]);
		if (s->kind == S_ALLOC)
			continue;
		if (nb == 3)
			return false;
		body[nb++] = k->body.ids[i];
	}
	if (nb != 3)
		return false;
	const Stmt *clr = ST_(body[0]), *loop = ST_(body[1]), *out = ST_(body[2]);
	if (clr->kind != S_CLEAR || loop->kind != S_FOR || loop->sub != LOOP_PIPELINED || out->kind != S_COPY ||
	    loop->body.n != 3)
		return false;
	int32_t cf = clr->dst.buf;
	const Buffer *cfb = BUF(cf);
	if (clr->dst.nidx != 0 || cfb->scope != SCOPE_FRAGMENT || cfb->dtype != DT_F32 || cfb->rank != 2)
		return false;

	/* Loop body: two loads (either order), then the gemm. */
	const Stmt *gm = ST_(loop->body.ids[2]);
	if (gm->kind != S_GEMM || gm->flag_a || gm->flag_clear || gm->dst.buf != cf || gm->dst.nidx != 0 ||
	    gm->src.nidx != 0 || gm->src2.nidx != 0)
		return false;
	int32_t g0, s0, g1, s1;
	if (!match_load(m, ST_(loop->body.ids[0]), &g0, &s0) || !match_load(m, ST_(loop->body.ids[1]), &g1, &s1))
		return false;
	int32_t a, as, b, bs;
	if (s0 == gm->src.buf && s1 == gm->src2.buf) {
		a = g0, as = s0, b = g1, bs = s1;
	} else if (s1 == gm->src.buf && s0 == gm->src2.buf) {
		a = g1, as = s1, b = g0, bs = s0;
	} else {
		return false;
	}
	const Stmt *la = ST_(loop->body.ids[0]), *lb = ST_(loop->body.ids[1]);
	if (a != g0) {
		const Stmt *t = la;
		la = lb;
		lb = t;
	}
	const Buffer *A = BUF(a), *B = BUF(b);
	if (!is_half(A->dtype) || B->dtype != A->dtype)
		return false;
	bool tb = gm->flag_b;
	int64_t bm = dim(m, as, 0), bk = dim(m, as, 1), bn = dim(m, cf, 1);
	if (dim(m, cf, 0) != bm || bm <= 0 || bk <= 0 || bn <= 0)
		return false;
	if (tb ? (dim(m, bs, 0) != bn || dim(m, bs, 1) != bk) : (dim(m, bs, 0) != bk || dim(m, bs, 1) != bn))
		return false;

	/* Copy out: copy(C_f, C[by * BM, bx * BN]). */
	if (out->src.buf != cf || out->src.nidx != 0 || out->dst.nidx != 2)
		return false;
	int32_t c = out->dst.buf;
	const Buffer *C = BUF(c);
	if (C->scope != SCOPE_GLOBAL || C->rank != 2 ||
	    !(C->dtype == DT_F16 || C->dtype == DT_BF16 || C->dtype == DT_F32))
		return false;

	/* Sizes: A [M, K], B [K, N] or [N, K], C [M, N]. */
	int32_t M = A->shape[0], K = A->shape[1], N = C->shape[1];
	if (!same_size(m, C->shape[0], M))
		return false;
	if (tb ? !(same_size(m, B->shape[0], N) && same_size(m, B->shape[1], K))
	       : !(same_size(m, B->shape[0], K) && same_size(m, B->shape[1], N)))
		return false;

	/* Index expressions: bx along N, by along M, ko along K. */
	int32_t bx = k->blockidx[0], by = k->blockidx[1], ko = loop->var;
	if (bx < 0 || by < 0)
		return false;
	if (!is_scaled_var(m, la->src.idx[0], by, bm) || !is_scaled_var(m, la->src.idx[1], ko, bk))
		return false;
	int32_t bi_n = tb ? lb->src.idx[0] : lb->src.idx[1], bi_k = tb ? lb->src.idx[1] : lb->src.idx[0];
	if (!is_scaled_var(m, bi_n, bx, bn) || !is_scaled_var(m, bi_k, ko, bk))
		return false;
	if (!is_scaled_var(m, out->dst.idx[0], by, bm) || !is_scaled_var(m, out->dst.idx[1], bx, bn))
		return false;
	/* Loop over exactly the K blocks; grid over exactly the C tiles. */
	if (!is_const(m, loop->lo, 0) || !is_ceildiv(m, loop->hi, K, bk))
		return false;
	if (k->ngrid < 2 || !is_ceildiv(m, k->grid[0], N, bn) || !is_ceildiv(m, k->grid[1], M, bm) ||
	    (k->ngrid == 3 && !is_const(m, k->grid[2], 1)))
		return false;

	/* Parameters: only tensors and shape symbols (scalars would need the
	 * generic path's conventions; GEMMs here take none). */
	if (k->nargs > SM90_MAX_PARAMS)
		return false;
	Sm90Launch *l = &g->launch;
	for (int i = 0; i < k->nargs; i++) {
		const KernelArg *ka = &k->args[i];
		Sm90Param p = {SM90P_PTR, i, -1};
		if (ka->buf < 0) {
			if (ka->var < 0 || VAR(ka->var)->kind != V_SYMBOL)
				return false;
			p.kind = SM90P_U32;
		} else if (ka->buf == a || ka->buf == b) {
			if (ka->buf == a && ka->buf == b)
				return false;
			p.kind = SM90P_TMAP;
			p.tmap = l->ntmaps;
			Sm90Tmap *t = &l->tmaps[l->ntmaps++];
			t->arg = i;
			t->dtype = A->dtype;
			t->swizzle = 3;
			t->box[0] = 64; /* 128 bytes: the swizzle span */
			t->box[1] = ka->buf == a ? BM : tb ? BN : BK;
		} else if (ka->buf != c) {
			return false; /* an unused tensor: fine semantically, but keep the pattern strict */
		}
		l->params[l->nparams++] = p;
	}
	if (l->ntmaps != 2 || l->tmaps[0].arg == l->tmaps[1].arg)
		return false;
	/* tmaps[0] must be A, tmaps[1] B, whatever the argument order. */
	if (k->args[l->tmaps[0].arg].buf != a) {
		Sm90Tmap t = l->tmaps[0];
		l->tmaps[0] = l->tmaps[1];
		l->tmaps[1] = t;
		for (int i = 0; i < l->nparams; i++)
			if (l->params[i].kind == SM90P_TMAP)
				l->params[i].tmap ^= 1;
	}
	if (snprintf(l->entry, sizeof l->entry, "%s_sm90", k->name) >= (int)sizeof l->entry)
		return false;
	int am = arg_of_buf(k, a), bmi = arg_of_buf(k, b), cm = arg_of_buf(k, c);
	if (am < 0 || bmi < 0 || cm < 0)
		return false;

	g->kernel = ki;
	g->a = a, g->b = b, g->c = c;
	g->in_dtype = A->dtype;
	g->out_dtype = C->dtype;
	g->b_kmajor = tb;
	g->ir_bm = (int32_t)bm, g->ir_bn = (int32_t)bn, g->ir_bk = (int32_t)bk, g->ir_stages = loop->stages;
	l->threads = THREADS;
	l->cluster[0] = l->cluster[1] = l->cluster[2] = 1;
	l->smem_bytes = (int64_t)ST * STAGE_BYTES + 16 * ST + 1024;
	l->tile_m = BM, l->tile_n = BN, l->tile_k = BK, l->stages = ST;
	l->m_arg = am, l->m_dim = 0;
	l->k_arg = am, l->k_dim = 1;
	l->n_arg = cm, l->n_dim = 1;
	l->b_kmajor = tb;
	return true;
}

/* ---- launch helpers ----------------------------------------------------- */

void sm90_grid(const Sm90Launch *l, int64_t M, int64_t N, int sm_count, uint32_t grid[3])
{
	int64_t tiles = ((M + l->tile_m - 1) / l->tile_m) * ((N + l->tile_n - 1) / l->tile_n);
	if (M <= 0 || N <= 0)
		tiles = 0;
	if (sm_count < 1)
		sm_count = 1;
	grid[0] = (uint32_t)TA_MIN(tiles, (int64_t)sm_count);
	grid[1] = grid[2] = 1;
}

const char *sm90_check_shapes(const Sm90Launch *l, int64_t M, int64_t N, int64_t K)
{
	if (M < 0 || N < 0 || K < 0)
		return "negative size";
	if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
		return "a size exceeds 2^31-1";
	if (K % 8 != 0)
		return "the sm_90a GEMM path needs K % 8 == 0 (TMA row strides are multiples of 16 bytes)";
	if (N % 2 != 0)
		return "the sm_90a GEMM path needs an even N (C is written in aligned column pairs)";
	if (!l->b_kmajor && N % 8 != 0)
		return "the sm_90a GEMM path needs N % 8 == 0 for a [K, N] B (TMA row strides are multiples of 16 bytes)";
	return NULL;
}

void sm90_tmap_dims(const Sm90Launch *l, int i, int64_t M, int64_t N, int64_t K, uint64_t dims[2])
{
	if (i == 0) { /* A [M, K] */
		dims[0] = (uint64_t)K, dims[1] = (uint64_t)M;
	} else if (l->b_kmajor) { /* B [N, K] */
		dims[0] = (uint64_t)K, dims[1] = (uint64_t)N;
	} else { /* B [K, N] */
		dims[0] = (uint64_t)N, dims[1] = (uint64_t)K;
	}
}

/* ---- emission ----------------------------------------------------------- */

void sm90_module_header(StrBuf *out)
{
	sb_puts(out, ".version 8.0\n.target sm_90a\n.address_size 64\n\n");
}

/* Loads a problem size into register `reg`: a constant after -D, or the
 * u32 parameter of the shape symbol. */
static void emit_size(const Module *m, const Sm90Gemm *g, int32_t shape_expr, const char *reg, StrBuf *o)
{
	int64_t v;
	if (ir_const_int(m, shape_expr, &v)) {
		sb_printf(o, "\tmov.u32 %s, %" PRId64 ";\n", reg, v);
		return;
	}
	const Kernel *k = &m->kernels.data[g->kernel];
	int32_t var = EX(shape_expr)->var;
	for (int i = 0; i < k->nargs; i++)
		if (k->args[i].var == var) {
			sb_printf(o, "\tld.param.u32 %s, [p%d];\n", reg, i);
			return;
		}
	sb_printf(o, "\tmov.u32 %s, 0;\n", reg); /* unreachable for a verified module */
}

/* Tile index %tile -> %m0, %n0 in grouped order: GROUP_M tile rows at a time,
 * M fastest inside a group, so CTAs running together share A and B tiles. */
static void emit_tile_coords(StrBuf *o)
{
	sb_printf(o,
		"\tdiv.u32 %%grp, %%tile, %%per_group;\n"
		"\trem.u32 %%gin, %%tile, %%per_group;\n"
		"\tmul.lo.u32 %%tm, %%grp, %d;\n"
		"\tsub.u32 %%gm, %%tiles_m, %%tm;\n"
		"\tmin.u32 %%gm, %%gm, %d;\n"
		"\trem.u32 %%t0, %%gin, %%gm;\n"
		"\tadd.u32 %%tm, %%tm, %%t0;\n"
		"\tdiv.u32 %%tn, %%gin, %%gm;\n"
		"\tshl.b32 %%m0, %%tm, 7;\n"
		"\tshl.b32 %%n0, %%tn, 8;\n",
		GROUP_M, GROUP_M);
}

/* Advance the ring position: stage = (stage + 1) % ST, flipping the parity
 * on wrap-around. */
static void emit_ring_advance(StrBuf *o)
{
	sb_printf(o,
		"\tadd.u32 %%stage, %%stage, 1;\n"
		"\tsetp.eq.u32 %%pw, %%stage, %d;\n"
		"\t@%%pw mov.u32 %%stage, 0;\n"
		"\t@%%pw xor.b32 %%phase, %%phase, 1;\n",
		ST);
}

static void emit_acc_list(StrBuf *o)
{
	sb_putc(o, '{');
	for (int i = 0; i < 128; i++)
		sb_printf(o, "%s%%f%d", i ? ", " : "", i);
	sb_putc(o, '}');
}

static void emit_producer(const Sm90Gemm *g, StrBuf *o)
{
	sb_printf(o,
		"\t// ---- producer warpgroup: one thread issues every TMA load ----\n"
		"\tsetmaxnreg.dec.sync.aligned.u32 %d;\n"
		"\tsetp.ne.u32 %%p0, %%tw, 0;\n"
		"\t@%%p0 bra $DONE;\n"
		"\tmov.u32 %%stage, 0;\n"
		"\tmov.u32 %%phase, 0;\n"
		"\tmov.u32 %%tile, %%ctaid.x;\n"
		"$P_TILE:\n"
		"\tsetp.ge.u32 %%p0, %%tile, %%ntiles;\n"
		"\t@%%p0 bra $DONE;\n",
		PRODUCER_REGS);
	emit_tile_coords(o);
	sb_printf(o,
		"\tsetp.eq.u32 %%p0, %%KT, 0;\n"
		"\t@%%p0 bra $P_NEXT;\n"
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
		"\tshl.b32 %%k0, %%kt, 6;\n"
		"\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		" [%%sa], [%%tmA, {%%k0, %%m0}], [%%fb];\n",
		8 * ST, STAGE_BYTES, A_BYTES, B_BYTES);
	if (g->b_kmajor) {
		sb_puts(o, "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
			   " [%sb], [%tmB, {%k0, %n0}], [%fb];\n");
	} else {
		/* [K, N] B: four 64-column slabs; TMA clips each at N. */
		for (int j = 0; j < BN / 64; j++) {
			sb_printf(o, "\tadd.u32 %%t2, %%n0, %d;\n\tadd.u32 %%t3, %%sb, %d;\n", 64 * j, SLAB_BYTES * j);
			sb_puts(o, "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
				   " [%t3], [%tmB, {%t2, %k0}], [%fb];\n");
		}
	}
	emit_ring_advance(o);
	sb_puts(o,
		"\tadd.u32 %kt, %kt, 1;\n"
		"\tsetp.lt.u32 %p0, %kt, %KT;\n"
		"\t@%p0 bra $P_K;\n"
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

static void emit_consumer_mainloop(const Sm90Gemm *g, StrBuf *o)
{
	const char *ty = g->in_dtype == DT_BF16 ? "bf16" : "f16";
	sb_puts(o,
		"\tsetp.eq.u32 %p0, %KT, 0;\n"
		"\t@%p0 bra $C_ZERO;\n"
		"\tmov.u32 %kt, 0;\n"
		"$C_K:\n"
		"\tshl.b32 %t0, %stage, 3;\n"
		"\tadd.u32 %fb, %bars, %t0;\n"
		"$C_WAIT:\n"
		"\tmbarrier.try_wait.parity.shared::cta.b64 %pw, [%fb], %phase;\n"
		"\t@!%pw bra $C_WAIT;\n");
	sb_printf(o,
		"\tmad.lo.u32 %%sa, %%stage, %d, %%base_a;\n" /* %base_a includes this warpgroup's 64 rows */
		"\tmad.lo.u32 %%sb, %%stage, %d, %%base_b;\n",
		A_BYTES, B_BYTES);
	/* Every descriptor is computed before wgmma.fence (no injected arrives). */
	emit_desc("%da0", "%sa", DESC_KMAJOR, o);
	emit_desc("%db0", "%sb", g->b_kmajor ? DESC_KMAJOR : DESC_MNMAJOR, o);
	int bstep = g->b_kmajor ? 2 : (16 * 128) >> 4; /* k16 step: 32 B within a K-major row, 16 rows of MN-major */
	for (int s = 1; s < 4; s++)
		sb_printf(o, "\tadd.s64 %%da%d, %%da0, %d;\n\tadd.s64 %%db%d, %%db0, %d;\n", s, 2 * s, s, bstep * s);
	sb_puts(o, "\tsetp.ne.u32 %pd, %kt, 0;\n\twgmma.fence.sync.aligned;\n");
	for (int s = 0; s < 4; s++) {
		sb_printf(o, "\twgmma.mma_async.sync.aligned.m64n256k16.f32.%s.%s ", ty, ty);
		emit_acc_list(o);
		sb_printf(o, ", %%da%d, %%db%d, %s, 1, 1, 0, %d;\n", s, s, s ? "%ptrue" : "%pd", g->b_kmajor ? 0 : 1);
	}
	/* One group stays in flight: the wait leaves only this k-step's group
	 * running, so the previous stage can go back to the producer. */
	sb_printf(o,
		"\twgmma.commit_group.sync.aligned;\n"
		"\twgmma.wait_group.sync.aligned 1;\n"
		"\tsetp.ne.u32 %%p1, %%kt, 0;\n"
		"\tand.pred %%p1, %%p1, %%plead;\n"
		"\t@%%p1 mbarrier.arrive.shared::cta.b64 _, [%%prev_eb];\n"
		"\tadd.u32 %%prev_eb, %%fb, %d;\n",
		8 * ST);
	emit_ring_advance(o);
	sb_puts(o,
		"\tadd.u32 %kt, %kt, 1;\n"
		"\tsetp.lt.u32 %p0, %kt, %KT;\n"
		"\t@%p0 bra $C_K;\n"
		"\twgmma.wait_group.sync.aligned 0;\n"
		"\t@%plead mbarrier.arrive.shared::cta.b64 _, [%prev_eb];\n"
		"\tbra $C_EPI;\n"
		"$C_ZERO:\n");
	for (int i = 0; i < 128; i++)
		sb_printf(o, "\tmov.f32 %%f%d, 0f00000000;\n", i);
}

/* Epilogue.  Accumulator i of lane l in warp w of the warpgroup holds
 * row 16w + l/4 + 8*((i>>1)&1), column 8*(i>>2) + 2*(l%4) + (i&1).
 * Elements go out in column pairs (one packed store each).  N is even
 * (sm90_check_shapes), so a pair is either wholly inside or wholly outside
 * the matrix: one predicate per pair and row covers full and edge tiles
 * alike, and keeps the entry small (the driver JIT time grows with it).
 * An unpredicated copy for full tiles measured no faster on an H200
 * (docs/performance.md) and made the entry 25% larger. */
static void emit_epilogue(const Sm90Gemm *g, StrBuf *o)
{
	int esz = dtype_bytes((DType)g->out_dtype);
	const char *cvt2 = g->out_dtype == DT_BF16 ? "cvt.rn.bf16x2.f32" : "cvt.rn.f16x2.f32";
	sb_printf(o,
		"$C_EPI:\n"
		"\tadd.u32 %%row, %%m0, %%row_in;\n"
		"\tadd.u32 %%col, %%n0, %%col_in;\n"
		"\tmul.wide.u32 %%ra, %%row, %%N;\n"
		"\tcvt.u64.u32 %%rb, %%col;\n"
		"\tadd.s64 %%ra, %%ra, %%rb;\n"
		"\tmad.lo.s64 %%ptr, %%ra, %d, %%pC;\n"
		"\tadd.s64 %%ptr8, %%ptr, %%row8;\n"
		"\tsub.s32 %%rlim, %%M, %%row;\n"
		"\tsub.s32 %%clim, %%N, %%col;\n"
		"\tsetp.gt.s32 %%pr0, %%rlim, 0;\n"
		"\tsetp.gt.s32 %%pr8, %%rlim, 8;\n",
		esz);
	for (int j = 0; j < BN / 8; j++) {
		int f = 4 * j;
		sb_printf(o,
			"\tsetp.gt.s32 %%pc, %%clim, %d;\n"
			"\tand.pred %%pe, %%pc, %%pr0;\n"
			"\tand.pred %%pe8, %%pc, %%pr8;\n",
			8 * j);
		if (g->out_dtype == DT_F32) {
			sb_printf(o, "\t@%%pe st.global.v2.f32 [%%ptr+%d], {%%f%d, %%f%d};\n", 32 * j, f, f + 1);
			sb_printf(o, "\t@%%pe8 st.global.v2.f32 [%%ptr8+%d], {%%f%d, %%f%d};\n", 32 * j, f + 2, f + 3);
		} else {
			sb_printf(o, "\t%s %%h2a, %%f%d, %%f%d;\n\t@%%pe st.global.b32 [%%ptr+%d], %%h2a;\n", cvt2, f + 1,
				  f, 16 * j);
			sb_printf(o, "\t%s %%h2b, %%f%d, %%f%d;\n\t@%%pe8 st.global.b32 [%%ptr8+%d], %%h2b;\n", cvt2,
				  f + 3, f + 2, 16 * j);
		}
	}
}

static void emit_consumer(const Sm90Gemm *g, StrBuf *o)
{
	int esz = dtype_bytes((DType)g->out_dtype);
	sb_printf(o,
		"\t// ---- consumer warpgroups: wgmma on 64 rows each, then the epilogue ----\n"
		"$CONSUMER:\n"
		"\tsetmaxnreg.inc.sync.aligned.u32 %d;\n"
		"\tsub.u32 %%cw, %%wg, 1;\n"
		"\tsetp.eq.u32 %%plead, %%tw, 0;\n"
		"\tsetp.eq.u32 %%ptrue, %%tw, %%tw;\n"
		"\tmad.lo.u32 %%base_a, %%cw, %d, %%base;\n"
		/* Epilogue constants: this thread's row and column in the tile. */
		"\tshr.u32 %%t0, %%tw, 5;\n"     /* warp in warpgroup */
		"\tand.b32 %%t1, %%tw, 31;\n"    /* lane */
		"\tshr.u32 %%t2, %%t1, 2;\n"
		"\tshl.b32 %%row_in, %%cw, 6;\n"
		"\tmad.lo.u32 %%row_in, %%t0, 16, %%row_in;\n"
		"\tadd.u32 %%row_in, %%row_in, %%t2;\n"
		"\tand.b32 %%t2, %%t1, 3;\n"
		"\tshl.b32 %%col_in, %%t2, 1;\n"
		"\tld.param.u64 %%pC, [p%d];\n"
		"\tcvta.to.global.u64 %%pC, %%pC;\n"
		"\tmul.wide.u32 %%row8, %%N, %d;\n"
		"\tmov.u32 %%stage, 0;\n"
		"\tmov.u32 %%phase, 0;\n"
		"\tmov.u32 %%tile, %%ctaid.x;\n"
		"$C_TILE:\n"
		"\tsetp.ge.u32 %%p0, %%tile, %%ntiles;\n"
		"\t@%%p0 bra $DONE;\n",
		CONSUMER_REGS, 64 * 128, g->launch.n_arg, 8 * esz);
	emit_tile_coords(o);
	emit_consumer_mainloop(g, o);
	emit_epilogue(g, o);
	sb_puts(o,
		"\tadd.u32 %tile, %tile, %nct;\n"
		"\tbra $C_TILE;\n");
}

#define SMEM_DECL ".extern .shared .align 1024 .b8 ta_sm90_smem[];\n\n"

void sm90_gemm_emit(const Module *m, const Sm90Gemm *g, StrBuf *o)
{
	const Kernel *k = &m->kernels.data[g->kernel];
	const Sm90Launch *l = &g->launch;
	const Buffer *A = BUF(g->a), *C = BUF(g->c);
	sb_printf(o,
		"// %s: tileasm sm_90a GEMM path (IR tile %dx%dx%d, %d stages; emitted as %ux%ux%u, %u stages,\n"
		"// %s B, persistent, warp-specialised: 1 TMA producer + 2 wgmma consumer warpgroups)\n",
		k->name, g->ir_bm, g->ir_bn, g->ir_bk, g->ir_stages, l->tile_m, l->tile_n, l->tile_k, l->stages,
		g->b_kmajor ? "K-major" : "N-major");
	/* One declaration per module, shared by every sm90 kernel in it. */
	if (!o->buf || !strstr(o->buf, SMEM_DECL))
		sb_puts(o, SMEM_DECL);
	sb_printf(o, ".visible .entry %s(\n", l->entry);
	for (int i = 0; i < l->nparams; i++) {
		const Sm90Param *p = &l->params[i];
		const char *sep = i + 1 < l->nparams ? "," : "";
		if (p->kind == SM90P_TMAP)
			sb_printf(o, "\t.param .align 64 .b8 p%d[128]%s\n", i, sep);
		else
			sb_printf(o, "\t.param .%s p%d%s\n", p->kind == SM90P_PTR ? "u64" : "u32", i, sep);
	}
	sb_printf(o, ")\n.maxntid %d, 1, 1\n.minnctapersm 1\n{\n", THREADS);
	sb_puts(o,
		"\t.reg .pred %p0, %p1, %pw, %pd, %ptrue, %plead, %pr0, %pr8, %pc, %pe, %pe8;\n"
		"\t.reg .b32 %thr, %wg, %tw, %cw, %M, %N, %K, %KT, %tiles_m, %tiles_n, %ntiles, %per_group, %nct;\n"
		"\t.reg .b32 %base, %base_a, %base_b, %bars, %stage, %phase, %tile, %grp, %gin, %gm, %tm, %tn;\n"
		"\t.reg .b32 %m0, %n0, %kt, %k0, %fb, %eb, %prev_eb, %sa, %sb, %row_in, %col_in, %row, %col;\n"
		"\t.reg .b32 %rlim, %clim, %t0, %t1, %t2, %t3, %h2a, %h2b;\n"
		"\t.reg .b64 %tmA, %tmB, %pC, %ra, %rb, %ptr, %ptr8, %row8;\n"
		"\t.reg .b64 %da0, %da1, %da2, %da3, %db0, %db1, %db2, %db3;\n"
		"\t.reg .f32 %f<128>;\n");
	/* Problem sizes and tile counts. */
	emit_size(m, g, A->shape[0], "%M", o);
	emit_size(m, g, C->shape[1], "%N", o);
	emit_size(m, g, A->shape[1], "%K", o);
	int ta = -1, tb = -1;
	for (int i = 0; i < l->nparams; i++)
		if (l->params[i].kind == SM90P_TMAP)
			*(l->params[i].tmap == 0 ? &ta : &tb) = i;
	sb_printf(o,
		"\tmov.u32 %%thr, %%tid.x;\n"
		"\tshr.u32 %%wg, %%thr, 7;\n"
		"\tand.b32 %%tw, %%thr, 127;\n"
		"\tmov.u32 %%nct, %%nctaid.x;\n"
		"\tadd.u32 %%t0, %%K, %d;\n\tshr.u32 %%KT, %%t0, 6;\n"
		"\tadd.u32 %%t0, %%M, %d;\n\tshr.u32 %%tiles_m, %%t0, 7;\n"
		"\tadd.u32 %%t0, %%N, %d;\n\tshr.u32 %%tiles_n, %%t0, 8;\n"
		"\tmul.lo.u32 %%ntiles, %%tiles_m, %%tiles_n;\n"
		"\tmul.lo.u32 %%per_group, %%tiles_n, %d;\n"
		"\tmov.u32 %%base, ta_sm90_smem;\n"
		"\tadd.u32 %%base, %%base, 1023;\n"
		"\tand.b32 %%base, %%base, -1024;\n"
		"\tadd.u32 %%base_b, %%base, %d;\n"
		"\tadd.u32 %%bars, %%base, %d;\n"
		"\tmov.b64 %%tmA, p%d;\n\tcvta.param.u64 %%tmA, %%tmA;\n"
		"\tmov.b64 %%tmB, p%d;\n\tcvta.param.u64 %%tmB, %%tmB;\n"
		"\tsetp.ne.u32 %%p0, %%thr, 0;\n"
		"\t@%%p0 bra $SYNC0;\n"
		"\tprefetch.tensormap [%%tmA];\n"
		"\tprefetch.tensormap [%%tmB];\n",
		BK - 1, BM - 1, BN - 1, GROUP_M, ST * A_BYTES, ST * STAGE_BYTES, ta, tb);
	for (int s = 0; s < ST; s++)
		sb_printf(o,
			"\tmbarrier.init.shared::cta.b64 [%%bars+%d], 1;\n"
			"\tmbarrier.init.shared::cta.b64 [%%bars+%d], 2;\n",
			8 * s, 8 * (ST + s));
	sb_puts(o,
		"\tfence.mbarrier_init.release.cluster;\n"
		"$SYNC0:\n"
		"\tbar.sync 0;\n"
		"\tsetp.ne.u32 %p0, %wg, 0;\n"
		"\t@%p0 bra $CONSUMER;\n");
	emit_producer(g, o);
	emit_consumer(g, o);
	sb_puts(o, "$DONE:\n\tret;\n}\n\n");
}

Sm90Launch *sm90_gemm_try(const Module *m, int k, StrBuf *out)
{
	Sm90Gemm g;
	if (!sm90_gemm_match(m, k, &g))
		return NULL;
	Sm90Launch *l = malloc(sizeof *l);
	if (!l)
		return NULL;
	sm90_gemm_emit(m, &g, out);
	*l = g.launch;
	return l;
}
