/* asm.c — the text assembler: a whole .s file into sections and symbols.
 *
 * One pass emits bytes and records branch fixups; labels are resolved when
 * the file ends (SOPP simm16 = (target - next instruction) / 4), as are
 * `.size` expressions.  Directives the assembler does not know go to the
 * caller's hook (the elf/ layer handles .amdhsa_kernel and friends). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "isa_impl.h"

typedef struct {
	int section;
	size_t offset;
	char *label;
	SrcPos pos;
} Fixup;

typedef struct {
	int section;
	size_t offset;
	int len;
	char *text;
} ListEnt;

typedef struct {
	char *sym;
	char *expr;
	SrcPos pos;
	int section;
	size_t dot;
} SizeReq;

typedef struct {
	const IsaAsmOptions *opt;
	const SrcFile *src;
	IsaAsmOut *out;
	Diag *d;
	int cur;      /* current section */
	int raw_mode;
	VEC(Fixup) fixups;
	VEC(ListEnt) list;
	VEC(SizeReq) sizes;
	int errors;
} Asm;

static int err(Asm *a, SrcPos pos, const char *fmt, const char *arg)
{
	diag_at(a->d, DIAG_ERROR, a->src, pos, fmt, arg);
	a->errors++;
	return -1;
}

static int find_section(Asm *a, const char *name, size_t n)
{
	for (size_t i = 0; i < a->out->sections.len; i++)
		if (strlen(a->out->sections.data[i].name) == n && !memcmp(a->out->sections.data[i].name, name, n))
			return (int)i;
	IsaSection s = {0};
	s.name = strndup(name, n);
	s.align = 1;
	if (!s.name || vec_push(&a->out->sections, s)) {
		free(s.name);
		return -1;
	}
	return (int)a->out->sections.len - 1;
}

static IsaSection *cur_sec(Asm *a)
{
	if (a->cur < 0)
		a->cur = find_section(a, ".text", 5);
	return a->cur < 0 ? NULL : &a->out->sections.data[a->cur];
}

int isa_asm_find_symbol(const IsaAsmOut *out, const char *name)
{
	for (size_t i = 0; i < out->symbols.len; i++)
		if (!strcmp(out->symbols.data[i].name, name))
			return (int)i;
	return -1;
}

int isa_asm_find_section(const IsaAsmOut *out, const char *name)
{
	for (size_t i = 0; i < out->sections.len; i++)
		if (!strcmp(out->sections.data[i].name, name))
			return (int)i;
	return -1;
}

static IsaSymbol *get_symbol(Asm *a, const char *name, size_t n)
{
	for (size_t i = 0; i < a->out->symbols.len; i++)
		if (strlen(a->out->symbols.data[i].name) == n && !memcmp(a->out->symbols.data[i].name, name, n))
			return &a->out->symbols.data[i];
	IsaSymbol s = {0};
	s.name = strndup(name, n);
	s.section = -1;
	if (!s.name || vec_push(&a->out->symbols, s)) {
		free(s.name);
		return NULL;
	}
	return &a->out->symbols.data[a->out->symbols.len - 1];
}

static int emit(Asm *a, const void *p, size_t n)
{
	IsaSection *s = cur_sec(a);
	if (!s || vec_reserve(&s->data, s->data.len + n))
		return -1;
	memcpy(s->data.data + s->data.len, p, n);
	s->data.len += n;
	return 0;
}

static int is_idc(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '$';
}

/* Evaluates a tiny expression: terms (integers, symbols, `.`) joined by + and -.
 * *net (if set) receives the number of section-relative terms left after
 * differences cancel: nonzero means the value is an address, which only a
 * relocation could express. */
