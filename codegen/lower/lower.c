/* lower.c — Tile IR kernel -> per-thread SIMT IR (lower.h, docs/lowering.md):
 * the driver.  It sets up the kernel (dtype checks, parameters, thread
 * ids), places buffers, lowers control flow (parallel, for, if, let) and
 * dispatches the other statements to lower_*.c (listed in lower_impl.h).
 *
 * Placement: shared buffers, and fragments that are not register
 * fragments, live in shared memory at a static offset; register fragments
 * are gemm accumulators in the MMA layout (rf_*) and element-wise
 * fragments in the vector layout (vf_*, on for NVIDIA by default); local
 * buffers are per-thread local arrays.  Block-level statements are
 * executed by all threads:
 *  - copy/clear/fill/atomic tiles distribute the tile's elements over the
 *    threads (strided), one element per step, with per-element bounds
 *    predicates on the global side (loads give 0, stores are skipped);
 *  - gemm on f16/bf16 with M%16, N%8, K%16 == 0 runs mma.m16n8k16 per warp
 *    over 16 x 8*NB strips of C; other gemms are a per-element f32 (i32) loop;
 *  - reductions give each output element a group of G lanes (power of two
 *    <= 32) that sum strided partials, then combine them with butterfly
 *    shuffles; cumsum scans each line serially in one thread;
 *  - when the destination is a local buffer, every thread performs the whole
 *    statement itself (locals are per-thread copies of one uniform value).
 * Barriers: a block barrier goes before a block-level statement that reads a
 * shared/fragment/global buffer written, or writes one read or written,
 * since the last barrier; loops and ifs flush before and at the end of
 * each body so back edges are safe.
 */
#include <stdio.h>

#include "lower_impl.h"

/* ---- statements ----------------------------------------------------------- */

static void stmt(L *c, int32_t id);

/* Statement i of block b; cp.async copies are waited for after it unless
 * the next statement is another such copy (lower_async.c). */
void lower_stmt_in_block(L *c, const Block *b, int i)
{
	const Stmt *s = ST(b->ids[i]);
	if (lower_gemm_areg_skip(c, b, i)) /* the next gemm reads this copy's source registers */
		return;
	/* loops and uniform ifs flush around their bodies themselves */
	bool compound = s->kind == S_FOR || (s->kind == S_IF && !s->per_thread);
	if (!c->par && !compound)
		lower_sync_for(c, b->ids[i]);
	stmt(c, b->ids[i]);
	if (c->cp_pending && !(i + 1 < b->n && lower_copy_async(c, ST(b->ids[i + 1]))))
		lower_cp_flush(c);
}

void lower_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n && !c->failed; i++)
		lower_stmt_in_block(c, b, i);
}

void lower_shadows_begin(L *c, const Block *body, Shadows *sh, int32_t *shadow_ids)
{
	c->collect_locals = true;
	c->wlocals.len = 0;
	lower_collect_block(c, body);
	c->collect_locals = false;
	sh->n = 0;
	for (size_t i = 0; i < c->wlocals.len && sh->n < 16; i++) {
		int32_t b = c->wlocals.data[i];
		if (c->bl[b].shadow >= 0 || c->bl[b].lshadow >= 0)
			continue;
		if (c->bl[b].lreg >= 0) { /* registers: a fresh set */
			VType vt = (VType)c->f->regs.data[c->bl[b].lreg];
			c->bl[b].lshadow = (int32_t)c->f->regs.len;
			for (int k = 0; k < c->bl[b].lreg_n; k++)
				reg(c, vt);
			sh->bufs[sh->n] = b;
			shadow_ids[sh->n++] = -1;
			continue;
		}
		int64_t bytes = (ir_buf_elems(c->m, BUF(b)) * dtype_bytes((DType)BUF(b)->dtype) + 7) & ~7LL;
		if (vec_push(&c->f->locals, bytes)) {
			c->failed = true;
			return;
		}
		c->bl[b].shadow = (int32_t)c->f->locals.len - 1;
		sh->bufs[sh->n] = b;
		shadow_ids[sh->n++] = c->bl[b].shadow;
	}
}

void lower_shadows_copy(L *c, Shadows *sh)
{
	for (size_t i = 0; i < sh->n; i++) {
		int32_t b = sh->bufs[i];
		if (c->bl[b].lreg >= 0) {
			DType t = (DType)BUF(b)->dtype;
			for (int k = 0; k < c->bl[b].lreg_n; k++)
				emit(c, I(SI_MOV, t, c->bl[b].lshadow + k, c->bl[b].lreg + k, -1));
			continue;
		}
		int64_t words = ((ir_buf_elems(c->m, BUF(b)) * dtype_bytes((DType)BUF(b)->dtype)) + 7) / 8 * 2;
		int32_t src = reg(c, VT_I64), dst = reg(c, VT_I64);
		SInst in = I(SI_LOCALADDR, DT_I64, src, -1, -1);
		in.imm = c->bl[b].local;
		emit(c, in);
		in.dst = dst;
		in.imm = c->bl[b].shadow;
		emit(c, in);
		for (int64_t w = 0; w < words; w++)
			st(c, SP_LOCAL, DT_I32, dst, w * 4, ld(c, SP_LOCAL, DT_I32, src, w * 4, -1), -1);
	}
}

