/* target.h — the GPU targets tileasm compiles for, shared by every layer. */
#ifndef TILEASM_TARGET_H
#define TILEASM_TARGET_H

#include "tileasm.h"

typedef enum { FEAT_ANY = 0, FEAT_OFF, FEAT_ON } TargetFeature;

/* A parsed --target string such as "gfx942:sramecc+:xnack-". */
typedef struct {
	ta_target id;
	TargetFeature xnack, sramecc;
} Target;

/* Parses NAME[:feature(+|-)]...; returns 0 or -1 (unknown name/feature). */
int target_parse(const char *s, Target *t);
const char *target_name(ta_target id); /* "gfx1100", "sm_90a", ... */
static inline int target_is_amd(ta_target id)
{
	return id == TA_TARGET_GFX1100 || id == TA_TARGET_GFX90A || id == TA_TARGET_GFX942;
}
static inline int target_is_nvidia(ta_target id)
{
	return id == TA_TARGET_SM80 || id == TA_TARGET_SM90A;
}
/* Wave size tileasm uses on the target (gfx1100: 32; CDNA: 64; NVIDIA: 32). */
int target_wave_size(ta_target id);

#endif
