/* lower_mma.c — gemm: matrix shapes of AMD matrix cores, PTX mma and AMD MFMA/WMMA tilings (part of the gemm lowering). */
#include "lower_mma_impl.h"

/* ---- matrix shapes of AMD matrix cores ----------------------------------
 *
 * On gfx90a/gfx942 (v_mfma_f32_16x16x16*, wave64) and gfx1100
 * (v_wmma_f32_16x16x16_*, wave32) a gemm tile is 16x16 and one wave owns
 * it; the per-lane layouts are in lower.h (MmaShape).  A wave's strip is
 * 16 rows x 16*NB columns: one A fragment serves NB instructions.  When
 * every strip of a wave has the same columns (ntn divides the wave count),
 * each B fragment is loaded once per k-step and serves all strips. */
const MmaInfo simt_mma[MMA_NSHAPES] = {
	{"mma.m16n8k16", 32, 16, 8, 16, 4, 2, 4, 0, 0, 0},
	{"mma.mfma16x16x16", 64, 16, 16, 16, 2, 2, 4, 4, 4, 1},
	{"mma.wmma16x16x16", 32, 16, 16, 16, 8, 8, 8, 0, 1, 2},
	{"mma.mfma16x16x16.i8", 64, 16, 16, 16, 1, 1, 4, 4, 4, 1},
	{"mma.mfma16x16x32.i8", 64, 16, 16, 32, 2, 2, 4, 8, 4, 1},
	{"mma.wmma16x16x16.i8", 32, 16, 16, 16, 4, 4, 8, 0, 1, 2},
	{"mma.mfma16x16x32.fp8", 64, 16, 16, 32, 2, 2, 4, 8, 4, 1},
	{"mma.m16n8k32.s8", 32, 16, 8, 32, 4, 2, 4, 0, 0, 0},
};

/* PTX warp shapes (m16n8k16, m16n8k32.s8): the warp-strip tiling and the
 * PTX C layout; every other shape is an AMD matrix core's. */
bool warp_shape(int sh)
{
	return sh == MMA_M16N8K16 || sh == MMA_M16N8K32_I8;
}

static int nb_units(int64_t u)
{
	return u % 8 == 0 ? 8 : u % 4 == 0 ? 4 : u % 2 == 0 ? 2 : 1;
}

/* The shape a gemm with an M x N accumulator and inputs `in` uses on this
 * target (given M % 16 == 0): the target's matrix core when the tile and
 * wave fit, else for f16/bf16 PTX's m16n8k16 (which the AMD backend
 * emulates), else -1. */
int target_shape(L *c, int64_t N, DType in)
{
	ta_target id = c->t->id;
	bool gfx9 = id == TA_TARGET_GFX90A || id == TA_TARGET_GFX942;
	int sh;
	if (in == DT_I8)
		sh = id == TA_TARGET_GFX1100 ? MMA_WMMA16_I8
		   : id == TA_TARGET_GFX942 ? MMA_MFMA16X32_I8 : id == TA_TARGET_GFX90A ? MMA_MFMA16_I8 : MMA_M16N8K32_I8;
	else
		sh = id == TA_TARGET_GFX1100 ? MMA_WMMA16 : gfx9 ? MMA_MFMA16 : MMA_M16N8K16;
	if (!warp_shape(sh) && (N % 16 || c->nthreads % simt_mma[sh].wave))
		sh = in == DT_I8 ? -1 : MMA_M16N8K16;
	if (sh == MMA_M16N8K32_I8 && (N % 8 || c->nthreads % 32))
		sh = -1;
	return sh;
}

/* The MMA shape of gemm s, or -1 when it takes the scalar path. */
int gemm_shape(L *c, const Stmt *s)
{
	const Buffer *A = BUF(s->src.buf), *B = BUF(s->src2.buf), *C = BUF(s->dst.buf);
	int64_t M = bdim(c, C, 0), N = bdim(c, C, 1), K = bdim(c, A, s->flag_a ? 0 : 1);
	DType in = (DType)A->dtype;
	if (A->scope == SCOPE_LOCAL || B->scope == SCOPE_LOCAL || C->scope == SCOPE_LOCAL)
		return -1;
	if (in == DT_I8) { /* C is i32 */
		int sh = M % 16 == 0 ? target_shape(c, N, in) : -1;
		return sh >= 0 && K % simt_mma[sh].k == 0 && C->dtype == DT_I32 ? sh : -1;
	}
	if (dtype_is_fp8(in)) {
		/* AMD only: gfx942's fp8 MFMA for the FNUZ formats it implements,
		 * else the f16 shape on fragments converted to f16 (exact). */
		if (!target_is_amd(c->t->id) || M % 16 || K % 16 || C->dtype != DT_F32)
			return -1;
		int sh = target_shape(c, N, DT_F16);
		if (sh == MMA_M16N8K16) /* its AMD emulation has no fp8 fragments */
			return -1;
		if (sh == MMA_MFMA16 && c->t->id == TA_TARGET_GFX942 && dtype_is_fnuz(in) && K % 32 == 0)
			sh = MMA_MFMA16X32_FP8;
		return sh;
	}
	if (!((in == DT_F16 || in == DT_BF16) && M % 16 == 0 && N % 8 == 0 && K % 16 == 0 && c->nthreads % 32 == 0))
		return -1;
	return target_shape(c, N, in);
}

