/* print.c — instructions as LLVM AMDGPU assembly text, exactly as llvm-mc-19
 * prints them (mnemonic suffixes, operand spellings, modifier order). */
#include <stdio.h>
#include <string.h>

#include "isa.h"
#include "isa_impl.h"

static const char *const special_names[ISA_SP_NUM] = {
	"vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "m0", "null", "src_scc", "src_vccz", "src_execz",
	"flat_scratch_lo", "flat_scratch_hi",
};

static void print_reg(StrBuf *sb, char c, int r, int n)
{
	if (n <= 1)
		sb_printf(sb, "%c%d", c, r);
	else
		sb_printf(sb, "%c[%d:%d]", c, r, r + n - 1);
}

static const char *const float_consts[9] = {"0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0",
					     "0.15915494"};

static const uint16_t f16_consts[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};

static void print_operand(StrBuf *sb, const IsaOperand *o, IsaType ty)
{
	switch (o->kind) {
	case ISA_K_SGPR:
		if (o->reg >= ISA_TTMP_BASE && o->count == 1)
			sb_printf(sb, "ttmp%d", o->reg - ISA_TTMP_BASE);
		else if (o->reg >= ISA_TTMP_BASE)
			sb_printf(sb, "ttmp[%d:%d]", o->reg - ISA_TTMP_BASE, o->reg - ISA_TTMP_BASE + o->count - 1);
		else
			print_reg(sb, 's', o->reg, o->count);
		break;
	case ISA_K_VGPR: print_reg(sb, 'v', o->reg, o->count); break;
	case ISA_K_AGPR: print_reg(sb, 'a', o->reg, o->count); break;
	case ISA_K_SPECIAL:
		if (o->count == 2 && o->reg == ISA_SP_VCC_LO)
			sb_puts(sb, "vcc");
		else if (o->count == 2 && o->reg == ISA_SP_EXEC_LO)
			sb_puts(sb, "exec");
		else if (o->count == 2 && o->reg == ISA_SP_FLAT_SCRATCH_LO)
			sb_puts(sb, "flat_scratch");
		else
			sb_puts(sb, o->reg < ISA_SP_NUM ? special_names[o->reg] : "?");
		break;
	case ISA_K_CONST:
		if (o->reg >= 128 && o->reg <= 192)
			sb_printf(sb, "%d", o->reg - 128);
		else if (o->reg >= 193 && o->reg <= 208)
			sb_printf(sb, "%d", 192 - o->reg);
		else if (o->reg >= 240 && o->reg <= 248 && ty == ISA_TY_B16)
			sb_printf(sb, "0x%x", f16_consts[o->reg - 240]); /* 16-bit integer operands: hex */
		else if (o->reg == 248 && (ty == ISA_TY_F64 || ty == ISA_TY_B64))
			sb_puts(sb, "0.15915494309189532");
		else if (o->reg >= 240 && o->reg <= 248)
			sb_puts(sb, float_consts[o->reg - 240]);
		else
			sb_printf(sb, "src_%d", o->reg);
		break;
	case ISA_K_LIT: sb_printf(sb, "0x%x", (uint32_t)o->imm); break;
	case ISA_K_IMM: sb_printf(sb, "%d", o->imm); break;
	case ISA_K_LABEL:
		if (o->sym)
			sb_putn(sb, o->sym, o->sym_len);
		else
			sb_printf(sb, "%d", o->imm);
		break;
	case ISA_K_OFF: sb_puts(sb, "off"); break;
	}
}

void isa_waitcnt_decode(ta_target t, uint16_t v, int *vm, int *exp, int *lgkm)
{
	if (ISA_TARGET(t) == TA_TARGET_GFX1100) {
		*vm = v >> 10 & 63, *exp = v & 7, *lgkm = v >> 4 & 63;
	} else {
		*vm = (v & 15) | (v >> 14 & 3) << 4, *exp = v >> 4 & 7, *lgkm = v >> 8 & 15;
	}
}

