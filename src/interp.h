/* interp.h — the CPU reference interpreter for Tile IR.
 *
 * interp_run executes a verified kernel on host buffers, block after block,
 * with the exact dtype semantics of dtype.h.  It DEFINES what every backend
 * must compute, so it is a plain tree walker that checks everything it can:
 * out-of-bounds element accesses, integer division by zero and bad argument
 * sizes are reported through the Diag as "file:line:col: error: ..." (with
 * the block index), never by crashing.
 *
 * Evaluation rules beyond docs/tile-ir.md that backends rely on:
 *  - every operand of &&, || and select is evaluated (there is no short
 *    circuit; backends compute both sides), so an out-of-bounds load guarded
 *    only by && or select is an error: guard loads with if;
 *  - newly allocated shared/fragment/local buffers are filled with NaN
 *    (floats) or 0xA5 bytes (integers, bool) so reads of undefined values
 *    show up in results;
 *  - fp8 arithmetic results are rounded back like a cast (satfinite);
 *  - reductions and cumsum fold from the first element (no identity value
 *    is added); min of +0 and -0 is -0, max is +0;
 *  - a copy tile that leaves an on-chip buffer is a runtime error
 *    (only global tensors have the load-0 / skip-store edge rule).
 */
#ifndef TILEASM_INTERP_H
#define TILEASM_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"

/* One per Kernel.args[i] (the verified argument list: tensors and scalars in
 * declaration order, then unspecialised shape symbols).
 *  - tensor: data points to a row-major array of the tensor's dtype in its
 *    real byte format (f16 = 2 bytes); bytes is its size and must be at
 *    least the tensor's size.  The interpreter reads and writes it in place.
 *  - shape symbol: ival (>= 0, at most INT32_MAX).
 *  - scalar parameter: ival for integer and bool types, fval for floats
 *    (rounded to the parameter's dtype). */
typedef struct {
	void *data;
	size_t bytes;
	int64_t ival;
	double fval;
} InterpArg;

/* Runs kernel k of the verified module m over its whole grid.  Returns 0, or
 * -1 after reporting a diagnostic to d (runtime errors point at the IR
 * statement or expression that failed).  Blocks run in order bz, by, bx
 * (bx fastest); a failing run may have modified the tensors. */
int interp_run(const Module *m, int k, const InterpArg *args, Diag *d);

/* interp_run with a bound on the work of the whole run, all blocks
 * together: every statement, loop iteration, parallel iteration, thread of
 * a per-thread if, block, and element of a copy/fill/reduce/cumsum (M*N*K
 * for gemm) is one step.  Past max_steps the run stops with "work bound
 * exceeded" (a runtime error at the statement that crossed it).
 * interp_run uses INTERP_DEFAULT_MAX_STEPS. */
#define INTERP_DEFAULT_MAX_STEPS 1000000000ull
int interp_run_bounded(const Module *m, int k, const InterpArg *args, uint64_t max_steps, Diag *d);
/* interp_run_bounded in another legal schedule (mode: INTERP_* bits): a
 * kernel whose results differ from interp_run's is an undefined program,
 * which a differential test must leave out. */
enum {
	INTERP_POISON_ALT = 1, /* new on-chip buffers get the second fill (-3.25 for floats, 0x5A
	                        * bytes otherwise): results that change read data never written */
	INTERP_REVERSE = 2,    /* blocks, parallel iterations and the threads of per-thread ifs run
	                        * in reverse order: results that change have a race (an iteration
	                        * reads or writes what another writes) */
	INTERP_RACES = 4,      /* a read of what another iteration (thread) of the same parallel loop
	                        * (per-thread if) stored, or a store that changes what another stored,
	                        * is a runtime error "race: ...": catches the write-write conflicts
	                        * that both orders hide (every iteration writes D[1] while one updates it) */
};
int interp_run_poisoned(const Module *m, int k, const InterpArg *args, uint64_t max_steps, unsigned mode, Diag *d);

/* interp_run_bounded that also measures how much the order of float atomic
 * adds may change each result.  slack has one entry per Kernel.args[i]: NULL,
 * or for a tensor argument 2 * elems zeroed doubles; every atomic_add (not
 * max/min) into element e of a float tensor adds |old value| (first add only)
 * and |added value| to slack[i][2e] and 1 to slack[i][2e + 1].  Each add
 * rounds to the tensor's dtype and the adds of different blocks or iterations
 * may run in any order, so two legal results differ by at most
 * slack[i][2e + 1] * ulp(slack[i][2e]) (every partial sum is at most the sum
 * of magnitudes; tileasm run widens its comparison by that). */
int interp_run_slack(const Module *m, int k, const InterpArg *args, uint64_t max_steps, double *const *slack,
                     Diag *d);

/* Shape of the tensor argument argi of kernel k given the symbol values in
 * args (or their -D values).  Returns the rank and fills dims, or -1 if argi
 * is not a tensor or a needed symbol is negative (no diagnostic). */
int interp_tensor_dims(const Module *m, int k, const InterpArg *args, int argi, int64_t dims[IR_MAX_RANK]);

/* Number of elements of that tensor (-1 as above, or on overflow). */
int64_t interp_tensor_elems(const Module *m, int k, const InterpArg *args, int argi);

#endif
