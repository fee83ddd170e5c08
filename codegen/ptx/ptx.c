/* ptx.c — SIMT IR (lower.h) -> PTX text.
 *
 * One SIMT instruction becomes one or a few PTX instructions; registers keep
 * their ids with a per-class prefix (%p pred, %h b16, %r b32, %rd b64, %f
 * f32, %fd f64), and ptxas allocates them.  A handful of scratch registers
 * (%t*) serve the multi-instruction conversions.  Float add/sub/mul carry
 * .rn so ptxas never fuses them into fma: the IR rounds after every op.
 */
#include <stdio.h>
#include <string.h>

#include "ptx.h"
#include "ptx_sm90.h"

static const char *const prefix[VT_COUNT] = {"%p", "%h", "%r", "%rd", "%f", "%fd"};

typedef struct {
	const SimtFunc *f;
	const Target *t;
	StrBuf *o;
	const PtxWg *w; /* inside an sm_90a GEMM entry (ptx_sm90_gemm.c), else NULL */
	bool wgmma;     /* the function has SI_WGMMA: its barriers fence generic-proxy shared writes first */
} P;

/* "%r123" into buf (24 bytes); returns the length.  Register names are most
 * of the PTX text, so they are formatted by hand rather than by printf. */
static size_t regname(const P *p, int32_t r, char *buf)
{
	const char *pre = prefix[p->f->regs.data[r]];
	size_t n = strlen(pre);
	memcpy(buf, pre, n);
	char tmp[12];
	int k = 0;
	uint32_t v = (uint32_t)r;
	do
		tmp[k++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (k)
		buf[n++] = tmp[--k];
	buf[n] = 0;
	return n;
}

static void R(P *p, int32_t r)
{
	char b[24];
	sb_putn(p->o, b, regname(p, r, b));
}

/* "op d, a, b;" with register operands */
static void ins(P *p, const char *op, int32_t d, int32_t a, int32_t b)
{
	sb_putc(p->o, '\t');
	sb_puts(p->o, op);
	sb_putc(p->o, ' ');
	R(p, d);
	if (a >= 0) {
		sb_puts(p->o, ", ");
		R(p, a);
	}
	if (b >= 0) {
		sb_puts(p->o, ", ");
		R(p, b);
	}
	sb_puts(p->o, ";\n");
}

/* PTX operation-type suffix for an arithmetic DType. */
static const char *ts(DType t)
{
	switch (t) {
	case DT_U32: return "u32";
	case DT_I64: return "s64";
	case DT_F32: return "f32";
	case DT_F64: return "f64";
	case DT_BOOL: return "pred";
	default: return "s32";
	}
}

static const char *bits(DType t)
{
	switch (t) {
	case DT_I64: return "b64";
	case DT_F64: return "f64";
	case DT_F32: return "f32";
	case DT_BOOL: return "pred";
	default: return "b32";
	}
}

/* memory type of a storage dtype */
static const char *mt(DType t)
{
	switch (t) {
	case DT_F16: case DT_BF16: return "b16";
	case DT_BOOL: case DT_U8: case DT_FP8E4M3: case DT_FP8E5M2: return "u8";
	case DT_I8: return "s8";
	case DT_I16: return "s16";
	case DT_I64: return "b64";
	case DT_F32: return "f32";
	case DT_F64: return "f64";
	default: return "b32";
	}
}

static bool is_small_float(DType t)
{
	return t == DT_F16 || t == DT_BF16 || t == DT_FP8E4M3 || t == DT_FP8E5M2;
}

static const char *fp8name(DType t)
{
	return t == DT_FP8E4M3 ? "e4m3x2" : "e5m2x2";
}

/* f32 register s -> storage bits of small float t in register d (b16 or b32) */
/* The move of a value kept as itself in its register (pack/unpack of a non-small, non-bool type). */
static const char *plain_mov(DType t)
{
	return t == DT_I64 ? "mov.b64" : t == DT_F64 ? "mov.f64" : t == DT_F32 ? "mov.f32" : "mov.b32";
}

static void pack_small(P *p, DType t, const char *d, const char *s)
{
	if (t == DT_F16)
		sb_printf(p->o, "\tcvt.rn.f16.f32 %s, %s;\n", d, s);
	else if (t == DT_BF16)
		sb_printf(p->o, "\tcvt.rn.bf16.f32 %s, %s;\n", d, s);
	else
		sb_printf(p->o, "\tcvt.rn.satfinite.%s.f32 %%th0, %%tf0, %s;\n\tcvt.u32.u16 %s, %%th0;\n"
		          "\tand.b32 %s, %s, 255;\n", fp8name(t), s, d, d, d);
}

/* storage bits of small float t in s -> f32 register d */
static void unpack_small(P *p, DType t, const char *d, const char *s)
{
	if (t == DT_F16)
		sb_printf(p->o, "\tcvt.f32.f16 %s, %s;\n", d, s);
	else if (t == DT_BF16)
		sb_printf(p->o, "\tcvt.u32.u16 %%tr0, %s;\n\tshl.b32 %%tr0, %%tr0, 16;\n\tmov.b32 %s, %%tr0;\n", s, d);
	else
		sb_printf(p->o, "\tcvt.u16.u32 %%th0, %s;\n\tcvt.rn.f16x2.%s %%tr0, %%th0;\n"
		          "\tmov.b32 {%%th1, %%th2}, %%tr0;\n\tcvt.f32.f16 %s, %%th1;\n", s, fp8name(t), d);
}

/* f32 register value rounded to small float t, in place (d may equal s). */
static void round_small(P *p, DType t, const char *d, const char *s)
{
	const char *tmp = t == DT_F16 || t == DT_BF16 ? "%th3" : "%tr1";
	pack_small(p, t, tmp, s);
	unpack_small(p, t, d, tmp);
}

static char *rn(P *p, int32_t r, char *buf)
{
	regname(p, r, buf);
	return buf;
}

static const char *ity(DType t) /* cvt type of an integer canonical */
{
	return t == DT_I64 ? "s64" : (t == DT_U8 || t == DT_U32) ? "u32" : "s32";
}

/* Wrap a 32-bit integer register (in place) to small int type t. */
static void wrap32(P *p, DType t, const char *d)
{
	if (t == DT_I8)
		sb_printf(p->o, "\tbfe.s32 %s, %s, 0, 8;\n", d, d);
	else if (t == DT_U8)
		sb_printf(p->o, "\tand.b32 %s, %s, 255;\n", d, d);
	else if (t == DT_I16)
		sb_printf(p->o, "\tbfe.s32 %s, %s, 0, 16;\n", d, d);
}

/* Saturate a 32-bit register from cvt.rzi to small int type t. */
static void sat32(P *p, DType t, const char *d)
{
	if (t == DT_I8)
		sb_printf(p->o, "\tmax.s32 %s, %s, -128;\n\tmin.s32 %s, %s, 127;\n", d, d, d, d);
	else if (t == DT_U8)
		sb_printf(p->o, "\tmin.u32 %s, %s, 255;\n", d, d);
	else if (t == DT_I16)
		sb_printf(p->o, "\tmax.s32 %s, %s, -32768;\n\tmin.s32 %s, %s, 32767;\n", d, d, d, d);
}

static void emit_cvt(P *p, DType to, DType from, int32_t dr, int32_t ar)
{
	char d[24], a[24];
	rn(p, dr, d);
	rn(p, ar, a);
	bool fi = dtype_is_float(from), ti = dtype_is_float(to);
	if (from == DT_BOOL) {
		if (to == DT_I64)
			sb_printf(p->o, "\tselp.u64 %s, 1, 0, %s;\n", d, a);
		else if (to == DT_F64)
			sb_printf(p->o, "\tselp.f64 %s, 0d3FF0000000000000, 0d0000000000000000, %s;\n", d, a);
		else if (ti)
			sb_printf(p->o, "\tselp.f32 %s, 0f3F800000, 0f00000000, %s;\n", d, a);
		else
			sb_printf(p->o, "\tselp.u32 %s, 1, 0, %s;\n", d, a);
		return;
	}
	if (to == DT_BOOL) {
		if (from == DT_F64)
			sb_printf(p->o, "\tsetp.neu.f64 %s, %s, 0d0000000000000000;\n", d, a);
		else if (fi)
			sb_printf(p->o, "\tsetp.neu.f32 %s, %s, 0f00000000;\n", d, a);
		else
			sb_printf(p->o, "\tsetp.ne.%s %s, %s, 0;\n", from == DT_I64 ? "s64" : "s32", d, a);
		return;
	}
	if (!fi && !ti) {
		if (to == DT_I64) {
			if (from == DT_I64)
				sb_printf(p->o, "\tmov.b64 %s, %s;\n", d, a);
			else
				sb_printf(p->o, "\tcvt.%s.%s %s, %s;\n", (from == DT_U8 || from == DT_U32) ? "u64" : "s64",
				          ity(from), d, a);
			return;
		}
		if (from == DT_I64)
			sb_printf(p->o, "\tcvt.u32.u64 %s, %s;\n", d, a);
		else
			sb_printf(p->o, "\tmov.b32 %s, %s;\n", d, a);
		wrap32(p, to, d);
		return;
	}
	if (!fi && ti) {
		if (to == DT_F64) {
			sb_printf(p->o, "\tcvt.rn.f64.%s %s, %s;\n", ity(from), d, a);
			return;
		}
		sb_printf(p->o, "\tcvt.rn.f32.%s %s, %s;\n", ity(from), d, a);
		if (is_small_float(to))
			round_small(p, to, d, d);
		return;
	}
	if (fi && !ti) {
		const char *fs = from == DT_F64 ? "f64" : "f32";
		if (to == DT_I64)
			sb_printf(p->o, "\tcvt.rzi.s64.%s %s, %s;\n", fs, d, a);
		else
			sb_printf(p->o, "\tcvt.rzi.%s.%s %s, %s;\n", (to == DT_U8 || to == DT_U32) ? "u32" : "s32", fs, d, a);
		sat32(p, to, d);
		return;
	}
	/* float -> float */
	if (to == DT_F64) {
		sb_printf(p->o, "\tcvt.f64.f32 %s, %s;\n", d, a);
		return;
	}
	if (from == DT_F64) {
		if (to == DT_F16) {
			sb_printf(p->o, "\tcvt.rn.f16.f64 %%th3, %s;\n\tcvt.f32.f16 %s, %%th3;\n", a, d);
			return;
		}
		sb_printf(p->o, "\tcvt.rn.f32.f64 %s, %s;\n", d, a);
		if (is_small_float(to))
			round_small(p, to, d, d);
		return;
	}
	if (is_small_float(to))
		round_small(p, to, d, a);
	else
		sb_printf(p->o, "\tmov.f32 %s, %s;\n", d, a);
}

static void fhex32(P *p, double v)
{
	float f = (float)v;
	uint32_t u;
	memcpy(&u, &f, 4);
	sb_printf(p->o, "0f%08X", u);
}

static void fhex64(P *p, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	sb_printf(p->o, "0d%016llX", (unsigned long long)u);
}

static const char *space(int sp)
{
	return sp == SP_GLOBAL ? "global" : sp == SP_SHARED ? "shared" : "local";
}

/* SI_WGMMA (lower.h): descriptors, then fence, the K/16 wgmma of the thread's
 * warpgroup, commit, wait, in a scope of its own.  Descriptors (128B
 * swizzle, bits 63:62 = 1; address, LBO and SBO in 16-byte units): see
 * lower_wgmma.c for the layout; the 14-bit address field holds any shared
 * address of the 227 KiB window, so a k step adds to it without carries. */

/* Byte offset of k step ks in a K-major wgm tile of R rows: column block
 * ks / 4 (64 elements), 32 bytes per step inside it. */
static long long wg_koff(int ks, int R)
{
	return (long long)(ks / 4) * R * 128 + (ks % 4) * 32;
}

static void emit_wgmma(P *p, const SInst *in)
{
	int N = (int)(in->imm & 0xffff), K = (int)(in->imm >> 16 & 0xffff), R = 64 * (int)((in->imm >> 32) + 1), KS = K / 16;
	bool areg = in->sub & 1, bmn = in->sub & 2, clear = in->sub & 4;
	const char *ty = in->type == DT_BF16 ? "bf16" : "f16";
	uint64_t kmaj = (1ull << 62) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 16);
	uint64_t bhi = bmn ? (1ull << 62) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)(K * 128 >> 4) << 16) : kmaj;
	char r[24];
	sb_puts(p->o, "\t{\n\t.reg .b64 %wa, %wb;\n\t.reg .pred %wq0, %wq1;\n");
	sb_puts(p->o, "\tsetp.ne.u32 %wq0, 0, 0;\n\tsetp.eq.u32 %wq1, 0, 0;\n");
	for (int o = areg ? 1 : 0; o < 2; o++) {
		const char *nm = o ? "%wb" : "%wa";
		sb_printf(p->o, "\tcvt.u64.u32 %s, %s;\n\tshr.u64 %s, %s, 4;\n\tand.b64 %s, %s, 16383;\n"
			  "\tor.b64 %s, %s, 0x%016llx;\n", nm, rn(p, o ? in->b : in->a, r), nm, nm, nm, nm, nm, nm,
			  (unsigned long long)(o ? bhi : kmaj));
	}
	sb_puts(p->o, "\twgmma.fence.sync.aligned;\n");
	for (int ks = 0; ks < KS; ks++) {
		if (ks) { /* the step from k step ks - 1 to ks, in 16-byte units */
			if (!areg)
				sb_printf(p->o, "\tadd.s64 %%wa, %%wa, %lld;\n", (wg_koff(ks, R) - wg_koff(ks - 1, R)) >> 4);
			long long db = bmn ? 16 * 128 : wg_koff(ks, N) - wg_koff(ks - 1, N);
			sb_printf(p->o, "\tadd.s64 %%wb, %%wb, %lld;\n", db >> 4);
		}
		sb_printf(p->o, "\twgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", N, ty, ty);
		for (int i = 0; i < N / 2; i++)
			sb_printf(p->o, "%s%%f%d", i ? ", " : "", in->dst + i);
		const char *sd = clear && !ks ? "%wq0" : "%wq1";
		if (areg)
			sb_printf(p->o, "}, {%%r%d, %%r%d, %%r%d, %%r%d}, %%wb, %s, 1, 1, %d;\n", in->a + 4 * ks,
				  in->a + 4 * ks + 1, in->a + 4 * ks + 2, in->a + 4 * ks + 3, sd, bmn ? 1 : 0);
		else
			sb_printf(p->o, "}, %%wa, %%wb, %s, 1, 1, 0, %d;\n", sd, bmn ? 1 : 0);
	}
	sb_puts(p->o, "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\t}\n");
}

