/* lower_impl.h — private to codegen/lower/lower*.c: the lowering context (L),
 * where each buffer lives (BufLoc, VfLayout), the instruction-building
 * helpers every file uses (static inline, so their short names stay
 * private), and each file's shared functions. */
#ifndef TILEASM_LOWER_IMPL_H
#define TILEASM_LOWER_IMPL_H

#include "lower.h"

enum { LOWER_FOLD_MAX = 4 }; /* conditions one parallel loop's whole-tile test decides */

typedef struct {
	int64_t smem;   /* shared/fragment: byte offset in the shared area */
	int32_t local;  /* local: local array id */
	int32_t shadow; /* local: private copy in the current parallel body, or -1 */
	/* local kept in registers (AMD targets): lreg >= 0 is the first of lreg_n
	 * registers, one per element in its storage form; lshadow the first of
	 * the private copy in the current parallel/per-thread body, or -1 */
	int32_t lreg, lreg_n, lshadow;
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
	/* MFMA (wave64) layout with the operands swapped (the gemm computes
	 * C^T = B^T A^T): slot q of a lane is C[tm*16 + i][tn*16*NB + 16 nb +
	 * 4 h + q], four consecutive columns (wide epilogue stores); only
	 * when the kernel has no MMA-row fragments (rr_tile < 0) */
	bool rf_swap;
	/* register-resident element-wise fragment (the vector layout, VfLayout):
	 * vf >= 0 is the first of vf_n consecutive f32 registers */
	int32_t vf, vf_n;
	uint8_t vf_role;  /* VF_TILE, VF_ROW or VF_COL */
	/* register-resident row fragment of the MMA layout (an f32 D[R] that
	 * goes with register fragments F[R, C]): rr >= 0 is the first of rr_n
	 * f32 registers, one per distinct row of F this thread holds */
	int32_t rr, rr_n;
	/* on-chip 2-D tile with an XOR-swizzled layout (lower_swizzle.c):
	 * swz_bits > 0; chunk x / 16 of row r is stored at chunk
	 * (x / 16) ^ (((r >> swz_shift) & (2^swz_bits - 1)) << swz_mul) */
	uint8_t swz_bits, swz_shift, swz_mul;
	/* sm_90a wgmma operand tile (lower_wgmma.c): 1024-byte aligned, the
	 * 128B-swizzle layout of wgmma's shared-memory descriptors: columns in
	 * blocks of 64 elements (128 bytes), block j of all R rows at j * R * 128,
	 * row r of a block at r * 128 with the chunk XOR (r % 8) above */
	bool wgm;
} BufLoc;

/* The vector layout of element-wise register fragments (docs/lowering.md).
 * One per kernel, from the tile shape R x C that every tile fragment has:
 * thread t is lane p = t % P of row group g = t / P; it holds rows
 * g + G*kr (g % R when G > R: the row groups beyond R are duplicates) and
 * in each of them the V-element chunks starting at columns (p + P*kc) * V.
 * A row of W = P / 32 > 1 warps combines its warps' partial reductions in
 * shared memory: each reduce statement has its own area of NR x G x W
 * floats (red_area), so one outside a loop needs no barrier after its
 * reads (nothing writes its area again). */
