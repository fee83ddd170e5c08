/* test_asm.c — the code-object directives (.amdhsa_kernel, .amdgpu_metadata,
 * .amdgcn_target) against llvm-mc-19 + ld.lld-19 on the same source.
 *
 * The directive hook is driven here the way isa_assemble drives it: one
 * call per directive line, raw lines while the hook asks for raw mode.  The
 * .text bytes come from the LLVM object, so what is compared is everything
 * the hook and the writer produce: descriptors from the directives with
 * llvm-mc's defaults, metadata from the YAML, layout and symbols. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>

#include "codeobj.h"
#include "oracle.h"

/* Feeds the directive lines of `text` to the hook; returns the number of
 * errors (lines the hook refused). */
static int drive(CoAsm *a, const char *text)
{
	int raw = 0, line = 0, errors = 0;
	for (const char *p = text; *p; line++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *l = strndup(p, n);
		p += n + (nl != NULL);
		SrcPos pos = {line + 1, 1};
		if (raw) {
			int rc = co_asm_directive(a, l, pos, &raw);
			errors += rc < 0;
			free(l);
			continue;
		}
		/* the assembler trims and drops comments before calling the hook */
		char *s = l;
		while (isspace((unsigned char)*s))
			s++;
		s[strcspn(s, ";")] = 0;
		char *c = strstr(s, "//");
		if (c)
			*c = 0;
		size_t m = strlen(s);
		while (m && isspace((unsigned char)s[m - 1]))
			s[--m] = 0;
		if (!strncmp(s, ".amdhsa_", 8) || !strncmp(s, ".end_amdhsa_kernel", 18) ||
		    !strncmp(s, ".amdgcn_target", 14) || !strncmp(s, ".amdgpu_metadata", 16)) {
			int rc = co_asm_directive(a, s, pos, &raw);
			cr_expect_neq(rc, 0, "hook did not handle line %d: %s", line + 1, s);
			errors += rc < 0;
		}
		free(l);
	}
	return errors;
}

/* Our object from `src` via the hook, with .text and kernel symbols taken
 * from the LLVM object `ref`. */
