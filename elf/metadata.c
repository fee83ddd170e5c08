/* metadata.c — the NT_AMDGPU_METADATA document: a small value tree (CoMd),
 * built from CoKernel fields, packed with msgpack-c, unpacked by a
 * bounds-checked decoder of our own, and printed as YAML.
 *
 * The unpacker is hand-written rather than msgpack-c's because msgpack-c
 * allocates `count` objects for an array header before looking at the
 * remaining bytes; a 5-byte hostile note would ask for gigabytes. */
#include "codeobj.h"

#include <msgpack.h>
#include <ctype.h>
#include <stdio.h>
#include <strings.h>

const char *const co_value_kind_name[CO_VK_COUNT] = {
	"by_value", "global_buffer", "dynamic_shared_pointer", "sampler", "image", "pipe", "queue",
	"hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z", "hidden_none",
	"hidden_printf_buffer", "hidden_hostcall_buffer", "hidden_default_queue",
	"hidden_completion_action", "hidden_multigrid_sync_arg", "hidden_block_count_x",
	"hidden_block_count_y", "hidden_block_count_z", "hidden_group_size_x", "hidden_group_size_y",
	"hidden_group_size_z", "hidden_remainder_x", "hidden_remainder_y", "hidden_remainder_z",
	"hidden_grid_dims", "hidden_heap_v1", "hidden_dynamic_lds_size", "hidden_private_base",
	"hidden_shared_base", "hidden_queue_ptr",
};
const char *const co_addr_space_name[CO_AS_COUNT] = {NULL,      "private", "global", "constant",
						     "local",   "generic", "region"};
const char *const co_access_name[CO_ACC_COUNT] = {NULL, "read_only", "write_only", "read_write"};

const CoMd *co_md_get(const CoMd *m, const char *key)
{
	if (!m || m->kind != CO_MD_MAP)
		return NULL;
	for (int i = 0; i < m->n; i++)
		if (m->items[2 * i].kind == CO_MD_STR && !strcmp(m->items[2 * i].s, key))
			return &m->items[2 * i + 1];
	return NULL;
}

uint32_t co_hidden_args(uint32_t explicit_end, CoArg *out)
{
	/* Offsets within the block, as LLVM 19 lays it out (AMDGPUUsage
	 * "Code Object V5 Metadata", checked against clang-19 output). */
	static const struct {
		CoValueKind vk;
		uint8_t off, size;
	} h[CO_HIDDEN_ARGS] = {
		{CO_VK_HIDDEN_BLOCK_COUNT_X, 0, 4},     {CO_VK_HIDDEN_BLOCK_COUNT_Y, 4, 4},
		{CO_VK_HIDDEN_BLOCK_COUNT_Z, 8, 4},     {CO_VK_HIDDEN_GROUP_SIZE_X, 12, 2},
		{CO_VK_HIDDEN_GROUP_SIZE_Y, 14, 2},     {CO_VK_HIDDEN_GROUP_SIZE_Z, 16, 2},
		{CO_VK_HIDDEN_REMAINDER_X, 18, 2},      {CO_VK_HIDDEN_REMAINDER_Y, 20, 2},
		{CO_VK_HIDDEN_REMAINDER_Z, 22, 2},      {CO_VK_HIDDEN_GLOBAL_OFFSET_X, 40, 8},
		{CO_VK_HIDDEN_GLOBAL_OFFSET_Y, 48, 8},  {CO_VK_HIDDEN_GLOBAL_OFFSET_Z, 56, 8},
		{CO_VK_HIDDEN_GRID_DIMS, 64, 2},
	};
	uint32_t base = (explicit_end + 7) & ~7u;
	for (int i = 0; i < CO_HIDDEN_ARGS; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].value_kind = h[i].vk;
		out[i].offset = base + h[i].off;
		out[i].size = h[i].size;
	}
	return base + 256;
}

/* ---- building ----------------------------------------------------------- */

typedef struct {
	Arena *a;
	int oom;
} Bld;

static CoMd *md_new(Bld *b, CoMdKind kind, int cap)
{
	CoMd *m = arena_alloc(b->a, sizeof *m);
	if (!m) {
		b->oom = 1;
		return NULL;
	}
	m->kind = kind;
	if (cap) {
		m->items = arena_alloc(b->a, sizeof(CoMd) * (size_t)cap * (kind == CO_MD_MAP ? 2 : 1));
		if (!m->items)
			b->oom = 1;
	}
	return m;
}

