/* amd_hazard.c — wait states the hardware does not provide by itself.
 *
 * The rules are LLVM 19's GCNHazardRecognizer for gfx90a, gfx942 and
 * gfx1100, restricted to what tileasm can emit; docs/amd-backend.md
 * ("waitcnt and hazards") has the full table, which rules are handled
 * here and which the code generator cannot produce.  Each rule was
 * checked against llc-19 -run-pass=post-RA-hazard-rec on MIR snippets.
 *
 * gfx90a/gfx942 (wait states, filled with s_nop k = k+1 wait states, every
 * other instruction counting one):
 *   VALU writes an SGPR (or exec) -> VMEM reads it: 5;
 *   VALU writes a VGPR -> a DPP instruction reads it as src0: 2;
 *   VALU writes an SGPR -> v_readlane/v_writelane lane select: 4;
 *   VALU writes vcc -> v_div_fmas (reads it implicitly): 4;
 *   gfx942: VALU writes an SGPR -> VALU reads it (v_cmp -> v_cndmask): 2;
 *   gfx942: VALU writes exec -> v_readlane/v_readfirstlane/v_writelane: 4;
 *   gfx942: VALU writes a VGPR -> v_readlane/v_readfirstlane reads it: 1;
 *   gfx942: transcendental result -> non-transcendental VALU use: 1;
 *   gfx942: VALU writing the high half of its result (op_sel dst bit,
 *           e.g. v_cvt_pk_fp8_f32 op_sel:[0,0,1]) -> VALU use: 1;
 *   VMEM store of more than 8 bytes -> VALU overwrites its data: 1 on
 *           gfx90a, 2 on gfx942;
 *   soft clauses (xnack): in a run of SMEM, or of VMEM, instructions one
 *           writing a register the run reads, or a store after one with
 *           results: s_nop 0 breaks the clause;
 *   MFMA (amd-isa.md §9.2, §9.3): an MFMA result read or overwritten by
 *           another instruction, or read as another MFMA's A/B or as an
 *           overlapping (not identical) C, needs wait states that grow
 *           with the pass count; an MFMA reading a VGPR a VALU just wrote
 *           needs 2, after a VALU exec write 4; a VALU overwriting an
 *           MFMA's C (WAR) N - 1;
 *   gfx90a: 64-bit shift whose amount is v(8k+7) with v(8k+8) unused
 *           (Shift64HighRegBug): the amount moves to another VGPR around it.
 * gfx1100 (inserted instructions, not counts):
 *   VALUTransUseHazard: a VALU reading a transcendental's result with at
 *           most 5 VALUs / 1 transcendental since gets s_waitcnt_depctr
 *           0xfff (va_vdst(0)) before it; VMEM/LDS in between clear it;
 *   WMMA: a WMMA whose A/B overlaps the previous WMMA's D with no VALU
 *           between gets a v_nop;
 *   VALUMaskWriteHazard (wave64 only): an SALU writing an SGPR that the
 *           latest SGPR-reading VALU read as a lane mask (v_cndmask
 *           selector, carry-in) gets s_waitcnt_depctr 0xfffe (sa_sdst(0))
 *           after it.
 * All state crosses branches (an accumulation loop's back edge): each block
 * starts from the union of its predecessors' end states.  Entries expire
 * after at most 19 wait states (5 VALUs for the gfx1100 transcendental
 * rule), so a few analysis rounds in layout order before the emitting one
 * settle the loops the lowering emits (see amd_hazard). */
#include "amd.h"

#include <stddef.h>
#include <stdlib.h>

static bool is_trans(unsigned op)
{
	switch (op) {
	case ISA_V_EXP_F32: case ISA_V_LOG_F32: case ISA_V_RCP_F32: case ISA_V_RSQ_F32: case ISA_V_SQRT_F32:
	case ISA_V_SIN_F32: case ISA_V_COS_F32: case ISA_V_RCP_IFLAG_F32:
	case ISA_V_EXP_F16: case ISA_V_LOG_F16: case ISA_V_RCP_F16: case ISA_V_SQRT_F16: case ISA_V_RSQ_F16:
		return true;
	}
	return false;
}

static bool is_shift64(unsigned op)
{
	return op == ISA_V_LSHLREV_B64 || op == ISA_V_LSHRREV_B64 || op == ISA_V_ASHRREV_I64;
}

/* ---- hazard state ------------------------------------------------------------ */

enum { HZ_MAX = 48, HZ_WINDOW = 20 }; /* entries; no rule needs more than 19 wait states */
enum { SG_EXEC = 126 };                /* exec's scalar code */
enum { DEPCTR_VA_VDST0 = 0x0fff, DEPCTR_SA_SDST0 = 0xfffe }; /* the values LLVM emits */

typedef enum {
	HZ_MFMA,   /* MFMA: D written (reg/cnt), C read (creg/ccnt) */
	HZ_VALU,   /* non-MFMA VALU wrote these VGPRs (MFMA reads: 2, gfx942 readlane: 1) */
	HZ_TRANS,  /* gfx942: transcendental wrote these VGPRs (1) */
	HZ_DSTSEL, /* gfx942: VALU wrote the high half of these VGPRs (1) */
	HZ_STORE,  /* gfx9: VMEM store of > 8 bytes still reads these VGPRs (1 / 2) */
	HZ_SGPR,   /* gfx9: a VALU wrote scalar codes [reg, reg+cnt) (exec = 126) (up to 5) */
	HZ_TRANS11 /* gfx1100: transcendental wrote these VGPRs; age = VALUs since, passes = trans since */
} HzKind;

