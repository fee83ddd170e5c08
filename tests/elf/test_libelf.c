/* test_libelf.c — elfutils' libelf as a second, independent reader of the
 * code objects tileasm writes for every example and AMD target: ELF header,
 * section and symbol tables, the AMDGPU metadata note, and agreement with
 * tileasm's own reader (co_read) on where each kernel and descriptor is. */
#include <criterion/criterion.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>

#include "codeobj.h"
#include "tileasm.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

static void check_with_libelf(const char *what, const uint8_t *bytes, size_t n)
{
	cr_assert(elf_version(EV_CURRENT) != EV_NONE);
	Elf *e = elf_memory((char *)bytes, n);
	cr_assert(e, "%s: libelf cannot open it: %s", what, elf_errmsg(-1));
	cr_assert_eq(elf_kind(e), ELF_K_ELF);
	GElf_Ehdr eh;
	cr_assert(gelf_getehdr(e, &eh));
	cr_expect_eq(eh.e_ident[EI_CLASS], ELFCLASS64, "%s", what);
	cr_expect_eq(eh.e_ident[EI_DATA], ELFDATA2LSB, "%s", what);
	cr_expect_eq(eh.e_ident[EI_OSABI], 64, "%s: EI_OSABI must be AMDGPU_HSA", what);
	cr_expect_eq(eh.e_ident[EI_ABIVERSION], 3, "%s: code object v5", what);
	cr_expect_eq(eh.e_type, ET_DYN, "%s", what);
	cr_expect_eq(eh.e_machine, EM_AMDGPU, "%s", what);

	Diag d;
	diag_init(&d);
	CoObject *o = NULL;
	cr_assert(co_read(bytes, n, &o, &d) == 0, "%s: %s", what, diag_text(&d));
	diag_free(&d);

	size_t shstrndx;
	cr_assert(elf_getshdrstrndx(e, &shstrndx) == 0);
	int have_text = 0, have_note = 0, have_dynsym = 0, have_symtab = 0, funcs = 0, kds = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		cr_assert(gelf_getshdr(scn, &sh));
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		cr_assert(name, "%s: section name", what);
		if (!strcmp(name, ".text")) {
			have_text = 1;
			cr_expect_eq(sh.sh_addr, o->text_vaddr, "%s: .text address", what);
			cr_expect_eq(sh.sh_size, o->text_size, "%s: .text size", what);
			cr_expect_geq(sh.sh_addralign, 256, "%s: .text alignment", what);
		}
		if (sh.sh_type == SHT_NOTE) {
			Elf_Data *data = elf_getdata(scn, NULL);
			size_t off = 0, name_off, desc_off;
			GElf_Nhdr nh;
			while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0)
				if (nh.n_type == 32 && nh.n_namesz == 7 &&
				    !memcmp((char *)data->d_buf + name_off, "AMDGPU", 7))
					have_note = 1;
		}
		if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB) {
			*(sh.sh_type == SHT_DYNSYM ? &have_dynsym : &have_symtab) = 1;
			Elf_Data *data = elf_getdata(scn, NULL);
			size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; data && i < count; i++) {
				GElf_Sym s;
				cr_assert(gelf_getsym(data, (int)i, &s));
				const char *sn = elf_strptr(e, sh.sh_link, s.st_name);
				if (!sn || !*sn)
					continue;
				for (int k = 0; k < o->nkernels; k++) {
					const CoKernelInfo *ki = &o->kernels[k];
					size_t kl = strlen(ki->k.name);
					if (!strcmp(sn, ki->k.name)) {
						cr_expect_eq(GELF_ST_TYPE(s.st_info), STT_FUNC, "%s: %s", what, sn);
						cr_expect_eq(s.st_value, ki->entry_vaddr, "%s: %s entry", what, sn);
						funcs++;
					} else if (!strncmp(sn, ki->k.name, kl) && !strcmp(sn + kl, ".kd")) {
						cr_expect_eq(GELF_ST_TYPE(s.st_info), STT_OBJECT, "%s: %s", what, sn);
						cr_expect_eq(s.st_size, 64, "%s: %s size", what, sn);
						cr_expect_eq(s.st_value, ki->kd_vaddr, "%s: %s address", what, sn);
						kds++;
					} else {
						continue;
					}
					cr_expect_eq(GELF_ST_BIND(s.st_info), STB_GLOBAL, "%s: %s binding", what, sn);
					cr_expect_eq(GELF_ST_VISIBILITY(s.st_other), STV_PROTECTED, "%s: %s visibility", what, sn);
				}
			}
		}
	}
	cr_expect(have_text && have_note && have_dynsym && have_symtab, "%s: text %d note %d dynsym %d symtab %d", what,
	          have_text, have_note, have_dynsym, have_symtab);
	/* Each kernel and descriptor symbol once in .dynsym and once in .symtab. */
	cr_expect_eq(funcs, 2 * o->nkernels, "%s", what);
	cr_expect_eq(kds, 2 * o->nkernels, "%s", what);
	co_object_free(o);
	elf_end(e);
}

Test(elf_libelf, every_example_every_amd_target)
{
	static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942", "gfx942:sramecc+:xnack-"};
	static const char *const examples[] = {"vector_add", "softmax", "gemm", "mha_fwd"};
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root);
	ta_ctx *ctx = ta_ctx_create();
	for (size_t e = 0; e < sizeof examples / sizeof *examples; e++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/examples/%s.tile", root, examples[e]);
		size_t len;
		char *text = read_file(path, &len);
		cr_assert(text);
		for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
			ta_binary *b = NULL;
			cr_assert_eq(ta_compile_source(ctx, path, text, len, targets[t], &b), TA_OK, "%s",
			             ta_ctx_diagnostics(ctx));
			size_t n;
			const uint8_t *bytes = ta_binary_data(b, &n);
			char what[256];
			snprintf(what, sizeof what, "%s for %s", examples[e], targets[t]);
			check_with_libelf(what, bytes, n);
			ta_binary_release(b);
		}
		free(text);
	}
	ta_ctx_destroy(ctx);
}
