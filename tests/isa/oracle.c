/* oracle.c — batch llvm-mc-19 runs for the isa tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oracle.h"

const char *mc_mcpu(ta_target t)
{
	return target_name(ISA_TARGET(t));
}

const char *mc_mattr(ta_target t)
{
	if (ISA_TARGET(t) != TA_TARGET_GFX1100)
		return "";
	return ISA_IS_W64(t) ? "-mattr=+wavefrontsize64" : "-mattr=+wavefrontsize32";
}

static int have_mc(char **why)
{
	if (system("command -v llvm-mc-19 >/dev/null 2>&1") != 0) {
		*why = strdup("llvm-mc-19 not found in PATH: install llvm-19 (the isa conformance oracle)");
		return 0;
	}
	return 1;
}

static char *slurp(FILE *f)
{
	StrBuf sb = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sb_putn(&sb, buf, n);
	sb_putc(&sb, 0);
	return sb_take(&sb);
}

static int run(const char *cmd, char **out, char **err)
{
	char ef[] = "/tmp/tileasm-mc-err-XXXXXX";
	int fd = mkstemp(ef);
	if (fd < 0)
		return -1;
	close(fd);
	char full[1024];
	snprintf(full, sizeof full, "%s 2>%s", cmd, ef);
	FILE *p = popen(full, "r");
	if (!p) {
		unlink(ef);
		return -1;
	}
	*out = slurp(p);
	pclose(p);
	FILE *e = fopen(ef, "r");
	*err = e ? slurp(e) : strdup("");
	if (e)
		fclose(e);
	unlink(ef);
	return 0;
}

int mc_assemble(ta_target t, char **lines, int n, McLine *out, char **why)
{
	memset(out, 0, sizeof *out * (size_t)n);
	if (!have_mc(why))
		return -1;
	char in[] = "/tmp/tileasm-mc-in-XXXXXX";
	int fd = mkstemp(in);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	fclose(f);
	char cmd[512], *o, *e;
	snprintf(cmd, sizeof cmd, "llvm-mc-19 -triple=amdgcn -mcpu=%s %s -show-encoding %s", mc_mcpu(t), mc_mattr(t), in);
	if (run(cmd, &o, &e)) {
		unlink(in);
		return -1;
	}
	unlink(in);
	/* Errors: "file:LINE:COL: error: msg" */
	char *bad = calloc((size_t)n + 1, 1);
	for (char *s = e; (s = strstr(s, ": error: ")); s++) {
		char *ls = s;
		while (ls > e && ls[-1] != '\n')
			ls--;
		char *c1 = strchr(ls, ':');
		int line = c1 ? atoi(c1 + 1) : 0;
		if (line >= 1 && line <= n) {
			bad[line - 1] = 1;
			char *eol = strchr(s, '\n');
			if (!out[line - 1].error)
				out[line - 1].error = strndup(s + 9, eol ? (size_t)(eol - s - 9) : strlen(s + 9));
		}
	}
	char *s = o;
	for (int i = 0; i < n; i++) {
		if (bad[i])
			continue;
		char *enc;
		while ((enc = strstr(s, "; encoding: [")) != NULL) {
			char *ls = enc;
			while (ls > s && ls[-1] != '\n')
				ls--;
			char *te = enc;
			while (te > ls && (te[-1] == ' '))
				te--;
			char *ts = ls;
			while (*ts == '\t' || *ts == ' ')
				ts++;
			out[i].text = strndup(ts, (size_t)(te - ts));
			char *q = enc + 13;
			while (*q && *q != ']' && out[i].len < 16) {
				out[i].bytes[out[i].len++] = (uint8_t)strtoul(q, &q, 16);
				if (*q == ',')
					q++;
			}
			s = q;
			break;
		}
	}
	free(bad);
	free(o);
	free(e);
	return 0;
}

int mc_disassemble(ta_target t, const uint8_t (*bytes)[16], const int *lens, int n, char **text, char **why)
{
	if (!have_mc(why))
		return -1;
	char in[] = "/tmp/tileasm-mc-dis-XXXXXX";
	int fd = mkstemp(in);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < lens[i]; j++)
			fprintf(f, "%s0x%02x", j ? "," : "", bytes[i][j]);
		fprintf(f, "\n0x0d,0x00,0x80,0xbf\n"); /* s_nop 13 separates the answers */
	}
	fclose(f);
	char cmd[512], *o, *e;
	snprintf(cmd, sizeof cmd, "llvm-mc-19 --disassemble -triple=amdgcn -mcpu=%s %s %s", mc_mcpu(t), mc_mattr(t), in);
	int rc = run(cmd, &o, &e);
	unlink(in);
	if (rc)
		return -1;
	/* Output: one instruction per line after "\t.text"; invalid bytes give warnings on stderr. */
	int k = 0;
	for (int i = 0; i < n; i++)
		text[i] = NULL;
	for (char *s = o; *s && k < n;) {
		char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		char *ts = s;
		while (*ts == '\t' || *ts == ' ')
			ts++;
		size_t tl = len - (size_t)(ts - s);
		if (tl == 8 && !strncmp(ts, "s_nop 13", 8))
			k++;
		else if (tl && strncmp(ts, ".text", 5) && !text[k])
			text[k] = strndup(ts, tl);
		s = eol ? eol + 1 : s + len;
	}
	free(o);
	free(e);
	return 0;
}

void mc_lines_free(McLine *l, int n)
{
	for (int i = 0; i < n; i++) {
		free(l[i].text);
		free(l[i].error);
	}
}
