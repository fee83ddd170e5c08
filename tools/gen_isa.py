#!/usr/bin/env python3
"""gen_isa.py — writes isa/isa_ops.def, the instruction table of tileasm.

The instruction list below is the human-edited source.  Each entry names the
instruction (per-generation spellings), its encoding format per generation,
its operand signature and flags.  Opcode numbers and the canonical mnemonic
each target prints are *discovered* by assembling one sample per entry with
llvm-mc-19 (a developer-time oracle only; the build never runs this script,
the generated isa/isa_ops.def is committed).

    python3 tools/gen_isa.py            # rewrite isa/isa_ops.def
    python3 tools/gen_isa.py -o FILE    # write it elsewhere (tests/isa/gen_isa_sync.sh diffs the two)

Signature tokens (operands in LLVM syntax order):
  sdN  scalar dst (N SGPRs)          ssN  scalar src (SGPR/special/const/literal)
  lm   lane mask (vcc / s[n:n+1] in wave64, vcc_lo / sN in wave32)
  vdN  VGPR dst                      vsN  VALU src (VGPR/SGPR/const/literal)
  vvN  VGPR-only src                 avdN / avsN  VGPR or AGPR dst / src (MAI)
  adN / asN  AGPR dst / src          wdN  like vdN but halved in wave64 (WMMA C/D)
  wsN  like vsN but halved in wave64
  k16  16-bit immediate printed hex  i16  immediate printed decimal
  lbl  branch target                 wait s_waitcnt fields   delay s_delay_alu fields
  k32  literal constant (fmamk/fmaak)  i32  32-bit literal integer (s_setreg_imm32_b32)
  hwreg  s_getreg/s_setreg field: hwreg(NAME[, offset, size]); NAMEs per target from llvm-mc (ISA_HWREG lines)
  sbN  SMEM base (N SGPRs)           soff SMEM offset (imm or SGPR)
  da   DS address VGPR               ddN  DS data VGPRs
  fa   FLAT/GLOBAL address (2 VGPRs with `off`, 1 with saddr)   fs   saddr or off
  xa   scratch vaddr (VGPR or off)   xs   scratch saddr (SGPR or off)
  mva  MUBUF vaddr (or off)          rsrc MUBUF resource s[n:n+3]  mso  MUBUF soffset
"""
import os, re, subprocess, sys, tempfile

TARGETS = ["gfx90a", "gfx942", "gfx1100"]

# ---------------------------------------------------------------------------
# The instruction list.  E(names, fmt9, fmt11, sig, type, flags)
#   names: "gfx9name" or "gfx9name/gfx11name" ("-" = absent on that family)
#   fmt9 / fmt11: encoding format on gfx9-family / gfx11 ("-" = absent)
ENTRIES = []
def E(names, fmt9, fmt11, sig, ty="B32", flags=""):
    n = names.split("/")
    n9 = n[0]
    n11 = n[1] if len(n) > 1 else n[0]
    ENTRIES.append(dict(n9=None if n9 == "-" or fmt9 == "-" else n9,
                        n11=None if n11 == "-" or fmt11 == "-" else n11,
                        fmt9=fmt9, fmt11=fmt11, sig=sig.split(), ty=ty,
                        flags=flags.split()))

# --- SOP2 ---
for n, f in [("s_add_u32", "WSCC"), ("s_sub_u32", "WSCC"), ("s_add_i32", "WSCC"), ("s_sub_i32", "WSCC"),
             ("s_addc_u32", "WSCC RSCC"), ("s_subb_u32", "WSCC RSCC"),
             ("s_min_i32", "WSCC"), ("s_min_u32", "WSCC"), ("s_max_i32", "WSCC"), ("s_max_u32", "WSCC"),
             ("s_cselect_b32", "RSCC"), ("s_and_b32", "WSCC"), ("s_or_b32", "WSCC"), ("s_xor_b32", "WSCC"),
             ("s_andn2_b32/s_and_not1_b32", "WSCC"), ("s_orn2_b32/s_or_not1_b32", "WSCC"),
             ("s_nand_b32", "WSCC"), ("s_nor_b32", "WSCC"), ("s_xnor_b32", "WSCC"),
             ("s_lshl_b32", "WSCC"), ("s_lshr_b32", "WSCC"), ("s_ashr_i32", "WSCC"), ("s_bfm_b32", ""),
             ("s_mul_i32", ""), ("s_bfe_u32", "WSCC"), ("s_bfe_i32", "WSCC"), ("s_absdiff_i32", "WSCC"),
             ("s_mul_hi_u32", ""), ("s_mul_hi_i32", ""),
             ("s_lshl1_add_u32", "WSCC"), ("s_lshl2_add_u32", "WSCC"), ("s_lshl3_add_u32", "WSCC"),
             ("s_lshl4_add_u32", "WSCC"),
             ("s_pack_ll_b32_b16", ""), ("s_pack_lh_b32_b16", ""), ("s_pack_hh_b32_b16", "")]:
    E(n, "SOP2", "SOP2", "sd1 ss1 ss1", "B32", "SALU " + f)
for n, f in [("s_cselect_b64", "RSCC"), ("s_and_b64", "WSCC"), ("s_or_b64", "WSCC"), ("s_xor_b64", "WSCC"),
             ("s_andn2_b64/s_and_not1_b64", "WSCC"), ("s_orn2_b64/s_or_not1_b64", "WSCC"),
             ("s_nand_b64", "WSCC"), ("s_nor_b64", "WSCC"), ("s_xnor_b64", "WSCC")]:
    E(n, "SOP2", "SOP2", "sd2 ss2 ss2", "B64", "SALU " + f)
for n in ["s_lshl_b64", "s_lshr_b64", "s_ashr_i64", "s_bfe_u64", "s_bfe_i64"]:
    E(n, "SOP2", "SOP2", "sd2 ss2 ss1", "B64", "SALU WSCC")

# --- SOP1 ---
for n, f in [("s_mov_b32", ""), ("s_cmov_b32", "RSCC"), ("s_not_b32", "WSCC"), ("s_wqm_b32", "WSCC"),
             ("s_brev_b32", ""), ("s_bcnt0_i32_b32", "WSCC"), ("s_bcnt1_i32_b32", "WSCC"),
             ("s_ff1_i32_b32/s_ctz_i32_b32", ""), ("s_flbit_i32_b32/s_clz_i32_u32", ""),
             ("s_sext_i32_i8", ""), ("s_sext_i32_i16", ""), ("s_bitset0_b32", ""), ("s_bitset1_b32", ""),
             ("s_abs_i32", "WSCC"), ("s_quadmask_b32", "WSCC"),
             ("-/s_and_saveexec_b32", "WSCC REXEC WEXEC"), ("-/s_or_saveexec_b32", "WSCC REXEC WEXEC"),
             ("-/s_xor_saveexec_b32", "WSCC REXEC WEXEC"), ("-/s_and_not1_saveexec_b32", "WSCC REXEC WEXEC"),
             ("-/s_or_not1_saveexec_b32", "WSCC REXEC WEXEC")]:
    E(n, "SOP1", "SOP1", "sd1 ss1", "B32", "SALU " + f)
for n, f in [("s_mov_b64", ""), ("s_cmov_b64", "RSCC"), ("s_not_b64", "WSCC"), ("s_wqm_b64", "WSCC"),
             ("s_brev_b64", ""), ("s_quadmask_b64", "WSCC"),
             ("s_and_saveexec_b64", "WSCC REXEC WEXEC"), ("s_or_saveexec_b64", "WSCC REXEC WEXEC"),
             ("s_xor_saveexec_b64", "WSCC REXEC WEXEC"),
             ("s_andn2_saveexec_b64/s_and_not1_saveexec_b64", "WSCC REXEC WEXEC"),
             ("s_orn2_saveexec_b64/s_or_not1_saveexec_b64", "WSCC REXEC WEXEC"),
             ("s_swappc_b64", "BRANCH")]:
    E(n, "SOP1", "SOP1", "sd2 ss2", "B64", "SALU " + f)
