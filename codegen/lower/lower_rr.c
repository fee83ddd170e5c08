/* lower_rr.c — MMA-row fragments (part of the gemm lowering). */
#include "lower_mma_impl.h"

/* ---- MMA-row fragments -------------------------------------------------
 *
 * An f32 fragment D[R] that goes with register fragments F[R, C] (it is
 * the target of reduce(F, D, dim=1) or read as D[i] in their parallel
 * loops; otherwise only parallel (i) in (R) bodies that touch nothing but
 * row fragments, copies between row fragments and clear/fill) lives in
 * registers: row slot k of a thread is the k-th distinct row its F slots
 * cover.  That needs all column tiles of a row in one warp (ntn == 1, or
 * a single warp: rr_rows), so a row reduction is a per-thread fold and
 * butterfly shuffles among the lanes holding the row's columns: the
 * column of a slot depends on lane % 4 in the PTX m16n8k16 C layout (2t +
 * (q & 1)) and on lane % 16 in the MFMA/WMMA 16x16 layouts (i), while the
 * row does not; so xor 2, 1 (PTX) or 8, 4, 2, 1 (AMD) reach exactly the
 * lanes of the row.  Every lane holding a row ends with the same value. */

/* The row slot of slot e of an F laid out like rr_tile. */
static int rr_slot_of(L *c, int32_t F, int e)
{
	const BufLoc *bl = &c->bl[F];
	int spr;
	rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	if (warp_shape(bl->rf_shape))
		return e / (bl->rf_nb * 4) / spr * 2 + ((e % 4) >> 1);
	int nc = simt_mma[bl->rf_shape].nc;
	return e / (bl->rf_nb * nc) / spr * nc + e % nc;
}

/* The row (i32 register) of row slot k, from F's bases. */
static int32_t rr_row(L *c, int32_t F, const int32_t *rb, const int32_t *cb, int k)
{
	const BufLoc *bl = &c->bl[F];
	int spr, e;
	rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	if (warp_shape(bl->rf_shape)) {
		e = (k / 2) * spr * bl->rf_nb * 4 + 2 * (k % 2);
	} else {
		int nc = simt_mma[bl->rf_shape].nc;
		e = (k / nc) * spr * bl->rf_nb * nc + k % nc;
	}
	int32_t row, col;
	rf_rowcol(c, F, rb, cb, e, &row, &col);
	return row;
}

void rr_place(L *c, int32_t b)
{
	int spr;
	const Buffer *F = BUF(c->rr_tile);
	BufLoc *bl = &c->bl[b];
	bl->rr_n = rr_rows(c, bdim(c, F, 0), bdim(c, F, 1), &spr);
	bl->rr = (int32_t)c->f->regs.len;
	for (int k = 0; k < bl->rr_n; k++)
		reg(c, VT_F32);
}

static bool rr_find_expr(L *c, int32_t id)
{
	if (id < 0)
		return false;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD && c->bl[e->buf].rr >= 0)
		return true;
	bool r = false;
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST)
		r = rr_find_expr(c, e->a) || (e->kind == E_BINARY && rr_find_expr(c, e->b));
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs && !r; i++)
			r = rr_find_expr(c, e->args[i]);
	return r;
}

bool rr_find_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (rr_find_expr(c, s->value) || (s->kind == S_STORE && c->bl[s->dst.buf].rr >= 0))
			return true;
		for (int k = 0; k < s->dst.nidx; k++)
			if (rr_find_expr(c, s->dst.idx[k]))
				return true;
		if (s->kind == S_FOR && (rr_find_expr(c, s->lo) || rr_find_expr(c, s->hi)))
			return true;
		if ((s->kind == S_FOR || s->kind == S_IF) && (rr_find_block(c, &s->body) || rr_find_block(c, &s->els)))
			return true;
	}
	return false;
}

/* parallel (i) in (R) over row fragments: once per row slot, i = its row
 * (the lanes sharing a row compute the same values). */
