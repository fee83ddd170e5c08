/* parse.c — Tile IR text -> Module.
 *
 * A hand-written lexer and parser (grammar in docs/tile-ir.md).  Expressions
 * (operator precedence) and nested blocks are parsed with explicit stacks on
 * the heap, not by recursion, so the parser's C stack use does not grow with
 * the input's nesting (a host's 64 KiB thread suffices: tests/api/test_stack.c).  Names are resolved here, against a scope stack, so that
 * every E_VAR/E_LOAD refers to a definite node; types and shapes are left to
 * verify.c.  The parser stops at the first syntax error: recovery would only
 * produce follow-on noise for a language this small.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "ir.h"

typedef enum {
	T_EOF, T_IDENT, T_INT, T_FLOAT,
	T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE,
	T_COMMA, T_COLON, T_SEMI, T_ASSIGN, T_DOTDOT,
	T_PLUS, T_MINUS, T_STAR, T_SLASH, T_SLASHSLASH, T_PERCENT,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_ANDAND, T_OROR, T_BANG,
	T_AMP, T_PIPE, T_CARET, T_TILDE, T_SHL, T_SHR,
} TokKind;

typedef struct {
	TokKind kind;
	const char *s;
	size_t n;
	SrcPos pos;
	int64_t ival;
	double fval;
} Tok;

/* A visible name: a var or a buffer. */
typedef struct {
	const char *name;
	int32_t var, buf;
} Name;

/* Open-addressing table from a name's text to an index, so that looking up
 * a name costs O(1) however many are declared (a linear scan made 50,000
 * lets quadratic).  Entries are never removed: a caller checks that the
 * index it gets back is still live. */
typedef struct {
	const char *s;
	uint32_t n;
	int32_t val; /* -1: empty slot */
} NameSlot;
typedef struct {
	NameSlot *slot;
	size_t cap, used; /* cap: 0 or a power of two */
} NameTab;

/* An entry of parse_expr's stack: a prefix operator waiting for its operand,
 * a binary operator waiting for its right operand, or an open group. */
typedef enum { X_UNARY, X_FOLD, X_BINARY, X_PAREN, X_CALL, X_INDEX } XKind;
typedef struct {
	uint8_t kind;    /* XKind */
	uint8_t op;      /* X_UNARY, X_BINARY: Op; X_CALL: Op, or the DType of a cast */
	int8_t prec;     /* X_BINARY */
	int8_t want;     /* X_CALL: argument count; 0 for a cast (one argument) */
	bool bitcast;    /* X_CALL of a cast: reinterpret(DTYPE, x) */
	int32_t a;       /* X_BINARY: left operand; X_INDEX: buffer */
	uint32_t from;   /* X_CALL, X_INDEX: first argument in Parser.tmp */
	SrcPos pos;
	const char *name; /* X_CALL: the function's name, for messages */
	uint32_t namelen;
} XEntry;

/* An open block of parse_body's stack and the statement it belongs to. */
typedef struct {
	Stmt s;              /* the loop or if (unused for the kernel body) */
	VEC(int32_t) ids;    /* statements of the open block so far */
	size_t mark;         /* names visible when the block opened */
	size_t scope;        /* names before the statement: its loop variables end with it */
	uint8_t slot;        /* 0: the open block is s.body, 1: s.els */
	bool root;           /* the kernel body */
	bool elif;           /* s is the only statement of the else block of the frame below */
} BFrame;

typedef struct {
	Module *m;
	Diag *d;
	const char *p, *end;
	int line;
	const char *line_start;
	Tok tok;
	bool failed;
	bool in_dims;    /* parsing a tensor's dimensions: unknown names declare shape symbols */
	VEC(Name) names; /* scope stack */
	NameTab name_at; /* name -> index in names of its latest declaration */
	NameTab kernel_at; /* kernel name -> index in m->kernels */
	Kernel *k;       /* kernel being parsed */
	VEC(int32_t) tmp;/* scratch for building id lists */
	VEC(uint16_t) edepth; /* height of each expression tree, by expr id */
	VEC(XEntry) xs;  /* the expression parser's stack (parse_expr) */
	VEC(BFrame) bfs; /* open blocks (parse_body) */
	int blocks;      /* current block nesting */
	int32_t pending; /* a statement parse_stmt made after the one it returned (a var's initial store), or -1 */
} Parser;

/* Expression trees and blocks deeper than this are rejected, so that the
 * passes after the parser, which recurse over trees and blocks, have a
 * bounded depth (found by fuzzing: 10,000 '-').  Parentheses, brackets and
 * calls open inside one expression have a looser bound (a tree of height 256
 * prints with at most one group per level, so its canonical text reads back). */
#define MAX_HEIGHT 256
#define MAX_GROUPS 1024
#define MAX_NAME 1024 /* characters in a name */

static void error_at(Parser *ps, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void error_at(Parser *ps, SrcPos pos, const char *fmt, ...)
{
	if (ps->failed)
		return;
	ps->failed = true;
	va_list ap;
	va_start(ap, fmt);
	diag_vat(ps->d, DIAG_ERROR, &ps->m->src, pos, fmt, ap);
	va_end(ap);
}

/* ---- lexer ------------------------------------------------------------ */

static bool is_ident0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static SrcPos cur_pos(Parser *ps) { return (SrcPos){ps->line, (int)(ps->p - ps->line_start) + 1}; }

static void skip_space(Parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;
		if (c == '\n') {
			ps->p++;
			ps->line++;
			ps->line_start = ps->p;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			ps->p++;
		} else if (c == '#') { /* `//` is floor division, so only # comments */
			while (ps->p < ps->end && *ps->p != '\n')
				ps->p++;
		} else {
			break;
		}
	}
}

static bool tok_is(const Tok *t, const char *s) { return t->kind == T_IDENT && strlen(s) == t->n && !strncmp(t->s, s, t->n); }

static void next(Parser *ps)
{
	skip_space(ps);
	Tok t = {.pos = cur_pos(ps), .s = ps->p};
	if (ps->p >= ps->end) {
		t.kind = T_EOF;
		ps->tok = t;
		return;
	}
	char c = *ps->p;
	const char *s = ps->p;
	if (is_ident0(c)) {
		while (ps->p < ps->end && (is_ident0(*ps->p) || is_digit(*ps->p)))
			ps->p++;
		t.kind = T_IDENT;
		/* the builder's bound too; longer kernel names would not fit a code object's symbol limit */
		if (ps->p - s > MAX_NAME) {
			error_at(ps, t.pos, "name is too long (%zu characters; at most %d)", (size_t)(ps->p - s), MAX_NAME);
			return;
		}
	} else if (c == '0' && ps->p + 1 < ps->end && (ps->p[1] == 'x' || ps->p[1] == 'X')) {
		/* hex integer literal, e.g. 0xff (a value like any other: it must fit the type) */
		ps->p += 2;
		uint64_t v = 0;
		bool any = false, big = false;
		for (; ps->p < ps->end; ps->p++) {
			int h = *ps->p;
			int d = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
			if (d < 0)
				break;
			big |= (v >> 60) != 0;
			v = v * 16 + (uint64_t)d;
			any = true;
		}
		if (!any || (ps->p < ps->end && (is_ident0(*ps->p) || *ps->p == '.'))) {
			ps->tok = t;
			error_at(ps, t.pos, "malformed number '%.*s'", (int)(ps->p - s + 1), s);
			t.kind = T_EOF;
			ps->tok = t;
			return;
		}
		if (big || v > (uint64_t)INT64_MAX) {
			error_at(ps, t.pos, "integer literal '%.*s' does not fit in 64 bits", (int)(ps->p - s), s);
			t.kind = T_EOF;
		} else {
			t.kind = T_INT;
			t.ival = (int64_t)v;
		}
	} else if (is_digit(c) || (c == '.' && ps->p + 1 < ps->end && is_digit(ps->p[1]))) {
		bool is_float = false;
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
		if (ps->p + 1 < ps->end && ps->p[0] == '.' && ps->p[1] != '.') {
			is_float = true;
			ps->p++;
			while (ps->p < ps->end && is_digit(*ps->p))
				ps->p++;
		}
		if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
			const char *e = ps->p + 1;
			if (e < ps->end && (*e == '+' || *e == '-'))
				e++;
			if (e < ps->end && is_digit(*e)) {
				is_float = true;
				ps->p = e;
				while (ps->p < ps->end && is_digit(*ps->p))
					ps->p++;
			}
		}
		if (ps->p < ps->end && (is_ident0(*ps->p) || *ps->p == '.')) {
			if (*ps->p != '.' || (ps->p + 1 < ps->end && ps->p[1] != '.')) {
				ps->tok = t;
				error_at(ps, t.pos, "malformed number '%.*s'", (int)(ps->p - s + 1), s);
				t.kind = T_EOF;
				ps->tok = t;
				return;
			}
		}
		char buf[64];
		size_t n = (size_t)(ps->p - s);
		if (n >= sizeof buf) {
			error_at(ps, t.pos, "number too long");
			t.kind = T_EOF;
			ps->tok = t;
			return;
		}
		memcpy(buf, s, n);
		buf[n] = 0;
		errno = 0;
		if (is_float) {
			t.kind = T_FLOAT;
			t.fval = strtod(buf, NULL);
		} else {
			t.kind = T_INT;
			t.ival = strtoll(buf, NULL, 10);
			if (errno == ERANGE) {
				error_at(ps, t.pos, "integer literal '%s' does not fit in 64 bits", buf);
				t.kind = T_EOF;
			}
		}
	} else {
		static const struct {
			const char *s;
			TokKind k;
		} punct[] = {
			{"..", T_DOTDOT}, {"//", T_SLASHSLASH}, {"<<", T_SHL}, {">>", T_SHR}, {"==", T_EQ}, {"!=", T_NE}, {"<=", T_LE},
			{">=", T_GE}, {"&&", T_ANDAND}, {"||", T_OROR}, {"(", T_LPAREN}, {")", T_RPAREN},
			{"[", T_LBRACK}, {"]", T_RBRACK}, {"{", T_LBRACE}, {"}", T_RBRACE}, {",", T_COMMA},
			{":", T_COLON}, {";", T_SEMI}, {"=", T_ASSIGN}, {"+", T_PLUS}, {"-", T_MINUS},
			{"*", T_STAR}, {"/", T_SLASH}, {"%", T_PERCENT}, {"<", T_LT}, {">", T_GT}, {"!", T_BANG},
			{"&", T_AMP}, {"|", T_PIPE}, {"^", T_CARET}, {"~", T_TILDE},
		};
		t.kind = T_EOF;
		for (size_t i = 0; i < TA_ARRAY_LEN(punct); i++) {
			size_t n = strlen(punct[i].s);
			if ((size_t)(ps->end - ps->p) >= n && !strncmp(ps->p, punct[i].s, n)) {
				t.kind = punct[i].k;
				ps->p += n;
				break;
			}
		}
		if (t.kind == T_EOF) {
			ps->tok = t;
			if ((unsigned char)c < 32 || (unsigned char)c >= 127)
				error_at(ps, t.pos, "unexpected character (byte 0x%02x)", (unsigned char)c);
			else
				error_at(ps, t.pos, "unexpected character '%c'", c);
			return;
		}
	}
	t.n = (size_t)(ps->p - s);
	ps->tok = t;
}

