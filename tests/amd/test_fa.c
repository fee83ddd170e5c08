/* test_fa.c — MMA-row fragments (docs/lowering.md, "MMA-row fragments"):
 * an f32 fragment D[R] that goes with register fragments F[R, C] in the
 * MMA layout (reduce(F, D, dim=1), D[i] in their parallel loops, parallel
 * (i) over row fragments, copies between them, clear/fill) lives in
 * registers, and reductions of F into it are per-thread folds plus
 * butterfly shuffles.
 *  - Flash attention (causal and not, ragged S) and small kernels that hit
 *    the path (gemm results reduced with max/sum/absmax, clear=false, row
 *    arithmetic) run on the emulator for gfx1100, gfx90a and gfx942 against
 *    the interpreter.
 *  - The path is checked: on AMD the LDS holds only the shared tiles (no
 *    score tile, no row fragments); on NVIDIA the flash attention PTX has
 *    at most 4 bar.sync (9 before), shfl.sync.bfly for the reductions, and
 *    ptxas accepts it for sm_80 and sm_90a. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amd.h"
#include "dtype.h"
#include "emu.h"
#include "interp.h"
#include "lower.h"
#include "ptx.h"
#include "util.h"
#include "testutil.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942"};

typedef struct {
	const char *name;
	double v;
} Scalar;

typedef struct {
	const char *label;
	const char *src;   /* kernel text, or NULL for examples/<file> */
	const char *file;
	Define defs[3];
	int ndefs;
	Scalar sc[2];      /* scalar arguments by name (others: 0) */
	int lds;           /* expected LDS bytes on every AMD target */
	int maxbar;        /* at most this many bar.sync in the PTX (-1: not checked) */
} Case;

static Module *load(const Case *k, Diag *d)
{
	char *text = NULL;
	size_t len = 0;
	if (k->file) {
		const char *root = getenv("TILEASM_SRCDIR");
		cr_assert(root, "TILEASM_SRCDIR not set (run through meson test)");
		char path[512];
		snprintf(path, sizeof path, "%s/examples/%s", root, k->file);
		text = read_file(path, &len);
		cr_assert(text, "cannot read %s", path);
	} else {
		text = strdup(k->src);
		len = strlen(text);
	}
	Module *m = ir_parse(k->label, text, len, d);
	free(text);
	cr_assert(m, "%s: %s", k->label, diag_text(d));
	cr_assert_eq(ir_specialize(m, k->defs, k->ndefs, d), 0, "%s: %s", k->label, diag_text(d));
	cr_assert_eq(ir_verify(m, d), 0, "%s: %s", k->label, diag_text(d));
	return m;
}

static uint32_t rng;
static double rnd(void)
{
	rng = rng * 1664525u + 1013904223u;
	return ((double)(rng >> 8) / (double)(1u << 24)) * 4.0 - 2.0; /* -2 .. 2 */
}

static double get(DType t, const void *p, size_t i)
{
	switch (t) {
	case DT_F16: return dt_f16_to_double(((const uint16_t *)p)[i]);
	case DT_BF16: return dt_bf16_to_double(((const uint16_t *)p)[i]);
	default: return ((const float *)p)[i];
	}
}

static void set(DType t, void *p, size_t i, double v)
{
	switch (t) {
	case DT_F16: ((uint16_t *)p)[i] = dt_f16_from_double(v); break;
	case DT_BF16: ((uint16_t *)p)[i] = dt_bf16_from_double(v); break;
	default: ((float *)p)[i] = (float)v; break;
	}
}

/* Runs case k on the interpreter and on the emulator for every AMD target;
 * every tensor must agree (relative tolerance: sums in another order,
 * exp2 approximations). */
