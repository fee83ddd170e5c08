/* run_cuda.c — `tileasm run --backend=cuda`: compile the kernel to PTX for
 * --target (ta_compile), JIT it through the driver, launch it once on the
 * prepared arguments and copy the written tensors back (cmd_run.c compares
 * them with the interpreter).  Compiling, argument bytes, the grid and the
 * sm_90a entry's launch go through tileasm.h; the driver calls (memory,
 * JIT, launch, event timing) through runtime/cuda.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cuda.h"
#include "run.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int run_backend_cuda(RunCase *rc)
{
	int ret = 1;
	ta_binary *bin = NULL;
	StrBuf log = {0};
	CudaRt *rt = NULL;
	void *mod = NULL;
	double t0 = now_ms();
	ta_compile_options opts = {.nvidia_off = cli_nvidia_off()};
	ta_status st = ta_compile_with(rc->ctx, rc->tm, rc->target_spec, &opts, &bin);
	double t_compile = now_ms() - t0;
	fputs(ta_ctx_diagnostics(rc->ctx), stderr);
	ta_ctx_clear_diagnostics(rc->ctx);
	const ta_kernel_info *ki = st == TA_OK ? ta_binary_kernel(bin, rc->kernel) : NULL;
	int na = ki ? ki->nargs : 0;
	uint64_t *dptr = calloc((size_t)na + 1, sizeof *dptr), *pv = calloc((size_t)na + 1, sizeof *pv);
	void **params = calloc((size_t)na + 1, sizeof *params);
	int64_t *vals = calloc((size_t)na + 1, sizeof *vals);
	if (!ki) {
		fprintf(stderr, "tileasm: error: PTX generation failed\n");
		goto out;
	}
	if (!dptr || !pv || !params || !vals) {
		fprintf(stderr, "tileasm: error: out of memory\n");
		goto out;
	}
	size_t ptx_len = 0;
	const char *ptx = ta_binary_data(bin, &ptx_len); /* NUL-terminated */
	const ta_fast_entry *fe = ki->fast;
	if (cuda_open(0, &rt)) {
		fprintf(stderr, "tileasm: error: %s\n", cuda_error(rt));
		ret = 2;
		goto out;
	}
	/* kernelParams: one per argument, in Tile IR order (ta_kernel_info.args) */
	for (int i = 0; i < na; i++) {
		const ta_arg_info *p = &ki->args[i];
		InterpArg *a = &rc->args[i];
		vals[i] = a->ival;
		if (p->kind == TA_ARG_TENSOR &&
		    (cuda_malloc(rt, &dptr[i], a->bytes) || cuda_memcpy_htod(rt, dptr[i], a->data, a->bytes)))
			goto cuerr;
		ta_value v = {(void *)(uintptr_t)dptr[i], a->bytes, a->ival, a->fval};
		ta_arg_bytes(p, &v, (uint8_t *)&pv[i]);
		params[i] = &pv[i];
	}
	uint32_t grid[3], block[3] = {(uint32_t)ki->threads, 1, 1};
	if (ta_binary_grid(bin, rc->kernel, vals, grid) != TA_OK) {
		fprintf(stderr, "tileasm: error: cannot evaluate the grid of kernel '%s'\n", ki->name);
		goto out;
	}
	/* sm_90a GEMM path (ta_kernel_info.fast): launch the TMA/wgmma entry
	 * when the sizes allow it (ta_binary_fast_launch; TA_ERR_UNSUPPORTED:
	 * the generic entry runs them).  Only the module of the entry that runs
	 * is JIT-compiled. */
	uint32_t smem = (uint32_t)ki->shared_bytes;
	void **lp = params;
	ta_fast_launch fl;
	int use9 = 0;
	if (fe) {
		st = ta_binary_fast_launch(rc->ctx, bin, rc->kernel, dptr, vals, params, &fl);
		if (st != TA_OK && st != TA_ERR_UNSUPPORTED) {
			fputs(ta_ctx_diagnostics(rc->ctx), stderr);
			ta_ctx_clear_diagnostics(rc->ctx);
			fprintf(stderr, "tileasm: error: cannot launch the sm_90a entry %s\n", fe->name);
			goto out;
		}
		ta_ctx_clear_diagnostics(rc->ctx);
		use9 = st == TA_OK;
	}
	float jit_ms = 0;
	t0 = now_ms();
	if (cuda_module_load(rt, use9 ? fe->ptx : ptx, &mod, &log, &jit_ms)) {
		fprintf(stderr, "tileasm: error: %s\n", cuda_error(rt));
		goto out;
	}
	double t_load = now_ms() - t0;
	CudaFunc *fn;
	if (use9) {
		if (cuda_function(rt, mod, fe->name, &fn) || cuda_func_set_smem(rt, fn, fe->shared_bytes))
			goto cuerr;
		memcpy(grid, fl.grid, sizeof grid), memcpy(block, fl.block, sizeof block);
		smem = fl.shared_bytes, lp = fl.params;
		printf("  sm90: entry %s, persistent grid %u, block %u, %u bytes shared (TMA + wgmma)\n",
		       fe->name, grid[0], block[0], smem);
	} else if (cuda_function(rt, mod, ki->name, &fn) ||
		   (ki->shared_bytes > 48 * 1024 && cuda_func_set_smem(rt, fn, ki->shared_bytes))) {
		goto cuerr;
	}
	size_t fast_len = fe ? fe->ptx_size : 0;
	printf("  cuda: %s (sm_%d), target %s: PTX %zu bytes in %.2f ms; JIT of the %s entry's module (%zu bytes) "
	       "%.1f ms (load %.1f ms)\n",
	       cuda_device_name(rt), cuda_device_cc(rt), target_name(rc->target.id), ptx_len + fast_len, t_compile,
	       use9 ? "sm90" : "generic", use9 ? fast_len : ptx_len, jit_ms, t_load);
	if (log.len) /* ptxas info/warnings from the driver JIT */
		printf("  jit log: %s\n", log.buf);
	printf("  launch: grid (%u, %u, %u), block %u, %lld bytes shared\n", grid[0], grid[1], grid[2], block[0],
	       (long long)ki->shared_bytes);
	if ((grid[0] && cuda_launch(rt, fn, grid, block, smem, lp, NULL)) || cuda_sync(rt)) /* sm90: smem, lp */
		goto cuerr;
	for (int i = 0; i < na; i++)
		if (ki->args[i].kind == TA_ARG_TENSOR && rc->written[i] &&
		    cuda_memcpy_dtoh(rt, rc->args[i].data, dptr[i], rc->args[i].bytes))
			goto cuerr;
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
	for (int i = 0; dptr && rt && i < na; i++)
		cuda_free(rt, dptr[i]);
	if (rt && mod)
		cuda_module_unload(rt, mod);
	cuda_close(rt);
	ta_binary_release(bin);
	sb_free(&log);
	free(dptr);
	free(pv);
	free(params);
	free(vals);
	return ret;
}