typedef struct {
	uint8_t kind;          /* HzKind */
	uint8_t file;          /* ISA_K_VGPR / ISA_K_AGPR (ISA_K_SGPR for HZ_SGPR) */
	uint8_t passes, xdl;
	uint16_t reg, cnt;     /* D (or the VALU's destination, the store's data) */
	uint16_t creg, ccnt;   /* MFMA: C read */
	uint16_t age;          /* wait states since */
} HzEnt;

typedef struct {
	uint64_t w[2];
} SSet; /* scalar register codes 0..127 (vcc = 106, exec = 126) */

typedef struct {
	int n;
	unsigned kinds;             /* bit 1 << HzKind for each kind among e[] (may over-approximate) */
	uint8_t ckind;              /* gfx9 soft clause: 0 none, 1 SMEM, 2 VMEM instructions in a row */
	uint64_t cdef[10], cuse[10]; /* its writes and reads: scalar codes, v0-v255, a0-a255 */
	SSet mask;                  /* gfx11 wave64: SGPRs the latest SGPR-reading VALU read as a lane mask */
	int16_t wmma_reg, wmma_cnt; /* gfx11: previous WMMA's D with no VALU since (cnt 0 = none) */
	HzEnt e[HZ_MAX];            /* last: only [0, n) is initialised or copied (hz_copy) */
} HzState;

static void sset_add(SSet *s, int reg, int cnt)
{
	for (int r = reg; r < reg + cnt && r < 128; r++)
		s->w[r >> 6] |= 1ull << (r & 63);
}
static bool sset_meets(const SSet *a, const SSet *b)
{
	return (a->w[0] & b->w[0]) || (a->w[1] & b->w[1]);
}
static bool sset_empty(const SSet *a)
{
	return !a->w[0] && !a->w[1];
}
static SSet sset_range(int reg, int cnt)
{
	SSet s = {{0, 0}};
	sset_add(&s, reg, cnt);
	return s;
}

/* Pass counts (amd-isa.md §9.2/§9.3); unknown MFMAs get the largest. */
static int mfma_passes(ta_target t, unsigned op, int *xdl)
{
	*xdl = 1;
	switch (op) {
	case ISA_V_MFMA_F32_16X16X16_F16: case ISA_V_MFMA_F32_16X16X16_BF16: case ISA_V_MFMA_I32_16X16X32_I8:
	case ISA_V_MFMA_F32_16X16X8_XF32:
	case ISA_V_MFMA_F32_16X16X32_FP8_FP8: case ISA_V_MFMA_F32_16X16X32_FP8_BF8:
	case ISA_V_MFMA_F32_16X16X32_BF8_FP8: case ISA_V_MFMA_F32_16X16X32_BF8_BF8:
		return t == TA_TARGET_GFX942 ? 4 : 8;
	case ISA_V_MFMA_F32_32X32X8_F16: case ISA_V_MFMA_F32_32X32X8_BF16: case ISA_V_MFMA_I32_32X32X16_I8:
	case ISA_V_MFMA_F32_32X32X16_FP8_FP8: case ISA_V_MFMA_F32_32X32X16_FP8_BF8:
	case ISA_V_MFMA_F32_32X32X16_BF8_FP8: case ISA_V_MFMA_F32_32X32X16_BF8_BF8:
		return t == TA_TARGET_GFX942 ? 8 : 16;
	case ISA_V_MFMA_I32_16X16X16I8:
		return 8;
	case ISA_V_MFMA_F32_16X16X4_F32:
		*xdl = 0;
		return 8;
	}
	*xdl = 0; /* non-XDL needs one less on gfx942; 16 passes covers the rest */
	return 16;
}

static bool overlaps(const IsaOperand *o, int file, int reg, int cnt)
{
	return o->kind == file && o->reg < reg + cnt && reg < o->reg + o->count;
}

static bool is_vreg(const IsaOperand *o)
{
	return o->kind == ISA_K_VGPR || o->kind == ISA_K_AGPR;
}

/* Operand k of mi is read (sources, tied destinations). */
static bool reads_op(const MInst *mi, int k)
{
	return k >= mi->ndef || (k == 0 && (mi->flags & MI_TIED));
}

/* Scalar registers mi reads and writes, as hardware codes: its SGPR, vcc
 * and exec operands and an implicit exec write (v_cmpx).  The implicit
 * exec read of every VALU is left out: no rule here depends on it.  (A
 * cheap operand walk: isa_reg_uses would decode the signature again.) */
static void scalar_uses(ta_target t, const MInst *mi, SSet *rd, SSet *wr)
{
	const IsaInsn *in = &mi->in;
	memset(rd, 0, sizeof *rd);
	memset(wr, 0, sizeof *wr);
	for (int k = 0; k < in->nops; k++) {
		const IsaOperand *o = &in->ops[k];
		int code = -1;
		if (o->kind == ISA_K_SGPR)
			code = o->reg;
		else if (o->kind == ISA_K_SPECIAL)
			code = o->reg == ISA_SP_VCC_LO ? 106 : o->reg == ISA_SP_VCC_HI ? 107 : o->reg == ISA_SP_EXEC_LO ? 126
			     : o->reg == ISA_SP_EXEC_HI ? 127 : o->reg == ISA_SP_M0 ? (t == TA_TARGET_GFX1100 ? 125 : 124) : -1;
		if (code < 0)
			continue;
		if (k < mi->ndef)
			sset_add(wr, code, o->count);
		if (reads_op(mi, k))
			sset_add(rd, code, o->count);
	}
	if (in->op < ISA_NUM_OPS && (isa_ops[in->op].flags & ISA_F_WEXEC))
		sset_add(wr, SG_EXEC, 2);
}