void lower_parallel_rr(L *c, const Stmt *s)
{
	Shadows sh;
	int32_t ids[16];
	lower_shadows_begin(c, &s->body, &sh, ids);
	bool was = c->par;
	c->par = true;
	int32_t F = c->rr_tile, rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	int spr, n = rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	rf_bases(c, F, rb, cb);
	for (int k = 0; k < n && !c->failed; k++) {
		c->varreg[s->vars[0]] = cvt(c, (DType)VAR(s->vars[0])->type, DT_I32, rr_row(c, F, rb, cb, k));
		c->rr_slot = k;
		lower_shadows_copy(c, &sh);
		lower_block(c, &s->body);
	}
	c->rr_slot = -1;
	c->par = was;
	lower_shadows_end(c, &sh);
}

/* reduce(F, D, dim=1), F a register fragment and D a row fragment: per
 * row slot a balanced fold of the thread's slots of that row (in layout
 * order; abs first for abssum/absmax), then the butterfly among the row's
 * lanes, then the old value for clear=false. */
/* Row slot k of register fragment F reduced: a balanced fold of the
 * thread's slots of that row (in layout order; abs first for abssum/absmax),
 * then the butterfly among the row's lanes (all end with the value). */
static int32_t rr_fold(L *c, int32_t F, int k, ReduceOp op)
{
	const BufLoc *fl = &c->bl[F];
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	bool ab = op == RED_ABSSUM || op == RED_ABSMAX;
	int lanes = warp_shape(fl->rf_shape) ? 4 : 16;
	int32_t vals[256];
	int n = 0;
	for (int e = 0; e < fl->rf_n && n < 256; e++)
		if (rr_slot_of(c, F, e) == k) {
			int32_t x = rf_get(c, F, e);
			vals[n++] = ab ? un(c, SI_ABS, DT_F32, x) : x;
		}
	for (int w = 1; w < n; w *= 2)
		for (int i = 0; i + w < n; i += 2 * w)
			vals[i] = lower_combine(c, cop, DT_F32, vals[i], vals[i + w]);
	int32_t acc = vals[0];
	for (int off = lanes / 2; off >= 1; off /= 2) {
		int32_t other = reg(c, VT_F32);
		SInst in = I(SI_SHFL_BFLY, DT_F32, other, acc, -1);
		in.imm = off;
		emit(c, in);
		acc = lower_combine(c, cop, DT_F32, acc, other);
	}
	return acc;
}

void reduce_rr(L *c, const Stmt *s)
{
	int32_t F = s->src.buf, D = s->dst.buf;
	ReduceOp op = (ReduceOp)s->sub;
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	for (int k = 0; k < c->bl[D].rr_n; k++) {
		int32_t acc = rr_fold(c, F, k, op);
		int32_t d = c->bl[D].rr + k;
		emit(c, I(SI_MOV, DT_F32, d, s->flag_clear ? acc : lower_combine(c, cop, DT_F32, d, acc), -1));
	}
}

/* reduce(F, D, dim=1) with F a register fragment and D in shared memory:
 * the row folds of reduce_rr, then the first lane holding each row writes
 * it (the other lanes of the row hold the same value). */
void reduce_rf_mem(L *c, const Stmt *s)
{
	int32_t F = s->src.buf, D = s->dst.buf;
	const BufLoc *fl = &c->bl[F];
	ReduceOp op = (ReduceOp)s->sub;
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	bool warp = warp_shape(fl->rf_shape);
	int spr, n = rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	rf_bases(c, F, rb, cb);
	int32_t lane = warp ? bin(c, SI_REM, DT_U32, c->tid, i32c(c, 4)) : amd_lane(c, simt_mma[fl->rf_shape].wave).i;
	int32_t first = setp(c, CMP_EQ, DT_I32, lane, i32c(c, 0));
	for (int k = 0; k < n; k++) {
		int32_t acc = rr_fold(c, F, k, op);
		int32_t row = rr_row(c, F, rb, cb, k);
		if (!s->flag_clear)
			acc = lower_combine(c, cop, DT_F32, lower_load_elem(c, D, &row, -1), acc); /* every lane: a row is in one warp */
		lower_store_elem(c, D, &row, acc, first);
	}
}

