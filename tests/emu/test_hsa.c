/* test_hsa.c — the ROCr path fails cleanly where there is no AMD GPU (CI):
 * a missing library, and (when ROCr is installed) hsa_init or agent
 * discovery failing, each with a clear message and no leak. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <string.h>

#include "hsa.h"

Test(hsa, library_missing)
{
	RocrRt *rt = (RocrRt *)1;
	Diag d;
	diag_init(&d);
	cr_assert_eq(rocr_open("libhsa-runtime-does-not-exist.so.9", &rt, &d), -1);
	cr_assert_null(rt);
	cr_assert(strstr(diag_text(&d), "cannot load the ROCm runtime libhsa-runtime-does-not-exist.so.9"), "%s",
		  diag_text(&d));
	cr_assert(strstr(diag_text(&d), "--backend=emu"), "the message points at the emulator: %s", diag_text(&d));
	diag_free(&d);
}

Test(hsa, no_gpu)
{
	/* With ROCr installed but no /dev/kfd or no GPU (CI), opening fails in
	 * hsa_init or agent discovery; on a machine with an AMD GPU it opens. */
	void *h = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
	RocrRt *rt = NULL;
	Diag d;
	diag_init(&d);
	int rc = rocr_open(NULL, &rt, &d);
	if (!h) {
		cr_assert_eq(rc, -1);
		cr_assert(strstr(diag_text(&d), "cannot load the ROCm runtime"), "%s", diag_text(&d));
	} else if (rc) {
		cr_assert_null(rt);
		cr_assert(strstr(diag_text(&d), "hsa_init") || strstr(diag_text(&d), "no GPU agent"), "%s",
			  diag_text(&d));
	} else {
		cr_assert(rt && rocr_agent_name(rt)[0], "an opened runtime names its agent");
		rocr_close(rt);
	}
	if (h)
		dlclose(h);
	diag_free(&d);
}
