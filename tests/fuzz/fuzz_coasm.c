/* fuzz_coasm.c — libFuzzer target: co_assemble (AMD assembly with the
 * code-object directives: .amdhsa_kernel blocks, .amdgpu_metadata YAML) on
 * every target (first byte picks it).  What it accepts must read back
 * (co_read), print as source (co_source, what --dump-isa shows) and that
 * source must assemble to the same bytes (codeobj.h promises it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const ta_target ids[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100, TA_TARGET_GFX1100};
	Target t = {.id = ids[data[0] % 4]};
	int w64 = data[0] % 4 == 3;
	char *text = fuzz_text_dup(data + 1, size - 1); /* after the byte choosing the target */
	if (!text)
		return 0;
	SrcFile src = {"fuzz.s", text, size - 1};
	Diag d;
	diag_init(&d);
	uint8_t *co = NULL;
	size_t n = 0;
	if (co_assemble(&t, w64, &src, &co, &n, &d) == 0) {
		CoObject *o = NULL;
		if (co_read(co, n, &o, &d) != 0) { /* the assembler wrote an object its own reader rejects */
			fprintf(stderr, "fuzz_coasm: co_read rejects co_assemble's output:\n%s", diag_text(&d));
			abort();
		}
		co_object_free(o);
		StrBuf sb = {0};
		if (co_source(co, n, 0, &sb, &d) != 0) {
			fprintf(stderr, "fuzz_coasm: co_source fails on co_assemble's output:\n%s", diag_text(&d));
			abort();
		}
		SrcFile again = {"printed.s", sb.buf ? sb.buf : "", sb.len};
		uint8_t *co2 = NULL;
		size_t n2 = 0;
		if (co_assemble(&t, w64, &again, &co2, &n2, &d) != 0 || n2 != n || memcmp(co, co2, n)) {
			fprintf(stderr, "fuzz_coasm: co_source's text does not assemble to the same bytes:\n%s%s",
			        sb.buf ? sb.buf : "", diag_text(&d));
			abort(); /* codeobj.h promises it does */
		}
		free(co2);
		sb_free(&sb);
	}
	free(co);
	diag_free(&d);
	free(text);
	return 0;
}