void lower_parallel_rf(L *c, const Stmt *s, int32_t F)
{
	Shadows sh;
	int32_t ids[16];
	lower_shadows_begin(c, &s->body, &sh, ids);
	bool was = c->par;
	c->par = true;
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	rf_bases(c, F, rb, cb);
	bool rows = c->rr_tile >= 0 && bdim(c, BUF(F), 0) == bdim(c, BUF(c->rr_tile), 0) &&
		    rr_rows_alike(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), bdim(c, BUF(c->rr_tile), 1));
	for (int e = 0; e < c->bl[F].rf_n && !c->failed; e++) {
		int32_t row, col;
		rf_rowcol(c, F, rb, cb, e, &row, &col);
		c->rr_slot = rows ? rr_slot_of(c, F, e) : -1;
		c->varreg[s->vars[0]] = cvt(c, (DType)VAR(s->vars[0])->type, DT_I32, row);
		c->varreg[s->vars[1]] = cvt(c, (DType)VAR(s->vars[1])->type, DT_I32, col);
		c->rf_slot = e;
		lower_shadows_copy(c, &sh);
		lower_block(c, &s->body);
	}
	c->rf_slot = c->rr_slot = -1;
	c->par = was;
	lower_shadows_end(c, &sh);
}

/* Whole register fragment <-> a tile of a global/shared buffer.  Row
 * addresses and row bounds are computed once per strip half; each slot
 * then costs a column add, a column check and the access. */
/* Slot e of register fragment F to (from) or from element [rowaddr + imm]
 * of type ot in space sp, under pred ok (-1: always); direct: f32 -> f16/
 * bf16 by the pack alone. */
static void rf_elem_xfer(L *c, bool from, int32_t F, int e, Space sp, DType ot, int32_t rowaddr, int64_t imm,
			 int32_t ok, bool direct)
{
	DType ft = (DType)c->bl[F].rf_dtype;
	if (from) {
		int32_t r = rf_get(c, F, e);
		if (c->rf_atomic && !lower_atomic_native(c, ATOMIC_ADD, sp, ot)) {
			/* no add instruction for ot (AMD f16/bf16, small types): the
			 * compare-and-swap loop on the word holding the element, the
			 * value rounded to ot first as the interpreter does */
			DType at = sp == SP_GLOBAL ? DT_I64 : DT_I32;
			int32_t ea = imm ? bin(c, SI_ADD, at, rowaddr, movi(c, at, imm)) : rowaddr;
			lower_cas_update(c, sp, ea, ot, ATOMIC_ADD, cvt(c, ot, ft, r), -1, ok);
			return;
		}
		int32_t v = pack(c, ot, direct ? r : cvt(c, ot, ft, r));
		if (c->rf_atomic) {
			SInst in = I(SI_ATOM_ADD, ot, -1, rowaddr, v);
			in.sub = (uint8_t)sp;
			in.imm = imm;
			in.guard = ok;
			emit(c, in);
			return;
		}
		st(c, sp, ot, rowaddr, imm, v, ok);
		return;
	}
	int32_t v = ok >= 0 ? zero_storage(c, ot) : reg(c, simt_storage_vt(ot));
	SInst in = I(SI_LD, ot, v, rowaddr, -1);
	in.sub = (uint8_t)sp;
	in.imm = imm;
	in.guard = ok;
	emit(c, in);
	emit(c, I(SI_MOV, ft, c->bl[F].rf + e, cvt(c, ft, ot, unpack(c, ot, v)), -1));
}

/* copy_rf for a swapped MFMA layout (BufLoc.rf_swap): a lane holds one
 * row per strip and, per column group nb, the four consecutive columns
 * cb + 16 nb + 0..3.  To global f16/bf16: a strip row whose columns are
 * all inside and whose address is 8-byte aligned stores each group's four
 * values as one dwordx2 (two packed pairs); other rows, other types and
 * the other direction go element by element under their checks. */
