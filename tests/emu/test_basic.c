/* test_basic.c — the emulator runs whole kernels: vadd on every target
 * (including a ragged last workgroup), memory API contracts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct {
	uint64_t a, b, c;
	uint32_t n;
} VaddArgs;

static void run_vadd(const char *file, ta_target t, uint32_t block, uint32_t n)
{
	EmuDevice *dev = load_dev(file, t, "");
	float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
	for (uint32_t i = 0; i < n; i++)
		a[i] = (float)i * 0.5f, b[i] = 100.0f - (float)i;
	VaddArgs ka = {upload(dev, a, n * 4), upload(dev, b, n * 4), 0, n};
	memset(c, 0, n * 4);
	ka.c = upload(dev, c, n * 4);
	char *err = NULL;
	int rc = launch(dev, "vadd", (n + block - 1) / block, block, &ka, 28, &err);
	cr_assert_eq(rc, 0, "%s", err);
	download(dev, ka.c, c, n * 4);
	for (uint32_t i = 0; i < n; i++)
		cr_assert_eq(c[i], a[i] + b[i], "%s: c[%u] = %g, want %g", file, i, c[i], a[i] + b[i]);
	const EmuStats *st = emu_stats(dev);
	cr_assert_gt(st->insns, 0);
	cr_assert_eq(st->workgroups, (n + block - 1) / block);
	free(err);
	free(a), free(b), free(c);
	emu_destroy(dev);
}

Test(emu, vadd_gfx942) { run_vadd("vadd_gfx942.s", TA_TARGET_GFX942, 64, 1000); }
Test(emu, vadd_gfx90a) { run_vadd("vadd_gfx90a.s", TA_TARGET_GFX90A, 64, 1000); }
Test(emu, vadd_gfx1100_wave32) { run_vadd("vadd_gfx1100.s", TA_TARGET_GFX1100, 32, 1000); }

Test(emu, memory_api)
{
	EmuDevice *dev = emu_create(TA_TARGET_GFX942);
	cr_assert(dev);
	uint64_t a = emu_alloc(dev, 100), b = emu_alloc(dev, 100);
	cr_assert(a && b && a != b);
	cr_assert_eq(a & 255, 0);
	cr_assert_geq(a, 0x100000000ull, "addresses above 4 GiB catch truncated pointers");
	Diag d;
	diag_init(&d);
	uint8_t buf[200] = {0};
	cr_assert_eq(emu_write(dev, a, buf, 100, &d), 0);
	cr_assert_eq(emu_write(dev, a + 1, buf, 100, &d), -1, "a write past the end is refused");
	cr_assert(strstr(diag_text(&d), "outside every device buffer"), "%s", diag_text(&d));
	cr_assert_eq(emu_free(dev, a), 0);
	cr_assert_eq(emu_free(dev, a), -1);
	cr_assert_eq(emu_read(dev, a, buf, 4, &d), -1, "freed memory is gone");
	diag_free(&d);
	cr_assert_null(emu_create(TA_TARGET_SM90A), "NVIDIA targets have no AMD emulator");
	emu_destroy(dev);
}

Test(emu, launch_errors)
{
	EmuDevice *dev = load_dev("vadd_gfx942.s", TA_TARGET_GFX942, "");
	char *err = NULL;
	cr_assert_eq(launch(dev, "nosuch", 1, 64, NULL, 0, &err), -1);
	cr_assert(strstr(err, "no kernel named 'nosuch'"), "%s", err);
	free(err);
	cr_assert_eq(launch(dev, "vadd", 1, 2000, NULL, 0, &err), -1);
	cr_assert(strstr(err, "workgroup size"), "%s", err);
	free(err);
	/* Wrong-target code objects are refused. */
	size_t n;
	uint8_t *co = build_co("vadd_gfx1100.s", "gfx1100", "", &n);
	Diag d;
	diag_init(&d);
	cr_assert_eq(emu_load(dev, co, n, &d), -1);
	cr_assert(strstr(diag_text(&d), "is for gfx1100"), "%s", diag_text(&d));
	diag_free(&d);
	free(co);
	emu_destroy(dev);
}
