/* launch.c — what every launcher needs from a kernel, computed once for all
 * backends and front ends: the grid for given argument values, and the
 * layout of the argument block (PTX .param list, AMD kernarg segment). */
#include "ir.h"

#include "dtype.h"

int ir_grid(const Module *m, int k, const int64_t *vals, uint32_t grid[3])
{
	const Kernel *kn = &m->kernels.data[k];
	for (int i = 0; i < 3; i++) {
		int64_t v = 1;
		if (i < kn->ngrid && ir_eval_i64(m, k, kn->grid[i], vals, &v))
			return -1;
		if (v < 0 || v > IR_GRID_MAX)
			return -1;
		grid[i] = (uint32_t)v;
	}
	/* use_swizzle's remap (lower_raster.c) computes block numbers of the
	 * x-y plane in 32 bits */
	if (kn->raster && (uint64_t)grid[0] * grid[1] > UINT32_MAX)
		return -1;
	return 0;
}

uint32_t ir_arg_size(const Module *m, const KernelArg *a)
{
	if (a->buf >= 0)
		return 8; /* a device pointer */
	/* Small scalars travel as 32-bit values, f16/bf16/fp8 as f32. */
	return dtype_bytes((DType)m->vars.data[a->var].type) == 8 ? 8 : 4;
}

uint32_t ir_arg_layout(const Module *m, int k, uint32_t *offset)
{
	const Kernel *kn = &m->kernels.data[k];
	uint32_t off = 0;
	for (int i = 0; i < kn->nargs; i++) {
		uint32_t sz = ir_arg_size(m, &kn->args[i]);
		off = (off + sz - 1) & ~(sz - 1);
		offset[i] = off;
		off += sz;
	}
	return off;
}
