/* test_snippets.c — one small kernel per statement kind and semantic rule
 * of the interpreter, with hand-computed expected values. */
#include "harness.h"

static Module *snip(const char *text) { return h_load("snip.tile", text, NULL, 0); }

static void f32s_eq(const float *got, const float *want, int n, const char *what)
{
	for (int i = 0; i < n; i++) {
		bool ok = isnan(want[i]) ? isnan(got[i]) : got[i] == want[i];
		cr_assert(ok, "%s[%d] = %g, expected %g", what, i, got[i], want[i]);
	}
}

Test(snippets, copy_out_of_bounds_tails)
{
	Module *m = snip("kernel k(A: f32[N], B: f32[8], C: f32[8], D: f32[3, 5], E: f32[4, 4])\n"
	                 "    grid(1) threads(32) {\n"
	                 "  T = shared f32[8]\n"
	                 "  copy(A[5], T)\n"    /* A[5..8], then zeros */
	                 "  copy(T, B)\n"
	                 "  copy(A[-2], T)\n"   /* zeros, then A[0..5] */
	                 "  copy(T, C)\n"
	                 "  U = fragment f32[4, 4]\n"
	                 "  copy(D[1, 2], U)\n" /* D[1..2][2..4], zeros elsewhere */
	                 "  copy(U, E)\n"
	                 "  V = fragment f32[4]\n"
	                 "  fill(V, 7.0)\n"
	                 "  copy(V, A[6])\n"    /* writes A[6..8] only */
	                 "  copy(V, A[-3])\n"   /* writes A[0] only */
	                 "}\n");
	float A[9], B[8], C[8], D[15], E[16];
	for (int i = 0; i < 9; i++)
		A[i] = (float)(i + 1);
	for (int i = 0; i < 15; i++)
		D[i] = (float)(100 + i);
	memset(B, 0xff, sizeof B), memset(C, 0xff, sizeof C), memset(E, 0xff, sizeof E);
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "B", B, sizeof B);
	h_tensor(&a, "C", C, sizeof C);
	h_tensor(&a, "D", D, sizeof D);
	h_tensor(&a, "E", E, sizeof E);
	h_int(&a, "N", 9);
	h_run(&a, NULL);
	f32s_eq(B, (float[]){6, 7, 8, 9, 0, 0, 0, 0}, 8, "B");
	f32s_eq(C, (float[]){0, 0, 1, 2, 3, 4, 5, 6}, 8, "C");
	f32s_eq(E, (float[]){107, 108, 109, 0, 112, 113, 114, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 16, "E");
	f32s_eq(A, (float[]){7, 2, 3, 4, 5, 6, 7, 7, 7}, 9, "A");
	ir_module_free(m);
}

/* Rank-reducing and region copies: leading indices fixed, ranges, ':',
 * size-1 dims dropped, global bounds on every index (fixed ones too). */
Test(snippets, copy_rank_reducing_regions)
{
	Module *m = snip("kernel k(A: f32[2, 3, 4], R: f32[6, 4], B: f32[2, 2, 4])\n"
	                 "    grid(1) threads(32) {\n"
	                 "  T = shared f32[4]\n"
	                 "  copy(A[1, 2, 0], T)\n"             /* A[1][2][*]: 20..23 */
	                 "  copy(T, R[0, 0])\n"
	                 "  S = fragment f32[3]\n"
	                 "  copy(A[1, 0 : 3, 2], S)\n"         /* a column: 14, 18, 22 */
	                 "  copy(S, R[1, 0 : 3])\n"
	                 "  U = shared f32[2, 4]\n"
	                 "  copy(A[0, 1 : 3, 1 : 5], U)\n"     /* ragged: column 4 is outside A */
	                 "  copy(U, R[2, 0])\n"
	                 "  copy(U, B[1, 0, 0])\n"
	                 "  X = shared f32[1, 4]\n"
	                 "  copy(A[1, 1, :], X)\n"             /* [4] into [1, 4] */
	                 "  copy(X, R[4, 0 : 4])\n"            /* [1, 4] into [4] */
	                 "  copy(A[2, 0, 0], T)\n"             /* fixed index outside A: zeros */
	                 "  copy(T, R[5, 0])\n"
	                 "  copy(T[1 : 3], B[0, 1, 1 : 3])\n"  /* both sides ranged */
	                 "}\n");
	float A[24], R[24], B[16], nan = NAN;
	for (int i = 0; i < 24; i++)
		A[i] = (float)i;
	for (int i = 0; i < 24; i++)
		R[i] = nan;
	for (int i = 0; i < 16; i++)
		B[i] = -1;
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "R", R, sizeof R);
	h_tensor(&a, "B", B, sizeof B);
	h_run(&a, NULL);
	f32s_eq(R, (float[]){20, 21, 22, 23, 14, 18, 22, nan, 5, 6, 7, 0, 9, 10, 11, 0, 16, 17, 18, 19, 0, 0, 0, 0},
	        24, "R");
	f32s_eq(B, (float[]){-1, -1, -1, -1, -1, 0, 0, -1, 5, 6, 7, 0, 9, 10, 11, 0}, 16, "B");
	ir_module_free(m);
}

/* atomic_max / atomic_min (element and tile forms, floats ignore NaN like
 * max/min) and atomics into shared memory. */
Test(snippets, atomic_max_min_shared)
{
	Module *m = snip("kernel k(G: f32[4], I: i32[4], R: i32[4])\n"
	                 "    grid(1) threads(32) {\n"
	                 "  T = fragment f32[4]\n"
	                 "  T[0] = 5.0\n  T[1] = -1.0\n  T[2] = nan\n  T[3] = 2.0\n"
	                 "  atomic_max(G, T)\n"
	                 "  atomic_min(I[1], -7)\n"
	                 "  S = shared i32[4]\n"
	                 "  fill(S, 10)\n"
	                 "  parallel (i) in (8) {\n"
	                 "    atomic_add(S[i % 4], i)\n"
	                 "    atomic_max(I[i % 4], i * 3)\n"
	                 "  }\n"
	                 "  copy(S, R)\n"
	                 "}\n");
	float G[4] = {1, 0, 3, NAN};
	int32_t I[4] = {100, 0, -50, 4}, R[4];
	Args a = {.m = m};
	h_tensor(&a, "G", G, sizeof G);
	h_tensor(&a, "I", I, sizeof I);
	h_tensor(&a, "R", R, sizeof R);
	h_run(&a, NULL);
	f32s_eq(G, (float[]){5, 0, 3, 2}, 4, "G");
	/* I[1]: min(0, -7) = -7, then max with 3 and 15; I[2]: max(-50, 6, 18) */
	int32_t wi[4] = {100, 15, 18, 21}, wr[4] = {14, 16, 18, 20};
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(I[i], wi[i], "I[%d] = %d, expected %d", i, I[i], wi[i]);
		cr_assert_eq(R[i], wr[i], "R[%d] = %d, expected %d", i, R[i], wr[i]);
	}
	ir_module_free(m);
}

