/* emu_exec.c — one step (part of the emulator's instruction semantics). */
#include "emu_exec_impl.h"

/* ---- one step ----------------------------------------------------------- */

int emu_step(EmuDevice *dev, EmuWave *w)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, build_cmp);
	EmuKernel *k = dev->k;
	int i = w->pc;
	if (i < 0 || i >= k->ninsn) {
		emu_fail(dev, w, -1, "execution ran past the end of the kernel's code (missing s_endpgm?)");
		return -1;
	}
	const IsaInsn *in = &k->insn[i];
	if (in->op >= ISA_NUM_OPS) {
		emu_fail(dev, w, -1, "+0x%x: cannot decode the instruction here", k->off[i]);
		return -1;
	}
	w->executed++;
	dev->stats.insns++;
	w->pc = i + 1;
	uint8_t acc[ISA_MAX_OPS];
	operand_access(dev, in, acc);
	if (check_reads(dev, w, i, in, acc))
		return -1;
	uint32_t fl = isa_ops[in->op].flags;
	int rc;
	if (dev->prof_on)
		emu_prof_pre(dev, w, i, in);
	if (fl & ISA_F_SALU)
		rc = exec_salu(dev, w, i, in);
	else if (fl & ISA_F_SMEM)
		rc = exec_smem(dev, w, i, in);
	else if (fl & (ISA_F_MFMA | ISA_F_WMMA)) {
		dev->stats.mma++;
		rc = emu_mma(dev, w, i, in);
	} else if (fl & ISA_F_VALU)
		rc = exec_valu(dev, w, i, in, acc);
	else if (fl & ISA_F_DS)
		rc = exec_ds(dev, w, i, in);
	else if (in->op == ISA_BUFFER_GL0_INV || in->op == ISA_BUFFER_GL1_INV)
		rc = 0; /* cache invalidations: the emulator has no caches */
	else if (fl & (ISA_F_GLOBAL | ISA_F_MUBUF))
		rc = exec_vmem(dev, w, i, in);
	else {
		emu_fail(dev, w, i, "instruction not emulated");
		rc = -1;
	}
	w->clock++;
	if (dev->failed)
		return -1;
	if (dev->prof_on)
		emu_prof_post(dev, w, i);
	return rc;
}
