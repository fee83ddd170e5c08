/* builder.c — the public IR builder (ta_build_* in tileasm.h).
 *
 * Calls append nodes to a Module exactly as the parser would.  The finished
 * module is printed and read back through the normal front end, which both
 * verifies it and gives its diagnostics real line:column positions in the
 * canonical text (a host can print that text to see what it built).
 */
#include "api.h"

#include <ctype.h>
#include <errno.h>

enum { TA_MAX_NAME = 1024, TA_BUILD_MAX_TREE = 1 << 20 };

_Static_assert((int)TA_BOOL == DT_BOOL && (int)TA_FP8E5M2 == DT_FP8E5M2 && (int)TA_FP8E5M2FNUZ == DT_FP8E5M2FNUZ &&
                   (int)TA_U4 == DT_U4 && DT_U4 + 1 == DT_COUNT,
               "ta_dtype mirrors DType");
_Static_assert((int)TA_SHARED == SCOPE_SHARED && (int)TA_LOCAL == SCOPE_LOCAL, "ta_scope mirrors Scope");
_Static_assert((int)TA_OP_CEILDIV == OP_CEILDIV && (int)TA_OP_ADD == OP_ADD && (int)TA_OP_IF_THEN_ELSE == OP_IF_THEN_ELSE &&
	       (int)TA_OP_SHFL_IDX == OP_SHFL_IDX && (int)OP_SHFL_IDX + 1 == OP_COUNT, "ta_op mirrors Op");
_Static_assert((int)TA_PIPELINED == LOOP_PIPELINED, "ta_loop mirrors LoopKind");
_Static_assert((int)TA_REDUCE_ABSMAX == RED_ABSMAX, "ta_reduce mirrors ReduceOp");
_Static_assert((int)TA_RASTER_ROW == RASTER_ROW && (int)TA_RASTER_COL == RASTER_COL, "ta_raster mirrors RasterOrder");
_Static_assert((int)TA_ATOMIC_ADD == ATOMIC_ADD && (int)TA_ATOMIC_MIN == ATOMIC_MIN, "ta_atomic mirrors AtomicOp");


typedef struct {
	int32_t stmt;  /* owning statement, -1 for the kernel body */
	bool els;      /* filling the else block of an if */
	size_t names;  /* name-stack height when the block opened */
	VEC(int32_t) ids;
} Frame;

typedef struct {
	const char *name;
	int32_t var;
} BName;

struct ta_builder {
	ta_ctx *ctx;
	Module *m;
	const char *name;
	bool failed, in_kernel;
	Kernel k;
	VEC(KernelArg) args;
	VEC(Frame) frames;
	VEC(BName) names;
	/* per expression id: nesting height, and nodes when printed as a tree
	 * (a shared handle is printed at each use) */
	VEC(uint16_t) height;
	VEC(uint32_t) size;
};

static void fail(ta_builder *b, const char *fn, const char *msg)
{
	if (!b->failed)
		diag_at(&b->ctx->diag, DIAG_ERROR, &(SrcFile){b->name, NULL, 0}, (SrcPos){0, 0}, "%s: %s", fn, msg);
	b->failed = true;
}

/* Guard for entry points: a NULL or failed builder, or a failed
 * precondition, returns `bad` (-1 for handles, TA_ERR_INVALID for status). */
#define GUARD(b, fn, cond, msg, bad)             \
	do {                                         \
		if (!(b) || (b)->failed)                 \
			return bad;                          \
		if (!(cond)) {                           \
			fail((b), (fn), (msg));              \
			return bad;                          \
		}                                        \
	} while (0)
#define CHECK(b, fn, cond, msg) GUARD(b, fn, cond, msg, -1)
#define CHECKS(b, fn, cond, msg) GUARD(b, fn, cond, msg, TA_ERR_INVALID)

static bool grow_info(ta_builder *b)
{
	while (b->height.len < b->m->exprs.len)
		if (vec_push(&b->height, (uint16_t)1) || vec_push(&b->size, (uint32_t)1))
			return false;
	return true;
}

static bool expr_ok(ta_builder *b, ta_expr e) { return e >= 0 && (size_t)e < b->m->exprs.len; }

/* A builder name: [A-Za-z_][A-Za-z0-9_]*, at most TA_MAX_NAME characters,
 * not a reserved word (the module is printed and read back, so anything
 * else could change its meaning: issue 18.4). */
static bool name_ok(ta_builder *b, const char *fn, const char *name)
{
	if (!b || b->failed)
		return false;
	size_t n = 0;
	bool ok = name && (isalpha((unsigned char)name[0]) || name[0] == '_');
	for (; ok && name[n]; n++)
		ok = (isalnum((unsigned char)name[n]) || name[n] == '_') && n < TA_MAX_NAME;
	if (!ok)
		fail(b, fn, "bad name: a name is a letter or '_' followed by letters, digits or '_', at most 1024 characters");
	else if (ir_reserved_word(name))
		fail(b, fn, "bad name: a reserved word");
	return ok && !b->failed;
}
static bool buf_ok(ta_builder *b, ta_buf x) { return x >= 0 && (size_t)x < b->m->bufs.len; }
static bool dtype_ok(ta_dtype t) { return t >= TA_BOOL && t <= TA_U4; }

