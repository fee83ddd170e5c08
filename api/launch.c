/* launch.c — ta_runner / ta_launch (tileasm.h): run a compiled binary on the
 * interpreter, the AMD emulator, a CUDA device or ROCr, for hosts such as
 * the Python package, and ta_binary_fast_launch.  Only packaging: the
 * interpreter, emulator and the two drivers are the runtime layer's; argument layout comes from the binary's
 * ta_kernel_info (the backend's own offsets), the grid from ta_binary_grid.
 *
 * Loaded code is kept per binary (retained), so repeated launches of one
 * kernel cost one argument block and one driver call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cuda.h"
#include "cuda_tma.h"
#include "dtype.h"
#include "emu.h"
#include "hsa.h"
#include "interp.h"

enum { R_INTERP, R_EMU, R_CUDA, R_HSA };
static const char *const runner_name[] = {"interp", "emu", "cuda", "hsa"};

typedef struct {
	ta_binary *bin;
	void *module;        /* CUDA module: the generic entries */
	void **fast_mod;     /* per kernel: the sm90 entry's own module, loaded at its first launch */
	CudaFunc **fn;       /* per kernel: generic entry, then the sm90 entry (2 per kernel) */
} Loaded;

struct ta_runner {
	int kind;
	CudaRt *cuda;
	RocrRt *rocr;
	EmuDevice *emu;
	ta_binary *emu_loaded;  /* the binary loaded in emu / rocr (one at a time) */
	VEC(Loaded) loaded;     /* cuda: every binary launched so far */
};

TA_API const char *ta_runner_backend(const ta_runner *r) { return r ? runner_name[r->kind] : NULL; }

TA_API ta_status ta_runner_open(ta_ctx *c, const char *backend, int device, ta_runner **out)
{
	if (!c || !backend || !out)
		return TA_ERR_INVALID;
	*out = NULL;
	int kind = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(backend, runner_name[i]))
			kind = i;
	if (kind < 0) {
		diag_error(&c->diag, "unknown backend '%s' (interp, emu, cuda, hsa)", backend);
		return TA_ERR_INVALID;
	}
	ta_runner *r = calloc(1, sizeof *r);
	if (!r)
		return TA_ERR_NOMEM;
	r->kind = kind;
	if (kind == R_CUDA && cuda_open(device, &r->cuda)) {
		diag_error(&c->diag, "cuda: %s", cuda_error(r->cuda));
		ta_runner_close(r);
		return TA_ERR_RUNTIME;
	}
	if (kind == R_HSA && rocr_open(NULL, &r->rocr, &c->diag)) {
		ta_runner_close(r);
		return TA_ERR_RUNTIME;
	}
	*out = r;
	return TA_OK;
}

TA_API void ta_runner_close(ta_runner *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->loaded.len; i++) {
		Loaded *l = &r->loaded.data[i];
		if (l->module)
			cuda_module_unload(r->cuda, l->module);
		for (int k = 0; l->fast_mod && k < l->bin->nkernels; k++)
			if (l->fast_mod[k])
				cuda_module_unload(r->cuda, l->fast_mod[k]);
		free(l->fast_mod);
		free(l->fn);
		ta_binary_release(l->bin);
	}
	vec_free(&r->loaded);
	ta_binary_release(r->emu_loaded);
	emu_destroy(r->emu);
	rocr_close(r->rocr);
	cuda_close(r->cuda);
	free(r);
}

/* ta_arg_bytes (tileasm.h): docs/embedding.md lists the same rules. */
TA_API void ta_arg_bytes(const ta_arg_info *a, const ta_value *v, uint8_t out[8])
{
	memset(out, 0, 8);
	DType t = (DType)a->dtype;
	if (a->kind == TA_ARG_TENSOR) {
		uint64_t p = (uint64_t)(uintptr_t)v->ptr;
		memcpy(out, &p, 8);
	} else if (a->kind == TA_ARG_SYMBOL || !dtype_is_float(t)) {
		int64_t x = a->kind == TA_ARG_SYMBOL ? (int32_t)v->i : t == DT_BOOL ? v->i != 0 : dt_wrap_int(t, v->i);
		if (a->size == 8) {
			memcpy(out, &x, 8);
		} else {
			int32_t y = (int32_t)x;
			memcpy(out, &y, 4);
		}
	} else if (a->size == 8) {
		memcpy(out, &v->f, 8);
	} else {
		float f = (float)dt_round_double(t, v->f);
		memcpy(out, &f, 4);
	}
}

