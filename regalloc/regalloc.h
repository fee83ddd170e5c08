/* regalloc.h — register allocation for the AMD backend: occupancy tables,
 * liveness and register demand, the allocator, parallel-copy resolution and
 * an independent validator.  Everything works on codegen/amd/mir.h's MFunc.
 *
 * Files:  occupancy.c  waves per SIMD from register counts, LDS, workgroup size
 *         liveness.c   per-block live sets and per-instruction demand (S/V/A)
 *         ssa_ra.c     forward pass per block with live-range splitting (tried first)
 *         ra.c         linear-scan assignment over live intervals, rewrite
 *         spill.c      spilling: SGPRs to VGPR lanes, VGPRs to AGPRs then scratch, retry loop
 *         pcopy.c      parallel copies -> moves and swaps
 *         validate.c   checks an assignment by simulating register contents
 *         undef.c      definitions for values undefined on some paths (before allocation)
 *
 *         ra_run.c     the one entry point: which allocator when, validation, rewrite
 *
 * The AMD driver calls ra_run only.  It runs ra_allocate_ssa (registers
 * freed where values are dead, block-local live-range splitting) and falls
 * back to ra_allocate, a linear scan over one interval per vreg (the hull of
 * every point where it is live), O(n log n), and its spilling driver: see
 * docs/amd-backend.md.  The three allocators (ra_allocate_ssa, ra_allocate,
 * ra_allocate_spill) stay visible for ra_run, each other and the tests. */
#ifndef TILEASM_REGALLOC_H
#define TILEASM_REGALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "mir.h"
#include "target.h"

/* ---- occupancy.c -------------------------------------------------------- */

typedef struct {
	int max_waves;    /* per SIMD */
	int vgpr_granule; /* allocation granule of the (unified) VGPR count */
	int vgpr_total;   /* VGPRs per lane in the SIMD's file */
	int vgpr_max;     /* addressable by one wave (256; CDNA unified 512) */
	int sgpr_max;     /* SGPRs the allocator may hand out */
	int lds_per_cu;   /* bytes of LDS a workgroup's CU/WGP offers */
	int simds_per_cu;
	int wave;         /* wave size */
} OccInfo;

/* Occupancy parameters for target t (ISA_WAVE64 respected); 0 or -1. */
int occ_info(ta_target t, OccInfo *o);
/* Unified register cost: CDNA align4(vgprs) + agprs, else vgprs. */
int occ_vgpr_cost(ta_target t, int vgprs, int agprs);
/* Waves per SIMD for a kernel; *limit (if not NULL) names the limiting
 * factor: "vgpr", "sgpr", "lds", "workgroup" or "max". */
int occ_waves(ta_target t, int vgprs, int agprs, int sgprs, int lds_bytes, int wg_size,
	      const char **limit);

/* ---- liveness.c --------------------------------------------------------- */

typedef struct {
	int16_t s, v, a; /* live dwords per file */
} RaDemand;

/* Block live sets, sparse: one CSR pool of vreg ids.  Block b's live-in
 * set is vals[off[2b] .. off[2b+1]), its live-out set vals[off[2b+1] ..
 * off[2b+2]), each ascending.  Memory is that of the sets (plus two words
 * per block), not blocks x vregs. */
typedef struct {
	size_t *off;         /* 2 * blocks + 1 */
	int32_t *vals;
	RaDemand *demand;    /* per instruction: dwords live across it (incl. its defs) */
	RaDemand max;
} Liveness;

typedef struct {
	const int32_t *v; /* ascending vreg ids */
	int n;
} LiveSet;

int liveness_compute(const MFunc *f, Liveness *lv);
void liveness_free(Liveness *lv);
static inline LiveSet lv_in(const Liveness *lv, int b)
{
	return (LiveSet){lv->vals + lv->off[2 * b], (int)(lv->off[2 * b + 1] - lv->off[2 * b])};
}
static inline LiveSet lv_out(const Liveness *lv, int b)
{
	return (LiveSet){lv->vals + lv->off[2 * b + 1], (int)(lv->off[2 * b + 2] - lv->off[2 * b + 1])};
}
/* v in s (binary search). */
int lv_has(LiveSet s, int v);

/* One liveness serves the scheduler and the allocator: amd_sched_live
 * (amd.h) hands its block live sets to ra_run (RaRunOptions.live), whose
 * ra_allocate_ssa reads them instead of computing its own. */

/* ---- ra.c --------------------------------------------------------------- */

typedef struct {
	int reg_limit[MR_NCLASS]; /* registers available per file (0 = target default) */
} RaOptions;

enum { RA_LINEAR, RA_SSA }; /* RaResult.allocator */