/* Shared-memory address of element (i, j) of a 2-D buffer (no offset). */
static int32_t sh_addr2(L *c, int32_t bufid, int32_t i, int32_t j)
{
	return lower_sh_addr(c, bufid, i, j);
}

/* A 32-bit register holding operand elements (r, k) and (r, k+1) where
 * rows/cols follow `trans`: element (r, k) is at buf[k][r] when trans. */
static void frag_pair(L *c, int32_t bufid, bool trans, int32_t r, int32_t k, int32_t dst)
{
	const BufLoc *bl = &c->bl[bufid];
	DType t = (DType)BUF(bufid)->dtype;
	if (!trans) {
		SInst in = I(SI_LD, DT_I32, dst, sh_addr2(c, bufid, r, k), -1);
		in.sub = SP_SHARED;
		in.imm = bl->smem;
		emit(c, in);
		return;
	}
	int32_t lo = ld(c, SP_SHARED, t, sh_addr2(c, bufid, k, r), bl->smem, -1);
	int32_t hi = ld(c, SP_SHARED, t, sh_addr2(c, bufid, bin(c, SI_ADD, DT_I32, k, i32c(c, 1)), r), bl->smem, -1);
	emit(c, I(SI_PACK2, DT_I32, dst, lo, hi));
}

/* A 32-bit operand register of a PTX warp shape holding elements (r, k)
 * .. (r, k + e - 1), the lower k in the low bits: pairs of f16/bf16
 * (m16n8k16), or four i8 (m16n8k32.s8: one b32 load when contiguous,
 * else four byte loads). */
static void frag_reg(L *c, int32_t bufid, bool trans, int32_t r, int32_t k, int32_t dst)
{
	if (dtype_bytes((DType)BUF(bufid)->dtype) != 1 || !trans) {
		frag_pair(c, bufid, trans, r, k, dst);
		return;
	}
	int64_t smem = c->bl[bufid].smem, row = bdim(c, BUF(bufid), 1);
	int32_t base = sh_addr2(c, bufid, k, r), v = -1;
	for (int x = 0; x < 4; x++) {
		int32_t by = ld(c, SP_SHARED, DT_U8, base, smem + x * row, -1);
		if (x)
			by = bin(c, SI_SHL, DT_U32, by, i32c(c, 8 * x));
		v = x ? bin(c, SI_OR, DT_U32, v, by) : by;
	}
	emit(c, I(SI_MOV, DT_I32, dst, v, -1));
}

/* The A operand of a PTX warp shape: four registers, rows r0/r8 (= r0 + 8)
 * by k halves k0/k8.  Returns the first register. */
int32_t frag_a(L *c, const Stmt *s, int32_t r0, int32_t r8, int32_t k0, int32_t k8)
{
	int32_t af = (int32_t)c->f->regs.len;
	for (int i = 0; i < 4; i++)
		reg(c, VT_I32);
	frag_reg(c, s->src.buf, s->flag_a, r0, k0, af + 0);
	frag_reg(c, s->src.buf, s->flag_a, r8, k0, af + 1);
	frag_reg(c, s->src.buf, s->flag_a, r0, k8, af + 2);
	frag_reg(c, s->src.buf, s->flag_a, r8, k8, af + 3);
	return af;
}

/* The B operand: two registers for column n, k halves k0/k8.  B element
 * (k, n) is B[k][n], or B[n][k] with transpose_b: the (n, k) pair is
 * contiguous exactly when transposed. */
int32_t frag_b(L *c, const Stmt *s, int32_t n, int32_t k0, int32_t k8)
{
	int32_t bf = (int32_t)c->f->regs.len;
	reg(c, VT_I32);
	reg(c, VT_I32);
	frag_reg(c, s->src2.buf, !s->flag_b, n, k0, bf);
	frag_reg(c, s->src2.buf, !s->flag_b, n, k8, bf + 1);
	return bf;
}

