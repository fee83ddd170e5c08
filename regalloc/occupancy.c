/* occupancy.c — waves per SIMD from register counts, LDS and workgroup size.
 *
 * The numbers are LLVM's (AMDGPUBaseInfo.cpp) as tabulated in
 * /work/shared/notes/regalloc-and-scheduling.md §1; every occupancy
 * question in the backend goes through occ_waves. */
#include "regalloc.h"

int occ_info(ta_target t, OccInfo *o)
{
	memset(o, 0, sizeof *o);
	switch (ISA_TARGET(t)) {
	case TA_TARGET_GFX90A:
	case TA_TARGET_GFX942:
		/* CDNA: one 512-entry file per lane shared by VGPRs and AGPRs. */
		*o = (OccInfo){.max_waves = 8, .vgpr_granule = 8, .vgpr_total = 512, .vgpr_max = 512,
			       .sgpr_max = 102, .lds_per_cu = 65536, .simds_per_cu = 4, .wave = 64};
		return 0;
	case TA_TARGET_GFX1100:
		/* RDNA3 1.5x VGPR file; a WGP (wgp_mode, clang's default) has 4
		 * SIMD32s and 128 KiB of LDS. */
		if (ISA_IS_W64(t))
			*o = (OccInfo){.max_waves = 16, .vgpr_granule = 12, .vgpr_total = 768, .vgpr_max = 256,
				       .sgpr_max = 106, .lds_per_cu = 131072, .simds_per_cu = 4, .wave = 64};
		else
			*o = (OccInfo){.max_waves = 16, .vgpr_granule = 24, .vgpr_total = 1536, .vgpr_max = 256,
				       .sgpr_max = 106, .lds_per_cu = 131072, .simds_per_cu = 4, .wave = 32};
		return 0;
	default:
		return -1;
	}
}

static int align_to(int x, int a)
{
	return (x + a - 1) / a * a;
}

int occ_vgpr_cost(ta_target t, int vgprs, int agprs)
{
	ta_target b = ISA_TARGET(t);
	if ((b == TA_TARGET_GFX90A || b == TA_TARGET_GFX942) && agprs > 0)
		return align_to(vgprs, 4) + agprs;
	return TA_MAX(vgprs, agprs);
}

int occ_waves(ta_target t, int vgprs, int agprs, int sgprs, int lds_bytes, int wg_size,
	      const char **limit)
{
	OccInfo o;
	const char *why = "max";
	if (occ_info(t, &o))
		return 0;
	int waves = o.max_waves;
	int n = occ_vgpr_cost(t, vgprs, agprs);
	if (n > o.vgpr_granule) {
		int w = TA_MAX(o.vgpr_total / align_to(n, o.vgpr_granule), 1);
		if (w < waves)
			waves = w, why = "vgpr";
	}
	/* gfx9: SGPRs bite above 100 (max 8 hides the 80/88 steps); gfx10+
	 * gives every wave its SGPRs. */
	if (o.wave == 64 && ISA_TARGET(t) != TA_TARGET_GFX1100) {
		int w = sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7;
		if (w < waves)
			waves = w, why = "sgpr";
	}
	if (wg_size > 0) {
		int wpg = (wg_size + o.wave - 1) / o.wave; /* waves per workgroup */
		if (lds_bytes > 0) {
			/* Waves of the resident workgroups spread over the SIMDs; a
			 * partly filled SIMD still runs its wave (round up). */
			int groups = o.lds_per_cu / lds_bytes;
			int w = (groups * wpg + o.simds_per_cu - 1) / o.simds_per_cu;
			if (w < waves)
				waves = w, why = "lds";
		}
		/* A workgroup must fit on one CU at this occupancy. */
		if (wpg > waves * o.simds_per_cu)
			why = "workgroup";
	}
	if (limit)
		*limit = why;
	return waves;
}
