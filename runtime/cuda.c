/* cuda.c — CUDA driver API through dlopen + cuGetProcAddress (cuda.h).
 *
 * The driver types and enum values used here are declared below from the
 * driver API's documented ABI (see /work/shared/notes/ptx-hopper.md §11),
 * so this file builds without the toolkit. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;

enum {
	CU_JIT_WALL_TIME = 2,
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
	CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
};

/* cuLaunchKernelEx structures (layouts from cuda.h, 64-bit). */
typedef struct {
	uint32_t id, pad;
	union {
		struct {
			uint32_t x, y, z;
		} clusterDim;
		char bytes[64];
	} value;
} CUlaunchAttribute;

typedef struct {
	uint32_t gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, pad;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	uint32_t numAttrs;
} CUlaunchConfig;

#define CU_FUNCS(X)                                                                                     \
	X(cuInit, (unsigned))                                                                           \
	X(cuDeviceGet, (CUdevice *, int))                                                               \
	X(cuDeviceGetCount, (int *))                                                                    \
	X(cuDeviceGetName, (char *, int, CUdevice))                                                     \
	X(cuDeviceGetAttribute, (int *, int, CUdevice))                                                 \
	X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                                            \
	X(cuDevicePrimaryCtxRelease, (CUdevice))                                                        \
	X(cuCtxSetCurrent, (CUcontext))                                                                 \
	X(cuCtxSynchronize, (void))                                                                     \
	X(cuModuleLoadDataEx, (CUmodule *, const void *, unsigned, int *, void **))                     \
	X(cuModuleUnload, (CUmodule))                                                                   \
	X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))                                  \
	X(cuFuncSetAttribute, (CUfunction, int, int))                                                   \
	X(cuMemAlloc, (CUdeviceptr *, size_t))                                                          \
	X(cuMemFree, (CUdeviceptr))                                                                     \
	X(cuMemcpyHtoD, (CUdeviceptr, const void *, size_t))                                            \
	X(cuMemcpyDtoH, (void *, CUdeviceptr, size_t))                                                  \
	X(cuMemsetD8, (CUdeviceptr, unsigned char, size_t))                                             \
	X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,      \
	                   unsigned, CUstream, void **, void **))                                         \
	X(cuLaunchKernelEx, (const CUlaunchConfig *, CUfunction, void **, void **))                     \
	X(cuEventCreate, (CUevent *, unsigned))                                                         \
	X(cuEventRecord, (CUevent, CUstream))                                                           \
	X(cuEventSynchronize, (CUevent))                                                                \
	X(cuEventElapsedTime, (float *, CUevent, CUevent))                                              \
	X(cuEventDestroy, (CUevent))                                                                    \
	X(cuGetErrorName, (CUresult, const char **))                                                    \
	X(cuGetErrorString, (CUresult, const char **))

struct CudaRt {
	void *lib;
	CUdevice dev;
	CUcontext ctx;
	int cc;
	int64_t smem_optin;
	char name[256];
	char err[8192];
#define X(name, args) CUresult (*name) args;
	CU_FUNCS(X)
#undef X
};

static void seterr(CudaRt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(CudaRt *rt, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rt->err, sizeof rt->err, fmt, ap);
	va_end(ap);
}

/* Records a driver error for call `what`; returns -1 (0 on success). */
static int check(CudaRt *rt, CUresult r, const char *what)
{
	if (r == 0)
		return 0;
	const char *name = NULL, *str = NULL;
	if (rt->cuGetErrorName)
		rt->cuGetErrorName(r, &name);
	if (rt->cuGetErrorString)
		rt->cuGetErrorString(r, &str);
	seterr(rt, "%s failed: %s (%d): %s", what, name ? name : "CUDA error", r, str ? str : "no description");
	return -1;
}

typedef CUresult (*GetProcAddr)(const char *, void **, int, uint64_t, int *);

