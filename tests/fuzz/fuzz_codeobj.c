/* fuzz_codeobj.c — libFuzzer target: the code object reader on arbitrary
 * bytes; it must reject bad input with a diagnostic, never crash.  What it
 * accepts also goes through the disassembler (co_disasm, `tileasm disasm`)
 * and the source printer (co_source, `--dump-isa`). */
#include "codeobj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	diag_init(&d);
	CoObject *o = NULL;
	if (co_read(data, size, &o, &d) == 0) {
		co_object_free(o);
		StrBuf sb = {0};
		co_disasm(data, size, &sb, &d);
		sb_free(&sb);
		co_source(data, size, 1, &sb, &d);
		sb_free(&sb);
	}
	diag_free(&d);
	return 0;
}
