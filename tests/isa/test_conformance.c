/* test_conformance.c — every table entry, several variants, every target:
 * our encoder vs llvm-mc-19 -show-encoding (bytes and printed text), our
 * decoder+printer vs llvm-mc-19 --disassemble, and the round trips
 * decode(encode(x)) == x and parse(print(x)) == x. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "oracle.h"
#include "variants.h"

static int same_insn(const IsaInsn *a, const IsaInsn *b)
{
	if (a->op != b->op || a->enc != b->enc || a->nops != b->nops || memcmp(&a->mod, &b->mod, sizeof a->mod))
		return 0;
	if (isa_op_fmt(TA_TARGET_GFX1100, a->op) == ISA_FMT_VOPD && a->op_y != b->op_y)
		return 0;
	for (int i = 0; i < a->nops; i++) {
		const IsaOperand *x = &a->ops[i], *y = &b->ops[i];
		/* gfx11 SMEM: offset 0x0 and soffset null are the same bits. */
		if (x->kind != y->kind && ((x->kind == ISA_K_IMM && !x->imm && y->kind == ISA_K_SPECIAL && y->reg == ISA_SP_NULL) ||
					   (y->kind == ISA_K_IMM && !y->imm && x->kind == ISA_K_SPECIAL && x->reg == ISA_SP_NULL)))
			continue;
		if (x->kind != y->kind || x->reg != y->reg)
			return 0;
		if (x->imm != y->imm && !(x->kind == ISA_K_IMM && ((x->imm ^ y->imm) & 0xffff) == 0))
			return 0;
		if ((x->kind == ISA_K_SGPR || x->kind == ISA_K_VGPR || x->kind == ISA_K_AGPR || x->kind == ISA_K_SPECIAL) &&
		    x->count != y->count)
			return 0;
	}
	return 1;
}

