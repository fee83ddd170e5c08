/* lower_fold.c — whole-tile tests of parallel loops (docs/lowering.md,
 * "Whole-tile tests").
 *
 * A `select`, `if_then_else` or `if` in a parallel body whose condition is
 * built with &&, ||, ! from comparisons of affine i32 expressions of the
 * loop indices (constant coefficients; the rest uniform: block indices,
 * parameters, symbols, outer loop variables and lets) and from uniform
 * values is decided for the loop's whole index box before the loop: true
 * for every element (AT), or false for every element (AF).  The loop is
 * then lowered as written (boundary tiles) and once more per side that can
 * hold, with the conditions taken as that side, behind a branch on the
 * test.  Attention's `k < S && (causal == 0 || k <= q)` mask is AT on every
 * interior key tile.
 *
 * Exactness: each side's value is computed in i64 from its i32 leaves (the
 * values the body would read) and the box corners; i32 `+ - *` wrap modulo
 * 2^32, so where both sides' exact ranges fit in i32 (part of the test)
 * the wrapped values the body compares are the exact ones. */
#include "lower_impl.h"

#include <string.h>

enum { AFF_LEAVES = 8, FOLD_BUDGET = 512 };
#define AFF_COEF_MAX (1LL << 24)
#define AFF_CONST_MAX (1LL << 40)

/* sum lc[l] * leaf[l] + sum v[d] * var_d + k; leaves are uniform i32 expressions */
typedef struct {
	int64_t k;
	int64_t v[IR_MAX_RANK];
	int n;
	int32_t leaf[AFF_LEAVES];
	int64_t lc[AFF_LEAVES];
} Aff;

typedef struct {
	L *c;
	const Stmt *s;
	int64_t ext[IR_MAX_RANK];
	int budget;  /* expression nodes the analysis may still visit (lets are substituted: a DAG) */
	bool dry;    /* analysis only: nothing emitted */
} Fx;

/* A predicate: known false, known true, or register r. */
enum { TV_F, TV_T, TV_R };
typedef struct {
	int k;
	int32_t r;
} Tv;

/* c->fold_def[var]: -1 not bound in the body; -2 bound there other than by
 * a let (a loop variable); -3 - d the parallel's var d; >= 0 a let's value. */
static void mark_body(L *c, const Block *b, bool on)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (s->kind == S_LET)
			c->fold_def[s->var] = on ? s->value : -1;
		if (s->kind == S_FOR)
			c->fold_def[s->var] = on ? -2 : -1;
		if (s->kind == S_PARALLEL)
			for (int k = 0; k < s->nvars; k++)
				c->fold_def[s->vars[k]] = on ? -2 : -1;
		if (s->kind == S_FOR || s->kind == S_IF || s->kind == S_PARALLEL) {
			mark_body(c, &s->body, on);
			mark_body(c, &s->els, on);
		}
	}
}

/* Uniform over the box: no element reads, shuffles, thread indices or
 * names bound in the body. */
static bool uniform(Fx *x, int32_t id)
{
	L *c = x->c;
	if (id < 0)
		return true;
	if (--x->budget < 0)
		return false;
	const Expr *e = EX(id);
	switch ((ExprKind)e->kind) {
	case E_LOAD: return false;
	case E_VAR: return c->fold_def[e->var] == -1 && VAR(e->var)->kind != V_THREADIDX;
	case E_UNARY:
	case E_CAST: return uniform(x, e->a);
	case E_BINARY: return uniform(x, e->a) && uniform(x, e->b);
	case E_CALL:
		if (e->op >= OP_SHFL_XOR && e->op <= OP_SHFL_IDX)
			return false;
		for (int i = 0; i < e->nargs; i++)
			if (!uniform(x, e->args[i]))
				return false;
		return true;
	default: return true;
	}
}

static bool aff_small(const Aff *a)
{
	if (a->k < -AFF_CONST_MAX || a->k > AFF_CONST_MAX)
		return false;
	for (int d = 0; d < IR_MAX_RANK; d++)
		if (a->v[d] < -AFF_COEF_MAX || a->v[d] > AFF_COEF_MAX)
			return false;
	for (int l = 0; l < a->n; l++)
		if (a->lc[l] < -AFF_COEF_MAX || a->lc[l] > AFF_COEF_MAX)
			return false;
	return true;
}

static bool aff_const(const Aff *a)
{
	for (int d = 0; d < IR_MAX_RANK; d++)
		if (a->v[d])
			return false;
	return a->n == 0;
}

