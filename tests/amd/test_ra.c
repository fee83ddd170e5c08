/* test_ra.c — regalloc/: parallel copies (exhaustive), occupancy tables,
 * allocator + validator on hand-written and random MIR. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "mir.h"
#include "regalloc.h"

/* ---- parallel copies ----------------------------------------------------- */

/* Every map from up to 5 destinations to sources among 5 registers (with
 * fan-out and cycles): simulate the sequence and compare. */
Test(pcopy, exhaustive_5_registers)
{
	enum { R = 5 };
	int cases = 0;
	int code[R];
	for (int c = 0; c < 7776; c++) { /* 6^5: -1 (no move) or a source per register */
		int x = c;
		PMove in[R], out[2 * R];
		int n = 0;
		for (int r = 0; r < R; r++) {
			code[r] = x % 6 - 1;
			x /= 6;
			if (code[r] >= 0)
				in[n++] = (PMove){(int16_t)(r + 3), (int16_t)(code[r] + 3), 0};
		}
		int no = pcopy_sequence(in, n, out);
		cr_assert_leq(no, n, "case %d: %d ops for %d moves", c, no, n);
		int val[R + 3];
		for (int r = 0; r < R + 3; r++)
			val[r] = 100 + r;
		for (int k = 0; k < no; k++) {
			cr_assert(out[k].dst >= 3 && out[k].dst < R + 3 && out[k].src >= 3 && out[k].src < R + 3);
			if (out[k].swap) {
				int t = val[out[k].dst];
				val[out[k].dst] = val[out[k].src];
				val[out[k].src] = t;
			} else {
				val[out[k].dst] = val[out[k].src];
			}
		}
		for (int r = 0; r < R; r++) {
			int want = 100 + 3 + (code[r] >= 0 ? code[r] : r);
			cr_assert_eq(val[r + 3], want, "case %d: r%d = %d, want %d", c, r, val[r + 3], want);
		}
		cases++;
	}
	cr_assert_eq(cases, 7776);
}

Test(pcopy, cycle_uses_swaps)
{
	PMove in[3] = {{0, 1, 0}, {1, 2, 0}, {2, 0, 0}}, out[6];
	int n = pcopy_sequence(in, 3, out);
	cr_assert_eq(n, 2);
	cr_assert(out[0].swap && out[1].swap);
}

/* ---- occupancy ----------------------------------------------------------- */

