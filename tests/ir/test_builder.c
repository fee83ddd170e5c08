/* test_builder.c — the public IR builder produces the same module as the
 * text front end, and reports misuse and invalid programs as diagnostics. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "tileasm.h"
#include "util.h"

/* Builds examples/vector_add.tile through the API. */
static ta_status build_vector_add(ta_ctx *ctx, ta_module **out, ta_dtype acc_type)
{
	ta_builder *b = ta_build_begin(ctx, "built.tile");
	const char *dims[] = {"N"};
	ta_build_kernel(b, "vector_add", 256);
	ta_buf A = ta_build_tensor(b, "A", TA_F32, 1, dims);
	ta_buf B = ta_build_tensor(b, "B", TA_F32, 1, dims);
	ta_buf C = ta_build_tensor(b, "C", TA_F32, 1, dims);
	ta_expr g[] = {ta_build_name(b, "N"), ta_build_int(b, 1024)};
	ta_expr grid = ta_build_op(b, TA_OP_CEILDIV, 2, g);
	ta_build_grid(b, 1, &grid);
	int64_t shape[] = {1024};
	ta_buf A_f = ta_build_alloc(b, "A_f", TA_FRAGMENT, TA_F32, 1, shape);
	ta_buf B_f = ta_build_alloc(b, "B_f", TA_FRAGMENT, acc_type, 1, shape);
	ta_expr o[] = {ta_build_name(b, "bx"), ta_build_int(b, 1024)};
	ta_expr off = ta_build_op(b, TA_OP_MUL, 2, o);
	ta_build_copy(b, A, 1, &off, A_f, 0, NULL);
	ta_build_copy(b, B, 1, &off, B_f, 0, NULL);
	const char *iv[] = {"i"};
	ta_expr ext = ta_build_int(b, 1024);
	ta_var i = ta_build_parallel(b, 1, iv, &ext);
	ta_expr idx = ta_build_ref(b, i);
	ta_expr sum[] = {ta_build_load(b, A_f, 1, &idx), ta_build_load(b, B_f, 1, &idx)};
	ta_build_store(b, B_f, 1, &idx, ta_build_op(b, TA_OP_ADD, 2, sum));
	ta_build_end(b);
	ta_build_copy(b, B_f, 0, NULL, C, 1, &off);
	return ta_build_finish(b, out);
}