static void aff_leaf(Aff *a, int32_t id)
{
	memset(a, 0, sizeof *a);
	a->n = 1;
	a->leaf[0] = id;
	a->lc[0] = 1;
}

/* a += m * b */
static bool aff_add(Aff *a, const Aff *b, int64_t m)
{
	if (a->n + b->n > AFF_LEAVES)
		return false;
	a->k += m * b->k;
	for (int d = 0; d < IR_MAX_RANK; d++)
		a->v[d] += m * b->v[d];
	for (int l = 0; l < b->n; l++) {
		a->leaf[a->n] = b->leaf[l];
		a->lc[a->n++] = m * b->lc[l];
	}
	return aff_small(a);
}

static bool aff_scale(Aff *a, int64_t m)
{
	if (m < -AFF_COEF_MAX || m > AFF_COEF_MAX)
		return false;
	a->k *= m;
	for (int d = 0; d < IR_MAX_RANK; d++)
		a->v[d] *= m;
	for (int l = 0; l < a->n; l++)
		a->lc[l] *= m;
	return aff_small(a);
}

/* The i32 expression id as an affine form of the parallel's vars. */
static bool aff_of(Fx *x, int32_t id, Aff *a)
{
	L *c = x->c;
	memset(a, 0, sizeof *a);
	if (--x->budget < 0)
		return false;
	const Expr *e = EX(id);
	if (e->type != DT_I32)
		return false;
	Aff b;
	switch ((ExprKind)e->kind) {
	case E_INT:
		if (e->ival < INT32_MIN || e->ival > INT32_MAX)
			return false;
		a->k = e->ival;
		return true;
	case E_VAR: {
		const Var *v = VAR(e->var);
		int32_t d = c->fold_def[e->var];
		if (d <= -3) {
			a->v[-3 - d] = 1;
			return true;
		}
		if (d == -2 || v->kind == V_THREADIDX || v->type != DT_I32)
			return false;
		if (d >= 0) /* a let of the body: its value (immutable) */
			return aff_of(x, d, a);
		if (v->kind == V_SYMBOL && v->has_value) {
			if (v->value < INT32_MIN || v->value > INT32_MAX)
				return false;
			a->k = v->value;
			return true;
		}
		aff_leaf(a, id);
		return true;
	}
	case E_UNARY:
		return e->op == OP_NEG && aff_of(x, e->a, &b) && aff_add(a, &b, -1);
	case E_BINARY:
		if (e->op == OP_ADD || e->op == OP_SUB)
			return aff_of(x, e->a, a) && aff_of(x, e->b, &b) && aff_add(a, &b, e->op == OP_ADD ? 1 : -1);
		if (e->op == OP_MUL) {
			if (!aff_of(x, e->a, a) || !aff_of(x, e->b, &b))
				return false;
			if (aff_const(&b))
				return aff_scale(a, b.k);
			if (aff_const(a)) {
				int64_t m = a->k;
				*a = b;
				return aff_scale(a, m);
			}
		}
		break;
	default: break;
	}
	/* anything else uniform is one leaf, evaluated once before the test */
	if (!uniform(x, id))
		return false;
	aff_leaf(a, id);
	return true;
}

/* ---- emission (x->dry: kinds only) ---- */

static Tv tv_reg(Fx *x, int32_t r) { return (Tv){TV_R, x->dry ? -1 : r}; }

static Tv tv_not(Fx *x, Tv a)
{
	if (a.k != TV_R)
		return (Tv){a.k == TV_T ? TV_F : TV_T, -1};
	return tv_reg(x, x->dry ? -1 : un(x->c, SI_NOT, DT_BOOL, a.r));
}

static Tv tv_and(Fx *x, Tv a, Tv b)
{
	if (a.k == TV_F || b.k == TV_F)
		return (Tv){TV_F, -1};
	if (a.k == TV_T)
		return b;
	if (b.k == TV_T)
		return a;
	return tv_reg(x, x->dry ? -1 : bin(x->c, SI_AND, DT_BOOL, a.r, b.r));
}

static Tv tv_or(Fx *x, Tv a, Tv b)
{
	if (a.k == TV_T || b.k == TV_T)
		return (Tv){TV_T, -1};
	if (a.k == TV_F)
		return b;
	if (b.k == TV_F)
		return a;
	return tv_reg(x, x->dry ? -1 : bin(x->c, SI_OR, DT_BOOL, a.r, b.r));
}

/* An i64 value: constant v (r < 0) or register r plus v. */
typedef struct {
	int32_t r;
	int64_t v;
} I64v;

