/* test_asm.c — the whole-file assembler: reference kernels byte-identical to
 * llvm-mc-19's .text, the directive hook contract, generic directives, the
 * --show-encoding listing, register-use queries. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isa.h"
#include "oracle.h"

/* A hook that accepts every directive and swallows .amdgpu_metadata blocks. */
typedef struct {
	int calls, raw_lines;
} Hook;

static int permissive(void *user, const char *line, SrcPos pos, int *raw)
{
	Hook *h = user;
	(void)pos;
	h->calls++;
	if (*raw) {
		h->raw_lines++;
		if (strstr(line, ".end_amdgpu_metadata"))
			*raw = 0;
		return 1;
	}
	if (!strncmp(line, ".amdgpu_metadata", 16))
		*raw = 1;
	return 1;
}

static char *srcdir_path(const char *rel)
{
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root, "TILEASM_SRCDIR not set");
	char *p = malloc(strlen(root) + strlen(rel) + 2);
	sprintf(p, "%s/%s", root, rel);
	return p;
}

/* llvm-mc-19 -filetype=obj, then the raw .text bytes via llvm-objcopy-19. */
static uint8_t *llvm_text(const char *path, ta_target t, size_t *len)
{
	char obj[] = "/tmp/tileasm-ref-XXXXXX";
	int fd = mkstemp(obj);
	cr_assert(fd >= 0);
	close(fd);
	char bin[64];
	snprintf(bin, sizeof bin, "%s.bin", obj);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "llvm-mc-19 -triple=amdgcn-amd-amdhsa -mcpu=%s %s -filetype=obj %s -o %s && "
		 "llvm-objcopy-19 -O binary --only-section=.text %s %s",
		 mc_mcpu(t), mc_mattr(t), path, obj, obj, bin);
	int rc = system(cmd);
	cr_assert_eq(rc, 0, "oracle failed (llvm-mc-19/llvm-objcopy-19 missing?): %s", cmd);
	uint8_t *data = (uint8_t *)read_file(bin, len);
	unlink(obj);
	unlink(bin);
	cr_assert(data, "no oracle output");
	return data;
}

static void check_ref(const char *rel, ta_target t)
{
	char *path = srcdir_path(rel);
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text, "cannot read %s", path);
	SrcFile src = {path, text, len};
	Hook h = {0, 0};
	IsaAsmOptions opt = {t, permissive, &h, NULL};
	IsaAsmOut out;
	Diag d;
	diag_init(&d);
	int rc = isa_assemble(&opt, &src, &out, &d);
	cr_assert_eq(rc, 0, "%s", diag_text(&d));
	int ts = isa_asm_find_section(&out, ".text");
	cr_assert_geq(ts, 0);
	size_t mlen;
	uint8_t *ref = llvm_text(path, t, &mlen);
	const IsaSection *s = &out.sections.data[ts];
	size_t first = 0;
	while (first < mlen && first < s->data.len && ref[first] == s->data.data[first])
		first++;
	cr_expect_eq(s->data.len, mlen, "%s: .text is %zu bytes, llvm-mc has %zu", rel, s->data.len, mlen);
	cr_expect(first == mlen && mlen == s->data.len, "%s: first difference at byte 0x%zx", rel, first);
	cr_expect_gt(out.ninsns, 20);
	cr_expect_gt(h.raw_lines, 5, "metadata block should be passed raw");
	printf("isa asm: %s: %zu instructions, %zu bytes identical to llvm-mc\n", rel, out.ninsns, first);
	free(ref);
	isa_asm_free(&out);
	diag_free(&d);
	free(text);
	free(path);
}

Test(isa_asm, ref_vadd_gfx1100) { check_ref("tests/isa/ref/vadd_gfx1100.s", TA_TARGET_GFX1100); }
Test(isa_asm, ref_hgemm_wmma_gfx1100) { check_ref("tests/isa/ref/hgemm_wmma_gfx1100.s", TA_TARGET_GFX1100); }
Test(isa_asm, ref_hgemm_mfma_gfx942) { check_ref("tests/isa/ref/hgemm_mfma_gfx942.s", TA_TARGET_GFX942); }

static int assemble(ta_target t, const char *text, IsaAsmOut *out, Diag *d, IsaDirectiveHook hook, void *user,
		    StrBuf *listing)
{
	SrcFile src = {"t.s", text, strlen(text)};
	IsaAsmOptions opt = {t, hook, user, listing};
	diag_init(d);
	return isa_assemble(&opt, &src, out, d);
}

