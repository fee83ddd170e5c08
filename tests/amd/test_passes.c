/* test_passes.c — the MIR passes before register allocation (amd_opt,
 * amd_sched) and the allocation fallback, as tiny hand-built MIR snippets
 * with the expected dump inline (ACO style), plus the no-spill check on
 * every example. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "amd.h"
#include "codeobj.h"
#include "emu.h"
#include "api.h"
#include "mir.h"
#include "passtest.h"
#include "regalloc.h"
#include "tileasm.h"

/* ---- snippet builders ----------------------------------------------------- */

static int V(MFunc *f, int cls, int size)
{
	return mir_vreg(f, cls, size);
}

/* dst = op(a, b): a/b are vregs, or < 0 for the inline constant -a-1. */
static MInst *op2(MFunc *f, unsigned op, int dst, int a, int b)
{
	MInst *mi = mir_emit(f, op, 1);
	mi_vreg(mi, 0, f, dst, 0, f->vregs.data[dst].size);
	int src[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		if (k == 1 && op == ISA_V_MOV_B32)
			break;
		if (k == 1 && (op == ISA_S_MOV_B32 || op == ISA_S_MOV_B64 || op == MOP_COPY))
			break;
		if (src[k] >= 0)
			mi_vreg(mi, 1 + k, f, src[k], 0, f->vregs.data[src[k]].size);
		else
			mi_phys(mi, 1 + k, isa_const_u32(ISA_TY_B32, (uint32_t)(-src[k] - 1)));
	}
	return mi;
}

static MInst *mov(MFunc *f, unsigned op, int dst, int src)
{
	return op2(f, op, dst, src, 0);
}

/* ds_write_b32 addr, data (a side effect that keeps its operands alive). */
static void ds_store(MFunc *f, int addr, int data)
{
	MInst *mi = mir_emit(f, ISA_DS_WRITE_B32, 0);
	mi_vreg(mi, 0, f, addr, 0, 1);
	mi_vreg(mi, 1, f, data, 0, 1);
}

/* dst = global_load_dword vaddr(pair), off */
static MInst *gload(MFunc *f, int dst, int vaddr)
{
	MInst *mi = mir_emit(f, ISA_GLOBAL_LOAD_DWORD, 1);
	mi_vreg(mi, 0, f, dst, 0, 1);
	mi_vreg(mi, 1, f, vaddr, 0, 2);
	mi_phys(mi, 2, isa_off());
	return mi;
}

static void endpgm(MFunc *f)
{
	mir_emit(f, ISA_S_ENDPGM, 0);
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- amd_opt ---------------------------------------------------------------- */

Test(opt, dead_chain_and_copy_propagation)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int s0 = V(&f, MR_S, 1), s1 = V(&f, MR_S, 1), v2 = V(&f, MR_V, 1), v3 = V(&f, MR_V, 1),
	    v4 = V(&f, MR_V, 1), v5 = V(&f, MR_V, 1);
	mov(&f, ISA_S_MOV_B32, s0, -8);                /* read only by the dead add */
	op2(&f, ISA_S_ADD_U32, s1, s0, -2);            /* dead; its SCC is never read */
	mov(&f, ISA_V_MOV_B32, v2, -6);
	mov(&f, MOP_COPY, v3, v2);                     /* readers of %v3 read %v2 */
	mov(&f, ISA_V_MOV_B32, v4, v3);                /* a copy too */
	op2(&f, ISA_V_ADD_U32, v5, v4, v3);
	ds_store(&f, v2, v5);
	endpgm(&f);
	AmdOptStats st;
	cr_assert_eq(amd_opt(&f, &st), 0);
	expect_mir(&f, "bb0:\n"
			"\tv_mov_b32 %v2, 5\n"
			"\tv_add_u32 %v5, %v2, %v2\n"
			"\tds_write_b32 %v2, %v5\n"
			"\ts_endpgm\n");
	cr_expect_eq(st.copies, 2);
	cr_expect_eq(st.removed, 4);
	mir_free(&f);
}

Test(opt, scc_reader_keeps_its_writer)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int s0 = V(&f, MR_S, 1), s1 = V(&f, MR_S, 1), s2 = V(&f, MR_S, 1), v3 = V(&f, MR_V, 1);
	mov(&f, ISA_S_MOV_B32, s0, -8);
	op2(&f, ISA_S_ADD_U32, s1, s0, -2);    /* result dead, but s_addc reads its carry */
	op2(&f, ISA_S_ADDC_U32, s2, s0, -1);
	mov(&f, ISA_V_MOV_B32, v3, s2);
	ds_store(&f, v3, v3);
	endpgm(&f);
	cr_assert_eq(amd_opt(&f, NULL), 0);
	expect_mir(&f, "bb0:\n"
			"\ts_mov_b32 %s0, 7\n"
			"\ts_add_u32 %s1, %s0, 1\n"
			"\ts_addc_u32 %s2, %s0, 0\n"
			"\tv_mov_b32 %v3, %s2\n"
			"\tds_write_b32 %v3, %v3\n"
			"\ts_endpgm\n");
	mir_free(&f);
}