uint16_t isa_waitcnt_encode(ta_target t, int vm, int exp, int lgkm)
{
	if (ISA_TARGET(t) == TA_TARGET_GFX1100)
		return (uint16_t)((vm & 63) << 10 | (lgkm & 63) << 4 | (exp & 7));
	return (uint16_t)((vm & 15) | (vm >> 4 & 3) << 14 | (exp & 7) << 4 | (lgkm & 15) << 8);
}

static void print_waitcnt(ta_target t, StrBuf *sb, uint16_t v)
{
	int vm, exp, lgkm, g11 = ISA_TARGET(t) == TA_TARGET_GFX1100;
	isa_waitcnt_decode(t, v, &vm, &exp, &lgkm);
	int all = vm == 63 && exp == 7 && lgkm == (g11 ? 63 : 15);
	const char *sep = "";
	if (all || vm != 63)
		sb_printf(sb, "vmcnt(%d)", vm), sep = " ";
	if (all || exp != 7)
		sb_printf(sb, "%sexpcnt(%d)", sep, exp), sep = " ";
	if (all || lgkm != (g11 ? 63 : 15))
		sb_printf(sb, "%slgkmcnt(%d)", sep, lgkm);
}

/* gfx11 s_waitcnt_depctr fields in LLVM's order: name, low bit, width (the
 * default is all ones).  LLVM prints the value symbolically when it has no
 * bits outside these fields (5 and 6), the fields at their defaults left out
 * unless all are, and in hex otherwise. */
const IsaDepctrField isa_depctr_fields[7] = {
	{"depctr_hold_cnt", 7, 1}, {"depctr_sa_sdst", 0, 1}, {"depctr_va_vdst", 12, 4}, {"depctr_va_sdst", 9, 3},
	{"depctr_va_ssrc", 8, 1},  {"depctr_va_vcc", 1, 1},  {"depctr_vm_vsrc", 2, 3},
};

static void print_depctr(StrBuf *sb, unsigned v)
{
	if (v & 0x60) {
		sb_printf(sb, "0x%x", v);
		return;
	}
	int nondef = 0;
	for (int i = 0; i < 7; i++) {
		unsigned m = (1u << isa_depctr_fields[i].width) - 1;
		nondef |= (v >> isa_depctr_fields[i].lo & m) != m;
	}
	const char *sep = "";
	for (int i = 0; i < 7; i++) {
		unsigned m = (1u << isa_depctr_fields[i].width) - 1, x = v >> isa_depctr_fields[i].lo & m;
		if (x != m || !nondef)
			sb_printf(sb, "%s%s(%u)", sep, isa_depctr_fields[i].name, x), sep = " ";
	}
}

const char *const isa_delay_id_names[12] = {
	"NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1",
	"TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2", "SALU_CYCLE_3"};
const char *const isa_delay_skip_names[6] = {"SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"};

static void print_delay(StrBuf *sb, uint16_t v)
{
	unsigned id0 = v & 15, skip = v >> 4 & 7, id1 = v >> 7 & 15;
	const char *sep = "";
	if (!v || id0 > 11 || skip > 5 || id1 > 11 || v >> 11) {
		sb_printf(sb, "%u", v);
		return;
	}
	if (id0)
		sb_printf(sb, "instid0(%s)", isa_delay_id_names[id0]), sep = " | ";
	if (skip)
		sb_printf(sb, "%sinstskip(%s)", sep, isa_delay_skip_names[skip]), sep = " | ";
	if (id1)
		sb_printf(sb, "%sinstid1(%s)", sep, isa_delay_id_names[id1]);
}