void lower_shadows_end(L *c, Shadows *sh)
{
	for (size_t i = 0; i < sh->n; i++)
		c->bl[sh->bufs[i]].shadow = c->bl[sh->bufs[i]].lshadow = -1;
}

static void lower_parallel_one(L *c, const Stmt *s)
{
	if (vf_find_block(c, &s->body)) { /* straight-line code over the thread's vector-fragment slots */
		lower_parallel_vf(c, s);
		return;
	}
	int32_t F = rf_find_block(c, &s->body);
	if (F >= 0) { /* iterate in the register fragment's layout */
		lower_parallel_rf(c, s, F);
		return;
	}
	if (s->nvars == 1 && rr_find_block(c, &s->body)) { /* once per row the thread holds */
		lower_parallel_rr(c, s);
		return;
	}
	int64_t ext[IR_MAX_RANK], total = 1;
	for (int i = 0; i < s->nvars; i++) {
		if (!ir_const_int(c->m, s->extents[i], &ext[i])) {
			fail(c, s->pos, "parallel extents must be constants%s", "");
			return;
		}
		total *= ext[i];
	}
	Shadows sh;
	int32_t ids[16];
	lower_shadows_begin(c, &s->body, &sh, ids);
	bool was = c->par;
	c->par = true;
	DLoop l = lower_dloop_begin(c, total, true);
	int32_t idx[IR_MAX_RANK];
	lower_decompose(c, l.p, ext, s->nvars, idx);
	for (int i = 0; i < s->nvars; i++)
		c->varreg[s->vars[i]] = cvt(c, (DType)VAR(s->vars[i])->type, DT_I32, idx[i]);
	lower_shadows_copy(c, &sh);
	lower_block(c, &s->body);
	lower_dloop_end(c, &l);
	c->par = was;
	lower_shadows_end(c, &sh);
}

/* `unroll` with constant bounds: the body once per trip, the induction
 * variable a constant in each copy.  Bounded: at most UNROLL_MAX_TRIPS
 * trips and UNROLL_MAX_STMTS statements in all (inner loops unrolled
 * count with their copies); a loop over the cap stays a loop, and the
 * listing says how many were unrolled and kept (SimtFunc.unrolled,
 * unroll_kept). */
enum { UNROLL_MAX_TRIPS = 64, UNROLL_MAX_STMTS = 256, BRK_LAZY = -2 };

static bool unroll_trips(L *c, const Stmt *s, int64_t *lo, int64_t *st, int64_t *n);

/* Statements lowered for block b, counting unrolled loops' copies, or
 * more than budget (the walk stops there: its cost is bounded by the cap,
 * not by the size of the body). */
static int64_t stmt_weight(L *c, const Block *b, int64_t budget)
{
	int64_t w = 0;
	for (int i = 0; i < b->n && w <= budget; i++) {
		const Stmt *s = ST(b->ids[i]);
		int64_t lo, st, n, inner = stmt_weight(c, &s->body, budget - w);
		if (inner <= budget - w)
			inner += stmt_weight(c, &s->els, budget - w - inner);
		if (s->kind == S_FOR && unroll_trips(c, s, &lo, &st, &n) && n * inner <= budget - w)
			w += n * inner;
		else
			w += 1 + inner;
	}
	return TA_MIN(w, budget + 1);
}

/* An unroll loop with constant bounds and step: its first value, step and
 * trip count (at most UNROLL_MAX_TRIPS). */
static bool unroll_trips(L *c, const Stmt *s, int64_t *lo, int64_t *st, int64_t *n)
{
	int64_t hi;
	*st = 1;
	if (s->sub != LOOP_UNROLL || !ir_const_int(c->m, s->lo, lo) || !ir_const_int(c->m, s->hi, &hi) ||
	    (s->step >= 0 && !ir_const_int(c->m, s->step, st)) || *st == 0)
		return false;
	*n = ir_trip_count(*lo, hi, *st);
	return *n >= 0 && *n <= UNROLL_MAX_TRIPS;
}

static bool lower_unrolled(L *c, const Stmt *s, DType o)
{
	if (s->sub != LOOP_UNROLL)
		return false;
	int64_t lo, st, n;
	if (!unroll_trips(c, s, &lo, &st, &n) || n * stmt_weight(c, &s->body, UNROLL_MAX_STMTS) > UNROLL_MAX_STMTS) {
		c->f->unroll_kept++;
		return false;
	}
	c->f->unrolled++;
	/* break: past the last copy.  The label only if some break jumps
	 * there: an unused label inside a loop would stop the exec-empty
	 * walk of AMD code (amd_isel_cf.c) short of the loop's end. */
	int32_t outer = c->brk;
	c->brk = BRK_LAZY;
	int u = c->nureg;
	for (int64_t k = 0; k < n; k++) {
		c->varreg[s->var] = movi(c, o, lo + k * st);
		if (u < (int)TA_ARRAY_LEN(c->ureg)) /* read-only: loop variables are never assigned */
			c->ureg[u] = c->varreg[s->var], c->uval[u] = lo + k * st, c->nureg = u + 1;
		lower_block(c, &s->body);
		if (!c->par)
			lower_flush(c);
	}
	c->nureg = u;
	if (c->brk != BRK_LAZY) {
		if (!c->par) /* no lazy vector slots across the label */
			vf_materialize(c);
		place(c, c->brk);
	}
	c->brk = outer;
	return true;
}

