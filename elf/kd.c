/* kd.c — kernel descriptor: CoKernel fields <-> the 64 descriptor bytes.
 *
 * Formulas follow LLVM's AMDGPUBaseInfo (granules, extra SGPRs) so that a
 * kernel described here gets the same RSRC words as clang/llvm-mc produce;
 * see docs/code-object.md "Kernel descriptor". */
#include "codeobj.h"

#include <stdio.h>

static int is_cdna(const Target *t) { return t->id == TA_TARGET_GFX90A || t->id == TA_TARGET_GFX942; }
static int is_gfx11(const Target *t) { return t->id == TA_TARGET_GFX1100; }
/* gfx942 and gfx1100 set up scratch in hardware ("architected flat scratch"):
 * no private segment buffer or flat scratch init user SGPRs there. */
static int arch_flat_scratch(const Target *t) { return t->id == TA_TARGET_GFX942 || t->id == TA_TARGET_GFX1100; }

static int align_up(int x, int a) { return (x + a - 1) / a * a; }

void co_kernel_init(CoKernel *k, const Target *t)
{
	memset(k, 0, sizeof *k);
	k->kernarg_align = 8;
	k->reserve_vcc = 1;
	k->float_denorm_32 = 3;
	k->float_denorm_16_64 = 3;
	k->dx10_clamp = 1;
	k->ieee_mode = 1;
	if (is_gfx11(t)) {
		k->wave32 = 1;
		k->wgp_mode = 1;
		k->mem_ordered = 1;
	}
	k->user_sgprs = CO_USGPR_KERNARG_SEGMENT_PTR;
	if (!arch_flat_scratch(t))
		k->user_sgprs |= CO_USGPR_PRIVATE_SEGMENT_BUFFER;
	k->wg_id_x = 1;
	k->max_flat_workgroup_size = 256;
}

int co_user_sgprs_implied(const CoKernel *k)
{
	static const int size[7] = {4, 2, 2, 2, 2, 2, 1};
	int n = 0;
	for (int i = 0; i < 7; i++)
		if (k->user_sgprs & (1 << i))
			n += size[i];
	return n;
}

int co_user_sgpr_count(const Target *t, const CoKernel *k)
{
	if (k->user_sgpr_count)
		return k->user_sgpr_count;
	int n = co_user_sgprs_implied(k);
	/* gfx1100 "UserSGPRInit16Bug": LLVM pads the user SGPRs so that user +
	 * workgroup id/info SGPRs reach 16 (SIISelLowering allocateSystemSGPRs). */
	if (is_gfx11(t)) {
		int sys = k->wg_id_x + k->wg_id_y + k->wg_id_z + k->wg_info;
		if (n + sys < 16)
			n = 16 - sys;
	}
	return n;
}

int co_extra_sgprs(const Target *t, const CoKernel *k)
{
	int extra = k->reserve_vcc ? 2 : 0;
	if (!is_cdna(t))
		return extra; /* gfx10+: VCC only */
	if (t->xnack != FEAT_OFF)
		extra = 4;
	if (k->reserve_flat_scratch || arch_flat_scratch(t))
		extra = 6;
	return extra;
}

int co_sgpr_count(const Target *t, const CoKernel *k) { return k->sgprs + co_extra_sgprs(t, k); }

/* Unified VGPR total on CDNA (arch VGPRs aligned to 4, then AGPRs), like
 * LLVM's getTotalNumVGPRs; the arch count elsewhere. */
int co_vgpr_count(const Target *t, const CoKernel *k)
{
	if (k->vgpr_total)
		return k->vgpr_total;
	if (is_cdna(t) && k->agprs) {
		int acc = k->accum_offset ? k->accum_offset : align_up(TA_MAX(k->vgprs, 1), 4);
		return acc + k->agprs;
	}
	return TA_MAX(k->vgprs, k->agprs);
}

static int vgpr_granule(const Target *t, const CoKernel *k)
{
	if (is_cdna(t))
		return 8;
	return k->wave32 ? 8 : 4;
}

