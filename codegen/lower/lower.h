/* lower.h — Tile IR -> per-thread SIMT IR, and the backends that consume it.
 *
 * lower_kernel turns one verified Tile IR kernel into a SimtFunc: the code
 * ONE thread of the block executes, target-independent.  Both backends
 * translate it instruction by instruction: PTX (ptx.c) and AMD (amd_isel.c,
 * then the passes of amd.h); the SIMT IR is documented in docs/lowering.md.
 *
 * Values live in typed virtual registers.  A value of IR dtype T is held in
 * its "canonical" register class (simt_vt):
 *   bool -> pred;  i8 u8 i16 i32 u32 -> i32 (sign/zero-extended);  i64 -> i64;
 *   f16 bf16 fp8 f32 -> f32 (the exact value);  f64 -> f64.
 * Memory holds the "storage" form; SI_PACK/SI_UNPACK convert between the two
 * (f16/bf16 storage is a b16 register, fp8/bool/small ints an i32 register).
 *
 * Control flow is a flat list with labels and branches.  Every branch that
 * encloses a barrier or a warp-collective op (shuffle, mma) is uniform over
 * the block or warp respectively — the lowering guarantees it.
 */
#ifndef TILEASM_LOWER_H
#define TILEASM_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"
#include "target.h"

/* Register classes. */
typedef enum { VT_PRED, VT_B16, VT_I32, VT_I64, VT_F32, VT_F64, VT_COUNT } VType;

/* Memory spaces. */
typedef enum { SP_GLOBAL, SP_SHARED, SP_LOCAL } Space;

/* Comparisons (SI_SETP.sub). */
typedef enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } Cmp;

/* Float math (SI_MATH.sub): all on f32, or f64 for MATH_SQRT/MATH_RCP and
 * the four roundings.  MATH_FLOOR/CEIL/RNDNE (half to even)/TRUNC round to
 * an integral value; MATH_SIN/COS take radians in [-pi, pi] (the lowering
 * reduces the argument first). */
typedef enum {
	MATH_EX2, MATH_LG2, MATH_SQRT, MATH_RCP, MATH_FLOOR, MATH_CEIL, MATH_RNDNE, MATH_TRUNC, MATH_SIN, MATH_COS
} MathOp;

/* Instructions.  `type` is an IR DType giving the operation's semantics
 * (DT_I32 signed, DT_U32 unsigned, DT_I64, DT_F32, DT_F64, DT_BOOL for
 * predicates).  Operands a, b, c are register ids; -1 when unused. */
