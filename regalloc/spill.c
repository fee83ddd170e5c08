/* spill.c — spilling when the register demand exceeds a file's limit.
 *
 * Spill everywhere, done on MIR before assignment: a spilled vreg X gets a
 * slot, and every instruction touching X instead touches a fresh temporary
 * T covering the dwords it accesses: T is reloaded from the slot before the
 * instruction when the instruction reads X (or merges into it), and the
 * dwords it writes are stored back right after.  T lives for one
 * instruction, so the allocator always finds room for it once enough long
 * values are gone.  The slots are ordinary vregs of another file, so the
 * allocator places them and the validator checks the spill code like any
 * other code: nothing in ra.c or validate.c knows about spilling.
 *
 *   SGPR X  -> lanes of a VGPR slot vreg (one per wave-size dwords):
 *              v_writelane_b32 slot, T, lane / v_readlane_b32 T, slot, lane.
 *              Both ignore exec, so divergent code is no concern.
 *   VGPR X  -> an AGPR slot vreg of X's size (gfx90a/gfx942):
 *              v_accvgpr_write_b32 slot, T / v_accvgpr_read_b32 T, slot.
 *              Both run under the exec of the instruction they serve, so
 *              the slot mirrors X lane by lane; an exec-masked write
 *              (MI_PARTIAL) merges in the slot and its temporary starts
 *              fresh (no reload of lanes nobody wrote).  Vregs read
 *              across lanes (DPP, readlane, bpermute) are never chosen: their
 *              inactive lanes matter and a reload would not carry them.
 *   VGPR X  -> scratch (gfx1100; CDNA once the AGPR room is used up): a
 *              byte offset per lane, 4-byte aligned, tuples contiguous.
 *              gfx942/gfx1100 have architected flat scratch (the hardware
 *              sets FLAT_SCRATCH to the wave's area), so the slot is just
 *              the immediate: scratch_store_dword off, T, off offset:N /
 *              scratch_load_dword T, off, off offset:N.  gfx90a has
 *              absolute flat scratch; like clang we use MUBUF through the
 *              private segment V# (user SGPRs s[0:3]) with the wave offset
 *              (the last system SGPR) added into its base once at entry:
 *                s_add_u32 R0, s0, sW / s_addc_u32 R1, s1, 0 / R2:3 = s[2:3]
 *              before the input copy, R hinted to s[0:3] (the driver checks
 *              it got them: those instructions read inputs the input copy
 *              has not saved yet), then buffer_store_dword T, off, R, 0
 *              offset:N.  Both forms run under exec like the AGPR moves, so
 *              the MI_PARTIAL rule below holds for them too; loads are VMEM
 *              and amd_waitcnt covers them with vmcnt.
 *
 * Which vregs: the driver (ra_allocate_spill) ranks the candidates of the
 * file that ran out by live span per access — a cheap stand-in for
 * Braun–Hack's average next-use distance — and spills the best until the
 * excess demand plus a margin is covered, doubling the amount each round,
 * at most RA_SPILL_ROUNDS rounds.  Each round is one liveness pass, one
 * sort and one linear scan: O(n log n), no unbounded retry. */
#include "regalloc.h"

#include <limits.h>
#include <stdlib.h>

#include "isa.h"

static MInst blank(unsigned op, int ndef)
{
	MInst mi;
	memset(&mi, 0, sizeof mi);
	isa_insn_init(&mi.in, op);
	mi.ndef = (uint8_t)ndef;
	for (int i = 0; i < ISA_MAX_OPS; i++)
		mi.vr[i] = -1;
	return mi;
}

typedef struct {
	int slot;  /* slot vreg (-1: scratch) */
	int lane;  /* SGPR: first lane in slot; VGPR in AGPRs: 0; scratch: byte offset */
} Slot;