Test(isa_asm, labels_and_directives)
{
	const char *text = "\t.text\n"
			   "\t.globl k\n"
			   "\t.type k,@function\n"
			   "k:  s_mov_b32 s0, 1 ; comment\n"
			   "\ts_nop 0 // another\n"
			   "\ts_nop 1 # and another\n"
			   "\t.p2align 4\n"
			   ".Lback: s_cbranch_scc0 .Lback\n"
			   "\ts_branch .Lfwd\n"
			   "\ts_nop 2\n"
			   ".Lfwd:\n"
			   "\ts_endpgm\n"
			   ".Lend:\n"
			   "\t.size k, .Lend-k\n"
			   "\t.set FOO, 0x10 + 2\n"
			   "\t.section .rodata\n"
			   "\t.byte 1, 2\n\t.short 0x304\n\t.long FOO\n\t.quad -1\n";
	IsaAsmOut out;
	Diag d;
	int rc = assemble(TA_TARGET_GFX942, text, &out, &d, NULL, NULL, NULL);
	cr_assert_eq(rc, 0, "%s", diag_text(&d));
	int ts = isa_asm_find_section(&out, ".text"), rs = isa_asm_find_section(&out, ".rodata");
	cr_assert(ts >= 0 && rs >= 0);
	const IsaSection *s = &out.sections.data[ts];
	cr_assert_eq(s->data.len, 0x20);
	cr_expect_eq(s->align, 16);
	static const uint8_t want[0x20] = {
		0x81, 0x00, 0x80, 0xbe, 0x00, 0x00, 0x80, 0xbf, 0x01, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x80, 0xbf,
		0xff, 0xff, 0x84, 0xbf, 0x01, 0x00, 0x82, 0xbf, 0x02, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x81, 0xbf};
	cr_expect_arr_eq(s->data.data, want, sizeof want);
	int k = isa_asm_find_symbol(&out, "k");
	cr_assert_geq(k, 0);
	cr_expect_eq(out.symbols.data[k].size, 0x20);
	cr_expect_eq(out.symbols.data[k].binding, ISA_BIND_GLOBAL);
	cr_expect_eq(out.symbols.data[k].type, ISA_SYM_FUNC);
	int foo = isa_asm_find_symbol(&out, "FOO");
	cr_expect_eq(out.symbols.data[foo].value, 0x12);
	const IsaSection *r = &out.sections.data[rs];
	static const uint8_t rw[16] = {1, 2, 4, 3, 0x12, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	cr_assert_eq(r->data.len, 16);
	cr_expect_arr_eq(r->data.data, rw, 16);
	isa_asm_free(&out);
	diag_free(&d);
}

/* clang -S data directives: strings, .zero, visibility, .addrsig; an address in
 * data (a relocation) is refused rather than written as an offset. */
Test(isa_asm, data_directives)
{
	const char *text = "\t.section .rodata,\"a\",@progbits\n"
			   "\t.p2align 2\n"
			   "\t.hidden tab\n\t.weak tab\n\t.type tab,@object\n"
			   "tab:\n\t.asciz \"a\\n\\101\"\n\t.ascii \"xy\", \"z\"\n\t.zero 3\n\t.zero 2, 0x7f\n"
			   ".Lm:\t.long .Lm - tab\n.Le:\n\t.size tab, .Le-tab\n"
			   "\t.text\n\ts_endpgm\n\t.addrsig\n\t.addrsig_sym tab\n";
	IsaAsmOut out;
	Diag d;
	int rc = assemble(TA_TARGET_GFX942, text, &out, &d, NULL, NULL, NULL);
	cr_assert_eq(rc, 0, "%s", diag_text(&d));
	int rs = isa_asm_find_section(&out, ".rodata"), k = isa_asm_find_symbol(&out, "tab");
	cr_assert(rs >= 0 && k >= 0);
	static const uint8_t want[] = {'a', '\n', 'A', 0, 'x', 'y', 'z', 0, 0, 0, 0x7f, 0x7f, 12, 0, 0, 0};
	cr_assert_eq(out.sections.data[rs].data.len, sizeof want);
	cr_expect_arr_eq(out.sections.data[rs].data.data, want, sizeof want);
	cr_expect_eq(out.symbols.data[k].vis, ISA_VIS_HIDDEN);
	cr_expect_eq(out.symbols.data[k].binding, ISA_BIND_WEAK);
	cr_expect_eq(out.symbols.data[k].size, 16);
	isa_asm_free(&out);
	diag_free(&d);
	static const char *const bad[] = {".rodata\nt:\n.quad t\n", ".rodata\n.long .\n", ".text\nk:\n.data\n.long k+4\n"};
	for (size_t i = 0; i < TA_ARRAY_LEN(bad); i++) {
		rc = assemble(TA_TARGET_GFX942, bad[i], &out, &d, NULL, NULL, NULL);
		cr_expect_eq(rc, -1, "accepted: %s", bad[i]);
		cr_expect(strstr(diag_text(&d), "needs a relocation"), "%s", diag_text(&d));
		isa_asm_free(&out);
		diag_free(&d);
	}
}

static int reject_all(void *user, const char *line, SrcPos pos, int *raw)
{
	(void)user, (void)line, (void)pos, (void)raw;
	return 0;
}

static int fail_hook(void *user, const char *line, SrcPos pos, int *raw)
{
	Diag *d = user;
	(void)raw;
	diag_at(d, DIAG_ERROR, NULL, pos, "hook says no to %s", line);
	return -1;
}

Test(isa_asm, directive_hook_contract)
{
	IsaAsmOut out;
	Diag d;
	/* No hook: unknown directives are errors with a position. */
	int rc = assemble(TA_TARGET_GFX1100, "s_nop 0\n  .amdgcn_target \"x\"\n", &out, &d, NULL, NULL, NULL);
	cr_expect_eq(rc, -1);
	cr_expect(strstr(diag_text(&d), "t.s:2:3: error: unknown directive '.amdgcn_target'"), "%s", diag_text(&d));
	isa_asm_free(&out);
	diag_free(&d);
	/* Hook returns 0: still "unknown directive". */
	rc = assemble(TA_TARGET_GFX1100, ".foo 1\n", &out, &d, reject_all, NULL, NULL);
	cr_expect_eq(rc, -1);
	cr_expect(strstr(diag_text(&d), "unknown directive '.foo'"));
	isa_asm_free(&out);
	diag_free(&d);
	/* Hook returns -1: its own message only. */
	Diag hd;
	diag_init(&hd);
	rc = assemble(TA_TARGET_GFX1100, ".foo 1\n", &out, &d, fail_hook, &hd, NULL);
	cr_expect_eq(rc, -1);
	cr_expect_eq(d.nerrors, 0, "%s", diag_text(&d));
	cr_expect(strstr(diag_text(&hd), "hook says no to .foo 1"));
	diag_free(&hd);
	isa_asm_free(&out);
	diag_free(&d);
	/* Raw mode: lines (even ones that look like instructions) go to the hook verbatim. */
	Hook h = {0, 0};
	rc = assemble(TA_TARGET_GFX1100,
		      "s_endpgm\n.amdgpu_metadata\n---\n  bogus: s_nop ; kept\n.end_amdgpu_metadata\ns_endpgm\n", &out, &d,
		      permissive, &h, NULL);
	cr_expect_eq(rc, 0, "%s", diag_text(&d));
	cr_expect_eq(h.raw_lines, 3);
	cr_expect_eq(out.ninsns, 2);
	isa_asm_free(&out);
	diag_free(&d);
}

Test(isa_asm, listing_matches_llvm_mc)
{
	const char *text = "v_mov_b32 v0, v1\nv_add_f32 v0, 0x3e800000, v1\nv_fma_f32 v0, v1, 0x12345, v3\n"
			   "s_waitcnt vmcnt(0) lgkmcnt(0)\nglobal_load_b128 v[0:3], v4, s[2:3] offset:64\n"
			   "v_add_co_ci_u32 v0, vcc_lo, v1, v2, vcc_lo\nv_cmp_lt_f32 s0, v1, v2\n"
			   "v_dual_fmac_f32 v0, v1, v2 :: v_dual_mov_b32 v3, v4\n";
	IsaAsmOut out;
	Diag d;
	StrBuf l = {0};
	int rc = assemble(TA_TARGET_GFX1100, text, &out, &d, NULL, NULL, &l);
	cr_assert_eq(rc, 0, "%s", diag_text(&d));
	char in[] = "/tmp/tileasm-list-XXXXXX";
	int fd = mkstemp(in);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "llvm-mc-19 -triple=amdgcn -mcpu=gfx1100 -show-encoding %s", in);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	StrBuf ref = {0};
	char buf[512];
	while (fgets(buf, sizeof buf, p))
		sb_puts(&ref, buf);
	pclose(p);
	unlink(in);
	cr_assert(ref.buf, "llvm-mc-19 produced no output (missing?)");
	cr_expect_str_eq(l.buf, ref.buf);
	sb_free(&ref);
	sb_free(&l);
	isa_asm_free(&out);
	diag_free(&d);
}