static void emit_inst(P *p, const SInst *in)
{
	const SimtFunc *f = p->f;
	DType t = (DType)in->type;
	char d[24], a[24];
	if (in->op == SI_LABEL) {
		sb_printf(p->o, "L%lld:\n", (long long)in->imm);
		return;
	}
	if (in->guard >= 0) {
		/* the guard goes on the one instruction that needs it */
		sb_printf(p->o, "\t@%s", in->guard_neg ? "!" : "");
		R(p, in->guard);
	}
	switch ((SOp)in->op) {
	case SI_MOVI:
		rn(p, in->dst, d);
		if (t == DT_BOOL)
			sb_printf(p->o, "\tsetp.%s.u32 %s, 0, 0;\n", in->imm ? "eq" : "ne", d);
		else if (t == DT_F16 || t == DT_BF16)
			sb_printf(p->o, "\tmov.b16 %s, %lld;\n", d, (long long)(in->imm & 0xffff));
		else if (t == DT_I64)
			sb_printf(p->o, "\tmov.b64 %s, %lld;\n", d, (long long)in->imm);
		else
			sb_printf(p->o, "\tmov.b32 %s, %lld;\n", d, (long long)(int32_t)(uint32_t)in->imm);
		return;
	case SI_MOVF:
		sb_printf(p->o, "\tmov.%s %s, ", t == DT_F64 ? "f64" : "f32", rn(p, in->dst, d));
		if (t == DT_F64)
			fhex64(p, in->fimm);
		else
			fhex32(p, in->fimm);
		sb_puts(p->o, ";\n");
		return;
	case SI_MOV: {
		VType vt = (VType)f->regs.data[in->dst];
		static const char *const mv[VT_COUNT] = {"mov.pred", "mov.b16", "mov.b32", "mov.b64", "mov.f32",
		                                         "mov.f64"};
		ins(p, mv[vt], in->dst, in->a, -1);
		return;
	}
	case SI_ADD: case SI_SUB: case SI_MUL: case SI_DIV: case SI_REM: case SI_MIN: case SI_MAX: {
		static const char *const nm[] = {"add", "sub", "mul", "div", "rem", "min", "max"};
		char op[32];
		bool fl = t == DT_F32 || t == DT_F64;
		const char *mod = "";
		if (fl && in->op <= SI_DIV)
			mod = ".rn";
		else if (!fl && in->op == SI_MUL)
			mod = ".lo";
		snprintf(op, sizeof op, "%s%s.%s", nm[in->op - SI_ADD], mod, ts(t));
		ins(p, op, in->dst, in->a, in->b);
		return;
	}
	case SI_NEG: case SI_ABS: {
		char op[32];
		snprintf(op, sizeof op, "%s.%s", in->op == SI_NEG ? "neg" : "abs", ts(t));
		ins(p, op, in->dst, in->a, -1);
		return;
	}
	case SI_AND: case SI_OR: case SI_XOR: case SI_NOT: case SI_SHL: {
		static const char *const nm[] = {"and", "or", "xor", "not", "shl"};
		char op[32];
		snprintf(op, sizeof op, "%s.%s", nm[in->op - SI_AND], t == DT_BOOL ? "pred" : t == DT_I64 ? "b64" : "b32");
		ins(p, op, in->dst, in->a, in->b);
		return;
	}
	case SI_SHR: {
		char op[32];
		snprintf(op, sizeof op, "shr.%s", ts(t));
		ins(p, op, in->dst, in->a, in->b);
		return;
	}
	case SI_SETP: {
		static const char *const cm[] = {"eq", "ne", "lt", "le", "gt", "ge"};
		char op[32];
		bool fl = t == DT_F32 || t == DT_F64;
		snprintf(op, sizeof op, "setp.%s.%s", fl && in->sub == CMP_NE ? "neu" : cm[in->sub], ts(t));
		ins(p, op, in->dst, in->a, in->b);
		return;
	}
	case SI_SELP: {
		char op[32];
		/* by register class: f16/bf16/fp8 values live in f32 registers */
		static const char *const sel[VT_COUNT] = {"pred", "b16", "b32", "b64", "f32", "f64"};
		snprintf(op, sizeof op, "selp.%s", sel[f->regs.data[in->dst]]);
		sb_printf(p->o, "\t%s %s, ", op, rn(p, in->dst, d));
		R(p, in->a);
		sb_puts(p->o, ", ");
		R(p, in->b);
		sb_puts(p->o, ", ");
		R(p, in->c);
		sb_puts(p->o, ";\n");
		return;
	}
	case SI_CVT: emit_cvt(p, t, (DType)in->type2, in->dst, in->a); return;
	case SI_PACK:
		rn(p, in->dst, d);
		rn(p, in->a, a);
		if (is_small_float(t))
			pack_small(p, t, d, a);
		else if (t == DT_BOOL)
			sb_printf(p->o, "\tselp.u32 %s, 1, 0, %s;\n", d, a);
		else
			ins(p, plain_mov(t), in->dst, in->a, -1);
		return;
	case SI_UNPACK:
		rn(p, in->dst, d);
		rn(p, in->a, a);
		if (is_small_float(t))
			unpack_small(p, t, d, a);
		else if (t == DT_BOOL)
			sb_printf(p->o, "\tsetp.ne.u32 %s, %s, 0;\n", d, a);
		else
			ins(p, plain_mov(t), in->dst, in->a, -1);
		return;
	case SI_PACK2:
		sb_printf(p->o, "\tmov.b32 %s, {", rn(p, in->dst, d));
		R(p, in->a);
		sb_puts(p->o, ", ");
		R(p, in->b);
		sb_puts(p->o, "};\n");
		return;
	case SI_MATH: {
		static const char *const nm[] = {"ex2.approx", "lg2.approx", "sqrt.rn", "rcp.rn", "cvt.rmi",
		                                 "cvt.rpi", "cvt.rni", "cvt.rzi", "sin.approx", "cos.approx"};
		const char *ft = t == DT_F64 ? "f64" : "f32";
		char op[32];
		if (in->sub >= MATH_FLOOR && in->sub <= MATH_TRUNC) /* cvt.rXi.f32.f32: round to integral */
			snprintf(op, sizeof op, "%s.%s.%s", nm[in->sub], ft, ft);
		else
			snprintf(op, sizeof op, "%s.%s", nm[in->sub], ft);
		ins(p, op, in->dst, in->a, -1);
		return;
	}
	/* In an sm_90a GEMM entry the IR block is one consumer warpgroup: its
	 * thread index, its (virtual) block index, its shared area, its named
	 * barrier, and "return" ends its current tile (ptx_sm90_gemm.c). */
	case SI_TID: sb_printf(p->o, "\tmov.u32 %s, %s;\n", rn(p, in->dst, d), p->w ? "%tw" : "%tid.x"); return;
	case SI_CTAID:
		if (p->w)
			sb_printf(p->o, "\tmov.u32 %s, %s;\n", rn(p, in->dst, d), in->imm == 0 ? "%vbx" : in->imm == 1 ? "%vby" : "%vbz");
		else
			sb_printf(p->o, "\tmov.u32 %s, %%ctaid.%c;\n", rn(p, in->dst, d), "xyz"[in->imm]);
		return;
	case SI_WG_GEMM_LOOP:
		if (p->w)
			p->w->gemm_loop(p->w, in->dst, (int32_t)in->imm, p->o);
		else
			sb_puts(p->o, "\ttrap; // SI_WG_GEMM_LOOP outside an sm_90a GEMM entry\n");
		return;
	case SI_PARAM: {
		const SimtParam *sp = &f->params.data[in->imm];
		rn(p, in->dst, d);
		if (sp->kind == PK_TENSOR)
			sb_printf(p->o, "\tld.param.u64 %s, [_p%lld];\n\tcvta.to.global.u64 %s, %s;\n", d,
			          (long long)in->imm, d, d);
		else
			sb_printf(p->o, "\tld.param.%s %s, [_p%lld];\n", bits(t), d, (long long)in->imm);
		return;
	}
	case SI_SHBASE: sb_printf(p->o, "\tmov.u32 %s, %s;\n", rn(p, in->dst, d), p->w ? "%wsm" : "smem"); return;
	case SI_LOCALADDR: sb_printf(p->o, "\tmov.u64 %s, loc%lld;\n", rn(p, in->dst, d), (long long)in->imm); return;
	case SI_LD:
		if (in->vec > 1) {
			sb_printf(p->o, "\tld.%s.v%d.b32 {", space(in->sub), in->vec);
			for (int i = 0; i < in->vec; i++)
				sb_printf(p->o, "%s", i ? ", " : ""), R(p, in->dst + i);
			sb_puts(p->o, "}, [");
			R(p, in->a);
			sb_printf(p->o, "+%lld];\n", (long long)in->imm);
			return;
		}
		sb_printf(p->o, "\tld.%s.%s %s, [", space(in->sub), mt(t), rn(p, in->dst, d));
		R(p, in->a);
		sb_printf(p->o, "+%lld];\n", (long long)in->imm);
		return;
	case SI_ST:
		if (in->vec > 1) {
			sb_printf(p->o, "\tst.%s.v%d.b32 [", space(in->sub), in->vec);
			R(p, in->a);
			sb_printf(p->o, "+%lld], {", (long long)in->imm);
			for (int i = 0; i < in->vec; i++)
				sb_printf(p->o, "%s", i ? ", " : ""), R(p, in->b + i);
			sb_puts(p->o, "};\n");
			return;
		}
		sb_printf(p->o, "\tst.%s.%s [", space(in->sub), mt(t));
		R(p, in->a);
		sb_printf(p->o, "+%lld], %s;\n", (long long)in->imm, rn(p, in->b, a));
		return;
	case SI_ATOM_ADD:
	case SI_ATOM_MAX:
	case SI_ATOM_MIN: {
		bool add = in->op == SI_ATOM_ADD;
		const char *ty = t == DT_F32 ? "f32" : t == DT_F64 ? "f64" : t == DT_F16 ? "noftz.f16"
		                 : t == DT_BF16 ? "noftz.bf16" : t == DT_I64 ? (add ? "u64" : "s64")
		                 : t == DT_U32 ? "u32" : "s32";
		sb_printf(p->o, "\tred.%s.%s%s.%s [", in->sub == SP_SHARED ? "shared" : "global",
		          add ? "add" : in->op == SI_ATOM_MAX ? "max" : "min", in->vec == 2 ? ".v2" : "", ty);
		R(p, in->a);
		if (in->vec == 2) { /* sm_90a, PTX 8.1: red.global.add.v2.f32 of two consecutive registers */
			sb_printf(p->o, "+%lld], {", (long long)in->imm);
			R(p, in->b);
			sb_puts(p->o, ", ");
			R(p, in->b + 1);
			sb_puts(p->o, "};\n");
			return;
		}
		sb_printf(p->o, "+%lld], %s;\n", (long long)in->imm, rn(p, in->b, a));
		return;
	}
	case SI_ATOM_CAS:
		sb_printf(p->o, "\tatom.%s.cas.b%d %s, [", in->sub == SP_SHARED ? "shared" : "global", t == DT_I64 ? 64 : 32,
		          rn(p, in->dst, d));
		R(p, in->a);
		sb_printf(p->o, "+%lld], %s, ", (long long)in->imm, rn(p, in->b, a));
		R(p, in->c);
		sb_puts(p->o, ";\n");
		return;
	case SI_BAR: /* wgmma reads shared memory through the async proxy: order this thread's writes first */
		if (p->wgmma)
			sb_puts(p->o, "\tfence.proxy.async.shared::cta;\n");
		sb_puts(p->o, p->w ? "\tbar.sync %wbar, 128;\n" : "\tbar.sync 0;\n");
		return;
	case SI_WGMMA: emit_wgmma(p, in); return;
	case SI_SHFL_BFLY:
		sb_printf(p->o, "\tshfl.sync.bfly.b32 %s, %s, %lld, 31, -1;\n", rn(p, in->dst, d), rn(p, in->a, a),
		          (long long)in->imm);
		return;
	case SI_SHFL: /* per-thread code: only the lanes that reach it take part */
		sb_printf(p->o, "\tactivemask.b32 %%tr1;\n\tshfl.sync.idx.b32 %s, %s, ", rn(p, in->dst, d), rn(p, in->a, a));
		sb_printf(p->o, "%s, 31, %%tr1;\n", rn(p, in->b, d));
		return;
	case SI_MMA: {
		if (in->sub == MMA_M16N8K32_I8) { /* i8 inputs, i32 accumulators */
			sb_printf(p->o, "\tmma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%%r%d, %%r%d, %%r%d, %%r%d}, "
				  "{%%r%d, %%r%d, %%r%d, %%r%d}, {%%r%d, %%r%d}, {%%r%d, %%r%d, %%r%d, %%r%d};\n", in->dst,
				  in->dst + 1, in->dst + 2, in->dst + 3, in->a, in->a + 1, in->a + 2, in->a + 3, in->b, in->b + 1,
				  in->c, in->c + 1, in->c + 2, in->c + 3);
			return;
		}
		const char *ty = t == DT_BF16 ? "bf16" : "f16";
		sb_printf(p->o, "\tmma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%%f%d, %%f%d, %%f%d, %%f%d}, "
		          "{%%r%d, %%r%d, %%r%d, %%r%d}, {%%r%d, %%r%d}, {%%f%d, %%f%d, %%f%d, %%f%d};\n", ty, ty,
		          in->dst, in->dst + 1, in->dst + 2, in->dst + 3, in->a, in->a + 1, in->a + 2, in->a + 3, in->b,
		          in->b + 1, in->c, in->c + 1, in->c + 2, in->c + 3);
		return;
	}
	case SI_CP_ASYNC: /* the src-size operand zero-fills an out-of-bounds vector */
		if (in->c >= 0)
			sb_printf(p->o, "\tselp.u32 %%tr0, 16, 0, %s;\n", rn(p, in->c, d));
		sb_printf(p->o, "\tcp.async.cg.shared.global [%s+%lld], [", rn(p, in->a, a), (long long)in->imm);
		R(p, in->b);
		sb_puts(p->o, in->c >= 0 ? "], 16, %tr0;\n" : "], 16;\n");
		return;
	case SI_CP_COMMIT: sb_puts(p->o, "\tcp.async.commit_group;\n"); return;
	case SI_CP_WAIT: sb_printf(p->o, "\tcp.async.wait_group %lld;\n", (long long)in->imm); return;
	case SI_LDMATRIX:
		sb_printf(p->o, "\tldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {", in->vec, in->sub ? ".trans" : "");
		for (int i = 0; i < in->vec; i++)
			sb_printf(p->o, "%s", i ? ", " : ""), R(p, in->dst + i);
		sb_puts(p->o, "}, [");
		R(p, in->a);
		sb_printf(p->o, "+%lld];\n", (long long)in->imm);
		return;
	case SI_BULK: /* sm_90a: the staged store of copy_rf (lower.h BulkOp) */
		switch (in->sub) {
		case BULK_WAIT_READ: sb_puts(p->o, "\tcp.async.bulk.wait_group.read 0;\n"); return;
		case BULK_FENCE: sb_puts(p->o, "\tfence.proxy.async.shared::cta;\n"); return;
		case BULK_STORE:
			sb_printf(p->o, "\tcp.async.bulk.global.shared::cta.bulk_group [%s], [", rn(p, in->a, a));
			R(p, in->b);
			sb_puts(p->o, "], ");
			R(p, in->c);
			sb_puts(p->o, ";\n");
			return;
		default: sb_puts(p->o, "\tcp.async.bulk.commit_group;\n"); return;
		}
	case SI_BRA: sb_printf(p->o, "\tbra L%lld;\n", (long long)in->imm); return;
	case SI_RET: sb_puts(p->o, p->w ? "\tbra $C_NEXT;\n" : "\tret;\n"); return;
	case SI_HALF: /* both halves into the scratch pair, then the one wanted */
		sb_printf(p->o, "\tmov.b32 {%%th0, %%th1}, %s;\n\tmov.b16 %s, %%th%d;\n", rn(p, in->a, a),
			  rn(p, in->dst, d), (int)(in->imm & 1));
		return;
	default: sb_printf(p->o, "\t// unknown op %d\n", in->op); return;
	}
}

