/* asm_co.c — the code-object directives of LLVM's AMDGPU assembly, as a
 * directive hook for the isa/ text assembler:
 *
 *   .amdgcn_target "amdgcn-amd-amdhsa--gfx942:xnack-"   checked against --target
 *   .amdhsa_code_object_version 5                       only v5 is written
 *   .amdhsa_kernel NAME ... .end_amdhsa_kernel          descriptor fields
 *   .amdgpu_metadata ... .end_amdgpu_metadata           YAML metadata
 *
 * Descriptor directives follow llvm-mc-19's semantics, defaults included
 * (AMDGPUAsmParser::ParseDirectiveAMDHSAKernel): float_denorm_mode_32 0,
 * workgroup id x on, reserve_vcc and reserve_flat_scratch on, USER_SGPR_COUNT
 * implied by the enabled user SGPRs (no gfx1100 padding unless
 * .amdhsa_user_sgpr_count says so).  The metadata YAML is kept as a CoMd tree
 * and written back as msgpack unchanged, as llvm-mc does. */
#include "codeobj.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>

struct CoAsm {
	Target t;
	const SrcFile *src;
	Diag *d;
	Arena arena;
	VEC(CoKernel) kernels;
	VEC(SrcPos) kpos;
	CoKernel *cur;   /* inside .amdhsa_kernel */
	uint64_t seen;   /* directives seen in the current block (bit per table row) */
	int explicit_usgpr;
	StrBuf yaml;     /* .amdgpu_metadata body while in raw mode */
	SrcPos yaml_pos;
	int in_yaml;
	CoMd *md;
	int errors;
};

CoAsm *co_asm_new(const Target *t, const SrcFile *src, Diag *d)
{
	CoAsm *a = calloc(1, sizeof *a);
	if (!a) {
		diag_error(d, "out of memory");
		return NULL;
	}
	a->t = *t;
	a->src = src;
	a->d = d;
	return a;
}

void co_asm_free(CoAsm *a)
{
	if (!a)
		return;
	vec_free(&a->kernels);
	vec_free(&a->kpos);
	sb_free(&a->yaml);
	arena_free(&a->arena);
	free(a);
}

