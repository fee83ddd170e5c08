/* parse.c — one line of LLVM AMDGPU assembly into an IsaInsn.
 *
 * The mnemonic selects candidate ops (a returning and a non-returning atomic
 * share a spelling); operands are read in the order of the op's signature and
 * converted according to their role, then modifiers follow separated by
 * spaces.  VOP1/VOP2/VOPC without a suffix are promoted to _e64 when their
 * operands need it, as llvm-mc does. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "isa_impl.h"

typedef struct {
	ta_target t;
	const char *s;   /* line text */
	const char *p;   /* cursor */
	const SrcFile *src;
	SrcPos pos;
	const char *err; /* first error message */
	const char *err_at;
	char errbuf[160];
	const char *opos[ISA_MAX_OPS]; /* where each operand of the current candidate starts */
	const char *offpos;            /* where its offset modifier starts */
	const char *dpppos;            /* where its first DPP control (quad_perm, row_*, dpp8...) starts */
	const char *v3late;            /* a VOP3 modifier written after the DPP control (no _e64_dpp then) */
	int sdwa_last;                 /* SDWA: index of the last select written (llvm-mc's order) */
	int explicit_e32;              /* mnemonic written with _e32 */
	int plain_e64;                 /* a VOP3/VOP3P mnemonic written with _e64 (no DPP control then) */
	const char *kw[16];            /* modifier keywords written so far */
	size_t kwlen[16];
	int nkw, cpol_seen, off1_seen;
	unsigned written;              /* ISA_M_* modifiers the text wrote (default values too) */
	const char *wpos[ISA_M_NKINDS];
	uint8_t bytes[16];             /* encoding of the accepted instruction */
	int len;
} P;

static void skip_ws(P *p)
{
	while (*p->p == ' ' || *p->p == '\t')
		p->p++;
}

static int fail(P *p, const char *at, const char *msg)
{
	if (!p->err) {
		p->err = msg;
		p->err_at = at;
	}
	return -1;
}

static int is_id(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '$';
}

static int word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && !memcmp(s, w, n);
}

