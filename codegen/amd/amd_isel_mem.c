/* amd_isel_mem.c — memory (part of amd_isel, SIMT IR -> MIR). */
#include "amd_isel_impl.h"

/* ---- memory -------------------------------------------------------------- */

static int dtype_bytes_of(int t)
{
	switch (t) {
	case DT_BOOL: case DT_I8: case DT_U8: case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ:
	case DT_FP8E5M2FNUZ: return 1;
	case DT_I16: case DT_F16: case DT_BF16: return 2;
	case DT_I64: case DT_F64: return 8;
	default: return 4;
	}
}

static bool signed_small(int t)
{
	return t == DT_I8 || t == DT_I16;
}

/* Global address as VGPR pair (+ optional SGPR base) and an in-range offset. */
typedef struct {
	Val vaddr; /* VGPR pair, or VGPR dword offset when saddr is set */
	Val saddr; /* SGPR pair or kind VK_CONST = off */
	int32_t off;
} GAddr;

/* areg = base + zext(off) with a uniform 64-bit base and a per-lane u32
 * offset (the lowering's unrolled copies): *off = the offset's SIMT
 * register, or -1. */
static int saddr_form(const Isel *s, int areg, int *off)
{
	*off = -1;
	if (s->uni[areg] || s->ndefs[areg] != 1)
		return -1;
	const SInst *add = &s->sf->code.data[s->def1[areg]];
	if (add->op != SI_ADD || add->type != DT_I64 || add->guard >= 0 || !s->uni[add->a] || s->isconst[add->a])
		return -1;
	int z = add->b;
	if (s->ndefs[z] != 1)
		return -1;
	const SInst *cv = &s->sf->code.data[s->def1[z]];
	if (cv->op != SI_CVT || cv->type != DT_I64 || cv->type2 != DT_U32 || cv->guard >= 0)
		return -1;
	*off = cv->a;
	return add->a;
}

static GAddr global_addr(Isel *s, int areg, int64_t imm)
{
	GAddr g;
	g.saddr = cst(0);
	g.saddr.kind = VK_CONST;
	g.off = 0;
	bool fits = imm >= -4096 && imm <= 4095;
	int voff, sbase = saddr_form(s, areg, &voff);
	if (sbase >= 0 && fits) { /* SGPR base + 32-bit VGPR offset: no 64-bit lane address */
		g.saddr = opnd_all(s, sbase);
		g.vaddr = to_vgpr(s, opnd(s, voff, 0));
		g.off = (int32_t)imm;
		return g;
	}
	Val a = opnd_all(s, areg);
	if (!fits) {
		Val t = reg(newv(s, s->uni[areg] ? MR_S : MR_V, 2), 0, 2);
		Val c = cst((uint32_t)imm);
		if (imm < INT32_MIN || imm > INT32_MAX || imm < 0) {
			unsupported(s, "a global memory offset outside 0..2^31");
			return g;
		}
		sel_add64(s, t, a, c, false, s->uni[areg]);
		a = t;
		imm = 0;
	}
	g.off = (int32_t)imm;
	if (vcls(s, a) == MR_S) {
		g.saddr = a;
		g.vaddr = reg(newv(s, MR_V, 1), 0, 1);
		valu1(s, ISA_V_MOV_B32, g.vaddr, cst(0));
	} else {
		g.vaddr = a;
	}
	return g;
}

static unsigned global_load_op(int bytes, bool sgn)
{
	switch (bytes) {
	case 1: return sgn ? ISA_GLOBAL_LOAD_SBYTE : ISA_GLOBAL_LOAD_UBYTE;
	case 2: return sgn ? ISA_GLOBAL_LOAD_SSHORT : ISA_GLOBAL_LOAD_USHORT;
	case 8: return ISA_GLOBAL_LOAD_DWORDX2;
	case 16: return ISA_GLOBAL_LOAD_DWORDX4;
	default: return ISA_GLOBAL_LOAD_DWORD;
	}
}
static unsigned global_store_op(int bytes)
{
	switch (bytes) {
	case 1: return ISA_GLOBAL_STORE_BYTE;
	case 2: return ISA_GLOBAL_STORE_SHORT;
	case 8: return ISA_GLOBAL_STORE_DWORDX2;
	case 16: return ISA_GLOBAL_STORE_DWORDX4;
	default: return ISA_GLOBAL_STORE_DWORD;
	}
}
static unsigned ds_load_op(int bytes, bool sgn)
{
	switch (bytes) {
	case 1: return sgn ? ISA_DS_READ_I8 : ISA_DS_READ_U8;
	case 2: return sgn ? ISA_DS_READ_I16 : ISA_DS_READ_U16;
	case 8: return ISA_DS_READ_B64;
	case 16: return ISA_DS_READ_B128;
	default: return ISA_DS_READ_B32;
	}
}
static unsigned ds_store_op(int bytes)
{
	switch (bytes) {
	case 1: return ISA_DS_WRITE_B8;
	case 2: return ISA_DS_WRITE_B16;
	case 8: return ISA_DS_WRITE_B64;
	case 16: return ISA_DS_WRITE_B128;
	default: return ISA_DS_WRITE_B32;
	}
}

