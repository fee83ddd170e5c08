/* dec.c — machine code back to IsaInsn.  The format is recognised from the
 * high bits of the first dword, the opcode looked up in a per-target reverse
 * table built once from isa_ops, and the fields turned back into operands by
 * the same signature roles the encoder uses. */
#include <pthread.h>
#include <string.h>

#include "isa.h"
#include "isa_impl.h"

#define NFMT (ISA_FMT_SCRATCH + 1)
#define NOPC 1024
#define NONE 0xffff

/* rev[t][fmt][opc] = op; rtn[t][f][opc] = returning GLOBAL (f 0) or FLAT (f 1)
 * atomic sharing opc. */
static uint16_t rev[3][NFMT][NOPC];
static uint16_t rtn[3][2][128];
static pthread_once_t rev_once = PTHREAD_ONCE_INIT;

static void build_rev(void)
{
	memset(rev, 0xff, sizeof rev);
	memset(rtn, 0xff, sizeof rtn);
	for (unsigned op = 0; op < ISA_NUM_OPS; op++)
		for (int t = 0; t < 3; t++) {
			int opc = isa_ops[op].opc[t];
			if (opc < 0 || opc >= NOPC)
				continue;
			if (isa_ops[op].flags & ISA_F_RTN)
				rtn[t][isa_ops[op].fmt[t] == ISA_FMT_FLAT][opc & 127] = (uint16_t)op;
			else if (rev[t][isa_ops[op].fmt[t]][opc] == NONE)
				rev[t][isa_ops[op].fmt[t]][opc] = (uint16_t)op;
		}
}

