/* test_ir.c — the Tile IR front end: examples round-trip through the
 * printer, malformed inputs give precise diagnostics, and the C API holds
 * its contracts (no crash on NULL, -D specialisation, diagnostics). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir.h"
#include "tileasm.h"

static char *src_path(const char *rel)
{
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root, "TILEASM_SRCDIR is not set (run through meson test)");
	size_t n = strlen(root) + strlen(rel) + 2;
	char *p = malloc(n);
	snprintf(p, n, "%s/%s", root, rel);
	return p;
}

/* Parses, specialises (optional) and verifies; asserts success. */
static Module *load_ok(const char *name, const char *text, const Define *defs, int ndefs)
{
	Diag d;
	diag_init(&d);
	Module *m = ir_parse(name, text, strlen(text), &d);
	cr_assert(m, "parse of %s failed:\n%s", name, diag_text(&d));
	cr_assert(ir_specialize(m, defs, ndefs, &d) == 0, "%s", diag_text(&d));
	cr_assert(ir_verify(m, &d) == 0, "verify of %s failed:\n%s", name, diag_text(&d));
	diag_free(&d);
	return m;
}

static char *print_module(const Module *m)
{
	StrBuf sb = {0};
	ir_print(m, &sb);
	return sb_take(&sb);
}

Test(ir, examples_round_trip)
{
	char *dir = src_path("examples");
	DIR *dp = opendir(dir);
	cr_assert(dp, "cannot open %s", dir);
	int count = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		if (n < 6 || strcmp(de->d_name + n - 5, ".tile"))
			continue;
		char rel[512];
		snprintf(rel, sizeof rel, "examples/%s", de->d_name);
		char *path = src_path(rel);
		char *text = read_file(path, NULL);
		cr_assert(text, "cannot read %s", path);
		Module *a = load_ok(path, text, NULL, 0);
		char *p1 = print_module(a);
		Module *b = load_ok("printed", p1, NULL, 0);
		cr_expect(ir_equal(a, b), "%s: printed text parses to different IR:\n%s", path, p1);
		char *p2 = print_module(b);
		cr_expect_str_eq(p1, p2, "%s: printer is not idempotent", path);
		free(p1);
		free(p2);
		ir_module_free(a);
		ir_module_free(b);
		free(text);
		free(path);
		count++;
	}
	closedir(dp);
	free(dir);
	cr_expect_geq(count, 8, "expected at least 8 examples, found %d", count);
}

/* ir_equal must notice a change, or the round-trip test proves nothing. */
Test(ir, equal_detects_differences)
{
	const char *a = "kernel k(A: f32[N]) grid(1) threads(64) {\n  let x = 1 + 2 * bx\n}\n";
	const char *b = "kernel k(A: f32[N]) grid(1) threads(64) {\n  let x = (1 + 2) * bx\n}\n";
	Module *ma = load_ok("a", a, NULL, 0), *mb = load_ok("b", b, NULL, 0);
	cr_expect(!ir_equal(ma, mb));
	char *pb = print_module(mb);
	cr_expect(strstr(pb, "(1 + 2) * bx"), "parentheses lost: %s", pb);
	free(pb);
	ir_module_free(ma);
	ir_module_free(mb);
}

Test(ir, float_literals_round_trip_exactly)
{
	const char *t = "kernel k(A: f32[N]) grid(1) threads(64) {\n"
	                "  X = local f64[4]\n"
	                "  X[0] = 0.1\n  X[1] = -2.5e-300\n  X[2] = -inf\n  X[3] = 1e300\n}\n";
	Module *a = load_ok("f", t, NULL, 0);
	char *p = print_module(a);
	Module *b = load_ok("p", p, NULL, 0);
	cr_expect(ir_equal(a, b), "%s", p);
	cr_expect(strstr(p, "X[0] = 0.1\n"), "shortest form expected: %s", p);
	free(p);
	ir_module_free(a);
	ir_module_free(b);
}

