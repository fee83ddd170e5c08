/* test_read.c — co_read on good objects (ours and LLVM's) and on malformed
 * ones: each corruption must give its own clear error, never a crash (the
 * suite runs under ASan/UBSan in CI). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "codeobj.h"
#include "oracle.h"

static const CoArg args2[] = {
	{.name = "out", .type_name = "float*", .size = 8, .offset = 0, .value_kind = CO_VK_GLOBAL_BUFFER,
	 .address_space = CO_AS_GLOBAL, .access = CO_ACC_WRITE_ONLY},
	{.name = "x", .type_name = "int", .size = 4, .offset = 8, .value_kind = CO_VK_BY_VALUE},
};

/* A small two-kernel gfx942 object made by co_write (no oracle needed). */
static uint8_t *good_object(size_t *len)
{
	static const uint8_t endpgm[] = {0x00, 0x00, 0x81, 0xbf}; /* s_endpgm */
	Target t;
	target_parse("gfx942:xnack-", &t);
	CoKernel k[2];
	co_kernel_init(&k[0], &t);
	k[0].name = "first";
	k[0].code = endpgm;
	k[0].code_size = sizeof endpgm;
	k[0].kernarg_size = 12;
	k[0].args = args2;
	k[0].nargs = 2;
	k[0].vgprs = 3;
	k[0].sgprs = 10;
	k[0].group_segment_size = 4096;
	co_kernel_init(&k[1], &t);
	k[1].name = "second";
	k[1].code = endpgm;
	k[1].code_size = sizeof endpgm;
	k[1].vgprs = 20;
	k[1].agprs = 32;
	k[1].hidden_args = 1;
	k[1].kernarg_size = co_hidden_args(0, (CoArg[CO_HIDDEN_ARGS]){{0}});
	k[1].workitem_id_dims = 2;
	Diag d;
	diag_init(&d);
	uint8_t *out;
	cr_assert_eq(co_write(&t, k, 2, &out, len, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
	return out;
}

Test(elf_read, own_object_fields)
{
	size_t n;
	uint8_t *p = good_object(&n);
	Diag d;
	diag_init(&d);
	CoObject *o;
	cr_assert_eq(co_read(p, n, &o, &d), 0, "%s", diag_text(&d));
	cr_expect_eq(o->target.id, TA_TARGET_GFX942);
	cr_expect_eq(o->target.xnack, FEAT_OFF);
	cr_expect_eq(o->target.sramecc, FEAT_ANY);
	cr_expect_eq(o->abi_version, 3);
	cr_assert_eq(o->nkernels, 2);
	const CoKernel *a = &o->kernels[0].k, *b = &o->kernels[1].k;
	cr_expect_str_eq(a->name, "first");
	cr_expect_str_eq(b->name, "second");
	cr_expect_eq(a->text_offset, 0u);
	cr_expect_eq(b->text_offset, 256u);
	cr_expect_eq(a->code_size, 4u);
	cr_expect_eq(o->text[b->text_offset + 3], 0xbf);
	cr_expect_eq(a->kernarg_size, 12u);
	cr_expect_eq(a->group_segment_size, 4096u);
	cr_expect_eq(a->vgpr_total, 8); /* granule 8 */
	cr_expect_eq(a->vgprs, 4);     /* up to accum_offset = align4(3) */
	cr_expect_eq(a->user_sgpr_count, 2);
	cr_expect_eq(a->wg_id_x, 1);
	cr_assert_eq(a->nargs, 2);
	cr_expect_str_eq(a->args[0].name, "out");
	cr_expect_str_eq(a->args[0].type_name, "float*");
	cr_expect_eq(a->args[0].access, CO_ACC_WRITE_ONLY);
	cr_expect_eq(a->args[0].address_space, CO_AS_GLOBAL);
	cr_expect_eq(a->args[1].value_kind, CO_VK_BY_VALUE);
	cr_expect_eq(a->args[1].offset, 8u);
	cr_expect_eq(b->kernarg_size, 256u);
	cr_expect_eq(b->nargs, CO_HIDDEN_ARGS);
	cr_expect_eq(b->args[CO_HIDDEN_ARGS - 1].value_kind, CO_VK_HIDDEN_GRID_DIMS);
	cr_expect_eq(b->accum_offset, 20);
	cr_expect_eq(b->agprs, 36); /* 52 rounded up to 56 by the granule, minus 20 */
	cr_expect_eq(b->workitem_id_dims, 2);
	const CoMd *vc = co_md_get(o->kernels[1].md, ".vgpr_count");
	cr_assert(vc);
	cr_expect_eq(vc->i, 52);
	StrBuf sb = {0};
	co_metadata_print(o->metadata, &sb);
	cr_expect(strstr(sb.buf, "amdhsa.target: amdgcn-amd-amdhsa--gfx942:xnack-"), "%s", sb.buf);
	cr_expect(strstr(sb.buf, ".type_name: 'float*'"), "%s", sb.buf);
	sb_free(&sb);
	co_object_free(o);
	diag_free(&d);
	free(p);
}

/* An object LLVM built: kernels found by .kd symbols, metadata decoded. */
Test(elf_read, llvm_object)
{
	char *dir = tmp_dir(), *src = test_src("kernels_gfx90a.s");
	char *co = llvm_build(dir, src, "gfx90a");
	size_t n;
	uint8_t *p = slurp(co, &n);
	Diag d;
	diag_init(&d);
	CoObject *o;
	cr_assert_eq(co_read(p, n, &o, &d), 0, "%s", diag_text(&d));
	cr_expect_eq(o->target.id, TA_TARGET_GFX90A);
	cr_assert_eq(o->nkernels, 3);
	const CoKernel *v = &o->kernels[0].k, *m = &o->kernels[2].k;
	cr_expect_str_eq(v->name, "vadd");
	cr_expect_eq(v->kernarg_size, 28u);
	cr_expect_eq(v->user_sgpr_count, 6);
	cr_expect_eq(v->user_sgprs, CO_USGPR_PRIVATE_SEGMENT_BUFFER | CO_USGPR_KERNARG_SEGMENT_PTR);
	cr_expect_eq(v->nargs, 4);
	cr_expect_str_eq(v->args[3].name, "len");
	cr_expect_eq(v->reqd_workgroup_size[0], 256u);
	cr_expect_str_eq(v->language, "OpenCL C");
	cr_expect_str_eq(m->name, "mfma");
	cr_expect_eq(m->accum_offset, 12);
	cr_expect_eq(m->vgpr_total, 32); /* 28 rounded to the granule of 8 */
	cr_expect_eq(m->max_flat_workgroup_size, 64u);
	cr_expect_eq(m->text_offset, 512u);
	cr_expect_eq(o->text_size % 64, 0u);
	co_object_free(o);
	diag_free(&d);
	free(p);
	free(co);
	free(src);
	tmp_cleanup(dir);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/* co_read on a patched copy must fail with `want` in the message. */
static void expect_error(const uint8_t *p, size_t n, const char *want, const char *what)
{
	Diag d;
	diag_init(&d);
	CoObject *o = NULL;
	int rc = co_read(p, n, &o, &d);
	cr_expect_eq(rc, -1, "%s: co_read accepted a malformed object", what);
	cr_expect_null(o);
	cr_expect(strstr(diag_text(&d), want), "%s: error should mention '%s', got: %s", what, want, diag_text(&d));
	co_object_free(o);
	diag_free(&d);
}

Test(elf_read, malformed_inputs)
{
	size_t n;
	uint8_t *good = good_object(&n);
	uint8_t *p = malloc(n);
	CoObject *o;
	Diag d;
	diag_init(&d);
	cr_assert_eq(co_read(good, n, &o, &d), 0);
	uint64_t kd0 = o->kernels[0].kd_vaddr; /* = file offset in the first LOAD */
	co_object_free(o);

#define FRESH() memcpy(p, good, n)
	expect_error(good, 0, "too short", "empty file");
	expect_error(good, 40, "too short", "40 bytes");
	FRESH(); p[1] = 'X';
	expect_error(p, n, "no ELF magic", "bad magic");
	FRESH(); p[4] = 1;
	expect_error(p, n, "64-bit", "ELFCLASS32");
	FRESH(); p[18] = 62; p[19] = 0;
	expect_error(p, n, "not EM_AMDGPU", "x86-64 machine");
	FRESH(); p[16] = 1;
	expect_error(p, n, "ET_DYN", "relocatable object");
	FRESH(); put32(p + 48, 0x030);
	expect_error(p, n, "unsupported AMD processor", "gfx908 e_flags");
	expect_error(good, n / 2, "section header table out of bounds", "truncated to half");
	FRESH(); put32(p + 40, 0xfffffff0); put32(p + 44, 0xffffffff);
	expect_error(p, n, "section header table out of bounds", "huge e_shoff");
	FRESH(); p[60] = 0xff; p[61] = 0xff;
	expect_error(p, n, "section header table out of bounds", "huge e_shnum");
	/* .note record at 0x200: namesz, descsz, type, "AMDGPU\0\0", msgpack */
	FRESH(); put32(p + 0x204, 0x7ffffff0);
	expect_error(p, n, "note record runs past", "huge note descsz");
	FRESH(); p[0x214] = 0xdf; put32(p + 0x215, 0xffffffff);
	expect_error(p, n, "larger than the note", "msgpack map32 with 4G entries");
	FRESH(); p[0x214] = 0xc1;
	expect_error(p, n, "unsupported msgpack type", "reserved msgpack byte");
	FRESH(); p[0x214] = 0x93;
	expect_error(p, n, "bad metadata note", "msgpack array not map");
	FRESH(); p[0x215] = 0xdb; /* first key becomes str32 with a huge length */
	expect_error(p, n, "truncated msgpack", "msgpack str32 past the end");
	/* Descriptor entry offset pointing far outside .text. */
	FRESH(); put32(p + kd0 + 16, 0x40000000);
	expect_error(p, n, "outside the code", "bad entry offset");
	/* Section 1 (.note) moved past the end of the file. */
	uint64_t shoff = good[40] | (uint64_t)good[41] << 8 | (uint64_t)good[42] << 16;
	FRESH(); put32(p + shoff + 64 + 24, 0x7fffffff);
	expect_error(p, n, "outside the file", "section offset past EOF");
	/* Symbol table entsize wrong. */
	FRESH(); put32(p + shoff + 64 * 11 + 56, 7);
	expect_error(p, n, "malformed symbol table", "symtab entsize");
	/* No .kd symbols: rename them (".kd" -> ".kx") in both string tables. */
	FRESH();
	for (size_t i = 0; i + 3 < n; i++)
		if (!memcmp(p + i, ".kd", 4))
			p[i + 2] = 'x';
	expect_error(p, n, "no kernel descriptors", "no .kd symbols");
#undef FRESH

	/* Every truncation and a few thousand single-byte corruptions: no
	 * crash, no leak, and an error whenever co_read refuses. */
	for (size_t cut = 0; cut < n; cut += 7) {
		diag_free(&d);
		diag_init(&d);
		if (co_read(good, cut, &o, &d) == 0)
			co_object_free(o);
		else
			cr_expect(d.nerrors > 0 && strlen(diag_text(&d)) > 10);
	}
	uint32_t seed = 12345;
	for (int it = 0; it < 3000; it++) {
		memcpy(p, good, n);
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % n;
			seed = seed * 1103515245u + 12345u;
			p[at] ^= (uint8_t)(1u << ((seed >> 16) & 7));
		}
		diag_free(&d);
		diag_init(&d);
		if (co_read(p, n, &o, &d) == 0)
			co_object_free(o);
		else
			cr_expect(d.nerrors > 0);
	}
	diag_free(&d);
	free(p);
	free(good);
}

/* Writer input errors come back as diagnostics. */
Test(elf_read, writer_rejects_bad_input)
{
	Target t;
	target_parse("gfx1100", &t);
	CoKernel k[2];
	co_kernel_init(&k[0], &t);
	co_kernel_init(&k[1], &t);
	k[0].name = k[1].name = "same";
	Diag d;
	diag_init(&d);
	uint8_t *out = NULL;
	size_t len;
	cr_expect_eq(co_write(&t, k, 2, &out, &len, &d), -1);
	cr_expect(strstr(diag_text(&d), "duplicate kernel name"), "%s", diag_text(&d));
	cr_expect_null(out);
	k[1].name = NULL;
	cr_expect_eq(co_write(&t, k, 2, &out, &len, &d), -1);
	cr_expect_eq(co_write(&t, k, 0, &out, &len, &d), -1);
	Target nv;
	target_parse("sm_90a", &nv);
	k[1].name = "other";
	cr_expect_eq(co_write(&nv, k, 2, &out, &len, &d), -1);
	cr_expect(strstr(diag_text(&d), "AMD"), "%s", diag_text(&d));
	diag_free(&d);
}

/* `tileasm disasm` text: descriptor fields, arguments and instructions. */
Test(elf_read, disasm_listing)
{
	char *dir = tmp_dir(), *src = test_src("kernels_gfx942.s");
	char *co = llvm_build(dir, src, "gfx942");
	size_t n;
	uint8_t *p = slurp(co, &n);
	Diag d;
	diag_init(&d);
	StrBuf sb = {0};
	cr_assert_eq(co_disasm(p, n, &sb, &d), 0, "%s", diag_text(&d));
	cr_expect(strstr(sb.buf, "amdgcn-amd-amdhsa--gfx942, e_flags 0x54c, 3 kernels"), "%s", sb.buf);
	cr_expect(strstr(sb.buf, ".amdhsa_kernel mfma"), "%s", sb.buf);
	cr_expect(strstr(sb.buf, ".amdhsa_accum_offset 12"), "%s", sb.buf);
	cr_expect(strstr(sb.buf, "arg 3: offset 24 size 4 by_value 'int' len"), "%s", sb.buf);
	cr_expect(strstr(sb.buf, "s_load_dword s3, s[0:1], 0x18"), "%s", sb.buf);
	cr_expect(strstr(sb.buf, "s_endpgm"), "%s", sb.buf);
	sb_free(&sb);
	/* malformed input: the reader's error, no listing */
	cr_expect_eq(co_disasm(p, 100, &sb, &d), -1);
	cr_expect(strstr(diag_text(&d), "not a valid AMD code object"), "%s", diag_text(&d));
	sb_free(&sb);
	diag_free(&d);
	free(p);
	free(co);
	free(src);
	tmp_cleanup(dir);
}
