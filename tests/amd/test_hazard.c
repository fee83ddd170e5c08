/* test_hazard.c — amd_hazard on assembly snippets, the expected code inline.
 *
 * A snippet is assembly text (tests/common/passtest.h: mir_from_asm).
 * The snippet runs through amd_hazard and prints back in the same form
 * (mir_to_asm), so a test reads as "this code becomes that code".
 * The expected wait states are LLVM 19's (GCNHazardRecognizer): every
 * positive case here was first run through llc-19 -run-pass=post-RA-hazard-rec
 * on the same instructions in MIR. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd.h"
#include "mir.h"
#include "passtest.h"

/* src through amd_hazard on target t must print as want. */
static void check(ta_target t, const char *src, const char *want)
{
	MFunc f;
	mir_init(&f, t);
	mir_from_asm(&f, src);
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_hazard(&f, &d), 0, "%s", diag_text(&d));
	char *got = mir_to_asm(&f);
	cr_assert_str_eq(got, want, "%s:\n--- source\n%s--- got\n%s--- want\n%s", target_name(ISA_TARGET(t)), src, got,
			 want);
	free(got);
	diag_free(&d);
	mir_free(&f);
}

/* The same code needs nothing on t. */
static void unchanged(ta_target t, const char *src)
{
	check(t, src, src);
}

#define G90 TA_TARGET_GFX90A
#define G942 TA_TARGET_GFX942
#define G11 TA_TARGET_GFX1100
#define G11W64 ((ta_target)(TA_TARGET_GFX1100 | ISA_WAVE64))

/* ---- gfx90a / gfx942: VALU writes of SGPRs -------------------------------- */

Test(hazard_gfx9, valu_sgpr_write_then_vmem_read)
{
	/* v_readlane (an SGPR spill reload) feeding a global_load's saddr: 5 */
	const char *src = "v_readlane_b32 s4, v0, 0\n"
			  "v_readlane_b32 s5, v0, 1\n"
			  "global_load_dword v1, v0, s[4:5]\n"
			  "s_endpgm\n";
	const char *want = "v_readlane_b32 s4, v0, 0\n"
			   "v_readlane_b32 s5, v0, 1\n"
			   "s_nop 4\n"
			   "global_load_dword v1, v0, s[4:5]\n"
			   "s_endpgm\n";
	check(G90, src, want);
	check(G942, src, want);
	/* five instructions between: nothing */
	unchanged(G942, "v_readlane_b32 s4, v0, 0\n"
			"v_readlane_b32 s5, v0, 1\n"
			"s_mov_b32 s6, 0\ns_mov_b32 s7, 0\ns_mov_b32 s8, 0\ns_mov_b32 s9, 0\ns_mov_b32 s10, 0\n"
			"global_load_dword v1, v0, s[4:5]\n"
			"s_endpgm\n");
	/* a carry-out SGPR pair: partly covered by two instructions between */
	check(G90,
	      "v_add_co_u32_e64 v2, s[4:5], v0, v1\n"
	      "v_mov_b32_e32 v3, 0\n"
	      "s_mov_b32 s6, 0\n"
	      "global_load_dword v1, v0, s[4:5]\n",
	      "v_add_co_u32_e64 v2, s[4:5], v0, v1\n"
	      "v_mov_b32_e32 v3, 0\n"
	      "s_mov_b32 s6, 0\n"
	      "s_nop 2\n"
	      "global_load_dword v1, v0, s[4:5]\n");
	/* gfx1100 has no such hazard */
	unchanged(G11, "v_readlane_b32 s4, v0, 0\n"
		       "v_readlane_b32 s5, v0, 1\n"
		       "global_load_b32 v1, v0, s[4:5]\n"
		       "s_endpgm\n");
}

Test(hazard_gfx9, valu_sgpr_write_then_lane_select)
{
	const char *src = "v_readfirstlane_b32 s4, v0\n"
			  "v_readlane_b32 s6, v5, s4\n";
	const char *want = "v_readfirstlane_b32 s4, v0\n"
			   "s_nop 3\n"
			   "v_readlane_b32 s6, v5, s4\n";
	check(G90, src, want);
	check(G942, src, want);
}

