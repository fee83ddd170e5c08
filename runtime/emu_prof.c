/* emu_prof.c — the emulator's profiling mode: what a launch executed (by
 * instruction class, per kernel and per loop), bytes per memory class, LDS
 * bank conflicts, and a cycle estimate from a small issue model.
 *
 * The model (docs/emulator.md "Profiling" has the numbers and how far to
 * trust them): every wave keeps its own clock.  An instruction costs issue
 * slots (gfx9: one per 4 cycles, the SIMD16 takes 4 cycles per wave64 VALU op;
 * gfx11: 1 cycle per wave32 op), an MFMA/WMMA waits for the wave's matrix
 * pipe and keeps it busy for its passes, a memory operation completes a
 * fixed latency (plus its LDS bank cycles or 64-byte lines) after issue, and
 * s_waitcnt moves the clock to the completion of the results it retires
 * (emu.c emu_wait: in-order vm/DS/vs, as the emulator retires them).  A
 * barrier moves every wave of the workgroup to the latest arrival.  From the
 * per-wave sums, one CU holding waves_per_simd waves on each SIMD takes the
 * longest of: the busiest issue unit, the matrix pipe, the LDS, vector
 * memory lines, and one wave's own timeline (latency). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_impl.h"
#include "regalloc.h"

/* Model parameters (cycles).  Round numbers, documented in docs/emulator.md. */
typedef struct {
	int slot;      /* cycles per issue slot of one wave */
	int valu;      /* VALU op (wave size on the SIMD width) */
	int trans;     /* transcendental VALU op */
	int lat_vmem, lat_lds, lat_smem;
	int lds_units; /* LDS pipes per CU (128 bytes per cycle each) */
	int vmem_lines; /* 64-byte lines per cycle per CU */
} ProfModel;

typedef struct {
	uint8_t cls;   /* ta_insn_class */
	int8_t mem;    /* ta_mem_class, -1 none */
	uint8_t unit;  /* issue unit cycles */
	uint8_t slots; /* issue slots */
	uint16_t mma;  /* matrix pipe cycles */
	int32_t loop;  /* innermost loop, -1 none */
	int32_t head;  /* loop whose first instruction this is, -1 none */
	int32_t tail;  /* loop whose back-edge branch this is, -1 none */
} ProfInsn;

typedef struct EmuProf {
	ta_profile p;
	ProfModel m;
	const EmuKernel *k;
	ProfInsn *pi;
	ta_profile_loop *loops;
	int nloops;
	char target[32];
	int valid;
} EmuProf;

void emu_prof_free(EmuProf *p)
{
	if (!p)
		return;
	free(p->pi);
	free(p->loops);
	free(p);
}

const ta_profile *emu_profile(const EmuDevice *dev)
{
	return dev->prof && dev->prof->valid ? &dev->prof->p : NULL;
}

static int name_has(const char *nm, const char *s) { return nm && strstr(nm, s) != NULL; }

static const char *op_name(const EmuDevice *dev, unsigned op)
{
	const char *nm = isa_op_name(dev->target, op);
	return nm ? nm : "";
}

static int is_trans(const char *nm)
{
	static const char *const t[] = {"v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_"};
	for (size_t i = 0; i < TA_ARRAY_LEN(t); i++)
		if (!strncmp(nm, t[i], strlen(t[i])))
			return 1;
	return 0;
}

