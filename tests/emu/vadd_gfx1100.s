.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
.amdhsa_code_object_version 5
.text
.globl vadd
.p2align 8
.type vadd,@function
vadd:
  s_load_b128 s[4:7], s[0:1], 0x0
  s_load_b64 s[8:9], s[0:1], 0x10
  s_load_b32 s2, s[0:1], 0x18
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s3, s15, 5
  v_add_nc_u32_e32 v1, s3, v0
  v_cmp_gt_u32_e32 vcc_lo, s2, v1
  s_and_saveexec_b32 s10, vcc_lo
  s_cbranch_execz .Ldone
  v_lshlrev_b32_e32 v2, 2, v1
  global_load_b32 v3, v2, s[4:5]
  global_load_b32 v4, v2, s[6:7]
  s_waitcnt vmcnt(0)
  v_add_f32_e32 v3, v3, v4
  global_store_b32 v2, v3, s[8:9]
.Ldone:
  s_endpgm
.Lend:
  .size vadd, .Lend-vadd
.rodata
.p2align 6
.amdhsa_kernel vadd
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_user_sgpr_count 15
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_kernarg_size 28
  .amdhsa_wavefront_size32 1
  .amdhsa_next_free_vgpr 5
  .amdhsa_next_free_sgpr 16
.end_amdhsa_kernel
