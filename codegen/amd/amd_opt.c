/* amd_opt.c — MIR cleanup before register allocation: copy propagation and
 * dead-code elimination.
 *
 * isel is a tree walker: it sign-extends every index into a 64-bit pair
 * whether or not the high half is read, copies kernel inputs into vregs that
 * are never used, and copies values around that are never changed.  Left in,
 * these cost instructions and, worse, registers.
 *
 * Copy propagation.  `%d = copy %s` (MOP_COPY or a same-file s_mov/v_mov of
 * a whole vreg) lets every read of %d read %s instead, when neither can
 * change in between: both have exactly one defining instruction, neither
 * merges with an old value (MI_PARTIAL/MI_TIED), and %s's definition runs
 * once before the copy forever after — it is in the entry block (which no
 * branch re-enters), or it precedes the copy in the copy's block and every
 * read of %d follows the copy in that same block.  That rule is narrower than
 * dominance but needs no dominator tree and is safe in divergent loops.
 *
 * Dead-code elimination.  A vreg is dead when nothing but its own defining
 * instructions reads it.  An instruction is removable when every register it
 * writes is a dead vreg and it has no other effect: no memory write, no
 * branch, no wait, no exec/vcc/m0 write, and an SCC write only if SCC is not
 * read before the next SCC write.  Removing it lowers the read counts of its
 * operands, which may kill more vregs: a worklist, so each instruction and
 * each vreg is visited a constant number of times.  Parallel copies lose dead
 * pairs one by one.  Removed instructions are compacted out at the end.
 *
 * Before both, trivial folds: integer ops on known constants (inline,
 * literal, or a vreg whose only definition moves one) become one move,
 * x + 0, x * 1 and x << 0 become moves (which then propagate), x * 2^k a
 * shift.  And local value numbering: an op that
 * repeats an earlier one of its block on the same single-def sources (and
 * the same exec mask) is treated as a copy of the earlier result, so copy
 * propagation redirects its readers and DCE removes it.
 *
 * Cost: O(n + V) for n instructions and V vregs. */
#include "amd.h"

#include <stdlib.h>

#include "isa.h"

/* Ops with effects beyond their register results.  A VCC write (ISA_F_WVCC:
 * carry-outs, compares) is not one: every such op names its lane mask as an
 * explicit def operand, a vreg (dead or not like any other) or physical vcc
 * (writes_phys keeps it). */
static int has_effect(const MInst *mi)
{
	unsigned op = mi->in.op;
	if (op >= MOP_BASE)
		return op == MOP_LABEL;
	uint32_t fl = isa_ops[op].flags;
	return (fl & (ISA_F_STORE | ISA_F_ATOMIC | ISA_F_BRANCH | ISA_F_ENDPGM | ISA_F_WAIT | ISA_F_WEXEC)) != 0;
}

/* Instructions with no ISA def operands but effects (s_barrier, s_nop,
 * s_sendmsg...) have ndef 0: keep every instruction that defines nothing. */
static int writes_phys(const MInst *mi)
{
	if (mi->ndef == 0)
		return 1;
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
		if (!(mi->vmask & (1u << k))) {
			int kd = mi->in.ops[k].kind;
			if (kd == ISA_K_SGPR || kd == ISA_K_VGPR || kd == ISA_K_AGPR || kd == ISA_K_SPECIAL)
				return 1;
		}
	return 0;
}

static int defines_vreg(const MInst *mi, int v)
{
	for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
		if ((mi->vmask & (1u << k)) && mi->vr[k] == v)
			return 1;
	return 0;
}

/* Whole-vreg same-file copy: returns 1 and sets *dst, *src. */
static int is_copy(const MFunc *f, const MInst *mi, int *dst, int *src)
{
	unsigned op = mi->in.op;
	if (op != MOP_COPY && op != ISA_S_MOV_B32 && op != ISA_S_MOV_B64 && op != ISA_V_MOV_B32)
		return 0;
	if (mi->in.nops != 2 || mi->ndef != 1 || (mi->vmask & 3) != 3 || (mi->flags & (MI_TIED | MI_PARTIAL)))
		return 0;
	if (mi->in.enc != ISA_ENC_DEFAULT && op != MOP_COPY)
		return 0;
	const MVreg *d = &f->vregs.data[mi->vr[0]], *s = &f->vregs.data[mi->vr[1]];
	if (d->cls != s->cls || d->size != s->size || mi->sub[0] || mi->sub[1] || mi->in.ops[0].count != d->size ||
	    mi->in.ops[1].count != s->size)
		return 0;
	*dst = mi->vr[0];
	*src = mi->vr[1];
	return *dst != *src;
}