void ptx_emit_decls(const SimtFunc *f, StrBuf *out)
{
	size_t n = f->regs.len;
	for (int vt = 0; vt < VT_COUNT; vt++) {
		static const char *const ty[VT_COUNT] = {"pred", "b16", "b32", "b64", "f32", "f64"};
		sb_printf(out, "\t.reg .%s %s<%zu>;\n", ty[vt], prefix[vt], n ? n : 1);
	}
	sb_puts(out, "\t.reg .b16 %th<4>;\n\t.reg .b32 %tr<2>;\n\t.reg .f32 %tf<1>;\n");
	for (size_t i = 0; i < f->locals.len; i++)
		sb_printf(out, "\t.local .align 8 .b8 loc%zu[%lld];\n", i, (long long)f->locals.data[i]);
}

void ptx_emit_code(const SimtFunc *f, const Target *t, const PtxWg *w, StrBuf *out)
{
	P p0 = {f, t, out, w, false};
	for (size_t i = 0; i < f->code.len && !p0.wgmma; i++)
		p0.wgmma = f->code.data[i].op == SI_WGMMA;
	sb_puts(out, "\tmov.f32 %tf0, 0f00000000;\n");
	for (size_t i = 0; i < f->code.len; i++)
		emit_inst(&p0, &f->code.data[i]);
}

