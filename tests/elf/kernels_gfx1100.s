// kernels_gfx1100.s — three gfx1100 (wave32) kernels for the elf/ tests:
// vadd (global loads/stores), lds_rev (LDS + barrier), wmma (WMMA 16x16x16).
// Assembled by llvm-mc-19 + ld.lld-19 -shared as the oracle object; the
// test writes the same kernels with co_write and compares the two.
// The descriptor and metadata values here must match test_elf.c's specs.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.amdhsa_code_object_version 5
	.text

	.protected vadd
	.globl vadd
	.p2align 8
	.type vadd,@function
vadd:	// c[i] = a[i] + b[i] for i = wg_id_x * 256 + tid < n
	s_load_b32 s2, s[0:1], 0x18
	v_lshl_or_b32 v0, s15, 8, v0
	s_waitcnt lgkmcnt(0)
	v_cmp_gt_i32_e32 vcc_lo, s2, v0
	s_and_saveexec_b32 s2, vcc_lo
	s_cbranch_execz .Lvadd_done
	s_load_b128 s[4:7], s[0:1], 0x0
	v_ashrrev_i32_e32 v1, 31, v0
	s_load_b64 s[0:1], s[0:1], 0x10
	v_lshlrev_b64 v[0:1], 2, v[0:1]
	s_waitcnt lgkmcnt(0)
	v_add_co_u32 v2, vcc_lo, s4, v0
	v_add_co_ci_u32_e32 v3, vcc_lo, s5, v1, vcc_lo
	v_add_co_u32 v4, vcc_lo, s6, v0
	v_add_co_ci_u32_e32 v5, vcc_lo, s7, v1, vcc_lo
	v_add_co_u32 v0, vcc_lo, s0, v0
	global_load_b32 v2, v[2:3], off
	global_load_b32 v3, v[4:5], off
	v_add_co_ci_u32_e32 v1, vcc_lo, s1, v1, vcc_lo
	s_waitcnt vmcnt(0)
	v_add_f32_e32 v2, v2, v3
	global_store_b32 v[0:1], v2, off
.Lvadd_done:
	s_nop 0
	s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
	s_endpgm
.Lvadd_end:
	.size vadd, .Lvadd_end-vadd

	.protected lds_rev
	.globl lds_rev
	.p2align 8
	.type lds_rev,@function
lds_rev:	// out[i] = in[wg*256 + 255 - tid] through a 1 KiB LDS tile
	s_load_b128 s[0:3], s[0:1], 0x0
	v_lshl_or_b32 v1, s15, 8, v0
	v_lshlrev_b32_e32 v0, 2, v0
	v_ashrrev_i32_e32 v2, 31, v1
	v_lshlrev_b64 v[1:2], 2, v[1:2]
	s_waitcnt lgkmcnt(0)
	v_add_co_u32 v3, vcc_lo, s0, v1
	v_add_co_ci_u32_e32 v4, vcc_lo, s1, v2, vcc_lo
	global_load_b32 v3, v[3:4], off
	v_xor_b32_e32 v4, 0x3fc, v0
	s_waitcnt vmcnt(0)
	ds_store_b32 v0, v3
	s_waitcnt lgkmcnt(0)
	s_barrier	// the exchange is through LDS only: no buffer_gl0_inv needed
	ds_load_b32 v3, v4
	v_add_co_u32 v0, vcc_lo, s2, v1
	v_add_co_ci_u32_e32 v1, vcc_lo, s3, v2, vcc_lo
	s_waitcnt lgkmcnt(0)
	global_store_b32 v[0:1], v3, off
	s_nop 0
	s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
	s_endpgm
.Llds_rev_end:
	.size lds_rev, .Llds_rev_end-lds_rev

	.protected wmma
	.globl wmma
	.p2align 8
	.type wmma,@function
