/* test_checks.c — deliberately broken code is caught: a removed s_waitcnt
 * (VMEM and SMEM), an out-of-bounds offset (global and LDS), a missing
 * hazard NOP (MFMA result, VALU-written SGPR used by VMEM), an
 * uninitialised register read.  Each error names the kernel, the byte
 * offset and the instruction; the same kernels pass with checks off or
 * with the fix applied. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static EmuDevice *dev;
static uint64_t buf;

static void setup(void)
{
	dev = load_dev("checks_gfx942.s", TA_TARGET_GFX942, "");
	uint32_t z[64] = {0};
	buf = upload(dev, z, sizeof z);
}
static void teardown(void) { emu_destroy(dev); }

static char *run_k(const char *k, int want_rc)
{
	char *err = NULL;
	int rc = launch(dev, k, 1, 64, &buf, 8, &err);
	cr_assert_eq(rc, want_rc, "%s: rc %d, errors:\n%s", k, rc, err);
	return err;
}

static void expect(const char *k, const char *what, const char *where)
{
	char *err = run_k(k, -1);
	cr_assert(strstr(err, what), "%s: expected '%s' in:\n%s", k, what, err);
	cr_assert(strstr(err, where), "%s: expected '%s' (offset + disassembly) in:\n%s", k, where, err);
	char name[64];
	snprintf(name, sizeof name, "kernel %s:", k);
	cr_assert(strstr(err, name), "%s", err);
	free(err);
}

TestSuite(checks, .init = setup, .fini = teardown);

Test(checks, missing_vmcnt_wait)
{
	expect("nowait", "before the result of 'global_load_dword v2, v1, s[2:3]'", "+0x18: v_add_f32_e32 v2, 1.0, v2");
}

Test(checks, missing_lgkmcnt_wait_smem)
{
	expect("nowait_smem", "missing s_waitcnt lgkmcnt(0)", "global_store_dword v1, v1, s[2:3]");
}

Test(checks, out_of_bounds_global)
{
	expect("oob", "out-of-bounds global write", "offset:256");
}

Test(checks, out_of_bounds_lds)
{
	expect("lds_oob", "out-of-bounds LDS access", "ds_write_b32 v1, v0 offset:8");
}

Test(checks, uninitialised_register)
{
	expect("uninit", "reads v3 in lane 0, which nothing has written", "v_add_u32_e32 v2, v1, v3");
	emu_set_checks(dev, EMU_CHECK_WAITCNT | EMU_CHECK_HAZARD);
	free(run_k("uninit", 0));
}

Test(checks, mfma_result_hazard)
{
	expect("mfma_hazard", "too soon after the MFMA", "global_store_dword v1, v4, s[2:3]");
	/* With the wait states in place it runs, and 1.0 * 1.0 summed over K = 8 is 8. */
	free(run_k("mfma_nohazard", 0));
	float out[64];
	download(dev, buf, out, sizeof out);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(out[i], 8.0f, "lane %d: %g", i, out[i]);
}

Test(checks, valu_sgpr_vmem_hazard)
{
	expect("sgpr_hazard", "VMEM reads s4", "global_store_dword v1, v1, s[4:5]");
}

/* gfx11 DPP8 and VOP3 DPP (_e64_dpp) decode (the disassembler prints them)
 * but have no executor semantics: running into one stops the launch at its
 * offset; without the check it would run as the plain VOP3/VOP1 op. */
Test(checks, gfx11_dpp_forms_are_not_run_as_plain_ops)
{
	EmuDevice *d = load_dev("dpp_gfx1100.s", TA_TARGET_GFX1100, "-mattr=+wavefrontsize32");
	static const char *const k[3][2] = {{"e64dpp", "+0x8:"}, {"e64dpp8", "+0x8:"}, {"dpp8", "+0x4:"}};
	for (int i = 0; i < 3; i++) {
		char *err = NULL;
		int rc = launch(d, k[i][0], 1, 32, NULL, 0, &err);
		cr_assert_eq(rc, -1, "%s: rc %d, errors:\n%s", k[i][0], rc, err ? err : "");
		cr_assert(err && strstr(err, k[i][1]) && strstr(err, "cannot decode"), "%s: %s", k[i][0], err ? err : "");
		free(err);
	}
	emu_destroy(d);
}

/* gfx9 SDWA decodes but has no executor semantics: the launch stops at it
 * instead of running v_mov_b32 without its byte/word selects. */
Test(checks, gfx9_sdwa_is_not_run_as_the_plain_op)
{
	char *err = run_k("sdwa", -1);
	cr_assert(strstr(err, "+0x8:") && strstr(err, "cannot decode"), "%s", err);
	free(err);
}
