/* yaml.c — the subset of YAML that AMDGPU metadata blocks use, into CoMd.
 *
 * Block mappings and sequences by indentation ("key: value", "- item",
 * "- key: value" starting a mapping inside a sequence), flow collections
 * ("[ 1, 2 ]", "{ .size: 8, .offset: 0 }"), plain, 'single' and "double"
 * quoted scalars, comments, and the "---" / "..." document markers.  Plain
 * scalars that read as integers become CO_MD_INT, true/false CO_MD_BOOL,
 * everything else a string — how llvm-mc's metadata verifier types them.
 * Anchors, tags, multi-line scalars and multiple documents are rejected. */
#include "codeobj.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>

typedef struct {
	int indent;    /* column of the first non-blank character */
	char *text;    /* from that character; comments and trailing blanks removed */
	int line;      /* 1-based, in the source file */
} Line;

typedef struct {
	Arena *a;
	Line *l;
	int n, i;
	const SrcFile *src;
	Diag *d;
	int err;
	int depth;
} Y;

static void yerr(Y *y, int line, int col, const char *fmt, const char *arg)
{
	if (y->err)
		return;
	y->err = 1;
	diag_at(y->d, DIAG_ERROR, y->src, (SrcPos){line, col}, fmt, arg);
}

/* Strips a comment (" #" outside quotes) and trailing blanks, in place. */
static void strip(char *s)
{
	char q = 0;
	char *end = s + strlen(s);
	for (char *p = s; *p; p++) {
		if (q) {
			if (q == '"' && *p == '\\' && p[1])
				p++;
			else if (*p == q)
				q = 0;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			end = p;
			break;
		}
	}
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = 0;
}

static CoMd *new_node(Y *y)
{
	CoMd *m = arena_alloc(y->a, sizeof *m);
	if (!m)
		yerr(y, 0, 0, "out of memory%s", "");
	return m;
}

/* Appends to a growing item list kept in a temporary VEC, then copies into
 * the arena when the collection is complete. */
typedef VEC(CoMd) MdVec;
typedef VEC(SrcPos) PosVec;

static int key_cmp(const CoMd *a, const CoMd *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == CO_MD_STR)
		return strcmp(a->s, b->s);
	return (a->i > b->i) - (a->i < b->i);
}

typedef struct {
	const CoMd *key;
	int i;
} KeyAt;

