/* cmd_compile.c — `tileasm compile FILE.tile --target=T ...`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amd.h"
#include "cli.h"
#include "codeobj.h"
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

/* --target=sm_80|sm_90a: PTX to -o FILE (default: the input with .ptx for
 * .tile), and to stdout with --dump-isa (then a file only if -o is given). */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compile_ptx(const Module *m, const Target *t, const char *file, const char *out, int dump_isa,
                       int time_passes, int dump_simt)
{
	Diag d;
	diag_init(&d);
	StrBuf sb = {0};
	if (dump_simt) {
		int bad = simt_dump_module(m, t, &sb, &d);
		if (!bad)
			fwrite(sb.buf, 1, sb.len, stdout);
		sb_free(&sb);
		fputs(diag_text(&d), stderr);
		diag_free(&d);
		return bad || !out ? bad : compile_ptx(m, t, file, out, dump_isa, time_passes, 0);
	}
	double t0 = now_ms();
	int rc = ptx_compile(m, t, &sb, NULL, &d) ? 1 : 0;
	if (time_passes)
		fprintf(stderr, "  %-10s %8.3f ms  (lowering and PTX text, all kernels)\n", "ptx", now_ms() - t0);
	fputs(diag_text(&d), stderr);
	diag_free(&d);
	if (!rc && sb.oom) {
		fprintf(stderr, "tileasm: error: out of memory\n");
		rc = 1;
	}
	if (!rc && dump_isa)
		fwrite(sb.buf, 1, sb.len, stdout);
	if (!rc)
		rc = write_output(file, out, dump_isa, ".ptx", sb.buf, sb.len);
	sb_free(&sb);
	return rc;
}

/* --target=gfx1100|gfx90a|gfx942: a code object to -o FILE (default: the
 * input with .hsaco for .tile); --dump-isa prints the code with encodings
 * and per-kernel resources, --time-passes the backend's pass times. */
static int compile_amd(const Module *m, const Target *t, const char *file, const char *out, int dump_isa,
		       int time_passes, const char *dump_after, int verify)
{
	Diag d;
	diag_init(&d);
	AmdOutput ao;
	memset(&ao, 0, sizeof ao);
	ao.dump_after = dump_after;
	ao.verify = verify;
	int rc = amd_compile(m, t, &ao, &d) ? 1 : 0;
	if (ao.dump.len)
		fwrite(ao.dump.buf, 1, ao.dump.len, stdout);
	if (!rc && dump_isa) {
		/* The listing is assembly source: `tileasm asm` turns it back into
		 * this very code object (tests/amd checks it). */
		StrBuf src = {0};
		for (int i = 0; i < ao.nkernels; i++) {
			const AmdKernelInfo *k = &ao.kernels[i];
			sb_printf(&src, "; kernel %s: sgprs %d, vgprs %d, agprs %d, lds %d bytes, scratch %d bytes, "
			          "waves/SIMD %d (limited by %s), %d instructions, %d bytes\n",
			          k->name, k->sgprs, k->vgprs, k->agprs, k->lds_bytes, k->scratch_bytes, k->waves,
			          k->waves_limit ? k->waves_limit : "?", k->ninsns, k->code_bytes);
		}
		if (co_source(ao.code_object, ao.code_object_len, 1, &src, &d) == 0 && src.buf)
			fwrite(src.buf, 1, src.len, stdout);
		else
			rc = 1;
		sb_free(&src);
	}
	fputs(diag_text(&d), stderr);
	diag_free(&d);
	if (!rc && time_passes) {
		double total = 0;
		for (int p = 0; p < AMD_PASS_COUNT; p++)
			total += ao.pass_ms[p];
		for (int p = 0; p < AMD_PASS_COUNT; p++)
			fprintf(stderr, "  %-10s %8.3f ms\n", amd_pass_name[p], ao.pass_ms[p]);
		fprintf(stderr, "  %-10s %8.3f ms\n", "total", total);
	}
	if (!rc)
		rc = write_output(file, out, dump_isa || dump_after, ".hsaco", ao.code_object, ao.code_object_len);
	amd_output_free(&ao);
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
	if (dump_after) {
		int known = 0;
		for (int p = 0; p < AMD_PASS_COUNT; p++)
			known |= !strcmp(dump_after, amd_pass_name[p]);
		if (!known || (target && !target_is_amd(t.id) && strcmp(dump_after, "lower"))) {
			fprintf(stderr, "tileasm: error: --dump-after=%s: no such pass (AMD: lower isel opt sched "
			                "regalloc waitcnt hazard emit; PTX: lower)\n", dump_after);
			rc = 2;
			goto done;
		}
	}
	double t_front = now_ms();
	ta_module *m = cli_load_module(ctx, file);
	t_front = now_ms() - t_front;
	if (m && time_passes)
		fprintf(stderr, "  %-10s %8.3f ms  (read, parse, specialise, verify)\n", "frontend", t_front);
	if (!m)
		goto done;
	if (dump_ir) {
		char *s = ta_module_print(m);
		if (s)
			fputs(s, stdout);
		ta_free(s);
	}
	rc = 0;
	if (target && target_is_nvidia(t.id)) {
		rc = compile_ptx(ta_module_ir(m), &t, file, out, dump_isa, time_passes, dump_after != NULL);
	} else if (target && target_is_amd(t.id)) {
		rc = compile_amd(ta_module_ir(m), &t, file, out, dump_isa, time_passes, dump_after, verify);
	} else if (target) {
		fprintf(stderr, "tileasm: error: code generation for %s is not available yet\n", target_name(t.id));
		rc = 2;
	}
	ta_module_destroy(m);
done:
	ta_ctx_destroy(ctx);
	return rc;
missing:
	fprintf(stderr, "tileasm: error: option '%s' needs a value\n", argv[argc - 1]);
	ta_ctx_destroy(ctx);
	return 2;
}