Test(opt, parallel_copy_loses_dead_pairs)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int s0 = V(&f, MR_S, 1), s1 = V(&f, MR_S, 1), s2 = V(&f, MR_S, 1), v3 = V(&f, MR_V, 1);
	MInst *pc = mir_emit(&f, MOP_PCOPY, 3);
	int dsts[3] = {s0, s1, s2};
	for (int k = 0; k < 3; k++) {
		mi_vreg(pc, k, &f, dsts[k], 0, 1);
		mi_phys(pc, 3 + k, isa_sgpr(2 + k, 1));
	}
	mov(&f, ISA_V_MOV_B32, v3, s1);
	ds_store(&f, v3, v3);
	endpgm(&f);
	AmdOptStats st;
	cr_assert_eq(amd_opt(&f, &st), 0);
	expect_mir(&f, "bb0:\n"
			"\tPCOPY %s1, s3\n"
			"\tv_mov_b32 %v3, %s1\n"
			"\tds_write_b32 %v3, %v3\n"
			"\ts_endpgm\n");
	cr_expect_eq(st.removed_pairs, 2);
	mir_free(&f);
}

Test(opt, copy_in_a_loop_is_not_propagated)
{
	/* %v1 is redefined every iteration after the copy: readers of %v2 in
	 * the next block must keep the copy's value. */
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int v0 = V(&f, MR_V, 1), v1 = V(&f, MR_V, 1), v2 = V(&f, MR_V, 1);
	mir_block(&f);
	mov(&f, ISA_V_MOV_B32, v0, -1);
	int b1 = mir_block(&f);
	op2(&f, ISA_V_ADD_U32, v1, v0, -2);
	mov(&f, ISA_V_MOV_B32, v2, v1);
	int b2 = mir_block(&f);
	ds_store(&f, v2, v2);
	endpgm(&f);
	f.blocks.data[0].succ[0] = b1;
	f.blocks.data[b1].succ[0] = b2;
	f.blocks.data[b1].succ[1] = b1;
	cr_assert_eq(amd_opt(&f, NULL), 0);
	char *got = mir_dump(&f);
	/* The add may write %v2 itself (coalescing), but bb2 reads %v2. */
	cr_expect(strstr(got, "v_mov_b32 %v2, %v1") != NULL || strstr(got, "%v2, 1") != NULL, "%s", got);
	cr_expect(strstr(got, "ds_write_b32 %v2, %v2") != NULL, "%s", got);
	free(got);
	mir_free(&f);
}

/* `%t = op; %d = copy %t` into a variable %d (several definitions: a loop-
 * carried fragment register) becomes `%d = op` when nothing between reads or
 * writes %d or exec; not when %d is read in between or exec changes. */
static char *coalesce_case(int read_between, int exec_between)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int a = V(&f, MR_V, 1), t = V(&f, MR_V, 1), d = V(&f, MR_V, 1), x = V(&f, MR_V, 1);
	mir_block(&f);
	gload(&f, a, V(&f, MR_V, 2));
	mov(&f, ISA_V_MOV_B32, d, -1); /* first value of %d */
	int b1 = mir_block(&f);
	op2(&f, ISA_V_ADD_F32, t, a, d);
	if (read_between)
		op2(&f, ISA_V_ADD_F32, x, d, d), ds_store(&f, x, x);
	if (exec_between) {
		MInst *mi = mir_emit(&f, ISA_S_MOV_B64, 1);
		mi_phys(mi, 0, isa_special(ISA_SP_EXEC_LO, 2));
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0xffffffffu));
	}
	mov(&f, ISA_V_MOV_B32, d, t);
	int b2 = mir_block(&f);
	ds_store(&f, d, d);
	endpgm(&f);
	f.blocks.data[0].succ[0] = b1;
	f.blocks.data[b1].succ[0] = b2;
	f.blocks.data[b1].succ[1] = b1;
	cr_assert_eq(amd_opt(&f, NULL), 0);
	char *got = mir_dump(&f);
	mir_free(&f);
	return got;
}

Test(opt, copy_into_a_variable_is_coalesced)
{
	char *got = coalesce_case(0, 0);
	cr_expect(strstr(got, "v_add_f32 %v2, %v0, %v2") != NULL && strstr(got, "%v1") == NULL, "%s", got);
	free(got);
	got = coalesce_case(1, 0);
	cr_expect(strstr(got, "v_mov_b32 %v2, %v1") != NULL, "%s", got);
	free(got);
	got = coalesce_case(0, 1);
	cr_expect(strstr(got, "v_mov_b32 %v2, %v1") != NULL, "%s", got);
	free(got);
}

