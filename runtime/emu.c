/* emu.c — the emulated device: memory map, code object loading, dispatch of
 * workgroups and waves, the memory-result queues behind s_waitcnt, and error
 * reporting.  Instruction semantics live in emu_exec.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_impl.h"

#define VA_START 0x100000000ull /* above 4 GiB: a truncated pointer faults */
#define VA_GAP 0x10000ull       /* unmapped bytes between buffers */
#define QUANTUM 32              /* instructions a wave runs before the next wave's turn */

EmuDevice *emu_create(ta_target t)
{
	if (!target_is_amd(ISA_TARGET(t)))
		return NULL;
	EmuDevice *dev = calloc(1, sizeof *dev);
	if (!dev)
		return NULL;
	dev->target = ISA_TARGET(t);
	dev->g11 = dev->target == TA_TARGET_GFX1100;
	dev->checks = EMU_CHECK_WAITCNT | EMU_CHECK_UNINIT | EMU_CHECK_HAZARD;
	dev->insn_limit = 1000000000ull;
	dev->work_limit = EMU_DEFAULT_WORK_LIMIT;
	dev->next_va = VA_START;
	return dev;
}

static void free_kernels(EmuDevice *dev)
{
	for (int i = 0; i < dev->nkern; i++) {
		EmuKernel *k = &dev->kern[i];
		for (int j = 0; k->text && j < k->ninsn; j++)
			free(k->text[j]);
		free(k->text);
		free(k->insn);
		free(k->off);
		free(k->len);
		free(k->at);
	}
	free(dev->kern);
	dev->kern = NULL;
	dev->nkern = 0;
	co_object_free(dev->co);
	dev->co = NULL;
}

void emu_destroy(EmuDevice *dev)
{
	if (!dev)
		return;
	for (size_t i = 0; i < dev->bufs.len; i++)
		free(dev->bufs.data[i].host);
	vec_free(&dev->bufs);
	free_kernels(dev);
	emu_prof_free(dev->prof);
	free(dev);
}

void emu_set_checks(EmuDevice *dev, unsigned checks) { dev->checks = checks; }
void emu_set_profile(EmuDevice *dev, int on) { dev->profiling = on != 0; }
void emu_set_insn_limit(EmuDevice *dev, uint64_t limit) { dev->insn_limit = limit ? limit : 1; }
void emu_set_work_limit(EmuDevice *dev, uint64_t limit) { dev->work_limit = limit ? limit : 1; }
const EmuStats *emu_stats(const EmuDevice *dev) { return &dev->stats; }
void emu_reset_stats(EmuDevice *dev) { memset(&dev->stats, 0, sizeof dev->stats); }
const CoObject *emu_code_object(const EmuDevice *dev) { return dev->co; }

/* ---- memory ------------------------------------------------------------- */

uint64_t emu_alloc(EmuDevice *dev, size_t bytes)
{
	if (bytes > ((size_t)1 << 40))
		return 0;
	EmuBuf b = {dev->next_va, bytes, malloc(bytes ? bytes : 1)};
	if (!b.host)
		return 0;
	memset(b.host, 0xCD, bytes);
	if (vec_push(&dev->bufs, b)) {
		free(b.host);
		return 0;
	}
	dev->next_va += (bytes + VA_GAP + 255) & ~255ull;
	return b.base;
}