E("s_bcnt1_i32_b64", "SOP1", "SOP1", "sd1 ss2", "B64", "SALU WSCC")
E("s_ff1_i32_b64/s_ctz_i32_b64", "SOP1", "SOP1", "sd1 ss2", "B64", "SALU")
E("s_getpc_b64", "SOP1", "SOP1", "sd2", "B64", "SALU")
E("s_setpc_b64", "SOP1", "SOP1", "ss2", "B64", "SALU BRANCH")

# --- SOPK ---
E("s_movk_i32", "SOPK", "SOPK", "sd1 k16", "B32", "SALU")
E("s_cmovk_i32", "SOPK", "SOPK", "sd1 k16", "B32", "SALU RSCC")
E("s_addk_i32", "SOPK", "SOPK", "sd1 k16", "B32", "SALU WSCC TIED")
E("s_mulk_i32", "SOPK", "SOPK", "sd1 k16", "B32", "SALU TIED")
E("s_getreg_b32", "SOPK", "SOPK", "sd1 hwreg", "B32", "SALU")
E("s_setreg_b32", "SOPK", "SOPK", "hwreg ss1", "B32", "SALU")
E("s_setreg_imm32_b32", "SOPK", "SOPK", "hwreg i32", "B32", "SALU")
# compares against a 16-bit constant (clang emits s_cmpk_lg_i32 and friends for uniform branches)
for c in ["eq", "lg", "gt", "ge", "lt", "le"]:
    for t in ["i32", "u32"]:
        E("s_cmpk_%s_%s" % (c, t), "SOPK", "SOPK", "ss1 k16", "B32", "SALU WSCC")
for n in ["s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt"]:
    E("-/" + n, "-", "SOPK", "ss1 k16", "B32", "SALU WAIT")

# --- SOPC ---
for c in ["eq", "lg", "gt", "ge", "lt", "le"]:
    for t in ["i32", "u32"]:
        E("s_cmp_%s_%s" % (c, t), "SOPC", "SOPC", "ss1 ss1", "B32", "SALU WSCC")
for n in ["s_cmp_eq_u64", "s_cmp_lg_u64"]:
    E(n, "SOPC", "SOPC", "ss2 ss2", "B64", "SALU WSCC")
for n in ["s_bitcmp0_b32", "s_bitcmp1_b32"]:
    E(n, "SOPC", "SOPC", "ss1 ss1", "B32", "SALU WSCC")
for n in ["s_bitcmp0_b64", "s_bitcmp1_b64"]:
    E(n, "SOPC", "SOPC", "ss2 ss1", "B64", "SALU WSCC")

# --- SOPP ---
E("s_nop", "SOPP", "SOPP", "i16", "B32", "SALU")
E("s_endpgm", "SOPP", "SOPP", "", "B32", "SALU ENDPGM")
E("s_branch", "SOPP", "SOPP", "lbl", "B32", "SALU BRANCH")
for n, f in [("s_cbranch_scc0", "RSCC"), ("s_cbranch_scc1", "RSCC"), ("s_cbranch_vccz", "RVCC"),
             ("s_cbranch_vccnz", "RVCC"), ("s_cbranch_execz", "REXEC"), ("s_cbranch_execnz", "REXEC")]:
    E(n, "SOPP", "SOPP", "lbl", "B32", "SALU BRANCH " + f)
E("s_barrier", "SOPP", "SOPP", "", "B32", "SALU")
E("s_waitcnt", "SOPP", "SOPP", "wait", "B32", "SALU WAIT")
E("s_sleep", "SOPP", "SOPP", "i16", "B32", "SALU")
E("s_setprio", "SOPP", "SOPP", "i16", "B32", "SALU")
E("s_code_end", "SOPP", "SOPP", "", "B32", "SALU")
E("s_icache_inv", "SOPP", "SOPP", "", "B32", "SALU")
E("s_sethalt", "SOPP", "SOPP", "i16", "B32", "SALU")
E("-/s_delay_alu", "-", "SOPP", "delay", "B32", "SALU")
E("-/s_clause", "-", "SOPP", "k16", "B32", "SALU")
E("-/s_set_inst_prefetch_distance", "-", "SOPP", "k16", "B32", "SALU")  # clang -O3 puts it around loops
E("s_sendmsg", "SOPP", "SOPP", "msg", "B32", "SALU RM0")
E("s_sendmsghalt", "SOPP", "SOPP", "msg", "B32", "SALU RM0")
# gfx11 hazard waits on the dependency counters (va_vdst, sa_sdst, ...); printed hex
# like the values LLVM emits (0xfff, 0xfffe)
E("-/s_waitcnt_depctr", "-", "SOPP", "k16", "B32", "SALU")

# --- SMEM ---
for n9, n11, c in [("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx4", "b128", 4),
                   ("dwordx8", "b256", 8), ("dwordx16", "b512", 16)]:
    E("s_load_%s/s_load_%s" % (n9, n11), "SMEM", "SMEM", "sd%d sb2 soff" % c, "B32", "SMEM LOAD")
    E("s_buffer_load_%s/s_buffer_load_%s" % (n9, n11), "SMEM", "SMEM", "sd%d sb4 soff" % c, "B32", "SMEM LOAD")

# --- VOP1 ---
E("v_nop", "VOP1", "VOP1", "", "B32", "VALU NOE64")
E("v_readfirstlane_b32", "VOP1", "VOP1", "sd1 vv1", "B32", "VALU NOE64")
for n, d, s, ty in [
        ("v_mov_b32", 1, 1, "B32"), ("v_cvt_f32_i32", 1, 1, "B32"), ("v_cvt_f32_u32", 1, 1, "B32"),
        ("v_cvt_u32_f32", 1, 1, "F32"), ("v_cvt_i32_f32", 1, 1, "F32"), ("v_cvt_f16_f32", 1, 1, "F32"),
        ("v_cvt_f32_f16", 1, 1, "F16"), ("v_cvt_rpi_i32_f32/v_cvt_nearest_i32_f32", 1, 1, "F32"),
        ("v_cvt_flr_i32_f32/v_cvt_floor_i32_f32", 1, 1, "F32"),
        ("v_cvt_f32_ubyte0", 1, 1, "B32"), ("v_cvt_f32_ubyte1", 1, 1, "B32"),
        ("v_cvt_f32_ubyte2", 1, 1, "B32"), ("v_cvt_f32_ubyte3", 1, 1, "B32"),
        ("v_fract_f32", 1, 1, "F32"), ("v_trunc_f32", 1, 1, "F32"), ("v_ceil_f32", 1, 1, "F32"),
        ("v_rndne_f32", 1, 1, "F32"), ("v_floor_f32", 1, 1, "F32"), ("v_exp_f32", 1, 1, "F32"),
        ("v_log_f32", 1, 1, "F32"), ("v_rcp_f32", 1, 1, "F32"), ("v_rcp_iflag_f32", 1, 1, "F32"),
        ("v_rsq_f32", 1, 1, "F32"), ("v_sqrt_f32", 1, 1, "F32"), ("v_sin_f32", 1, 1, "F32"),
        ("v_cos_f32", 1, 1, "F32"), ("v_not_b32", 1, 1, "B32"), ("v_bfrev_b32", 1, 1, "B32"),
        ("v_ffbh_u32/v_clz_i32_u32", 1, 1, "B32"), ("v_ffbl_b32/v_ctz_i32_b32", 1, 1, "B32"),
        ("v_ffbh_i32/v_cls_i32", 1, 1, "B32"),
        ("v_cvt_f16_u16", 1, 1, "B16"), ("v_cvt_f16_i16", 1, 1, "B16"), ("v_cvt_u16_f16", 1, 1, "F16"),
        ("v_cvt_i16_f16", 1, 1, "F16"), ("v_rcp_f16", 1, 1, "F16"), ("v_sqrt_f16", 1, 1, "F16"),
        ("v_rsq_f16", 1, 1, "F16"), ("v_log_f16", 1, 1, "F16"), ("v_exp_f16", 1, 1, "F16"),
        ("v_sin_f16", 1, 1, "F16"), ("v_cos_f16", 1, 1, "F16"), ("v_floor_f16", 1, 1, "F16"),
        ("v_ceil_f16", 1, 1, "F16"), ("v_trunc_f16", 1, 1, "F16"), ("v_rndne_f16", 1, 1, "F16"),
        ("v_fract_f16", 1, 1, "F16"),
        ("v_cvt_f64_f32", 2, 1, "F32"), ("v_cvt_f32_f64", 1, 2, "F64"),
        ("v_cvt_f64_i32", 2, 1, "B32"), ("v_cvt_i32_f64", 1, 2, "F64"),
        ("v_mov_b64/-", 2, 2, "B64"),
        ("v_cvt_f32_fp8/-", 1, 1, "B32"), ("v_cvt_f32_bf8/-", 1, 1, "B32"),
        ("v_cvt_pk_f32_fp8/-", 2, 1, "B32"), ("v_cvt_pk_f32_bf8/-", 2, 1, "B32")]:
    # float<->int conversions take llvm-mc's modifier sets (isa_cvt_kind in enc.c); fp8 ones none yet
    nm = " NOMODS" if re.search(r"fp8|bf8", n) else ""
    E(n, "VOP1", "VOP1", "vd%d vs%d" % (d, s), ty, "VALU" + nm)