static int err(CoAsm *a, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int err(CoAsm *a, SrcPos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vat(a->d, DIAG_ERROR, a->src, pos, fmt, ap);
	va_end(ap);
	a->errors++;
	return -1;
}

/* ---- .amdhsa_* fields --------------------------------------------------- */

enum { W_ANY, W_CDNA, W_GFX11, W_NOAFS /* not on architected flat scratch */, W_AFS };
typedef struct {
	const char *name; /* after ".amdhsa_" */
	int max;          /* largest accepted value */
	int where;        /* W_* */
	size_t off;       /* field in CoKernel (uint8_t, uint16_t bit, int or uint32_t) */
	int kind;         /* 0 u8, 1 user-SGPR bit (bit in `bit`), 2 int, 3 u32, 4 exception bit */
	int bit;
} Field;

#define U8(n, f, max, w) {n, max, w, offsetof(CoKernel, f), 0, 0}
#define INT(n, f, max, w) {n, max, w, offsetof(CoKernel, f), 2, 0}
#define U32(n, f, w) {n, INT32_MAX, w, offsetof(CoKernel, f), 3, 0}
#define USGPR(n, b, w) {n, 1, w, 0, 1, b}
#define EXC(n, b) {n, 1, W_ANY, 0, 4, b}
static const Field fields[] = {
	U32("group_segment_fixed_size", group_segment_size, W_ANY),
	U32("private_segment_fixed_size", private_segment_size, W_ANY),
	U32("kernarg_size", kernarg_size, W_ANY),
	INT("user_sgpr_count", user_sgpr_count, 32, W_ANY),
	USGPR("user_sgpr_private_segment_buffer", CO_USGPR_PRIVATE_SEGMENT_BUFFER, W_NOAFS),
	USGPR("user_sgpr_dispatch_ptr", CO_USGPR_DISPATCH_PTR, W_ANY),
	USGPR("user_sgpr_queue_ptr", CO_USGPR_QUEUE_PTR, W_ANY),
	USGPR("user_sgpr_kernarg_segment_ptr", CO_USGPR_KERNARG_SEGMENT_PTR, W_ANY),
	USGPR("user_sgpr_dispatch_id", CO_USGPR_DISPATCH_ID, W_ANY),
	USGPR("user_sgpr_flat_scratch_init", CO_USGPR_FLAT_SCRATCH_INIT, W_NOAFS),
	USGPR("user_sgpr_private_segment_size", CO_USGPR_PRIVATE_SEGMENT_SIZE, W_ANY),
	{"user_sgpr_kernarg_preload_length", 0, W_ANY, 0, 5, 0}, /* preloading: only 0 */
	{"user_sgpr_kernarg_preload_offset", 0, W_ANY, 0, 5, 0},
	U8("wavefront_size32", wave32, 1, W_GFX11),
	U8("uses_dynamic_stack", uses_dynamic_stack, 1, W_ANY),
	U8("system_sgpr_private_segment_wavefront_offset", private_segment, 1, W_NOAFS),
	U8("enable_private_segment", private_segment, 1, W_AFS),
	U8("system_sgpr_workgroup_id_x", wg_id_x, 1, W_ANY),
	U8("system_sgpr_workgroup_id_y", wg_id_y, 1, W_ANY),
	U8("system_sgpr_workgroup_id_z", wg_id_z, 1, W_ANY),
	U8("system_sgpr_workgroup_info", wg_info, 1, W_ANY),
	U8("system_vgpr_workitem_id", workitem_id_dims, 2, W_ANY),
	INT("next_free_vgpr", vgprs, 512, W_ANY),
	INT("next_free_sgpr", sgprs, 106, W_ANY),
	INT("accum_offset", accum_offset, 256, W_CDNA),
	U8("reserve_vcc", reserve_vcc, 1, W_ANY),
	U8("reserve_flat_scratch", reserve_flat_scratch, 1, W_NOAFS),
	{"reserve_xnack_mask", 1, W_ANY, 0, 6, 0}, /* must match the target's xnack */
	U8("float_round_mode_32", float_round_32, 3, W_ANY),
	U8("float_round_mode_16_64", float_round_16_64, 3, W_ANY),
	U8("float_denorm_mode_32", float_denorm_32, 3, W_ANY),
	U8("float_denorm_mode_16_64", float_denorm_16_64, 3, W_ANY),
	U8("dx10_clamp", dx10_clamp, 1, W_ANY),
	U8("ieee_mode", ieee_mode, 1, W_ANY),
	U8("fp16_overflow", fp16_overflow, 1, W_ANY),
	U8("tg_split", tg_split, 1, W_CDNA),
	U8("workgroup_processor_mode", wgp_mode, 1, W_GFX11),
	U8("memory_ordered", mem_ordered, 1, W_GFX11),
	U8("forward_progress", fwd_progress, 1, W_GFX11),
	U8("shared_vgpr_count", shared_vgpr_count, 15, W_GFX11),
	U8("inst_pref_size", inst_pref_size, 63, W_GFX11),
	EXC("exception_fp_ieee_invalid_op", 0),
	EXC("exception_fp_denorm_src", 1),
	EXC("exception_fp_ieee_div_zero", 2),
	EXC("exception_fp_ieee_overflow", 3),
	EXC("exception_fp_ieee_underflow", 4),
	EXC("exception_fp_ieee_inexact", 5),
	EXC("exception_int_div_zero", 6),
};
static uint64_t seen_bit(const char *name)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(fields); i++)
		if (!strcmp(fields[i].name, name))
			return 1ull << i;
	return 0;
}

static int is_cdna(const Target *t) { return t->id == TA_TARGET_GFX90A || t->id == TA_TARGET_GFX942; }
static int arch_fs(const Target *t) { return t->id == TA_TARGET_GFX942 || t->id == TA_TARGET_GFX1100; }