static const char *tok_desc(const Tok *t, char *buf, size_t n)
{
	if (t->kind == T_EOF)
		return "end of file";
	snprintf(buf, n, "'%.*s'", (int)TA_MIN(t->n, 40), t->s);
	return buf;
}

static bool accept(Parser *ps, TokKind k)
{
	if (ps->tok.kind != k)
		return false;
	next(ps);
	return true;
}

static bool expect(Parser *ps, TokKind k, const char *what)
{
	if (ps->failed)
		return false;
	if (ps->tok.kind == k) {
		next(ps);
		return true;
	}
	char buf[64];
	error_at(ps, ps->tok.pos, "expected %s, found %s", what, tok_desc(&ps->tok, buf, sizeof buf));
	return false;
}

static bool accept_kw(Parser *ps, const char *kw)
{
	if (!tok_is(&ps->tok, kw))
		return false;
	next(ps);
	return true;
}

static const char *tok_name(Parser *ps)
{
	const char *s = arena_strndup(&ps->m->arena, ps->tok.s, ps->tok.n);
	if (!s)
		error_at(ps, ps->tok.pos, "out of memory");
	return s;
}

/* ---- names ------------------------------------------------------------- */

static const char *const reserved[] = {
	"kernel", "grid", "threads", "shared", "fragment", "local", "let", "copy", "gemm", "clear",
	"fill", "reduce_sum", "reduce_max", "reduce_min", "reduce_abssum", "reduce_absmax", "cumsum",
	"atomic_add", "atomic_max", "atomic_min", "barrier", "parallel", "in", "serial", "unroll", "pipelined", "stages", "if",
	"else", "break", "true", "false", "inf", "nan", "bx", "by", "bz", "tx", "ty", "tz", "min", "max", "abs", "exp",
	"exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "select", "ceildiv", "floor", "ceil", "round",
	"sin", "cos", "erf", "sigmoid", "pow", "fmod", "clamp", "if_then_else", "step",
	"shfl_xor", "shfl_down", "shfl_up", "shfl_idx", "reinterpret",
};

bool ir_reserved_word(const char *name)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(reserved); i++)
		if (!strcmp(reserved[i], name))
			return true;
	return dtype_from_name(name, strlen(name)) != DT_VOID;
}

static NameSlot *tab_find(const NameTab *t, const char *s, size_t n)
{
	if (!t->cap)
		return NULL;
	size_t mask = t->cap - 1;
	for (size_t i = hash_bytes(0xcbf29ce484222325ull, s, n) & mask;; i = (i + 1) & mask) {
		NameSlot *e = &t->slot[i];
		if (e->val < 0 || (e->n == n && !memcmp(e->s, s, n)))
			return e;
	}
}

static int tab_get(const NameTab *t, const char *s, size_t n)
{
	NameSlot *e = tab_find(t, s, n);
	return e ? e->val : -1;
}

/* Sets s -> val; 0 or -1 (out of memory).  s must outlive the table. */
static int tab_put(NameTab *t, const char *s, size_t n, int32_t val)
{
	if (2 * (t->used + 1) > t->cap) {
		NameTab g = {.cap = t->cap ? 2 * t->cap : 64};
		g.slot = malloc(g.cap * sizeof *g.slot);
		if (!g.slot)
			return -1;
		for (size_t i = 0; i < g.cap; i++)
			g.slot[i].val = -1;
		for (size_t i = 0; i < t->cap; i++)
			if (t->slot[i].val >= 0) {
				*tab_find(&g, t->slot[i].s, t->slot[i].n) = t->slot[i];
				g.used++;
			}
		free(t->slot);
		*t = g;
	}
	NameSlot *e = tab_find(t, s, n);
	if (e->val < 0)
		t->used++;
	*e = (NameSlot){s, (uint32_t)n, val};
	return 0;
}

static Name *lookup(Parser *ps, const char *s, size_t n)
{
	/* Shadowing is an error, so a visible name is always its latest
	 * declaration; one popped with its scope has an index at or past
	 * names.len, or a slot since reused by another name. */
	NameSlot *e = tab_find(&ps->name_at, s, n);
	if (!e || e->val < 0 || (size_t)e->val >= ps->names.len || ps->names.data[e->val].name != e->s)
		return NULL;
	return &ps->names.data[e->val];
}

static bool push_name(Parser *ps, Name nm)
{
	return !vec_push(&ps->names, nm) &&
	       !tab_put(&ps->name_at, nm.name, strlen(nm.name), (int32_t)ps->names.len - 1);
}

/* Declares a new name in the innermost scope; rejects keywords and shadowing. */
static bool declare(Parser *ps, const char *name, SrcPos pos, int32_t var, int32_t buf)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(reserved); i++)
		if (!strcmp(reserved[i], name)) {
			error_at(ps, pos, "'%s' is a reserved word and cannot be used as a name", name);
			return false;
		}
	if (dtype_from_name(name, strlen(name)) != DT_VOID) {
		error_at(ps, pos, "'%s' is a type name and cannot be used as a name", name);
		return false;
	}
	if (lookup(ps, name, strlen(name))) {
		error_at(ps, pos, "redefinition of '%s'", name);
		return false;
	}
	if (!push_name(ps, (Name){name, var, buf})) {
		error_at(ps, pos, "out of memory");
		return false;
	}
	return true;
}

static int32_t new_var(Parser *ps, const char *name, VarKind kind, DType type, SrcPos pos)
{
	int32_t id = ir_add_var(ps->m, (Var){.name = name, .kind = (uint8_t)kind, .type = (uint8_t)type, .pos = pos});
	if (id < 0)
		error_at(ps, pos, "out of memory");
	return id;
}

/* ---- expressions --------------------------------------------------------- */

static Expr mk(ExprKind k, SrcPos pos)
{
	return (Expr){.kind = (uint8_t)k, .pos = pos, .a = -1, .b = -1, .var = -1, .buf = -1};
}

static int expr_height(Parser *ps, int32_t id)
{
	return id >= 0 && (size_t)id < ps->edepth.len ? ps->edepth.data[id] : 0;
}

static int32_t add_expr(Parser *ps, Expr e)
{
	int h = TA_MAX(expr_height(ps, e.a), expr_height(ps, e.b));
	for (int i = 0; i < e.nargs; i++)
		h = TA_MAX(h, expr_height(ps, e.args[i]));
	if (h + 1 > MAX_HEIGHT) {
		error_at(ps, e.pos, "expression is nested too deeply (more than %d levels)", MAX_HEIGHT);
		return -1;
	}
	int32_t id = ir_add_expr(ps->m, e);
	if (id < 0 || vec_reserve(&ps->edepth, (size_t)id + 1)) {
		error_at(ps, e.pos, "out of memory");
		return -1;
	}
	while (ps->edepth.len <= (size_t)id)
		ps->edepth.data[ps->edepth.len++] = 0;
	ps->edepth.data[id] = (uint16_t)(h + 1);
	return id;
}

static int32_t parse_expr(Parser *ps);

/* Copies ps->tmp[from..] into an arena array and truncates tmp. */
static int32_t *take_ids(Parser *ps, size_t from, int32_t *n)
{
	size_t cnt = ps->tmp.len - from;
	*n = (int32_t)cnt;
	int32_t *ids = NULL;
	if (cnt) {
		ids = arena_alloc(&ps->m->arena, cnt * sizeof *ids);
		if (!ids) {
			error_at(ps, ps->tok.pos, "out of memory");
			*n = 0;
		} else {
			memcpy(ids, ps->tmp.data + from, cnt * sizeof *ids);
		}
	}
	ps->tmp.len = from;
	return ids;
}

