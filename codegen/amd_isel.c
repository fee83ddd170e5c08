/* amd_isel.c — SIMT IR -> AMD machine IR (virtual registers).
 *
 * Values.  A SIMT register is uniform (same in every lane of the block) when
 * every definition is an integer/predicate/move operation of uniform
 * operands, unguarded, and outside code that only some lanes run; uniform
 * values live in SGPRs and use SALU, the rest in VGPRs with VALU.  Float
 * arithmetic is always VALU.  Predicates are lane masks in SGPRs (1 dword in
 * wave32, 2 in wave64) whatever their uniformity; a uniform comparison is
 * s_cmp + s_cselect of all-ones/zero.
 *
 * Control flow.  Every SIMT label is a reconvergence point with a "parked
 * lanes" mask W[L] (an SGPR lane mask).  A forward branch to L, divergent or
 * not, moves the lanes that take it from exec into W[L]; if exec becomes
 * empty it jumps to the next label in layout order.  At a label,
 * exec |= W[L]; if exec is still empty, jump to the next label.  Loop back
 * edges (unconditional backward branches) are plain s_branch.  This is
 * correct for any forward control flow and for loops whose exits are
 * forward branches, which is what the lowering produces; a conditional
 * backward branch is rejected.  Guarded non-branch instructions run under
 * s_and_saveexec / restore.
 *
 * The CFG given to liveness has, besides the machine edges, an edge from a
 * branch to the label where its parked lanes resume, so values those lanes
 * need stay allocated across the code they skip. */
#include "amd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	uint8_t kind;  /* VK_REG or VK_CONST */
	uint8_t count; /* dwords */
	uint8_t sub;
	int32_t vreg;
	uint32_t bits;
} Val;
enum { VK_REG, VK_CONST };

typedef struct {
	const SimtFunc *sf;
	const Target *t;
	const AmdAbi *abi;
	MFunc *mf;
	Diag *d;
	ta_target it; /* ISA target */
	int w64, lm;  /* wave64?  lane-mask dwords */
	int gfx11;
	int32_t *vr;      /* SIMT reg -> MIR vreg */
	uint8_t *vsub;    /* SIMT reg -> first dword in that vreg (MMA operand tuples) */
	uint8_t *tfirst;  /* SIMT reg's one definition starts a new value of its whole tuple */
	int32_t *def1;    /* SIMT reg -> index of its (last) defining SIMT instruction */
	uint8_t *use;     /* SIMT reg: bit 0 read, bit 1 read other than as a 16-bit store's value */
	uint8_t *uni;     /* SIMT reg is uniform */
	uint8_t *isconst; /* SIMT reg has one def, a constant */
	int64_t *cval;
	int32_t *ndefs;
	int32_t *label_block; /* SIMT label -> MIR block, -1 until placed */
	int32_t *park;        /* SIMT label -> parked-lanes mask vreg, -1 if never targeted */
	int32_t *next_label;  /* SIMT insn -> next label id after it (nlabels = end) */
	int32_t *init_at;     /* SIMT insn -> label whose park mask is zeroed before it (chain) */
	int32_t *init_next;
	int32_t *label_pos;   /* SIMT label -> SIMT insn index */
	int32_t *init_pos;    /* park label -> SIMT insn before which its mask is zeroed */
	uint8_t *seg_zeroed;  /* label N -> the first exec-empty jump to N zeroed the skipped masks */
	int nlabels;          /* SIMT labels + 1 (the end label) */
	int32_t vgpr_in, tid, lane4; /* entry VGPR v0 copy, thread id, lane*4 */
	int32_t kernarg, wgid[3];
	int err;
	MInst dummy; /* returned after an allocation failure, so callers need no checks */
} Isel;

static const char *tname(const Isel *s)
{
	return target_name(ISA_TARGET(s->it));
}

static void unsupported(Isel *s, const char *what)
{
	if (!s->err)
		diag_error(s->d, "%s is not supported yet on %s (kernel '%s')", what, tname(s), s->sf->name);
	s->err = 1;
}

static MInst *emit(Isel *s, unsigned op, int ndef)
{
	if (op < ISA_NUM_OPS && !isa_op_exists(s->it, op)) {
		char buf[96];
		snprintf(buf, sizeof buf, "instruction %s", isa_ops[op].name[0] ? isa_ops[op].name[0]
										  : isa_ops[op].name[2]);
		unsupported(s, buf);
	}
	MInst *mi = mir_emit(s->mf, op, ndef);
	if (!mi) {
		if (!s->err)
			diag_error(s->d, "out of memory");
		s->err = 1;
		memset(&s->dummy, 0, sizeof s->dummy);
		return &s->dummy;
	}
	return mi;
}

static int newv(Isel *s, int cls, int size)
{
	int v = mir_vreg(s->mf, cls, size);
	if (v < 0)
		s->err = 1;
	return v < 0 ? 0 : v;
}

static Val reg(int v, int sub, int count)
{
	return (Val){VK_REG, (uint8_t)count, (uint8_t)sub, v, 0};
}
static Val cst(uint32_t bits)
{
	return (Val){VK_CONST, 1, 0, -1, bits};
}

static int vcls(const Isel *s, Val v)
{
	return v.kind == VK_REG ? s->mf->vregs.data[v.vreg].cls : -1;
}

static void put(Isel *s, MInst *mi, int i, Val v, IsaType ty)
{
	if (v.kind == VK_REG)
		mi_vreg(mi, i, s->mf, v.vreg, v.sub, v.count);
	else
		mi_phys(mi, i, isa_const_u32(ty, v.bits));
	(void)s;
}

static int is_inline(IsaType ty, uint32_t bits)
{
	IsaOperand o = isa_const_u32(ty, bits);
	return o.kind == ISA_K_CONST;
}

static IsaType optype(unsigned op)
{
	return (IsaType)isa_ops[op].type;
}

/* ---- SALU / VALU emission with operand legalization -------------------- */

/* v_mov_b32 of a value into a fresh VGPR (literals, extra SGPRs). */
static Val to_vgpr(Isel *s, Val v)
{
	if (vcls(s, v) == MR_V)
		return v;
	Val out = reg(newv(s, MR_V, v.count), 0, v.count);
	for (int k = 0; k < v.count; k++) {
		MInst *mi = emit(s, ISA_V_MOV_B32, 1);
		mi_vreg(mi, 0, s->mf, out.vreg, k, 1);
		if (v.kind == VK_CONST)
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, k ? 0 : v.bits));
		else
			mi_vreg(mi, 1, s->mf, v.vreg, v.sub + k, 1);
	}
	return out;
}

static Val to_sgpr_const(Isel *s, uint32_t bits)
{
	Val out = reg(newv(s, MR_S, 1), 0, 1);
	MInst *mi = emit(s, ISA_S_MOV_B32, 1);
	mi_vreg(mi, 0, s->mf, out.vreg, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, bits));
	return out;
}

/* VALU instruction: defs then sources (Val).  Picks e32/e64, moves
 * literals and extra SGPRs (constant-bus limit: 1 on gfx9, 2 on gfx11)
 * into VGPRs.  Returns the MInst for extra flags. */
static MInst *valu(Isel *s, unsigned op, int ndef, const Val *defs, int nsrc, Val *src)
{
	IsaType ty = optype(op);
	int fmt = isa_op_fmt(s->it, op);
	int bus_limit = s->gfx11 ? 2 : 1;
	bool carry = op == ISA_V_CNDMASK_B32 || op == ISA_V_ADDC_CO_U32 || op == ISA_V_SUBB_CO_U32 ||
		     op == ISA_V_ADD_CO_U32 || op == ISA_V_SUB_CO_U32;
	/* e32 (VOP1/VOP2) only when src1 is a VGPR; VOPC and the carry ops
	 * always use e64 so their lane masks can be any SGPRs, not vcc. */
	bool e64 = fmt == ISA_FMT_VOPC || carry ||
		   (fmt == ISA_FMT_VOP2 && nsrc >= 2 && vcls(s, src[1]) != MR_V);
	/* gfx11 e32 encodes 16-bit operands in 7 bits (v0-v127): use e64. */
	if (s->gfx11 && (ty == ISA_TY_F16 || ty == ISA_TY_B16 || op == ISA_V_CVT_F32_F16 || op == ISA_V_CVT_F16_F32))
		e64 = true;
	bool vop3 = e64 || fmt == ISA_FMT_VOP3 || fmt == ISA_FMT_VOP3P;
	int32_t sg[8];
	int nsg = 0, nlit = 0;
	/* Lane-mask sources (cndmask, addc carry-in) are SGPRs by nature. */
	if (carry && nsrc && vcls(s, src[nsrc - 1]) == MR_S && src[nsrc - 1].count == s->lm)
		sg[nsg++] = src[nsrc - 1].vreg;
	for (int i = 0; i < nsrc; i++) {
		if (carry && i == nsrc - 1 && nsg)
			continue;
		if (src[i].kind == VK_CONST) {
			if (is_inline(ty, src[i].bits))
				continue;
			/* A literal: src0 of e32, or (gfx11) any VOP3 slot, one per
			 * instruction, and it uses the constant bus. */
			bool ok = vop3 ? s->gfx11 && fmt != ISA_FMT_VOP3P : i == 0;
			if (ok && nlit == 0 && nsg < bus_limit) {
				nlit++, nsg++;
				continue;
			}
			src[i] = to_vgpr(s, src[i]);
		} else if (vcls(s, src[i]) == MR_S) {
			bool seen = false;
			for (int j = 0; j < nsg; j++)
				seen |= sg[j] == src[i].vreg;
			if (seen)
				continue;
			if (nsg < bus_limit && !(!vop3 && i == 1)) {
				sg[nsg++] = src[i].vreg;
				continue;
			}
			src[i] = to_vgpr(s, src[i]);
		}
	}
	MInst *mi = emit(s, op, ndef);
	int k = 0;
	for (int i = 0; i < ndef; i++)
		put(s, mi, k++, defs[i], ty);
	for (int i = 0; i < nsrc; i++)
		put(s, mi, k++, src[i], ty);
	if (fmt == ISA_FMT_VOP1 || fmt == ISA_FMT_VOP2 || fmt == ISA_FMT_VOPC)
		mi->in.enc = e64 ? ISA_ENC_E64 : ISA_ENC_DEFAULT;
	return mi;
}

static MInst *valu1(Isel *s, unsigned op, Val d, Val a)
{
	return valu(s, op, 1, &d, 1, &a);
}
static MInst *valu2(Isel *s, unsigned op, Val d, Val a, Val b)
{
	Val src[2] = {a, b};
	return valu(s, op, 1, &d, 2, src);
}
static MInst *valu3(Isel *s, unsigned op, Val d, Val a, Val b, Val c)
{
	Val src[3] = {a, b, c};
	return valu(s, op, 1, &d, 3, src);
}

/* SALU: at most one literal. */
static MInst *salu(Isel *s, unsigned op, int ndef, const Val *defs, int nsrc, Val *src)
{
	IsaType ty = optype(op);
	int nlit = 0;
	for (int i = 0; i < nsrc; i++) {
		if (src[i].kind == VK_CONST && !is_inline(ty, src[i].bits) && src[i].count == 1) {
			if (nlit++)
				src[i] = to_sgpr_const(s, src[i].bits);
		}
	}
	MInst *mi = emit(s, op, ndef);
	int k = 0;
	for (int i = 0; i < ndef; i++)
		put(s, mi, k++, defs[i], ty);
	for (int i = 0; i < nsrc; i++)
		put(s, mi, k++, src[i], ty);
	return mi;
}
static MInst *salu2(Isel *s, unsigned op, Val d, Val a, Val b)
{
	Val src[2] = {a, b};
	return salu(s, op, 1, &d, 2, src);
}
static MInst *salu1(Isel *s, unsigned op, Val d, Val a)
{
	return salu(s, op, 1, &d, 1, &a);
}

/* Lane-mask ops (b32 in wave32, b64 in wave64). */
static unsigned lmop(const Isel *s, unsigned op32, unsigned op64)
{
	return s->w64 ? op64 : op32;
}
static IsaOperand exec_op(const Isel *s)
{
	return isa_special(ISA_SP_EXEC_LO, s->lm);
}

/* ---- SIMT operands ------------------------------------------------------ */

static int simt_size(const Isel *s, int r)
{
	int vt = s->sf->regs.data[r];
	if (vt == VT_PRED)
		return s->lm;
	return vt == VT_I64 || vt == VT_F64 ? 2 : 1;
}

/* Operand dword k of SIMT register r (constants folded). */
static Val opnd(Isel *s, int r, int k)
{
	if (s->isconst[r]) {
		uint64_t b = (uint64_t)s->cval[r];
		return cst(k ? (uint32_t)(b >> 32) : (uint32_t)b);
	}
	return reg(s->vr[r], s->vsub[r] + k, 1);
}
static Val opnd_all(Isel *s, int r)
{
	if (s->isconst[r] && simt_size(s, r) == 1)
		return cst((uint32_t)s->cval[r]);
	if (s->isconst[r]) { /* 64-bit constant: materialize */
		int v = newv(s, s->uni[r] ? MR_S : MR_V, 2);
		for (int k = 0; k < 2; k++) {
			MInst *mi = emit(s, s->uni[r] ? ISA_S_MOV_B32 : ISA_V_MOV_B32, 1);
			mi_vreg(mi, 0, s->mf, v, k, 1);
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, (uint32_t)((uint64_t)s->cval[r] >> (32 * k))));
		}
		return reg(v, 0, 2);
	}
	return reg(s->vr[r], s->vsub[r], simt_size(s, r));
}
static Val dst_of(Isel *s, int r, int k, int count)
{
	return reg(s->vr[r], s->vsub[r] + k, count);
}

/* SIMT registers r..r+n-1 as one MIR tuple, when they are dwords
 * [sub, sub + n) of one vreg (grouped by group_mma_tuples). */
static bool is_tuple(const Isel *s, int r, int n)
{
	for (int k = 1; k < n; k++)
		if (s->vr[r + k] != s->vr[r] || s->vsub[r + k] != s->vsub[r] + k)
			return false;
	return !s->isconst[r];
}

/* ---- uniformity and constants ------------------------------------------ */

static bool int_type(int t)
{
	return t == DT_I32 || t == DT_U32 || t == DT_I64 || t == DT_BOOL || t == DT_I8 || t == DT_U8 ||
	       t == DT_I16;
}

/* Can this instruction produce a uniform value in SGPRs (given uniform
 * operands)? */
static bool salu_capable(const Isel *s, const SInst *in)
{
	switch (in->op) {
	case SI_MOVI: case SI_MOVF: case SI_MOV: case SI_CTAID: case SI_PARAM: case SI_SHBASE:
		return true;
	case SI_ADD: case SI_SUB: case SI_MUL: case SI_AND: case SI_OR: case SI_XOR: case SI_NOT:
	case SI_SHL: case SI_SHR: case SI_NEG:
		return int_type(in->type);
	case SI_MIN: case SI_MAX: case SI_ABS:
		return in->type == DT_I32 || in->type == DT_U32;
	case SI_DIV: case SI_REM: /* scalar only by a power-of-two constant */
		return (in->type == DT_I32 || in->type == DT_U32) && in->b >= 0 && s->isconst[in->b] &&
		       s->cval[in->b] > 0 && !(s->cval[in->b] & (s->cval[in->b] - 1));
	case SI_SETP:
		if (in->type == DT_I64)
			return in->sub == CMP_EQ || in->sub == CMP_NE;
		return in->type == DT_I32 || in->type == DT_U32;
	case SI_SELP:
		return true;
	case SI_CVT:
		return int_type(in->type) && int_type(in->type2) && in->type != DT_BOOL && in->type2 != DT_BOOL;
	case SI_PACK: case SI_UNPACK:
		return int_type(in->type) && in->type != DT_BOOL;
	default:
		return false;
	}
}

/* SIMT registers an instruction defines: dst..dst+n-1. */
static int dst_count(const SInst *in)
{
	if (in->op == SI_MMA)
		return simt_mma[in->sub].nc;
	if (in->op == SI_LD && in->vec > 1)
		return in->vec;
	return 1;
}

