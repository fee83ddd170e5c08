/* interp.c — the reference interpreter (see interp.h).
 *
 * A tree walker over the verified IR.  Scalars are a tagged pair chosen by
 * the expression's dtype: integers and bool in .i (already wrapped to the
 * type's width), floats in .f (always a value the dtype can hold exactly).
 * Buffers hold their real byte format, so every store rounds exactly as the
 * hardware's store of that dtype would.
 *
 * Block-level statements run once per block.  A `local` buffer has one
 * block-level value set; each parallel iteration and each thread of a
 * per-thread if works on a private copy made from it, discarded afterwards.
 * We implement that with two storages per local and a `cur` pointer that
 * every access goes through.
 */
#include "interp.h"

#include <math.h>
#include <stdio.h>

#include "dtype.h"

typedef struct {
	int64_t i;
	double f;
} Val;

typedef struct {
	uint8_t *cur;   /* where accesses go: block storage or the private copy */
	uint8_t *block; /* block-level contents (global: the caller's array) */
	uint8_t *priv;  /* locals only: the private copy */
	int64_t dims[IR_MAX_RANK];
	int64_t elems;
	int rank, esize;
	DType dt;
	bool global;
	double *slack;  /* interp_run_slack: {sum of |values|, adds} per element of float atomic adds, or NULL */
} BufState;

/* INTERP_RACES: the iteration (or thread) that last stored to each element
 * of a shared, fragment or global buffer during the current parallel loop or
 * per-thread if.  An open-addressing table keyed by (storage, offset); a slot
 * counts only when its gen is the current region's, so starting a region is
 * O(1) and stale slots are free for reuse. */
typedef struct {
	const uint8_t *base;
	int64_t off;
	uint64_t gen, tag; /* region and iteration of the last store */
} RaceSlot;
typedef struct {
	RaceSlot *slot;
	size_t cap, used; /* used: slots of the current gen */
	uint64_t gen, tag; /* current region and iteration (unique over the run) */
	bool on;           /* inside a region */
} RaceLog;

/* A per-thread if whose body contains a warp shuffle runs its threads in
 * lockstep, statement by statement (sim_*): each thread has its own copy of
 * the variables and of the locals, switched in before it executes. */
typedef struct {
	int32_t expr;  /* a shuffle expression */
	Val *val;      /* its result per thread */
} ShflVal;
typedef struct {
	int T, nvars;
	Val *vars;       /* T x nvars */
	uint8_t **priv;  /* per local (in Interp.locals order): T copies */
	uint8_t *broken; /* per thread: a break is leaving the innermost loop */
	int cur;         /* the thread switched in, -1: none */
	VEC(ShflVal) shfl; /* the shuffles of the statement being executed */
	uint8_t *has_shfl; /* by stmt id: 1 when its subtree contains a shuffle, 2 when not, 0 unknown */
} Lockstep;

typedef struct {
	const Module *m;
	const Kernel *k;
	Diag *d;
	Val *vars;       /* by var id */
	BufState *bufs;  /* by buffer id */
	VEC(int32_t) locals; /* local buffers of the kernel */
	int64_t blk[3];  /* current block index, for messages */
	bool private_mode; /* inside a parallel iteration or per-thread body */
	bool thread_mode;  /* tx is defined */
	bool failed;
	bool breaking;     /* a break is leaving the innermost loop */
	uint64_t steps, max_steps; /* work done and its bound (interp_run_bounded) */
	bool poison_alt;   /* interp_run_poisoned: the second fill pattern */
	bool reverse;      /* interp_run_poisoned: blocks, parallel iterations, threads in reverse order */
	bool races;        /* interp_run_poisoned: INTERP_RACES */
	RaceLog rl;
	Lockstep ls;       /* per-thread ifs with warp shuffles */
} Interp;

#define EX(id) (&in->m->exprs.data[id])
#define ST(id) (&in->m->stmts.data[id])

static void rt_error(Interp *in, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rt_error(Interp *in, SrcPos pos, const char *fmt, ...)
{
	if (in->failed) /* report only the first error of a run */
		return;
	in->failed = true;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_at(in->d, DIAG_ERROR, &in->m->src, pos, "%s (in block (%lld, %lld, %lld))", msg,
	        (long long)in->blk[0], (long long)in->blk[1], (long long)in->blk[2]);
}

/* Charges n steps of work (a statement, a loop iteration, a block, an
 * element of a tile operation) against the run's bound. */
static bool charge(Interp *in, uint64_t n, SrcPos pos)
{
	if (in->failed) /* stop the loops that test only the bound after an error */
		return false;
	if (n <= in->max_steps - in->steps) {
		in->steps += n;
		return true;
	}
	rt_error(in, pos, "work bound exceeded: more than %llu interpreter steps (raise it with --max-steps)",
		 (unsigned long long)in->max_steps);
	return false;
}

/* ---- scalar semantics ------------------------------------------------ */

static bool is_float(DType t) { return dtype_is_float(t); }

/* The cast rules of the IR: v of type from, converted to type to. */
static Val convert(Val v, DType from, DType to)
{
	Val r = {0, 0};
	if (from == to)
		return v;
	bool ff = is_float(from);
	if (to == DT_BOOL)
		r.i = ff ? v.f != 0 : v.i != 0;
	else if (is_float(to))
		r.f = ff ? dt_round_double(to, v.f) : dt_int_to_float(to, v.i);
	else
		r.i = ff ? dt_sat_int(to, v.f) : dt_wrap_int(to, v.i);
	return r;
}

/* reinterpret(to, v): v's bits in its type `from` (same width) read as `to`. */
static Val reinterpret(Val v, DType from, DType to)
{
	uint8_t bits[8] = {0};
	if (is_float(from))
		dt_store_double(from, bits, v.f);
	else
		dt_store_int(from, bits, v.i);
	Val r = {0, 0};
	if (is_float(to))
		r.f = dt_to_double(to, bits);
	else
		r.i = dt_to_int(to, bits);
	return r;
}

static Val load_elem(const BufState *b, int64_t off)
{
	Val v = {0, 0};
	if (is_float(b->dt))
		v.f = dt_get_double(b->dt, b->cur, off);
	else
		v.i = dt_get_int(b->dt, b->cur, off);
	return v;
}

/* Stores v (of type vt) converting it to the buffer's dtype. */
static void store_elem(BufState *b, int64_t off, Val v, DType vt)
{
	if (is_float(vt))
		dt_set_double(b->dt, b->cur, off, v.f);
	else
		dt_set_int(b->dt, b->cur, off, v.i);
}

/* ---- INTERP_RACES ---------------------------------------------------------- */

static void race_region(Interp *in, bool on)
{
	in->rl.on = in->races && on;
	in->rl.gen++;
	in->rl.used = 0;
}

static RaceSlot *race_find(RaceLog *rl, const uint8_t *base, int64_t off)
{
	size_t h = (size_t)(((uintptr_t)base ^ (uint64_t)off * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull >> 17);
	for (size_t i = h & (rl->cap - 1);; i = (i + 1) & (rl->cap - 1)) {
		RaceSlot *sl = &rl->slot[i];
		if (sl->gen != rl->gen || (sl->base == base && sl->off == off))
			return sl;
	}
}

/* Element off of b is read (store: false) or stored, changing its value
 * when changed: a read of what another iteration of the region stored, or a
 * store that changes what another stored, makes the result depend on the
 * order of the iterations (undefined: parallel iterations must not
 * conflict).  Locals are private to the iteration and never conflict. */
static void race_access(Interp *in, const BufState *b, int64_t off, bool store, bool changed, SrcPos pos,
                        const char *name)
{
	RaceLog *rl = &in->rl;
	if (!rl->on || b->priv)
		return;
	if (2 * (rl->used + 1) > rl->cap) { /* grow: keep the current region's slots */
		size_t cap = rl->cap ? 2 * rl->cap : 1024;
		RaceSlot *old = rl->slot, *ns = calloc(cap, sizeof *ns);
		if (!ns) {
			rt_error(in, pos, "out of memory");
			return;
		}
		size_t ocap = rl->cap;
		rl->slot = ns;
		rl->cap = cap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].gen == rl->gen)
				*race_find(rl, old[i].base, old[i].off) = old[i];
		free(old);
	}
	RaceSlot *sl = race_find(rl, b->block, off);
	bool other = sl->gen == rl->gen && sl->tag != rl->tag;
	if (other && (!store || changed)) {
		rt_error(in, pos, "race: parallel iterations (or threads) conflict on %s element %lld (undefined: the result depends on their order)",
		         name, (long long)off);
		return;
	}
	if (!store)
		return;
	if (sl->gen != rl->gen)
		rl->used++;
	*sl = (RaceSlot){b->block, off, rl->gen, rl->tag};
}