/* The loaded value goes to a VGPR; a uniform-typed destination is never
 * produced (loads are divergent in the analysis). */
/* LDS address of a SIMT shared-memory access: a VGPR plus the DS
 * instruction's 16-bit unsigned offset (folded from constants). */
static Val lds_addr(Isel *s, const SInst *in, int32_t *off_out)
{
	Val a = opnd(s, in->a, 0);
	int64_t off = in->imm;
	if (a.kind == VK_CONST) {
		off += (int32_t)a.bits;
		a = cst(0);
	}
	if (off < 0 || off > 65535) {
		Val t = reg(newv(s, MR_V, 1), 0, 1);
		valu2(s, ISA_V_ADD_U32, t, a, cst((uint32_t)off));
		a = t, off = 0;
	}
	*off_out = (int32_t)off;
	return to_vgpr(s, a);
}

void sel_ld(Isel *s, const SInst *in)
{
	int bytes = dtype_bytes_of(in->type);
	bool sgn = signed_small(in->type);
	int n = bytes == 8 ? 2 : 1;
	int vec = in->vec > 1 ? in->vec : 1;
	Val d = dst_of(s, in->dst, 0, n);
	bool direct = vec > 1 && is_tuple(s, in->dst, vec);
	if (vec > 1) { /* one wide load into a tuple, then moves to the SIMT registers */
		bytes = 4 * vec;
		n = vec;
		d = direct ? dst_of(s, in->dst, 0, vec) : reg(newv(s, MR_V, vec), 0, vec);
	}
	if (in->sub == SP_GLOBAL) {
		GAddr g = global_addr(s, in->a, in->imm);
		MInst *mi = emit(s, global_load_op(bytes, sgn), 1);
		put(s, mi, 0, d, ISA_TY_B32);
		put(s, mi, 1, g.vaddr, ISA_TY_B32);
		if (g.saddr.kind == VK_CONST)
			mi_phys(mi, 2, isa_off());
		else
			put(s, mi, 2, g.saddr, ISA_TY_B32);
		mi->in.mod.offset = g.off;
		if (in->guard >= 0)
			mi->flags |= MI_PARTIAL;
	} else if (in->sub == SP_SHARED) {
		int32_t off;
		Val a = lds_addr(s, in, &off);
		/* c >= 0: a 16-bit load into the high half, the low half of c kept */
		bool hi = in->c >= 0 && bytes == 2 && vec == 1;
		if (hi && (s->vr[in->c] != s->vr[in->dst] || s->vsub[in->c] != s->vsub[in->dst]))
			valu1(s, ISA_V_MOV_B32, d, opnd(s, in->c, 0));
		MInst *mi = emit(s, hi ? ISA_DS_READ_U16_D16_HI : ds_load_op(bytes, sgn), 1);
		put(s, mi, 0, d, ISA_TY_B32);
		put(s, mi, 1, a, ISA_TY_B32);
		mi->in.mod.offset = off;
		if (in->guard >= 0)
			mi->flags |= MI_PARTIAL;
		if (hi)
			mi->flags |= MI_TIED;
	} else {
		unsupported(s, "local (per-thread array) memory");
		return;
	}
	for (int k = 0; k < vec && vec > 1 && !direct; k++)
		valu1(s, ISA_V_MOV_B32, dst_of(s, in->dst + k, 0, 1), reg(d.vreg, k, 1));
}

