/* bench_gemm_cuda.c — the sm_90a GEMM path against cuBLAS, in one process.
 *
 *   bench_gemm_cuda [--srcdir DIR] [--quick]
 *
 * For examples/gemm.tile (f16, C = A B) and examples/gemm_bf16_tn.tile
 * (bf16, C = A B^T):
 *   1. tileasm's own compile time (Tile IR text -> PTX, median of 200) and
 *      the driver JIT time of the resulting module;
 *   2. correctness: ragged shapes checked element by element against a
 *      double-precision CPU reference, full-size shapes against cuBLAS plus
 *      CPU spot checks; outputs start poisoned (NaN), so unwritten elements fail;
 *   3. speed at 4096^3 and 8192^3: median TFLOP/s over batches of launches,
 *      tileasm and cuBLAS batches interleaved, and their ratio;
 *   4. device-to-device copy bandwidth (the ceiling for memory-bound kernels).
 * cuBLAS is dlopened from $TILEASM_CUBLAS (else "libcublas.so.13"/".12").
 * Exit status 0 only if every correctness check passed.  Device events come
 * from the driver directly (runtime/cuda.h has no event API). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda.h"
#include "cuda_tma.h"
#include "dtype.h"
#include "ir.h"
#include "ptx.h"
#include "ptx_sm90.h"
#include "target.h"

/* ---- driver entry points the runtime does not wrap --------------------- */
typedef int (*GpaFn)(const char *, void **, int, uint64_t, int *);
static struct {
	int (*event_create)(void **, unsigned);
	int (*event_record)(void *, void *);
	int (*event_sync)(void *);
	int (*event_elapsed)(float *, void *, void *);
	int (*memcpy_dtod)(uint64_t, uint64_t, size_t);
	int (*ctx_sync)(void);
} drv;

static int drv_open(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	GpaFn gpa = lib ? (GpaFn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
	if (!gpa)
		return -1;
	const char *names[] = {"cuEventCreate", "cuEventRecord", "cuEventSynchronize", "cuEventElapsedTime",
	                       "cuMemcpyDtoD", "cuCtxSynchronize"};
	void **slots[] = {(void **)&drv.event_create, (void **)&drv.event_record, (void **)&drv.event_sync,
	                  (void **)&drv.event_elapsed, (void **)&drv.memcpy_dtod, (void **)&drv.ctx_sync};
	for (size_t i = 0; i < TA_ARRAY_LEN(names); i++) {
		int st = -1;
		if (gpa(names[i], slots[i], 12000, 0, &st) || st || !*slots[i])
			return -1;
	}
	return 0;
}

/* ---- cuBLAS --------------------------------------------------------------- */
typedef int (*GemmExFn)(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int atype,
                        int lda, const void *B, int btype, int ldb, const void *beta, void *C, int ctype, int ldc,
                        int compute, int algo);
static struct {
	void *h;
	GemmExFn gemm;
} blas;

static int blas_open(void)
{
	const char *env = getenv("TILEASM_CUBLAS");
	const char *cands[] = {env, "libcublas.so.13", "libcublas.so.12", "libcublas.so"};
	void *lib = NULL;
	for (size_t i = 0; i < TA_ARRAY_LEN(cands) && !lib; i++)
		if (cands[i])
			lib = dlopen(cands[i], RTLD_NOW | RTLD_GLOBAL);
	if (!lib)
		return -1;
	int (*create)(void **) = (int (*)(void **))dlsym(lib, "cublasCreate_v2");
	blas.gemm = (GemmExFn)dlsym(lib, "cublasGemmEx");
	if (!create || !blas.gemm || create(&blas.h))
		return -1;
	return 0;
}

/* Row-major C[M,N] = A[M,K] * op(B): cuBLAS is column-major, so compute
 * C^T = op(B)^T A^T. */
static int blas_gemm(DType t, bool b_kmajor, int M, int N, int K, uint64_t A, uint64_t B, uint64_t C)
{
	float one = 1, zero = 0;
	int ty = t == DT_BF16 ? 14 : 2; /* CUDA_R_16BF, CUDA_R_16F */
	return blas.gemm(blas.h, b_kmajor ? 1 : 0, 0, N, M, K, &one, (void *)(uintptr_t)B, ty, b_kmajor ? K : N,
	                 (void *)(uintptr_t)A, ty, K, &zero, (void *)(uintptr_t)C, ty, N, 68 /* COMPUTE_32F */,
	                 -1 /* GEMM_DEFAULT */);
}

/* ---- helpers ---------------------------------------------------------------- */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static double frand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static int failures;
#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			printf("FAIL: " __VA_ARGS__); \
			printf("\n"); \
			failures++; \
		} \
	} while (0)

