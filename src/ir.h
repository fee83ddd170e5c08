/* ir.h — Tile IR: data structures and the passes over them in src/.
 *
 * A Module owns every node of the kernels parsed from one source text.
 * Nodes live in per-kind arrays and refer to each other by dense int32 ids
 * (index into Module.exprs / stmts / vars / bufs).  -1 means "none".
 * docs/tile-ir.md is the user-facing definition of the language; the
 * comments here state what each pass may rely on.
 *
 * Pipeline (api/compile.c): parse -> specialize (-D) -> verify (types,
 * shapes, scopes) -> backend.  The interpreter (interp.c) and every backend
 * require a verified module: all Expr.type fields are set, every shape of a
 * non-global buffer is a compile-time constant, and ids are in range.
 */
#ifndef TILEASM_IR_H
#define TILEASM_IR_H

#include <stdbool.h>

#include "diag.h"
#include "util.h"

/* ---- data types ---------------------------------------------------- */

typedef enum {
	DT_VOID = 0, /* statements; also "not yet typed" */
	DT_BOOL,
	DT_I8,
	DT_U8,
	DT_I16,
	DT_I32,
	DT_U32,
	DT_I64,
	DT_F16,
	DT_BF16,
	DT_F32,
	DT_F64,
	DT_FP8E4M3, /* OCP E4M3FN: bias 7, no infinities, max 448 */
	DT_FP8E5M2, /* OCP E5M2: bias 15, IEEE-like */
	DT_FP8E4M3FNUZ, /* AMD gfx942 E4M3FNUZ: bias 8, no inf, no -0, 0x80 = NaN, max 240 */
	DT_FP8E5M2FNUZ, /* AMD gfx942 E5M2FNUZ: bias 16, no inf, no -0, 0x80 = NaN, max 57344 */
	DT_I4, DT_U4,   /* 4-bit integers: storage types of tensor parameters, two per byte (low nibble first) */
	DT_COUNT
} DType;

const char *dtype_name(DType t);
DType dtype_from_name(const char *s, size_t n); /* DT_VOID if unknown */
int dtype_bytes(DType t); /* 1 for i4/u4 (a value's container; storage: dtype_storage_bytes) */
int dtype_bits(DType t);  /* 4 for i4/u4, else 8 * dtype_bytes */
bool dtype_is_packed(DType t); /* i4, u4 */
/* Bytes a tensor of n elements occupies: i4/u4 pack two per byte, rounded
 * up to whole 32-bit words (backends update a nibble with a 32-bit
 * compare-and-swap); n * dtype_bytes otherwise. */
int64_t dtype_storage_bytes(DType t, int64_t n);
bool dtype_is_float(DType t);
bool dtype_is_fp8(DType t);  /* the four 8-bit float types */
bool dtype_is_fnuz(DType t); /* the two FNUZ (AMD-only) fp8 types */
bool dtype_is_int(DType t); /* integers, not bool */
bool dtype_is_signed(DType t);

/* ---- expressions ----------------------------------------------------- */

typedef enum {
	E_INT,   /* ival; type DT_VOID until verify picks one ("untyped literal") */
	E_FLOAT, /* fval */
	E_BOOL,  /* ival 0/1 */
	E_VAR,   /* var */
	E_LOAD,  /* buf[args...] element read */
	E_UNARY, /* op a */
	E_BINARY,/* a op b */
	E_CALL,  /* intrinsic op(args...) */
	E_CAST,  /* cast_to(a) */
} ExprKind;

typedef enum {
	/* unary */
	OP_NEG, OP_NOT,
	/* binary, lowest precedence last in the parser's table */
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_AND, OP_OR,
	/* intrinsics (E_CALL) */
	OP_MIN, OP_MAX, OP_ABS, OP_EXP, OP_EXP2, OP_LOG, OP_LOG2, OP_SQRT, OP_RSQRT, OP_TANH,
	OP_SELECT, OP_CEILDIV,
	/* added later, kept after the first set so the public ta_op values stay put */
	OP_BNOT,                                      /* unary '~' */
	OP_BAND, OP_BOR, OP_BXOR, OP_SHL, OP_SHR,     /* binary '&' '|' '^' '<<' '>>' */
	OP_FLOOR, OP_CEIL, OP_ROUND, OP_SIN, OP_COS, OP_ERF, OP_SIGMOID, /* intrinsics, one float operand */
	OP_POW, OP_FMOD,                              /* intrinsics, two float operands */
	OP_CLAMP, OP_IF_THEN_ELSE,                    /* intrinsics, three operands */
	/* warp shuffles (per-thread code): value of args[0] in another lane of the 32-lane warp */
	OP_SHFL_XOR, OP_SHFL_DOWN, OP_SHFL_UP, OP_SHFL_IDX,
	OP_COUNT
} Op;