static void assemble_like_llvm(const char *target, const char *src, const char *ref, const char *ours, int same_layout)
{
	Target t;
	cr_assert_eq(target_parse(target, &t), 0);
	size_t n, rn;
	char *text = (char *)slurp(src, &n);
	uint8_t *rb = slurp(ref, &rn);
	Diag d;
	diag_init(&d);
	CoObject *ro;
	cr_assert_eq(co_read(rb, rn, &ro, &d), 0, "%s", diag_text(&d));

	SrcFile sf = {src, text, n};
	CoAsm *a = co_asm_new(&t, &sf, &d);
	cr_assert_eq(drive(a, text), 0, "directive errors:\n%s", diag_text(&d));

	IsaAsmOut out;
	memset(&out, 0, sizeof out);
	IsaSection sec = {.name = ".text", .align = 256};
	for (size_t i = 0; i < ro->text_size; i++)
		cr_assert_eq(vec_push(&sec.data, ro->text[i]), 0);
	cr_assert_eq(vec_push(&out.sections, sec), 0);
	for (int i = 0; i < ro->nkernels; i++) {
		IsaSymbol s = {.name = (char *)ro->kernels[i].k.name, .section = 0,
			       .value = ro->kernels[i].k.text_offset, .size = ro->kernels[i].k.code_size,
			       .type = ISA_SYM_FUNC, .binding = ISA_BIND_GLOBAL, .defined = 1};
		cr_assert_eq(vec_push(&out.symbols, s), 0);
	}
	uint8_t *co;
	size_t len;
	cr_assert_eq(co_asm_finish(a, &out, &co, &len), 0, "co_asm_finish: %s", diag_text(&d));
	spit(ours, co, len);

	/* Descriptors byte for byte; entry offsets (bytes 16..23) too when
	 * the layout is the same (no extra .rodata data in the source). */
	CoObject *oo;
	cr_assert_eq(co_read(co, len, &oo, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(oo->nkernels, ro->nkernels);
	for (int i = 0; i < oo->nkernels; i++)
		for (int j = 0; j < CO_KD_SIZE; j++)
			if (same_layout || j < 16 || j >= 24)
				cr_expect_eq(oo->kernels[i].kd[j], ro->kernels[i].kd[j], "%s.kd byte %d: ours 0x%02x, llvm 0x%02x",
				     oo->kernels[i].k.name, j, oo->kernels[i].kd[j], ro->kernels[i].kd[j]);

	co_object_free(oo);
	free(co);
	vec_free(&out.sections.data[0].data);
	vec_free(&out.sections);
	vec_free(&out.symbols);
	co_asm_free(a);
	co_object_free(ro);
	free(rb);
	free(text);
	diag_free(&d);
}

static void hand_written(const char *target, const char *file)
{
	char *dir = tmp_dir(), *src = test_src(file);
	char *ref = llvm_build(dir, src, target);
	StrBuf ours = {0};
	sb_printf(&ours, "%s/ours.co", dir);
	assemble_like_llvm(target, src, ref, ours.buf, 1);
	check_clean(ours.buf, target);
	check_same(ours.buf, ref, target);
	sb_free(&ours);
	free(ref);
	free(src);
	tmp_cleanup(dir);
}

Test(elf_asm, gfx1100_hand_written) { hand_written("gfx1100", "kernels_gfx1100.s"); }
Test(elf_asm, gfx90a_hand_written) { hand_written("gfx90a", "kernels_gfx90a.s"); }
Test(elf_asm, gfx942_hand_written) { hand_written("gfx942", "kernels_gfx942.s"); }

/* clang-19 -S output as it is, through the directive hook alone (.text from
 * LLVM's object): every .amdhsa_* key clang writes, block YAML, hidden
 * arguments.  The .rodata data (__oclc_ABI_version) and the empty
 * .AMDGPU.csdata section are not passed this way and are left out of the
 * comparison; clang_assemble below checks them through the whole path. */
static void clang_output(const char *target)
{
	need_oracle("clang-19");
	char *dir = tmp_dir(), *cl = test_src("kernels.cl");
	StrBuf s = {0}, cmd = {0}, ours = {0};
	sb_printf(&s, "%s/k.s", dir);
	sb_printf(&cmd, "clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O3 -S '%s' -o '%s'",
		  target, cl, s.buf);
	char *log;
	cr_assert_eq(run(cmd.buf, &log), 0, "clang failed:\n%s", log);
	free(log);
	char *ref = llvm_build(dir, s.buf, target);
	sb_printf(&ours, "%s/ours.co", dir);
	assemble_like_llvm(target, s.buf, ref, ours.buf, 0);
	check_clean(ours.buf, target);
	check_same_except(ours.buf, ref, target, (const char *const[]){"__oclc_ABI_version", ".AMDGPU.csdata", "Number of section headers", "string table index", NULL});
	sb_free(&s);
	sb_free(&cmd);
	sb_free(&ours);
	free(ref);
	free(cl);
	tmp_cleanup(dir);
}

Test(elf_asm, gfx1100_clang_output) { clang_output("gfx1100"); }
Test(elf_asm, gfx90a_clang_output) { clang_output("gfx90a"); }
Test(elf_asm, gfx942_clang_output) { clang_output("gfx942"); }

/* Directive errors point at the line. */
Test(elf_asm, directive_errors)
{
	static const struct {
		const char *src, *want;
	} cases[] = {
		{".amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"\n", "does not match --target"},
		{".amdhsa_code_object_version 4\n", "version 5 only"},
		{".amdhsa_kernel k\n.amdhsa_next_free_sgpr 4\n.end_amdhsa_kernel\n", "next_free_vgpr is required"},
		{".amdhsa_kernel k\n.amdhsa_next_free_vgpr 4\n.amdhsa_next_free_sgpr 4\n.end_amdhsa_kernel\n",
		 "accum_offset is required"},
		{".amdhsa_kernel k\n.amdhsa_bogus 1\n", "unknown directive .amdhsa_bogus"},
		{".amdhsa_kernel k\n.amdhsa_next_free_vgpr x\n", "needs an integer"},
		{".amdhsa_kernel k\n.amdhsa_system_vgpr_workitem_id 3\n", "out of range"},
		{".amdhsa_kernel k\n.amdhsa_wavefront_size32 1\n", "not supported on gfx942"},
		{".amdhsa_kernel k\n.amdhsa_user_sgpr_private_segment_buffer 1\n", "not supported on gfx942"},
		{".amdhsa_kernel k\n.amdhsa_reserve_xnack_mask 0\n", "does not match"},
		{".amdhsa_kernel k\n.amdhsa_user_sgpr_count 1\n.amdhsa_user_sgpr_kernarg_segment_ptr 1\n"
		 ".amdhsa_next_free_vgpr 4\n.amdhsa_next_free_sgpr 4\n.amdhsa_accum_offset 4\n.end_amdhsa_kernel\n",
		 "smaller than the 2 enabled"},
		{".amdhsa_kernel k\n.amdhsa_next_free_vgpr 8\n.amdhsa_next_free_sgpr 4\n.amdhsa_accum_offset 12\n"
		 ".end_amdhsa_kernel\n", "multiple of 4 in 4..8"},
		{".end_amdhsa_kernel\n", "without .amdhsa_kernel"},
		{".amdgpu_metadata\n---\namdhsa.version: [ 1, 2\n...\n.end_amdgpu_metadata\n", "expected ','"},
		{".amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: k\n   .symbol: k.kd\n...\n.end_amdgpu_metadata\n",
		 "indentation"},
		{".amdgpu_metadata\n---\nkey: &anchor 1\n...\n.end_amdgpu_metadata\n", "unsupported YAML"},
	};
	Target t;
	target_parse("gfx942", &t);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		Diag d;
		diag_init(&d);
		SrcFile sf = {"x.s", cases[i].src, strlen(cases[i].src)};
		CoAsm *a = co_asm_new(&t, &sf, &d);
		int errors = drive(a, cases[i].src);
		cr_expect(errors > 0, "case %zu accepted: %s", i, cases[i].src);
		cr_expect(strstr(diag_text(&d), cases[i].want), "case %zu: want '%s', got:\n%s", i, cases[i].want,
			  diag_text(&d));
		cr_expect(strstr(diag_text(&d), "x.s:"), "case %zu: no file:line position:\n%s", i, diag_text(&d));
		co_asm_free(a);
		diag_free(&d);
	}
}

/* Bytes the code object would not carry are errors, not warnings. */
Test(elf_asm, unwritten_data_is_an_error)
{
	static const struct {
		const char *src, *want;
	} cases[] = {
		{".data\n.long 1\n", "section .data has 4 bytes"},
		{".rodata\n.globl tab\ntab:\n.long 1\n", "global .rodata symbol 'tab'"},
	};
	Target t;
	target_parse("gfx942", &t);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		StrBuf src = {0};
		sb_printf(&src, "%s.text\n.p2align 8\nk:\ns_endpgm\n.rodata\n.p2align 6\n.amdhsa_kernel k\n"
			  ".amdhsa_next_free_vgpr 4\n.amdhsa_next_free_sgpr 4\n.amdhsa_accum_offset 4\n"
			  ".end_amdhsa_kernel\n", cases[i].src);
		Diag d;
		diag_init(&d);
		SrcFile sf = {"x.s", src.buf, src.len};
		uint8_t *co = NULL;
		size_t len;
		cr_expect_eq(co_assemble(&t, 0, &sf, &co, &len, &d), -1, "case %zu accepted", i);
		cr_expect(co == NULL);
		cr_expect(strstr(diag_text(&d), cases[i].want), "case %zu: want '%s', got:\n%s", i, cases[i].want,
			  diag_text(&d));
		diag_free(&d);
		sb_free(&src);
	}
}

/* Data an assembly source puts in .text (a word that is no instruction, in a
 * kernel's code or after its end; a tail of 1-3 bytes) prints as .long /
 * .byte, so co_source's text assembles to the same bytes (fuzz_coasm found
 * "cannot decode the padding at .text+0x2dc", docs/reliability.md). */
Test(elf_asm, data_in_text_prints_as_data)
{
	static const char *const targets[] = {"gfx942", "gfx90a", "gfx1100"};
	static const char *const cases[] = {
		"s_endpgm\n.Lend:\n.size k, .Lend-k\n.long 0xffffffff\n",       /* after the kernel */
		"s_nop 0\n.long 0xffffffff\ns_endpgm\n.Lend:\n.size k, .Lend-k\n", /* inside it */
		"s_endpgm\n.Lend:\n.size k, .Lend-k\n.long 0xffffffff\n.byte 1, 2, 3\n",
	};
	for (size_t ti = 0; ti < sizeof targets / sizeof *targets; ti++)
		for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
			Target t;
			target_parse(targets[ti], &t);
			StrBuf src = {0};
			sb_printf(&src, ".text\n.p2align 8\n.globl k\n.type k,@function\nk:\n%s.rodata\n.p2align 6\n"
				  ".amdhsa_kernel k\n.amdhsa_next_free_vgpr 4\n.amdhsa_next_free_sgpr 4\n%s"
				  ".end_amdhsa_kernel\n", cases[i], t.id == TA_TARGET_GFX1100 ? "" : ".amdhsa_accum_offset 4\n");
			Diag d;
			diag_init(&d);
			SrcFile sf = {"x.s", src.buf, src.len};
			uint8_t *co = NULL, *co2 = NULL;
			size_t len = 0, len2 = 0;
			cr_assert_eq(co_assemble(&t, 0, &sf, &co, &len, &d), 0, "%s case %zu: %s", targets[ti], i,
				     diag_text(&d));
			StrBuf out = {0};
			cr_assert_eq(co_source(co, len, 0, &out, &d), 0, "%s case %zu: %s", targets[ti], i, diag_text(&d));
			cr_expect(strstr(out.buf, "\t.long 0xffffffff\n"), "%s case %zu:\n%s", targets[ti], i, out.buf);
			if (i == 2)
				cr_expect(strstr(out.buf, "\t.byte 0x01, 0x02, 0x03\n"), "%s:\n%s", targets[ti], out.buf);
			SrcFile again = {"printed.s", out.buf, out.len};
			cr_assert_eq(co_assemble(&t, 0, &again, &co2, &len2, &d), 0, "%s case %zu: %s\n%s", targets[ti], i,
				     diag_text(&d), out.buf);
			cr_expect(len2 == len && !memcmp(co, co2, len), "%s case %zu: other bytes from\n%s", targets[ti], i,
				  out.buf);
			StrBuf listing = {0}; /* the --dump-isa form, with encodings */
			cr_expect_eq(co_source(co, len, 1, &listing, &d), 0, "%s case %zu: %s", targets[ti], i, diag_text(&d));
			free(co);
			free(co2);
			sb_free(&out);
			sb_free(&listing);
			sb_free(&src);
			diag_free(&d);
		}
}