/* llvm-mc's symbolic text, else the fields (gfx11: the id only), else the number. */
static void print_sendmsg(ta_target t, StrBuf *sb, uint16_t v)
{
	const char *txt = isa_sendmsg_text(t, v);
	if (txt)
		sb_puts(sb, txt);
	else if (!isa_sendmsg_ok(t, v))
		sb_printf(sb, "%u", v);
	else if (ISA_TARGET(t) == TA_TARGET_GFX1100)
		sb_printf(sb, "sendmsg(%u, 0, 0)", v);
	else
		sb_printf(sb, "sendmsg(%u, %u, %u)", v & 15, v >> 4 & 7, v >> 8 & 3);
}

static void print_swizzle(StrBuf *sb, unsigned v)
{
	if ((v & 0xff00) == 0x8000) {
		sb_printf(sb, "swizzle(QUAD_PERM,%u,%u,%u,%u)", v & 3, v >> 2 & 3, v >> 4 & 3, v >> 6 & 3);
		return;
	}
	if (v & 0x8000) {
		sb_printf(sb, "%u", v);
		return;
	}
	unsigned and_m = v & 31, or_m = v >> 5 & 31, xor_m = v >> 10 & 31;
	if (and_m == 31 && or_m == 0 && xor_m && !(xor_m & (xor_m - 1))) {
		sb_printf(sb, "swizzle(SWAP,%u)", xor_m);
		return;
	}
	if (and_m == 31 && or_m == 0 && xor_m && !((xor_m + 1) & xor_m)) {
		sb_printf(sb, "swizzle(REVERSE,%u)", xor_m + 1);
		return;
	}
	unsigned gs = 1 + (~and_m & 31);
	if (gs > 1 && !(gs & (gs - 1)) && or_m < gs && xor_m == 0) {
		sb_printf(sb, "swizzle(BROADCAST,%u,%u)", gs, or_m);
		return;
	}
	sb_puts(sb, "swizzle(BITMASK_PERM,\"");
	for (int i = 4; i >= 0; i--) { /* lane bit = ((id & and) | or) ^ xor */
		unsigned a = and_m >> i & 1, o = or_m >> i & 1, x = xor_m >> i & 1;
		sb_putc(sb, o ? (x ? '0' : '1') : a ? (x ? 'i' : 'p') : (x ? '1' : '0'));
	}
	sb_puts(sb, "\")");
}

static void print_dpp8(StrBuf *sb, const IsaMods *m)
{
	sb_puts(sb, " dpp8:[");
	for (int i = 0; i < 8; i++)
		sb_printf(sb, "%s%u", i ? "," : "", m->dpp8 >> (3 * i) & 7);
	sb_puts(sb, m->fi ? "] fi:1" : "]");
}

static void print_dpp(ta_target t, StrBuf *sb, const IsaMods *m)
{
	unsigned c = m->dpp_ctrl;
	if (c <= 0xff)
		sb_printf(sb, " quad_perm:[%u,%u,%u,%u]", c & 3, c >> 2 & 3, c >> 4 & 3, c >> 6 & 3);
	else if (c >= 0x101 && c <= 0x10f)
		sb_printf(sb, " row_shl:%u", c & 15);
	else if (c >= 0x111 && c <= 0x11f)
		sb_printf(sb, " row_shr:%u", c & 15);
	else if (c >= 0x121 && c <= 0x12f)
		sb_printf(sb, " row_ror:%u", c & 15);
	else if (c == 0x130)
		sb_puts(sb, " wave_shl:1");
	else if (c == 0x134)
		sb_puts(sb, " wave_rol:1");
	else if (c == 0x138)
		sb_puts(sb, " wave_shr:1");
	else if (c == 0x13c)
		sb_puts(sb, " wave_ror:1");
	else if (c == 0x140)
		sb_puts(sb, " row_mirror");
	else if (c == 0x141)
		sb_puts(sb, " row_half_mirror");
	else if (c == 0x142)
		sb_puts(sb, " row_bcast:15");
	else if (c == 0x143)
		sb_puts(sb, " row_bcast:31");
	else if (c >= 0x150 && c <= 0x15f)
		sb_printf(sb, " row_share:%u", c & 15);
	else if (c >= 0x160 && c <= 0x16f)
		sb_printf(sb, " row_xmask:%u", c & 15);
	sb_printf(sb, " row_mask:0x%x bank_mask:0x%x", m->row_mask, m->bank_mask);
	if (m->bound_ctrl)
		sb_puts(sb, " bound_ctrl:1");
	if (m->fi && ISA_TARGET(t) == TA_TARGET_GFX1100)
		sb_puts(sb, " fi:1");
}

