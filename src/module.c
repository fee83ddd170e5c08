/* module.c — Module lifetime, node constructors, dtype tables, structural
 * equality and constant folding of integer expressions. */
#include "dtype.h"
#include "ir.h"

static const struct {
	const char *name;
	int bytes;
} dtypes[DT_COUNT] = {
	[DT_VOID] = {"void", 0},     [DT_BOOL] = {"bool", 1},       [DT_I8] = {"i8", 1},
	[DT_U8] = {"u8", 1},         [DT_I16] = {"i16", 2},         [DT_I32] = {"i32", 4},
	[DT_U32] = {"u32", 4},       [DT_I64] = {"i64", 8},         [DT_F16] = {"f16", 2},
	[DT_BF16] = {"bf16", 2},     [DT_F32] = {"f32", 4},         [DT_F64] = {"f64", 8},
	[DT_FP8E4M3] = {"fp8e4m3", 1}, [DT_FP8E5M2] = {"fp8e5m2", 1},
	[DT_FP8E4M3FNUZ] = {"fp8e4m3fnuz", 1}, [DT_FP8E5M2FNUZ] = {"fp8e5m2fnuz", 1},
	[DT_I4] = {"i4", 1},         [DT_U4] = {"u4", 1},
};

const char *dtype_name(DType t) { return t < DT_COUNT ? dtypes[t].name : "?"; }
int dtype_bytes(DType t) { return t < DT_COUNT ? dtypes[t].bytes : 0; }
bool dtype_is_packed(DType t) { return t == DT_I4 || t == DT_U4; }
int dtype_bits(DType t) { return dtype_is_packed(t) ? 4 : 8 * dtype_bytes(t); }
int64_t dtype_storage_bytes(DType t, int64_t n)
{
	return dtype_is_packed(t) ? (n + 7) / 8 * 4 : n * dtype_bytes(t);
}

DType dtype_from_name(const char *s, size_t n)
{
	for (int t = DT_BOOL; t < DT_COUNT; t++)
		if (strlen(dtypes[t].name) == n && !strncmp(dtypes[t].name, s, n))
			return (DType)t;
	return DT_VOID;
}

bool dtype_is_float(DType t)
{
	return t == DT_F16 || t == DT_BF16 || t == DT_F32 || t == DT_F64 || dtype_is_fp8(t);
}

bool dtype_is_fp8(DType t)
{
	return t == DT_FP8E4M3 || t == DT_FP8E5M2 || dtype_is_fnuz(t);
}

bool dtype_is_fnuz(DType t) { return t == DT_FP8E4M3FNUZ || t == DT_FP8E5M2FNUZ; }

bool dtype_is_int(DType t) { return (t >= DT_I8 && t <= DT_I64) || dtype_is_packed(t); }
bool dtype_is_signed(DType t) { return t == DT_I4 || t == DT_I8 || t == DT_I16 || t == DT_I32 || t == DT_I64; }

static const char *op_names[OP_COUNT] = {
	[OP_NEG] = "-",      [OP_NOT] = "!",     [OP_ADD] = "+",      [OP_SUB] = "-",
	[OP_MUL] = "*",      [OP_DIV] = "/",     [OP_FLOORDIV] = "//", [OP_MOD] = "%",
	[OP_EQ] = "==",      [OP_NE] = "!=",     [OP_LT] = "<",       [OP_LE] = "<=",
	[OP_GT] = ">",       [OP_GE] = ">=",     [OP_AND] = "&&",     [OP_OR] = "||",
	[OP_MIN] = "min",    [OP_MAX] = "max",   [OP_ABS] = "abs",    [OP_EXP] = "exp",
	[OP_EXP2] = "exp2",  [OP_LOG] = "log",   [OP_LOG2] = "log2",  [OP_SQRT] = "sqrt",
	[OP_RSQRT] = "rsqrt", [OP_TANH] = "tanh", [OP_SELECT] = "select", [OP_CEILDIV] = "ceildiv",
	[OP_BNOT] = "~",     [OP_BAND] = "&",    [OP_BOR] = "|",      [OP_BXOR] = "^",
	[OP_SHL] = "<<",     [OP_SHR] = ">>",    [OP_FLOOR] = "floor", [OP_CEIL] = "ceil",
	[OP_ROUND] = "round", [OP_SIN] = "sin",  [OP_COS] = "cos",    [OP_ERF] = "erf",
	[OP_SIGMOID] = "sigmoid", [OP_POW] = "pow", [OP_FMOD] = "fmod", [OP_CLAMP] = "clamp",
	[OP_IF_THEN_ELSE] = "if_then_else", [OP_SHFL_XOR] = "shfl_xor", [OP_SHFL_DOWN] = "shfl_down",
	[OP_SHFL_UP] = "shfl_up", [OP_SHFL_IDX] = "shfl_idx",
};

