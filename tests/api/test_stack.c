/* test_stack.c — the deepest programs the language accepts compile, print,
 * re-compile and run on a 64 KiB thread stack (issue 18.6), the stack
 * docs/reliability.md promises is enough: the parser keeps its nesting on the
 * heap, and the recursive passes after it run on a stack of their own sized
 * for the module when it nests more than a few levels (run_with_stack_for).
 * Inputs: nesting at the limits (expression height 256, 256 blocks,
 * 1023 parentheses) in every form that recurses somewhere, a 1000-arm
 * else-if chain (each arm one IR level deeper, no limit), and one level past
 * each limit (an error, not a crash).  Under ASan/TSan frames are several
 * times larger, so the thread is larger there (the point is the same: the
 * requirement does not grow with nesting). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileasm.h"
#include "util.h"

#ifdef DEEP_SANITIZED
/* and only one target: the AMD backends at -O0 with sanitizers take minutes
 * on the 256-level inputs (issue 17's nesting shape) */
#define STACK (1u << 20)
static const char *const targets[] = {"sm_80"};
#else
#define STACK (64u << 10)
static const char *const targets[] = {"gfx942", "gfx90a", "gfx1100", "sm_80", "sm_90a"};
#endif
#define NT ((int)(sizeof targets / sizeof *targets))

/* A kernel over A_f[256] whose parallel body is `body` (or, with block set,
 * whose kernel body is `body`). */
static char *kernel(const char *body, bool block)
{
	StrBuf sb = {0};
	sb_puts(&sb, "kernel k(A: f32[N], C: f32[N], I: i32[N]) grid(ceildiv(N, 256)) threads(256) {\n"
	             "  A_f = fragment f32[256]\n  copy(A[bx * 256], A_f)\n");
	if (!block)
		sb_puts(&sb, "  parallel (i) in (256) {\n");
	sb_puts(&sb, body);
	if (!block)
		sb_puts(&sb, "\n  }\n");
	sb_puts(&sb, "\n  copy(A_f, C[bx * 256])\n}\n");
	return sb_take(&sb);
}

static void rep(StrBuf *sb, const char *s, int n)
{
	for (int i = 0; i < n; i++)
		sb_puts(sb, s);
}

