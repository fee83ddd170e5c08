/* lower_mma.c — gemm: the matrix shapes (simt_mma), PTX mma and AMD
 * MFMA/WMMA tilings, the scalar fallback, and accumulators that stay in
 * registers in the MMA C layout (rf_*: eligibility, registers, element
 * loops, copies). */
#include "lower_impl.h"

static void lower_gemm_mma_rf(L *c, const Stmt *s, int64_t K);
static void lower_gemm_amd(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K);
static void lower_gemm_amd_rf(L *c, const Stmt *s, int64_t K);

/* 8-column groups per warp strip of an mma gemm: NB * 8 columns share one A fragment.
 * The sm_90a GEMM path (c->wg) needs the wgmma accumulator layout: a warp's
 * strip spans all N columns (NB = N / 8). */
static int gemm_nb(const L *c, int64_t N)
{
	if (c->wg && N % 8 == 0 && N / 8 <= 32)
		return (int)(N / 8);
	return (N / 8) % 8 == 0 ? 8 : (N / 8) % 4 == 0 ? 4 : (N / 8) % 2 == 0 ? 2 : 1;
}

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
static bool warp_shape(int sh)
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
static int target_shape(L *c, int64_t N, DType in)
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
static int gemm_shape(L *c, const Stmt *s)
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
	const Buffer *b = BUF(bufid);
	int32_t lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, i, i32c(c, bdim(c, b, 1))), j);
	return bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, lin, i32c(c, dtype_bytes((DType)b->dtype))));
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
static int32_t frag_a(L *c, const Stmt *s, int32_t r0, int32_t r8, int32_t k0, int32_t k8)
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
static int32_t frag_b(L *c, const Stmt *s, int32_t n, int32_t k0, int32_t k8)
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
	int NB = gemm_nb(c, N);
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
		else
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

/* Tiling of an M x N accumulator for an AMD shape. */
typedef struct {
	int sh, wave, W, NB, ntn;
	int64_t ntiles;
} AmdTiling;

static AmdTiling amd_tiling(L *c, int sh, int64_t M, int64_t N)
{
	AmdTiling t;
	t.sh = sh;
	t.wave = simt_mma[sh].wave;
	t.W = c->nthreads / t.wave;
	t.NB = nb_units(N / 16);
	t.ntn = (int)(N / (16 * t.NB));
	t.ntiles = (M / 16) * t.ntn;
	return t;
}

/* Per-lane values of an AMD shape: i = lane % 16, h = lane / 16, the wave. */
typedef struct {
	int32_t wave, i, h;
} AmdLane;

static AmdLane amd_lane(L *c, int wave)
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
		SInst m = I(SI_MMA, in, acc, af[si], bf);
		m.c = acc;
		m.sub = (uint8_t)t->sh;
		emit(c, m);
	}
}

/* gemm into a shared/fragment-memory accumulator: each wave loops over
 * its tiles, keeping one strip's C in registers over the whole K. */
static void lower_gemm_amd(L *c, const Stmt *s, int sh, int64_t M, int64_t N, int64_t K)
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
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	amd_kstep(c, s, &t, &ln, kk, 1, &tm, &tn, acc, false);
	emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, mi->k)));
	bra(c, ktop, -1, false);
	place(c, kend);
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
static void lower_gemm_amd_rf(L *c, const Stmt *s, int64_t K)
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
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	amd_kstep(c, s, &t, &ln, kk, S, tm, tn, bl->rf, t.W % t.ntn == 0);
	emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, mi->k)));
	bra(c, ktop, -1, false);
	place(c, kend);
	c->f->nmma++;
}

/* ---- register-resident fragments ---------------------------------------
 *
 * A 2-D f32 fragment that is the accumulator of an mma gemm lives in
 * registers, in the MMA C layout, when every other use is layout-agnostic:
 * clear/fill, whole-buffer copies to or from a non-fragment, and parallel
 * loops over exactly its shape that touch it only at [i, j] with the loop
 * variables.  Thread (warp w, lane l; g = l/4, t = l%4) holds slots
 * e = (s * NB + nb) * 4 + q for strips s < S = tiles / warps:
 *   tile = w + warps * s, row = (tile / ntn) * 16 + g + 8 * (q >> 1),
 *   col = (tile % ntn) * 8 * NB + 8 * nb + 2t + (q & 1).
 * Nothing else can see these elements, so they need no barriers. */

typedef struct {
	uint8_t *bad, *acc;
	const int32_t *par_vars; /* the enclosing parallel's two vars, or NULL */
	const Stmt *par;
	/* MMA-row fragments: rbad (ineligible), rlink (seen with a register
	 * fragment this pass: a reduction or a read in its parallel), the
	 * tile shape they all share (key), the current parallel's row
	 * fragments and 2-D fragments, and whether it does anything else */
	uint8_t *rbad, *rlink;
	int64_t keyR, keyC;
	bool key_off, changed, judge;
	int32_t prow[16], ptile[16];
	int nprow, nptile;
	bool pother;
} RfScan;

static int rr_rows(L *c, int64_t R, int64_t C, int *strips_per_row);

/* A candidate MMA-row fragment: an f32 fragment of rank 1. */
static bool rr_cand(L *c, int32_t b)
{
	return is_frag(c, b) && BUF(b)->rank == 1 && BUF(b)->dtype == DT_F32;
}

static void rr_bad(RfScan *r, int32_t b)
{
	if (!r->rbad[b])
		r->rbad[b] = 1, r->changed = true;
}

static void rf_bad(RfScan *r, int32_t b)
{
	if (!r->bad[b])
		r->bad[b] = 1, r->changed = true;
}

/* Row fragment b goes with a tile fragment of shape R x C (one key for all). */
static void rr_link(RfScan *r, int32_t b, int64_t R, int64_t C)
{
	if (!r->keyR)
		r->keyR = R, r->keyC = C;
	if (R != r->keyR || C != r->keyC)
		r->key_off = true;
	r->rlink[b] = 1;
}

