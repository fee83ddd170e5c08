/* test_scratch.c — VGPR spills to scratch memory (the private segment):
 * the spill code as an inline snippet, examples forced to spill by tiny
 * register files running bit for bit like their unconstrained builds on
 * the emulator (ragged shapes included, so spill code runs under partial
 * exec), the objects checked by the LLVM oracles (every byte decodes,
 * .private_segment_fixed_size and .vgpr_spill_count in the notes), and
 * the descriptor against what llvm-mc-19 assembles from the same .amdhsa_*
 * directives. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "amd.h"
#include "codeobj.h"
#include "emu.h"
#include "mir.h"
#include "regalloc.h"
#include "passtest.h"
#include "testutil.h"

/* ---- the spill code, inline ----------------------------------------------- */

static int V(MFunc *f, int cls, int size)
{
	return mir_vreg(f, cls, size);
}

/* n VGPRs live at once (v_mov_b32 vi, i), then summed: demand n + 1. */
static int many_live(MFunc *f, int n)
{
	int *w = malloc(sizeof(int) * (size_t)n), acc;
	cr_assert(w);
	for (int i = 0; i < n; i++) {
		w[i] = V(f, MR_V, 1);
		MInst *mi = mir_emit(f, ISA_V_MOV_B32, 1);
		mi_vreg(mi, 0, f, w[i], 0, 1);
		mi_phys(mi, 1, isa_const_u32(ISA_TY_B32, (uint32_t)i));
	}
	acc = w[0];
	for (int i = 1; i < n; i++) {
		int t = V(f, MR_V, 1);
		MInst *mi = mir_emit(f, ISA_V_ADD_U32, 1);
		mi_vreg(mi, 0, f, t, 0, 1);
		mi_vreg(mi, 1, f, acc, 0, 1);
		mi_vreg(mi, 2, f, w[i], 0, 1);
		acc = t;
	}
	free(w);
	return acc;
}

static char *spill_snippet(ta_target t, int vlimit, int alimit, int wave_sgpr, RaSpillStats *st)
{
	MFunc f;
	mir_init(&f, t);
	mir_block(&f);
	int acc = many_live(&f, 20);
	MInst *mi = mir_emit(&f, ISA_DS_WRITE_B32, 0);
	mi_vreg(mi, 0, &f, acc, 0, 1);
	mi_vreg(mi, 1, &f, acc, 0, 1);
	mir_emit(&f, ISA_S_ENDPGM, 0);
	RaOptions opt = {{0, vlimit, alimit}};
	RaResult r;
	Diag d;
	diag_init(&d);
	cr_assert_eq(ra_allocate_spill(&f, &opt, wave_sgpr, &r, st, NULL, &d), 0, "%s", diag_text(&d));
	StrBuf err = {0};
	cr_assert_eq(ra_validate(&f, r.phys, &err), 0, "%s", err.buf ? err.buf : "");
	cr_assert_leq(r.used[MR_V], vlimit);
	if (st->scratch_rsrc)
		cr_assert_eq(r.phys[st->scratch_rsrc - 1], 0, "the V# must be s[0:3]");
	return mir_encoded_text(&f, &r, &d);
}

/* gfx1100 with 12 VGPRs: no AGPRs, so the longest-lived values go to
 * scratch, 4 bytes apart, exactly as many as the demand (21) exceeds the
 * file with a temporary (10 = 21 + 1 - 12): each stored right after its definition and
 * reloaded into a one-instruction temporary before its use, by scratch_*
 * with no address registers (architected flat scratch: the hardware points
 * FLAT_SCRATCH at the wave's area).  (amd_waitcnt adds the vmcnt waits.) */
Test(scratch, gfx1100_snippet)
{
	RaSpillStats st;
	char *got = spill_snippet(TA_TARGET_GFX1100, 12, 0, 0, &st);
	cr_expect_eq(st.scratch_spills, 10, "%d", st.scratch_spills);
	cr_expect_eq(st.agpr_spills, 0);
	cr_expect_eq(st.vgpr_spills, st.scratch_spills);
	cr_expect_eq(st.scratch_bytes, 4 * st.scratch_spills);
	cr_expect_eq(st.scratch_rsrc, 0);
	cr_expect(!strncmp(got,
			   "\tv_mov_b32_e32 v0, 0\n"
			   "\tscratch_store_b32 off, v0, off\n"
			   "\tv_mov_b32_e32 v0, 1\n"
			   "\tscratch_store_b32 off, v0, off offset:4\n"
			   "\tv_mov_b32_e32 v0, 2\n"
			   "\tscratch_store_b32 off, v0, off offset:8\n", 150),
		  "%s", got);
	cr_expect(strstr(got, "\tscratch_load_b32 v11, off, off offset:36\n"
			      "\tv_add_nc_u32_e32 v10, v10, v11\n"
			      "\tv_add_nc_u32_e32 v0, v10, v0\n") != NULL,
		  "%s", got);
	free(got);
}

