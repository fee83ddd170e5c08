/* test_examples.c — every example (examples/NAME.tile) run by the interpreter against a
 * plain C reference loop, at several shapes including ragged ones (tails
 * that exercise copy's out-of-bounds handling) and 1x1x1.
 *
 * The gemm references follow the IR's contract literally (f32 products of
 * the exact inputs, f32 accumulation in k order), so they agree to one
 * output ulp; the others are computed in double and compared with a
 * tolerance suited to f16/bf16 outputs.
 */
#include <dirent.h>

#include "harness.h"

typedef struct {
	int64_t m, n, k;
} Shape;

static const Shape gemm_shapes[] = {{256, 256, 256}, {100, 72, 40}, {1, 1, 1}, {129, 65, 33}};
static const Shape row_shapes[] = {{256, 256, 0}, {100, 72, 0}, {1, 1, 0}, {129, 65, 0}, {7, 1000, 0}};
/* the one-row-per-block kernels (*_row.tile): rows that fit their 8192-column
 * fragment (whole, ragged, odd) and rows that take the multi-pass branch */
static const Shape long_rows[] = {{3, 8192, 0}, {2, 300, 0}, {1, 1, 0}, {5, 2049, 0}, {2, 9000, 0}, {1, 16385, 0}};

static double *decode16(const uint16_t *p, size_t n, bool bf)
{
	double *d = malloc(n * sizeof *d + 8);
	for (size_t i = 0; i < n; i++)
		d[i] = bf ? dt_bf16_to_double(p[i]) : dt_f16_to_double(p[i]);
	return d;
}

/* Epilogues after A B: none, relu(. + Bias) (gemm_bias_relu.tile), or
 * gelu_tanh(. + Bias) (gemm_bias_gelu.tile), with an f16 Bias[N]. */
enum { EPI_NONE, EPI_RELU, EPI_GELU };

static void run_gemm(const char *file, bool bf16, bool tn, int epi)
{
	Module *m = h_load_example(file);
	for (size_t s = 0; s < TA_ARRAY_LEN(gemm_shapes); s++) {
		int64_t M = gemm_shapes[s].m, N = gemm_shapes[s].n, K = gemm_shapes[s].k;
		uint16_t *A = bf16 ? h_bf16_array((size_t)(M * K), 1 + s, 1) : h_f16_array((size_t)(M * K), 1 + s, 1);
		uint16_t *B = bf16 ? h_bf16_array((size_t)(K * N), 7 + s, 1) : h_f16_array((size_t)(K * N), 7 + s, 1);
		uint16_t *C = malloc((size_t)(M * N) * 2), *Bi = h_f16_array((size_t)N, 13 + s, 1);
		memset(C, 0xff, (size_t)(M * N) * 2);
		Args a = {.m = m};
		if (epi != EPI_NONE)
			h_tensor(&a, "Bias", Bi, (size_t)N * 2);
		h_tensor(&a, "A", A, (size_t)(M * K) * 2);
		h_tensor(&a, "B", B, (size_t)(K * N) * 2);
		h_tensor(&a, "C", C, (size_t)(M * N) * 2);
		h_int(&a, "M", M);
		h_int(&a, "N", N);
		h_int(&a, "K", K);
		h_run(&a, NULL);
		double *got = decode16(C, (size_t)(M * N), bf16), *want = malloc((size_t)(M * N) * sizeof(double));
		double *da = decode16(A, (size_t)(M * K), bf16), *db = decode16(B, (size_t)(K * N), bf16);
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				float acc = 0;
				for (int64_t k = 0; k < K; k++) {
					float p = (float)da[i * K + k] * (float)(tn ? db[j * K + k] : db[k * N + j]);
					acc = acc + p;
				}
				double r = acc;
				if (epi != EPI_NONE) {
					acc = acc + (float)dt_f16_to_double(Bi[j]);
					r = acc > 0.0f ? acc : 0.0f;
					if (epi == EPI_GELU) /* in double: the kernel's f32 tanh differs in the last bits */
						r = 0.5 * acc * (1 + tanh(0.7978845608 * (acc + 0.044715 * acc * acc * acc)));
				}
				want[i * N + j] = dt_round_double(bf16 ? DT_BF16 : DT_F16, r);
			}
		char what[128];
		snprintf(what, sizeof what, "%s M=%lld N=%lld K=%lld", file, (long long)M, (long long)N, (long long)K);
		h_close(what, got, want, (size_t)(M * N), epi == EPI_GELU ? 1e-3 : 0, bf16 ? 0x1p-7 : 0x1p-10);
		free(A), free(B), free(C), free(Bi), free(got), free(want), free(da), free(db);
	}
	ir_module_free(m);
}

