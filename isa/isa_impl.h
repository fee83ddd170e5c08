/* isa_impl.h — helpers shared by the isa/ files (not part of the layer API). */
#ifndef TILEASM_ISA_IMPL_H
#define TILEASM_ISA_IMPL_H

#include "isa.h"

/* table.c */
int isa_lookup(ta_target t, const char *s, size_t len, uint16_t *ops, int max);
#define SIG_ROLE(s) ISA_SIG_ROLE(s)
#define SIG_CNT(s) ISA_SIG_CNT(s)

/* enc.c: scalar/VALU operand codes. */
int isa_special_code(ta_target t, IsaSpecial s); /* hardware code or -1 */
int isa_code_special(ta_target t, int code);     /* IsaSpecial or -1 */
/* Inline-constant code for a 32-bit pattern of type ty, or -1 if it needs a literal. */
int isa_inline_code(IsaType ty, uint32_t bits);

int isa_encode_checked(ta_target t, const IsaInsn *in, uint8_t out[16], Diag *d);

/* parse.c: isa_parse_insn that also returns the encoding (labels encoded as 0). */
int isa_parse_encode(ta_target t, const char *text, IsaInsn *out, uint8_t bytes[16], int *len,
		     const SrcFile *src, SrcPos pos, Diag *d);

int isa_dpp_ctrl_valid(ta_target t, unsigned ctrl);
void isa_16bit_operands(const char *name, IsaType ty, int *dst16, int *src16);

/* VOP3 opcode of a VOP1/VOP2/VOPC instruction promoted to _e64. */
int isa_e64_opcode(ta_target t, IsaFmt fmt, int opc);

/* Whether the VOP1/VOP2/VOPC mnemonic carries _e32/_e64 suffixes. */
static inline int isa_has_suffix(ta_target t, unsigned op)
{
	int i = isa_tidx(t);
	return i >= 0 && (isa_ops[op].e32 >> i & 1);
}

#endif
