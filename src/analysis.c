/* analysis.c — small whole-kernel facts that drivers and backends share. */
#include "ir.h"

typedef struct {
	const Module *m;
	const Kernel *k;
	bool *written, *accumulated;
} Walk;

static void mark(Walk *w, int32_t buf, bool acc)
{
	if (buf < 0 || w->m->bufs.data[buf].scope != SCOPE_GLOBAL)
		return;
	if (w->m->bufs.data[buf].view) /* writes through a view write its tensor */
		buf = w->m->bufs.data[buf].viewed;
	for (int i = 0; i < w->k->nargs; i++)
		if (w->k->args[i].buf == buf) {
			w->written[i] = true;
			if (acc)
				w->accumulated[i] = true;
		}
}

static void walk_block(Walk *w, const Block *b)
{
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = &w->m->stmts.data[b->ids[i]];
		switch ((StmtKind)s->kind) {
		case S_COPY:
		case S_STORE: mark(w, s->dst.buf, false); break;
		case S_ATOMIC_ADD: mark(w, s->dst.buf, true); break;
		default: break;
		}
		walk_block(w, &s->body);
		walk_block(w, &s->els);
	}
}

void ir_written_args(const Module *m, int k, bool *written, bool *accumulated)
{
	const Kernel *kn = &m->kernels.data[k];
	memset(written, 0, (size_t)kn->nargs * sizeof *written);
	memset(accumulated, 0, (size_t)kn->nargs * sizeof *accumulated);
	Walk w = {m, kn, written, accumulated};
	walk_block(&w, &kn->body);
}
