/* fuzz_asm.c — libFuzzer target: the AMD assembler's text parser on every
 * target (first byte picks the target), and the printer/parser round trip of
 * what it accepts: the instructions of .text, decoded and printed (as
 * `tileasm disasm` does), must assemble back to the same bytes. */
#include <stdio.h>

#include "fuzz_text.h"
#include "isa.h"

/* Decodes .text, prints one instruction per line, re-assembles: same bytes?
 * Data the decoder does not take as an instruction (a .byte/.long in .text)
 * ends the check there. */
static void round_trip(ta_target t, const IsaSection *s)
{
	StrBuf text = {0};
	size_t off = 0;
	while (off + 4 <= s->data.len) {
		IsaInsn insn;
		int n = isa_decode(t, s->data.data + off, s->data.len - off, &insn);
		if (n <= 0)
			break;
		sb_putc(&text, '\t');
		isa_print(t, &insn, &text);
		sb_putc(&text, '\n');
		off += (size_t)n;
	}
	if (!text.oom && off) {
		SrcFile src = {"printed.s", text.buf, text.len};
		Diag d;
		diag_init(&d);
		IsaAsmOptions opt = {.target = t};
		IsaAsmOut out = {0};
		if (isa_assemble(&opt, &src, &out, &d) != 0) {
			fprintf(stderr, "fuzz_asm: the printed text does not assemble:\n%s%s", text.buf, diag_text(&d));
			abort();
		}
		int k = isa_asm_find_section(&out, ".text");
		if (k < 0 || out.sections.data[k].data.len != off || memcmp(out.sections.data[k].data.data, s->data.data, off)) {
			fprintf(stderr, "fuzz_asm: the printed text assembles to other bytes:\n%s", text.buf);
			abort();
		}
		isa_asm_free(&out);
		diag_free(&d);
	}
	sb_free(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const ta_target targets[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100,
	                                    (ta_target)(TA_TARGET_GFX1100 | ISA_WAVE64)};
	ta_target t = targets[data[0] % 4];
	char *text = fuzz_text_dup(data + 1, size - 1); /* after the byte choosing the target */
	if (!text)
		return 0;
	SrcFile src = {"fuzz.s", text, size - 1};
	Diag d;
	diag_init(&d);
	IsaAsmOptions opt = {.target = t};
	IsaAsmOut out = {0};
	if (isa_assemble(&opt, &src, &out, &d) == 0) {
		int k = isa_asm_find_section(&out, ".text");
		if (k >= 0)
			round_trip(t, &out.sections.data[k]);
	}
	isa_asm_free(&out);
	diag_free(&d);
	free(text);
	return 0;
}