/* Index of the first back edge at a position > i (be_j is ascending). */
static int first_edge_after(const int32_t *be_j, int nbe, int i)
{
	int lo = 0, hi = nbe;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (be_j[mid] <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void analyze(Isel *s)
{
	const SimtFunc *sf = s->sf;
	int n = (int)sf->code.len, nr = (int)sf->regs.len;
	int32_t *label_pos = s->label_pos;
	int32_t *mark = calloc((size_t)n + 2, sizeof(int32_t));
	/* Unconditional back edges (position j, loop head h), in code order:
	 * the two loop searches below visit only these, not every instruction
	 * (they were O(branches x n)). */
	int32_t *be_j = malloc(sizeof(int32_t) * ((size_t)n + 1)), *be_h = malloc(sizeof(int32_t) * ((size_t)n + 1));
	int nbe = 0;
	if (!mark || !be_j || !be_h) {
		s->err = 1;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op == SI_LABEL)
			label_pos[in->imm] = i;
		if (in->dst >= 0) {
			int cnt = dst_count(in);
			for (int k = 0; k < cnt; k++)
				s->ndefs[in->dst + k]++, s->def1[in->dst + k] = i;
		}
	}
	label_pos[s->nlabels - 1] = n;
	for (int j = 0; j < n; j++) {
		const SInst *bj = &sf->code.data[j];
		if (bj->op == SI_BRA && bj->guard < 0 && label_pos[bj->imm] < j)
			be_j[nbe] = j, be_h[nbe++] = label_pos[bj->imm];
	}
	for (int i = 0; i < n; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->dst < 0 || s->ndefs[in->dst] != 1 || in->guard >= 0)
			continue;
		if (in->op == SI_MOVI || (in->op == SI_MOVF && in->type == DT_F32)) {
			s->isconst[in->dst] = 1;
			if (in->op == SI_MOVF) {
				float f = (float)in->fimm;
				uint32_t b;
				memcpy(&b, &f, 4);
				s->cval[in->dst] = b;
			} else if (in->type == DT_BOOL) {
				s->isconst[in->dst] = 0; /* predicates are lane masks */
			} else {
				s->cval[in->dst] = in->imm;
			}
		} else if (in->op == SI_SHBASE) {
			s->isconst[in->dst] = 1; /* LDS addresses start at 0 */
			s->cval[in->dst] = 0;
		}
	}
	for (int r = 0; r < nr; r++)
		s->uni[r] = 1;
	for (int iter = 0; iter < 64; iter++) {
		int changed = 0;
		memset(mark, 0, sizeof(int32_t) * ((size_t)n + 2));
		/* Divergent branches mark the code their lanes skip, and whole
		 * loops they leave. */
		for (int i = 0; i < n; i++) {
			const SInst *in = &sf->code.data[i];
			if (in->op != SI_BRA || in->guard < 0 || s->uni[in->guard])
				continue;
			int tpos = label_pos[in->imm];
			if (tpos <= i)
				continue;
			int lo = i + 1, hi = tpos;
			/* loops [h, j] containing i, exited by it */
			for (int e = first_edge_after(be_j, nbe, i); e < nbe && be_j[e] < tpos; e++)
				if (be_h[e] < i)
					lo = TA_MIN(lo, be_h[e]);
			mark[lo]++;
			mark[hi]--;
		}
		int depth = 0;
		for (int i = 0; i < n; i++) {
			depth += mark[i];
			const SInst *in = &sf->code.data[i];
			if (in->dst < 0)
				continue;
			int cnt = dst_count(in);
			bool u = depth == 0 && in->guard < 0 && salu_capable(s, in);
			if (u) {
				int ops[3] = {in->a, in->b, in->c};
				for (int k = 0; k < 3; k++)
					if (ops[k] >= 0 && !(in->op == SI_PARAM || in->op == SI_CTAID || in->op == SI_MOVI ||
							     in->op == SI_MOVF || in->op == SI_SHBASE) && !s->uni[ops[k]])
						u = false;
			}
			for (int k = 0; k < cnt; k++)
				if (!u && s->uni[in->dst + k])
					s->uni[in->dst + k] = 0, changed = 1;
		}
		if (!changed)
			break;
	}
	/* next_label: the first label after each instruction. */
	int nl = s->nlabels - 1;
	for (int i = n - 1; i >= 0; i--) {
		s->next_label[i] = nl;
		if (sf->code.data[i].op == SI_LABEL)
			nl = (int)sf->code.data[i].imm;
	}
	/* Park masks: zeroed before the first branch to the label, hoisted out
	 * of loops that contain that branch but not the label. */
	for (int i = 0; i < n; i++) {
		const SInst *in = &sf->code.data[i];
		int L = in->op == SI_BRA ? (int)in->imm : in->op == SI_RET && i + 1 < n ? s->nlabels - 1 : -1;
		if (L < 0 || label_pos[L] <= i || s->park[L] >= 0)
			continue;
		int at = i;
		for (int moved = 1; moved;) {
			moved = 0;
			for (int e = first_edge_after(be_j, nbe, at - 1); e < nbe && be_j[e] < label_pos[L]; e++)
				if (be_h[e] < at) {
					at = be_h[e];
					moved = 1;
				}
		}
		s->park[L] = newv(s, MR_S, s->lm);
		s->init_pos[L] = at;
		s->init_next[L] = s->init_at[at];
		s->init_at[at] = L;
	}
out:
	free(mark);
	free(be_j);
	free(be_h);
}

/* ---- instruction selection --------------------------------------------- */

static int log2_exact(int64_t v)
{
	if (v <= 0 || (v & (v - 1)))
		return -1;
	int k = 0;
	while ((1ll << k) < v)
		k++;
	return k;
}

static const unsigned vcmp_ops[][6] = {
	/* EQ, NE, LT, LE, GT, GE */
	{ISA_V_CMP_EQ_I32, ISA_V_CMP_NE_I32, ISA_V_CMP_LT_I32, ISA_V_CMP_LE_I32, ISA_V_CMP_GT_I32, ISA_V_CMP_GE_I32},
	{ISA_V_CMP_EQ_U32, ISA_V_CMP_NE_U32, ISA_V_CMP_LT_U32, ISA_V_CMP_LE_U32, ISA_V_CMP_GT_U32, ISA_V_CMP_GE_U32},
	{ISA_V_CMP_EQ_F32, ISA_V_CMP_NEQ_F32, ISA_V_CMP_LT_F32, ISA_V_CMP_LE_F32, ISA_V_CMP_GT_F32, ISA_V_CMP_GE_F32},
	{ISA_V_CMP_EQ_F64, ISA_V_CMP_NEQ_F64, ISA_V_CMP_LT_F64, ISA_V_CMP_LE_F64, ISA_V_CMP_GT_F64, ISA_V_CMP_GE_F64},
};
static const unsigned scmp_ops[][6] = {
	{ISA_S_CMP_EQ_I32, ISA_S_CMP_LG_I32, ISA_S_CMP_LT_I32, ISA_S_CMP_LE_I32, ISA_S_CMP_GT_I32, ISA_S_CMP_GE_I32},
	{ISA_S_CMP_EQ_U32, ISA_S_CMP_LG_U32, ISA_S_CMP_LT_U32, ISA_S_CMP_LE_U32, ISA_S_CMP_GT_U32, ISA_S_CMP_GE_U32},
};

/* mask = all-ones if SCC else 0 */
static void scc_to_mask(Isel *s, int mask_vreg)
{
	Val d = reg(mask_vreg, 0, s->lm);
	MInst *mi = emit(s, lmop(s, ISA_S_CSELECT_B32, ISA_S_CSELECT_B64), 1);
	put(s, mi, 0, d, ISA_TY_B32);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0xffffffffu));
	mi_phys(mi, 2, isa_const_u32(ISA_TY_B32, 0));
}

/* SCC = (mask != 0) */
static void mask_to_scc(Isel *s, Val m)
{
	MInst *mi = emit(s, s->w64 ? ISA_S_CMP_LG_U64 : ISA_S_CMP_LG_U32, 0);
	put(s, mi, 0, m, ISA_TY_B32);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
}

static void sel_setp(Isel *s, const SInst *in)
{
	int t = in->type;
	Val d = dst_of(s, in->dst, 0, s->lm);
	if (s->uni[in->dst] && t != DT_I64) {
		unsigned op = scmp_ops[t == DT_U32][in->sub];
		Val src[2] = {opnd(s, in->a, 0), opnd(s, in->b, 0)};
		salu(s, op, 0, NULL, 2, src);
		scc_to_mask(s, d.vreg);
		return;
	}
	if (s->uni[in->dst]) { /* i64 eq/ne */
		Val src[2] = {opnd_all(s, in->a), opnd_all(s, in->b)}; /* constants materialized */
		salu(s, in->sub == CMP_EQ ? ISA_S_CMP_EQ_U64 : ISA_S_CMP_LG_U64, 0, NULL, 2, src);
		scc_to_mask(s, d.vreg);
		return;
	}
	int row;
	if (t == DT_F32)
		row = 2;
	else if (t == DT_F64)
		row = 3;
	else if (t == DT_U32 || t == DT_U8)
		row = 1;
	else if (t == DT_I64) {
		/* the table has ==, <, > on i64: != <= >= are their negations */
		static const unsigned i64ops[6] = {ISA_V_CMP_EQ_I64, ISA_V_CMP_EQ_I64, ISA_V_CMP_LT_I64, ISA_V_CMP_GT_I64,
						   ISA_V_CMP_GT_I64, ISA_V_CMP_LT_I64};
		bool neg = in->sub == CMP_NE || in->sub == CMP_LE || in->sub == CMP_GE;
		Val m = neg ? reg(newv(s, MR_S, s->lm), 0, s->lm) : d;
		valu2(s, i64ops[in->sub], m, opnd_all(s, in->a), opnd_all(s, in->b));
		if (neg) {
			MInst *mi = emit(s, lmop(s, ISA_S_NOT_B32, ISA_S_NOT_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			put(s, mi, 1, m, ISA_TY_B32);
		}
		return;
	} else
		row = 0;
	if (row == 3) {
		valu2(s, vcmp_ops[3][in->sub], d, opnd_all(s, in->a), opnd_all(s, in->b));
		return;
	}
	valu2(s, vcmp_ops[row][in->sub], d, opnd(s, in->a, 0), opnd(s, in->b, 0));
}

/* IEEE f32 division, LLVM's sequence (f32 denormals are kept, so no mode
 * switch): v_div_scale scales numerator and denominator away from the
 * subnormal and overflow ranges (and sets vcc where the quotient must be
 * scaled back), a reciprocal with two Newton steps on it and two on the
 * quotient, v_div_fmas applies the last step and the post-scale, and
 * v_div_fixup gives the special cases (x/0, x/inf, 0/0, NaN).  vcc is
 * written only here (the allocator never hands it out), and nothing between
 * the second v_div_scale and v_div_fmas writes it; the hazard pass adds the
 * wait states gfx9 needs between them. */
static Val vtmp(Isel *s);
static void sel_fdiv(Isel *s, Val d, Val a, Val b)
{
	/* v_div_fixup reads the original operands; VOP3 on gfx9 takes no literal */
	if (a.kind == VK_CONST && !is_inline(ISA_TY_F32, a.bits) && !s->gfx11)
		a = to_vgpr(s, a);
	if (b.kind == VK_CONST && !is_inline(ISA_TY_F32, b.bits) && !s->gfx11)
		b = to_vgpr(s, b);
	Val ds = vtmp(s), ns = vtmp(s), r = vtmp(s), t = vtmp(s), r2 = vtmp(s), q = vtmp(s), e = vtmp(s);
	Val q2 = vtmp(s), e2 = vtmp(s), f = vtmp(s);
	IsaOperand vcc = isa_special(ISA_SP_VCC_LO, s->lm);
	Val defs[2] = {ds, ds}, src[3] = {b, b, a}; /* defs[1]: a placeholder for vcc */
	mi_phys(valu(s, ISA_V_DIV_SCALE_F32, 2, defs, 3, src), 1, vcc);
	defs[0] = ns, src[0] = a;
	mi_phys(valu(s, ISA_V_DIV_SCALE_F32, 2, defs, 3, src), 1, vcc);
	valu1(s, ISA_V_RCP_F32, r, ds);
	valu3(s, ISA_V_FMA_F32, t, ds, r, cst(0x3f800000u))->in.mod.neg = 1; /* 1 - d*r */
	valu3(s, ISA_V_FMA_F32, r2, t, r, r);
	valu2(s, ISA_V_MUL_F32, q, ns, r2);
	valu3(s, ISA_V_FMA_F32, e, ds, q, ns)->in.mod.neg = 1; /* n - d*q */
	valu3(s, ISA_V_FMA_F32, q2, e, r2, q);
	valu3(s, ISA_V_FMA_F32, e2, ds, q2, ns)->in.mod.neg = 1;
	valu3(s, ISA_V_DIV_FMAS_F32, f, e2, r2, q2);
	valu3(s, ISA_V_DIV_FIXUP_F32, d, f, b, a);
}

/* A 64-bit source of v_lshl_add_u64.  Constants here are zero-extended
 * 32-bit values: only 0..64 are inline as such (a 64-bit inline -1..-16 would
 * sign-extend, a float constant would mean the f64), and gfx9 VOP3 takes no
 * literal, so the rest go to a VGPR pair. */
static Val add64_src(Isel *s, Val v)
{
	if (v.kind != VK_CONST)
		return v;
	if (v.bits <= 64)
		return v;
	v.count = 2; /* to_vgpr: low word = bits, high word = 0 */
	return to_vgpr(s, v);
}

/* 64-bit integer ops on VGPRs. */
static void sel_add64(Isel *s, Val d, Val a, Val b, bool sub, bool uni)
{
	if (uni) {
		Val lo = reg(d.vreg, d.sub, 1), hi = reg(d.vreg, d.sub + 1, 1);
		Val al = a.kind == VK_CONST ? cst(a.bits) : reg(a.vreg, a.sub, 1);
		Val ah = a.kind == VK_CONST ? cst(0) : reg(a.vreg, a.sub + 1, 1);
		Val bl = b.kind == VK_CONST ? cst(b.bits) : reg(b.vreg, b.sub, 1);
		Val bh = b.kind == VK_CONST ? cst(0) : reg(b.vreg, b.sub + 1, 1);
		MInst *mi = salu2(s, sub ? ISA_S_SUB_U32 : ISA_S_ADD_U32, lo, al, bl);
		mi->flags |= MI_DEFALL;
		salu2(s, sub ? ISA_S_SUBB_U32 : ISA_S_ADDC_U32, hi, ah, bh);
		return;
	}
	/* gfx942: one v_lshl_add_u64 (shift 0) instead of an add/addc carry
	 * chain; it writes no carry SGPR, so no VALU-writes-SGPR hazard nops. */
	if (!sub && s->it == TA_TARGET_GFX942) {
		Val src[3] = {add64_src(s, a), cst(0), add64_src(s, b)};
		MInst *mi = valu(s, ISA_V_LSHL_ADD_U64, 1, &d, 3, src);
		mi->flags |= MI_DEFALL;
		return;
	}
	int c = newv(s, MR_S, s->lm);
	Val defs[2] = {reg(d.vreg, d.sub, 1), reg(c, 0, s->lm)};
	Val src[3] = {a.kind == VK_CONST ? cst(a.bits) : reg(a.vreg, a.sub, 1),
		      b.kind == VK_CONST ? cst(b.bits) : reg(b.vreg, b.sub, 1)};
	MInst *mi = valu(s, sub ? ISA_V_SUB_CO_U32 : ISA_V_ADD_CO_U32, 2, defs, 2, src);
	mi->flags |= MI_DEFALL;
	int c2 = newv(s, MR_S, s->lm);
	Val defs2[2] = {reg(d.vreg, d.sub + 1, 1), reg(c2, 0, s->lm)};
	Val src2[3] = {a.kind == VK_CONST ? cst(0) : reg(a.vreg, a.sub + 1, 1),
		       b.kind == VK_CONST ? cst(0) : reg(b.vreg, b.sub + 1, 1), reg(c, 0, s->lm)};
	/* carry-in and sources: the bus limit check in valu moves SGPRs. */
	for (int k = 0; k < 2; k++)
		if (vcls(s, src2[k]) == MR_S || (src2[k].kind == VK_CONST && !is_inline(ISA_TY_B32, src2[k].bits)))
			src2[k] = to_vgpr(s, src2[k]);
	MInst *m2 = valu(s, sub ? ISA_V_SUBB_CO_U32 : ISA_V_ADDC_CO_U32, 2, defs2, 3, src2);
	m2->flags |= MI_EARLY;
}

/* gfx942, divergent d = x + o where x = y * 2^k or y << k (k = 1..4, x and
 * y defined once, unguarded, with no label from y's definition to here, so
 * y still holds the value x was made from): one v_lshl_add_u64 d, y, k, o.
 * The scaled address of a load is then one instruction; amd_opt drops the
 * shift when nothing else reads x. */
static bool sel_lshl_add64(Isel *s, const SInst *in, Val d)
{
	const SInst *code = s->sf->code.data;
	int at = (int)(in - code);
	for (int side = 0; side < 2; side++) {
		int x = side ? in->b : in->a, o = side ? in->a : in->b;
		if (x < 0 || o < 0 || s->ndefs[x] != 1 || s->isconst[x])
			continue;
		const SInst *m = &code[s->def1[x]];
		if (m->guard >= 0 || m->type != DT_I64 || m->dst != x || (m->op != SI_MUL && m->op != SI_SHL))
			continue;
		int y = -1, k = -1;
		for (int j = 0; j < 2 && k < 0; j++) {
			int cr = j ? m->a : m->b;
			if (cr < 0 || !s->isconst[cr])
				continue;
			if (m->op == SI_MUL)
				k = log2_exact(s->cval[cr]), y = j ? m->b : m->a;
			else if (j == 0)
				k = s->cval[cr] >= 0 && s->cval[cr] < 64 ? (int)s->cval[cr] : -1, y = m->a;
		}
		if (k < 1 || k > 4 || y < 0 || s->ndefs[y] != 1 || s->isconst[y] || simt_size(s, y) != 2 ||
		    s->def1[y] >= s->def1[x] || s->label_pos[s->next_label[s->def1[y]]] < at)
			continue;
		Val src[3] = {opnd_all(s, y), cst((uint32_t)k), add64_src(s, opnd_all(s, o))};
		MInst *mi = valu(s, ISA_V_LSHL_ADD_U64, 1, &d, 3, src);
		mi->flags |= MI_DEFALL;
		return true;
	}
	return false;
}

static void sel_mul64(Isel *s, const SInst *in, Val d)
{
	/* By a power-of-two constant (element sizes): a shift. */
	for (int side = 0; side < 2; side++) {
		int cr = side ? in->a : in->b, xr = side ? in->b : in->a;
		int k = s->isconst[cr] ? log2_exact(s->cval[cr]) : -1;
		if (k < 0 || k > 31)
			continue;
		if (s->uni[in->dst])
			salu2(s, ISA_S_LSHL_B64, d, opnd_all(s, xr), cst((uint32_t)k));
		else
			valu2(s, ISA_V_LSHLREV_B64, d, cst((uint32_t)k), opnd_all(s, xr));
		return;
	}
	Val a = opnd_all(s, in->a), b = opnd_all(s, in->b);
	int dv = d.vreg;
	bool alias = (a.kind == VK_REG && a.vreg == dv) || (b.kind == VK_REG && b.vreg == dv);
	if (s->uni[in->dst]) {
		int t = alias ? newv(s, MR_S, 2) : dv;
		Val al = a.kind == VK_CONST ? a : reg(a.vreg, 0, 1), ah = a.kind == VK_CONST ? cst(0) : reg(a.vreg, 1, 1);
		Val bl = b.kind == VK_CONST ? b : reg(b.vreg, 0, 1), bh = b.kind == VK_CONST ? cst(0) : reg(b.vreg, 1, 1);
		Val t1 = reg(newv(s, MR_S, 1), 0, 1), t2 = reg(newv(s, MR_S, 1), 0, 1);
		salu2(s, ISA_S_MUL_HI_U32, t1, al, bl);
		salu2(s, ISA_S_MUL_I32, t2, al, bh);
		salu2(s, ISA_S_ADD_U32, t1, t1, t2);
		salu2(s, ISA_S_MUL_I32, t2, ah, bl);
		MInst *mi = salu2(s, ISA_S_MUL_I32, reg(t, 0, 1), al, bl);
		mi->flags |= MI_DEFALL;
		salu2(s, ISA_S_ADD_U32, reg(t, 1, 1), t1, t2);
		if (alias) {
			MInst *c = emit(s, MOP_COPY, 1);
			mi_vreg(c, 0, s->mf, dv, 0, 2);
			mi_vreg(c, 1, s->mf, t, 0, 2);
		}
		return;
	}
	int t = alias ? newv(s, MR_V, 2) : dv;
	Val al = a.kind == VK_CONST ? a : reg(a.vreg, 0, 1), ah = a.kind == VK_CONST ? cst(0) : reg(a.vreg, 1, 1);
	Val bl = b.kind == VK_CONST ? b : reg(b.vreg, 0, 1), bh = b.kind == VK_CONST ? cst(0) : reg(b.vreg, 1, 1);
	/* lo*lo as two 32-bit halves, then add the cross products to the high
	 * half (v_mad_u64_u32 would also need a carry-out SGPR pair). */
	MInst *lo = valu2(s, ISA_V_MUL_LO_U32, reg(t, 0, 1), al, bl);
	lo->flags |= MI_DEFALL;
	valu2(s, ISA_V_MUL_HI_U32, reg(t, 1, 1), al, bl);
	bool ah0 = a.kind == VK_CONST && a.count == 1, bh0 = b.kind == VK_CONST && b.count == 1;
	if (!bh0) {
		Val x = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_MUL_LO_U32, x, al, bh);
		valu2(s, ISA_V_ADD_U32, reg(t, 1, 1), reg(t, 1, 1), x);
	}
	if (!ah0) {
		Val x = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_MUL_LO_U32, x, ah, bl);
		valu2(s, ISA_V_ADD_U32, reg(t, 1, 1), reg(t, 1, 1), x);
	}
	if (alias) {
		MInst *cp = emit(s, MOP_COPY, 1);
		mi_vreg(cp, 0, s->mf, dv, 0, 2);
		mi_vreg(cp, 1, s->mf, t, 0, 2);
	}
}