const char *op_name(Op op) { return op < OP_COUNT ? op_names[op] : "?"; }

static const char *scope_names[] = {"global", "shared", "fragment", "local"};
const char *scope_name(Scope s) { return s <= SCOPE_LOCAL ? scope_names[s] : "?"; }

Module *ir_module_new(const char *filename, const char *text, size_t len)
{
	Module *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->src_copy = malloc(len + 1);
	char *name = arena_strndup(&m->arena, filename, strlen(filename));
	if (!m->src_copy || !name) {
		ir_module_free(m);
		return NULL;
	}
	memcpy(m->src_copy, text, len);
	m->src_copy[len] = 0;
	m->src = (SrcFile){name, m->src_copy, len};
	return m;
}

void ir_module_free(Module *m)
{
	if (!m)
		return;
	vec_free(&m->exprs);
	vec_free(&m->stmts);
	vec_free(&m->vars);
	vec_free(&m->bufs);
	vec_free(&m->kernels);
	arena_free(&m->arena);
	free(m->src_copy);
	free(m);
}

#define ADD_NODE(vec, x) (vec_push(&(vec), (x)) ? -1 : (int32_t)((vec).len - 1))
int32_t ir_add_expr(Module *m, Expr e) { return ADD_NODE(m->exprs, e); }
int32_t ir_add_stmt(Module *m, Stmt s) { return ADD_NODE(m->stmts, s); }
int32_t ir_add_var(Module *m, Var v) { return ADD_NODE(m->vars, v); }
int32_t ir_add_buf(Module *m, Buffer b) { return ADD_NODE(m->bufs, b); }

int32_t ir_int(Module *m, int64_t v, SrcPos pos)
{
	return ir_add_expr(m, (Expr){.kind = E_INT, .ival = v, .pos = pos, .a = -1, .b = -1, .var = -1,
	                             .buf = -1});
}

static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

const char *raster_name(RasterOrder o) { return o == RASTER_COL ? "col" : "row"; }

void ir_raster_map(RasterOrder order, int64_t p, int64_t gx, int64_t gy, int64_t x, int64_t y, int64_t out[2])
{
	int64_t a = order == RASTER_COL ? gy : gx, b = order == RASTER_COL ? gx : gy;
	int64_t l = x + y * gx, n = l / (p * a), o = l % (p * a);
	int64_t s = b - n * p < p ? b - n * p : p;
	int64_t u = o / s, v = n * p + o % s;
	if (n & 1)
		u = a - 1 - u;
	out[0] = order == RASTER_COL ? v : u;
	out[1] = order == RASTER_COL ? u : v;
}

const char *atomic_name(AtomicOp op) { return op == ATOMIC_MAX ? "atomic_max" : op == ATOMIC_MIN ? "atomic_min" : "atomic_add"; }

