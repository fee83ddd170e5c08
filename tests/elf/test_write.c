/* test_write.c — co_write against the oracle: llvm-mc-19 + ld.lld-19 -shared
 * on tests/elf/kernels_<target>.s.
 *
 * The kernels' code bytes are taken from the LLVM object (the ISA encoder
 * is tested elsewhere); every other byte — layout, descriptors computed from
 * the CoKernel fields below, metadata, symbols, hash tables — is ours and is
 * compared with what LLVM made from the .amdhsa_* directives and YAML of the
 * same source. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "codeobj.h"
#include "oracle.h"

/* What the code generator would know about each test kernel; must agree
 * with the directives and metadata in kernels_<target>.s. */
typedef struct {
	const char *name;
	uint32_t lds, kernarg;
	int vgprs, agprs, sgprs;
	int reserve_vcc, reserve_flat_scratch, wg_id_x;
	uint32_t max_wg;
	const CoArg *args;
	int nargs;
	int opencl; /* .language OpenCL C 2.0, reqd_workgroup_size 256 */
} Spec;

static const CoArg vadd_args[] = {
	{.name = "a", .type_name = "float*", .size = 8, .offset = 0, .value_kind = CO_VK_GLOBAL_BUFFER,
	 .address_space = CO_AS_GLOBAL, .is_const = 1},
	{.name = "b", .type_name = "float*", .size = 8, .offset = 8, .value_kind = CO_VK_GLOBAL_BUFFER,
	 .address_space = CO_AS_GLOBAL, .is_const = 1},
	{.name = "c", .type_name = "float*", .size = 8, .offset = 16, .value_kind = CO_VK_GLOBAL_BUFFER,
	 .address_space = CO_AS_GLOBAL},
	{.name = "len", .type_name = "int", .size = 4, .offset = 24, .value_kind = CO_VK_BY_VALUE},
};
static const CoArg lds_args[] = {
	{.size = 8, .offset = 0, .value_kind = CO_VK_GLOBAL_BUFFER, .address_space = CO_AS_GLOBAL,
	 .access = CO_ACC_READ_ONLY},
	{.size = 8, .offset = 8, .value_kind = CO_VK_GLOBAL_BUFFER, .address_space = CO_AS_GLOBAL,
	 .access = CO_ACC_WRITE_ONLY},
};
static const CoArg mma_args[] = {
	{.size = 8, .offset = 0, .value_kind = CO_VK_GLOBAL_BUFFER, .address_space = CO_AS_GLOBAL},
	{.size = 8, .offset = 8, .value_kind = CO_VK_GLOBAL_BUFFER, .address_space = CO_AS_GLOBAL},
	{.size = 8, .offset = 16, .value_kind = CO_VK_GLOBAL_BUFFER, .address_space = CO_AS_GLOBAL},
};

static const Spec gfx1100_specs[] = {
	{"vadd", 0, 28, 6, 0, 16, 1, 0, 1, 256, vadd_args, 4, 1},
	{"lds_rev", 1024, 16, 5, 0, 16, 1, 0, 1, 256, lds_args, 2, 0},
	{"wmma", 0, 24, 25, 0, 8, 0, 0, 0, 32, mma_args, 3, 0},
};
static const Spec gfx90a_specs[] = {
	{"vadd", 0, 28, 8, 0, 8, 1, 0, 1, 256, vadd_args, 4, 1},
	{"lds_rev", 1024, 16, 6, 0, 7, 1, 1, 1, 256, lds_args, 2, 0},
	{"mfma", 0, 24, 12, 16, 8, 1, 0, 0, 64, mma_args, 3, 0},
};
static const Spec gfx942_specs[] = {
	{"vadd", 0, 28, 8, 0, 8, 1, 0, 1, 256, vadd_args, 4, 1},
	{"lds_rev", 1024, 16, 6, 0, 8, 1, 0, 1, 256, lds_args, 2, 0},
	{"mfma", 0, 24, 12, 16, 8, 1, 0, 0, 64, mma_args, 3, 0},
};