/* Integer division/remainder by a power-of-two constant. */
static void sel_divrem_pow2(Isel *s, const SInst *in, int k)
{
	bool uni = s->uni[in->dst], sgn = in->type == DT_I32, rem = in->op == SI_REM;
	Val d = dst_of(s, in->dst, 0, 1), a = opnd(s, in->a, 0);
	int cls = uni ? MR_S : MR_V;
	if (a.kind == VK_CONST) {
		a = uni ? to_sgpr_const(s, a.bits) : to_vgpr(s, a);
	}
	if (!sgn) {
		if (rem) {
			uni ? salu2(s, ISA_S_AND_B32, d, a, cst((1u << k) - 1))
			    : valu2(s, ISA_V_AND_B32, d, cst((1u << k) - 1), a);
		} else {
			uni ? salu2(s, ISA_S_LSHR_B32, d, a, cst((uint32_t)k)) : valu2(s, ISA_V_LSHRREV_B32, d, cst((uint32_t)k), a);
		}
		return;
	}
	/* signed: bias = (a >> 31) >>> (32 - k); q = (a + bias) >> k;
	 * r = a - (q << k) */
	Val bias = reg(newv(s, cls, 1), 0, 1), t = reg(newv(s, cls, 1), 0, 1);
	if (uni) {
		salu2(s, ISA_S_ASHR_I32, bias, a, cst(31));
		salu2(s, ISA_S_LSHR_B32, bias, bias, cst((uint32_t)(32 - k)));
		salu2(s, ISA_S_ADD_U32, t, a, bias);
		if (!rem) {
			salu2(s, ISA_S_ASHR_I32, d, t, cst((uint32_t)k));
		} else {
			salu2(s, ISA_S_AND_B32, t, t, cst(~((1u << k) - 1)));
			salu2(s, ISA_S_SUB_U32, d, a, t);
		}
	} else {
		valu2(s, ISA_V_ASHRREV_I32, bias, cst(31), a);
		valu2(s, ISA_V_LSHRREV_B32, bias, cst((uint32_t)(32 - k)), bias);
		valu2(s, ISA_V_ADD_U32, t, a, bias);
		if (!rem) {
			valu2(s, ISA_V_ASHRREV_I32, d, cst((uint32_t)k), t);
		} else {
			valu2(s, ISA_V_AND_B32, t, cst(~((1u << k) - 1)), t);
			valu2(s, ISA_V_SUB_U32, d, a, t);
		}
	}
}

static Val vtmp(Isel *s)
{
	return reg(newv(s, MR_V, 1), 0, 1);
}

/* c ? x : y per lane (c a lane mask vreg). */
static void vsel(Isel *s, Val d, Val c, Val x, Val y)
{
	Val src[3] = {y, x, c};
	valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, src);
}

/* 32-bit integer division/remainder by a runtime value (VALU): reciprocal
 * estimate of 2^32/d in float, one Newton step in integers, the quotient
 * from mul_hi, then at most two corrections.  Signed: on magnitudes, with
 * the signs applied afterwards (truncating, like C). */
static void sel_divrem_general(Isel *s, const SInst *in)
{
	bool sgn = in->type == DT_I32, rem = in->op == SI_REM;
	Val n = to_vgpr(s, opnd(s, in->a, 0)), d = to_vgpr(s, opnd(s, in->b, 0));
	Val sa = {0}, sb = {0};
	if (sgn) {
		sa = vtmp(s), sb = vtmp(s);
		Val an = vtmp(s), ad = vtmp(s);
		valu2(s, ISA_V_ASHRREV_I32, sa, cst(31), n);
		valu2(s, ISA_V_ASHRREV_I32, sb, cst(31), d);
		valu2(s, ISA_V_ADD_U32, an, n, sa);
		valu2(s, ISA_V_XOR_B32, an, an, sa);
		valu2(s, ISA_V_ADD_U32, ad, d, sb);
		valu2(s, ISA_V_XOR_B32, ad, ad, sb);
		n = an, d = ad;
	}
	Val z = vtmp(s), t = vtmp(s), q = vtmp(s), r = vtmp(s);
	valu1(s, ISA_V_CVT_F32_U32, t, d);
	valu1(s, ISA_V_RCP_IFLAG_F32, t, t);
	valu2(s, ISA_V_MUL_F32, t, cst(0x4f7ffffeu), t); /* just under 2^32 */
	valu1(s, ISA_V_CVT_U32_F32, z, t);
	valu2(s, ISA_V_SUB_U32, t, cst(0), d);
	valu2(s, ISA_V_MUL_LO_U32, t, t, z);
	valu2(s, ISA_V_MUL_HI_U32, t, z, t);
	valu2(s, ISA_V_ADD_U32, z, z, t);
	valu2(s, ISA_V_MUL_HI_U32, q, n, z);
	valu2(s, ISA_V_MUL_LO_U32, t, q, d);
	valu2(s, ISA_V_SUB_U32, r, n, t);
	for (int k = 0; k < 2; k++) {
		Val c = reg(newv(s, MR_S, s->lm), 0, s->lm), q1 = vtmp(s), r1 = vtmp(s);
		valu2(s, ISA_V_CMP_GE_U32, c, r, d);
		valu2(s, ISA_V_ADD_U32, q1, q, cst(1));
		valu2(s, ISA_V_SUB_U32, r1, r, d);
		vsel(s, q, c, q1, q);
		vsel(s, r, c, r1, r);
	}
	Val res = rem ? r : q, dst = dst_of(s, in->dst, 0, 1);
	if (!sgn) {
		valu1(s, ISA_V_MOV_B32, dst, res);
		return;
	}
	Val sg = rem ? sa : vtmp(s);
	if (!rem)
		valu2(s, ISA_V_XOR_B32, sg, sa, sb);
	valu2(s, ISA_V_XOR_B32, res, res, sg);
	valu2(s, ISA_V_SUB_U32, dst, res, sg);
}

/* d = min/max(a, b) of i64 values (two dwords each). */
static void sel_minmax64(Isel *s, Val d, Val a, Val b, bool max)
{
	Val m = reg(newv(s, MR_S, s->lm), 0, s->lm);
	valu2(s, max ? ISA_V_CMP_GT_I64 : ISA_V_CMP_LT_I64, m, a, b);
	for (int k = 0; k < 2; k++) {
		Val dk = reg(d.vreg, d.sub + k, 1);
		Val ak = a.kind == VK_CONST ? a : reg(a.vreg, a.sub + k, 1), bk = b.kind == VK_CONST ? b : reg(b.vreg, b.sub + k, 1);
		Val src[3] = {bk, ak, m};
		MInst *mi = valu(s, ISA_V_CNDMASK_B32, 1, &dk, 3, src);
		if (!k)
			mi->flags |= MI_DEFALL;
	}
}

/* Binary integer/float arithmetic (32-bit). */
static void sel_arith(Isel *s, const SInst *in)
{
	int t = in->type;
	bool fl = t == DT_F32, uni = s->uni[in->dst], u = t == DT_U32;
	if (t == DT_F64) { /* IEEE v_add/v_mul_f64; a - b is a + (-b) by the neg modifier */
		Val d = dst_of(s, in->dst, 0, 2), a = opnd_all(s, in->a), b = in->b >= 0 ? opnd_all(s, in->b) : cst(0);
		switch (in->op) {
		case SI_ADD: valu2(s, ISA_V_ADD_F64, d, a, b); return;
		case SI_SUB: valu2(s, ISA_V_ADD_F64, d, a, b)->in.mod.neg = 2; return;
		case SI_MUL: valu2(s, ISA_V_MUL_F64, d, a, b); return;
		default: unsupported(s, "f64 division, min and max"); return;
		}
	}
	if (t == DT_F16 || t == DT_BF16) {
		unsupported(s, "f16 arithmetic in registers");
		return;
	}
	if (t == DT_I64) {
		Val d = dst_of(s, in->dst, 0, 2);
		switch (in->op) {
		case SI_ADD: case SI_SUB: {
			Val a = opnd_all(s, in->a), b = opnd_all(s, in->b);
			bool alias = (a.kind == VK_REG && a.vreg == d.vreg) || (b.kind == VK_REG && b.vreg == d.vreg);
			(void)alias; /* lo is written first and read only through a.lo/b.lo: safe */
			if (in->op == SI_ADD && !uni && s->it == TA_TARGET_GFX942 && sel_lshl_add64(s, in, d))
				return;
			sel_add64(s, d, a, b, in->op == SI_SUB, uni);
			return;
		}
		case SI_MUL: sel_mul64(s, in, d); return;
		case SI_MIN: case SI_MAX: /* vector only (salu_capable): compare, then select each half */
			sel_minmax64(s, d, opnd_all(s, in->a), opnd_all(s, in->b), in->op == SI_MAX);
			return;
		case SI_DIV: case SI_REM:
			unsupported(s, "64-bit integer division and modulo (//, %, ceildiv on i64)");
			return;
		case SI_AND: case SI_OR: case SI_XOR: {
			unsigned sop = in->op == SI_AND ? ISA_S_AND_B64 : in->op == SI_OR ? ISA_S_OR_B64 : ISA_S_XOR_B64;
			unsigned vop = in->op == SI_AND ? ISA_V_AND_B32 : in->op == SI_OR ? ISA_V_OR_B32 : ISA_V_XOR_B32;
			if (uni) {
				salu2(s, sop, d, opnd_all(s, in->a), opnd_all(s, in->b));
				return;
			}
			for (int k = 0; k < 2; k++) {
				MInst *mi = valu2(s, vop, dst_of(s, in->dst, k, 1), opnd(s, in->a, k), opnd(s, in->b, k));
				if (!k)
					mi->flags |= MI_DEFALL;
			}
			return;
		}
		case SI_SHL: case SI_SHR: {
			Val amt = opnd(s, in->b, 0);
			if (uni) {
				unsigned op = in->op == SI_SHL ? ISA_S_LSHL_B64 : ISA_S_ASHR_I64;
				salu2(s, op, d, opnd_all(s, in->a), amt);
				return;
			}
			unsigned op = in->op == SI_SHL ? ISA_V_LSHLREV_B64 : ISA_V_ASHRREV_I64;
			valu2(s, op, d, amt, opnd_all(s, in->a));
			return;
		}
		default:
			unsupported(s, "this 64-bit integer operation");
			return;
		}
	}
	Val d = dst_of(s, in->dst, 0, 1), a = opnd(s, in->a, 0), b = in->b >= 0 ? opnd(s, in->b, 0) : cst(0);
	if ((in->op == SI_DIV || in->op == SI_REM) && !fl) {
		int k = in->b >= 0 && s->isconst[in->b] ? log2_exact(s->cval[in->b]) : -1;
		if (k < 0) {
			if (t != DT_I32 && t != DT_U32) {
				unsupported(s, "division of this integer type");
				return;
			}
			sel_divrem_general(s, in);
			return;
		}
		if (k == 0) {
			if (in->op == SI_DIV)
				uni ? (void)salu1(s, ISA_S_MOV_B32, d, a) : (void)valu1(s, ISA_V_MOV_B32, d, a);
			else
				uni ? (void)salu1(s, ISA_S_MOV_B32, d, cst(0)) : (void)valu1(s, ISA_V_MOV_B32, d, cst(0));
			return;
		}
		sel_divrem_pow2(s, in, k);
		return;
	}
	if (uni) {
		unsigned op = 0;
		switch (in->op) {
		case SI_ADD: op = ISA_S_ADD_U32; break;
		case SI_SUB: op = ISA_S_SUB_U32; break;
		case SI_MUL: op = ISA_S_MUL_I32; break;
		case SI_AND: op = t == DT_BOOL ? lmop(s, ISA_S_AND_B32, ISA_S_AND_B64) : ISA_S_AND_B32; break;
		case SI_OR: op = t == DT_BOOL ? lmop(s, ISA_S_OR_B32, ISA_S_OR_B64) : ISA_S_OR_B32; break;
		case SI_XOR: op = t == DT_BOOL ? lmop(s, ISA_S_XOR_B32, ISA_S_XOR_B64) : ISA_S_XOR_B32; break;
		case SI_SHL: op = ISA_S_LSHL_B32; break;
		case SI_SHR: op = u ? ISA_S_LSHR_B32 : ISA_S_ASHR_I32; break;
		case SI_MIN: op = u ? ISA_S_MIN_U32 : ISA_S_MIN_I32; break;
		case SI_MAX: op = u ? ISA_S_MAX_U32 : ISA_S_MAX_I32; break;
		default: unsupported(s, "this scalar operation"); return;
		}
		salu2(s, op, d, a, b);
		return;
	}
	switch (in->op) {
	case SI_ADD: valu2(s, fl ? ISA_V_ADD_F32 : ISA_V_ADD_U32, d, a, b); return;
	case SI_SUB: valu2(s, fl ? ISA_V_SUB_F32 : ISA_V_SUB_U32, d, a, b); return;
	case SI_MUL: valu2(s, fl ? ISA_V_MUL_F32 : ISA_V_MUL_LO_U32, d, a, b); return;
	case SI_DIV: sel_fdiv(s, d, a, b); return;
	case SI_MIN: valu2(s, fl ? ISA_V_MIN_F32 : u ? ISA_V_MIN_U32 : ISA_V_MIN_I32, d, a, b); return;
	case SI_MAX: valu2(s, fl ? ISA_V_MAX_F32 : u ? ISA_V_MAX_U32 : ISA_V_MAX_I32, d, a, b); return;
	case SI_AND: valu2(s, ISA_V_AND_B32, d, a, b); return;
	case SI_OR: valu2(s, ISA_V_OR_B32, d, a, b); return;
	case SI_XOR: valu2(s, ISA_V_XOR_B32, d, a, b); return;
	case SI_SHL: valu2(s, ISA_V_LSHLREV_B32, d, b, a); return;
	case SI_SHR: valu2(s, u ? ISA_V_LSHRREV_B32 : ISA_V_ASHRREV_I32, d, b, a); return;
	default: unsupported(s, "this vector operation"); return;
	}
}