E("v_swap_b32", "VOP1", "VOP1", "vd1 vd1", "B32", "VALU NOE64")
E("v_accvgpr_mov_b32/-", "VOP1", "-", "ad1 as1", "B32", "VALU NOE64")

# --- VOP2 ---
E("v_cndmask_b32", "VOP2", "VOP2", "vd1 vs1 vv1 lm", "B32", "VALU RVCC")
for n, ty in [("v_add_f32", "F32"), ("v_sub_f32", "F32"), ("v_subrev_f32", "F32"), ("v_mul_f32", "F32"),
              ("v_mul_i32_i24", "B32"), ("v_mul_hi_i32_i24", "B32"), ("v_mul_u32_u24", "B32"),
              ("v_mul_hi_u32_u24", "B32"), ("v_min_f32", "F32"), ("v_max_f32", "F32"),
              ("v_min_i32", "B32"), ("v_max_i32", "B32"), ("v_min_u32", "B32"), ("v_max_u32", "B32"),
              ("v_lshrrev_b32", "B32"), ("v_ashrrev_i32", "B32"), ("v_lshlrev_b32", "B32"),
              ("v_and_b32", "B32"), ("v_or_b32", "B32"), ("v_xor_b32", "B32"), ("v_xnor_b32", "B32"),
              ("v_add_u32/v_add_nc_u32", "B32"), ("v_sub_u32/v_sub_nc_u32", "B32"),
              ("v_subrev_u32/v_subrev_nc_u32", "B32"),
              ("v_add_f16", "F16"), ("v_sub_f16", "F16"), ("v_subrev_f16", "F16"), ("v_mul_f16", "F16"),
              ("v_max_f16", "F16"), ("v_min_f16", "F16"), ("v_ldexp_f16", "F16"),
              ]:
    E(n, "VOP2", "VOP2", "vd1 vs1 vv1", ty, "VALU")
E("v_ldexp_f32", "VOP3", "VOP3", "vd1 vs1 vs1", "F32", "VALU NOMODS")
E("v_cvt_pkrtz_f16_f32/v_cvt_pk_rtz_f16_f32", "VOP3", "VOP2", "vd1 vs1 vv1", "F32", "VALU")
E("v_fmac_f32", "VOP2", "VOP2", "vd1 vs1 vv1", "F32", "VALU TIED")
E("-/v_fmac_f16", "-", "VOP2", "vd1 vs1 vv1", "F16", "VALU TIED")
E("v_dot2c_f32_f16/v_dot2acc_f32_f16", "VOP2", "VOP2", "vd1 vs1 vv1", "F16", "VALU TIED NOE64 NODPP")
E("v_fmamk_f32", "VOP2", "VOP2", "vd1 vs1 k32 vv1", "F32", "VALU NOE64")
E("v_fmaak_f32", "VOP2", "VOP2", "vd1 vs1 vv1 k32", "F32", "VALU NOE64")
E("v_pk_fmac_f16", "VOP2", "VOP2", "vd1 vs1 vv1", "F16", "VALU TIED NOE64 NODPP")
E("v_add_co_u32", "VOP2", "VOP3", "vd1 lm vs1 vv1", "B32", "VALU WVCC")
E("v_sub_co_u32", "VOP2", "VOP3", "vd1 lm vs1 vv1", "B32", "VALU WVCC")
E("v_subrev_co_u32", "VOP2", "VOP3", "vd1 lm vs1 vv1", "B32", "VALU WVCC")
E("v_addc_co_u32/v_add_co_ci_u32", "VOP2", "VOP2", "vd1 lm vs1 vv1 lm", "B32", "VALU WVCC RVCC")
E("v_subb_co_u32/v_sub_co_ci_u32", "VOP2", "VOP2", "vd1 lm vs1 vv1 lm", "B32", "VALU WVCC RVCC")
E("v_subbrev_co_u32/v_subrev_co_ci_u32", "VOP2", "VOP2", "vd1 lm vs1 vv1 lm", "B32", "VALU WVCC RVCC")
E("v_add_u16/v_add_nc_u16", "VOP2", "VOP3", "vd1 vs1 vv1", "B16", "VALU OPSEL")
E("v_sub_u16/v_sub_nc_u16", "VOP2", "VOP3", "vd1 vs1 vv1", "B16", "VALU OPSEL")
# signed 16-bit add/sub: VOP3 only on both families (v_add_i16 on gfx9, v_add_nc_i16 on gfx11)
E("v_add_i16/v_add_nc_i16", "VOP3", "VOP3", "vd1 vs1 vs1", "B16", "VALU OPSEL")
E("v_sub_i16/v_sub_nc_i16", "VOP3", "VOP3", "vd1 vs1 vs1", "B16", "VALU OPSEL")
E("v_mul_lo_u16", "VOP2", "VOP3", "vd1 vs1 vv1", "B16", "VALU")
E("v_lshlrev_b16", "VOP2", "VOP3", "vd1 vs1 vv1", "B16", "VALU")
E("v_max_u16", "VOP2", "VOP3", "vd1 vs1 vv1", "B16", "VALU")

# --- VOPC ---
for t, ty, conds in [("f32", "F32", ["f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg",
                                     "ngt", "nle", "neq", "nlt", "tru"]),
                     ("f16", "F16", ["lt", "eq", "le", "gt", "lg", "ge", "neq", "nlt"]),
                     ("i32", "B32", ["lt", "eq", "le", "gt", "ne", "ge"]),
                     ("u32", "B32", ["lt", "eq", "le", "gt", "ne", "ge"]),
                     ("f64", "F64", ["lt", "eq", "le", "gt", "ge", "neq"]),
                     ("u64", "B64", ["lt", "eq", "gt", "ne"]), ("i64", "B64", ["lt", "eq", "gt"])]:
    r = 2 if t.endswith("64") else 1
    for c in conds:
        E("v_cmp_%s_%s" % (c, t), "VOPC", "VOPC", "lm vs%d vv%d" % (r, r), ty, "VALU WVCC")
    if t in ("f32", "i32", "u32"):
        for c in conds:
            E("v_cmpx_%s_%s" % (c, t), "VOPC", "VOPC", "lm vs%d vv%d" % (r, r), ty, "VALU WEXEC CMPX")
E("v_cmp_class_f32", "VOPC", "VOPC", "lm vs1 vv1", "F32", "VALU WVCC")  # neg/abs on src0 only, no clamp (enc.c)

