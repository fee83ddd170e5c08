/* lower_raster.c — use_swizzle(P, order): at the kernel's entry, bx and by
 * become the rasterised block of the launch's block (ctaid x, y), the steps
 * of ir_raster_map (src/ir.h, which the interpreter calls) in u32 registers:
 *
 *   a, b = (gx, gy) for row, (gy, gx) for col;  q = min(P, b)
 *   l = x + y * gx;  n = l / (q * a);  o = l % (q * a)
 *   s = min(q, b - n * q);  u = o / s (a - 1 - u if n is odd);  v = n * q + o % s
 *   row: (bx, by) = (u, v);  col: (v, u)
 *
 * q = min(P, b) gives the same blocks as P (a P >= b leaves one panel of all
 * b lines either way) and keeps q * a <= gx * gy, which ir_grid keeps below
 * 2^32, so nothing wraps.  Every value is uniform over the block: scalar
 * arithmetic on AMD. */
#include "lower_impl.h"

void lower_raster(L *c)
{
	const Kernel *kn = c->k;
	if (!kn->raster)
		return;
	int64_t p = 1;
	ir_const_int(c->m, kn->raster_panel, &p); /* verify made it a constant in 1 .. IR_GRID_MAX */
	bool col = kn->raster == RASTER_COL;
	int32_t x = c->varreg[kn->blockidx[0]], y = c->varreg[kn->blockidx[1]];
	int32_t gx = expr_as(c, kn->grid[0], DT_I32), gy = expr_as(c, kn->grid[1], DT_I32);
	int32_t a = col ? gy : gx, b = col ? gx : gy;
	int32_t q = bin(c, SI_MIN, DT_U32, i32c(c, p), b);
	int32_t l = bin(c, SI_ADD, DT_U32, x, bin(c, SI_MUL, DT_U32, y, gx));
	int32_t panel = bin(c, SI_MUL, DT_U32, q, a);
	int32_t n = bin(c, SI_DIV, DT_U32, l, panel);
	int32_t o = bin(c, SI_REM, DT_U32, l, panel);
	int32_t first = bin(c, SI_MUL, DT_U32, n, q);
	int32_t s = bin(c, SI_MIN, DT_U32, q, bin(c, SI_SUB, DT_U32, b, first));
	int32_t u = bin(c, SI_DIV, DT_U32, o, s);
	int32_t v = bin(c, SI_ADD, DT_U32, first, bin(c, SI_REM, DT_U32, o, s));
	int32_t odd = setp(c, CMP_NE, DT_U32, bin(c, SI_AND, DT_U32, n, i32c(c, 1)), i32c(c, 0));
	int32_t back = bin(c, SI_SUB, DT_U32, bin(c, SI_SUB, DT_U32, a, i32c(c, 1)), u);
	u = selp(c, DT_U32, odd, back, u);
	c->varreg[kn->blockidx[0]] = col ? v : u;
	c->varreg[kn->blockidx[1]] = col ? u : v;
	StrBuf *notes = &c->f->notes;
	sb_printf(notes, "; %d:%d: use_swizzle(%lld, order=%s): bx, by are the %s-rasterised block of the launch's "
		  "block (panels of %lld block %s, direction alternating)\n", kn->raster_pos.line, kn->raster_pos.col,
		  (long long)p, raster_name((RasterOrder)kn->raster), raster_name((RasterOrder)kn->raster), (long long)p,
		  col ? "columns" : "rows");
}
