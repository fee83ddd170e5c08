/* oracle.h — helpers shared by the elf/ tests: running LLVM oracles,
 * temporary files, and normalising llvm-readelf output for comparison. */
#ifndef TILEASM_TEST_ELF_ORACLE_H
#define TILEASM_TEST_ELF_ORACLE_H

#include <stddef.h>
#include <stdint.h>

/* Fails the current test with a clear message if /usr/bin/NAME is missing. */
void need_oracle(const char *name);
/* Runs a shell command; returns its exit status, stdout+stderr in *out
 * (malloc'd, NUL-terminated; may be NULL to discard). */
int run(const char *cmd, char **out);
/* A fresh temporary directory (freed by the caller, removed by tmp_cleanup). */
char *tmp_dir(void);
void tmp_cleanup(char *dir);
/* $TILEASM_SRCDIR/tests/elf/NAME (caller frees). */
char *test_src(const char *name);
/* Whole file (caller frees); fails the test if unreadable. */
uint8_t *slurp(const char *path, size_t *len);
void spit(const char *path, const void *p, size_t len);
/* Builds DIR/ref.co from SRC with llvm-mc-19 and ld.lld-19 -shared for a
 * target id such as "gfx942:sramecc+:xnack-". */
char *llvm_build(const char *dir, const char *src, const char *target);
/* "-mcpu=gfx942 -mattr=+sramecc -mattr=-xnack" (caller frees). */
char *llvm_mc_target(const char *target);

/* Section, segment, symbol, header and metadata views of a code object via
 * llvm-readelf-19, normalised so two objects can be compared as text.  Each
 * returns a malloc'd string. */
char *view_header(const char *co);   /* -h minus offsets of the section table */
char *view_sections(const char *co); /* name type flags entsize align, in order */
char *view_segments(const char *co); /* type flags align + section mapping */
char *view_symbols(const char *co);  /* table name type bind vis size, sorted */
char *view_notes(const char *co);    /* the metadata YAML */
char *view_kd(const char *co, const char *mcpu); /* objdump -D .amdhsa_* lines */

/* Asserts the oracles accept co cleanly: readelf -a without warnings,
 * objdump -d without <unknown>, objdump -D without descriptor errors. */
void check_clean(const char *co, const char *mcpu);
/* Asserts two code objects agree in every view above. */
void check_same(const char *ours, const char *ref, const char *mcpu);
/* Same, leaving out lines that mention one of ignore[] (NULL-terminated). */
void check_same_except(const char *ours, const char *ref, const char *mcpu, const char *const *ignore);

#endif
