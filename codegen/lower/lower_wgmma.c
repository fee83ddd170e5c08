/* lower_wgmma.c — sm_90a gemms of the general lowering as wgmma.mma_async:
 * a gemm into a register accumulator C[64 G, N] of a block of G <= 4
 * warpgroups (128 G threads) becomes K/16 wgmma m64nNk16 per warpgroup
 * (SI_WGMMA), warpgroup g computing rows 64 g .. 64 g + 63, with
 *  - A from a shared tile through a matrix descriptor, or from registers:
 *    a register fragment F whose copy(F, A_s) just before the gemm is
 *    dropped (lower_gemm_areg_skip; attention's P·V), F's C-layout slots of
 *    k step ks being wgmma's A fragment as they are mma.m16n8k16's;
 *  - B from a shared tile through a descriptor, K-major ([N, K],
 *    transpose_b) or MN-major ([K, N], wgmma's transposed B).
 * The accumulator layout is the one NVIDIA register fragments already have
 * (gemm_nb: NB = N / 8, warp w holds rows 16w .. 16w + 15: one strip per
 * warp, so warp w % 4 of warpgroup w / 4 holds row 16 (w % 4) of that
 * warpgroup's 64 rows), which is wgmma's: element-wise code, row
 * statistics and stores stay as they are.  B is the same for every
 * warpgroup; A from shared memory starts at row 64 g of the tile.
 *
 * Operand tiles ("wgm" tiles, chosen before shared memory is placed): a
 * 2-D f16/bf16 shared tile whose only uses are copies into it from global
 * memory and gemms this path takes gets wgmma's 128B-swizzle layout
 * (lower_sh_addr): columns in blocks of 64 elements, block j of all R rows
 * at byte j * R * 128, row r of a block at r * 128 with its 16-byte chunks
 * XORed by r % 8, the tile 1024-byte aligned (the shared base is rounded
 * up at run time; 1024 bytes more are requested).  Copies keep their
 * 16-byte vectors (a chunk never straddles a block).  Descriptors: K-major
 * SBO = 1024 (8-row groups), a k step 32 bytes along the row and the next
 * column block after four; MN-major LBO = K * 128 (the next 64 columns of
 * N), SBO = 1024, a k step 16 rows (2048 bytes).  When the exact check at
 * the gemm fails after all (the accumulator's layout), the gemm takes the
 * generic path, which reads the tiles through the same layout function. */
#include "lower_mma_impl.h"

enum { WG_M = 64, WG_MAX_GROUPS = 4, WG_MAX_KSTEPS = 16 };

static bool wg_target(const L *c)
{
	return c->t->id == TA_TARGET_SM90A && !c->wg && !(c->nv_off & LOWER_NV_WGMMA) && c->nthreads % 128 == 0 &&
	       c->nthreads / 128 <= WG_MAX_GROUPS;
}

/* The accumulator's rows: 64 per warpgroup, so that every warp holds one
 * 16-row strip (the layout wgmma writes). */
static int64_t wg_rows(const L *c)
{
	return WG_M * (c->nthreads / 128);
}

/* A shared tile wgmma can read: 2-D f16/bf16, whole 128-byte column
 * blocks, whole 8-row groups. */
static bool wg_tile(L *c, int32_t b, int64_t rows, int64_t cols)
{
	const Buffer *x = BUF(b);
	return x->scope == SCOPE_SHARED && x->rank == 2 && !x->view && (x->dtype == DT_F16 || x->dtype == DT_BF16) &&
	       bdim(c, x, 0) == rows && bdim(c, x, 1) == cols && (cols * 2) % 128 == 0 && rows % 8 == 0;
}

/* The shape part of the test (before placement): C an accumulator that
 * goes to registers, [64 G, N] f32; A [64 G, K] (unless from registers),
 * B [N, K] or [K, N] of A's dtype. */
static bool wg_shape(L *c, const Stmt *s, bool areg)
{
	const Buffer *A = BUF(s->src.buf), *C = BUF(s->dst.buf);
	if (!wg_target(c) || s->kind != S_GEMM || s->flag_a || s->src.nidx || s->src2.nidx || s->dst.nidx ||
	    C->scope != SCOPE_FRAGMENT || C->rank != 2 || C->dtype != DT_F32 || c->bl[s->dst.buf].rf < 0 ||
	    (A->dtype != DT_F16 && A->dtype != DT_BF16) || BUF(s->src2.buf)->dtype != A->dtype || A->rank != 2)
		return false;
	int64_t M = bdim(c, C, 0), N = bdim(c, C, 1), K = bdim(c, A, 1);
	if (M != wg_rows(c) || N % 16 || N / 8 > 16 || K % 16 || K / 16 > WG_MAX_KSTEPS || bdim(c, A, 0) != M)
		return false;
	if (!wg_tile(c, s->src2.buf, s->flag_b ? N : K, s->flag_b ? K : N))
		return false;
	return areg || wg_tile(c, s->src.buf, M, K);
}

/* After placement: the accumulator has the wgmma layout, the tiles the
 * wgm layout. */