static void copy_rf_swap(L *c, const Stmt *s, bool from, int32_t F, const Region *other)
{
	const Buffer *ob = BUF(other->buf);
	DType ot = (DType)ob->dtype, ft = (DType)c->bl[F].rf_dtype;
	int es = dtype_bytes(ot), NB = c->bl[F].rf_nb, nc = simt_mma[c->bl[F].rf_shape].nc;
	bool glob = ob->scope == SCOPE_GLOBAL;
	const BufLoc *obl = &c->bl[other->buf];
	Window w = lower_window(c, s, other);
	int32_t shb = !glob && w.base >= 0 ? bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, w.base, i32c(c, es)))
	                                   : c->shbase;
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	int S = rf_bases(c, F, rb, cb);
	bool direct = ft == DT_F32 && (ot == DT_F16 || ot == DT_BF16);
	for (int si = 0; si < S; si++) {
		int32_t orow = bin(c, SI_ADD, DT_I32, w.off[0], rb[si]);
		int32_t ocb = bin(c, SI_ADD, DT_I32, w.off[1], cb[si]);
		int32_t rowok = glob ? setp(c, CMP_LT, DT_U32, orow, w.bound[0]) : -1;
		if (w.ok >= 0)
			rowok = bin(c, SI_AND, DT_BOOL, rowok, w.ok);
		int32_t rowaddr;
		if (glob) {
			int32_t lin = bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, orow), w.pitch),
					  cvt(c, DT_I64, DT_I32, ocb));
			rowaddr = bin(c, SI_ADD, DT_I64, w.base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)));
		} else {
			int32_t lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, orow, w.pitch), ocb);
			rowaddr = bin(c, SI_ADD, DT_I32, shb, bin(c, SI_MUL, DT_I32, lin, i32c(c, es)));
		}
		int32_t lslow = -1, lend = -1;
		if (from && glob && es == 2 && nc == 4 && !c->rf_atomic) {
			int32_t lo = bin(c, SI_AND, DT_I32, cvt(c, DT_I32, DT_I64, rowaddr), i32c(c, 7));
			int32_t fast = bin(c, SI_AND, DT_BOOL, rowok, setp(c, CMP_EQ, DT_I32, lo, i32c(c, 0)));
			int32_t last = bin(c, SI_ADD, DT_I32, ocb, i32c(c, 16 * (NB - 1) + 3));
			fast = bin(c, SI_AND, DT_BOOL, fast, setp(c, CMP_LT, DT_U32, last, w.bound[1]));
			lslow = label(c), lend = label(c);
			bra(c, lslow, fast, true);
			for (int nb = 0; nb < NB; nb++) {
				int32_t pk = reg(c, VT_I32);
				reg(c, VT_I32);
				for (int j = 0; j < 2; j++) {
					int e0 = (si * NB + nb) * nc + 2 * j;
					int32_t v0 = rf_get(c, F, e0), v1 = rf_get(c, F, e0 + 1);
					v0 = pack(c, ot, direct ? v0 : cvt(c, ot, ft, v0));
					v1 = pack(c, ot, direct ? v1 : cvt(c, ot, ft, v1));
					emit(c, I(SI_PACK2, DT_I32, pk + j, v0, v1));
				}
				SInst st2 = I(SI_ST, DT_I32, -1, rowaddr, pk);
				st2.sub = SP_GLOBAL;
				st2.imm = 32LL * nb;
				st2.vec = 2;
				emit(c, st2);
			}
			bra(c, lend, -1, false);
			place(c, lslow);
		}
		for (int nb = 0; nb < NB; nb++)
			for (int q = 0; q < nc; q++) {
				int e = (si * NB + nb) * nc + q, dc = 16 * nb + q;
				int32_t ok = rowok;
				if (glob)
					ok = bin(c, SI_AND, DT_BOOL, rowok,
						 setp(c, CMP_LT, DT_U32, dc ? bin(c, SI_ADD, DT_I32, ocb, i32c(c, dc)) : ocb,
						      w.bound[1]));
				Space sp = glob ? SP_GLOBAL : SP_SHARED;
				int64_t imm = (int64_t)dc * es + (glob ? 0 : obl->smem);
				rf_elem_xfer(c, from, F, e, sp, ot, rowaddr, imm, ok, direct);
			}
		if (lend >= 0)
			place(c, lend);
	}
}

