/* regs.c */
#include "isa.h"