static void print_bits(StrBuf *sb, const char *name, unsigned v, int n)
{
	sb_printf(sb, " %s:[", name);
	for (int i = 0; i < n; i++)
		sb_printf(sb, "%s%u", i ? "," : "", v >> i & 1);
	sb_putc(sb, ']');
}

/* Operands of one instruction (or one VOPD component). */
static void print_operands(ta_target t, const IsaInsn *in, const IsaOperand *ops, const uint16_t *sig, int n,
			   IsaFmt fmt, StrBuf *sb)
{
	const IsaMods *m = &in->mod;
	IsaType ty = (IsaType)isa_ops[in->op].type;
	int mix = (isa_ops[in->op].flags & ISA_F_MIX) != 0; /* v_fma_mix: neg_lo/neg_hi print as -x / |x| */
	int src = 0, mods = fmt == ISA_FMT_VOP3 || in->enc == ISA_ENC_E64 || in->enc == ISA_ENC_DPP || mix ||
			     ISA_ENC_IS_XDPP(in->enc) || in->enc == ISA_ENC_SDWA;
	for (int i = 0; i < n; i++) {
		unsigned r = SIG_ROLE(sig[i]);
		const IsaOperand *o = &ops[i];
		sb_puts(sb, i ? ", " : " ");
		int is_src = i > 0 || (r != ISA_R_VD && r != ISA_R_SD && r != ISA_R_LM && r != ISA_R_AVD &&
				       r != ISA_R_AD && r != ISA_R_WD);
		if (i == 1 && r == ISA_R_LM && fmt != ISA_FMT_VOPC)
			is_src = 0;
		int neg = 0, abs = 0;
		if (is_src && mods && src < 3 && r != ISA_R_K32) {
			neg = m->neg >> src & 1;
			abs = (mix ? m->neg_hi : m->abs) >> src & 1;
		}
		if (is_src && r != ISA_R_K32)
			src++;
		int negf = neg && !abs && (o->kind == ISA_K_CONST || o->kind == ISA_K_LIT); /* llvm: neg(1.0), -|1.0| */
		int sext = is_src && in->enc == ISA_ENC_SDWA && src > 0 && src <= 2 && (m->sext >> (src - 1) & 1);
		if (sext)
			sb_puts(sb, "sext(");
		if (negf)
			sb_puts(sb, "neg(");
		else if (neg)
			sb_putc(sb, '-');
		if (abs)
			sb_putc(sb, '|');
		switch (r) {
		case ISA_R_K16:
			if (in->op == ISA_S_WAITCNT_DEPCTR)
				print_depctr(sb, (uint32_t)o->imm & 0xffff);
			else
				sb_printf(sb, "0x%x", (uint32_t)o->imm & 0xffff);
			break;
		case ISA_R_K32:
			sb_printf(sb, "0x%x", (uint32_t)o->imm);
			break;
		case ISA_R_SOFF:
			if (o->kind == ISA_K_IMM || o->kind == ISA_K_LIT) {
				if (o->imm < 0)
					sb_printf(sb, "-0x%x", (uint32_t)-o->imm);
				else
					sb_printf(sb, "0x%x", (uint32_t)o->imm);
			} else
				print_operand(sb, o, ty);
			break;
		case ISA_R_WAIT: print_waitcnt(t, sb, (uint16_t)o->imm); break;
		case ISA_R_DELAY: print_delay(sb, (uint16_t)o->imm); break;
		case ISA_R_MSG: print_sendmsg(t, sb, (uint16_t)o->imm); break;
		case ISA_R_HWREG: { /* hwreg(NAME) when the whole register is read, else with offset, size */
			uint32_t v = (uint32_t)o->imm & 0xffff, id = v & 63, off = v >> 6 & 31, sz = (v >> 11) + 1;
			const char *nm = isa_hwreg_name(t, id);
			if (nm)
				sb_printf(sb, "hwreg(%s", nm);
			else
				sb_printf(sb, "hwreg(%u", id);
			if (off || sz != 32)
				sb_printf(sb, ", %u, %u", off, sz);
			sb_putc(sb, ')');
			break;
		}
		case ISA_R_I32: { /* llvm: -16..64 decimal, others hex */
			int32_t v = o->imm;
			if (v >= -16 && v <= 64)
				sb_printf(sb, "%d", v);
			else
				sb_printf(sb, "0x%x", (uint32_t)v);
			break;
		}
		case ISA_R_I16: {
			uint32_t v = (uint32_t)o->imm & 0xffff; /* llvm: small values decimal, others hex */
			sb_printf(sb, v <= 64 ? "%u" : "0x%x", v);
			break;
		}
		default: /* a one-dword source of a 64-bit op (s_bitcmp0_b64's bit index) is a 32-bit value */
			print_operand(sb, o, ISA_SIG_CNT(sig[i]) == 1 && (ty == ISA_TY_B64 || ty == ISA_TY_F64) ? ISA_TY_B32 : ty);
			break;
		}
		if (abs)
			sb_putc(sb, '|');
		if (negf)
			sb_putc(sb, ')');
		if (sext)
			sb_putc(sb, ')');
	}
}

