/* lower_swizzle.c — the shared-tile layout: which on-chip 2-D tiles get an
 * XOR-swizzled layout on AMD (swz_analyze) and the one address function
 * every access of such a tile goes through (lower_sh_addr), plus the
 * fragment pointers the MFMA/WMMA operand reads use (SwzPtr).
 *
 * Layout.  A swizzled buffer b[R][C] (row pitch P bytes, a power of two,
 * >= 32) keeps each row in place and permutes its 16-byte chunks: byte
 * column x of row r is stored at
 *
 *     r * P + ((x / 16) ^ s(r)) * 16 + x % 16,
 *     s(r) = ((r >> swz_shift) & (2^swz_bits - 1)) << swz_mul.
 *
 * So 16 aligned bytes of a row stay 16 contiguous, aligned bytes (b128
 * copies and operand reads keep their width) and s(r) is constant over
 * runs of 2^swz_shift rows and repeats every 2^(swz_shift + swz_bits) rows
 * (swz_period): a row step that is a multiple of the period, or a column
 * step of whole chunks beyond the XOR bits, is a constant byte offset.
 * For anyone writing such a tile (the global->LDS copies): take addresses
 * from lower_elem_addr / lower_sh_addr, never from row * pitch + column
 * arithmetic of your own; immediate offsets are exact only for the steps
 * swz_const_step accepts.
 *
 * Choice (docs/amd-backend.md, "Shared-tile layouts").  Only tiles whose
 * every access is a copy from/to a global tensor (lower_copy's generic
 * paths, all through lower_elem_addr) or an operand of an f16/bf16
 * MFMA16/WMMA16 gemm (lower_mma.c) are swizzled, by their operand role:
 *  - row role (the lane reads a k-run of one row: A, or B with
 *    transpose_b): the 8 lanes of a b128 group read 8 consecutive rows at
 *    the same chunk; s(r) = (r / q) % min(P/16, 8) with q = max(1, 128/P)
 *    rows per 128-byte bank row puts them in 8 distinct bank quads;
 *  - column role (u16 reads down k: B, or A with transpose_a; MFMA only —
 *    WMMA's lanes 16-31 repeat lanes 0-15): one 32-lane group reads two
 *    rows D apart (D = 4, or 8 with paired k-steps), 32 bytes each; s(r) =
 *    ((r / D) & 1) << min(2, log2(P/16) - 1) moves every second D-block of
 *    rows by 2 or 4 chunks, off the first one's banks. */
#include <stdlib.h>
#include <string.h>

#include "lower_impl.h"

static int ilog2(int64_t v)
{
	int b = 0;
	while ((1LL << b) < v)
		b++;
	return b;
}

int swz_period(const BufLoc *bl)
{
	return 1 << (bl->swz_shift + bl->swz_bits);
}

/* Byte address (shbase + offset, without the buffer's smem offset) of
 * element (row, col) of 2-D on-chip buffer bufid: the layout function. */
int32_t lower_sh_addr(L *c, int32_t bufid, int32_t row, int32_t col)
{
	const Buffer *b = BUF(bufid);
	const BufLoc *bl = &c->bl[bufid];
	int es = dtype_bytes((DType)b->dtype);
	int64_t pitch = bdim(c, b, 1) * es;
	if (bl->wgm) { /* wgmma's 128B-swizzle tiles: 64-column blocks of R rows x 128 bytes (lower_wgmma.c) */
		int32_t x = bin(c, SI_MUL, DT_I32, col, i32c(c, es));
		int32_t blk = bin(c, SI_SHR, DT_U32, x, i32c(c, 7));
		int32_t r8 = bin(c, SI_AND, DT_U32, row, i32c(c, 7));
		x = bin(c, SI_XOR, DT_U32, bin(c, SI_AND, DT_U32, x, i32c(c, 127)), bin(c, SI_SHL, DT_U32, r8, i32c(c, 4)));
		int32_t r = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, blk, i32c(c, bdim(c, b, 0) * 128)),
				bin(c, SI_MUL, DT_I32, row, i32c(c, 128)));
		return bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_ADD, DT_I32, r, x));
	}
	if (!bl->swz_bits) {
		int32_t lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, row, i32c(c, bdim(c, b, 1))), col);
		return bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, lin, i32c(c, es)));
	}
	int32_t x = bin(c, SI_MUL, DT_I32, col, i32c(c, es));
	int32_t s = bin(c, SI_AND, DT_U32, bin(c, SI_SHR, DT_U32, row, i32c(c, bl->swz_shift)),
			i32c(c, (1 << bl->swz_bits) - 1));
	/* ((x >> 4) ^ s) << 4 == x ^ (s << 4) */
	x = bin(c, SI_XOR, DT_U32, x, bin(c, SI_SHL, DT_U32, s, i32c(c, 4 + bl->swz_mul)));
	int32_t r = bin(c, SI_MUL, DT_I32, row, i32c(c, pitch));
	return bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_ADD, DT_I32, r, x));
}

/* ---- fragment pointers --------------------------------------------------- */