typedef struct {
	const char *file;
	Module *m;
	Sm90Gemm g;         /* what the matcher saw (operands, dtypes) */
	PtxKernelInfo *info;/* ptx_compile's launch data: info[0].sm90 is the entry timed here */
	uint8_t out_dtype;  /* C's dtype */
	int32_t bias;       /* gemm_bias_relu.tile: the Bias tensor (C = relu(A B + bias)), else -1 */
	CudaFunc *fn;
} Case;

static CudaRt *rt;
static CudaTma tma;
static int sm_count;

/* One GEMM problem on the device. */
typedef struct {
	int M, N, K;
	uint64_t A, B, C, Cref, Bias;
	uint16_t *hA, *hB, *hBias; /* host copies (for CPU references) */
	uint64_t gptr[8];  /* the generic entry's parameter values */
	int32_t gsym[8];
	void *gparams[8];
} Prob;

static int prob_alloc(Prob *p, const Case *c, int M, int N, int K)
{
	memset(p, 0, sizeof *p);
	p->M = M, p->N = N, p->K = K;
	size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
	p->hA = malloc(na * 2), p->hB = malloc(nb * 2), p->hBias = malloc((size_t)N * 2 + 2);
	if (!p->hA || !p->hB || !p->hBias)
		return -1;
	for (int j = 0; j < N; j++)
		dt_store_double((DType)c->g.in_dtype, &p->hBias[j], frand());
	DType t = (DType)c->g.in_dtype;
	for (size_t i = 0; i < na; i++)
		dt_store_double(t, &p->hA[i], frand());
	for (size_t i = 0; i < nb; i++)
		dt_store_double(t, &p->hB[i], frand());
	/* +16: a zero-sized operand (K = 0) still gets a valid address. */
	if (cuda_malloc(rt, &p->A, na * 2 + 16) || cuda_malloc(rt, &p->B, nb * 2 + 16) ||
	    cuda_malloc(rt, &p->C, nc * 2 + 16) || cuda_malloc(rt, &p->Cref, nc * 2 + 16) ||
	    cuda_malloc(rt, &p->Bias, (size_t)N * 2 + 16) || cuda_memcpy_htod(rt, p->Bias, p->hBias, (size_t)N * 2))
		return -1;
	if (cuda_memcpy_htod(rt, p->A, p->hA, na * 2) || cuda_memcpy_htod(rt, p->B, p->hB, nb * 2))
		return -1;
	return 0;
}

static void prob_free(Prob *p)
{
	cuda_free(rt, p->A), cuda_free(rt, p->B), cuda_free(rt, p->C), cuda_free(rt, p->Cref), cuda_free(rt, p->Bias);
	free(p->hA), free(p->hB), free(p->hBias);
}

/* The launch of the sm90 entry: the generic entry's parameters (tensors
 * A, B, C and the shape symbols), the IR grid, the tensor maps. */
/* The extents of the two maps' tensors: A [M, K], B [K, N] or [N, K]. */
static Sm90Dims gemm_dims(const Case *c, int64_t M, int64_t N, int64_t K)
{
	Sm90Dims t = {{{M, K, 0}, {c->g.b_kmajor ? N : K, c->g.b_kmajor ? K : N, 0}}};
	return t;
}