static const char *dup(ta_builder *b, const char *s) { return arena_strndup(&b->m->arena, s, strlen(s)); }

TA_API ta_builder *ta_build_begin(ta_ctx *ctx, const char *name)
{
	if (!ctx)
		return NULL;
	ta_builder *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->ctx = ctx;
	b->m = ir_module_new(name ? name : "<built>", "", 0);
	if (!b->m) {
		free(b);
		return NULL;
	}
	b->name = b->m->src.name;
	return b;
}

static void free_frames(ta_builder *b)
{
	for (size_t i = 0; i < b->frames.len; i++)
		vec_free(&b->frames.data[i].ids);
	vec_free(&b->frames);
}

TA_API void ta_build_abort(ta_builder *b)
{
	if (!b)
		return;
	free_frames(b);
	vec_free(&b->args);
	vec_free(&b->names);
	vec_free(&b->height);
	vec_free(&b->size);
	ir_module_free(b->m);
	free(b);
}

static int32_t *copy_ids(ta_builder *b, const int32_t *ids, size_t n)
{
	if (!n)
		return NULL;
	int32_t *p = arena_alloc(&b->m->arena, n * sizeof *p);
	if (p)
		memcpy(p, ids, n * sizeof *p);
	else
		fail(b, "ta_build", "out of memory");
	return p;
}

static int32_t push_stmt(ta_builder *b, const char *fn, Stmt s)
{
	if (!b->in_kernel || !b->frames.len) {
		fail(b, fn, "no kernel is open (call ta_build_kernel first)");
		return -1;
	}
	int32_t id = ir_add_stmt(b->m, s);
	if (id < 0 || vec_push(&b->frames.data[b->frames.len - 1].ids, id)) {
		fail(b, fn, "out of memory");
		return -1;
	}
	return id;
}

static Stmt stmt(StmtKind k)
{
	Stmt s = {.kind = (uint8_t)k, .value = -1, .var = -1, .buf = -1, .lo = -1, .hi = -1, .dim = -1, .step = -1};
	s.dst.buf = s.src.buf = s.src2.buf = -1;
	return s;
}

static int32_t add_name(ta_builder *b, const char *name, int32_t var)
{
	if (var >= 0 && vec_push(&b->names, ((BName){name, var}))) {
		fail(b, "ta_build", "out of memory");
		return -1;
	}
	return var;
}

static int32_t new_var(ta_builder *b, const char *name, VarKind kind, DType t)
{
	const char *n = dup(b, name);
	int32_t v = n ? ir_add_var(b->m, (Var){.name = n, .kind = (uint8_t)kind, .type = (uint8_t)t}) : -1;
	if (v < 0) {
		fail(b, "ta_build", "out of memory");
		return -1;
	}
	return add_name(b, n, v);
}

static void close_kernel(ta_builder *b)
{
	if (!b->in_kernel)
		return;
	b->in_kernel = false;
	if (b->frames.len != 1) {
		fail(b, "ta_build_finish", "a block is still open (missing ta_build_end)");
		return;
	}
	if (!b->k.ngrid) {
		fail(b, "ta_build_finish", "kernel has no grid (call ta_build_grid)");
		return;
	}
	Frame *f = &b->frames.data[0];
	b->k.body.n = (int32_t)f->ids.len;
	b->k.body.ids = copy_ids(b, f->ids.data, f->ids.len);
	b->k.nargs = (int32_t)b->args.len;
	b->k.args = arena_alloc(&b->m->arena, (b->args.len + 1) * sizeof(KernelArg));
	if (!b->k.args) {
		fail(b, "ta_build", "out of memory");
		return;
	}
	if (b->args.len)
		memcpy(b->k.args, b->args.data, b->args.len * sizeof(KernelArg));
	if (vec_push(&b->m->kernels, b->k))
		fail(b, "ta_build", "out of memory");
	free_frames(b);
	b->args.len = 0;
	b->names.len = 0;
}

TA_API ta_status ta_build_kernel(ta_builder *b, const char *name, int threads)
{
	if (!name_ok(b, "ta_build_kernel", name))
		return TA_ERR_INVALID;
	close_kernel(b);
	if (b->failed)
		return TA_ERR_INVALID;
	memset(&b->k, 0, sizeof b->k);
	b->k.name = dup(b, name);
	b->k.threads = threads;
	b->k.ntdim = 1;
	b->k.tdim[0] = threads;
	b->k.tdim[1] = b->k.tdim[2] = 1;
	b->k.texpr[0] = b->k.texpr[1] = b->k.texpr[2] = -1;
	b->in_kernel = true;
	static const char *const builtins[] = {"bx", "by", "bz", "tx", "ty", "tz"};
	for (int i = 0; i < 6; i++) {
		int32_t v = new_var(b, builtins[i], i < 3 ? V_BLOCKIDX : V_THREADIDX, DT_I32);
		if (v < 0)
			return TA_ERR_NOMEM;
		b->m->vars.data[v].index = i % 3;
		if (i < 3)
			b->k.blockidx[i] = v;
		else
			b->k.threadidx[i - 3] = v;
	}
	Frame f = {.stmt = -1};
	if (vec_push(&b->frames, f)) {
		fail(b, "ta_build_kernel", "out of memory");
		return TA_ERR_NOMEM;
	}
	return TA_OK;
}