void swz_ptr_init(L *c, SwzPtr *p, int32_t bufid, int32_t row, int32_t col, int ralign, int cspan)
{
	memset(p, 0, sizeof *p);
	p->buf = bufid;
	p->row = row;
	p->col = col;
	p->ralign = ralign;
	p->cspan = cspan;
	p->m = -1;
	for (int k = 0; k < SWZ_MAXT; k++)
		p->base[k] = -1;
	p->base[0] = lower_sh_addr(c, bufid, row, col);
	const BufLoc *bl = &c->bl[bufid];
	if (bl->swz_bits)
		p->m = bin(c, SI_AND, DT_U32, bin(c, SI_SHR, DT_U32, row, i32c(c, bl->swz_shift)),
			   i32c(c, (1 << bl->swz_bits) - 1));
}

/* Can (drow, dcol) be added to the pointer's element as a constant byte
 * offset into its base variant?  Rows: s() must not change; columns: whole
 * chunks above the lane's own chunk bits (cspan, a power of two). */
static bool swz_const_step(const L *c, const SwzPtr *p, int64_t drow, int64_t dcolb)
{
	const BufLoc *bl = &c->bl[p->buf];
	if (!bl->swz_bits)
		return true;
	int64_t R = 1LL << bl->swz_shift, per = (int64_t)swz_period(bl);
	bool rows = drow >= 0 && (drow % per == 0 || (p->ralign % R == 0 && (drow / R) % (1LL << bl->swz_bits) == 0));
	return rows && (dcolb == 0 || (p->cspan && dcolb > 0 && dcolb % 16 == 0 && (dcolb / 16) % p->cspan == 0));
}

/* Address register and immediate (including the buffer's smem offset) of
 * element (row + drow, col + dcol). */
int32_t swz_ptr_at(L *c, SwzPtr *p, int64_t drow, int64_t dcol, int64_t *imm)
{
	const Buffer *b = BUF(p->buf);
	const BufLoc *bl = &c->bl[p->buf];
	int es = dtype_bytes((DType)b->dtype);
	int64_t pitch = bdim(c, b, 1) * es, dcolb = dcol * es;
	if (!swz_const_step(c, p, drow, dcolb)) { /* the full layout function */
		*imm = bl->smem;
		return lower_sh_addr(c, p->buf, drow ? bin(c, SI_ADD, DT_I32, p->row, i32c(c, drow)) : p->row,
				     dcol ? bin(c, SI_ADD, DT_I32, p->col, i32c(c, dcol)) : p->col);
	}
	*imm = bl->smem + drow * pitch + dcolb;
	if (!bl->swz_bits)
		return p->base[0];
	/* chunk d = dcolb / 16 lies above the lane's chunk bits, so the element
	 * is at chunk (lane chunk ^ m) + (d ^ m') with m' = m << mul restricted
	 * to d's bits: (d ^ m') - m' = d - 2 (d & m'), i.e. base variant
	 * T = d & (mask << mul) minus 32 * (T & m') bytes */
	int64_t d = dcolb / 16, T = d & ((int64_t)((1 << bl->swz_bits) - 1) << bl->swz_mul);
	int k = 0;
	while (k < SWZ_MAXT && p->base[k] >= 0 && p->t[k] != T)
		k++;
	if (k == SWZ_MAXT) { /* out of variants: the full layout function */
		*imm = bl->smem;
		return lower_sh_addr(c, p->buf, drow ? bin(c, SI_ADD, DT_I32, p->row, i32c(c, drow)) : p->row,
				     bin(c, SI_ADD, DT_I32, p->col, i32c(c, dcol)));
	}
	if (p->base[k] < 0) {
		int32_t mt = bin(c, SI_AND, DT_U32, bin(c, SI_SHL, DT_U32, p->m, i32c(c, bl->swz_mul)), i32c(c, T));
		p->t[k] = T;
		p->base[k] = bin(c, SI_SUB, DT_I32, p->base[0], bin(c, SI_SHL, DT_U32, mt, i32c(c, 5)));
	}
	return p->base[k];
}

/* ---- which tiles are swizzled ---------------------------------------------- */

typedef struct {
	uint8_t *bad;   /* some access would not go through the layout function */
	int8_t *role;   /* 0 none yet, 1 row, 2 column */
	uint8_t *dist;  /* column role: D (rows between the two h groups of a lane group) */
	uint8_t *wmma;  /* column role on a WMMA shape: no conflict to remove */
	uint8_t *busy;  /* touched by something other than copies, clear/fill and
	                 * an f16/bf16 MFMA16/WMMA16 gemm as its accumulator */
} SwzScan;

static bool on_chip(L *c, int32_t b)
{
	return b >= 0 && BUF(b)->scope != SCOPE_GLOBAL && BUF(b)->scope != SCOPE_LOCAL && c->bl[b].rf < 0 &&
	       c->bl[b].vf < 0 && c->bl[b].rr < 0;
}

static void swz_expr(L *c, SwzScan *z, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD && e->buf >= 0 && on_chip(c, e->buf))
		z->bad[e->buf] = 1;
	if (e->kind == E_LOAD && e->buf >= 0)
		z->busy[e->buf] = 1;
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		swz_expr(c, z, e->a);
		if (e->kind == E_BINARY)
			swz_expr(c, z, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			swz_expr(c, z, e->args[i]);
}

