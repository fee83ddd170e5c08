/* api.c — the public entry points of tileasm.h that are not a pass. */
#include "api.h"

#include <stdlib.h>
#include <string.h>

TA_API const char *ta_version(void) { return TA_VERSION_STRING; }

TA_API void ta_free(void *p) { free(p); }

TA_API const char *ta_status_string(ta_status s)
{
	switch (s) {
	case TA_OK: return "ok";
	case TA_ERR_INVALID: return "invalid argument";
	case TA_ERR_PARSE: return "parse error";
	case TA_ERR_VERIFY: return "verification error";
	case TA_ERR_UNSUPPORTED: return "unsupported";
	case TA_ERR_NOMEM: return "out of memory";
	case TA_ERR_IO: return "I/O error";
	case TA_ERR_RUNTIME: return "runtime error";
	}
	return "unknown status";
}

TA_API const char *ta_target_name(int i)
{
	return i >= 0 && i < TA_TARGET_SM90A ? target_name((ta_target)(i + 1)) : NULL;
}

/* ---- contexts and modules ------------------------------------------------ */

TA_API ta_ctx *ta_ctx_create(void)
{
	ta_ctx *c = calloc(1, sizeof *c);
	if (c)
		diag_init(&c->diag);
	return c;
}

TA_API void ta_ctx_destroy(ta_ctx *c)
{
	if (!c)
		return;
	diag_free(&c->diag);
	vec_free(&c->defines);
	arena_free(&c->names);
	ta_cache_free(c);
	free(c);
}

TA_API const char *ta_ctx_diagnostics(const ta_ctx *c) { return c ? diag_text(&c->diag) : ""; }

TA_API void ta_ctx_clear_diagnostics(ta_ctx *c)
{
	if (!c)
		return;
	diag_free(&c->diag);
	diag_init(&c->diag);
}

TA_API ta_status ta_ctx_define(ta_ctx *c, const char *name, int64_t value)
{
	if (!c || !name || !*name)
		return TA_ERR_INVALID;
	for (size_t i = 0; i < c->defines.len; i++)
		if (!strcmp(c->defines.data[i].name, name)) {
			c->defines.data[i].value = value;
			return TA_OK;
		}
	char *n = arena_strndup(&c->names, name, strlen(name));
	if (!n || vec_push(&c->defines, ((Define){n, value})))
		return TA_ERR_NOMEM;
	return TA_OK;
}

TA_API ta_status ta_ctx_undefine(ta_ctx *c, const char *name)
{
	if (!c)
		return TA_ERR_INVALID;
	if (!name) {
		c->defines.len = 0;
		return TA_OK;
	}
	for (size_t i = 0; i < c->defines.len; i++)
		if (!strcmp(c->defines.data[i].name, name)) {
			/* keep definition order: it is part of the cache key */
			memmove(&c->defines.data[i], &c->defines.data[i + 1],
				(c->defines.len - i - 1) * sizeof *c->defines.data);
			c->defines.len--;
			return TA_OK;
		}
	return TA_ERR_INVALID;
}

Module *ta_module_ir(ta_module *m) { return m ? m->m : NULL; }

ta_module *ta_module_wrap(Module *m)
{
	ta_module *tm = malloc(sizeof *tm);
	if (tm)
		tm->m = m;
	return tm;
}

ta_status ta_deep_failed(ta_ctx *c)
{
	diag_error(&c->diag, "cannot create a thread for the passes over a deeply nested kernel");
	return TA_ERR_NOMEM;
}

typedef struct {
	ta_ctx *c;
	Module *m;
	int bad;
} VerifyJob;

static void verify_job(void *p)
{
	VerifyJob *j = p;
	j->bad = ir_specialize(j->m, j->c->defines.data, (int)j->c->defines.len, &j->c->diag) ||
	         ir_verify(j->m, &j->c->diag);
}

/* Parse, specialise and verify: the front half of every compile.  The
 * parser does not recurse; specialise and verify do, on a stack sized for
 * the module (run_with_stack_for). */
Module *ta_frontend(ta_ctx *c, const char *filename, const char *text, size_t len, ta_status *st)
{
	Module *m = ir_parse(filename ? filename : "<input>", text, len, &c->diag);
	if (!m) {
		*st = c->diag.nerrors ? TA_ERR_PARSE : TA_ERR_NOMEM;
		return NULL;
	}
	VerifyJob j = {c, m, 0};
	if (run_with_stack_for(ir_nesting(m), verify_job, &j)) {
		ir_module_free(m);
		*st = ta_deep_failed(c);
		return NULL;
	}
	if (j.bad) {
		ir_module_free(m);
		*st = TA_ERR_VERIFY;
		return NULL;
	}
	*st = TA_OK;
	return m;
}

TA_API ta_status ta_parse(ta_ctx *c, const char *filename, const char *text, size_t len, ta_module **out)
{
	if (!c || !text || !out)
		return TA_ERR_INVALID;
	*out = NULL;
	ta_status st;
	Module *m = ta_frontend(c, filename, text, len, &st);
	if (!m)
		return st;
	if (!(*out = ta_module_wrap(m))) {
		ir_module_free(m);
		return TA_ERR_NOMEM;
	}
	return TA_OK;
}

TA_API void ta_module_destroy(ta_module *m)
{
	if (!m)
		return;
	ir_module_free(m->m);
	free(m);
}

void print_job(void *p)
{
	PrintJob *j = p;
	ir_print(j->m, &j->sb);
}

TA_API char *ta_module_print(const ta_module *m)
{
	if (!m)
		return NULL;
	PrintJob j = {m->m, {0}};
	if (run_with_stack_for(ir_nesting(m->m), print_job, &j)) {
		sb_free(&j.sb);
		return NULL;
	}
	return sb_take(&j.sb);
}

TA_API int ta_module_kernel_count(const ta_module *m) { return m ? (int)m->m->kernels.len : 0; }

TA_API const char *ta_module_kernel_name(const ta_module *m, int i)
{
	if (!m || i < 0 || (size_t)i >= m->m->kernels.len)
		return NULL;
	return m->m->kernels.data[i].name;
}