static int launch_args(const Case *c, Prob *p, Sm90Args *a)
{
	const Kernel *k = &c->m->kernels.data[c->g.kernel];
	const PtxKernelInfo *ki = &c->info[0];
	uint64_t dptr[8] = {0};
	int64_t vals[8] = {0};
	if (ki->nparams > 8 || k->nargs > 8) {
		printf("FAIL: too many parameters\n");
		return -1;
	}
	for (int i = 0; i < ki->nparams; i++) {
		int arg = ki->params[i].arg;
		int32_t b = k->args[arg].buf;
		if (ki->params[i].kind == PK_TENSOR) {
			p->gptr[i] = dptr[arg] = b == c->g.a ? p->A : b == c->g.b ? p->B : b == c->bias ? p->Bias : p->C;
			p->gparams[i] = &p->gptr[i];
		} else {
			const char *nm = c->m->vars.data[k->args[arg].var].name;
			vals[arg] = p->gsym[i] = !strcmp(nm, "M") ? p->M : !strcmp(nm, "N") ? p->N : p->K;
			p->gparams[i] = &p->gsym[i];
		}
	}
	uint32_t irgrid[3];
	Sm90Dims td = gemm_dims(c, p->M, p->N, p->K);
	if (ir_grid(c->m, c->g.kernel, vals, irgrid) || cuda_sm90_args(&tma, ki->sm90, p->gparams, irgrid, dptr, &td, sm_count, a)) {
		printf("FAIL: %s\n", tma.err);
		return -1;
	}
	return 0;
}

static int run_tileasm(const Case *c, Sm90Args *a)
{
	if (!a->grid[0])
		return 0;
	if (cuda_launch(rt, c->fn, a->grid, a->block, a->smem, a->params, NULL)) {
		printf("FAIL: launch: %s\n", cuda_error(rt));
		return -1;
	}
	return 0;
}

static double ref_elem(const Case *c, const Prob *p, int i, int j)
{
	DType t = (DType)c->g.in_dtype;
	double s = 0;
	for (int k = 0; k < p->K; k++) {
		size_t bi = c->g.b_kmajor ? (size_t)j * p->K + k : (size_t)k * p->N + j;
		s += dt_to_double(t, &p->hA[(size_t)i * p->K + k]) * dt_to_double(t, &p->hB[bi]);
	}
	if (c->bias >= 0) /* relu(A B + bias) */
		s = fmax(s + dt_to_double(t, &p->hBias[j]), 0.0);
	return s;
}

/* Checks C: every element finite; `full` compares all elements with the
 * CPU, otherwise 512 random ones.  Relative Frobenius error against the
 * reference must stay below tol. */
static void check_result(const Case *c, const Prob *p, bool full, const char *what)
{
	size_t nc = (size_t)p->M * p->N;
	uint16_t *hc = malloc(nc * 2);
	if (!hc || cuda_memcpy_dtoh(rt, hc, p->C, nc * 2)) {
		CHECK(0, "%s: copy back", what);
		free(hc);
		return;
	}
	DType t = (DType)c->out_dtype;
	size_t nonfinite = 0;
	for (size_t i = 0; i < nc; i++)
		if (!isfinite(dt_to_double(t, &hc[i])))
			nonfinite++;
	double num = 0, den = 0, maxabs = 0;
	int n = full ? (int)nc : 512;
	for (int s = 0; s < n; s++) {
		int i = full ? s / p->N : (int)((frand() + 1) * 0.5 * p->M) % p->M;
		int j = full ? s % p->N : (int)((frand() + 1) * 0.5 * p->N) % p->N;
		double want = ref_elem(c, p, i, j), got = dt_to_double(t, &hc[(size_t)i * p->N + j]);
		num += (got - want) * (got - want), den += want * want;
		maxabs = fmax(maxabs, fabs(got - want));
	}
	double rel = sqrt(num / (den > 0 ? den : 1));
	double tol = c->out_dtype == DT_BF16 ? 1e-2 : 2e-3;
	printf("  %-44s %s  rel %.2e  max abs %.2e  unwritten/nonfinite %zu\n", what,
	       nonfinite == 0 && rel < tol ? "PASS" : "FAIL", rel, maxabs, nonfinite);
	CHECK(nonfinite == 0 && rel < tol, "%s", what);
	free(hc);
}