typedef enum {
	SI_MOVI,   /* dst = imm, type I32/U32/I64/BOOL */
	SI_MOVF,   /* dst = fimm, type F32/F64 */
	SI_MOV,    /* dst = a */
	SI_ADD, SI_SUB, SI_MUL, SI_DIV, SI_REM, /* int: wrap, truncating div/rem; float: IEEE, no fusion */
	SI_MIN, SI_MAX,        /* float: NaN-ignoring like fminf */
	SI_NEG, SI_ABS,
	SI_AND, SI_OR, SI_XOR, SI_NOT, /* ints or preds */
	SI_SHL, SI_SHR,        /* SHR arithmetic for I32/I64, logical for U32; count b an i32 in [0, bits) */
	SI_SETP,   /* dst(pred) = a <sub:Cmp> b, compared as `type` (floats: NE is unordered, others ordered) */
	SI_SELP,   /* dst = c ? a : b (c a pred), type not BOOL */
	SI_CVT,    /* dst (canonical of type) = a (canonical of type2), with the IR cast rules */
	SI_PACK,   /* dst (storage of type) = a (canonical of type); floats RNE, fp8 satfinite */
	SI_UNPACK, /* dst (canonical of type) = a (storage of type) */
	SI_PACK2,  /* dst i32 = {lo b16 a, hi b16 b} */
	SI_MATH,   /* dst = sub(a), type F32 (or F64 for SQRT/RCP) */
	SI_TID,    /* dst i32 = thread index in the block (x) */
	SI_CTAID,  /* dst i32 = block index, dimension imm */
	SI_PARAM,  /* dst = kernel parameter imm (loaded as `type`: I64 for tensor pointers) */
	SI_SHBASE, /* dst i32 = shared-memory address of the kernel's shared area */
	SI_LOCALADDR, /* dst i64 = address of local array imm */
	SI_LD,     /* dst (storage of type) = [a + imm] in space sub; guard: only if pred.
	            * vec 2/4: type I32 only, dst..dst+vec-1 = 8/16 aligned bytes.
	            * c >= 0 (AMD lowering only, shared, 16-bit type, no vec): dst (i32) = the
	            * loaded 16 bits in the high half, the low half of c (c == dst in
	            * lower_mma.c's operand fragments: ds_read_u16_d16_hi) */
	SI_ST,     /* [a + imm] = b (storage of type); vec as for SI_LD (b..b+vec-1) */
	SI_ATOM_ADD, /* [a + imm] += b (storage of type) in space sub (global or shared) */
	SI_ATOM_MAX, /* [a + imm] = max([a + imm], b), as SI_ATOM_ADD */
	SI_ATOM_MIN, /* [a + imm] = min([a + imm], b), as SI_ATOM_ADD */
	SI_BAR,    /* block barrier (also orders shared and global memory within the block) */
	SI_SHFL_BFLY, /* dst = a from lane (lane ^ imm) of the warp, 32-bit; whole warp executes it */
	SI_MMA,    /* warp/wave matrix multiply-accumulate of shape sub (MmaShape), type
	            * F16/BF16 inputs, f32 accumulate: dst..dst+nc-1 = a..a+na-1 (i32 pairs)
	            * x b..b+nb-1 + c..c+nc-1 (register ids consecutive; counts and per-lane
	            * layouts in simt_mma[sub], docs/lowering.md) */
	SI_LABEL,  /* imm = label id */
	SI_BRA,    /* goto imm, if guard (negated if guard_neg) */
	SI_RET,
	SI_HALF,   /* dst (b16) = bits 16*imm .. 16*imm+15 of a (i32): imm 0 low half, 1 high half */
	SI_WG_GEMM_LOOP, /* sm_90a GEMM path only (lower_kernel_wg, ptx_sm90.h): the pipelined gemm loop, run as
	                  * TMA + wgmma, accumulating into the register fragment dst .. dst+imm-1 (the wgmma
	                  * accumulator layout: NB = N / 8 column groups, one 16-row strip per warp) */
	/* NVIDIA sm_80+ only (lower_async.c, lower_mma.c; never lowered for AMD): */
	SI_CP_ASYNC,     /* shared [a + imm] = 16 bytes of global [b], asynchronously (cp.async.cg); c: pred,
	                  * in bounds (false: the 16 bytes are zeros), or -1 */
	SI_CP_COMMIT,    /* close the group of this thread's cp.async issued since the last commit */
	SI_CP_WAIT,      /* wait until at most imm of this thread's committed groups are pending */
	SI_LDMATRIX,     /* dst .. dst+vec-1 (i32) = ldmatrix.m8n8.x{vec}.b16 (.trans when sub) from shared;
	                  * lane l gives the row address a + imm of matrix l / 8, row l % 8 */
	SI_SHFL,   /* dst = a (32-bit, type F32 or I32) of lane b (i32, 0 .. wave size - 1) of the thread's
	            * hardware wave; executed by the active lanes (reading an inactive lane is undefined) */
	SI_WGMMA,  /* sm_90a only (lower_wgmma.c): each warpgroup's gemm C[64, N] += A[64, K] B, N = imm & 0xffff,
	            * K = imm >> 16 & 0xffff, G = (imm >> 32) + 1 warpgroups, type F16/BF16, as K/16
	            * wgmma.mma_async m64nNk16, waited for before the next instruction.  C: f32 dst ..
	            * dst+N/2-1 (the mma.m16n8k16 C layout of warp w's rows 16w .. 16w+15 of the warpgroup,
	            * N/8 column groups).  A: sub & 1: the i32 registers a .. a+4K/16-1 (4 per k step,
	            * mma.m16n8k16's A layout), else the shared address a (i32) of the warpgroup's first row
	            * in a wgm tile [64 G, K];
	            * B: the shared address b of a wgm tile, [N, K] (sub & 2 clear) or [K, N] (sub & 2 set);
	            * sub & 4: C's old value is ignored (clear) */
	SI_ATOM_CAS, /* dst = [a + imm] (type I32 or I64, space sub); if it equals b, [a + imm] = c; atomic.
	              * The software atomics' loop (lower_data.c) */
	SI_BULK,   /* sm_90a GEMM path only (copy_rf's staged store): this thread's bulk copies, sub BulkOp */
	SI_COUNT
} SOp;

