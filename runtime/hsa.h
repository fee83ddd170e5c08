/* hsa.h — a real AMD GPU through ROCr (libhsa-runtime64.so.1), opened with
 * dlopen at run time so tileasm builds and runs without ROCm.  Every call
 * reports failures as text in a Diag: no library, hsa_init failing (no
 * /dev/kfd), no GPU agent, an agent whose ISA does not match the code
 * object, HSA errors (hsa_status_string).  See docs/rocm.md for which ROCm
 * releases load gfx90a / gfx942 / gfx1100 code objects. */
#ifndef TILEASM_RT_HSA_H
#define TILEASM_RT_HSA_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"

typedef struct RocrRt RocrRt;

/* Opens ROCr (lib = NULL: "libhsa-runtime64.so.1"; tests pass a missing
 * name), initialises it and picks the first GPU agent.  Returns 0 or -1
 * with the reason in d (*out is NULL then). */
int rocr_open(const char *lib, RocrRt **out, Diag *d);
void rocr_close(RocrRt *rt);
const char *rocr_agent_name(const RocrRt *rt); /* "gfx942", ... */

/* Loads a code object (reader -> executable -> freeze); replaces any
 * previous one. */
int rocr_load(RocrRt *rt, const uint8_t *co, size_t n, Diag *d);
/* Device memory (the agent's coarse-grained global region when there is
 * one, else fine-grained); 0 on failure. */
uint64_t rocr_alloc(RocrRt *rt, size_t n, Diag *d);
void rocr_free(RocrRt *rt, uint64_t p);
int rocr_copy_to(RocrRt *rt, uint64_t dst, const void *src, size_t n, Diag *d);
int rocr_copy_from(RocrRt *rt, void *dst, uint64_t src, size_t n, Diag *d);
/* Dispatches NAME.kd on grid[] workgroups of block[] work-items with the
 * given kernarg bytes and waits for completion. */
int rocr_launch(RocrRt *rt, const char *name, const uint32_t grid[3], const uint32_t block[3],
		const void *kernarg, size_t kernarg_size, uint32_t dynamic_lds, Diag *d);

#endif
