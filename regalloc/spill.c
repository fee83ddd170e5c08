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
 * Slots are shared: values whose intervals never overlap take the same
 * lanes, AGPR slot vreg or scratch bytes (interval colouring below), so
 * the slots grow with the values live at once, not with those spilled.
 *
 * Which vregs: the driver (ra_allocate_spill) measures where the demand of
 * the file that ran out exceeds the limit and takes the candidates with
 * the longest interval per access (a cheap stand-in for Braun–Hack's
 * average next-use distance) that are live there, only until no point is
 * in excess; every round spills the whole set chosen so far from the
 * original code and measures again.  At most RA_SPILL_ROUNDS rounds, each
 * a few liveness passes, sorts and segment-tree sweeps: O(n log n), no
 * unbounded retry. */
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

/* ra.c's interval of every vreg: the hull of the points where it is read
 * (2i), written (2i+1, or 2i when MI_EARLY), live into a block (2 first)
 * or out of it (2 last); hi[v] < 0: v occurs nowhere.  acc (may be NULL)
 * counts the operands naming each vreg. */
static void hulls(const MFunc *f, const Liveness *lvp, int32_t *lo, int32_t *hi, int32_t *acc)
{
	const Liveness lv = *lvp; /* (a shallow copy: shorter names) */
	for (size_t v = 0; v < f->vregs.len; v++)
		lo[v] = INT_MAX, hi[v] = -1;
	for (size_t b = 0; b < f->blocks.len; b++) {
		const MBlock *bl = &f->blocks.data[b];
		LiveSet in = lv_in(&lv, (int)b), out = lv_out(&lv, (int)b);
		for (int k = 0; k < in.n; k++) {
			int v = in.v[k];
			lo[v] = TA_MIN(lo[v], 2 * bl->first);
			hi[v] = TA_MAX(hi[v], 2 * bl->first);
		}
		for (int k = 0; k < out.n; k++) {
			int v = out.v[k];
			lo[v] = TA_MIN(lo[v], 2 * bl->last);
			hi[v] = TA_MAX(hi[v], 2 * bl->last);
		}
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *mi = &f->insns.data[i];
			int dp = (mi->flags & MI_EARLY) ? 2 * i : 2 * i + 1;
			for (int k = 0; k < mi->in.nops; k++) {
				if (!(mi->vmask & (1u << k)))
					continue;
				int v = mi->vr[k];
				if (acc)
					acc[v]++;
				if (mi_is_use(mi, k)) {
					lo[v] = TA_MIN(lo[v], 2 * i);
					hi[v] = TA_MAX(hi[v], 2 * i);
				}
				if (mi_is_def(mi, k)) {
					lo[v] = TA_MIN(lo[v], dp);
					hi[v] = TA_MAX(hi[v], 2 * i + 1);
				}
			}
		}
	}
}

/* lv: f's liveness, or NULL (computed here). */
static int vreg_hulls(const MFunc *f, const Liveness *given, int32_t *lo, int32_t *hi)
{
	Liveness lv;
	if (given) {
		hulls(f, given, lo, hi, NULL);
		return 0;
	}
	if (liveness_compute(f, &lv))
		return -1;
	hulls(f, &lv, lo, hi, NULL);
	liveness_free(&lv);
	return 0;
}

/* ---- slots: interval colouring ------------------------------------------- */

/* A colour is one slot (some lanes of a lane slot vreg, scratch bytes, or
 * for AGPRs only a place in the budget: each value gets its own AGPR slot
 * vreg, which the allocator shares) of one size.  Spilled values are visited by interval
 * start; a colour whose last value ended before the start goes back to the
 * free list of its kind and size, where the next value of that size takes
 * it: the slots then grow with the values live at once, not with the
 * values spilled (optimal per size for interval graphs).  The intervals
 * are ra.c's, so two values share a slot exactly when the linear scan
 * could give them one register; the values are stored right after the
 * instructions writing them and reloaded right before those reading them,
 * inside the interval. */
