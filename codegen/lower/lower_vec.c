/* lower_vec.c — element-wise fragments in registers (the vector layout,
 * VfLayout): which fragments qualify (vf_analyze), the layout, and their
 * parallel bodies, copies to and from memory, and row reductions. */
#include "lower_impl.h"

/* ---- register-resident element-wise fragments (vector layout) ------------
 *
 * A fragment that no gemm touches lives in registers when every use is one
 * the layout can do without other threads' elements (vf_analyze):
 *  - tile fragments F[R, C]: whole copies to or from a global or shared
 *    buffer, clear/fill, parallel (i, k) in (R, C) touching F[i, k], and
 *    reduce(F, D, dim=1) into a row fragment;
 *  - row fragments D[R] (one value per row of the tile): reduce results,
 *    parallel (i) in (R) touching D[i], D[i] in parallel (i, k) in (R, C),
 *    whole copies, clear/fill;
 *  - column fragments W[C]: whole copies, clear/fill, W[k] in parallel
 *    (i, k) in (R, C).
 * Parallel bodies with such fragments may store only to them (let, if and
 * serial loops allowed).  The layout (VfLayout) is shared by all of them,
 * so a thread holds the row values of exactly its tile rows, and the
 * column values of its tile columns: element code needs no other thread,
 * and a row reduction is a per-thread fold plus butterfly shuffles among
 * the P lanes of the row (a power of two <= 32, inside one warp/wave). */

typedef struct {
	uint8_t *bad, *role, *ges; /* per buffer: ineligible, VF_* role, smallest global element bytes copied */
	const char **why;          /* per buffer: why it is ineligible (the first reason), for messages */
	SrcPos *wpos;              /* where */
	int R, C;                  /* tile shape, 0 until seen */
	const Stmt *par;
	bool changed, pass2;
	VEC(int32_t) tl;           /* fragments the current parallel touches */
	bool par_ok;               /* the current parallel has only legal statements */
} VfScan;

static bool vf_cand(L *c, int32_t b)
{
	return b >= 0 && BUF(b)->scope == SCOPE_FRAGMENT && c->bl[b].rf < 0 && c->bl[b].rr < 0 && BUF(b)->dtype == DT_F32 &&
	       (BUF(b)->rank == 1 || BUF(b)->rank == 2);
}

static void vf_bad(VfScan *v, int32_t b, SrcPos pos, const char *why)
{
	if (!v->bad[b])
		v->bad[b] = 1, v->changed = true, v->why[b] = why, v->wpos[b] = pos;
}

static void vf_set_role(VfScan *v, int32_t b, int role, SrcPos pos)
{
	if (v->role[b] && v->role[b] != role)
		vf_bad(v, b, pos, "it is used both as a tile and as a row or column statistic");
	v->role[b] = (uint8_t)role;
}

static bool is_var(L *c, int32_t e, int32_t var) { return EX(e)->kind == E_VAR && EX(e)->var == var; }

/* An element access F[args]: legal only as F[i, k] (tile), F[i] (row) or
 * F[k] (column) of the enclosing parallel, whose extents are the tile's. */
static void vf_access(L *c, VfScan *v, int32_t b, int32_t nargs, const int32_t *args, bool store, SrcPos pos)
{
	if (is_frag(c, b) && v->par) {
		if (c->bl[b].rf >= 0)
			v->par_ok = false; /* an MMA-layout fragment in the same body */
		else if (vec_push(&v->tl, b))
			c->failed = true;
	}
	if (!vf_cand(c, b) || v->bad[b])
		return;
	const Stmt *p = v->par;
	int64_t e0 = 0, e1 = 0;
	if (!p || (p->nvars != 1 && p->nvars != 2) || !ir_const_int(c->m, p->extents[0], &e0) ||
	    (p->nvars == 2 && !ir_const_int(c->m, p->extents[1], &e1))) {
		vf_bad(v, b, pos, "an element is accessed outside a parallel loop over its shape");
		return;
	}
	const Buffer *B = BUF(b);
	if (p->nvars == 2 && B->rank == 2 && nargs == 2 && is_var(c, args[0], p->vars[0]) &&
	    is_var(c, args[1], p->vars[1]) && bdim(c, B, 0) == e0 && bdim(c, B, 1) == e1) {
		vf_set_role(v, b, VF_TILE, pos);
		if (!v->R)
			v->R = (int)e0, v->C = (int)e1;
	} else if (B->rank == 1 && nargs == 1 && is_var(c, args[0], p->vars[0]) && bdim(c, B, 0) == e0 &&
		   !(store && p->nvars == 2)) {
		vf_set_role(v, b, VF_ROW, pos);
	} else if (p->nvars == 2 && B->rank == 1 && nargs == 1 && is_var(c, args[0], p->vars[1]) &&
		   bdim(c, B, 0) == e1 && !store) {
		vf_set_role(v, b, VF_COL, pos);
	} else {
		vf_bad(v, b, pos, "an element is accessed at other indices than the parallel loop's own (e.g. F[j, i]), "
		       "which needs another thread's element");
	}
	/* the parallel iterates over the tile layout */
	if (v->pass2 && (e0 != v->R || (p->nvars == 2 && e1 != v->C)))
		vf_bad(v, b, pos, "a parallel loop over it has another shape than the kernel's element-wise tile");
}

