// gfx11 DPP forms the emulator decodes but has no semantics for: it must stop
// at them (naming the offset) instead of running them as the plain op.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
.amdhsa_code_object_version 5
.text
.globl e64dpp
.p2align 8
.type e64dpp,@function
e64dpp:
  v_mov_b32_e32 v1, 1
  v_mov_b32_e32 v2, 2
  v_add3_u32_e64_dpp v3, v1, v2, v0 row_shl:1 row_mask:0xf bank_mask:0xf
  s_endpgm
.Le64dpp_end:
  .size e64dpp, .Le64dpp_end-e64dpp
.globl e64dpp8
.p2align 8
.type e64dpp8,@function
e64dpp8:
  v_mov_b32_e32 v1, 1
  v_mov_b32_e32 v2, 2
  v_fma_f32_e64_dpp v3, -v1, v2, v0 dpp8:[7,6,5,4,3,2,1,0]
  s_endpgm
.Le64dpp8_end:
  .size e64dpp8, .Le64dpp8_end-e64dpp8
.globl dpp8
.p2align 8
.type dpp8,@function
dpp8:
  v_mov_b32_e32 v1, 1
  v_mov_b32_dpp v3, v1 dpp8:[1,0,3,2,5,4,7,6]
  s_endpgm
.Ldpp8_end:
  .size dpp8, .Ldpp8_end-dpp8
.rodata
.p2align 6
.amdhsa_kernel e64dpp
  .amdhsa_user_sgpr_count 0
  .amdhsa_wavefront_size32 1
  .amdhsa_next_free_vgpr 5
  .amdhsa_next_free_sgpr 16
.end_amdhsa_kernel
.amdhsa_kernel e64dpp8
  .amdhsa_user_sgpr_count 0
  .amdhsa_wavefront_size32 1
  .amdhsa_next_free_vgpr 5
  .amdhsa_next_free_sgpr 16
.end_amdhsa_kernel
.amdhsa_kernel dpp8
  .amdhsa_user_sgpr_count 0
  .amdhsa_wavefront_size32 1
  .amdhsa_next_free_vgpr 5
  .amdhsa_next_free_sgpr 16
.end_amdhsa_kernel