/* Slots e and e + 1 of register fragment F (f32 or other) as one i32 of two
 * packed 16-bit ot values (a column pair of the MMA/wgmma layout). */
static int32_t rf_pair(L *c, int32_t F, int e, DType ot)
{
	DType ft = (DType)c->bl[F].rf_dtype;
	int32_t v0 = pack(c, ot, cvt(c, ot, ft, rf_get(c, F, e)));
	int32_t v1 = pack(c, ot, cvt(c, ot, ft, rf_get(c, F, e + 1)));
	int32_t pk = reg(c, VT_I32);
	emit(c, I(SI_PACK2, DT_I32, pk, v0, v1));
	return pk;
}

/* sm_90a GEMM entry: the copy of the accumulator F to a global tile that
 * may complete asynchronously (LowerWg.async_copy), as one shared staging
 * buffer (R rows of 2C + 16 bytes: the 8 rows of one 32-bit store land in
 * 32 different banks) and one bulk store per row (cp.async.bulk), which
 * runs while the consumer goes on to its next tile's loop.  Taken when
 * every row start is 16-byte aligned and the columns inside the tensor are
 * a multiple of 8 (the bulk copy's 16-byte granularity), a uniform test;
 * otherwise the code goes to lslow (copy_rf's stores).  Before rewriting the
 * buffer each thread waits until its previous bulk stores have read it. */
static void copy_rf_staged(L *c, int32_t F, const Window *w, const int32_t *rb, const int32_t *cb, int S, DType ot,
			   int32_t lslow)
{
	int NB = c->bl[F].rf_nb;
	int64_t R = bdim(c, BUF(F), 0), pitch = 16 * NB + 16;
	if (c->wg_stage < 0) {
		c->wg_stage = (c->f->smem_bytes + 15) & ~15LL;
		c->f->smem_bytes = c->wg_stage + R * pitch;
	}
	int32_t off0 = w->off[0], off1 = w->off[1];
	int32_t ncols = bin(c, SI_MIN, DT_I32, bin(c, SI_MAX, DT_I32, bin(c, SI_SUB, DT_I32, w->bound[1], off1), i32c(c, 0)),
			    i32c(c, 8 * NB));
	int32_t mis = bin(c, SI_OR, DT_I32, cvt(c, DT_I32, DT_I64, w->base),
			  bin(c, SI_MUL, DT_I32, cvt(c, DT_I32, DT_I64, w->pitch), i32c(c, 2)));
	mis = bin(c, SI_OR, DT_I32, mis, bin(c, SI_MUL, DT_I32, off1, i32c(c, 2)));
	mis = bin(c, SI_OR, DT_I32, mis, bin(c, SI_MUL, DT_I32, ncols, i32c(c, 2)));
	int32_t fast = setp(c, CMP_EQ, DT_I32, bin(c, SI_AND, DT_I32, mis, i32c(c, 15)), i32c(c, 0));
	if (w->ok >= 0)
		fast = bin(c, SI_AND, DT_BOOL, fast, w->ok);
	bra(c, lslow, fast, true);
	SInst b = I(SI_BULK, DT_VOID, -1, -1, -1);
	b.sub = BULK_WAIT_READ;
	emit(c, b);
	emit(c, I(SI_BAR, DT_VOID, -1, -1, -1));
	int32_t stg = bin(c, SI_ADD, DT_I32, c->shbase, i32c(c, c->wg_stage));
	for (int si = 0; si < S; si++)
		for (int h = 0; h < 2; h++) {
			int32_t row = h ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, 8)) : rb[si];
			int32_t sa = bin(c, SI_ADD, DT_I32, stg,
					 bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, row, i32c(c, pitch)),
					     bin(c, SI_MUL, DT_I32, cb[si], i32c(c, 2))));
			for (int nb = 0; nb < NB; nb++)
				st(c, SP_SHARED, DT_I32, sa, (int64_t)16 * nb, rf_pair(c, F, (si * NB + nb) * 4 + h * 2, ot), -1);
		}
	b.sub = BULK_FENCE;
	emit(c, b);
	emit(c, I(SI_BAR, DT_VOID, -1, -1, -1));
	int32_t bytes = bin(c, SI_MUL, DT_I32, ncols, i32c(c, 2));
	int32_t any = setp(c, CMP_GT, DT_I32, ncols, i32c(c, 0));
	for (int64_t r0 = 0; r0 < R; r0 += c->nthreads) {
		int32_t r = r0 ? bin(c, SI_ADD, DT_I32, c->tid, i32c(c, r0)) : c->tid;
		int32_t orow = bin(c, SI_ADD, DT_I32, off0, r);
		int32_t ok = bin(c, SI_AND, DT_BOOL, any, setp(c, CMP_LT, DT_U32, orow, w->bound[0]));
		if (R - r0 < c->nthreads)
			ok = bin(c, SI_AND, DT_BOOL, ok, setp(c, CMP_LT, DT_U32, r, i32c(c, R)));
		int32_t lin = bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, orow), w->pitch),
				  cvt(c, DT_I64, DT_I32, off1));
		SInst in = I(SI_BULK, DT_VOID, -1, bin(c, SI_ADD, DT_I64, w->base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, 2))),
			     bin(c, SI_ADD, DT_I32, stg, bin(c, SI_MUL, DT_I32, r, i32c(c, pitch))));
		in.c = bytes;
		in.sub = BULK_STORE;
		in.guard = ok;
		emit(c, in);
	}
	b.sub = BULK_COMMIT;
	emit(c, b);
}

