/* test_corpus.c — text conformance over a corpus generated from the
 * instruction table: every op on every target, written bare, with each
 * modifier keyword the assembler knows (valid for the op or not), with
 * source modifiers on each source, and with each encoding suffix.  Every
 * line goes through our parser and through llvm-mc-19 -show-encoding;
 * every line llvm-mc accepts is also disassembled by llvm-mc-19
 * --disassemble and by our decoder.  Per target it prints
 *   matched          both accept, same bytes
 *   rejected         llvm-mc accepts, we reject (coverage still missing)
 *   mis-encoded      both accept, different bytes              -> must be 0
 *   invalid-accepted we accept what llvm-mc rejects            -> must be 0
 * and, for the disassembler, decoded-same / not-decoded / decoded-differently
 * (the last must be 0).  ISA_CORPUS_VERBOSE=1 lists the rejected lines. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "isa_impl.h"
#include "oracle.h"
#include "variants.h"

/* Modifier text appended to the bare instruction: every keyword parse.c reads. */
static const char *const mods[] = {
	"clamp", "mul:2", "mul:4", "div:2", "op_sel:[0,0]", "op_sel:[1,0]", "op_sel:[0,0,0]", "op_sel:[1,0,1]",
	"op_sel:[0,1,0,1]", "op_sel_hi:[1,1]", "op_sel_hi:[0,0]", "op_sel_hi:[0,1,0]", "neg_lo:[1,0]",
	"neg_lo:[0,1,1]", "neg_hi:[0,1]", "neg_hi:[1,0,0]", "neg:[1,0,0]", "offset:0", "offset:16",
	"offset:-8", "offset:4095", "offset0:1", "offset1:2", "offset0:0", "offen", "idxen", "offen idxen", "gds",
	"glc", "slc", "dlc", "scc", "sc0", "sc1", "nt", "glc slc", "sc0 sc1 nt", "cbsz:1", "abid:1",
	"blgp:1", "cbsz:0", "quad_perm:[1,0,3,2]", "quad_perm:[0,0,0,0] fi:1", "row_shl:1", "row_shr:15",
	"row_ror:7", "row_mirror", "row_half_mirror", "row_share:2", "row_xmask:3", "wave_shl:1",
	"wave_ror:1", "row_bcast:15", "row_bcast:31", "row_shl:1 row_mask:0x3 bank_mask:0x5",
	"row_shl:1 bound_ctrl:1", "row_shl:1 bound_ctrl:0", "row_shl:1 fi:1", "row_shl:1 fi:0",
	"row_mask:0x3", "bank_mask:0x5", "bound_ctrl:1", "bound_ctrl:0", "fi:1", "dpp8:[7,6,5,4,3,2,1,0]",
	"dpp8:[0,1,2,3,4,5,6,7] fi:1", "dpp8:[7,6,5,4,3,2,1,0] row_mask:0x1", "row_shl:1 dpp8:[0,0,0,0,0,0,0,0]",
	"row_shl:1 clamp", "quad_perm:[1,0,3,2] mul:2", "dst_sel:WORD_1", "dst_unused:UNUSED_PAD", "src0_sel:BYTE_1",
	"src1_sel:WORD_0", "dst_sel:BYTE_2 dst_unused:UNUSED_SEXT src0_sel:WORD_1 src1_sel:BYTE_3",
	"src1_sel:BYTE_0 src0_sel:BYTE_1", "dst_sel:DWORD clamp", "clamp dst_sel:WORD_0", "mul:2 src0_sel:WORD_1",
	"src0_sel:WORD_1 row_shl:1", "dst_sel:QWORD",
};

typedef struct {
	char **v;
	int n, cap;
} Lines;

static void add(Lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(Lines *l, const char *fmt, ...)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
	}
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	l->v[l->n++] = strdup(buf);
}

