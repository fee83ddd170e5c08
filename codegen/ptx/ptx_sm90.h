/* ptx_sm90.h — the Hopper (sm_90a) GEMM path: Tile IR kernels whose
 * pipelined loop feeds a gemm from shared tiles,
 *
 *     pipelined ko in 0 .. ceildiv(K, BK) stages(S) {
 *       copy(A[by * BM, ko * BK], A_s)                      (either order)
 *       copy(B[ko * BK, bx * BN], B_s)   or   copy(B[bx * BN, ko * BK], B_s)
 *       gemm(A_s, B_s, C_f)              or   gemm(A_s, B_s, C_f, transpose_b=true)
 *     }
 *
 * (A, B f16 or bf16, C_f f32 [BM, BN], BM in {64, 128}, BN in {64, 128},
 * threads(128), A_s/B_s used nowhere else), with ANY other statements
 * before and after the loop (clears, element-wise epilogues over C_f,
 * stores of any dtype, atomics, other tensors and scalars).  Also:
 *   - batched operands: A [Bt, M, K] read as A[bz, by * BM, ko * BK] (a
 *     rank-reducing copy; the same for B), each operand on its own;
 *   - a K range per block (split-K): `pipelined ko in LO .. HI` with BK = 64
 *     and LO, HI integer expressions of constants, shape symbols, i32
 *     scalars, by, bz and top-level lets of those (not bx: the two IR blocks
 *     of a CTA share their A loads, so they share the range).
 * The grid may have a z extent (bz).  The kernel gets a second
 * entry `<kernel>_sm90` next to the generic one:
 *   - the loop becomes TMA loads into a 128B-swizzled shared-memory ring of
 *     mbarrier-guarded stages, filled by a producer warpgroup
 *     (setmaxnreg.dec), and wgmma.mma_async m64nBNk16 into C_f's registers;
 *   - everything else is the general lowering (lower_kernel_wg) of the
 *     program as written, for 128 threads (one consumer warpgroup = one IR
 *     block), over C_f in registers in the wgmma accumulator layout;
 *   - two consumer warpgroups run IR blocks (2j, by) and (2j + 1, by), which
 *     share their A tiles: the CTA tile is BM x 2BN; the grid is persistent
 *     (one CTA per SM walks CTA tiles in groups of 8 tile rows).
 * What changes against the IR (the listing's header comment says it): the K
 * step is 64 (one 128-byte swizzle row of f16/bf16) and the ring has up to 4
 * stages, whatever BK and stages(S) the IR asked for.  The result is the
 * same: each C_f element is the f32 sum of all K products (out-of-range
 * loads are zeros, like the IR's copy edge rule).
 *
 * Launch contract (Sm90Launch):
 *   - parameters: the generic entry's (PtxKernelInfo.params, same values),
 *     then one 128-byte CUtensorMap by value per tmaps[i] (A, then B), then
 *     three u32: the IR grid's x, y and z extents (ir_grid);
 *   - tensor maps encoded from Sm90Tmap and the dimensions of its tensor
 *     (runtime/cuda_tma.h does it);
 *   - grid from sm90_grid, block (threads, 1, 1), dynamic shared memory
 *     smem_bytes (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first);
 *   - TMA row strides are multiples of 16 bytes: K % 8 == 0, and N % 8 == 0
 *     for a [K, N] B (each map's innermost extent); sm90_check_shapes
 *     reports a violation, and launchers then use the generic entry, which
 *     takes any size.
 */
#ifndef TILEASM_PTX_SM90_H
#define TILEASM_PTX_SM90_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"
#include "lower.h"
#include "target.h"

/* One tensor map: a row-major tensor of rank 2 ([rows, cols], cols
 * contiguous) or 3 ([batch, rows, cols]) read in boxes of box[0] (cols) x
 * box[1] (rows) x box[2] (1 batch) elements.  The global extent comes from
 * the tensor's shape at launch time (sm90_tmap_dims). */
typedef struct {
	int32_t arg;     /* tensor argument, Kernel.args index */
	uint8_t dtype;   /* DT_F16 or DT_BF16 */
	uint8_t rank;    /* 2 or 3 */
	uint32_t box[3]; /* innermost (contiguous) dimension first */
	uint8_t swizzle; /* CUtensorMapSwizzle: 3 = 128B */
} Sm90Tmap;

/* The extents of each map's tensor at launch, outermost first as in the IR
 * ([M, K], [Bt, M, K], ...; tmaps[i].rank of them). */
typedef struct {
	int64_t d[2][3];
} Sm90Dims;

/* Everything a launcher needs for one kernel emitted by this path. */
typedef struct Sm90Launch {
	char entry[128];    /* PTX entry name: the kernel's name + "_sm90" */
	int ngeneric;       /* parameters 0 .. ngeneric-1: the generic entry's */
	int ntmaps;         /* then the tensor maps (A, B), then u32 grid x, y, z */
	Sm90Tmap tmaps[2];
	uint32_t threads;   /* block size (x): 384 */
	uint32_t cluster[3];/* cluster dims; {1,1,1} = no cluster launch */
	int64_t smem_bytes; /* dynamic shared memory (> 48 KB) */
	uint32_t tile_m, tile_n, tile_k, stages; /* CTA tile (two IR blocks along x), ring K step and stages */
	bool b_kmajor;      /* B is [N, K] (transpose_b) rather than [K, N] */
	bool k_range;       /* the loop runs a K range of its own per block (split-K) */
} Sm90Launch;

/* What the matcher extracted from the IR. */
typedef struct {
	int kernel;
	int32_t a, b;         /* global operand buffers */
	int32_t as, bs, cf;   /* shared tiles and the accumulator fragment */
	int32_t loop;         /* the pipelined loop's statement id */
	bool a_batched, b_batched; /* rank-3 operand indexed [bz, ...] */
	uint8_t in_dtype;     /* DT_F16 / DT_BF16 */
	bool b_kmajor;        /* transpose_b */
	int32_t ir_bm, ir_bn, ir_bk, ir_stages; /* what the IR asked for */
	Sm90Launch launch;    /* stages and smem_bytes are set by sm90_gemm_try */
} Sm90Gemm;

/* Returns true and fills *g if kernel k of the verified module m has the
 * loop above (no diagnostics: a miss means "generic entry only"). */
bool sm90_gemm_match(const Module *m, int k, Sm90Gemm *g);

/* The hook ptx_compile calls per kernel for sm_90a: if kernel k matches and
 * its lowering for one warpgroup keeps C_f in the wgmma layout, appends the
 * entry "<kernel>_sm90" to out and returns a malloc'd launch description
 * (free with free()); else returns NULL and appends nothing.  NULL also on
 * out of memory: the generic entry still works. */
Sm90Launch *sm90_gemm_try(const Module *m, int k, const Target *t, const LowerOptions *o, StrBuf *out);

/* Persistent grid: min(CTA tiles, sm_count) CTAs along x, for the IR grid
 * irgrid (grid[0] == 0 when there is nothing to do: skip the launch). */
void sm90_grid(const Sm90Launch *l, const uint32_t irgrid[3], int sm_count, uint32_t grid[3]);

/* Checks the TMA constraints for the maps' tensor extents; returns NULL if
 * the launch is valid, else a static message saying which requirement fails. */
const char *sm90_check_shapes(const Sm90Launch *l, const Sm90Dims *t);

/* Global extent of tensor map i, innermost first ({cols, rows[, batch]}). */
void sm90_tmap_dims(const Sm90Launch *l, int i, const Sm90Dims *t, uint64_t dims[3]);

#endif