static void lower_gemm_mma(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K)
{
	int W = c->nthreads / 32;
	int NB = gemm_nb(c, 0, N);
	int64_t ntn = N / (8 * NB), ntiles = (M / 16) * ntn;
	DType in = (DType)BUF(s->src.buf)->dtype;
	/* m16n8k32.s8: i32 C, four i8 per operand register (k offsets 4t, 4t + 16) */
	bool s8 = sh == MMA_M16N8K32_I8;
	DType ct = s8 ? DT_I32 : DT_F32;
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t g = bin(c, SI_DIV, DT_U32, lane, i32c(c, 4));
	int32_t t2 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, 2));
	int32_t tk = s8 ? bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, 4)) : t2;
	int32_t tile = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, tile, warp, -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, tile, i32c(c, ntiles)), false);
	int32_t r0 = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, bin(c, SI_DIV, DT_U32, tile, i32c(c, ntn)),
	                                          i32c(c, 16)), g);
	int32_t r8 = bin(c, SI_ADD, DT_I32, r0, i32c(c, 8));
	int32_t n0 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, tile, i32c(c, ntn)), i32c(c, 8 * NB));
	/* accumulators: NB groups of 4 consecutive f32 (i32) registers */
	int32_t acc = (int32_t)c->f->regs.len;
	for (int i = 0; i < 4 * NB; i++)
		reg(c, simt_vt(ct));
	int64_t coff = c->bl[s->dst.buf].smem;
	for (int nb = 0; nb < NB; nb++) {
		int32_t col = bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb));
		col = bin(c, SI_ADD, DT_I32, col, t2);
		int32_t p0 = sh_addr2(c, s->dst.buf, r0, col), p8 = sh_addr2(c, s->dst.buf, r8, col);
		for (int q = 0; q < 4; q++) {
			int32_t dst = acc + 4 * nb + q;
			if (s->flag_clear) {
				SInst z = I(s8 ? SI_MOVI : SI_MOVF, ct, dst, -1, -1);
				emit(c, z);
			} else {
				SInst l = I(SI_LD, ct, dst, q < 2 ? p0 : p8, -1);
				l.sub = SP_SHARED;
				l.imm = coff + (q & 1) * 4;
				emit(c, l);
			}
		}
	}
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	{
		int32_t k0 = bin(c, SI_ADD, DT_I32, kk, tk), k8 = bin(c, SI_ADD, DT_I32, k0, i32c(c, s8 ? 16 : 8));
		int32_t af = frag_a(c, s, r0, r8, k0, k8);
		for (int nb = 0; nb < NB; nb++) {
			int32_t n = bin(c, SI_ADD, DT_I32, bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb)), g);
			int32_t bf = frag_b(c, s, n, k0, k8);
			SInst m = I(SI_MMA, in, acc + 4 * nb, af, bf);
			m.c = acc + 4 * nb;
			m.sub = (uint8_t)sh;
			emit(c, m);
		}
		emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, simt_mma[sh].k)));
		bra(c, ktop, -1, false);
	}
	place(c, kend);
	for (int nb = 0; nb < NB; nb++) {
		int32_t col = bin(c, SI_ADD, DT_I32, bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb)), t2);
		int32_t p0 = sh_addr2(c, s->dst.buf, r0, col), p8 = sh_addr2(c, s->dst.buf, r8, col);
		for (int q = 0; q < 4; q++)
			st(c, SP_SHARED, ct, q < 2 ? p0 : p8, coff + (q & 1) * 4, acc + 4 * nb + q, -1);
	}
	emit(c, I(SI_ADD, DT_I32, tile, tile, i32c(c, W)));
	bra(c, top, -1, false);
	place(c, end);
	c->f->nmma++;
}

/* The sm_90a GEMM path's pipelined loop: one instruction that the PTX
 * emitter expands into the TMA/mbarrier/wgmma consumer loop (ptx_sm90.h)
 * over the accumulator's registers, which must have the wgmma layout
 * (ntn == 1: each warp's 16-row strip spans all columns). */
void lower_wg_loop(L *c, const Stmt *s)
{
	(void)s;
	const BufLoc *bl = &c->bl[c->wg->acc];
	const Buffer *C = BUF(c->wg->acc);
	if (bl->rf < 0 || bl->rf_agpr || !warp_shape(bl->rf_shape) || bl->rf_ntn != 1 ||
	    bl->rf_nb * 8 != bdim(c, C, 1) || c->nthreads != 128)
		return; /* no wgmma layout: wg_done stays false, the caller emits no sm90 entry */
	SInst in = I(SI_WG_GEMM_LOOP, DT_F32, bl->rf, -1, -1);
	in.imm = bl->rf_n;
	emit(c, in);
	c->wg_done = true;
}

void lower_gemm(L *c, const Stmt *s)
{
	const Buffer *A = BUF(s->src.buf), *C = BUF(s->dst.buf);
	int64_t M = bdim(c, C, 0), N = bdim(c, C, 1), K = bdim(c, A, s->flag_a ? 0 : 1);
	DType in = (DType)A->dtype, acct = (DType)C->dtype;
	if (c->bl[s->dst.buf].rf >= 0) {
		if (!warp_shape(c->bl[s->dst.buf].rf_shape))
			lower_gemm_amd_rf(c, s, K);
		else if (!lower_gemm_wgmma(c, s) && !lower_gemm_ldm(c, s))
			lower_gemm_mma_rf(c, s, K);
		return;
	}
	int sh = gemm_shape(c, s);
	if (sh >= 0 && !warp_shape(sh)) {
		lower_gemm_amd(c, s, sh, M, N, K);
		return;
	}
	if (sh >= 0) {
		lower_gemm_mma(c, s, sh, M, N, K);
		return;
	}
	/* General path: one thread per C element, products and sums in k order. */
	DType ot = op_type(acct);
	int64_t ext[2] = {M, N};
	DLoop l = lower_dloop_begin(c, M * N, C->scope != SCOPE_LOCAL);
	int32_t mn[2];
	lower_decompose(c, l.p, ext, 2, mn);
	int32_t acc = reg(c, simt_vt(acct));
	emit(c, I(SI_MOV, ot, acc, s->flag_clear ? zero_canon(c, acct) : lower_load_elem(c, s->dst.buf, mn, -1), -1));
	int32_t k = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, k, i32c(c, 0), -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, k, i32c(c, K)), false);
	int32_t ai[2] = {s->flag_a ? k : mn[0], s->flag_a ? mn[0] : k};
	int32_t bi[2] = {s->flag_b ? mn[1] : k, s->flag_b ? k : mn[1]};
	int32_t av = cvt(c, acct, in, lower_load_elem(c, s->src.buf, ai, -1));
	int32_t bv = cvt(c, acct, in, lower_load_elem(c, s->src2.buf, bi, -1));
	emit(c, I(SI_MOV, ot, acc, bin(c, SI_ADD, ot, acc, bin(c, SI_MUL, ot, av, bv)), -1));
	emit(c, I(SI_ADD, DT_I32, k, k, i32c(c, 1)));
	bra(c, top, -1, false);
	place(c, end);
	lower_store_elem(c, s->dst.buf, mn, acc, -1);
	lower_dloop_end(c, &l);
}