/* Python floor division; b != 0.  INT64_MIN // -1 wraps. */
static int64_t floordiv(int64_t a, int64_t b)
{
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	int64_t q = a / b;
	if (a % b != 0 && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static int64_t floormod(int64_t a, int64_t b)
{
	if (b == -1)
		return 0;
	int64_t r = a % b;
	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

/* min/max like fminf/fmaxf: a NaN operand yields the other one; -0 < +0. */
static double fmin_ir(double a, double b)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return (a < b || (a == b && signbit(a))) ? a : b;
}

static double fmax_ir(double a, double b)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return (a > b || (a == b && !signbit(a))) ? a : b;
}

/* a op b for op in + - * / min max, in the arithmetic of type t: f64 in
 * double, everything else in f32 rounded back to t; integers wrap. */
static Val arith(Op op, DType t, Val a, Val b)
{
	Val r = {0, 0};
	if (is_float(t)) {
		if (op == OP_MIN || op == OP_MAX) {
			r.f = op == OP_MIN ? fmin_ir(a.f, b.f) : fmax_ir(a.f, b.f);
			return r;
		}
		if (t == DT_F64) {
			switch (op) {
			case OP_ADD: r.f = a.f + b.f; break;
			case OP_SUB: r.f = a.f - b.f; break;
			case OP_MUL: r.f = a.f * b.f; break;
			default: r.f = a.f / b.f; break;
			}
			return r;
		}
		float x = (float)a.f, y = (float)b.f, z;
		switch (op) {
		case OP_ADD: z = x + y; break;
		case OP_SUB: z = x - y; break;
		case OP_MUL: z = x * y; break;
		default: z = x / y; break;
		}
		r.f = t == DT_F32 ? z : dt_round_double(t, z);
		return r;
	}
	uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
	switch (op) {
	case OP_ADD: r.i = dt_wrap_int(t, (int64_t)(x + y)); break;
	case OP_SUB: r.i = dt_wrap_int(t, (int64_t)(x - y)); break;
	case OP_MUL: r.i = dt_wrap_int(t, (int64_t)(x * y)); break;
	case OP_MIN: r.i = TA_MIN(a.i, b.i); break;
	case OP_MAX: r.i = TA_MAX(a.i, b.i); break;
	default: break;
	}
	return r;
}

static Val absval(DType t, Val a)
{
	if (is_float(t))
		a.f = fabs(a.f);
	else if (a.i < 0)
		a.i = dt_wrap_int(t, (int64_t)(0 - (uint64_t)a.i));
	return a;
}

static bool compare(Op op, DType t, Val a, Val b)
{
	if (is_float(t)) {
		switch (op) {
		case OP_EQ: return a.f == b.f;
		case OP_NE: return a.f != b.f;
		case OP_LT: return a.f < b.f;
		case OP_LE: return a.f <= b.f;
		case OP_GT: return a.f > b.f;
		default: return a.f >= b.f;
		}
	}
	switch (op) {
	case OP_EQ: return a.i == b.i;
	case OP_NE: return a.i != b.i;
	case OP_LT: return a.i < b.i;
	case OP_LE: return a.i <= b.i;
	case OP_GT: return a.i > b.i;
	default: return a.i >= b.i;
	}
}

static double transcendental(Op op, double x)
{
	switch (op) {
	case OP_EXP: return exp(x);
	case OP_EXP2: return exp2(x);
	case OP_LOG: return log(x);
	case OP_LOG2: return log2(x);
	case OP_SQRT: return sqrt(x);
	case OP_RSQRT: return 1.0 / sqrt(x);
	case OP_FLOOR: return floor(x);
	case OP_CEIL: return ceil(x);
	case OP_ROUND: return nearbyint(x); /* half to even (the default rounding mode) */
	case OP_SIN: return sin(x);
	case OP_COS: return cos(x);
	case OP_ERF: return erf(x);
	case OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
	default: return tanh(x);
	}
}

/* Python's float %: fmod, moved to the divisor's sign; a zero result takes
 * the divisor's sign too. */
static double floatmod(double a, double b)
{
	double r = fmod(a, b);
	if (r != 0) {
		if ((b < 0) != (r < 0))
			r += b;
	} else {
		r = copysign(0.0, b);
	}
	return r;
}

/* ---- expressions ------------------------------------------------------ */

static Val eval(Interp *in, int32_t id);

/* Flat element offset of buffer b at the index expressions idx; reports an
 * out-of-bounds index at pos. */
static bool elem_offset(Interp *in, const BufState *b, const char *name, const int32_t *idx, SrcPos pos,
                        int64_t *off)
{
	int64_t o = 0;
	for (int d = 0; d < b->rank; d++) {
		int64_t i = eval(in, idx[d]).i;
		if (in->failed)
			return false;
		if (i < 0 || i >= b->dims[d]) {
			rt_error(in, pos, "index %lld is out of bounds for dimension %d of '%s' (size %lld)", (long long)i,
			         d, name, (long long)b->dims[d]);
			return false;
		}
		o = o * b->dims[d] + i;
	}
	*off = o;
	return true;
}

static Val eval(Interp *in, int32_t id)
{
	const Expr *e = EX(id);
	DType t = (DType)e->type;
	Val r = {0, 0};
	if (in->failed)
		return r;
	switch ((ExprKind)e->kind) {
	case E_INT:
		if (is_float(t))
			r.f = dt_int_to_float(t, e->ival);
		else
			r.i = dt_wrap_int(t, e->ival);
		return r;
	case E_FLOAT:
		r.f = dt_round_double(t, e->fval);
		return r;
	case E_BOOL: r.i = e->ival != 0; return r;
	case E_VAR: return in->vars[e->var];
	case E_LOAD: {
		const BufState *b = &in->bufs[e->buf];
		int64_t off;
		if (!elem_offset(in, b, in->m->bufs.data[e->buf].name, e->args, e->pos, &off))
			return r;
		race_access(in, b, off, false, false, e->pos, in->m->bufs.data[e->buf].name);
		return load_elem(b, off);
	}
	case E_UNARY: {
		Val a = eval(in, e->a);
		if (e->op == OP_NOT)
			r.i = !a.i;
		else if (e->op == OP_BNOT)
			r.i = dt_wrap_int(t, ~a.i);
		else if (is_float(t))
			r.f = -a.f;
		else
			r.i = dt_wrap_int(t, (int64_t)(0 - (uint64_t)a.i));
		return r;
	}
	case E_BINARY: {
		DType ta = (DType)EX(e->a)->type;
		Val a = eval(in, e->a), b = eval(in, e->b);
		if (in->failed)
			return r;
		switch ((Op)e->op) {
		case OP_AND: r.i = a.i && b.i; return r;
		case OP_OR: r.i = a.i || b.i; return r;
		case OP_EQ:
		case OP_NE:
		case OP_LT:
		case OP_LE:
		case OP_GT:
		case OP_GE: r.i = compare((Op)e->op, ta, a, b); return r;
		case OP_BAND: r.i = dt_wrap_int(t, a.i & b.i); return r;
		case OP_BOR: r.i = dt_wrap_int(t, a.i | b.i); return r;
		case OP_BXOR: r.i = dt_wrap_int(t, a.i ^ b.i); return r;
		case OP_SHL:
		case OP_SHR: r.i = dt_shift(t, a.i, b.i, e->op == OP_SHL); return r;
		case OP_FLOORDIV:
		case OP_MOD:
			if (is_float(t)) { /* float '%' (the verifier allows no float '//') */
				r.f = dt_round_double(t, floatmod(a.f, b.f));
				return r;
			}
			if (b.i == 0) {
				rt_error(in, e->pos, "integer division by zero in '%s'", op_name((Op)e->op));
				return r;
			}
			r.i = dt_wrap_int(t, e->op == OP_FLOORDIV ? floordiv(a.i, b.i) : floormod(a.i, b.i));
			return r;
		default: return arith((Op)e->op, t, a, b);
		}
	}
	case E_CALL: {
		if (e->op >= OP_SHFL_XOR && e->op <= OP_SHFL_IDX) { /* computed before the statement (sim_shuffles) */
			for (size_t i = 0; i < in->ls.shfl.len; i++)
				if (in->ls.shfl.data[i].expr == id && in->ls.cur >= 0)
					return in->ls.shfl.data[i].val[in->ls.cur];
			rt_error(in, e->pos, "internal: %s outside lockstep execution", op_name((Op)e->op));
			return r;
		}
		if (e->op == OP_IF_THEN_ELSE) /* lazy: only the chosen side runs */
			return eval(in, e->args[eval(in, e->args[0]).i ? 1 : 2]);
		Val a[3] = {{0, 0}, {0, 0}, {0, 0}};
		for (int i = 0; i < e->nargs && i < 3; i++)
			a[i] = eval(in, e->args[i]);
		if (in->failed)
			return r;
		switch ((Op)e->op) {
		case OP_MIN:
		case OP_MAX: return arith((Op)e->op, t, a[0], a[1]);
		case OP_ABS: return absval(t, a[0]);
		case OP_SELECT: return a[0].i ? a[1] : a[2];
		case OP_CLAMP: /* NaN stays NaN (min/max alone would drop it) */
			if (is_float(t) && isnan(a[0].f))
				return a[0];
			return arith(OP_MIN, t, arith(OP_MAX, t, a[0], a[1]), a[2]);
		case OP_POW: r.f = dt_round_double(t, pow(a[0].f, a[1].f)); return r;
		case OP_FMOD: r.f = dt_round_double(t, fmod(a[0].f, a[1].f)); return r;
		case OP_CEILDIV: {
			if (a[1].i == 0) {
				rt_error(in, e->pos, "integer division by zero in 'ceildiv'");
				return r;
			}
			int64_t q = floordiv(a[0].i, a[1].i);
			r.i = dt_wrap_int(t, floormod(a[0].i, a[1].i) ? q + 1 : q);
			return r;
		}
		default: r.f = dt_round_double(t, transcendental((Op)e->op, a[0].f)); return r;
		}
	}
	case E_CAST:
		if (e->op)
			return reinterpret(eval(in, e->a), (DType)EX(e->a)->type, (DType)e->cast_to);
		return convert(eval(in, e->a), (DType)EX(e->a)->type, (DType)e->cast_to);
	}
	return r;
}

/* ---- buffers ------------------------------------------------------------ */

/* Fill with a value that makes reads of undefined data visible: NaN and
 * 0xA5 bytes, or (alt) -3.25 and 0x5A bytes, so that a result that depends
 * on the fill differs between the two (interp_run_poisoned). */
static void poison(BufState *b, bool alt)
{
	if (!is_float(b->dt)) {
		memset(b->block, alt ? 0x5A : 0xA5, (size_t)(b->elems * b->esize));
		return;
	}
	uint8_t nan[8];
	dt_store_double(b->dt, nan, alt ? -3.25 : NAN);
	for (int64_t i = 0; i < b->elems; i++)
		memcpy(b->block + i * b->esize, nan, (size_t)b->esize);
}

/* Private copies of the locals for one parallel iteration or thread. */
static void private_begin(Interp *in)
{
	for (size_t i = 0; i < in->locals.len; i++) {
		BufState *b = &in->bufs[in->locals.data[i]];
		memcpy(b->priv, b->block, (size_t)(b->elems * b->esize));
		b->cur = b->priv;
	}
}

static void private_end(Interp *in)
{
	for (size_t i = 0; i < in->locals.len; i++) {
		BufState *b = &in->bufs[in->locals.data[i]];
		b->cur = b->block;
	}
}

/* Steps the multi-index i over [0, dims); false after the last one. */
static bool next_index(int64_t *i, const int64_t *dims, int rank)
{
	for (int d = rank - 1; d >= 0; d--) {
		if (++i[d] < dims[d])
			return true;
		i[d] = 0;
	}
	return false;
}

static bool any_empty(const int64_t *dims, int rank)
{
	for (int d = 0; d < rank; d++)
		if (dims[d] <= 0)
			return true;
	return false;
}

/* Offsets of a region (zeros for a whole buffer). */
static bool region_offsets(Interp *in, const Region *r, int rank, int64_t *off)
{
	for (int d = 0; d < rank; d++)
		off[d] = r->nidx ? eval(in, r->idx[d]).i : 0;
	return !in->failed;
}

/* Offset of element base+i in b, or -1 if outside (b's bounds). */
static int64_t tile_offset(const BufState *b, const int64_t *base, const int64_t *i)
{
	int64_t o = 0;
	for (int d = 0; d < b->rank; d++) {
		int64_t x = base[d] + i[d];
		if (x < 0 || x >= b->dims[d])
			return -1;
		o = o * b->dims[d] + x;
	}
	return o;
}

static const char *bname(Interp *in, int32_t buf) { return in->m->bufs.data[buf].name; }

/* Out-of-range tiles of on-chip buffers are program errors (only global
 * tensors have the load-0/skip-store edge semantics). */
static void tile_error(Interp *in, const Stmt *s, int32_t buf, const int64_t *base, const int64_t *i)
{
	const BufState *b = &in->bufs[buf];
	for (int d = 0; d < b->rank; d++)
		if (base[d] + i[d] < 0 || base[d] + i[d] >= b->dims[d]) {
			rt_error(in, s->pos, "tile element %lld is outside dimension %d of '%s' (size %lld)",
			         (long long)(base[d] + i[d]), d, bname(in, buf), (long long)b->dims[d]);
			return;
		}
}

/* The tile of a copy/atomic_add: extents, and the element of each side
 * (relative to its offsets) that tile index t maps to. */
static void tile_ext(const Stmt *s, int64_t *ext)
{
	for (int d = 0; d < s->trank; d++)
		ext[d] = s->text[d];
}

static void tile_point(const Region *r, int rank, const int64_t *t, int64_t *out)
{
	for (int d = 0; d < rank; d++)
		out[d] = r->tdim[d] >= 0 ? t[r->tdim[d]] : 0;
}

static void exec_copy(Interp *in, const Stmt *s)
{
	BufState *src = &in->bufs[s->src.buf], *dst = &in->bufs[s->dst.buf];
	int64_t so[IR_MAX_RANK], doff[IR_MAX_RANK], t[IR_MAX_RANK] = {0}, ext[IR_MAX_RANK];
	int64_t pi[IR_MAX_RANK], qi[IR_MAX_RANK];
	if (!region_offsets(in, &s->src, src->rank, so) || !region_offsets(in, &s->dst, dst->rank, doff))
		return;
	tile_ext(s, ext);
	uint64_t tile = 1;
	for (int d = 0; d < s->trank; d++) /* saturating: a huge tile is over any bound */
		tile = ext[d] > 0 && tile > UINT64_MAX / (uint64_t)ext[d] ? UINT64_MAX : tile * (uint64_t)(ext[d] > 0 ? ext[d] : 0);
	if (any_empty(ext, s->trank) || !charge(in, tile, s->pos))
		return;
	bool same = src->dt == dst->dt;
	do {
		tile_point(&s->src, src->rank, t, pi);
		tile_point(&s->dst, dst->rank, t, qi);
		int64_t si = tile_offset(src, so, pi), di = tile_offset(dst, doff, qi);
		if (si < 0 && !src->global)
			return tile_error(in, s, s->src.buf, so, pi);
		if (di < 0 && !dst->global)
			return tile_error(in, s, s->dst.buf, doff, qi);
		if (di < 0)
			continue; /* outside the global tensor: not written */
		if (si < 0 && dtype_is_packed(dst->dt))
			dt_set_int(dst->dt, dst->cur, di, 0);
		else if (si < 0) /* outside the global tensor: reads as 0 */
			memset(dst->cur + di * dst->esize, 0, (size_t)dst->esize);
		else if (same && dtype_is_packed(dst->dt))
			dt_set_int(dst->dt, dst->cur, di, dt_get_int(src->dt, src->cur, si));
		else if (same) /* bit-exact, NaN payloads included */
			memcpy(dst->cur + di * dst->esize, src->cur + si * src->esize, (size_t)dst->esize);
		else
			store_elem(dst, di, load_elem(src, si), src->dt);
	} while (next_index(t, ext, s->trank));
}

/* C (+)= op(A) * op(B): products in f32 of the exactly converted inputs,
 * accumulated in f32 in k order (i32, exact mod 2^32, for i8 inputs). */
static void exec_gemm(Interp *in, const Stmt *s)
{
	const BufState *A = &in->bufs[s->src.buf], *B = &in->bufs[s->src2.buf];
	BufState *C = &in->bufs[s->dst.buf];
	int64_t M = C->dims[0], N = C->dims[1], K = A->dims[s->flag_a ? 0 : 1];
	if (!charge(in, (uint64_t)M * (uint64_t)N * (uint64_t)K + (uint64_t)(M + N) * (uint64_t)K, s->pos))
		return;
	bool integer = !is_float(A->dt);
	/* a[m*K + k] and bt[n*K + k]: both operands K-contiguous. */
	size_t esz = integer ? sizeof(int64_t) : sizeof(float);
	void *a = malloc((size_t)(M * K) * esz), *bt = malloc((size_t)(N * K) * esz);
	if (!a || !bt) {
		rt_error(in, s->pos, "out of memory");
		goto done;
	}
	for (int64_t m = 0; m < M; m++)
		for (int64_t k = 0; k < K; k++) {
			int64_t off = s->flag_a ? k * M + m : m * K + k;
			Val v = load_elem(A, off);
			if (integer)
				((int64_t *)a)[m * K + k] = v.i;
			else
				((float *)a)[m * K + k] = (float)v.f;
		}
	for (int64_t k = 0; k < K; k++)
		for (int64_t n = 0; n < N; n++) {
			int64_t off = s->flag_b ? n * K + k : k * N + n;
			Val v = load_elem(B, off);
			if (integer)
				((int64_t *)bt)[n * K + k] = v.i;
			else
				((float *)bt)[n * K + k] = (float)v.f;
		}
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = 0; n < N; n++) {
			Val c = s->flag_clear ? (Val){0, 0} : load_elem(C, m * N + n);
			if (integer) {
				const int64_t *ar = (const int64_t *)a + m * K, *br = (const int64_t *)bt + n * K;
				uint64_t acc = (uint64_t)c.i;
				for (int64_t k = 0; k < K; k++)
					acc += (uint64_t)(ar[k] * br[k]);
				c.i = dt_wrap_int(DT_I32, (int64_t)acc);
			} else {
				const float *ar = (const float *)a + m * K, *br = (const float *)bt + n * K;
				float acc = (float)c.f;
				/* Separate statements and -std=c17 (fp-contract=off): no FMA. */
				for (int64_t k = 0; k < K; k++) {
					float p = ar[k] * br[k];
					acc = acc + p;
				}
				c.f = acc;
			}
			store_elem(C, m * N + n, c, C->dt);
		}
done:
	free(a);
	free(bt);
}

