/* api.c — the public entry points of tileasm.h that are not a pass. */
#include "tileasm.h"

#include <stdlib.h>

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
