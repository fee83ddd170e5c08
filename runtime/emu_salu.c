/* emu_salu.c — SALU (part of the emulator's instruction semantics). */
#include "emu_exec_impl.h"

/* ---- SALU --------------------------------------------------------------- */

static void swrite(EmuDevice *dev, EmuWave *w, int insn, const IsaOperand *o, uint64_t v, int n)
{
	int base = o->kind == ISA_K_SGPR ? o->reg : o->kind == ISA_K_SPECIAL ? special_sreg(o->reg) : -1;
	if (base < 0)
		return;
	for (int i = 0; i < n && base + i < ES_NSGPR; i++) {
		if (w->spend[base + i] && (dev->checks & EMU_CHECK_WAITCNT)) {
			emu_fail(dev, w, insn, "overwrites s%d while a load into it is still pending", base + i);
			return;
		}
		w->s[base + i] = (uint32_t)(v >> (32 * i));
		w->sinit[base + i] = 1;
		w->swrite_valu[base + i] = 0;
	}
}

static uint64_t sread(EmuWave *w, const IsaOperand *o, int n)
{
	int ty = n == 2 ? ISA_TY_B64 : ISA_TY_B32;
	uint64_t v = scalar_val(w, o, ty, 0);
	if (n == 2) {
		if (o->kind == ISA_K_CONST || o->kind == ISA_K_LIT)
			v = o->kind == ISA_K_LIT ? (uint64_t)(int64_t)o->imm : (uint64_t)scalar_val(w, o, ty, 1) << 32 | v;
		else
			v |= (uint64_t)scalar_val(w, o, ty, 1) << 32;
	}
	return v;
}

static int branch_to(EmuDevice *dev, EmuWave *w, int insn, int32_t simm)
{
	EmuKernel *k = dev->k;
	int64_t tgt = (int64_t)k->off[insn] + k->len[insn] + (int64_t)(int16_t)simm * 4; /* simm16, signed */
	if (tgt < 0 || tgt >= (int64_t)k->size || k->at[tgt / 4] < 0) {
		emu_fail(dev, w, insn, "branch to +0x%llx, which is not an instruction of the kernel", (long long)tgt);
		return -1;
	}
	w->pc = k->at[tgt / 4];
	dev->stats.branches++;
	return 0;
}

