/* emu.h — an AMD GPU in software: executes the HSA code objects tileasm
 * writes (gfx1100 wave32/wave64, gfx90a, gfx942) so every AMD kernel can be
 * checked against the CPU interpreter without AMD hardware.
 *
 * It is a checking emulator, not only a runner.  A launch fails with an
 * error naming the kernel, the instruction's byte offset and its disassembly
 * when the code
 *   - reads a register whose memory load no s_waitcnt has covered yet
 *     (loads deliver their data only when a later s_waitcnt retires them:
 *     vmcnt and DS in order, SMEM out of order, stores in vscnt on gfx11),
 *   - reads a register (lanes under exec) that nothing has written,
 *   - touches global memory outside every registered buffer, or LDS outside
 *     the workgroup's allocation,
 *   - breaks a gfx9 hazard that needs wait states (MFMA results read too
 *     early, VALU-written SGPR used by a VMEM address within 5 wait states),
 *   - uses a register beyond the descriptor's allocation, or an
 *     instruction the emulator does not implement.
 *
 * Files: emu.c (device, memory, loading, launch, waves, checks),
 *        emu_exec.c (instruction semantics), emu_mma.c (MFMA / WMMA),
 *        emu_prof.c (profiling mode); tileasm.h's ta_emu_* are api/emu_api.c.
 * Semantics and assumptions: docs/emulator.md. */
#ifndef TILEASM_EMU_H
#define TILEASM_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "codeobj.h"
#include "diag.h"
#include "target.h"

typedef struct EmuDevice EmuDevice;

typedef struct {
	uint64_t insns;      /* instructions executed (per wave, all waves summed) */
	uint64_t valu, salu, vmem, smem, lds, mma, branches;
	uint64_t waves, workgroups;
	uint64_t decoded;    /* instructions decoded (each kernel's code once, at its first launch) */
} EmuStats;

/* Checks that can be switched off (all on by default). */
enum {
	EMU_CHECK_WAITCNT = 1u << 0,
	EMU_CHECK_UNINIT = 1u << 1,
	EMU_CHECK_HAZARD = 1u << 2,
};

/* A device for target t (gfx90a, gfx942 or gfx1100; the wave size comes
 * from each kernel's descriptor).  NULL for other targets or no memory. */
EmuDevice *emu_create(ta_target t);
void emu_destroy(EmuDevice *dev);

/* Device memory: emu_alloc returns a device address (never 0, 256-byte
 * aligned, with unmapped gaps between buffers so overruns are caught), or 0.
 * Contents start as 0xCD bytes. */
uint64_t emu_alloc(EmuDevice *dev, size_t bytes);
int emu_free(EmuDevice *dev, uint64_t addr);
/* Copies to/from device memory; the range must lie inside one buffer.
 * Return 0, or -1 with an error in d. */
int emu_write(EmuDevice *dev, uint64_t addr, const void *src, size_t n, Diag *d);
int emu_read(EmuDevice *dev, uint64_t addr, void *dst, size_t n, Diag *d);

/* Loads a code object (replaces any previous one).  A kernel's code is
 * decoded once, at its first launch.  Returns 0, or -1 with an error in d. */
int emu_load(EmuDevice *dev, const uint8_t *hsaco, size_t n, Diag *d);

/* Runs kernel `name` (with or without the ".kd" suffix) on grid[0..2]
 * workgroups of block[0..2] work-items.  The kernarg bytes are copied into a
 * fresh kernarg segment (their size may be smaller than the descriptor's
 * KERNARG_SIZE: the rest is zero).  dynamic_lds adds to the static LDS.
 * Returns 0, or -1 with the first error in d. */
int emu_launch(EmuDevice *dev, const char *name, const uint32_t grid[3], const uint32_t block[3],
	       const void *kernarg, size_t kernarg_size, uint32_t dynamic_lds, Diag *d);

/* Checks to run (EMU_CHECK_* bits; default all). */
void emu_set_checks(EmuDevice *dev, unsigned checks);
/* Stops a launch after this many instructions per wave (default 1e9): an
 * endless loop becomes an error instead of a hang. */
void emu_set_insn_limit(EmuDevice *dev, uint64_t limit);
/* Stops a launch after this many instructions in all, every wave of every
 * workgroup counted (default EMU_DEFAULT_WORK_LIMIT): a huge grid of short
 * waves becomes an error too ("work bound exceeded"). */
#define EMU_DEFAULT_WORK_LIMIT 10000000000ull
void emu_set_work_limit(EmuDevice *dev, uint64_t limit);

/* Counts since emu_create (or the last reset). */
const EmuStats *emu_stats(const EmuDevice *dev);
void emu_reset_stats(EmuDevice *dev);

/* Profiling mode (off by default): each launch records a ta_profile
 * (tileasm.h; the model is in emu_prof.c and docs/emulator.md).  emu_profile
 * is the last launch's, NULL when it was not profiled or failed. */
void emu_set_profile(EmuDevice *dev, int on);
const ta_profile *emu_profile(const EmuDevice *dev);
/* The text `tileasm run --profile` prints; malloc'd (NULL: no memory). */
char *emu_profile_format(const ta_profile *p);

/* The loaded code object (kernels, descriptors, metadata .args for laying
 * out kernargs); NULL before emu_load. */
const CoObject *emu_code_object(const EmuDevice *dev);

#endif
