/* oracle.h — running llvm-mc-19 from isa tests (test-time oracle only). */
#ifndef TILEASM_TESTS_ISA_ORACLE_H
#define TILEASM_TESTS_ISA_ORACLE_H
#include "isa.h"

/* One line of llvm-mc output: text and bytes (len 0 = llvm-mc rejected the line). */
typedef struct {
	char *text;
	uint8_t bytes[16];
	int len;
	char *error;
} McLine;

/* Assembles n lines with llvm-mc-19 -show-encoding (one process).  Returns 0 or -1
 * (oracle missing: message in *why). out[i] corresponds to lines[i]. */
int mc_assemble(ta_target t, char **lines, int n, McLine *out, char **why);
/* Disassembles n byte strings with llvm-mc-19 --disassemble (one process). */
int mc_disassemble(ta_target t, const uint8_t (*bytes)[16], const int *lens, int n, char **text_out, char **why);
void mc_lines_free(McLine *l, int n);
const char *mc_mcpu(ta_target t);
const char *mc_mattr(ta_target t);
#endif