static void exec_fill(Interp *in, const Stmt *s)
{
	BufState *b = &in->bufs[s->dst.buf];
	if (!charge(in, (uint64_t)b->elems, s->pos))
		return;
	uint8_t pat[8] = {0};
	if (s->kind == S_FILL) {
		Val v = eval(in, s->value);
		if (in->failed)
			return;
		BufState one = *b;
		one.cur = pat;
		store_elem(&one, 0, v, (DType)EX(s->value)->type);
	}
	for (int64_t i = 0; i < b->elems; i++)
		memcpy(b->cur + i * b->esize, pat, (size_t)b->esize);
}

/* Splits a dense buffer around dimension dim: outer x n x inner. */
static void split_dims(const BufState *b, int dim, int64_t *outer, int64_t *n, int64_t *inner)
{
	*outer = *inner = 1;
	for (int d = 0; d < dim; d++)
		*outer *= b->dims[d];
	for (int d = dim + 1; d < b->rank; d++)
		*inner *= b->dims[d];
	*n = b->dims[dim];
}

static Val combine(ReduceOp op, DType t, Val acc, Val x)
{
	switch (op) {
	case RED_SUM:
	case RED_ABSSUM: return arith(OP_ADD, t, acc, x);
	case RED_MAX:
	case RED_ABSMAX: return arith(OP_MAX, t, acc, x);
	default: return arith(OP_MIN, t, acc, x);
	}
}