static int32_t lookup(ta_builder *b, const char *name)
{
	for (size_t i = b->names.len; i-- > 0;)
		if (!strcmp(b->names.data[i].name, name))
			return b->names.data[i].var;
	return -1;
}

static int32_t mkexpr(ta_builder *b, Expr e)
{
	e.a = e.kind == E_UNARY || e.kind == E_BINARY || e.kind == E_CAST ? e.a : -1;
	/* its height: the parser's and printer's limit applies here already, so
	 * ta_build_finish never recurses deeper than that (issue 18.6) */
	unsigned h = 1;
	uint64_t n = 1;
	if (!grow_info(b)) {
		fail(b, "ta_build", "out of memory");
		return -1;
	}
	int32_t kids[IR_MAX_RANK + 4], nk = 0;
	if (e.a >= 0)
		kids[nk++] = e.a;
	if (e.b >= 0)
		kids[nk++] = e.b;
	for (int i = 0; i < e.nargs && nk < (int)TA_ARRAY_LEN(kids); i++)
		kids[nk++] = e.args[i];
	for (int i = 0; i < nk; i++) {
		h = TA_MAX(h, b->height.data[kids[i]] + 1u);
		n += b->size.data[kids[i]];
	}
	if (h > IR_MAX_HEIGHT) {
		fail(b, "ta_build", "expression nested too deeply (more than 256 levels)");
		return -1;
	}
	/* a DAG of shared handles prints as a tree: bound what that expands to
	 * (e = e + e twenty times is a million nodes; issue 18.5) */
	if (n > TA_BUILD_MAX_TREE) {
		fail(b, "ta_build", "expression too large when printed as a tree (more than 1048576 nodes: a handle "
				    "shared many times); bind shared values with ta_build_let and use ta_build_ref");
		return -1;
	}
	int32_t id = ir_add_expr(b->m, e);
	if (id < 0 || !grow_info(b)) {
		fail(b, "ta_build", "out of memory");
		return -1;
	}
	b->height.data[id] = (uint16_t)h;
	b->size.data[id] = (uint32_t)n;
	return id;
}

TA_API ta_buf ta_build_tensor(ta_builder *b, const char *name, ta_dtype t, int rank, const char *const *dims)
{
	CHECK(b, "ta_build_tensor", b->in_kernel && b->frames.len == 1 && !b->frames.data[0].ids.len,
	      "parameters come before the kernel body");
	CHECK(b, "ta_build_tensor", name_ok(b, "ta_build_tensor", name) && dtype_ok(t) && rank >= 1 &&
	      rank <= IR_MAX_RANK && dims, "bad name, dtype or rank");
	Buffer buf = {.name = dup(b, name), .scope = SCOPE_GLOBAL, .dtype = (uint8_t)t, .rank = (uint8_t)rank,
	              .param = (int32_t)b->args.len};
	for (int d = 0; d < rank; d++) {
		CHECK(b, "ta_build_tensor", dims[d] && *dims[d], "empty dimension");
		char *end;
		errno = 0;
		long long v = strtoll(dims[d], &end, 10);
		if (!*end) {
			CHECK(b, "ta_build_tensor", !errno && v >= 1 && v <= INT32_MAX,
			      "dimension out of range (1 to 2147483647)");
			buf.shape[d] = ir_int(b->m, v, (SrcPos){0, 0});
		} else {
			CHECK(b, "ta_build_tensor", name_ok(b, "ta_build_tensor", dims[d]), "bad dimension name");
			int32_t var = lookup(b, dims[d]);
			if (var < 0)
				var = new_var(b, dims[d], V_SYMBOL, DT_I32);
			CHECK(b, "ta_build_tensor", var >= 0 && b->m->vars.data[var].kind == V_SYMBOL,
			      "dimension names something that is not a shape symbol");
			buf.shape[d] = mkexpr(b, (Expr){.kind = E_VAR, .var = var, .buf = -1, .b = -1});
		}
		CHECK(b, "ta_build_tensor", buf.shape[d] >= 0, "out of memory");
	}
	int32_t id = ir_add_buf(b->m, buf);
	CHECK(b, "ta_build_tensor", id >= 0 && !vec_push(&b->args, ((KernelArg){-1, id})), "out of memory");
	return id;
}

TA_API ta_var ta_build_scalar(ta_builder *b, const char *name, ta_dtype t)
{
	CHECK(b, "ta_build_scalar", b->in_kernel && b->frames.len == 1 && !b->frames.data[0].ids.len,
	      "parameters come before the kernel body");
	CHECK(b, "ta_build_scalar", name_ok(b, "ta_build_scalar", name) && dtype_ok(t), "bad name or dtype");
	int32_t v = new_var(b, name, V_PARAM, (DType)t);
	CHECK(b, "ta_build_scalar", v >= 0 && !vec_push(&b->args, ((KernelArg){v, -1})), "out of memory");
	return v;
}