Test(snippets, copy_converts_dtypes)
{
	Module *m = snip("kernel k(A: f32[6], H: f16[6], I: i8[6], P: fp8e4m3[6], Back: f32[6])\n"
	                 "    grid(1) threads(32) {\n"
	                 "  T = shared f32[6]\n"
	                 "  copy(A, T)\n"
	                 "  copy(T, H)\n"
	                 "  copy(T, I)\n"
	                 "  copy(T, P)\n"
	                 "  S = shared f16[6]\n"
	                 "  copy(H, S)\n"
	                 "  copy(S, Back)\n"
	                 "}\n");
	float A[6] = {1 + 0x1p-11f, 1 + 0x3p-11f, 70000, -3.7f, 300, NAN}, Back[6];
	uint16_t H[6];
	int8_t I[6];
	uint8_t P[6];
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "H", H, sizeof H);
	h_tensor(&a, "I", I, sizeof I);
	h_tensor(&a, "P", P, sizeof P);
	h_tensor(&a, "Back", Back, sizeof Back);
	h_run(&a, NULL);
	/* f16: ties to even, overflow to inf */
	cr_assert_eq(H[0], 0x3c00);
	cr_assert_eq(H[1], 0x3c02);
	cr_assert_eq(H[2], 0x7c00);
	cr_assert_eq(H[3], 0xc366); /* -3.69921875 */
	cr_assert_eq(H[4], 0x5cb0);
	cr_assert_eq(H[5] & 0x7e00, 0x7e00);
	/* i8: truncate toward zero, saturate, NaN -> 0 */
	int8_t wi[6] = {1, 1, 127, -3, 127, 0};
	for (int i = 0; i < 6; i++)
		cr_assert_eq(I[i], wi[i], "I[%d] = %d", i, I[i]);
	/* fp8 e4m3: satfinite */
	uint8_t wp[6] = {0x38, 0x38, 0x7e, 0xc7 /* -3.75 */, 0x79 /* 288 */, 0x7f};
	for (int i = 0; i < 6; i++)
		cr_assert_eq(P[i], wp[i], "P[%d] = %02x", i, P[i]);
	f32s_eq(Back, (float[]){1, 1 + 0x1p-9f, INFINITY, -3.69921875f, 300, NAN}, 6, "Back");
	ir_module_free(m);
}

Test(snippets, reduce_dims_and_clear)
{
	Module *m = snip("kernel k(X: f32[3, 4], R0: f32[4], R1: f32[3], Mx: f32[3], Mn: f32[4], As: f32[3],\n"
	                 "         Am: f32[3], One: f32[1], Acc: f32[3]) grid(1) threads(32) {\n"
	                 "  X_s = shared f32[3, 4]\n"
	                 "  copy(X, X_s)\n"
	                 "  r0 = fragment f32[4]\n"
	                 "  reduce_sum(X_s, r0, dim=0)\n"
	                 "  copy(r0, R0)\n"
	                 "  r1 = fragment f32[3]\n"
	                 "  reduce_sum(X_s, r1)\n"
	                 "  copy(r1, R1)\n"
	                 "  fill(r1, 5.0)\n"
	                 "  reduce_max(X_s, r1, dim=1, clear=false)\n"
	                 "  copy(r1, Mx)\n"
	                 "  reduce_min(X_s, r0, dim=0)\n"
	                 "  copy(r0, Mn)\n"
	                 "  reduce_abssum(X_s, r1)\n"
	                 "  copy(r1, As)\n"
	                 "  reduce_absmax(X_s, r1)\n"
	                 "  copy(r1, Am)\n"
	                 "  one = fragment f32[1]\n"
	                 "  copy(R0, r0)\n"
	                 "  reduce_sum(r0, one)\n"
	                 "  copy(one, One)\n"
	                 "  fill(r1, 100.0)\n"
	                 "  reduce_sum(X_s, r1, clear=false)\n"
	                 "  copy(r1, Acc)\n"
	                 "}\n");
	float X[12] = {1, -2, 3, -4, 5, 6, -7, 8, -9, 10, 11, -12};
	float R0[4], R1[3], Mx[3], Mn[4], As[3], Am[3], One[1], Acc[3];
	Args a = {.m = m};
	h_tensor(&a, "X", X, sizeof X);
	h_tensor(&a, "R0", R0, sizeof R0);
	h_tensor(&a, "R1", R1, sizeof R1);
	h_tensor(&a, "Mx", Mx, sizeof Mx);
	h_tensor(&a, "Mn", Mn, sizeof Mn);
	h_tensor(&a, "As", As, sizeof As);
	h_tensor(&a, "Am", Am, sizeof Am);
	h_tensor(&a, "One", One, sizeof One);
	h_tensor(&a, "Acc", Acc, sizeof Acc);
	h_run(&a, NULL);
	f32s_eq(R0, (float[]){-3, 14, 7, -8}, 4, "R0");
	f32s_eq(R1, (float[]){-2, 12, 0}, 3, "R1");
	f32s_eq(Mx, (float[]){5, 8, 11}, 3, "Mx");
	f32s_eq(Mn, (float[]){-9, -2, -7, -12}, 4, "Mn");
	f32s_eq(As, (float[]){10, 26, 42}, 3, "As");
	f32s_eq(Am, (float[]){4, 8, 12}, 3, "Am");
	f32s_eq(One, (float[]){10}, 1, "One");
	f32s_eq(Acc, (float[]){98, 112, 100}, 3, "Acc");
	ir_module_free(m);
}

