/* emu_mem.c — memory (part of the emulator's instruction semantics). */
#include "emu_exec_impl.h"

/* ---- memory ------------------------------------------------------------- */

/* Per-op memory shape: bytes per element, elements (dwords), sign, d16 half. */
typedef struct {
	uint8_t bytes, dwords, sign, d16; /* d16: 1 low, 2 high */
} MemShape;

static MemShape mem_shape(unsigned op, int ndst)
{
	MemShape s = {4, (uint8_t)(ndst ? ndst : 1), 0, 0};
	const char *n = isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2] ? isa_ops[op].name[2] : "";
	if (strstr(n, "byte") || strstr(n, "_u8") || strstr(n, "_i8") || strstr(n, "_b8"))
		s.bytes = 1, s.dwords = 1;
	else if (strstr(n, "short") || strstr(n, "_u16") || strstr(n, "_i16") || strstr(n, "_b16"))
		s.bytes = 2, s.dwords = 1;
	if (strstr(n, "sbyte") || strstr(n, "sshort") || strstr(n, "_i8") || strstr(n, "_i16"))
		s.sign = 1;
	if (strstr(n, "d16"))
		s.d16 = strstr(n, "d16_hi") ? 2 : 1;
	return s;
}

static uint32_t ld_elem(const uint8_t *p, MemShape s)
{
	uint32_t v = 0;
	memcpy(&v, p, s.bytes);
	if (s.sign)
		v = (uint32_t)sext(v, 8 * s.bytes);
	return v;
}

/* Atomic read-modify-write on 32/64-bit memory; returns the old value. */
static uint64_t atomic_rmw(unsigned op, uint8_t *p, uint64_t v, uint64_t cmp, int b64)
{
	uint64_t old = 0;
	memcpy(&old, p, b64 ? 8 : 4);
	uint64_t nv = old;
	const char *n = isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2];
	int32_t so = (int32_t)old, sv = (int32_t)v;
	if (strstr(n, "cmpswap") || strstr(n, "cmpst")) /* global cmpswap, ds_cmpst / ds_cmpstore */
		nv = old == cmp ? v : old;
	else if (strstr(n, "add_f32")) {
		float f = emu_f((uint32_t)old) + emu_f((uint32_t)v);
		nv = emu_u(f);
	} else if (strstr(n, "pk_add_f16"))
		nv = d2h(h2d((uint32_t)old) + h2d((uint32_t)v)) | d2h(h2d((uint32_t)old >> 16) + h2d((uint32_t)v >> 16)) << 16;
	else if (strstr(n, "min_f32"))
		nv = emu_u(fminf(emu_f((uint32_t)old), emu_f((uint32_t)v)));
	else if (strstr(n, "max_f32"))
		nv = emu_u(fmaxf(emu_f((uint32_t)old), emu_f((uint32_t)v)));
	else if (strstr(n, "rsub"))
		nv = v - old;
	else if (strstr(n, "add"))
		nv = old + v;
	else if (strstr(n, "sub"))
		nv = old - v;
	else if (strstr(n, "smax") || strstr(n, "max_i"))
		nv = b64 ? (uint64_t)TA_MAX((int64_t)old, (int64_t)v) : (uint32_t)TA_MAX(so, sv);
	else if (strstr(n, "smin") || strstr(n, "min_i"))
		nv = b64 ? (uint64_t)TA_MIN((int64_t)old, (int64_t)v) : (uint32_t)TA_MIN(so, sv);
	else if (strstr(n, "umax") || strstr(n, "max_u"))
		nv = TA_MAX(old, v);
	else if (strstr(n, "umin") || strstr(n, "min_u"))
		nv = TA_MIN(old, v);
	else if (strstr(n, "and"))
		nv = old & v;
	else if (strstr(n, "xor"))
		nv = old ^ v;
	else if (strstr(n, "or"))
		nv = old | v;
	else if (strstr(n, "swap") || strstr(n, "wrxchg"))
		nv = v;
	else if (strstr(n, "inc"))
		nv = old >= v ? 0 : old + 1;
	else if (strstr(n, "dec"))
		nv = old == 0 || old > v ? v : old - 1;
	memcpy(p, &nv, b64 ? 8 : 4);
	return old;
}