Test(occupancy, spot_checks)
{
	/* Checked against clang-19's occupancy report (notes §1). */
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100, 163, 0, 10, 0, 0, NULL), 9);
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100 | ISA_WAVE64, 106, 0, 10, 0, 0, NULL), 7);
	cr_assert_eq(occ_waves(TA_TARGET_GFX942, 152, 0, 10, 0, 0, NULL), 3);
	cr_assert_eq(occ_waves(TA_TARGET_GFX942, 24, 16, 10, 0, 0, NULL), 8);
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100, 47, 0, 10, 0, 0, NULL), 16);
	/* Table edges. */
	cr_assert_eq(occ_waves(TA_TARGET_GFX90A, 64, 0, 10, 0, 0, NULL), 8);
	cr_assert_eq(occ_waves(TA_TARGET_GFX90A, 65, 0, 10, 0, 0, NULL), 7);
	cr_assert_eq(occ_waves(TA_TARGET_GFX90A, 256, 0, 10, 0, 0, NULL), 2);
	cr_assert_eq(occ_waves(TA_TARGET_GFX90A, 256, 256, 10, 0, 0, NULL), 1); /* unified 512 */
	cr_assert_eq(occ_waves(TA_TARGET_GFX90A, 130, 126, 10, 0, 0, NULL), 1);  /* 132 + 126 = 258 */
	cr_assert_eq(occ_waves(TA_TARGET_GFX90A, 127, 128, 10, 0, 0, NULL), 2);  /* 128 + 128 */
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100, 96, 0, 10, 0, 0, NULL), 16);
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100, 97, 0, 10, 0, 0, NULL), 12);
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100, 256, 0, 10, 0, 0, NULL), 5);
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100 | ISA_WAVE64, 48, 0, 10, 0, 0, NULL), 16);
	cr_assert_eq(occ_waves(TA_TARGET_GFX1100 | ISA_WAVE64, 49, 0, 10, 0, 0, NULL), 12);
	/* SGPRs bite on gfx9 above 100. */
	const char *why;
	cr_assert_eq(occ_waves(TA_TARGET_GFX942, 8, 0, 101, 0, 0, &why), 7);
	cr_assert_str_eq(why, "sgpr");
	/* LDS: 64 KiB per CU, 32 KiB per workgroup of 4 waves -> 2 groups -> 8 waves / 4 SIMDs. */
	cr_assert_eq(occ_waves(TA_TARGET_GFX942, 8, 0, 10, 32768, 256, &why), 2);
	cr_assert_str_eq(why, "lds");
	/* One 2-wave workgroup with 49 KiB of LDS per CU: half the SIMDs run one
	 * wave (flash attention's shape), which is occupancy 1, not 0. */
	cr_assert_eq(occ_waves(TA_TARGET_GFX942, 122, 0, 46, 50176, 128, &why), 1);
	cr_assert_str_eq(why, "lds");
	/* More LDS than a CU has: the kernel cannot launch. */
	cr_assert_eq(occ_waves(TA_TARGET_GFX942, 8, 0, 10, 70000, 128, NULL), 0);
	cr_assert_eq(occ_vgpr_cost(TA_TARGET_GFX90A, 5, 3), 11);
	cr_assert_eq(occ_vgpr_cost(TA_TARGET_GFX1100, 5, 0), 5);
}

/* ---- hand-written MIR ---------------------------------------------------- */

static int def1(MFunc *f, unsigned op, int dst, int a, int b)
{
	MInst *mi = mir_emit(f, op, 1);
	mi_vreg(mi, 0, f, dst, 0, f->vregs.data[dst].size);
	if (a >= 0)
		mi_vreg(mi, 1, f, a, 0, f->vregs.data[a].size);
	else
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 1));
	if (b >= 0)
		mi_vreg(mi, 2, f, b, 0, f->vregs.data[b].size);
	return 0;
}

static void alloc_ok(MFunc *f, RaResult *r)
{
	Diag d;
	diag_init(&d);
	int rc = ra_allocate(f, NULL, NULL, r, &d);
	cr_assert_eq(rc, 0, "%s", diag_text(&d));
	diag_free(&d);
	StrBuf err = {0};
	rc = ra_validate(f, r->phys, &err);
	cr_assert_eq(rc, 0, "validator: %s", err.buf ? err.buf : "");
	sb_free(&err);
}

Test(ra, straight_line_reuse)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int a = mir_vreg(&f, MR_V, 1), b = mir_vreg(&f, MR_V, 1), c = mir_vreg(&f, MR_V, 1),
	    d = mir_vreg(&f, MR_V, 1);
	def1(&f, ISA_V_MOV_B32, a, -1, -1);          /* a = 1 */
	def1(&f, ISA_V_MOV_B32, b, -1, -1);          /* b = 1 */
	def1(&f, ISA_V_ADD_F32, c, a, b);            /* c = a + b: a, b die */
	def1(&f, ISA_V_ADD_F32, d, c, c);            /* d = c + c */
	RaResult r;
	alloc_ok(&f, &r);
	cr_assert_neq(r.phys[a], r.phys[b]);
	cr_assert_eq(r.phys[c], r.phys[a], "c reuses a's register (a dies at c's def)");
	cr_assert_eq(r.used[MR_V], 2);
	/* Corrupt the assignment: b onto a's register must be caught. */
	int16_t saved = r.phys[b];
	r.phys[b] = r.phys[a];
	StrBuf err = {0};
	cr_assert_eq(ra_validate(&f, r.phys, &err), -1);
	cr_assert(strstr(err.buf, "reads"), "%s", err.buf);
	sb_free(&err);
	r.phys[b] = saved;
	Diag dg;
	diag_init(&dg);
	cr_assert_eq(ra_rewrite(&f, &r, &dg), 0);
	diag_free(&dg);
	ra_result_free(&r);
	mir_free(&f);
}