static CoMd *slot(Bld *b, CoMd *m, const char *key)
{
	if (!m || !m->items)
		return NULL;
	if (m->kind == CO_MD_MAP) {
		CoMd *k = &m->items[2 * m->n];
		k->kind = CO_MD_STR;
		k->s = key;
		return &m->items[2 * m->n++ + 1];
	}
	return &m->items[m->n++];
}

static void put_int(Bld *b, CoMd *m, const char *key, int64_t v)
{
	CoMd *s = slot(b, m, key);
	if (s)
		*s = (CoMd){.kind = CO_MD_INT, .i = v};
}
static void put_bool(Bld *b, CoMd *m, const char *key, int v)
{
	CoMd *s = slot(b, m, key);
	if (s)
		*s = (CoMd){.kind = CO_MD_BOOL, .i = !!v};
}
static void put_str(Bld *b, CoMd *m, const char *key, const char *v)
{
	CoMd *s = slot(b, m, key);
	char *c = v ? arena_strndup(b->a, v, strlen(v)) : NULL;
	if (!c)
		b->oom = 1;
	else if (s)
		*s = (CoMd){.kind = CO_MD_STR, .s = c};
}
static void put_node(Bld *b, CoMd *m, const char *key, CoMd *v)
{
	CoMd *s = slot(b, m, key);
	if (s && v)
		*s = *v;
}

static CoMd *arg_map(Bld *b, const CoArg *g)
{
	CoMd *m = md_new(b, CO_MD_MAP, 16);
	if (!m)
		return NULL;
	if (g->access)
		put_str(b, m, ".access", co_access_name[g->access]);
	if (g->actual_access)
		put_str(b, m, ".actual_access", co_access_name[g->actual_access]);
	if (g->address_space)
		put_str(b, m, ".address_space", co_addr_space_name[g->address_space]);
	if (g->is_const)
		put_bool(b, m, ".is_const", 1);
	if (g->is_restrict)
		put_bool(b, m, ".is_restrict", 1);
	if (g->is_volatile)
		put_bool(b, m, ".is_volatile", 1);
	if (g->name)
		put_str(b, m, ".name", g->name);
	put_int(b, m, ".offset", g->offset);
	put_int(b, m, ".size", g->size);
	if (g->type_name)
		put_str(b, m, ".type_name", g->type_name);
	put_str(b, m, ".value_kind", co_value_kind_name[g->value_kind < CO_VK_COUNT ? g->value_kind : 0]);
	return m;
}

void co_target_id(const Target *t, StrBuf *sb)
{
	sb_printf(sb, "amdgcn-amd-amdhsa--%s", target_name(t->id));
	if (t->id == TA_TARGET_GFX1100)
		return; /* no xnack/sramecc settings (e_flags 0x41) */
	if (t->sramecc != FEAT_ANY)
		sb_printf(sb, ":sramecc%c", t->sramecc == FEAT_ON ? '+' : '-');
	if (t->xnack != FEAT_ANY)
		sb_printf(sb, ":xnack%c", t->xnack == FEAT_ON ? '+' : '-');
}

static CoMd *kernel_map(Bld *b, const Target *t, const CoKernel *k)
{
	int cdna = t->id != TA_TARGET_GFX1100;
	CoMd *m = md_new(b, CO_MD_MAP, 24);
	if (!m)
		return NULL;
	int nh = 0;
	CoArg hidden[CO_HIDDEN_ARGS];
	if (k->hidden_args) {
		uint32_t end = 0;
		for (int i = 0; i < k->nargs; i++)
			end = TA_MAX(end, k->args[i].offset + k->args[i].size);
		co_hidden_args(end, hidden);
		nh = CO_HIDDEN_ARGS;
	}
	if (k->nargs + nh) {
		CoMd *args = md_new(b, CO_MD_ARRAY, k->nargs + nh);
		for (int i = 0; i < k->nargs; i++)
			put_node(b, args, NULL, arg_map(b, &k->args[i]));
		for (int i = 0; i < nh; i++)
			put_node(b, args, NULL, arg_map(b, &hidden[i]));
		put_node(b, m, ".args", args);
	}
	if (cdna)
		put_int(b, m, ".agpr_count", k->agprs);
	put_int(b, m, ".group_segment_fixed_size", k->group_segment_size);
	put_int(b, m, ".kernarg_segment_align", k->kernarg_align ? k->kernarg_align : 8);
	put_int(b, m, ".kernarg_segment_size", k->kernarg_size);
	if (k->language) {
		put_str(b, m, ".language", k->language);
		CoMd *v = md_new(b, CO_MD_ARRAY, 2);
		put_int(b, v, NULL, k->language_version[0]);
		put_int(b, v, NULL, k->language_version[1]);
		put_node(b, m, ".language_version", v);
	}
	put_int(b, m, ".max_flat_workgroup_size", k->max_flat_workgroup_size ? k->max_flat_workgroup_size : 256);
	put_str(b, m, ".name", k->name);
	put_int(b, m, ".private_segment_fixed_size", k->private_segment_size);
	if (k->reqd_workgroup_size[0] | k->reqd_workgroup_size[1] | k->reqd_workgroup_size[2]) {
		CoMd *v = md_new(b, CO_MD_ARRAY, 3);
		for (int i = 0; i < 3; i++)
			put_int(b, v, NULL, k->reqd_workgroup_size[i]);
		put_node(b, m, ".reqd_workgroup_size", v);
	}
	put_int(b, m, ".sgpr_count", co_sgpr_count(t, k));
	put_int(b, m, ".sgpr_spill_count", k->sgpr_spill_count);
	StrBuf sym = {0};
	sb_printf(&sym, "%s.kd", k->name ? k->name : "");
	if (sym.oom)
		b->oom = 1;
	else
		put_str(b, m, ".symbol", sym.buf);
	sb_free(&sym);
	if (k->uniform_work_group_size)
		put_int(b, m, ".uniform_work_group_size", 1);
	put_bool(b, m, ".uses_dynamic_stack", k->uses_dynamic_stack);
	put_int(b, m, ".vgpr_count", co_vgpr_count(t, k));
	put_int(b, m, ".vgpr_spill_count", k->vgpr_spill_count);
	put_int(b, m, ".wavefront_size", cdna || !k->wave32 ? 64 : 32);
	if (!cdna)
		put_int(b, m, ".workgroup_processor_mode", k->wgp_mode);
	return m;
}

