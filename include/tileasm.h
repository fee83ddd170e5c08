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

/* The name of target i ("gfx1100", "gfx90a", "gfx942", "sm_80", "sm_90a"
 * for i = 0..4), NULL past the last: what ta_compile accepts (AMD names
 * also with ":xnack+/-" and ":sramecc+/-"). */
TA_API const char *ta_target_name(int i);

/* Contexts. */
TA_API ta_ctx *ta_ctx_create(void);
TA_API void ta_ctx_destroy(ta_ctx *ctx);
/* Diagnostics text produced since the last ta_ctx_clear_diagnostics (never NULL). */
TA_API const char *ta_ctx_diagnostics(const ta_ctx *ctx);
TA_API void ta_ctx_clear_diagnostics(ta_ctx *ctx);
/* -D NAME=VALUE: specialises shape symbol NAME in modules parsed afterwards. */
TA_API ta_status ta_ctx_define(ta_ctx *ctx, const char *name, int64_t value);
/* Removes the -D value of name (TA_ERR_INVALID if there is none); name NULL
 * removes all. */
TA_API ta_status ta_ctx_undefine(ta_ctx *ctx, const char *name);

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
	int rank;         /* tensors: number of dimensions (0 for scalars and symbols) */
	/* Tensors: each dimension's extent, or -1 - j when shape symbol argument j
	 * (an index into this table) gives it at run time. */
	int64_t dims[4];
} ta_arg_info;

/* sm_90a: a kernel's TMA + wgmma entry (docs/embedding.md, "The sm_90a fast
 * entry"), in a PTX module of its own so a host JIT-compiles only what it
 * launches.  It takes the kernel's arguments as the generic entry does, then
 * one 128-byte CUtensorMap by value per tmaps[i], then three u32: the x, y
 * and z extents of ta_binary_grid.  Block (threads, 1, 1), grid
 * (min(ceil(x / 2) * y * z, SM count), 1, 1), shared_bytes of dynamic shared
 * memory (raise the function's limit first).  A map's tensor must have a row
 * stride (cols x element size) that is a multiple of 16 bytes and a 16-byte
 * aligned base; otherwise launch the generic entry.  ta_binary_fast_launch
 * does all this. */
typedef struct ta_tensor_map_info {
	int arg;         /* the tensor argument it maps: a row-major [rows, cols] or [batch, rows, cols] tensor */
	int dtype;       /* ta_dtype of the elements */
	int rank;        /* 2 or 3 (the tensor's rank; its extents are the map's, innermost first) */
	uint32_t box[3]; /* box extents, innermost (cols) first; box[2] = 1 */
	int swizzle;     /* CUtensorMapSwizzle: 3 = 128B; no interleave, 256B L2 promotion, zero fill */
} ta_tensor_map_info;

typedef struct ta_fast_entry {
	const char *name;     /* entry name in ptx */
	const char *ptx;      /* NUL-terminated PTX module holding only this entry */
	size_t ptx_size;
	int threads;          /* block size (x) */
	int64_t shared_bytes; /* dynamic shared memory */
	int ntmaps;
	const ta_tensor_map_info *tmaps;
} ta_fast_entry;

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
	const ta_fast_entry *fast; /* sm_90a TMA + wgmma entry, or NULL (the binary's own PTX has only the generic entries) */
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
/* Everything cuLaunchKernel needs for kernel's fast entry (ta_kernel_info.fast):
 * encodes its tensor maps through the CUDA driver (libcuda.so.1, opened here;
 * the caller's context must be current on device ordinal 0's primary or own
 * context) from dptrs[i], the device address of tensor argument i, and
 * arg_values[i] (as for ta_binary_grid), and appends them to params, the
 * generic entry's kernelParams (one pointer per argument; only the pointers
 * are copied).  TA_ERR_UNSUPPORTED: no fast entry, or sizes the generic entry
 * must run (the reason is in the diagnostics); TA_ERR_RUNTIME: the driver. */
