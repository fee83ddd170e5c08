/* codeobj.h — AMD HSA code objects (ELF, code object v5): the elf/ layer.
 *
 * The AMD code generator fills one CoKernel per kernel (start from
 * co_kernel_init, which sets clang's defaults) and calls co_write; the result
 * is a linked ET_DYN object laid out as `ld.lld-19 -shared` lays it out, with
 * the NT_AMDGPU_METADATA note, the 64-byte kernel descriptors `NAME.kd` in
 * .rodata and the code in .text.  co_read parses such an object back (ours or
 * LLVM's) for `tileasm disasm` and the emulator.
 *
 * Files:  kd.c        descriptor fields <-> RSRC1/2/3 and code properties
 *         metadata.c  CoMd tree, metadata from CoKernel, msgpack in and out
 *         write.c     ELF layout and bytes
 *         read.c      ELF parsing (bounds-checked; malformed input -> Diag)
 *         yaml.c      the YAML subset of .amdgpu_metadata blocks
 *         asm_co.c    .amdhsa_kernel / .amdgpu_metadata directives for isa/asm
 *         disasm.c    listing for `tileasm disasm`
 *
 * Layout, field formulas and the checks behind them: docs/code-object.md and
 * /work/shared/notes/amd-code-object.md. */
#ifndef TILEASM_CODEOBJ_H
#define TILEASM_CODEOBJ_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "isa.h"
#include "target.h"
#include "util.h"

/* ---- kernel arguments (metadata .args) ---------------------------------- */

/* .value_kind; CO_VK_COUNT entries in co_value_kind_name. */
typedef enum {
	CO_VK_BY_VALUE,
	CO_VK_GLOBAL_BUFFER,
	CO_VK_DYNAMIC_SHARED_POINTER,
	CO_VK_SAMPLER,
	CO_VK_IMAGE,
	CO_VK_PIPE,
	CO_VK_QUEUE,
	CO_VK_HIDDEN_GLOBAL_OFFSET_X,
	CO_VK_HIDDEN_GLOBAL_OFFSET_Y,
	CO_VK_HIDDEN_GLOBAL_OFFSET_Z,
	CO_VK_HIDDEN_NONE,
	CO_VK_HIDDEN_PRINTF_BUFFER,
	CO_VK_HIDDEN_HOSTCALL_BUFFER,
	CO_VK_HIDDEN_DEFAULT_QUEUE,
	CO_VK_HIDDEN_COMPLETION_ACTION,
	CO_VK_HIDDEN_MULTIGRID_SYNC_ARG,
	CO_VK_HIDDEN_BLOCK_COUNT_X,
	CO_VK_HIDDEN_BLOCK_COUNT_Y,
	CO_VK_HIDDEN_BLOCK_COUNT_Z,
	CO_VK_HIDDEN_GROUP_SIZE_X,
	CO_VK_HIDDEN_GROUP_SIZE_Y,
	CO_VK_HIDDEN_GROUP_SIZE_Z,
	CO_VK_HIDDEN_REMAINDER_X,
	CO_VK_HIDDEN_REMAINDER_Y,
	CO_VK_HIDDEN_REMAINDER_Z,
	CO_VK_HIDDEN_GRID_DIMS,
	CO_VK_HIDDEN_HEAP_V1,
	CO_VK_HIDDEN_DYNAMIC_LDS_SIZE,
	CO_VK_HIDDEN_PRIVATE_BASE,
	CO_VK_HIDDEN_SHARED_BASE,
	CO_VK_HIDDEN_QUEUE_PTR,
	CO_VK_COUNT
} CoValueKind;

/* .address_space; CO_AS_NONE = key absent. */
typedef enum { CO_AS_NONE, CO_AS_PRIVATE, CO_AS_GLOBAL, CO_AS_CONSTANT, CO_AS_LOCAL,
	       CO_AS_GENERIC, CO_AS_REGION, CO_AS_COUNT } CoAddrSpace;
/* .access / .actual_access; CO_ACC_NONE = key absent. */
typedef enum { CO_ACC_NONE, CO_ACC_READ_ONLY, CO_ACC_WRITE_ONLY, CO_ACC_READ_WRITE,
	       CO_ACC_COUNT } CoAccess;

extern const char *const co_value_kind_name[CO_VK_COUNT];   /* "by_value", ... */
extern const char *const co_addr_space_name[CO_AS_COUNT];   /* NULL, "private", ... */
extern const char *const co_access_name[CO_ACC_COUNT];      /* NULL, "read_only", ... */

typedef struct {
	const char *name;      /* .name (NULL = absent) */
	const char *type_name; /* .type_name (NULL = absent) */
	uint32_t size, offset;
	CoValueKind value_kind;
	CoAddrSpace address_space;
	CoAccess access, actual_access;
	uint8_t is_const, is_restrict, is_volatile;
} CoArg;