/* gfx942 with 4 AGPRs: the first four spills take the AGPRs, the rest go
 * to scratch from offset 0. */
Test(scratch, gfx942_agprs_first_then_scratch)
{
	RaSpillStats st;
	char *got = spill_snippet(TA_TARGET_GFX942, 12, 4, 0, &st);
	cr_expect_eq(st.agpr_spills, 4, "%d", st.agpr_spills);
	cr_expect_eq(st.scratch_spills, 6, "%d", st.scratch_spills);
	cr_expect_eq(st.vgpr_spills, st.agpr_spills + st.scratch_spills);
	cr_expect(strstr(got, "\tv_mov_b32_e32 v0, 3\n"
			      "\tv_accvgpr_write_b32 a3, v0\n"
			      "\tv_mov_b32_e32 v0, 4\n"
			      "\tscratch_store_dword off, v0, off\n"
			      "\tv_mov_b32_e32 v0, 5\n"
			      "\tscratch_store_dword off, v0, off offset:4\n") != NULL,
		  "%s", got);
	cr_expect(strstr(got, "\tscratch_load_dword v11, off, off offset:20\n") != NULL, "%s", got);
	free(got);
}

/* gfx90a: MUBUF through the private segment V#: the wave offset (here s6)
 * is added into the base of s[0:3] before anything else runs, and the V#
 * vreg gets s[0:3] itself (its copy of s[2:3] vanishes). */
Test(scratch, gfx90a_snippet)
{
	RaSpillStats st;
	char *got = spill_snippet(TA_TARGET_GFX90A, 12, 1, 6, &st);
	cr_expect_eq(st.agpr_spills, 1);
	cr_expect_eq(st.scratch_spills, 9, "%d", st.scratch_spills);
	cr_assert_gt(st.scratch_rsrc, 0);
	cr_expect(!strncmp(got,
			   "\ts_add_u32 s0, s0, s6\n"
			   "\ts_addc_u32 s1, s1, 0\n"
			   "\tv_mov_b32_e32 v0, 0\n"
			   "\tv_accvgpr_write_b32 a0, v0\n"
			   "\tv_mov_b32_e32 v0, 1\n"
			   "\tbuffer_store_dword v0, off, s[0:3], 0\n"
			   "\tv_mov_b32_e32 v0, 2\n"
			   "\tbuffer_store_dword v0, off, s[0:3], 0 offset:4\n", 200),
		  "%s", got);
	cr_expect(strstr(got, "\tbuffer_load_dword v11, off, s[0:3], 0 offset:32\n") != NULL, "%s", got);
	free(got);
}

/* Without the wave offset SGPR (ra_allocate_spill) gfx90a cannot spill to
 * scratch: a clear error, not wrong code. */
Test(scratch, gfx90a_without_wave_offset_fails)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX90A);
	mir_block(&f);
	int acc = many_live(&f, 20);
	MInst *mi = mir_emit(&f, ISA_DS_WRITE_B32, 0);
	mi_vreg(mi, 0, &f, acc, 0, 1);
	mi_vreg(mi, 1, &f, acc, 0, 1);
	mir_emit(&f, ISA_S_ENDPGM, 0);
	RaOptions opt = {{0, 12, 1}};
	RaResult r;
	Diag d;
	diag_init(&d);
	cr_assert_eq(ra_allocate_spill(&f, &opt, 0, &r, NULL, NULL, &d), -1);
	cr_expect(strstr(diag_text(&d), "wave offset") != NULL, "%s", diag_text(&d));
	diag_free(&d);
	mir_free(&f);
}

/* More than 4 KiB of slots per work-item (beyond the immediate offset's
 * reach) is a clear error. */