static bool eval_int(const Module *m, int k, int32_t id, const int64_t *vals, int64_t *out)
{
	if (id < 0 || (size_t)id >= m->exprs.len)
		return false;
	const Expr *e = &m->exprs.data[id];
	int64_t a, b;
	switch (e->kind) {
	case E_INT:
	case E_BOOL:
		*out = e->ival;
		return true;
	case E_VAR: {
		const Var *v = &m->vars.data[e->var];
		if (v->kind == V_SYMBOL && v->has_value) {
			*out = v->value;
			return true;
		}
		if ((v->kind != V_SYMBOL && v->kind != V_PARAM) || !dtype_is_int((DType)v->type) || !vals ||
		    v->index < 0 || v->index >= m->kernels.data[k].nargs || m->kernels.data[k].args[v->index].var != e->var)
			return false;
		*out = vals[v->index];
		return true;
	}
	case E_CAST:
		if ((!dtype_is_int((DType)e->cast_to) && e->cast_to != DT_BOOL) || !eval_int(m, k, e->a, vals, &a))
			return false;
		*out = e->cast_to == DT_BOOL ? a != 0 : dt_wrap_int((DType)e->cast_to, a);
		return true;
	case E_UNARY:
		if (!eval_int(m, k, e->a, vals, &a))
			return false;
		*out = e->op == OP_NOT ? !a : e->op == OP_BNOT ? ~a : (int64_t)(0 - (uint64_t)a);
		if (dtype_is_int((DType)e->type))
			*out = dt_wrap_int((DType)e->type, *out);
		return true;
	case E_BINARY:
	case E_CALL: {
		if (e->kind == E_CALL && (e->op == OP_SELECT || e->op == OP_IF_THEN_ELSE)) {
			int64_t c;
			if (e->nargs != 3 || !eval_int(m, k, e->args[0], vals, &c))
				return false;
			return eval_int(m, k, e->args[c ? 1 : 2], vals, out);
		}
		if (e->kind == E_CALL && e->op == OP_ABS) {
			if (e->nargs != 1 || !eval_int(m, k, e->args[0], vals, &a))
				return false;
			*out = a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
			if (dtype_is_int((DType)e->type))
				*out = dt_wrap_int((DType)e->type, *out);
			return true;
		}
		int32_t x = e->kind == E_BINARY ? e->a : (e->nargs == 2 ? e->args[0] : -1);
		int32_t y = e->kind == E_BINARY ? e->b : (e->nargs == 2 ? e->args[1] : -1);
		if (!eval_int(m, k, x, vals, &a) || !eval_int(m, k, y, vals, &b))
			return false;
		/* Unsigned wrapping arithmetic, so overflow is defined here; the result
		 * then wraps to the expression's type as the interpreter's does. */
		uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
		switch (e->op) {
		case OP_ADD: *out = (int64_t)(ua + ub); break;
		case OP_SUB: *out = (int64_t)(ua - ub); break;
		case OP_MUL: *out = (int64_t)(ua * ub); break;
		case OP_EQ: *out = a == b; break;
		case OP_NE: *out = a != b; break;
		case OP_LT: *out = a < b; break;
		case OP_LE: *out = a <= b; break;
		case OP_GT: *out = a > b; break;
		case OP_GE: *out = a >= b; break;
		case OP_AND: *out = a && b; break;
		case OP_OR: *out = a || b; break;
		case OP_BAND: *out = a & b; break;
		case OP_BOR: *out = a | b; break;
		case OP_BXOR: *out = a ^ b; break;
		case OP_SHL:
		case OP_SHR:
			*out = dt_shift(dtype_is_int((DType)e->type) ? (DType)e->type : DT_I64, a, b, e->op == OP_SHL);
			break;
		case OP_MIN: *out = a < b ? a : b; break;
		case OP_MAX: *out = a > b ? a : b; break;
		case OP_FLOORDIV: if (!b || (b == -1 && a == INT64_MIN)) return false; *out = floordiv(a, b); break;
		case OP_MOD:
			if (!b)
				return false;
			*out = b == -1 ? 0 : (int64_t)(ua - (uint64_t)floordiv(a, b) * ub);
			break;
		case OP_CEILDIV: if (!b || a == INT64_MIN || (b == -1 && -a == INT64_MIN)) return false; *out = -floordiv(-a, b); break;
		default: return false;
		}
		if (dtype_is_int((DType)e->type))
			*out = dt_wrap_int((DType)e->type, *out);
		return true;
	}
	default:
		return false;
	}
}

bool ir_const_int(const Module *m, int32_t id, int64_t *out) { return eval_int(m, -1, id, NULL, out); }

int ir_eval_i64(const Module *m, int k, int32_t e, const int64_t *vals, int64_t *out)
{
	return eval_int(m, k, e, vals, out) ? 0 : -1;
}

int64_t ir_trip_count(int64_t lo, int64_t hi, int64_t st)
{
	if (st > 0)
		return hi > lo ? (int64_t)(((uint64_t)hi - (uint64_t)lo + (uint64_t)st - 1) / (uint64_t)st) : 0;
	return lo > hi ? (int64_t)(((uint64_t)lo - (uint64_t)hi + (uint64_t)-st - 1) / (uint64_t)-st) : 0;
}

int64_t ir_buf_dim(const Module *m, const Buffer *b, int d)
{
	int64_t v;
	return ir_const_int(m, b->shape[d], &v) ? v : -1;
}

int64_t ir_buf_elems(const Module *m, const Buffer *b)
{
	int64_t n = 1;
	for (int d = 0; d < b->rank; d++) {
		int64_t v = ir_buf_dim(m, b, d);
		if (v < 0)
			return -1;
		n *= v;
	}
	return n;
}