static void vf_expr(L *c, VfScan *v, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD)
		vf_access(c, v, e->buf, e->nargs, e->args, false, e->pos);
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		vf_expr(c, v, e->a);
		if (e->kind == E_BINARY)
			vf_expr(c, v, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			vf_expr(c, v, e->args[i]);
}

static void vf_block(L *c, VfScan *v, const Block *b);

/* A whole-fragment copy side; the other side must be a global or shared
 * buffer of the same rank. */
static void vf_copy_side(L *c, VfScan *v, const Stmt *s, const Region *f, const Region *o)
{
	if (!vf_cand(c, f->buf))
		return;
	const Buffer *ob = BUF(o->buf);
	if (is_frag(c, o->buf) || ob->scope == SCOPE_LOCAL || !lower_window_ok(c, s, f, o)) {
		vf_bad(v, f->buf, s->pos, "a copy with another fragment, a local, a partial region or a reordering of "
		       "its dimensions");
		return;
	}
	int es = dtype_bytes((DType)ob->dtype);
	if (ob->scope == SCOPE_GLOBAL && (!v->ges[f->buf] || es < v->ges[f->buf]))
		v->ges[f->buf] = (uint8_t)es;
}

static void vf_stmt(L *c, VfScan *v, int32_t id)
{
	const Stmt *s = ST(id);
	vf_expr(c, v, s->value);
	for (int i = 0; i < s->src.nidx; i++)
		vf_expr(c, v, s->src.idx[i]);
	for (int i = 0; i < s->dst.nidx; i++)
		vf_expr(c, v, s->dst.idx[i]);
	bool inpar = v->par != NULL;
	switch ((StmtKind)s->kind) {
	case S_STORE:
		if (inpar && !vf_cand(c, s->dst.buf))
			v->par_ok = false;
		vf_access(c, v, s->dst.buf, s->dst.nidx, s->dst.idx, true, s->pos);
		break;
	case S_LET: break;
	case S_COPY:
		vf_copy_side(c, v, s, &s->src, &s->dst);
		vf_copy_side(c, v, s, &s->dst, &s->src);
		break;
	case S_CLEAR:
	case S_FILL:
		if (vf_cand(c, s->dst.buf) && s->dst.nidx)
			vf_bad(v, s->dst.buf, s->pos, "a partial fill");
		break;
	case S_REDUCE: {
		bool a = vf_cand(c, s->src.buf), d = vf_cand(c, s->dst.buf);
		bool ok = a && d && !v->bad[s->src.buf] && !v->bad[s->dst.buf] && BUF(s->src.buf)->rank == 2 &&
			  BUF(s->dst.buf)->rank == 1 && s->dim == 1 && !s->src.nidx && !s->dst.nidx;
		if (ok) {
			vf_set_role(v, s->src.buf, VF_TILE, s->pos);
			vf_set_role(v, s->dst.buf, VF_ROW, s->pos);
			if (!v->R)
				v->R = (int)bdim(c, BUF(s->src.buf), 0), v->C = (int)bdim(c, BUF(s->src.buf), 1);
		} else {
			if (a)
				vf_bad(v, s->src.buf, s->pos, "a reduction other than of a whole tile along dim 1 into a row");
			if (d)
				vf_bad(v, s->dst.buf, s->pos, "a reduction other than of a whole tile along dim 1 into a row");
		}
		break;
	}
	case S_FOR:
		vf_expr(c, v, s->lo);
		vf_expr(c, v, s->hi);
		vf_block(c, v, &s->body);
		break;
	case S_IF:
		vf_block(c, v, &s->body);
		vf_block(c, v, &s->els);
		break;
	case S_PARALLEL: {
		if (inpar) { /* nested parallels: not for this layout */
			v->par_ok = false;
			vf_block(c, v, &s->body);
			break;
		}
		v->par = s;
		v->par_ok = true;
		v->tl.len = 0;
		vf_block(c, v, &s->body);
		bool any_bad = !v->par_ok;
		for (size_t i = 0; i < v->tl.len; i++)
			any_bad |= !vf_cand(c, v->tl.data[i]) || v->bad[v->tl.data[i]];
		if (any_bad) /* lowered the generic way: none of its fragments may be in registers */
			for (size_t i = 0; i < v->tl.len; i++)
				if (vf_cand(c, v->tl.data[i]))
					vf_bad(v, v->tl.data[i], s->pos, "it shares a parallel loop with a fragment kept in shared "
					       "memory or with statements that are not element-wise");
		v->par = NULL;
		break;
	}
	default: /* gemm, cumsum, atomic_add, barrier, alloc */
		if (inpar)
			v->par_ok = false;
		if (vf_cand(c, s->src.buf))
			vf_bad(v, s->src.buf, s->pos, "a gemm, cumsum or atomic reads it");
		if (vf_cand(c, s->src2.buf))
			vf_bad(v, s->src2.buf, s->pos, "a gemm reads it");
		if (s->kind != S_ALLOC && vf_cand(c, s->dst.buf))
			vf_bad(v, s->dst.buf, s->pos, "a gemm, cumsum or atomic writes it");
		break;
	}
}

