/* table.c — the instruction table (from isa_ops.def) and mnemonic lookup. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "isa_impl.h"

#define O_(r, n) (uint16_t)((ISA_R_##r << 8) | (n))
#define O_NONE 0
#define O_SD(n) O_(SD, n)
#define O_SS(n) O_(SS, n)
#define O_LM(n) O_(LM, n)
#define O_VD(n) O_(VD, n)
#define O_VS(n) O_(VS, n)
#define O_VV(n) O_(VV, n)
#define O_AVD(n) O_(AVD, n)
#define O_AVS(n) O_(AVS, n)
#define O_AD(n) O_(AD, n)
#define O_AS(n) O_(AS, n)
#define O_WD(n) O_(WD, n)
#define O_WV(n) O_(WV, n)
#define O_K16(n) O_(K16, n)
#define O_I16(n) O_(I16, n)
#define O_LBL(n) O_(LBL, n)
#define O_WAIT(n) O_(WAIT, n)
#define O_DELAY(n) O_(DELAY, n)
#define O_MSG(n) O_(MSG, n)
#define O_K32(n) O_(K32, n)
#define O_I32(n) O_(I32, n)
#define O_HWREG(n) O_(HWREG, n)
#define O_SB(n) O_(SB, n)
#define O_SOFF(n) O_(SOFF, n)
#define O_DA(n) O_(DA, n)
#define O_DD(n) O_(DD, n)
#define O_FA(n) O_(FA, n)
#define O_FS(n) O_(FS, n)
#define O_MVA(n) O_(MVA, n)
#define O_RSRC(n) O_(RSRC, n)
#define O_MSO(n) O_(MSO, n)
#define O_XA(n) O_(XA, n)
#define O_XS(n) O_(XS, n)
#define COUNT_ARGS(...) (sizeof((uint16_t[]){__VA_ARGS__}) / sizeof(uint16_t))

const IsaOpInfo isa_ops[ISA_NUM_OPS] = {
#define ISA_OP(id, f9, f11, n90, n942, n11, o90, o942, o11, ty, fl, suf, forms, ...)             \
	[ISA_##id] = {{n90, n942, n11}, {o90, o942, o11},                                         \
		      {ISA_FMT_##f9, ISA_FMT_##f9, ISA_FMT_##f11}, ISA_TY_##ty,                  \
		      (uint8_t)COUNT_ARGS(__VA_ARGS__), suf, forms,                           \
		      fl, {__VA_ARGS__}},
#define ISA_ALIAS(...)
#define ISA_HWREG(...)
#define ISA_SENDMSG(...)
#include "isa_ops.def"
#undef ISA_OP
#undef ISA_ALIAS
#undef ISA_HWREG
#undef ISA_SENDMSG
};

/* Named values per target: hardware registers (id) and s_sendmsg operands (simm16). */
typedef struct {
	uint16_t key;
	uint8_t tmask;
	const char *name;
} NamedVal;

static const NamedVal hwregs[] = {
#define ISA_OP(...)
#define ISA_ALIAS(...)
#define ISA_HWREG(id, tm, nm) {id, tm, nm},
#define ISA_SENDMSG(...)
#include "isa_ops.def"
#undef ISA_OP
#undef ISA_ALIAS
#undef ISA_HWREG
#undef ISA_SENDMSG
};

static const NamedVal sendmsgs[] = {
#define ISA_OP(...)
#define ISA_ALIAS(...)
#define ISA_HWREG(...)
#define ISA_SENDMSG(v, tm, txt) {v, tm, txt},
#include "isa_ops.def"
#undef ISA_OP
#undef ISA_ALIAS
#undef ISA_HWREG
#undef ISA_SENDMSG
};

static const char *named_by_key(const NamedVal *v, size_t n, ta_target t, unsigned key)
{
	int ti = isa_tidx(t);
	for (size_t i = 0; ti >= 0 && i < n; i++)
		if (v[i].key == key && (v[i].tmask >> ti & 1))
			return v[i].name;
	return NULL;
}

static int named_by_name(const NamedVal *v, size_t n, ta_target t, const char *name, size_t len)
{
	int ti = isa_tidx(t);
	for (size_t i = 0; ti >= 0 && i < n; i++)
		if ((v[i].tmask >> ti & 1) && strlen(v[i].name) == len && !memcmp(v[i].name, name, len))
			return v[i].key;
	return -1;
}

const char *isa_hwreg_name(ta_target t, unsigned id) { return named_by_key(hwregs, TA_ARRAY_LEN(hwregs), t, id); }
int isa_hwreg_id(ta_target t, const char *name, size_t len)
{
	return named_by_name(hwregs, TA_ARRAY_LEN(hwregs), t, name, len);
}
const char *isa_sendmsg_text(ta_target t, unsigned v) { return named_by_key(sendmsgs, TA_ARRAY_LEN(sendmsgs), t, v); }
int isa_sendmsg_value(ta_target t, const char *text, size_t len)
{
	return named_by_name(sendmsgs, TA_ARRAY_LEN(sendmsgs), t, text, len);
}

