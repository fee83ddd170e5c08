/* lower.c — Tile IR kernel -> per-thread SIMT IR (lower.h, docs/lowering.md).
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
#include <math.h>
#include <stdio.h>

#include "lower.h"

typedef struct {
	int64_t smem;   /* shared/fragment: byte offset in the shared area */
	int32_t local;  /* local: local array id */
	int32_t shadow; /* local: private copy in the current parallel body, or -1 */
	int32_t base;   /* global: i64 register holding the pointer */
	int32_t dim[IR_MAX_RANK];   /* global: i32 registers of the dimensions */
	int32_t dim64[IR_MAX_RANK]; /* global: the same as i64 */
	/* register-resident fragment (gemm accumulator in the MMA C layout):
	 * rf >= 0 is the first of rf_n consecutive registers of the buffer's
	 * dtype, f32 or i32 (rf_dtype) */
	int32_t rf, rf_n;
	int16_t rf_nb, rf_ntn;
	uint8_t rf_shape; /* MmaShape of the layout */
	uint8_t rf_dtype; /* DT_F32 or DT_I32 */
	bool rf_agpr;     /* kept in AGPRs (SimtFunc.acc): read and written only by mov */
	/* register-resident element-wise fragment (the vector layout, VfLayout):
	 * vf >= 0 is the first of vf_n consecutive f32 registers */
	int32_t vf, vf_n;
	uint8_t vf_role;  /* VF_TILE, VF_ROW or VF_COL */
} BufLoc;

/* The vector layout of element-wise register fragments (docs/lowering.md).
 * One per kernel, from the tile shape R x C that every tile fragment has:
 * thread t is lane p = t % P of row group g = t / P; it holds rows
 * g + G*kr (g % R when G > R: the row groups beyond R are duplicates) and
 * in each of them the V-element chunks starting at columns (p + P*kc) * V.
 * A row of W = P / 32 > 1 warps combines its warps' partial reductions in
 * shared memory (red_smem: NR x G x W floats). */
typedef struct {
	int R, C;      /* tile shape */
	int V, P, NC;  /* elements per chunk, lanes per row, chunks per lane and row */
	int G, NR;     /* row groups (threads / P), rows per thread */
	int W;         /* warps per row (P / 32, or 1) */
	int64_t red_smem; /* W > 1: byte offset of the partials in the shared area */
	int32_t row0, col0; /* i32 registers: first row, first column */
	int32_t part;       /* W > 1: i32 shared address of this thread's partial for kr = 0 */
	int32_t rowpart;    /* W > 1: i32 shared address of the first partial of its row for kr = 0 */
	int32_t lane0;      /* W > 1: pred, lane 0 of the warp */
	int32_t st_tile, st_col, st_row; /* preds: this thread stores tile / column / row elements (-1: all) */
} VfLayout;

enum { VF_NONE, VF_TILE, VF_ROW, VF_COL };

typedef struct {
	const Module *m;
	const Kernel *k;
	const Target *t;
	SimtFunc *f;
	Diag *d;
	BufLoc *bl;
	int32_t *varreg;
	int32_t tid, shbase;
	int nthreads;
	bool par;        /* inside parallel / per-thread code */
	bool failed;
	/* barrier tracking */
	uint32_t *rd_ep, *wr_ep, epoch;
	bool dirty;
	uint32_t *srd, *swr, sgen;
	uint8_t *ro;     /* buffers no statement of the kernel writes: never a conflict */
	VEC(int32_t) touched;
	int32_t rf_slot;     /* inside a register-fragment parallel body: the element slot, else -1 */
	VfLayout vl;
	int vf_mode;         /* 0: no vector fragments, 1: on */
	int vf_kr, vf_cs;    /* inside a vector-fragment parallel body: the row slot and column slot */
	bool collect_locals; /* collect_*: record written locals instead */
	VEC(int32_t) wlocals;
} L;

#define EX(id) (&c->m->exprs.data[(id)])
#define ST(id) (&c->m->stmts.data[(id)])
#define BUF(id) (&c->m->bufs.data[(id)])
#define VAR(id) (&c->m->vars.data[(id)])

VType simt_vt(DType t)
{
	switch (t) {
	case DT_BOOL: return VT_PRED;
	case DT_I64: return VT_I64;
	case DT_F16: case DT_BF16: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ: case DT_FP8E5M2FNUZ:
	case DT_F32: return VT_F32;
	case DT_F64: return VT_F64;
	default: return VT_I32;
	}
}

VType simt_storage_vt(DType t)
{
	switch (t) {
	case DT_F16: case DT_BF16: return VT_B16;
	case DT_BOOL: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ: case DT_FP8E5M2FNUZ: return VT_I32;
	default: return simt_vt(t);
	}
}

/* The operation type computing in dtype t uses (small types widen). */
static DType op_type(DType t)
{
	switch (t) {
	case DT_I8: case DT_I16: case DT_I32: return DT_I32;
	case DT_U8: case DT_U32: return DT_U32;
	case DT_F16: case DT_BF16: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ: case DT_FP8E5M2FNUZ:
		return DT_F32;
	default: return t;
	}
}

static void fail(L *c, SrcPos pos, const char *fmt, const char *arg)
{
	if (!c->failed)
		diag_at(c->d, DIAG_ERROR, &c->m->src, pos, fmt, arg);
	c->failed = true;
}

/* ---- emission helpers ------------------------------------------------ */

static int32_t reg(L *c, VType vt)
{
	if (vec_push(&c->f->regs, (uint8_t)vt)) {
		c->failed = true;
		return 0;
	}
	return (int32_t)c->f->regs.len - 1;
}

static void emit(L *c, SInst in)
{
	if (vec_push(&c->f->code, in))
		c->failed = true;
}

static SInst I(SOp op, DType t, int32_t dst, int32_t a, int32_t b)
{
	return (SInst){.op = (uint8_t)op, .type = (uint8_t)t, .dst = dst, .a = a, .b = b, .c = -1, .guard = -1};
}

static VType vt_of_op(DType t)
{
	return t == DT_U32 ? VT_I32 : simt_vt(t);
}

static int32_t movi(L *c, DType t, int64_t v)
{
	int32_t r = reg(c, t == DT_F16 || t == DT_BF16 ? VT_B16 : vt_of_op(t));
	SInst in = I(SI_MOVI, t, r, -1, -1);
	in.imm = v;
	emit(c, in);
	return r;
}
static int32_t i32c(L *c, int64_t v) { return movi(c, DT_I32, v); }

static int32_t movf(L *c, DType t, double v)
{
	int32_t r = reg(c, t == DT_F64 ? VT_F64 : VT_F32);
	SInst in = I(SI_MOVF, t == DT_F64 ? DT_F64 : DT_F32, r, -1, -1);
	in.fimm = v;
	emit(c, in);
	return r;
}

static int32_t bin(L *c, SOp op, DType t, int32_t a, int32_t b)
{
	int32_t r = reg(c, vt_of_op(t));
	emit(c, I(op, t, r, a, b));
	return r;
}

static int32_t un(L *c, SOp op, DType t, int32_t a)
{
	return bin(c, op, t, a, -1);
}

static int32_t setp(L *c, Cmp cmp, DType t, int32_t a, int32_t b)
{
	int32_t r = reg(c, VT_PRED);
	SInst in = I(SI_SETP, t, r, a, b);
	in.sub = (uint8_t)cmp;
	emit(c, in);
	return r;
}

static int32_t selp(L *c, DType t, int32_t p, int32_t a, int32_t b)
{
	int32_t r = reg(c, vt_of_op(t));
	SInst in = I(SI_SELP, t, r, a, b);
	in.c = p;
	emit(c, in);
	return r;
}

static int32_t label(L *c) { return c->f->nlabels++; }

static void place(L *c, int32_t lbl)
{
	SInst in = I(SI_LABEL, DT_VOID, -1, -1, -1);
	in.imm = lbl;
	emit(c, in);
}

/* goto lbl [if p (or !p when neg)] */
static void bra(L *c, int32_t lbl, int32_t p, bool neg)
{
	SInst in = I(SI_BRA, DT_VOID, -1, -1, -1);
	in.imm = lbl;
	in.guard = p;
	in.guard_neg = neg;
	emit(c, in);
}

static void barrier(L *c)
{
	emit(c, I(SI_BAR, DT_VOID, -1, -1, -1));
	c->epoch++;
	c->dirty = false;
}

/* Canonical of `to` from canonical of `from`. */
/* Slot e of register fragment b as a value: the register itself, or for
 * an AGPR fragment a copy (only moves may name those registers). */
static int32_t rf_get(L *c, int32_t b, int e)
{
	const BufLoc *bl = &c->bl[b];
	if (!bl->rf_agpr)
		return bl->rf + e;
	int32_t r = reg(c, simt_vt((DType)bl->rf_dtype));
	emit(c, I(SI_MOV, (DType)bl->rf_dtype, r, bl->rf + e, -1));
	return r;
}

static int32_t cvt(L *c, DType to, DType from, int32_t a)
{
	if (to == from)
		return a;
	int32_t r = reg(c, simt_vt(to));
	SInst in = I(SI_CVT, to, r, a, -1);
	in.type2 = (uint8_t)from;
	emit(c, in);
	return r;
}

/* Round an op_type result back to dtype t (small floats, small ints). */
static int32_t fix(L *c, DType t, int32_t r)
{
	DType o = op_type(t);
	return o == t ? r : cvt(c, t, o, r);
}

static int32_t ld(L *c, Space sp, DType t, int32_t addr, int64_t off, int32_t guard)
{
	int32_t r = reg(c, simt_storage_vt(t));
	SInst in = I(SI_LD, t, r, addr, -1);
	in.sub = (uint8_t)sp;
	in.imm = off;
	in.guard = guard;
	emit(c, in);
	return r;
}

static void st(L *c, Space sp, DType t, int32_t addr, int64_t off, int32_t val, int32_t guard)
{
	SInst in = I(SI_ST, t, -1, addr, val);
	in.sub = (uint8_t)sp;
	in.imm = off;
	in.guard = guard;
	emit(c, in);
}

static int32_t unpack(L *c, DType t, int32_t s)
{
	if (simt_vt(t) == simt_storage_vt(t) && !dtype_is_fp8(t))
		return s;
	int32_t r = reg(c, simt_vt(t));
	emit(c, I(SI_UNPACK, t, r, s, -1));
	return r;
}

static int32_t pack(L *c, DType t, int32_t v)
{
	if (simt_vt(t) == simt_storage_vt(t) && !dtype_is_fp8(t))
		return v;
	int32_t r = reg(c, simt_storage_vt(t));
	emit(c, I(SI_PACK, t, r, v, -1));
	return r;
}

static int32_t zero_storage(L *c, DType t)
{
	switch (simt_storage_vt(t)) {
	case VT_B16: return movi(c, DT_F16, 0);
	case VT_I64: return movi(c, DT_I64, 0);
	case VT_F32: return movf(c, DT_F32, 0);
	case VT_F64: return movf(c, DT_F64, 0);
	default: return i32c(c, 0);
	}
}

static int32_t zero_canon(L *c, DType t)
{
	switch (simt_vt(t)) {
	case VT_PRED: return movi(c, DT_BOOL, 0);
	case VT_I64: return movi(c, DT_I64, 0);
	case VT_F32: return movf(c, DT_F32, 0);
	case VT_F64: return movf(c, DT_F64, 0);
	default: return i32c(c, 0);
	}
}

/* ---- addresses --------------------------------------------------------- */

typedef struct {
	Space sp;
	int32_t addr;
	int64_t off;
} Addr;

static int64_t bdim(L *c, const Buffer *b, int d) { return ir_buf_dim(c->m, b, d); }

/* Address of element idx (i32 registers, a full index) of buffer b. */
static Addr elem_addr(L *c, int32_t bufid, const int32_t *idx)
{
	const Buffer *b = BUF(bufid);
	const BufLoc *bl = &c->bl[bufid];
	int es = dtype_bytes((DType)b->dtype);
	if (b->scope == SCOPE_GLOBAL) {
		int32_t lin = cvt(c, DT_I64, DT_I32, idx[0]);
		for (int d = 1; d < b->rank; d++) {
			lin = bin(c, SI_MUL, DT_I64, lin, bl->dim64[d]);
			lin = bin(c, SI_ADD, DT_I64, lin, cvt(c, DT_I64, DT_I32, idx[d]));
		}
		lin = bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es));
		return (Addr){SP_GLOBAL, bin(c, SI_ADD, DT_I64, bl->base, lin), 0};
	}
	int32_t lin = idx[0];
	for (int d = 1; d < b->rank; d++)
		lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, lin, i32c(c, bdim(c, b, d))), idx[d]);
	lin = bin(c, SI_MUL, DT_I32, lin, i32c(c, es));
	if (b->scope == SCOPE_LOCAL) {
		int32_t la = reg(c, VT_I64);
		SInst in = I(SI_LOCALADDR, DT_I64, la, -1, -1);
		in.imm = bl->shadow >= 0 ? bl->shadow : bl->local;
		emit(c, in);
		return (Addr){SP_LOCAL, bin(c, SI_ADD, DT_I64, la, cvt(c, DT_I64, DT_I32, lin)), 0};
	}
	return (Addr){SP_SHARED, bin(c, SI_ADD, DT_I32, c->shbase, lin), bl->smem};
}

static int32_t load_elem(L *c, int32_t bufid, const int32_t *idx, int32_t guard)
{
	DType t = (DType)BUF(bufid)->dtype;
	Addr a = elem_addr(c, bufid, idx);
	return unpack(c, t, ld(c, a.sp, t, a.addr, a.off, guard));
}

static void store_elem(L *c, int32_t bufid, const int32_t *idx, int32_t val, int32_t guard)
{
	DType t = (DType)BUF(bufid)->dtype;
	Addr a = elem_addr(c, bufid, idx);
	st(c, a.sp, t, a.addr, a.off, pack(c, t, val), guard);
}

/* ---- expressions ------------------------------------------------------- */

static int32_t expr(L *c, int32_t e);
static int32_t vf_reg(L *c, int32_t b);

static int32_t expr_as(L *c, int32_t e, DType t)
{
	return cvt(c, t, (DType)EX(e)->type, expr(c, e));
}

/* Python floor division / modulo on signed ints (op type t). */
static int32_t floordivmod(L *c, DType t, int32_t a, int32_t b, bool mod)
{
	if (t == DT_U32)
		return bin(c, mod ? SI_REM : SI_DIV, t, a, b);
	int32_t q = bin(c, SI_DIV, t, a, b), r = bin(c, SI_REM, t, a, b);
	int32_t z = t == DT_I64 ? movi(c, DT_I64, 0) : i32c(c, 0);
	/* adjust when r != 0 and sign(r) != sign(b) */
	int32_t rnz = setp(c, CMP_NE, t, r, z);
	int32_t sx = bin(c, SI_XOR, t, r, b);
	int32_t neg = setp(c, CMP_LT, t, sx, z);
	int32_t adj = bin(c, SI_AND, DT_BOOL, rnz, neg);
	if (mod)
		return selp(c, t, adj, bin(c, SI_ADD, t, r, b), r);
	int32_t one = t == DT_I64 ? movi(c, DT_I64, 1) : i32c(c, 1);
	return selp(c, t, adj, bin(c, SI_SUB, t, q, one), q);
}

static int32_t math(L *c, MathOp mo, int32_t a)
{
	int32_t r = reg(c, VT_F32);
	SInst in = I(SI_MATH, DT_F32, r, a, -1);
	in.sub = (uint8_t)mo;
	emit(c, in);
	return r;
}