Test(snippets, reduce_accumulates_in_f32_and_rounds_once)
{
	/* Floats accumulate in f32 and round once into dst (issue 18.2):
	 * 2048 + 1 + 1 is 2050 in f16 (an f16 running sum stays at 2048),
	 * 256 + 1 + 1 is 258 in bf16 (not 256), forty ones are 40 in fp8e4m3
	 * (not 16, where 16 + 1 rounds back), and clear=false adds the old
	 * value in f32 too (40 + 40 = 80). */
	Module *m = snip("kernel k(X: f16[3], Y: f32[3], Z: f32[40], H: f16[1], F: f32[1], B: bf16[1],\n"
	                 "         E: fp8e4m3[1], E2: fp8e4m3[1]) grid(1) threads(32) {\n"
	                 "  X_s = shared f16[3]\n"
	                 "  Y_s = shared f32[3]\n"
	                 "  Z_s = shared f32[40]\n"
	                 "  copy(X, X_s)\n"
	                 "  copy(Y, Y_s)\n"
	                 "  copy(Z, Z_s)\n"
	                 "  h = fragment f16[1]\n"
	                 "  f = fragment f32[1]\n"
	                 "  b = fragment bf16[1]\n"
	                 "  e = fragment fp8e4m3[1]\n"
	                 "  reduce_sum(X_s, h)\n"
	                 "  reduce_sum(X_s, f)\n"
	                 "  reduce_sum(Y_s, b)\n"
	                 "  reduce_sum(Z_s, e)\n"
	                 "  copy(h, H)\n"
	                 "  copy(f, F)\n"
	                 "  copy(b, B)\n"
	                 "  copy(e, E)\n"
	                 "  reduce_sum(Z_s, e, clear=false)\n"
	                 "  copy(e, E2)\n"
	                 "}\n");
	uint16_t X[3] = {dt_f16_from_double(2048), dt_f16_from_double(1), dt_f16_from_double(1)}, H[1], B[1];
	float Y[3] = {256, 1, 1}, Z[40], F[1];
	uint8_t E[1], E2[1];
	for (int i = 0; i < 40; i++)
		Z[i] = 1;
	Args a = {.m = m};
	h_tensor(&a, "X", X, sizeof X);
	h_tensor(&a, "Y", Y, sizeof Y);
	h_tensor(&a, "Z", Z, sizeof Z);
	h_tensor(&a, "H", H, sizeof H);
	h_tensor(&a, "F", F, sizeof F);
	h_tensor(&a, "B", B, sizeof B);
	h_tensor(&a, "E", E, sizeof E);
	h_tensor(&a, "E2", E2, sizeof E2);
	h_run(&a, NULL);
	cr_assert_eq(dt_f16_to_double(H[0]), 2050.0);
	cr_assert_eq(F[0], 2050.0f);
	cr_assert_eq(dt_bf16_to_double(B[0]), 258.0);
	cr_assert_eq(dt_to_double(DT_FP8E4M3, E), 40.0);
	cr_assert_eq(dt_to_double(DT_FP8E4M3, E2), 80.0);
	ir_module_free(m);
}

Test(snippets, cumsum_forward_reverse_inplace)
{
	Module *m = snip("kernel k(X: f32[2, 4], F: f32[2, 4], R: f32[2, 4], C0: f32[2, 4]) grid(1) threads(32) {\n"
	                 "  X_s = shared f32[2, 4]\n"
	                 "  copy(X, X_s)\n"
	                 "  c = fragment f32[2, 4]\n"
	                 "  cumsum(X_s, c)\n"
	                 "  copy(c, F)\n"
	                 "  cumsum(X_s, c, reverse=true)\n"
	                 "  copy(c, R)\n"
	                 "  cumsum(X_s, X_s, dim=0)\n"
	                 "  copy(X_s, C0)\n"
	                 "}\n");
	float X[8] = {1, 2, 3, 4, 10, 20, 30, 40}, F[8], R[8], C0[8];
	Args a = {.m = m};
	h_tensor(&a, "X", X, sizeof X);
	h_tensor(&a, "F", F, sizeof F);
	h_tensor(&a, "R", R, sizeof R);
	h_tensor(&a, "C0", C0, sizeof C0);
	h_run(&a, NULL);
	f32s_eq(F, (float[]){1, 3, 6, 10, 10, 30, 60, 100}, 8, "F");
	f32s_eq(R, (float[]){10, 9, 7, 4, 100, 90, 70, 40}, 8, "R");
	f32s_eq(C0, (float[]){1, 2, 3, 4, 11, 22, 33, 44}, 8, "C0");
	ir_module_free(m);
}

Test(snippets, atomic_add_tile_and_element)
{
	Module *m = snip("kernel k(G: f32[N], H: f32[3], Hi: i32[2]) grid(2) threads(32) {\n"
	                 "  T = fragment f32[4]\n"
	                 "  fill(T, 1.5)\n"
	                 "  atomic_add(G[bx * 4 + 3], T)\n" /* block 1's tile ends past N */
	                 "  parallel (i) in (10) {\n"
	                 "    atomic_add(H[i % 3], 1.0)\n"
	                 "    atomic_add(Hi[i % 2], i)\n"
	                 "  }\n"
	                 "}\n");
	float G[9] = {0}, H[3] = {0.5f, 0, 0};
	int32_t Hi[2] = {100, 0};
	Args a = {.m = m};
	h_tensor(&a, "G", G, sizeof G);
	h_tensor(&a, "H", H, sizeof H);
	h_tensor(&a, "Hi", Hi, sizeof Hi);
	h_int(&a, "N", 9);
	h_run(&a, NULL);
	f32s_eq(G, (float[]){0, 0, 0, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f}, 9, "G");
	f32s_eq(H, (float[]){8.5f, 6, 6}, 3, "H");
	cr_assert_eq(Hi[0], 100 + 2 * (0 + 2 + 4 + 6 + 8));
	cr_assert_eq(Hi[1], 2 * (1 + 3 + 5 + 7 + 9));
	ir_module_free(m);
}

Test(snippets, local_private_copies)
{
	Module *m = snip("kernel k(Out: f32[8]) grid(1) threads(4) {\n"
	                 "  acc = local f32[1]\n"
	                 "  acc[0] = 10.0\n"
	                 "  parallel (i) in (4) {\n"
	                 "    acc[0] = acc[0] + f32(i)\n" /* each iteration starts from 10 */
	                 "    Out[i] = acc[0]\n"
	                 "  }\n"
	                 "  Out[4] = acc[0]\n"              /* block-level value unchanged */
	                 "  if tx == 1 {\n"
	                 "    acc[0] = acc[0] * 2.0\n"
	                 "    Out[5] = acc[0]\n"
	                 "  }\n"
	                 "  Out[6] = acc[0]\n"
	                 "  acc[0] = 3.0\n"
	                 "  Out[7] = acc[0]\n"
	                 "}\n");
	float Out[8];
	memset(Out, 0xff, sizeof Out);
	Args a = {.m = m};
	h_tensor(&a, "Out", Out, sizeof Out);
	h_run(&a, NULL);
	f32s_eq(Out, (float[]){10, 11, 12, 13, 10, 20, 10, 3}, 8, "Out");
	ir_module_free(m);
}

