/* cli_util.c — option parsing shared by the subcommands. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, "--", 2) || strncmp(a + 2, name, n))
		return 0;
	if (a[2 + n] == '=') {
		*val = a + 3 + n;
		return 1;
	}
	if (a[2 + n])
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*val = argv[++*i];
	return 1;
}

unsigned cli_nvidia_off(void)
{
	const char *v = getenv("TILEASM_NVIDIA_OFF");
	return v ? (unsigned)strtoul(v, NULL, 0) : 0;
}