/* Transcendentals in f32 (f64 goes through f32 except sqrt). */
static int32_t transcend(L *c, Op op, DType t, int32_t x)
{
	if (t == DT_F64 && (op == OP_SQRT || op == OP_RSQRT)) {
		int32_t r = reg(c, VT_F64);
		SInst in = I(SI_MATH, DT_F64, r, x, -1);
		in.sub = MATH_SQRT;
		emit(c, in);
		return op == OP_SQRT ? r : bin(c, SI_DIV, DT_F64, movf(c, DT_F64, 1.0), r);
	}
	if (t == DT_F64)
		x = cvt(c, DT_F32, DT_F64, x);
	int32_t r;
	switch (op) {
	case OP_EXP: r = math(c, MATH_EX2, bin(c, SI_MUL, DT_F32, x, movf(c, DT_F32, 1.4426950408889634))); break;
	case OP_EXP2: r = math(c, MATH_EX2, x); break;
	case OP_LOG: r = bin(c, SI_MUL, DT_F32, math(c, MATH_LG2, x), movf(c, DT_F32, 0.6931471805599453)); break;
	case OP_LOG2: r = math(c, MATH_LG2, x); break;
	case OP_SQRT: r = math(c, MATH_SQRT, x); break;
	case OP_RSQRT: r = bin(c, SI_DIV, DT_F32, movf(c, DT_F32, 1.0), math(c, MATH_SQRT, x)); break;
	default: { /* tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|) */
		int32_t ax = un(c, SI_ABS, DT_F32, x);
		int32_t e = math(c, MATH_EX2, bin(c, SI_MUL, DT_F32, ax, movf(c, DT_F32, -2.8853900817779268)));
		int32_t one = movf(c, DT_F32, 1.0);
		int32_t v = bin(c, SI_DIV, DT_F32, bin(c, SI_SUB, DT_F32, one, e), bin(c, SI_ADD, DT_F32, one, e));
		/* small |x|: tanh(x) ~ x - x^3/3 keeps relative accuracy */
		int32_t x3 = bin(c, SI_MUL, DT_F32, bin(c, SI_MUL, DT_F32, ax, ax), ax);
		int32_t s = bin(c, SI_SUB, DT_F32, ax, bin(c, SI_MUL, DT_F32, x3, movf(c, DT_F32, 1.0 / 3.0)));
		v = selp(c, DT_F32, setp(c, CMP_LT, DT_F32, ax, movf(c, DT_F32, 0.004)), s, v);
		int32_t neg = setp(c, CMP_LT, DT_F32, x, movf(c, DT_F32, 0));
		v = selp(c, DT_F32, neg, un(c, SI_NEG, DT_F32, v), v);
		/* NaN in, NaN out */
		r = selp(c, DT_F32, setp(c, CMP_NE, DT_F32, x, x), x, v);
		break;
	}
	}
	if (t == DT_F64)
		return cvt(c, DT_F64, DT_F32, r);
	return fix(c, t, r);
}

static int32_t var_value(L *c, int32_t v, SrcPos pos)
{
	const Var *var = VAR(v);
	if (var->kind == V_SYMBOL && var->has_value)
		return i32c(c, var->value);
	if (c->varreg[v] < 0) {
		fail(c, pos, "internal: variable '%s' has no value in the lowering", var->name);
		return reg(c, simt_vt((DType)var->type));
	}
	return c->varreg[v];
}

static int32_t expr(L *c, int32_t id)
{
	const Expr *e = EX(id);
	DType t = (DType)e->type;
	switch ((ExprKind)e->kind) {
	case E_INT:
		if (dtype_is_float(t))
			return fix(c, t, movf(c, t == DT_F64 ? DT_F64 : DT_F32, (double)e->ival));
		return t == DT_BOOL ? movi(c, DT_BOOL, e->ival != 0) : movi(c, op_type(t), e->ival);
	case E_FLOAT:
		if (!dtype_is_float(t))
			return movi(c, op_type(t == DT_VOID ? DT_I32 : t), (int64_t)e->fval);
		return fix(c, t, movf(c, t == DT_F64 ? DT_F64 : DT_F32, e->fval));
	case E_BOOL: return movi(c, DT_BOOL, e->ival != 0);
	case E_VAR: return var_value(c, e->var, e->pos);
	case E_LOAD: {
		if (c->bl[e->buf].vf >= 0)
			return vf_reg(c, e->buf);
		if (c->bl[e->buf].rf >= 0) /* eligibility guarantees F[i, j] of the current slot */
			return rf_get(c, e->buf, c->rf_slot);
		int32_t idx[IR_MAX_RANK];
		for (int i = 0; i < e->nargs; i++)
			idx[i] = expr_as(c, e->args[i], DT_I32);
		return load_elem(c, e->buf, idx, -1);
	}
	case E_CAST: return expr_as(c, e->a, (DType)e->cast_to);
	case E_UNARY: {
		if (e->op == OP_NOT)
			return un(c, SI_NOT, DT_BOOL, expr_as(c, e->a, DT_BOOL));
		int32_t a = expr_as(c, e->a, t);
		DType o = op_type(t);
		if (o == DT_U32)
			return fix(c, t, bin(c, SI_SUB, o, i32c(c, 0), a));
		return fix(c, t, un(c, SI_NEG, o, a));
	}
	case E_BINARY: {
		Op op = (Op)e->op;
		if (op == OP_AND || op == OP_OR)
			return bin(c, op == OP_AND ? SI_AND : SI_OR, DT_BOOL, expr_as(c, e->a, DT_BOOL),
			           expr_as(c, e->b, DT_BOOL));
		if (op >= OP_EQ && op <= OP_GE) {
			DType ta = (DType)EX(e->a)->type;
			if (ta == DT_VOID)
				ta = (DType)EX(e->b)->type;
			int32_t a = expr_as(c, e->a, ta), b = expr_as(c, e->b, ta);
			if (ta == DT_BOOL) { /* compare preds as 0/1 */
				a = cvt(c, DT_I32, DT_BOOL, a);
				b = cvt(c, DT_I32, DT_BOOL, b);
				ta = DT_I32;
			}
			static const Cmp cm[] = {CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE};
			return setp(c, cm[op - OP_EQ], op_type(ta), a, b);
		}
		DType o = op_type(t);
		int32_t a = expr_as(c, e->a, t), b = expr_as(c, e->b, t);
		switch (op) {
		case OP_ADD: return fix(c, t, bin(c, SI_ADD, o, a, b));
		case OP_SUB: return fix(c, t, bin(c, SI_SUB, o, a, b));
		case OP_MUL: return fix(c, t, bin(c, SI_MUL, o, a, b));
		case OP_DIV: return fix(c, t, bin(c, SI_DIV, o, a, b));
		case OP_FLOORDIV:
		case OP_MOD:
			if (dtype_is_float(t)) {
				fail(c, e->pos, "floor division of floats is not supported by the %s backend", "PTX");
				return a;
			}
			return fix(c, t, floordivmod(c, o, a, b, op == OP_MOD));
		default: fail(c, e->pos, "internal: unexpected operator%s", ""); return a;
		}
	}
	case E_CALL: {
		Op op = (Op)e->op;
		DType o = op_type(t);
		if (op == OP_SELECT) {
			int32_t p = expr_as(c, e->args[0], DT_BOOL);
			int32_t a = expr_as(c, e->args[1], t), b = expr_as(c, e->args[2], t);
			if (t == DT_BOOL)
				return bin(c, SI_OR, DT_BOOL, bin(c, SI_AND, DT_BOOL, p, a),
				           bin(c, SI_AND, DT_BOOL, un(c, SI_NOT, DT_BOOL, p), b));
			return selp(c, t, p, a, b);
		}
		if (op == OP_MIN || op == OP_MAX)
			return bin(c, op == OP_MIN ? SI_MIN : SI_MAX, o, expr_as(c, e->args[0], t),
			           expr_as(c, e->args[1], t));
		if (op == OP_ABS)
			return o == DT_U32 ? expr_as(c, e->args[0], t) : fix(c, t, un(c, SI_ABS, o, expr_as(c, e->args[0], t)));
		if (op == OP_CEILDIV) {
			/* ceildiv(a, b) = -((-a) // b) */
			int32_t a = expr_as(c, e->args[0], t), b = expr_as(c, e->args[1], t);
			if (o == DT_U32) {
				int32_t s = bin(c, SI_SUB, o, bin(c, SI_ADD, o, a, b), i32c(c, 1));
				return fix(c, t, bin(c, SI_DIV, o, s, b));
			}
			int32_t q = floordivmod(c, o, un(c, SI_NEG, o, a), b, false);
			return fix(c, t, un(c, SI_NEG, o, q));
		}
		return transcend(c, op, t, expr_as(c, e->args[0], t));
	}
	}
	return 0;
}

/* ---- access sets for barrier placement ---------------------------------- */

static bool tracked(L *c, int32_t b)
{
	return BUF(b)->scope != SCOPE_LOCAL && c->bl[b].rf < 0 && c->bl[b].vf < 0 && !(c->ro && c->ro[b]);
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
	uint32_t *s = write ? c->swr : c->srd;
	if (c->srd[b] != c->sgen && c->swr[b] != c->sgen)
		if (vec_push(&c->touched, b))
			c->failed = true;
	s[b] = c->sgen;
}

static void collect_expr(L *c, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD)
		touch(c, e->buf, false);
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		collect_expr(c, e->a);
		if (e->kind == E_BINARY)
			collect_expr(c, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			collect_expr(c, e->args[i]);
}

static void collect_region(L *c, const Region *r, bool write)
{
	if (r->buf < 0)
		return;
	touch(c, r->buf, write);
	for (int i = 0; i < r->nidx; i++)
		collect_expr(c, r->idx[i]);
}

static void collect_stmt(L *c, int32_t id);

static void collect_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		collect_stmt(c, b->ids[i]);
}

static void collect_stmt(L *c, int32_t id)
{
	const Stmt *s = ST(id);
	collect_expr(c, s->value);
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
		collect_expr(c, s->lo);
		collect_expr(c, s->hi);
		collect_block(c, &s->body);
		break;
	case S_IF:
		collect_block(c, &s->body);
		collect_block(c, &s->els);
		break;
	case S_PARALLEL: collect_block(c, &s->body); break;
	default: break;
	}
}

/* Barrier before statement id if it conflicts with accesses since the last
 * barrier; then records its accesses. */
static void sync_for(L *c, int32_t id)
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
		barrier(c);
	for (size_t i = 0; i < c->touched.len; i++) {
		int32_t b = c->touched.data[i];
		if (c->srd[b] == c->sgen)
			c->rd_ep[b] = c->epoch;
		if (c->swr[b] == c->sgen)
			c->wr_ep[b] = c->epoch;
		c->dirty = true;
	}
}

static void flush(L *c)
{
	if (c->dirty)
		barrier(c);
}

/* ---- loops over elements ------------------------------------------------ */

typedef struct {
	int32_t p, top, end, step;
} DLoop;

/* for (p = dist ? tid : 0; p < total; p += dist ? threads : 1) */
static DLoop dloop_begin(L *c, int64_t total, bool dist)
{
	DLoop l;
	l.p = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, l.p, dist ? c->tid : i32c(c, 0), -1));
	l.step = i32c(c, dist ? c->nthreads : 1);
	l.top = label(c);
	l.end = label(c);
	int32_t tot = i32c(c, total);
	place(c, l.top);
	bra(c, l.end, setp(c, CMP_GE, DT_I32, l.p, tot), false);
	return l;
}

static void dloop_end(L *c, DLoop *l)
{
	emit(c, I(SI_ADD, DT_I32, l->p, l->p, l->step));
	bra(c, l->top, -1, false);
	place(c, l->end);
}

/* idx[0..r) = multi-index of linear p in shape ext (row-major). */
static void decompose(L *c, int32_t p, const int64_t *ext, int r, int32_t *idx)
{
	for (int d = r - 1; d >= 0; d--) {
		if (d == 0) {
			idx[0] = p;
			break;
		}
		int32_t e = i32c(c, ext[d]);
		idx[d] = ext[d] == 1 ? i32c(c, 0) : bin(c, SI_REM, DT_U32, p, e);
		p = ext[d] == 1 ? p : bin(c, SI_DIV, DT_U32, p, e);
	}
}

static void shape_of(L *c, const Buffer *b, int64_t *ext, int64_t *total)
{
	*total = 1;
	for (int d = 0; d < b->rank; d++) {
		ext[d] = bdim(c, b, d);
		*total *= ext[d];
	}
}

/* pred: idx (per dim, i32) lies inside global buffer b. */
static int32_t inbounds(L *c, int32_t bufid, const int32_t *idx)
{
	const Buffer *b = BUF(bufid);
	int32_t ok = -1;
	for (int d = 0; d < b->rank; d++) {
		/* unsigned compare catches negative indices too */
		int32_t in = setp(c, CMP_LT, DT_U32, idx[d], c->bl[bufid].dim[d]);
		ok = ok < 0 ? in : bin(c, SI_AND, DT_BOOL, ok, in);
	}
	return ok;
}

/* Region index: offsets + tile index (or the tile index for whole buffers). */
static void region_idx(L *c, const Region *r, const int32_t *ti, int rank, int32_t *out)
{
	for (int d = 0; d < rank; d++)
		out[d] = r->nidx ? bin(c, SI_ADD, DT_I32, expr_as(c, r->idx[d], DT_I32), ti[d]) : ti[d];
}

/* ---- statements ----------------------------------------------------------- */

static void stmt(L *c, int32_t id);
static int32_t rf_find_block(L *c, const Block *b);
static void lower_parallel_rf(L *c, const Stmt *s, int32_t F);
static void copy_rf(L *c, const Stmt *s);
static void lower_gemm_mma_rf(L *c, const Stmt *s, int64_t K);
static void lower_gemm_amd(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K);
static void lower_gemm_amd_rf(L *c, const Stmt *s, int64_t K);
static bool vf_find_block(L *c, const Block *b);
static void lower_parallel_vf(L *c, const Stmt *s);
static void copy_vf(L *c, const Stmt *s);
static void reduce_vf(L *c, const Stmt *s);

static void block(L *c, const Block *b)
{
	for (int i = 0; i < b->n && !c->failed; i++) {
		const Stmt *s = ST(b->ids[i]);
		/* loops and uniform ifs flush around their bodies themselves */
		bool compound = s->kind == S_FOR || (s->kind == S_IF && !s->per_thread);
		if (!c->par && !compound)
			sync_for(c, b->ids[i]);
		stmt(c, b->ids[i]);
	}
}

/* Private copies of the locals a parallel/per-thread body writes: set up
 * at the start of each iteration, dropped at its end. */
typedef struct {
	size_t n;
	int32_t bufs[16];
} Shadows;

