/* test_fuzz.c — the decoder against llvm-mc-19 --disassemble on mutated
 * encodings: valid encodings of every variant get one or two random bit
 * flips; whatever our decoder accepts must print exactly as llvm-mc prints
 * the same bytes, and that text must parse back and print the same. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "oracle.h"
#include "variants.h"

#define NFUZZ 2500

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static void fuzz(ta_target t, const char *label, uint32_t seed)
{
	uint8_t(*bytes)[16] = calloc(NFUZZ, 16);
	int *lens = calloc(NFUZZ, sizeof *lens), n = 0, bad = 0, tries = 0;
	char **ours = calloc(NFUZZ, sizeof *ours);
	if (getenv("ISA_FUZZ_SEED")) /* explore other mutations locally; CI uses the fixed seeds */
		seed += (uint32_t)atoi(getenv("ISA_FUZZ_SEED"));
	while (n < NFUZZ && tries++ < 200000) {
		IsaInsn in;
		unsigned op = lcg(&seed) % ISA_NUM_OPS;
		if (!isa_variant(t, op, (int)(lcg(&seed) % ISA_NUM_VARIANTS), &in))
			continue;
		uint8_t b[16];
		Diag d;
		diag_init(&d);
		int l = isa_encode(t, &in, b, &d);
		diag_free(&d);
		if (l < 0)
			continue;
		for (int k = 0, nf = 1 + (int)(lcg(&seed) % 2); k < nf; k++) {
			unsigned bit = lcg(&seed) % (unsigned)(l * 8);
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		IsaInsn o;
		int m = isa_decode(t, b, (size_t)l, &o);
		if (m <= 0)
			continue;
		StrBuf sb = {0};
		isa_print(t, &o, &sb);
		if (sb.buf && !strcmp(sb.buf, "s_nop 13")) { /* the oracle's separator */
			sb_free(&sb);
			continue;
		}
		ours[n] = sb_take(&sb);
		memcpy(bytes[n], b, 16);
		lens[n] = m;
		/* print(parse(print(x))) == print(x) */
		IsaInsn p;
		Diag pd;
		diag_init(&pd);
		StrBuf sb2 = {0};
		if (isa_parse_insn(t, ours[n], &p, NULL, (SrcPos){1, 1}, &pd) == 0)
			isa_print(t, &p, &sb2);
		/* (ds_swizzle BITMASK_PERM text is not injective: "0" is and=or=xor=0 or or=xor=1) */
		/* (int16 ops print inline float constants as hex, which llvm-mc itself reads back as
		 * a literal; not reparseable on gfx9 where VOP3 has no literals) */
		int b16f = 0;
		for (int i = 0; i < o.nops; i++)
			b16f |= isa_ops[o.op].type == ISA_TY_B16 && o.ops[i].kind == ISA_K_CONST && o.ops[i].reg >= 240;
		if ((!sb2.buf || strcmp(sb2.buf, ours[n])) && !strstr(ours[n], "BITMASK_PERM") && !b16f) {
			fprintf(stderr, "%s: '%s' does not reparse to itself: %s%s\n", label, ours[n], diag_text(&pd),
				sb2.buf ? sb2.buf : "");
			bad++;
		}
		sb_free(&sb2);
		diag_free(&pd);
		n++;
	}
	char **ref = calloc((size_t)n, sizeof *ref), *why = NULL;
	cr_assert_eq(mc_disassemble(t, (const uint8_t(*)[16])bytes, lens, n, ref, &why), 0, "oracle: %s", why);
	for (int i = 0; i < n; i++) {
		if (!ref[i] || strcmp(ref[i], ours[i])) {
			fprintf(stderr, "%s: bytes", label);
			for (int j = 0; j < lens[i]; j++)
				fprintf(stderr, " %02x", bytes[i][j]);
			fprintf(stderr, "\n  ours: %s\n  llvm: %s\n", ours[i], ref[i] ? ref[i] : "(invalid)");
			bad++;
		}
		free(ref[i]);
		free(ours[i]);
	}
	printf("isa fuzz %-12s %d mutated encodings decoded (of %d tries), %d disagree with llvm-mc\n", label, n, tries,
	       bad);
	fflush(stdout);
	cr_expect_gt(n, 1000);
	cr_expect_eq(bad, 0, "%s: %d decoder/printer disagreements", label, bad);
	free(ref), free(ours), free(bytes), free(lens);
}

Test(isa_fuzz, gfx90a, .timeout = 120) { fuzz(TA_TARGET_GFX90A, "gfx90a", 1); }
Test(isa_fuzz, gfx942, .timeout = 120) { fuzz(TA_TARGET_GFX942, "gfx942", 2); }
Test(isa_fuzz, gfx1100, .timeout = 120) { fuzz(TA_TARGET_GFX1100, "gfx1100", 3); }
