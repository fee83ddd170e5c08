/* lower_sync.c — block barriers: the buffers each block-level statement
 * reads and writes (access sets, by epoch), and a barrier before one that
 * conflicts with an access since the last barrier (lower.c's overview
 * states the rule). */
#include "lower_impl.h"

void lower_barrier(L *c)
{
	emit(c, I(SI_BAR, DT_VOID, -1, -1, -1));
	c->epoch++;
	c->dirty = false;
}

/* ---- access sets for barrier placement ---------------------------------- */

static bool tracked(L *c, int32_t b)
{
	if (BUF(b)->view) /* accesses through a view are accesses to its tensor */
		b = BUF(b)->viewed;
	return BUF(b)->scope != SCOPE_LOCAL && c->bl[b].rf < 0 && c->bl[b].vf < 0 && c->bl[b].rr < 0 && !(c->ro && c->ro[b]);
}

static void touch(L *c, int32_t b, bool write)
{
	if (c->collect_locals) {
		if (write && BUF(b)->scope == SCOPE_LOCAL)
			if (vec_push(&c->wlocals, b))
				c->failed = true;
		return;
	}
	if (!tracked(c, b))
		return;
	if (BUF(b)->view)
		b = BUF(b)->viewed;
	uint32_t *s = write ? c->swr : c->srd;
	if (c->srd[b] != c->sgen && c->swr[b] != c->sgen)
		if (vec_push(&c->touched, b))
			c->failed = true;
	s[b] = c->sgen;
}

void lower_collect_expr(L *c, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD)
		touch(c, e->buf, false);
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		lower_collect_expr(c, e->a);
		if (e->kind == E_BINARY)
			lower_collect_expr(c, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			lower_collect_expr(c, e->args[i]);
}

static void collect_region(L *c, const Region *r, bool write)
{
	if (r->buf < 0)
		return;
	touch(c, r->buf, write);
	for (int i = 0; i < r->nidx; i++)
		lower_collect_expr(c, r->idx[i]);
}

static void collect_stmt(L *c, int32_t id);

void lower_collect_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		collect_stmt(c, b->ids[i]);
}

static void collect_stmt(L *c, int32_t id)
{
	const Stmt *s = ST(id);
	lower_collect_expr(c, s->value);
	switch ((StmtKind)s->kind) {
	case S_STORE: collect_region(c, &s->dst, true); break;
	case S_COPY:
	case S_CUMSUM:
	case S_ATOMIC_ADD:
		collect_region(c, &s->src, false);
		collect_region(c, &s->dst, true);
		break;
	case S_GEMM:
		collect_region(c, &s->src, false);
		collect_region(c, &s->src2, false);
		collect_region(c, &s->dst, false);
		collect_region(c, &s->dst, true);
		break;
	case S_CLEAR:
	case S_FILL: collect_region(c, &s->dst, true); break;
	case S_REDUCE:
		collect_region(c, &s->src, false);
		collect_region(c, &s->dst, false);
		collect_region(c, &s->dst, true);
		break;
	case S_FOR:
		lower_collect_expr(c, s->lo);
		lower_collect_expr(c, s->hi);
		lower_collect_block(c, &s->body);
		break;
	case S_IF:
		lower_collect_block(c, &s->body);
		lower_collect_block(c, &s->els);
		break;
	case S_PARALLEL: lower_collect_block(c, &s->body); break;
	default: break;
	}
}

/* Barrier before statement id if it conflicts with accesses since the last
 * barrier; then records its accesses. */
void lower_sync_for(L *c, int32_t id)
{
	c->sgen++;
	c->touched.len = 0;
	collect_stmt(c, id);
	bool need = false;
	for (size_t i = 0; i < c->touched.len; i++) {
		int32_t b = c->touched.data[i];
		if (c->srd[b] == c->sgen && c->wr_ep[b] == c->epoch)
			need = true;
		if (c->swr[b] == c->sgen && (c->rd_ep[b] == c->epoch || c->wr_ep[b] == c->epoch))
			need = true;
	}
	if (need)
		lower_barrier(c);
	for (size_t i = 0; i < c->touched.len; i++) {
		int32_t b = c->touched.data[i];
		if (c->srd[b] == c->sgen)
			c->rd_ep[b] = c->epoch;
		if (c->swr[b] == c->sgen)
			c->wr_ep[b] = c->epoch;
		c->dirty = true;
	}
}

void lower_flush(L *c)
{
	if (c->dirty)
		lower_barrier(c);
}

/* Index expression e is `v * K` or `K * v` for loop variable v: K, else 0. */
static int64_t var_times(L *c, int32_t e, int32_t v)
{
	const Expr *x = EX(e);
	int64_t k;
	if (x->kind != E_BINARY || x->op != OP_MUL)
		return 0;
	if (EX(x->a)->kind == E_VAR && EX(x->a)->var == v && ir_const_int(c->m, x->b, &k))
		return k;
	if (EX(x->b)->kind == E_VAR && EX(x->b)->var == v && ir_const_int(c->m, x->a, &k))
		return k;
	return 0;
}

/* Buffer b is only written in the loop's body, by one top-level copy whose
 * index along some dimension is v * K with |K * step| >= the tile's extent
 * there: every trip writes other elements of b than every other trip, so
 * the writes of two trips need no barrier between them. */
static bool trip_private(L *c, const Stmt *loop, int64_t step, int32_t b)
{
	const Block *body = &loop->body;
	int writers = 0;
	for (int i = 0; i < body->n; i++) {
		c->sgen++;
		c->touched.len = 0;
		collect_stmt(c, body->ids[i]);
		if (c->srd[b] == c->sgen)
			return false;
		if (c->swr[b] != c->sgen)
			continue;
		const Stmt *s = ST(body->ids[i]);
		const Region *r = &s->dst;
		if (s->kind != S_COPY || r->buf != b || BUF(b)->view || r->hi || r->nidx != BUF(b)->rank || ++writers > 1)
			return false;
		bool apart = false;
		for (int d = 0; d < r->nidx && !apart; d++) {
			int64_t k = var_times(c, r->idx[d], loop->var);
			apart = r->tdim[d] >= 0 && k && (k * step > 0 ? k * step : -k * step) >= s->text[r->tdim[d]];
		}
		if (!apart)
			return false;
	}
	return writers == 1;
}

/* End of a block-level loop body: a barrier when the accesses since the
 * last one conflict with the body's on the next trip (a read after a
 * write, a write after either), except a write after a write of a
 * trip-private buffer (rmsnorm's output tile per column block).  Accesses
 * the body does not repeat stay recorded for the statements after the
 * loop. */
void lower_flush_loop(L *c, const Stmt *loop, int64_t step)
{
	if (!c->dirty)
		return;
	c->sgen++;
	c->touched.len = 0;
	lower_collect_block(c, &loop->body);
	int32_t waw[8];
	int nwaw = 0;
	bool need = false;
	for (size_t i = 0; i < c->touched.len && !need; i++) {
		int32_t b = c->touched.data[i];
		bool pr = c->rd_ep[b] == c->epoch, pw = c->wr_ep[b] == c->epoch;
		bool br = c->srd[b] == c->sgen, bw = c->swr[b] == c->sgen;
		if ((br && pw) || (bw && pr))
			need = true;
		else if (bw && pw && nwaw < 8)
			waw[nwaw++] = b;
		else if (bw && pw)
			need = true;
	}
	for (int i = 0; i < nwaw && !need; i++)
		need = !trip_private(c, loop, step, waw[i]);
	if (need)
		lower_barrier(c);
}