static ProfInsn classify(const EmuDevice *dev, const ProfModel *m, const IsaInsn *in, int lanes)
{
	ProfInsn r = {TA_IC_SALU, -1, (uint8_t)m->slot, 1, 0, -1, -1, -1};
	unsigned op = in->op;
	uint32_t fl = isa_ops[op].flags;
	const char *nm = op_name(dev, op);
	int wide = dev->g11 && lanes == 64 ? 2 : 1; /* gfx11 wave64 runs in two halves */
	if (fl & (ISA_F_MFMA | ISA_F_WMMA)) {
		r.cls = TA_IC_MMA;
		if (fl & ISA_F_MFMA) {
			int xdl = 0, passes = emu_mma_passes(dev, op, &xdl);
			r.mma = (uint16_t)((passes ? passes : 8) * 4);
		} else /* RDNA3: 16x16x16 f16/bf16 at 256 flops per cycle per SIMD32; i8 2x, i4 4x */
			r.mma = (uint16_t)((name_has(nm, "iu4") ? 8 : name_has(nm, "iu8") ? 16 : 32) * wide);
	} else if (fl & ISA_F_VALU) {
		r.cls = TA_IC_VALU;
		r.unit = (uint8_t)((is_trans(nm) ? m->trans : m->valu) * wide);
		r.slots = (uint8_t)wide;
	} else if (fl & ISA_F_SMEM) {
		r.cls = TA_IC_SMEM;
		r.mem = TA_MEM_SMEM;
	} else if (fl & ISA_F_DS) {
		r.cls = TA_IC_LDS;
		if (op != ISA_DS_BPERMUTE_B32 && op != ISA_DS_PERMUTE_B32 && op != ISA_DS_SWIZZLE_B32)
			r.mem = (fl & ISA_F_LOAD) && !(fl & (ISA_F_ATOMIC | ISA_F_STORE)) ? TA_MEM_LDS_LOAD : TA_MEM_LDS_STORE;
	} else if (fl & (ISA_F_GLOBAL | ISA_F_MUBUF)) {
		r.cls = TA_IC_VMEM;
		IsaFmt f = isa_op_fmt(dev->target, op);
		if (!in->nops) /* buffer_gl0_inv / gl1_inv: no data */
			;
		else if (f == ISA_FMT_SCRATCH || f == ISA_FMT_MUBUF)
			r.mem = TA_MEM_SCRATCH;
		else
			r.mem = (fl & ISA_F_LOAD) && !(fl & (ISA_F_ATOMIC | ISA_F_STORE)) ? TA_MEM_GLOBAL_LOAD
											   : TA_MEM_GLOBAL_STORE;
	} else if (op == ISA_S_NOP) {
		r.cls = TA_IC_NOP;
		r.slots = (uint8_t)((in->nops ? (in->ops[0].imm & 15) : 0) + 1); /* k + 1 wait states */
	} else if (fl & (ISA_F_BRANCH | ISA_F_ENDPGM))
		r.cls = TA_IC_BRANCH;
	else if (op == ISA_S_WAITCNT || op == ISA_S_WAITCNT_VSCNT || op == ISA_S_WAITCNT_VMCNT ||
		 op == ISA_S_WAITCNT_LGKMCNT || op == ISA_S_WAITCNT_EXPCNT || op == ISA_S_BARRIER)
		r.cls = TA_IC_WAITCNT;
	else if (op == ISA_S_DELAY_ALU || op == ISA_S_CLAUSE || op == ISA_S_SETPRIO || op == ISA_S_SLEEP ||
		 op == ISA_S_SENDMSG || op == ISA_S_ICACHE_INV || op == ISA_S_WAITCNT_DEPCTR || op == ISA_S_CODE_END)
		r.cls = TA_IC_NOP;
	if (r.cls != TA_IC_VALU)
		r.unit = (uint8_t)(m->slot * r.slots);
	return r;
}

