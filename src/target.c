/* target.c — target names and feature strings. */
#include "target.h"
#include "util.h"

static const struct {
	ta_target id;
	const char *name;
} targets[] = {
	{TA_TARGET_GFX1100, "gfx1100"}, {TA_TARGET_GFX90A, "gfx90a"}, {TA_TARGET_GFX942, "gfx942"},
	{TA_TARGET_SM80, "sm_80"},     {TA_TARGET_SM90A, "sm_90a"},
};

const char *target_name(ta_target id)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(targets); i++)
		if (targets[i].id == id)
			return targets[i].name;
	return "unknown";
}

int target_wave_size(ta_target id) { return id == TA_TARGET_GFX90A || id == TA_TARGET_GFX942 ? 64 : 32; }

int target_parse(const char *s, Target *t)
{
	memset(t, 0, sizeof *t);
	size_t n = strcspn(s, ":");
	for (size_t i = 0; i < TA_ARRAY_LEN(targets); i++)
		if (strlen(targets[i].name) == n && !strncmp(s, targets[i].name, n))
			t->id = targets[i].id;
	if (t->id == TA_TARGET_NONE)
		return -1;
	s += n;
	while (*s == ':') {
		s++;
		n = strcspn(s, ":");
		if (n < 2 || (s[n - 1] != '+' && s[n - 1] != '-') || !target_is_amd(t->id))
			return -1;
		TargetFeature v = s[n - 1] == '+' ? FEAT_ON : FEAT_OFF;
		/* gfx11 has neither feature; each may be given once (issue 18.11) */
		if (n - 1 == 5 && !strncmp(s, "xnack", 5) && t->id != TA_TARGET_GFX1100 && !t->xnack)
			t->xnack = v;
		else if (n - 1 == 7 && !strncmp(s, "sramecc", 7) && t->id != TA_TARGET_GFX1100 && !t->sramecc)
			t->sramecc = v;
		else
			return -1;
		s += n;
	}
	return *s ? -1 : 0;
}
