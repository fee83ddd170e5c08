/* lower_mma_impl.h — private to lower_mma.c, lower_rf.c, lower_rr.c: what its parts share (split from lower_mma.c). */
/* gemm: the matrix shapes (simt_mma), PTX mma and AMD
 * MFMA/WMMA tilings, the scalar fallback, and accumulators that stay in
 * registers in the MMA C layout (rf_*: eligibility, registers, element
 * loops, copies). */
#ifndef TILEASM_LOWER_MMA_IMPL_H
#define TILEASM_LOWER_MMA_IMPL_H

#include "lower_impl.h"


/* 8-column groups per warp strip of an mma gemm: NB * 8 columns share one A fragment.
 * The sm_90a GEMM path (c->wg) needs the wgmma accumulator layout: a warp's
 * strip spans all N columns (NB = N / 8).  So do NVIDIA register fragments
 * of up to 128 columns whose 16-row strips spread evenly over the warps
 * (M > 0; 0 for an accumulator in shared memory): every fragment of M rows
 * then has the same rows per thread, whatever its width, so row statistics
 * serve all of them (attention's S and O at D = 128) and a fragment can be
 * the A operand of the next gemm (lower_mma_ldm.c). */
static inline int gemm_nb(const L *c, int64_t M, int64_t N)
{
	if (c->wg && N % 8 == 0 && N / 8 <= 32)
		return (int)(N / 8);
	if (M > 0 && target_is_nvidia(c->t->id) && N % 8 == 0 && N / 8 <= 16 && M % 16 == 0 &&
	    (M / 16) % (c->nthreads / 32) == 0)
		return (int)(N / 8);
	return (N / 8) % 8 == 0 ? 8 : (N / 8) % 4 == 0 ? 4 : (N / 8) % 2 == 0 ? 2 : 1;
}


#define RF_MAX_STRIPS 32

/* Tiling of an M x N accumulator for an AMD shape. */
typedef struct {
	int sh, wave, W, NB, ntn;
	int64_t ntiles;
} AmdTiling;

/* Per-lane values of an AMD shape: i = lane % 16, h = lane / 16, the wave. */
typedef struct {
	int32_t wave, i, h;
} AmdLane;

bool warp_shape(int sh);
int target_shape(L *c, int64_t N, DType in);
int gemm_shape(L *c, const Stmt *s);
int32_t frag_a(L *c, const Stmt *s, int32_t r0, int32_t r8, int32_t k0, int32_t k8);
int32_t frag_b(L *c, const Stmt *s, int32_t n, int32_t k0, int32_t k8);
AmdTiling amd_tiling_as(L *c, int sh, int64_t M, int64_t N, bool rows);
AmdTiling amd_tiling(L *c, int sh, int64_t M, int64_t N);
AmdLane amd_lane(L *c, int wave);
void lower_gemm_amd(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K);
void lower_gemm_amd_rf(L *c, const Stmt *s, int64_t K);
int rr_rows(L *c, int64_t R, int64_t C, int *strips_per_row);
bool rr_rows_alike(L *c, int64_t R, int64_t C1, int64_t C2);
int rf_bases(L *c, int32_t b, int32_t *rb, int32_t *cb);
void rf_rowcol(L *c, int32_t b, const int32_t *rb, const int32_t *cb, int e, int32_t *row, int32_t *col);
void lower_gemm_mma_rf(L *c, const Stmt *s, int64_t K);

#endif