int isa_sendmsg_ok(ta_target t, unsigned v)
{
	if (isa_sendmsg_text(t, v))
		return 1;
	return ISA_TARGET(t) == TA_TARGET_GFX1100 ? v < 256 : v < 1024 && !(v & 0x80);
}

int isa_tidx(ta_target t)
{
	switch (ISA_TARGET(t)) {
	case TA_TARGET_GFX90A: return 0;
	case TA_TARGET_GFX942: return 1;
	case TA_TARGET_GFX1100: return 2;
	default: return -1;
	}
}

const char *isa_op_name(ta_target t, unsigned op)
{
	int i = isa_tidx(t);
	return op < ISA_NUM_OPS && i >= 0 ? isa_ops[op].name[i] : NULL;
}

IsaFmt isa_op_fmt(ta_target t, unsigned op)
{
	int i = isa_tidx(t);
	return op < ISA_NUM_OPS && i >= 0 && isa_ops[op].opc[i] >= 0 ? isa_ops[op].fmt[i] : ISA_FMT_NONE;
}

/* Mnemonic lookup: one sorted array of (name, op) per target, built once. */
typedef struct {
	const char *name;
	uint16_t op;
} NameEnt;

static struct {
	NameEnt *v;
	size_t n;
} names[3];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static const struct {
	uint16_t op;
	int tmask;
	const char *name;
} aliases[] = {
#define ISA_T_GFX90A 1
#define ISA_T_GFX942 2
#define ISA_T_GFX1100 4
#define ISA_OP(...)
#define ISA_ALIAS(id, tm, nm) {ISA_##id, tm, nm},
#define ISA_HWREG(...)
#define ISA_SENDMSG(...)
#include "isa_ops.def"
#undef ISA_OP
#undef ISA_ALIAS
#undef ISA_HWREG
#undef ISA_SENDMSG
};

static int name_cmp(const void *a, const void *b)
{
	const NameEnt *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (int)x->op - (int)y->op;
}

static void build_names(void)
{
	for (int t = 0; t < 3; t++) {
		size_t cap = ISA_NUM_OPS + TA_ARRAY_LEN(aliases), n = 0;
		NameEnt *v = malloc(cap * sizeof *v);
		if (!v)
			continue;
		for (unsigned op = 0; op < ISA_NUM_OPS; op++)
			if (isa_ops[op].name[t])
				v[n++] = (NameEnt){isa_ops[op].name[t], (uint16_t)op};
		for (size_t i = 0; i < TA_ARRAY_LEN(aliases); i++)
			if (aliases[i].tmask & (1 << t))
				v[n++] = (NameEnt){aliases[i].name, aliases[i].op};
		qsort(v, n, sizeof *v, name_cmp);
		names[t].v = v;
		names[t].n = n;
	}
}

/* The table lives for the whole process; LSan sees it through the static pointer. */
int isa_lookup(ta_target t, const char *s, size_t len, uint16_t *ops, int max)
{
	int ti = isa_tidx(t), k = 0;
	if (ti < 0 || len >= 64)
		return 0;
	pthread_once(&names_once, build_names);
	char key[64];
	memcpy(key, s, len);
	key[len] = 0;
	size_t lo = 0, hi = names[ti].n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(names[ti].v[mid].name, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < names[ti].n && !strcmp(names[ti].v[lo].name, key) && k < max; lo++)
		ops[k++] = names[ti].v[lo].op;
	return k;
}

/* Signature with target adjustments applied (gfx11 v_cmpx has no destination;
 * wave64 halves WMMA accumulators, lane masks are 2 SGPRs). */
int isa_sig(ta_target t, unsigned op, uint16_t *sig)
{
	const IsaOpInfo *oi = &isa_ops[op];
	int n = 0, g11 = ISA_TARGET(t) == TA_TARGET_GFX1100, w64 = ISA_IS_W64(t);
	for (int i = 0; i < oi->nsig; i++) {
		unsigned role = oi->sig[i] >> 8, cnt = oi->sig[i] & 0xff;
		if (!role)
			continue;
		if (role == ISA_R_LM && (oi->flags & ISA_F_CMPX) && g11)
			continue;
		if (role == ISA_R_LM)
			cnt = w64 ? 2 : 1;
		if ((role == ISA_R_WD || role == ISA_R_WV) && w64)
			cnt /= 2;
		sig[n++] = (uint16_t)(role << 8 | cnt);
	}
	return n;
}

void isa_insn_init(IsaInsn *in, unsigned op)
{
	memset(in, 0, sizeof *in);
	in->op = (uint16_t)op;
	in->mod.op_sel_hi = op < ISA_NUM_OPS && (isa_ops[op].flags & ISA_F_MIX) ? 0 : 7;
	in->mod.row_mask = 0xf;
	in->mod.bank_mask = 0xf;
}