Test(opt, trivial_folds)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int v0 = V(&f, MR_V, 1), v1 = V(&f, MR_V, 1), v2 = V(&f, MR_V, 1), v3 = V(&f, MR_V, 1),
	    v4 = V(&f, MR_V, 1);
	mov(&f, ISA_V_MOV_B32, v0, -8);
	op2(&f, ISA_V_ADD_U32, v1, -1, v0);        /* 0 + %v0: a copy, propagated */
	op2(&f, ISA_V_MUL_LO_U32, v2, v1, -5);     /* %v1 * 4: a shift */
	op2(&f, ISA_V_MUL_LO_U32, v3, v2, -4);     /* * 3 stays */
	op2(&f, ISA_V_MUL_LO_U32, v4, v3, v3);
	ds_store(&f, v4, v1);
	endpgm(&f);
	AmdOptStats st;
	cr_assert_eq(amd_opt(&f, &st), 0);
	expect_mir(&f, "bb0:\n"
			"\tv_mov_b32 %v0, 7\n"
			"\tv_lshlrev_b32 %v2, 2, %v0\n"
			"\tv_mul_lo_u32 %v3, %v2, 3\n"
			"\tv_mul_lo_u32 %v4, %v3, %v3\n"
			"\tds_write_b32 %v4, %v0\n"
			"\ts_endpgm\n");
	cr_expect_eq(st.folded, 2);
	mir_free(&f);
}

Test(opt, constants_fold)
{
	/* softmax's -inf: 0x80000000 ^ 0x7f800000 through two moved constants. */
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int v0 = V(&f, MR_V, 1), v1 = V(&f, MR_V, 1), v2 = V(&f, MR_V, 1), v3 = V(&f, MR_V, 1);
	MInst *mi = mir_emit(&f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, &f, v0, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0x80000000u));
	mi = mir_emit(&f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, &f, v1, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0x7f800000u));
	op2(&f, ISA_V_XOR_B32, v2, v0, v1);
	op2(&f, ISA_V_SUB_U32, v3, v2, -2); /* still constant: folds too */
	ds_store(&f, v3, v2);
	endpgm(&f);
	AmdOptStats st;
	cr_assert_eq(amd_opt(&f, &st), 0);
	expect_mir(&f, "bb0:\n"
			"\tv_mov_b32 %v2, -8388608\n"  /* 0xff800000 */
			"\tv_mov_b32 %v3, -8388609\n"
			"\tds_write_b32 %v3, %v2\n"
			"\ts_endpgm\n");
	mir_free(&f);
}

Test(opt, local_value_numbering)
{
	/* %v2 repeats %v1 (same op, same single-def source): its reader reads
	 * %v1 and it goes.  %v4 repeats it after an exec write: a VALU result
	 * under another mask is another value, so it stays. */
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int v0 = V(&f, MR_V, 1), v1 = V(&f, MR_V, 1), v2 = V(&f, MR_V, 1), s3 = V(&f, MR_S, 2), v4 = V(&f, MR_V, 1);
	MInst *in = mir_emit(&f, MOP_PCOPY, 1); /* %v0: the work-item id, not a constant */
	mi_vreg(in, 0, &f, v0, 0, 1);
	mi_phys(in, 1, isa_vgpr(0, 1));
	op2(&f, ISA_V_LSHLREV_B32, v1, -3, v0);
	op2(&f, ISA_V_LSHLREV_B32, v2, -3, v0);
	ds_store(&f, v1, v2);
	MInst *mi = mir_emit(&f, ISA_S_AND_SAVEEXEC_B64, 1);
	mi_vreg(mi, 0, &f, s3, 0, 2);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 1));
	op2(&f, ISA_V_LSHLREV_B32, v4, -3, v0);
	ds_store(&f, v1, v4);
	endpgm(&f);
	AmdOptStats st;
	cr_assert_eq(amd_opt(&f, &st), 0);
	expect_mir(&f, "bb0:\n"
			"\tPCOPY %v0, v0\n"
			"\tv_lshlrev_b32 %v1, 2, %v0\n"
			"\tds_write_b32 %v1, %v1\n"
			"\ts_and_saveexec_b64 %s3, 1\n"
			"\tv_lshlrev_b32 %v4, 2, %v0\n"
			"\tds_write_b32 %v1, %v4\n"
			"\ts_endpgm\n");
	cr_expect_eq(st.cse, 1);
	mir_free(&f);
}

/* ---- amd_sched ---------------------------------------------------------------- */

/* vaddr pair, k ALU values live to the end, one load, its use, then the k
 * values stored: the load should climb over the ALU work while the demand
 * allows. */
