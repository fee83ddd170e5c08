/* print.c — canonical Tile IR text.  ir_parse(ir_print(m)) is ir_equal to m:
 * parentheses are printed exactly where precedence needs them and float
 * literals with the fewest digits that read back to the same double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir.h"

typedef struct {
	const Module *m;
	StrBuf *sb;
} Printer;

/* The parser's levels (parse.c binop_prec): C's order, comparisons at 6,
 * unary 10, primary 11. */
static int prec_of(const Expr *e)
{
	if (e->kind == E_BINARY)
		switch (e->op) {
		case OP_OR: return 1;
		case OP_AND: return 2;
		case OP_BOR: return 3;
		case OP_BXOR: return 4;
		case OP_BAND: return 5;
		case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE: return 6;
		case OP_SHL: case OP_SHR: return 7;
		case OP_ADD: case OP_SUB: return 8;
		default: return 9;
		}
	if (e->kind == E_UNARY)
		return 10;
	if ((e->kind == E_INT && e->ival < 0) || (e->kind == E_FLOAT && signbit(e->fval)))
		return 10; /* reads back as a folded unary minus */
	return 11;
}

static void print_float(StrBuf *sb, double v)
{
	if (isnan(v)) {
		sb_puts(sb, "nan");
		return;
	}
	if (isinf(v)) {
		sb_puts(sb, v < 0 ? "-inf" : "inf");
		return;
	}
	char buf[40];
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	sb_puts(sb, buf);
	if (!strpbrk(buf, ".e"))
		sb_puts(sb, ".0");
}

static void print_expr(Printer *p, int32_t id, int min_prec);

/* An access to a var's one element, printed as its bare name. */
static bool var_elem(const Module *m, int32_t buf, const int32_t *idx, int n)
{
	return buf >= 0 && m->bufs.data[buf].var && n == 1 && m->exprs.data[idx[0]].kind == E_INT &&
	       m->exprs.data[idx[0]].ival == 0;
}

static void print_list(Printer *p, const int32_t *ids, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(p->sb, ", ");
		print_expr(p, ids[i], 0);
	}
}

static void print_expr(Printer *p, int32_t id, int min_prec)
{
	const Expr *e = &p->m->exprs.data[id];
	int prec = prec_of(e);
	bool paren = prec < min_prec;
	if (paren)
		sb_putc(p->sb, '(');
	switch ((ExprKind)e->kind) {
	case E_INT: sb_printf(p->sb, "%lld", (long long)e->ival); break;
	case E_FLOAT: print_float(p->sb, e->fval); break;
	case E_BOOL: sb_puts(p->sb, e->ival ? "true" : "false"); break;
	case E_VAR: sb_puts(p->sb, p->m->vars.data[e->var].name); break;
	case E_LOAD:
		if (var_elem(p->m, e->buf, e->args, e->nargs)) {
			sb_puts(p->sb, p->m->bufs.data[e->buf].name);
			break;
		}
		sb_printf(p->sb, "%s[", p->m->bufs.data[e->buf].name);
		print_list(p, e->args, e->nargs);
		sb_putc(p->sb, ']');
		break;
	case E_UNARY: {
		/* Operand in parens unless primary (avoids "--x"); a literal always,
		 * since the parser folds "-5" into the literal itself. */
		const Expr *x = &p->m->exprs.data[e->a];
		sb_puts(p->sb, op_name((Op)e->op));
		if (x->kind == E_UNARY) { /* "- -x": one parser level per operator, not three */
			sb_putc(p->sb, ' ');
			print_expr(p, e->a, 0);
		} else {
			print_expr(p, e->a, x->kind == E_INT || x->kind == E_FLOAT ? 12 : 11);
		}
		break;
	}
	case E_BINARY:
		/* Left-associative: the right operand needs strictly higher precedence;
		 * comparisons do not chain, so both sides need higher precedence. */
		print_expr(p, e->a, prec == 6 ? prec + 1 : prec);
		sb_printf(p->sb, " %s ", op_name((Op)e->op));
		print_expr(p, e->b, prec + 1);
		break;
	case E_CALL:
		sb_printf(p->sb, "%s(", op_name((Op)e->op));
		print_list(p, e->args, e->nargs);
		sb_putc(p->sb, ')');
		break;
	case E_CAST:
		sb_printf(p->sb, e->op ? "reinterpret(%s, " : "%s(", dtype_name((DType)e->cast_to));
		print_expr(p, e->a, 0);
		sb_putc(p->sb, ')');
		break;
	}
	if (paren)
		sb_putc(p->sb, ')');
}