TA_API ta_status ta_build_grid(ta_builder *b, int n, const ta_expr *dims)
{
	CHECKS(b, "ta_build_grid", b->in_kernel && n >= 1 && n <= 3 && dims, "grid has 1 to 3 dimensions");
	for (int i = 0; i < n; i++) {
		CHECKS(b, "ta_build_grid", expr_ok(b, dims[i]), "invalid expression handle");
		b->k.grid[i] = dims[i];
	}
	b->k.ngrid = n;
	return TA_OK;
}

TA_API ta_expr ta_build_int(ta_builder *b, int64_t v)
{
	CHECK(b, "ta_build_int", true, "");
	return mkexpr(b, (Expr){.kind = E_INT, .ival = v, .var = -1, .buf = -1, .b = -1});
}

TA_API ta_expr ta_build_float(ta_builder *b, double v)
{
	CHECK(b, "ta_build_float", true, "");
	return mkexpr(b, (Expr){.kind = E_FLOAT, .fval = v, .var = -1, .buf = -1, .b = -1});
}

TA_API ta_expr ta_build_bool(ta_builder *b, int v)
{
	CHECK(b, "ta_build_bool", true, "");
	return mkexpr(b, (Expr){.kind = E_BOOL, .ival = v != 0, .var = -1, .buf = -1, .b = -1});
}

TA_API ta_expr ta_build_ref(ta_builder *b, ta_var v)
{
	CHECK(b, "ta_build_ref", v >= 0 && (size_t)v < b->m->vars.len, "invalid variable handle");
	return mkexpr(b, (Expr){.kind = E_VAR, .var = v, .buf = -1, .b = -1});
}

TA_API ta_expr ta_build_name(ta_builder *b, const char *name)
{
	CHECK(b, "ta_build_name", name != NULL, "NULL name");
	int32_t v = lookup(b, name);
	CHECK(b, "ta_build_name", v >= 0, "no variable of that name is in scope");
	return ta_build_ref(b, v);
}

static int32_t *expr_list(ta_builder *b, const char *fn, int n, const ta_expr *ids)
{
	for (int i = 0; i < n; i++)
		if (!expr_ok(b, ids[i])) {
			fail(b, fn, "invalid expression handle");
			return NULL;
		}
	return copy_ids(b, ids, (size_t)n);
}

TA_API ta_expr ta_build_load(ta_builder *b, ta_buf buf, int n, const ta_expr *idx)
{
	CHECK(b, "ta_build_load", buf_ok(b, buf) && (n >= 1 ? idx != NULL : n == 0 && b->m->bufs.data[buf].var),
	      "invalid buffer or index list (n = 0 reads a var)");
	ta_expr zero = n ? -1 : ta_build_int(b, 0);
	Expr e = {.kind = E_LOAD, .buf = buf, .var = -1, .b = -1, .nargs = n ? n : 1};
	e.args = expr_list(b, "ta_build_load", n ? n : 1, n ? idx : &zero);
	CHECK(b, "ta_build_load", e.args, "invalid index");
	return mkexpr(b, e);
}

TA_API ta_expr ta_build_op(ta_builder *b, ta_op op, int n, const ta_expr *args)
{
	CHECK(b, "ta_build_op", op >= TA_OP_NEG && op <= TA_OP_SHFL_IDX && args, "unknown operator");
	bool unary = op <= TA_OP_NOT || op == TA_OP_BNOT;
	bool binary = (op >= TA_OP_ADD && op <= TA_OP_OR) || (op >= TA_OP_BAND && op <= TA_OP_SHR);
	int want = unary ? 1 : binary ? 2 : (op == TA_OP_SELECT || op == TA_OP_CLAMP || op == TA_OP_IF_THEN_ELSE) ? 3
	           : (op == TA_OP_MIN || op == TA_OP_MAX || op == TA_OP_CEILDIV || op == TA_OP_POW || op == TA_OP_FMOD ||
	                                                                                   op >= TA_OP_SHFL_XOR) ? 2 : 1;
	CHECK(b, "ta_build_op", n == want, "wrong number of operands");
	for (int i = 0; i < n; i++)
		CHECK(b, "ta_build_op", expr_ok(b, args[i]), "invalid expression handle");
	Expr e = {.op = (uint8_t)op, .var = -1, .buf = -1, .a = args[0], .b = -1};
	if (unary) {
		e.kind = E_UNARY;
	} else if (binary) {
		e.kind = E_BINARY;
		e.b = args[1];
	} else {
		e.kind = E_CALL;
		e.nargs = n;
		e.args = copy_ids(b, args, (size_t)n);
	}
	return mkexpr(b, e);
}

TA_API ta_expr ta_build_cast(ta_builder *b, ta_dtype t, ta_expr x)
{
	CHECK(b, "ta_build_cast", dtype_ok(t) && expr_ok(b, x), "bad dtype or expression");
	return mkexpr(b, (Expr){.kind = E_CAST, .cast_to = (uint8_t)t, .a = x, .var = -1, .buf = -1, .b = -1});
}

