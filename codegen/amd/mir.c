/* mir.c — machine IR containers and the debug printer (see mir.h). */
#include "mir.h"

#include <stdio.h>

void mir_init(MFunc *f, ta_target t)
{
	memset(f, 0, sizeof *f);
	f->target = t;
	f->long_branch_sgpr = -1;
}

void mir_free(MFunc *f)
{
	vec_free(&f->vregs);
	vec_free(&f->insns);
	vec_free(&f->blocks);
	vec_free(&f->spare);
}

MInstVec mir_spare(MFunc *f)
{
	MInstVec v = f->spare;
	v.len = 0;
	f->spare = (MInstVec){0};
	return v;
}

void mir_set_insns(MFunc *f, MInstVec *v)
{
	vec_free(&f->spare);
	f->spare = f->insns;
	f->insns = *v;
	*v = (MInstVec){0};
}

void mir_put_spare(MFunc *f, MInstVec *v)
{
	if (v->cap > f->spare.cap) {
		vec_free(&f->spare);
		f->spare = *v;
	} else {
		vec_free(v);
	}
	*v = (MInstVec){0};
}

int mir_vreg(MFunc *f, int cls, int size)
{
	/* Tuples of 2+ dwords are even-aligned: required for SGPRs on every
	 * target and for VGPR/AGPR on gfx90a/gfx942; on gfx1100 it costs little
	 * and keeps one rule.  4-dword SGPR tuples (s_load_dwordx4) need 4. */
	int align = size >= 2 ? 2 : 1;
	if (cls == MR_S && size >= 4)
		align = 4;
	MVreg v = {(uint8_t)cls, (uint8_t)size, (uint8_t)align, -1};
	if (vec_push(&f->vregs, v))
		return -1;
	return (int)f->vregs.len - 1;
}

int mir_block(MFunc *f)
{
	MBlock b = {(int32_t)f->insns.len, (int32_t)f->insns.len, {-1, -1, -1}};
	if (vec_push(&f->blocks, b))
		return -1;
	return (int)f->blocks.len - 1;
}

MInst *mir_emit(MFunc *f, unsigned op, int ndef)
{
	if (!f->blocks.len && mir_block(f) < 0)
		return NULL;
	if (vec_reserve(&f->insns, f->insns.len + 1))
		return NULL;
	MInst *mi = &f->insns.data[f->insns.len++];
	memset(mi, 0, sizeof *mi);
	isa_insn_init(&mi->in, op < ISA_NUM_OPS ? op : 0);
	mi->in.op = (uint16_t)op;
	mi->ndef = (uint8_t)ndef;
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi->vr[i] = -1;
	f->blocks.data[f->blocks.len - 1].last = (int32_t)f->insns.len;
	return mi;
}

void mi_vreg(MInst *mi, int i, const MFunc *f, int vreg, int sub, int count)
{
	const MVreg *v = &f->vregs.data[vreg];
	mi->in.ops[i] = (IsaOperand){(uint8_t)mir_cls_kind(v->cls), (uint8_t)count, 0, 0, 0, 0};
	mi->vmask |= (uint8_t)(1u << i);
	mi->vr[i] = vreg;
	mi->sub[i] = (uint8_t)sub;
	if (i >= mi->in.nops)
		mi->in.nops = (uint8_t)(i + 1);
}

void mi_phys(MInst *mi, int i, IsaOperand o)
{
	mi->in.ops[i] = o;
	mi->vmask &= (uint8_t) ~(1u << i);
	mi->vr[i] = -1;
	if (i >= mi->in.nops)
		mi->in.nops = (uint8_t)(i + 1);
}

static const char *mop_name(unsigned op)
{
	switch (op) {
	case MOP_COPY: return "COPY";
	case MOP_PCOPY: return "PCOPY";
	case MOP_LABEL: return "LABEL";
	case MOP_UNDEF: return "UNDEF";
	}
	return "?";
}

void mir_print_insn(const MFunc *f, const MInst *mi, StrBuf *sb)
{
	/* Virtual operands are printed by substituting a readable name, so the
	 * dump reads like the final assembly. */
	if (mi->in.op >= MOP_BASE) {
		sb_puts(sb, mop_name(mi->in.op));
	} else if (!mi->vmask) {
		isa_print(f->target, &mi->in, sb);
		return;
	} else {
		const char *n = isa_op_name(f->target, mi->in.op);
		sb_puts(sb, n ? n : "?");
	}
	for (int i = 0; i < mi->in.nops; i++) {
		const IsaOperand *o = &mi->in.ops[i];
		sb_puts(sb, i ? ", " : " ");
		if (mi->vmask & (1u << i)) {
			char c = o->kind == ISA_K_SGPR ? 's' : o->kind == ISA_K_VGPR ? 'v' : 'a';
			sb_printf(sb, "%%%c%d", c, mi->vr[i]);
			if (mi->sub[i] || o->count != f->vregs.data[mi->vr[i]].size)
				sb_printf(sb, "[%d:%d]", mi->sub[i], mi->sub[i] + o->count - 1);
			continue;
		}
		switch (o->kind) {
		case ISA_K_SGPR: sb_printf(sb, "s%d", o->reg); if (o->count > 1) sb_printf(sb, "x%d", o->count); break;
		case ISA_K_VGPR: sb_printf(sb, "v%d", o->reg); if (o->count > 1) sb_printf(sb, "x%d", o->count); break;
		case ISA_K_AGPR: sb_printf(sb, "a%d", o->reg); break;
		case ISA_K_SPECIAL: sb_printf(sb, "special%d", o->reg); break;
		case ISA_K_CONST: /* integer inline constants read as their value */
			if (o->reg >= 128 && o->reg <= 192)
				sb_printf(sb, "%d", o->reg - 128);
			else if (o->reg >= 193 && o->reg <= 208)
				sb_printf(sb, "%d", 192 - o->reg);
			else
				sb_printf(sb, "const%d", o->reg);
			break;
		case ISA_K_LIT: case ISA_K_IMM: sb_printf(sb, "%d", o->imm); break;
		case ISA_K_LABEL: sb_printf(sb, "bb%d", o->imm); break;
		case ISA_K_OFF: sb_puts(sb, "off"); break;
		default: sb_puts(sb, "_"); break;
		}
	}
}

void mir_print(const MFunc *f, StrBuf *sb)
{
	for (size_t b = 0; b < f->blocks.len; b++) {
		const MBlock *bl = &f->blocks.data[b];
		sb_printf(sb, "bb%zu:", b);
		for (int s = 0; s < 3; s++)
			if (bl->succ[s] >= 0)
				sb_printf(sb, " ->bb%d", bl->succ[s]);
		sb_putc(sb, '\n');
		for (int i = bl->first; i < bl->last; i++) {
			sb_putc(sb, '\t');
			mir_print_insn(f, &f->insns.data[i], sb);
			sb_putc(sb, '\n');
		}
	}
}

void mir_work_push(int *h, int *n, int b)
{
	int i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > b)
		h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
	h[i] = b;
}

int mir_work_pop(int *h, int *n)
{
	int top = h[0], last = h[--*n], i = 0;
	for (;;) {
		int k = 2 * i + 1;
		if (k >= *n)
			break;
		if (k + 1 < *n && h[k + 1] < h[k])
			k++;
		if (h[k] >= last)
			break;
		h[i] = h[k], i = k;
	}
	if (*n)
		h[i] = last;
	return top;
}