Test(ra, tuples_are_aligned)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX90A);
	int x = mir_vreg(&f, MR_V, 1), p = mir_vreg(&f, MR_V, 2), q = mir_vreg(&f, MR_S, 4);
	def1(&f, ISA_V_MOV_B32, x, -1, -1);
	MInst *mi = mir_emit(&f, ISA_S_LOAD_DWORDX4, 1);
	mi_vreg(mi, 0, &f, q, 0, 4);
	mi_phys(mi, 1, isa_sgpr(0, 2));
	mi_phys(mi, 2, isa_imm(0));
	mi = mir_emit(&f, ISA_V_LSHLREV_B64, 1);
	mi_vreg(mi, 0, &f, p, 0, 2);
	mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, 2));
	mi_vreg(mi, 2, &f, p, 0, 2); /* reads p before any def: live-in */
	mi = mir_emit(&f, ISA_V_ADD_F32, 1);
	mi_vreg(mi, 0, &f, x, 0, 1);
	mi_vreg(mi, 1, &f, x, 0, 1);
	mi_vreg(mi, 2, &f, p, 1, 1);
	mi = mir_emit(&f, ISA_V_ADD_F32, 1);
	mi_vreg(mi, 0, &f, x, 0, 1);
	mi_vreg(mi, 1, &f, q, 3, 1);
	mi_vreg(mi, 2, &f, x, 0, 1);
	RaResult r;
	alloc_ok(&f, &r);
	cr_assert_eq(r.phys[p] % 2, 0);
	cr_assert_eq(r.phys[q] % 4, 0);
	ra_result_free(&r);
	mir_free(&f);
}

/* A loop: v is live around the back edge, so a temporary defined inside the
 * loop after v's last use in the body must still not take v's register. */
Test(ra, loop_carried_value)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX1100);
	int v = mir_vreg(&f, MR_V, 1), t = mir_vreg(&f, MR_V, 1), u = mir_vreg(&f, MR_V, 1);
	mir_block(&f);
	def1(&f, ISA_V_MOV_B32, v, -1, -1);
	int body = mir_block(&f);
	def1(&f, ISA_V_ADD_F32, u, v, v);  /* last use of v in the body */
	def1(&f, ISA_V_ADD_F32, t, u, u);  /* t must not take v's register */
	def1(&f, ISA_V_ADD_F32, u, t, t);
	int exit = mir_block(&f);
	def1(&f, ISA_V_ADD_F32, t, u, v);
	f.blocks.data[0].succ[0] = body;
	f.blocks.data[body].succ[0] = body;
	f.blocks.data[body].succ[1] = exit;
	RaResult r;
	alloc_ok(&f, &r);
	cr_assert_neq(r.phys[t], r.phys[v]);
	cr_assert_neq(r.phys[u], r.phys[v]);
	ra_result_free(&r);
	mir_free(&f);
}

