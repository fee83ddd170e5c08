/* emu_impl.h — state shared by the emulator's files (not part of the API). */
#ifndef TILEASM_EMU_IMPL_H
#define TILEASM_EMU_IMPL_H

#include "codeobj.h"
#include "emu.h"
#include "isa.h"

/* Internal SGPR numbering: the gfx9 hardware codes (0..101 SGPRs, 102/103
 * flat scratch, 106/107 vcc, 124 m0, 126/127 exec).  gfx11's m0 (125) and
 * null (124) are mapped here by the decoder's IsaSpecial. */
enum { ES_VCC = 106, ES_M0 = 124, ES_NULL = 125, ES_EXEC = 126, ES_NSGPR = 128 };

/* One device buffer. */
typedef struct {
	uint64_t base;
	size_t size;
	uint8_t *host;
} EmuBuf;

/* A decoded kernel: instructions in address order and an offset index. */
typedef struct {
	const char *name;
	const CoKernelInfo *ki;
	uint32_t entry;   /* .text offset of the first instruction */
	uint32_t size;    /* bytes of code */
	IsaInsn *insn;    /* decoded instructions */
	uint32_t *off;    /* byte offset (from entry) of insn[i] */
	uint8_t *len;     /* encoded length of insn[i] */
	int32_t *at;      /* at[off/4] = insn index, -1 = not an instruction start */
	int ninsn;
	char **text;      /* disassembly, made lazily for messages */
} EmuKernel;

/* A memory operation whose result has not been delivered yet. */
typedef struct {
	uint8_t cnt;   /* 0 vm, 1 lgkm, 2 vs (gfx11 stores) */
	uint8_t smem;  /* SMEM: returns out of order */
	uint8_t file;  /* 's', 'v', 'a' or 0 (no data returned) */
	uint16_t reg, n;
	uint64_t mask; /* lanes that receive data */
	uint32_t *data; /* n values (SGPR) or n * 64 (VGPR, [reg][lane]) */
	uint32_t d16;  /* VGPR D16 loads: 1 low half, 2 high half (merge) */
	int insn;      /* issuing instruction (for messages) */
	uint64_t ready; /* profiling: model cycle at which the result is back */
} EmuPend;

typedef uint32_t EmuLanes[64];

typedef struct {
	uint32_t s[ES_NSGPR];
	uint8_t sinit[ES_NSGPR];
	uint8_t spend[ES_NSGPR];
	uint64_t swrite_valu[ES_NSGPR]; /* gfx9 hazard: wait-state clock when a VALU wrote it (0 = never) */
	int scc;
	EmuLanes *v, *a;   /* VGPRs and AGPRs, [reg][lane] */
	uint64_t *vinit, *ainit; /* per register: lanes written */
	uint8_t *vpend, *apend;  /* per register: pending loads */
	uint64_t *vready, *aready; /* gfx9 hazard: clock at which an MFMA result may be read */
	uint64_t *vvalu;   /* gfx9 hazard: clock when a VALU last wrote each VGPR (0 = never; DPP reads) */
	int nv, na, nwords;
	int lanes;         /* 32 or 64 */
	uint64_t live;     /* lanes that exist (partial last wave) */
	int pc;            /* instruction index */
	int done, at_barrier;
	uint64_t clock;    /* wait states issued (s_nop k counts k+1) */
	uint64_t scratch_base; /* architected flat scratch: the wave's area (FLAT_SCRATCH); 0 = none */
	uint64_t executed;
	VEC(EmuPend) q;    /* pending memory results in issue order */
	int npend;
	uint64_t last_mfma_clock; int last_mfma_passes; int last_mfma_dreg, last_mfma_dn, last_mfma_afile;
	/* Profiling (emu_prof.c): the wave's model clock, when the matrix pipe
	 * is free, the clock before this instruction, and the completion time
	 * of the memory operation it issues; last_ready keeps vm/lgkm(DS)/vs in order. */
	uint64_t pt, mma_free, pt0, mem_ready, last_ready[3];
} EmuWave;

