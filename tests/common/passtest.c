/* passtest.c — see passtest.h. */
#include "passtest.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operands [0, ndef) are written: the leading destinations of the signature. */
static int ndef_of(ta_target t, const IsaInsn *in)
{
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(t, in->op, sig), d = 0;
	IsaFmt fmt = isa_op_fmt(t, in->op);
	for (int i = 0; i < n; i++) {
		unsigned r = ISA_SIG_ROLE(sig[i]);
		bool dst = (i == 0 && (r == ISA_R_VD || r == ISA_R_SD || r == ISA_R_AVD || r == ISA_R_AD || r == ISA_R_WD ||
				       r == ISA_R_LM)) ||
			   (i == 1 && r == ISA_R_LM && fmt != ISA_FMT_VOPC) || (i == 1 && in->op == ISA_V_SWAP_B32);
		if (!dst || (isa_ops[in->op].flags & (ISA_F_STORE | ISA_F_WAIT)))
			break;
		d++;
	}
	return d;
}

void mir_from_asm(MFunc *f, const char *src)
{
	const char *p = src;
	int blk = mir_block(f);
	int nins = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char line[200];
		cr_assert(n < sizeof line);
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (e != NULL);
		if (!n)
			continue;
		if (!strncmp(line, "BB", 2) && line[n - 1] == ':') {
			if (nins)
				blk = mir_block(f);
			cr_assert_eq(blk, atoi(line + 2), "blocks are numbered in order: %s", line);
			continue;
		}
		bool hi = n > 4 && !strcmp(line + n - 4, " @hi");
		if (hi)
			line[n - 4] = 0;
		IsaInsn in;
		Diag d;
		diag_init(&d);
		cr_assert_eq(isa_parse_insn(f->target, line, &in, NULL, (SrcPos){1, 1}, &d), 0, "%s: %s", line,
			     diag_text(&d));
		diag_free(&d);
		MInst *mi = mir_emit(f, in.op, ndef_of(f->target, &in));
		mi->in = in;
		if (hi)
			mi->in.mod.op_sel |= 8;
		for (int k = 0; k < in.nops; k++)
			if (in.ops[k].kind == ISA_K_LABEL) {
				int to = atoi(in.ops[k].sym + 2);
				mi->in.ops[k] = (IsaOperand){ISA_K_LABEL, 1, 0, to, NULL, 0};
			}
		if (isa_ops[in.op].flags & ISA_F_TIED)
			mi->flags |= MI_TIED;
		nins++;
	}
	/* edges: fallthrough unless s_branch / s_endpgm ends the block, plus branch targets */
	for (size_t b = 0; b < f->blocks.len; b++) {
		MBlock *bl = &f->blocks.data[b];
		bl->succ[0] = bl->succ[1] = bl->succ[2] = -1;
		int k = 0;
		unsigned last = bl->last > bl->first ? f->insns.data[bl->last - 1].in.op : ISA_S_NOP;
		if (last != ISA_S_BRANCH && last != ISA_S_ENDPGM && b + 1 < f->blocks.len)
			bl->succ[k++] = (int)b + 1;
		if (bl->last > bl->first && (isa_ops[last].flags & ISA_F_BRANCH))
			bl->succ[k++] = f->insns.data[bl->last - 1].in.ops[0].imm;
	}
}

char *mir_to_asm(const MFunc *f)
{
	StrBuf sb = {0};
	for (size_t b = 0; b < f->blocks.len; b++) {
		const MBlock *bl = &f->blocks.data[b];
		if (b)
			sb_printf(&sb, "BB%d:\n", (int)b);
		for (int i = bl->first; i < bl->last; i++) {
			const IsaInsn *in = &f->insns.data[i].in;
			if (in->nops && in->ops[0].kind == ISA_K_LABEL) {
				sb_printf(&sb, "%s BB%d\n", isa_op_name(f->target, in->op), in->ops[0].imm);
				continue;
			}
			isa_print(f->target, in, &sb);
			sb_putc(&sb, '\n');
		}
	}
	sb_putc(&sb, 0);
	return sb.buf;
}

char *mir_dump(const MFunc *f)
{
	StrBuf sb = {0};
	mir_print(f, &sb);
	sb_putc(&sb, 0);
	return sb.buf;
}

/* Register text at p: v7, s12, a3, v[4:5], s[2:3]; returns its length or 0. */
static int reg_len(const char *p)
{
	if (*p != 'v' && *p != 's' && *p != 'a')
		return 0;
	int n = 1;
	if (p[1] == '[') {
		n = 2;
		while (p[n] && p[n] != ']')
			n++;
		return p[n] == ']' ? n + 1 : 0;
	}
	while (isdigit((unsigned char)p[n]))
		n++;
	return n > 1 ? n : 0;
}

int text_match(const char *text, const char *pat, char *why, size_t whylen)
{
	struct { char name[16]; char val[16]; } bind[32];
	int nb = 0;
	const char *t = text, *p = pat;
	for (;;) {
		const char *t0 = t, *p0 = p;
		while (isspace((unsigned char)*t))
			t++;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || !*t)
			break;
		if ((t0 == t) != (p0 == p) && t0 != text && p0 != pat) {
			snprintf(why, whylen, "white space differs at \"%.30s\" (expected \"%.30s\")", t0, p0);
			return 0;
		}
		if (*p == '$') {
			char name[16];
			int n = 0;
			p++;
			while ((isalnum((unsigned char)*p) || *p == '_') && n < 15)
				name[n++] = *p++;
			name[n] = 0;
			int rl = reg_len(t);
			if (!rl || rl > 15) {
				snprintf(why, whylen, "$%s: no register at \"%.20s\"", name, t);
				return 0;
			}
			int k = 0;
			while (k < nb && strcmp(bind[k].name, name))
				k++;
			if (k == nb) {
				snprintf(bind[nb].name, 16, "%s", name);
				snprintf(bind[nb].val, 16, "%.*s", rl, t);
				nb++;
			} else if ((int)strlen(bind[k].val) != rl || strncmp(bind[k].val, t, (size_t)rl)) {
				snprintf(why, whylen, "$%.15s is %.15s but here %.*s", name, bind[k].val, rl, t);
				return 0;
			}
			t += rl;
			continue;
		}
		if (*p != *t) {
			snprintf(why, whylen, "differs at \"%.30s\" (expected \"%.30s\")", t, p);
			return 0;
		}
		p++, t++;
	}
	if (*p || *t) {
		snprintf(why, whylen, "%s left over: \"%.30s\"", *p ? "expected" : "text", *p ? p : t);
		return 0;
	}
	return 1;
}

void expect_text(const char *got, const char *want, const char *what)
{
	char why[256];
	cr_expect(text_match(got, want, why, sizeof why), "%s: %s\n--- got\n%s\n--- want\n%s", what, why, got, want);
}

void expect_mir(const MFunc *f, const char *want)
{
	char *got = mir_dump(f);
	expect_text(got, want, "MIR");
	free(got);
}

char *mir_encoded_text(MFunc *f, RaResult *r, Diag *d)
{
	cr_assert_eq(ra_rewrite(f, r, d), 0, "%s", diag_text(d));
	StrBuf sb = {0};
	for (size_t i = 0; i < f->insns.len; i++) {
		sb_puts(&sb, "\t");
		isa_print(f->target, &f->insns.data[i].in, &sb);
		sb_puts(&sb, "\n");
	}
	ra_result_free(r);
	diag_free(d);
	mir_free(f);
	return sb.buf;
}