/* The corpus for t: lines generated from variant 0 of every op. */
static void gen(ta_target t, Lines *l)
{
	for (unsigned op = 0; op < ISA_NUM_OPS; op++) {
		IsaInsn in;
		if (!isa_op_exists(t, op) || !isa_variant(t, op, 0, &in) || isa_op_fmt(t, op) == ISA_FMT_VOPD)
			continue;
		StrBuf sb = {0};
		isa_print(t, &in, &sb);
		char *txt = sb.buf;
		/* bare mnemonic: without the _e32 the printer adds */
		char *sp = strchr(txt, ' ');
		size_t ml = sp ? (size_t)(sp - txt) : strlen(txt);
		if (ml > 4 && !strncmp(txt + ml - 4, "_e32", 4)) {
			memmove(txt + ml - 4, txt + ml, strlen(txt + ml) + 1);
			ml -= 4;
		}
		const char *rest = txt + ml;
		add(l, "%s", txt);
		for (size_t i = 0; i < TA_ARRAY_LEN(mods); i++)
			add(l, "%s %s", txt, mods[i]);
		static const char *const suf[] = {"_e32", "_e64", "_dpp", "_e64_dpp", "_sdwa"};
		for (int i = 0; i < 5; i++) {
			add(l, "%.*s%s%s", (int)ml, txt, suf[i], rest);
			add(l, "%.*s%s%s row_shl:1", (int)ml, txt, suf[i], rest);
			add(l, "%.*s%s%s dpp8:[1,0,3,2,5,4,7,6]", (int)ml, txt, suf[i], rest);
			add(l, "%.*s%s%s clamp", (int)ml, txt, suf[i], rest);
		}
		/* source modifiers on each operand after the first (the first is usually the destination) */
		int nops = 0;
		const char *opstart[ISA_MAX_OPS + 1];
		for (const char *q = rest; *q && nops < ISA_MAX_OPS;) {
			while (*q == ' ' || *q == ',')
				q++;
			if (!*q)
				break;
			opstart[nops++] = q;
			const char *c = strstr(q, ", ");
			q = c ? c : q + strlen(q);
		}
		for (int i = 0; i < nops; i++) {
			const char *c = strstr(opstart[i], ", ");
			size_t olen = c ? (size_t)(c - opstart[i]) : strlen(opstart[i]);
			size_t pre = (size_t)(opstart[i] - txt);
			const char *post = opstart[i] + olen;
			add(l, "%.*s-%.*s%s", (int)pre, txt, (int)olen, opstart[i], post);
			add(l, "%.*s|%.*s|%s", (int)pre, txt, (int)olen, opstart[i], post);
			add(l, "%.*s-%.*s%s row_shl:1", (int)pre, txt, (int)olen, opstart[i], post);
			add(l, "%.*ssext(%.*s)%s src0_sel:BYTE_1", (int)pre, txt, (int)olen, opstart[i], post);
			add(l, "%.*s-|%.*s|%s dst_sel:WORD_1", (int)pre, txt, (int)olen, opstart[i], post);
			add(l, "%.*s|%.*s|%s dpp8:[7,6,5,4,3,2,1,0]", (int)pre, txt, (int)olen, opstart[i], post);
		}
		sb_free(&sb);
	}
}