/* llvm-mc's descriptor defaults (getDefaultAmdhsaKernelDescriptor). */
static void asm_defaults(CoKernel *k, const Target *t)
{
	memset(k, 0, sizeof *k);
	k->kernarg_align = 8;
	k->max_flat_workgroup_size = 256;
	k->float_denorm_16_64 = 3;
	k->dx10_clamp = 1;
	k->ieee_mode = 1;
	k->wg_id_x = 1;
	k->reserve_vcc = 1;
	k->reserve_flat_scratch = !arch_fs(t);
	if (t->id == TA_TARGET_GFX1100) {
		k->wave32 = 1; /* llvm-mc's default on gfx10+ */
		k->wgp_mode = 1;
		k->mem_ordered = 1;
	}
}

/* An integer operand: decimal or 0x hex, nothing after it. */
static int parse_int(const char *s, long long *v)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 0);
	while (isspace((unsigned char)*end))
		end++;
	return errno || *end ? -1 : 0;
}

/* pos: the directive, vpos: its value (where llvm-mc reports a repeated
 * directive and a value out of range). */
static int kernel_field(CoAsm *a, const char *name, const char *arg, SrcPos pos, SrcPos vpos)
{
	size_t i;
	for (i = 0; i < TA_ARRAY_LEN(fields); i++)
		if (!strcmp(fields[i].name, name))
			break;
	if (i == TA_ARRAY_LEN(fields))
		return err(a, pos, "unknown directive .amdhsa_%s", name);
	const Field *f = &fields[i];
	const Target *t = &a->t;
	if ((f->where == W_CDNA && !is_cdna(t)) || (f->where == W_GFX11 && t->id != TA_TARGET_GFX1100) ||
	    (f->where == W_NOAFS && arch_fs(t)) || (f->where == W_AFS && !arch_fs(t)))
		return err(a, pos, ".amdhsa_%s is not supported on %s", name, target_name(t->id));
	if (a->seen & (1ull << i))
		return err(a, vpos, ".amdhsa_%s already set for this kernel", name);
	a->seen |= 1ull << i;
	long long v;
	if (parse_int(arg, &v))
		return err(a, vpos, ".amdhsa_%s needs an integer value", name);
	if (v < 0 || v > f->max)
		return err(a, vpos, ".amdhsa_%s value %lld out of range (0..%d)", name, v, f->max);
	CoKernel *k = a->cur;
	uint8_t *p = (uint8_t *)k + f->off;
	switch (f->kind) {
	case 0: *p = (uint8_t)v; break;
	case 1:
		k->user_sgprs = (uint16_t)(v ? k->user_sgprs | f->bit : k->user_sgprs & ~f->bit);
		break;
	case 2: memcpy(p, &(int){(int)v}, sizeof(int)); break;
	case 3: memcpy(p, &(uint32_t){(uint32_t)v}, sizeof(uint32_t)); break;
	case 4:
		k->exception_enables = (uint8_t)(v ? k->exception_enables | 1 << f->bit
						   : k->exception_enables & ~(1 << f->bit));
		break;
	case 5: break; /* only 0 accepted above */
	case 6:
		if (v != (t->xnack != FEAT_OFF && is_cdna(t)))
			return err(a, pos, ".amdhsa_reserve_xnack_mask %lld does not match the target's xnack setting", v);
		break;
	}
	if (!strcmp(name, "user_sgpr_count"))
		a->explicit_usgpr = 1;
	return 0;
}

