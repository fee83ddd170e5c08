/* test_profile.c — the emulator's profiling mode (runtime/emu_prof.c):
 * instruction classes, loops, bytes, LDS bank conflicts and the cycle model
 * on tiny hand-written kernels (assembled by co_assemble) whose counts are
 * worked out by hand from the model in docs/emulator.md, and the public
 * ta_emu_* API on a compiled example cross-checked with the emulator's own
 * counters. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "diag.h"
#include "emu.h"
#include "target.h"
#include "util.h"

typedef struct {
	ta_target t;
	int lanes, slot; /* wave size; model cycles per issue slot */
	const char *add; /* integer add mnemonic */
} Tgt;

static const Tgt tgts[] = {
	{TA_TARGET_GFX90A, 64, 4, "v_add_u32"},
	{TA_TARGET_GFX942, 64, 4, "v_add_u32"},
	{TA_TARGET_GFX1100, 32, 1, "v_add_nc_u32"},
};

/* Assembles body as kernel k (kernarg pointer in s[0:1], v0 = lane id; the
 * kernarg is the address of a zeroed 4 KiB buffer) with lds bytes of LDS,
 * runs one wave with profiling on, returns the device. */
static EmuDevice *run_err(const Tgt *tg, const char *body, uint32_t lds, char **err);
static EmuDevice *run(const Tgt *tg, const char *body, uint32_t lds)
{
	char *err = NULL;
	EmuDevice *dev = run_err(tg, body, lds, &err);
	cr_assert(dev, "%s: %s", target_name(tg->t), err ? err : "");
	return dev;
}

/* The same; on a launch error returns NULL with the message in *err (malloc'd). */
static EmuDevice *run_err(const Tgt *tg, const char *body, uint32_t lds, char **err)
{
	int g11 = tg->t == TA_TARGET_GFX1100;
	StrBuf sb = {0};
	sb_printf(&sb, ".text\n.globl k\n.p2align 8\n.type k,@function\nk:\n%s  s_endpgm\n.Lend:\n  .size k, .Lend-k\n",
		  body);
	sb_printf(&sb, ".rodata\n.p2align 6\n.amdhsa_kernel k\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n"
		       "  .amdhsa_kernarg_size 8\n  .amdhsa_next_free_sgpr 32\n  .amdhsa_group_segment_fixed_size %u\n",
		  lds);
	if (g11)
		sb_puts(&sb, "  .amdhsa_next_free_vgpr 32\n  .amdhsa_wavefront_size32 1\n");
	else
		sb_puts(&sb, "  .amdhsa_next_free_vgpr 32\n  .amdhsa_accum_offset 32\n");
	sb_puts(&sb, ".end_amdhsa_kernel\n");
	char *text = sb_take(&sb);
	Target t;
	memset(&t, 0, sizeof t);
	t.id = tg->t;
	SrcFile src = {"profile.s", text, strlen(text)};
	Diag d;
	diag_init(&d);
	uint8_t *co = NULL;
	size_t n = 0;
	cr_assert(!co_assemble(&t, 0, &src, &co, &n, &d), "%s\n%s", diag_text(&d), text);
	EmuDevice *dev = emu_create(tg->t);
	cr_assert(dev);
	cr_assert(!emu_load(dev, co, n, &d), "%s", diag_text(&d));
	uint64_t buf = emu_alloc(dev, 4096);
	static const uint8_t zero[4096];
	cr_assert(buf && !emu_write(dev, buf, zero, sizeof zero, &d));
	emu_set_profile(dev, 1);
	uint32_t grid[3] = {1, 1, 1}, block[3] = {(uint32_t)tg->lanes, 1, 1};
	*err = NULL;
	if (emu_launch(dev, "k", grid, block, &buf, sizeof buf, 0, &d)) {
		*err = strdup(diag_text(&d));
		emu_destroy(dev);
		dev = NULL;
	} else
		cr_assert(emu_profile(dev));
	diag_free(&d);
	free(co);
	free(text);
	return dev;
}

