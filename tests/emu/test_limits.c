/* test_limits.c — the sizes a launch allocates from a code object's
 * descriptor (LDS, scratch, kernarg) and from the caller are held to the
 * hardware's limits (docs/emulator.md "Limits"): at the limit a kernel runs,
 * one byte over it the launch is refused with an error naming the field,
 * never a multi-GB allocation.  Also the libFuzzer input that found it
 * (tests/fuzz/regress/emu/lds-4gib-gfx1100: a gfx1100 vector_add whose
 * GROUP_SEGMENT_FIXED_SIZE became 0xf7002000, 4 GB asked of malloc). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "diag.h"
#include "emu.h"
#include "target.h"
#include "util.h"

#define EMU_LIMITS_TEST_KERNARG 65540 /* host bytes the kernarg tests pass at most */

Test(emu_limits, fuzz_input_with_4gb_lds_is_an_error)
{
	const char *src = getenv("TILEASM_SRCDIR");
	cr_assert(src, "TILEASM_SRCDIR is not set");
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/fuzz/regress/emu/lds-4gib-gfx1100", src);
	size_t n;
	uint8_t *data = (uint8_t *)read_file(path, &n);
	cr_assert(data, "cannot read %s", path);
	cr_assert(n > 1 && data[0] == 2, "first byte picks gfx1100 as in fuzz_emu.c");
	EmuDevice *dev = emu_create(TA_TARGET_GFX1100);
	Diag d;
	diag_init(&d);
	cr_assert_eq(emu_load(dev, data + 1, n - 1, &d), 0, "%s", diag_text(&d));
	/* As fuzz_emu launches it: 2 workgroups of 64, 8 kernarg pointers. */
	uint64_t ka[8];
	for (int i = 0; i < 8; i++)
		ka[i] = emu_alloc(dev, 4096);
	const uint32_t grid[3] = {2, 1, 1}, block[3] = {64, 1, 1};
	cr_assert_eq(emu_launch(dev, "vector_add", grid, block, ka, sizeof ka, 0, &d), -1);
	cr_assert(strstr(diag_text(&d), "emu: kernel vector_add: LDS of 4143980544 bytes (GROUP_SEGMENT_FIXED_SIZE "
					"4143980544 + 0 dynamic) is more than the 65536 bytes per workgroup gfx1100 has"),
		  "%s", diag_text(&d));
	diag_free(&d);
	emu_destroy(dev);
	free(data);
}

/* co_assemble of text for target t (asserts success); malloc'd bytes. */
static uint8_t *assemble(ta_target t, const char *text, size_t *n)
{
	Target tg;
	memset(&tg, 0, sizeof tg);
	tg.id = t;
	SrcFile src = {"limits.s", text, strlen(text)};
	Diag d;
	diag_init(&d);
	uint8_t *co = NULL;
	cr_assert_eq(co_assemble(&tg, 0, &src, &co, n, &d), 0, "%s\n%s", diag_text(&d), text);
	diag_free(&d);
	return co;
}

typedef struct {
	ta_target t;
	int w32;     /* gfx1100 wave32 */
	uint32_t lds, priv, kernarg; /* the descriptor's segment sizes */
} Kern;

/* Assembles an s_endpgm kernel with those sizes (private segment enabled
 * when priv > 0) and launches one workgroup of one wave; returns
 * emu_launch's result, its message in *err (malloc'd). */
