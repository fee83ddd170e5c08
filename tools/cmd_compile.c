/* cmd_compile.c — `tileasm compile FILE.tile --target=T ...`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ptx.h"
#include "target.h"
#include "tileasm.h"
#include "util.h"

int cli_parse_define(ta_ctx *ctx, const char *def)
{
	const char *eq = strchr(def, '=');
	char *end = NULL;
	if (!eq || eq == def) {
		fprintf(stderr, "tileasm: error: -D expects NAME=VALUE, got '%s'\n", def);
		return -1;
	}
	errno = 0;
	long long v = strtoll(eq + 1, &end, 0);
	if (errno || !*(eq + 1) || *end) {
		fprintf(stderr, "tileasm: error: -D %s: value is not an integer\n", def);
		return -1;
	}
	char name[128];
	size_t n = (size_t)(eq - def);
	if (n >= sizeof name) {
		fprintf(stderr, "tileasm: error: -D name too long\n");
		return -1;
	}
	memcpy(name, def, n);
	name[n] = 0;
	return ta_ctx_define(ctx, name, v) == TA_OK ? 0 : -1;
}

/* Reads and verifies a .tile file; prints diagnostics.  NULL on failure. */
ta_module *cli_load_module(ta_ctx *ctx, const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		fprintf(stderr, "tileasm: error: cannot read '%s': %s\n", path, strerror(errno));
		return NULL;
	}
	ta_module *m = NULL;
	ta_status st = ta_parse(ctx, path, text, len, &m);
	free(text);
	fputs(ta_ctx_diagnostics(ctx), stderr);
	ta_ctx_clear_diagnostics(ctx);
	return st == TA_OK ? m : NULL;
}

/* Writes the output unless only --dump-isa was asked for: to -o FILE, or to
 * the input's name with `ext` in place of .tile.  Returns 0 or 1. */
static int write_output(const char *file, const char *out, int dump_isa, const char *ext, const void *data,
                        size_t len)
{
	if (!out && dump_isa)
		return 0;
	char *path = NULL;
	if (!out) {
		size_t n = strlen(file), e = strlen(ext);
		if (n > 5 && !strcmp(file + n - 5, ".tile"))
			n -= 5;
		path = malloc(n + e + 1);
		if (path) {
			memcpy(path, file, n);
			memcpy(path + n, ext, e + 1);
		}
	}
	const char *dst = out ? out : path;
	int rc = 0;
	if (!dst || write_file_atomic(dst, data, len)) {
		fprintf(stderr, "tileasm: error: cannot write '%s': %s\n", dst ? dst : "?", strerror(errno));
		rc = 1;
	}
	free(path);
	return rc;
}

/* Compiles through the public API: the output to -o FILE (default: the
 * input with .hsaco or .ptx for .tile; none with only --dump-isa or
 * --dump-after and no -o), the listing (--dump-isa) and dumps to stdout,
 * pass times to stderr.  Returns the exit status. */
static int compile_file(ta_ctx *ctx, const char *file, const char *target, const char *out, int dump_isa,
                        int time_passes, const char *dump_after, int verify)
{
	size_t len;
	char *text = read_file(file, &len);
	if (!text) {
		fprintf(stderr, "tileasm: error: cannot read '%s': %s\n", file, strerror(errno));
		return 1;
	}
	ta_compile_options o = {.dump_after = dump_after, .verify = verify, .nvidia_off = cli_nvidia_off()};
	ta_binary *bin = NULL;
	ta_status st = ta_compile_source_with(ctx, file, text, len, target, &o, &bin);
	free(text);
	fputs(ta_ctx_diagnostics(ctx), stderr);
	ta_ctx_clear_diagnostics(ctx);
	if (st != TA_OK)
		return st == TA_ERR_INVALID ? 2 : 1;
	if (ta_binary_dump(bin))
		fputs(ta_binary_dump(bin), stdout);
	int rc = 0;
	size_t size;
	const void *data = ta_binary_data(bin, &size);
	int is_ptx = !strcmp(ta_binary_format(bin), "ptx");
	/* PTX: one module with every entry the library built, the sm_90a fast
	 * entries (each in a module of its own in the binary) after the generic ones */
	StrBuf all = {0};
	if (is_ptx) {
		sb_putn(&all, data, size);
		for (int k = 0, first = 1; k < ta_binary_kernel_count(bin); k++) {
			const ta_fast_entry *fe = ta_binary_kernel(bin, k)->fast;
			if (fe) {
				ptx_append_module(&all, fe->ptx, first);
				first = 0;
			}
		}
		if (all.oom) {
			fprintf(stderr, "tileasm: error: out of memory\n");
			rc = 1;
		}
		data = all.buf, size = all.len;
	}
	if (dump_isa && !rc) {
		char *l = is_ptx ? NULL : ta_binary_listing(ctx, bin);
		fputs(ta_ctx_diagnostics(ctx), stderr);
		if (is_ptx)
			fwrite(data, 1, size, stdout);
		else if (l)
			fputs(l, stdout);
		else
			rc = 1;
		ta_free(l);
	}
	if (time_passes) {
		const char *names[32];
		double ms[32], total = 0;
		int n = ta_binary_pass_times(bin, names, ms, 32);
		for (int i = 0; i < n; i++) {
			fprintf(stderr, "  %-10s %8.3f ms\n", names[i], ms[i]);
			total += ms[i];
		}
		fprintf(stderr, "  %-10s %8.3f ms\n", "total", total);
	}
	if (!rc)
		rc = write_output(file, out, dump_isa || dump_after, is_ptx ? ".ptx" : ".hsaco", data, size);
	sb_free(&all);
	ta_binary_release(bin);
	return rc;
}