/* Each tests/ir/errors/NAME.tile starts with "# expect: LINE:COL: error: MSG". */
Test(ir, diagnostics)
{
	char *dir = src_path("tests/ir/errors");
	DIR *dp = opendir(dir);
	cr_assert(dp, "cannot open %s", dir);
	int count = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		if (n < 6 || strcmp(de->d_name + n - 5, ".tile"))
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		char *text = read_file(path, NULL);
		cr_assert(text);
		cr_assert(!strncmp(text, "# expect: ", 10), "%s: missing '# expect:' line", path);
		char *eol = strchr(text, '\n');
		char want[2048];
		snprintf(want, sizeof want, "%s:%.*s\n", path, (int)TA_MIN(eol - text - 10, 500), text + 10);
		ta_ctx *ctx = ta_ctx_create();
		ta_module *m = NULL;
		ta_status st = ta_parse(ctx, path, text, strlen(text), &m);
		const char *diag = ta_ctx_diagnostics(ctx);
		cr_expect(st == TA_ERR_PARSE || st == TA_ERR_VERIFY, "%s: accepted a malformed program", path);
		cr_expect(m == NULL);
		cr_expect(!strncmp(diag, want, strlen(want)), "%s:\nwant: %sgot:  %s", de->d_name, want, diag);
		/* A caret line follows every positioned error. */
		cr_expect(strstr(diag, "^\n") || strstr(want, ":0:0:"), "%s: no caret line:\n%s", de->d_name, diag);
		ta_module_destroy(m);
		ta_ctx_destroy(ctx);
		free(text);
		count++;
	}
	closedir(dp);
	free(dir);
	cr_expect_geq(count, 20, "expected at least 20 error cases, found %d", count);
}

Test(ir, specialization_turns_symbols_into_constants)
{
	char *path = src_path("examples/gemm.tile");
	char *text = read_file(path, NULL);
	Module *m = load_ok(path, text, NULL, 0);
	/* A, B, C then the symbols M, K, N in order of first appearance. */
	const Kernel *k = &m->kernels.data[0];
	cr_assert_eq(k->nargs, 6);
	cr_expect_str_eq(m->vars.data[k->args[3].var].name, "M");
	cr_expect_str_eq(m->vars.data[k->args[4].var].name, "K");
	cr_expect_str_eq(m->vars.data[k->args[5].var].name, "N");
	ir_module_free(m);
	Define defs[] = {{"M", 512}, {"K", 256}};
	m = load_ok(path, text, defs, 2);
	k = &m->kernels.data[0];
	cr_assert_eq(k->nargs, 4);
	cr_expect_str_eq(m->vars.data[k->args[3].var].name, "N");
	int64_t v;
	cr_expect(ir_const_int(m, k->grid[1], &v) && v == 4, "grid.y = ceildiv(512, 128) = 4");
	cr_expect(!ir_const_int(m, k->grid[0], &v), "grid.x depends on N");
	ir_module_free(m);
	free(text);
	free(path);
}

/* threads(...) may name shape symbols; -D changes the block size (it was
 * once fixed at parse time with the default), and the printer keeps the
 * expression. */
Test(ir, threads_follow_defines)
{
	const char *t = "kernel k(A: f32[N = 64], X: f32[BM = 32]) grid(1) threads(BM * 2, 2) {\n}\n";
	Module *m = load_ok("t", t, NULL, 0);
	cr_expect_eq(m->kernels.data[0].threads, 128);
	cr_expect_eq(m->kernels.data[0].tdim[0], 64);
	char *p = print_module(m);
	cr_expect(strstr(p, "threads(BM * 2, 2)"), "%s", p);
	Module *b = load_ok("p", p, NULL, 0);
	cr_expect(ir_equal(m, b), "%s", p);
	free(p);
	ir_module_free(m);
	ir_module_free(b);
	Define defs[] = {{"BM", 128}};
	m = load_ok("t", t, defs, 1);
	cr_expect_eq(m->kernels.data[0].threads, 512);
	cr_expect_eq(m->kernels.data[0].tdim[0], 256);
	cr_expect_eq(m->kernels.data[0].tdim[1], 2);
	ir_module_free(m);
	/* -D BM=512 gives 2048 threads: the same error as a literal's */
	ta_ctx *ctx = ta_ctx_create();
	ta_module *tm = NULL;
	cr_assert_eq(ta_ctx_define(ctx, "BM", 512), TA_OK);
	cr_expect_eq(ta_parse(ctx, "t.tile", t, strlen(t), &tm), TA_ERR_VERIFY);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "t.tile:1:67: error: threads(...) gives 2048 threads"), "%s",
	          ta_ctx_diagnostics(ctx));
	cr_expect_null(tm);
	ta_ctx_destroy(ctx);
}