/* Integer value of an inline-constant or literal operand; 0 if it is not one. */
static int const_val(const MInst *mi, int k, int32_t *v)
{
	const IsaOperand *o = &mi->in.ops[k];
	if (mi->vmask & (1u << k))
		return 0;
	if (o->kind == ISA_K_CONST && o->reg >= 128 && o->reg <= 208) {
		*v = o->reg <= 192 ? o->reg - 128 : 192 - o->reg;
		return 1;
	}
	if (o->kind == ISA_K_LIT) {
		*v = o->imm;
		return 1;
	}
	return 0;
}

/* Rewrites mi into `v_mov_b32 dst, src-operand k`. */
static void to_move(MInst *mi, int k)
{
	IsaOperand d = mi->in.ops[0], sop = mi->in.ops[k];
	int32_t dv = mi->vr[0], sv = mi->vr[k];
	uint8_t ds = mi->sub[0], ss = mi->sub[k], sm = (mi->vmask >> k) & 1;
	isa_insn_init(&mi->in, ISA_V_MOV_B32);
	mi->in.nops = 2;
	mi->in.ops[0] = d;
	mi->in.ops[1] = sop;
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi->vr[i] = -1, mi->sub[i] = 0;
	mi->vr[0] = dv, mi->sub[0] = ds;
	mi->vr[1] = sv, mi->sub[1] = ss;
	mi->vmask = (uint8_t)(1u | (sm << 1));
}

/* Trivial folds that pay: x + 0, x * 1, x << 0 become moves (then copies
 * propagate), x * 2^k a shift (v_mul_lo_u32 is a quarter-rate op).  Only
 * plain forms: no modifiers, no DPP, no merge flags, a virtual VGPR result. */
/* Value of source k when known: an inline constant or literal, or a vreg
 * whose only definition moves one (kval/kknown, filled by amd_opt). */
static int src_const(const MInst *mi, int k, const uint32_t *kval, const uint8_t *kknown, uint32_t *v)
{
	int32_t c;
	if (const_val(mi, k, &c)) {
		*v = (uint32_t)c;
		return 1;
	}
	if ((mi->vmask & (1u << k)) && mi->in.ops[k].count == 1 && kknown[mi->vr[k]]) {
		*v = kval[mi->vr[k]];
		return 1;
	}
	return 0;
}

/* Integer ops whose sources are all known: the result as one move. */
static int fold_const(MInst *mi, const uint32_t *kval, const uint8_t *kknown)
{
	unsigned op = mi->in.op;
	if (op != ISA_V_ADD_U32 && op != ISA_V_SUB_U32 && op != ISA_V_AND_B32 && op != ISA_V_OR_B32 &&
	    op != ISA_V_XOR_B32 && op != ISA_V_LSHLREV_B32)
		return 0;
	if (mi->flags || mi->ndef != 1 || mi->in.nops != 3 || !(mi->vmask & 1) || mi->in.ops[0].kind != ISA_K_VGPR ||
	    mi->in.ops[0].count != 1 || mi->in.enc == ISA_ENC_DPP)
		return 0;
	IsaInsn plain;
	isa_insn_init(&plain, op);
	if (memcmp(&plain.mod, &mi->in.mod, sizeof plain.mod))
		return 0;
	uint32_t a, b, r;
	if (!src_const(mi, 1, kval, kknown, &a) || !src_const(mi, 2, kval, kknown, &b))
		return 0;
	switch (op) {
	case ISA_V_ADD_U32: r = a + b; break;
	case ISA_V_SUB_U32: r = a - b; break;
	case ISA_V_AND_B32: r = a & b; break;
	case ISA_V_OR_B32: r = a | b; break;
	case ISA_V_XOR_B32: r = a ^ b; break;
	default: r = b << (a & 31); break; /* v_lshlrev_b32: src1 << src0 */
	}
	IsaOperand d = mi->in.ops[0];
	int32_t dv = mi->vr[0];
	isa_insn_init(&mi->in, ISA_V_MOV_B32);
	mi->in.nops = 2;
	mi->in.ops[0] = d;
	mi->in.ops[1] = isa_const_u32(ISA_TY_B32, r);
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi->vr[i] = -1, mi->sub[i] = 0;
	mi->vr[0] = dv;
	mi->vmask = 1;
	return 1;
}