/* The program of shape `name` nested d levels (see gen below). */
static char *gen(const char *name, int d)
{
	StrBuf sb = {0};
	bool block = false;
	if (!strcmp(name, "rnest")) { /* A_f[i] + (A_f[i] + (...)): height d + 2 */
		sb_puts(&sb, "A_f[i] = ");
		rep(&sb, "(A_f[i] + ", d);
		sb_puts(&sb, "A_f[i]");
		rep(&sb, ")", d);
	} else if (!strcmp(name, "lnest")) { /* ((A_f[i] + A_f[i]) + A_f[i]) ... */
		sb_puts(&sb, "A_f[i] = ");
		rep(&sb, "(", d);
		sb_puts(&sb, "A_f[i]");
		rep(&sb, " + A_f[i])", d);
	} else if (!strcmp(name, "mixed")) { /* a condition over A_f[i] * (A_f[i] - (...)) */
		static const char *const ops[] = {"*", "-", "/", "+"};
		sb_puts(&sb, "A_f[i] = select(A_f[i] > 0.0 && A_f[i] < 1.0 || !(A_f[i] == 2.0), ");
		for (int j = 0; j < d; j++)
			sb_printf(&sb, "(A_f[i] %s ", ops[j % 4]);
		sb_puts(&sb, "A_f[i]");
		rep(&sb, ")", d);
		sb_puts(&sb, ", 0.0)");
	} else if (!strcmp(name, "unary")) {
		sb_puts(&sb, "A_f[i] = ");
		rep(&sb, "- ", d);
		sb_puts(&sb, "A_f[i]");
	} else if (!strcmp(name, "calls")) {
		sb_puts(&sb, "A_f[i] = ");
		rep(&sb, "exp(", d);
		sb_puts(&sb, "A_f[i]");
		rep(&sb, ")", d);
	} else if (!strcmp(name, "casts")) {
		sb_puts(&sb, "A_f[i] = ");
		rep(&sb, "f32(", d);
		sb_puts(&sb, "A_f[i]");
		rep(&sb, ")", d);
	} else if (!strcmp(name, "index")) { /* A[I[I[...I[i]...]]] */
		sb_puts(&sb, "A_f[i] = A[");
		rep(&sb, "I[", d);
		sb_puts(&sb, "i");
		rep(&sb, "]", d + 1);
	} else if (!strcmp(name, "paren")) {
		sb_puts(&sb, "A_f[i] = ");
		rep(&sb, "(", d);
		sb_puts(&sb, "A_f[i]");
		rep(&sb, ")", d);
	} else if (!strcmp(name, "ifnest")) { /* d - 1 ifs inside the parallel loop */
		for (int j = 0; j < d - 1; j++)
			sb_printf(&sb, "if (A_f[i] > %d.0) {\n", j);
		sb_puts(&sb, "A_f[i] = A_f[i] + 1.0\n");
		rep(&sb, "}\n", d - 1);
	} else if (!strcmp(name, "sernest")) { /* d - 1 serial loops around a parallel loop */
		block = true;
		for (int j = 0; j < d - 1; j++)
			sb_printf(&sb, "serial j%d in 0 .. 1 {\n", j);
		sb_puts(&sb, "parallel (i) in (256) { A_f[i] = A_f[i] + 1.0 }\n");
		rep(&sb, "}\n", d - 1);
	} else if (!strcmp(name, "elif")) { /* d arms */
		sb_puts(&sb, "if (A_f[i] > 0.0) { A_f[i] = 0.0 }\n");
		for (int j = 1; j < d; j++)
			sb_printf(&sb, "else if (A_f[i] > %d.0) { A_f[i] = %d.0 }\n", j, j);
		sb_puts(&sb, "else { A_f[i] = 1.0 }\n");
	}
	char *body = sb_take(&sb);
	char *k = kernel(body, block);
	free(body);
	return k;
}

typedef struct {
	const char *text; /* a kernel, or a path under TILEASM_SRCDIR when file */
	bool file;
	ta_status want;   /* of the compile */
	const char *msg;  /* in the diagnostics when want != TA_OK */
	int passed;       /* targets that behaved */
	bool run;         /* also print, recompile and run on the interpreter */
	char why[256];
} Job;

static void *job_main(void *arg)
{
	Job *j = arg;
	size_t len = strlen(j->text);
	char *text = NULL;
	if (j->file) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", getenv("TILEASM_SRCDIR"), j->text);
		if (!(text = read_file(path, &len)))
			return NULL;
	}
	const char *src = text ? text : j->text;
	ta_ctx *ctx = ta_ctx_create();
	for (int t = 0; t < NT; t++) {
		ta_binary *b = NULL;
		ta_status st = ta_compile_source(ctx, "deep.tile", src, len, targets[t], &b);
		bool ok = st == j->want && (st == TA_OK || strstr(ta_ctx_diagnostics(ctx), j->msg));
		if (!ok)
			snprintf(j->why, sizeof j->why, "%s: status %d: %.150s", targets[t], st, ta_ctx_diagnostics(ctx));
		j->passed += ok;
		ta_binary_release(b);
		ta_ctx_clear_diagnostics(ctx);
	}
	if (j->run && j->passed == NT) {
		/* the printer and ta_compile of a module, and the interpreter */
		ta_module *m = NULL;
		ta_binary *b = NULL;
		ta_runner *r = NULL;
		char *printed = NULL;
		if (ta_parse(ctx, "deep.tile", src, len, &m) == TA_OK && (printed = ta_module_print(m)) &&
		    ta_compile(ctx, m, targets[0], &b) == TA_OK && ta_runner_open(ctx, "interp", 0, &r) == TA_OK) {
			enum { N = 256 };
			static float A[N], C[N];
			static int32_t I[N];
			for (int i = 0; i < N; i++) {
				A[i] = (float)(i % 7) - 3.0f;
				I[i] = (i * 5 + 1) % N;
			}
			ta_value args[4] = {{A, sizeof A, 0, 0}, {C, sizeof C, 0, 0}, {I, sizeof I, 0, 0}, {0, 0, N, 0}};
			if (ta_launch(ctx, r, b, 0, args, NULL) == TA_OK)
				j->passed++;
			else
				snprintf(j->why, sizeof j->why, "interp: %.200s", ta_ctx_diagnostics(ctx));
		} else {
			snprintf(j->why, sizeof j->why, "print/compile: %.200s", ta_ctx_diagnostics(ctx));
		}
		free(printed);
		ta_runner_close(r);
		ta_binary_release(b);
		ta_module_destroy(m);
	}
	ta_ctx_destroy(ctx);
	free(text);
	return NULL;
}