/* Sign-extends the low `bits` bits of v (no shifts into the sign bit). */
static int32_t sext(uint32_t v, int bits)
{
	uint32_t m = 1u << (bits - 1);
	return (int32_t)((v ^ m) - m);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

typedef struct {
	ta_target t;
	const uint8_t *p;
	size_t n;
	int len;      /* bytes of the instruction without literal */
	int need_lit; /* a 255 source was seen */
	uint32_t lit;
	int bad;
	int sdwa;     /* SDWA: VGPR-only sources may be scalar codes */
} Dec;

/* A scalar/VALU source code as an operand of `count` registers. */
static IsaOperand from_code(Dec *c, unsigned code, int count, int areg)
{
	IsaOperand o = {0};
	o.count = 1;
	if (code >= 256) {
		o.kind = areg ? ISA_K_AGPR : ISA_K_VGPR;
		o.reg = (uint16_t)(code - 256);
		o.count = (uint8_t)count;
		return o;
	}
	if (isa_sgpr_ok(c->t, code, 1)) { /* s0.., ttmp0..15; isa_check refuses a range running past them */
		o.kind = ISA_K_SGPR;
		o.reg = (uint16_t)code;
		o.count = (uint8_t)count;
		return o;
	}
	if ((code >= 128 && code <= 208) || (code >= 240 && code <= 248)) {
		o.kind = ISA_K_CONST;
		o.reg = (uint16_t)code;
		return o;
	}
	if (code == 255) {
		c->need_lit = 1;
		o.kind = ISA_K_LIT;
		return o;
	}
	int s = isa_code_special(c->t, (int)code);
	if (s < 0 || (count == 2 && code & 1)) {
		c->bad = 1;
		return o;
	}
	o.kind = ISA_K_SPECIAL;
	o.reg = (uint16_t)s;
	o.count = (uint8_t)(count == 2 && (s == ISA_SP_VCC_LO || s == ISA_SP_EXEC_LO || s == ISA_SP_FLAT_SCRATCH_LO)
				    ? 2 : 1);
	return o;
}

static IsaOperand vreg(unsigned r, int n, int a)
{
	IsaOperand o = {0};
	o.kind = a ? ISA_K_AGPR : ISA_K_VGPR;
	o.reg = (uint16_t)r;
	o.count = (uint8_t)n;
	return o;
}

static IsaOperand lanemask(ta_target t)
{
	return isa_special(ISA_SP_VCC_LO, ISA_IS_W64(t) ? 2 : 1);
}

/* Fills VALU-style operands from dst and up to three source codes. */
static void fill_valu(Dec *c, IsaInsn *in, const uint16_t *sig, int n, unsigned dst, unsigned sdst,
		      const unsigned src[3], int e32, unsigned acc)
{
	int ns = 0;
	for (int i = 0; i < n; i++) {
		unsigned r = SIG_ROLE(sig[i]), cnt = SIG_CNT(sig[i]);
		IsaOperand *o = &in->ops[i];
		if (i == 0 && (r == ISA_R_VD || r == ISA_R_WD))
			*o = vreg(dst, (int)cnt, 0);
		else if (i == 0 && r == ISA_R_AD)
			*o = vreg(dst, (int)cnt, 1);
		else if (i == 0 && r == ISA_R_AVD)
			*o = vreg(dst, (int)cnt, acc & 4);
		else if (i == 0 && (r == ISA_R_SD || r == ISA_R_LM))
			*o = e32 && r == ISA_R_LM ? lanemask(c->t) : from_code(c, dst, (int)cnt, 0);
		else if (i == 1 && r == ISA_R_LM && !e32)
			*o = from_code(c, sdst, (int)cnt, 0);
		else if (r == ISA_R_LM && e32)
			*o = lanemask(c->t);
		else if (r == ISA_R_K32) {
			c->need_lit = 1;
			o->kind = ISA_K_LIT, o->count = 1;
		} else if (ns < 3) {
			unsigned code = src[ns];
			int areg = r == ISA_R_AS || (r == ISA_R_AVS && (acc >> ns & 1));
			if (r == ISA_R_AVS && ns == 2)
				areg = (acc & 4) != 0;
			if ((r == ISA_R_VV || r == ISA_R_WV || r == ISA_R_AS) && code < 256 && e32 && !c->sdwa)
				c->bad = 1;
			*o = from_code(c, code, (int)cnt, areg);
			if ((r == ISA_R_AS || r == ISA_R_AD) && o->kind != ISA_K_AGPR)
				c->bad = 1;
			ns++;
		}
	}
	in->nops = (uint8_t)n;
}

static int lookup(int ti, IsaFmt fmt, unsigned opc)
{
	if (opc >= NOPC)
		return -1;
	uint16_t op = rev[ti][fmt][opc];
	return op == NONE ? -1 : op;
}

/* gfx11 VOP3 DPP: src0 250 (DPP16) or 233/234 (DPP8, fi) with the DPP dword
 * after the two VOP3 words; 0 if src0 is an ordinary operand, -1 if truncated. */
static int xdpp_dword(Dec *c, IsaInsn *in, unsigned src[3])
{
	unsigned s0 = src[0];
	if (s0 != 250 && s0 != 233 && s0 != 234)
		return 0;
	if (c->n < 12)
		return -1;
	uint32_t w = get32(c->p + 8);
	IsaMods *m = &in->mod;
	c->len = 12;
	src[0] = 256 + (w & 0xff);
	if (s0 == 250) {
		in->enc = ISA_ENC_E64_DPP;
		m->dpp_ctrl = (uint16_t)(w >> 8 & 0x1ff);
		m->fi = w >> 18 & 1;
		m->bound_ctrl = w >> 19 & 1;
		m->bank_mask = w >> 24 & 15;
		m->row_mask = w >> 28 & 15;
	} else {
		in->enc = ISA_ENC_E64_DPP8;
		m->fi = s0 == 234;
		m->dpp8 = w >> 8;
	}
	return 1;
}

static int decode(Dec *c, IsaInsn *in)
{
	ta_target t = c->t;
	int ti = isa_tidx(t), g11 = ti == 2;
	if (ti < 0 || c->n < 4)
		return -1;
	uint32_t w0 = get32(c->p), w1 = c->n >= 8 ? get32(c->p + 4) : 0;
	uint16_t sig[ISA_MAX_SIG];
	int op, n;
	IsaMods *m = &in->mod;
	c->len = 4;

#define NEED8()                   \
	do {                      \
		if (c->n < 8)     \
			return -1; \
		c->len = 8;       \
	} while (0)
#define SETOP(fmt, opc)                               \
	do {                                          \
		if ((op = lookup(ti, fmt, opc)) < 0) \
			return -1;                    \
		isa_insn_init(in, (unsigned)op);      \
		n = isa_sig(t, (unsigned)op, sig);    \
	} while (0)

	unsigned hi9 = w0 >> 23;
	if (hi9 == 0x17D) { /* SOP1 */
		SETOP(ISA_FMT_SOP1, w0 >> 8 & 0xff);
		for (int i = 0; i < n; i++)
			in->ops[i] = from_code(c, SIG_ROLE(sig[i]) == ISA_R_SD ? w0 >> 16 & 0x7f : w0 & 0xff,
					       SIG_CNT(sig[i]), 0);
		in->nops = (uint8_t)n;
	} else if (hi9 == 0x17E) { /* SOPC */
		SETOP(ISA_FMT_SOPC, w0 >> 16 & 0x7f);
		in->ops[0] = from_code(c, w0 & 0xff, SIG_CNT(sig[0]), 0);
		in->ops[1] = from_code(c, w0 >> 8 & 0xff, SIG_CNT(sig[1]), 0);
		in->nops = 2;
	} else if (hi9 == 0x17F) { /* SOPP */
		SETOP(ISA_FMT_SOPP, w0 >> 16 & 0x7f);
		if (n) {
			unsigned r = SIG_ROLE(sig[0]);
			int32_t v = (int32_t)(w0 & 0xffff); /* llvm-mc prints branch offsets unsigned */
			(void)r;
			in->ops[0] = isa_imm(v);
		} else if (w0 & 0xffff)
			return -1;
		in->nops = (uint8_t)n;
	} else if ((w0 >> 28) == 0xB) { /* SOPK */
		SETOP(ISA_FMT_SOPK, w0 >> 23 & 0x1f);
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]);
			if (r == ISA_R_SD || r == ISA_R_SS)
				in->ops[i] = from_code(c, w0 >> 16 & 0x7f, 1, 0);
			else if (r == ISA_R_I32) {
				c->need_lit = 1;
				in->ops[i].kind = ISA_K_LIT, in->ops[i].count = 1;
			} else
				in->ops[i] = isa_imm((int32_t)(w0 & 0xffff));
		}
		in->nops = (uint8_t)n;
	} else if ((w0 >> 30) == 2) { /* SOP2 */
		SETOP(ISA_FMT_SOP2, w0 >> 23 & 0x7f);
		in->ops[0] = from_code(c, w0 >> 16 & 0x7f, SIG_CNT(sig[0]), 0);
		in->ops[1] = from_code(c, w0 & 0xff, SIG_CNT(sig[1]), 0);
		in->ops[2] = from_code(c, w0 >> 8 & 0xff, SIG_CNT(sig[2]), 0);
		in->nops = 3;
	} else if ((w0 >> 25) == 0x3F || (w0 >> 25) == 0x3E || !(w0 >> 31)) { /* VOP1 / VOPC / VOP2 */
		IsaFmt fmt = (w0 >> 25) == 0x3F ? ISA_FMT_VOP1 : (w0 >> 25) == 0x3E ? ISA_FMT_VOPC : ISA_FMT_VOP2;
		unsigned opc = fmt == ISA_FMT_VOP1 ? w0 >> 9 & 0xff : fmt == ISA_FMT_VOPC ? w0 >> 17 & 0xff : w0 >> 25;
		SETOP(fmt, opc);
		unsigned src[3] = {w0 & 0x1ff, 256 + (w0 >> 9 & 0xff), 0};
		unsigned dst = w0 >> 17 & 0xff, sdwa_sdst = 0;
		if ((w0 & 0x1ff) == 250) { /* DPP */
			NEED8();
			uint32_t dpp = w1;
			in->enc = ISA_ENC_DPP;
			src[0] = 256 + (dpp & 0xff);
			m->dpp_ctrl = (uint16_t)(dpp >> 8 & 0x1ff);
			m->fi = (uint8_t)(g11 ? dpp >> 18 & 1 : 0);
			m->bound_ctrl = dpp >> 19 & 1;
			m->neg = (uint8_t)((dpp >> 20 & 1) | (dpp >> 22 & 1) << 1);
			m->abs = (uint8_t)((dpp >> 21 & 1) | (dpp >> 23 & 1) << 1);
			m->bank_mask = dpp >> 24 & 15;
			m->row_mask = dpp >> 28 & 15;
			if ((fmt == ISA_FMT_VOPC && !g11) || (!g11 && (dpp >> 18 & 1)))
				return -1;
		} else if (!g11 && (w0 & 0x1ff) == 249) { /* SDWA */
			NEED8();
			uint32_t sw = w1;
			if (sw & (1u << 22 | 1u << 30))
				return -1;
			in->enc = ISA_ENC_SDWA;
			c->sdwa = 1;
			src[0] = (sw & 0xff) + (sw >> 23 & 1 ? 0 : 256);
			if (fmt != ISA_FMT_VOP1)
				src[1] = (w0 >> 9 & 0xff) + (sw >> 31 & 1 ? 0 : 256);
			unsigned sel0 = sw >> 16 & 7, sel1 = sw >> 24 & 7;
			m->src_sel[0] = (uint8_t)(sel0 == 6 ? 0 : sel0 + 1);
			m->src_sel[1] = (uint8_t)(fmt == ISA_FMT_VOP1 || sel1 == 6 ? 0 : sel1 + 1);
			m->sext = (uint8_t)((sw >> 19 & 1) | (sw >> 27 & 1) << 1);
			m->neg = (uint8_t)((sw >> 20 & 1) | (sw >> 28 & 1) << 1);
			m->abs = (uint8_t)((sw >> 21 & 1) | (sw >> 29 & 1) << 1);
			if (fmt == ISA_FMT_VOPC) {
				sdwa_sdst = sw >> 8 & 0xff;
			} else {
				unsigned ds = sw >> 8 & 7, du = sw >> 11 & 3;
				m->dst_sel = (uint8_t)(ds == 6 ? 0 : ds + 1);
				m->dst_unused = (uint8_t)(du == 2 ? 0 : du + 1);
				m->clamp = sw >> 13 & 1;
				m->omod = sw >> 14 & 3;
			}
		} else if (g11 && ((w0 & 0x1ff) == 233 || (w0 & 0x1ff) == 234)) { /* DPP8 (fi: 234) */
			NEED8();
			in->enc = ISA_ENC_DPP8;
			m->fi = (w0 & 0x1ff) == 234;
			src[0] = 256 + (w1 & 0xff);
			m->dpp8 = w1 >> 8;
		}
		if (fmt == ISA_FMT_VOP1)
			src[1] = 0;
		if (fmt == ISA_FMT_VOPC) {
			/* VOPC's vsrc1 sits where VOP2 has it; no vdst field. */
			dst = 0;
		}
		fill_valu(c, in, sig, n, dst, 0, src, 1, 0);
		if (fmt == ISA_FMT_VOP1 && n && SIG_ROLE(sig[0]) == ISA_R_SD)
			in->ops[0] = from_code(c, dst, 1, 0);
		if (sdwa_sdst & 0x80) /* SDWA compare writing an SGPR pair */
			in->ops[0] = from_code(c, sdwa_sdst & 0x7f, ISA_IS_W64(t) ? 2 : 1, 0);
		else if (sdwa_sdst)
			return -1;
		if (in->enc == ISA_ENC_SDWA && c->need_lit)
			return -1;
		if ((in->enc == ISA_ENC_DPP || in->enc == ISA_ENC_DPP8) && c->need_lit)
			return -1;
	} else if (!g11 && hi9 == 0x1A7) { /* gfx9 VOP3P / MAI */
		NEED8();
		unsigned opc = w0 >> 16 & 0x7f;
		if ((op = lookup(ti, ISA_FMT_MAI, opc)) >= 0) {
			isa_insn_init(in, (unsigned)op);
			n = isa_sig(t, (unsigned)op, sig);
			unsigned src[3] = {w1 & 0x1ff, w1 >> 9 & 0x1ff, w1 >> 18 & 0x1ff};
			unsigned acc = (w1 >> 27 & 1) | (w1 >> 28 & 1) << 1 | (w0 >> 15 & 1) << 2;
			if (isa_ops[op].flags & ISA_F_MFMA) {
				m->cbsz = w0 >> 8 & 7, m->abid = w0 >> 11 & 15, m->blgp = w1 >> 29 & 7;
			} else
				acc = 0;
			fill_valu(c, in, sig, n, w0 & 0xff, 0, src, 0, acc);
		} else {
			SETOP(ISA_FMT_VOP3P, opc);
			goto vop3p;
		}
	} else if ((!g11 && (w0 >> 26) == 0x34) || (g11 && (w0 >> 26) == 0x35)) { /* VOP3 */
		NEED8();
		unsigned opc = w0 >> 16 & 0x3ff;
		int e64 = 0;
		op = lookup(ti, ISA_FMT_VOP3, opc);
		if (op < 0) {
			IsaFmt f = opc < 0x100 ? ISA_FMT_VOPC : opc < 0x140 ? ISA_FMT_VOP2
				 : g11 ? (opc < 0x180 ? ISA_FMT_NONE : ISA_FMT_VOP1) : ISA_FMT_VOP1;
			unsigned base = f == ISA_FMT_VOPC ? 0 : f == ISA_FMT_VOP2 ? 0x100 : g11 ? 0x180 : 0x140;
			if (f == ISA_FMT_NONE || (op = lookup(ti, f, opc - base)) < 0)
				return -1;
			if (isa_ops[op].flags & ISA_F_NOE64)
				return -1;
			e64 = 1;
		}
		isa_insn_init(in, (unsigned)op);
		n = isa_sig(t, (unsigned)op, sig);
		if (e64)
			in->enc = ISA_ENC_E64;
		unsigned src[3] = {w1 & 0x1ff, w1 >> 9 & 0x1ff, w1 >> 18 & 0x1ff};
		int sd = n > 1 && SIG_ROLE(sig[1]) == ISA_R_LM;
		if (g11 && xdpp_dword(c, in, src) < 0)
			return -1;
		m->clamp = w0 >> 15 & 1;
		m->omod = w1 >> 27 & 3;
		m->neg = w1 >> 29 & 7;
		if (!sd) {
			m->abs = w0 >> 8 & 7;
			m->op_sel = w0 >> 11 & 15;
		}
		fill_valu(c, in, sig, n, w0 & 0xff, w0 >> 8 & 0x7f, src, 0, 0);
		if (c->need_lit && !g11)
			return -1;
	} else if (g11 && (w0 >> 24) == 0xCC) { /* gfx11 VOP3P */
		NEED8();
		SETOP(ISA_FMT_VOP3P, w0 >> 16 & 0x7f);
	vop3p:;
		unsigned src[3] = {w1 & 0x1ff, w1 >> 9 & 0x1ff, w1 >> 18 & 0x1ff};
		if (g11 && xdpp_dword(c, in, src) < 0)
			return -1;
		m->clamp = w0 >> 15 & 1;
		m->op_sel = w0 >> 11 & 7;
		m->op_sel_hi = (uint8_t)((w1 >> 27 & 3) | (w0 >> 14 & 1) << 2);
		m->neg_hi = w0 >> 8 & 7;
		m->neg = w1 >> 29 & 7;
		fill_valu(c, in, sig, n, w0 & 0xff, 0, src, 0, 0);
		if (c->need_lit && !g11)
			return -1;
	} else if (g11 && (w0 >> 26) == 0x32) { /* VOPD */
		NEED8();
		SETOP(ISA_FMT_VOPD, w0 >> 22 & 15);
		int opy = lookup(ti, ISA_FMT_VOPD, w0 >> 17 & 31);
		if (opy < 0 || (isa_ops[op].flags & ISA_F_VOPDY))
			return -1;
		in->op_y = (uint16_t)opy;
		uint16_t sy[ISA_MAX_SIG];
		int ny = isa_sig(t, (unsigned)opy, sy);
		unsigned sx[3] = {w0 & 0x1ff, 256 + (w0 >> 9 & 0xff), 0};
		unsigned syv[3] = {w1 & 0x1ff, 256 + (w1 >> 9 & 0xff), 0};
		unsigned dx = w1 >> 24, dy = (w1 >> 17 & 0x7f) << 1 | ((dx & 1) ^ 1);
		IsaInsn tmp;
		isa_insn_init(&tmp, (unsigned)opy);
		fill_valu(c, in, sig, n, dx, 0, sx, 1, 0);
		fill_valu(c, &tmp, sy, ny, dy, 0, syv, 1, 0);
		for (int i = 0; i < ny; i++)
			in->ops[n + i] = tmp.ops[i];
		in->nops = (uint8_t)(n + ny);
	} else if ((w0 >> 26) == 0x36) { /* DS */
		NEED8();
		unsigned opc = g11 ? w0 >> 18 & 0xff : w0 >> 17 & 0xff;
		SETOP(ISA_FMT_DS, opc);
		int acc = !g11 && (w0 >> 25 & 1);
		m->gds = (uint8_t)(g11 ? w0 >> 17 & 1 : w0 >> 16 & 1);
		unsigned off0 = w0 & 0xff, off1 = w0 >> 8 & 0xff;
		if (isa_ops[op].flags & ISA_F_DS2)
			m->offset0 = (uint8_t)off0, m->offset1 = (uint8_t)off1;
		else
			m->offset = (int32_t)(off1 << 8 | off0);
		int nd = 0;
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]), cnt = SIG_CNT(sig[i]);
			if (r == ISA_R_VD)
				in->ops[i] = vreg(w1 >> 24, (int)cnt, acc);
			else if (r == ISA_R_DA)
				in->ops[i] = vreg(w1 & 0xff, 1, 0);
			else
				in->ops[i] = vreg(nd++ ? w1 >> 16 & 0xff : w1 >> 8 & 0xff, (int)cnt, acc);
		}
		in->nops = (uint8_t)n;
	} else if ((w0 >> 26) == 0x37) { /* FLAT / GLOBAL */
		NEED8();
		unsigned seg = g11 ? w0 >> 16 & 3 : w0 >> 14 & 3;
		if (seg == 3)
			return -1;
		IsaFmt ff = seg == 2 ? ISA_FMT_GLOBAL : seg == 1 ? ISA_FMT_SCRATCH : ISA_FMT_FLAT;
		unsigned opc = w0 >> 18 & 0x7f;
		int glc = g11 ? w0 >> 14 & 1 : w0 >> 16 & 1;
		int rf = seg == 0; /* flat */
		op = glc && seg != 1 && rtn[ti][rf][opc] != NONE ? rtn[ti][rf][opc] : lookup(ti, ff, opc);
		if (op < 0)
			return -1;
		isa_insn_init(in, (unsigned)op);
		n = isa_sig(t, (unsigned)op, sig);
		if (g11)
			m->cpol = (uint8_t)((w0 >> 14 & 1 ? ISA_CPOL_GLC : 0) | (w0 >> 15 & 1 ? ISA_CPOL_SLC : 0) |
					    (w0 >> 13 & 1 ? ISA_CPOL_DLC : 0));
		else
			m->cpol = (uint8_t)((w0 >> 16 & 1 ? ISA_CPOL_GLC : 0) | (w0 >> 17 & 1 ? ISA_CPOL_SLC : 0) |
					    (w0 >> 25 & 1 ? ISA_CPOL_SC1 : 0));
		unsigned saddr = w1 >> 16 & 0x7f;
		int off = saddr == (g11 ? 0x7Cu : 0x7Fu);
		/* scratch uses vaddr: gfx11 sve bit, gfx942 bit 13, gfx90a whenever saddr is off */
		int sve = ff == ISA_FMT_SCRATCH && (g11 ? (int)(w1 >> 23 & 1) : ISA_TARGET(t) == TA_TARGET_GFX942 ? (int)(w0 >> 13 & 1) : off);
		if (!g11 && (w0 >> 13 & 1) && !(sve && ISA_TARGET(t) == TA_TARGET_GFX942))
			return -1; /* lds */
		m->offset = ff == ISA_FMT_FLAT ? (int32_t)(w0 & 0xfff) : sext(w0 & 0x1fff, 13);
		int acc = !g11 && (w1 >> 23 & 1);
		if (g11 && (w1 >> 23 & 1) && ff != ISA_FMT_SCRATCH)
			return -1; /* sve outside scratch */
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]), cnt = SIG_CNT(sig[i]);
			if (r == ISA_R_VD)
				in->ops[i] = vreg(w1 >> 24, (int)cnt, acc);
			else if (r == ISA_R_FA)
				in->ops[i] = vreg(w1 & 0xff, off ? 2 : 1, 0);
			else if (r == ISA_R_DD)
				in->ops[i] = vreg(w1 >> 8 & 0xff, (int)cnt, acc);
			else if (r == ISA_R_FS)
				in->ops[i] = off ? isa_off() : isa_sgpr((int)saddr, 2);
			else if (r == ISA_R_XA)
				in->ops[i] = sve ? vreg(w1 & 0xff, 1, 0) : isa_off();
			else if (r == ISA_R_XS)
				in->ops[i] = off ? isa_off() : from_code(c, saddr, 1, 0);
		}
		if (ff == ISA_FMT_FLAT) {
			for (int i = 0; i < n; i++)
				if (SIG_ROLE(sig[i]) == ISA_R_FA)
					in->ops[i] = vreg(w1 & 0xff, 2, 0);
		}
		in->nops = (uint8_t)n;
		if (ff == ISA_FMT_GLOBAL && !off && (saddr & 1 || !isa_sgpr_ok(t, saddr, 2)))
			return -1;
	} else if ((w0 >> 26) == 0x38) { /* MUBUF */
		NEED8();
		unsigned opc = g11 ? w0 >> 18 & 0xff : w0 >> 18 & 0x7f;
		SETOP(ISA_FMT_MUBUF, opc);
		if (!n && ((w0 & 0x3ffff) || w1)) /* buffer_gl*_inv take no operands or modifiers */
			return -1;
		m->offset = (int32_t)(w0 & 0xfff);
		if (g11) {
			m->cpol = (uint8_t)((w0 >> 14 & 1 ? ISA_CPOL_GLC : 0) | (w0 >> 13 & 1 ? ISA_CPOL_DLC : 0) |
					    (w0 >> 12 & 1 ? ISA_CPOL_SLC : 0));
			m->idxen = w1 >> 23 & 1, m->offen = w1 >> 22 & 1;
		} else {
			m->cpol = (uint8_t)((w0 >> 14 & 1 ? ISA_CPOL_GLC : 0) | (w0 >> 17 & 1 ? ISA_CPOL_SLC : 0) |
					    (w0 >> 15 & 1 ? ISA_CPOL_SC1 : 0));
			m->idxen = w0 >> 13 & 1, m->offen = w0 >> 12 & 1;
			if (w0 >> 16 & 1)
				return -1; /* lds */
		}
		int macc = !g11 && (w1 >> 23 & 1);
		for (int i = 0; i < n; i++) {
			unsigned r = SIG_ROLE(sig[i]), cnt = SIG_CNT(sig[i]);
			if (r == ISA_R_VD || r == ISA_R_DD)
				in->ops[i] = vreg(w1 >> 8 & 0xff, (int)cnt, macc);
			else if (r == ISA_R_MVA)
				in->ops[i] = m->offen || m->idxen ? vreg(w1 & 0xff, m->offen && m->idxen ? 2 : 1, 0)
								  : isa_off();
			else if (r == ISA_R_RSRC)
				in->ops[i] = isa_sgpr((int)(w1 >> 16 & 0x1f) * 4, 4);
			else if (r == ISA_R_MSO)
				in->ops[i] = from_code(c, w1 >> 24, 1, 0);
		}
		in->nops = (uint8_t)n;
	} else if ((g11 && (w0 >> 26) == 0x3D) || (!g11 && (w0 >> 26) == 0x30)) { /* SMEM */
		NEED8();
		SETOP(ISA_FMT_SMEM, w0 >> 18 & 0xff);
		in->ops[0] = from_code(c, w0 >> 6 & 0x7f, SIG_CNT(sig[0]), 0);
		in->ops[1] = isa_sgpr((int)(w0 & 0x3f) * 2, SIG_CNT(sig[1]));
		if (g11) {
			m->cpol = (uint8_t)((w0 >> 14 & 1 ? ISA_CPOL_GLC : 0) | (w0 >> 13 & 1 ? ISA_CPOL_DLC : 0));
			unsigned so = w1 >> 25;
			if (so == 0x7C && !(w1 & 0x1fffff))
				in->ops[2] = isa_special(ISA_SP_NULL, 1); /* llvm-objdump prints "null" */
			else if (so == 0x7C)
				in->ops[2] = isa_imm(sext(w1 & 0x1fffff, 21));
			else {
				if (w1 & 0x1fffff)
					return -1;
				in->ops[2] = from_code(c, so, 1, 0);
			}
		} else {
			m->cpol = w0 >> 16 & 1 ? ISA_CPOL_GLC : 0;
			if (w0 >> 14 & 1)
				return -1; /* soe: offset and soffset together */
			if (w0 >> 17 & 1)
				in->ops[2] = isa_imm((int32_t)(w1 & 0xfffff));
			else
				in->ops[2] = from_code(c, w1 & 0x7f, 1, 0);
		}
		in->nops = 3;
	} else
		return -1;
