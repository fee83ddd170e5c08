/* bench_scale.c — compile time and memory as kernels grow along one axis.
 *
 *   bench_scale [--shape S] [--target T] [--max-insns N] [--max-cpu SEC] [--no-peer]
 *   bench_scale --one SHAPE N TARGET        (one compile; for tools/bench/scale_callgrind.sh)
 *
 * For each growth shape (generators below) and target, the size parameter n
 * doubles until a compile emits at least --max-insns instructions (default
 * 100,000), takes more than --max-cpu seconds (default 10), or fails.  Each
 * size runs in a forked child (its peak memory is its own, and a pass that
 * crashes or runs away ends only that child).  Printed per size: emitted
 * instructions (AMD: machine instructions; PTX: instruction lines), CPU time
 * of parse + verify + compile, microseconds per emitted instruction, and the
 * growth of the child's peak resident set during the compile in bytes per
 * emitted instruction.  Per shape and target: the fitted exponent of CPU time
 * against n and against emitted instructions (least squares on log-log over
 * the four largest sizes), and of emitted instructions against n.
 * With a peer (clang-19 -O3, OpenCL) the same shape is compiled for the AMD
 * target where an OpenCL equivalent exists, wall time of the whole process.
 *
 * CPU time is noisy on a shared machine; scale_callgrind.sh gives the
 * deterministic figure (instructions executed per emitted instruction) with
 * this program's --one mode, which counts only the compile when run under
 * callgrind (--collect-atstart=no). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "amd.h"
#include "api.h"
#include "ptx.h"
#include "tileasm.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT
#endif

/* ---- generators: Tile IR text for size n ---- */

static const char head256[] = "    grid(ceildiv(N, 256)) threads(256) {\n";

/* bench_compile's synthetic kernel: n sequential parallel loops, each a
 * dependent step on the same fragment. */
static void gen_loops(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel loops(A: f32[N], B: f32[N], C: f32[N])\n%s", head256);
	sb_puts(sb, "  A_f = fragment f32[256]\n  B_f = fragment f32[256]\n"
		    "  copy(A[bx * 256], A_f)\n  copy(B[bx * 256], B_f)\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  parallel (i) in (256) {\n    B_f[i] = B_f[i] * A_f[i] + %d.5\n  }\n", r % 7);
	sb_puts(sb, "  copy(B_f, C[bx * 256])\n}\n");
}

/* n fragments computed first and summed last: n values live across the
 * body (register pressure grows with n). */
static void gen_buffers(StrBuf *sb, int n)
{
	sb_puts(sb, "kernel buffers(A: f32[N], C: f32[N])\n    grid(ceildiv(N, 16)) threads(256) {\n");
	sb_puts(sb, "  A_f = fragment f32[16]\n  copy(A[bx * 16], A_f)\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  F%d = fragment f32[16]\n  parallel (i) in (16) {\n    F%d[i] = A_f[i] * %d.5\n  }\n", r, r,
			  r % 7);
	sb_puts(sb, "  S = fragment f32[16]\n  clear(S)\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  parallel (i) in (16) {\n    S[i] = S[i] * 0.5 + F%d[i]\n  }\n", r);
	sb_puts(sb, "  copy(S, C[bx * 16])\n}\n");
}

/* n nested serial loops (trip count from an argument), a step at each level.
 * The language allows 256 levels of nesting, so n stays below that. */
static void gen_nest(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel nest(A: f32[N], C: f32[N], T: i32)\n%s", head256);
	sb_puts(sb, "  S = fragment f32[256]\n  copy(A[bx * 256], S)\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  serial j%d in 0 .. T {\n  parallel (i) in (256) {\n    S[i] = S[i] * 0.5 + %d.5\n  }\n",
			  r, r % 7);
	for (int r = 0; r < n; r++)
		sb_puts(sb, "  }\n");
	sb_puts(sb, "  copy(S, C[bx * 256])\n}\n");
}

/* An else-if chain of n arms on a uniform condition. */
static void gen_elif(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel elif(A: f32[N], C: f32[N])\n%s", head256);
	sb_puts(sb, "  S = fragment f32[256]\n  copy(A[bx * 256], S)\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  %sif bx == %d {\n    parallel (i) in (256) {\n      S[i] = S[i] * 0.5 + %d.5\n    }\n  }",
			  r ? " else " : "", r, r % 7);
	sb_puts(sb, "\n  copy(S, C[bx * 256])\n}\n");
}

