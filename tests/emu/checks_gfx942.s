// Deliberately broken kernels (and one correct one): the emulator must
// catch each bug.  Kernarg: one buffer pointer at 0 (64 dwords).
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.amdhsa_code_object_version 5
.text
.globl nowait
.p2align 8
.type nowait,@function
nowait:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[2:3]
  v_add_f32_e32 v2, 1.0, v2
  global_store_dword v1, v2, s[2:3]
  s_endpgm
.Lnowait_end:
  .size nowait, .Lnowait_end-nowait
.globl nowait_smem
.p2align 8
.type nowait_smem,@function
nowait_smem:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v1, 2, v0
  global_store_dword v1, v1, s[2:3]
  s_endpgm
.Lnowait_smem_end:
  .size nowait_smem, .Lnowait_smem_end-nowait_smem
.globl oob
.p2align 8
.type oob,@function
oob:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v1, s[2:3] offset:256
  s_endpgm
.Loob_end:
  .size oob, .Loob_end-oob
.globl uninit
.p2align 8
.type uninit,@function
uninit:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  v_add_u32_e32 v2, v1, v3
  global_store_dword v1, v2, s[2:3]
  s_endpgm
.Luninit_end:
  .size uninit, .Luninit_end-uninit
.globl lds_oob
.p2align 8
.type lds_oob,@function
lds_oob:
  v_lshlrev_b32_e32 v1, 2, v0
  ds_write_b32 v1, v0 offset:8
  s_endpgm
.Llds_oob_end:
  .size lds_oob, .Llds_oob_end-lds_oob
.globl mfma_nohazard
.p2align 8
.type mfma_nohazard,@function
mfma_nohazard:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_mov_b32_e32 v2, 0x3c003c00
  v_mov_b32_e32 v3, 0x3c003c00
  v_lshlrev_b32_e32 v1, 2, v0
  s_nop 4
  v_mfma_f32_32x32x8_f16 v[4:19], v[2:3], v[2:3], 0
  s_nop 15
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v19, s[2:3]
  s_endpgm
.Lmfma_nohazard_end:
  .size mfma_nohazard, .Lmfma_nohazard_end-mfma_nohazard
.globl mfma_hazard
.p2align 8
.type mfma_hazard,@function
mfma_hazard:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_mov_b32_e32 v2, 0x3c003c00
  v_mov_b32_e32 v3, 0x3c003c00
  v_lshlrev_b32_e32 v1, 2, v0
  s_nop 4
  v_mfma_f32_32x32x8_f16 v[4:19], v[2:3], v[2:3], 0
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v4, s[2:3]
  s_endpgm
.Lmfma_hazard_end:
  .size mfma_hazard, .Lmfma_hazard_end-mfma_hazard
.globl sgpr_hazard
.p2align 8
.type sgpr_hazard,@function
sgpr_hazard:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  v_mov_b32_e32 v2, s2
  v_readfirstlane_b32 s4, v2
  s_mov_b32 s5, s3
  global_store_dword v1, v1, s[4:5]
  s_endpgm
.Lsgpr_hazard_end:
  .size sgpr_hazard, .Lsgpr_hazard_end-sgpr_hazard
.globl sdwa
.p2align 8
.type sdwa,@function
sdwa:
  v_mov_b32_e32 v1, 0x1234
  v_mov_b32_sdwa v2, v1 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0
  s_endpgm
.Lsdwa_end:
  .size sdwa, .Lsdwa_end-sdwa
.rodata
.p2align 6
.amdhsa_kernel nowait
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel nowait_smem
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel oob
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel uninit
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel lds_oob
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel mfma_nohazard
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel mfma_hazard
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel sgpr_hazard
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel sdwa
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 24
.end_amdhsa_kernel
