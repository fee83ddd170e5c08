/* amd_hazard.c — wait states the hardware does not provide by itself.
 *
 * Only hazards the code generator can currently produce are handled
 * (/work/shared/notes/amd-isa.md §9):
 *   gfx90a/gfx942: a VMEM store of more than 8 bytes followed by a VALU
 *           that overwrites its data (s_nop 1 after such stores);
 *   gfx942: a transcendental result used by the next VALU needs one wait
 *           state (s_nop 0 after every transcendental);
 *   gfx1100: VALU use of a transcendental result (VALUTransUseHazard):
 *           s_delay_alu instid0(TRANS32_DEP_1) before the next instruction
 *           makes it wait for the result.
 * MFMA/WMMA, DPP, lane-select and VALU-SGPR->VMEM hazards cannot arise yet
 * (no such instructions/patterns are generated); see docs/amd-backend.md. */
#include "amd.h"

static bool is_trans(unsigned op)
{
	switch (op) {
	case ISA_V_EXP_F32: case ISA_V_LOG_F32: case ISA_V_RCP_F32: case ISA_V_RSQ_F32: case ISA_V_SQRT_F32:
	case ISA_V_SIN_F32: case ISA_V_COS_F32: case ISA_V_RCP_IFLAG_F32:
	case ISA_V_EXP_F16: case ISA_V_LOG_F16: case ISA_V_RCP_F16: case ISA_V_SQRT_F16: case ISA_V_RSQ_F16:
		return true;
	}
	return false;
}

int amd_hazard(MFunc *mf, Diag *d)
{
	ta_target t = ISA_TARGET(mf->target);
	MInstVec out = {0};
	for (size_t b = 0; b < mf->blocks.len; b++) {
		MBlock *bl = &mf->blocks.data[b];
		int first = (int)out.len;
		for (int i = bl->first; i < bl->last; i++) {
			if (vec_push(&out, mf->insns.data[i]))
				goto oom;
			const IsaInsn *cur = &mf->insns.data[i].in;
			MInst w;
			memset(&w, 0, sizeof w);
			if (t == TA_TARGET_GFX942 || t == TA_TARGET_GFX90A) {
				/* VMEM store of more than 8 bytes: the next VALU must not
				 * overwrite its data yet (1 wait state on gfx90a, 2 on
				 * gfx940+); s_nop 1 covers both. */
				uint32_t fl = cur->op < ISA_NUM_OPS ? isa_ops[cur->op].flags : 0;
				if ((fl & (ISA_F_GLOBAL | ISA_F_MUBUF)) && (fl & ISA_F_STORE) && cur->nops > 1 &&
				    cur->ops[1].count > 2) {
					isa_insn_init(&w.in, ISA_S_NOP);
					w.in.nops = 1;
					w.in.ops[0] = isa_imm(1);
					if (vec_push(&out, w))
						goto oom;
				}
			}
			if (!is_trans(cur->op))
				continue;
			if (t == TA_TARGET_GFX90A)
				continue;
			if (t == TA_TARGET_GFX942) {
				isa_insn_init(&w.in, ISA_S_NOP);
				w.in.nops = 1;
				w.in.ops[0] = isa_imm(0);
			} else {
				isa_insn_init(&w.in, ISA_S_DELAY_ALU);
				w.in.nops = 1;
				w.in.ops[0] = isa_imm(5); /* instid0(TRANS32_DEP_1) */
			}
			if (vec_push(&out, w))
				goto oom;
		}
		bl->first = first;
		bl->last = (int)out.len;
	}
	vec_free(&mf->insns);
	mf->insns = out;
	return 0;
oom:
	vec_free(&out);
	diag_error(d, "out of memory in hazard pass");
	return -1;
}