static int end_kernel(CoAsm *a, SrcPos pos)
{
	CoKernel *k = a->cur;
	if (!(a->seen & seen_bit("next_free_vgpr")))
		return err(a, pos, ".amdhsa_next_free_vgpr is required in .amdhsa_kernel %s", k->name);
	if (!(a->seen & seen_bit("next_free_sgpr")))
		return err(a, pos, ".amdhsa_next_free_sgpr is required in .amdhsa_kernel %s", k->name);
	if (is_cdna(&a->t)) {
		/* .amdhsa_next_free_vgpr counts the unified VGPR+AGPR file here. */
		if (!(a->seen & seen_bit("accum_offset")))
			return err(a, pos, ".amdhsa_accum_offset is required on %s", target_name(a->t.id));
		k->vgpr_total = TA_MAX(k->vgprs, 1);
		int acc = k->accum_offset;
		if (acc < 4 || acc % 4 || acc > (k->vgpr_total + 3) / 4 * 4)
			return err(a, pos, ".amdhsa_accum_offset %d must be a multiple of 4 in 4..%d", acc,
				   (k->vgpr_total + 3) / 4 * 4);
		k->agprs = k->vgpr_total > acc ? k->vgpr_total - acc : 0;
		k->vgprs = TA_MIN(k->vgprs, acc);
	} else if (k->vgprs > 256) {
		return err(a, pos, ".amdhsa_next_free_vgpr %d exceeds 256", k->vgprs);
	}
	int implied = co_user_sgprs_implied(k);
	if (!a->explicit_usgpr)
		k->user_sgpr_count = implied;
	else if (k->user_sgpr_count < implied) /* llvm-mc: past .end_amdhsa_kernel */
		return err(a, (SrcPos){pos.line, pos.col + 18}, ".amdhsa_user_sgpr_count %d is smaller than the %d enabled user SGPRs",
			   k->user_sgpr_count, implied);
	CoDescriptor kd;
	if (co_descriptor(&a->t, k, &kd, a->d))
		return a->errors++, -1;
	a->cur = NULL;
	return 0;
}

/* ---- the hook ----------------------------------------------------------- */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Copies the directive name (up to whitespace) into buf. */
static const char *word(const char *s, char *buf, size_t n)
{
	size_t i = 0;
	s = skip_ws(s);
	while (*s && !isspace((unsigned char)*s) && *s != ',') {
		if (i + 1 < n)
			buf[i++] = *s;
		s++;
	}
	buf[i] = 0;
	return s;
}