/* Full-size check against cuBLAS (all elements) plus CPU spot checks. */
static void check_vs_cublas(const Case *c, const Prob *p, const char *what)
{
	size_t nc = (size_t)p->M * p->N;
	uint16_t *hc = malloc(nc * 2), *hr = malloc(nc * 2);
	if (!hc || !hr || cuda_memcpy_dtoh(rt, hc, p->C, nc * 2) || cuda_memcpy_dtoh(rt, hr, p->Cref, nc * 2)) {
		CHECK(0, "%s: copy back", what);
		free(hc), free(hr);
		return;
	}
	DType t = (DType)c->out_dtype;
	double num = 0, den = 0;
	size_t nonfinite = 0, differ = 0;
	for (size_t i = 0; i < nc; i++) {
		double g = dt_to_double(t, &hc[i]), r = dt_to_double(t, &hr[i]);
		if (!isfinite(g))
			nonfinite++;
		differ += hc[i] != hr[i];
		num += (g - r) * (g - r), den += r * r;
	}
	double rel = sqrt(num / (den > 0 ? den : 1));
	double tol = c->out_dtype == DT_BF16 ? 1e-2 : 2e-3;
	printf("  %-44s %s  rel vs cuBLAS %.2e  bits differ %.3f%%  nonfinite %zu\n", what,
	       nonfinite == 0 && rel < tol ? "PASS" : "FAIL", rel, 100.0 * differ / nc, nonfinite);
	CHECK(nonfinite == 0 && rel < tol, "%s vs cuBLAS", what);
	free(hc), free(hr);
	check_result(c, p, false, "  + 512 CPU spot checks");
}

static double time_batch(void *e0, void *e1, int reps, const Case *c, Sm90Args *a, const Prob *p, bool cublas)
{
	drv.event_record(e0, NULL);
	for (int r = 0; r < reps; r++) {
		if (cublas)
			blas_gemm((DType)c->g.in_dtype, c->g.b_kmajor, p->M, p->N, p->K, p->A, p->B, p->Cref);
		else
			run_tileasm(c, a);
	}
	drv.event_record(e1, NULL);
	drv.event_sync(e1);
	float ms = 0;
	drv.event_elapsed(&ms, e0, e1);
	return ms / reps;
}

