// gfx942 fp8 / bf8 conversions (fnuz formats: e4m3 bias 8, e5m2 bias 16,
// 0x80 is the only NaN, no infinities); gfx90a has none of these.
// in[gid]: x, y (f32).  8 results.  (The clamp form, which saturates, is
// not accepted by tileasm's assembler: the table marks the op NOMODS.)
  v_lshlrev_b32 v3, 3, v2
  global_load_dwordx2 v[4:5], v3, s[6:7]
  s_waitcnt vmcnt(0)
  v_mov_b32 v6, 0
  v_cvt_pk_fp8_f32 v6, v4, v5            // r0 = fp8(x) | fp8(y) << 8
  v_mov_b32 v7, 0
  v_cvt_pk_bf8_f32 v7, v4, v5            // r1 = bf8(x) | bf8(y) << 8
  v_cvt_pk_f32_fp8 v[8:9], v6            // r2, r3 = back to f32
  v_cvt_pk_f32_bf8 v[10:11], v7          // r4, r5
  v_cvt_f32_fp8 v12, v6                  // r6 = f32(byte 0)
  v_cvt_f32_bf8 v13, v7                  // r7 = f32(bf8 byte 0)
  global_store_dwordx4 v1, v[6:9], s[4:5]
  global_store_dwordx4 v1, v[10:13], s[4:5] offset:16