int co_asm_directive(void *user, const char *line, SrcPos pos, int *raw_mode)
{
	CoAsm *a = user;
	if (a->in_yaml) {
		const char *s = skip_ws(line);
		if (!strncmp(s, ".end_amdgpu_metadata", 20) && !s[20 + strspn(s + 20, " \t\r\n")]) {
			*raw_mode = 0;
			a->in_yaml = 0;
			CoMd *md;
			if (co_yaml_parse(&a->arena, a->yaml.buf ? a->yaml.buf : "", a->yaml.len, &md, a->src,
					  a->yaml_pos, a->d))
				return a->errors++, -1;
			if (a->md)
				return err(a, pos, "second .amdgpu_metadata block");
			/* llvm-mc reports the verifier's refusal just past the
			 * closing directive. */
			StrBuf why = {0};
			if (co_md_verify(md, &why)) {
				err(a, (SrcPos){pos.line, pos.col + (int)(s - line) + 20}, "invalid HSA metadata: %s",
				    why.buf ? why.buf : "?");
				sb_free(&why);
				return -1;
			}
			a->md = md;
			return 1;
		}
		sb_puts(&a->yaml, line);
		sb_putc(&a->yaml, '\n');
		return 1;
	}
	/* The assembler strips comments already; be safe with trailing ones. */
	char buf[512];
	size_t n = strcspn(line, ";");
	const char *sl = strstr(line, "//");
	if (sl && (size_t)(sl - line) < n)
		n = (size_t)(sl - line);
	if (n >= sizeof buf)
		return err(a, pos, "directive too long");
	memcpy(buf, line, n);
	buf[n] = 0;
	char name[128];
	const char *rest = word(buf, name, sizeof name);
	rest = skip_ws(rest);

	if (!strcmp(name, ".end_amdhsa_kernel")) {
		if (!a->cur)
			return err(a, pos, ".end_amdhsa_kernel without .amdhsa_kernel");
		return end_kernel(a, pos) ? -1 : 1;
	}
	if (a->cur) {
		if (strncmp(name, ".amdhsa_", 8) || !strcmp(name, ".amdhsa_kernel"))
			return err(a, pos, "%s inside .amdhsa_kernel %s (missing .end_amdhsa_kernel?)", name,
				   a->cur->name);
		return kernel_field(a, name + 8, rest, pos, (SrcPos){pos.line, pos.col + (int)(rest - buf)}) ? -1
													      : 1;
	}
	if (!strcmp(name, ".amdhsa_kernel")) {
		char kname[256];
		const char *after = word(rest, kname, sizeof kname);
		if (!kname[0] || *skip_ws(after))
			return err(a, pos, ".amdhsa_kernel needs one kernel name");
		/* A second block for one name is reported by co_asm_finish
		 * (sort then scan: a scan per kernel is quadratic). */
		CoKernel k;
		asm_defaults(&k, &a->t);
		k.name = arena_strndup(&a->arena, kname, strlen(kname));
		if (!k.name || vec_push(&a->kernels, k) || vec_push(&a->kpos, pos))
			return err(a, pos, "out of memory");
		a->cur = &a->kernels.data[a->kernels.len - 1];
		a->seen = 0;
		a->explicit_usgpr = 0;
		return 1;
	}
	if (!strcmp(name, ".amdhsa_code_object_version")) {
		long long v;
		if (parse_int(rest, &v) || v != 5)
			return err(a, pos, "tileasm writes code object version 5 only");
		return 1;
	}
	if (!strcmp(name, ".amdgcn_target")) {
		size_t len = strlen(rest);
		if (len < 2 || rest[0] != '"' || rest[len - 1] != '"')
			return err(a, pos, ".amdgcn_target needs a quoted target id");
		StrBuf want = {0};
		co_target_id(&a->t, &want);
		int ok = want.buf && len - 2 == want.len && !memcmp(rest + 1, want.buf, len - 2);
		if (!ok)
			err(a, pos, ".amdgcn_target %.*s does not match --target (%s)", (int)len, rest,
			    want.buf ? want.buf : "?");
		sb_free(&want);
		return ok ? 1 : -1;
	}
	if (!strcmp(name, ".amdgpu_metadata")) {
		a->in_yaml = 1;
		a->yaml_pos = (SrcPos){pos.line + 1, 1};
		*raw_mode = 1;
		return 1;
	}
	if (!strcmp(name, ".amdgpu_hsa_kernel") || !strcmp(name, ".amd_kernel_code_t"))
		return err(a, pos, "%s is code object v2 syntax; use .amdhsa_kernel", name);
	return 0;
}

typedef struct {
	const char *name;
	size_t i;
} NameAt;

static int name_order(const void *x, const void *y)
{
	const NameAt *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* The entries named `name` in a name-sorted array: the first, or n. */
static size_t name_find(const NameAt *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(v[lo].name, name) ? lo : n;
}

/* Kernels sorted by name, or NULL (out of memory); a name given two
 * descriptors is reported at the second, as llvm-mc reports it. */
static NameAt *sorted_names(CoAsm *a, int *dup)
{
	size_t n = a->kernels.len;
	NameAt *v = malloc(sizeof *v * (n ? n : 1));
	*dup = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = (NameAt){a->kernels.data[i].name, i};
	qsort(v, n, sizeof *v, name_order);
	size_t first = n;
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i - 1].name, v[i].name) && v[i].i < first)
			first = v[i].i;
	if (first < n) {
		err(a, a->kpos.data[first], "kernel '%s' already has a descriptor", a->kernels.data[first].name);
		*dup = 1;
	}
	return v;
}

static int by_text_offset(const void *x, const void *y)
{
	const CoKernel *a = *(CoKernel *const *)x, *b = *(CoKernel *const *)y;
	return (a->text_offset > b->text_offset) - (a->text_offset < b->text_offset);
}