Test(scratch, beyond_4k_per_work_item_fails)
{
	MFunc f;
	mir_init(&f, TA_TARGET_GFX1100);
	mir_block(&f);
	int acc = many_live(&f, 1200);
	MInst *mi = mir_emit(&f, ISA_DS_WRITE_B32, 0);
	mi_vreg(mi, 0, &f, acc, 0, 1);
	mi_vreg(mi, 1, &f, acc, 0, 1);
	mir_emit(&f, ISA_S_ENDPGM, 0);
	RaOptions opt = {{0, 12, 0}};
	RaResult r;
	Diag d;
	diag_init(&d);
	cr_assert_eq(ra_allocate_spill(&f, &opt, 0, &r, NULL, NULL, &d), -1);
	cr_expect(strstr(diag_text(&d), "more than 4096 bytes of scratch per work-item") != NULL, "%s", diag_text(&d));
	diag_free(&d);
	mir_free(&f);
}

/* ---- examples forced to spill run like their unconstrained builds -------- */

#include "ir.h"

typedef struct {
	const char *ex, *target;
	int ndef;
	Define def[3];
	int limit[MR_NCLASS]; /* forced register files */
	int mc;               /* also assemble its source with llvm-mc-19 */
} Case;

typedef struct {
	int nbuf;
	uint8_t *host[8];
	size_t bytes[8];
} Result;

/* Deterministic inputs: 16-bit halves with magnitudes 0.5 .. 2 (f16), or
 * f32 values in the same range. */
static void fill(uint8_t *p, size_t bytes, int esize, uint32_t seed)
{
	for (size_t i = 0; i + (size_t)esize <= bytes; i += (size_t)esize) {
		seed = seed * 1664525u + 1013904223u;
		if (esize == 2) {
			uint16_t h = (uint16_t)(((seed >> 31) << 15) | ((14u + ((seed >> 20) & 1)) << 10) | ((seed >> 8) & 1023));
			memcpy(p + i, &h, 2);
		} else {
			float f = (float)((seed >> 8) & 0xffff) / 65536.0f * 1.5f + 0.5f;
			if (seed >> 31)
				f = -f;
			memcpy(p + i, &f, 4);
		}
	}
}

/* Runs kernel 0 of out on the emulator: every tensor gets its exact size,
 * scalars (eps) 1e-5; returns every buffer's bytes after the run. */
static void run(const Module *m, const Target *t, const AmdOutput *out, Result *res)
{
	const AmdKernelInfo *ki = &out->kernels[0];
	const Kernel *k = &m->kernels.data[0];
	Diag d;
	diag_init(&d);
	EmuDevice *dev = emu_create(t->id);
	cr_assert(dev);
	cr_assert_eq(emu_load(dev, out->code_object, out->code_object_len, &d), 0, "%s", diag_text(&d));
	uint8_t karg[512];
	memset(karg, 0, sizeof karg);
	uint64_t dptr[8];
	res->nbuf = 0;
	for (int p = 0; p < ki->nparams; p++) {
		const SimtParam *sp = &ki->params[p];
		if (sp->kind != PK_TENSOR) {
			float eps = 1e-5f;
			cr_assert_eq(sp->vt, VT_F32, "scalar %s", sp->name);
			memcpy(karg + ki->param_offset[p], &eps, 4);
			continue;
		}
		const Buffer *b = &m->bufs.data[k->args[sp->arg].buf];
		size_t n = (size_t)dtype_bytes((DType)b->dtype);
		for (int dm = 0; dm < b->rank; dm++)
			n *= (size_t)ir_buf_dim(m, b, dm);
		int i = res->nbuf++;
		cr_assert_lt(i, 8);
		res->bytes[i] = n;
		res->host[i] = malloc(n);
		cr_assert(res->host[i]);
		fill(res->host[i], n, dtype_bytes((DType)b->dtype), 777u + (uint32_t)i);
		cr_assert((dptr[i] = emu_alloc(dev, n)));
		cr_assert_eq(emu_write(dev, dptr[i], res->host[i], n, &d), 0);
		memcpy(karg + ki->param_offset[p], &dptr[i], 8);
	}
	int64_t vals[16] = {0};
	uint32_t grid[3] = {1, 1, 1}, block[3] = {(uint32_t)ki->threads, 1, 1};
	cr_assert_eq(ir_grid(m, 0, vals, grid), 0);
	cr_assert_eq(emu_launch(dev, ki->name, grid, block, karg, ki->kernarg_size, 0, &d), 0, "%s %s: %s",
		     ki->name, target_name(t->id), diag_text(&d));
	for (int i = 0; i < res->nbuf; i++)
		cr_assert_eq(emu_read(dev, dptr[i], res->host[i], res->bytes[i], &d), 0);
	emu_destroy(dev);
	diag_free(&d);
}

