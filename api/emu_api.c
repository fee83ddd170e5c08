/* emu_api.c — tileasm.h's ta_emu_*: the emulator (emu.h) behind a public
 * handle, errors into the context's diagnostics. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "emu.h"

struct ta_emu {
	ta_ctx *ctx;
	EmuDevice *dev;
};

TA_API ta_status ta_emu_create(ta_ctx *ctx, const char *target, ta_emu **out)
{
	if (!ctx || !target || !out)
		return TA_ERR_INVALID;
	*out = NULL;
	Target t;
	if (target_parse(target, &t) || !target_is_amd(t.id)) {
		diag_error(&ctx->diag, "ta_emu_create: '%s' is not an AMD target (gfx1100, gfx90a, gfx942)", target);
		return TA_ERR_INVALID;
	}
	ta_emu *e = calloc(1, sizeof *e);
	if (!e || !(e->dev = emu_create(t.id))) {
		free(e);
		return TA_ERR_NOMEM;
	}
	e->ctx = ctx;
	*out = e;
	return TA_OK;
}

TA_API void ta_emu_destroy(ta_emu *e)
{
	if (!e)
		return;
	emu_destroy(e->dev);
	free(e);
}

TA_API ta_status ta_emu_alloc(ta_emu *e, size_t bytes, uint64_t *addr)
{
	if (!e || !addr)
		return TA_ERR_INVALID;
	*addr = emu_alloc(e->dev, bytes);
	return *addr ? TA_OK : TA_ERR_NOMEM;
}

TA_API ta_status ta_emu_write(ta_emu *e, uint64_t addr, const void *src, size_t n)
{
	if (!e || (!src && n))
		return TA_ERR_INVALID;
	return emu_write(e->dev, addr, src, n, &e->ctx->diag) ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_emu_read(ta_emu *e, uint64_t addr, void *dst, size_t n)
{
	if (!e || (!dst && n))
		return TA_ERR_INVALID;
	return emu_read(e->dev, addr, dst, n, &e->ctx->diag) ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_emu_load(ta_emu *e, const void *code_object, size_t n)
{
	if (!e || !code_object)
		return TA_ERR_INVALID;
	return emu_load(e->dev, code_object, n, &e->ctx->diag) ? TA_ERR_INVALID : TA_OK;
}

TA_API ta_status ta_emu_launch(ta_emu *e, const char *kernel, const uint32_t grid[3], const uint32_t block[3],
			const void *kernarg, size_t kernarg_size, uint32_t dynamic_lds)
{
	if (!e || !kernel || !grid || !block || (!kernarg && kernarg_size))
		return TA_ERR_INVALID;
	return emu_launch(e->dev, kernel, grid, block, kernarg, kernarg_size, dynamic_lds, &e->ctx->diag) ? TA_ERR_RUNTIME
												    : TA_OK;
}

TA_API void ta_emu_set_max_steps(ta_emu *e, uint64_t max_steps)
{
	if (e)
		emu_set_work_limit(e->dev, max_steps ? max_steps : EMU_DEFAULT_WORK_LIMIT);
}

TA_API void ta_emu_set_profile(ta_emu *e, int on)
{
	if (e)
		emu_set_profile(e->dev, on);
}

TA_API const ta_profile *ta_emu_profile(const ta_emu *e)
{
	return e ? emu_profile(e->dev) : NULL;
}

TA_API char *ta_profile_format(const ta_profile *p)
{
	return p ? emu_profile_format(p) : NULL;
}
