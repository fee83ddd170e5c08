/* bench_compile.c — AMD backend compile times.
 *
 *   bench_compile [SRCDIR] [--reps N]
 *
 * 1. Median wall time of amd_compile (Tile IR -> code object bytes, no
 *    file I/O) per example and target, with the median of each pass.
 * 2. Scaling: a synthetic kernel whose body is repeated 1x, 10x, 100x;
 *    time per emitted instruction should stay flat (no superlinear pass).
 * 3. Peer: clang-19 -O3 compiling an OpenCL GEMM-like kernel for the same
 *    targets, timed in the same run (skipped with a note if clang-19 is
 *    missing: this is a benchmark, not a test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "amd.h"
#include "api.h"
#include "api.h"
#include "tileasm.h"

/* Minor page faults so far: a fresh large allocation (glibc mmaps above
 * its threshold) costs one per 4 KiB page touched, which callgrind does not
 * show but the wall clock does. */
static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n ? v[n / 2] : 0;
}

typedef struct {
	double total, pass[AMD_PASS_COUNT];
	int ninsns;
	double faults; /* minor page faults per compile (mean) */
} Timing;

/* Compiles text reps times for target t; medians into *out.  0 or -1. */
static int time_compile(const char *name, const char *text, const Target *t, int reps, Timing *out)
{
	ta_ctx *ctx = ta_ctx_create();
	ta_module *m = NULL;
	if (!ctx || ta_parse(ctx, name, text, strlen(text), &m) != TA_OK) {
		fprintf(stderr, "%s: %s", name, ctx ? ta_ctx_diagnostics(ctx) : "out of memory\n");
		ta_ctx_destroy(ctx);
		return -1;
	}
	double *tot = calloc((size_t)reps, sizeof(double)), *pass[AMD_PASS_COUNT];
	for (int p = 0; p < AMD_PASS_COUNT; p++)
		pass[p] = calloc((size_t)reps, sizeof(double));
	int rc = 0;
	memset(out, 0, sizeof *out);
	long f0 = minflt();
	for (int r = 0; r < reps && !rc; r++) {
		AmdOutput ao;
		memset(&ao, 0, sizeof ao);
		Diag d;
		diag_init(&d);
		double t0 = now_ms();
		if (amd_compile(ta_module_ir(m), t, &ao, &d)) {
			fprintf(stderr, "%s (%s): %s", name, target_name(t->id), diag_text(&d));
			rc = -1;
		}
		tot[r] = now_ms() - t0;
		for (int p = 0; p < AMD_PASS_COUNT; p++)
			pass[p][r] = ao.pass_ms[p];
		out->ninsns = 0;
		for (int k = 0; k < ao.nkernels; k++)
			out->ninsns += ao.kernels[k].ninsns;
		amd_output_free(&ao);
		diag_free(&d);
	}
	if (!rc) {
		out->faults = (double)(minflt() - f0) / reps;
		out->total = median(tot, reps);
		for (int p = 0; p < AMD_PASS_COUNT; p++)
			out->pass[p] = median(pass[p], reps);
	}
	free(tot);
	for (int p = 0; p < AMD_PASS_COUNT; p++)
		free(pass[p]);
	ta_module_destroy(m);
	ta_ctx_destroy(ctx);
	return rc;
}

static const char *const examples[] = {"vector_add", "reduce_sum", "softmax", "rmsnorm", "layernorm",
				       "gemm", "gemm_bf16_tn", "mha_fwd"};
static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942"};

/* A kernel whose parallel body is a chain of `reps` dependent steps. */
static char *synthetic(int reps)
{
	StrBuf sb = {0};
	sb_puts(&sb, "kernel synth(A: f32[N], B: f32[N], C: f32[N])\n    grid(ceildiv(N, 256)) threads(256) {\n"
		     "  A_f = fragment f32[256]\n  B_f = fragment f32[256]\n"
		     "  copy(A[bx * 256], A_f)\n  copy(B[bx * 256], B_f)\n");
	for (int r = 0; r < reps; r++)
		sb_printf(&sb, "  parallel (i) in (256) {\n    B_f[i] = B_f[i] * A_f[i] + %d.5\n  }\n", r % 7);
	sb_puts(&sb, "  copy(B_f, C[bx * 256])\n}\n");
	return sb_take(&sb);
}