static void load_after_work(MFunc *f, int k, int *load_at)
{
	int va = V(f, MR_V, 2);
	MInst *mi = mir_emit(f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, f, va, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	mi->flags |= MI_DEFALL;
	mi = mir_emit(f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, f, va, 1, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	int *w = malloc(sizeof(int) * (size_t)k);
	for (int i = 0; i < k; i++) {
		w[i] = V(f, MR_V, 1);
		mov(f, ISA_V_MOV_B32, w[i], -(i % 60) - 1);
	}
	int ld = V(f, MR_V, 1);
	*load_at = (int)f->insns.len;
	gload(f, ld, va);
	ds_store(f, ld, ld);
	for (int i = 0; i < k; i++)
		ds_store(f, w[i], w[i]);
	endpgm(f);
	free(w);
}

static int find_op(const MFunc *f, unsigned op)
{
	for (size_t i = 0; i < f->insns.len; i++)
		if (f->insns.data[i].in.op == op)
			return (int)i;
	return -1;
}

Test(sched, load_hoisted_to_its_address)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int at;
	load_after_work(&f, 10, &at);
	cr_assert_eq(at, 12);
	AmdSchedStats st;
	cr_assert_eq(amd_sched(&f, &st), 0);
	cr_expect_eq(find_op(&f, ISA_GLOBAL_LOAD_DWORD), 2, "the load follows the address moves");
	cr_expect_eq(st.moves, 1);
	cr_expect_eq(st.fallback, 0);
	char *got = mir_dump(&f);
	cr_expect(starts_with(got,
			  "bb0:\n"
			  "\tv_mov_b32 %v0[0:0], 0\n"
			  "\tv_mov_b32 %v0[1:1], 0\n"
			  "\tglobal_load_dword %v11, %v0, off\n"
			  "\tv_mov_b32 %v1, 0\n"),
		  "%s", got);
	free(got);
	mir_free(&f);
}

Test(sched, occupancy_cliff_limits_the_hoist)
{
	/* gfx942: 64 VGPRs keep 8 waves.  58 values are defined, then summed
	 * one by one (each add kills one), then a load.  Walking up over the adds
	 * the demand grows; the load's result may only be live where it stays
	 * within the limit (64 less the allocator margin of 4), so the load stops
	 * part way up the reduction. */
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int va = V(&f, MR_V, 2);
	MInst *mi = mir_emit(&f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, &f, va, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	mi->flags |= MI_DEFALL;
	mi = mir_emit(&f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, &f, va, 1, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	enum { K = 58 };
	int w[K];
	for (int i = 0; i < K; i++) {
		w[i] = V(&f, MR_V, 1);
		mov(&f, ISA_V_MOV_B32, w[i], -(i % 60) - 1);
	}
	int acc = w[0];
	for (int i = 1; i < K; i++) {
		int t = V(&f, MR_V, 1);
		op2(&f, ISA_V_ADD_U32, t, acc, w[i]);
		acc = t;
	}
	int ld = V(&f, MR_V, 1), at = (int)f.insns.len;
	gload(&f, ld, va);
	ds_store(&f, ld, acc);
	endpgm(&f);
	Liveness lv;
	cr_assert_eq(liveness_compute(&f, &lv), 0);
	int before = lv.max.v;
	liveness_free(&lv);
	cr_assert_eq(before, 60);
	AmdSchedStats st;
	cr_assert_eq(amd_sched(&f, &st), 0);
	cr_expect_eq(st.limit_v, 60);
	int pos = find_op(&f, ISA_GLOBAL_LOAD_DWORD);
	cr_expect(pos > 2 + K && pos < at, "load at %d (was %d)", pos, at);
	cr_assert_eq(liveness_compute(&f, &lv), 0);
	cr_expect(lv.max.v <= st.limit_v, "demand %d -> %d", before, lv.max.v);
	cr_expect_eq(occ_waves(f.target, lv.max.v, 0, 0, 0, 0, NULL), occ_waves(f.target, before, 0, 0, 0, 0, NULL));
	liveness_free(&lv);
	/* With a window of adds at lower demand the load climbs further:
	 * it stopped exactly where the next add up would exceed the limit. */
	cr_assert_eq(liveness_compute(&f, &lv), 0);
	cr_expect_eq(lv.demand[pos - 1].v + 1 > st.limit_v, 1, "could have gone higher");
	liveness_free(&lv);
	mir_free(&f);
}

Test(sched, address_chain_moves_with_the_load)
{
	/* The LDS load's address is computed right before it: the two VALU ops
	 * of the chain climb first, then the load joins them, above the
	 * unrelated work. */
	MFunc f;
	mir_init(&f, TA_TARGET_GFX1100);
	int vi = V(&f, MR_V, 1), a = V(&f, MR_V, 1), b = V(&f, MR_V, 1), ld = V(&f, MR_V, 1);
	mov(&f, ISA_V_MOV_B32, vi, -6);
	int w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = V(&f, MR_V, 1);
		op2(&f, ISA_V_ADD_U32, w[i], vi, -(i + 2));
	}
	op2(&f, ISA_V_LSHLREV_B32, a, -3, vi);
	op2(&f, ISA_V_ADD_U32, b, a, -17);
	MInst *mi = mir_emit(&f, ISA_DS_READ_B32, 1);
	mi_vreg(mi, 0, &f, ld, 0, 1);
	mi_vreg(mi, 1, &f, b, 0, 1);
	for (int i = 0; i < 4; i++)
		ds_store(&f, ld, w[i]);
	endpgm(&f);
	AmdSchedStats st;
	cr_assert_eq(amd_sched(&f, &st), 0);
	cr_expect_eq(st.moves, 3);
	char *got = mir_dump(&f);
	cr_expect(starts_with(got, "bb0:\n"
				   "\tv_mov_b32 %v0, 5\n"
				   "\tv_lshlrev_b32 %v1, 2, %v0\n"
				   "\tv_add_nc_u32 %v2, %v1, 16\n"
				   "\tds_load_b32 %v3, %v2\n"
				   "\tv_add_nc_u32 %v4, %v0, 1\n"
				   "\tv_add_nc_u32 %v5, %v0, 2\n"),
		  "%s", got);
	free(got);
	mir_free(&f);
}

/* Three blocks, b1 a loop: work on x, then a load from va (live across
 * the loop) that the scheduler hoists above the work. */
static void loop_with_load(MFunc *f, int *va_out, int *b1_out)
{
	mir_init(f, TA_TARGET_GFX942);
	mir_block(f);
	int va = V(f, MR_V, 2), x = V(f, MR_V, 1);
	MInst *mi = mir_emit(f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, f, va, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	mi->flags |= MI_DEFALL;
	mi = mir_emit(f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, f, va, 1, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	mov(f, ISA_V_MOV_B32, x, -4);
	int b1 = mir_block(f);
	int w[6];
	for (int i = 0; i < 6; i++) {
		w[i] = V(f, MR_V, 1);
		op2(f, ISA_V_ADD_U32, w[i], x, -(i + 2));
	}
	int ld = V(f, MR_V, 1);
	gload(f, ld, va);
	ds_store(f, ld, ld);
	for (int i = 0; i < 6; i++)
		ds_store(f, w[i], w[i]);
	int b2 = mir_block(f);
	ds_store(f, x, x);
	endpgm(f);
	f->blocks.data[0].succ[0] = b1;
	f->blocks.data[b1].succ[0] = b2;
	f->blocks.data[b1].succ[1] = b1;
	*va_out = va, *b1_out = b1;
}

/* amd_sched_live hands its block live sets to the allocator: after the
 * moves they equal a fresh liveness of the scheduled code (the moves stay
 * within blocks), and the SSA allocator gives the same registers with them
 * as with its own liveness. */
Test(sched, live_sets_stay_valid_for_the_allocator)
{
	MFunc f, g;
	int va, b1;
	loop_with_load(&f, &va, &b1);
	loop_with_load(&g, &va, &b1);
	AmdSchedStats st;
	Liveness kept, fresh;
	cr_assert_eq(amd_sched_live(&f, &st, &kept), 0);
	cr_expect_eq(st.moves, 1);
	cr_expect_eq(find_op(&f, ISA_GLOBAL_LOAD_DWORD), 3, "the load opens b1");
	cr_expect_null(kept.demand, "the stale per-instruction demand is not handed on");
	cr_assert_eq(liveness_compute(&f, &fresh), 0);
	size_t nb = f.blocks.len;
	cr_expect(lv_has(lv_in(&kept, b1), va), "va is live into the loop");
	cr_assert_eq(memcmp(kept.off, fresh.off, sizeof(size_t) * (2 * nb + 1)), 0);
	cr_expect_eq(memcmp(kept.vals, fresh.vals, sizeof(int32_t) * fresh.off[2 * nb]), 0);
	liveness_free(&fresh);
	/* g: the old way, sched then an allocator computing its own liveness. */
	cr_assert_eq(amd_sched(&g, NULL), 0);
	RaResult r1, r2;
	Diag d;
	diag_init(&d);
	cr_assert_eq(ra_allocate_ssa(&f, NULL, &kept, &r1, &d), 0, "%s", diag_text(&d));
	liveness_free(&kept);
	cr_assert_eq(ra_allocate_ssa(&g, NULL, NULL, &r2, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(f.vregs.len, g.vregs.len);
	cr_expect_eq(memcmp(r1.phys, r2.phys, sizeof(int16_t) * f.vregs.len), 0);
	char *df = mir_dump(&f), *dg = mir_dump(&g);
	cr_expect_str_eq(df, dg);
	free(df), free(dg);
	ra_result_free(&r1);
	ra_result_free(&r2);
	diag_free(&d);
	mir_free(&f);
	mir_free(&g);
}

Test(sched, stores_and_barriers_are_fences)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int va = V(&f, MR_V, 2), a = V(&f, MR_V, 1), ld = V(&f, MR_V, 1);
	mov(&f, ISA_V_MOV_B32, a, -1);
	MInst *mi = mir_emit(&f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, &f, va, 0, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	mi->flags |= MI_DEFALL;
	mi = mir_emit(&f, ISA_V_MOV_B32, 1);
	mi_vreg(mi, 0, &f, va, 1, 1);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 0));
	ds_store(&f, a, a);
	mir_emit(&f, ISA_S_BARRIER, 0);
	mov(&f, ISA_V_MOV_B32, a, -3);
	gload(&f, ld, va);
	ds_store(&f, ld, a);
	endpgm(&f);
	cr_assert_eq(amd_sched(&f, NULL), 0);
	cr_expect_eq(find_op(&f, ISA_GLOBAL_LOAD_DWORD), 5, "stops below the barrier");
	mir_free(&f);
}

/* ---- the pipeline: no example spills, scratch stays off ------------------- */

static char *slurp(const char *path)
{
	size_t n;
	return read_file(path, &n);
}

Test(pipeline, examples_do_not_spill)
{
	const char *srcdir = getenv("TILEASM_SRCDIR");
	cr_assert(srcdir, "TILEASM_SRCDIR not set");
	static const char *ex[] = {"vector_add", "reduce_sum", "softmax", "rmsnorm", "layernorm",
				   "gemm", "gemm_bf16_tn", "mha_fwd"};
	static const ta_target tg[] = {TA_TARGET_GFX1100, TA_TARGET_GFX90A, TA_TARGET_GFX942};
	for (size_t e = 0; e < sizeof ex / sizeof *ex; e++) {
		char path[512];
		snprintf(path, sizeof path, "%s/examples/%s.tile", srcdir, ex[e]);
		char *src = slurp(path);
		cr_assert(src, "cannot read %s", path);
		for (size_t t = 0; t < sizeof tg / sizeof *tg; t++) {
			ta_ctx *ctx = ta_ctx_create();
			ta_binary *bin = NULL;
			ta_status st = ta_compile_source(ctx, path, src, strlen(src), target_name(tg[t]), &bin);
			cr_assert_eq(st, TA_OK, "%s %s: %s", ex[e], target_name(tg[t]), ta_ctx_diagnostics(ctx));
			size_t n;
			const uint8_t *p = ta_binary_data(bin, &n);
			CoObject *co = NULL;
			Diag d;
			diag_init(&d);
			cr_assert_eq(co_read(p, n, &co, &d), 0, "%s", diag_text(&d));
			diag_free(&d);
			cr_assert(co->nkernels >= 1);
			for (int k = 0; k < co->nkernels; k++) {
				const CoKernelInfo *ki = &co->kernels[k];
				const CoMd *ss = co_md_get(ki->md, ".sgpr_spill_count");
				const CoMd *vs = co_md_get(ki->md, ".vgpr_spill_count");
				const CoMd *ps = co_md_get(ki->md, ".private_segment_fixed_size");
				cr_assert(ss && vs && ps, "%s %s: spill metadata missing", ex[e], target_name(tg[t]));
				cr_expect_eq(ss->i, 0, "%s %s: SGPR spills", ex[e], target_name(tg[t]));
				cr_expect_eq(vs->i, 0, "%s %s: VGPR spills", ex[e], target_name(tg[t]));
				cr_expect_eq(ps->i, 0, "%s %s: private segment", ex[e], target_name(tg[t]));
				cr_expect_eq(ki->desc.private_segment_fixed_size, 0u, "%s %s", ex[e], target_name(tg[t]));
				cr_expect_eq(ki->desc.rsrc2 & 1u, 0u, "%s %s: scratch enabled", ex[e], target_name(tg[t]));
			}
			co_object_free(co);
			ta_binary_release(bin);
			ta_ctx_destroy(ctx);
		}
		free(src);
	}
}

/* ---- spilling --------------------------------------------------------------- */

/* n values of file cls defined, then summed into one: all n live at once. */
static int many_live(MFunc *f, int cls, int n)
{
	int *w = malloc(sizeof(int) * (size_t)n);
	unsigned mv = cls == MR_S ? ISA_S_MOV_B32 : ISA_V_MOV_B32, add = cls == MR_S ? ISA_S_ADD_U32 : ISA_V_ADD_U32;
	for (int i = 0; i < n; i++) {
		w[i] = V(f, cls, 1);
		mov(f, mv, w[i], -i - 1);
	}
	int acc = w[0];
	for (int i = 1; i < n; i++) {
		int t = V(f, cls, 1);
		op2(f, add, t, acc, w[i]);
		acc = t;
	}
	free(w);
	return acc;
}

static char *spill_and_dump(MFunc *f, const RaOptions *opt, RaSpillStats *st)
{
	RaResult r;
	Diag d;
	diag_init(&d);
	int rc = ra_allocate_spill(f, opt, 0, &r, st, NULL, &d);
	cr_assert_eq(rc, 0, "%s", diag_text(&d));
	diag_free(&d);
	StrBuf err = {0};
	cr_assert_eq(ra_validate(f, r.phys, &err), 0, "%s", err.buf ? err.buf : "");
	sb_free(&err);
	for (int c = 0; c < MR_NCLASS; c++)
		if (opt->reg_limit[c])
			cr_assert_leq(r.used[c], opt->reg_limit[c]);
	ra_result_free(&r);
	return mir_dump(f);
}

Test(spill, sgprs_go_to_vgpr_lanes)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX1100);
	int acc = many_live(&f, MR_S, 12);
	int v = V(&f, MR_V, 1);
	mov(&f, ISA_V_MOV_B32, v, acc);
	ds_store(&f, v, v);
	endpgm(&f);
	RaOptions opt = {{10, 0, 0}};
	RaSpillStats st;
	char *got = spill_and_dump(&f, &opt, &st);
	cr_expect_gt(st.sgpr_spills, 0);
	cr_expect_eq(st.vgpr_spills, 0);
	cr_expect_eq(st.rounds, 2);
	/* The first value is the longest lived: stored to lane 0 right after its
	 * definition, reloaded into a fresh temporary right before its use. */
	cr_expect(starts_with(got,
			  "bb0:\n"
			  "\tv_mov_b32 %v24, 0\n"
			  "\ts_mov_b32 %s25, 0\n"
			  "\tv_writelane_b32 %v24, %s25, 0\n"
			  "\ts_mov_b32 %s26, 1\n"
			  "\tv_writelane_b32 %v24, %s26, 1\n"),
		  "%s", got);
	cr_expect(strstr(got, "\ts_mov_b32 %s11, 11\n"
			      "\tv_readlane_b32 %s29, %v24, 0\n"
			      "\tv_readlane_b32 %s30, %v24, 1\n"
			      "\ts_add_u32 %s12, %s29, %s30\n") != NULL,
		  "%s", got);
	free(got);
	mir_free(&f);
}

Test(spill, vgprs_go_to_agprs_on_cdna)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int acc = many_live(&f, MR_V, 20);
	ds_store(&f, acc, acc);
	endpgm(&f);
	RaOptions opt = {{0, 12, 0}};
	RaSpillStats st;
	char *got = spill_and_dump(&f, &opt, &st);
	cr_expect_gt(st.vgpr_spills, 0);
	cr_expect_eq(st.sgpr_spills, 0);
	cr_expect(strstr(got, "v_accvgpr_write_b32 %a") != NULL, "%s", got);
	cr_expect(strstr(got, "v_accvgpr_read_b32 %v") != NULL, "%s", got);
	free(got);
	mir_free(&f);
}

/* VGPR spills to scratch (gfx1100, CDNA beyond the AGPRs): tests/amd/test_scratch.c. */

Test(spill, no_spill_when_it_fits)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int acc = many_live(&f, MR_V, 20);
	ds_store(&f, acc, acc);
	endpgm(&f);
	char *before = mir_dump(&f);
	RaOptions opt = {{0, 0, 0}};
	RaSpillStats st;
	char *got = spill_and_dump(&f, &opt, &st);
	cr_expect_str_eq(got, before, "nothing may change");
	cr_expect_eq(st.rounds, 1);
	cr_expect_eq(st.sgpr_spills + st.vgpr_spills, 0);
	free(got);
	free(before);
	mir_free(&f);
}

