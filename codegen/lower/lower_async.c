/* lower_async.c — NVIDIA (sm_80, sm_90a) asynchronous global -> shared
 * copies: cp.async for the vector path of a copy, and the prefetch of a
 * pipelined loop's tiles one iteration ahead.
 *
 * A copy from a global tile into a shared buffer moves its 16-byte vectors
 * with cp.async (out-of-bounds vectors are zero-filled by the src-size
 * operand, like the IR's edge rule).  When its vector count is a multiple
 * of the block size (at most 16 per thread) the copy is unrolled, so every
 * load of the tile is in flight at once.  The copies of one run of adjacent
 * copy statements are committed and waited for together after the run
 * (lower_cp_flush); the barrier before the first reader comes after that,
 * as for ordinary stores.
 *
 * Pipelined loops (lower_pipelined): a leading copy of the body into a
 * shared tile T that nothing else in the body writes, whose source indices
 * depend only on the loop variable and loop-invariant values, is issued for
 * iteration kb + 1 right after the last statement of iteration kb that
 * reads T (after a barrier: every thread has finished reading), and for the
 * first iteration before the loop.  Before the first reader in an iteration
 * the thread waits for T's group (cp.async.wait_group counts the groups
 * committed after it) and the block synchronises.  Every tile commits one
 * group per iteration, empty in the last one, so the counts are static.
 * T then holds each iteration's tile exactly when the serial loop would
 * have it; the loads overlap the statements between T's last read and its
 * next first read.
 */
#include "lower_impl.h"

static bool nvidia_async(L *c)
{
	return c->t->id == TA_TARGET_SM80 || c->t->id == TA_TARGET_SM90A;
}

bool lower_copy_async(L *c, const Stmt *s)
{
	return nvidia_async(c) && !(c->nv_off & LOWER_NV_CP_ASYNC) && s->kind == S_COPY && BUF(s->src.buf)->scope == SCOPE_GLOBAL &&
	       BUF(s->dst.buf)->scope == SCOPE_SHARED && c->bl[s->dst.buf].rf < 0 && c->bl[s->dst.buf].vf < 0;
}

void lower_cp_flush(L *c)
{
	if (!c->cp_pending)
		return;
	emit(c, I(SI_CP_COMMIT, DT_VOID, -1, -1, -1));
	SInst w = I(SI_CP_WAIT, DT_VOID, -1, -1, -1);
	w.imm = 0;
	emit(c, w);
	c->cp_pending = false;
}

/* ---- pipelined loops ------------------------------------------------------ */

enum { PF_MAX = 8 };

/* Does expression e read memory, or a variable other than the loop's own
 * that may change inside the loop (a let or loop variable defined there:
 * any V_LET / V_LOOP / tx, conservatively, except `keep`)? */
static bool expr_varies(L *c, int32_t e, int32_t keep)
{
	if (e < 0)
		return false;
	const Expr *x = EX(e);
	if (x->kind == E_LOAD)
		return true;
	if (x->kind == E_VAR) {
		uint8_t k = VAR(x->var)->kind;
		return x->var != keep && k != V_SYMBOL && k != V_PARAM && k != V_BLOCKIDX;
	}
	if ((x->kind == E_UNARY || x->kind == E_BINARY || x->kind == E_CAST) && expr_varies(c, x->a, keep))
		return true;
	if (x->kind == E_BINARY && expr_varies(c, x->b, keep))
		return true;
	if (x->kind == E_CALL)
		for (int i = 0; i < x->nargs; i++)
			if (expr_varies(c, x->args[i], keep))
				return true;
	return false;
}

static bool expr_reads(L *c, int32_t e, int32_t b)
{
	if (e < 0)
		return false;
	const Expr *x = EX(e);
	if (x->kind == E_LOAD && x->buf == b)
		return true;
	if ((x->kind == E_UNARY || x->kind == E_BINARY || x->kind == E_CAST) && expr_reads(c, x->a, b))
		return true;
	if (x->kind == E_BINARY && expr_reads(c, x->b, b))
		return true;
	if (x->kind == E_LOAD || x->kind == E_CALL)
		for (int i = 0; i < x->nargs; i++)
			if (expr_reads(c, x->args[i], b))
				return true;
	return false;
}