static int dup_order(const void *x, const void *y)
{
	const KeyAt *a = x, *b = y;
	int c = key_cmp(a->key, b->key);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* llvm-mc refuses a mapping that names a key twice ("duplicated mapping
 * key"); the later one is reported.  Sort then scan: a map may be large. */
static void check_dup_keys(Y *y, const MdVec *v, const PosVec *kp)
{
	size_t n = v->len / 2;
	if (n < 2 || y->err || kp->len != n)
		return;
	KeyAt *ix = malloc(sizeof *ix * n);
	if (!ix) {
		yerr(y, 0, 0, "out of memory%s", "");
		return;
	}
	for (size_t i = 0; i < n; i++)
		ix[i] = (KeyAt){&v->data[2 * i], (int)i};
	qsort(ix, n, sizeof *ix, dup_order);
	int first = -1;
	for (size_t i = 1; i < n; i++)
		if (!key_cmp(ix[i - 1].key, ix[i].key) && (first < 0 || ix[i].i < first))
			first = ix[i].i;
	free(ix);
	if (first >= 0) {
		const CoMd *k = &v->data[2 * first];
		char num[32];
		snprintf(num, sizeof num, "%lld", (long long)k->i);
		yerr(y, kp->data[first].line, kp->data[first].col, "duplicated mapping key '%s'",
		     k->kind == CO_MD_STR ? k->s : num);
	}
}

static void finish(Y *y, CoMd *m, MdVec *v, int pairs)
{
	m->n = (int)(v->len / (pairs ? 2 : 1));
	if (v->len) {
		m->items = arena_alloc(y->a, sizeof(CoMd) * v->len);
		if (!m->items)
			yerr(y, 0, 0, "out of memory%s", "");
		else
			memcpy(m->items, v->data, sizeof(CoMd) * v->len);
	}
	vec_free(v);
}

/* A scalar token [s, e) into m. */
static void scalar(Y *y, const char *s, const char *e, CoMd *m, int line, int col)
{
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	memset(m, 0, sizeof *m);
	if (s < e && (*s == '\'' || *s == '"')) {
		char q = *s;
		StrBuf sb = {0};
		const char *p = s + 1;
		for (; p < e; p++) {
			if (*p == q) {
				if (q == '\'' && p + 1 < e && p[1] == '\'') {
					sb_putc(&sb, '\'');
					p++;
					continue;
				}
				break;
			}
			if (q == '"' && *p == '\\' && p + 1 < e) {
				p++;
				sb_putc(&sb, *p == 'n' ? '\n' : *p == 't' ? '\t' : *p);
				continue;
			}
			sb_putc(&sb, *p);
		}
		if (p >= e || p + 1 != e) {
			sb_free(&sb);
			yerr(y, line, col, "bad quoted string in metadata%s", "");
			return;
		}
		m->kind = CO_MD_STR;
		m->s = arena_strndup(y->a, sb.buf ? sb.buf : "", sb.len);
		sb_free(&sb);
		return;
	}
	size_t n = (size_t)(e - s);
	if (n && strchr("&*!|>%@`", *s)) {
		yerr(y, line, col, "unsupported YAML feature in metadata (anchor, tag or block scalar)%s", "");
		return;
	}
	if ((n == 4 && !strncmp(s, "true", 4)) || (n == 5 && !strncmp(s, "false", 5))) {
		m->kind = CO_MD_BOOL;
		m->i = n == 4;
		return;
	}
	if (n && n < 32 && (isdigit((unsigned char)*s) || ((*s == '-' || *s == '+') && n > 1))) {
		char buf[32];
		memcpy(buf, s, n);
		buf[n] = 0;
		char *end;
		errno = 0;
		long long v = strtoll(buf, &end, 0);
		if (!*end && !errno) {
			m->kind = CO_MD_INT;
			m->i = v;
			return;
		}
	}
	if (n == 1 && *s == '~') {
		m->kind = CO_MD_NIL;
		return;
	}
	m->kind = CO_MD_STR;
	m->s = arena_strndup(y->a, s, n);
}

/* Flow collection or scalar starting at *pp; advances *pp. */
static void flow(Y *y, const char **pp, CoMd *m, int line, const char *base, int in_flow)
{
	const char *p = *pp;
	while (*p == ' ' || *p == '\t')
		p++;
	if (++y->depth > 32) {
		yerr(y, line, 1, "metadata nested too deeply%s", "");
		return;
	}
	if (*p == '[' || *p == '{') {
		char close = *p == '[' ? ']' : '}';
		int map = *p == '{';
		MdVec v = {0};
		PosVec kp = {0};
		p++;
		for (;;) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == close) {
				p++;
				break;
			}
			CoMd key, val;
			if (map) {
				const char *k = p;
				char q = 0;
				while (*p && (q || (*p != ':' && *p != ',' && *p != close))) {
					if (q && *p == q)
						q = 0;
					else if (!q && (*p == '\'' || *p == '"'))
						q = *p;
					p++;
				}
				if (*p != ':') {
					yerr(y, line, (int)(k - base) + 1, "expected ':' in a flow mapping%s", "");
					break;
				}
				scalar(y, k, p, &key, line, (int)(k - base) + 1);
				p++;
				flow(y, &p, &val, line, base, 1);
				if (vec_push(&v, key) || vec_push(&v, val) ||
				    vec_push(&kp, ((SrcPos){line, (int)(k - base) + 1 + (int)strspn(k, " \t")})))
					yerr(y, line, 1, "out of memory%s", "");
			} else {
				flow(y, &p, &val, line, base, 1);
				if (vec_push(&v, val))
					yerr(y, line, 1, "out of memory%s", "");
			}
			if (y->err)
				break;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p != close) {
				yerr(y, line, (int)(p - base) + 1, "expected ',' or '%s' in a flow collection",
				     close == ']' ? "]" : "}");
				break;
			}
		}
		memset(m, 0, sizeof *m);
		m->kind = map ? CO_MD_MAP : CO_MD_ARRAY;
		if (map)
			check_dup_keys(y, &v, &kp);
		vec_free(&kp);
		finish(y, m, &v, map);
	} else {
		const char *s = p;
		char q = 0;
		while (*p && (q || !in_flow || (*p != ',' && *p != ']' && *p != '}'))) {
			if (q == '"' && *p == '\\' && p[1])
				p++;
			else if (q && *p == q && !(q == '\'' && p[1] == '\''))
				q = 0;
			else if (q == '\'' && *p == '\'' && p[1] == '\'')
				p++;
			else if (!q && p == s && (*p == '\'' || *p == '"'))
				q = *p;
			p++;
		}
		scalar(y, s, p, m, line, (int)(s - base) + 1);
	}
	y->depth--;
	*pp = p;
}

