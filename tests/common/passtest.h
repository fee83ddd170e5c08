/* passtest.h — text in, text out for the pass tests (tests/amd/test_hazard.c,
 * test_ssa_ra.c, test_passes.c): build MIR from assembly text, print it back,
 * and compare it with the expected text, in which `$name` binds to the
 * register text seen first and must match it everywhere after (ACO style:
 * tests do not pin registers).
 *
 * Assembly text: one instruction a line, "BBn:" starting block n (blocks in
 * order from 0).  A block falls through to the next unless it ends in
 * s_branch or s_endpgm; "s_branch BBk" / "s_cbranch_* BBk" add the edge to
 * block k; a trailing " @hi" sets op_sel bit 3 (the destination's high half). */
#ifndef TILEASM_TEST_PASSTEST_H
#define TILEASM_TEST_PASSTEST_H

#include "mir.h"
#include "regalloc.h"

/* Appends the code of src to f (mir_init'ed, empty). */
void mir_from_asm(MFunc *f, const char *src);
/* f as assembly text in the form mir_from_asm reads (malloc'd). */
char *mir_to_asm(const MFunc *f);
/* f as mir_print writes it (malloc'd). */
char *mir_dump(const MFunc *f);
/* Does text match pat ($name bindings)?  A white-space run matches any
 * white-space run (none needed at either end); *why says where it fails. */
int text_match(const char *text, const char *pat, char *why, size_t whylen);
/* cr_expect that got matches want, showing both (what names the text). */
void expect_text(const char *got, const char *want, const char *what);
/* expect_text of f's mir_print text. */
void expect_mir(const MFunc *f, const char *want);
/* f after allocation as it will be encoded (mir_print leaves out offsets):
 * ra_rewrite (asserted), then one tab-indented instruction a line
 * (malloc'd); frees f, r and d (the spill tests' common ending). */
char *mir_encoded_text(MFunc *f, RaResult *r, Diag *d);

#endif