static void print_region(Printer *p, const Region *r)
{
	sb_puts(p->sb, p->m->bufs.data[r->buf].name);
	if (var_elem(p->m, r->buf, r->idx, r->nidx) && !r->hi)
		return;
	if (r->nidx && !r->hi) {
		sb_putc(p->sb, '[');
		print_list(p, r->idx, r->nidx);
		sb_putc(p->sb, ']');
	} else if (r->nidx) {
		sb_putc(p->sb, '[');
		for (int i = 0; i < r->nidx; i++) {
			if (i)
				sb_puts(p->sb, ", ");
			if (r->hi[i] == REGION_ALL) {
				sb_putc(p->sb, ':');
				continue;
			}
			print_list(p, &r->idx[i], 1);
			if (r->hi[i] != REGION_POINT) {
				sb_puts(p->sb, " : ");
				print_list(p, &r->hi[i], 1);
			}
		}
		sb_putc(p->sb, ']');
	}
}

static void indent(Printer *p, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_puts(p->sb, "  ");
}

static void print_block(Printer *p, const Block *b, int depth);

static const char *const reduce_names[] = {"reduce_sum", "reduce_max", "reduce_min", "reduce_abssum",
                                           "reduce_absmax"};

static void print_stmt(Printer *p, int32_t id, int depth)
{
	const Stmt *s = &p->m->stmts.data[id];
	StrBuf *sb = p->sb;
	indent(p, depth);
	switch ((StmtKind)s->kind) {
	case S_ALLOC: {
		const Buffer *b = &p->m->bufs.data[s->buf];
		if (b->view) {
			sb_printf(sb, "%s = view %s[", b->name, p->m->bufs.data[b->viewed].name);
			print_list(p, b->shape, b->rank);
			sb_puts(sb, "]\n");
			return;
		}
		if (b->var) { /* verify has given it a dtype */
			sb_printf(sb, "var %s: %s\n", b->name, dtype_name((DType)b->dtype));
			return;
		}
		sb_printf(sb, "%s = %s %s[", b->name, scope_name((Scope)b->scope), dtype_name((DType)b->dtype));
		print_list(p, b->shape, b->rank);
		sb_puts(sb, "]\n");
		return;
	}
	case S_LET:
		sb_printf(sb, "let %s = ", p->m->vars.data[s->var].name);
		print_expr(p, s->value, 0);
		break;
	case S_STORE:
		print_region(p, &s->dst);
		sb_puts(sb, " = ");
		print_expr(p, s->value, 0);
		break;
	case S_COPY:
		sb_puts(sb, "copy(");
		print_region(p, &s->src);
		sb_puts(sb, ", ");
		print_region(p, &s->dst);
		sb_putc(sb, ')');
		break;
	case S_GEMM:
		sb_puts(sb, "gemm(");
		print_region(p, &s->src);
		sb_puts(sb, ", ");
		print_region(p, &s->src2);
		sb_puts(sb, ", ");
		print_region(p, &s->dst);
		if (s->flag_a)
			sb_puts(sb, ", transpose_a=true");
		if (s->flag_b)
			sb_puts(sb, ", transpose_b=true");
		if (s->flag_clear)
			sb_puts(sb, ", clear=true");
		sb_putc(sb, ')');
		break;
	case S_CLEAR:
		sb_puts(sb, "clear(");
		print_region(p, &s->dst);
		sb_putc(sb, ')');
		break;
	case S_FILL:
		sb_puts(sb, "fill(");
		print_region(p, &s->dst);
		sb_puts(sb, ", ");
		print_expr(p, s->value, 0);
		sb_putc(sb, ')');
		break;
	case S_REDUCE:
	case S_CUMSUM:
		sb_printf(sb, "%s(", s->kind == S_CUMSUM ? "cumsum" : reduce_names[s->sub]);
		print_region(p, &s->src);
		sb_puts(sb, ", ");
		print_region(p, &s->dst);
		if (s->dim >= 0)
			sb_printf(sb, ", dim=%d", s->dim);
		if (s->kind == S_REDUCE && !s->flag_clear)
			sb_puts(sb, ", clear=false");
		if (s->kind == S_CUMSUM && s->flag_reverse)
			sb_puts(sb, ", reverse=true");
		sb_putc(sb, ')');
		break;
	case S_ATOMIC_ADD:
		sb_printf(sb, "%s(", atomic_name((AtomicOp)s->sub));
		print_region(p, &s->dst);
		sb_puts(sb, ", ");
		if (s->value >= 0)
			print_expr(p, s->value, 0);
		else
			print_region(p, &s->src);
		sb_putc(sb, ')');
		break;
	case S_BARRIER: sb_puts(sb, "barrier()"); break;
	case S_BREAK: sb_puts(sb, "break"); break;
	case S_PARALLEL:
		sb_puts(sb, "parallel (");
		for (int i = 0; i < s->nvars; i++)
			sb_printf(sb, "%s%s", i ? ", " : "", p->m->vars.data[s->vars[i]].name);
		sb_puts(sb, ") in (");
		print_list(p, s->extents, s->nvars);
		sb_puts(sb, ") ");
		print_block(p, &s->body, depth);
		return;
	case S_FOR:
		sb_printf(sb, "%s %s in ",
		          s->sub == LOOP_SERIAL  ? "serial"
		          : s->vectorized        ? "vectorized"
		          : s->sub == LOOP_UNROLL ? "unroll"
		                                 : "pipelined",
		          p->m->vars.data[s->var].name);
		print_expr(p, s->lo, 0);
		sb_puts(sb, " .. ");
		print_expr(p, s->hi, 0);
		if (s->step >= 0) {
			sb_puts(sb, " step ");
			print_expr(p, s->step, 0);
		}
		if (s->sub == LOOP_PIPELINED)
			sb_printf(sb, " stages(%d)", s->stages);
		sb_putc(sb, ' ');
		print_block(p, &s->body, depth);
		return;
	case S_IF:
		for (;;) {
			sb_puts(sb, "if ");
			print_expr(p, s->value, 0);
			sb_putc(sb, ' ');
			print_block(p, &s->body, depth);
			if (!s->els.n)
				return;
			sb->len--; /* drop the newline after '}' */
			sb_puts(sb, " else ");
			const Stmt *e = &p->m->stmts.data[s->els.ids[0]];
			if (s->els.n == 1 && e->kind == S_IF) {
				s = e;
				continue;
			}
			print_block(p, &s->els, depth);
			return;
		}
	}
	sb_putc(sb, '\n');
}