const char *op_name(Op op); /* "+", "min", ... */

/* Nesting limit of expressions and blocks (parser, builder): every pass
 * that recurses over them stays within it. */
#define IR_MAX_HEIGHT 256
/* A reserved word of the language (not usable as a name). */
bool ir_reserved_word(const char *name);

typedef struct {
	uint8_t kind;    /* ExprKind */
	uint8_t op;      /* Op for unary/binary/call */
	uint8_t type;    /* DType, set by verify */
	uint8_t cast_to; /* DType for E_CAST */
	SrcPos pos;
	int32_t a, b;    /* operands of unary/binary/cast */
	int32_t var;     /* E_VAR */
	int32_t buf;     /* E_LOAD */
	int32_t nargs;   /* E_LOAD indices / E_CALL arguments */
	int32_t *args;   /* arena-owned */
	int64_t ival;
	double fval;
} Expr;

/* ---- variables ------------------------------------------------------- */

typedef enum {
	V_SYMBOL,    /* shape symbol (i32 kernel argument unless specialised with -D) */
	V_PARAM,     /* scalar kernel parameter */
	V_BLOCKIDX,  /* bx, by, bz: index = dimension 0..2 */
	V_THREADIDX, /* tx, ty, tz: index = dimension 0..2 */
	V_LOOP,      /* serial/unroll/pipelined/parallel induction variable */
	V_LET,       /* let name = expr (immutable) */
} VarKind;

typedef struct {
	const char *name;
	uint8_t kind;  /* VarKind */
	uint8_t type;  /* DType */
	SrcPos pos;
	int32_t index; /* V_BLOCKIDX: dim; V_PARAM/V_SYMBOL: position in the kernel's argument list */
	bool has_value;/* V_SYMBOL specialised by -D (or by its default) */
	int64_t value;
	int64_t dflt;  /* V_SYMBOL declared NAME = N: N (the value unless -D overrides it), else 0 */
} Var;

/* ---- buffers --------------------------------------------------------- */

typedef enum { SCOPE_GLOBAL, SCOPE_SHARED, SCOPE_FRAGMENT, SCOPE_LOCAL } Scope;
const char *scope_name(Scope s);

#define IR_MAX_RANK 4

typedef struct {
	const char *name;
	uint8_t scope;   /* Scope */
	uint8_t dtype;   /* DType */
	uint8_t rank;
	SrcPos pos;
	int32_t shape[IR_MAX_RANK]; /* expr ids: E_INT or E_VAR of a V_SYMBOL (global); E_INT otherwise after verify */
	int32_t param;   /* SCOPE_GLOBAL: position in the kernel's argument list */
	bool var;        /* `var NAME: T`: a mutable scalar, a SCOPE_LOCAL [1] buffer used without an index */
	bool view;       /* `V = view T[dims]`: SCOPE_GLOBAL, the memory of tensor parameter `viewed` with other dims */
	int32_t viewed;  /* view: the parameter's buffer id */
} Buffer;

/* ---- statements ------------------------------------------------------ */

typedef enum {
	S_ALLOC,     /* buf (a view: no storage of its own) */
	S_LET,       /* var = value */
	S_STORE,     /* region.buf[region.idx] = value  (full element index) */
	S_COPY,      /* src -> dst */
	S_GEMM,      /* C (+)= op(A) * op(B) */
	S_CLEAR,     /* dst.buf = 0 */
	S_FILL,      /* dst.buf = value */
	S_REDUCE,    /* dst = reduce(src, dim) */
	S_CUMSUM,    /* dst = inclusive prefix sum of src along dim */
	S_ATOMIC_ADD,/* dst op= src (region src) or dst[idx] op= value; op (sub) add, max or min */
	S_BARRIER,
	S_PARALLEL,  /* for (vars) in extents: body — iterations are independent */
	S_FOR,       /* serial / unroll / pipelined loop */
	S_IF,
	S_BREAK,     /* leaves the innermost serial/unroll loop */
} StmtKind;

typedef enum { LOOP_SERIAL, LOOP_UNROLL, LOOP_PIPELINED } LoopKind;
typedef enum { RED_SUM, RED_MAX, RED_MIN, RED_ABSSUM, RED_ABSMAX } ReduceOp;
typedef enum { ATOMIC_ADD, ATOMIC_MAX, ATOMIC_MIN } AtomicOp; /* S_ATOMIC_ADD.sub */
const char *atomic_name(AtomicOp op); /* "atomic_add", ... */