/* Moves one dword between T[tsub] and X's slot dword xsub. */
static int spill_move(MFunc *f, MInstVec *out, const Slot *sl, int cls, int t, int tsub, int xsub, int store,
		      int rsrc)
{
	MInst mi;
	if (sl->slot < 0) {
		if (ISA_TARGET(f->target) == TA_TARGET_GFX90A) {
			mi = blank(store ? ISA_BUFFER_STORE_DWORD : ISA_BUFFER_LOAD_DWORD, !store);
			mi_vreg(&mi, 0, f, t, tsub, 1);
			mi_phys(&mi, 1, isa_off());
			mi_vreg(&mi, 2, f, rsrc, 0, 4);
			mi_phys(&mi, 3, isa_const_u32(ISA_TY_B32, 0));
		} else if (store) {
			mi = blank(ISA_SCRATCH_STORE_DWORD, 0);
			mi_phys(&mi, 0, isa_off());
			mi_vreg(&mi, 1, f, t, tsub, 1);
			mi_phys(&mi, 2, isa_off());
		} else {
			mi = blank(ISA_SCRATCH_LOAD_DWORD, 1);
			mi_vreg(&mi, 0, f, t, tsub, 1);
			mi_phys(&mi, 1, isa_off());
			mi_phys(&mi, 2, isa_off());
		}
		mi.in.mod.offset = sl->lane + 4 * xsub;
	} else if (cls == MR_S) {
		int lane = sl->lane + xsub;
		mi = blank(store ? ISA_V_WRITELANE_B32 : ISA_V_READLANE_B32, 1);
		if (store) {
			mi_vreg(&mi, 0, f, sl->slot, 0, 1);
			mi_vreg(&mi, 1, f, t, tsub, 1);
			mi.flags |= MI_TIED;
		} else {
			mi_vreg(&mi, 0, f, t, tsub, 1);
			mi_vreg(&mi, 1, f, sl->slot, 0, 1);
		}
		mi_phys(&mi, 2, isa_const_u32(ISA_TY_B32, (uint32_t)lane));
	} else {
		mi = blank(store ? ISA_V_ACCVGPR_WRITE_B32 : ISA_V_ACCVGPR_READ_B32, 1);
		if (store) {
			mi_vreg(&mi, 0, f, sl->slot, xsub, 1);
			mi_vreg(&mi, 1, f, t, tsub, 1);
		} else {
			mi_vreg(&mi, 0, f, t, tsub, 1);
			mi_vreg(&mi, 1, f, sl->slot, xsub, 1);
		}
	}
	return vec_push(out, mi);
}

/* gfx90a: the wave's scratch V# R = s[0:3] with the wave offset in sW
 * added to its base, defined before the input copy reads anything. */
static int rsrc_prologue(MFunc *f, MInstVec *out, int r, int wave_sgpr)
{
	MInst a = blank(ISA_S_ADD_U32, 1), c = blank(ISA_S_ADDC_U32, 1), m = blank(MOP_COPY, 1);
	mi_vreg(&a, 0, f, r, 0, 1);
	mi_phys(&a, 1, isa_sgpr(0, 1));
	mi_phys(&a, 2, isa_sgpr(wave_sgpr, 1));
	a.flags |= MI_DEFALL;
	mi_vreg(&c, 0, f, r, 1, 1);
	mi_phys(&c, 1, isa_sgpr(1, 1));
	mi_phys(&c, 2, isa_const_u32(ISA_TY_B32, 0));
	mi_vreg(&m, 0, f, r, 2, 2);
	mi_phys(&m, 1, isa_sgpr(2, 2));
	return vec_push(out, a) || vec_push(out, c) || vec_push(out, m);
}

/* v_mov_b32 slot, 0 for the VGPR lane slots among vregs [first, last]. */
static int init_slots(MFunc *f, MInstVec *out, int first, int last)
{
	for (int v = first; v <= last; v++) {
		if (f->vregs.data[v].cls != MR_V)
			continue; /* an AGPR slot made in between */
		MInst z = blank(ISA_V_MOV_B32, 1);
		mi_vreg(&z, 0, f, v, 0, 1);
		mi_phys(&z, 1, isa_const_u32(ISA_TY_B32, 0));
		if (vec_push(out, z))
			return -1;
	}
	return 0;
}

