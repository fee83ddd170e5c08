// kernels_gfx942.s â€” three gfx942 (wave64) kernels for the elf/ tests:
// vadd, lds_rev (LDS + barrier), mfma (MFMA 32x32x8 f16 with 16 AGPRs).
// gfx942 has architected flat scratch: no private segment buffer, so the
// kernarg pointer is s[0:1] and wg id x is s2.  The test also assembles this
// file for gfx942:sramecc+:xnack- by rewriting the target strings.
// The descriptor and metadata values here must match test_elf.c's specs.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.amdhsa_code_object_version 5
	.text

	.protected vadd
	.globl vadd
	.p2align 8
	.type vadd,@function
vadd:
	s_load_dword s3, s[0:1], 0x18
	v_lshl_or_b32 v0, s2, 8, v0
	s_waitcnt lgkmcnt(0)
	v_cmp_gt_i32_e32 vcc, s3, v0
	s_and_saveexec_b64 s[2:3], vcc
	s_cbranch_execz .Lvadd_done
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[2:3], s[0:1], 0x10
	v_ashrrev_i32_e32 v1, 31, v0
	v_lshlrev_b64 v[0:1], 2, v[0:1]
	s_waitcnt lgkmcnt(0)
	v_lshl_add_u64 v[4:5], s[4:5], 0, v[0:1]
	v_lshl_add_u64 v[2:3], s[6:7], 0, v[0:1]
	global_load_dword v6, v[4:5], off
	global_load_dword v7, v[2:3], off
	v_lshl_add_u64 v[0:1], s[2:3], 0, v[0:1]
	s_waitcnt vmcnt(0)
	v_add_f32_e32 v2, v6, v7
	global_store_dword v[0:1], v2, off
.Lvadd_done:
	s_endpgm
.Lvadd_end:
	.size vadd, .Lvadd_end-vadd

	.protected lds_rev
	.globl lds_rev
	.p2align 8
	.type lds_rev,@function
lds_rev:
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshl_or_b32 v2, s2, 8, v0
	v_ashrrev_i32_e32 v3, 31, v2
	v_lshlrev_b64 v[2:3], 2, v[2:3]
	v_lshlrev_b32_e32 v0, 2, v0
	s_waitcnt lgkmcnt(0)
	v_lshl_add_u64 v[4:5], s[4:5], 0, v[2:3]
	global_load_dword v1, v[4:5], off
	v_xor_b32_e32 v4, 0x3fc, v0
	s_waitcnt vmcnt(0)
	ds_write_b32 v0, v1
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b32 v4, v4
	v_lshl_add_u64 v[0:1], s[6:7], 0, v[2:3]
	s_waitcnt lgkmcnt(0)
	global_store_dword v[0:1], v4, off
	s_endpgm
.Llds_rev_end:
	.size lds_rev, .Llds_rev_end-lds_rev

	.protected mfma
	.globl mfma
	.p2align 8
	.type mfma,@function
mfma:	// c[l] += sum_k a[l+64k] * b[l+64k] with the accumulator in a[0:15]
	s_load_dwordx4 s[0:3], s[0:1], 0x0
	s_load_dwordx2 s[6:7], s[0:1], 0x10
	v_lshlrev_b32_e32 v11, 3, v0
	v_lshlrev_b32_e32 v10, 6, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx2 v[0:1], v11, s[0:1]
	global_load_dwordx4 a[12:15], v10, s[6:7] offset:48
	global_load_dwordx4 a[8:11], v10, s[6:7] offset:32
	global_load_dwordx4 a[4:7], v10, s[6:7] offset:16
	global_load_dwordx4 a[0:3], v10, s[6:7]
	global_load_dwordx2 v[2:3], v11, s[2:3]
	global_load_dwordx2 v[4:5], v11, s[0:1] offset:512
	global_load_dwordx2 v[6:7], v11, s[2:3] offset:512
	global_load_dwordx2 v[8:9], v11, s[0:1] offset:1024
	s_waitcnt vmcnt(3)
	v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]
	global_load_dwordx2 v[0:1], v11, s[2:3] offset:1024
	global_load_dwordx2 v[2:3], v11, s[0:1] offset:1536
	s_waitcnt vmcnt(3)
	v_mfma_f32_32x32x8_f16 a[0:15], v[4:5], v[6:7], a[0:15]
	global_load_dwordx2 v[4:5], v11, s[2:3] offset:1536
	s_waitcnt vmcnt(2)
	v_mfma_f32_32x32x8_f16 a[0:15], v[8:9], v[0:1], a[0:15]
	s_waitcnt vmcnt(0)
	v_mfma_f32_32x32x8_f16 a[0:15], v[2:3], v[4:5], a[0:15]
	s_nop 7
	s_nop 7
	s_nop 2
	global_store_dwordx4 v10, a[8:11], s[6:7] offset:32
	global_store_dwordx4 v10, a[12:15], s[6:7] offset:48
	global_store_dwordx4 v10, a[0:3], s[6:7]
	global_store_dwordx4 v10, a[4:7], s[6:7] offset:16
	s_endpgm
