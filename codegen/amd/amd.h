/* amd.h — the AMD backend: SIMT IR -> machine IR -> registers -> waitcnt and
 * hazards -> machine code -> HSA code object (gfx1100, gfx90a, gfx942).
 *
 * Every AMD pass, one file and one entry point each, under its file's banner
 * below, in the order amd.c's compile_func runs them (a flat list of
 * run_pass calls):
 *   lower       lower_kernel (lower.h)  Tile IR -> SIMT IR, shared with PTX
 *   licm        amd_licm.c     loop-invariant SIMT code before its loops
 *   isel        amd_isel*.c    SIMT IR -> MIR with virtual registers
 *   opt         amd_opt.c      folds, copy propagation, value numbering, dead code
 *   sched       amd_sched.c    pre-RA load hoisting within blocks
 *   regalloc    ra_run (regalloc/ra_run.c, regalloc.h): allocation, spilling,
 *               validation, rewrite to physical registers
 *   waitcnt     amd_waitcnt.c  s_waitcnt insertion (forward dataflow)
 *   hazard      amd_hazard.c   wait states / s_nop for hardware hazards
 *   emit        amd_emit.c     encoding, branch offsets, register counts
 * Between passes the driver can time them (pass_ms), dump the IR after one
 * (dump_after) and verify it (verify: simt_verify, mir_verify).
 * The design and what is covered: docs/amd-backend.md. */
#ifndef TILEASM_AMD_H
#define TILEASM_AMD_H

#include <stdint.h>

#include "codeobj.h"
#include "diag.h"
#include "ir.h"
#include "lower.h"
#include "mir.h"
#include "regalloc.h"
#include "target.h"

enum { AMD_PASS_LOWER, AMD_PASS_LICM, AMD_PASS_ISEL, AMD_PASS_OPT, AMD_PASS_SCHED, AMD_PASS_RA, AMD_PASS_WAITCNT,
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
	char *notes;             /* the lowering's notes for the listing (SimtFunc.notes), or NULL */
} AmdKernelInfo;

typedef struct {
	/* Requests (set by the caller before amd_compile). */
	int want_listing;       /* fill listing: the code with encodings */
	int reg_limit[3];       /* registers per file (MR_S, MR_V, MR_A) the allocator may
	                         * use; 0 = the target's.  Tests force spilling with it. */
	int no_vector_frags;    /* 1: lower with LowerOptions.no_vector_frags (tests) */
	const char *dump_after; /* a pass name (amd_pass_name): its output of every kernel
	                         * goes to dump (SIMT after "lower", MIR after the others) */
	int verify;             /* run simt_verify / mir_verify after every pass (always in
	                         * builds with TA_VERIFY_PASSES, the debug buildtype) */
	/* Results. */
	uint8_t *code_object;   /* malloc'd ELF bytes */
	size_t code_object_len;
	AmdKernelInfo *kernels; /* one per Module kernel */
	int nkernels;
	StrBuf listing;
	StrBuf dump;            /* dump_after's output */
	double pass_ms[AMD_PASS_COUNT]; /* wall time per pass, summed over kernels */
} AmdOutput;

/* Compiles every kernel of the verified module m for AMD target t.  Returns
 * 0, or -1 with errors in d ("... not supported yet on gfx942" for SIMT
 * constructs the backend does not handle).  Free out with amd_output_free
 * in both cases. */
int amd_compile(const Module *m, const Target *t, AmdOutput *out, Diag *d);
void amd_output_free(AmdOutput *out);

/* ---- amd.c ---------------------------------------------------------------
 * The driver; these two give the kernel's ABI to isel and the tests. */

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

/* ---- amd_isel*.c --------------------------------------------------------- */

/* SIMT -> MIR.  mf must be mir_init'ed with the ISA target. */
int amd_isel(const SimtFunc *sf, const Target *t, const AmdAbi *abi, MFunc *mf, Diag *d);

/* ---- amd_licm.c (SIMT IR) ------------------------------------------------- */

/* Moves loop-invariant pure SIMT instructions before their loops' heads.
 * Returns 0, or -1 when out of memory. */
int amd_licm(SimtFunc *f);

/* ---- amd_opt.c (virtual MIR) ---------------------------------------------- */

typedef struct {
	int copies;        /* copies whose readers now read the source */
	int removed;       /* instructions deleted */
	int removed_pairs; /* parallel-copy pairs deleted */
	int folded;        /* x+0, x*1, x<<0 -> move; x*2^k -> shift */
	int cse;           /* ops that repeat an earlier one of their block */
} AmdOptStats;

/* Trivial folds, copy propagation and dead-code elimination, O(n + vregs).
 * st may be NULL.  Returns 0, or -1 on allocation failure (f unchanged). */
int amd_opt(MFunc *f, AmdOptStats *st);

/* ---- amd_sched.c (virtual MIR) -------------------------------------------- */

typedef struct {
	int moves;             /* loads hoisted */
	int attempts;          /* mover runs (1 + retries at lower cliffs) */
	int fallback;          /* 1: gave up, source order kept */
	int limit_v, limit_s;  /* register limits of the last attempt */
} AmdSchedStats;

/* Pre-RA load hoisting and clause forming within blocks, bounded window,
 * never raising the register demand past the current occupancy cliff;
 * O(n·W).  st may be NULL.  Returns 0 or -1 (memory). */
int amd_sched(MFunc *f, AmdSchedStats *st);
/* The same, handing its block live sets to the caller in *lv for the
 * allocator (RaRunOptions.live): its moves stay within blocks and never
 * cross a dependence, so the sets stay valid for the scheduled code
 * (lv->demand, which moves would make stale, is freed and NULL).  The
 * caller frees lv with liveness_free. */
int amd_sched_live(MFunc *f, AmdSchedStats *st, Liveness *lv);

/* ---- regalloc/ (regalloc.h) ----------------------------------------------
 * ra_run: virtual -> physical registers, spilling, validation, rewrite. */

/* ---- amd_waitcnt.c (physical MIR) ------------------------------------------ */

/* After ra_run: inserts s_waitcnt (and s_waitcnt_vscnt on gfx11). */
int amd_waitcnt(MFunc *mf, Diag *d);

/* ---- amd_hazard.c (physical MIR) ------------------------------------------- */

/* After amd_waitcnt: inserts s_nop / s_waitcnt_depctr for hazards. */
int amd_hazard(MFunc *mf, Diag *d);

/* ---- amd_emit.c ------------------------------------------------------------ */

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