# --- VOP3 ---
for n, ty, sig in [
        ("v_fma_f32", "F32", "vd1 vs1 vs1 vs1"), ("v_mad_u32_u24", "B32", "vd1 vs1 vs1 vs1"),
        ("v_mad_i32_i24", "B32", "vd1 vs1 vs1 vs1"), ("v_mul_lo_u32", "B32", "vd1 vs1 vs1"),
        ("v_mul_hi_u32", "B32", "vd1 vs1 vs1"), ("v_mul_hi_i32", "B32", "vd1 vs1 vs1"),
        ("v_lshl_add_u32", "B32", "vd1 vs1 vs1 vs1"), ("v_add_lshl_u32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_lshl_or_b32", "B32", "vd1 vs1 vs1 vs1"), ("v_and_or_b32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_or3_b32", "B32", "vd1 vs1 vs1 vs1"), ("v_add3_u32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_xad_u32", "B32", "vd1 vs1 vs1 vs1"), ("v_bfe_u32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_bfe_i32", "B32", "vd1 vs1 vs1 vs1"), ("v_bfi_b32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_perm_b32", "B32", "vd1 vs1 vs1 vs1"), ("v_alignbit_b32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_alignbyte_b32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_min3_f32", "F32", "vd1 vs1 vs1 vs1"), ("v_max3_f32", "F32", "vd1 vs1 vs1 vs1"),
        ("v_med3_f32", "F32", "vd1 vs1 vs1 vs1"), ("v_min3_i32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_max3_i32", "B32", "vd1 vs1 vs1 vs1"), ("v_med3_i32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_min3_u32", "B32", "vd1 vs1 vs1 vs1"), ("v_max3_u32", "B32", "vd1 vs1 vs1 vs1"),
        ("v_med3_u32", "B32", "vd1 vs1 vs1 vs1"), ("v_fma_f16", "F16", "vd1 vs1 vs1 vs1"),
        ("v_mad_u16", "B16", "vd1 vs1 vs1 vs1"), ("v_mad_i16", "B16", "vd1 vs1 vs1 vs1"),
        ("v_max3_f16", "F16", "vd1 vs1 vs1 vs1"), ("v_min3_f16", "F16", "vd1 vs1 vs1 vs1"),
        ("v_med3_f16", "F16", "vd1 vs1 vs1 vs1"),
        ("v_div_fixup_f32", "F32", "vd1 vs1 vs1 vs1"), ("v_lerp_u8", "B32", "vd1 vs1 vs1 vs1"),
        ("v_lshlrev_b64", "B32", "vd2 vs1 vs2"), ("v_lshrrev_b64", "B32", "vd2 vs1 vs2"),
        ("v_ashrrev_i64", "B32", "vd2 vs1 vs2"), ("v_add_f64", "F64", "vd2 vs2 vs2"),
        ("v_mul_f64", "F64", "vd2 vs2 vs2"), ("v_fma_f64", "F64", "vd2 vs2 vs2 vs2"),
        ("v_max_f64", "F64", "vd2 vs2 vs2"), ("v_min_f64", "F64", "vd2 vs2 vs2"),
        ("v_mbcnt_lo_u32_b32", "B32", "vd1 vs1 vs1"), ("v_mbcnt_hi_u32_b32", "B32", "vd1 vs1 vs1"),
        ("v_bcnt_u32_b32", "B32", "vd1 vs1 vs1"), ("v_pack_b32_f16", "F16", "vd1 vs1 vs1"),
        ("v_bfm_b32", "B32", "vd1 vs1 vs1"), ("v_cvt_pk_u16_u32", "B32", "vd1 vs1 vs1"),
        ("v_cvt_pk_i16_i32", "B32", "vd1 vs1 vs1"),
        ("v_cvt_pknorm_i16_f32/v_cvt_pk_norm_i16_f32", "F32", "vd1 vs1 vs1"),
        ("v_cvt_pk_fp8_f32/-", "F32", "vd1 vs1 vs1"), ("v_cvt_pk_bf8_f32/-", "F32", "vd1 vs1 vs1"),
        ("v_cvt_sr_fp8_f32/-", "F32", "vd1 vs1 vs1"), ("v_cvt_sr_bf8_f32/-", "F32", "vd1 vs1 vs1")]:
    fl = " NOMODS" if re.search(r"pknorm|pk_norm|fp8|bf8", n) else ""
    if ty in ("F16", "B16"):
        fl += " OPSEL"  # 16-bit VOP3 ops select halves with op_sel
    E(n, "VOP3", "VOP3", sig, ty, "VALU" + fl)
E("v_mad_u64_u32", "VOP3", "VOP3", "vd2 lm vs1 vs1 vs2", "B32", "VALU")
# IEEE f32 division (LLVM's sequence): v_div_scale (VOP3B, lane mask out),
# v_div_fmas (reads vcc implicitly), v_div_fixup above.
E("v_div_scale_f32", "VOP3", "VOP3", "vd1 lm vs1 vs1 vs1", "F32", "VALU")
E("v_div_fmas_f32", "VOP3", "VOP3", "vd1 vs1 vs1 vs1", "F32", "VALU RVCC")
E("v_lshl_add_u64/-", "VOP3", "-", "vd2 vs2 vs1 vs2", "B32", "VALU")
# f64 IEEE division and sqrt (LLVM's sequences), roundings, u32 conversions: amd_isel_math.c
for n in ["v_rcp_f64", "v_rsq_f64", "v_sqrt_f64", "v_floor_f64", "v_ceil_f64", "v_trunc_f64", "v_rndne_f64"]:
    E(n, "VOP1", "VOP1", "vd2 vs2", "F64", "VALU")
E("v_cvt_f64_u32", "VOP1", "VOP1", "vd2 vs1", "B32", "VALU")
E("v_cvt_u32_f64", "VOP1", "VOP1", "vd1 vs2", "F64", "VALU")
E("v_div_scale_f64", "VOP3", "VOP3", "vd2 lm vs2 vs2 vs2", "F64", "VALU")
E("v_div_fmas_f64", "VOP3", "VOP3", "vd2 vs2 vs2 vs2", "F64", "VALU RVCC")
E("v_div_fixup_f64", "VOP3", "VOP3", "vd2 vs2 vs2 vs2", "F64", "VALU")
E("v_mad_i64_i32", "VOP3", "VOP3", "vd2 lm vs1 vs1 vs2", "B32", "VALU")
E("v_readlane_b32", "VOP3", "VOP3", "sd1 vv1 ss1", "B32", "VALU")
E("v_writelane_b32", "VOP3", "VOP3", "vd1 ss1 ss1", "B32", "VALU TIED")
E("-/v_permlane16_b32", "-", "VOP3", "vd1 vv1 ss1 ss1", "B32", "VALU TIED")
E("-/v_permlanex16_b32", "-", "VOP3", "vd1 vv1 ss1 ss1", "B32", "VALU TIED")

# --- VOP3P ---
for n, ty in [("v_pk_add_f16", "PK16"), ("v_pk_mul_f16", "PK16"), ("v_pk_max_f16", "PK16"),
              ("v_pk_min_f16", "PK16"), ("v_pk_add_u16", "PKI16"), ("v_pk_add_i16", "PKI16"),
              ("v_pk_sub_u16", "PKI16"), ("v_pk_sub_i16", "PKI16"), ("v_pk_mul_lo_u16", "PKI16"),
              ("v_pk_lshlrev_b16", "PKI16"), ("v_pk_lshrrev_b16", "PKI16"), ("v_pk_ashrrev_i16", "PKI16"),
              ("v_pk_max_i16", "PKI16"), ("v_pk_min_i16", "PKI16"), ("v_pk_max_u16", "PKI16"),
              ("v_pk_min_u16", "PKI16")]:
    E(n, "VOP3P", "VOP3P", "vd1 vs1 vs1", ty, "VALU")
for n, ty in [("v_pk_fma_f16", "PK16"), ("v_pk_mad_u16", "PKI16"), ("v_pk_mad_i16", "PKI16"),
              ("v_dot2_f32_f16", "PK16"), ("v_dot2_i32_i16/-", "PKI16"), ("v_dot2_u32_u16/-", "PKI16"),
              ("v_dot4_i32_i8/v_dot4_i32_iu8", "B32"), ("v_dot4_u32_u8", "B32"),
              ("v_dot8_i32_i4/v_dot8_i32_iu4", "B32"), ("v_dot8_u32_u4", "B32"),
              ("-/v_dot2_f32_bf16", "PK16"),
              ("v_fma_mix_f32", "F16"), ("v_fma_mixlo_f16", "F16"), ("v_fma_mixhi_f16", "F16")]:
    E(n, "VOP3P", "VOP3P", "vd1 vs1 vs1 vs1", ty, "VALU" + (" MIX" if "mix" in n else ""))
E("v_pk_fma_f32/-", "VOP3P", "-", "vd2 vs2 vs2 vs2", "F32", "VALU")
E("v_pk_mul_f32/-", "VOP3P", "-", "vd2 vs2 vs2", "F32", "VALU")
E("v_pk_add_f32/-", "VOP3P", "-", "vd2 vs2 vs2", "F32", "VALU")
E("v_pk_mov_b32/-", "VOP3P", "-", "vd2 vs2 vs2", "B32", "VALU")