Test(examples, gemm) { run_gemm("gemm.tile", false, false, EPI_NONE); }
Test(examples, gemm_bf16_tn) { run_gemm("gemm_bf16_tn.tile", true, true, EPI_NONE); }
Test(examples, gemm_bias_relu) { run_gemm("gemm_bias_relu.tile", false, false, EPI_RELU); }
Test(examples, gemm_bias_gelu) { run_gemm("gemm_bias_gelu.tile", false, false, EPI_GELU); }

/* gemm_batched.tile (C[b] = A[b] B[b], f16 out) and gemm_splitk.tile (C +=
 * A B in S slices of K through f32 atomics, C starting at 0): against the
 * same f32 k-order sums (split-K adds S partial sums, so a tolerance). */
static void run_gemm3(const char *file, bool splitk)
{
	static const int64_t sh[][4] = {{3, 100, 72, 40}, {2, 129, 136, 200}, {1, 1, 1, 1}, {2, 64, 130, 1000}};
	Module *m = h_load_example(file);
	for (size_t s = 0; s < TA_ARRAY_LEN(sh); s++) {
		int64_t Bt = splitk ? 1 : sh[s][0], M = sh[s][1], N = sh[s][2], K = sh[s][3], S = sh[s][0] + 1;
		uint16_t *A = h_f16_array((size_t)(Bt * M * K), 31 + s, 1), *B = h_f16_array((size_t)(Bt * K * N), 37 + s, 1);
		size_t nc = (size_t)(Bt * M * N);
		uint16_t *C16 = malloc(nc * 2);
		float *C32 = calloc(nc, 4);
		memset(C16, 0xff, nc * 2);
		Args a = {.m = m};
		h_tensor(&a, "A", A, (size_t)(Bt * M * K) * 2);
		h_tensor(&a, "B", B, (size_t)(Bt * K * N) * 2);
		if (splitk) {
			h_tensor(&a, "C", C32, nc * 4);
			h_int(&a, "S", S);
		} else {
			h_tensor(&a, "C", C16, nc * 2);
			h_int(&a, "Bt", Bt);
		}
		h_int(&a, "M", M);
		h_int(&a, "N", N);
		h_int(&a, "K", K);
		h_run(&a, NULL);
		double *got = splitk ? malloc(nc * sizeof(double)) : decode16(C16, nc, false), *want = malloc(nc * sizeof(double));
		double *da = decode16(A, (size_t)(Bt * M * K), false), *db = decode16(B, (size_t)(Bt * K * N), false);
		for (int64_t b = 0; b < Bt; b++)
			for (int64_t i = 0; i < M; i++)
				for (int64_t j = 0; j < N; j++) {
					float acc = 0;
					for (int64_t k = 0; k < K; k++)
						acc = acc + (float)da[(b * M + i) * K + k] * (float)db[(b * K + k) * N + j];
					size_t o = (size_t)((b * M + i) * N + j);
					want[o] = splitk ? acc : dt_round_double(DT_F16, acc);
					if (splitk)
						got[o] = C32[o];
				}
		char what[128];
		snprintf(what, sizeof what, "%s Bt=%lld M=%lld N=%lld K=%lld", file, (long long)Bt, (long long)M, (long long)N,
			 (long long)K);
		h_close(what, got, want, nc, splitk ? 1e-4 : 0, splitk ? 1e-5 : 0x1p-10);
		free(A), free(B), free(C16), free(C32), free(got), free(want), free(da), free(db);
	}
	ir_module_free(m);
}