typedef struct ta_fast_launch {
	uint8_t maps[2][128] __attribute__((aligned(64)));
	uint32_t ir_grid[3];    /* the IR grid (ta_binary_grid), the entry's last three parameters */
	void *params[68];       /* kernelParams */
	uint32_t grid[3], block[3];
	uint32_t shared_bytes;
} ta_fast_launch;
TA_API ta_status ta_binary_fast_launch(ta_ctx *ctx, const ta_binary *b, int kernel, const uint64_t *dptrs,
                                       const int64_t *arg_values, void *const *params, ta_fast_launch *out);
TA_API void ta_binary_retain(ta_binary *b);
TA_API void ta_binary_release(ta_binary *b);

/* The compiled code as text: AMD targets an assembly listing (one summary
 * line per kernel: registers, LDS, occupancy, instruction count; then the
 * code with encodings, which `tileasm asm` reassembles), NVIDIA targets the
 * PTX.  NULL with a diagnostic in ctx on failure; free with ta_free. */
TA_API char *ta_binary_listing(ta_ctx *ctx, const ta_binary *b);
/* Wall time of each compiler pass of this binary's compile ("frontend" =
 * parse, specialise, verify; then the backend's passes, summed over the
 * kernels).  Returns the number of passes (at most max) and fills names[]
 * and ms[].  A cached binary reports the times of the compile that made it. */
TA_API int ta_binary_pass_times(const ta_binary *b, const char **names, double *ms, int max);
/* Compiling with requests for what the backends can show besides the
 * listing and pass times (the CLI's `compile --dump-after=PASS --verify`).
 * A zeroed struct (or NULL) asks for nothing; the bytes are the same either
 * way (but for nvidia_off).  Such compiles bypass the cache. */
typedef struct ta_compile_options {
	const char *dump_after; /* ta_binary_dump: the IR of every kernel after this pass: "lower" (SIMT
	                         * IR, every target) or an AMD pass (isel opt sched regalloc waitcnt
	                         * hazard emit); another name is TA_ERR_INVALID */
	int verify;             /* check the IR after every pass (internal errors name the pass) */
	unsigned nvidia_off;    /* diagnosis, NVIDIA targets: lowering paths switched off, to compare against the
	                         * plain lowering (the bytes then differ): 1 cp.async copies, 2 pipelined-loop
	                         * prefetch, 4 ldmatrix operands (and A from registers), 8 swizzled operand
	                         * tiles, 16 sm_90a wgmma gemms (docs/lowering.md); the sm_90a fast entry is
	                         * not affected */
} ta_compile_options;
TA_API ta_status ta_compile_source_with(ta_ctx *ctx, const char *filename, const char *text, size_t len,
                                        const char *target, const ta_compile_options *opts, ta_binary **out);
/* ta_compile with options (NULL: none, as ta_compile). */
TA_API ta_status ta_compile_with(ta_ctx *ctx, ta_module *m, const char *target, const ta_compile_options *opts,
                                 ta_binary **out);
/* The dump_after text (NUL-terminated; NULL when not asked for). */
TA_API const char *ta_binary_dump(const ta_binary *b);

/* In-memory compile cache of up to max_entries binaries (0 disables it). */
TA_API ta_status ta_ctx_set_cache(ta_ctx *ctx, size_t max_entries);
TA_API void ta_ctx_cache_stats(const ta_ctx *ctx, uint64_t *hits, uint64_t *misses);
/* A byte bound for the cache as well (0: none, the default): an entry counts
 * its key (source text, -D values), its code object or PTX, its listing
 * summary and the IR it keeps; least recently used entries go first, and a
 * binary larger than the bound alone is not cached.  ta_ctx_cache_size
 * reports the entries and bytes held now. */
TA_API ta_status ta_ctx_set_cache_bytes(ta_ctx *ctx, size_t max_bytes);
TA_API void ta_ctx_cache_size(const ta_ctx *ctx, size_t *entries, size_t *bytes);

/* ---- running ------------------------------------------------------------
 * A runner executes binaries on one backend:
 *   "interp"  the CPU interpreter on the binary's IR (any target; defines the results),
 *   "emu"     the in-tree AMD emulator on the code object (AMD targets),
 *   "cuda"    an NVIDIA GPU through the driver API (PTX targets; libcuda opened at run time),
 *   "hsa"     an AMD GPU through ROCr (libhsa-runtime64 opened at run time).
 * "interp" and "emu" take host memory; "cuda" and "hsa" device addresses.
 * A runner keeps the loaded code of the binaries it ran (retaining them)
 * until it is closed; use it from one thread at a time. */
