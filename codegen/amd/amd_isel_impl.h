/* amd_isel_impl.h — private to amd_isel*.c: what its parts share (split from amd_isel.c). */
/* SIMT IR -> AMD machine IR (virtual registers).
 *
 * Values.  A SIMT register is uniform (same in every lane of the block) when
 * every definition is an integer/predicate/move operation of uniform
 * operands, unguarded, and outside code that only some lanes run; uniform
 * values live in SGPRs and use SALU, the rest in VGPRs with VALU.  Float
 * arithmetic is always VALU.  Predicates are lane masks in SGPRs (1 dword in
 * wave32, 2 in wave64) whatever their uniformity; a uniform comparison is
 * s_cmp + s_cselect of all-ones/zero.
 *
 * Control flow.  Every SIMT label is a reconvergence point with a "parked
 * lanes" mask W[L] (an SGPR lane mask).  A forward branch to L, divergent or
 * not, moves the lanes that take it from exec into W[L]; if exec becomes
 * empty it jumps to the next label in layout order.  At a label,
 * exec |= W[L]; if exec is still empty, jump to the next label.  A run of
 * labels with no code between them shares one mask, restored at its last
 * label; a uniform or unconditional branch that no parked lanes wait
 * behind is s_cbranch_scc / s_branch, and a label only those reach has no
 * mask (plan_parks in amd_isel_cf.c).  Loop back
 * edges (unconditional backward branches) are plain s_branch.  This is
 * correct for any forward control flow and for loops whose exits are
 * forward branches, which is what the lowering produces; a conditional
 * backward branch is rejected.  Guarded non-branch instructions run under
 * s_and_saveexec / restore.
 *
 * The CFG given to liveness has, besides the machine edges, an edge from a
 * branch to the label where its parked lanes resume, so values those lanes
 * need stay allocated across the code they skip. */
#ifndef TILEASM_AMD_ISEL_IMPL_H
#define TILEASM_AMD_ISEL_IMPL_H

#include "amd.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>


typedef struct {
	uint8_t kind;  /* VK_REG or VK_CONST */
	uint8_t count; /* dwords */
	uint8_t sub;
	int32_t vreg;
	uint32_t bits;
} Val;
enum { VK_REG, VK_CONST };

typedef struct {
	const SimtFunc *sf;
	const Target *t;
	const AmdAbi *abi;
	MFunc *mf;
	Diag *d;
	ta_target it; /* ISA target */
	int w64, lm;  /* wave64?  lane-mask dwords */
	int gfx11;
	int32_t *vr;      /* SIMT reg -> MIR vreg */
	uint8_t *vsub;    /* SIMT reg -> first dword in that vreg (MMA operand tuples) */
	uint8_t *tfirst;  /* SIMT reg's one definition starts a new value of its whole tuple */
	int32_t *def1;    /* SIMT reg -> index of its (last) defining SIMT instruction */
	uint8_t *use;     /* SIMT reg: bit 0 read, bit 1 read other than as a 16-bit store's value */
	uint8_t *uni;     /* SIMT reg is uniform */
	uint8_t *isconst; /* SIMT reg has one def, a constant */
	int64_t *cval;
	int32_t *ndefs;
	int32_t *label_block; /* SIMT label -> MIR block, -1 until placed */
	int32_t *park;        /* SIMT label -> parked-lanes mask vreg (shared by a run of labels), -1 if none parks there */
	int32_t *next_label;  /* SIMT insn -> next label id after it (nlabels = end); -1 at a scalar branch */
	int32_t *init_at;     /* SIMT insn -> label whose park mask is zeroed before it (chain) */
	int32_t *init_next;
	int32_t *label_pos;   /* SIMT label -> SIMT insn index */
	int32_t *first_src;   /* SIMT label -> position of the first branch that parks lanes for its run (n: none) */
	int32_t *init_pos;    /* park label -> SIMT insn before which its mask is zeroed */
	int32_t *skip_label;  /* SIMT insn -> where a wave whose exec became empty there goes: the next label with a mask */
	int32_t *seg_zeroed;  /* label N -> 1 + the stretch (nseg) whose exec-empty jump to N zeroed the skipped masks */
	int32_t *zmax;        /* max tree over SIMT positions (2(n+1)) + scratch (n+1): see zero_skipped_parks */
	int nseg;             /* labels selected so far: numbers the label-free stretches */
	int nlabels;          /* SIMT labels + 1 (the end label) */
	int32_t vgpr_in, tid, lane4; /* entry VGPR v0 copy, thread id, lane*4 */
	int32_t kernarg, wgid[3];
	int err;
	MInst dummy; /* returned after an allocation failure, so callers need no checks */
} Isel;

/* SI_LD with c >= 0: a 16-bit load into the high half of its destination,
 * the low half (of c, the same register in the gemm fragments) kept:
 * ds_read_u16_d16_hi.  It modifies its destination rather than defining it. */
static inline bool hi_merge(const SInst *in)
{
	return in->op == SI_LD && in->c >= 0;
}

static inline const char *tname(const Isel *s)
{
	return target_name(ISA_TARGET(s->it));
}

static inline void unsupported(Isel *s, const char *what)
{
	if (!s->err)
		diag_error(s->d, "%s is not supported yet on %s (kernel '%s')", what, tname(s), s->sf->name);
	s->err = 1;
}

