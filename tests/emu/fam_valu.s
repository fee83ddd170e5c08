// VALU f32 / i32 / u32 arithmetic, VOP3 source modifiers, carry chains.
// in[gid]: x (f32), y (f32), i (u32), j (u32).  16 results.
  v_lshlrev_b32 v3, 4, v2
  global_load_dwordx4 v[4:7], v3, s[6:7]
  s_waitcnt vmcnt(0)
  v_add_f32 v8, v4, v5                     // r0 = x + y
  v_mul_f32 v9, v4, v5                     // r1 = x * y
  v_fma_f32 v10, v4, v5, 1.0               // r2 = fma(x, y, 1)
  v_max_f32 v11, v4, v5                    // r3
  v_add_f32 v12, -v4, |v5|                 // r4 = -x + |y|
  v_mul_lo_u32 v13, v6, v7                 // r5
  v_mul_hi_u32 v14, v6, v7                 // r6
  v_add_co_u32 v15, %VCC%, v6, v7          // r7 = i + j, carry -> vcc
  v_addc_co_u32 v16, %VCC%, 0, v7, %VCC%   // r8 = j + carry
  v_sub_co_u32 v17, %VCC%, v6, v7          // r9 = i - j, borrow -> vcc
  v_subb_co_u32 v18, %VCC%, v7, v6, %VCC%  // r10 = j - i - borrow, borrow -> vcc
  v_cndmask_b32_e64 v19, 0, 1, %VCC%         // r11 = that borrow
  v_ashrrev_i32 v20, 3, v6                 // r12 = (int)i >> 3
  v_bfe_u32 v21, v6, 4, 8                  // r13 = (i >> 4) & 0xff
  v_min_i32 v22, v6, v7                    // r14
  v_cmp_gt_u32 %VCC%, v6, v7
  v_cndmask_b32 v23, v7, v6, %VCC%         // r15 = max_u(i, j)
  global_store_dwordx4 v1, v[8:11], s[4:5]
  global_store_dwordx4 v1, v[12:15], s[4:5] offset:16
  global_store_dwordx4 v1, v[16:19], s[4:5] offset:32
  global_store_dwordx4 v1, v[20:23], s[4:5] offset:48
