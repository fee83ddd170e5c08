/* testutil.c — see testutil.h. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

char *run_cmd(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	cr_assert(p, "cannot run %s", cmd);
	StrBuf sb = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, p)) > 0)
		sb_putn(&sb, buf, n);
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	sb_putc(&sb, 0);
	return sb.buf;
}

int run_out(const char *cmd, char **out)
{
	int st;
	*out = run_cmd(cmd, &st);
	return st;
}

const char *env(const char *name)
{
	const char *v = getenv(name);
	cr_assert(v && *v, "%s is not set (run through meson test)", name);
	return v;
}

Module *load_text(const char *name, const char *text, const Define *defs, int ndefs)
{
	Diag d;
	diag_init(&d);
	Module *m = ir_parse(name, text, strlen(text), &d);
	cr_assert(m, "%s: parse failed:\n%s", name, diag_text(&d));
	cr_assert_eq(ir_specialize(m, defs, ndefs, &d), 0, "%s: specialize failed:\n%s", name, diag_text(&d));
	cr_assert_eq(ir_verify(m, &d), 0, "%s: verify failed:\n%s", name, diag_text(&d));
	diag_free(&d);
	return m;
}

char *src_text(const char *rel)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", env("TILEASM_SRCDIR"), rel);
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text, "cannot read %s", path);
	return text;
}

Module *load_src(const char *rel, const Define *defs, int ndefs)
{
	char *text = src_text(rel);
	Module *m = load_text(rel, text, defs, ndefs);
	free(text);
	return m;
}

int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

char *tmpdir(void)
{
	char *d = strdup("/tmp/tileasm-test-XXXXXX");
	cr_assert(d && mkdtemp(d), "mkdtemp failed");
	return d;
}

void rmdir_all(char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	int st;
	free(run_cmd(cmd, &st));
	free(dir);
}

int ptxas(const char *ptx, const char *arch, char *log, size_t loglen)
{
	struct stat st;
	cr_assert(stat(PTXAS, &st) == 0, PTXAS " is missing: install the CUDA toolkit (CI needs ptxas)");
	char in[] = "/tmp/tileasm-ptx-XXXXXX";
	int fd = mkstemp(in);
	cr_assert(fd >= 0);
	cr_assert(write(fd, ptx, strlen(ptx)) == (ssize_t)strlen(ptx));
	close(fd);
	char cmd[8192];
	snprintf(cmd, sizeof cmd, PTXAS " -arch=%s %s -o /dev/null 2>&1", arch, in);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	size_t n = fread(log, 1, loglen - 1, p);
	log[n] = 0;
	int rc = pclose(p);
	unlink(in);
	return rc;
}