static ta_status grid_of(ta_ctx *c, const ta_binary *b, int k, const ta_value *args, uint32_t grid[3])
{
	const ta_kernel_info *ki = &b->kernels[k];
	int64_t *vals = calloc((size_t)ki->nargs + 1, sizeof *vals);
	if (!vals)
		return TA_ERR_NOMEM;
	for (int i = 0; i < ki->nargs; i++)
		vals[i] = args[i].i;
	ta_status st = ta_binary_grid(b, k, vals, grid);
	free(vals);
	if (st != TA_OK)
		diag_error(&c->diag, "kernel '%s': cannot evaluate its grid for these arguments", ki->name);
	return st;
}

typedef struct {
	const Module *m;
	int k;
	const InterpArg *args;
	Diag *d;
	int bad;
} InterpJob;

static void interp_job(void *p)
{
	InterpJob *j = p;
	j->bad = interp_run(j->m, j->k, j->args, j->d);
}

/* The interpreter recurses over blocks and expressions: a stack sized for
 * the module (run_with_stack_for). */
static ta_status run_interp(ta_ctx *c, const ta_binary *b, int k, const ta_value *args)
{
	int n = b->kernels[k].nargs;
	InterpArg *ia = calloc((size_t)n + 1, sizeof *ia);
	if (!ia)
		return TA_ERR_NOMEM;
	for (int i = 0; i < n; i++)
		ia[i] = (InterpArg){args[i].ptr, args[i].bytes, args[i].i, args[i].f};
	InterpJob j = {b->m, k, ia, &c->diag, 0};
	ta_status st = run_with_stack_for(ir_nesting(b->m), interp_job, &j) ? ta_deep_failed(c)
	               : j.bad                                             ? TA_ERR_RUNTIME
	                                                                   : TA_OK;
	free(ia);
	return st;
}

/* The AMD kernarg block from the binary's argument table; tensors get
 * dptr[i]. */
static uint8_t *amd_kernarg(const ta_kernel_info *ki, const ta_value *args, const uint64_t *dptr)
{
	uint8_t *ka = calloc(1, (size_t)ki->kernarg_size + 16);
	for (int i = 0; ka && i < ki->nargs; i++) {
		const ta_arg_info *a = &ki->args[i];
		if (a->offset + a->size > ki->kernarg_size)
			continue;
		uint8_t bytes[8];
		if (a->kind == TA_ARG_TENSOR)
			memcpy(bytes, &dptr[i], 8);
		else
			ta_arg_bytes(a, &args[i], bytes);
		memcpy(ka + a->offset, bytes, a->size <= 8 ? a->size : 8);
	}
	return ka;
}

static int amd_binary(ta_ctx *c, const ta_binary *b, const char *backend)
{
	if (target_is_amd(b->target.id))
		return 1;
	diag_error(&c->diag, "backend '%s' runs AMD code objects; this binary is for %s (use interp, or cuda for NVIDIA)",
	           backend, b->target_name);
	return 0;
}

/* Loads b into the emulator or ROCr (unless it is the binary loaded last)
 * and computes the grid of kernel k. */
static ta_status amd_prepare(ta_ctx *c, ta_runner *r, ta_binary *b, int k, const ta_value *args, uint32_t grid[3])
{
	if (!amd_binary(c, b, runner_name[r->kind]))
		return TA_ERR_INVALID;
	if (r->emu_loaded != b) {
		ta_binary_release(r->emu_loaded);
		r->emu_loaded = NULL;
		if (r->kind == R_EMU) {
			emu_destroy(r->emu);
			if (!(r->emu = emu_create(b->target.id)))
				return TA_ERR_NOMEM;
			if (emu_load(r->emu, b->data, b->size, &c->diag))
				return TA_ERR_RUNTIME;
		} else if (rocr_load(r->rocr, b->data, b->size, &c->diag)) {
			return TA_ERR_RUNTIME;
		}
		ta_binary_retain(b);
		r->emu_loaded = b;
	}
	return grid_of(c, b, k, args, grid);
}