/* The uniform part of a: its leaves and constant. */
static I64v aff_uniform(Fx *x, const Aff *a)
{
	L *c = x->c;
	I64v u = {-1, a->k};
	for (int l = 0; l < a->n && !x->dry; l++) {
		int32_t t = cvt(c, DT_I64, DT_I32, expr_as(c, a->leaf[l], DT_I32));
		if (a->lc[l] != 1)
			t = bin(c, SI_MUL, DT_I64, t, movi(c, DT_I64, a->lc[l]));
		u.r = u.r < 0 ? t : bin(c, SI_ADD, DT_I64, u.r, t);
	}
	if (x->dry && a->n)
		u.r = 0; /* some register */
	return u;
}

/* u + off  cmp  0 */
static Tv i64_cmp(Fx *x, I64v u, int64_t off, Cmp cmp, int64_t rhs)
{
	int64_t v = u.v + off;
	if (u.r < 0) {
		bool t = cmp == CMP_EQ ? v == rhs : cmp == CMP_LT ? v < rhs : cmp == CMP_LE ? v <= rhs :
			 cmp == CMP_GT ? v > rhs : cmp == CMP_GE ? v >= rhs : v != rhs;
		return (Tv){t ? TV_T : TV_F, -1};
	}
	if (x->dry)
		return (Tv){TV_R, -1};
	L *c = x->c;
	return (Tv){TV_R, setp(c, cmp, DT_I64, u.r, movi(c, DT_I64, rhs - v))};
}

/* The smallest and largest of a's variable part over the box. */
static void aff_range(const Fx *x, const Aff *a, int64_t *lo, int64_t *hi)
{
	*lo = *hi = 0;
	for (int d = 0; d < x->s->nvars; d++) {
		int64_t t = a->v[d] * (x->ext[d] - 1);
		*lo += t < 0 ? t : 0;
		*hi += t > 0 ? t : 0;
	}
}

/* Every element's exact value of a fits in i32. */
static Tv aff_fits(Fx *x, const Aff *a, I64v u)
{
	int64_t lo, hi;
	aff_range(x, a, &lo, &hi);
	if (a->n == 1 && a->lc[0] == 1 && a->k == 0 && lo == 0 && hi == 0) /* one leaf as the body reads it */
		return (Tv){TV_T, -1};
	return tv_and(x, i64_cmp(x, u, lo, CMP_GE, INT32_MIN), i64_cmp(x, u, hi, CMP_LE, INT32_MAX));
}

/* AT / AF of the comparison a cmp b over the box, or false if it is not
 * affine on both sides. */
static bool cmp_test(Fx *x, const Expr *e, Tv *at, Tv *af)
{
	L *c = x->c;
	DType ta = (DType)EX(e->a)->type;
	if (ta == DT_VOID)
		ta = (DType)EX(e->b)->type;
	Aff la, lb, dd;
	if (ta != DT_I32 || !aff_of(x, e->a, &la) || !aff_of(x, e->b, &lb))
		return false;
	dd = la;
	if (!aff_add(&dd, &lb, -1))
		return false;
	I64v ua = aff_uniform(x, &la), ub = aff_uniform(x, &lb), ud;
	Tv fit = tv_and(x, aff_fits(x, &la, ua), aff_fits(x, &lb, ub));
	/* d = a - b over the box: [ud + lo, ud + hi] */
	ud.v = ua.v - ub.v;
	ud.r = ua.r < 0 ? (ub.r < 0 || x->dry ? ub.r : bin(x->c, SI_SUB, DT_I64, movi(x->c, DT_I64, 0), ub.r))
	       : ub.r < 0 || x->dry ? ua.r : bin(x->c, SI_SUB, DT_I64, ua.r, ub.r);
	int64_t lo, hi;
	aff_range(x, &dd, &lo, &hi);
	Tv t, f;
	switch ((Op)e->op) {
	case OP_LT: t = i64_cmp(x, ud, hi, CMP_LT, 0), f = i64_cmp(x, ud, lo, CMP_GE, 0); break;
	case OP_LE: t = i64_cmp(x, ud, hi, CMP_LE, 0), f = i64_cmp(x, ud, lo, CMP_GT, 0); break;
	case OP_GT: t = i64_cmp(x, ud, lo, CMP_GT, 0), f = i64_cmp(x, ud, hi, CMP_LE, 0); break;
	case OP_GE: t = i64_cmp(x, ud, lo, CMP_GE, 0), f = i64_cmp(x, ud, hi, CMP_LT, 0); break;
	case OP_EQ:
		t = tv_and(x, i64_cmp(x, ud, lo, CMP_EQ, 0), i64_cmp(x, ud, hi, CMP_EQ, 0));
		f = tv_or(x, i64_cmp(x, ud, lo, CMP_GT, 0), i64_cmp(x, ud, hi, CMP_LT, 0));
		break;
	default: /* OP_NE */
		t = tv_or(x, i64_cmp(x, ud, lo, CMP_GT, 0), i64_cmp(x, ud, hi, CMP_LT, 0));
		f = tv_and(x, i64_cmp(x, ud, lo, CMP_EQ, 0), i64_cmp(x, ud, hi, CMP_EQ, 0));
		break;
	}
	*at = tv_and(x, t, fit);
	*af = tv_and(x, f, fit);
	return true;
}