/* Two kernels on gfx942: a at .text+0 and b at .text+0x100, `body` goes
 * between a's entry and b's .p2align; the .amdhsa_kernel blocks in `order`. */
static void two_kernels(StrBuf *src, const char *body, const char *order)
{
	sb_printf(src, ".text\n.p2align 8\n.globl a\n.type a,@function\na:\n%s"
		       ".p2align 8\n.globl b\n.type b,@function\nb:\ns_endpgm\n.Lb_end:\n.size b, .Lb_end-b\n.rodata\n",
		  body);
	for (const char *k = order; *k; k++)
		sb_printf(src, ".p2align 6\n.amdhsa_kernel %c\n.amdhsa_next_free_vgpr 4\n.amdhsa_next_free_sgpr 4\n"
			       ".amdhsa_accum_offset 4\n.end_amdhsa_kernel\n", *k);
}

/* Kernel code ranges: without .size a kernel runs up to the next kernel's
 * entry, not over it to the end of .text (fuzz_coasm: '.size lhs_rev, ...'
 * naming no label left lds_rev covering mfma, and co_source's text put
 * mfma 1.5 KiB later); .text between kernels prints as it is; kernels whose
 * descriptors come in another order than their code print right.  Every
 * case's co_source text assembles to the same bytes. */
