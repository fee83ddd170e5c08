// LDS across the waves of a workgroup: ds_write / s_barrier / ds_read of a
// slot another wave wrote, ds_read2, DS atomics (ds_add_rtn_u32 counter,
// ds_max_u32).  n = block * 4 - 1 (LDS index mask); LDS: block + 2 dwords.
// 6 results.
  v_lshlrev_b32 v3, 2, v0
  ds_write_b32 v3, v2                    // LDS[lid] = gid
  v_mov_b32 v7, 0
  s_add_u32 s10, s8, 1                   // counter at LDS[block], max at LDS[block + 1]
  v_mov_b32 v9, s10
  v_cmp_eq_u32 %VCC%, 0, v0
  s_and_saveexec_b%W% %M12%, %VCC%
  ds_write_b32 v9, v7
  ds_write_b32 v9, v7 offset:4
  s_mov_b%W% %EXEC%, %M12%
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_add_u32 v5, 0x100, v3
  v_and_b32 v5, s8, v5
  ds_read_b32 v6, v5                     // r0 = LDS[(lid + 64) mod block]
  v_mov_b32 v10, 1
  ds_add_rtn_u32 v11, v9, v10            // r1 = old counter: a permutation of 0 .. block-1
  ds_max_u32 v9, v2 offset:4
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v12, v9                    // r2 = block
  ds_read_b32 v13, v9 offset:4           // r3 = largest gid of the workgroup
  ds_read2_b32 v[14:15], v3 offset1:1    // r4, r5 = LDS[lid], LDS[lid + 1]
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v6, s[4:5]
  global_store_dword v1, v11, s[4:5] offset:4
  global_store_dword v1, v12, s[4:5] offset:8
  global_store_dword v1, v13, s[4:5] offset:12
  global_store_dword v1, v14, s[4:5] offset:16
  global_store_dword v1, v15, s[4:5] offset:20