int cuda_open(int dev, CudaRt **out)
{
	CudaRt *rt = calloc(1, sizeof *rt);
	*out = rt;
	if (!rt)
		return -1;
	rt->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!rt->lib) {
		const char *e = dlerror();
		seterr(rt, "cannot load the CUDA driver (dlopen libcuda.so.1 failed: %s); is an NVIDIA driver installed?",
		       e ? e : "unknown error");
		return -1;
	}
	GetProcAddr gpa = (GetProcAddr)dlsym(rt->lib, "cuGetProcAddress_v2");
	if (!gpa) {
		seterr(rt, "the CUDA driver is too old: cuGetProcAddress_v2 is missing (need a CUDA 12+ driver)");
		return -1;
	}
#define X(name, args)                                                                              \
	{                                                                                          \
		int st = 0;                                                                        \
		void *p = NULL;                                                                    \
		if (gpa(#name, &p, 12000, 0, &st) || !p) {                                         \
			seterr(rt, "the CUDA driver has no entry point %s", #name);                \
			return -1;                                                                 \
		}                                                                                  \
		memcpy(&rt->name, &p, sizeof p);                                                   \
	}
	CU_FUNCS(X)
#undef X
	int n = 0;
	if (check(rt, rt->cuInit(0), "cuInit") || check(rt, rt->cuDeviceGetCount(&n), "cuDeviceGetCount"))
		return -1;
	if (dev < 0 || dev >= n) {
		seterr(rt, "CUDA device %d does not exist (%d device%s)", dev, n, n == 1 ? "" : "s");
		return -1;
	}
	if (check(rt, rt->cuDeviceGet(&rt->dev, dev), "cuDeviceGet") ||
	    check(rt, rt->cuDevicePrimaryCtxRetain(&rt->ctx, rt->dev), "cuDevicePrimaryCtxRetain"))
		return -1;
	if (check(rt, rt->cuCtxSetCurrent(rt->ctx), "cuCtxSetCurrent"))
		return -1;
	int major = 0, minor = 0, optin = 0;
	rt->cuDeviceGetName(rt->name, sizeof rt->name - 1, rt->dev);
	rt->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, rt->dev);
	rt->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, rt->dev);
	rt->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, rt->dev);
	rt->cc = major * 10 + minor;
	rt->smem_optin = optin;
	return 0;
}

void cuda_close(CudaRt *rt)
{
	if (!rt)
		return;
	if (rt->ctx && rt->cuDevicePrimaryCtxRelease)
		rt->cuDevicePrimaryCtxRelease(rt->dev);
	if (rt->lib)
		dlclose(rt->lib);
	free(rt);
}

const char *cuda_error(const CudaRt *rt)
{
	return rt ? rt->err : "out of memory";
}

const char *cuda_device_name(const CudaRt *rt) { return rt->name; }
int cuda_device_cc(const CudaRt *rt) { return rt->cc; }
int64_t cuda_max_smem_optin(const CudaRt *rt) { return rt->smem_optin; }

