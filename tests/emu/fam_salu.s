// SALU: arithmetic with carries, shifts, bit fields, compares with
// s_cselect and s_cbranch, a counted loop, exec manipulation.
// in: a, b, c, d (u32).  Each work-item stores the same 16 scalars.
  s_load_dwordx4 s[12:15], s[6:7], 0x0
  s_waitcnt lgkmcnt(0)
  s_add_u32 s16, s12, s13            // r0 = a + b (carry out in scc)
  s_addc_u32 s17, s14, s15           // r1 = c + d + carry
  s_sub_i32 s18, s12, s13            // r2 = a - b
  s_lshl_b32 s19, s12, 5             // r3 = a << 5
  s_ashr_i32 s20, s13, 3             // r4 = (int)b >> 3
  s_lshr_b64 s[22:23], s[12:13], 40  // r6:r7 = (b:a) >> 40
  s_mov_b32 s21, s22                 // r5 = r6
  s_mul_i32 s24, s12, s14            // r8 = a * c
  s_bfe_u32 s25, s12, 0x80004        // r9 = (a >> 4) & 0xff
  s_cmp_lt_i32 s13, s12              // scc = (int)b < (int)a
  s_cselect_b32 s26, 11, 22          // r10
  s_cmp_eq_u32 s12, s13
  s_cbranch_scc1 .Lskip              // a != b: not taken
  s_mov_b32 s27, 7                   // r11 = 7
  s_cbranch_scc0 .Ljoin
.Lskip:
  s_mov_b32 s27, 9
.Ljoin:
  s_and_b32 s28, s12, 15             // loop: r12 = sum of 1 .. (a & 15)
  s_mov_b32 s29, 0
.Lloop:
  s_add_u32 s29, s29, s28
  s_sub_u32 s28, s28, 1
  s_cmp_lg_u32 s28, 0
  s_cbranch_scc1 .Lloop
  s_mov_b32 s28, s29
  s_mov_b%W% %M30%, %EXEC%            // exec: save, narrow to lanes 0-3, count, restore
  s_mov_b%W% %EXEC%, 15
  s_bcnt1_i32_b%W% s32, %EXEC%        // 4
  s_mov_b%W% %EXEC%, %M30%
  s_bcnt1_i32_b%W% s29, %EXEC%        // r13 = lanes of this wave
  s_add_u32 s30, s32, 0              // r14 = 4
  s_max_u32 s31, s12, s13            // r15 = max_u(a, b)
  v_mov_b32 v4, s16
  v_mov_b32 v5, s17
  v_mov_b32 v6, s18
  v_mov_b32 v7, s19
  global_store_dwordx4 v1, v[4:7], s[4:5]
  v_mov_b32 v4, s20
  v_mov_b32 v5, s21
  v_mov_b32 v6, s22
  v_mov_b32 v7, s23
  global_store_dwordx4 v1, v[4:7], s[4:5] offset:16
  v_mov_b32 v4, s24
  v_mov_b32 v5, s25
  v_mov_b32 v6, s26
  v_mov_b32 v7, s27
  global_store_dwordx4 v1, v[4:7], s[4:5] offset:32
  v_mov_b32 v4, s28
  v_mov_b32 v5, s29
  v_mov_b32 v6, s30
  v_mov_b32 v7, s31
  global_store_dwordx4 v1, v[4:7], s[4:5] offset:48
