/* source.c — a code object as assembly source that tileasm's assembler (and
 * llvm-mc) turns back into the same code object: target directives, each
 * kernel's code with labels at branch targets, its .amdhsa_kernel block and
 * the metadata as an .amdgpu_metadata YAML document.
 *
 * `tileasm compile --dump-isa` prints this, so a listing a hardware person
 * edits can be assembled again with `tileasm asm`. */
#include <stdbool.h>
#include <stdio.h>

#include "codeobj.h"

typedef struct {
	uint32_t at, target;
} Branch;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* The branch-offset operand of a decoded SOPP branch, or NULL. */
static IsaOperand *branch_operand(IsaInsn *in)
{
	if (!(isa_ops[in->op].flags & ISA_F_BRANCH))
		return NULL;
	for (int i = 0; i < in->nops; i++)
		if (in->ops[i].kind == ISA_K_LABEL || in->ops[i].kind == ISA_K_IMM)
			return &in->ops[i];
	return NULL;
}

/* One decoded instruction, with its encoding when asked. */
static void print_insn(ta_target t, const IsaInsn *in, const uint8_t *bytes, int n, int encodings, StrBuf *sb)
{
	if (!encodings) {
		sb_putc(sb, '\t');
		isa_print(t, in, sb);
		sb_putc(sb, '\n');
		return;
	}
	StrBuf text = {0};
	isa_print(t, in, &text);
	isa_format_encoding_line(text.buf ? text.buf : "", bytes, n, sb);
	sb->oom |= text.oom;
	sb_free(&text);
}

/* Bytes at p that do not decode as an instruction (data an assembly source
 * put in .text): one word as .long, or the 1-3 bytes before end as .byte,
 * which assemble to the same bytes.  Returns how many it printed. */