static bool region_reads(L *c, const Region *r, int32_t b, bool whole)
{
	if (whole && r->buf == b)
		return true;
	for (int i = 0; i < r->nidx; i++)
		if (expr_reads(c, r->idx[i], b))
			return true;
	return false;
}

/* Statement id reads (write = false) or writes (write = true) buffer b,
 * anywhere inside it; a break anywhere sets *brk. */
static bool stmt_touches(L *c, int32_t id, int32_t b, bool write, bool *brk)
{
	const Stmt *s = ST(id);
	bool hit = false;
	if (s->kind == S_BREAK)
		*brk = true;
	if (write) {
		hit = s->kind != S_ALLOC && s->kind != S_LET && s->kind != S_BARRIER && s->kind != S_FOR &&
		      s->kind != S_IF && s->kind != S_PARALLEL && s->kind != S_BREAK && s->dst.buf == b;
	} else {
		hit = expr_reads(c, s->value, b) || expr_reads(c, s->lo, b) || expr_reads(c, s->hi, b) ||
		      region_reads(c, &s->src, b, true) || region_reads(c, &s->src2, b, true) ||
		      region_reads(c, &s->dst, b, s->kind == S_GEMM || s->kind == S_REDUCE || s->kind == S_ATOMIC_ADD);
		for (int j = 0; s->kind == S_PARALLEL && j < s->nvars; j++)
			hit |= expr_reads(c, s->extents[j], b);
	}
	for (int i = 0; i < s->body.n; i++)
		hit |= stmt_touches(c, s->body.ids[i], b, write, brk);
	for (int i = 0; i < s->els.n; i++)
		hit |= stmt_touches(c, s->els.ids[i], b, write, brk);
	return hit;
}

typedef struct {
	int32_t id;          /* the copy statement */
	int first, last;     /* body indices of its first and last reader */
	int wait;            /* groups committed after its own when its first reader starts */
} Pf;

/* Lowers copy `id` for the iteration whose variable value is in register
 * `iv` (its own groups are committed by the caller); wr: pre_issue's. */
static void issue(L *c, const Stmt *loop, int32_t id, int32_t iv, uint32_t wr)
{
	int32_t saved = c->varreg[loop->var], tile = ST(id)->dst.buf;
	c->varreg[loop->var] = iv;
	lower_copy(c, ST(id));
	c->varreg[loop->var] = saved;
	c->cp_pending = false;
	/* The tile's readers wait and synchronise for it themselves (the wait
	 * before the first reader), so the write is no hazard for the barrier
	 * tracking: no barrier at the end of the body for it.  The source is
	 * not written inside the loop, so its read is no back-edge hazard;
	 * statements after the loop still see it (rd_ep). */
	c->wr_ep[tile] = wr;
	c->dirty = false;
}

/* Before issuing copy id (outside any branch, so that the barrier
 * tracking sees what every thread does): a barrier if anything was
 * accessed since the last one (every thread is done with the tile), then
 * the copy's accesses recorded.  Returns the tile's write epoch before. */
static uint32_t pre_issue(L *c, int32_t id, bool flush)
{
	if (flush)
		lower_flush(c);
	uint32_t wr = c->wr_ep[ST(id)->dst.buf];
	lower_sync_for(c, id);
	return wr;
}

static void commit(L *c)
{
	emit(c, I(SI_CP_COMMIT, DT_VOID, -1, -1, -1));
}

/* Tiles in the order their groups are committed within an iteration:
 * by last reader, then by body order. */
static bool pf_before(const Pf *a, const Pf *b)
{
	return a->last < b->last || (a->last == b->last && a->id < b->id);
}