typedef struct ta_runner ta_runner;

/* One kernel argument, in ta_kernel_info.args order.  Tensors: ptr (host
 * memory or a device address, see above) and bytes (its size, at least the
 * tensor's); shape symbols and integer/bool scalars: i; float scalars: f. */
typedef struct ta_value {
	void *ptr;
	size_t bytes;
	int64_t i;
	double f;
} ta_value;

/* The bytes kernel parameter a holds for value v, as every backend takes
 * them (a cuLaunchKernel kernelParams entry; the AMD kernarg block at
 * a->offset, its first a->size bytes): tensors v->ptr as 8 bytes; symbols,
 * bool and integers up to 32 bits as 32 bits (wrapped to the type); 64-bit
 * types as 8 bytes; f16/bf16/fp8 and f32 as f32 (rounded to the type first).
 * The rest of out is zero. */
TA_API void ta_arg_bytes(const ta_arg_info *a, const ta_value *v, uint8_t out[8]);

/* device: the CUDA device ordinal for "cuda" (its primary context, the one
 * the CUDA runtime and PyTorch use); ignored by the others.  Fails with a
 * diagnostic when the backend's driver or device is missing. */
TA_API ta_status ta_runner_open(ta_ctx *ctx, const char *backend, int device, ta_runner **out);
TA_API void ta_runner_close(ta_runner *r);
TA_API const char *ta_runner_backend(const ta_runner *r);
/* Runs kernel `kernel` of b over its grid (computed from the symbol
 * arguments).  "cuda": asynchronous on `stream` (a CUstream; NULL = the
 * default stream); the others return when the kernel has finished (host
 * tensors then hold the results).  Runtime errors (the interpreter's
 * out-of-bounds accesses, the emulator's checks, driver errors) are
 * diagnostics in ctx and TA_ERR_RUNTIME. */
TA_API ta_status ta_launch(ta_ctx *ctx, ta_runner *r, ta_binary *b, int kernel, const ta_value *args, void *stream);
/* Waits for every launch of r ("cuda": cuCtxSynchronize; others: no-op). */
TA_API ta_status ta_runner_sync(ta_ctx *ctx, ta_runner *r);

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
	TA_I4, TA_U4, /* 4-bit integers, tensor parameters only: two per byte, element i in nibble i & 1 of byte i / 2 */
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
	TA_OP_SHFL_XOR, TA_OP_SHFL_DOWN, TA_OP_SHFL_UP, TA_OP_SHFL_IDX, /* (value, lane mask/offset/lane): per-thread code */
} ta_op;
/* TA_VECTORIZED: an unroll written 'vectorized' (TileLang's T.vectorized) */
typedef enum ta_loop { TA_SERIAL, TA_UNROLL, TA_PIPELINED, TA_VECTORIZED } ta_loop;
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
/* reinterpret(t, x): x's bits read as t (same width; verify checks). */
TA_API ta_expr ta_build_reinterpret(ta_builder *b, ta_dtype t, ta_expr x);

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
/* Region entries (the region form of copy/atomics: B[i, lo : hi, :]). */
enum { TA_INDEX_AT, TA_INDEX_RANGE, TA_INDEX_ALL };
typedef struct ta_index {
	int kind;       /* TA_INDEX_AT: the index lo; TA_INDEX_RANGE: lo : hi; TA_INDEX_ALL: ':' */
	ta_expr lo, hi;
} ta_index;
typedef enum ta_atomic { TA_ATOMIC_ADD, TA_ATOMIC_MAX, TA_ATOMIC_MIN } ta_atomic;
/* copy with either side a region (n == 0: the whole buffer). */
TA_API ta_status ta_build_copy_region(ta_builder *b, ta_buf src, int nsrc, const ta_index *src_idx, ta_buf dst,
                                      int ndst, const ta_index *dst_idx);
/* atomic_add/max/min: tile form when value < 0 (src gives the extent), element form otherwise. */
TA_API ta_status ta_build_atomic(ta_builder *b, ta_atomic op, ta_buf dst, int n, const ta_index *idx, ta_buf src,
                                 ta_expr value);