Test(ra, parallel_copy_at_entry)
{
	/* Inputs in s0..s3 copied to vregs hinted crosswise: resolved by swaps. */
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int a = mir_vreg(&f, MR_S, 1), b = mir_vreg(&f, MR_S, 1), c = mir_vreg(&f, MR_V, 1);
	f.vregs.data[a].hint = 1;
	f.vregs.data[b].hint = 0;
	MInst *mi = mir_emit(&f, MOP_PCOPY, 3);
	mi_vreg(mi, 0, &f, a, 0, 1);
	mi_vreg(mi, 1, &f, b, 0, 1);
	mi_vreg(mi, 2, &f, c, 0, 1);
	mi_phys(mi, 3, isa_sgpr(0, 1));
	mi_phys(mi, 4, isa_sgpr(1, 1));
	mi_phys(mi, 5, isa_vgpr(0, 1));
	mi = mir_emit(&f, ISA_V_ADD_F32, 1);
	mi_vreg(mi, 0, &f, c, 0, 1);
	mi_vreg(mi, 1, &f, a, 0, 1);
	mi_vreg(mi, 2, &f, c, 0, 1);
	mi = mir_emit(&f, ISA_V_ADD_F32, 1);
	mi_vreg(mi, 0, &f, c, 0, 1);
	mi_vreg(mi, 1, &f, b, 0, 1);
	mi_vreg(mi, 2, &f, c, 0, 1);
	RaResult r;
	alloc_ok(&f, &r);
	cr_assert_eq(r.phys[a], 1);
	cr_assert_eq(r.phys[b], 0);
	Diag d;
	diag_init(&d);
	cr_assert_eq(ra_rewrite(&f, &r, &d), 0);
	/* s0 <-> s1 swap = 3 xors, v0 -> v0 vanishes, plus the two adds. */
	cr_assert_eq(f.insns.len, 5);
	cr_assert_eq(f.insns.data[0].in.op, ISA_S_XOR_B32);
	diag_free(&d);
	ra_result_free(&r);
	mir_free(&f);
}

Test(ra, out_of_registers_is_an_error)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX942);
	int vs[300];
	for (int i = 0; i < 300; i++) {
		vs[i] = mir_vreg(&f, MR_V, 1);
		def1(&f, ISA_V_MOV_B32, vs[i], -1, -1);
	}
	int acc = mir_vreg(&f, MR_V, 1);
	def1(&f, ISA_V_MOV_B32, acc, -1, -1);
	for (int i = 0; i < 300; i++)
		def1(&f, ISA_V_ADD_F32, acc, acc, vs[i]);
	RaResult r;
	Diag d;
	diag_init(&d);
	cr_assert_eq(ra_allocate(&f, NULL, NULL, &r, &d), -1);
	cr_assert(strstr(diag_text(&d), "spilling is not supported yet"), "%s", diag_text(&d));
	diag_free(&d);
	mir_free(&f);
}

/* ---- random MIR ---------------------------------------------------------- */

static uint64_t rng_state;
static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(rng_state >> 33) % n;
}

/* Random programs: a few blocks with forward and backward edges, vregs of
 * sizes 1/2/4 in S and V, instructions that read 0-2 and write 1 vreg
 * (sometimes a sub-range, sometimes under a partial exec mask). */
static void random_func(MFunc *f, ta_target t)
{
	mir_init(f, t);
	int nv = 4 + (int)rnd(40);
	for (int i = 0; i < nv; i++) {
		int cls = rnd(3) ? MR_V : MR_S;
		static const int sizes[] = {1, 1, 1, 2, 2, 4};
		mir_vreg(f, cls, sizes[rnd(6)]);
	}
	int nb = 1 + (int)rnd(6);
	for (int b = 0; b < nb; b++) {
		mir_block(f);
		int ni = (int)rnd(12);
		for (int i = 0; i < ni; i++) {
			MInst *mi = mir_emit(f, ISA_V_ADD_F32, 1);
			int d = (int)rnd((unsigned)nv);
			const MVreg *dv = &f->vregs.data[d];
			int sub = dv->size > 1 && rnd(4) == 0 ? (int)rnd(dv->size) : 0;
			int cnt = sub ? 1 : dv->size;
			mi_vreg(mi, 0, f, d, sub, cnt);
			if (rnd(5) == 0)
				mi->flags |= MI_PARTIAL;
			int nuse = (int)rnd(3);
			for (int k = 0; k < nuse; k++) {
				int u = (int)rnd((unsigned)nv);
				int us = (int)rnd(f->vregs.data[u].size);
				mi_vreg(mi, 1 + k, f, u, us, 1);
			}
			if (rnd(10) == 0)
				mi->flags |= MI_EARLY;
		}
	}
	for (int b = 0; b < nb; b++) {
		MBlock *bl = &f->blocks.data[b];
		if (b + 1 < nb)
			bl->succ[0] = b + 1;
		if (rnd(3) == 0)
			bl->succ[1] = (int)rnd((unsigned)nb);
	}
}

