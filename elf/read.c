/* read.c — parse an HSA code object back into kernels.
 *
 * Input is untrusted (a file named on the command line): every offset and
 * size is checked against the buffer before use, with overflow-safe
 * comparisons, and every problem becomes one clear Diag error.  Kernels are
 * found the way ROCr finds them: symbols named NAME.kd pointing at 64-byte
 * descriptors; the code entry is the descriptor's address plus its
 * KERNEL_CODE_ENTRY_BYTE_OFFSET. */
#include "codeobj.h"

#include <elf.h>

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* [off, off+size) inside [0, n)? */
static int in_file(uint64_t off, uint64_t size, size_t n) { return off <= n && size <= n - off; }

typedef struct {
	uint32_t name, type;
	uint64_t flags, addr, off, size, link, info, entsize;
} Shdr;

typedef struct {
	const uint8_t *p;
	size_t n;
	Shdr *sh;
	int nsh;
	Diag *d;
	CoObject *o;
} Rd;

static int bad(Rd *r, const char *what)
{
	diag_error(r->d, "not a valid AMD code object: %s", what);
	return -1;
}

/* NUL-terminated string at `off` within string section `si`, or NULL. */
static const char *strat(Rd *r, uint64_t si, uint64_t off)
{
	if (si >= (uint64_t)r->nsh || r->sh[si].type == SHT_NOBITS || off >= r->sh[si].size)
		return NULL;
	const char *s = (const char *)r->p + r->sh[si].off + off;
	return memchr(s, 0, r->sh[si].size - off) ? s : NULL;
}

static int target_from_flags(uint32_t f, Target *t)
{
	memset(t, 0, sizeof *t);
	switch (f & 0xff) {
	case 0x41: t->id = TA_TARGET_GFX1100; break;
	case 0x3f: t->id = TA_TARGET_GFX90A; break;
	case 0x4c: t->id = TA_TARGET_GFX942; break;
	default: return -1;
	}
	/* 0 unsupported / 1 any -> FEAT_ANY, 2 off, 3 on */
	static const TargetFeature feat[4] = {FEAT_ANY, FEAT_ANY, FEAT_OFF, FEAT_ON};
	t->xnack = feat[(f >> 8) & 3];
	t->sramecc = feat[(f >> 10) & 3];
	return 0;
}

/* ---- metadata into CoKernel --------------------------------------------- */

static int md_int(const CoMd *m, const char *key, int64_t lo, int64_t hi, int64_t *v)
{
	const CoMd *x = co_md_get(m, key);
	if (!x)
		return 0;
	if ((x->kind != CO_MD_INT && x->kind != CO_MD_BOOL) || x->i < lo || x->i > hi)
		return -1;
	*v = x->i;
	return 1;
}

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

