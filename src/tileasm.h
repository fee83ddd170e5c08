/* tileasm.h — the public C API of libtileasm.
 *
 * Everything hangs off a ta_ctx.  A context holds options, -D definitions and
 * the diagnostics of the last call; it has no hidden global state, so separate
 * contexts may be used from separate threads at once.  No function exits or
 * aborts on bad input: each returns a ta_status and leaves a
 * "file:line:col: error: ..." message in ta_ctx_diagnostics().
 */
#ifndef TILEASM_H
#define TILEASM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TA_BUILDING_LIB)
#define TA_API __attribute__((visibility("default")))
#else
#define TA_API
#endif

#define TA_VERSION_STRING "0.1.0"

typedef enum ta_target {
	TA_TARGET_NONE = 0,
	TA_TARGET_GFX1100, /* RDNA3, wave32 */
	TA_TARGET_GFX90A,  /* CDNA2, wave64 */
	TA_TARGET_GFX942,  /* CDNA3, wave64 */
	TA_TARGET_SM80,    /* Ampere and later: PTX with mma.sync */
	TA_TARGET_SM90A,   /* Hopper: PTX with wgmma and TMA */
} ta_target;

typedef enum ta_status {
	TA_OK = 0,
	TA_ERR_INVALID,     /* bad argument to an API call */
	TA_ERR_PARSE,       /* syntax error in Tile IR text */
	TA_ERR_VERIFY,      /* shape/dtype/scope error */
	TA_ERR_UNSUPPORTED, /* valid program the chosen target cannot run yet */
	TA_ERR_NOMEM,
	TA_ERR_IO,
	TA_ERR_RUNTIME,     /* interpreter or device error while running */
} ta_status;

typedef struct ta_ctx ta_ctx;
typedef struct ta_module ta_module;

TA_API const char *ta_version(void);
TA_API const char *ta_status_string(ta_status s);

/* Contexts. */
TA_API ta_ctx *ta_ctx_create(void);
TA_API void ta_ctx_destroy(ta_ctx *ctx);
/* Diagnostics text produced since the last ta_ctx_clear_diagnostics (never NULL). */
TA_API const char *ta_ctx_diagnostics(const ta_ctx *ctx);
TA_API void ta_ctx_clear_diagnostics(ta_ctx *ctx);
/* -D NAME=VALUE: specialises shape symbol NAME in modules parsed afterwards. */
TA_API ta_status ta_ctx_define(ta_ctx *ctx, const char *name, int64_t value);

/* Parse Tile IR text (filename is used in diagnostics only), then verify it. */
TA_API ta_status ta_parse(ta_ctx *ctx, const char *filename, const char *text, size_t len,
                          ta_module **out);
TA_API void ta_module_destroy(ta_module *m);
/* Canonical text of a module; parses back to the same IR. Free with ta_free. */
TA_API char *ta_module_print(const ta_module *m);
TA_API int ta_module_kernel_count(const ta_module *m);
TA_API const char *ta_module_kernel_name(const ta_module *m, int index);
TA_API void ta_free(void *p);

/* ---- compiling -----------------------------------------------------------
 * A binary is the compiled form of every kernel of a module for one target:
 * an HSA code object (AMD) or PTX text (NVIDIA), plus what a launcher needs.
 * Binaries are immutable and reference counted, so a cache may hand the same
 * one to several callers; ta_binary_release drops one reference. */
typedef struct ta_binary ta_binary;

typedef enum ta_arg_kind { TA_ARG_TENSOR, TA_ARG_SCALAR, TA_ARG_SYMBOL } ta_arg_kind;

typedef struct ta_arg_info {
	const char *name;
	ta_arg_kind kind;
	int dtype;        /* ta_dtype of the tensor element or scalar (symbols: TA_I32) */
	uint32_t offset;  /* byte offset in the kernel-argument block */
	uint32_t size;    /* bytes: 8 for tensors (device pointers) */
} ta_arg_info;

typedef struct ta_kernel_info {
	const char *name;
	int threads;          /* block size (x) */
	int64_t shared_bytes; /* LDS / shared memory per block */
	int64_t scratch_bytes;/* private memory per work-item (AMD) */
	int sgprs, vgprs, agprs; /* AMD register counts (0 on NVIDIA: ptxas allocates) */
	int waves_per_simd;   /* AMD occupancy (0 on NVIDIA) */
	uint32_t kernarg_size;
	int nargs;
	const ta_arg_info *args; /* in Tile IR argument order (see docs/tile-ir.md) */
} ta_kernel_info;

