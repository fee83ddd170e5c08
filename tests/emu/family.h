/* family.h — per-instruction-family emulator tests: a kernel body from
 * tests/emu/fam_*.s is wrapped in a generated prologue and descriptor,
 * assembled with tileasm's own assembler (co_assemble), run in the
 * emulator, and each work-item's results are returned for the test to
 * compare with values computed in C.
 *
 * The body sees (every target):
 *   s[0:1] kernarg pointer, s2 workgroup id x,
 *   s[4:5] out pointer, s[6:7] in pointer, s8 the u32 argument n,
 *   v0 local id, v1 = gid * 4R (byte offset of this work-item's R result
 *   dwords in out), v2 = gid (flat work-item id);
 * free for the body: s9 .. s63, v3 .. v63, a0 .. a31 (gfx9).
 *
 * One body file can serve gfx9 (gfx90a/gfx942) and gfx11: for gfx1100 the
 * harness renames a few gfx9 mnemonics to their gfx11 spellings
 * (s_load_dword -> s_load_b32, global_store_dword -> global_store_b32,
 * v_add_u32 -> v_add_nc_u32, ds_write_b32 -> ds_store_b32, ...; the table is
 * in family.c).  Lane-mask operands are written %VCC%, %EXEC%, %W% (32 or 64,
 * for _b%W% suffixes), %Mn% (s[n:n+1] in wave64, sn in wave32) and %RTN% (the
 * returning-atomic bit: sc0 on gfx942, glc elsewhere).  Files
 * named fam_X_gfx9.s / fam_X_gfx11.s are used as they are on that family. */
#ifndef TILEASM_TEST_EMU_FAMILY_H
#define TILEASM_TEST_EMU_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "emu.h"

typedef struct {
	ta_target t;
	int wave64; /* gfx1100 only */
	const char *name; /* "gfx90a", "gfx942", "gfx1100 wave32", "gfx1100 wave64" */
} FamTarget;

extern const FamTarget fam_targets[4]; /* gfx90a, gfx942, gfx1100 w32, gfx1100 w64 */

typedef struct {
	const char *file;   /* tests/emu/<file> (full name) */
	int results;        /* R: dwords per work-item */
	uint32_t block, grid;
	const void *in;     /* input buffer (may be NULL) */
	size_t in_bytes;
	uint32_t n;         /* the u32 argument */
	uint32_t lds;       /* group segment bytes */
} FamCase;

/* Runs the case on ft; returns malloc'd out (R * block * grid dwords).
 * Assertion failure (with the assembler's or emulator's message) on error. */
uint32_t *fam_run(const FamTarget *ft, const FamCase *c);
/* The same, returning the error text instead (NULL if it ran). */
char *fam_run_err(const FamTarget *ft, const FamCase *c, uint32_t **out);
static inline int fam_lanes(const FamTarget *ft) { return ft->t == TA_TARGET_GFX1100 && !ft->wave64 ? 32 : 64; }

#endif