Test(examples, gemm_batched) { run_gemm3("gemm_batched.tile", false); }
Test(examples, gemm_splitk) { run_gemm3("gemm_splitk.tile", true); }

Test(examples, vector_add)
{
	Module *m = h_load_example("vector_add.tile");
	static const int64_t ns[] = {1, 1000, 1024, 2049, 65536};
	for (size_t s = 0; s < TA_ARRAY_LEN(ns); s++) {
		int64_t N = ns[s];
		float *A = h_f32_array((size_t)N, 3 + s, 100), *B = h_f32_array((size_t)N, 5 + s, 100);
		float *C = calloc((size_t)N, 4);
		Args a = {.m = m};
		h_tensor(&a, "A", A, (size_t)N * 4);
		h_tensor(&a, "B", B, (size_t)N * 4);
		h_tensor(&a, "C", C, (size_t)N * 4);
		h_int(&a, "N", N);
		h_run(&a, NULL);
		for (int64_t i = 0; i < N; i++)
			cr_assert_eq(C[i], A[i] + B[i], "N=%lld: C[%lld] = %g", (long long)N, (long long)i, C[i]);
		free(A), free(B), free(C);
	}
	ir_module_free(m);
}

Test(examples, reduce_sum)
{
	Module *m = h_load_example("reduce_sum.tile");
	for (size_t s = 0; s < TA_ARRAY_LEN(row_shapes); s++) {
		int64_t M = row_shapes[s].m, N = row_shapes[s].n;
		float *X = h_f32_array((size_t)(M * N), 11 + s, 1), *Y = calloc((size_t)M, 4);
		Args a = {.m = m};
		h_tensor(&a, "X", X, (size_t)(M * N) * 4);
		h_tensor(&a, "Y", Y, (size_t)M * 4);
		h_int(&a, "M", M);
		h_int(&a, "N", N);
		h_run(&a, NULL);
		double got[256], want[256];
		for (int64_t i = 0; i < M; i++) {
			want[i] = 0;
			for (int64_t j = 0; j < N; j++)
				want[i] += X[i * N + j];
			got[i] = Y[i];
		}
		h_close("reduce_sum", got, want, (size_t)M, 2e-4, 1e-5);
		free(X), free(Y);
	}
	ir_module_free(m);
}

/* Row kernels with f16 X[M, N] -> Y[M, N]; ref computes one row in double. */
typedef void RowRef(const double *x, int64_t n, const double *w, const double *b, double eps, double *y);

static void softmax_ref(const double *x, int64_t n, const double *w, const double *b, double eps, double *y)
{
	double mx = -INFINITY, sum = 0;
	for (int64_t j = 0; j < n; j++)
		mx = fmax(mx, x[j]);
	for (int64_t j = 0; j < n; j++)
		sum += exp(x[j] - mx);
	for (int64_t j = 0; j < n; j++)
		y[j] = exp(x[j] - mx) / sum;
}

static void rmsnorm_ref(const double *x, int64_t n, const double *w, const double *b, double eps, double *y)
{
	double ss = 0;
	for (int64_t j = 0; j < n; j++)
		ss += x[j] * x[j];
	double r = 1 / sqrt(ss / (double)n + eps);
	for (int64_t j = 0; j < n; j++)
		y[j] = x[j] * r * w[j];
}

static void layernorm_ref(const double *x, int64_t n, const double *w, const double *b, double eps, double *y)
{
	double mean = 0, var = 0;
	for (int64_t j = 0; j < n; j++)
		mean += x[j];
	mean /= (double)n;
	for (int64_t j = 0; j < n; j++)
		var += (x[j] - mean) * (x[j] - mean);
	var /= (double)n;
	for (int64_t j = 0; j < n; j++)
		y[j] = (x[j] - mean) / sqrt(var + (double)(float)eps) * w[j] + b[j];
}

/* wname/bname: names of the per-column f16 weight and bias tensors (NULL
 * if the kernel has none). */