typedef struct {
	int R, C;      /* tile shape */
	int V, P, NC;  /* elements per chunk, lanes per row, chunks per lane and row */
	int G, NR;     /* row groups (threads / P), rows per thread */
	int W;         /* warps per row (P / 32, or 1) */
	int64_t red_smem; /* W > 1: byte offset of the partials in the shared area */
	int64_t red_bytes; /* W > 1: bytes of one area */
	int32_t *red_area; /* W > 1, per statement: 0, or 1 + 2 * area + (1 if inside a loop) */
	int nred;          /* W > 1: areas (one per vector-fragment reduce statement, then one spare) */
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
	BufLoc *bl;        /* by buffer id; only the kernel's buffers (kb) are set up */
	int32_t *kb, nkb;  /* the kernel's buffers (tensor arguments, allocations), increasing ids */
	/* Registers holding the variable of an unrolled loop copy (lower_unrolled)
	 * and its value: constant indices of register locals (innermost 8). */
	int32_t ureg[8];
	int64_t uval[8];
	int nureg;
	int32_t *varreg;
	int32_t tid, shbase;
	int nthreads;
	bool par;        /* inside parallel / per-thread code */
	const char *stage_why; /* lower_for_staged: why the current pipelined loop is not staged */
	int stage_regs;        /* lower_for_staged: its staging registers per lane */
	int32_t brk;     /* label a break goes to: the end of the innermost serial loop, -1 outside */
	bool failed;
	/* barrier tracking */
	uint32_t *rd_ep, *wr_ep, epoch;
	bool dirty;
	uint32_t *srd, *swr, sgen;
	uint8_t *ro;     /* buffers no statement of the kernel writes: never a conflict */
	VEC(int32_t) touched;
	int32_t rf_slot;     /* inside a register-fragment parallel body: the element slot, else -1 */
	int32_t rr_slot;     /* inside a parallel body with MMA-row fragments: the row slot, else -1 */
	int32_t rr_tile;     /* a register fragment F[R, C] whose layout the row fragments follow, or -1 */
	VfLayout vl;
	int vf_mode;         /* 0: no vector fragments, 1: on */
	int vf_kr, vf_cs;    /* inside a vector-fragment parallel body: the row slot and column slot */
	/* NVIDIA: vector-fragment slots loaded from f16/bf16 and not yet written
	 * keep the loaded 32-bit word and convert at each read (vf_val), so the
	 * packed pair, not two f32, is what stays live (lower_vec.c) */
	int32_t *vf_lz, nlz; /* per register below nlz: -1, or word * 4 + half * 2 + (bf16) */
	VEC(int32_t) vf_lzl; /* registers that may be lazy */
	int loop_depth;      /* block-level serial/pipelined loops around the current statement */
	const LowerWg *wg;   /* sm_90a GEMM path (lower_kernel_wg), or NULL */
	bool wg_done;        /* the SI_WG_GEMM_LOOP was emitted on a wgmma-layout accumulator */
	int64_t wg_stage;    /* shared offset of the staged store's buffer (copy_rf), or -1 before the first */
	int32_t areg_buf, areg_frag; /* the next gemm's A (areg_buf) is register fragment areg_frag (lower_mma_ldm.c) */
	unsigned nv_off;     /* LOWER_NV_* paths switched off (LowerOptions.nvidia_off) */
	bool cp_pending;     /* cp.async copies issued and not yet committed (lower_async.c) */
	bool rf_atomic;      /* copy_rf's stores are atomic adds (the tile form of atomic_add, lower_atomic) */
	bool collect_locals; /* lower_collect_*: record written locals instead */
	const char **frag_why; /* per buffer: why a fragment stays in shared memory (vf_analyze), for messages */
	SrcPos *frag_wpos;     /* where (the first use that decided it) */
	VEC(int32_t) wlocals;
	/* whole-tile tests (lower_fold.c): inside a copy of a parallel loop, the
	 * conditions taken as fold_val; fold_def by var id (mark_body) */
	int32_t fold_cond[LOWER_FOLD_MAX];
	int nfold, fold_val;
	int32_t *fold_def;
} L;

/* Each buffer b of the kernel, in increasing id order (the passes over
 * buffers visit only these: per-kernel cost, not the module's). */
/* A byte per buffer id, 0 for the kernel's buffers (the only ones read), or NULL. */
uint8_t *lower_kb_bytes(L *c);
#define FOR_KBUF(c, b) for (int32_t b##_j = 0, b = 0; b##_j < (c)->nkb && ((b = (c)->kb[b##_j]), 1); b##_j++)

#define EX(id) (&c->m->exprs.data[(id)])
#define ST(id) (&c->m->stmts.data[(id)])
#define BUF(id) (&c->m->bufs.data[(id)])
#define VAR(id) (&c->m->vars.data[(id)])

typedef struct {
	Space sp;
	int32_t addr;
	int64_t off;
} Addr;

/* Addr.sp of an element of a register-resident local: addr is an i32 byte
 * offset, off the buffer id << 32 plus a constant byte offset.  ld and st
 * turn it into register moves and selects (lower_expr.c); never emitted. */
