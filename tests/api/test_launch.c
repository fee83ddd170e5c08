/* test_launch.c — ta_runner / ta_launch, ta_binary_listing and
 * ta_binary_pass_times: a kernel with a scalar and an unspecialised shape
 * symbol run on the interpreter and the AMD emulator against values computed
 * here, and every error path (unknown backend, wrong backend for the
 * binary, NULL tensors, a runtime error, a missing GPU driver). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileasm.h"

static const char axpy[] =
	"kernel axpy(A: f32[N], B: f32[N], C: f32[N], s: f32) grid(ceildiv(N, 64)) threads(64) {\n"
	"  A_f = fragment f32[64]\n"
	"  B_f = fragment f32[64]\n"
	"  copy(A[bx * 64], A_f)\n"
	"  copy(B[bx * 64], B_f)\n"
	"  parallel (i) in (64) { B_f[i] = A_f[i] * s + B_f[i] }\n"
	"  copy(B_f, C[bx * 64])\n"
	"}\n";

static ta_binary *compile(ta_ctx *c, const char *target)
{
	ta_binary *b = NULL;
	ta_status st = ta_compile_source(c, "axpy.tile", axpy, sizeof axpy - 1, target, &b);
	cr_assert_eq(st, TA_OK, "%s: %s", target, ta_ctx_diagnostics(c));
	return b;
}

/* Runs axpy with N = 150 (three blocks, a ragged tail) and checks C. */
static void run_axpy(const char *backend, const char *target)
{
	ta_ctx *c = ta_ctx_create();
	ta_binary *b = compile(c, target);
	const ta_kernel_info *ki = ta_binary_kernel(b, 0);
	cr_assert_eq(ki->nargs, 5); /* A, B, C, s, then the symbol N */
	cr_assert_eq(ki->args[4].kind, TA_ARG_SYMBOL);
	cr_assert_eq(ki->args[0].rank, 1);
	cr_assert_eq(ki->args[0].dims[0], -1 - 4); /* N, argument 4 */
	cr_assert_eq(ki->args[3].rank, 0);
	enum { N = 150 };
	float A[N], B[N], C[N + 8];
	for (int i = 0; i < N; i++)
		A[i] = (float)i * 0.5f, B[i] = 3.0f - (float)i;
	for (int i = 0; i < N + 8; i++)
		C[i] = -1234.0f;
	ta_value v[5] = {{A, sizeof A, 0, 0}, {B, sizeof B, 0, 0}, {C, sizeof C, 0, 0}, {NULL, 0, 0, 0.25}, {NULL, 0, N, 0}};
	ta_runner *r = NULL;
	cr_assert_eq(ta_runner_open(c, backend, 0, &r), TA_OK, "%s", ta_ctx_diagnostics(c));
	cr_assert_str_eq(ta_runner_backend(r), backend);
	for (int rep = 0; rep < 2; rep++) { /* the second launch reuses the loaded code */
		cr_assert_eq(ta_launch(c, r, b, 0, v, NULL), TA_OK, "%s", ta_ctx_diagnostics(c));
		for (int i = 0; i < N; i++)
			cr_assert_float_eq(C[i], A[i] * 0.25f + B[i], 1e-6, "%s: C[%d] = %g", backend, i, C[i]);
		for (int i = N; i < N + 8; i++)
			cr_assert_eq(C[i], -1234.0f, "%s wrote past N at %d", backend, i);
	}
	cr_assert_eq(ta_runner_sync(c, r), TA_OK);
	ta_runner_close(r);
	ta_binary_release(b);
	ta_ctx_destroy(c);
}

Test(launch, interp_nvidia_binary) { run_axpy("interp", "sm_80"); }
Test(launch, interp_amd_binary) { run_axpy("interp", "gfx90a"); }
Test(launch, emu_gfx942) { run_axpy("emu", "gfx942"); }
Test(launch, emu_gfx1100) { run_axpy("emu", "gfx1100"); }

Test(launch, target_names)
{
	const char *want[] = {"gfx1100", "gfx90a", "gfx942", "sm_80", "sm_90a"};
	for (int i = 0; i < 5; i++)
		cr_assert_str_eq(ta_target_name(i), want[i]);
	cr_assert_null(ta_target_name(5));
	cr_assert_null(ta_target_name(-1));
}