/* gfx11 lane-mask sources: the last operand of v_cndmask / v_add_co_ci /
 * v_sub_co_ci / v_subrev_co_ci (vcc_lo/vcc or an SGPR pair). */
static bool mask_source(const MInst *mi, SSet *m)
{
	unsigned op = mi->in.op;
	if (op != ISA_V_CNDMASK_B32 && op != ISA_V_ADDC_CO_U32 && op != ISA_V_SUBB_CO_U32 && op != ISA_V_SUBBREV_CO_U32)
		return false;
	const IsaOperand *o = &mi->in.ops[mi->in.nops - 1];
	if (o->kind == ISA_K_SGPR)
		sset_add(m, o->reg, o->count);
	else if (o->kind == ISA_K_SPECIAL && (o->reg == ISA_SP_VCC_LO || o->reg == ISA_SP_VCC_HI))
		sset_add(m, 106 + (o->reg == ISA_SP_VCC_HI), o->count);
	return true;
}

/* Wait states mi needs after VALU writes of scalar registers (gfx9), and
 * for the SMEM soft clause. */
static int sgpr_need(ta_target t, const HzState *st, const MInst *mi)
{
	const IsaInsn *in = &mi->in;
	uint32_t fl = in->op < ISA_NUM_OPS ? isa_ops[in->op].flags : 0;
	bool mfma = fl & ISA_F_MFMA, valu = (fl & ISA_F_VALU) && !mfma;
	bool vmem = fl & (ISA_F_GLOBAL | ISA_F_MUBUF);
	bool g942 = t == TA_TARGET_GFX942;
	bool rdlane = in->op == ISA_V_READLANE_B32 || in->op == ISA_V_READFIRSTLANE_B32;
	bool rwlane = in->op == ISA_V_READLANE_B32 || in->op == ISA_V_WRITELANE_B32;
	if (!(fl & (ISA_F_VALU | ISA_F_GLOBAL | ISA_F_MUBUF | ISA_F_SMEM)))
		return 0;
	if (!(st->kinds & (1u << HZ_SGPR))) /* the common case: nothing to compare against */
		return 0;
	SSet rd, wr, ex = sset_range(SG_EXEC, 2), lane = {{0, 0}};
	scalar_uses(t, mi, &rd, &wr);
	SSet rdx = rd; /* reads other than exec */
	rdx.w[1] &= ~ex.w[1];
	if (rwlane && in->nops > 2 && in->ops[2].kind == ISA_K_SGPR)
		lane = sset_range(in->ops[2].reg, in->ops[2].count);
	if (in->op == ISA_V_DIV_FMAS_F32 || in->op == ISA_V_DIV_FMAS_F64)
		lane = sset_range(106, 2); /* its implicit vcc read: the same 4 wait states */
	int need = 0;
	for (int i = 0; i < st->n; i++) {
		const HzEnt *e = &st->e[i];
		if (e->kind != HZ_SGPR)
			continue;
		SSet er = sset_range(e->reg, e->cnt);
		bool exec = sset_meets(&er, &ex), reads = sset_meets(&er, &rdx);
		int w = 0;
		if (vmem && (reads || exec))
			w = 5; /* VMEM reads its SGPR operands and exec */
		if (sset_meets(&er, &lane))
			w = TA_MAX(w, 4); /* v_readlane/v_writelane lane select */
		if (g942 && valu && reads)
			w = TA_MAX(w, 2);
		if (g942 && (rwlane || rdlane) && exec)
			w = TA_MAX(w, 4);
		if (mfma && exec)
			w = TA_MAX(w, 4);
		need = TA_MAX(need, w - (int)e->age);
	}
	return need;
}

/* Clause kind of an instruction: 1 SMEM, 2 VMEM (global, scratch, buffer), 0 other. */
static int clause_kind(uint32_t fl)
{
	return (fl & ISA_F_SMEM) ? 1 : (fl & (ISA_F_GLOBAL | ISA_F_MUBUF)) ? 2 : 0;
}

/* Registers mi writes and reads as clause bit sets (see HzState.cdef). */
static void clause_regs(ta_target t, const MInst *mi, uint64_t *def, uint64_t *use)
{
	SSet rd, wr;
	scalar_uses(t, mi, &rd, &wr);
	memset(def, 0, 10 * sizeof *def);
	memset(use, 0, 10 * sizeof *use);
	def[0] = wr.w[0], def[1] = wr.w[1], use[0] = rd.w[0], use[1] = rd.w[1];
	for (int k = 0; k < mi->in.nops; k++) {
		const IsaOperand *o = &mi->in.ops[k];
		if (!is_vreg(o))
			continue;
		int base = o->kind == ISA_K_VGPR ? 2 : 6;
		for (int r = o->reg; r < o->reg + o->count && r < 256; r++) {
			if (k < mi->ndef)
				def[base + (r >> 6)] |= 1ull << (r & 63);
			if (reads_op(mi, k))
				use[base + (r >> 6)] |= 1ull << (r & 63);
		}
	}
}