static void run_target(ta_target t, const char *label)
{
	Lines l = {0};
	gen(t, &l);
	int n = l.n;
	McLine *mc = calloc((size_t)n, sizeof *mc);
	char *why = NULL;
	cr_assert_eq(mc_assemble(t, l.v, n, mc, &why), 0, "oracle failed: %s", why ? why : "?");
	int matched = 0, rejected = 0, misenc = 0, invalid = 0, both = 0, text_diff = 0;
	int verbose = getenv("ISA_CORPUS_VERBOSE") != NULL;
	/* llvm-accepted encodings, for the disassembler half */
	uint8_t(*bytes)[16] = calloc((size_t)n, 16);
	int *len = calloc((size_t)n, sizeof *len), nb = 0;
	int *line_of = calloc((size_t)n, sizeof *line_of);
	for (int i = 0; i < n; i++) {
		IsaInsn in;
		uint8_t b[16];
		int bl = 0;
		Diag d;
		diag_init(&d);
		d.max_errors = 1;
		SrcFile sf = {"corpus.s", l.v[i], strlen(l.v[i])};
		int ok = !isa_parse_encode(t, l.v[i], &in, b, &bl, &sf, (SrcPos){1, 1}, &d);
		if (mc[i].len) {
			memcpy(bytes[nb], mc[i].bytes, 16);
			len[nb] = mc[i].len;
			line_of[nb++] = i;
		}
		if (!mc[i].len && !ok)
			both++;
		else if (!mc[i].len) {
			invalid++;
			fprintf(stderr, "%s: INVALID ACCEPTED '%s' (llvm-mc: %s)\n", label, l.v[i],
				mc[i].error ? mc[i].error : "?");
		} else if (!ok) {
			rejected++;
			if (verbose)
				fprintf(stderr, "%s: rejected '%s' -> %s: %s", label, l.v[i], mc[i].text, diag_text(&d));
		} else if (bl != mc[i].len || memcmp(b, mc[i].bytes, (size_t)bl)) {
			misenc++;
			fprintf(stderr, "%s: MIS-ENCODED '%s'\n  ours:", label, l.v[i]);
			for (int j = 0; j < bl; j++)
				fprintf(stderr, " %02x", b[j]);
			fprintf(stderr, "\n  llvm:");
			for (int j = 0; j < mc[i].len; j++)
				fprintf(stderr, " %02x", mc[i].bytes[j]);
			fprintf(stderr, "  (%s)\n", mc[i].text);
		} else {
			matched++;
			StrBuf sb = {0};
			isa_print(t, &in, &sb);
			if (strcmp(sb.buf ? sb.buf : "", mc[i].text)) {
				text_diff++;
				fprintf(stderr, "%s: printed differently '%s':\n  ours: %s\n  llvm: %s\n", label, l.v[i],
					sb.buf ? sb.buf : "", mc[i].text);
			}
			sb_free(&sb);
		}
		diag_free(&d);
	}
	char **dis = calloc((size_t)nb + 1, sizeof *dis);
	cr_assert_eq(mc_disassemble(t, (const uint8_t(*)[16])bytes, len, nb, dis, &why), 0, "oracle failed: %s",
		     why ? why : "?");
	int dsame = 0, dnot = 0, ddiff = 0;
	for (int i = 0; i < nb; i++) {
		IsaInsn back;
		int dl = isa_decode(t, bytes[i], (size_t)len[i], &back);
		if (dl != len[i]) {
			dnot++;
			if (verbose)
				fprintf(stderr, "%s: not decoded: '%s' (%s)\n", label, dis[i] ? dis[i] : "?", l.v[line_of[i]]);
			continue;
		}
		StrBuf sb = {0};
		isa_print(t, &back, &sb);
		if (dis[i] && !strcmp(dis[i], sb.buf ? sb.buf : ""))
			dsame++;
		else {
			ddiff++;
			fprintf(stderr, "%s: DECODED DIFFERENTLY '%s':\n  ours: %s\n  llvm: %s\n", label, l.v[line_of[i]],
				sb.buf ? sb.buf : "", dis[i] ? dis[i] : "(invalid)");
		}
		sb_free(&sb);
	}
	printf("isa corpus %-12s lines %d: matched %d, rejected %d, mis-encoded %d, invalid-accepted %d, both reject %d"
	       " (printed differently %d); disassembly of llvm's %d: same %d, not decoded %d, decoded differently %d\n",
	       label, n, matched, rejected, misenc, invalid, both, text_diff, nb, dsame, dnot, ddiff);
	fflush(stdout);
	cr_expect_eq(misenc, 0, "%s: %d mis-encoded lines (see stderr)", label, misenc);
	cr_expect_eq(invalid, 0, "%s: %d invalid lines accepted (see stderr)", label, invalid);
	cr_expect_eq(text_diff, 0, "%s: %d lines printed differently from llvm-mc", label, text_diff);
	cr_expect_eq(ddiff, 0, "%s: %d encodings decoded differently from llvm-mc", label, ddiff);
	cr_expect_gt(matched, n / 20, "%s: too few matched lines", label);
	mc_lines_free(mc, n);
	for (int i = 0; i < nb; i++)
		free(dis[i]);
	for (int i = 0; i < n; i++)
		free(l.v[i]);
	free(l.v), free(mc), free(dis), free(bytes), free(len), free(line_of);
}

Test(isa_corpus, gfx90a, .timeout = 1200) { run_target(TA_TARGET_GFX90A, "gfx90a"); }
Test(isa_corpus, gfx942, .timeout = 1200) { run_target(TA_TARGET_GFX942, "gfx942"); }
Test(isa_corpus, gfx1100_w32, .timeout = 1200) { run_target(TA_TARGET_GFX1100, "gfx1100-w32"); }
Test(isa_corpus, gfx1100_w64, .timeout = 1200) { run_target((ta_target)(TA_TARGET_GFX1100 | ISA_WAVE64), "gfx1100-w64"); }