/* A counted scalar loop: classes, the loop's trips and its share. */
Test(emu_profile, classes_and_loops)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(tgts); i++) {
		const Tgt *tg = &tgts[i];
		StrBuf sb = {0};
		sb_printf(&sb, "  s_mov_b32 s4, 3\n  v_mov_b32 v1, 0\n.Lloop:\n  %s v1, 1, v1\n  s_sub_u32 s4, s4, 1\n"
			       "  s_cmp_lg_u32 s4, 0\n  s_cbranch_scc1 .Lloop\n  s_nop 2\n",
			  tg->add);
		char *body = sb_take(&sb);
		EmuDevice *dev = run(tg, body, 0);
		const ta_profile *p = emu_profile(dev);
		const ta_profile_counts *c = &p->c;
		cr_expect_eq(p->waves, 1);
		cr_expect_eq(c->insns[TA_IC_SALU], 7, "%s SALU %llu", target_name(tg->t),
			     (unsigned long long)c->insns[TA_IC_SALU]);
		cr_expect_eq(c->insns[TA_IC_VALU], 4);
		cr_expect_eq(c->insns[TA_IC_BRANCH], 4); /* 3 s_cbranch + s_endpgm */
		cr_expect_eq(c->insns[TA_IC_NOP], 1);
		cr_expect_eq(c->insns[TA_IC_VMEM] + c->insns[TA_IC_LDS] + c->insns[TA_IC_MMA] + c->insns[TA_IC_WAITCNT], 0);
		/* 15 instructions of one slot, s_nop 2 takes 3; nothing waits. */
		cr_expect_eq(c->cycles, (uint64_t)(15 + 3) * tg->slot, "%s cycles %llu", target_name(tg->t),
			     (unsigned long long)c->cycles);
		cr_expect_eq(c->stall_cycles, 0);
		cr_assert_eq(p->nloops, 1);
		const ta_profile_loop *l = &p->loops[0];
		cr_expect_eq(l->trips, 3);
		cr_expect_eq(l->parent, -1);
		cr_expect_eq(l->c.insns[TA_IC_VALU] + l->c.insns[TA_IC_SALU] + l->c.insns[TA_IC_BRANCH], 12);
		cr_expect_eq(l->c.cycles, (uint64_t)12 * tg->slot);
		cr_expect_eq(l->end - l->begin, 12); /* v_add, s_sub, s_cmp: 4 bytes each */
		char *text = emu_profile_format(p);
		cr_assert(text && strstr(text, "loop 0") && strstr(text, "limiter"), "%s", text ? text : "(null)");
		free(text);
		emu_destroy(dev);
		free(body);
	}
}

/* LDS: lane * 4 is conflict-free, lane * 128 puts every lane of a 32-lane
 * group in bank 0 (32 cycles per group); b64 at lane * 8 takes 16 lanes a
 * cycle. */
Test(emu_profile, lds_bank_conflicts)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(tgts); i++) {
		const Tgt *tg = &tgts[i];
		int g11 = tg->t == TA_TARGET_GFX1100;
		StrBuf sb = {0};
		sb_printf(&sb, "  v_lshlrev_b32 v2, 2, v0\n  %s v2, v0\n  v_lshlrev_b32 v3, 7, v0\n  %s v3, v0\n"
			       "  v_lshlrev_b32 v4, 3, v0\n  s_waitcnt lgkmcnt(0)\n  %s v[6:7], v4\n  s_waitcnt lgkmcnt(0)\n",
			  g11 ? "ds_store_b32" : "ds_write_b32", g11 ? "ds_store_b32" : "ds_write_b32",
			  g11 ? "ds_load_b64" : "ds_read_b64");
		char *body = sb_take(&sb);
		EmuDevice *dev = run(tg, body, 128 * 64);
		const ta_profile_counts *c = &emu_profile(dev)->c;
		uint64_t groups = (uint64_t)tg->lanes / 32, g64 = (uint64_t)tg->lanes / 16;
		cr_expect_eq(c->insns[TA_IC_LDS], 3);
		cr_expect_eq(c->lds_cycles, groups * 1 + groups * 32 + g64, "%s: %llu", target_name(tg->t),
			     (unsigned long long)c->lds_cycles);
		cr_expect_eq(c->lds_conflict_cycles, groups * 31);
		cr_expect_eq(c->bytes[TA_MEM_LDS_STORE], (uint64_t)tg->lanes * 8);
		cr_expect_eq(c->bytes[TA_MEM_LDS_LOAD], (uint64_t)tg->lanes * 8);
		emu_destroy(dev);
		free(body);
	}
}

/* Exposed latency: an SMEM load waited for at once (100 cycles) and a
 * global load of 64-byte-aligned dwords (500 cycles + one per line). */