static void exec_reduce(Interp *in, const Stmt *s)
{
	const BufState *src = &in->bufs[s->src.buf];
	BufState *dst = &in->bufs[s->dst.buf];
	ReduceOp op = (ReduceOp)s->sub;
	bool absolute = op == RED_ABSSUM || op == RED_ABSMAX;
	/* Floats accumulate in f32 (f64 for an f64 dst) and round once into
	 * dst (docs/tile-ir.md): an f16/bf16/fp8 running sum would stall. */
	DType at = is_float(dst->dt) && dst->dt != DT_F64 ? DT_F32 : dst->dt;
	int64_t outer, n, inner;
	split_dims(src, s->dim, &outer, &n, &inner);
	if (!charge(in, (uint64_t)src->elems, s->pos))
		return;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < inner; j++) {
			/* Fold from the first element so no identity value (and no
			 * -0 + 0 question) is involved; n >= 1 for allocated buffers. */
			Val acc = {0, 0};
			for (int64_t k = 0; k < n; k++) {
				Val x = convert(load_elem(src, (o * n + k) * inner + j), src->dt, at);
				if (absolute)
					x = absval(at, x);
				acc = k ? combine(op, at, acc, x) : x;
			}
			int64_t di = o * inner + j;
			if (!s->flag_clear)
				acc = combine(op, at, convert(load_elem(dst, di), dst->dt, at), acc);
			store_elem(dst, di, convert(acc, at, dst->dt), dst->dt);
		}
}

static void exec_cumsum(Interp *in, const Stmt *s)
{
	const BufState *src = &in->bufs[s->src.buf];
	BufState *dst = &in->bufs[s->dst.buf];
	int64_t outer, n, inner;
	split_dims(src, s->dim, &outer, &n, &inner);
	if (!charge(in, (uint64_t)src->elems, s->pos))
		return;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < inner; j++) {
			Val acc = {0, 0};
			for (int64_t step = 0; step < n; step++) {
				int64_t k = s->flag_reverse ? n - 1 - step : step;
				int64_t off = (o * n + k) * inner + j;
				/* Read before write: src may be dst. */
				Val x = convert(load_elem(src, off), src->dt, dst->dt);
				acc = step ? arith(OP_ADD, dst->dt, acc, x) : x;
				store_elem(dst, off, acc, dst->dt);
			}
		}
}