bool lower_pipelined(L *c, const Stmt *s, int32_t i, int32_t hi, DType o, int64_t step)
{
	if (!nvidia_async(c) || (c->nv_off & (LOWER_NV_PREFETCH | LOWER_NV_CP_ASYNC)) || c->par || c->wg ||
	    s->sub != LOOP_PIPELINED || step != 1)
		return false;
	const Block *b = &s->body;
	Pf pf[PF_MAX];
	int n = 0;
	bool brk = false;
	for (int k = 0; k < b->n && n < PF_MAX; k++) {
		const Stmt *x = ST(b->ids[k]);
		if (!lower_copy_async(c, x) || x->dst.nidx)
			break;
		bool ok = true;
		for (int d = 0; d < x->src.nidx && ok; d++)
			ok = !expr_varies(c, x->src.idx[d], s->var) &&
			     !(x->src.hi && x->src.hi[d] >= 0 && expr_varies(c, x->src.hi[d], s->var));
		pf[n] = (Pf){b->ids[k], -1, -1, 0};
		for (int j = 0; j < b->n && ok; j++) {
			bool w = stmt_touches(c, b->ids[j], x->dst.buf, true, &brk);
			bool r = stmt_touches(c, b->ids[j], x->dst.buf, false, &brk);
			/* the source must not change inside the loop either */
			bool ws = stmt_touches(c, b->ids[j], x->src.buf, true, &brk);
			ok = !(w && j != k) && !ws;
			if (r && pf[n].first < 0)
				pf[n].first = j;
			if (r)
				pf[n].last = j;
		}
		if (!ok || pf[n].first < 0)
			break;
		n++;
	}
	if (!n || brk)
		return false;
	/* the leading copies before the first prefetched tile's reader only */
	for (int x = 0; x < n; x++)
		if (pf[x].first < n)
			return false;
	for (int x = 0; x < n; x++) {
		pf[x].wait = 0;
		for (int y = 0; y < n; y++)
			if (y != x && (pf_before(&pf[x], &pf[y]) || pf[y].last < pf[x].first))
				pf[x].wait++;
	}
	/* Prologue: the first iteration's tiles, in commit order. */
	int32_t end = label(c), top = label(c), skip = label(c);
	uint32_t wr[PF_MAX];
	for (int x = 0; x < n; x++)
		wr[x] = pre_issue(c, pf[x].id, x == 0);
	bra(c, skip, setp(c, CMP_GE, o, i, hi), false);
	for (int done = 0; done < n; done++) {
		int x = -1;
		for (int y = 0; y < n; y++) {
			int rank = 0;
			for (int z = 0; z < n; z++)
				rank += pf_before(&pf[z], &pf[y]);
			if (rank == done)
				x = y;
		}
		issue(c, s, pf[x].id, i, wr[x]);
		commit(c);
	}
	place(c, skip);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, o, i, hi), false);
	int32_t outer = c->brk;
	c->brk = end;
	int32_t next = bin(c, SI_ADD, o, i, o == DT_I64 ? movi(c, DT_I64, 1) : i32c(c, 1));
	int32_t has_next = setp(c, CMP_LT, o, next, hi);
	for (int k = n; k < b->n && !c->failed; k++) {
		int wait = -1;
		for (int x = 0; x < n; x++)
			if (pf[x].first == k && (wait < 0 || pf[x].wait < wait))
				wait = pf[x].wait;
		if (wait >= 0) {
			SInst w = I(SI_CP_WAIT, DT_VOID, -1, -1, -1);
			w.imm = wait;
			emit(c, w);
			lower_barrier(c);
		}
		lower_stmt_in_block(c, b, k);
		for (int x = 0; x < n; x++) {
			if (pf[x].last != k)
				continue;
			int32_t nop = label(c);
			uint32_t w = pre_issue(c, pf[x].id, true);
			bra(c, nop, has_next, true);
			issue(c, s, pf[x].id, next, w);
			place(c, nop);
			commit(c);
		}
	}
	c->brk = outer;
	lower_flush(c);
	emit(c, I(SI_MOV, o, i, next, -1));
	bra(c, top, -1, false);
	place(c, end);
	return true;
}
