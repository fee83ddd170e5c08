/* cmd_compile.c — `tileasm compile` (placeholder, being written). */
#include <stdio.h>

#include "cli.h"

int cli_compile(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "tileasm: error: 'compile' is not available yet\n");
	return 2;
}
