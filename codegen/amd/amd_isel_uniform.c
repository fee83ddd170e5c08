/* amd_isel_uniform.c — uniformity and constants (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- uniformity and constants ------------------------------------------ */

static bool int_type(int t)
{
	return t == DT_I32 || t == DT_U32 || t == DT_I64 || t == DT_BOOL || t == DT_I8 || t == DT_U8 ||
	       t == DT_I16;
}

/* Can this instruction produce a uniform value in SGPRs (given uniform
 * operands)? */
bool salu_capable(const Isel *s, const SInst *in)
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
int dst_count(const SInst *in)
{
	if (in->op == SI_MMA)
		return simt_mma[in->sub].nc;
	if (in->op == SI_LD && in->vec > 1)
		return in->vec;
	return 1;
}

/* Index of the first back edge at a position > i (be_j is ascending). */
int first_edge_after(const int32_t *be_j, int nbe, int i)
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

void analyze(Isel *s)
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
	plan_parks(s, be_j, be_h, nbe);
out:
	free(mark);
	free(be_j);
	free(be_h);
}