/* SI_BULK.sub: asynchronous bulk stores from shared to global memory
 * (cp.async.bulk), each thread tracking its own. */
typedef enum {
	BULK_WAIT_READ, /* wait until this thread's bulk stores have read their shared source */
	BULK_FENCE,     /* make this thread's shared stores visible to bulk copies (async proxy) */
	BULK_STORE,     /* global [a] = c bytes (i32, a multiple of 16) of shared [b]; a, b 16-byte aligned */
	BULK_COMMIT,    /* close this thread's group of bulk stores issued since the last commit */
} BulkOp;

/* SI_MMA shapes (SInst.sub).  The lowering picks one per gemm from the
 * target; a backend maps each to one matrix instruction (PTX mma.sync,
 * AMD v_mfma / v_wmma).  Per-lane layouts, with lane l of the wave:
 *  MMA_M16N8K16 (warp 32): PTX's mma.m16n8k16 layout (docs/lowering.md).
 *  AMD shapes (16 x 16 x k): i = l % 16, h = l / 16, e = 4 / element bytes
 *    (2 for f16/bf16, 4 for i8) elements per register.
 *    A reg j holds A[i][kb + e*j .. kb + e*j + e-1] (lower k in the low bits),
 *    B reg j holds B[kb + e*j .. kb + e*j + e-1][i], where kb = h * kstep;
 *    C/D reg q is C[h * hrow + q * qrow][i] (f32, or i32 for i8).
 *  MFMA16 (wave64, gfx90a/gfx942 v_mfma_f32_16x16x16*): 2 regs A/B, 4 C,
 *    kstep 4, hrow 4, qrow 1.
 *  WMMA16 (wave32, gfx1100 v_wmma_f32_16x16x16_*): 8 regs A/B (all 16 k;
 *    lanes 16-31 repeat lanes 0-15), 8 C, kstep 0, hrow 1, qrow 2.
 *  MFMA16_I8 (gfx90a v_mfma_i32_16x16x16i8): 1 reg A/B, kstep 4.
 *  MFMA16X32_I8 (gfx942 v_mfma_i32_16x16x32_i8, k 32): 2 regs A/B, kstep 8.
 *  WMMA16_I8 (gfx1100 v_wmma_i32_16x16x16_iu8, signed): 4 regs A/B.
 *  MFMA16X32_FP8 (gfx942 v_mfma_f32_16x16x32_fp8_fp8 / _bf8_bf8, k 32, type
 *    the FNUZ dtype): the layout of MFMA16X32_I8, f32 C.  Other fp8 gemms
 *    use MFMA16/WMMA16 (type F16) on fragments converted to f16.
 *  MMA_M16N8K32_I8 (warp 32, sm_80/sm_90a mma.sync.m16n8k32.s32.s8.s8.s32,
 *    type I8): PTX's layout with four i8 per register: a0 = (g, 4t..4t+3),
 *    a1 = (g+8, 4t..), a2 = (g, 4t+16..), a3 = (g+8, 4t+16..); b0 = (k
 *    4t..4t+3, n g), b1 = (k 4t+16.., n g); C/D i32 as m16n8k16's. */
