/* mir_verify.c — mir_verify: the structural invariants of mir.h checked
 * between the AMD passes (debug builds, AmdOutput.verify).  A pass that
 * breaks one fails at the pass, not in a later one or in the hardware.
 * The allocation itself has its own checker (regalloc/validate.c). */
#include "mir.h"

int mir_verify(const MFunc *f, bool phys, StrBuf *err)
{
	StrBuf dummy = {0};
	if (!err)
		err = &dummy;
	int nb = (int)f->blocks.len, nv = (int)f->vregs.len;
	int32_t ni = (int32_t)f->insns.len;
	int32_t end = 0;
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		if (bl->first != end || bl->last < bl->first || bl->last > ni) {
			sb_printf(err, "block %d covers [%d, %d), expected to start at %d (of %d instructions)", b,
				  bl->first, bl->last, end, ni);
			goto bad;
		}
		end = bl->last;
		for (int s = 0; s < 3; s++)
			if (bl->succ[s] < -1 || bl->succ[s] >= nb) {
				sb_printf(err, "block %d: successor %d is not a block", b, bl->succ[s]);
				goto bad;
			}
	}
	if (end != ni) {
		sb_printf(err, "the blocks cover %d of %d instructions", end, ni);
		goto bad;
	}
	for (int32_t i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		unsigned op = mi->in.op, nops = mi->in.nops;
		if (op >= MOP_END || (phys && op >= MOP_BASE)) {
			sb_printf(err, "instruction %d: %s op %u", i, op >= MOP_END ? "unknown" : "pseudo", op);
			goto bad;
		}
		if (nops > ISA_MAX_OPS || mi->ndef > nops || (mi->vmask >> nops)) {
			sb_printf(err, "instruction %d: %u operands, ndef %u, vmask 0x%x", i, nops, mi->ndef, mi->vmask);
			goto bad;
		}
		if (phys && mi->vmask) {
			sb_printf(err, "instruction %d: virtual operands (0x%x) after register allocation", i, mi->vmask);
			goto bad;
		}
		for (unsigned k = 0; k < nops; k++) {
			const IsaOperand *o = &mi->in.ops[k];
			if (o->kind == ISA_K_LABEL && (o->imm < 0 || o->imm >= nb)) {
				sb_printf(err, "instruction %d: branch target %d is not a block", i, o->imm);
				goto bad;
			}
			if (!((mi->vmask >> k) & 1))
				continue;
			int v = mi->vr[k];
			if (v < 0 || v >= nv) {
				sb_printf(err, "instruction %d operand %u: vreg %d out of range (%d vregs)", i, k, v, nv);
				goto bad;
			}
			const MVreg *mv = &f->vregs.data[v];
			if (mir_kind_cls(o->kind) != mv->cls) {
				sb_printf(err, "instruction %d operand %u: vreg %d of file %d named as operand kind %d", i,
					  k, v, mv->cls, o->kind);
				goto bad;
			}
			if (o->count < 1 || mi->sub[k] + o->count > mv->size) {
				sb_printf(err, "instruction %d operand %u: dwords [%u, %u) of vreg %d (%u dwords)", i, k,
					  mi->sub[k], mi->sub[k] + o->count, v, mv->size);
				goto bad;
			}
		}
	}
	sb_free(&dummy);
	return 0;
bad:
	sb_free(&dummy);
	return -1;
}