Test(launch, errors)
{
	ta_ctx *c = ta_ctx_create();
	ta_runner *r = NULL;
	cr_assert_eq(ta_runner_open(c, "opencl", 0, &r), TA_ERR_INVALID);
	cr_assert(strstr(ta_ctx_diagnostics(c), "unknown backend 'opencl'"), "%s", ta_ctx_diagnostics(c));
	cr_assert_null(r);
	ta_ctx_clear_diagnostics(c);

	ta_binary *ptx = compile(c, "sm_90a");
	float X[64];
	ta_value v[5] = {{X, sizeof X, 0, 0}, {X, sizeof X, 0, 0}, {X, sizeof X, 0, 0}, {NULL, 0, 0, 1}, {NULL, 0, 64, 0}};
	cr_assert_eq(ta_runner_open(c, "emu", 0, &r), TA_OK);
	cr_assert_eq(ta_launch(c, r, ptx, 0, v, NULL), TA_ERR_INVALID);
	cr_assert(strstr(ta_ctx_diagnostics(c), "backend 'emu' runs AMD code objects; this binary is for sm_90a"),
	          "%s", ta_ctx_diagnostics(c));
	ta_ctx_clear_diagnostics(c);
	cr_assert_eq(ta_launch(c, r, ptx, 1, v, NULL), TA_ERR_INVALID); /* no kernel 1 */
	ta_runner_close(r);

	/* NULL tensor; then a tensor smaller than its shape: a runtime error. */
	cr_assert_eq(ta_runner_open(c, "interp", 0, &r), TA_OK);
	v[1].ptr = NULL;
	cr_assert_eq(ta_launch(c, r, ptx, 0, v, NULL), TA_ERR_INVALID);
	cr_assert(strstr(ta_ctx_diagnostics(c), "tensor argument 'B' is NULL"), "%s", ta_ctx_diagnostics(c));
	ta_ctx_clear_diagnostics(c);
	v[1].ptr = X;
	v[4].i = 1000;
	cr_assert_eq(ta_launch(c, r, ptx, 0, v, NULL), TA_ERR_RUNTIME);
	cr_assert(strstr(ta_ctx_diagnostics(c), "error:"), "%s", ta_ctx_diagnostics(c));
	ta_ctx_clear_diagnostics(c);
	ta_runner_close(r);
	ta_binary_release(ptx);

	/* GPU backends without their driver fail cleanly (with one, they open). */
	const char *gpu[] = {"cuda", "hsa"};
	for (int i = 0; i < 2; i++) {
		ta_status st = ta_runner_open(c, gpu[i], 0, &r);
		cr_assert(st == TA_OK || st == TA_ERR_RUNTIME, "%s: %d", gpu[i], st);
		if (st == TA_OK) {
			ta_runner_close(r);
		} else {
			cr_assert_null(r);
			cr_assert(strstr(ta_ctx_diagnostics(c), "error:"), "%s", ta_ctx_diagnostics(c));
		}
		ta_ctx_clear_diagnostics(c);
	}
	ta_ctx_destroy(c);
}

/* Tensor shapes in the argument table: constants, symbols, -D values. */
Test(launch, arg_dims)
{
	static const char src[] = "kernel k(A: f16[M, 64], B: f32[K, M]) grid(1) threads(32) { }\n";
	ta_ctx *c = ta_ctx_create();
	ta_binary *b = NULL;
	cr_assert_eq(ta_compile_source(c, "k.tile", src, sizeof src - 1, "gfx942", &b), TA_OK, "%s", ta_ctx_diagnostics(c));
	const ta_kernel_info *ki = ta_binary_kernel(b, 0);
	cr_assert_eq(ki->nargs, 4); /* A, B, M, K */
	cr_assert_str_eq(ki->args[2].name, "M");
	cr_assert_eq(ki->args[0].dims[0], -1 - 2);
	cr_assert_eq(ki->args[0].dims[1], 64);
	cr_assert_eq(ki->args[1].dims[0], -1 - 3);
	cr_assert_eq(ki->args[1].dims[1], -1 - 2);
	ta_binary_release(b);
	cr_assert_eq(ta_ctx_define(c, "M", 100), TA_OK);
	cr_assert_eq(ta_compile_source(c, "k.tile", src, sizeof src - 1, "sm_80", &b), TA_OK, "%s", ta_ctx_diagnostics(c));
	ki = ta_binary_kernel(b, 0);
	cr_assert_eq(ki->nargs, 3); /* A, B, K */
	cr_assert_eq(ki->args[0].dims[0], 100);
	cr_assert_eq(ki->args[1].dims[0], -1 - 2);
	cr_assert_eq(ki->args[1].dims[1], 100);
	ta_binary_release(b);
	ta_ctx_destroy(c);
}

Test(launch, listing_and_pass_times)
{
	ta_ctx *c = ta_ctx_create();
	const char *targets[] = {"gfx942", "sm_80"};
	for (int t = 0; t < 2; t++) {
		ta_binary *b = compile(c, targets[t]);
		char *l = ta_binary_listing(c, b);
		cr_assert(l, "%s", ta_ctx_diagnostics(c));
		if (t == 0) {
			cr_assert(!strncmp(l, "; kernel axpy: sgprs ", 21), "%.80s", l);
			cr_assert(strstr(l, "s_endpgm"), "no s_endpgm in the listing");
		} else {
			size_t n;
			cr_assert_str_eq(l, (const char *)ta_binary_data(b, &n));
		}
		ta_free(l);
		const char *names[16];
		double ms[16];
		int n = ta_binary_pass_times(b, names, ms, 16);
		cr_assert_geq(n, 2);
		cr_assert_str_eq(names[0], "frontend");
		cr_assert_str_eq(names[1], t == 0 ? "lower" : "ptx");
		for (int i = 0; i < n; i++)
			cr_assert(ms[i] >= 0 && ms[i] < 60000, "%s %g", names[i], ms[i]);
		cr_assert_eq(ta_binary_pass_times(b, NULL, NULL, 1), 1);
		ta_binary_release(b);
	}
	ta_ctx_destroy(c);
}