#define SP_REGS ((Space)3)
int32_t lower_regs_ld(L *c, DType t, int32_t addr, int64_t off);
void lower_regs_st(L *c, DType t, int32_t addr, int64_t off, int32_t val, int32_t guard);

typedef struct {
	int32_t p, top, end, step;
} DLoop;

/* Private copies of the locals a parallel/per-thread body writes: set up
 * at the start of each iteration, dropped at its end. */
typedef struct {
	size_t n;
	int32_t bufs[16];
} Shadows;

/* Functions shared between the files, by the file that defines them. */
/* lower.c */
void lower_block(L *c, const Block *b);
void lower_stmt_in_block(L *c, const Block *b, int i);
void lower_shadows_begin(L *c, const Block *body, Shadows *sh, int32_t *shadow_ids);
void lower_shadows_copy(L *c, Shadows *sh);
void lower_shadows_end(L *c, Shadows *sh);

/* lower_expr.c */
Addr lower_elem_addr(L *c, int32_t bufid, const int32_t *idx);
int32_t lower_packed_nibble(L *c, int32_t bufid, const int32_t *idx);
/* A canonical value's bits zero-extended in an i32 (i64 for 64-bit types), and back. */
int32_t lower_bits_of(L *c, DType from, int32_t a);
int32_t lower_from_bits(L *c, DType to, int32_t x);
int32_t lower_load_elem(L *c, int32_t bufid, const int32_t *idx, int32_t guard);
void lower_store_elem(L *c, int32_t bufid, const int32_t *idx, int32_t val, int32_t guard);
int32_t lower_expr(L *c, int32_t id);
DLoop lower_dloop_begin(L *c, int64_t total, bool dist);
void lower_dloop_end(L *c, DLoop *l);
void lower_decompose(L *c, int32_t p, const int64_t *ext, int r, int32_t *idx);
void lower_shape_of(L *c, const Buffer *b, int64_t *ext, int64_t *total);
int32_t lower_inbounds(L *c, int32_t bufid, const int32_t *idx);
void lower_region_idx(L *c, const Region *r, const int32_t *ti, int32_t *out);
/* The non-fragment side of a register-fragment copy, row-major: tile
 * element (i, j) is element (off[0] + i) * pitch + off[1] + j from base
 * (global: i64 address, bounds bound[] and the fixed indices' pred ok;
 * shared: i32 element offset or -1 for none, pitch i32).  A 1-D tile
 * uses only column 1 (rdim -1). */
typedef struct {
	int32_t base, pitch, ok, rdim;
	int32_t off[2], bound[2];
} Window;
bool lower_window_ok(L *c, const Stmt *s, const Region *f, const Region *o);
Window lower_window(L *c, const Stmt *s, const Region *o);

/* lower_async.c */
bool lower_copy_async(L *c, const Stmt *s);
void lower_cp_flush(L *c);
bool lower_pipelined(L *c, const Stmt *s, int32_t i, int32_t hi, DType o, int64_t step);

/* lower_mma_ldm.c */
bool lower_gemm_areg_skip(L *c, const Block *b, int i);
bool lower_gemm_ldm(L *c, const Stmt *s);
void ldm_swizzle_analyze(L *c);
bool ldm_names_buf(L *c, const Stmt *s, int32_t b);
bool ldm_region_reads_buf(L *c, const Region *r, int32_t buf, bool whole);
bool ldm_areg_fits(L *c, int32_t F, const Stmt *s);
int32_t ldm_areg_pair(L *c, int32_t F, int e, DType in);

/* lower_wgmma.c */
void wgmma_analyze(L *c);
void wgmma_place(L *c);
bool wgmma_areg_ok(L *c, const Stmt *g, int32_t F);
bool lower_gemm_wgmma(L *c, const Stmt *s);

/* lower_sync.c */
void lower_barrier(L *c);
void lower_collect_expr(L *c, int32_t id);
void lower_collect_block(L *c, const Block *b);
void lower_sync_for(L *c, int32_t id);
void lower_flush(L *c);
void lower_flush_loop(L *c, const Stmt *loop, int64_t step);

