/* lower_mma_ldm.c — NVIDIA mma.m16n8k16 gemms into a register accumulator
 * with ldmatrix operands, and the A operand straight from a register
 * fragment (attention's P·V: no round trip through shared memory).
 *
 * The k loop is unrolled (K / 16 steps, at most 16), so every operand
 * address is a per-lane base register plus a constant:
 *  - A [M, K] in shared: one ldmatrix.x4 per 16x16 block (lane l points at
 *    row l % 8 + 8 * ((l / 8) & 1), column 8 * (l / 16): matrices a0..a3);
 *  - B [N, K] (transpose_b) by ldmatrix.x4, B [K, N] by ldmatrix.x4.trans:
 *    two 8-column n tiles per instruction ({b0, b1} of each);
 *  - A from a register fragment F (the copy(F, A_s) just before the gemm
 *    is dropped when nothing else reads A_s): F's C-layout slots of columns
 *    16ks .. 16ks + 15 are exactly the m16n8k16 A fragment of k step ks
 *    (n tiles 2ks and 2ks + 1), rounded to the input dtype like the copy.
 */
#include "lower_mma_impl.h"

enum { LDM_MAX_KSTEPS = 16 };

/* A shared operand ldmatrix can read: rows of a multiple of 16 bytes at a
 * 16-byte aligned offset (the k and n steps are multiples of 8 elements). */
static bool ldm_operand(L *c, int32_t b)
{
	const Buffer *x = BUF(b);
	return x->scope == SCOPE_SHARED && x->rank == 2 && c->bl[b].rf < 0 && c->bl[b].vf < 0 && !c->bl[b].wgm &&
	       (bdim(c, x, 1) * 2) % 16 == 0 && c->bl[b].smem % 16 == 0 && (x->dtype == DT_F16 || x->dtype == DT_BF16);
}

/* Register fragment F can be the A operand of gemm s (C its accumulator):
 * both in the PTX layout with one column tile per strip (ntn == 1), the
 * same strips (rows), F's columns = K. */
bool ldm_areg_fits(L *c, int32_t F, const Stmt *s)
{
	const BufLoc *fl = &c->bl[F], *cl = &c->bl[s->dst.buf];
	if (F < 0 || fl->rf < 0 || fl->rf_agpr || fl->rf_shape != MMA_M16N8K16 || fl->rf_ntn != 1 || fl->rf_dtype != DT_F32)
		return false;
	if (cl->rf < 0 || cl->rf_shape != MMA_M16N8K16 || cl->rf_ntn != 1)
		return false;
	int64_t K = bdim(c, BUF(s->src.buf), 1);
	return !s->flag_a && fl->rf_nb * 8 == K && fl->rf_n / (fl->rf_nb * 4) == cl->rf_n / (cl->rf_nb * 4) &&
	       bdim(c, BUF(F), 0) == bdim(c, BUF(s->dst.buf), 0);
}

/* Gemm s can take this path (A from shared, or from registers when areg). */
static bool ldm_ok(L *c, const Stmt *s, bool areg)
{
	const BufLoc *bl = &c->bl[s->dst.buf];
	const Buffer *A = BUF(s->src.buf);
	if (!target_is_nvidia(c->t->id) || (c->nv_off & LOWER_NV_LDMATRIX) || bl->rf < 0 || bl->rf_agpr ||
	    bl->rf_shape != MMA_M16N8K16 || bl->rf_nb % 2)
		return false;
	int64_t K = bdim(c, A, s->flag_a ? 0 : 1);
	if (K % 16 || K / 16 > LDM_MAX_KSTEPS || !ldm_operand(c, s->src2.buf) || BUF(s->src2.buf)->dtype != A->dtype)
		return false;
	return areg ? (A->dtype == DT_F16 || A->dtype == DT_BF16) : (!s->flag_a && ldm_operand(c, s->src.buf));
}

static bool reads_buf(L *c, const Block *b, int32_t buf, int32_t skip);

static bool expr_reads_buf(L *c, int32_t e, int32_t buf)
{
	if (e < 0)
		return false;
	const Expr *x = EX(e);
	if (x->kind == E_LOAD && x->buf == buf)
		return true;
	if ((x->kind == E_UNARY || x->kind == E_BINARY || x->kind == E_CAST) && expr_reads_buf(c, x->a, buf))
		return true;
	if (x->kind == E_BINARY && expr_reads_buf(c, x->b, buf))
		return true;
	if (x->kind == E_LOAD || x->kind == E_CALL)
		for (int i = 0; i < x->nargs; i++)
			if (expr_reads_buf(c, x->args[i], buf))
				return true;
	return false;
}

