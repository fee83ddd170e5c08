/* amd_emit.c — machine code bytes from physical MIR.
 *
 * Branch offsets are simm16 dword counts, and a branch's size does not
 * depend on its offset, so one pass encodes every instruction (branches
 * with offset 0) and records where each starts; a second pass re-encodes
 * only the branches, now that block addresses are known, in place.
 * A branch whose target is beyond the simm16 range (+-128 KiB) becomes
 * a long branch through the SGPR pair ra_run kept free (MFunc.
 * long_branch_sgpr), as LLVM's branch relaxation does:
 *     s_getpc_b64 s[r:r+1]; s_add_u32 sr, sr, lo; s_addc_u32 sr+1, sr+1, hi;
 *     s_setpc_b64 s[r:r+1]
 * (20 bytes; the offset never fits an inline constant), a conditional one
 * behind the inverted branch over those 5 dwords.  They clobber SCC, which
 * no branch target reads.  Which branches are long is settled before the
 * final layout: growing one can only push others out of range, so marking
 * stops after at most as many rounds as branches (in practice 1 or 2).
 * Register counts are taken from the operands the code actually has
 * (every SGPR/VGPR/AGPR operand, implicit kernel inputs included because
 * the entry copies read them). */
#include "amd.h"

#include <stdlib.h>

static void count_regs(const IsaInsn *in, AmdCode *c)
{
	for (int k = 0; k < in->nops; k++) {
		const IsaOperand *o = &in->ops[k];
		int end = o->reg + o->count;
		if (o->kind == ISA_K_SGPR)
			c->sgprs = TA_MAX(c->sgprs, end);
		else if (o->kind == ISA_K_VGPR)
			c->vgprs = TA_MAX(c->vgprs, end);
		else if (o->kind == ISA_K_AGPR)
			c->agprs = TA_MAX(c->agprs, end);
	}
}

static int is_branch(const IsaInsn *in)
{
	return in->nops && in->ops[0].kind == ISA_K_LABEL;
}

/* in with its label operand replaced by the dword offset from the
 * instruction at pc to block tb's start (0 while addresses are unknown). */
static int resolve(const IsaInsn *src, const uint32_t *bpos, uint32_t pc, int known, IsaInsn *in, Diag *d)
{
	*in = *src;
	int32_t off = known ? ((int32_t)bpos[src->ops[0].imm] - (int32_t)(pc + 4)) / 4 : 0;
	if (off < -32768 || off > 32767) {
		diag_error(d, "branch offset out of range (kernel too large)");
		return -1;
	}
	in->ops[0] = isa_imm(off);
	return 0;
}

static int encode(ta_target t, const IsaInsn *in, uint8_t buf[16], Diag *d)
{
	int len = isa_encode(t, in, buf, d);
	if (len < 0) {
		StrBuf txt = {0};
		isa_print(t, in, &txt);
		diag_error(d, "internal error: cannot encode '%s'", txt.buf ? txt.buf : "?");
		sb_free(&txt);
	}
	return len;
}

/* The long form of branch src (op and label) at byte pc to byte dst:
 * writes up to 5 instructions into seq, returns their count. */
