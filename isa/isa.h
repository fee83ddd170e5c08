/* isa.h — the AMD instruction layer: one table of instructions (isa_ops.def)
 * for gfx90a, gfx942 and gfx1100, and the encoder, decoder, printer, parser
 * and text assembler that read it.
 *
 * Targets are plain ta_target values.  gfx1100 runs wave32 by default; OR
 * ISA_WAVE64 into the target (`TA_TARGET_GFX1100 | ISA_WAVE64`) for wave64,
 * which changes lane-mask operands (vcc vs vcc_lo) and WMMA register counts.
 * gfx90a/gfx942 are always wave64.
 *
 * Text follows LLVM's AMDGPU syntax exactly as llvm-mc-19 prints it, so
 * llvm-mc output assembles here and our printer's output assembles there.
 */
#ifndef TILEASM_ISA_H
#define TILEASM_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "target.h"
#include "util.h"

#define ISA_WAVE64 0x100 /* OR into a ta_target: gfx1100 in wave64 mode */
#define ISA_TARGET(t) ((ta_target)((int)(t) & 0xff))
#define ISA_IS_W64(t) (((int)(t) & ISA_WAVE64) || ISA_TARGET(t) != TA_TARGET_GFX1100)

/* Dense opcode ids: ISA_S_ADD_U32, ISA_V_ADD_F32, ISA_DS_READ_B32 (= gfx11
 * ds_load_b32), ISA_V_MFMA_F32_32X32X8_F16 (= gfx90a v_mfma_f32_32x32x8f16)... */
typedef enum {
#define ISA_OP(id, ...) ISA_##id,
#define ISA_ALIAS(...)
#define ISA_HWREG(...)
#define ISA_SENDMSG(...)
#include "isa_ops.def"
#undef ISA_OP
#undef ISA_ALIAS
#undef ISA_HWREG
#undef ISA_SENDMSG
	ISA_NUM_OPS
} IsaOp;

/* Encoding formats (per target family, see IsaOpInfo.fmt). */
typedef enum {
	ISA_FMT_NONE, ISA_FMT_SOP1, ISA_FMT_SOP2, ISA_FMT_SOPK, ISA_FMT_SOPC, ISA_FMT_SOPP,
	ISA_FMT_SMEM, ISA_FMT_VOP1, ISA_FMT_VOP2, ISA_FMT_VOPC, ISA_FMT_VOP3, ISA_FMT_VOP3P,
	ISA_FMT_MAI, ISA_FMT_VOPD, ISA_FMT_DS, ISA_FMT_GLOBAL, ISA_FMT_MUBUF, ISA_FMT_FLAT,
	ISA_FMT_SCRATCH,
} IsaFmt;

/* Per-op flags (IsaOpInfo.flags). */
enum {
	ISA_F_SALU = 1u << 0, ISA_F_VALU = 1u << 1, ISA_F_SMEM = 1u << 2, ISA_F_DS = 1u << 3,
	ISA_F_GLOBAL = 1u << 4, ISA_F_MUBUF = 1u << 5, ISA_F_MFMA = 1u << 6, ISA_F_WMMA = 1u << 7,
	ISA_F_LOAD = 1u << 8,   /* returns data to VGPRs/SGPRs */
	ISA_F_STORE = 1u << 9,  /* memory write without return */
	ISA_F_ATOMIC = 1u << 10, ISA_F_RTN = 1u << 11,
	ISA_F_WSCC = 1u << 12, ISA_F_RSCC = 1u << 13, ISA_F_WEXEC = 1u << 14, ISA_F_REXEC = 1u << 15,
	ISA_F_WVCC = 1u << 16, ISA_F_RVCC = 1u << 17, ISA_F_RM0 = 1u << 18,
	ISA_F_BRANCH = 1u << 19, ISA_F_ENDPGM = 1u << 20, ISA_F_WAIT = 1u << 21,
	ISA_F_TIED = 1u << 22,  /* destination is also read (fmac, writelane, s_addk) */
	ISA_F_NOE64 = 1u << 23, /* VOP1/VOP2 with no VOP3 form */
	ISA_F_OPSEL = 1u << 24, /* native 16-bit VOP3 op: op_sel:[src0,src1,src2,dst] allowed */
	ISA_F_CMPX = 1u << 25,  /* v_cmpx: gfx11 drops the lane-mask destination */
	ISA_F_DS2 = 1u << 26,   /* offset0:/offset1: instead of offset: */
	ISA_F_SWIZZLE = 1u << 27, ISA_F_VOPDY = 1u << 28,
	ISA_F_NOMODS = 1u << 29, /* no neg/abs/clamp/omod (integer results, fp8 conversions) */
	ISA_F_NODPP = 1u << 30,
	ISA_F_MIX = 1u << 31,     /* v_fma_mix*: op_sel_hi defaults to 0 */
};

