/* verify.c — type, shape and scope checking of a parsed module.
 *
 * Sets Expr.type on every expression (literals take the type their context
 * asks for), marks per-thread ifs, and appends unspecialised shape symbols to
 * each kernel's argument list.  After a successful ir_verify the invariants
 * listed in ir.h hold.  All problems are reported, not just the first.
 */
#include "dtype.h"
#include "ir.h"

#include <stdio.h>

typedef struct {
	Module *m;
	Diag *d;
	Kernel *k;
	int in_parallel; /* inside a parallel body */
	int per_thread;  /* inside a per-thread if */
	int loop;        /* LoopKind + 1 of the innermost loop a break may leave, 0: none */
	int lazy;        /* inside an if_then_else's second or third operand */
	bool failed;
} Checker;

static void err(Checker *c, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err(Checker *c, SrcPos pos, const char *fmt, ...)
{
	c->failed = true;
	va_list ap;
	va_start(ap, fmt);
	diag_vat(c->d, DIAG_ERROR, &c->m->src, pos, fmt, ap);
	va_end(ap);
}

#define EX(id) (&c->m->exprs.data[id])
#define BUF(id) (&c->m->bufs.data[id])
#define VAR(id) (&c->m->vars.data[id])

/* True when the expression contains only literals, so its type comes from context. */
static bool literal_only(Checker *c, int32_t id)
{
	const Expr *e = EX(id);
	switch (e->kind) {
	case E_INT:
	case E_FLOAT: return true;
	case E_UNARY: return (e->op == OP_NEG || e->op == OP_BNOT) && literal_only(c, e->a);
	case E_BINARY:
		return ((e->op >= OP_ADD && e->op <= OP_MOD) || (e->op >= OP_BAND && e->op <= OP_SHR)) &&
		       literal_only(c, e->a) && literal_only(c, e->b);
	default: return false;
	}
}

static bool uses_var_kind(Checker *c, int32_t id, VarKind k)
{
	if (id < 0)
		return false;
	const Expr *e = EX(id);
	if (e->kind == E_VAR)
		return VAR(e->var)->kind == k;
	if (uses_var_kind(c, e->a, k) || uses_var_kind(c, e->b, k))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (uses_var_kind(c, e->args[i], k))
			return true;
	return false;
}

static DType check_expr(Checker *c, int32_t id, DType hint);

/* Types the operands of an arithmetic-like pair so untyped literals follow
 * the typed side.  Returns the common type or DT_VOID after an error. */
static DType check_pair(Checker *c, int32_t a, int32_t b, DType hint, SrcPos pos, const char *what)
{
	DType ta, tb;
	if (literal_only(c, a) && !literal_only(c, b)) {
		tb = check_expr(c, b, hint);
		ta = check_expr(c, a, tb);
	} else if (literal_only(c, b)) {
		ta = check_expr(c, a, hint);
		tb = check_expr(c, b, ta);
	} else {
		ta = check_expr(c, a, hint);
		tb = check_expr(c, b, hint);
	}
	if (ta == DT_VOID || tb == DT_VOID)
		return DT_VOID;
	if (ta != tb) {
		/* C precedence: `x & 1 == 0` is `x & (1 == 0)` */
		bool prec = (ta == DT_BOOL) != (tb == DT_BOOL) && strchr("&|^", what[0]) && what[1] == 0;
		if (prec)
			err(c, pos, "operands of '%s' have different types (%s and %s); '&', '|' and '^' bind more loosely "
			    "than comparisons, as in C: parenthesise, e.g. (x & 1) == 0", what, dtype_name(ta), dtype_name(tb));
		else
			err(c, pos, "operands of '%s' have different types (%s and %s); insert a cast such as %s(...)", what,
			    dtype_name(ta), dtype_name(tb), dtype_name(ta));
		return DT_VOID;
	}
	return ta;
}

static bool is_numeric(DType t) { return dtype_is_int(t) || dtype_is_float(t); }

static DType check_expr(Checker *c, int32_t id, DType hint)
{
	Expr *e = EX(id);
	DType t = DT_VOID;
	switch ((ExprKind)e->kind) {
	case E_INT:
		if (hint == DT_BOOL) {
			err(c, e->pos, "integer literal used where a bool is expected; use true or false");
			return DT_VOID;
		}
		t = is_numeric(hint) ? hint : (e->ival >= INT32_MIN && e->ival <= INT32_MAX ? DT_I32 : DT_I64);
		if (dtype_is_int(t) && dt_wrap_int(t, e->ival) != e->ival) {
			err(c, e->pos, "integer literal %lld does not fit in %s", (long long)e->ival, dtype_name(t));
			return DT_VOID;
		}
		break;
	case E_FLOAT:
		if (hint != DT_VOID && !dtype_is_float(hint)) {
			err(c, e->pos, "float literal used where %s is expected", dtype_name(hint));
			return DT_VOID;
		}
		t = hint != DT_VOID ? hint : DT_F32;
		break;
	case E_BOOL: t = DT_BOOL; break;
	case E_VAR: {
		Var *v = VAR(e->var);
		if (v->kind == V_THREADIDX && !c->per_thread) {
			if (c->in_parallel)
				err(c, e->pos, "'%s' cannot be used inside parallel; use the loop indices", v->name);
			else
				err(c, e->pos, "'%s' may only be used in an if condition and its body (the if then runs once per "
				    "thread)", v->name);
			return DT_VOID;
		}
		t = v->type;
		if (t == DT_VOID)
			return DT_VOID; /* a let whose value failed to check */
		break;
	}
	case E_LOAD: {
		Buffer *b = BUF(e->buf);
		if (e->nargs != b->rank) {
			err(c, e->pos, "'%s' has rank %d but is indexed with %d index%s", b->name, b->rank, e->nargs,
			    e->nargs == 1 ? "" : "es");
			return DT_VOID;
		}
		for (int i = 0; i < e->nargs; i++) {
			DType it = check_expr(c, e->args[i], DT_I32);
			if (it != DT_VOID && !dtype_is_int(it))
				err(c, EX(e->args[i])->pos, "index of '%s' must be an integer, not %s", b->name,
				    dtype_name(it));
		}
		t = (DType)b->dtype;
		break;
	}
	case E_UNARY: {
		DType ta = check_expr(c, e->a, e->op == OP_NOT ? DT_BOOL : hint);
		if (ta == DT_VOID)
			return DT_VOID;
		if (e->op == OP_NOT && ta != DT_BOOL) {
			err(c, e->pos, "'!' needs a bool operand, not %s", dtype_name(ta));
			return DT_VOID;
		}
		if (e->op == OP_NEG && !is_numeric(ta)) {
			err(c, e->pos, "'-' needs a numeric operand, not %s", dtype_name(ta));
			return DT_VOID;
		}
		if (e->op == OP_BNOT && !dtype_is_int(ta)) {
			err(c, e->pos, "'~' needs an integer operand, not %s%s", dtype_name(ta),
			    ta == DT_BOOL ? "; use '!' for bool" : "");
			return DT_VOID;
		}
		t = ta;
		break;
	}
	case E_BINARY: {
		Op op = (Op)e->op;
		bool cmp = op >= OP_EQ && op <= OP_GE, logic = op == OP_AND || op == OP_OR;
		bool bits = op == OP_BAND || op == OP_BOR || op == OP_BXOR, shift = op == OP_SHL || op == OP_SHR;
		DType ta = check_pair(c, e->a, e->b, cmp ? DT_VOID : logic ? DT_BOOL : hint, e->pos, op_name(op));
		if (ta == DT_VOID)
			return DT_VOID;
		if (bits || shift) {
			if (!dtype_is_int(ta) && !(bits && ta == DT_BOOL)) {
				err(c, e->pos, "'%s' needs integer operands%s, not %s", op_name(op), bits ? " (or bools)" : "",
				    dtype_name(ta));
				return DT_VOID;
			}
			t = ta;
		} else if (logic) {
			if (ta != DT_BOOL) {
				err(c, e->pos, "'%s' needs bool operands, not %s", op_name(op), dtype_name(ta));
				return DT_VOID;
			}
			t = DT_BOOL;
		} else if (cmp) {
			if (ta == DT_BOOL && op != OP_EQ && op != OP_NE) {
				err(c, e->pos, "'%s' cannot compare bools", op_name(op));
				return DT_VOID;
			}
			t = DT_BOOL;
		} else {
			if (!is_numeric(ta)) {
				err(c, e->pos, "'%s' needs numeric operands, not %s", op_name(op), dtype_name(ta));
				return DT_VOID;
			}
			if (op == OP_DIV && !dtype_is_float(ta)) {
				err(c, e->pos, "'/' is float division; use '//' for integer floor division");
				return DT_VOID;
			}
			if (op == OP_FLOORDIV && !dtype_is_int(ta)) { /* float '%' is floor modulo; see fmod */
				err(c, e->pos, "'%s' needs integer operands, not %s", op_name(op), dtype_name(ta));
				return DT_VOID;
			}
			t = ta;
		}
		break;
	}
	case E_CALL: {
		Op op = (Op)e->op;
		if (op >= OP_SHFL_XOR && op <= OP_SHFL_IDX) {
			if (!c->per_thread) {
				err(c, e->pos, "'%s' exchanges values between the threads of a warp: it may only be used in "
				    "per-thread code (an if whose condition uses tx)", op_name(op));
				return DT_VOID;
			}
			if (c->lazy) {
				err(c, e->pos, "'%s' cannot be a branch of if_then_else (every thread of the warp must execute "
				    "it); bind it with let first", op_name(op));
				return DT_VOID;
			}
			t = check_expr(c, e->args[0], hint);
			DType tl = check_expr(c, e->args[1], DT_I32);
			if (tl != DT_VOID && tl != DT_I32)
				err(c, EX(e->args[1])->pos, "the lane argument of '%s' must be i32, not %s", op_name(op),
				    dtype_name(tl));
			if (t == DT_BOOL || t == DT_I64 || t == DT_F64) {
				err(c, e->pos, "'%s' moves 32-bit values; %s is not supported (use select(b, 1, 0) for bool, "
				    "or split 64-bit values)", op_name(op), dtype_name(t));
				return DT_VOID;
			}
		} else if (op == OP_SELECT || op == OP_IF_THEN_ELSE) {
			DType tc = check_expr(c, e->args[0], DT_BOOL);
			if (tc != DT_VOID && tc != DT_BOOL)
				err(c, EX(e->args[0])->pos, "%s's condition must be bool, not %s", op_name(op), dtype_name(tc));
			c->lazy += op == OP_IF_THEN_ELSE;
			t = check_pair(c, e->args[1], e->args[2], hint, e->pos, op_name(op));
			c->lazy -= op == OP_IF_THEN_ELSE;
		} else if (op == OP_POW || op == OP_FMOD) {
			bool lit = literal_only(c, e->args[0]) && literal_only(c, e->args[1]);
			t = check_pair(c, e->args[0], e->args[1], lit && !dtype_is_float(hint) ? DT_F32 : hint, e->pos,
			               op_name(op));
			if (t != DT_VOID && !dtype_is_float(t)) {
				err(c, e->pos, "'%s' needs float operands, not %s; cast them, e.g. f32(x)%s", op_name(op),
				    dtype_name(t), op == OP_FMOD ? ", or use '%' for integers" : "");
				return DT_VOID;
			}
		} else if (op == OP_CLAMP) {
			/* clamp(x, lo, hi): x gives the type, the bounds follow it */
			t = check_pair(c, e->args[0], e->args[1], hint, e->pos, "clamp");
			if (t != DT_VOID) {
				DType th = check_expr(c, e->args[2], t);
				if (th != DT_VOID && th != t) {
					err(c, EX(e->args[2])->pos, "operands of 'clamp' have different types (%s and %s); insert "
					    "a cast such as %s(...)", dtype_name(t), dtype_name(th), dtype_name(t));
					return DT_VOID;
				}
				if (th == DT_VOID)
					return DT_VOID;
				if (!is_numeric(t)) {
					err(c, e->pos, "'clamp' needs numeric operands, not %s", dtype_name(t));
					return DT_VOID;
				}
			}
		} else if (op == OP_MIN || op == OP_MAX || op == OP_CEILDIV) {
			t = check_pair(c, e->args[0], e->args[1], hint, e->pos, op_name(op));
			if (t != DT_VOID && !is_numeric(t)) {
				err(c, e->pos, "'%s' needs numeric operands, not %s", op_name(op), dtype_name(t));
				return DT_VOID;
			}
			if (t != DT_VOID && op == OP_CEILDIV && !dtype_is_int(t)) {
				err(c, e->pos, "'ceildiv' needs integer operands, not %s", dtype_name(t));
				return DT_VOID;
			}
		} else if (op == OP_ABS) {
			t = check_expr(c, e->args[0], hint);
			if (t != DT_VOID && !is_numeric(t)) {
				err(c, e->pos, "'abs' needs a numeric operand, not %s", dtype_name(t));
				return DT_VOID;
			}
		} else { /* transcendental */
			bool lit = literal_only(c, e->args[0]);
			t = check_expr(c, e->args[0], lit && !dtype_is_float(hint) ? DT_F32 : hint);
			if (t != DT_VOID && !dtype_is_float(t)) {
				err(c, e->pos, "'%s' needs a float operand, not %s; cast it, e.g. f32(x)", op_name(op),
				    dtype_name(t));
				return DT_VOID;
			}
		}
		break;
	}
	case E_CAST: {
		DType f = check_expr(c, e->a, DT_VOID);
		if (f == DT_VOID)
			return DT_VOID;
		t = (DType)e->cast_to;
		if (e->op && (f == DT_BOOL || t == DT_BOOL || dtype_bits(f) != dtype_bits(t))) {
			if (f == DT_BOOL || t == DT_BOOL)
				err(c, e->pos, "reinterpret of a bool (a bool has no bit pattern of its own; use a cast such as "
				    "i8(x))");
			else
				err(c, e->pos, "reinterpret from %s (%d bits) to %s (%d bits): the two types must have the same "
				    "width", dtype_name(f), dtype_bits(f), dtype_name(t), dtype_bits(t));
			return DT_VOID;
		}
		break;
	}
	}
	e->type = (uint8_t)t;
	return t;
}

/* Checks an integer-valued expression (indices, bounds). */
static void check_int(Checker *c, int32_t id, const char *what)
{
	DType t = check_expr(c, id, DT_I32);
	if (t != DT_VOID && !dtype_is_int(t))
		err(c, EX(id)->pos, "%s must be an integer, not %s", what, dtype_name(t));
}

static bool const_int(Checker *c, int32_t id, const char *what, int64_t *v)
{
	check_int(c, id, what);
	if (!ir_const_int(c->m, id, v)) {
		err(c, EX(id)->pos, "%s must be a compile-time constant (pass -D NAME=VALUE for shape symbols)", what);
		return false;
	}
	return true;
}

/* ---- statements ---------------------------------------------------------- */

static void check_block(Checker *c, const Block *b);

static bool collective_ok(Checker *c, const Stmt *s, const char *what)
{
	if (c->in_parallel) {
		err(c, s->pos, "'%s' is a block-wide operation and cannot appear inside parallel", what);
		return false;
	}
	if (c->per_thread) {
		err(c, s->pos, "'%s' is a block-wide operation and cannot appear in a per-thread if (its condition uses "
		    "tx, ty or tz)", what);
		return false;
	}
	return true;
}

static Buffer *region_buf(Checker *c, const Region *r) { return BUF(r->buf); }

/* Region indices: integers, count equal to the rank when present. */
static bool check_region_idx(Checker *c, const Region *r, bool need_full)
{
	Buffer *b = region_buf(c, r);
	if ((r->nidx || need_full) && r->nidx != b->rank) {
		err(c, r->pos, "'%s' has rank %d but %d offset%s given", b->name, b->rank, r->nidx,
		    r->nidx == 1 ? " is" : "s are");
		return false;
	}
	for (int i = 0; i < r->nidx; i++) {
		DType t = check_expr(c, r->idx[i], DT_I32);
		if (t != DT_VOID && !dtype_is_int(t))
			err(c, EX(r->idx[i])->pos, "%s of '%s' must be an integer, not %s", need_full ? "index" : "offset",
			    b->name, dtype_name(t));
	}
	return true;
}

static bool require_whole(Checker *c, const Region *r, const char *what)
{
	if (r->nidx) {
		err(c, r->pos, "%s must be a whole buffer, not a tile of '%s'", what, region_buf(c, r)->name);
		return false;
	}
	return true;
}

static bool require_scope(Checker *c, const Region *r, unsigned mask, const char *what)
{
	Buffer *b = region_buf(c, r);
	if (!(mask & (1u << b->scope))) {
		err(c, r->pos, "%s cannot be the %s buffer '%s'", what, scope_name((Scope)b->scope), b->name);
		return false;
	}
	return true;
}

#define M_GLOBAL (1u << SCOPE_GLOBAL)
#define M_SHARED (1u << SCOPE_SHARED)
#define M_FRAG (1u << SCOPE_FRAGMENT)
#define M_LOCAL (1u << SCOPE_LOCAL)
#define M_ONCHIP (M_SHARED | M_FRAG | M_LOCAL)

/* ---- copy tiles ------------------------------------------------------------
 *
 * A side of a copy (or tile atomic_add) either gives the tile's extent — a
 * whole on-chip buffer, or the region form B[i, lo : hi, :] — or only
 * offsets (B[o...], or a whole global tensor at offset 0).  The tile is the
 * list of extents of the giving side; it runs along the trailing dimensions
 * of an offsets side (leading indices fixed), and when both sides give
 * extents their lists must agree, ignoring dimensions of size 1. */

typedef struct {
	int n;                     /* tile dims this side gives, -1: offsets only */
	int8_t dim[IR_MAX_RANK];   /* the buffer dim of each */
	int64_t ext[IR_MAX_RANK];
} Span;

/* Linear form: konst + sum coef[i] * var[i], for extents hi - lo. */
typedef struct {
	int n;
	int32_t var[8];
	int64_t coef[8];
	int64_t konst;
} Lin;

static bool lin_add(Lin *a, const Lin *b, int64_t k)
{
	a->konst += k * b->konst;
	for (int i = 0; i < b->n; i++) {
		int j = 0;
		while (j < a->n && a->var[j] != b->var[i])
			j++;
		if (j == a->n) {
			if (a->n == 8)
				return false;
			a->var[a->n] = b->var[i], a->coef[a->n++] = 0;
		}
		a->coef[j] += k * b->coef[i];
	}
	return true;
}

static bool lin_of(Checker *c, int32_t id, Lin *out, int depth)
{
	*out = (Lin){0};
	int64_t v;
	if (ir_const_int(c->m, id, &v)) {
		out->konst = v;
		return true;
	}
	const Expr *e = EX(id);
	if (depth > 32)
		return false;
	if (e->kind == E_VAR) {
		out->n = 1, out->var[0] = e->var, out->coef[0] = 1;
		return true;
	}
	Lin a, b;
	if (e->kind == E_UNARY && e->op == OP_NEG)
		return lin_of(c, e->a, &a, depth + 1) && lin_add(out, &a, -1);
	if (e->kind != E_BINARY || !lin_of(c, e->a, &a, depth + 1) || !lin_of(c, e->b, &b, depth + 1))
		return false;
	if (e->op == OP_ADD || e->op == OP_SUB)
		return lin_add(out, &a, 1) && lin_add(out, &b, e->op == OP_ADD ? 1 : -1);
	if (e->op == OP_MUL && (!a.n || !b.n))
		return lin_add(out, a.n ? &a : &b, a.n ? b.konst : a.konst);
	return false;
}

/* hi - lo when it is the same for every value of the variables. */
static bool const_diff(Checker *c, int32_t hi, int32_t lo, int64_t *out)
{
	Lin a, b, d = {0};
	if (!lin_of(c, hi, &a, 0) || !lin_of(c, lo, &b, 0) || !lin_add(&d, &a, 1) || !lin_add(&d, &b, -1))
		return false;
	for (int i = 0; i < d.n; i++)
		if (d.coef[i])
			return false;
	*out = d.konst;
	return true;
}

static bool check_ranges(Checker *c, const Region *r, bool allowed)
{
	if (!r->hi)
		return true;
	if (!allowed) {
		err(c, r->pos, "a range ('lo : hi' or ':') of '%s' may appear only in copy and atomic_add",
		    region_buf(c, r)->name);
		return false;
	}
	for (int i = 0; i < r->nidx; i++)
		if (r->hi[i] >= 0)
			check_int(c, r->hi[i], "the end of a range");
	return true;
}

static bool side_span(Checker *c, const Region *r, Span *sp)
{
	Buffer *b = region_buf(c, r);
	sp->n = -1;
	if (!r->nidx) {
		if (b->scope == SCOPE_GLOBAL)
			return true;
		sp->n = b->rank;
		for (int d = 0; d < b->rank; d++)
			sp->dim[d] = (int8_t)d, sp->ext[d] = ir_buf_dim(c->m, b, d);
		return true;
	}
	if (!r->hi)
		return true;
	sp->n = 0;
	for (int d = 0; d < r->nidx; d++) {
		int64_t e, size = ir_buf_dim(c->m, b, d);
		if (r->hi[d] == REGION_POINT)
			continue;
		if (r->hi[d] == REGION_ALL) {
			if (size < 0) {
				err(c, r->pos, "':' over dimension %d of '%s' needs a constant size; specialise its "
				    "shape symbol with -D or write the range as lo : lo + N", d, b->name);
				return false;
			}
			e = size;
		} else if (!const_diff(c, r->hi[d], r->idx[d], &e)) {
			err(c, EX(r->hi[d])->pos, "the range of dimension %d of '%s' must have a constant length "
			    "(write it as lo : lo + N)", d, b->name);
			return false;
		} else if (e < 1 || e > (1 << 20)) {
			err(c, EX(r->hi[d])->pos, "the range of dimension %d of '%s' has length %lld; it must be 1 "
			    "to 1048576", d, b->name, (long long)e);
			return false;
		}
		sp->dim[sp->n] = (int8_t)d, sp->ext[sp->n++] = e;
	}
	if (!sp->n) {
		err(c, r->pos, "the region of '%s' has no range; give the tile's extent with lo : hi or ':'",
		    b->name);
		return false;
	}
	return true;
}

static void span_text(StrBuf *sb, const int64_t *ext, int n)
{
	sb_putc(sb, '[');
	for (int i = 0; i < n; i++)
		sb_printf(sb, "%s%lld", i ? ", " : "", (long long)ext[i]);
	sb_putc(sb, ']');
}

/* Tile dims of a giving side: all of them, or only those of size != 1. */
static void span_map(Region *r, const Span *sp, bool squeeze)
{
	int t = 0;
	for (int i = 0; i < sp->n; i++)
		if (!squeeze || sp->ext[i] != 1)
			r->tdim[sp->dim[i]] = (int8_t)t++;
}

/* Sets s->trank/text and both regions' tdim; false after a diagnostic. */
static bool match_tile(Checker *c, Stmt *s, Region *ra, Region *rb)
{
	Buffer *a = region_buf(c, ra), *b = region_buf(c, rb);
	Span sa, sb_;
	if (!side_span(c, ra, &sa) || !side_span(c, rb, &sb_))
		return false;
	for (int d = 0; d < IR_MAX_RANK; d++)
		ra->tdim[d] = rb->tdim[d] = -1;
	if (sa.n < 0 && sb_.n < 0) {
		err(c, s->pos, "copy needs one side to be a whole shared/fragment/local buffer, which gives the "
		    "tile's extent");
		return false;
	}
	if (sa.n >= 0 && sb_.n >= 0) {
		bool same = sa.n == sb_.n;
		for (int i = 0; same && i < sa.n; i++)
			same = sa.ext[i] == sb_.ext[i];
		int64_t qa[IR_MAX_RANK], qb[IR_MAX_RANK];
		int na = 0, nb = 0;
		for (int i = 0; i < sa.n; i++)
			if (sa.ext[i] != 1)
				qa[na++] = sa.ext[i];
		for (int i = 0; i < sb_.n; i++)
			if (sb_.ext[i] != 1)
				qb[nb++] = sb_.ext[i];
		bool sq = na == nb;
		for (int i = 0; sq && i < na; i++)
			sq = qa[i] == qb[i];
		if (!same && !sq) {
			if (sa.n == sb_.n && !ra->nidx && !rb->nidx) {
				for (int d = 0; d < sa.n; d++)
					if (sa.ext[d] != sb_.ext[d]) {
						err(c, s->pos, "copy between '%s' and '%s': shapes differ in dimension %d "
						    "(%lld vs %lld)", a->name, b->name, d, (long long)sa.ext[d],
						    (long long)sb_.ext[d]);
						return false;
					}
			}
			StrBuf t1 = {0}, t2 = {0};
			span_text(&t1, sa.ext, sa.n);
			span_text(&t2, sb_.ext, sb_.n);
			err(c, s->pos, "copy between a %s tile of '%s' and a %s tile of '%s': the shapes differ "
			    "(dimensions of size 1 aside)", t1.buf ? t1.buf : "", a->name, t2.buf ? t2.buf : "",
			    b->name);
			sb_free(&t1);
			sb_free(&t2);
			return false;
		}
		span_map(ra, &sa, !same);
		span_map(rb, &sb_, !same);
		s->trank = 0;
		for (int i = 0; i < sa.n; i++)
			if (same || sa.ext[i] != 1)
				s->text[s->trank++] = (int32_t)sa.ext[i];
		if (!s->trank) /* a 1-element tile of size-1 dims only */
			s->text[s->trank++] = 1, ra->tdim[sa.dim[0]] = 0, rb->tdim[sb_.dim[0]] = 0;
		return true;
	}
	/* one side gives the extent, the other the offsets */
	Region *re = sa.n >= 0 ? ra : rb, *ro = sa.n >= 0 ? rb : ra;
	const Span *sp = sa.n >= 0 ? &sa : &sb_;
	Buffer *eb = region_buf(c, re), *ob = region_buf(c, ro);
	int R = ob->rank, lead = sp->n > R ? sp->n - R : 0;
	for (int i = 0; i < lead; i++)
		if (sp->ext[i] != 1) {
			StrBuf t = {0};
			span_text(&t, sp->ext, sp->n);
			err(c, s->pos, "the %s tile of '%s' has %d dimensions but '%s' has rank %d; only leading "
			    "dimensions of size 1 can be dropped", t.buf ? t.buf : "", eb->name, sp->n, ob->name, R);
			sb_free(&t);
			return false;
		}
	s->trank = sp->n - lead;
	for (int i = 0; i < s->trank; i++) {
		s->text[i] = (int32_t)sp->ext[lead + i];
		re->tdim[sp->dim[lead + i]] = (int8_t)i;
		ro->tdim[R - s->trank + i] = (int8_t)i;
	}
	return true;
}

/* An on-chip tile given by offsets or a range must lie inside its buffer
 * when the offsets are constant (a global one is bounds-checked per element). */
static bool tile_fits(Checker *c, const Stmt *s, const Region *r)
{
	Buffer *b = region_buf(c, r);
	if (b->scope == SCOPE_GLOBAL || !r->nidx)
		return true;
	for (int d = 0; d < b->rank; d++) {
		int64_t off, size = ir_buf_dim(c->m, b, d);
		int64_t ext = r->tdim[d] >= 0 ? s->text[r->tdim[d]] : 1;
		if (!ir_const_int(c->m, r->idx[d], &off) || (off >= 0 && off + ext <= size))
			continue;
		if (r->tdim[d] < 0)
			err(c, EX(r->idx[d])->pos, "index %lld is outside dimension %d of '%s' (size %lld)",
			    (long long)off, d, b->name, (long long)size);
		else
			err(c, EX(r->idx[d])->pos, "tile [%lld, %lld) is outside dimension %d of '%s' (size %lld)",
			    (long long)off, (long long)(off + ext), d, b->name, (long long)size);
		return false;
	}
	return true;
}

static void check_copy(Checker *c, Stmt *s)
{
	if (!collective_ok(c, s, "copy"))
		return;
	if (!check_region_idx(c, &s->src, false) || !check_region_idx(c, &s->dst, false) ||
	    !check_ranges(c, &s->src, true) || !check_ranges(c, &s->dst, true))
		return;
	Buffer *a = region_buf(c, &s->src), *b = region_buf(c, &s->dst);
	if (a->scope == SCOPE_GLOBAL && b->scope == SCOPE_GLOBAL) {
		err(c, s->pos, "copy between two global tensors is not supported; stage through a shared buffer");
		return;
	}
	if (!match_tile(c, s, &s->src, &s->dst))
		return;
	if (tile_fits(c, s, &s->src))
		tile_fits(c, s, &s->dst);
}

static void check_gemm(Checker *c, Stmt *s)
{
	if (!collective_ok(c, s, "gemm"))
		return;
	if (!require_whole(c, &s->src, "gemm's A operand") || !require_whole(c, &s->src2, "gemm's B operand") ||
	    !require_whole(c, &s->dst, "gemm's accumulator"))
		return;
	if (!require_scope(c, &s->src, M_SHARED | M_FRAG, "gemm's A operand") ||
	    !require_scope(c, &s->src2, M_SHARED | M_FRAG, "gemm's B operand") ||
	    !require_scope(c, &s->dst, M_FRAG, "gemm's accumulator"))
		return;
	Buffer *A = region_buf(c, &s->src), *B = region_buf(c, &s->src2), *C = region_buf(c, &s->dst);
	if (A->rank != 2 || B->rank != 2 || C->rank != 2) {
		err(c, s->pos, "gemm operands must be 2-D");
		return;
	}
	int64_t M = ir_buf_dim(c->m, A, s->flag_a ? 1 : 0), K = ir_buf_dim(c->m, A, s->flag_a ? 0 : 1);
	int64_t KB = ir_buf_dim(c->m, B, s->flag_b ? 1 : 0), N = ir_buf_dim(c->m, B, s->flag_b ? 0 : 1);
	if (K != KB) {
		err(c, s->src2.pos, "gemm reduction sizes differ: A gives K=%lld, B gives K=%lld%s", (long long)K,
		    (long long)KB, s->flag_b ? "" : " (is B stored [N, K]? add transpose_b=true)");
		return;
	}
	if (ir_buf_dim(c->m, C, 0) != M || ir_buf_dim(c->m, C, 1) != N) {
		err(c, s->dst.pos, "gemm accumulator '%s' is [%lld, %lld] but A*B is [%lld, %lld]", C->name,
		    (long long)ir_buf_dim(c->m, C, 0), (long long)ir_buf_dim(c->m, C, 1), (long long)M, (long long)N);
		return;
	}
	if (A->dtype != B->dtype) {
		err(c, s->pos, "gemm operands have different dtypes (%s and %s)", dtype_name((DType)A->dtype),
		    dtype_name((DType)B->dtype));
		return;
	}
	DType in = (DType)A->dtype, acc = (DType)C->dtype;
	bool ok = (in == DT_I8 && acc == DT_I32) ||
	          ((in == DT_F16 || in == DT_BF16 || in == DT_F32 || dtype_is_fp8(in)) &&
	           acc == DT_F32);
	if (!ok)
		err(c, s->dst.pos, "gemm of %s inputs accumulates into %s, not %s", dtype_name(in),
		    in == DT_I8 ? "i32" : "f32", dtype_name(acc));
}

static void check_reduce(Checker *c, Stmt *s, bool scan)
{
	const char *what = scan ? "cumsum" : "reduce";
	if (!collective_ok(c, s, what))
		return;
	if (!require_whole(c, &s->src, "the source") || !require_whole(c, &s->dst, "the destination") ||
	    !require_scope(c, &s->src, M_ONCHIP, "the source") ||
	    !require_scope(c, &s->dst, M_ONCHIP, "the destination"))
		return;
	Buffer *a = region_buf(c, &s->src), *b = region_buf(c, &s->dst);
	if (s->dim == -1)
		s->dim = a->rank - 1;
	if (s->dim < 0 || s->dim >= a->rank) {
		err(c, s->pos, "dim=%d is out of range for '%s' of rank %d", s->dim, a->name, a->rank);
		return;
	}
	if (!is_numeric((DType)a->dtype) || !is_numeric((DType)b->dtype)) {
		err(c, s->pos, "%s needs numeric buffers", what);
		return;
	}
	int64_t want[IR_MAX_RANK];
	int wr = 0;
	for (int d = 0; d < a->rank; d++)
		if (scan || d != s->dim)
			want[wr++] = ir_buf_dim(c->m, a, d);
	if (wr == 0)
		want[wr++] = 1;
	bool same = wr == b->rank;
	for (int d = 0; same && d < wr; d++)
		same = want[d] == ir_buf_dim(c->m, b, d);
	if (!same) {
		StrBuf sb = {0};
		for (int d = 0; d < wr; d++)
			sb_printf(&sb, "%s%lld", d ? ", " : "", (long long)want[d]);
		err(c, s->dst.pos, "%s of '%s' along dim %d needs a destination of shape [%s]", what, a->name,
		    s->dim, sb.buf ? sb.buf : "");
		sb_free(&sb);
	}
}

static bool dim_form(Checker *c, int32_t id);

/* V = view T[dims]: integer expressions of shape symbols, positive, and as
 * many elements as T when both counts are constants. */
static void check_view(Checker *c, const Buffer *b)
{
	int64_t n = 1, nt = 1;
	bool cn = true, ct = true;
	for (int d = 0; d < b->rank; d++) {
		int64_t v;
		check_int(c, b->shape[d], "a view dimension");
		if (!dim_form(c, b->shape[d])) {
			err(c, EX(b->shape[d])->pos, "a view's dimensions are integer expressions of shape symbols");
			return;
		}
		if (!ir_const_int(c->m, b->shape[d], &v))
			cn = false;
		else if (v < 1) {
			err(c, EX(b->shape[d])->pos, "view dimension %lld must be positive", (long long)v);
			return;
		} else if (n <= INT64_MAX / 16 / v)
			n *= v;
	}
	const Buffer *t = BUF(b->viewed);
	for (int d = 0; d < t->rank; d++) {
		int64_t v;
		if (!ir_const_int(c->m, t->shape[d], &v))
			ct = false;
		else if (v > 0 && nt <= INT64_MAX / 16 / v)
			nt *= v;
	}
	if (cn && ct && n != nt)
		err(c, b->pos, "view '%s' has %lld elements but '%s' has %lld; a view keeps the element count", b->name,
		    (long long)n, t->name, (long long)nt);
}

static void check_stmt(Checker *c, int32_t id)
{
	Stmt *s = &c->m->stmts.data[id];
	switch ((StmtKind)s->kind) {
	case S_ALLOC: {
		Buffer *b = BUF(s->buf);
		if (c->in_parallel || c->per_thread) {
			if (b->var)
				err(c, s->pos, "'var %s' is declared at block level, not inside parallel or per-thread code "
				    "(each iteration or thread then works on its own copy)", b->name);
			else
				err(c, s->pos, "buffers are allocated at block level, not inside parallel or per-thread code");
			return;
		}
		if (b->view) {
			check_view(c, b);
			break;
		}
		if (dtype_is_packed((DType)b->dtype)) {
			err(c, s->pos, "%s is a storage type of tensor parameters (two per byte); on-chip buffers and vars "
			    "hold the values as i8 (or any wider type), e.g. copy(W[k, n], W_s) into a shared i8 or f16 tile",
			    dtype_name((DType)b->dtype));
			return;
		}
		for (int d = 0; d < b->rank; d++) {
			int64_t v;
			if (!const_int(c, b->shape[d], "a buffer dimension", &v))
				continue;
			if (v < 1 || v > (1 << 20)) {
				err(c, EX(b->shape[d])->pos, "buffer dimension %lld is out of range (1 to 1048576)",
				    (long long)v);
				continue;
			}
			/* Canonicalise to a literal so later passes see constants. */
			if (EX(b->shape[d])->kind != E_INT) {
				SrcPos pos = EX(b->shape[d])->pos;
				int32_t e = ir_int(c->m, v, pos);
				s = &c->m->stmts.data[id];
				b = BUF(s->buf);
				if (e < 0) {
					err(c, pos, "out of memory");
					return;
				}
				c->m->exprs.data[e].type = DT_I32;
				b->shape[d] = e;
			}
		}
		break;
	}
	case S_LET: {
		DType t = check_expr(c, s->value, DT_VOID);
		VAR(s->var)->type = (uint8_t)t;
		break;
	}
	case S_STORE: {
		Buffer *b = region_buf(c, &s->dst);
		if (!check_ranges(c, &s->dst, false))
			return;
		check_region_idx(c, &s->dst, true);
		if (b->var && b->dtype == DT_VOID) { /* var x = value: the value's type */
			b->dtype = (uint8_t)check_expr(c, s->value, DT_VOID);
			return;
		}
		DType t = check_expr(c, s->value, (DType)b->dtype);
		if (t == DT_BOOL && b->dtype != DT_BOOL)
			err(c, EX(s->value)->pos, "storing a bool into %s buffer '%s'; use select(c, 1, 0)",
			    dtype_name((DType)b->dtype), b->name);
		break;
	}
	case S_COPY: check_copy(c, s); break;
	case S_GEMM: check_gemm(c, s); break;
	case S_CLEAR:
	case S_FILL:
		if (!collective_ok(c, s, s->kind == S_CLEAR ? "clear" : "fill") ||
		    !require_whole(c, &s->dst, "the buffer") ||
		    !require_scope(c, &s->dst, M_ONCHIP, s->kind == S_CLEAR ? "clear" : "fill"))
			return;
		if (s->kind == S_FILL) {
			DType t = check_expr(c, s->value, (DType)region_buf(c, &s->dst)->dtype);
			if (t == DT_BOOL && region_buf(c, &s->dst)->dtype != DT_BOOL)
				err(c, EX(s->value)->pos, "filling a numeric buffer with a bool");
		}
		break;
	case S_REDUCE: check_reduce(c, s, false); break;
	case S_CUMSUM: check_reduce(c, s, true); break;
	case S_ATOMIC_ADD: {
		const char *an = atomic_name((AtomicOp)s->sub);
		char what[64];
		snprintf(what, sizeof what, "%s's destination", an);
		if (!require_scope(c, &s->dst, M_GLOBAL | M_SHARED, what))
			return;
		Buffer *g = region_buf(c, &s->dst);
		if (!is_numeric((DType)g->dtype)) {
			err(c, s->dst.pos, "%s needs a numeric destination", an);
			return;
		}
		if (s->value >= 0) { /* element form */
			if (check_ranges(c, &s->dst, false))
				check_region_idx(c, &s->dst, true);
			check_expr(c, s->value, (DType)g->dtype);
			return;
		}
		snprintf(what, sizeof what, "%s of a tile", an);
		char swhat[64];
		snprintf(swhat, sizeof swhat, "%s's source", an);
		if (!collective_ok(c, s, what) || !check_region_idx(c, &s->dst, false) ||
		    !check_ranges(c, &s->dst, true) || !require_scope(c, &s->src, M_ONCHIP, swhat) ||
		    !require_whole(c, &s->src, swhat))
			return;
		match_tile(c, s, &s->src, &s->dst);
		break;
	}
	case S_BARRIER: collective_ok(c, s, "barrier"); break;
	case S_BREAK:
		if (c->loop == 0)
			err(c, s->pos, "break outside a serial loop (it cannot leave a parallel body or a per-thread if)");
		else if (c->loop == LOOP_PIPELINED + 1)
			err(c, s->pos, "break cannot leave a pipelined loop; use a serial loop");
		break;
	case S_PARALLEL: {
		if (c->in_parallel) {
			err(c, s->pos, "parallel loops cannot be nested; use one parallel loop with several variables");
			return;
		}
		if (c->per_thread) {
			err(c, s->pos, "parallel cannot appear in a per-thread if (its condition uses tx, ty or tz)");
			return;
		}
		for (int i = 0; i < s->nvars; i++) {
			int64_t v;
			if (const_int(c, s->extents[i], "a parallel extent", &v) && v < 1)
				err(c, EX(s->extents[i])->pos, "parallel extent must be positive, not %lld", (long long)v);
		}
		int outer = c->loop;
		c->loop = 0;
		c->in_parallel++;
		check_block(c, &s->body);
		c->in_parallel--;
		c->loop = outer;
		break;
	}
	case S_FOR: {
		check_int(c, s->lo, "a loop bound");
		check_int(c, s->hi, "a loop bound");
		if (s->step >= 0) {
			int64_t st;
			if (const_int(c, s->step, "a loop step", &st) && st == 0)
				err(c, EX(s->step)->pos, "a loop step must not be 0");
		}
		if (s->sub == LOOP_PIPELINED) {
			if (s->stages < 0 || s->stages > 8) /* 0 and 1: no overlap, as TileLang's num_stages */
				err(c, s->pos, "stages(%d) is out of range (0 to 8)", s->stages);
			if (c->in_parallel || c->per_thread)
				err(c, s->pos, "pipelined loops run at block level, not inside parallel or per-thread code");
		}
		if (s->sub == LOOP_UNROLL) {
			const char *kw = s->vectorized ? "vectorized" : "unroll";
			int64_t lo, hi;
			int64_t st = 1;
			if (!ir_const_int(c->m, s->lo, &lo) || !ir_const_int(c->m, s->hi, &hi))
				err(c, s->pos, "%s needs constant bounds", kw);
			else if ((s->step < 0 || (ir_const_int(c->m, s->step, &st) && st != 0)) &&
			         ir_trip_count(lo, hi, st) > 1024)
				err(c, s->pos, "%s of %lld iterations is too large (at most 1024)", kw,
				    (long long)ir_trip_count(lo, hi, st));
		}
		int outer = c->loop;
		c->loop = s->sub + 1;
		check_block(c, &s->body);
		c->loop = outer;
		break;
	}
	case S_IF: {
		bool thread = uses_var_kind(c, s->value, V_THREADIDX);
		if (thread && c->in_parallel) {
			err(c, EX(s->value)->pos, "'tx' cannot be used inside parallel; use the loop indices");
			return;
		}
		if (thread)
			s->per_thread = true;
		int outer = c->loop;
		if (thread && !c->per_thread) {
			c->per_thread++;
			c->loop = 0; /* a per-thread break would leave a block-level loop divergently */
		} else {
			thread = false;
		}
		DType t = check_expr(c, s->value, DT_BOOL);
		if (t != DT_VOID && t != DT_BOOL)
			err(c, EX(s->value)->pos, "if condition must be bool, not %s", dtype_name(t));
		check_block(c, &s->body);
		check_block(c, &s->els);
		if (thread)
			c->per_thread--;
		c->loop = outer;
		break;
	}
	}
}

static void check_block(Checker *c, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		check_stmt(c, b->ids[i]);
}

/* A tensor dimension: literals and shape symbols under + - * // % ceildiv min max. */
static bool dim_form(Checker *c, int32_t id)
{
	const Expr *e = EX(id);
	switch (e->kind) {
	case E_INT: return true;
	case E_VAR: return VAR(e->var)->kind == V_SYMBOL;
	case E_BINARY:
		return (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL || e->op == OP_FLOORDIV || e->op == OP_MOD) &&
		       dim_form(c, e->a) && dim_form(c, e->b);
	case E_CALL:
		return (e->op == OP_CEILDIV || e->op == OP_MIN || e->op == OP_MAX) && dim_form(c, e->args[0]) &&
		       dim_form(c, e->args[1]);
	default: return false;
	}
}

/* Appends the unspecialised symbols of a dimension, left to right, that are
 * not arguments yet; nonzero on OOM. */
typedef VEC(KernelArg) ArgList;

static int symbols_in_order(Checker *c, int32_t id, ArgList *args)
{
	const Expr *e = EX(id);
	if (e->kind == E_VAR) {
		Var *v = VAR(e->var);
		if (v->has_value)
			return 0;
		for (size_t j = 0; j < args->len; j++)
			if (args->data[j].var == e->var)
				return 0;
		v->index = (int32_t)args->len;
		return vec_push(args, ((KernelArg){e->var, -1}));
	}
	if (e->kind == E_BINARY)
		return symbols_in_order(c, e->a, args) || symbols_in_order(c, e->b, args);
	for (int i = 0; e->kind == E_CALL && i < e->nargs; i++)
		if (symbols_in_order(c, e->args[i], args))
			return 1;
	return 0;
}

/* threads(...) as parsed: constants once -D has specialised the shape
 * symbols in them (a threads(BM * 2) follows -D BM=...). */
static void check_threads(Checker *c, Kernel *k)
{
	int64_t total = 1;
	for (int d = 0; d < k->ntdim; d++) {
		int64_t v = k->tdim[d];
		int32_t e = k->texpr[d];
		if (e >= 0 && !const_int(c, e, "threads(...)", &v))
			return;
		if (e >= 0 && (v < 1 || v > 1024)) {
			err(c, EX(e)->pos, "threads(%lld) is out of range; a block has 1 to 1024 threads", (long long)v);
			return;
		}
		total *= v;
		if (e >= 0 && total > 1024) {
			err(c, EX(e)->pos, "threads(...) gives %lld threads; a block has 1 to 1024 threads", (long long)total);
			return;
		}
		k->tdim[d] = (int32_t)v;
	}
	k->threads = (int32_t)total;
}

static void check_kernel(Checker *c, Kernel *k)
{
	c->k = k;
	check_threads(c, k);
	for (int i = 0; i < k->ngrid; i++) {
		if (uses_var_kind(c, k->grid[i], V_BLOCKIDX) || uses_var_kind(c, k->grid[i], V_THREADIDX))
			err(c, EX(k->grid[i])->pos, "grid size cannot depend on block or thread indices");
		else
			check_int(c, k->grid[i], "a grid dimension");
	}
	/* Shape symbols left unspecialised become trailing i32 arguments, in
	 * order of first appearance in the parameter list. */
	ArgList args = {0};
	for (int i = 0; i < k->nargs; i++)
		if (vec_push(&args, k->args[i]))
			goto oom;
	for (int i = 0; i < k->nargs; i++) {
		if (k->args[i].buf < 0) {
			const Var *v = VAR(k->args[i].var);
			if (dtype_is_packed((DType)v->type))
				err(c, v->pos, "%s is a storage type of tensors (two per byte); a scalar parameter takes i8 or "
				    "i32", dtype_name((DType)v->type));
			continue;
		}
		Buffer *b = BUF(k->args[i].buf);
		for (int d = 0; d < b->rank; d++) {
			Expr *e = EX(b->shape[d]);
			int64_t val;
			if (!dim_form(c, b->shape[d])) {
				err(c, e->pos, "tensor dimensions are integer expressions of shape symbols (+ - * // %% "
				    "ceildiv min max)");
				continue;
			}
			check_int(c, b->shape[d], "a tensor dimension");
			if (ir_const_int(c->m, b->shape[d], &val) && val < 1)
				err(c, e->pos, "tensor dimension must be positive, not %lld", (long long)val);
			if (symbols_in_order(c, b->shape[d], &args))
				goto oom;
		}
	}
	for (size_t i = 0; i < args.len; i++)
		if (args.data[i].var >= 0 && VAR(args.data[i].var)->kind == V_PARAM)
			VAR(args.data[i].var)->index = (int32_t)i;
	if (args.len != (size_t)k->nargs) {
		KernelArg *na = arena_alloc(&c->m->arena, args.len * sizeof *na);
		if (!na)
			goto oom;
		memcpy(na, args.data, args.len * sizeof *na);
		k->args = na;
		k->nargs = (int32_t)args.len;
	}
	vec_free(&args);
	check_block(c, &k->body);
	int64_t pv;
	if (k->raster && const_int(c, k->raster_panel, "use_swizzle's panel size", &pv) && (pv < 1 || pv > IR_GRID_MAX))
		err(c, EX(k->raster_panel)->pos, "use_swizzle's panel size is %lld; it must be 1 to %d block rows (or columns)",
		    (long long)pv, IR_GRID_MAX);
	return;
oom:
	vec_free(&args);
	err(c, k->pos, "out of memory");
}

/* The first dtype of the module that `want` accepts (buffers, then
 * expression types and cast targets), or DT_VOID. */
static DType find_dtype(const Module *m, bool (*want)(DType))
{
	for (size_t i = 0; i < m->bufs.len; i++)
		if (want((DType)m->bufs.data[i].dtype))
			return (DType)m->bufs.data[i].dtype;
	for (size_t i = 0; i < m->exprs.len; i++) {
		const Expr *e = &m->exprs.data[i];
		if (want((DType)e->type))
			return (DType)e->type;
		if (e->kind == E_CAST && want((DType)e->cast_to))
			return (DType)e->cast_to;
	}
	return DT_VOID;
}

/* Module facts the backends read per kernel, in one pass over the module
 * (Module.first_fnuz/first_fp8, Kernel.uses_tyz).  -1: out of memory. */
static int module_facts(Module *m)
{
	m->first_fnuz = (uint8_t)find_dtype(m, dtype_is_fnuz);
	m->first_fp8 = (uint8_t)find_dtype(m, dtype_is_fp8);
	int32_t *owner = malloc(sizeof(int32_t) * (m->vars.len + 1)); /* ty/tz var -> kernel */
	if (!owner)
		return -1;
	for (size_t v = 0; v < m->vars.len; v++)
		owner[v] = -1;
	for (size_t k = 0; k < m->kernels.len; k++) {
		Kernel *kn = &m->kernels.data[k];
		kn->uses_tyz = false;
		for (int d = 1; d < 3; d++)
			if (kn->threadidx[d] >= 0 && (size_t)kn->threadidx[d] < m->vars.len)
				owner[kn->threadidx[d]] = (int32_t)k;
	}
	for (size_t i = 0; i < m->exprs.len; i++) {
		const Expr *e = &m->exprs.data[i];
		if (e->kind == E_VAR && e->var >= 0 && (size_t)e->var < m->vars.len && owner[e->var] >= 0)
			m->kernels.data[owner[e->var]].uses_tyz = true;
	}
	free(owner);
	return 0;
}

int ir_verify(Module *m, Diag *d)
{
	if (m->verified)
		return 0;
	Checker c = {.m = m, .d = d};
	for (size_t i = 0; i < m->kernels.len; i++)
		check_kernel(&c, &m->kernels.data[i]);
	if (!c.failed && module_facts(m)) {
		diag_error(d, "out of memory");
		c.failed = true;
	}
	m->verified = !c.failed;
	return c.failed ? -1 : 0;
}

int ir_specialize(Module *m, const Define *defs, int ndefs, Diag *d)
{
	int rc = 0;
	for (int i = 0; i < ndefs; i++) {
		bool found = false, is_param = false;
		for (size_t v = 0; v < m->vars.len; v++) {
			Var *var = &m->vars.data[v];
			if (strcmp(var->name, defs[i].name))
				continue;
			if (var->kind == V_SYMBOL) {
				found = true;
				var->has_value = true;
				var->value = defs[i].value;
			} else if (var->kind == V_PARAM) {
				is_param = true;
			}
		}
		if (found && (defs[i].value < 1 || defs[i].value > INT32_MAX)) {
			diag_at(d, DIAG_ERROR, &m->src, (SrcPos){0, 0},
			        defs[i].value < 1 ? "-D %s=%lld: shape symbols must be positive"
			                          : "-D %s=%lld: out of range (shape symbols are i32: 1 to 2147483647)",
			        defs[i].name, (long long)defs[i].value);
			rc = -1;
		} else if (!found) {
			diag_at(d, DIAG_ERROR, &m->src, (SrcPos){0, 0},
			        is_param ? "-D %s: '%s' is a scalar parameter; -D specialises shape symbols only"
			                 : "-D %s: no shape symbol named '%s' in this file",
			        defs[i].name, defs[i].name);
			rc = -1;
		}
	}
	return rc;
}