Test(emu_profile, memory_latency)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(tgts); i++) {
		const Tgt *tg = &tgts[i];
		int g11 = tg->t == TA_TARGET_GFX1100;
		StrBuf sb = {0};
		sb_printf(&sb, "  %s s[4:5], s[0:1], 0x0\n  s_waitcnt lgkmcnt(0)\n  v_lshlrev_b32 v1, 2, v0\n"
			       "  %s v2, v1, s[4:5]\n  s_waitcnt vmcnt(0)\n",
			  g11 ? "s_load_b64" : "s_load_dwordx2", g11 ? "global_load_b32" : "global_load_dword");
		char *body = sb_take(&sb);
		EmuDevice *dev = run(tg, body, 0);
		const ta_profile_counts *c = &emu_profile(dev)->c;
		uint64_t lines = (uint64_t)tg->lanes * 4 / 64;
		cr_expect_eq(c->bytes[TA_MEM_SMEM], 8);
		cr_expect_eq(c->bytes[TA_MEM_GLOBAL_LOAD], (uint64_t)tg->lanes * 4);
		cr_expect_eq(c->vmem_lines, lines);
		cr_expect_eq(c->stall_cycles, (100 - (uint64_t)tg->slot) + (500 + lines - (uint64_t)tg->slot),
			     "%s: stalls %llu", target_name(tg->t), (unsigned long long)c->stall_cycles);
		cr_expect_eq(c->insns[TA_IC_WAITCNT], 2);
		emu_destroy(dev);
		free(body);
	}
}

/* The matrix pipe: four independent MFMAs / WMMAs issue back to back, each
 * waits for the previous one's passes (gfx942 16x16x16 f16: 4 passes of 4
 * cycles; gfx90a: 8 passes; gfx1100 WMMA: 32 cycles). */
Test(emu_profile, matrix_pipe)
{
	for (size_t i = 0; i < TA_ARRAY_LEN(tgts); i++) {
		const Tgt *tg = &tgts[i];
		int g11 = tg->t == TA_TARGET_GFX1100;
		StrBuf sb = {0};
		int nregs = g11 ? 24 : 4;
		for (int r = 0; r < nregs; r++)
			sb_printf(&sb, "  v_mov_b32 v%d, 0\n", r + 8);
		for (int m = 0; m < 4; m++) {
			if (g11)
				sb_printf(&sb, "  v_wmma_f32_16x16x16_f16 v[%d:%d], v[8:15], v[16:23], v[%d:%d]\n", 24 + 0, 31, 24,
					  31);
			else
				sb_printf(&sb, "  %s v[%d:%d], v[8:9], v[10:11], 0\n",
					  tg->t == TA_TARGET_GFX942 ? "v_mfma_f32_16x16x16_f16" : "v_mfma_f32_16x16x16f16",
					  12 + 4 * m, 15 + 4 * m);
		}
		sb_puts(&sb, "  s_nop 15\n  s_nop 15\n  s_nop 15\n");
		char *body = sb_take(&sb);
		EmuDevice *dev = run(tg, body, 0);
		const ta_profile *p = emu_profile(dev);
		uint64_t each = g11 ? 32 : tg->t == TA_TARGET_GFX942 ? 16 : 32;
		cr_expect_eq(p->c.insns[TA_IC_MMA], 4);
		cr_expect_eq(p->c.mma_cycles, 4 * each);
		/* MFMA 2..4 wait for the pipe: each - one slot.  gfx11: the WMMAs
		 * are followed by no VALU, so nothing else waits. */
		cr_expect_eq(p->c.stall_cycles, 3 * (each - (uint64_t)tg->slot), "%s: stalls %llu", target_name(tg->t),
			     (unsigned long long)p->c.stall_cycles);
		cr_expect(p->cu.mma_utilisation > 0 && p->cu.mma_utilisation <= 1.0);
		emu_destroy(dev);
		free(body);
	}
}

/* The public API on a compiled example: the profile's classes add up to the
 * emulator's own counters, and vector_add moves exactly 2 x 4 N bytes in
 * and 4 N out. */