static const char *const sdwa_sel_name[8] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "?"};
static const char *const sdwa_unused_name[4] = {"UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "?"};

/* SDWA: clamp/omod, then every select (llvm-mc prints them all). */
static void print_sdwa(IsaFmt fmt, const IsaMods *m, StrBuf *sb)
{
	if (m->clamp)
		sb_puts(sb, " clamp");
	if (m->omod)
		sb_puts(sb, m->omod == 1 ? " mul:2" : m->omod == 2 ? " mul:4" : " div:2");
	if (fmt != ISA_FMT_VOPC)
		sb_printf(sb, " dst_sel:%s dst_unused:%s", sdwa_sel_name[ISA_SDWA_SEL(m->dst_sel) & 7],
			  sdwa_unused_name[ISA_SDWA_UNUSED(m->dst_unused) & 3]);
	sb_printf(sb, " src0_sel:%s", sdwa_sel_name[ISA_SDWA_SEL(m->src_sel[0]) & 7]);
	if (fmt != ISA_FMT_VOP1)
		sb_printf(sb, " src1_sel:%s", sdwa_sel_name[ISA_SDWA_SEL(m->src_sel[1]) & 7]);
}

static void print_fields(ta_target t, const IsaInsn *in, IsaFmt fmt, const uint16_t *sig, int n, StrBuf *sb);

void isa_print(ta_target t, const IsaInsn *in, StrBuf *sb)
{
	int ti = isa_tidx(t);
	if (in->op >= ISA_NUM_OPS || ti < 0 || !isa_ops[in->op].name[ti]) {
		sb_puts(sb, "<unknown>");
		return;
	}
	const IsaOpInfo *oi = &isa_ops[in->op];
	IsaFmt fmt = oi->fmt[ti];
	const IsaMods *m = &in->mod;
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(t, in->op, sig);

	sb_puts(sb, oi->name[ti]);
	if (ISA_ENC_IS_XDPP(in->enc))
		sb_puts(sb, "_e64_dpp");
	else if (in->enc == ISA_ENC_SDWA)
		sb_puts(sb, "_sdwa");
	else if (in->enc == ISA_ENC_E64)
		sb_puts(sb, "_e64");
	else if ((in->enc == ISA_ENC_DPP || in->enc == ISA_ENC_DPP8) && fmt != ISA_FMT_VOPC)
		sb_puts(sb, "_dpp"); /* gfx11 VOPC DPP prints the bare name (llvm-mc) */
	else if (in->enc == ISA_ENC_DPP || in->enc == ISA_ENC_DPP8)
		;
	else if (isa_has_suffix(t, in->op))
		sb_puts(sb, "_e32");
	if (fmt == ISA_FMT_VOPD) {
		print_operands(t, in, in->ops, sig, n, fmt, sb);
		uint16_t sy[ISA_MAX_SIG];
		int ny = isa_sig(t, in->op_y, sy);
		sb_puts(sb, " :: ");
		sb_puts(sb, isa_ops[in->op_y].name[ti] ? isa_ops[in->op_y].name[ti] : "?");
		print_operands(t, in, in->ops + n, sy, ny, fmt, sb);
		return;
	}
	print_operands(t, in, in->ops, sig, n, fmt, sb);
	if (in->enc == ISA_ENC_E64 || (ISA_ENC_IS_XDPP(in->enc) && fmt != ISA_FMT_VOP3P))
		fmt = ISA_FMT_VOP3;
	if (in->enc == ISA_ENC_SDWA) {
		print_sdwa(fmt, m, sb);
		return;
	}
	print_fields(t, in, fmt, sig, n, sb);
	if (in->enc == ISA_ENC_E64_DPP) /* VOP3 DPP: the DPP dword's fields after the VOP3 ones */
		print_dpp(t, sb, m);
	else if (in->enc == ISA_ENC_E64_DPP8)
		print_dpp8(sb, m);
}

/* Modifier fields of the instruction's encoding (fmt: VOP3 for _e64 forms). */
static void print_fields(ta_target t, const IsaInsn *in, IsaFmt fmt, const uint16_t *sig, int n, StrBuf *sb)
{
	const IsaOpInfo *oi = &isa_ops[in->op];
	const IsaMods *m = &in->mod;
	int g11 = ISA_TARGET(t) == TA_TARGET_GFX1100, g942 = ISA_TARGET(t) == TA_TARGET_GFX942;

	switch (fmt) {
	case ISA_FMT_VOP1: case ISA_FMT_VOP2: case ISA_FMT_VOPC:
		if (in->enc == ISA_ENC_DPP)
			print_dpp(t, sb, m);
		if (in->enc == ISA_ENC_DPP8)
			print_dpp8(sb, m);
		break;
	case ISA_FMT_VOP3:
		if (m->op_sel) /* sources, then dst (always bit 3) */
			print_bits(sb, "op_sel", (m->op_sel & ((1u << (n - 1)) - 1)) | (m->op_sel >> 3 & 1) << (n - 1), n);
		if (m->clamp)
			sb_puts(sb, " clamp");
		if (m->omod)
			sb_puts(sb, m->omod == 1 ? " mul:2" : m->omod == 2 ? " mul:4" : " div:2");
		break;
	case ISA_FMT_VOP3P: {
		int ns = n - 1;
		unsigned hi_def = oi->flags & ISA_F_MIX ? 0 : (1u << ns) - 1;
		if (oi->flags & ISA_F_WMMA) {
			if ((m->op_sel_hi & hi_def) != hi_def)
				print_bits(sb, "op_sel_hi", m->op_sel_hi, ns);
			if (m->neg)
				print_bits(sb, "neg_lo", m->neg, ns);
			if (m->neg_hi)
				print_bits(sb, "neg_hi", m->neg_hi, ns);
			if (m->clamp)
				sb_puts(sb, " clamp");
			break;
		}
		if (m->op_sel)
			print_bits(sb, "op_sel", m->op_sel, ns);
		if ((m->op_sel_hi & ((1u << ns) - 1)) != hi_def)
			print_bits(sb, "op_sel_hi", m->op_sel_hi, ns);
		if (m->neg && !(oi->flags & ISA_F_MIX))
			print_bits(sb, "neg_lo", m->neg, ns);
		if (m->neg_hi && !(oi->flags & ISA_F_MIX))
			print_bits(sb, "neg_hi", m->neg_hi, ns);
		if (m->clamp)
			sb_puts(sb, " clamp");
		break;
	}
	case ISA_FMT_MAI:
		if ((oi->flags & ISA_F_MFMA) && g942 && strstr(oi->name[isa_tidx(t)], "f64")) {
			if (m->blgp) /* f64 MFMAs reuse blgp as source negation */
				print_bits(sb, "neg", m->blgp, 3);
			break;
		}
		if (m->cbsz)
			sb_printf(sb, " cbsz:%u", m->cbsz);
		if (m->abid)
			sb_printf(sb, " abid:%u", m->abid);
		if (m->blgp)
			sb_printf(sb, " blgp:%u", m->blgp);
		break;
	case ISA_FMT_SMEM:
		if (m->cpol & ISA_CPOL_GLC)
			sb_puts(sb, " glc");
		if (m->cpol & ISA_CPOL_DLC)
			sb_puts(sb, " dlc");
		break;
	case ISA_FMT_DS:
		if (oi->flags & ISA_F_SWIZZLE) {
			if (m->offset) {
				sb_puts(sb, " offset:");
				print_swizzle(sb, (unsigned)m->offset);
			}
		} else if (oi->flags & ISA_F_DS2) {
			if (m->offset0)
				sb_printf(sb, " offset0:%u", m->offset0);
			if (m->offset1)
				sb_printf(sb, " offset1:%u", m->offset1);
		} else if (m->offset)
			sb_printf(sb, " offset:%d", m->offset);
		if (m->gds)
			sb_puts(sb, " gds");
		break;
	case ISA_FMT_GLOBAL: case ISA_FMT_MUBUF: case ISA_FMT_FLAT: case ISA_FMT_SCRATCH:
		if (fmt == ISA_FMT_MUBUF) {
			if (m->idxen)
				sb_puts(sb, " idxen");
			if (m->offen)
				sb_puts(sb, " offen");
		}
		if (m->offset)
			sb_printf(sb, " offset:%d", m->offset);
		if (g942) {
			if (m->cpol & ISA_CPOL_SC0)
				sb_puts(sb, " sc0");
			if (m->cpol & ISA_CPOL_NT)
				sb_puts(sb, " nt");
			if (m->cpol & ISA_CPOL_SC1)
				sb_puts(sb, " sc1");
		} else {
			if (m->cpol & ISA_CPOL_GLC)
				sb_puts(sb, " glc");
			if (m->cpol & ISA_CPOL_SLC)
				sb_puts(sb, " slc");
			if (g11 && (m->cpol & ISA_CPOL_DLC))
				sb_puts(sb, " dlc");
			if (!g11 && (m->cpol & ISA_CPOL_SC1))
				sb_puts(sb, " scc"); /* gfx90a: the bit gfx942 calls sc1 */
		}
		break;
	default:
		break;
	}
}

void isa_format_encoding_line(const char *text, const uint8_t *b, int n, StrBuf *sb)
{
	size_t len = strlen(text);
	sb_putc(sb, '\t');
	sb_puts(sb, text);
	for (size_t i = len; i < 39; i++)
		sb_putc(sb, ' ');
	sb_puts(sb, " ; encoding: [");
	for (int i = 0; i < n; i++)
		sb_printf(sb, "%s0x%02x", i ? "," : "", b[i]);
	sb_puts(sb, "]\n");
}
