/* md_verify.c — the checks llvm-mc-19 makes on an .amdgpu_metadata block
 * (AMDGPU HSA metadata v3+, the verifier in non-strict mode), so that
 * co_assemble refuses exactly the metadata llvm-mc refuses ("invalid HSA
 * metadata") instead of writing a note the runtime may misread.
 *
 * Known keys must have their type (integers, booleans, strings, names from
 * a fixed set, arrays of a given length); required keys must be present;
 * unknown keys are allowed, as llvm-mc allows them.  llvm-mc types a quoted
 * scalar like a plain one: '8' and 'true' are an integer and a boolean
 * (retyped here for the keys that want one, so the note holds what
 * llvm-mc's holds), and no string.  YAML 1.1's other booleans (y, n, on...)
 * stay strings here (docs/code-object.md, Metadata). */
#include "codeobj.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>

/* The value as a plain scalar would type it. */
static CoMdKind coerced(const CoMd *m, int64_t *iv)
{
	if (m->kind != CO_MD_STR) {
		*iv = m->i;
		return m->kind;
	}
	const char *s = m->s;
	if (!strcmp(s, "true") || !strcmp(s, "false")) {
		*iv = s[0] == 't';
		return CO_MD_BOOL;
	}
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*s && !*end && !errno && (isdigit((unsigned char)*s) || ((*s == '-' || *s == '+') && s[1]))) {
		*iv = v;
		return CO_MD_INT;
	}
	return CO_MD_STR;
}

/* Whether m reads as `want`; a string that does is retyped in place, as
 * llvm-mc's verifier retypes it (its note then holds the integer). */
static int is_kind(const CoMd *m, CoMdKind want)
{
	int64_t v;
	if (coerced(m, &v) != want)
		return 0;
	if (m->kind == CO_MD_STR) {
		CoMd *w = (CoMd *)m; /* the caller's document, verified in place */
		w->kind = want;
		w->i = v;
		w->s = NULL;
	}
	return 1;
}

static int is_int(const CoMd *m) { return is_kind(m, CO_MD_INT); }
static int is_bool(const CoMd *m) { return is_kind(m, CO_MD_BOOL); }

/* llvm-mc types quoted scalars like plain ones: '3' is no string. */
static int is_str(const CoMd *m)
{
	int64_t v;
	return coerced(m, &v) == CO_MD_STR;
}

static int is_name(const CoMd *m, const char *const *names, int n)
{
	if (m->kind != CO_MD_STR)
		return 0;
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], m->s))
			return 1;
	return 0;
}

/* An array of n (any n when n < 0) integers. */
static int is_int_array(const CoMd *m, int n)
{
	if (m->kind != CO_MD_ARRAY || (n >= 0 && m->n != n))
		return 0;
	for (int i = 0; i < m->n; i++)
		if (!is_int(&m->items[i]))
			return 0;
	return 1;
}

typedef enum { K_INT, K_BOOL, K_STR, K_LANG, K_VK, K_AS, K_ACC, K_INT2, K_INT3 } Kind;
typedef struct {
	const char *key;
	Kind kind;
	int required;
} Rule;

static const char *const languages[] = {"OpenCL C", "OpenCL C++", "HCC", "HIP", "OpenMP", "Assembler"};

static int check(const CoMd *v, Kind k)
{
	switch (k) {
	case K_INT: return is_int(v);
	case K_BOOL: return is_bool(v);
	case K_STR: return is_str(v);
	case K_LANG: return is_name(v, languages, (int)TA_ARRAY_LEN(languages));
	case K_VK: return is_name(v, co_value_kind_name, CO_VK_COUNT);
	case K_AS: return is_name(v, co_addr_space_name, CO_AS_COUNT);
	case K_ACC: return is_name(v, co_access_name, CO_ACC_COUNT);
	case K_INT2: return is_int_array(v, 2);
	case K_INT3: return is_int_array(v, 3);
	}
	return 0;
}

