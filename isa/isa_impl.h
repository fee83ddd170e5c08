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
/* Whether s[reg : reg+count-1] (reg a scalar code; ttmps from ISA_TTMP_BASE) exists on t. */
int isa_sgpr_ok(ta_target t, unsigned reg, unsigned count);
/* Inline-constant code for a 32-bit pattern of type ty, or -1 if it needs a literal. */
int isa_inline_code(IsaType ty, uint32_t bits);

/* Modifier kinds (enc.c): what an encoding has fields for (isa_mods_ok) and,
 * in the parser, what the text wrote, so that none is accepted and dropped. */
enum { ISA_M_NEG = 1, ISA_M_ABS = 2, ISA_M_NEGHI = 4, ISA_M_OPSEL = 8, ISA_M_OPSELHI = 16, ISA_M_CLAMP = 32,
       ISA_M_OMOD = 64, ISA_M_OFFSET = 128, ISA_M_OFF01 = 256, ISA_M_OFFEN = 512, ISA_M_IDXEN = 1024,
       ISA_M_GDS = 2048, ISA_M_MAI = 4096, ISA_M_DPP16 = 8192, ISA_M_FI = 16384, ISA_M_DPP8 = 32768,
       ISA_M_NEGLO = 65536 /* the neg_lo:[] keyword (VOP3P) */,
       ISA_M_SDWA = 131072 /* dst_sel/dst_unused/src*_sel, sext() */, ISA_M_NKINDS = 18 };
unsigned isa_mods_ok(ta_target t, const IsaInsn *in, unsigned *cpol);

int isa_encode_checked(ta_target t, const IsaInsn *in, uint8_t out[16], Diag *d);

/* parse.c: isa_parse_insn that also returns the encoding (labels encoded as 0). */
int isa_parse_encode(ta_target t, const char *text, IsaInsn *out, uint8_t bytes[16], int *len,
		     const SrcFile *src, SrcPos pos, Diag *d);

int isa_dpp_ctrl_valid(ta_target t, unsigned ctrl);
int isa_cvt_kind(const IsaOpInfo *oi, ta_target t);
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