/* Source operand types: how literals and float constants are read. */
typedef enum { ISA_TY_B32, ISA_TY_F32, ISA_TY_F16, ISA_TY_B16, ISA_TY_F64, ISA_TY_B64,
	       ISA_TY_PK16, ISA_TY_PKI16 } IsaType;

/* Operand roles in a signature (see tools/gen_isa.py for the token list). */
typedef enum {
	ISA_R_NONE, ISA_R_SD, ISA_R_SS, ISA_R_LM, ISA_R_VD, ISA_R_VS, ISA_R_VV, ISA_R_AVD,
	ISA_R_AVS, ISA_R_AD, ISA_R_AS, ISA_R_WD, ISA_R_WV, ISA_R_K16, ISA_R_I16, ISA_R_LBL,
	ISA_R_WAIT, ISA_R_DELAY, ISA_R_MSG, ISA_R_K32, ISA_R_SB, ISA_R_SOFF, ISA_R_DA, ISA_R_DD,
	ISA_R_FA, ISA_R_FS, ISA_R_MVA, ISA_R_RSRC, ISA_R_MSO, ISA_R_XA, ISA_R_XS,
	ISA_R_HWREG, /* s_getreg/s_setreg simm16: id [5:0], offset [10:6], size - 1 [15:11] */
	ISA_R_I32,   /* 32-bit literal integer (s_setreg_imm32_b32) */
} IsaRole;

#define ISA_MAX_SIG 6
typedef struct {
	const char *name[3]; /* canonical mnemonic on gfx90a, gfx942, gfx1100 (NULL: absent) */
	int16_t opc[3];      /* opcode on each (-1: absent) */
	uint8_t fmt[3];      /* IsaFmt on each */
	uint8_t type;        /* IsaType */
	uint8_t nsig;
	uint8_t e32;         /* bit per target: native VOP1/2/C printed with _e32 */
	uint8_t forms;       /* ISA_FORM_*: extra encodings the op has (generated from llvm-mc) */
	uint32_t flags;
	uint16_t sig[ISA_MAX_SIG]; /* role << 8 | register count */
} IsaOpInfo;

enum { ISA_FORM_XDPP = 1,   /* gfx11 VOP3 DPP (ISA_ENC_E64_DPP/_DPP8) */
       ISA_FORM_SDWA90A = 2, ISA_FORM_SDWA942 = 4 /* SDWA (ISA_ENC_SDWA) on gfx90a / gfx942 */ };

extern const IsaOpInfo isa_ops[ISA_NUM_OPS];
int isa_tidx(ta_target t); /* 0 gfx90a, 1 gfx942, 2 gfx1100, -1 other */
static inline int isa_op_exists(ta_target t, unsigned op)
{
	int i = isa_tidx(t);
	return op < ISA_NUM_OPS && i >= 0 && isa_ops[op].opc[i] >= 0;
}
const char *isa_op_name(ta_target t, unsigned op); /* canonical mnemonic or NULL */
/* Hardware register names of s_getreg/s_setreg (llvm-mc's, per target): NULL / -1 if none. */
const char *isa_hwreg_name(ta_target t, unsigned id);
int isa_hwreg_id(ta_target t, const char *name, size_t len);
/* s_sendmsg simm16: llvm-mc's symbolic text (ISA_SENDMSG lines) or NULL; the value of such a
 * text or -1; whether v is a value tileasm prints as llvm-mc does (symbolic or sendmsg(id, op,
 * stream) with the fields in range: gfx9 id [3:0] op [6:4] stream [9:8], gfx11 id [7:0]). */
const char *isa_sendmsg_text(ta_target t, unsigned v);
int isa_sendmsg_value(ta_target t, const char *text, size_t len);
int isa_sendmsg_ok(ta_target t, unsigned v);
IsaFmt isa_op_fmt(ta_target t, unsigned op);
/* The op's operand signature on t with target adjustments applied (gfx11
 * v_cmpx has no destination, wave64 lane masks are 2 SGPRs, WMMA C/D halve):
 * one `role << 8 | register count` per operand, at most ISA_MAX_SIG. */