Test(hazard_gfx9, valu_vcc_write_then_div_fmas)
{
	/* v_div_fmas reads vcc implicitly: 4 wait states after a VALU writes it
	 * (llc-19 -run-pass=post-RA-hazard-rec: S_NOP 3 on gfx90a/gfx942) */
	const char *src = "v_div_scale_f32 v2, vcc, v1, v1, v0\n"
			  "v_div_fmas_f32 v3, v4, v5, v6\n";
	const char *want = "v_div_scale_f32 v2, vcc, v1, v1, v0\n"
			   "s_nop 3\n"
			   "v_div_fmas_f32 v3, v4, v5, v6\n";
	check(G90, src, want);
	check(G942, src, want);
	unchanged(G90, "v_div_scale_f32 v2, vcc, v1, v1, v0\n"
		       "v_mov_b32_e32 v7, 0\nv_mov_b32_e32 v8, 0\nv_mov_b32_e32 v9, 0\nv_mov_b32_e32 v10, 0\n"
		       "v_div_fmas_f32 v3, v4, v5, v6\n");
}

Test(hazard_gfx9, gfx942_valu_sgpr_write_then_valu_read)
{
	/* v_cmp -> v_cndmask: 2 on gfx942, none on gfx90a */
	const char *src = "v_cmp_lt_f32_e64 s[0:1], v0, v1\n"
			  "v_cndmask_b32_e64 v2, v1, v2, s[0:1]\n";
	check(G942, src,
	      "v_cmp_lt_f32_e64 s[0:1], v0, v1\n"
	      "s_nop 1\n"
	      "v_cndmask_b32_e64 v2, v1, v2, s[0:1]\n");
	unchanged(G90, src);
	check(G942,
	      "v_cmp_lt_f32_e64 s[0:1], v0, v1\n"
	      "v_mov_b32_e32 v3, 0\n"
	      "v_cndmask_b32_e64 v2, v1, v2, s[0:1]\n",
	      "v_cmp_lt_f32_e64 s[0:1], v0, v1\n"
	      "v_mov_b32_e32 v3, 0\n"
	      "s_nop 0\n"
	      "v_cndmask_b32_e64 v2, v1, v2, s[0:1]\n");
	unchanged(G942, "v_cmp_lt_f32_e64 s[0:1], v0, v1\n"
			"v_mov_b32_e32 v3, 0\n"
			"v_mov_b32_e32 v4, 0\n"
			"v_cndmask_b32_e64 v2, v1, v2, s[0:1]\n");
	/* an SALU reading the mask is no hazard; a carry chain is */
	unchanged(G942, "v_cmp_lt_f32_e64 s[0:1], v0, v1\n"
			"s_and_b64 s[0:1], exec, s[0:1]\n");
	check(G942,
	      "v_add_co_u32_e64 v2, s[4:5], v0, v1\n"
	      "v_addc_co_u32_e64 v3, s[6:7], v0, v1, s[4:5]\n",
	      "v_add_co_u32_e64 v2, s[4:5], v0, v1\n"
	      "s_nop 1\n"
	      "v_addc_co_u32_e64 v3, s[6:7], v0, v1, s[4:5]\n");
}

Test(hazard_gfx9, gfx942_readlane_after_valu_vgpr_write)
{
	/* an SGPR spill store then reload of the same slot: 1 on gfx942 */
	const char *src = "v_writelane_b32 v5, s4, 0\n"
			  "v_readlane_b32 s6, v5, 0\n";
	check(G942, src,
	      "v_writelane_b32 v5, s4, 0\n"
	      "s_nop 0\n"
	      "v_readlane_b32 s6, v5, 0\n");
	unchanged(G90, src);
	/* and the written SGPR read by a VALU: 2 */
	check(G942,
	      "v_readlane_b32 s6, v5, 0\n"
	      "v_writelane_b32 v6, s6, 1\n",
	      "v_readlane_b32 s6, v5, 0\n"
	      "s_nop 1\n"
	      "v_writelane_b32 v6, s6, 1\n");
}

