/* fuzz_codeobj.c — libFuzzer target: the code object reader on arbitrary
 * bytes; it must reject bad input with a diagnostic, never crash. */
#include "codeobj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	diag_init(&d);
	CoObject *o = NULL;
	if (co_read(data, size, &o, &d) == 0)
		co_object_free(o);
	diag_free(&d);
	return 0;
}