/* lower_data.c */
void lower_store(L *c, const Stmt *s);
void lower_copy(L *c, const Stmt *s);
void lower_fill(L *c, const Stmt *s);
void lower_atomic(L *c, const Stmt *s);
bool lower_atomic_native(L *c, AtomicOp op, Space sp, DType t);
int32_t lower_combine(L *c, ReduceOp op, DType t, int32_t acc, int32_t x);
void lower_cas_update(L *c, Space sp, int32_t ea, DType t, int op, int32_t v, int32_t nib, int32_t guard);
void lower_reduce(L *c, const Stmt *s);
void lower_cumsum(L *c, const Stmt *s);
bool lower_copy_stageable(L *c, const Stmt *s);
int32_t lower_copy_stage_pred(L *c, const Stmt *s);
int lower_copy_stage_regs(L *c, const Stmt *s);
int lower_copy_stage_load(L *c, const Stmt *s, int32_t *val);
void lower_copy_stage_store(L *c, const Stmt *s, const int32_t *val);

/* lower_mma.c, lower_rf.c, lower_rr.c */
void lower_gemm(L *c, const Stmt *s);
void lower_wg_loop(L *c, const Stmt *s);
void rf_analyze(L *c);
void rf_place(L *c, int32_t b);
int32_t rf_get(L *c, int32_t b, int e);
int32_t rf_find_block(L *c, const Block *b);
void lower_parallel_rf(L *c, const Stmt *s, int32_t F);
void copy_rf(L *c, const Stmt *s);
void rr_place(L *c, int32_t b);
bool rr_find_block(L *c, const Block *b);
void lower_parallel_rr(L *c, const Stmt *s);
void reduce_rr(L *c, const Stmt *s);
void reduce_rf_mem(L *c, const Stmt *s);
int lower_gemm_amd_operands(L *c, const Stmt *s, int *P);

/* lower_swizzle.c: the shared-tile layout function and the fragment
 * pointers of the MFMA/WMMA operand reads (file comment there). */
void swz_analyze(L *c);
/* lower_raster.c: use_swizzle's block remap at the kernel entry (no-op without it) */
void lower_raster(L *c);
int swz_period(const BufLoc *bl);
int32_t lower_sh_addr(L *c, int32_t bufid, int32_t row, int32_t col);
#define SWZ_MAXT 8
/* Element (row + drow, col + dcol) of buffer buf for constant steps: the
 * lane's row is a multiple of ralign; the lane's 16-byte chunk index has
 * no bit in common with the column steps used that are multiples of cspan
 * chunks (cspan 0: no column step is known to be disjoint; those take the
 * full layout function). */
typedef struct {
	int32_t buf, row, col, m;
	int ralign, cspan;
	int32_t base[SWZ_MAXT];
	int64_t t[SWZ_MAXT];
} SwzPtr;
void swz_ptr_init(L *c, SwzPtr *p, int32_t bufid, int32_t row, int32_t col, int ralign, int cspan);
int32_t swz_ptr_at(L *c, SwzPtr *p, int64_t drow, int64_t dcol, int64_t *imm);

/* lower_fold.c: a parallel loop lowered by one() behind its whole-tile
 * tests; the value (0/1) a condition is folded to in the current copy, or -1 */
void lower_parallel_folded(L *c, const Stmt *s, void (*one)(L *, const Stmt *));
int lower_fold_value(const L *c, int32_t cond);

/* lower_vec.c */
void vf_analyze(L *c);
void vf_place(L *c, int32_t b);
void vf_setup(L *c);
int32_t vf_reg(L *c, int32_t b);
int32_t vf_val(L *c, int32_t r);
void vf_def(L *c, int32_t r);
void vf_materialize(L *c);
void vf_materialize_reg(L *c, int32_t r); /* register r plain (converted if lazy) */
bool vf_find_block(L *c, const Block *b);
void lower_parallel_vf(L *c, const Stmt *s);
void copy_vf(L *c, const Stmt *s);
void reduce_vf(L *c, const Stmt *s);

/* ---- emission helpers ------------------------------------------------ */