/* ---- memory -------------------------------------------------------------- */

static int dtype_bytes_of(int t)
{
	switch (t) {
	case DT_BOOL: case DT_I8: case DT_U8: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ:
	case DT_FP8E5M2FNUZ: return 1;
	case DT_I16: case DT_F16: case DT_BF16: return 2;
	case DT_I64: case DT_F64: return 8;
	default: return 4;
	}
}

static bool signed_small(int t)
{
	return t == DT_I8 || t == DT_I16;
}

/* Global address as VGPR pair (+ optional SGPR base) and an in-range offset. */
typedef struct {
	Val vaddr; /* VGPR pair, or VGPR dword offset when saddr is set */
	Val saddr; /* SGPR pair or kind VK_CONST = off */
	int32_t off;
} GAddr;

static GAddr global_addr(Isel *s, int areg, int64_t imm)
{
	GAddr g;
	g.saddr = cst(0);
	g.saddr.kind = VK_CONST;
	g.off = 0;
	bool fits = imm >= -4096 && imm <= 4095;
	Val a = opnd_all(s, areg);
	if (!fits) {
		Val t = reg(newv(s, s->uni[areg] ? MR_S : MR_V, 2), 0, 2);
		Val c = cst((uint32_t)imm);
		if (imm < INT32_MIN || imm > INT32_MAX || imm < 0) {
			unsupported(s, "a global memory offset outside 0..2^31");
			return g;
		}
		sel_add64(s, t, a, c, false, s->uni[areg]);
		a = t;
		imm = 0;
	}
	g.off = (int32_t)imm;
	if (vcls(s, a) == MR_S) {
		g.saddr = a;
		g.vaddr = reg(newv(s, MR_V, 1), 0, 1);
		valu1(s, ISA_V_MOV_B32, g.vaddr, cst(0));
	} else {
		g.vaddr = a;
	}
	return g;
}

static unsigned global_load_op(int bytes, bool sgn)
{
	switch (bytes) {
	case 1: return sgn ? ISA_GLOBAL_LOAD_SBYTE : ISA_GLOBAL_LOAD_UBYTE;
	case 2: return sgn ? ISA_GLOBAL_LOAD_SSHORT : ISA_GLOBAL_LOAD_USHORT;
	case 8: return ISA_GLOBAL_LOAD_DWORDX2;
	case 16: return ISA_GLOBAL_LOAD_DWORDX4;
	default: return ISA_GLOBAL_LOAD_DWORD;
	}
}
static unsigned global_store_op(int bytes)
{
	switch (bytes) {
	case 1: return ISA_GLOBAL_STORE_BYTE;
	case 2: return ISA_GLOBAL_STORE_SHORT;
	case 8: return ISA_GLOBAL_STORE_DWORDX2;
	case 16: return ISA_GLOBAL_STORE_DWORDX4;
	default: return ISA_GLOBAL_STORE_DWORD;
	}
}
static unsigned ds_load_op(int bytes, bool sgn)
{
	switch (bytes) {
	case 1: return sgn ? ISA_DS_READ_I8 : ISA_DS_READ_U8;
	case 2: return sgn ? ISA_DS_READ_I16 : ISA_DS_READ_U16;
	case 8: return ISA_DS_READ_B64;
	case 16: return ISA_DS_READ_B128;
	default: return ISA_DS_READ_B32;
	}
}
static unsigned ds_store_op(int bytes)
{
	switch (bytes) {
	case 1: return ISA_DS_WRITE_B8;
	case 2: return ISA_DS_WRITE_B16;
	case 8: return ISA_DS_WRITE_B64;
	case 16: return ISA_DS_WRITE_B128;
	default: return ISA_DS_WRITE_B32;
	}
}

/* The loaded value goes to a VGPR; a uniform-typed destination is never
 * produced (loads are divergent in the analysis). */
/* LDS address of a SIMT shared-memory access: a VGPR plus the DS
 * instruction's 16-bit unsigned offset (folded from constants). */
static Val lds_addr(Isel *s, const SInst *in, int32_t *off_out)
{
	Val a = opnd(s, in->a, 0);
	int64_t off = in->imm;
	if (a.kind == VK_CONST) {
		off += (int32_t)a.bits;
		a = cst(0);
	}
	if (off < 0 || off > 65535) {
		Val t = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_ADD_U32, t, a, cst((uint32_t)off));
		a = t, off = 0;
	}
	*off_out = (int32_t)off;
	return to_vgpr(s, a);
}

static void sel_ld(Isel *s, const SInst *in)
{
	int bytes = dtype_bytes_of(in->type);
	bool sgn = signed_small(in->type);
	int n = bytes == 8 ? 2 : 1;
	int vec = in->vec > 1 ? in->vec : 1;
	Val d = dst_of(s, in->dst, 0, n);
	bool direct = vec > 1 && is_tuple(s, in->dst, vec);
	if (vec > 1) { /* one wide load into a tuple, then moves to the SIMT registers */
		bytes = 4 * vec;
		n = vec;
		d = direct ? dst_of(s, in->dst, 0, vec) : reg(newv(s, MR_V, vec), 0, vec);
	}
	if (in->sub == SP_GLOBAL) {
		GAddr g = global_addr(s, in->a, in->imm);
		MInst *mi = emit(s, global_load_op(bytes, sgn), 1);
		put(s, mi, 0, d, ISA_TY_B32);
		put(s, mi, 1, g.vaddr, ISA_TY_B32);
		if (g.saddr.kind == VK_CONST)
			mi_phys(mi, 2, isa_off());
		else
			put(s, mi, 2, g.saddr, ISA_TY_B32);
		mi->in.mod.offset = g.off;
		if (in->guard >= 0)
			mi->flags |= MI_PARTIAL;
	} else if (in->sub == SP_SHARED) {
		int32_t off;
		Val a = lds_addr(s, in, &off);
		MInst *mi = emit(s, ds_load_op(bytes, sgn), 1);
		put(s, mi, 0, d, ISA_TY_B32);
		put(s, mi, 1, a, ISA_TY_B32);
		mi->in.mod.offset = off;
		if (in->guard >= 0)
			mi->flags |= MI_PARTIAL;
	} else {
		unsupported(s, "local (per-thread array) memory");
		return;
	}
	for (int k = 0; k < vec && vec > 1 && !direct; k++)
		valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst + k, 0, 1), reg(d.vreg, k, 1));
}

/* The AMD instruction of a native atomic (lower_atomic checks the set). */
static unsigned atom_op(const SInst *in)
{
	bool g = in->sub == SP_GLOBAL, w64 = in->type == DT_I64;
	bool sg = in->type == DT_I32 || in->type == DT_I64, f = in->type == DT_F32;
	if (in->op == SI_ATOM_ADD)
		return g ? (f ? ISA_GLOBAL_ATOMIC_ADD_F32 : w64 ? ISA_GLOBAL_ATOMIC_ADD_X2 : ISA_GLOBAL_ATOMIC_ADD)
		         : (f ? ISA_DS_ADD_F32 : w64 ? ISA_DS_ADD_U64 : ISA_DS_ADD_U32);
	bool mx = in->op == SI_ATOM_MAX;
	if (g)
		return w64 ? (mx ? ISA_GLOBAL_ATOMIC_SMAX_X2 : ISA_GLOBAL_ATOMIC_SMIN_X2)
		           : mx ? (sg ? ISA_GLOBAL_ATOMIC_SMAX : ISA_GLOBAL_ATOMIC_UMAX)
		                : (sg ? ISA_GLOBAL_ATOMIC_SMIN : ISA_GLOBAL_ATOMIC_UMIN);
	return f ? (mx ? ISA_DS_MAX_F32 : ISA_DS_MIN_F32)
	         : mx ? (sg ? ISA_DS_MAX_I32 : ISA_DS_MAX_U32) : (sg ? ISA_DS_MIN_I32 : ISA_DS_MIN_U32);
}

static void sel_st(Isel *s, const SInst *in)
{
	int bytes = dtype_bytes_of(in->type);
	Val v;
	if (in->vec > 1) { /* gather the SIMT registers into one tuple */
		bytes = 4 * in->vec;
		v = reg(newv(s, MR_V, in->vec), 0, in->vec);
		for (int k = 0; k < in->vec; k++) {
			MInst *mi = valu1(s, ISA_V_MOV_B32, reg(v.vreg, k, 1), opnd(s, in->b + k, 0));
			if (!k)
				mi->flags |= MI_DEFALL;
		}
	} else {
		v = to_vgpr(s, opnd_all(s, in->b));
	}
	if (in->sub == SP_GLOBAL) {
		GAddr g = global_addr(s, in->a, in->imm);
		MInst *mi = emit(s, in->op != SI_ST ? atom_op(in) : global_store_op(bytes), 0);
		put(s, mi, 0, g.vaddr, ISA_TY_B32);
		put(s, mi, 1, v, ISA_TY_B32);
		if (g.saddr.kind == VK_CONST)
			mi_phys(mi, 2, isa_off());
		else
			put(s, mi, 2, g.saddr, ISA_TY_B32);
		mi->in.mod.offset = g.off;
	} else if (in->sub == SP_SHARED) {
		int32_t off;
		Val a = lds_addr(s, in, &off);
		MInst *mi = emit(s, in->op != SI_ST ? atom_op(in) : ds_store_op(bytes), 0);
		put(s, mi, 0, a, ISA_TY_B32);
		put(s, mi, 1, v, ISA_TY_B32);
		mi->in.mod.offset = off;
	} else {
		unsupported(s, "this memory space for stores/atomics");
	}
}

/* ---- conversions ---------------------------------------------------------- */

/* f32 -> bf16 bits, round to nearest even (NaN payloads not preserved). */
static void f32_to_bf16_bits(Isel *s, Val d, Val a)
{
	a = to_vgpr(s, a);
	Val t = reg(newv(s, MR_V, 1), 0, 1);
	valu3(s, ISA_V_BFE_U32, t, a, cst(16), cst(1));
	valu3(s, ISA_V_ADD3_U32, t, a, t, cst(0x7fff));
	valu2(s, ISA_V_LSHRREV_B32, d, cst(16), t);
}

/* Reads of SIMT registers: bit 0 any, bit 1 any other than as the value
 * of a 2-byte store (which ignores the high half of its register). */
static void scan_uses(Isel *s)
{
	const SimtFunc *sf = s->sf;
	for (size_t i = 0; i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		int ops[4] = {in->a, in->b, in->c, in->guard};
		int n[4] = {1, 1, 1, 1};
		if (in->op == SI_MMA)
			n[0] = simt_mma[in->sub].na, n[1] = simt_mma[in->sub].nb, n[2] = simt_mma[in->sub].nc;
		if (in->op == SI_ST && in->vec > 1)
			n[1] = in->vec;
		bool st16 = in->op == SI_ST && in->vec <= 1 && (in->type == DT_F16 || in->type == DT_BF16);
		bool pack2 = in->op == SI_PACK2; /* reads the low halves of a and b only */
		for (int k = 0; k < 4; k++)
			for (int j = 0; ops[k] >= 0 && j < n[k]; j++)
				s->use[ops[k] + j] |= (uint8_t)((st16 && k == 1) || (pack2 && k < 2) ? 1 : 3);
	}
}

/* ---- fp8 conversions -----------------------------------------------------
 *
 * fp8 storage is a byte in the low bits of a VGPR (bits above it may be
 * anything: every reader below looks at the low byte only).  gfx942 has
 * hardware conversions for the FNUZ formats; everything else uses integer
 * sequences that are exact with f32 denormals kept (the kernel descriptor's
 * FLOAT_DENORM_MODE_32 is 3) and the default round-to-nearest-even mode. */

typedef struct {
	int mbits, bias;
	uint32_t maxf; /* f32 bits of the largest finite value */
} Fp8Fmt;

static Fp8Fmt fp8_fmt(int t)
{
	switch (t) {
	case DT_FP8E4M3: return (Fp8Fmt){3, 7, 0x43e00000u};       /* 448 */
	case DT_FP8E5M2: return (Fp8Fmt){2, 15, 0x47600000u};      /* 57344 */
	case DT_FP8E4M3FNUZ: return (Fp8Fmt){3, 8, 0x43700000u};   /* 240 */
	default: return (Fp8Fmt){2, 16, 0x47600000u};              /* e5m2fnuz: 57344 */
	}
}

/* gfx942 converts the FNUZ formats in hardware. */
static bool fp8_native(const Isel *s, int t)
{
	return s->it == TA_TARGET_GFX942 && dtype_is_fnuz((DType)t);
}