static void bench_size(const Case *c, int S, bool quick)
{
	Prob p;
	Sm90Args a;
	char what[96];
	if (prob_alloc(&p, c, S, S, S) || launch_args(c, &p, &a)) {
		CHECK(0, "setup %d", S);
		prob_free(&p);
		return;
	}
	cuda_memset8(rt, p.C, 0xff, (size_t)S * S * 2); /* NaN poison */
	run_tileasm(c, &a);
	blas_gemm((DType)c->g.in_dtype, c->g.b_kmajor, S, S, S, p.A, p.B, p.Cref);
	cuda_sync(rt);
	snprintf(what, sizeof what, "%s %dx%dx%d", c->file, S, S, S);
	if (c->bias >= 0) /* cuBLAS has no epilogue here: 512 CPU spot checks, every element written */
		check_result(c, &p, false, what);
	else
		check_vs_cublas(c, &p, what);
	void *e0, *e1;
	drv.event_create(&e0, 0), drv.event_create(&e1, 0);
	int batches = quick ? 5 : 15, reps = S >= 8192 ? 5 : 20;
	double tt[32], tb[32];
	for (int i = 0; i < 3; i++) /* warm-up: clocks, caches, cuBLAS heuristics */
		time_batch(e0, e1, reps, c, &a, &p, false), time_batch(e0, e1, reps, c, &a, &p, true);
	for (int i = 0; i < batches; i++) {
		tt[i] = time_batch(e0, e1, reps, c, &a, &p, false);
		tb[i] = time_batch(e0, e1, reps, c, &a, &p, true);
	}
	double flop = 2.0 * S * S * (double)S;
	double mt = median(tt, batches), mb = median(tb, batches);
	printf("PERF %-18s %5d  tileasm %7.1f TFLOP/s (%.3f ms)  cuBLAS%s %7.1f TFLOP/s (%.3f ms)  ratio %.3f\n",
	       c->bias >= 0 ? "f16 relu(A B + b)" : c->g.in_dtype == DT_BF16 ? "bf16 (A B^T)" : "f16 (A B)", S,
	       flop / mt / 1e9, mt, c->bias >= 0 ? " A B (no epilogue)" : "", flop / mb / 1e9, mb,
	       mb / mt);
	prob_free(&p);
}

static void ragged(const Case *c, int M, int N, int K)
{
	Prob p;
	Sm90Args a;
	char what[96];
	snprintf(what, sizeof what, "%s %dx%dx%d", c->file, M, N, K);
	if (prob_alloc(&p, c, M, N, K) || launch_args(c, &p, &a)) {
		CHECK(0, "setup %s", what);
		prob_free(&p);
		return;
	}
	cuda_memset8(rt, p.C, 0xff, (size_t)M * N * 2);
	if (run_tileasm(c, &a) || cuda_sync(rt)) {
		CHECK(0, "%s: %s", what, cuda_error(rt));
	} else {
		check_result(c, &p, (double)M * N * K <= 2e8, what); /* larger: 512 spot checks */
	}
	prob_free(&p);
}

static Module *load(const char *dir, const char *file, char **text, size_t *len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/examples/%s", dir, file);
	*text = read_file(path, len);
	if (!*text)
		return NULL;
	Diag d;
	diag_init(&d);
	Module *m = ir_parse(path, *text, *len, &d);
	if (m && ir_verify(m, &d)) {
		ir_module_free(m);
		m = NULL;
	}
	if (!m)
		printf("%s", diag_text(&d));
	diag_free(&d);
	return m;
}

/* tileasm's own time: text -> parsed, verified IR -> the PTX module
 * (generic entry + sm90 entry, both from the general lowering). */