Test(ir, define_errors)
{
	ta_ctx *ctx = ta_ctx_create();
	const char *t = "kernel k(A: f32[N], s: f32) grid(1) threads(64) {\n}\n";
	ta_module *m = NULL;
	cr_assert_eq(ta_ctx_define(ctx, "Q", 3), TA_OK);
	cr_expect_eq(ta_parse(ctx, "d.tile", t, strlen(t), &m), TA_ERR_VERIFY);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "-D Q: no shape symbol named 'Q'"), "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_destroy(ctx);
	ctx = ta_ctx_create();
	cr_assert_eq(ta_ctx_define(ctx, "s", 3), TA_OK);
	cr_expect_eq(ta_parse(ctx, "d.tile", t, strlen(t), &m), TA_ERR_VERIFY);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "'s' is a scalar parameter"), "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_destroy(ctx);
}

Test(api, null_and_bad_arguments_are_errors_not_crashes)
{
	ta_module *m = (ta_module *)0x1;
	cr_expect_eq(ta_parse(NULL, "x", "", 0, &m), TA_ERR_INVALID);
	ta_ctx *ctx = ta_ctx_create();
	cr_expect_eq(ta_parse(ctx, "x", NULL, 0, &m), TA_ERR_INVALID);
	cr_expect_eq(ta_ctx_define(ctx, "", 1), TA_ERR_INVALID);
	cr_expect_str_eq(ta_ctx_diagnostics(NULL), "");
	cr_expect_null(ta_module_print(NULL));
	cr_expect_eq(ta_module_kernel_count(NULL), 0);
	ta_module_destroy(NULL);
	ta_ctx_destroy(NULL);
	/* Binary junk must produce a diagnostic, not a crash. */
	const char junk[] = "kernel \x01\xff\x00 grid";
	cr_expect_eq(ta_parse(ctx, "junk", junk, sizeof junk, &m), TA_ERR_PARSE);
	cr_expect(strstr(ta_ctx_diagnostics(ctx), "junk:1:8: error:"), "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_destroy(ctx);
}

Test(api, module_queries)
{
	ta_ctx *ctx = ta_ctx_create();
	const char *t = "kernel a(X: f32[4]) grid(1) threads(32) {\n}\nkernel b(X: f32[4]) grid(2) threads(32) {\n}\n";
	ta_module *m = NULL;
	cr_assert_eq(ta_parse(ctx, "two.tile", t, strlen(t), &m), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	cr_expect_eq(ta_module_kernel_count(m), 2);
	cr_expect_str_eq(ta_module_kernel_name(m, 1), "b");
	cr_expect_null(ta_module_kernel_name(m, 2));
	char *p = ta_module_print(m);
	cr_expect_str_eq(p, "kernel a(X: f32[4])\n    grid(1) threads(32) {\n}\n\n"
	                    "kernel b(X: f32[4])\n    grid(2) threads(32) {\n}\n");
	ta_free(p);
	ta_module_destroy(m);
	ta_ctx_destroy(ctx);
}

/* Inputs the fuzzer once broke (tests/fuzz/regress/frontend/): each must
 * either be rejected with a diagnostic or round-trip through the printer. */
Test(ir, fuzz_regressions)
{
	char *dir = src_path("tests/fuzz/regress/frontend");
	DIR *dp = opendir(dir);
	cr_assert(dp, "cannot open %s", dir);
	int count = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		size_t len;
		char *text = read_file(path, &len);
		cr_assert(text);
		Diag d;
		diag_init(&d);
		Module *a = ir_parse(path, text, len, &d);
		if (a && ir_verify(a, &d) == 0) {
			char *p1 = print_module(a);
			Module *b = load_ok("printed", p1, NULL, 0);
			cr_expect(ir_equal(a, b), "%s: printed text parses to different IR:\n%s", de->d_name, p1);
			ir_module_free(b);
			free(p1);
		} else {
			cr_expect(d.nerrors > 0, "%s: rejected without a diagnostic", de->d_name);
		}
		ir_module_free(a);
		diag_free(&d);
		free(text);
		count++;
	}
	closedir(dp);
	free(dir);
	cr_expect_geq(count, 1);
}

/* Parses text; returns NULL and the diagnostics in *msg (caller frees) on failure. */
static Module *parse_text(const char *text, char **msg)
{
	Diag d;
	diag_init(&d);
	Module *m = ir_parse("t.tile", text, strlen(text), &d);
	*msg = strdup(diag_text(&d));
	diag_free(&d);
	return m;
}

/* The parser's hashed name table: scopes, hidden loop variables, kernel names. */
Test(ir, name_lookup_follows_scopes)
{
	static const struct {
		const char *text, *err; /* err NULL: must parse */
	} cases[] = {
		/* A name goes out of scope with its block and may be declared again. */
		{"kernel k(A: f32[N]) grid(1) threads(64) {\n serial i in 0 .. 2 { let a = i }\n"
		 " serial j in 0 .. 2 { let a = j + 1 }\n let a = 3\n}\n", NULL},
		/* ... but is unknown after it. */
		{"kernel k(A: f32[N]) grid(1) threads(64) {\n serial i in 0 .. 2 { let a = i }\n let b = a\n}\n",
		 "3:10: error: use of undeclared name 'a'"},
		/* A loop's own variable is not visible in its bounds. */
		{"kernel k(A: f32[N]) grid(1) threads(64) {\n serial i in 0 .. i { }\n}\n",
		 "2:19: error: use of undeclared name 'i'"},
		/* Shadowing an outer name is a redefinition. */
		{"kernel k(A: f32[N]) grid(1) threads(64) {\n let a = 1\n serial i in 0 .. 2 { let a = 2 }\n}\n",
		 "3:27: error: redefinition of 'a'"},
		/* Names are per kernel; kernel names per file. */
		{"kernel k(A: f32[N]) grid(1) threads(64) { let a = 1 }\n"
		 "kernel l(A: f32[N]) grid(1) threads(64) { let a = 2 }\n", NULL},
		{"kernel k(A: f32[N]) grid(1) threads(64) { }\nkernel l(A: f32[N]) grid(1) threads(64) { }\n"
		 "kernel k(A: f32[N]) grid(1) threads(64) { }\n",
		 "3:8: error: redefinition of kernel 'k'"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *msg;
		Module *m = parse_text(cases[c].text, &msg);
		if (cases[c].err) {
			cr_expect(!m, "case %zu parsed", c);
			cr_expect(strstr(msg, cases[c].err), "case %zu: want %s, got %s", c, cases[c].err, msg);
		} else {
			cr_expect(m, "case %zu: %s", c, msg);
		}
		if (m)
			ir_module_free(m);
		free(msg);
	}
	/* Many names (the table grows many times): the first one is still
	 * found, as a use and as a redefinition at the end. */
	StrBuf sb = {0};
	sb_puts(&sb, "kernel k(A: f32[N]) grid(1) threads(64) {\n");
	for (int i = 0; i < 20000; i++)
		sb_printf(&sb, " let v%d = %d\n", i, i);
	sb_puts(&sb, " let last = v0 + v19999\n let v0 = 1\n}\n");
	char *text = sb_take(&sb), *msg;
	Module *m = parse_text(text, &msg);
	cr_expect(!m);
	cr_expect(strstr(msg, "20003:6: error: redefinition of 'v0'"), "got %s", msg);
	if (m)
		ir_module_free(m);
	free(msg);
	free(text);
}