static void fill(CoKernel *k, const Target *t, const Spec *s)
{
	co_kernel_init(k, t);
	k->name = s->name;
	k->group_segment_size = s->lds;
	k->kernarg_size = s->kernarg;
	k->vgprs = s->vgprs;
	k->agprs = s->agprs;
	k->sgprs = s->sgprs;
	k->reserve_vcc = (uint8_t)s->reserve_vcc;
	k->reserve_flat_scratch = (uint8_t)s->reserve_flat_scratch;
	k->wg_id_x = (uint8_t)s->wg_id_x;
	k->max_flat_workgroup_size = s->max_wg;
	k->args = s->args;
	k->nargs = s->nargs;
	if (s->opencl) {
		k->language = "OpenCL C";
		k->language_version[0] = 2;
		k->reqd_workgroup_size[0] = 256;
		k->reqd_workgroup_size[1] = k->reqd_workgroup_size[2] = 1;
	}
}

/* Replaces every "amdgcn-amd-amdhsa--gfx942" in src by the full target id. */
static char *retarget(const char *dir, const char *src, const char *id)
{
	size_t n;
	char *s = (char *)slurp(src, &n);
	StrBuf sb = {0};
	const char *key = "amdgcn-amd-amdhsa--gfx942\n", *keyq = "amdgcn-amd-amdhsa--gfx942\"";
	for (const char *p = s; *p;) {
		if (!strncmp(p, key, strlen(key)) || !strncmp(p, keyq, strlen(keyq))) {
			sb_printf(&sb, "amdgcn-amd-amdhsa--%s", id);
			p += strlen(key) - 1;
		} else {
			sb_putc(&sb, *p++);
		}
	}
	free(s);
	StrBuf path = {0};
	sb_printf(&path, "%s/src.s", dir);
	spit(path.buf, sb.buf, sb.len);
	sb_free(&sb);
	return sb_take(&path);
}

static void writer_vs_llvm(const char *target, const char *file, const Spec *specs, int n)
{
	Target t;
	cr_assert_eq(target_parse(target, &t), 0);
	char *dir = tmp_dir();
	char *src = test_src(file);
	if (strchr(target, ':')) {
		char *s2 = retarget(dir, src, target);
		free(src);
		src = s2;
	}
	char *mcpu = strndup(target, strcspn(target, ":"));
	char *ref = llvm_build(dir, src, target);

	size_t rlen;
	uint8_t *rbytes = slurp(ref, &rlen);
	Diag d;
	diag_init(&d);
	CoObject *ro = NULL;
	cr_assert_eq(co_read(rbytes, rlen, &ro, &d), 0, "co_read of the LLVM object failed: %s", diag_text(&d));
	cr_assert_eq(ro->nkernels, n);

	CoKernel ks[8];
	for (int i = 0; i < n; i++) {
		fill(&ks[i], &t, &specs[i]);
		const CoKernelInfo *rk = &ro->kernels[i];
		cr_assert_str_eq(rk->k.name, specs[i].name, "kernel order differs");
		ks[i].code = ro->text + rk->k.text_offset;
		ks[i].code_size = rk->k.code_size;
	}
	uint8_t *out = NULL;
	size_t olen = 0;
	cr_assert_eq(co_write(&t, ks, n, &out, &olen, &d), 0, "co_write failed: %s", diag_text(&d));
	StrBuf ours = {0};
	sb_printf(&ours, "%s/ours.co", dir);
	spit(ours.buf, out, olen);

	/* Same .text (padding and alignment) and byte-identical descriptors. */
	CoObject *oo = NULL;
	cr_assert_eq(co_read(out, olen, &oo, &d), 0, "co_read of our object failed: %s", diag_text(&d));
	cr_expect_eq(oo->text_size, ro->text_size, ".text size %zu, llvm %zu", oo->text_size, ro->text_size);
	cr_expect(oo->text_size == ro->text_size && !memcmp(oo->text, ro->text, oo->text_size), ".text bytes differ");
	for (int i = 0; i < n; i++) {
		const CoKernelInfo *a = &oo->kernels[i], *b = &ro->kernels[i];
		for (int j = 0; j < CO_KD_SIZE; j++)
			cr_expect_eq(a->kd[j], b->kd[j], "%s.kd byte %d: ours 0x%02x, llvm 0x%02x", specs[i].name, j,
				     a->kd[j], b->kd[j]);
		cr_expect_eq(a->entry_vaddr, b->entry_vaddr);
	}
	/* Deterministic: a second write gives the same bytes. */
	uint8_t *out2 = NULL;
	size_t olen2 = 0;
	cr_assert_eq(co_write(&t, ks, n, &out2, &olen2, &d), 0);
	cr_expect(olen == olen2 && !memcmp(out, out2, olen), "co_write is not deterministic");

	check_clean(ours.buf, mcpu);
	check_same(ours.buf, ref, mcpu);

	free(out2);
	co_object_free(oo);
	co_object_free(ro);
	free(out);
	free(rbytes);
	sb_free(&ours);
	diag_free(&d);
	free(ref);
	free(mcpu);
	free(src);
	tmp_cleanup(dir);
}

