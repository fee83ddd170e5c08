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
 *   Scratch (VGPRs on gfx1100, or beyond the AGPR window) is not done yet:
 *   the driver reports it as an error.
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
	int slot;  /* slot vreg */
	int lane;  /* SGPR: first lane in slot; VGPR: 0 */
} Slot;

/* Moves one dword between T[tsub] and X's slot dword xsub. */
static int spill_move(MFunc *f, MInstVec *out, const Slot *sl, int cls, int t, int tsub, int xsub, int store)
{
	MInst mi;
	if (cls == MR_S) {
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

int ra_spill(MFunc *f, const uint8_t *spill, RaSpillStats *st)
{
	int nv = (int)f->vregs.len, wave = 64;
	ta_target base = ISA_TARGET(f->target);
	int cdna = base == TA_TARGET_GFX90A || base == TA_TARGET_GFX942;
	if (base == TA_TARGET_GFX1100 && !ISA_IS_W64(f->target))
		wave = 32;
	Slot *slots = malloc(sizeof(Slot) * ((size_t)nv + 1));
	if (!slots)
		return -1;
	int lane_slot = -1, lanes_used = wave, rc = -1, first_lane_slot = -1;
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
			if (st)
				st->sgpr_spills += x.size;
		} else if (x.cls == MR_V && cdna) {
			int a = mir_vreg(f, MR_A, x.size);
			if (a < 0)
				goto out;
			slots[v] = (Slot){a, 0};
			if (st)
				st->vgpr_spills += x.size;
		} else {
			goto out; /* needs scratch */
		}
	}
	MInstVec out = {0};
	for (size_t b = 0; b < f->blocks.len; b++) {
		MBlock *bl = &f->blocks.data[b];
		int first = (int)out.len;
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
					if (spill_move(f, &out, &slots[xs[j]], x.cls, t[j], d - lo[j], d, 0))
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
					    spill_move(f, &out, &slots[xs[j]], f->vregs.data[xs[j]].cls, t[j], d - lo[j], d, 1))
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
	static const char *names[] = {"SGPR", "VGPR", "AGPR"};
	RaSpillStats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	int norig = (int)f->vregs.len;
	uint8_t *spill = NULL;
	int need = 0;
	for (int round = 0; round < RA_SPILL_ROUNDS; round++) {
		st->rounds = round + 1;
		Diag quiet;
		diag_init(&quiet);
		int rc = ra_allocate(f, opt, r, round + 1 < RA_SPILL_ROUNDS ? &quiet : d);
		diag_free(&quiet);
		if (!rc) {
			free(spill);
			return 0;
		}
		int cls = r->fail_cls;
		if (cls < 0 || round + 1 == RA_SPILL_ROUNDS)
			break;
		ta_target base = ISA_TARGET(f->target);
		if (cls == MR_A || (cls == MR_V && base != TA_TARGET_GFX90A && base != TA_TARGET_GFX942)) {
			diag_error(d, "register allocation failed: %s demand exceeds the register file and spilling "
				      "it needs scratch memory, which is not supported yet", names[cls]);
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
		liveness_free(&lv);
		int limit = opt && opt->reg_limit[cls] ? opt->reg_limit[cls] : cls == MR_S ? 96 : 256;
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
		int e = ra_spill(f, now, st);
		for (int v = 0; v < norig; v++)
			spill[v] |= now[v];
		free(now);
		if (e) {
			diag_error(d, "out of memory while spilling");
			break;
		}
	}
	free(spill);
	return -1;
}
