/* tileasm.h — the public C API of libtileasm.
 *
 * Everything hangs off a ta_ctx.  A context holds options, -D definitions and
 * the diagnostics of the last call; it has no hidden global state, so separate
 * contexts may be used from separate threads at once.  No function exits or
 * aborts on bad input: each returns a ta_status and leaves a
 * "file:line:col: error: ..." message in ta_ctx_diagnostics().
 */
#ifndef TILEASM_H
#define TILEASM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TA_BUILDING_LIB)
#define TA_API __attribute__((visibility("default")))
#else
#define TA_API
#endif

#define TA_VERSION_STRING "0.1.0"

typedef enum ta_target {
	TA_TARGET_NONE = 0,
	TA_TARGET_GFX1100, /* RDNA3, wave32 */
	TA_TARGET_GFX90A,  /* CDNA2, wave64 */
	TA_TARGET_GFX942,  /* CDNA3, wave64 */
	TA_TARGET_SM80,    /* Ampere and later: PTX with mma.sync */
	TA_TARGET_SM90A,   /* Hopper: PTX with wgmma and TMA */
} ta_target;

typedef enum ta_status {
	TA_OK = 0,
	TA_ERR_INVALID,     /* bad argument to an API call */
	TA_ERR_PARSE,       /* syntax error in Tile IR text */
	TA_ERR_VERIFY,      /* shape/dtype/scope error */
	TA_ERR_UNSUPPORTED, /* valid program the chosen target cannot run yet */
	TA_ERR_NOMEM,
	TA_ERR_IO,
	TA_ERR_RUNTIME,     /* interpreter or device error while running */
} ta_status;

typedef struct ta_ctx ta_ctx;
typedef struct ta_module ta_module;

TA_API const char *ta_version(void);
TA_API const char *ta_status_string(ta_status s);

/* Contexts. */
TA_API ta_ctx *ta_ctx_create(void);
TA_API void ta_ctx_destroy(ta_ctx *ctx);
/* Diagnostics text produced since the last ta_ctx_clear_diagnostics (never NULL). */
TA_API const char *ta_ctx_diagnostics(const ta_ctx *ctx);
TA_API void ta_ctx_clear_diagnostics(ta_ctx *ctx);
/* -D NAME=VALUE: specialises shape symbol NAME in modules parsed afterwards. */
TA_API ta_status ta_ctx_define(ta_ctx *ctx, const char *name, int64_t value);

/* Parse Tile IR text (filename is used in diagnostics only), then verify it. */
TA_API ta_status ta_parse(ta_ctx *ctx, const char *filename, const char *text, size_t len,
                          ta_module **out);
TA_API void ta_module_destroy(ta_module *m);
/* Canonical text of a module; parses back to the same IR. Free with ta_free. */
TA_API char *ta_module_print(const ta_module *m);
TA_API int ta_module_kernel_count(const ta_module *m);
TA_API const char *ta_module_kernel_name(const ta_module *m, int index);
TA_API void ta_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
