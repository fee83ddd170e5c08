/* tileasm.c — command-line driver: dispatches to the subcommands in cmd_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tileasm.h"

static const char usage[] =
	"usage: tileasm [compile] FILE.tile --target=T [-o OUT] [--dump-isa] [--dump-ir]\n"
	"                        [--time-passes] [--dump-simt] [--dump-after=PASS] [--verify]\n"
	"                        [-D NAME=VALUE]...\n"
	"       tileasm run FILE.tile --backend=interp|emu|cuda|hsa [--target=T] [--kernel K]\n"
	"                        [-D NAME=VALUE]... [--arg NAME=VALUE]... [--seed N] [--bench] [--profile]\n"
	"                        [--max-steps N]\n"
	"       tileasm asm FILE.s --target=T [--show-encoding] [-o OUT]\n"
	"       tileasm disasm FILE.hsaco | FILE --target=T\n"
	"       tileasm targets | --help | --version\n";

static int cli_targets(void)
{
	puts("gfx1100   AMD RDNA3 (wave32), HSA code object v5");
	puts("gfx90a    AMD CDNA2 (wave64, MFMA), HSA code object v5");
	puts("gfx942    AMD CDNA3 (wave64, MFMA), HSA code object v5");
	puts("sm_80     NVIDIA Ampere and later, PTX (mma.sync, cp.async)");
	puts("sm_90a    NVIDIA Hopper, PTX (wgmma, TMA)");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("tileasm %s\n", ta_version());
		return 0;
	}
	if (!strcmp(cmd, "targets"))
		return cli_targets();
	/* `tileasm SUBCOMMAND --help` prints the usage too */
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		}
	if (!strcmp(cmd, "compile"))
		return cli_compile(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return cli_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "asm"))
		return cli_asm(argc - 1, argv + 1);
	if (!strcmp(cmd, "disasm"))
		return cli_disasm(argc - 1, argv + 1);
	/* `tileasm FILE.tile ...` is short for `tileasm compile FILE.tile ...`;
	 * a bare word that is no file is a mistyped subcommand. */
	if (cmd[0] != '-' && !strchr(cmd, '.') && !strchr(cmd, '/') && access(cmd, F_OK)) {
		fprintf(stderr, "tileasm: error: unknown command '%s' (compile, run, asm, disasm, targets; see "
				"tileasm --help)\n", cmd);
		return 2;
	}
	return cli_compile(argc, argv);
}