static int fold(MInst *mi)
{
	unsigned op = mi->in.op;
	if (op != ISA_V_ADD_U32 && op != ISA_V_MUL_LO_U32 && op != ISA_V_LSHLREV_B32)
		return 0;
	if (mi->flags || mi->ndef != 1 || mi->in.nops != 3 || !(mi->vmask & 1) || mi->in.ops[0].kind != ISA_K_VGPR ||
	    mi->in.enc == ISA_ENC_DPP)
		return 0;
	IsaInsn plain;
	isa_insn_init(&plain, op);
	if (memcmp(&plain.mod, &mi->in.mod, sizeof plain.mod))
		return 0;
	int32_t c;
	if (op == ISA_V_ADD_U32) {
		for (int k = 1; k <= 2; k++)
			if (const_val(mi, k, &c) && c == 0) {
				to_move(mi, 3 - k);
				return 1;
			}
	} else if (op == ISA_V_LSHLREV_B32) {
		if (const_val(mi, 1, &c) && c == 0) {
			to_move(mi, 2);
			return 1;
		}
	} else {
		for (int k = 1; k <= 2; k++) {
			if (!const_val(mi, k, &c))
				continue;
			int x = 3 - k;
			if (c == 1) {
				to_move(mi, x);
				return 1;
			}
			/* v_lshlrev_b32 dst, log2(c), x: x must be a VGPR (VOP2 src1). */
			if (c > 1 && (c & (c - 1)) == 0 && (mi->vmask & (1u << x)) && mi->in.ops[x].kind == ISA_K_VGPR) {
				IsaOperand xo = mi->in.ops[x];
				int32_t xv = mi->vr[x];
				uint8_t xs = mi->sub[x];
				IsaOperand d = mi->in.ops[0];
				isa_insn_init(&mi->in, ISA_V_LSHLREV_B32);
				mi->in.nops = 3;
				mi->in.ops[0] = d;
				mi->in.ops[1] = isa_const_u32(ISA_TY_B32, (uint32_t)__builtin_ctz((unsigned)c));
				mi->in.ops[2] = xo;
				int32_t dv = mi->vr[0];
				uint8_t dsub = mi->sub[0];
				for (int i = 0; i < ISA_MAX_OPS; i++)
					mi->vr[i] = -1, mi->sub[i] = 0;
				mi->vr[0] = dv, mi->sub[0] = dsub;
				mi->vr[2] = xv, mi->sub[2] = xs;
				mi->vmask = 1u | 4u;
				return 1;
			}
		}
	}
	return 0;
}

/* ---- local value numbering --------------------------------------------- */

/* Can the instruction be merged with an identical earlier one?  A pure op:
 * one whole-vreg virtual result, no memory, no implicit SCC/VCC/M0 read, no
 * exec/vcc write, no physical register source, no merge flags. */
