/* amd.c — the AMD backend driver: one function runs the passes of amd.h in
 * order for every kernel and writes the code object. */
#include "amd.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "regalloc.h"

const char *const amd_pass_name[AMD_PASS_COUNT] = {"lower", "isel",    "opt",    "sched",
							     "regalloc", "waitcnt", "hazard", "emit"};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

unsigned amd_wgid_dims(const SimtFunc *sf)
{
	unsigned dims = 1; /* x is always enabled, as clang does */
	for (size_t i = 0; i < sf->code.len; i++)
		if (sf->code.data[i].op == SI_CTAID && sf->code.data[i].imm >= 0 && sf->code.data[i].imm < 3)
			dims |= 1u << sf->code.data[i].imm;
	return dims;
}

int amd_kernarg_layout(const SimtFunc *sf, AmdAbi *abi)
{
	uint32_t off = 0;
	abi->param_offset = malloc(sizeof(uint32_t) * (sf->params.len + 1));
	if (!abi->param_offset)
		return -1;
	for (size_t i = 0; i < sf->params.len; i++) {
		int vt = sf->params.data[i].vt;
		uint32_t size = vt == VT_I64 || vt == VT_F64 ? 8 : 4;
		off = (off + size - 1) / size * size;
		abi->param_offset[i] = off;
		off += size;
	}
	abi->kernarg_size = off;
	return 0;
}