/* n sequential ifs (the long if chain). */
static void gen_ifseq(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel ifseq(A: f32[N], C: f32[N])\n%s", head256);
	sb_puts(sb, "  S = fragment f32[256]\n  copy(A[bx * 256], S)\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  if bx %% %d == 0 {\n    parallel (i) in (256) {\n      S[i] = S[i] * 0.5 + %d.5\n    }\n  }\n",
			  r + 2, r % 7);
	sb_puts(sb, "  copy(S, C[bx * 256])\n}\n");
}

/* n nested per-thread ifs, a global store at each level (exec masks). */
static void gen_ifnest(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel ifnest(C: f32[N])\n%s", head256);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  if tx < %d {\n  C[bx * 256 + tx] = C[bx * 256 + tx] * 0.5 + %d.5\n", 255 - r % 250, r % 7);
	for (int r = 0; r < n; r++)
		sb_puts(sb, "  }\n");
	sb_puts(sb, "}\n");
}

/* n unused lets in front of a vector add. */
static void gen_lets(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel lets(A: f32[N], C: f32[N])\n%s", head256);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  let v%d = bx * %d + %d\n", r, r % 13 + 1, r);
	sb_puts(sb, "  S = fragment f32[256]\n  copy(A[bx * 256], S)\n  copy(S, C[bx * 256])\n}\n");
}

/* n vector-add kernels in one file. */
static void gen_kernels(StrBuf *sb, int n)
{
	for (int r = 0; r < n; r++)
		sb_printf(sb,
			  "kernel k%d(A: f32[N], B: f32[N], C: f32[N])\n%s"
			  "  A_f = fragment f32[256]\n  B_f = fragment f32[256]\n"
			  "  copy(A[bx * 256], A_f)\n  copy(B[bx * 256], B_f)\n"
			  "  parallel (i) in (256) {\n    B_f[i] = B_f[i] + A_f[i] * %d.5\n  }\n"
			  "  copy(B_f, C[bx * 256])\n}\n",
			  r, head256, r % 7);
}

