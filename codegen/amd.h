/* amd.h — the AMD backend: SIMT IR -> machine IR -> registers -> waitcnt and
 * hazards -> machine code -> HSA code object (gfx1100, gfx90a, gfx942).
 *
 * Passes, one file and one entry point each, run in order by amd.c:
 *   amd_isel.c     amd_isel      SIMT IR -> MIR with virtual registers
 *   amd_opt.c      amd_opt       copy propagation, dead-code elimination (mir.h)
 *   amd_sched.c    amd_sched     pre-RA load hoisting within blocks (mir.h)
 *   regalloc/      ra_allocate, ra_validate, ra_rewrite
 *   amd_waitcnt.c  amd_waitcnt   s_waitcnt insertion (forward dataflow)
 *   amd_hazard.c   amd_hazard    wait states / s_nop for hardware hazards
 *   amd_emit.c     amd_emit      encoding, branch offsets, register counts
 * The design and what is covered: docs/amd-backend.md. */
#ifndef TILEASM_AMD_H
#define TILEASM_AMD_H

#include <stdint.h>

#include "codeobj.h"
#include "diag.h"
#include "ir.h"
#include "lower.h"
#include "mir.h"
#include "target.h"

enum { AMD_PASS_LOWER, AMD_PASS_ISEL, AMD_PASS_OPT, AMD_PASS_SCHED, AMD_PASS_RA, AMD_PASS_WAITCNT,
       AMD_PASS_HAZARD, AMD_PASS_EMIT,
       AMD_PASS_COUNT };
extern const char *const amd_pass_name[AMD_PASS_COUNT];

typedef struct {
	char *name;
	int sgprs, vgprs, agprs; /* registers the code uses (next free register numbers) */
	int lds_bytes, scratch_bytes;
	int waves;               /* waves per SIMD (occupancy) */
	const char *waves_limit; /* "vgpr", "sgpr", "lds", "max", ... */
	int ninsns, code_bytes;
	int threads;             /* workgroup size */
	int nparams;
	SimtParam *params;       /* copied from the SIMT function (names not owned) */
	uint32_t *param_offset;  /* kernarg byte offset of each param */
	uint32_t kernarg_size;
} AmdKernelInfo;

typedef struct {
	/* Requests (set by the caller before amd_compile). */
	int want_listing;       /* fill listing: the code with encodings */
	int reg_limit[3];       /* registers per file (MR_S, MR_V, MR_A) the allocator may
	                         * use; 0 = the target's.  Tests force spilling with it. */
	/* Results. */
	uint8_t *code_object;   /* malloc'd ELF bytes */
	size_t code_object_len;
	AmdKernelInfo *kernels; /* one per Module kernel */
	int nkernels;
	StrBuf listing;
	double pass_ms[AMD_PASS_COUNT]; /* wall time per pass, summed over kernels */
} AmdOutput;

/* Compiles every kernel of the verified module m for AMD target t.  Returns
 * 0, or -1 with errors in d ("... not supported yet on gfx942" for SIMT
 * constructs the backend does not handle).  Free out with amd_output_free
 * in both cases. */
int amd_compile(const Module *m, const Target *t, AmdOutput *out, Diag *d);
void amd_output_free(AmdOutput *out);

/* ---- internal pass interface (used by amd.c and tests) ------------------ */

/* Where the hardware puts the inputs (from the descriptor's enables). */
typedef struct {
	int kernarg_sgpr;     /* first of the kernarg segment pointer pair */
	int wgid_sgpr[3];     /* workgroup id x/y/z, -1 = not enabled */
	uint32_t *param_offset; /* per SimtParam: kernarg offset (filled by amd_kernarg_layout) */
	uint32_t kernarg_size;
} AmdAbi;

/* Lays out the parameters at natural alignment (tensors 8, scalars 4 or 8). */
int amd_kernarg_layout(const SimtFunc *sf, AmdAbi *abi);
/* Which workgroup-id dimensions the function reads (bit d). */
unsigned amd_wgid_dims(const SimtFunc *sf);
/* SIMT -> MIR.  mf must be mir_init'ed with the ISA target. */
int amd_isel(const SimtFunc *sf, const Target *t, const AmdAbi *abi, MFunc *mf, Diag *d);
/* After ra_rewrite: inserts s_waitcnt (and s_waitcnt_vscnt on gfx11). */
int amd_waitcnt(MFunc *mf, Diag *d);
/* After amd_waitcnt: inserts s_nop / s_delay_alu for hazards. */
int amd_hazard(MFunc *mf, Diag *d);

typedef struct {
	uint8_t *code;
	size_t len;
	int sgprs, vgprs, agprs; /* max register used + 1 per file (kernel inputs included) */
	int ninsns;
} AmdCode;
/* Encodes mf (physical, resolved): branch offsets, byte code, counts.
 * With listing != NULL appends one llvm-mc -show-encoding style line each. */
int amd_emit(const MFunc *mf, AmdCode *code, StrBuf *listing, Diag *d);

#endif
