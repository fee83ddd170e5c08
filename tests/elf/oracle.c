/* oracle.c — see oracle.h. */
#include "oracle.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

void need_oracle(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "/usr/bin/%s", name);
	if (access(path, X_OK))
		cr_assert_fail("oracle %s is missing: install llvm-19, lld-19 and clang-19 "
			       "(see /work/shared/notes/oracles.md); this test cannot run without it",
			       path);
}

int run(const char *cmd, char **out)
{
	StrBuf sb = {0};
	sb_printf(&sb, "( %s ) 2>&1", cmd);
	FILE *f = popen(sb.buf, "r");
	sb_free(&sb);
	cr_assert(f, "popen failed for: %s", cmd);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sb_putn(&sb, buf, n);
	int st = pclose(f);
	if (!sb.buf)
		sb_puts(&sb, "");
	if (out)
		*out = sb_take(&sb);
	else
		sb_free(&sb);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

char *tmp_dir(void)
{
	char *d = strdup("/tmp/tileasm-elf-XXXXXX");
	cr_assert(d && mkdtemp(d), "mkdtemp failed");
	return d;
}

void tmp_cleanup(char *dir)
{
	if (!dir)
		return;
	StrBuf sb = {0};
	sb_printf(&sb, "rm -rf '%s'", dir);
	run(sb.buf, NULL);
	sb_free(&sb);
	free(dir);
}

char *test_src(const char *name)
{
	const char *root = getenv("TILEASM_SRCDIR");
	cr_assert(root, "TILEASM_SRCDIR is not set (run through meson test)");
	StrBuf sb = {0};
	sb_printf(&sb, "%s/tests/elf/%s", root, name);
	return sb_take(&sb);
}

uint8_t *slurp(const char *path, size_t *len)
{
	char *p = read_file(path, len);
	cr_assert(p, "cannot read %s", path);
	return (uint8_t *)p;
}

void spit(const char *path, const void *p, size_t len)
{
	cr_assert_eq(write_file_atomic(path, p, len), 0, "cannot write %s", path);
}

char *llvm_mc_target(const char *target)
{
	/* llvm-mc takes features as -mattr, not in the -mcpu name. */
	StrBuf sb = {0};
	size_t n = strcspn(target, ":");
	sb_printf(&sb, "-mcpu=%.*s", (int)n, target);
	for (const char *p = target + n; *p == ':';) {
		size_t m = strcspn(p + 1, ":");
		sb_printf(&sb, " -mattr=%c%.*s", p[m], (int)m - 1, p + 1);
		p += m + 1;
	}
	return sb_take(&sb);
}

char *llvm_build(const char *dir, const char *src, const char *target)
{
	need_oracle("llvm-mc-19");
	need_oracle("ld.lld-19");
	StrBuf cmd = {0}, co = {0};
	char *mc = llvm_mc_target(target);
	sb_printf(&co, "%s/ref.co", dir);
	sb_printf(&cmd, "llvm-mc-19 -triple=amdgcn-amd-amdhsa %s -filetype=obj '%s' -o '%s/ref.o' && "
			"ld.lld-19 -shared '%s/ref.o' -o '%s'", mc, src, dir, dir, co.buf);
	free(mc);
	char *out;
	int rc = run(cmd.buf, &out);
	cr_assert_eq(rc, 0, "llvm-mc/lld failed on %s:\n%s", src, out);
	free(out);
	sb_free(&cmd);
	return sb_take(&co);
}

static char *readelf(const char *args, const char *co)
{
	need_oracle("llvm-readelf-19");
	StrBuf cmd = {0};
	sb_printf(&cmd, "llvm-readelf-19 -W %s '%s'", args, co);
	char *out;
	int rc = run(cmd.buf, &out);
	cr_assert_eq(rc, 0, "%s failed:\n%s", cmd.buf, out);
	sb_free(&cmd);
	return out;
}

/* Splits s into lines (modifies s); returns the count. */
static int lines(char *s, char ***out)
{
	int n = 0, cap = 16;
	char **v = malloc(sizeof *v * (size_t)cap);
	for (char *p = strtok(s, "\n"); p; p = strtok(NULL, "\n")) {
		if (n == cap)
			v = realloc(v, sizeof *v * (size_t)(cap *= 2));
		v[n++] = p;
	}
	*out = v;
	return n;
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char *view_header(const char *co)
{
	char *s = readelf("-h", co), **l;
	int n = lines(s, &l);
	StrBuf sb = {0};
	for (int i = 0; i < n; i++)
		if (!strstr(l[i], "Start of section headers") && !strstr(l[i], "ELF Header"))
			sb_printf(&sb, "%s\n", l[i]);
	free(l);
	free(s);
	return sb_take(&sb);
}

char *view_sections(const char *co)
{
	char *s = readelf("-S", co), **l;
	int n = lines(s, &l);
	StrBuf sb = {0};
	for (int i = 0; i < n; i++) {
		char *b = strchr(l[i], ']');
		if (!strstr(l[i], "[") || !b || strstr(l[i], "[Nr]"))
			continue;
		/* [Nr] Name Type Address Off Size ES Flg Lk Inf Al: keep name,
		 * type, ES, Flg, Al (addresses, offsets, sizes and links vary). */
		char name[64] = "", type[32], addr[32], off[32], size[32], es[8], f1[8], f2[8], f3[8], f4[8];
		int k = sscanf(b + 1, "%63s %31s %31s %31s %31s %7s %7s %7s %7s %7s", name, type, addr, off, size, es,
			       f1, f2, f3, f4);
		if (k < 2)
			continue;
		if (k < 3 || !strcmp(name, "NULL")) { /* index 0 has no name */
			sb_puts(&sb, "NULL\n");
			continue;
		}
		/* Flg may be empty: then f1..f3 are Lk Inf Al. */
		const char *flg = k == 10 ? f1 : "", *al = k == 10 ? f4 : f3;
		sb_printf(&sb, "%s %s es=%s flags=%s align=%s\n", name, type, es, flg, al);
	}
	free(l);
	free(s);
	return sb_take(&sb);
}

char *view_segments(const char *co)
{
	char *s = readelf("-l", co), **l;
	int n = lines(s, &l);
	StrBuf sb = {0};
	int mapping = 0;
	for (int i = 0; i < n; i++) {
		char type[32], off[32], va[32], pa[32], fs[32], ms[32], fl[3][8];
		if (strstr(l[i], "Section to Segment mapping")) {
			mapping = 1;
			continue;
		}
		if (mapping) {
			/* "None" lists the non-alloc sections: not part of a segment */
			if (!strstr(l[i], "Segment Sections") && !strstr(l[i], "None"))
				sb_printf(&sb, "map:%s\n", l[i]);
			continue;
		}
		int k = sscanf(l[i], "%31s %31s %31s %31s %31s %31s %7s %7s %7s", type, off, va, pa, fs, ms, fl[0],
			       fl[1], fl[2]);
		if (k < 8 || strncmp(off, "0x", 2))
			continue;
		/* flags are 1-3 tokens ("R", "R E", "RW"), then the alignment */
		sb_printf(&sb, "%s", type);
		for (int j = 0; j < k - 6; j++)
			sb_printf(&sb, " %s", fl[j]);
		sb_putc(&sb, '\n');
	}
	free(l);
	free(s);
	return sb_take(&sb);
}

char *view_symbols(const char *co)
{
	char *s = readelf("--dyn-syms -s", co), **l;
	int n = lines(s, &l);
	const char *table = "?";
	char **rows = malloc(sizeof *rows * (size_t)(n + 1));
	int nr = 0;
	for (int i = 0; i < n; i++) {
		if (strstr(l[i], "'.dynsym'"))
			table = "dynsym";
		else if (strstr(l[i], "'.symtab'"))
			table = "symtab";
		char num[16], val[32], size[16], type[16], bind[16], vis[16], ndx[16], name[256] = "";
		if (sscanf(l[i], "%15s %31s %15s %15s %15s %15s %15s %255s", num, val, size, type, bind, vis, ndx,
			   name) < 7 || !strchr(num, ':'))
			continue;
		StrBuf r = {0};
		sb_printf(&r, "%s %s %s %s %s %s %s", table, name, type, bind, vis, size,
			  strcmp(ndx, "UND") ? "defined" : "UND");
		rows[nr++] = sb_take(&r);
	}
	qsort(rows, (size_t)nr, sizeof *rows, cmpstr);
	StrBuf sb = {0};
	for (int i = 0; i < nr; i++) {
		sb_printf(&sb, "%s\n", rows[i]);
		free(rows[i]);
	}
	free(rows);
	free(l);
	free(s);
	return sb_take(&sb);
}

char *view_notes(const char *co)
{
	char *s = readelf("--notes", co);
	char *a = strstr(s, "---"), *b = a ? strstr(a, "\n...") : NULL;
	cr_assert(a && b, "no AMDGPU metadata YAML in llvm-readelf --notes output of %s:\n%s", co, s);
	char *r = strndup(a, (size_t)(b - a) + 4);
	free(s);
	return r;
}

char *view_kd(const char *co, const char *mcpu)
{
	need_oracle("llvm-objdump-19");
	StrBuf cmd = {0};
	sb_printf(&cmd, "llvm-objdump-19 -D --mcpu=%s '%s'", mcpu, co);
	char *s, **l;
	int rc = run(cmd.buf, &s);
	cr_assert_eq(rc, 0, "%s failed:\n%s", cmd.buf, s);
	sb_free(&cmd);
	int n = lines(s, &l);
	StrBuf sb = {0};
	for (int i = 0; i < n; i++)
		if (strstr(l[i], ".amdhsa_") || strstr(l[i], "error decoding"))
			sb_printf(&sb, "%s\n", l[i]);
	free(l);
	free(s);
	return sb_take(&sb);
}

void check_clean(const char *co, const char *mcpu)
{
	char *s = readelf("-a --notes", co);
	cr_expect(!strstr(s, "warning") && !strstr(s, "error"), "llvm-readelf -a reports problems with %s:\n%s", co, s);
	free(s);
	StrBuf cmd = {0};
	sb_printf(&cmd, "llvm-objdump-19 -d --mcpu=%s '%s'", mcpu, co);
	int rc = run(cmd.buf, &s);
	cr_expect_eq(rc, 0, "objdump -d failed:\n%s", s);
	cr_expect(!strstr(s, "<unknown>"), "objdump -d of %s has <unknown> instructions:\n%s", co, s);
	free(s);
	sb_free(&cmd);
	s = view_kd(co, mcpu);
	cr_expect(!strstr(s, "error"), "objdump -D cannot decode a descriptor of %s:\n%s", co, s);
	cr_expect(strstr(s, ".amdhsa_next_free_vgpr"), "objdump -D decoded no descriptor in %s", co);
	free(s);
}

static void same(char *a, char *b, const char *what)
{
	cr_expect(strlen(b) > 20, "%s: the oracle view is empty", what);
	cr_expect_str_eq(a, b, "%s differ.\n--- ours:\n%s--- llvm:\n%s", what, a, b);
	free(a);
	free(b);
}

/* Removes the lines of s that contain one of the ignore strings. */
static char *drop(char *s, const char *const *ignore)
{
	if (!ignore)
		return s;
	StrBuf sb = {0};
	for (char *p = s; *p;) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
		char *line = strndup(p, n);
		int keep = 1;
		for (const char *const *ig = ignore; *ig; ig++)
			keep &= !strstr(line, *ig);
		if (keep)
			sb_puts(&sb, line);
		free(line);
		p += n;
	}
	free(s);
	if (!sb.buf)
		sb_puts(&sb, "");
	return sb_take(&sb);
}

void check_same_except(const char *ours, const char *ref, const char *mcpu, const char *const *ignore)
{
	same(drop(view_header(ours), ignore), drop(view_header(ref), ignore), "ELF headers");
	same(drop(view_sections(ours), ignore), drop(view_sections(ref), ignore), "sections");
	same(drop(view_segments(ours), ignore), drop(view_segments(ref), ignore), "segments");
	same(drop(view_symbols(ours), ignore), drop(view_symbols(ref), ignore), "symbols");
	same(view_notes(ours), view_notes(ref), "metadata notes");
	same(view_kd(ours, mcpu), view_kd(ref, mcpu), "decoded descriptors");
}

void check_same(const char *ours, const char *ref, const char *mcpu) { check_same_except(ours, ref, mcpu, NULL); }