static void shadows_begin(L *c, const Block *body, Shadows *sh, int32_t *shadow_ids)
{
	c->collect_locals = true;
	c->wlocals.len = 0;
	collect_block(c, body);
	c->collect_locals = false;
	sh->n = 0;
	for (size_t i = 0; i < c->wlocals.len && sh->n < 16; i++) {
		int32_t b = c->wlocals.data[i];
		if (c->bl[b].shadow >= 0)
			continue;
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

static void shadows_copy(L *c, Shadows *sh)
{
	for (size_t i = 0; i < sh->n; i++) {
		int32_t b = sh->bufs[i];
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

static void shadows_end(L *c, Shadows *sh)
{
	for (size_t i = 0; i < sh->n; i++)
		c->bl[sh->bufs[i]].shadow = -1;
}

static void lower_parallel(L *c, const Stmt *s)
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
	shadows_begin(c, &s->body, &sh, ids);
	bool was = c->par;
	c->par = true;
	DLoop l = dloop_begin(c, total, true);
	int32_t idx[IR_MAX_RANK];
	decompose(c, l.p, ext, s->nvars, idx);
	for (int i = 0; i < s->nvars; i++)
		c->varreg[s->vars[i]] = cvt(c, (DType)VAR(s->vars[i])->type, DT_I32, idx[i]);
	shadows_copy(c, &sh);
	block(c, &s->body);
	dloop_end(c, &l);
	c->par = was;
	shadows_end(c, &sh);
}

static void lower_for(L *c, const Stmt *s)
{
	DType t = (DType)VAR(s->var)->type;
	if (t == DT_VOID)
		t = DT_I32;
	DType o = op_type(t);
	if (!c->par) { /* the bounds may read memory written before */
		flush(c);
		c->sgen++;
		c->touched.len = 0;
		collect_expr(c, s->lo);
		collect_expr(c, s->hi);
		c->dirty = c->touched.len > 0;
	}
	int32_t i = reg(c, simt_vt(t));
	emit(c, I(SI_MOV, o, i, expr_as(c, s->lo, t), -1));
	int32_t hi = reg(c, simt_vt(t));
	emit(c, I(SI_MOV, o, hi, expr_as(c, s->hi, t), -1));
	c->varreg[s->var] = i;
	if (!c->par)
		flush(c);
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, o, i, hi), false);
	block(c, &s->body);
	if (!c->par)
		flush(c);
	emit(c, I(SI_ADD, o, i, i, o == DT_I64 ? movi(c, DT_I64, 1) : i32c(c, 1)));
	bra(c, top, -1, false);
	place(c, end);
}

static void lower_if(L *c, const Stmt *s)
{
	bool was = c->par;
	Shadows sh = {0};
	int32_t ids[16];
	if (!c->par && !s->per_thread)
		flush(c);
	if (s->per_thread && !c->par) {
		c->par = true;
		Block both = s->body; /* shadows for both branches */
		shadows_begin(c, &both, &sh, ids);
		Shadows sh2;
		shadows_begin(c, &s->els, &sh2, ids + sh.n);
		for (size_t i = 0; i < sh2.n && sh.n < 16; i++)
			sh.bufs[sh.n++] = sh2.bufs[i];
		shadows_copy(c, &sh);
	}
	int32_t p = expr_as(c, s->value, DT_BOOL);
	if (!c->par) { /* the condition may read memory the bodies write */
		c->sgen++;
		c->touched.len = 0;
		collect_expr(c, s->value);
		if (c->touched.len)
			barrier(c);
	}
	int32_t lelse = label(c), lend = label(c);
	bra(c, lelse, p, true);
	block(c, &s->body);
	if (!c->par)
		flush(c);
	bra(c, lend, -1, false);
	place(c, lelse);
	block(c, &s->els);
	if (!c->par)
		flush(c);
	place(c, lend);
	shadows_end(c, &sh);
	c->par = was;
}

/* Block-level element stores to shared/global memory are done by thread 0
 * (all threads would race on read-modify-write code). */
static int32_t single_thread_guard(L *c, int32_t bufid)
{
	if (c->par || BUF(bufid)->scope == SCOPE_LOCAL)
		return -1;
	return setp(c, CMP_EQ, DT_I32, c->tid, i32c(c, 0));
}

static void lower_store(L *c, const Stmt *s)
{
	const Buffer *b = BUF(s->dst.buf);
	if (c->bl[s->dst.buf].vf >= 0) {
		emit(c, I(SI_MOV, DT_F32, vf_reg(c, s->dst.buf), expr_as(c, s->value, DT_F32), -1));
		return;
	}
	if (c->bl[s->dst.buf].rf >= 0) {
		DType ft = (DType)c->bl[s->dst.buf].rf_dtype;
		emit(c, I(SI_MOV, ft, c->bl[s->dst.buf].rf + c->rf_slot, expr_as(c, s->value, ft), -1));
		return;
	}
	int32_t idx[IR_MAX_RANK];
	for (int i = 0; i < s->dst.nidx; i++)
		idx[i] = expr_as(c, s->dst.idx[i], DT_I32);
	int32_t v = expr_as(c, s->value, (DType)b->dtype);
	store_elem(c, s->dst.buf, idx, v, single_thread_guard(c, s->dst.buf));
}

/* Elements per 16-byte vector for a same-dtype copy that can move whole
 * vectors: the tile's rows and every on-chip side's row pitch and constant
 * column offset are multiples of it.  0 if not. */
static int copy_vec_width(L *c, const Stmt *s, const int64_t *ext, int rank)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	if (a->dtype != b->dtype || a->scope == SCOPE_LOCAL || b->scope == SCOPE_LOCAL)
		return 0;
	int es = dtype_bytes((DType)a->dtype), V = 16 / es;
	if (es > 8 || ext[rank - 1] % V)
		return 0;
	const Region *rg[2] = {&s->src, &s->dst};
	for (int k = 0; k < 2; k++) {
		const Buffer *x = BUF(rg[k]->buf);
		if (x->scope == SCOPE_GLOBAL)
			continue;
		int64_t off = 0;
		if (bdim(c, x, rank - 1) % V || (c->bl[rg[k]->buf].smem % 16))
			return 0;
		if (rg[k]->nidx && (!ir_const_int(c->m, rg[k]->idx[rank - 1], &off) || off % V))
			return 0;
	}
	return V;
}

/* pred: the global side of a copy allows 16-byte vectors at run time
 * (16-byte aligned base, row length and column offset multiples of V). */
static int32_t copy_vec_aligned(L *c, const Region *r, int V)
{
	const Buffer *g = BUF(r->buf);
	const BufLoc *bl = &c->bl[r->buf];
	int rank = g->rank;
	int32_t lo = reg(c, VT_I32);
	SInst cv = I(SI_CVT, DT_I32, lo, bl->base, -1);
	cv.type2 = DT_I64;
	emit(c, cv);
	int32_t ok = setp(c, CMP_EQ, DT_I32, bin(c, SI_AND, DT_I32, lo, i32c(c, 15)), i32c(c, 0));
	int32_t pitch = bin(c, SI_AND, DT_I32, bl->dim[rank - 1], i32c(c, V - 1));
	ok = bin(c, SI_AND, DT_BOOL, ok, setp(c, CMP_EQ, DT_I32, pitch, i32c(c, 0)));
	if (r->nidx) {
		int32_t off = bin(c, SI_AND, DT_I32, expr_as(c, r->idx[rank - 1], DT_I32), i32c(c, V - 1));
		ok = bin(c, SI_AND, DT_BOOL, ok, setp(c, CMP_EQ, DT_I32, off, i32c(c, 0)));
	}
	return ok;
}

/* The vector path: each step moves 16 bytes; a vector is entirely inside
 * or outside the global tensor because everything is V-aligned. */
static void copy_vectors(L *c, const Stmt *s, const int64_t *ext, int rank, int V)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	int64_t vext[IR_MAX_RANK], total = 1;
	for (int d = 0; d < rank; d++) {
		vext[d] = d == rank - 1 ? ext[d] / V : ext[d];
		total *= vext[d];
	}
	DLoop l = dloop_begin(c, total, true);
	int32_t ti[IR_MAX_RANK], si[IR_MAX_RANK], di[IR_MAX_RANK];
	decompose(c, l.p, vext, rank, ti);
	ti[rank - 1] = bin(c, SI_MUL, DT_I32, ti[rank - 1], i32c(c, V));
	region_idx(c, &s->src, ti, rank, si);
	region_idx(c, &s->dst, ti, rank, di);
	int32_t sok = a->scope == SCOPE_GLOBAL ? inbounds(c, s->src.buf, si) : -1;
	int32_t dok = b->scope == SCOPE_GLOBAL ? inbounds(c, s->dst.buf, di) : -1;
	Addr sa = elem_addr(c, s->src.buf, si);
	int32_t v = (int32_t)c->f->regs.len;
	for (int i = 0; i < 4; i++)
		reg(c, VT_I32);
	if (sok >= 0)
		for (int i = 0; i < 4; i++) {
			SInst z = I(SI_MOVI, DT_I32, v + i, -1, -1);
			emit(c, z);
		}
	SInst ldv = I(SI_LD, DT_I32, v, sa.addr, -1);
	ldv.sub = (uint8_t)sa.sp;
	ldv.imm = sa.off;
	ldv.vec = 4;
	ldv.guard = sok;
	emit(c, ldv);
	Addr da = elem_addr(c, s->dst.buf, di);
	SInst stv = I(SI_ST, DT_I32, -1, da.addr, v);
	stv.sub = (uint8_t)da.sp;
	stv.imm = da.off;
	stv.vec = 4;
	stv.guard = dok;
	emit(c, stv);
	dloop_end(c, &l);
}

static void copy_elements(L *c, const Stmt *s, const int64_t *ext, int64_t total);

static void lower_copy(L *c, const Stmt *s)
{
	if (c->bl[s->src.buf].vf >= 0 || c->bl[s->dst.buf].vf >= 0) {
		copy_vf(c, s);
		return;
	}
	if (c->bl[s->src.buf].rf >= 0 || c->bl[s->dst.buf].rf >= 0) {
		copy_rf(c, s);
		return;
	}
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	bool a_whole = a->scope != SCOPE_GLOBAL && !s->src.nidx;
	const Buffer *ext_b = a_whole ? a : b;
	int64_t ext[IR_MAX_RANK], total;
	shape_of(c, ext_b, ext, &total);
	int V = copy_vec_width(c, s, ext, a->rank);
	if (!V) {
		copy_elements(c, s, ext, total);
		return;
	}
	/* uniform branch: vectors when the global side is aligned */
	int32_t ok = -1;
	if (a->scope == SCOPE_GLOBAL)
		ok = copy_vec_aligned(c, &s->src, V);
	if (b->scope == SCOPE_GLOBAL) {
		int32_t o2 = copy_vec_aligned(c, &s->dst, V);
		ok = ok < 0 ? o2 : bin(c, SI_AND, DT_BOOL, ok, o2);
	}
	if (ok < 0) {
		copy_vectors(c, s, ext, a->rank, V);
		return;
	}
	int32_t lscalar = label(c), lend = label(c);
	bra(c, lscalar, ok, true);
	copy_vectors(c, s, ext, a->rank, V);
	bra(c, lend, -1, false);
	place(c, lscalar);
	copy_elements(c, s, ext, total);
	place(c, lend);
}

/* One element per step, with conversion when the dtypes differ. */
static void copy_elements(L *c, const Stmt *s, const int64_t *ext, int64_t total)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	DType ta = (DType)a->dtype, tb = (DType)b->dtype;
	DLoop l = dloop_begin(c, total, b->scope != SCOPE_LOCAL);
	int32_t ti[IR_MAX_RANK], si[IR_MAX_RANK], di[IR_MAX_RANK];
	decompose(c, l.p, ext, a->rank, ti);
	region_idx(c, &s->src, ti, a->rank, si);
	region_idx(c, &s->dst, ti, b->rank, di);
	int32_t sok = a->scope == SCOPE_GLOBAL ? inbounds(c, s->src.buf, si) : -1;
	int32_t dok = b->scope == SCOPE_GLOBAL ? inbounds(c, s->dst.buf, di) : -1;
	Addr sa = elem_addr(c, s->src.buf, si);
	int32_t v;
	if (sok >= 0) {
		v = zero_storage(c, ta);
		SInst in = I(SI_LD, ta, v, sa.addr, -1);
		in.sub = (uint8_t)sa.sp;
		in.imm = sa.off;
		in.guard = sok;
		emit(c, in);
	} else {
		v = ld(c, sa.sp, ta, sa.addr, sa.off, -1);
	}
	if (ta != tb)
		v = pack(c, tb, cvt(c, tb, ta, unpack(c, ta, v)));
	Addr da = elem_addr(c, s->dst.buf, di);
	st(c, da.sp, tb, da.addr, da.off, v, dok);
	dloop_end(c, &l);
}

static void lower_fill(L *c, const Stmt *s)
{
	const Buffer *b = BUF(s->dst.buf);
	DType t = (DType)b->dtype;
	int32_t v = s->kind == S_CLEAR ? zero_canon(c, t) : expr_as(c, s->value, t);
	if (c->bl[s->dst.buf].vf >= 0) {
		for (int e = 0; e < c->bl[s->dst.buf].vf_n; e++)
			emit(c, I(SI_MOV, t, c->bl[s->dst.buf].vf + e, v, -1));
		return;
	}
	if (c->bl[s->dst.buf].rf >= 0) {
		for (int e = 0; e < c->bl[s->dst.buf].rf_n; e++)
			emit(c, I(SI_MOV, t, c->bl[s->dst.buf].rf + e, v, -1));
		return;
	}
	v = pack(c, t, v);
	int64_t ext[IR_MAX_RANK], total;
	shape_of(c, b, ext, &total);
	DLoop l = dloop_begin(c, total, b->scope != SCOPE_LOCAL);
	int32_t idx[IR_MAX_RANK];
	decompose(c, l.p, ext, b->rank, idx);
	Addr da = elem_addr(c, s->dst.buf, idx);
	st(c, da.sp, t, da.addr, da.off, v, -1);
	dloop_end(c, &l);
}

static void lower_atomic(L *c, const Stmt *s)
{
	const Buffer *g = BUF(s->dst.buf);
	DType t = (DType)g->dtype;
	if (t != DT_F32 && t != DT_I32 && t != DT_U32 && t != DT_I64 && t != DT_F64 && t != DT_F16) {
		fail(c, s->pos, "atomic_add on %s tensors is not supported by the PTX backend", dtype_name(t));
		return;
	}
	if (s->value >= 0) {
		int32_t idx[IR_MAX_RANK];
		for (int i = 0; i < s->dst.nidx; i++)
			idx[i] = expr_as(c, s->dst.idx[i], DT_I32);
		int32_t v = pack(c, t, expr_as(c, s->value, t));
		Addr a = elem_addr(c, s->dst.buf, idx);
		SInst in = I(SI_ATOM_ADD, t, -1, a.addr, v);
		in.guard = single_thread_guard(c, s->dst.buf);
		emit(c, in);
		return;
	}
	const Buffer *x = BUF(s->src.buf);
	int64_t ext[IR_MAX_RANK], total;
	shape_of(c, x, ext, &total);
	DLoop l = dloop_begin(c, total, true);
	int32_t ti[IR_MAX_RANK], gi[IR_MAX_RANK];
	decompose(c, l.p, ext, x->rank, ti);
	region_idx(c, &s->dst, ti, g->rank, gi);
	int32_t ok = inbounds(c, s->dst.buf, gi);
	int32_t v = pack(c, t, cvt(c, t, (DType)x->dtype, load_elem(c, s->src.buf, ti, -1)));
	Addr a = elem_addr(c, s->dst.buf, gi);
	SInst in = I(SI_ATOM_ADD, t, -1, a.addr, v);
	in.guard = ok;
	emit(c, in);
	dloop_end(c, &l);
}

/* Combine acc with x in dtype t arithmetic (x already converted to t). */
static int32_t combine(L *c, ReduceOp op, DType t, int32_t acc, int32_t x)
{
	DType o = op_type(t);
	if (op == RED_SUM || op == RED_ABSSUM)
		return fix(c, t, bin(c, SI_ADD, o, acc, x));
	return bin(c, op == RED_MIN ? SI_MIN : SI_MAX, o, acc, x);
}