/* The operation type computing in dtype t uses (small types widen). */
static inline DType op_type(DType t)
{
	switch (t) {
	case DT_I8: case DT_I16: case DT_I32: return DT_I32;
	case DT_U8: case DT_U32: case DT_U4: return DT_U32;
	case DT_I4: return DT_I32;
	case DT_F16: case DT_BF16: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ: case DT_FP8E5M2FNUZ:
		return DT_F32;
	default: return t;
	}
}

static inline void fail(L *c, SrcPos pos, const char *fmt, const char *arg)
{
	if (!c->failed)
		diag_at(c->d, DIAG_ERROR, &c->m->src, pos, fmt, arg);
	c->failed = true;
}

static inline int32_t reg(L *c, VType vt)
{
	if (vec_push(&c->f->regs, (uint8_t)vt)) {
		c->failed = true;
		return 0;
	}
	return (int32_t)c->f->regs.len - 1;
}

static inline void emit(L *c, SInst in)
{
	if (vec_push(&c->f->code, in))
		c->failed = true;
}

static inline SInst I(SOp op, DType t, int32_t dst, int32_t a, int32_t b)
{
	return (SInst){.op = (uint8_t)op, .type = (uint8_t)t, .dst = dst, .a = a, .b = b, .c = -1, .guard = -1};
}

static inline VType vt_of_op(DType t)
{
	return t == DT_U32 ? VT_I32 : simt_vt(t);
}

static inline int32_t movi(L *c, DType t, int64_t v)
{
	int32_t r = reg(c, t == DT_F16 || t == DT_BF16 ? VT_B16 : vt_of_op(t));
	SInst in = I(SI_MOVI, t, r, -1, -1);
	in.imm = v;
	emit(c, in);
	return r;
}
static inline int32_t i32c(L *c, int64_t v) { return movi(c, DT_I32, v); }

static inline int32_t movf(L *c, DType t, double v)
{
	int32_t r = reg(c, t == DT_F64 ? VT_F64 : VT_F32);
	SInst in = I(SI_MOVF, t == DT_F64 ? DT_F64 : DT_F32, r, -1, -1);
	in.fimm = v;
	emit(c, in);
	return r;
}

static inline int32_t bin(L *c, SOp op, DType t, int32_t a, int32_t b)
{
	int32_t r = reg(c, vt_of_op(t));
	emit(c, I(op, t, r, a, b));
	return r;
}

static inline int32_t un(L *c, SOp op, DType t, int32_t a)
{
	return bin(c, op, t, a, -1);
}

static inline int32_t setp(L *c, Cmp cmp, DType t, int32_t a, int32_t b)
{
	int32_t r = reg(c, VT_PRED);
	SInst in = I(SI_SETP, t, r, a, b);
	in.sub = (uint8_t)cmp;
	emit(c, in);
	return r;
}

static inline int32_t selp(L *c, DType t, int32_t p, int32_t a, int32_t b)
{
	int32_t r = reg(c, vt_of_op(t));
	SInst in = I(SI_SELP, t, r, a, b);
	in.c = p;
	emit(c, in);
	return r;
}

static inline int32_t label(L *c) { return c->f->nlabels++; }

static inline void place(L *c, int32_t lbl)
{
	SInst in = I(SI_LABEL, DT_VOID, -1, -1, -1);
	in.imm = lbl;
	emit(c, in);
}

/* goto lbl [if p (or !p when neg)] */
static inline void bra(L *c, int32_t lbl, int32_t p, bool neg)
{
	SInst in = I(SI_BRA, DT_VOID, -1, -1, -1);
	in.imm = lbl;
	in.guard = p;
	in.guard_neg = neg;
	emit(c, in);
}

static inline int32_t cvt(L *c, DType to, DType from, int32_t a);

/* i4/u4 values are i32 registers holding the value (sign/zero-extended),
 * so backends never see the 4-bit types: from one is from i32; to one is
 * to i32 (floats saturate to i32 first), then wrapped (ints) or clamped
 * (floats) to 4 bits here. */