static int eval_net(Asm *a, const char *s, int section, size_t dot, int64_t *v, int *symsec, int *net)
{
	int64_t acc = 0;
	int sign = 1, any = 0, rel = 0;
	*symsec = -1;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (*s == '+' || *s == '-') {
			sign = *s == '-' ? -sign : sign;
			s++;
			continue;
		}
		int64_t t;
		if (isdigit((unsigned char)*s)) {
			char *end;
			t = (int64_t)strtoull(s, &end, 0);
			s = end;
		} else if (*s == '.' && !is_idc(s[1])) {
			t = (int64_t)dot;
			*symsec = section;
			rel += sign;
			s++;
		} else if (is_idc(*s)) {
			size_t n = 0;
			while (is_idc(s[n]))
				n++;
			IsaSymbol *sym = NULL;
			for (size_t i = 0; i < a->out->symbols.len; i++)
				if (strlen(a->out->symbols.data[i].name) == n && !memcmp(a->out->symbols.data[i].name, s, n))
					sym = &a->out->symbols.data[i];
			if (!sym || !sym->defined)
				return -1;
			t = (int64_t)sym->value;
			if (sym->section >= 0)
				*symsec = sym->section, rel += sign;
			s += n;
		} else
			return -1;
		acc += sign * t;
		sign = 1;
		any = 1;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s && *s != '+' && *s != '-')
			return -1;
	}
	*v = acc;
	if (net)
		*net = rel;
	return any ? 0 : -1;
}

static int eval(Asm *a, const char *s, int section, size_t dot, int64_t *v, int *symsec)
{
	return eval_net(a, s, section, dot, v, symsec, NULL);
}

static int align_to(Asm *a, unsigned bytes)
{
	IsaSection *s = cur_sec(a);
	if (!s)
		return -1;
	if ((int)bytes > s->align)
		s->align = (int)bytes;
	int code = !strcmp(s->name, ".text") || !strncmp(s->name, ".text.", 6);
	while (s->data.len % bytes) {
		if (code && s->data.len % 4 == 0 && bytes >= 4) {
			static const uint8_t nop[4] = {0x00, 0x00, 0x80, 0xbf}; /* s_nop 0 */
			if (emit(a, nop, 4))
				return -1;
		} else {
			uint8_t z = 0;
			if (emit(a, &z, 1))
				return -1;
		}
		s = cur_sec(a);
	}
	return 0;
}