/* The AMD instruction of a native atomic (lower_atomic checks the set). */
static unsigned atom_op(const SInst *in)
{
	bool g = in->sub == SP_GLOBAL, w64 = in->type == DT_I64;
	bool sg = in->type == DT_I32 || in->type == DT_I64, f = in->type == DT_F32;
	if (in->op == SI_ATOM_ADD)
		return g ? (f ? ISA_GLOBAL_ATOMIC_ADD_F32 : w64 ? ISA_GLOBAL_ATOMIC_ADD_X2 : ISA_GLOBAL_ATOMIC_ADD)
		         : (f ? ISA_DS_ADD_F32 : w64 ? ISA_DS_ADD_U64 : ISA_DS_ADD_U32);
	bool mx = in->op == SI_ATOM_MAX;
	if (g)
		return w64 ? (mx ? ISA_GLOBAL_ATOMIC_SMAX_X2 : ISA_GLOBAL_ATOMIC_SMIN_X2)
		           : mx ? (sg ? ISA_GLOBAL_ATOMIC_SMAX : ISA_GLOBAL_ATOMIC_UMAX)
		                : (sg ? ISA_GLOBAL_ATOMIC_SMIN : ISA_GLOBAL_ATOMIC_UMIN);
	return f ? (mx ? ISA_DS_MAX_F32 : ISA_DS_MIN_F32)
	         : mx ? (sg ? ISA_DS_MAX_I32 : ISA_DS_MAX_U32) : (sg ? ISA_DS_MIN_I32 : ISA_DS_MIN_U32);
}

void sel_st(Isel *s, const SInst *in)
{
	int bytes = dtype_bytes_of(in->type);
	Val v;
	if (in->vec > 1 && is_tuple(s, in->b, in->vec)) { /* a loaded tuple (group_mem_tuples) */
		bytes = 4 * in->vec;
		v = dst_of(s, in->b, 0, in->vec);
	} else if (in->vec > 1) { /* gather the SIMT registers into one tuple */
		bytes = 4 * in->vec;
		v = reg(newv(s, MR_V, in->vec), 0, in->vec);
		for (int k = 0; k < in->vec; k++) {
			MInst *mi = valu1(s, ISA_V_MOV_B32, reg(v.vreg, k, 1), opnd(s, in->b + k, 0));
			if (!k)
				mi->flags |= MI_DEFALL;
		}
	} else {
		v = to_vgpr(s, opnd_all(s, in->b));
	}
	if (in->sub == SP_GLOBAL) {
		GAddr g = global_addr(s, in->a, in->imm);
		MInst *mi = emit(s, in->op != SI_ST ? atom_op(in) : global_store_op(bytes), 0);
		put(s, mi, 0, g.vaddr, ISA_TY_B32);
		put(s, mi, 1, v, ISA_TY_B32);
		if (g.saddr.kind == VK_CONST)
			mi_phys(mi, 2, isa_off());
		else
			put(s, mi, 2, g.saddr, ISA_TY_B32);
		mi->in.mod.offset = g.off;
	} else if (in->sub == SP_SHARED) {
		int32_t off;
		Val a = lds_addr(s, in, &off);
		MInst *mi = emit(s, in->op != SI_ST ? atom_op(in) : ds_store_op(bytes), 0);
		put(s, mi, 0, a, ISA_TY_B32);
		put(s, mi, 1, v, ISA_TY_B32);
		mi->in.mod.offset = off;
	} else {
		unsupported(s, "this memory space for stores/atomics");
	}
}

/* SI_ATOM_CAS (the software atomics' loop, lower_data.c): dst = the old
 * word, returned.  Global: global_atomic_cmpswap (glc) with the data tuple
 * {new, compare}.  Shared: ds_cmpst_rtn with two data operands, compare
 * then new on gfx9 (ds_cmpst), new then compare on gfx11 (ds_cmpstore). */