CoMd *co_metadata_build(Arena *a, const Target *t, const CoKernel *k, int n)
{
	Bld b = {a, 0};
	CoMd *doc = md_new(&b, CO_MD_MAP, 3);
	CoMd *ks = md_new(&b, CO_MD_ARRAY, n > 0 ? n : 1);
	for (int i = 0; i < n && !b.oom; i++)
		put_node(&b, ks, NULL, kernel_map(&b, t, &k[i]));
	put_node(&b, doc, "amdhsa.kernels", ks);
	StrBuf id = {0};
	co_target_id(t, &id);
	if (id.oom)
		b.oom = 1;
	else
		put_str(&b, doc, "amdhsa.target", id.buf);
	sb_free(&id);
	CoMd *ver = md_new(&b, CO_MD_ARRAY, 2);
	put_int(&b, ver, NULL, 1);
	put_int(&b, ver, NULL, 2);
	put_node(&b, doc, "amdhsa.version", ver);
	return b.oom ? NULL : doc;
}

/* ---- msgpack out -------------------------------------------------------- */

/* LLVM's msgpack::Document keeps maps in std::map order: string keys sorted
 * bytewise.  Sort an array of pointers to the keys (each value follows its
 * key), leave the tree as built; no global state, so threads may pack at once. */
static int key_cmp(const void *x, const void *y)
{
	const CoMd *a = *(const CoMd *const *)x, *b = *(const CoMd *const *)y;
	if (a->kind != CO_MD_STR || b->kind != CO_MD_STR)
		return (a->kind > b->kind) - (a->kind < b->kind);
	return strcmp(a->s, b->s);
}

static int pack(msgpack_packer *pk, const CoMd *m, int depth)
{
	if (depth > 64)
		return -1;
	switch (m->kind) {
	case CO_MD_NIL:
		return msgpack_pack_nil(pk);
	case CO_MD_BOOL:
		return m->i ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	case CO_MD_INT:
		return m->i >= 0 ? msgpack_pack_uint64(pk, (uint64_t)m->i) : msgpack_pack_int64(pk, m->i);
	case CO_MD_STR: {
		size_t n = strlen(m->s);
		return msgpack_pack_str(pk, n) || msgpack_pack_str_body(pk, m->s, n) ? -1 : 0;
	}
	case CO_MD_ARRAY:
		if (msgpack_pack_array(pk, (size_t)m->n))
			return -1;
		for (int i = 0; i < m->n; i++)
			if (pack(pk, &m->items[i], depth + 1))
				return -1;
		return 0;
	case CO_MD_MAP: {
		if (msgpack_pack_map(pk, (size_t)m->n))
			return -1;
		const CoMd **ord = malloc(sizeof *ord * (size_t)(m->n ? m->n : 1));
		if (!ord)
			return -1;
		for (int i = 0; i < m->n; i++)
			ord[i] = &m->items[2 * i];
		/* qsort is not stable, but keys are unique. */
		qsort(ord, (size_t)m->n, sizeof *ord, key_cmp);
		int rc = 0;
		for (int i = 0; i < m->n && !rc; i++)
			rc = pack(pk, ord[i], depth + 1) || pack(pk, ord[i] + 1, depth + 1);
		free(ord);
		return rc ? -1 : 0;
	}
	}
	return -1;
}