/* interp_run_slack's record of one float atomic add into element off of g. */
static void note_atomic_add(BufState *g, Op op, int64_t off, Val old, Val v)
{
	if (!g->slack || op != OP_ADD || !is_float(g->dt))
		return;
	double *e = &g->slack[2 * off];
	if (e[1] == 0)
		e[0] += fabs(old.f);
	e[0] += fabs(v.f);
	e[1] += 1;
}

static void exec_atomic_add(Interp *in, const Stmt *s)
{
	BufState *g = &in->bufs[s->dst.buf];
	Op op = s->sub == ATOMIC_MAX ? OP_MAX : s->sub == ATOMIC_MIN ? OP_MIN : OP_ADD;
	if (s->value >= 0) { /* element form: full index, out of bounds is an error */
		int64_t off;
		if (!elem_offset(in, g, bname(in, s->dst.buf), s->dst.idx, s->dst.pos, &off))
			return;
		Val v = convert(eval(in, s->value), (DType)EX(s->value)->type, g->dt);
		if (in->failed)
			return;
		Val old = load_elem(g, off);
		note_atomic_add(g, op, off, old, v);
		store_elem(g, off, arith(op, g->dt, old, v), g->dt);
		return;
	}
	const BufState *x = &in->bufs[s->src.buf];
	int64_t go[IR_MAX_RANK], zero[IR_MAX_RANK] = {0}, t[IR_MAX_RANK] = {0}, ext[IR_MAX_RANK];
	int64_t gp[IR_MAX_RANK], xp[IR_MAX_RANK];
	tile_ext(s, ext);
	if (!region_offsets(in, &s->dst, g->rank, go) || any_empty(ext, s->trank))
		return;
	do {
		tile_point(&s->dst, g->rank, t, gp);
		tile_point(&s->src, x->rank, t, xp);
		int64_t gi = tile_offset(g, go, gp);
		if (gi < 0 && !g->global)
			return tile_error(in, s, s->dst.buf, go, gp);
		if (gi < 0)
			continue;
		Val v = convert(load_elem(x, tile_offset(x, zero, xp)), x->dt, g->dt);
		Val old = load_elem(g, gi);
		note_atomic_add(g, op, gi, old, v);
		store_elem(g, gi, arith(op, g->dt, old, v), g->dt);
	} while (next_index(t, ext, s->trank));
}

/* ---- statements --------------------------------------------------------- */

static void exec_block(Interp *in, const Block *b);
static void exec_stmt(Interp *in, int32_t id);

static void exec_parallel(Interp *in, const Stmt *s)
{
	int64_t ext[IR_MAX_RANK], i[IR_MAX_RANK] = {0};
	int n = s->nvars;
	if (n > IR_MAX_RANK) {
		rt_error(in, s->pos, "parallel with more than %d variables", IR_MAX_RANK);
		return;
	}
	for (int d = 0; d < n; d++)
		ext[d] = eval(in, s->extents[d]).i;
	if (in->failed || any_empty(ext, n))
		return;
	bool outer = !in->private_mode;
	in->private_mode = true;
	if (outer)
		race_region(in, true);
	do {
		if (!charge(in, 1, s->pos))
			break;
		if (outer)
			in->rl.tag++;
		for (int d = 0; d < n; d++)
			in->vars[s->vars[d]] = (Val){in->reverse ? ext[d] - 1 - i[d] : i[d], 0};
		private_begin(in);
		exec_block(in, &s->body);
	} while (!in->failed && next_index(i, ext, n));
	if (outer) {
		private_end(in);
		in->private_mode = false;
		race_region(in, false);
	}
}

/* tx, ty, tz of linear thread t (tx fastest) into vars. */
static void set_thread_ids(const Interp *in, Val *vars, int t)
{
	const Kernel *k = in->k;
	vars[k->threadidx[0]] = (Val){t % k->tdim[0], 0};
	vars[k->threadidx[1]] = (Val){t / k->tdim[0] % k->tdim[1], 0};
	vars[k->threadidx[2]] = (Val){t / (k->tdim[0] * k->tdim[1]), 0};
}

/* ---- lockstep execution of per-thread code with warp shuffles ------------ */

static bool expr_has_shuffle(const Interp *in, int32_t id)
{
	if (id < 0)
		return false;
	const Expr *e = EX(id);
	if (e->kind == E_CALL && e->op >= OP_SHFL_XOR && e->op <= OP_SHFL_IDX)
		return true;
	if (expr_has_shuffle(in, e->a) || expr_has_shuffle(in, e->b))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_has_shuffle(in, e->args[i]))
			return true;
	return false;
}

static bool has_shuffle(Interp *in, const Stmt *s);

static bool block_has_shuffle(Interp *in, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		if (has_shuffle(in, ST(b->ids[i])))
			return true;
	return false;
}

/* Does the statement (its expressions or its bodies) contain a shuffle?
 * Memoised by statement id. */
static bool has_shuffle(Interp *in, const Stmt *s)
{
	size_t id = (size_t)(s - in->m->stmts.data);
	if (in->ls.has_shfl && in->ls.has_shfl[id])
		return in->ls.has_shfl[id] == 1;
	bool r = expr_has_shuffle(in, s->value) || expr_has_shuffle(in, s->lo) || expr_has_shuffle(in, s->hi);
	for (int i = 0; !r && i < s->dst.nidx; i++)
		r = expr_has_shuffle(in, s->dst.idx[i]);
	r = r || block_has_shuffle(in, &s->body) || block_has_shuffle(in, &s->els);
	if (in->ls.has_shfl)
		in->ls.has_shfl[id] = r ? 1 : 2;
	return r;
}

/* Makes thread t's variables and locals the current ones. */
static void sim_switch(Interp *in, int t)
{
	Lockstep *ls = &in->ls;
	ls->cur = t;
	in->vars = ls->vars + (size_t)t * (size_t)ls->nvars;
	for (size_t i = 0; i < in->locals.len; i++) {
		BufState *b = &in->bufs[in->locals.data[i]];
		b->cur = ls->priv[i] + (size_t)t * (size_t)(b->elems * b->esize);
	}
}

/* Post-order list of the shuffles in expression id. */
static int collect_shuffles(Interp *in, int32_t id)
{
	if (id < 0)
		return 0;
	const Expr *e = EX(id);
	if (collect_shuffles(in, e->a) || collect_shuffles(in, e->b))
		return -1;
	for (int i = 0; i < e->nargs; i++)
		if (collect_shuffles(in, e->args[i]))
			return -1;
	if (e->kind == E_CALL && e->op >= OP_SHFL_XOR && e->op <= OP_SHFL_IDX) {
		Val *v = calloc((size_t)in->ls.T, sizeof *v);
		if (!v || vec_push(&in->ls.shfl, ((ShflVal){id, v}))) {
			free(v);
			return -1;
		}
	}
	return 0;
}

static void sim_free_shuffles(Interp *in)
{
	for (size_t i = 0; i < in->ls.shfl.len; i++)
		free(in->ls.shfl.data[i].val);
	in->ls.shfl.len = 0;
}

/* Evaluates the shuffles of the expressions roots[0..n) for the active
 * threads, innermost first: each thread's operand, then every thread's
 * result from its source lane.  A warp is 32 consecutive threads (linear
 * index tx + X * (ty + Y * tz)); a source lane outside the warp gives the
 * thread its own value; one that is not active is an error. */