#define RF_MAX_STRIPS 32


/* rows: the fragment follows the MMA-row fragments, so its strips span
 * whole rows (no 2-wide grid of waves below). */
AmdTiling amd_tiling_as(L *c, int sh, int64_t M, int64_t N, bool rows)
{
	AmdTiling t;
	t.sh = sh;
	t.wave = simt_mma[sh].wave;
	t.W = c->nthreads / t.wave;
	t.NB = nb_units(N / 16);
	/* Two column tiles of 8 groups -> 4 (a 2-wide grid of waves): per k-step
	 * a wave then reads 2x the A fragments (b128 each) and half the B
	 * fragments (B[k][n]: 2 loads per register), when the column tiles
	 * divide the waves (strips share their B), the strips fit and no
	 * MMA-row fragment needs a strip to span the row (rr_rows: ntn 1) */
	int64_t tr = M / 16;
	if (t.NB == 8 && !rows && t.W % 2 == 0 && (tr * 2) % t.W == 0 && tr * 2 / t.W <= 32)
		t.NB = 4;
	t.ntn = (int)(N / (16 * t.NB));
	t.ntiles = tr * t.ntn;
	return t;
}

/* The tiling an M x N fragment has: the rows' one when the kernel has
 * MMA-row fragments of M rows (any width: rr_rows_alike). */
AmdTiling amd_tiling(L *c, int sh, int64_t M, int64_t N)
{
	return amd_tiling_as(c, sh, M, N, c->rr_tile >= 0 && M == bdim(c, BUF(c->rr_tile), 0));
}


AmdLane amd_lane(L *c, int wave)
{
	AmdLane a;
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, wave));
	a.wave = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, wave));
	a.i = bin(c, SI_REM, DT_U32, lane, i32c(c, 16));
	a.h = bin(c, SI_DIV, DT_U32, lane, i32c(c, 16));
	return a;
}

/* Shared-memory address of operand element (r, k) of an AMD shape, where
 * (r, k) is buf[k][r] when trans (without the buffer's offset). */
static int32_t amd_frag_base(L *c, int32_t bufid, bool trans, int32_t r, int32_t k)
{
	return trans ? sh_addr2(c, bufid, k, r) : sh_addr2(c, bufid, r, k);
}

/* Bytes between operand elements (r, k) and (r + d, k). */
static int64_t amd_frag_shift(L *c, int32_t bufid, bool trans, int64_t d)
{
	const Buffer *b = BUF(bufid);
	int64_t es = dtype_bytes((DType)b->dtype);
	return trans ? d * es : d * bdim(c, b, 1) * es;
}

/* n operand registers dst.. of an AMD shape from the element at base +
 * off: register j holds elements (r, k + e*j .. k + e*j + e-1), e = 4 /
 * element bytes.  Untransposed they are one contiguous run:
 * ds_read_b64/b128. */
static void amd_frag_at(L *c, int32_t bufid, bool trans, int32_t base, int64_t off, int n, int32_t dst)
{
	const Buffer *b = BUF(bufid);
	int64_t smem = c->bl[bufid].smem + off, es = dtype_bytes((DType)b->dtype), row = bdim(c, b, 1);
	if (!trans) {
		int vec = n >= 4 ? 4 : n;
		if ((row * es) % (4 * vec)) /* rows not aligned to the vector: dwords */
			vec = 1;
		for (int j = 0; j < n; j += vec) {
			SInst in = I(SI_LD, DT_I32, dst + j, base, -1);
			in.sub = SP_SHARED;
			in.imm = smem + 4 * j;
			in.vec = (uint8_t)vec;
			emit(c, in);
		}
		return;
	}
	DType t = (DType)b->dtype;
	if (es == 1) { /* i8: four bytes per register, lowest k in the low byte */
		for (int j = 0; j < n; j++) {
			int32_t v = -1;
			for (int x = 0; x < 4; x++) {
				int32_t by = ld(c, SP_SHARED, DT_U8, base, smem + (4 * j + x) * row, -1);
				if (x)
					by = bin(c, SI_SHL, DT_U32, by, i32c(c, 8 * x));
				v = x ? bin(c, SI_OR, DT_U32, v, by) : by;
			}
			emit(c, I(SI_MOV, DT_I32, dst + j, v, -1));
		}
		return;
	}
	for (int j = 0; j < n; j++) {
		int32_t lo = ld(c, SP_SHARED, t, base, smem + (2 * j) * row * es, -1);
		int32_t hi = ld(c, SP_SHARED, t, base, smem + (2 * j + 1) * row * es, -1);
		emit(c, I(SI_PACK2, DT_I32, dst + j, lo, hi));
	}
}