/* Position of the ':' ending a mapping key in s, or NULL. */
static char *key_colon(char *s)
{
	char q = 0;
	if (*s == '[' || *s == '{')
		return NULL;
	for (char *p = s; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == ':' && (!p[1] || p[1] == ' ' || p[1] == '\t')) {
			return p;
		}
	}
	return NULL;
}

static void node(Y *y, int indent, CoMd *m);

/* Value of "key:" whose text after the colon is `rest`. */
static void value(Y *y, Line *ln, char *rest, int indent, CoMd *m)
{
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (*rest) {
		const char *p = rest;
		flow(y, &p, m, ln->line, ln->text - ln->indent, 0);
		return;
	}
	/* Nested block: deeper lines, or a sequence at the same indent. */
	if (y->i < y->n && (y->l[y->i].indent > indent ||
			    (y->l[y->i].indent == indent && y->l[y->i].text[0] == '-' &&
			     (y->l[y->i].text[1] == ' ' || !y->l[y->i].text[1])))) {
		node(y, y->l[y->i].indent, m);
		return;
	}
	memset(m, 0, sizeof *m);
	m->kind = CO_MD_NIL;
}

static void node(Y *y, int indent, CoMd *m)
{
	memset(m, 0, sizeof *m);
	if (y->err || y->i >= y->n)
		return;
	if (++y->depth > 32) {
		yerr(y, y->l[y->i].line, 1, "metadata nested too deeply%s", "");
		return;
	}
	Line *first = &y->l[y->i];
	int seq = first->text[0] == '-' && (first->text[1] == ' ' || !first->text[1]);
	MdVec v = {0};
	PosVec kp = {0};
	while (!y->err && y->i < y->n && y->l[y->i].indent == indent) {
		Line *ln = &y->l[y->i];
		int is_item = ln->text[0] == '-' && (ln->text[1] == ' ' || !ln->text[1]);
		if (is_item != seq) {
			/* A sequence may sit at its parent key's indentation
			 * ("key:\n- a"); the next key ends it. */
			if (!seq)
				yerr(y, ln->line, indent + 1, "mixed sequence and mapping at one indentation%s", "");
			break;
		}
		CoMd item;
		if (seq) {
			/* "- rest": treat rest as a line of its own, two columns in. */
			char *rest = ln->text + 1;
			while (*rest == ' ')
				rest++;
			if (!*rest) {
				y->i++;
				value(y, ln, rest, indent, &item);
			} else if (!key_colon(rest)) { /* "- scalar" or "- { flow }" */
				y->i++;
				const char *fp = rest;
				flow(y, &fp, &item, ln->line, ln->text - ln->indent, 0);
			} else {
				ln->indent += (int)(rest - ln->text);
				ln->text = rest;
				node(y, ln->indent, &item);
			}
			if (vec_push(&v, item))
				yerr(y, ln->line, 1, "out of memory%s", "");
			continue;
		}
		char *colon = key_colon(ln->text);
		if (!colon) {
			if (y->i == 0 || v.len || indent) {
				yerr(y, ln->line, indent + 1, "expected 'key: value' in metadata%s", "");
				break;
			}
			/* A lone scalar or flow document. */
			y->i++;
			const char *p = ln->text;
			flow(y, &p, m, ln->line, ln->text - ln->indent, 0);
			y->depth--;
			vec_free(&v);
			vec_free(&kp);
			return;
		}
		CoMd key;
		int kline = ln->line;
		scalar(y, ln->text, colon, &key, ln->line, indent + 1);
		y->i++;
		CoMd val;
		value(y, ln, colon + 1, indent, &val);
		if (vec_push(&v, key) || vec_push(&v, val) || vec_push(&kp, ((SrcPos){kline, indent + 1})))
			yerr(y, ln->line, 1, "out of memory%s", "");
	}
	if (!y->err && y->i < y->n && y->l[y->i].indent > indent)
		yerr(y, y->l[y->i].line, y->l[y->i].indent + 1, "unexpected indentation in metadata%s", "");
	m->kind = seq ? CO_MD_ARRAY : CO_MD_MAP;
	if (!seq)
		check_dup_keys(y, &v, &kp);
	vec_free(&kp);
	finish(y, m, &v, !seq);
	y->depth--;
}