/* d (f32) = the fp8 byte in the low bits of a. */
static void fp8_unpack(Isel *s, int t, Val d, Val a)
{
	if (fp8_native(s, t)) { /* reads byte 0 */
		valu1(s, t == DT_FP8E4M3FNUZ ? ISA_V_CVT_F32_FP8 : ISA_V_CVT_F32_BF8, d, to_vgpr(s, a));
		return;
	}
	if (t == DT_FP8E5M2) { /* the high byte of an f16, infinities and NaNs included */
		Val h = vtmp(s);
		valu2(s, ISA_V_LSHLREV_B32, h, cst(8), a);
		valu1(s, ISA_V_CVT_F32_F16, d, h);
		return;
	}
	/* Magnitude bits under the f32 exponent field: exponent e reads as
	 * 2^(e-127) (e == 0 an f32 denormal with the same scale), so one exact
	 * multiply by 2^(127-bias) gives the value.  Then the sign, then NaN. */
	Fp8Fmt f = fp8_fmt(t);
	Val m = vtmp(s), v = vtmp(s), sh = vtmp(s), r = vtmp(s), vcc = reg(newv(s, MR_S, s->lm), 0, s->lm);
	valu2(s, ISA_V_AND_B32, m, cst(0x7f), a);
	valu2(s, ISA_V_LSHLREV_B32, v, cst((uint32_t)(23 - f.mbits)), m);
	valu2(s, ISA_V_MUL_F32, v, cst((uint32_t)(254 - f.bias) << 23), v);
	valu2(s, ISA_V_LSHLREV_B32, sh, cst(24), a); /* the sign at bit 31 */
	valu3(s, ISA_V_BFI_B32, r, cst(0x7fffffffu), v, sh);
	Val nan = cst(0x7fc00000u);
	if (t == DT_FP8E4M3) { /* S.1111.111: NaN with the sign */
		valu2(s, ISA_V_CMP_EQ_U32, vcc, cst(0x7f), m);
		nan = vtmp(s);
		valu3(s, ISA_V_BFI_B32, nan, cst(0x7fffffffu), cst(0x7fc00000u), sh);
	} else { /* FNUZ: 0x80 is the only NaN */
		valu2(s, ISA_V_CMP_EQ_U32, vcc, cst(0x80000000u), sh);
	}
	Val src[3] = {r, nan, vcc};
	valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, src);
}

/* d (the fp8 byte, zero-extended) = f32 a rounded to nearest even with
 * saturation to +-max (infinities too); NaN -> NaN. */
static void fp8_pack(Isel *s, int t, Val d, Val a)
{
	Fp8Fmt f = fp8_fmt(t);
	Val vcc = reg(newv(s, MR_S, s->lm), 0, s->lm);
	a = to_vgpr(s, a);
	if (fp8_native(s, t)) {
		/* v_cvt_pk_*8_f32 rounds to nearest even and turns NaN into 0x80,
		 * but saturates only with a clamp bit LLVM does not accept on
		 * gfx942: clamp to +-max first, keeping NaN. */
		Val c = vtmp(s), p = vtmp(s);
		valu3(s, ISA_V_MED3_F32, c, a, cst(f.maxf | 0x80000000u), cst(f.maxf));
		valu2(s, ISA_V_CMP_U_F32, vcc, a, a);
		Val src[3] = {c, a, vcc};
		valu(s, ISA_V_CNDMASK_B32, 1, &c, 3, src);
		valu2(s, t == DT_FP8E4M3FNUZ ? ISA_V_CVT_PK_FP8_F32 : ISA_V_CVT_PK_BF8_F32, p, c, cst(0));
		valu2(s, ISA_V_AND_B32, d, cst(0xff), p); /* the instruction keeps the high half */
		return;
	}
	int sh = 23 - f.mbits;
	uint32_t minnorm = (uint32_t)(128 - f.bias) << 23;  /* 2^(1-bias) */
	uint32_t magic = (uint32_t)(151 - f.bias - f.mbits) << 23; /* 2^(24-bias-mbits): ulp = subnormal step */
	Val u = vtmp(s), sub = vtmp(s), odd = vtmp(s), n = vtmp(s), r = vtmp(s), sb = vtmp(s), res = vtmp(s);
	valu2(s, ISA_V_AND_B32, u, cst(0x7fffffffu), a);
	valu2(s, ISA_V_MIN_U32, u, cst(f.maxf), u); /* satfinite (NaN is fixed below) */
	/* Below the smallest normal: adding 2^(24-bias-mbits) rounds to the
	 * subnormal step (RNE in hardware), the low bits are the encoding. */
	valu2(s, ISA_V_ADD_F32, sub, cst(magic), u);
	valu2(s, ISA_V_SUB_U32, sub, sub, cst(magic));
	/* Normal: rebias the exponent, round the dropped bits to even, shift. */
	valu3(s, ISA_V_BFE_U32, odd, u, cst((uint32_t)sh), cst(1));
	valu3(s, ISA_V_ADD3_U32, n, u, odd, cst(((uint32_t)(f.bias - 127) << 23) + (1u << (sh - 1)) - 1));
	valu2(s, ISA_V_LSHRREV_B32, n, cst((uint32_t)sh), n);
	valu2(s, ISA_V_CMP_GT_U32, vcc, cst(minnorm), u);
	Val s1[3] = {n, sub, vcc};
	valu(s, ISA_V_CNDMASK_B32, 1, &r, 3, s1);
	valu2(s, ISA_V_LSHRREV_B32, sb, cst(24), a);
	valu2(s, ISA_V_AND_B32, sb, cst(0x80), sb);
	valu2(s, ISA_V_OR_B32, res, r, sb);
	Val nan = cst(0x80);
	if (t == DT_FP8E4M3) { /* S.1111.111 */
		nan = vtmp(s);
		valu2(s, ISA_V_OR_B32, nan, cst(0x7f), sb);
	} else if (t == DT_FP8E5M2) { /* quiet NaN keeping the next payload bit, as dtype.c */
		Val q = vtmp(s);
		nan = vtmp(s);
		valu3(s, ISA_V_BFE_U32, q, a, cst(21), cst(1));
		valu3(s, ISA_V_OR3_B32, nan, q, sb, cst(0x7e));
	} else { /* FNUZ has no -0: a zero magnitude keeps no sign */
		Val vz = reg(newv(s, MR_S, s->lm), 0, s->lm);
		valu2(s, ISA_V_CMP_EQ_U32, vz, cst(0), r);
		Val s2[3] = {res, r, vz};
		valu(s, ISA_V_CNDMASK_B32, 1, &res, 3, s2);
	}
	valu2(s, ISA_V_CMP_U_F32, vcc, a, a);
	Val s3[3] = {res, nan, vcc};
	valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, s3);
}

static void sel_small_pack(Isel *s, int t, Val d, Val a, bool low_only)
{
	if (t == DT_F16 && low_only) { /* only 2-byte stores read it */
		valu1(s, ISA_V_CVT_F16_F32, d, a);
	} else if (t == DT_F16) {
		Val x = reg(newv(s, MR_V, 1), 0, 1);
		valu1(s, ISA_V_CVT_F16_F32, x, a);
		valu3(s, ISA_V_BFE_U32, d, x, cst(0), cst(16)); /* clear the high half */
	} else if (t == DT_BF16) {
		f32_to_bf16_bits(s, d, a);
	} else {
		fp8_pack(s, t, d, a);
	}
}

/* SI_UNPACK of SI_HALF(w, half) defined just before it (lower_vec.c: the
 * halves of a packed f16/bf16 load): convert from w itself, one instruction
 * instead of extract + convert.  f16 low half: v_cvt_f32_f16 reads bits 15:0;
 * high half: v_fma_mix_f32 w.hi (f16) * 1.0 + -0.0 (exact, keeps -0);
 * bf16: the shift drops the high half, a mask keeps it.  The SI_HALF is left
 * for dead-code elimination. */
static bool sel_unpack_half(Isel *s, const SInst *in, Val d)
{
	const SInst *code = s->sf->code.data;
	int a = in->a, t = in->type;
	if (a < 0 || s->ndefs[a] != 1 || s->isconst[a] || s->def1[a] != (int)(in - code) - 1)
		return false;
	const SInst *h = &code[s->def1[a]];
	if (h->op != SI_HALF || h->guard >= 0 || in->guard >= 0 || s->isconst[h->a] || vcls(s, opnd(s, h->a, 0)) != MR_V)
		return false;
	Val w = opnd(s, h->a, 0);
	if (t == DT_BF16)
		h->imm ? (void)valu2(s, ISA_V_AND_B32, d, cst(0xffff0000u), w) : (void)valu2(s, ISA_V_LSHLREV_B32, d, cst(16), w);
	else if (!h->imm)
		valu1(s, ISA_V_CVT_F32_F16, d, w);
	else {
		MInst *mi = valu3(s, ISA_V_FMA_MIX_F32, d, w, cst(0x3f800000u), cst(0));
		mi->in.mod.op_sel = 1;    /* src0 from the high half */
		mi->in.mod.op_sel_hi = 1; /* src0 is f16, src1/src2 f32 */
		mi->in.mod.neg = 4;       /* src2 = -0.0 */
	}
	return true;
}

static void sel_small_unpack(Isel *s, int t, Val d, Val a)
{
	if (t == DT_F16)
		valu1(s, ISA_V_CVT_F32_F16, d, a);
	else if (t == DT_BF16)
		valu2(s, ISA_V_LSHLREV_B32, d, cst(16), a);
	else
		fp8_unpack(s, t, d, a);
}

/* One dword into or out of an AGPR (gfx90a/gfx942 accumulators):
 * v_accvgpr_write takes a VGPR or an inline constant, v_accvgpr_read
 * writes a VGPR. */
static void acc_move(Isel *s, Val d, Val a)
{
	bool toacc = vcls(s, d) == MR_A, fromacc = vcls(s, a) == MR_A;
	if (toacc && !fromacc && (a.kind != VK_CONST || !is_inline(ISA_TY_B32, a.bits)))
		a = to_vgpr(s, a);
	unsigned op = toacc ? fromacc ? ISA_V_ACCVGPR_MOV_B32 : ISA_V_ACCVGPR_WRITE_B32 : ISA_V_ACCVGPR_READ_B32;
	if (!toacc && vcls(s, d) != MR_V) { /* never: an MFMA result is not uniform */
		unsupported(s, "a uniform copy of an AGPR accumulator");
		return;
	}
	MInst *mi = emit(s, op, 1);
	put(s, mi, 0, d, ISA_TY_B32);
	put(s, mi, 1, a, ISA_TY_B32);
}

static void copy_val(Isel *s, Val d, Val a, bool uni)
{
	if (vcls(s, d) == MR_A || vcls(s, a) == MR_A) {
		for (int k = 0; k < d.count; k++)
			acc_move(s, reg(d.vreg, d.sub + k, 1), a.kind == VK_CONST ? cst(k ? 0 : a.bits)
									 : reg(a.vreg, a.sub + k, 1));
		return;
	}
	for (int k = 0; k < d.count; k++) {
		Val dk = reg(d.vreg, d.sub + k, 1);
		Val ak = a.kind == VK_CONST ? cst(k ? 0 : a.bits) : reg(a.vreg, a.sub + k, 1);
		MInst *mi = uni ? salu1(s, ISA_S_MOV_B32, dk, ak) : valu1(s, ISA_V_MOV_B32, dk, ak);
		if (!k && d.count > 1)
			mi->flags |= MI_DEFALL;
	}
}

static void sel_cvt(Isel *s, const SInst *in)
{
	int to = in->type, from = in->type2;
	bool uni = s->uni[in->dst];
	bool fi = dtype_is_float((DType)from), ti = dtype_is_float((DType)to);
	Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
	if (from == DT_BOOL) {
		Val m = opnd_all(s, in->a);
		uint32_t one = ti ? 0x3f800000u : 1;
		if (to == DT_F64 || to == DT_I64) {
			unsupported(s, "bool to 64-bit conversion");
			return;
		}
		Val src[3] = {cst(0), cst(one), m};
		Val dd = reg(d.vreg, d.sub, 1);
		valu(s, ISA_V_CNDMASK_B32, 1, &dd, 3, src);
		return;
	}
	if (to == DT_BOOL) {
		if (fi) {
			valu2(s, ISA_V_CMP_NEQ_F32, d, opnd(s, in->a, 0), cst(0));
			return;
		}
		if (uni && from != DT_I64) {
			Val src[2] = {opnd(s, in->a, 0), cst(0)};
			salu(s, ISA_S_CMP_LG_U32, 0, NULL, 2, src);
			scc_to_mask(s, d.vreg);
		} else if (from == DT_I64) {
			Val z = cst(0);
			z.count = 2;
			valu2(s, ISA_V_CMP_NE_U64, d, opnd_all(s, in->a), z);
		} else {
			valu2(s, ISA_V_CMP_NE_U32, d, opnd(s, in->a, 0), cst(0));
		}
		return;
	}
	if (!fi && !ti) {
		if (to == DT_I64) {
			bool zext = from == DT_U8 || from == DT_U32;
			Val a = opnd(s, in->a, 0);
			if (from == DT_I64) {
				copy_val(s, d, opnd_all(s, in->a), uni);
				return;
			}
			MInst *mi = uni ? salu1(s, ISA_S_MOV_B32, reg(d.vreg, 0, 1), a)
					: valu1(s, ISA_V_MOV_B32, reg(d.vreg, 0, 1), a);
			mi->flags |= MI_DEFALL;
			Val hi = reg(d.vreg, 1, 1);
			if (zext)
				uni ? (void)salu1(s, ISA_S_MOV_B32, hi, cst(0)) : (void)valu1(s, ISA_V_MOV_B32, hi, cst(0));
			else if (uni)
				salu2(s, ISA_S_ASHR_I32, hi, reg(d.vreg, 0, 1), cst(31));
			else
				valu2(s, ISA_V_ASHRREV_I32, hi, cst(31), reg(d.vreg, 0, 1));
			return;
		}
		/* to 32-bit or narrower: take the low dword, then wrap. */
		Val a = opnd(s, in->a, 0);
		switch (to) {
		case DT_I8: case DT_U8: case DT_I16:
			if (uni) {
				unsigned op = to == DT_I8 ? ISA_S_SEXT_I32_I8 : to == DT_I16 ? ISA_S_SEXT_I32_I16 : ISA_S_AND_B32;
				if (op == ISA_S_AND_B32)
					salu2(s, op, d, a, cst(255));
				else
					salu1(s, op, d, a);
			} else {
				valu3(s, to == DT_U8 ? ISA_V_BFE_U32 : ISA_V_BFE_I32, d, a, cst(0), cst(to == DT_I16 ? 16 : 8));
			}
			return;
		default:
			copy_val(s, d, a, uni);
			return;
		}
	}
	if (!fi && ti) {
		if (to == DT_F64 || from == DT_I64) {
			unsupported(s, "64-bit int/float conversion");
			return;
		}
		bool u = from == DT_U32 || from == DT_U8;
		valu1(s, u ? ISA_V_CVT_F32_U32 : ISA_V_CVT_F32_I32, d, opnd(s, in->a, 0));
		/* fp8: ints beyond 2^24 (rounded by the f32 step) saturate anyway */
		if (to == DT_F16 || to == DT_BF16 || dtype_is_fp8((DType)to)) {
			Val b = reg(newv(s, MR_V, 1), 0, 1);
			sel_small_pack(s, to, b, d, false);
			sel_small_unpack(s, to, d, b);
		}
		return;
	}
	if (fi && !ti) {
		if (from == DT_F64 || to == DT_I64) {
			unsupported(s, "64-bit float/int conversion");
			return;
		}
		bool u = to == DT_U32 || to == DT_U8;
		if (to == DT_I8 || to == DT_U8 || to == DT_I16) {
			/* v_cvt saturates to 32 bits (NaN -> 0, negative -> 0 for u32),
			 * then clamp to the small range: the IR's truncate-and-saturate */
			Val w = vtmp(s);
			valu1(s, u ? ISA_V_CVT_U32_F32 : ISA_V_CVT_I32_F32, w, opnd(s, in->a, 0));
			if (u) {
				valu2(s, ISA_V_MIN_U32, d, cst(255), w);
				return;
			}
			int32_t lim = to == DT_I8 ? 127 : 32767;
			Val m = vtmp(s);
			valu2(s, ISA_V_MAX_I32, m, cst((uint32_t)(-lim - 1)), w);
			valu2(s, ISA_V_MIN_I32, d, cst((uint32_t)lim), m);
			return;
		}
		valu1(s, u ? ISA_V_CVT_U32_F32 : ISA_V_CVT_I32_F32, d, opnd(s, in->a, 0));
		return;
	}
	/* float -> float */
	if (to == DT_F64 || from == DT_F64) {
		if (to == DT_F64 && from == DT_F32)
			valu1(s, ISA_V_CVT_F64_F32, d, opnd(s, in->a, 0));
		else if (to == DT_F32 && from == DT_F64)
			valu1(s, ISA_V_CVT_F32_F64, d, opnd_all(s, in->a));
		else
			unsupported(s, "this f64 conversion");
		return;
	}
	/* canonical registers hold exact f32 values: widening is a move,
	 * narrowing rounds through the storage format */
	if (to == DT_F32 || dtype_is_float((DType)to) == 0) {
		valu1(s, ISA_V_MOV_B32, d, opnd(s, in->a, 0));
		return;
	}
	Val b = reg(newv(s, MR_V, 1), 0, 1);
	sel_small_pack(s, to, b, opnd(s, in->a, 0), false);
	sel_small_unpack(s, to, d, b);
}