/* The buffer holding [addr, addr+n), or NULL. */
static EmuBuf *find_buf(EmuDevice *dev, uint64_t addr, size_t n)
{
	EmuBuf *b = dev->bufs.data;
	size_t lo = 0, hi = dev->bufs.len;
	if (dev->last_buf < hi) {
		EmuBuf *c = &b[dev->last_buf];
		if (addr >= c->base && addr - c->base <= c->size && n <= c->size - (addr - c->base))
			return c;
	}
	while (lo < hi) { /* last buffer with base <= addr */
		size_t mid = (lo + hi) / 2;
		if (b[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	EmuBuf *c = &b[lo - 1];
	if (addr - c->base > c->size || n > c->size - (addr - c->base))
		return NULL;
	dev->last_buf = lo - 1;
	return c;
}

int emu_free(EmuDevice *dev, uint64_t addr)
{
	for (size_t i = 0; i < dev->bufs.len; i++)
		if (dev->bufs.data[i].base == addr) {
			free(dev->bufs.data[i].host);
			memmove(&dev->bufs.data[i], &dev->bufs.data[i + 1], (dev->bufs.len - i - 1) * sizeof(EmuBuf));
			dev->bufs.len--;
			dev->last_buf = 0;
			return 0;
		}
	return -1;
}

int emu_write(EmuDevice *dev, uint64_t addr, const void *src, size_t n, Diag *d)
{
	EmuBuf *b = find_buf(dev, addr, n);
	if (!b) {
		diag_error(d, "emu: write of %zu bytes at 0x%llx is outside every device buffer", n,
			   (unsigned long long)addr);
		return -1;
	}
	memcpy(b->host + (addr - b->base), src, n);
	return 0;
}

int emu_read(EmuDevice *dev, uint64_t addr, void *dst, size_t n, Diag *d)
{
	EmuBuf *b = find_buf(dev, addr, n);
	if (!b) {
		diag_error(d, "emu: read of %zu bytes at 0x%llx is outside every device buffer", n,
			   (unsigned long long)addr);
		return -1;
	}
	memcpy(dst, b->host + (addr - b->base), n);
	return 0;
}

uint8_t *emu_gmem(EmuDevice *dev, EmuWave *w, int insn, uint64_t addr, size_t n, int write)
{
	EmuBuf *b = find_buf(dev, addr, n);
	if (!b) {
		emu_fail(dev, w, insn, "out-of-bounds global %s of %zu bytes at 0x%llx (no device buffer there)",
			 write ? "write" : "read", n, (unsigned long long)addr);
		return NULL;
	}
	return b->host + (addr - b->base);
}

/* ---- errors ------------------------------------------------------------- */

static const char *insn_text(EmuDevice *dev, EmuKernel *k, int i)
{
	if (!k->text)
		k->text = calloc((size_t)k->ninsn, sizeof *k->text);
	if (!k->text)
		return "?";
	if (!k->text[i]) {
		StrBuf sb = {0};
		isa_print(dev->wt, &k->insn[i], &sb);
		k->text[i] = sb_take(&sb);
	}
	return k->text[i] ? k->text[i] : "?";
}

void emu_fail(EmuDevice *dev, EmuWave *w, int insn, const char *fmt, ...)
{
	if (dev->failed)
		return;
	dev->failed = 1;
	StrBuf sb = {0};
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	EmuKernel *k = dev->k;
	if (k && insn >= 0 && insn < k->ninsn)
		diag_error(dev->d, "emu: kernel %s: +0x%x: %s: %s", k->name, k->off[insn], insn_text(dev, k, insn),
			   sb.buf ? sb.buf : "");
	else
		diag_error(dev->d, "emu: kernel %s: %s", k ? k->name : "?", sb.buf ? sb.buf : "");
	(void)w;
	sb_free(&sb);
}

/* ---- loading ------------------------------------------------------------ */

static int decode_kernel(EmuDevice *dev, EmuKernel *k, ta_target t, Diag *d)
{
	const CoObject *co = dev->co;
	size_t n = k->size;
	if (k->entry > co->text_size || n > co->text_size - k->entry)
		n = k->entry < co->text_size ? co->text_size - k->entry : 0;
	k->size = (uint32_t)n;
	k->insn = malloc((n / 4 + 1) * sizeof *k->insn);
	k->off = malloc((n / 4 + 1) * sizeof *k->off);
	k->len = malloc(n / 4 + 1);
	k->at = malloc((n / 4 + 1) * sizeof *k->at);
	if (!k->insn || !k->off || !k->len || !k->at) {
		free(k->insn), free(k->off), free(k->len), free(k->at);
		k->insn = NULL, k->off = NULL, k->len = NULL, k->at = NULL;
		diag_error(d, "emu: out of memory");
		return -1;
	}
	for (size_t i = 0; i <= n / 4; i++)
		k->at[i] = -1;
	const uint8_t *p = co->text + k->entry;
	size_t pos = 0;
	while (pos + 4 <= n) {
		int len = isa_decode(t, p + pos, n - pos, &k->insn[k->ninsn]);
		if (len < 0) {
			/* Not decodable: execution reaching it is an error (below);
			 * code-end padding after s_endpgm is never reached. */
			isa_insn_init(&k->insn[k->ninsn], ISA_NUM_OPS);
			k->insn[k->ninsn].op = ISA_NUM_OPS;
			len = 4;
		} else if (k->insn[k->ninsn].enc == ISA_ENC_DPP8 || ISA_ENC_IS_XDPP(k->insn[k->ninsn].enc) ||
			   k->insn[k->ninsn].enc == ISA_ENC_SDWA ||
			   (k->insn[k->ninsn].enc == ISA_ENC_DPP && isa_op_fmt(t, k->insn[k->ninsn].op) == ISA_FMT_VOPC)) {
			/* Decoded, but the executor has no semantics for gfx11 dpp8, VOP3 DPP
			 * (_e64_dpp), VOPC DPP or gfx9 SDWA: reaching it is an error rather
			 * than running it as the plain op. */
			isa_insn_init(&k->insn[k->ninsn], ISA_NUM_OPS);
			k->insn[k->ninsn].op = ISA_NUM_OPS;
		}
		k->at[pos / 4] = k->ninsn;
		k->off[k->ninsn] = (uint32_t)pos;
		k->len[k->ninsn] = (uint8_t)len;
		k->ninsn++;
		pos += (size_t)len;
	}
	dev->stats.decoded += (uint64_t)k->ninsn;
	return 0;
}

int emu_load(EmuDevice *dev, const uint8_t *hsaco, size_t n, Diag *d)
{
	free_kernels(dev);
	if (co_read(hsaco, n, &dev->co, d))
		return -1;
	if (dev->co->target.id != dev->target) {
		diag_error(d, "emu: code object is for %s, the device is %s", target_name(dev->co->target.id),
			   target_name(dev->target));
		free_kernels(dev);
		return -1;
	}
	dev->kern = calloc((size_t)dev->co->nkernels + 1, sizeof *dev->kern);
	if (!dev->kern) {
		diag_error(d, "emu: out of memory");
		return -1;
	}
	for (int i = 0; i < dev->co->nkernels; i++) {
		const CoKernelInfo *ki = &dev->co->kernels[i];
		EmuKernel *k = &dev->kern[dev->nkern++];
		k->name = ki->k.name;
		k->ki = ki;
		if (ki->entry_vaddr < dev->co->text_vaddr) {
			diag_error(d, "emu: kernel %s: entry 0x%llx is outside .text", k->name,
				   (unsigned long long)ki->entry_vaddr);
			return -1;
		}
		k->entry = (uint32_t)(ki->entry_vaddr - dev->co->text_vaddr);
		k->size = (uint32_t)(ki->k.code_size ? ki->k.code_size : dev->co->text_size - k->entry);
		/* Decoded at its first launch (emu_launch): kernels may share or
		 * overlap code, so decoding all of them here could cost kernels x
		 * .text (a few hundred kernel descriptors over one 32 KiB body took
		 * 900 MB); a launch decodes only what it runs. */
	}
	return 0;
}

/* ---- pending memory results --------------------------------------------- */

int emu_pend(EmuDevice *dev, EmuWave *w, int cnt, int smem, int file, int reg, int n, uint64_t mask,
	     const uint32_t *data, int d16, int insn)
{
	EmuPend p = {(uint8_t)cnt, (uint8_t)smem, (uint8_t)file, (uint16_t)reg, (uint16_t)n, mask, NULL,
		     (uint32_t)d16, insn, 0};
	if (dev->prof_on) {
		/* vmcnt, DS and vscnt return in order: no result before an older one. */
		p.ready = w->mem_ready;
		if (!smem) {
			p.ready = TA_MAX(p.ready, w->last_ready[cnt]);
			w->last_ready[cnt] = p.ready;
		}
	}
	if (file) {
		size_t words = (size_t)n * (file == 's' ? 1 : 64);
		p.data = malloc(words * 4);
		if (!p.data || vec_push(&w->q, p)) {
			free(p.data);
			emu_fail(dev, w, insn, "out of memory");
			return -1;
		}
		memcpy(p.data, data, words * 4);
		for (int i = 0; i < n; i++) {
			if (file == 's')
				w->spend[reg + i]++;
			else if (file == 'v')
				w->vpend[reg + i]++;
			else
				w->apend[reg + i]++;
		}
	} else if (vec_push(&w->q, p)) {
		emu_fail(dev, w, insn, "out of memory");
		return -1;
	}
	w->npend++;
	return 0;
}

static void deliver(EmuWave *w, EmuPend *p)
{
	for (int i = 0; i < p->n && p->file; i++) {
		int r = p->reg + i;
		if (p->file == 's') {
			w->s[r] = p->data[i];
			w->sinit[r] = 1;
			w->spend[r]--;
			continue;
		}
		uint32_t *dst = p->file == 'v' ? w->v[r] : w->a[r];
		const uint32_t *src = p->data + (size_t)i * 64;
		for (int l = 0; l < w->lanes; l++)
			if (p->mask >> l & 1) {
				if (p->d16 == 1)
					dst[l] = (dst[l] & 0xffff0000u) | (src[l] & 0xffff);
				else if (p->d16 == 2)
					dst[l] = (dst[l] & 0xffff) | src[l] << 16;
				else
					dst[l] = src[l];
			}
		if (p->file == 'v') {
			w->vinit[r] |= p->mask;
			w->vpend[r]--;
		} else {
			w->ainit[r] |= p->mask;
			w->apend[r]--;
		}
	}
	free(p->data);
	p->data = NULL;
}

void emu_wait(EmuDevice *dev, EmuWave *w, int vm, int lgkm, int vs)
{
	if (!w->npend)
		return;
	int n[3] = {0, 0, 0}, nds = 0, nsmem = 0;
	for (size_t i = 0; i < w->q.len; i++) {
		EmuPend *p = &w->q.data[i];
		n[p->cnt]++;
		if (p->cnt == 1)
			p->smem ? nsmem++ : nds++;
	}
	/* In-order counters retire their oldest entries; lgkm mixes in-order DS
	 * with out-of-order SMEM: the oldest nds - lgkm DS ops are surely done,
	 * an SMEM result only when the count reaches 0. */
	int kill_vm = vm < 0 ? 0 : n[0] - vm, kill_vs = vs < 0 ? 0 : n[2] - vs;
	int kill_ds = lgkm < 0 ? 0 : (nsmem ? nds - lgkm : n[1] - lgkm);
	int kill_smem = lgkm == 0;
	size_t o = 0;
	for (size_t i = 0; i < w->q.len; i++) {
		EmuPend *p = &w->q.data[i];
		int kill = 0;
		if (p->cnt == 0 && kill_vm > 0)
			kill = 1, kill_vm--;
		else if (p->cnt == 2 && kill_vs > 0)
			kill = 1, kill_vs--;
		else if (p->cnt == 1 && p->smem && kill_smem)
			kill = 1;
		else if (p->cnt == 1 && !p->smem && kill_ds > 0)
			kill = 1, kill_ds--;
		if (kill) {
			if (dev->prof_on && p->ready > w->pt)
				w->pt = p->ready; /* the wave waits for the result */
			deliver(w, p);
			w->npend--;
		} else
			w->q.data[o++] = *p;
	}
	w->q.len = o;
}

/* The pending load that writes register r of `file`, for messages. */
static const EmuPend *find_pend(const EmuWave *w, int file, int r)
{
	for (size_t i = 0; i < w->q.len; i++) {
		const EmuPend *p = &w->q.data[i];
		if (p->file == file && r >= p->reg && r < p->reg + p->n)
			return p;
	}
	return NULL;
}

static const char *cnt_name(const EmuDevice *dev, const EmuPend *p)
{
	if (p->cnt == 0)
		return "vmcnt";
	if (p->cnt == 2)
		return "vscnt";
	return p->smem ? "lgkmcnt(0) (SMEM returns out of order)" : (dev->g11 ? "lgkmcnt" : "lgkmcnt");
}

/* Reports a read of a register with a result still in flight. */
void emu_pending_read(EmuDevice *dev, EmuWave *w, int insn, int file, int r);
void emu_pending_read(EmuDevice *dev, EmuWave *w, int insn, int file, int r)
{
	const EmuPend *p = find_pend(w, file, r);
	const char *what = p ? insn_text(dev, dev->k, p->insn) : "a load";
	emu_fail(dev, w, insn, "reads %c%d before the result of '%s' (+0x%x) has been waited for (missing s_waitcnt %s)",
		 file, r, what, p ? dev->k->off[p->insn] : 0, p ? cnt_name(dev, p) : "");
}

void emu_vwritten(EmuDevice *dev, EmuWave *w, int insn, int agpr, int r, int n, uint64_t mask)
{
	for (int i = 0; i < n; i++) {
		if (agpr) {
			if (w->apend[r + i] && (dev->checks & EMU_CHECK_WAITCNT)) {
				emu_fail(dev, w, insn, "overwrites a%d while a load into it is still pending", r + i);
				return;
			}
			w->ainit[r + i] |= mask;
		} else {
			if (w->vpend[r + i] && (dev->checks & EMU_CHECK_WAITCNT)) {
				emu_fail(dev, w, insn, "overwrites v%d while a load into it is still pending", r + i);
				return;
			}
			w->vinit[r + i] |= mask;
		}
	}
}

/* ---- launch ------------------------------------------------------------- */

static void wave_free(EmuWave *w)
{
	free(w->v);
	free(w->a);
	free(w->vinit);
	free(w->ainit);
	free(w->vpend);
	free(w->apend);
	free(w->vready);
	free(w->vvalu);
	free(w->aready);
	for (size_t i = 0; i < w->q.len; i++)
		free(w->q.data[i].data);
	vec_free(&w->q);
}

static int wave_alloc(EmuWave *w, int nv, int na)
{
	memset(w, 0, sizeof *w);
	w->nv = nv, w->na = na;
	int nvv = nv ? nv : 1, naa = na ? na : 1;
	w->v = malloc((size_t)nvv * sizeof(EmuLanes));
	w->a = malloc((size_t)naa * sizeof(EmuLanes));
	w->vinit = calloc((size_t)nvv, 8);
	w->ainit = calloc((size_t)naa, 8);
	w->vpend = calloc((size_t)nvv, 1);
	w->apend = calloc((size_t)naa, 1);
	w->vready = calloc((size_t)nvv, 8);
	w->vvalu = calloc((size_t)nvv, 8);
	w->aready = calloc((size_t)naa, 8);
	return w->v && w->a && w->vinit && w->ainit && w->vpend && w->apend && w->vready && w->aready && w->vvalu ? 0 : -1;
}

/* Resets a wave for a new workgroup (keeps its buffers). */
static void wave_reset(EmuWave *w)
{
	memset(w->s, 0, sizeof w->s);
	memset(w->sinit, 0, sizeof w->sinit);
	memset(w->spend, 0, sizeof w->spend);
	memset(w->swrite_valu, 0, sizeof w->swrite_valu);
	int nvv = w->nv ? w->nv : 1, naa = w->na ? w->na : 1;
	/* Poison so a missed uninitialised-read check still shows in results. */
	memset(w->v, 0xBE, (size_t)nvv * sizeof(EmuLanes));
	memset(w->a, 0xBE, (size_t)naa * sizeof(EmuLanes));
	memset(w->vinit, 0, (size_t)nvv * 8);
	memset(w->ainit, 0, (size_t)naa * 8);
	memset(w->vpend, 0, (size_t)nvv);
	memset(w->apend, 0, (size_t)naa);
	memset(w->vready, 0, (size_t)nvv * 8);
	memset(w->vvalu, 0, (size_t)nvv * 8);
	memset(w->aready, 0, (size_t)naa * 8);
	for (size_t i = 0; i < w->q.len; i++)
		free(w->q.data[i].data);
	w->q.len = 0;
	w->npend = 0;
	w->scc = 0;
	w->pc = 0;
	w->done = w->at_barrier = 0;
	w->clock = 1;
	w->executed = 0;
	w->last_mfma_clock = 0;
	w->last_mfma_dn = 0;
	w->pt = w->mma_free = w->pt0 = w->mem_ready = 0;
	memset(w->last_ready, 0, sizeof w->last_ready);
}

static void set_sgpr(EmuWave *w, int *r, uint32_t v)
{
	if (*r < 106) {
		w->s[*r] = v;
		w->sinit[*r] = 1;
	}
	(*r)++;
}

/* Register-range static check: every operand within the allocation. */
static int check_ranges(EmuDevice *dev, EmuKernel *k, int nv, int na)
{
	for (int i = 0; i < k->ninsn; i++) {
		const IsaInsn *in = &k->insn[i];
		if (in->op >= ISA_NUM_OPS)
			continue;
		for (int j = 0; j < in->nops; j++) {
			const IsaOperand *o = &in->ops[j];
			int lim = o->kind == ISA_K_VGPR ? nv : o->kind == ISA_K_AGPR ? na : o->kind == ISA_K_SGPR ? 106 : -1;
			if (lim >= 0 && o->reg + o->count > lim) {
				emu_fail(dev, NULL, i, "uses %c%d, beyond the %d %s the kernel descriptor allocates",
					 o->kind == ISA_K_VGPR ? 'v' : o->kind == ISA_K_AGPR ? 'a' : 's',
					 o->reg + o->count - 1, lim,
					 o->kind == ISA_K_VGPR ? "VGPRs" : o->kind == ISA_K_AGPR ? "AGPRs" : "SGPRs");
				return -1;
			}
		}
	}
	return 0;
}

/* The sizes a launch allocates come from the descriptor (untrusted bytes)
 * and the caller; each is held to what the hardware allows (docs/emulator.md
 * "Limits"), so a bad code object is an error, never a multi-GB allocation:
 * - LDS: 64 KiB per workgroup on gfx90a, gfx942 and gfx1100 (static
 *   GROUP_SEGMENT_FIXED_SIZE + dynamic);
 * - scratch: one wave's private segment (PRIVATE_SEGMENT_FIXED_SIZE x
 *   lanes) must fit COMPUTE_TMPRING_SIZE.WAVESIZE: 13 bits of 1 KiB on gfx9,
 *   15 bits of 256 bytes on gfx11;
 * - kernarg: the hardware reads it through a pointer and sets no limit;
 *   EMU_KERNARG_MAX is the emulator's own bound (tileasm's kernels use
 *   well under 1 KiB). */
#define EMU_LDS_MAX (64u * 1024)
#define EMU_KERNARG_MAX (64u * 1024)

static int check_sizes(const EmuDevice *dev, const EmuKernel *k, int lanes, size_t kernarg_size,
		       uint32_t dynamic_lds, Diag *d)
{
	const CoDescriptor *kd = &k->ki->desc;
	uint64_t lds = (uint64_t)kd->group_segment_fixed_size + dynamic_lds;
	if (lds > EMU_LDS_MAX) {
		diag_error(d, "emu: kernel %s: LDS of %llu bytes (GROUP_SEGMENT_FIXED_SIZE %u + %u dynamic) is more "
			      "than the %u bytes per workgroup %s has", k->name, (unsigned long long)lds,
			   kd->group_segment_fixed_size, dynamic_lds, EMU_LDS_MAX, target_name(dev->target));
		return -1;
	}
	uint64_t wave_max = dev->g11 ? 256ull * ((1u << 15) - 1) : 1024ull * ((1u << 13) - 1);
	uint64_t priv = ((uint64_t)kd->private_segment_fixed_size + 3) & ~3ull;
	if (priv * (uint64_t)lanes > wave_max) {
		diag_error(d, "emu: kernel %s: private segment of %u bytes per work-item (PRIVATE_SEGMENT_FIXED_SIZE) "
			      "needs %llu bytes per wave%d; %s allows at most %llu (COMPUTE_TMPRING_SIZE.WAVESIZE)",
			   k->name, kd->private_segment_fixed_size, (unsigned long long)(priv * (uint64_t)lanes), lanes,
			   target_name(dev->target), (unsigned long long)wave_max);
		return -1;
	}
	if (kd->kernarg_size > EMU_KERNARG_MAX || kernarg_size > EMU_KERNARG_MAX) {
		diag_error(d, "emu: kernel %s: kernarg segment of %llu bytes (KERNARG_SIZE %u, %zu passed) is more than "
			      "the emulator's bound of %u bytes", k->name,
			   (unsigned long long)TA_MAX((uint64_t)kd->kernarg_size, (uint64_t)kernarg_size),
			   kd->kernarg_size, kernarg_size, EMU_KERNARG_MAX);
		return -1;
	}
	return 0;
}

static EmuKernel *find_kernel(EmuDevice *dev, const char *name)
{
	size_t n = strlen(name);
	if (n > 3 && !strcmp(name + n - 3, ".kd"))
		n -= 3;
	for (int i = 0; i < dev->nkern; i++)
		if (strlen(dev->kern[i].name) == n && !strncmp(dev->kern[i].name, name, n))
			return &dev->kern[i];
	return NULL;
}

/* Runs one workgroup's waves to completion, interleaved. */
static int run_group(EmuDevice *dev, EmuWave *waves, int nw)
{
	for (;;) {
		int live = 0, waiting = 0;
		for (int i = 0; i < nw; i++) {
			EmuWave *w = &waves[i];
			if (w->done)
				continue;
			live++;
			if (w->at_barrier) {
				waiting++;
				continue;
			}
			for (int q = 0; q < QUANTUM; q++) {
				int r = emu_step(dev, w);
				if (r < 0 || dev->failed)
					return -1;
				if (w->executed > dev->insn_limit) {
					emu_fail(dev, w, w->pc < dev->k->ninsn ? w->pc : -1,
						 "instruction limit (%llu per wave) exceeded: endless loop?",
						 (unsigned long long)dev->insn_limit);
					return -1;
				}
				if (++dev->work > dev->work_limit) {
					emu_fail(dev, w, w->pc < dev->k->ninsn ? w->pc : -1,
						 "work bound exceeded: more than %llu instructions in this launch, all waves "
						 "and workgroups together (raise it with --max-steps)",
						 (unsigned long long)dev->work_limit);
					return -1;
				}
				if (r)
					break;
			}
			if (w->done)
				live--;
			else if (w->at_barrier)
				waiting++;
		}
		if (!live)
			return 0;
		if (waiting == live) {
			/* Every remaining wave reached s_barrier: release them.  (Waves
			 * that ended count as arrived, as on hardware.) */
			if (dev->prof_on)
				emu_prof_barrier(dev, waves, nw);
			for (int i = 0; i < nw; i++)
				waves[i].at_barrier = 0;
		}
	}
}

int emu_launch(EmuDevice *dev, const char *name, const uint32_t grid[3], const uint32_t block[3],
	       const void *kernarg, size_t kernarg_size, uint32_t dynamic_lds, Diag *d)
{
	if (dev->prof)
		emu_prof_end(dev, 0, 0, 0); /* no profile for this launch unless it is profiled */
	if (!dev->co) {
		diag_error(d, "emu: no code object loaded");
		return -1;
	}
	EmuKernel *k = find_kernel(dev, name);
	if (!k) {
		diag_error(d, "emu: no kernel named '%s' in the code object", name);
		return -1;
	}
	const CoDescriptor *kd = &k->ki->desc;
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
	if (!threads || threads > 1024 || block[0] > 1024 || block[1] > 1024 || block[2] > 1024) {
		diag_error(d, "emu: kernel %s: workgroup size %ux%ux%u is invalid (1..1024 work-items)", k->name,
			   block[0], block[1], block[2]);
		return -1;
	}
	if (!grid[0] || !grid[1] || !grid[2]) {
		diag_error(d, "emu: kernel %s: empty grid", k->name);
		return -1;
	}
	int w64 = !dev->g11 || !(kd->kernel_code_properties & (1u << 10));
	int lanes = w64 ? 64 : 32;
	if (check_sizes(dev, k, lanes, kernarg_size, dynamic_lds, d))
		return -1;
	dev->wt = dev->target | (dev->g11 && w64 ? ISA_WAVE64 : 0);
	if (!k->insn && decode_kernel(dev, k, dev->wt, d))
		return -1;
	dev->k = k;
	dev->d = d;
	dev->failed = 0;
	dev->work = 0;
	uint32_t rsrc1 = kd->rsrc1, rsrc2 = kd->rsrc2;
	dev->denorm32 = (int)(rsrc1 >> 16 & 3);
	dev->denorm16 = (int)(rsrc1 >> 18 & 3);
	if ((rsrc1 >> 12 & 15) != 0) {
		diag_error(d, "emu: kernel %s: only round-to-nearest-even float modes are emulated (RSRC1 0x%08x)",
			   k->name, rsrc1);
		return -1;
	}
	/* Register allocation from the descriptor. */
	int vg = (int)(rsrc1 & 63), nv, na = 0;
	if (dev->g11)
		nv = (vg + 1) * (w64 ? 4 : 8);
	else {
		int total = (vg + 1) * 8, acc = (int)((kd->rsrc3 & 63) + 1) * 4;
		nv = acc < total ? acc : total;
		na = total - nv;
		if (nv > 256)
			nv = 256;
		if (na > 256)
			na = 256;
	}
	if (check_ranges(dev, k, nv, na))
		return -1;

	/* Segments: kernarg, a dispatch packet and an empty queue, as ROCr. */
	uint32_t ksize = kd->kernarg_size > kernarg_size ? kd->kernarg_size : (uint32_t)kernarg_size;
	uint64_t ka = emu_alloc(dev, ksize ? ksize : 16), pkt = emu_alloc(dev, 64), queue = emu_alloc(dev, 256);
	int rc = -1;
	EmuWave *waves = NULL;
	int nw = (int)((threads + (uint64_t)lanes - 1) / (uint64_t)lanes);
	/* Scratch: one area per wave of the workgroup (workgroups run one at a
	 * time), the lanes' dwords interleaved as the hardware swizzles them
	 * (emu_exec.c exec_private), each area rounded to 1 KiB like the
	 * runtime's per-wave size.  gfx942/gfx1100 (architected flat scratch)
	 * get FLAT_SCRATCH = the wave's area when ENABLE_PRIVATE_SEGMENT is
	 * set; gfx90a gets the private segment V# in s[0:3] (base of the
	 * buffer, swizzled, index stride 64) and the wave offset SGPR. */
	int arch_scratch = dev->target == TA_TARGET_GFX942 || dev->g11;
	dev->priv_size = (kd->private_segment_fixed_size + 3) & ~3u;
	uint64_t wave_bytes = ((uint64_t)dev->priv_size * (uint64_t)lanes + 1023) & ~1023ull, scr = 0;
	if ((rsrc2 & 1) && !(scr = emu_alloc(dev, (size_t)(wave_bytes * (uint64_t)nw) + 1024)))
		goto oom;
	dev->scr_base = scr;
	dev->scr_size = scr ? wave_bytes * (uint64_t)nw : 0;
	dev->scr_init = scr ? malloc(dev->scr_size / 4 + 1) : NULL;
	if (scr && !dev->scr_init)
		goto oom;
	uint32_t lds_size = kd->group_segment_fixed_size + dynamic_lds;
	dev->lds = NULL;
	if (!ka || !pkt || !queue)
		goto oom;
	{
		EmuBuf *b = find_buf(dev, ka, 1);
		memset(b->host, 0, b->size);
		if (kernarg_size)
			memcpy(b->host, kernarg, kernarg_size);
		b = find_buf(dev, queue, 1);
		memset(b->host, 0, b->size);
		uint8_t p[64] = {0};
		uint16_t setup = (uint16_t)(grid[2] > 1 ? 3 : grid[1] > 1 ? 2 : 1);
		uint16_t wg[3] = {(uint16_t)block[0], (uint16_t)block[1], (uint16_t)block[2]};
		uint32_t gs[3] = {grid[0] * block[0], grid[1] * block[1], grid[2] * block[2]};
		memcpy(p + 2, &setup, 2);
		memcpy(p + 4, wg, 6);
		memcpy(p + 12, gs, 12);
		memcpy(p + 28, &lds_size, 4);
		memcpy(p + 40, &ka, 8);
		b = find_buf(dev, pkt, 1);
		memcpy(b->host, p, 64);
	}
	dev->lds_size = lds_size;
	dev->lds = malloc(lds_size ? lds_size : 1);
	waves = calloc((size_t)nw, sizeof *waves);
	if (!dev->lds || !waves)
		goto oom;
	for (int i = 0; i < nw; i++)
		if (wave_alloc(&waves[i], nv, na))
			goto oom;
	if (dev->profiling) {
		int sg = dev->g11 ? 0 : (int)((rsrc1 >> 6 & 15) + 1) * 8;
		if (emu_prof_begin(dev, nv, na, sg, (int)threads))
			goto oom;
	}
	unsigned props = kd->kernel_code_properties;
	int user_count = (int)(rsrc2 >> 1 & 31);
	int idims = (int)(rsrc2 >> 11 & 3);
	for (uint32_t gz = 0; gz < grid[2] && !dev->failed; gz++)
		for (uint32_t gy = 0; gy < grid[1] && !dev->failed; gy++)
			for (uint32_t gx = 0; gx < grid[0] && !dev->failed; gx++) {
				memset(dev->lds, 0xCD, lds_size ? lds_size : 1);
				if (dev->scr_init) /* each workgroup starts with unwritten scratch */
					memset(dev->scr_init, 0, dev->scr_size / 4 + 1);
				for (int wi = 0; wi < nw; wi++) {
					EmuWave *w = &waves[wi];
					wave_reset(w);
					w->lanes = lanes;
					int r = 0;
					if ((props & CO_USGPR_PRIVATE_SEGMENT_BUFFER) && scr && !arch_scratch) {
						set_sgpr(w, &r, (uint32_t)scr);
						set_sgpr(w, &r, (uint32_t)(scr >> 32) | 1u << 31); /* swizzle_enable */
						set_sgpr(w, &r, 0xffffffffu);
						set_sgpr(w, &r, 1u << 23 | 3u << 21); /* add_tid_enable, index stride 64 */
					} else if (props & CO_USGPR_PRIVATE_SEGMENT_BUFFER)
						for (int j = 0; j < 4; j++)
							set_sgpr(w, &r, 0);
					if (props & CO_USGPR_DISPATCH_PTR)
						set_sgpr(w, &r, (uint32_t)pkt), set_sgpr(w, &r, (uint32_t)(pkt >> 32));
					if (props & CO_USGPR_QUEUE_PTR)
						set_sgpr(w, &r, (uint32_t)queue), set_sgpr(w, &r, (uint32_t)(queue >> 32));
					if (props & CO_USGPR_KERNARG_SEGMENT_PTR)
						set_sgpr(w, &r, (uint32_t)ka), set_sgpr(w, &r, (uint32_t)(ka >> 32));
					if (props & CO_USGPR_DISPATCH_ID)
						set_sgpr(w, &r, 0), set_sgpr(w, &r, 0);
					if (props & CO_USGPR_FLAT_SCRATCH_INIT)
						set_sgpr(w, &r, 0), set_sgpr(w, &r, 0);
					if (props & CO_USGPR_PRIVATE_SEGMENT_SIZE)
						set_sgpr(w, &r, 0);
					if (r > user_count) {
						emu_fail(dev, w, -1, "descriptor enables %d user SGPRs but USER_SGPR_COUNT is %d",
							 r, user_count);
						goto out;
					}
					r = user_count;
					if (rsrc2 >> 7 & 1)
						set_sgpr(w, &r, gx);
					if (rsrc2 >> 8 & 1)
						set_sgpr(w, &r, gy);
					if (rsrc2 >> 9 & 1)
						set_sgpr(w, &r, gz);
					if (rsrc2 >> 10 & 1)
						set_sgpr(w, &r, 0);
					w->scratch_base = 0;
					if (scr && arch_scratch)
						w->scratch_base = scr + (uint64_t)wi * wave_bytes;
					else if (scr)
						set_sgpr(w, &r, (uint32_t)((uint64_t)wi * wave_bytes)); /* wave offset */
					/* Work-item ids, packed in v0 (x 9:0, y 19:10, z 29:20). */
					uint64_t live = 0;
					for (int l = 0; l < lanes; l++) {
						uint64_t flat = (uint64_t)wi * (uint64_t)lanes + (uint64_t)l;
						uint32_t x = 0, y = 0, z = 0;
						if (flat < threads) {
							live |= 1ull << l;
							x = (uint32_t)(flat % block[0]);
							y = (uint32_t)(flat / block[0] % block[1]);
							z = (uint32_t)(flat / ((uint64_t)block[0] * block[1]));
						}
						if (nv)
							w->v[0][l] = x | (idims >= 1 ? y << 10 : 0) | (idims >= 2 ? z << 20 : 0);
					}
					w->live = live;
					if (nv)
						w->vinit[0] = live;
					w->s[ES_EXEC] = (uint32_t)live;
					w->s[ES_EXEC + 1] = lanes == 64 ? (uint32_t)(live >> 32) : 0;
					w->sinit[ES_EXEC] = w->sinit[ES_EXEC + 1] = 1;
					w->sinit[ES_NULL] = 1;
					dev->stats.waves++;
				}
				if (run_group(dev, waves, nw))
					goto out;
				dev->stats.workgroups++;
			}
	rc = dev->failed ? -1 : 0;
	if (dev->prof_on)
		emu_prof_end(dev, rc == 0, (uint64_t)nw * grid[0] * grid[1] * grid[2],
			     (uint64_t)grid[0] * grid[1] * grid[2]);
	goto out;
oom:
	diag_error(d, "emu: out of memory");
out:
	if (dev->prof_on)
		emu_prof_end(dev, 0, 0, 0);
	for (int i = 0; waves && i < nw; i++)
		wave_free(&waves[i]);
	free(waves);
	free(dev->lds);
	dev->lds = NULL;
	if (ka)
		emu_free(dev, ka);
	if (pkt)
		emu_free(dev, pkt);
	if (queue)
		emu_free(dev, queue);
	if (scr)
		emu_free(dev, scr);
	free(dev->scr_init);
	dev->scr_init = NULL;
	dev->scr_base = dev->scr_size = 0;
	dev->k = NULL;
	return rc;
}