# --- MAI (gfx90a / gfx942) ---
E("v_accvgpr_read_b32/-", "MAI", "-", "vd1 as1", "B32", "VALU")
E("v_accvgpr_write_b32/-", "MAI", "-", "ad1 vs1", "B32", "VALU")
for n, a, c in [("v_mfma_f32_32x32x1f32", 1, 32), ("v_mfma_f32_16x16x1f32", 1, 16),
                ("v_mfma_f32_4x4x1f32", 1, 4), ("v_mfma_f32_32x32x2f32", 1, 16),
                ("v_mfma_f32_16x16x4f32", 1, 4),
                ("v_mfma_f32_32x32x4f16", 2, 32), ("v_mfma_f32_16x16x4f16", 2, 16),
                ("v_mfma_f32_4x4x4f16", 2, 4), ("v_mfma_f32_32x32x8f16", 2, 16),
                ("v_mfma_f32_16x16x16f16", 2, 4),
                ("v_mfma_f32_32x32x4bf16_1k", 2, 32), ("v_mfma_f32_16x16x4bf16_1k", 2, 16),
                ("v_mfma_f32_4x4x4bf16_1k", 2, 4), ("v_mfma_f32_32x32x8bf16_1k", 2, 16),
                ("v_mfma_f32_16x16x16bf16_1k", 2, 4),
                ("v_mfma_i32_32x32x4i8", 1, 32), ("v_mfma_i32_16x16x4i8", 1, 16),
                ("v_mfma_i32_32x32x8i8", 1, 16), ("v_mfma_i32_16x16x16i8", 1, 4),
                ("v_mfma_i32_32x32x16_i8", 2, 16), ("v_mfma_i32_16x16x32_i8", 2, 4),
                ("v_mfma_f32_32x32x4_xf32", 2, 16), ("v_mfma_f32_16x16x8_xf32", 2, 4),
                ("v_mfma_f64_16x16x4f64", 2, 8), ("v_mfma_f64_4x4x4f64", 2, 2)]:
    E(n + "/-", "MAI", "-", "avd%d avs%d avs%d avs%d" % (c, a, a, c), "B32", "VALU MFMA")
for ab in ["fp8_fp8", "fp8_bf8", "bf8_fp8", "bf8_bf8"]:
    E("v_mfma_f32_16x16x32_%s/-" % ab, "MAI", "-", "avd4 avs2 avs2 avs4", "B32", "VALU MFMA")
    E("v_mfma_f32_32x32x16_%s/-" % ab, "MAI", "-", "avd16 avs2 avs2 avs16", "B32", "VALU MFMA")

# --- WMMA (gfx11) ---
for n, ab in [("v_wmma_f32_16x16x16_f16", 8), ("v_wmma_f32_16x16x16_bf16", 8),
              ("v_wmma_f16_16x16x16_f16", 8), ("v_wmma_bf16_16x16x16_bf16", 8),
              ("v_wmma_i32_16x16x16_iu8", 4), ("v_wmma_i32_16x16x16_iu4", 2)]:
    E("-/" + n, "-", "VOP3P", "wd8 vv%d vv%d wv8" % (ab, ab), "B32", "VALU WMMA")

# --- VOPD (gfx11): component ops, opcode = VOPD component code ---
for n, sig, f in [("v_dual_fmac_f32", "vd1 vs1 vv1", "TIED"), ("v_dual_mul_f32", "vd1 vs1 vv1", ""),
                  ("v_dual_add_f32", "vd1 vs1 vv1", ""), ("v_dual_sub_f32", "vd1 vs1 vv1", ""),
                  ("v_dual_subrev_f32", "vd1 vs1 vv1", ""), ("v_dual_mul_dx9_zero_f32", "vd1 vs1 vv1", ""),
                  ("v_dual_mov_b32", "vd1 vs1", ""), ("v_dual_cndmask_b32", "vd1 vs1 vv1", "RVCC"),
                  ("v_dual_max_f32", "vd1 vs1 vv1", ""), ("v_dual_min_f32", "vd1 vs1 vv1", ""),
                  ("v_dual_dot2acc_f32_f16", "vd1 vs1 vv1", "TIED"),
                  ("v_dual_dot2acc_f32_bf16", "vd1 vs1 vv1", "TIED"),
                  ("v_dual_add_nc_u32", "vd1 vs1 vv1", "VOPDY"), ("v_dual_lshlrev_b32", "vd1 vs1 vv1", "VOPDY"),
                  ("v_dual_and_b32", "vd1 vs1 vv1", "VOPDY"),
                  ("v_dual_fmaak_f32", "vd1 vs1 vv1 k32", ""), ("v_dual_fmamk_f32", "vd1 vs1 k32 vv1", "")]:
    E("-/" + n, "-", "VOPD", sig, "F32", "VALU " + f)

# --- DS ---
DSL = [("ds_read_b32/ds_load_b32", 1), ("ds_read_b64/ds_load_b64", 2), ("ds_read_b96/ds_load_b96", 3),
       ("ds_read_b128/ds_load_b128", 4), ("ds_read_u8/ds_load_u8", 1), ("ds_read_i8/ds_load_i8", 1),
       ("ds_read_u16/ds_load_u16", 1), ("ds_read_i16/ds_load_i16", 1),
       ("ds_read_u8_d16/ds_load_u8_d16", 1), ("ds_read_u8_d16_hi/ds_load_u8_d16_hi", 1),
       ("ds_read_u16_d16/ds_load_u16_d16", 1), ("ds_read_u16_d16_hi/ds_load_u16_d16_hi", 1)]
for n, c in DSL:
    E(n, "DS", "DS", "vd%d da" % c, "B32", "DS LOAD")
for n, c in [("ds_read2_b32/ds_load_2addr_b32", 2), ("ds_read2_b64/ds_load_2addr_b64", 4),
             ("ds_read2st64_b32/ds_load_2addr_stride64_b32", 2),
             ("ds_read2st64_b64/ds_load_2addr_stride64_b64", 4)]:
    E(n, "DS", "DS", "vd%d da" % c, "B32", "DS LOAD DS2")
for n, c in [("ds_write_b32/ds_store_b32", 1), ("ds_write_b64/ds_store_b64", 2),
             ("ds_write_b96/ds_store_b96", 3), ("ds_write_b128/ds_store_b128", 4),
             ("ds_write_b8/ds_store_b8", 1), ("ds_write_b16/ds_store_b16", 1),
             ("ds_write_b8_d16_hi/ds_store_b8_d16_hi", 1), ("ds_write_b16_d16_hi/ds_store_b16_d16_hi", 1)]:
    E(n, "DS", "DS", "da dd%d" % c, "B32", "DS STORE")
for n, c in [("ds_write2_b32/ds_store_2addr_b32", 1), ("ds_write2_b64/ds_store_2addr_b64", 2),
             ("ds_write2st64_b32/ds_store_2addr_stride64_b32", 1),
             ("ds_write2st64_b64/ds_store_2addr_stride64_b64", 2)]:
    E(n, "DS", "DS", "da dd%d dd%d" % (c, c), "B32", "DS STORE DS2")
for n in ["ds_add_u32", "ds_sub_u32", "ds_rsub_u32", "ds_inc_u32", "ds_dec_u32", "ds_min_i32", "ds_max_i32",
          "ds_min_u32", "ds_max_u32", "ds_and_b32", "ds_or_b32", "ds_xor_b32", "ds_add_f32",
          "ds_min_f32", "ds_max_f32"]:
    E(n, "DS", "DS", "da dd1", "B32", "DS STORE ATOMIC")
    r = n.replace("_u32", "_rtn_u32").replace("_i32", "_rtn_i32").replace("_b32", "_rtn_b32").replace("_f32", "_rtn_f32")
    E(r, "DS", "DS", "vd1 da dd1", "B32", "DS LOAD ATOMIC")
for n in ["ds_add_u64", "ds_min_u64", "ds_max_u64"]:
    E(n, "DS", "DS", "da dd2", "B32", "DS STORE ATOMIC")