static void run_target(ta_target t, const char *label)
{
	int cap = ISA_NUM_OPS * 8, n = 0;
	IsaInsn *insns = calloc((size_t)cap, sizeof *insns);
	char **text = calloc((size_t)cap, sizeof *text);
	uint8_t(*bytes)[16] = calloc((size_t)cap, 16);
	int *len = calloc((size_t)cap, sizeof *len);
	int ops_covered = 0, fails = 0, rejected = 0;
	for (unsigned op = 0; op < ISA_NUM_OPS; op++) {
		if (!isa_op_exists(t, op))
			continue;
		int got = 0;
		for (int v = 0; v < 8; v++) {
			IsaInsn in;
			if (!isa_variant(t, op, v, &in))
				continue;
			Diag d;
			diag_init(&d);
			int l = isa_encode(t, &in, bytes[n], &d);
			if (l < 0) {
				if (v == 0)
					fprintf(stderr, "%s: encoder rejects base variant of %s: %s", label, isa_op_name(t, op),
						diag_text(&d));
				fails += v == 0;
				rejected++;
				if (getenv("ISA_VERBOSE")) {
					StrBuf sb = {0};
					isa_print(t, &in, &sb);
					fprintf(stderr, "%s: rejected variant '%s': %s", label, sb.buf ? sb.buf : "", diag_text(&d));
					sb_free(&sb);
				}
				diag_free(&d);
				continue;
			}
			diag_free(&d);
			StrBuf sb = {0};
			isa_print(t, &in, &sb);
			text[n] = sb_take(&sb);
			insns[n] = in;
			len[n] = l;
			n++;
			got = 1;
		}
		ops_covered += got;
	}
	McLine *mc = calloc((size_t)n, sizeof *mc);
	char *why = NULL;
	int rc = mc_assemble(t, text, n, mc, &why);
	cr_assert_eq(rc, 0, "oracle failed: %s", why ? why : "?");
	char **dis = calloc((size_t)n, sizeof *dis);
	rc = mc_disassemble(t, (const uint8_t(*)[16])bytes, len, n, dis, &why);
	cr_assert_eq(rc, 0, "oracle failed: %s", why ? why : "?");

	int enc_ok = 0, dis_ok = 0, rt_ok = 0, parse_ok = 0;
	for (int i = 0; i < n; i++) {
		int bad = 0;
		if (!mc[i].len) {
			fprintf(stderr, "%s: llvm-mc rejects '%s': %s\n", label, text[i], mc[i].error ? mc[i].error : "?");
			bad = 1;
		} else if (mc[i].len != len[i] || memcmp(mc[i].bytes, bytes[i], (size_t)len[i])) {
			fprintf(stderr, "%s: encoding mismatch for '%s':\n  ours:", label, text[i]);
			for (int j = 0; j < len[i]; j++)
				fprintf(stderr, " %02x", bytes[i][j]);
			fprintf(stderr, "\n  llvm:");
			for (int j = 0; j < mc[i].len; j++)
				fprintf(stderr, " %02x", mc[i].bytes[j]);
			fprintf(stderr, "  (%s)\n", mc[i].text);
			bad = 1;
		} else if (strcmp(mc[i].text, text[i])) {
			fprintf(stderr, "%s: printer mismatch:\n  ours: %s\n  llvm: %s\n", label, text[i], mc[i].text);
			bad = 1;
		} else
			enc_ok++;
		IsaInsn back0;
		StrBuf dsb = {0};
		if (isa_decode(t, bytes[i], (size_t)len[i], &back0) > 0)
			isa_print(t, &back0, &dsb);
		const char *dtext = dsb.buf ? dsb.buf : "(undecodable)";
		if (!dis[i] || strcmp(dis[i], dtext)) {
			if (!bad)
				fprintf(stderr, "%s: disassembly mismatch:\n  ours: %s\n  llvm: %s\n", label, dtext,
					dis[i] ? dis[i] : "(invalid)");
			bad = 1;
		} else
			dis_ok++;
		sb_free(&dsb);
		IsaInsn back;
		int dl = isa_decode(t, bytes[i], (size_t)len[i], &back);
		if (dl != len[i] || !same_insn(&back, &insns[i])) {
			StrBuf sb = {0};
			if (dl > 0)
				isa_print(t, &back, &sb);
			fprintf(stderr, "%s: decode round trip failed for '%s' (got %d: %s)\n", label, text[i], dl,
				sb.buf ? sb.buf : "-");
			sb_free(&sb);
			bad = 1;
		} else
			rt_ok++;
		Diag d;
		diag_init(&d);
		SrcFile sf = {"variant.s", text[i], strlen(text[i])};
		IsaInsn pin;
		if (isa_parse_insn(t, text[i], &pin, &sf, (SrcPos){1, 1}, &d) || !same_insn(&pin, &insns[i])) {
			StrBuf sb = {0};
			isa_print(t, &pin, &sb);
			fprintf(stderr, "%s: parse(print(x)) != x for '%s': %s%s\n", label, text[i], diag_text(&d),
				sb.buf ? sb.buf : "");
			sb_free(&sb);
			bad = 1;
		} else
			parse_ok++;
		diag_free(&d);
		fails += bad;
	}
	printf("isa conformance %-13s ops %d, variants %d: encode==llvm-mc %d, disasm==llvm-mc %d, "
	       "decode round trip %d, parse round trip %d, failures %d (encoder-rejected variants %d)\n",
	       label, ops_covered, n, enc_ok, dis_ok, rt_ok, parse_ok, fails, rejected);
	fflush(stdout);
	mc_lines_free(mc, n);
	for (int i = 0; i < n; i++) {
		free(text[i]);
		free(dis[i]);
	}
	free(mc), free(dis), free(text), free(bytes), free(len), free(insns);
	cr_expect_eq(fails, 0, "%s: %d conformance failures (see stderr)", label, fails);
	cr_expect_gt(n, 100, "%s: too few variants", label);
}

Test(isa_conformance, gfx90a, .timeout = 120) { run_target(TA_TARGET_GFX90A, "gfx90a"); }
Test(isa_conformance, gfx942, .timeout = 120) { run_target(TA_TARGET_GFX942, "gfx942"); }
Test(isa_conformance, gfx1100_w32, .timeout = 120) { run_target(TA_TARGET_GFX1100, "gfx1100-w32"); }
Test(isa_conformance, gfx1100_w64, .timeout = 120)
{
	run_target((ta_target)(TA_TARGET_GFX1100 | ISA_WAVE64), "gfx1100-w64");
}
