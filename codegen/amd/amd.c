/* amd.c — the AMD backend driver: compile_kernel runs the passes of amd.h as
 * one list of run_pass calls for every kernel (run_pass times each, and
 * verifies and dumps its result when asked); amd_compile writes the code
 * object. */
#include "amd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


const char *const amd_pass_name[AMD_PASS_COUNT] = {"lower", "licm", "isel",    "opt",    "sched",
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
	/* SIMT parameters are the kernel's arguments in order (lower.h). */
	abi->param_offset = malloc(sizeof(uint32_t) * (sf->params.len + 1));
	if (!abi->param_offset)
		return -1;
	abi->kernarg_size = ir_arg_layout(sf->m, sf->kernel, abi->param_offset);
	return 0;
}

/* One kernel on its way through the passes. */
typedef struct {
	const Module *m;
	int kernel;
	const Target *t;
	AmdOutput *out;
	Diag *d;
	int verify;
	SimtFunc sf;      /* lower */
	AmdAbi abi;       /* abi */
	int sys_sgprs;    /* system SGPRs the hardware initialises */
	int wave_sgpr;    /* gfx90a: the scratch wave offset's SGPR (0: none) */
	MFunc mf;         /* isel .. hazard */
	AmdSchedStats sched;
	Liveness live;    /* sched's block live sets serve the allocator too */
	RaReport ra;
	AmdCode code;     /* emit */
	CoKernel *k;      /* describe */
	AmdKernelInfo *ki;
} AmdJob;

typedef int (*AmdPass)(AmdJob *j);

static int oom(AmdJob *j)
{
	diag_error(j->d, "out of memory");
	return -1;
}

static int pass_lower(AmdJob *j)
{
	LowerOptions o = {.no_vector_frags = j->out->no_vector_frags};
	return lower_kernel_opts(j->m, j->kernel, j->t, &o, &j->sf, j->d);
}

/* Where the hardware puts the inputs, from the descriptor's enables. */
static int setup_abi(AmdJob *j)
{
	const Target *t = j->t;
	CoKernel *k = j->k;
	co_kernel_init(k, t);
	unsigned dims = amd_wgid_dims(&j->sf);
	k->wg_id_x = 1;
	k->wg_id_y = (dims >> 1) & 1;
	k->wg_id_z = (dims >> 2) & 1;
	AmdAbi *abi = &j->abi;
	abi->kernarg_sgpr = (k->user_sgprs & CO_USGPR_PRIVATE_SEGMENT_BUFFER) ? 4 : 0;
	int sys = co_user_sgpr_count(t, k);
	for (int dm = 0; dm < 3; dm++)
		abi->wgid_sgpr[dm] = -1;
	abi->wgid_sgpr[0] = sys++;
	if (k->wg_id_y)
		abi->wgid_sgpr[1] = sys++;
	if (k->wg_id_z)
		abi->wgid_sgpr[2] = sys++;
	j->sys_sgprs = sys;
	/* gfx90a: if spills go to scratch, the private segment wave offset
	 * comes after the workgroup ids (gfx942/gfx1100 have architected flat
	 * scratch: no SGPR, the hardware sets FLAT_SCRATCH). */
	j->wave_sgpr = t->id == TA_TARGET_GFX90A ? sys : 0;
	if (amd_kernarg_layout(&j->sf, abi))
		return oom(j);
	j->ki->param_offset = abi->param_offset;
	j->ki->kernarg_size = abi->kernarg_size;
	return 0;
}

static int pass_licm(AmdJob *j)
{
	/* Hoisting trades registers for instructions: not under a register
	 * limit the caller imposes (reg_limit), where it would only spill. */
	for (int c = 0; c < MR_NCLASS; c++)
		if (j->out->reg_limit[c])
			return 0;
	return amd_licm(&j->sf) ? oom(j) : 0;
}

static int pass_isel(AmdJob *j)
{
	return amd_isel(&j->sf, j->t, &j->abi, &j->mf, j->d);
}

static int pass_opt(AmdJob *j)
{
	return amd_opt(&j->mf, NULL) ? oom(j) : 0;
}

static int pass_sched(AmdJob *j)
{
	return amd_sched_live(&j->mf, &j->sched, &j->live) ? oom(j) : 0;
}

/* ra_run's fallback when the scheduled order does not fit: the function
 * again, selected in source order. */
static int rebuild_unscheduled(void *arg, MFunc *mf, Diag *d)
{
	AmdJob *j = arg;
	mir_free(mf);
	mir_init(mf, j->t->id);
	if (amd_isel(&j->sf, j->t, &j->abi, mf, d))
		return -1;
	return amd_opt(mf, NULL) ? oom(j) : 0;
}