static ta_status run_emu(ta_ctx *c, ta_runner *r, ta_binary *b, int k, const ta_value *args)
{
	uint32_t grid[3];
	ta_status st = amd_prepare(c, r, b, k, args, grid);
	if (st != TA_OK)
		return st;
	const ta_kernel_info *ki = &b->kernels[k];
	uint32_t block[3] = {(uint32_t)ki->threads, 1, 1};
	uint64_t *dptr = calloc((size_t)ki->nargs + 1, sizeof *dptr);
	uint8_t *ka = NULL;
	st = TA_ERR_RUNTIME;
	if (!dptr)
		return TA_ERR_NOMEM;
	for (int i = 0; i < ki->nargs; i++) {
		if (ki->args[i].kind != TA_ARG_TENSOR)
			continue;
		if (!(dptr[i] = emu_alloc(r->emu, args[i].bytes ? args[i].bytes : 1))) {
			diag_error(&c->diag, "emu: cannot allocate %zu bytes for argument '%s'", args[i].bytes,
			           ki->args[i].name);
			goto out;
		}
		if (emu_write(r->emu, dptr[i], args[i].ptr, args[i].bytes, &c->diag))
			goto out;
	}
	if (!(ka = amd_kernarg(ki, args, dptr))) {
		st = TA_ERR_NOMEM;
		goto out;
	}
	if (grid[0] && grid[1] && grid[2] &&
	    emu_launch(r->emu, ki->name, grid, block, ka, ki->kernarg_size, 0, &c->diag))
		goto out;
	/* Every tensor comes back: what the kernel did not write is unchanged. */
	for (int i = 0; i < ki->nargs; i++)
		if (ki->args[i].kind == TA_ARG_TENSOR && emu_read(r->emu, dptr[i], args[i].ptr, args[i].bytes, &c->diag))
			goto out;
	st = TA_OK;
out:
	for (int i = 0; i < ki->nargs; i++)
		if (dptr[i])
			emu_free(r->emu, dptr[i]);
	free(dptr);
	free(ka);
	return st;
}

static ta_status run_hsa(ta_ctx *c, ta_runner *r, ta_binary *b, int k, const ta_value *args)
{
	uint32_t grid[3];
	ta_status st = amd_prepare(c, r, b, k, args, grid);
	if (st != TA_OK)
		return st;
	const ta_kernel_info *ki = &b->kernels[k];
	uint32_t block[3] = {(uint32_t)ki->threads, 1, 1};
	uint64_t *dptr = calloc((size_t)ki->nargs + 1, sizeof *dptr);
	for (int i = 0; dptr && i < ki->nargs; i++)
		dptr[i] = (uint64_t)(uintptr_t)args[i].ptr;
	uint8_t *ka = dptr ? amd_kernarg(ki, args, dptr) : NULL;
	free(dptr);
	if (!ka)
		return TA_ERR_NOMEM;
	st = TA_OK;
	if (grid[0] && grid[1] && grid[2] &&
	    rocr_launch(r->rocr, ki->name, grid, block, ka, ki->kernarg_size, 0, &c->diag))
		st = TA_ERR_RUNTIME;
	free(ka);
	return st;
}

/* The sm_90a fast entry's launch of kernel k (ta_binary_fast_launch, and
 * run_cuda below): dptrs[i] the device address of tensor argument i,
 * vals[i] the argument values (ta_binary_grid), params the generic entry's
 * kernelParams, grid the IR grid.  Returns 1 with *a filled; 0 when the
 * entry cannot run these sizes (launch the generic entry); -1 when the
 * driver failed; -2 when the tensor extents cannot be evaluated (why says
 * which, each time but 1). */
static int fast_args(const ta_binary *b, int k, const uint64_t *dptrs, const int64_t *vals, void *const *params,
                     const uint32_t grid[3], Sm90Args *a, char *why, size_t n)
{
	const Sm90Launch *l = b->ptx_info ? b->ptx_info[k].sm90 : NULL;
	if (!l) {
		snprintf(why, n, "kernel '%s' has no sm_90a fast entry", b->kernels[k].name);
		return 0;
	}
	const Kernel *kn = &b->m->kernels.data[k];
	Sm90Dims td;
	for (int i = 0; i < l->ntmaps && i < 2; i++) {
		const Buffer *buf = &b->m->bufs.data[kn->args[l->tmaps[i].arg].buf];
		for (int j = 0; j < l->tmaps[i].rank; j++)
			if (ir_eval_i64(b->m, k, buf->shape[j], vals, &td.d[i][j])) {
				snprintf(why, n, "kernel '%s': cannot evaluate the extents of argument %d", kn->name,
					 l->tmaps[i].arg);
				return -2;
			}
	}
	for (int i = 0; i < l->ntmaps; i++)
		if (dptrs[l->tmaps[i].arg] % 16) {
			snprintf(why, n, "the fast entry needs 16-byte aligned tensors (argument %d)", l->tmaps[i].arg);
			return 0;
		}
	const char *bad = sm90_check_shapes(l, &td); /* e.g. K % 8 != 0: the generic entry handles it */
	if (bad) {
		snprintf(why, n, "%s", bad);
		return 0;
	}
	if (l->ngeneric > SM90_MAX_GENERIC) {
		snprintf(why, n, "the fast entry takes at most %d arguments", SM90_MAX_GENERIC);
		return 0;
	}
	CudaTma t;
	int sms = cuda_tma_open(&t) ? -1 : cuda_tma_sm_count(&t, 0);
	int rc = sms < 1 || cuda_sm90_args(&t, l, params, grid, dptrs, &td, sms, a) ? -1 : 1;
	if (rc < 0)
		snprintf(why, n, "sm_90a fast entry: %s", t.err);
	cuda_tma_close(&t);
	return rc;
}

