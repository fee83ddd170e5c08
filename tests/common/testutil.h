/* testutil.h — what the Criterion tests share: running a command, the
 * meson-provided environment, substring counts, temporary directories.
 * Every helper asserts (cr_assert) instead of returning an error, so a
 * broken setup fails the test that hit it with a message. */
#ifndef TILEASM_TEST_TESTUTIL_H
#define TILEASM_TEST_TESTUTIL_H

#include <stddef.h>

#include "ir.h"

/* Runs cmd through /bin/sh; returns its stdout (malloc'd, NUL-terminated)
 * and its exit status in *status (-1 when it did not exit normally). */
char *run_cmd(const char *cmd, int *status);
/* The same, with the output in *out and the exit status returned. */
int run_out(const char *cmd, char **out);
/* The environment variable meson test sets (TILEASM, TILEASM_SRCDIR); asserts it is set. */
const char *env(const char *name);
/* Non-overlapping occurrences of what in text. */
int count(const char *text, const char *what);
/* A fresh directory under /tmp (malloc'd path); rmdir_all removes it and frees the path. */
char *tmpdir(void);
void rmdir_all(char *dir);
/* Parses text (name: the file name in diagnostics), specialises it with defs
 * (ndefs may be 0) and verifies it; asserts with the diagnostics on errors. */
Module *load_text(const char *name, const char *text, const Define *defs, int ndefs);
/* The text of the file TILEASM_SRCDIR/rel (e.g. "examples/gemm.tile"), malloc'd. */
char *src_text(const char *rel);
/* load_text of that file. */
Module *load_src(const char *rel, const Define *defs, int ndefs);
/* Runs ptxas (/usr/local/cuda/bin/ptxas, required) on ptx for arch ("sm_80", "sm_90a"); returns its exit
 * status, its output in log. */
int ptxas(const char *ptx, const char *arch, char *log, size_t loglen);

#endif
