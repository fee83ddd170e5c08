/* validate.c — an independent check of a register assignment.
 *
 * It does not trust liveness or intervals: it simulates, per physical
 * register dword, which (vreg, dword) value it holds, forward along every
 * CFG path (meet at joins: equal values stay, different ones become
 * "conflict"), and requires every virtual read to find its own value.  Two
 * live values sharing a register show up as a read that finds the other
 * value.  Copies move values; physical writes clobber. */
#include "regalloc.h"

#include <stdlib.h>

enum { NREG = 256 };
/* UNDEF: never written on this path.  A read of it is the program reading
 * an undefined value (possible in SIMT code written under partial exec
 * masks), not an allocation error, so UNDEF meets a value as that value.
 * CLOBBER: overwritten by a physical write; reading it is an error. */
enum { H_CLOBBER = -4, H_UNSEEN = -3, H_CONFLICT = -2, H_UNDEF = -1 };

/* Slots cover only the registers the function can touch: [base[c],
 * base[c] + n[c]) per file, so the per-block copies and the meets at
 * joins scale with the registers in use, not with the 768 of the files.
 * A register never touched would only ever meet UNDEF/UNSEEN and is never
 * read, so leaving it out changes no verdict. */
typedef struct {
	int base[MR_NCLASS + 1]; /* base[MR_NCLASS]: total slots */
} Slots;

static int slot(const Slots *sl, int cls, int reg)
{
	return sl->base[cls] + reg;
}

static int32_t holder(int v, int sub)
{
	return v * 16 + sub;
}

static int32_t meet(int32_t a, int32_t b)
{
	if (a == H_UNSEEN)
		return b;
	if (b == H_UNSEEN || a == b || b == H_UNDEF)
		return a;
	if (a == H_UNDEF)
		return b;
	return H_CONFLICT;
}

/* Runs one block from state st (modified).  check: CK_NONE, CK_STOP (the
 * first wrong read ends the run with -1 and a message in err) or CK_NOTE
 * (the run goes on to the end, then returns -1 if some read was wrong).
 * An operand without a register always ends the run with -1. */
enum { CK_NONE, CK_STOP, CK_NOTE };
static int run_block(const MFunc *f, const int16_t *phys, const Slots *sl, int b, int32_t *st, StrBuf *err,
		     int check)
{
	const MBlock *bl = &f->blocks.data[b];
	int wrong = 0;
	for (int i = bl->first; i < bl->last; i++) {
		const MInst *mi = &f->insns.data[i];
		/* Reads first (a copy's sources before its destinations); only
		 * virtual operands name a value to check. */
		for (unsigned vm = mi->vmask; vm; vm &= vm - 1) {
			int k = __builtin_ctz(vm);
			const IsaOperand *o = &mi->in.ops[k];
			int cls = mir_kind_cls(o->kind);
			if (cls < 0 || !mi_is_use(mi, k))
				continue;
			int v = mi->vr[k];
			if (phys[v] < 0) {
				if (err)
					sb_printf(err, "insn %d: %%%d has no register", i, v);
				return -1;
			}
			if (phys[v] + mi->sub[k] + o->count > NREG) {
				if (err)
					sb_printf(err, "insn %d: %%%d is assigned past %c%d", i, v, "sva"[cls], NREG - 1);
				return -1;
			}
			if (!check)
				continue;
			/* A partial/tied def reads its old value, which may be
			 * undefined on the first write: only check real reads. */
			bool soft = mi_is_def(mi, k);
			const int32_t *at = st + slot(sl, cls, phys[v] + mi->sub[k]);
			for (int j = 0; j < o->count; j++) {
				int r = phys[v] + mi->sub[k] + j;
				int32_t want = holder(v, mi->sub[k] + j), got = at[j];
				if (got != want && got != H_UNDEF && got != H_UNSEEN && !(soft && got < 0)) {
					wrong = 1;
					if (check == CK_NOTE)
						continue;
					if (err) {
						sb_printf(err, "insn %d: operand %d reads %%%d[%d] from %c%d, which holds ", i,
							  k, v, mi->sub[k] + j, "sva"[cls], r);
						if (got >= 0)
							sb_printf(err, "%%%d[%d]", got / 16, got % 16);
						else
							sb_puts(err, got == H_CONFLICT ? "different values on different paths"
											 : "a clobbered value");
					}
					return -1;
				}
			}
		}
		/* A copy's destination holds the destination vreg's value:
		 * values are named by vreg, not by content. */
		for (int k = 0; k < mi->ndef && k < mi->in.nops; k++) {
			const IsaOperand *o = &mi->in.ops[k];
			int cls = mir_kind_cls(o->kind);
			if (cls < 0)
				continue;
			if (mi->vmask & (1u << k)) {
				int r = phys[mi->vr[k]] + mi->sub[k];
				int32_t val = holder(mi->vr[k], mi->sub[k]);
				for (int j = 0; j < o->count; j++)
					if (r + j >= 0 && r + j < NREG)
						st[slot(sl, cls, r + j)] = val + j;
			} else {
				for (int j = 0; j < o->count; j++)
					if (o->reg + j < NREG)
						st[slot(sl, cls, o->reg + j)] = H_CLOBBER;
			}
		}
	}
	return wrong ? -1 : 0;
}

