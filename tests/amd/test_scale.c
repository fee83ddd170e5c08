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
#include "testutil.h"

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

/* n nested per-thread ifs, a global store at each level. */
static char *ifnest(int n)
{
	StrBuf sb = {0};
	sb_puts(&sb, "kernel ifnest(C: f32[N]) grid(ceildiv(N, 256)) threads(256) {\n");
	for (int r = 0; r < n; r++)
		sb_printf(&sb, "  if tx < %d {\n  C[bx * 256 + tx] = C[bx * 256 + tx] * 0.5 + %d.5\n", 255 - r % 250, r % 7);
	for (int r = 0; r < n; r++)
		sb_puts(&sb, "  }\n");
	sb_puts(&sb, "}\n");
	return sb_take(&sb);
}

/* One parallel loop of n dependent statements: ~9 instructions each. */
static char *straight(int n)
{
	StrBuf sb = {0};
	sb_puts(&sb, "kernel straight(A: f32[N], B: f32[N], C: f32[N]) grid(ceildiv(N, 256)) threads(256) {\n"
		     "  A_f = fragment f32[256]\n  B_f = fragment f32[256]\n"
		     "  copy(A[bx * 256], A_f)\n  copy(B[bx * 256], B_f)\n  parallel (i) in (256) {\n");
	for (int r = 0; r < n; r++)
		sb_printf(&sb, "    B_f[i] = B_f[i] * A_f[i] + %d.5\n", r % 7);
	sb_puts(&sb, "  }\n  copy(B_f, C[bx * 256])\n}\n");
	return sb_take(&sb);
}