/* Soft clauses (xnack replays the memory instructions of a clause): in a
 * run of SMEM, or of VMEM, instructions no member may write a register a
 * member reads, and a store may not follow a member that writes
 * registers; s_nop 0 ends the clause. */
static int clause_need(ta_target t, const HzState *st, const MInst *mi)
{
	uint32_t fl = mi->in.op < ISA_NUM_OPS ? isa_ops[mi->in.op].flags : 0;
	int kind = clause_kind(fl);
	if (!kind || kind != st->ckind)
		return 0;
	bool defs = false;
	for (int w = 0; w < 10; w++)
		defs |= st->cdef[w] != 0;
	if (!defs)
		return 0;
	if (fl & (ISA_F_STORE | ISA_F_ATOMIC))
		return 1;
	uint64_t d[10], u[10];
	clause_regs(t, mi, d, u);
	for (int w = 0; w < 10; w++)
		if ((d[w] | st->cdef[w]) & (u[w] | st->cuse[w]))
			return 1;
	return 0;
}

/* Wait states for the scalar rules and the soft clause; the state's kind
 * bits and clause kind skip the rules that cannot apply. */
static inline int scalar_need(ta_target t, const HzState *st, const MInst *mi)
{
	int need = st->kinds & (1u << HZ_SGPR) ? sgpr_need(t, st, mi) : 0;
	return st->ckind ? TA_MAX(need, clause_need(t, st, mi)) : need;
}

/* Wait states (gfx9) instruction mi still needs under state st. */
static int hz_need(ta_target t, const HzState *st, const MInst *mi)
{
	const IsaInsn *in = &mi->in;
	uint32_t fl = in->op < ISA_NUM_OPS ? isa_ops[in->op].flags : 0;
	bool mfma = fl & ISA_F_MFMA, valu = (fl & ISA_F_VALU) && !mfma;
	bool g942 = t == TA_TARGET_GFX942;
	bool rdlane = in->op == ISA_V_READLANE_B32 || in->op == ISA_V_READFIRSTLANE_B32;
	int need = 0;
	if (!(fl & (ISA_F_VALU | ISA_F_GLOBAL | ISA_F_MUBUF | ISA_F_DS)) || /* no vector registers */
	    !(st->kinds & ~((1u << HZ_SGPR) | (1u << HZ_TRANS11))))      /* or no vector entries */
		return scalar_need(t, st, mi);
	for (int i = 0; i < st->n; i++) {
		const HzEnt *e = &st->e[i];
		int w = 0;
		switch (e->kind) {
		case HZ_VALU: /* a VALU wrote a VGPR an MFMA (2), a DPP src0 (2) or gfx942 readlane's source (1) reads */
			for (int k = 1; k < in->nops; k++)
				if (overlaps(&in->ops[k], e->file, e->reg, e->cnt))
					w = TA_MAX(w, mfma ? 2 : in->enc == ISA_ENC_DPP && k == 1 ? 2 : g942 && rdlane && k == 1 ? 1 : 0);
			break;
		case HZ_TRANS: case HZ_DSTSEL: /* gfx942 forwarding: the next VALU reading the result */
			if (valu && !(e->kind == HZ_TRANS && is_trans(in->op)))
				for (int k = 0; k < in->nops; k++)
					if (reads_op(mi, k) && overlaps(&in->ops[k], e->file, e->reg, e->cnt))
						w = 1;
			break;
		case HZ_STORE: /* a VALU overwriting a wide store's data */
			if (fl & ISA_F_VALU)
				for (int k = 0; k < mi->ndef && k < in->nops; k++)
					if (overlaps(&in->ops[k], e->file, e->reg, e->cnt))
						w = g942 ? 2 : 1;
			break;
		case HZ_TRANS11:
			break;
		case HZ_MFMA: {
			int N = e->passes, raw = g942 ? N + (e->xdl ? 3 : 2) : N + 3;
			for (int k = 0; k < in->nops; k++) {
				const IsaOperand *o = &in->ops[k];
				if (!is_vreg(o))
					continue;
				if (overlaps(o, e->file, e->reg, e->cnt)) {
					bool same = o->reg == e->reg && o->count == e->cnt;
					if (mfma && (k == 3 || k == 0) && same && in->nops > 3 &&
					    in->ops[0].reg == in->ops[3].reg && in->ops[0].kind == in->ops[3].kind)
						continue; /* accumulation chain: the same C/D */
					if (mfma && k == 3)
						w = TA_MAX(w, g942 ? N + (e->xdl ? 1 : 0) : N);
					else
						w = TA_MAX(w, raw);
				}
				/* WAR: overwriting what the MFMA still reads as C */
				if (!mfma && k < mi->ndef && overlaps(o, e->file, e->creg, e->ccnt))
					w = TA_MAX(w, N - 1);
			}
			break;
		}
		}
		if (w)
			need = TA_MAX(need, w - (int)e->age);
	}
	return TA_MAX(need, scalar_need(t, st, mi));
}

/* Does gfx1100 instruction mi read a transcendental result that is not yet
 * safe to read (VALUTransUseHazard)? */