static inline int32_t cvt_packed(L *c, DType to, DType from, int32_t a)
{
	if (dtype_is_packed(from))
		return cvt(c, to, to == DT_I32 || to == DT_U32 ? to : DT_I32, a);
	bool sg = to == DT_I4;
	int32_t x = cvt(c, DT_I32, from, a);
	if (dtype_is_float(from)) {
		int32_t lo = i32c(c, sg ? -8 : 0), hi = i32c(c, sg ? 7 : 15);
		SInst in = I(SI_MAX, DT_I32, reg(c, VT_I32), x, lo);
		emit(c, in);
		SInst in2 = I(SI_MIN, DT_I32, reg(c, VT_I32), in.dst, hi);
		emit(c, in2);
		return in2.dst;
	}
	SInst sl = I(SI_SHL, DT_I32, reg(c, VT_I32), x, i32c(c, 28));
	emit(c, sl);
	SInst sr = I(SI_SHR, sg ? DT_I32 : DT_U32, reg(c, VT_I32), sl.dst, i32c(c, 28));
	emit(c, sr);
	return sr.dst;
}

/* Canonical of `to` from canonical of `from`. */
static inline int32_t cvt(L *c, DType to, DType from, int32_t a)
{
	if (to == from)
		return a;
	if (dtype_is_packed(to) || dtype_is_packed(from))
		return cvt_packed(c, to, from, a);
	int32_t r = reg(c, simt_vt(to));
	SInst in = I(SI_CVT, to, r, a, -1);
	in.type2 = (uint8_t)from;
	emit(c, in);
	return r;
}

/* Round an op_type result back to dtype t (small floats, small ints). */
static inline int32_t fix(L *c, DType t, int32_t r)
{
	DType o = op_type(t);
	return o == t ? r : cvt(c, t, o, r);
}

static inline int32_t ld(L *c, Space sp, DType t, int32_t addr, int64_t off, int32_t guard)
{
	if (sp == SP_REGS)
		return lower_regs_ld(c, t, addr, off);
	int32_t r = reg(c, simt_storage_vt(t));
	SInst in = I(SI_LD, t, r, addr, -1);
	in.sub = (uint8_t)sp;
	in.imm = off;
	in.guard = guard;
	emit(c, in);
	return r;
}

static inline void st(L *c, Space sp, DType t, int32_t addr, int64_t off, int32_t val, int32_t guard)
{
	if (sp == SP_REGS) {
		lower_regs_st(c, t, addr, off, val, guard);
		return;
	}
	SInst in = I(SI_ST, t, -1, addr, val);
	in.sub = (uint8_t)sp;
	in.imm = off;
	in.guard = guard;
	emit(c, in);
}

static inline int32_t unpack(L *c, DType t, int32_t s)
{
	if (simt_vt(t) == simt_storage_vt(t) && !dtype_is_fp8(t))
		return s;
	int32_t r = reg(c, simt_vt(t));
	emit(c, I(SI_UNPACK, t, r, s, -1));
	return r;
}

static inline int32_t pack(L *c, DType t, int32_t v)
{
	if (simt_vt(t) == simt_storage_vt(t) && !dtype_is_fp8(t))
		return v;
	int32_t r = reg(c, simt_storage_vt(t));
	emit(c, I(SI_PACK, t, r, v, -1));
	return r;
}

static inline int32_t zero_storage(L *c, DType t)
{
	switch (simt_storage_vt(t)) {
	case VT_B16: return movi(c, DT_F16, 0);
	case VT_I64: return movi(c, DT_I64, 0);
	case VT_F32: return movf(c, DT_F32, 0);
	case VT_F64: return movf(c, DT_F64, 0);
	default: return i32c(c, 0);
	}
}

static inline int32_t zero_canon(L *c, DType t)
{
	switch (simt_vt(t)) {
	case VT_PRED: return movi(c, DT_BOOL, 0);
	case VT_I64: return movi(c, DT_I64, 0);
	case VT_F32: return movf(c, DT_F32, 0);
	case VT_F64: return movf(c, DT_F64, 0);
	default: return i32c(c, 0);
	}
}

static inline int64_t bdim(L *c, const Buffer *b, int d) { return ir_buf_dim(c->m, b, d); }

static inline int32_t expr_as(L *c, int32_t e, DType t)
{
	return cvt(c, t, (DType)EX(e)->type, lower_expr(c, e));
}

static inline bool is_frag(L *c, int32_t b) { return b >= 0 && BUF(b)->scope == SCOPE_FRAGMENT; }

#endif