typedef enum {
	MMA_M16N8K16, MMA_MFMA16, MMA_WMMA16, MMA_MFMA16_I8, MMA_MFMA16X32_I8, MMA_WMMA16_I8, MMA_MFMA16X32_FP8,
	MMA_M16N8K32_I8, MMA_NSHAPES
} MmaShape;

typedef struct {
	const char *name; /* in simt_print */
	uint8_t wave;     /* lanes that execute it together */
	uint8_t m, n, k;  /* tile of one instruction */
	uint8_t na, nb, nc; /* registers per lane of A, B and C/D */
	uint8_t kstep, hrow, qrow; /* MFMA16/WMMA16 layout constants (above) */
} MmaInfo;
extern const MmaInfo simt_mma[MMA_NSHAPES];

typedef struct {
	uint8_t op;   /* SOp */
	uint8_t type; /* DType */
	uint8_t type2;/* DType: SI_CVT source */
	uint8_t sub;  /* Cmp / MathOp / Space */
	uint8_t vec;  /* SI_LD/SI_ST: 0 or 1 scalar, 2 or 4 consecutive registers */
	bool guard_neg;
	int32_t dst, a, b, c;
	int32_t guard; /* predicate register or -1 */
	int64_t imm;
	double fimm;
} SInst;

/* A kernel parameter as the launcher passes it. */
typedef enum {
	PK_TENSOR, /* u64 device pointer */
	PK_SCALAR, /* Kernel arg scalar: ints <= 32 bits and bool as 32-bit, i64 64-bit, f16/bf16/fp8/f32 as f32, f64 */
	PK_SYMBOL, /* unspecialised shape symbol: i32 */
} ParamKind;

typedef struct {
	const char *name;
	uint8_t kind;  /* ParamKind */
	uint8_t dtype; /* DType of the tensor element / scalar */
	uint8_t vt;    /* VType of the param as passed (I64 for tensors) */
	int32_t arg;   /* index into Kernel.args */
} SimtParam;

/* What `unroll` unrolls, as the listings say it. */
#define LOWER_UNROLL_CAP "constant bounds, at most 64 trips and 256 statements in all"

typedef struct {
	const Module *m;
	int kernel;          /* index into m->kernels */
	const char *name;
	int threads;
	int64_t smem_bytes;  /* shared memory the kernel needs (all dynamic) */
	VEC(uint8_t) regs;   /* VType per register id */
	VEC(SInst) code;
	int32_t nlabels;
	VEC(int64_t) locals; /* byte size of each local array (8-byte aligned) */
	VEC(SimtParam) params;
	int32_t nmma;        /* statistics: gemm statements lowered to SI_MMA */
	int32_t unrolled, unroll_kept; /* `unroll` loops unrolled / kept as loops (LOWER_UNROLL_CAP) */
	int32_t folded;      /* parallel loops with whole-tile tests (lower_fold.c: fast copies behind a uniform test) */
	/* Register ranges (pairs: first id, count) that the AMD backend keeps in
	 * AGPRs: gfx90a/gfx942 register fragments of more than 128 slots per
	 * lane (docs/lowering.md).  Only SI_MMA (as C and D), SI_MOVI/SI_MOVF
	 * (dst) and SI_MOV (dst, or source a) name them; other backends may
	 * ignore the list. */
	VEC(int32_t) acc;
	/* What the lowering changed of the program as written, for the
	 * listing: "; "-prefixed lines (e.g. a pipelined loop's depth) */
	StrBuf notes;
	int64_t wg_stage;    /* sm_90a GEMM path: shared offset of copy_rf's staging buffer, or -1 */
} SimtFunc;

/* lower.c (the driver; lower_*.c hold its parts, see lower_impl.h) */
/* Lowers kernel k of a verified module.  Returns 0, or -1 with a diagnostic
 * (e.g. a dtype the target cannot handle).  Free with simt_free even on error. */
