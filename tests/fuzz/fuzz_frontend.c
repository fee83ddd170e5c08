/* fuzz_frontend.c — libFuzzer target: Tile IR text through parse, verify,
 * print, re-parse (must give the same IR), the interpreter on tiny shapes,
 * and the compiler for one target picked by the input's hash (so the corpus
 * covers all five).  Anything the fuzzer finds becomes a file in
 * tests/fuzz/regress/frontend/ (front end) or tests/fuzz/regress/compile/. */
#include <stdlib.h>

#include "amd.h"
#include "interp.h"
#include "ir.h"
#include "ptx.h"
#include "target.h"
#include "util.h"

/* Work of a block: the product of nested loop trip counts and parallel
 * extents, bounded so a fuzzed `serial i in 0 .. 2000000000` is not run
 * (the interpreter would do it, slowly, which is not a bug). */
static int64_t block_work(const Module *m, int k, const Block *b, const int64_t *vals)
{
	int64_t total = 0;
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = &m->stmts.data[b->ids[i]];
		int64_t trip = 1, lo, hi;
		if (s->kind == S_FOR) {
			if (ir_eval_i64(m, k, s->lo, vals, &lo) || ir_eval_i64(m, k, s->hi, vals, &hi))
				return INT64_MAX / 4; /* bounds from loads or lets: do not run */
			trip = hi > lo ? hi - lo : 0;
		} else if (s->kind == S_PARALLEL) {
			for (int v = 0; v < s->nvars; v++) {
				int64_t e;
				if (ir_eval_i64(m, k, s->extents[v], vals, &e))
					return INT64_MAX / 4;
				trip *= e > 0 ? e : 0;
				if (trip > (1 << 20))
					return INT64_MAX / 4;
			}
		}
		int64_t inner = 1 + block_work(m, k, &s->body, vals) + block_work(m, k, &s->els, vals);
		if (trip > (1 << 20) || inner > (1 << 20))
			return INT64_MAX / 4;
		total += trip * inner;
		if (total > (1 << 22))
			return INT64_MAX / 4;
	}
	return total;
}

static void run_small(const Module *m, int k)
{
	/* Execute only kernels whose every tensor is small when symbols are 3:
	 * the interpreter must report errors, never crash. */
	const Kernel *kn = &m->kernels.data[k];
	InterpArg args[16] = {0};
	if (kn->nargs > 16)
		return;
	for (int i = 0; i < kn->nargs; i++) {
		args[i].ival = 3;
		args[i].fval = 0.5;
	}
	for (int i = 0; i < kn->nargs; i++) {
		if (kn->args[i].buf < 0)
			continue;
		int64_t n = interp_tensor_elems(m, k, args, i);
		if (n < 0 || n > 4096)
			goto out;
		args[i].bytes = (size_t)n * 8;
		args[i].data = calloc(1, args[i].bytes ? args[i].bytes : 1);
		if (!args[i].data)
			goto out;
	}
	int64_t grid = 1;
	for (int i = 0; i < kn->ngrid; i++) {
		int64_t v;
		if (!ir_const_int(m, kn->grid[i], &v))
			v = 3;
		grid *= v < 0 ? 0 : v;
	}
	int64_t vals[16];
	for (int i = 0; i < kn->nargs; i++)
		vals[i] = args[i].ival;
	int64_t work = block_work(m, k, &kn->body, vals); /* up to INT64_MAX / 4: compare before multiplying */
	if (grid <= 64 && kn->threads <= 256 && work <= (1 << 22) && grid * work <= (1 << 22)) {
		Diag d;
		diag_init(&d);
		interp_run(m, k, args, &d);
		diag_free(&d);
	}
out:
	for (int i = 0; i < kn->nargs; i++)
		free(args[i].data);
}

/* Lowering and code generation must end in an output or a diagnostic. */
static void compile_one(const Module *m, const uint8_t *data, size_t size)
{
	static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942", "sm_80", "sm_90a"};
	Target t;
	if (target_parse(targets[hash_bytes(0xcbf29ce484222325ull, data, size) % 5], &t))
		abort();
	Diag d;
	diag_init(&d);
	if (target_is_amd(t.id)) {
		AmdOutput out;
		memset(&out, 0, sizeof out);
		amd_compile(m, &t, &out, &d);
		amd_output_free(&out);
	} else {
		StrBuf sb = {0};
		PtxKernelInfo *info = NULL;
		if (ptx_compile(m, &t, &sb, &info, &d) == 0)
			ptx_info_free(info, (int)m->kernels.len);
		sb_free(&sb);
	}
	diag_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	diag_init(&d);
	Module *m = ir_parse("fuzz.tile", (const char *)data, size, &d);
	if (m && ir_verify(m, &d) == 0) {
		StrBuf sb = {0};
		ir_print(m, &sb);
		Module *m2 = ir_parse("printed.tile", sb.buf ? sb.buf : "", sb.len, &d);
		if (!m2 || ir_verify(m2, &d) != 0 || !ir_equal(m, m2))
			abort(); /* the printer must produce text that reads back to the same IR */
		ir_module_free(m2);
		sb_free(&sb);
		for (size_t k = 0; k < m->kernels.len && k < 2; k++)
			run_small(m, (int)k);
		compile_one(m, data, size);
	}
	ir_module_free(m);
	diag_free(&d);
	return 0;
}