static int launch_sizes(const Kern *kn, size_t kernarg_size, uint32_t dynamic_lds, char **err)
{
	int g11 = kn->t == TA_TARGET_GFX1100, g90a = kn->t == TA_TARGET_GFX90A;
	StrBuf sb = {0};
	sb_puts(&sb, ".text\n.globl k\n.p2align 8\n.type k,@function\nk:\n  s_endpgm\n.Lend:\n  .size k, .Lend-k\n");
	sb_puts(&sb, ".rodata\n.p2align 6\n.amdhsa_kernel k\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n");
	/* The assembler takes sizes up to INT32_MAX; bigger ones are written
	 * into the descriptor's first three dwords afterwards, found by
	 * placeholders. */
	uint32_t want[3] = {kn->lds, kn->priv, kn->kernarg}, as[3];
	int patch = 0;
	for (int i = 0; i < 3; i++) {
		as[i] = want[i] > INT32_MAX ? 0x7e5a0000u + (uint32_t)i : want[i];
		patch |= want[i] != as[i];
	}
	sb_printf(&sb, "  .amdhsa_group_segment_fixed_size %u\n  .amdhsa_private_segment_fixed_size %u\n", as[0], as[1]);
	sb_printf(&sb, "  .amdhsa_kernarg_size %u\n  .amdhsa_next_free_sgpr 16\n", as[2]);
	if (kn->priv && g90a)
		sb_puts(&sb, "  .amdhsa_user_sgpr_private_segment_buffer 1\n"
			     "  .amdhsa_system_sgpr_private_segment_wavefront_offset 1\n");
	else if (kn->priv)
		sb_puts(&sb, "  .amdhsa_enable_private_segment 1\n");
	sb_puts(&sb, g11 ? "  .amdhsa_next_free_vgpr 8\n" : "  .amdhsa_next_free_vgpr 8\n  .amdhsa_accum_offset 8\n");
	if (g11)
		sb_printf(&sb, "  .amdhsa_wavefront_size32 %d\n", kn->w32);
	sb_puts(&sb, ".end_amdhsa_kernel\n");
	char *text = sb_take(&sb);
	size_t n = 0;
	uint8_t *co = assemble(kn->t, text, &n);
	Diag d;
	diag_init(&d);
	if (patch) {
		uint8_t *kd = NULL;
		for (size_t at = 0; !kd && at + sizeof as <= n; at += 4) /* the descriptor is 64-byte aligned */
			if (!memcmp(co + at, as, sizeof as))
				kd = co + at;
		cr_assert(kd, "descriptor not found");
		memcpy(kd, want, sizeof want);
	}
	EmuDevice *dev = emu_create(kn->t);
	cr_assert(dev);
	cr_assert_eq(emu_load(dev, co, n, &d), 0, "%s", diag_text(&d));
	static const uint8_t zero[EMU_LIMITS_TEST_KERNARG];
	cr_assert(kernarg_size <= sizeof zero);
	const uint32_t grid[3] = {1, 1, 1}, block[3] = {kn->w32 ? 32u : 64u, 1, 1};
	int rc = emu_launch(dev, "k", grid, block, zero, kernarg_size, dynamic_lds, &d);
	*err = strdup(diag_text(&d));
	emu_destroy(dev);
	diag_free(&d);
	free(co);
	free(text);
	return rc;
}

static const struct {
	ta_target t;
	int w32;
	uint32_t wave_scratch; /* COMPUTE_TMPRING_SIZE.WAVESIZE's largest value, in bytes */
} tgts[] = {
	{TA_TARGET_GFX90A, 0, 1024u * 8191},
	{TA_TARGET_GFX942, 0, 1024u * 8191},
	{TA_TARGET_GFX1100, 1, 256u * 32767},
	{TA_TARGET_GFX1100, 0, 256u * 32767},
};

static void expect_ok(const Kern *kn, size_t kernarg_size, uint32_t dynamic_lds)
{
	char *err;
	int rc = launch_sizes(kn, kernarg_size, dynamic_lds, &err);
	cr_expect_eq(rc, 0, "%s w%d lds %u+%u priv %u kernarg %u/%zu: %s", target_name(kn->t), kn->w32 ? 32 : 64,
		     kn->lds, dynamic_lds, kn->priv, kn->kernarg, kernarg_size, err);
	free(err);
}

static void expect_err(const Kern *kn, size_t kernarg_size, uint32_t dynamic_lds, const char *want)
{
	char *err;
	int rc = launch_sizes(kn, kernarg_size, dynamic_lds, &err);
	cr_expect_eq(rc, -1, "%s: accepted", target_name(kn->t));
	cr_expect(strstr(err, want), "%s w%d: want '%s' in:\n%s", target_name(kn->t), kn->w32 ? 32 : 64, want, err);
	free(err);
}

Test(emu_limits, lds_64k_per_workgroup)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(tgts); i++) {
		Kern kn = {tgts[i].t, tgts[i].w32, 65536, 0, 8};
		char want[256];
		expect_ok(&kn, 8, 0);
		snprintf(want, sizeof want, "emu: kernel k: LDS of 65537 bytes (GROUP_SEGMENT_FIXED_SIZE 65536 + 1 dynamic) "
			 "is more than the 65536 bytes per workgroup %s has", target_name(tgts[i].t));
		expect_err(&kn, 8, 1, want);
		kn.lds = 65537;
		expect_err(&kn, 8, 0, "LDS of 65537 bytes (GROUP_SEGMENT_FIXED_SIZE 65537 + 0 dynamic)");
		/* static + dynamic may not wrap around 32 bits to a small size */
		kn.lds = 0xf7002000u;
		expect_err(&kn, 8, 0x09000000u, "LDS of 4294975488 bytes (GROUP_SEGMENT_FIXED_SIZE 4143980544 + "
						"150994944 dynamic)");
		kn.lds = 16;
		expect_ok(&kn, 8, 65536 - 16);
	}
}

