/* emurun.h — the AMD-emulator-against-interpreter runner and the ptxas
 * check that the lowering tests share (tests/amd/test_fa.c, test_vec.c). */
#ifndef TILEASM_TEST_EMURUN_H
#define TILEASM_TEST_EMURUN_H

#include "amd.h"
#include "ir.h"

/* The three AMD targets the runner compiles for, in this order. */
extern const char *const emurun_targets[3];

/* Parses src (or examples/FILE when src is NULL), specializes it with defs
 * and verifies it; asserts on every error. */
Module *load_kernel(const char *label, const char *src, const char *file, const Define *defs, int ndefs, Diag *d);

typedef struct {
	const char *name; /* NULL: unused slot */
	double v;
} ScalarArg;

typedef struct {
	const char *label;
	const ScalarArg *scalars; /* scalar arguments by name */
	int nscalars;
	double scalar_default;    /* every other scalar argument */
	/* Called after each AMD compile (listing on), before the run; may be NULL. */
	void (*check)(const void *ctx, int t, const AmdOutput *out);
	const void *ctx;
} EmuRun;

/* Runs kernel 0 of m on the interpreter and, for every AMD target, on the
 * emulator; every tensor must agree (relative tolerance 1e-4 for f32, 1e-2
 * for 16-bit types: sums in another order, exp2 approximations).  Inputs
 * are the same pseudo-random values in -2..2 on every call. */
void emu_vs_interp(Module *m, const EmuRun *r);

/* Compiles m for sm_80 and sm_90a; check (may be NULL) looks at each PTX text,
 * then ptxas must accept it. */
void ptx_and_ptxas(const Module *m, const char *label, void (*check)(const void *ctx, const char *ptx), const void *ctx);

/* ptxas (/usr/local/cuda/bin/ptxas, required) accepts ptx for arch ("sm_80", "sm_90a"). */
void ptxas_accepts(const char *label, const char *ptx, const char *arch);

#endif