static void time_compile(const char *file, const char *text, size_t len)
{
	enum { RUNS = 100 };
	static double t_full[RUNS];
	size_t bytes = 0;
	Target tgt;
	target_parse("sm_90a", &tgt);
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_ms();
		Diag d;
		diag_init(&d);
		Module *m = ir_parse(file, text, len, &d);
		if (!m || ir_verify(m, &d)) {
			printf("FAIL: parse %s\n", file);
			failures++;
			ir_module_free(m), diag_free(&d);
			return;
		}
		StrBuf sb = {0};
		PtxKernelInfo *info = NULL;
		if (ptx_compile(m, &tgt, &sb, &info, &d) == 0)
			ptx_info_free(info, (int)m->kernels.len);
		t_full[r] = now_ms() - t0;
		bytes = sb.len;
		sb_free(&sb);
		ir_module_free(m);
		diag_free(&d);
	}
	printf("COMPILE %-18s tileasm text->PTX (whole module: generic + sm90 entry, %zu bytes) median %.3f ms  [%d runs]\n",
	       file, bytes, median(t_full, RUNS), RUNS);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TILEASM_SRCDIR") ? getenv("TILEASM_SRCDIR") : ".";
	bool quick = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--srcdir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			quick = true;
	}
	enum { NC = 3 };
	const char *files[NC] = {"gemm.tile", "gemm_bf16_tn.tile", "gemm_bias_relu.tile"};
	Case cases[NC];
	char *texts[NC] = {0};
	memset(cases, 0, sizeof cases);
	StrBuf ptx[NC] = {{0}};
	Target tgt;
	target_parse("sm_90a", &tgt);
	for (int i = 0; i < NC; i++) {
		size_t len;
		Diag d;
		diag_init(&d);
		cases[i].file = files[i];
		cases[i].m = load(dir, files[i], &texts[i], &len);
		if (!cases[i].m || !sm90_gemm_match(cases[i].m, 0, &cases[i].g) ||
		    ptx_compile(cases[i].m, &tgt, &ptx[i], &cases[i].info, &d) || !cases[i].info[0].sm90) {
			printf("FAIL: %s does not take the sm_90a GEMM path\n%s", files[i], diag_text(&d));
			return 1;
		}
		diag_free(&d);
		const Kernel *k = &cases[i].m->kernels.data[0];
		cases[i].bias = -1;
		for (int a = 0; a < k->nargs; a++)
			if (k->args[a].buf >= 0 && !strcmp(cases[i].m->bufs.data[k->args[a].buf].name, "Bias"))
				cases[i].bias = k->args[a].buf;
		for (int a = 0; a < k->nargs; a++)
			if (k->args[a].buf >= 0 && !strcmp(cases[i].m->bufs.data[k->args[a].buf].name, "C"))
				cases[i].out_dtype = cases[i].m->bufs.data[k->args[a].buf].dtype;
		time_compile(files[i], texts[i], len);
	}
	if (cuda_open(0, &rt)) {
		printf("FAIL: %s\n", cuda_error(rt));
		return 1;
	}
	if (drv_open() || cuda_tma_open(&tma) || (sm_count = cuda_tma_sm_count(&tma, 0)) < 1) {
		printf("FAIL: driver entry points: %s\n", tma.err);
		return 1;
	}
	printf("device %s, cc %d, %d SMs\n", cuda_device_name(rt), cuda_device_cc(rt), sm_count);
	void *mods[NC] = {NULL};
	StrBuf log = {0};
	for (int i = 0; i < NC; i++) {
		float jit_ms[2] = {0};
		for (int r = 0; r < 2; r++) { /* the very first load includes loading the JIT itself */
			if (mods[i])
				cuda_module_unload(rt, mods[i]);
			if (cuda_module_load(rt, ptx[i].buf, &mods[i], &log, &jit_ms[r])) {
				printf("FAIL: JIT: %s\n", cuda_error(rt));
				return 1;
			}
		}
		printf("JIT %s (cuModuleLoadDataEx, generic + sm90 entry, %zu bytes PTX): %.1f ms, then %.1f ms%s%s\n",
		       files[i], ptx[i].len, jit_ms[0], jit_ms[1], log.len ? "; info log:\n" : "", log.len ? log.buf : "");
		/* Cold JIT of each entry alone (what a host that loads only the
		 * entry it launches pays): the sm90 entry, then the generic one. */
		for (int which = 0; which < 2; which++) {
			StrBuf one = {0};
			sb_puts(&one, ".version 8.0\n.target sm_90a\n.address_size 64\n.extern .shared .align 16 .b8 smem[];\n");
			Diag d;
			diag_init(&d);
			SimtFunc f;
			int bad = 0;
			if (which == 0) {
				Sm90Launch *l1 = sm90_gemm_try(cases[i].m, 0, &tgt, NULL, &one);
				bad = !l1;
				free(l1);
			} else {
				bad = lower_kernel(cases[i].m, 0, &tgt, &f, &d) || ptx_emit_func(&f, &tgt, &one, &d);
				simt_free(&f);
			}
			void *m1 = NULL;
			float ms1 = 0;
			if (bad || cuda_module_load(rt, one.buf, &m1, &log, &ms1)) {
				printf("FAIL: JIT of one entry: %s\n", bad ? diag_text(&d) : cuda_error(rt));
				failures++;
			} else {
				printf("JIT %s %s entry alone (%zu bytes PTX): %.1f ms\n", files[i], which ? "generic" : "sm90",
				       one.len, ms1);
				cuda_module_unload(rt, m1);
			}
			sb_free(&one);
			diag_free(&d);
		}
		Case *c = &cases[i];
		const Sm90Launch *l = c->info[0].sm90;
		if (cuda_function(rt, mods[i], l->entry, &c->fn) || cuda_func_set_smem(rt, c->fn, l->smem_bytes)) {
			printf("FAIL: %s: %s\n", l->entry, cuda_error(rt));
			return 1;
		}
	}
	if (blas_open()) {
		printf("FAIL: cannot open cuBLAS (set TILEASM_CUBLAS): %s\n", dlerror());
		return 1;
	}

	printf("-- correctness (ragged shapes: TMA zero-fill / edge-tile stores) --\n");
	static const int shapes[][3] = {{128, 256, 64}, {1, 8, 8}, {333, 520, 264}, {200, 136, 72}, {129, 264, 1000},
	                                {1000, 1000, 1000}, {257, 514, 8}, {64, 40, 0}};
	for (int i = 0; i < NC; i++)
		for (size_t s = 0; s < TA_ARRAY_LEN(shapes); s++) {
			int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
			Sm90Dims td = gemm_dims(&cases[i], M, N, K);
			if (sm90_check_shapes(cases[i].info[0].sm90, &td))
				continue; /* the generic entry's job (tests/gpu/bench.sh checks the fallback) */
			ragged(&cases[i], M, N, K);
		}
	ragged(&cases[1], 131, 78, 48); /* N % 8 != 0: only the A B^T form allows it */

	/* Twice, so the spread between two identical measurements is visible. */
	for (int round = 1; round <= (quick ? 1 : 2); round++) {
		printf("-- speed, round %d (median of batches; tileasm and cuBLAS interleaved) --\n", round);
		for (int i = 0; i < NC; i++) {
			bench_size(&cases[i], 4096, quick);
			if (cases[i].bias < 0)
				bench_size(&cases[i], 8192, quick);
		}
	}
	/* Copy bandwidth: the ceiling for softmax/rmsnorm (bytes read + written). */
	{
		size_t bytes = (size_t)1 << 30;
		uint64_t x, y;
		if (!cuda_malloc(rt, &x, bytes) && !cuda_malloc(rt, &y, bytes)) {
			void *e0, *e1;
			drv.event_create(&e0, 0), drv.event_create(&e1, 0);
			double t[11];
			for (int i = 0; i < 13; i++) {
				drv.event_record(e0, NULL);
				drv.memcpy_dtod(y, x, bytes);
				drv.event_record(e1, NULL);
				drv.event_sync(e1);
				float ms;
				drv.event_elapsed(&ms, e0, e1);
				if (i >= 2)
					t[i - 2] = ms;
			}
			printf("COPY device-to-device 1 GiB: %.0f GB/s (read + write, median of 11)\n",
			       2.0 * bytes / median(t, 11) / 1e6);
			cuda_free(rt, x), cuda_free(rt, y);
		}
	}
	for (int i = 0; i < NC; i++) {
		cuda_module_unload(rt, mods[i]);
		sb_free(&ptx[i]);
		ptx_info_free(cases[i].info, (int)cases[i].m->kernels.len);
		ir_module_free(cases[i].m), free(texts[i]);
	}
	sb_free(&log);
	cuda_tma_close(&tma);
	cuda_close(rt);
	printf("%s (%d failures)\n", failures ? "FAIL" : "ALL CHECKS PASSED", failures);
	return failures != 0;
}