static void result_free(Result *r)
{
	for (int i = 0; i < r->nbuf; i++)
		free(r->host[i]);
	r->nbuf = 0;
}

/* Runs the tool at argv (NULL-terminated) with stdout to `out`; returns
 * the exit status, or -1 if it could not run. */
static int run_tool(char *const argv[], const char *out)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		FILE *f = freopen(out, "w", stdout);
		if (!f)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int oracle_exists(const char *path)
{
	return access(path, X_OK) == 0;
}

/* The oracles on one scratch code object: llvm-objdump-19 decodes every
 * instruction (no <unknown>), llvm-readelf-19 --notes shows the private
 * segment size and the spill count amd_compile reported. */
static void check_with_llvm(const Case *c, const AmdOutput *out)
{
	static const char *const tools[] = {"/usr/bin/llvm-objdump-19", "/usr/bin/llvm-readelf-19"};
	for (int i = 0; i < 2; i++)
		cr_assert(oracle_exists(tools[i]), "%s is missing: install llvm-19 (a test-time oracle)", tools[i]);
	char obj[] = "/tmp/tileasm_scratch_XXXXXX";
	int fd = mkstemp(obj);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, out->code_object, out->code_object_len), (ssize_t)out->code_object_len);
	close(fd);
	char txt[64];
	snprintf(txt, sizeof txt, "%s.txt", obj);
	char mcpu[32];
	snprintf(mcpu, sizeof mcpu, "--mcpu=%s", c->target);
	char *dis[] = {(char *)tools[0], "-d", mcpu, obj, NULL};
	cr_assert_eq(run_tool(dis, txt), 0, "llvm-objdump-19 failed on %s %s", c->ex, c->target);
	size_t len;
	char *text = read_file(txt, &len);
	cr_assert(text);
	cr_expect(strstr(text, "<unknown>") == NULL, "%s %s: llvm-objdump cannot decode:\n%s", c->ex, c->target, text);
	const char *store = !strcmp(c->target, "gfx1100") ? "scratch_store_b32 off, v"
			    : !strcmp(c->target, "gfx90a") ? "buffer_store_dword v" : "scratch_store_dword off, v";
	cr_expect(strstr(text, store) != NULL, "%s %s: no '%s' in\n%.2000s", c->ex, c->target, store, text);
	free(text);
	char *notes[] = {(char *)tools[1], "--notes", obj, NULL};
	cr_assert_eq(run_tool(notes, txt), 0);
	text = read_file(txt, &len);
	cr_assert(text);
	char want[64];
	snprintf(want, sizeof want, ".private_segment_fixed_size: %d\n", out->kernels[0].scratch_bytes);
	cr_expect(strstr(text, want) != NULL, "%s %s: want '%s' in\n%s", c->ex, c->target, want, text);
	const char *v = strstr(text, ".vgpr_spill_count: ");
	cr_expect(v && atoi(v + 19) > 0, "%s %s: no VGPR spills in the notes", c->ex, c->target);
	free(text);
	unlink(txt);
	unlink(obj);
}

/* The descriptor against llvm-mc-19: the code object as assembly source
 * (what --dump-isa prints: .amdhsa_* directives with the private segment
 * size and enable, the code, the metadata) assembled by llvm-mc-19 and
 * linked by ld.lld-19 must give the same 64 descriptor bytes and .text. */
