/* variants.h — representative instruction variants (tests and benchmarks). */
#ifndef TILEASM_TESTS_ISA_VARIANTS_H
#define TILEASM_TESTS_ISA_VARIANTS_H
#include "isa.h"
#define ISA_NUM_VARIANTS 6
int isa_variant(ta_target t, unsigned op, int var, IsaInsn *in);
#endif
