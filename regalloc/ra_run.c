/* ra_run.c — the register-allocation entry point: the policy that picks an
 * allocator, keeps or drops the scheduled order, spills, validates and
 * rewrites.  The allocators themselves are ssa_ra.c, ra.c and spill.c. */
#include "regalloc.h"

#include <string.h>

/* The SSA allocator on f after ra_define_undef (live: f's block live sets
 * or NULL).  0, -1 (gave up: a note in quiet) or -2 (out of memory). */
static int ssa_defined(MFunc *f, const RaOptions *lim, const Liveness *live, RaResult *ra, Diag *quiet)
{
	Liveness fresh;
	int nd, u = ra_define_undef(f, live, &fresh, &nd);
	if (u < 0)
		return -2;
	int rc = ra_allocate_ssa(f, lim, u ? &fresh : live, ra, quiet);
	if (u)
		liveness_free(&fresh);
	return rc;
}

int ra_run(MFunc *f, const RaRunOptions *opt, RaReport *rep, Diag *d)
{
	memset(rep, 0, sizeof *rep);
	/* A kernel this long may need branches beyond the SOPP range (+-128 KiB):
	 * amd_emit makes those with s_getpc/s_setpc in an SGPR pair kept free
	 * here.  At most 12 bytes per instruction and half as many again from
	 * waitcnt and the hazard pass stay below the range up to this count. */
	RaOptions lim = opt->limits;
	f->long_branch_sgpr = -1;
	if (f->insns.len > RA_LONG_BRANCH_INSNS) {
		int sl = ((lim.reg_limit[MR_S] ? lim.reg_limit[MR_S] : 96) - 2) & ~1;
		lim.reg_limit[MR_S] = sl;
		f->long_branch_sgpr = (int16_t)sl;
	}
	RaResult ra;
	memset(&ra, 0, sizeof ra);
	Diag quiet;
	diag_init(&quiet);
	/* The SSA allocator first (it frees registers where values are dead and
	 * splits live ranges for tuples), the linear scan when it gives up. */
	int rc = ssa_defined(f, &lim, opt->live, &ra, &quiet);
	if (rc == -2) {
		diag_free(&quiet);
		diag_error(d, "out of memory in register allocation");
		return -1;
	}
	if (rc)
		rc = ra_allocate(f, &lim, NULL, &ra, &quiet);
	diag_free(&quiet);
	/* The scheduler bounds the demand, but the allocator's interval hulls
	 * can need more: a schedule that costs occupancy is not kept. */
	ta_target t = ISA_TARGET(f->target);
	if (!rc && opt->sched_moves) {
		int got = occ_waves(t, ra.used[MR_V], ra.used[MR_A], ra.used[MR_S] + 2, opt->lds_bytes, opt->threads,
				    NULL);
		int want = occ_waves(t, opt->sched_limit_v, ra.used[MR_A], ra.used[MR_S] + 2, opt->lds_bytes,
				     opt->threads, NULL);
		if (got < want) {
			ra_result_free(&ra);
			rc = -1;
		}
	}
	if (rc && opt->sched_moves) {
		/* The scheduled order did not fit: back to the source order (a rare
		 * path, so rebuilt by the caller rather than kept as a copy). */
		if (opt->rebuild(opt->rebuild_arg, f, d))
			return -1;
		diag_init(&quiet);
		rc = ssa_defined(f, &lim, NULL, &ra, &quiet);
		diag_free(&quiet);
		if (rc == -2) {
			diag_error(d, "out of memory in register allocation");
			return -1;
		}
	}
	if (rc) /* then spilling, in a bounded number of rounds */
		rc = ra_allocate_spill(f, &lim, opt->wave_sgpr, &ra, &rep->spills, NULL, d);
	else
		rep->spills.rounds = 1;
	if (rc)
		return -1;
	StrBuf err = {0};
	/* ra_allocate_ssa validated its result before keeping it. */
	if (ra.allocator != RA_SSA && ra_validate(f, ra.phys, &err)) {
		diag_error(d, "internal error: register allocation of kernel '%s' is invalid: %s",
			   opt->name ? opt->name : "?", err.buf ? err.buf : "?");
		sb_free(&err);
		ra_result_free(&ra);
		return -1;
	}
	sb_free(&err);
	rep->allocator = ra.allocator;
	rep->splits = ra.splits;
	memcpy(rep->used, ra.used, sizeof rep->used);
	rc = ra_rewrite(f, &ra, d);
	ra_result_free(&ra);
	return rc;
}
