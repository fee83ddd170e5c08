/* amd_isel_cf.c — control flow (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- control flow -------------------------------------------------------- */

void start_block(Isel *s)
{
	if (mir_block(s->mf) < 0)
		s->err = 1;
}

/* Record that the current block's branch targets (SIMT labels) must be
 * resolved after selection: succ[k] temporarily holds -(label + 2). */
void set_succ_label(Isel *s, int k, int label)
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

MInst *branch_to(Isel *s, unsigned op, int label)
{
	MInst *mi = emit(s, op, 0);
	IsaOperand o = {ISA_K_LABEL, 1, 0, label, NULL, 0};
	mi_phys(mi, 0, o);
	return mi;
}

/* A uniform conditional branch from SIMT insn i to label L can be a plain
 * s_cbranch_scc: every active lane goes the same way, so nothing is
 * parked, provided no label it jumps over waits for lanes parked by a
 * branch before i (those lanes would never resume; first_src: the first
 * parking branch selected so far, selection runs in order).  O(i..L). */
bool scalar_branch_ok(const Isel *s, int i, int L)
{
	const SimtFunc *sf = s->sf;
	for (int q = i + 1; q < s->label_pos[L] && q < (int)sf->code.len; q++)
		if (sf->code.data[q].op == SI_LABEL && s->first_src[sf->code.data[q].imm] < i)
			return false;
	return true;
}

/* That branch (p.kind VK_CONST: unconditional, s_branch; an unguarded
 * branch moves every active lane, so the same test applies): park masks
 * whose zeroing point it skips (and whose label it does not) are zeroed
 * first, as for an exec-empty jump. */
void sel_scalar_branch(Isel *s, int i, int L, Val p, bool neg)
{
	int np = s->label_pos[L];
	for (int q = i + 1; q <= np && q < (int)s->sf->code.len; q++)
		for (int X = s->init_at[q]; X >= 0; X = s->init_next[X]) {
			if (s->park[X] < 0 || s->label_pos[X] < np)
				continue;
			MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
			put(s, mi, 0, reg(s->park[X], 0, s->lm), ISA_TY_B32);
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
		}
	if (p.kind == VK_CONST) {
		branch_to(s, ISA_S_BRANCH, L);
		set_succ_label(s, 0, L);
	} else {
		mask_to_scc(s, p);
		branch_to(s, neg ? ISA_S_CBRANCH_SCC0 : ISA_S_CBRANCH_SCC1, L);
		set_succ_label(s, 1, L);
	}
	start_block(s);
}

/* Forward branch from SIMT insn i to label L with lane mask p (Val; count
 * 0 = all active lanes). */
void sel_fwd_branch(Isel *s, int i, int L, Val p, bool neg, bool all)
{
	if (i < s->first_src[L])
		s->first_src[L] = i;
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

void sel_label(Isel *s, int L)
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

void zero_parks(Isel *s, int i)
{
	for (int L = s->init_at[i]; L >= 0; L = s->init_next[L]) {
		MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
		put(s, mi, 0, reg(s->park[L], 0, s->lm), ISA_TY_B32);
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	}
}