typedef struct {
	int16_t *phys;         /* per vreg: first physical register, -1 = unused vreg */
	int used[MR_NCLASS];   /* highest register used + 1 per file (by vregs) */
	int ninterval;         /* statistics */
	int fail_cls;          /* after a failure: the file that ran out (MR_*), else -1 */
	int fail_at;           /* ra_allocate's failure: the instruction where it ran out, else -1 */
	int allocator;         /* RA_LINEAR or RA_SSA: which one produced phys */
	int splits;            /* RA_SSA: values moved by live-range splitting */
} RaResult;

/* Assigns a physical register range to every vreg.  lv: f's block live
 * sets and demand (liveness section), or NULL (computed here).  Returns 0,
 * or -1 with an error in d when the demand does not fit (no spilling). */
int ra_allocate(const MFunc *f, const RaOptions *opt, const Liveness *lv, RaResult *r, Diag *d);
void ra_result_free(RaResult *r);
/* Replaces virtual operands with r's registers and lowers COPY/PCOPY into
 * moves.  Returns 0 or -1 (allocation failure). */
int ra_rewrite(MFunc *f, const RaResult *r, Diag *d);

/* ---- ssa_ra.c ----------------------------------------------------------- */

/* Assigns registers in one forward pass per block (layout order), freeing
 * a value's registers where it is dead and splitting live ranges with
 * parallel copies (MOP_PCOPY into new vregs, within a block) to make room
 * for aligned tuples.  On success f holds the inserted copies and their
 * vregs, r->allocator is RA_SSA, and ra_validate has accepted the result;
 * returns 0.  Otherwise returns -1 with f unchanged and a note in d: the
 * caller falls back to ra_allocate.  lv: the caller's block live sets
 * (liveness section), or NULL (computed here). */
int ra_allocate_ssa(MFunc *f, const RaOptions *opt, const Liveness *lv, RaResult *r, Diag *d);

/* ---- undef.c ------------------------------------------------------------ */

/* Gives the vregs read before any definition on some path (live into the
 * entry block) a MOP_UNDEF where an undefined path joins a defined one, so
 * they are live only from there (undef.c).  lv: f's block live sets, or
 * NULL (computed here).  Returns 1 when *out holds f's liveness as f is
 * now (the caller frees it; lv, if given, no longer describes f when
 * *ndefs > 0), 0 when nothing changed and lv still holds, -1 when out of
 * memory (f still valid).  *ndefs: the MOP_UNDEFs inserted. */
int ra_define_undef(MFunc *f, const Liveness *lv, Liveness *out, int *ndefs);
enum { RA_UNDEF_MAX = 64 }; /* MOP_UNDEFs per vreg, at most (more: left live from the entry) */

/* ---- spill.c ------------------------------------------------------------ */

typedef struct {
	int sgpr_spills;    /* SGPR dwords kept in VGPR lanes (v_writelane/v_readlane) */
	int vgpr_spills;    /* VGPR dwords spilled, to AGPRs or scratch */
	int agpr_spills;    /* of those, kept in AGPRs (CDNA: v_accvgpr_write/read) */
	int scratch_spills; /* of those, kept in scratch memory (private segment) */
	int scratch_bytes;  /* private segment bytes per work-item the slots take */
	int scratch_rsrc;   /* gfx90a: vreg + 1 of the scratch V# (s[0:3] + wave offset), 0 = none */
	int agpr_slots;     /* AGPR dwords the slots take (shared: below agpr_spills) */
	int rounds;         /* allocation attempts (1 = no spill needed) */
} RaSpillStats;

/* Largest private segment the spill slots may take: the scratch
 * instructions' immediate offset reaches 4095 (MUBUF 12 bits unsigned,
 * FLAT scratch 13 bits signed). */
enum { RA_SCRATCH_MAX = 4096 };

/* Spill-everywhere rewrite of f: every vreg v with spill[v] set lives in a
 * spill slot; each instruction touching it gets a short-lived temporary,
 * reloaded before (if read) and stored after (if written).  SGPRs go to
 * lanes of VGPR slot vregs; VGPRs to AGPR slot vregs while agpr_room
 * dwords of slots last (CDNA), then to scratch: scratch_store/scratch_load
 * at a per-lane byte offset (gfx942, gfx1100: architected flat scratch, no
 * SGPRs), or buffer_store/buffer_load through a V# built at entry from
 * s[0:3] and the wave offset in SGPR wave_sgpr (gfx90a).  Values whose
 * intervals (ra.c's hulls) do not overlap share a slot of their size
 * (interval colouring, O(n log n)): lanes, AGPR slot vregs and scratch
 * bytes grow with the values live at once.  st (not NULL) accumulates the
 * statistics; new scratch slots start at st->scratch_bytes and the V# in
 * st->scratch_rsrc is reused.  Returns 0, -1 (memory), -2 (slots beyond
 * RA_SCRATCH_MAX bytes) or -3 (gfx90a scratch without wave_sgpr). */