static void check_descriptor_with_llvm_mc(const Case *c, const AmdOutput *out)
{
	static const char *const tools[] = {"/usr/bin/llvm-mc-19", "/usr/bin/ld.lld-19"};
	for (int i = 0; i < 2; i++)
		cr_assert(oracle_exists(tools[i]), "%s is missing: install llvm-19 (a test-time oracle)", tools[i]);
	Diag d;
	diag_init(&d);
	StrBuf src = {0};
	cr_assert_eq(co_source(out->code_object, out->code_object_len, 0, &src, &d), 0, "%s", diag_text(&d));
	char dir[] = "/tmp/tileasm_scratch_mc_XXXXXX";
	cr_assert(mkdtemp(dir));
	char path[128], cmd[1024];
	snprintf(path, sizeof path, "%s/k.s", dir);
	/* llvm-mc-19 does not know .amdhsa_inst_pref_size (0 here, its default). */
	char *ip = strstr(src.buf, ".amdhsa_inst_pref_size 0\n");
	if (ip)
		memset(ip, ' ', strlen(".amdhsa_inst_pref_size 0"));
	/* The metadata is checked through llvm-readelf above; llvm-mc-19 only
	 * gets the code and the descriptor directives. */
	char *md = strstr(src.buf, "\t.amdgpu_metadata");
	if (md)
		*md = 0;
	cr_assert_eq(write_file_atomic(path, src.buf, strlen(src.buf)), 0);
	snprintf(cmd, sizeof cmd,
		 "%s -triple=amdgcn-amd-amdhsa -mcpu=%s -filetype=obj %s/k.s -o %s/k.o > %s/log 2>&1 && "
		 "%s -shared %s/k.o -o %s/k.co >> %s/log 2>&1",
		 tools[0], c->target, dir, dir, dir, tools[1], dir, dir, dir);
	int rc = system(cmd);
	snprintf(path, sizeof path, "%s/log", dir);
	size_t len;
	char *log = read_file(path, &len);
	cr_assert_eq(rc, 0, "%s %s: llvm-mc/ld.lld failed:\n%s", c->ex, c->target, log ? log : "");
	free(log);
	snprintf(path, sizeof path, "%s/k.co", dir);
	uint8_t *ref = (uint8_t *)read_file(path, &len);
	cr_assert(ref);
	CoObject *a = NULL, *b = NULL;
	cr_assert_eq(co_read(out->code_object, out->code_object_len, &a, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(co_read(ref, len, &b, &d), 0, "%s", diag_text(&d));
	cr_assert_eq(a->nkernels, 1);
	cr_assert_eq(b->nkernels, 1);
	cr_assert_gt(a->kernels[0].desc.private_segment_fixed_size, 0);
	cr_assert_eq(a->kernels[0].desc.rsrc2 & 1, 1, "private segment (wave offset) enable");
	for (int i = 0; i < CO_KD_SIZE; i++)
		if (i < 16 || i >= 24) /* not the entry offset: without a note the layout differs */
			cr_assert_eq(a->kernels[0].kd[i], b->kernels[0].kd[i],
			     "%s %s: descriptor byte %d: ours 0x%02x, llvm-mc 0x%02x", c->ex, c->target, i,
			     a->kernels[0].kd[i], b->kernels[0].kd[i]);
	cr_assert_eq(a->text_size, b->text_size);
	cr_assert(!memcmp(a->text, b->text, a->text_size), "%s %s: .text differs from llvm-mc's", c->ex, c->target);
	co_object_free(a);
	co_object_free(b);
	free(ref);
	sb_free(&src);
	diag_free(&d);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Compiles c unconstrained and at its limits, runs both, compares. */
static void check_case(const Case *c)
{
	char rel[512];
	snprintf(rel, sizeof rel, "examples/%s.tile", c->ex);
	Module *m = load_src(rel, c->def, c->ndef);
	Diag d;
	diag_init(&d);
	Target t;
	cr_assert(target_parse(c->target, &t) == 0);
	Result res[2];
	for (int pass = 0; pass < 2; pass++) {
		AmdOutput out = {0};
		out.want_listing = 1;
		if (pass)
			memcpy(out.reg_limit, c->limit, sizeof out.reg_limit);
		cr_assert_eq(amd_compile(m, &t, &out, &d), 0, "%s %s: %s", c->ex, c->target, diag_text(&d));
		const AmdKernelInfo *ki = &out.kernels[0];
		if (pass) {
			cr_assert_gt(ki->scratch_bytes, 0, "%s %s: the limits no longer force scratch spills", c->ex,
				     c->target);
			cr_assert(strstr(out.listing.buf, " in scratch ("), "%s", out.listing.buf);
			if (c->limit[MR_V])
				cr_assert_leq(ki->vgprs, c->limit[MR_V]);
			check_with_llvm(c, &out);
			if (c->mc)
				check_descriptor_with_llvm_mc(c, &out);
		} else {
			cr_assert_eq(ki->scratch_bytes, 0);
		}
		run(m, &t, &out, &res[pass]);
		amd_output_free(&out);
	}
	cr_assert_eq(res[0].nbuf, res[1].nbuf);
	for (int i = 0; i < res[0].nbuf; i++)
		cr_assert(!memcmp(res[0].host[i], res[1].host[i], res[0].bytes[i]),
			  "%s %s: buffer %d differs from the unconstrained build", c->ex, c->target, i);
	result_free(&res[0]);
	result_free(&res[1]);
	diag_free(&d);
	ir_module_free(m);
}

/* Every target, tiny VGPR files (and 4 AGPRs on CDNA, so that most spills
 * find the AGPRs full): softmax and layernorm on ragged shapes (M not a
 * multiple of the 4 rows per block, N not of 256: guarded loads and stores
 * run under partial exec), gemm with its MFMA/WMMA accumulators (at 128
 * VGPRs the accumulators themselves are spilled). */
Test(scratch, examples_spill_to_scratch_and_run_like_unconstrained)
{
	static const Case cs[] = {
		{"softmax", "gfx1100", 2, {{"M", 37}, {"N", 300}}, {0, 18, 0}, 1},
		{"softmax", "gfx942", 2, {{"M", 37}, {"N", 300}}, {0, 18, 4}, 1},
		{"softmax", "gfx90a", 2, {{"M", 37}, {"N", 300}}, {0, 18, 4}, 1},
		{"layernorm", "gfx1100", 2, {{"M", 21}, {"N", 520}}, {0, 20, 0}, 0},
		{"layernorm", "gfx942", 2, {{"M", 21}, {"N", 520}}, {0, 20, 4}, 0},
		{"layernorm", "gfx90a", 2, {{"M", 21}, {"N", 520}}, {0, 20, 4}, 0},
		{"gemm", "gfx1100", 3, {{"M", 128}, {"N", 128}, {"K", 64}}, {0, 160, 0}, 0},
		{"gemm", "gfx942", 3, {{"M", 128}, {"N", 128}, {"K", 64}}, {0, 152, 4}, 0},
		{"gemm", "gfx90a", 3, {{"M", 128}, {"N", 128}, {"K", 64}}, {0, 152, 4}, 0},
		/* far below what gemm needs: the WMMA/MFMA accumulators spill too */
		{"gemm", "gfx1100", 3, {{"M", 128}, {"N", 128}, {"K", 64}}, {0, 128, 0}, 0},
		{"gemm", "gfx942", 3, {{"M", 128}, {"N", 128}, {"K", 64}}, {0, 128, 4}, 0},
		{"gemm", "gfx90a", 3, {{"M", 128}, {"N", 128}, {"K", 64}}, {0, 128, 4}, 0},
	};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
		check_case(&cs[i]);
}

/* The other examples at tiny files: SGPRs also spill (to VGPR lanes, which
 * then compete with the VGPR spills), one wave per block. */
Test(scratch, small_examples_at_tiny_files)
{
	static const Case cs[] = {
		{"vector_add", "gfx1100", 1, {{"N", 3000}}, {8, 8, 0}, 0},
		{"reduce_sum", "gfx1100", 2, {{"M", 19}, {"N", 700}}, {0, 10, 0}, 0},
		{"reduce_sum", "gfx942", 2, {{"M", 19}, {"N", 700}}, {0, 10, 2}, 0},
		{"reduce_sum", "gfx90a", 2, {{"M", 19}, {"N", 700}}, {0, 10, 2}, 0},
		{"rmsnorm", "gfx1100", 2, {{"M", 13}, {"N", 600}}, {0, 14, 0}, 0},
		{"rmsnorm", "gfx942", 2, {{"M", 13}, {"N", 600}}, {0, 14, 2}, 0},
		{"rmsnorm", "gfx90a", 2, {{"M", 13}, {"N", 600}}, {0, 14, 2}, 0},
	};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
		check_case(&cs[i]);
}

/* ---- the emulator's scratch ---------------------------------------------- */

/* A kernel (assembled here) whose lanes store their id plus a per-target
 * tag to scratch at per-lane offset `off`, read it back and write it to
 * out[global id].  gfx942/gfx1100: scratch_* with FLAT_SCRATCH set by the
 * hardware; gfx90a: the private segment V# in s[0:3] plus the wave offset
 * in s7 (after the kernarg pointer s[4:5] and workgroup id x s6), the
 * prologue clang writes. */
static char *scratch_kernel(ta_target t, int off, int priv, int no_store)
{
	StrBuf sb = {0};
	int g11 = t == TA_TARGET_GFX1100, g90a = t == TA_TARGET_GFX90A;
	int ka = g90a ? 4 : 0, wg = g90a ? 6 : 2; /* no gfx1100 padding from directives */
	sb_puts(&sb, ".text\n.globl k\n.p2align 8\n.type k,@function\nk:\n");
	if (g90a)
		sb_puts(&sb, "  s_add_u32 s0, s0, s7\n  s_addc_u32 s1, s1, 0\n");
	sb_printf(&sb, "  %s s[8:9], s[%d:%d], 0x0\n", g11 ? "s_load_b64" : "s_load_dwordx2", ka, ka + 1);
	sb_printf(&sb, "  s_lshl_b32 s10, s%d, 6\n", wg);
	sb_printf(&sb, "  %s v1, s10, v0\n", g11 ? "v_add_nc_u32" : "v_add_u32");
	sb_printf(&sb, "  %s v2, 0x1000, v1\n", g11 ? "v_add_nc_u32_e32" : "v_add_u32_e32");
	if (g11)
		sb_printf(&sb, "  %sscratch_store_b32 off, v2, off offset:%d\n  scratch_load_b32 v3, off, off offset:%d\n",
			  no_store ? "; " : "", off, off);
	else if (g90a)
		sb_printf(&sb, "  %sbuffer_store_dword v2, off, s[0:3], 0 offset:%d\n  buffer_load_dword v3, off, s[0:3], "
			  "0 offset:%d\n", no_store ? "; " : "", off, off);
	else
		sb_printf(&sb, "  %sscratch_store_dword off, v2, off offset:%d\n  scratch_load_dword v3, off, off "
			  "offset:%d\n", no_store ? "; " : "", off, off);
	sb_puts(&sb, "  v_lshlrev_b32_e32 v1, 2, v1\n  s_waitcnt vmcnt(0) lgkmcnt(0)\n");
	sb_puts(&sb, g11 ? "  global_store_b32 v1, v3, s[8:9]\n" : "  global_store_dword v1, v3, s[8:9]\n");
	sb_puts(&sb, "  s_endpgm\n.Lend:\n  .size k, .Lend-k\n.rodata\n.p2align 6\n.amdhsa_kernel k\n");
	sb_puts(&sb, "  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_system_sgpr_workgroup_id_x 1\n");
	sb_printf(&sb, "  .amdhsa_kernarg_size 8\n  .amdhsa_next_free_sgpr 16\n  .amdhsa_private_segment_fixed_size %d\n",
		  priv);
	if (g90a)
		sb_puts(&sb, "  .amdhsa_user_sgpr_private_segment_buffer 1\n"
			     "  .amdhsa_system_sgpr_private_segment_wavefront_offset 1\n");
	else
		sb_puts(&sb, "  .amdhsa_enable_private_segment 1\n");
	sb_puts(&sb, g11 ? "  .amdhsa_next_free_vgpr 8\n" : "  .amdhsa_next_free_vgpr 8\n  .amdhsa_accum_offset 8\n");
	sb_puts(&sb, ".end_amdhsa_kernel\n");
	return sb_take(&sb);
}

/* Runs it on 3 workgroups of 100 work-items; returns emu_launch's status,
 * the error text in err. */
static int run_scratch_kernel(ta_target t, int off, int priv, int no_store, uint32_t *out, char **err)
{
	char *text = scratch_kernel(t, off, priv, no_store);
	Target tg;
	memset(&tg, 0, sizeof tg);
	tg.id = t;
	SrcFile src = {"scratch.s", text, strlen(text)};
	Diag d;
	diag_init(&d);
	uint8_t *co = NULL;
	size_t colen = 0;
	cr_assert_eq(co_assemble(&tg, 0, &src, &co, &colen, &d), 0, "%s\n%s", diag_text(&d), text);
	EmuDevice *dev = emu_create(t);
	cr_assert(dev);
	cr_assert_eq(emu_load(dev, co, colen, &d), 0, "%s", diag_text(&d));
	uint64_t o = emu_alloc(dev, 4 * 192);
	cr_assert(o);
	uint32_t grid[3] = {3, 1, 1}, block[3] = {64, 1, 1};
	int rc = emu_launch(dev, "k", grid, block, &o, 8, 0, &d);
	if (!rc)
		cr_assert_eq(emu_read(dev, o, out, 4 * 192, &d), 0);
	*err = strdup(diag_text(&d));
	emu_destroy(dev);
	diag_free(&d);
	free(co);
	free(text);
	return rc;
}

Test(scratch, emulator_private_memory_per_lane_and_bounds)
{
	static const ta_target ts[] = {TA_TARGET_GFX1100, TA_TARGET_GFX942, TA_TARGET_GFX90A};
	for (int i = 0; i < 3; i++) {
		uint32_t out[192];
		char *err;
		/* The last dword of a 16-byte private segment: every lane reads back its own value. */
		cr_assert_eq(run_scratch_kernel(ts[i], 12, 16, 0, out, &err), 0, "%s: %s", target_name(ts[i]), err);
		free(err);
		for (uint32_t g = 0; g < 192; g++)
			cr_assert_eq(out[g], 0x1000 + g, "%s: out[%u] = 0x%x", target_name(ts[i]), g, out[g]);
		/* One dword past it: an emulator error naming the offset, not a crash. */
		cr_assert_eq(run_scratch_kernel(ts[i], 16, 16, 0, out, &err), -1, "%s", target_name(ts[i]));
		cr_expect(strstr(err, "scratch access of 4 bytes at offset 16 is outside the private segment (16 bytes"),
			  "%s: %s", target_name(ts[i]), err);
		free(err);
		/* A reload of a slot nothing stored (a spill code bug) is caught too. */
		cr_assert_eq(run_scratch_kernel(ts[i], 8, 16, 1, out, &err), -1, "%s", target_name(ts[i]));
		cr_expect(strstr(err, "lane 0 reads scratch offset 8, which nothing has written"), "%s: %s",
			  target_name(ts[i]), err);
		free(err);
	}
}

/* ---- the encoding the spill code relies on -------------------------------- */

/* Scratch with neither address register ("ST" mode) exists on gfx942 and
 * gfx1100 (bytes as llvm-mc-19 -show-encoding gives them) but not on
 * gfx90a, which llvm-mc-19 rejects and we therefore never emit. */
Test(scratch, no_address_form_encodes_like_llvm_mc)
{
	static const struct {
		ta_target t;
		const char *text;
		uint8_t want[8];
	} cs[] = {
		{TA_TARGET_GFX942, "scratch_store_dword off, v1, off offset:4", {0x04, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x7f, 0x00}},
		{TA_TARGET_GFX942, "scratch_load_dword v1, off, off offset:8", {0x08, 0x40, 0x50, 0xdc, 0x00, 0x00, 0x7f, 0x01}},
		{TA_TARGET_GFX1100, "scratch_store_b32 off, v1, off offset:4", {0x04, 0x00, 0x69, 0xdc, 0x00, 0x01, 0x7c, 0x00}},
		{TA_TARGET_GFX1100, "scratch_load_b32 v1, off, off offset:8", {0x08, 0x00, 0x51, 0xdc, 0x00, 0x00, 0x7c, 0x01}},
	};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		SrcFile src = {"t.s", cs[i].text, strlen(cs[i].text)};
		Diag d;
		diag_init(&d);
		IsaInsn in;
		cr_assert_eq(isa_parse_insn(cs[i].t, cs[i].text, &in, &src, (SrcPos){1, 1}, &d), 0, "%s", diag_text(&d));
		uint8_t out[16];
		cr_assert_eq(isa_encode(cs[i].t, &in, out, &d), 8, "%s: %s", cs[i].text, diag_text(&d));
		cr_assert(!memcmp(out, cs[i].want, 8), "%s", cs[i].text);
		diag_free(&d);
	}
	const char *text = "scratch_store_dword off, v1, off offset:4";
	SrcFile src = {"t.s", text, strlen(text)};
	Diag d;
	diag_init(&d);
	IsaInsn in;
	int rc = isa_parse_insn(TA_TARGET_GFX90A, text, &in, &src, (SrcPos){1, 1}, &d);
	uint8_t out[16];
	if (!rc)
		rc = isa_encode(TA_TARGET_GFX90A, &in, out, &d) < 0 ? -1 : 0;
	cr_assert_eq(rc, -1, "gfx90a must reject scratch without an address");
	cr_expect(strstr(diag_text(&d), "not valid for this GPU"), "%s", diag_text(&d));
	diag_free(&d);
}