/* Compiles one SIMT function into code; fills k (not its args). */
static int compile_func(const SimtFunc *sf, const Target *t, CoKernel *k, AmdKernelInfo *ki, AmdOutput *out,
			Diag *d)
{
	ta_target it = t->id;
	co_kernel_init(k, t);
	unsigned dims = amd_wgid_dims(sf);
	k->wg_id_x = 1;
	k->wg_id_y = (dims >> 1) & 1;
	k->wg_id_z = (dims >> 2) & 1;
	AmdAbi abi;
	memset(&abi, 0, sizeof abi);
	abi.kernarg_sgpr = (k->user_sgprs & CO_USGPR_PRIVATE_SEGMENT_BUFFER) ? 4 : 0;
	int sys = co_user_sgpr_count(t, k);
	for (int dm = 0; dm < 3; dm++)
		abi.wgid_sgpr[dm] = -1;
	abi.wgid_sgpr[0] = sys++;
	if (k->wg_id_y)
		abi.wgid_sgpr[1] = sys++;
	if (k->wg_id_z)
		abi.wgid_sgpr[2] = sys++;
	/* gfx90a: if spills go to scratch, the private segment wave offset
	 * comes after the workgroup ids (gfx942/gfx1100 have architected flat
	 * scratch: no SGPR, the hardware sets FLAT_SCRATCH). */
	int wave_sgpr = it == TA_TARGET_GFX90A ? sys : 0;
	if (amd_kernarg_layout(sf, &abi)) {
		diag_error(d, "out of memory");
		return -1;
	}
	ki->param_offset = abi.param_offset;
	ki->kernarg_size = abi.kernarg_size;
	MFunc mf;
	mir_init(&mf, it);
	RaResult ra;
	memset(&ra, 0, sizeof ra);
	AmdCode code;
	memset(&code, 0, sizeof code);
	int rc = -1;
	double t0 = now_ms();
	if (amd_isel(sf, t, &abi, &mf, d))
		goto out;
	double t1 = now_ms();
	out->pass_ms[AMD_PASS_ISEL] += t1 - t0;
	if (amd_opt(&mf, NULL)) {
		diag_error(d, "out of memory");
		goto out;
	}
	double t1a = now_ms();
	out->pass_ms[AMD_PASS_OPT] += t1a - t1;
	AmdSchedStats sched;
	Liveness live; /* sched's block live sets serve the SSA allocator too */
	if (amd_sched_live(&mf, &sched, &live)) {
		diag_error(d, "out of memory");
		goto out;
	}
	double t1b = now_ms();
	out->pass_ms[AMD_PASS_SCHED] += t1b - t1a;
	t1 = t1b;
	RaOptions ropt;
	memcpy(ropt.reg_limit, out->reg_limit, sizeof ropt.reg_limit);
	Diag quiet;
	diag_init(&quiet);
	/* The SSA allocator first (it frees registers where values are dead and
	 * splits live ranges for tuples), the linear scan when it gives up. */
	int ra_rc = ra_allocate_ssa_live(&mf, &ropt, &live, &ra, &quiet);
	liveness_free(&live);
	if (ra_rc)
		ra_rc = ra_allocate(&mf, &ropt, &ra, &quiet);
	diag_free(&quiet);
	RaSpillStats spills;
	memset(&spills, 0, sizeof spills);
	/* The scheduler bounds the demand, but the allocator's interval hulls
	 * can need more: a schedule that costs occupancy is not kept. */
	if (!ra_rc && sched.moves) {
		int lds = (int)sf->smem_bytes;
		int got = occ_waves(it, ra.used[MR_V], ra.used[MR_A], ra.used[MR_S] + 2, lds, sf->threads, NULL);
		int want = occ_waves(it, sched.limit_v, ra.used[MR_A], ra.used[MR_S] + 2, lds, sf->threads, NULL);
		if (got < want) {
			ra_result_free(&ra);
			ra_rc = -1;
		}
	}
	if (ra_rc && sched.moves) {
		/* The scheduled order did not fit: back to the source order (a
		 * rare path, so rebuilt rather than kept as a copy every time). */
		mir_free(&mf);
		mir_init(&mf, it);
		if (amd_isel(sf, t, &abi, &mf, d) || amd_opt(&mf, NULL))
			goto out;
		diag_init(&quiet);
		ra_rc = ra_allocate_ssa(&mf, &ropt, &ra, &quiet);
		diag_free(&quiet);
	}
	if (ra_rc) /* then spilling, in a bounded number of rounds */
		ra_rc = ra_allocate_spill_abi(&mf, &ropt, wave_sgpr, &ra, &spills, d);
	if (ra_rc)
		goto out;
	StrBuf err = {0};
	/* ra_allocate_ssa validated its result before keeping it. */
	if (ra.allocator != RA_SSA && ra_validate(&mf, ra.phys, &err)) {
		diag_error(d, "internal error: register allocation of kernel '%s' is invalid: %s", sf->name,
			   err.buf ? err.buf : "?");
		sb_free(&err);
		goto out;
	}
	sb_free(&err);
	if (ra_rewrite(&mf, &ra, d))
		goto out;
	double t2 = now_ms();
	out->pass_ms[AMD_PASS_RA] += t2 - t1;
	if (amd_waitcnt(&mf, d))
		goto out;
	double t3 = now_ms();
	out->pass_ms[AMD_PASS_WAITCNT] += t3 - t2;
	if (amd_hazard(&mf, d))
		goto out;
	double t4 = now_ms();
	out->pass_ms[AMD_PASS_HAZARD] += t4 - t3;
	if (out->want_listing)
		sb_printf(&out->listing, "%s:\n; regalloc: %s, %d live-range splits\n", sf->name,
			  ra.allocator == RA_SSA ? (spills.rounds > 1 ? "ssa + spill" : "ssa")
			  : spills.rounds > 1 ? "linear scan + spill" : "linear scan",
			  ra.splits);
	if (out->want_listing && spills.scratch_bytes)
		sb_printf(&out->listing, "; spills: %d SGPR dwords in VGPR lanes, %d VGPR dwords in AGPRs, %d in "
			  "scratch (%d bytes per work-item)\n", spills.sgpr_spills, spills.agpr_spills,
			  spills.scratch_spills, spills.scratch_bytes);
	if (amd_emit(&mf, &code, out->want_listing ? &out->listing : NULL, d))
		goto out;
	out->pass_ms[AMD_PASS_EMIT] += now_ms() - t4;
	k->name = sf->name;
	k->code = code.code;
	k->code_size = code.len;
	k->group_segment_size = (uint32_t)sf->smem_bytes;
	k->kernarg_size = abi.kernarg_size;
	k->vgprs = TA_MAX(code.vgprs, 1);
	k->agprs = code.agprs;
	k->sgprs = TA_MAX(code.sgprs, sys);
	k->max_flat_workgroup_size = (uint32_t)sf->threads;
	k->sgpr_spill_count = spills.sgpr_spills;
	k->vgpr_spill_count = spills.vgpr_spills;
	if (spills.scratch_bytes) {
		/* Kernels without scratch keep every bit as before. */
		k->private_segment = 1;
		k->private_segment_size = (uint32_t)spills.scratch_bytes;
		if (wave_sgpr)
			k->sgprs = TA_MAX(k->sgprs, wave_sgpr + 1);
	}
	ki->sgprs = k->sgprs;
	ki->vgprs = k->vgprs;
	ki->agprs = k->agprs;
	ki->lds_bytes = (int)sf->smem_bytes;
	ki->scratch_bytes = spills.scratch_bytes;
	ki->ninsns = code.ninsns;
	ki->code_bytes = (int)code.len;
	ki->threads = sf->threads;
	ki->waves = occ_waves(it, k->vgprs, k->agprs, k->sgprs + 2, (int)sf->smem_bytes, sf->threads,
			      &ki->waves_limit);
	code.code = NULL; /* now owned by k (freed by the caller) */
	rc = 0;
out:
	free(code.code);
	ra_result_free(&ra);
	mir_free(&mf);
	return rc;
}