/* Slots per lane a register fragment of shape sh may take.  128 fit the
 * VGPRs next to the operands and addresses; on gfx90a/gfx942 (the wave64
 * MFMA shapes) a fragment of 129..256 slots lives in the AGPRs instead:
 * the MFMA reads and writes it there (acc_cd) and the AGPR file holds 256
 * per lane beside the 256 VGPRs.  Smaller fragments stay in VGPRs, where
 * element code needs no v_accvgpr_read/write. */
static int rf_max_slots(L *c, int sh)
{
	(void)c;
	return sh > MMA_M16N8K16 && simt_mma[sh].wave == 64 ? 256 : 128;
}

/* An element access F[args] is fine only as F[i, j] of a parallel over F's shape. */
static void rf_access(L *c, RfScan *r, int32_t b, int32_t nargs, const int32_t *args, bool store)
{
	if (!is_frag(c, b))
		return;
	const Stmt *p = r->par;
	if (rr_cand(c, b)) { /* D[i] of a parallel over (R) or (R, C); stored only in the former */
		int64_t ext;
		bool ok = p && nargs == 1 && (p->nvars == 1 || p->nvars == 2) && EX(args[0])->kind == E_VAR &&
			  EX(args[0])->var == p->vars[0] && ir_const_int(c->m, p->extents[0], &ext) &&
			  ext == bdim(c, BUF(b), 0) && !(store && p->nvars == 2) && r->nprow < 16;
		if (ok)
			r->prow[r->nprow++] = b;
		else
			rr_bad(r, b);
		return;
	} else if (p && p->nvars == 1) {
		r->pother = true;
	}
	bool ok = p && p->nvars == 2 && nargs == 2 && BUF(b)->rank == 2;
	for (int d = 0; ok && d < 2; d++) {
		const Expr *x = EX(args[d]);
		int64_t ext;
		ok = x->kind == E_VAR && x->var == p->vars[d] && ir_const_int(c->m, p->extents[d], &ext) &&
		     ext == bdim(c, BUF(b), d);
	}
	if (!ok)
		rf_bad(r, b);
	else if (r->nptile < 16)
		r->ptile[r->nptile++] = b;
}

static void rf_expr(L *c, RfScan *r, int32_t id)
{
	if (id < 0)
		return;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD)
		rf_access(c, r, e->buf, e->nargs, e->args, false);
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		rf_expr(c, r, e->a);
		if (e->kind == E_BINARY)
			rf_expr(c, r, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs; i++)
			rf_expr(c, r, e->args[i]);
}

static void rf_region_exprs(L *c, RfScan *r, const Region *g)
{
	for (int i = 0; i < g->nidx; i++)
		rf_expr(c, r, g->idx[i]);
}

static void rf_block(L *c, RfScan *r, const Block *b);

/* Any other statement on a row fragment makes it ineligible. */
static void rr_bad_region(L *c, RfScan *r, int32_t b)
{
	if (b >= 0 && rr_cand(c, b))
		rr_bad(r, b);
}