/* n f16-pair operand registers dst.. of an f16 shape from fp8 elements
 * (the fallback where no fp8 matrix instruction fits; every fp8 value is
 * exact in f16): register j holds elements (r, k + 2j) and (r, k + 2j + 1),
 * the lower k in the low half.  Untransposed, four consecutive bytes come
 * from one dword load. */
static void amd_frag_fp8_f16(L *c, int32_t bufid, bool trans, int32_t base, int64_t off, int n, int32_t dst)
{
	const Buffer *b = BUF(bufid);
	DType t = (DType)b->dtype;
	int64_t smem = c->bl[bufid].smem + off, row = bdim(c, b, 1);
	bool dwords = !trans && row % 4 == 0;
	int32_t w = -1, h[2];
	for (int j = 0; j < n; j++) {
		for (int x = 0; x < 2; x++) {
			int e = 2 * j + x; /* k offset */
			int32_t v;
			if (dwords) {
				if (e % 4 == 0) {
					w = reg(c, VT_I32);
					SInst in = I(SI_LD, DT_I32, w, base, -1);
					in.sub = SP_SHARED;
					in.imm = smem + e;
					emit(c, in);
				}
				v = e % 4 ? bin(c, SI_SHR, DT_U32, w, i32c(c, 8 * (e % 4))) : w;
			} else {
				v = ld(c, SP_SHARED, t, base, smem + (trans ? e * row : e), -1);
			}
			h[x] = pack(c, DT_F16, unpack(c, t, v));
		}
		emit(c, I(SI_PACK2, DT_I32, dst + j, h[0], h[1]));
	}
}

static int32_t regs_n(L *c, VType vt, int n)
{
	int32_t first = (int32_t)c->f->regs.len;
	for (int i = 0; i < n; i++)
		reg(c, vt);
	return first;
}

/* One k-step of 16 for S strips of a wave: acc(si, nb) is the first C
 * register of strip si, column group nb; tm[si]/tn[si] the strip's tile
 * row and column. */
static void amd_kstep(L *c, const Stmt *s, const AmdTiling *t, const AmdLane *ln, int32_t kk, int S,
		      const int32_t *tm, const int32_t *tn, int32_t acc0, bool same_cols)
{
	const MmaInfo *mi = &simt_mma[t->sh];
	DType in = (DType)BUF(s->src.buf)->dtype;
	/* fp8 on an f16 shape: fragments are converted to f16 as they load */
	bool cvt16 = dtype_is_fp8(in) && t->sh != MMA_MFMA16X32_FP8;
	void (*frag)(L *, int32_t, bool, int32_t, int64_t, int, int32_t) = cvt16 ? amd_frag_fp8_f16 : amd_frag_at;
	if (cvt16)
		in = DT_F16;
	int32_t kb = mi->kstep ? bin(c, SI_ADD, DT_I32, kk, bin(c, SI_MUL, DT_I32, ln->h, i32c(c, mi->kstep))) : kk;
	int32_t af[RF_MAX_STRIPS];
	for (int si = 0; si < S; si++) {
		af[si] = regs_n(c, VT_I32, mi->na);
		int32_t arow = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm[si], i32c(c, 16)), ln->i);
		frag(c, s->src.buf, s->flag_a, amd_frag_base(c, s->src.buf, s->flag_a, arow, kb), 0, mi->na, af[si]);
	}
	/* B element (k, n) is B[k][n], or B[n][k] with transpose_b.  One
	 * address per strip (same_cols: per k-step): column group nb is
	 * 16 * nb further, a load offset. */
	bool btr = !s->flag_b;
	int32_t bf = -1, bbase = -1;
	for (int o = 0; o < S * t->NB; o++) {
		/* same_cols: nb outer, strips inner (one B fragment per nb) */
		int si = same_cols ? o % S : o / t->NB, nb = same_cols ? o / S : o % t->NB;
		if (!same_cols || si == 0) {
			if (nb == 0) /* first column group of a strip (same_cols: of all) */
				bbase = amd_frag_base(c, s->src2.buf, btr,
						      bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn[si], i32c(c, 16 * t->NB)),
							  ln->i), kb);
			bf = regs_n(c, VT_I32, mi->nb);
			frag(c, s->src2.buf, btr, bbase, amd_frag_shift(c, s->src2.buf, btr, 16LL * nb), mi->nb, bf);
		}
		int32_t acc = acc0 + (si * t->NB + nb) * mi->nc;
		bool swap = c->bl[s->dst.buf].rf >= 0 && c->bl[s->dst.buf].rf_swap; /* C^T = B^T A^T */
		SInst m = I(SI_MMA, in, acc, swap ? bf : af[si], swap ? af[si] : bf);
		m.c = acc;
		m.sub = (uint8_t)t->sh;
		emit(c, m);
	}
}