static void vf_block(L *c, VfScan *v, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		vf_stmt(c, v, b->ids[i]);
}

/* The layout for tile shape R x C and chunk width V.  A row takes P lanes:
 * all Q = C / V chunks' lanes when Q < 32, else W warps, W doubled from 1
 * while row groups would be duplicated or a thread would hold more than 64
 * tile slots. */
static bool vf_layout_v(L *c, VfLayout *l, int R, int C, int V)
{
	int T = c->nthreads;
	if (C % V || T % 32)
		return false;
	int Q = C / V, P, W = 1;
	if (Q < 32) {
		if (Q & (Q - 1))
			return false;
		P = Q;
	} else {
		if (Q % 32)
			return false;
		for (;;) {
			P = 32 * W;
			int G = T / P, NR = G >= R ? 1 : (R + G - 1) / G;
			bool fits = G <= R && NR * (Q / P) * V <= 64;
			if (fits || 2 * P > T || Q % (2 * P))
				break;
			W *= 2;
		}
	}
	if (T % P)
		return false;
	int G = T / P, NR;
	if (G >= R) {
		if (G % R)
			return false;
		NR = 1;
	} else {
		if (R % G)
			return false;
		NR = R / G;
	}
	*l = (VfLayout){.R = R, .C = C, .V = V, .P = P, .NC = Q / P, .G = G, .NR = NR, .W = W};
	return true;
}

/* The layout for tile shape R x C with smallest global element size es
 * (0: none): 16-byte chunks when possible, narrower ones (down to 4 bytes)
 * when that spreads a row over more lanes instead of duplicating rows. */
static bool vf_layout(L *c, VfLayout *l, int R, int C, int es)
{
	int vmax = es == 2 ? 8 : 4, vmin = es == 2 ? 2 : 1;
	bool found = false;
	for (int V = vmax; V >= 1; V /= 2) {
		VfLayout t;
		if (!vf_layout_v(c, &t, R, C, V))
			continue;
		if (!found || (t.G <= R && V >= vmin)) {
			*l = t;
			found = true;
		}
		if (t.G <= R)
			break;
	}
	return found;
}

/* Marks the eligible fragments (bl[].vf = 1) and fixes the layout. */
void vf_analyze(L *c)
{
	size_t nb = c->m->bufs.len;
	VfScan v = {.bad = lower_kb_bytes(c), .role = lower_kb_bytes(c), .ges = lower_kb_bytes(c),
	            .why = malloc((nb + 1) * sizeof(const char *)), .wpos = malloc((nb + 1) * sizeof(SrcPos))};
	if (!v.bad || !v.role || !v.ges || !v.why || !v.wpos) {
		c->failed = true;
		goto out;
	}
	FOR_KBUF(c, b)
		v.why[b] = NULL, v.wpos[b] = (SrcPos){0, 0};
	/* a fragment found ineligible can make others so (a parallel or a
	 * reduction that mixes them): repeat until nothing changes (each
	 * repeated pass marks another fragment; if the cap cut that short,
	 * the rescan below turns everything off) */
	for (int pass = 0; pass < 64; pass++) {
		v.changed = false;
		v.pass2 = pass > 0;
		vf_block(c, &v, &c->k->body);
		if (!v.changed && pass > 0)
			break;
	}
	int es = 0, slots = 0, ntile = 0;
	FOR_KBUF(c, b) {
		if (!vf_cand(c, (int32_t)b) || v.bad[b])
			continue;
		int64_t n0 = bdim(c, BUF(b), 0);
		bool ok = v.role[b] == VF_TILE ? n0 == v.R && bdim(c, BUF(b), 1) == v.C
			  : v.role[b] == VF_ROW ? n0 == v.R : v.role[b] == VF_COL ? n0 == v.C : false;
		if (!ok) {
			vf_bad(&v, (int32_t)b, BUF(b)->pos, "its shape is not the kernel's element-wise tile (or a row or column "
			       "of it)");
			continue;
		}
		ntile += v.role[b] == VF_TILE;
		if (v.role[b] != VF_ROW && v.ges[b] && (!es || v.ges[b] < es))
			es = v.ges[b];
	}
	/* the check above may have dropped fragments that others depend on:
	 * rescan once more so that mixed parallels/reductions drop together */
	v.changed = false;
	v.pass2 = true;
	vf_block(c, &v, &c->k->body);
	const char *none = v.changed ? "the element-wise register layout was dropped (fragments it depends on stay in "
	                               "shared memory)"
	                   : !ntile ? "no element-wise tile is in registers for it to go with" : NULL;
	VfLayout l;
	if (!none && !vf_layout(c, &l, v.R, v.C, es))
		none = "no element-wise register layout fits the tile shape and the block's threads";
	if (!none)
		FOR_KBUF(c, b)
			if (vf_cand(c, (int32_t)b) && !v.bad[b])
				slots += v.role[b] == VF_TILE ? l.NR * l.NC * l.V : v.role[b] == VF_ROW ? l.NR : l.NC * l.V;
	/* registers per thread: 128 beside addresses and temporaries (NVIDIA:
	 * 192, since ptxas reuses a slot's register once it is dead and lazy
	 * slots (vf_val) hold two f16 values in one) */
	if (!none && (l.NR * l.NC * l.V > 64 || slots > (target_is_nvidia(c->t->id) ? 192 : 128)))
		none = "the element-wise register layout would take too many registers per thread";
	if (none) { /* keep it simple: all or nothing */
		if (c->frag_why)
			FOR_KBUF(c, b)
				if (vf_cand(c, (int32_t)b) && !v.bad[b] && !c->frag_why[b])
					c->frag_why[b] = none, c->frag_wpos[b] = BUF(b)->pos;
		goto out;
	}
	c->vl = l;
	FOR_KBUF(c, b)
		if (vf_cand(c, (int32_t)b) && !v.bad[b]) {
			c->bl[b].vf = 1;
			c->bl[b].vf_role = v.role[b];
		}
out:
	if (c->frag_why && v.why)
		FOR_KBUF(c, b)
			if (v.why[b] && !c->frag_why[b]) /* rf_analyze's reason first */
				c->frag_why[b] = v.why[b], c->frag_wpos[b] = v.wpos[b];
	free(v.bad);
	free(v.role);
	free(v.ges);
	free(v.why);
	free(v.wpos);
	vec_free(&v.tl);
}