wmma:	// c[l] = wmma(a[l], b[l], c[l]) for one wave
	s_clause 0x1
	s_load_b128 s[4:7], s[0:1], 0x0
	s_load_b64 s[0:1], s[0:1], 0x10
	v_lshlrev_b32_e32 v24, 5, v0
	s_waitcnt lgkmcnt(0)
	s_clause 0x5
	global_load_b128 v[4:7], v24, s[4:5] offset:16
	global_load_b128 v[12:15], v24, s[6:7] offset:16
	global_load_b128 v[0:3], v24, s[4:5]
	global_load_b128 v[8:11], v24, s[6:7]
	global_load_b128 v[20:23], v24, s[0:1] offset:16
	global_load_b128 v[16:19], v24, s[0:1]
	s_waitcnt vmcnt(0)
	v_wmma_f32_16x16x16_f16 v[16:23], v[0:7], v[8:15], v[16:23]
	s_clause 0x1
	global_store_b128 v24, v[16:19], s[0:1]
	global_store_b128 v24, v[20:23], s[0:1] offset:16
	s_nop 0
	s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
	s_endpgm
.Lwmma_end:
	.size wmma, .Lwmma_end-wmma

	// Code-end padding as LLVM emits it for gfx11: s_code_end to 128 bytes, then 384 bytes.
	.p2alignl 7, 3214868480
	.fill 96, 4, 3214868480

	.rodata
	.p2align 6
.amdhsa_kernel vadd
	.amdhsa_kernarg_size 28
	.amdhsa_user_sgpr_count 15
	.amdhsa_user_sgpr_kernarg_segment_ptr 1
	.amdhsa_wavefront_size32 1
	.amdhsa_system_sgpr_workgroup_id_x 1
	.amdhsa_next_free_vgpr 6
	.amdhsa_next_free_sgpr 16
	.amdhsa_float_denorm_mode_32 3
	.amdhsa_float_denorm_mode_16_64 3
.end_amdhsa_kernel
.amdhsa_kernel lds_rev
	.amdhsa_group_segment_fixed_size 1024
	.amdhsa_kernarg_size 16
	.amdhsa_user_sgpr_count 15
	.amdhsa_user_sgpr_kernarg_segment_ptr 1
	.amdhsa_wavefront_size32 1
	.amdhsa_next_free_vgpr 5
	.amdhsa_next_free_sgpr 16
	.amdhsa_float_denorm_mode_32 3
	.amdhsa_float_denorm_mode_16_64 3
.end_amdhsa_kernel
.amdhsa_kernel wmma
	.amdhsa_kernarg_size 24
	.amdhsa_user_sgpr_count 16
	.amdhsa_user_sgpr_kernarg_segment_ptr 1
	.amdhsa_wavefront_size32 1
	.amdhsa_system_sgpr_workgroup_id_x 0
	.amdhsa_next_free_vgpr 25
	.amdhsa_next_free_sgpr 8
	.amdhsa_reserve_vcc 0
	.amdhsa_float_denorm_mode_32 3
	.amdhsa_float_denorm_mode_16_64 3
.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx1100
amdhsa.kernels:
  - .name: vadd
    .symbol: vadd.kd
    .language: OpenCL C
    .language_version: [ 2, 0 ]
    .kernarg_segment_size: 28
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 18
    .vgpr_count: 6
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
    .max_flat_workgroup_size: 256
    .reqd_workgroup_size: [ 256, 1, 1 ]
    .uses_dynamic_stack: false
    .workgroup_processor_mode: 1
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
    .wavefront_size: 32
    .sgpr_count: 18
    .vgpr_count: 5
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
    .max_flat_workgroup_size: 256
    .uses_dynamic_stack: false
    .workgroup_processor_mode: 1
    .args:
      - { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global, .access: read_only }
      - { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global, .access: write_only }
  - .name: wmma
    .symbol: wmma.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 8
    .vgpr_count: 25
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
    .max_flat_workgroup_size: 32
    .uses_dynamic_stack: false
    .workgroup_processor_mode: 1
    .args:
      - { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .size: 8, .offset: 16, .value_kind: global_buffer, .address_space: global }
...
	.end_amdgpu_metadata