/* Data registers may be AGPRs (gfx90a/gfx942 acc forms). */
#define VREG(o, i) emu_vreg(w, (o)->kind == ISA_K_AGPR, (o)->reg + (i))
#define FILE(o) ((o)->kind == ISA_K_AGPR ? 'a' : 'v')

/* Finds operands by role. */
static const IsaOperand *op_role(const EmuDevice *dev, const IsaInsn *in, int role, int nth)
{
	uint16_t sig[ISA_MAX_SIG];
	int n = isa_sig(dev->wt, in->op, sig);
	for (int j = 0; j < n && j < in->nops; j++)
		if (ISA_SIG_ROLE(sig[j]) == role && nth-- == 0)
			return &in->ops[j];
	return NULL;
}

const IsaOperand *emu_op_role(const EmuDevice *dev, const IsaInsn *in, int role, int nth)
{
	return op_role(dev, in, role, nth);
}

/* Scratch for load results: per thread, so devices may run in several threads. */
static _Thread_local uint32_t tmp_data[16 * 64];

int exec_smem(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	const IsaOperand *sd = &in->ops[0], *sb = &in->ops[1], *so = &in->ops[2];
	dev->stats.smem++;
	uint64_t base = (uint64_t)w->s[sb->reg] | (uint64_t)w->s[sb->reg + 1] << 32;
	if (sb->count == 4) /* buffer descriptor: 48-bit base */
		base &= 0xffffffffffffull;
	uint64_t off = so->kind == ISA_K_IMM ? (uint64_t)(int64_t)so->imm : scalar_val(w, so, ISA_TY_B32, 0);
	uint64_t addr = (base + off) & ~3ull;
	int n = sd->count;
	if (sb->count == 4) {
		/* s_buffer_load: reads past num_records return 0. */
		uint32_t nrec = w->s[sb->reg + 2];
		for (int i = 0; i < n; i++) {
			uint64_t o = off + 4ull * (uint64_t)i;
			const uint8_t *p = o + 4 <= nrec ? emu_gmem(dev, w, insn, addr + 4ull * (uint64_t)i, 4, 0) : NULL;
			if (dev->failed)
				return -1;
			tmp_data[i] = 0;
			if (p)
				memcpy(&tmp_data[i], p, 4);
		}
	} else {
		const uint8_t *p = emu_gmem(dev, w, insn, addr, (size_t)n * 4, 0);
		if (!p)
			return -1;
		memcpy(tmp_data, p, (size_t)n * 4);
	}
	int reg = sd->kind == ISA_K_SGPR ? sd->reg : special_sreg(sd->reg);
	if (reg < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (w->spend[reg + i] && (dev->checks & EMU_CHECK_WAITCNT)) {
			emu_fail(dev, w, insn, "overwrites s%d while a load into it is still pending", reg + i);
			return -1;
		}
	return emu_pend(dev, w, 1, 1, 's', reg, n, 0, tmp_data, 0, insn);
}

/* Scratch (private segment): scratch_* on gfx942/gfx1100, where the
 * hardware has set FLAT_SCRATCH to the wave's area (w->scratch_base), and
 * MUBUF through a swizzled V# (ADD_TID_ENABLE: gfx90a's private segment
 * buffer, base + wave offset).  Both interleave the lanes' dwords: byte o of
 * lane l's private memory is at (o / 4 * L + l) * 4 + o % 4 in the wave's
 * area, L = the V#'s index stride (64) or the wave size.  Dword accesses
 * only; a per-lane offset outside the kernel's PRIVATE_SEGMENT_FIXED_SIZE is
 * an error (as is any access outside the scratch buffer itself). */
static int exec_private(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in, int mubuf)
{
	unsigned op = in->op;
	uint32_t fl = isa_ops[op].flags;
	const IsaOperand *vd = op_role(dev, in, ISA_R_VD, 0), *dd = op_role(dev, in, ISA_R_DD, 0), *va;
	int n = vd ? vd->count : dd ? dd->count : 1;
	if (mem_shape(op, n).bytes != 4 || (fl & ISA_F_ATOMIC) || in->mod.idxen || n > 4) {
		emu_fail(dev, w, insn, "only dword loads and stores of scratch are emulated");
		return -1;
	}
	uint64_t ex = emu_exec_mask(w), base;
	int64_t lane_off = 0;
	int stride, use_va;
	if (mubuf) {
		const IsaOperand *rs = op_role(dev, in, ISA_R_RSRC, 0), *so = op_role(dev, in, ISA_R_MSO, 0);
		va = op_role(dev, in, ISA_R_MVA, 0);
		use_va = in->mod.offen;
		base = (uint64_t)w->s[rs->reg] | (uint64_t)(w->s[rs->reg + 1] & 0xffff) << 32;
		stride = 8 << (w->s[rs->reg + 3] >> 21 & 3);
		base += so ? scalar_val(w, so, ISA_TY_B32, 0) : 0; /* the wave offset */
	} else {
		const IsaOperand *xs = op_role(dev, in, ISA_R_XS, 0);
		va = op_role(dev, in, ISA_R_XA, 0);
		use_va = va && va->kind == ISA_K_VGPR;
		base = w->scratch_base;
		stride = w->lanes;
		if (!base) {
			emu_fail(dev, w, insn, "scratch access, but the descriptor does not enable the private segment");
			return -1;
		}
		if (xs && xs->kind == ISA_K_SGPR)
			lane_off = (int32_t)w->s[xs->reg];
	}
	dev->stats.vmem++;
	int load = (fl & ISA_F_LOAD) != 0;
	if (load)
		memset(tmp_data, 0, sizeof(uint32_t) * 64 * (size_t)n);
	for (int l = 0; l < w->lanes; l++) {
		if (!(ex >> l & 1))
			continue;
		int64_t o = in->mod.offset + lane_off + (use_va ? (int64_t)(int32_t)w->v[va->reg][l] : 0);
		if (o < 0 || o % 4 || o + 4 * n > (int64_t)dev->priv_size) {
			emu_fail(dev, w, insn, "lane %d: scratch access of %d bytes at offset %lld is outside the private "
				 "segment (%u bytes per work-item)", l, 4 * n, (long long)o, dev->priv_size);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			uint64_t addr = base + ((uint64_t)(o / 4 + i) * (uint64_t)stride + (uint64_t)l) * 4;
			uint8_t *p = emu_gmem(dev, w, insn, addr, 4, !load);
			if (!p)
				return -1;
			uint8_t *init = addr - dev->scr_base < dev->scr_size ? &dev->scr_init[(addr - dev->scr_base) / 4] : NULL;
			if (load && init && !*init && (dev->checks & EMU_CHECK_UNINIT)) {
				emu_fail(dev, w, insn, "lane %d reads scratch offset %lld, which nothing has written", l,
					 (long long)(o + 4 * i));
				return -1;
			}
			if (init && !load)
				*init = 1;
			if (load)
				memcpy(&tmp_data[i * 64 + l], p, 4);
			else
				memcpy(p, &VREG(dd, i)[l], 4);
		}
	}
	if (load)
		return emu_pend(dev, w, 0, 0, FILE(vd), vd->reg, n, ex, tmp_data, 0, insn);
	return emu_pend(dev, w, dev->g11 ? 2 : 0, 0, 0, 0, 0, 0, NULL, 0, insn);
}

/* Global and buffer memory.  Loads read memory at issue and deliver at the
 * covering s_waitcnt; stores and atomics update memory at issue. */
int exec_vmem(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	unsigned op = in->op;
	uint32_t fl = isa_ops[op].flags;
	int L = w->lanes;
	uint64_t ex = emu_exec_mask(w);
	const IsaOperand *vd = op_role(dev, in, ISA_R_VD, 0), *dd = op_role(dev, in, ISA_R_DD, 0);
	MemShape sh = mem_shape(op, vd ? vd->count : dd ? dd->count : 1);
	int atomic = (fl & ISA_F_ATOMIC) != 0, rtn = vd != NULL && atomic;
	int b64 = atomic && dd && (dd->count == 2 || dd->count == 4) && !strstr(isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2], "cmpswap") ? 1
		: atomic && dd && dd->count == 4;
	int cmpswap = atomic && strstr(isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2], "cmpswap") != NULL;
	if (cmpswap)
		b64 = dd->count == 4;
	uint64_t addr[64];
	if (isa_op_fmt(dev->wt, op) == ISA_FMT_SCRATCH)
		return exec_private(dev, w, insn, in, 0);
	if ((fl & ISA_F_MUBUF) && (w->s[op_role(dev, in, ISA_R_RSRC, 0)->reg + 3] >> 23 & 1))
		return exec_private(dev, w, insn, in, 1); /* ADD_TID_ENABLE: a scratch V# */
	dev->stats.vmem++;
	if (fl & ISA_F_GLOBAL) {
		const IsaOperand *fa = op_role(dev, in, ISA_R_FA, 0), *fs = op_role(dev, in, ISA_R_FS, 0);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			if (fs && fs->kind == ISA_K_SGPR)
				addr[l] = ((uint64_t)w->s[fs->reg] | (uint64_t)w->s[fs->reg + 1] << 32) + w->v[fa->reg][l];
			else
				addr[l] = (uint64_t)w->v[fa->reg][l] | (uint64_t)w->v[fa->reg + 1][l] << 32;
			addr[l] += (uint64_t)(int64_t)in->mod.offset;
		}
	} else {
		/* MUBUF: V# base, stride, num_records; out-of-range accesses
		 * return 0 and drop writes (raw buffer bounds check). */
		const IsaOperand *va = op_role(dev, in, ISA_R_MVA, 0), *rs = op_role(dev, in, ISA_R_RSRC, 0),
				 *so = op_role(dev, in, ISA_R_MSO, 0);
		uint64_t base = ((uint64_t)w->s[rs->reg] | (uint64_t)(w->s[rs->reg + 1] & 0xffff) << 32);
		uint32_t stride = w->s[rs->reg + 1] >> 16 & 0x3fff, nrec = w->s[rs->reg + 2];
		uint32_t soff = so ? (uint32_t)scalar_val(w, so, ISA_TY_B32, 0) : 0;
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint64_t off = (uint64_t)in->mod.offset, idx = 0;
			if (in->mod.idxen)
				idx = w->v[va->reg][l];
			if (in->mod.offen)
				off += w->v[va->reg + (in->mod.idxen ? 1 : 0)][l];
			uint64_t range_off = off + idx * stride;
			uint64_t bytes = (uint64_t)sh.bytes * sh.dwords;
			addr[l] = range_off + bytes > nrec ? ~0ull : base + soff + range_off;
		}
	}
	int n = sh.dwords;
	size_t bytes = (size_t)sh.bytes * (sh.bytes == 4 ? (size_t)n : 1);
	if ((fl & ISA_F_LOAD) && !atomic) {
		memset(tmp_data, 0, sizeof(uint32_t) * 64 * (size_t)n);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			if (addr[l] == ~0ull)
				continue;
			const uint8_t *p = emu_gmem(dev, w, insn, addr[l], bytes, 0);
			if (!p)
				return -1;
			for (int i = 0; i < n; i++)
				tmp_data[i * 64 + l] = sh.bytes == 4 ? ld_elem(p + 4 * i, sh) : ld_elem(p, sh);
		}
		return emu_pend(dev, w, 0, 0, FILE(vd), vd->reg, n, ex, tmp_data, sh.d16, insn);
	}
	/* Stores and atomics. */
	int nd = dd ? dd->count : 0;
	for (int l = 0; l < L; l++) {
		if (!(ex >> l & 1) || addr[l] == ~0ull)
			continue;
		if (atomic) {
			uint8_t *p = emu_gmem(dev, w, insn, addr[l], b64 ? 8 : 4, 1);
			if (!p)
				return -1;
			uint64_t v = VREG(dd, 0)[l], cmp = 0;
			if (b64)
				v |= (uint64_t)VREG(dd, 1)[l] << 32;
			if (cmpswap) {
				int half = nd / 2;
				cmp = VREG(dd, half)[l];
				if (b64)
					cmp |= (uint64_t)VREG(dd, half + 1)[l] << 32;
			}
			uint64_t old = atomic_rmw(op, p, v, cmp, b64);
			tmp_data[l] = (uint32_t)old;
			tmp_data[64 + l] = (uint32_t)(old >> 32);
			continue;
		}
		uint8_t *p = emu_gmem(dev, w, insn, addr[l], sh.bytes == 4 ? (size_t)nd * 4 : sh.bytes, 1);
		if (!p)
			return -1;
		if (sh.bytes == 4)
			for (int i = 0; i < nd; i++)
				memcpy(p + 4 * i, &VREG(dd, i)[l], 4);
		else {
			uint32_t v = VREG(dd, 0)[l] >> (sh.d16 == 2 ? 16 : 0);
			memcpy(p, &v, sh.bytes);
		}
	}
	if (rtn)
		return emu_pend(dev, w, 0, 0, FILE(vd), vd->reg, vd->count, ex, tmp_data, 0, insn);
	return emu_pend(dev, w, dev->g11 ? 2 : 0, 0, 0, 0, 0, 0, NULL, 0, insn);
}