int exec_salu(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	unsigned op = in->op;
	const IsaOperand *o = in->ops;
	int w64 = isa_ops[op].type == ISA_TY_B64;
	int n = w64 ? 2 : 1;
	uint64_t a = 0, b = 0, res = 0;
	int scc = w->scc, wscc = (isa_ops[op].flags & ISA_F_WSCC) != 0;
	dev->stats.salu++;
	IsaFmt fmt = isa_op_fmt(dev->wt, op);
	if (fmt == ISA_FMT_SOP2) {
		a = sread(w, &o[1], o[1].count == 2 ? 2 : n);
		b = sread(w, &o[2], o[2].count == 2 ? 2 : (op == ISA_S_LSHL_B64 || op == ISA_S_LSHR_B64 || op == ISA_S_ASHR_I64 ||
							    op == ISA_S_BFE_U64 || op == ISA_S_BFE_I64) ? 1 : n);
	} else if (fmt == ISA_FMT_SOP1 && in->nops >= 2) {
		a = sread(w, &o[1], o[1].count == 2 ? 2 : n);
	} else if (fmt == ISA_FMT_SOPC) {
		a = sread(w, &o[0], o[0].count == 2 ? 2 : n);
		b = sread(w, &o[1], o[1].count == 2 ? 2 : (op == ISA_S_BITCMP0_B64 || op == ISA_S_BITCMP1_B64) ? 1 : n);
	}
	uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
	uint64_t ex = emu_exec_mask(w);
	int dst_n = n;
	switch (op) {
	/* SOP2 */
	case ISA_S_ADD_U32: res = (uint64_t)a32 + b32; scc = res >> 32 & 1; res = (uint32_t)res; break;
	case ISA_S_SUB_U32: res = (uint32_t)(a32 - b32); scc = b32 > a32; break;
	case ISA_S_ADD_I32: res = (uint32_t)(a32 + b32); scc = ((~(a32 ^ b32) & (a32 ^ (uint32_t)res)) >> 31) & 1; break;
	case ISA_S_SUB_I32: res = (uint32_t)(a32 - b32); scc = (((a32 ^ b32) & (a32 ^ (uint32_t)res)) >> 31) & 1; break;
	case ISA_S_ADDC_U32: res = (uint64_t)a32 + b32 + (uint64_t)w->scc; scc = res >> 32 & 1; res = (uint32_t)res; break;
	case ISA_S_SUBB_U32: res = (uint32_t)(a32 - b32 - (uint32_t)w->scc); scc = (uint64_t)b32 + (uint64_t)w->scc > a32; break;
	case ISA_S_MIN_I32: res = (uint32_t)((int32_t)a32 < (int32_t)b32 ? a32 : b32); scc = (int32_t)a32 < (int32_t)b32; break;
	case ISA_S_MIN_U32: res = a32 < b32 ? a32 : b32; scc = a32 < b32; break;
	case ISA_S_MAX_I32: res = (uint32_t)((int32_t)a32 > (int32_t)b32 ? a32 : b32); scc = (int32_t)a32 > (int32_t)b32; break;
	case ISA_S_MAX_U32: res = a32 > b32 ? a32 : b32; scc = a32 > b32; break;
	case ISA_S_CSELECT_B32: case ISA_S_CSELECT_B64: res = w->scc ? a : b; break;
	case ISA_S_AND_B32: case ISA_S_AND_B64: res = a & b; break;
	case ISA_S_OR_B32: case ISA_S_OR_B64: res = a | b; break;
	case ISA_S_XOR_B32: case ISA_S_XOR_B64: res = a ^ b; break;
	case ISA_S_ANDN2_B32: case ISA_S_ANDN2_B64: res = a & ~b; break;
	case ISA_S_ORN2_B32: case ISA_S_ORN2_B64: res = a | ~b; break;
	case ISA_S_NAND_B32: case ISA_S_NAND_B64: res = ~(a & b); break;
	case ISA_S_NOR_B32: case ISA_S_NOR_B64: res = ~(a | b); break;
	case ISA_S_XNOR_B32: case ISA_S_XNOR_B64: res = ~(a ^ b); break;
	case ISA_S_LSHL_B32: res = (uint32_t)(a32 << (b32 & 31)); break;
	case ISA_S_LSHR_B32: res = a32 >> (b32 & 31); break;
	case ISA_S_ASHR_I32: res = (uint32_t)((int32_t)a32 >> (b32 & 31)); break;
	case ISA_S_LSHL_B64: res = a << (b32 & 63); break;
	case ISA_S_LSHR_B64: res = a >> (b32 & 63); break;
	case ISA_S_ASHR_I64: res = (uint64_t)((int64_t)a >> (b32 & 63)); break;
	case ISA_S_BFM_B32: res = (uint32_t)(((1ull << (a32 & 31)) - 1) << (b32 & 31)); break;
	case ISA_S_MUL_I32: res = (uint32_t)(a32 * b32); break;
	case ISA_S_BFE_U32: { uint32_t off = b32 & 31, wd = b32 >> 16 & 0x7f; res = wd ? (a32 >> off) & (wd >= 32 ? ~0u : (1u << wd) - 1) : 0; scc = res != 0; break; }
	case ISA_S_BFE_I32: { uint32_t off = b32 & 31, wd = b32 >> 16 & 0x7f; res = wd ? (uint32_t)sext(a32 >> off, wd >= 32 ? 32 : (int)wd) : 0; scc = res != 0; break; }
	case ISA_S_BFE_U64: { uint32_t off = b32 & 63, wd = b32 >> 16 & 0x7f; res = wd ? (a >> off) & (wd >= 64 ? ~0ull : (1ull << wd) - 1) : 0; scc = res != 0; break; }
	case ISA_S_BFE_I64: { uint32_t off = b32 & 63, wd = b32 >> 16 & 0x7f; res = wd ? (uint64_t)((int64_t)((a >> off) << (64 - TA_MIN(wd, 64u))) >> (64 - TA_MIN(wd, 64u))) : 0; scc = res != 0; break; }
	case ISA_S_ABSDIFF_I32: { int32_t d = (int32_t)a32 - (int32_t)b32; res = (uint32_t)(d < 0 ? -d : d); scc = res != 0; break; }
	case ISA_S_MUL_HI_U32: res = (uint32_t)((uint64_t)a32 * b32 >> 32); break;
	case ISA_S_MUL_HI_I32: res = (uint32_t)((int64_t)(int32_t)a32 * (int32_t)b32 >> 32); break;
	case ISA_S_LSHL1_ADD_U32: case ISA_S_LSHL2_ADD_U32: case ISA_S_LSHL3_ADD_U32: case ISA_S_LSHL4_ADD_U32: {
		int sh = op == ISA_S_LSHL1_ADD_U32 ? 1 : op == ISA_S_LSHL2_ADD_U32 ? 2 : op == ISA_S_LSHL3_ADD_U32 ? 3 : 4;
		uint64_t t = ((uint64_t)a32 << sh) + b32;
		res = (uint32_t)t;
		scc = t >> 32 != 0;
		break;
	}
	case ISA_S_PACK_LL_B32_B16: res = (a32 & 0xffff) | b32 << 16; break;
	case ISA_S_PACK_LH_B32_B16: res = (a32 & 0xffff) | (b32 & 0xffff0000u); break;
	case ISA_S_PACK_HH_B32_B16: res = a32 >> 16 | (b32 & 0xffff0000u); break;
	/* SOP1 */
	case ISA_S_MOV_B32: case ISA_S_MOV_B64: res = a; break;
	case ISA_S_CMOV_B32: case ISA_S_CMOV_B64:
		if (!w->scc)
			goto done;
		res = a;
		break;
	case ISA_S_NOT_B32: case ISA_S_NOT_B64: res = ~a; break;
	case ISA_S_BREV_B32: { uint32_t y = 0; for (int i = 0; i < 32; i++) y |= (a32 >> i & 1) << (31 - i); res = y; break; }
	case ISA_S_BREV_B64: { uint64_t y = 0; for (int i = 0; i < 64; i++) y |= (a >> i & 1) << (63 - i); res = y; break; }
	case ISA_S_BCNT0_I32_B32: res = (uint32_t)(32 - __builtin_popcount(a32)); dst_n = 1; scc = res != 0; break;
	case ISA_S_BCNT1_I32_B32: res = (uint32_t)__builtin_popcount(a32); scc = res != 0; break;
	case ISA_S_BCNT1_I32_B64: res = (uint32_t)__builtin_popcountll(a); dst_n = 1; scc = res != 0; break;
	case ISA_S_FF1_I32_B32: res = a32 ? (uint32_t)__builtin_ctz(a32) : 0xffffffffu; break;
	case ISA_S_FF1_I32_B64: res = a ? (uint32_t)__builtin_ctzll(a) : 0xffffffffu; dst_n = 1; break;
	case ISA_S_FLBIT_I32_B32: res = clz32(a32); break;
	case ISA_S_SEXT_I32_I8: res = (uint32_t)(int32_t)(int8_t)a32; break;
	case ISA_S_SEXT_I32_I16: res = (uint32_t)(int32_t)(int16_t)a32; break;
	case ISA_S_BITSET0_B32: res = (uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0) & ~(1u << (a32 & 31)); break;
	case ISA_S_BITSET1_B32: res = (uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0) | 1u << (a32 & 31); break;
	case ISA_S_ABS_I32: res = (uint32_t)((int32_t)a32 < 0 ? -(int64_t)(int32_t)a32 : (int32_t)a32); scc = res != 0; break;
	case ISA_S_WQM_B32: case ISA_S_WQM_B64: {
		uint64_t y = 0;
		for (int i = 0; i < 64; i += 4)
			if (a >> i & 15)
				y |= 15ull << i;
		res = n == 1 ? (uint32_t)y : y;
		break;
	}
	case ISA_S_QUADMASK_B32: case ISA_S_QUADMASK_B64: {
		uint64_t y = 0;
		for (int i = 0; i < 16; i++)
			if (a >> (4 * i) & 15)
				y |= 1ull << i;
		res = y;
		break;
	}
	case ISA_S_AND_SAVEEXEC_B32: case ISA_S_AND_SAVEEXEC_B64: case ISA_S_OR_SAVEEXEC_B32: case ISA_S_OR_SAVEEXEC_B64:
	case ISA_S_XOR_SAVEEXEC_B32: case ISA_S_XOR_SAVEEXEC_B64: case ISA_S_AND_NOT1_SAVEEXEC_B32: case ISA_S_ANDN2_SAVEEXEC_B64:
	case ISA_S_OR_NOT1_SAVEEXEC_B32: case ISA_S_ORN2_SAVEEXEC_B64: {
		uint64_t ne;
		switch (op) {
		case ISA_S_AND_SAVEEXEC_B32: case ISA_S_AND_SAVEEXEC_B64: ne = a & ex; break;
		case ISA_S_OR_SAVEEXEC_B32: case ISA_S_OR_SAVEEXEC_B64: ne = a | ex; break;
		case ISA_S_XOR_SAVEEXEC_B32: case ISA_S_XOR_SAVEEXEC_B64: ne = a ^ ex; break;
		case ISA_S_AND_NOT1_SAVEEXEC_B32: case ISA_S_ANDN2_SAVEEXEC_B64: ne = a & ~ex; break;
		default: ne = a | ~ex; break;
		}
		if (w->lanes == 32)
			ne &= 0xffffffffull;
		swrite(dev, w, insn, &o[0], ex, n);
		w->s[ES_EXEC] = (uint32_t)ne;
		if (n == 2)
			w->s[ES_EXEC + 1] = (uint32_t)(ne >> 32);
		w->scc = ne != 0;
		return 0;
	}
	case ISA_S_GETPC_B64: res = 0x1000ull + dev->k->off[insn] + 4; break;
	case ISA_S_SETPC_B64: { /* to an instruction of this kernel, addressed as s_getpc gives them
	                          * (amd_emit's long branches); calls (s_swappc) are not emulated */
		int64_t tgt = (int64_t)sread(w, &o[0], 2) - 0x1000;
		EmuKernel *k = dev->k;
		if (tgt < 0 || tgt >= (int64_t)k->size || (tgt & 3) || k->at[tgt / 4] < 0) {
			emu_fail(dev, w, insn, "s_setpc to 0x%llx, which is not an instruction of the kernel",
				 (long long)(tgt + 0x1000));
			return -1;
		}
		w->pc = k->at[tgt / 4];
		dev->stats.branches++;
		return 0;
	}
	case ISA_S_SWAPPC_B64:
		emu_fail(dev, w, insn, "indirect calls are not emulated");
		return -1;
	/* SOPK */
	case ISA_S_MOVK_I32: res = (uint32_t)(int32_t)(int16_t)o[1].imm; dst_n = 1; break;
	case ISA_S_CMOVK_I32:
		if (!w->scc)
			goto done;
		res = (uint32_t)(int32_t)(int16_t)o[1].imm;
		break;
	case ISA_S_ADDK_I32: {
		uint32_t x = (uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0), y = (uint32_t)(int32_t)(int16_t)o[1].imm;
		res = (uint32_t)(x + y);
		scc = ((~(x ^ y) & (x ^ (uint32_t)res)) >> 31) & 1;
		break;
	}
	case ISA_S_MULK_I32: res = (uint32_t)((uint32_t)scalar_val(w, &o[0], ISA_TY_B32, 0) * (uint32_t)(int32_t)(int16_t)o[1].imm); break;
	case ISA_S_WAITCNT_VSCNT: emu_wait(dev, w, -1, -1, o[1].imm & 0x3f); goto done;
	case ISA_S_WAITCNT_VMCNT: emu_wait(dev, w, o[1].imm & 0x3f, -1, -1); goto done;
	case ISA_S_WAITCNT_LGKMCNT: emu_wait(dev, w, -1, o[1].imm & 0x3f, -1); goto done;
	case ISA_S_WAITCNT_EXPCNT: goto done;
	/* SOPC */
	case ISA_S_CMP_EQ_I32: case ISA_S_CMP_EQ_U32: case ISA_S_CMP_EQ_U64: scc = a == b; goto done_scc;
	case ISA_S_CMP_LG_I32: case ISA_S_CMP_LG_U32: case ISA_S_CMP_LG_U64: scc = a != b; goto done_scc;
	case ISA_S_CMP_GT_I32: scc = (int32_t)a32 > (int32_t)b32; goto done_scc;
	case ISA_S_CMP_GE_I32: scc = (int32_t)a32 >= (int32_t)b32; goto done_scc;
	case ISA_S_CMP_LT_I32: scc = (int32_t)a32 < (int32_t)b32; goto done_scc;
	case ISA_S_CMP_LE_I32: scc = (int32_t)a32 <= (int32_t)b32; goto done_scc;
	case ISA_S_CMP_GT_U32: scc = a32 > b32; goto done_scc;
	case ISA_S_CMP_GE_U32: scc = a32 >= b32; goto done_scc;
	case ISA_S_CMP_LT_U32: scc = a32 < b32; goto done_scc;
	case ISA_S_CMP_LE_U32: scc = a32 <= b32; goto done_scc;
	case ISA_S_BITCMP0_B32: scc = !(a32 >> (b32 & 31) & 1); goto done_scc;
	case ISA_S_BITCMP1_B32: scc = a32 >> (b32 & 31) & 1; goto done_scc;
	case ISA_S_BITCMP0_B64: scc = !(a >> (b32 & 63) & 1); goto done_scc;
	case ISA_S_BITCMP1_B64: scc = a >> (b32 & 63) & 1; goto done_scc;
	/* SOPP */
	case ISA_S_NOP: w->clock += (uint64_t)(o[0].imm & 15); goto done;
	case ISA_S_ENDPGM: w->done = 1; return 1;
	case ISA_S_BRANCH: return branch_to(dev, w, insn, o[0].imm);
	case ISA_S_CBRANCH_SCC0: return !w->scc ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_CBRANCH_SCC1: return w->scc ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_CBRANCH_VCCZ: case ISA_S_CBRANCH_VCCNZ: {
		uint64_t vcc = w->s[ES_VCC] | (w->lanes == 64 ? (uint64_t)w->s[ES_VCC + 1] << 32 : 0);
		if (!w->sinit[ES_VCC] && (dev->checks & EMU_CHECK_UNINIT)) {
			emu_fail(dev, w, insn, "reads vcc, which nothing has written");
			return -1;
		}
		int z = vcc == 0;
		return (op == ISA_S_CBRANCH_VCCZ ? z : !z) ? branch_to(dev, w, insn, o[0].imm) : 0;
	}
	case ISA_S_CBRANCH_EXECZ: return !ex ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_CBRANCH_EXECNZ: return ex ? branch_to(dev, w, insn, o[0].imm) : 0;
	case ISA_S_BARRIER: w->at_barrier = 1; return 1;
	case ISA_S_WAITCNT: {
		int vm, exp, lgkm;
		isa_waitcnt_decode(dev->target, (uint16_t)o[0].imm, &vm, &exp, &lgkm);
		emu_wait(dev, w, vm, lgkm, -1);
		goto done;
	}
	case ISA_S_CLAUSE: case ISA_S_SLEEP: case ISA_S_SETPRIO: case ISA_S_ICACHE_INV: case ISA_S_DELAY_ALU: case ISA_S_SENDMSG:
	case ISA_S_WAITCNT_DEPCTR: /* hazard waits: instructions here complete in order */
		goto done;
	case ISA_S_CODE_END:
		emu_fail(dev, w, insn, "execution ran into the code-end padding (missing s_endpgm?)");
		return -1;
	case ISA_S_SETHALT:
		emu_fail(dev, w, insn, "s_sethalt: the wave halted");
		return -1;
	default:
		emu_fail(dev, w, insn, "instruction not emulated");
		return -1;
	}
	if (in->nops)
		swrite(dev, w, insn, &o[0], res, o[0].count == 2 ? 2 : dst_n);
	if (wscc) {
		if (op >= ISA_S_AND_B32 && op <= ISA_S_XNOR_B64)
			scc = res != 0;
		if (op == ISA_S_LSHL_B32 || op == ISA_S_LSHR_B32 || op == ISA_S_ASHR_I32 || op == ISA_S_LSHL_B64 ||
		    op == ISA_S_LSHR_B64 || op == ISA_S_ASHR_I64 || op == ISA_S_NOT_B32 || op == ISA_S_NOT_B64 ||
		    op == ISA_S_WQM_B32 || op == ISA_S_WQM_B64 || op == ISA_S_QUADMASK_B32 || op == ISA_S_QUADMASK_B64 ||
		    (op >= ISA_S_AND_B64 && op <= ISA_S_XNOR_B64))
			scc = res != 0;
		w->scc = scc;
	}
done:
	return dev->failed ? -1 : 0;
done_scc:
	w->scc = scc;
	return 0;
}