static bool trans11_need(const HzState *st, const MInst *mi)
{
	const IsaInsn *in = &mi->in;
	if (in->op >= ISA_NUM_OPS || !(isa_ops[in->op].flags & ISA_F_VALU))
		return false;
	for (int i = 0; i < st->n; i++) {
		const HzEnt *e = &st->e[i];
		if (e->kind != HZ_TRANS11)
			continue;
		for (int k = 0; k < in->nops; k++)
			if (reads_op(mi, k) && overlaps(&in->ops[k], e->file, e->reg, e->cnt))
				return true;
	}
	return false;
}

static bool same_ent(const HzEnt *x, const HzEnt *e)
{
	return x->kind == e->kind && x->file == e->file && x->reg == e->reg && x->cnt == e->cnt && x->creg == e->creg &&
	       x->ccnt == e->ccnt && x->xdl == e->xdl && (x->passes == e->passes || e->kind == HZ_TRANS11);
}

static void hz_push(HzState *st, HzEnt e)
{
	for (int i = 0; i < st->n; i++) {
		HzEnt *x = &st->e[i];
		if (same_ent(x, &e)) {
			x->age = TA_MIN(x->age, e.age); /* the same hazard seen again: the nearer one */
			x->passes = TA_MIN(x->passes, e.passes);
			return;
		}
	}
	if (st->n == HZ_MAX) { /* full: drop the oldest (all are younger than the window) */
		int old = 0;
		for (int i = 1; i < st->n; i++)
			if (st->e[i].age > st->e[old].age)
				old = i;
		st->e[old] = st->e[--st->n];
	}
	st->e[st->n++] = e;
	st->kinds |= 1u << e.kind;
}

/* Wait states an entry of kind k matters for. */
static int ent_window(ta_target t, int k)
{
	switch (k) {
	case HZ_VALU: return 2;
	case HZ_SGPR: return 5;
	case HZ_TRANS: case HZ_DSTSEL: return 1;
	case HZ_STORE: return t == TA_TARGET_GFX942 ? 2 : 1;
	default: return HZ_WINDOW;
	}
}

static void hz_age(ta_target t, HzState *st, int ws)
{
	int j = 0;
	unsigned kinds = 0;
	for (int i = 0; i < st->n; i++) {
		HzEnt *e = &st->e[i];
		if (e->kind != HZ_TRANS11)
			e->age = (uint16_t)TA_MIN(e->age + ws, HZ_WINDOW);
		if (e->kind == HZ_TRANS11 || e->age < ent_window(t, e->kind))
			st->e[j++] = *e, kinds |= 1u << e->kind;
	}
	st->n = j;
	st->kinds = kinds;
}

/* Drops the gfx1100 transcendental entries (their results are safe). */
static void drop_trans11(HzState *st)
{
	int j = 0;
	for (int i = 0; i < st->n; i++)
		if (st->e[i].kind != HZ_TRANS11)
			st->e[j++] = st->e[i];
	st->n = j;
}

/* Data operand of a VMEM store (the DD role), or -1. */
static int store_data(ta_target t, const IsaInsn *in)
{
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(t, in->op, sig);
	for (int i = 0; i < n && i < in->nops; i++)
		if (ISA_SIG_ROLE(sig[i]) == ISA_R_DD)
			return i;
	return -1;
}

/* State after instruction mi issues (its own slot counts one wait state
 * for what follows). */