int isa_sig(ta_target t, unsigned op, uint16_t *sig);
#define ISA_SIG_ROLE(s) ((s) >> 8)
#define ISA_SIG_CNT(s) ((s)&0xff)

/* ---- Instructions as values ---------------------------------------------- */

typedef enum {
	ISA_K_NONE,
	ISA_K_SGPR,    /* s[reg : reg+count-1]; reg ISA_TTMP_BASE.. are the trap temporaries ttmp0..15 */
	ISA_K_VGPR,
	ISA_K_AGPR,
	ISA_K_SPECIAL, /* reg = IsaSpecial; count 2 for vcc/exec pairs */
	ISA_K_CONST,   /* inline constant, reg = hardware code 128..208 / 240..248 */
	ISA_K_LIT,     /* 32-bit literal in imm */
	ISA_K_IMM,     /* plain immediate field (simm16, SMEM offset, K) in imm */
	ISA_K_LABEL,   /* branch target: sym (not owned) until resolved, then imm = dword offset */
	ISA_K_OFF,     /* the `off` keyword (no saddr / no vaddr) */
} IsaKind;

/* ttmpN is scalar code ISA_TTMP_BASE + N on gfx90a, gfx942 and gfx1100 (gfx8 had 112: not a target). */
enum { ISA_TTMP_BASE = 108, ISA_TTMP_NUM = 16 };

typedef enum {
	ISA_SP_VCC_LO, ISA_SP_VCC_HI, ISA_SP_EXEC_LO, ISA_SP_EXEC_HI, ISA_SP_M0, ISA_SP_NULL,
	ISA_SP_SCC, ISA_SP_VCCZ, ISA_SP_EXECZ, ISA_SP_FLAT_SCRATCH_LO, ISA_SP_FLAT_SCRATCH_HI,
	ISA_SP_NUM
} IsaSpecial;

typedef struct {
	uint8_t kind;   /* IsaKind */
	uint8_t count;  /* registers in the range */
	uint16_t reg;   /* first register / IsaSpecial / inline-constant code */
	int32_t imm;    /* LIT, IMM, resolved LABEL */
	const char *sym; /* LABEL name (not NUL-terminated), sym_len bytes */
	uint16_t sym_len;
} IsaOperand;

enum { ISA_CPOL_GLC = 1, ISA_CPOL_SLC = 2, ISA_CPOL_DLC = 4, ISA_CPOL_SC1 = 8,
       ISA_CPOL_SC0 = ISA_CPOL_GLC, ISA_CPOL_NT = ISA_CPOL_SLC }; /* gfx942 names */

/* _dpp is DPP16 on every target; ISA_ENC_DPP8 is gfx11's dpp8:[...] form (same mnemonic suffix).
 * ISA_ENC_E64_DPP / _E64_DPP8 are gfx11's VOP3 DPP forms (NAME_e64_dpp): the VOP3/VOP3P encoding,
 * or the VOP3 form of a VOP1/VOP2/VOPC op, with src0 replaced by a DPP16/DPP8 dword. */
typedef enum { ISA_ENC_DEFAULT, ISA_ENC_E64, ISA_ENC_DPP, ISA_ENC_DPP8, ISA_ENC_E64_DPP, ISA_ENC_E64_DPP8,
	       ISA_ENC_SDWA /* gfx9 VOP1/VOP2/VOPC _sdwa */ } IsaEnc;
#define ISA_ENC_IS_XDPP(e) ((e) == ISA_ENC_E64_DPP || (e) == ISA_ENC_E64_DPP8)
#define ISA_ENC_IS_DPP16(e) ((e) == ISA_ENC_DPP || (e) == ISA_ENC_E64_DPP)
#define ISA_ENC_IS_DPP8(e) ((e) == ISA_ENC_DPP8 || (e) == ISA_ENC_E64_DPP8)
#define ISA_SDWA_SEL(f) ((f) ? (f)-1 : 6)
#define ISA_SDWA_UNUSED(f) ((f) ? (f)-1 : 2)

