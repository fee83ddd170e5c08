/* cli.h — subcommands of the tileasm command-line tool.  Each returns the
 * process exit status: 0 success, 1 failure (errors, FAIL), 2 usage or
 * "not available". */
#ifndef TILEASM_CLI_H
#define TILEASM_CLI_H

int cli_compile(int argc, char **argv); /* cmd_compile.c */
int cli_run(int argc, char **argv);     /* cmd_run.c */
int cli_asm(int argc, char **argv);     /* cmd_asm.c */
int cli_disasm(int argc, char **argv);  /* cmd_disasm.c */

/* Shared option helper: if argv[*i] is "--NAME=V" or "--NAME V", stores V and
 * advances *i; returns 1 when matched, 0 otherwise, -1 if the value is missing. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);

typedef struct ta_ctx ta_ctx;
typedef struct ta_module ta_module;
/* cmd_compile.c: shared by compile and run. */
int cli_parse_define(ta_ctx *ctx, const char *def);       /* "NAME=VALUE" */
ta_module *cli_load_module(ta_ctx *ctx, const char *path); /* prints diagnostics */
/* cli_util.c: TILEASM_NVIDIA_OFF (diagnosis), ta_compile_options.nvidia_off for
 * compile and run; 0 when unset. */
unsigned cli_nvidia_off(void);

#endif