Test(hazard_gfx9, sgpr_hazard_across_a_back_edge)
{
	/* The loop's last VALU writes s[4:5]; the loop head reads it. */
	const char *src = "s_mov_b64 s[4:5], 0\n"
			  "BB1:\n"
			  "v_cndmask_b32_e64 v2, v1, v2, s[4:5]\n"
			  "v_cmp_lt_f32_e64 s[4:5], v0, v2\n"
			  "s_cbranch_scc1 BB1\n"
			  "BB2:\n"
			  "s_endpgm\n";
	check(G942, src,
	      "s_mov_b64 s[4:5], 0\n"
	      "BB1:\n"
	      "s_nop 0\n"
	      "v_cndmask_b32_e64 v2, v1, v2, s[4:5]\n"
	      "v_cmp_lt_f32_e64 s[4:5], v0, v2\n"
	      "s_cbranch_scc1 BB1\n"
	      "BB2:\n"
	      "s_endpgm\n");
	unchanged(G90, src);
}

/* ---- gfx90a / gfx942: VGPR forwarding and stores --------------------------- */

Test(hazard_gfx9, gfx942_transcendental_forwarding)
{
	check(G942,
	      "v_exp_f32_e32 v1, v0\n"
	      "v_add_f32_e32 v2, v1, v1\n",
	      "v_exp_f32_e32 v1, v0\n"
	      "s_nop 0\n"
	      "v_add_f32_e32 v2, v1, v1\n");
	/* a transcendental reading it, an unrelated VALU, or one instruction between: none */
	unchanged(G942, "v_exp_f32_e32 v1, v0\nv_rcp_f32_e32 v2, v1\n");
	unchanged(G942, "v_exp_f32_e32 v1, v0\nv_add_f32_e32 v2, v3, v3\n");
	unchanged(G942, "v_exp_f32_e32 v1, v0\ns_mov_b32 s0, 0\nv_add_f32_e32 v2, v1, v1\n");
	unchanged(G90, "v_exp_f32_e32 v1, v0\nv_add_f32_e32 v2, v1, v1\n");
}

Test(hazard_gfx9, gfx942_dst_op_sel_forwarding)
{
	/* writing the high word of v2 (the fp8 pack's second half: op_sel
	 * dst bit, written " @hi" in the source as the parser has no op_sel
	 * for it; the printer shows it as LLVM does) */
	check(G942,
	      "v_cvt_pk_fp8_f32 v2, v0, v1 @hi\n"
	      "v_add_u32_e32 v3, v2, v3\n",
	      "v_cvt_pk_fp8_f32 v2, v0, v1 op_sel:[0,0,1]\n"
	      "s_nop 0\n"
	      "v_add_u32_e32 v3, v2, v3\n");
	unchanged(G942, "v_cvt_pk_fp8_f32 v2, v0, v1\nv_add_u32_e32 v3, v2, v3\n");
}

Test(hazard_gfx9, wide_store_data_overwrite)
{
	const char *src = "global_store_dwordx4 v[4:5], v[8:11], off\n"
			  "v_mov_b32_e32 v9, 0\n";
	check(G90, src, "global_store_dwordx4 v[4:5], v[8:11], off\ns_nop 0\nv_mov_b32_e32 v9, 0\n");
	check(G942, src, "global_store_dwordx4 v[4:5], v[8:11], off\ns_nop 1\nv_mov_b32_e32 v9, 0\n");
	/* not its data, 8 bytes, or a load overwriting it: none */
	unchanged(G942, "global_store_dwordx4 v[4:5], v[8:11], off\nv_mov_b32_e32 v12, 0\n");
	unchanged(G942, "global_store_dwordx2 v[4:5], v[8:9], off\nv_mov_b32_e32 v9, 0\n");
	unchanged(G942, "global_store_dwordx4 v[4:5], v[8:11], off\nglobal_load_dword v9, v[4:5], off\n");
}

