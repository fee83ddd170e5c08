/* fuzz_frontend.c — libFuzzer target: Tile IR text through parse, verify,
 * print, re-parse (must give the same IR) and the interpreter on tiny shapes.
 * Anything the fuzzer finds becomes a file in tests/fuzz/regress/frontend/. */
#include <stdlib.h>

#include "interp.h"
#include "ir.h"

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
	if (grid <= 64 && kn->threads <= 256) {
		Diag d;
		diag_init(&d);
		interp_run(m, k, args, &d);
		diag_free(&d);
	}
out:
	for (int i = 0; i < kn->nargs; i++)
		free(args[i].data);
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
	}
	ir_module_free(m);
	diag_free(&d);
	return 0;
}