void copy_rf(L *c, const Stmt *s)
{
	bool from = c->bl[s->src.buf].rf >= 0;
	if (c->bl[from ? s->src.buf : s->dst.buf].rf_swap) {
		copy_rf_swap(c, s, from, from ? s->src.buf : s->dst.buf, from ? &s->dst : &s->src);
		return;
	}
	int32_t F = from ? s->src.buf : s->dst.buf;
	const Region *other = from ? &s->dst : &s->src;
	const Buffer *ob = BUF(other->buf);
	DType ot = (DType)ob->dtype;
	DType ft = (DType)c->bl[F].rf_dtype;
	int es = dtype_bytes(ot), NB = c->bl[F].rf_nb;
	bool glob = ob->scope == SCOPE_GLOBAL;
	const BufLoc *obl = &c->bl[other->buf];
	Window w = lower_window(c, s, other); /* rank-reducing tiles: fixed indices in the base */
	int32_t off0 = w.off[0], off1 = w.off[1], d1 = w.pitch;
	int32_t shb = !glob && w.base >= 0 ? bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, w.base, i32c(c, es)))
	                                   : c->shbase;
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	int S = rf_bases(c, F, rb, cb);
	int32_t esr = i32c(c, es);
	/* rows per strip and slots per row: PTX h (rows g, g + 8) x (nb, q1);
	 * AMD shapes q (rows rb + q * qrow) x nb */
	int sh = c->bl[F].rf_shape, nc = simt_mma[sh].nc, qrow = simt_mma[sh].qrow;
	bool amd = !warp_shape(sh);
	int nrows = amd ? nc : 2, ncols = amd ? NB : 2 * NB;
	/* AMD shapes: a lane's rows share its columns, so the global row
	 * stride and the column checks are computed once (rs[h], colok[nb]) */
	int32_t rs[8] = {0}, colok[8];
	if (amd && glob) {
		int32_t stride = bin(c, SI_MUL, DT_I64, w.pitch, movi(c, DT_I64, es));
		for (int h = 1; h < nrows; h++)
			rs[h] = bin(c, SI_MUL, DT_I64, stride, movi(c, DT_I64, h * qrow));
	}
	int32_t lstaged = -1, lsdone = -1;
	if (c->wg && c->wg->async_copy >= 0 && s == ST(c->wg->async_copy) && from && glob && es == 2 && !amd &&
	    w.rdim >= 0 && F == c->wg->acc && !c->rf_atomic && !(c->nv_off & LOWER_NV_BULK_STORE)) {
		lstaged = label(c), lsdone = label(c);
		copy_rf_staged(c, F, &w, rb, cb, S, ot, lstaged);
		bra(c, lsdone, -1, false);
		place(c, lstaged);
	}
	for (int si = 0; si < S; si++) {
		int32_t ocb = bin(c, SI_ADD, DT_I32, off1, cb[si]);
		for (int nb = 0; amd && glob && nb < NB; nb++)
			colok[nb] = setp(c, CMP_LT, DT_U32, nb ? bin(c, SI_ADD, DT_I32, ocb, i32c(c, 16 * nb)) : ocb,
					 w.bound[1]);
		int32_t rowaddr0 = -1;
		for (int h = 0; h < nrows; h++) {
			int dr = amd ? h * qrow : 8 * h;
			int32_t orow = bin(c, SI_ADD, DT_I32, off0, dr ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, dr)) : rb[si]);
			int32_t rowok = glob ? setp(c, CMP_LT, DT_U32, orow, w.bound[0]) : -1;
			if (w.ok >= 0)
				rowok = bin(c, SI_AND, DT_BOOL, rowok, w.ok);
			/* address of (orow, ocb) */
			int32_t rowaddr;
			if (glob && amd && h) {
				rowaddr = bin(c, SI_ADD, DT_I64, rowaddr0, rs[h]);
			} else if (glob) {
				int32_t lin = bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, orow), w.pitch),
				                  cvt(c, DT_I64, DT_I32, ocb));
				rowaddr = bin(c, SI_ADD, DT_I64, w.base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)));
				rowaddr0 = rowaddr;
			} else {
				int32_t lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, orow, d1), ocb);
				rowaddr = bin(c, SI_ADD, DT_I32, shb, bin(c, SI_MUL, DT_I32, lin, esr));
			}
			/* PTX, f16/bf16 out: a row half whose columns are all inside and
			 * whose address is 4-byte aligned (the columns are even: cb and
			 * 8 nb are; the row start and the tensor's base decide) goes
			 * out as packed column pairs, one 32-bit store each; any other
			 * row takes the per-element stores below. */
			bool pairs = from && glob && !amd && es == 2 && target_is_nvidia(c->t->id) && !c->rf_atomic;
			/* sm_90a, f32 atomic adds (tile atomic_add): the same row halves as
			 * red.global.add.v2.f32, one per column pair (8-byte aligned) */
			bool red2 = from && glob && !amd && ot == DT_F32 && ft == DT_F32 && c->rf_atomic &&
				    c->t->id == TA_TARGET_SM90A;
			int32_t lslow = -1, lend = -1;
			if (pairs || red2) {
				int32_t lo = bin(c, SI_AND, DT_I32, cvt(c, DT_I32, DT_I64, rowaddr), i32c(c, 2 * es - 1));
				int32_t fast = bin(c, SI_AND, DT_BOOL, rowok, setp(c, CMP_EQ, DT_I32, lo, i32c(c, 0)));
				int32_t last = bin(c, SI_ADD, DT_I32, ocb, i32c(c, 8 * (NB - 1) + 1));
				/* the tile's column bound (w.bound[1]: the last dimension of a
				 * rank-3/4 tensor, not its dimension 1) */
				fast = bin(c, SI_AND, DT_BOOL, fast, setp(c, CMP_LT, DT_U32, ocb, w.bound[1]));
				fast = bin(c, SI_AND, DT_BOOL, fast, setp(c, CMP_LT, DT_U32, last, w.bound[1]));
				lslow = label(c), lend = label(c);
				bra(c, lslow, fast, true);
				for (int nb = 0; nb < NB; nb++) {
					int e0 = (si * NB + nb) * 4 + h * 2;
					if (red2) {
						int32_t pr = reg(c, VT_F32); /* the pair in consecutive registers */
						reg(c, VT_F32);
						emit(c, I(SI_MOV, DT_F32, pr, rf_get(c, F, e0), -1));
						emit(c, I(SI_MOV, DT_F32, pr + 1, rf_get(c, F, e0 + 1), -1));
						SInst in = I(SI_ATOM_ADD, DT_F32, -1, rowaddr, pr);
						in.sub = SP_GLOBAL;
						in.imm = (int64_t)8 * nb * es;
						in.vec = 2;
						emit(c, in);
						continue;
					}
					st(c, SP_GLOBAL, DT_I32, rowaddr, (int64_t)8 * nb * es, rf_pair(c, F, e0, ot), -1);
				}
				bra(c, lend, -1, false);
				place(c, lslow);
			}
			for (int x = 0; x < ncols; x++) {
				int nb = amd ? x : x / 2, q1 = amd ? 0 : x % 2;
				int e = amd ? (si * NB + nb) * nc + h : (si * NB + nb) * 4 + h * 2 + q1;
				int dc = amd ? 16 * nb : 8 * nb + q1;
				int32_t ok = rowok;
				if (glob && amd) {
					ok = bin(c, SI_AND, DT_BOOL, rowok, colok[nb]);
				} else if (glob) {
					int32_t ocol = bin(c, SI_ADD, DT_I32, ocb, i32c(c, dc));
					ok = bin(c, SI_AND, DT_BOOL, rowok, setp(c, CMP_LT, DT_U32, ocol, w.bound[1]));
				}
				Space sp = glob ? SP_GLOBAL : SP_SHARED;
				int64_t imm = (int64_t)dc * es + (glob ? 0 : obl->smem);
				/* f16/bf16 pack rounds like the cvt (the PTX path keeps both) */
				bool direct = amd && ft == DT_F32 && (ot == DT_F16 || ot == DT_BF16);
				rf_elem_xfer(c, from, F, e, sp, ot, rowaddr, imm, ok, direct);
			}
			if (pairs || red2)
				place(c, lend);
		}
	}
	if (lsdone >= 0)
		place(c, lsdone);
}