static int32_t red_identity(L *c, ReduceOp op, DType t)
{
	if (op == RED_SUM || op == RED_ABSSUM)
		return zero_canon(c, t);
	bool mx = op != RED_MIN;
	if (dtype_is_float(t))
		return movf(c, t == DT_F64 ? DT_F64 : DT_F32, mx ? -INFINITY : INFINITY);
	int64_t lo, hi;
	switch (t) {
	case DT_I8: lo = -128, hi = 127; break;
	case DT_U8: lo = 0, hi = 255; break;
	case DT_I16: lo = -32768, hi = 32767; break;
	case DT_U32: lo = 0, hi = 0xffffffffLL; break;
	case DT_I64: lo = INT64_MIN, hi = INT64_MAX; break;
	default: lo = INT32_MIN, hi = INT32_MAX; break;
	}
	return movi(c, op_type(t), mx ? lo : hi);
}

static int pow2_floor(int64_t v)
{
	int p = 1;
	while ((int64_t)p * 2 <= v && p < 32)
		p *= 2;
	return p;
}

static void lower_reduce(L *c, const Stmt *s)
{
	if (c->bl[s->src.buf].vf >= 0) {
		reduce_vf(c, s);
		return;
	}
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	DType ta = (DType)a->dtype, t = (DType)b->dtype;
	ReduceOp op = (ReduceOp)s->sub;
	int D = s->dim;
	int64_t len = bdim(c, a, D), inner = 1, outs = 1;
	for (int d = 0; d < a->rank; d++)
		if (d != D)
			outs *= bdim(c, a, d);
	for (int d = D + 1; d < a->rank; d++)
		inner *= bdim(c, a, d);
	bool local = b->scope == SCOPE_LOCAL;
	VType vt = simt_vt(t);
	int G = (local || (vt != VT_F32 && vt != VT_I32) || c->nthreads % 32) ? 1
	        : pow2_floor(TA_MIN(c->nthreads / TA_MAX(outs, 1), len));
	int64_t ngroups = local ? 1 : c->nthreads / G;
	int64_t rounds = (outs + ngroups - 1) / ngroups;
	int32_t lane = local ? i32c(c, 0) : bin(c, SI_REM, DT_U32, c->tid, i32c(c, G));
	int32_t grp = local ? i32c(c, 0) : bin(c, SI_DIV, DT_U32, c->tid, i32c(c, G));
	/* for round: o = round * ngroups + grp (uniform trip count: shuffles need the whole warp) */
	int32_t rd = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, rd, i32c(c, 0), -1));
	int32_t rtop = label(c), rend = label(c);
	place(c, rtop);
	bra(c, rend, setp(c, CMP_GE, DT_I32, rd, i32c(c, rounds)), false);
	int32_t o = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, rd, i32c(c, ngroups)), grp);
	int32_t valid = setp(c, CMP_LT, DT_I32, o, i32c(c, outs));
	/* src linear index of (o, k) = (o / inner) * len * inner + k * inner + o % inner */
	int32_t oo = bin(c, SI_DIV, DT_U32, o, i32c(c, inner)), oi = bin(c, SI_REM, DT_U32, o, i32c(c, inner));
	int32_t sbase = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, oo, i32c(c, len * inner)), oi);
	int32_t acc = reg(c, vt);
	emit(c, I(SI_MOV, op_type(t), acc, red_identity(c, op, t), -1));
	int32_t k = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, k, lane, -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	int32_t kdone = setp(c, CMP_GE, DT_I32, k, i32c(c, len));
	kdone = bin(c, SI_OR, DT_BOOL, kdone, un(c, SI_NOT, DT_BOOL, valid));
	bra(c, kend, kdone, false);
	{
		int32_t lin = bin(c, SI_ADD, DT_I32, sbase, bin(c, SI_MUL, DT_I32, k, i32c(c, inner)));
		Addr sa = {SP_SHARED, 0, 0};
		if (a->scope == SCOPE_LOCAL) { /* flat byte offset into the local array */
			int32_t la = reg(c, VT_I64);
			SInst in = I(SI_LOCALADDR, DT_I64, la, -1, -1);
			in.imm = c->bl[s->src.buf].shadow >= 0 ? c->bl[s->src.buf].shadow : c->bl[s->src.buf].local;
			emit(c, in);
			int32_t off = bin(c, SI_MUL, DT_I32, lin, i32c(c, dtype_bytes(ta)));
			sa = (Addr){SP_LOCAL, bin(c, SI_ADD, DT_I64, la, cvt(c, DT_I64, DT_I32, off)), 0};
		} else {
			int32_t off = bin(c, SI_MUL, DT_I32, lin, i32c(c, dtype_bytes(ta)));
			sa = (Addr){SP_SHARED, bin(c, SI_ADD, DT_I32, c->shbase, off), c->bl[s->src.buf].smem};
		}
		int32_t x = cvt(c, t, ta, unpack(c, ta, ld(c, sa.sp, ta, sa.addr, sa.off, -1)));
		if ((op == RED_ABSSUM || op == RED_ABSMAX) && op_type(t) != DT_U32)
			x = un(c, SI_ABS, op_type(t), x);
		emit(c, I(SI_MOV, op_type(t), acc, combine(c, op, t, acc, x), -1));
		emit(c, I(SI_ADD, DT_I32, k, k, i32c(c, G)));
		bra(c, ktop, -1, false);
	}
	place(c, kend);
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	for (int off = G / 2; off >= 1; off /= 2) {
		int32_t other = reg(c, vt);
		SInst in = I(SI_SHFL_BFLY, op_type(t), other, acc, -1);
		in.imm = off;
		emit(c, in);
		emit(c, I(SI_MOV, op_type(t), acc, combine(c, cop, t, acc, other), -1));
	}
	/* lane 0 of the group writes dst[o] */
	int32_t w = bin(c, SI_AND, DT_BOOL, valid, setp(c, CMP_EQ, DT_I32, lane, i32c(c, 0)));
	int32_t skip = label(c);
	bra(c, skip, w, true);
	{
		int32_t didx[IR_MAX_RANK];
		int64_t dext[IR_MAX_RANK];
		for (int d = 0; d < b->rank; d++)
			dext[d] = bdim(c, b, d);
		decompose(c, o, dext, b->rank, didx);
		int32_t v = acc;
		if (!s->flag_clear)
			v = combine(c, cop, t, load_elem(c, s->dst.buf, didx, -1), acc);
		store_elem(c, s->dst.buf, didx, v, -1);
	}
	place(c, skip);
	emit(c, I(SI_ADD, DT_I32, rd, rd, i32c(c, 1)));
	bra(c, rtop, -1, false);
	place(c, rend);
}

static void lower_cumsum(L *c, const Stmt *s)
{
	const Buffer *a = BUF(s->src.buf), *b = BUF(s->dst.buf);
	DType ta = (DType)a->dtype, t = (DType)b->dtype;
	int D = s->dim;
	int64_t len = bdim(c, a, D), inner = 1, lines = 1;
	for (int d = 0; d < a->rank; d++)
		if (d != D)
			lines *= bdim(c, a, d);
	for (int d = D + 1; d < a->rank; d++)
		inner *= bdim(c, a, d);
	DLoop l = dloop_begin(c, lines, b->scope != SCOPE_LOCAL);
	int32_t oo = bin(c, SI_DIV, DT_U32, l.p, i32c(c, inner)), oi = bin(c, SI_REM, DT_U32, l.p, i32c(c, inner));
	int32_t base = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, oo, i32c(c, len * inner)), oi);
	int32_t acc = reg(c, simt_vt(t));
	emit(c, I(SI_MOV, op_type(t), acc, zero_canon(c, t), -1));
	int32_t k = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, k, i32c(c, 0), -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, k, i32c(c, len)), false);
	int32_t kk = s->flag_reverse ? bin(c, SI_SUB, DT_I32, i32c(c, len - 1), k) : k;
	int32_t lin = bin(c, SI_ADD, DT_I32, base, bin(c, SI_MUL, DT_I32, kk, i32c(c, inner)));
	/* src and dst have the same shape: one multi-index serves both */
	int32_t idx[IR_MAX_RANK];
	int64_t ext[IR_MAX_RANK], n;
	shape_of(c, a, ext, &n);
	decompose(c, lin, ext, a->rank, idx);
	int32_t x = cvt(c, t, ta, load_elem(c, s->src.buf, idx, -1));
	emit(c, I(SI_MOV, op_type(t), acc, fix(c, t, bin(c, SI_ADD, op_type(t), acc, x)), -1));
	store_elem(c, s->dst.buf, idx, acc, -1);
	emit(c, I(SI_ADD, DT_I32, k, k, i32c(c, 1)));
	bra(c, top, -1, false);
	place(c, end);
	dloop_end(c, &l);
}

/* 8-column groups per warp strip of an mma gemm: NB * 8 columns share one A fragment. */
static int gemm_nb(int64_t N)
{
	return (N / 8) % 8 == 0 ? 8 : (N / 8) % 4 == 0 ? 4 : (N / 8) % 2 == 0 ? 2 : 1;
}

/* ---- matrix shapes of AMD matrix cores ----------------------------------
 *
 * On gfx90a/gfx942 (v_mfma_f32_16x16x16*, wave64) and gfx1100
 * (v_wmma_f32_16x16x16_*, wave32) a gemm tile is 16x16 and one wave owns
 * it; the per-lane layouts are in lower.h (MmaShape).  A wave's strip is
 * 16 rows x 16*NB columns: one A fragment serves NB instructions.  When
 * every strip of a wave has the same columns (ntn divides the wave count),
 * each B fragment is loaded once per k-step and serves all strips. */
const MmaInfo simt_mma[MMA_NSHAPES] = {
	{"mma.m16n8k16", 32, 16, 8, 16, 4, 2, 4, 0, 0, 0},
	{"mma.mfma16x16x16", 64, 16, 16, 16, 2, 2, 4, 4, 4, 1},
	{"mma.wmma16x16x16", 32, 16, 16, 16, 8, 8, 8, 0, 1, 2},
	{"mma.mfma16x16x16.i8", 64, 16, 16, 16, 1, 1, 4, 4, 4, 1},
	{"mma.mfma16x16x32.i8", 64, 16, 16, 32, 2, 2, 4, 8, 4, 1},
	{"mma.wmma16x16x16.i8", 32, 16, 16, 16, 4, 4, 8, 0, 1, 2},
	{"mma.mfma16x16x32.fp8", 64, 16, 16, 32, 2, 2, 4, 8, 4, 1},
	{"mma.m16n8k32.s8", 32, 16, 8, 32, 4, 2, 4, 0, 0, 0},
};

/* PTX warp shapes (m16n8k16, m16n8k32.s8): the warp-strip tiling and the
 * PTX C layout; every other shape is an AMD matrix core's. */
static bool warp_shape(int sh)
{
	return sh == MMA_M16N8K16 || sh == MMA_M16N8K32_I8;
}

static int nb_units(int64_t u)
{
	return u % 8 == 0 ? 8 : u % 4 == 0 ? 4 : u % 2 == 0 ? 2 : 1;
}

/* The shape a gemm with an M x N accumulator and inputs `in` uses on this
 * target (given M % 16 == 0): the target's matrix core when the tile and
 * wave fit, else for f16/bf16 PTX's m16n8k16 (which the AMD backend
 * emulates), else -1. */
static int target_shape(L *c, int64_t N, DType in)
{
	ta_target id = c->t->id;
	bool gfx9 = id == TA_TARGET_GFX90A || id == TA_TARGET_GFX942;
	int sh;
	if (in == DT_I8)
		sh = id == TA_TARGET_GFX1100 ? MMA_WMMA16_I8
		   : id == TA_TARGET_GFX942 ? MMA_MFMA16X32_I8 : id == TA_TARGET_GFX90A ? MMA_MFMA16_I8 : MMA_M16N8K32_I8;
	else
		sh = id == TA_TARGET_GFX1100 ? MMA_WMMA16 : gfx9 ? MMA_MFMA16 : MMA_M16N8K16;
	if (!warp_shape(sh) && (N % 16 || c->nthreads % simt_mma[sh].wave))
		sh = in == DT_I8 ? -1 : MMA_M16N8K16;
	if (sh == MMA_M16N8K32_I8 && (N % 8 || c->nthreads % 32))
		sh = -1;
	return sh;
}

/* The MMA shape of gemm s, or -1 when it takes the scalar path. */
static int gemm_shape(L *c, const Stmt *s)
{
	const Buffer *A = BUF(s->src.buf), *B = BUF(s->src2.buf), *C = BUF(s->dst.buf);
	int64_t M = bdim(c, C, 0), N = bdim(c, C, 1), K = bdim(c, A, s->flag_a ? 0 : 1);
	DType in = (DType)A->dtype;
	if (A->scope == SCOPE_LOCAL || B->scope == SCOPE_LOCAL || C->scope == SCOPE_LOCAL)
		return -1;
	if (in == DT_I8) { /* C is i32 */
		int sh = M % 16 == 0 ? target_shape(c, N, in) : -1;
		return sh >= 0 && K % simt_mma[sh].k == 0 && C->dtype == DT_I32 ? sh : -1;
	}
	if (dtype_is_fp8(in)) {
		/* AMD only: gfx942's fp8 MFMA for the FNUZ formats it implements,
		 * else the f16 shape on fragments converted to f16 (exact). */
		if (!target_is_amd(c->t->id) || M % 16 || K % 16 || C->dtype != DT_F32)
			return -1;
		int sh = target_shape(c, N, DT_F16);
		if (sh == MMA_M16N8K16) /* its AMD emulation has no fp8 fragments */
			return -1;
		if (sh == MMA_MFMA16 && c->t->id == TA_TARGET_GFX942 && dtype_is_fnuz(in) && K % 32 == 0)
			sh = MMA_MFMA16X32_FP8;
		return sh;
	}
	if (!((in == DT_F16 || in == DT_BF16) && M % 16 == 0 && N % 8 == 0 && K % 16 == 0 && c->nthreads % 32 == 0))
		return -1;
	return target_shape(c, N, in);
}


/* Shared-memory address of element (i, j) of a 2-D buffer (no offset). */
static int32_t sh_addr2(L *c, int32_t bufid, int32_t i, int32_t j)
{
	const Buffer *b = BUF(bufid);
	int32_t lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, i, i32c(c, bdim(c, b, 1))), j);
	return bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, lin, i32c(c, dtype_bytes((DType)b->dtype))));
}

/* A 32-bit register holding operand elements (r, k) and (r, k+1) where
 * rows/cols follow `trans`: element (r, k) is at buf[k][r] when trans. */
static void frag_pair(L *c, int32_t bufid, bool trans, int32_t r, int32_t k, int32_t dst)
{
	const BufLoc *bl = &c->bl[bufid];
	DType t = (DType)BUF(bufid)->dtype;
	if (!trans) {
		SInst in = I(SI_LD, DT_I32, dst, sh_addr2(c, bufid, r, k), -1);
		in.sub = SP_SHARED;
		in.imm = bl->smem;
		emit(c, in);
		return;
	}
	int32_t lo = ld(c, SP_SHARED, t, sh_addr2(c, bufid, k, r), bl->smem, -1);
	int32_t hi = ld(c, SP_SHARED, t, sh_addr2(c, bufid, bin(c, SI_ADD, DT_I32, k, i32c(c, 1)), r), bl->smem, -1);
	emit(c, I(SI_PACK2, DT_I32, dst, lo, hi));
}

