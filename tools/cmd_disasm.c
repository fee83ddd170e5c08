/* cmd_disasm.c — `tileasm disasm` (placeholder until the isa/ layer lands). */
#include <stdio.h>

#include "cli.h"

int cli_disasm(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "tileasm: error: 'disasm' is not available yet\n");
	return 2;
}
