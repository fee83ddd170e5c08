// Global atomics on in[0] (counter) and in[2] (compare-and-swap slot),
// both 0 at the start.  2 results: the counter's old value (a permutation of
// 0 .. N-1 over all work-items) and the cmpswap's old value (0 for exactly
// one winner, the winner's gid + 1 for everyone else).
  v_mov_b32 v3, 0
  v_mov_b32 v4, 1
  global_atomic_add v5, v3, v4, s[6:7] %RTN%
  v_add_u32 v8, 1, v2
  v_mov_b32 v9, 0
  global_atomic_cmpswap v6, v3, v[8:9], s[6:7] offset:8 %RTN%
  s_waitcnt vmcnt(0)
  global_store_dword v1, v5, s[4:5]
  global_store_dword v1, v6, s[4:5] offset:4