/* A 32-bit operand register of a PTX warp shape holding elements (r, k)
 * .. (r, k + e - 1), the lower k in the low bits: pairs of f16/bf16
 * (m16n8k16), or four i8 (m16n8k32.s8: one b32 load when contiguous,
 * else four byte loads). */
static void frag_reg(L *c, int32_t bufid, bool trans, int32_t r, int32_t k, int32_t dst)
{
	if (dtype_bytes((DType)BUF(bufid)->dtype) != 1 || !trans) {
		frag_pair(c, bufid, trans, r, k, dst);
		return;
	}
	int64_t smem = c->bl[bufid].smem, row = bdim(c, BUF(bufid), 1);
	int32_t base = sh_addr2(c, bufid, k, r), v = -1;
	for (int x = 0; x < 4; x++) {
		int32_t by = ld(c, SP_SHARED, DT_U8, base, smem + x * row, -1);
		if (x)
			by = bin(c, SI_SHL, DT_U32, by, i32c(c, 8 * x));
		v = x ? bin(c, SI_OR, DT_U32, v, by) : by;
	}
	emit(c, I(SI_MOV, DT_I32, dst, v, -1));
}

static void lower_gemm_mma(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K)
{
	int W = c->nthreads / 32;
	int NB = gemm_nb(N);
	int64_t ntn = N / (8 * NB), ntiles = (M / 16) * ntn;
	DType in = (DType)BUF(s->src.buf)->dtype;
	/* m16n8k32.s8: i32 C, four i8 per operand register (k offsets 4t, 4t + 16) */
	bool s8 = sh == MMA_M16N8K32_I8;
	DType ct = s8 ? DT_I32 : DT_F32;
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t g = bin(c, SI_DIV, DT_U32, lane, i32c(c, 4));
	int32_t t2 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, 2));
	int32_t tk = s8 ? bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, 4)) : t2;
	int32_t tile = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, tile, warp, -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, tile, i32c(c, ntiles)), false);
	int32_t r0 = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, bin(c, SI_DIV, DT_U32, tile, i32c(c, ntn)),
	                                          i32c(c, 16)), g);
	int32_t r8 = bin(c, SI_ADD, DT_I32, r0, i32c(c, 8));
	int32_t n0 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, tile, i32c(c, ntn)), i32c(c, 8 * NB));
	/* accumulators: NB groups of 4 consecutive f32 (i32) registers */
	int32_t acc = (int32_t)c->f->regs.len;
	for (int i = 0; i < 4 * NB; i++)
		reg(c, simt_vt(ct));
	int64_t coff = c->bl[s->dst.buf].smem;
	for (int nb = 0; nb < NB; nb++) {
		int32_t col = bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb));
		col = bin(c, SI_ADD, DT_I32, col, t2);
		int32_t p0 = sh_addr2(c, s->dst.buf, r0, col), p8 = sh_addr2(c, s->dst.buf, r8, col);
		for (int q = 0; q < 4; q++) {
			int32_t dst = acc + 4 * nb + q;
			if (s->flag_clear) {
				SInst z = I(s8 ? SI_MOVI : SI_MOVF, ct, dst, -1, -1);
				emit(c, z);
			} else {
				SInst l = I(SI_LD, ct, dst, q < 2 ? p0 : p8, -1);
				l.sub = SP_SHARED;
				l.imm = coff + (q & 1) * 4;
				emit(c, l);
			}
		}
	}
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	{
		int32_t k0 = bin(c, SI_ADD, DT_I32, kk, tk), k8 = bin(c, SI_ADD, DT_I32, k0, i32c(c, s8 ? 16 : 8));
		int32_t af = (int32_t)c->f->regs.len;
		for (int i = 0; i < 4; i++)
			reg(c, VT_I32);
		frag_reg(c, s->src.buf, s->flag_a, r0, k0, af + 0);
		frag_reg(c, s->src.buf, s->flag_a, r8, k0, af + 1);
		frag_reg(c, s->src.buf, s->flag_a, r0, k8, af + 2);
		frag_reg(c, s->src.buf, s->flag_a, r8, k8, af + 3);
		for (int nb = 0; nb < NB; nb++) {
			int32_t n = bin(c, SI_ADD, DT_I32, bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb)), g);
			int32_t bf = (int32_t)c->f->regs.len;
			reg(c, VT_I32);
			reg(c, VT_I32);
			/* B element (k, n): B[k][n], or B[n][k] with transpose_b: the
			 * (n, k) pair is contiguous exactly when transposed */
			frag_reg(c, s->src2.buf, !s->flag_b, n, k0, bf);
			frag_reg(c, s->src2.buf, !s->flag_b, n, k8, bf + 1);
			SInst m = I(SI_MMA, in, acc + 4 * nb, af, bf);
			m.c = acc + 4 * nb;
			m.sub = (uint8_t)sh;
			emit(c, m);
		}
		emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, simt_mma[sh].k)));
		bra(c, ktop, -1, false);
	}
	place(c, kend);
	for (int nb = 0; nb < NB; nb++) {
		int32_t col = bin(c, SI_ADD, DT_I32, bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb)), t2);
		int32_t p0 = sh_addr2(c, s->dst.buf, r0, col), p8 = sh_addr2(c, s->dst.buf, r8, col);
		for (int q = 0; q < 4; q++)
			st(c, SP_SHARED, ct, q < 2 ? p0 : p8, coff + (q & 1) * 4, acc + 4 * nb + q, -1);
	}
	emit(c, I(SI_ADD, DT_I32, tile, tile, i32c(c, W)));
	bra(c, top, -1, false);
	place(c, end);
	c->f->nmma++;
}

static void lower_gemm(L *c, const Stmt *s)
{
	const Buffer *A = BUF(s->src.buf), *C = BUF(s->dst.buf);
	int64_t M = bdim(c, C, 0), N = bdim(c, C, 1), K = bdim(c, A, s->flag_a ? 0 : 1);
	DType in = (DType)A->dtype, acct = (DType)C->dtype;
	if (c->bl[s->dst.buf].rf >= 0) {
		if (!warp_shape(c->bl[s->dst.buf].rf_shape))
			lower_gemm_amd_rf(c, s, K);
		else
			lower_gemm_mma_rf(c, s, K);
		return;
	}
	int sh = gemm_shape(c, s);
	if (sh >= 0 && !warp_shape(sh)) {
		lower_gemm_amd(c, s, sh, M, N, K);
		return;
	}
	if (sh >= 0) {
		lower_gemm_mma(c, s, sh, M, N, K);
		return;
	}
	/* General path: one thread per C element, products and sums in k order. */
	DType ot = op_type(acct);
	int64_t ext[2] = {M, N};
	DLoop l = dloop_begin(c, M * N, C->scope != SCOPE_LOCAL);
	int32_t mn[2];
	decompose(c, l.p, ext, 2, mn);
	int32_t acc = reg(c, simt_vt(acct));
	emit(c, I(SI_MOV, ot, acc, s->flag_clear ? zero_canon(c, acct) : load_elem(c, s->dst.buf, mn, -1), -1));
	int32_t k = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, k, i32c(c, 0), -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, k, i32c(c, K)), false);
	int32_t ai[2] = {s->flag_a ? k : mn[0], s->flag_a ? mn[0] : k};
	int32_t bi[2] = {s->flag_b ? mn[1] : k, s->flag_b ? k : mn[1]};
	int32_t av = cvt(c, acct, in, load_elem(c, s->src.buf, ai, -1));
	int32_t bv = cvt(c, acct, in, load_elem(c, s->src2.buf, bi, -1));
	emit(c, I(SI_MOV, ot, acc, bin(c, SI_ADD, ot, acc, bin(c, SI_MUL, ot, av, bv)), -1));
	emit(c, I(SI_ADD, DT_I32, k, k, i32c(c, 1)));
	bra(c, top, -1, false);
	place(c, end);
	store_elem(c, s->dst.buf, mn, acc, -1);
	dloop_end(c, &l);
}

#define RF_MAX_STRIPS 32

/* Tiling of an M x N accumulator for an AMD shape. */
typedef struct {
	int sh, wave, W, NB, ntn;
	int64_t ntiles;
} AmdTiling;

static AmdTiling amd_tiling(L *c, int sh, int64_t M, int64_t N)
{
	AmdTiling t;
	t.sh = sh;
	t.wave = simt_mma[sh].wave;
	t.W = c->nthreads / t.wave;
	t.NB = nb_units(N / 16);
	t.ntn = (int)(N / (16 * t.NB));
	t.ntiles = (M / 16) * t.ntn;
	return t;
}

/* Per-lane values of an AMD shape: i = lane % 16, h = lane / 16, the wave. */
typedef struct {
	int32_t wave, i, h;
} AmdLane;

static AmdLane amd_lane(L *c, int wave)
{
	AmdLane a;
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, wave));
	a.wave = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, wave));
	a.i = bin(c, SI_REM, DT_U32, lane, i32c(c, 16));
	a.h = bin(c, SI_DIV, DT_U32, lane, i32c(c, 16));
	return a;
}

/* Shared-memory address of operand element (r, k) of an AMD shape, where
 * (r, k) is buf[k][r] when trans (without the buffer's offset). */
static int32_t amd_frag_base(L *c, int32_t bufid, bool trans, int32_t r, int32_t k)
{
	return trans ? sh_addr2(c, bufid, k, r) : sh_addr2(c, bufid, r, k);
}

/* Bytes between operand elements (r, k) and (r + d, k). */
static int64_t amd_frag_shift(L *c, int32_t bufid, bool trans, int64_t d)
{
	const Buffer *b = BUF(bufid);
	int64_t es = dtype_bytes((DType)b->dtype);
	return trans ? d * es : d * bdim(c, b, 1) * es;
}

/* n operand registers dst.. of an AMD shape from the element at base +
 * off: register j holds elements (r, k + e*j .. k + e*j + e-1), e = 4 /
 * element bytes.  Untransposed they are one contiguous run:
 * ds_read_b64/b128. */
static void amd_frag_at(L *c, int32_t bufid, bool trans, int32_t base, int64_t off, int n, int32_t dst)
{
	const Buffer *b = BUF(bufid);
	int64_t smem = c->bl[bufid].smem + off, es = dtype_bytes((DType)b->dtype), row = bdim(c, b, 1);
	if (!trans) {
		int vec = n >= 4 ? 4 : n;
		if ((row * es) % (4 * vec)) /* rows not aligned to the vector: dwords */
			vec = 1;
		for (int j = 0; j < n; j += vec) {
			SInst in = I(SI_LD, DT_I32, dst + j, base, -1);
			in.sub = SP_SHARED;
			in.imm = smem + 4 * j;
			in.vec = (uint8_t)vec;
			emit(c, in);
		}
		return;
	}
	DType t = (DType)b->dtype;
	if (es == 1) { /* i8: four bytes per register, lowest k in the low byte */
		for (int j = 0; j < n; j++) {
			int32_t v = -1;
			for (int x = 0; x < 4; x++) {
				int32_t by = ld(c, SP_SHARED, DT_U8, base, smem + (4 * j + x) * row, -1);
				if (x)
					by = bin(c, SI_SHL, DT_U32, by, i32c(c, 8 * x));
				v = x ? bin(c, SI_OR, DT_U32, v, by) : by;
			}
			emit(c, I(SI_MOV, DT_I32, dst + j, v, -1));
		}
		return;
	}
	for (int j = 0; j < n; j++) {
		int32_t lo = ld(c, SP_SHARED, t, base, smem + (2 * j) * row * es, -1);
		int32_t hi = ld(c, SP_SHARED, t, base, smem + (2 * j + 1) * row * es, -1);
		emit(c, I(SI_PACK2, DT_I32, dst + j, lo, hi));
	}
}

/* n f16-pair operand registers dst.. of an f16 shape from fp8 elements
 * (the fallback where no fp8 matrix instruction fits; every fp8 value is
 * exact in f16): register j holds elements (r, k + 2j) and (r, k + 2j + 1),
 * the lower k in the low half.  Untransposed, four consecutive bytes come
 * from one dword load. */
static void amd_frag_fp8_f16(L *c, int32_t bufid, bool trans, int32_t base, int64_t off, int n, int32_t dst)
{
	const Buffer *b = BUF(bufid);
	DType t = (DType)b->dtype;
	int64_t smem = c->bl[bufid].smem + off, row = bdim(c, b, 1);
	bool dwords = !trans && row % 4 == 0;
	int32_t w = -1, h[2];
	for (int j = 0; j < n; j++) {
		for (int x = 0; x < 2; x++) {
			int e = 2 * j + x; /* k offset */
			int32_t v;
			if (dwords) {
				if (e % 4 == 0) {
					w = reg(c, VT_I32);
					SInst in = I(SI_LD, DT_I32, w, base, -1);
					in.sub = SP_SHARED;
					in.imm = smem + e;
					emit(c, in);
				}
				v = e % 4 ? bin(c, SI_SHR, DT_U32, w, i32c(c, 8 * (e % 4))) : w;
			} else {
				v = ld(c, SP_SHARED, t, base, smem + (trans ? e * row : e), -1);
			}
			h[x] = pack(c, DT_F16, unpack(c, t, v));
		}
		emit(c, I(SI_PACK2, DT_I32, dst + j, h[0], h[1]));
	}
}

static int32_t regs_n(L *c, VType vt, int n)
{
	int32_t first = (int32_t)c->f->regs.len;
	for (int i = 0; i < n; i++)
		reg(c, vt);
	return first;
}

/* One k-step of 16 for S strips of a wave: acc(si, nb) is the first C
 * register of strip si, column group nb; tm[si]/tn[si] the strip's tile
 * row and column. */
static void amd_kstep(L *c, const Stmt *s, const AmdTiling *t, const AmdLane *ln, int32_t kk, int S,
		      const int32_t *tm, const int32_t *tn, int32_t acc0, bool same_cols)
{
	const MmaInfo *mi = &simt_mma[t->sh];
	DType in = (DType)BUF(s->src.buf)->dtype;
	/* fp8 on an f16 shape: fragments are converted to f16 as they load */
	bool cvt16 = dtype_is_fp8(in) && t->sh != MMA_MFMA16X32_FP8;
	void (*frag)(L *, int32_t, bool, int32_t, int64_t, int, int32_t) = cvt16 ? amd_frag_fp8_f16 : amd_frag_at;
	if (cvt16)
		in = DT_F16;
	int32_t kb = mi->kstep ? bin(c, SI_ADD, DT_I32, kk, bin(c, SI_MUL, DT_I32, ln->h, i32c(c, mi->kstep))) : kk;
	int32_t af[RF_MAX_STRIPS];
	for (int si = 0; si < S; si++) {
		af[si] = regs_n(c, VT_I32, mi->na);
		int32_t arow = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm[si], i32c(c, 16)), ln->i);
		frag(c, s->src.buf, s->flag_a, amd_frag_base(c, s->src.buf, s->flag_a, arow, kb), 0, mi->na, af[si]);
	}
	/* B element (k, n) is B[k][n], or B[n][k] with transpose_b.  One
	 * address per strip (same_cols: per k-step): column group nb is
	 * 16 * nb further, a load offset. */
	bool btr = !s->flag_b;
	int32_t bf = -1, bbase = -1;
	for (int o = 0; o < S * t->NB; o++) {
		/* same_cols: nb outer, strips inner (one B fragment per nb) */
		int si = same_cols ? o % S : o / t->NB, nb = same_cols ? o / S : o % t->NB;
		if (!same_cols || si == 0) {
			if (nb == 0) /* first column group of a strip (same_cols: of all) */
				bbase = amd_frag_base(c, s->src2.buf, btr,
						      bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn[si], i32c(c, 16 * t->NB)),
							  ln->i), kb);
			bf = regs_n(c, VT_I32, mi->nb);
			frag(c, s->src2.buf, btr, bbase, amd_frag_shift(c, s->src2.buf, btr, 16LL * nb), mi->nb, bf);
		}
		int32_t acc = acc0 + (si * t->NB + nb) * mi->nc;
		SInst m = I(SI_MMA, in, acc, af[si], bf);
		m.c = acc;
		m.sub = (uint8_t)t->sh;
		emit(c, m);
	}
}

