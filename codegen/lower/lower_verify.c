/* lower_verify.c — simt_verify: a structural check of the SIMT IR that the
 * backends rely on, run between passes in debug builds and by the tests
 * (AmdOutput.verify).  It checks what a backend would otherwise read out
 * of bounds or mistranslate silently, not the program's meaning. */
#include <stdlib.h>

#include "lower.h"

static int reg_ok(const SimtFunc *f, int32_t r, int n)
{
	return r >= 0 && n >= 1 && (size_t)r + (size_t)n <= f->regs.len;
}

/* Operand r of instruction i: -1 (unused) or a register id. */
static int opnd(const SimtFunc *f, size_t i, const char *what, int32_t r, StrBuf *err)
{
	if (r == -1 || reg_ok(f, r, 1))
		return 0;
	sb_printf(err, "instruction %zu: %s register %%%d out of range (%zu registers)", i, what, r, f->regs.len);
	return -1;
}

static int range(const SimtFunc *f, size_t i, const char *what, int32_t r, int n, StrBuf *err)
{
	if (reg_ok(f, r, n))
		return 0;
	sb_printf(err, "instruction %zu: %s registers %%%d..+%d out of range (%zu registers)", i, what, r, n,
		  f->regs.len);
	return -1;
}

int simt_verify(const SimtFunc *f, StrBuf *err)
{
	StrBuf dummy = {0};
	if (!err)
		err = &dummy;
	int rc = -1;
	uint8_t *defined = calloc((size_t)f->nlabels + 1, 1);
	if (!defined) {
		sb_puts(err, "out of memory");
		goto out;
	}
	for (size_t r = 0; r < f->regs.len; r++)
		if (f->regs.data[r] >= VT_COUNT) {
			sb_printf(err, "register %%%zu has no class (%d)", r, f->regs.data[r]);
			goto out;
		}
	for (size_t i = 0; i < f->code.len; i++) {
		const SInst *in = &f->code.data[i];
		if (in->op >= SI_COUNT) {
			sb_printf(err, "instruction %zu: unknown op %d", i, in->op);
			goto out;
		}
		if (opnd(f, i, "dst", in->dst, err) || opnd(f, i, "a", in->a, err) || opnd(f, i, "b", in->b, err) ||
		    opnd(f, i, "c", in->c, err) || opnd(f, i, "guard", in->guard, err))
			goto out;
		if (in->guard >= 0 && f->regs.data[in->guard] != VT_PRED) {
			sb_printf(err, "instruction %zu: guard %%%d is not a predicate", i, in->guard);
			goto out;
		}
		if (in->op == SI_SETP && f->regs.data[in->dst] != VT_PRED) {
			sb_printf(err, "instruction %zu: setp writes %%%d, not a predicate", i, in->dst);
			goto out;
		}
		if (in->op == SI_SELP && (in->c < 0 || f->regs.data[in->c] != VT_PRED)) {
			sb_printf(err, "instruction %zu: selp's condition is not a predicate", i);
			goto out;
		}
		if ((in->op == SI_LABEL || in->op == SI_BRA) && (in->imm < 0 || in->imm >= f->nlabels)) {
			sb_printf(err, "instruction %zu: label L%lld out of range (%d labels)", i, (long long)in->imm,
				  f->nlabels);
			goto out;
		}
		if (in->op == SI_LABEL && defined[in->imm]++) {
			sb_printf(err, "instruction %zu: label L%lld defined twice", i, (long long)in->imm);
			goto out;
		}
		if (in->op == SI_PARAM && (in->imm < 0 || (size_t)in->imm >= f->params.len)) {
			sb_printf(err, "instruction %zu: parameter %lld out of range", i, (long long)in->imm);
			goto out;
		}
		if (in->op == SI_LOCALADDR && (in->imm < 0 || (size_t)in->imm >= f->locals.len)) {
			sb_printf(err, "instruction %zu: local array %lld out of range", i, (long long)in->imm);
			goto out;
		}
		if (in->op == SI_LD || in->op == SI_ST) {
			if (in->vec != 0 && in->vec != 1 && in->vec != 2 && in->vec != 4) {
				sb_printf(err, "instruction %zu: vector width %d", i, in->vec);
				goto out;
			}
			int n = in->vec > 1 ? in->vec : 1;
			if (range(f, i, in->op == SI_LD ? "loaded" : "stored", in->op == SI_LD ? in->dst : in->b, n, err))
				goto out;
		}
		if (in->op == SI_LDMATRIX) {
			if (in->vec != 1 && in->vec != 2 && in->vec != 4) {
				sb_printf(err, "instruction %zu: ldmatrix of %d matrices", i, in->vec);
				goto out;
			}
			if (range(f, i, "ldmatrix", in->dst, in->vec, err))
				goto out;
		}
		if (in->op == SI_WGMMA) {
			int64_t N = in->imm & 0xffff, K = in->imm >> 16 & 0xffff, G = (in->imm >> 32) + 1;
			if (G < 1 || G > 4 || N < 16 || N > 256 || N % 16 || K < 16 || K % 16 || range(f, i, "wgmma C", in->dst, (int)(N / 2), err) ||
			    range(f, i, "wgmma A", in->a, (in->sub & 1) ? (int)(K / 4) : 1, err) ||
			    range(f, i, "wgmma B", in->b, 1, err))
				goto out;
		}
		if (in->op == SI_MMA) {
			if (in->sub >= MMA_NSHAPES) {
				sb_printf(err, "instruction %zu: MMA shape %d", i, in->sub);
				goto out;
			}
			const MmaInfo *mi = &simt_mma[in->sub];
			if (range(f, i, "MMA A", in->a, mi->na, err) || range(f, i, "MMA B", in->b, mi->nb, err) ||
			    range(f, i, "MMA C", in->c, mi->nc, err) || range(f, i, "MMA D", in->dst, mi->nc, err))
				goto out;
		}
	}
	for (size_t i = 0; i < f->code.len; i++) {
		const SInst *in = &f->code.data[i];
		if (in->op == SI_BRA && !defined[in->imm]) {
			sb_printf(err, "instruction %zu: branch to L%lld, which is not defined", i, (long long)in->imm);
			goto out;
		}
	}
	for (size_t i = 0; i + 1 < f->acc.len; i += 2)
		if (!reg_ok(f, f->acc.data[i], f->acc.data[i + 1])) {
			sb_printf(err, "accumulator range %%%d..+%d out of range", f->acc.data[i], f->acc.data[i + 1]);
			goto out;
		}
	rc = 0;
out:
	free(defined);
	sb_free(&dummy);
	return rc;
}
