/* testutil.c — see testutil.h. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util.h"

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

const char *env(const char *name)
{
	const char *v = getenv(name);
	cr_assert(v && *v, "%s is not set (run through meson test)", name);
	return v;
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