Test(emu_limits, scratch_per_wave)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(tgts); i++) {
		uint32_t lanes = tgts[i].w32 ? 32 : 64, max = tgts[i].wave_scratch / lanes & ~3u;
		Kern kn = {tgts[i].t, tgts[i].w32, 0, max, 8};
		expect_ok(&kn, 8, 0);
		kn.priv = max + 4;
		char want[320];
		snprintf(want, sizeof want, "emu: kernel k: private segment of %u bytes per work-item "
			 "(PRIVATE_SEGMENT_FIXED_SIZE) needs %u bytes per wave%u; %s allows at most %u "
			 "(COMPUTE_TMPRING_SIZE.WAVESIZE)", kn.priv, kn.priv * lanes, lanes, target_name(kn.t),
			 tgts[i].wave_scratch);
		expect_err(&kn, 8, 0, want);
		/* rounding up to dwords may not wrap to 0 */
		kn.priv = 0xfffffffeu;
		expect_err(&kn, 8, 0, "private segment of 4294967294 bytes per work-item");
	}
}

Test(emu_limits, kernarg_bound)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(tgts); i++) {
		Kern kn = {tgts[i].t, tgts[i].w32, 0, 0, 65536};
		expect_ok(&kn, 65536, 0);
		expect_err(&kn, 65537, 0, "emu: kernel k: kernarg segment of 65537 bytes (KERNARG_SIZE 65536, 65537 "
					  "passed) is more than the emulator's bound of 65536 bytes");
		kn.kernarg = 0xfffffff0u;
		expect_err(&kn, 8, 0, "kernarg segment of 4294967280 bytes (KERNARG_SIZE 4294967280, 8 passed)");
	}
}

/* emu_load decodes nothing, each launch decodes its kernel once.  Decoding
 * every kernel at load cost kernels x .text when descriptors of an untrusted
 * object share one body (co_assemble no longer writes such objects, co_read
 * reads them): 400 descriptors over 8192 instructions took 900 MB.  Here
 * each kernel has its own body. */
Test(emu_limits, kernels_are_decoded_at_their_first_launch)
{
	enum { K = 300, BODY = 255 };
	StrBuf sb = {0};
	sb_puts(&sb, ".text\n");
	for (int i = 0; i < K; i++) {
		sb_printf(&sb, ".p2align 8\n.globl k%d\n.type k%d,@function\nk%d:\n", i, i, i);
		for (int j = 0; j < BODY; j++)
			sb_puts(&sb, "  s_nop 0\n");
		sb_printf(&sb, "  s_endpgm\n.Lend%d:\n  .size k%d, .Lend%d-k%d\n", i, i, i, i);
	}
	sb_puts(&sb, ".rodata\n");
	for (int i = 0; i < K; i++)
		sb_printf(&sb, ".p2align 6\n.amdhsa_kernel k%d\n  .amdhsa_next_free_vgpr 8\n  .amdhsa_next_free_sgpr 16\n"
			       "  .amdhsa_accum_offset 8\n.end_amdhsa_kernel\n", i);
	char *text = sb_take(&sb);
	size_t n = 0;
	uint8_t *co = assemble(TA_TARGET_GFX942, text, &n);
	Diag d;
	diag_init(&d);
	EmuDevice *dev = emu_create(TA_TARGET_GFX942);
	cr_assert_eq(emu_load(dev, co, n, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(emu_code_object(dev)->nkernels, K);
	cr_assert_eq(emu_stats(dev)->decoded, 0);
	const uint32_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
	static const char *const runs[] = {"k7", "k7", "k299.kd", "k0"};
	static const uint64_t want[] = {BODY + 1, BODY + 1, 2 * (BODY + 1), 3 * (BODY + 1)};
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(emu_launch(dev, runs[i], grid, block, NULL, 0, 0, &d), 0, "%s", diag_text(&d));
		cr_assert_eq(emu_stats(dev)->decoded, want[i], "after %s: %llu decoded", runs[i],
			     (unsigned long long)emu_stats(dev)->decoded);
	}
	cr_assert_eq(emu_stats(dev)->insns, 4 * (BODY + 1));
	emu_destroy(dev);
	diag_free(&d);
	free(co);
	free(text);
}