static void hz_step(ta_target t, bool w64, HzState *st, const MInst *mi)
{
	const IsaInsn *in = &mi->in;
	uint32_t fl = in->op < ISA_NUM_OPS ? isa_ops[in->op].flags : 0;
	int ws = in->op == ISA_S_NOP ? (int)(in->ops[0].imm & 15) + 1 : 1;
	bool gfx9 = t == TA_TARGET_GFX90A || t == TA_TARGET_GFX942;
	hz_age(t, st, ws);
	SSet rd = {{0, 0}}, wr = {{0, 0}};
	if ((fl & ISA_F_VALU) && (gfx9 || w64))
		scalar_uses(t, mi, &rd, &wr);
	/* soft clause: consecutive SMEM, or VMEM, instructions (gfx9, xnack) */
	int kind = gfx9 ? clause_kind(fl) : 0;
	if (kind != st->ckind && st->ckind) {
		memset(st->cdef, 0, sizeof st->cdef);
		memset(st->cuse, 0, sizeof st->cuse);
	}
	st->ckind = (uint8_t)kind;
	if (kind) {
		uint64_t d[10], u[10];
		clause_regs(t, mi, d, u);
		for (int w = 0; w < 10; w++)
			st->cdef[w] |= d[w], st->cuse[w] |= u[w];
	}
	if (fl & ISA_F_WMMA) {
		st->wmma_reg = (int16_t)in->ops[0].reg, st->wmma_cnt = in->ops[0].count;
	} else if (fl & ISA_F_VALU) {
		st->wmma_cnt = 0;
	}
	if (t == TA_TARGET_GFX1100) {
		/* VALUTransUseHazard: count VALUs and transcendentals since each
		 * producer; VMEM, LDS and a va_vdst(0) wait end them all */
		if ((fl & (ISA_F_GLOBAL | ISA_F_MUBUF | ISA_F_DS)) ||
		    (in->op == ISA_S_WAITCNT_DEPCTR && ((in->ops[0].imm >> 12) & 15) == 0))
			drop_trans11(st);
		if (fl & ISA_F_VALU) {
			int j = 0;
			for (int i = 0; i < st->n; i++) {
				HzEnt *e = &st->e[i];
				if (e->kind == HZ_TRANS11) {
					e->age++;
					e->passes += is_trans(in->op);
					if (e->age > 5 || e->passes > 1)
						continue;
				}
				st->e[j++] = *e;
			}
			st->n = j;
			if (is_trans(in->op) && mi->ndef && is_vreg(&in->ops[0]))
				hz_push(st, (HzEnt){HZ_TRANS11, in->ops[0].kind, 0, 0, in->ops[0].reg, in->ops[0].count, 0, 0, 0});
		}
		/* VALUMaskWriteHazard (wave64): the mask set follows the latest
		 * VALU that reads an SGPR or a literal; sa_sdst(0) clears it */
		if (w64 && (fl & ISA_F_VALU)) {
			SSet m = {{0, 0}};
			bool is_mask = mask_source(mi, &m);
			bool lit = false;
			for (int k = 0; k < in->nops; k++)
				lit |= in->ops[k].kind == ISA_K_LIT;
			SSet nexec = rd;
			nexec.w[1] &= ~(3ull << (SG_EXEC - 64));
			if (is_mask || lit || !sset_empty(&nexec))
				st->mask = m;
		}
		if (in->op == ISA_S_WAITCNT_DEPCTR && (in->ops[0].imm & 1) == 0)
			memset(&st->mask, 0, sizeof st->mask);
		return;
	}
	if (!gfx9)
		return;
	if (fl & ISA_F_MFMA) {
		HzEnt e = {HZ_MFMA, in->ops[0].kind, 0, 0, in->ops[0].reg, in->ops[0].count, 0, 0, 0};
		int xdl;
		e.passes = (uint8_t)mfma_passes(t, in->op, &xdl);
		e.xdl = (uint8_t)xdl;
		if (in->nops > 3 && is_vreg(&in->ops[3]))
			e.creg = in->ops[3].reg, e.ccnt = in->ops[3].count;
		hz_push(st, e);
	}
	if ((fl & (ISA_F_GLOBAL | ISA_F_MUBUF)) && (fl & ISA_F_STORE)) {
		int k = store_data(t, in);
		if (k >= 0 && is_vreg(&in->ops[k]) && in->ops[k].count > 2)
			hz_push(st, (HzEnt){HZ_STORE, in->ops[k].kind, 0, 0, in->ops[k].reg, in->ops[k].count, 0, 0, 0});
	}
	if (!(fl & ISA_F_VALU))
		return;
	for (int h = 0; h < 2; h++) /* SGPRs (and exec) a VALU or MFMA wrote, as runs */
		for (uint64_t b = wr.w[h]; b;) {
			int lo = __builtin_ctzll(b);
			uint64_t x = b >> lo;
			int n = ~x ? __builtin_ctzll(~x) : 64 - lo; /* run length */
			hz_push(st, (HzEnt){HZ_SGPR, ISA_K_SGPR, 0, 0, (uint16_t)(64 * h + lo), (uint16_t)n, 0, 0, 0});
			b &= n + lo >= 64 ? 0 : ~0ull << (lo + n);
		}
	if (fl & ISA_F_MFMA)
		return;
	bool g942 = t == TA_TARGET_GFX942;
	for (int k = 0; k < mi->ndef && k < in->nops; k++) {
		const IsaOperand *o = &in->ops[k];
		if (!is_vreg(o))
			continue;
		hz_push(st, (HzEnt){HZ_VALU, o->kind, 0, 0, o->reg, o->count, 0, 0, 0});
		if (g942 && is_trans(in->op))
			hz_push(st, (HzEnt){HZ_TRANS, o->kind, 0, 0, o->reg, o->count, 0, 0, 0});
		if (g942 && k == 0 && (in->mod.op_sel & 8) && isa_op_fmt(t, in->op) == ISA_FMT_VOP3)
			hz_push(st, (HzEnt){HZ_DSTSEL, o->kind, 0, 0, o->reg, o->count, 0, 0, 0});
	}
}

/* st |= o: every entry of o, the nearer SGPR writes, either clause or mask. */
static void hz_merge(HzState *st, const HzState *o)
{
	for (int i = 0; i < o->n; i++)
		hz_push(st, o->e[i]);
	for (int k = 0; k < 2; k++) {
		st->mask.w[k] |= o->mask.w[k];
	}
	if (o->ckind && (!st->ckind || st->ckind == o->ckind)) { /* a clause in either: the union */
		st->ckind = o->ckind;
		for (int w = 0; w < 10; w++)
			st->cdef[w] |= o->cdef[w], st->cuse[w] |= o->cuse[w];
	}
	if (o->wmma_cnt && !st->wmma_cnt)
		st->wmma_reg = o->wmma_reg, st->wmma_cnt = o->wmma_cnt;
}

static void hz_init(HzState *st)
{
	memset(st, 0, offsetof(HzState, e));
}

/* *dst = *src, the live entries only. */
static void hz_copy(HzState *dst, const HzState *src)
{
	memcpy(dst, src, offsetof(HzState, e) + (size_t)src->n * sizeof(HzEnt));
}

static MInst nop_insn(unsigned op, int imm)
{
	MInst w;
	memset(&w, 0, sizeof w);
	isa_insn_init(&w.in, op);
	if (op != ISA_V_NOP) {
		w.in.nops = 1;
		w.in.ops[0] = isa_imm(imm);
	}
	return w;
}

/* ---- gfx90a Shift64HighRegBug ------------------------------------------------- */

