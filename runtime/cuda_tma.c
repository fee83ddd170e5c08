/* cuda_tma.c — tensor maps and launch parameters for the sm_90a GEMM path. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda_tma.h"

/* Driver types and values (cuda.h documents them; no toolkit header needed). */
typedef int CUresult;
typedef CUresult (*GetProcAddressFn)(const char *sym, void **pfn, int cuda_version, uint64_t flags, int *status);
typedef CUresult (*EncodeTiledFn)(void *map, int dtype, uint32_t rank, void *gaddr, const uint64_t *dims,
                                  const uint64_t *strides, const uint32_t *box, const uint32_t *estrides,
                                  int interleave, int swizzle, int l2promo, int oobfill);
typedef CUresult (*DeviceGetFn)(int *dev, int ordinal);
typedef CUresult (*DeviceAttrFn)(int *v, int attr, int dev);

enum {
	TMA_DT_FLOAT16 = 6, TMA_DT_BFLOAT16 = 9,
	TMA_INTERLEAVE_NONE = 0, TMA_L2_256B = 3, TMA_OOB_ZERO = 0,
	ATTR_MULTIPROCESSOR_COUNT = 16,
};

static int fail(CudaTma *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(CudaTma *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->err, sizeof t->err, fmt, ap);
	va_end(ap);
	return -1;
}

int cuda_tma_open(CudaTma *t)
{
	memset(t, 0, sizeof *t);
	t->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!t->lib)
		return fail(t, "cannot open the CUDA driver (libcuda.so.1): %s", dlerror());
	GetProcAddressFn gpa;
	*(void **)&gpa = dlsym(t->lib, "cuGetProcAddress_v2");
	if (!gpa)
		return fail(t, "the CUDA driver has no cuGetProcAddress_v2 (need CUDA 12 or newer)");
	static const char *const names[] = {"cuTensorMapEncodeTiled", "cuDeviceGet", "cuDeviceGetAttribute"};
	void **slots[] = {&t->encode_tiled, &t->device_get, &t->device_attr};
	for (size_t i = 0; i < TA_ARRAY_LEN(names); i++) {
		int status = -1;
		CUresult r = gpa(names[i], slots[i], 12000, 0, &status);
		if (r != 0 || status != 0 || !*slots[i])
			return fail(t, "the CUDA driver does not provide %s (error %d)", names[i], r ? r : status);
	}
	return 0;
}

void cuda_tma_close(CudaTma *t)
{
	if (t->lib)
		dlclose(t->lib);
	t->lib = NULL;
}

int cuda_tma_sm_count(CudaTma *t, int dev)
{
	int d = 0, n = 0;
	CUresult r = ((DeviceGetFn)t->device_get)(&d, dev);
	if (r == 0)
		r = ((DeviceAttrFn)t->device_attr)(&n, ATTR_MULTIPROCESSOR_COUNT, d);
	if (r != 0 || n < 1)
		return fail(t, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT) failed (error %d)", r);
	return n;
}

int cuda_tma_encode(CudaTma *t, const Sm90Tmap *tm, uint64_t gptr, const uint64_t dims[3], void *map)
{
	uint64_t esz = 2;
	uint32_t estr[3] = {1, 1, 1};
	/* A zero extent is not encodable; such launches never get here (no tiles),
	 * but keep the map valid anyway. */
	uint64_t d[3] = {dims[0] ? dims[0] : 1, dims[1] ? dims[1] : 1, dims[2] ? dims[2] : 1};
	/* byte strides of the outer dimensions (the caller checked that rows are multiples of 16 bytes) */
	uint64_t stride[2] = {(d[0] * esz + 15) / 16 * 16, 0};
	stride[1] = stride[0] * d[1];
	CUresult r = ((EncodeTiledFn)t->encode_tiled)(map, tm->dtype == DT_BF16 ? TMA_DT_BFLOAT16 : TMA_DT_FLOAT16,
	                                              tm->rank, (void *)(uintptr_t)gptr, d, stride, tm->box, estr,
	                                              TMA_INTERLEAVE_NONE, tm->swizzle, TMA_L2_256B, TMA_OOB_ZERO);
	if (r != 0)
		return fail(t, "cuTensorMapEncodeTiled failed (error %d)", r);
	return 0;
}

int cuda_sm90_args(CudaTma *t, const Sm90Launch *l, void *const *gparams, const uint32_t irgrid[3],
                   const uint64_t *dptr, const Sm90Dims *td, int sm_count, Sm90Args *a)
{
	memset(a, 0, sizeof *a);
	const char *why = sm90_check_shapes(l, td);
	if (why)
		return fail(t, "%s", why);
	if (l->ngeneric > SM90_MAX_GENERIC)
		return fail(t, "the sm_90a GEMM entry takes at most %d parameters", SM90_MAX_GENERIC);
	/* the entry counts its tiles in 32 bits */
	if ((uint64_t)((irgrid[0] + 1ull) / 2) * irgrid[1] * irgrid[2] > UINT32_MAX)
		return fail(t, "the sm_90a GEMM entry takes at most 2^32-1 CTA tiles");
	for (int i = 0; i < l->ngeneric; i++)
		a->params[i] = gparams[i];
	for (int i = 0; i < l->ntmaps; i++) {
		uint64_t dims[3];
		sm90_tmap_dims(l, i, td, dims);
		if (cuda_tma_encode(t, &l->tmaps[i], dptr[l->tmaps[i].arg], dims, a->maps[i]))
			return -1;
		a->params[l->ngeneric + i] = a->maps[i];
	}
	for (int i = 0; i < 3; i++) {
		a->ir[i] = irgrid[i];
		a->params[l->ngeneric + l->ntmaps + i] = &a->ir[i];
	}
	sm90_grid(l, a->ir, sm_count, a->grid);
	a->block[0] = l->threads, a->block[1] = a->block[2] = 1;
	a->smem = (uint32_t)l->smem_bytes;
	return 0;
}