static void rf_stmt(L *c, RfScan *r, int32_t id)
{
	const Stmt *s = ST(id);
	rf_expr(c, r, s->value);
	rf_region_exprs(c, r, &s->src);
	rf_region_exprs(c, r, &s->dst);
	if (r->par && r->par->nvars == 1 && s->kind != S_STORE && s->kind != S_LET && s->kind != S_FOR &&
	    s->kind != S_IF)
		r->pother = true; /* a row parallel holds only element code */
	switch ((StmtKind)s->kind) {
	case S_STORE:
		if (r->par && r->par->nvars == 1 && !rr_cand(c, s->dst.buf))
			r->pother = true;
		rf_access(c, r, s->dst.buf, s->dst.nidx, s->dst.idx, true);
		break;
	case S_COPY:
		if (rr_cand(c, s->src.buf) || rr_cand(c, s->dst.buf)) {
			/* whole copies between row fragments, both in registers or neither */
			bool ok = rr_cand(c, s->src.buf) && rr_cand(c, s->dst.buf) && !s->src.nidx && !s->dst.nidx &&
				  bdim(c, BUF(s->src.buf), 0) == bdim(c, BUF(s->dst.buf), 0) && !r->rbad[s->src.buf] &&
				  !r->rbad[s->dst.buf];
			if (!ok) {
				rr_bad_region(c, r, s->src.buf);
				rr_bad_region(c, r, s->dst.buf);
			}
			break;
		}
		/* whole fragment <-> a non-fragment only, as rows and columns */
		if (is_frag(c, s->src.buf) && (is_frag(c, s->dst.buf) || !lower_window_ok(c, s, &s->src, &s->dst)))
			rf_bad(r, s->src.buf);
		if (is_frag(c, s->dst.buf) && (is_frag(c, s->src.buf) || !lower_window_ok(c, s, &s->dst, &s->src)))
			rf_bad(r, s->dst.buf);
		/* a local destination needs every element in every thread */
		if (is_frag(c, s->src.buf) && BUF(s->dst.buf)->scope == SCOPE_LOCAL)
			rf_bad(r, s->src.buf);
		break;
	case S_GEMM:
		if (is_frag(c, s->src.buf))
			rf_bad(r, s->src.buf);
		if (is_frag(c, s->src2.buf))
			rf_bad(r, s->src2.buf);
		rr_bad_region(c, r, s->src.buf);
		rr_bad_region(c, r, s->src2.buf);
		rr_bad_region(c, r, s->dst.buf);
		int sh = gemm_shape(c, s);
		if (sh >= 0) {
			const Buffer *C = BUF(s->dst.buf);
			int64_t ntiles = (bdim(c, C, 0) / 16) * (bdim(c, C, 1) / (8 * gemm_nb(c, bdim(c, C, 1))));
			int64_t slots = ntiles / (c->nthreads / 32) * gemm_nb(c, bdim(c, C, 1)) * 4;
			int W = c->nthreads / 32;
			if (!warp_shape(sh)) {
				AmdTiling t = amd_tiling(c, sh, bdim(c, C, 0), bdim(c, C, 1));
				ntiles = t.ntiles;
				W = t.W;
				slots = ntiles / W * t.NB * simt_mma[sh].nc;
			}
			/* f32 with f16/bf16/fp8 inputs, i32 with i8 (AMD matrix cores) */
			bool i8 = sh == MMA_MFMA16_I8 || sh == MMA_MFMA16X32_I8 || sh == MMA_WMMA16_I8 ||
				  sh == MMA_M16N8K32_I8;
			if (ntiles % W || slots > rf_max_slots(c, sh) || C->dtype != (i8 ? DT_I32 : DT_F32))
				rf_bad(r, s->dst.buf);
			else
				r->acc[s->dst.buf] = 1;
		} else if (is_frag(c, s->dst.buf)) {
			rf_bad(r, s->dst.buf);
		}
		break;
	case S_CLEAR:
	case S_FILL:
		if (s->dst.nidx)
			rr_bad_region(c, r, s->dst.buf);
		break;
	case S_REDUCE: {
		/* reduce(F, D, dim=1): F in registers and D an MMA-row fragment */
		int32_t F = s->src.buf, D = s->dst.buf;
		bool fok = is_frag(c, F) && BUF(F)->rank == 2 && BUF(F)->dtype == DT_F32 && s->dim == 1 &&
			   !s->src.nidx && !s->dst.nidx && bdim(c, BUF(F), 0) == bdim(c, BUF(D), 0) && !r->bad[F] &&
			   !(r->judge && !r->acc[F]);
		bool ok = fok && rr_cand(c, D) && !r->rbad[D];
		int spr;
		if (ok) {
			rr_link(r, D, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1));
		} else if (fok && BUF(D)->dtype == DT_F32 && BUF(D)->scope != SCOPE_LOCAL &&
			   rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr) > 0) {
			/* F keeps its registers; D (in shared memory: another accumulator
			 * shape owns the row layout) gets the rows (reduce_rf_mem) */
			rr_bad_region(c, r, D);
		} else {
			if (is_frag(c, F))
				rf_bad(r, F);
			rr_bad_region(c, r, F);
			rr_bad_region(c, r, D);
		}
		break;
	}
	case S_CUMSUM:
	case S_ATOMIC_ADD:
		if (is_frag(c, s->src.buf))
			rf_bad(r, s->src.buf);
		if (is_frag(c, s->dst.buf))
			rf_bad(r, s->dst.buf);
		rr_bad_region(c, r, s->src.buf);
		rr_bad_region(c, r, s->dst.buf);
		break;
	case S_FOR:
		rf_expr(c, r, s->lo);
		rf_expr(c, r, s->hi);
		rf_block(c, r, &s->body);
		break;
	case S_IF:
		rf_block(c, r, &s->body);
		rf_block(c, r, &s->els);
		break;
	case S_PARALLEL: {
		if (r->par) { /* nested: not for row fragments */
			r->pother = true;
			rf_block(c, r, &s->body);
			break;
		}
		r->par = s;
		r->nprow = r->nptile = 0;
		r->pother = false;
		rf_block(c, r, &s->body);
		/* Row fragments in a parallel over (R, C) need a register fragment
		 * there (its layout gives the rows); in a parallel over (R) the body
		 * may touch only row fragments, all in registers or none. */
		int32_t F = -1;
		bool anybad = false;
		for (int i = 0; i < r->nptile; i++)
			if (r->acc[r->ptile[i]] && !r->bad[r->ptile[i]] && BUF(r->ptile[i])->dtype == DT_F32)
				F = r->ptile[i];
		for (int i = 0; i < r->nprow; i++)
			anybad |= r->rbad[r->prow[i]];
		for (int i = 0; i < r->nprow; i++) {
			int32_t D = r->prow[i];
			if (s->nvars == 2 && F >= 0)
				rr_link(r, D, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1));
			else if (s->nvars == 2 ? r->judge : (r->pother || anybad))
				rr_bad(r, D);
		}
		r->par = NULL;
		break;
	}
	default: break;
	}
}

static void rf_block(L *c, RfScan *r, const Block *b)
{
	for (int i = 0; i < b->n; i++)
		rf_stmt(c, r, b->ids[i]);
}

/* Row slots per thread of the MMA layout of an R x C f32 register
 * fragment (0: the layout spreads a row's column tiles over several
 * warps, which the register row fragments do not handle), and the strips
 * per distinct tile row (ntn when a warp holds all of a row's column tiles,
 * 1 when each strip is another tile row). */
static int rr_rows(L *c, int64_t R, int64_t C, int *strips_per_row)
{
	int sh = target_shape(c, C, DT_F16), W, ntn, S, rps;
	/* Only whole 16x16 tiles spread evenly over the warps have a layout;
	 * anything else (a fuzzed f32[4, 2], a block of 16 threads) has none. */
	if (sh < 0 || R <= 0 || C <= 0 || R % 16 || C % 16 || c->nthreads < simt_mma[sh].wave)
		return 0;
	if (warp_shape(sh)) {
		int NB = gemm_nb(c, C);
		W = c->nthreads / 32;
		ntn = (int)(C / (8 * NB));
		S = (int)((R / 16) * ntn / W);
		rps = 2;
	} else {
		AmdTiling t = amd_tiling(c, sh, R, C);
		W = t.W;
		ntn = t.ntn;
		S = (int)(t.ntiles / W);
		rps = simt_mma[sh].nc;
	}
	if (W <= 0 || ntn <= 0 || (R / 16) * ntn % W || (ntn > 1 && W > 1))
		return 0;
	*strips_per_row = ntn;
	return S / ntn * rps;
}

/* Marks the eligible fragments (bl[].rf = 1 and bl[].rr = 1 as flags;
 * registers come later).  Register fragments and row fragments depend on
 * each other (a reduction needs both), so the scan repeats until nothing
 * more is found ineligible; a pass is judged only once every gemm has
 * been seen (judge). */
