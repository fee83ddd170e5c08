/* host.c — a JIT host embedding libtileasm.
 *
 * Compiles examples/vector_add.tile through the public API (tileasm.h) for
 * the GPU it finds, and launches it through tileasm's runtimes: the CUDA
 * driver when there is an NVIDIA GPU, ROCr when there is an AMD GPU, and the
 * AMD emulator otherwise.  Checks the result against a plain loop.
 *
 *   build/examples/host [N]          (run from the source root)
 *   build/examples/host gemm [M N K] examples/gemm_bias_relu.tile instead: on an
 *                                    sm_90a GPU through its TMA + wgmma entry
 *                                    (ta_kernel_info.fast, ta_binary_fast_launch),
 *                                    JIT-compiling only that entry's module
 *
 * Launching uses tileasm's internal runtime headers (runtime/), so this
 * program links the static library; a host with its own launcher needs only
 * tileasm.h: the binary's bytes, ta_kernel_info and ta_binary_grid.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "dtype.h"
#include "emu.h"
#include "hsa.h"
#include "tileasm.h"
#include "util.h"

/* One device, whichever was found. */
typedef struct {
	const char *kind; /* "cuda", "rocr", "emu" */
	char target[32];
	CudaRt *cuda;
	RocrRt *rocr;
	EmuDevice *emu;
	Diag diag;
} Dev;

static int dev_open(Dev *d)
{
	diag_init(&d->diag);
	if (cuda_open(0, &d->cuda) == 0) {
		d->kind = "cuda";
		snprintf(d->target, sizeof d->target, "%s", cuda_device_cc(d->cuda) >= 90 ? "sm_90a" : "sm_80");
		return 0;
	}
	cuda_close(d->cuda);
	d->cuda = NULL;
	if (rocr_open(NULL, &d->rocr, &d->diag) == 0) {
		d->kind = "rocr";
		snprintf(d->target, sizeof d->target, "%s", rocr_agent_name(d->rocr));
		return 0;
	}
	rocr_close(d->rocr);
	d->rocr = NULL;
	diag_free(&d->diag); /* why ROCr was not usable is not an error here */
	diag_init(&d->diag);
	d->kind = "emu";
	snprintf(d->target, sizeof d->target, "gfx942");
	d->emu = emu_create(TA_TARGET_GFX942);
	return d->emu ? 0 : -1;
}

static void dev_close(Dev *d)
{
	cuda_close(d->cuda);
	rocr_close(d->rocr);
	emu_destroy(d->emu);
	diag_free(&d->diag);
}

static uint64_t dev_alloc(Dev *d, size_t n)
{
	uint64_t p = 0;
	if (d->cuda)
		return cuda_malloc(d->cuda, &p, n) ? 0 : p;
	if (d->rocr)
		return rocr_alloc(d->rocr, n, &d->diag);
	return emu_alloc(d->emu, n);
}

static int dev_copy_to(Dev *d, uint64_t dst, const void *src, size_t n)
{
	if (d->cuda)
		return cuda_memcpy_htod(d->cuda, dst, src, n);
	if (d->rocr)
		return rocr_copy_to(d->rocr, dst, src, n, &d->diag);
	return emu_write(d->emu, dst, src, n, &d->diag);
}

static int dev_copy_from(Dev *d, void *dst, uint64_t src, size_t n)
{
	if (d->cuda)
		return cuda_memcpy_dtoh(d->cuda, dst, src, n);
	if (d->rocr)
		return rocr_copy_from(d->rocr, dst, src, n, &d->diag);
	return emu_read(d->emu, src, dst, n, &d->diag);
}

/* Loads the binary and launches kernel 0 with the argument block `ka`. */
static int dev_launch(Dev *d, const ta_binary *bin, const uint32_t grid[3], uint8_t *ka)
{
	const ta_kernel_info *k = ta_binary_kernel(bin, 0);
	uint32_t block[3] = {(uint32_t)k->threads, 1, 1};
	size_t size;
	const void *code = ta_binary_data(bin, &size);
	if (d->cuda) {
		void *mod = NULL;
		CudaFunc *fn = NULL;
		float ms;
		if (cuda_module_load(d->cuda, code, &mod, NULL, &ms) || cuda_function(d->cuda, mod, k->name, &fn) ||
		    cuda_func_set_smem(d->cuda, fn, k->shared_bytes))
			return -1;
		void *params[32];
		for (int i = 0; i < k->nargs && i < 32; i++)
			params[i] = ka + k->args[i].offset;
		int rc = cuda_launch(d->cuda, fn, grid, block, (uint32_t)k->shared_bytes, params, NULL) ||
		         cuda_sync(d->cuda);
		cuda_module_unload(d->cuda, mod);
		return rc ? -1 : 0;
	}
	if (d->rocr)
		return rocr_load(d->rocr, code, size, &d->diag) ||
		       rocr_launch(d->rocr, k->name, grid, block, ka, k->kernarg_size, 0, &d->diag);
	return emu_load(d->emu, code, size, &d->diag) ||
	       emu_launch(d->emu, k->name, grid, block, ka, k->kernarg_size, 0, &d->diag);
}

