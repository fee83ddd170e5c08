/* test_scale.c — kernels that grow along one axis (issue 17): what the
 * compiler must keep bounded however long the kernel is.  The timing side
 * is tools/bench/bench_scale; these check the code. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amd.h"
#include "ir.h"
#include "util.h"

static const char *const amd_targets[] = {"gfx1100", "gfx90a", "gfx942"};

/* n sequential parallel loops over one fragment (bench_compile's synthetic kernel). */
static char *loops(int n)
{
	StrBuf sb = {0};
	sb_puts(&sb, "kernel loops(A: f32[N], B: f32[N], C: f32[N]) grid(ceildiv(N, 256)) threads(256) {\n"
		     "  A_f = fragment f32[256]\n  B_f = fragment f32[256]\n"
		     "  copy(A[bx * 256], A_f)\n  copy(B[bx * 256], B_f)\n");
	for (int r = 0; r < n; r++)
		sb_printf(&sb, "  parallel (i) in (256) {\n    B_f[i] = B_f[i] * A_f[i] + %d.5\n  }\n", r % 7);
	sb_puts(&sb, "  copy(B_f, C[bx * 256])\n}\n");
	return sb_take(&sb);
}

static void compile(const char *text, const char *target, AmdOutput *out)
{
	Diag d;
	diag_init(&d);
	Module *m = ir_parse("gen.tile", text, strlen(text), &d);
	cr_assert(m && ir_verify(m, &d) == 0, "%s", diag_text(&d));
	Target t;
	cr_assert_eq(target_parse(target, &t), 0);
	memset(out, 0, sizeof *out);
	out->want_listing = 1;
	cr_assert_eq(amd_compile(m, &t, out, &d), 0, "%s: %s", target, diag_text(&d));
	diag_free(&d);
	ir_module_free(m);
}

/* Each loop's counter is set after a label that an exec-empty wave jumps
 * over; it used to be live from the kernel entry on that path, so every
 * loop kept one more VGPR and 300 loops spilled (regalloc/undef.c). */
Test(scale, sequential_loops_reuse_registers)
{
	char *text = loops(300);
	for (size_t i = 0; i < TA_ARRAY_LEN(amd_targets); i++) {
		AmdOutput out;
		compile(text, amd_targets[i], &out);
		const AmdKernelInfo *k = &out.kernels[0];
		cr_expect_leq(k->vgprs, 24, "%s: %d VGPRs for 300 loops", amd_targets[i], k->vgprs);
		cr_expect_eq(k->scratch_bytes, 0, "%s: spilled", amd_targets[i]);
		cr_expect(strstr(out.listing.buf, "; regalloc: ssa,"), "%s: not the SSA allocator alone", amd_targets[i]);
		amd_output_free(&out);
	}
	free(text);
}

/* The same kernel, 40 loops, on the emulator against the interpreter. */
Test(scale, sequential_loops_run_like_the_interpreter)
{
	const char *exe = getenv("TILEASM");
	cr_assert(exe, "TILEASM must be set (meson test does)");
	char path[] = "/tmp/tileasm-scale-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	char *text = loops(40);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	free(text);
	for (size_t i = 0; i < TA_ARRAY_LEN(amd_targets); i++) {
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "%s run %s --backend=emu --target=%s -D N=700 2>&1", exe, path, amd_targets[i]);
		FILE *p = popen(cmd, "r");
		cr_assert(p);
		char buf[4096];
		size_t n = fread(buf, 1, sizeof buf - 1, p);
		buf[n] = 0;
		int rc = pclose(p);
		cr_expect(rc == 0 && strstr(buf, "\nPASS"), "%s: %s", amd_targets[i], buf);
	}
	remove(path);
}
