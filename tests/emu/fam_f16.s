// Conversions (f32 <-> f16/i32/u32, f32 -> bf16 by the integer sequence
// compilers emit), f16 VOP3 ops, packed f16 (v_pk_*) with op_sel / neg,
// v_cvt_pkrtz_f16_f32, v_dot2_f32_f16.
// in[gid]: x (f32), y (f32), h = a | b << 16 (f16 pair), i (i32).  16 results.
  v_lshlrev_b32 v3, 4, v2
  global_load_dwordx4 v[4:7], v3, s[6:7]
  s_waitcnt vmcnt(0)
  v_mov_b32 v8, 0
  v_cvt_f16_f32 v8, v4                  // r0 = f16(x)
  v_cvt_f32_f16 v9, v6                  // r1 = f32(a)
  v_cvt_f32_i32 v10, v7                 // r2 = f32(i)
  v_cvt_i32_f32 v11, v4                 // r3 = (int)x
  v_cvt_u32_f32 v12, v5                 // r4 = (unsigned)y, negative -> 0
  v_cvt_f32_u32 v13, v7                 // r5 = f32((unsigned)i)
  v_mov_b32 v14, 0
  v_add_f16 v14, v6, v6                 // r6 = a + a
  v_mov_b32 v15, 0
  v_fma_f16 v15, v6, v6, v6             // r7 = fma(a, a, a)
  v_pk_add_f16 v16, v6, v6              // r8 = (a + a, b + b)
  v_pk_mul_f16 v17, v6, v6 op_sel:[1,0] op_sel_hi:[0,1]  // r9 = (b * a, a * b)
  v_pk_fma_f16 v18, v6, v6, v6 neg_lo:[1,0,0]            // r10 = (-a * a + a, b * b + b)
  v_cvt_pkrtz_f16_f32 v19, v4, v5       // r11 = (rtz(x), rtz(y))
  v_dot2_f32_f16 v20, v6, v6, v4        // r12 = a*a + b*b + x
  s_movk_i32 s10, 0x7fff                // r13 = bf16(x), round to nearest even
  v_bfe_u32 v21, v4, 16, 1
  v_add3_u32 v21, v4, v21, s10
  v_lshrrev_b32 v21, 16, v21
  v_lshlrev_b32 v22, 16, v21
  v_mul_f32 v22, v22, v5                // r14 = f32(bf16(x)) * y
  v_pk_max_f16 v23, v6, v6 neg_lo:[0,1] neg_hi:[0,1]     // r15 = (|a|, |b|)
  global_store_dwordx4 v1, v[8:11], s[4:5]
  global_store_dwordx4 v1, v[12:15], s[4:5] offset:16
  global_store_dwordx4 v1, v[16:19], s[4:5] offset:32
  global_store_dwordx4 v1, v[20:23], s[4:5] offset:48
