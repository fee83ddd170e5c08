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

int cuda_sm90_prepare(const Module *m, int k, const PtxKernelInfo *ki, const InterpArg *args, const uint64_t *pdptr,
                      void *const *gparams, const uint32_t irgrid[3], Sm90Args *a, char *err, size_t errlen)
{
	const Sm90Launch *l = ki->sm90;
	const Kernel *kn = &m->kernels.data[k];
	err[0] = 0;
	if (!l || kn->nargs > SM90_MAX_GENERIC || ki->nparams != l->ngeneric)
		return 0;
	Sm90Dims td;
	for (int i = 0; i < l->ntmaps && i < 2; i++) {
		int64_t d[IR_MAX_RANK];
		if (interp_tensor_dims(m, k, args, l->tmaps[i].arg, d) < 0)
			return 0;
		for (int j = 0; j < l->tmaps[i].rank; j++)
			td.d[i][j] = d[j];
	}
	if (sm90_check_shapes(l, &td))
		return 0; /* e.g. K % 8 != 0: the generic entry handles it */
	/* Device addresses by Kernel.args index. */
	uint64_t dptr[SM90_MAX_GENERIC] = {0};
	for (int i = 0; i < ki->nparams; i++)
		if (ki->params[i].kind == PK_TENSOR && ki->params[i].arg < SM90_MAX_GENERIC)
			dptr[ki->params[i].arg] = pdptr[i];
	CudaTma t;
	int rc = cuda_tma_open(&t);
	int sms = rc ? -1 : cuda_tma_sm_count(&t, 0);
	if (sms < 1 || cuda_sm90_args(&t, l, gparams, irgrid, dptr, &td, sms, a))
		rc = -1;
	if (rc)
		snprintf(err, errlen, "sm_90a GEMM path: %s", t.err);
	cuda_tma_close(&t);
	return rc ? -1 : 1;
}

/* ---- public API: ta_binary_fast_launch (tileasm.h) ---------------------- */

#include "api.h"

TA_API ta_status ta_binary_fast_launch(ta_ctx *ctx, const ta_binary *b, int kernel, const uint64_t *dptrs,
                                       const int64_t *arg_values, void *const *params, ta_fast_launch *out)
{
	if (!ctx || !b || kernel < 0 || kernel >= b->nkernels || !dptrs || !arg_values || !params || !out)
		return TA_ERR_INVALID;
	const Sm90Launch *l = b->ptx_info ? b->ptx_info[kernel].sm90 : NULL;
	if (!l) {
		diag_error(&ctx->diag, "kernel '%s' has no sm_90a fast entry", b->kernels[kernel].name);
		return TA_ERR_UNSUPPORTED;
	}
	const Kernel *kn = &b->m->kernels.data[kernel];
	Sm90Dims td;
	for (int i = 0; i < l->ntmaps && i < 2; i++) {
		const Buffer *buf = &b->m->bufs.data[kn->args[l->tmaps[i].arg].buf];
		for (int j = 0; j < l->tmaps[i].rank; j++)
			if (ir_eval_i64(b->m, kernel, buf->shape[j], arg_values, &td.d[i][j]))
				return TA_ERR_INVALID;
	}
	for (int i = 0; i < l->ntmaps; i++)
		if (dptrs[l->tmaps[i].arg] % 16) {
			diag_error(&ctx->diag, "the fast entry needs 16-byte aligned tensors (argument %d)", l->tmaps[i].arg);
			return TA_ERR_UNSUPPORTED;
		}
	const char *why = sm90_check_shapes(l, &td);
	if (why) {
		diag_error(&ctx->diag, "%s", why);
		return TA_ERR_UNSUPPORTED;
	}
	uint32_t grid[3];
	ta_status st = ta_binary_grid(b, kernel, arg_values, grid);
	if (st != TA_OK)
		return st;
	if (l->ngeneric > (int)TA_ARRAY_LEN(out->params) - 5) {
		diag_error(&ctx->diag, "the fast entry takes at most 63 arguments");
		return TA_ERR_UNSUPPORTED;
	}
	CudaTma t;
	Sm90Args a;
	int sms = cuda_tma_open(&t) ? -1 : cuda_tma_sm_count(&t, 0);
	if (sms < 1 || cuda_sm90_args(&t, l, params, grid, dptrs, &td, sms, &a)) {
		diag_error(&ctx->diag, "sm_90a fast entry: %s", t.err);
		cuda_tma_close(&t);
		return TA_ERR_RUNTIME;
	}
	cuda_tma_close(&t);
	memset(out, 0, sizeof *out);
	memcpy(out->maps, a.maps, sizeof out->maps);
	memcpy(out->ir_grid, a.ir, sizeof out->ir_grid);
	for (int i = 0; i < l->ngeneric; i++)
		out->params[i] = params[i];
	for (int i = 0; i < l->ntmaps; i++)
		out->params[l->ngeneric + i] = out->maps[i];
	for (int i = 0; i < 3; i++)
		out->params[l->ngeneric + l->ntmaps + i] = &out->ir_grid[i];
	memcpy(out->grid, a.grid, sizeof out->grid);
	memcpy(out->block, a.block, sizeof out->block);
	out->shared_bytes = a.smem;
	return TA_OK;
}