static void run_rows_at(const char *file, RowRef *ref, const char *wname, const char *bname, bool has_eps,
                        const Shape *shapes, size_t nshapes)
{
	Module *m = h_load_example(file);
	for (size_t s = 0; s < nshapes; s++) {
		int64_t M = shapes[s].m, N = shapes[s].n;
		size_t MN = (size_t)(M * N);
		uint16_t *X = h_f16_array(MN, 21 + s, 3), *Y = malloc(MN * 2);
		uint16_t *W = h_f16_array((size_t)N, 23 + s, 2), *B = h_f16_array((size_t)N, 25 + s, 1);
		memset(Y, 0xff, MN * 2);
		double eps = 1e-5;
		Args a = {.m = m};
		h_tensor(&a, "X", X, MN * 2);
		h_tensor(&a, "Y", Y, MN * 2);
		if (wname)
			h_tensor(&a, wname, W, (size_t)N * 2);
		if (bname)
			h_tensor(&a, bname, B, (size_t)N * 2);
		if (has_eps)
			h_float(&a, "eps", eps);
		h_int(&a, "M", M);
		h_int(&a, "N", N);
		h_run(&a, NULL);
		double *x = decode16(X, MN, false), *w = decode16(W, (size_t)N, false), *b = decode16(B, (size_t)N, false);
		double *got = decode16(Y, MN, false), *want = malloc(MN * sizeof(double));
		for (int64_t i = 0; i < M; i++)
			ref(x + i * N, N, w, b, eps, want + i * N);
		char what[128];
		snprintf(what, sizeof what, "%s M=%lld N=%lld", file, (long long)M, (long long)N);
		h_close(what, got, want, MN, 2e-3, 4e-3);
		free(X), free(Y), free(W), free(B), free(x), free(w), free(b), free(got), free(want);
	}
	ir_module_free(m);
}

static void run_rows(const char *file, RowRef *ref, const char *wname, const char *bname, bool has_eps)
{
	bool row = strstr(file, "_row.tile") != NULL;
	run_rows_at(file, ref, wname, bname, has_eps, row ? long_rows : row_shapes,
	            row ? TA_ARRAY_LEN(long_rows) : TA_ARRAY_LEN(row_shapes));
}

Test(examples, softmax) { run_rows("softmax.tile", softmax_ref, NULL, NULL, false); }
Test(examples, softmax_row) { run_rows("softmax_row.tile", softmax_ref, NULL, NULL, false); }
Test(examples, rmsnorm_row) { run_rows("rmsnorm_row.tile", rmsnorm_ref, "W", NULL, true); }
Test(examples, layernorm_row) { run_rows("layernorm_row.tile", layernorm_ref, "G", "Bias", true); }
Test(examples, rmsnorm) { run_rows("rmsnorm.tile", rmsnorm_ref, "W", NULL, true); }
Test(examples, layernorm) { run_rows("layernorm.tile", layernorm_ref, "G", "Bias", true); }

/* want[i, d] += softmax(scale * q k^T [causal])[i, :] v for one head [S, D]. */
static void attention_ref(const double *q, const double *k, const double *v, double *want, int64_t S, int64_t D,
                          int causal, double scale)
{
	double *p = malloc((size_t)S * sizeof(double));
	for (int64_t i = 0; i < S; i++) {
		int64_t nk = causal ? i + 1 : S;
		double mx = -INFINITY, sum = 0;
		for (int64_t j = 0; j < nk; j++) {
			double dot = 0;
			for (int64_t d = 0; d < D; d++)
				dot += q[i * D + d] * k[j * D + d];
			p[j] = dot * scale;
			mx = fmax(mx, p[j]);
		}
		for (int64_t j = 0; j < nk; j++)
			sum += (p[j] = exp(p[j] - mx));
		for (int64_t j = 0; j < nk; j++)
			for (int64_t d = 0; d < D; d++)
				want[i * D + d] += p[j] / sum * v[j * D + d];
	}
	free(p);
}

/* Multi-head attention [B, H, S, D]: every (batch, head) against the
 * reference above, D = 64 and 128, ragged S; one head (B = H = 1) at the
 * lengths the single-head example it replaced was checked at (one row,
 * one tile, one tile and a row, ragged). */