static int cse_able(const MFunc *f, const MInst *mi)
{
	unsigned op = mi->in.op;
	if (op >= MOP_BASE || mi->flags || mi->ndef != 1 || !(mi->vmask & 1) || mi->sub[0] ||
	    mi->in.ops[0].count != f->vregs.data[mi->vr[0]].size)
		return 0;
	uint32_t fl = isa_ops[op].flags;
	if (fl & (ISA_F_LOAD | ISA_F_STORE | ISA_F_ATOMIC | ISA_F_BRANCH | ISA_F_ENDPGM | ISA_F_WAIT | ISA_F_WEXEC |
		  ISA_F_WVCC | ISA_F_RVCC | ISA_F_RSCC | ISA_F_RM0 | ISA_F_MFMA | ISA_F_WMMA | ISA_F_SMEM))
		return 0;
	if (!(fl & (ISA_F_SALU | ISA_F_VALU)))
		return 0;
	for (int k = 1; k < mi->in.nops; k++) {
		int kd = mi->in.ops[k].kind;
		if ((kd == ISA_K_SGPR || kd == ISA_K_VGPR || kd == ISA_K_AGPR || kd == ISA_K_SPECIAL) &&
		    !(mi->vmask & (1u << k)))
			return 0;
	}
	return 1;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

/* Hash of everything but the result vreg; `epoch` counts exec writes so
 * VALU results under different masks never match. */
static uint64_t cse_hash(const MInst *mi, int epoch)
{
	uint64_t h = mix((uint64_t)mi->in.op, (uint64_t)epoch);
	h = mix(h, (uint64_t)mi->in.enc << 8 | mi->in.nops);
	/* The modifiers 8 bytes at a time (cse_same compares them all). */
	const uint8_t *m = (const uint8_t *)&mi->in.mod;
	for (size_t i = 0; i < sizeof mi->in.mod; i += 8) {
		uint64_t x = 0;
		memcpy(&x, m + i, TA_MIN(8, sizeof mi->in.mod - i));
		h = mix(h, x);
	}
	for (int k = 0; k < mi->in.nops; k++) {
		const IsaOperand *o = &mi->in.ops[k];
		h = mix(h, (uint64_t)o->kind << 16 | (uint64_t)o->count << 8);
		if (k == 0)
			continue;
		if (mi->vmask & (1u << k))
			h = mix(h, (uint64_t)(uint32_t)mi->vr[k] << 8 | mi->sub[k]);
		else
			h = mix(h, (uint64_t)o->reg << 32 | (uint32_t)o->imm);
	}
	return h;
}

static int cse_same(const MInst *a, const MInst *b)
{
	if (a->in.op != b->in.op || a->in.enc != b->in.enc || a->in.nops != b->in.nops || a->vmask != b->vmask ||
	    memcmp(&a->in.mod, &b->in.mod, sizeof a->in.mod))
		return 0;
	for (int k = 0; k < a->in.nops; k++) {
		const IsaOperand *x = &a->in.ops[k], *y = &b->in.ops[k];
		if (x->kind != y->kind || x->count != y->count)
			return 0;
		if (k == 0)
			continue;
		if (a->vmask & (1u << k)) {
			if (a->vr[k] != b->vr[k] || a->sub[k] != b->sub[k])
				return 0;
		} else if (x->reg != y->reg || x->imm != y->imm) {
			return 0;
		}
	}
	return 1;
}

int amd_opt(MFunc *f, AmdOptStats *st)
{
	int nv = (int)f->vregs.len, ni = (int)f->insns.len, nb = (int)f->blocks.len;
	AmdOptStats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	int32_t *nuse = calloc((size_t)nv + 1, sizeof *nuse);   /* reads by other instructions */
	int32_t *ndefi = calloc((size_t)nv + 1, sizeof *ndefi); /* defining instructions */
	int32_t *defstart = calloc((size_t)nv + 2, sizeof *defstart);
	int32_t *deflist = malloc(sizeof(int32_t) * ((size_t)ni * ISA_MAX_OPS + 1));
	int32_t *blk = malloc(sizeof(int32_t) * ((size_t)ni + 1)); /* block of each instruction */
	int32_t *defat = malloc(sizeof(int32_t) * ((size_t)nv + 1)); /* the one defining instruction */
	int32_t *firstuse = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	int32_t *usebl = malloc(sizeof(int32_t) * ((size_t)nv + 1)); /* block of all uses, -2 = several */
	int32_t *repl = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	/* a vreg enters once when its reads drop to 0, and once more per
	 * instruction whose SCC readers all die (scc_nrd) */
	int32_t *work = malloc(sizeof(int32_t) * ((size_t)nv + (size_t)ni + 1));
	uint8_t *dead = calloc((size_t)ni + 1, 1);
	int32_t *scc_nrd = calloc((size_t)ni + 1, sizeof(int32_t)); /* readers of the SCC i writes */
	int32_t *scc_src = malloc(sizeof(int32_t) * ((size_t)ni + 1)); /* writer of the SCC i reads, -1 */
	int8_t *first_scc = calloc((size_t)nb + 1, 1);  /* per block: 0 none, 1 read, 2 write */
	int rc = -1;
	if (!nuse || !ndefi || !defstart || !deflist || !blk || !defat || !firstuse || !usebl || !repl ||
	    !work || !dead || !scc_nrd || !scc_src || !first_scc)
		goto out;

	/* Constants: vregs whose only definition is a plain 32-bit move of an
	 * inline constant or literal (ndefi counts defining instructions). */
	uint32_t *kval = calloc((size_t)nv + 1, sizeof *kval);
	uint8_t *kknown = calloc((size_t)nv + 1, 1);
	if (!kval || !kknown) {
		free(kval);
		free(kknown);
		goto out;
	}
	for (int i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
			if (mi->vmask & (1u << k))
				ndefi[mi->vr[k]]++;
	}
	for (int i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		int32_t c;
		if ((mi->in.op == ISA_V_MOV_B32 || mi->in.op == ISA_S_MOV_B32) && !mi->flags && mi->ndef == 1 &&
		    mi->in.nops == 2 && (mi->vmask & 1) && !mi->sub[0] && mi->in.ops[0].count == 1 &&
		    f->vregs.data[mi->vr[0]].size == 1 && ndefi[mi->vr[0]] == 1 && mi->in.enc != ISA_ENC_DPP &&
		    const_val(mi, 1, &c)) {
			kknown[mi->vr[0]] = 1;
			kval[mi->vr[0]] = (uint32_t)c;
		}
	}
	for (int i = 0; i < ni; i++) {
		MInst *mi = &f->insns.data[i];
		int32_t c;
		if (fold_const(mi, kval, kknown)) {
			st->folded++;
			/* A folded single-def result is a constant for later folds. */
			if (ndefi[mi->vr[0]] == 1 && const_val(mi, 1, &c))
				kknown[mi->vr[0]] = 1, kval[mi->vr[0]] = (uint32_t)c;
		}
		st->folded += fold(mi);
	}
	free(kval);
	free(kknown);
	memset(ndefi, 0, sizeof(int32_t) * ((size_t)nv + 1));

	int entry_reentered = 0;
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		for (int s = 0; s < 3; s++)
			if (bl->succ[s] == 0)
				entry_reentered = 1;
		for (int i = bl->first; i < bl->last; i++)
			blk[i] = b;
	}
	for (int v = 0; v < nv; v++)
		defat[v] = -1, firstuse[v] = -1, usebl[v] = -1, repl[v] = v;

	/* Use and def counts; an instruction counts once per vreg it defines. */
	for (int i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		for (int k = 0; k < mi->in.nops; k++) {
			if (!(mi->vmask & (1u << k)))
				continue;
			int v = mi->vr[k];
			if (mi_is_def(mi, k)) {
				int seen = 0;
				for (int j = 0; j < k; j++)
					if ((mi->vmask & (1u << j)) && mi->vr[j] == v && mi_is_def(mi, j))
						seen = 1;
				if (!seen)
					ndefi[v]++, defat[v] = i;
			}
			if (mi_is_use(mi, k) && !defines_vreg(mi, v)) {
				nuse[v]++;
				if (firstuse[v] < 0)
					firstuse[v] = i;
				usebl[v] = usebl[v] == -1 || usebl[v] == blk[i] ? blk[i] : -2;
			}
		}
	}

	/* Local value numbering: an op identical to an earlier one in the block
	 * (same operands, every source vreg single-def and not redefined in
	 * between, same exec epoch) is a copy of the earlier result.  Open
	 * addressing over 2n slots, stamped per block instead of cleared. */
	size_t tsz = 16;
	while (tsz < 2 * (size_t)ni + 2)
		tsz <<= 1;
	int32_t *tab = malloc(sizeof(int32_t) * tsz), *stamp = malloc(sizeof(int32_t) * tsz);
	int32_t *tepoch = malloc(sizeof(int32_t) * tsz); /* exec epoch of tab's entry */
	int32_t *cse_of = malloc(sizeof(int32_t) * ((size_t)ni + 1)); /* earlier twin or -1 */
	if (!tab || !stamp || !tepoch || !cse_of) {
		free(tab);
		free(stamp);
		free(tepoch);
		free(cse_of);
		goto out;
	}
	for (size_t h = 0; h < tsz; h++)
		stamp[h] = -1;
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		int epoch = 0;
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *mi = &f->insns.data[i];
			cse_of[i] = -1;
			unsigned op = mi->in.op;
			int wexec = op < MOP_BASE && (isa_ops[op].flags & ISA_F_WEXEC);
			for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
				if (!(mi->vmask & (1u << k)) && mi->in.ops[k].kind == ISA_K_SPECIAL &&
				    (mi->in.ops[k].reg == ISA_SP_EXEC_LO || mi->in.ops[k].reg == ISA_SP_EXEC_HI))
					wexec = 1;
			if (op >= MOP_BASE && op != MOP_COPY)
				wexec = 1; /* be safe around pseudo ops */
			if (wexec) {
				epoch++;
				continue;
			}
			if (!cse_able(f, mi) || ndefi[mi->vr[0]] != 1)
				continue;
			int ok = 1;
			for (int k = 1; k < mi->in.nops && ok; k++)
				if ((mi->vmask & (1u << k)) && ndefi[mi->vr[k]] != 1)
					ok = 0;
			if (!ok)
				continue;
			uint64_t h = cse_hash(mi, epoch);
			size_t at = (size_t)h & (tsz - 1);
			for (;; at = (at + 1) & (tsz - 1)) {
				if (stamp[at] != b) {
					stamp[at] = b, tab[at] = i, tepoch[at] = epoch;
					break;
				}
				/* The epoch is part of the key, not only of the hash: twins
				 * under different exec masks must not match when their
				 * probe sequences happen to meet. */
				const MInst *e = &f->insns.data[tab[at]];
				if (tepoch[at] != epoch || !cse_same(e, mi))
					continue;
				/* Sources defined in this block after the twin: the twin read
				 * an older (previous iteration) value. */
				int e_i = tab[at];
				for (int k = 1; k < mi->in.nops && ok; k++)
					if ((mi->vmask & (1u << k)) && blk[defat[mi->vr[k]]] == b && defat[mi->vr[k]] > e_i)
						ok = 0;
				if (ok)
					cse_of[i] = e_i;
				break;
			}
		}
	}
	free(tab);
	free(stamp);
	free(tepoch);

	/* Copy propagation: decide replacements, then rewrite reads in one sweep. */
	for (int i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		int d, s;
		if (cse_of[i] >= 0) { /* a twin: `d = copy twin's result` */
			d = mi->vr[0];
			s = f->insns.data[cse_of[i]].vr[0];
			if (ndefi[s] != 1 || defat[d] != i)
				continue;
		} else if (!is_copy(f, mi, &d, &s) || ndefi[d] != 1 || ndefi[s] != 1 || defat[d] != i) {
			continue;
		}
		const MInst *sd = &f->insns.data[defat[s]];
		if (sd->flags & (MI_TIED | MI_PARTIAL))
			continue;
		int ok = 0;
		if (blk[defat[s]] == 0 && !entry_reentered)
			ok = 1;
		else if (blk[defat[s]] == blk[i] && defat[s] < i && (nuse[d] == 0 || (usebl[d] == blk[i] && firstuse[d] > i)))
			ok = 1;
		if (!ok)
			continue;
		/* Chains (%c = copy %d, %d = copy %s) resolve because s's own
		 * replacement was decided earlier in layout order when it was a copy. */
		repl[d] = repl[s];
		if (cse_of[i] >= 0)
			st->cse++;
		else
			st->copies++;
	}
	free(cse_of);
	for (int i = 0; i < ni; i++) {
		MInst *mi = &f->insns.data[i];
		for (int k = 0; k < mi->in.nops; k++) {
			if (!(mi->vmask & (1u << k)) || mi_is_def(mi, k))
				continue;
			int v = mi->vr[k], r = repl[v];
			if (r == v)
				continue;
			/* Follow the chain (copies of copies); bounded by V steps in total
			 * because we path-compress. */
			while (repl[r] != r)
				r = repl[r];
			repl[v] = r;
			mi->vr[k] = r;
			nuse[v]--;
			nuse[r]++;
		}
	}

	/* Coalescing into a variable: `%t = op ...; ...; %d = copy %t` with %t
	 * defined once and read only by the copy, and %d (defined elsewhere too,
	 * so not propagated above: a loop-carried fragment register) neither read
	 * nor written in between and exec unchanged: op writes %d itself and the
	 * copy goes.  Same lanes, same value; the window bounds the scan. */
	for (int i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		int d, t;
		if (dead[i] || !is_copy(f, mi, &d, &t) || ndefi[t] != 1 || nuse[t] != 1 || defat[t] < 0)
			continue;
		int di = defat[t];
		MInst *dm = &f->insns.data[di];
		unsigned op = dm->in.op;
		if (di >= i || i - di > 32 || blk[di] != blk[i] || op >= MOP_BASE || dm->ndef != 1 ||
		    !(dm->vmask & 1) || dm->vr[0] != t || dm->sub[0] || dm->in.enc == ISA_ENC_DPP ||
		    (dm->flags & (MI_TIED | MI_PARTIAL)) || has_effect(dm) ||
		    !(isa_ops[op].flags & (ISA_F_VALU | ISA_F_SALU)) || (isa_ops[op].flags & (ISA_F_MFMA | ISA_F_WMMA)))
			continue;
		int ok = 1;
		for (int j = di; j < i && ok; j++) {
			const MInst *x = &f->insns.data[j];
			if (x->in.op >= MOP_BASE || (isa_ops[x->in.op].flags & ISA_F_WEXEC))
				ok = 0;
			for (int k = 0; k < x->in.nops && ok; k++) {
				if ((x->vmask & (1u << k)) && x->vr[k] == d && j > di)
					ok = 0;
				if (!(x->vmask & (1u << k)) && k < x->ndef && x->in.ops[k].kind == ISA_K_SPECIAL &&
				    (x->in.ops[k].reg == ISA_SP_EXEC_LO || x->in.ops[k].reg == ISA_SP_EXEC_HI))
					ok = 0;
			}
		}
		if (!ok)
			continue;
		dm->vr[0] = d;
		dead[i] = 1;
		nuse[t]--;
		ndefi[t]--, ndefi[d]++; /* the copy still counts as a def of %d below */
		defat[t] = -1;
		st->removed++;
	}

	/* A uniform branch tests a condition materialised as a mask:
	 * `s_cmp ..; s_cselect %x, -1, 0; ..; s_cmp_lg %x, 0; s_cbranch_scc`,
	 * or `s_and %x, ..` (SCC = %x != 0 after every logical op).  With no
	 * SCC write since %x was made, SCC already holds the test's result: the
	 * test goes (and the select with it when the branch read only that). */
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		int nz = -1, nzw = 0; /* SCC == (vreg nz != 0) in nzw bits (0: any width, -1/0 values) */
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *mi = &f->insns.data[i];
			unsigned op = mi->in.op;
			if (dead[i])
				continue;
			if (op >= MOP_BASE) {
				if (op != MOP_COPY)
					nz = -1;
				continue;
			}
			int32_t c0, c1;
			int w = op == ISA_S_CMP_LG_U32 ? 32 : op == ISA_S_CMP_LG_U64 ? 64 : 0;
			if (w && nz >= 0 && (!nzw || nzw == w) && mi->in.nops == 2 && (mi->vmask & 1) && mi->vr[0] == nz &&
			    !mi->sub[0] && const_val(mi, 1, &c0) && c0 == 0) {
				dead[i] = 1;
				nuse[nz]--;
				st->removed++;
				continue; /* SCC keeps its value */
			}
			bool whole = (mi->vmask & 1) && !mi->sub[0] && ndefi[mi->vr[0]] == 1;
			if ((op == ISA_S_CSELECT_B32 || op == ISA_S_CSELECT_B64) && whole && mi->in.nops == 3 &&
			    const_val(mi, 1, &c0) && c0 == -1 && const_val(mi, 2, &c1) && c1 == 0) {
				nz = mi->vr[0], nzw = 0; /* reads SCC, writes none */
				continue;
			}
			if (!(isa_ops[op].flags & ISA_F_WSCC))
				continue;
			nz = -1;
			if (!whole)
				continue;
			switch (op) {
			case ISA_S_AND_B32: case ISA_S_OR_B32: case ISA_S_XOR_B32: case ISA_S_ANDN2_B32:
			case ISA_S_ORN2_B32: case ISA_S_NAND_B32: case ISA_S_NOR_B32: case ISA_S_XNOR_B32:
				nz = mi->vr[0], nzw = 32;
				break;
			case ISA_S_AND_B64: case ISA_S_OR_B64: case ISA_S_XOR_B64: case ISA_S_ANDN2_B64:
			case ISA_S_ORN2_B64: case ISA_S_NAND_B64: case ISA_S_NOR_B64: case ISA_S_XNOR_B64:
				nz = mi->vr[0], nzw = 64;
				break;
			default: break;
			}
		}
	}

	/* SCC liveness: first SCC access per block, then per block which
	 * instruction's SCC each reader reads and how many readers each write
	 * has (one more when SCC may be read after the block). */
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		for (int i = bl->first; i < bl->last && !first_scc[b]; i++) {
			if (dead[i])
				continue;
			unsigned op = f->insns.data[i].in.op;
			uint32_t fl = op < MOP_BASE ? isa_ops[op].flags : 0;
			if (fl & ISA_F_RSCC)
				first_scc[b] = 1;
			else if (fl & ISA_F_WSCC)
				first_scc[b] = 2;
		}
	}
	for (int b = 0; b < nb; b++) {
		const MBlock *bl = &f->blocks.data[b];
		int w = -1;
		for (int i = bl->first; i < bl->last; i++) {
			scc_src[i] = -1;
			if (dead[i])
				continue;
			unsigned op = f->insns.data[i].in.op;
			uint32_t fl = op < MOP_BASE ? isa_ops[op].flags : 0;
			if (fl & ISA_F_RSCC) {
				scc_src[i] = w;
				if (w >= 0)
					scc_nrd[w]++;
			}
			if (fl & ISA_F_WSCC)
				w = i;
		}
		for (int s = 0; s < 3 && w >= 0; s++)
			if (bl->succ[s] >= 0 && first_scc[bl->succ[s]] != 2)
				scc_nrd[w]++; /* read there, or passed through: be conservative */
	}

	/* Def lists (CSR) for the worklist. */
	for (int v = 0; v < nv; v++)
		defstart[v + 1] = defstart[v] + ndefi[v];
	for (int v = 0; v < nv; v++)
		ndefi[v] = defstart[v];
	for (int i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		int prev[ISA_MAX_OPS], np = 0;
		for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
			if (!(mi->vmask & (1u << k)))
				continue;
			int v = mi->vr[k], seen = 0;
			for (int j = 0; j < np; j++)
				seen |= prev[j] == v;
			if (seen)
				continue;
			prev[np++] = v;
			deflist[ndefi[v]++] = i;
		}
	}

	int nw = 0;
	for (int v = 0; v < nv; v++)
		if (nuse[v] == 0)
			work[nw++] = v;
	while (nw) {
		int v = work[--nw];
		for (int j = defstart[v]; j < defstart[v + 1]; j++) {
			int i = deflist[j];
			MInst *mi = &f->insns.data[i];
			if (dead[i])
				continue;
			if (mi->in.op == MOP_PCOPY) {
				/* Drop the pairs writing v; the copy dies with its last pair. */
				int npair = mi->in.nops / 2, live = 0;
				for (int p = 0; p < npair; p++) {
					if (mi->in.ops[p].kind == ISA_K_NONE)
						continue; /* dropped before */
					if (!(mi->vmask & (1u << p)) || nuse[mi->vr[p]] != 0) {
						live++;
						continue;
					}
					int q = npair + p;
					if ((mi->vmask & (1u << q)) && --nuse[mi->vr[q]] == 0)
						work[nw++] = mi->vr[q];
					/* Marked by kind NONE, compacted below. */
					mi->vmask &= (uint8_t) ~((1u << p) | (1u << q));
					mi->in.ops[p].kind = ISA_K_NONE;
					mi->vr[p] = mi->vr[q] = -1;
					st->removed_pairs++;
				}
				if (!live) {
					dead[i] = 1;
					st->removed++;
				}
				continue;
			}
			if (has_effect(mi) || writes_phys(mi))
				continue;
			if (mi->in.op < MOP_BASE && (isa_ops[mi->in.op].flags & ISA_F_WSCC) && scc_nrd[i])
				continue;
			int alldead = 1;
			for (int k = 0; k < mi->ndef && k < mi->in.nops; k++)
				if ((mi->vmask & (1u << k)) && nuse[mi->vr[k]] != 0)
					alldead = 0;
			if (!alldead)
				continue;
			dead[i] = 1;
			st->removed++;
			for (int k = 0; k < mi->in.nops; k++) {
				if (!(mi->vmask & (1u << k)) || !mi_is_use(mi, k) || defines_vreg(mi, mi->vr[k]))
					continue;
				int s = mi->vr[k];
				if (--nuse[s] == 0)
					work[nw++] = s;
			}
			/* The SCC writer it read may now be dead too (s_add of a
			 * dead s_add/s_addc pair): visit it again through a def. */
			int p = scc_src[i];
			if (p >= 0 && --scc_nrd[p] == 0 && !dead[p]) {
				const MInst *pm = &f->insns.data[p];
				for (int k = 0; k < pm->ndef && k < pm->in.nops; k++)
					if ((pm->vmask & (1u << k)) && nuse[pm->vr[k]] == 0) {
						work[nw++] = pm->vr[k];
						break;
					}
			}
		}
	}

	/* Compact: drop dead instructions and dead PCOPY pairs; fix block ranges. */
	int o = 0;
	for (int b = 0; b < nb; b++) {
		MBlock *bl = &f->blocks.data[b];
		int first = o;
		for (int i = bl->first; i < bl->last; i++) {
			if (dead[i])
				continue;
			if (f->insns.data[i].in.op != MOP_PCOPY || !st->removed_pairs) {
				if (o != i) /* plain move down: no copy through a temporary */
					f->insns.data[o] = f->insns.data[i];
				o++;
				continue;
			}
			MInst mi = f->insns.data[i];
			{
				int npair = mi.in.nops / 2, n = 0;
				MInst c = mi;
				c.vmask = 0;
				for (int p = 0; p < npair; p++) {
					if (mi.in.ops[p].kind == ISA_K_NONE)
						continue;
					n++;
				}
				int at = 0;
				for (int p = 0; p < npair; p++) {
					if (mi.in.ops[p].kind == ISA_K_NONE)
						continue;
					for (int h = 0; h < 2; h++) {
						int from = h ? npair + p : p, to = h ? n + at : at;
						c.in.ops[to] = mi.in.ops[from];
						c.vr[to] = mi.vr[from];
						c.sub[to] = mi.sub[from];
						if (mi.vmask & (1u << from))
							c.vmask |= (uint8_t)(1u << to);
					}
					at++;
				}
				c.in.nops = (uint8_t)(2 * n);
				c.ndef = (uint8_t)n;
				mi = c;
			}
			f->insns.data[o++] = mi;
		}
		bl->first = first;
		bl->last = o;
	}
	f->insns.len = (size_t)o;
	rc = 0;
out:
	free(nuse);
	free(ndefi);
	free(defstart);
	free(deflist);
	free(blk);
	free(defat);
	free(firstuse);
	free(usebl);
	free(repl);
	free(work);
	free(dead);
	free(scc_nrd);
	free(scc_src);
	free(first_scc);
	return rc;
}
