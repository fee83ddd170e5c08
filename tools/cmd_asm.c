/* cmd_asm.c — `tileasm asm FILE.s --target=T [--wave64] [--show-encoding] [-o FILE]`.
 *
 * Assembles with isa_assemble and the elf/ layer's directive hook.
 * --show-encoding prints each instruction as llvm-mc -show-encoding does; -o
 * writes the raw bytes of .text, or with -o K.hsaco a whole code object. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "codeobj.h"
#include "isa.h"

static int usage(void)
{
	fprintf(stderr, "usage: tileasm asm FILE.s|- --target=gfx1100|gfx90a|gfx942 [--wave64] "
			"[--show-encoding] [-o FILE]\n");
	return 2;
}

/* Reads a file or stdin ("-"); NULL on failure. */
char *cli_read_input(const char *path, size_t *len)
{
	if (strcmp(path, "-"))
		return read_file(path, len);
	StrBuf sb = {0};
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
		sb_putn(&sb, buf, n);
	sb_putc(&sb, 0);
	if (sb.oom) {
		sb_free(&sb);
		return NULL;
	}
	*len = sb.len - 1;
	return sb_take(&sb);
}

int cli_asm(int argc, char **argv)
{
	const char *tname = NULL, *out = NULL, *in = NULL, *v;
	int show = 0, w64 = 0;
	for (int i = 1; i < argc; i++) {
		int r = cli_opt(argc, argv, &i, "target", &v);
		if (r < 0)
			return usage();
		if (r) {
			tname = v;
			continue;
		}
		if (!strcmp(argv[i], "--show-encoding"))
			show = 1;
		else if (!strcmp(argv[i], "--wave64"))
			w64 = 1;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if ((argv[i][0] != '-' || !strcmp(argv[i], "-")) && !in)
			in = argv[i];
		else
			return usage();
	}
	Target tg;
	if (!in || !tname)
		return usage();
	if (target_parse(tname, &tg) || !target_is_amd(tg.id)) {
		fprintf(stderr, "tileasm: error: unknown AMD target '%s'\n", tname);
		return 2;
	}
	if (w64 && tg.id != TA_TARGET_GFX1100) {
		fprintf(stderr, "tileasm: error: --wave64 applies to gfx1100 only\n");
		return 2;
	}
	size_t len;
	char *text = cli_read_input(in, &len);
	if (!text) {
		fprintf(stderr, "tileasm: error: cannot read '%s': %s\n", in, strerror(errno));
		return 1;
	}
	SrcFile src = {strcmp(in, "-") ? in : "<stdin>", text, len};
	Diag d;
	diag_init(&d);
	/* -o K.hsaco (or .co): a complete code object via the elf/ layer. */
	size_t olen = out ? strlen(out) : 0;
	if (!show && ((olen > 6 && !strcmp(out + olen - 6, ".hsaco")) || (olen > 3 && !strcmp(out + olen - 3, ".co")))) {
		uint8_t *co;
		size_t colen;
		int crc = co_assemble(&tg, w64, &src, &co, &colen, &d);
		fputs(diag_text(&d), stderr);
		if (!crc) {
			if (write_file_atomic(out, co, colen)) {
				fprintf(stderr, "tileasm: error: cannot write '%s': %s\n", out, strerror(errno));
				crc = -1;
			}
			free(co); /* also when the write failed (it leaked) */
		}
		diag_free(&d);
		free(text);
		return crc ? 1 : 0;
	}
	/* The code-object directives (.amdhsa_kernel, .amdgpu_metadata, ... as
	 * --dump-isa prints them) are understood here too and only the .text
	 * instructions are listed or written. */
	CoAsm *a = co_asm_new(&tg, &src, &d);
	if (!a) {
		fprintf(stderr, "tileasm: error: out of memory\n");
		diag_free(&d);
		free(text);
		return 1;
	}
	StrBuf listing = {0};
	IsaAsmOptions opt = {(ta_target)(tg.id | (w64 ? ISA_WAVE64 : 0)), co_asm_directive, a, show ? &listing : NULL};
	IsaAsmOut res;
	int rc = isa_assemble(&opt, &src, &res, &d);
	co_asm_free(a);
	fputs(diag_text(&d), stderr);
	if (!rc && show)
		fwrite(listing.buf ? listing.buf : "", 1, listing.len, stdout);
	if (!rc && out) {
		int t = isa_asm_find_section(&res, ".text");
		const IsaSection *s = t >= 0 ? &res.sections.data[t] : NULL;
		if (write_file_atomic(out, s ? s->data.data : NULL, s ? s->data.len : 0)) {
			fprintf(stderr, "tileasm: error: cannot write '%s': %s\n", out, strerror(errno));
			rc = -1;
		}
	}
	sb_free(&listing);
	isa_asm_free(&res);
	diag_free(&d);
	free(text);
	return rc ? 1 : 0;
}