/* ---- f16/bf16 operands of MFMA16 / WMMA16: k-blocks --------------------
 *
 * The k range is walked in blocks of P k-steps (P = 2 for MFMA16 when K is
 * a multiple of 32, else 1).  Within a block, lane (i, h) and k-step s use
 * the k values kblk + h * kstep * P + s * run + (0 .. run-1) (run: the
 * lane's elements per k-step, MFMA16 4, WMMA16 16): the same for A and B,
 * so the sum is the gemm's (the k order differs from the plain layout's,
 * which is free).  A lane's k values of a block are then contiguous:
 * an untransposed operand (k along its rows) is one ds_read_b128 per 8
 * elements; a transposed one is read element by element, two per register
 * (ds_read_u16, then ds_read_u16_d16_hi into the high half: no packing).
 * Blocks are unrolled when few (constant offsets), otherwise looped. */

int lower_gemm_amd_operands(L *c, const Stmt *s, int *P)
{
	int sh = gemm_shape(c, s);
	DType in = (DType)BUF(s->src.buf)->dtype;
	if ((sh != MMA_MFMA16 && sh != MMA_WMMA16) || (in != DT_F16 && in != DT_BF16))
		return -1;
	int64_t K = bdim(c, BUF(s->src.buf), s->flag_a ? 0 : 1);
	*P = sh == MMA_MFMA16 && K % 32 == 0 ? 2 : 1;
	return sh;
}

/* One operand of the gemm for S strips: the rows of strip si are
 * r0[si] + (0..15) (operand rows: M for A, N for B), or one pointer for
 * all strips with constant row steps dr[si] when same (shared tiles). */
typedef struct {
	int32_t buf;
	bool trans;     /* operand element (r, k) is buf[k][r] */
	int n;          /* registers per k-step (na / nb) */
	int vec;        /* untransposed: dwords per load (4, 2 or 1) */
	SwzPtr p[RF_MAX_STRIPS];
	int64_t dr[RF_MAX_STRIPS];
	int np;         /* pointers in p */
} AmdOpnd;

/* k offset of lane (i, h) within a block: kstep * P * h */
static void amd_opnd_init(L *c, AmdOpnd *o, int32_t buf, bool trans, int n, const MmaInfo *mi, int P,
			  const AmdLane *ln, int S, const int32_t *rbase, const int64_t *dr, bool one, int32_t kk,
			  bool disjoint)
{
	const Buffer *b = BUF(buf);
	int64_t pitch = bdim(c, b, 1) * 2;
	o->buf = buf;
	o->trans = trans;
	o->n = n;
	int lk = mi->kstep * P; /* k between lane groups h */
	/* dwords per load: dividing the lane's run (P * n dwords), with the
	 * row pitch and the lane's k offset (lk * 2 bytes) aligned to it */
	o->vec = 4;
	while (o->vec > 1 && ((P * n) % o->vec || pitch % (4 * o->vec) || (lk * 2) % (4 * o->vec)))
		o->vec /= 2;
	int32_t lanek = lk ? bin(c, SI_MUL, DT_I32, ln->h, i32c(c, lk)) : i32c(c, 0);
	if (kk >= 0)
		lanek = bin(c, SI_ADD, DT_I32, lanek, kk);
	o->np = one ? 1 : S;
	for (int si = 0; si < S; si++)
		o->dr[si] = one ? dr[si] : 0;
	/* chunk bits of the lane's own column (SwzPtr.cspan): transposed, the
	 * column is the operand row r0 + i (i < 16, 32 bytes: chunk bit 0; the
	 * column steps above it, when disjoint); untransposed, the k column
	 * lanek (wave / 16 lane groups of lk elements: chunks below that span,
	 * block steps of whole blocks above) */
	int kspan = mi->wave / 16 * lk * 2 / 16;
	int cspan = trans ? (disjoint ? 2 : 0) : (kspan < 1 ? 1 : kspan);
	for (int k = 0; k < o->np; k++) {
		int32_t r = bin(c, SI_ADD, DT_I32, rbase[k], ln->i);
		if (trans)
			swz_ptr_init(c, &o->p[k], buf, lanek, r, lk ? lk : 16, cspan);
		else
			swz_ptr_init(c, &o->p[k], buf, r, lanek, 1, cspan);
	}
}

/* The registers of strip si for the whole block (P * n, k-step s at
 * + s * n); kb: the block's first k (constant). */
static void amd_opnd_load(L *c, AmdOpnd *o, int si, int64_t kb, int P, int run, int32_t dst, bool lo_only,
			  bool hi_only)
{
	SwzPtr *p = &o->p[o->np == 1 ? 0 : si];
	int64_t dr = o->dr[si];
	int64_t imm;
	if (!o->trans) {
		if (hi_only)
			return;
		int nd = P * o->n; /* dwords of the lane's k run */
		for (int j = 0; j < nd; j += o->vec) {
			int32_t a = swz_ptr_at(c, p, dr, kb + 2 * j, &imm);
			SInst in = I(SI_LD, DT_I32, dst + j, a, -1);
			in.sub = SP_SHARED;
			in.imm = imm;
			in.vec = (uint8_t)(o->vec > 1 ? o->vec : 0);
			emit(c, in);
		}
		return;
	}
	DType t = (DType)BUF(o->buf)->dtype;
	for (int s = 0; s < P; s++)
		for (int j = 0; j < o->n; j++) {
			int64_t k = kb + s * run + 2 * j;
			int32_t r = dst + s * o->n + j;
			if (!hi_only) { /* low half, zero-extended */
				int32_t a = swz_ptr_at(c, p, k, dr, &imm);
				SInst in = I(SI_LD, t, r, a, -1);
				in.sub = SP_SHARED;
				in.imm = imm;
				emit(c, in);
			}
			if (!lo_only) { /* high half, the low one kept */
				int32_t a = swz_ptr_at(c, p, k + 1, dr, &imm);
				SInst in = I(SI_LD, t, r, a, -1);
				in.sub = SP_SHARED;
				in.imm = imm;
				in.c = r;
				emit(c, in);
			}
		}
}

