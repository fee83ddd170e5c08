/* diag.h — compiler diagnostics as values.
 *
 * Every layer reports user errors through a Diag sink instead of printing or
 * exiting.  Messages are rendered like a C compiler's:
 *
 *   gemm.tile:7:12: error: unknown buffer 'B_x'
 *       copy(B_x, B_s)
 *            ^
 */
#ifndef TILEASM_DIAG_H
#define TILEASM_DIAG_H

#include "util.h"

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

/* A source position.  line and col are 1-based; 0 means "no position". */
typedef struct {
	int line, col;
} SrcPos;

/* A source file as seen by diagnostics: its name and text (for caret lines). */
typedef struct {
	const char *name;
	const char *text;
	size_t len;
} SrcFile;

typedef struct {
	StrBuf out;     /* rendered messages, in order */
	int nerrors, nwarnings;
	int max_errors; /* stop recording after this many errors (0 = 50) */
} Diag;

void diag_init(Diag *d);
void diag_free(Diag *d);
/* Report at a position in `src` (src may be NULL for whole-program messages). */
void diag_at(Diag *d, DiagLevel lvl, const SrcFile *src, SrcPos pos, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void diag_vat(Diag *d, DiagLevel lvl, const SrcFile *src, SrcPos pos, const char *fmt, va_list ap);
/* Convenience: error with no source position ("tileasm: error: ..."). */
void diag_error(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *diag_text(const Diag *d); /* never NULL */

#endif