/* Checks the rules on map m; "why" names the first key that fails. */
static int rules(const CoMd *m, const Rule *r, size_t n, const char *what, StrBuf *why)
{
	if (m->kind != CO_MD_MAP) {
		sb_printf(why, "%s is not a map", what);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const CoMd *v = co_md_get(m, r[i].key);
		if (!v && r[i].required) {
			sb_printf(why, "%s has no %s", what, r[i].key);
			return -1;
		}
		if (v && !check(v, r[i].kind)) {
			sb_printf(why, "%s: %s has the wrong type or value", what, r[i].key);
			return -1;
		}
	}
	return 0;
}

static const Rule arg_rules[] = {
	{".name", K_STR, 0},          {".type_name", K_STR, 0},      {".size", K_INT, 1},
	{".offset", K_INT, 1},        {".value_kind", K_VK, 1},      {".pointee_align", K_INT, 0},
	{".address_space", K_AS, 0},  {".access", K_ACC, 0},         {".actual_access", K_ACC, 0},
	{".is_const", K_BOOL, 0},     {".is_restrict", K_BOOL, 0},   {".is_volatile", K_BOOL, 0},
	{".is_pipe", K_BOOL, 0},
};

static const Rule kernel_rules[] = {
	{".name", K_STR, 1},
	{".symbol", K_STR, 1},
	{".language", K_LANG, 0},
	{".language_version", K_INT2, 0},
	{".reqd_workgroup_size", K_INT3, 0},
	{".workgroup_size_hint", K_INT3, 0},
	{".vec_type_hint", K_STR, 0},
	{".device_enqueue_symbol", K_STR, 0},
	{".kernarg_segment_size", K_INT, 1},
	{".group_segment_fixed_size", K_INT, 1},
	{".private_segment_fixed_size", K_INT, 1},
	{".uses_dynamic_stack", K_BOOL, 0},
	{".workgroup_processor_mode", K_INT, 0},
	{".kernarg_segment_align", K_INT, 1},
	{".wavefront_size", K_INT, 1},
	{".sgpr_count", K_INT, 1},
	{".vgpr_count", K_INT, 1},
	{".max_flat_workgroup_size", K_INT, 1},
	{".sgpr_spill_count", K_INT, 0},
	{".vgpr_spill_count", K_INT, 0},
	{".uniform_work_group_size", K_INT, 0},
};

int co_md_verify(CoMd *doc, StrBuf *why)
{
	if (!doc || doc->kind != CO_MD_MAP) {
		sb_puts(why, "the document is not a map");
		return -1;
	}
	const CoMd *ver = co_md_get(doc, "amdhsa.version");
	if (!ver || !is_int_array(ver, 2)) {
		sb_puts(why, "amdhsa.version must be an array of two integers");
		return -1;
	}
	const CoMd *pf = co_md_get(doc, "amdhsa.printf");
	if (pf) {
		int ok = pf->kind == CO_MD_ARRAY;
		for (int i = 0; ok && i < pf->n; i++)
			ok = is_str(&pf->items[i]);
		if (!ok) {
			sb_puts(why, "amdhsa.printf must be an array of strings");
			return -1;
		}
	}
	const CoMd *ks = co_md_get(doc, "amdhsa.kernels");
	if (!ks || ks->kind != CO_MD_ARRAY) {
		sb_puts(why, "amdhsa.kernels must be an array");
		return -1;
	}
	for (int i = 0; i < ks->n; i++) {
		const CoMd *k = &ks->items[i];
		char what[48];
		snprintf(what, sizeof what, "kernel %d", i);
		if (rules(k, kernel_rules, TA_ARRAY_LEN(kernel_rules), what, why))
			return -1;
		const CoMd *args = co_md_get(k, ".args");
		if (!args)
			continue;
		if (args->kind != CO_MD_ARRAY) {
			sb_printf(why, "kernel %d: .args is not an array", i);
			return -1;
		}
		for (int j = 0; j < args->n; j++) {
			snprintf(what, sizeof what, "kernel %d argument %d", i, j);
			if (rules(&args->items[j], arg_rules, TA_ARRAY_LEN(arg_rules), what, why))
				return -1;
		}
	}
	return 0;
}