Test(hazard_gfx9, smem_soft_clause)
{
	/* a load overwriting its own base, then another load in the clause */
	const char *src = "s_load_dwordx2 s[0:1], s[0:1], 0x0\n"
			  "s_load_dword s2, s[4:5], 0x8\n";
	const char *want = "s_load_dwordx2 s[0:1], s[0:1], 0x0\n"
			   "s_nop 0\n"
			   "s_load_dword s2, s[4:5], 0x8\n";
	check(G90, src, want);
	check(G942, src, want);
	/* a later load writing what an earlier one read */
	check(G942,
	      "s_load_dword s2, s[4:5], 0x8\n"
	      "s_load_dwordx2 s[4:5], s[0:1], 0x0\n",
	      "s_load_dword s2, s[4:5], 0x8\n"
	      "s_nop 0\n"
	      "s_load_dwordx2 s[4:5], s[0:1], 0x0\n");
	/* disjoint loads, or anything between: none */
	unchanged(G942, "s_load_dwordx2 s[2:3], s[0:1], 0x0\ns_load_dwordx2 s[4:5], s[0:1], 0x8\n");
	unchanged(G942, "s_load_dword s2, s[4:5], 0x8\ns_waitcnt lgkmcnt(0)\ns_load_dwordx2 s[4:5], s[0:1], 0x0\n");
	unchanged(G11, "s_load_b64 s[0:1], s[0:1], 0x0\ns_load_b32 s2, s[4:5], 0x8\n");
}

Test(hazard_gfx9, vmem_soft_clause)
{
	/* a load overwriting its own address, then another load */
	const char *src = "global_load_dword v0, v[0:1], off\n"
			  "global_load_dword v2, v[4:5], off\n";
	const char *want = "global_load_dword v0, v[0:1], off\n"
			   "s_nop 0\n"
			   "global_load_dword v2, v[4:5], off\n";
	check(G90, src, want);
	check(G942, src, want);
	/* a store after a load in the clause; a load writing what an earlier one read */
	check(G942, "global_load_dword v2, v[0:1], off\nglobal_store_dword v[4:5], v6, off\n",
	      "global_load_dword v2, v[0:1], off\ns_nop 0\nglobal_store_dword v[4:5], v6, off\n");
	check(G942, "global_load_dword v2, v0, s[0:1]\nglobal_load_dword v0, v1, s[0:1]\n",
	      "global_load_dword v2, v0, s[0:1]\ns_nop 0\nglobal_load_dword v0, v1, s[0:1]\n");
	/* independent loads, stores after stores, anything between, gfx1100: none */
	unchanged(G942, "global_load_dword v2, v[0:1], off\nglobal_load_dword v3, v[4:5], off\n");
	unchanged(G942, "global_store_dword v[4:5], v6, off\nglobal_store_dword v[4:5], v6, off offset:4\n");
	unchanged(G942, "global_load_dword v2, v[0:1], off\nv_mov_b32_e32 v7, 0\nglobal_store_dword v[4:5], v6, off\n");
	unchanged(G11, "global_load_b32 v0, v[0:1], off\nglobal_load_b32 v2, v[4:5], off\n");
}

Test(hazard_gfx9, mfma_result_spilled_to_agpr)
{
	/* regalloc/spill.c's v_accvgpr_write of an MFMA result (RAW, N + 3)
	 * and a v_accvgpr_read overwriting an MFMA's C (WAR, N - 1) */
	check(G90,
	      "v_mfma_f32_16x16x16f16 v[0:3], v[4:5], v[6:7], v[0:3]\n"
	      "v_accvgpr_write_b32 a0, v0\n",
	      "v_mfma_f32_16x16x16f16 v[0:3], v[4:5], v[6:7], v[0:3]\n"
	      "s_nop 10\n"
	      "v_accvgpr_write_b32 a0, v0\n");
	const char *raw = "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]\n"
			  "v_accvgpr_write_b32 a0, v0\n";
	check(G942, raw,
	      "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]\n"
	      "s_nop 6\n"
	      "v_accvgpr_write_b32 a0, v0\n");
	const char *war = "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[8:11]\n"
			  "v_accvgpr_read_b32 v8, a0\n";
	check(G90,
	      "v_mfma_f32_16x16x16f16 v[0:3], v[4:5], v[6:7], v[8:11]\n"
	      "v_accvgpr_read_b32 v8, a0\n",
	      "v_mfma_f32_16x16x16f16 v[0:3], v[4:5], v[6:7], v[8:11]\n"
	      "s_nop 6\n"
	      "v_accvgpr_read_b32 v8, a0\n");
	check(G942, war,
	      "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[8:11]\n"
	      "s_nop 2\n"
	      "v_accvgpr_read_b32 v8, a0\n");
}