int cuda_module_load(CudaRt *rt, const char *ptx, void **module, StrBuf *info_log, float *ms)
{
	enum { LOG = 16384 };
	char *info = calloc(1, LOG), *elog = calloc(1, LOG);
	if (!info || !elog) {
		free(info);
		free(elog);
		seterr(rt, "out of memory");
		return -1;
	}
	int opts[5] = {CU_JIT_WALL_TIME, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
	               CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[5] = {0, info, (void *)(uintptr_t)LOG, elog, (void *)(uintptr_t)LOG};
	CUmodule mod = NULL;
	CUresult r = rt->cuModuleLoadDataEx(&mod, ptx, 5, opts, vals);
	if (ms) {
		float f;
		memcpy(&f, &vals[0], sizeof f); /* the driver writes the float into the slot itself */
		*ms = f;
	}
	if (info_log && info[0])
		sb_puts(info_log, info);
	if (r) {
		check(rt, r, "cuModuleLoadDataEx (PTX JIT)");
		size_t n = strlen(rt->err);
		snprintf(rt->err + n, sizeof rt->err - n, "\n%s", elog[0] ? elog : "(no JIT error log)");
	} else {
		*module = mod;
	}
	free(info);
	free(elog);
	return r ? -1 : 0;
}

void cuda_module_unload(CudaRt *rt, void *module)
{
	if (module)
		rt->cuModuleUnload(module);
}

int cuda_function(CudaRt *rt, void *module, const char *name, CudaFunc **fn)
{
	CUfunction f = NULL;
	if (check(rt, rt->cuModuleGetFunction(&f, module, name), "cuModuleGetFunction"))
		return -1;
	*fn = (CudaFunc *)f;
	return 0;
}

int cuda_func_set_smem(CudaRt *rt, CudaFunc *fn, int64_t bytes)
{
	if (bytes > rt->smem_optin) {
		seterr(rt, "the kernel needs %lld bytes of shared memory; the device allows %lld per block",
		       (long long)bytes, (long long)rt->smem_optin);
		return -1;
	}
	return check(rt, rt->cuFuncSetAttribute((CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
	                                        (int)bytes), "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

int cuda_malloc(CudaRt *rt, uint64_t *dptr, size_t bytes)
{
	CUdeviceptr p = 0;
	if (check(rt, rt->cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc"))
		return -1;
	*dptr = p;
	return 0;
}

void cuda_free(CudaRt *rt, uint64_t dptr)
{
	if (dptr)
		rt->cuMemFree(dptr);
}

int cuda_memcpy_htod(CudaRt *rt, uint64_t dst, const void *src, size_t bytes)
{
	return bytes ? check(rt, rt->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD") : 0;
}

int cuda_memcpy_dtoh(CudaRt *rt, void *dst, uint64_t src, size_t bytes)
{
	return bytes ? check(rt, rt->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH") : 0;
}

int cuda_memset8(CudaRt *rt, uint64_t dst, uint8_t v, size_t bytes)
{
	return bytes ? check(rt, rt->cuMemsetD8(dst, v, bytes), "cuMemsetD8") : 0;
}

int cuda_launch(CudaRt *rt, CudaFunc *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t smem,
                void **params, const uint32_t *cluster)
{
	if (!grid[0] || !grid[1] || !grid[2])
		return 0; /* an empty grid runs nothing */
	if (!cluster)
		return check(rt, rt->cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1],
		                                    block[2], smem, NULL, params, NULL), "cuLaunchKernel");
	CUlaunchAttribute attr;
	memset(&attr, 0, sizeof attr);
	attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	attr.value.clusterDim.x = cluster[0];
	attr.value.clusterDim.y = cluster[1];
	attr.value.clusterDim.z = cluster[2];
	CUlaunchConfig cfg = {grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, 0, NULL, &attr, 1};
	return check(rt, rt->cuLaunchKernelEx(&cfg, (CUfunction)fn, params, NULL), "cuLaunchKernelEx");
}

int cuda_make_current(CudaRt *rt)
{
	return check(rt, rt->cuCtxSetCurrent(rt->ctx), "cuCtxSetCurrent");
}

int cuda_launch_on(CudaRt *rt, CudaFunc *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t smem,
                   void **params, void *stream)
{
	if (!grid[0] || !grid[1] || !grid[2])
		return 0;
	return check(rt, rt->cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
	                                    smem, (CUstream)stream, params, NULL), "cuLaunchKernel");
}

int cuda_sync(CudaRt *rt)
{
	return check(rt, rt->cuCtxSynchronize(), "kernel execution (cuCtxSynchronize)");
}

int cuda_time_launches(CudaRt *rt, CudaFunc *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t smem,
                       void **params, int n, float *ms)
{
	CUevent a = NULL, b = NULL;
	int rc = -1;
	if (check(rt, rt->cuEventCreate(&a, 0), "cuEventCreate") || check(rt, rt->cuEventCreate(&b, 0), "cuEventCreate"))
		goto out;
	if (check(rt, rt->cuEventRecord(a, NULL), "cuEventRecord"))
		goto out;
	for (int i = 0; i < n; i++)
		if (cuda_launch(rt, fn, grid, block, smem, params, NULL))
			goto out;
	if (check(rt, rt->cuEventRecord(b, NULL), "cuEventRecord") ||
	    check(rt, rt->cuEventSynchronize(b), "kernel execution (cuEventSynchronize)"))
		goto out;
	float t = 0;
	if (check(rt, rt->cuEventElapsedTime(&t, a, b), "cuEventElapsedTime"))
		goto out;
	*ms = n ? t / (float)n : 0;
	rc = 0;
out:
	if (a)
		rt->cuEventDestroy(a);
	if (b)
		rt->cuEventDestroy(b);
	return rc;
}