void vf_place(L *c, int32_t b)
{
	BufLoc *bl = &c->bl[b];
	const VfLayout *l = &c->vl;
	bl->vf_n = bl->vf_role == VF_TILE ? l->NR * l->NC * l->V : bl->vf_role == VF_ROW ? l->NR : l->NC * l->V;
	bl->vf = (int32_t)c->f->regs.len;
	for (int i = 0; i < bl->vf_n; i++)
		reg(c, VT_F32);
}

/* Numbers the reduce statements over vector fragments (red_area), noting
 * which are inside a loop (they run again, so they keep the barrier that
 * protects their area from their own next run). */
static void vf_count_reds(L *c, const Block *b, bool loop)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (s->kind == S_REDUCE && c->bl[s->src.buf].vf >= 0)
			c->vl.red_area[b->ids[i]] = 1 + 2 * c->vl.nred++ + loop;
		if (s->kind == S_FOR || s->kind == S_IF) {
			vf_count_reds(c, &s->body, loop || s->kind == S_FOR);
			vf_count_reds(c, &s->els, loop || s->kind == S_FOR);
		}
	}
}

/* Thread coordinates of the layout, once at entry. */
void vf_setup(L *c)
{
	VfLayout *l = &c->vl;
	bool any = false;
	FOR_KBUF(c, b)
		any |= c->bl[b].vf >= 0;
	if (!any)
		return;
	if (target_is_nvidia(c->t->id)) { /* every slot register exists by now (place_bufs) */
		c->nlz = (int32_t)c->f->regs.len;
		c->vf_lz = malloc(((size_t)c->nlz + 1) * sizeof *c->vf_lz);
		if (!c->vf_lz) {
			c->failed = true;
			return;
		}
		for (int32_t i = 0; i < c->nlz; i++)
			c->vf_lz[i] = -1;
	}
	int32_t p = bin(c, SI_REM, DT_U32, c->tid, i32c(c, l->P));
	int32_t g = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, l->P));
	l->row0 = l->G > l->R ? bin(c, SI_REM, DT_U32, g, i32c(c, l->R)) : g;
	l->col0 = bin(c, SI_MUL, DT_I32, p, i32c(c, l->V));
	/* duplicates (row groups beyond R) store nothing; row values are
	 * stored by lane 0 of the row, column values by row group 0 */
	l->st_tile = l->G > l->R ? setp(c, CMP_LT, DT_U32, g, i32c(c, l->R)) : -1;
	l->st_col = l->G > 1 ? setp(c, CMP_EQ, DT_I32, g, i32c(c, 0)) : -1;
	int32_t p0 = l->P > 1 ? setp(c, CMP_EQ, DT_I32, p, i32c(c, 0)) : -1;
	l->st_row = p0 < 0 ? l->st_tile : l->st_tile < 0 ? p0 : bin(c, SI_AND, DT_BOOL, p0, l->st_tile);
	if (l->W > 1) { /* partials[area][kr][g][w] */
		l->red_area = calloc(c->m->stmts.len + 1, sizeof *l->red_area);
		if (!l->red_area) {
			c->failed = true;
			return;
		}
		vf_count_reds(c, &c->k->body, false);
		l->nred++; /* the spare: statements lowered twice */
		l->red_smem = c->f->smem_bytes;
		l->red_bytes = ((int64_t)l->NR * l->G * l->W * 4 + 15) & ~15LL;
		c->f->smem_bytes += l->nred * l->red_bytes;
		int32_t w = bin(c, SI_DIV, DT_U32, p, i32c(c, 32));
		int32_t rowb = bin(c, SI_MUL, DT_I32, g, i32c(c, 4 * l->W));
		l->rowpart = bin(c, SI_ADD, DT_I32, c->shbase, rowb);
		l->part = bin(c, SI_ADD, DT_I32, l->rowpart, bin(c, SI_MUL, DT_I32, w, i32c(c, 4)));
		l->lane0 = setp(c, CMP_EQ, DT_I32, bin(c, SI_REM, DT_U32, p, i32c(c, 32)), i32c(c, 0));
	}
}

