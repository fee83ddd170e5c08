/* diag.c — rendering of diagnostics with caret lines (see diag.h). */
#include "diag.h"

#include <stdio.h>

static const char *level_name[] = {"error", "warning", "note"};

void diag_init(Diag *d) { memset(d, 0, sizeof *d); }
void diag_free(Diag *d) { sb_free(&d->out); }

const char *diag_text(const Diag *d) { return d->out.buf ? d->out.buf : ""; }

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
	sb_puts(sb, "    ");
	sb_putn(sb, p, (size_t)(e - p));
	sb_puts(sb, "\n    ");
	/* Keep tabs so the caret lines up under the same column in a terminal. */
	for (int c = 1; c < pos.col && p + c - 1 < e; c++)
		sb_putc(sb, p[c - 1] == '\t' ? '\t' : ' ');
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