static int pass_regalloc(AmdJob *j)
{
	RaRunOptions opt = {
		.name = j->sf.name,
		.wave_sgpr = j->wave_sgpr,
		.live = &j->live,
		.sched_moves = j->sched.moves,
		.sched_limit_v = j->sched.limit_v,
		.lds_bytes = (int)j->sf.smem_bytes,
		.threads = j->sf.threads,
		.rebuild = rebuild_unscheduled,
		.rebuild_arg = j,
	};
	memcpy(opt.limits.reg_limit, j->out->reg_limit, sizeof opt.limits.reg_limit);
	int rc = ra_run(&j->mf, &opt, &j->ra, j->d);
	liveness_free(&j->live);
	return rc;
}

static int pass_waitcnt(AmdJob *j)
{
	return amd_waitcnt(&j->mf, j->d);
}

static int pass_hazard(AmdJob *j)
{
	return amd_hazard(&j->mf, j->d);
}

static int pass_emit(AmdJob *j)
{
	AmdOutput *out = j->out;
	const RaReport *ra = &j->ra;
	const RaSpillStats *sp = &ra->spills;
	if (out->want_listing)
		sb_printf(&out->listing, "%s:\n; regalloc: %s, %d live-range splits\n", j->sf.name,
			  ra->allocator == RA_SSA ? (sp->rounds > 1 ? "ssa + spill" : "ssa")
			  : sp->rounds > 1 ? "linear scan + spill" : "linear scan",
			  ra->splits);
	if (out->want_listing && (j->sf.unrolled || j->sf.unroll_kept))
		sb_printf(&out->listing, "; unroll: %d loops unrolled, %d kept as loops (%s)\n", j->sf.unrolled,
			  j->sf.unroll_kept, LOWER_UNROLL_CAP);
	if (out->want_listing && sp->scratch_bytes)
		sb_printf(&out->listing, "; spills: %d SGPR dwords in VGPR lanes, %d VGPR dwords in AGPRs, %d in "
			  "scratch (%d bytes per work-item)\n", sp->sgpr_spills, sp->agpr_spills,
			  sp->scratch_spills, sp->scratch_bytes);
	return amd_emit(&j->mf, &j->code, out->want_listing ? &out->listing : NULL, j->d);
}

/* The kernel descriptor, its arguments and the caller's summary. */
static int describe(AmdJob *j)
{
	const SimtFunc *sf = &j->sf;
	const RaSpillStats *sp = &j->ra.spills;
	ta_target it = j->t->id;
	CoKernel *k = j->k;
	AmdKernelInfo *ki = j->ki;
	size_t nl = strlen(sf->name);
	if (j->sf.notes.len && !(ki->notes = sb_take(&j->sf.notes)))
		return oom(j);
	ki->name = malloc(nl + 1);
	CoArg *args = calloc(sf->params.len + 1, sizeof(CoArg));
	ki->params = calloc(sf->params.len + 1, sizeof(SimtParam));
	k->args = args;
	if (!ki->name || !args || !ki->params)
		return oom(j);
	memcpy(ki->name, sf->name, nl + 1);
	k->name = ki->name;
	k->code = j->code.code;
	j->code.code = NULL; /* now owned by k (freed by amd_compile) */
	k->code_size = j->code.len;
	k->group_segment_size = (uint32_t)sf->smem_bytes;
	k->kernarg_size = j->abi.kernarg_size;
	k->vgprs = TA_MAX(j->code.vgprs, 1);
	k->agprs = j->code.agprs;
	k->sgprs = TA_MAX(j->code.sgprs, j->sys_sgprs);
	k->max_flat_workgroup_size = (uint32_t)sf->threads;
	k->sgpr_spill_count = sp->sgpr_spills;
	k->vgpr_spill_count = sp->vgpr_spills;
	if (sp->scratch_bytes) {
		/* Kernels without scratch keep every bit as before. */
		k->private_segment = 1;
		k->private_segment_size = (uint32_t)sp->scratch_bytes;
		if (j->wave_sgpr)
			k->sgprs = TA_MAX(k->sgprs, j->wave_sgpr + 1);
	}
	ki->sgprs = k->sgprs;
	ki->vgprs = k->vgprs;
	ki->agprs = k->agprs;
	ki->lds_bytes = (int)sf->smem_bytes;
	ki->scratch_bytes = sp->scratch_bytes;
	ki->ninsns = j->code.ninsns;
	ki->code_bytes = (int)j->code.len;
	ki->threads = sf->threads;
	ki->waves = occ_waves(it, k->vgprs, k->agprs, k->sgprs + 2, (int)sf->smem_bytes, sf->threads,
			      &ki->waves_limit);
	/* Arguments: names point into the module (alive for this call). */
	ki->nparams = (int)sf->params.len;
	for (size_t p = 0; p < sf->params.len; p++) {
		const SimtParam *spm = &sf->params.data[p];
		ki->params[p] = *spm;
		CoArg *a = &args[p];
		a->name = spm->name;
		a->offset = ki->param_offset[p];
		a->size = spm->vt == VT_I64 || spm->vt == VT_F64 ? 8 : 4;
		if (spm->kind == PK_TENSOR) {
			a->value_kind = CO_VK_GLOBAL_BUFFER;
			a->address_space = CO_AS_GLOBAL;
		} else {
			a->value_kind = CO_VK_BY_VALUE;
		}
	}
	k->nargs = (int)sf->params.len;
	return 0;
}