static void lower_for(L *c, const Stmt *s)
{
	DType t = (DType)VAR(s->var)->type;
	if (t == DT_VOID)
		t = DT_I32;
	DType o = op_type(t);
	if (!c->par) { /* the bounds may read memory written before */
		lower_flush(c);
		c->sgen++;
		c->touched.len = 0;
		lower_collect_expr(c, s->lo);
		lower_collect_expr(c, s->hi);
		c->dirty = c->touched.len > 0;
	}
	if (lower_unrolled(c, s, o))
		return;
	int32_t i = reg(c, simt_vt(t));
	emit(c, I(SI_MOV, o, i, expr_as(c, s->lo, t), -1));
	int32_t hi = reg(c, simt_vt(t));
	emit(c, I(SI_MOV, o, hi, expr_as(c, s->hi, t), -1));
	c->varreg[s->var] = i;
	if (!c->par)
		lower_flush(c);
	int64_t st = 1; /* verify made it a nonzero constant */
	if (s->step >= 0 && !ir_const_int(c->m, s->step, &st))
		fail(c, s->pos, "internal: loop step is not a constant%s", "");
	if (lower_pipelined(c, s, i, hi, o, st))
		return;
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, st > 0 ? CMP_GE : CMP_LE, o, i, hi), false);
	int32_t outer = c->brk;
	c->brk = end;
	c->loop_depth -= !c->par; /* a plain loop's body may make lazy vector slots: none survive its end */
	lower_block(c, &s->body);
	if (!c->par)
		vf_materialize(c);
	c->loop_depth += !c->par;
	c->brk = outer;
	if (!c->par)
		lower_flush_loop(c, s, st);
	emit(c, I(SI_ADD, o, i, i, o == DT_I64 ? movi(c, DT_I64, st) : i32c(c, st)));
	bra(c, top, -1, false);
	place(c, end);
}

/* A pipelined loop on AMD whose body is global -> shared tile copies
 * (lower_copy_stageable) followed by gemms that do not write those tiles:
 * the copies' loads run one trip ahead into registers.  Trip i stores the
 * registers loaded for it, waits at a barrier, issues the loads of trip
 * i + step (if there is one), then runs the rest of the body: the loads
 * are in flight during the rest (the GEMM), and the stores at the top of
 * the next trip wait for them with vmcnt(N).  The copies' vector-path test
 * does not depend on the loop variable, so it picks this loop or the
 * plain one once, before.  Global sources are read-only in the kernel, so
 * reading them a trip early reads the same values.  LDS is not double
 * buffered (the stores wait for the barrier after the previous trip's
 * reads).  Returns false (nothing emitted) when the loop does not qualify. */
enum { STAGE_COPIES = 4, STAGE_VGPRS = 256 - 88 };

static bool staged(L *c, const Stmt *s);

/* A pipelined loop on AMD says in the listing how deep it runs: staged
 * (loads one trip ahead: 2 stages whatever stages(n) asks) or plain (no
 * overlap), and why not staged (c->stage_why). */
static bool lower_for_staged(L *c, const Stmt *s)
{
	if (s->sub != LOOP_PIPELINED || c->par || !target_is_amd(c->t->id))
		return false;
	c->stage_why = NULL;
	c->stage_regs = 0;
	bool ok = staged(c, s);
	if (ok)
		sb_printf(&c->f->notes, "; %d:%d: pipelined loop, stages(%d): 2 deep for aligned tensors (the copies' "
			  "loads one trip ahead in %d VGPRs per lane, shared tiles single-buffered), not overlapped "
			  "otherwise\n", s->pos.line, s->pos.col, s->stages, c->stage_regs);
	else
		sb_printf(&c->f->notes, "; %d:%d: pipelined loop, stages(%d): not overlapped (%s)\n", s->pos.line,
			  s->pos.col, s->stages, c->stage_why ? c->stage_why : "its body is not global -> shared copies "
			  "followed by gemms");
	return ok;
}