Test(ra, random_programs_validate)
{
	static const ta_target ts[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100};
	int ok = 0;
	for (int seed = 1; seed <= 3000; seed++) {
		rng_state = (uint64_t)seed * 0x9e3779b97f4a7c15ull;
		MFunc f;
		random_func(&f, ts[seed % 3]);
		RaResult r;
		Diag d;
		diag_init(&d);
		int rc = ra_allocate(&f, NULL, NULL, &r, &d);
		cr_assert_eq(rc, 0, "seed %d: %s", seed, diag_text(&d));
		StrBuf err = {0};
		rc = ra_validate(&f, r.phys, &err);
		if (rc) {
			StrBuf sb = {0};
			mir_print(&f, &sb);
			cr_assert_fail("seed %d: %s\n%s", seed, err.buf, sb.buf);
		}
		/* Register counts never exceed the live demand by more than
		 * alignment padding and interval-hull slack allow: at least
		 * check they cover the demand. */
		Liveness lv;
		cr_assert_eq(liveness_compute(&f, &lv), 0);
		cr_assert_geq(r.used[MR_V], lv.max.v, "seed %d", seed);
		cr_assert_geq(r.used[MR_S], lv.max.s, "seed %d", seed);
		liveness_free(&lv);
		sb_free(&err);
		diag_free(&d);
		ra_result_free(&r);
		mir_free(&f);
		ok++;
	}
	cr_assert_eq(ok, 3000);
}

/* The same programs with tiny register files: the spilling driver must
 * make every one allocate (SGPRs into VGPR lanes everywhere, VGPRs into
 * AGPRs on gfx90a/gfx942), and the validator must accept the result with
 * its spill code. */
Test(ra, random_programs_spill_and_validate)
{
	static const ta_target ts[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100};
	int spilled_s = 0, spilled_v = 0;
	for (int seed = 1; seed <= 1500; seed++) {
		rng_state = (uint64_t)seed * 0x9e3779b97f4a7c15ull;
		MFunc f;
		ta_target t = ts[seed % 3];
		random_func(&f, t);
		RaOptions opt = {{12, t == TA_TARGET_GFX1100 ? 0 : 16, 0}};
		RaResult r;
		RaSpillStats st;
		Diag d;
		diag_init(&d);
		int rc = ra_allocate_spill(&f, &opt, 0, &r, &st, NULL, &d);
		cr_assert_eq(rc, 0, "seed %d: %s", seed, diag_text(&d));
		cr_assert_leq(r.used[MR_S], 12, "seed %d", seed);
		if (t != TA_TARGET_GFX1100)
			cr_assert_leq(r.used[MR_V], 16, "seed %d", seed);
		StrBuf err = {0};
		if (ra_validate(&f, r.phys, &err)) {
			StrBuf sb = {0};
			mir_print(&f, &sb);
			cr_assert_fail("seed %d: %s\n%s", seed, err.buf, sb.buf);
		}
		sb_free(&err);
		cr_assert_eq(ra_rewrite(&f, &r, &d), 0, "seed %d", seed);
		spilled_s += st.sgpr_spills > 0;
		spilled_v += st.vgpr_spills > 0;
		diag_free(&d);
		ra_result_free(&r);
		mir_free(&f);
	}
	/* The limits must actually bite, or this test proves nothing. */
	cr_assert_geq(spilled_s, 200, "only %d programs spilled SGPRs", spilled_s);
	cr_assert_geq(spilled_v, 100, "only %d programs spilled VGPRs", spilled_v);
}

/* ---- the SSA allocator on random MIR -------------------------------------- */

