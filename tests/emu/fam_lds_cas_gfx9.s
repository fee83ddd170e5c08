// LDS compare-and-swap (ds_cmpst_*; gfx9 order: data0 = compare, data1 = new).
// LDS bytes: 0 b32 slot (0), 8 b64 slot (0), 16 add counter (0), 20 b32 slot (5),
// 24 b64 slot (5, 0); lid 0 writes them before a barrier.  10 results:
// r0 ds_cmpst_rtn_b32 [0] 0 -> lid+1 old; r1 r2 ds_cmpst_rtn_b64 [8] 0 -> (lid+1, lid+1000) old;
// r3 the counter after every lane added lid+1 in a load / add / cmpst_rtn loop; r4 that
// lane's trips round the loop; r5 [20] after ds_cmpst_b32 5 -> 77 by lid 3 only (the others
// compare with lid + 2); r6 r7 [24] after ds_cmpst_b64 (5, lid-3) -> (lid+100, 7); r8 r9 [8].
  v_mov_b32 v3, 0
  v_cmp_eq_u32 vcc, 0, v0
  s_and_saveexec_b64 s[12:13], vcc
  v_mov_b32 v4, 0
  v_mov_b32 v5, 5
  v_mov_b32 v6, 0
  v_mov_b32 v7, 0
  v_mov_b32 v8, 5
  v_mov_b32 v9, 0
  ds_write_b64 v3, v[6:7]
  ds_write_b64 v3, v[6:7] offset:8
  ds_write_b64 v3, v[4:5] offset:16
  ds_write_b64 v3, v[8:9] offset:24
  s_mov_b64 exec, s[12:13]
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_add_u32 v10, 1, v0
  v_mov_b32 v11, 0
  ds_cmpst_rtn_b32 v12, v3, v11, v10
  v_add_u32 v13, 0x3e8, v0
  v_mov_b32 v14, 0
  v_mov_b32 v15, 0
  v_mov_b32 v16, v10
  v_mov_b32 v17, v13
  ds_cmpst_rtn_b64 v[18:19], v3, v[14:15], v[16:17] offset:8
  ds_read_b32 v20, v3 offset:16
  v_mov_b32 v24, 0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[20:21], exec
.Lcas:
  v_add_u32 v24, 1, v24
  v_add_u32 v21, v20, v10
  ds_cmpst_rtn_b32 v23, v3, v20, v21 offset:16
  s_waitcnt lgkmcnt(0)
  v_cmp_ne_u32 vcc, v23, v20
  v_mov_b32 v20, v23
  s_and_b64 exec, exec, vcc
  s_cbranch_execnz .Lcas
  s_mov_b64 exec, s[20:21]
  v_add_u32 v25, 2, v0
  v_mov_b32 v26, 0x4d
  ds_cmpst_b32 v3, v25, v26 offset:20
  v_mov_b32 v28, 5
  v_subrev_u32 v29, 3, v0
  v_add_u32 v30, 0x64, v0
  v_mov_b32 v31, 7
  ds_cmpst_b64 v3, v[28:29], v[30:31] offset:24
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v32, v3 offset:16
  ds_read_b32 v33, v3 offset:20
  ds_read_b64 v[34:35], v3 offset:24
  ds_read_b64 v[36:37], v3 offset:8
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v12, s[4:5]
  global_store_dwordx2 v1, v[18:19], s[4:5] offset:4
  global_store_dword v1, v32, s[4:5] offset:12
  global_store_dword v1, v24, s[4:5] offset:16
  global_store_dword v1, v33, s[4:5] offset:20
  global_store_dwordx2 v1, v[34:35], s[4:5] offset:24
  global_store_dwordx2 v1, v[36:37], s[4:5] offset:32