bool ldm_region_reads_buf(L *c, const Region *r, int32_t buf, bool whole)
{
	if (whole && r->buf == buf)
		return true;
	for (int i = 0; i < r->nidx; i++)
		if (expr_reads_buf(c, r->idx[i], buf))
			return true;
	return false;
}

/* Does any statement of block b other than `skip` read buf? */
static bool reads_buf(L *c, const Block *b, int32_t buf, int32_t skip)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (b->ids[i] == skip)
			continue;
		bool dst_read = s->kind == S_GEMM || s->kind == S_REDUCE || s->kind == S_ATOMIC_ADD;
		if (expr_reads_buf(c, s->value, buf) || expr_reads_buf(c, s->lo, buf) || expr_reads_buf(c, s->hi, buf) ||
		    ldm_region_reads_buf(c, &s->src, buf, true) || ldm_region_reads_buf(c, &s->src2, buf, true) ||
		    ldm_region_reads_buf(c, &s->dst, buf, dst_read))
			return true;
		for (int j = 0; s->kind == S_PARALLEL && j < s->nvars; j++)
			if (expr_reads_buf(c, s->extents[j], buf))
				return true;
		if (reads_buf(c, &s->body, buf, skip) || reads_buf(c, &s->els, buf, skip))
			return true;
	}
	return false;
}

bool lower_gemm_areg_skip(L *c, const Block *b, int i)
{
	if (i + 1 >= b->n || c->par)
		return false;
	const Stmt *cp = ST(b->ids[i]), *g = ST(b->ids[i + 1]);
	if (cp->kind != S_COPY || g->kind != S_GEMM || cp->src.nidx || cp->dst.nidx || g->src.buf != cp->dst.buf ||
	    g->src.nidx || g->src2.nidx || g->dst.nidx)
		return false;
	int32_t F = cp->src.buf, P = cp->dst.buf;
	if (BUF(P)->scope != SCOPE_SHARED || !ldm_areg_fits(c, F, g) || !(ldm_ok(c, g, true) || wgmma_areg_ok(c, g, F)) ||
	    bdim(c, BUF(P), 0) != bdim(c, BUF(F), 0) || bdim(c, BUF(P), 1) != bdim(c, BUF(F), 1))
		return false;
	if (reads_buf(c, &c->k->body, P, b->ids[i + 1]))
		return false;
	c->areg_buf = P;
	c->areg_frag = F;
	return true;
}

/* The i32 register pair of A elements (row, k), (row, k + 1) from slots e, e + 1 of F. */
int32_t ldm_areg_pair(L *c, int32_t F, int e, DType in)
{
	int32_t lo = pack(c, in, cvt(c, in, DT_F32, rf_get(c, F, e)));
	int32_t hi = pack(c, in, cvt(c, in, DT_F32, rf_get(c, F, e + 1)));
	int32_t r = reg(c, VT_I32);
	emit(c, I(SI_PACK2, DT_I32, r, lo, hi));
	return r;
}

static int32_t ldmatrix(L *c, int32_t addr, int64_t off, bool trans)
{
	int32_t r = (int32_t)c->f->regs.len;
	for (int k = 0; k < 4; k++)
		reg(c, VT_I32);
	SInst in = I(SI_LDMATRIX, DT_VOID, r, addr, -1);
	in.vec = 4;
	in.sub = trans;
	in.imm = off;
	emit(c, in);
	return r;
}

/* ---- swizzled operand tiles ----------------------------------------------
 *
 * A 2-D f16/bf16 shared tile with rows of a multiple of 128 bytes whose
 * only uses are copies into it from global memory and gemms of this path
 * is stored swizzled: 16-byte chunk j of row r at chunk j ^ (r % 8), so the
 * eight row addresses of one ldmatrix matrix (rows r .. r + 7, one chunk)
 * hit eight different bank groups: the shared-tile layout of
 * lower_swizzle.c with swz_bits 3, swz_shift 0, swz_mul 0, so the copies
 * (lower_elem_addr) and every other access follow it. */

