/* fuzz_emu.c — libFuzzer target: a code object from untrusted bytes into the
 * emulator (emu_load), then a launch of each of its kernels (at most 4) on a
 * small grid with a kernarg segment of pointers to small device buffers and
 * a low instruction bound.  Whatever the code does — wild addresses, endless
 * loops, undefined registers, bad descriptors — must be an error from
 * emu_load or emu_launch, never a crash.  The first byte picks the target. */
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "emu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const ta_target ids[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100};
	EmuDevice *dev = emu_create(ids[data[0] % 3]);
	if (!dev)
		return 0;
	emu_set_insn_limit(dev, 20000);
	emu_set_work_limit(dev, 200000);
	Diag d;
	diag_init(&d);
	if (emu_load(dev, data + 1, size - 1, &d) == 0) {
		const CoObject *o = emu_code_object(dev);
		uint64_t kernarg[8];
		for (int i = 0; i < 8; i++)
			kernarg[i] = emu_alloc(dev, 4096);
		for (int k = 0; o && k < o->nkernels && k < 4; k++) {
			const uint32_t grid[3] = {2, 1, 1}, block[3] = {64, 1, 1};
			emu_launch(dev, o->kernels[k].k.name, grid, block, kernarg, sizeof kernarg, 0, &d);
		}
	}
	diag_free(&d);
	emu_destroy(dev);
	return 0;
}
