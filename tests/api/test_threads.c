/* test_threads.c — 8 threads, each with its own context, compile every
 * example for every target while the main thread does the same; all bytes
 * must match the single-threaded result.  Then 4 threads, each with its own
 * context and emulator device, run vector_add (gfx942 and gfx1100, whose
 * VOPD pairs use the second result buffer) and check every element: two
 * devices in two threads once shared a static scratch result in the VALU
 * (issue 18.10).  A plain program (not Criterion) so that it runs under
 * ThreadSanitizer, whose shadow memory Criterion's fixed-address arena
 * collides with. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "emu.h"
#include "tileasm.h"
#include "util.h"

#define MAX_EX 32
#define NT 5
static const char *targets[NT] = {"sm_80", "sm_90a", "gfx1100", "gfx90a", "gfx942"};
static char *name[MAX_EX], *text[MAX_EX];
static size_t len[MAX_EX];
static int nex;

typedef struct {
	uint8_t *bytes[MAX_EX][NT];
	size_t size[MAX_EX][NT];
	int ok[MAX_EX][NT];
} Results;

static void *compile_all(void *arg)
{
	Results *r = arg;
	ta_ctx *ctx = ta_ctx_create();
	ta_ctx_set_cache(ctx, 4);
	for (int pass = 0; pass < 2; pass++) /* the second pass hits the cache for some */
		for (int t = 0; t < NT; t++)
			for (int e = 0; e < nex; e++) {
				ta_binary *b = NULL;
				if (ta_compile_source(ctx, name[e], text[e], len[e], targets[t], &b) != TA_OK) {
					ta_ctx_clear_diagnostics(ctx);
					continue;
				}
				size_t n;
				const void *p = ta_binary_data(b, &n);
				if (!r->bytes[e][t]) {
					r->bytes[e][t] = malloc(n);
					memcpy(r->bytes[e][t], p, n);
					r->size[e][t] = n;
				}
				r->ok[e][t] += r->size[e][t] == n && !memcmp(r->bytes[e][t], p, n);
				ta_binary_release(b);
			}
	ta_ctx_destroy(ctx);
	return NULL;
}

/* One emulator device per thread: vector_add on N elements, 3 launches,
 * every element compared; returns the number of wrong launches. */
static const char *va_text;
static size_t va_len;

static void *emu_all(void *arg)
{
	long id = (long)arg;
	const char *target = id & 1 ? "gfx1100" : "gfx942";
	ta_ctx *ctx = ta_ctx_create();
	ta_binary *b = NULL;
	long bad = 0;
	if (!ctx || ta_compile_source(ctx, "vector_add.tile", va_text, va_len, target, &b) != TA_OK) {
		printf("FAIL: emu thread %ld: compile for %s\n", id, target);
		ta_ctx_destroy(ctx);
		return (void *)1L;
	}
	size_t n;
	const void *code = ta_binary_data(b, &n);
	const ta_kernel_info *k = ta_binary_kernel(b, 0);
	EmuDevice *dev = emu_create(id & 1 ? TA_TARGET_GFX1100 : TA_TARGET_GFX942);
	Diag d;
	diag_init(&d);
	enum { N = 1000 };
	static _Thread_local float A[N], B[N], C[N];
	for (int i = 0; i < N; i++)
		A[i] = (float)(i + 7 * id), B[i] = (float)(3 * i) - (float)id;
	uint64_t dA = emu_alloc(dev, sizeof A), dB = emu_alloc(dev, sizeof B), dC = emu_alloc(dev, sizeof C);
	unsigned char ka[256] = {0};
	memcpy(ka + k->args[0].offset, &dA, 8);
	memcpy(ka + k->args[1].offset, &dB, 8);
	memcpy(ka + k->args[2].offset, &dC, 8);
	int32_t nn = N;
	memcpy(ka + k->args[3].offset, &nn, 4);
	int64_t vals[4] = {0, 0, 0, N};
	uint32_t grid[3], block[3] = {(uint32_t)k->threads, 1, 1};
	if (ta_binary_grid(b, 0, vals, grid) != TA_OK || emu_write(dev, dA, A, sizeof A, &d) ||
	    emu_write(dev, dB, B, sizeof B, &d) || emu_load(dev, code, n, &d))
		bad++;
	for (int r = 0; r < 3 && !bad; r++) {
		memset(C, 0, sizeof C);
		if (emu_write(dev, dC, C, sizeof C, &d) ||
		    emu_launch(dev, k->name, grid, block, ka, k->kernarg_size, 0, &d) || emu_read(dev, dC, C, sizeof C, &d)) {
			printf("FAIL: emu thread %ld: %s\n", id, diag_text(&d));
			bad++;
			break;
		}
		for (int i = 0; i < N; i++)
			if (C[i] != A[i] + B[i]) {
				printf("FAIL: emu thread %ld (%s) launch %d: C[%d] = %g, want %g\n", id, target, r, i,
				       (double)C[i], (double)(A[i] + B[i]));
				bad++;
				break;
			}
	}
	emu_destroy(dev);
	diag_free(&d);
	ta_binary_release(b);
	ta_ctx_destroy(ctx);
	return (void *)bad;
}

static int cmp_s(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void)
{
	const char *root = getenv("TILEASM_SRCDIR");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/examples", root ? root : ".");
	DIR *dp = opendir(dir);
	if (!dp) {
		printf("cannot open %s\n0 passed, 1 failed\n", dir);
		return 1;
	}
	struct dirent *de;
	while ((de = readdir(dp)) && nex < MAX_EX) {
		size_t n = strlen(de->d_name);
		if (n > 5 && !strcmp(de->d_name + n - 5, ".tile")) {
			name[nex] = malloc(strlen(dir) + n + 2);
			sprintf(name[nex], "%s/%s", dir, de->d_name);
			nex++;
		}
	}
	closedir(dp);
	qsort(name, (size_t)nex, sizeof *name, cmp_s);
	for (int e = 0; e < nex; e++)
		text[e] = read_file(name[e], &len[e]);
	static Results one, many[8];
	compile_all(&one);
	pthread_t th[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, compile_all, &many[i]);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	int passed = 0, failed = 0;
	for (int t = 0; t < NT; t++)
		for (int e = 0; e < nex; e++) {
			if (!one.bytes[e][t])
				continue; /* target not supported: the API test checks which */
			for (int i = 0; i < 8; i++) {
				int same = many[i].bytes[e][t] && many[i].size[e][t] == one.size[e][t] &&
				           !memcmp(many[i].bytes[e][t], one.bytes[e][t], one.size[e][t]) &&
				           many[i].ok[e][t] == 2;
				if (same) {
					passed++;
				} else {
					failed++;
					printf("FAIL: thread %d, %s for %s differs\n", i, name[e], targets[t]);
				}
				free(many[i].bytes[e][t]);
			}
			free(one.bytes[e][t]);
		}
	for (int e = 0; e < nex; e++)
		if (strstr(name[e], "/vector_add.tile"))
			va_text = text[e], va_len = len[e];
	if (!va_text) {
		printf("FAIL: no examples/vector_add.tile\n");
		failed++;
	} else {
		pthread_t et[4];
		for (long i = 0; i < 4; i++)
			pthread_create(&et[i], NULL, emu_all, (void *)i);
		for (int i = 0; i < 4; i++) {
			void *r;
			pthread_join(et[i], &r);
			if (r)
				failed++;
			else
				passed++;
		}
	}
	for (int e = 0; e < nex; e++) {
		free(name[e]);
		free(text[e]);
	}
	if (passed < 8 * 2 * 8) {
		printf("FAIL: only %d thread/example/target results compared\n", passed);
		failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