/* gemm into a shared/fragment-memory accumulator: each wave loops over
 * its tiles, keeping one strip's C in registers over the whole K. */
static void lower_gemm_amd(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K)
{
	AmdTiling t = amd_tiling(c, sh, M, N);
	const MmaInfo *mi = &simt_mma[sh];
	AmdLane ln = amd_lane(c, t.wave);
	const Buffer *C = BUF(s->dst.buf);
	int64_t coff = c->bl[s->dst.buf].smem, ldc = bdim(c, C, 1);
	DType ct = C->dtype == DT_I32 ? DT_I32 : DT_F32; /* i8 inputs accumulate in i32 */
	int32_t tile = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, tile, ln.wave, -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, tile, i32c(c, t.ntiles)), false);
	int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, t.ntn));
	int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, t.ntn));
	int32_t acc = regs_n(c, simt_vt(ct), t.NB * mi->nc);
	/* C element (row0 + q * qrow, col0 + 16 nb) at cbase + imm */
	int32_t row0 = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)),
			   bin(c, SI_MUL, DT_I32, ln.h, i32c(c, mi->hrow)));
	int32_t col0 = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 16 * t.NB)), ln.i);
	int32_t cbase = sh_addr2(c, s->dst.buf, row0, col0);
	for (int nb = 0; nb < t.NB; nb++)
		for (int q = 0; q < mi->nc; q++) {
			int32_t dst = acc + nb * mi->nc + q;
			if (s->flag_clear) {
				emit(c, I(ct == DT_I32 ? SI_MOVI : SI_MOVF, ct, dst, -1, -1));
				continue;
			}
			SInst l = I(SI_LD, ct, dst, cbase, -1);
			l.sub = SP_SHARED;
			l.imm = coff + ((int64_t)q * mi->qrow * ldc + 16 * nb) * 4;
			emit(c, l);
		}
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	amd_kstep(c, s, &t, &ln, kk, 1, &tm, &tn, acc, false);
	emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, mi->k)));
	bra(c, ktop, -1, false);
	place(c, kend);
	for (int nb = 0; nb < t.NB; nb++)
		for (int q = 0; q < mi->nc; q++)
			st(c, SP_SHARED, ct, cbase, coff + ((int64_t)q * mi->qrow * ldc + 16 * nb) * 4,
			   acc + nb * mi->nc + q, -1);
	emit(c, I(SI_ADD, DT_I32, tile, tile, i32c(c, t.W)));
	bra(c, top, -1, false);
	place(c, end);
	c->f->nmma++;
}

/* gemm into a register fragment (rf_place laid it out for shape sh). */
static void lower_gemm_amd_rf(L *c, const Stmt *s, int64_t K)
{
	const BufLoc *bl = &c->bl[s->dst.buf];
	const Buffer *C = BUF(s->dst.buf);
	/* gfx942's fp8 MFMA has the C layout (and tiling) of the f16 shape the
	 * fragment was laid out for; only its k differs. */
	int sh = gemm_shape(c, s) == MMA_MFMA16X32_FP8 ? MMA_MFMA16X32_FP8 : bl->rf_shape;
	AmdTiling t = amd_tiling(c, sh, bdim(c, C, 0), bdim(c, C, 1));
	const MmaInfo *mi = &simt_mma[t.sh];
	int S = bl->rf_n / (t.NB * mi->nc);
	if (s->flag_clear)
		for (int e = 0; e < bl->rf_n; e++)
			emit(c, I(bl->rf_dtype == DT_I32 ? SI_MOVI : SI_MOVF, (DType)bl->rf_dtype, bl->rf + e, -1, -1));
	AmdLane ln = amd_lane(c, t.wave);
	int32_t tm[RF_MAX_STRIPS], tn[RF_MAX_STRIPS];
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, ln.wave, i32c(c, t.W * si));
		tm[si] = bin(c, SI_DIV, DT_U32, tile, i32c(c, t.ntn));
		tn[si] = bin(c, SI_REM, DT_U32, tile, i32c(c, t.ntn));
	}
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	amd_kstep(c, s, &t, &ln, kk, S, tm, tn, bl->rf, t.W % t.ntn == 0);
	emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, mi->k)));
	bra(c, ktop, -1, false);
	place(c, kend);
	c->f->nmma++;
}

/* ---- register-resident fragments ---------------------------------------
 *
 * A 2-D f32 fragment that is the accumulator of an mma gemm lives in
 * registers, in the MMA C layout, when every other use is layout-agnostic:
 * clear/fill, whole-buffer copies to or from a non-fragment, and parallel
 * loops over exactly its shape that touch it only at [i, j] with the loop
 * variables.  Thread (warp w, lane l; g = l/4, t = l%4) holds slots
 * e = (s * NB + nb) * 4 + q for strips s < S = tiles / warps:
 *   tile = w + warps * s, row = (tile / ntn) * 16 + g + 8 * (q >> 1),
 *   col = (tile % ntn) * 8 * NB + 8 * nb + 2t + (q & 1).
 * Nothing else can see these elements, so they need no barriers. */

typedef struct {
	uint8_t *bad, *acc;
	const int32_t *par_vars; /* the enclosing parallel's two vars, or NULL */
	const Stmt *par;
} RfScan;

static bool is_frag(L *c, int32_t b) { return b >= 0 && BUF(b)->scope == SCOPE_FRAGMENT; }

/* Slots per lane a register fragment of shape sh may take.  128 fit the
 * VGPRs next to the operands and addresses; on gfx90a/gfx942 (the wave64
 * MFMA shapes) a fragment of 129..256 slots lives in the AGPRs instead:
 * the MFMA reads and writes it there (acc_cd) and the AGPR file holds 256
 * per lane beside the 256 VGPRs.  Smaller fragments stay in VGPRs, where
 * element code needs no v_accvgpr_read/write. */
static int rf_max_slots(L *c, int sh)
{
	(void)c;
	return sh > MMA_M16N8K16 && simt_mma[sh].wave == 64 ? 256 : 128;
}

/* An element access F[args] is fine only as F[i, j] of a parallel over F's shape. */
static void rf_access(L *c, RfScan *r, int32_t b, int32_t nargs, const int32_t *args)
{
	if (!is_frag(c, b))
		return;
	const Stmt *p = r->par;
	bool ok = p && p->nvars == 2 && nargs == 2 && BUF(b)->rank == 2;
	for (int d = 0; ok && d < 2; d++) {
		const Expr *x = EX(args[d]);
		int64_t ext;
		ok = x->kind == E_VAR && x->var == p->vars[d] && ir_const_int(c->m, p->extents[d], &ext) &&
		     ext == bdim(c, BUF(b), d);
	}
	if (!ok)
		r->bad[b] = 1;
}

static void rf_expr(L *c, RfScan *r, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD)
		rf_access(c, r, e->buf, e->nargs, e->args);
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		rf_expr(c, r, e->a);
		if (e->kind == E_BINARY)
			rf_expr(c, r, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			rf_expr(c, r, e->args[i]);
}

static void rf_region_exprs(L *c, RfScan *r, const Region *g)
{
	for (int i = 0; i < g->nidx; i++)
		rf_expr(c, r, g->idx[i]);
}

static void rf_block(L *c, RfScan *r, const Block *b);

static void rf_stmt(L *c, RfScan *r, int32_t id)
{
	const Stmt *s = ST(id);
	rf_expr(c, r, s->value);
	rf_region_exprs(c, r, &s->src);
	rf_region_exprs(c, r, &s->dst);
	switch ((StmtKind)s->kind) {
	case S_STORE: rf_access(c, r, s->dst.buf, s->dst.nidx, s->dst.idx); break;
	case S_COPY:
		/* whole fragment <-> a non-fragment only */
		if (is_frag(c, s->src.buf) && (s->src.nidx || is_frag(c, s->dst.buf)))
			r->bad[s->src.buf] = 1;
		if (is_frag(c, s->dst.buf) && (s->dst.nidx || is_frag(c, s->src.buf)))
			r->bad[s->dst.buf] = 1;
		if (is_frag(c, s->src.buf) && is_frag(c, s->dst.buf))
			r->bad[s->src.buf] = r->bad[s->dst.buf] = 1;
		/* a local destination needs every element in every thread */
		if (is_frag(c, s->src.buf) && BUF(s->dst.buf)->scope == SCOPE_LOCAL)
			r->bad[s->src.buf] = 1;
		break;
	case S_GEMM:
		if (is_frag(c, s->src.buf))
			r->bad[s->src.buf] = 1;
		if (is_frag(c, s->src2.buf))
			r->bad[s->src2.buf] = 1;
		int sh = gemm_shape(c, s);
		if (sh >= 0) {
			const Buffer *C = BUF(s->dst.buf);
			int64_t ntiles = (bdim(c, C, 0) / 16) * (bdim(c, C, 1) / (8 * gemm_nb(bdim(c, C, 1))));
			int64_t slots = ntiles / (c->nthreads / 32) * gemm_nb(bdim(c, C, 1)) * 4;
			int W = c->nthreads / 32;
			if (!warp_shape(sh)) {
				AmdTiling t = amd_tiling(c, sh, bdim(c, C, 0), bdim(c, C, 1));
				ntiles = t.ntiles;
				W = t.W;
				slots = ntiles / W * t.NB * simt_mma[sh].nc;
			}
			/* f32 with f16/bf16/fp8 inputs, i32 with i8 (AMD matrix cores) */
			bool i8 = sh == MMA_MFMA16_I8 || sh == MMA_MFMA16X32_I8 || sh == MMA_WMMA16_I8 ||
				  sh == MMA_M16N8K32_I8;
			if (ntiles % W || slots > rf_max_slots(c, sh) || C->dtype != (i8 ? DT_I32 : DT_F32))
				r->bad[s->dst.buf] = 1;
			else
				r->acc[s->dst.buf] = 1;
		} else {
			r->bad[s->dst.buf] = 1;
		}
		break;
	case S_CLEAR:
	case S_FILL: break;
	case S_REDUCE:
	case S_CUMSUM:
	case S_ATOMIC_ADD:
		if (is_frag(c, s->src.buf))
			r->bad[s->src.buf] = 1;
		if (is_frag(c, s->dst.buf))
			r->bad[s->dst.buf] = 1;
		break;
	case S_FOR:
		rf_expr(c, r, s->lo);
		rf_expr(c, r, s->hi);
		rf_block(c, r, &s->body);
		break;
	case S_IF:
		rf_block(c, r, &s->body);
		rf_block(c, r, &s->els);
		break;
	case S_PARALLEL: {
		const Stmt *was = r->par;
		r->par = s;
		rf_block(c, r, &s->body);
		r->par = was;
		break;
	}
	default: break;
	}
}

static void rf_block(L *c, RfScan *r, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		rf_stmt(c, r, b->ids[i]);
}

/* Marks the eligible fragments (bl[].rf = 1 as a flag; registers come later). */
static void rf_analyze(L *c)
{
	size_t nb = c->m->bufs.len;
	RfScan r = {calloc(nb + 1, 1), calloc(nb + 1, 1), NULL, NULL};
	if (!r.bad || !r.acc) {
		c->failed = true;
	} else {
		rf_block(c, &r, &c->k->body);
		for (size_t b = 0; b < nb; b++)
			if (r.acc[b] && !r.bad[b] && BUF(b)->rank == 2 &&
			    (BUF(b)->dtype == DT_F32 || BUF(b)->dtype == DT_I32))
				c->bl[b].rf = 1;
	}
	free(r.bad);
	free(r.acc);
}

/* Per strip s of register fragment b: the row of q = 0 (rb) and the
 * column of nb = 0, q = 0 (cb) for this thread.  Slot e = (s * NB + nb) * 4
 * + q is then at (rb[s] + 8 * (q >> 1), cb[s] + 8 * nb + (q & 1)). */
static int rf_bases(L *c, int32_t b, int32_t *rb, int32_t *cb)
{
	const BufLoc *bl = &c->bl[b];
	if (!warp_shape(bl->rf_shape)) { /* rb: row of q = 0, cb: column of nb = 0 */
		const MmaInfo *mi = &simt_mma[bl->rf_shape];
		int S = bl->rf_n / (bl->rf_nb * mi->nc), W = c->nthreads / mi->wave;
		AmdLane ln = amd_lane(c, mi->wave);
		int32_t hr = bin(c, SI_MUL, DT_I32, ln.h, i32c(c, mi->hrow));
		for (int si = 0; si < S; si++) {
			int32_t tile = bin(c, SI_ADD, DT_I32, ln.wave, i32c(c, W * si));
			int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn));
			int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn));
			rb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)), hr);
			cb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 16 * bl->rf_nb)), ln.i);
		}
		return S;
	}
	int NB = bl->rf_nb, W = c->nthreads / 32, S = bl->rf_n / (NB * 4);
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t g = bin(c, SI_DIV, DT_U32, lane, i32c(c, 4));
	int32_t t2 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, 2));
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, warp, i32c(c, W * si));
		int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn));
		int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn));
		rb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)), g);
		cb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 8 * NB)), t2);
	}
	return S;
}

static void rf_rowcol(L *c, int32_t b, const int32_t *rb, const int32_t *cb, int e, int32_t *row, int32_t *col)
{
	int NB = c->bl[b].rf_nb;
	if (!warp_shape(c->bl[b].rf_shape)) {
		const MmaInfo *mi = &simt_mma[c->bl[b].rf_shape];
		int si = e / (NB * mi->nc), nb = (e / mi->nc) % NB, q = e % mi->nc;
		*row = q ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, q * mi->qrow)) : rb[si];
		*col = nb ? bin(c, SI_ADD, DT_I32, cb[si], i32c(c, 16 * nb)) : cb[si];
		return;
	}
	int si = e / (NB * 4), nb = (e / 4) % NB, q = e % 4;
	*row = q >> 1 ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, 8)) : rb[si];
	*col = 8 * nb + (q & 1) ? bin(c, SI_ADD, DT_I32, cb[si], i32c(c, 8 * nb + (q & 1))) : cb[si];
}

/* The register fragment that a parallel body touches, or -1. */
static int32_t rf_find_expr(L *c, int32_t id)
{
	if (id < 0)
		return -1;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD && c->bl[e->buf].rf >= 0)
		return e->buf;
	int32_t r = -1;
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		r = rf_find_expr(c, e->a);
		if (r < 0 && e->kind == E_BINARY)
			r = rf_find_expr(c, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs && r < 0; i++)
			r = rf_find_expr(c, e->args[i]);
	return r;
}

static int32_t rf_find_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		int32_t r = rf_find_expr(c, s->value);
		if (r < 0 && s->kind == S_STORE && c->bl[s->dst.buf].rf >= 0)
			r = s->dst.buf;
		for (int k = 0; r < 0 && k < s->dst.nidx; k++)
			r = rf_find_expr(c, s->dst.idx[k]);
		if (r < 0 && s->kind == S_FOR) {
			r = rf_find_expr(c, s->lo);
			if (r < 0)
				r = rf_find_expr(c, s->hi);
		}
		if (r < 0 && (s->kind == S_FOR || s->kind == S_IF))
			r = rf_find_block(c, &s->body);
		if (r < 0 && s->kind == S_IF)
			r = rf_find_block(c, &s->els);
		if (r >= 0)
			return r;
	}
	return -1;
}

