/* cuda.h — the CUDA driver API, opened at run time.
 *
 * tileasm never links libcuda: cuda_open dlopens "libcuda.so.1" and resolves
 * every entry point through cuGetProcAddress (CUDA 12 ABI).  No toolkit
 * header is needed to build; the few driver types are declared privately
 * in cuda.c.  Every function returns 0, or -1 with a message readable via
 * cuda_error() (driver error name and text, or the JIT's error log).
 * Handles are opaque; device pointers are uint64_t.
 */
#ifndef TILEASM_CUDA_H
#define TILEASM_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef struct CudaRt CudaRt;
typedef struct CudaFunc CudaFunc; /* a CUfunction */

/* Opens the driver, initialises it, and makes device `dev`'s primary
 * context current.  On failure *out is a CudaRt holding only the error
 * (still free it with cuda_close), e.g. when there is no driver. */
int cuda_open(int dev, CudaRt **out);
void cuda_close(CudaRt *rt);
const char *cuda_error(const CudaRt *rt); /* never NULL */
const char *cuda_device_name(const CudaRt *rt);
int cuda_device_cc(const CudaRt *rt);      /* compute capability, e.g. 90 */
int64_t cuda_max_smem_optin(const CudaRt *rt); /* per block, bytes */

/* JIT-compiles a NUL-terminated PTX module at the driver's default
 * optimisation level (never -O0).  The JIT's info log goes to info_log if
 * not NULL; its error log becomes cuda_error().  *ms gets the JIT wall time. */
int cuda_module_load(CudaRt *rt, const char *ptx, void **module, StrBuf *info_log, float *ms);
void cuda_module_unload(CudaRt *rt, void *module);
int cuda_function(CudaRt *rt, void *module, const char *name, CudaFunc **fn);
/* Raises the function's dynamic shared memory limit (needed above 48 KB). */
int cuda_func_set_smem(CudaRt *rt, CudaFunc *fn, int64_t bytes);

int cuda_malloc(CudaRt *rt, uint64_t *dptr, size_t bytes);
void cuda_free(CudaRt *rt, uint64_t dptr);
int cuda_memcpy_htod(CudaRt *rt, uint64_t dst, const void *src, size_t bytes);
int cuda_memcpy_dtoh(CudaRt *rt, void *dst, uint64_t src, size_t bytes);
int cuda_memset8(CudaRt *rt, uint64_t dst, uint8_t v, size_t bytes);

/* Launches on the default stream.  params[i] points at argument i's value.
 * cluster may be NULL; otherwise a {x, y, z} cluster shape (cuLaunchKernelEx). */
int cuda_launch(CudaRt *rt, CudaFunc *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t smem,
                void **params, const uint32_t *cluster);
/* Makes the device's primary context current in the calling thread (a host
 * may launch from threads other than the one that opened the runtime). */
int cuda_make_current(CudaRt *rt);
/* The same on a given stream (a CUstream, NULL = the default stream), no cluster. */
int cuda_launch_on(CudaRt *rt, CudaFunc *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t smem,
                   void **params, void *stream);
int cuda_sync(CudaRt *rt);
/* Launches n times between two events and returns the mean time in ms. */
int cuda_time_launches(CudaRt *rt, CudaFunc *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t smem,
                       void **params, int n, float *ms);

#endif