/* expr (',' expr)* up to the closing token, which is consumed. */
static int32_t *parse_expr_list(Parser *ps, TokKind close, const char *closestr, int32_t *n)
{
	size_t from = ps->tmp.len;
	if (ps->tok.kind != close) {
		do {
			int32_t e = parse_expr(ps);
			if (ps->failed || vec_push(&ps->tmp, e)) {
				ps->tmp.len = from;
				*n = 0;
				return NULL;
			}
		} while (accept(ps, T_COMMA));
	}
	expect(ps, close, closestr);
	return take_ids(ps, from, n);
}

static const struct {
	const char *name;
	Op op;
	int nargs;
} intrinsics[] = {
	{"min", OP_MIN, 2},   {"max", OP_MAX, 2},     {"abs", OP_ABS, 1},     {"exp", OP_EXP, 1},
	{"exp2", OP_EXP2, 1}, {"log", OP_LOG, 1},     {"log2", OP_LOG2, 1},   {"sqrt", OP_SQRT, 1},
	{"rsqrt", OP_RSQRT, 1}, {"tanh", OP_TANH, 1}, {"select", OP_SELECT, 3}, {"ceildiv", OP_CEILDIV, 2},
	{"floor", OP_FLOOR, 1}, {"ceil", OP_CEIL, 1},   {"round", OP_ROUND, 1}, {"sin", OP_SIN, 1},
	{"cos", OP_COS, 1},     {"erf", OP_ERF, 1},     {"sigmoid", OP_SIGMOID, 1}, {"pow", OP_POW, 2},
	{"fmod", OP_FMOD, 2},   {"clamp", OP_CLAMP, 3}, {"if_then_else", OP_IF_THEN_ELSE, 3},
	{"shfl_xor", OP_SHFL_XOR, 2}, {"shfl_down", OP_SHFL_DOWN, 2}, {"shfl_up", OP_SHFL_UP, 2},
	{"shfl_idx", OP_SHFL_IDX, 2},
};

/* The index list [0] of a var's element. */
static int32_t *zero_index(Parser *ps, SrcPos pos, int32_t *n)
{
	int32_t *ids = arena_alloc(&ps->m->arena, sizeof *ids);
	if (ids)
		ids[0] = ir_int(ps->m, 0, pos);
	if (!ids || ids[0] < 0) {
		error_at(ps, pos, "out of memory");
		return NULL;
	}
	*n = 1;
	return ids;
}

static bool xpush(Parser *ps, XEntry x)
{
	if (vec_push(&ps->xs, x)) {
		error_at(ps, x.pos, "out of memory");
		return false;
	}
	return true;
}

/* The node of a call, cast or load whose argument list (in tmp from x->from)
 * has just been closed. */
static int32_t finish_group(Parser *ps, const XEntry *x)
{
	Expr e = mk(x->kind == X_INDEX ? E_LOAD : x->want ? E_CALL : E_CAST, x->pos);
	e.args = take_ids(ps, x->from, &e.nargs);
	if (ps->failed)
		return -1;
	if (x->kind == X_INDEX) {
		e.buf = x->a;
		return add_expr(ps, e);
	}
	int want = x->want ? x->want : 1;
	if (e.nargs != want) {
		error_at(ps, x->pos, "'%.*s' takes %d argument%s, %d given", (int)x->namelen, x->name, want,
		         want == 1 ? "" : "s", e.nargs);
		return -1;
	}
	if (e.kind == E_CAST) {
		e.cast_to = x->op;
		e.op = x->bitcast; /* 1: reinterpret the bits */
		e.a = e.args[0];
		e.args = NULL;
		e.nargs = 0;
	} else {
		e.op = x->op;
	}
	return add_expr(ps, e);
}

/* Opens the group of a call, cast or load at its '(' or '[' (consumed by the
 * caller): pushes it, or, for an empty list, closes it at once. */
static int32_t open_group(Parser *ps, XEntry x, TokKind close, const char *closestr)
{
	x.from = (uint32_t)ps->tmp.len;
	if (ps->tok.kind == close) {
		next(ps);
		return finish_group(ps, &x);
	}
	return xpush(ps, x) ? -2 : -1;
}

/* A literal, a name, or the start of a group: the node's id, -1 on an error,
 * or -2 when a group was opened (its contents come next). */
static int32_t parse_operand(Parser *ps)
{
	Tok t = ps->tok;
	char buf[64];
	switch (t.kind) {
	case T_INT: {
		next(ps);
		Expr e = mk(E_INT, t.pos);
		e.ival = t.ival;
		return add_expr(ps, e);
	}
	case T_FLOAT: {
		next(ps);
		Expr e = mk(E_FLOAT, t.pos);
		e.fval = t.fval;
		return add_expr(ps, e);
	}
	case T_LPAREN:
		next(ps);
		return xpush(ps, (XEntry){.kind = X_PAREN, .pos = t.pos}) ? -2 : -1;
	case T_IDENT:
		break;
	default:
		error_at(ps, t.pos, "expected an expression, found %s", tok_desc(&t, buf, sizeof buf));
		return -1;
	}
	next(ps);
	if (tok_is(&t, "true") || tok_is(&t, "false")) {
		Expr e = mk(E_BOOL, t.pos);
		e.ival = tok_is(&t, "true");
		return add_expr(ps, e);
	}
	if (tok_is(&t, "inf") || tok_is(&t, "nan")) {
		Expr e = mk(E_FLOAT, t.pos);
		e.fval = tok_is(&t, "inf") ? INFINITY : NAN;
		return add_expr(ps, e);
	}
	if (ps->tok.kind == T_LPAREN) { /* intrinsic call or cast */
		next(ps);
		XEntry x = {.kind = X_CALL, .pos = t.pos, .name = t.s, .namelen = (uint32_t)t.n};
		DType cast = dtype_from_name(t.s, t.n);
		if (tok_is(&t, "reinterpret")) { /* reinterpret(DTYPE, x): a cast of the bits */
			Tok dt = ps->tok;
			cast = dt.kind == T_IDENT ? dtype_from_name(dt.s, dt.n) : DT_VOID;
			if (cast == DT_VOID) {
				error_at(ps, dt.pos, "reinterpret takes a dtype first: reinterpret(DTYPE, value)");
				return -1;
			}
			next(ps);
			if (ps->tok.kind != T_COMMA) {
				error_at(ps, ps->tok.pos, "expected ',' after reinterpret's dtype, found %s",
				         tok_desc(&ps->tok, buf, sizeof buf));
				return -1;
			}
			next(ps);
			x.bitcast = true;
		}
		if (cast != DT_VOID) {
			x.op = (uint8_t)cast;
		} else {
			for (size_t i = 0; i < TA_ARRAY_LEN(intrinsics); i++)
				if (tok_is(&t, intrinsics[i].name)) {
					x.op = (uint8_t)intrinsics[i].op;
					x.want = (int8_t)intrinsics[i].nargs;
				}
			if (!x.want) {
				error_at(ps, t.pos, "unknown function '%.*s'", (int)t.n, t.s);
				return -1;
			}
		}
		return open_group(ps, x, T_RPAREN, "')'");
	}
	Name *nm = lookup(ps, t.s, t.n);
	if (ps->in_dims) { /* a shape symbol, declared by its first use */
		if (nm && (nm->var < 0 || ps->m->vars.data[nm->var].kind != V_SYMBOL)) {
			error_at(ps, t.pos, "'%.*s' is not a shape symbol; tensor dimensions are integer expressions of "
			         "shape symbols", (int)t.n, t.s);
			return -1;
		}
		int32_t v = nm ? nm->var : -1;
		if (!nm) {
			const char *sym = arena_strndup(&ps->m->arena, t.s, t.n);
			v = sym ? new_var(ps, sym, V_SYMBOL, DT_I32, t.pos) : -1;
			if (v < 0 || !declare(ps, sym, t.pos, v, -1))
				return -1;
		}
		Expr x = mk(E_VAR, t.pos);
		x.var = v;
		return add_expr(ps, x);
	}
	if (!nm) {
		error_at(ps, t.pos, "use of undeclared name '%.*s'", (int)t.n, t.s);
		return -1;
	}
	if (nm->buf >= 0 && ps->m->bufs.data[nm->buf].var && ps->tok.kind != T_LBRACK) {
		Expr e = mk(E_LOAD, t.pos); /* a var: its one element */
		e.buf = nm->buf;
		e.args = zero_index(ps, t.pos, &e.nargs);
		return e.args ? add_expr(ps, e) : -1;
	}
	if (nm->buf >= 0) {
		if (ps->tok.kind != T_LBRACK) {
			error_at(ps, t.pos, "buffer '%.*s' used as a value; index it, e.g. %.*s[i]", (int)t.n, t.s,
			         (int)t.n, t.s);
			return -1;
		}
		next(ps);
		return open_group(ps, (XEntry){.kind = X_INDEX, .pos = t.pos, .a = nm->buf}, T_RBRACK, "']'");
	}
	if (ps->tok.kind == T_LBRACK) {
		error_at(ps, ps->tok.pos, "'%.*s' is not a buffer and cannot be indexed", (int)t.n, t.s);
		return -1;
	}
	Expr e = mk(E_VAR, t.pos);
	e.var = nm->var;
	return add_expr(ps, e);
}

