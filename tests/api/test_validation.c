/* test_validation.c — what a JIT host passes in is checked (issue 18):
 * builder names (no Tile IR injection), shared expression handles and
 * nesting depth bounded before printing, values that do not fit i32
 * rejected (-D, dimension literals, ta_binary_grid, --arg), and -D values
 * that can be removed (ta_ctx_undefine). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tileasm.h"
#include "util.h"
#include "testutil.h"

/* An empty kernel named `name` with one tensor; returns the finish status. */
static ta_status build_named(ta_ctx *ctx, const char *kname, const char *tname, ta_module **m)
{
	ta_builder *b = ta_build_begin(ctx, "names.tile");
	const char *dims[] = {"16"};
	ta_build_kernel(b, kname, 32);
	ta_build_tensor(b, tname, TA_F32, 1, dims);
	ta_expr one = ta_build_int(b, 1);
	ta_build_grid(b, 1, &one);
	return ta_build_finish(b, m);
}

Test(validation, builder_names)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_module *m = NULL;
	/* the injection: a second kernel through a kernel name */
	cr_assert_eq(build_named(ctx, "k(A: f32[16]) grid(1) threads(32) { }\nkernel evil", "A", &m), TA_ERR_INVALID);
	cr_assert_null(m);
	cr_assert(strstr(ta_ctx_diagnostics(ctx), "ta_build_kernel: bad name"), "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_clear_diagnostics(ctx);
	char *longname = malloc(1026);
	memset(longname, 'a', 1025);
	longname[1025] = 0;
	const char *bad[] = {"", "a b", "9x", "x-y", "kernel", "grid", "f32", "bx", "A]", longname};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(build_named(ctx, "k", bad[i], &m), TA_ERR_INVALID, "tensor name '%.20s' accepted", bad[i]);
		cr_expect(strstr(ta_ctx_diagnostics(ctx), "ta_build_tensor: bad name"), "%s", ta_ctx_diagnostics(ctx));
		ta_ctx_clear_diagnostics(ctx);
	}
	longname[1024] = 0; /* 1024 characters: the longest name */
	cr_assert_eq(build_named(ctx, longname, "_A9", &m), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	cr_assert_eq(ta_module_kernel_count(m), 1);
	cr_assert_str_eq(ta_module_kernel_name(m, 0), longname);
	ta_module_destroy(m);
	free(longname);
	/* loop and let names too */
	ta_builder *b = ta_build_begin(ctx, "names.tile");
	ta_build_kernel(b, "k", 32);
	ta_expr one = ta_build_int(b, 1);
	ta_build_grid(b, 1, &one);
	cr_assert_lt(ta_build_for(b, TA_SERIAL, "i in 0 .. 1 { }\nlet j", ta_build_int(b, 0), ta_build_int(b, 4), 0), 0);
	cr_assert_eq(ta_build_finish(b, &m), TA_ERR_INVALID);
	cr_assert(strstr(ta_ctx_diagnostics(ctx), "ta_build_for: bad name"), "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_destroy(ctx);
}

/* e = e + e, n times, stored into A[0]: a DAG of n + 1 handles. */
static ta_status build_dag(ta_ctx *ctx, int n, ta_module **m)
{
	ta_builder *b = ta_build_begin(ctx, "dag.tile");
	const char *dims[] = {"16"};
	ta_build_kernel(b, "k", 32);
	ta_buf A = ta_build_tensor(b, "A", TA_F32, 1, dims);
	ta_expr one = ta_build_int(b, 1);
	ta_build_grid(b, 1, &one);
	int64_t shape[] = {16};
	ta_buf F = ta_build_alloc(b, "F", TA_FRAGMENT, TA_F32, 1, shape);
	ta_expr z = ta_build_int(b, 0);
	ta_expr e = ta_build_load(b, F, 1, &z);
	for (int i = 0; i < n; i++) {
		ta_expr two[] = {e, e};
		e = ta_build_op(b, TA_OP_ADD, 2, two);
	}
	ta_build_store(b, F, 1, &z, e);
	ta_build_copy(b, F, 0, NULL, A, 1, &z);
	return ta_build_finish(b, m);
}

Test(validation, shared_handles_are_bounded)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_module *m = NULL;
	/* small sharing prints as a tree and works */
	cr_assert_eq(build_dag(ctx, 6, &m), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	ta_binary *bin = NULL;
	cr_assert_eq(ta_compile(ctx, m, "gfx942", &bin), TA_OK, "%s", ta_ctx_diagnostics(ctx));
	ta_binary_release(bin);
	ta_module_destroy(m);
	/* 2^30 leaves used to hang ta_build_finish; now refused at once */
	for (int n = 20; n <= 40; n += 10) {
		cr_assert_eq(build_dag(ctx, n, &m), TA_ERR_INVALID, "n = %d", n);
		cr_assert(strstr(ta_ctx_diagnostics(ctx), "expression too large when printed as a tree"), "%s",
			  ta_ctx_diagnostics(ctx));
		ta_ctx_clear_diagnostics(ctx);
	}
	ta_ctx_destroy(ctx);
}

Test(validation, nesting_is_bounded_before_printing)
{
	/* 100,000 nested expressions or ifs crashed ta_build_finish (recursion
	 * in the printer); the builder stops at the language's 256 levels */
	ta_ctx *ctx = ta_ctx_create();
	for (int kind = 0; kind < 2; kind++) {
		ta_builder *b = ta_build_begin(ctx, "deep.tile");
		const char *dims[] = {"16"};
		ta_build_kernel(b, "k", 32);
		ta_buf A = ta_build_tensor(b, "A", TA_F32, 1, dims);
		ta_expr one = ta_build_int(b, 1);
		ta_build_grid(b, 1, &one);
		ta_expr z = ta_build_int(b, 0);
		if (kind == 0) {
			ta_expr e = ta_build_load(b, A, 1, &z);
			for (int i = 0; i < 100000; i++)
				e = ta_build_op(b, TA_OP_EXP, 1, &e);
			ta_build_store(b, A, 1, &z, e);
		} else {
			for (int i = 0; i < 100000; i++)
				ta_build_if(b, ta_build_bool(b, 1));
			for (int i = 0; i < 100000; i++)
				ta_build_end(b);
		}
		ta_module *m = NULL;
		cr_assert_eq(ta_build_finish(b, &m), TA_ERR_INVALID);
		cr_assert(strstr(ta_ctx_diagnostics(ctx), "nested too deeply (more than 256 levels)"), "%s",
			  ta_ctx_diagnostics(ctx));
		ta_ctx_clear_diagnostics(ctx);
	}
	ta_ctx_destroy(ctx);
}

static const char va_text[] = "kernel va(A: f32[N]) grid(ceildiv(N, 64)) threads(64) {\n"
			      "  A_f = fragment f32[64]\n  copy(A[bx * 64], A_f)\n  copy(A_f, A[bx * 64])\n}\n";
static const char vb_text[] = "kernel vb(A: f32[M]) grid(1) threads(64) {\n"
			      "  A_f = fragment f32[64]\n  copy(A[0], A_f)\n  copy(A_f, A[0])\n}\n";

Test(validation, values_that_do_not_fit_i32)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *b = NULL;
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx942", &b), TA_OK);
	/* ta_binary_grid: N is an i32 kernel argument */
	int64_t bad[] = {-5, INT64_MAX, (1ll << 32) + 1024, (int64_t)INT32_MAX + 1};
	uint32_t g[3];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_expect_eq(ta_binary_grid(b, 0, (int64_t[]){0, bad[i]}, g), TA_ERR_INVALID, "N = %lld", (long long)bad[i]);
	cr_assert_eq(ta_binary_grid(b, 0, (int64_t[]){0, 1000}, g), TA_OK);
	cr_assert_eq(g[0], 16u);
	cr_assert_eq(ta_binary_grid(b, 0, (int64_t[]){0, INT32_MAX}, g), TA_OK);
	ta_binary_release(b);
	/* -D through the API: out of range is an error, not N = 1024 */
	cr_assert_eq(ta_ctx_define(ctx, "N", (1ll << 32) + 1024), TA_OK);
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx942", &b), TA_ERR_VERIFY);
	cr_assert(strstr(ta_ctx_diagnostics(ctx), "-D N=4294968320: out of range"), "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_clear_diagnostics(ctx);
	cr_assert_eq(ta_ctx_undefine(ctx, "N"), TA_OK);
	/* a dimension literal (the verifier types dimensions as i32 expressions) */
	const char *dim = "kernel k(A: i8[4294967304]) grid(1) threads(32) {\n}\n";
	cr_assert_eq(ta_compile_source(ctx, "dim.tile", dim, strlen(dim), "gfx942", &b), TA_ERR_VERIFY);
	cr_assert(strstr(ta_ctx_diagnostics(ctx), "dim.tile:1:16: error: integer literal 4294967304 does not fit in i32"),
		  "%s", ta_ctx_diagnostics(ctx));
	ta_ctx_destroy(ctx);
}

Test(validation, defines_can_be_removed)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_ctx_set_cache(ctx, 4);
	ta_binary *b = NULL;
	cr_assert_eq(ta_ctx_define(ctx, "N", 1024), TA_OK);
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx942", &b), TA_OK);
	uint32_t g[3];
	cr_assert_eq(ta_binary_grid(b, 0, NULL, g), TA_OK); /* N specialised: no values needed */
	cr_assert_eq(g[0], 16u);
	ta_binary_release(b);
	/* with N defined, a kernel without N is refused; after undefine it compiles */
	cr_assert_eq(ta_compile_source(ctx, "vb.tile", vb_text, strlen(vb_text), "gfx942", &b), TA_ERR_VERIFY);
	ta_ctx_clear_diagnostics(ctx);
	cr_assert_eq(ta_ctx_undefine(ctx, "N"), TA_OK);
	cr_assert_eq(ta_ctx_undefine(ctx, "N"), TA_ERR_INVALID); /* no longer defined */
	cr_assert_eq(ta_compile_source(ctx, "vb.tile", vb_text, strlen(vb_text), "gfx942", &b), TA_OK, "%s",
		     ta_ctx_diagnostics(ctx));
	ta_binary_release(b);
	/* and va is now unspecialised (not the cached N = 1024 binary) */
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx942", &b), TA_OK);
	cr_assert_eq(ta_binary_grid(b, 0, NULL, g), TA_ERR_INVALID);
	cr_assert_eq(ta_binary_grid(b, 0, (int64_t[]){0, 64}, g), TA_OK);
	cr_assert_eq(g[0], 1u);
	ta_binary_release(b);
	cr_assert_eq(ta_ctx_define(ctx, "N", 7), TA_OK);
	cr_assert_eq(ta_ctx_define(ctx, "M", 7), TA_OK);
	cr_assert_eq(ta_ctx_undefine(ctx, NULL), TA_OK); /* all */
	cr_assert_eq(ta_compile_source(ctx, "vb.tile", vb_text, strlen(vb_text), "gfx942", &b), TA_OK);
	ta_binary_release(b);
	ta_ctx_destroy(ctx);
}