int co_metadata_pack(const CoMd *doc, uint8_t **out, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (pack(&pk, doc, 0)) {
		msgpack_sbuffer_destroy(&sb);
		return -1;
	}
	*out = (uint8_t *)sb.data; /* msgpack_sbuffer uses malloc/realloc: caller frees */
	*len = sb.size;
	if (!*out) { /* empty buffer never happens for a map, but keep free() safe */
		*out = malloc(1);
		return *out ? 0 : -1;
	}
	return 0;
}

/* ---- msgpack in --------------------------------------------------------- */

typedef struct {
	const uint8_t *p, *end;
	Arena *a;
	Diag *d;
	const char *err;
} Rd;

static int need(Rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->err = "truncated msgpack data";
		return -1;
	}
	return 0;
}
static uint64_t be(Rd *r, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | r->p[i];
	r->p += n;
	return v;
}

static int unpack(Rd *r, CoMd *m, int depth)
{
	if (depth > 32) {
		r->err = "msgpack nesting too deep";
		return -1;
	}
	if (need(r, 1))
		return -1;
	uint8_t c = *r->p++;
	uint64_t n = 0;
	int map = 0;
	memset(m, 0, sizeof *m);
	if (c <= 0x7f || c >= 0xe0) {
		m->kind = CO_MD_INT;
		m->i = (int8_t)c;
		if (c <= 0x7f)
			m->i = c;
		return 0;
	}
	if ((c & 0xe0) == 0xa0) {
		n = c & 0x1f;
		goto str;
	}
	if ((c & 0xf0) == 0x90) {
		n = c & 0x0f;
		goto arr;
	}
	if ((c & 0xf0) == 0x80) {
		n = c & 0x0f;
		map = 1;
		goto arr;
	}
	switch (c) {
	case 0xc0:
		m->kind = CO_MD_NIL;
		return 0;
	case 0xc2:
	case 0xc3:
		m->kind = CO_MD_BOOL;
		m->i = c == 0xc3;
		return 0;
	case 0xcc: case 0xcd: case 0xce: case 0xcf: {
		int w = 1 << (c - 0xcc);
		if (need(r, (size_t)w))
			return -1;
		uint64_t v = be(r, w);
		if (v > INT64_MAX) {
			r->err = "msgpack integer out of range";
			return -1;
		}
		m->kind = CO_MD_INT;
		m->i = (int64_t)v;
		return 0;
	}
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
		int w = 1 << (c - 0xd0);
		if (need(r, (size_t)w))
			return -1;
		uint64_t v = be(r, w);
		m->kind = CO_MD_INT;
		m->i = w == 8 ? (int64_t)v : (int64_t)(v ^ (1ull << (8 * w - 1))) - (int64_t)(1ull << (8 * w - 1));
		return 0;
	}
	case 0xd9: case 0xda: case 0xdb: {
		int w = 1 << (c - 0xd9);
		if (need(r, (size_t)w))
			return -1;
		n = be(r, w);
		goto str;
	}
	case 0xdc: case 0xdd: {
		int w = c == 0xdc ? 2 : 4;
		if (need(r, (size_t)w))
			return -1;
		n = be(r, w);
		goto arr;
	}
	case 0xde: case 0xdf: {
		int w = c == 0xde ? 2 : 4;
		if (need(r, (size_t)w))
			return -1;
		n = be(r, w);
		map = 1;
		goto arr;
	}
	default:
		r->err = "unsupported msgpack type (float, binary or extension) in metadata";
		return -1;
	}
str:
	if (need(r, n))
		return -1;
	if (memchr(r->p, 0, n)) {
		r->err = "NUL byte in msgpack string";
		return -1;
	}
	m->kind = CO_MD_STR;
	m->s = arena_strndup(r->a, (const char *)r->p, n);
	if (!m->s) {
		r->err = "out of memory";
		return -1;
	}
	r->p += n;
	return 0;
arr:
	/* Every element takes at least one byte: reject counts the remaining
	 * bytes cannot hold before allocating anything. */
	if (n > (uint64_t)(r->end - r->p) / (map ? 2 : 1)) {
		r->err = "msgpack array or map larger than the note";
		return -1;
	}
	m->kind = map ? CO_MD_MAP : CO_MD_ARRAY;
	m->n = (int)n;
	if (n) {
		m->items = arena_alloc(r->a, sizeof(CoMd) * n * (map ? 2 : 1));
		if (!m->items) {
			r->err = "out of memory";
			return -1;
		}
	}
	for (uint64_t i = 0; i < n * (map ? 2 : 1); i++)
		if (unpack(r, &m->items[i], depth + 1))
			return -1;
	return 0;
}