static inline MInst *emit(Isel *s, unsigned op, int ndef)
{
	if (op < ISA_NUM_OPS && !isa_op_exists(s->it, op)) {
		char buf[96];
		snprintf(buf, sizeof buf, "instruction %s", isa_ops[op].name[0] ? isa_ops[op].name[0]
										  : isa_ops[op].name[2]);
		unsupported(s, buf);
	}
	MInst *mi = mir_emit(s->mf, op, ndef);
	if (!mi) {
		if (!s->err)
			diag_error(s->d, "out of memory");
		s->err = 1;
		memset(&s->dummy, 0, sizeof s->dummy);
		return &s->dummy;
	}
	return mi;
}

static inline int newv(Isel *s, int cls, int size)
{
	int v = mir_vreg(s->mf, cls, size);
	if (v < 0)
		s->err = 1;
	return v < 0 ? 0 : v;
}

static inline Val reg(int v, int sub, int count)
{
	return (Val){VK_REG, (uint8_t)count, (uint8_t)sub, v, 0};
}
static inline Val cst(uint32_t bits)
{
	return (Val){VK_CONST, 1, 0, -1, bits};
}

static inline int vcls(const Isel *s, Val v)
{
	return v.kind == VK_REG ? s->mf->vregs.data[v.vreg].cls : -1;
}

static inline void put(Isel *s, MInst *mi, int i, Val v, IsaType ty)
{
	if (v.kind == VK_REG)
		mi_vreg(mi, i, s->mf, v.vreg, v.sub, v.count);
	else
		mi_phys(mi, i, isa_const_u32(ty, v.bits));
	(void)s;
}

static inline int is_inline(IsaType ty, uint32_t bits)
{
	IsaOperand o = isa_const_u32(ty, bits);
	return o.kind == ISA_K_CONST;
}

static inline IsaType optype(unsigned op)
{
	return (IsaType)isa_ops[op].type;
}


typedef struct {
	int mbits, bias;
	uint32_t maxf; /* f32 bits of the largest finite value */
} Fp8Fmt;

Val to_vgpr(Isel *s, Val v);
Val to_sgpr_const(Isel *s, uint32_t bits);
MInst *valu(Isel *s, unsigned op, int ndef, const Val *defs, int nsrc, Val *src);
MInst *valu1(Isel *s, unsigned op, Val d, Val a);
MInst *valu2(Isel *s, unsigned op, Val d, Val a, Val b);
MInst *valu3(Isel *s, unsigned op, Val d, Val a, Val b, Val c);
MInst *salu(Isel *s, unsigned op, int ndef, const Val *defs, int nsrc, Val *src);
MInst *salu2(Isel *s, unsigned op, Val d, Val a, Val b);
MInst *salu1(Isel *s, unsigned op, Val d, Val a);
unsigned lmop(const Isel *s, unsigned op32, unsigned op64);
IsaOperand exec_op(const Isel *s);
int simt_size(const Isel *s, int r);
Val opnd(Isel *s, int r, int k);
Val opnd_all(Isel *s, int r);
Val dst_of(Isel *s, int r, int k, int count);
bool is_tuple(const Isel *s, int r, int n);
bool salu_capable(const Isel *s, const SInst *in);
int dst_count(const SInst *in);
void analyze(Isel *s);
void scc_to_mask(Isel *s, int mask_vreg);
void mask_to_scc(Isel *s, Val m);
void sel_setp(Isel *s, const SInst *in);
void sel_add64(Isel *s, Val d, Val a, Val b, bool sub, bool uni);
Val vtmp(Isel *s);
void sel_minmax64(Isel *s, Val d, Val a, Val b, bool max);
void sel_arith(Isel *s, const SInst *in);
void sel_fdiv64(Isel *s, Val d, Val a, Val b);
void sel_math64(Isel *s, const SInst *in);
void sel_divrem64(Isel *s, const SInst *in);
void sel_ld(Isel *s, const SInst *in);
void sel_st(Isel *s, const SInst *in);
void sel_cas(Isel *s, const SInst *in);
void scan_uses(Isel *s);
Fp8Fmt fp8_fmt(int t);
void fp8_unpack(Isel *s, int t, Val d, Val a);
void fp8_pack(Isel *s, int t, Val d, Val a);
void sel_small_pack(Isel *s, int t, Val d, Val a, bool low_only);
bool sel_unpack_half(Isel *s, const SInst *in, Val d);
void sel_small_unpack(Isel *s, int t, Val d, Val a);
void acc_move(Isel *s, Val d, Val a);
void copy_val(Isel *s, Val d, Val a, bool uni);
void sel_cvt(Isel *s, const SInst *in);
void sel_shfl(Isel *s, const SInst *in);
void sel_shfl_lane(Isel *s, const SInst *in);
void sel_mma(Isel *s, const SInst *in);
void sel_mma_amd(Isel *s, const SInst *in);
void group_mma_tuples(Isel *s);
void group_mem_tuples(Isel *s);
bool zext16(const Isel *s, int r);
bool f16_packed(const Isel *s, int r);
bool sel_pack2_fp8(Isel *s, const SInst *in);
void start_block(Isel *s);
void set_succ_label(Isel *s, int k, int label);
MInst *branch_to(Isel *s, unsigned op, int label);
void sel_fwd_branch(Isel *s, int i, int L, Val p, bool neg, bool all);
bool scalar_branch_ok(const Isel *s, int i, int L);
int first_edge_after(const int32_t *be_j, int nbe, int i);
void plan_parks(Isel *s, const int32_t *be_j, const int32_t *be_h, int nbe);
void sel_scalar_branch(Isel *s, int i, int L, Val p, bool neg);
void sel_label(Isel *s, int L);
void zero_parks(Isel *s, int i);

#endif