static uint8_t *lds_at(EmuDevice *dev, EmuWave *w, int insn, uint64_t addr, size_t n)
{
	if (addr + n > dev->lds_size) {
		emu_fail(dev, w, insn, "out-of-bounds LDS access of %zu bytes at 0x%llx (the workgroup has %u bytes)", n,
			 (unsigned long long)addr, dev->lds_size);
		return NULL;
	}
	return dev->lds + addr;
}

int exec_ds(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in)
{
	unsigned op = in->op;
	uint32_t fl = isa_ops[op].flags;
	int L = w->lanes;
	uint64_t ex = emu_exec_mask(w);
	const IsaOperand *vd = op_role(dev, in, ISA_R_VD, 0), *da = op_role(dev, in, ISA_R_DA, 0),
			 *d0 = op_role(dev, in, ISA_R_DD, 0), *d1 = op_role(dev, in, ISA_R_DD, 1);
	const IsaMods *m = &in->mod;
	dev->stats.lds++;
	if (m->gds) {
		emu_fail(dev, w, insn, "GDS is not emulated");
		return -1;
	}
	if (op == ISA_DS_BPERMUTE_B32 || op == ISA_DS_PERMUTE_B32) {
		/* Lane shuffles through the LDS crossbar; no LDS memory used. */
		memset(tmp_data, 0, 64 * 4);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint32_t sel = ((w->v[da->reg][l] + (uint32_t)m->offset) >> 2) % (uint32_t)L;
			if (op == ISA_DS_BPERMUTE_B32)
				tmp_data[l] = ex >> sel & 1 ? VREG(d0, 0)[sel] : 0;
			else
				tmp_data[sel] = VREG(d0, 0)[l];
		}
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, 1, ex, tmp_data, 0, insn);
	}
	if (op == ISA_DS_SWIZZLE_B32) {
		uint32_t off = (uint32_t)m->offset;
		for (int l = 0; l < L; l++) {
			int s;
			if (off & 0x8000) { /* quad permute */
				s = (l & ~3) | (int)(off >> (2 * (l & 3)) & 3);
			} else {
				int and_m = (int)(off & 31), or_m = (int)(off >> 5 & 31), xor_m = (int)(off >> 10 & 31);
				s = (l & ~31) | ((((l & 31) & and_m) | or_m) ^ xor_m);
			}
			tmp_data[l] = ex >> s & 1 ? w->v[da->reg][s] : 0;
		}
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, 1, ex, tmp_data, 0, insn);
	}
	MemShape sh = mem_shape(op, vd ? vd->count : d0 ? d0->count : 1);
	if (fl & ISA_F_DS2) {
		/* read2/write2: two elements at offset0/offset1 × size (×64 for st64). */
		const char *nm = isa_ops[op].name[1] ? isa_ops[op].name[1] : isa_ops[op].name[2];
		int esz = strstr(nm, "b64") ? 8 : 4, st = strstr(nm, "st64") ? 64 : 1;
		int words = esz / 4;
		memset(tmp_data, 0, sizeof tmp_data);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint64_t base = w->v[da->reg][l];
			for (int e = 0; e < 2; e++) {
				uint64_t a = base + (uint64_t)(e ? m->offset1 : m->offset0) * (uint64_t)esz * (uint64_t)st;
				uint8_t *p = lds_at(dev, w, insn, a, (size_t)esz);
				if (!p)
					return -1;
				const IsaOperand *src = e ? d1 : d0;
				for (int i = 0; i < words; i++) {
					if (fl & ISA_F_LOAD)
						memcpy(&tmp_data[(e * words + i) * 64 + l], p + 4 * i, 4);
					else
						memcpy(p + 4 * i, &VREG(src, i)[l], 4);
				}
			}
		}
		if (fl & ISA_F_LOAD)
			return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, vd->count, ex, tmp_data, 0, insn);
		return emu_pend(dev, w, 1, 0, 0, 0, 0, 0, NULL, 0, insn);
	}
	int atomic = (fl & ISA_F_ATOMIC) != 0 || op == ISA_DS_WRXCHG_RTN_B32 ||
		     (vd && d0); /* returning atomics carry both */
	int n = sh.dwords;
	if ((fl & ISA_F_LOAD) && !atomic) {
		memset(tmp_data, 0, sizeof(uint32_t) * 64 * (size_t)n);
		for (int l = 0; l < L; l++) {
			if (!(ex >> l & 1))
				continue;
			uint64_t a = (uint64_t)w->v[da->reg][l] + (uint32_t)m->offset;
			const uint8_t *p = lds_at(dev, w, insn, a, sh.bytes == 4 ? (size_t)n * 4 : sh.bytes);
			if (!p)
				return -1;
			for (int i = 0; i < n; i++)
				tmp_data[i * 64 + l] = sh.bytes == 4 ? ld_elem(p + 4 * i, sh) : ld_elem(p, sh);
		}
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, n, ex, tmp_data, sh.d16, insn);
	}
	int b64 = d0 && d0->count == 2 && atomic;
	for (int l = 0; l < L; l++) {
		if (!(ex >> l & 1))
			continue;
		uint64_t a = (uint64_t)w->v[da->reg][l] + (uint32_t)m->offset;
		if (atomic) {
			uint8_t *p = lds_at(dev, w, insn, a, b64 ? 8 : 4);
			if (!p)
				return -1;
			uint64_t v = VREG(d0, 0)[l], cmp = 0;
			if (b64)
				v |= (uint64_t)VREG(d0, 1)[l] << 32;
			if (d1) { /* ds_cmpst: gfx9 data0 = compare, data1 = new; gfx11 ds_cmpstore the reverse */
				uint64_t x = VREG(d1, 0)[l] | (b64 ? (uint64_t)VREG(d1, 1)[l] << 32 : 0);
				cmp = dev->g11 ? x : v;
				v = dev->g11 ? v : x;
			}
			uint64_t old = atomic_rmw(op, p, v, cmp, b64);
			tmp_data[l] = (uint32_t)old;
			tmp_data[64 + l] = (uint32_t)(old >> 32);
			continue;
		}
		int nd = d0->count;
		uint8_t *p = lds_at(dev, w, insn, a, sh.bytes == 4 ? (size_t)nd * 4 : sh.bytes);
		if (!p)
			return -1;
		if (sh.bytes == 4)
			for (int i = 0; i < nd; i++)
				memcpy(p + 4 * i, &VREG(d0, i)[l], 4);
		else {
			uint32_t v = VREG(d0, 0)[l] >> (sh.d16 == 2 ? 16 : 0);
			memcpy(p, &v, sh.bytes);
		}
	}
	if (atomic && vd)
		return emu_pend(dev, w, 1, 0, FILE(vd), vd->reg, vd->count, ex, tmp_data, 0, insn);
	return emu_pend(dev, w, 1, 0, 0, 0, 0, 0, NULL, 0, insn);
}