/* ---- structural equality (positions ignored) ------------------------- */

typedef struct {
	const Module *a, *b;
} Pair;

static bool eq_expr(Pair p, int32_t x, int32_t y);

static bool eq_ids(Pair p, const int32_t *x, const int32_t *y, int n)
{
	for (int i = 0; i < n; i++)
		if (!eq_expr(p, x[i], y[i]))
			return false;
	return true;
}

static bool eq_str(const char *x, const char *y) { return !strcmp(x ? x : "", y ? y : ""); }

static bool eq_var(Pair p, int32_t x, int32_t y)
{
	if (x < 0 || y < 0)
		return x == y;
	const Var *u = &p.a->vars.data[x], *v = &p.b->vars.data[y];
	return u->kind == v->kind && u->type == v->type && u->index == v->index && u->dflt == v->dflt &&
	       eq_str(u->name, v->name);
}

static bool eq_buf(Pair p, int32_t x, int32_t y)
{
	if (x < 0 || y < 0)
		return x == y;
	const Buffer *u = &p.a->bufs.data[x], *v = &p.b->bufs.data[y];
	return u->scope == v->scope && u->dtype == v->dtype && u->rank == v->rank && u->var == v->var &&
	       u->view == v->view && (!u->view || eq_buf(p, u->viewed, v->viewed)) &&
	       eq_str(u->name, v->name) &&
	       eq_ids(p, u->shape, v->shape, u->rank);
}

static bool eq_expr(Pair p, int32_t x, int32_t y)
{
	if (x < 0 || y < 0)
		return x == y;
	const Expr *u = &p.a->exprs.data[x], *v = &p.b->exprs.data[y];
	if (u->kind != v->kind || u->op != v->op || u->cast_to != v->cast_to || u->nargs != v->nargs)
		return false;
	switch (u->kind) {
	case E_INT:
	case E_BOOL: return u->ival == v->ival;
	case E_FLOAT: return u->fval == v->fval || (u->fval != u->fval && v->fval != v->fval);
	case E_VAR: return eq_var(p, u->var, v->var);
	case E_LOAD: return eq_buf(p, u->buf, v->buf) && eq_ids(p, u->args, v->args, u->nargs);
	case E_CALL: return eq_ids(p, u->args, v->args, u->nargs);
	default: return eq_expr(p, u->a, v->a) && eq_expr(p, u->b, v->b);
	}
}

static bool eq_region(Pair p, const Region *x, const Region *y)
{
	if (x->nidx != y->nidx || !eq_buf(p, x->buf, y->buf) || !eq_ids(p, x->idx, y->idx, x->nidx) ||
	    !x->hi != !y->hi)
		return false;
	for (int i = 0; x->hi && i < x->nidx; i++)
		if (x->hi[i] < 0 || y->hi[i] < 0 ? x->hi[i] != y->hi[i] : !eq_expr(p, x->hi[i], y->hi[i]))
			return false;
	return true;
}

static bool eq_block(Pair p, const Block *x, const Block *y);

static bool eq_stmt(Pair p, int32_t x, int32_t y)
{
	const Stmt *u = &p.a->stmts.data[x], *v = &p.b->stmts.data[y];
	if (u->kind != v->kind || u->sub != v->sub || u->dim != v->dim || u->stages != v->stages ||
	    u->flag_a != v->flag_a || u->flag_b != v->flag_b || u->flag_clear != v->flag_clear ||
	    u->flag_reverse != v->flag_reverse || u->nvars != v->nvars)
		return false;
	if (!eq_region(p, &u->dst, &v->dst) || !eq_region(p, &u->src, &v->src) ||
	    !eq_region(p, &u->src2, &v->src2) || !eq_expr(p, u->value, v->value) ||
	    !eq_var(p, u->var, v->var) || !eq_buf(p, u->buf, v->buf) || !eq_expr(p, u->lo, v->lo) ||
	    !eq_expr(p, u->hi, v->hi) || !eq_expr(p, u->step, v->step))
		return false;
	for (int i = 0; i < u->nvars; i++)
		if (!eq_var(p, u->vars[i], v->vars[i]) || !eq_expr(p, u->extents[i], v->extents[i]))
			return false;
	return eq_block(p, &u->body, &v->body) && eq_block(p, &u->els, &v->els);
}

static bool eq_block(Pair p, const Block *x, const Block *y)
{
	if (x->n != y->n)
		return false;
	for (int i = 0; i < x->n; i++)
		if (!eq_stmt(p, x->ids[i], y->ids[i]))
			return false;
	return true;
}