static void swz_region(L *c, SwzScan *z, const Region *r, bool ok)
{
	if (r->buf < 0)
		return;
	if (!ok && on_chip(c, r->buf))
		z->bad[r->buf] = 1;
	if (!ok)
		z->busy[r->buf] = 1;
	for (int i = 0; i < r->nidx; i++)
		swz_expr(c, z, r->idx[i]);
}

static void swz_role(SwzScan *z, int32_t b, int role, int D, bool wmma)
{
	if (!z->role[b]) {
		z->role[b] = (int8_t)role;
		z->dist[b] = (uint8_t)D;
		z->wmma[b] = wmma;
	}
}

static void swz_block(L *c, SwzScan *z, const Block *b);

static void swz_stmt(L *c, SwzScan *z, int32_t id)
{
	const Stmt *s = ST(id);
	swz_expr(c, z, s->value);
	swz_expr(c, z, s->lo);
	swz_expr(c, z, s->hi);
	switch ((StmtKind)s->kind) {
	case S_COPY: {
		/* the generic copy paths address the on-chip side per element or
		 * per aligned 16-byte vector, through lower_elem_addr */
		bool g = s->src.buf >= 0 && s->dst.buf >= 0 && (BUF(s->src.buf)->scope == SCOPE_GLOBAL) !=
		                                                   (BUF(s->dst.buf)->scope == SCOPE_GLOBAL);
		swz_region(c, z, &s->src, g);
		swz_region(c, z, &s->dst, g);
		break;
	}
	case S_GEMM: {
		int P = 1;
		int sh = lower_gemm_amd_operands(c, s, &P);
		bool ok = sh >= 0;
		swz_region(c, z, &s->src, ok);
		swz_region(c, z, &s->src2, ok);
		swz_region(c, z, &s->dst, ok && !on_chip(c, s->dst.buf));
		if (ok) {
			const MmaInfo *mi = &simt_mma[sh];
			bool wmma = sh == MMA_WMMA16;
			if (on_chip(c, s->src.buf))
				swz_role(z, s->src.buf, s->flag_a ? 2 : 1, mi->kstep * P, wmma);
			if (on_chip(c, s->src2.buf))
				swz_role(z, s->src2.buf, s->flag_b ? 1 : 2, mi->kstep * P, wmma);
		}
		break;
	}
	case S_CLEAR:
	case S_FILL:
		if (on_chip(c, s->dst.buf))
			z->bad[s->dst.buf] = 1;
		swz_region(c, z, &s->dst, true);
		break;
	case S_FOR:
	case S_PARALLEL:
		swz_block(c, z, &s->body);
		break;
	case S_IF:
		swz_block(c, z, &s->body);
		swz_block(c, z, &s->els);
		break;
	default:
		swz_region(c, z, &s->src, false);
		swz_region(c, z, &s->src2, false);
		swz_region(c, z, &s->dst, false);
		break;
	}
}

static void swz_block(L *c, SwzScan *z, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		swz_stmt(c, z, b->ids[i]);
}

void swz_analyze(L *c)
{
	if (!target_is_amd(c->t->id))
		return;
	SwzScan z;
	z.bad = lower_kb_bytes(c);
	z.role = (int8_t *)lower_kb_bytes(c);
	z.dist = lower_kb_bytes(c);
	z.wmma = lower_kb_bytes(c);
	z.busy = lower_kb_bytes(c);
	if (!z.bad || !z.role || !z.dist || !z.wmma || !z.busy) {
		c->failed = true;
		goto out;
	}
	swz_block(c, &z, &c->k->body);
	/* accumulators that may take the swapped MFMA layout (rf_place) */
	FOR_KBUF(c, b)
		c->bl[b].rf_swap = c->bl[b].rf >= 0 && !z.busy[b];
	FOR_KBUF(c, b) {
		const Buffer *buf = BUF(b);
		if (!z.role[b] || z.bad[b] || !on_chip(c, (int32_t)b) || buf->rank != 2)
			continue;
		int64_t P = bdim(c, buf, 1) * dtype_bytes((DType)buf->dtype), nch = P / 16;
		if (P < 32 || (P & (P - 1)))
			continue;
		BufLoc *bl = &c->bl[b];
		if (z.role[b] == 1) {
			int64_t q = P < 128 ? 128 / P : 1;
			bl->swz_shift = (uint8_t)ilog2(q);
			bl->swz_bits = (uint8_t)ilog2(nch < 8 ? nch : 8);
			bl->swz_mul = 0;
		} else if (!z.wmma[b] && nch >= 4 && z.dist[b]) {
			bl->swz_shift = (uint8_t)ilog2(z.dist[b]);
			bl->swz_bits = 1;
			bl->swz_mul = (uint8_t)(nch >= 8 ? 2 : 1);
		}
	}
out:
	free(z.bad);
	free(z.role);
	free(z.dist);
	free(z.wmma);
	free(z.busy);
}