Test(hazard_gfx9, gfx90a_shift64_high_register)
{
	/* amount in v7 with v8 unused: swapped with v4 around the shift */
	const char *src = "v_lshlrev_b64 v[0:1], v7, v[2:3]\ns_endpgm\n";
	check(G90, src,
	      "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)\n"
	      "v_swap_b32 v4, v7\n"
	      "v_lshlrev_b64 v[0:1], v4, v[2:3]\n"
	      "v_swap_b32 v4, v7\n"
	      "s_endpgm\n");
	/* the amount's pair is also the destination: swap the pair */
	check(G90, "v_ashrrev_i64 v[6:7], v7, v[2:3]\n",
	      "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)\n"
	      "v_swap_b32 v0, v6\n"
	      "v_swap_b32 v1, v7\n"
	      "v_ashrrev_i64 v[0:1], v1, v[2:3]\n"
	      "v_swap_b32 v0, v6\n"
	      "v_swap_b32 v1, v7\n");
	unchanged(G942, src);
	unchanged(G90, "v_lshlrev_b64 v[0:1], v7, v[2:3]\nv_mov_b32_e32 v8, 0\n");
	unchanged(G90, "v_lshlrev_b64 v[0:1], v6, v[2:3]\n");
}

/* ---- gfx1100 ------------------------------------------------------------------- */

Test(hazard_gfx11, trans_use_waits_on_va_vdst)
{
	check(G11,
	      "v_exp_f32_e32 v1, v0\n"
	      "v_add_f32_e32 v2, v1, v1\n",
	      "v_exp_f32_e32 v1, v0\n"
	      "s_waitcnt_depctr 0xfff\n"
	      "v_add_f32_e32 v2, v1, v1\n");
	/* five VALUs (SALUs do not count) and one transcendental between: still */
	check(G11,
	      "v_exp_f32_e32 v1, v0\n"
	      "v_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\n"
	      "v_rcp_f32_e32 v4, v0\n"
	      "s_mov_b32 s0, 0\n"
	      "v_rcp_f32_e32 v2, v1\n",
	      "v_exp_f32_e32 v1, v0\n"
	      "v_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\n"
	      "v_rcp_f32_e32 v4, v0\n"
	      "s_mov_b32 s0, 0\n"
	      "s_waitcnt_depctr 0xfff\n"
	      "v_rcp_f32_e32 v2, v1\n");
	/* six VALUs, two transcendentals, or an LDS access between: none */
	unchanged(G11, "v_exp_f32_e32 v1, v0\n"
		       "v_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\n"
		       "v_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\n"
		       "v_add_f32_e32 v2, v1, v1\n");
	unchanged(G11, "v_exp_f32_e32 v1, v0\nv_rcp_f32_e32 v4, v0\nv_rcp_f32_e32 v5, v0\nv_add_f32_e32 v2, v1, v1\n");
	unchanged(G11, "v_exp_f32_e32 v1, v0\nds_load_b32 v5, v6\nv_add_f32_e32 v2, v1, v1\n");
	/* one wait covers every pending result */
	check(G11,
	      "v_exp_f32_e32 v1, v0\n"
	      "v_log_f32_e32 v2, v0\n"
	      "v_add_f32_e32 v3, v1, v1\n"
	      "v_add_f32_e32 v4, v2, v2\n",
	      "v_exp_f32_e32 v1, v0\n"
	      "v_log_f32_e32 v2, v0\n"
	      "s_waitcnt_depctr 0xfff\n"
	      "v_add_f32_e32 v3, v1, v1\n"
	      "v_add_f32_e32 v4, v2, v2\n");
}

Test(hazard_gfx11, trans_use_across_a_back_edge)
{
	const char *src = "BB0:\n" /* (block 0 prints without its label) */
			  "s_mov_b32 s0, 0\n"
			  "BB1:\n"
			  "v_add_f32_e32 v2, v1, v1\n"
			  "v_exp_f32_e32 v1, v0\n"
			  "s_cbranch_scc1 BB1\n"
			  "BB2:\n"
			  "s_endpgm\n";
	check(G11, src,
	      "s_mov_b32 s0, 0\n"
	      "BB1:\n"
	      "s_waitcnt_depctr 0xfff\n"
	      "v_add_f32_e32 v2, v1, v1\n"
	      "v_exp_f32_e32 v1, v0\n"
	      "s_cbranch_scc1 BB1\n"
	      "BB2:\n"
	      "s_endpgm\n");
	/* six VALUs at the loop top before the use: none */
	unchanged(G11, "s_mov_b32 s0, 0\n"
		       "BB1:\n"
		       "v_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\n"
		       "v_mov_b32_e32 v3, 0\nv_mov_b32_e32 v3, 0\n"
		       "v_add_f32_e32 v2, v1, v1\n"
		       "v_exp_f32_e32 v1, v0\n"
		       "s_cbranch_scc1 BB1\n"
		       "BB2:\n"
		       "s_endpgm\n");
}

