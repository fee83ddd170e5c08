/* api.h — the objects behind the public handles of tileasm.h, shared by
 * api.c (contexts, modules), builder.c and compile.c (binaries, cache). */
#ifndef TILEASM_API_H
#define TILEASM_API_H

#include "ir.h"
#include "ptx.h"
#include "target.h"
#include "tileasm.h"

typedef struct CacheEntry CacheEntry;

enum { TA_MAX_PASSES = 16 };

struct ta_ctx {
	Diag diag;
	VEC(Define) defines;
	Arena names; /* define names */
	/* Compile cache (compile.c): at most cache_max entries, LRU by tick. */
	CacheEntry *cache;
	size_t cache_len, cache_max;
	size_t cache_bytes, cache_max_bytes; /* what the entries hold, and its bound (0: none) */
	uint64_t cache_tick, cache_hits, cache_misses;
};

struct ta_module {
	Module *m;
};

struct ta_binary {
	int refs; /* atomic */
	Target target;
	char target_name[48];
	const char *format; /* "hsaco" or "ptx" */
	uint8_t *data;
	size_t size;
	Module *m; /* kept for grid evaluation */
	int nkernels;
	ta_kernel_info *kernels;
	PtxKernelInfo *ptx_info; /* NVIDIA: per kernel, for launching (api/launch.c) */
	char *summary;           /* AMD: per-kernel resource lines that start the listing */
	/* Pass times of the compile (ta_binary_pass_times). */
	int npasses;
	const char *pass_name[TA_MAX_PASSES];
	double pass_ms[TA_MAX_PASSES];
	char *dump;              /* ta_compile_options.dump_after, or NULL */
	Arena arena; /* names and argument tables */
};

/* Parse, specialise with the context's -D values, verify. */
Module *ta_frontend(ta_ctx *c, const char *filename, const char *text, size_t len, ta_status *st);
/* ir_print as a job for run_with_stack_for (the printer recurses) */
typedef struct {
	const Module *m;
	StrBuf sb;
} PrintJob;
void print_job(void *p);
/* Records that run_with_stack_for could not start its thread; TA_ERR_NOMEM. */
ta_status ta_deep_failed(ta_ctx *c);
ta_module *ta_module_wrap(Module *m);
/* The module behind a public handle. */
Module *ta_module_ir(ta_module *m);
void ta_cache_free(ta_ctx *c);

#endif