int co_descriptor(const Target *t, const CoKernel *k, CoDescriptor *kd, Diag *d)
{
	memset(kd, 0, sizeof *kd);
	const char *nm = k->name ? k->name : "?";
	if (!target_is_amd(t->id)) {
		diag_error(d, "kernel '%s': %s is not an AMD target", nm, target_name(t->id));
		return -1;
	}
	int vg = co_vgpr_count(t, k);
	int max_vg = is_cdna(t) ? 512 : (k->wave32 ? 256 : 256);
	if (k->vgprs < 0 || k->agprs < 0 || vg > max_vg || k->vgprs > 256 || k->agprs > 256) {
		diag_error(d, "kernel '%s': VGPR count %d (AGPRs %d) out of range for %s", nm, vg,
			   k->agprs, target_name(t->id));
		return -1;
	}
	if (!is_cdna(t) && k->agprs) {
		diag_error(d, "kernel '%s': %s has no AGPRs", nm, target_name(t->id));
		return -1;
	}
	int sg = co_sgpr_count(t, k);
	if (k->sgprs < 0 || k->sgprs > 106) {
		diag_error(d, "kernel '%s': SGPR count %d out of range", nm, k->sgprs);
		return -1;
	}
	if (arch_flat_scratch(t) && (k->user_sgprs & (CO_USGPR_PRIVATE_SEGMENT_BUFFER | CO_USGPR_FLAT_SCRATCH_INIT))) {
		diag_error(d, "kernel '%s': %s has architected flat scratch: no private segment "
			   "buffer or flat scratch init user SGPRs", nm, target_name(t->id));
		return -1;
	}
	int usgpr = co_user_sgpr_count(t, k);
	if (usgpr < co_user_sgprs_implied(k) || usgpr > 31) {
		diag_error(d, "kernel '%s': user SGPR count %d invalid (enabled inputs need %d)", nm,
			   usgpr, co_user_sgprs_implied(k));
		return -1;
	}
	if (!is_gfx11(t) && k->wave32) {
		diag_error(d, "kernel '%s': wave32 is not supported on %s", nm, target_name(t->id));
		return -1;
	}
	if (k->workitem_id_dims > 2 || k->float_round_32 > 3 || k->float_round_16_64 > 3 ||
	    k->float_denorm_32 > 3 || k->float_denorm_16_64 > 3) {
		diag_error(d, "kernel '%s': mode field out of range", nm);
		return -1;
	}

	kd->group_segment_fixed_size = k->group_segment_size;
	kd->private_segment_fixed_size = k->private_segment_size;
	kd->kernarg_size = k->kernarg_size;

	int g = vgpr_granule(t, k);
	uint32_t r1 = (uint32_t)((TA_MAX(vg, 1) + g - 1) / g - 1);
	if (!is_gfx11(t)) /* GRANULATED_WAVEFRONT_SGPR_COUNT is reserved on gfx10+ */
		r1 |= (uint32_t)((TA_MAX(sg, 1) + 7) / 8 - 1) << 6;
	r1 |= (uint32_t)k->float_round_32 << 12 | (uint32_t)k->float_round_16_64 << 14;
	r1 |= (uint32_t)k->float_denorm_32 << 16 | (uint32_t)k->float_denorm_16_64 << 18;
	r1 |= (uint32_t)(k->dx10_clamp & 1) << 21 | (uint32_t)(k->ieee_mode & 1) << 23;
	r1 |= (uint32_t)(k->fp16_overflow & 1) << 26;
	if (is_gfx11(t))
		r1 |= (uint32_t)(k->wgp_mode & 1) << 29 | (uint32_t)(k->mem_ordered & 1) << 30 |
		      (uint32_t)(k->fwd_progress & 1) << 31;
	kd->rsrc1 = r1;

	uint32_t r2 = (uint32_t)(k->private_segment & 1) | (uint32_t)usgpr << 1;
	r2 |= (uint32_t)(k->wg_id_x & 1) << 7 | (uint32_t)(k->wg_id_y & 1) << 8 |
	      (uint32_t)(k->wg_id_z & 1) << 9 | (uint32_t)(k->wg_info & 1) << 10;
	r2 |= (uint32_t)k->workitem_id_dims << 11;
	r2 |= (uint32_t)(k->exception_enables & 0x7f) << 24;
	kd->rsrc2 = r2;

	if (is_cdna(t)) {
		int acc = k->accum_offset ? k->accum_offset : align_up(TA_MAX(k->vgprs, 1), 4);
		if (acc < 4 || acc > 256 || acc % 4 || acc > align_up(TA_MAX(vg, 1), 4)) {
			diag_error(d, "kernel '%s': accum_offset %d invalid (4..256, step 4, within %d VGPRs)",
				   nm, acc, vg);
			return -1;
		}
		kd->rsrc3 = (uint32_t)(acc / 4 - 1) | (uint32_t)(k->tg_split & 1) << 16;
	} else {
		kd->rsrc3 = (uint32_t)(k->shared_vgpr_count & 0xf) | (uint32_t)(k->inst_pref_size & 0x3f) << 4;
	}
	kd->kernel_code_properties = (uint16_t)((k->user_sgprs & 0x7f) | (k->wave32 & 1) << 10 |
						(k->uses_dynamic_stack & 1) << 11);
	return 0;
}

static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

