/* test_snippets.c — hand-written instruction lines with the bytes llvm-mc-19
 * gives them (copied from its -show-encoding output) and the text llvm-objdump-19
 * prints for those bytes.  Each line must assemble to exactly those bytes and
 * the bytes must decode and print as that text (the line itself unless llvm
 * prints it differently: then the round trip is text -> bytes -> llvm's text);
 * lines llvm-mc-19 rejects must be rejected.  The expectations are re-checked against llvm-mc-19
 * itself, so a wrong hand copy fails too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "oracle.h"

#define W64 ISA_WAVE64

typedef struct {
	ta_target t;
	const char *text;  /* the assembler's input */
	const char *bytes; /* llvm-mc-19's encoding, hex bytes separated by spaces; NULL = llvm-mc rejects it */
	const char *dis;   /* llvm-objdump-19's text for the bytes (NULL = same as text) */
} Snip;

static const Snip snips[] = {
	/* signed 16-bit add/sub: VOP3 only on gfx9, with clamp and op_sel; no literal, no neg */
	{TA_TARGET_GFX90A, "v_add_i16 v1, v2, v3", "01 00 9e d2 02 07 02 00", NULL},
	{TA_TARGET_GFX90A, "v_add_i16 v1, v2, v3 clamp", "01 80 9e d2 02 07 02 00", NULL},
	{TA_TARGET_GFX90A, "v_add_i16 v1, v2, v3 op_sel:[1,0,1]", "01 48 9e d2 02 07 02 00", NULL},
	{TA_TARGET_GFX90A, "v_add_i16 v1, s2, -1", "01 00 9e d2 02 82 01 00", NULL},
	{TA_TARGET_GFX90A, "v_add_i16 v1, 0x1234, v2", NULL, NULL},
	{TA_TARGET_GFX90A, "v_add_i16 v1, -v2, v3", NULL, NULL},
	{TA_TARGET_GFX942, "v_sub_i16 v1, v2, v3 op_sel:[1,1,1] clamp", "01 d8 9f d2 02 07 02 00", NULL},
	{TA_TARGET_GFX942, "v_sub_i16 v1, v2, v3 op_sel:[0,1,0]", "01 10 9f d2 02 07 02 00", NULL},
	/* llvm prints inline 1.0 of a 16-bit integer op as 0x3c00, which neither assembler takes back */
	{TA_TARGET_GFX942, "v_add_i16 v1, 1.0, v3", "01 00 9e d2 f2 06 02 00", "v_add_i16 v1, 0x3c00, v3"},
	{TA_TARGET_GFX942, "v_add_i16_sdwa v1, v2, v3", NULL, NULL},
	/* clamp on float compares (e64, gfx11 e64_dpp); not on integer or class compares, never omod */
	{TA_TARGET_GFX1100, "v_cmp_eq_f32_e64 s0, v1, v2 clamp", "00 80 12 d4 01 05 02 00", NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_f32_e64 s0, -v1, |v2| clamp", "00 82 12 d4 01 05 02 20", NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_f16_e64 s0, v1, v2 clamp", "00 80 02 d4 01 05 02 00", NULL},
	{TA_TARGET_GFX1100, "v_cmpx_eq_f32_e64 v1, v2 clamp", "7e 80 92 d4 01 05 02 00", NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_f32 s0, v1, v2 clamp", "00 80 12 d4 01 05 02 00",
	 "v_cmp_eq_f32_e64 s0, v1, v2 clamp"},
	{TA_TARGET_GFX1100, "v_cmp_eq_f32_e64 s0, v1, 0x1234 clamp", "00 80 12 d4 01 ff 01 00 34 12 00 00", NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_f32_e64_dpp s0, v1, v2 clamp row_shl:1", "00 80 12 d4 fa 04 02 00 01 01 01 ff",
	 "v_cmp_eq_f32_e64_dpp s0, v1, v2 clamp row_shl:1 row_mask:0xf bank_mask:0xf"},
	{TA_TARGET_GFX1100, "v_cmp_eq_f32_e64_dpp s0, v1, v2 clamp dpp8:[7,6,5,4,3,2,1,0]",
	 "00 80 12 d4 e9 04 02 00 01 77 39 05", NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_i32_e64 s0, v1, v2 clamp", NULL, NULL},
	{TA_TARGET_GFX1100, "v_cmp_class_f32_e64 s0, v1, v2 clamp", NULL, NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_f32_e64 s0, v1, v2 mul:2", NULL, NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_f16_e64 s0, v1, v2 op_sel:[1,0]", NULL, NULL},
	{TA_TARGET_GFX1100 | W64, "v_cmp_eq_f32_e64 s[0:1], v1, v2 clamp", "00 80 12 d4 01 05 02 00", NULL},
	{TA_TARGET_GFX1100 | W64, "v_cmp_lt_f16_e64 vcc, |v1|, -v2 clamp", "6a 81 01 d4 01 05 02 40", NULL},
	{TA_TARGET_GFX90A, "v_cmp_eq_f32_e64 s[0:1], v1, v2 clamp", "00 80 42 d0 01 05 02 00", NULL},
	{TA_TARGET_GFX90A, "v_cmpx_eq_f32_e64 s[0:1], v1, v2 clamp", "00 80 52 d0 01 05 02 00", NULL},
	{TA_TARGET_GFX90A, "v_cmp_eq_f64_e64 s[0:1], v[2:3], v[4:5] clamp", "00 80 62 d0 02 09 02 00", NULL},
	{TA_TARGET_GFX90A, "v_cmp_eq_f32_e64 s[0:1], v1, 1.0 clamp", "00 80 42 d0 01 e5 01 00", NULL},
	{TA_TARGET_GFX90A, "v_cmp_eq_u32_e64 s[0:1], v1, v2 clamp", NULL, NULL},
	{TA_TARGET_GFX90A, "v_cmp_eq_f32_sdwa vcc, v1, v2 clamp src0_sel:DWORD src1_sel:DWORD", NULL, NULL},
	/* v_cmp_class: neg/abs on src0 (the float), sext on src1 (the class mask), no clamp */
	{TA_TARGET_GFX1100, "v_cmp_class_f32_e64 vcc_lo, -v7, v11", "6a 00 7e d4 07 17 02 20", NULL},
	{TA_TARGET_GFX1100, "v_cmp_class_f32_e64 vcc_lo, |v7|, v11", "6a 01 7e d4 07 17 02 00", NULL},
	{TA_TARGET_GFX1100, "v_cmp_class_f32_e64 vcc_lo, v7, -v11", NULL, NULL},
	{TA_TARGET_GFX942, "v_cmp_class_f32_e64 vcc, -v7, v11", "6a 00 10 d0 07 17 02 20", NULL},
	{TA_TARGET_GFX942, "v_cmp_class_f32_sdwa vcc, v7, sext(v11) src0_sel:BYTE_1 src1_sel:DWORD",
	 "f9 16 20 7c 07 00 01 0e", NULL},
	{TA_TARGET_GFX942, "v_cmp_class_f32_sdwa vcc, -|v7|, v11 src0_sel:BYTE_1 src1_sel:DWORD",
	 "f9 16 20 7c 07 00 31 06", NULL},
	{TA_TARGET_GFX942, "v_cmp_class_f32_sdwa vcc, sext(v7), v11 src0_sel:BYTE_1 src1_sel:DWORD", NULL, NULL},
	{TA_TARGET_GFX942, "v_cmp_class_f32_e64 vcc, v7, v11 clamp", NULL, NULL},
	{TA_TARGET_GFX942, "v_ldexp_f16_sdwa v1, v7, sext(v11) src0_sel:BYTE_1 src1_sel:DWORD",
	 "f9 16 02 66 07 16 01 0e",
	 "v_ldexp_f16_sdwa v1, v7, sext(v11) dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:DWORD"},
	/* trap temporaries ttmp0..15 (scalar codes 108..123 on all three targets) wherever SGPRs go */
	{TA_TARGET_GFX90A, "s_mov_b32 ttmp0, s1", "01 00 ec be", NULL},
	{TA_TARGET_GFX90A, "s_mov_b32 s1, ttmp15", "7b 00 81 be", NULL},
	{TA_TARGET_GFX90A, "s_mov_b64 ttmp[14:15], ttmp[0:1]", "6c 01 fa be", NULL},
	{TA_TARGET_GFX90A, "s_mov_b32 ttmp[3], s1", "01 00 ef be", "s_mov_b32 ttmp3, s1"},
	{TA_TARGET_GFX90A, "s_load_dword ttmp1, ttmp[2:3], 0x0", "77 1b 02 c0 00 00 00 00", NULL},
	{TA_TARGET_GFX90A, "s_load_dwordx16 ttmp[0:15], s[0:1], 0x0", "00 1b 12 c0 00 00 00 00", NULL},
	{TA_TARGET_GFX90A, "v_cmp_eq_f32_e64 ttmp[0:1], v1, v2", "6c 00 42 d0 01 05 02 00", NULL},
	{TA_TARGET_GFX90A, "v_mov_b32_e32 v0, ttmp3", "6f 02 00 7e", NULL},
	{TA_TARGET_GFX90A, "s_mov_b64 ttmp[1:2], s[0:1]", NULL, NULL},
	{TA_TARGET_GFX90A, "s_load_dwordx4 ttmp[2:5], s[0:1], 0x0", NULL, NULL},
	{TA_TARGET_GFX90A, "s_mov_b32 ttmp16, s1", NULL, NULL},
	{TA_TARGET_GFX90A, "s_mov_b64 ttmp[15:16], s[0:1]", NULL, NULL},
	{TA_TARGET_GFX942, "global_load_dword v1, v2, ttmp[0:1]", "00 80 50 dc 02 00 6c 01", NULL},
	{TA_TARGET_GFX942, "buffer_load_dword v1, off, ttmp[4:7], ttmp3", "00 00 50 e0 00 01 1c 6f", NULL},
	{TA_TARGET_GFX942, "v_readlane_b32 ttmp2, v1, ttmp3", "6e 00 89 d2 01 df 00 00", NULL},
	{TA_TARGET_GFX942, "v_cndmask_b32_e64 v1, v2, v3, ttmp[2:3]", "01 00 00 d1 02 07 ba 01", NULL},
	{TA_TARGET_GFX942, "s_load_dword s1, s[2:3], ttmp5", "41 00 00 c0 71 00 00 00", NULL},
	{TA_TARGET_GFX942, "scratch_load_dword v1, off, ttmp2", "00 40 50 dc 00 00 6e 01", NULL},
	/* (found by isa_fuzz) scalar loads never write exec or m0 */
	{TA_TARGET_GFX942, "s_load_dword exec_lo, s[0:1], 0x0", NULL, NULL},
	{TA_TARGET_GFX942, "s_buffer_load_dword exec_hi, s[0:3], 0x0", NULL, NULL},
	{TA_TARGET_GFX942, "s_load_dword m0, s[0:1], 0x0", NULL, NULL},
	{TA_TARGET_GFX942, "s_load_dwordx2 exec, s[0:1], 0x0", NULL, NULL},
	{TA_TARGET_GFX942, "s_load_dword vcc_lo, s[0:1], 0x0", "80 1a 02 c0 00 00 00 00", NULL},
	{TA_TARGET_GFX1100, "s_load_b32 m0, s[0:1], 0x0", NULL, NULL},
	{TA_TARGET_GFX1100, "s_mov_b32 ttmp0, s1", "01 00 ec be", NULL},
	{TA_TARGET_GFX1100, "s_mov_b64 s[0:1], ttmp[14:15]", "7a 01 80 be", NULL},
	{TA_TARGET_GFX1100, "s_load_b128 ttmp[4:7], s[0:1], 0x0", "00 1c 08 f4 00 00 00 f8",
	 "s_load_b128 ttmp[4:7], s[0:1], null"},
	{TA_TARGET_GFX1100, "s_load_b32 s1, s[2:3], ttmp5", "41 00 00 f4 00 00 00 e2", NULL},
	{TA_TARGET_GFX1100, "v_cmp_eq_f32_e64 ttmp0, v1, v2", "6c 00 12 d4 01 05 02 00", NULL},
	{TA_TARGET_GFX1100, "v_cndmask_b32_e64 v1, v2, v3, ttmp2", "01 00 01 d5 02 07 ba 01", NULL},
	{TA_TARGET_GFX1100, "global_load_b32 v1, v2, ttmp[0:1]", "00 00 52 dc 02 00 6c 01", NULL},
	{TA_TARGET_GFX1100, "s_setpc_b64 ttmp[0:1]", "6c 48 80 be", NULL},
	{TA_TARGET_GFX1100, "s_cmpk_eq_i32 ttmp2, 0x10", "10 00 ee b1", NULL},
	{TA_TARGET_GFX1100, "s_load_b128 ttmp[2:5], s[0:1], 0x0", NULL, NULL},
	{TA_TARGET_GFX1100 | W64, "v_cmp_eq_f32_e64 ttmp[2:3], v1, v2", "6e 00 12 d4 01 05 02 00", NULL},
	/* _e64 on VOP3/VOP3P/MAI mnemonics and _e32 on those without a VOP3 form name the one encoding */
	{TA_TARGET_GFX90A, "v_fma_f32_e64 v1, v2, v3, v4", "01 00 cb d1 02 07 12 04", "v_fma_f32 v1, v2, v3, v4"},
	{TA_TARGET_GFX90A, "v_add_i16_e64 v1, v2, v3 clamp", "01 80 9e d2 02 07 02 00", "v_add_i16 v1, v2, v3 clamp"},
	{TA_TARGET_GFX90A, "v_pk_add_f16_e64 v1, v2, v3", "01 40 8f d3 02 07 02 18", "v_pk_add_f16 v1, v2, v3"},
	{TA_TARGET_GFX90A, "v_div_scale_f32_e64 v1, vcc, v2, v3, v4", "01 6a e0 d1 02 07 12 04",
	 "v_div_scale_f32 v1, vcc, v2, v3, v4"},
	{TA_TARGET_GFX90A, "v_readlane_b32_e32 s3, v7, s11", "03 00 89 d2 07 17 00 00", "v_readlane_b32 s3, v7, s11"},
	{TA_TARGET_GFX90A, "s_add_u32_e32 s1, s2, s3", "02 03 01 80", "s_add_u32 s1, s2, s3"},
	{TA_TARGET_GFX90A, "ds_read_b32_e32 v1, v2", "00 00 6c d8 02 00 00 01", "ds_read_b32 v1, v2"},
	{TA_TARGET_GFX90A, "v_readlane_b32_e64 s3, v7, s11", NULL, NULL},
	{TA_TARGET_GFX90A, "v_fma_f32_e32 v1, v2, v3, v4", NULL, NULL},
	{TA_TARGET_GFX90A, "s_add_u32_e64 s1, s2, s3", NULL, NULL},
	{TA_TARGET_GFX90A, "ds_read_b32_e64 v1, v2", NULL, NULL},
	{TA_TARGET_GFX90A, "v_accvgpr_read_b32_e32 v1, a1", NULL, NULL},
	{TA_TARGET_GFX90A, "v_pk_add_f16_e32 v1, v2, v3", NULL, NULL},
	{TA_TARGET_GFX942, "v_mfma_f32_32x32x8_f16_e64 a[0:15], v[0:1], v[2:3], a[0:15]", "00 80 cc d3 00 05 02 04",
	 "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]"},
	{TA_TARGET_GFX1100, "v_add_nc_i16_e64 v1, v2, v3 op_sel:[1,0,1]", "01 48 0d d7 02 07 02 00",
	 "v_add_nc_i16 v1, v2, v3 op_sel:[1,0,1]"},
	{TA_TARGET_GFX1100, "v_wmma_f32_16x16x16_f16_e64 v[0:7], v[8:15], v[16:23], v[0:7]",
	 "00 40 40 cc 08 21 02 1c", "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]"},
	{TA_TARGET_GFX1100, "s_load_b32_e32 s1, s[2:3], 0x0", "41 00 00 f4 00 00 00 f8", "s_load_b32 s1, s[2:3], null"},
	{TA_TARGET_GFX1100, "v_writelane_b32_e32 v1, s3, 1", "01 00 61 d7 03 02 01 00", "v_writelane_b32 v1, s3, 1"},
	{TA_TARGET_GFX1100, "v_writelane_b32_e64 v1, s3, 1", NULL, NULL},
	{TA_TARGET_GFX1100, "v_add_nc_u16_e32 v1, v2, v3", NULL, NULL},
	/* float <-> int conversions: modifiers of the float side; clamp everywhere; omod except on the
	 * rounding ones (flr/rpi) and on SDWA float -> int */
	{TA_TARGET_GFX90A, "v_cvt_f32_i32_e64 v1, v2 clamp mul:2", "01 80 45 d1 02 01 00 08", NULL},
	{TA_TARGET_GFX90A, "v_cvt_i32_f32_e64 v1, -|v2| clamp mul:2", "01 81 48 d1 02 01 00 28", NULL},
	{TA_TARGET_GFX90A, "v_cvt_f16_u16_e64 v1, v2 clamp mul:4", "01 80 79 d1 02 01 00 10", NULL},
	{TA_TARGET_GFX90A, "v_cvt_i32_f64_e64 v1, -v[2:3] clamp", "01 80 43 d1 02 01 00 20", NULL},
	{TA_TARGET_GFX90A, "v_cvt_flr_i32_f32_e64 v1, -v2 clamp", "01 80 4d d1 02 01 00 20", NULL},
	{TA_TARGET_GFX90A, "v_cvt_f32_i32_e64 v1, -v2", NULL, NULL},
	{TA_TARGET_GFX90A, "v_cvt_i32_f32_sdwa v1, v2 mul:2", NULL, NULL},
	{TA_TARGET_GFX90A, "v_cvt_flr_i32_f32_e64 v1, v2 mul:2", NULL, NULL},
	{TA_TARGET_GFX942, "v_cvt_f32_i32_sdwa v1, sext(v2) mul:2", "f9 0a 02 7e 02 56 0e 00",
	 "v_cvt_f32_i32_sdwa v1, sext(v2) mul:2 dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:DWORD"},
	{TA_TARGET_GFX942, "v_cvt_i32_f32_sdwa v1, -v2 clamp", "f9 10 02 7e 02 36 16 00",
	 "v_cvt_i32_f32_sdwa v1, -v2 clamp dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:DWORD"},
	{TA_TARGET_GFX1100, "v_cvt_f32_i32_e64 v1, v2 clamp mul:2", "01 80 85 d5 02 01 00 08", NULL},
	{TA_TARGET_GFX1100, "v_cvt_i32_f32_e64 v1, -|v2| clamp mul:2", "01 81 88 d5 02 01 00 28", NULL},
	{TA_TARGET_GFX1100, "v_cvt_floor_i32_f32_e64 v1, -v2 clamp", "01 80 8d d5 02 01 00 20", NULL},
	{TA_TARGET_GFX1100, "v_cvt_floor_i32_f32_e64 v1, v2 mul:2", NULL, NULL},
	{TA_TARGET_GFX1100, "v_cvt_f32_u32_e64 v1, |v2|", NULL, NULL},
};

static int hex_bytes(const char *s, uint8_t *b)
{
	int n = 0;
	for (char *e; *s; s = e) {
		b[n++] = (uint8_t)strtoul(s, &e, 16);
		while (*e == ' ')
			e++;
	}
	return n;
}

static const char *tname(ta_target t)
{
	static const char *w64 = "gfx1100-w64";
	return ISA_TARGET(t) == TA_TARGET_GFX1100 && ISA_IS_W64(t) ? w64 : mc_mcpu(t);
}

static int parse_encode(ta_target t, const char *text, IsaInsn *in, uint8_t b[16], int *len, Diag *d)
{
	SrcFile src = {"snip.s", text, strlen(text)};
	if (isa_parse_insn(t, text, in, &src, (SrcPos){1, 1}, d))
		return -1;
	*len = isa_encode(t, in, b, d);
	return *len < 0 ? -1 : 0;
}

/* Our assembler, decoder and printer against the hand copy. */
Test(isa_snippets, assemble_decode_print)
{
	for (size_t i = 0; i < sizeof snips / sizeof *snips; i++) {
		const Snip *s = &snips[i];
		IsaInsn in;
		uint8_t b[16], want[16];
		int len, wn = s->bytes ? hex_bytes(s->bytes, want) : 0;
		Diag d;
		diag_init(&d);
		int rc = parse_encode(s->t, s->text, &in, b, &len, &d);
		if (!s->bytes) {
			cr_expect_eq(rc, -1, "%s: accepted '%s', llvm-mc-19 rejects it", tname(s->t), s->text);
			diag_free(&d);
			continue;
		}
		cr_expect_eq(rc, 0, "%s: '%s' rejected: %s", tname(s->t), s->text, diag_text(&d));
		diag_free(&d);
		if (rc)
			continue;
		cr_expect(len == wn && !memcmp(b, want, (size_t)wn), "%s: '%s' encoded differently", tname(s->t),
			  s->text);
		IsaInsn o;
		int m = isa_decode(s->t, want, (size_t)wn, &o);
		cr_expect_eq(m, wn, "%s: '%s': decoder took %d of %d bytes", tname(s->t), s->text, m, wn);
		if (m != wn)
			continue;
		StrBuf sb = {0};
		isa_print(s->t, &o, &sb);
		const char *dis = s->dis ? s->dis : s->text;
		cr_expect_str_eq(sb.buf, dis, "%s: bytes of '%s' print as '%s'", tname(s->t), s->text, sb.buf);
		sb_free(&sb);
	}
}

/* The hand copies against llvm-mc-19 itself (assembly and disassembly). */
Test(isa_snippets, expectations_are_llvm_mc)
{
	static const ta_target ts[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100,
				       TA_TARGET_GFX1100 | W64};
	for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) {
		enum { N = sizeof snips / sizeof *snips };
		char *lines[N];
		const Snip *of[N];
		int n = 0;
		for (size_t i = 0; i < N; i++)
			if (snips[i].t == ts[k])
				of[n] = &snips[i], lines[n++] = (char *)snips[i].text;
		if (!n)
			continue;
		McLine ml[N];
		char *why = NULL;
		cr_assert_eq(mc_assemble(ts[k], lines, n, ml, &why), 0, "%s", why ? why : "llvm-mc-19 failed");
		uint8_t bytes[N][16];
		int lens[N], nd = 0;
		const Snip *dof[N];
		for (int i = 0; i < n; i++) {
			uint8_t want[16];
			int wn = of[i]->bytes ? hex_bytes(of[i]->bytes, want) : 0;
			cr_expect(ml[i].len == wn && !memcmp(ml[i].bytes, want, (size_t)wn),
				  "%s: '%s': llvm-mc-19 gives %d bytes, the table says %d", tname(ts[k]), of[i]->text,
				  ml[i].len, wn);
			if (wn) {
				memcpy(bytes[nd], want, 16);
				lens[nd] = wn;
				dof[nd++] = of[i];
			}
		}
		mc_lines_free(ml, n);
		char *dis[N];
		if (!nd)
			continue;
		cr_assert_eq(mc_disassemble(ts[k], (const uint8_t(*)[16])bytes, lens, nd, dis, &why), 0, "%s",
			     why ? why : "llvm-mc-19 --disassemble failed");
		for (int i = 0; i < nd; i++) {
			const char *want = dof[i]->dis ? dof[i]->dis : dof[i]->text;
			cr_expect(dis[i] && !strcmp(dis[i], want), "%s: llvm-mc-19 disassembles '%s' as '%s'",
				  tname(ts[k]), dof[i]->text, dis[i] ? dis[i] : "(nothing)");
			free(dis[i]);
		}
	}
}