int ra_spill(MFunc *f, const uint8_t *spill, int agpr_room, int wave_sgpr, RaSpillStats *st)
{
	int nv = (int)f->vregs.len, wave = 64;
	ta_target base = ISA_TARGET(f->target);
	int cdna = base == TA_TARGET_GFX90A || base == TA_TARGET_GFX942;
	if (base == TA_TARGET_GFX1100 && !ISA_IS_W64(f->target))
		wave = 32;
	Slot *slots = malloc(sizeof(Slot) * ((size_t)nv + 1));
	if (!slots)
		return -1;
	int lane_slot = -1, lanes_used = wave, rc = -1, first_lane_slot = -1, new_rsrc = 0;
	int rsrc = st->scratch_rsrc - 1;
	for (int v = 0; v < nv; v++) {
		slots[v] = (Slot){-1, 0};
		if (!spill[v])
			continue;
		MVreg x = f->vregs.data[v];
		if (x.cls == MR_S) {
			/* Tuples stay in one slot vreg: lanes never straddle two. */
			if (lanes_used + x.size > wave) {
				lane_slot = mir_vreg(f, MR_V, 1);
				lanes_used = 0;
				if (lane_slot < 0)
					goto out;
				if (first_lane_slot < 0)
					first_lane_slot = lane_slot;
			}
			slots[v] = (Slot){lane_slot, lanes_used};
			lanes_used += x.size;
			st->sgpr_spills += x.size;
		} else if (x.cls == MR_V && cdna && agpr_room >= x.size) {
			int a = mir_vreg(f, MR_A, x.size);
			if (a < 0)
				goto out;
			slots[v] = (Slot){a, 0};
			agpr_room -= x.size;
			st->vgpr_spills += x.size;
			st->agpr_spills += x.size;
		} else if (x.cls == MR_V) {
			if (st->scratch_bytes + 4 * x.size > RA_SCRATCH_MAX) {
				rc = -2;
				goto out;
			}
			if (base == TA_TARGET_GFX90A && rsrc < 0) {
				if (wave_sgpr <= 0) {
					rc = -3;
					goto out;
				}
				if ((rsrc = mir_vreg(f, MR_S, 4)) < 0)
					goto out;
				f->vregs.data[rsrc].hint = 0;
				st->scratch_rsrc = rsrc + 1;
				new_rsrc = 1;
			}
			slots[v] = (Slot){-1, st->scratch_bytes};
			st->scratch_bytes += 4 * x.size;
			st->vgpr_spills += x.size;
			st->scratch_spills += x.size;
		} else {
			goto out; /* AGPRs are never chosen */
		}
	}
	MInstVec out = {0};
	for (size_t b = 0; b < f->blocks.len; b++) {
		MBlock *bl = &f->blocks.data[b];
		int first = (int)out.len;
		if (b == 0 && new_rsrc && rsrc_prologue(f, &out, rsrc, wave_sgpr))
			goto fail;
		for (int i = bl->first; i < bl->last; i++) {
			MInst mi = f->insns.data[i];
			/* Lane slots are defined whole at entry, after the input copies:
			 * v_writelane keeps the other lanes, so it reads the slot. */
			if (b == 0 && first_lane_slot >= 0 && mi.in.op != MOP_PCOPY && mi.in.op != MOP_LABEL) {
				if (init_slots(f, &out, first_lane_slot, lane_slot))
					goto fail;
				first_lane_slot = -1;
			}
			/* Spilled vregs of this instruction, each with its dword hull. */
			int xs[ISA_MAX_OPS], lo[ISA_MAX_OPS], hi[ISA_MAX_OPS], t[ISA_MAX_OPS], nx = 0;
			uint32_t rd[ISA_MAX_OPS]; /* dwords read, bit per dword of X */
			for (int k = 0; k < mi.in.nops; k++) {
				if (!(mi.vmask & (1u << k)) || mi.vr[k] >= nv || !spill[mi.vr[k]])
					continue;
				int j = 0;
				while (j < nx && xs[j] != mi.vr[k])
					j++;
				if (j == nx) {
					xs[j] = mi.vr[k], lo[j] = INT_MAX, hi[j] = 0, rd[j] = 0;
					nx++;
				}
				lo[j] = TA_MIN(lo[j], mi.sub[k]);
				hi[j] = TA_MAX(hi[j], mi.sub[k] + mi.in.ops[k].count);
				/* An exec-masked write of a VGPR (MI_PARTIAL) needs no reload:
				 * the store after it runs under the same mask, so the slot
				 * itself keeps the inactive lanes. */
				int merge_only = k == 0 && k < mi.ndef && (mi.flags & MI_PARTIAL) && !(mi.flags & MI_TIED) &&
						 f->vregs.data[mi.vr[k]].cls == MR_V;
				if (mi_is_use(&mi, k) && !merge_only)
					for (int d = 0; d < mi.in.ops[k].count; d++)
						rd[j] |= 1u << (mi.sub[k] + d);
			}
			for (int j = 0; j < nx; j++) {
				const MVreg x = f->vregs.data[xs[j]];
				t[j] = mir_vreg(f, x.cls, hi[j] - lo[j]);
				if (t[j] < 0)
					goto fail;
				/* Reload the dwords read (not the ones only written: they
				 * may hold nothing yet); the first reload starts T's value. */
				int firstmove = 1;
				for (int d = lo[j]; d < hi[j]; d++) {
					if (!((rd[j] >> d) & 1))
						continue;
					if (spill_move(f, &out, &slots[xs[j]], x.cls, t[j], d - lo[j], d, 0, rsrc))
						goto fail;
					if (firstmove && hi[j] - lo[j] > 1)
						out.data[out.len - 1].flags |= MI_DEFALL;
					firstmove = 0;
				}
			}
			uint8_t wr[ISA_MAX_OPS][16];
			memset(wr, 0, sizeof wr);
			for (int k = 0; k < mi.in.nops; k++) {
				if (!(mi.vmask & (1u << k)) || mi.vr[k] >= nv || !spill[mi.vr[k]])
					continue;
				int j = 0;
				while (xs[j] != mi.vr[k])
					j++;
				if (mi_is_def(&mi, k))
					for (int d = 0; d < mi.in.ops[k].count; d++)
						wr[j][mi.sub[k] + d] = 1;
				if (k == 0 && mi_is_def(&mi, 0) && !(mi.flags & MI_TIED) && f->vregs.data[xs[j]].cls == MR_V)
					mi.flags &= (uint8_t)~MI_PARTIAL; /* the temporary starts fresh */
				mi.vr[k] = t[j];
				mi.sub[k] = (uint8_t)(mi.sub[k] - lo[j]);
			}
			if (vec_push(&out, mi))
				goto fail;
			for (int j = 0; j < nx; j++)
				for (int d = lo[j]; d < hi[j]; d++)
					if (wr[j][d] &&
					    spill_move(f, &out, &slots[xs[j]], f->vregs.data[xs[j]].cls, t[j], d - lo[j], d, 1,
						       rsrc))
						goto fail;
		}
		if (b == 0 && first_lane_slot >= 0) { /* an entry block of input copies only */
			if (init_slots(f, &out, first_lane_slot, lane_slot))
				goto fail;
			first_lane_slot = -1;
		}
		bl->first = first;
		bl->last = (int)out.len;
	}
	vec_free(&f->insns);
	f->insns = out;
	rc = 0;
	goto out;
fail:
	vec_free(&out);
out:
	free(slots);
	return rc;
}