Test(snippets, per_thread_if)
{
	Module *m = snip("kernel k(Cnt: i32[2], T: i32[6]) grid(1) threads(5) {\n"
	                 "  if tx < 2 {\n"
	                 "    atomic_add(Cnt[0], 1)\n"
	                 "  } else {\n"
	                 "    atomic_add(Cnt[1], 1)\n"
	                 "    T[tx] = tx * 10\n"
	                 "  }\n"
	                 "  if tx == 0 {\n"
	                 "    T[0] = T[0] + 1\n" /* runs once, not once per thread */
	                 "  } else if tx == 1 {\n"
	                 "    T[1] = T[1] + 7\n"
	                 "  }\n"
	                 "  T[5] = T[5] + 1\n" /* block level: once */
	                 "}\n");
	int32_t Cnt[2] = {0}, T[6] = {0};
	Args a = {.m = m};
	h_tensor(&a, "Cnt", Cnt, sizeof Cnt);
	h_tensor(&a, "T", T, sizeof T);
	h_run(&a, NULL);
	cr_assert_eq(Cnt[0], 2);
	cr_assert_eq(Cnt[1], 3);
	int32_t want[6] = {1, 7, 20, 30, 40, 1};
	for (int i = 0; i < 6; i++)
		cr_assert_eq(T[i], want[i], "T[%d] = %d", i, T[i]);
	ir_module_free(m);
}

static int64_t py_floordiv(int64_t a, int64_t b)
{
	double q = floor((double)a / (double)b);
	return (int64_t)q;
}

Test(snippets, floor_division_and_modulo)
{
	Module *m = snip("kernel k(a: i32, b: i32, Out: i32[4]) grid(1) threads(32) {\n"
	                 "  Out[0] = a // b\n"
	                 "  Out[1] = a % b\n"
	                 "  Out[2] = ceildiv(a, b)\n"
	                 "  Out[3] = a * b + a\n"
	                 "}\n");
	static const int32_t cases[][2] = {{7, 2}, {-7, 2}, {7, -2}, {-7, -2}, {6, 3}, {-6, 3}, {0, 5},
	                                   {1, 7}, {-1, 7}, {INT32_MIN, -1}, {65536, 65536}, {INT32_MAX, 1}};
	for (size_t c = 0; c < TA_ARRAY_LEN(cases); c++) {
		int32_t x = cases[c][0], y = cases[c][1], Out[4];
		Args a = {.m = m};
		h_tensor(&a, "Out", Out, sizeof Out);
		h_int(&a, "a", x);
		h_int(&a, "b", y);
		h_run(&a, NULL);
		int64_t q = py_floordiv(x, y), r = (int64_t)x - (int64_t)y * q;
		int64_t cd = -py_floordiv(-(int64_t)x, y);
		/* Results wrap to i32 (INT32_MIN // -1 = 2^31 wraps to INT32_MIN). */
		cr_assert_eq(Out[0], (int32_t)(uint32_t)q, "%d // %d = %d", x, y, Out[0]);
		cr_assert_eq(Out[1], (int32_t)r, "%d %% %d = %d", x, y, Out[1]);
		cr_assert_eq(Out[2], (int32_t)(uint32_t)cd, "ceildiv(%d, %d) = %d", x, y, Out[2]);
		cr_assert_eq(Out[3], (int32_t)(uint32_t)((int64_t)x * y + x), "%d * %d + %d = %d", x, y, x, Out[3]);
		if (y > 0 && x >= -7 && x <= 7)
			cr_assert(Out[1] >= 0, "modulo takes the divisor's sign");
	}
	ir_module_free(m);
}

Test(snippets, arithmetic_and_casts)
{
	Module *m = snip("kernel k(x: f16, y: f32, z: f32, Oh: f16[3], Of: f32[6], Oi: i32[4], Ob: u8[2])\n"
	                 "    grid(1) threads(32) {\n"
	                 "  Oh[0] = x + 1.0\n"           /* f16 arithmetic: 2049 rounds to 2048 */
	                 "  Oh[1] = x * x\n"             /* overflows f16 to inf */
	                 "  Oh[2] = f16(y + 1.0)\n"
	                 "  Of[0] = y + 1.0\n"           /* f32: 2049 */
	                 "  Of[1] = f32(fp8e4m3(z))\n"   /* satfinite: 448 */
	                 "  Of[2] = max(nan, y)\n"       /* NaN operand: the other one */
	                 "  Of[3] = min(y, nan)\n"
	                 "  Of[4] = f32(f64(y) / 3.0)\n"
	                 "  Of[5] = f32(bf16(y + 3.0))\n" /* 2051 in bf16: 2048 */
	                 "  Oi[0] = i32(-z / 270.0)\n"    /* -3.7 truncates to -3 */
	                 "  Oi[1] = i32(z * z * z * z)\n" /* 1e12 saturates */
	                 "  Oi[2] = i32(sqrt(-z))\n"      /* NaN -> 0 */
	                 "  Oi[3] = i32(i8(z))\n"         /* 999 saturates to 127 */
	                 "  Ob[0] = u8(i32(z))\n"         /* 999 wraps to 231 */
	                 "  Ob[1] = u8(z > y)\n"
	                 "}\n");
	uint16_t Oh[3];
	float Of[6];
	int32_t Oi[4];
	uint8_t Ob[2];
	Args a = {.m = m};
	h_tensor(&a, "Oh", Oh, sizeof Oh);
	h_tensor(&a, "Of", Of, sizeof Of);
	h_tensor(&a, "Oi", Oi, sizeof Oi);
	h_tensor(&a, "Ob", Ob, sizeof Ob);
	h_float(&a, "x", 2048);
	h_float(&a, "y", 2048);
	h_float(&a, "z", 999);
	h_run(&a, NULL);
	cr_assert_eq(dt_f16_to_double(Oh[0]), 2048.0);
	cr_assert_eq(Oh[1], 0x7c00);
	cr_assert_eq(dt_f16_to_double(Oh[2]), 2048.0); /* 2049 -> even */
	cr_assert_eq(Of[0], 2049.0f);
	cr_assert_eq(Of[1], 448.0f);
	cr_assert_eq(Of[2], 2048.0f);
	cr_assert_eq(Of[3], 2048.0f);
	cr_assert_eq(Of[4], (float)(2048.0 / 3.0));
	cr_assert_eq(Of[5], 2048.0f);
	cr_assert_eq(Oi[0], -3);
	cr_assert_eq(Oi[1], INT32_MAX);
	cr_assert_eq(Oi[2], 0);
	cr_assert_eq(Oi[3], 127);
	cr_assert_eq(Ob[0], 231);
	cr_assert_eq(Ob[1], 0);
	ir_module_free(m);
}

