/* amd_emit.c — machine code bytes from physical MIR.
 *
 * Branch offsets are simm16 dword counts, and a branch's size does not
 * depend on its offset, so one pass encodes every instruction (branches
 * with offset 0) and records where each starts; a second pass re-encodes
 * only the branches, now that block addresses are known, in place.
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

int amd_emit(const MFunc *mf, AmdCode *code, StrBuf *listing, Diag *d)
{
	ta_target t = mf->target;
	memset(code, 0, sizeof *code);
	size_t n = mf->insns.len, nb = mf->blocks.len;
	uint32_t *pos = malloc(sizeof(uint32_t) * (n + 1));
	uint8_t *ilen = malloc(n + 1);
	uint32_t *bpos = malloc(sizeof(uint32_t) * (nb + 1));
	VEC(uint8_t) bytes = {0};
	int rc = -1;
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
	/* Pass 2: branches, in place (same length: SOPP takes any offset). */
	for (size_t b = 0; b < nb; b++) {
		const MBlock *bl = &mf->blocks.data[b];
		for (int i = bl->first; i < bl->last; i++) {
			const IsaInsn *src = &mf->insns.data[i].in;
			if (!is_branch(src))
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
				const IsaInsn *src = &mf->insns.data[i].in, *in = src;
				IsaInsn tmp;
				if (is_branch(src)) {
					if (resolve(src, bpos, pos[i], 1, &tmp, d))
						goto out;
					in = &tmp;
				}
				StrBuf txt = {0};
				isa_print(t, in, &txt);
				isa_format_encoding_line(txt.buf ? txt.buf : "", bytes.data + pos[i], ilen[i], listing);
				sb_free(&txt);
			}
		}
	code->code = bytes.data;
	code->len = bytes.len;
	bytes.data = NULL;
	rc = 0;
out:
	vec_free(&bytes);
	free(pos);
	free(ilen);
	free(bpos);
	return rc;
}