/* Does statement s (not its nested bodies) name buffer b anywhere? */
bool ldm_names_buf(L *c, const Stmt *s, int32_t b)
{
	if (s->kind == S_ALLOC)
		return false;
	if (s->src.buf == b || s->src2.buf == b || s->dst.buf == b)
		return true;
	if (expr_reads_buf(c, s->value, b) || expr_reads_buf(c, s->lo, b) || expr_reads_buf(c, s->hi, b) ||
	    ldm_region_reads_buf(c, &s->src, b, false) || ldm_region_reads_buf(c, &s->src2, b, false) ||
	    ldm_region_reads_buf(c, &s->dst, b, false))
		return true;
	for (int j = 0; s->kind == S_PARALLEL && j < s->nvars; j++)
		if (expr_reads_buf(c, s->extents[j], b))
			return true;
	return false;
}

/* Every use of b in block bl is a copy from global memory into it or an
 * operand of a gemm this path takes. */
static bool swz_uses_ok(L *c, const Block *bl, int32_t b)
{
	for (int i = 0; i < bl->n; i++) {
		const Stmt *s = ST(bl->ids[i]);
		if (ldm_names_buf(c, s, b)) {
			bool cp = s->kind == S_COPY && s->dst.buf == b && BUF(s->src.buf)->scope == SCOPE_GLOBAL &&
				  !ldm_region_reads_buf(c, &s->src, b, false) && !ldm_region_reads_buf(c, &s->dst, b, false);
			bool gm = s->kind == S_GEMM && s->dst.buf != b && !s->src.nidx && !s->src2.nidx && !s->dst.nidx &&
				  ldm_ok(c, s, false);
			if (!cp && !gm)
				return false;
		}
		if (!swz_uses_ok(c, &s->body, b) || !swz_uses_ok(c, &s->els, b))
			return false;
	}
	return true;
}

void ldm_swizzle_analyze(L *c)
{
	if (!target_is_nvidia(c->t->id) || c->wg || (c->nv_off & LOWER_NV_SWIZZLE))
		return;
	FOR_KBUF(c, b) {
		const Buffer *x = BUF(b);
		BufLoc *bl = &c->bl[b];
		if (x->scope != SCOPE_SHARED || x->rank != 2 || dtype_bytes((DType)x->dtype) != 2 || bl->rf >= 0 ||
		    bl->vf >= 0 || bl->swz_bits || (bdim(c, x, 1) * 2) % 128 || bl->smem % 128)
			continue;
		if (swz_uses_ok(c, &c->k->body, (int32_t)b))
			bl->swz_bits = 3, bl->swz_shift = 0, bl->swz_mul = 0;
	}
}

/* ldmatrix row address of lane (row, chunk lchunk + kchunk) of operand b
 * plus `rows` rows: *off gets the constant part.  Unswizzled: base (the
 * lane's element at kchunk = rows = 0) + constants.  Swizzled: row % 8 is
 * the lane's l8 and lchunk ^ l8 (lx) is precomputed; lchunk and kchunk
 * have disjoint bits, so the chunk is (lx ^ kchunk). */
typedef struct {
	int32_t b, base, rowbase, lx;
	int64_t rowbytes;
} Opnd;

static Opnd opnd_setup(L *c, int32_t b, int32_t row, int32_t lchunk, int32_t l8)
{
	Opnd o = {b, -1, -1, -1, bdim(c, BUF(b), 1) * 2};
	if (!c->bl[b].swz_bits) {
		o.base = lower_sh_addr(c, b, row, bin(c, SI_MUL, DT_I32, lchunk, i32c(c, 8)));
		return o;
	}
	o.rowbase = bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, row, i32c(c, o.rowbytes)));
	o.lx = bin(c, SI_XOR, DT_I32, lchunk, l8);
	return o;
}

static int32_t opnd_addr(L *c, const Opnd *o, int64_t rows, int64_t kchunk, int64_t *off)
{
	*off = c->bl[o->b].smem + rows * o->rowbytes;
	if (!c->bl[o->b].swz_bits) {
		*off += kchunk * 16;
		return o->base;
	}
	int32_t ch = kchunk ? bin(c, SI_XOR, DT_I32, o->lx, i32c(c, kchunk)) : o->lx;
	return bin(c, SI_ADD, DT_I32, o->rowbase, bin(c, SI_SHL, DT_I32, ch, i32c(c, 4)));
}