static void run_mha(int64_t D, int causal)
{
	Define def = {"D", D};
	Module *m = h_load_example_defs("mha_fwd.tile", &def, 1);
	static const struct {
		int64_t B, H, S;
	} sh[] = {{2, 3, 100}, {2, 3, 64}, {2, 3, 129}, {1, 1, 256}, {1, 1, 100}, {1, 1, 1}, {1, 1, 129}};
	for (size_t si = 0; si < TA_ARRAY_LEN(sh); si++) {
		int64_t B = sh[si].B, H = sh[si].H, S = sh[si].S, hs = S * D;
		size_t n = (size_t)(B * H * hs);
		uint16_t *Q = h_f16_array(n, 41 + si, 1), *K = h_f16_array(n, 43 + si, 1), *V = h_f16_array(n, 45 + si, 1);
		uint16_t *O = malloc(n * 2);
		memset(O, 0xff, n * 2);
		double scale = 0.125;
		Args a = {.m = m};
		h_tensor(&a, "Q", Q, n * 2);
		h_tensor(&a, "K", K, n * 2);
		h_tensor(&a, "V", V, n * 2);
		h_tensor(&a, "O", O, n * 2);
		h_float(&a, "scale", scale);
		h_int(&a, "causal", causal);
		h_int(&a, "B", B);
		h_int(&a, "H", H);
		h_int(&a, "S", S);
		h_run(&a, NULL);
		double *q = decode16(Q, n, false), *k = decode16(K, n, false), *v = decode16(V, n, false);
		double *got = decode16(O, n, false), *want = calloc(n, sizeof(double));
		for (int64_t bh = 0; bh < B * H; bh++)
			attention_ref(q + bh * hs, k + bh * hs, v + bh * hs, want + bh * hs, S, D, causal, scale);
		char what[128];
		snprintf(what, sizeof what, "mha D=%lld B=%lld H=%lld S=%lld causal=%d", (long long)D, (long long)B,
			 (long long)H, (long long)S, causal);
		h_close(what, got, want, n, 4e-3, 1e-2);
		free(Q), free(K), free(V), free(O), free(q), free(k), free(v), free(got), free(want);
	}
	ir_module_free(m);
}

Test(examples, mha_d64) { run_mha(64, 0); run_mha(64, 1); }
Test(examples, mha_d128) { run_mha(128, 0); run_mha(128, 1); }

/* GEMV (examples/gemv.tile): both kernels, thread style (warp shuffles,
 * locals, vars) and split-K (atomic_add into shared memory), against y = A x
 * in double; ragged N and K. */
static void run_gemv(int kernel)
{
	Module *m = h_load_example("gemv.tile");
	static const Shape shapes[] = {{0, 64, 256}, {0, 77, 600}, {0, 1, 1}, {0, 130, 33}};
	for (size_t si = 0; si < TA_ARRAY_LEN(shapes); si++) {
		int64_t N = shapes[si].n, K = shapes[si].k;
		uint16_t *A = h_f16_array((size_t)(N * K), 61 + si, 1), *X = h_f16_array((size_t)K, 63 + si, 1);
		uint16_t *Y = malloc((size_t)N * 2);
		memset(Y, 0xff, (size_t)N * 2);
		Args a = {.m = m, .k = kernel};
		h_tensor(&a, "A", A, (size_t)(N * K) * 2);
		h_tensor(&a, "X", X, (size_t)K * 2);
		h_tensor(&a, "Y", Y, (size_t)N * 2);
		h_int(&a, "N", N);
		h_int(&a, "K", K);
		h_run(&a, NULL);
		double *da = decode16(A, (size_t)(N * K), false), *dx = decode16(X, (size_t)K, false);
		double *got = decode16(Y, (size_t)N, false), *want = calloc((size_t)N, sizeof(double));
		for (int64_t n = 0; n < N; n++)
			for (int64_t k = 0; k < K; k++)
				want[n] += da[n * K + k] * dx[k];
		char what[96];
		snprintf(what, sizeof what, "gemv kernel %d N=%lld K=%lld", kernel, (long long)N, (long long)K);
		h_close(what, got, want, (size_t)N, 1e-2, 2e-3);
		free(A), free(X), free(Y), free(da), free(dx), free(got), free(want);
	}
	ir_module_free(m);
}

