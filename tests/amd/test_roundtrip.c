/* test_roundtrip.c — what `tileasm compile --dump-isa` prints is assembly
 * source that the assembler turns back into the very same code object:
 * every example, every AMD target, byte for byte. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "amd.h"
#include "codeobj.h"

static Module *load(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	cr_assert(text, "cannot read %s", path);
	Diag d;
	diag_init(&d);
	/* Shapes as -D values, so the kernels are specialised like in use. */
	static const Define defs[] = {{"M", 256}, {"N", 256}, {"K", 128}, {"S", 256}};
	Module *m = ir_parse(path, text, len, &d);
	cr_assert(m, "%s", diag_text(&d));
	for (size_t i = 0; i < TA_ARRAY_LEN(defs); i++)
		ir_specialize(m, &defs[i], 1, &d); /* a symbol the kernel lacks is not an error here */
	diag_free(&d);
	diag_init(&d);
	cr_assert(ir_verify(m, &d) == 0, "%s", diag_text(&d));
	diag_free(&d);
	free(text);
	return m;
}

Test(amd_roundtrip, dump_isa_assembles_to_the_same_code_object)
{
	static const char *const targets[] = {"gfx1100", "gfx90a", "gfx942", "gfx942:xnack-"};
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/examples", getenv("TILEASM_SRCDIR"));
	DIR *dp = opendir(dir);
	cr_assert(dp);
	int compared = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".tile"))
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		Module *m = load(path);
		for (size_t ti = 0; ti < TA_ARRAY_LEN(targets); ti++) {
			Target t;
			cr_assert(target_parse(targets[ti], &t) == 0);
			Diag d;
			diag_init(&d);
			AmdOutput out = {0};
			cr_assert(amd_compile(m, &t, &out, &d) == 0, "%s %s: %s", de->d_name, targets[ti], diag_text(&d));
			StrBuf src = {0};
			cr_assert(co_source(out.code_object, out.code_object_len, 1, &src, &d) == 0, "%s", diag_text(&d));
			SrcFile sf = {"dump.s", src.buf, src.len};
			uint8_t *again = NULL;
			size_t again_len = 0;
			int rc = co_assemble(&t, 0, &sf, &again, &again_len, &d);
			cr_expect(rc == 0, "%s %s: the listing does not assemble:\n%s", de->d_name, targets[ti],
			          diag_text(&d));
			if (rc == 0) {
				cr_expect(again_len == out.code_object_len && !memcmp(again, out.code_object, again_len),
				          "%s %s: reassembled code object differs", de->d_name, targets[ti]);
				compared++;
			}
			free(again);
			sb_free(&src);
			amd_output_free(&out);
			diag_free(&d);
		}
		ir_module_free(m);
	}
	closedir(dp);
	cr_expect_geq(compared, 8 * 4, "compared %d code objects", compared);
}