Test(validation, cli_values)
{
	const char *exe = getenv("TILEASM"), *src = getenv("TILEASM_SRCDIR");
	cr_assert(exe && src);
	char cmd[4096], *out;
	struct {
		const char *args, *want;
	} cases[] = {
		{"compile %s/examples/vector_add.tile --target=sm_90a -D N=4294968320 -o /dev/null",
		 "-D N=4294968320: out of range"},
		{"compile %s/examples/vector_add.tile --target=gfx942 -D N=2147483648 -o /dev/null", "out of range"},
		{"run %s/examples/vector_add.tile --backend=interp --arg N=0", "--arg N=0: shape symbols are 1 to 2147483647"},
		{"run %s/examples/vector_add.tile --backend=interp --arg N=4294968320", "shape symbols are 1 to 2147483647"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char a[1024];
		snprintf(a, sizeof a, cases[i].args, src);
		snprintf(cmd, sizeof cmd, "%s %s 2>&1", exe, a);
		int rc = run_out(cmd, &out);
		cr_expect(rc == 1 && strstr(out, cases[i].want), "%s: exit %d, want '%s':\n%s", cmd, rc, cases[i].want, out);
		free(out);
	}
}

Test(validation, cache_byte_bound)
{
	/* issue 18.9: the cache was bounded by entry count only */
	ta_ctx *ctx = ta_ctx_create();
	ta_ctx_set_cache(ctx, 100);
	ta_binary *b = NULL;
	size_t entries, bytes, one;
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx942", &b), TA_OK);
	ta_binary_release(b);
	ta_ctx_cache_size(ctx, &entries, &one);
	cr_assert_eq(entries, 1);
	size_t code;
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx942", &b), TA_OK);
	ta_binary_data(b, &code);
	ta_binary_release(b);
	cr_assert_geq(one, code + sizeof va_text - 1, "an entry counts its code object and source (%zu)", one);
	/* room for about two entries: the third compile evicts the oldest */
	cr_assert_eq(ta_ctx_set_cache_bytes(ctx, one * 5 / 2), TA_OK);
	const char *tg[] = {"gfx90a", "gfx1100", "gfx942"};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), tg[i], &b), TA_OK);
		ta_binary_release(b);
		ta_ctx_cache_size(ctx, &entries, &bytes);
		cr_assert_leq(bytes, one * 5 / 2, "%zu bytes cached over the bound", bytes);
	}
	cr_assert_eq(entries, 2);
	uint64_t hits, misses;
	ta_ctx_cache_stats(ctx, &hits, &misses);
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx90a", &b), TA_OK); /* evicted */
	ta_binary_release(b);
	uint64_t hits2, misses2;
	ta_ctx_cache_stats(ctx, &hits2, &misses2);
	cr_assert_eq(misses2, misses + 1);
	/* a bound below one entry keeps nothing, and shrinking evicts */
	cr_assert_eq(ta_ctx_set_cache_bytes(ctx, one / 2), TA_OK);
	ta_ctx_cache_size(ctx, &entries, &bytes);
	cr_assert_eq(entries, 0);
	cr_assert_eq(bytes, 0);
	cr_assert_eq(ta_compile_source(ctx, "va.tile", va_text, strlen(va_text), "gfx942", &b), TA_OK);
	ta_binary_release(b);
	ta_ctx_cache_size(ctx, &entries, NULL);
	cr_assert_eq(entries, 0);
	ta_ctx_destroy(ctx);
}

