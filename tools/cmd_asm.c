/* cmd_asm.c — `tileasm asm` (placeholder until the isa/ layer lands). */
#include <stdio.h>

#include "cli.h"

int cli_asm(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "tileasm: error: 'asm' is not available yet\n");
	return 2;
}
