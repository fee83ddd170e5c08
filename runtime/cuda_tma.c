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

int cuda_tma_encode(CudaTma *t, const Sm90Tmap *tm, uint64_t gptr, const uint64_t dims[2], void *map)
{
	int esz = 2;
	uint64_t stride[1] = {dims[0] * (uint64_t)esz};
	uint32_t estr[2] = {1, 1};
	/* A zero extent is not encodable; such launches never get here (no tiles),
	 * but keep the map valid anyway. */
	uint64_t d[2] = {dims[0] ? dims[0] : 1, dims[1] ? dims[1] : 1};
	if (stride[0] % 16 != 0)
		stride[0] = (stride[0] + 15) / 16 * 16; /* caller checked; never taken for valid launches */
	CUresult r = ((EncodeTiledFn)t->encode_tiled)(map, tm->dtype == DT_BF16 ? TMA_DT_BFLOAT16 : TMA_DT_FLOAT16,
	                                              2, (void *)(uintptr_t)gptr, d, stride, tm->box, estr,
	                                              TMA_INTERLEAVE_NONE, tm->swizzle, TMA_L2_256B, TMA_OOB_ZERO);
	if (r != 0)
		return fail(t, "cuTensorMapEncodeTiled failed (error %d)", r);
	return 0;
}

int cuda_sm90_args(CudaTma *t, const Sm90Launch *l, const uint64_t *dptr, const int64_t *ival, int64_t M,
                   int64_t N, int64_t K, int sm_count, Sm90Args *a)
{
	memset(a, 0, sizeof *a);
	const char *why = sm90_check_shapes(l, M, N, K);
	if (why)
		return fail(t, "%s", why);
	for (int i = 0; i < l->nparams; i++) {
		const Sm90Param *p = &l->params[i];
		switch (p->kind) {
		case SM90P_TMAP: {
			uint64_t dims[2];
			sm90_tmap_dims(l, p->tmap, M, N, K, dims);
			if (cuda_tma_encode(t, &l->tmaps[p->tmap], dptr[p->arg], dims, a->maps[p->tmap]))
				return -1;
			a->params[i] = a->maps[p->tmap];
			break;
		}
		case SM90P_PTR:
			a->ptrs[i] = dptr[p->arg];
			a->params[i] = &a->ptrs[i];
			break;
		default:
			a->u32s[i] = (uint32_t)ival[p->arg];
			a->params[i] = &a->u32s[i];
			break;
		}
	}
	sm90_grid(l, M, N, sm_count, a->grid);
	a->block[0] = l->threads, a->block[1] = a->block[2] = 1;
	a->smem = (uint32_t)l->smem_bytes;
	return 0;
}

int cuda_sm90_prepare(const Module *m, int k, const PtxKernelInfo *ki, const InterpArg *args, const uint64_t *pdptr,
                      Sm90Args *a, char *err, size_t errlen)
{
	const Sm90Launch *l = ki->sm90;
	const Kernel *kn = &m->kernels.data[k];
	err[0] = 0;
	if (!l || kn->nargs > SM90_MAX_PARAMS)
		return 0;
	int64_t dm[IR_MAX_RANK], dn[IR_MAX_RANK], dk[IR_MAX_RANK];
	if (interp_tensor_dims(m, k, args, l->m_arg, dm) < 0 || interp_tensor_dims(m, k, args, l->n_arg, dn) < 0 ||
	    interp_tensor_dims(m, k, args, l->k_arg, dk) < 0)
		return 0;
	int64_t M = dm[l->m_dim], N = dn[l->n_dim], K = dk[l->k_dim];
	if (sm90_check_shapes(l, M, N, K))
		return 0; /* e.g. K % 8 != 0: the generic entry handles it */
	/* Device addresses by Kernel.args index. */
	uint64_t dptr[SM90_MAX_PARAMS] = {0};
	int64_t ival[SM90_MAX_PARAMS] = {0};
	for (int i = 0; i < ki->nparams; i++)
		if (ki->params[i].kind == PK_TENSOR && ki->params[i].arg < SM90_MAX_PARAMS)
			dptr[ki->params[i].arg] = pdptr[i];
	for (int i = 0; i < kn->nargs; i++)
		ival[i] = args[i].ival;
	CudaTma t;
	int rc = cuda_tma_open(&t);
	int sms = rc ? -1 : cuda_tma_sm_count(&t, 0);
	if (sms < 1 || cuda_sm90_args(&t, l, dptr, ival, M, N, K, sms, a))
		rc = -1;
	if (rc)
		snprintf(err, errlen, "sm_90a GEMM path: %s", t.err);
	cuda_tma_close(&t);
	return rc ? -1 : 1;
}