static bool wg_exact(L *c, const Stmt *s, bool areg, int32_t F)
{
	if (!wg_shape(c, s, areg))
		return false;
	const BufLoc *bl = &c->bl[s->dst.buf];
	int64_t N = bdim(c, BUF(s->dst.buf), 1);
	if (bl->rf_agpr || bl->rf_shape != MMA_M16N8K16 || bl->rf_ntn != 1 || bl->rf_nb * 8 != N || bl->rf_n != N / 2)
		return false;
	if (!c->bl[s->src2.buf].wgm || (!areg && !c->bl[s->src.buf].wgm))
		return false;
	return !areg || ldm_areg_fits(c, F, s);
}

bool wgmma_areg_ok(L *c, const Stmt *g, int32_t F)
{
	return wg_exact(c, g, true, F);
}

/* Every use of b in block bl is a copy from global memory into it or an
 * operand of a gemm of this path (its A only when the gemm reads it from
 * shared memory). */
static bool wg_uses_ok(L *c, const Block *bl, int32_t b, bool *used)
{
	for (int i = 0; i < bl->n; i++) {
		const Stmt *s = ST(bl->ids[i]);
		if (ldm_names_buf(c, s, b)) {
			bool cp = s->kind == S_COPY && s->dst.buf == b && BUF(s->src.buf)->scope == SCOPE_GLOBAL &&
				  !ldm_region_reads_buf(c, &s->src, b, false) && !ldm_region_reads_buf(c, &s->dst, b, false);
			bool gm = s->kind == S_GEMM && s->dst.buf != b && (s->src.buf == b || s->src2.buf == b) &&
				  wg_shape(c, s, s->src.buf != b);
			if (!cp && !gm)
				return false;
			*used |= gm;
		}
		if (!wg_uses_ok(c, &s->body, b, used) || !wg_uses_ok(c, &s->els, b, used))
			return false;
	}
	return true;
}

void wgmma_analyze(L *c)
{
	if (!wg_target(c))
		return;
	FOR_KBUF(c, b) {
		const Buffer *x = BUF(b);
		BufLoc *bl = &c->bl[b];
		bool used = false;
		if (x->scope != SCOPE_SHARED || x->rank != 2 || x->view || (x->dtype != DT_F16 && x->dtype != DT_BF16) ||
		    bl->rf >= 0 || bl->vf >= 0 || bl->swz_bits || (bdim(c, x, 1) * 2) % 128 || bdim(c, x, 0) % 8)
			continue;
		if (wg_uses_ok(c, &c->k->body, (int32_t)b, &used) && used)
			bl->wgm = true;
	}
}

/* After place_bufs: the wgm tiles are 1024-aligned offsets; align the
 * base itself (the dynamic shared area is only 16-byte aligned). */
void wgmma_place(L *c)
{
	bool any = false;
	FOR_KBUF(c, b)
		any |= c->bl[b].wgm;
	if (!any)
		return;
	c->f->smem_bytes += 1024;
	c->shbase = bin(c, SI_AND, DT_U32, bin(c, SI_ADD, DT_I32, c->shbase, i32c(c, 1023)), i32c(c, -1024));
}

bool lower_gemm_wgmma(L *c, const Stmt *s)
{
	bool areg = c->areg_buf >= 0 && c->areg_buf == s->src.buf;
	int32_t F = c->areg_frag;
	if (!wg_exact(c, s, areg, F))
		return false;
	c->areg_buf = c->areg_frag = -1;
	const BufLoc *bl = &c->bl[s->dst.buf];
	DType in = (DType)BUF(s->src.buf)->dtype;
	int64_t N = bdim(c, BUF(s->dst.buf), 1), K = bdim(c, BUF(s->src.buf), 1);
	int32_t a;
	if (areg) { /* k step ks: F's n tiles 2ks and 2ks + 1, rounded to the input dtype like the copy */
		int32_t p[4 * WG_MAX_KSTEPS];
		for (int64_t ks = 0; ks < K / 16; ks++)
			for (int q = 0; q < 4; q++) {
				p[ks * 4 + q] = ldm_areg_pair(c, F, (int)((2 * ks + q / 2) * 4 + (q % 2) * 2), in);
			}
		a = (int32_t)c->f->regs.len;
		for (int64_t q = 0; q < K / 4; q++)
			reg(c, VT_I32);
		for (int64_t q = 0; q < K / 4; q++)
			emit(c, I(SI_MOV, DT_I32, a + (int32_t)q, p[q], -1));
	} else { /* this warpgroup's rows 64 g ..: 128 bytes a row inside each column block */
		a = bin(c, SI_ADD, DT_I32, c->shbase, i32c(c, c->bl[s->src.buf].smem));
		if (c->nthreads > 128)
			a = bin(c, SI_ADD, DT_I32, a,
				 bin(c, SI_MUL, DT_I32, bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 128)), i32c(c, WG_M * 128)));
	}
	int32_t b = bin(c, SI_ADD, DT_I32, c->shbase, i32c(c, c->bl[s->src2.buf].smem));
	SInst w = I(SI_WGMMA, in, bl->rf, a, b);
	w.sub = (uint8_t)((areg ? 1 : 0) | (s->flag_b ? 0 : 2) | (s->flag_clear ? 4 : 0));
	w.imm = N | (K << 16) | ((int64_t)(c->nthreads / 128 - 1) << 32);
	emit(c, w);
	c->f->nmma++;
	return true;
}