int co_asm_finish(CoAsm *a, const IsaAsmOut *out, uint8_t **co, size_t *len)
{
	*co = NULL;
	*len = 0;
	if (a->in_yaml)
		return err(a, a->yaml_pos, ".amdgpu_metadata without .end_amdgpu_metadata");
	if (a->cur)
		return err(a, a->kpos.data[a->kernels.len - 1], ".amdhsa_kernel %s without .end_amdhsa_kernel",
			   a->cur->name);
	if (a->errors)
		return -1;
	if (!a->kernels.len)
		return err(a, (SrcPos){0, 0}, "no kernels: a code object needs at least one .amdhsa_kernel");
	int dup;
	NameAt *kn = sorted_names(a, &dup);
	free(kn);
	if (!kn)
		return err(a, (SrcPos){0, 0}, "out of memory");
	if (dup)
		return -1;
	/* .text and .rodata are written; bytes in any other section would be
	 * lost, so they are an error (empty ones such as .AMDGPU.csdata and
	 * .note.GNU-stack carry nothing). */
	int text = -1, ro = -1;
	for (size_t i = 0; i < out->sections.len; i++) {
		const IsaSection *s = &out->sections.data[i];
		if (!strcmp(s->name, ".text"))
			text = (int)i;
		else if (!strcmp(s->name, ".rodata"))
			ro = (int)i;
		else if (s->data.len)
			return err(a, (SrcPos){0, 0},
				   "section %s has %zu bytes: tileasm writes only .text and .rodata into the code object",
				   s->name, s->data.len);
	}
	if (text < 0)
		return err(a, (SrcPos){0, 0}, "no .text section");
	/* .rodata symbols: local or hidden ones become local symbols of the code
	 * object (as ld.lld makes them); .L labels are assembler-temporary. */
	CoData data = {0};
	VEC(CoDataSym) dsyms = {0};
	if (ro >= 0 && out->sections.data[ro].data.len) {
		const IsaSection *s = &out->sections.data[ro];
		data.bytes = s->data.data;
		data.len = s->data.len;
		data.align = (uint32_t)TA_MAX(s->align, 1);
	}
	for (size_t j = 0; ro >= 0 && j < out->symbols.len; j++) {
		const IsaSymbol *sym = &out->symbols.data[j];
		if (!sym->defined || sym->section != ro || !strncmp(sym->name, ".L", 2))
			continue;
		if (sym->binding != ISA_BIND_LOCAL && sym->vis != ISA_VIS_HIDDEN) {
			vec_free(&dsyms);
			return err(a, (SrcPos){0, 0},
				   "global .rodata symbol '%s': tileasm exports only kernels (make it .hidden or local)",
				   sym->name);
		}
		CoDataSym ds = {sym->name, sym->value, sym->size,
				(uint8_t)(sym->type == ISA_SYM_OBJECT ? STT_OBJECT : sym->type == ISA_SYM_FUNC ? STT_FUNC
													: STT_NOTYPE),
				(uint8_t)(sym->vis == ISA_VIS_HIDDEN ? STV_HIDDEN : STV_DEFAULT)};
		if (vec_push(&dsyms, ds)) {
			vec_free(&dsyms);
			return err(a, (SrcPos){0, 0}, "out of memory");
		}
	}
	data.syms = dsyms.data;
	data.nsyms = (int)dsyms.len;
	const IsaSection *ts = &out->sections.data[text];
	/* Symbols by name: each kernel finds its label by a binary search. */
	size_t nsy = out->symbols.len;
	NameAt *sy = malloc(sizeof *sy * (nsy ? nsy : 1));
	if (!sy) {
		vec_free(&dsyms);
		return err(a, (SrcPos){0, 0}, "out of memory");
	}
	for (size_t j = 0; j < nsy; j++)
		sy[j] = (NameAt){out->symbols.data[j].name, j};
	qsort(sy, nsy, sizeof *sy, name_order);
	for (size_t i = 0; i < a->kernels.len; i++) {
		CoKernel *k = &a->kernels.data[i];
		int s = -1; /* last definition wins, as in the assembler's table */
		for (size_t j = name_find(sy, nsy, k->name); j < nsy && !strcmp(sy[j].name, k->name); j++)
			s = (int)sy[j].i;
		if (s < 0 || !out->symbols.data[s].defined || out->symbols.data[s].section != text) {
			free(sy);
			vec_free(&dsyms);
			return err(a, a->kpos.data[i], "kernel '%s' has no code: define the label %s in .text",
				   k->name, k->name);
		}
		const IsaSymbol *sym = &out->symbols.data[s];
		if (sym->value % 256) {
			free(sy);
			vec_free(&dsyms);
			return err(a, a->kpos.data[i], "kernel '%s' entry is not 256-byte aligned (add .p2align 8)",
				   k->name);
		}
		k->text_offset = (uint32_t)sym->value;
		k->code_size = sym->size;
	}
	free(sy);
	/* Code ranges: a kernel without .size runs up to the next kernel's entry
	 * (llvm-mc writes size 0 there; running to the end of .text would cover
	 * the kernels after it), and ranges must not overlap, since co_source
	 * prints each kernel's code once, in .text order (fuzz_coasm found a
	 * '.size' naming a misspelt label). */
	CoKernel **by_entry = malloc(sizeof *by_entry * a->kernels.len);
	if (!by_entry) {
		vec_free(&dsyms);
		return err(a, (SrcPos){0, 0}, "out of memory");
	}
	for (size_t i = 0; i < a->kernels.len; i++)
		by_entry[i] = &a->kernels.data[i];
	qsort(by_entry, a->kernels.len, sizeof *by_entry, by_text_offset);
	for (size_t i = 0; i < a->kernels.len; i++) {
		CoKernel *k = by_entry[i], *next = i + 1 < a->kernels.len ? by_entry[i + 1] : NULL;
		uint64_t room = (next ? next->text_offset : ts->data.len) - k->text_offset;
		int bad = 0;
		if (next && next->text_offset == k->text_offset)
			bad = err(a, a->kpos.data[k - a->kernels.data], "kernels '%s' and '%s' share the entry .text+0x%x",
				  k->name, next->name, k->text_offset);
		else if (k->code_size > room)
			bad = err(a, a->kpos.data[k - a->kernels.data],
				  "kernel '%s': .size %zu runs past %s at .text+0x%llx (kernels' code may not overlap)",
				  k->name, k->code_size, next ? next->name : "the end of .text",
				  (unsigned long long)(k->text_offset + room));
		else if (!k->code_size)
			k->code_size = (size_t)room;
		if (bad) {
			free(by_entry);
			vec_free(&dsyms);
			return bad;
		}
	}
	free(by_entry);
	/* Without .amdgpu_metadata, describe the kernels from their descriptors. */
	int rc = co_write_text(&a->t, a->kernels.data, (int)a->kernels.len, ts->data.data, ts->data.len, a->md,
			       &data, co, len, a->d);
	vec_free(&dsyms);
	if (rc)
		a->errors++;
	return rc;
}

int co_assemble(const Target *t, int wave64, const SrcFile *src, uint8_t **co, size_t *len, Diag *d)
{
	*co = NULL;
	*len = 0;
	CoAsm *a = co_asm_new(t, src, d);
	if (!a)
		return -1;
	IsaAsmOptions opt = {(ta_target)((int)t->id | (wave64 ? ISA_WAVE64 : 0)), co_asm_directive, a, NULL};
	IsaAsmOut res;
	memset(&res, 0, sizeof res);
	int rc = isa_assemble(&opt, src, &res, d);
	if (!rc)
		rc = co_asm_finish(a, &res, co, len);
	isa_asm_free(&res);
	co_asm_free(a);
	/* What the assembler writes, the reader (the emulator, disasm) must
	 * take: metadata the YAML parser accepts can still lack what co_read
	 * requires (found by fuzz_coasm: an argument map cut short by a '#'). */
	CoObject *o = NULL;
	if (!rc && co_read(*co, *len, &o, d)) {
		free(*co);
		*co = NULL;
		*len = 0;
		rc = -1;
	}
	co_object_free(o);
	return rc;
}
