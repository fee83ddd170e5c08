/* lower_dump.c — simt_print, the readable SIMT IR dump, and
 * simt_dump_module (--dump-simt for PTX). */
#include "lower.h"

/* ---- dump ---------------------------------------------------------------- */

static const char *const sop_names[SI_COUNT] = {
	"movi", "movf", "mov", "add", "sub", "mul", "div", "rem", "min", "max", "neg", "abs", "and", "or", "xor",
	"not", "shl", "shr", "setp", "selp", "cvt", "pack", "unpack", "pack2", "math", "tid", "ctaid", "param",
	"shbase", "localaddr", "ld", "st", "atom.add", "atom.max", "atom.min", "bar", "shfl.bfly", "mma.m16n8k16",
	"label", "bra", "ret", "half", "wg.gemm.loop", "cp.async", "cp.commit", "cp.wait", "ldmatrix", "shfl", "wgmma",
	"atom.cas",
	"bulk",
};

void simt_print(const SimtFunc *f, StrBuf *sb)
{
	static const char *const sp[] = {"global", "shared", "local"};
	sb_printf(sb, "func %s threads(%d) smem(%lld)\n", f->name, f->threads, (long long)f->smem_bytes);
	if (f->folded)
		sb_printf(sb, "; whole-tile tests: %d parallel loops\n", f->folded);
	for (size_t i = 0; i < f->code.len; i++) {
		const SInst *in = &f->code.data[i];
		if (in->op == SI_LABEL) {
			sb_printf(sb, "L%lld:\n", (long long)in->imm);
			continue;
		}
		sb_puts(sb, "  ");
		if (in->guard >= 0)
			sb_printf(sb, "@%s%%%d ", in->guard_neg ? "!" : "", in->guard);
		sb_printf(sb, "%s", in->op == SI_MMA ? simt_mma[in->sub < MMA_NSHAPES ? in->sub : 0].name
						  : sop_names[in->op]);
		if (in->op == SI_LD || in->op == SI_ST || in->op == SI_ATOM_ADD || in->op == SI_ATOM_MAX || in->op == SI_ATOM_MIN ||
		    in->op == SI_ATOM_CAS)
			sb_printf(sb, ".%s", sp[in->sub]);
		if (in->op == SI_BULK)
			sb_printf(sb, ".%s", in->sub == BULK_WAIT_READ ? "wait_read" : in->sub == BULK_FENCE ? "fence"
					     : in->sub == BULK_STORE ? "store" : "commit");
		if (in->vec > 1)
			sb_printf(sb, ".v%d", in->vec);
		if (in->type != DT_VOID)
			sb_printf(sb, ".%s", dtype_name((DType)in->type));
		if (in->op == SI_CVT)
			sb_printf(sb, ".%s", dtype_name((DType)in->type2));
		if (in->dst >= 0)
			sb_printf(sb, " %%%d", in->dst);
		if (in->a >= 0)
			sb_printf(sb, " %%%d", in->a);
		if (in->b >= 0)
			sb_printf(sb, " %%%d", in->b);
		if (in->c >= 0)
			sb_printf(sb, " %%%d", in->c);
		if (in->op == SI_MOVF)
			sb_printf(sb, " %g", in->fimm);
		else if (in->op == SI_BRA)
			sb_printf(sb, " L%lld", (long long)in->imm);
		else if (in->imm)
			sb_printf(sb, " #%lld", (long long)in->imm);
		sb_putc(sb, '\n');
	}
}

int simt_dump_module(const Module *m, const Target *t, const LowerOptions *o, StrBuf *out, Diag *d)
{
	int rc = 0;
	for (size_t k = 0; k < m->kernels.len; k++) {
		SimtFunc f;
		StrBuf err = {0};
		if (lower_kernel_opts(m, (int)k, t, o, &f, d)) {
			rc = -1;
		} else if (simt_verify(&f, &err)) {
			diag_error(d, "internal error: SIMT IR of kernel '%s' after lower: %s", f.name,
				   err.buf ? err.buf : "?");
			rc = -1;
		} else {
			sb_printf(out, "; after lower: %s\n", f.name);
			simt_print(&f, out);
		}
		sb_free(&err);
		simt_free(&f);
	}
	return rc;
}
