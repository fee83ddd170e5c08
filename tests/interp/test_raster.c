/* test_raster.c — use_swizzle's block remap (ir_raster_map, src/ir.h): a
 * bijection of the grid for every grid and panel size, equal to TileLang's
 * rasterization2DRow/Column formula as documented (total panels, the last
 * panel's stride from the blocks left), and what the interpreter runs. */
#include "harness.h"

/* TileLang's formula, step by step as its documentation states it. */
static void tilelang(bool col, int64_t p, int64_t gx, int64_t gy, int64_t x, int64_t y, int64_t out[2])
{
	int64_t idx = x + y * gx, grid = gx * gy;
	int64_t a = col ? gy : gx; /* blocks per line of a panel */
	int64_t panel_size = p * a, off = idx % panel_size, pi = idx / panel_size;
	int64_t total = (grid + panel_size - 1) / panel_size;
	int64_t stride = pi + 1 < total ? p : (grid - pi * panel_size) / a;
	int64_t u = (pi & 1) ? a - 1 - off / stride : off / stride;
	int64_t v = off % stride + pi * p;
	out[0] = col ? v : u;
	out[1] = col ? u : v;
}

Test(raster, bijection_and_tilelang_formula)
{
	enum { MAXG = 23 };
	static bool seen[MAXG * MAXG];
	int checked = 0;
	for (int col = 0; col < 2; col++)
		for (int64_t gx = 1; gx <= MAXG; gx++)
			for (int64_t gy = 1; gy <= MAXG; gy++)
				for (int64_t p = 1; p <= MAXG + 2; p++) {
					memset(seen, 0, sizeof seen);
					for (int64_t y = 0; y < gy; y++)
						for (int64_t x = 0; x < gx; x++) {
							int64_t got[2], want[2];
							ir_raster_map(col ? RASTER_COL : RASTER_ROW, p, gx, gy, x, y, got);
							tilelang(col, p, gx, gy, x, y, want);
							cr_assert(got[0] == want[0] && got[1] == want[1],
								  "%s P=%lld grid %lldx%lld block (%lld, %lld): (%lld, %lld), want (%lld, %lld)",
								  col ? "col" : "row", (long long)p, (long long)gx, (long long)gy,
								  (long long)x, (long long)y, (long long)got[0], (long long)got[1],
								  (long long)want[0], (long long)want[1]);
							cr_assert(got[0] >= 0 && got[0] < gx && got[1] >= 0 && got[1] < gy);
							cr_assert(!seen[got[1] * gx + got[0]], "block (%lld, %lld) runs twice",
								  (long long)got[0], (long long)got[1]);
							seen[got[1] * gx + got[0]] = true;
							checked++;
						}
				}
	cr_expect_gt(checked, 100000);
}

/* Hand-worked orders: row P=2 on 3x3 walks the 2-row panel down-and-across,
 * the last 1-row panel backwards; col P=2 on 3x2 the same with the axes
 * swapped (linear launch index still x-fastest). */
Test(raster, small_grids_by_hand)
{
	static const int64_t row[9][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}, {1, 2}, {0, 2}};
	for (int i = 0; i < 9; i++) {
		int64_t o[2];
		ir_raster_map(RASTER_ROW, 2, 3, 3, i % 3, i / 3, o);
		cr_expect(o[0] == row[i][0] && o[1] == row[i][1], "row launch %d: (%lld, %lld)", i, (long long)o[0],
			  (long long)o[1]);
	}
	static const int64_t col[6][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 1}, {2, 0}};
	for (int i = 0; i < 6; i++) {
		int64_t o[2];
		ir_raster_map(RASTER_COL, 2, 3, 2, i % 3, i / 3, o);
		cr_expect(o[0] == col[i][0] && o[1] == col[i][1], "col launch %d: (%lld, %lld)", i, (long long)o[0],
			  (long long)o[1]);
	}
	int64_t o[2]; /* the largest grid: no overflow (UBSan checks) */
	ir_raster_map(RASTER_COL, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7ffffffe, 0x7ffffffe, o);
	cr_expect(o[0] >= 0 && o[1] >= 0);
}

/* The interpreter runs block (bx, by) = ir_raster_map(launch block): each
 * block records the block that ran before it. */
Test(raster, interpreter_runs_the_remapped_order)
{
	Module *m = h_load("r.tile",
			   "kernel k(O: i32[3, 3], S: i32[1]) grid(3, 3) threads(32) {\n"
			   "  parallel (i) in (1) {\n"
			   "    O[by, bx] = S[0]\n"
			   "    S[0] = by * 3 + bx\n"
			   "  }\n"
			   "  use_swizzle(2)\n" /* anywhere at the top level: applies to the whole kernel */
			   "}\n",
			   NULL, 0);
	cr_assert_eq(m->kernels.data[0].raster, RASTER_ROW);
	int32_t O[9], S[1] = {-1};
	Args a = {.m = m};
	h_tensor(&a, "O", O, sizeof O);
	h_tensor(&a, "S", S, sizeof S);
	h_run(&a, NULL);
	/* launch order (0,0) (0,1) (1,0) (1,1) (2,0) (2,1) (2,2) (1,2) (0,2) as ids by*3+bx: 0 3 1 4 2 5 8 7 6 */
	static const int32_t prev[9] = {-1, 3, 4, 0, 1, 2, 7, 8, 5};
	for (int i = 0; i < 9; i++)
		cr_expect_eq(O[i], prev[i], "O[%d] = %d, want %d", i, O[i], prev[i]);
	cr_expect_eq(S[0], 6);
	StrBuf sb = {0};
	ir_print(m, &sb);
	cr_expect(strstr(sb.buf, "{\n  use_swizzle(2)\n  parallel"), "printed first in the body:\n%s", sb.buf);
	sb_free(&sb);
	ir_module_free(m);
}