static int32_t vf_row(L *c, int kr)
{
	return kr ? bin(c, SI_ADD, DT_I32, c->vl.row0, i32c(c, kr * c->vl.G)) : c->vl.row0;
}

/* Column of column slot cs = kc * V + j. */
static int32_t vf_col(L *c, int cs)
{
	const VfLayout *l = &c->vl;
	int d = cs / l->V * l->P * l->V + cs % l->V;
	return d ? bin(c, SI_ADD, DT_I32, l->col0, i32c(c, d)) : l->col0;
}

/* The register of fragment b's element at the current slots. */
static int32_t vf_slot(L *c, int32_t b, int kr, int cs)
{
	const BufLoc *bl = &c->bl[b];
	const VfLayout *l = &c->vl;
	switch (bl->vf_role) {
	case VF_TILE: return bl->vf + kr * l->NC * l->V + cs;
	case VF_ROW: return bl->vf + kr;
	default: return bl->vf + cs;
	}
}

int32_t vf_reg(L *c, int32_t b) { return vf_slot(c, b, c->vf_kr, c->vf_cs); }

/* ---- lazy slots (NVIDIA) ------------------------------------------------
 * A slot copied in from f16/bf16 memory and not written since keeps the
 * loaded 32-bit word: each read converts its half, so two f16 values, not
 * two f32, stay live until the slot is written (rmsnorm's X_f and W_f).
 * The state is the lowering's, so it must be the same on every path into
 * a label: block-level ifs and loops materialize all lazy slots first and
 * at each branch's end, no lazy slot is made inside a loop, and a parallel
 * body that writes a fragment under its own if/for materializes it first. */
static int32_t vf_conv(L *c, int32_t code)
{
	int32_t h = reg(c, VT_B16);
	SInst in = I(SI_HALF, DT_I32, h, code >> 2, -1);
	in.imm = (code >> 1) & 1;
	emit(c, in);
	return unpack(c, code & 1 ? DT_BF16 : DT_F16, h);
}

/* The value of slot register r (converted if lazy). */
int32_t vf_val(L *c, int32_t r)
{
	if (r < 0 || r >= c->nlz || c->vf_lz[r] < 0)
		return r;
	return vf_conv(c, c->vf_lz[r]);
}

/* Slot register r is about to be written. */
void vf_def(L *c, int32_t r)
{
	if (r >= 0 && r < c->nlz)
		c->vf_lz[r] = -1;
}

static void vf_lazy(L *c, int32_t r, int32_t word, int half, DType ot)
{
	c->vf_lz[r] = word * 4 + half * 2 + (ot == DT_BF16);
	if (vec_push(&c->vf_lzl, r))
		c->failed = true;
}

void vf_materialize_reg(L *c, int32_t r)
{
	if (r >= 0 && r < c->nlz && c->vf_lz[r] >= 0) {
		emit(c, I(SI_MOV, DT_F32, r, vf_conv(c, c->vf_lz[r]), -1));
		c->vf_lz[r] = -1;
	}
}

void vf_materialize(L *c)
{
	for (size_t i = 0; i < c->vf_lzl.len; i++)
		vf_materialize_reg(c, c->vf_lzl.data[i]);
	c->vf_lzl.len = 0;
}

/* Materializes the fragments a parallel body stores to under its own if
 * or serial loop (nested > 0): those stores run on some paths only. */
static void vf_materialize_nested(L *c, const Block *b, int nested)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (s->kind == S_STORE && nested && c->bl[s->dst.buf].vf >= 0)
			for (int e = 0; e < c->bl[s->dst.buf].vf_n; e++)
				vf_materialize_reg(c, c->bl[s->dst.buf].vf + e);
		if (s->kind == S_FOR || s->kind == S_IF || s->kind == S_PARALLEL) {
			vf_materialize_nested(c, &s->body, nested + 1);
			vf_materialize_nested(c, &s->els, nested + 1);
		}
	}
}

/* Does a parallel body touch a vector fragment?  (Eligibility makes every
 * fragment of such a body one.) */
static bool vf_find_expr(L *c, int32_t id)
{
	if (id < 0)
		return false;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD && c->bl[e->buf].vf >= 0)
		return true;
	if ((e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) &&
	    (vf_find_expr(c, e->a) || (e->kind == E_BINARY && vf_find_expr(c, e->b))))
		return true;
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			if (vf_find_expr(c, e->args[i]))
				return true;
	return false;
}

bool vf_find_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (vf_find_expr(c, s->value) || vf_find_expr(c, s->lo) || vf_find_expr(c, s->hi))
			return true;
		if (s->kind == S_STORE && c->bl[s->dst.buf].vf >= 0)
			return true;
		for (int k = 0; k < s->dst.nidx; k++)
			if (vf_find_expr(c, s->dst.idx[k]))
				return true;
		if ((s->kind == S_FOR || s->kind == S_IF) && (vf_find_block(c, &s->body) || vf_find_block(c, &s->els)))
			return true;
	}
	return false;
}

