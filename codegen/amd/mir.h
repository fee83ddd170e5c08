/* mir.h — AMD machine IR: IsaInsn instructions whose register operands may
 * name virtual registers, grouped into blocks, for one kernel.
 *
 * An MInst wraps an IsaInsn.  Operand i is virtual when bit i of `vmask` is
 * set: it then reads or writes dwords [sub[i], sub[i] + ops[i].count) of
 * vreg vr[i], and ops[i].kind says the file (ISA_K_SGPR/VGPR/AGPR).  Other
 * operands are physical (exec, vcc, m0, the kernel's input registers),
 * constants, immediates or labels, exactly as isa_encode takes them.
 * Operands [0, ndef) are written, the rest read (AMD syntax puts
 * destinations first; a tied operand such as v_fmac's is both: MI_TIED).
 *
 * Pseudo instructions use op numbers from MOP_BASE up:
 *   MOP_COPY   ops[0] = ops[1] (same file or S->V; ndef 1)
 *   MOP_PCOPY  parallel copy: ops[0..n/2) = ops[n/2..n) simultaneously
 *              (ndef = n/2); used at kernel entry to move the input
 *              registers into vregs, resolved by regalloc/pcopy.c.
 *   MOP_LABEL  ops[0].imm = block id; marks nothing, only a debug aid.
 *   MOP_UNDEF  ops[0] (ndef 1) gets an undefined value: a definition for
 *              liveness and the allocator, no code (regalloc/undef.c).
 * After register allocation (ra_rewrite) no operand is virtual and only
 * real ISA ops remain.
 *
 * Blocks are in layout order; each lists up to 3 successors used by
 * liveness, the validator and waitcnt dataflow.  Branch operands
 * (ISA_K_LABEL) hold a block id in imm until amd_emit resolves them. */
#ifndef TILEASM_MIR_H
#define TILEASM_MIR_H

#include <stdbool.h>
#include <stdint.h>

#include "isa.h"
#include "util.h"

enum { MR_S, MR_V, MR_A, MR_NCLASS }; /* register files */

typedef struct {
	uint8_t cls;   /* MR_* */
	uint8_t size;  /* dwords */
	uint8_t align; /* first register must be a multiple of this (1, 2 or 4) */
	int16_t hint;  /* preferred physical register, or -1 */
} MVreg;

enum { MOP_BASE = ISA_NUM_OPS, MOP_COPY = MOP_BASE, MOP_PCOPY, MOP_LABEL, MOP_UNDEF, MOP_END };

enum {
	MI_TIED = 1,     /* operand 0 is also read (v_fmac, s_addk, v_cndmask merges) */
	MI_EARLY = 2,    /* definitions must not share registers with the operands read */
	MI_PARTIAL = 4,  /* written under a partial exec mask: inactive lanes keep old value */
	MI_DEFALL = 8,   /* operand 0 writes part of its vreg but starts a new value of all of it
	                  * (the rest is written by the next instructions): a kill for liveness */
};

typedef struct {
	IsaInsn in;
	uint8_t ndef;
	uint8_t vmask;
	uint8_t flags; /* MI_* */
	uint8_t sub[ISA_MAX_OPS];
	int32_t vr[ISA_MAX_OPS];
} MInst;

typedef VEC(MInst) MInstVec;

typedef struct {
	int32_t first, last; /* instruction range [first, last) in MFunc.insns */
	int32_t succ[3];     /* block ids, -1 = none: fallthrough, branch target, and
	                      * the label where lanes parked by a divergent branch resume */
} MBlock;

typedef struct {
	ta_target target;     /* ISA target (may carry ISA_WAVE64) */
	VEC(MVreg) vregs;
	MInstVec insns;
	VEC(MBlock) blocks;
	MInstVec spare;       /* no content: the array the last rebuilding pass left
	                       * behind, recycled by the next (mir_spare) */
	int16_t long_branch_sgpr; /* even SGPR of a pair kept free for branches beyond
	                           * the SOPP range (amd_emit), -1: none (ra_run sets it) */
} MFunc;

void mir_init(MFunc *f, ta_target t);
void mir_free(MFunc *f);
/* New vreg; returns its id or -1 on allocation failure. */
int mir_vreg(MFunc *f, int cls, int size);
/* Starts a new block at the current end of insns; returns its id or -1.
 * The previous block is closed. */
int mir_block(MFunc *f);
/* Appends an instruction (closes the current block's range).  Returns a
 * pointer valid until the next append, or NULL on allocation failure. */
MInst *mir_emit(MFunc *f, unsigned op, int ndef);

/* Passes that rebuild the instruction stream (register allocation, the
 * rewrite, waitcnt) write it into the array the previous one left behind
 * instead of a fresh allocation: its pages are already mapped, where a new
 * half-megabyte array costs a page fault per 4 KiB.  mir_spare returns it
 * emptied (f->spare is then empty); give it back with mir_set_insns (it
 * becomes f->insns, the old stream the spare) or mir_put_spare (unused). */
MInstVec mir_spare(MFunc *f);
void mir_set_insns(MFunc *f, MInstVec *v);
void mir_put_spare(MFunc *f, MInstVec *v);
/* A worklist of block ids as a min-heap in h (room for every block; *n
 * entries): the lowest id first keeps dataflow sweeps close to layout
 * order.  Used by waitcnt and the allocation validator. */
void mir_work_push(int *h, int *n, int b);
int mir_work_pop(int *h, int *n);

/* Operand setters on an MInst (operand index i). */
void mi_vreg(MInst *mi, int i, const MFunc *f, int vreg, int sub, int count);
void mi_phys(MInst *mi, int i, IsaOperand o);

/* Register file of an ISA_K_* kind (-1 if not a register). */
static inline int mir_kind_cls(int kind)
{
	return kind == ISA_K_SGPR ? MR_S : kind == ISA_K_VGPR ? MR_V : kind == ISA_K_AGPR ? MR_A : -1;
}
static inline int mir_cls_kind(int cls)
{
	return cls == MR_S ? ISA_K_SGPR : cls == MR_V ? ISA_K_VGPR : ISA_K_AGPR;
}
static inline bool mi_is_def(const MInst *mi, int i)
{
	return i < mi->ndef;
}
static inline bool mi_is_use(const MInst *mi, int i)
{
	return i >= mi->ndef || (i == 0 && (mi->flags & (MI_TIED | MI_PARTIAL)));
}

/* Readable dump: one instruction per line, vregs as %s3 / %v7[0:1]. */
void mir_print(const MFunc *f, StrBuf *sb);
void mir_print_insn(const MFunc *f, const MInst *mi, StrBuf *sb);

/* ---- mir_verify.c ------------------------------------------------------- */

/* Checks f's structure: block ranges cover the instructions in order,
 * successors and branch targets name blocks, every virtual operand names a
 * vreg of its operand's file with its dwords inside the vreg, ndef and vmask
 * fit the operand count.  With phys set (after ra_rewrite) no operand may be
 * virtual and no pseudo instruction remain.  Returns 0, or -1 with the first
 * problem in err (may be NULL).  O(instructions + blocks). */
int mir_verify(const MFunc *f, bool phys, StrBuf *err);

#endif