/* Integer: decimal, 0x hex, optional leading '-'. */
static int parse_int(P *p, int64_t *v)
{
	const char *s = p->p;
	int neg = 0;
	if (*s == '-')
		neg = 1, s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	char *end;
	unsigned long long x = strtoull(s, &end, 0);
	if (is_id(*end) && *end != '.')
		return -1;
	if (*end == '.')
		return -1;
	p->p = end;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

static uint16_t f32_to_f16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = x >> 16 & 0x8000;
	int exp = (int)(x >> 23 & 0xff) - 127 + 15;
	uint32_t man = x & 0x7fffff;
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)(sign | 0x7e00);
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		if (exp < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		uint32_t shift = (uint32_t)(14 - exp);
		uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = (uint32_t)exp << 10 | man >> 13, rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

/* Float literal text to the bits of the operand type. */
static uint32_t float_bits(IsaType ty, double d)
{
	if (ty == ISA_TY_F16 || ty == ISA_TY_B16 || ty == ISA_TY_PK16 || ty == ISA_TY_PKI16)
		return f32_to_f16((float)d);
	if (ty == ISA_TY_F64) {
		uint64_t b;
		memcpy(&b, &d, 8);
		return (uint32_t)(b >> 32);
	}
	float f = (float)d;
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

static const struct {
	const char *name;
	IsaSpecial sp;
	int count;
} specials[] = {
	{"vcc", ISA_SP_VCC_LO, 2}, {"vcc_lo", ISA_SP_VCC_LO, 1}, {"vcc_hi", ISA_SP_VCC_HI, 1},
	{"exec", ISA_SP_EXEC_LO, 2}, {"exec_lo", ISA_SP_EXEC_LO, 1}, {"exec_hi", ISA_SP_EXEC_HI, 1},
	{"m0", ISA_SP_M0, 1}, {"null", ISA_SP_NULL, 1}, {"scc", ISA_SP_SCC, 1}, {"vccz", ISA_SP_VCCZ, 1},
	{"execz", ISA_SP_EXECZ, 1}, {"src_scc", ISA_SP_SCC, 1}, {"src_vccz", ISA_SP_VCCZ, 1},
	{"src_execz", ISA_SP_EXECZ, 1}, {"flat_scratch", ISA_SP_FLAT_SCRATCH_LO, 2},
	{"flat_scratch_lo", ISA_SP_FLAT_SCRATCH_LO, 1}, {"flat_scratch_hi", ISA_SP_FLAT_SCRATCH_HI, 1},
};

/* A register operand, or 0 if the text is not a register. -1 on a malformed one. */
static int parse_reg(P *p, IsaOperand *o)
{
	const char *s = p->p;
	size_t n = 0;
	while (is_id(s[n]) && s[n] != '.')
		n++;
	for (size_t i = 0; i < TA_ARRAY_LEN(specials); i++)
		if (word_is(s, n, specials[i].name)) {
			*o = isa_special(specials[i].sp, specials[i].count);
			p->p = s + n;
			return 1;
		}
	if (word_is(s, n, "off")) {
		*o = isa_off();
		p->p = s + n;
		return 1;
	}
	char c = s[0];
	/* ttmp0..ttmp15 are SGPR-class: scalar codes 108..123 on all three targets */
	int ttmp = !strncmp(s, "ttmp", 4) && (isdigit((unsigned char)s[4]) || s[4] == '[');
	if (c != 's' && c != 'v' && c != 'a' && !ttmp)
		return 0;
	IsaKind k = c == 's' || ttmp ? ISA_K_SGPR : c == 'v' ? ISA_K_VGPR : ISA_K_AGPR;
	const char *d = s + (ttmp ? 4 : 1);
	long a, b, max = ttmp ? ISA_TTMP_NUM - 1 : 511;
	char *end;
	if (isdigit((unsigned char)*d)) {
		a = b = strtol(d, &end, 10);
		if (is_id(*end))
			return 0;
		if (a > max)
			return fail(p, s, "register index is out of range");
		p->p = end;
	} else if (*d == '[') {
		a = b = strtol(d + 1, &end, 10);
		if (end == d + 1)
			return fail(p, s, "invalid register");
		if (*end == ':') {
			const char *q = end + 1;
			b = strtol(q, &end, 10);
			if (end == q)
				return fail(p, s, "invalid register");
		}
		if (*end != ']' || b < a || b - a >= 32)
			return fail(p, s, "invalid register range");
		if (b > max)
			return fail(p, s, ttmp ? "register index is out of range" : "invalid register range");
		p->p = end + 1;
	} else
		return 0;
	*o = (IsaOperand){(uint8_t)k, (uint8_t)(b - a + 1), (uint16_t)(a + (ttmp ? ISA_TTMP_BASE : 0)), 0, 0, 0};
	return 1;
}

static int lookup_name(const char *const *tab, int n, const char *s, size_t len)
{
	for (int i = 0; i < n; i++)
		if (word_is(s, len, tab[i]))
			return i;
	return -1;
}

extern const char *const isa_delay_id_names[12];
extern const char *const isa_delay_skip_names[6];

/* name(value) items for s_waitcnt / s_delay_alu / sendmsg. */
static int parse_waitcnt(P *p, int64_t *v)
{
	int vm = 63, exp = 7, lgkm = ISA_TARGET(p->t) == TA_TARGET_GFX1100 ? 63 : 15;
	if (isdigit((unsigned char)*p->p))
		return parse_int(p, v);
	for (;;) {
		const char *s = p->p;
		size_t n = 0;
		while (is_id(s[n]))
			n++;
		int64_t x;
		if (s[n] != '(')
			return fail(p, s, "expected a counter name");
		p->p = s + n + 1;
		if (parse_int(p, &x) || *p->p != ')')
			return fail(p, p->p, "expected a counter value");
		p->p++;
		int *dst = word_is(s, n, "vmcnt") ? &vm : word_is(s, n, "expcnt") ? &exp
			 : word_is(s, n, "lgkmcnt") ? &lgkm : NULL;
		if (!dst)
			return fail(p, s, "invalid counter name");
		int max = dst == &exp ? 7 : dst == &vm ? 63 : ISA_TARGET(p->t) == TA_TARGET_GFX1100 ? 63 : 15;
		if (x < 0 || x > max)
			return fail(p, s, "too large value for counter");
		*dst = (int)x;
		skip_ws(p);
		if (*p->p == '&' || *p->p == ',') {
			if (*p->p == ',' && !isalpha((unsigned char)p->p[1]) && p->p[1] != ' ')
				break;
			const char *save = p->p;
			p->p++;
			skip_ws(p);
			if (!isalpha((unsigned char)*p->p)) {
				p->p = save;
				break;
			}
			continue;
		}
		if (!isalpha((unsigned char)*p->p))
			break;
	}
	*v = isa_waitcnt_encode(p->t, vm, exp, lgkm);
	return 0;
}

/* s_waitcnt_depctr name(value) fields, space separated (isa_depctr_fields). */
static int parse_depctr(P *p, int64_t *v)
{
	unsigned val = 0xffff & ~0x60u;
	for (;;) {
		const char *s = p->p;
		size_t n = 0;
		while (is_id(s[n]))
			n++;
		int f = -1;
		for (int i = 0; i < 7 && f < 0; i++)
			if (word_is(s, n, isa_depctr_fields[i].name))
				f = i;
		if (f < 0 || s[n] != '(')
			return fail(p, s, "invalid s_waitcnt_depctr field");
		int64_t x;
		p->p = s + n + 1;
		unsigned m = (1u << isa_depctr_fields[f].width) - 1;
		if (parse_int(p, &x) || *p->p != ')' || x < 0 || x > m)
			return fail(p, s, "invalid s_waitcnt_depctr field value");
		p->p++;
		val = (val & ~(m << isa_depctr_fields[f].lo)) | (unsigned)x << isa_depctr_fields[f].lo;
		skip_ws(p);
		if (strncmp(p->p, "depctr_", 7))
			break;
	}
	*v = val;
	return 0;
}

static int parse_delay(P *p, int64_t *v)
{
	if (isdigit((unsigned char)*p->p))
		return parse_int(p, v);
	unsigned val = 0;
	for (;;) {
		const char *s = p->p;
		size_t n = 0;
		while (is_id(s[n]))
			n++;
		if (s[n] != '(')
			return fail(p, s, "expected instid0, instskip or instid1");
		const char *a = s + n + 1;
		size_t an = 0;
		while (is_id(a[an]))
			an++;
		if (a[an] != ')')
			return fail(p, a, "expected ')'");
		int x;
		if (word_is(s, n, "instid0") && (x = lookup_name(isa_delay_id_names, 12, a, an)) >= 0)
			val |= (unsigned)x;
		else if (word_is(s, n, "instskip") && (x = lookup_name(isa_delay_skip_names, 6, a, an)) >= 0)
			val |= (unsigned)x << 4;
		else if (word_is(s, n, "instid1") && (x = lookup_name(isa_delay_id_names, 12, a, an)) >= 0)
			val |= (unsigned)x << 7;
		else
			return fail(p, s, "invalid s_delay_alu field");
		p->p = a + an + 1;
		skip_ws(p);
		if (*p->p != '|')
			break;
		p->p++;
		skip_ws(p);
	}
	*v = val;
	return 0;
}

static int parse_sendmsg(P *p, int64_t *v)
{
	if (isdigit((unsigned char)*p->p))
		return parse_int(p, v);
	const char *at = p->p;
	if (strncmp(p->p, "sendmsg(", 8))
		return fail(p, p->p, "expected sendmsg(...)");
	p->p += 8;
	/* sendmsg(id, op, stream) in numbers, or llvm-mc's symbolic text (ISA_SENDMSG lines;
	 * a GS message's stream may be left out for 0), compared in its spacing */
	char txt[96] = "sendmsg(";
	size_t tl = 8;
	int64_t f[3] = {0, 0, 0};
	int nf = 0, named = 0;
	for (;;) {
		skip_ws(p);
		const char *s = p->p;
		size_t n = 0;
		while (is_id(s[n]))
			n++;
		if (!n || nf == 3 || tl + n + 4 > sizeof txt)
			return fail(p, s, "invalid message id");
		if (isdigit((unsigned char)*s)) {
			if (parse_int(p, &f[nf]))
				return fail(p, s, "invalid message id");
		} else
			named = 1, p->p = s + n;
		memcpy(txt + tl, s, (size_t)(p->p - s));
		tl += (size_t)(p->p - s);
		nf++;
		skip_ws(p);
		if (*p->p == ')')
			break;
		if (*p->p != ',')
			return fail(p, p->p, "expected ')'");
		p->p++;
		memcpy(txt + tl, ", ", 2);
		tl += 2;
	}
	p->p++;
	txt[tl++] = ')';
	int g11 = ISA_TARGET(p->t) == TA_TARGET_GFX1100;
	if (named) {
		int x = isa_sendmsg_value(p->t, txt, tl);
		if (x < 0 && tl + 3 < sizeof txt) { /* stream 0 left out */
			memcpy(txt + tl - 1, ", 0)", 4);
			x = isa_sendmsg_value(p->t, txt, tl + 3);
		}
		if (x < 0)
			return fail(p, at, "invalid message: not a message, operation and stream llvm-mc takes on this GPU");
		*v = x;
		return 0;
	}
	if (nf != 3 || f[0] < 0 || f[0] > (g11 ? 255 : 15) || f[1] < 0 || f[1] > 7 || f[2] < 0 || f[2] > 3)
		return fail(p, at, "invalid message id, operation or stream");
	*v = f[0] | f[1] << 4 | f[2] << 8;
	return 0;
}

/* An integer in [lo, hi] between optional blanks, else msg at its start. */
static int int_in(P *p, int64_t lo, int64_t hi, int64_t *v, const char *msg)
{
	skip_ws(p);
	const char *q = p->p;
	if (parse_int(p, v) || *v < lo || *v > hi)
		return fail(p, q, msg);
	skip_ws(p);
	return 0;
}

/* hwreg(NAME or id [, offset, size]) or a 16-bit integer: s_getreg/s_setreg's simm16. */
static int parse_hwreg(P *p, int64_t *v)
{
	const char *at = p->p;
	if (strncmp(p->p, "hwreg(", 6)) {
		if (parse_int(p, v))
			return fail(p, at, "expected hwreg(...)");
		if (*v < 0 || *v > 65535)
			return fail(p, at, "invalid immediate: only 16-bit values are legal");
		return 0;
	}
	p->p += 6;
	skip_ws(p);
	const char *s = p->p;
	size_t n = 0;
	while (is_id(s[n]))
		n++;
	int64_t id, off = 0, size = 32;
	if (n && !isdigit((unsigned char)*s)) {
		if ((id = isa_hwreg_id(p->t, s, n)) < 0)
			return fail(p, s, "invalid hardware register: not supported on this GPU");
		p->p = s + n;
	} else if (parse_int(p, &id) || id < 0 || id > 63)
		return fail(p, s, "invalid hardware register: only 6-bit values are legal");
	skip_ws(p);
	if (*p->p == ',') {
		p->p++;
		if (int_in(p, 0, 31, &off, "invalid bit offset: only 5-bit values are legal"))
			return -1;
		if (*p->p != ',')
			return fail(p, p->p, "expected a comma");
		p->p++;
		if (int_in(p, 1, 32, &size, "invalid bitfield width: only values from 1 to 32 are legal"))
			return -1;
	}
	if (*p->p != ')')
		return fail(p, p->p, "expected ')'");
	p->p++;
	*v = id | off << 6 | (size - 1) << 11;
	return 0;
}

/* One operand for signature entry s. */
static int parse_operand(P *p, unsigned sg, IsaType ty, IsaOperand *o, int *neg, int *abs)
{
	unsigned role = SIG_ROLE(sg);
	const char *at = p->p;
	int64_t v;
	*neg = *abs = 0;
	switch (role) {
	case ISA_R_WAIT:
		if (parse_waitcnt(p, &v))
			return fail(p, at, "invalid s_waitcnt operand");
		*o = isa_imm((int32_t)v);
		return 0;
	case ISA_R_DELAY:
		if (parse_delay(p, &v))
			return -1;
		*o = isa_imm((int32_t)v);
		return 0;
	case ISA_R_MSG: case ISA_R_HWREG:
		if ((role == ISA_R_MSG ? parse_sendmsg : parse_hwreg)(p, &v))
			return -1;
		*o = isa_imm((int32_t)v);
		return 0;
	case ISA_R_I32: /* an integer; llvm-mc reads 1.0 here as 0, so floats are refused */
		if (parse_int(p, &v) || *p->p == '.')
			return fail(p, at, "invalid operand for instruction: expected an integer");
		if (v < INT32_MIN || v > UINT32_MAX)
			return fail(p, at, "invalid immediate: only 32-bit values are legal");
		*o = (IsaOperand){ISA_K_LIT, 1, 0, (int32_t)v, 0, 0};
		return 0;
	case ISA_R_K16: case ISA_R_I16: case ISA_R_SOFF: case ISA_R_LBL:
		if (role == ISA_R_K16 && !strncmp(p->p, "depctr_", 7)) {
			if (parse_depctr(p, &v))
				return -1;
			*o = isa_imm((int32_t)v);
			return 0;
		}
		if (!parse_int(p, &v)) {
			if (v < INT32_MIN || v > UINT32_MAX)
				return fail(p, at, "invalid immediate: out of range");
			*o = isa_imm((int32_t)v);
			return 0;
		}
		if (role == ISA_R_LBL && (isalpha((unsigned char)*p->p) || *p->p == '_' || *p->p == '.')) {
			size_t n = 0;
			while (is_id(p->p[n]))
				n++;
			*o = (IsaOperand){ISA_K_LABEL, 1, 0, 0, p->p, (uint16_t)n};
			p->p += n;
			return 0;
		}
		if (role != ISA_R_SOFF)
			return fail(p, at, "expected an immediate");
		break;
	default:
		break;
	}
	/* Modifiers on sources: -x, |x|, -|x|, neg(x), abs(x). */
	int negfn = 0, absfn = 0;
	if (!strncmp(p->p, "neg(", 4))
		*neg = 1, negfn = 1, p->p += 4;
	else if (*p->p == '-' && !isdigit((unsigned char)p->p[1]) && p->p[1] != '.')
		*neg = 1, p->p++;
	if (!strncmp(p->p, "abs(", 4))
		*abs = 1, absfn = 1, p->p += 4;
	int absbar = 0;
	if (*p->p == '|')
		*abs = 1, absbar = 1, p->p++;
	int r = parse_reg(p, o);
	if (r < 0)
		return -1;
	if (!r) {
		const char *s = p->p;
		if (!(isdigit((unsigned char)*s) || *s == '-' || *s == '.'))
			return fail(p, at, "invalid operand for instruction");
		char *end;
		int isfloat = 0;
		for (const char *q = s + (*s == '-'); isdigit((unsigned char)*q) || *q == '.' || *q == 'e'; q++)
			if (*q == '.')
				isfloat = 1;
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
			isfloat = 0;
		if (s[0] == '-' && s[1] == '0' && (s[2] == 'x' || s[2] == 'X'))
			isfloat = 0;
		uint32_t bits;
		if (isfloat) {
			double d = strtod(s, &end);
			bits = float_bits(ty, d);
		} else {
			int64_t x;
			if (parse_int(p, &x))
				return fail(p, at, "invalid operand for instruction");
			end = (char *)p->p;
			if (x < INT32_MIN || x > (int64_t)UINT32_MAX)
				return fail(p, at, "invalid immediate: only 32-bit values are legal");
			bits = (uint32_t)x;
			if ((ty == ISA_TY_F16 || ty == ISA_TY_B16) && (x < -32768 || x > 65535) && role != ISA_R_K32)
				return fail(p, at, "invalid immediate: only 16-bit values are legal");
		}
		p->p = end;
		if (role == ISA_R_K32 || role == ISA_R_SOFF)
			*o = (IsaOperand){role == ISA_R_K32 ? ISA_K_LIT : ISA_K_IMM, 1, 0, (int32_t)bits, 0, 0};
		else if (isfloat && (ty == ISA_TY_B16 || ty == ISA_TY_PKI16))
			*o = isa_const_u32(ISA_TY_F16, bits); /* 1.0 is an inline constant even for int16 ops */
		else
			*o = isa_const_u32(ty, bits);
		if (o->kind == ISA_K_LIT && (ty == ISA_TY_F16 || ty == ISA_TY_B16 || ty == ISA_TY_PK16 ||
					      ty == ISA_TY_PKI16))
			o->imm &= 0xffff;
	}
	if (absbar) {
		if (*p->p != '|')
			return fail(p, p->p, "expected '|'");
		p->p++;
	}
	for (int k = 0; k < absfn + negfn; k++) {
		if (*p->p != ')')
			return fail(p, p->p, "expected ')'");
		p->p++;
	}
	return 0;
}

/* [a,b,c]: bit i = element i; bits past the list are `fill` (op_sel_hi defaults to 1). */
static int parse_bits(P *p, uint8_t *out, unsigned fill)
{
	if (*p->p != '[')
		return fail(p, p->p, "expected '['");
	p->p++;
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		if (*p->p != '0' && *p->p != '1')
			return fail(p, p->p, "expected 0 or 1");
		v |= (unsigned)(*p->p - '0') << i;
		p->p++;
		if (*p->p == ']')
			break;
		if (*p->p != ',')
			return fail(p, p->p, "expected ','");
		p->p++;
	}
	if (*p->p != ']')
		return fail(p, p->p, "expected ']'");
	p->p++;
	int cnt = 0;
	for (const char *q = p->p - 2; *q != '['; q--)
		cnt += *q == '0' || *q == '1';
	if (fill)
		v |= 7u & ~((1u << cnt) - 1);
	*out = (uint8_t)v;
	return 0;
}

static int mod_int(P *p, const char *at, int64_t lo, int64_t hi, int64_t *v)
{
	if (parse_int(p, v))
		return fail(p, at, "expected a number after ':'");
	if (*v < lo || *v > hi)
		return fail(p, at, "invalid modifier value: out of range");
	return 0;
}

/* Swizzle macro of ds_swizzle_b32: offset:swizzle(MODE,...). */
static int parse_swizzle(P *p, int32_t *off)
{
	const char *at = p->p;
	p->p += 8; /* swizzle( */
	const char *s = p->p;
	size_t n = 0;
	while (is_id(s[n]))
		n++;
	p->p = s + n;
	int64_t a[4] = {0, 0, 0, 0};
	int na = 0;
	char mask[6] = {0};
	while (*p->p == ',') {
		p->p++;
		if (*p->p == '"') {
			const char *q = p->p + 1;
			if (strlen(q) < 6 || q[5] != '"')
				return fail(p, at, "invalid swizzle mask");
			memcpy(mask, q, 5);
			p->p = q + 6;
		} else if (na < 4 && !parse_int(p, &a[na]))
			na++;
		else
			return fail(p, at, "invalid swizzle macro");
	}
	if (*p->p != ')')
		return fail(p, at, "expected ')'");
	p->p++;
	if (word_is(s, n, "QUAD_PERM") && na == 4)
		*off = (int32_t)(0x8000 | (a[0] & 3) | (a[1] & 3) << 2 | (a[2] & 3) << 4 | (a[3] & 3) << 6);
	else if (word_is(s, n, "SWAP") && na == 1)
		*off = (int32_t)(31 | (a[0] & 31) << 10);
	else if (word_is(s, n, "REVERSE") && na == 1)
		*off = (int32_t)(31 | ((a[0] - 1) & 31) << 10);
	else if (word_is(s, n, "BROADCAST") && na == 2)
		*off = (int32_t)((~(a[0] - 1) & 31) | (a[1] & 31) << 5);
	else if (word_is(s, n, "BITMASK_PERM") && mask[0]) {
		unsigned and_m = 0, or_m = 0, xor_m = 0;
		for (int i = 0; i < 5; i++) {
			unsigned b = 1u << (4 - i);
			switch (mask[i]) {
			case '0': break;
			case '1': or_m |= b; break; /* forced to one */
			case 'p': and_m |= b; break;
			case 'i': and_m |= b, xor_m |= b; break;
			default: return fail(p, at, "invalid swizzle mask");
			}
		}
		*off = (int32_t)(and_m | or_m << 5 | xor_m << 10);
	} else
		return fail(p, at, "invalid swizzle macro");
	return 0;
}

/* A DPP lane control selects the DPP form of a VOP1/VOP2/VOPC mnemonic written
 * without a suffix (as llvm-mc does), and on gfx11 the VOP3 DPP form of a
 * VOP3/VOP3P mnemonic or of NAME_e64_dpp; with _e32/_e64 and with both
 * control kinds it is an error, so the text is never encoded without it. */
static int dpp_control(P *p, IsaInsn *in, const char *at, int enc)
{
	if (p->dpppos)
		return fail(p, at, "not a valid operand: more than one DPP control");
	p->dpppos = at;
	int g11 = ISA_TARGET(p->t) == TA_TARGET_GFX1100;
	if (enc == ISA_ENC_DPP8 && !g11)
		return fail(p, at, "not a valid operand: dpp8 is gfx11 only");
	IsaFmt f = isa_op_fmt(p->t, in->op);
	if (in->enc == ISA_ENC_SDWA)
		return fail(p, at, "not a valid operand: DPP and SDWA together");
	if (p->plain_e64)
		return fail(p, at, "invalid operand for instruction: DPP controls need the _e64_dpp form");
	if (ISA_ENC_IS_XDPP(in->enc) || f == ISA_FMT_VOP3 || f == ISA_FMT_VOP3P) {
		if (!g11)
			return fail(p, at, "not a valid operand: VOP3 DPP forms are gfx11 only");
		enc = enc == ISA_ENC_DPP8 ? ISA_ENC_E64_DPP8 : ISA_ENC_E64_DPP;
	} else if (f != ISA_FMT_VOP1 && f != ISA_FMT_VOP2 && f != ISA_FMT_VOPC)
		return fail(p, at, "not a valid operand: this instruction has no DPP form");
	else if (in->enc == ISA_ENC_E64)
		return fail(p, at, "invalid operand for instruction: DPP controls need the _e64_dpp form");
	else if (p->explicit_e32)
		return fail(p, at, "invalid operand for instruction: DPP controls need the _dpp form");
	in->enc = (uint8_t)enc;
	if (ISA_ENC_IS_DPP16(enc) && !(p->written & ISA_M_DPP16)) {
		p->written |= ISA_M_DPP16;
		p->wpos[__builtin_ctz(ISA_M_DPP16)] = at;
	}
	return 0;
}

/* An SDWA select (dst_sel, dst_unused, src0_sel, src1_sel, in that order, or
 * sext()) selects the SDWA form of a gfx9 VOP1/VOP2/VOPC mnemonic written
 * without a suffix or as NAME_sdwa; anywhere else it is an error. */
static int sdwa_control(P *p, IsaInsn *in, const char *at)
{
	IsaFmt f = isa_op_fmt(p->t, in->op);
	if (ISA_TARGET(p->t) == TA_TARGET_GFX1100)
		return fail(p, at, "not a valid operand: SDWA is gfx9 only");
	if (f != ISA_FMT_VOP1 && f != ISA_FMT_VOP2 && f != ISA_FMT_VOPC)
		return fail(p, at, "not a valid operand: this instruction has no SDWA form");
	if (in->enc != ISA_ENC_DEFAULT && in->enc != ISA_ENC_SDWA)
		return fail(p, at, "not a valid operand: SDWA selects on a non-SDWA form");
	if (p->explicit_e32)
		return fail(p, at, "invalid operand for instruction: SDWA selects need the _sdwa form");
	in->enc = ISA_ENC_SDWA;
	if (!(p->written & ISA_M_SDWA)) {
		p->written |= ISA_M_SDWA;
		p->wpos[__builtin_ctz(ISA_M_SDWA)] = at;
	}
	return 0;
}

/* Modifiers that only exist in the DPP16 form (row_mask, bank_mask, bound_ctrl). */
static int dpp16_only(P *p, IsaInsn *in, const char *at)
{
	if (ISA_ENC_IS_DPP8(in->enc))
		return fail(p, at, "invalid operand for instruction: not a dpp8 modifier");
	return 0;
}

/* Which ISA_M_* kind a modifier keyword writes (0: none or cache policy). */
static unsigned mod_kind(const char *s, size_t n, unsigned flags)
{
	static const struct {
		const char *name;
		unsigned kind;
	} k[] = {
		{"offset", ISA_M_OFFSET}, {"offset0", ISA_M_OFF01}, {"offset1", ISA_M_OFF01}, {"mul", ISA_M_OMOD},
		{"div", ISA_M_OMOD}, {"op_sel", ISA_M_OPSEL}, {"op_sel_hi", ISA_M_OPSELHI}, {"neg_lo", ISA_M_NEGLO},
		{"neg_hi", ISA_M_NEGLO}, {"cbsz", ISA_M_MAI}, {"abid", ISA_M_MAI}, {"blgp", ISA_M_MAI},
		{"row_mask", ISA_M_DPP16}, {"bank_mask", ISA_M_DPP16}, {"bound_ctrl", ISA_M_DPP16},
		{"fi", ISA_M_FI}, {"dpp8", ISA_M_DPP8}, {"clamp", ISA_M_CLAMP}, {"offen", ISA_M_OFFEN},
		{"idxen", ISA_M_IDXEN}, {"gds", ISA_M_GDS},
	};
	if (word_is(s, n, "neg"))
		return flags & ISA_F_MFMA ? ISA_M_NEGLO : 0;
	for (size_t i = 0; i < TA_ARRAY_LEN(k); i++)
		if (word_is(s, n, k[i].name))
			return k[i].kind;
	return 0;
}

static int parse_modifier(P *p, IsaInsn *in)
{
	IsaMods *m = &in->mod;
	const char *s = p->p;
	size_t n = 0;
	while (is_id(s[n]) && s[n] != '.')
		n++;
	if (!n)
		return fail(p, s, "invalid operand for instruction");
	p->p = s + n;
	unsigned kind = mod_kind(s, n, isa_ops[in->op].flags);
	/* llvm-mc refuses a modifier written twice, offsets after the cache
	 * policy, and offset1 before offset0 */
	if (p->nkw < 16) {
		for (int i = 0; i < p->nkw; i++)
			if (p->kwlen[i] == n && !memcmp(p->kw[i], s, n))
				return fail(p, s, "not a valid operand: duplicate modifier");
		p->kw[p->nkw] = s, p->kwlen[p->nkw++] = n;
	}
	if ((kind & (ISA_M_OFFSET | ISA_M_OFF01)) && (p->cpol_seen || (word_is(s, n, "offset0") && p->off1_seen)))
		return fail(p, s, "not a valid operand: out of order");
	if (p->sdwa_last && (kind & (ISA_M_CLAMP | ISA_M_OMOD)))
		return fail(p, s, "invalid operand for instruction: clamp/omod go before the SDWA selects");
	/* VOP3 DPP: the VOP3 modifiers come before the DPP control (llvm-mc) */
	if (p->dpppos && (kind & (ISA_M_CLAMP | ISA_M_OMOD | ISA_M_OPSEL | ISA_M_OPSELHI | ISA_M_NEGLO | ISA_M_NEGHI))) {
		if (ISA_ENC_IS_XDPP(in->enc))
			return fail(p, s, "invalid operand for instruction: VOP3 modifiers go before the DPP control");
		if (!p->v3late)
			p->v3late = s;
	}
	p->off1_seen |= word_is(s, n, "offset1");
	if (kind && !(p->written & kind)) {
		p->written |= kind;
		p->wpos[__builtin_ctz(kind)] = s;
	}
	int64_t v;
	int g11 = ISA_TARGET(p->t) == TA_TARGET_GFX1100, g942 = ISA_TARGET(p->t) == TA_TARGET_GFX942;
	if (*p->p == ':') {
		p->p++;
		if (word_is(s, n, "offset")) {
			p->offpos = s;
			if (!strncmp(p->p, "swizzle(", 8))
				return parse_swizzle(p, &m->offset);
			IsaFmt f = isa_op_fmt(p->t, in->op);
			int sgn = f == ISA_FMT_GLOBAL || f == ISA_FMT_SCRATCH;
			int64_t lo = sgn ? -4096 : 0;
			int64_t hi = sgn || f == ISA_FMT_MUBUF || f == ISA_FMT_FLAT ? 4095 : 65535;
			if (parse_int(p, &v))
				return fail(p, s, "expected a number after ':'");
			if (v < lo || v > hi)
				return fail(p, s, sgn ? "invalid offset: expected a 13-bit signed offset"
					: f == ISA_FMT_MUBUF || f == ISA_FMT_FLAT ? "invalid offset: expected a 12-bit unsigned offset"
							     : "invalid offset: expected a 16-bit unsigned offset");
			m->offset = (int32_t)v;
			return 0;
		}
		if (word_is(s, n, "offset0"))
			return mod_int(p, s, 0, 255, &v) ? -1 : (m->offset0 = (uint8_t)v, 0);
		if (word_is(s, n, "offset1"))
			return mod_int(p, s, 0, 255, &v) ? -1 : (m->offset1 = (uint8_t)v, 0);
		if (word_is(s, n, "mul")) {
			if (mod_int(p, s, 2, 4, &v) || v == 3)
				return fail(p, s, "invalid output modifier");
			m->omod = v == 2 ? 1 : 2;
			return 0;
		}
		if (word_is(s, n, "div")) {
			if (mod_int(p, s, 2, 2, &v))
				return -1;
			m->omod = 3;
			return 0;
		}
		if (word_is(s, n, "op_sel")) {
			const char *lb = p->p;
			if (parse_bits(p, &m->op_sel, 0))
				return -1;
			int cnt = 0;
			for (const char *q = lb; q < p->p; q++)
				cnt += *q == '0' || *q == '1';
			IsaFmt f = isa_op_fmt(p->t, in->op);
			int ns = in->nops - 1;
			if ((f == ISA_FMT_VOP3 || in->enc == ISA_ENC_E64 || in->enc == ISA_ENC_E64_DPP) && ns >= 1 && ns <= 3) {
				/* VOP3: element i selects source i, element nsrc the destination
				 * (bit 3); elements past that have no field (llvm-mc ignores them) */
				unsigned d = m->op_sel >> ns & 1;
				m->op_sel = (uint8_t)((m->op_sel & ((1u << ns) - 1)) | d << 3);
			}
			if (f == ISA_FMT_VOP3P && ns >= 1 && ns <= 3) /* llvm-mc ignores elements past the sources */
				m->op_sel &= (uint8_t)((1u << ns) - 1);
			(void)cnt;
			return 0;
		}
		if (word_is(s, n, "op_sel_hi"))
			{
			/* elements left out are 0 for the op's sources (llvm-mc), bits of
			 * sources it lacks keep their default */
			if (parse_bits(p, &m->op_sel_hi, 0))
				return -1;
			int ns = in->nops - 1;
			if (!(isa_ops[in->op].flags & ISA_F_MIX) && ns >= 0 && ns < 3)
				m->op_sel_hi |= (uint8_t)(7u & ~((1u << ns) - 1));
			return 0;
		}
		if (word_is(s, n, "neg_lo"))
			return parse_bits(p, &m->neg, 0);
		if (word_is(s, n, "neg_hi"))
			return parse_bits(p, &m->neg_hi, 0);
		if (word_is(s, n, "neg") && (isa_ops[in->op].flags & ISA_F_MFMA))
			return parse_bits(p, &m->blgp, 0); /* f64 MFMA */
		if (word_is(s, n, "cbsz"))
			return mod_int(p, s, 0, 7, &v) ? -1 : (m->cbsz = (uint8_t)v, 0);
		if (word_is(s, n, "abid"))
			return mod_int(p, s, 0, 15, &v) ? -1 : (m->abid = (uint8_t)v, 0);
		if (word_is(s, n, "blgp") && g942 && strstr(isa_ops[in->op].name[1], "f64") &&
		    (isa_ops[in->op].flags & ISA_F_MFMA))
			return fail(p, s, "invalid modifier: blgp is not supported (f64 MFMAs use neg:[...])");
		if (word_is(s, n, "blgp"))
			return mod_int(p, s, 0, 7, &v) ? -1 : (m->blgp = (uint8_t)v, 0);
		static const char *const selkw[4] = {"dst_sel", "dst_unused", "src0_sel", "src1_sel"};
		for (int i = 0; i < 4; i++)
			if (word_is(s, n, selkw[i])) {
				static const char *const sel[7] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"};
				static const char *const unused[3] = {"UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"};
				if (i + 1 <= p->sdwa_last)
					return fail(p, s, "invalid operand for instruction: SDWA select out of order");
				if (sdwa_control(p, in, s))
					return -1;
				p->sdwa_last = i + 1;
				int nv = i == 1 ? 3 : 7, def = i == 1 ? 2 : 6, sv = -1;
				const char *const *names = i == 1 ? unused : sel;
				size_t k = 0;
				while (is_id(p->p[k]))
					k++;
				for (int j = 0; j < nv; j++)
					if (word_is(p->p, k, names[j]))
						sv = j;
				if (sv < 0)
					return fail(p, p->p, "invalid SDWA select");
				p->p += k;
				uint8_t f = (uint8_t)(sv == def ? 0 : sv + 1);
				if (i == 0)
					m->dst_sel = f;
				else if (i == 1)
					m->dst_unused = f;
				else
					m->src_sel[i - 2] = f;
				return 0;
			}
		if (word_is(s, n, "row_mask"))
			return dpp16_only(p, in, s) || mod_int(p, s, 0, 15, &v) ? -1 : (m->row_mask = (uint8_t)v, 0);
		if (word_is(s, n, "bank_mask"))
			return dpp16_only(p, in, s) || mod_int(p, s, 0, 15, &v) ? -1 : (m->bank_mask = (uint8_t)v, 0);
		if (word_is(s, n, "bound_ctrl")) /* gfx9 encodes bound_ctrl:0 as 1 (llvm-mc) */
			return dpp16_only(p, in, s) || mod_int(p, s, 0, 1, &v) ? -1
				: (m->bound_ctrl = (uint8_t)(g11 ? v : 1), 0);
		if (word_is(s, n, "fi")) {
			if (!g11)
				return fail(p, s, "not a valid operand: fi is gfx11 only");
			return mod_int(p, s, 0, 1, &v) ? -1 : (m->fi = (uint8_t)v, 0);
		}
		if (word_is(s, n, "dpp8")) {
			if (dpp_control(p, in, s, ISA_ENC_DPP8))
				return -1;
			if (m->row_mask != 0xf || m->bank_mask != 0xf || m->bound_ctrl)
				return fail(p, s, "invalid operand for instruction: not a dpp8 modifier");
			if (*p->p != '[')
				return fail(p, p->p, "expected '['");
			uint32_t sel = 0;
			for (int i = 0; i < 8; i++) {
				p->p++;
				if (parse_int(p, &v) || v < 0 || v > 7)
					return fail(p, s, "invalid dpp8 lane select");
				sel |= (uint32_t)v << (3 * i);
				if (*p->p != (i == 7 ? ']' : ','))
					return fail(p, p->p, "invalid dpp8 value");
			}
			p->p++;
			m->dpp8 = sel;
			return 0;
		}
		if (word_is(s, n, "quad_perm")) {
			if (dpp_control(p, in, s, ISA_ENC_DPP))
				return -1;
			if (*p->p != '[')
				return fail(p, p->p, "expected '['");
			unsigned c = 0;
			for (int i = 0; i < 4; i++) {
				p->p++;
				if (parse_int(p, &v) || v < 0 || v > 3)
					return fail(p, s, "invalid quad_perm lane");
				c |= (unsigned)v << (2 * i);
				if (*p->p != (i == 3 ? ']' : ','))
					return fail(p, p->p, "invalid quad_perm");
			}
			p->p++;
			m->dpp_ctrl = (uint16_t)c;
			return 0;
		}
		static const struct {
			const char *name;
			unsigned base, lo, hi;
		} dpp[] = {
			{"row_shl", 0x100, 1, 15}, {"row_shr", 0x110, 1, 15}, {"row_ror", 0x120, 1, 15},
			{"row_share", 0x150, 0, 15}, {"row_xmask", 0x160, 0, 15},
		};
		for (size_t i = 0; i < TA_ARRAY_LEN(dpp); i++)
			if (word_is(s, n, dpp[i].name)) {
				if (mod_int(p, s, dpp[i].lo, dpp[i].hi, &v))
					return -1;
				if (i >= 3 && !g11)
					return fail(p, s, "not a valid operand on this GPU");
				if (dpp_control(p, in, s, ISA_ENC_DPP))
					return -1;
				m->dpp_ctrl = (uint16_t)(dpp[i].base + v);
				return 0;
			}
		if (word_is(s, n, "row_bcast")) {
			if (parse_int(p, &v) || (v != 15 && v != 31) || g11)
				return fail(p, s, "invalid row_bcast");
			if (dpp_control(p, in, s, ISA_ENC_DPP))
				return -1;
			m->dpp_ctrl = v == 15 ? 0x142 : 0x143;
			return 0;
		}
		static const char *const wave[4] = {"wave_shl", "wave_rol", "wave_shr", "wave_ror"};
		for (int i = 0; i < 4; i++)
			if (word_is(s, n, wave[i])) {
				if (mod_int(p, s, 1, 1, &v) || g11)
					return fail(p, s, "invalid DPP control");
				if (dpp_control(p, in, s, ISA_ENC_DPP))
					return -1;
				m->dpp_ctrl = (uint16_t)(0x130 + 4 * i);
				return 0;
			}
		return fail(p, s, "invalid modifier");
	}
	if (word_is(s, n, "row_mirror"))
		return dpp_control(p, in, s, ISA_ENC_DPP) ? -1 : (m->dpp_ctrl = 0x140, 0);
	if (word_is(s, n, "row_half_mirror"))
		return dpp_control(p, in, s, ISA_ENC_DPP) ? -1 : (m->dpp_ctrl = 0x141, 0);
	if (word_is(s, n, "clamp"))
		return m->clamp = 1, 0;
	if (word_is(s, n, "offen"))
		return m->offen = 1, 0;
	if (word_is(s, n, "idxen"))
		return m->idxen = 1, 0;
	if (word_is(s, n, "gds"))
		return m->gds = 1, 0;
	if (isa_op_fmt(p->t, in->op) != ISA_FMT_SMEM)
		p->cpol_seen = 1;
	if (g942 && isa_op_fmt(p->t, in->op) == ISA_FMT_SMEM && (word_is(s, n, "sc0") || word_is(s, n, "sc1") ||
								  word_is(s, n, "nt")))
		return fail(p, s, "invalid operand for instruction: gfx942 SMEM takes glc");
	if (!g942 && word_is(s, n, "glc"))
		return m->cpol |= ISA_CPOL_GLC, 0;
	if (!g942 && word_is(s, n, "slc"))
		return m->cpol |= ISA_CPOL_SLC, 0;
	if (g11 && word_is(s, n, "dlc"))
		return m->cpol |= ISA_CPOL_DLC, 0;
	if (ISA_TARGET(p->t) == TA_TARGET_GFX90A && word_is(s, n, "scc"))
		return m->cpol |= ISA_CPOL_SC1, 0;
	if (g942 && word_is(s, n, "sc0"))
		return m->cpol |= ISA_CPOL_SC0, 0;
	if (g942 && word_is(s, n, "sc1"))
		return m->cpol |= ISA_CPOL_SC1, 0;
	if (g942 && word_is(s, n, "nt"))
		return m->cpol |= ISA_CPOL_NT, 0;
	if (g942 && word_is(s, n, "glc") && isa_op_fmt(p->t, in->op) == ISA_FMT_SMEM)
		return m->cpol |= ISA_CPOL_GLC, 0;
	return fail(p, s, "invalid modifier for this instruction or GPU");
}

/* Operands and modifiers of one op (or one VOPD component: no modifiers). */
static int parse_body(P *p, IsaInsn *in, unsigned op, int first, int vopd)
{
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(p->t, op, sig), src = 0;
	IsaType ty = (IsaType)isa_ops[op].type;
	IsaFmt fmt = isa_op_fmt(p->t, op);
	for (int i = 0; i < n; i++) {
		skip_ws(p);
		if (i > 0) {
			if (*p->p != ',')
				return fail(p, p->p, *p->p && *p->p != ':' ? "invalid operand for instruction"
								       : "too few operands for instruction");
			p->p++;
			skip_ws(p);
		}
		if (!*p->p || (vopd && *p->p == ':'))
			return fail(p, p->p, "too few operands for instruction");
		int neg, abs, sext = 0;
		const char *at = p->p;
		IsaOperand *o = &in->ops[first + i];
		p->opos[first + i] = at;
		if (!strncmp(p->p, "sext(", 5)) { /* SDWA sign extension of an integer source */
			if (vopd || sdwa_control(p, in, at))
				return -1;
			sext = 1, p->p += 5;
		}
		if (parse_operand(p, sig[i], ty, o, &neg, &abs))
			return -1;
		if (sext && *p->p++ != ')')
			return fail(p, p->p - 1, "expected ')'");
		unsigned r = SIG_ROLE(sig[i]);
		int is_src = !(i == 0 && (r == ISA_R_VD || r == ISA_R_SD || r == ISA_R_LM || r == ISA_R_AVD ||
					   r == ISA_R_AD || r == ISA_R_WD)) &&
			     !(i == 1 && r == ISA_R_LM && fmt != ISA_FMT_VOPC) && r != ISA_R_K32;
		int mix = (isa_ops[op].flags & ISA_F_MIX) != 0;
		if ((neg || abs) && (!is_src || src >= 3 || (fmt == ISA_FMT_VOP3P && !mix)))
			return fail(p, at, "invalid operand for instruction: modifiers not allowed here");
		if (sext && (!is_src || src >= 2 || neg || abs))
			return fail(p, at, "invalid operand for instruction: sext not allowed here");
		if (is_src) {
			in->mod.sext |= (uint8_t)(sext << src);
			in->mod.neg |= (uint8_t)(neg << src);
			if (mix)
				in->mod.neg_hi |= (uint8_t)(abs << src); /* v_fma_mix: |x| is neg_hi */
			else
				in->mod.abs |= (uint8_t)(abs << src);
			src++;
		}
		if (p->p[0] && p->p[0] != ',' && p->p[0] != ' ' && p->p[0] != '\t' && !(vopd && p->p[0] == ':'))
			return fail(p, p->p, "invalid operand for instruction");
	}
	in->nops = (uint8_t)(first + n);
	if (vopd)
		return 0;
	for (;;) {
		skip_ws(p);
		if (!*p->p)
			break;
		if (*p->p == ',')
			return fail(p, p->p, "invalid operand for instruction");
		if (parse_modifier(p, in))
			return -1;
	}
	return 0;
}

/* Encodes (in already passed isa_check) into b; on failure copies the bare
 * message to msg. */
static int try_encode_into(ta_target t, const IsaInsn *in, uint8_t *b, char *msg, size_t cap)
{
	Diag d;
	diag_init(&d);
	d.max_errors = 1;
	IsaInsn tmp = *in; /* labels are resolved later by the assembler */
	for (int i = 0; i < tmp.nops; i++)
		if (tmp.ops[i].kind == ISA_K_LABEL)
			tmp.ops[i] = isa_imm(0);
	int n = isa_encode_checked(t, &tmp, b, &d);
	if (n < 0 && msg) {
		const char *txt = diag_text(&d), *e = strstr(txt, "error: ");
		snprintf(msg, cap, "%s", e ? e + 7 : txt);
		size_t l = strlen(msg);
		while (l && msg[l - 1] == '\n')
			msg[--l] = 0;
	}
	diag_free(&d);
	return n;
}

static int try_encode(ta_target t, const IsaInsn *in, char *msg, size_t cap)
{
	uint8_t b[16];
	int bad;
	if (isa_check(t, in, &bad)) {
		if (msg)
			snprintf(msg, cap, "%s", isa_check(t, in, &bad));
		return -1;
	}
	return try_encode_into(t, in, b, msg, cap);
}

/* A modifier the text wrote that in's encoding has no field for (even at its
 * default value: `op_sel_hi:[1,1]` on a VOP2 op): the message, and its kind in *k. */
static const char *unwritten_at(const P *p, const IsaInsn *in, int *k)
{
	unsigned cpol, extra = p->written & ~isa_mods_ok(p->t, in, &cpol);
	if (!extra)
		return NULL;
	*k = __builtin_ctz(extra);
	return (extra & (ISA_M_DPP16 | ISA_M_FI | ISA_M_DPP8)) && in->enc == ISA_ENC_DEFAULT
		? "not a valid operand: DPP modifiers without a DPP control"
		: "not a valid operand: modifier not supported by this instruction's encoding";
}

static int unwritten(const P *p, const IsaInsn *in)
{
	int k;
	return unwritten_at(p, in, &k) != NULL;
}

/* llvm-mc takes _e64 on every VOP3/VOP3P/MAI instruction and _e32 on every one
 * that has no VOP3 form at all (SALU, memory; v_readlane/v_writelane, which it
 * models as VOP2): the suffix names the only encoding there is. */
static int suffix_is_plain(IsaFmt fmt, unsigned op, int enc)
{
	int lane = op == ISA_V_READLANE_B32 || op == ISA_V_WRITELANE_B32;
	int vop3 = (fmt == ISA_FMT_VOP3 || fmt == ISA_FMT_VOP3P || fmt == ISA_FMT_MAI) && !lane;
	if (enc == ISA_ENC_E64)
		return vop3;
	if (enc == ISA_ENC_DEFAULT) /* _e32 */
		return !vop3 && fmt != ISA_FMT_VOP1 && fmt != ISA_FMT_VOP2 && fmt != ISA_FMT_VOPC && fmt != ISA_FMT_VOPD;
	return 0;
}

static const char *mnemonic_end(const char *s)
{
	while (is_id(*s) && *s != '.')
		s++;
	return s;
}

/* Parses "mnemonic operands modifiers" into in; on failure p->err is set. */
static int parse_one(P *p, IsaInsn *in, int vopd_part)
{
	const char *mn = p->p, *me = mnemonic_end(mn);
	size_t len = (size_t)(me - mn);
	uint16_t cands[4];
	int nc = isa_lookup(p->t, mn, len, cands, 4), enc = ISA_ENC_DEFAULT, explicit_enc = 0;
	if (!nc && len > 8 && !strncmp(me - 8, "_e64_dpp", 8) && (nc = isa_lookup(p->t, mn, len - 8, cands, 4)) > 0)
		enc = ISA_ENC_E64_DPP, explicit_enc = 1;
	if (!nc && len > 5 && !strncmp(me - 5, "_sdwa", 5) && ISA_TARGET(p->t) != TA_TARGET_GFX1100 &&
	    (nc = isa_lookup(p->t, mn, len - 5, cands, 4)) > 0)
		enc = ISA_ENC_SDWA, explicit_enc = 1;
	if (!nc && len > 4) {
		const char *suf = me - 4;
		int e = !strncmp(suf, "_e32", 4) ? ISA_ENC_DEFAULT : !strncmp(suf, "_e64", 4) ? ISA_ENC_E64
		      : !strncmp(suf, "_dpp", 4) ? ISA_ENC_DPP : -1;
		if (e >= 0 && (nc = isa_lookup(p->t, mn, len - 4, cands, 4)) > 0)
			enc = e, explicit_enc = 1;
	}
	if (!nc) {
		if (len > 7 && !strncmp(mn, "v_dual_", 7) && !vopd_part && isa_lookup(p->t, mn, len, cands, 1))
			return fail(p, mn, "invalid VOPD instruction");
		static const ta_target all[3] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100};
		for (int i = 0; i < 3; i++)
			if (isa_lookup(all[i], mn, len, cands, 1) ||
			    (len > 4 && mn[len - 4] == '_' && isa_lookup(all[i], mn, len - 4, cands, 1)))
				return fail(p, mn, "instruction not supported on this GPU");
		return fail(p, mn, "invalid instruction");
	}
	const char *body = me;
	const char *best_err = NULL, *best_at = NULL;
	const int enc0 = enc, explicit0 = explicit_enc;
	for (int c = 0; c < nc; c++) {
		unsigned op = cands[c];
		IsaFmt fmt = isa_op_fmt(p->t, op);
		enc = enc0, explicit_enc = explicit0;
		p->plain_e64 = 0;
		if (explicit_enc && suffix_is_plain(fmt, op, enc))
			p->plain_e64 = enc == ISA_ENC_E64, enc = ISA_ENC_DEFAULT, explicit_enc = 0;
		if (explicit_enc && !(fmt == ISA_FMT_VOP1 || fmt == ISA_FMT_VOP2 || fmt == ISA_FMT_VOPC) &&
		    !(enc == ISA_ENC_E64_DPP && (fmt == ISA_FMT_VOP3 || fmt == ISA_FMT_VOP3P))) {
			p->err = NULL;
			fail(p, mn, "invalid instruction");
			continue;
		}
		if ((fmt == ISA_FMT_VOPD) != (vopd_part != 0)) {
			p->err = NULL;
			fail(p, mn, fmt == ISA_FMT_VOPD ? "VOPD component must be paired with '::'" : "invalid instruction");
			if (!best_err)
				best_err = p->err, best_at = p->err_at;
			continue;
		}
		p->p = body;
		p->err = NULL;
		p->offpos = NULL;
		p->dpppos = NULL;
		p->v3late = NULL;
		p->sdwa_last = 0;
		p->explicit_e32 = explicit_enc && enc == ISA_ENC_DEFAULT;
		p->written = 0;
		p->nkw = p->cpol_seen = p->off1_seen = 0;
		IsaInsn tmp;
		if (vopd_part == 2) {
			tmp = *in;
			if (parse_body(p, &tmp, op, in->nops, 1) == 0) {
				tmp.op_y = (uint16_t)op;
				*in = tmp;
				return 0;
			}
		} else {
			isa_insn_init(&tmp, op);
			tmp.enc = (uint8_t)enc;
			if (parse_body(p, &tmp, op, 0, vopd_part) == 0) {
				if (vopd_part) {
					*in = tmp;
					return 0;
				}
				int bad;
				const char *m = isa_check(p->t, &tmp, &bad);
				if (!m && (tmp.enc == ISA_ENC_DPP || ISA_ENC_IS_XDPP(tmp.enc)) && !p->dpppos)
					m = "too few operands for instruction: _dpp needs a DPP control", bad = -1;
				if (!explicit_enc && (tmp.enc == ISA_ENC_DEFAULT || (!p->v3late && (tmp.enc == ISA_ENC_DPP ||
				    tmp.enc == ISA_ENC_DPP8))) && (fmt == ISA_FMT_VOP1 || fmt == ISA_FMT_VOP2 || fmt == ISA_FMT_VOPC) &&
				    (m || unwritten(p, &tmp) || try_encode_into(p->t, &tmp, p->bytes, NULL, 0) < 0)) {
					/* promote when only the VOP3 form (or the VOP3 DPP form) takes the operands */
					IsaInsn e64 = tmp;
					e64.enc = tmp.enc == ISA_ENC_DEFAULT ? ISA_ENC_E64
						: tmp.enc == ISA_ENC_DPP ? ISA_ENC_E64_DPP : ISA_ENC_E64_DPP8;
					if (!unwritten(p, &e64) && try_encode(p->t, &e64, NULL, 0) >= 0)
						tmp = e64, m = NULL;
				}
				if (!m) {
					int k = -1;
					if ((m = unwritten_at(p, &tmp, &k)) != NULL) {
						p->err = NULL;
						fail(p, p->wpos[k], m);
						goto next;
					}
				}
				if (!m && (p->len = try_encode_into(p->t, &tmp, p->bytes, p->errbuf, sizeof p->errbuf)) < 0) {
					/* Encoding constraints (literals, offsets, e32 operand rules). */
					m = p->errbuf;
					bad = -1;
					const char *at = mn;
					if (strstr(m, "literal"))
						for (int i = 0; i < tmp.nops; i++)
							if (tmp.ops[i].kind == ISA_K_LIT) {
								at = p->opos[i];
								break;
							}
					if (strstr(m, "offset") && p->offpos)
						at = p->offpos;
					p->err = NULL;
					fail(p, at, m);
				} else if (m) {
					p->err = NULL;
					fail(p, bad >= 0 && bad < tmp.nops ? p->opos[bad] : mn, m);
				} else {
					*in = tmp;
					return 0;
				}
			}
		}
	next:
		if (!best_err || (p->err_at && best_at && p->err_at > best_at))
			best_err = p->err, best_at = p->err_at;
	}
	p->err = best_err;
	p->err_at = best_at;
	return -1;
}