/* Fills metadata fields of k from kernel map m; -1 + Diag on a wrong type. */
static int kernel_md(Rd *r, const CoMd *m, CoKernel *k)
{
	const char *nm = k->name;
	int64_t v;
	static const struct {
		const char *key;
		int64_t hi;
		size_t off;
		int size;
	} ints[] = {
#define F(key, field, hi) {key, hi, offsetof(CoKernel, field), (int)sizeof(((CoKernel *)0)->field)}
		F(".max_flat_workgroup_size", max_flat_workgroup_size, 1 << 16),
		F(".kernarg_segment_align", kernarg_align, 1 << 16),
		F(".sgpr_spill_count", sgpr_spill_count, 1 << 20),
		F(".vgpr_spill_count", vgpr_spill_count, 1 << 20),
		F(".uniform_work_group_size", uniform_work_group_size, 1),
#undef F
	};
	for (size_t i = 0; i < TA_ARRAY_LEN(ints); i++) {
		int rc = md_int(m, ints[i].key, 0, ints[i].hi, &v);
		if (rc < 0) {
			diag_error(r->d, "bad metadata for kernel '%s': %s is not an integer in range", nm, ints[i].key);
			return -1;
		}
		if (rc) {
			uint8_t *f = (uint8_t *)k + ints[i].off;
			if (ints[i].size == 1)
				*f = (uint8_t)v;
			else if (ints[i].size == 4)
				memcpy(f, &(uint32_t){(uint32_t)v}, 4);
		}
	}
	/* Signed fields that are plain int. */
	if (md_int(m, ".sgpr_spill_count", 0, 1 << 20, &v) > 0)
		k->sgpr_spill_count = (int)v;
	if (md_int(m, ".vgpr_spill_count", 0, 1 << 20, &v) > 0)
		k->vgpr_spill_count = (int)v;
	const CoMd *x;
	if ((x = co_md_get(m, ".language")) && x->kind == CO_MD_STR)
		k->language = x->s;
	if ((x = co_md_get(m, ".language_version")) && x->kind == CO_MD_ARRAY && x->n == 2 &&
	    x->items[0].kind == CO_MD_INT && x->items[1].kind == CO_MD_INT) {
		k->language_version[0] = (int)x->items[0].i;
		k->language_version[1] = (int)x->items[1].i;
	}
	if ((x = co_md_get(m, ".reqd_workgroup_size")) && x->kind == CO_MD_ARRAY && x->n == 3)
		for (int i = 0; i < 3; i++)
			k->reqd_workgroup_size[i] = x->items[i].kind == CO_MD_INT ? (uint32_t)x->items[i].i : 0;
	if ((x = co_md_get(m, ".uses_dynamic_stack")) && x->kind == CO_MD_BOOL)
		k->uses_dynamic_stack = (uint8_t)x->i;
	x = co_md_get(m, ".args");
	if (!x)
		return 0;
	if (x->kind != CO_MD_ARRAY) {
		diag_error(r->d, "bad metadata for kernel '%s': .args is not an array", nm);
		return -1;
	}
	CoArg *args = x->n ? arena_alloc(&r->o->arena, sizeof *args * (size_t)x->n) : NULL;
	if (x->n && !args) {
		diag_error(r->d, "out of memory");
		return -1;
	}
	for (int i = 0; i < x->n; i++) {
		const CoMd *a = &x->items[i];
		CoArg *g = &args[i];
		int64_t off, size;
		const CoMd *vk = co_md_get(a, ".value_kind");
		if (a->kind != CO_MD_MAP || md_int(a, ".offset", 0, UINT32_MAX, &off) != 1 ||
		    md_int(a, ".size", 0, UINT32_MAX, &size) != 1 || !vk || vk->kind != CO_MD_STR) {
			diag_error(r->d, "bad metadata for kernel '%s': argument %d needs integer .offset, "
				   ".size and a .value_kind string", nm, i);
			return -1;
		}
		g->offset = (uint32_t)off;
		g->size = (uint32_t)size;
		int e = lookup(co_value_kind_name, CO_VK_COUNT, vk->s);
		if (e < 0) {
			diag_error(r->d, "bad metadata for kernel '%s': argument %d has unknown .value_kind '%s'",
				   nm, i, vk->s);
			return -1;
		}
		g->value_kind = (CoValueKind)e;
		const CoMd *s;
		if ((s = co_md_get(a, ".name")) && s->kind == CO_MD_STR)
			g->name = s->s;
		if ((s = co_md_get(a, ".type_name")) && s->kind == CO_MD_STR)
			g->type_name = s->s;
		if ((s = co_md_get(a, ".address_space")) && s->kind == CO_MD_STR)
			g->address_space = (CoAddrSpace)TA_MAX(0, lookup(co_addr_space_name, CO_AS_COUNT, s->s));
		if ((s = co_md_get(a, ".access")) && s->kind == CO_MD_STR)
			g->access = (CoAccess)TA_MAX(0, lookup(co_access_name, CO_ACC_COUNT, s->s));
		if ((s = co_md_get(a, ".actual_access")) && s->kind == CO_MD_STR)
			g->actual_access = (CoAccess)TA_MAX(0, lookup(co_access_name, CO_ACC_COUNT, s->s));
		if ((s = co_md_get(a, ".is_const")) && s->kind == CO_MD_BOOL)
			g->is_const = (uint8_t)s->i;
		if ((s = co_md_get(a, ".is_restrict")) && s->kind == CO_MD_BOOL)
			g->is_restrict = (uint8_t)s->i;
		if ((s = co_md_get(a, ".is_volatile")) && s->kind == CO_MD_BOOL)
			g->is_volatile = (uint8_t)s->i;
	}
	k->args = args;
	k->nargs = x->n;
	return 0;
}

