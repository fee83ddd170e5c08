/* cmd_run.c — `tileasm run` (placeholder, being written). */
#include <stdio.h>

#include "cli.h"

int cli_run(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "tileasm: error: 'run' is not available yet\n");
	return 2;
}