/* ---- a kernel ----------------------------------------------------------- */

/* User SGPRs, bit i = KERNEL_CODE_PROPERTIES bit i; loaded in this order. */
enum {
	CO_USGPR_PRIVATE_SEGMENT_BUFFER = 1 << 0, /* 4 SGPRs; not on gfx942/gfx1100 */
	CO_USGPR_DISPATCH_PTR = 1 << 1,           /* 2 */
	CO_USGPR_QUEUE_PTR = 1 << 2,              /* 2 */
	CO_USGPR_KERNARG_SEGMENT_PTR = 1 << 3,    /* 2 */
	CO_USGPR_DISPATCH_ID = 1 << 4,            /* 2 */
	CO_USGPR_FLAT_SCRATCH_INIT = 1 << 5,      /* 2; not on gfx942/gfx1100 */
	CO_USGPR_PRIVATE_SEGMENT_SIZE = 1 << 6,   /* 1 */
};

/* Everything the descriptor and the metadata need.  co_kernel_init sets
 * clang-19's defaults for the target; the code generator then sets the
 * counts it used.  Register counts are "next free register" numbers as the
 * code uses them: the writer adds the VCC/XNACK/flat-scratch SGPRs itself. */
typedef struct {
	const char *name;

	/* Code.  co_write copies `code` into .text at a 256-byte aligned entry;
	 * co_write_text instead takes one prebuilt .text and reads text_offset
	 * (entry within it) and code_size (symbol size). */
	const uint8_t *code;
	size_t code_size;
	uint32_t text_offset;

	/* Segments. */
	uint32_t group_segment_size;   /* static LDS bytes */
	uint32_t private_segment_size; /* scratch bytes per work-item */
	uint32_t kernarg_size;         /* incl. the hidden block when hidden_args */
	uint32_t kernarg_align;        /* 8 */

	/* Registers. */
	int vgprs;        /* architected VGPRs used (v0..v[vgprs-1]) */
	int agprs;        /* AGPRs used (gfx90a/gfx942) */
	int sgprs;        /* SGPRs used by the code, without VCC/XNACK/flat scratch */
	int accum_offset; /* gfx90a/gfx942: first AGPR in the unified file; 0 = align4(vgprs) */
	int vgpr_total;   /* 0 = computed; else the unified total, as .amdhsa_next_free_vgpr */
	uint8_t reserve_vcc;          /* add 2 SGPRs for VCC (1) */
	uint8_t reserve_flat_scratch; /* gfx9: add flat scratch SGPRs (clang: 0, llvm-mc: 1) */
	int sgpr_spill_count, vgpr_spill_count;

	/* Modes (RSRC1). */
	uint8_t wave32;                       /* gfx11: 1 = wave32 (default) */
	uint8_t float_round_32, float_round_16_64;   /* 0 = nearest even */
	uint8_t float_denorm_32, float_denorm_16_64; /* 3 = keep denormals */
	uint8_t dx10_clamp, ieee_mode;       /* 1, 1 */
	uint8_t wgp_mode, mem_ordered, fwd_progress; /* gfx11: 1, 1, 0 */
	uint8_t fp16_overflow, tg_split;

	/* Initial state (RSRC2, KERNEL_CODE_PROPERTIES). */
	uint16_t user_sgprs;     /* CO_USGPR_* */
	int user_sgpr_count;     /* 0 = computed like LLVM's code generator (gfx1100 pads to 16) */
	uint8_t wg_id_x, wg_id_y, wg_id_z, wg_info;
	uint8_t workitem_id_dims;   /* ENABLE_VGPR_WORKITEM_ID: 0 = x, 1 = x+y, 2 = x+y+z */
	uint8_t private_segment;    /* RSRC2 bit 0: scratch wave offset / private segment */
	uint8_t uses_dynamic_stack;
	uint8_t exception_enables;  /* RSRC2 bits 30:24 */
	uint8_t inst_pref_size;     /* gfx11 RSRC3 bits 9:4 */
	uint8_t shared_vgpr_count;  /* gfx11 RSRC3 bits 3:0 */

	/* Metadata only. */
	uint32_t max_flat_workgroup_size; /* 256 */
	uint32_t reqd_workgroup_size[3];  /* all 0 = absent */
	uint8_t uniform_work_group_size;
	const char *language;             /* e.g. "OpenCL C"; NULL = absent */
	int language_version[2];
	const CoArg *args;
	int nargs;
	uint8_t hidden_args; /* append the COV5 hidden block (co_hidden_args) to .args */
} CoKernel;