Test(hazard_gfx11, valu_mask_write_wave64)
{
	/* v_cndmask reads s[0:1] as its lane mask, then an SALU overwrites it */
	const char *src = "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\n"
			  "s_mov_b64 s[0:1], 0\n"
			  "v_cndmask_b32_e64 v3, v1, v2, s[0:1]\n";
	check(G11W64, src,
	      "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\n"
	      "s_mov_b64 s[0:1], 0\n"
	      "s_waitcnt_depctr 0xfffe\n"
	      "v_cndmask_b32_e64 v3, v1, v2, s[0:1]\n");
	/* half of the pair, a carry-in, vcc: the same */
	check(G11W64, "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\ns_mov_b32 s1, 0\n",
	      "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\ns_mov_b32 s1, 0\ns_waitcnt_depctr 0xfffe\n");
	check(G11W64, "v_add_co_ci_u32_e64 v0, s[2:3], v1, v2, s[0:1]\ns_and_b64 s[0:1], exec, s[4:5]\n",
	      "v_add_co_ci_u32_e64 v0, s[2:3], v1, v2, s[0:1]\ns_and_b64 s[0:1], exec, s[4:5]\n"
	      "s_waitcnt_depctr 0xfffe\n");
	check(G11W64, "v_cndmask_b32_e32 v0, v1, v2, vcc\ns_mov_b64 vcc, 0\n",
	      "v_cndmask_b32_e32 v0, v1, v2, vcc\ns_mov_b64 vcc, 0\ns_waitcnt_depctr 0xfffe\n");
	/* VALUs without SGPR or literal operands do not end it, however many */
	check(G11W64,
	      "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\n"
	      "v_mov_b32_e32 v5, 0\nv_mov_b32_e32 v5, 1\nv_mov_b32_e32 v5, 2\nv_mov_b32_e32 v5, 3\n"
	      "v_mov_b32_e32 v5, 4\nv_mov_b32_e32 v5, 5\nv_mov_b32_e32 v5, 6\n"
	      "s_mov_b64 s[0:1], 0\n",
	      "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\n"
	      "v_mov_b32_e32 v5, 0\nv_mov_b32_e32 v5, 1\nv_mov_b32_e32 v5, 2\nv_mov_b32_e32 v5, 3\n"
	      "v_mov_b32_e32 v5, 4\nv_mov_b32_e32 v5, 5\nv_mov_b32_e32 v5, 6\n"
	      "s_mov_b64 s[0:1], 0\n"
	      "s_waitcnt_depctr 0xfffe\n");
	/* a VALU reading another SGPR or a literal in between, the carry-out
	 * (not a mask read), an s_cmp (no SGPR result), an SMEM load or a
	 * VALU write: none */
	unchanged(G11W64, "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\nv_mov_b32_e32 v5, s7\ns_mov_b64 s[0:1], 0\n");
	unchanged(G11W64, "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\nv_mov_b32_e32 v5, 0x3039\ns_mov_b64 s[0:1], 0\n");
	unchanged(G11W64, "v_add_co_ci_u32_e64 v0, s[2:3], v1, v2, s[0:1]\ns_mov_b64 s[2:3], 0\n");
	unchanged(G11W64, "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\ns_cmp_eq_u32 s0, 0\n");
	unchanged(G11W64, "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\ns_load_b64 s[0:1], s[4:5], 0x0\n");
	unchanged(G11W64, "v_cndmask_b32_e64 v0, v1, v2, s[0:1]\nv_cmp_lt_f32_e64 s[0:1], v0, v1\n");
	/* wave32 (what tileasm compiles gfx1100 to): no such hazard */
	unchanged(G11, "v_cndmask_b32_e64 v0, v1, v2, s0\ns_mov_b32 s0, 0\n");
}