int co_metadata_unpack(Arena *a, const uint8_t *p, size_t n, CoMd **out, Diag *d)
{
	Rd r = {p, p + n, a, d, NULL};
	CoMd *m = arena_alloc(a, sizeof *m);
	if (!m) {
		diag_error(d, "out of memory");
		return -1;
	}
	if (unpack(&r, m, 0)) {
		diag_error(d, "bad metadata note: %s at byte %zu", r.err, (size_t)(r.p - p));
		return -1;
	}
	if (r.p != r.end) {
		diag_error(d, "bad metadata note: %zu bytes of garbage after the msgpack document",
			   (size_t)(r.end - r.p));
		return -1;
	}
	if (m->kind != CO_MD_MAP) {
		diag_error(d, "bad metadata note: the document is not a map");
		return -1;
	}
	*out = m;
	return 0;
}

/* ---- YAML out (llvm-readelf --notes style) ------------------------------ */

static void indent(StrBuf *sb, int n)
{
	for (int i = 0; i < n; i++)
		sb_putc(sb, ' ');
}

static int needs_quotes(const char *s)
{
	static const char *const words[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"};
	if (!*s || strchr("- :+^", s[0]) || (s[0] >= '0' && s[0] <= '9') || s[strlen(s) - 1] == ' ')
		return 1;
	for (size_t i = 0; i < TA_ARRAY_LEN(words); i++)
		if (!strcasecmp(s, words[i]))
			return 1;
	for (const char *c = s; *c; c++)
		if (!(isalnum((unsigned char)*c) || strchr(" -_./:+^", *c)))
			return 1;
	return 0;
}

static void scalar(StrBuf *sb, const CoMd *m)
{
	switch (m->kind) {
	case CO_MD_NIL: sb_puts(sb, "~"); break;
	case CO_MD_BOOL: sb_puts(sb, m->i ? "true" : "false"); break;
	case CO_MD_INT: sb_printf(sb, "%lld", (long long)m->i); break;
	case CO_MD_STR:
		/* Quote what YAML would read as something else: characters
		 * outside a safe set (like LLVM's YAML writer), a leading
		 * indicator or digit, and the YAML 1.1 booleans/null. */
		if (needs_quotes(m->s)) {
			sb_putc(sb, '\'');
			for (const char *c = m->s; *c; c++) {
				if (*c == '\'')
					sb_putc(sb, '\'');
				sb_putc(sb, *c);
			}
			sb_putc(sb, '\'');
		} else {
			sb_puts(sb, m->s);
		}
		break;
	default: break;
	}
}

static void yaml(StrBuf *sb, const CoMd *m, int ind, int depth)
{
	if (depth > 32)
		return;
	if (m->kind == CO_MD_MAP) {
		for (int i = 0; i < m->n; i++) {
			if (i)
				indent(sb, ind);
			scalar(sb, &m->items[2 * i]);
			const CoMd *v = &m->items[2 * i + 1];
			if ((v->kind == CO_MD_MAP || v->kind == CO_MD_ARRAY) && v->n) {
				sb_puts(sb, ":\n");
				indent(sb, ind + 2);
				yaml(sb, v, ind + 2, depth + 1);
			} else {
				sb_puts(sb, ": ");
				if (v->kind == CO_MD_MAP || v->kind == CO_MD_ARRAY)
					sb_puts(sb, v->kind == CO_MD_MAP ? "{}\n" : "[]\n");
				else {
					scalar(sb, v);
					sb_putc(sb, '\n');
				}
			}
		}
	} else if (m->kind == CO_MD_ARRAY) {
		for (int i = 0; i < m->n; i++) {
			if (i)
				indent(sb, ind);
			sb_puts(sb, "- ");
			const CoMd *v = &m->items[i];
			if ((v->kind == CO_MD_MAP || v->kind == CO_MD_ARRAY) && v->n)
				yaml(sb, v, ind + 2, depth + 1);
			else {
				scalar(sb, v);
				sb_putc(sb, '\n');
			}
		}
	} else {
		scalar(sb, m);
		sb_putc(sb, '\n');
	}
}

void co_metadata_print(const CoMd *doc, StrBuf *sb)
{
	sb_puts(sb, "---\n");
	if (doc)
		yaml(sb, doc, 0, 0);
	sb_puts(sb, "...\n");
}