/* Generic directives; returns 1 handled, 0 not ours, -1 error. */
static int directive(Asm *a, char *line, SrcPos pos)
{
	char *args = line;
	while (*args && !isspace((unsigned char)*args))
		args++;
	size_t n = (size_t)(args - line);
	while (isspace((unsigned char)*args))
		args++;
#define IS(w) (n == strlen(w) && !memcmp(line, w, n))
	if (IS(".text")) {
		a->cur = find_section(a, ".text", 5);
		return 1;
	}
	if (IS(".section")) {
		size_t m = 0;
		if (*args == '"') {
			char *e = strchr(args + 1, '"');
			if (!e)
				return err(a, pos, "%s", "unterminated section name");
			a->cur = find_section(a, args + 1, (size_t)(e - args - 1));
			return 1;
		}
		while (args[m] && args[m] != ',' && !isspace((unsigned char)args[m]))
			m++;
		if (!m)
			return err(a, pos, "%s", "expected a section name");
		a->cur = find_section(a, args, m);
		return 1;
	}
	if (IS(".data") || IS(".rodata") || IS(".bss")) {
		a->cur = find_section(a, line, n);
		return 1;
	}
	if (IS(".p2align") || IS(".align") || IS(".balign")) {
		char *end;
		long v = strtol(args, &end, 0);
		if (end == args || v < 0 || (IS(".p2align") ? v > 16 : (v > 65536 || (v & (v - 1)))))
			return err(a, pos, "%s", "invalid alignment");
		return align_to(a, IS(".p2align") ? 1u << v : (unsigned)(v ? v : 1)) ? -1 : 1;
	}
	if (IS(".p2alignl")) { /* align, padding with a 32-bit pattern */
		char *end;
		long v = strtol(args, &end, 0);
		uint32_t fill = 0;
		if (*end == ',')
			fill = (uint32_t)strtoull(end + 1, NULL, 0);
		if (end == args || v < 2 || v > 16)
			return err(a, pos, "%s", "invalid alignment");
		IsaSection *s = cur_sec(a);
		if (!s)
			return -1;
		if ((1 << v) > s->align)
			s->align = 1 << v;
		while (s->data.len % 4) {
			uint8_t z = 0;
			if (emit(a, &z, 1))
				return -1;
			s = cur_sec(a);
		}
		while (s->data.len % (1u << v)) {
			uint8_t b[4] = {(uint8_t)fill, (uint8_t)(fill >> 8), (uint8_t)(fill >> 16), (uint8_t)(fill >> 24)};
			if (emit(a, b, 4))
				return -1;
			s = cur_sec(a);
		}
		return 1;
	}
	if (IS(".fill")) { /* .fill count[, size[, value]] */
		char *end;
		long cnt = strtol(args, &end, 0), size = 1;
		uint64_t val = 0;
		if (*end == ',')
			size = strtol(end + 1, &end, 0);
		if (*end == ',')
			val = strtoull(end + 1, &end, 0);
		if (cnt < 0 || cnt > (1 << 24) || size < 1 || size > 8)
			return err(a, pos, "%s", "invalid .fill");
		for (long i = 0; i < cnt; i++) {
			uint8_t b[8];
			for (int j = 0; j < size; j++)
				b[j] = (uint8_t)(j < 4 ? val >> (8 * j) : 0);
			if (emit(a, b, (size_t)size))
				return -1;
		}
		return 1;
	}
	if (IS(".ident") || IS(".file"))
		return 1; /* provenance: nothing to record in IsaAsmOut */
	/* Address-significance table: llvm-mc writes .llvm_addrsig, which ld.lld
	 * consumes (identical code folding) and does not write out. */
	if (IS(".addrsig") || IS(".addrsig_sym"))
		return 1;
	if (IS(".globl") || IS(".global") || IS(".weak") || IS(".local") || IS(".hidden") || IS(".protected") ||
	    IS(".internal")) {
		size_t m = 0;
		while (is_idc(args[m]))
			m++;
		IsaSymbol *s = m ? get_symbol(a, args, m) : NULL;
		if (!s)
			return err(a, pos, "%s", "expected a symbol name");
		if (IS(".hidden") || IS(".internal"))
			s->vis = ISA_VIS_HIDDEN;
		else if (IS(".protected"))
			s->vis = ISA_VIS_PROTECTED;
		else
			s->binding = IS(".local") ? ISA_BIND_LOCAL : IS(".weak") ? ISA_BIND_WEAK : ISA_BIND_GLOBAL;
		return 1;
	}
	if (IS(".zero") || IS(".space") || IS(".skip")) { /* .zero count[, value] */
		int64_t cnt, val = 0;
		int ss;
		char *comma = strchr(args, ',');
		if (comma)
			*comma = 0;
		if (eval(a, args, a->cur, 0, &cnt, &ss) || ss >= 0 || cnt < 0 || cnt > (1 << 26) ||
		    (comma && (eval(a, comma + 1, a->cur, 0, &val, &ss) || ss >= 0)))
			return err(a, pos, "%s", "expected a constant count (and fill byte)");
		uint8_t b = (uint8_t)val;
		for (int64_t i = 0; i < cnt; i++)
			if (emit(a, &b, 1))
				return -1;
		return 1;
	}
	if (IS(".ascii") || IS(".asciz") || IS(".string")) {
		const char *q = args;
		for (;;) {
			if (*q != '"')
				return err(a, pos, "%s", "expected a string literal");
			for (q++; *q && *q != '"'; q++) {
				uint8_t c = (uint8_t)*q;
				if (c == '\\') {
					q++;
					if (*q >= '0' && *q <= '7') { /* octal, up to 3 digits */
						int v = 0;
						for (int k = 0; k < 3 && *q >= '0' && *q <= '7'; k++, q++)
							v = v * 8 + (*q - '0');
						q--;
						c = (uint8_t)v;
					} else
						c = *q == 'n' ? '\n' : *q == 't' ? '\t' : *q == 'r' ? '\r' : *q == '0' ? 0
						  : (uint8_t)*q;
					if (!*q)
						break;
				}
				if (emit(a, &c, 1))
					return -1;
			}
			if (*q != '"')
				return err(a, pos, "%s", "unterminated string literal");
			if (!IS(".ascii")) {
				uint8_t z = 0;
				if (emit(a, &z, 1))
					return -1;
			}
			q++;
			while (*q == ' ' || *q == '\t')
				q++;
			if (!*q)
				break;
			if (*q != ',')
				return err(a, pos, "%s", "expected ',' between strings");
			q++;
			while (*q == ' ' || *q == '\t')
				q++;
		}
		return 1;
	}
	if (IS(".type")) {
		size_t m = 0;
		while (is_idc(args[m]))
			m++;
		IsaSymbol *s = m ? get_symbol(a, args, m) : NULL;
		if (!s)
			return err(a, pos, "%s", "expected a symbol name");
		s->type = strstr(args + m, "function") ? ISA_SYM_FUNC : strstr(args + m, "object") ? ISA_SYM_OBJECT
											: ISA_SYM_NOTYPE;
		return 1;
	}
	if (IS(".size") || IS(".set") || IS(".equ")) {
		size_t m = 0;
		while (is_idc(args[m]))
			m++;
		char *comma = strchr(args + m, ',');
		if (!m || !comma)
			return err(a, pos, "%s", "expected 'symbol, expression'");
		if (IS(".size")) {
			SizeReq r = {strndup(args, m), strdup(comma + 1), pos, a->cur, cur_sec(a) ? cur_sec(a)->data.len : 0};
			if (!r.sym || !r.expr || vec_push(&a->sizes, r)) {
				free(r.sym), free(r.expr);
				return -1;
			}
			return 1;
		}
		int64_t v;
		int ss;
		if (eval(a, comma + 1, a->cur, cur_sec(a) ? cur_sec(a)->data.len : 0, &v, &ss))
			return err(a, pos, "%s", "expression must be a constant or a defined symbol");
		IsaSymbol *s = get_symbol(a, args, m);
		if (!s)
			return -1;
		s->value = (uint64_t)v;
		s->section = ss;
		s->defined = 1;
		return 1;
	}
	int width = IS(".byte") ? 1 : IS(".short") || IS(".hword") || IS(".2byte") ? 2
		  : IS(".long") || IS(".int") || IS(".4byte") ? 4 : IS(".quad") || IS(".8byte") ? 8 : 0;
	if (width) {
		char *p = args;
		while (*p) {
			char *c = strchr(p, ',');
			char save = 0;
			if (c)
				save = *c, *c = 0;
			int64_t v;
			int ss, net;
			if (eval_net(a, p, a->cur, cur_sec(a) ? cur_sec(a)->data.len : 0, &v, &ss, &net)) {
				if (c)
					*c = save;
				return err(a, pos, "%s", "expected a constant expression");
			}
			if (net) { /* a symbol's address: the linker would relocate it */
				if (c)
					*c = save;
				return err(a, pos, "%s", "data directive needs a relocation (a symbol address); tileasm "
						       "writes none");
			}
			if (width < 8 && (v >= (int64_t)1 << (8 * width) || v < -((int64_t)1 << (8 * width - 1))))
				return err(a, pos, "%s", "value out of range for data directive");
			uint8_t b[8];
			for (int i = 0; i < width; i++)
				b[i] = (uint8_t)((uint64_t)v >> (8 * i));
			if (emit(a, b, (size_t)width))
				return -1;
			if (!c)
				break;
			*c = save;
			p = c + 1;
		}
		return 1;
	}
#undef IS
	return 0;
}