TA_API ta_expr ta_build_reinterpret(ta_builder *b, ta_dtype t, ta_expr x)
{
	CHECK(b, "ta_build_reinterpret", dtype_ok(t) && expr_ok(b, x), "bad dtype or expression");
	return mkexpr(b, (Expr){.kind = E_CAST, .op = 1, .cast_to = (uint8_t)t, .a = x, .var = -1, .buf = -1, .b = -1});
}

TA_API ta_buf ta_build_alloc(ta_builder *b, const char *name, ta_scope s, ta_dtype t, int rank, const int64_t *shape)
{
	CHECK(b, "ta_build_alloc", name_ok(b, "ta_build_alloc", name) && s >= TA_SHARED && s <= TA_LOCAL &&
	      dtype_ok(t) && rank >= 1 && rank <= IR_MAX_RANK && shape, "bad name, scope, dtype or shape");
	for (int d = 0; d < rank; d++)
		CHECK(b, "ta_build_alloc", shape[d] >= 1 && shape[d] <= INT32_MAX, "dimension out of range (1 to 2147483647)");
	Buffer buf = {.name = dup(b, name), .scope = (uint8_t)s, .dtype = (uint8_t)t, .rank = (uint8_t)rank, .param = -1};
	for (int d = 0; d < rank; d++)
		buf.shape[d] = ir_int(b->m, shape[d], (SrcPos){0, 0});
	int32_t id = ir_add_buf(b->m, buf);
	CHECK(b, "ta_build_alloc", id >= 0, "out of memory");
	Stmt st = stmt(S_ALLOC);
	st.buf = id;
	return push_stmt(b, "ta_build_alloc", st) < 0 ? -1 : id;
}

TA_API ta_var ta_build_let(ta_builder *b, const char *name, ta_expr value)
{
	CHECK(b, "ta_build_let", name_ok(b, "ta_build_let", name) && expr_ok(b, value), "bad name or value");
	Stmt st = stmt(S_LET);
	st.value = value;
	if (push_stmt(b, "ta_build_let", st) < 0)
		return -1;
	int32_t v = new_var(b, name, V_LET, DT_VOID);
	b->m->stmts.data[b->m->stmts.len - 1].var = v;
	return v;
}

static bool region(ta_builder *b, const char *fn, Region *r, ta_buf buf, int n, const ta_expr *idx)
{
	if (!buf_ok(b, buf) || n < 0 || (n && !idx)) {
		fail(b, fn, "invalid buffer or offsets");
		return false;
	}
	r->buf = buf;
	r->nidx = n;
	r->idx = n ? expr_list(b, fn, n, idx) : NULL;
	return !b->failed;
}