bool lower_gemm_ldm(L *c, const Stmt *s)
{
	bool areg = c->areg_buf >= 0 && c->areg_buf == s->src.buf;
	int32_t F = c->areg_frag;
	c->areg_buf = c->areg_frag = -1;
	if (!ldm_ok(c, s, areg) || (areg && !ldm_areg_fits(c, F, s)))
		return false;
	const BufLoc *bl = &c->bl[s->dst.buf];
	DType in = (DType)BUF(s->src.buf)->dtype;
	int W = c->nthreads / 32, NB = bl->rf_nb, S = bl->rf_n / (NB * 4);
	int64_t K = bdim(c, BUF(s->src.buf), 1);
	if (s->flag_clear)
		for (int e = 0; e < bl->rf_n; e++)
			emit(c, I(SI_MOVF, DT_F32, bl->rf + e, -1, -1));
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t l8 = bin(c, SI_REM, DT_U32, lane, i32c(c, 8));
	int32_t lh = bin(c, SI_MUL, DT_I32, bin(c, SI_AND, DT_I32, bin(c, SI_DIV, DT_U32, lane, i32c(c, 8)), i32c(c, 1)),
			 i32c(c, 8));
	int32_t lq = bin(c, SI_MUL, DT_I32, bin(c, SI_DIV, DT_U32, lane, i32c(c, 16)), i32c(c, 8));
	int32_t lh8 = bin(c, SI_DIV, DT_U32, lh, i32c(c, 8)), lq8 = bin(c, SI_DIV, DT_U32, lq, i32c(c, 8));
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, warp, i32c(c, W * si));
		int32_t r0 = bin(c, SI_MUL, DT_I32, bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn)), i32c(c, 16));
		int32_t n0 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn)), i32c(c, 8 * NB));
		/* lane rows and 16-byte chunks: A (r0 + l8 + lh, lq / 8); B [N, K]:
		 * (n0 + l8 + lq, lh / 8); B [K, N]: (l8 + lh, (n0 + lq) / 8).  Every
		 * row is l8 modulo 8. */
		Opnd ao = {0};
		if (!areg)
			ao = opnd_setup(c, s->src.buf, bin(c, SI_ADD, DT_I32, r0, bin(c, SI_ADD, DT_I32, l8, lh)), lq8, l8);
		Opnd bo = s->flag_b ? opnd_setup(c, s->src2.buf, bin(c, SI_ADD, DT_I32, n0, bin(c, SI_ADD, DT_I32, l8, lq)),
						 lh8, l8)
				    : opnd_setup(c, s->src2.buf, bin(c, SI_ADD, DT_I32, l8, lh),
						 bin(c, SI_ADD, DT_I32, bin(c, SI_DIV, DT_U32, n0, i32c(c, 8)), lq8), l8);
		for (int64_t ks = 0; ks < K / 16; ks++) {
			int32_t af;
			if (areg) {
				int NBF = c->bl[F].rf_nb;
				int e0 = (int)((si * NBF + 2 * ks) * 4), e1 = e0 + 4;
				int32_t p[4] = {ldm_areg_pair(c, F, e0, in), ldm_areg_pair(c, F, e0 + 2, in), ldm_areg_pair(c, F, e1, in),
						ldm_areg_pair(c, F, e1 + 2, in)};
				af = (int32_t)c->f->regs.len;
				for (int q = 0; q < 4; q++)
					reg(c, VT_I32);
				for (int q = 0; q < 4; q++)
					emit(c, I(SI_MOV, DT_I32, af + q, p[q], -1));
			} else {
				int64_t off;
				int32_t a = opnd_addr(c, &ao, 0, 2 * ks, &off);
				af = ldmatrix(c, a, off, false);
			}
			for (int pr = 0; pr < NB / 2; pr++) {
				int64_t off;
				int32_t a = s->flag_b ? opnd_addr(c, &bo, 16 * pr, 2 * ks, &off) : opnd_addr(c, &bo, 16 * ks, 2 * pr, &off);
				int32_t bf = ldmatrix(c, a, off, !s->flag_b);
				for (int h = 0; h < 2; h++) {
					int32_t acc = bl->rf + (si * NB + 2 * pr + h) * 4;
					SInst m = I(SI_MMA, in, acc, af, bf + 2 * h);
					m.c = acc;
					m.sub = MMA_M16N8K16;
					emit(c, m);
				}
			}
		}
	}
	c->f->nmma++;
	return true;
}
