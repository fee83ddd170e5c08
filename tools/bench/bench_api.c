/* bench_api.c — embedding-API latency: ta_compile_source per example and
 * target (median and p99 of repeated cold compiles in a fresh context), and
 * the latency of a cache hit.
 *
 *   build/tools/bench/bench_api [examples-dir] [repeats]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tileasm.h"
#include "util.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int cmp_s(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "examples";
	int reps = argc > 2 ? atoi(argv[2]) : 200;
	if (reps < 2)
		reps = 2;
	static const char *targets[] = {"sm_80", "sm_90a", "gfx1100", "gfx90a", "gfx942"};
	char *names[64];
	int n = 0;
	DIR *dp = opendir(dir);
	if (!dp) {
		fprintf(stderr, "bench_api: cannot open %s\n", dir);
		return 1;
	}
	struct dirent *de;
	while ((de = readdir(dp)) && n < 64) {
		size_t l = strlen(de->d_name);
		if (l > 5 && !strcmp(de->d_name + l - 5, ".tile"))
			names[n++] = strdup(de->d_name);
	}
	closedir(dp);
	qsort(names, (size_t)n, sizeof *names, cmp_s);
	double *t = malloc((size_t)reps * sizeof *t);
	printf("%-26s %-8s %12s %12s %12s\n", "example", "target", "median us", "p99 us", "hit us");
	for (int e = 0; e < n; e++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, names[e]);
		size_t len;
		char *text = read_file(path, &len);
		if (!text)
			continue;
		for (size_t ti = 0; ti < TA_ARRAY_LEN(targets); ti++) {
			int ok = 1;
			for (int r = 0; r < reps && ok; r++) {
				ta_ctx *ctx = ta_ctx_create();
				ta_binary *b = NULL;
				double t0 = now_us();
				ok = ta_compile_source(ctx, path, text, len, targets[ti], &b) == TA_OK;
				t[r] = now_us() - t0;
				ta_binary_release(b);
				ta_ctx_destroy(ctx);
			}
			if (!ok) {
				printf("%-26s %-8s %12s\n", names[e], targets[ti], "unsupported");
				continue;
			}
			qsort(t, (size_t)reps, sizeof *t, cmp_d);
			double med = t[reps / 2], p99 = t[(int)(reps * 0.99)];
			/* Cache hits: one miss, then timed hits. */
			ta_ctx *ctx = ta_ctx_create();
			ta_ctx_set_cache(ctx, 16);
			ta_binary *b = NULL;
			ta_compile_source(ctx, path, text, len, targets[ti], &b);
			ta_binary_release(b);
			for (int r = 0; r < reps; r++) {
				double t0 = now_us();
				ta_compile_source(ctx, path, text, len, targets[ti], &b);
				t[r] = now_us() - t0;
				ta_binary_release(b);
			}
			ta_ctx_destroy(ctx);
			qsort(t, (size_t)reps, sizeof *t, cmp_d);
			printf("%-26s %-8s %12.1f %12.1f %12.2f\n", names[e], targets[ti], med, p99, t[reps / 2]);
		}
		free(text);
	}
	for (int e = 0; e < n; e++)
		free(names[e]);
	free(t);
	return 0;
}