/* The 64-byte kernel descriptor as fields (AMDGPUUsage "Kernel Descriptor"). */
typedef struct {
	uint32_t group_segment_fixed_size, private_segment_fixed_size, kernarg_size;
	int64_t kernel_code_entry_byte_offset;
	uint32_t rsrc3, rsrc1, rsrc2;
	uint16_t kernel_code_properties, kernarg_preload;
} CoDescriptor;

#define CO_KD_SIZE 64

/* ---- kd.c --------------------------------------------------------------- */

/* clang-19's defaults for target t: modes, wave size, kernarg ptr + workgroup
 * id x (gfx90a also the private segment buffer), kernarg_align 8,
 * max_flat_workgroup_size 256, reserve_vcc 1. */
void co_kernel_init(CoKernel *k, const Target *t);
/* User SGPRs implied by k->user_sgprs (no padding). */
int co_user_sgprs_implied(const CoKernel *k);
/* The USER_SGPR_COUNT written: k->user_sgpr_count, or implied + gfx1100 padding. */
int co_user_sgpr_count(const Target *t, const CoKernel *k);
/* SGPRs the hardware allocates beyond k->sgprs (VCC, XNACK mask, flat scratch). */
int co_extra_sgprs(const Target *t, const CoKernel *k);
/* Metadata .sgpr_count / .vgpr_count. */
int co_sgpr_count(const Target *t, const CoKernel *k);
int co_vgpr_count(const Target *t, const CoKernel *k);
/* Descriptor fields from k (entry offset left 0: the writer sets it).
 * Returns 0, or -1 with an error in d (register counts out of range, ...). */
int co_descriptor(const Target *t, const CoKernel *k, CoDescriptor *kd, Diag *d);
void co_descriptor_encode(const CoDescriptor *kd, uint8_t out[CO_KD_SIZE]);
void co_descriptor_decode(const uint8_t in[CO_KD_SIZE], CoDescriptor *kd);
/* Inverse of co_descriptor for everything the descriptor holds: register
 * counts come back rounded up to their granules. */
void co_descriptor_to_kernel(const Target *t, const CoDescriptor *kd, CoKernel *k);
/* Prints the descriptor as LLVM's `.amdhsa_*` directives (one per line). */
void co_descriptor_print(const Target *t, const CoDescriptor *kd, StrBuf *sb);

/* ---- metadata.c --------------------------------------------------------- */

/* A msgpack/YAML value.  Maps hold 2*n items: key, value, key, value... */
typedef enum { CO_MD_NIL, CO_MD_BOOL, CO_MD_INT, CO_MD_STR, CO_MD_ARRAY, CO_MD_MAP } CoMdKind;
typedef struct CoMd CoMd;
struct CoMd {
	CoMdKind kind;
	int64_t i;     /* BOOL, INT */
	const char *s; /* STR (NUL-terminated) */
	CoMd *items;   /* ARRAY: n values; MAP: n key/value pairs */
	int n;
};
/* Map lookup by string key; NULL if absent or m is not a map. */
const CoMd *co_md_get(const CoMd *m, const char *key);
/* The metadata document for kernels k[0..n) (amdhsa.kernels/.target/.version). */
CoMd *co_metadata_build(Arena *a, const Target *t, const CoKernel *k, int n);
/* msgpack bytes (maps with keys sorted as LLVM writes them). */
int co_metadata_pack(const CoMd *doc, uint8_t **out, size_t *len);
/* Decodes msgpack bytes into a tree allocated in a; -1 + Diag on bad input. */
int co_metadata_unpack(Arena *a, const uint8_t *p, size_t n, CoMd **out, Diag *d);
/* The COV5 hidden arguments LLVM declares (block count, group size,
 * remainder, global offset, grid dims) in the 256-byte block that starts at
 * the next 8-byte boundary after `explicit_end`; returns the kernarg size
 * including the block.  `out` must hold CO_HIDDEN_ARGS entries. */
#define CO_HIDDEN_ARGS 13
uint32_t co_hidden_args(uint32_t explicit_end, CoArg *out);
/* "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-" */
void co_target_id(const Target *t, StrBuf *sb);
/* Writes the document as YAML like llvm-readelf --notes (for disasm). */
void co_metadata_print(const CoMd *doc, StrBuf *sb);

/* ---- write.c ------------------------------------------------------------ */

/* Writes a code object for kernels k[0..n): code laid out at 256-byte aligned
 * entries (s_nop fill), followed by LLVM's code-end padding.  *out is
 * malloc'd.  Returns 0, or -1 with errors in d. */
int co_write(const Target *t, const CoKernel *k, int n, uint8_t **out, size_t *len, Diag *d);
/* Same with a prebuilt .text (entries at k[i].text_offset, 256-byte aligned)
 * and, when md is not NULL, that metadata document instead of one built from k. */