/* C's precedence (docs/tile-ir.md), lowest first; comparisons share one
 * level and do not chain. */
enum { PREC_CMP = 6 };
static int binop_prec(TokKind k, Op *op)
{
	switch (k) {
	case T_OROR: *op = OP_OR; return 1;
	case T_ANDAND: *op = OP_AND; return 2;
	case T_PIPE: *op = OP_BOR; return 3;
	case T_CARET: *op = OP_BXOR; return 4;
	case T_AMP: *op = OP_BAND; return 5;
	case T_EQ: *op = OP_EQ; return PREC_CMP;
	case T_NE: *op = OP_NE; return PREC_CMP;
	case T_LT: *op = OP_LT; return PREC_CMP;
	case T_LE: *op = OP_LE; return PREC_CMP;
	case T_GT: *op = OP_GT; return PREC_CMP;
	case T_GE: *op = OP_GE; return PREC_CMP;
	case T_SHL: *op = OP_SHL; return 7;
	case T_SHR: *op = OP_SHR; return 7;
	case T_PLUS: *op = OP_ADD; return 8;
	case T_MINUS: *op = OP_SUB; return 8;
	case T_STAR: *op = OP_MUL; return 9;
	case T_SLASH: *op = OP_DIV; return 9;
	case T_SLASHSLASH: *op = OP_FLOORDIV; return 9;
	case T_PERCENT: *op = OP_MOD; return 9;
	default: return 0;
	}
}

/* A prefix operator applied to its operand. */
static int32_t apply_unary(Parser *ps, const XEntry *x, int32_t a)
{
	if (x->kind == X_FOLD) {
		/* `-literal` is one literal, so the printer's "-5" (and "-inf", its
		 * spelling of a negative infinite literal such as -1e999) reads back
		 * as the same node. */
		Expr *e = &ps->m->exprs.data[a];
		if (e->kind == E_INT || e->kind == E_FLOAT) {
			if (e->kind == E_INT)
				e->ival = -e->ival;
			else
				e->fval = -e->fval;
			e->pos = x->pos;
			return a;
		}
	}
	Expr e = mk(E_UNARY, x->pos);
	e.op = x->op;
	e.a = a;
	return add_expr(ps, e);
}

/* Precedence climbing with an explicit stack (ps->xs): C stack use does not
 * depend on nesting.  Nodes are created in the order a recursive descent
 * creates them (operands before their operator), so ids are the same. */
static int32_t parse_expr(Parser *ps)
{
	if (ps->failed)
		return -1;
	size_t base = ps->xs.len, tbase = ps->tmp.len;
	int groups = 0, run = 0; /* open groups; prefix operators in a row */
	for (;;) {
		/* expecting an operand */
		Tok t = ps->tok;
		if (t.kind == T_MINUS || t.kind == T_BANG || t.kind == T_TILDE) {
			if (++run > MAX_HEIGHT) { /* each is a level of the tree */
				error_at(ps, t.pos, "expression is nested too deeply (more than %d levels)", MAX_HEIGHT);
				goto fail;
			}
			next(ps);
			bool fold = t.kind == T_MINUS &&
			            (ps->tok.kind == T_INT || ps->tok.kind == T_FLOAT || tok_is(&ps->tok, "inf"));
			Op op = t.kind == T_MINUS ? OP_NEG : t.kind == T_BANG ? OP_NOT : OP_BNOT;
			if (!xpush(ps, (XEntry){.kind = fold ? X_FOLD : X_UNARY, .op = (uint8_t)op, .pos = t.pos}))
				goto fail;
			continue;
		}
		run = 0;
		int32_t cur = parse_operand(ps);
		if (cur == -2) {
			if (++groups > MAX_GROUPS) {
				error_at(ps, t.pos, "parentheses, brackets and calls are nested too deeply (more than %d levels)",
				         MAX_GROUPS);
				goto fail;
			}
			continue;
		}
		/* an operand is complete: close what it completes */
		for (;;) {
			if (cur < 0)
				goto fail;
			XEntry *x;
			while (ps->xs.len > base && (x = &ps->xs.data[ps->xs.len - 1])->kind <= X_FOLD) {
				cur = apply_unary(ps, x, cur);
				ps->xs.len--;
				if (cur < 0)
					goto fail;
			}
			Op op = 0;
			int prec = binop_prec(ps->tok.kind, &op);
			while (ps->xs.len > base && (x = &ps->xs.data[ps->xs.len - 1])->kind == X_BINARY && x->prec >= prec) {
				if (x->prec == PREC_CMP && prec == PREC_CMP) {
					error_at(ps, ps->tok.pos, "comparisons cannot be chained; use && between them");
					goto fail;
				}
				Expr e = mk(E_BINARY, x->pos);
				e.op = x->op;
				e.a = x->a;
				e.b = cur;
				ps->xs.len--;
				if ((cur = add_expr(ps, e)) < 0)
					goto fail;
			}
			if (prec > 0) {
				if (!xpush(ps, (XEntry){.kind = X_BINARY, .op = (uint8_t)op, .prec = (int8_t)prec, .a = cur,
				                        .pos = ps->tok.pos}))
					goto fail;
				next(ps);
				break;
			}
			if (ps->xs.len == base)
				return cur;
			x = &ps->xs.data[ps->xs.len - 1]; /* the innermost open group */
			if (x->kind == X_PAREN) {
				if (!expect(ps, T_RPAREN, "')'"))
					goto fail;
			} else {
				if (vec_push(&ps->tmp, cur)) {
					error_at(ps, ps->tok.pos, "out of memory");
					goto fail;
				}
				if (accept(ps, T_COMMA))
					break; /* the next argument */
				if (!expect(ps, x->kind == X_INDEX ? T_RBRACK : T_RPAREN, x->kind == X_INDEX ? "']'" : "')'"))
					goto fail;
				cur = finish_group(ps, x);
			}
			ps->xs.len--;
			groups--;
		}
	}
fail:
	ps->xs.len = base;
	ps->tmp.len = tbase;
	return -1;
}

/* ---- statements ---------------------------------------------------------- */

static Stmt mk_stmt(StmtKind k, SrcPos pos)
{
	Stmt s = {.kind = (uint8_t)k, .pos = pos, .value = -1, .var = -1, .buf = -1, .lo = -1, .hi = -1, .step = -1,
	          .dim = -1};
	s.dst.buf = s.src.buf = s.src2.buf = -1;
	return s;
}

static int32_t add_stmt(Parser *ps, Stmt s)
{
	int32_t id = ir_add_stmt(ps->m, s);
	if (id < 0)
		error_at(ps, s.pos, "out of memory");
	return id;
}

/* NAME or NAME[e, ...] naming a buffer. */
static bool parse_region(Parser *ps, Region *r, const char *what)
{
	Tok t = ps->tok;
	char buf[64];
	if (t.kind != T_IDENT) {
		error_at(ps, t.pos, "expected %s, found %s", what, tok_desc(&t, buf, sizeof buf));
		return false;
	}
	Name *nm = lookup(ps, t.s, t.n);
	if (!nm) {
		error_at(ps, t.pos, "use of undeclared name '%.*s'", (int)t.n, t.s);
		return false;
	}
	if (nm->buf < 0) {
		error_at(ps, t.pos, "'%.*s' is not a buffer; expected %s", (int)t.n, t.s, what);
		return false;
	}
	next(ps);
	r->buf = nm->buf;
	r->pos = t.pos;
	r->nidx = 0;
	r->idx = NULL;
	r->hi = NULL;
	if (!accept(ps, T_LBRACK))
		return true;
	/* index, lo : hi or ':'; pairs (lo, hi) go to tmp, hi = REGION_POINT for an index */
	size_t from = ps->tmp.len;
	bool ranged = false;
	if (ps->tok.kind != T_RBRACK) {
		do {
			int32_t lo, hi = REGION_POINT;
			if (ps->tok.kind == T_COLON) {
				lo = ir_int(ps->m, 0, ps->tok.pos);
				hi = REGION_ALL;
				next(ps);
			} else {
				lo = parse_expr(ps);
				if (!ps->failed && accept(ps, T_COLON))
					hi = parse_expr(ps);
			}
			ranged |= hi != REGION_POINT;
			if (ps->failed || lo < 0 || vec_push(&ps->tmp, lo) || vec_push(&ps->tmp, hi)) {
				if (!ps->failed)
					error_at(ps, ps->tok.pos, "out of memory");
				ps->tmp.len = from;
				return false;
			}
		} while (accept(ps, T_COMMA));
	}
	if (!expect(ps, T_RBRACK, "']'")) {
		ps->tmp.len = from;
		return false;
	}
	int32_t n = (int32_t)(ps->tmp.len - from) / 2;
	r->nidx = n;
	r->idx = arena_alloc(&ps->m->arena, (size_t)n * sizeof *r->idx);
	r->hi = ranged ? arena_alloc(&ps->m->arena, (size_t)n * sizeof *r->hi) : NULL;
	if ((n && !r->idx) || (ranged && !r->hi)) {
		error_at(ps, ps->tok.pos, "out of memory");
		ps->tmp.len = from;
		return false;
	}
	for (int32_t i = 0; i < n; i++) {
		r->idx[i] = ps->tmp.data[from + 2 * (size_t)i];
		if (ranged)
			r->hi[i] = ps->tmp.data[from + 2 * (size_t)i + 1];
	}
	ps->tmp.len = from;
	if (!n)
		r->idx = NULL;
	return true;
}

