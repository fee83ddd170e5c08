/* run.h — `tileasm run`: one kernel launch on a backend, checked against the
 * interpreter.  cmd_run.c prepares the arguments (seeded random inputs,
 * poisoned outputs), calls a backend, then compares. */
#ifndef TILEASM_RUN_H
#define TILEASM_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "interp.h"
#include "ir.h"
#include "target.h"
#include "tileasm.h"

typedef struct {
	const Module *m;   /* verified, specialised with the -D values */
	int kernel;        /* index into m->kernels */
	Target target;     /* --target (backends that compile) */
	InterpArg *args;   /* m->kernels[kernel].nargs entries; tensors hold host data */
	bool *written;     /* per argument: the kernel writes this tensor */
	int bench;         /* --bench: also time repeated launches and print them */
	int profile;       /* --profile (emu): print the emulator's profile of the launch */
	uint64_t max_steps; /* --max-steps: the emulator's work bound (0: its default) */
	ta_ctx *ctx;       /* the CLI's context and module: backends compile through tileasm.h */
	ta_module *tm;     /* the module m belongs to */
	const char *target_spec; /* --target as given (features included) */
} RunCase;

/* Backends: run the kernel once, leaving results in rc->args[i].data.
 * Return 0, or print an error to stderr and return 1 (2 if unavailable). */
int run_backend_cuda(RunCase *rc); /* run_cuda.c */
int run_backend_emu(RunCase *rc);  /* run_emu.c: AMD emulator */
int run_backend_hsa(RunCase *rc);  /* run_hsa.c: ROCr */

#endif
