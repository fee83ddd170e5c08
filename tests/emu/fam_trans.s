// Transcendentals: v_exp_f32 / v_log_f32 (base 2), v_rcp_f32, v_rsq_f32,
// v_sqrt_f32, v_sin_f32 / v_cos_f32 (argument in revolutions).
// in[gid]: x > 0 (f32).  8 results.
  v_lshlrev_b32 v3, 2, v2
  global_load_dword v4, v3, s[6:7]
  s_waitcnt vmcnt(0)
  v_exp_f32 v8, v4                   // r0 = 2^x
  v_log_f32 v9, v4                   // r1 = log2(x)
  v_rcp_f32 v10, v4                  // r2 = 1/x
  v_rsq_f32 v11, v4                  // r3 = 1/sqrt(x)
  v_sqrt_f32 v12, v4                 // r4 = sqrt(x)
  v_exp_f32 v13, -v4                 // r5 = 2^-x
  v_fract_f32 v5, v4
  v_sin_f32 v14, v5                  // r6 = sin(2 pi fract(x))
  v_cos_f32 v15, v5                  // r7 = cos(2 pi fract(x))
  global_store_dwordx4 v1, v[8:11], s[4:5]
  global_store_dwordx4 v1, v[12:15], s[4:5] offset:16