int ra_spill(MFunc *f, const uint8_t *spill, int agpr_room, int wave_sgpr, RaSpillStats *st);

/* ra_allocate, and on failure spill and retry, at most RA_SPILL_ROUNDS
 * attempts.  Each round picks more vregs of the file that ran out (and of
 * the other file where its liveness demand exceeds its limit): the best
 * (longest interval per access, times the square root of the size) among
 * those live where the demand still exceeds the limit, only until no point
 * exceeds it (per-instruction liveness first; then ra.c's interval hulls
 * at the point where the scan failed; then hulls a few registers below
 * the limit), and spills the whole set from the original code, so that
 * slots are shared across rounds.  After spilling, ra_allocate_ssa is
 * tried before ra_allocate.  MFMA/WMMA operands are spilled like any
 * value (amd_hazard covers the moves); kernel-input copies and vregs read
 * across lanes never are, nor AGPRs.  f is modified only when spilling.
 * Returns 0, or -1 with an error in d (AGPR demand beyond the file,
 * scratch beyond RA_SCRATCH_MAX). */
enum { RA_SPILL_ROUNDS = 12 };
/* wave_sgpr is the system SGPR that will hold the private segment wave
 * offset on gfx90a (the caller enables it when st->scratch_bytes > 0); 0
 * where the ABI is not known, and then a gfx90a VGPR spill beyond the AGPRs
 * fails.  st may be NULL.  slot_of (NULL, or one entry per vreg of f before
 * spilling) receives where each spilled vreg lives: RA_SLOT_LANE + (lane
 * slot vreg << 6 | first lane), or the scratch byte offset; -2 an AGPR slot
 * vreg of its own (ra_validate checks those), -1 not spilled.  Vregs with
 * one key share a slot: tests check that they never interfere. */
enum { RA_SLOT_LANE = 1 << 30 };
int ra_allocate_spill(MFunc *f, const RaOptions *opt, int wave_sgpr, RaResult *r, RaSpillStats *st,
		      int32_t *slot_of, Diag *d);

/* ---- pcopy.c ------------------------------------------------------------ */

typedef struct {
	int16_t dst, src;
	uint8_t swap; /* output only: exchange dst and src */
} PMove;

/* Sequentializes the parallel copy in[0..n) (distinct dst, one file, one
 * dword each; a src may feed several dsts) into out (room for 2n entries):
 * plain moves, and swaps for cycles.  Returns the number of entries. */
int pcopy_sequence(const PMove *in, int n, PMove *out);

/* ---- validate.c --------------------------------------------------------- */

/* Checks phys (one first register per vreg) against f before ra_rewrite:
 * simulates which vreg dword each physical register holds along every path
 * and requires every virtual operand to read the value it names.  Returns 0,
 * or -1 with the first violation written to err (may be NULL). */
int ra_validate(const MFunc *f, const int16_t *phys, StrBuf *err);

/* ---- ra_run.c ----------------------------------------------------------- */

typedef struct {
	const char *name;     /* the kernel, for diagnostics */
	RaOptions limits;
	int wave_sgpr;        /* gfx90a: the SGPR for the scratch wave offset (ra_allocate_spill) */
	const Liveness *live; /* f's block live sets (amd_sched_live), or NULL */
	/* When the code was scheduled (sched_moves > 0): an allocation whose
	 * occupancy is below that of sched_limit_v VGPRs is not kept, nor one that
	 * fails; then rebuild (required) gives f again in source order and that
	 * is allocated instead. */
	int sched_moves, sched_limit_v;
	int lds_bytes, threads; /* for the occupancy comparison */
	int (*rebuild)(void *arg, MFunc *f, Diag *d);
	void *rebuild_arg;
} RaRunOptions;

typedef struct {
	int allocator;        /* RA_SSA or RA_LINEAR: which one produced the registers */
	int splits;           /* live-range splits (RA_SSA) */
	int used[MR_NCLASS];  /* highest register used + 1 per file (by vregs) */
	RaSpillStats spills;  /* spills.rounds > 1: the code was spilled */
} RaReport;

/* Register allocation of f, virtual to physical: the SSA allocator (with
 * the scheduler's live sets), the linear scan when it gives up, the source
 * order when the schedule does not fit or costs occupancy, then spilling in
 * a bounded number of rounds; the result validated and f rewritten (no
 * virtual operand, no pseudo instruction left).  Returns 0, or -1 with an
 * error in d. */
int ra_run(MFunc *f, const RaRunOptions *opt, RaReport *rep, Diag *d);
/* Kernels with more MIR instructions than this get an SGPR pair for long
 * branches (MFunc.long_branch_sgpr). */
enum { RA_LONG_BRANCH_INSNS = 6000 };

#endif