/* Removes a comment (';', '//', '#') outside of string literals. */
static void strip_comment(char *s)
{
	int q = 0;
	for (char *p = s; *p; p++) {
		if (*p == '"')
			q = !q;
		if (q)
			continue;
		if (*p == ';' || *p == '#' || (p[0] == '/' && p[1] == '/')) {
			*p = 0;
			return;
		}
	}
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

static int instruction(Asm *a, char *text, SrcPos pos)
{
	IsaInsn in;
	ta_target t = a->opt->target;
	uint8_t b[16];
	int n;
	if (isa_parse_encode(t, text, &in, b, &n, a->src, pos, a->d) || n <= 0) {
		a->errors++;
		return -1;
	}
	int label = -1;
	for (int i = 0; i < in.nops; i++)
		if (in.ops[i].kind == ISA_K_LABEL)
			label = i;
	IsaSection *s = cur_sec(a);
	if (!s)
		return -1;
	size_t off = s->data.len;
	if (label >= 0) {
		Fixup f = {a->cur, off, strndup(in.ops[label].sym, in.ops[label].sym_len), pos};
		if (!f.label || vec_push(&a->fixups, f)) {
			free(f.label);
			return -1;
		}
	}
	if (a->opt->listing) {
		StrBuf sb = {0};
		isa_print(t, &in, &sb);
		ListEnt e = {a->cur, off, n, sb_take(&sb)};
		if (!e.text || vec_push(&a->list, e)) {
			free(e.text);
			return -1;
		}
	}
	a->out->ninsns++;
	return emit(a, b, (size_t)n);
}

static int line(Asm *a, char *raw, SrcPos pos)
{
	if (a->raw_mode) {
		int rc = a->opt->directive(a->opt->user, raw, pos, &a->raw_mode);
		if (rc < 0)
			a->errors++;
		return rc < 0 ? -1 : 0;
	}
	strip_comment(raw);
	char *s = trim(raw);
	/* labels: "name:" (not "::") possibly followed by a statement */
	for (;;) {
		size_t n = 0;
		while (is_idc(s[n]))
			n++;
		if (!n || s[n] != ':' || s[n + 1] == ':')
			break;
		IsaSymbol *sym = get_symbol(a, s, n);
		IsaSection *sec = cur_sec(a);
		if (!sym || !sec)
			return -1;
		if (sym->defined) {
			char name[128];
			snprintf(name, sizeof name, "%.*s", (int)TA_MIN(n, 100), s);
			return err(a, pos, "symbol '%s' is already defined", name);
		}
		sym->defined = 1;
		sym->section = a->cur;
		sym->value = sec->data.len;
		if (a->opt->listing) {
			ListEnt e = {a->cur, sec->data.len, -1, strndup(s, n)};
			if (!e.text || vec_push(&a->list, e)) {
				free(e.text);
				return -1;
			}
		}
		s = trim(s + n + 1);
		pos.col += (int)n + 1;
	}
	if (!*s)
		return 0;
	SrcPos at = {pos.line, pos.col + (int)(s - raw)};
	if (*s == '.') {
		int rc = directive(a, s, at);
		if (rc)
			return rc < 0 ? -1 : 0;
		if (a->opt->directive) {
			rc = a->opt->directive(a->opt->user, s, at, &a->raw_mode);
			if (rc > 0)
				return 0;
			if (rc < 0) {
				a->errors++;
				return -1;
			}
		}
		size_t n = 0;
		while (s[n] && !isspace((unsigned char)s[n]))
			n++;
		s[n] = 0;
		return err(a, at, "unknown directive '%s'", s);
	}
	return instruction(a, s, at);
}

static void resolve(Asm *a)
{
	for (size_t i = 0; i < a->fixups.len; i++) {
		Fixup *f = &a->fixups.data[i];
		int k = isa_asm_find_symbol(a->out, f->label);
		IsaSymbol *s = k >= 0 ? &a->out->symbols.data[k] : NULL;
		if (!s || !s->defined || s->section != f->section) {
			err(a, f->pos, s && s->defined ? "branch target '%s' is in another section"
						       : "undefined label '%s'", f->label);
			continue;
		}
		int64_t delta = ((int64_t)s->value - (int64_t)(f->offset + 4));
		if (delta % 4 || delta / 4 < -32768 || delta / 4 > 32767) {
			err(a, f->pos, "branch target '%s' is out of range", f->label);
			continue;
		}
		uint8_t *p = a->out->sections.data[f->section].data.data + f->offset;
		uint16_t v = (uint16_t)(int16_t)(delta / 4);
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
	for (size_t i = 0; i < a->sizes.len; i++) {
		SizeReq *r = &a->sizes.data[i];
		int64_t v;
		int ss;
		if (eval(a, r->expr, r->section, r->dot, &v, &ss)) {
			err(a, r->pos, "cannot evaluate .size expression for '%s'", r->sym);
			continue;
		}
		IsaSymbol *s = get_symbol(a, r->sym, strlen(r->sym));
		if (s)
			s->size = (uint64_t)v;
	}
}

static void render_listing(Asm *a)
{
	StrBuf *sb = a->opt->listing;
	int sec = -1;
	for (size_t i = 0; i < a->list.len; i++) {
		ListEnt *e = &a->list.data[i];
		if (e->section != sec) {
			sec = e->section;
			if (!strcmp(a->out->sections.data[sec].name, ".text"))
				sb_puts(sb, "\t.text\n");
			else
				sb_printf(sb, "\t.section\t%s\n", a->out->sections.data[sec].name);
		}
		if (e->len < 0)
			sb_printf(sb, "%s:\n", e->text);
		else
			isa_format_encoding_line(e->text, a->out->sections.data[sec].data.data + e->offset, e->len, sb);
	}
}

int isa_assemble(const IsaAsmOptions *opt, const SrcFile *src, IsaAsmOut *out, Diag *d)
{
	Asm a = {opt, src, out, d, -1, 0, {0}, {0}, {0}, 0};
	memset(out, 0, sizeof *out);
	if (isa_tidx(opt->target) < 0) {
		diag_error(d, "isa_assemble: not an AMD target");
		return -1;
	}
	const char *p = src->text, *end = src->text + src->len;
	char *buf = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (n + 1 > cap) {
			char *nb = realloc(buf, n + 64);
			if (!nb) {
				diag_error(d, "out of memory");
				a.errors++;
				break;
			}
			buf = nb;
			cap = n + 64;
		}
		memcpy(buf, p, n);
		buf[n] = 0;
		line(&a, buf, (SrcPos){++lineno, 1});
		p = nl ? nl + 1 : end;
		if (d->max_errors && d->nerrors >= d->max_errors)
			break;
	}
	free(buf);
	if (a.raw_mode && opt->directive)
		err(&a, (SrcPos){lineno, 1}, "%s", "end of file inside a block started by a directive");
	cur_sec(&a); /* a file always has .text */
	resolve(&a);
	if (opt->listing && !a.errors)
		render_listing(&a);
	for (size_t i = 0; i < a.fixups.len; i++)
		free(a.fixups.data[i].label);
	vec_free(&a.fixups);
	for (size_t i = 0; i < a.list.len; i++)
		free(a.list.data[i].text);
	vec_free(&a.list);
	for (size_t i = 0; i < a.sizes.len; i++)
		free(a.sizes.data[i].sym), free(a.sizes.data[i].expr);
	vec_free(&a.sizes);
	return a.errors ? -1 : 0;
}

void isa_asm_free(IsaAsmOut *out)
{
	for (size_t i = 0; i < out->sections.len; i++) {
		free(out->sections.data[i].name);
		vec_free(&out->sections.data[i].data);
	}
	vec_free(&out->sections);
	for (size_t i = 0; i < out->symbols.len; i++)
		free(out->symbols.data[i].name);
	vec_free(&out->symbols);
}