Test(elf_asm, kernel_code_ranges_round_trip)
{
	static const struct {
		const char *body, *order;
		size_t a_size; /* a's code size, as co_read sees it */
		const char *printed; /* in co_source's text, or NULL */
	} cases[] = {
		{"s_endpgm\n.La_end:\n.size misspelt, .La_end-a\n", "ab", 256, NULL}, /* the fuzz input, minimised */
		{"s_endpgm\n", "ab", 256, NULL},
		{"s_endpgm\n.La_end:\n.size a, .La_end-a\n.long 0xffffffff\n", "ab", 4, "\t.long 0xffffffff\n"},
		{"s_endpgm\n.La_end:\n.size a, .La_end-a\n.byte 7\n", "ab", 4, NULL},
		{"s_endpgm\n.La_end:\n.size a, .La_end-a\n", "ba", 4, NULL},
	};
	Target t;
	target_parse("gfx942", &t);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		StrBuf src = {0};
		two_kernels(&src, cases[i].body, cases[i].order);
		Diag d;
		diag_init(&d);
		SrcFile sf = {"x.s", src.buf, src.len};
		uint8_t *co = NULL, *co2 = NULL;
		size_t len = 0, len2 = 0;
		cr_assert_eq(co_assemble(&t, 0, &sf, &co, &len, &d), 0, "case %zu: %s", i, diag_text(&d));
		CoObject *o = NULL;
		cr_assert_eq(co_read(co, len, &o, &d), 0, "case %zu: %s", i, diag_text(&d));
		for (int k = 0; k < o->nkernels; k++) {
			const CoKernel *ck = &o->kernels[k].k;
			cr_expect_eq(ck->text_offset, ck->name[0] == 'a' ? 0u : 0x100u, "case %zu: %s", i, ck->name);
			cr_expect_eq(ck->code_size, ck->name[0] == 'a' ? cases[i].a_size : 4, "case %zu: %s size %zu", i,
				     ck->name, ck->code_size);
		}
		co_object_free(o);
		StrBuf out = {0};
		cr_assert_eq(co_source(co, len, 0, &out, &d), 0, "case %zu: %s", i, diag_text(&d));
		if (cases[i].printed)
			cr_expect(strstr(out.buf, cases[i].printed), "case %zu:\n%s", i, out.buf);
		SrcFile again = {"printed.s", out.buf, out.len};
		cr_assert_eq(co_assemble(&t, 0, &again, &co2, &len2, &d), 0, "case %zu: %s\n%s", i, diag_text(&d),
			     out.buf);
		cr_expect(len2 == len && !memcmp(co, co2, len), "case %zu: other bytes from\n%s", i, out.buf);
		free(co);
		free(co2);
		sb_free(&out);
		sb_free(&src);
		diag_free(&d);
	}
	/* Code that cannot be printed once each: overlapping or shared entries. */
	StrBuf overlap = {0}, shared = {0};
	two_kernels(&overlap, "s_endpgm\n.size a, 0x104\n", "ab");
	sb_puts(&shared, ".text\n.p2align 8\n.globl a\n.type a,@function\na:\ns_endpgm\n.set b, a\n.rodata\n");
	for (const char *k = "ab"; *k; k++)
		sb_printf(&shared, ".p2align 6\n.amdhsa_kernel %c\n.amdhsa_next_free_vgpr 4\n.amdhsa_next_free_sgpr 4\n"
				   ".amdhsa_accum_offset 4\n.end_amdhsa_kernel\n", *k);
	const struct {
		const StrBuf *src;
		const char *want;
	} bad[] = {
		{&overlap, "x.s:17:1: error: kernel 'a': .size 260 runs past b at .text+0x100"},
		{&shared, "kernels 'a' and 'b' share the entry .text+0x0"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		Diag d;
		diag_init(&d);
		SrcFile sf = {"x.s", bad[i].src->buf, bad[i].src->len};
		uint8_t *co = NULL;
		size_t len = 0;
		cr_expect_eq(co_assemble(&t, 0, &sf, &co, &len, &d), -1, "bad %zu accepted", i);
		cr_expect(co == NULL);
		cr_expect(strstr(diag_text(&d), bad[i].want), "bad %zu: want '%s', got:\n%s", i, bad[i].want,
			  diag_text(&d));
		diag_free(&d);
	}
	sb_free(&overlap);
	sb_free(&shared);
}