int isa_parse_insn(ta_target t, const char *text, IsaInsn *out, const SrcFile *src, SrcPos pos, Diag *d)
{
	uint8_t b[16];
	int len;
	return isa_parse_encode(t, text, out, b, &len, src, pos, d);
}

int isa_parse_encode(ta_target t, const char *text, IsaInsn *out, uint8_t bytes[16], int *len,
		     const SrcFile *src, SrcPos pos, Diag *d)
{
	P p = {.t = t, .s = text, .p = text, .src = src, .pos = pos};
	skip_ws(&p);
	if (isa_tidx(t) < 0) {
		diag_at(d, DIAG_ERROR, src, pos, "not an AMD target");
		return -1;
	}
	const char *sep = strstr(text, "::");
	int rc;
	if (sep) {
		rc = parse_one(&p, out, 1);
		if (!rc) {
			skip_ws(&p);
			if (strncmp(p.p, "::", 2))
				rc = fail(&p, p.p, "invalid operand for instruction");
			else {
				p.p += 2;
				skip_ws(&p);
				rc = parse_one(&p, out, 2);
				if (!rc) {
					skip_ws(&p);
					if (*p.p)
						rc = fail(&p, p.p, "invalid operand for instruction");
				}
				if (!rc) {
					int bad;
					const char *m = isa_check(t, out, &bad);
					if (m || (p.len = try_encode_into(t, out, p.bytes, p.errbuf, sizeof p.errbuf)) < 0)
						rc = fail(&p, text, m ? m : p.errbuf);
				}
			}
		}
	} else
		rc = parse_one(&p, out, 0);
	if (rc) {
		const char *at = p.err_at ? p.err_at : text;
		SrcPos ep = {pos.line, pos.col + (int)(at - text)};
		diag_at(d, DIAG_ERROR, src, ep, "%s", p.err ? p.err : "invalid instruction");
		memset(out, 0, sizeof *out);
		return -1;
	}
	memcpy(bytes, p.bytes, 16);
	*len = p.len;
	return 0;
}