Test(emu_profile, api_vector_add)
{
	const char *srcdir = getenv("TILEASM_SRCDIR");
	cr_assert(srcdir);
	StrBuf path = {0};
	sb_printf(&path, "%s/examples/vector_add.tile", srcdir);
	size_t n = 0;
	char *text = read_file(path.buf, &n);
	cr_assert(text);
	const char *const targets[] = {"gfx90a", "gfx942", "gfx1100"};
	for (size_t t = 0; t < TA_ARRAY_LEN(targets); t++) {
		ta_ctx *ctx = ta_ctx_create();
		cr_assert(ctx);
		cr_assert(!ta_ctx_define(ctx, "N", 1000));
		ta_binary *b = NULL;
		ta_emu *e = NULL;
		cr_assert(!ta_compile_source(ctx, path.buf, text, n, targets[t], &b), "%s", ta_ctx_diagnostics(ctx));
		cr_assert(!ta_emu_create(ctx, targets[t], &e));
		size_t sz;
		const void *co = ta_binary_data(b, &sz);
		cr_assert(!ta_emu_load(e, co, sz), "%s", ta_ctx_diagnostics(ctx));
		const ta_kernel_info *ki = ta_binary_kernel(b, 0);
		uint8_t ka[64] = {0};
		float host[1000];
		for (int i = 0; i < 1000; i++)
			host[i] = (float)i;
		for (int a = 0; a < ki->nargs; a++)
			if (ki->args[a].kind == TA_ARG_TENSOR) {
				uint64_t d;
				cr_assert(!ta_emu_alloc(e, sizeof host, &d));
				cr_assert(!ta_emu_write(e, d, host, sizeof host));
				memcpy(ka + ki->args[a].offset, &d, 8);
			}
		int64_t vals[8] = {0};
		uint32_t grid[3], block[3] = {(uint32_t)ki->threads, 1, 1};
		cr_assert(!ta_binary_grid(b, 0, vals, grid));
		cr_expect(ta_emu_profile(e) == NULL);
		ta_emu_set_profile(e, 1);
		cr_assert(!ta_emu_launch(e, ki->name, grid, block, ka, ki->kernarg_size, 0), "%s",
			  ta_ctx_diagnostics(ctx));
		const ta_profile *p = ta_emu_profile(e);
		cr_assert(p);
		cr_expect_eq(p->c.bytes[TA_MEM_GLOBAL_LOAD], 8000, "%s: %llu", targets[t],
			     (unsigned long long)p->c.bytes[TA_MEM_GLOBAL_LOAD]);
		cr_expect_eq(p->c.bytes[TA_MEM_GLOBAL_STORE], 4000);
		cr_expect_eq(p->c.bytes[TA_MEM_SCRATCH], 0);
		uint64_t sum = 0;
		for (int i = 0; i < TA_IC_COUNT; i++)
			sum += p->c.insns[i];
		cr_expect(sum > 0 && p->c.cycles > 0 && p->cu.cycles > 0);
		cr_expect_str_eq(p->kernel, ki->name);
		char *s = ta_profile_format(p);
		cr_assert(s);
		cr_expect(strstr(s, "per CU") != NULL);
		ta_free(s);
		/* Without profiling the next launch has no profile. */
		ta_emu_set_profile(e, 0);
		cr_assert(!ta_emu_launch(e, ki->name, grid, block, ka, ki->kernarg_size, 0));
		cr_expect(ta_emu_profile(e) == NULL);
		ta_emu_destroy(e);
		ta_binary_release(b);
		ta_ctx_destroy(ctx);
	}
	free(text);
	sb_free(&path);
}

/* The profile sums match the emulator's counters (EmuStats) on a kernel
 * with LDS, MFMA/WMMA and loops; the GEMM K-loop's copies are unrolled. */