/* Keyword arguments after the positional ones: `, name=value`. */
typedef struct {
	const char *name;
	bool is_bool;
	bool *bval;
	int32_t *ival;
} Kwarg;

static bool parse_kwargs(Parser *ps, Kwarg *kw, int nkw)
{
	bool seen[8] = {0};
	while (accept(ps, T_COMMA)) {
		Tok t = ps->tok;
		char buf[64];
		if (t.kind != T_IDENT) {
			error_at(ps, t.pos, "expected a keyword argument, found %s", tok_desc(&t, buf, sizeof buf));
			return false;
		}
		int i = 0;
		while (i < nkw && !tok_is(&t, kw[i].name))
			i++;
		if (i == nkw) {
			StrBuf sb = {0};
			for (int j = 0; j < nkw; j++)
				sb_printf(&sb, "%s%s", j ? ", " : "", kw[j].name);
			error_at(ps, t.pos, "unknown keyword argument '%.*s' (expected one of: %s)", (int)t.n, t.s,
			         sb.buf ? sb.buf : "");
			sb_free(&sb);
			return false;
		}
		if (seen[i]) {
			error_at(ps, t.pos, "keyword argument '%s' given twice", kw[i].name);
			return false;
		}
		seen[i] = true;
		next(ps);
		if (!expect(ps, T_ASSIGN, "'='"))
			return false;
		Tok v = ps->tok;
		if (kw[i].is_bool) {
			if (!tok_is(&v, "true") && !tok_is(&v, "false")) {
				error_at(ps, v.pos, "'%s' takes true or false", kw[i].name);
				return false;
			}
			*kw[i].bval = tok_is(&v, "true");
			next(ps);
		} else {
			bool neg = accept(ps, T_MINUS);
			if (ps->tok.kind != T_INT) {
				error_at(ps, ps->tok.pos, "'%s' takes an integer constant", kw[i].name);
				return false;
			}
			*kw[i].ival = (int32_t)(neg ? -ps->tok.ival : ps->tok.ival);
			next(ps);
		}
	}
	return expect(ps, T_RPAREN, "')'");
}

/* NAME '=' 'view' TENSOR '[' dims ']': the tensor parameter's memory,
 * row-major with other dimensions (integer expressions of shape symbols). */
/* '[' e, ... ']': the shape of a buffer or view being declared, 1 to
 * IR_MAX_RANK expressions into b->shape and b->rank (what: the expected
 * '[', subject: "buffers have", "a view has" for the rank error at pos).
 * Returns false after an error. */
static bool parse_shape(Parser *ps, Buffer *b, const char *what, SrcPos pos, const char *subject)
{
	if (!expect(ps, T_LBRACK, what))
		return false;
	int32_t n;
	int32_t *dims = parse_expr_list(ps, T_RBRACK, "']'", &n);
	if (ps->failed)
		return false;
	if (n < 1 || n > IR_MAX_RANK) {
		error_at(ps, pos, "%s rank 1 to %d, not %d", subject, IR_MAX_RANK, n);
		return false;
	}
	b->rank = (uint8_t)n;
	memcpy(b->shape, dims, (size_t)n * sizeof *dims);
	return true;
}

/* NAME = shared/fragment/local/view ...: adds b under name, declares it and
 * returns its S_ALLOC statement (-1 after an error). */
static int32_t declare_buf(Parser *ps, Tok name, Buffer b)
{
	b.name = arena_strndup(&ps->m->arena, name.s, name.n);
	int32_t id = b.name ? ir_add_buf(ps->m, b) : -1;
	if (id < 0) {
		error_at(ps, name.pos, "out of memory");
		return -1;
	}
	if (!declare(ps, b.name, name.pos, -1, id))
		return -1;
	Stmt s = mk_stmt(S_ALLOC, name.pos);
	s.buf = id;
	return add_stmt(ps, s);
}

static int32_t parse_view(Parser *ps, Tok name)
{
	next(ps); /* 'view' */
	Tok src = ps->tok;
	Name *nm = src.kind == T_IDENT ? lookup(ps, src.s, src.n) : NULL;
	if (!nm || nm->buf < 0 || ps->m->bufs.data[nm->buf].scope != SCOPE_GLOBAL) {
		char buf[64];
		error_at(ps, src.pos, "expected a tensor parameter after 'view', found %s", tok_desc(&src, buf, sizeof buf));
		return -1;
	}
	const Buffer *sb = &ps->m->bufs.data[nm->buf];
	int32_t viewed = sb->view ? sb->viewed : nm->buf;
	next(ps);
	Buffer b = {.scope = SCOPE_GLOBAL, .dtype = ps->m->bufs.data[viewed].dtype, .pos = name.pos,
	            .param = ps->m->bufs.data[viewed].param, .view = true, .viewed = viewed};
	if (!parse_shape(ps, &b, "'[' and the view's shape", src.pos, "a view has"))
		return -1;
	return declare_buf(ps, name, b);
}

static int32_t parse_alloc(Parser *ps, Tok name)
{
	/* NAME '=' already consumed */
	Tok st = ps->tok;
	Scope scope;
	if (tok_is(&st, "shared"))
		scope = SCOPE_SHARED;
	else if (tok_is(&st, "fragment"))
		scope = SCOPE_FRAGMENT;
	else if (tok_is(&st, "local"))
		scope = SCOPE_LOCAL;
	else if (tok_is(&st, "view"))
		return parse_view(ps, name);
	else {
		char buf[64];
		error_at(ps, st.pos, "expected 'shared', 'fragment', 'local' or 'view' after '%.*s =', found %s "
		         "(use 'let' for scalar values)", (int)name.n, name.s, tok_desc(&st, buf, sizeof buf));
		return -1;
	}
	next(ps);
	Tok dt = ps->tok;
	DType t = dt.kind == T_IDENT ? dtype_from_name(dt.s, dt.n) : DT_VOID;
	if (t == DT_VOID) {
		char buf[64];
		error_at(ps, dt.pos, "expected a dtype, found %s", tok_desc(&dt, buf, sizeof buf));
		return -1;
	}
	next(ps);
	Buffer b = {.scope = (uint8_t)scope, .dtype = (uint8_t)t, .pos = name.pos, .param = -1};
	if (!parse_shape(ps, &b, "'[' and the buffer's shape", dt.pos, "buffers have"))
		return -1;
	return declare_buf(ps, name, b);
}

/* 'var' NAME [':' DTYPE] ['=' expr]: a local [1] buffer used without an
 * index, then a store of the initial value.  Without a type the buffer's
 * dtype stays DT_VOID and verify takes the initial value's type. */
static int32_t parse_var(Parser *ps, Tok kw)
{
	Tok name = ps->tok;
	next(ps);
	DType t = DT_VOID;
	if (accept(ps, T_COLON)) {
		Tok dt = ps->tok;
		t = dt.kind == T_IDENT ? dtype_from_name(dt.s, dt.n) : DT_VOID;
		if (t == DT_VOID) {
			char buf[64];
			error_at(ps, dt.pos, "expected a dtype after 'var %.*s:', found %s", (int)name.n, name.s,
			         tok_desc(&dt, buf, sizeof buf));
			return -1;
		}
		next(ps);
	}
	int32_t init = -1;
	if (accept(ps, T_ASSIGN)) {
		init = parse_expr(ps);
		if (ps->failed)
			return -1;
	} else if (t == DT_VOID) {
		error_at(ps, name.pos, "'var %.*s' needs a type or an initial value: var %.*s: f32 = 0.0", (int)name.n,
		         name.s, (int)name.n, name.s);
		return -1;
	}
	Buffer b = {.scope = SCOPE_LOCAL, .dtype = (uint8_t)t, .rank = 1, .pos = name.pos, .param = -1, .var = true};
	b.shape[0] = ir_int(ps->m, 1, name.pos);
	b.name = arena_strndup(&ps->m->arena, name.s, name.n);
	int32_t id = b.shape[0] < 0 || !b.name ? -1 : ir_add_buf(ps->m, b);
	if (id < 0) {
		error_at(ps, name.pos, "out of memory");
		return -1;
	}
	if (!declare(ps, b.name, name.pos, -1, id))
		return -1;
	Stmt s = mk_stmt(S_ALLOC, kw.pos);
	s.buf = id;
	int32_t a = add_stmt(ps, s);
	if (a < 0 || init < 0)
		return a;
	/* the initial store follows as its own statement (parse_block_ takes both) */
	Stmt st = mk_stmt(S_STORE, name.pos);
	st.dst.buf = id;
	st.dst.pos = name.pos;
	st.dst.idx = zero_index(ps, name.pos, &st.dst.nidx);
	st.value = init;
	ps->pending = st.dst.idx ? add_stmt(ps, st) : -1;
	return ps->pending < 0 ? -1 : a;
}

/* The statements with a body parse their header into f->s and return
 * OPEN_BLOCK; parse_body then parses the body ('{' is the current token). */
#define OPEN_BLOCK (-2)
/* parse_stmt's result for a kernel-level statement (use_swizzle) that sets
 * a Kernel field and adds no statement. */
#define NO_STMT (-3)

