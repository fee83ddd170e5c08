/* run_hsa.c — `tileasm run --backend=hsa`: the same code object and launch
 * plan as the emulator (run_emu.c), dispatched on a real AMD GPU through
 * ROCr (runtime/hsa.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa.h"
#include "run.h"
#include "run_amd.h"

int run_backend_hsa(RunCase *rc)
{
	uint8_t *co = NULL;
	size_t n = 0;
	int ret = run_amd_code_object(rc, &co, &n);
	if (ret)
		return ret;
	ret = 1;
	Diag d;
	diag_init(&d);
	RunAmdPlan p = {0};
	uint64_t dptr[RUN_AMD_MAX_ARGS] = {0};
	CoObject *obj = NULL;
	RocrRt *rt = NULL;
	if (co_read(co, n, &obj, &d) || run_amd_plan(rc, obj, &p))
		goto out;
	if (rocr_open(NULL, &rt, &d)) {
		ret = 2;
		goto out;
	}
	if (rocr_load(rt, co, n, &d))
		goto out;
	for (int i = 0; i < p.nargs; i++) {
		if (!p.arg_is_ptr[i])
			continue;
		dptr[i] = rocr_alloc(rt, rc->args[i].bytes, &d);
		if (!dptr[i] || rocr_copy_to(rt, dptr[i], rc->args[i].data, rc->args[i].bytes, &d))
			goto out;
		memcpy(p.kernarg + p.arg_offset[i], &dptr[i], 8);
	}
	printf("  hsa: agent %s, kernel %s, grid (%u, %u, %u), block %u\n", rocr_agent_name(rt), p.ki->k.name,
	       p.grid[0], p.grid[1], p.grid[2], p.block[0]);
	if (p.grid[0] && p.grid[1] && p.grid[2] &&
	    rocr_launch(rt, p.ki->k.name, p.grid, p.block, p.kernarg, p.kernarg_size, 0, &d))
		goto out;
	for (int i = 0; i < p.nargs; i++)
		if (p.arg_is_ptr[i] && rc->written[i] &&
		    rocr_copy_from(rt, rc->args[i].data, dptr[i], rc->args[i].bytes, &d))
			goto out;
	ret = 0;
out:
	fputs(diag_text(&d), stderr);
	diag_free(&d);
	for (int i = 0; rt && i < p.nargs; i++)
		rocr_free(rt, dptr[i]);
	rocr_close(rt);
	free(p.kernarg);
	co_object_free(obj);
	free(co);
	return ret;
}