/* The IR after pass p checked (j->verify) and dumped (out->dump_after). */
static int after_pass(AmdJob *j, int p)
{
	const AmdOutput *out = j->out;
	int dump = out->dump_after && !strcmp(out->dump_after, amd_pass_name[p]);
	if (!j->verify && !dump)
		return 0;
	StrBuf err = {0};
	int bad = 0;
	bool simt = p <= AMD_PASS_LICM;
	if (j->verify && simt)
		bad = simt_verify(&j->sf, &err);
	else if (j->verify)
		bad = mir_verify(&j->mf, p >= AMD_PASS_RA, &err);
	if (bad) {
		diag_error(j->d, "internal error: %s of kernel '%s' after %s: %s", simt ? "SIMT IR" : "MIR",
			   j->sf.name, amd_pass_name[p], err.buf ? err.buf : "?");
		sb_free(&err);
		return -1;
	}
	sb_free(&err);
	if (dump) {
		StrBuf *sb = &j->out->dump;
		sb_printf(sb, "; after %s: %s\n", amd_pass_name[p], j->sf.name);
		if (simt)
			simt_print(&j->sf, sb);
		else
			mir_print(&j->mf, sb);
	}
	return 0;
}

/* Runs pass p: times it, then checks and dumps its result as asked. */
static int run_pass(AmdJob *j, int p, AmdPass fn)
{
	double t0 = now_ms();
	int rc = fn(j);
	j->out->pass_ms[p] += now_ms() - t0;
	return rc ? -1 : after_pass(j, p);
}

/* The pipeline of one kernel. */
static int compile_kernel(AmdJob *j)
{
	return run_pass(j, AMD_PASS_LOWER, pass_lower) ||
	       run_pass(j, AMD_PASS_LICM, pass_licm) ||
	       setup_abi(j) ||
	       run_pass(j, AMD_PASS_ISEL, pass_isel) ||
	       run_pass(j, AMD_PASS_OPT, pass_opt) ||
	       run_pass(j, AMD_PASS_SCHED, pass_sched) ||
	       run_pass(j, AMD_PASS_RA, pass_regalloc) ||
	       run_pass(j, AMD_PASS_WAITCNT, pass_waitcnt) ||
	       run_pass(j, AMD_PASS_HAZARD, pass_hazard) ||
	       run_pass(j, AMD_PASS_EMIT, pass_emit) ||
	       describe(j) ? -1 : 0;
}

int amd_compile(const Module *m, const Target *t, AmdOutput *out, Diag *d)
{
	if (!target_is_amd(t->id)) {
		diag_error(d, "amd_compile: %s is not an AMD target", target_name(t->id));
		return -1;
	}
	int nk = (int)m->kernels.len, rc = -1;
	CoKernel *ks = calloc((size_t)nk + 1, sizeof(CoKernel));
	out->kernels = calloc((size_t)nk + 1, sizeof(AmdKernelInfo));
	out->nkernels = nk;
	if (!ks || !out->kernels) {
		diag_error(d, "out of memory");
		goto done;
	}
	int failed = 0;
	for (int k = 0; k < nk; k++) {
		AmdJob j = {.m = m, .kernel = k, .t = t, .out = out, .d = d, .k = &ks[k], .ki = &out->kernels[k]};
#ifdef TA_VERIFY_PASSES
		j.verify = 1;
#else
		j.verify = out->verify;
#endif
		mir_init(&j.mf, t->id);
		if (compile_kernel(&j))
			failed = 1; /* the next kernels still report their errors */
		free(j.code.code);
		liveness_free(&j.live);
		mir_free(&j.mf);
		simt_free(&j.sf);
	}
	if (failed)
		goto done;
	if (co_write(t, ks, nk, &out->code_object, &out->code_object_len, d))
		goto done;
	rc = 0;
done:
	for (int i = 0; ks && i < nk; i++) {
		free((void *)ks[i].code);
		free((void *)ks[i].args);
	}
	free(ks);
	return rc;
}

void amd_output_free(AmdOutput *out)
{
	for (int i = 0; i < out->nkernels && out->kernels; i++) {
		free(out->kernels[i].name);
		free(out->kernels[i].params);
		free(out->kernels[i].param_offset);
		free(out->kernels[i].notes);
	}
	free(out->kernels);
	free(out->code_object);
	sb_free(&out->listing);
	sb_free(&out->dump);
	out->kernels = NULL;
	out->code_object = NULL;
	out->nkernels = 0;
}