/* Vregs whose other lanes are read (DPP, readlane, bpermute...): a reload
 * under the current exec would not bring the inactive lanes. */
static int cross_lane(const MInst *mi)
{
	unsigned op = mi->in.op;
	return mi->in.enc == ISA_ENC_DPP || op == ISA_V_READLANE_B32 || op == ISA_V_READFIRSTLANE_B32 ||
	       op == ISA_DS_BPERMUTE_B32 || op == ISA_DS_PERMUTE_B32 || op == ISA_DS_SWIZZLE_B32 ||
	       (op < MOP_BASE && (isa_ops[op].flags & ISA_F_SWIZZLE));
}

typedef struct {
	double score;
	int v;
} Cand;

static int cand_cmp(const void *a, const void *b)
{
	const Cand *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->v - y->v;
}

/* Marks the best candidates of file cls in spill[] until `need` dwords. */
static int choose(const MFunc *f, int cls, int norig, int need, const uint8_t *done, uint8_t *spill)
{
	int nv = (int)f->vregs.len;
	Liveness lv;
	if (liveness_compute(f, &lv))
		return -1;
	int32_t *lo = malloc(sizeof(int32_t) * ((size_t)nv + 1)), *hi = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	int32_t *acc = calloc((size_t)nv + 1, sizeof(int32_t));
	uint8_t *bad = calloc((size_t)nv + 1, 1);
	Cand *c = malloc(sizeof(Cand) * ((size_t)nv + 1));
	int rc = -1, got = 0;
	if (!lo || !hi || !acc || !bad || !c)
		goto out;
	for (int v = 0; v < nv; v++)
		lo[v] = INT_MAX, hi[v] = -1;
	for (size_t b = 0; b < f->blocks.len; b++) {
		const MBlock *bl = &f->blocks.data[b];
		for (int w = 0; w < lv.nwords; w++) {
			uint64_t m = lv.live_in[b * lv.nwords + w] | lv.live_out[b * lv.nwords + w];
			for (; m; m &= m - 1) {
				int v = w * 64 + __builtin_ctzll(m);
				lo[v] = TA_MIN(lo[v], bl->first);
				hi[v] = TA_MAX(hi[v], bl->last);
			}
		}
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *mi = &f->insns.data[i];
			int xl = cross_lane(mi);
			int mma = mi->in.op < MOP_BASE && (isa_ops[mi->in.op].flags & (ISA_F_MFMA | ISA_F_WMMA));
			for (int k = 0; k < mi->in.nops; k++) {
				if (!(mi->vmask & (1u << k)))
					continue;
				int v = mi->vr[k];
				lo[v] = TA_MIN(lo[v], i);
				hi[v] = TA_MAX(hi[v], i);
				acc[v]++;
				/* PCOPY: kernel inputs keep their hinted registers.  Matrix
				 * operands: a copy right after an MFMA needs wait states that
				 * amd_hazard does not insert for v_accvgpr_write yet. */
				if (xl || mi->in.op == MOP_PCOPY || mma)
					bad[v] = 1;
			}
		}
	}
	int n = 0;
	for (int v = 0; v < norig; v++) {
		const MVreg *x = &f->vregs.data[v];
		if (x->cls != cls || x->size > 16 || done[v] || bad[v] || hi[v] < 0 || hi[v] - lo[v] < 2)
			continue;
		c[n++] = (Cand){(double)(hi[v] - lo[v]) / (acc[v] + 1) * x->size, v};
	}
	qsort(c, (size_t)n, sizeof *c, cand_cmp);
	for (int i = 0; i < n && got < need; i++) {
		spill[c[i].v] = 1;
		got += f->vregs.data[c[i].v].size;
	}
	rc = got;