enum { K_LANE, K_AGPR, K_SCRATCH, NKIND, MAXSIZE = 16 };

typedef struct {
	Slot s;
	int kind, size;
	int32_t end; /* interval end of its current value */
	int next;    /* free list */
} Colour;

typedef struct {
	Colour *c;
	int n;
	int *heap; /* active colours, min-heap by end */
	int nheap;
	int free[NKIND][MAXSIZE + 1], tail[NKIND][MAXSIZE + 1]; /* queues: the first freed is reused first */
} Colouring;

static void heap_up(Colouring *cg, int x)
{
	int i = cg->nheap++;
	while (i > 0 && cg->c[cg->heap[(i - 1) / 2]].end > cg->c[x].end) {
		cg->heap[i] = cg->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	cg->heap[i] = x;
}

static int heap_take(Colouring *cg)
{
	int top = cg->heap[0], x = cg->heap[--cg->nheap], i = 0;
	for (;;) {
		int k = 2 * i + 1;
		if (k >= cg->nheap)
			break;
		if (k + 1 < cg->nheap && cg->c[cg->heap[k + 1]].end < cg->c[cg->heap[k]].end)
			k++;
		if (cg->c[cg->heap[k]].end >= cg->c[x].end)
			break;
		cg->heap[i] = cg->heap[k];
		i = k;
	}
	if (cg->nheap)
		cg->heap[i] = x;
	return top;
}

/* A free colour of that kind and size, or -1. */
static int colour_reuse(Colouring *cg, int kind, int size)
{
	int c = cg->free[kind][size];
	if (c >= 0)
		cg->free[kind][size] = cg->c[c].next;
	return c;
}

static void colour_release(Colouring *cg, int c)
{
	int k = cg->c[c].kind, z = cg->c[c].size;
	cg->c[c].next = -1;
	if (cg->free[k][z] < 0)
		cg->free[k][z] = c;
	else
		cg->c[cg->tail[k][z]].next = c;
	cg->tail[k][z] = c;
}

static int colour_new(Colouring *cg, Slot s, int kind, int size)
{
	cg->c[cg->n] = (Colour){s, kind, size, 0, -1};
	return cg->n++;
}

typedef struct {
	int32_t start, v;
} ByStart;

static int bystart_cmp(const void *a, const void *b)
{
	const ByStart *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->v - y->v;
}

/* lv: f's liveness (f before spilling), or NULL (computed here). */
static int spill_slots(MFunc *f, const uint8_t *spill, int agpr_room, int wave_sgpr, RaSpillStats *st,
		       int32_t *slot_of, const Liveness *lv)
{
	int nv = (int)f->vregs.len, wave = 64;
	ta_target base = ISA_TARGET(f->target);
	int cdna = base == TA_TARGET_GFX90A || base == TA_TARGET_GFX942;
	if (base == TA_TARGET_GFX1100 && !ISA_IS_W64(f->target))
		wave = 32;
	Slot *slots = malloc(sizeof(Slot) * ((size_t)nv + 1));
	int32_t *ilo = malloc(sizeof(int32_t) * ((size_t)nv + 1)), *ihi = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	ByStart *order = malloc(sizeof(ByStart) * ((size_t)nv + 1));
	Colouring cg = {malloc(sizeof(Colour) * ((size_t)nv + 1)), 0, malloc(sizeof(int) * ((size_t)nv + 1)), 0, {{0}}, {{0}}};
	int lane_slot = -1, lanes_used = wave, rc = -1, first_lane_slot = -1, new_rsrc = 0, n = 0;
	int rsrc = st->scratch_rsrc - 1;
	if (!slots || !ilo || !ihi || !order || !cg.c || !cg.heap || vreg_hulls(f, lv, ilo, ihi))
		goto out;
	memset(cg.free, -1, sizeof cg.free);
	for (int v = 0; v < nv; v++) {
		slots[v] = (Slot){-1, 0};
		if (spill[v] && ihi[v] >= 0)
			order[n++] = (ByStart){ilo[v], v};
	}
	qsort(order, (size_t)n, sizeof *order, bystart_cmp);
	for (int i = 0; i < n; i++) {
		int v = order[i].v, c;
		MVreg x = f->vregs.data[v];
		if (x.size > MAXSIZE || x.cls == MR_A)
			goto out; /* never chosen */
		while (cg.nheap && cg.c[cg.heap[0]].end < ilo[v]) {
			colour_release(&cg, heap_take(&cg));
		}
		if (x.cls == MR_S) {
			if ((c = colour_reuse(&cg, K_LANE, x.size)) < 0) {
				/* Tuples stay in one slot vreg: lanes never straddle two. */
				if (lanes_used + x.size > wave) {
					lane_slot = mir_vreg(f, MR_V, 1);
					lanes_used = 0;
					if (lane_slot < 0)
						goto out;
					if (first_lane_slot < 0)
						first_lane_slot = lane_slot;
				}
				c = colour_new(&cg, (Slot){lane_slot, lanes_used}, K_LANE, x.size);
				lanes_used += x.size;
			}
			st->sgpr_spills += x.size;
		} else if (cdna && ((c = colour_reuse(&cg, K_AGPR, x.size)) >= 0 || agpr_room >= x.size)) {
			/* Its own AGPR slot vreg: the allocator shares the registers
			 * (and the validator checks them); the colours only count
			 * how many AGPR dwords the slots need at once. */
			if (c < 0) {
				c = colour_new(&cg, (Slot){-1, 0}, K_AGPR, x.size);
				agpr_room -= x.size;
				st->agpr_slots += x.size;
			}
			int a = mir_vreg(f, MR_A, x.size);
			if (a < 0)
				goto out;
			cg.c[c].end = ihi[v];
			heap_up(&cg, c);
			slots[v] = (Slot){a, 0};
			if (slot_of)
				slot_of[v] = -2;
			st->vgpr_spills += x.size;
			st->agpr_spills += x.size;
			continue;
		} else {
			if ((c = colour_reuse(&cg, K_SCRATCH, x.size)) < 0) {
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
				c = colour_new(&cg, (Slot){-1, st->scratch_bytes}, K_SCRATCH, x.size);
				st->scratch_bytes += 4 * x.size;
			}
			st->vgpr_spills += x.size;
			st->scratch_spills += x.size;
		}
		cg.c[c].end = ihi[v];
		heap_up(&cg, c);
		slots[v] = cg.c[c].s;
		if (slot_of)
			slot_of[v] = x.cls == MR_S ? RA_SLOT_LANE + (slots[v].slot << 6 | slots[v].lane) : slots[v].lane;
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
			/* An undefined value of a spilled vreg: its slot holds it. */
			if (mi.in.op == MOP_UNDEF && mi.vr[0] < nv && spill[mi.vr[0]])
				continue;
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
			int merged = (mi.flags & MI_PARTIAL) && !(mi.flags & MI_TIED) && mi.ndef && (mi.vmask & 1) &&
					     mi.vr[0] < nv && spill[mi.vr[0]] && f->vregs.data[mi.vr[0]].cls == MR_V
				     ? mi.vr[0]
				     : -1;
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
				for (int d = lo[j]; d < hi[j]; d++) {
					if (!wr[j][d])
						continue;
					if (spill_move(f, &out, &slots[xs[j]], f->vregs.data[xs[j]].cls, t[j], d - lo[j], d, 1,
						       rsrc))
						goto fail;
					/* A merge stays a merge in an AGPR slot: the slot's
					 * inactive lanes are live through it. */
					if (xs[j] == merged && slots[xs[j]].slot >= 0)
						out.data[out.len - 1].flags |= MI_PARTIAL;
				}
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
	free(ilo);
	free(ihi);
	free(order);
	free(cg.c);
	free(cg.heap);
	return rc;
}

int ra_spill(MFunc *f, const uint8_t *spill, int agpr_room, int wave_sgpr, RaSpillStats *st)
{
	return spill_slots(f, spill, agpr_room, wave_sgpr, st, NULL, NULL);
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

/* Demand in excess of the limit per point, for the choice below: range
 * add, range max (lazy segment tree), O(log n) each. */
typedef struct {
	int32_t *mx, *add;
	int n;
} Excess;

static void ex_build(Excess *t, int node, int l, int r, const int32_t *val)
{
	t->add[node] = 0;
	if (l == r) {
		t->mx[node] = val[l];
		return;
	}
	int m = (l + r) / 2;
	ex_build(t, 2 * node, l, m, val);
	ex_build(t, 2 * node + 1, m + 1, r, val);
	t->mx[node] = TA_MAX(t->mx[2 * node], t->mx[2 * node + 1]);
}

static void ex_add(Excess *t, int node, int l, int r, int a, int b, int d)
{
	if (b < l || r < a)
		return;
	if (a <= l && r <= b) {
		t->mx[node] += d;
		t->add[node] += d;
		return;
	}
	int m = (l + r) / 2;
	ex_add(t, 2 * node, l, m, a, b, d);
	ex_add(t, 2 * node + 1, m + 1, r, a, b, d);
	t->mx[node] = TA_MAX(t->mx[2 * node], t->mx[2 * node + 1]) + t->add[node];
}

static int32_t ex_max(const Excess *t, int node, int l, int r, int a, int b)
{
	if (b < l || r < a)
		return INT32_MIN / 2;
	if (a <= l && r <= b)
		return t->mx[node];
	int m = (l + r) / 2;
	return TA_MAX(ex_max(t, 2 * node, l, m, a, b), ex_max(t, 2 * node + 1, m + 1, r, a, b)) + t->add[node];
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

typedef struct {
	int32_t v, a, b;
} Seg;

typedef VEC(Seg) SegVec;

/* Where each vreg of file cls occupies registers, as point ranges: per
 * block, from its live-in (2 first) or first access to its live-out
 * (2 last - 1) or last access: what the SSA allocator needs (a value holds
 * its registers only where it is live).  Dead stretches inside one block
 * are counted as live. */
static int live_segs(const MFunc *f, const Liveness *lv, int cls, int32_t *sa, int32_t *sb, SegVec *out)
{
	int nv = (int)f->vregs.len;
	int32_t *touched = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	if (!touched || !sb) {
		free(touched);
		return -1;
	}
	for (int v = 0; v < nv; v++)
		sa[v] = -1;
	for (size_t b = 0; b < f->blocks.len; b++) {
		const MBlock *bl = &f->blocks.data[b];
		int nt = 0;
		if (bl->first == bl->last)
			continue;
		LiveSet in = lv_in(lv, (int)b), lout = lv_out(lv, (int)b);
		for (int k = 0; k < in.n; k++) {
			int v = in.v[k];
			if (f->vregs.data[v].cls == cls) {
				sa[v] = sb[v] = 2 * bl->first;
				touched[nt++] = v;
			}
		}
		for (int i = bl->first; i < bl->last; i++) {
			const MInst *mi = &f->insns.data[i];
			for (int k = 0; k < mi->in.nops; k++) {
				int v = mi->vr[k];
				if (!(mi->vmask & (1u << k)) || f->vregs.data[v].cls != cls)
					continue;
				int p0 = mi_is_use(mi, k) ? 2 * i : (mi->flags & MI_EARLY) ? 2 * i : 2 * i + 1;
				int p1 = mi_is_def(mi, k) ? 2 * i + 1 : 2 * i;
				if (sa[v] < 0) {
					sa[v] = p0, sb[v] = p1;
					touched[nt++] = v;
				} else {
					sa[v] = TA_MIN(sa[v], p0);
					sb[v] = TA_MAX(sb[v], p1);
				}
			}
		}
		for (int k = 0; k < lout.n; k++) {
			int v = lout.v[k];
			if (f->vregs.data[v].cls != cls)
				continue;
			if (sa[v] < 0) {
				sa[v] = 2 * bl->first;
				touched[nt++] = v;
			}
			sb[v] = 2 * bl->last - 1;
		}
		for (int j = 0; j < nt; j++) {
			int v = touched[j];
			if (vec_push(out, ((Seg){v, sa[v], sb[v]}))) {
				free(touched);
				return -1;
			}
			sa[v] = -1;
		}
	}
	free(touched);
	return 0;
}

/* Marks in pick[] the candidates of file cls to spill next: the points
 * where the demand exceeds `limit` say how much must go.  The demand is
 * that of the live segments above (live_only), or of ra.c's interval hulls
 * (what the linear scan needs).  Candidates are taken best first (longest
 * interval per access) if one of their segments covers a point still in
 * excess; spilling one lowers the demand over its segments by its size,
 * except at the instructions touching it, which keep a temporary of the
 * dwords they access.  Stops when no point is in excess: spill only as
 * much as needed (the next round measures again).  Returns the dwords
 * picked, or -1 (memory).  O(n log n) in the instructions and segments. */
static const double sqrt_size[17] = {0,     1,     1.414, 1.732, 2,     2.236, 2.449, 2.646, 2.828,
				      3,     3.162, 3.317, 3.464, 3.606, 3.742, 3.873, 4};

static int choose(const MFunc *f, const Liveness *lvp, int cls, int norig, int limit, int live_only, int fail_at,
		  int need, const uint8_t *done, uint8_t *pick)
{
	int nv = (int)f->vregs.len, ni = (int)f->insns.len, np = 2 * ni + 2;
	int32_t *lo = malloc(sizeof(int32_t) * ((size_t)nv + 1)), *hi = malloc(sizeof(int32_t) * ((size_t)nv + 1));
	int32_t *acc = calloc((size_t)nv + 2, sizeof(int32_t)), *at = NULL, *fill = NULL;
	int32_t *soff = calloc((size_t)nv + 2, sizeof(int32_t));
	int32_t *dem = calloc((size_t)np + 1, sizeof(int32_t));
	uint8_t *bad = calloc((size_t)nv + 1, 1);
	Cand *c = malloc(sizeof(Cand) * ((size_t)nv + 1));
	Excess t = {malloc(sizeof(int32_t) * 4 * (size_t)np), malloc(sizeof(int32_t) * 4 * (size_t)np), np};
	SegVec segs = {0};
	Seg *byv = NULL;
	int32_t *bseg = NULL;
	const Liveness lv = *lvp; /* (a shallow copy: shorter names) */
	int rc = -1, got = 0;
	if (!lo || !hi || !acc || !soff || !dem || !bad || !c || !t.mx || !t.add)
		goto out;
	hulls(f, &lv, lo, hi, acc + 1);
	/* Accesses per vreg (CSR: the instructions of v at at[acc[v]..acc[v+1])). */
	for (int v = 0; v < nv; v++)
		acc[v + 1] += acc[v];
	if (!(at = malloc(sizeof(int32_t) * ((size_t)acc[nv] + 1))) || !(fill = malloc(sizeof(int32_t) * ((size_t)nv + 1))))
		goto out;
	memcpy(fill, acc, sizeof(int32_t) * (size_t)nv);
	for (int i = 0; i < ni; i++) {
		const MInst *mi = &f->insns.data[i];
		int xl = cross_lane(mi);
		for (int k = 0; k < mi->in.nops; k++) {
			if (!(mi->vmask & (1u << k)))
				continue;
			int v = mi->vr[k];
			at[fill[v]++] = i;
			/* PCOPY: kernel inputs keep their hinted registers. */
			if (xl || mi->in.op == MOP_PCOPY)
				bad[v] = 1;
		}
	}
	/* Segments, grouped by vreg (counting sort). */
	if (live_only) {
		if (live_segs(f, &lv, cls, fill, bseg = malloc(sizeof(int32_t) * ((size_t)nv + 1)), &segs))
			goto out;
	} else {
		for (int v = 0; v < nv; v++)
			if (f->vregs.data[v].cls == cls && hi[v] >= 0 && vec_push(&segs, ((Seg){v, lo[v], hi[v]})))
				goto out;
	}
	if (!(byv = malloc(sizeof(Seg) * (segs.len + 1))))
		goto out;
	for (size_t j = 0; j < segs.len; j++)
		soff[segs.data[j].v + 1]++;
	for (int v = 0; v < nv; v++)
		soff[v + 1] += soff[v];
	memcpy(fill, soff, sizeof(int32_t) * (size_t)nv);
	for (size_t j = 0; j < segs.len; j++)
		byv[fill[segs.data[j].v]++] = segs.data[j];
	/* Demand per point, then its excess over the limit. */
	for (size_t j = 0; j < segs.len; j++) {
		dem[segs.data[j].a] += f->vregs.data[segs.data[j].v].size;
		dem[segs.data[j].b + 1] -= f->vregs.data[segs.data[j].v].size;
	}
	for (int p = 1; p < np; p++)
		dem[p] += dem[p - 1];
	for (int p = 0; p < np; p++)
		dem[p] -= limit;
	if (fail_at >= 0 && 2 * fail_at + 1 < np) {
		dem[2 * fail_at] = TA_MAX(dem[2 * fail_at], need);
		dem[2 * fail_at + 1] = TA_MAX(dem[2 * fail_at + 1], need);
	}
	ex_build(&t, 1, 0, np - 1, dem);
	int n = 0;
	for (int v = 0; v < norig; v++) {
		const MVreg *x = &f->vregs.data[v];
		if (x->cls != cls || x->size > 16 || done[v] || bad[v] || hi[v] < 0 || hi[v] - lo[v] < 4)
			continue;
		/* Relief grows with the size, and so does the cost of every
		 * access: weighted by the square root, the measured best between
		 * the two (gemm at 96-160 VGPRs, the small examples). */
		c[n++] = (Cand){(double)(hi[v] - lo[v]) / (acc[v + 1] - acc[v] + 1) * sqrt_size[x->size], v};
	}
	qsort(c, (size_t)n, sizeof *c, cand_cmp);
	for (int j = 0; j < n && t.mx[1] > 0; j++) {
		int v = c[j].v, size = f->vregs.data[v].size, over = 0;
		for (int k = soff[v]; k < soff[v + 1] && !over; k++)
			over = ex_max(&t, 1, 0, np - 1, byv[k].a, byv[k].b) > 0;
		if (!over)
			continue;
		pick[v] = 1;
		got += size;
		for (int k = soff[v]; k < soff[v + 1]; k++)
			ex_add(&t, 1, 0, np - 1, byv[k].a, byv[k].b, -size);
		for (int a = acc[v]; a < acc[v + 1]; a++) {
			int i = at[a];
			if (a > acc[v] && at[a - 1] == i)
				continue;
			/* The temporary: the dwords accessed, live at the reads (2i)
			 * if reloaded, at the writes (2i+1) if stored. */
			const MInst *mi = &f->insns.data[i];
			int dlo = size, dhi = 0, rd = 0, wr = 0;
			for (int k = 0; k < mi->in.nops; k++)
				if ((mi->vmask & (1u << k)) && mi->vr[k] == v) {
					dlo = TA_MIN(dlo, mi->sub[k]);
					dhi = TA_MAX(dhi, mi->sub[k] + mi->in.ops[k].count);
					rd |= mi_is_use(mi, k);
					wr |= mi_is_def(mi, k);
				}
			ex_add(&t, 1, 0, np - 1, rd ? 2 * i : 2 * i + 1, wr ? 2 * i + 1 : 2 * i, dhi - dlo);
		}
	}
	rc = got;
out:
	free(lo);
	free(hi);
	free(acc);
	free(at);
	free(fill);
	free(soff);
	free(dem);
	free(bad);
	free(c);
	free(t.mx);
	free(t.add);
	free(byv);
	free(bseg);
	vec_free(&segs);
	return rc;
}

/* The function before any spill code: each round spills the whole set
 * chosen so far from it, so that the slots are coloured over all of them. */
typedef struct {
	size_t nvregs;
	MInstVec insns;
	VEC(MBlock) blocks;
} Saved;

static int save(const MFunc *f, Saved *s)
{
	s->nvregs = f->vregs.len;
	if (vec_reserve(&s->insns, f->insns.len + 1) || vec_reserve(&s->blocks, f->blocks.len + 1))
		return -1;
	memcpy(s->insns.data, f->insns.data, sizeof(MInst) * f->insns.len);
	memcpy(s->blocks.data, f->blocks.data, sizeof(MBlock) * f->blocks.len);
	s->insns.len = f->insns.len;
	s->blocks.len = f->blocks.len;
	return 0;
}

static int restore(MFunc *f, const Saved *s)
{
	if (vec_reserve(&f->insns, s->insns.len + 1))
		return -1;
	memcpy(f->insns.data, s->insns.data, sizeof(MInst) * s->insns.len);
	memcpy(f->blocks.data, s->blocks.data, sizeof(MBlock) * s->blocks.len);
	f->insns.len = s->insns.len;
	f->vregs.len = s->nvregs;
	return 0;
}

int ra_allocate_spill(MFunc *f, const RaOptions *opt, int wave_sgpr, RaResult *r, RaSpillStats *st,
		      int32_t *slot_of, Diag *d)
{
	static const char *names[] = {"SGPR", "VGPR", "AGPR"};
	RaSpillStats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	int norig = (int)f->vregs.len, margin = 0, room = -1;
	for (int v = 0; slot_of && v < norig; v++)
		slot_of[v] = -1;
	uint8_t *spill = NULL, *now = NULL;
	Saved orig = {0};
	ta_target base = ISA_TARGET(f->target);
	int cdna = base == TA_TARGET_GFX90A || base == TA_TARGET_GFX942;
	/* One liveness of f per round serves both allocators and every choice
	 * (none of them changes f when it fails), and one of the original code
	 * every spill rewrite; each used to compute its own (33 liveness
	 * passes for a kernel that took 12 rounds). */
	Liveness lv, olv;
	int have_lv = 0, have_olv = 0;
	for (int round = 0; round < RA_SPILL_ROUNDS; round++) {
		Diag quiet;
		diag_init(&quiet);
		if (have_lv)
			liveness_free(&lv);
		if (!(have_lv = !liveness_compute(f, &lv))) {
			diag_free(&quiet);
			diag_error(d, "out of memory");
			break;
		}
		/* After spilling, the SSA allocator first (registers free where
		 * values are dead: it needs the least), then the linear scan. */
		int rc = round ? ra_allocate_ssa(f, opt, &lv, r, &quiet) : -1;
		int changed = !rc; /* its split copies are in f now */
		if (!rc && st->scratch_rsrc && r->phys[st->scratch_rsrc - 1] != 0) {
			ra_result_free(r); /* the V# must be s[0:3]: the scan's hint does that */
			rc = -1;
		}
		if (rc) {
			Diag *to = round + 1 < RA_SPILL_ROUNDS ? &quiet : d;
			rc = changed ? ra_allocate(f, opt, NULL, r, to) : ra_allocate(f, opt, &lv, r, to);
		}
		diag_free(&quiet);
		if (rc && changed) { /* (rare) f has the rejected allocation's copies: measure it again */
			liveness_free(&lv);
			if (!(have_lv = !liveness_compute(f, &lv))) {
				diag_error(d, "out of memory");
				break;
			}
		}
		st->rounds = round + 1;
		if (!rc && st->scratch_rsrc && r->phys[st->scratch_rsrc - 1] != 0) {
			/* The V# prologue runs before the input copy: anywhere but
			 * s[0:3] it could overwrite an input not yet copied. */
			diag_error(d, "internal error: the scratch V# did not get s[0:3]");
			ra_result_free(r);
			break;
		}
		if (!rc) {
			free(spill);
			free(now);
			vec_free(&orig.insns);
			vec_free(&orig.blocks);
			liveness_free(&lv);
			if (have_olv)
				liveness_free(&olv);
			return 0;
		}
		int cls = r->fail_cls;
		if (cls < 0 || round + 1 == RA_SPILL_ROUNDS)
			break;
		if (!spill) {
			if (!(spill = calloc((size_t)norig + 1, 1)) || !(now = calloc((size_t)norig + 1, 1)) ||
			    save(f, &orig) || !(have_olv = !liveness_compute(f, &olv))) {
				diag_error(d, "out of memory");
				break;
			}
			/* AGPR slots first (CDNA), as long as the slots live at once
			 * (the colours) fit next to the code's own peak AGPR demand:
			 * then the AGPR file runs out only by alignment (below). */
			int alimit = opt && opt->reg_limit[MR_A] ? opt->reg_limit[MR_A] : 256;
			room = cdna ? TA_MAX(alimit - olv.max.a, 0) : 0;
		}
		if (cls == MR_A) {
			/* Matrix accumulators are never spilled; the AGPR slots can
			 * still fragment the file: give them half the room. */
			if (!st->agpr_slots) {
				diag_error(d, "register allocation failed: AGPR demand exceeds the register file "
					      "(matrix accumulators are not spilled)");
				break;
			}
			room = st->agpr_slots / 2;
		} else {
			int limit = opt && opt->reg_limit[cls] ? opt->reg_limit[cls] : cls == MR_S ? 96 : 256;
			/* Spill the demand in excess; when it does not exceed the limit
			 * yet the scan fails (aligned tuples find no window), aim
			 * lower: 2, 4, ... 32 registers below the limit. */
			int got;
			memset(now, 0, (size_t)norig);
			got = margin ? 0 : choose(f, &lv, cls, norig, limit, 1, -1, 0, spill, now);
			if (!got && r->fail_at >= 0 && round < RA_SPILL_ROUNDS - 3 && !margin)
				got = choose(f, &lv, cls, norig, limit, 0, r->fail_at, 1, spill, now);
			for (; !got;) {
				got = choose(f, &lv, cls, norig, limit - margin, 0, -1, 0, spill, now);
				if (got || margin >= 32)
					break;
				margin = margin ? 2 * margin : 2;
			}
			if (got <= 0) {
				int dem = cls == MR_S ? lv.max.s : lv.max.v;
				if (got < 0)
					diag_error(d, "out of memory");
				else
					diag_error(d, "register allocation failed: %d %ss live exceed the %d available "
						      "and none is left to spill", dem, names[cls], limit);
				break;
			}
			/* The other file's excess too (the scan stops at the first
			 * file that runs out): one round for both. */
			int other = cls == MR_S ? MR_V : MR_S;
			int olimit = opt && opt->reg_limit[other] ? opt->reg_limit[other] : other == MR_S ? 96 : 256;
			if (choose(f, &lv, other, norig, olimit, 1, -1, 0, spill, now) < 0) {
				diag_error(d, "out of memory");
				break;
			}
			for (int v = 0; v < norig; v++)
				spill[v] |= now[v];
		}
		/* Spill the whole set from the original code. */
		memset(st, 0, sizeof *st);
		for (int v = 0; slot_of && v < norig; v++)
			slot_of[v] = -1;
		int e = restore(f, &orig) ? -1 : spill_slots(f, spill, room, wave_sgpr, st, slot_of, &olv);
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
	free(now);
	vec_free(&orig.insns);
	vec_free(&orig.blocks);
	if (have_lv)
		liveness_free(&lv);
	if (have_olv)
		liveness_free(&olv);
	return -1;
}