static bool staged(L *c, const Stmt *s)
{
	const Block *b = &s->body;
	int64_t st = 1;
	if (s->step >= 0 && !ir_const_int(c->m, s->step, &st))
		return false;
	DType t = (DType)VAR(s->var)->type;
	if (st <= 0 || (t != DT_VOID && t != DT_I32))
		return false;
	int k = 0;
	while (k < b->n && k < STAGE_COPIES && lower_copy_stageable(c, ST(b->ids[k])))
		k++;
	if (!k || k == b->n)
		return false;
	/* The staging registers stay live across the rest: only when the rest
	 * is gemms (flash attention's softmax in between spilled with them). */
	for (int j = k; j < b->n; j++)
		if (ST(b->ids[j])->kind != S_GEMM)
			return false;
	/* Without AGPRs (gfx1100) the accumulators share the 256 VGPRs with
	 * the staging registers; the rest needs room for the operand
	 * fragments and addresses (the 128x128x32 gemm: 88 beyond its 128
	 * accumulator and 32 staging registers).  Staging past that spills
	 * (BK = 64: 64 staging registers), so such loops stay plain. */
	int vregs = 0;
	for (int j = 0; j < k; j++)
		vregs += lower_copy_stage_regs(c, ST(b->ids[j]));
	c->stage_regs = vregs;
	for (int j = k; j < b->n; j++) {
		const BufLoc *acc = &c->bl[ST(b->ids[j])->dst.buf];
		if (acc->rf >= 0 && !acc->rf_agpr)
			vregs += acc->rf_n;
	}
	if (vregs > STAGE_VGPRS) {
		c->stage_why = "its staging and accumulator registers would exceed the VGPR budget";
		return false;
	}
	Block rest = {b->n - k, b->ids + k};
	c->sgen++;
	c->touched.len = 0;
	lower_collect_block(c, &rest);
	for (int j = 0; j < k; j++)
		if (c->swr[ST(b->ids[j])->dst.buf] == c->sgen) {
			c->stage_why = "its gemms write a copied tile";
			return false;
		}
	lower_flush(c);
	c->sgen++;
	c->touched.len = 0;
	lower_collect_expr(c, s->lo);
	lower_collect_expr(c, s->hi);
	if (c->touched.len) { /* bounds that read memory: the plain loop */
		c->stage_why = "its bounds read memory";
		return false;
	}
	int32_t ok = -1;
	for (int j = 0; j < k; j++) {
		int32_t o = lower_copy_stage_pred(c, ST(b->ids[j]));
		ok = ok < 0 ? o : bin(c, SI_AND, DT_BOOL, ok, o);
	}
	int32_t lplain = label(c), ldone = label(c);
	bra(c, lplain, ok, true);
	int32_t i = reg(c, VT_I32), hi = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, i, expr_as(c, s->lo, DT_I32), -1));
	emit(c, I(SI_MOV, DT_I32, hi, expr_as(c, s->hi, DT_I32), -1));
	c->varreg[s->var] = i;
	int32_t val[STAGE_COPIES][16];
	for (int j = 0; j < k; j++)
		for (int q = 0; q < 16; q++)
			val[j][q] = -1;
	int32_t lskip = label(c);
	bra(c, lskip, setp(c, CMP_GE, DT_I32, i, hi), false);
	for (int j = 0; j < k; j++)
		lower_copy_stage_load(c, ST(b->ids[j]), val[j]);
	place(c, lskip);
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, i, hi), false);
	for (int j = 0; j < k; j++)
		lower_copy_stage_store(c, ST(b->ids[j]), val[j]);
	lower_barrier(c);
	int32_t nx = bin(c, SI_ADD, DT_I32, i, i32c(c, st));
	int32_t lnext = label(c);
	bra(c, lnext, setp(c, CMP_GE, DT_I32, nx, hi), false);
	c->varreg[s->var] = nx;
	for (int j = 0; j < k; j++)
		lower_copy_stage_load(c, ST(b->ids[j]), val[j]);
	c->varreg[s->var] = i;
	place(c, lnext);
	int32_t outer = c->brk;
	c->brk = end;
	lower_block(c, &rest);
	c->brk = outer;
	lower_flush(c);
	emit(c, I(SI_ADD, DT_I32, i, i, i32c(c, st)));
	bra(c, top, -1, false);
	place(c, end);
	bra(c, ldone, -1, false);
	place(c, lplain);
	lower_for(c, s);
	place(c, ldone);
	return true;
}

static void lower_if(L *c, const Stmt *s)
{
	int fv = c->par ? lower_fold_value(c, s->value) : -1;
	if (fv >= 0) { /* a copy of a parallel loop whose whole-tile test decided it (lower_fold.c) */
		lower_block(c, fv ? &s->body : &s->els);
		return;
	}
	bool was = c->par;
	Shadows sh = {0};
	int32_t ids[16];
	if (!c->par && !s->per_thread)
		lower_flush(c);
	if (s->per_thread && !c->par) {
		c->par = true;
		Block both = s->body; /* shadows for both branches */
		lower_shadows_begin(c, &both, &sh, ids);
		Shadows sh2;
		lower_shadows_begin(c, &s->els, &sh2, ids + sh.n);
		for (size_t i = 0; i < sh2.n && sh.n < 16; i++)
			sh.bufs[sh.n++] = sh2.bufs[i];
		lower_shadows_copy(c, &sh);
	}
	int32_t p = expr_as(c, s->value, DT_BOOL);
	if (!c->par) { /* the condition may read memory the bodies write */
		c->sgen++;
		c->touched.len = 0;
		lower_collect_expr(c, s->value);
		if (c->touched.len)
			lower_barrier(c);
	}
	int32_t lelse = label(c), lend = label(c);
	if (!was) /* lazy vector slots (vf_val) never cross a join */
		vf_materialize(c);
	bra(c, lelse, p, true);
	lower_block(c, &s->body);
	if (!c->par)
		lower_flush(c);
	if (!was)
		vf_materialize(c);
	bra(c, lend, -1, false);
	place(c, lelse);
	lower_block(c, &s->els);
	if (!c->par)
		lower_flush(c);
	if (!was)
		vf_materialize(c);
	place(c, lend);
	lower_shadows_end(c, &sh);
	c->par = was;
}