/* C = relu(A B + Bias) (examples/gemm_bias_relu.tile), checked element by
 * element against a double-precision loop. */
static int run_gemm(Dev *d, int M, int N, int K)
{
	size_t len;
	char *text = read_file("examples/gemm_bias_relu.tile", &len);
	if (!text || M < 1 || N < 1 || K < 1) {
		fprintf(stderr, "host: run from the source root (examples/gemm_bias_relu.tile), M, N, K >= 1\n");
		free(text);
		return 2;
	}
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *bin = NULL;
	int rc = 1;
	size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
	uint16_t *A = malloc(na * 2), *B = malloc(nb * 2), *Bi = malloc((size_t)N * 2), *C = malloc(nc * 2);
	uint64_t dA = 0, dB = 0, dBi = 0, dC = 0;
	uint8_t *ka = NULL;
	if (!ctx || !A || !B || !Bi || !C)
		goto out;
	if (ta_compile_source(ctx, "examples/gemm_bias_relu.tile", text, len, d->target, &bin) != TA_OK) {
		fputs(ta_ctx_diagnostics(ctx), stderr);
		goto out;
	}
	uint64_t seed = 12345;
	for (size_t i = 0; i < na + nb + (size_t)N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		double v = (double)(seed >> 40) / (double)(1 << 24) - 0.5;
		dt_store_double(DT_F16, i < na ? &A[i] : i < na + nb ? &B[i - na] : &Bi[i - na - nb], v);
	}
	dA = dev_alloc(d, na * 2), dB = dev_alloc(d, nb * 2), dBi = dev_alloc(d, (size_t)N * 2), dC = dev_alloc(d, nc * 2);
	memset(C, 0xff, nc * 2); /* NaN: unwritten elements fail the check */
	if (!dA || !dB || !dBi || !dC || dev_copy_to(d, dA, A, na * 2) || dev_copy_to(d, dB, B, nb * 2) ||
	    dev_copy_to(d, dBi, Bi, (size_t)N * 2) || dev_copy_to(d, dC, C, nc * 2))
		goto out;
	const ta_kernel_info *k = ta_binary_kernel(bin, 0);
	ka = calloc(1, k->kernarg_size + 64);
	uint64_t dptr[16] = {0};
	int64_t vals[16] = {0};
	void *params[16];
	if (!ka || k->nargs > 16)
		goto out;
	for (int i = 0; i < k->nargs; i++) {
		const ta_arg_info *a = &k->args[i];
		params[i] = ka + a->offset;
		if (a->kind == TA_ARG_TENSOR) {
			dptr[i] = !strcmp(a->name, "A") ? dA : !strcmp(a->name, "B") ? dB : !strcmp(a->name, "Bias") ? dBi : dC;
			memcpy(ka + a->offset, &dptr[i], 8);
		} else {
			vals[i] = !strcmp(a->name, "M") ? M : !strcmp(a->name, "N") ? N : K;
			memcpy(ka + a->offset, &(int32_t){(int32_t)vals[i]}, 4);
		}
	}
	uint32_t grid[3];
	if (ta_binary_grid(bin, 0, vals, grid) != TA_OK)
		goto out;
	ta_fast_launch fl;
	ta_status fst = d->cuda && k->fast ? ta_binary_fast_launch(ctx, bin, 0, dptr, vals, params, &fl) : TA_ERR_UNSUPPORTED;
	if (fst == TA_OK) {
		/* JIT only the fast entry's own module */
		void *mod = NULL;
		CudaFunc *fn = NULL;
		float ms = 0;
		if (cuda_module_load(d->cuda, k->fast->ptx, &mod, NULL, &ms) ||
		    cuda_function(d->cuda, mod, k->fast->name, &fn) ||
		    cuda_func_set_smem(d->cuda, fn, k->fast->shared_bytes) ||
		    cuda_launch(d->cuda, fn, fl.grid, fl.block, fl.shared_bytes, fl.params, NULL) || cuda_sync(d->cuda)) {
			fprintf(stderr, "host: fast entry: %s\n", cuda_error(d->cuda));
			if (mod)
				cuda_module_unload(d->cuda, mod);
			goto out;
		}
		cuda_module_unload(d->cuda, mod);
		printf("host: %s (TMA + wgmma): %zu-byte module, JIT %.1f ms, grid %u, %u threads\n", k->fast->name,
		       k->fast->ptx_size, ms, fl.grid[0], fl.block[0]);
	} else {
		if (k->fast)
			printf("host: generic entry (%s)\n", ta_ctx_diagnostics(ctx));
		if (dev_launch(d, bin, grid, ka))
			goto out;
		printf("host: generic entry %s\n", k->name);
	}
	if (dev_copy_from(d, C, dC, nc * 2))
		goto out;
	size_t bad = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = dt_to_double(DT_F16, &Bi[j]);
			for (int x = 0; x < K; x++)
				s += dt_to_double(DT_F16, &A[(size_t)i * K + x]) * dt_to_double(DT_F16, &B[(size_t)x * N + j]);
			s = s > 0 ? s : 0;
			double got = dt_to_double(DT_F16, &C[(size_t)i * N + j]);
			bad += !(fabs(got - s) <= 2e-3 + 2e-3 * fabs(s));
		}
	printf("host: gemm_bias_relu %dx%dx%d: %zu of %zu results wrong: %s\n", M, N, K, bad, nc, bad ? "FAIL" : "PASS");
	rc = bad != 0;