static int long_branch(const IsaInsn *src, int r, uint32_t pc, uint32_t dst, IsaInsn *seq)
{
	int k = 0;
	unsigned inv = 0;
	switch (src->op) {
	case ISA_S_BRANCH: inv = 0; break;
	case ISA_S_CBRANCH_SCC0: inv = ISA_S_CBRANCH_SCC1; break;
	case ISA_S_CBRANCH_SCC1: inv = ISA_S_CBRANCH_SCC0; break;
	case ISA_S_CBRANCH_VCCZ: inv = ISA_S_CBRANCH_VCCNZ; break;
	case ISA_S_CBRANCH_VCCNZ: inv = ISA_S_CBRANCH_VCCZ; break;
	case ISA_S_CBRANCH_EXECZ: inv = ISA_S_CBRANCH_EXECNZ; break;
	case ISA_S_CBRANCH_EXECNZ: inv = ISA_S_CBRANCH_EXECZ; break;
	default: return -1;
	}
	if (inv) { /* skip the 5 dwords below when the branch is not taken */
		isa_insn_init(&seq[k], inv);
		seq[k].nops = 1;
		seq[k++].ops[0] = isa_imm(5);
		pc += 4;
	}
	int64_t delta = (int64_t)dst - (int64_t)(pc + 4); /* s_getpc gives the next address */
	isa_insn_init(&seq[k], ISA_S_GETPC_B64);
	seq[k].nops = 1;
	seq[k++].ops[0] = isa_sgpr(r, 2);
	isa_insn_init(&seq[k], ISA_S_ADD_U32);
	seq[k].nops = 3;
	seq[k].ops[0] = isa_sgpr(r, 1), seq[k].ops[1] = isa_sgpr(r, 1);
	seq[k++].ops[2] = isa_const_u32(ISA_TY_B32, (uint32_t)delta);
	isa_insn_init(&seq[k], ISA_S_ADDC_U32);
	seq[k].nops = 3;
	seq[k].ops[0] = isa_sgpr(r + 1, 1), seq[k].ops[1] = isa_sgpr(r + 1, 1);
	seq[k++].ops[2] = isa_const_u32(ISA_TY_B32, delta < 0 ? 0xffffffffu : 0);
	isa_insn_init(&seq[k], ISA_S_SETPC_B64);
	seq[k].nops = 1;
	seq[k++].ops[0] = isa_sgpr(r, 2);
	return k;
}

static int out_of_range(const IsaInsn *src, const uint32_t *bpos, uint32_t pc)
{
	int32_t off = ((int32_t)bpos[src->ops[0].imm] - (int32_t)(pc + 4)) / 4;
	return off < -32768 || off > 32767;
}