/* var NAME[: t] [= init] (t 0: init's type; init < 0: none): read it with
 * ta_build_load(b, v, 0, NULL), assign it with ta_build_store(b, v, 0, NULL, e). */
TA_API ta_buf ta_build_var(ta_builder *b, const char *name, ta_dtype t, ta_expr init);
/* NAME = view tensor[dims] (dims: integer expressions of shape symbols, e.g. ta_build_name of one). */
TA_API ta_buf ta_build_view(ta_builder *b, const char *name, ta_buf tensor, int rank, const ta_expr *dims);
/* threads(x, y, z) instead of ta_build_kernel's count (tx fastest). */
TA_API ta_status ta_build_threads(ta_builder *b, int x, int y, int z);
TA_API ta_status ta_build_barrier(ta_builder *b);
/* use_swizzle(panel[, order=col]) (TileLang's T.use_swizzle): the kernel's
 * blocks run in panels of `panel` block rows (TA_RASTER_ROW) or columns
 * (TA_RASTER_COL); at most once, at the top level of the kernel body; panel
 * must be a positive integer constant (checked at ta_build_finish). */
typedef enum ta_raster { TA_RASTER_ROW = 1, TA_RASTER_COL } ta_raster;
TA_API ta_status ta_build_use_swizzle(ta_builder *b, ta_expr panel, ta_raster order);
/* Blocks: each *_begin opens a body closed by ta_build_end. */
TA_API ta_var ta_build_for(ta_builder *b, ta_loop kind, const char *var, ta_expr lo, ta_expr hi, int stages);
/* Returns the first loop variable; the others follow it (v, v + 1, ...). */
TA_API ta_var ta_build_parallel(ta_builder *b, int n, const char *const *vars, const ta_expr *extents);
TA_API ta_status ta_build_if(ta_builder *b, ta_expr cond);
TA_API ta_status ta_build_else(ta_builder *b);
TA_API ta_status ta_build_end(ta_builder *b);

/* ---- the AMD emulator and its profiling mode -----------------------------
 * An emulated AMD GPU (gfx1100, gfx90a, gfx942) that runs HSA code objects
 * (ta_binary_data of an AMD binary, or any code object of those targets) on
 * the CPU, checking waits, hazards and bounds (docs/emulator.md).  Errors go
 * to the context's diagnostics; one ta_emu is used from one thread at a time.
 * Grid sizes are in workgroups. */
typedef struct ta_emu ta_emu;

TA_API ta_status ta_emu_create(ta_ctx *ctx, const char *target, ta_emu **out);
TA_API void ta_emu_destroy(ta_emu *e);
/* Device memory (0xCD bytes at first); *addr is never 0. */
TA_API ta_status ta_emu_alloc(ta_emu *e, size_t bytes, uint64_t *addr);
TA_API ta_status ta_emu_write(ta_emu *e, uint64_t addr, const void *src, size_t n);
TA_API ta_status ta_emu_read(ta_emu *e, uint64_t addr, void *dst, size_t n);
TA_API ta_status ta_emu_load(ta_emu *e, const void *code_object, size_t n);
/* dynamic_lds: LDS bytes beyond the kernel's static group segment (HIP's
 * dynamic shared memory). */
TA_API ta_status ta_emu_launch(ta_emu *e, const char *kernel, const uint32_t grid[3], const uint32_t block[3],
                               const void *kernarg, size_t kernarg_size, uint32_t dynamic_lds);
/* Work bound: a launch stops with TA_ERR_RUNTIME ("work bound exceeded")
 * after max_steps instructions in all, every wave of every workgroup
 * counted (0: the default, 1e10; each wave is also limited to 1e9). */
TA_API void ta_emu_set_max_steps(ta_emu *e, uint64_t max_steps);

/* Profiling: with it on, every launch records what it executed and a cycle
 * estimate from a small issue model (docs/emulator.md, "Profiling").  The
 * model is an estimate for comparing code, not a measurement. */