TA_API ta_status ta_build_store(ta_builder *b, ta_buf buf, int n, const ta_expr *idx, ta_expr value)
{
	CHECKS(b, "ta_build_store", expr_ok(b, value) && (n >= 1 || (n == 0 && buf_ok(b, buf) && b->m->bufs.data[buf].var)),
	       "bad value or index (n = 0 assigns a var)");
	Stmt st = stmt(S_STORE);
	st.value = value;
	ta_expr zero = n ? -1 : ta_build_int(b, 0);
	if (!region(b, "ta_build_store", &st.dst, buf, n ? n : 1, n ? idx : &zero))
		return TA_ERR_INVALID;
	return push_stmt(b, "ta_build_store", st) < 0 ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_copy(ta_builder *b, ta_buf src, int nsrc, const ta_expr *src_off, ta_buf dst, int ndst,
                               const ta_expr *dst_off)
{
	CHECKS(b, "ta_build_copy", true, "");
	Stmt st = stmt(S_COPY);
	if (!region(b, "ta_build_copy", &st.src, src, nsrc, src_off) ||
	    !region(b, "ta_build_copy", &st.dst, dst, ndst, dst_off))
		return TA_ERR_INVALID;
	return push_stmt(b, "ta_build_copy", st) < 0 ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_gemm(ta_builder *b, ta_buf a, ta_buf bm, ta_buf c, int flags)
{
	CHECKS(b, "ta_build_gemm", !(flags & ~7), "unknown flags");
	Stmt st = stmt(S_GEMM);
	if (!region(b, "ta_build_gemm", &st.src, a, 0, NULL) || !region(b, "ta_build_gemm", &st.src2, bm, 0, NULL) ||
	    !region(b, "ta_build_gemm", &st.dst, c, 0, NULL))
		return TA_ERR_INVALID;
	st.flag_a = flags & TA_GEMM_TRANSPOSE_A;
	st.flag_b = flags & TA_GEMM_TRANSPOSE_B;
	st.flag_clear = flags & TA_GEMM_CLEAR;
	return push_stmt(b, "ta_build_gemm", st) < 0 ? TA_ERR_INVALID : TA_OK;
}

static ta_status fill_like(ta_builder *b, const char *fn, StmtKind k, ta_buf buf, ta_expr value)
{
	CHECKS(b, fn, k == S_CLEAR || expr_ok(b, value), "invalid value");
	Stmt st = stmt(k);
	st.value = k == S_FILL ? value : -1;
	if (!region(b, fn, &st.dst, buf, 0, NULL))
		return TA_ERR_INVALID;
	return push_stmt(b, fn, st) < 0 ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_clear(ta_builder *b, ta_buf buf) { return fill_like(b, "ta_build_clear", S_CLEAR, buf, -1); }
TA_API ta_status ta_build_fill(ta_builder *b, ta_buf buf, ta_expr v) { return fill_like(b, "ta_build_fill", S_FILL, buf, v); }

static ta_status scan_like(ta_builder *b, const char *fn, StmtKind k, int sub, ta_buf src, ta_buf dst, int dim,
                           bool flag)
{
	CHECKS(b, fn, dim >= -1, "dim must be -1 (last) or a dimension index");
	Stmt st = stmt(k);
	st.sub = (uint8_t)sub;
	st.dim = dim;
	if (k == S_REDUCE)
		st.flag_clear = flag;
	else
		st.flag_reverse = flag;
	if (!region(b, fn, &st.src, src, 0, NULL) || !region(b, fn, &st.dst, dst, 0, NULL))
		return TA_ERR_INVALID;
	return push_stmt(b, fn, st) < 0 ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_reduce(ta_builder *b, ta_reduce op, ta_buf src, ta_buf dst, int dim, int clear)
{
	CHECKS(b, "ta_build_reduce", op >= TA_REDUCE_SUM && op <= TA_REDUCE_ABSMAX, "unknown reduction");
	return scan_like(b, "ta_build_reduce", S_REDUCE, op, src, dst, dim, clear != 0);
}

TA_API ta_status ta_build_cumsum(ta_builder *b, ta_buf src, ta_buf dst, int dim, int reverse)
{
	return scan_like(b, "ta_build_cumsum", S_CUMSUM, 0, src, dst, dim, reverse != 0);
}

TA_API ta_status ta_build_atomic_add(ta_builder *b, ta_buf dst, int n, const ta_expr *idx, ta_buf src, ta_expr value)
{
	CHECKS(b, "ta_build_atomic_add", value < 0 || expr_ok(b, value), "invalid value");
	Stmt st = stmt(S_ATOMIC_ADD);
	if (!region(b, "ta_build_atomic_add", &st.dst, dst, n, idx))
		return TA_ERR_INVALID;
	if (value >= 0)
		st.value = value;
	else if (!region(b, "ta_build_atomic_add", &st.src, src, 0, NULL))
		return TA_ERR_INVALID;
	return push_stmt(b, "ta_build_atomic_add", st) < 0 ? TA_ERR_INVALID : TA_OK;
}

/* Region entries as Region.idx / Region.hi (REGION_POINT, REGION_ALL or the
 * end expression); hi stays NULL without ranges, like the parser's. */
static bool region_ix(ta_builder *b, const char *fn, Region *r, ta_buf buf, int n, const ta_index *ix)
{
	if (!buf_ok(b, buf) || n < 0 || n > IR_MAX_RANK || (n && !ix)) {
		fail(b, fn, "invalid buffer or index list");
		return false;
	}
	r->buf = buf;
	r->nidx = n;
	if (!n)
		return true;
	int32_t lo[IR_MAX_RANK], hi[IR_MAX_RANK];
	bool ranges = false;
	for (int d = 0; d < n; d++) {
		bool all = ix[d].kind == TA_INDEX_ALL, at = ix[d].kind == TA_INDEX_AT, rg = ix[d].kind == TA_INDEX_RANGE;
		if (!(all || at || rg) || (!all && !expr_ok(b, ix[d].lo)) || (rg && !expr_ok(b, ix[d].hi))) {
			fail(b, fn, "bad index: TA_INDEX_AT (lo), TA_INDEX_RANGE (lo : hi) or TA_INDEX_ALL (':')");
			return false;
		}
		lo[d] = all ? ta_build_int(b, 0) : ix[d].lo;
		hi[d] = all ? REGION_ALL : at ? REGION_POINT : ix[d].hi;
		ranges |= !at;
	}
	r->idx = copy_ids(b, lo, (size_t)n);
	r->hi = ranges ? copy_ids(b, hi, (size_t)n) : NULL;
	return !b->failed;
}

TA_API ta_status ta_build_copy_region(ta_builder *b, ta_buf src, int nsrc, const ta_index *src_idx, ta_buf dst,
                                      int ndst, const ta_index *dst_idx)
{
	CHECKS(b, "ta_build_copy_region", true, "");
	Stmt st = stmt(S_COPY);
	if (!region_ix(b, "ta_build_copy_region", &st.src, src, nsrc, src_idx) ||
	    !region_ix(b, "ta_build_copy_region", &st.dst, dst, ndst, dst_idx))
		return TA_ERR_INVALID;
	return push_stmt(b, "ta_build_copy_region", st) < 0 ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_atomic(ta_builder *b, ta_atomic op, ta_buf dst, int n, const ta_index *idx, ta_buf src,
                                 ta_expr value)
{
	CHECKS(b, "ta_build_atomic", op >= TA_ATOMIC_ADD && op <= TA_ATOMIC_MIN && (value < 0 || expr_ok(b, value)),
	       "unknown atomic or invalid value");
	Stmt st = stmt(S_ATOMIC_ADD);
	st.sub = (uint8_t)op;
	if (!region_ix(b, "ta_build_atomic", &st.dst, dst, n, idx))
		return TA_ERR_INVALID;
	if (value >= 0)
		st.value = value;
	else if (!region(b, "ta_build_atomic", &st.src, src, 0, NULL))
		return TA_ERR_INVALID;
	return push_stmt(b, "ta_build_atomic", st) < 0 ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_buf ta_build_var(ta_builder *b, const char *name, ta_dtype t, ta_expr init)
{
	CHECK(b, "ta_build_var", name_ok(b, "ta_build_var", name) && (t == 0 || dtype_ok(t)) && (init < 0 || expr_ok(b, init)) &&
	      (t != 0 || init >= 0), "bad name, dtype or initial value (a var needs a dtype or an initial value)");
	Buffer buf = {.name = dup(b, name), .scope = SCOPE_LOCAL, .dtype = (uint8_t)t, .rank = 1, .param = -1, .var = true};
	buf.shape[0] = ir_int(b->m, 1, (SrcPos){0, 0});
	int32_t id = buf.shape[0] < 0 ? -1 : ir_add_buf(b->m, buf);
	CHECK(b, "ta_build_var", id >= 0, "out of memory");
	Stmt st = stmt(S_ALLOC);
	st.buf = id;
	if (push_stmt(b, "ta_build_var", st) < 0)
		return -1;
	if (init >= 0 && ta_build_store(b, id, 0, NULL, init) != TA_OK)
		return -1;
	return id;
}

TA_API ta_buf ta_build_view(ta_builder *b, const char *name, ta_buf tensor, int rank, const ta_expr *dims)
{
	CHECK(b, "ta_build_view", name_ok(b, "ta_build_view", name) && buf_ok(b, tensor) &&
	      b->m->bufs.data[tensor].scope == SCOPE_GLOBAL && rank >= 1 && rank <= IR_MAX_RANK && dims,
	      "bad name, tensor (a tensor parameter or a view of one) or rank");
	const Buffer *tb = &b->m->bufs.data[tensor];
	int32_t viewed = tb->view ? tb->viewed : tensor;
	Buffer buf = {.name = dup(b, name), .scope = SCOPE_GLOBAL, .dtype = b->m->bufs.data[viewed].dtype,
	              .rank = (uint8_t)rank, .param = b->m->bufs.data[viewed].param, .view = true, .viewed = viewed};
	for (int d = 0; d < rank; d++) {
		CHECK(b, "ta_build_view", expr_ok(b, dims[d]), "invalid dimension expression");
		buf.shape[d] = dims[d];
	}
	int32_t id = ir_add_buf(b->m, buf);
	CHECK(b, "ta_build_view", id >= 0, "out of memory");
	Stmt st = stmt(S_ALLOC);
	st.buf = id;
	return push_stmt(b, "ta_build_view", st) < 0 ? -1 : id;
}

TA_API ta_status ta_build_threads(ta_builder *b, int x, int y, int z)
{
	CHECKS(b, "ta_build_threads", b->in_kernel && x >= 1 && y >= 1 && z >= 1 && (int64_t)x * y * z <= 1024,
	       "a block has 1 to 1024 threads (x * y * z)");
	b->k.threads = x * y * z;
	b->k.ntdim = z > 1 ? 3 : y > 1 ? 2 : 1;
	b->k.tdim[0] = x;
	b->k.tdim[1] = y;
	b->k.tdim[2] = z;
	return TA_OK;
}

TA_API ta_status ta_build_barrier(ta_builder *b)
{
	CHECKS(b, "ta_build_barrier", true, "");
	return push_stmt(b, "ta_build_barrier", stmt(S_BARRIER)) < 0 ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_use_swizzle(ta_builder *b, ta_expr panel, ta_raster order)
{
	CHECKS(b, "ta_build_use_swizzle", b->in_kernel && b->frames.len == 1 && !b->k.raster,
	       "use_swizzle goes once at the top level of a kernel body");
	CHECKS(b, "ta_build_use_swizzle", expr_ok(b, panel) && (order == TA_RASTER_ROW || order == TA_RASTER_COL),
	       "bad panel size or order");
	b->k.raster = (uint8_t)order;
	b->k.raster_panel = panel;
	b->k.raster_pos = (SrcPos){0, 0};
	return TA_OK;
}

static int open_block(ta_builder *b, const char *fn, int32_t sid, bool els)
{
	if (b->frames.len > IR_MAX_HEIGHT) { /* the parser's block limit, checked before printing */
		fail(b, fn, "blocks nested too deeply (more than 256 levels)");
		return -1;
	}
	Frame f = {.stmt = sid, .els = els, .names = b->names.len};
	if (vec_push(&b->frames, f)) {
		fail(b, fn, "out of memory");
		return -1;
	}
	return 0;
}

TA_API ta_var ta_build_for(ta_builder *b, ta_loop kind, const char *var, ta_expr lo, ta_expr hi, int stages)
{
	CHECK(b, "ta_build_for", kind >= TA_SERIAL && kind <= TA_VECTORIZED && name_ok(b, "ta_build_for", var) &&
	      expr_ok(b, lo) && expr_ok(b, hi),
	      "bad loop kind, variable or bounds");
	Stmt st = stmt(S_FOR);
	st.vectorized = kind == TA_VECTORIZED;
	st.sub = (uint8_t)(kind == TA_VECTORIZED ? LOOP_UNROLL : kind);
	st.lo = lo;
	st.hi = hi;
	st.stages = kind == TA_PIPELINED ? stages : 0;
	int32_t sid = push_stmt(b, "ta_build_for", st);
	if (sid < 0 || open_block(b, "ta_build_for", sid, false))
		return -1;
	int32_t v = new_var(b, var, V_LOOP, DT_I32);
	b->m->stmts.data[sid].var = v;
	return v;
}

TA_API ta_var ta_build_parallel(ta_builder *b, int n, const char *const *vars, const ta_expr *extents)
{
	CHECK(b, "ta_build_parallel", n >= 1 && n <= IR_MAX_RANK && vars && extents, "bad variables or extents");
	Stmt st = stmt(S_PARALLEL);
	st.nvars = n;
	st.extents = expr_list(b, "ta_build_parallel", n, extents);
	CHECK(b, "ta_build_parallel", st.extents, "invalid extent");
	int32_t sid = push_stmt(b, "ta_build_parallel", st);
	if (sid < 0 || open_block(b, "ta_build_parallel", sid, false))
		return -1;
	int32_t ids[IR_MAX_RANK];
	for (int i = 0; i < n; i++) {
		CHECK(b, "ta_build_parallel", name_ok(b, "ta_build_parallel", vars[i]), "bad variable name");
		ids[i] = new_var(b, vars[i], V_LOOP, DT_I32);
		if (ids[i] < 0)
			return -1;
	}
	b->m->stmts.data[sid].vars = copy_ids(b, ids, (size_t)n);
	return ids[0];
}

TA_API ta_status ta_build_if(ta_builder *b, ta_expr cond)
{
	CHECKS(b, "ta_build_if", expr_ok(b, cond), "invalid condition");
	Stmt st = stmt(S_IF);
	st.value = cond;
	int32_t sid = push_stmt(b, "ta_build_if", st);
	return sid < 0 || open_block(b, "ta_build_if", sid, false) ? TA_ERR_INVALID : TA_OK;
}

/* Moves the innermost frame's statements into its owner's block. */
static int close_block(ta_builder *b, const char *fn)
{
	Frame *f = &b->frames.data[b->frames.len - 1];
	Stmt *s = &b->m->stmts.data[f->stmt];
	Block *blk = f->els ? &s->els : &s->body;
	blk->n = (int32_t)f->ids.len;
	blk->ids = copy_ids(b, f->ids.data, f->ids.len);
	b->names.len = f->names;
	vec_free(&f->ids);
	b->frames.len--;
	return b->failed ? -1 : 0;
}

TA_API ta_status ta_build_else(ta_builder *b)
{
	CHECKS(b, "ta_build_else", b->frames.len > 1, "no open block");
	Frame *f = &b->frames.data[b->frames.len - 1];
	CHECKS(b, "ta_build_else", b->m->stmts.data[f->stmt].kind == S_IF && !f->els, "else without an open if");
	int32_t sid = f->stmt;
	if (close_block(b, "ta_build_else"))
		return TA_ERR_INVALID;
	return open_block(b, "ta_build_else", sid, true) ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_end(ta_builder *b)
{
	CHECKS(b, "ta_build_end", b->frames.len > 1, "no open block to end");
	return close_block(b, "ta_build_end") ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_build_finish(ta_builder *b, ta_module **out)
{
	if (!b || !out) {
		ta_build_abort(b);
		return TA_ERR_INVALID;
	}
	*out = NULL;
	close_kernel(b);
	if (!b->failed && !b->m->kernels.len)
		fail(b, "ta_build_finish", "no kernel was built");
	ta_status st = TA_ERR_INVALID;
	if (!b->failed) {
		PrintJob pj = {b->m, {0}};
		bool nothread = run_with_stack_for(ir_nesting(b->m), print_job, &pj) != 0;
		StrBuf sb = pj.sb;
		if (nothread) {
			st = ta_deep_failed(b->ctx);
		} else if (sb.oom) {
			st = TA_ERR_NOMEM;
		} else {
			Module *m = ta_frontend(b->ctx, b->name, sb.buf ? sb.buf : "", sb.len, &st);
			if (m && !(*out = ta_module_wrap(m))) {
				ir_module_free(m);
				st = TA_ERR_NOMEM;
			}
		}
		sb_free(&sb);
	}
	ta_build_abort(b);
	return st;
}
