/* test_cvt16.c — f16/bf16 elements of a packed load convert to f32 in one
 * instruction each (amd_isel.c sel_unpack_half: v_cvt_f32_f16 of the low
 * half, v_fma_mix_f32 of the high half, no v_bfe_u32 extract), and the
 * converted value lands in the fragment register without a v_mov
 * (amd_opt.c coalescing); two converted f16 values pack into a dword with
 * one v_pack_b32_f16 (SI_PACK2); butterfly row reductions inside 16 lanes are
 * DPP moves on gfx9 (amd_isel.c shfl_dpp).  Checked on rmsnorm's listing for every AMD
 * target and by running it against the interpreter at a ragged shape. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util.h"
#include "testutil.h"

Test(cvt16, packed_f16_loads_convert_in_one_instruction)
{
	const char *exe = getenv("TILEASM"), *src = getenv("TILEASM_SRCDIR");
	cr_assert(exe && src);
	const char *const targets[] = {"gfx90a", "gfx942", "gfx1100"};
	for (size_t t = 0; t < TA_ARRAY_LEN(targets); t++) {
		char cmd[2048];
		int st;
		snprintf(cmd, sizeof cmd, "%s compile %s/examples/rmsnorm.tile --target=%s -D M=8 -D N=256 --dump-isa -o /dev/null",
			 exe, src, targets[t]);
		char *isa = run_cmd(cmd, &st);
		cr_assert_eq(st, 0, "%s", isa);
		/* Two passes over X (f16, 8 per 16-byte chunk) and one over W. */
		cr_expect(count(isa, "v_fma_mix_f32") >= 12, "%s: %d v_fma_mix_f32", targets[t],
			  count(isa, "v_fma_mix_f32"));
		cr_expect_eq(count(isa, ", 16, 16"), 0, "%s: a high-half extract is left:\n%s", targets[t], isa);
		/* Stores: two conversions and one v_pack_b32_f16 per dword (Y: 4 per
		 * 16-byte chunk), no extract-and-shift pairing. */
		cr_expect(count(isa, "v_pack_b32_f16") >= 4, "%s: %d v_pack_b32_f16", targets[t], count(isa, "v_pack_b32_f16"));
		cr_expect_eq(count(isa, "v_lshl_or_b32"), 0, "%s", targets[t]);
		/* gfx9 row sums: xor 1, 2, 4, 8 are DPP moves; only xor 16 (across
		 * 16-lane rows) is a ds_bpermute; s_nop 1 separates a VALU write
		 * from the DPP move reading it (amd_hazard.c). */
		if (strcmp(targets[t], "gfx1100")) {
			cr_expect(count(isa, "quad_perm:[1,0,3,2]") >= 1 && count(isa, "quad_perm:[2,3,0,1]") >= 1 &&
				  count(isa, "row_ror:8") >= 1, "%s: no DPP butterfly:\n%s", targets[t], isa);
			cr_expect(count(isa, "ds_bpermute_b32") <= count(isa, "row_ror:8"), "%s: %d bpermutes", targets[t],
				  count(isa, "ds_bpermute_b32"));
			cr_expect(count(isa, "s_nop 1 ") >= count(isa, "row_ror:8"), "%s: no DPP hazard wait", targets[t]);
		}
		free(isa);
		snprintf(cmd, sizeof cmd, "%s run %s/examples/rmsnorm.tile --backend=emu --target=%s -D M=7 -D N=199 2>&1", exe,
			 src, targets[t]);
		char *out = run_cmd(cmd, &st);
		cr_expect(st == 0 && strstr(out, "\nPASS"), "%s", out);
		free(out);
	}
}
