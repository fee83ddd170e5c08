/* write.c — a linked HSA code object, laid out as `ld.lld-19 -shared` lays
 * out the object llvm-mc makes from the same kernels:
 *
 *   ELF header, 8 program headers
 *   .note .dynsym .gnu.hash .hash .dynstr .rodata      LOAD R   (file offset 0)
 *   .text                                              LOAD R E (next page)
 *   .dynamic .relro_padding                            LOAD RW  (next page)
 *   .comment .symtab .shstrtab .strtab, section headers
 *
 * Each new LOAD starts at align(dot, page) + dot % page, the lld rule that
 * keeps file offsets dense while vaddr = offset (mod page).  The output is a
 * pure function of the input: the buffer is zeroed before anything is placed,
 * and no time stamps or paths are written. */
#include "codeobj.h"

#include <elf.h>

#define PAGE 0x1000u
#define NPHDR 8
#define NT_AMDGPU_METADATA 32
#define ELFOSABI_AMDGPU_HSA_ 64
#define ELFABIVERSION_AMDGPU_HSA_V5 3
#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

/* Section indices, in file order. */
enum { S_NULL, S_NOTE, S_DYNSYM, S_GNUHASH, S_HASH, S_DYNSTR, S_RODATA, S_TEXT, S_DYNAMIC,
       S_RELRO, S_COMMENT, S_SYMTAB, S_SHSTRTAB, S_STRTAB, S_COUNT };

uint32_t co_elf_flags(const Target *t)
{
	static const uint32_t feat[3] = {0x1, 0x2, 0x3}; /* FEAT_ANY, FEAT_OFF, FEAT_ON */
	switch (t->id) {
	case TA_TARGET_GFX1100:
		return 0x041; /* no xnack or sramecc */
	case TA_TARGET_GFX90A:
		return 0x03f | feat[t->xnack] << 8 | feat[t->sramecc] << 10;
	case TA_TARGET_GFX942:
		return 0x04c | feat[t->xnack] << 8 | feat[t->sramecc] << 10;
	default:
		return 0;
	}
}

static uint64_t align_to(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }
/* Smallest x >= off with x = va (mod PAGE): a segment's first file offset. */
static uint64_t congruent(uint64_t off, uint64_t va)
{
	uint64_t x = (off & ~(uint64_t)(PAGE - 1)) + (va & (PAGE - 1));
	return x < off ? x + PAGE : x;
}
/* lld: a new PT_LOAD starts at align(dot, page) + dot % page. */
static uint64_t next_segment(uint64_t dot) { return align_to(dot, PAGE) + dot % PAGE; }

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0;
	for (; *s; s++) {
		h = (h << 4) + (uint8_t)*s;
		uint32_t g = h & 0xf0000000;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}
static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

/* Code-end padding (LLVM AMDGPUTargetStreamer::EmitCodeEnd): keep the
 * instruction prefetcher inside mapped, harmless code.  gfx11 fills with
 * s_code_end to a 128-byte line and 3 more lines; gfx90a/gfx942 with s_nop 0
 * to a 64-byte line and 16 more lines. */