void rf_analyze(L *c)
{
	size_t nb = c->m->bufs.len;
	RfScan r = {.bad = calloc(nb + 1, 1), .acc = calloc(nb + 1, 1), .rbad = calloc(nb + 1, 1), .rlink = calloc(nb + 1, 1)};
	if (!r.bad || !r.acc || !r.rbad || !r.rlink) {
		c->failed = true;
		goto out;
	}
	for (int pass = 0; pass < 64; pass++) {
		r.changed = false;
		r.judge = pass > 0;
		r.keyR = r.keyC = 0;
		r.key_off = false;
		memset(r.rlink, 0, nb + 1);
		rf_block(c, &r, &c->k->body);
		int spr;
		bool layout = r.keyR && !r.key_off && rr_rows(c, r.keyR, r.keyC, &spr) > 0;
		for (size_t b = 0; b < nb; b++)
			if (r.judge && rr_cand(c, (int32_t)b) && !r.rbad[b] && (!layout || !r.rlink[b]))
				rr_bad(&r, (int32_t)b);
		if (!r.changed && pass > 0)
			break;
		if (pass == 63) /* not settled: nothing in registers */
			for (size_t b = 0; b < nb; b++)
				r.bad[b] = r.rbad[b] = 1;
	}
	for (size_t b = 0; b < nb; b++) {
		if (r.acc[b] && !r.bad[b] && BUF(b)->rank == 2 && (BUF(b)->dtype == DT_F32 || BUF(b)->dtype == DT_I32))
			c->bl[b].rf = 1;
		if (rr_cand(c, (int32_t)b) && !r.rbad[b])
			c->bl[b].rr = 1;
	}
	/* the row layout's tile, only when some row fragment uses it: a
	 * parallel over a fragment of that shape then tracks row slots, which
	 * needs rr_rows > 0 (two accumulator shapes leave the rows in shared) */
	bool any_rr = false;
	for (size_t b = 0; b < nb; b++)
		any_rr |= c->bl[b].rr == 1;
	for (size_t b = 0; b < nb && any_rr && c->rr_tile < 0; b++)
		if (c->bl[b].rf == 1 && BUF(b)->dtype == DT_F32 && bdim(c, BUF(b), 0) == r.keyR &&
		    bdim(c, BUF(b), 1) == r.keyC)
			c->rr_tile = (int32_t)b;
	int spr;
	if (c->rr_tile >= 0 && rr_rows(c, r.keyR, r.keyC, &spr) <= 0)
		c->rr_tile = -1;
	if (c->rr_tile < 0) /* no row layout: the row fragments live in shared memory */
		for (size_t b = 0; b < nb; b++)
			c->bl[b].rr = -1;
out:
	free(r.bad);
	free(r.acc);
	free(r.rbad);
	free(r.rlink);
}

/* Per strip s of register fragment b: the row of q = 0 (rb) and the
 * column of nb = 0, q = 0 (cb) for this thread.  Slot e = (s * NB + nb) * 4
 * + q is then at (rb[s] + 8 * (q >> 1), cb[s] + 8 * nb + (q & 1)). */
static int rf_bases(L *c, int32_t b, int32_t *rb, int32_t *cb)
{
	const BufLoc *bl = &c->bl[b];
	if (!warp_shape(bl->rf_shape)) { /* rb: row of q = 0, cb: column of nb = 0 */
		const MmaInfo *mi = &simt_mma[bl->rf_shape];
		int S = bl->rf_n / (bl->rf_nb * mi->nc), W = c->nthreads / mi->wave;
		AmdLane ln = amd_lane(c, mi->wave);
		int32_t hr = bin(c, SI_MUL, DT_I32, ln.h, i32c(c, mi->hrow));
		for (int si = 0; si < S; si++) {
			int32_t tile = bin(c, SI_ADD, DT_I32, ln.wave, i32c(c, W * si));
			int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn));
			int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn));
			rb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)), hr);
			cb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 16 * bl->rf_nb)), ln.i);
		}
		return S;
	}
	int NB = bl->rf_nb, W = c->nthreads / 32, S = bl->rf_n / (NB * 4);
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t g = bin(c, SI_DIV, DT_U32, lane, i32c(c, 4));
	int32_t t2 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, 2));
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, warp, i32c(c, W * si));
		int32_t tm = bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn));
		int32_t tn = bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn));
		rb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tm, i32c(c, 16)), g);
		cb[si] = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, tn, i32c(c, 8 * NB)), t2);
	}
	return S;
}

static void rf_rowcol(L *c, int32_t b, const int32_t *rb, const int32_t *cb, int e, int32_t *row, int32_t *col)
{
	int NB = c->bl[b].rf_nb;
	if (!warp_shape(c->bl[b].rf_shape)) {
		const MmaInfo *mi = &simt_mma[c->bl[b].rf_shape];
		int si = e / (NB * mi->nc), nb = (e / mi->nc) % NB, q = e % mi->nc;
		*row = q ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, q * mi->qrow)) : rb[si];
		*col = nb ? bin(c, SI_ADD, DT_I32, cb[si], i32c(c, 16 * nb)) : cb[si];
		return;
	}
	int si = e / (NB * 4), nb = (e / 4) % NB, q = e % 4;
	*row = q >> 1 ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, 8)) : rb[si];
	*col = 8 * nb + (q & 1) ? bin(c, SI_ADD, DT_I32, cb[si], i32c(c, 8 * nb + (q & 1))) : cb[si];
}

/* The register fragment that a parallel body touches, or -1. */
static int32_t rf_find_expr(L *c, int32_t id)
{
	if (id < 0)
		return -1;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD && c->bl[e->buf].rf >= 0)
		return e->buf;
	int32_t r = -1;
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST) {
		r = rf_find_expr(c, e->a);
		if (r < 0 && e->kind == E_BINARY)
			r = rf_find_expr(c, e->b);
	}
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs && r < 0; i++)
			r = rf_find_expr(c, e->args[i]);
	return r;
}