static void stmt(L *c, int32_t id)
{
	const Stmt *s = ST(id);
	switch ((StmtKind)s->kind) {
	case S_ALLOC: break; /* placed up front */
	case S_LET: {
		DType t = (DType)VAR(s->var)->type;
		c->varreg[s->var] = expr_as(c, s->value, t == DT_VOID ? (DType)EX(s->value)->type : t);
		break;
	}
	case S_STORE: lower_store(c, s); break;
	case S_COPY: lower_copy(c, s); break;
	case S_GEMM: lower_gemm(c, s); break;
	case S_CLEAR:
	case S_FILL: lower_fill(c, s); break;
	case S_REDUCE: lower_reduce(c, s); break;
	case S_CUMSUM: lower_cumsum(c, s); break;
	case S_ATOMIC_ADD: lower_atomic(c, s); break;
	case S_BARRIER: lower_barrier(c); break;
	case S_BREAK: /* to the loop's end, with the barrier its body's end would have */
		if (!c->par) {
			lower_flush(c);
			vf_materialize(c);
		}
		if (c->brk == BRK_LAZY) /* an unrolled loop's end: a label only once a break needs it */
			c->brk = label(c);
		bra(c, c->brk, -1, false);
		break;
	case S_PARALLEL: lower_parallel_folded(c, s, lower_parallel_one); break;
	case S_FOR:
		if (!c->par)
			vf_materialize(c); /* no lazy vector slots across a loop's labels */
		c->loop_depth += !c->par;
		if (c->wg && id == c->wg->loop) { /* sm_90a GEMM path: TMA + wgmma (lower_wg_loop) */
			lower_flush(c);
			lower_wg_loop(c, s);
		} else if (!lower_for_staged(c, s)) {
			lower_for(c, s);
		}
		c->loop_depth -= !c->par;
		break;
	case S_IF: lower_if(c, s); break;
	}
}

/* ---- kernel ------------------------------------------------------------------ */

/* AMD: a local lives in registers, one per element (in its storage form),
 * set to 0 at the kernel's start (its value is undefined until written, and
 * a private copy reads it whole).  The AMD backend has no scratch arrays. */
enum { LOCAL_REGS_MAX = 256 };
static void place_local_regs(L *c, int32_t b)
{
	const Buffer *buf = BUF(b);
	DType t = (DType)buf->dtype;
	int64_t n = ir_buf_elems(c->m, buf), used = 0;
	for (int j = 0; j < c->nkb; j++)
		if (c->bl[c->kb[j]].lreg >= 0)
			used += c->bl[c->kb[j]].lreg_n;
	if (used + n > LOCAL_REGS_MAX) {
		char what[160];
		snprintf(what, sizeof what, "%s: local arrays of more than %d elements per thread in all",
		         target_name(c->t->id), LOCAL_REGS_MAX);
		fail(c, buf->pos, "%s are not supported (locals are kept in registers on AMD targets)", what);
		return;
	}
	VType vt = simt_storage_vt(t);
	c->bl[b].lreg = (int32_t)c->f->regs.len;
	c->bl[b].lreg_n = (int32_t)n;
	for (int64_t k = 0; k < n; k++)
		reg(c, vt);
	for (int64_t k = 0; k < n; k++) {
		int32_t r = c->bl[b].lreg + (int32_t)k;
		SInst in = I(vt == VT_F32 || vt == VT_F64 ? SI_MOVF : SI_MOVI, t, r, -1, -1);
		if (vt == VT_B16)
			in.type = DT_F16;
		else if (vt == VT_I32)
			in.type = DT_I32;
		emit(c, in);
	}
}

/* Gives every buffer allocated in block b (recursively) its place. */
static void place_bufs(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (s->kind == S_ALLOC && c->wg && (s->buf == c->wg->skip[0] || s->buf == c->wg->skip[1]))
			continue; /* the sm_90a GEMM path's operand tiles live in its TMA ring */
		if (s->kind == S_ALLOC && BUF(s->buf)->view) { /* the tensor's pointer, its own dims */
			const Buffer *buf = BUF(s->buf);
			c->bl[s->buf].base = c->bl[buf->viewed].base;
			for (int dd = 0; dd < buf->rank; dd++) {
				int32_t r = expr_as(c, buf->shape[dd], DT_I32);
				c->bl[s->buf].dim[dd] = r;
				c->bl[s->buf].dim64[dd] = cvt(c, DT_I64, DT_I32, r);
			}
			continue;
		}
		if (s->kind == S_ALLOC) {
			const Buffer *buf = BUF(s->buf);
			int64_t bytes = ir_buf_elems(c->m, buf) * dtype_bytes((DType)buf->dtype);
			if (buf->scope == SCOPE_LOCAL && target_is_amd(c->t->id)) {
				place_local_regs(c, s->buf);
			} else if (buf->scope == SCOPE_LOCAL) {
				if (vec_push(&c->f->locals, (bytes + 7) & ~7LL))
					c->failed = true;
				c->bl[s->buf].local = (int32_t)c->f->locals.len - 1;
			} else if (c->bl[s->buf].rf == 1) {
				rf_place(c, s->buf);
			} else if (c->bl[s->buf].rr == 1) {
				rr_place(c, s->buf);
			} else if (c->bl[s->buf].vf == 1) {
				vf_place(c, s->buf);
			} else {
				if (c->bl[s->buf].wgm) /* the 128B swizzle atom (lower_wgmma.c) */
					c->f->smem_bytes = (c->f->smem_bytes + 1023) & ~1023LL;
				c->bl[s->buf].smem = c->f->smem_bytes;
				c->f->smem_bytes += (bytes + 15) & ~15LL;
			}
		}
		if (s->kind == S_FOR || s->kind == S_IF || s->kind == S_PARALLEL) {
			place_bufs(c, &s->body);
			place_bufs(c, &s->els);
		}
	}
}

