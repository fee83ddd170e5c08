/* emu_exec_impl.h — private to emu_exec.c, emu_operands.c, emu_valu.c, emu_salu.c, emu_mem.c: what its parts share (split from emu_exec.c). */
/* what each instruction does.  emu_step checks the operands an
 * instruction reads (results still in flight, never-written lanes, gfx9
 * wait-state hazards), runs it, and marks what it wrote.
 *
 * VALU instructions fetch every source into a lane array first (SGPRs,
 * inline constants and literals broadcast; DPP permutes src0; VOP3 neg/abs
 * applied for float types), compute into a result array, then write the
 * lanes enabled by exec (and DPP's row/bank masks).  Float arithmetic is the
 * host's IEEE single/double with round-to-nearest-even; f16 goes through
 * double with one rounding (exact for add/sub/mul).  Assumptions are listed
 * in docs/emulator.md. */
#ifndef TILEASM_EMU_EXEC_IMPL_H
#define TILEASM_EMU_EXEC_IMPL_H

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "dtype.h"
#include "emu_impl.h"


void emu_pending_read(EmuDevice *dev, EmuWave *w, int insn, int file, int r);


enum { RD = 1, WR = 2 };

typedef struct {
	uint32_t v[2][64]; /* word 0 / word 1 per lane */
} Src;

int special_sreg(int sp);
int operand_access(const EmuDevice *dev, const IsaInsn *in, uint8_t acc[ISA_MAX_OPS]);
int check_reads(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, const uint8_t *acc);
uint32_t scalar_val(EmuWave *w, const IsaOperand *o, int ty, int hi);
static inline int is_float_ty(int ty) { return ty == ISA_TY_F32 || ty == ISA_TY_F16 || ty == ISA_TY_F64; }
int dpp_src(const EmuDevice *dev, int ctrl, int l, int lanes);
void fetch(EmuDevice *dev, EmuWave *w, const IsaOperand *o, int ty, int words, Src *s);
float ftz(const EmuDevice *dev, float x);
static inline double h2d(uint32_t h) { return dt_f16_to_double((uint16_t)h); }
static inline uint32_t d2h(double d) { return dt_f16_from_double(d); }
uint32_t f2h_rtz(float f);
void build_cmp(void);
static inline int32_t sext(uint32_t v, int bits) { return (int32_t)(v << (32 - bits)) >> (32 - bits); }
static inline uint32_t clz32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 0xffffffffu; }
int exec_valu(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, const uint8_t *acc);
int exec_salu(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in);
int exec_smem(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in);
int exec_vmem(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in);
int exec_ds(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in);

#endif