int32_t rf_find_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		int32_t r = rf_find_expr(c, s->value);
		if (r < 0 && s->kind == S_STORE && c->bl[s->dst.buf].rf >= 0)
			r = s->dst.buf;
		for (int k = 0; r < 0 && k < s->dst.nidx; k++)
			r = rf_find_expr(c, s->dst.idx[k]);
		if (r < 0 && s->kind == S_FOR) {
			r = rf_find_expr(c, s->lo);
			if (r < 0)
				r = rf_find_expr(c, s->hi);
		}
		if (r < 0 && (s->kind == S_FOR || s->kind == S_IF))
			r = rf_find_block(c, &s->body);
		if (r < 0 && s->kind == S_IF)
			r = rf_find_block(c, &s->els);
		if (r >= 0)
			return r;
	}
	return -1;
}

/* Registers for the fragments rf_analyze accepted (after place_bufs). */
void rf_place(L *c, int32_t b)
{
	const Buffer *buf = BUF(b);
	BufLoc *bl = &c->bl[b];
	int64_t M = bdim(c, buf, 0), N = bdim(c, buf, 1);
	/* f32 accumulators have f16/bf16 (or fp8, laid out alike) inputs, i32 ones i8 */
	DType ft = (DType)buf->dtype;
	int sh = target_shape(c, N, ft == DT_I32 ? DT_I8 : DT_F16);
	bl->rf_shape = (uint8_t)sh;
	bl->rf_dtype = (uint8_t)ft;
	if (!warp_shape(sh)) {
		AmdTiling t = amd_tiling(c, sh, M, N);
		bl->rf_nb = (int16_t)t.NB;
		bl->rf_ntn = (int16_t)t.ntn;
		bl->rf_n = (int32_t)(t.ntiles / t.W * t.NB * simt_mma[sh].nc);
		bl->rf = (int32_t)c->f->regs.len;
		for (int i = 0; i < bl->rf_n; i++)
			reg(c, simt_vt(ft));
		bl->rf_agpr = bl->rf_n > 128;
		if (bl->rf_agpr && (vec_push(&c->f->acc, bl->rf) || vec_push(&c->f->acc, bl->rf_n)))
			c->failed = true;
		return;
	}
	int NB = gemm_nb(c, N);
	bl->rf_nb = (int16_t)NB;
	bl->rf_ntn = (int16_t)(N / (8 * NB));
	int64_t ntiles = (M / 16) * bl->rf_ntn;
	bl->rf_n = (int32_t)(ntiles / (c->nthreads / 32) * NB * 4);
	bl->rf = (int32_t)c->f->regs.len;
	for (int i = 0; i < bl->rf_n; i++)
		reg(c, simt_vt(ft));
}

/* Slot e of register fragment b as a value: the register itself, or for
 * an AGPR fragment a copy (only moves may name those registers). */
int32_t rf_get(L *c, int32_t b, int e)
{
	const BufLoc *bl = &c->bl[b];
	if (!bl->rf_agpr)
		return bl->rf + e;
	int32_t r = reg(c, simt_vt((DType)bl->rf_dtype));
	emit(c, I(SI_MOV, (DType)bl->rf_dtype, r, bl->rf + e, -1));
	return r;
}

/* ---- MMA-row fragments -------------------------------------------------
 *
 * An f32 fragment D[R] that goes with register fragments F[R, C] (it is
 * the target of reduce(F, D, dim=1) or read as D[i] in their parallel
 * loops; otherwise only parallel (i) in (R) bodies that touch nothing but
 * row fragments, copies between row fragments and clear/fill) lives in
 * registers: row slot k of a thread is the k-th distinct row its F slots
 * cover.  That needs all column tiles of a row in one warp (ntn == 1, or
 * a single warp: rr_rows), so a row reduction is a per-thread fold and
 * butterfly shuffles among the lanes holding the row's columns: the
 * column of a slot depends on lane % 4 in the PTX m16n8k16 C layout (2t +
 * (q & 1)) and on lane % 16 in the MFMA/WMMA 16x16 layouts (i), while the
 * row does not; so xor 2, 1 (PTX) or 8, 4, 2, 1 (AMD) reach exactly the
 * lanes of the row.  Every lane holding a row ends with the same value. */

/* The row slot of slot e of an F laid out like rr_tile. */
static int rr_slot_of(L *c, int32_t F, int e)
{
	const BufLoc *bl = &c->bl[F];
	int spr;
	rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	if (warp_shape(bl->rf_shape))
		return e / (bl->rf_nb * 4) / spr * 2 + ((e % 4) >> 1);
	int nc = simt_mma[bl->rf_shape].nc;
	return e / (bl->rf_nb * nc) / spr * nc + e % nc;
}

/* The row (i32 register) of row slot k, from F's bases. */
static int32_t rr_row(L *c, int32_t F, const int32_t *rb, const int32_t *cb, int k)
{
	const BufLoc *bl = &c->bl[F];
	int spr, e;
	rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	if (warp_shape(bl->rf_shape)) {
		e = (k / 2) * spr * bl->rf_nb * 4 + 2 * (k % 2);
	} else {
		int nc = simt_mma[bl->rf_shape].nc;
		e = (k / nc) * spr * bl->rf_nb * nc + k % nc;
	}
	int32_t row, col;
	rf_rowcol(c, F, rb, cb, e, &row, &col);
	return row;
}

void rr_place(L *c, int32_t b)
{
	int spr;
	const Buffer *F = BUF(c->rr_tile);
	BufLoc *bl = &c->bl[b];
	bl->rr_n = rr_rows(c, bdim(c, F, 0), bdim(c, F, 1), &spr);
	bl->rr = (int32_t)c->f->regs.len;
	for (int k = 0; k < bl->rr_n; k++)
		reg(c, VT_F32);
}