Test(snippets, gemm_variants)
{
	/* transpose_a, clear=false accumulation, and i8 -> i32. */
	Module *m = snip("kernel k(A: f32[3, 2], B: f32[3, 2], C: f32[2, 2], Ai: i8[2, 3], Bi: i8[3, 2],\n"
	                 "         Ci: i32[2, 2]) grid(1) threads(32) {\n"
	                 "  A_s = shared f32[3, 2]\n"
	                 "  B_s = shared f32[3, 2]\n"
	                 "  C_f = fragment f32[2, 2]\n"
	                 "  copy(A, A_s)\n"
	                 "  copy(B, B_s)\n"
	                 "  fill(C_f, 100.0)\n"
	                 "  gemm(A_s, B_s, C_f, transpose_a=true)\n"
	                 "  copy(C_f, C)\n"
	                 "  Ai_s = shared i8[2, 3]\n"
	                 "  Bi_s = shared i8[3, 2]\n"
	                 "  Ci_f = fragment i32[2, 2]\n"
	                 "  copy(Ai, Ai_s)\n"
	                 "  copy(Bi, Bi_s)\n"
	                 "  gemm(Ai_s, Bi_s, Ci_f, clear=true)\n"
	                 "  gemm(Ai_s, Bi_s, Ci_f)\n"
	                 "  copy(Ci_f, Ci)\n"
	                 "}\n");
	/* A stored [K=3, M=2]; A^T = [[1, 3, 5], [2, 4, 6]]. */
	float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4];
	int8_t Ai[6] = {127, -128, 1, 2, 3, 4}, Bi[6] = {127, 1, -128, 1, 5, -1};
	int32_t Ci[4];
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "B", B, sizeof B);
	h_tensor(&a, "C", C, sizeof C);
	h_tensor(&a, "Ai", Ai, sizeof Ai);
	h_tensor(&a, "Bi", Bi, sizeof Bi);
	h_tensor(&a, "Ci", Ci, sizeof Ci);
	h_run(&a, NULL);
	f32s_eq(C, (float[]){100 + 1 + 5, 100 + 3 + 5, 100 + 2 + 6, 100 + 4 + 6}, 4, "C");
	int32_t want[4];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			int32_t s = 0;
			for (int k = 0; k < 3; k++)
				s += Ai[i * 3 + k] * Bi[k * 2 + j];
			want[i * 2 + j] = 2 * s;
		}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(Ci[i], want[i], "Ci[%d] = %d, expected %d", i, Ci[i], want[i]);
	ir_module_free(m);
}

Test(snippets, undefined_buffers_are_poisoned)
{
	Module *m = snip("kernel k(Of: f32[1], Oi: i32[1], Oh: f16[1]) grid(1) threads(32) {\n"
	                 "  U = fragment f32[2]\n"
	                 "  I = fragment i32[1]\n"
	                 "  H = shared f16[1]\n"
	                 "  Of[0] = U[1]\n"
	                 "  Oi[0] = I[0]\n"
	                 "  copy(H, Oh)\n"
	                 "}\n");
	float Of[1] = {0};
	int32_t Oi[1] = {0};
	uint16_t Oh[1] = {0};
	Args a = {.m = m};
	h_tensor(&a, "Of", Of, sizeof Of);
	h_tensor(&a, "Oi", Oi, sizeof Oi);
	h_tensor(&a, "Oh", Oh, sizeof Oh);
	h_run(&a, NULL);
	cr_assert(isnan(Of[0]));
	cr_assert_eq((uint32_t)Oi[0], 0xa5a5a5a5u);
	cr_assert(isnan(dt_f16_to_double(Oh[0])));
	ir_module_free(m);
}

Test(snippets, serial_loops_and_lets)
{
	Module *m = snip("kernel k(Out: i32[N]) grid(ceildiv(N, 4)) threads(32) {\n"
	                 "  let base = bx * 4\n"
	                 "  serial i in 0 .. 4 {\n"
	                 "    let j = base + i\n"
	                 "    if j < N {\n"
	                 "      Out[j] = j * j\n"
	                 "    }\n"
	                 "  }\n"
	                 "  unroll u in 1 .. 3 {\n"
	                 "    if base + u < N {\n"
	                 "      Out[base + u] = Out[base + u] + 1000 * u\n"
	                 "    }\n"
	                 "  }\n"
	                 "}\n");
	int32_t Out[10];
	memset(Out, 0xff, sizeof Out);
	Args a = {.m = m};
	h_tensor(&a, "Out", Out, sizeof Out);
	h_int(&a, "N", 10);
	h_run(&a, NULL);
	for (int j = 0; j < 10; j++) {
		int u = j % 4;
		cr_assert_eq(Out[j], j * j + (u >= 1 && u < 3 ? 1000 * u : 0), "Out[%d] = %d", j, Out[j]);
	}
	ir_module_free(m);
}

/* ---- runtime errors ------------------------------------------------- */

static void expect_error(const char *src, const char *where, const char *what, const char *param, int64_t v,
                         size_t nelems)
{
	Module *m = snip(src);
	float *Out = calloc(nelems, sizeof(float));
	Args a = {.m = m};
	h_tensor(&a, "Out", Out, nelems * sizeof(float));
	if (param)
		h_int(&a, param, v);
	char *text = NULL;
	cr_assert_eq(h_run(&a, &text), -1, "expected a runtime error");
	cr_assert(strstr(text, where), "diagnostic lacks '%s':\n%s", where, text);
	cr_assert(strstr(text, what), "diagnostic lacks '%s':\n%s", what, text);
	free(text);
	free(Out);
	ir_module_free(m);
}

Test(snippets, error_out_of_bounds_store)
{
	expect_error("kernel k(Out: f32[N]) grid(1) threads(32) {\n"
	             "  parallel (i) in (4) {\n"
	             "    Out[i + 2] = 1.0\n"
	             "  }\n"
	             "}\n",
	             "snip.tile:3:5: error:", "index 4 is out of bounds for dimension 0 of 'Out' (size 4)", "N", 4, 4);
}

Test(snippets, error_out_of_bounds_load)
{
	expect_error("kernel k(Out: f32[N]) grid(2) threads(32) {\n"
	             "  Out[0] = Out[bx * 3]\n"
	             "}\n",
	             "snip.tile:2:12: error:", "index 3 is out of bounds", "N", 3, 3);
}

