/* ptx_sm90.h — the Hopper (sm_90a) GEMM path.
 *
 * sm90_gemm_match recognises GEMM-shaped Tile IR kernels:
 *
 *     clear(C_f)
 *     pipelined ko in 0 .. ceildiv(K, BK) stages(S) {
 *       copy(A[by * BM, ko * BK], A_s)                      (either order)
 *       copy(B[ko * BK, bx * BN], B_s)   or   copy(B[bx * BN, ko * BK], B_s)
 *       gemm(A_s, B_s, C_f)              or   gemm(A_s, B_s, C_f, transpose_b=true)
 *     }
 *     copy(C_f, C[by * BM, bx * BN])
 *
 * with grid(ceildiv(N, BN), ceildiv(M, BM)), A/B both f16 or both bf16,
 * C_f f32 and C f16, bf16 or f32.  sm90_gemm_emit then writes one PTX entry
 * that computes the same function with Hopper hardware: TMA loads into a
 * 128B-swizzled shared-memory ring guarded by mbarriers, wgmma.mma_async
 * m64n256k16 in two consumer warpgroups, a producer warpgroup (setmaxnreg),
 * and a persistent grid.  The block tile the IR declares is a request: the
 * emitted kernel always uses a 128x256x64 CTA tile and 4 stages (docs/
 * performance.md says why); the result is the same C because every tile of
 * C is produced by one CTA from the full K loop in ascending order of k
 * blocks, and out-of-range rows/columns are zero-filled (loads) or dropped
 * (stores) exactly like the IR's copy edge rule.
 *
 * Launch contract (what a launcher must do, described by Sm90Launch):
 *   - kernel parameters follow Kernel.args order; each is a 128-byte
 *     CUtensorMap by value (SM90P_TMAP), a u64 device pointer (SM90P_PTR) or
 *     a u32 shape symbol (SM90P_U32);
 *   - tensor maps are encoded from Sm90Tmap (runtime/cuda_tma.h does it);
 *   - grid from sm90_grid, block (threads, 1, 1), dynamic shared memory
 *     smem_bytes (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first);
 *   - row strides of tensor-map tensors must be multiples of 16 bytes
 *     (K % 8 == 0 for K-major operands, N % 8 == 0 for an [K, N] B) and N
 *     must be even (C is stored in aligned column pairs):
 *     sm90_check_shapes reports a violation before launch, and launchers
 *     then use the generic entry, which takes any size.
 */
#ifndef TILEASM_PTX_SM90_H
#define TILEASM_PTX_SM90_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

/* How a kernel parameter is passed. */
typedef enum {
	SM90P_TMAP, /* .param .align 64 .b8 [128]: CUtensorMap of tensor argument `arg` */
	SM90P_PTR,  /* .param .u64: device address of tensor argument `arg` */
	SM90P_U32,  /* .param .u32: value of shape-symbol argument `arg` */
} Sm90ParamKind;

typedef struct {
	uint8_t kind; /* Sm90ParamKind */
	int32_t arg;  /* index into Kernel.args */
	int32_t tmap; /* SM90P_TMAP: index into Sm90Launch.tmaps, else -1 */
} Sm90Param;

/* One tensor map: a rank-2 row-major tensor (rows x cols, cols contiguous)
 * read in boxes of box[0] (cols) x box[1] (rows) elements.  The global
 * extent comes from the tensor's shape at launch time. */
typedef struct {
	int32_t arg;     /* tensor argument, Kernel.args index */
	uint8_t dtype;   /* DT_F16 or DT_BF16 */
	uint32_t box[2]; /* innermost (contiguous) dimension first */
	uint8_t swizzle; /* CUtensorMapSwizzle: 3 = 128B */
} Sm90Tmap;

#define SM90_MAX_PARAMS 8

/* Everything a launcher needs for one kernel emitted by this path. */
typedef struct Sm90Launch {
	char entry[128];    /* PTX entry name: the kernel's name + "_sm90" */
	int nparams;
	Sm90Param params[SM90_MAX_PARAMS];
	int ntmaps;
	Sm90Tmap tmaps[2];
	uint32_t threads;   /* block size (x) */
	uint32_t cluster[3];/* cluster dims; {1,1,1} = no cluster launch */
	int64_t smem_bytes; /* dynamic shared memory (> 48 KB) */
	uint32_t tile_m, tile_n, tile_k, stages; /* the Hopper CTA tile chosen */
	/* Where the problem sizes live: tensor argument and dimension. */
	int32_t m_arg, m_dim, n_arg, n_dim, k_arg, k_dim;
	bool b_kmajor;      /* B is [N, K] (transpose_b) rather than [K, N] */
} Sm90Launch;

/* What the matcher extracted from the IR (input of sm90_gemm_emit). */
typedef struct {
	int kernel;
	int32_t a, b, c;      /* global buffer ids */
	uint8_t in_dtype;     /* DT_F16 / DT_BF16 */
	uint8_t out_dtype;    /* DT_F16 / DT_BF16 / DT_F32 */
	bool b_kmajor;        /* transpose_b */
	int32_t ir_bm, ir_bn, ir_bk, ir_stages; /* what the IR asked for */
	Sm90Launch launch;
} Sm90Gemm;

/* Returns true and fills *g if kernel k of the verified module m has the
 * GEMM shape above (no diagnostics: a miss means "use the generic path"). */
bool sm90_gemm_match(const Module *m, int k, Sm90Gemm *g);

/* Appends the PTX entry (and the module-scope shared declaration it needs)
 * for a matched kernel to out.  The caller writes the module header; it must
 * say `.version 8.0` (or newer) and `.target sm_90a`. */
void sm90_gemm_emit(const Module *m, const Sm90Gemm *g, StrBuf *out);

/* The hook ptx_compile calls per kernel for sm_90a: if kernel k matches,
 * appends its entry "<kernel>_sm90" to out (next to the generic entry, which
 * stays the fallback for sizes sm90_check_shapes rejects) and returns a
 * malloc'd launch description (free with free()); else returns NULL and
 * appends nothing.  NULL also on out of memory: the generic path still works. */
Sm90Launch *sm90_gemm_try(const Module *m, int k, StrBuf *out);

/* The module header sm90 kernels need (".version 8.0\n.target sm_90a\n..."). */
void sm90_module_header(StrBuf *out);

/* Persistent grid: min(number of CTA tiles, sm_count) CTAs along x
 * (grid[0] == 0 when the output is empty: skip the launch). */
void sm90_grid(const Sm90Launch *l, int64_t M, int64_t N, int sm_count, uint32_t grid[3]);

/* Checks the TMA constraints for the given sizes; returns NULL if the launch
 * is valid, else a static message saying which requirement fails. */
const char *sm90_check_shapes(const Sm90Launch *l, int64_t M, int64_t N, int64_t K);

/* Global extent of tensor map i ({cols, rows}) for the given sizes. */
void sm90_tmap_dims(const Sm90Launch *l, int i, int64_t M, int64_t N, int64_t K, uint64_t dims[2]);

#endif