void co_descriptor_encode(const CoDescriptor *kd, uint8_t out[CO_KD_SIZE])
{
	memset(out, 0, CO_KD_SIZE);
	put32(out + 0, kd->group_segment_fixed_size);
	put32(out + 4, kd->private_segment_fixed_size);
	put32(out + 8, kd->kernarg_size);
	put32(out + 16, (uint32_t)kd->kernel_code_entry_byte_offset);
	put32(out + 20, (uint32_t)((uint64_t)kd->kernel_code_entry_byte_offset >> 32));
	put32(out + 44, kd->rsrc3);
	put32(out + 48, kd->rsrc1);
	put32(out + 52, kd->rsrc2);
	out[56] = (uint8_t)kd->kernel_code_properties;
	out[57] = (uint8_t)(kd->kernel_code_properties >> 8);
	out[58] = (uint8_t)kd->kernarg_preload;
	out[59] = (uint8_t)(kd->kernarg_preload >> 8);
}

void co_descriptor_decode(const uint8_t in[CO_KD_SIZE], CoDescriptor *kd)
{
	kd->group_segment_fixed_size = get32(in + 0);
	kd->private_segment_fixed_size = get32(in + 4);
	kd->kernarg_size = get32(in + 8);
	kd->kernel_code_entry_byte_offset = (int64_t)((uint64_t)get32(in + 16) | (uint64_t)get32(in + 20) << 32);
	kd->rsrc3 = get32(in + 44);
	kd->rsrc1 = get32(in + 48);
	kd->rsrc2 = get32(in + 52);
	kd->kernel_code_properties = (uint16_t)(in[56] | in[57] << 8);
	kd->kernarg_preload = (uint16_t)(in[58] | in[59] << 8);
}

#define BITS(v, lo, n) (((v) >> (lo)) & ((1u << (n)) - 1))

void co_descriptor_to_kernel(const Target *t, const CoDescriptor *kd, CoKernel *k)
{
	k->group_segment_size = kd->group_segment_fixed_size;
	k->private_segment_size = kd->private_segment_fixed_size;
	k->kernarg_size = kd->kernarg_size;
	uint32_t r1 = kd->rsrc1, r2 = kd->rsrc2, r3 = kd->rsrc3;
	uint16_t p = kd->kernel_code_properties;
	k->wave32 = is_gfx11(t) ? BITS(p, 10, 1) : 0;
	k->uses_dynamic_stack = BITS(p, 11, 1);
	k->user_sgprs = p & 0x7f;
	int g = vgpr_granule(t, k);
	int vg = (int)(BITS(r1, 0, 6) + 1) * g;
	if (is_cdna(t)) {
		k->accum_offset = (int)(BITS(r3, 0, 6) + 1) * 4;
		k->vgpr_total = vg;
		k->vgprs = TA_MIN(vg, k->accum_offset);
		k->agprs = vg > k->accum_offset ? vg - k->accum_offset : 0;
		k->tg_split = BITS(r3, 16, 1);
	} else {
		k->vgprs = vg;
		k->shared_vgpr_count = BITS(r3, 0, 4);
		k->inst_pref_size = BITS(r3, 4, 6);
	}
	/* The descriptor keeps only the granulated total; report it all as code
	 * SGPRs with no extras reserved. */
	k->reserve_vcc = 0;
	k->reserve_flat_scratch = 0;
	k->sgprs = is_gfx11(t) ? 0 : (int)(BITS(r1, 6, 4) + 1) * 8 - co_extra_sgprs(t, k);
	k->float_round_32 = BITS(r1, 12, 2);
	k->float_round_16_64 = BITS(r1, 14, 2);
	k->float_denorm_32 = BITS(r1, 16, 2);
	k->float_denorm_16_64 = BITS(r1, 18, 2);
	k->dx10_clamp = BITS(r1, 21, 1);
	k->ieee_mode = BITS(r1, 23, 1);
	k->fp16_overflow = BITS(r1, 26, 1);
	if (is_gfx11(t)) {
		k->wgp_mode = BITS(r1, 29, 1);
		k->mem_ordered = BITS(r1, 30, 1);
		k->fwd_progress = BITS(r1, 31, 1);
	}
	k->private_segment = BITS(r2, 0, 1);
	k->user_sgpr_count = (int)BITS(r2, 1, 5);
	k->wg_id_x = BITS(r2, 7, 1);
	k->wg_id_y = BITS(r2, 8, 1);
	k->wg_id_z = BITS(r2, 9, 1);
	k->wg_info = BITS(r2, 10, 1);
	k->workitem_id_dims = BITS(r2, 11, 2);
	k->exception_enables = BITS(r2, 24, 7);
}

