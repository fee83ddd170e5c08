/* run_emu.c — `tileasm run --backend=emu|hsa --target=gfx...`: get an AMD
 * code object for the kernel, lay out its kernargs from the code object's
 * metadata (.args, explicit arguments in Tile IR parameter order), run it
 * in the emulator (runtime/emu.h) or through ROCr (run_hsa.c), and copy the
 * written tensors back for cmd_run.c's comparison.
 *
 * The code object comes from ta_compile (tileasm.h) of the CLI's module.
 * TILEASM_RUN_HSACO=FILE runs a prebuilt one instead (a development hook:
 * hand-written or llvm-mc-built kernels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "dtype.h"
#include "emu.h"
#include "run.h"
#include "run_amd.h"

int run_amd_code_object(RunCase *rc, uint8_t **co, size_t *n)
{
	const char *path = getenv("TILEASM_RUN_HSACO");
	if (path) {
		*co = (uint8_t *)read_file(path, n);
		if (!*co) {
			fprintf(stderr, "tileasm: error: cannot read TILEASM_RUN_HSACO=%s\n", path);
			return 1;
		}
		return 0;
	}
	ta_binary *bin = NULL;
	ta_status st = ta_compile(rc->ctx, rc->tm, rc->target_spec, &bin);
	fputs(ta_ctx_diagnostics(rc->ctx), stderr);
	ta_ctx_clear_diagnostics(rc->ctx);
	size_t size = 0;
	const void *data = st == TA_OK ? ta_binary_data(bin, &size) : NULL;
	*co = data ? malloc(size) : NULL;
	if (!*co) {
		ta_binary_release(bin);
		fprintf(stderr, "tileasm: error: cannot compile for %s\n", target_name(rc->target.id));
		return 1;
	}
	memcpy(*co, data, size);
	*n = size;
	ta_binary_release(bin);
	return 0;
}

int run_amd_plan(RunCase *rc, const CoObject *obj, RunAmdPlan *p)
{
	const Module *m = rc->m;
	const Kernel *k = &m->kernels.data[rc->kernel];
	memset(p, 0, sizeof *p);
	for (int i = 0; i < obj->nkernels; i++)
		if (!strcmp(obj->kernels[i].k.name, k->name))
			p->ki = &obj->kernels[i];
	if (!p->ki) {
		fprintf(stderr, "tileasm: error: the code object has no kernel '%s'\n", k->name);
		return 1;
	}
	const CoKernel *ck = &p->ki->k;
	p->block[0] = ck->reqd_workgroup_size[0] ? ck->reqd_workgroup_size[0] : ck->max_flat_workgroup_size;
	p->block[1] = p->block[2] = 1;
	int64_t *vals = calloc((size_t)k->nargs + 1, sizeof *vals);
	if (!vals)
		return 1;
	for (int i = 0; i < k->nargs; i++)
		vals[i] = rc->args[i].ival;
	int bad = ir_grid(m, rc->kernel, vals, p->grid);
	free(vals);
	if (bad) {
		fprintf(stderr, "tileasm: error: cannot evaluate the grid of kernel '%s'\n", k->name);
		return 1;
	}
	p->kernarg_size = ck->kernarg_size;
	p->kernarg = calloc(1, p->kernarg_size + 16);
	if (!p->kernarg)
		return 1;
	/* Explicit .args in order are the kernel's parameters. */
	int ai = 0;
	for (int j = 0; j < ck->nargs; j++) {
		const CoArg *a = &ck->args[j];
		if (a->value_kind != CO_VK_BY_VALUE && a->value_kind != CO_VK_GLOBAL_BUFFER)
			continue;
		if (ai >= k->nargs || a->offset + a->size > p->kernarg_size) {
			fprintf(stderr, "tileasm: error: kernel '%s': code object arguments do not match the Tile IR "
				"parameters\n", k->name);
			return 1;
		}
		p->arg_offset[ai] = a->offset;
		p->arg_is_ptr[ai] = a->value_kind == CO_VK_GLOBAL_BUFFER;
		if (!p->arg_is_ptr[ai]) {
			const Var *v = k->args[ai].var >= 0 ? &m->vars.data[k->args[ai].var] : NULL;
			uint8_t bytes[8] = {0};
			if (v && dtype_is_float((DType)v->type)) {
				if (a->size == 8)
					memcpy(bytes, &rc->args[ai].fval, 8);
				else {
					float f = (float)rc->args[ai].fval;
					memcpy(bytes, &f, 4);
				}
			} else
				memcpy(bytes, &rc->args[ai].ival, a->size <= 8 ? a->size : 8);
			memcpy(p->kernarg + a->offset, bytes, a->size <= 8 ? a->size : 8);
		}
		ai++;
		if (ai > RUN_AMD_MAX_ARGS)
			return 1;
	}
	p->nargs = ai;
	return 0;
}

int run_backend_emu(RunCase *rc)
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
	EmuDevice *dev = emu_create(rc->target.id);
	if (!dev) {
		fprintf(stderr, "tileasm: error: --backend=emu needs an AMD target (gfx1100, gfx90a, gfx942)\n");
		goto out;
	}
	if (rc->max_steps) { /* --max-steps bounds the whole launch (and so each wave) */
		emu_set_work_limit(dev, rc->max_steps);
		emu_set_insn_limit(dev, rc->max_steps);
	}
	if (emu_load(dev, co, n, &d) || run_amd_plan(rc, emu_code_object(dev), &p))
		goto out;
	for (int i = 0; i < p.nargs; i++) {
		if (!p.arg_is_ptr[i])
			continue;
		dptr[i] = emu_alloc(dev, rc->args[i].bytes);
		if (!dptr[i] || emu_write(dev, dptr[i], rc->args[i].data, rc->args[i].bytes, &d))
			goto out;
		memcpy(p.kernarg + p.arg_offset[i], &dptr[i], 8);
	}
	emu_set_profile(dev, rc->profile);
	printf("  emu: %s, kernel %s, grid (%u, %u, %u), block %u\n", target_name(rc->target.id), p.ki->k.name,
	       p.grid[0], p.grid[1], p.grid[2], p.block[0]);
	if (p.grid[0] && p.grid[1] && p.grid[2] &&
	    emu_launch(dev, p.ki->k.name, p.grid, p.block, p.kernarg, p.kernarg_size, 0, &d))
		goto out;
	for (int i = 0; i < p.nargs; i++)
		if (p.arg_is_ptr[i] && rc->written[i] && emu_read(dev, dptr[i], rc->args[i].data, rc->args[i].bytes, &d))
			goto out;
	const EmuStats *st = emu_stats(dev);
	printf("  emu: %llu instructions (%llu VALU, %llu SALU, %llu VMEM, %llu LDS, %llu MFMA/WMMA), %llu waves\n",
	       (unsigned long long)st->insns, (unsigned long long)st->valu, (unsigned long long)st->salu,
	       (unsigned long long)st->vmem, (unsigned long long)st->lds, (unsigned long long)st->mma,
	       (unsigned long long)st->waves);
	if (rc->profile && emu_profile(dev)) {
		char *text = emu_profile_format(emu_profile(dev));
		if (!text)
			goto out;
		fputs(text, stdout);
		free(text);
	}
	ret = 0;
out:
	fputs(diag_text(&d), stderr);
	diag_free(&d);
	free(p.kernarg);
	emu_destroy(dev);
	free(co);
	return ret;
}