Test(snippets, error_division_by_zero)
{
	expect_error("kernel k(Out: f32[4], b: i32) grid(1) threads(32) {\n"
	             "  let q = 7\n"
	             "  Out[0] = f32(q // b)\n"
	             "}\n",
	             "snip.tile:3:", "integer division by zero", "b", 0, 4);
	expect_error("kernel k(Out: f32[4], b: i32) grid(1) threads(32) {\n"
	             "  Out[1] = f32(5 % b)\n"
	             "}\n",
	             "snip.tile:2:", "integer division by zero", "b", 0, 4);
}

Test(snippets, error_select_evaluates_both_sides)
{
	/* select is not a guard: backends compute both operands. */
	expect_error("kernel k(Out: f32[N]) grid(1) threads(32) {\n"
	             "  let i = 5\n"
	             "  Out[0] = select(i < N, Out[i], 0.0)\n"
	             "}\n",
	             "snip.tile:3:", "out of bounds", "N", 4, 4);
}

Test(snippets, error_short_tensor_argument)
{
	Module *m = snip("kernel k(Out: f32[N]) grid(1) threads(32) {\n  Out[0] = 1.0\n}\n");
	float Out[3];
	Args a = {.m = m};
	h_tensor(&a, "Out", Out, sizeof Out);
	h_int(&a, "N", 4);
	char *text = NULL;
	cr_assert_eq(h_run(&a, &text), -1);
	cr_assert(strstr(text, "needs 16 bytes but its argument has 12"), "%s", text);
	free(text);
	ir_module_free(m);
}

Test(snippets, three_dimensional_grid)
{
	Module *m = snip("kernel k(Out: i32[12]) grid(2, 3, 2) threads(32) {\n"
	                 "  Out[bz * 6 + by * 2 + bx] = bx + 10 * by + 100 * bz\n"
	                 "}\n");
	int32_t Out[12];
	memset(Out, 0xff, sizeof Out);
	Args a = {.m = m};
	h_tensor(&a, "Out", Out, sizeof Out);
	h_run(&a, NULL);
	for (int z = 0; z < 2; z++)
		for (int y = 0; y < 3; y++)
			for (int x = 0; x < 2; x++)
				cr_assert_eq(Out[z * 6 + y * 2 + x], x + 10 * y + 100 * z);
	ir_module_free(m);
}

Test(snippets, tensor_dims_from_symbols_and_defines)
{
	Define defs[] = {{"K", 5}};
	Module *m = h_load("snip.tile",
	                   "kernel k(A: f16[M, K, 3], s: f32, B: i8[M]) grid(1) threads(32) {\n}\n", defs, 1);
	Args a = {.m = m};
	h_int(&a, "M", 7);
	int64_t dims[IR_MAX_RANK];
	int ai = h_argi(&a, "A"), bi = h_argi(&a, "B");
	cr_assert_eq(interp_tensor_dims(m, 0, a.args, ai, dims), 3);
	cr_assert_eq(dims[0], 7);
	cr_assert_eq(dims[1], 5);
	cr_assert_eq(dims[2], 3);
	cr_assert_eq(interp_tensor_elems(m, 0, a.args, ai), 105);
	cr_assert_eq(interp_tensor_elems(m, 0, a.args, bi), 7);
	cr_assert_eq(interp_tensor_dims(m, 0, a.args, h_argi(&a, "s"), dims), -1);
	h_int(&a, "M", -1);
	cr_assert_eq(interp_tensor_elems(m, 0, a.args, ai), -1);
	ir_module_free(m);
}

/* f16/bf16 arithmetic: computed in f32 and rounded back after each op.  The
 * f16 reference is GCC's _Float16 arithmetic (float evaluation, rounded on
 * assignment); bf16's is the usual round-to-nearest-even bit trick on the
 * f32 result. */
static const char *arith_kernel =
	"kernel k(A: T[N], B: T[N], Add: T[N], Sub: T[N], Mul: T[N], Div: T[N], Mn: T[N], Mx: T[N])\n"
	"    grid(ceildiv(N, 256)) threads(128) {\n"
	"  parallel (i) in (256) {\n"
	"    let j = bx * 256 + i\n"
	"    if j < N {\n"
	"      Add[j] = A[j] + B[j]\n"
	"      Sub[j] = A[j] - B[j]\n"
	"      Mul[j] = A[j] * B[j]\n"
	"      Div[j] = A[j] / B[j]\n"
	"      Mn[j] = min(A[j], B[j])\n"
	"      Mx[j] = max(A[j], B[j])\n"
	"    }\n"
	"  }\n"
	"}\n";

