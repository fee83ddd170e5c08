/* test_bounds.c — total work bounds (issue 18.3): the interpreter counts
 * statements, iterations, blocks and tile elements over the whole run, the
 * emulator counts instructions over all waves and workgroups of a launch;
 * past the bound both stop with "work bound exceeded".  The repros
 * (tests/interp/bounds/: a 2^31-1 cubed grid, two nested 2^31-1 loops) ran
 * forever before. */
#include <stdlib.h>
#include <sys/wait.h>

#include "diag.h"
#include "emu.h"
#include "harness.h"
#include "tileasm.h"
#include "util.h"
#include "testutil.h"

static char *src_path(const char *rel)
{
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root, "TILEASM_SRCDIR is not set (run through meson test)");
	char *p = malloc(strlen(root) + strlen(rel) + 2);
	sprintf(p, "%s/%s", root, rel);
	return p;
}

static void bounded_fails(const char *rel)
{
	Module *m = load_src(rel, NULL, 0);
	float A[16] = {0};
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	Diag d;
	diag_init(&d);
	cr_assert_eq(interp_run_bounded(m, 0, a.args, 100000, &d), -1, "%s ran to completion", rel);
	cr_assert(strstr(diag_text(&d), "error: work bound exceeded: more than 100000 interpreter steps"), "%s: %s", rel,
		  diag_text(&d));
	diag_free(&d);
	ir_module_free(m);
}

Test(bounds, interpreter_huge_grid)
{
	bounded_fails("tests/interp/bounds/biggrid.tile");
}

Test(bounds, interpreter_nested_loops)
{
	bounded_fails("tests/interp/bounds/bigloop.tile");
}

Test(bounds, interpreter_within_the_bound)
{
	/* vector_add at N = 1000: 4 blocks of 256 iterations and a few
	 * statements, well under 10,000 steps; 1,000 are too few */
	Module *m = h_load_example("vector_add.tile");
	static float A[1000], B[1000], C[1000];
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "B", B, sizeof B);
	h_tensor(&a, "C", C, sizeof C);
	h_int(&a, "N", 1000);
	Diag d;
	diag_init(&d);
	cr_assert_eq(interp_run_bounded(m, 0, a.args, 10000, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(interp_run_bounded(m, 0, a.args, 1000, &d), -1);
	cr_assert(strstr(diag_text(&d), "work bound exceeded"), "%s", diag_text(&d));
	diag_free(&d);
	ir_module_free(m);
}

Test(bounds, cli_max_steps)
{
	const char *exe = getenv("TILEASM");
	cr_assert(exe, "TILEASM is not set");
	char *grid = src_path("tests/interp/bounds/biggrid.tile"), *loop = src_path("tests/interp/bounds/bigloop.tile");
	char cmd[4096], *out;
	const char *cases[][2] = {{grid, "--backend=interp"}, {grid, "--backend=emu --target=gfx942"},
				  {loop, "--backend=emu --target=gfx90a"}, {loop, "--backend=interp"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(cmd, sizeof cmd, "%s run %s %s --max-steps 50000 2>&1", exe, cases[i][0], cases[i][1]);
		int rc = run_out(cmd, &out);
		cr_expect(rc == 1 && strstr(out, "error: work bound exceeded: more than 50000 interpreter steps"),
			  "%s: exit %d:\n%s", cmd, rc, out);
		free(out);
	}
	const char *bad[] = {"0", "-5", "abc", "99999999999999999999999"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(cmd, sizeof cmd, "%s run %s --backend=interp --max-steps=%s 2>&1", exe, grid, bad[i]);
		int rc = run_out(cmd, &out);
		cr_expect(rc != 0 && strstr(out, "--max-steps needs a positive integer"), "%s: exit %d:\n%s", cmd, rc, out);
		free(out);
	}
	free(grid);
	free(loop);
}

Test(bounds, emulator_counts_all_workgroups)
{
	/* vector_add over 400 workgroups: each wave runs a few dozen
	 * instructions (far below the per-wave limit), the launch thousands */
	char *path = src_path("examples/vector_add.tile");
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text);
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *b = NULL;
	cr_assert_eq(ta_compile_source(ctx, path, text, len, "gfx942", &b), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	size_t n;
	const void *code = ta_binary_data(b, &n);
	const ta_kernel_info *k = ta_binary_kernel(b, 0);
	enum { N = 400 * 256 };
	size_t bytes = (size_t)N * 4;
	unsigned char ka[256] = {0};
	int64_t vals[4] = {0, 0, 0, N};
	uint32_t grid[3], block[3] = {(uint32_t)k->threads, 1, 1};
	cr_assert_eq(ta_binary_grid(b, 0, vals, grid), TA_OK);
	for (int limited = 0; limited < 2; limited++) {
		EmuDevice *dev = emu_create(TA_TARGET_GFX942);
		Diag d;
		diag_init(&d);
		uint64_t dA = emu_alloc(dev, bytes), dB = emu_alloc(dev, bytes), dC = emu_alloc(dev, bytes);
		memcpy(ka + k->args[0].offset, &dA, 8);
		memcpy(ka + k->args[1].offset, &dB, 8);
		memcpy(ka + k->args[2].offset, &dC, 8);
		int32_t nn = N;
		memcpy(ka + k->args[3].offset, &nn, 4);
		float *z = calloc(N, 4);
		cr_assert_eq(emu_write(dev, dA, z, bytes, &d) || emu_write(dev, dB, z, bytes, &d) ||
				     emu_load(dev, code, n, &d),
			     0, "%s", diag_text(&d));
		free(z);
		if (limited)
			emu_set_work_limit(dev, 5000);
		int rc = emu_launch(dev, k->name, grid, block, ka, k->kernarg_size, 0, &d);
		if (limited)
			cr_expect(rc == -1 && strstr(diag_text(&d), "work bound exceeded: more than 5000 instructions"), "%s",
				  diag_text(&d));
		else
			cr_expect(rc == 0 && emu_stats(dev)->insns > 5000, "%s", diag_text(&d));
		emu_destroy(dev);
		diag_free(&d);
	}
	/* the same through the public API */
	ta_emu *e = NULL;
	cr_assert_eq(ta_emu_create(ctx, "gfx942", &e), TA_OK);
	uint64_t da[3];
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(ta_emu_alloc(e, bytes, &da[i]), TA_OK);
		memcpy(ka + k->args[i].offset, &da[i], 8);
	}
	cr_assert_eq(ta_emu_load(e, code, n), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	ta_emu_set_max_steps(e, 5000);
	cr_expect_eq(ta_emu_launch(e, k->name, grid, block, ka, k->kernarg_size, 0), TA_ERR_RUNTIME);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "work bound exceeded"), "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_clear_diagnostics(ctx);
	ta_emu_set_max_steps(e, 0);
	cr_expect_eq(ta_emu_launch(e, k->name, grid, block, ka, k->kernarg_size, 0), TA_OK, "%s",
		     ta_ctx_diagnostics(ctx));
	ta_emu_destroy(e);
	ta_binary_release(b);
	ta_ctx_destroy(ctx);
	free(text);
	free(path);
}
