#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "util.h"

static void need(const char *tool)
{
	char path[256];
	snprintf(path, sizeof path, "/usr/bin/%s", tool);
	if (access(path, X_OK))
		cr_assert_fail("the test oracle %s is missing: apt-get install llvm-19 lld-19", path);
}

uint8_t *build_co(const char *name, const char *mcpu, const char *flags, size_t *len)
{
	need("llvm-mc-19");
	need("ld.lld-19");
	const char *src = getenv("TILEASM_SRCDIR");
	cr_assert(src, "TILEASM_SRCDIR is not set");
	char dir[] = "/tmp/tileasm-emu-XXXXXX";
	cr_assert(mkdtemp(dir), "mkdtemp failed");
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "llvm-mc-19 -triple=amdgcn-amd-amdhsa -mcpu=%s %s -filetype=obj %s/tests/emu/%s -o %s/k.o 2>%s/err && "
		 "ld.lld-19 -shared %s/k.o -o %s/k.co 2>>%s/err",
		 mcpu, flags, src, name, dir, dir, dir, dir, dir);
	int rc = system(cmd);
	char path[512];
	snprintf(path, sizeof path, "%s/err", dir);
	size_t elen = 0;
	char *err = read_file(path, &elen);
	snprintf(path, sizeof path, "%s/k.co", dir);
	uint8_t *co = rc ? NULL : (uint8_t *)read_file(path, len);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd)) {
	}
	cr_assert(co, "building %s for %s failed:\n%s", name, mcpu, err ? err : "");
	free(err);
	return co;
}

EmuDevice *load_dev(const char *name, ta_target t, const char *flags)
{
	size_t n = 0;
	const char *mcpu = t == TA_TARGET_GFX1100 ? "gfx1100" : t == TA_TARGET_GFX90A ? "gfx90a" : "gfx942";
	uint8_t *co = build_co(name, mcpu, flags, &n);
	EmuDevice *dev = emu_create(t);
	cr_assert(dev);
	Diag d;
	diag_init(&d);
	int rc = emu_load(dev, co, n, &d);
	free(co);
	cr_assert_eq(rc, 0, "emu_load: %s", diag_text(&d));
	diag_free(&d);
	return dev;
}

int launch(EmuDevice *dev, const char *kernel, uint32_t gx, uint32_t bx, const void *ka, size_t kn, char **err)
{
	uint32_t grid[3] = {gx, 1, 1}, block[3] = {bx, 1, 1};
	Diag d;
	diag_init(&d);
	int rc = emu_launch(dev, kernel, grid, block, ka, kn, 0, &d);
	if (err)
		*err = strdup(diag_text(&d));
	diag_free(&d);
	return rc;
}

uint64_t upload(EmuDevice *dev, const void *p, size_t n)
{
	uint64_t a = emu_alloc(dev, n);
	cr_assert(a);
	Diag d;
	diag_init(&d);
	cr_assert_eq(emu_write(dev, a, p, n, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
	return a;
}

void download(EmuDevice *dev, uint64_t a, void *p, size_t n)
{
	Diag d;
	diag_init(&d);
	cr_assert_eq(emu_read(dev, a, p, n, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
}
