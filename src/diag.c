/* diag.c — rendering of diagnostics with caret lines (see diag.h). */
#include "diag.h"

#include <stdio.h>

static const char *level_name[] = {"error", "warning", "note"};

void diag_init(Diag *d) { memset(d, 0, sizeof *d); }
void diag_free(Diag *d) { sb_free(&d->out); }

const char *diag_text(const Diag *d) { return d->out.buf ? d->out.buf : ""; }

/* One byte of an echoed source line: printable ASCII and tabs as they are,
 * anything else (NUL, control bytes, non-ASCII) as \xNN, so a diagnostic is
 * always a whole C string of text.  Returns the columns written. */
static int echo_byte(StrBuf *sb, unsigned char c)
{
	if (c == '\t' || (c >= 0x20 && c < 0x7f)) {
		sb_putc(sb, (char)c);
		return 1;
	}
	sb_printf(sb, "\\x%02x", c);
	return 4;
}

/* The source line of pos with a caret under its column: at most
 * CARET_SPAN bytes around the caret ("..." marks what is cut), so a
 * 100 MB line gives a short diagnostic (issue 18.11). */
enum { CARET_SPAN = 160 };

static void caret_line(StrBuf *sb, const SrcFile *src, SrcPos pos)
{
	if (!src || !src->text || pos.line <= 0)
		return;
	const char *p = src->text, *end = src->text + src->len;
	int l = 1;
	for (; l < pos.line && p < end; p++)
		if (*p == '\n')
			l++;
	if (l < pos.line)
		return;
	const char *e = p;
	while (e < end && *e != '\n' && *e != '\r')
		e++;
	const char *at = pos.col <= 1 ? p : pos.col - 1 <= e - p ? p + pos.col - 1 : e;
	const char *from = at - p > CARET_SPAN / 2 ? at - CARET_SPAN / 2 : p;
	const char *to = e - from > CARET_SPAN ? from + CARET_SPAN : e;
	sb_puts(sb, "    ");
	if (from > p)
		sb_puts(sb, "...");
	StrBuf pad = {0};
	for (const char *q = from; q < to; q++) {
		int w = echo_byte(sb, (unsigned char)*q);
		/* keep tabs so the caret lines up under the same column in a terminal */
		for (int i = 0; i < w && q < at; i++)
			sb_putc(&pad, *q == '\t' ? '\t' : ' ');
	}
	if (to < e)
		sb_puts(sb, "...");
	sb_puts(sb, "\n    ");
	if (from > p)
		sb_puts(sb, "   ");
	if (pad.len)
		sb_putn(sb, pad.buf, pad.len);
	sb_free(&pad);
	sb_puts(sb, "^\n");
}

void diag_vat(Diag *d, DiagLevel lvl, const SrcFile *src, SrcPos pos, const char *fmt, va_list ap)
{
	int max = d->max_errors ? d->max_errors : 50;
	if (lvl == DIAG_ERROR) {
		if (++d->nerrors > max)
			return;
	} else if (lvl == DIAG_WARNING) {
		d->nwarnings++;
	}
	if (src && src->name) {
		if (pos.line > 0)
			sb_printf(&d->out, "%s:%d:%d: ", src->name, pos.line, pos.col);
		else
			sb_printf(&d->out, "%s: ", src->name);
	} else {
		sb_puts(&d->out, "tileasm: ");
	}
	sb_printf(&d->out, "%s: ", level_name[lvl]);
	sb_vprintf(&d->out, fmt, ap);
	sb_putc(&d->out, '\n');
	caret_line(&d->out, src, pos);
	if (lvl == DIAG_ERROR && d->nerrors == max)
		sb_puts(&d->out, "tileasm: note: too many errors, stopping\n");
}

void diag_at(Diag *d, DiagLevel lvl, const SrcFile *src, SrcPos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vat(d, lvl, src, pos, fmt, ap);
	va_end(ap);
}

void diag_error(Diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vat(d, DIAG_ERROR, NULL, (SrcPos){0, 0}, fmt, ap);
	va_end(ap);
}