/* A 64-bit shift whose amount is the last VGPR of an 8-register
 * allocation granule with the next VGPR unused misbehaves on gfx90a.  The
 * fix (as LLVM's): wait for everything, swap the amount (or the aligned
 * pair holding it, when the instruction also uses that pair) with VGPRs
 * the instruction does not touch, shift, and swap back.  Returns the
 * number of instructions written to pre[] (the rewritten shift is last)
 * and the swaps back in post[]. */
static int shift64_fix(ta_target t, const MInst *mi, const uint8_t *vused, MInst *pre, MInst *post, int *npost)
{
	const IsaInsn *in = &mi->in;
	*npost = 0;
	if (t != TA_TARGET_GFX90A || !is_shift64(in->op) || in->nops < 3 || in->ops[1].kind != ISA_K_VGPR)
		return 0;
	int amt = in->ops[1].reg;
	if ((amt & 7) != 7 || (amt + 1 < 256 && vused[amt + 1]))
		return 0;
	bool pair = false; /* does another operand use v[amt-1:amt]? */
	for (int k = 0; k < in->nops; k++)
		if (k != 1 && overlaps(&in->ops[k], ISA_K_VGPR, amt - 1, 2))
			pair = true;
	int width = pair ? 2 : 1, lo = pair ? amt - 1 : amt, nr = -1;
	for (int r = 0; r + width <= amt - 1 && nr < 0; r += width) {
		bool free = true;
		for (int k = 0; k < in->nops; k++)
			free &= !overlaps(&in->ops[k], ISA_K_VGPR, r, width);
		if (free)
			nr = r;
	}
	if (nr < 0)
		return 0;
	int np = 0;
	MInst w = nop_insn(ISA_S_WAITCNT, isa_waitcnt_encode(t, 0, 0, 0));
	pre[np++] = w;
	for (int i = 0; i < width; i++) {
		MInst s;
		memset(&s, 0, sizeof s);
		isa_insn_init(&s.in, ISA_V_SWAP_B32);
		s.in.nops = 2;
		s.in.ops[0] = isa_vgpr(nr + i, 1);
		s.in.ops[1] = isa_vgpr(lo + i, 1);
		s.ndef = 2;
		pre[np++] = s;
		post[(*npost)++] = s;
	}
	MInst x = *mi; /* the shift on the swapped registers */
	for (int k = 0; k < x.in.nops; k++) {
		IsaOperand *o = &x.in.ops[k];
		if (o->kind == ISA_K_VGPR && o->reg >= lo && o->reg + o->count <= lo + width)
			o->reg = (uint16_t)(nr + (o->reg - lo));
	}
	pre[np++] = x;
	return np;
}

/* ---- driver --------------------------------------------------------------------- */

/* Issues x: state update, and the copy when emitting. */
static int put(ta_target t, bool w64, HzState *st, MInstVec *out, const MInst *x)
{
	hz_step(t, w64, st, x);
	return out && vec_push(out, *x) ? -1 : 0;
}

/* gfx9: issues x after the s_nop it needs. */
static int put9(ta_target t, HzState *st, MInstVec *out, const MInst *x)
{
	for (int need = hz_need(t, st, x); need > 0; need -= 16) {
		MInst nop = nop_insn(ISA_S_NOP, TA_MIN(need, 16) - 1);
		if (put(t, true, st, out, &nop))
			return -1;
	}
	return put(t, true, st, out, x);
}

/* Runs block b from state st: with out != NULL appends the code with the
 * wait states it needs; st ends as the block's end state. */
static int run_block(const MFunc *mf, const MBlock *bl, const uint8_t *vused, HzState *st, MInstVec *out)
{
	ta_target t = ISA_TARGET(mf->target);
	bool w64 = ISA_IS_W64(mf->target);
	int first = bl->first;
	if (!out && t != TA_TARGET_GFX1100 && bl->last - first > HZ_WINDOW + 4) {
		/* Analysis round on gfx9: every entry expires within HZ_WINDOW
		 * wait states, so only the block's tail (and a memory clause
		 * running into it) shapes its end state.  Skipping the head can
		 * only leave out s_nops, which makes the end state younger:
		 * conservative. */
		first = bl->last - HZ_WINDOW - 4;
		while (first > bl->first) {
			unsigned op = mf->insns.data[first - 1].in.op;
			if (op >= ISA_NUM_OPS || !clause_kind(isa_ops[op].flags))
				break;
			first--;
		}
		hz_init(st);
	}
	for (int i = first; i < bl->last; i++) {
		const MInst *mi = &mf->insns.data[i];
		const IsaInsn *cur = &mi->in;
		uint32_t fl = cur->op < ISA_NUM_OPS ? isa_ops[cur->op].flags : 0;
		if (t == TA_TARGET_GFX90A || t == TA_TARGET_GFX942) {
			MInst fix[6], post[4];
			int npost = 0, nfix = shift64_fix(t, mi, vused, fix, post, &npost);
			for (int k = 0; k < nfix; k++) /* wait, swaps, the shift on the swapped registers */
				if (put9(t, st, out, &fix[k]))
					return -1;
			if (!nfix && put9(t, st, out, mi))
				return -1;
			for (int k = 0; k < npost; k++)
				if (put9(t, st, out, &post[k]))
					return -1;
			continue;
		}
		if (t != TA_TARGET_GFX1100) {
			if (put(t, w64, st, out, mi))
				return -1;
			continue;
		}
		bool wmma = false; /* A/B of the previous WMMA's D: a VALU between */
		if ((fl & ISA_F_WMMA) && st->wmma_cnt)
			for (int k = 1; k <= 2 && k < cur->nops; k++)
				wmma |= overlaps(&cur->ops[k], ISA_K_VGPR, st->wmma_reg, st->wmma_cnt);
		if (wmma) {
			MInst w = nop_insn(ISA_V_NOP, 0);
			if (put(t, w64, st, out, &w))
				return -1;
		}
		if (trans11_need(st, mi)) {
			MInst w = nop_insn(ISA_S_WAITCNT_DEPCTR, DEPCTR_VA_VDST0);
			if (put(t, w64, st, out, &w))
				return -1;
		}
		/* wave64: an SALU overwriting a lane mask a VALU read */
		bool mask_write = false;
		if (w64 && (fl & ISA_F_SALU) && !sset_empty(&st->mask)) {
			SSet rd, wr;
			scalar_uses(t, mi, &rd, &wr);
			wr.w[1] &= ~(3ull << (SG_EXEC - 64));
			mask_write = sset_meets(&wr, &st->mask);
		}
		if (put(t, w64, st, out, mi))
			return -1;
		if (mask_write) {
			MInst w = nop_insn(ISA_S_WAITCNT_DEPCTR, DEPCTR_SA_SDST0);
			if (put(t, w64, st, out, &w))
				return -1;
		}
	}
	return 0;
}