typedef enum ta_insn_class {
	TA_IC_SALU, TA_IC_VALU, TA_IC_VMEM, TA_IC_SMEM, TA_IC_LDS, TA_IC_MMA, /* MFMA / WMMA */
	TA_IC_BRANCH, TA_IC_WAITCNT, /* s_waitcnt*, s_barrier */
	TA_IC_NOP, /* s_nop, s_delay_alu, s_clause, other hints */
	TA_IC_COUNT
} ta_insn_class;
typedef enum ta_mem_class {
	TA_MEM_GLOBAL_LOAD, TA_MEM_GLOBAL_STORE, /* stores and atomics */
	TA_MEM_LDS_LOAD, TA_MEM_LDS_STORE, TA_MEM_SMEM, TA_MEM_SCRATCH, TA_MEM_COUNT
} ta_mem_class;
/* What bounds the modelled time of a CU. */
typedef enum ta_limiter {
	TA_LIMIT_ISSUE, TA_LIMIT_MMA, TA_LIMIT_LDS, TA_LIMIT_MEMORY, /* vector memory requests */
	TA_LIMIT_LATENCY, /* a wave's own timeline (exposed latency) at full occupancy */
	TA_LIMIT_OCCUPANCY, /* the same, with fewer waves than the SIMD could hold for lack of registers / LDS */
	TA_LIMIT_COUNT
} ta_limiter;

/* Counts summed over every wave of the launch. */
typedef struct ta_profile_counts {
	uint64_t insns[TA_IC_COUNT]; /* wave instructions executed, by class */
	uint64_t bytes[TA_MEM_COUNT]; /* bytes moved by active lanes */
	uint64_t vmem_lines;      /* 64-byte global memory lines touched (per instruction, summed) */
	uint64_t lds_cycles;      /* LDS bank cycles (32 banks x 4 bytes) */
	uint64_t lds_conflict_cycles; /* of which beyond the conflict-free count */
	uint64_t mma_cycles;      /* matrix pipe busy */
	uint64_t unit_cycles[TA_IC_COUNT]; /* issue cycles spent per class (its functional unit) */
	uint64_t stall_cycles;    /* waves waiting at s_waitcnt / s_barrier / a busy matrix pipe */
	uint64_t cycles;          /* modelled wave time (issue + stalls) */
} ta_profile_counts;

/* The modelled time of one CU running waves_per_simd waves on each SIMD. */
typedef struct ta_profile_bound {
	double cycles;            /* max of bound[] */
	double cycles_per_wave;   /* throughput: cycles / (waves_per_simd x simds_per_cu) */
	double bound[TA_LIMIT_COUNT]; /* cycles each resource needs (LATENCY: one wave's timeline) */
	ta_limiter limiter;
	double mma_utilisation;   /* matrix pipe busy / cycles */
} ta_profile_bound;

/* A loop: a backward branch and the code from its target to it. */
typedef struct ta_profile_loop {
	uint32_t begin, end;  /* byte offsets of the loop's first instruction and of its back-edge branch */
	int parent;           /* enclosing loop index, -1 for none */
	uint64_t trips;       /* iterations: times the back-edge branch ran (taken or not), summed over waves */
	ta_profile_counts c;  /* inclusive of nested loops */
	ta_profile_bound cu;  /* per CU, for the loop's share of the launch */
} ta_profile_loop;

typedef struct ta_profile {
	const char *kernel;
	const char *target;
	int wave_size;
	uint64_t waves, workgroups;
	int waves_per_simd, simds_per_cu; /* occupancy used by the model */
	const char *occupancy_limit;  /* "vgpr", "sgpr", "lds", "workgroup" or "max" */
	ta_profile_counts c;
	ta_profile_bound cu;
	double wave_cycles;           /* mean modelled cycles per wave */
	int nloops;
	const ta_profile_loop *loops; /* in code order */
} ta_profile;

TA_API void ta_emu_set_profile(ta_emu *e, int on);
/* The last launch's profile (valid until the next launch or ta_emu_destroy),
 * NULL when it was not profiled. */
TA_API const ta_profile *ta_emu_profile(const ta_emu *e);
/* A readable summary (what `tileasm run --backend=emu --profile` prints); ta_free it. */
TA_API char *ta_profile_format(const ta_profile *p);
TA_API const char *ta_insn_class_name(ta_insn_class c);
TA_API const char *ta_limiter_name(ta_limiter l);

#ifdef __cplusplus
}
#endif
#endif