int lower_kernel(const Module *m, int k, const Target *t, SimtFunc *f, Diag *d);
/* The same with options (NULL: the defaults). */
typedef struct {
	int no_vector_frags; /* 1: element-wise fragments stay in shared memory (the vector
	                      * layout of docs/lowering.md off; tests pin that path) */
	unsigned nvidia_off; /* LOWER_NV_* bits: NVIDIA paths switched off (0: all on), to
	                      * compare against the plain lowering (tests, diagnosis:
	                      * ta_compile_options.nvidia_off, tileasm's TILEASM_NVIDIA_OFF) */
} LowerOptions;
int lower_kernel_opts(const Module *m, int k, const Target *t, const LowerOptions *o, SimtFunc *f, Diag *d);
/* The sm_90a GEMM path (ptx_sm90.h): kernel k lowered for one consumer
 * warpgroup, with the pipelined loop `loop` (copies into the shared tiles
 * skip[0], skip[1] and a gemm into `acc`) as one SI_WG_GEMM_LOOP.  acc must
 * become a register fragment in the wgmma layout (every warp-shape register
 * fragment of the kernel gets NB = N / 8); the skipped tiles get no shared
 * memory.  Returns 0 with *ok = true when that worked, 0 with *ok = false
 * when the kernel does not fit (the caller emits no sm90 entry), -1 with a
 * diagnostic on errors. */
typedef struct {
	int32_t loop, acc, skip[2];
	int32_t async_copy; /* statement id of a copy(acc -> global tile) whose tensor no other statement
	                     * mentions, which may complete asynchronously (copy_rf's staged bulk store), or -1 */
} LowerWg;
int lower_kernel_wg(const Module *m, int k, const Target *t, const LowerOptions *o, const LowerWg *wg, SimtFunc *f,
		    bool *ok, Diag *d);
void simt_free(SimtFunc *f);
/* LowerOptions.nvidia_off bits (the sm_90a GEMM entry, lower_kernel_wg,
 * takes none of these paths' switches). */
enum {
	LOWER_NV_CP_ASYNC = 1, /* cp.async copies (lower_async.c) */
	LOWER_NV_PREFETCH = 2, /* pipelined-loop prefetch (lower_async.c) */
	LOWER_NV_LDMATRIX = 4, /* ldmatrix operands, A from registers (lower_mma_ldm.c) */
	LOWER_NV_SWIZZLE = 8,  /* swizzled operand tiles (lower_mma_ldm.c) */
	LOWER_NV_WGMMA = 16,   /* sm_90a wgmma gemms (lower_wgmma.c) */
	LOWER_NV_BULK_STORE = 32, /* sm_90a GEMM entry: the staged bulk store of the accumulator (lower_rr.c) */
	LOWER_NV_WG_ROWS = 64,    /* sm_90a GEMM entry: consumers split the CTA tile by rows (ptx_sm90_gemm.c) */
};
VType simt_vt(DType t);         /* canonical register class */
VType simt_storage_vt(DType t); /* storage register class */
void simt_print(const SimtFunc *f, StrBuf *sb); /* readable dump for tests and --dump-simt */
/* lower_verify.c: structural check of f (register ids and classes where the
 * op needs one, labels defined once and branch targets defined, parameter
 * and local indices, vector and MMA register ranges).  Returns 0, or -1
 * with the first problem in err (may be NULL).  O(code + registers). */
int simt_verify(const SimtFunc *f, StrBuf *err);
/* lower_dump.c: every kernel of m lowered for t, verified and printed to out
 * (options o, NULL: the defaults) with a "; after lower: NAME" header each (the PTX backend's --dump-simt;
 * the AMD driver dumps from its pass list).  Returns 0, or -1 with d. */
int simt_dump_module(const Module *m, const Target *t, const LowerOptions *o, StrBuf *out, Diag *d);

#endif