/* Compiles every kernel of m for target ("gfx942", "gfx942:xnack-", "sm_90a", ...). */
TA_API ta_status ta_compile(ta_ctx *ctx, ta_module *m, const char *target, ta_binary **out);
/* Parse + verify + compile in one call.  With the context's cache enabled,
 * a repeat of the same (text, target, -D values, tileasm version) returns the
 * cached binary without parsing. */
TA_API ta_status ta_compile_source(ta_ctx *ctx, const char *filename, const char *text, size_t len,
                                   const char *target, ta_binary **out);
TA_API const char *ta_binary_target(const ta_binary *b);
/* "hsaco" or "ptx". */
TA_API const char *ta_binary_format(const ta_binary *b);
TA_API const void *ta_binary_data(const ta_binary *b, size_t *size);
TA_API int ta_binary_kernel_count(const ta_binary *b);
TA_API const ta_kernel_info *ta_binary_kernel(const ta_binary *b, int index);
/* Grid size of a kernel for the given argument values (one int64 per kernel
 * argument, tensors ignored; needed only for unspecialised shape symbols). */
TA_API ta_status ta_binary_grid(const ta_binary *b, int kernel, const int64_t *arg_values, uint32_t grid[3]);
TA_API void ta_binary_retain(ta_binary *b);
TA_API void ta_binary_release(ta_binary *b);

/* In-memory compile cache of up to max_entries binaries (0 disables it). */
TA_API ta_status ta_ctx_set_cache(ta_ctx *ctx, size_t max_entries);
TA_API void ta_ctx_cache_stats(const ta_ctx *ctx, uint64_t *hits, uint64_t *misses);

/* ---- building IR programmatically ---------------------------------------
 * A builder creates one module statement by statement, in source order.
 * Handles (ta_expr, ta_buf, ta_var) are small integers; a negative handle
 * means an earlier call failed, and passing it on makes later calls fail too,
 * so a host may check only ta_build_finish.  ta_build_finish verifies the
 * module; its diagnostics point into the module's canonical text (as printed
 * by ta_module_print) under the name given to ta_build_begin. */
typedef int32_t ta_expr;
typedef int32_t ta_buf;
typedef int32_t ta_var;
typedef struct ta_builder ta_builder;

typedef enum ta_dtype {
	TA_BOOL = 1, TA_I8, TA_U8, TA_I16, TA_I32, TA_U32, TA_I64, TA_F16, TA_BF16, TA_F32, TA_F64,
	TA_FP8E4M3, TA_FP8E5M2,
	TA_FP8E4M3FNUZ, TA_FP8E5M2FNUZ, /* AMD (gfx942) FNUZ fp8: bias 8 / 16, 0x80 = NaN, no inf */
} ta_dtype;
typedef enum ta_scope { TA_SHARED = 1, TA_FRAGMENT, TA_LOCAL } ta_scope;
typedef enum ta_op {
	TA_OP_NEG, TA_OP_NOT,
	TA_OP_ADD, TA_OP_SUB, TA_OP_MUL, TA_OP_DIV, TA_OP_FLOORDIV, TA_OP_MOD,
	TA_OP_EQ, TA_OP_NE, TA_OP_LT, TA_OP_LE, TA_OP_GT, TA_OP_GE, TA_OP_AND, TA_OP_OR,
	TA_OP_MIN, TA_OP_MAX, TA_OP_ABS, TA_OP_EXP, TA_OP_EXP2, TA_OP_LOG, TA_OP_LOG2, TA_OP_SQRT,
	TA_OP_RSQRT, TA_OP_TANH, TA_OP_SELECT, TA_OP_CEILDIV,
	TA_OP_BNOT,                                                   /* unary ~ */
	TA_OP_BAND, TA_OP_BOR, TA_OP_BXOR, TA_OP_SHL, TA_OP_SHR,      /* binary & | ^ << >> */
	TA_OP_FLOOR, TA_OP_CEIL, TA_OP_ROUND, TA_OP_SIN, TA_OP_COS, TA_OP_ERF, TA_OP_SIGMOID,
	TA_OP_POW, TA_OP_FMOD, TA_OP_CLAMP, TA_OP_IF_THEN_ELSE,
} ta_op;
typedef enum ta_loop { TA_SERIAL, TA_UNROLL, TA_PIPELINED } ta_loop;
typedef enum ta_reduce { TA_REDUCE_SUM, TA_REDUCE_MAX, TA_REDUCE_MIN, TA_REDUCE_ABSSUM, TA_REDUCE_ABSMAX } ta_reduce;
enum { TA_GEMM_TRANSPOSE_A = 1, TA_GEMM_TRANSPOSE_B = 2, TA_GEMM_CLEAR = 4 };