static int32_t parse_for(Parser *ps, Tok kw, BFrame *f)
{
	Stmt s = mk_stmt(S_FOR, kw.pos);
	s.vectorized = tok_is(&kw, "vectorized"); /* an unroll by another name */
	s.sub = tok_is(&kw, "serial") ? LOOP_SERIAL
	        : tok_is(&kw, "unroll") || s.vectorized ? LOOP_UNROLL
	                                                : LOOP_PIPELINED;
	Tok v = ps->tok;
	if (v.kind != T_IDENT) {
		error_at(ps, v.pos, "expected a loop variable name after '%.*s'", (int)kw.n, kw.s);
		return -1;
	}
	const char *name = tok_name(ps);
	next(ps);
	if (!accept_kw(ps, "in")) {
		error_at(ps, ps->tok.pos, "expected 'in' after the loop variable");
		return -1;
	}
	s.lo = parse_expr(ps);
	if (!expect(ps, T_DOTDOT, "'..' between the loop bounds"))
		return -1;
	s.hi = parse_expr(ps);
	if (ps->failed)
		return -1;
	SrcPos steppos = ps->tok.pos;
	if (accept_kw(ps, "step")) {
		if (s.sub == LOOP_PIPELINED) {
			error_at(ps, steppos, "a pipelined loop has no step; use a serial loop, or scale the index");
			return -1;
		}
		s.step = parse_expr(ps);
		if (ps->failed)
			return -1;
	}
	if (s.sub == LOOP_PIPELINED) {
		if (!accept_kw(ps, "stages")) {
			error_at(ps, ps->tok.pos, "expected 'stages(N)' after a pipelined loop's range");
			return -1;
		}
		if (!expect(ps, T_LPAREN, "'('"))
			return -1;
		if (ps->tok.kind != T_INT) {
			error_at(ps, ps->tok.pos, "stages takes an integer constant");
			return -1;
		}
		s.stages = (int32_t)ps->tok.ival;
		next(ps);
		if (!expect(ps, T_RPAREN, "')'"))
			return -1;
	}
	f->scope = ps->names.len;
	s.var = new_var(ps, name, V_LOOP, DT_I32, v.pos);
	if (s.var < 0 || !declare(ps, name, v.pos, s.var, -1))
		return -1;
	f->s = s;
	return OPEN_BLOCK;
}

static int32_t parse_parallel(Parser *ps, Tok kw, BFrame *f)
{
	Stmt s = mk_stmt(S_PARALLEL, kw.pos);
	if (!expect(ps, T_LPAREN, "'(' and the parallel loop variables, e.g. parallel (i, j) in (M, N)"))
		return -1;
	size_t mark = ps->names.len, from = ps->tmp.len;
	do {
		Tok v = ps->tok;
		if (v.kind != T_IDENT) {
			error_at(ps, v.pos, "expected a loop variable name");
			return -1;
		}
		const char *name = tok_name(ps);
		next(ps);
		int32_t id = new_var(ps, name, V_LOOP, DT_I32, v.pos);
		if (id < 0 || !declare(ps, name, v.pos, id, -1) || vec_push(&ps->tmp, id))
			return -1;
	} while (accept(ps, T_COMMA));
	if (!expect(ps, T_RPAREN, "')'"))
		return -1;
	s.vars = take_ids(ps, from, &s.nvars);
	if (!accept_kw(ps, "in")) {
		error_at(ps, ps->tok.pos, "expected 'in' after the parallel loop variables");
		return -1;
	}
	if (!expect(ps, T_LPAREN, "'(' and the loop extents"))
		return -1;
	/* Extents are resolved outside the loop's own names. */
	size_t inner = ps->names.len;
	ps->names.len = mark;
	int32_t next_n;
	s.extents = parse_expr_list(ps, T_RPAREN, "')'", &next_n);
	ps->names.len = inner;
	if (ps->failed)
		return -1;
	if (next_n != s.nvars) {
		error_at(ps, kw.pos, "parallel loop has %d variable%s but %d extent%s", s.nvars,
		         s.nvars == 1 ? "" : "s", next_n, next_n == 1 ? "" : "s");
		return -1;
	}
	f->s = s;
	f->scope = mark;
	return OPEN_BLOCK;
}

static int32_t parse_if(Parser *ps, Tok kw, BFrame *f)
{
	/* else and else-if are parsed by parse_body when the body ends */
	f->s = mk_stmt(S_IF, kw.pos);
	f->s.value = parse_expr(ps);
	f->scope = ps->names.len;
	return ps->failed ? -1 : OPEN_BLOCK;
}

/* use_swizzle(P[, order=row|col]) at the top of kernel k's body, NAME '('
 * consumed: sets k's rasterisation (verify checks P). */
static int32_t parse_use_swizzle(Parser *ps, Tok t)
{
	Kernel *k = ps->k;
	if (ps->blocks != 1) {
		error_at(ps, t.pos, "use_swizzle(...) applies to the whole kernel: write it at the top level of the "
		         "kernel body, not inside a loop or if");
		return -1;
	}
	if (k->raster) {
		error_at(ps, t.pos, "use_swizzle(...) given twice in kernel '%s' (first at line %d:%d)", k->name,
		         k->raster_pos.line, k->raster_pos.col);
		return -1;
	}
	if (k->ngrid < 2) {
		error_at(ps, t.pos, "use_swizzle(...) reorders the blocks of a 2-D or 3-D grid; kernel '%s' has a 1-D "
		         "grid, whose order it would not change", k->name);
		return -1;
	}
	int32_t p = parse_expr(ps);
	if (ps->failed)
		return -1;
	RasterOrder order = RASTER_ROW;
	if (accept(ps, T_COMMA)) {
		Tok kw = ps->tok;
		if (!tok_is(&kw, "order")) {
			char buf[64];
			error_at(ps, kw.pos, "expected 'order=row' or 'order=col' after use_swizzle's panel size, found %s",
			         tok_desc(&kw, buf, sizeof buf));
			return -1;
		}
		next(ps);
		if (!expect(ps, T_ASSIGN, "'='"))
			return -1;
		Tok v = ps->tok;
		if (tok_is(&v, "col"))
			order = RASTER_COL;
		else if (!tok_is(&v, "row")) {
			char buf[64];
			error_at(ps, v.pos, "use_swizzle's order is 'row' or 'col', not %s", tok_desc(&v, buf, sizeof buf));
			return -1;
		}
		next(ps);
	}
	if (!expect(ps, T_RPAREN, "')'"))
		return -1;
	k->raster = (uint8_t)order;
	k->raster_panel = p;
	k->raster_pos = t.pos;
	return NO_STMT;
}

static int32_t parse_builtin(Parser *ps, Tok t)
{
	if (tok_is(&t, "use_swizzle"))
		return parse_use_swizzle(ps, t);
	/* NAME '(' already consumed */
	Stmt s = mk_stmt(S_BARRIER, t.pos);
	static const char *const reduce_names[] = {"reduce_sum", "reduce_max", "reduce_min", "reduce_abssum",
	                                           "reduce_absmax"};
	if (tok_is(&t, "copy")) {
		s.kind = S_COPY;
		if (!parse_region(ps, &s.src, "the copy source") || !expect(ps, T_COMMA, "','") ||
		    !parse_region(ps, &s.dst, "the copy destination") || !expect(ps, T_RPAREN, "')'"))
			return -1;
	} else if (tok_is(&t, "gemm")) {
		s.kind = S_GEMM;
		if (!parse_region(ps, &s.src, "the A operand") || !expect(ps, T_COMMA, "','") ||
		    !parse_region(ps, &s.src2, "the B operand") || !expect(ps, T_COMMA, "','") ||
		    !parse_region(ps, &s.dst, "the C accumulator"))
			return -1;
		Kwarg kw[] = {{"transpose_a", true, &s.flag_a, NULL}, {"transpose_b", true, &s.flag_b, NULL},
		              {"clear", true, &s.flag_clear, NULL}};
		if (!parse_kwargs(ps, kw, 3))
			return -1;
	} else if (tok_is(&t, "clear")) {
		s.kind = S_CLEAR;
		if (!parse_region(ps, &s.dst, "a buffer") || !expect(ps, T_RPAREN, "')'"))
			return -1;
	} else if (tok_is(&t, "fill")) {
		s.kind = S_FILL;
		if (!parse_region(ps, &s.dst, "a buffer") || !expect(ps, T_COMMA, "','"))
			return -1;
		s.value = parse_expr(ps);
		if (!expect(ps, T_RPAREN, "')'"))
			return -1;
	} else if (tok_is(&t, "cumsum")) {
		s.kind = S_CUMSUM;
		if (!parse_region(ps, &s.src, "the source buffer") || !expect(ps, T_COMMA, "','") ||
		    !parse_region(ps, &s.dst, "the destination buffer"))
			return -1;
		Kwarg kw[] = {{"dim", false, NULL, &s.dim}, {"reverse", true, &s.flag_reverse, NULL}};
		if (!parse_kwargs(ps, kw, 2))
			return -1;
	} else if (tok_is(&t, "atomic_add") || tok_is(&t, "atomic_max") || tok_is(&t, "atomic_min")) {
		s.kind = S_ATOMIC_ADD;
		s.sub = (uint8_t)(tok_is(&t, "atomic_max") ? ATOMIC_MAX : tok_is(&t, "atomic_min") ? ATOMIC_MIN : ATOMIC_ADD);
		if (!parse_region(ps, &s.dst, "the destination") || !expect(ps, T_COMMA, "','"))
			return -1;
		/* Tile form when the second argument names a whole buffer (a var
		 * is a value). */
		Name *nm = ps->tok.kind == T_IDENT ? lookup(ps, ps->tok.s, ps->tok.n) : NULL;
		const char *q = ps->p;
		while (q < ps->end && (*q == ' ' || *q == '\t'))
			q++;
		if (nm && nm->buf >= 0 && !ps->m->bufs.data[nm->buf].var && q < ps->end && *q != '[') {
			if (!parse_region(ps, &s.src, "the source buffer"))
				return -1;
		} else {
			s.value = parse_expr(ps);
		}
		if (!expect(ps, T_RPAREN, "')'"))
			return -1;
	} else if (tok_is(&t, "barrier")) {
		if (!expect(ps, T_RPAREN, "')' (barrier takes no arguments)"))
			return -1;
	} else {
		size_t i = 0;
		while (i < TA_ARRAY_LEN(reduce_names) && !tok_is(&t, reduce_names[i]))
			i++;
		if (i == TA_ARRAY_LEN(reduce_names)) {
			error_at(ps, t.pos, "unknown statement '%.*s'", (int)t.n, t.s);
			return -1;
		}
		s.kind = S_REDUCE;
		s.sub = (uint8_t)i;
		s.flag_clear = true;
		if (!parse_region(ps, &s.src, "the source buffer") || !expect(ps, T_COMMA, "','") ||
		    !parse_region(ps, &s.dst, "the destination buffer"))
			return -1;
		Kwarg kw[] = {{"dim", false, NULL, &s.dim}, {"clear", true, &s.flag_clear, NULL}};
		if (!parse_kwargs(ps, kw, 2))
			return -1;
	}
	return add_stmt(ps, s);
}