static int cmp_loop(const void *a, const void *b)
{
	const ta_profile_loop *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* Loops are backward branches; one per target (the farthest branch to it). */
static int find_loops(EmuProf *pr, const EmuKernel *k)
{
	for (int i = 0; i < k->ninsn; i++) {
		const IsaInsn *in = &k->insn[i];
		if (!(isa_ops[in->op].flags & ISA_F_BRANCH) || !in->nops || in->ops[0].kind == ISA_K_SGPR)
			continue;
		int64_t tgt = (int64_t)k->off[i] + k->len[i] + (int64_t)(int16_t)in->ops[0].imm * 4;
		if (tgt < 0 || tgt >= (int64_t)k->size || k->at[tgt / 4] < 0 || k->at[tgt / 4] > i)
			continue;
		int h = k->at[tgt / 4];
		if (pr->pi[h].head >= 0) {
			ta_profile_loop *l = &pr->loops[pr->pi[h].head];
			l->end = TA_MAX(l->end, k->off[i]);
			continue;
		}
		pr->pi[h].head = pr->nloops;
		pr->loops[pr->nloops++] = (ta_profile_loop){.begin = k->off[h], .end = k->off[i], .parent = -1};
	}
	qsort(pr->loops, (size_t)pr->nloops, sizeof *pr->loops, cmp_loop);
	/* Nesting by a stack of open loops (outer first in this order), then the
	 * innermost loop of each instruction (inner loops overwrite outer ones). */
	int *stack = malloc(sizeof(int) * (size_t)(pr->nloops + 1)), sp = 0;
	if (!stack)
		return -1;
	for (int i = 0; i < k->ninsn; i++)
		pr->pi[i].head = -1;
	for (int l = 0; l < pr->nloops; l++) {
		ta_profile_loop *lp = &pr->loops[l];
		while (sp && pr->loops[stack[sp - 1]].end < lp->begin)
			sp--;
		lp->parent = sp && pr->loops[stack[sp - 1]].end >= lp->end ? stack[sp - 1] : -1;
		stack[sp++] = l;
		int b = k->at[lp->begin / 4], e = k->at[lp->end / 4];
		pr->pi[b].head = l;
		pr->pi[e].tail = l;
		for (int i = b; i <= e; i++)
			pr->pi[i].loop = l;
	}
	free(stack);
	return 0;
}

int emu_prof_begin(EmuDevice *dev, int nv, int na, int sgprs, int threads)
{
	EmuProf *pr = dev->prof;
	const EmuKernel *k = dev->k;
	if (!pr) {
		if (!(pr = calloc(1, sizeof *pr)))
			return -1;
		dev->prof = pr;
	}
	pr->valid = 0;
	int lanes = ISA_IS_W64(dev->wt) ? 64 : 32;
	if (dev->g11)
		pr->m = (ProfModel){.slot = 1, .valu = 1, .trans = 4, .lat_vmem = 500, .lat_lds = 64, .lat_smem = 100,
				    .lds_units = 2, .vmem_lines = 2};
	else
		pr->m = (ProfModel){.slot = 4, .valu = 4, .trans = 16, .lat_vmem = 500, .lat_lds = 64, .lat_smem = 100,
				    .lds_units = 1, .vmem_lines = 1};
	if (pr->k != k || !pr->pi) {
		free(pr->pi);
		free(pr->loops);
		pr->pi = malloc(sizeof *pr->pi * (size_t)(k->ninsn + 1));
		pr->loops = malloc(sizeof *pr->loops * (size_t)(k->ninsn + 1));
		pr->k = NULL;
		if (!pr->pi || !pr->loops)
			return -1;
		for (int i = 0; i < k->ninsn; i++)
			pr->pi[i] = classify(dev, &pr->m, &k->insn[i], lanes);
		pr->nloops = 0;
		if (find_loops(pr, k))
			return -1;
		pr->k = k;
	}
	for (int l = 0; l < pr->nloops; l++) {
		ta_profile_loop *lp = &pr->loops[l];
		memset(&lp->c, 0, sizeof lp->c);
		memset(&lp->cu, 0, sizeof lp->cu);
		lp->trips = 0;
	}
	ta_profile *p = &pr->p;
	memset(p, 0, sizeof *p);
	snprintf(pr->target, sizeof pr->target, "%s", target_name(dev->target));
	p->kernel = k->name;
	p->target = pr->target;
	p->wave_size = lanes;
	OccInfo oi;
	occ_info(dev->wt, &oi);
	p->simds_per_cu = oi.simds_per_cu;
	const char *why = "max";
	p->waves_per_simd = occ_waves(dev->wt, dev->g11 ? nv : nv + na, 0, sgprs, (int)dev->lds_size, threads, &why);
	if (p->waves_per_simd < 1)
		p->waves_per_simd = 1;
	p->occupancy_limit = why;
	p->nloops = pr->nloops;
	p->loops = pr->loops;
	dev->prof_on = 1;
	return 0;
}

/* ---- per instruction ------------------------------------------------------ */

/* Bytes one lane moves for a memory instruction. */
static int lane_bytes(const EmuDevice *dev, const IsaInsn *in)
{
	const char *nm = op_name(dev, in->op);
	uint32_t fl = isa_ops[in->op].flags;
	const IsaOperand *vd = emu_op_role(dev, in, ISA_R_VD, 0), *dd = emu_op_role(dev, in, ISA_R_DD, 0),
			 *dd1 = emu_op_role(dev, in, ISA_R_DD, 1);
	int regs = (fl & ISA_F_STORE) || !vd ? (dd ? dd->count : 0) + (dd1 ? dd1->count : 0) : vd->count;
	if (fl & ISA_F_SMEM)
		return (in->nops ? in->ops[0].count : 1) * 4;
	if (name_has(nm, "byte") || name_has(nm, "_u8") || name_has(nm, "_i8") || name_has(nm, "_b8"))
		return 1;
	if (name_has(nm, "short") || name_has(nm, "_u16") || name_has(nm, "_i16") || name_has(nm, "_b16") ||
	    name_has(nm, "d16"))
		return 2;
	return regs * 4;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts and removes duplicates; returns the new count. */
static int uniq(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	int o = 0;
	for (int i = 0; i < n; i++)
		if (!o || v[o - 1] != v[i])
			v[o++] = v[i];
	return o;
}

/* LDS bank cycles of a DS instruction: 32 banks of 4 bytes serve 128 bytes
 * per cycle, so lanes go in groups of 128 / bytes-per-lane (at most 32); a
 * group takes as many cycles as the most distinct dwords falling in one
 * bank (the same dword is a broadcast).  *ideal: the conflict-free count. */
static int lds_cycles(const EmuDevice *dev, const EmuWave *w, const IsaInsn *in, int bytes, uint64_t ex, int *ideal)
{
	const IsaOperand *da = emu_op_role(dev, in, ISA_R_DA, 0);
	uint32_t fl = isa_ops[in->op].flags;
	*ideal = 0;
	if (!da || !ex)
		return 0;
	int two = (fl & ISA_F_DS2) != 0, esz = two ? bytes / 2 : bytes, st = 1;
	if (two && name_has(op_name(dev, in->op), "st64"))
		st = 64;
	int group = 128 / (bytes < 4 ? 4 : bytes);
	if (group > 32)
		group = 32;
	int cycles = 0;
	uint64_t dw[32 * 4 * 2];
	for (int g0 = 0; g0 < w->lanes; g0 += group) {
		int n = 0;
		for (int l = g0; l < g0 + group && l < w->lanes; l++) {
			if (!(ex >> l & 1))
				continue;
			uint64_t base = w->v[da->reg][l];
			for (int e = 0; e < (two ? 2 : 1); e++) {
				uint64_t a = base + (two ? (uint64_t)(e ? in->mod.offset1 : in->mod.offset0) * (uint64_t)esz *
								 (uint64_t)st
							 : (uint64_t)(uint32_t)in->mod.offset);
				for (int b = 0; b < (esz + 3) / 4 && n < (int)TA_ARRAY_LEN(dw); b++)
					dw[n++] = (a >> 2) + (uint64_t)b;
			}
		}
		if (!n)
			continue;
		n = uniq(dw, n);
		int bank[32] = {0}, worst = 0;
		for (int i = 0; i < n; i++) {
			int c = ++bank[dw[i] & 31];
			worst = c > worst ? c : worst;
		}
		cycles += worst;
		*ideal += (n + 31) / 32;
	}
	return cycles;
}

/* 64-byte lines a global access touches. */
static int vmem_lines(const EmuDevice *dev, const EmuWave *w, const IsaInsn *in, int bytes, uint64_t ex)
{
	const IsaOperand *fa = emu_op_role(dev, in, ISA_R_FA, 0), *fs = emu_op_role(dev, in, ISA_R_FS, 0);
	if (!fa || fa->kind != ISA_K_VGPR) /* scratch / buffer: lanes are contiguous */
		return (int)((__builtin_popcountll(ex) * (uint64_t)bytes + 63) / 64);
	uint64_t ln[128];
	int n = 0;
	for (int l = 0; l < w->lanes; l++) {
		if (!(ex >> l & 1))
			continue;
		uint64_t a;
		if (fs && fs->kind == ISA_K_SGPR)
			a = ((uint64_t)w->s[fs->reg] | (uint64_t)w->s[fs->reg + 1] << 32) + w->v[fa->reg][l];
		else
			a = (uint64_t)w->v[fa->reg][l] | (uint64_t)w->v[fa->reg + 1][l] << 32;
		a += (uint64_t)(int64_t)in->mod.offset;
		ln[n++] = a >> 6;
		if ((a + (uint64_t)bytes - 1) >> 6 != a >> 6)
			ln[n++] = (a + (uint64_t)bytes - 1) >> 6;
	}
	return n ? uniq(ln, n) : 0;
}

static ta_profile_counts *counts_of(EmuProf *pr, int insn)
{
	int l = pr->pi[insn].loop;
	return l >= 0 ? &pr->loops[l].c : &pr->p.c;
}

void emu_prof_pre(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	EmuProf *pr = dev->prof;
	const ProfInsn *pi = &pr->pi[insn];
	const ProfModel *m = &pr->m;
	ta_profile_counts *c = counts_of(pr, insn);
	if (pi->tail >= 0) /* once per iteration, whether the loop tests at the top or the bottom */
		pr->loops[pi->tail].trips++;
	w->pt0 = w->pt;
	c->insns[pi->cls]++;
	c->unit_cycles[pi->cls] += pi->unit;
	if (pi->cls == TA_IC_MMA) {
		if (w->mma_free > w->pt)
			w->pt = w->mma_free; /* the matrix pipe is still busy */
		w->mma_free = w->pt + pi->mma;
		c->mma_cycles += pi->mma;
	} else if (pi->cls == TA_IC_VALU && dev->g11 && w->mma_free > w->pt)
		w->pt = w->mma_free; /* RDNA3 WMMA runs on the VALU */
	w->pt += (uint64_t)pi->slots * (uint64_t)m->slot;
	if (pi->mem < 0 && pi->cls != TA_IC_LDS)
		return;
	uint64_t ex = emu_exec_mask(w);
	int bytes = pi->cls == TA_IC_LDS && pi->mem < 0 ? 4 : lane_bytes(dev, in);
	uint64_t extra = 0;
	if (pi->cls == TA_IC_SMEM) {
		c->bytes[TA_MEM_SMEM] += (uint64_t)bytes;
		w->mem_ready = w->pt + (uint64_t)m->lat_smem;
		return;
	}
	if (pi->mem >= 0)
		c->bytes[pi->mem] += (uint64_t)__builtin_popcountll(ex) * (uint64_t)bytes;
	if (pi->cls == TA_IC_LDS) {
		int ideal = 0, cyc;
		if (pi->mem < 0) /* permute/swizzle: the crossbar, 32 lanes per cycle */
			cyc = ideal = ex ? (w->lanes + 31) / 32 : 0;
		else
			cyc = lds_cycles(dev, w, in, bytes, ex, &ideal);
		c->lds_cycles += (uint64_t)cyc;
		c->lds_conflict_cycles += (uint64_t)(cyc - ideal);
		extra = (uint64_t)cyc;
		w->mem_ready = w->pt + (uint64_t)m->lat_lds + extra;
	} else {
		int lines = vmem_lines(dev, w, in, bytes, ex);
		c->vmem_lines += (uint64_t)lines;
		w->mem_ready = w->pt + (uint64_t)m->lat_vmem + (uint64_t)lines;
	}
}

void emu_prof_post(EmuDevice *dev, EmuWave *w, int insn)
{
	EmuProf *pr = dev->prof;
	const ProfInsn *pi = &pr->pi[insn];
	ta_profile_counts *c = counts_of(pr, insn);
	uint64_t d = w->pt - w->pt0, issue = (uint64_t)pi->slots * (uint64_t)pr->m.slot;
	c->cycles += d;
	c->stall_cycles += d > issue ? d - issue : 0;
}

void emu_prof_barrier(EmuDevice *dev, EmuWave *waves, int nw)
{
	EmuProf *pr = dev->prof;
	uint64_t t = 0;
	for (int i = 0; i < nw; i++)
		if (!waves[i].done && waves[i].pt > t)
			t = waves[i].pt;
	for (int i = 0; i < nw; i++) {
		EmuWave *w = &waves[i];
		if (w->done || !w->at_barrier || w->pt >= t || w->pc <= 0)
			continue;
		ta_profile_counts *c = counts_of(pr, w->pc - 1);
		c->cycles += t - w->pt;
		c->stall_cycles += t - w->pt;
		w->pt = t;
	}
}

/* ---- results -------------------------------------------------------------- */

static void add_counts(ta_profile_counts *to, const ta_profile_counts *c)
{
	for (int i = 0; i < TA_IC_COUNT; i++)
		to->insns[i] += c->insns[i], to->unit_cycles[i] += c->unit_cycles[i];
	for (int i = 0; i < TA_MEM_COUNT; i++)
		to->bytes[i] += c->bytes[i];
	to->vmem_lines += c->vmem_lines;
	to->lds_cycles += c->lds_cycles;
	to->lds_conflict_cycles += c->lds_conflict_cycles;
	to->mma_cycles += c->mma_cycles;
	to->stall_cycles += c->stall_cycles;
	to->cycles += c->cycles;
}

/* One CU with R waves per SIMD on each of S SIMDs, each wave doing the mean
 * of the counts: the busiest resource sets the time. */
static void cu_bound(const EmuProf *pr, const ta_profile_counts *c, ta_profile_bound *b)
{
	const ta_profile *p = &pr->p;
	double nw = p->waves ? (double)p->waves : 1, R = p->waves_per_simd, S = p->simds_per_cu;
	const uint64_t *u = c->unit_cycles;
	/* Issue units: VALU (with the MFMA issue; RDNA3 WMMA occupies it), scalar
	 * (SALU + SMEM), vector memory, LDS, branch.  s_waitcnt / s_nop are
	 * handled in the instruction buffer and take no unit. */
	double valu = (double)(u[TA_IC_VALU] + u[TA_IC_MMA]) + (pr->m.slot == 1 ? (double)c->mma_cycles : 0);
	double units[] = {valu, (double)(u[TA_IC_SALU] + u[TA_IC_SMEM]), (double)u[TA_IC_VMEM], (double)u[TA_IC_LDS],
			  (double)u[TA_IC_BRANCH]};
	double issue = 0;
	for (size_t i = 0; i < TA_ARRAY_LEN(units); i++)
		issue = units[i] > issue ? units[i] : issue;
	memset(b, 0, sizeof *b);
	b->bound[TA_LIMIT_ISSUE] = R * issue / nw;
	b->bound[TA_LIMIT_MMA] = pr->m.slot == 1 ? 0 : R * (double)c->mma_cycles / nw;
	b->bound[TA_LIMIT_LDS] = R * S * (double)c->lds_cycles / nw / pr->m.lds_units;
	b->bound[TA_LIMIT_MEMORY] = R * S * (double)c->vmem_lines / nw / pr->m.vmem_lines;
	double lat = (double)c->cycles / nw;
	int occ_limited = strcmp(p->occupancy_limit, "max") != 0;
	b->bound[occ_limited ? TA_LIMIT_OCCUPANCY : TA_LIMIT_LATENCY] = lat;
	b->limiter = TA_LIMIT_ISSUE;
	for (int i = 0; i < TA_LIMIT_COUNT; i++)
		if (b->bound[i] > b->bound[b->limiter])
			b->limiter = (ta_limiter)i;
	b->cycles = b->bound[b->limiter];
	b->cycles_per_wave = b->cycles / (R * S);
	b->mma_utilisation = b->cycles > 0 ? R * (double)c->mma_cycles / nw / b->cycles : 0;
}

void emu_prof_end(EmuDevice *dev, int ok, uint64_t waves, uint64_t workgroups)
{
	EmuProf *pr = dev->prof;
	dev->prof_on = 0;
	if (!pr)
		return;
	ta_profile *p = &pr->p;
	p->waves = waves;
	p->workgroups = workgroups;
	pr->valid = ok;
	if (!ok)
		return;
	/* Loops hold their own instructions so far: fold them into their
	 * parents (inner loops come after outer ones), then into the kernel. */
	for (int l = pr->nloops - 1; l >= 0; l--) {
		ta_profile_loop *lp = &pr->loops[l];
		add_counts(lp->parent >= 0 ? &pr->loops[lp->parent].c : &p->c, &lp->c);
	}
	p->wave_cycles = p->waves ? (double)p->c.cycles / (double)p->waves : 0;
	cu_bound(pr, &p->c, &p->cu);
	for (int l = 0; l < pr->nloops; l++)
		cu_bound(pr, &pr->loops[l].c, &pr->loops[l].cu);
}

/* ---- text ----------------------------------------------------------------- */

TA_API const char *ta_insn_class_name(ta_insn_class c)
{
	static const char *const n[] = {"SALU", "VALU", "VMEM", "SMEM", "LDS", "MMA", "branch", "waitcnt", "nop"};
	return (unsigned)c < TA_ARRAY_LEN(n) ? n[c] : "?";
}

TA_API const char *ta_limiter_name(ta_limiter l)
{
	static const char *const n[] = {"issue", "MFMA/WMMA pipe", "LDS", "memory", "memory latency", "occupancy"};
	return (unsigned)l < TA_ARRAY_LEN(n) ? n[l] : "?";
}

static void fmt_counts(StrBuf *sb, const char *ind, const ta_profile_counts *c, double per)
{
	uint64_t tot = 0;
	for (int i = 0; i < TA_IC_COUNT; i++)
		tot += c->insns[i];
	sb_printf(sb, "%sinstructions %.1f:", ind, (double)tot / per);
	for (int i = 0; i < TA_IC_COUNT; i++)
		if (c->insns[i])
			sb_printf(sb, " %s %.1f", ta_insn_class_name((ta_insn_class)i), (double)c->insns[i] / per);
	sb_putc(sb, '\n');
	static const char *const mn[] = {"global load", "global store", "LDS load", "LDS store", "SMEM", "scratch"};
	int any = 0;
	for (int i = 0; i < TA_MEM_COUNT; i++)
		if (c->bytes[i]) {
			sb_printf(sb, "%s%s%s %.0f", any ? ", " : ind, any ? "" : "bytes: ", mn[i], (double)c->bytes[i] / per);
			any = 1;
		}
	if (any)
		sb_printf(sb, "; 64-byte lines %.1f\n", (double)c->vmem_lines / per);
	if (c->lds_cycles)
		sb_printf(sb, "%sLDS bank cycles %.1f, of which conflicts %.1f\n", ind, (double)c->lds_cycles / per,
			  (double)c->lds_conflict_cycles / per);
	sb_printf(sb, "%smodel cycles %.1f (stalls %.1f), MFMA/WMMA pipe %.1f\n", ind, (double)c->cycles / per,
		  (double)c->stall_cycles / per, (double)c->mma_cycles / per);
}

static void fmt_bound(StrBuf *sb, const char *ind, const ta_profile_bound *b, double per)
{
	sb_printf(sb, "%sper CU: %.1f cycles (%.1f per wave), limiter %s; issue %.1f, MFMA/WMMA %.1f, LDS %.1f, memory %.1f, "
		  "latency %.1f; MFMA/WMMA utilisation %.1f%%\n",
		  ind, b->cycles / per, b->cycles_per_wave / per, ta_limiter_name(b->limiter), b->bound[TA_LIMIT_ISSUE] / per,
		  b->bound[TA_LIMIT_MMA] / per, b->bound[TA_LIMIT_LDS] / per, b->bound[TA_LIMIT_MEMORY] / per,
		  (b->bound[TA_LIMIT_LATENCY] + b->bound[TA_LIMIT_OCCUPANCY]) / per, 100.0 * b->mma_utilisation);
}

char *emu_profile_format(const ta_profile *p)
{
	StrBuf sb = {0};
	double nw = p->waves ? (double)p->waves : 1;
	sb_printf(&sb, "profile: kernel %s on %s (wave%d), %llu workgroups, %llu waves; %d waves/SIMD x %d SIMDs "
		  "(limit: %s)\n",
		  p->kernel, p->target, p->wave_size, (unsigned long long)p->workgroups, (unsigned long long)p->waves,
		  p->waves_per_simd, p->simds_per_cu, p->occupancy_limit);
	sb_puts(&sb, "  per wave:\n");
	fmt_counts(&sb, "    ", &p->c, nw);
	fmt_bound(&sb, "    ", &p->cu, 1);
	for (int l = 0; l < p->nloops; l++) {
		const ta_profile_loop *lp = &p->loops[l];
		int depth = 0;
		for (int q = lp->parent; q >= 0; q = p->loops[q].parent)
			depth++;
		double per = lp->trips ? (double)lp->trips : 1;
		sb_printf(&sb, "  loop %d (+0x%x..+0x%x, depth %d): %.1f trips per wave; per trip per wave:\n", l, lp->begin,
			  lp->end, depth, (double)lp->trips / nw);
		fmt_counts(&sb, "    ", &lp->c, per);
		fmt_bound(&sb, "    ", &lp->cu, per / nw);
	}
	return sb_take(&sb);
}