/* ---- spill code runs: vector_add with tiny register files on the emulator -- */

static void run_vector_add_spilled(const char *target, int slimit, int vlimit, int want_s, int want_v)
{
	const char *srcdir = getenv("TILEASM_SRCDIR");
	cr_assert(srcdir, "TILEASM_SRCDIR not set");
	char path[512];
	snprintf(path, sizeof path, "%s/examples/vector_add.tile", srcdir);
	char *src = slurp(path);
	cr_assert(src, "cannot read %s", path);
	enum { N = 3000 };
	ta_ctx *ctx = ta_ctx_create();
	cr_assert_eq(ta_ctx_define(ctx, "N", N), TA_OK);
	ta_status st;
	Module *m = ta_frontend(ctx, path, src, strlen(src), &st);
	cr_assert(m, "%s", ta_ctx_diagnostics(ctx));
	Target t;
	cr_assert_eq(target_parse(target, &t), 0);
	AmdOutput out;
	memset(&out, 0, sizeof out);
	out.reg_limit[MR_S] = slimit;
	out.reg_limit[MR_V] = vlimit;
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_compile(m, &t, &out, &d), 0, "%s: %s", target, diag_text(&d));
	const AmdKernelInfo *ki = &out.kernels[0];
	cr_assert_leq(ki->sgprs, slimit + 8, "%s: %d SGPRs", target, ki->sgprs); /* + inputs/vcc */
	if (vlimit)
		cr_assert_leq(ki->vgprs, vlimit, "%s: %d VGPRs", target, ki->vgprs);
	/* The metadata reports the spills. */
	CoObject *co = NULL;
	cr_assert_eq(co_read(out.code_object, out.code_object_len, &co, &d), 0, "%s", diag_text(&d));
	const CoMd *ss = co_md_get(co->kernels[0].md, ".sgpr_spill_count");
	const CoMd *vs = co_md_get(co->kernels[0].md, ".vgpr_spill_count");
	cr_assert(ss && vs);
	cr_expect_eq(ss->i > 0, want_s, "%s: %lld SGPR spills", target, (long long)ss->i);
	cr_expect_eq(vs->i > 0, want_v, "%s: %lld VGPR spills", target, (long long)vs->i);
	co_object_free(co);
	/* Run it. */
	EmuDevice *dev = emu_create(t.id);
	cr_assert(dev);
	static float a[N], b[N], c[N];
	for (int i = 0; i < N; i++)
		a[i] = (float)i * 0.5f, b[i] = 3.0f - (float)i;
	uint64_t da = emu_alloc(dev, sizeof a), db = emu_alloc(dev, sizeof b), dc = emu_alloc(dev, sizeof c);
	cr_assert(da && db && dc);
	cr_assert_eq(emu_write(dev, da, a, sizeof a, &d), 0);
	cr_assert_eq(emu_write(dev, db, b, sizeof b, &d), 0);
	cr_assert_eq(emu_load(dev, out.code_object, out.code_object_len, &d), 0, "%s", diag_text(&d));
	uint8_t karg[256];
	memset(karg, 0, sizeof karg);
	uint64_t ptrs[3] = {da, db, dc};
	int np = 0;
	for (int p = 0; p < ki->nparams; p++) {
		cr_assert_eq(ki->params[p].kind, PK_TENSOR, "unexpected scalar parameter %s", ki->params[p].name);
		cr_assert_lt(np, 3);
		memcpy(karg + ki->param_offset[p], &ptrs[np++], 8);
	}
	cr_assert_eq(np, 3);
	uint32_t grid[3] = {(N + 1023) / 1024, 1, 1}, block[3] = {256, 1, 1};
	cr_assert_eq(emu_launch(dev, ki->name, grid, block, karg, ki->kernarg_size, 0, &d), 0, "%s: %s", target,
		     diag_text(&d));
	cr_assert_eq(emu_read(dev, dc, c, sizeof c, &d), 0);
	for (int i = 0; i < N; i++)
		cr_assert_eq(c[i], a[i] + b[i], "%s: C[%d] = %g, want %g", target, i, c[i], a[i] + b[i]);
	emu_destroy(dev);
	diag_free(&d);
	amd_output_free(&out);
	ir_module_free(m);
	ta_ctx_destroy(ctx);
	free(src);
}