typedef struct {
	uint8_t neg, abs;      /* bit i = source i; VOP3P: neg is neg_lo */
	uint8_t neg_hi, op_sel, op_sel_hi; /* VOP3P; op_sel also on 16-bit VOP3 (ISA_F_OPSEL), where
	                                      * bit 3 selects the destination half. op_sel_hi: isa_insn_init
	                                      * sets LLVM's default (7; 0 for v_fma_mix*) */
	uint8_t clamp, omod;   /* omod: 1 mul:2, 2 mul:4, 3 div:2 */
	uint8_t cpol;          /* ISA_CPOL_* */
	uint8_t offen, idxen, gds;
	int32_t offset;        /* DS / GLOBAL / MUBUF offset: */
	uint8_t offset0, offset1; /* ds_read2/ds_write2 */
	uint8_t cbsz, abid, blgp; /* MFMA */
	uint16_t dpp_ctrl;     /* ISA_ENC_DPP: quad_perm 0x00-0xff, row_shl 0x101.., ... */
	uint8_t row_mask, bank_mask, bound_ctrl, fi; /* fi: DPP16 and DPP8 (gfx11) */
	uint32_t dpp8;         /* ISA_ENC_DPP8: lane select i in bits 3i..3i+2 */
	/* ISA_ENC_SDWA selects, 0 = llvm-mc's default, else the field value + 1 (ISA_SDWA_SEL/UNUSED):
	 * sel BYTE_0..3 = 0..3, WORD_0/1 = 4/5, DWORD = 6; dst_unused UNUSED_PAD/SEXT/PRESERVE = 0/1/2. */
	uint8_t dst_sel, dst_unused, src_sel[2];
	uint8_t sext;          /* ISA_ENC_SDWA: bit i sign-extends source i (integer ops) */
} IsaMods;

#define ISA_MAX_OPS 8
typedef struct {
	uint16_t op;   /* IsaOp; for VOPD the X component */
	uint16_t op_y; /* VOPD Y component (ops[] holds X's operands, then Y's) */
	uint8_t enc;   /* IsaEnc (VOP1/VOP2/VOPC: _e32, _e64, _dpp; gfx11 VALU: _e64_dpp) */
	uint8_t nops;
	IsaOperand ops[ISA_MAX_OPS];
	IsaMods mod;
} IsaInsn;

/* Operand builders for codegen. */
static inline IsaOperand isa_sgpr(int r, int n) { return (IsaOperand){ISA_K_SGPR, (uint8_t)n, (uint16_t)r, 0, 0, 0}; }
static inline IsaOperand isa_vgpr(int r, int n) { return (IsaOperand){ISA_K_VGPR, (uint8_t)n, (uint16_t)r, 0, 0, 0}; }
static inline IsaOperand isa_agpr(int r, int n) { return (IsaOperand){ISA_K_AGPR, (uint8_t)n, (uint16_t)r, 0, 0, 0}; }
static inline IsaOperand isa_special(IsaSpecial s, int n) { return (IsaOperand){ISA_K_SPECIAL, (uint8_t)n, (uint16_t)s, 0, 0, 0}; }
static inline IsaOperand isa_imm(int32_t v) { return (IsaOperand){ISA_K_IMM, 1, 0, v, 0, 0}; }
static inline IsaOperand isa_off(void) { return (IsaOperand){ISA_K_OFF, 1, 0, 0, 0, 0}; }
/* An integer or 32-bit pattern as a source: inline constant when it fits, else literal. */
IsaOperand isa_const_u32(IsaType ty, uint32_t bits);

/* Starts an instruction with LLVM's default modifiers (op_sel_hi, row/bank masks). */
void isa_insn_init(IsaInsn *in, unsigned op);

/* ---- Encode / decode / print / parse ------------------------------------- */

/* Checks operands against the op's signature on t: NULL if fine, else a
 * message and the offending operand index in *bad (-1: the instruction). */
const char *isa_check(ta_target t, const IsaInsn *in, int *bad);
/* Encodes one instruction; returns its byte length (4..16) or -1 with an error in d. */
int isa_encode(ta_target t, const IsaInsn *in, uint8_t out[16], Diag *d);
/* Decodes one instruction from p[0..n); returns bytes consumed or -1 (unknown). */
int isa_decode(ta_target t, const uint8_t *p, size_t n, IsaInsn *out);
/* Appends LLVM AMDGPU syntax (no leading tab, no newline). */
void isa_print(ta_target t, const IsaInsn *in, StrBuf *sb);
/* gfx11 s_waitcnt_depctr fields (printer and parser). */
typedef struct {
	const char *name;
	int lo, width;
} IsaDepctrField;
extern const IsaDepctrField isa_depctr_fields[7];
/* Parses one instruction line (no label, no comment).  Positions in
 * diagnostics are pos plus the column of the offending token.  Returns 0 / -1. */
