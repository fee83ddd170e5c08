/* test_cli.c — `tileasm asm` / `tileasm disasm`: invalid assembly gives
 * file:line:col diagnostics and exit 1, bad options exit 2, and the
 * --show-encoding listing and -o bytes agree with llvm-mc-19. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "testutil.h"

static const char *tool(void)
{
	const char *t = getenv("TILEASM");
	cr_assert(t, "TILEASM not set");
	return t;
}

/* Runs a shell command, returns exit status, output (stdout+stderr) in *out. */
static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/tileasm-cli-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static const struct {
	const char *target, *src, *where, *msg;
} bad[] = {
	{"gfx942", "s_nop 0\n  v_foo_b32 v0, v1\n", ":2:3: error: ", "invalid instruction"},
	{"gfx942", "s_mov_b32 v0, s1\n", ":1:11: error: ", "invalid operand for instruction"},
	{"gfx942", "v_add_f32 v0, v1\n", ":1:17: error: ", "too few operands for instruction"},
	{"gfx942", "v_mov_b32 v0, v1, v2\n", ":1:17: error: ", "invalid operand for instruction"},
	{"gfx942", "s_movk_i32 s0, 0x12345\n", ":1:16: error: ", "invalid immediate"},
	{"gfx942", "global_load_dword v0, v[2:3], off offset:99999\n", ":1:35: error: ", "13-bit signed offset"},
	{"gfx942", "v_add_f32 v0, v1, v2 clamp:3\n", ":1:22: error: ", "invalid modifier"},
	{"gfx942", "s_nop 0 glc\n", ":1:9: error: ", "invalid modifier"},
	{"gfx942", "s_load_dwordx2 s[1:2], s[0:1], 0x0\n", ":1:16: error: ", "invalid register alignment"},
	{"gfx942", "ds_read_b32 v0, s1\n", ":1:17: error: ", "expected a VGPR"},
	{"gfx942", "v_fma_f32 v0, v1, 0x12345, v3\n", ":1:19: error: ", "literal operands are not supported"},
	{"gfx942", "s_waitcnt vmcnt(99)\n", ":1:11: error: ", "too large value for counter"},
	{"gfx942", "v_mfma_f32_32x32x8_f16 a[0:7], v[0:1], v[2:3], a[0:15]\n", ":1:24: error: ", "invalid register count"},
	{"gfx942", "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n", ":1:1: error: ",
	 "instruction not supported on this GPU"},
	{"gfx1100", "v_cmp_eq_f32 vcc, v0, v1\n", ":1:1", "error: "},
	{"gfx1100", "s_branch .Lnowhere\n", ":1:1: error: ", "undefined label '.Lnowhere'"},
	{"gfx1100", "x:\nx: s_endpgm\n", ":2:1: error: ", "already defined"},
	{"gfx1100", ".bogus_directive 3\n", ":1:1: error: ", "unknown directive '.bogus_directive'"},
	{"gfx90a", "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]\n", ":1:1: error: ",
	 "instruction not supported on this GPU"},
	{"gfx1100", "v_add_f32 v0, v1, v2 neg_lo:[1,0\n", ":1:", "error: "},
	{"gfx1100", "v_dual_mul_f32 v0, v1, v2 :: v_dual_add_f32 v3, v5, v6\n", ":1:1: error: ",
	 "src0 operands must use different VGPR banks"},
	{"gfx1100", "v_dual_mul_f32 v0, v1, v2 :: v_dual_add_f32 v2, v4, v7\n", ":1:1: error: ",
	 "one dst register must be even and the other odd"},
};

Test(isa_cli, invalid_assembly)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *path = write_tmp(bad[i].src), *out, cmd[512];
		snprintf(cmd, sizeof cmd, "%s asm %s --target=%s 2>&1", tool(), path, bad[i].target);
		int rc = run_out(cmd, &out);
		char where[256];
		snprintf(where, sizeof where, "%s%s", path, bad[i].where);
		cr_expect_eq(rc, 1, "case %zu: exit %d, want 1: %s", i, rc, out);
		cr_expect(strstr(out, where), "case %zu: expected '%s' in:\n%s", i, where, out);
		cr_expect(strstr(out, bad[i].msg), "case %zu: expected '%s' in:\n%s", i, bad[i].msg, out);
		cr_expect(strchr(out, '^'), "case %zu: no caret line:\n%s", i, out);
		unlink(path);
		free(path);
		free(out);
	}
}

Test(isa_cli, usage_errors)
{
	char *out, cmd[512];
	const char *args[] = {"asm", "asm --target=gfx942", "asm x.s --target=gfx999", "asm x.s --target=sm_90a",
			      "asm x.s --target=gfx942 --bogus", "disasm", "disasm x.bin --target=nope",
			      "asm x.s --target=gfx942 --wave64"};
	for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
		snprintf(cmd, sizeof cmd, "%s %s 2>&1", tool(), args[i]);
		int rc = run_out(cmd, &out);
		cr_expect_eq(rc, 2, "'%s': exit %d, want 2: %s", args[i], rc, out);
		free(out);
	}
}

Test(isa_cli, show_encoding_and_disasm_match_llvm)
{
	const char *src = "s_load_dwordx2 s[0:1], s[0:1], 0x0\nv_mov_b32 v1, 42\ns_waitcnt lgkmcnt(0)\n"
			  "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15] cbsz:1\n"
			  "global_store_dword v[2:3], a5, off sc0 sc1\nds_read2_b32 v[0:1], v2 offset0:1 offset1:2\n"
			  "buffer_load_dword v0, v1, s[4:7], 0 offen offset:16\ns_endpgm\n";
	char *path = write_tmp(src), *ours, *ref, cmd[1024];
	snprintf(cmd, sizeof cmd, "%s asm %s --target=gfx942 --show-encoding -o %s.bin 2>&1", tool(), path, path);
	cr_assert_eq(run_out(cmd, &ours), 0, "%s", ours);
	snprintf(cmd, sizeof cmd, "llvm-mc-19 -triple=amdgcn -mcpu=gfx942 -show-encoding %s 2>&1", path);
	cr_assert_eq(run_out(cmd, &ref), 0, "llvm-mc-19 failed (missing?): %s", ref);
	cr_expect_str_eq(ours, ref);
	free(ours), free(ref);
	/* disasm of our bytes vs llvm-mc --disassemble of the same bytes */
	snprintf(cmd, sizeof cmd, "%s disasm %s.bin --target=gfx942 2>&1 | sed 's|  *//.*||'", tool(), path);
	cr_assert_eq(run_out(cmd, &ours), 0);
	snprintf(cmd, sizeof cmd,
		 "od -An -tx1 -v %s.bin | tr -s ' \\n' ' ' | sed 's/ \\([0-9a-f][0-9a-f]\\)/0x\\1 /g' | "
		 "llvm-mc-19 --disassemble -triple=amdgcn -mcpu=gfx942 2>&1 | grep -v '\\.text'", path);
	cr_assert_eq(run_out(cmd, &ref), 0, "%s", ref);
	cr_expect_str_eq(ours, ref);
	free(ours), free(ref);
	/* stdin input */
	snprintf(cmd, sizeof cmd, "%s asm - --target=gfx942 --show-encoding < %s | grep -c encoding", tool(), path);
	cr_assert_eq(run_out(cmd, &ours), 0);
	cr_expect_str_eq(ours, "8\n");
	free(ours);
	snprintf(cmd, sizeof cmd, "%s.bin", path);
	unlink(cmd);
	unlink(path);
	free(path);
}
