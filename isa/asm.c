/* asm.c */
#include "isa.h"