Test(emu_profile, counts_match_stats)
{
	const char *srcdir = getenv("TILEASM_SRCDIR");
	StrBuf path = {0};
	sb_printf(&path, "%s/examples/gemm.tile", srcdir);
	size_t n = 0;
	char *text = read_file(path.buf, &n);
	cr_assert(text);
	const char *const targets[] = {"gfx942", "gfx1100"};
	for (size_t t = 0; t < TA_ARRAY_LEN(targets); t++) {
		ta_ctx *ctx = ta_ctx_create();
		ta_ctx_define(ctx, "M", 128), ta_ctx_define(ctx, "N", 128), ta_ctx_define(ctx, "K", 64);
		ta_binary *b = NULL;
		cr_assert(!ta_compile_source(ctx, path.buf, text, n, targets[t], &b), "%s", ta_ctx_diagnostics(ctx));
		Target tg;
		cr_assert(!target_parse(targets[t], &tg));
		EmuDevice *dev = emu_create(tg.id);
		Diag d;
		diag_init(&d);
		size_t sz;
		const uint8_t *co = ta_binary_data(b, &sz);
		cr_assert(!emu_load(dev, co, sz, &d));
		const ta_kernel_info *ki = ta_binary_kernel(b, 0);
		uint8_t ka[64] = {0};
		static uint16_t host[128 * 128];
		for (int a = 0; a < ki->nargs; a++) {
			uint64_t da = emu_alloc(dev, sizeof host);
			cr_assert(da && !emu_write(dev, da, host, sizeof host, &d));
			memcpy(ka + ki->args[a].offset, &da, 8);
		}
		uint32_t grid[3] = {1, 1, 1}, block[3] = {(uint32_t)ki->threads, 1, 1};
		emu_set_profile(dev, 1);
		cr_assert(!emu_launch(dev, ki->name, grid, block, ka, ki->kernarg_size, 0, &d), "%s", diag_text(&d));
		const ta_profile *p = emu_profile(dev);
		const EmuStats *st = emu_stats(dev);
		uint64_t sum = 0;
		for (int i = 0; i < TA_IC_COUNT; i++)
			sum += p->c.insns[i];
		cr_expect_eq(sum, st->insns);
		cr_expect_eq(p->c.insns[TA_IC_VALU], st->valu);
		cr_expect_eq(p->c.insns[TA_IC_MMA], st->mma);
		cr_expect_eq(p->c.insns[TA_IC_LDS], st->lds);
		cr_expect_eq(p->c.insns[TA_IC_VMEM], st->vmem);
		cr_expect_eq(p->c.insns[TA_IC_SMEM], st->smem);
		cr_expect_eq(p->waves, st->waves);
		/* The K-loop runs twice (K = 64) and holds every MMA. */
		int kl = -1;
		for (int l = 0; l < p->nloops; l++)
			if (p->loops[l].parent < 0 && p->loops[l].c.insns[TA_IC_MMA])
				kl = l;
		cr_assert(kl >= 0);
		cr_expect_eq(p->loops[kl].c.insns[TA_IC_MMA], st->mma);
		cr_expect_eq(p->loops[kl].trips, 2 * p->waves);
		/* Its two tile copies are unrolled (issue 15): 4 + 4 16-byte loads
		 * per trip and wave, staged a trip ahead (those of the first trip
		 * before the loop, none in the last); no loop inside loads. */
		uint64_t trips = p->loops[kl].trips - p->waves;
		cr_expect_eq(p->loops[kl].c.insns[TA_IC_VMEM], 8 * trips, "%s: %llu loads", targets[t],
			     (unsigned long long)p->loops[kl].c.insns[TA_IC_VMEM]);
		for (int l = 0; l < p->nloops; l++)
			if (p->loops[l].parent == kl)
				cr_expect_eq(p->loops[l].c.insns[TA_IC_VMEM], 0, "%s: loop %d loads", targets[t], l);
		diag_free(&d);
		emu_destroy(dev);
		ta_binary_release(b);
		ta_ctx_destroy(ctx);
	}
	free(text);
	sb_free(&path);
}

/* The gfx9 hazard the DPP row reductions rely on (amd_hazard.c): a DPP
 * move reading a VGPR a VALU wrote needs 2 wait states; the emulator
 * refuses the kernel without them and runs it with s_nop 1. */
Test(emu_profile, dpp_after_valu_needs_two_wait_states)
{
	for (size_t i = 0; i < 2; i++) { /* gfx90a, gfx942 */
		const Tgt *tg = &tgts[i];
		const char *bad = "  v_mov_b32 v1, v0\n  v_mov_b32_dpp v2, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf "
				  "bound_ctrl:1\n";
		const char *good = "  v_mov_b32 v1, v0\n  s_nop 1\n  v_mov_b32_dpp v2, v1 quad_perm:[1,0,3,2] row_mask:0xf "
				   "bank_mask:0xf bound_ctrl:1\n";
		char *err = NULL;
		EmuDevice *dev = run_err(tg, bad, 0, &err);
		cr_expect(!dev && err && strstr(err, "DPP reads v1"), "%s: %s", target_name(tg->t), err ? err : "(ran)");
		emu_destroy(dev);
		free(err);
		dev = run(tg, good, 0);
		emu_destroy(dev);
	}
}