/* One parallel loop with n dependent element-wise statements. */
static void gen_straight(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel straight(A: f32[N], B: f32[N], C: f32[N])\n%s", head256);
	sb_puts(sb, "  A_f = fragment f32[256]\n  B_f = fragment f32[256]\n"
		    "  copy(A[bx * 256], A_f)\n  copy(B[bx * 256], B_f)\n  parallel (i) in (256) {\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "    B_f[i] = B_f[i] * A_f[i] + %d.5\n", r % 7);
	sb_puts(sb, "  }\n  copy(B_f, C[bx * 256])\n}\n");
}

/* A gemm whose register accumulator grows: C_f f32[64, 16 n] over 64
 * threads is 16 n accumulators per thread (the register file bounds n). */
static void gen_tile(StrBuf *sb, int n)
{
	sb_printf(sb, "kernel tile(A: f16[M, K], B: f16[K, N], C: f32[M, N])\n"
		      "    grid(ceildiv(N, %d), ceildiv(M, 64)) threads(64) {\n", 16 * n);
	sb_printf(sb, "  A_s = shared f16[64, 32]\n  B_s = shared f16[32, %d]\n  C_f = fragment f32[64, %d]\n", 16 * n,
		  16 * n);
	sb_printf(sb, "  clear(C_f)\n  serial ko in 0 .. ceildiv(K, 32) {\n    copy(A[by * 64, ko * 32], A_s)\n"
		      "    copy(B[ko * 32, bx * %d], B_s)\n    gemm(A_s, B_s, C_f)\n  }\n  copy(C_f, C[by * 64, bx * %d])\n}\n",
		  16 * n, 16 * n);
}

/* ---- OpenCL peers (clang-19 -O3), where the shape has one ---- */

static const char cl_head[] = "__kernel __attribute__((reqd_work_group_size(256,1,1)))\n";

static void cl_loops(StrBuf *sb, int n) /* the same chain as gen_loops, per thread */
{
	sb_printf(sb, "%svoid loops(__global const float *A, __global const float *B, __global float *C) {\n"
		      "  int g = get_global_id(0);\n  float a = A[g], b = B[g];\n", cl_head);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  b = b * a + %d.5f;\n", r % 7);
	sb_puts(sb, "  C[g] = b;\n}\n");
}

static void cl_buffers(StrBuf *sb, int n)
{
	sb_printf(sb, "%svoid buffers(__global const float *A, __global float *C) {\n  int g = get_global_id(0);\n",
		  cl_head);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  float f%d = A[g] * %d.5f;\n", r, r % 7);
	sb_puts(sb, "  float s = 0;\n");
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  s = s * 0.5f + f%d;\n", r);
	sb_puts(sb, "  C[g] = s;\n}\n");
}

static void cl_nest(StrBuf *sb, int n)
{
	sb_printf(sb, "%svoid nest(__global const float *A, __global float *C, int T) {\n"
		      "  int g = get_global_id(0);\n  float s = A[g];\n", cl_head);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  for (int j%d = 0; j%d < T; j%d++) {\n  s = s * 0.5f + %d.5f;\n", r, r, r, r % 7);
	for (int r = 0; r < n; r++)
		sb_puts(sb, "  }\n");
	sb_puts(sb, "  C[g] = s;\n}\n");
}

static void cl_elif(StrBuf *sb, int n)
{
	sb_printf(sb, "%svoid elif(__global const float *A, __global float *C) {\n"
		      "  int g = get_global_id(0), b = get_group_id(0);\n  float s = A[g];\n", cl_head);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  %sif (b == %d) s = s * 0.5f + %d.5f;\n", r ? "else " : "", r, r % 7);
	sb_puts(sb, "  C[g] = s;\n}\n");
}

static void cl_ifseq(StrBuf *sb, int n)
{
	sb_printf(sb, "%svoid ifseq(__global const float *A, __global float *C) {\n"
		      "  int g = get_global_id(0), b = get_group_id(0);\n  float s = A[g];\n", cl_head);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  if (b %% %d == 0) s = s * 0.5f + %d.5f;\n", r + 2, r % 7);
	sb_puts(sb, "  C[g] = s;\n}\n");
}

static void cl_ifnest(StrBuf *sb, int n)
{
	sb_printf(sb, "%svoid ifnest(__global float *C) {\n  int g = get_global_id(0), t = get_local_id(0);\n", cl_head);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  if (t < %d) {\n  C[g] = C[g] * 0.5f + %d.5f;\n", 255 - r % 250, r % 7);
	for (int r = 0; r < n; r++)
		sb_puts(sb, "  }\n");
	sb_puts(sb, "}\n");
}

static void cl_lets(StrBuf *sb, int n)
{
	sb_printf(sb, "%svoid lets(__global const float *A, __global float *C) {\n  int b = get_group_id(0);\n",
		  cl_head);
	for (int r = 0; r < n; r++)
		sb_printf(sb, "  const int v%d = b * %d + %d;\n", r, r % 13 + 1, r);
	sb_puts(sb, "  C[get_global_id(0)] = A[get_global_id(0)];\n}\n");
}

static void cl_kernels(StrBuf *sb, int n)
{
	for (int r = 0; r < n; r++)
		sb_printf(sb,
			  "%svoid k%d(__global const float *A, __global const float *B, __global float *C) {\n"
			  "  int g = get_global_id(0);\n  C[g] = B[g] + A[g] * %d.5f;\n}\n",
			  cl_head, r, r % 7);
}

/* The same gemm with a 4 x n micro-tile of accumulators per thread. */
static void cl_tile(StrBuf *sb, int n)
{
	sb_printf(sb, "__kernel __attribute__((reqd_work_group_size(64,1,1)))\n"
		      "void tile(__global const half *A, __global const half *B, __global float *C, int M, int N, int K) {\n"
		      "  int t = get_local_id(0), r0 = get_group_id(1) * 64 + t, c0 = get_group_id(0) * %d;\n"
		      "  float acc[%d];\n"
		      "  #pragma unroll\n  for (int j = 0; j < %d; j++) acc[j] = 0;\n"
		      "  for (int k = 0; k < K; k++) {\n    float a = vload_half(r0 * K + k, A);\n"
		      "    #pragma unroll\n    for (int j = 0; j < %d; j++) acc[j] += a * vload_half(k * N + c0 + j, B);\n  }\n"
		      "  #pragma unroll\n  for (int j = 0; j < %d; j++) C[r0 * N + c0 + j] = acc[j];\n}\n",
		  16 * n, 16 * n, 16 * n, 16 * n, 16 * n);
}

typedef struct {
	const char *name;
	void (*gen)(StrBuf *, int);
	void (*cl)(StrBuf *, int); /* NULL: no OpenCL peer */
	int n0, nmax;              /* first size; largest the language allows */
	const char *what;
} Shape;

static const Shape shapes[] = {
	{"loops", gen_loops, cl_loops, 8, 1 << 20, "sequential parallel loops (bench_compile's synthetic kernel)"},
	{"buffers", gen_buffers, cl_buffers, 8, 1 << 20, "live fragments, computed first and summed last"},
	{"nest", gen_nest, cl_nest, 4, 250, "nested serial loops (the language allows 256 levels)"},
	{"elif", gen_elif, cl_elif, 4, 1 << 20, "else-if chain on bx"},
	{"ifseq", gen_ifseq, cl_ifseq, 8, 1 << 20, "sequential uniform ifs (a long if chain)"},
	{"ifnest", gen_ifnest, cl_ifnest, 4, 250, "nested per-thread ifs (tx), a store at each level"},
	{"lets", gen_lets, cl_lets, 64, 1 << 22, "unused lets before a vector add"},
	{"kernels", gen_kernels, cl_kernels, 8, 1 << 20, "vector-add kernels in one file"},
	{"straight", gen_straight, cl_loops, 8, 1 << 20, "straight-line element-wise statements in one parallel loop"},
	{"tile", gen_tile, cl_tile, 1, 1 << 10, "gemm accumulator tile f32[64, 16 n] over 64 threads: 16 n registers per thread"},
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

static const char *const all_targets[] = {"gfx1100", "gfx90a", "gfx942", "sm_80", "sm_90a"};

/* ---- one compile ---- */

typedef struct {
	int ok;
	long insns;
	double cpu_s;     /* parse + verify + compile */
	long rss_grow_kb; /* peak RSS growth during the compile */
	char err[200];
} Result;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* PTX instructions: lines that are not directives, labels, braces or comments. */
static long ptx_count(const char *s)
{
	long n = 0;
	for (const char *p = s; *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len && *p != '.' && *p != '/' && *p != '{' && *p != '}' && p[len - 1] == ';')
			n++;
		p += len + (e != NULL);
	}
	return n;
}

static void compile_once(const char *text, const char *tname, Result *r)
{
	memset(r, 0, sizeof *r);
	Target t;
	if (target_parse(tname, &t)) {
		snprintf(r->err, sizeof r->err, "unknown target %s", tname);
		return;
	}
	long rss0 = maxrss_kb();
	double c0 = cpu_now();
	CALLGRIND_TOGGLE_COLLECT;
	ta_ctx *ctx = ta_ctx_create();
	ta_module *m = NULL;
	if (!ctx || ta_parse(ctx, "gen.tile", text, strlen(text), &m) != TA_OK) {
		CALLGRIND_TOGGLE_COLLECT;
		snprintf(r->err, sizeof r->err, "%s", ctx ? ta_ctx_diagnostics(ctx) : "out of memory");
		ta_ctx_destroy(ctx);
		return;
	}
	Diag d;
	diag_init(&d);
	int rc;
	if (target_is_amd(t.id)) {
		AmdOutput ao;
		memset(&ao, 0, sizeof ao);
		rc = amd_compile(ta_module_ir(m), &t, &ao, &d);
		for (int k = 0; k < ao.nkernels; k++)
			r->insns += ao.kernels[k].ninsns;
		amd_output_free(&ao);
	} else {
		StrBuf sb = {0};
		PtxKernelInfo *info = NULL;
		rc = ptx_compile(ta_module_ir(m), &t, &sb, &info, &d);
		if (!rc)
			r->insns = ptx_count(sb.buf ? sb.buf : "");
		if (info)
			ptx_info_free(info, ta_module_kernel_count(m));
		sb_free(&sb);
	}
	CALLGRIND_TOGGLE_COLLECT;
	r->cpu_s = cpu_now() - c0;
	r->rss_grow_kb = maxrss_kb() - rss0;
	if (rc)
		snprintf(r->err, sizeof r->err, "%s", diag_text(&d));
	r->ok = !rc;
	for (char *p = r->err; *p; p++)
		if (*p == '\n')
			*p = *(p + 1) ? ' ' : 0;
	diag_free(&d);
	ta_module_destroy(m);
	ta_ctx_destroy(ctx);
}

static char *gen_text(const Shape *s, int n)
{
	StrBuf sb = {0};
	s->gen(&sb, n);
	return sb_take(&sb);
}

/* Runs one size in a child with a CPU limit; small compiles are repeated
 * (fresh each time) and the fastest taken. */
static void run_child(const Shape *s, int n, const char *tname, int max_cpu, Result *r)
{
	int fd[2];
	memset(r, 0, sizeof *r);
	if (pipe(fd)) {
		snprintf(r->err, sizeof r->err, "pipe failed");
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		struct rlimit rl = {(rlim_t)max_cpu + 1, (rlim_t)max_cpu + 2};
		setrlimit(RLIMIT_CPU, &rl);
		char *text = gen_text(s, n);
		/* Process CPU clocks here may advance in scheduler ticks, so small
		 * compiles repeat until 0.2 s have passed and the mean is taken. */
		Result best, one;
		double c0 = cpu_now();
		compile_once(text, tname, &best);
		int reps = 1;
		while (best.ok && cpu_now() - c0 < 0.2 && reps < 10000) {
			compile_once(text, tname, &one);
			reps++;
			if (!one.ok) {
				best = one;
				break;
			}
		}
		best.cpu_s = (cpu_now() - c0) / reps;
		free(text);
		ssize_t w = write(fd[1], &best, sizeof best);
		_exit(w == (ssize_t)sizeof best ? 0 : 1);
	}
	close(fd[1]);
	ssize_t got = pid > 0 ? read(fd[0], r, sizeof *r) : -1;
	close(fd[0]);
	int st = 0;
	if (pid > 0)
		waitpid(pid, &st, 0);
	if (got != (ssize_t)sizeof *r) {
		memset(r, 0, sizeof *r);
		if (WIFSIGNALED(st))
			snprintf(r->err, sizeof r->err, "%s", WTERMSIG(st) == SIGXCPU ? "over the CPU limit" : strsignal(WTERMSIG(st)));
		else
			snprintf(r->err, sizeof r->err, "child failed");
	}
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* clang-19 -O3 on the OpenCL peer for an AMD target: wall seconds, or -1. */
static double clang_peer(const Shape *s, int n, const char *tname)
{
	StrBuf sb = {0};
	s->cl(&sb, n);
	char *text = sb_take(&sb);
	char cl[64], obj[64], cmd[512];
	snprintf(cl, sizeof cl, "/tmp/bench_scale_%d.cl", (int)getpid());
	snprintf(obj, sizeof obj, "/tmp/bench_scale_%d.o", (int)getpid());
	double t = -1;
	if (text && !write_file_atomic(cl, text, strlen(text))) {
		snprintf(cmd, sizeof cmd,
			 "timeout 120 clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O3 -c %s "
			 "-o %s 2>/dev/null",
			 tname, cl, obj);
		double t0 = wall_now();
		if (system(cmd) == 0)
			t = wall_now() - t0;
	}
	free(text);
	remove(cl);
	remove(obj);
	return t;
}

/* Least-squares slope of log y against log x over the last k points. */
static double slope(const double *x, const double *y, int n, int k)
{
	int a = n > k ? n - k : 0;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int m = 0;
	for (int i = a; i < n; i++) {
		if (x[i] <= 0 || y[i] <= 0)
			continue;
		double lx = log(x[i]), ly = log(y[i]);
		sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m++;
	}
	double den = m * sxx - sx * sx;
	return m >= 2 && den > 0 ? (m * sxy - sx * sy) / den : NAN;
}

static const Shape *find_shape(const char *name)
{
	for (int i = 0; i < NSHAPES; i++)
		if (!strcmp(shapes[i].name, name))
			return &shapes[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const char *only_shape = NULL, *only_target = NULL;
	long max_insns = 100000;
	int max_cpu = 10, peer = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--one") && i + 3 < argc) {
			const Shape *s = find_shape(argv[i + 1]);
			if (!s) {
				fprintf(stderr, "unknown shape %s\n", argv[i + 1]);
				return 2;
			}
			char *text = gen_text(s, atoi(argv[i + 2]));
			Result r;
			compile_once(text, argv[i + 3], &r);
			free(text);
			printf("%s %s %s insns %ld cpu_ms %.3f rss_grow_kb %ld %s\n", s->name, argv[i + 2], argv[i + 3],
			       r.insns, r.cpu_s * 1e3, r.rss_grow_kb, r.ok ? "ok" : r.err);
			return r.ok ? 0 : 1;
		} else if (!strcmp(argv[i], "--gen") && i + 2 < argc) {
			const Shape *s = find_shape(argv[i + 1]);
			if (!s)
				return 2;
			char *text = gen_text(s, atoi(argv[i + 2]));
			fputs(text, stdout);
			free(text);
			return 0;
		} else if (!strcmp(argv[i], "--shape") && i + 1 < argc)
			only_shape = argv[++i];
		else if (!strcmp(argv[i], "--target") && i + 1 < argc)
			only_target = argv[++i];
		else if (!strcmp(argv[i], "--max-insns") && i + 1 < argc)
			max_insns = atol(argv[++i]);
		else if (!strcmp(argv[i], "--max-cpu") && i + 1 < argc)
			max_cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-peer"))
			peer = 0;
		else {
			fprintf(stderr, "usage: bench_scale [--shape S] [--target T] [--max-insns N] [--max-cpu SEC] "
					"[--no-peer] | --one SHAPE N TARGET | --gen SHAPE N\n");
			return 2;
		}
	}
	if (peer && system("command -v clang-19 >/dev/null 2>&1") != 0) {
		printf("# clang-19 not found: peer timing skipped\n");
		peer = 0;
	}
	printf("# bench_scale: CPU time of parse+verify+compile (mean of repeats up to 0.2 s), "
	       "max %ld emitted instructions, %d s CPU per compile\n", max_insns, max_cpu);
	printf("# exp(n), exp(insn): fitted exponent of CPU time vs the size parameter and vs emitted instructions; "
	       "size exp: emitted instructions vs n (4 largest sizes)\n");
	for (int si = 0; si < NSHAPES; si++) {
		const Shape *s = &shapes[si];
		if (only_shape && strcmp(only_shape, s->name))
			continue;
		printf("\n## %s: %s\n", s->name, s->what);
		for (int ti = 0; ti < 5; ti++) {
			const char *tn = all_targets[ti];
			if (only_target && strcmp(only_target, tn))
				continue;
			printf("%-8s %7s %9s %10s %9s %9s%s\n", tn, "n", "insns", "cpu ms", "us/insn", "B/insn",
			       peer && ti < 3 && s->cl ? "   clang ms" : "");
			double xs[64], ys[64], is[64];
			int np = 0;
			for (int n = s->n0; n <= s->nmax && np < 64; n = n * 2 > s->nmax && n < s->nmax ? s->nmax : n * 2) {
				Result r;
				run_child(s, n, tn, max_cpu, &r);
				if (!r.ok) {
					printf("%-8s %7d  stops: %.150s\n", "", n, r.err);
					break;
				}
				printf("%-8s %7d %9ld %10.3f %9.3f %9.0f", "", n, r.insns, r.cpu_s * 1e3,
				       r.insns ? r.cpu_s * 1e6 / r.insns : 0,
				       r.insns ? r.rss_grow_kb * 1024.0 / r.insns : 0);
				if (peer && ti < 3 && s->cl && r.cpu_s < max_cpu / 2.0) {
					double c = clang_peer(s, n, tn);
					if (c >= 0)
						printf("   %9.1f", c * 1e3);
					else
						printf("   %9s", "fail");
				}
				printf("\n");
				xs[np] = n, ys[np] = r.cpu_s, is[np] = (double)r.insns, np++;
				if (r.insns >= max_insns || r.cpu_s > max_cpu / 2.0 || n >= s->nmax)
					break;
			}
			printf("%-8s fit: exp(n) %.2f  exp(insn) %.2f  size exp %.2f\n", tn, slope(xs, ys, np, 4),
			       slope(is, ys, np, 4), slope(xs, is, np, 4));
		}
	}
	return 0;
}