/* The gemm's k range for S strips (tm/tn: tile row/column registers of
 * each strip, acc0 its first C register; same_cols: all strips share the
 * B fragments). */
static void amd_kblocks(L *c, const Stmt *s, const AmdTiling *t, const AmdLane *ln, int S, const int32_t *tm,
			const int32_t *tn, int32_t acc0, bool same_cols, int64_t K)
{
	const MmaInfo *mi = &simt_mma[t->sh];
	DType in = (DType)BUF(s->src.buf)->dtype;
	int P = 1;
	lower_gemm_amd_operands(c, s, &P);
	int run = mi->na * 2, KB = mi->k * P;
	/* the accumulator's layout may want C^T = B^T A^T (BufLoc.rf_swap) */
	bool swap = c->bl[s->dst.buf].rf >= 0 && c->bl[s->dst.buf].rf_swap;
	int64_t nblk = K / KB;
	/* unrolled when the whole k range is at most 8 blocks and 512 MMAs */
	bool unroll = nblk <= 8 && nblk * P * S * t->NB <= 512;
	int32_t kk = -1, ktop = -1, kend = -1;
	if (!unroll) {
		kk = reg(c, VT_I32);
		emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
		ktop = label(c), kend = label(c);
		place(c, ktop);
		bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	}
	/* strip rows: same_cols strips are W / ntn tiles apart (constant) */
	int32_t ra[RF_MAX_STRIPS], rbb[RF_MAX_STRIPS];
	int64_t dra[RF_MAX_STRIPS], drb[RF_MAX_STRIPS];
	for (int si = 0; si < S; si++) {
		ra[si] = bin(c, SI_MUL, DT_I32, tm[si], i32c(c, 16));
		rbb[si] = bin(c, SI_MUL, DT_I32, tn[si], i32c(c, 16 * t->NB));
		dra[si] = 16LL * si * (same_cols ? t->W / t->ntn : 0);
		drb[si] = 0;
	}
	/* column steps of a transposed operand are disjoint from the lane's
	 * column bits when the steps are powers of two (16 nb below 16 NB;
	 * strips 16 W / ntn apart above the wave's 16 (wave / ntn)) */
	int wn = t->W / t->ntn;
	AmdOpnd A, B;
	amd_opnd_init(c, &A, s->src.buf, s->flag_a, mi->na, mi, P, ln, S, ra, dra, same_cols, kk,
		      !same_cols || !(wn & (wn - 1)));
	amd_opnd_init(c, &B, s->src2.buf, !s->flag_b, mi->nb, mi, P, ln, S, rbb, drb, same_cols, kk, true);
	/* Per block: the low halves of the first B fragment, the A fragments,
	 * then per B fragment u its high halves, the next one's low halves and
	 * u's MMAs (two B fragments live at a time; the loads of u + 1 overlap
	 * u's MMAs) */
	int nbf = same_cols ? 1 : S, nu = nbf * t->NB;
	for (int64_t blk = 0; blk < (unroll ? nblk : 1); blk++) {
		int64_t kb = unroll ? blk * KB : 0;
		int32_t af[RF_MAX_STRIPS], bf[RF_MAX_STRIPS * 8];
		for (int u = 0; u <= nu; u++) {
			/* B fragment u = (strip group g, column group nb): column + 16 nb */
			int g = u / t->NB, nb = u % t->NB;
			if (u < nu) {
				bf[u] = regs_n(c, VT_I32, P * mi->nb);
				B.dr[g] += 16 * nb;
				amd_opnd_load(c, &B, g, kb, P, run, bf[u], true, false);
				B.dr[g] -= 16 * nb;
			}
			if (u == 0) {
				for (int si = 0; si < S; si++) {
					af[si] = regs_n(c, VT_I32, P * mi->na);
					amd_opnd_load(c, &A, si, kb, P, run, af[si], false, false);
				}
				continue;
			}
			int up = u - 1, gp = up / t->NB, nbp = up % t->NB;
			B.dr[gp] += 16 * nbp;
			amd_opnd_load(c, &B, gp, kb, P, run, bf[up], false, true);
			B.dr[gp] -= 16 * nbp;
			/* u - 1's MMAs: one accumulator's k-steps back to back (a
			 * dependent MFMA right after its producer needs no wait) */
			for (int si = same_cols ? 0 : gp; si < (same_cols ? S : gp + 1); si++)
				for (int ks = 0; ks < P; ks++) {
					int32_t acc = acc0 + (si * t->NB + nbp) * mi->nc;
					int32_t ao = af[si] + ks * mi->na, bo = bf[up] + ks * mi->nb;
					SInst m = I(SI_MMA, in, acc, swap ? bo : ao, swap ? ao : bo);
					m.c = acc;
					m.sub = (uint8_t)t->sh;
					emit(c, m);
				}
		}
	}
	if (!unroll) {
		emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, KB)));
		bra(c, ktop, -1, false);
		place(c, kend);
	}
}

