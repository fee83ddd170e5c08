/* amd_isel.c — entry (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- entry ---------------------------------------------------------------- */

static void sel_entry(Isel *s)
{
	const SimtFunc *sf = s->sf;
	/* Inputs: kernarg pointer, workgroup ids, v0; one parallel copy so the
	 * allocator may keep them in place. */
	Val defs[4], srcs[4];
	int n = 0;
	s->kernarg = newv(s, MR_S, 2);
	s->mf->vregs.data[s->kernarg].hint = (int16_t)s->abi->kernarg_sgpr;
	defs[n] = reg(s->kernarg, 0, 2);
	srcs[n++] = (Val){VK_REG, 2, 0, -1, (uint32_t)s->abi->kernarg_sgpr};
	for (int dm = 0; dm < 3; dm++) {
		s->wgid[dm] = -1;
		if (s->abi->wgid_sgpr[dm] < 0)
			continue;
		s->wgid[dm] = newv(s, MR_S, 1);
		s->mf->vregs.data[s->wgid[dm]].hint = (int16_t)s->abi->wgid_sgpr[dm];
		defs[n] = reg(s->wgid[dm], 0, 1);
		srcs[n++] = (Val){VK_REG, 1, 0, -1, (uint32_t)s->abi->wgid_sgpr[dm]};
	}
	/* SGPR inputs in one parallel copy (at most 4 pairs fit an MInst);
	 * v0 in its own copy: files never overlap. */
	MInst *mi = emit(s, MOP_PCOPY, n);
	for (int k = 0; k < n; k++) {
		put(s, mi, k, defs[k], ISA_TY_B32);
		mi_phys(mi, n + k, isa_sgpr((int)srcs[k].bits, srcs[k].count));
	}
	s->vgpr_in = newv(s, MR_V, 1);
	s->mf->vregs.data[s->vgpr_in].hint = 0;
	mi = emit(s, MOP_COPY, 1);
	put(s, mi, 0, reg(s->vgpr_in, 0, 1), ISA_TY_B32);
	mi_phys(mi, 1, isa_vgpr(0, 1));
	s->tid = newv(s, MR_V, 1);
	valu3(s, ISA_V_BFE_U32, reg(s->tid, 0, 1), reg(s->vgpr_in, 0, 1), cst(0), cst(10));
	bool lanes = false;
	for (size_t i = 0; i < sf->code.len; i++)
		lanes |= sf->code.data[i].op == SI_SHFL_BFLY || sf->code.data[i].op == SI_MMA;
	s->lane4 = -1;
	if (lanes) {
		Val l = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_MBCNT_LO_U32_B32, l, cst(0xffffffffu), cst(0));
		if (s->w64)
			valu2(s, ISA_V_MBCNT_HI_U32_B32, l, cst(0xffffffffu), l);
		s->lane4 = newv(s, MR_V, 1);
		valu2(s, ISA_V_LSHLREV_B32, reg(s->lane4, 0, 1), cst(2), l);
	}
}

static void sel_param(Isel *s, const SInst *in)
{
	const SimtParam *p = &s->sf->params.data[in->imm];
	int n = p->vt == VT_I64 || p->vt == VT_F64 ? 2 : 1;
	Val d = dst_of(s, in->dst, 0, n);
	bool uni = s->uni[in->dst];
	Val t = uni ? d : reg(newv(s, MR_S, n), 0, n);
	MInst *mi = emit(s, n == 2 ? ISA_S_LOAD_DWORDX2 : ISA_S_LOAD_DWORD, 1);
	put(s, mi, 0, t, ISA_TY_B32);
	put(s, mi, 1, reg(s->kernarg, 0, 2), ISA_TY_B32);
	mi_phys(mi, 2, isa_imm((int32_t)s->abi->param_offset[in->imm]));
	if (!uni)
		copy_val(s, d, t, false);
}