void sel_cas(Isel *s, const SInst *in)
{
	int n = in->type == DT_I64 ? 2 : 1;
	if (in->sub == SP_SHARED) {
		int32_t off;
		Val a = lds_addr(s, in, &off);
		Val cmp = to_vgpr(s, opnd_all(s, in->b)), nv = to_vgpr(s, opnd_all(s, in->c));
		bool g11 = s->it == TA_TARGET_GFX1100;
		MInst *mi = emit(s, n == 2 ? ISA_DS_CMPST_RTN_B64 : ISA_DS_CMPST_RTN_B32, 1);
		put(s, mi, 0, dst_of(s, in->dst, 0, n), ISA_TY_B32);
		put(s, mi, 1, a, ISA_TY_B32);
		put(s, mi, 2, g11 ? nv : cmp, ISA_TY_B32);
		put(s, mi, 3, g11 ? cmp : nv, ISA_TY_B32);
		mi->in.mod.offset = off;
		return;
	}
	if (in->sub != SP_GLOBAL) {
		unsupported(s, "a compare-and-swap outside global and shared memory");
		return;
	}
	Val t = reg(newv(s, MR_V, 2 * n), 0, 2 * n);
	for (int k = 0; k < n; k++) {
		MInst *mi = valu1(s, ISA_V_MOV_B32, reg(t.vreg, k, 1), opnd(s, in->c, k));
		if (!k)
			mi->flags |= MI_DEFALL;
		valu1(s, ISA_V_MOV_B32, reg(t.vreg, n + k, 1), opnd(s, in->b, k));
	}
	GAddr g = global_addr(s, in->a, in->imm);
	MInst *mi = emit(s, n == 2 ? ISA_GLOBAL_ATOMIC_CMPSWAP_X2_RTN : ISA_GLOBAL_ATOMIC_CMPSWAP_RTN, 1);
	put(s, mi, 0, dst_of(s, in->dst, 0, n), ISA_TY_B32);
	put(s, mi, 1, g.vaddr, ISA_TY_B32);
	put(s, mi, 2, t, ISA_TY_B32);
	if (g.saddr.kind == VK_CONST)
		mi_phys(mi, 3, isa_off());
	else
		put(s, mi, 3, g.saddr, ISA_TY_B32);
	mi->in.mod.offset = g.off;
	mi->in.mod.cpol |= ISA_CPOL_GLC;
}

/* Before vregs are made (after group_mma_tuples): the destination of a
 * vector load becomes one tuple vreg, so the load writes it directly and a
 * vector store of the same registers reads it without moves.  Every
 * definition of the registers must be such a load of the whole range
 * (several: a copy's guarded and unguarded versions, or a pipelined copy's
 * stages), or one unguarded zero each right before a guarded one (lanes
 * that do not load keep zeros).  Each of those starts a new value of the
 * whole tuple (tfirst), so it is not live before. */
void group_mem_tuples(Isel *s)
{
	const SimtFunc *sf = s->sf;
	size_t nr = sf->regs.len + 1;
	int32_t *expect = calloc(nr, sizeof(int32_t));
	uint8_t *bad = calloc(nr, 1);
	if (!expect || !bad) {
		free(expect), free(bad);
		return; /* no grouping: copies, still correct */
	}
	for (size_t i = 0; i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op != SI_LD || in->vec <= 1 || in->dst < 0)
			continue;
		int r = in->dst, n = in->vec;
		for (int k = 0; k < n; k++) {
			expect[r + k]++;
			if (in->guard < 0)
				continue;
			/* the zero before a guarded load: SIMT position i - n + k */
			const SInst *z = (int)i - n + k >= 0 ? &sf->code.data[i - n + k] : NULL;
			if (z && z->op == SI_MOVI && z->dst == r + k && z->guard < 0)
				expect[r + k]++;
			else
				bad[r] = 1;
		}
	}
	for (size_t i = 0; i < sf->code.len; i++) {
		const SInst *in = &sf->code.data[i];
		if (in->op != SI_LD || in->vec <= 1 || in->dst < 0 || bad[in->dst])
			continue;
		int r = in->dst, n = in->vec;
		bool ok = true;
		for (int k = 0; k < n && ok; k++) {
			int vt = sf->regs.data[r + k];
			ok = (vt == VT_I32 || vt == VT_F32) && !s->uni[r + k] && !s->isconst[r + k] && s->vr[r + k] < 0 &&
			     s->ndefs[r + k] == expect[r + k];
		}
		if (!ok)
			continue;
		int v = newv(s, MR_V, n);
		for (int k = 0; k < n; k++)
			s->vr[r + k] = v, s->vsub[r + k] = (uint8_t)k;
		s->tfirst[r] = 1;
	}
	free(expect);
	free(bad);
}