int cli_compile(int argc, char **argv)
{
	const char *file = NULL, *target = NULL, *out = NULL, *dump_after = NULL, *val;
	int dump_ir = 0, dump_isa = 0, time_passes = 0, verify = 0, rc = 1, r;
	ta_ctx *ctx = ta_ctx_create();
	if (!ctx) {
		fprintf(stderr, "tileasm: error: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((r = cli_opt(argc, argv, &i, "target", &val))) {
			if (r < 0)
				goto missing;
			target = val;
		} else if (!strcmp(a, "-o")) {
			if (i + 1 >= argc)
				goto missing;
			out = argv[++i];
		} else if (!strcmp(a, "--dump-ir")) {
			dump_ir = 1;
		} else if (!strcmp(a, "--dump-isa")) {
			dump_isa = 1;
		} else if (!strcmp(a, "--time-passes")) {
			time_passes = 1;
		} else if ((r = cli_opt(argc, argv, &i, "dump-after", &val))) {
			if (r < 0)
				goto missing;
			dump_after = val;
		} else if (!strcmp(a, "--dump-simt")) {
			dump_after = "lower";
		} else if (!strcmp(a, "--verify")) {
			verify = 1;
		} else if (!strncmp(a, "-D", 2)) {
			const char *def = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			if (!def)
				goto missing;
			if (cli_parse_define(ctx, def)) {
				rc = 2;
				goto done;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "tileasm: error: unknown option '%s' (see tileasm --help)\n", a);
			rc = 2;
			goto done;
		} else if (file) {
			fprintf(stderr, "tileasm: error: more than one input file ('%s' and '%s')\n", file, a);
			rc = 2;
			goto done;
		} else {
			file = a;
		}
	}
	if (!file) {
		fprintf(stderr, "tileasm: error: no input file (see tileasm --help)\n");
		rc = 2;
		goto done;
	}
	Target t = {0};
	if (target && target_parse(target, &t)) {
		fprintf(stderr, "tileasm: error: unknown target '%s' (see tileasm targets)\n", target);
		rc = 2;
		goto done;
	}
	if (!target && !dump_ir) {
		fprintf(stderr, "tileasm: error: no --target given (gfx1100, gfx90a, gfx942, sm_80, sm_90a);"
		                " use --dump-ir to print the checked IR only\n");
		rc = 2;
		goto done;
	}
	if (dump_ir) {
		ta_module *m = cli_load_module(ctx, file);
		if (!m)
			goto done;
		char *txt = ta_module_print(m);
		if (txt)
			fputs(txt, stdout);
		ta_free(txt);
		ta_module_destroy(m);
		rc = 0;
	}
	if (target)
		rc = compile_file(ctx, file, target, out, dump_isa, time_passes, dump_after, verify);
done:
	ta_ctx_destroy(ctx);
	return rc;
missing:
	fprintf(stderr, "tileasm: error: option '%s' needs a value\n", argv[argc - 1]);
	ta_ctx_destroy(ctx);
	return 2;
}