static void sel_inst(Isel *s, int i)
{
	const SInst *in = &s->sf->code.data[i];
	zero_parks(s, i);
	bool guarded = in->guard >= 0 && in->op != SI_BRA;
	Val saved = {0};
	if (guarded) {
		Val g = reg(s->vr[in->guard], 0, s->lm);
		if (in->guard_neg) {
			Val ng = reg(newv(s, MR_S, s->lm), 0, s->lm);
			MInst *mi = emit(s, lmop(s, ISA_S_NOT_B32, ISA_S_NOT_B64), 1);
			put(s, mi, 0, ng, ISA_TY_B32);
			put(s, mi, 1, g, ISA_TY_B32);
			g = ng;
		}
		saved = reg(newv(s, MR_S, s->lm), 0, s->lm);
		MInst *mi = emit(s, lmop(s, ISA_S_AND_SAVEEXEC_B32, ISA_S_AND_SAVEEXEC_B64), 1);
		put(s, mi, 0, saved, ISA_TY_B32);
		put(s, mi, 1, g, ISA_TY_B32);
	}
	size_t before = s->mf->insns.len;
	bool uni = in->dst >= 0 && s->uni[in->dst];
	switch ((SOp)in->op) {
	case SI_MOVI: case SI_MOVF: {
		if (s->isconst[in->dst] && in->guard < 0)
			break; /* folded into uses */
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (in->type == DT_BOOL) {
			MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, in->imm ? 0xffffffffu : 0));
			break;
		}
		uint64_t bits = (uint64_t)in->imm;
		if (in->op == SI_MOVF) {
			if (in->type == DT_F64) {
				double x = in->fimm;
				memcpy(&bits, &x, 8);
			} else {
				float f = (float)in->fimm;
				uint32_t b;
				memcpy(&b, &f, 4);
				bits = b;
			}
		}
		for (int k = 0; k < d.count; k++) {
			Val dk = reg(d.vreg, d.sub + k, 1);
			Val c = cst((uint32_t)(bits >> (32 * k)));
			if (vcls(s, dk) == MR_A) { /* clear of an AGPR accumulator */
				acc_move(s, dk, c);
				continue;
			}
			MInst *mi = uni ? salu1(s, ISA_S_MOV_B32, dk, c) : valu1(s, ISA_V_MOV_B32, dk, c);
			if (!k && d.count > 1)
				mi->flags |= MI_DEFALL;
		}
		break;
	}
	case SI_MOV: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (s->sf->regs.data[in->dst] == VT_PRED) {
			MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			put(s, mi, 1, opnd_all(s, in->a), ISA_TY_B32);
			break;
		}
		copy_val(s, d, opnd_all(s, in->a), uni);
		break;
	}
	case SI_ADD: case SI_SUB: case SI_MUL: case SI_DIV: case SI_REM: case SI_MIN: case SI_MAX:
	case SI_SHL: case SI_SHR:
		sel_arith(s, in);
		break;
	case SI_AND: case SI_OR: case SI_XOR:
		if (in->type == DT_BOOL) {
			unsigned op = in->op == SI_AND ? lmop(s, ISA_S_AND_B32, ISA_S_AND_B64)
				      : in->op == SI_OR ? lmop(s, ISA_S_OR_B32, ISA_S_OR_B64)
							 : lmop(s, ISA_S_XOR_B32, ISA_S_XOR_B64);
			MInst *mi = emit(s, op, 1);
			put(s, mi, 0, dst_of(s, in->dst, 0, s->lm), ISA_TY_B32);
			put(s, mi, 1, opnd_all(s, in->a), ISA_TY_B32);
			put(s, mi, 2, opnd_all(s, in->b), ISA_TY_B32);
			break;
		}
		sel_arith(s, in);
		break;
	case SI_NOT: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (in->type == DT_BOOL) {
			MInst *mi = emit(s, lmop(s, ISA_S_NOT_B32, ISA_S_NOT_B64), 1);
			put(s, mi, 0, d, ISA_TY_B32);
			put(s, mi, 1, opnd_all(s, in->a), ISA_TY_B32);
		} else if (d.count == 2) {
			if (uni)
				salu1(s, ISA_S_NOT_B64, d, opnd_all(s, in->a));
			else
				for (int k = 0; k < 2; k++) {
					MInst *mi = valu1(s, ISA_V_NOT_B32, reg(d.vreg, k, 1), opnd(s, in->a, k));
					if (!k)
						mi->flags |= MI_DEFALL;
				}
		} else {
			uni ? (void)salu1(s, ISA_S_NOT_B32, d, opnd(s, in->a, 0)) : (void)valu1(s, ISA_V_NOT_B32, d, opnd(s, in->a, 0));
		}
		break;
	}
	case SI_NEG: case SI_ABS: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst)), a = opnd(s, in->a, 0);
		int t = in->type;
		if (t == DT_F32 || t == DT_F64) { /* the sign bit: of the high dword for f64 */
			int hi = t == DT_F64;
			Val dh = reg(d.vreg, d.sub + hi, 1), ah = opnd(s, in->a, hi);
			MInst *mi = in->op == SI_NEG ? valu2(s, ISA_V_XOR_B32, dh, cst(0x80000000u), ah)
						     : valu2(s, ISA_V_AND_B32, dh, cst(0x7fffffffu), ah);
			if (hi) {
				mi->flags |= MI_DEFALL;
				valu1(s, ISA_V_MOV_B32, reg(d.vreg, d.sub, 1), opnd(s, in->a, 0));
			}
		} else if (t == DT_I32) {
			if (in->op == SI_NEG)
				uni ? (void)salu2(s, ISA_S_SUB_U32, d, cst(0), a) : (void)valu2(s, ISA_V_SUB_U32, d, cst(0), a);
			else if (uni)
				salu1(s, ISA_S_ABS_I32, d, a);
			else {
				Val n = reg(newv(s, MR_V, 1), 0, 1);
				valu2(s, ISA_V_SUB_U32, n, cst(0), a);
				valu2(s, ISA_V_MAX_I32, d, a, n);
			}
		} else if (t == DT_I64 && in->op == SI_NEG) {
			Val z = cst(0);
			sel_add64(s, d, z, opnd_all(s, in->a), true, uni);
		} else if (t == DT_I64 && !uni) { /* abs = max(a, -a) */
			Val n = reg(newv(s, MR_V, 2), 0, 2);
			sel_add64(s, n, cst(0), opnd_all(s, in->a), true, false);
			sel_minmax64(s, d, opnd_all(s, in->a), n, true);
		} else {
			unsupported(s, "neg/abs of this type");
		}
		break;
	}
	case SI_SETP: sel_setp(s, in); break;
	case SI_SELP: {
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		Val m = reg(s->vr[in->c], 0, s->lm);
		if (uni) {
			mask_to_scc(s, m);
			if (d.count == 2)
				salu2(s, ISA_S_CSELECT_B64, d, opnd_all(s, in->a), opnd_all(s, in->b));
			else
				salu2(s, ISA_S_CSELECT_B32, d, opnd(s, in->a, 0), opnd(s, in->b, 0));
			break;
		}
		for (int k = 0; k < d.count; k++) {
			Val dk = reg(d.vreg, d.sub + k, 1);
			Val src[3] = {opnd(s, in->b, k), opnd(s, in->a, k), m};
			MInst *mi = valu(s, ISA_V_CNDMASK_B32, 1, &dk, 3, src);
			if (!k && d.count > 1)
				mi->flags |= MI_DEFALL;
		}
		break;
	}
	case SI_CVT: sel_cvt(s, in); break;
	case SI_PACK: case SI_UNPACK: {
		int t = in->type;
		Val d = dst_of(s, in->dst, 0, simt_size(s, in->dst));
		if (t == DT_F16 || t == DT_BF16) {
			if (in->op == SI_PACK)
				sel_small_pack(s, t, d, opnd(s, in->a, 0), s->use[in->dst] == 1);
			else if (!sel_unpack_half(s, in, d))
				sel_small_unpack(s, t, d, opnd(s, in->a, 0));
		} else if (t == DT_BOOL) {
			if (in->op == SI_PACK) {
				Val src[3] = {cst(0), cst(1), reg(s->vr[in->a], 0, s->lm)};
				valu(s, ISA_V_CNDMASK_B32, 1, &d, 3, src);
			} else {
				valu2(s, ISA_V_CMP_NE_U32, d, opnd(s, in->a, 0), cst(0));
			}
		} else if (dtype_is_fp8((DType)t)) {
			if (in->op == SI_PACK)
				fp8_pack(s, t, d, opnd(s, in->a, 0));
			else
				fp8_unpack(s, t, d, opnd(s, in->a, 0));
		} else {
			copy_val(s, d, opnd_all(s, in->a), uni);
		}
		break;
	}
	case SI_PACK2: {
		if (sel_pack2_fp8(s, in))
			break;
		Val d = dst_of(s, in->dst, 0, 1);
		Val lo = opnd(s, in->a, 0);
		if (f16_packed(s, in->a) && f16_packed(s, in->b)) {
			/* Two converted f16 values (canonical, so the f16 op moves their
			 * bits unchanged): one v_pack_b32_f16, high halves ignored. */
			valu2(s, ISA_V_PACK_B32_F16, d, to_vgpr(s, lo), to_vgpr(s, opnd(s, in->b, 0)));
			break;
		}
		if (!zext16(s, in->a)) {
			lo = reg(newv(s, MR_V, 1), 0, 1);
			valu3(s, ISA_V_BFE_U32, lo, opnd(s, in->a, 0), cst(0), cst(16));
		}
		valu3(s, ISA_V_LSHL_OR_B32, d, opnd(s, in->b, 0), cst(16), lo);
		break;
	}
	case SI_MATH: {
		if (in->type == DT_F64) {
			sel_math64(s, in);
			break;
		}
		static const unsigned ops[] = {ISA_V_EXP_F32,   ISA_V_LOG_F32,   ISA_V_SQRT_F32,  ISA_V_RCP_F32,
		                               ISA_V_FLOOR_F32, ISA_V_CEIL_F32,  ISA_V_RNDNE_F32, ISA_V_TRUNC_F32,
		                               ISA_V_SIN_F32,   ISA_V_COS_F32};
		Val a = opnd(s, in->a, 0);
		if (in->sub == MATH_SIN || in->sub == MATH_COS) { /* v_sin/v_cos take revolutions */
			Val rev = vtmp(s);
			valu2(s, ISA_V_MUL_F32, rev, cst(0x3e22f983u), a); /* 1 / (2 pi) */
			a = rev;
		}
		valu1(s, ops[in->sub], dst_of(s, in->dst, 0, 1), a);
		break;
	}
	case SI_TID: valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst, 0, 1), reg(s->tid, 0, 1)); break;
	case SI_CTAID: {
		int dm = (int)in->imm;
		Val d = dst_of(s, in->dst, 0, 1);
		if (dm < 0 || dm > 2 || s->wgid[dm] < 0) {
			unsupported(s, "this block index dimension");
			break;
		}
		uni ? (void)salu1(s, ISA_S_MOV_B32, d, reg(s->wgid[dm], 0, 1))
		    : (void)valu1(s, ISA_V_MOV_B32, d, reg(s->wgid[dm], 0, 1));
		break;
	}
	case SI_PARAM: sel_param(s, in); break;
	case SI_SHBASE:
		if (!s->isconst[in->dst])
			uni ? (void)salu1(s, ISA_S_MOV_B32, dst_of(s, in->dst, 0, 1), cst(0))
			    : (void)valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst, 0, 1), cst(0));
		break;
	case SI_LOCALADDR: unsupported(s, "local (per-thread array) memory"); break;
	case SI_LD: sel_ld(s, in); break;
	case SI_ST: case SI_ATOM_ADD: case SI_ATOM_MAX: case SI_ATOM_MIN: sel_st(s, in); break;
	case SI_ATOM_CAS: sel_cas(s, in); break;
	case SI_BAR: emit(s, ISA_S_BARRIER, 0); break;
	case SI_SHFL_BFLY: sel_shfl(s, in); break;
	case SI_SHFL: sel_shfl_lane(s, in); break;
	case SI_HALF: /* a b16 value in the low bits, zero-extended */
		valu3(s, ISA_V_BFE_U32, dst_of(s, in->dst, 0, 1), opnd(s, in->a, 0), cst(in->imm ? 16 : 0), cst(16));
		break;
	case SI_MMA:
		if (in->sub != MMA_M16N8K16)
			sel_mma_amd(s, in);
		else
			sel_mma(s, in);
		break;
	case SI_LABEL: sel_label(s, (int)in->imm); break;
	case SI_BRA: {
		int L = (int)in->imm;
		bool back = s->label_block[L] >= 0;
		if (back) {
			if (in->guard >= 0) {
				unsupported(s, "a conditional backward branch");
				break;
			}
			branch_to(s, ISA_S_BRANCH, L);
			set_succ_label(s, 0, L);
			start_block(s);
			break;
		}
		if (in->guard >= 0 && s->uni[in->guard] && scalar_branch_ok(s, i, L))
			sel_scalar_branch(s, i, L, reg(s->vr[in->guard], 0, s->lm), in->guard_neg);
		else if (in->guard >= 0)
			sel_fwd_branch(s, i, L, reg(s->vr[in->guard], 0, s->lm), in->guard_neg, false);
		else if (scalar_branch_ok(s, i, L))
			sel_scalar_branch(s, i, L, cst(0), false);
		else
			sel_fwd_branch(s, i, L, cst(0), false, true);
		break;
	}
	case SI_RET:
		if ((size_t)i + 1 < s->sf->code.len)
			sel_fwd_branch(s, i, s->nlabels - 1, cst(0), false, true);
		break;
	default: unsupported(s, "this SIMT instruction"); break;
	}
	if (in->dst >= 0 && s->tfirst[in->dst] && in->guard < 0 && !hi_merge(in))
		for (size_t k = before; k < s->mf->insns.len; k++) {
			MInst *mk = &s->mf->insns.data[k];
			if (mk->ndef && (mk->vmask & 1) && mk->vr[0] == s->vr[in->dst] && mk->sub[0] == 0) {
				mk->flags |= MI_DEFALL;
				break;
			}
		}
	if (guarded) {
		for (size_t k = before; k < s->mf->insns.len; k++) {
			MInst *mk = &s->mf->insns.data[k];
			if (in->dst < 0 || !mk->ndef || !(mk->vmask & 1))
				continue;
			for (int r = 0; r < dst_count(in); r++)
				if (mk->vr[0] == s->vr[in->dst + r])
					mk->flags |= MI_PARTIAL;
		}
		MInst *mi = emit(s, lmop(s, ISA_S_MOV_B32, ISA_S_MOV_B64), 1);
		mi_phys(mi, 0, exec_op(s));
		put(s, mi, 1, saved, ISA_TY_B32);
	}
}