/* Registers for the fragments rf_analyze accepted (after place_bufs). */
static void rf_place(L *c, int32_t b)
{
	const Buffer *buf = BUF(b);
	BufLoc *bl = &c->bl[b];
	int64_t M = bdim(c, buf, 0), N = bdim(c, buf, 1);
	/* f32 accumulators have f16/bf16 (or fp8, laid out alike) inputs, i32 ones i8 */
	DType ft = (DType)buf->dtype;
	int sh = target_shape(c, N, ft == DT_I32 ? DT_I8 : DT_F16);
	bl->rf_shape = (uint8_t)sh;
	bl->rf_dtype = (uint8_t)ft;
	if (!warp_shape(sh)) {
		AmdTiling t = amd_tiling(c, sh, M, N);
		bl->rf_nb = (int16_t)t.NB;
		bl->rf_ntn = (int16_t)t.ntn;
		bl->rf_n = (int32_t)(t.ntiles / t.W * t.NB * simt_mma[sh].nc);
		bl->rf = (int32_t)c->f->regs.len;
		for (int i = 0; i < bl->rf_n; i++)
			reg(c, simt_vt(ft));
		bl->rf_agpr = bl->rf_n > 128;
		if (bl->rf_agpr && (vec_push(&c->f->acc, bl->rf) || vec_push(&c->f->acc, bl->rf_n)))
			c->failed = true;
		return;
	}
	int NB = gemm_nb(N);
	bl->rf_nb = (int16_t)NB;
	bl->rf_ntn = (int16_t)(N / (8 * NB));
	int64_t ntiles = (M / 16) * bl->rf_ntn;
	bl->rf_n = (int32_t)(ntiles / (c->nthreads / 32) * NB * 4);
	bl->rf = (int32_t)c->f->regs.len;
	for (int i = 0; i < bl->rf_n; i++)
		reg(c, simt_vt(ft));
}

static void lower_parallel_rf(L *c, const Stmt *s, int32_t F)
{
	Shadows sh;
	int32_t ids[16];
	shadows_begin(c, &s->body, &sh, ids);
	bool was = c->par;
	c->par = true;
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	rf_bases(c, F, rb, cb);
	for (int e = 0; e < c->bl[F].rf_n && !c->failed; e++) {
		int32_t row, col;
		rf_rowcol(c, F, rb, cb, e, &row, &col);
		c->varreg[s->vars[0]] = cvt(c, (DType)VAR(s->vars[0])->type, DT_I32, row);
		c->varreg[s->vars[1]] = cvt(c, (DType)VAR(s->vars[1])->type, DT_I32, col);
		c->rf_slot = e;
		shadows_copy(c, &sh);
		block(c, &s->body);
	}
	c->rf_slot = -1;
	c->par = was;
	shadows_end(c, &sh);
}

/* Whole register fragment <-> a tile of a global/shared buffer.  Row
 * addresses and row bounds are computed once per strip half; each slot
 * then costs a column add, a column check and the access. */
static void copy_rf(L *c, const Stmt *s)
{
	bool from = c->bl[s->src.buf].rf >= 0;
	int32_t F = from ? s->src.buf : s->dst.buf;
	const Region *other = from ? &s->dst : &s->src;
	const Buffer *ob = BUF(other->buf);
	DType ot = (DType)ob->dtype;
	DType ft = (DType)c->bl[F].rf_dtype;
	int es = dtype_bytes(ot), NB = c->bl[F].rf_nb;
	bool glob = ob->scope == SCOPE_GLOBAL;
	const BufLoc *obl = &c->bl[other->buf];
	int32_t off0 = other->nidx ? expr_as(c, other->idx[0], DT_I32) : i32c(c, 0);
	int32_t off1 = other->nidx ? expr_as(c, other->idx[1], DT_I32) : i32c(c, 0);
	int32_t d1 = glob ? obl->dim[1] : i32c(c, bdim(c, ob, 1));
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
		int32_t stride = bin(c, SI_MUL, DT_I64, obl->dim64[1], movi(c, DT_I64, es));
		for (int h = 1; h < nrows; h++)
			rs[h] = bin(c, SI_MUL, DT_I64, stride, movi(c, DT_I64, h * qrow));
	}
	for (int si = 0; si < S; si++) {
		int32_t ocb = bin(c, SI_ADD, DT_I32, off1, cb[si]);
		for (int nb = 0; amd && glob && nb < NB; nb++)
			colok[nb] = setp(c, CMP_LT, DT_U32, nb ? bin(c, SI_ADD, DT_I32, ocb, i32c(c, 16 * nb)) : ocb,
					 obl->dim[1]);
		int32_t rowaddr0 = -1;
		for (int h = 0; h < nrows; h++) {
			int dr = amd ? h * qrow : 8 * h;
			int32_t orow = bin(c, SI_ADD, DT_I32, off0, dr ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, dr)) : rb[si]);
			int32_t rowok = glob ? setp(c, CMP_LT, DT_U32, orow, obl->dim[0]) : -1;
			/* address of (orow, ocb) */
			int32_t rowaddr;
			if (glob && amd && h) {
				rowaddr = bin(c, SI_ADD, DT_I64, rowaddr0, rs[h]);
			} else if (glob) {
				int32_t lin = bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, orow), obl->dim64[1]),
				                  cvt(c, DT_I64, DT_I32, ocb));
				rowaddr = bin(c, SI_ADD, DT_I64, obl->base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)));
				rowaddr0 = rowaddr;
			} else {
				int32_t lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, orow, d1), ocb);
				rowaddr = bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, lin, esr));
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
					ok = bin(c, SI_AND, DT_BOOL, rowok, setp(c, CMP_LT, DT_U32, ocol, obl->dim[1]));
				}
				Space sp = glob ? SP_GLOBAL : SP_SHARED;
				int64_t imm = (int64_t)dc * es + (glob ? 0 : obl->smem);
				int32_t r = c->bl[F].rf + e;
				if (from) {
					r = rf_get(c, F, e);
					/* f16/bf16 pack rounds like the cvt (the PTX path keeps both) */
					bool direct = amd && ft == DT_F32 && (ot == DT_F16 || ot == DT_BF16);
					st(c, sp, ot, rowaddr, imm, pack(c, ot, direct ? r : cvt(c, ot, ft, r)), ok);
					continue;
				}
				int32_t v = ok >= 0 ? zero_storage(c, ot) : reg(c, simt_storage_vt(ot));
				SInst in = I(SI_LD, ot, v, rowaddr, -1);
				in.sub = (uint8_t)sp;
				in.imm = imm;
				in.guard = ok;
				emit(c, in);
				emit(c, I(SI_MOV, ft, r, cvt(c, ft, ot, unpack(c, ot, v)), -1));
			}
		}
	}
}

static void lower_gemm_mma_rf(L *c, const Stmt *s, int64_t K)
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
		int32_t af = (int32_t)c->f->regs.len;
		for (int i = 0; i < 4; i++)
			reg(c, VT_I32);
		frag_reg(c, s->src.buf, s->flag_a, r0, k0, af + 0);
		frag_reg(c, s->src.buf, s->flag_a, r8, k0, af + 1);
		frag_reg(c, s->src.buf, s->flag_a, r0, k8, af + 2);
		frag_reg(c, s->src.buf, s->flag_a, r8, k8, af + 3);
		for (int nb = 0; nb < NB; nb++) {
			int32_t n = bin(c, SI_ADD, DT_I32, bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb)), g);
			int32_t bf = (int32_t)c->f->regs.len;
			reg(c, VT_I32);
			reg(c, VT_I32);
			frag_reg(c, s->src2.buf, !s->flag_b, n, k0, bf);
			frag_reg(c, s->src2.buf, !s->flag_b, n, k8, bf + 1);
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
	int R, C;                  /* tile shape, 0 until seen */
	const Stmt *par;
	bool changed, pass2;
	VEC(int32_t) tl;           /* fragments the current parallel touches */
	bool par_ok;               /* the current parallel has only legal statements */
} VfScan;

static bool vf_cand(L *c, int32_t b)
{
	return b >= 0 && BUF(b)->scope == SCOPE_FRAGMENT && c->bl[b].rf < 0 && BUF(b)->dtype == DT_F32 &&
	       (BUF(b)->rank == 1 || BUF(b)->rank == 2);
}

static void vf_bad(VfScan *v, int32_t b)
{
	if (!v->bad[b])
		v->bad[b] = 1, v->changed = true;
}

static void vf_set_role(VfScan *v, int32_t b, int role)
{
	if (v->role[b] && v->role[b] != role)
		vf_bad(v, b);
	v->role[b] = (uint8_t)role;
}

static bool is_var(L *c, int32_t e, int32_t var) { return EX(e)->kind == E_VAR && EX(e)->var == var; }

/* An element access F[args]: legal only as F[i, k] (tile), F[i] (row) or
 * F[k] (column) of the enclosing parallel, whose extents are the tile's. */
static void vf_access(L *c, VfScan *v, int32_t b, int32_t nargs, const int32_t *args, bool store)
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
		vf_bad(v, b);
		return;
	}
	const Buffer *B = BUF(b);
	if (p->nvars == 2 && B->rank == 2 && nargs == 2 && is_var(c, args[0], p->vars[0]) &&
	    is_var(c, args[1], p->vars[1]) && bdim(c, B, 0) == e0 && bdim(c, B, 1) == e1) {
		vf_set_role(v, b, VF_TILE);
		if (!v->R)
			v->R = (int)e0, v->C = (int)e1;
	} else if (B->rank == 1 && nargs == 1 && is_var(c, args[0], p->vars[0]) && bdim(c, B, 0) == e0 &&
		   !(store && p->nvars == 2)) {
		vf_set_role(v, b, VF_ROW);
	} else if (p->nvars == 2 && B->rank == 1 && nargs == 1 && is_var(c, args[0], p->vars[1]) &&
		   bdim(c, B, 0) == e1 && !store) {
		vf_set_role(v, b, VF_COL);
	} else {
		vf_bad(v, b);
	}
	/* the parallel iterates over the tile layout */
	if (v->pass2 && (e0 != v->R || (p->nvars == 2 && e1 != v->C)))
		vf_bad(v, b);
}