static void on_small_stack(Job *j)
{
	pthread_attr_t a;
	pthread_attr_init(&a);
	cr_assert_eq(pthread_attr_setstacksize(&a, STACK), 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, &a, job_main, j), 0);
	pthread_join(th, NULL);
	pthread_attr_destroy(&a);
	cr_assert_eq(j->passed, NT + j->run, "%.60s: %d of %d: %s", j->text, j->passed, NT + j->run, j->why);
}

/* shape at depth d compiles; at d + 1 it is refused with msg */
static void at_limit(const char *shape, int d, const char *msg)
{
	char *ok = gen(shape, d), *over = gen(shape, d + 1);
	Job a = {.text = ok, .want = TA_OK, .run = true};
	on_small_stack(&a);
	if (msg) {
		Job b = {.text = over, .want = TA_ERR_PARSE, .msg = msg};
		on_small_stack(&b);
	}
	free(ok);
	free(over);
}

#define TOO_DEEP "expression is nested too deeply (more than 256 levels)"
#define TOO_MANY_BLOCKS "blocks are nested too deeply (more than 256 levels)"

/* height: A_f[i] is 2 levels (the load over i), each operator one more */
Test(stack, right_nested_additions) { at_limit("rnest", 254, TOO_DEEP); }
Test(stack, left_nested_additions) { at_limit("lnest", 254, TOO_DEEP); }
Test(stack, mixed_precedence) { at_limit("mixed", 253, TOO_DEEP); }
Test(stack, unary_chain) { at_limit("unary", 254, TOO_DEEP); }
Test(stack, nested_calls) { at_limit("calls", 254, TOO_DEEP); }
Test(stack, nested_casts) { at_limit("casts", 254, TOO_DEEP); }
Test(stack, nested_loads) { at_limit("index", 254, TOO_DEEP); }
Test(stack, parentheses)
{
	at_limit("paren", 1023, "parentheses, brackets and calls are nested too deeply (more than 1024 levels)");
}
/* blocks: d + 1 with the kernel body and the parallel loop; 256 is the limit */
Test(stack, nested_ifs) { at_limit("ifnest", 255, TOO_MANY_BLOCKS); }
Test(stack, nested_loops) { at_limit("sernest", 255, TOO_MANY_BLOCKS); }
Test(stack, else_if_chain) { at_limit("elif", 1000, NULL); }

/* issue 18.6's reproducers */
Test(stack, paren500)
{
	Job j = {.text = "tests/api/deep/paren500.tile", .file = true, .want = TA_OK};
	on_small_stack(&j);
}
Test(stack, rnest255)
{
	Job j = {.text = "tests/api/deep/rnest255.tile", .file = true, .want = TA_ERR_PARSE, .msg = TOO_DEEP};
	on_small_stack(&j);
}