TA_API ta_builder *ta_build_begin(ta_ctx *ctx, const char *name);
/* Discards an unfinished builder. */
TA_API void ta_build_abort(ta_builder *b);
/* Verifies and hands over the module (also frees the builder, success or not). */
TA_API ta_status ta_build_finish(ta_builder *b, ta_module **out);

/* Kernel header: parameters first, then grid, then the body. Dims are
 * decimal constants ("128") or shape symbol names ("M"). */
TA_API ta_status ta_build_kernel(ta_builder *b, const char *name, int threads);
TA_API ta_buf ta_build_tensor(ta_builder *b, const char *name, ta_dtype t, int rank, const char *const *dims);
TA_API ta_var ta_build_scalar(ta_builder *b, const char *name, ta_dtype t);
TA_API ta_status ta_build_grid(ta_builder *b, int n, const ta_expr *dims);

/* Expressions. ta_build_name finds bx/by/bz/tx, parameters, symbols, lets and loop variables. */
TA_API ta_expr ta_build_int(ta_builder *b, int64_t v);
TA_API ta_expr ta_build_float(ta_builder *b, double v);
TA_API ta_expr ta_build_bool(ta_builder *b, int v);
TA_API ta_expr ta_build_ref(ta_builder *b, ta_var v);
TA_API ta_expr ta_build_name(ta_builder *b, const char *name);
TA_API ta_expr ta_build_load(ta_builder *b, ta_buf buf, int n, const ta_expr *idx);
TA_API ta_expr ta_build_op(ta_builder *b, ta_op op, int n, const ta_expr *args);
TA_API ta_expr ta_build_cast(ta_builder *b, ta_dtype t, ta_expr x);

/* Statements (appended to the innermost open block). Offsets: n == 0 means
 * the whole buffer. */
TA_API ta_buf ta_build_alloc(ta_builder *b, const char *name, ta_scope s, ta_dtype t, int rank, const int64_t *shape);
TA_API ta_var ta_build_let(ta_builder *b, const char *name, ta_expr value);
TA_API ta_status ta_build_store(ta_builder *b, ta_buf buf, int n, const ta_expr *idx, ta_expr value);
TA_API ta_status ta_build_copy(ta_builder *b, ta_buf src, int nsrc, const ta_expr *src_off, ta_buf dst, int ndst,
                               const ta_expr *dst_off);
TA_API ta_status ta_build_gemm(ta_builder *b, ta_buf a, ta_buf bm, ta_buf c, int flags);
TA_API ta_status ta_build_clear(ta_builder *b, ta_buf buf);
TA_API ta_status ta_build_fill(ta_builder *b, ta_buf buf, ta_expr value);
TA_API ta_status ta_build_reduce(ta_builder *b, ta_reduce op, ta_buf src, ta_buf dst, int dim, int clear);
TA_API ta_status ta_build_cumsum(ta_builder *b, ta_buf src, ta_buf dst, int dim, int reverse);
/* Tile form when value < 0 (src gives the extent), element form otherwise. */
TA_API ta_status ta_build_atomic_add(ta_builder *b, ta_buf dst, int n, const ta_expr *idx, ta_buf src, ta_expr value);
TA_API ta_status ta_build_barrier(ta_builder *b);
/* Blocks: each *_begin opens a body closed by ta_build_end. */
TA_API ta_var ta_build_for(ta_builder *b, ta_loop kind, const char *var, ta_expr lo, ta_expr hi, int stages);
/* Returns the first loop variable; the others follow it (v, v + 1, ...). */
TA_API ta_var ta_build_parallel(ta_builder *b, int n, const char *const *vars, const ta_expr *extents);
TA_API ta_status ta_build_if(ta_builder *b, ta_expr cond);
TA_API ta_status ta_build_else(ta_builder *b);
TA_API ta_status ta_build_end(ta_builder *b);

#ifdef __cplusplus
}
#endif
#endif