/* The body once per slot of the thread: rows kr, and in a 2-D loop the
 * column slots cs, with i and k set to the slot's row and column. */
void lower_parallel_vf(L *c, const Stmt *s)
{
	const VfLayout *l = &c->vl;
	Shadows sh;
	int32_t ids[16];
	lower_shadows_begin(c, &s->body, &sh, ids);
	vf_materialize_nested(c, &s->body, 0);
	bool was = c->par;
	c->par = true;
	int ncs = s->nvars == 2 ? l->NC * l->V : 1;
	for (int kr = 0; kr < l->NR && !c->failed; kr++) {
		int32_t row = vf_row(c, kr);
		for (int cs = 0; cs < ncs && !c->failed; cs++) {
			c->varreg[s->vars[0]] = cvt(c, (DType)VAR(s->vars[0])->type, DT_I32, row);
			if (s->nvars == 2)
				c->varreg[s->vars[1]] = cvt(c, (DType)VAR(s->vars[1])->type, DT_I32, vf_col(c, cs));
			c->vf_kr = kr;
			c->vf_cs = cs;
			lower_shadows_copy(c, &sh);
			lower_block(c, &s->body);
		}
	}
	c->vf_kr = c->vf_cs = -1;
	c->par = was;
	lower_shadows_end(c, &sh);
}

static int32_t and_pred(L *c, int32_t a, int32_t b)
{
	return a < 0 ? b : b < 0 ? a : bin(c, SI_AND, DT_BOOL, a, b);
}

/* Fragment value -> storage of ot (f16/bf16/f32 pack directly: one RNE). */
static int32_t vf_to_storage(L *c, DType ot, int32_t v)
{
	bool direct = ot == DT_F32 || ot == DT_F16 || ot == DT_BF16;
	return pack(c, ot, direct ? v : cvt(c, ot, DT_F32, v));
}

/* One V-element chunk between registers f..f+V-1 and global memory at
 * addr (16-byte pieces, ld/st .v4/.v2), guarded by ok. */
static void vf_chunk(L *c, bool load, DType ot, int32_t f, int32_t addr, int32_t ok, int32_t lazy)
{
	const VfLayout *l = &c->vl;
	int es = dtype_bytes(ot), words = l->V * es / 4, pw = TA_MIN(words, 4);
	int32_t w = f;
	if (lazy >= 0) { /* the words stay: vf_lazy after the copy */
		w = lazy;
	} else if (es == 2) { /* two b16 per word */
		w = (int32_t)c->f->regs.len;
		for (int i = 0; i < words; i++)
			reg(c, VT_I32);
		if (!load)
			for (int i = 0; i < words; i++) {
				SInst in = I(SI_PACK2, DT_I32, w + i, vf_to_storage(c, ot, vf_val(c, f + 2 * i)),
					     vf_to_storage(c, ot, vf_val(c, f + 2 * i + 1)));
				emit(c, in);
			}
	}
	if (load && ok >= 0) /* out of bounds reads as 0 */
		for (int i = 0; i < words; i++) {
			SInst z = es == 2 ? I(SI_MOVI, DT_I32, w + i, -1, -1) : I(SI_MOVF, DT_F32, w + i, -1, -1);
			emit(c, z);
		}
	for (int i = 0; i < words; i += pw) {
		/* a single word keeps its register's type (PTX checks it) */
		DType wt = pw == 1 && es == 4 ? DT_F32 : DT_I32;
		SInst in = load ? I(SI_LD, wt, w + i, addr, -1) : I(SI_ST, wt, -1, addr, w + i);
		in.sub = SP_GLOBAL;
		in.imm = 4 * i;
		in.vec = (uint8_t)(pw > 1 ? pw : 0);
		in.guard = ok;
		emit(c, in);
	}
	if (load && es == 2 && lazy < 0)
		for (int j = 0; j < l->V; j++) {
			int32_t h = reg(c, VT_B16);
			SInst in = I(SI_HALF, DT_I32, h, w + j / 2, -1);
			in.imm = j % 2;
			emit(c, in);
			emit(c, I(SI_MOV, DT_F32, f + j, unpack(c, ot, h), -1));
		}
}

/* pred: a global region allows whole chunks: aligned base (to the piece
 * size), last dimension and last offset multiples of V. */
static int32_t vf_aligned(L *c, const Region *r, int bytes)
{
	const BufLoc *bl = &c->bl[r->buf];
	int rank = BUF(r->buf)->rank, V = c->vl.V;
	int32_t lo = reg(c, VT_I32);
	SInst cv = I(SI_CVT, DT_I32, lo, bl->base, -1);
	cv.type2 = DT_I64;
	emit(c, cv);
	int32_t ok = setp(c, CMP_EQ, DT_I32, bin(c, SI_AND, DT_I32, lo, i32c(c, TA_MIN(bytes, 16) - 1)), i32c(c, 0));
	int32_t pitch = bin(c, SI_AND, DT_I32, bl->dim[rank - 1], i32c(c, V - 1));
	ok = bin(c, SI_AND, DT_BOOL, ok, setp(c, CMP_EQ, DT_I32, pitch, i32c(c, 0)));
	if (r->nidx) {
		int32_t off = bin(c, SI_AND, DT_I32, expr_as(c, r->idx[rank - 1], DT_I32), i32c(c, V - 1));
		ok = bin(c, SI_AND, DT_BOOL, ok, setp(c, CMP_EQ, DT_I32, off, i32c(c, 0)));
	}
	return ok;
}