int ptx_emit_func(const SimtFunc *f, const Target *t, StrBuf *out, Diag *d)
{
	sb_printf(out, "\n// kernel %s: block %d threads, %lld bytes of dynamic shared memory\n", f->name, f->threads,
	          (long long)f->smem_bytes);
	if (f->unrolled || f->unroll_kept)
		sb_printf(out, "// unroll: %d loops unrolled, %d kept as loops (%s)\n", f->unrolled, f->unroll_kept,
			  LOWER_UNROLL_CAP);
	if (f->folded)
		sb_printf(out, "// whole-tile tests: %d parallel loops (fast copies behind a uniform test)\n", f->folded);
	for (const char *l = f->notes.buf; l && *l;) { /* the listing's "; " notes as PTX comments */
		const char *e = strchr(l, '\n');
		int n = e ? (int)(e - l) : (int)strlen(l);
		sb_printf(out, "//%.*s\n", n > 0 ? n - 1 : 0, l + 1);
		l += n + (e != NULL);
	}
	sb_printf(out, ".visible .entry %s(", f->name);
	for (size_t i = 0; i < f->params.len; i++) {
		const SimtParam *sp = &f->params.data[i];
		static const char *const pt[VT_COUNT] = {"u32", "b16", "u32", "u64", "f32", "f64"};
		sb_printf(out, "%s\n\t.param .%s _p%zu /* %s */", i ? "," : "", pt[sp->vt], i, sp->name);
	}
	sb_printf(out, ")\n.maxntid %d, 1, 1\n{\n", f->threads);
	ptx_emit_decls(f, out);
	ptx_emit_code(f, t, NULL, out);
	sb_puts(out, "}\n");
	if (out->oom) {
		diag_error(d, "out of memory");
		return -1;
	}
	return 0;
}