/* The whole k range of the gemm: k-blocks for f16/bf16 on MFMA16/WMMA16,
 * else a loop of single k-steps. */
static void amd_kloop(L *c, const Stmt *s, const AmdTiling *t, const AmdLane *ln, int S, const int32_t *tm,
		      const int32_t *tn, int32_t acc0, bool same_cols, int64_t K)
{
	int P;
	if (lower_gemm_amd_operands(c, s, &P) == t->sh) {
		amd_kblocks(c, s, t, ln, S, tm, tn, acc0, same_cols, K);
		return;
	}
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	amd_kstep(c, s, t, ln, kk, S, tm, tn, acc0, same_cols);
	emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, simt_mma[t->sh].k)));
	bra(c, ktop, -1, false);
	place(c, kend);
}

/* gemm into a shared/fragment-memory accumulator: each wave loops over
 * its tiles, keeping one strip's C in registers over the whole K. */
void lower_gemm_amd(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K)
{
	AmdTiling t = amd_tiling(c, sh, M, N);
	const MmaInfo *mi = &simt_mma[sh];
	AmdLane ln = amd_lane(c, t.wave);
	const Buffer *C = BUF(s->dst.buf);
	int64_t coff = c->bl[s->dst.buf].smem, ldc = bdim(c, C, 1);
	DType ct = C->dtype == DT_I32 ? DT_I32 : DT_F32; /* i8 inputs accumulate in i32 */
	int32_t tile = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, tile, ln.wave, -1));
	int32_t top = label(c), end = label(c);
	place(c, top);
	bra(c, end, setp(c, CMP_GE, DT_I32, tile, i32c(c, t.ntiles)), false);
	int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, t.ntn));
	int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, t.ntn));
	int32_t acc = regs_n(c, simt_vt(ct), t.NB * mi->nc);
	/* C element (row0 + q * qrow, col0 + 16 nb) at cbase + imm */
	int32_t row0 = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)),
			   bin(c, SI_MUL, DT_I32, ln.h, i32c(c, mi->hrow)));
	int32_t col0 = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 16 * t.NB)), ln.i);
	int32_t cbase = sh_addr2(c, s->dst.buf, row0, col0);
	for (int nb = 0; nb < t.NB; nb++)
		for (int q = 0; q < mi->nc; q++) {
			int32_t dst = acc + nb * mi->nc + q;
			if (s->flag_clear) {
				emit(c, I(ct == DT_I32 ? SI_MOVI : SI_MOVF, ct, dst, -1, -1));
				continue;
			}
			SInst l = I(SI_LD, ct, dst, cbase, -1);
			l.sub = SP_SHARED;
			l.imm = coff + ((int64_t)q * mi->qrow * ldc + 16 * nb) * 4;
			emit(c, l);
		}
	amd_kloop(c, s, &t, &ln, 1, &tm, &tn, acc, false, K);
	for (int nb = 0; nb < t.NB; nb++)
		for (int q = 0; q < mi->nc; q++)
			st(c, SP_SHARED, ct, cbase, coff + ((int64_t)q * mi->qrow * ldc + 16 * nb) * 4,
			   acc + nb * mi->nc + q, -1);
	emit(c, I(SI_ADD, DT_I32, tile, tile, i32c(c, t.W)));
	bra(c, top, -1, false);
	place(c, end);
	c->f->nmma++;
}

/* gemm into a register fragment (rf_place laid it out for shape sh). */
void lower_gemm_amd_rf(L *c, const Stmt *s, int64_t K)
{
	const BufLoc *bl = &c->bl[s->dst.buf];
	const Buffer *C = BUF(s->dst.buf);
	/* gfx942's fp8 MFMA has the C layout (and tiling) of the f16 shape the
	 * fragment was laid out for; only its k differs. */
	int sh = gemm_shape(c, s) == MMA_MFMA16X32_FP8 ? MMA_MFMA16X32_FP8 : bl->rf_shape;
	AmdTiling t = amd_tiling(c, sh, bdim(c, C, 0), bdim(c, C, 1));
	const MmaInfo *mi = &simt_mma[t.sh];
	int S = bl->rf_n / (t.NB * mi->nc);
	if (s->flag_clear)
		for (int e = 0; e < bl->rf_n; e++)
			emit(c, I(bl->rf_dtype == DT_I32 ? SI_MOVI : SI_MOVF, (DType)bl->rf_dtype, bl->rf + e, -1, -1));
	AmdLane ln = amd_lane(c, t.wave);
	int32_t tm[RF_MAX_STRIPS], tn[RF_MAX_STRIPS];
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, ln.wave, i32c(c, t.W * si));
		tm[si] = bin(c, SI_DIV, DT_U32, tile, i32c(c, t.ntn));
		tn[si] = bin(c, SI_REM, DT_U32, tile, i32c(c, t.ntn));
	}
	amd_kloop(c, s, &t, &ln, S, tm, tn, bl->rf, t.W % t.ntn == 0, K);
	c->f->nmma++;
}
