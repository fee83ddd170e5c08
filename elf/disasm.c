/* disasm.c — `tileasm disasm K.hsaco`: a code object as text.  For each
 * kernel: the descriptor as .amdhsa_* fields, the arguments from the
 * metadata, then the instructions of its code (isa_decode/isa_print), one per
 * line with the byte offset and encoding words like llvm-objdump -d. */
#include "codeobj.h"

#include <stdio.h>

static void print_code(const CoObject *o, const CoKernelInfo *ki, StrBuf *sb)
{
	ta_target t = o->target.id;
	if (t == TA_TARGET_GFX1100 && !ki->k.wave32)
		t = (ta_target)((int)t | ISA_WAVE64);
	const uint8_t *p = o->text;
	size_t at = ki->k.text_offset, end = at + ki->k.code_size;
	if (end > o->text_size)
		end = o->text_size;
	while (at < end) {
		IsaInsn in;
		int n = isa_decode(t, p + at, end - at, &in);
		size_t len = n > 0 ? (size_t)n : 4;
		if (at + len > end)
			len = end - at;
		sb_puts(sb, "\t");
		size_t mark = sb->len;
		if (n > 0)
			isa_print(t, &in, sb);
		else
			sb_puts(sb, "<unknown>");
		for (size_t pad = sb->len - mark; pad < 48; pad++)
			sb_putc(sb, ' ');
		sb_printf(sb, "// %06zx:", at);
		for (size_t w = 0; w + 4 <= len; w += 4)
			sb_printf(sb, " %08X", p[at + w] | p[at + w + 1] << 8 | p[at + w + 2] << 16 |
						      (uint32_t)p[at + w + 3] << 24);
		sb_putc(sb, '\n');
		at += len;
	}
}

int co_disasm(const uint8_t *p, size_t n, StrBuf *sb, Diag *d)
{
	CoObject *o;
	if (co_read(p, n, &o, d))
		return -1;
	StrBuf id = {0};
	co_target_id(&o->target, &id);
	sb_printf(sb, "// code object v%d, %s, e_flags 0x%x, %d kernel%s, .text %zu bytes at 0x%llx\n",
		  o->abi_version == 3 ? 5 : o->abi_version + 2, id.buf ? id.buf : "?", o->e_flags, o->nkernels,
		  o->nkernels == 1 ? "" : "s", o->text_size, (unsigned long long)o->text_vaddr);
	sb_free(&id);
	for (int i = 0; i < o->nkernels; i++) {
		const CoKernelInfo *ki = &o->kernels[i];
		const CoKernel *k = &ki->k;
		sb_printf(sb, "\n.amdhsa_kernel %s  // descriptor at 0x%llx, entry at 0x%llx (.text+0x%x), %zu bytes of code\n",
			  k->name, (unsigned long long)ki->kd_vaddr, (unsigned long long)ki->entry_vaddr,
			  k->text_offset, k->code_size);
		StrBuf f = {0};
		co_descriptor_print(&o->target, &ki->desc, &f);
		for (char *line = f.buf; line && *line;) {
			char *nl = strchr(line, '\n');
			sb_printf(sb, "\t%.*s\n", (int)(nl ? nl - line : (long)strlen(line)), line);
			line = nl ? nl + 1 : NULL;
		}
		sb_free(&f);
		sb_puts(sb, ".end_amdhsa_kernel\n");
		if (ki->md) {
			const CoMd *c;
			sb_puts(sb, "// metadata:");
			static const char *const keys[] = {".kernarg_segment_size", ".sgpr_count", ".vgpr_count",
							   ".agpr_count", ".max_flat_workgroup_size", ".wavefront_size"};
			for (size_t j = 0; j < TA_ARRAY_LEN(keys); j++)
				if ((c = co_md_get(ki->md, keys[j])) && c->kind == CO_MD_INT)
					sb_printf(sb, " %s %lld", keys[j], (long long)c->i);
			sb_putc(sb, '\n');
			for (int j = 0; j < k->nargs; j++) {
				const CoArg *g = &k->args[j];
				sb_printf(sb, "//   arg %d: offset %u size %u %s", j, g->offset, g->size,
					  co_value_kind_name[g->value_kind]);
				if (g->address_space)
					sb_printf(sb, " %s", co_addr_space_name[g->address_space]);
				if (g->type_name)
					sb_printf(sb, " '%s'", g->type_name);
				if (g->name)
					sb_printf(sb, " %s", g->name);
				sb_putc(sb, '\n');
			}
		} else {
			sb_puts(sb, "// no metadata for this kernel\n");
		}
		sb_printf(sb, "%s:\n", k->name);
		print_code(o, ki, sb);
	}
	co_object_free(o);
	if (sb->oom) {
		diag_error(d, "out of memory");
		return -1;
	}
	return 0;
}
