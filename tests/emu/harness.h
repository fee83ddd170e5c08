/* harness.h — helpers for the emulator tests: build a test kernel from
 * tests/emu/NAME.s with the LLVM oracles (llvm-mc-19 + ld.lld-19; the test
 * fails with a clear message when they are missing), load it, run it. */
#ifndef TILEASM_TEST_EMU_HARNESS_H
#define TILEASM_TEST_EMU_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "emu.h"

/* Assembles and links tests/emu/NAME for mcpu ("gfx942", "gfx1100"...) with
 * extra llvm-mc flags (may be ""); returns malloc'd code object bytes. */
uint8_t *build_co(const char *name, const char *mcpu, const char *flags, size_t *len);
/* A device with NAME loaded (asserts success). */
EmuDevice *load_dev(const char *name, ta_target t, const char *flags);
/* Launch with kernargs; returns emu_launch's result, errors in *err (malloc'd). */
int launch(EmuDevice *dev, const char *kernel, uint32_t gx, uint32_t bx, const void *ka, size_t kn, char **err);
/* Device buffer initialised from host data (n bytes). */
uint64_t upload(EmuDevice *dev, const void *p, size_t n);
void download(EmuDevice *dev, uint64_t a, void *p, size_t n);

#endif