/* Finds the NT_AMDGPU_METADATA note and decodes it into o->metadata. */
static int read_notes(Rd *r)
{
	for (int i = 0; i < r->nsh; i++) {
		if (r->sh[i].type != SHT_NOTE)
			continue;
		const uint8_t *p = r->p + r->sh[i].off;
		uint64_t n = r->sh[i].size, at = 0;
		while (at < n) {
			if (n - at < 12)
				return bad(r, "truncated note header");
			uint32_t namesz = rd32(p + at), descsz = rd32(p + at + 4), type = rd32(p + at + 8);
			uint64_t name_end = at + 12 + (((uint64_t)namesz + 3) & ~3ull);
			uint64_t desc_end = name_end + (((uint64_t)descsz + 3) & ~3ull);
			if (name_end > n || name_end + descsz > n)
				return bad(r, "note record runs past its section");
			if (namesz == 7 && !memcmp(p + at + 12, "AMDGPU", 7) && type == 32) {
				if (r->o->metadata)
					return bad(r, "two metadata notes");
				if (co_metadata_unpack(&r->o->arena, p + name_end, descsz, &r->o->metadata, r->d))
					return -1;
			}
			at = desc_end;
		}
	}
	return 0;
}

static int kd_order(const void *x, const void *y)
{
	const CoKernelInfo *a = x, *b = y;
	return (a->kd_vaddr > b->kd_vaddr) - (a->kd_vaddr < b->kd_vaddr);
}

/* Function symbols sorted by address, name, then table order: each kernel
 * finds its code size by a binary search, not a scan of every symbol
 * (kernels x symbols was quadratic on untrusted input). */
typedef struct {
	uint64_t value, size, index;
	const char *name;
} FuncSym;