Test(hazard_gfx11, wmma_reading_the_previous_d)
{
	const char *src = "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n"
			  "v_wmma_f32_16x16x16_f16 v[24:31], v[0:7], v[16:23], v[24:31]\n";
	check(G11, src,
	      "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n"
	      "v_nop\n"
	      "v_wmma_f32_16x16x16_f16 v[24:31], v[0:7], v[16:23], v[24:31]\n");
	unchanged(G11, "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n"
		       "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n");
}

/* ---- every example: an independent scan of the compiled code ----------------- */

/* A second, simpler reading of the main rules (straight-line code only: the
 * scan back stops at labels and branches), run over what `tileasm compile
 * --dump-isa` prints for every example.  It would catch the pass missing a
 * hazard in real code, not just in the snippets above. */

typedef struct {
	IsaInsn in;
	IsaRegUse u[24];
	int nu;
	bool barrier; /* a label or a branch: the scan back stops here */
} Line;

static bool uses(const Line *l, char file, bool write, int reg, int cnt)
{
	for (int i = 0; i < l->nu && i < 24; i++)
		if (l->u[i].file == file && (bool)l->u[i].write == write && l->u[i].reg < reg + cnt &&
		    reg < l->u[i].reg + l->u[i].count)
			return true;
	return false;
}

static bool is_trans_op(unsigned op)
{
	return op == ISA_V_EXP_F32 || op == ISA_V_LOG_F32 || op == ISA_V_RCP_F32 || op == ISA_V_RSQ_F32 ||
	       op == ISA_V_SQRT_F32 || op == ISA_V_SIN_F32 || op == ISA_V_COS_F32 || op == ISA_V_RCP_IFLAG_F32;
}

/* The violations of instruction k (message in *why), or NULL. */
static const char *violation(ta_target t, const Line *l, int k, int *dist)
{
	const Line *c = &l[k];
	uint32_t fc = isa_ops[c->in.op].flags;
	bool g942 = t == TA_TARGET_GFX942, gfx9 = t != TA_TARGET_GFX1100;
	int ws = 0, valus = 0, trans = 0;
	for (int j = k - 1; j >= 0 && !l[j].barrier; j--) {
		const Line *p = &l[j];
		uint32_t fp = isa_ops[p->in.op].flags;
		*dist = ws;
		for (int i = 0; i < p->nu && i < 24; i++) {
			const IsaRegUse *w = &p->u[i];
			if (!w->write)
				continue;
			bool rd = uses(c, w->file, false, w->reg, w->count);
			if (gfx9 && (fp & ISA_F_VALU) && w->file == 's' && w->reg < 126) {
				if ((fc & (ISA_F_GLOBAL | ISA_F_MUBUF)) && rd && ws < 5)
					return "VALU SGPR write -> VMEM read (5)";
				if (g942 && (fc & ISA_F_VALU) && !(fc & ISA_F_MFMA) && rd && ws < 2)
					return "VALU SGPR write -> VALU read (2)";
			}
			if (g942 && is_trans_op(p->in.op) && w->file == 'v' && (fc & ISA_F_VALU) && !is_trans_op(c->in.op) &&
			    rd && ws < 1)
				return "transcendental -> VALU read (1)";
			if (t == TA_TARGET_GFX1100 && is_trans_op(p->in.op) && w->file == 'v' && (fc & ISA_F_VALU) && rd &&
			    valus <= 5 && trans <= 1)
				return "gfx1100 transcendental -> VALU read without s_waitcnt_depctr";
		}
		if (gfx9 && (fp & (ISA_F_GLOBAL | ISA_F_MUBUF)) && (fp & ISA_F_STORE) && (fc & ISA_F_VALU) &&
		    ws < (g942 ? 2 : 1)) {
			const IsaOperand *d = &p->in.ops[isa_op_fmt(t, p->in.op) == ISA_FMT_MUBUF ? 0 : 1];
			if (d->kind == ISA_K_VGPR && d->count > 2 && uses(c, 'v', true, d->reg, d->count))
				return "wide store data overwritten by a VALU";
		}
		if (t == TA_TARGET_GFX1100) {
			if ((fp & (ISA_F_GLOBAL | ISA_F_MUBUF | ISA_F_DS)) ||
			    (p->in.op == ISA_S_WAITCNT_DEPCTR && ((p->in.ops[0].imm >> 12) & 15) == 0))
				break; /* the transcendental results are safe */
			valus += (fp & ISA_F_VALU) != 0;
			trans += is_trans_op(p->in.op);
		}
		ws += p->in.op == ISA_S_NOP ? (int)(p->in.ops[0].imm & 15) + 1 : 1;
		if (ws > 8 && (t != TA_TARGET_GFX1100 || valus > 5 || trans > 1))
			break;
	}
	return NULL;
}