/* AT and AF of boolean expression id (both known false when undecided). */
static void cond_test(Fx *x, int32_t id, Tv *at, Tv *af)
{
	L *c = x->c;
	*at = *af = (Tv){TV_F, -1};
	if (--x->budget < 0)
		return;
	const Expr *e = EX(id);
	Tv a1, f1, a2, f2;
	if (e->kind == E_BOOL) {
		*at = (Tv){e->ival ? TV_T : TV_F, -1};
		*af = tv_not(x, *at);
		return;
	}
	if (e->kind == E_UNARY && e->op == OP_NOT) {
		cond_test(x, e->a, af, at);
		return;
	}
	if (e->kind == E_BINARY && (e->op == OP_AND || e->op == OP_OR)) {
		cond_test(x, e->a, &a1, &f1);
		cond_test(x, e->b, &a2, &f2);
		*at = e->op == OP_AND ? tv_and(x, a1, a2) : tv_or(x, a1, a2);
		*af = e->op == OP_AND ? tv_or(x, f1, f2) : tv_and(x, f1, f2);
		return;
	}
	if (e->kind == E_VAR && c->fold_def[e->var] >= 0 && VAR(e->var)->type == DT_BOOL) {
		cond_test(x, c->fold_def[e->var], at, af);
		return;
	}
	if (e->kind == E_BINARY && e->op >= OP_EQ && e->op <= OP_GE && cmp_test(x, e, at, af))
		return;
	if (e->type == DT_BOOL && uniform(x, id)) { /* a uniform predicate: the same for every element */
		*at = tv_reg(x, x->dry ? -1 : expr_as(c, id, DT_BOOL));
		*af = tv_not(x, *at);
	}
}

/* ---- the conditions of a body ---- */

typedef struct {
	int32_t cond[LOWER_FOLD_MAX];
	int n;
} Conds;

static void add_cond(Fx *x, Conds *cs, int32_t id)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->cond[i] == id)
			return;
	if (cs->n == LOWER_FOLD_MAX)
		return;
	Tv at, af;
	x->budget = FOLD_BUDGET;
	cond_test(x, id, &at, &af);
	if (at.k != TV_F || af.k != TV_F)
		cs->cond[cs->n++] = id;
}

static void conds_expr(Fx *x, Conds *cs, int32_t id, int depth)
{
	if (id < 0 || depth > IR_MAX_HEIGHT)
		return;
	L *c = x->c;
	const Expr *e = EX(id);
	if (e->kind == E_CALL && (e->op == OP_SELECT || e->op == OP_IF_THEN_ELSE))
		add_cond(x, cs, e->args[0]);
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		conds_expr(x, cs, e->a, depth + 1);
		if (e->kind == E_BINARY)
			conds_expr(x, cs, e->b, depth + 1);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			conds_expr(x, cs, e->args[i], depth + 1);
}

/* Nested parallel loops decide their own. */
static void conds_block(Fx *x, Conds *cs, const Block *b)
{
	L *c = x->c;
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (s->kind == S_PARALLEL)
			continue;
		if (s->kind == S_IF)
			add_cond(x, cs, s->value);
		conds_expr(x, cs, s->value, 0);
		conds_expr(x, cs, s->lo, 0);
		conds_expr(x, cs, s->hi, 0);
		for (int k = 0; k < s->dst.nidx; k++)
			conds_expr(x, cs, s->dst.idx[k], 0);
		if (s->kind == S_FOR || s->kind == S_IF) {
			conds_block(x, cs, &s->body);
			conds_block(x, cs, &s->els);
		}
	}
}

int lower_fold_value(const L *c, int32_t cond)
{
	for (int i = 0; i < c->nfold; i++)
		if (c->fold_cond[i] == cond)
			return c->fold_val;
	return -1;
}

/* Lazy vector slots (lower_vec.c) must be in one state at the join: every
 * copy starts from the state before the loop, and a copy that ends with a
 * slot still lazy that the first copy (the general one, whose stores are a
 * superset) made plain materializes it. */