/* ---- warp operations ---------------------------------------------------- */

/* d = value of v in SIMT lane (lane ^ x) where addr = lane' * 4 (VGPR). */
static void bpermute(Isel *s, Val d, Val addr, Val v)
{
	v = to_vgpr(s, v);
	MInst *mi = emit(s, ISA_DS_BPERMUTE_B32, 1);
	put(s, mi, 0, d, ISA_TY_B32);
	put(s, mi, 1, addr, ISA_TY_B32);
	put(s, mi, 2, v, ISA_TY_B32);
}

/* gfx9: butterfly exchanges inside a 16-lane row as DPP moves instead of a
 * ds_bpermute round trip: xor 1 and 2 are quad_perms, xor 8 row_ror:8, xor 4
 * two moves, row_shl:4 into banks 0 and 2 (lanes 0-3, 8-11 of each row) and
 * row_shr:4 into banks 1 and 3.  bound_ctrl: a disabled source lane reads 0,
 * as with ds_bpermute.  Not on gfx1100: there the moves would be VALU work
 * queued behind WMMA (flash attention's row maxima), which the emulator's
 * model puts at +6% per CU (docs/performance.md). */
static bool shfl_dpp(Isel *s, Val d, Val v, int64_t x)
{
	unsigned ctrl[2] = {0, 0};
	uint8_t bank[2] = {0xf, 0xf};
	int n = 1;
	if (s->gfx11)
		return false;
	switch (x) {
	case 1: ctrl[0] = 0xb1; break;  /* quad_perm:[1,0,3,2] */
	case 2: ctrl[0] = 0x4e; break;  /* quad_perm:[2,3,0,1] */
	case 8: ctrl[0] = 0x128; break; /* row_ror:8 */
	case 4: ctrl[0] = 0x104, bank[0] = 0x5, ctrl[1] = 0x114, bank[1] = 0xa, n = 2; break;
	default: return false;
	}
	v = to_vgpr(s, v);
	for (int i = 0; i < n; i++) {
		MInst *mi = valu1(s, ISA_V_MOV_B32, d, v);
		mi->in.enc = ISA_ENC_DPP;
		mi->in.mod.dpp_ctrl = (uint16_t)ctrl[i];
		mi->in.mod.row_mask = 0xf;
		mi->in.mod.bank_mask = bank[i];
		mi->in.mod.bound_ctrl = 1;
		if (i)
			mi->flags |= MI_PARTIAL; /* the other banks keep the first move's lanes */
	}
	return true;
}

static void sel_shfl(Isel *s, const SInst *in)
{
	if (shfl_dpp(s, dst_of(s, in->dst, 0, 1), opnd(s, in->a, 0), in->imm))
		return;
	Val addr = reg(newv(s, MR_V, 1), 0, 1);
	valu2(s, ISA_V_XOR_B32, addr, cst((uint32_t)(in->imm * 4)), reg(s->lane4, 0, 1));
	bpermute(s, dst_of(s, in->dst, 0, 1), addr, opnd(s, in->a, 0));
}

/* SI_MMA emulated with lane exchanges and FMAs (PTX m16n8k16 layout).
 * Lane l: g = l >> 2, q = l & 3.  A regs: a0 (row g, k 2q..2q+1),
 * a1 (row g+8, k 2q..), a2 (row g, k 2q+8..), a3 (row g+8, k 2q+8..).
 * B regs: b0 (k 2q..2q+1, col g), b1 (k 2q+8.., col g).  C/D: c0,c1 (row
 * g, cols 2q, 2q+1), c2,c3 (row g+8, same cols). */
static void sel_mma(Isel *s, const SInst *in)
{
	bool bf = in->type == DT_BF16;
	Val lane4 = reg(s->lane4, 0, 1);
	/* Base lane addresses: row lanes (same g, q' = 0..3): (l & ~3) + q';
	 * column lanes for col 2q+j: g' = 2q + j -> lane 4*(2q+j) + q'.  In
	 * byte units (x4), keeping the wave64 half (bit 5 of the lane). */
	Val half = reg(newv(s, MR_V, 1), 0, 1), rowb = reg(newv(s, MR_V, 1), 0, 1), q4 = reg(newv(s, MR_V, 1), 0, 1);
	valu2(s, ISA_V_AND_B32, half, cst(128), lane4);          /* (l & 32) * 4 */
	valu2(s, ISA_V_AND_B32, rowb, cst(0x70), lane4);         /* (l & 28) * 4 ... without half */
	valu2(s, ISA_V_OR_B32, rowb, rowb, half);
	valu2(s, ISA_V_AND_B32, q4, cst(12), lane4);             /* q * 4 */
	/* colb[j] = half + (4*(2q+j))*4 = half + 32q + 16j */
	Val colb[2];
	for (int j = 0; j < 2; j++) {
		colb[j] = reg(newv(s, MR_V, 1), 0, 1);
		valu3(s, ISA_V_LSHL_ADD_U32, colb[j], q4, cst(3), cst((uint32_t)(16 * j)));
		valu2(s, ISA_V_OR_B32, colb[j], colb[j], half);
	}
	/* Accumulators start from C. */
	Val acc[4];
	for (int i = 0; i < 4; i++) {
		acc[i] = reg(newv(s, MR_V, 1), 0, 1);
		valu1(s, ISA_V_MOV_B32, acc[i], opnd(s, in->c + i, 0));
	}
	for (int qp = 0; qp < 4; qp++) {
		/* Row data from lane (g, qp): a0..a3 hold k = 2qp..+1 and 2qp+8..+9. */
		Val ra = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_ADD_U32, ra, rowb, cst((uint32_t)(4 * qp)));
		Val av[4];
		for (int r = 0; r < 4; r++) {
			av[r] = reg(newv(s, MR_V, 1), 0, 1);
			bpermute(s, av[r], ra, opnd(s, in->a + r, 0));
		}
		for (int j = 0; j < 2; j++) {
			Val cb = reg(newv(s, MR_V, 1), 0, 1);
			valu2(s, ISA_V_ADD_U32, cb, colb[j], cst((uint32_t)(4 * qp)));
			Val bv[2];
			for (int r = 0; r < 2; r++) {
				bv[r] = reg(newv(s, MR_V, 1), 0, 1);
				bpermute(s, bv[r], cb, opnd(s, in->b + r, 0));
			}
			/* k halves: (a0|a1, b0) and (a2|a3, b1), lo and hi 16 bits. */
			for (int kh = 0; kh < 2; kh++) {
				for (int hh = 0; hh < 2; hh++) {
					Val bf32 = reg(newv(s, MR_V, 1), 0, 1);
					Val bsrc = bv[kh];
					if (bf) {
						if (hh)
							valu2(s, ISA_V_AND_B32, bf32, cst(0xffff0000u), bsrc);
						else
							valu2(s, ISA_V_LSHLREV_B32, bf32, cst(16), bsrc);
					} else {
						Val t = bsrc;
						if (hh) {
							t = reg(newv(s, MR_V, 1), 0, 1);
							valu2(s, ISA_V_LSHRREV_B32, t, cst(16), bsrc);
						}
						valu1(s, ISA_V_CVT_F32_F16, bf32, t);
					}
					for (int rr = 0; rr < 2; rr++) { /* row g (a0/a2) or g+8 (a1/a3) */
						Val asrc = av[kh * 2 + rr];
						Val af32 = reg(newv(s, MR_V, 1), 0, 1);
						if (bf) {
							if (hh)
								valu2(s, ISA_V_AND_B32, af32, cst(0xffff0000u), asrc);
							else
								valu2(s, ISA_V_LSHLREV_B32, af32, cst(16), asrc);
						} else {
							Val t = asrc;
							if (hh) {
								t = reg(newv(s, MR_V, 1), 0, 1);
								valu2(s, ISA_V_LSHRREV_B32, t, cst(16), asrc);
							}
							valu1(s, ISA_V_CVT_F32_F16, af32, t);
						}
						Val *ac = &acc[rr * 2 + j];
						valu3(s, ISA_V_FMA_F32, *ac, af32, bf32, *ac);
					}
				}
			}
		}
	}
	for (int i = 0; i < 4; i++)
		valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst + i, 0, 1), acc[i]);
}

/* An operand tuple of n registers from SIMT r..r+n-1: the registers
 * themselves when grouped, else a copy. */
static Val mma_tuple(Isel *s, int r, int n)
{
	if (is_tuple(s, r, n))
		return dst_of(s, r, 0, n);
	Val t = reg(newv(s, MR_V, n), 0, n);
	for (int k = 0; k < n; k++) {
		MInst *mi = valu1(s, ISA_V_MOV_B32, reg(t.vreg, k, 1), opnd(s, r + k, 0));
		if (k == 0 && n > 1)
			mi->flags |= MI_DEFALL;
	}
	return t;
}

/* SI_MMA of an AMD shape: one v_mfma / v_wmma. */
static void sel_mma_amd(Isel *s, const SInst *in)
{
	const MmaInfo *m = &simt_mma[in->sub];
	bool bf = in->type == DT_BF16;
	unsigned op;
	switch (in->sub) {
	case MMA_WMMA16: op = bf ? ISA_V_WMMA_F32_16X16X16_BF16 : ISA_V_WMMA_F32_16X16X16_F16; break;
	case MMA_MFMA16: op = bf ? ISA_V_MFMA_F32_16X16X16_BF16 : ISA_V_MFMA_F32_16X16X16_F16; break;
	case MMA_MFMA16_I8: op = ISA_V_MFMA_I32_16X16X16I8; break;
	case MMA_MFMA16X32_I8: op = ISA_V_MFMA_I32_16X16X32_I8; break;
	case MMA_MFMA16X32_FP8:
		op = in->type == DT_FP8E4M3FNUZ ? ISA_V_MFMA_F32_16X16X32_FP8_FP8 : ISA_V_MFMA_F32_16X16X32_BF8_BF8;
		break;
	case MMA_WMMA16_I8: op = ISA_V_WMMA_I32_16X16X16_IU8; break;
	default: unsupported(s, "this matrix shape"); return; /* PTX's m16n8k32.s8: NVIDIA only */
	}
	if (m->wave == 64 && !s->w64) {
		unsupported(s, "a wave64 MFMA in wave32 code");
		return;
	}
	Val a = mma_tuple(s, in->a, m->na), b = mma_tuple(s, in->b, m->nb), c = mma_tuple(s, in->c, m->nc);
	bool same = in->c == in->dst && is_tuple(s, in->dst, m->nc);
	Val d = same ? c : reg(newv(s, MR_V, m->nc), 0, m->nc);
	MInst *mi = emit(s, op, 1);
	put(s, mi, 0, d, ISA_TY_B32);
	put(s, mi, 1, a, ISA_TY_B32);
	put(s, mi, 2, b, ISA_TY_B32);
	put(s, mi, 3, c, ISA_TY_B32);
	if (op == ISA_V_WMMA_I32_16X16X16_IU8)
		mi->in.mod.neg = 3; /* neg_lo:[1,1,0]: A and B are signed */
	for (int k = 0; k < m->nc && !same; k++)
		valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst + k, 0, 1), reg(d.vreg, k, 1));
}

/* An A/B fragment tuple r..r+n-1 whose registers are each defined once,
 * unguarded, in order and in straight-line code (the lowering's fragment
 * loads): the definition of r starts a new value of the whole tuple
 * (MI_DEFALL), so the tuple is not live before it — otherwise its
 * partial writes would keep it live around the whole kernel. */
static void mark_tuple_start(Isel *s, const int32_t *defpos, int r, int n)
{
	const SimtFunc *sf = s->sf;
	int first = defpos[r], last = first;
	for (int k = 0; k < n; k++) {
		if (s->ndefs[r + k] != 1 || defpos[r + k] < first)
			return;
		last = TA_MAX(last, defpos[r + k]);
	}
	for (int i = first; i <= last; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op == SI_LABEL || in->op == SI_BRA || (i == first && in->guard >= 0))
			return;
	}
	s->tfirst[r] = 1;
}

/* Before vregs are made: each AMD-shape SI_MMA operand range of
 * non-uniform dword registers becomes one tuple vreg (vsub = position), so
 * fragments load straight into it and accumulators stay in place.  A
 * register already in another tuple keeps that one (sel copies). */
static void group_mma_tuples(Isel *s)
{
	const SimtFunc *sf = s->sf;
	/* SIMT registers the lowering put in AGPRs (SimtFunc.acc): the MFMA
	 * accumulates there (acc_cd) and moves are the only other access. */
	uint8_t *inacc = calloc(sf->regs.len + 1, 1);
	for (size_t i = 0; inacc && i + 1 < sf->acc.len; i += 2)
		for (int32_t k = 0; k < sf->acc.data[i + 1]; k++)
			inacc[sf->acc.data[i] + k] = 1;
	int32_t *defpos = malloc(sizeof(int32_t) * (sf->regs.len + 1));
	for (size_t i = 0; defpos && i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		for (int k = 0; in->dst >= 0 && k < dst_count(in); k++)
			defpos[in->dst + k] = (int32_t)i;
	}
	for (size_t i = 0; i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op != SI_MMA || in->sub == MMA_M16N8K16)
			continue;
		const MmaInfo *m = &simt_mma[in->sub];
		int rs[3] = {in->a, in->b, in->dst}, ns[3] = {m->na, m->nb, m->nc};
		for (int o = 0; o < 3; o++) {
			int r = rs[o], n = ns[o];
			bool ok = s->vr[r] < 0 || is_tuple(s, r, n);
			if (s->vr[r] >= 0)
				continue; /* already grouped (the same fragment used again) */
			for (int k = 0; k < n && ok; k++) {
				int vt = sf->regs.data[r + k];
				ok = (vt == VT_I32 || vt == VT_F32) && !s->uni[r + k] && !s->isconst[r + k] && s->vr[r + k] < 0;
			}
			if (!ok)
				continue;
			bool acc = o == 2 && s->w64 && inacc && inacc[r];
			for (int k = 0; acc && k < n; k++)
				acc = inacc[r + k];
			int v = newv(s, acc ? MR_A : MR_V, n);
			for (int k = 0; k < n; k++)
				s->vr[r + k] = v, s->vsub[r + k] = (uint8_t)k;
			if (o < 2 && defpos)
				mark_tuple_start(s, defpos, r, n);
		}
	}
	free(defpos);
	free(inacc);
}

/* Is SIMT register r's only value a zero-extended 16-bit load (f16/bf16
 * storage: ds_read_u16 / global_load_ushort)?  Then pack2 needs no mask. */
static bool zext16(const Isel *s, int r)
{
	if (r < 0 || s->ndefs[r] != 1 || s->isconst[r])
		return false;
	const SInst *d = &s->sf->code.data[s->def1[r]];
	return d->op == SI_LD && d->dst == r && d->vec <= 1 && d->guard < 0 &&
	       (d->type == DT_F16 || d->type == DT_BF16) && d->sub != SP_LOCAL;
}

/* Is SIMT register r's only value an f32 -> f16 conversion (SI_PACK)? */
static bool f16_packed(const Isel *s, int r)
{
	if (r < 0 || s->ndefs[r] != 1 || s->isconst[r])
		return false;
	const SInst *d = &s->sf->code.data[s->def1[r]];
	return d->op == SI_PACK && d->type == DT_F16 && d->dst == r;
}

/* The fp8 byte behind f16 register r when r = SI_PACK(f16, SI_UNPACK(fp8,
 * v)) with v = w >> 8*pos (or v = w, pos 0), every link defined once and
 * unguarded (the fp8 gemm fallback's fragments, lower_mma.c amd_frag_fp8_f16):
 * returns the fp8 type and sets *w, *pos; 0 otherwise. */
