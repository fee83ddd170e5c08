/* run_cuda.c — `tileasm run --backend=cuda`: compile the kernel to PTX for
 * --target, JIT it through the driver, launch it once on the prepared
 * arguments and copy the written tensors back (cmd_run.c compares them
 * with the interpreter). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda.h"
#include "cuda_tma.h" /* sm_90a GEMM path */
#include "dtype.h"
#include "ptx.h"
#include "run.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Host value of a scalar/symbol parameter as the PTX entry declares it. */
typedef union {
	uint64_t u64;
	int64_t i64;
	int32_t i32;
	float f32;
	double f64;
} ParamVal;

static ParamVal scalar_value(const SimtParam *p, const InterpArg *a)
{
	ParamVal v;
	memset(&v, 0, sizeof v);
	DType t = (DType)p->dtype;
	if (p->kind == PK_SYMBOL)
		v.i32 = (int32_t)a->ival;
	else if (t == DT_BOOL)
		v.i32 = a->ival != 0;
	else if (p->vt == VT_I32)
		v.i32 = (int32_t)dt_wrap_int(t, a->ival);
	else if (p->vt == VT_I64)
		v.i64 = a->ival;
	else if (p->vt == VT_F32)
		v.f32 = (float)dt_round_double(t, a->fval);
	else
		v.f64 = a->fval;
	return v;
}