static bool sim_shuffles(Interp *in, const int32_t *roots, int n, const uint8_t *act)
{
	sim_free_shuffles(in);
	for (int r = 0; r < n; r++)
		if (collect_shuffles(in, roots[r])) {
			rt_error(in, in->k->pos, "out of memory");
			return false;
		}
	int T = in->ls.T;
	Val *opnd = malloc(sizeof *opnd * (size_t)T);
	int64_t *arg = malloc(sizeof *arg * (size_t)T);
	if (!opnd || !arg) {
		free(opnd);
		free(arg);
		rt_error(in, in->k->pos, "out of memory");
		return false;
	}
	for (size_t k = 0; k < in->ls.shfl.len && !in->failed; k++) {
		const Expr *e = EX(in->ls.shfl.data[k].expr);
		for (int t = 0; t < T && !in->failed; t++)
			if (act[t]) {
				sim_switch(in, t);
				opnd[t] = eval(in, e->args[0]);
				arg[t] = eval(in, e->args[1]).i;
			}
		for (int t = 0; t < T && !in->failed; t++) {
			if (!act[t])
				continue;
			int64_t lane = t % 32, j;
			switch ((Op)e->op) {
			case OP_SHFL_XOR: j = lane ^ arg[t]; break;
			case OP_SHFL_DOWN: j = lane + arg[t]; break;
			case OP_SHFL_UP: j = lane - arg[t]; break;
			default: j = arg[t] & 31; break;
			}
			if (j < 0 || j > 31)
				j = lane;
			int64_t src = t - lane + j;
			if (src >= T || !act[src]) {
				rt_error(in, e->pos, "%s in thread %d reads thread %lld, which does not execute it (the threads "
				         "of a warp must reach a shuffle together)", op_name((Op)e->op), t, (long long)src);
				break;
			}
			in->ls.shfl.data[k].val[t] = opnd[src];
		}
	}
	free(opnd);
	free(arg);
	return !in->failed;
}

static void sim_block(Interp *in, const Block *b, const uint8_t *mask);

/* Statement s for the threads in mask (and not leaving a loop). */
static void sim_stmt(Interp *in, int32_t id, const uint8_t *mask)
{
	const Stmt *s = ST(id);
	Lockstep *ls = &in->ls;
	int T = ls->T;
	uint8_t *act = malloc((size_t)T);
	if (!act) {
		rt_error(in, s->pos, "out of memory");
		return;
	}
	bool any = false;
	for (int t = 0; t < T; t++)
		any |= act[t] = mask[t] && !ls->broken[t];
	int32_t roots[IR_MAX_RANK + 3];
	int nr = 0;
	if (!any)
		goto out;
	if (s->value >= 0)
		roots[nr++] = s->value;
	if (s->kind == S_FOR) {
		roots[nr++] = s->lo;
		roots[nr++] = s->hi;
	}
	for (int i = 0; i < s->dst.nidx && s->kind != S_FOR; i++)
		roots[nr++] = s->dst.idx[i];
	if (!sim_shuffles(in, roots, nr, act))
		goto out;
	if (s->kind == S_IF) {
		uint8_t *els = malloc((size_t)T);
		if (!els) {
			rt_error(in, s->pos, "out of memory");
			goto out;
		}
		for (int t = 0; t < T && !in->failed; t++) {
			els[t] = 0;
			if (act[t] && charge(in, 1, s->pos)) {
				sim_switch(in, t);
				bool c = eval(in, s->value).i != 0;
				act[t] = c;
				els[t] = !c;
			}
		}
		sim_free_shuffles(in);
		if (!in->failed)
			sim_block(in, &s->body, act);
		if (!in->failed)
			sim_block(in, &s->els, els);
		free(els);
	} else if (s->kind == S_FOR) {
		int64_t *lo = malloc(sizeof *lo * (size_t)T), *n = malloc(sizeof *n * (size_t)T), maxn = 0;
		int64_t st = s->step >= 0 ? eval(in, s->step).i : 1;
		if (!lo || !n) {
			free(lo);
			free(n);
			rt_error(in, s->pos, "out of memory");
			goto out;
		}
		for (int t = 0; t < T && !in->failed; t++)
			if (act[t]) {
				sim_switch(in, t);
				lo[t] = eval(in, s->lo).i;
				n[t] = ir_trip_count(lo[t], eval(in, s->hi).i, st);
				maxn = TA_MAX(maxn, n[t]);
			}
		sim_free_shuffles(in);
		uint8_t *it = malloc((size_t)T);
		for (int64_t k = 0; it && k < maxn && !in->failed; k++) {
			bool live = false;
			for (int t = 0; t < T; t++) {
				it[t] = act[t] && !ls->broken[t] && k < n[t];
				if (it[t] && charge(in, 1, s->pos)) {
					ls->vars[(size_t)t * (size_t)ls->nvars + (size_t)s->var] = (Val){lo[t] + k * st, 0};
					live = true;
				}
			}
			if (!live)
				break;
			sim_block(in, &s->body, it);
		}
		if (!it)
			rt_error(in, s->pos, "out of memory");
		for (int t = 0; t < T; t++)
			if (act[t])
				ls->broken[t] = 0;
		free(it);
		free(lo);
		free(n);
	} else {
		for (int t = 0; t < T && !in->failed; t++)
			if (act[t]) {
				if (s->kind == S_BREAK) {
					ls->broken[t] = 1;
					continue;
				}
				sim_switch(in, t);
				exec_stmt(in, id);
			}
		sim_free_shuffles(in);
	}
out:
	free(act);
}

static void sim_block(Interp *in, const Block *b, const uint8_t *mask)
{
	for (int i = 0; i < b->n && !in->failed; i++)
		sim_stmt(in, b->ids[i], mask);
}

/* The per-thread if s in lockstep over all threads of the block. */
static void sim_if(Interp *in, const Stmt *s)
{
	Lockstep *ls = &in->ls;
	int T = in->k->threads;
	Val *block_vars = in->vars;
	if (!ls->vars) {
		ls->T = T;
		ls->nvars = (int)in->m->vars.len + 1;
		ls->vars = malloc(sizeof *ls->vars * (size_t)T * (size_t)ls->nvars);
		ls->priv = calloc(in->locals.len + 1, sizeof *ls->priv);
		ls->broken = calloc((size_t)T, 1);
		for (size_t i = 0; ls->priv && i < in->locals.len; i++) {
			const BufState *b = &in->bufs[in->locals.data[i]];
			ls->priv[i] = malloc((size_t)(b->elems * b->esize) * (size_t)T + 1);
			if (!ls->priv[i])
				break;
		}
		if (!ls->vars || !ls->priv || !ls->broken || (in->locals.len && !ls->priv[in->locals.len - 1])) {
			rt_error(in, s->pos, "out of memory");
			return;
		}
	}
	uint8_t *all = malloc((size_t)T);
	if (!all) {
		rt_error(in, s->pos, "out of memory");
		return;
	}
	for (int t = 0; t < T; t++) {
		Val *v = ls->vars + (size_t)t * (size_t)ls->nvars;
		memcpy(v, block_vars, sizeof *v * (size_t)ls->nvars);
		set_thread_ids(in, v, t);
		for (size_t i = 0; i < in->locals.len; i++) {
			const BufState *b = &in->bufs[in->locals.data[i]];
			size_t n = (size_t)(b->elems * b->esize);
			memcpy(ls->priv[i] + (size_t)t * n, b->block, n);
		}
		ls->broken[t] = 0;
		all[t] = 1;
	}
	in->private_mode = in->thread_mode = true;
	sim_stmt(in, (int32_t)(s - in->m->stmts.data), all);
	in->private_mode = in->thread_mode = false;
	free(all);
	in->vars = block_vars;
	ls->cur = -1;
	private_end(in);
}