TA_API ta_status ta_binary_fast_launch(ta_ctx *ctx, const ta_binary *b, int kernel, const uint64_t *dptrs,
                                       const int64_t *arg_values, void *const *params, ta_fast_launch *out)
{
	if (!ctx || !b || kernel < 0 || kernel >= b->nkernels || !dptrs || !arg_values || !params || !out)
		return TA_ERR_INVALID;
	uint32_t grid[3] = {0};
	ta_status st = b->ptx_info && b->ptx_info[kernel].sm90 ? ta_binary_grid(b, kernel, arg_values, grid) : TA_OK;
	if (st != TA_OK)
		return st;
	Sm90Args a;
	char why[300];
	int rc = fast_args(b, kernel, dptrs, arg_values, params, grid, &a, why, sizeof why);
	if (rc < 1) {
		diag_error(&ctx->diag, "%s", why);
		return rc == 0 ? TA_ERR_UNSUPPORTED : rc == -1 ? TA_ERR_RUNTIME : TA_ERR_INVALID;
	}
	const Sm90Launch *l = b->ptx_info[kernel].sm90;
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

static Loaded *cuda_loaded(ta_ctx *c, ta_runner *r, ta_binary *b)
{
	for (size_t i = 0; i < r->loaded.len; i++)
		if (r->loaded.data[i].bin == b)
			return &r->loaded.data[i];
	Loaded l = {b, NULL, calloc((size_t)b->nkernels + 1, sizeof(void *)),
		    calloc((size_t)b->nkernels * 2 + 1, sizeof(CudaFunc *))};
	float ms = 0;
	if (!l.fn || !l.fast_mod || cuda_module_load(r->cuda, (const char *)b->data, &l.module, NULL, &ms)) {
		diag_error(&c->diag, "cuda: %s", l.fn && l.fast_mod ? cuda_error(r->cuda) : "out of memory");
		free(l.fn);
		free(l.fast_mod);
		return NULL;
	}
	for (int k = 0; k < b->nkernels; k++) {
		const PtxKernelInfo *pk = &b->ptx_info[k];
		if (cuda_function(r->cuda, l.module, pk->name, &l.fn[2 * k]) ||
		    (pk->smem_bytes > 48 * 1024 && cuda_func_set_smem(r->cuda, l.fn[2 * k], pk->smem_bytes))) {
			diag_error(&c->diag, "cuda: %s", cuda_error(r->cuda));
			cuda_module_unload(r->cuda, l.module);
			free(l.fn);
			free(l.fast_mod);
			return NULL;
		}
	}
	if (vec_push(&r->loaded, l)) {
		cuda_module_unload(r->cuda, l.module);
		free(l.fn);
		free(l.fast_mod);
		return NULL;
	}
	ta_binary_retain(b);
	return &r->loaded.data[r->loaded.len - 1];
}

static ta_status run_cuda(ta_ctx *c, ta_runner *r, ta_binary *b, int k, const ta_value *args, void *stream)
{
	if (!b->ptx_info) {
		diag_error(&c->diag, "backend 'cuda' runs PTX; this binary is for %s (use emu, hsa or interp)",
		           b->target_name);
		return TA_ERR_INVALID;
	}
	if (cuda_make_current(r->cuda)) {
		diag_error(&c->diag, "cuda: %s", cuda_error(r->cuda));
		return TA_ERR_RUNTIME;
	}
	Loaded *l = cuda_loaded(c, r, b);
	if (!l)
		return TA_ERR_RUNTIME;
	const ta_kernel_info *ki = &b->kernels[k];
	const PtxKernelInfo *pk = &b->ptx_info[k];
	uint32_t grid[3], block[3] = {(uint32_t)pk->threads, 1, 1};
	ta_status st = grid_of(c, b, k, args, grid);
	if (st != TA_OK)
		return st;
	int np = pk->nparams, na = ki->nargs;
	uint64_t *vals = calloc((size_t)np + 1, sizeof *vals), *dptrs = calloc((size_t)na + 1, sizeof *dptrs);
	int64_t *avals = calloc((size_t)na + 1, sizeof *avals);
	void **params = calloc((size_t)np + 1, sizeof *params);
	st = TA_ERR_NOMEM;
	if (!vals || !dptrs || !avals || !params)
		goto out;
	for (int i = 0; i < np; i++) {
		int a = pk->params[i].arg;
		if (ki->args[a].kind == TA_ARG_TENSOR)
			vals[i] = (uint64_t)(uintptr_t)args[a].ptr;
		else
			ta_arg_bytes(&ki->args[a], &args[a], (uint8_t *)&vals[i]);
		params[i] = &vals[i];
	}
	for (int i = 0; i < na; i++) {
		avals[i] = args[i].i;
		dptrs[i] = ki->args[i].kind == TA_ARG_TENSOR ? (uint64_t)(uintptr_t)args[i].ptr : 0;
	}
	CudaFunc *fn = l->fn[2 * k];
	uint32_t smem = (uint32_t)pk->smem_bytes;
	void **lp = params;
	/* The sm_90a GEMM entry (TMA + wgmma) when these sizes allow it. */
	Sm90Args s9;
	char err[300];
	int use9 = pk->sm90 && pk->sm90_ptx ? fast_args(b, k, dptrs, avals, params, grid, &s9, err, sizeof err) : 0;
	st = TA_ERR_RUNTIME;
	if (use9 == -1) {
		diag_error(&c->diag, "cuda: %s", err);
		goto out;
	}
	if (use9 > 0 && !l->fast_mod[k]) {
		float ms = 0;
		if (cuda_module_load(r->cuda, pk->sm90_ptx, &l->fast_mod[k], NULL, &ms) ||
		    cuda_function(r->cuda, l->fast_mod[k], pk->sm90->entry, &l->fn[2 * k + 1]) ||
		    cuda_func_set_smem(r->cuda, l->fn[2 * k + 1], pk->sm90->smem_bytes)) {
			diag_error(&c->diag, "cuda: %s", cuda_error(r->cuda));
			if (l->fast_mod[k])
				cuda_module_unload(r->cuda, l->fast_mod[k]);
			l->fast_mod[k] = NULL;
			goto out;
		}
	}
	if (use9 > 0) {
		fn = l->fn[2 * k + 1];
		memcpy(grid, s9.grid, sizeof grid);
		memcpy(block, s9.block, sizeof block);
		smem = s9.smem;
		lp = s9.params;
	}
	if (cuda_launch_on(r->cuda, fn, grid, block, smem, lp, stream)) {
		diag_error(&c->diag, "cuda: %s", cuda_error(r->cuda));
		goto out;
	}
	st = TA_OK;
out:
	free(vals);
	free(dptrs);
	free(avals);
	free(params);
	return st;
}

TA_API ta_status ta_launch(ta_ctx *c, ta_runner *r, ta_binary *b, int k, const ta_value *args, void *stream)
{
	if (!c || !r || !b || k < 0 || k >= b->nkernels || (!args && b->kernels[k].nargs))
		return TA_ERR_INVALID;
	const ta_kernel_info *ki = &b->kernels[k];
	for (int i = 0; i < ki->nargs; i++)
		if (ki->args[i].kind == TA_ARG_TENSOR && !args[i].ptr) {
			diag_error(&c->diag, "kernel '%s': tensor argument '%s' is NULL", ki->name, ki->args[i].name);
			return TA_ERR_INVALID;
		}
	switch (r->kind) {
	case R_INTERP: return run_interp(c, b, k, args);
	case R_EMU: return run_emu(c, r, b, k, args);
	case R_HSA: return run_hsa(c, r, b, k, args);
	default: return run_cuda(c, r, b, k, args, stream);
	}
}

TA_API ta_status ta_runner_sync(ta_ctx *c, ta_runner *r)
{
	if (!c || !r)
		return TA_ERR_INVALID;
	if (r->kind == R_CUDA && cuda_sync(r->cuda)) {
		diag_error(&c->diag, "cuda: %s", cuda_error(r->cuda));
		return TA_ERR_RUNTIME;
	}
	return TA_OK;
}