E("ds_wrxchg_rtn_b32/ds_storexchg_rtn_b32", "DS", "DS", "vd1 da dd1", "B32", "DS LOAD ATOMIC")
# compare-and-swap (the shared-memory software atomics' loop).  Same opcodes, but the data operands
# swap meaning: gfx9 ds_cmpst data0 = compare, data1 = new; gfx11 ds_cmpstore data0 = new, data1 = compare.
for c in (1, 2):
    w = 32 * c
    E("ds_cmpst_b%d/ds_cmpstore_b%d" % (w, w), "DS", "DS", "da dd%d dd%d" % (c, c), "B32", "DS STORE ATOMIC")
    E("ds_cmpst_rtn_b%d/ds_cmpstore_rtn_b%d" % (w, w), "DS", "DS", "vd%d da dd%d dd%d" % (c, c, c), "B32",
      "DS LOAD ATOMIC")
E("ds_swizzle_b32", "DS", "DS", "vd1 da", "B32", "DS LOAD SWIZZLE")
E("ds_permute_b32", "DS", "DS", "vd1 da dd1", "B32", "DS LOAD")
E("ds_bpermute_b32", "DS", "DS", "vd1 da dd1", "B32", "DS LOAD")

# --- GLOBAL ---
for n, c in [("dword/b32", 1), ("dwordx2/b64", 2), ("dwordx3/b96", 3), ("dwordx4/b128", 4),
             ("ubyte/u8", 1), ("sbyte/i8", 1), ("ushort/u16", 1), ("sshort/i16", 1),
             ("ubyte_d16/d16_u8", 1), ("ubyte_d16_hi/d16_hi_u8", 1), ("sbyte_d16/d16_i8", 1),
             ("sbyte_d16_hi/d16_hi_i8", 1), ("short_d16/d16_b16", 1), ("short_d16_hi/d16_hi_b16", 1)]:
    a, b = n.split("/")
    E("global_load_%s/global_load_%s" % (a, b), "GLOBAL", "GLOBAL", "vd%d fa fs" % c, "B32", "GLOBAL LOAD")
for n, c in [("dword/b32", 1), ("dwordx2/b64", 2), ("dwordx3/b96", 3), ("dwordx4/b128", 4),
             ("byte/b8", 1), ("short/b16", 1), ("byte_d16_hi/d16_hi_b8", 1), ("short_d16_hi/d16_hi_b16", 1)]:
    a, b = n.split("/")
    E("global_store_%s/global_store_%s" % (a, b), "GLOBAL", "GLOBAL", "fa dd%d fs" % c, "B32", "GLOBAL STORE")
for n, c in [("add/add_u32", 1), ("sub/sub_u32", 1), ("smax/max_i32", 1), ("umax/max_u32", 1),
             ("smin/min_i32", 1), ("umin/min_u32", 1), ("and/and_b32", 1), ("or/or_b32", 1),
             ("xor/xor_b32", 1), ("swap/swap_b32", 1), ("inc/inc_u32", 1), ("dec/dec_u32", 1),
             ("cmpswap/cmpswap_b32", 2), ("add_f32/add_f32", 1), ("pk_add_f16/pk_add_f16", 1),
             ("add_x2/add_u64", 2), ("swap_x2/swap_b64", 2), ("cmpswap_x2/cmpswap_b64", 4),
             ("smax_x2/max_i64", 2), ("umax_x2/max_u64", 2), ("smin_x2/min_i64", 2), ("umin_x2/min_u64", 2)]:
    a, b = n.split("/")
    rc = c // 2 if "cmpswap" in a else c
    E("global_atomic_%s/global_atomic_%s" % (a, b), "GLOBAL", "GLOBAL", "fa dd%d fs" % c, "B32", "GLOBAL STORE ATOMIC")
    E("global_atomic_%s/global_atomic_%s" % (a, b), "GLOBAL", "GLOBAL", "vd%d fa dd%d fs" % (rc, c), "B32",
      "GLOBAL LOAD ATOMIC RTN")

# --- FLAT and SCRATCH (private memory for spills) ---
for n, c in [("dword/b32", 1), ("dwordx2/b64", 2), ("dwordx3/b96", 3), ("dwordx4/b128", 4),
             ("ubyte/u8", 1), ("sbyte/i8", 1), ("ushort/u16", 1), ("sshort/i16", 1)]:
    a, b = n.split("/")
    E("flat_load_%s/flat_load_%s" % (a, b), "FLAT", "FLAT", "vd%d fa" % c, "B32", "GLOBAL LOAD")
    E("scratch_load_%s/scratch_load_%s" % (a, b), "SCRATCH", "SCRATCH", "vd%d xa xs" % c, "B32", "GLOBAL LOAD")
for n, c in [("dword/b32", 1), ("dwordx2/b64", 2), ("dwordx3/b96", 3), ("dwordx4/b128", 4),
             ("byte/b8", 1), ("short/b16", 1)]:
    a, b = n.split("/")
    E("flat_store_%s/flat_store_%s" % (a, b), "FLAT", "FLAT", "fa dd%d" % c, "B32", "GLOBAL STORE")
    E("scratch_store_%s/scratch_store_%s" % (a, b), "SCRATCH", "SCRATCH", "xa dd%d xs" % c, "B32", "GLOBAL STORE")
# flat compare-and-swap (data {new, compare}); the backend uses the global forms
for n, c in [("cmpswap/cmpswap_b32", 1), ("cmpswap_x2/cmpswap_b64", 2)]:
    a, b = n.split("/")
    E("flat_atomic_%s/flat_atomic_%s" % (a, b), "FLAT", "FLAT", "fa dd%d" % (2 * c), "B32", "GLOBAL STORE ATOMIC")
    E("flat_atomic_%s/flat_atomic_%s" % (a, b), "FLAT", "FLAT", "vd%d fa dd%d" % (c, 2 * c), "B32",
      "GLOBAL LOAD ATOMIC RTN")

# --- MUBUF ---
for n, c in [("dword/b32", 1), ("dwordx2/b64", 2), ("dwordx3/b96", 3), ("dwordx4/b128", 4),
             ("ubyte/u8", 1), ("sbyte/i8", 1), ("ushort/u16", 1), ("sshort/i16", 1)]:
    a, b = n.split("/")
    E("buffer_load_%s/buffer_load_%s" % (a, b), "MUBUF", "MUBUF", "vd%d mva rsrc mso" % c, "B32", "MUBUF LOAD")
for n, c in [("dword/b32", 1), ("dwordx2/b64", 2), ("dwordx3/b96", 3), ("dwordx4/b128", 4),
             ("byte/b8", 1), ("short/b16", 1)]:
    a, b = n.split("/")
    E("buffer_store_%s/buffer_store_%s" % (a, b), "MUBUF", "MUBUF", "dd%d mva rsrc mso" % c, "B32", "MUBUF STORE")
for n in ["add/add_u32", "smax/max_i32", "umax/max_u32", "and/and_b32", "or/or_b32", "swap/swap_b32"]:
    a, b = n.split("/")
    E("buffer_atomic_%s/buffer_atomic_%s" % (a, b), "MUBUF", "MUBUF", "dd1 mva rsrc mso", "B32",
      "MUBUF STORE ATOMIC")
# gfx11 cache invalidations (clang emits buffer_gl0_inv/gl1_inv after acquire barriers)
E("-/buffer_gl0_inv", "-", "MUBUF", "", "B32", "MUBUF")
E("-/buffer_gl1_inv", "-", "MUBUF", "", "B32", "MUBUF")

# ---------------------------------------------------------------------------
# Sample text for opcode discovery.
def reg(prefix, base, n):
    return "%s%d" % (prefix, base) if n == 1 else "%s[%d:%d]" % (prefix, base, base + n - 1)