void co_descriptor_print(const Target *t, const CoDescriptor *kd, StrBuf *sb)
{
	CoKernel k;
	memset(&k, 0, sizeof k);
	co_descriptor_to_kernel(t, kd, &k);
	static const char *usgpr[7] = {"private_segment_buffer", "dispatch_ptr", "queue_ptr",
				       "kernarg_segment_ptr", "dispatch_id", "flat_scratch_init",
				       "private_segment_size"};
	sb_printf(sb, ".amdhsa_group_segment_fixed_size %u\n", kd->group_segment_fixed_size);
	sb_printf(sb, ".amdhsa_private_segment_fixed_size %u\n", kd->private_segment_fixed_size);
	sb_printf(sb, ".amdhsa_kernarg_size %u\n", kd->kernarg_size);
	sb_printf(sb, ".amdhsa_user_sgpr_count %d\n", k.user_sgpr_count);
	for (int i = 0; i < 7; i++) {
		if (arch_flat_scratch(t) && (i == 0 || i == 5))
			continue;
		sb_printf(sb, ".amdhsa_user_sgpr_%s %d\n", usgpr[i], (k.user_sgprs >> i) & 1);
	}
	if (is_gfx11(t))
		sb_printf(sb, ".amdhsa_wavefront_size32 %d\n", k.wave32);
	sb_printf(sb, ".amdhsa_uses_dynamic_stack %d\n", k.uses_dynamic_stack);
	sb_printf(sb, arch_flat_scratch(t) ? ".amdhsa_enable_private_segment %d\n"
					   : ".amdhsa_system_sgpr_private_segment_wavefront_offset %d\n",
		  k.private_segment);
	sb_printf(sb, ".amdhsa_system_sgpr_workgroup_id_x %d\n", k.wg_id_x);
	sb_printf(sb, ".amdhsa_system_sgpr_workgroup_id_y %d\n", k.wg_id_y);
	sb_printf(sb, ".amdhsa_system_sgpr_workgroup_id_z %d\n", k.wg_id_z);
	sb_printf(sb, ".amdhsa_system_sgpr_workgroup_info %d\n", k.wg_info);
	sb_printf(sb, ".amdhsa_system_vgpr_workitem_id %d\n", k.workitem_id_dims);
	sb_printf(sb, ".amdhsa_next_free_vgpr %d\n", is_cdna(t) ? k.vgpr_total : k.vgprs);
	/* The descriptor keeps only the granulated total (nothing on gfx11):
	 * print it as code SGPRs with nothing reserved, so it assembles back to
	 * the same bits. */
	if (is_gfx11(t))
		sb_puts(sb, ".amdhsa_next_free_sgpr 0  // not encoded on gfx11\n");
	else
		sb_printf(sb, ".amdhsa_next_free_sgpr %d  // granulated total %d, %d of them implied by the target\n",
			  k.sgprs, k.sgprs + co_extra_sgprs(t, &k), co_extra_sgprs(t, &k));
	sb_puts(sb, ".amdhsa_reserve_vcc 0\n");
	if (!arch_flat_scratch(t))
		sb_puts(sb, ".amdhsa_reserve_flat_scratch 0\n");
	if (is_cdna(t))
		sb_printf(sb, ".amdhsa_accum_offset %d\n", k.accum_offset);
	sb_printf(sb, ".amdhsa_float_round_mode_32 %d\n", k.float_round_32);
	sb_printf(sb, ".amdhsa_float_round_mode_16_64 %d\n", k.float_round_16_64);
	sb_printf(sb, ".amdhsa_float_denorm_mode_32 %d\n", k.float_denorm_32);
	sb_printf(sb, ".amdhsa_float_denorm_mode_16_64 %d\n", k.float_denorm_16_64);
	sb_printf(sb, ".amdhsa_dx10_clamp %d\n", k.dx10_clamp);
	sb_printf(sb, ".amdhsa_ieee_mode %d\n", k.ieee_mode);
	sb_printf(sb, ".amdhsa_fp16_overflow %d\n", k.fp16_overflow);
	if (is_cdna(t))
		sb_printf(sb, ".amdhsa_tg_split %d\n", k.tg_split);
	if (is_gfx11(t)) {
		sb_printf(sb, ".amdhsa_workgroup_processor_mode %d\n", k.wgp_mode);
		sb_printf(sb, ".amdhsa_memory_ordered %d\n", k.mem_ordered);
		sb_printf(sb, ".amdhsa_forward_progress %d\n", k.fwd_progress);
		sb_printf(sb, ".amdhsa_shared_vgpr_count %d\n", k.shared_vgpr_count);
		sb_printf(sb, ".amdhsa_inst_pref_size %d\n", k.inst_pref_size);
	}
	sb_printf(sb, "// rsrc1 0x%08x rsrc2 0x%08x rsrc3 0x%08x props 0x%04x entry %+lld\n", kd->rsrc1,
		  kd->rsrc2, kd->rsrc3, kd->kernel_code_properties,
		  (long long)kd->kernel_code_entry_byte_offset);
}