/* Tile/column fragment <-> global, per chunk (vec) or per element.  lazy
 * >= 0 (loads of f16/bf16): slot e's value goes to half e % 2 of word
 * register lazy + e / 2 instead (vf_lazy). */
static void copy_vf_global(L *c, const Stmt *s, bool from, int32_t F, const Region *o, bool vec, int32_t lazy)
{
	const VfLayout *l = &c->vl;
	DType ot = (DType)BUF(o->buf)->dtype;
	int es = dtype_bytes(ot);
	bool tile = c->bl[F].vf_role == VF_TILE;
	Window w = lower_window(c, s, o); /* rank-reducing tiles: fixed indices in the base */
	int32_t offc = w.off[1], dlast = w.bound[1], prev = -1;
	int32_t sg = from ? (tile ? l->st_tile : l->st_col) : -1;
	for (int kr = 0; kr < (tile ? l->NR : 1); kr++) {
		int32_t rowok = w.ok, rowlin = -1;
		if (tile) {
			int32_t r = vf_row(c, kr);
			if (o->nidx)
				r = bin(c, SI_ADD, DT_I32, r, w.off[0]);
			rowok = and_pred(c, setp(c, CMP_LT, DT_U32, r, w.bound[0]), w.ok);
			rowlin = bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, r), w.pitch);
		}
		int32_t addr = -1;
		for (int cs = 0; cs < l->NC * l->V; cs += vec ? l->V : 1) {
			int32_t col = bin(c, SI_ADD, DT_I32, offc, vf_col(c, cs));
			int32_t ok = and_pred(c, and_pred(c, rowok, setp(c, CMP_LT, DT_U32, col, dlast)), sg);
			/* one address per chunk: its other elements are offsets from it (fewer live
			 * 64-bit registers on the element path, where ptxas hoists the loads) */
			int j = cs % l->V;
			if (!j) {
				int32_t lin = cvt(c, DT_I64, DT_I32, col);
				if (rowlin >= 0)
					lin = bin(c, SI_ADD, DT_I64, rowlin, lin);
				addr = bin(c, SI_ADD, DT_I64, w.base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)));
			}
			int32_t f = vf_slot(c, F, kr, cs), word = lazy >= 0 ? lazy + (f - c->bl[F].vf) / 2 : -1;
			if (vec) {
				vf_chunk(c, !from, ot, f, addr, ok, word);
			} else if (from) {
				st(c, SP_GLOBAL, ot, addr, (int64_t)j * es, vf_to_storage(c, ot, vf_val(c, f)), ok);
			} else {
				int32_t v = zero_storage(c, ot);
				SInst in = I(SI_LD, ot, v, addr, -1);
				in.sub = SP_GLOBAL;
				in.imm = (int64_t)j * es;
				in.guard = ok;
				emit(c, in);
				if (word >= 0 && cs % 2) /* the slot pair's word, as a vector load gives it */
					emit(c, I(SI_PACK2, DT_I32, word, prev, v));
				else if (word < 0)
					emit(c, I(SI_MOV, DT_F32, f, cvt(c, DT_F32, ot, unpack(c, ot, v)), -1));
				prev = v;
			}
		}
	}
}