int amd_emit(const MFunc *mf, AmdCode *code, StrBuf *listing, Diag *d)
{
	ta_target t = mf->target;
	memset(code, 0, sizeof *code);
	size_t n = mf->insns.len, nb = mf->blocks.len;
	uint32_t *pos = malloc(sizeof(uint32_t) * (n + 1));
	uint8_t *ilen = malloc(n + 1), *islong = NULL;
	uint32_t *bpos = malloc(sizeof(uint32_t) * (nb + 1));
	VEC(uint8_t) bytes = {0}, relaid = {0};
	int rc = -1, nlong = 0;
	if (!pos || !ilen || !bpos || vec_reserve(&bytes, 8 * n + 16)) {
		diag_error(d, "out of memory");
		goto out;
	}
	/* Pass 1: everything, branches with offset 0. */
	for (size_t b = 0; b < nb; b++) {
		const MBlock *bl = &mf->blocks.data[b];
		bpos[b] = (uint32_t)bytes.len;
		for (int i = bl->first; i < bl->last; i++) {
			const IsaInsn *src = &mf->insns.data[i].in, *in = src;
			IsaInsn tmp;
			if (src->op >= ISA_NUM_OPS) {
				diag_error(d, "internal error: pseudo instruction left after lowering");
				goto out;
			}
			if (is_branch(src)) {
				if (resolve(src, bpos, 0, 0, &tmp, d))
					goto out;
				in = &tmp;
			}
			if (vec_reserve(&bytes, bytes.len + 16)) {
				diag_error(d, "out of memory");
				goto out;
			}
			int len = encode(t, in, bytes.data + bytes.len, d);
			if (len < 0)
				goto out;
			pos[i] = (uint32_t)bytes.len;
			ilen[i] = (uint8_t)len;
			bytes.len += (size_t)len;
			count_regs(in, code);
			code->ninsns++;
		}
	}
	/* Long branches: mark until none is out of range, then lay the code
	 * out again with their room (the other bytes move as they are). */
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < n; i++)
			if (is_branch(&mf->insns.data[i].in) && !(islong && islong[i]) &&
			    out_of_range(&mf->insns.data[i].in, bpos, pos[i])) {
				if (mf->long_branch_sgpr < 0) {
					diag_error(d, "branch offset out of range (kernel too large)");
					goto out;
				}
				if (!islong && !(islong = calloc(n + 1, 1))) {
					diag_error(d, "out of memory");
					goto out;
				}
				islong[i] = 1, changed = 1, nlong++;
			}
		if (!changed)
			break;
		uint32_t at = 0; /* new positions, from the old ones */
		for (size_t b = 0; b < nb; b++) {
			const MBlock *bl = &mf->blocks.data[b];
			bpos[b] = at;
			for (int i = bl->first; i < bl->last; i++) {
				pos[i] = at;
				at += islong[i] ? (mf->insns.data[i].in.op == ISA_S_BRANCH ? 20 : 24) : ilen[i];
			}
		}
	}
	if (nlong) {
		/* ilen still holds the short sizes: the old bytes are at their
		 * running sum, in layout order. */
		if (vec_reserve(&relaid, bytes.len + 24 * (size_t)nlong + 16)) {
			diag_error(d, "out of memory");
			goto out;
		}
		uint32_t old = 0;
		for (size_t b = 0; b < nb; b++) {
			const MBlock *bl = &mf->blocks.data[b];
			for (int i = bl->first; i < bl->last; i++) {
				const IsaInsn *src = &mf->insns.data[i].in;
				if (islong[i]) {
					IsaInsn seq[5];
					int k = long_branch(src, mf->long_branch_sgpr, pos[i], bpos[src->ops[0].imm], seq);
					if (k < 0) {
						diag_error(d, "internal error: no long form of a branch");
						goto out;
					}
					for (int j = 0; j < k; j++) {
						int len = encode(t, &seq[j], relaid.data + relaid.len, d);
						if (len < 0)
							goto out;
						relaid.len += (size_t)len;
						count_regs(&seq[j], code);
					}
					code->ninsns += k - 1;
					if (relaid.len != pos[i] + (k == 5 ? 24u : 20u)) {
						diag_error(d, "internal error: long branch size");
						goto out;
					}
				} else {
					memcpy(relaid.data + relaid.len, bytes.data + old, ilen[i]);
					relaid.len += ilen[i];
				}
				old += ilen[i];
			}
		}
		vec_free(&bytes);
		bytes.data = relaid.data, bytes.len = relaid.len, bytes.cap = relaid.cap;
		relaid.data = NULL;
	}
	/* Pass 2: branches, in place (same length: SOPP takes any offset). */
	for (size_t b = 0; b < nb; b++) {
		const MBlock *bl = &mf->blocks.data[b];
		for (int i = bl->first; i < bl->last; i++) {
			const IsaInsn *src = &mf->insns.data[i].in;
			if (!is_branch(src) || (islong && islong[i]))
				continue;
			IsaInsn in;
			uint8_t buf[16];
			if (resolve(src, bpos, pos[i], 1, &in, d))
				goto out;
			int len = encode(t, &in, buf, d);
			if (len < 0)
				goto out;
			if (len != ilen[i]) {
				diag_error(d, "internal error: branch size changed with its offset");
				goto out;
			}
			memcpy(bytes.data + pos[i], buf, (size_t)len);
		}
	}
	if (listing)
		for (size_t b = 0; b < nb; b++) {
			const MBlock *bl = &mf->blocks.data[b];
			for (int i = bl->first; i < bl->last; i++) {
				const IsaInsn *src = &mf->insns.data[i].in;
				IsaInsn seq[5];
				int k = 1;
				uint32_t at = pos[i];
				if (islong && islong[i]) {
					k = long_branch(src, mf->long_branch_sgpr, pos[i], bpos[src->ops[0].imm], seq);
				} else if (is_branch(src)) {
					if (resolve(src, bpos, pos[i], 1, &seq[0], d))
						goto out;
				} else {
					seq[0] = *src;
				}
				for (int j = 0; j < k; j++) {
					uint8_t buf[16];
					int len = k == 1 ? ilen[i] : encode(t, &seq[j], buf, d);
					if (len < 0)
						goto out;
					StrBuf txt = {0};
					isa_print(t, &seq[j], &txt);
					isa_format_encoding_line(txt.buf ? txt.buf : "", bytes.data + at, len, listing);
					sb_free(&txt);
					at += (uint32_t)len;
				}
			}
		}
	code->code = bytes.data;
	code->len = bytes.len;
	bytes.data = NULL;
	rc = 0;
out:
	vec_free(&bytes);
	vec_free(&relaid);
	free(pos);
	free(ilen);
	free(islong);
	free(bpos);
	return rc;
}