/* Finishes b and expects the module to print as text parsed does. */
static void finish_as_text(ta_ctx *ctx, ta_builder *b, const char *text)
{
	ta_module *built = NULL, *parsed = NULL;
	cr_assert_eq(ta_build_finish(b, &built), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	cr_assert_eq(ta_parse(ctx, "text.tile", text, strlen(text), &parsed), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	char *x = ta_module_print(built), *y = ta_module_print(parsed);
	cr_expect_str_eq(x, y);
	ta_free(x);
	ta_free(y);
	ta_module_destroy(built);
	ta_module_destroy(parsed);
}

Test(builder, matches_the_text_front_end)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_module *built = NULL, *parsed = NULL;
	cr_assert_eq(build_vector_add(ctx, &built, TA_F32), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	char path[1024];
	snprintf(path, sizeof path, "%s/examples/vector_add.tile", getenv("TILEASM_SRCDIR"));
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text);
	cr_assert_eq(ta_parse(ctx, path, text, len, &parsed), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	char *a = ta_module_print(built), *b = ta_module_print(parsed);
	cr_expect_str_eq(a, b);
	ta_free(a);
	ta_free(b);
	free(text);
	ta_module_destroy(built);
	ta_module_destroy(parsed);
	ta_ctx_destroy(ctx);
}

Test(builder, verify_errors_point_into_the_canonical_text)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_module *m = NULL;
	/* B_f as f16 makes A_f[i] + B_f[i] mix f32 and f16. */
	cr_assert_eq(build_vector_add(ctx, &m, TA_F16), TA_ERR_VERIFY);
	cr_expect_null(m);
	const char *d = ta_ctx_diagnostics(ctx);
	cr_expect(strstr(d, "built.tile:8:21: error: operands of '+' have different types (f32 and f16)"), "%s", d);
	ta_ctx_destroy(ctx);
}

Test(builder, misuse_is_reported_and_later_calls_are_harmless)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_builder *b = ta_build_begin(ctx, "bad");
	/* A statement before any kernel, then calls with the failed handle. */
	cr_expect_eq(ta_build_barrier(b), TA_ERR_INVALID);
	cr_expect_eq(ta_build_int(b, 3), -1);
	cr_expect_eq(ta_build_load(b, 12345, 1, (ta_expr[]){-1}), -1);
	ta_module *m = NULL;
	cr_expect_eq(ta_build_finish(b, &m), TA_ERR_INVALID);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "bad: error: ta_build_barrier: no kernel is open"), "%s",
	          ta_ctx_diagnostics(ctx));
	/* An unclosed block. */
	ta_ctx_clear_diagnostics(ctx);
	b = ta_build_begin(ctx, "open");
	ta_build_kernel(b, "k", 32);
	ta_expr one = ta_build_int(b, 1);
	ta_build_grid(b, 1, &one);
	ta_build_if(b, ta_build_bool(b, 1));
	cr_expect_eq(ta_build_finish(b, &m), TA_ERR_INVALID);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "a block is still open"), "%s", ta_ctx_diagnostics(ctx));
	/* NULL everywhere. */
	cr_expect_null(ta_build_begin(NULL, "x"));
	cr_expect_eq(ta_build_kernel(NULL, "k", 1), TA_ERR_INVALID);
	cr_expect_eq(ta_build_finish(NULL, &m), TA_ERR_INVALID);
	ta_build_abort(NULL);
	ta_ctx_destroy(ctx);
}

/* The builder functions of the newer language parts — 2-D thread blocks,
 * views, vars, region copies, atomic_max/atomic_add with regions, a
 * reinterpret — give the module the text gives (O's dims are names:
 * ta_build_tensor takes constants or symbol names). */
