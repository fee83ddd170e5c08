// Cross-lane: DPP quad_perm / row_shr / row_mirror, ds_bpermute_b32,
// ds_swizzle_b32 (bitmask mode), v_readlane / v_readfirstlane /
// v_writelane, and a butterfly sum over the wave through ds_bpermute.
// n = 777.  8 results.
  v_mov_b32 v3, v2
  s_nop 1                                                               // gfx9: VALU write -> DPP read, 2 wait states
  v_mov_b32_dpp v4, v3 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf   // r0 = gid ^ 3
  v_mov_b32 v5, 1000
  v_add_u32_dpp v5, v3, v3 row_shr:1 row_mask:0xf bank_mask:0xf         // r1: (gid - 1) + gid, row lane 0 keeps 1000
  v_mov_b32_dpp v6, v3 row_mirror row_mask:0xf bank_mask:0xf            // r2: lane 15 - l of the row
  v_lshlrev_b32 v7, 2, v0
  v_xor_b32 v7, 4, v7
  ds_bpermute_b32 v8, v7, v3                                            // r3 = gid ^ 1
  ds_swizzle_b32 v9, v3 offset:0x401f                                   // r4: lane ^ 16 in each 32
  v_readlane_b32 s10, v3, 5
  v_mov_b32 v10, s10                                                    // r5 = lane 5's gid
  v_readfirstlane_b32 s11, v3
  v_mov_b32 v11, s11                                                    // r6 = lane 0's gid
  v_mov_b32 v12, v3
  v_writelane_b32 v12, s8, 7                                            // r7: lane 7 = n
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v13, v3                                                     // r8 = sum of gid over the wave
  s_mov_b32 s12, 1
.Lbfly:
  v_xor_b32 v14, s12, v0
  v_lshlrev_b32 v14, 2, v14
  ds_bpermute_b32 v15, v14, v13
  s_waitcnt lgkmcnt(0)
  v_add_u32 v13, v13, v15
  s_lshl_b32 s12, s12, 1
  s_cmp_lt_u32 s12, %W%
  s_cbranch_scc1 .Lbfly
  global_store_dword v1, v4, s[4:5]
  global_store_dword v1, v5, s[4:5] offset:4
  global_store_dword v1, v6, s[4:5] offset:8
  global_store_dword v1, v8, s[4:5] offset:12
  global_store_dword v1, v9, s[4:5] offset:16
  global_store_dword v1, v10, s[4:5] offset:20
  global_store_dword v1, v11, s[4:5] offset:24
  global_store_dword v1, v12, s[4:5] offset:28
  global_store_dword v1, v13, s[4:5] offset:32