/* A buffer, or a tile of it starting at the given offsets.  nidx == 0 means
 * the whole buffer.  For S_STORE/E_LOAD-like element accesses idx is a full
 * index.  The region form B[i, lo : hi, :] (copy and atomic_add only) keeps
 * lo in idx and, per index, hi[d]: REGION_POINT (a fixed index), REGION_ALL
 * (':', idx[d] is the literal 0) or the end expression; hi is NULL when no
 * index is a range.  verify sets tdim for the tile of a copy/atomic_add:
 * buffer dim d runs along tile dim tdim[d], or is fixed at idx[d] (-1). */
#define REGION_POINT (-1)
#define REGION_ALL (-2)
typedef struct {
	int32_t buf;
	int32_t nidx;
	int32_t *idx;
	int32_t *hi;
	SrcPos pos;
	int8_t tdim[IR_MAX_RANK];
} Region;

/* A list of statement ids (a block). */
typedef struct {
	int32_t n;
	int32_t *ids;
} Block;

typedef struct {
	uint8_t kind;   /* StmtKind */
	uint8_t sub;    /* LoopKind for S_FOR, ReduceOp for S_REDUCE, AtomicOp for S_ATOMIC_ADD */
	SrcPos pos;
	Region dst, src;  /* copy/gemm(C in dst, A in src, B in src2)/store/fill/clear/reduce/cumsum/atomic */
	Region src2;
	int32_t value;    /* expr: S_LET, S_STORE, S_FILL, S_ATOMIC_ADD (scalar form, else -1), S_IF cond */
	int32_t var;      /* S_LET, S_FOR */
	int32_t buf;      /* S_ALLOC */
	int32_t lo, hi;   /* S_FOR bounds (exprs), [lo, hi) */
	int32_t step;     /* S_FOR serial/unroll: 'step' expr (a nonzero constant after verify), or -1 for 1 */
	int32_t stages;   /* S_FOR pipelined */
	int32_t dim;      /* S_REDUCE / S_CUMSUM */
	bool flag_a, flag_b, flag_clear, flag_reverse; /* gemm transpose_a/b, clear; cumsum reverse */
	int32_t nvars;    /* S_PARALLEL */
	int32_t *vars;    /* S_PARALLEL loop vars */
	int32_t *extents; /* S_PARALLEL extents (exprs) */
	Block body, els;  /* loops and if */
	bool per_thread;  /* S_IF whose condition uses tx: bodies run once per thread (set by verify) */
	bool vectorized;  /* S_FOR LOOP_UNROLL written 'vectorized' (TileLang's T.vectorized): kept for printing and messages */
	/* S_COPY, tile S_ATOMIC_ADD (set by verify): the tile every element of
	 * which is moved, trank dims of text elements; Region.tdim maps it */
	int32_t trank;
	int32_t text[IR_MAX_RANK];
} Stmt;

/* ---- kernels and modules --------------------------------------------- */

/* One kernel argument as a backend lays it out (tensors as pointers). */
typedef struct {
	int32_t var;  /* V_PARAM or V_SYMBOL var id, or -1 for a tensor */
	int32_t buf;  /* SCOPE_GLOBAL buffer id, or -1 */
} KernelArg;

typedef struct {
	const char *name;
	SrcPos pos;
	int32_t ngrid;
	int32_t grid[3];  /* exprs over symbols/params */
	int32_t threads;  /* block size, constant: tdim[0] * tdim[1] * tdim[2] (set by ir_verify from texpr) */
	int32_t ntdim;    /* threads(X[, Y[, Z]]): 1 to 3 */
	int32_t tdim[3];  /* threads per dimension (1 beyond ntdim); tx is the fastest */
	int32_t texpr[3]; /* the parsed threads(...) sizes, exprs over literals and shape symbols, which
	                   * ir_verify evaluates (after -D) into tdim; -1: tdim given (the builder) */
	int32_t nargs;
	KernelArg *args;  /* tensors and scalars in declaration order, then unspecialised symbols */
	Block body;
	int32_t blockidx[3], threadidx[3]; /* the var ids of bx/by/bz and tx/ty/tz */
	bool uses_tyz;    /* set by ir_verify: some expression reads ty or tz */
	/* use_swizzle(P[, order=row|col]) (TileLang's T.use_swizzle): bx and by
	 * are ir_raster_map of the launch's block index in every statement. */
	uint8_t raster;       /* RasterOrder; RASTER_NONE without use_swizzle */
	int32_t raster_panel; /* expr: P, a positive i32 constant after verify */
	SrcPos raster_pos;
} Kernel;