#undef NEED8
#undef SETOP

	if (c->bad)
		return -1;
	int len = c->len;
	if (c->need_lit) {
		if (c->n < (size_t)len + 4)
			return -1;
		uint32_t lit = get32(c->p + len);
		len += 4;
		IsaType ty = (IsaType)isa_ops[in->op].type;
		int lit16 = ty == ISA_TY_F16 || ty == ISA_TY_B16 || ty == ISA_TY_PK16 || ty == ISA_TY_PKI16;
		if (isa_ops[in->op].flags & ISA_F_MIX) { /* v_fma_mix: f16 only where op_sel_hi selects it */
			lit16 = 0;
			for (int i = 1; i < in->nops; i++)
				if (in->ops[i].kind == ISA_K_LIT && (in->mod.op_sel_hi >> (i - 1) & 1))
					lit16 = 1;
		}
		if (lit16 && (lit >> 16))
			return -1; /* 16-bit literals: llvm ignores the high half; we do not decode such bytes */
		for (int i = 0; i < in->nops; i++)
			if (in->ops[i].kind == ISA_K_LIT) {
				in->ops[i].imm = (int32_t)lit;
				if (i < n && SIG_ROLE(sig[i]) == ISA_R_I32)
					continue; /* always a literal */
				if (isa_inline_code(lit16 || !(isa_ops[in->op].flags & ISA_F_MIX) ? ty : ISA_TY_F32, lit) >= 0)
					return -1; /* an inlinable value as a literal: llvm prints it as the constant */
			}
	}
	return len;
}

int isa_decode(ta_target t, const uint8_t *p, size_t n, IsaInsn *out)
{
	pthread_once(&rev_once, build_rev);
	Dec c = {t, p, n, 0, 0, 0, 0, 0};
	memset(out, 0, sizeof *out);
	int len = decode(&c, out);
	if (len < 0) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	/* Accept only what we would encode back to the same bytes. */
	uint8_t buf[16];
	Diag d;
	diag_init(&d);
	d.max_errors = 1;
	int elen = isa_encode(t, out, buf, &d);
	diag_free(&d);
	if (elen != len || memcmp(buf, p, (size_t)len)) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	return len;
}