.Lmfma_end:
	.size mfma, .Lmfma_end-mfma

	// Code-end padding as LLVM emits it for gfx942/gfx942: s_nop 0 to 64 bytes, then 1024 bytes.
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864

	.rodata
	.p2align 6
.amdhsa_kernel vadd
	.amdhsa_kernarg_size 28
	.amdhsa_user_sgpr_count 2
	.amdhsa_user_sgpr_kernarg_segment_ptr 1
	.amdhsa_next_free_vgpr 8
	.amdhsa_next_free_sgpr 8
	.amdhsa_accum_offset 8
	.amdhsa_float_denorm_mode_32 3
	.amdhsa_float_denorm_mode_16_64 3
.end_amdhsa_kernel
.amdhsa_kernel lds_rev
	.amdhsa_group_segment_fixed_size 1024
	.amdhsa_kernarg_size 16
	.amdhsa_user_sgpr_count 2
	.amdhsa_user_sgpr_kernarg_segment_ptr 1
	.amdhsa_next_free_vgpr 6
	.amdhsa_next_free_sgpr 8
	.amdhsa_accum_offset 8
	.amdhsa_float_denorm_mode_32 3
	.amdhsa_float_denorm_mode_16_64 3
.end_amdhsa_kernel
.amdhsa_kernel mfma
	.amdhsa_kernarg_size 24
	.amdhsa_user_sgpr_count 2
	.amdhsa_user_sgpr_kernarg_segment_ptr 1
	.amdhsa_system_sgpr_workgroup_id_x 0
	.amdhsa_next_free_vgpr 28
	.amdhsa_next_free_sgpr 8
	.amdhsa_accum_offset 12
	.amdhsa_float_denorm_mode_32 3
	.amdhsa_float_denorm_mode_16_64 3
.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx942
amdhsa.kernels:
  - .name: vÞadd
    .symbol: vadd.kd
    .language: OpenCL C
    .language_version: [ 2, 0 ]
    .kernarg_segment_size: 28
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 14
    .vgpr_count: 8
    .agpr_count: 0
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
    .max_flat_workgroup_size: 256
    .reqd_workgroup_size: [ 256, 1, 1 ]
    .uses_dynamic_stack: false
    .args:
      - { .name: a, .type_name: 'float*', .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global, .is_const: true }
      - { .name: b, .type_name: 'float*', .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global, .is_const: true }
      - { .name: c, .type_name: 'float*', .size: 8, .offset: 16, .value_kind: global_buffer, .address_space: global }
      - { .name: len, .type_name: int, .size: 4, .offset: 24, .value_kind: by_value }
  - .name: lds_rev
    .symbol: lds_rev.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 1024
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 14
    .vgpr_count: 6
    .agpr_count: 0
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
    .max_flat_workgroup_size: 256
    .uses_dynamic_stack: false
    .args:
      - { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global, .access: read_only }
      - { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global, .access: write_only }
  - .name: mfma
    .symbol: mfma.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 14
    .vgpr_count: 28
    .agpr_count: 16
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
    .max_flat_workgroup_size: 64
    .uses_dynamic_stack: false
    .args:
      - { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .size: 8# .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .size: 8, .offset: 16, .value_kind: global_buffer, .address_space: global }
...
	.end_amdgpu_metadata