typedef enum { RASTER_NONE, RASTER_ROW, RASTER_COL } RasterOrder;
const char *raster_name(RasterOrder o); /* "row", "col" */
/* Block rasterisation, TileLang's rasterization2DRow/Column<P>: the block
 * (bx, by) that the launch's block (x, y) of a gx x gy grid runs.  With
 * L = x + y * gx (launch order) and (a, b) = (gx, gy) for row, (gy, gx) for
 * col: panels of P * a consecutive blocks, panel n = L / (P * a) covering
 * lines nP .. nP + s - 1 of b, s = min(P, b - nP); in a panel, offset
 * o = L % (P * a) walks u = o / s (backwards in odd panels: a - 1 - u) and
 * v = nP + o % s.  Row: (bx, by) = (u, v); col: (v, u).  A bijection of the
 * grid for every P >= 1; the interpreter calls it and lower_raster.c emits
 * the same steps.  x < gx, y < gy; gx, gy <= IR_GRID_MAX. */
void ir_raster_map(RasterOrder order, int64_t p, int64_t gx, int64_t gy, int64_t x, int64_t y, int64_t out[2]);

typedef struct {
	Arena arena;
	SrcFile src;
	char *src_copy;   /* owned copy of the text for caret lines */
	VEC(Expr) exprs;
	VEC(Stmt) stmts;
	VEC(Var) vars;
	VEC(Buffer) bufs;
	VEC(Kernel) kernels;
	bool verified;
	/* Set by ir_verify, so that lowering each kernel need not rescan the
	 * module: the first FNUZ / fp8 dtype of its buffers, then of its
	 * expression types and cast targets (DT_VOID: none). */
	uint8_t first_fnuz, first_fp8;
} Module;

/* module.c */
Module *ir_module_new(const char *filename, const char *text, size_t len);
void ir_module_free(Module *m);
int32_t ir_add_expr(Module *m, Expr e);   /* -1 on OOM */
int32_t ir_add_stmt(Module *m, Stmt s);
int32_t ir_add_var(Module *m, Var v);
int32_t ir_add_buf(Module *m, Buffer b);
int32_t ir_int(Module *m, int64_t v, SrcPos pos);
bool ir_equal(const Module *a, const Module *b); /* structural, ignores positions */
/* How deep the recursive passes go on m: the deepest block nesting (an
 * else-if is one level more) plus the tallest expression tree; computed
 * without recursion (for run_with_stack_for). */
size_t ir_nesting(const Module *m);
/* Constant value of an integer expression after specialisation; false if not constant. */
bool ir_const_int(const Module *m, int32_t e, int64_t *out);
/* Value of integer expression e of kernel k (grid sizes) given one value per
 * kernel argument (symbols and integer scalars; others ignored).  Returns 0,
 * or -1 if e is not computable from those (floats, loads, division by 0). */
int ir_eval_i64(const Module *m, int k, int32_t e, const int64_t *vals, int64_t *out);
/* Iterations of `for i in lo .. hi step st` (st != 0): i = lo, lo + st, ...
 * while i < hi (st > 0) or i > hi (st < 0). */
int64_t ir_trip_count(int64_t lo, int64_t hi, int64_t st);
/* Number of elements of a verified non-global buffer. */
int64_t ir_buf_elems(const Module *m, const Buffer *b);
/* Constant dimension d of a buffer (-1 if symbolic and not specialised). */
int64_t ir_buf_dim(const Module *m, const Buffer *b, int d);

/* parse.c: text -> Module; returns NULL on error (diagnostics in d). */
Module *ir_parse(const char *filename, const char *text, size_t len, Diag *d);

/* verify.c (ir_specialize): apply -D NAME=VALUE to every kernel's symbols. Unknown names are errors. */
typedef struct {
	const char *name;
	int64_t value;
} Define;
int ir_specialize(Module *m, const Define *defs, int ndefs, Diag *d);

/* verify.c: type-check and check shapes/scopes; sets Expr.type and Kernel.args. */
int ir_verify(Module *m, Diag *d);

/* print.c: canonical text. */
void ir_print(const Module *m, StrBuf *sb);

/* analysis.c: which tensor arguments a kernel writes (copy/store/atomic
 * destinations) and which it accumulates into (atomic_add: its old value is
 * read).  Arrays have k->nargs entries. */
void ir_written_args(const Module *m, int k, bool *written, bool *accumulated);

/* launch.c: the grid of kernel k for one value per kernel argument
 * (ir_eval_i64's vals).  Returns 0, or -1 when a size is not computable or
 * outside 0..IR_GRID_MAX (what both launchers take: CUDA's x limit), or,
 * under use_swizzle, when gx * gy exceeds 2^32 - 1. */
enum { IR_GRID_MAX = 0x7fffffff };
int ir_grid(const Module *m, int k, const int64_t *vals, uint32_t grid[3]);
/* The argument block of kernel k as a C struct of its arguments in order
 * (natural alignment; tensors 8-byte pointers, scalars 4 bytes or 8 for
 * 64-bit types, symbols 4): offset[i] per argument, returns the size. */
uint32_t ir_arg_layout(const Module *m, int k, uint32_t *offset);
uint32_t ir_arg_size(const Module *m, const KernelArg *a);

#endif
