/* bench_isa.c — isa/ throughput: instructions encoded and decoded per second,
 * lines assembled per second, and the same file assembled by llvm-mc-19 in
 * the same run (medians of several runs).  Benchmarks may call LLVM; the
 * product never does.
 *
 *   bench_isa [--target=gfx942] [--repeat=N] [--runs=5] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "isa.h"
#include "variants.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	const char *tname = "gfx942";
	int repeat = 20, runs = 5;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--target=", 9))
			tname = argv[i] + 9;
		else if (!strncmp(argv[i], "--repeat=", 9))
			repeat = atoi(argv[i] + 9);
		else if (!strncmp(argv[i], "--runs=", 7))
			runs = atoi(argv[i] + 7);
		else {
			fprintf(stderr, "usage: bench_isa [--target=T] [--repeat=N] [--runs=N]\n");
			return 2;
		}
	}
	Target tg;
	if (target_parse(tname, &tg) || !target_is_amd(tg.id) || runs < 1 || runs > 99 || repeat < 1) {
		fprintf(stderr, "bench_isa: bad arguments\n");
		return 2;
	}
	ta_target t = tg.id;

	/* The instruction mix: every table entry, every variant. */
	VEC(IsaInsn) insns = {0};
	StrBuf text = {0};
	for (unsigned op = 0; op < ISA_NUM_OPS; op++)
		for (int v = 0; v < 8; v++) {
			IsaInsn in;
			uint8_t b[16];
			Diag d;
			diag_init(&d);
			if (isa_variant(t, op, v, &in) && isa_encode(t, &in, b, &d) > 0 && !vec_push(&insns, in)) {
				isa_print(t, &in, &text);
				sb_putc(&text, '\n');
			}
			diag_free(&d);
		}
	size_t n = insns.len;
	StrBuf file = {0};
	for (int r = 0; r < repeat; r++)
		sb_putn(&file, text.buf, text.len);
	size_t lines = n * (size_t)repeat;
	char path[] = "/tmp/bench-isa-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, file.buf, file.len) != (ssize_t)file.len) {
		perror("bench_isa");
		return 1;
	}
	close(fd);

	double enc[99], dec[99], as[99], mc[99];
	uint8_t(*bytes)[16] = malloc(n * 16);
	int *lens = malloc(n * sizeof *lens);
	volatile long sink = 0;
	for (int r = 0; r < runs; r++) {
		Diag d;
		diag_init(&d);
		double t0 = now();
		for (int k = 0; k < repeat; k++)
			for (size_t i = 0; i < n; i++)
				lens[i] = isa_encode(t, &insns.data[i], bytes[i], &d);
		enc[r] = (double)lines / (now() - t0);
		diag_free(&d);
		t0 = now();
		for (int k = 0; k < repeat; k++)
			for (size_t i = 0; i < n; i++) {
				IsaInsn o;
				sink += isa_decode(t, bytes[i], (size_t)lens[i], &o);
			}
		dec[r] = (double)lines / (now() - t0);

		SrcFile src = {"bench.s", file.buf, file.len};
		IsaAsmOptions opt = {t, NULL, NULL, NULL};
		IsaAsmOut out;
		diag_init(&d);
		t0 = now();
		int rc = isa_assemble(&opt, &src, &out, &d);
		as[r] = now() - t0;
		if (rc) {
			fprintf(stderr, "%s", diag_text(&d));
			return 1;
		}
		isa_asm_free(&out);
		diag_free(&d);

		char cmd[512];
		snprintf(cmd, sizeof cmd, "llvm-mc-19 -triple=amdgcn -mcpu=%s -filetype=obj %s -o /dev/null", target_name(t),
			 path);
		t0 = now();
		rc = system(cmd);
		mc[r] = now() - t0;
		if (rc) {
			fprintf(stderr, "bench_isa: llvm-mc-19 failed; comparison unavailable\n");
			mc[r] = 0;
		}
	}
	double me = median(enc, runs), md = median(dec, runs), ma = median(as, runs), mm = median(mc, runs);
	printf("bench_isa %s: %zu distinct instructions x %d = %zu lines (%zu bytes of text), median of %d runs\n",
	       target_name(t), n, repeat, lines, file.len, runs);
	printf("  isa_encode:    %10.0f instructions/s\n", me);
	printf("  isa_decode:    %10.0f instructions/s\n", md);
	printf("  isa_assemble:  %10.0f lines/s   (%.1f ms)\n", (double)lines / ma, ma * 1e3);
	if (mm > 0)
		printf("  llvm-mc-19:    %10.0f lines/s   (%.1f ms, process included)\n  ratio: tileasm is %.1fx faster than llvm-mc-19\n",
		       (double)lines / mm, mm * 1e3, mm / ma);
	unlink(path);
	free(bytes);
	free(lens);
	vec_free(&insns);
	sb_free(&text);
	sb_free(&file);
	return 0;
}