void lower_gemm_mma_rf(L *c, const Stmt *s, int64_t K)
{
	const BufLoc *bl = &c->bl[s->dst.buf];
	int W = c->nthreads / 32, NB = bl->rf_nb, S = bl->rf_n / (NB * 4);
	DType in = (DType)BUF(s->src.buf)->dtype;
	int sh = bl->rf_shape;
	bool s8 = sh == MMA_M16N8K32_I8; /* four i8 per register: k offsets 4t, 4t + 16 */
	if (s->flag_clear)
		for (int e = 0; e < bl->rf_n; e++)
			emit(c, I(s8 ? SI_MOVI : SI_MOVF, (DType)bl->rf_dtype, bl->rf + e, -1, -1));
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t g = bin(c, SI_DIV, DT_U32, lane, i32c(c, 4));
	int32_t t2 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, s8 ? 4 : 2));
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	int32_t k0 = bin(c, SI_ADD, DT_I32, kk, t2), k8 = bin(c, SI_ADD, DT_I32, k0, i32c(c, s8 ? 16 : 8));
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, warp, i32c(c, W * si));
		int32_t r0 = bin(c, SI_ADD, DT_I32,
		                 bin(c, SI_MUL, DT_I32, bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn)), i32c(c, 16)), g);
		int32_t r8 = bin(c, SI_ADD, DT_I32, r0, i32c(c, 8));
		int32_t n0 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn)), i32c(c, 8 * NB));
		int32_t af = frag_a(c, s, r0, r8, k0, k8);
		for (int nb = 0; nb < NB; nb++) {
			int32_t n = bin(c, SI_ADD, DT_I32, bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb)), g);
			int32_t bf = frag_b(c, s, n, k0, k8);
			int32_t acc = bl->rf + (si * NB + nb) * 4;
			SInst m = I(SI_MMA, in, acc, af, bf);
			m.c = acc;
			m.sub = (uint8_t)sh;
			emit(c, m);
		}
	}
	emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, simt_mma[sh].k)));
	bra(c, ktop, -1, false);
	place(c, kend);
	c->f->nmma++;
}