Test(examples, gemv_threads) { run_gemv(0); }
Test(examples, gemv_splitk) { run_gemv(1); }

/* GQA decode (examples/gqa_decode.tile): for every batch row, kv head g
 * and query head j of its group, softmax(scale * q K_g^T) V_g over the S
 * cached keys of [B, S, HKV, D], in double; G = 8 and D = 128 (the
 * defaults) and G = 4, D = 64; ragged S (1, 100, 129). */
/* softmax(scale * q K_g^T) V_g in double for every batch row b, kv head g
 * and query head j of its group; returns [B, HKV, G, D] (caller frees). */
static double *gqa_reference(const uint16_t *Q, const uint16_t *K, const uint16_t *V, int64_t B, int64_t HKV,
                             int64_t G, int64_t D, int64_t S, double scale)
{
	size_t nq = (size_t)(B * HKV * G * D), nk = (size_t)(B * S * HKV * D);
	double *q = decode16(Q, nq, false), *k = decode16(K, nk, false), *v = decode16(V, nk, false);
	double *want = calloc(nq, sizeof(double)), *p = malloc((size_t)S * sizeof(double));
	for (int64_t b = 0; b < B; b++)
		for (int64_t g = 0; g < HKV; g++)
			for (int64_t j = 0; j < G; j++) {
				const double *qr = q + ((b * HKV + g) * G + j) * D;
				double *o = want + ((b * HKV + g) * G + j) * D, mx = -INFINITY, sum = 0;
				for (int64_t t = 0; t < S; t++) {
					double dot = 0;
					for (int64_t d = 0; d < D; d++)
						dot += qr[d] * k[((b * S + t) * HKV + g) * D + d];
					mx = fmax(mx, p[t] = dot * scale);
				}
				for (int64_t t = 0; t < S; t++)
					sum += (p[t] = exp(p[t] - mx));
				for (int64_t t = 0; t < S; t++)
					for (int64_t d = 0; d < D; d++)
						o[d] += p[t] / sum * v[((b * S + t) * HKV + g) * D + d];
			}
	free(q), free(k), free(v), free(p);
	return want;
}

static void run_gqa(int64_t G, int64_t D)
{
	Define defs[2] = {{"G", G}, {"D", D}};
	Module *m = h_load_example_defs("gqa_decode.tile", defs, 2);
	static const int64_t shapes[][3] = {{2, 2, 100}, {1, 3, 1}, {3, 1, 129}, {1, 2, 256}}; /* B, HKV, S */
	for (size_t si = 0; si < TA_ARRAY_LEN(shapes); si++) {
		int64_t B = shapes[si][0], HKV = shapes[si][1], S = shapes[si][2];
		size_t nq = (size_t)(B * HKV * G * D), nk = (size_t)(B * S * HKV * D);
		uint16_t *Q = h_f16_array(nq, 41 + si, 1), *K = h_f16_array(nk, 43 + si, 1), *V = h_f16_array(nk, 45 + si, 1);
		uint16_t *O = malloc(nq * 2);
		memset(O, 0xff, nq * 2);
		double scale = 1.0 / sqrt((double)D);
		Args a = {.m = m};
		h_tensor(&a, "Q", Q, nq * 2);
		h_tensor(&a, "K", K, nk * 2);
		h_tensor(&a, "V", V, nk * 2);
		h_tensor(&a, "O", O, nq * 2);
		h_float(&a, "scale", scale);
		h_int(&a, "B", B);
		h_int(&a, "HKV", HKV);
		h_int(&a, "S", S);
		h_run(&a, NULL);
		double *got = decode16(O, nq, false), *want = gqa_reference(Q, K, V, B, HKV, G, D, S, scale);
		char what[128];
		snprintf(what, sizeof what, "gqa_decode G=%lld D=%lld B=%lld HKV=%lld S=%lld", (long long)G, (long long)D,
		         (long long)B, (long long)HKV, (long long)S);
		h_close(what, got, want, nq, 4e-3, 1e-2);
		free(Q), free(K), free(V), free(O), free(got), free(want);
	}
	ir_module_free(m);
}

Test(examples, gqa_decode) { run_gqa(8, 128); run_gqa(4, 64); }