typedef struct {
	int32_t *lz; /* pairs: register, code */
	size_t n;
	int32_t *end; /* the general copy's end state of the same registers */
} LazySnap;

static void lazy_restore(L *c, const LazySnap *z)
{
	for (size_t i = 0; i < z->n; i++)
		c->vf_lz[z->lz[2 * i]] = z->lz[2 * i + 1];
}

static void lazy_reconcile(L *c, const LazySnap *z)
{
	for (size_t i = 0; i < z->n; i++) {
		if (z->end[i] < 0)
			vf_materialize_reg(c, z->lz[2 * i]);
	}
}

void lower_parallel_folded(L *c, const Stmt *s, void (*one)(L *, const Stmt *))
{
	Fx x = {.c = c, .s = s, .dry = true};
	Conds cs = {.n = 0};
	/* NVIDIA only for now: on the AMD targets the i64 tests live in SGPRs, and
	 * mha_fwd (and softmax at the SGPR limit tests/amd pins) then spill */
	bool box = c->fold_def && s->nvars <= IR_MAX_RANK && target_is_nvidia(c->t->id);
	for (int d = 0; box && d < s->nvars; d++)
		box = ir_const_int(c->m, s->extents[d], &x.ext[d]) && x.ext[d] > 0 && x.ext[d] <= INT32_MAX;
	if (box) {
		for (int d = 0; d < s->nvars; d++)
			c->fold_def[s->vars[d]] = -3 - d;
		mark_body(c, &s->body, true);
		conds_block(&x, &cs, &s->body);
	}
	Tv at = {TV_T, -1}, af = {TV_T, -1};
	x.dry = false;
	for (int i = 0; i < cs.n; i++) { /* the tests, emitted once before the loop */
		Tv a, f;
		x.budget = FOLD_BUDGET;
		cond_test(&x, cs.cond[i], &a, &f);
		at = tv_and(&x, at, a);
		af = tv_and(&x, af, f);
	}
	if (box) {
		mark_body(c, &s->body, false);
		for (int d = 0; d < s->nvars; d++)
			c->fold_def[s->vars[d]] = -1;
	}
	int32_t saved[LOWER_FOLD_MAX], nsaved = c->nfold, sval = c->fold_val;
	memcpy(saved, c->fold_cond, sizeof saved);
	if (!cs.n || c->failed || (at.k == TV_F && af.k == TV_F)) {
		c->nfold = 0;
		one(c, s);
	} else if (at.k == TV_T || af.k == TV_T) { /* decided at compile time */
		memcpy(c->fold_cond, cs.cond, sizeof cs.cond);
		c->nfold = cs.n;
		c->fold_val = at.k == TV_T;
		one(c, s);
		c->f->folded++;
	} else {
		LazySnap z = {0};
		z.n = c->vf_lzl.len;
		z.lz = z.n ? malloc(z.n * 2 * sizeof *z.lz) : NULL;
		z.end = z.n ? malloc(z.n * sizeof *z.end) : NULL;
		if (z.n && (!z.lz || !z.end)) {
			free(z.lz);
			free(z.end);
			c->failed = true;
			return;
		}
		for (size_t i = 0; i < z.n; i++) {
			z.lz[2 * i] = c->vf_lzl.data[i];
			z.lz[2 * i + 1] = c->vf_lz[c->vf_lzl.data[i]];
		}
		int32_t lt = label(c), lf = label(c), lend = label(c);
		if (at.k == TV_R)
			bra(c, lt, at.r, false);
		if (af.k == TV_R)
			bra(c, lf, af.r, false);
		c->nfold = 0;
		one(c, s); /* as written: the boundary tiles */
		for (size_t i = 0; i < z.n; i++)
			z.end[i] = c->vf_lz[z.lz[2 * i]];
		bra(c, lend, -1, false);
		memcpy(c->fold_cond, cs.cond, sizeof cs.cond);
		c->nfold = cs.n;
		for (int side = 1; side >= 0; side--) {
			if ((side ? at.k : af.k) != TV_R)
				continue;
			place(c, side ? lt : lf);
			lazy_restore(c, &z);
			c->fold_val = side;
			one(c, s);
			lazy_reconcile(c, &z);
			bra(c, lend, -1, false);
		}
		place(c, lend);
		free(z.lz);
		free(z.end);
		c->f->folded++;
	}
	memcpy(c->fold_cond, saved, sizeof saved);
	c->nfold = nsaved;
	c->fold_val = sval;
}