/* Whole vector fragment <-> a global or shared buffer of the same rank. */
void copy_vf(L *c, const Stmt *s)
{
	const VfLayout *l = &c->vl;
	bool from = c->bl[s->src.buf].vf >= 0;
	int32_t F = from ? s->src.buf : s->dst.buf;
	const Region *o = from ? &s->dst : &s->src;
	const Buffer *ob = BUF(o->buf);
	DType ot = (DType)ob->dtype;
	int role = c->bl[F].vf_role, es = dtype_bytes(ot);
	bool glob = ob->scope == SCOPE_GLOBAL;
	if (!from)
		for (int e = 0; e < c->bl[F].vf_n; e++)
			vf_def(c, c->bl[F].vf + e);
	if (glob && role != VF_ROW) {
		bool can = (ot == DT_F16 || ot == DT_BF16 || ot == DT_F32) && l->V * es % 4 == 0;
		if (!can) {
			copy_vf_global(c, s, from, F, o, false, -1);
			return;
		}
		/* lazy slots (vf_val): the words of both paths are the same registers */
		int32_t lazy = -1;
		if (!from && es == 2 && c->vf_lz && !c->par && !c->loop_depth) {
			lazy = (int32_t)c->f->regs.len;
			for (int i = 0; i < c->bl[F].vf_n / 2; i++)
				reg(c, VT_I32);
		}
		int32_t lscalar = label(c), lend = label(c);
		bra(c, lscalar, vf_aligned(c, o, l->V * es), true);
		copy_vf_global(c, s, from, F, o, true, lazy);
		bra(c, lend, -1, false);
		place(c, lscalar);
		copy_vf_global(c, s, from, F, o, false, lazy);
		place(c, lend);
		for (int e = 0; lazy >= 0 && e < c->bl[F].vf_n; e++)
			vf_lazy(c, c->bl[F].vf + e, lazy + e / 2, e % 2, ot);
		return;
	}
	/* row fragments, and shared buffers: element by element */
	int nr = role == VF_COL ? 1 : l->NR, ncs = role == VF_ROW ? 1 : l->NC * l->V;
	int32_t sg = from ? (role == VF_TILE ? l->st_tile : role == VF_ROW ? l->st_row : l->st_col) : -1;
	for (int kr = 0; kr < nr; kr++)
		for (int cs = 0; cs < ncs; cs++) {
			int32_t ti[2], n = 0, idx[IR_MAX_RANK];
			if (role != VF_COL)
				ti[n++] = vf_row(c, kr);
			if (role != VF_ROW)
				ti[n++] = vf_col(c, cs);
			lower_region_idx(c, o, ti, idx);
			int32_t ok = glob ? lower_inbounds(c, o->buf, idx) : -1;
			Addr a = lower_elem_addr(c, o->buf, idx);
			int32_t f = vf_slot(c, F, kr, cs);
			if (from) {
				st(c, a.sp, ot, a.addr, a.off, vf_to_storage(c, ot, vf_val(c, f)), and_pred(c, ok, sg));
				continue;
			}
			int32_t v = ok >= 0 ? zero_storage(c, ot) : reg(c, simt_storage_vt(ot));
			SInst in = I(SI_LD, ot, v, a.addr, -1);
			in.sub = (uint8_t)a.sp;
			in.imm = a.off;
			in.guard = ok;
			emit(c, in);
			emit(c, I(SI_MOV, DT_F32, f, cvt(c, DT_F32, ot, unpack(c, ot, v)), -1));
		}
}

/* reduce(F, D, dim=1): each thread folds its slots of a row (a balanced
 * tree), then the P lanes of the row combine by butterfly shuffles; every
 * lane of the row ends with the row's value. */
void reduce_vf(L *c, const Stmt *s)
{
	const VfLayout *l = &c->vl;
	ReduceOp op = (ReduceOp)s->sub;
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	bool ab = op == RED_ABSSUM || op == RED_ABSMAX;
	int n = l->NC * l->V;
	int32_t vals[64], accs[64];
	for (int kr = 0; kr < l->NR; kr++) {
		for (int cs = 0; cs < n; cs++) {
			int32_t x = vf_val(c, vf_slot(c, s->src.buf, kr, cs));
			vals[cs] = ab ? un(c, SI_ABS, DT_F32, x) : x;
		}
		for (int w = 1; w < n; w *= 2)
			for (int i = 0; i + w < n; i += 2 * w)
				vals[i] = lower_combine(c, cop, DT_F32, vals[i], vals[i + w]);
		int32_t acc = vals[0];
		for (int off = TA_MIN(l->P, 32) / 2; off >= 1; off /= 2) {
			int32_t other = reg(c, VT_F32);
			SInst in = I(SI_SHFL_BFLY, DT_F32, other, acc, -1);
			in.imm = off;
			emit(c, in);
			acc = lower_combine(c, cop, DT_F32, acc, other);
		}
		accs[kr] = acc;
	}
	if (l->W > 1) { /* the row's warps through shared memory, read back in warp order by every lane */
		int64_t rstride = (int64_t)l->G * l->W * 4;
		/* this statement's own area; a statement lowered twice (or unnumbered)
		 * shares the spare one and keeps the barrier after its reads */
		int32_t *ra = &l->red_area[s - c->m->stmts.data];
		int area = *ra > 0 ? (*ra - 1) / 2 : l->nred - 1;
		bool again = *ra <= 0 || (*ra - 1) % 2;
		*ra = -1; /* lowered again: the spare */
		int64_t base = l->red_smem + area * l->red_bytes;
		for (int kr = 0; kr < l->NR; kr++)
			st(c, SP_SHARED, DT_F32, l->part, base + kr * rstride, accs[kr], l->lane0);
		lower_barrier(c);
		for (int kr = 0; kr < l->NR; kr++) {
			int32_t acc = -1;
			for (int w = 0; w < l->W; w++) {
				int32_t x = ld(c, SP_SHARED, DT_F32, l->rowpart, base + kr * rstride + 4 * w, -1);
				acc = w ? lower_combine(c, cop, DT_F32, acc, x) : x;
			}
			accs[kr] = acc;
		}
		if (again) /* this statement runs again: its next writes wait for these reads */
			lower_barrier(c);
	}
	for (int kr = 0; kr < l->NR; kr++) {
		int32_t d = vf_slot(c, s->dst.buf, kr, 0);
		vf_materialize_reg(c, d);
		int32_t v = s->flag_clear ? accs[kr] : lower_combine(c, cop, DT_F32, d, accs[kr]);
		vf_def(c, d);
		emit(c, I(SI_MOV, DT_F32, d, v, -1));
	}
}
