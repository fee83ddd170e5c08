/* run_amd.h — shared by run_emu.c and run_hsa.c: the AMD code object for a
 * RunCase and its launch plan (grid, block, kernarg bytes). */
#ifndef TILEASM_RUN_AMD_H
#define TILEASM_RUN_AMD_H

#include "codeobj.h"
#include "run.h"

#define RUN_AMD_MAX_ARGS 64
typedef struct {
	const CoKernelInfo *ki;
	uint32_t grid[3], block[3];
	uint8_t *kernarg;      /* malloc'd, kernarg_size bytes; pointers filled by the backend */
	uint32_t kernarg_size;
	int nargs;
	uint32_t arg_offset[RUN_AMD_MAX_ARGS];
	uint8_t arg_is_ptr[RUN_AMD_MAX_ARGS];
} RunAmdPlan;

/* Returns 0 with *co malloc'd, 1 on error, 2 when no AMD compiler is available. */
int run_amd_code_object(RunCase *rc, uint8_t **co, size_t *n);
int run_amd_plan(RunCase *rc, const CoObject *obj, RunAmdPlan *p);

#endif