static uint16_t bf16_rne(float f)
{
	uint32_t u = dt_f32_bits(f);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static uint16_t f16b(_Float16 h)
{
	uint16_t u;
	memcpy(&u, &h, 2);
	return u;
}

static void run_arith16(bool bf)
{
	char text[2048], *p = text;
	for (const char *s = arith_kernel; *s; s++) { /* T -> the dtype */
		if (*s == 'T' && s[1] == '[')
			p += sprintf(p, "%s", bf ? "bf16" : "f16");
		else
			*p++ = *s;
	}
	*p = 0;
	Module *m = snip(text);
	enum { N = 20000 };
	uint16_t *buf[8];
	for (int i = 0; i < 8; i++)
		buf[i] = calloc(N, 2);
	uint64_t seed = bf ? 77 : 78;
	for (int i = 0; i < N; i++) {
		/* Random bit patterns, plus nearby exponents half of the time so
		 * additions round rather than just returning the larger operand. */
		h_rand(&seed);
		buf[0][i] = (uint16_t)(seed >> 40);
		h_rand(&seed);
		buf[1][i] = (uint16_t)(seed >> 40);
		if (i & 1)
			buf[1][i] = (uint16_t)((buf[0][i] & 0xfc00) ^ (buf[1][i] & 0x83ff));
	}
	static const char *names[] = {"A", "B", "Add", "Sub", "Mul", "Div", "Mn", "Mx"};
	Args a = {.m = m};
	for (int i = 0; i < 8; i++)
		h_tensor(&a, names[i], buf[i], N * 2);
	h_int(&a, "N", N);
	h_run(&a, NULL);
	for (int i = 0; i < N; i++) {
		double x = bf ? dt_bf16_to_double(buf[0][i]) : dt_f16_to_double(buf[0][i]);
		double y = bf ? dt_bf16_to_double(buf[1][i]) : dt_f16_to_double(buf[1][i]);
		uint16_t want[6];
		if (bf) {
			float fx = (float)x, fy = (float)y;
			want[0] = bf16_rne(fx + fy), want[1] = bf16_rne(fx - fy);
			want[2] = bf16_rne(fx * fy), want[3] = bf16_rne(fx / fy);
		} else {
			_Float16 hx = (_Float16)x, hy = (_Float16)y;
			want[0] = f16b(hx + hy), want[1] = f16b(hx - hy), want[2] = f16b(hx * hy), want[3] = f16b(hx / hy);
		}
		double lo = isnan(x) ? y : isnan(y) ? x : x < y ? x : y;
		double hi = isnan(x) ? y : isnan(y) ? x : x > y ? x : y;
		for (int o = 0; o < 6; o++) {
			uint16_t got = buf[2 + o][i];
			double g = bf ? dt_bf16_to_double(got) : dt_f16_to_double(got);
			if (o >= 4) {
				double w = o == 4 ? lo : hi;
				/* +-0 ties may pick either zero; compare values. */
				cr_assert(isnan(w) ? isnan(g) : g == w, "%s(%a, %a) = %a", names[2 + o], x, y, g);
				continue;
			}
			double w = bf ? dt_bf16_to_double(want[o]) : dt_f16_to_double(want[o]);
			cr_assert(isnan(w) ? isnan(g) : got == want[o], "%s %s(%a, %a) = %04x, expected %04x",
			          bf ? "bf16" : "f16", names[2 + o], x, y, got, want[o]);
		}
	}
	for (int i = 0; i < 8; i++)
		free(buf[i]);
	ir_module_free(m);
}

Test(snippets, f16_arithmetic_matches_float16) { run_arith16(false); }
Test(snippets, bf16_arithmetic_rounds_from_f32) { run_arith16(true); }

/* The FNUZ fp8 dtypes: casts round to nearest even and saturate, NaN is
 * 0x80, there is no -0; arithmetic rounds back after each operation; the
 * printer writes them back in the parser's spelling. */
Test(snippets, fnuz_fp8_casts_and_arithmetic)
{
	const char *src = "kernel k(A: f32[6], P: fp8e4m3fnuz[6], Q: fp8e5m2fnuz[6], R: f32[6])\n"
	                  "    grid(1) threads(32) {\n"
	                  "  parallel (i) in (6) {\n"
	                  "    P[i] = A[i]\n"
	                  "    Q[i] = fp8e5m2fnuz(A[i])\n"
	                  "    R[i] = f32(fp8e4m3fnuz(A[i]) * fp8e4m3fnuz(3.0))\n"
	                  "  }\n"
	                  "}\n";
	Module *m = snip(src);
	StrBuf sb = {0};
	ir_print(m, &sb);
	char *t1 = sb_take(&sb);
	cr_assert(strstr(t1, "P: fp8e4m3fnuz[6]") && strstr(t1, "fp8e5m2fnuz(A[i])"), "%s", t1);
	Module *m2 = snip(t1);
	ir_print(m2, &sb);
	char *t2 = sb_take(&sb);
	cr_assert_str_eq(t1, t2);
	free(t1), free(t2);
	ir_module_free(m2);
	float A[6] = {1.0625f /* tie 1|1.125 */, -0x1p-20f, 1000, -3.7f, NAN, 0x1.8p-10f}, R[6];
	uint8_t P[6], Q[6];
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "P", P, sizeof P);
	h_tensor(&a, "Q", Q, sizeof Q);
	h_tensor(&a, "R", R, sizeof R);
	h_run(&a, NULL);
	/* e4m3fnuz (bias 8): 1.0 = 0x40; 240 = 0x7f; -3.75 = 0xcf; 0x1.8p-10 ties to 2^-9 = 0x02 */
	uint8_t wp[6] = {0x40, 0x00, 0x7f, 0xcf, 0x80, 0x02};
	/* e5m2fnuz (bias 16): 1.0 = 0x40, 1.0625 -> 1.0; 1000 -> 1024 = 0x68; -3.7 -> -3.5 = 0xc7 */
	uint8_t wq[6] = {0x40, 0x00, 0x68, 0xc7, 0x80, 0x1a /* 1.5 * 2^-10: e 6, m 2 */};
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(P[i], wp[i], "P[%d] = %02x", i, P[i]);
		cr_assert_eq(Q[i], wq[i], "Q[%d] = %02x", i, Q[i]);
	}
	/* products rounded back: 1*3 = 3; 0; 240*3 -> 240; -3.75*3 = -11.25 -> -11 (ulp 1); NaN; 2^-9*3 */
	f32s_eq(R, (float[]){3, 0, 240, -11, NAN, 0x1.8p-8f}, 6, "R");
	ir_module_free(m);
}

/* interp_run_poisoned, fuzz_diff's filter of undefined programs: a defined
 * kernel gives the same C in every mode; one that reads what it never wrote
 * changes with the other fill, one that races with the reverse order (of
 * parallel iterations: iteration 7 writes what the others read, the
 * vector_add mutant that failed a CI smoke run of fuzz_diff; of blocks: both
 * write C[0..16]). */
/* Runs the kernel above around body in mode into C (32 floats); returns
 * interp_run_poisoned's status with its diagnostics in msg. */
static int run_body(const char *body, unsigned mode, float *C, char *msg, size_t len)
{
	StrBuf src = {0};
	sb_printf(&src, "kernel k(A: f32[32], B: f32[32], C: f32[32]) grid(2) threads(32) {\n"
			"  A_f = fragment f32[16]\n  B_f = fragment f32[16]\n"
			"  copy(A[bx * 16], A_f)\n  copy(B[bx * 16], B_f)\n%s}\n", body);
	Module *m = snip(src.buf);
	float A[32], B[32];
	for (int i = 0; i < 32; i++)
		A[i] = (float)i + 1, B[i] = (float)(100 + i), C[i] = 0;
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "B", B, sizeof B);
	h_tensor(&a, "C", C, 32 * sizeof *C);
	Diag d;
	diag_init(&d);
	int rc = interp_run_poisoned(m, 0, a.args, 1u << 20, mode, &d);
	snprintf(msg, len, "%s", diag_text(&d));
	diag_free(&d);
	ir_module_free(m);
	sb_free(&src);
	return rc;
}

static float *run_mode(const char *body, unsigned mode)
{
	float *C = calloc(32, sizeof *C);
	char msg[512];
	cr_assert_eq(run_body(body, mode, C, msg, sizeof msg), 0, "%s", msg);
	return C;
}

static bool same_in_mode(const char *body, unsigned mode)
{
	float *x = run_mode(body, 0), *y = run_mode(body, mode);
	bool same = !memcmp(x, y, 32 * sizeof *x);
	free(x), free(y);
	return same;
}