int co_yaml_parse(Arena *a, const char *text, size_t len, CoMd **out, const SrcFile *src, SrcPos pos, Diag *d)
{
	*out = NULL;
	char *buf = malloc(len + 1);
	Line *lines = malloc(sizeof *lines * (len / 2 + 2));
	if (!buf || !lines) {
		free(buf);
		free(lines);
		diag_error(d, "out of memory");
		return -1;
	}
	memcpy(buf, text, len);
	buf[len] = 0;
	Y y = {a, lines, 0, 0, src, d, 0, 0};
	int lineno = pos.line > 0 ? pos.line : 1, started = 0, ended = 0;
	for (char *p = buf; *p && !ended; lineno++) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		char *s = p;
		int ind = 0;
		while (*s == ' ')
			s++, ind++;
		if (*s == '\t')
			yerr(&y, lineno, ind + 1, "tabs are not allowed for YAML indentation%s", "");
		strip(s);
		if (!strcmp(s, "---") || !strncmp(s, "--- ", 4)) {
			if (started)
				yerr(&y, lineno, 1, "only one YAML document is allowed in .amdgpu_metadata%s", "");
			started = 1;
		} else if (!strcmp(s, "...")) {
			ended = 1;
		} else if (*s) {
			lines[y.n++] = (Line){ind, s, lineno};
		}
		p = nl ? nl + 1 : p + strlen(p);
	}
	CoMd *m = NULL;
	if (!y.err) {
		if (!y.n) {
			yerr(&y, pos.line, 1, "empty .amdgpu_metadata block%s", "");
		} else {
			m = new_node(&y);
			if (m)
				node(&y, y.l[0].indent, m);
			if (!y.err && y.i < y.n)
				yerr(&y, y.l[y.i].line, y.l[y.i].indent + 1, "unexpected indentation in metadata%s", "");
			if (!y.err && m->kind != CO_MD_MAP)
				yerr(&y, pos.line, 1, "metadata must be a mapping%s", "");
		}
	}
	/* Strings point into the arena, not buf. */
	free(buf);
	free(lines);
	if (y.err)
		return -1;
	*out = m;
	return 0;
}