/* The YAML subset: block and flow forms give the same tree. */
Test(elf_asm, yaml_forms)
{
	const char *block = "---\nk:\n  - .a: 1\n    .b: 'x''y'\n    .c:\n      - 2\n      - -3\n  - .d: true\n"
			    "v:\n- 1\n- 2\ns: \"q\\\"uote\"  # comment\n...\n";
	const char *flowy = "k: [ { .a: 1, .b: 'x''y', .c: [2, -3] }, {.d: true} ]\nv: [1,2]\ns: 'q\"uote'\n";
	Arena a = {0};
	Diag d;
	diag_init(&d);
	CoMd *m1, *m2;
	cr_assert_eq(co_yaml_parse(&a, block, strlen(block), &m1, NULL, (SrcPos){1, 1}, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(co_yaml_parse(&a, flowy, strlen(flowy), &m2, NULL, (SrcPos){1, 1}, &d), 0, "%s", diag_text(&d));
	uint8_t *p1, *p2;
	size_t n1, n2;
	cr_assert_eq(co_metadata_pack(m1, &p1, &n1), 0);
	cr_assert_eq(co_metadata_pack(m2, &p2, &n2), 0);
	cr_expect(n1 == n2 && !memcmp(p1, p2, n1), "block and flow YAML differ");
	const CoMd *k = co_md_get(m1, "k");
	cr_assert(k && k->kind == CO_MD_ARRAY && k->n == 2);
	cr_expect_str_eq(co_md_get(&k->items[0], ".b")->s, "x'y");
	cr_expect_eq(co_md_get(&k->items[0], ".c")->items[1].i, -3);
	cr_expect_eq(co_md_get(&k->items[1], ".d")->kind, CO_MD_BOOL);
	cr_expect_str_eq(co_md_get(m1, "s")->s, "q\"uote");
	free(p1);
	free(p2);
	arena_free(&a);
	diag_free(&d);
}

/* The whole path: isa_assemble with the hook (co_assemble) against
 * llvm-mc + ld.lld on the same source, .text bytes included.  Lines of the
 * readelf views containing an `ignore` string are left out of the comparison. */
static void assemble_compare(const char *target, const char *dir, const char *src, const char *const *ignore)
{
	Target t;
	cr_assert_eq(target_parse(target, &t), 0);
	char *ref = llvm_build(dir, src, target);
	size_t n, len;
	char *text = (char *)slurp(src, &n);
	SrcFile sf = {src, text, n};
	Diag d;
	diag_init(&d);
	uint8_t *co;
	cr_assert_eq(co_assemble(&t, 0, &sf, &co, &len, &d), 0, "co_assemble failed:\n%s", diag_text(&d));
	StrBuf ours = {0};
	sb_printf(&ours, "%s/ours.co", dir);
	spit(ours.buf, co, len);
	size_t rn;
	uint8_t *rb = slurp(ref, &rn);
	CoObject *ro, *oo;
	cr_assert_eq(co_read(rb, rn, &ro, &d), 0);
	cr_assert_eq(co_read(co, len, &oo, &d), 0);
	cr_expect(oo->text_size == ro->text_size && !memcmp(oo->text, ro->text, ro->text_size),
		  ".text differs from llvm-mc's (%zu vs %zu bytes)", oo->text_size, ro->text_size);
	for (int i = 0; i < oo->nkernels && i < ro->nkernels; i++)
		cr_expect(!memcmp(oo->kernels[i].kd, ro->kernels[i].kd, CO_KD_SIZE), "%s.kd differs",
			  oo->kernels[i].k.name);
	check_clean(ours.buf, target);
	check_same_except(ours.buf, ref, target, ignore);
	co_object_free(oo);
	co_object_free(ro);
	free(rb);
	free(co);
	free(text);
	diag_free(&d);
	sb_free(&ours);
	free(ref);
}

static void full_assemble(const char *target, const char *file)
{
	char *dir = tmp_dir(), *src = test_src(file);
	assemble_compare(target, dir, src, NULL);
	free(src);
	tmp_cleanup(dir);
}

/* clang-19 -S -O3 output of real kernels assembled as is (every instruction,
 * .rodata data objects, .addrsig, metadata) equals llvm-mc + ld.lld's code
 * object.  lld keeps the empty non-alloc .AMDGPU.csdata section header, which
 * tileasm does not write: those lines are left out. */
static void clang_assemble(const char *target, const char *file)
{
	need_oracle("clang-19");
	char *dir = tmp_dir(), *cl = test_src(file);
	StrBuf s = {0}, cmd = {0};
	sb_printf(&s, "%s/k.s", dir);
	sb_printf(&cmd, "clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O3 -S '%s' -o '%s'",
		  target, cl, s.buf);
	char *log;
	cr_assert_eq(run(cmd.buf, &log), 0, "clang failed:\n%s", log);
	free(log);
	assemble_compare(target, dir, s.buf,
			 (const char *const[]){".AMDGPU.csdata", "Number of section headers", "string table index",
					       "Start of section headers", NULL});
	sb_free(&s);
	sb_free(&cmd);
	free(cl);
	tmp_cleanup(dir);
}

Test(elf_asm, gfx1100_clang_kernels) { clang_assemble("gfx1100", "kernels.cl"); }
Test(elf_asm, gfx90a_clang_kernels) { clang_assemble("gfx90a", "kernels.cl"); }
Test(elf_asm, gfx942_clang_kernels) { clang_assemble("gfx942", "kernels.cl"); }
Test(elf_asm, gfx1100_clang_real_kernels) { clang_assemble("gfx1100", "real_kernels.cl"); }
Test(elf_asm, gfx90a_clang_real_kernels) { clang_assemble("gfx90a", "real_kernels.cl"); }
Test(elf_asm, gfx942_clang_real_kernels) { clang_assemble("gfx942", "real_kernels.cl"); }

Test(elf_asm, gfx1100_co_assemble) { full_assemble("gfx1100", "kernels_gfx1100.s"); }
Test(elf_asm, gfx90a_co_assemble) { full_assemble("gfx90a", "kernels_gfx90a.s"); }
Test(elf_asm, gfx942_co_assemble) { full_assemble("gfx942", "kernels_gfx942.s"); }

/* The CLI: `tileasm asm F.s --target=T -o K.hsaco` and `tileasm disasm K.hsaco`. */
Test(elf_asm, cli_asm_and_disasm)
{
	const char *exe = getenv("TILEASM");
	cr_assert(exe, "TILEASM is not set (run through meson test)");
	char *dir = tmp_dir(), *src = test_src("kernels_gfx90a.s");
	char *ref = llvm_build(dir, src, "gfx90a");
	StrBuf cmd = {0}, co = {0};
	sb_printf(&co, "%s/k.hsaco", dir);
	sb_printf(&cmd, "'%s' asm '%s' --target=gfx90a -o '%s'", exe, src, co.buf);
	char *out;
	cr_assert_eq(run(cmd.buf, &out), 0, "%s:\n%s", cmd.buf, out);
	free(out);
	check_clean(co.buf, "gfx90a");
	check_same(co.buf, ref, "gfx90a");
	sb_free(&cmd);
	sb_printf(&cmd, "'%s' disasm '%s'", exe, co.buf);
	cr_assert_eq(run(cmd.buf, &out), 0, "%s:\n%s", cmd.buf, out);
	cr_expect(strstr(out, ".amdhsa_kernel lds_rev"), "%s", out);
	cr_expect(strstr(out, ".amdhsa_group_segment_fixed_size 1024"), "%s", out);
	cr_expect(strstr(out, "ds_write_b32 v0, v1"), "%s", out);
	free(out);
	/* a wrong --target in the source is a located error */
	sb_free(&cmd);
	sb_printf(&cmd, "'%s' asm '%s' --target=gfx942 -o '%s/x.hsaco'", exe, src, dir);
	cr_expect_eq(run(cmd.buf, &out), 1);
	cr_expect(strstr(out, "kernels_gfx90a.s:6:") && strstr(out, "does not match --target"), "%s", out);
	free(out);
	sb_free(&cmd);
	sb_free(&co);
	free(ref);
	free(src);
	tmp_cleanup(dir);
}

/* Descriptor directives and metadata that llvm-mc-19 refuses are refused at
 * the same line:col, and what it accepts is accepted (issue 18: known
 * metadata keys with a wrong type passed; unknown keys pass in both).  Each
 * case puts KD into the .amdhsa_kernel block and MD into the kernel's
 * metadata map; llvm-mc runs on the same text. */
Test(elf_asm, checked_like_llvm_mc)
{
	static const char *const cases[][2] = {
		{"", ""},
		{"", ".foo: 1"},
		{"", ".value_type: struct"},
		{"", ".language: HIP"},
		{"", ".language: 3"},
		{"", ".language: Foo"},
		{"", ".language_version: [1]"},
		{"", ".language_version: [a, 2]"},
		{"", ".language_version: ['1', 2]"},
		{"", ".reqd_workgroup_size: [1, 2]"},
		{"", ".workgroup_size_hint: [1, 1, 1]"},
		{"", ".workgroup_processor_mode: true"},
		{"", ".uniform_work_group_size: 1"},
		{"", ".max_flat_workgroup_size: 64"}, /* a key written twice */
		{"", ".uses_dynamic_stack: 1"},
		{"", ".uses_dynamic_stack: 'true'"},
		{"", ".vec_type_hint: int"},
		{"", ".vec_type_hint: '3'"},
		{"", ".device_enqueue_symbol: 1"},
		{"", ".vgpr_spill_count: x"},
		{"", ".vgpr_spill_count: '3'"},
		{"", ".kernarg_segment_size: 8"}, /* a key written twice */
		{".amdhsa_foo 1", ""},
		{".amdhsa_next_free_vgpr 3", ""},
		{".amdhsa_kernarg_size -1", ""},
		{".amdhsa_wavefront_size32 2", ""},
		{".amdhsa_user_sgpr_count 1", ""},
		{".amdhsa_accum_offset 4", ""},
	};
	need_oracle("llvm-mc-19");
	Target t;
	cr_assert_eq(target_parse("gfx1100", &t), 0);
	char *dir = tmp_dir();
	for (size_t i = 0; i < TA_ARRAY_LEN(cases); i++) {
		StrBuf src = {0}, path = {0}, cmd = {0};
		sb_printf(&src,
			  ".amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"\n.amdhsa_code_object_version 5\n.text\n"
			  ".globl k\n.p2align 8\n.type k,@function\nk:\n  s_endpgm\n.Lend:\n  .size k, .Lend-k\n"
			  ".rodata\n.p2align 6\n.amdhsa_kernel k\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n"
			  "  .amdhsa_next_free_vgpr 2\n  .amdhsa_next_free_sgpr 4\n  %s\n.end_amdhsa_kernel\n"
			  ".amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.kernels:\n  - .name: k\n"
			  "    .symbol: k.kd\n    .kernarg_segment_size: 8\n    .kernarg_segment_align: 8\n"
			  "    .group_segment_fixed_size: 0\n    .private_segment_fixed_size: 0\n"
			  "    .wavefront_size: 32\n    .sgpr_count: 4\n    .vgpr_count: 2\n"
			  "    .max_flat_workgroup_size: 256\n    %s\n"
			  "    .args:\n      - { .size: 8, .offset: 0, .value_kind: global_buffer }\n...\n"
			  ".end_amdgpu_metadata\n",
			  cases[i][0], cases[i][1]);
		int md_line = 1; /* of .amdgpu_metadata: llvm-mc's YAML errors count from it */
		for (const char *q = src.buf; q < strstr(src.buf, ".amdgpu_metadata"); q++)
			md_line += *q == '\n';
		sb_printf(&path, "%s/c.s", dir);
		spit(path.buf, src.buf, src.len);
		sb_printf(&cmd, "llvm-mc-19 -triple=amdgcn-amd-amdhsa -mcpu=gfx1100 -filetype=obj '%s' -o '%s/c.o'",
			  path.buf, dir);
		char *log;
		int mc_rc = run(cmd.buf, &log);
		/* llvm-mc's first error as line:col in the file */
		int ml = 0, mcol = 0;
		const char *e = strstr(log, ": error:");
		if (e) {
			const char *ls = e;
			while (ls > log && ls[-1] != '\n')
				ls--;
			const char *c = strchr(ls, ':');
			if (c && sscanf(c + 1, "%d:%d", &ml, &mcol) == 2 && !strncmp(ls, "YAML:", 5))
				ml += md_line - 1; /* its YAML line 1 is the directive line */
		}
		Diag d;
		diag_init(&d);
		SrcFile sf = {"c.s", src.buf, src.len};
		uint8_t *co = NULL;
		size_t len;
		int rc = co_assemble(&t, 0, &sf, &co, &len, &d);
		cr_expect_eq(rc != 0, mc_rc != 0, "case %zu [%s][%s]: llvm-mc %s, tileasm %s\n%s%s", i, cases[i][0],
			     cases[i][1], mc_rc ? "refuses" : "accepts", rc ? "refuses" : "accepts", log, diag_text(&d));
		if (rc && mc_rc) {
			char want[64];
			snprintf(want, sizeof want, "c.s:%d:%d: error:", ml, mcol);
			cr_expect(strstr(diag_text(&d), want) == diag_text(&d), "case %zu: want %s, got:\n%s\nllvm-mc:\n%s",
				  i, want, diag_text(&d), log);
		}
		free(co);
		free(log);
		diag_free(&d);
		sb_free(&src);
		sb_free(&path);
		sb_free(&cmd);
	}
	tmp_cleanup(dir);
}

/* Many kernels: co_assemble and co_read are sort-then-scan, so 20,000
 * kernels assemble and read back, each with its own code and metadata
 * (checked by name and entry; not timed). */
Test(elf_asm, twenty_thousand_kernels)
{
	enum { N = 20000 };
	Target t;
	cr_assert_eq(target_parse("gfx1100", &t), 0);
	StrBuf src = {0};
	sb_puts(&src, ".amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"\n.amdhsa_code_object_version 5\n.text\n");
	for (int i = 0; i < N; i++)
		sb_printf(&src, ".globl k%d\n.p2align 8\nk%d:\n  s_endpgm\n", i, i);
	sb_puts(&src, ".rodata\n");
	for (int i = 0; i < N; i++)
		sb_printf(&src, ".p2align 6\n.amdhsa_kernel k%d\n.amdhsa_next_free_vgpr %d\n.amdhsa_next_free_sgpr 4\n"
			  ".end_amdhsa_kernel\n", i, 1 + i % 200);
	Diag d;
	diag_init(&d);
	SrcFile sf = {"many.s", src.buf, src.len};
	uint8_t *co = NULL;
	size_t len;
	cr_assert_eq(co_assemble(&t, 0, &sf, &co, &len, &d), 0, "%s", diag_text(&d));
	CoObject *o;
	cr_assert_eq(co_read(co, len, &o, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(o->nkernels, N);
	int seen[N] = {0};
	for (int i = 0; i < o->nkernels; i++) {
		int k = atoi(o->kernels[i].k.name + 1);
		cr_assert(k >= 0 && k < N && !seen[k]++, "kernel %s twice", o->kernels[i].k.name);
		cr_expect_eq(o->kernels[i].k.text_offset, 256u * (unsigned)k, "%s at %u", o->kernels[i].k.name,
			     o->kernels[i].k.text_offset);
		cr_expect(o->kernels[i].md != NULL, "%s has no metadata", o->kernels[i].k.name);
	}
	co_object_free(o);
	free(co);
	diag_free(&d);
	sb_free(&src);
}

/* A second descriptor for one kernel name is an error at the second block,
 * as in llvm-mc-19 ("kernel 'k' already has a descriptor"). */
Test(elf_asm, duplicate_kernel_is_an_error)
{
	Target t;
	cr_assert_eq(target_parse("gfx1100", &t), 0);
	const char *src = ".text\n.p2align 8\nk:\n  s_endpgm\n.rodata\n"
			  ".amdhsa_kernel k\n.amdhsa_next_free_vgpr 1\n.amdhsa_next_free_sgpr 4\n.end_amdhsa_kernel\n"
			  ".amdhsa_kernel k\n.amdhsa_next_free_vgpr 1\n.amdhsa_next_free_sgpr 4\n.end_amdhsa_kernel\n";
	Diag d;
	diag_init(&d);
	SrcFile sf = {"dup.s", src, strlen(src)};
	uint8_t *co = NULL;
	size_t len;
	cr_expect_eq(co_assemble(&t, 0, &sf, &co, &len, &d), -1);
	cr_expect(co == NULL);
	cr_expect(strstr(diag_text(&d), "dup.s:10:1: error: kernel 'k' already has a descriptor"), "%s", diag_text(&d));
	diag_free(&d);
}

/* co_read refuses an object with two descriptors of one name (no linker
 * writes one; ROCr could load either): two kernels' names made equal in
 * the bytes. */
Test(elf_asm, read_refuses_duplicate_descriptors)
{
	Target t;
	cr_assert_eq(target_parse("gfx942", &t), 0);
	const char *src = ".text\n.p2align 8\nkq:\n  s_endpgm\n.p2align 8\nkz:\n  s_endpgm\n.rodata\n"
			  ".amdhsa_kernel kq\n.amdhsa_next_free_vgpr 1\n.amdhsa_next_free_sgpr 4\n"
			  ".amdhsa_accum_offset 4\n.end_amdhsa_kernel\n"
			  ".amdhsa_kernel kz\n.amdhsa_next_free_vgpr 1\n.amdhsa_next_free_sgpr 4\n"
			  ".amdhsa_accum_offset 4\n.end_amdhsa_kernel\n";
	Diag d;
	diag_init(&d);
	SrcFile sf = {"two.s", src, strlen(src)};
	uint8_t *co = NULL;
	size_t len;
	cr_assert_eq(co_assemble(&t, 0, &sf, &co, &len, &d), 0, "%s", diag_text(&d));
	int renamed = 0;
	for (size_t i = 0; i + 2 < len; i++)
		if (co[i] == 'k' && co[i + 1] == 'z' && (co[i + 2] == 0 || co[i + 2] == '.')) {
			co[i + 1] = 'q';
			renamed++;
		}
	cr_assert(renamed >= 2, "kz found %d times", renamed);
	CoObject *o = NULL;
	cr_expect_eq(co_read(co, len, &o, &d), -1);
	cr_expect(o == NULL);
	cr_expect(strstr(diag_text(&d), "kernel 'kq' has two descriptors"), "%s", diag_text(&d));
	free(co);
	diag_free(&d);
}
