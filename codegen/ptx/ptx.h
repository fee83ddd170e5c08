/* ptx.h — PTX text for NVIDIA targets (sm_80 with mma.sync; sm_90a adds fp8
 * conversions) from the SIMT IR of lower.h.
 *
 * The PTX uses typed virtual registers; ptxas (or the driver JIT) allocates
 * them.  All shared memory is dynamic (`.extern .shared smem[]`), so the
 * launcher passes PtxKernelInfo.smem_bytes at launch and raises the
 * function's limit when it exceeds 48 KB. */
#ifndef TILEASM_PTX_H
#define TILEASM_PTX_H

#include "ir.h"
#include "lower.h"
#include "target.h"

/* What a launcher needs per kernel. */
typedef struct {
	char *name;         /* entry name (the kernel's name) */
	int kernel;         /* index into Module.kernels */
	int threads;        /* block size (x) */
	int64_t smem_bytes; /* dynamic shared memory per block */
	int nparams;
	SimtParam *params;  /* in PTX parameter order; .arg indexes Kernel.args */
	int32_t nmma;       /* gemm statements that use mma.sync */
	/* sm_90a GEMM path (ptx_sm90.h): entry sm90->entry is in the module too;
	 * launch it when sm90_check_shapes accepts the sizes.  NULL otherwise. */
	struct Sm90Launch *sm90;
	char *sm90_ptx;      /* ptx_compile_split: that entry as a module of its own, else NULL */
	size_t sm90_ptx_len;
} PtxKernelInfo;

/* Compiles every kernel of the verified module m for t (sm_80 or sm_90a).
 * Appends the module's PTX text to out and, if info is not NULL, sets *info
 * to a malloc'd array of m->kernels.len entries (free with ptx_info_free).
 * Returns 0, or -1 with diagnostics in d. */
int ptx_compile(const Module *m, const Target *t, StrBuf *out, PtxKernelInfo **info, Diag *d);
void ptx_info_free(PtxKernelInfo *info, int n);
/* The same with lowering options o (NULL: the defaults), and each sm_90a
 * GEMM entry in its own module (info[k].sm90_ptx) instead of out, so a host
 * JIT-compiles only the entry it launches (ta_compile's PTX). */
int ptx_compile_split(const Module *m, const Target *t, const LowerOptions *o, StrBuf *out, PtxKernelInfo **info,
                      Diag *d);

/* Appends the entries of the PTX module mod (an sm90_ptx of ptx_compile_split,
 * or a ta_fast_entry's ptx) to the module text in out, so that one file holds
 * them all (`tileasm compile`): mod's .version/.target/.address_size lines are
 * dropped, and its .extern declarations too unless keep_externs (the first
 * such module: every sm_90a entry module declares the same ones). */
void ptx_append_module(StrBuf *out, const char *mod, bool keep_externs);

/* One SIMT function as PTX (used by ptx_compile; exposed for tests). */
int ptx_emit_func(const SimtFunc *f, const Target *t, StrBuf *out, Diag *d);

/* The pieces of ptx_emit_func that the sm_90a GEMM entry (ptx_sm90_gemm.c)
 * reuses: the register/local declarations, and the code.  With w set, the
 * code runs as one consumer warpgroup of that entry: it reads %tw (thread in
 * the warpgroup), %vbx/%vby (the IR block), %wsm (its shared area), syncs
 * with `bar.sync %wbar, 128`, ends at $C_NEXT, and w->gemm_loop expands
 * SI_WG_GEMM_LOOP. */
typedef struct PtxWg {
	void (*gemm_loop)(const struct PtxWg *w, int32_t acc, int32_t n, StrBuf *out);
	const void *ctx;
} PtxWg;
void ptx_emit_decls(const SimtFunc *f, StrBuf *out);
void ptx_emit_code(const SimtFunc *f, const Target *t, const PtxWg *w, StrBuf *out);

#endif