static int32_t parse_stmt(Parser *ps, BFrame *f)
{
	Tok t = ps->tok;
	char buf[64];
	if (t.kind != T_IDENT) {
		error_at(ps, t.pos, "expected a statement, found %s", tok_desc(&t, buf, sizeof buf));
		return -1;
	}
	next(ps);
	if (tok_is(&t, "let")) {
		Tok v = ps->tok;
		if (v.kind != T_IDENT) {
			error_at(ps, v.pos, "expected a name after 'let'");
			return -1;
		}
		const char *name = tok_name(ps);
		next(ps);
		if (!expect(ps, T_ASSIGN, "'='"))
			return -1;
		Stmt s = mk_stmt(S_LET, t.pos);
		s.value = parse_expr(ps);
		if (ps->failed)
			return -1;
		s.var = new_var(ps, name, V_LET, DT_VOID, v.pos);
		if (s.var < 0 || !declare(ps, name, v.pos, s.var, -1))
			return -1;
		return add_stmt(ps, s);
	}
	if (tok_is(&t, "var") && ps->tok.kind == T_IDENT) /* contextual: `var = shared ...` is a buffer named var */
		return parse_var(ps, t);
	if (tok_is(&t, "serial") || tok_is(&t, "unroll") || tok_is(&t, "pipelined"))
		return parse_for(ps, t, f);
	/* contextual, like var: `vectorized = shared ...` is a buffer named vectorized */
	if (tok_is(&t, "vectorized") && ps->tok.kind == T_IDENT)
		return parse_for(ps, t, f);
	if (tok_is(&t, "break"))
		return add_stmt(ps, mk_stmt(S_BREAK, t.pos));
	if (tok_is(&t, "parallel"))
		return parse_parallel(ps, t, f);
	if (tok_is(&t, "if"))
		return parse_if(ps, t, f);
	if (ps->tok.kind == T_ASSIGN) {
		next(ps);
		Name *nm = lookup(ps, t.s, t.n);
		if (nm && nm->buf >= 0 && ps->m->bufs.data[nm->buf].var) { /* assignment to a var */
			Stmt s = mk_stmt(S_STORE, t.pos);
			s.dst.buf = nm->buf;
			s.dst.pos = t.pos;
			s.dst.idx = zero_index(ps, t.pos, &s.dst.nidx);
			s.value = s.dst.idx ? parse_expr(ps) : -1;
			return ps->failed ? -1 : add_stmt(ps, s);
		}
		return parse_alloc(ps, t);
	}
	if (ps->tok.kind == T_LPAREN) {
		next(ps);
		return parse_builtin(ps, t);
	}
	if (ps->tok.kind == T_LBRACK) {
		Name *nm = lookup(ps, t.s, t.n);
		if (!nm || nm->buf < 0) {
			error_at(ps, t.pos, nm ? "'%.*s' is not a buffer" : "use of undeclared name '%.*s'", (int)t.n,
			         t.s);
			return -1;
		}
		next(ps);
		Stmt s = mk_stmt(S_STORE, t.pos);
		s.dst.buf = nm->buf;
		s.dst.pos = t.pos;
		s.dst.idx = parse_expr_list(ps, T_RBRACK, "']'", &s.dst.nidx);
		if (!expect(ps, T_ASSIGN, "'='"))
			return -1;
		s.value = parse_expr(ps);
		return ps->failed ? -1 : add_stmt(ps, s);
	}
	if (tok_is(&t, "else")) {
		error_at(ps, t.pos, "'else' without a matching 'if'");
		return -1;
	}
	error_at(ps, ps->tok.pos, "expected '=', '[' or '(' after '%.*s' to form a statement", (int)t.n, t.s);
	return -1;
}

/* Opens f's block at its '{' (slot 0: the body, 1: the else block). */
static bool open_block(Parser *ps, BFrame *f, uint8_t slot)
{
	if (ps->blocks >= MAX_HEIGHT) {
		error_at(ps, ps->tok.pos, "blocks are nested too deeply (more than %d levels)", MAX_HEIGHT);
		return false;
	}
	if (!expect(ps, T_LBRACE, "'{'"))
		return false;
	ps->blocks++;
	f->slot = slot;
	f->mark = ps->names.len;
	f->ids.len = 0;
	return true;
}

/* At the '}' (or the end of file) of the innermost open block: closes it into *b. */
static bool close_block(Parser *ps, BFrame *f, Block *b)
{
	ps->names.len = f->mark;
	ps->blocks--;
	if (ps->tok.kind == T_EOF) {
		error_at(ps, ps->tok.pos, "expected '}' before end of file");
		return false;
	}
	next(ps);
	b->n = (int32_t)f->ids.len;
	b->ids = NULL;
	if (f->ids.len) {
		b->ids = arena_alloc(&ps->m->arena, f->ids.len * sizeof(int32_t));
		if (!b->ids) {
			error_at(ps, ps->tok.pos, "out of memory");
			return false;
		}
		memcpy(b->ids, f->ids.data, f->ids.len * sizeof(int32_t));
	}
	vec_free(&f->ids);
	return !ps->failed;
}

/* Reserves the next frame of ps->bfs (zeroed; not yet pushed). */
static BFrame *frame_slot(Parser *ps)
{
	if (vec_reserve(&ps->bfs, ps->bfs.len + 1)) {
		error_at(ps, ps->tok.pos, "out of memory");
		return NULL;
	}
	BFrame *f = &ps->bfs.data[ps->bfs.len];
	*f = (BFrame){0};
	return f;
}

/* '{' stmt* '}' with every nested body: the open blocks are a stack on the
 * heap (ps->bfs), not recursion, so C stack use does not grow with nesting
 * (up to MAX_HEIGHT blocks) or with the length of an else-if chain.  A
 * statement gets its id when it is complete, after those of its body, as in
 * a recursive descent. */
static bool parse_body(Parser *ps, Block *out)
{
	size_t base = ps->bfs.len;
	BFrame *f = frame_slot(ps);
	if (!f)
		return false;
	f->root = true;
	ps->bfs.len++;
	if (!open_block(ps, f, 0))
		goto fail;
	while (!ps->failed) {
		if (accept(ps, T_SEMI))
			continue;
		if (ps->tok.kind != T_RBRACE && ps->tok.kind != T_EOF) {
			BFrame *nf = frame_slot(ps);
			if (!nf)
				goto fail;
			ps->pending = -1;
			int32_t id = parse_stmt(ps, nf);
			if (id == NO_STMT)
				continue;
			if (id == OPEN_BLOCK) {
				ps->bfs.len++;
				if (!open_block(ps, nf, 0))
					goto fail;
				continue;
			}
			f = &ps->bfs.data[ps->bfs.len - 1];
			if (id < 0)
				goto fail;
			if (vec_push(&f->ids, id) || (ps->pending >= 0 && vec_push(&f->ids, ps->pending))) {
				error_at(ps, ps->tok.pos, "out of memory");
				goto fail;
			}
			continue;
		}
		f = &ps->bfs.data[ps->bfs.len - 1];
		Block b;
		if (!close_block(ps, f, &b))
			goto fail;
		if (f->root) {
			*out = b;
			ps->bfs.len--;
			return true;
		}
		if (f->slot == 0)
			f->s.body = b;
		else
			f->s.els = b;
		if (f->slot == 0 && f->s.kind == S_IF && accept_kw(ps, "else")) {
			Tok t = ps->tok;
			if (tok_is(&t, "if")) { /* else if: an else block holding one if */
				next(ps);
				BFrame *nf = frame_slot(ps);
				if (!nf || parse_if(ps, t, nf) != OPEN_BLOCK)
					goto fail;
				nf->elif = true;
				ps->bfs.len++;
				if (!open_block(ps, nf, 0))
					goto fail;
			} else if (!open_block(ps, f, 1)) {
				goto fail;
			}
			continue;
		}
		/* the statement is complete, and so is each if whose else-if it is */
		int32_t id;
		for (;;) {
			f = &ps->bfs.data[ps->bfs.len - 1];
			ps->names.len = f->scope;
			id = add_stmt(ps, f->s);
			bool elif = f->elif;
			ps->bfs.len--;
			if (id < 0)
				goto fail;
			if (!elif)
				break;
			f = &ps->bfs.data[ps->bfs.len - 1];
			if (!(f->s.els.ids = arena_alloc(&ps->m->arena, sizeof(int32_t)))) {
				error_at(ps, ps->tok.pos, "out of memory");
				goto fail;
			}
			f->s.els.ids[0] = id;
			f->s.els.n = 1;
		}
		f = &ps->bfs.data[ps->bfs.len - 1];
		if (vec_push(&f->ids, id)) {
			error_at(ps, ps->tok.pos, "out of memory");
			goto fail;
		}
	}
fail:
	for (; ps->bfs.len > base; ps->bfs.len--)
		vec_free(&ps->bfs.data[ps->bfs.len - 1].ids);
	return false;
}