static bool rr_find_expr(L *c, int32_t id)
{
	if (id < 0)
		return false;
	const Expr *e = EX(id);
	if (e->kind == E_LOAD && c->bl[e->buf].rr >= 0)
		return true;
	bool r = false;
	if (e->kind == E_UNARY || e->kind == E_BINARY || e->kind == E_CAST)
		r = rr_find_expr(c, e->a) || (e->kind == E_BINARY && rr_find_expr(c, e->b));
	if (e->kind == E_LOAD || e->kind == E_CALL)
		for (int i = 0; i < e->nargs && !r; i++)
			r = rr_find_expr(c, e->args[i]);
	return r;
}

bool rr_find_block(L *c, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = ST(b->ids[i]);
		if (rr_find_expr(c, s->value) || (s->kind == S_STORE && c->bl[s->dst.buf].rr >= 0))
			return true;
		for (int k = 0; k < s->dst.nidx; k++)
			if (rr_find_expr(c, s->dst.idx[k]))
				return true;
		if (s->kind == S_FOR && (rr_find_expr(c, s->lo) || rr_find_expr(c, s->hi)))
			return true;
		if ((s->kind == S_FOR || s->kind == S_IF) && (rr_find_block(c, &s->body) || rr_find_block(c, &s->els)))
			return true;
	}
	return false;
}

/* parallel (i) in (R) over row fragments: once per row slot, i = its row
 * (the lanes sharing a row compute the same values). */
void lower_parallel_rr(L *c, const Stmt *s)
{
	Shadows sh;
	int32_t ids[16];
	lower_shadows_begin(c, &s->body, &sh, ids);
	bool was = c->par;
	c->par = true;
	int32_t F = c->rr_tile, rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	int spr, n = rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	rf_bases(c, F, rb, cb);
	for (int k = 0; k < n && !c->failed; k++) {
		c->varreg[s->vars[0]] = cvt(c, (DType)VAR(s->vars[0])->type, DT_I32, rr_row(c, F, rb, cb, k));
		c->rr_slot = k;
		lower_shadows_copy(c, &sh);
		lower_block(c, &s->body);
	}
	c->rr_slot = -1;
	c->par = was;
	lower_shadows_end(c, &sh);
}

/* reduce(F, D, dim=1), F a register fragment and D a row fragment: per
 * row slot a balanced fold of the thread's slots of that row (in layout
 * order; abs first for abssum/absmax), then the butterfly among the row's
 * lanes, then the old value for clear=false. */
/* Row slot k of register fragment F reduced: a balanced fold of the
 * thread's slots of that row (in layout order; abs first for abssum/absmax),
 * then the butterfly among the row's lanes (all end with the value). */
static int32_t rr_fold(L *c, int32_t F, int k, ReduceOp op)
{
	const BufLoc *fl = &c->bl[F];
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	bool ab = op == RED_ABSSUM || op == RED_ABSMAX;
	int lanes = warp_shape(fl->rf_shape) ? 4 : 16;
	int32_t vals[256];
	int n = 0;
	for (int e = 0; e < fl->rf_n && n < 256; e++)
		if (rr_slot_of(c, F, e) == k) {
			int32_t x = rf_get(c, F, e);
			vals[n++] = ab ? un(c, SI_ABS, DT_F32, x) : x;
		}
	for (int w = 1; w < n; w *= 2)
		for (int i = 0; i + w < n; i += 2 * w)
			vals[i] = lower_combine(c, cop, DT_F32, vals[i], vals[i + w]);
	int32_t acc = vals[0];
	for (int off = lanes / 2; off >= 1; off /= 2) {
		int32_t other = reg(c, VT_F32);
		SInst in = I(SI_SHFL_BFLY, DT_F32, other, acc, -1);
		in.imm = off;
		emit(c, in);
		acc = lower_combine(c, cop, DT_F32, acc, other);
	}
	return acc;
}

void reduce_rr(L *c, const Stmt *s)
{
	int32_t F = s->src.buf, D = s->dst.buf;
	ReduceOp op = (ReduceOp)s->sub;
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	for (int k = 0; k < c->bl[D].rr_n; k++) {
		int32_t acc = rr_fold(c, F, k, op);
		int32_t d = c->bl[D].rr + k;
		emit(c, I(SI_MOV, DT_F32, d, s->flag_clear ? acc : lower_combine(c, cop, DT_F32, d, acc), -1));
	}
}

/* reduce(F, D, dim=1) with F a register fragment and D in shared memory:
 * the row folds of reduce_rr, then the first lane holding each row writes
 * it (the other lanes of the row hold the same value). */
void reduce_rf_mem(L *c, const Stmt *s)
{
	int32_t F = s->src.buf, D = s->dst.buf;
	const BufLoc *fl = &c->bl[F];
	ReduceOp op = (ReduceOp)s->sub;
	ReduceOp cop = op == RED_ABSSUM ? RED_SUM : op == RED_ABSMAX ? RED_MAX : op;
	bool warp = warp_shape(fl->rf_shape);
	int spr, n = rr_rows(c, bdim(c, BUF(F), 0), bdim(c, BUF(F), 1), &spr);
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	rf_bases(c, F, rb, cb);
	int32_t lane = warp ? bin(c, SI_REM, DT_U32, c->tid, i32c(c, 4)) : amd_lane(c, simt_mma[fl->rf_shape].wave).i;
	int32_t first = setp(c, CMP_EQ, DT_I32, lane, i32c(c, 0));
	for (int k = 0; k < n; k++) {
		int32_t acc = rr_fold(c, F, k, op);
		int32_t row = rr_row(c, F, rb, cb, k);
		if (!s->flag_clear)
			acc = lower_combine(c, cop, DT_F32, lower_load_elem(c, D, &row, -1), acc); /* every lane: a row is in one warp */
		lower_store_elem(c, D, &row, acc, first);
	}
}