Test(spill, spilled_vector_add_runs)
{
	run_vector_add_spilled("gfx942", 8, 8, 1, 1);
	run_vector_add_spilled("gfx90a", 8, 8, 1, 1);
	run_vector_add_spilled("gfx1100", 8, 0, 1, 0);
}

/* ---- the fallback path: scheduled order fails, source order spills ------- */

/* gemm (f16 in, f32 accumulate, f16 out) with the VGPR file cut below its
 * demand: the scheduled order does not allocate, amd.c rebuilds the source
 * order and spills VGPRs into AGPRs; the result must still be exact (small
 * integers, so every sum is exact in f16). */
Test(spill, gemm_fallback_spills_to_agprs_and_runs)
{
	const char *srcdir = getenv("TILEASM_SRCDIR");
	cr_assert(srcdir, "TILEASM_SRCDIR not set");
	char path[512];
	snprintf(path, sizeof path, "%s/examples/gemm.tile", srcdir);
	char *src = slurp(path);
	cr_assert(src, "cannot read %s", path);
	enum { M = 128, N = 128, K = 64 };
	ta_ctx *ctx = ta_ctx_create();
	cr_assert_eq(ta_ctx_define(ctx, "M", M), TA_OK);
	cr_assert_eq(ta_ctx_define(ctx, "N", N), TA_OK);
	cr_assert_eq(ta_ctx_define(ctx, "K", K), TA_OK);
	ta_status st;
	Module *m = ta_frontend(ctx, path, src, strlen(src), &st);
	cr_assert(m, "%s", ta_ctx_diagnostics(ctx));
	Target t;
	cr_assert_eq(target_parse("gfx942", &t), 0);
	AmdOutput out;
	memset(&out, 0, sizeof out);
	out.reg_limit[MR_V] = 150;
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_compile(m, &t, &out, &d), 0, "%s", diag_text(&d));
	const AmdKernelInfo *ki = &out.kernels[0];
	cr_assert_leq(ki->vgprs, 150);
	cr_assert_gt(ki->agprs, 0, "the VGPR spills live in AGPRs");
	EmuDevice *dev = emu_create(t.id);
	cr_assert(dev);
	static _Float16 a[M * K], b[K * N], c[M * N];
	for (int i = 0; i < M * K; i++)
		a[i] = (_Float16)(float)((i * 7 + 3) % 5 - 2);
	for (int i = 0; i < K * N; i++)
		b[i] = (_Float16)(float)((i * 5 + 1) % 3 - 1);
	uint64_t da = emu_alloc(dev, sizeof a), db = emu_alloc(dev, sizeof b), dc = emu_alloc(dev, sizeof c);
	cr_assert(da && db && dc);
	cr_assert_eq(emu_write(dev, da, a, sizeof a, &d), 0);
	cr_assert_eq(emu_write(dev, db, b, sizeof b, &d), 0);
	cr_assert_eq(emu_load(dev, out.code_object, out.code_object_len, &d), 0, "%s", diag_text(&d));
	uint8_t karg[256];
	memset(karg, 0, sizeof karg);
	uint64_t ptrs[3] = {da, db, dc};
	int np = 0;
	for (int p = 0; p < ki->nparams; p++) {
		cr_assert_eq(ki->params[p].kind, PK_TENSOR, "unexpected scalar parameter %s", ki->params[p].name);
		cr_assert_lt(np, 3);
		memcpy(karg + ki->param_offset[p], &ptrs[np++], 8);
	}
	uint32_t grid[3] = {N / 128, M / 128, 1}, block[3] = {(uint32_t)ki->threads, 1, 1};
	cr_assert_eq(emu_launch(dev, ki->name, grid, block, karg, ki->kernarg_size, 0, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(emu_read(dev, dc, c, sizeof c, &d), 0);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float s = 0;
			for (int k = 0; k < K; k++)
				s += (float)a[i * K + k] * (float)b[k * N + j];
			cr_assert_eq((float)c[i * N + j], s, "C[%d][%d] = %g, want %g", i, j, (float)c[i * N + j], s);
		}
	emu_destroy(dev);
	diag_free(&d);
	amd_output_free(&out);
	ir_module_free(m);
	ta_ctx_destroy(ctx);
	free(src);
}