static void run_case(const Case *k)
{
	Diag d;
	diag_init(&d);
	Module *m = load(k, &d);
	const Kernel *kn = &m->kernels.data[0];
	int na = kn->nargs;
	InterpArg *args = calloc((size_t)na, sizeof *args);
	void **init = calloc((size_t)na, sizeof *init);
	rng = 99;
	for (int i = 0; i < na; i++) {
		if (kn->args[i].buf < 0) {
			const char *nm = m->vars.data[kn->args[i].var].name;
			for (int s = 0; s < 2; s++)
				if (k->sc[s].name && !strcmp(k->sc[s].name, nm))
					args[i].fval = k->sc[s].v, args[i].ival = (int64_t)k->sc[s].v;
			continue;
		}
		const Buffer *b = &m->bufs.data[kn->args[i].buf];
		size_t n = (size_t)ir_buf_elems(m, b);
		args[i].bytes = n * (size_t)dtype_bytes((DType)b->dtype);
		args[i].data = malloc(args[i].bytes + 16);
		init[i] = malloc(args[i].bytes + 16);
		for (size_t e = 0; e < n; e++)
			set((DType)b->dtype, args[i].data, e, rnd());
		memcpy(init[i], args[i].data, args[i].bytes);
	}
	cr_assert_eq(interp_run(m, 0, args, &d), 0, "%s: %s", k->label, diag_text(&d));
	int64_t vals[16] = {0};
	uint32_t grid[3] = {1, 1, 1};
	cr_assert_eq(ir_grid(m, 0, vals, grid), 0);
	for (int t = 0; t < 3; t++) {
		Target tg;
		cr_assert_eq(target_parse(targets[t], &tg), 0);
		AmdOutput out;
		memset(&out, 0, sizeof out);
		int rc = amd_compile(m, &tg, &out, &d);
		cr_assert_eq(rc, 0, "%s %s: %s", k->label, targets[t], diag_text(&d));
		const AmdKernelInfo *ki = &out.kernels[0];
		if (k->lds >= 0)
			cr_expect_eq(ki->lds_bytes, k->lds, "%s %s: %d LDS bytes, want %d (the score tile and the row "
				     "fragments in registers)", k->label, targets[t], ki->lds_bytes, k->lds);
		EmuDevice *dev = emu_create(tg.id);
		cr_assert(dev);
		cr_assert_eq(emu_load(dev, out.code_object, out.code_object_len, &d), 0, "%s", diag_text(&d));
		uint8_t *karg = calloc(1, ki->kernarg_size + 8);
		uint64_t *addr = calloc((size_t)na, sizeof *addr);
		for (int i = 0; i < na; i++) {
			if (kn->args[i].buf < 0) {
				const Var *v = &m->vars.data[kn->args[i].var];
				float f = (float)args[i].fval;
				int32_t n = (int32_t)args[i].ival;
				memcpy(karg + ki->param_offset[i], v->type == DT_F32 ? (void *)&f : (void *)&n, 4);
				continue;
			}
			addr[i] = emu_alloc(dev, args[i].bytes + 16);
			cr_assert(addr[i]);
			cr_assert_eq(emu_write(dev, addr[i], init[i], args[i].bytes, &d), 0, "%s", diag_text(&d));
			memcpy(karg + ki->param_offset[i], &addr[i], 8);
		}
		uint32_t block[3] = {(uint32_t)ki->threads, 1, 1};
		cr_assert_eq(emu_launch(dev, ki->name, grid, block, karg, ki->kernarg_size, 0, &d), 0, "%s %s: %s",
			     k->label, targets[t], diag_text(&d));
		for (int i = 0; i < na; i++) {
			if (kn->args[i].buf < 0)
				continue;
			const Buffer *b = &m->bufs.data[kn->args[i].buf];
			DType dt = (DType)b->dtype;
			void *got = malloc(args[i].bytes + 16);
			cr_assert_eq(emu_read(dev, addr[i], got, args[i].bytes, &d), 0, "%s", diag_text(&d));
			size_t n = args[i].bytes / (size_t)dtype_bytes(dt);
			double tol = dt == DT_F32 ? 1e-4 : 1e-2;
			for (size_t e = 0; e < n; e++) {
				double w = get(dt, args[i].data, e), g = get(dt, got, e);
				bool ok = (isnan(w) && isnan(g)) || w == g || fabs(w - g) <= tol * (1 + fabs(w));
				cr_assert(ok, "%s %s: %s[%zu] = %.9g, the interpreter says %.9g", k->label, targets[t], b->name,
					  e, g, w);
			}
			free(got);
		}
		free(addr);
		free(karg);
		emu_destroy(dev);
		amd_output_free(&out);
	}
	for (int i = 0; i < na; i++)
		free(args[i].data), free(init[i]);
	free(args);
	free(init);
	ir_module_free(m);
	diag_free(&d);
}

/* The PTX for sm_80 and sm_90a: the path's marks, and ptxas accepts it. */
static void ptx_case(const Case *k)
{
	struct stat st;
	cr_assert(stat(PTXAS, &st) == 0, PTXAS " is missing: install the CUDA toolkit (CI needs ptxas)");
	Diag d;
	diag_init(&d);
	Module *m = load(k, &d);
	static const ta_target tt[] = {TA_TARGET_SM80, TA_TARGET_SM90A};
	for (int t = 0; t < 2; t++) {
		Target tg = {.id = tt[t]};
		StrBuf sb = {0};
		cr_assert_eq(ptx_compile(m, &tg, &sb, NULL, &d), 0, "%s: %s", k->label, diag_text(&d));
		const char *p = sb.buf;
		if (k->maxbar >= 0) {
			cr_expect_leq(count(p, "bar.sync"), k->maxbar, "%s: %d bar.sync", k->label, count(p, "bar.sync"));
			cr_expect_geq(count(p, "shfl.sync.bfly"), 4, "%s: no butterfly reductions", k->label);
		}
		char in[] = "/tmp/tileasm-fa-XXXXXX";
		int fd = mkstemp(in);
		cr_assert(fd >= 0);
		cr_assert(write(fd, p, strlen(p)) == (ssize_t)strlen(p));
		close(fd);
		char cmd[512];
		snprintf(cmd, sizeof cmd, PTXAS " -arch=%s %s -o /dev/null 2>&1", t ? "sm_90a" : "sm_80", in);
		FILE *f = popen(cmd, "r");
		cr_assert(f);
		char log[4096];
		size_t n = fread(log, 1, sizeof log - 1, f);
		log[n] = 0;
		int rc = pclose(f);
		unlink(in);
		cr_expect_eq(rc, 0, "%s: ptxas: %s", k->label, log);
		sb_free(&sb);
	}
	ir_module_free(m);
	diag_free(&d);
}