/* GQA decode with the KV split (examples/gqa_decode_split.tile): the split
 * kernel, then the combine kernel on its Opart and Lse, against the same
 * double reference as gqa_decode; NS = 4 and 3 splits at S values that
 * leave splits short (100, 129) or empty (1, 65: only split 0 has keys). */
static void run_gqa_split(int64_t G, int64_t D, int64_t NS)
{
	Define defs[3] = {{"G", G}, {"D", D}, {"NS", NS}};
	Module *m = h_load_example_defs("gqa_decode_split.tile", defs, 3);
	static const int64_t shapes[][3] = {{2, 2, 100}, {1, 3, 1}, {3, 1, 129}, {1, 2, 65}, {1, 1, 600}};
	for (size_t si = 0; si < TA_ARRAY_LEN(shapes); si++) {
		int64_t B = shapes[si][0], HKV = shapes[si][1], S = shapes[si][2];
		size_t nq = (size_t)(B * HKV * G * D), nk = (size_t)(B * S * HKV * D);
		size_t npart = (size_t)(B * HKV * NS * G * D), nlse = (size_t)(B * HKV * NS * G);
		uint16_t *Q = h_f16_array(nq, 51 + si, 1), *K = h_f16_array(nk, 53 + si, 1), *V = h_f16_array(nk, 55 + si, 1);
		uint16_t *O = malloc(nq * 2);
		float *Opart = malloc(npart * 4), *Lse = malloc(nlse * 4);
		memset(O, 0xff, nq * 2);
		memset(Opart, 0xff, npart * 4);
		memset(Lse, 0xff, nlse * 4);
		double scale = 1.0 / sqrt((double)D);
		Args a = {.m = m, .k = 0};
		h_tensor(&a, "Q", Q, nq * 2);
		h_tensor(&a, "K", K, nk * 2);
		h_tensor(&a, "V", V, nk * 2);
		h_tensor(&a, "Opart", Opart, npart * 4);
		h_tensor(&a, "Lse", Lse, nlse * 4);
		h_float(&a, "scale", scale);
		h_int(&a, "B", B);
		h_int(&a, "HKV", HKV);
		h_int(&a, "S", S);
		h_run(&a, NULL);
		Args c = {.m = m, .k = 1};
		h_tensor(&c, "Opart", Opart, npart * 4);
		h_tensor(&c, "Lse", Lse, nlse * 4);
		h_tensor(&c, "O", O, nq * 2);
		h_int(&c, "B", B);
		h_int(&c, "HKV", HKV);
		h_run(&c, NULL);
		double *got = decode16(O, nq, false), *want = gqa_reference(Q, K, V, B, HKV, G, D, S, scale);
		char what[128];
		snprintf(what, sizeof what, "gqa_decode_split G=%lld D=%lld NS=%lld B=%lld HKV=%lld S=%lld", (long long)G,
		         (long long)D, (long long)NS, (long long)B, (long long)HKV, (long long)S);
		h_close(what, got, want, nq, 4e-3, 1e-2);
		free(Q), free(K), free(V), free(O), free(Opart), free(Lse), free(got), free(want);
	}
	ir_module_free(m);
}

Test(examples, gqa_decode_split) { run_gqa_split(8, 128, 4); run_gqa_split(4, 64, 3); }

/* int4-dequant GEMM (examples/gemm_int4.tile): B packed two i4 per byte
 * (built here nibble by nibble, not with the library's packing), scales
 * per 32 rows of K; C = A * (B * Scale) with the f16 rounding of each
 * dequantised element, f32 accumulation in k order, against this C code. */