static void print_block(Printer *p, const Block *b, int depth)
{
	sb_puts(p->sb, "{\n");
	for (int i = 0; i < b->n; i++)
		print_stmt(p, b->ids[i], depth + 1);
	indent(p, depth);
	sb_puts(p->sb, "}\n");
}

void ir_print(const Module *m, StrBuf *sb)
{
	Printer p = {m, sb};
	for (size_t k = 0; k < m->kernels.len; k++) {
		const Kernel *kn = &m->kernels.data[k];
		if (k)
			sb_putc(sb, '\n');
		sb_printf(sb, "kernel %s(", kn->name);
		bool first = true;
		for (int i = 0; i < kn->nargs; i++) {
			const KernelArg *a = &kn->args[i];
			if (a->var >= 0 && m->vars.data[a->var].kind == V_SYMBOL)
				continue; /* implied by the tensor shapes */
			sb_puts(sb, first ? "" : ", ");
			first = false;
			if (a->buf >= 0) {
				const Buffer *b = &m->bufs.data[a->buf];
				sb_printf(sb, "%s: %s[", b->name, dtype_name((DType)b->dtype));
				for (int d = 0; d < b->rank; d++) {
					const Expr *e = &m->exprs.data[b->shape[d]];
					const Var *sv = e->kind == E_VAR ? &m->vars.data[e->var] : NULL;
					sb_puts(sb, d ? ", " : "");
					print_list(&p, &b->shape[d], 1);
					/* a default at the symbol's first appearance (its position) */
					if (sv && sv->dflt && sv->pos.line == e->pos.line && sv->pos.col == e->pos.col)
						sb_printf(sb, " = %lld", (long long)sv->dflt);
				}
				sb_putc(sb, ']');
			} else {
				const Var *v = &m->vars.data[a->var];
				sb_printf(sb, "%s: %s", v->name, dtype_name((DType)v->type));
			}
		}
		sb_puts(sb, ")\n    grid(");
		print_list(&p, kn->grid, kn->ngrid);
		sb_puts(sb, ") threads(");
		for (int d = 0; d < kn->ntdim; d++) { /* as written (BM * 2), or the builder's numbers */
			sb_puts(sb, d ? ", " : "");
			if (kn->texpr[d] >= 0)
				print_expr(&p, kn->texpr[d], 0);
			else
				sb_printf(sb, "%d", kn->tdim[d]);
		}
		sb_puts(sb, ") {\n");
		if (kn->raster) { /* a kernel-level statement: first, wherever it was written */
			indent(&p, 1);
			sb_puts(sb, "use_swizzle(");
			print_expr(&p, kn->raster_panel, 0);
			sb_puts(sb, kn->raster == RASTER_COL ? ", order=col)\n" : ")\n");
		}
		for (int i = 0; i < kn->body.n; i++)
			print_stmt(&p, kn->body.ids[i], 1);
		sb_puts(sb, "}\n");
	}
}