static int has_use(const IsaRegUse *u, int n, char file, int write, int reg, int count)
{
	for (int i = 0; i < n; i++)
		if (u[i].file == file && u[i].write == write && u[i].reg == reg && u[i].count == count)
			return 1;
	return 0;
}

Test(isa_asm, register_uses_and_counters)
{
	IsaInsn in;
	Diag d;
	diag_init(&d);
	IsaRegUse u[16];
	cr_assert_eq(isa_parse_insn(TA_TARGET_GFX942, "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]", &in, NULL,
				    (SrcPos){1, 1}, &d), 0, "%s", diag_text(&d));
	int n = isa_reg_uses(TA_TARGET_GFX942, &in, u, 16);
	cr_expect(has_use(u, n, 'a', 1, 0, 16) && has_use(u, n, 'v', 0, 0, 2) && has_use(u, n, 'v', 0, 2, 2) &&
		  has_use(u, n, 'a', 0, 0, 16));
	cr_assert_eq(isa_parse_insn(TA_TARGET_GFX1100, "v_add_co_ci_u32 v0, vcc_lo, v1, v2, vcc_lo", &in, NULL,
				    (SrcPos){1, 1}, &d), 0);
	n = isa_reg_uses(TA_TARGET_GFX1100, &in, u, 16);
	cr_expect(has_use(u, n, 'v', 1, 0, 1) && has_use(u, n, 's', 1, 106, 1) && has_use(u, n, 's', 0, 106, 1) &&
		  has_use(u, n, 's', 0, 126, 1));
	cr_assert_eq(isa_parse_insn(TA_TARGET_GFX90A, "s_add_u32 s0, s1, 5", &in, NULL, (SrcPos){1, 1}, &d), 0);
	n = isa_reg_uses(TA_TARGET_GFX90A, &in, u, 16);
	cr_expect(has_use(u, n, 's', 1, 0, 1) && has_use(u, n, 's', 0, 1, 1) && has_use(u, n, 'c', 1, 0, 1));
	cr_expect_eq(n, 3);
	cr_assert_eq(isa_parse_insn(TA_TARGET_GFX1100, "global_store_b32 v1, v0, s[0:1]", &in, NULL, (SrcPos){1, 1}, &d), 0);
	cr_expect_eq(isa_counters(TA_TARGET_GFX1100, &in), ISA_CNT_VS);
	cr_expect_eq(isa_counters(TA_TARGET_GFX942, &(IsaInsn){.op = ISA_GLOBAL_STORE_DWORD}), ISA_CNT_VM);
	cr_expect_eq(isa_counters(TA_TARGET_GFX942, &(IsaInsn){.op = ISA_S_LOAD_DWORDX2}), ISA_CNT_LGKM);
	cr_expect_eq(isa_counters(TA_TARGET_GFX1100, &(IsaInsn){.op = ISA_DS_READ_B128}), ISA_CNT_LGKM);
	cr_expect_eq(isa_counters(TA_TARGET_GFX1100, &(IsaInsn){.op = ISA_GLOBAL_LOAD_DWORDX4}), ISA_CNT_VM);
	cr_expect_eq(isa_waitcnt_encode(TA_TARGET_GFX942, 0, 7, 0), 0x0070);
	cr_expect_eq(isa_waitcnt_encode(TA_TARGET_GFX1100, 1, 7, 63), 0x07f7);
	cr_expect(isa_ops[ISA_V_WMMA_F32_16X16X16_F16].flags & ISA_F_WMMA);
	cr_expect(isa_ops[ISA_V_MFMA_F32_32X32X8_BF16].opc[0] == 0x66 && isa_ops[ISA_V_MFMA_F32_32X32X8_BF16].opc[1] == 0x60);
	diag_free(&d);
}