Test(examples, gemm_int4)
{
	Module *m = h_load_example("gemm_int4.tile");
	for (size_t s = 0; s < TA_ARRAY_LEN(gemm_shapes); s++) {
		int64_t M = gemm_shapes[s].m, N = gemm_shapes[s].n, K = gemm_shapes[s].k, G = (K + 31) / 32;
		uint16_t *A = h_f16_array((size_t)(M * K), 21 + s, 1), *Sc = h_f16_array((size_t)(G * N), 23 + s, 0.25);
		size_t bbytes = (size_t)((K * N + 7) / 8 * 4);
		uint8_t *B = calloc(bbytes, 1);
		int8_t *q = malloc((size_t)(K * N));
		uint64_t rs = 29 + s;
		for (int64_t i = 0; i < K * N; i++) {
			q[i] = (int8_t)((int)(h_rand(&rs) * 8.0 + 8.0) % 16 - 8); /* -8 .. 7 */
			B[i / 2] |= (uint8_t)(((uint8_t)q[i] & 15) << (4 * (i % 2)));
		}
		uint16_t *C = malloc((size_t)(M * N) * 2);
		memset(C, 0xff, (size_t)(M * N) * 2);
		Args a = {.m = m};
		h_tensor(&a, "A", A, (size_t)(M * K) * 2);
		h_tensor(&a, "B", B, bbytes);
		h_tensor(&a, "Scale", Sc, (size_t)(G * N) * 2);
		h_tensor(&a, "C", C, (size_t)(M * N) * 2);
		h_int(&a, "M", M);
		h_int(&a, "N", N);
		h_int(&a, "K", K);
		h_run(&a, NULL);
		double *got = decode16(C, (size_t)(M * N), false), *want = malloc((size_t)(M * N) * sizeof(double));
		double *da = decode16(A, (size_t)(M * K), false), *dsc = decode16(Sc, (size_t)(G * N), false);
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				float acc = 0;
				for (int64_t k = 0; k < K; k++) {
					double w = dt_round_double(DT_F16, q[k * N + j] * dsc[(k / 32) * N + j]);
					acc = acc + (float)da[i * K + k] * (float)w;
				}
				want[i * N + j] = dt_round_double(DT_F16, acc);
			}
		char what[128];
		snprintf(what, sizeof what, "gemm_int4 M=%lld N=%lld K=%lld", (long long)M, (long long)N, (long long)K);
		h_close(what, got, want, (size_t)(M * N), 0, 0x1p-10);
		free(A), free(B), free(q), free(Sc), free(C), free(got), free(want), free(da), free(dsc);
	}
	ir_module_free(m);
}

/* Every example must parse, verify and have a reference above; a new
 * example without one fails here so it does not go untested. */
Test(examples, all_examples_have_a_reference)
{
	/* with the -D an example needs to verify (a symbol that sizes on-chip tiles) */
	static const struct {
		const char *file;
		Define def;
	} known[] = {{"gemm.tile", {0}}, {"gemm_bf16_tn.tile", {0}}, {"gemm_bias_relu.tile", {0}}, {"vector_add.tile", {0}},
	             {"reduce_sum.tile", {0}}, {"softmax.tile", {0}}, {"rmsnorm.tile", {0}}, {"layernorm.tile", {0}},
	             {"gemm_bias_gelu.tile", {0}}, {"gemm_batched.tile", {0}}, {"gemm_splitk.tile", {0}}, {"softmax_row.tile", {0}}, {"rmsnorm_row.tile", {0}},
	             {"layernorm_row.tile", {0}},
	             {"mha_fwd.tile", {"D", 64}},
	             {"gemv.tile", {0}}, {"gemm_int4.tile", {0}},
	             {"gqa_decode.tile", {0}}, {"gqa_decode_split.tile", {0}}};
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root);
	char path[1024];
	snprintf(path, sizeof path, "%s/examples", root);
	DIR *dir = opendir(path);
	cr_assert(dir, "cannot open %s", path);
	int n = 0;
	for (struct dirent *de; (de = readdir(dir));) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 5, ".tile"))
			continue;
		n++;
		int found = -1;
		for (size_t i = 0; i < TA_ARRAY_LEN(known); i++)
			if (!strcmp(known[i].file, de->d_name))
				found = (int)i;
		cr_expect(found >= 0, "examples/%s has no C reference in tests/interp/test_examples.c", de->d_name);
		if (found >= 0 && known[found].def.name)
			ir_module_free(h_load_example_defs(de->d_name, &known[found].def, 1));
		else
			ir_module_free(h_load_example(de->d_name));
	}
	closedir(dir);
	cr_assert_geq(n, (int)TA_ARRAY_LEN(known));
}