static void vf_expr(L *c, VfScan *v, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD)
		vf_access(c, v, e->buf, e->nargs, e->args, false);
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
static void vf_copy_side(L *c, VfScan *v, const Region *f, const Region *o)
{
	if (!vf_cand(c, f->buf))
		return;
	const Buffer *ob = BUF(o->buf);
	if (f->nidx || is_frag(c, o->buf) || ob->scope == SCOPE_LOCAL || ob->rank != BUF(f->buf)->rank) {
		vf_bad(v, f->buf);
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
		vf_access(c, v, s->dst.buf, s->dst.nidx, s->dst.idx, true);
		break;
	case S_LET: break;
	case S_COPY:
		vf_copy_side(c, v, &s->src, &s->dst);
		vf_copy_side(c, v, &s->dst, &s->src);
		break;
	case S_CLEAR:
	case S_FILL:
		if (vf_cand(c, s->dst.buf) && s->dst.nidx)
			vf_bad(v, s->dst.buf);
		break;
	case S_REDUCE: {
		bool a = vf_cand(c, s->src.buf), d = vf_cand(c, s->dst.buf);
		bool ok = a && d && !v->bad[s->src.buf] && !v->bad[s->dst.buf] && BUF(s->src.buf)->rank == 2 &&
			  BUF(s->dst.buf)->rank == 1 && s->dim == 1 && !s->src.nidx && !s->dst.nidx;
		if (ok) {
			vf_set_role(v, s->src.buf, VF_TILE);
			vf_set_role(v, s->dst.buf, VF_ROW);
			if (!v->R)
				v->R = (int)bdim(c, BUF(s->src.buf), 0), v->C = (int)bdim(c, BUF(s->src.buf), 1);
		} else {
			if (a)
				vf_bad(v, s->src.buf);
			if (d)
				vf_bad(v, s->dst.buf);
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
					vf_bad(v, v->tl.data[i]);
		v->par = NULL;
		break;
	}
	default: /* gemm, cumsum, atomic_add, barrier, alloc */
		if (inpar)
			v->par_ok = false;
		if (vf_cand(c, s->src.buf))
			vf_bad(v, s->src.buf);
		if (vf_cand(c, s->src2.buf))
			vf_bad(v, s->src2.buf);
		if (s->kind != S_ALLOC && vf_cand(c, s->dst.buf))
			vf_bad(v, s->dst.buf);
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
static void vf_analyze(L *c)
{
	size_t nb = c->m->bufs.len;
	VfScan v = {.bad = calloc(nb + 1, 1), .role = calloc(nb + 1, 1), .ges = calloc(nb + 1, 1)};
	if (!v.bad || !v.role || !v.ges) {
		c->failed = true;
		goto out;
	}
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
	for (size_t b = 0; b < nb; b++) {
		if (!vf_cand(c, (int32_t)b) || v.bad[b])
			continue;
		int64_t n0 = bdim(c, BUF(b), 0);
		bool ok = v.role[b] == VF_TILE ? n0 == v.R && bdim(c, BUF(b), 1) == v.C
			  : v.role[b] == VF_ROW ? n0 == v.R : v.role[b] == VF_COL ? n0 == v.C : false;
		if (!ok) {
			v.bad[b] = 1;
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
	if (v.changed || !ntile)
		goto out; /* keep it simple: all or nothing after a late change */
	VfLayout l;
	if (!vf_layout(c, &l, v.R, v.C, es))
		goto out;
	for (size_t b = 0; b < nb; b++)
		if (vf_cand(c, (int32_t)b) && !v.bad[b])
			slots += v.role[b] == VF_TILE ? l.NR * l.NC * l.V : v.role[b] == VF_ROW ? l.NR : l.NC * l.V;
	/* registers per thread: 128 beside addresses and temporaries */
	if (l.NR * l.NC * l.V > 64 || slots > 128)
		goto out;
	c->vl = l;
	for (size_t b = 0; b < nb; b++)
		if (vf_cand(c, (int32_t)b) && !v.bad[b]) {
			c->bl[b].vf = 1;
			c->bl[b].vf_role = v.role[b];
		}
out:
	free(v.bad);
	free(v.role);
	free(v.ges);
	vec_free(&v.tl);
}

static void vf_place(L *c, int32_t b)
{
	BufLoc *bl = &c->bl[b];
	const VfLayout *l = &c->vl;
	bl->vf_n = bl->vf_role == VF_TILE ? l->NR * l->NC * l->V : bl->vf_role == VF_ROW ? l->NR : l->NC * l->V;
	bl->vf = (int32_t)c->f->regs.len;
	for (int i = 0; i < bl->vf_n; i++)
		reg(c, VT_F32);
}

/* Thread coordinates of the layout, once at entry. */
static void vf_setup(L *c)
{
	VfLayout *l = &c->vl;
	bool any = false;
	for (size_t b = 0; b < c->m->bufs.len; b++)
		any |= c->bl[b].vf >= 0;
	if (!any)
		return;
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
	if (l->W > 1) { /* partials[kr][g][w] */
		l->red_smem = c->f->smem_bytes;
		c->f->smem_bytes += ((int64_t)l->NR * l->G * l->W * 4 + 15) & ~15LL;
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

static int32_t vf_reg(L *c, int32_t b) { return vf_slot(c, b, c->vf_kr, c->vf_cs); }

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

static bool vf_find_block(L *c, const Block *b)
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
static void lower_parallel_vf(L *c, const Stmt *s)
{
	const VfLayout *l = &c->vl;
	Shadows sh;
	int32_t ids[16];
	shadows_begin(c, &s->body, &sh, ids);
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
			shadows_copy(c, &sh);
			block(c, &s->body);
		}
	}
	c->vf_kr = c->vf_cs = -1;
	c->par = was;
	shadows_end(c, &sh);
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
static void vf_chunk(L *c, bool load, DType ot, int32_t f, int32_t addr, int32_t ok)
{
	const VfLayout *l = &c->vl;
	int es = dtype_bytes(ot), words = l->V * es / 4, pw = TA_MIN(words, 4);
	int32_t w = f;
	if (es == 2) { /* two b16 per word */
		w = (int32_t)c->f->regs.len;
		for (int i = 0; i < words; i++)
			reg(c, VT_I32);
		if (!load)
			for (int i = 0; i < words; i++) {
				SInst in = I(SI_PACK2, DT_I32, w + i, vf_to_storage(c, ot, f + 2 * i),
					     vf_to_storage(c, ot, f + 2 * i + 1));
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
	if (load && es == 2)
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

/* Tile/column fragment <-> global, per chunk (vec) or per element. */
static void copy_vf_global(L *c, bool from, int32_t F, const Region *o, bool vec)
{
	const VfLayout *l = &c->vl;
	const BufLoc *obl = &c->bl[o->buf];
	DType ot = (DType)BUF(o->buf)->dtype;
	int es = dtype_bytes(ot);
	bool tile = c->bl[F].vf_role == VF_TILE;
	int32_t off0 = tile && o->nidx ? expr_as(c, o->idx[0], DT_I32) : -1;
	int32_t offc = o->nidx ? expr_as(c, o->idx[tile ? 1 : 0], DT_I32) : i32c(c, 0);
	int32_t dlast = obl->dim[tile ? 1 : 0];
	int32_t sg = from ? (tile ? l->st_tile : l->st_col) : -1;
	for (int kr = 0; kr < (tile ? l->NR : 1); kr++) {
		int32_t rowok = -1, rowlin = -1;
		if (tile) {
			int32_t r = vf_row(c, kr);
			if (off0 >= 0)
				r = bin(c, SI_ADD, DT_I32, r, off0);
			rowok = setp(c, CMP_LT, DT_U32, r, obl->dim[0]);
			rowlin = bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, r), obl->dim64[1]);
		}
		for (int cs = 0; cs < l->NC * l->V; cs += vec ? l->V : 1) {
			int32_t col = bin(c, SI_ADD, DT_I32, offc, vf_col(c, cs));
			int32_t ok = and_pred(c, and_pred(c, rowok, setp(c, CMP_LT, DT_U32, col, dlast)), sg);
			int32_t lin = cvt(c, DT_I64, DT_I32, col);
			if (rowlin >= 0)
				lin = bin(c, SI_ADD, DT_I64, rowlin, lin);
			int32_t addr = bin(c, SI_ADD, DT_I64, obl->base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)));
			int32_t f = vf_slot(c, F, kr, cs);
			if (vec) {
				vf_chunk(c, !from, ot, f, addr, ok);
			} else if (from) {
				st(c, SP_GLOBAL, ot, addr, 0, vf_to_storage(c, ot, f), ok);
			} else {
				int32_t v = zero_storage(c, ot);
				SInst in = I(SI_LD, ot, v, addr, -1);
				in.sub = SP_GLOBAL;
				in.guard = ok;
				emit(c, in);
				emit(c, I(SI_MOV, DT_F32, f, cvt(c, DT_F32, ot, unpack(c, ot, v)), -1));
			}
		}
	}
}

/* Whole vector fragment <-> a global or shared buffer of the same rank. */
static void copy_vf(L *c, const Stmt *s)
{
	const VfLayout *l = &c->vl;
	bool from = c->bl[s->src.buf].vf >= 0;
	int32_t F = from ? s->src.buf : s->dst.buf;
	const Region *o = from ? &s->dst : &s->src;
	const Buffer *ob = BUF(o->buf);
	DType ot = (DType)ob->dtype;
	int role = c->bl[F].vf_role, es = dtype_bytes(ot);
	bool glob = ob->scope == SCOPE_GLOBAL;
	if (glob && role != VF_ROW) {
		bool can = (ot == DT_F16 || ot == DT_BF16 || ot == DT_F32) && l->V * es % 4 == 0;
		if (!can) {
			copy_vf_global(c, from, F, o, false);
			return;
		}
		int32_t lscalar = label(c), lend = label(c);
		bra(c, lscalar, vf_aligned(c, o, l->V * es), true);
		copy_vf_global(c, from, F, o, true);
		bra(c, lend, -1, false);
		place(c, lscalar);
		copy_vf_global(c, from, F, o, false);
		place(c, lend);
		return;
	}
	/* row fragments, and shared buffers: element by element */
	int nr = role == VF_COL ? 1 : l->NR, ncs = role == VF_ROW ? 1 : l->NC * l->V;
	int32_t sg = from ? (role == VF_TILE ? l->st_tile : role == VF_ROW ? l->st_row : l->st_col) : -1;
	for (int kr = 0; kr < nr; kr++)
		for (int cs = 0; cs < ncs; cs++) {
			int32_t idx[2], n = 0;
			if (role != VF_COL)
				idx[n++] = vf_row(c, kr);
			if (role != VF_ROW)
				idx[n++] = vf_col(c, cs);
			for (int d = 0; d < n && o->nidx; d++)
				idx[d] = bin(c, SI_ADD, DT_I32, idx[d], expr_as(c, o->idx[d], DT_I32));
			int32_t ok = glob ? inbounds(c, o->buf, idx) : -1;
			Addr a = elem_addr(c, o->buf, idx);
			int32_t f = vf_slot(c, F, kr, cs);
			if (from) {
				st(c, a.sp, ot, a.addr, a.off, vf_to_storage(c, ot, f), and_pred(c, ok, sg));
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
static void reduce_vf(L *c, const Stmt *s)
{
	const VfLayout *l = &c->vl;
	ReduceOp op = (ReduceOp)s->sub;
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	bool ab = op == RED_ABSSUM || op == RED_ABSMAX;
	int n = l->NC * l->V;
	int32_t vals[64], accs[64];
	for (int kr = 0; kr < l->NR; kr++) {
		for (int cs = 0; cs < n; cs++) {
			int32_t x = vf_slot(c, s->src.buf, kr, cs);
			vals[cs] = ab ? un(c, SI_ABS, DT_F32, x) : x;
		}
		for (int w = 1; w < n; w *= 2)
			for (int i = 0; i + w < n; i += 2 * w)
				vals[i] = combine(c, cop, DT_F32, vals[i], vals[i + w]);
		int32_t acc = vals[0];
		for (int off = TA_MIN(l->P, 32) / 2; off >= 1; off /= 2) {
			int32_t other = reg(c, VT_F32);
			SInst in = I(SI_SHFL_BFLY, DT_F32, other, acc, -1);
			in.imm = off;
			emit(c, in);
			acc = combine(c, cop, DT_F32, acc, other);
		}
		accs[kr] = acc;
	}
	if (l->W > 1) { /* the row's warps through shared memory, read back in warp order by every lane */
		int64_t rstride = (int64_t)l->G * l->W * 4;
		for (int kr = 0; kr < l->NR; kr++)
			st(c, SP_SHARED, DT_F32, l->part, l->red_smem + kr * rstride, accs[kr], l->lane0);
		barrier(c);
		for (int kr = 0; kr < l->NR; kr++) {
			int32_t acc = -1;
			for (int w = 0; w < l->W; w++) {
				int32_t x = ld(c, SP_SHARED, DT_F32, l->rowpart, l->red_smem + kr * rstride + 4 * w, -1);
				acc = w ? combine(c, cop, DT_F32, acc, x) : x;
			}
			accs[kr] = acc;
		}
		barrier(c); /* the partials may be overwritten by the next reduction */
	}
	for (int kr = 0; kr < l->NR; kr++) {
		int32_t d = vf_slot(c, s->dst.buf, kr, 0);
		emit(c, I(SI_MOV, DT_F32, d, s->flag_clear ? accs[kr] : combine(c, cop, DT_F32, d, accs[kr]), -1));
	}
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
	case S_BARRIER: barrier(c); break;
	case S_PARALLEL: lower_parallel(c, s); break;
	case S_FOR: lower_for(c, s); break;
	case S_IF: lower_if(c, s); break;
	}
}

/* ---- kernel ------------------------------------------------------------------ */

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

/* Gives every buffer allocated in block b (recursively) its place. */
static void place_bufs(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (s->kind == S_ALLOC) {
			const Buffer *buf = BUF(s->buf);
			int64_t bytes = ir_buf_elems(c->m, buf) * dtype_bytes((DType)buf->dtype);
			if (buf->scope == SCOPE_LOCAL) {
				if (vec_push(&c->f->locals, (bytes + 7) & ~7LL))
					c->failed = true;
				c->bl[s->buf].local = (int32_t)c->f->locals.len - 1;
			} else if (c->bl[s->buf].rf == 1) {
				rf_place(c, s->buf);
			} else if (c->bl[s->buf].vf == 1) {
				vf_place(c, s->buf);
			} else {
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

static _Thread_local int vf_override = -1;

void lower_set_vector_frags(int mode) { vf_override = mode; }

int lower_kernel(const Module *m, int k, const Target *t, SimtFunc *f, Diag *d)
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
	if (!m->verified) {
		diag_error(d, "internal: lowering an unverified module");
		return -1;
	}
	DType fnuz = find_dtype(m, dtype_is_fnuz);
	if (target_is_nvidia(t->id) && fnuz != DT_VOID) {
		diag_at(d, DIAG_ERROR, &m->src, kn->pos,
			"kernel '%s' uses %s, which is an AMD format; NVIDIA targets support fp8e4m3 and fp8e5m2", kn->name,
			dtype_name(fnuz));
		return -1;
	}
	if (t->id == TA_TARGET_SM80 && find_dtype(m, dtype_is_fp8) != DT_VOID) {
		diag_at(d, DIAG_ERROR, &m->src, kn->pos, "kernel '%s' uses fp8, which needs --target=sm_90a", kn->name);
		return -1;
	}
	size_t nb = m->bufs.len, nv = m->vars.len;
	c->bl = calloc(nb + 1, sizeof *c->bl);
	c->varreg = malloc((nv + 1) * sizeof *c->varreg);
	c->rd_ep = calloc(nb + 1, sizeof(uint32_t));
	c->wr_ep = calloc(nb + 1, sizeof(uint32_t));
	c->srd = calloc(nb + 1, sizeof(uint32_t));
	c->swr = calloc(nb + 1, sizeof(uint32_t));
	if (!c->bl || !c->varreg || !c->rd_ep || !c->wr_ep || !c->srd || !c->swr) {
		c->failed = true;
		diag_error(d, "out of memory");
		goto out;
	}
	c->epoch = 1;
	for (size_t i = 0; i < nv; i++)
		c->varreg[i] = -1;
	for (size_t i = 0; i < nb; i++)
		c->bl[i].shadow = c->bl[i].rf = c->bl[i].vf = -1;
	c->rf_slot = -1;
	c->vf_kr = c->vf_cs = -1;
	c->vf_mode = vf_override >= 0 ? vf_override : 1;
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
	if (kn->threadidx >= 0)
		c->varreg[kn->threadidx] = c->tid;
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
	place_bufs(c, &kn->body);
	vf_setup(c);
	/* read-only buffers (typically the input tensors) need no barriers */
	c->sgen++;
	c->touched.len = 0;
	collect_block(c, &kn->body);
	c->ro = calloc(nb + 1, 1);
	if (!c->ro) {
		c->failed = true;
		goto out;
	}
	for (size_t i = 0; i < nb; i++)
		c->ro[i] = c->swr[i] != c->sgen;
	c->touched.len = 0;
	if (f->smem_bytes > smem_limit(t->id)) {
		/* Caught here, not at launch: the code object would load and then
		 * fail every dispatch with an unhelpful runtime error. */
		diag_at(d, DIAG_ERROR, &m->src, kn->pos,
			"kernel '%s' needs %lld bytes of shared memory; %s allows at most %lld per block",
			kn->name, (long long)f->smem_bytes, target_name(t->id), (long long)smem_limit(t->id));
		c->failed = true;
		goto out;
	}
	block(c, &kn->body);
	emit(c, I(SI_RET, DT_VOID, -1, -1, -1));
out:
	free(c->bl);
	free(c->varreg);
	free(c->rd_ep);
	free(c->wr_ep);
	free(c->srd);
	free(c->swr);
	free(c->ro);
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
}

/* ---- dump ---------------------------------------------------------------- */

static const char *const sop_names[SI_COUNT] = {
	"movi", "movf", "mov", "add", "sub", "mul", "div", "rem", "min", "max", "neg", "abs", "and", "or", "xor",
	"not", "shl", "shr", "setp", "selp", "cvt", "pack", "unpack", "pack2", "math", "tid", "ctaid", "param",
	"shbase", "localaddr", "ld", "st", "atom.add", "bar", "shfl.bfly", "mma.m16n8k16", "label", "bra", "ret", "half",
};

void simt_print(const SimtFunc *f, StrBuf *sb)
{
	static const char *const sp[] = {"global", "shared", "local"};
	sb_printf(sb, "func %s threads(%d) smem(%lld)\n", f->name, f->threads, (long long)f->smem_bytes);
	for (size_t i = 0; i < f->code.len; i++) {
		const SInst *in = &f->code.data[i];
		if (in->op == SI_LABEL) {
			sb_printf(sb, "L%lld:\n", (long long)in->imm);
			continue;
		}
		sb_puts(sb, "  ");
		if (in->guard >= 0)
			sb_printf(sb, "@%s%%%d ", in->guard_neg ? "!" : "", in->guard);
		sb_printf(sb, "%s", in->op == SI_MMA ? simt_mma[in->sub < MMA_NSHAPES ? in->sub : 0].name
						  : sop_names[in->op]);
		if (in->op == SI_LD || in->op == SI_ST)
			sb_printf(sb, ".%s", sp[in->sub]);
		if (in->vec > 1)
			sb_printf(sb, ".v%d", in->vec);
		if (in->type != DT_VOID)
			sb_printf(sb, ".%s", dtype_name((DType)in->type));
		if (in->op == SI_CVT)
			sb_printf(sb, ".%s", dtype_name((DType)in->type2));
		if (in->dst >= 0)
			sb_printf(sb, " %%%d", in->dst);
		if (in->a >= 0)
			sb_printf(sb, " %%%d", in->a);
		if (in->b >= 0)
			sb_printf(sb, " %%%d", in->b);
		if (in->c >= 0)
			sb_printf(sb, " %%%d", in->c);
		if (in->op == SI_MOVF)
			sb_printf(sb, " %g", in->fimm);
		else if (in->op == SI_BRA)
			sb_printf(sb, " L%lld", (long long)in->imm);
		else if (in->imm)
			sb_printf(sb, " #%lld", (long long)in->imm);
		sb_putc(sb, '\n');
	}
}

/* ---- host-side integer evaluation (grid sizes) ---------------------------- */

int lower_eval_int(const Module *m, int k, int32_t e, const int64_t *vals, int64_t *out)
{
	return ir_eval_int(m, k, e, vals, out) ? 0 : -1;
}
