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