void lower_parallel_rf(L *c, const Stmt *s, int32_t F)
{
	Shadows sh;
	int32_t ids[16];
	lower_shadows_begin(c, &s->body, &sh, ids);
	bool was = c->par;
	c->par = true;
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	rf_bases(c, F, rb, cb);
	bool rows = c->rr_tile >= 0 && bdim(c, BUF(F), 0) == bdim(c, BUF(c->rr_tile), 0) &&
		    bdim(c, BUF(F), 1) == bdim(c, BUF(c->rr_tile), 1);
	for (int e = 0; e < c->bl[F].rf_n && !c->failed; e++) {
		int32_t row, col;
		rf_rowcol(c, F, rb, cb, e, &row, &col);
		c->rr_slot = rows ? rr_slot_of(c, F, e) : -1;
		c->varreg[s->vars[0]] = cvt(c, (DType)VAR(s->vars[0])->type, DT_I32, row);
		c->varreg[s->vars[1]] = cvt(c, (DType)VAR(s->vars[1])->type, DT_I32, col);
		c->rf_slot = e;
		lower_shadows_copy(c, &sh);
		lower_block(c, &s->body);
	}
	c->rf_slot = c->rr_slot = -1;
	c->par = was;
	lower_shadows_end(c, &sh);
}

/* Whole register fragment <-> a tile of a global/shared buffer.  Row
 * addresses and row bounds are computed once per strip half; each slot
 * then costs a column add, a column check and the access. */
void copy_rf(L *c, const Stmt *s)
{
	bool from = c->bl[s->src.buf].rf >= 0;
	int32_t F = from ? s->src.buf : s->dst.buf;
	const Region *other = from ? &s->dst : &s->src;
	const Buffer *ob = BUF(other->buf);
	DType ot = (DType)ob->dtype;
	DType ft = (DType)c->bl[F].rf_dtype;
	int es = dtype_bytes(ot), NB = c->bl[F].rf_nb;
	bool glob = ob->scope == SCOPE_GLOBAL;
	const BufLoc *obl = &c->bl[other->buf];
	Window w = lower_window(c, s, other); /* rank-reducing tiles: fixed indices in the base */
	int32_t off0 = w.off[0], off1 = w.off[1], d1 = w.pitch;
	int32_t shb = !glob && w.base >= 0 ? bin(c, SI_ADD, DT_I32, c->shbase, bin(c, SI_MUL, DT_I32, w.base, i32c(c, es)))
	                                   : c->shbase;
	int32_t rb[RF_MAX_STRIPS], cb[RF_MAX_STRIPS];
	int S = rf_bases(c, F, rb, cb);
	int32_t esr = i32c(c, es);
	/* rows per strip and slots per row: PTX h (rows g, g + 8) x (nb, q1);
	 * AMD shapes q (rows rb + q * qrow) x nb */
	int sh = c->bl[F].rf_shape, nc = simt_mma[sh].nc, qrow = simt_mma[sh].qrow;
	bool amd = !warp_shape(sh);
	int nrows = amd ? nc : 2, ncols = amd ? NB : 2 * NB;
	/* AMD shapes: a lane's rows share its columns, so the global row
	 * stride and the column checks are computed once (rs[h], colok[nb]) */
	int32_t rs[8] = {0}, colok[8];
	if (amd && glob) {
		int32_t stride = bin(c, SI_MUL, DT_I64, w.pitch, movi(c, DT_I64, es));
		for (int h = 1; h < nrows; h++)
			rs[h] = bin(c, SI_MUL, DT_I64, stride, movi(c, DT_I64, h * qrow));
	}
	for (int si = 0; si < S; si++) {
		int32_t ocb = bin(c, SI_ADD, DT_I32, off1, cb[si]);
		for (int nb = 0; amd && glob && nb < NB; nb++)
			colok[nb] = setp(c, CMP_LT, DT_U32, nb ? bin(c, SI_ADD, DT_I32, ocb, i32c(c, 16 * nb)) : ocb,
					 w.bound[1]);
		int32_t rowaddr0 = -1;
		for (int h = 0; h < nrows; h++) {
			int dr = amd ? h * qrow : 8 * h;
			int32_t orow = bin(c, SI_ADD, DT_I32, off0, dr ? bin(c, SI_ADD, DT_I32, rb[si], i32c(c, dr)) : rb[si]);
			int32_t rowok = glob ? setp(c, CMP_LT, DT_U32, orow, w.bound[0]) : -1;
			if (w.ok >= 0)
				rowok = bin(c, SI_AND, DT_BOOL, rowok, w.ok);
			/* address of (orow, ocb) */
			int32_t rowaddr;
			if (glob && amd && h) {
				rowaddr = bin(c, SI_ADD, DT_I64, rowaddr0, rs[h]);
			} else if (glob) {
				int32_t lin = bin(c, SI_ADD, DT_I64, bin(c, SI_MUL, DT_I64, cvt(c, DT_I64, DT_I32, orow), w.pitch),
				                  cvt(c, DT_I64, DT_I32, ocb));
				rowaddr = bin(c, SI_ADD, DT_I64, w.base, bin(c, SI_MUL, DT_I64, lin, movi(c, DT_I64, es)));
				rowaddr0 = rowaddr;
			} else {
				int32_t lin = bin(c, SI_ADD, DT_I32, bin(c, SI_MUL, DT_I32, orow, d1), ocb);
				rowaddr = bin(c, SI_ADD, DT_I32, shb, bin(c, SI_MUL, DT_I32, lin, esr));
			}
			/* PTX, f16/bf16 out: a row half whose columns are all inside and
			 * whose address is 4-byte aligned (the columns are even: cb and
			 * 8 nb are; the row start and the tensor's base decide) goes
			 * out as packed column pairs, one 32-bit store each; any other
			 * row takes the per-element stores below. */
			bool pairs = from && glob && !amd && es == 2 && target_is_nvidia(c->t->id);
			int32_t lslow = -1, lend = -1;
			if (pairs) {
				int32_t lo = bin(c, SI_AND, DT_I32, cvt(c, DT_I32, DT_I64, rowaddr), i32c(c, 3));
				int32_t fast = bin(c, SI_AND, DT_BOOL, rowok, setp(c, CMP_EQ, DT_I32, lo, i32c(c, 0)));
				int32_t last = bin(c, SI_ADD, DT_I32, ocb, i32c(c, 8 * (NB - 1) + 1));
				fast = bin(c, SI_AND, DT_BOOL, fast, setp(c, CMP_LT, DT_U32, ocb, obl->dim[1]));
				fast = bin(c, SI_AND, DT_BOOL, fast, setp(c, CMP_LT, DT_U32, last, obl->dim[1]));
				lslow = label(c), lend = label(c);
				bra(c, lslow, fast, true);
				for (int nb = 0; nb < NB; nb++) {
					int e0 = (si * NB + nb) * 4 + h * 2;
					int32_t v0 = pack(c, ot, cvt(c, ot, ft, rf_get(c, F, e0)));
					int32_t v1 = pack(c, ot, cvt(c, ot, ft, rf_get(c, F, e0 + 1)));
					int32_t pk = reg(c, VT_I32);
					emit(c, I(SI_PACK2, DT_I32, pk, v0, v1));
					st(c, SP_GLOBAL, DT_I32, rowaddr, (int64_t)8 * nb * es, pk, -1);
				}
				bra(c, lend, -1, false);
				place(c, lslow);
			}
			for (int x = 0; x < ncols; x++) {
				int nb = amd ? x : x / 2, q1 = amd ? 0 : x % 2;
				int e = amd ? (si * NB + nb) * nc + h : (si * NB + nb) * 4 + h * 2 + q1;
				int dc = amd ? 16 * nb : 8 * nb + q1;
				int32_t ok = rowok;
				if (glob && amd) {
					ok = bin(c, SI_AND, DT_BOOL, rowok, colok[nb]);
				} else if (glob) {
					int32_t ocol = bin(c, SI_ADD, DT_I32, ocb, i32c(c, dc));
					ok = bin(c, SI_AND, DT_BOOL, rowok, setp(c, CMP_LT, DT_U32, ocol, w.bound[1]));
				}
				Space sp = glob ? SP_GLOBAL : SP_SHARED;
				int64_t imm = (int64_t)dc * es + (glob ? 0 : obl->smem);
				int32_t r = c->bl[F].rf + e;
				if (from) {
					r = rf_get(c, F, e);
					/* f16/bf16 pack rounds like the cvt (the PTX path keeps both) */
					bool direct = amd && ft == DT_F32 && (ot == DT_F16 || ot == DT_BF16);
					st(c, sp, ot, rowaddr, imm, pack(c, ot, direct ? r : cvt(c, ot, ft, r)), ok);
					continue;
				}
				int32_t v = ok >= 0 ? zero_storage(c, ot) : reg(c, simt_storage_vt(ot));
				SInst in = I(SI_LD, ot, v, rowaddr, -1);
				in.sub = (uint8_t)sp;
				in.imm = imm;
				in.guard = ok;
				emit(c, in);
				emit(c, I(SI_MOV, ft, r, cvt(c, ft, ot, unpack(c, ot, v)), -1));
			}
			if (pairs)
				place(c, lend);
		}
	}
}

