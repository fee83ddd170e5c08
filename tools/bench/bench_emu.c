/* bench_emu.c — AMD emulator speed: instructions executed per second (all
 * waves summed) for a few gfx942 kernels, median of several runs, so test
 * sizes can be chosen from the figures.  Kernels are assembled here with
 * tileasm's own assembler (co_assemble).
 *
 *   bench_emu [--runs=5]
 *
 * Kernels: vadd at several sizes (memory-bound, short waves: launch and
 * wave-setup cost dominate small sizes), lds (16 rounds of LDS write,
 * s_barrier, neighbour read per wave, 4 waves per workgroup), mfma (a loop
 * of v_mfma_f32_32x32x8_f16 with the wait states it needs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codeobj.h"
#include "emu.h"

static const char vadd_src[] =
	".text\n.globl vadd\n.p2align 8\n.type vadd,@function\nvadd:\n"
	"  s_load_dwordx4 s[4:7], s[0:1], 0x0\n"
	"  s_load_dwordx2 s[8:9], s[0:1], 0x10\n"
	"  s_load_dword s3, s[0:1], 0x18\n"
	"  v_lshl_add_u32 v1, s2, 8, v0\n"
	"  s_waitcnt lgkmcnt(0)\n"
	"  v_cmp_gt_u32 vcc, s3, v1\n"
	"  s_and_saveexec_b64 s[10:11], vcc\n"
	"  s_cbranch_execz .Ldone\n"
	"  v_lshlrev_b32 v2, 2, v1\n"
	"  global_load_dword v3, v2, s[4:5]\n"
	"  global_load_dword v4, v2, s[6:7]\n"
	"  s_waitcnt vmcnt(0)\n"
	"  v_add_f32 v3, v3, v4\n"
	"  global_store_dword v2, v3, s[8:9]\n"
	".Ldone:\n  s_endpgm\n"
	".rodata\n.p2align 6\n.amdhsa_kernel vadd\n"
	"  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size 28\n"
	"  .amdhsa_next_free_vgpr 8\n  .amdhsa_next_free_sgpr 12\n  .amdhsa_accum_offset 8\n"
	".end_amdhsa_kernel\n";

/* 16 rounds: store to LDS[tid], barrier, load LDS[(tid + 1) % 256], add. */
static const char lds_src[] =
	".text\n.globl lds\n.p2align 8\n.type lds,@function\nlds:\n"
	"  s_load_dwordx2 s[4:5], s[0:1], 0x0\n"
	"  v_lshlrev_b32 v1, 2, v0\n"
	"  v_add_u32 v2, 4, v1\n"
	"  v_and_b32 v2, 0x3ff, v2\n"
	"  v_mov_b32 v3, v0\n"
	"  s_mov_b32 s6, 16\n"
	".Lloop:\n"
	"  ds_write_b32 v1, v3\n"
	"  s_waitcnt lgkmcnt(0)\n"
	"  s_barrier\n"
	"  ds_read_b32 v4, v2\n"
	"  s_waitcnt lgkmcnt(0)\n"
	"  s_barrier\n"
	"  v_add_u32 v3, v3, v4\n"
	"  s_sub_u32 s6, s6, 1\n"
	"  s_cmp_lg_u32 s6, 0\n"
	"  s_cbranch_scc1 .Lloop\n"
	"  v_lshl_add_u32 v5, s2, 8, v0\n"
	"  v_lshlrev_b32 v5, 2, v5\n"
	"  s_waitcnt lgkmcnt(0)\n"
	"  global_store_dword v5, v3, s[4:5]\n"
	"  s_endpgm\n"
	".rodata\n.p2align 6\n.amdhsa_kernel lds\n"
	"  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size 8\n"
	"  .amdhsa_group_segment_fixed_size 1024\n"
	"  .amdhsa_next_free_vgpr 8\n  .amdhsa_next_free_sgpr 12\n  .amdhsa_accum_offset 8\n"
	".end_amdhsa_kernel\n";