bool ir_equal(const Module *a, const Module *b)
{
	Pair p = {a, b};
	if (a->kernels.len != b->kernels.len)
		return false;
	for (size_t k = 0; k < a->kernels.len; k++) {
		const Kernel *u = &a->kernels.data[k], *v = &b->kernels.data[k];
		if (!eq_str(u->name, v->name) || u->ngrid != v->ngrid || u->threads != v->threads ||
		    u->ntdim != v->ntdim || memcmp(u->tdim, v->tdim, sizeof u->tdim) ||
		    u->nargs != v->nargs || !eq_ids(p, u->grid, v->grid, u->ngrid) || u->raster != v->raster ||
		    (u->raster && !eq_ids(p, &u->raster_panel, &v->raster_panel, 1)))
			return false;
		for (int d = 0; d < u->ntdim; d++) /* threads(BM * 2) as written; a builder's numbers have none */
			if (u->texpr[d] >= 0 && v->texpr[d] >= 0 && !eq_expr(p, u->texpr[d], v->texpr[d]))
				return false;
		for (int i = 0; i < u->nargs; i++)
			if (!eq_var(p, u->args[i].var, v->args[i].var) || !eq_buf(p, u->args[i].buf, v->args[i].buf))
				return false;
		if (!eq_block(p, &u->body, &v->body))
			return false;
	}
	return true;
}

/* Child i of e: a, b, then the arguments; -1 if none. */
static int32_t expr_child(const Expr *e, int i)
{
	if (i == 0)
		return e->a;
	if (i == 1)
		return e->b;
	return i - 2 < e->nargs ? e->args[i - 2] : -1;
}

size_t ir_nesting(const Module *m)
{
	/* Iterative on purpose: this decides whether the recursive passes need a
	 * stack of their own (run_with_stack_for), so it must not recurse. */
	size_t n = m->exprs.len, hmax = 0, bmax = 0;
	uint32_t *h = calloc(n ? n : 1, sizeof *h); /* height + 1 once known, 0: not yet */
	typedef struct {
		int32_t id;
		int next;
	} EFrame;
	VEC(EFrame) es = {0};
	bool oom = !h;
	for (size_t root = 0; !oom && root < n; root++) {
		if (h[root])
			continue;
		if (vec_push(&es, ((EFrame){(int32_t)root, 0}))) {
			oom = true;
			break;
		}
		while (es.len) {
			EFrame *f = &es.data[es.len - 1];
			const Expr *e = &m->exprs.data[f->id];
			int32_t c = -1;
			while (f->next < 2 + e->nargs && ((c = expr_child(e, f->next++)) < 0 || (size_t)c >= n || h[c]))
				c = -1;
			if (c >= 0) {
				if (vec_push(&es, ((EFrame){c, 0}))) {
					oom = true;
					break;
				}
				continue;
			}
			uint32_t top = 0;
			for (int i = 0; i < 2 + e->nargs; i++) {
				int32_t k = expr_child(e, i);
				if (k >= 0 && (size_t)k < n)
					top = TA_MAX(top, h[k]);
			}
			h[f->id] = top + 1;
			hmax = TA_MAX(hmax, (size_t)h[f->id]);
			es.len--;
		}
	}
	free(h);
	vec_free(&es);
	typedef struct {
		const Block *b;
		int32_t next;
	} SFrame;
	VEC(SFrame) ss = {0};
	for (size_t k = 0; !oom && k < m->kernels.len; k++) {
		if (vec_push(&ss, ((SFrame){&m->kernels.data[k].body, 0}))) {
			oom = true;
			break;
		}
		while (ss.len) {
			bmax = TA_MAX(bmax, ss.len);
			SFrame *f = &ss.data[ss.len - 1];
			if (f->next >= 2 * f->b->n) {
				ss.len--;
				continue;
			}
			/* each statement twice: its body, then its else block */
			const Stmt *s = &m->stmts.data[f->b->ids[f->next / 2]];
			const Block *c = f->next++ % 2 ? &s->els : &s->body;
			if (c->n && vec_push(&ss, ((SFrame){c, 0}))) {
				oom = true;
				break;
			}
		}
	}
	vec_free(&ss);
	/* out of memory: assume the worst, a stack per statement and expression */
	return oom ? m->exprs.len + m->stmts.len : bmax + hmax;
}