static void exec_if(Interp *in, const Stmt *s)
{
	if (!s->per_thread || in->thread_mode) {
		Val c = eval(in, s->value);
		if (!in->failed)
			exec_block(in, c.i ? &s->body : &s->els);
		return;
	}
	if (in->private_mode) { /* verify rejects tx inside parallel */
		rt_error(in, s->pos, "per-thread if inside parallel");
		return;
	}
	if (has_shuffle(in, s)) {
		sim_if(in, s);
		return;
	}
	in->private_mode = in->thread_mode = true;
	race_region(in, true);
	for (int t = 0; t < in->k->threads && charge(in, 1, s->pos); t++) {
		in->rl.tag++;
		set_thread_ids(in, in->vars, in->reverse ? in->k->threads - 1 - t : t);
		private_begin(in);
		Val c = eval(in, s->value);
		if (!in->failed)
			exec_block(in, c.i ? &s->body : &s->els);
	}
	private_end(in);
	in->private_mode = in->thread_mode = false;
	race_region(in, false);
}

/* V = view T[dims]: T's memory with V's dimensions, which must not hold
 * more elements than T. */
static void exec_view(Interp *in, const Stmt *s)
{
	const Buffer *bd = &in->m->bufs.data[s->buf];
	BufState *b = &in->bufs[s->buf], *t = &in->bufs[bd->viewed];
	b->elems = 1;
	for (int d = 0; d < bd->rank; d++) {
		b->dims[d] = eval(in, bd->shape[d]).i;
		if (in->failed)
			return;
		if (b->dims[d] < 0 || (b->dims[d] && b->elems > INT64_MAX / 16 / b->dims[d])) {
			rt_error(in, s->pos, "view '%s' has an invalid dimension %d (%lld)", bd->name, d, (long long)b->dims[d]);
			return;
		}
		b->elems *= b->dims[d];
	}
	if (b->elems > t->elems) {
		rt_error(in, s->pos, "view '%s' has %lld elements but '%s' has %lld", bd->name, (long long)b->elems,
		         in->m->bufs.data[bd->viewed].name, (long long)t->elems);
		return;
	}
	b->block = b->cur = t->block;
}

static void exec_stmt(Interp *in, int32_t id)
{
	const Stmt *s = ST(id);
	if (!charge(in, 1, s->pos))
		return;
	switch ((StmtKind)s->kind) {
	case S_ALLOC:
		if (in->m->bufs.data[s->buf].view)
			exec_view(in, s);
		else
			poison(&in->bufs[s->buf], in->poison_alt);
		break;
	case S_LET: in->vars[s->var] = eval(in, s->value); break;
	case S_STORE: {
		BufState *b = &in->bufs[s->dst.buf];
		int64_t off;
		if (!elem_offset(in, b, bname(in, s->dst.buf), s->dst.idx, s->dst.pos.line ? s->dst.pos : s->pos, &off))
			return;
		Val v = eval(in, s->value);
		if (in->failed)
			break;
		Val old = in->rl.on ? load_elem(b, off) : v;
		store_elem(b, off, v, (DType)EX(s->value)->type);
		if (in->rl.on) {
			Val now = load_elem(b, off);
			race_access(in, b, off, true, memcmp(&old, &now, sizeof old) != 0, s->pos, bname(in, s->dst.buf));
		}
		break;
	}
	case S_COPY: exec_copy(in, s); break;
	case S_GEMM: exec_gemm(in, s); break;
	case S_CLEAR:
	case S_FILL: exec_fill(in, s); break;
	case S_REDUCE: exec_reduce(in, s); break;
	case S_CUMSUM: exec_cumsum(in, s); break;
	case S_ATOMIC_ADD: exec_atomic_add(in, s); break;
	case S_BARRIER: break;
	case S_PARALLEL: exec_parallel(in, s); break;
	case S_FOR: {
		int64_t lo = eval(in, s->lo).i, hi = eval(in, s->hi).i, st = s->step >= 0 ? eval(in, s->step).i : 1;
		int64_t n = ir_trip_count(lo, hi, st);
		for (int64_t k = 0; k < n && charge(in, 1, s->pos); k++) {
			in->vars[s->var] = (Val){lo + k * st, 0};
			exec_block(in, &s->body);
			if (in->breaking) {
				in->breaking = false;
				break;
			}
		}
		break;
	}
	case S_IF: exec_if(in, s); break;
	case S_BREAK: in->breaking = true; break;
	}
}

static void exec_block(Interp *in, const Block *b)
{
	for (int i = 0; i < b->n && !in->failed && !in->breaking; i++)
		exec_stmt(in, b->ids[i]);
}

/* ---- setup ---------------------------------------------------------------- */

/* Value of shape symbol var v: its -D value or its argument. */
static bool symbol_value(const Module *m, const InterpArg *args, int32_t v, int64_t *out)
{
	const Var *var = &m->vars.data[v];
	*out = var->has_value ? var->value : args[var->index].ival;
	return *out >= 0 && *out <= INT32_MAX;
}

/* Value of the dimension expression e of kernel k (verify allows only
 * symbols and literals under integer operators). */
static bool dim_value(const Module *m, int k, const InterpArg *args, int32_t e, int64_t *out)
{
	const Kernel *kn = &m->kernels.data[k];
	int64_t *vals = malloc(sizeof *vals * ((size_t)kn->nargs + 1));
	if (!vals)
		return false;
	for (int i = 0; i < kn->nargs; i++)
		vals[i] = args[i].ival;
	bool ok = !ir_eval_i64(m, k, e, vals, out) && *out >= 0 && *out <= INT32_MAX;
	free(vals);
	return ok;
}

int interp_tensor_dims(const Module *m, int k, const InterpArg *args, int argi, int64_t dims[IR_MAX_RANK])
{
	const Kernel *kn = &m->kernels.data[k];
	if (argi < 0 || argi >= kn->nargs || kn->args[argi].buf < 0)
		return -1;
	const Buffer *b = &m->bufs.data[kn->args[argi].buf];
	for (int d = 0; d < b->rank; d++) {
		const Expr *e = &m->exprs.data[b->shape[d]];
		if (e->kind == E_INT) {
			dims[d] = e->ival;
		} else if (e->kind == E_VAR) {
			if (!symbol_value(m, args, e->var, &dims[d]))
				return -1;
		} else if (!dim_value(m, k, args, b->shape[d], &dims[d])) { /* an expression such as K * K */
			return -1;
		}
	}
	return b->rank;
}

int64_t interp_tensor_elems(const Module *m, int k, const InterpArg *args, int argi)
{
	int64_t dims[IR_MAX_RANK], n = 1;
	int rank = interp_tensor_dims(m, k, args, argi, dims);
	if (rank < 0)
		return -1;
	for (int d = 0; d < rank; d++) {
		if (dims[d] && n > INT64_MAX / 16 / dims[d])
			return -1;
		n *= dims[d];
	}
	return n;
}

/* Allocates storage for every buffer allocated in the block (recursively). */
static int alloc_bufs(Interp *in, const Block *blk)
{
	for (int i = 0; i < blk->n; i++) {
		const Stmt *s = ST(blk->ids[i]);
		if (s->kind == S_ALLOC) {
			const Buffer *bd = &in->m->bufs.data[s->buf];
			BufState *b = &in->bufs[s->buf];
			if (bd->view) { /* the tensor's memory: set up when the statement runs (exec_view) */
				b->global = true;
				b->dt = (DType)bd->dtype;
				b->esize = dtype_bytes(b->dt);
				b->rank = bd->rank;
				continue;
			}
			if (b->block)
				continue;
			b->dt = (DType)bd->dtype;
			b->esize = dtype_bytes(b->dt);
			b->rank = bd->rank;
			b->elems = 1;
			for (int d = 0; d < bd->rank; d++) {
				b->dims[d] = ir_buf_dim(in->m, bd, d);
				b->elems *= b->dims[d];
			}
			b->block = b->cur = malloc((size_t)(b->elems * b->esize));
			if (!b->block)
				return -1;
			if (bd->scope == SCOPE_LOCAL) {
				b->priv = malloc((size_t)(b->elems * b->esize));
				if (!b->priv || vec_push(&in->locals, s->buf))
					return -1;
			}
			poison(b, in->poison_alt);
		}
		if (alloc_bufs(in, &s->body) || alloc_bufs(in, &s->els))
			return -1;
	}
	return 0;
}

