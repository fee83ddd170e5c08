/* cmd_disasm.c — `tileasm disasm FILE --target=T [--wave64]`: raw instruction
 * bytes to LLVM-syntax text, one instruction per line followed by its offset
 * and dwords the way llvm-objdump -d shows them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "codeobj.h"
#include "isa.h"

char *cli_read_input(const char *path, size_t *len); /* cmd_asm.c */

static int usage(void)
{
	fprintf(stderr, "usage: tileasm disasm FILE|- --target=gfx1100|gfx90a|gfx942 [--wave64]\n"
			"       tileasm disasm K.hsaco   (code object: target from its ELF header)\n");
	return 2;
}

int cli_disasm(int argc, char **argv)
{
	const char *tname = NULL, *in = NULL, *v;
	int w64 = 0;
	for (int i = 1; i < argc; i++) {
		int r = cli_opt(argc, argv, &i, "target", &v);
		if (r < 0)
			return usage();
		if (r)
			tname = v;
		else if (!strcmp(argv[i], "--wave64"))
			w64 = 1;
		else if ((argv[i][0] != '-' || !strcmp(argv[i], "-")) && !in)
			in = argv[i];
		else
			return usage();
	}
	Target tg;
	if (in && !tname) { /* a code object names its own target */
		size_t clen;
		char *co = cli_read_input(in, &clen);
		if (!co) {
			fprintf(stderr, "tileasm: error: cannot read '%s': %s\n", in, strerror(errno));
			return 1;
		}
		if (clen < 4 || memcmp(co, "\x7f" "ELF", 4)) {
			fprintf(stderr, "tileasm: error: '%s' is %snot an ELF code object (raw instruction bytes need "
			        "--target=gfx1100|gfx90a|gfx942)\n", in, clen ? "" : "empty: ");
			free(co);
			return 1;
		}
		Diag d;
		diag_init(&d);
		StrBuf sb = {0};
		int rc = co_disasm((const uint8_t *)co, clen, &sb, &d);
		fwrite(sb.buf ? sb.buf : "", 1, sb.len, stdout);
		fputs(diag_text(&d), stderr);
		sb_free(&sb);
		diag_free(&d);
		free(co);
		return rc ? 1 : 0;
	}
	if (!in || !tname)
		return usage();
	if (target_parse(tname, &tg) || !target_is_amd(tg.id)) {
		fprintf(stderr, "tileasm: error: unknown AMD target '%s'\n", tname);
		return 2;
	}
	size_t len;
	char *data = cli_read_input(in, &len);
	if (!data) {
		fprintf(stderr, "tileasm: error: cannot read '%s': %s\n", in, strerror(errno));
		return 1;
	}
	ta_target t = (ta_target)(tg.id | (w64 ? ISA_WAVE64 : 0));
	const uint8_t *p = (const uint8_t *)data;
	StrBuf sb = {0};
	int bad = 0;
	for (size_t off = 0; off + 4 <= len;) {
		IsaInsn insn;
		int n = isa_decode(t, p + off, len - off, &insn);
		size_t start = sb.len;
		sb_putc(&sb, '\t');
		if (n > 0)
			isa_print(t, &insn, &sb);
		else {
			n = 4;
			bad++;
			sb_printf(&sb, ".long 0x%08x", (unsigned)(p[off] | p[off + 1] << 8 | p[off + 2] << 16 |
								   (unsigned)p[off + 3] << 24));
		}
		size_t w = sb.len - start - 1;
		for (; w < 58; w++)
			sb_putc(&sb, ' ');
		sb_printf(&sb, " // %012zX:", off);
		for (int i = 0; i < n; i += 4)
			sb_printf(&sb, " %08X", (unsigned)(p[off + i] | p[off + i + 1] << 8 | p[off + i + 2] << 16 |
							   (unsigned)p[off + i + 3] << 24));
		sb_putc(&sb, '\n');
		off += (size_t)n;
	}
	fwrite(sb.buf ? sb.buf : "", 1, sb.len, stdout);
	if (len % 4)
		fprintf(stderr, "tileasm: warning: %zu trailing bytes ignored\n", len % 4);
	sb_free(&sb);
	free(data);
	return bad ? 1 : 0;
}