int run_backend_cuda(RunCase *rc)
{
	const Module *m = rc->m;
	const Kernel *k = &m->kernels.data[rc->kernel];
	int nk = (int)m->kernels.len, ret = 1;
	Diag d;
	diag_init(&d);
	StrBuf ptx = {0}, log = {0};
	PtxKernelInfo *info = NULL;
	CudaRt *rt = NULL;
	void *mod = NULL;
	uint64_t *dptr = calloc((size_t)k->nargs + 1, sizeof *dptr);
	ParamVal *pv = calloc((size_t)k->nargs + 1, sizeof *pv);
	void **params = calloc((size_t)k->nargs + 1, sizeof *params);
	int64_t *vals = calloc((size_t)k->nargs + 1, sizeof *vals);
	if (!dptr || !pv || !params || !vals) {
		fprintf(stderr, "tileasm: error: out of memory\n");
		goto out;
	}
	double t0 = now_ms();
	if (ptx_compile_split(m, &rc->target, &ptx, &info, &d) || ptx.oom) {
		fputs(diag_text(&d), stderr);
		fprintf(stderr, "tileasm: error: PTX generation failed\n");
		goto out;
	}
	double t_compile = now_ms() - t0;
	const PtxKernelInfo *ki = &info[rc->kernel];
	if (cuda_open(0, &rt)) {
		fprintf(stderr, "tileasm: error: %s\n", cuda_error(rt));
		ret = 2;
		goto out;
	}
	for (int i = 0; i < k->nargs; i++)
		vals[i] = rc->args[i].ival;
	for (int i = 0; i < ki->nparams; i++) {
		const SimtParam *p = &ki->params[i];
		InterpArg *a = &rc->args[p->arg];
		if (p->kind == PK_TENSOR) {
			if (cuda_malloc(rt, &dptr[i], a->bytes) || cuda_memcpy_htod(rt, dptr[i], a->data, a->bytes))
				goto cuerr;
			pv[i].u64 = dptr[i];
		} else {
			pv[i] = scalar_value(p, a);
		}
		params[i] = &pv[i];
	}
	uint32_t grid[3], block[3] = {(uint32_t)ki->threads, 1, 1};
	if (ir_grid(m, rc->kernel, vals, grid)) {
		fprintf(stderr, "tileasm: error: cannot evaluate the grid of kernel '%s'\n", k->name);
		goto out;
	}
	/* sm_90a GEMM path (ptx_sm90.h, runtime/cuda_tma.h): launch the TMA/wgmma
	 * entry when the sizes allow it.  Only the module of the entry that runs
	 * is JIT-compiled (ptx_compile_split). */
	uint32_t smem = (uint32_t)ki->smem_bytes;
	void **lp = params;
	Sm90Args s9;
	char err9[300];
	int use9 = cuda_sm90_prepare(m, rc->kernel, ki, rc->args, dptr, params, grid, &s9, err9, sizeof err9);
	if (use9 < 0) {
		fprintf(stderr, "tileasm: error: %s\n", err9);
		goto out;
	}
	float jit_ms = 0;
	t0 = now_ms();
	if (cuda_module_load(rt, use9 > 0 ? ki->sm90_ptx : ptx.buf, &mod, &log, &jit_ms)) {
		fprintf(stderr, "tileasm: error: %s\n", cuda_error(rt));
		goto out;
	}
	double t_load = now_ms() - t0;
	CudaFunc *fn;
	if (use9 > 0) {
		if (cuda_function(rt, mod, ki->sm90->entry, &fn) || cuda_func_set_smem(rt, fn, ki->sm90->smem_bytes))
			goto cuerr;
		memcpy(grid, s9.grid, sizeof grid), memcpy(block, s9.block, sizeof block);
		smem = s9.smem, lp = s9.params;
		printf("  sm90: entry %s, persistent grid %u, block %u, %u bytes shared (TMA + wgmma)\n",
		       ki->sm90->entry, grid[0], block[0], smem);
	} else if (cuda_function(rt, mod, ki->name, &fn) ||
		   (ki->smem_bytes > 48 * 1024 && cuda_func_set_smem(rt, fn, ki->smem_bytes))) {
		goto cuerr;
	}
	printf("  cuda: %s (sm_%d), target %s: PTX %zu bytes in %.2f ms; JIT of the %s entry's module (%zu bytes) "
	       "%.1f ms (load %.1f ms)\n",
	       cuda_device_name(rt), cuda_device_cc(rt), target_name(rc->target.id), ptx.len + ki->sm90_ptx_len,
	       t_compile, use9 > 0 ? "sm90" : "generic", use9 > 0 ? ki->sm90_ptx_len : ptx.len, jit_ms, t_load);
	if (log.len) /* ptxas info/warnings from the driver JIT */
		printf("  jit log: %s\n", log.buf);
	printf("  launch: grid (%u, %u, %u), block %u, %lld bytes shared, %d mma gemm%s\n", grid[0], grid[1], grid[2],
	       block[0], (long long)ki->smem_bytes, ki->nmma, ki->nmma == 1 ? "" : "s");
	if ((grid[0] && cuda_launch(rt, fn, grid, block, smem, lp, NULL)) || cuda_sync(rt)) /* sm90: smem, lp */
		goto cuerr;
	for (int i = 0; i < ki->nparams; i++) {
		const SimtParam *p = &ki->params[i];
		if (p->kind == PK_TENSOR && rc->written[p->arg] &&
		    cuda_memcpy_dtoh(rt, rc->args[p->arg].data, dptr[i], rc->args[p->arg].bytes))
			goto cuerr;
	}
	if (rc->bench) {
		/* outputs are already copied back; repeated runs only time the kernel:
		 * a warm-up, then the median of 25 single launches (CUDA events) */
		enum { NB = 25 };
		float ms[NB], warm;
		for (int i = 0; grid[0] && i < NB; i++)
			if ((i == 0 && cuda_time_launches(rt, fn, grid, block, smem, lp, 3, &warm)) ||
			    cuda_time_launches(rt, fn, grid, block, smem, lp, 1, &ms[i])) /* sm90: smem, lp */
				goto cuerr;
		for (int i = 1; grid[0] && i < NB; i++) /* insertion sort */
			for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
				float t = ms[j];
				ms[j] = ms[j - 1], ms[j - 1] = t;
			}
		printf("  bench: %.4f ms per launch (median of %d)\n", grid[0] ? ms[NB / 2] : 0.0f, NB);
	}
	ret = 0;
	goto out;
cuerr:
	fprintf(stderr, "tileasm: error: %s\n", cuda_error(rt));
out:
	for (int i = 0; dptr && rt && i < k->nargs; i++)
		cuda_free(rt, dptr[i]);
	if (rt && mod)
		cuda_module_unload(rt, mod);
	cuda_close(rt);
	ptx_info_free(info, nk);
	sb_free(&ptx);
	sb_free(&log);
	diag_free(&d);
	free(dptr);
	free(pv);
	free(params);
	free(vals);
	return ret;
}
