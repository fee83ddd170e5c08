// Global atomics on in[0] (counter) and in[2] (compare-and-swap slot), and a
// flat 64-bit compare-and-swap on in[4:5], all 0 at the start.  4 results: the
// counter's old value (a permutation of 0 .. N-1 over all work-items), the
// cmpswap's old value (0 for exactly one winner, the winner's gid + 1 for
// everyone else), the flat cmpswap_x2's old value (0:0 for one winner, the
// winner's gid + 1 : 7 for everyone else).
  v_mov_b32 v3, 0
  v_mov_b32 v4, 1
  global_atomic_add v5, v3, v4, s[6:7] %RTN%
  v_add_u32 v8, 1, v2
  v_mov_b32 v9, 0
  global_atomic_cmpswap v6, v3, v[8:9], s[6:7] offset:8 %RTN%
  s_waitcnt vmcnt(0)
  global_store_dword v1, v5, s[4:5]
  global_store_dword v1, v6, s[4:5] offset:4
  v_mov_b32 v10, s6
  v_mov_b32 v11, s7
  v_mov_b32 v12, v8
  v_mov_b32 v13, 7
  v_mov_b32 v14, 0
  v_mov_b32 v15, 0
  flat_atomic_cmpswap_x2 v[16:17], v[10:11], v[12:15] offset:16 %RTN%
  s_waitcnt vmcnt(0) lgkmcnt(0)
  global_store_dwordx2 v1, v[16:17], s[4:5] offset:8