/* ---- kernels ------------------------------------------------------------- */

typedef VEC(KernelArg) ArgVec;

static bool parse_param(Parser *ps, ArgVec *args)
{
	Tok name = ps->tok;
	if (name.kind != T_IDENT) {
		error_at(ps, name.pos, "expected a parameter name");
		return false;
	}
	const char *nm = tok_name(ps);
	next(ps);
	if (!expect(ps, T_COLON, "':' and the parameter's type"))
		return false;
	Tok dt = ps->tok;
	DType t = dt.kind == T_IDENT ? dtype_from_name(dt.s, dt.n) : DT_VOID;
	if (t == DT_VOID) {
		char buf[64];
		error_at(ps, dt.pos, "expected a dtype, found %s", tok_desc(&dt, buf, sizeof buf));
		return false;
	}
	next(ps);
	if (!accept(ps, T_LBRACK)) { /* scalar */
		int32_t v = new_var(ps, nm, V_PARAM, t, name.pos);
		if (v < 0 || !declare(ps, nm, name.pos, v, -1))
			return false;
		return !vec_push(args, ((KernelArg){v, -1}));
	}
	Buffer b = {.name = nm, .scope = SCOPE_GLOBAL, .dtype = (uint8_t)t, .pos = name.pos};
	do {
		Tok d = ps->tok;
		if (b.rank == IR_MAX_RANK) {
			error_at(ps, d.pos, "tensors have rank 1 to %d", IR_MAX_RANK);
			return false;
		}
		/* an integer expression of shape symbols, e.g. N or K * K (verify checks its form) */
		ps->in_dims = true;
		int32_t e = parse_expr(ps);
		ps->in_dims = false;
		if (e < 0)
			return false;
		if (ps->m->exprs.data[e].kind == E_VAR && accept(ps, T_ASSIGN)) { /* NAME = N: the symbol's default */
			const Expr *x = &ps->m->exprs.data[e];
			Var *sv = &ps->m->vars.data[x->var];
			Tok vt = ps->tok;
			if (vt.kind != T_INT || vt.ival < 1 || vt.ival > INT32_MAX) {
				error_at(ps, vt.pos, "a shape symbol's default is a positive integer");
				return false;
			}
			if (sv->kind != V_SYMBOL || sv->dflt || sv->pos.line != x->pos.line || sv->pos.col != x->pos.col) {
				error_at(ps, x->pos, "a default for '%s' may be given only where it first appears", sv->name);
				return false;
			}
			sv->has_value = true;
			sv->value = sv->dflt = vt.ival;
			next(ps);
		}
		b.shape[b.rank++] = e;
	} while (accept(ps, T_COMMA));
	if (!expect(ps, T_RBRACK, "']'"))
		return false;
	b.param = (int32_t)args->len;
	int32_t id = ir_add_buf(ps->m, b);
	if (id < 0 || !declare(ps, nm, name.pos, -1, id))
		return false;
	return !vec_push(args, ((KernelArg){-1, id}));
}

static bool parse_kernel(Parser *ps)
{
	Kernel k = {.pos = ps->tok.pos, .raster_panel = -1};
	next(ps); /* 'kernel' */
	Tok name = ps->tok;
	if (name.kind != T_IDENT) {
		error_at(ps, name.pos, "expected a kernel name after 'kernel'");
		return false;
	}
	k.name = tok_name(ps);
	if (!k.name)
		return false;
	if (tab_get(&ps->kernel_at, k.name, strlen(k.name)) >= 0) {
		error_at(ps, name.pos, "redefinition of kernel '%s'", k.name);
		return false;
	}
	next(ps);
	size_t mark = ps->names.len;
	static const char *const builtins[] = {"bx", "by", "bz", "tx", "ty", "tz"};
	for (int i = 0; i < 6; i++) {
		int32_t v = new_var(ps, builtins[i], i < 3 ? V_BLOCKIDX : V_THREADIDX, DT_I32, k.pos);
		if (v < 0 || !push_name(ps, (Name){builtins[i], v, -1})) {
			error_at(ps, k.pos, "out of memory");
			return false;
		}
		ps->m->vars.data[v].index = i % 3;
		if (i < 3)
			k.blockidx[i] = v;
		else
			k.threadidx[i - 3] = v;
	}
	ArgVec args = {0};
	bool ok = expect(ps, T_LPAREN, "'(' and the kernel parameters");
	if (ok && ps->tok.kind != T_RPAREN) {
		do
			ok = parse_param(ps, &args);
		while (ok && accept(ps, T_COMMA));
	}
	ok = ok && expect(ps, T_RPAREN, "')'");
	if (ok && !accept_kw(ps, "grid")) {
		error_at(ps, ps->tok.pos, "expected 'grid(...)' after the kernel parameters");
		ok = false;
	}
	if (ok && expect(ps, T_LPAREN, "'('")) {
		int32_t *g = parse_expr_list(ps, T_RPAREN, "')'", &k.ngrid);
		if (!ps->failed && (k.ngrid < 1 || k.ngrid > 3)) {
			error_at(ps, name.pos, "grid has 1 to 3 dimensions, not %d", k.ngrid);
		} else if (!ps->failed) {
			memcpy(k.grid, g, (size_t)k.ngrid * sizeof *g);
		}
		ok = !ps->failed;
	}
	if (ok && !accept_kw(ps, "threads")) {
		error_at(ps, ps->tok.pos, "expected 'threads(N)' after grid(...)");
		ok = false;
	}
	if (ok && expect(ps, T_LPAREN, "'('")) {
		/* threads(X[, Y[, Z]]): tx runs fastest, as CUDA's threadIdx.  The
		 * sizes may name shape symbols: ir_verify evaluates them after -D. */
		k.tdim[0] = k.tdim[1] = k.tdim[2] = 1;
		k.texpr[0] = k.texpr[1] = k.texpr[2] = -1;
		do {
			Tok n = ps->tok;
			int32_t e = parse_expr(ps);
			if (!ps->failed && k.ntdim == 3)
				error_at(ps, n.pos, "threads(...) has 1 to 3 dimensions");
			if (ps->failed)
				break;
			k.texpr[k.ntdim++] = e;
		} while (accept(ps, T_COMMA));
		ok = !ps->failed && expect(ps, T_RPAREN, "')'");
	}
	ps->k = &k;
	ok = ok && parse_body(ps, &k.body);
	ps->k = NULL;
	ps->names.len = mark;
	if (ok) {
		k.nargs = (int32_t)args.len;
		k.args = arena_alloc(&ps->m->arena, (args.len ? args.len : 1) * sizeof(KernelArg));
		if (k.args && args.len)
			memcpy(k.args, args.data, args.len * sizeof(KernelArg));
		ok = k.args && !vec_push(&ps->m->kernels, k) &&
		     !tab_put(&ps->kernel_at, k.name, strlen(k.name), (int32_t)ps->m->kernels.len - 1);
		if (!ok)
			error_at(ps, name.pos, "out of memory");
	}
	vec_free(&args);
	return ok;
}

Module *ir_parse(const char *filename, const char *text, size_t len, Diag *d)
{
	Module *m = ir_module_new(filename, text, len);
	if (!m) {
		diag_error(d, "out of memory");
		return NULL;
	}
	Parser ps = {.pending = -1, .m = m, .d = d, .p = m->src.text, .end = m->src.text + len, .line = 1,
	             .line_start = m->src.text};
	next(&ps);
	while (!ps.failed && ps.tok.kind != T_EOF) {
		if (!tok_is(&ps.tok, "kernel")) {
			char buf[64];
			error_at(&ps, ps.tok.pos, "expected 'kernel', found %s", tok_desc(&ps.tok, buf, sizeof buf));
			break;
		}
		parse_kernel(&ps);
	}
	if (!ps.failed && m->kernels.len == 0)
		error_at(&ps, (SrcPos){1, 1}, "no kernel in file");
	vec_free(&ps.names);
	free(ps.name_at.slot);
	free(ps.kernel_at.slot);
	vec_free(&ps.tmp);
	vec_free(&ps.edepth);
	vec_free(&ps.xs);
	vec_free(&ps.bfs);
	if (ps.failed) {
		ir_module_free(m);
		return NULL;
	}
	return m;
}