/* Shared memory one block may use: LDS is 64 KiB per workgroup on gfx90a,
 * gfx942 and gfx1100; NVIDIA's opt-in maximum is 163 KiB on sm_80 (A100)
 * and 227 KiB on sm_90a (H100/H200). */
static int64_t smem_limit(ta_target t)
{
	switch (t) {
	case TA_TARGET_SM80: return 163 * 1024;
	case TA_TARGET_SM90A: return 227 * 1024;
	default: return 64 * 1024;
	}
}

/* The kernel's buffers (c->kb): its tensor arguments and every buffer
 * allocated in its body, sorted by id. */
static int kbuf_collect(L *c, const Block *b, size_t *cap)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (s->kind == S_ALLOC && s->buf >= 0) {
			if ((size_t)c->nkb >= *cap) {
				size_t nc = *cap ? 2 * *cap : 16;
				int32_t *g = realloc(c->kb, nc * sizeof *g);
				if (!g)
					return -1;
				c->kb = g, *cap = nc;
			}
			c->kb[c->nkb++] = s->buf;
		}
		if (kbuf_collect(c, &s->body, cap) || kbuf_collect(c, &s->els, cap))
			return -1;
	}
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

uint8_t *lower_kb_bytes(L *c)
{
	uint8_t *p = malloc(c->m->bufs.len + 1);
	if (p)
		FOR_KBUF(c, b)
			p[b] = 0;
	return p;
}

static int kernel_bufs(L *c)
{
	size_t cap = (size_t)c->k->nargs + 16;
	if (!(c->kb = malloc(cap * sizeof *c->kb)))
		return -1;
	for (int i = 0; i < c->k->nargs; i++)
		if (c->k->args[i].buf >= 0)
			c->kb[c->nkb++] = c->k->args[i].buf;
	if (kbuf_collect(c, &c->k->body, &cap))
		return -1;
	qsort(c->kb, (size_t)c->nkb, sizeof *c->kb, cmp_i32);
	int n = 0;
	for (int i = 0; i < c->nkb; i++)
		if (!n || c->kb[n - 1] != c->kb[i])
			c->kb[n++] = c->kb[i];
	c->nkb = n;
	return 0;
}

static int lower_kernel_impl(const Module *m, int k, const Target *t, const LowerOptions *o, const LowerWg *wg,
			     SimtFunc *f, bool *wg_ok, Diag *d);

int lower_kernel(const Module *m, int k, const Target *t, SimtFunc *f, Diag *d)
{
	return lower_kernel_impl(m, k, t, NULL, NULL, f, NULL, d);
}

int lower_kernel_opts(const Module *m, int k, const Target *t, const LowerOptions *o, SimtFunc *f, Diag *d)
{
	return lower_kernel_impl(m, k, t, o, NULL, f, NULL, d);
}

int lower_kernel_wg(const Module *m, int k, const Target *t, const LowerOptions *o, const LowerWg *wg, SimtFunc *f,
		    bool *ok, Diag *d)
{
	*ok = false;
	return lower_kernel_impl(m, k, t, o, wg, f, ok, d);
}