Test(snippets, undefined_programs_change_with_fill_or_order)
{
	const char *defined = "  parallel (i) in (16) {\n    B_f[i] = A_f[i] + B_f[i]\n  }\n  copy(B_f, C[bx * 16])\n";
	const char *unwritten = "  T = fragment f32[16]\n  parallel (i) in (16) {\n    B_f[i] = A_f[i] + T[i]\n  }\n"
				"  copy(B_f, C[bx * 16])\n";
	const char *iter_race = "  parallel (i) in (16) {\n    B_f[i] = A_f[i] + B_f[7]\n  }\n  copy(B_f, C[bx * 16])\n";
	const char *block_race = "  copy(A_f, C[0])\n";
	cr_expect(same_in_mode(defined, INTERP_POISON_ALT | INTERP_REVERSE));
	cr_expect(!same_in_mode(unwritten, INTERP_POISON_ALT));
	cr_expect(same_in_mode(iter_race, INTERP_POISON_ALT), "B_f is written before it is read");
	cr_expect(!same_in_mode(iter_race, INTERP_REVERSE));
	cr_expect(same_in_mode(block_race, INTERP_POISON_ALT));
	cr_expect(!same_in_mode(block_race, INTERP_REVERSE));
}

/* INTERP_RACES: the fuzz_diff find on gfx90a (tests/fuzz/regress/diff/store_all_lockstep_race.tile):
 * every iteration stores X[1] = 0 while iteration 1 updates X[1]; forward and
 * reverse order both end with 0 (the last store is another iteration's), a
 * GPU in lockstep does not, so only the race log can tell.  A program whose
 * iterations store the same value to one element, or touch only their own,
 * is not flagged. */
static bool races_in(const char *body, char *msg, size_t len)
{
	float C[32];
	cr_assert_eq(run_body(body, 0, C, msg, len), 0, "%s", msg);
	return run_body(body, INTERP_POISON_ALT | INTERP_REVERSE | INTERP_RACES, C, msg, len) != 0;
}

Test(snippets, races_that_both_orders_hide_are_flagged)
{
	char msg[512];
	const char *store_all = "  parallel (i) in (16) {\n    B_f[1] = 0.0\n    B_f[i] = B_f[i] * 3.0 + A_f[i]\n  }\n"
				"  copy(B_f, C[bx * 16])\n";
	const char *thread_store_all = "  if tx < 16 {\n    C[bx * 16 + 1] = 0.0\n"
				       "    C[bx * 16 + tx] = C[bx * 16 + tx] * 3.0 + A[bx * 16 + tx]\n  }\n";
	const char *same_value = "  F = shared f32[1]\n  parallel (i) in (16) {\n    F[0] = 2.0\n    B_f[i] = A_f[i] + B_f[i]\n  }\n"
				 "  parallel (i) in (16) {\n    B_f[i] = B_f[i] * F[0]\n  }\n  copy(B_f, C[bx * 16])\n";
	const char *own = "  parallel (i) in (16) {\n    B_f[i] = A_f[i] + B_f[i]\n    B_f[i] = B_f[i] * 3.0\n  }\n"
			  "  copy(B_f, C[bx * 16])\n";
	/* the order alone does not show it */
	cr_expect(same_in_mode(store_all, INTERP_POISON_ALT | INTERP_REVERSE));
	cr_expect(races_in(store_all, msg, sizeof msg), "store_all not flagged");
	cr_expect(strstr(msg, "race: ") && strstr(msg, "B_f element 1"), "%s", msg);
	cr_expect(races_in(thread_store_all, msg, sizeof msg), "thread_store_all not flagged");
	cr_expect(strstr(msg, "race: ") && strstr(msg, "'C'") == NULL && strstr(msg, "C element"), "%s", msg);
	cr_expect(!races_in(same_value, msg, sizeof msg), "%s", msg);
	cr_expect(!races_in(own, msg, sizeof msg), "%s", msg);
	const char *iter_race = "  parallel (i) in (16) {\n    B_f[i] = A_f[i] + B_f[7]\n  }\n  copy(B_f, C[bx * 16])\n";
	cr_expect(races_in(iter_race, msg, sizeof msg), "a read of another iteration's store");
}

/* interp_run_slack: per element of a float tensor atomically added into, the
 * sum of magnitudes (old value once, then every added value) and the number
 * of adds, which tileasm run turns into the reordering tolerance.  Three
 * blocks add their tile into C (f16) and two of them an element into C[0];
 * max does not count; the integer tensor gets no record. */
Test(snippets, atomic_add_slack_counts_adds_and_magnitudes)
{
	Module *m = snip("kernel k(A: f16[3, 4], C: f16[4], D: f16[4], I: i32[4]) grid(3) threads(32) {\n"
			 "  A_f = fragment f16[4]\n"
			 "  copy(A[bx, 0], A_f)\n"
			 "  atomic_add(C[0], A_f)\n"
			 "  if bx < 2 {\n    atomic_add(C[0], f16(-1.5))\n  }\n"
			 "  atomic_max(D[0], A_f)\n"
			 "  atomic_add(I[1], 1)\n"
			 "}\n");
	uint16_t A[12], C[4], D[4];
	int32_t I[4] = {0};
	float av[12] = {1, -2, 3, 0.5f, -4, 5, -6, 7, 8, -9, 10, -11};
	for (int i = 0; i < 12; i++)
		A[i] = dt_f16_from_double(av[i]);
	for (int i = 0; i < 4; i++)
		C[i] = dt_f16_from_double(i == 0 ? -0.25f : 0), D[i] = dt_f16_from_double(0);
	Args a = {.m = m};
	h_tensor(&a, "A", A, sizeof A);
	h_tensor(&a, "C", C, sizeof C);
	h_tensor(&a, "D", D, sizeof D);
	h_tensor(&a, "I", I, sizeof I);
	double sc[8] = {0}, sd[8] = {0}, si[8] = {0};
	double *slack[4] = {NULL, sc, sd, si};
	Diag d;
	diag_init(&d);
	cr_assert_eq(interp_run_slack(m, 0, a.args, 1u << 20, slack, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
	/* C[0]: |-0.25| + |1| + |-4| + |8| + 2 * |-1.5| = 16.25 over 5 adds; C[1]: 0 + 2 + 5 + 9 over 3 */
	cr_expect_eq(sc[0], 16.25);
	cr_expect_eq(sc[1], 5);
	cr_expect_eq(sc[2], 16);
	cr_expect_eq(sc[3], 3);
	cr_expect_eq(sc[7], 3);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(sd[i], 0, "atomic_max is not recorded");
		cr_expect_eq(si[i], 0, "integer adds are not recorded");
	}
	ir_module_free(m);
}