out:
	free(lo);
	free(hi);
	free(acc);
	free(bad);
	free(c);
	liveness_free(&lv);
	return rc;
}

int ra_allocate_spill(MFunc *f, const RaOptions *opt, RaResult *r, RaSpillStats *st, Diag *d)
{
	return ra_allocate_spill_abi(f, opt, 0, r, st, d);
}

int ra_allocate_spill_abi(MFunc *f, const RaOptions *opt, int wave_sgpr, RaResult *r, RaSpillStats *st,
			  Diag *d)
{
	static const char *names[] = {"SGPR", "VGPR", "AGPR"};
	RaSpillStats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	int norig = (int)f->vregs.len;
	uint8_t *spill = NULL;
	int need = 0, agpr0 = -1;
	ta_target base = ISA_TARGET(f->target);
	int cdna = base == TA_TARGET_GFX90A || base == TA_TARGET_GFX942;
	for (int round = 0; round < RA_SPILL_ROUNDS; round++) {
		st->rounds = round + 1;
		Diag quiet;
		diag_init(&quiet);
		int rc = ra_allocate(f, opt, r, round + 1 < RA_SPILL_ROUNDS ? &quiet : d);
		diag_free(&quiet);
		if (!rc && st->scratch_rsrc && r->phys[st->scratch_rsrc - 1] != 0) {
			/* The V# prologue runs before the input copy: anywhere but
			 * s[0:3] it could overwrite an input not yet copied. */
			diag_error(d, "internal error: the scratch V# did not get s[0:3]");
			ra_result_free(r);
			break;
		}
		if (!rc) {
			free(spill);
			return 0;
		}
		int cls = r->fail_cls;
		if (cls < 0 || round + 1 == RA_SPILL_ROUNDS)
			break;
		if (cls == MR_A) {
			/* Matrix accumulators are never spilled, and the AGPR slots
			 * stay within the room measured below. */
			diag_error(d, "register allocation failed: AGPR demand exceeds the register file (matrix "
				      "accumulators are not spilled)");
			break;
		}
		if (!spill && !(spill = calloc((size_t)norig + 1, 1))) {
			diag_error(d, "out of memory");
			break;
		}
		Liveness lv;
		if (liveness_compute(f, &lv)) {
			diag_error(d, "out of memory");
			break;
		}
		int dem = cls == MR_S ? lv.max.s : lv.max.v;
		if (agpr0 < 0)
			agpr0 = lv.max.a; /* the code's own AGPRs, before any slot */
		liveness_free(&lv);
		int limit = opt && opt->reg_limit[cls] ? opt->reg_limit[cls] : cls == MR_S ? 96 : 256;
		/* AGPR slots first (CDNA), as long as every slot could be live at
		 * once next to the code's own AGPRs: then the AGPR file never runs
		 * out because of spilling. */
		int alimit = opt && opt->reg_limit[MR_A] ? opt->reg_limit[MR_A] : 256;
		int room = cdna ? TA_MAX(alimit - agpr0 - st->agpr_spills, 0) : 0;
		/* Excess plus room for the temporaries (an instruction reads up to
		 * 3 tuples), doubled every round. */
		need = TA_MAX(need * 2, TA_MAX(dem - limit, 0) + 8);
		/* This round's picks only: earlier ones no longer occur in f. */
		uint8_t *now = calloc(f->vregs.len + 1, 1);
		int got = now ? choose(f, cls, norig, need, spill, now) : -1;
		if (got <= 0) {
			free(now);
			diag_error(d, "register allocation failed: %d %ss live exceed the %d available and none is "
				      "left to spill", dem, names[cls], limit);
			break;
		}
		int e = ra_spill(f, now, room, wave_sgpr, st);
		for (int v = 0; v < norig; v++)
			spill[v] |= now[v];
		free(now);
		if (e == -2) {
			diag_error(d, "register allocation failed: spilling needs more than %d bytes of scratch per "
				      "work-item", RA_SCRATCH_MAX);
			break;
		}
		if (e == -3) {
			diag_error(d, "register allocation failed: VGPR spills need scratch memory, and no SGPR "
				      "for the scratch wave offset was given");
			break;
		}
		if (e) {
			diag_error(d, "out of memory while spilling");
			break;
		}
	}
	free(spill);
	return -1;
}