int amd_compile(const Module *m, const Target *t, AmdOutput *out, Diag *d)
{
	if (!target_is_amd(t->id)) {
		diag_error(d, "amd_compile: %s is not an AMD target", target_name(t->id));
		return -1;
	}
	int nk = (int)m->kernels.len, rc = -1;
	CoKernel *ks = calloc((size_t)nk + 1, sizeof(CoKernel));
	CoArg **args = calloc((size_t)nk + 1, sizeof(CoArg *));
	out->kernels = calloc((size_t)nk + 1, sizeof(AmdKernelInfo));
	out->nkernels = nk;
	if (!ks || !args || !out->kernels) {
		diag_error(d, "out of memory");
		goto done;
	}
	int failed = 0;
	for (int ki = 0; ki < nk; ki++) {
		SimtFunc sf;
		double t0 = now_ms();
		int lr = lower_kernel(m, ki, t, &sf, d);
		out->pass_ms[AMD_PASS_LOWER] += now_ms() - t0;
		AmdKernelInfo *info = &out->kernels[ki];
		if (!lr) {
			size_t nl = strlen(sf.name);
			info->name = malloc(nl + 1);
			if (info->name)
				memcpy(info->name, sf.name, nl + 1);
		}
		if (lr || !info->name || compile_func(&sf, t, &ks[ki], info, out, d)) {
			failed = 1;
			simt_free(&sf);
			continue;
		}
		ks[ki].name = info->name;
		/* Arguments: names point into the module (alive for this call). */
		args[ki] = calloc(sf.params.len + 1, sizeof(CoArg));
		info->params = calloc(sf.params.len + 1, sizeof(SimtParam));
		if (!args[ki] || !info->params) {
			diag_error(d, "out of memory");
			failed = 1;
			simt_free(&sf);
			continue;
		}
		info->nparams = (int)sf.params.len;
		for (size_t p = 0; p < sf.params.len; p++) {
			const SimtParam *sp = &sf.params.data[p];
			info->params[p] = *sp;
			CoArg *a = &args[ki][p];
			a->name = sp->name;
			a->offset = info->param_offset[p];
			a->size = sp->vt == VT_I64 || sp->vt == VT_F64 ? 8 : 4;
			if (sp->kind == PK_TENSOR) {
				a->value_kind = CO_VK_GLOBAL_BUFFER;
				a->address_space = CO_AS_GLOBAL;
			} else {
				a->value_kind = CO_VK_BY_VALUE;
			}
		}
		ks[ki].args = args[ki];
		ks[ki].nargs = (int)sf.params.len;
		simt_free(&sf);
	}
	if (failed)
		goto done;
	if (co_write(t, ks, nk, &out->code_object, &out->code_object_len, d))
		goto done;
	rc = 0;
done:
	if (ks)
		for (int i = 0; i < nk; i++)
			free((void *)ks[i].code);
	if (args)
		for (int i = 0; i < nk; i++)
			free(args[i]);
	free(args);
	free(ks);
	return rc;
}

void amd_output_free(AmdOutput *out)
{
	for (int i = 0; i < out->nkernels && out->kernels; i++) {
		free(out->kernels[i].name);
		free(out->kernels[i].params);
		free(out->kernels[i].param_offset);
	}
	free(out->kernels);
	free(out->code_object);
	sb_free(&out->listing);
	out->kernels = NULL;
	out->code_object = NULL;
	out->nkernels = 0;
}