static const char peer_cl[] =
	"__kernel __attribute__((reqd_work_group_size(256,1,1)))\n"
	"void gemm(__global const float *A, __global const float *B, __global float *C, int M, int N, int K) {\n"
	"  __local float As[16][16], Bs[16][16];\n"
	"  int tx = __builtin_amdgcn_workitem_id_x() % 16, ty = __builtin_amdgcn_workitem_id_x() / 16;\n"
	"  int row = __builtin_amdgcn_workgroup_id_y() * 16 + ty, col = __builtin_amdgcn_workgroup_id_x() * 16 + tx;\n"
	"  float acc = 0;\n"
	"  for (int k0 = 0; k0 < K; k0 += 16) {\n"
	"    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0;\n"
	"    Bs[ty][tx] = (col < N && k0 + ty < K) ? B[(k0 + ty) * N + col] : 0;\n"
	"    __builtin_amdgcn_s_barrier();\n"
	"    for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];\n"
	"    __builtin_amdgcn_s_barrier();\n"
	"  }\n"
	"  if (row < M && col < N) C[row * N + col] = acc;\n"
	"}\n";

int main(int argc, char **argv)
{
	const char *src = getenv("TILEASM_SRCDIR");
	int reps = 21;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else
			src = argv[i];
	}
	if (!src)
		src = ".";
	if (reps < 1)
		reps = 1;
	printf("# amd_compile median of %d runs, ms (passes:", reps);
	for (int p = 0; p < AMD_PASS_COUNT; p++)
		printf(" %s", amd_pass_name[p]);
	printf(")\n");
	printf("%-22s %-8s %8s %7s %6s  %s\n", "example", "target", "total", "insns", "faults", "per pass");
	for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/examples/%s.tile", src, examples[e]);
		size_t len;
		char *text = read_file(path, &len);
		if (!text) {
			fprintf(stderr, "cannot read %s (pass the source directory)\n", path);
			return 1;
		}
		for (int t = 0; t < 3; t++) {
			Target tg;
			target_parse(targets[t], &tg);
			Timing tm;
			if (time_compile(path, text, &tg, reps, &tm))
				continue;
			printf("%-22s %-8s %8.3f %7d %6.0f ", examples[e], targets[t], tm.total, tm.ninsns, tm.faults);
			for (int p = 0; p < AMD_PASS_COUNT; p++)
				printf(" %.3f", tm.pass[p]);
			printf("\n");
		}
		free(text);
	}
	printf("\n# scaling: synthetic kernel, body repeated 1x/10x/100x (gfx942)\n");
	printf("%-6s %8s %8s %10s %6s  %s\n", "size", "ms", "insns", "us/insn", "faults", "per pass");
	for (int s = 1; s <= 100; s *= 10) {
		char *text = synthetic(s);
		Target tg;
		target_parse("gfx942", &tg);
		Timing tm;
		if (!time_compile("synthetic", text, &tg, reps > 5 ? 5 : reps, &tm))
		{
			printf("%-6d %8.3f %8d %10.3f %6.0f ", s, tm.total, tm.ninsns, tm.ninsns ? 1e3 * tm.total / tm.ninsns : 0,
			       tm.faults);
			for (int p = 0; p < AMD_PASS_COUNT; p++)
				printf(" %.3f", tm.pass[p]);
			printf("\n");
		}
		free(text);
	}
	printf("\n# peer: clang-19 -O3, OpenCL 16x16-tiled GEMM (one kernel), wall ms per compile\n");
	if (system("command -v clang-19 >/dev/null 2>&1") != 0) {
		printf("clang-19 not found: peer timing skipped\n");
		return 0;
	}
	const char *cl = "/tmp/tileasm_bench_peer.cl";
	if (write_file_atomic(cl, peer_cl, sizeof peer_cl - 1))
		return 1;
	for (int t = 0; t < 3; t++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd,
			 "clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O3 -c %s "
			 "-o /tmp/tileasm_bench_peer.o",
			 targets[t], cl);
		double v[5];
		int n = 0;
		for (int r = 0; r < 5; r++) {
			double t0 = now_ms();
			if (system(cmd) != 0)
				break;
			v[n++] = now_ms() - t0;
		}
		if (n)
			printf("%-8s %8.1f\n", targets[t], median(v, n));
	}
	remove(cl);
	remove("/tmp/tileasm_bench_peer.o");
	return 0;
}