static int fp8_f16_src(const Isel *s, int r, int32_t *w, int *pos)
{
	const SInst *code = s->sf->code.data;
	if (r < 0 || s->ndefs[r] != 1 || s->isconst[r])
		return 0;
	const SInst *p = &code[s->def1[r]];
	if (p->op != SI_PACK || p->type != DT_F16 || p->guard >= 0 || s->ndefs[p->a] != 1 || s->isconst[p->a])
		return 0;
	const SInst *u = &code[s->def1[p->a]];
	if (u->op != SI_UNPACK || !dtype_is_fp8((DType)u->type) || u->guard >= 0 || s->ndefs[u->a] != 1 ||
	    s->isconst[u->a])
		return 0;
	*w = u->a, *pos = 0;
	const SInst *sh = &code[s->def1[u->a]];
	if (sh->op == SI_SHR && sh->type == DT_U32 && sh->guard < 0 && sh->b >= 0 && s->isconst[sh->b] &&
	    s->cval[sh->b] % 8 == 0 && s->cval[sh->b] >= 8 && s->cval[sh->b] < 32 && s->ndefs[sh->a] == 1 &&
	    !s->isconst[sh->a])
		*w = sh->a, *pos = (int)(s->cval[sh->b] / 8);
	return u->type;
}

/* SI_PACK2 of two fp8 bytes converted to f16 (exact for every fp8 value):
 * straight from the bytes, two halves at once.  v_perm_b32 puts each byte
 * at bits 8..15 of its half, which is already the f16 for e5m2; e4m3 and
 * e4m3fnuz shift the magnitude under the f16 exponent field and scale both
 * halves with one exact v_pk_mul_f16 (f16 denormals are kept), then mark
 * their NaN patterns.  e5m2fnuz (whose top exponent is finite) keeps the
 * generic path.  Returns false when the pattern does not apply. */
static bool sel_pack2_fp8(Isel *s, const SInst *in)
{
	int32_t w0, w1;
	int p0, p1;
	int t = fp8_f16_src(s, in->a, &w0, &p0);
	if (!t || t == DT_FP8E5M2FNUZ || fp8_f16_src(s, in->b, &w1, &p1) != t)
		return false;
	/* Reading the bytes here gives the chain's values only when they
	 * were defined earlier in the same straight-line run (no label in
	 * between: no loop can redefine them first).  Fragments are short. */
	int at = (int)(in - s->sf->code.data), from = TA_MIN(s->def1[w0], s->def1[w1]);
	if (from >= at || at - from > 256)
		return false;
	for (int i = from + 1; i < at; i++)
		if (s->sf->code.data[i].op == SI_LABEL)
			return false;
	Val d = dst_of(s, in->dst, 0, 1);
	Val x = t == DT_FP8E5M2 ? d : vtmp(s);
	/* v_perm_b32 selectors: 0-3 bytes of src1, 4-7 of src0, 0x0c zero */
	uint32_t sel = (uint32_t)(4 + p1) << 24 | 0x0cu << 16 | (uint32_t)p0 << 8 | 0x0cu;
	valu3(s, ISA_V_PERM_B32, x, opnd(s, w1, 0), opnd(s, w0, 0), cst(sel));
	if (t == DT_FP8E5M2)
		return true;
	Val y = vtmp(s), z = vtmp(s), n = vtmp(s);
	uint32_t scale = (uint32_t)(30 - fp8_fmt(t).bias) << 10; /* f16 2^(15 - bias) */
	valu2(s, ISA_V_LSHRREV_B32, y, cst(1), x);
	valu2(s, ISA_V_AND_B32, y, cst(0x3f803f80u), y);
	valu3(s, ISA_V_AND_OR_B32, y, x, cst(0x80008000u), y);
	valu2(s, ISA_V_PK_MUL_F16, z, y, cst(scale | scale << 16));
	if (t == DT_FP8E4M3) {
		/* magnitude 0x7f: adding 1 carries into bit 15 of the half; the
		 * half is then 480 (0x5f80), and with 0x2000 an f16 NaN */
		valu2(s, ISA_V_AND_B32, n, cst(0x7f007f00u), x);
		valu2(s, ISA_V_ADD_U32, n, cst(0x01000100u), n);
		valu2(s, ISA_V_LSHRREV_B32, n, cst(2), n);
		valu3(s, ISA_V_AND_OR_B32, d, n, cst(0x20002000u), z);
	} else {
		/* 0x80 (sign, zero magnitude: -0 so far) becomes 0xfe00: a zero
		 * magnitude plus 0x7f carries nothing into bit 15 */
		Val m = vtmp(s);
		valu2(s, ISA_V_AND_B32, m, cst(0x7f007f00u), x);
		valu2(s, ISA_V_ADD_U32, m, cst(0x7f007f00u), m);
		valu3(s, ISA_V_BFI_B32, n, m, cst(0), x); /* ~m & x */
		valu2(s, ISA_V_AND_B32, n, cst(0x80008000u), n);
		valu2(s, ISA_V_LSHRREV_B32, n, cst(15), n);
		valu2(s, ISA_V_MUL_U32_U24, n, cst(0x7e00), n);
		valu2(s, ISA_V_OR_B32, d, n, z);
	}
	return true;
}

/* ---- control flow -------------------------------------------------------- */

static void start_block(Isel *s)
{
	if (mir_block(s->mf) < 0)
		s->err = 1;
}

/* Record that the current block's branch targets (SIMT labels) must be
 * resolved after selection: succ[k] temporarily holds -(label + 2). */
static void set_succ_label(Isel *s, int k, int label)
{
	MBlock *b = &s->mf->blocks.data[s->mf->blocks.len - 1];
	b->succ[k] = -(label + 2);
}

/* Before an exec-empty jump from SIMT position i to label N: park masks
 * whose zeroing point the jump skips (i < init <= N) and whose label is
 * not skipped must be zeroed here too.  Only the first such jump of the
 * stretch before N does it: the code between two of them is straight-line
 * (every branch in it leaves for N or later) and writes no mask whose
 * zeroing point is still ahead, so zeroing them again at every jump (each
 * level of nested ifs re-zeroed all inner masks: quadratic code) adds
 * nothing.  O(positions up to N) once per label. */
static void zero_skipped_parks(Isel *s, int i, int N)
{
	if (s->seg_zeroed[N])
		return;
	s->seg_zeroed[N] = 1;
	int np = s->label_pos[N];
	for (int q = i + 1; q <= np && q < (int)s->sf->code.len; q++)
		for (int X = s->init_at[q]; X >= 0; X = s->init_next[X]) {
			if (s->park[X] < 0 || s->label_pos[X] < np)
				continue;
			MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
			put(s, mi, 0, reg(s->park[X], 0, s->lm), ISA_TY_B32);
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
		}
}

static MInst *branch_to(Isel *s, unsigned op, int label)
{
	MInst *mi = emit(s, op, 0);
	IsaOperand o = {ISA_K_LABEL, 1, 0, label, NULL, 0};
	mi_phys(mi, 0, o);
	return mi;
}

/* Forward branch from SIMT insn i to label L with lane mask p (Val; count
 * 0 = all active lanes). */
static void sel_fwd_branch(Isel *s, int i, int L, Val p, bool neg, bool all)
{
	int W = s->park[L];
	Val w = reg(W, 0, s->lm);
	Val t = reg(newv(s, MR_S, s->lm), 0, s->lm);
	if (all) {
		MInst *mi = emit(s, lmop(s, ISA_S_OR_B32, ISA_S_OR_B64), 1);
		put(s, mi, 0, w, ISA_TY_B32);
		put(s, mi, 1, w, ISA_TY_B32);
		mi_phys(mi, 2, exec_op(s));
		mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
		mi_phys(mi, 0, exec_op(s));
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	} else {
		/* t = exec & p (or & ~p); W |= t; exec &= ~t */
		MInst *mi = emit(s, neg ? lmop(s, ISA_S_ANDN2_B32, ISA_S_ANDN2_B64) : lmop(s, ISA_S_AND_B32, ISA_S_AND_B64), 1);
		put(s, mi, 0, t, ISA_TY_B32);
		mi_phys(mi, 1, exec_op(s));
		put(s, mi, 2, p, ISA_TY_B32);
		mi = emit(s, lmop(s, ISA_S_OR_B32, ISA_S_OR_B64), 1);
		put(s, mi, 0, w, ISA_TY_B32);
		put(s, mi, 1, w, ISA_TY_B32);
		put(s, mi, 2, t, ISA_TY_B32);
		mi = emit(s, lmop(s, ISA_S_ANDN2_B32, ISA_S_ANDN2_B64), 1);
		mi_phys(mi, 0, exec_op(s));
		mi_phys(mi, 1, exec_op(s));
		put(s, mi, 2, t, ISA_TY_B32);
	}
	int next = s->next_label[i];
	zero_skipped_parks(s, i, next);
	branch_to(s, ISA_S_CBRANCH_EXECZ, next);
	set_succ_label(s, 1, next);
	set_succ_label(s, 2, L);
	start_block(s);
}

static void sel_label(Isel *s, int L)
{
	start_block(s);
	s->label_block[L] = (int32_t)s->mf->blocks.len - 1;
	if (s->park[L] < 0)
		return;
	MInst *mi = emit(s, lmop(s, ISA_S_OR_B32, ISA_S_OR_B64), 1);
	mi_phys(mi, 0, exec_op(s));
	mi_phys(mi, 1, exec_op(s));
	put(s, mi, 2, reg(s->park[L], 0, s->lm), ISA_TY_B32);
	if (L < s->nlabels - 1) { /* still nobody here: on to the next label */
		int next = s->next_label[s->label_pos[L]];
		zero_skipped_parks(s, s->label_pos[L], next);
		branch_to(s, ISA_S_CBRANCH_EXECZ, next);
		set_succ_label(s, 1, next);
		start_block(s);
	}
}

static void zero_parks(Isel *s, int i)
{
	for (int L = s->init_at[i]; L >= 0; L = s->init_next[L]) {
		MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
		put(s, mi, 0, reg(s->park[L], 0, s->lm), ISA_TY_B32);
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	}
}

/* ---- entry ---------------------------------------------------------------- */

static void sel_entry(Isel *s)
{
	const SimtFunc *sf = s->sf;
	/* Inputs: kernarg pointer, workgroup ids, v0; one parallel copy so the
	 * allocator may keep them in place. */
	Val defs[4], srcs[4];
	int n = 0;
	s->kernarg = newv(s, MR_S, 2);
	s->mf->vregs.data[s->kernarg].hint = (int16_t)s->abi->kernarg_sgpr;
	defs[n] = reg(s->kernarg, 0, 2);
	srcs[n++] = (Val){VK_REG, 2, 0, -1, (uint32_t)s->abi->kernarg_sgpr};
	for (int dm = 0; dm < 3; dm++) {
		s->wgid[dm] = -1;
		if (s->abi->wgid_sgpr[dm] < 0)
			continue;
		s->wgid[dm] = newv(s, MR_S, 1);
		s->mf->vregs.data[s->wgid[dm]].hint = (int16_t)s->abi->wgid_sgpr[dm];
		defs[n] = reg(s->wgid[dm], 0, 1);
		srcs[n++] = (Val){VK_REG, 1, 0, -1, (uint32_t)s->abi->wgid_sgpr[dm]};
	}
	/* SGPR inputs in one parallel copy (at most 4 pairs fit an MInst);
	 * v0 in its own copy: files never overlap. */
	MInst *mi = emit(s, MOP_PCOPY, n);
	for (int k = 0; k < n; k++) {
		put(s, mi, k, defs[k], ISA_TY_B32);
		mi_phys(mi, n + k, isa_sgpr((int)srcs[k].bits, srcs[k].count));
	}
	s->vgpr_in = newv(s, MR_V, 1);
	s->mf->vregs.data[s->vgpr_in].hint = 0;
	mi = emit(s, MOP_COPY, 1);
	put(s, mi, 0, reg(s->vgpr_in, 0, 1), ISA_TY_B32);
	mi_phys(mi, 1, isa_vgpr(0, 1));
	s->tid = newv(s, MR_V, 1);
	valu3(s, ISA_V_BFE_U32, reg(s->tid, 0, 1), reg(s->vgpr_in, 0, 1), cst(0), cst(10));
	bool lanes = false;
	for (size_t i = 0; i < sf->code.len; i++)
		lanes |= sf->code.data[i].op == SI_SHFL_BFLY || sf->code.data[i].op == SI_MMA;
	s->lane4 = -1;
	if (lanes) {
		Val l = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_MBCNT_LO_U32_B32, l, cst(0xffffffffu), cst(0));
		if (s->w64)
			valu2(s, ISA_V_MBCNT_HI_U32_B32, l, cst(0xffffffffu), l);
		s->lane4 = newv(s, MR_V, 1);
		valu2(s, ISA_V_LSHLREV_B32, reg(s->lane4, 0, 1), cst(2), l);
	}
}

static void sel_param(Isel *s, const SInst *in)
{
	const SimtParam *p = &s->sf->params.data[in->imm];
	int n = p->vt == VT_I64 || p->vt == VT_F64 ? 2 : 1;
	Val d = dst_of(s, in->dst, 0, n);
	bool uni = s->uni[in->dst];
	Val t = uni ? d : reg(newv(s, MR_S, n), 0, n);
	MInst *mi = emit(s, n == 2 ? ISA_S_LOAD_DWORDX2 : ISA_S_LOAD_DWORD, 1);
	put(s, mi, 0, t, ISA_TY_B32);
	put(s, mi, 1, reg(s->kernarg, 0, 2), ISA_TY_B32);
	mi_phys(mi, 2, isa_imm((int32_t)s->abi->param_offset[in->imm]));
	if (!uni)
		copy_val(s, d, t, false);
}