def sample(e, t, name):
    fmt = e["fmt11"] if t == "gfx1100" else e["fmt9"]
    ops, mods = [], []
    nv = [8]; ns = [8]
    def v(n, p="v"):
        b = nv[0]; nv[0] += max(n, 2) + (max(n, 2) % 2); return reg(p, b, n)
    def s(n):
        b = ns[0]; ns[0] += 16 if n > 4 else 4; return reg("s", b, n)
    lm = "vcc_lo" if t == "gfx1100" else "vcc"
    nss = 0
    for i, tok in enumerate(e["sig"]):
        k, n = split_tok(tok)
        if k == "ss" and "WAIT" in e["flags"]: ops.append("null")
        elif k == "ss" and fmt.startswith("VOP") and nss: ops.append("1")
        elif k in ("sd", "ss"):
            nss += k == "ss"; ops.append(s(n))
        elif k == "lm": ops.append(lm)
        elif k in ("vd", "vs", "vv", "dd"): ops.append(v(n))
        elif k in ("wd", "wv"): ops.append(v(n))
        elif k in ("avd", "avs"): ops.append(v(n, "a" if k == "avd" or i == 3 else "v"))
        elif k in ("ad", "as"): ops.append(v(n, "a"))
        elif k == "k16": ops.append("0x1234")
        elif k == "i16": ops.append("3")
        elif k == "lbl": ops.append("4")
        elif k == "wait": ops.append("vmcnt(0)")
        elif k == "delay": ops.append("instid0(VALU_DEP_1)")
        elif k == "msg": ops.append("sendmsg(MSG_INTERRUPT)")
        elif k == "k32": ops.append("0x41000000")
        elif k == "i32": ops.append("0x41")
        elif k == "hwreg": ops.append("hwreg(HW_REG_MODE)")
        elif k == "sb": ops.append(reg("s", 0, n))
        elif k == "soff": ops.append("0x10")
        elif k == "da": ops.append("v1")
        elif k == "fa": ops.append("v[2:3]")
        elif k == "fs": ops.append("off")
        elif k == "xa": ops.append("v1")
        elif k == "xs": ops.append("off")
        elif k == "mva": ops.append("v1")
        elif k == "rsrc": ops.append("s[4:7]")
        elif k == "mso": ops.append("0"); mods.append("offen")
        else: raise SystemExit("bad token " + tok)
    if "RTN" in e["flags"]:
        mods.append("sc0" if t == "gfx942" else "glc")
    if "CMPX" in e["flags"] and t == "gfx1100":
        ops = ops[1:]
    if "SWIZZLE" in e["flags"]:
        mods.append("offset:swizzle(QUAD_PERM,0,1,2,3)")
    txt = name + (" " + ", ".join(ops) if ops else "") + (" " + " ".join(mods) if mods else "")
    if fmt == "VOPD":
        txt = "v_dual_mov_b32 v101, v103 :: " + txt if "VOPDY" in e["flags"] else \
              txt + " :: v_dual_mov_b32 v101, v103"
    return txt

def sendmsg_names():
    """(simm16, text) -> target mask: the symbolic s_sendmsg operands llvm-mc-19 prints for every value
    of the message fields (gfx9: id [3:0], op [6:4], stream [9:8]; gfx11: id [7:0]), kept when
    llvm-mc-19 assembles the text back to the same value."""
    sm = {}
    for ti, t in enumerate(TARGETS):
        g11 = t == "gfx1100"
        opc = 0xbfb6 if g11 else 0xbf90
        vals = range(256) if g11 else [v for v in range(1024) if not v & 0x80]
        attr = ["-mattr=+wavefrontsize32"] if g11 else []
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            for v in vals:
                w = opc << 16 | v
                f.write(",".join("0x%02x" % (w >> 8 * i & 0xff) for i in range(4)) + "\n")
            path = f.name
        p = subprocess.run(["llvm-mc-19", "--disassemble", "-triple=amdgcn", "-mcpu=" + t, path] + attr,
                           capture_output=True, text=True)
        os.unlink(path)
        outs = [l.split(None, 1)[1].strip() for l in p.stdout.splitlines() if l.strip().startswith("s_sendmsg")]
        cand = [(v, o) for v, o in zip(vals, outs) if o.startswith("sendmsg(MSG_")]
        with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
            f.write("".join("s_sendmsg %s\n" % o for _, o in cand)); path = f.name
        p = subprocess.run(["llvm-mc-19", "-show-encoding", "-triple=amdgcn", "-mcpu=" + t, path] + attr,
                           capture_output=True, text=True)
        os.unlink(path)
        encs = re.findall(r"encoding: \[0x([0-9a-f]+),0x([0-9a-f]+),", p.stdout)
        assert len(encs) == len(cand), (t, len(encs), len(cand))
        for (v, o), (lo, hi) in zip(cand, encs):
            if int(lo, 16) | int(hi, 16) << 8 == v:
                sm[(v, o)] = sm.get((v, o), 0) | 1 << ti
    return sm

def opcode(fmt, t, b, e):
    w0 = int.from_bytes(bytes(b[0:4]), "little")
    g11 = t == "gfx1100"
    if fmt == "SOP2": return (w0 >> 23) & 0x7f
    if fmt == "SOPK": return (w0 >> 23) & 0x1f
    if fmt == "SOP1": return (w0 >> 8) & 0xff
    if fmt in ("SOPC", "SOPP"): return (w0 >> 16) & 0x7f
    if fmt == "SMEM": return (w0 >> 18) & 0xff
    if fmt == "VOP1": return (w0 >> 9) & 0xff
    if fmt == "VOP2": return (w0 >> 25) & 0x3f
    if fmt == "VOPC": return (w0 >> 17) & 0xff
    if fmt == "VOP3": return (w0 >> 16) & 0x3ff
    if fmt in ("VOP3P", "MAI"): return (w0 >> 16) & 0x7f
    if fmt == "VOPD":
        w0 = int.from_bytes(bytes(b[0:4]), "little")
        return (w0 >> 17) & 0x1f if "VOPDY" in e["flags"] else (w0 >> 22) & 0xf
    if fmt == "DS": return (w0 >> 18) & 0xff if g11 else (w0 >> 17) & 0xff
    if fmt in ("GLOBAL", "FLAT", "SCRATCH"): return (w0 >> 18) & 0x7f
    if fmt == "MUBUF": return (w0 >> 18) & 0xff if g11 else (w0 >> 18) & 0x7f
    raise SystemExit(fmt)

PREFIX = {  # (mask, value) of word 0 per format: gfx9 family, gfx11
    "SOP1": ((0xff800000, 0xbe800000),) * 2, "SOPC": ((0xff800000, 0xbf000000),) * 2,
    "SOPP": ((0xff800000, 0xbf800000),) * 2, "SOPK": ((0xf0000000, 0xb0000000),) * 2,
    "SOP2": ((0xc0000000, 0x80000000),) * 2, "VOP1": ((0xfe000000, 0x7e000000),) * 2,
    "VOPC": ((0xfe000000, 0x7c000000),) * 2, "VOP2": ((0x80000000, 0),) * 2,
    "VOP3": ((0xfc000000, 0xd0000000), (0xfc000000, 0xd4000000)),
    "VOP3P": ((0xff800000, 0xd3800000), (0xff000000, 0xcc000000)),
    "MAI": ((0xff800000, 0xd3800000),) * 2, "VOPD": ((0xfc000000, 0xc8000000),) * 2,
    "SMEM": ((0xfc000000, 0xc0000000), (0xfc000000, 0xf4000000)),
    "DS": ((0xfc000000, 0xd8000000),) * 2, "GLOBAL": ((0xfc000000, 0xdc000000),) * 2,
    "FLAT": ((0xfc000000, 0xdc000000),) * 2, "SCRATCH": ((0xfc000000, 0xdc000000),) * 2,
    "MUBUF": ((0xfc000000, 0xe0000000),) * 2,
}

def check_prefix(fmt, t, b, txt):
    w0 = int.from_bytes(bytes(b[0:4]), "little")
    mask, val = PREFIX[fmt][1 if t == "gfx1100" else 0]
    if fmt == "VOP2" and (w0 >> 25) in (0x3e, 0x3f):
        val = -1
    if (w0 & mask) != val:
        raise SystemExit("format %s on %s does not match the encoding of '%s'" % (fmt, t, txt))