struct EmuDevice {
	ta_target target;
	int g11;          /* gfx1100 */
	unsigned checks;
	uint64_t insn_limit;
	uint64_t work_limit, work; /* instructions of a launch, all waves and workgroups */
	VEC(EmuBuf) bufs; /* sorted by base */
	uint64_t next_va;
	size_t last_buf;
	CoObject *co;
	EmuKernel *kern;
	int nkern;
	EmuStats stats;

	/* The launch in progress. */
	EmuKernel *k;
	ta_target wt;     /* target with ISA_WAVE64 when the kernel runs wave64 */
	uint8_t *lds;
	uint32_t lds_size;
	uint32_t priv_size; /* PRIVATE_SEGMENT_FIXED_SIZE: scratch bytes per work-item */
	uint64_t scr_base;  /* the workgroup's scratch buffer (all its waves), 0 = none */
	uint64_t scr_size;
	uint8_t *scr_init;  /* per dword of it: written since the workgroup started */
	int denorm32;     /* descriptor FLOAT_DENORM_MODE_32: 3 = keep */
	int denorm16;
	Diag *d;
	int failed;
	int profiling;     /* emu_set_profile */
	int prof_on;       /* the launch in progress is being profiled */
	struct EmuProf *prof; /* the profile being recorded / of the last launch */
};

/* emu.c */
void emu_fail(EmuDevice *dev, EmuWave *w, int insn, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Global memory: pointer to n bytes at addr, or NULL (and an error) if the
 * range is not inside one buffer. */
uint8_t *emu_gmem(EmuDevice *dev, EmuWave *w, int insn, uint64_t addr, size_t n, int write);
/* Queues a memory result; data is copied.  Returns 0 / -1 (no memory). */
int emu_pend(EmuDevice *dev, EmuWave *w, int cnt, int smem, int file, int reg, int n, uint64_t mask,
	     const uint32_t *data, int d16, int insn);
/* s_waitcnt: retire until at most the given counts remain (negative = no wait). */
void emu_wait(EmuDevice *dev, EmuWave *w, int vm, int lgkm, int vs);

/* emu_exec.c: runs one instruction of w; returns 0, 1 (barrier/endpgm: stop
 * this wave's slice) or -1 (error already reported). */
int emu_step(EmuDevice *dev, EmuWave *w);

/* emu_mma.c: MFMA / WMMA; ops are already checked for pending/uninit. */
int emu_mma(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in);

/* emu_prof.c: the profiling mode (docs/emulator.md "Profiling").  begin/end
 * bracket a launch; pre/post bracket each instruction; barrier when a
 * workgroup's waves leave s_barrier together. */
int emu_prof_begin(EmuDevice *dev, int nv, int na, int sgprs, int threads);
void emu_prof_end(EmuDevice *dev, int ok, uint64_t waves, uint64_t workgroups);
void emu_prof_pre(EmuDevice *dev, EmuWave *w, int insn, const IsaInsn *in);
void emu_prof_post(EmuDevice *dev, EmuWave *w, int insn);
void emu_prof_barrier(EmuDevice *dev, EmuWave *waves, int nw);
void emu_prof_free(struct EmuProf *p);
int emu_mma_passes(const EmuDevice *dev, unsigned op, int *xdl);
/* emu_exec.c: the nth operand of `role` (IsaRole) in the op's signature, or NULL. */
const IsaOperand *emu_op_role(const EmuDevice *dev, const IsaInsn *in, int role, int nth);

/* Helpers shared by emu_exec.c and emu_mma.c. */
static inline uint64_t emu_exec_mask(const EmuWave *w)
{
	uint64_t e = w->s[ES_EXEC];
	if (w->lanes == 64)
		e |= (uint64_t)w->s[ES_EXEC + 1] << 32;
	return e;
}
static inline float emu_f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline uint32_t emu_u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}
/* Register file of an operand: the lane array for VGPR/AGPR r. */
static inline uint32_t *emu_vreg(EmuWave *w, int agpr, int r)
{
	return agpr ? w->a[r] : w->v[r];
}
/* Marks lanes of VGPR/AGPR range as written; reports writes over pending loads. */
void emu_vwritten(EmuDevice *dev, EmuWave *w, int insn, int agpr, int r, int n, uint64_t mask);

#endif
