/* regs.c — what an instruction reads and writes, and which wait counters it
 * bumps: the queries the waitcnt pass, the emulator and descriptor register
 * counting need. */
#include "isa.h"
#include "isa_impl.h"

typedef struct {
	IsaRegUse *out;
	int n, max;
} Uses;

static void add(Uses *u, char file, int write, int reg, int count)
{
	if (u->n < u->max)
		u->out[u->n] = (IsaRegUse){file, (uint8_t)write, (uint16_t)reg, (uint16_t)count};
	u->n++;
}

static void add_operand(ta_target t, Uses *u, const IsaOperand *o, int write)
{
	switch (o->kind) {
	case ISA_K_SGPR: add(u, 's', write, o->reg, o->count); break;
	case ISA_K_VGPR: add(u, 'v', write, o->reg, o->count); break;
	case ISA_K_AGPR: add(u, 'a', write, o->reg, o->count); break;
	case ISA_K_SPECIAL: {
		if (o->reg == ISA_SP_SCC) {
			add(u, 'c', write, 0, 1);
			break;
		}
		int code = isa_special_code(t, (IsaSpecial)o->reg);
		if (code >= 0 && code < 128 && o->reg != ISA_SP_NULL)
			add(u, 's', write, code, o->count);
		break;
	}
	default: break;
	}
}

static int is_dst(unsigned role, int i, IsaFmt fmt, uint32_t flags)
{
	if (i == 0 && (role == ISA_R_VD || role == ISA_R_SD || role == ISA_R_AVD || role == ISA_R_AD ||
		       role == ISA_R_WD))
		return fmt != ISA_FMT_SOPK || !(flags & ISA_F_WAIT);
	if (role == ISA_R_LM && (i == 0 || (i == 1 && fmt != ISA_FMT_VOPC)))
		return 1;
	if (role == ISA_R_VD) /* memory return data */
		return 1;
	return 0;
}

static void uses_of(ta_target t, unsigned op, const IsaOperand *ops, Uses *u)
{
	const IsaOpInfo *oi = &isa_ops[op];
	IsaFmt fmt = isa_op_fmt(t, op);
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(t, op, sig);
	for (int i = 0; i < n; i++) {
		unsigned r = SIG_ROLE(sig[i]);
		int w = is_dst(r, i, fmt, oi->flags);
		if (fmt == ISA_FMT_VOP1 && (oi->flags & ISA_F_NOE64) && oi->nsig == 2 &&
		    SIG_ROLE(oi->sig[0]) == ISA_R_VD && SIG_ROLE(oi->sig[1]) == ISA_R_VD)
			w = 1; /* v_swap_b32 writes both */
		add_operand(t, u, &ops[i], w);
		if (w && i == 0 && (oi->flags & ISA_F_TIED))
			add_operand(t, u, &ops[i], 0);
	}
	int w64 = ISA_IS_W64(t);
	if (oi->flags & ISA_F_WSCC)
		add(u, 'c', 1, 0, 1);
	if (oi->flags & ISA_F_RSCC)
		add(u, 'c', 0, 0, 1);
	if (oi->flags & ISA_F_REXEC)
		add(u, 's', 0, 126, w64 ? 2 : 1);
	if (oi->flags & ISA_F_WEXEC)
		add(u, 's', 1, 126, w64 ? 2 : 1);
	if (oi->flags & ISA_F_RM0)
		add(u, 's', 0, isa_special_code(t, ISA_SP_M0), 1);
	if ((oi->flags & ISA_F_RVCC) && fmt == ISA_FMT_SOPP)
		add(u, 's', 0, 106, w64 ? 2 : 1);
	if (oi->flags & ISA_F_VALU)
		add(u, 's', 0, 126, w64 ? 2 : 1); /* every VALU op reads exec */
}

int isa_reg_uses(ta_target t, const IsaInsn *in, IsaRegUse *out, int max)
{
	Uses u = {out, 0, max};
	if (!isa_op_exists(t, in->op))
		return 0;
	uses_of(t, in->op, in->ops, &u);
	if (isa_op_fmt(t, in->op) == ISA_FMT_VOPD) {
		uint16_t sig[ISA_MAX_SIG];
		int nx = isa_sig(t, in->op, sig);
		uses_of(t, in->op_y, in->ops + nx, &u);
	}
	return u.n;
}

unsigned isa_counters(ta_target t, const IsaInsn *in)
{
	if (!isa_op_exists(t, in->op))
		return 0;
	uint32_t f = isa_ops[in->op].flags;
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100;
	if (f & (ISA_F_SMEM | ISA_F_DS))
		return ISA_CNT_LGKM;
	if (f & ISA_F_RM0) /* s_sendmsg */
		return ISA_CNT_LGKM;
	if (f & (ISA_F_GLOBAL | ISA_F_MUBUF)) {
		/* FLAT may touch LDS as well, so it also counts in lgkmcnt */
		unsigned flat = isa_op_fmt(t, in->op) == ISA_FMT_FLAT ? ISA_CNT_LGKM : 0;
		if (f & ISA_F_LOAD)
			return ISA_CNT_VM | flat;
		return (g11 ? ISA_CNT_VS : ISA_CNT_VM) | flat;
	}
	return 0;
}