#define S_NOP_0 0xbf800000u
#define S_CODE_END_GFX11 0xbf9f0000u
static void code_end(const Target *t, uint32_t *word, uint32_t *line, uint32_t *fill)
{
	if (t->id == TA_TARGET_GFX1100) {
		*word = S_CODE_END_GFX11, *line = 128, *fill = 3 * 128;
	} else {
		*word = S_NOP_0, *line = 64, *fill = 16 * 64;
	}
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Fills [from, to) of a 4-byte aligned text with `word` (zeros for a tail
 * that is not a multiple of 4, as LLVM's writeNopData does). */
static void fill_words(uint8_t *text, size_t from, size_t to, uint32_t word)
{
	size_t z = (to - from) % 4;
	memset(text + from, 0, z);
	for (size_t o = from + z; o + 4 <= to; o += 4)
		put32(text + o, word);
}

int co_layout_text(const Target *t, CoKernel *k, int n, uint8_t **text, size_t *len, Diag *d)
{
	uint32_t word, line, fill;
	code_end(t, &word, &line, &fill);
	uint64_t off = 0;
	for (int i = 0; i < n; i++) {
		if (k[i].code_size > (1u << 30)) {
			diag_error(d, "kernel '%s': code too large", k[i].name ? k[i].name : "?");
			return -1;
		}
		off = align_to(off, 256) + k[i].code_size;
	}
	uint64_t size = align_to(off, line) + fill;
	uint8_t *b = malloc(size);
	if (!b) {
		diag_error(d, "out of memory");
		return -1;
	}
	off = 0;
	for (int i = 0; i < n; i++) {
		uint64_t at = align_to(off, 256);
		fill_words(b, off, at, S_NOP_0); /* .p2align 8 in .text: s_nop 0 */
		k[i].text_offset = (uint32_t)at;
		if (k[i].code_size)
			memcpy(b + at, k[i].code, k[i].code_size);
		off = at + k[i].code_size;
	}
	fill_words(b, off, size, word);
	*text = b;
	*len = size;
	return 0;
}

int co_write(const Target *t, const CoKernel *k, int n, uint8_t **out, size_t *len, Diag *d)
{
	if (n < 0 || (n && !k)) {
		diag_error(d, "co_write: bad kernel list");
		return -1;
	}
	CoKernel *kk = malloc(sizeof *kk * (size_t)(n ? n : 1));
	if (!kk) {
		diag_error(d, "out of memory");
		return -1;
	}
	memcpy(kk, k, sizeof *kk * (size_t)n);
	uint8_t *text = NULL;
	size_t tlen = 0;
	int rc = co_layout_text(t, kk, n, &text, &tlen, d);
	if (!rc)
		rc = co_write_text(t, kk, n, text, tlen, NULL, NULL, out, len, d);
	free(text);
	free(kk);
	return rc;
}

/* A string table under construction ("\0" first, as every ELF strtab). */
typedef struct {
	StrBuf sb;
} Strtab;
static uint32_t str_add(Strtab *st, const char *s)
{
	if (!st->sb.len)
		sb_putc(&st->sb, 0);
	uint32_t off = (uint32_t)st->sb.len;
	sb_puts(&st->sb, s);
	sb_putc(&st->sb, 0);
	return off;
}

typedef struct {
	const char *name;
	int kernel;   /* index in k */
	int is_kd;    /* NAME.kd descriptor (else the code symbol) */
	uint32_t hash, bucket, dynstr;
} DynSym;

static int by_bucket(const void *x, const void *y)
{
	const DynSym *a = x, *b = y;
	if (a->bucket != b->bucket)
		return a->bucket < b->bucket ? -1 : 1;
	/* stable: keep creation order within a bucket, as lld's stable_sort */
	int ia = 2 * a->kernel + a->is_kd, ib = 2 * b->kernel + b->is_kd;
	return (ia > ib) - (ia < ib);
}

typedef struct {
	uint64_t off, addr, size, align;
} Place;

int co_write_text(const Target *t, const CoKernel *k, int n, const uint8_t *text, size_t text_len,
		  const CoMd *md, const CoData *data, uint8_t **out, size_t *len, Diag *d)
{
	static const CoData none = {0};
	if (!data)
		data = &none;
	int nloc = data->nsyms;
	uint32_t dalign = data->align ? data->align : 1;
	if (dalign & (dalign - 1) || dalign > 65536 || nloc < 0 || (nloc && !data->syms)) {
		diag_error(d, "co_write_text: bad .rodata data");
		return -1;
	}
	*out = NULL;
	*len = 0;
	if (!target_is_amd(t->id)) {
		diag_error(d, "code objects are for AMD targets, not %s", target_name(t->id));
		return -1;
	}
	if (n < 1 || n > (1 << 20) || !k) {
		diag_error(d, "a code object needs at least one kernel");
		return -1;
	}
	int rc = -1;
	Arena arena = {0};
	CoDescriptor *kds = calloc((size_t)n, sizeof *kds);
	DynSym *syms = calloc((size_t)2 * n, sizeof *syms);
	uint8_t *mp = NULL, *b = NULL;
	uint32_t *strloc = NULL;
	size_t mplen = 0;
	Strtab dynstr = {0}, strtab = {0}, shstr = {0};
	StrBuf names = {0};
	if (!kds || !syms) {
		diag_error(d, "out of memory");
		goto done;
	}

	/* Kernels: names, placement, descriptors. */
	for (int i = 0; i < n; i++) {
		const char *nm = k[i].name;
		if (!nm || !*nm || strlen(nm) > 4096) {
			diag_error(d, "kernel %d has no name", i);
			goto done;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(k[j].name, nm)) {
				diag_error(d, "duplicate kernel name '%s'", nm);
				goto done;
			}
		if (k[i].text_offset % 256 || k[i].text_offset > text_len ||
		    k[i].code_size > text_len - k[i].text_offset) {
			diag_error(d, "kernel '%s': entry 0x%x (+%zu bytes) is not 256-byte aligned inside .text (%zu bytes)",
				   nm, k[i].text_offset, k[i].code_size, text_len);
			goto done;
		}
		if (co_descriptor(t, &k[i], &kds[i], d))
			goto done;
	}

	/* Metadata note desc. */
	if (!md)
		md = co_metadata_build(&arena, t, k, n);
	if (!md || co_metadata_pack(md, &mp, &mplen)) {
		diag_error(d, "out of memory building metadata");
		goto done;
	}

	/* Dynamic symbols: NAME and NAME.kd per kernel, then sorted by GNU hash
	 * bucket as lld sorts .dynsym. */
	int nsym = 2 * n;
	uint32_t nbuckets = (uint32_t)TA_MAX(nsym / 4, 1);
	for (int i = 0; i < nsym; i++) {
		syms[i].kernel = i / 2;
		syms[i].is_kd = i % 2;
		sb_printf(&names, "%s%s", k[i / 2].name, i % 2 ? ".kd" : "");
		sb_putc(&names, 0);
	}
	if (names.oom) {
		diag_error(d, "out of memory");
		goto done;
	}
	{
		const char *p = names.buf;
		for (int i = 0; i < nsym; i++, p += strlen(p) + 1) {
			syms[i].name = p;
			syms[i].hash = gnu_hash(p);
			syms[i].bucket = syms[i].hash % nbuckets;
			syms[i].dynstr = str_add(&dynstr, p);
		}
	}
	qsort(syms, (size_t)nsym, sizeof *syms, by_bucket);
	/* Bloom filter words: 12 bits per symbol, rounded to the next power of
	 * two strictly above bits/64 (LLVM NextPowerOf2). */
	uint32_t maskwords = 1;
	while (maskwords <= (uint32_t)nsym * 12 / 64)
		maskwords <<= 1;

	/* .symtab: null, _DYNAMIC (local, as lld adds it), then the kernels in
	 * source order. */
	uint32_t str_dynamic = str_add(&strtab, "_DYNAMIC");
	strloc = calloc((size_t)nloc + 1, sizeof *strloc);
	if (!strloc) {
		diag_error(d, "out of memory");
		goto done;
	}
	for (int i = 0; i < nloc; i++)
		strloc[i] = str_add(&strtab, data->syms[i].name);
	uint32_t *strname = calloc((size_t)nsym, sizeof *strname);
	if (!strname) {
		diag_error(d, "out of memory");
		goto done;
	}
	{
		const char *p = names.buf;
		for (int i = 0; i < nsym; i++, p += strlen(p) + 1)
			strname[i] = str_add(&strtab, p);
	}
	static const char *const secname[S_COUNT] = {
		"", ".note", ".dynsym", ".gnu.hash", ".hash", ".dynstr", ".rodata", ".text",
		".dynamic", ".relro_padding", ".comment", ".symtab", ".shstrtab", ".strtab"};
	uint32_t shname[S_COUNT] = {0};
	for (int i = 1; i < S_COUNT; i++)
		shname[i] = str_add(&shstr, secname[i]);
	static const char comment[] = "tileasm " TA_VERSION_STRING;
	if (dynstr.sb.oom || strtab.sb.oom || shstr.sb.oom) {
		diag_error(d, "out of memory");
		free(strname);
		goto done;
	}

	/* Sizes. */
	Place s[S_COUNT] = {{0}};
	size_t notesz = 12 + 8 + align_to(mplen, 4);
	s[S_NOTE] = (Place){.size = notesz, .align = 4};
	s[S_DYNSYM] = (Place){.size = 24 * (uint64_t)(nsym + 1), .align = 8};
	s[S_GNUHASH] = (Place){.size = 16 + 8 * (uint64_t)maskwords + 4 * (uint64_t)nbuckets + 4 * (uint64_t)nsym, .align = 8};
	s[S_HASH] = (Place){.size = 4 * (2 + 2 * (uint64_t)(nsym + 1)), .align = 4};
	s[S_DYNSTR] = (Place){.size = dynstr.sb.len, .align = 1};
	/* .rodata: the descriptors, then the source's own .rodata bytes */
	uint64_t data_off = align_to(CO_KD_SIZE * (uint64_t)n, dalign);
	s[S_RODATA] = (Place){.size = data->len ? data_off + data->len : CO_KD_SIZE * (uint64_t)n,
			      .align = TA_MAX(64, dalign)};
	s[S_TEXT] = (Place){.size = text_len, .align = 256};
	s[S_DYNAMIC] = (Place){.size = 7 * 16, .align = 8};
	s[S_RELRO] = (Place){.align = 1};
	s[S_COMMENT] = (Place){.size = sizeof comment, .align = 1};
	s[S_SYMTAB] = (Place){.size = 24 * (uint64_t)(nsym + 2 + nloc), .align = 8};
	s[S_SHSTRTAB] = (Place){.size = shstr.sb.len, .align = 1};
	s[S_STRTAB] = (Place){.size = strtab.sb.len, .align = 1};

	/* Addresses and offsets. */
	uint64_t off = 64 + NPHDR * 56;
	for (int i = S_NOTE; i <= S_RODATA; i++) {
		off = align_to(off, s[i].align);
		s[i].off = s[i].addr = off;
		off += s[i].size;
	}
	uint64_t dot = off;
	s[S_TEXT].addr = align_to(next_segment(dot), 256);
	s[S_TEXT].off = congruent(off, s[S_TEXT].addr);
	dot = s[S_TEXT].addr + s[S_TEXT].size;
	off = s[S_TEXT].off + s[S_TEXT].size;
	s[S_DYNAMIC].addr = align_to(next_segment(dot), 8);
	s[S_DYNAMIC].off = congruent(off, s[S_DYNAMIC].addr);
	off = s[S_DYNAMIC].off + s[S_DYNAMIC].size;
	/* .relro_padding pads the RELRO region to a page in memory only. */
	s[S_RELRO].addr = s[S_DYNAMIC].addr + s[S_DYNAMIC].size;
	s[S_RELRO].off = off;
	s[S_RELRO].size = align_to(s[S_RELRO].addr, PAGE) - s[S_RELRO].addr;
	for (int i = S_COMMENT; i < S_COUNT; i++) {
		off = align_to(off, s[i].align);
		s[i].off = off;
		off += s[i].size;
	}
	uint64_t shoff = align_to(off, 8);
	uint64_t total = shoff + 64 * S_COUNT;

	b = calloc(1, total);
	if (!b) {
		diag_error(d, "out of memory");
		free(strname);
		goto done;
	}

	/* ELF header. */
	static const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
					  ELFOSABI_AMDGPU_HSA_, ELFABIVERSION_AMDGPU_HSA_V5};
	memcpy(b, ident, 16);
	put16(b + 16, ET_DYN);
	put16(b + 18, EM_AMDGPU);
	put32(b + 20, EV_CURRENT);
	put64(b + 24, 0);  /* e_entry */
	put64(b + 32, 64); /* e_phoff */
	put64(b + 40, shoff);
	put32(b + 48, co_elf_flags(t));
	put16(b + 52, 64);
	put16(b + 54, 56);
	put16(b + 56, NPHDR);
	put16(b + 58, 64);
	put16(b + 60, S_COUNT);
	put16(b + 62, S_SHSTRTAB);

	/* Program headers. */
	struct {
		uint32_t type, flags;
		uint64_t off, addr, filesz, memsz, align;
	} ph[NPHDR] = {
		{PT_PHDR, PF_R, 64, 64, NPHDR * 56, NPHDR * 56, 8},
		{PT_LOAD, PF_R, 0, 0, s[S_RODATA].off + s[S_RODATA].size, s[S_RODATA].off + s[S_RODATA].size, PAGE},
		{PT_LOAD, PF_R | PF_X, s[S_TEXT].off, s[S_TEXT].addr, s[S_TEXT].size, s[S_TEXT].size, PAGE},
		{PT_LOAD, PF_R | PF_W, s[S_DYNAMIC].off, s[S_DYNAMIC].addr, s[S_DYNAMIC].size,
		 s[S_DYNAMIC].size + s[S_RELRO].size, PAGE},
		{PT_DYNAMIC, PF_R | PF_W, s[S_DYNAMIC].off, s[S_DYNAMIC].addr, s[S_DYNAMIC].size, s[S_DYNAMIC].size, 8},
		{PT_GNU_RELRO, PF_R, s[S_DYNAMIC].off, s[S_DYNAMIC].addr, s[S_DYNAMIC].size,
		 s[S_DYNAMIC].size + s[S_RELRO].size, 1},
		{PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0},
		{PT_NOTE, PF_R, s[S_NOTE].off, s[S_NOTE].addr, s[S_NOTE].size, s[S_NOTE].size, 4},
	};
	for (int i = 0; i < NPHDR; i++) {
		uint8_t *p = b + 64 + 56 * i;
		put32(p, ph[i].type);
		put32(p + 4, ph[i].flags);
		put64(p + 8, ph[i].off);
		put64(p + 16, ph[i].addr);
		put64(p + 24, ph[i].addr);
		put64(p + 32, ph[i].filesz);
		put64(p + 40, ph[i].memsz);
		put64(p + 48, ph[i].align);
	}

	/* .note: one NT_AMDGPU_METADATA record, owner "AMDGPU". */
	{
		uint8_t *p = b + s[S_NOTE].off;
		put32(p, 7);
		put32(p + 4, (uint32_t)mplen);
		put32(p + 8, NT_AMDGPU_METADATA);
		memcpy(p + 12, "AMDGPU", 7);
		memcpy(p + 20, mp, mplen);
	}

	/* Symbol values. */
	uint16_t symshndx[2] = {S_TEXT, S_RODATA};
	uint8_t symtype[2] = {STT_FUNC, STT_OBJECT};
#define SYM_VALUE(i, kd) ((kd) ? s[S_RODATA].addr + CO_KD_SIZE * (uint64_t)(i) : s[S_TEXT].addr + k[i].text_offset)
#define SYM_SIZE(i, kd) ((kd) ? CO_KD_SIZE : k[i].code_size)

	/* .dynsym */
	for (int i = 0; i < nsym; i++) {
		uint8_t *p = b + s[S_DYNSYM].off + 24 * (uint64_t)(i + 1);
		int kd = syms[i].is_kd, ki = syms[i].kernel;
		put32(p, syms[i].dynstr);
		p[4] = (uint8_t)ELF64_ST_INFO(STB_GLOBAL, symtype[kd]);
		p[5] = STV_PROTECTED;
		put16(p + 6, symshndx[kd]);
		put64(p + 8, SYM_VALUE(ki, kd));
		put64(p + 16, SYM_SIZE(ki, kd));
	}

	/* .gnu.hash: header, bloom filter, buckets, chained hash values. */
	{
		uint8_t *p = b + s[S_GNUHASH].off;
		put32(p, nbuckets);
		put32(p + 4, 1); /* symoffset: first hashed dynsym index */
		put32(p + 8, maskwords);
		put32(p + 12, 26); /* shift2 */
		uint8_t *bloom = p + 16, *buckets = bloom + 8 * maskwords, *values = buckets + 4 * nbuckets;
		uint32_t last = UINT32_MAX;
		for (int i = 0; i < nsym; i++) {
			uint32_t h = syms[i].hash;
			uint8_t *w = bloom + 8 * ((h / 64) & (maskwords - 1));
			uint64_t v = 0;
			for (int j = 7; j >= 0; j--)
				v = v << 8 | w[j];
			v |= 1ull << (h % 64) | 1ull << ((h >> 26) % 64);
			put64(w, v);
			int end = i + 1 == nsym || syms[i + 1].bucket != syms[i].bucket;
			put32(values + 4 * i, end ? h | 1 : h & ~1u);
			if (syms[i].bucket != last) {
				put32(buckets + 4 * syms[i].bucket, (uint32_t)i + 1);
				last = syms[i].bucket;
			}
		}
	}

	/* .hash: nbucket = nchain = number of dynsym entries (lld). */
	{
		uint32_t nb = (uint32_t)nsym + 1;
		uint8_t *p = b + s[S_HASH].off, *bk = p + 8, *ch = bk + 4 * nb;
		put32(p, nb);
		put32(p + 4, nb);
		for (int i = 0; i < nsym; i++) {
			uint32_t h = sysv_hash(syms[i].name) % nb;
			memcpy(ch + 4 * (i + 1), bk + 4 * h, 4);
			put32(bk + 4 * h, (uint32_t)i + 1);
		}
	}

	memcpy(b + s[S_DYNSTR].off, dynstr.sb.buf, dynstr.sb.len);

	/* .rodata: descriptors; the entry offset is relative to the descriptor. */
	for (int i = 0; i < n; i++) {
		kds[i].kernel_code_entry_byte_offset =
			(int64_t)(s[S_TEXT].addr + k[i].text_offset) - (int64_t)(s[S_RODATA].addr + CO_KD_SIZE * (uint64_t)i);
		co_descriptor_encode(&kds[i], b + s[S_RODATA].off + CO_KD_SIZE * (uint64_t)i);
	}

	if (data->len)
		memcpy(b + s[S_RODATA].off + data_off, data->bytes, data->len);
	memcpy(b + s[S_TEXT].off, text, text_len);

	/* .dynamic */
	{
		uint64_t dyn[7][2] = {
			{DT_SYMTAB, s[S_DYNSYM].addr}, {DT_SYMENT, 24}, {DT_STRTAB, s[S_DYNSTR].addr},
			{DT_STRSZ, s[S_DYNSTR].size},  {DT_GNU_HASH, s[S_GNUHASH].addr},
			{DT_HASH, s[S_HASH].addr},     {DT_NULL, 0},
		};
		for (int i = 0; i < 7; i++) {
			put64(b + s[S_DYNAMIC].off + 16 * i, dyn[i][0]);
			put64(b + s[S_DYNAMIC].off + 16 * i + 8, dyn[i][1]);
		}
	}

	memcpy(b + s[S_COMMENT].off, comment, sizeof comment);

	/* .symtab: the source's local data symbols, _DYNAMIC, then the kernels */
	{
		uint8_t *p;
		for (int i = 0; i < nloc; i++) {
			const CoDataSym *ds = &data->syms[i];
			p = b + s[S_SYMTAB].off + 24 * (uint64_t)(i + 1);
			put32(p, strloc[i]);
			p[4] = (uint8_t)ELF64_ST_INFO(STB_LOCAL, ds->type);
			p[5] = ds->vis;
			put16(p + 6, S_RODATA);
			put64(p + 8, s[S_RODATA].addr + data_off + ds->value);
			put64(p + 16, ds->size);
		}
		p = b + s[S_SYMTAB].off + 24 * (uint64_t)(nloc + 1);
		put32(p, str_dynamic);
		p[4] = ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE);
		p[5] = STV_HIDDEN;
		put16(p + 6, S_DYNAMIC);
		put64(p + 8, s[S_DYNAMIC].addr);
		for (int i = 0; i < nsym; i++) {
			p = b + s[S_SYMTAB].off + 24 * (uint64_t)(i + 2 + nloc);
			int kd = i % 2, ki = i / 2;
			put32(p, strname[i]);
			p[4] = (uint8_t)ELF64_ST_INFO(STB_GLOBAL, symtype[kd]);
			p[5] = STV_PROTECTED;
			put16(p + 6, symshndx[kd]);
			put64(p + 8, SYM_VALUE(ki, kd));
			put64(p + 16, SYM_SIZE(ki, kd));
		}
	}
	free(strname);
	memcpy(b + s[S_SHSTRTAB].off, shstr.sb.buf, shstr.sb.len);
	memcpy(b + s[S_STRTAB].off, strtab.sb.buf, strtab.sb.len);

	/* Section headers. */
	static const struct {
		uint32_t type;
		uint64_t flags, entsize;
		int link;
	} sh[S_COUNT] = {
		[S_NOTE] = {SHT_NOTE, SHF_ALLOC, 0, 0},
		[S_DYNSYM] = {SHT_DYNSYM, SHF_ALLOC, 24, S_DYNSTR},
		[S_GNUHASH] = {SHT_GNU_HASH, SHF_ALLOC, 0, S_DYNSYM},
		[S_HASH] = {SHT_HASH, SHF_ALLOC, 4, S_DYNSYM},
		[S_DYNSTR] = {SHT_STRTAB, SHF_ALLOC, 0, 0},
		[S_RODATA] = {SHT_PROGBITS, SHF_ALLOC, 0, 0},
		[S_TEXT] = {SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 0},
		[S_DYNAMIC] = {SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, 16, S_DYNSTR},
		[S_RELRO] = {SHT_NOBITS, SHF_ALLOC | SHF_WRITE, 0, 0},
		[S_COMMENT] = {SHT_PROGBITS, SHF_MERGE | SHF_STRINGS, 1, 0},
		[S_SYMTAB] = {SHT_SYMTAB, 0, 24, S_STRTAB},
		[S_SHSTRTAB] = {SHT_STRTAB, 0, 0, 0},
		[S_STRTAB] = {SHT_STRTAB, 0, 0, 0},
	};
	for (int i = 1; i < S_COUNT; i++) {
		uint8_t *p = b + shoff + 64 * (uint64_t)i;
		put32(p, shname[i]);
		put32(p + 4, sh[i].type);
		put64(p + 8, sh[i].flags);
		put64(p + 16, s[i].addr);
		put64(p + 24, s[i].off);
		put64(p + 32, s[i].size);
		put32(p + 40, (uint32_t)sh[i].link);
		put32(p + 44, i == S_DYNSYM ? 1 : i == S_SYMTAB ? 2 + (uint32_t)nloc : 0); /* first global */
		put64(p + 48, s[i].align);
		put64(p + 56, sh[i].entsize);
	}

	*out = b;
	*len = total;
	b = NULL;
	rc = 0;
done:
	free(strloc);
	free(b);
	free(mp);
	free(kds);
	free(syms);
	sb_free(&dynstr.sb);
	sb_free(&strtab.sb);
	sb_free(&shstr.sb);
	sb_free(&names);
	arena_free(&arena);
	return rc;
}