/* Data an assembly source put in .rodata besides the kernel descriptors
 * (clang's __oclc_ABI_version, constant tables): written after the
 * descriptors as ld.lld lays out one object's .rodata, with its local and
 * hidden symbols in .symtab (as lld makes them local). */
typedef struct {
	const char *name;
	uint64_t value, size; /* value: offset in the data */
	uint8_t type, vis;    /* STT_OBJECT/STT_NOTYPE/..., STV_* */
} CoDataSym;
typedef struct {
	const uint8_t *bytes;
	size_t len;
	uint32_t align; /* power of two */
	const CoDataSym *syms;
	int nsyms;
} CoData;
/* data may be NULL (descriptors only). */
int co_write_text(const Target *t, const CoKernel *k, int n, const uint8_t *text, size_t text_len,
		  const CoMd *md, const CoData *data, uint8_t **out, size_t *len, Diag *d);
/* .text as co_write lays it out; sets k[i].text_offset. *text is malloc'd. */
int co_layout_text(const Target *t, CoKernel *k, int n, uint8_t **text, size_t *len, Diag *d);
/* e_flags for t. */
uint32_t co_elf_flags(const Target *t);

/* ---- read.c ------------------------------------------------------------- */

typedef struct {
	CoKernel k;        /* name, text_offset, code_size, descriptor fields, metadata */
	CoDescriptor desc; /* raw descriptor fields */
	uint8_t kd[CO_KD_SIZE];
	uint64_t kd_vaddr, entry_vaddr;
	const CoMd *md;    /* this kernel's metadata map, NULL if none */
} CoKernelInfo;

typedef struct {
	Target target;   /* from e_flags */
	uint32_t e_flags;
	int abi_version; /* EI_ABIVERSION: 3 = code object v5 */
	const uint8_t *text; /* copy of .text */
	size_t text_size;
	uint64_t text_vaddr;
	CoKernelInfo *kernels; /* in descriptor (.rodata) order */
	int nkernels;
	CoMd *metadata;  /* whole metadata document, NULL if no note */
	Arena arena;     /* owns everything above */
} CoObject;

/* Parses a code object.  Returns 0, or -1 with a clear error in d (never
 * crashes on malformed input).  Free with co_object_free. */
int co_read(const uint8_t *p, size_t n, CoObject **out, Diag *d);
void co_object_free(CoObject *o);

/* ---- disasm.c ----------------------------------------------------------- */

/* Appends a listing of code object p[0..n): target, per kernel the
 * descriptor as .amdhsa_* lines, the arguments, and the disassembled code.
 * Returns 0, or -1 with the reader's error in d. */
int co_disasm(const uint8_t *p, size_t n, StrBuf *sb, Diag *d);
/* The code object as assembly source that co_assemble turns back into the
 * same bytes (source.c; what `tileasm compile --dump-isa` prints), with each
 * instruction's encoding as an llvm-mc style comment when encodings != 0. */
int co_source(const uint8_t *p, size_t n, int encodings, StrBuf *sb, Diag *d);

/* ---- yaml.c ------------------------------------------------------------- */

/* llvm-mc-19's checks on a metadata document (known keys' types and
 * values, required keys; unknown keys pass): 0, or -1 with the reason.
 * Quoted integers and booleans are retyped in place, as llvm-mc does. */
int co_md_verify(CoMd *doc, StrBuf *why);

/* Parses an .amdgpu_metadata YAML body (text of the lines between the
 * directives; pos = position of its first line, for diagnostics). */
int co_yaml_parse(Arena *a, const char *text, size_t len, CoMd **out, const SrcFile *src, SrcPos pos,
		  Diag *d);

/* ---- asm_co.c ----------------------------------------------------------- */

/* Code-object directives for isa_assemble: create a CoAsm, pass
 * co_asm_directive as IsaAsmOptions.directive with the CoAsm as user, run
 * the assembler, then co_asm_finish builds the code object from .text, the
 * .amdhsa_kernel blocks and the .amdgpu_metadata document (or metadata built
 * from the descriptors when the source has none). */
typedef struct CoAsm CoAsm;
CoAsm *co_asm_new(const Target *t, const SrcFile *src, Diag *d);
int co_asm_directive(void *user, const char *line, SrcPos pos, int *raw_mode); /* IsaDirectiveHook */
int co_asm_finish(CoAsm *a, const IsaAsmOut *out, uint8_t **co, size_t *len);
void co_asm_free(CoAsm *a);
/* All of the above: LLVM AMDGPU assembly (src) to a code object for t
 * (wave64: gfx1100 assembled for wave64).  *co is malloc'd. */
int co_assemble(const Target *t, int wave64, const SrcFile *src, uint8_t **co, size_t *len, Diag *d);

#endif