static int print_data(const uint8_t *p, size_t left, int encodings, StrBuf *sb)
{
	int n = left < 4 ? (int)left : 4;
	StrBuf text = {0};
	if (n == 4) {
		sb_printf(&text, ".long 0x%08x", (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 |
							   (unsigned)p[3] << 24);
	} else {
		sb_puts(&text, ".byte ");
		for (int i = 0; i < n; i++)
			sb_printf(&text, "%s0x%02x", i ? ", " : "", p[i]);
	}
	if (encodings) {
		isa_format_encoding_line(text.buf ? text.buf : "", p, n, sb);
	} else {
		sb_printf(sb, "\t%s\n", text.buf ? text.buf : "");
	}
	sb->oom |= text.oom;
	sb_free(&text);
	return n;
}

/* [at, end) of .text outside the kernels' code as it is: the code-end
 * padding (s_nop / s_code_end words), or whatever else the source put there. */
static void print_raw(const CoObject *o, ta_target t, size_t at, size_t end, int encodings, StrBuf *sb)
{
	while (at < end) {
		IsaInsn in;
		int n = isa_decode(t, o->text + at, end - at, &in);
		if (n > 0)
			print_insn(t, &in, o->text + at, n, encodings, sb);
		else
			n = print_data(o->text + at, end - at, encodings, sb);
		at += (size_t)n;
	}
}

/* Whether [at, entry) is what the assembler's .p2align 8 before a kernel
 * entry writes there (zero bytes up to a word, then s_nop 0 words), so the
 * source need not spell it out. */
static bool p2align_fill(const uint8_t *text, size_t at, size_t entry)
{
	if (entry - at >= 256)
		return false;
	static const uint8_t nop[4] = {0x00, 0x00, 0x80, 0xbf}; /* s_nop 0 */
	size_t word = (at + 3) & ~(size_t)3;
	for (size_t i = at; i < entry; i++)
		if (text[i] != (i < word ? 0 : nop[i % 4]))
			return false;
	return true;
}

static int by_text_offset(const void *x, const void *y)
{
	const CoKernelInfo *a = *(const CoKernelInfo *const *)x, *b = *(const CoKernelInfo *const *)y;
	return (a->k.text_offset > b->k.text_offset) - (a->k.text_offset < b->k.text_offset);
}

static int print_code(const CoObject *o, int kidx, int encodings, StrBuf *sb, Diag *d)
{
	const CoKernelInfo *ki = &o->kernels[kidx];
	ta_target t = o->target.id;
	if (t == TA_TARGET_GFX1100 && !ki->k.wave32)
		t = (ta_target)((int)t | ISA_WAVE64);
	const uint8_t *p = o->text;
	size_t start = ki->k.text_offset, end = start + ki->k.code_size;
	if (end > o->text_size || start > end) {
		diag_error(d, "kernel %s: code outside .text", ki->k.name);
		return -1;
	}
	/* Pass 1: branch targets, sorted, become labels. */
	VEC(uint32_t) targets = {0};
	for (size_t at = start; at < end;) {
		IsaInsn in;
		int n = isa_decode(t, p + at, end - at, &in);
		if (n <= 0) { /* data in the kernel's code (print_data) */
			at += TA_MIN(end - at, 4);
			continue;
		}
		IsaOperand *bo = branch_operand(&in);
		if (bo && vec_push(&targets, (uint32_t)((int64_t)at + 4 + 4 * (int64_t)(int16_t)bo->imm)))
			sb->oom = 1;
		at += (size_t)n;
	}
	if (targets.len)
		qsort(targets.data, targets.len, sizeof *targets.data, cmp_u32);
	/* Pass 2: print, with a label before every target. */
	size_t next = 0;
	char name[64];
	for (size_t at = start; at <= end;) {
		while (next < targets.len && targets.data[next] <= at) {
			if (targets.data[next] == at && (next == 0 || targets.data[next - 1] != at))
				sb_printf(sb, ".L%d_%zx:\n", kidx, at - start);
			next++;
		}
		if (at == end)
			break;
		IsaInsn in;
		int n = isa_decode(t, p + at, end - at, &in);
		if (n <= 0) {
			at += (size_t)print_data(p + at, end - at, encodings, sb);
			continue;
		}
		IsaOperand *bo = branch_operand(&in);
		if (bo) {
			int64_t dst = (int64_t)at + 4 + 4 * (int64_t)(int16_t)bo->imm - (int64_t)start;
			snprintf(name, sizeof name, ".L%d_%llx", kidx, (unsigned long long)dst);
			bo->kind = ISA_K_LABEL;
			bo->sym = name;
			bo->sym_len = (uint16_t)strlen(name);
		}
		print_insn(t, &in, p + at, n, encodings, sb);
		at += (size_t)n;
	}
	vec_free(&targets);
	return 0;
}

int co_source(const uint8_t *bytes, size_t n, int encodings, StrBuf *sb, Diag *d)
{
	CoObject *o;
	if (co_read(bytes, n, &o, d))
		return -1;
	StrBuf id = {0};
	co_target_id(&o->target, &id);
	sb_printf(sb, "\t.amdgcn_target \"%s\"\n", id.buf ? id.buf : "?");
	sb_free(&id);
	sb_printf(sb, "\t.amdhsa_code_object_version %d\n", o->abi_version == 3 ? 5 : o->abi_version + 2);
	/* .text in address order, every byte of it: what lies before a kernel's
	 * entry (padding, data) prints raw, so .p2align 8 adds nothing; the
	 * descriptors go to .rodata in their own (descriptor) order, which the
	 * kernels' order in the code object follows. */
	const CoKernelInfo **by_entry = malloc(sizeof *by_entry * (size_t)o->nkernels);
	if (!by_entry) {
		co_object_free(o);
		diag_error(d, "out of memory");
		return -1;
	}
	for (int i = 0; i < o->nkernels; i++)
		by_entry[i] = &o->kernels[i];
	qsort(by_entry, (size_t)o->nkernels, sizeof *by_entry, by_text_offset);
	int rc = 0;
	size_t pos = 0; /* .text printed so far */
	for (int i = 0; i < o->nkernels && !rc; i++) {
		const CoKernel *kt = &by_entry[i]->k, *k = &o->kernels[i].k;
		int ti = (int)(by_entry[i] - o->kernels); /* labels are numbered by kernel */
		ta_target t = o->target.id;
		if (t == TA_TARGET_GFX1100 && !kt->wave32)
			t = (ta_target)((int)t | ISA_WAVE64);
		sb_puts(sb, "\n\t.text\n");
		if (pos < kt->text_offset && !p2align_fill(o->text, pos, kt->text_offset))
			print_raw(o, t, pos, kt->text_offset, encodings, sb);
		sb_printf(sb, "\t.globl %s\n\t.p2align 8\n\t.type %s,@function\n%s:\n", kt->name, kt->name, kt->name);
		rc = print_code(o, ti, encodings, sb, d);
		sb_printf(sb, ".Lfunc_end%d:\n\t.size %s, .Lfunc_end%d-%s\n", ti, kt->name, ti, kt->name);
		pos = kt->text_offset + kt->code_size;
		/* After the last kernel in .text: LLVM's code-end padding, verbatim. */
		if (!rc && i == o->nkernels - 1 && pos < o->text_size) {
			sb_puts(sb, "\t// code-end padding\n");
			print_raw(o, t, pos, o->text_size, encodings, sb);
		}
		sb_printf(sb, "\n\t.rodata\n\t.p2align 6\n\t.amdhsa_kernel %s\n", k->name);
		StrBuf f = {0};
		co_descriptor_print(&o->target, &o->kernels[i].desc, &f);
		for (char *line = f.buf; line && *line;) {
			char *nl = strchr(line, '\n');
			sb_printf(sb, "\t\t%.*s\n", (int)(nl ? nl - line : (long)strlen(line)), line);
			line = nl ? nl + 1 : NULL;
		}
		sb_free(&f);
		sb_puts(sb, "\t.end_amdhsa_kernel\n");
	}
	free(by_entry);
	if (!rc && o->metadata) {
		sb_puts(sb, "\n\t.amdgpu_metadata\n");
		co_metadata_print(o->metadata, sb);
		sb_puts(sb, "\t.end_amdgpu_metadata\n");
	}
	co_object_free(o);
	if (!rc && sb->oom) {
		diag_error(d, "out of memory");
		rc = -1;
	}
	return rc;
}