static int setup(Interp *in, const InterpArg *args)
{
	const Module *m = in->m;
	const Kernel *k = in->k;
	SrcPos kpos = k->pos;
	for (size_t v = 0; v < m->vars.len; v++)
		if (m->vars.data[v].kind == V_SYMBOL && m->vars.data[v].has_value)
			in->vars[v].i = m->vars.data[v].value;
	for (int a = 0; a < k->nargs; a++) {
		const KernelArg *ka = &k->args[a];
		if (ka->buf >= 0)
			continue;
		const Var *var = &m->vars.data[ka->var];
		DType t = (DType)var->type;
		Val *v = &in->vars[ka->var];
		if (var->kind == V_SYMBOL) {
			if (args[a].ival < 0 || args[a].ival > INT32_MAX) {
				rt_error(in, var->pos, "shape symbol '%s' = %lld is out of range (0 to 2^31-1)", var->name,
				         (long long)args[a].ival);
				return -1;
			}
			v->i = args[a].ival;
		} else if (is_float(t)) {
			v->f = dt_round_double(t, args[a].fval);
		} else {
			v->i = dt_wrap_int(t, args[a].ival);
		}
	}
	for (int a = 0; a < k->nargs; a++) {
		const KernelArg *ka = &k->args[a];
		if (ka->buf < 0)
			continue;
		const Buffer *bd = &m->bufs.data[ka->buf];
		BufState *b = &in->bufs[ka->buf];
		b->global = true;
		b->dt = (DType)bd->dtype;
		b->esize = dtype_bytes(b->dt);
		b->rank = interp_tensor_dims(m, (int)(k - m->kernels.data), args, a, b->dims);
		b->elems = interp_tensor_elems(m, (int)(k - m->kernels.data), args, a);
		if (b->rank < 0 || b->elems < 0) {
			rt_error(in, bd->pos, "tensor '%s' has an invalid shape", bd->name);
			return -1;
		}
		size_t need = (size_t)dtype_storage_bytes(b->dt, b->elems);
		if (need && (!args[a].data || args[a].bytes < need)) {
			rt_error(in, bd->pos, "tensor '%s' needs %zu bytes but its argument has %zu", bd->name, need,
			         args[a].data ? args[a].bytes : 0);
			return -1;
		}
		b->block = b->cur = args[a].data;
	}
	if (alloc_bufs(in, &k->body)) {
		rt_error(in, kpos, "out of memory");
		return -1;
	}
	return 0;
}

int interp_run(const Module *m, int k, const InterpArg *args, Diag *d)
{
	return interp_run_bounded(m, k, args, INTERP_DEFAULT_MAX_STEPS, d);
}

int interp_run_bounded(const Module *m, int k, const InterpArg *args, uint64_t max_steps, Diag *d)
{
	return interp_run_poisoned(m, k, args, max_steps, 0, d);
}

static int run_kernel(const Module *m, int k, const InterpArg *args, uint64_t max_steps, unsigned mode,
                      double *const *slack, Diag *d);

int interp_run_poisoned(const Module *m, int k, const InterpArg *args, uint64_t max_steps, unsigned mode, Diag *d)
{
	return run_kernel(m, k, args, max_steps, mode, NULL, d);
}

int interp_run_slack(const Module *m, int k, const InterpArg *args, uint64_t max_steps, double *const *slack,
                     Diag *d)
{
	return run_kernel(m, k, args, max_steps, 0, slack, d);
}

static int run_kernel(const Module *m, int k, const InterpArg *args, uint64_t max_steps, unsigned mode,
                      double *const *slack, Diag *d)
{
	if (!m->verified || k < 0 || (size_t)k >= m->kernels.len) {
		diag_error(d, "interp_run needs a verified module and a valid kernel index");
		return -1;
	}
	if (m->kernels.data[k].nargs > 0 && !args) {
		diag_error(d, "interp_run: kernel '%s' needs %d arguments", m->kernels.data[k].name,
		           m->kernels.data[k].nargs);
		return -1;
	}
	Interp in = {.m = m, .k = &m->kernels.data[k], .d = d, .max_steps = max_steps,
		     .poison_alt = mode & INTERP_POISON_ALT, .reverse = mode & INTERP_REVERSE,
		     .races = mode & INTERP_RACES, .ls.cur = -1};
	in.vars = calloc(m->vars.len + 1, sizeof *in.vars);
	in.bufs = calloc(m->bufs.len + 1, sizeof *in.bufs);
	in.ls.has_shfl = calloc(m->stmts.len + 1, 1);
	if (!in.vars || !in.bufs || !in.ls.has_shfl) {
		diag_error(d, "out of memory");
		in.failed = true;
		goto out;
	}
	if (setup(&in, args))
		goto out;
	for (int a = 0; slack && a < in.k->nargs; a++)
		if (in.k->args[a].buf >= 0)
			in.bufs[in.k->args[a].buf].slack = slack[a];
	int64_t grid[3] = {1, 1, 1};
	for (int g = 0; g < in.k->ngrid && g < 3; g++) {
		grid[g] = eval(&in, in.k->grid[g]).i;
		if (!in.failed && grid[g] < 0)
			rt_error(&in, m->exprs.data[in.k->grid[g]].pos, "grid dimension %d is negative (%lld)", g, (long long)grid[g]);
	}
	int64_t raster_p = 1;
	if (in.k->raster && !ir_const_int(m, in.k->raster_panel, &raster_p))
		rt_error(&in, in.k->raster_pos, "use_swizzle's panel size is not a constant");
	else if (in.k->raster && (grid[0] > IR_GRID_MAX || grid[1] > IR_GRID_MAX))
		rt_error(&in, in.k->raster_pos, "use_swizzle: grid %lld x %lld is larger than %d blocks in x or y",
			 (long long)grid[0], (long long)grid[1], IR_GRID_MAX);
	for (int64_t z = 0; z < grid[2] && !in.failed; z++)
		for (int64_t y = 0; y < grid[1] && !in.failed; y++)
			for (int64_t x = 0; x < grid[0] && !in.failed; x++) {
				int64_t idx[3] = {x, y, z};
				for (int dd = 0; in.reverse && dd < 3; dd++)
					idx[dd] = grid[dd] - 1 - idx[dd];
				if (!charge(&in, 1, in.k->pos))
					break;
				int64_t logical[3] = {idx[0], idx[1], idx[2]};
				if (in.k->raster) /* use_swizzle: the block launch block (x, y) runs */
					ir_raster_map((RasterOrder)in.k->raster, raster_p, grid[0], grid[1], idx[0], idx[1],
						      logical);
				for (int dd = 0; dd < 3; dd++) {
					in.blk[dd] = logical[dd];
					if (in.k->blockidx[dd] >= 0)
						in.vars[in.k->blockidx[dd]] = (Val){logical[dd], 0};
				}
				exec_block(&in, &in.k->body);
			}
out:
	if (in.bufs)
		for (size_t b = 0; b < m->bufs.len; b++)
			if (!in.bufs[b].global) {
				free(in.bufs[b].block);
				free(in.bufs[b].priv);
			}
	if (in.ls.priv)
		for (size_t i = 0; i < in.locals.len; i++)
			free(in.ls.priv[i]);
	free(in.ls.priv);
	free(in.ls.vars);
	free(in.ls.broken);
	free(in.ls.has_shfl);
	sim_free_shuffles(&in);
	vec_free(&in.ls.shfl);
	free(in.bufs);
	free(in.vars);
	free(in.rl.slot);
	vec_free(&in.locals);
	return in.failed ? -1 : 0;
}