/* Resolve SIMT label references into block ids; fill fallthrough edges. */
static void link_blocks(Isel *s)
{
	MFunc *mf = s->mf;
	for (size_t b = 0; b < mf->blocks.len; b++) {
		MBlock *bl = &mf->blocks.data[b];
		for (int k = 0; k < 3; k++)
			if (bl->succ[k] <= -2)
				bl->succ[k] = s->label_block[-bl->succ[k] - 2];
		const MInst *last = bl->last > bl->first ? &mf->insns.data[bl->last - 1] : NULL;
		bool uncond = last && (last->in.op == ISA_S_BRANCH || last->in.op == ISA_S_ENDPGM);
		if (!uncond && b + 1 < mf->blocks.len)
			bl->succ[0] = (int32_t)b + 1;
		for (int i = bl->first; i < bl->last; i++) {
			MInst *mi = &mf->insns.data[i];
			if (mi->in.nops && mi->in.ops[0].kind == ISA_K_LABEL && mi->in.op < ISA_NUM_OPS)
				mi->in.ops[0].imm = s->label_block[mi->in.ops[0].imm];
		}
	}
}

int amd_isel(const SimtFunc *sf, const Target *t, const AmdAbi *abi, MFunc *mf, Diag *d)
{
	Isel s0, *s = &s0;
	memset(s, 0, sizeof *s);
	s->sf = sf, s->t = t, s->abi = abi, s->mf = mf, s->d = d;
	s->it = mf->target;
	s->w64 = ISA_IS_W64(s->it);
	s->lm = s->w64 ? 2 : 1;
	s->gfx11 = ISA_TARGET(s->it) == TA_TARGET_GFX1100;
	size_t nr = sf->regs.len + 1, n = sf->code.len + 1;
	s->nlabels = sf->nlabels + 1;
	s->vr = calloc(nr, sizeof(int32_t));
	s->vsub = calloc(nr, 1);
	s->tfirst = calloc(nr, 1);
	s->def1 = calloc(nr, sizeof(int32_t));
	s->use = calloc(nr, 1);
	s->uni = calloc(nr, 1);
	s->isconst = calloc(nr, 1);
	s->cval = calloc(nr, sizeof(int64_t));
	s->ndefs = calloc(nr, sizeof(int32_t));
	s->label_block = malloc(sizeof(int32_t) * (size_t)(s->nlabels + 1));
	s->park = malloc(sizeof(int32_t) * (size_t)(s->nlabels + 1));
	s->init_next = malloc(sizeof(int32_t) * (size_t)(s->nlabels + 1));
	s->next_label = calloc(n, sizeof(int32_t));
	s->skip_label = calloc(n, sizeof(int32_t));
	s->init_at = malloc(sizeof(int32_t) * n);
	s->label_pos = calloc((size_t)s->nlabels + 1, sizeof(int32_t));
	s->first_src = calloc((size_t)s->nlabels + 1, sizeof(int32_t));
	s->init_pos = calloc((size_t)s->nlabels + 1, sizeof(int32_t));
	s->seg_zeroed = calloc((size_t)s->nlabels + 1, sizeof(int32_t));
	s->zmax = malloc(sizeof(int32_t) * 3 * ((size_t)n + 1));
	int rc = -1;
	if (!s->vr || !s->vsub || !s->tfirst || !s->def1 || !s->use || !s->uni || !s->isconst || !s->cval || !s->ndefs || !s->label_block || !s->park ||
	    !s->next_label || !s->skip_label || !s->init_at || !s->init_next || !s->label_pos || !s->first_src || !s->init_pos || !s->seg_zeroed || !s->zmax) {
		diag_error(d, "out of memory");
		goto out;
	}
	for (int L = 0; L <= s->nlabels; L++)
		s->label_block[L] = -1, s->park[L] = -1, s->init_next[L] = -1;
	for (size_t i = 0; i < n; i++)
		s->init_at[i] = -1;
	mir_block(mf);
	sel_entry(s);
	analyze(s);
	if (s->err)
		goto out;
	for (size_t r = 0; r < nr; r++)
		s->vr[r] = -1;
	group_mma_tuples(s);
	group_mem_tuples(s);
	scan_uses(s);
	for (size_t r = 0; r + 1 < nr; r++) {
		if (s->vr[r] >= 0)
			continue;
		int vt = sf->regs.data[r];
		int size = vt == VT_PRED ? s->lm : vt == VT_I64 || vt == VT_F64 ? 2 : 1;
		int cls = vt == VT_PRED || s->uni[r] ? MR_S : MR_V;
		s->vr[r] = newv(s, cls, size);
	}
	for (size_t i = 0; i < sf->code.len && !s->err; i++)
		sel_inst(s, (int)i);
	/* The end label: parked lanes (early returns) come back, then stop. */
	sel_label(s, s->nlabels - 1);
	emit(s, ISA_S_ENDPGM, 0);
	if (s->err)
		goto out;
	link_blocks(s);
	rc = 0;
out:
	free(s->vr), free(s->vsub), free(s->tfirst), free(s->def1), free(s->use), free(s->uni), free(s->isconst), free(s->cval), free(s->ndefs), free(s->label_block);
	free(s->park), free(s->next_label), free(s->skip_label), free(s->init_at), free(s->init_next), free(s->label_pos), free(s->first_src), free(s->init_pos), free(s->seg_zeroed), free(s->zmax);
	return rc;
}