def run_mc(t, lines):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(lines) + "\n"); path = f.name
    attr = ["-mattr=+wavefrontsize32"] if t == "gfx1100" else []
    p = subprocess.run(["llvm-mc-19", "-triple=amdgcn", "-mcpu=" + t, "-show-encoding", path] + attr,
                       capture_output=True, text=True)
    os.unlink(path)
    bad = set(int(m.group(1)) for m in re.finditer(r":(\d+):\d+: error", p.stderr))
    outs = [l for l in p.stdout.splitlines() if "encoding:" in l]
    res, it = {}, iter(outs)
    for i in range(len(lines)):
        if i + 1 in bad: continue
        l = next(it)
        txt, enc = l.split("; encoding:")
        res[i] = (txt.strip(), [int(x, 16) for x in re.findall(r"0x([0-9a-f]+)", enc)])
    return res, p.stderr

def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = {}
    for t in TARGETS:
        lines = []
        for e in ENTRIES:
            n = e["n11"] if t == "gfx1100" else e["n9"]
            lines.append(sample(e, t, n) if n else "s_nop 0")
        r, err = run_mc(t, lines)
        if t != "gfx1100":
            # gfx9 SDWA: does llvm-mc take the op as NAME_sdwa? (v_nop_sdwa prints as v_nop: left out)
            sl = [(e, sample(e, t, e["n9"]).replace(e["n9"], e["n9"] + "_sdwa", 1)) for e in ENTRIES
                  if e["n9"] and e["fmt9"] in ("VOP1", "VOP2", "VOPC") and e["n9"] != "v_nop" and
                  "fp8" not in e["n9"] and "bf8" not in e["n9"]]  # fp8 cvts: SDWA without dst_sel (not done)
            rs, _ = run_mc(t, [x for _, x in sl])
            for k, (e, _) in enumerate(sl):
                if k in rs and "_sdwa" in rs[k][0]:
                    e["forms"] = e.get("forms", 0) | (2 if t == "gfx90a" else 4)
        if t == "gfx1100":
            # gfx11 VOP3 DPP: does llvm-mc take the op as NAME_e64_dpp with a DPP16 and a DPP8 control?
            xl = []
            for e in ENTRIES:
                n = e["n11"]
                if n and e["fmt11"] in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P") and "WMMA" not in e["flags"]:
                    mn, _, rest = sample(e, t, n).partition(" ")
                    xl.append((e, mn + "_e64_dpp " + rest + " row_shl:1",
                               mn + "_e64_dpp " + rest + " dpp8:[7,6,5,4,3,2,1,0]"))
            rx, _ = run_mc(t, [x for _, a, b in xl for x in (a, b)])
            for k, (e, _, _) in enumerate(xl):
                if 2 * k in rx and 2 * k + 1 in rx:
                    e["forms"] = e.get("forms", 0) | 1
        for i, e in enumerate(ENTRIES):
            n = e["n11"] if t == "gfx1100" else e["n9"]
            if not n: continue
            if i not in r:
                if "not supported on this GPU" not in err.split("\n%d:" % 0)[0]:
                    pass
                print("absent on %s: %s" % (t, lines[i]), file=sys.stderr)
                continue
            txt, enc = r[i]
            fmt = e["fmt11"] if t == "gfx1100" else e["fmt9"]
            if fmt == "VOPD":
                parts = [p.strip().split()[0] for p in txt.split("::")]
                pname = parts[1] if "VOPDY" in e["flags"] else parts[0]
            else:
                pname = txt.split()[0]
            suffix = 0
            if pname.endswith("_e32"): pname = pname[:-4]; suffix = 1
            check_prefix(fmt, t, enc, txt)
            e.setdefault("res", {})[t] = (opcode(fmt, t, enc, e), pname, suffix)
    hw = {}  # (id, name) -> target mask: the names llvm-mc prints for s_getreg_b32's register ids
    for ti, t in enumerate(TARGETS):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            for i in range(64):
                f.write("0x%02x,0xf8,0x82,0xb8\n" % i)
            path = f.name
        attr = ["-mattr=+wavefrontsize32"] if t == "gfx1100" else []
        p = subprocess.run(["llvm-mc-19", "--disassemble", "-triple=amdgcn", "-mcpu=" + t, path] + attr,
                           capture_output=True, text=True)
        os.unlink(path)
        for i, m in enumerate(re.findall(r"hwreg\(([^)]*)\)", p.stdout)):
            if m.startswith("HW_REG_"):
                hw[(i, m)] = hw.get((i, m), 0) | 1 << ti
    out = []
    out.append("/* isa_ops.def — GENERATED by tools/gen_isa.py; edit the list there and rerun.\n"
               " *\n"
               " * One line per instruction: ISA_OP(ID, FMT9, FMT11, NAME90A, NAME942, NAME11,\n"
               " *   OP90A, OP942, OP11, TYPE, FLAGS, E32, FORMS, operands...).  E32: bit i set when target i\n"
               " * (gfx90a, gfx942, gfx1100) prints the native VOP1/VOP2/VOPC form with an _e32 suffix.  FORMS: bit 0\n"
               " * gfx11 has the VOP3 DPP form (NAME_e64_dpp, DPP16 and DPP8), bits 1/2 gfx90a/gfx942 have the SDWA\n"
               " * form (NAME_sdwa).  A NULL name / -1 opcode means the\n"
               " * instruction does not exist on that target.  NAME* are the canonical spellings\n"
               " * llvm-mc prints; ISA_ALIAS(ID, TARGETMASK, NAME) lines list accepted spellings; ISA_HWREG(N,\n"
               " * TARGETMASK, NAME) lines name hardware register N of s_getreg/s_setreg as llvm-mc prints it;\n"
               " * ISA_SENDMSG(V, TARGETMASK, TEXT) lines give the symbolic s_sendmsg operand of simm16 V. */\n")
    ids = {}
    for e in ENTRIES:
        rs = e.get("res", {})
        if not rs: continue
        base = (rs.get("gfx942") or rs.get("gfx90a") or rs.get("gfx1100"))[1]
        idn = base.upper()
        if "RTN" in e["flags"]: idn += "_RTN"
        if "CMPX" in e["flags"] and False: pass
        while idn in ids: idn += "_"
        ids[idn] = 1
        e["id"] = idn
        def col(t):
            x = rs.get(t)
            return ('"%s"' % x[1], "0x%03x" % x[0]) if x else ("NULL", "-1")
        n90, o90 = col("gfx90a"); n942, o942 = col("gfx942"); n11, o11 = col("gfx1100")
        flags = list(e["flags"])
        suf = sum(1 << i for i, t in enumerate(TARGETS) if t in rs and rs[t][2])
        fl = "|".join("ISA_F_" + f for f in flags) or "0"
        sig = ", ".join(sig_macro(tok) for tok in e["sig"]) or "O_NONE"
        out.append("ISA_OP(%-28s %-7s %-7s %-30s %-30s %-30s %6s, %6s, %6s, %-5s %s, %d, %d, %s)" % (
            idn + ",", e["fmt9"].replace("-", "NONE") + ",", e["fmt11"].replace("-", "NONE") + ",",
            n90 + ",", n942 + ",", n11 + ",", o90, o942, o11, e["ty"] + ",", fl, suf, e.get("forms", 0), sig))
        # spellings accepted but not printed
        for t, key in (("gfx90a", "n9"), ("gfx942", "n9"), ("gfx1100", "n11")):
            if t in rs and e[key] and e[key] != rs[t][1]:
                out.append("ISA_ALIAS(%s, %s, \"%s\")" % (idn, "ISA_T_" + t.upper(), e[key]))
    for (i, m), mask in sorted(hw.items()):
        out.append("ISA_HWREG(%d, %d, \"%s\")" % (i, mask, m))
    for (v, m), mask in sorted(sendmsg_names().items()):
        out.append("ISA_SENDMSG(%d, %d, \"%s\")" % (v, mask, m))
    path = os.path.join(root, "isa", "isa_ops.def")
    if len(sys.argv) == 3 and sys.argv[1] == "-o":
        path = sys.argv[2]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %s: %d entries" % (path, len(ids)), file=sys.stderr)

def sig_macro(tok):
    k, n = split_tok(tok)
    return "O_%s(%d)" % (k.upper(), n)

def split_tok(tok):
    if tok in ("k16", "i16", "k32", "i32"):
        return tok, 1
    m = re.match(r"([a-z]+)(\d*)$", tok)
    return m.group(1), int(m.group(2) or 1)

if __name__ == "__main__":
    main()