static void lower_gemm_mma_rf(L *c, const Stmt *s, int64_t K)
{
	const BufLoc *bl = &c->bl[s->dst.buf];
	int W = c->nthreads / 32, NB = bl->rf_nb, S = bl->rf_n / (NB * 4);
	DType in = (DType)BUF(s->src.buf)->dtype;
	int sh = bl->rf_shape;
	bool s8 = sh == MMA_M16N8K32_I8; /* four i8 per register: k offsets 4t, 4t + 16 */
	if (s->flag_clear)
		for (int e = 0; e < bl->rf_n; e++)
			emit(c, I(s8 ? SI_MOVI : SI_MOVF, (DType)bl->rf_dtype, bl->rf + e, -1, -1));
	int32_t warp = bin(c, SI_DIV, DT_U32, c->tid, i32c(c, 32));
	int32_t lane = bin(c, SI_REM, DT_U32, c->tid, i32c(c, 32));
	int32_t g = bin(c, SI_DIV, DT_U32, lane, i32c(c, 4));
	int32_t t2 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, lane, i32c(c, 4)), i32c(c, s8 ? 4 : 2));
	int32_t kk = reg(c, VT_I32);
	emit(c, I(SI_MOV, DT_I32, kk, i32c(c, 0), -1));
	int32_t ktop = label(c), kend = label(c);
	place(c, ktop);
	bra(c, kend, setp(c, CMP_GE, DT_I32, kk, i32c(c, K)), false);
	int32_t k0 = bin(c, SI_ADD, DT_I32, kk, t2), k8 = bin(c, SI_ADD, DT_I32, k0, i32c(c, s8 ? 16 : 8));
	for (int si = 0; si < S; si++) {
		int32_t tile = bin(c, SI_ADD, DT_I32, warp, i32c(c, W * si));
		int32_t r0 = bin(c, SI_ADD, DT_I32,
		                 bin(c, SI_MUL, DT_I32, bin(c, SI_DIV, DT_U32, tile, i32c(c, bl->rf_ntn)), i32c(c, 16)), g);
		int32_t r8 = bin(c, SI_ADD, DT_I32, r0, i32c(c, 8));
		int32_t n0 = bin(c, SI_MUL, DT_I32, bin(c, SI_REM, DT_U32, tile, i32c(c, bl->rf_ntn)), i32c(c, 8 * NB));
		int32_t af = frag_a(c, s, r0, r8, k0, k8);
		for (int nb = 0; nb < NB; nb++) {
			int32_t n = bin(c, SI_ADD, DT_I32, bin(c, SI_ADD, DT_I32, n0, i32c(c, 8 * nb)), g);
			int32_t bf = frag_b(c, s, n, k0, k8);
			int32_t acc = bl->rf + (si * NB + nb) * 4;
			SInst m = I(SI_MMA, in, acc, af, bf);
			m.c = acc;
			m.sub = (uint8_t)sh;
			emit(c, m);
		}
	}
	emit(c, I(SI_ADD, DT_I32, kk, kk, i32c(c, simt_mma[sh].k)));
	bra(c, ktop, -1, false);
	place(c, kend);
	c->f->nmma++;
}