int amd_hazard(MFunc *mf, Diag *d)
{
	size_t nb = mf->blocks.len;
	MInstVec out = mir_spare(mf); /* the array waitcnt's input lived in */
	HzState *end = malloc(sizeof(HzState) * (nb ? nb : 1));
	int32_t *npred = calloc(nb + 1, sizeof(int32_t));
	int32_t *pstart = calloc(nb + 2, sizeof(int32_t)), *preds = malloc(sizeof(int32_t) * (3 * nb + 1));
	uint8_t vused[257] = {0}; /* VGPRs any instruction names (Shift64HighRegBug) */
	if (!end || !npred || !pstart || !preds)
		goto oom;
	for (size_t i = 0; i < mf->insns.len && ISA_TARGET(mf->target) == TA_TARGET_GFX90A; i++) {
		const IsaInsn *in = &mf->insns.data[i].in;
		for (int k = 0; k < in->nops; k++)
			if (in->ops[k].kind == ISA_K_VGPR)
				for (int r = in->ops[k].reg; r < in->ops[k].reg + in->ops[k].count && r < 256; r++)
					vused[r] = 1;
	}
	/* predecessor lists (CSR) from the successor edges */
	for (size_t b = 0; b < nb; b++)
		for (int k = 0; k < 3; k++)
			if (mf->blocks.data[b].succ[k] >= 0 && (size_t)mf->blocks.data[b].succ[k] < nb)
				npred[mf->blocks.data[b].succ[k]]++;
	for (size_t b = 0; b < nb; b++)
		pstart[b + 1] = pstart[b] + npred[b];
	for (size_t b = 0; b < nb; b++)
		npred[b] = pstart[b];
	for (size_t b = 0; b < nb; b++)
		for (int k = 0; k < 3; k++) {
			int s = mf->blocks.data[b].succ[k];
			if (s >= 0 && (size_t)s < nb)
				preds[npred[s]++] = (int32_t)b;
		}
	for (size_t b = 0; b < nb; b++)
		hz_init(&end[b]);
	/* end states: rounds in layout order, then the emitting round.  Two
	 * settle the loop nests the lowering produces (a back edge's state
	 * reaches the loop head in the second); the state of a round only
	 * grows entries that are younger, so a later round never needs less
	 * than an earlier one.  With a back edge anywhere, at least one
	 * analysis round runs before the emitting one. */
	int rounds = 1;
	for (size_t b = 0; b < nb && rounds == 1; b++)
		for (int k = 0; k < 3; k++)
			if (mf->blocks.data[b].succ[k] >= 0 && (size_t)mf->blocks.data[b].succ[k] <= b)
				rounds = 2;
	for (size_t i = 0; i < mf->insns.len && rounds < 3; i++) {
		unsigned op = mf->insns.data[i].in.op;
		if (op < ISA_NUM_OPS && (isa_ops[op].flags & (ISA_F_MFMA | ISA_F_WMMA)))
			rounds = 3;
	}
	for (int round = 0; round < rounds; round++) {
		bool emit = round == rounds - 1;
		for (size_t b = 0; b < nb; b++) {
			MBlock *bl = &mf->blocks.data[b];
			HzState st;
			hz_init(&st);
			for (int p = pstart[b]; p < pstart[b + 1]; p++)
				hz_merge(&st, &end[preds[p]]);
			if (b > 0 && pstart[b] == pstart[b + 1]) /* no recorded edge: layout fallthrough */
				hz_merge(&st, &end[b - 1]);
			int first = (int)out.len;
			if (run_block(mf, bl, vused, &st, emit ? &out : NULL))
				goto oom;
			hz_copy(&end[b], &st);
			if (emit) {
				bl->first = first;
				bl->last = (int)out.len;
			}
		}
	}
	mir_set_insns(mf, &out);
	free(end), free(npred), free(pstart), free(preds);
	return 0;
oom:
	mir_put_spare(mf, &out);
	free(end), free(npred), free(pstart), free(preds);
	diag_error(d, "out of memory in hazard pass");
	return -1;
}