int isa_parse_insn(ta_target t, const char *text, IsaInsn *out, const SrcFile *src, SrcPos pos,
		   Diag *d);

/* ---- Queries for later passes -------------------------------------------- */

/* A register range an instruction touches.  file: 's' SGPR (numbered by the
 * hardware scalar code: vcc = 106, exec = 126, m0 = 124/125), 'v', 'a', or
 * 'c' for scc. */
typedef struct {
	char file;
	uint8_t write;
	uint16_t reg, count;
} IsaRegUse;
/* Fills up to max uses (reads and writes, implicit ones included); returns the count. */
int isa_reg_uses(ta_target t, const IsaInsn *in, IsaRegUse *out, int max);

enum { ISA_CNT_VM = 1, ISA_CNT_LGKM = 2, ISA_CNT_EXP = 4, ISA_CNT_VS = 8 };
/* Counters the instruction increments on target t (ISA_CNT_* bits). */
unsigned isa_counters(ta_target t, const IsaInsn *in);

/* s_waitcnt simm16 packing (fields at their maximum mean "don't wait"). */
uint16_t isa_waitcnt_encode(ta_target t, int vmcnt, int expcnt, int lgkmcnt);
void isa_waitcnt_decode(ta_target t, uint16_t v, int *vmcnt, int *expcnt, int *lgkmcnt);

/* ---- Text assembler (asm.c) ---------------------------------------------- */

typedef struct {
	char *name;
	VEC(uint8_t) data;
	int align; /* bytes, power of two (from .p2align/.align) */
} IsaSection;

enum { ISA_SYM_NOTYPE, ISA_SYM_FUNC, ISA_SYM_OBJECT };
enum { ISA_BIND_LOCAL, ISA_BIND_GLOBAL, ISA_BIND_WEAK };
enum { ISA_VIS_DEFAULT, ISA_VIS_HIDDEN, ISA_VIS_PROTECTED };
typedef struct {
	char *name;
	int section;    /* index into sections, -1 for .set constants / undefined */
	uint64_t value; /* offset in section, or the .set value */
	uint64_t size;  /* from .size (0 if none) */
	uint8_t type, binding, defined, vis; /* ISA_SYM_*, ISA_BIND_*, ISA_VIS_* */
} IsaSymbol;

/* Hook for directives the assembler does not know (.amdhsa_kernel,
 * .amdgcn_target, .amdgpu_metadata...).  Called with the whole trimmed line;
 * returns 1 handled, 0 unknown (the assembler then reports "unknown
 * directive"), -1 error (the hook already reported it through its own Diag).
 * Setting *raw_mode = 1 makes the assembler pass every following line
 * verbatim (untrimmed, no comment stripping) to the hook until the hook sets
 * it back to 0, e.g. for a YAML block up to .end_amdgpu_metadata. */
typedef int (*IsaDirectiveHook)(void *user, const char *line, SrcPos pos, int *raw_mode);

typedef struct {
	VEC(IsaSection) sections;
	VEC(IsaSymbol) symbols;
	size_t ninsns; /* instructions assembled */
} IsaAsmOut;

typedef struct {
	ta_target target;        /* may carry ISA_WAVE64 */
	IsaDirectiveHook directive; /* may be NULL */
	void *user;
	StrBuf *listing;         /* if set: "\t<insn>\t; encoding: [..]\n" per instruction, like llvm-mc -show-encoding */
} IsaAsmOptions;

/* Assembles a whole file.  Returns 0, or -1 with errors in d (out still must
 * be freed).  Sections start with ".text" (created on first use). */
int isa_assemble(const IsaAsmOptions *opt, const SrcFile *src, IsaAsmOut *out, Diag *d);
void isa_asm_free(IsaAsmOut *out);
int isa_asm_find_symbol(const IsaAsmOut *out, const char *name);  /* index or -1 */
int isa_asm_find_section(const IsaAsmOut *out, const char *name); /* index or -1 */

/* llvm-mc -show-encoding line for an instruction: "\t<text><pad>; encoding: [0x..,..]\n". */
void isa_format_encoding_line(const char *text, const uint8_t *bytes, int n, StrBuf *sb);

#endif
