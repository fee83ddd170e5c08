/* run_cuda.c — `tileasm run --backend=cuda` (placeholder until the PTX backend lands). */
#include <stdio.h>

#include "run.h"

int run_backend_cuda(RunCase *rc)
{
	(void)rc;
	fprintf(stderr, "tileasm: error: backend 'cuda' is not available yet\n");
	return 2;
}