Test(validation, cli_diagnostics)
{
	/* issue 18.11 */
	const char *exe = getenv("TILEASM"), *src = getenv("TILEASM_SRCDIR");
	cr_assert(exe && src);
	char cmd[4096], *out;
	struct {
		const char *args;
		int rc;
		const char *want;
	} cases[] = {
		{"frobnicate", 2, "unknown command 'frobnicate'"},
		{"run --help", 0, "usage: tileasm"},
		{"compile %s/examples/vector_add.tile --target=gfx1100:xnack+ -o /dev/null", 2, "unknown target"},
		{"compile %s/examples/vector_add.tile --target=gfx90a:xnack+:xnack- -o /dev/null", 2, "unknown target"},
		{"asm %s/tests/elf/kernels_gfx942.s --target=gfx942 -o /nonexistent/x.hsaco", 1,
		 "cannot write '/nonexistent/x.hsaco': No such file or directory"},
		/* a directory as input (was "Input/output error") */
		{"compile %s/examples --target=gfx942", 1, "cannot read '"},
		{"compile %s/examples --target=gfx942", 1, "/examples': Is a directory"},
		{"asm %s/examples --target=gfx942", 1, "/examples': Is a directory"},
		{"disasm %s/examples", 1, "/examples': Is a directory"},
		/* disasm of a missing, empty or non-ELF file (was only the usage) */
		{"disasm %s/nonexistent.hsaco", 1, "nonexistent.hsaco': No such file or directory"},
		{"disasm /dev/null", 1, "'/dev/null' is empty: not an ELF code object"},
		{"disasm %s/examples/vector_add.tile", 1, "vector_add.tile' is not an ELF code object"},
		/* a --dump-isa style source with code-object directives: --show-encoding and raw -o take it
		 * as -o K.hsaco does (was "unknown directive '.amdgcn_target'") */
		{"asm %s/tests/elf/kernels_gfx942.s --target=gfx942 --show-encoding", 0, "s_endpgm"},
		{"asm %s/tests/elf/kernels_gfx942.s --target=gfx942 -o /dev/null", 0, ""},
	};
	/* issue 18.12: fuzz_coasm's first find, an argument map cut short by a '#': co_assemble wrote an object
	 * co_read (the emulator, disasm) rejects; now it is the assembler's error (the file's first byte picks
	 * the fuzz target's target) */
	snprintf(cmd, sizeof cmd,
	         "tail -c +2 %s/tests/fuzz/regress/coasm/metadata-arg-cut-by-comment.s | %s asm - --target=gfx942 "
	         "-o /nonexistent/x.hsaco 2>&1", src, exe);
	int crc = run_out(cmd, &out);
	/* since md_verify.c, refused as llvm-mc-19 refuses it, past .end_amdgpu_metadata */
	cr_expect(crc == 1 && strstr(out, ":209:22: error: invalid HSA metadata: kernel 2 argument 1: .size") &&
	              !strstr(out, "cannot write"), "%s: exit %d:\n%s", cmd, crc, out);
	free(out);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char a[1024];
		snprintf(a, sizeof a, cases[i].args, src);
		snprintf(cmd, sizeof cmd, "%s %s 2>&1", exe, a);
		int rc = run_out(cmd, &out);
		cr_expect(rc == cases[i].rc && strstr(out, cases[i].want), "%s: exit %d, want %d '%s':\n%s", cmd, rc,
			  cases[i].rc, cases[i].want, out);
		free(out);
	}
	/* echoed source lines: NUL and control bytes escaped, long lines clipped */
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *b = NULL;
	/* a 100,000-character kernel name: a positioned error on every target (AMD said "kernel 0 has no
	 * name", from the code object writer's limit; the builder's bound is the same 1024) */
	{
		size_t ln = 100000;
		char *lk = malloc(ln + 64);
		memcpy(lk, "kernel ", 7);
		memset(lk + 7, 'k', ln);
		strcpy(lk + 7 + ln, "(A: f32[16]) grid(1) threads(32) { }\n");
		for (int t = 0; t < 5; t++) {
			static const char *const tg[] = {"gfx942", "gfx90a", "gfx1100", "sm_80", "sm_90a"};
			cr_expect_eq(ta_compile_source(ctx, "long.tile", lk, strlen(lk), tg[t], &b), TA_ERR_PARSE);
			cr_expect(strstr(ta_ctx_diagnostics(ctx), "long.tile:1:8: error: name is too long (100000 characters; "
			                                          "at most 1024)"), "%s", ta_ctx_diagnostics(ctx));
			ta_ctx_clear_diagnostics(ctx);
		}
		lk[7 + 1024] = '(';
		strcpy(lk + 7 + 1025, "A: f32[16]) grid(1) threads(32) { }\n");
		cr_expect_eq(ta_compile_source(ctx, "long.tile", lk, strlen(lk), "gfx942", &b), TA_OK, "%s",
		             ta_ctx_diagnostics(ctx));
		ta_binary_release(b);
		b = NULL;
		free(lk);
	}
	const char nul[] = "kernel \0 foo\n";
	cr_assert_neq(ta_compile_source(ctx, "nul.tile", nul, sizeof nul - 1, "gfx942", &b), TA_OK);
	const char *dg = ta_ctx_diagnostics(ctx);
	cr_expect(strstr(dg, "    kernel \\x00 foo\n") && dg[strlen(dg) - 1] == '\n' && strstr(dg, "^\n"), "%s", dg);
	ta_ctx_clear_diagnostics(ctx);
	size_t n = 10u << 20;
	char *big = malloc(n + 2);
	memset(big, ' ', n);
	big[n] = 'x', big[n + 1] = 0;
	cr_assert_neq(ta_compile_source(ctx, "big.tile", big, n + 1, "gfx942", &b), TA_OK);
	dg = ta_ctx_diagnostics(ctx);
	cr_expect(strlen(dg) < 1000 && strstr(dg, "...") && strstr(dg, "x\n"), "%zu bytes of diagnostics", strlen(dg));
	free(big);
	ta_ctx_destroy(ctx);
}