/* p[0..n) = v, by doubling copies (memcpy's speed, not one store per slot). */
static void fill32(int32_t *p, size_t n, int32_t v)
{
	if (!n)
		return;
	p[0] = v;
	for (size_t have = 1; have < n;) {
		size_t c = TA_MIN(have, n - have);
		memcpy(p + have, p, sizeof(int32_t) * c);
		have += c;
	}
}

int ra_validate(const MFunc *f, const int16_t *phys, StrBuf *err)
{
	int nb = (int)f->blocks.len;
	if (!nb)
		return 0;
	for (size_t v = 0; v < f->vregs.len; v++)
		if (f->vregs.data[v].size > 16) {
			if (err)
				sb_printf(err, "vreg %zu wider than 16 dwords", v);
			return -1;
		}
	/* Highest register + 1 per file over every operand, virtual (its
	 * assigned range) or physical. */
	int top[MR_NCLASS] = {0};
	for (size_t i = 0; i < f->insns.len; i++) {
		const MInst *mi = &f->insns.data[i];
		for (int k = 0; k < mi->in.nops; k++) {
			const IsaOperand *o = &mi->in.ops[k];
			int cls = mir_kind_cls(o->kind), hi;
			if (cls < 0)
				continue;
			if (mi->vmask & (1u << k)) {
				int p = phys[mi->vr[k]];
				if (p < 0)
					continue; /* reported by run_block */
				hi = p + mi->sub[k] + o->count;
			} else {
				hi = o->reg + o->count;
			}
			top[cls] = TA_MAX(top[cls], TA_MIN(hi, NREG));
		}
	}
	Slots sl;
	sl.base[0] = 0;
	for (int c = 0; c < MR_NCLASS; c++)
		sl.base[c + 1] = sl.base[c] + top[c];
	const int nslot = sl.base[MR_NCLASS], ns = sl.base[MR_V];
	int32_t *in = malloc(sizeof(int32_t) * ((size_t)nslot * nb + 1)), *cur = malloc(sizeof(int32_t) * (nslot + 1));
	char *inwork = calloc((size_t)nb, 1), *recheck = malloc((size_t)nb);
	char *merged = calloc((size_t)nb, 1); /* in[] of the block met some state (else all UNSEEN) */
	int *work = malloc(sizeof(int) * ((size_t)nb + 1));
	int rc = -1;
	if (!in || !cur || !inwork || !recheck || !work || !merged)
		goto out;
	fill32(in, (size_t)nslot * nb, H_UNSEEN);
	for (int s = 0; s < nslot; s++)
		in[s] = H_UNDEF;
	merged[0] = 1;
	/* Blocks whose entry state changed, lowest id first: a loop settles
	 * before the code after it runs (a layout-order sweep would run that
	 * code once per trip around the loop, and a LIFO worklist could
	 * revisit blocks many times on long chains).  The lattice has height
	 * 3; any order reaches the same fixed point. */
	int nw = 0;
	mir_work_push(work, &nw, 0), inwork[0] = 1;
	memset(recheck, 1, (size_t)nb);
	while (nw) {
		int b = mir_work_pop(work, &nw);
		inwork[b] = 0;
		memcpy(cur, in + (size_t)b * nslot, sizeof(int32_t) * nslot);
		recheck[b] = run_block(f, phys, &sl, b, cur, NULL, CK_NOTE) != 0;
		for (int s = 0; s < 3; s++) {
			int t = f->blocks.data[b].succ[s];
			if (t < 0)
				continue;
			int32_t *ti = in + (size_t)t * nslot;
			int changed = 0, k0 = s == 2 ? ns : 0;
			/* succ[2]: parked lanes resume there; only their VGPR/AGPR
			 * values travel along it.  The first state to arrive is
			 * copied; later equal ones (a loop's next trip, a settled
			 * join) change nothing: one memcmp. */
			if (!merged[t]) { /* UNSEEN meets x as x: a copy */
				merged[t] = 1;
				memcpy(ti + k0, cur + k0, sizeof(int32_t) * (size_t)(nslot - k0));
				for (int k = k0; k < nslot && !changed; k++)
					changed = cur[k] != H_UNSEEN;
			} else if (memcmp(ti + k0, cur + k0, sizeof(int32_t) * (size_t)(nslot - k0))) {
				for (int k = k0; k < nslot; k++) {
					if (ti[k] == cur[k]) /* the common case once a block was seen */
						continue;
					int32_t m = meet(ti[k], cur[k]);
					if (m != ti[k])
						ti[k] = m, changed = 1;
				}
			}
			if (changed && !inwork[t])
				mir_work_push(work, &nw, t), inwork[t] = 1;
		}
	}
	/* The verdict counts only runs from the final states (during the
	 * iteration a block may run before all its predecessors have been
	 * seen).  A block's last run above had its final state (a change would
	 * have queued it again), so only blocks whose last run found a wrong
	 * read, or that never ran, run again, in order, for the first message. */
	for (int b = 0; b < nb; b++) {
		if (!recheck[b])
			continue;
		memcpy(cur, in + (size_t)b * nslot, sizeof(int32_t) * nslot);
		if (run_block(f, phys, &sl, b, cur, err, CK_STOP))
			goto out;
	}
	rc = 0;
out:
	free(in), free(cur), free(inwork), free(recheck), free(work), free(merged);
	return rc;
}