static void sel_inst(Isel *s, int i)
{
	const SInst *in = &s->sf->code.data[i];
	zero_parks(s, i);
	bool guarded = in->guard >= 0 && in->op != SI_BRA;
	Val saved = {0};
	if (guarded) {
		Val g = reg(s->vr[in->guard], 0, s->lm);
		if (in->guard_neg) {
			Val ng = reg(newv(s, MR_S, s->lm), 0, s->lm);
			MInst *mi = emit(s, lmop(s, ISA_S_NOT_B32, ISA_S_NOT_B64), 1);
			put(s, mi, 0, ng, ISA_TY_B32);
			put(s, mi, 1, g, ISA_TY_B32);
			g = ng;
		}
		saved = reg(newv(s, MR_S, s->lm), 0, s->lm);
		MInst *mi = emit(s, lmop(s, ISA_S_AND_SAVEEXEC_B32, ISA_S_AND_SAVEEXEC_B64), 1);
		put(s, mi, 0, saved, ISA_TY_B32);
		put(s, mi, 1, g, ISA_TY_B32);
	}
	size_t before = s->mf->insns.len;
	bool uni = in->dst >= 0 && s->uni[in->dst];
	switch ((SOp)in->op) {
	case SI_MOVI: case SI_MOVF: {
		if (s->isconst[in->dst] && in->guard < 0)
			break; /* folded into uses */
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (in->type == DT_BOOL) {
			MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, in->imm ? 0xffffffffu : 0));
			break;
		}
		uint64_t bits = (uint64_t)in->imm;
		if (in->op == SI_MOVF) {
			if (in->type == DT_F64) {
				double x = in->fimm;
				memcpy(&bits, &x, 8);
			} else {
				float f = (float)in->fimm;
				uint32_t b;
				memcpy(&b, &f, 4);
				bits = b;
			}
		}
		for (int k = 0; k < d.count; k++) {
			Val dk = reg(d.vreg, d.sub + k, 1);
			Val c = cst((uint32_t)(bits >> (32 * k)));
			if (vcls(s, dk) == MR_A) { /* clear of an AGPR accumulator */
				acc_move(s, dk, c);
				continue;
			}
			MInst *mi = uni ? salu1(s, ISA_S_MOV_B32, dk, c) : valu1(s, ISA_V_MOV_B32, dk, c);
			if (!k && d.count > 1)
				mi->flags |= MI_DEFALL;
		}
		break;
	}
	case SI_MOV: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (s->sf->regs.data[in->dst] == VT_PRED) {
			MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			put(s, mi, 1, opnd_all(s, in->a), ISA_TY_B32);
			break;
		}
		copy_val(s, d, opnd_all(s, in->a), uni);
		break;
	}
	case SI_ADD: case SI_SUB: case SI_MUL: case SI_DIV: case SI_REM: case SI_MIN: case SI_MAX:
	case SI_SHL: case SI_SHR:
		sel_arith(s, in);
		break;
	case SI_AND: case SI_OR: case SI_XOR:
		if (in->type == DT_BOOL) {
			unsigned op = in->op == SI_AND ? lmop(s, ISA_S_AND_B32, ISA_S_AND_B64)
				      : in->op == SI_OR ? lmop(s, ISA_S_OR_B32, ISA_S_OR_B64)
							 : lmop(s, ISA_S_XOR_B32, ISA_S_XOR_B64);
			MInst *mi = emit(s, op, 1);
			put(s, mi, 0, dst_of(s, in->dst, 0, s->lm), ISA_TY_B32);
			put(s, mi, 1, opnd_all(s, in->a), ISA_TY_B32);
			put(s, mi, 2, opnd_all(s, in->b), ISA_TY_B32);
			break;
		}
		sel_arith(s, in);
		break;
	case SI_NOT: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (in->type == DT_BOOL) {
			MInst *mi = emit(s, lmop(s, ISA_S_NOT_B32, ISA_S_NOT_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			put(s, mi, 1, opnd_all(s, in->a), ISA_TY_B32);
		} else if (d.count == 2) {
			if (uni)
				salu1(s, ISA_S_NOT_B64, d, opnd_all(s, in->a));
			else
				for (int k = 0; k < 2; k++) {
					MInst *mi = valu1(s, ISA_V_NOT_B32, reg(d.vreg, k, 1), opnd(s, in->a, k));
					if (!k)
						mi->flags |= MI_DEFALL;
				}
		} else {
			uni ? (void)salu1(s, ISA_S_NOT_B32, d, opnd(s, in->a, 0)) : (void)valu1(s, ISA_V_NOT_B32, d, opnd(s, in->a, 0));
		}
		break;
	}
	case SI_NEG: case SI_ABS: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst)), a = opnd(s, in->a, 0);
		int t = in->type;
		if (t == DT_F32 || t == DT_F64) { /* the sign bit: of the high dword for f64 */
			int hi = t == DT_F64;
			Val dh = reg(d.vreg, d.sub + hi, 1), ah = opnd(s, in->a, hi);
			MInst *mi = in->op == SI_NEG ? valu2(s, ISA_V_XOR_B32, dh, cst(0x80000000u), ah)
						     : valu2(s, ISA_V_AND_B32, dh, cst(0x7fffffffu), ah);
			if (hi) {
				mi->flags |= MI_DEFALL;
				valu1(s, ISA_V_MOV_B32, reg(d.vreg, d.sub, 1), opnd(s, in->a, 0));
			}
		} else if (t == DT_I32) {
			if (in->op == SI_NEG)
				uni ? (void)salu2(s, ISA_S_SUB_U32, d, cst(0), a) : (void)valu2(s, ISA_V_SUB_U32, d, cst(0), a);
			else if (uni)
				salu1(s, ISA_S_ABS_I32, d, a);
			else {
				Val n = reg(newv(s, MR_V, 1), 0, 1);
				valu2(s, ISA_V_SUB_U32, n, cst(0), a);
				valu2(s, ISA_V_MAX_I32, d, a, n);
			}
		} else if (t == DT_I64 && in->op == SI_NEG) {
			Val z = cst(0);
			sel_add64(s, d, z, opnd_all(s, in->a), true, uni);
		} else if (t == DT_I64 && !uni) { /* abs = max(a, -a) */
			Val n = reg(newv(s, MR_V, 2), 0, 2);
			sel_add64(s, n, cst(0), opnd_all(s, in->a), true, false);
			sel_minmax64(s, d, opnd_all(s, in->a), n, true);
		} else {
			unsupported(s, "neg/abs of this type");
		}
		break;
	}
	case SI_SETP: sel_setp(s, in); break;
	case SI_SELP: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		Val m = reg(s->vr[in->c], 0, s->lm);
		if (uni) {
			mask_to_scc(s, m);
			if (d.count == 2)
				salu2(s, ISA_S_CSELECT_B64, d, opnd_all(s, in->a), opnd_all(s, in->b));
			else
				salu2(s, ISA_S_CSELECT_B32, d, opnd(s, in->a, 0), opnd(s, in->b, 0));
			break;
		}
		for (int k = 0; k < d.count; k++) {
			Val dk = reg(d.vreg, d.sub + k, 1);
			Val src[3] = {opnd(s, in->b, k), opnd(s, in->a, k), m};
			MInst *mi = valu(s, ISA_V_CNDMASK_B32, 1, &dk, 3, src);
			if (!k && d.count > 1)
				mi->flags |= MI_DEFALL;
		}
		break;
	}
	case SI_CVT: sel_cvt(s, in); break;
	case SI_PACK: case SI_UNPACK: {
		int t = in->type;
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (t == DT_F16 || t == DT_BF16) {
			if (in->op == SI_PACK)
				sel_small_pack(s, t, d, opnd(s, in->a, 0), s->use[in->dst] == 1);
			else if (!sel_unpack_half(s, in, d))
				sel_small_unpack(s, t, d, opnd(s, in->a, 0));
		} else if (t == DT_BOOL) {
			if (in->op == SI_PACK) {
				Val src[3] = {cst(0), cst(1), reg(s->vr[in->a], 0, s->lm)};
				valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, src);
			} else {
				valu2(s, ISA_V_CMP_NE_U32, d, opnd(s, in->a, 0), cst(0));
			}
		} else if (dtype_is_fp8((DType)t)) {
			if (in->op == SI_PACK)
				fp8_pack(s, t, d, opnd(s, in->a, 0));
			else
				fp8_unpack(s, t, d, opnd(s, in->a, 0));
		} else {
			copy_val(s, d, opnd_all(s, in->a), uni);
		}
		break;
	}
	case SI_PACK2: {
		if (sel_pack2_fp8(s, in))
			break;
		Val d = dst_of(s, in->dst, 0, 1);
		Val lo = opnd(s, in->a, 0);
		if (f16_packed(s, in->a) && f16_packed(s, in->b)) {
			/* Two converted f16 values (canonical, so the f16 op moves their
			 * bits unchanged): one v_pack_b32_f16, high halves ignored. */
			valu2(s, ISA_V_PACK_B32_F16, d, to_vgpr(s, lo), to_vgpr(s, opnd(s, in->b, 0)));
			break;
		}
		if (!zext16(s, in->a)) {
			lo = reg(newv(s, MR_V, 1), 0, 1);
			valu3(s, ISA_V_BFE_U32, lo, opnd(s, in->a, 0), cst(0), cst(16));
		}
		valu3(s, ISA_V_LSHL_OR_B32, d, opnd(s, in->b, 0), cst(16), lo);
		break;
	}
	case SI_MATH: {
		if (in->type != DT_F32) {
			static const char *const nm[] = {"exp2", "log2", "sqrt (and rsqrt)", "reciprocal", "floor", "ceil",
			                                 "round", "trunc (fmod, %)", "sin", "cos"};
			char what[80];
			snprintf(what, sizeof what, "f64 %s", in->sub < TA_ARRAY_LEN(nm) ? nm[in->sub] : "math");
			unsupported(s, what);
			break;
		}
		static const unsigned ops[] = {ISA_V_EXP_F32,   ISA_V_LOG_F32,   ISA_V_SQRT_F32,  ISA_V_RCP_F32,
		                               ISA_V_FLOOR_F32, ISA_V_CEIL_F32,  ISA_V_RNDNE_F32, ISA_V_TRUNC_F32,
		                               ISA_V_SIN_F32,   ISA_V_COS_F32};
		Val a = opnd(s, in->a, 0);
		if (in->sub == MATH_SIN || in->sub == MATH_COS) { /* v_sin/v_cos take revolutions */
			Val rev = vtmp(s);
			valu2(s, ISA_V_MUL_F32, rev, cst(0x3e22f983u), a); /* 1 / (2 pi) */
			a = rev;
		}
		valu1(s, ops[in->sub], dst_of(s, in->dst, 0, 1), a);
		break;
	}
	case SI_TID: valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst, 0, 1), reg(s->tid, 0, 1)); break;
	case SI_CTAID: {
		int dm = (int)in->imm;
		Val d = dst_of(s, in->dst, 0, 1);
		if (dm < 0 || dm > 2 || s->wgid[dm] < 0) {
			unsupported(s, "this block index dimension");
			break;
		}
		uni ? (void)salu1(s, ISA_S_MOV_B32, d, reg(s->wgid[dm], 0, 1))
		    : (void)valu1(s, ISA_V_MOV_B32, d, reg(s->wgid[dm], 0, 1));
		break;
	}
	case SI_PARAM: sel_param(s, in); break;
	case SI_SHBASE:
		if (!s->isconst[in->dst])
			uni ? (void)salu1(s, ISA_S_MOV_B32, dst_of(s, in->dst, 0, 1), cst(0))
			    : (void)valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst, 0, 1), cst(0));
		break;
	case SI_LOCALADDR: unsupported(s, "local (per-thread array) memory"); break;
	case SI_LD: sel_ld(s, in); break;
	case SI_ST: case SI_ATOM_ADD: case SI_ATOM_MAX: case SI_ATOM_MIN: sel_st(s, in); break;
	case SI_BAR: emit(s, ISA_S_BARRIER, 0); break;
	case SI_SHFL_BFLY: sel_shfl(s, in); break;
	case SI_HALF: /* a b16 value in the low bits, zero-extended */
		valu3(s, ISA_V_BFE_U32, dst_of(s, in->dst, 0, 1), opnd(s, in->a, 0), cst(in->imm ? 16 : 0), cst(16));
		break;
	case SI_MMA:
		if (in->sub != MMA_M16N8K16)
			sel_mma_amd(s, in);
		else
			sel_mma(s, in);
		break;
	case SI_LABEL: sel_label(s, (int)in->imm); break;
	case SI_BRA: {
		int L = (int)in->imm;
		bool back = s->label_block[L] >= 0;
		if (back) {
			if (in->guard >= 0) {
				unsupported(s, "a conditional backward branch");
				break;
			}
			branch_to(s, ISA_S_BRANCH, L);
			set_succ_label(s, 0, L);
			start_block(s);
			break;
		}
		if (in->guard >= 0)
			sel_fwd_branch(s, i, L, reg(s->vr[in->guard], 0, s->lm), in->guard_neg, false);
		else
			sel_fwd_branch(s, i, L, cst(0), false, true);
		break;
	}
	case SI_RET:
		if ((size_t)i + 1 < s->sf->code.len)
			sel_fwd_branch(s, i, s->nlabels - 1, cst(0), false, true);
		break;
	default: unsupported(s, "this SIMT instruction"); break;
	}
	if (in->dst >= 0 && s->tfirst[in->dst])
		for (size_t k = before; k < s->mf->insns.len; k++) {
			MInst *mk = &s->mf->insns.data[k];
			if (mk->ndef && (mk->vmask & 1) && mk->vr[0] == s->vr[in->dst] && mk->sub[0] == 0) {
				mk->flags |= MI_DEFALL;
				break;
			}
		}
	if (guarded) {
		for (size_t k = before; k < s->mf->insns.len; k++) {
			MInst *mk = &s->mf->insns.data[k];
			if (in->dst < 0 || !mk->ndef || !(mk->vmask & 1))
				continue;
			for (int r = 0; r < dst_count(in); r++)
				if (mk->vr[0] == s->vr[in->dst + r])
					mk->flags |= MI_PARTIAL;
		}
		MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
		mi_phys(mi, 0, exec_op(s));
		put(s, mi, 1, saved, ISA_TY_B32);
	}
}

/* Resolve SIMT label references into block ids; fill fallthrough edges. */
static void link_blocks(Isel *s)
{
	MFunc *mf = s->mf;
	for (size_t b = 0; b < mf->blocks.len; b++) {
		MBlock *bl = &mf->blocks.data[b];
		for (int k = 0; k < 3; k++)
			if (bl->succ[k] <= -2)
				bl->succ[k] = s->label_block[-bl->succ[k] - 2];
		const MInst *last = bl->last > bl->first ? &mf->insns.data[bl->last - 1] : NULL;
		bool uncond = last && (last->in.op == ISA_S_BRANCH || last->in.op == ISA_S_ENDPGM);
		if (!uncond && b + 1 < mf->blocks.len)
			bl->succ[0] = (int32_t)b + 1;
		for (int i = bl->first; i < bl->last; i++) {
			MInst *mi = &mf->insns.data[i];
			if (mi->in.nops && mi->in.ops[0].kind == ISA_K_LABEL && mi->in.op < ISA_NUM_OPS)
				mi->in.ops[0].imm = s->label_block[mi->in.ops[0].imm];
		}
	}
}

int amd_isel(const SimtFunc *sf, const Target *t, const AmdAbi *abi, MFunc *mf, Diag *d)
{
	Isel s0, *s = &s0;
	memset(s, 0, sizeof *s);
	s->sf = sf, s->t = t, s->abi = abi, s->mf = mf, s->d = d;
	s->it = mf->target;
	s->w64 = ISA_IS_W64(s->it);
	s->lm = s->w64 ? 2 : 1;
	s->gfx11 = ISA_TARGET(s->it) == TA_TARGET_GFX1100;
	size_t nr = sf->regs.len + 1, n = sf->code.len + 1;
	s->nlabels = sf->nlabels + 1;
	s->vr = calloc(nr, sizeof(int32_t));
	s->vsub = calloc(nr, 1);
	s->tfirst = calloc(nr, 1);
	s->def1 = calloc(nr, sizeof(int32_t));
	s->use = calloc(nr, 1);
	s->uni = calloc(nr, 1);
	s->isconst = calloc(nr, 1);
	s->cval = calloc(nr, sizeof(int64_t));
	s->ndefs = calloc(nr, sizeof(int32_t));
	s->label_block = malloc(sizeof(int32_t) * (size_t)(s->nlabels + 1));
	s->park = malloc(sizeof(int32_t) * (size_t)(s->nlabels + 1));
	s->init_next = malloc(sizeof(int32_t) * (size_t)(s->nlabels + 1));
	s->next_label = calloc(n, sizeof(int32_t));
	s->init_at = malloc(sizeof(int32_t) * n);
	s->label_pos = calloc((size_t)s->nlabels + 1, sizeof(int32_t));
	s->init_pos = calloc((size_t)s->nlabels + 1, sizeof(int32_t));
	s->seg_zeroed = calloc((size_t)s->nlabels + 1, 1);
	int rc = -1;
	if (!s->vr || !s->vsub || !s->tfirst || !s->def1 || !s->use || !s->uni || !s->isconst || !s->cval || !s->ndefs || !s->label_block || !s->park ||
	    !s->next_label || !s->init_at || !s->init_next || !s->label_pos || !s->init_pos || !s->seg_zeroed) {
		diag_error(d, "out of memory");
		goto out;
	}
	for (int L = 0; L <= s->nlabels; L++)
		s->label_block[L] = -1, s->park[L] = -1, s->init_next[L] = -1;
	for (size_t i = 0; i < n; i++)
		s->init_at[i] = -1;
	mir_block(mf);
	sel_entry(s);
	analyze(s);
	if (s->err)
		goto out;
	for (size_t r = 0; r < nr; r++)
		s->vr[r] = -1;
	group_mma_tuples(s);
	scan_uses(s);
	for (size_t r = 0; r + 1 < nr; r++) {
		if (s->vr[r] >= 0)
			continue;
		int vt = sf->regs.data[r];
		int size = vt == VT_PRED ? s->lm : vt == VT_I64 || vt == VT_F64 ? 2 : 1;
		int cls = vt == VT_PRED || s->uni[r] ? MR_S : MR_V;
		s->vr[r] = newv(s, cls, size);
	}
	for (size_t i = 0; i < sf->code.len && !s->err; i++)
		sel_inst(s, (int)i);
	/* The end label: parked lanes (early returns) come back, then stop. */
	sel_label(s, s->nlabels - 1);
	emit(s, ISA_S_ENDPGM, 0);
	if (s->err)
		goto out;
	link_blocks(s);
	rc = 0;
out:
	free(s->vr), free(s->vsub), free(s->tfirst), free(s->def1), free(s->use), free(s->uni), free(s->isconst), free(s->cval), free(s->ndefs), free(s->label_block);
	free(s->park), free(s->next_label), free(s->init_at), free(s->init_next), free(s->label_pos), free(s->init_pos), free(s->seg_zeroed);
	return rc;
}