/* 64 MFMAs accumulating into v[4:19], the result stored per lane. */
static const char mfma_src[] =
	".text\n.globl mfma\n.p2align 8\n.type mfma,@function\nmfma:\n"
	"  s_load_dwordx2 s[4:5], s[0:1], 0x0\n"
	"  v_mov_b32 v2, 0x3c003c00\n"
	"  v_mov_b32 v3, 0x38003800\n"
	"  v_mfma_f32_32x32x8_f16 v[4:19], v[2:3], v[2:3], 0\n"
	"  s_mov_b32 s6, 63\n"
	".Lloop:\n"
	"  v_mfma_f32_32x32x8_f16 v[4:19], v[2:3], v[2:3], v[4:19]\n"
	"  s_sub_u32 s6, s6, 1\n"
	"  s_cmp_lg_u32 s6, 0\n"
	"  s_cbranch_scc1 .Lloop\n"
	"  s_nop 15\n  s_nop 3\n"
	"  v_lshl_add_u32 v1, s2, 6, v0\n"
	"  v_lshlrev_b32 v1, 2, v1\n"
	"  s_waitcnt lgkmcnt(0)\n"
	"  global_store_dword v1, v19, s[4:5]\n"
	"  s_endpgm\n"
	".rodata\n.p2align 6\n.amdhsa_kernel mfma\n"
	"  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size 8\n"
	"  .amdhsa_next_free_vgpr 24\n  .amdhsa_next_free_sgpr 12\n  .amdhsa_accum_offset 24\n"
	".end_amdhsa_kernel\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static EmuDevice *load(const char *name, const char *text)
{
	Target t;
	memset(&t, 0, sizeof t);
	t.id = TA_TARGET_GFX942;
	SrcFile src = {name, text, strlen(text)};
	Diag d;
	diag_init(&d);
	uint8_t *co = NULL;
	size_t n = 0;
	EmuDevice *dev = NULL;
	if (co_assemble(&t, 0, &src, &co, &n, &d) == 0 && (dev = emu_create(TA_TARGET_GFX942)) &&
	    emu_load(dev, co, n, &d)) {
		emu_destroy(dev);
		dev = NULL;
	}
	if (!dev)
		fprintf(stderr, "bench_emu: %s: %s\n", name, diag_text(&d));
	free(co);
	diag_free(&d);
	return dev;
}

/* Runs kernel `name` `runs` times; prints the median instructions/s. */
static int bench(EmuDevice *dev, const char *label, const char *name, uint32_t groups, uint32_t block,
		 const void *ka, size_t kn, int runs)
{
	double t[64], mips = 0;
	uint64_t insns = 0;
	for (int r = 0; r < runs && r < 64; r++) {
		emu_reset_stats(dev);
		Diag d;
		diag_init(&d);
		uint32_t grid[3] = {groups, 1, 1}, blk[3] = {block, 1, 1};
		double t0 = now();
		int rc = emu_launch(dev, name, grid, blk, ka, kn, 0, &d);
		t[r] = now() - t0;
		if (rc) {
			fprintf(stderr, "bench_emu: %s: %s\n", label, diag_text(&d));
			diag_free(&d);
			return -1;
		}
		diag_free(&d);
		insns = emu_stats(dev)->insns;
	}
	qsort(t, (size_t)runs, sizeof *t, cmp_double);
	double med = t[runs / 2];
	mips = (double)insns / med / 1e6;
	printf("%-24s %10llu insns  %9.3f ms  %8.2f M insns/s\n", label, (unsigned long long)insns, med * 1e3, mips);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 5;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--runs=", 7))
			runs = atoi(argv[i] + 7);
		else {
			fprintf(stderr, "usage: bench_emu [--runs=N]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 64)
		runs = 5;
	printf("AMD emulator, gfx942 (wave64), median of %d runs, all checks on\n", runs);
	int bad = 0;
	EmuDevice *dev = load("vadd", vadd_src);
	if (!dev)
		return 1;
	static const uint32_t sizes[] = {1024, 16384, 262144, 1048576};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		uint32_t n = sizes[s];
		struct {
			uint64_t a, b, c;
			uint32_t n;
		} ka = {emu_alloc(dev, n * 4ull), emu_alloc(dev, n * 4ull), emu_alloc(dev, n * 4ull), n};
		char label[64];
		snprintf(label, sizeof label, "vadd n=%u", n);
		/* Inputs stay 0xCD bytes: a valid float, enough for timing. */
		bad |= bench(dev, label, "vadd", (n + 255) / 256, 256, &ka, 28, runs);
		emu_free(dev, ka.a), emu_free(dev, ka.b), emu_free(dev, ka.c);
	}
	emu_destroy(dev);
	if ((dev = load("lds", lds_src))) {
		uint64_t o = emu_alloc(dev, 64 * 256 * 4);
		bad |= bench(dev, "lds+barrier 64 wg x 256", "lds", 64, 256, &o, 8, runs);
		emu_destroy(dev);
	} else
		bad = 1;
	if ((dev = load("mfma", mfma_src))) {
		uint64_t o = emu_alloc(dev, 64 * 64 * 4);
		bad |= bench(dev, "mfma 32x32x8 f16, 64 wg", "mfma", 64, 64, &o, 8, runs);
		emu_destroy(dev);
	} else
		bad = 1;
	return bad ? 1 : 0;
}