static int func_order(const void *x, const void *y)
{
	const FuncSym *a = x, *b = y;
	if (a->value != b->value)
		return (a->value > b->value) - (a->value < b->value);
	int c = strcmp(a->name, b->name);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Kernels by name (then index), for matching metadata by .symbol. */
typedef struct {
	const char *name;
	int i;
} KName;

static int kname_order(const void *x, const void *y)
{
	const KName *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* strcmp of name against the first klen bytes of key as a string. */
static int cmp_key(const char *name, const char *key, size_t klen)
{
	int c = strncmp(name, key, klen);
	return c ? c : name[klen] != 0;
}

int co_read(const uint8_t *p, size_t n, CoObject **out, Diag *d)
{
	*out = NULL;
	Rd r = {p, n, NULL, 0, d, NULL};
	KName *kn = NULL; /* kernels by name, freed on every exit */
	if (!p || n < 64 || memcmp(p, "\x7f" "ELF", 4))
		return bad(&r, n < 64 ? "file too short for an ELF header" : "no ELF magic");
	if (p[EI_CLASS] != ELFCLASS64 || p[EI_DATA] != ELFDATA2LSB)
		return bad(&r, "not a 64-bit little-endian ELF file");
	if (rd16(p + 18) != EM_AMDGPU) {
		diag_error(d, "not an AMD code object: ELF machine %u is not EM_AMDGPU (224)", rd16(p + 18));
		return -1;
	}
	if (rd16(p + 16) != ET_DYN)
		return bad(&r, "not a linked code object (ET_DYN); link relocatable objects first");
	if (p[EI_OSABI] != 64)
		return bad(&r, "EI_OSABI is not AMDGPU_HSA (64)");
	Target t;
	uint32_t flags = rd32(p + 48);
	if (target_from_flags(flags, &t)) {
		diag_error(d, "unsupported AMD processor in e_flags 0x%x (tileasm knows gfx1100, gfx90a, gfx942)", flags);
		return -1;
	}
	uint64_t shoff = rd64(p + 40);
	uint16_t shentsize = rd16(p + 58), shnum = rd16(p + 60), shstrndx = rd16(p + 62);
	if (shentsize != 64 || !shnum || !in_file(shoff, (uint64_t)shnum * 64, n))
		return bad(&r, "section header table out of bounds");
	if (shstrndx >= shnum)
		return bad(&r, "bad section name table index");

	CoObject *o = calloc(1, sizeof *o);
	if (!o) {
		diag_error(d, "out of memory");
		return -1;
	}
	r.o = o;
	o->target = t;
	o->e_flags = flags;
	o->abi_version = p[EI_ABIVERSION];
	r.nsh = shnum;
	r.sh = arena_alloc(&o->arena, sizeof(Shdr) * shnum);
	if (!r.sh)
		goto oom;
	for (int i = 0; i < shnum; i++) {
		const uint8_t *s = p + shoff + 64 * (uint64_t)i;
		Shdr *h = &r.sh[i];
		*h = (Shdr){rd32(s), rd32(s + 4), rd64(s + 8), rd64(s + 16), rd64(s + 24), rd64(s + 32),
			    rd32(s + 40), rd32(s + 44), rd64(s + 56)};
		if (h->type != SHT_NOBITS && h->type != SHT_NULL && !in_file(h->off, h->size, n)) {
			diag_error(d, "not a valid AMD code object: section %d lies outside the file", i);
			goto fail;
		}
		if (h->type == SHT_NULL)
			h->size = 0;
	}

	if (read_notes(&r))
		goto fail;

	/* Symbols: .symtab if present (ROCr requires it), else .dynsym. */
	int symi = -1;
	for (int i = 0; i < shnum; i++)
		if (r.sh[i].type == SHT_SYMTAB || (symi < 0 && r.sh[i].type == SHT_DYNSYM))
			symi = i;
	if (symi < 0)
		return co_object_free(o), bad(&r, "no symbol table");
	Shdr *st = &r.sh[symi];
	if (st->entsize != 24 || st->size % 24 || st->link >= shnum)
		return co_object_free(o), bad(&r, "malformed symbol table");

	VEC(CoKernelInfo) ks = {0};
	uint64_t nsym = st->size / 24;
	for (uint64_t i = 1; i < nsym; i++) {
		const uint8_t *s = p + st->off + 24 * i;
		const char *nm = strat(&r, st->link, rd32(s));
		uint16_t shndx = rd16(s + 6);
		uint64_t value = rd64(s + 8);
		if (!nm) {
			vec_free(&ks);
			diag_error(d, "not a valid AMD code object: symbol %llu has a bad name", (unsigned long long)i);
			goto fail;
		}
		size_t len = strlen(nm);
		if (len < 4 || strcmp(nm + len - 3, ".kd") || ELF64_ST_BIND(s[4]) == STB_LOCAL)
			continue;
		if (shndx == 0 || shndx >= shnum || r.sh[shndx].type == SHT_NOBITS ||
		    value < r.sh[shndx].addr || value - r.sh[shndx].addr > r.sh[shndx].size ||
		    r.sh[shndx].size - (value - r.sh[shndx].addr) < CO_KD_SIZE) {
			vec_free(&ks);
			diag_error(d, "not a valid AMD code object: descriptor '%s' lies outside its section", nm);
			goto fail;
		}
		CoKernelInfo ki;
		memset(&ki, 0, sizeof ki);
		ki.k.name = arena_strndup(&o->arena, nm, len - 3);
		if (!ki.k.name || vec_push(&ks, ki)) {
			vec_free(&ks);
			goto oom;
		}
		CoKernelInfo *kp = &ks.data[ks.len - 1];
		kp->kd_vaddr = value;
		memcpy(kp->kd, p + r.sh[shndx].off + (value - r.sh[shndx].addr), CO_KD_SIZE);
	}
	if (!ks.len) {
		vec_free(&ks);
		co_object_free(o);
		return bad(&r, "no kernel descriptors (no NAME.kd symbols)");
	}
	qsort(ks.data, ks.len, sizeof *ks.data, kd_order);
	o->kernels = arena_alloc(&o->arena, sizeof *o->kernels * ks.len);
	if (!o->kernels) {
		vec_free(&ks);
		goto oom;
	}
	memcpy(o->kernels, ks.data, sizeof *ks.data * ks.len);
	o->nkernels = (int)ks.len;
	vec_free(&ks);
	/* Kernels by name: two descriptors of one name (a symbol table no
	 * linker writes; ROCr could load either) are refused, and metadata
	 * below finds its kernel by a binary search. */
	kn = malloc(sizeof *kn * (size_t)o->nkernels);
	if (!kn)
		goto oom;
	for (int i = 0; i < o->nkernels; i++)
		kn[i] = (KName){o->kernels[i].k.name, i};
	qsort(kn, (size_t)o->nkernels, sizeof *kn, kname_order);
	for (int i = 1; i < o->nkernels; i++)
		if (!strcmp(kn[i - 1].name, kn[i].name)) {
			diag_error(d, "not a valid AMD code object: kernel '%s' has two descriptors (%s.kd is defined twice)",
				   kn[i].name, kn[i].name);
			goto fail;
		}

	/* .text: the executable section holding the first entry; every entry
	 * must be inside it. */
	int texti = -1;
	size_t nfs = 0;
	FuncSym *fs = malloc(sizeof *fs * (size_t)(nsym ? nsym : 1));
	if (!fs)
		goto oom;
	for (uint64_t s = 1; s < nsym; s++) {
		const uint8_t *sp = p + st->off + 24 * s;
		const char *nm = strat(&r, st->link, rd32(sp)); /* checked above */
		if (nm && ELF64_ST_TYPE(sp[4]) == STT_FUNC)
			fs[nfs++] = (FuncSym){rd64(sp + 8), rd64(sp + 16), s, nm};
	}
	qsort(fs, nfs, sizeof *fs, func_order);
	for (int i = 0; i < o->nkernels; i++) {
		CoKernelInfo *ki = &o->kernels[i];
		co_descriptor_decode(ki->kd, &ki->desc);
		co_descriptor_to_kernel(&t, &ki->desc, &ki->k);
		ki->entry_vaddr = ki->kd_vaddr + (uint64_t)ki->desc.kernel_code_entry_byte_offset;
		if (texti < 0)
			for (int j = 0; j < shnum; j++)
				if ((r.sh[j].flags & SHF_EXECINSTR) && r.sh[j].type == SHT_PROGBITS &&
				    ki->entry_vaddr >= r.sh[j].addr && ki->entry_vaddr - r.sh[j].addr < r.sh[j].size)
					texti = j;
		if (texti < 0 || ki->entry_vaddr < r.sh[texti].addr ||
		    ki->entry_vaddr - r.sh[texti].addr >= r.sh[texti].size) {
			diag_error(d, "not a valid AMD code object: kernel '%s' entry 0x%llx is outside the code",
				   ki->k.name, (unsigned long long)ki->entry_vaddr);
			free(fs);
			goto fail;
		}
		ki->k.text_offset = (uint32_t)(ki->entry_vaddr - r.sh[texti].addr);
		/* Code size from the function symbol, else up to the next entry/end;
		 * the symbols named so at the entry, in table order, each taken when
		 * no larger than the size so far. */
		ki->k.code_size = r.sh[texti].size - ki->k.text_offset;
		size_t lo = 0, hi = nfs;
		while (lo < hi) { /* first symbol not before (entry, name) */
			size_t mid = (lo + hi) / 2;
			int c = fs[mid].value != ki->entry_vaddr ? (fs[mid].value < ki->entry_vaddr ? -1 : 1)
								  : strcmp(fs[mid].name, ki->k.name);
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nfs && fs[lo].value == ki->entry_vaddr && !strcmp(fs[lo].name, ki->k.name); lo++)
			if (fs[lo].size <= ki->k.code_size)
				ki->k.code_size = fs[lo].size;
	}
	free(fs);
	o->text_vaddr = r.sh[texti].addr;
	o->text_size = r.sh[texti].size;
	uint8_t *text = arena_alloc(&o->arena, o->text_size ? o->text_size : 1);
	if (!text)
		goto oom;
	memcpy(text, p + r.sh[texti].off, o->text_size);
	o->text = text;

	/* Metadata per kernel, matched by .symbol (or .name). */
	if (o->metadata) {
		const CoMd *ks_md = co_md_get(o->metadata, "amdhsa.kernels");
		if (ks_md && ks_md->kind != CO_MD_ARRAY) {
			diag_error(d, "bad metadata: amdhsa.kernels is not an array");
			goto fail;
		}
		for (int j = 0; ks_md && j < ks_md->n; j++) {
			const CoMd *m = &ks_md->items[j];
			const CoMd *sym = co_md_get(m, ".symbol"), *name = co_md_get(m, ".name");
			if (m->kind != CO_MD_MAP || !sym || sym->kind != CO_MD_STR || !name || name->kind != CO_MD_STR) {
				diag_error(d, "bad metadata: kernel %d needs .name and .symbol strings", j);
				goto fail;
			}
			/* The kernels named .symbol less ".kd", in index order. */
			size_t ls = strlen(sym->s);
			if (ls < 3 || strcmp(sym->s + ls - 3, ".kd"))
				continue;
			size_t lo = 0, hi = (size_t)o->nkernels;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (cmp_key(kn[mid].name, sym->s, ls - 3) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < (size_t)o->nkernels && !cmp_key(kn[lo].name, sym->s, ls - 3); lo++) {
				CoKernelInfo *ki = &o->kernels[kn[lo].i];
				ki->md = m;
				if (kernel_md(&r, m, &ki->k)) {
					goto fail;
				}
			}
		}
	}
	free(kn);
	*out = o;
	return 0;
oom:
	diag_error(d, "out of memory");
fail:
	free(kn);
	co_object_free(o);
	return -1;
}

void co_object_free(CoObject *o)
{
	if (!o)
		return;
	arena_free(&o->arena);
	free(o);
}