Test(hazard_examples, compiled_code_has_no_hazard_left)
{
	static const char *const ex[] = {"vector_add", "reduce_sum", "softmax", "rmsnorm", "layernorm",
					 "gemm", "gemm_bf16_tn", "mha_fwd"};
	static const char *const tn[] = {"gfx1100", "gfx90a", "gfx942"};
	static const ta_target tt[] = {TA_TARGET_GFX1100, TA_TARGET_GFX90A, TA_TARGET_GFX942};
	const char *tileasm = getenv("TILEASM"), *src = getenv("TILEASM_SRCDIR");
	cr_assert(tileasm && src, "TILEASM / TILEASM_SRCDIR not set (run through meson test)");
	int checked = 0, filled = 0;
	for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++)
		for (int ti = 0; ti < 3; ti++) {
			char cmd[1024];
			snprintf(cmd, sizeof cmd, "'%s' compile '%s/examples/%s.tile' --target=%s --dump-isa 2>&1", tileasm,
				 src, ex[e], tn[ti]);
			FILE *p = popen(cmd, "r");
			cr_assert(p);
			VEC(Line) lines = {0};
			char buf[512];
			bool text = false;
			while (fgets(buf, sizeof buf, p)) {
				char *c = strchr(buf, ';');
				if (c)
					*c = 0;
				size_t n = strlen(buf);
				while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
					buf[--n] = 0;
				if (!strncmp(buf, "\t.text", 6))
					text = true;
				const char *q = buf + strspn(buf, " \t");
				if (!text || !*q || *q == '.' || *q == '/')
					continue;
				Line l;
				memset(&l, 0, sizeof l);
				if (buf[0] != '\t') { /* a label ("name:") */
					l.barrier = true;
					cr_assert(!vec_push(&lines, l));
					continue;
				}
				Diag d;
				diag_init(&d);
				int rc = isa_parse_insn(tt[ti], buf + 1, &l.in, NULL, (SrcPos){1, 1}, &d);
				cr_assert_eq(rc, 0, "%s %s: cannot parse '%s': %s", ex[e], tn[ti], buf + 1, diag_text(&d));
				diag_free(&d);
				l.nu = isa_reg_uses(tt[ti], &l.in, l.u, 24);
				cr_assert(!vec_push(&lines, l));
				if (isa_ops[l.in.op].flags & ISA_F_BRANCH) {
					Line b = {.barrier = true};
					cr_assert(!vec_push(&lines, b));
				}
			}
			pclose(p);
			/* drop the padding after the last s_endpgm */
			size_t end = lines.len;
			while (end && (lines.data[end - 1].barrier || lines.data[end - 1].in.op != ISA_S_ENDPGM))
				end--;
			for (size_t k = 0; k < end; k++) {
				if (lines.data[k].barrier)
					continue;
				unsigned op = lines.data[k].in.op;
				filled += op == ISA_S_NOP || op == ISA_S_WAITCNT_DEPCTR;
				int dist = 0;
				const char *why = violation(tt[ti], lines.data, (int)k, &dist);
				StrBuf sb = {0};
				if (why)
					isa_print(tt[ti], &lines.data[k].in, &sb);
				cr_expect(!why, "%s %s: instruction %zu '%s': %s (%d wait states since)", ex[e], tn[ti], k,
					  sb.buf ? sb.buf : "", why, dist);
				sb_free(&sb);
				checked++;
			}
			vec_free(&lines);
		}
	cr_assert_gt(checked, 20000, "only %d instructions checked", checked);
	cr_assert_gt(filled, 100, "only %d hazard fillers seen", filled);
}