static void compile(const char *text, const char *target, AmdOutput *out)
{
	Module *m = load_text("gen.tile", text, NULL, 0);
	Diag d;
	diag_init(&d);
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

/* Runs text on the emulator for each AMD target; `tileasm run` compares
 * every written tensor with the interpreter. */
static void run_on_emulator(const char *text, const char *defs)
{
	const char *exe = getenv("TILEASM");
	cr_assert(exe, "TILEASM must be set (meson test does)");
	char path[] = "/tmp/tileasm-scale-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	for (size_t i = 0; i < TA_ARRAY_LEN(amd_targets); i++) {
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "%s run %s --backend=emu --target=%s %s 2>&1", exe, path, amd_targets[i], defs);
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

Test(scale, sequential_loops_run_like_the_interpreter)
{
	char *text = loops(40);
	run_on_emulator(text, "-D N=700");
	free(text);
}

/* Each level's exec-empty jump used to zero the park masks of every level
 * inside it again: 100 levels took 11,554 instructions on gfx942, 4x the
 * 50-level kernel.  Now the first jump of a stretch zeroes them once.  (Each
 * level keeps one park mask live across the levels inside it, so from ~50
 * levels on wave64 the SGPRs spill to VGPR lanes: a few more per level.) */
Test(scale, nested_ifs_grow_linearly)
{
	char *t25 = ifnest(25), *t50 = ifnest(50), *t100 = ifnest(100);
	for (size_t i = 0; i < TA_ARRAY_LEN(amd_targets); i++) {
		AmdOutput a, b, c;
		compile(t25, amd_targets[i], &a);
		compile(t50, amd_targets[i], &b);
		compile(t100, amd_targets[i], &c);
		int na = a.kernels[0].ninsns, nb = b.kernels[0].ninsns, nc = c.kernels[0].ninsns;
		cr_expect_leq(nb, 2 * na + na / 4, "%s: %d instructions for 50 levels, %d for 25", amd_targets[i], nb, na);
		cr_expect_leq(nc, 45 * 100, "%s: %d instructions for 100 levels", amd_targets[i], nc);
		amd_output_free(&a);
		amd_output_free(&b);
		amd_output_free(&c);
	}
	free(t25);
	free(t50);
	free(t100);
	char *t60 = ifnest(60);
	run_on_emulator(t60, "-D N=1024");
	free(t60);
}

/* A loop body of ~210 KB: its exit branch and back edge are beyond the
 * SOPP range (+-128 KiB) and become s_getpc/s_add/s_addc/s_setpc through
 * a reserved SGPR pair (amd_emit.c); it used to be rejected ("branch offset
 * out of range").  llvm-objdump-19 decodes it, and it runs like the
 * interpreter.  Half the body fits the range and needs none. */
Test(scale, long_branches_beyond_the_sopp_range)
{
	cr_assert(access("/usr/bin/llvm-objdump-19", X_OK) == 0, "oracle /usr/bin/llvm-objdump-19 is missing");
	char *big = straight(4096), *half = straight(2048);
	for (size_t i = 0; i < TA_ARRAY_LEN(amd_targets); i++) {
		AmdOutput out;
		compile(half, amd_targets[i], &out);
		cr_expect_null(strstr(out.listing.buf, "s_setpc_b64"), "%s: a long branch in a short kernel", amd_targets[i]);
		amd_output_free(&out);
		compile(big, amd_targets[i], &out);
		cr_expect_gt(out.kernels[0].code_bytes, 140000, "%s: the kernel is too small to test this", amd_targets[i]);
		cr_expect(strstr(out.listing.buf, "s_getpc_b64 s[") && strstr(out.listing.buf, "s_setpc_b64 s["),
			  "%s: no long branch", amd_targets[i]);
		char obj[] = "/tmp/tileasm-long-XXXXXX";
		int fd = mkstemp(obj);
		cr_assert(fd >= 0);
		cr_assert_eq(write(fd, out.code_object, out.code_object_len), (ssize_t)out.code_object_len);
		close(fd);
		char cmd[256];
		snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=%s %s 2>&1", amd_targets[i], obj);
		FILE *p = popen(cmd, "r");
		cr_assert(p);
		char line[512];
		int setpc = 0, unknown = 0;
		while (fgets(line, sizeof line, p)) {
			setpc += strstr(line, "s_setpc_b64") != NULL;
			unknown += strstr(line, "<unknown>") != NULL;
		}
		cr_expect_eq(pclose(p), 0, "%s: llvm-objdump-19 failed", amd_targets[i]);
		cr_expect_geq(setpc, 2, "%s: llvm-objdump-19 shows %d s_setpc_b64", amd_targets[i], setpc);
		cr_expect_eq(unknown, 0, "%s: undecodable bytes", amd_targets[i]);
		remove(obj);
		amd_output_free(&out);
	}
	run_on_emulator(big, "-D N=600");
	free(big);
	free(half);
}

/* `unroll` (constant bounds, verify checks) unrolls; codegen used to
 * ignore the hint.  The listing says what was unrolled and what was kept
 * (over 64 trips).  A break leaves past the last copy.  Each runs like the
 * interpreter. */
static const char unroll_src[] =
	"kernel unr(A: f32[N], C: f32[N]) grid(ceildiv(N, 256)) threads(256) {\n"
	"  S = fragment f32[256]\n  copy(A[bx * 256], S)\n"
	"  unroll j in 0 .. %d step %d {\n"
	"    parallel (i) in (256) {\n      S[i] = S[i] * 0.5 + f32(j)\n    }\n"
	"    if j == %d {\n      break\n    }\n"
	"  }\n"
	"  unroll k in 0 .. %d {\n    parallel (i) in (256) {\n      S[i] = S[i] + f32(k) * 0.25\n    }\n  }\n"
	"  copy(S, C[bx * 256])\n}\n";

Test(scale, unroll_unrolls_constant_trip_loops)
{
	static const struct {
		int hi, step, brk, k, unrolled, kept;
	} cases[] = {
		{8, 1, 100, 3, 2, 0},   /* 8 and 3 copies */
		{20, 3, 9, 100, 1, 1},  /* 7 copies, the break in the fourth; 100 trips: kept */
		{130, 2, 100, 2, 1, 1}, /* 65 trips: kept; 2 copies */
	};
	for (size_t c = 0; c < TA_ARRAY_LEN(cases); c++) {
		char text[1024], want[64];
		snprintf(text, sizeof text, unroll_src, cases[c].hi, cases[c].step, cases[c].brk, cases[c].k);
		snprintf(want, sizeof want, "; unroll: %d loops unrolled, %d kept as loops", cases[c].unrolled,
			 cases[c].kept);
		for (size_t i = 0; i < TA_ARRAY_LEN(amd_targets); i++) {
			AmdOutput out;
			compile(text, amd_targets[i], &out);
			cr_expect(strstr(out.listing.buf, want), "%s case %zu: no '%s' in the listing", amd_targets[i], c,
				  want);
			amd_output_free(&out);
		}
		run_on_emulator(text, "-D N=600");
	}
}

/* An else-if chain of n arms: on bx (uniform: s_cbranch_scc, and a
 * parallel loop in each arm) or on tx (divergent: each arm parks the lanes
 * that skip it).  All arms end at one run of labels. */
static char *elif(int n, bool divergent)
{
	StrBuf sb = {0};
	sb_puts(&sb, "kernel elif(A: f32[N], C: f32[N]) grid(ceildiv(N, 256)) threads(256) {\n"
		     "  S = fragment f32[256]\n  copy(A[bx * 256], S)\n");
	for (int r = 0; r < n; r++) {
		sb_printf(&sb, "  %sif %s == %d {\n", r ? "else " : "", divergent ? "tx" : "bx", r);
		if (divergent)
			sb_printf(&sb, "    C[bx * 256 + tx] = A[bx * 256 + tx] * 0.5 + %d.5\n  }\n", r % 7);
		else
			sb_printf(&sb, "    parallel (i) in (256) {\n      S[i] = S[i] * 0.5 + %d.5\n    }\n  }\n", r % 7);
	}
	if (!divergent)
		sb_puts(&sb, "  copy(S, C[bx * 256])\n");
	sb_puts(&sb, "}\n");
	return sb_take(&sb);
}

/* Every arm's end branch used to keep a park mask of its own live to the
 * end of the chain (and the uniform chain one for labels that only scalar
 * branches reach, always zero): 200 arms took ~100 SGPRs and spilled ~300
 * of them on wave64, and compile time grew with the square of the length.
 * Now labels with no code between them share one mask and labels no lane
 * is parked for have none: a few masks whatever the length. */
Test(scale, else_if_chains_keep_a_few_masks)
{
	for (int dv = 0; dv < 2; dv++) {
		char *t100 = elif(100, dv), *t200 = elif(200, dv);
		for (size_t i = 0; i < TA_ARRAY_LEN(amd_targets); i++) {
			AmdOutput a, b;
			compile(t100, amd_targets[i], &a);
			compile(t200, amd_targets[i], &b);
			const AmdKernelInfo *k = &b.kernels[0];
			const char *what = dv ? "divergent" : "uniform";
			cr_expect_leq(k->sgprs, 32, "%s %s: %d SGPRs for 200 arms", amd_targets[i], what, k->sgprs);
			cr_expect_eq(k->scratch_bytes, 0, "%s %s: spilled", amd_targets[i], what);
			cr_expect_null(strstr(b.listing.buf, "v_writelane"), "%s %s: SGPRs spilled to VGPR lanes", amd_targets[i],
				       what);
			int na = a.kernels[0].ninsns, nb = k->ninsns;
			cr_expect_leq(nb, 2 * na + na / 20, "%s %s: %d instructions for 200 arms, %d for 100", amd_targets[i],
				      what, nb, na);
			amd_output_free(&a);
			amd_output_free(&b);
		}
		free(t100);
		free(t200);
	}
	/* bx 0..44: 40 arms and the fall-through; tx covers every arm. */
	char *u = elif(40, false), *v = elif(40, true);
	run_on_emulator(u, "-D N=11520");
	run_on_emulator(v, "-D N=11520");
	free(u);
	free(v);
}