Test(builder, regions_views_vars_threads_atomics_vectorized)
{
	static const char text[] =
		"kernel k(W: f32[K, K, F], O: f32[KK, F], C: i32[8], R: i32[4])\n"
		"    grid(1) threads(32, 2) {\n"
		"  W2 = view W[K * K, F]\n"
		"  T = shared f32[4, 16]\n"
		"  var acc: f32 = 0.0\n"
		"  copy(W2[1, 0 : 16], T[0, :])\n"
		"  acc = acc + T[0, 3]\n"
		"  if tx < 8 {\n"
		"    atomic_max(C[tx], ty)\n"
		"    vectorized v in 0 .. 2 {\n"
		"      atomic_add(C[v + 4], 1)\n"
		"    }\n"
		"  }\n"
		"  atomic_add(O[0 : 4, 0 : 16], T)\n"
		"  R[0] = reinterpret(i32, acc)\n"
		"}\n";
	ta_ctx *ctx = ta_ctx_create();
	ta_builder *b = ta_build_begin(ctx, "built.tile");
	ta_build_kernel(b, "k", 1);
	const char *d3[] = {"K", "K", "F"}, *d1[] = {"8"}, *d4[] = {"4"};
	ta_buf W = ta_build_tensor(b, "W", TA_F32, 3, d3);
	const char *dO[] = {"KK", "F"};
	ta_buf O = ta_build_tensor(b, "O", TA_F32, 2, dO);
	ta_buf C = ta_build_tensor(b, "C", TA_I32, 1, d1);
	ta_buf R = ta_build_tensor(b, "R", TA_I32, 1, d4);
	ta_expr one = ta_build_int(b, 1);
	ta_build_grid(b, 1, &one);
	cr_assert_eq(ta_build_threads(b, 32, 2, 1), TA_OK);
	ta_expr k2[] = {ta_build_name(b, "K"), ta_build_name(b, "K")};
	ta_expr vd[] = {ta_build_op(b, TA_OP_MUL, 2, k2), ta_build_name(b, "F")};
	ta_buf W2 = ta_build_view(b, "W2", W, 2, vd);
	ta_buf T = ta_build_alloc(b, "T", TA_SHARED, TA_F32, 2, (int64_t[]){4, 16});
	ta_buf acc = ta_build_var(b, "acc", TA_F32, ta_build_float(b, 0.0));
	ta_index si[] = {{TA_INDEX_AT, ta_build_int(b, 1), -1}, {TA_INDEX_RANGE, ta_build_int(b, 0), ta_build_int(b, 16)}};
	ta_index di[] = {{TA_INDEX_AT, ta_build_int(b, 0), -1}, {TA_INDEX_ALL, -1, -1}};
	cr_assert_eq(ta_build_copy_region(b, W2, 2, si, T, 2, di), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	ta_expr t03[] = {ta_build_int(b, 0), ta_build_int(b, 3)};
	ta_expr s[] = {ta_build_load(b, acc, 0, NULL), ta_build_load(b, T, 2, t03)};
	cr_assert_eq(ta_build_store(b, acc, 0, NULL, ta_build_op(b, TA_OP_ADD, 2, s)), TA_OK);
	ta_expr lt[] = {ta_build_name(b, "tx"), ta_build_int(b, 8)};
	ta_build_if(b, ta_build_op(b, TA_OP_LT, 2, lt));
	ta_index ci = {TA_INDEX_AT, ta_build_name(b, "tx"), -1};
	cr_assert_eq(ta_build_atomic(b, TA_ATOMIC_MAX, C, 1, &ci, -1, ta_build_name(b, "ty")), TA_OK);
	cr_assert_geq(ta_build_for(b, TA_VECTORIZED, "v", ta_build_int(b, 0), ta_build_int(b, 2), 0), 0);
	ta_expr v4[] = {ta_build_name(b, "v"), ta_build_int(b, 4)};
	ta_index vi = {TA_INDEX_AT, ta_build_op(b, TA_OP_ADD, 2, v4), -1};
	cr_assert_eq(ta_build_atomic(b, TA_ATOMIC_ADD, C, 1, &vi, -1, ta_build_int(b, 1)), TA_OK);
	ta_build_end(b);
	ta_build_end(b);
	ta_index oi[] = {{TA_INDEX_RANGE, ta_build_int(b, 0), ta_build_int(b, 4)},
	                 {TA_INDEX_RANGE, ta_build_int(b, 0), ta_build_int(b, 16)}};
	cr_assert_eq(ta_build_atomic(b, TA_ATOMIC_ADD, O, 2, oi, T, -1), TA_OK);
	ta_expr r0 = ta_build_int(b, 0);
	ta_build_store(b, R, 1, &r0, ta_build_reinterpret(b, TA_I32, ta_build_load(b, acc, 0, NULL)));
	finish_as_text(ctx, b, text);
	ta_ctx_destroy(ctx);
}

Test(builder, new_functions_check_their_arguments)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_builder *b = ta_build_begin(ctx, "bad");
	ta_build_kernel(b, "k", 64);
	cr_expect_eq(ta_build_threads(b, 64, 32, 1), TA_ERR_INVALID); /* 2048 threads */
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "ta_build_threads: a block has 1 to 1024 threads"), "%s",
	          ta_ctx_diagnostics(ctx));
	ta_build_abort(b);
	ta_ctx_clear_diagnostics(ctx);
	b = ta_build_begin(ctx, "bad");
	ta_build_kernel(b, "k", 64);
	const char *d[] = {"N"};
	ta_buf A = ta_build_tensor(b, "A", TA_F32, 1, d);
	ta_index bad = {7, ta_build_int(b, 0), -1};
	cr_expect_eq(ta_build_atomic(b, TA_ATOMIC_MIN, A, 1, &bad, -1, ta_build_float(b, 1.0)), TA_ERR_INVALID);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "ta_build_atomic: bad index"), "%s", ta_ctx_diagnostics(ctx));
	ta_build_abort(b);
	ta_ctx_clear_diagnostics(ctx);
	b = ta_build_begin(ctx, "bad");
	ta_build_kernel(b, "k", 64);
	cr_expect_eq(ta_build_var(b, "v", 0, -1), -1); /* neither a dtype nor a value */
	ta_build_abort(b);
	ta_ctx_destroy(ctx);
}

