/* cuda_tma.h — launch support for the sm_90a GEMM path (codegen/ptx/ptx_sm90.h):
 * CUtensorMaps through the driver's cuTensorMapEncodeTiled, the SM count for
 * the persistent grid, and the kernel-parameter block of one launch.
 *
 * The driver is reached the same way runtime/cuda.c does (dlopen
 * "libcuda.so.1", entry points through cuGetProcAddress, CUDA 12 ABI), but
 * independently, so this file needs nothing from a CudaRt.  Library code:
 * errors are returned as messages in CudaTma.err, never printed. */
#ifndef TILEASM_CUDA_TMA_H
#define TILEASM_CUDA_TMA_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "ptx_sm90.h"

typedef struct {
	void *lib;            /* dlopen handle of libcuda.so.1 */
	void *encode_tiled;   /* cuTensorMapEncodeTiled */
	void *device_get;     /* cuDeviceGet */
	void *device_attr;    /* cuDeviceGetAttribute */
	char err[256];        /* last error, "" if none */
} CudaTma;

/* Resolves the entry points.  Returns 0, or -1 with t->err set (no driver,
 * or a driver without TMA support).  Close with cuda_tma_close either way. */
int cuda_tma_open(CudaTma *t);
void cuda_tma_close(CudaTma *t);

/* Number of SMs of device ordinal dev (cuInit must have run, e.g. through
 * cuda_open).  Returns the count, or -1 with t->err set. */
int cuda_tma_sm_count(CudaTma *t, int dev);

/* Encodes tensor map tm of a row-major tensor (rank tm->rank) at device
 * address gptr with global extent dims (innermost first: {cols, rows[,
 * batch]}) into map (128 bytes, 64-byte aligned).  Returns 0, or -1 with
 * t->err set. */
int cuda_tma_encode(CudaTma *t, const Sm90Tmap *tm, uint64_t gptr, const uint64_t dims[3], void *map);

/* Everything cuLaunchKernel needs for one launch of an sm90 entry. */
#define SM90_MAX_GENERIC 60
typedef struct {
	alignas(64) uint8_t maps[2][128];
	uint32_t ir[3];                /* the IR grid */
	void *params[SM90_MAX_GENERIC + 5]; /* kernelParams: the generic entry's, then the maps, ir[0..2] */
	uint32_t grid[3], block[3];
	uint32_t smem;                 /* dynamic shared memory bytes */
} Sm90Args;

/* Fills *a for kernel launch l.  gparams: the generic entry's kernelParams
 * (l->ngeneric pointers, as cuLaunchKernel of the generic entry takes
 * them; only the pointers are copied), irgrid: the IR grid (ir_grid),
 * dptr[i]: the device address of tensor argument i (Kernel.args order),
 * td: the extents of each map's tensor.  Returns 0, or -1 with t->err set
 * (a TMA constraint the sizes violate, or the driver refusing a map).
 * a->grid[0] == 0 means: nothing to launch. */
int cuda_sm90_args(CudaTma *t, const Sm90Launch *l, void *const *gparams, const uint32_t irgrid[3],
                   const uint64_t *dptr, const Sm90Dims *td, int sm_count, Sm90Args *a);

#endif