Test(elf_write, gfx1100_vs_llvm) { writer_vs_llvm("gfx1100", "kernels_gfx1100.s", gfx1100_specs, 3); }
Test(elf_write, gfx90a_vs_llvm) { writer_vs_llvm("gfx90a", "kernels_gfx90a.s", gfx90a_specs, 3); }
Test(elf_write, gfx942_vs_llvm) { writer_vs_llvm("gfx942", "kernels_gfx942.s", gfx942_specs, 3); }
Test(elf_write, gfx942_sramecc_xnack_off_vs_llvm)
{
	writer_vs_llvm("gfx942:sramecc+:xnack-", "kernels_gfx942.s", gfx942_specs, 3);
}

/* e_flags and target ids for every feature combination (amd-code-object.md §2). */
Test(elf_write, flags_and_target_ids)
{
	static const struct {
		const char *t;
		uint32_t flags;
		const char *id;
	} cases[] = {
		{"gfx1100", 0x041, "amdgcn-amd-amdhsa--gfx1100"},
		{"gfx90a", 0x53f, "amdgcn-amd-amdhsa--gfx90a"},
		{"gfx90a:xnack-", 0x63f, "amdgcn-amd-amdhsa--gfx90a:xnack-"},
		{"gfx942", 0x54c, "amdgcn-amd-amdhsa--gfx942"},
		{"gfx942:xnack-", 0x64c, "amdgcn-amd-amdhsa--gfx942:xnack-"},
		{"gfx942:sramecc+:xnack-", 0xe4c, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"},
		{"gfx942:xnack+", 0x74c, "amdgcn-amd-amdhsa--gfx942:xnack+"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		Target t;
		cr_assert_eq(target_parse(cases[i].t, &t), 0);
		cr_expect_eq(co_elf_flags(&t), cases[i].flags, "%s: 0x%x", cases[i].t, co_elf_flags(&t));
		StrBuf sb = {0};
		co_target_id(&t, &sb);
		cr_expect_str_eq(sb.buf, cases[i].id);
		sb_free(&sb);
	}
}

/* The worked examples of amd-code-object.md §10, from fields alone. */
Test(elf_write, descriptor_examples)
{
	Target t;
	CoKernel k;
	CoDescriptor kd;
	Diag d;
	diag_init(&d);

	target_parse("gfx942", &t); /* hgemm_mfma: 24 arch + 16 AGPR, next free sgpr 13 */
	co_kernel_init(&k, &t);
	k.name = "hgemm_mfma";
	k.vgprs = 24, k.agprs = 16, k.sgprs = 13, k.wg_id_y = 1;
	cr_assert_eq(co_descriptor(&t, &k, &kd, &d), 0, "%s", diag_text(&d));
	cr_expect_eq(kd.rsrc1, 0x00AF0084u, "rsrc1 0x%x", kd.rsrc1);
	cr_expect_eq(kd.rsrc2, 0x184u, "rsrc2 0x%x", kd.rsrc2);
	cr_expect_eq(kd.rsrc3, 5u);
	cr_expect_eq(kd.kernel_code_properties, 0x0008);
	cr_expect_eq(co_sgpr_count(&t, &k), 19);
	cr_expect_eq(co_vgpr_count(&t, &k), 40);

	target_parse("gfx1100", &t); /* hgemm_wmma: 47 VGPRs, wg id x+y -> USER_SGPR 14 */
	co_kernel_init(&k, &t);
	k.name = "hgemm_wmma";
	k.vgprs = 47, k.sgprs = 20, k.wg_id_y = 1;
	cr_assert_eq(co_descriptor(&t, &k, &kd, &d), 0, "%s", diag_text(&d));
	cr_expect_eq(kd.rsrc1, 0x60AF0005u, "rsrc1 0x%x (SGPR field must stay 0 on gfx11)", kd.rsrc1);
	cr_expect_eq(kd.rsrc2, 0x19Cu, "rsrc2 0x%x", kd.rsrc2);
	cr_expect_eq(kd.kernel_code_properties, 0x0408);

	target_parse("gfx90a", &t); /* vadd: 8 VGPRs, next free sgpr 8 + VCC + XNACK */
	co_kernel_init(&k, &t);
	k.name = "vadd";
	k.vgprs = 8, k.sgprs = 8;
	cr_assert_eq(co_descriptor(&t, &k, &kd, &d), 0, "%s", diag_text(&d));
	cr_expect_eq(kd.rsrc1, 0x00AF0040u, "rsrc1 0x%x", kd.rsrc1);
	cr_expect_eq(kd.rsrc2, 0x8Cu);
	cr_expect_eq(kd.rsrc3, 1u);
	cr_expect_eq(kd.kernel_code_properties, 0x0009);

	/* Round trip through bytes and back to fields. */
	uint8_t b[CO_KD_SIZE];
	kd.kernel_code_entry_byte_offset = -0x40;
	co_descriptor_encode(&kd, b);
	CoDescriptor kd2;
	co_descriptor_decode(b, &kd2);
	cr_expect(kd.rsrc1 == kd2.rsrc1 && kd.rsrc2 == kd2.rsrc2 && kd.rsrc3 == kd2.rsrc3 &&
		  kd.kernel_code_properties == kd2.kernel_code_properties &&
		  kd.kernel_code_entry_byte_offset == kd2.kernel_code_entry_byte_offset,
		  "descriptor encode/decode round trip");
	CoKernel k2;
	memset(&k2, 0, sizeof k2);
	co_descriptor_to_kernel(&t, &kd2, &k2);
	cr_expect_eq(k2.vgprs, 8);
	cr_expect_eq(k2.user_sgpr_count, 6);
	cr_expect_eq(k2.user_sgprs, CO_USGPR_PRIVATE_SEGMENT_BUFFER | CO_USGPR_KERNARG_SEGMENT_PTR);

	/* Errors, not crashes, for impossible fields. */
	k.vgprs = 300;
	cr_expect_eq(co_descriptor(&t, &k, &kd, &d), -1);
	target_parse("gfx942", &t);
	co_kernel_init(&k, &t);
	k.name = "bad";
	k.user_sgprs |= CO_USGPR_PRIVATE_SEGMENT_BUFFER;
	cr_expect_eq(co_descriptor(&t, &k, &kd, &d), -1);
	target_parse("gfx1100", &t);
	co_kernel_init(&k, &t);
	k.name = "bad";
	k.agprs = 4;
	cr_expect_eq(co_descriptor(&t, &k, &kd, &d), -1);
	cr_expect(strstr(diag_text(&d), "no AGPRs"), "%s", diag_text(&d));
	diag_free(&d);
}

/* COV5 hidden arguments: offsets as clang-19 lays them out. */
Test(elf_write, hidden_args)
{
	CoArg h[CO_HIDDEN_ARGS];
	cr_expect_eq(co_hidden_args(12, h), 272u);
	cr_expect_eq(h[0].value_kind, CO_VK_HIDDEN_BLOCK_COUNT_X);
	cr_expect_eq(h[0].offset, 16u);
	cr_expect_eq(h[3].value_kind, CO_VK_HIDDEN_GROUP_SIZE_X);
	cr_expect_eq(h[3].offset, 28u);
	cr_expect_eq(h[3].size, 2u);
	cr_expect_eq(h[9].value_kind, CO_VK_HIDDEN_GLOBAL_OFFSET_X);
	cr_expect_eq(h[9].offset, 56u);
	cr_expect_eq(h[12].value_kind, CO_VK_HIDDEN_GRID_DIMS);
	cr_expect_eq(h[12].offset, 80u);
}