/* ta_build_use_swizzle: the same module as the text's use_swizzle, its
 * misuse refused at the call, a bad panel size at ta_build_finish. */
Test(builder, use_swizzle)
{
	static const char text[] = "kernel k(A: f32[M, N]) grid(ceildiv(N, 64), ceildiv(M, 64)) threads(64) {\n"
	                           "  use_swizzle(4, order=col)\n"
	                           "  A[by, bx] = 1.0\n"
	                           "}\n";
	ta_ctx *ctx = ta_ctx_create();
	for (int bad_panel = 0; bad_panel < 2; bad_panel++) {
		ta_builder *b = ta_build_begin(ctx, "built.tile");
		ta_build_kernel(b, "k", 64);
		const char *d[] = {"M", "N"};
		ta_buf A = ta_build_tensor(b, "A", TA_F32, 2, d);
		ta_expr gx[] = {ta_build_name(b, "N"), ta_build_int(b, 64)}, gy[] = {ta_build_name(b, "M"), ta_build_int(b, 64)};
		ta_expr g[] = {ta_build_op(b, TA_OP_CEILDIV, 2, gx), ta_build_op(b, TA_OP_CEILDIV, 2, gy)};
		ta_build_grid(b, 2, g);
		cr_assert_eq(ta_build_use_swizzle(b, ta_build_int(b, bad_panel ? -2 : 4), TA_RASTER_COL), TA_OK);
		ta_expr i[] = {ta_build_name(b, "by"), ta_build_name(b, "bx")};
		ta_build_store(b, A, 2, i, ta_build_float(b, 1.0));
		if (!bad_panel) {
			finish_as_text(ctx, b, text);
			continue;
		}
		ta_module *built = NULL;
		cr_expect_eq(ta_build_finish(b, &built), TA_ERR_VERIFY);
		cr_expect(strstr(ta_ctx_diagnostics(ctx), "built.tile:3:15: error: use_swizzle's panel size is -2"), "%s",
			  ta_ctx_diagnostics(ctx));
	}
	ta_ctx_clear_diagnostics(ctx);
	ta_builder *b = ta_build_begin(ctx, "bad");
	ta_build_kernel(b, "k", 64);
	cr_expect_eq(ta_build_use_swizzle(b, ta_build_int(b, 2), (ta_raster)7), TA_ERR_INVALID);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "ta_build_use_swizzle: bad panel size or order"), "%s",
		  ta_ctx_diagnostics(ctx));
	ta_build_abort(b);
	ta_ctx_clear_diagnostics(ctx);
	b = ta_build_begin(ctx, "bad");
	ta_build_kernel(b, "k", 64);
	cr_expect_eq(ta_build_use_swizzle(b, ta_build_int(b, 2), TA_RASTER_ROW), TA_OK);
	cr_expect_eq(ta_build_use_swizzle(b, ta_build_int(b, 2), TA_RASTER_ROW), TA_ERR_INVALID);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "ta_build_use_swizzle: use_swizzle goes once at the top level"), "%s",
		  ta_ctx_diagnostics(ctx));
	ta_build_abort(b);
	ta_ctx_destroy(ctx);
}