static int lower_kernel_impl(const Module *m, int k, const Target *t, const LowerOptions *o, const LowerWg *wg,
			     SimtFunc *f, bool *wg_ok, Diag *d)
{
	memset(f, 0, sizeof *f);
	const Kernel *kn = &m->kernels.data[k];
	f->m = m;
	f->kernel = k;
	f->name = kn->name;
	f->threads = kn->threads;
	L c0 = {0}, *c = &c0;
	c->m = m;
	c->k = kn;
	c->t = t;
	c->f = f;
	c->d = d;
	c->nthreads = kn->threads;
	c->wg = wg;
	c->wg_stage = -1;
	if (!m->verified) {
		diag_error(d, "internal: lowering an unverified module");
		return -1;
	}
	DType fnuz = (DType)m->first_fnuz;
	if (target_is_nvidia(t->id) && fnuz != DT_VOID) {
		diag_at(d, DIAG_ERROR, &m->src, kn->pos,
			"kernel '%s' uses %s, which is an AMD format; NVIDIA targets support fp8e4m3 and fp8e5m2", kn->name,
			dtype_name(fnuz));
		return -1;
	}
	if (t->id == TA_TARGET_SM80 && m->first_fp8 != DT_VOID) {
		diag_at(d, DIAG_ERROR, &m->src, kn->pos, "kernel '%s' uses fp8, which needs --target=sm_90a", kn->name);
		return -1;
	}
	size_t nb = m->bufs.len, nv = m->vars.len;
	/* By buffer id, but only the kernel's own entries are set up (below)
	 * and ever read: malloc, so that the rest costs no time per kernel. */
	c->bl = malloc((nb + 1) * sizeof *c->bl);
	c->varreg = malloc((nv + 1) * sizeof *c->varreg);
	c->fold_def = malloc((nv + 1) * sizeof *c->fold_def);
	c->rd_ep = malloc((nb + 1) * sizeof(uint32_t));
	c->wr_ep = malloc((nb + 1) * sizeof(uint32_t));
	c->srd = malloc((nb + 1) * sizeof(uint32_t));
	c->swr = malloc((nb + 1) * sizeof(uint32_t));
	c->frag_why = malloc((nb + 1) * sizeof(const char *));
	c->frag_wpos = malloc((nb + 1) * sizeof(SrcPos));
	if (!c->bl || !c->varreg || !c->fold_def || !c->rd_ep || !c->wr_ep || !c->srd || !c->swr || !c->frag_why || !c->frag_wpos) {
		c->failed = true;
		diag_error(d, "out of memory");
		goto out;
	}
	c->epoch = 1;
	memset(c->varreg, 0xff, nv * sizeof *c->varreg); /* all -1 */
	memset(c->fold_def, 0xff, nv * sizeof *c->fold_def);
	if (kernel_bufs(c)) {
		c->failed = true;
		goto out;
	}
	FOR_KBUF(c, b) {
		memset(&c->bl[b], 0, sizeof c->bl[b]);
		c->rd_ep[b] = c->wr_ep[b] = c->srd[b] = c->swr[b] = 0;
		c->frag_why[b] = NULL;
		c->frag_wpos[b] = (SrcPos){0, 0};
		c->bl[b].shadow = c->bl[b].rf = c->bl[b].vf = c->bl[b].rr = -1;
		c->bl[b].lreg = c->bl[b].lshadow = -1;
	}
	c->rf_slot = c->rr_slot = c->rr_tile = -1;
	c->areg_buf = c->areg_frag = -1;
	c->nv_off = o ? o->nvidia_off : 0;
	c->brk = -1;
	c->vf_kr = c->vf_cs = -1;
	c->vf_mode = o && o->no_vector_frags ? 0 : 1;
	/* parameters */
	for (int i = 0; i < kn->nargs; i++) {
		SimtParam p = {.arg = i};
		if (kn->args[i].buf >= 0) {
			const Buffer *b = &m->bufs.data[kn->args[i].buf];
			p.name = b->name;
			p.kind = PK_TENSOR;
			p.dtype = b->dtype;
			p.vt = VT_I64;
		} else {
			const Var *v = &m->vars.data[kn->args[i].var];
			p.name = v->name;
			p.kind = v->kind == V_SYMBOL ? PK_SYMBOL : PK_SCALAR;
			p.dtype = v->kind == V_SYMBOL ? DT_I32 : v->type;
			VType vt = simt_vt((DType)p.dtype);
			p.vt = vt == VT_PRED ? VT_I32 : vt;
		}
		if (vec_push(&f->params, p))
			c->failed = true;
	}
	if (c->failed)
		goto out;
	c->tid = reg(c, VT_I32);
	emit(c, I(SI_TID, DT_I32, c->tid, -1, -1));
	c->shbase = reg(c, VT_I32);
	emit(c, I(SI_SHBASE, DT_I32, c->shbase, -1, -1));
	/* threads(X, Y, Z): tx = tid % X, ty = tid / X % Y, tz = tid / (X * Y) */
	c->varreg[kn->threadidx[0]] = c->tid;
	if (kn->ntdim < 3 && kn->uses_tyz) /* ty, tz of a smaller block: 0 */
		c->varreg[kn->threadidx[1]] = c->varreg[kn->threadidx[2]] = i32c(c, 0);
	if (kn->ntdim > 1) {
		c->varreg[kn->threadidx[0]] = bin(c, SI_REM, DT_U32, c->tid, i32c(c, kn->tdim[0]));
		int32_t q = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, kn->tdim[0]));
		c->varreg[kn->threadidx[1]] = kn->ntdim > 2 ? bin(c, SI_REM, DT_U32, q, i32c(c, kn->tdim[1])) : q;
		if (kn->ntdim > 2)
			c->varreg[kn->threadidx[2]] = bin(c, SI_DIV, DT_U32, q, i32c(c, kn->tdim[1]));
	}
	for (int dim = 0; dim < 3; dim++)
		if (kn->blockidx[dim] >= 0) {
			int32_t r = reg(c, VT_I32);
			SInst in = I(SI_CTAID, DT_I32, r, -1, -1);
			in.imm = dim;
			emit(c, in);
			c->varreg[kn->blockidx[dim]] = r;
		}
	for (size_t i = 0; i < f->params.len; i++) {
		const SimtParam *p = &f->params.data[i];
		DType lt = p->kind == PK_TENSOR ? DT_I64 : p->vt == VT_F32 ? DT_F32 : op_type((DType)p->dtype);
		if (p->dtype == DT_BOOL)
			lt = DT_I32;
		int32_t r = reg(c, (VType)p->vt);
		SInst in = I(SI_PARAM, lt, r, -1, -1);
		in.imm = (int64_t)i;
		emit(c, in);
		if (p->kind == PK_TENSOR) {
			c->bl[kn->args[i].buf].base = r;
		} else {
			int32_t v = kn->args[i].var;
			c->varreg[v] = p->dtype == DT_BOOL ? setp(c, CMP_NE, DT_I32, r, i32c(c, 0)) : r;
		}
	}
	lower_raster(c); /* use_swizzle: bx, by from the launch's block (after params: the grid may use them) */
	/* global tensor dimensions (after params: symbols may be params) */
	for (int i = 0; i < kn->nargs; i++) {
		int32_t bid = kn->args[i].buf;
		if (bid < 0)
			continue;
		const Buffer *b = &m->bufs.data[bid];
		for (int dd = 0; dd < b->rank; dd++) {
			int32_t r = expr_as(c, b->shape[dd], DT_I32);
			c->bl[bid].dim[dd] = r;
			c->bl[bid].dim64[dd] = cvt(c, DT_I64, DT_I32, r);
		}
	}
	rf_analyze(c);
	if (c->vf_mode)
		vf_analyze(c);
	swz_analyze(c);
	wgmma_analyze(c);
	place_bufs(c, &kn->body);
	wgmma_place(c);
	ldm_swizzle_analyze(c);
	vf_setup(c);
	/* read-only buffers (typically the input tensors) need no barriers */
	c->sgen++;
	c->touched.len = 0;
	lower_collect_block(c, &kn->body);
	c->ro = lower_kb_bytes(c);
	if (!c->ro) {
		c->failed = true;
		goto out;
	}
	FOR_KBUF(c, b)
		c->ro[b] = c->swr[b] != c->sgen;
	c->touched.len = 0;
	if (f->smem_bytes > smem_limit(t->id)) {
		/* Caught here, not at launch: the code object would load and then
		 * fail every dispatch with an unhelpful runtime error. */
		StrBuf why = {0};
		int64_t frag = 0;
		FOR_KBUF(c, i) { /* this kernel's buffers: only their entries are set up */
			const Buffer *b = &m->bufs.data[i];
			if (b->scope != SCOPE_FRAGMENT || c->bl[i].rf >= 0 || c->bl[i].rr >= 0 || c->bl[i].vf >= 0)
				continue;
			int64_t bytes = (ir_buf_elems(m, b) * dtype_bytes((DType)b->dtype) + 15) & ~15LL;
			frag += bytes;
			sb_printf(&why, "%s'%s' %lld bytes", frag == bytes ? "" : "; ", b->name, (long long)bytes);
			if (c->frag_why[i] && c->frag_wpos[i].line) /* vf_analyze's first reason */
				sb_printf(&why, " (line %d:%d: %s)", c->frag_wpos[i].line, c->frag_wpos[i].col, c->frag_why[i]);
			else if (c->frag_why[i])
				sb_printf(&why, " (%s)", c->frag_why[i]);
			else
				sb_puts(&why, " (not an element-wise f32 tile of rank 1 or 2, nor a gemm accumulator whose uses "
				        "stay in the accumulator's registers)");
		}
		int64_t other = f->smem_bytes - frag;
		diag_at(d, DIAG_ERROR, &m->src, kn->pos,
			"kernel '%s' needs %lld bytes of shared memory; %s allows at most %lld per block "
			"(shared buffers and scratch %lld bytes%s%s)",
			kn->name, (long long)f->smem_bytes, target_name(t->id), (long long)smem_limit(t->id),
			(long long)other, frag ? "; fragments kept in shared memory, and why: " : "", why.buf ? why.buf : "");
		sb_free(&why);
		c->failed = true;
		goto out;
	}
	lower_block(c, &kn->body);
	emit(c, I(SI_RET, DT_VOID, -1, -1, -1));
	if (wg_ok)
		*wg_ok = !c->failed && c->wg_done;
	f->wg_stage = c->wg_stage;
out:
	free(c->bl);
	free(c->frag_why);
	free(c->frag_wpos);
	free(c->kb);
	free(c->varreg);
	free(c->fold_def);
	free(c->rd_ep);
	free(c->wr_ep);
	free(c->srd);
	free(c->swr);
	free(c->ro);
	free(c->vl.red_area);
	free(c->vf_lz);
	vec_free(&c->vf_lzl);
	vec_free(&c->touched);
	vec_free(&c->wlocals);
	if (c->failed && !d->nerrors)
		diag_error(d, "out of memory while lowering kernel '%s'", kn->name);
	return c->failed ? -1 : 0;
}

void simt_free(SimtFunc *f)
{
	vec_free(&f->regs);
	vec_free(&f->code);
	vec_free(&f->locals);
	vec_free(&f->params);
	vec_free(&f->acc);
	sb_free(&f->notes);
}
