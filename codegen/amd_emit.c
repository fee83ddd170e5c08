/* amd_emit.c — machine code bytes from physical MIR.
 *
 * Branch offsets are simm16 dword counts, so every instruction's size is
 * known before offsets are: one sizing pass with zero offsets, then the
 * final encoding.  Register counts are taken from the operands the code
 * actually has (every SGPR/VGPR/AGPR operand, implicit kernel inputs
 * included because the entry copies read them). */
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

int amd_emit(const MFunc *mf, AmdCode *code, StrBuf *listing, Diag *d)
{
	ta_target t = mf->target;
	memset(code, 0, sizeof *code);
	size_t n = mf->insns.len, nb = mf->blocks.len;
	uint32_t *pos = malloc(sizeof(uint32_t) * (n + 1));
	uint32_t *bpos = malloc(sizeof(uint32_t) * (nb + 1));
	VEC(uint8_t) bytes = {0};
	int rc = -1;
	if (!pos || !bpos) {
		diag_error(d, "out of memory");
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		uint32_t pc = 0;
		bytes.len = 0;
		for (size_t b = 0; b < nb; b++) {
			const MBlock *bl = &mf->blocks.data[b];
			bpos[b] = pc;
			for (int i = bl->first; i < bl->last; i++) {
				IsaInsn in = mf->insns.data[i].in;
				if (in.op >= ISA_NUM_OPS) {
					diag_error(d, "internal error: pseudo instruction left after lowering");
					goto out;
				}
				if (in.nops && in.ops[0].kind == ISA_K_LABEL) {
					int tb = in.ops[0].imm;
					int32_t off = pass ? ((int32_t)bpos[tb] - (int32_t)(pc + 4)) / 4 : 0;
					if (off < -32768 || off > 32767) {
						diag_error(d, "branch offset out of range (kernel too large)");
						goto out;
					}
					in.ops[0] = isa_imm(off);
				}
				uint8_t buf[16];
				int len = isa_encode(t, &in, buf, d);
				if (len < 0) {
					StrBuf txt = {0};
					isa_print(t, &in, &txt);
					diag_error(d, "internal error: cannot encode '%s'", txt.buf ? txt.buf : "?");
					sb_free(&txt);
					goto out;
				}
				pos[i] = pc;
				pc += (uint32_t)len;
				if (pass) {
					if (vec_reserve(&bytes, bytes.len + (size_t)len)) {
						diag_error(d, "out of memory");
						goto out;
					}
					memcpy(bytes.data + bytes.len, buf, (size_t)len);
					bytes.len += (size_t)len;
					count_regs(&in, code);
					code->ninsns++;
					if (listing) {
						StrBuf txt = {0};
						isa_print(t, &in, &txt);
						isa_format_encoding_line(txt.buf ? txt.buf : "", buf, len, listing);
						sb_free(&txt);
					}
				}
			}
		}
	}
	code->code = bytes.data;
	code->len = bytes.len;
	bytes.data = NULL;
	rc = 0;
out:
	vec_free(&bytes);
	free(pos);
	free(bpos);
	return rc;
}