out:
	if (rc == 1 && d->diag.nerrors)
		fputs(diag_text(&d->diag), stderr);
	free(ka);
	free(A), free(B), free(Bi), free(C), free(text);
	ta_binary_release(bin);
	ta_ctx_destroy(ctx);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "gemm")) {
		Dev d = {0};
		if (dev_open(&d)) {
			fprintf(stderr, "host: no device\n");
			return 1;
		}
		setvbuf(stdout, NULL, _IOLBF, 0);
		printf("host: device %s, target %s\n", d.kind, d.target);
		int rc = run_gemm(&d, argc > 2 ? atoi(argv[2]) : 200, argc > 3 ? atoi(argv[3]) : 136,
				  argc > 4 ? atoi(argv[4]) : 72);
		dev_close(&d);
		return rc;
	}
	int n = argc > 1 ? atoi(argv[1]) : 3000;

	size_t len;
	char *text = read_file("examples/vector_add.tile", &len);
	if (!text || n < 1) {
		fprintf(stderr, "host: run from the source root (examples/vector_add.tile), N >= 1\n");
		return 2;
	}
	Dev d = {0};
	if (dev_open(&d)) {
		fprintf(stderr, "host: no device\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("host: device %s, target %s, N = %d\n", d.kind, d.target, n);

	/* Compile through the public API, with the cache a JIT host would use. */
	ta_ctx *ctx = ta_ctx_create();
	ta_ctx_set_cache(ctx, 64);
	ta_binary *bin = NULL;
	int rc = 1;
	if (ta_compile_source(ctx, "examples/vector_add.tile", text, len, d.target, &bin) != TA_OK) {
		fputs(ta_ctx_diagnostics(ctx), stderr);
		goto out;
	}
	const ta_kernel_info *k = ta_binary_kernel(bin, 0);
	printf("host: kernel %s, %d threads, %u-byte arguments, %zu-byte %s\n", k->name, k->threads, k->kernarg_size,
	       (size_t)(ta_binary_data(bin, &len), len), ta_binary_format(bin));

	float *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4), *c = malloc((size_t)n * 4);
	for (int i = 0; i < n; i++) {
		a[i] = (float)i * 0.5f;
		b[i] = 1.0f - (float)i;
		c[i] = -1.0f;
	}
	uint64_t da = dev_alloc(&d, (size_t)n * 4), db = dev_alloc(&d, (size_t)n * 4), dc = dev_alloc(&d, (size_t)n * 4);
	/* The argument block: A, B, C pointers and the shape symbol N, at the
	 * offsets the binary reports. */
	uint8_t *ka = calloc(1, k->kernarg_size + 64);
	int64_t vals[4] = {0, 0, 0, n};
	uint64_t ptrs[3] = {da, db, dc};
	for (int i = 0; i < k->nargs; i++) {
		if (k->args[i].kind == TA_ARG_TENSOR)
			memcpy(ka + k->args[i].offset, &ptrs[i], 8);
		else
			memcpy(ka + k->args[i].offset, &(int32_t){(int32_t)n}, 4);
	}
	uint32_t grid[3];
	if (!da || !db || !dc || dev_copy_to(&d, da, a, (size_t)n * 4) || dev_copy_to(&d, db, b, (size_t)n * 4) ||
	    dev_copy_to(&d, dc, c, (size_t)n * 4) || ta_binary_grid(bin, 0, vals, grid) != TA_OK ||
	    dev_launch(&d, bin, grid, ka) || dev_copy_from(&d, c, dc, (size_t)n * 4)) {
		fprintf(stderr, "host: launch failed: %s%s\n", d.cuda ? cuda_error(d.cuda) : "", diag_text(&d.diag));
	} else {
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += c[i] != a[i] + b[i];
		printf("host: %d of %d results wrong: %s\n", bad, n, bad ? "FAIL" : "PASS");
		rc = bad != 0;
	}
	free(a);
	free(b);
	free(c);
	free(ka);
out:
	ta_binary_release(bin);
	ta_ctx_destroy(ctx);
	dev_close(&d);
	free(text);
	return rc;
}