/* A gemm result reduced into row fragments: max and sum with
 * clear=false (after fill), absmax, parallel (i) arithmetic on the rows, a
 * copy between row fragments, and the rows read back in the tile's
 * parallel loop.  64 x 64 over 128 threads. */
static const char rows_src[] =
	"kernel rows(A: f16[M, 32], B: f16[64, 32], Y: f32[M, 64]) grid(ceildiv(M, 64)) threads(128) {\n"
	"  A_s = shared f16[64, 32]\n  B_s = shared f16[64, 32]\n  C_f = fragment f32[64, 64]\n"
	"  mx = fragment f32[64]\n  sm = fragment f32[64]\n  t = fragment f32[64]\n  u = fragment f32[64]\n"
	"  copy(A[bx * 64, 0], A_s)\n  copy(B[0, 0], B_s)\n  fill(mx, 0.25)\n  fill(sm, 1.0)\n"
	"  gemm(A_s, B_s, C_f, transpose_b=true, clear=true)\n"
	"  reduce_max(C_f, mx, dim=1, clear=false)\n  reduce_sum(C_f, sm, dim=1, clear=false)\n"
	"  reduce_absmax(C_f, t, dim=1)\n"
	"  parallel (i) in (64) {\n    let w = sm[i] * 0.5\n    sm[i] = w - mx[i] + t[i]\n  }\n"
	"  copy(sm, u)\n"
	"  parallel (i, j) in (64, 64) {\n    C_f[i, j] = C_f[i, j] - mx[i] + u[i] * 0.001\n  }\n"
	"  copy(C_f, Y[bx * 64, 0])\n}\n";

/* A 32 x 128 tile over 64 threads (one wave on gfx90a/gfx942, two warps
 * on NVIDIA/gfx1100: where a row's column tiles lie in two warps the rows
 * stay in shared memory), min and abssum, a softmax-like rescale. */
static const char wide_src[] =
	"kernel wide(A: f16[M, 16], B: f16[16, 128], Y: f32[M, 128]) grid(ceildiv(M, 32)) threads(64) {\n"
	"  A_s = shared f16[32, 16]\n  B_s = shared f16[16, 128]\n  C_f = fragment f32[32, 128]\n"
	"  mn = fragment f32[32]\n  s = fragment f32[32]\n"
	"  copy(A[bx * 32, 0], A_s)\n  copy(B[0, 0], B_s)\n  clear(s)\n"
	"  gemm(A_s, B_s, C_f, clear=true)\n"
	"  reduce_min(C_f, mn, dim=1)\n"
	"  parallel (i, j) in (32, 128) {\n    C_f[i, j] = exp((mn[i] - C_f[i, j]) * 0.1)\n  }\n"
	"  reduce_abssum(C_f, s, dim=1, clear=false)\n"
	"  parallel (i, j) in (32, 128) {\n    C_f[i, j] = C_f[i, j] / s[i]\n  }\n"
	"  copy(C_f, Y[bx * 32, 0])\n}\n";

/* Flash attention: Q_s, K_s, V_s, P_s (4 x 8 KiB) are the only LDS. */
#define FA_LDS 32768
static const Case cases[] = {
	{"fa S=130 causal", NULL, "flash_attention_fwd.tile", {{"S", 130}}, 1, {{"scale", 0.125}, {"causal", 1}}, FA_LDS, 4},
	{"fa S=130", NULL, "flash_attention_fwd.tile", {{"S", 130}}, 1, {{"scale", 0.125}, {"causal", 0}}, FA_LDS, 4},
	{"fa S=77 causal", NULL, "flash_attention_fwd.tile", {{"S", 77}}, 1, {{"scale", 0.3}, {"causal", 1}}, FA_LDS, 4},
	{"fa S=200", NULL, "flash_attention_fwd.tile", {{"S", 200}}, 1, {{"scale", 0.125}, {"causal", 0}}, FA_LDS, 4},
	{"rows M=100", rows_src, NULL, {{"M", 100}}, 1, {{0}}, 8192, 3},
	{"rows M=64", rows_src, NULL, {{"M", 64}}, 1, {{0}}, 8192, 3},
	{"wide M=45", wide_src, NULL, {{"M", 45}}, 1, {{0}}, -1, -1},
};
#define NCASES (sizeof cases / sizeof cases[0])

Test(fa, kernels_match_the_interpreter_on_the_emulator, .timeout = 120)
{
	for (size_t i = 0; i < NCASES; i++)
		run_case(&cases[i]);
}

Test(fa, ptx_takes_the_path_and_passes_ptxas, .timeout = 120)
{
	for (size_t i = 0; i < NCASES; i++)
		ptx_case(&cases[i]);
}