/* Every program through ra_allocate_ssa: when it succeeds the validator
 * must accept the result (with its split copies) and ra_rewrite must lower
 * it; when it gives up, f must be exactly as before (the linear scan then
 * takes it).  Half the seeds run with small files (8-14 SGPRs, 8-16 VGPRs)
 * so that aligned tuples often find no free window and must split. */
static void ssa_random(int nseed, int tight, int *ok_out, int *splits_out, int *split_progs_out)
{
	static const ta_target ts[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100};
	int ok = 0, splits = 0, split_progs = 0;
	for (int seed = 1; seed <= nseed; seed++) {
		rng_state = (uint64_t)seed * 0x9e3779b97f4a7c15ull;
		MFunc f;
		ta_target t = ts[seed % 3];
		random_func(&f, t);
		RaOptions opt = {{0, 0, 0}};
		if (tight) {
			/* The demand is the floor: a little above it leaves room but
			 * not in the right places. */
			Liveness lv;
			cr_assert_eq(liveness_compute(&f, &lv), 0);
			opt.reg_limit[MR_S] = TA_MAX(lv.max.s + 2, 4);
			opt.reg_limit[MR_V] = TA_MAX(lv.max.v + 2, 4);
			liveness_free(&lv);
		}
		size_t ni = f.insns.len, nv = f.vregs.len;
		StrBuf before = {0};
		mir_print(&f, &before);
		RaResult r;
		Diag d;
		diag_init(&d);
		int rc = ra_allocate_ssa(&f, &opt, NULL, &r, &d);
		if (rc) {
			/* It validates before keeping a result: a give-up for that
			 * reason is a bug here, not a fallback. */
			cr_assert(!strstr(diag_text(&d), "invalid"), "seed %d (tight %d): %s", seed, tight,
				  diag_text(&d));
			StrBuf after = {0};
			mir_print(&f, &after);
			cr_assert(f.insns.len == ni && f.vregs.len == nv && !strcmp(before.buf, after.buf),
				  "seed %d: a failed SSA allocation changed the function", seed);
			sb_free(&after);
		} else {
			cr_assert_eq(r.allocator, RA_SSA);
			StrBuf err = {0};
			if (ra_validate(&f, r.phys, &err)) {
				StrBuf sb = {0};
				mir_print(&f, &sb);
				cr_assert_fail("seed %d (tight %d): %s\nbefore:\n%s\nafter:\n%s", seed, tight, err.buf,
					       before.buf, sb.buf);
			}
			sb_free(&err);
			for (int c = 0; c < MR_NCLASS; c++)
				if (opt.reg_limit[c])
					cr_assert_leq(r.used[c], opt.reg_limit[c], "seed %d", seed);
			cr_assert_eq(ra_rewrite(&f, &r, &d), 0, "seed %d", seed);
			ok++;
			splits += r.splits;
			split_progs += r.splits > 0;
			ra_result_free(&r);
		}
		sb_free(&before);
		diag_free(&d);
		mir_free(&f);
	}
	*ok_out = ok;
	*splits_out = splits;
	*split_progs_out = split_progs;
}

Test(ssa_ra, random_programs_validate)
{
	int ok, splits, progs;
	ssa_random(3000, 0, &ok, &splits, &progs);
	/* Random programs redefine vregs on many paths, which this allocator
	 * hands to the linear scan; most must still go through it. */
	cr_assert_geq(ok, 1500, "SSA allocation succeeded on only %d of 3000", ok);
	fprintf(stderr, "ssa_ra: %d/3000 programs, %d splits\n", ok, splits);
}

Test(ssa_ra, random_programs_tight_limits_split)
{
	int ok, splits, progs;
	ssa_random(3000, 1, &ok, &splits, &progs);
	cr_assert_geq(ok, 1000, "SSA allocation succeeded on only %d of 3000", ok);
	/* The limits must bite, or this test proves nothing. */
	cr_assert_geq(progs, 100, "only %d programs needed a live-range split", progs);
	fprintf(stderr, "ssa_ra tight: %d/3000 programs, %d splits in %d programs\n", ok, splits, progs);
}