static int compile(const Module *m, const Target *t, const LowerOptions *o, StrBuf *out, PtxKernelInfo **info,
                   bool split, Diag *d);

void ptx_append_module(StrBuf *out, const char *mod, bool keep_externs)
{
	static const char *const drop[] = {".version", ".target", ".address_size", ".extern"};
	for (const char *l = mod; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
		bool keep = true;
		for (size_t i = 0; i < TA_ARRAY_LEN(drop) - keep_externs; i++) /* .extern is last */
			keep = keep && strncmp(l, drop[i], strlen(drop[i]));
		if (keep)
			sb_putn(out, l, n);
		l += n;
	}
}

int ptx_compile(const Module *m, const Target *t, StrBuf *out, PtxKernelInfo **info, Diag *d)
{
	return compile(m, t, NULL, out, info, false, d);
}

int ptx_compile_split(const Module *m, const Target *t, const LowerOptions *o, StrBuf *out, PtxKernelInfo **info,
                      Diag *d)
{
	return compile(m, t, o, out, info, true, d);
}

static int compile(const Module *m, const Target *t, const LowerOptions *o, StrBuf *out, PtxKernelInfo **info,
                   bool split, Diag *d)
{
	if (!target_is_nvidia(t->id)) {
		diag_error(d, "PTX needs an NVIDIA target, not %s", target_name(t->id));
		return -1;
	}
	bool hopper = t->id == TA_TARGET_SM90A;
	sb_printf(out, "// generated by tileasm %s for %s\n.version %s\n.target %s\n.address_size 64\n\n"
	          ".extern .shared .align 16 .b8 smem[];\n", TA_VERSION_STRING, target_name(t->id),
	          hopper ? "8.1" : "7.0", hopper ? "sm_90a" : "sm_80"); /* 8.1: red.global.add.v2.f32 */
	int nk = (int)m->kernels.len, rc = 0;
	PtxKernelInfo *inf = info ? calloc((size_t)nk + 1, sizeof *inf) : NULL;
	if (info && !inf) {
		diag_error(d, "out of memory");
		return -1;
	}
	for (int k = 0; k < nk && !rc; k++) {
		SimtFunc f;
		rc = lower_kernel_opts(m, k, t, o, &f, d);
		if (!rc)
			rc = ptx_emit_func(&f, t, out, d);
		if (!rc && hopper && m->kernels.data[k].raster)
			sb_puts(out, "// use_swizzle: no sm_90a GEMM path entry (its persistent CTAs would walk the tiles in "
				"their own order); the entry above applies the kernel's\n");
		else if (!rc && hopper) { /* sm_90a GEMM path (ptx_sm90.h): an extra entry, generic one stays the fallback */
			StrBuf own = {0};
			if (split && inf)
				sb_puts(&own, ".version 8.1\n.target sm_90a\n.address_size 64\n");
			struct Sm90Launch *l = sm90_gemm_try(m, k, t, o, split && inf ? &own : out);
			if (l && split && inf && !own.oom) {
				inf[k].sm90_ptx_len = own.len;
				inf[k].sm90_ptx = sb_take(&own);
			}
			sb_free(&own);
			if (inf && (!split || inf[k].sm90_ptx))
				inf[k].sm90 = l;
			else
				free(l);
		}
		if (!rc && inf) {
			PtxKernelInfo *ki = &inf[k];
			ki->name = strdup(f.name);
			ki->kernel = k;
			ki->threads = f.threads;
			ki->smem_bytes = f.smem_bytes;
			ki->nmma = f.nmma;
			ki->nparams = (int)f.params.len;
			ki->params = malloc((f.params.len + 1) * sizeof *ki->params);
			if (!ki->name || !ki->params) {
				diag_error(d, "out of memory");
				rc = -1;
			} else if (f.params.len) {
				memcpy(ki->params, f.params.data, f.params.len * sizeof *ki->params);
			}
		}
		simt_free(&f);
	}
	if (rc) {
		ptx_info_free(inf, nk);
		return -1;
	}
	if (info)
		*info = inf;
	return 0;
}

void ptx_info_free(PtxKernelInfo *info, int n)
{
	if (!info)
		return;
	for (int i = 0; i < n; i++) {
		free(info[i].name);
		free(info[i].params);
		free(info[i].sm90); /* sm_90a GEMM path */
		free(info[i].sm90_ptx);
	}
	free(info);
}
