/* test_addr64.c — gfx942 builds 64-bit addresses with v_lshl_add_u64
 * instead of a v_add_co_u32/v_addc_co_u32 carry chain (no carry SGPR, so no
 * hazard nops), with the index scaling folded in; gfx90a keeps the chain.  Checked on the ISA listing, against
 * llvm-mc's encoding, and by execution against the interpreter. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "testutil.h"

/* Three loads at different offsets: each a 64-bit base + scaled index. */
static const char kernel_src[] =
	"kernel addk(A: f32[M], B: f32[N])\n"
	"    grid(ceildiv(N, 256)) threads(256) {\n"
	"  parallel (i) in (256) {\n"
	"    let j = bx * 256 + i\n"
	"    if (j < N) {\n"
	"      B[j] = A[j + 3000] + A[j + 5] + A[j + 1000000]\n"
	"    }\n  }\n}\n";

Test(addr64, gfx942_uses_lshl_add_and_runs)
{
	char dir[] = "/tmp/tileasm-addr64-XXXXXX", path[600], cmd[4096];
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/addk.tile", dir);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(kernel_src, f);
	fclose(f);
	static const char *const targets[] = {"gfx942", "gfx90a", "gfx1100"};
	for (int t = 0; t < 3; t++) {
		int st;
		snprintf(cmd, sizeof cmd, "'%s' compile '%s' --target=%s --dump-isa 2>&1", env("TILEASM"), path,
			 targets[t]);
		char *isa = run_cmd(cmd, &st);
		cr_assert_eq(st, 0, "%s:\n%s", targets[t], isa);
		if (t == 0) {
			cr_expect_geq(count(isa, "v_lshl_add_u64"), 3, "gfx942:\n%s", isa);
			cr_expect_eq(count(isa, "v_addc_co_u32"), 0, "gfx942 still has a carry chain:\n%s", isa);
			/* The index scaling (<< 2) is folded into the add. */
			cr_expect_geq(count(isa, ", 2, s["), 3, "gfx942: no scaled add:\n%s", isa);
			cr_expect_eq(count(isa, "v_lshlrev_b64"), 0, "gfx942: a separate 64-bit shift:\n%s", isa);
		} else {
			cr_expect_eq(count(isa, "v_lshl_add_u64"), 0, "%s has no v_lshl_add_u64", targets[t]);
			/* gfx1100 spells the carry-in add v_add_co_ci_u32. */
			cr_expect_geq(count(isa, t == 1 ? "v_addc_co_u32" : "v_add_co_ci_u32"), 3, "%s:\n%s", targets[t], isa);
		}
		free(isa);
		/* Execution against the interpreter, offsets past 2^20 elements. */
		snprintf(cmd, sizeof cmd,
			 "'%s' compile '%s' --target=%s -o '%s/k.hsaco' 2>&1 && TILEASM_RUN_HSACO='%s/k.hsaco' '%s' run "
			 "'%s' --backend=emu --target=%s --arg N=1000 --arg M=1001000 2>&1",
			 env("TILEASM"), path, targets[t], dir, dir, env("TILEASM"), path, targets[t]);
		char *log = run_cmd(cmd, &st);
		cr_assert(st == 0 && strstr(log, "PASS"), "%s:\n%s", targets[t], log);
		free(log);
	}
	/* The oracle agrees with our encoding of every v_lshl_add_u64 form emitted. */
	cr_assert(access("/usr/bin/llvm-mc-19", X_OK) == 0, "oracle llvm-mc-19 is missing: install LLVM 19");
	snprintf(cmd, sizeof cmd,
		 "'%s' compile '%s' --target=gfx942 --dump-isa | grep v_lshl_add_u64 | sed 's/ *;.*//' | "
		 "llvm-mc-19 -triple=amdgcn-amd-amdhsa -mcpu=gfx942 -show-encoding 2>&1 | grep -c encoding; "
		 "'%s' compile '%s' --target=gfx942 --dump-isa | grep v_lshl_add_u64 | sed 's/.*encoding: //' | sort -u "
		 "> '%s/ours'; '%s' compile '%s' --target=gfx942 --dump-isa | grep v_lshl_add_u64 | sed 's/ *;.*//' | "
		 "llvm-mc-19 -triple=amdgcn-amd-amdhsa -mcpu=gfx942 -show-encoding | grep -o 'encoding: .*' | "
		 "sed 's/encoding: //' | sort -u | diff - '%s/ours' && echo SAME",
		 env("TILEASM"), path, env("TILEASM"), path, dir, env("TILEASM"), path, dir);
	int st;
	char *log = run_cmd(cmd, &st);
	cr_expect(strstr(log, "SAME") && atoi(log) >= 3, "llvm-mc disagrees:\n%s", log);
	free(log);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	free(run_cmd(cmd, &st));
}
