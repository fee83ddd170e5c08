/* family.c — see family.h. */
#include "family.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "diag.h"
#include "target.h"
#include "util.h"

const FamTarget fam_targets[4] = {
	{TA_TARGET_GFX90A, 0, "gfx90a"},
	{TA_TARGET_GFX942, 0, "gfx942"},
	{TA_TARGET_GFX1100, 0, "gfx1100 wave32"},
	{TA_TARGET_GFX1100, 1, "gfx1100 wave64"},
};

/* gfx9 mnemonic -> gfx11 spelling (same semantics). */
static const char *const rename11[][2] = {
	{"s_load_dword", "s_load_b32"}, {"s_load_dwordx2", "s_load_b64"}, {"s_load_dwordx4", "s_load_b128"},
	{"global_load_dword", "global_load_b32"}, {"global_load_dwordx2", "global_load_b64"},
	{"global_load_dwordx4", "global_load_b128"}, {"global_store_dword", "global_store_b32"},
	{"global_store_dwordx2", "global_store_b64"}, {"global_store_dwordx4", "global_store_b128"},
	{"global_load_ushort", "global_load_u16"}, {"global_store_short", "global_store_b16"},
	{"global_atomic_add", "global_atomic_add_u32"}, {"global_atomic_sub", "global_atomic_sub_u32"},
	{"global_atomic_smax", "global_atomic_max_i32"}, {"global_atomic_smin", "global_atomic_min_i32"},
	{"global_atomic_umax", "global_atomic_max_u32"}, {"global_atomic_umin", "global_atomic_min_u32"},
	{"global_atomic_and", "global_atomic_and_b32"}, {"global_atomic_or", "global_atomic_or_b32"},
	{"global_atomic_xor", "global_atomic_xor_b32"}, {"global_atomic_swap", "global_atomic_swap_b32"},
	{"global_atomic_cmpswap", "global_atomic_cmpswap_b32"}, {"global_atomic_inc", "global_atomic_inc_u32"},
	{"global_atomic_add_x2", "global_atomic_add_u64"}, {"flat_atomic_cmpswap_x2", "flat_atomic_cmpswap_b64"},
	{"ds_write_b32", "ds_store_b32"}, {"ds_read_b32", "ds_load_b32"}, {"ds_write_b64", "ds_store_b64"},
	{"ds_read_b64", "ds_load_b64"}, {"ds_read2_b32", "ds_load_2addr_b32"}, {"ds_write2_b32", "ds_store_2addr_b32"},
	{"ds_read_u16", "ds_load_u16"}, {"ds_write_b16", "ds_store_b16"},
	{"v_add_u32", "v_add_nc_u32"}, {"v_add_u32_dpp", "v_add_nc_u32_dpp"}, {"v_sub_u32", "v_sub_nc_u32"}, {"v_subrev_u32", "v_subrev_nc_u32"},
	{"v_addc_co_u32", "v_add_co_ci_u32"}, {"v_subb_co_u32", "v_sub_co_ci_u32"},
	{"v_subbrev_co_u32", "v_subrev_co_ci_u32"},
	{"v_cvt_pkrtz_f16_f32", "v_cvt_pk_rtz_f16_f32"}, {"s_andn2_b32", "s_and_not1_b32"}, {"s_andn2_b64", "s_and_not1_b64"},
	{"s_andn2_saveexec_b32", "s_and_not1_saveexec_b32"}, {"s_andn2_saveexec_b64", "s_and_not1_saveexec_b64"},
};

/* Expands one body line for the target into sb. */
static void expand_line(const FamTarget *ft, const char *p, size_t n, StrBuf *sb)
{
	int g11 = ft->t == TA_TARGET_GFX1100, w64 = fam_lanes(ft) == 64;
	size_t i = 0;
	while (i < n && isspace((unsigned char)p[i]))
		sb_putc(sb, p[i++]);
	size_t j = i;
	while (j < n && (isalnum((unsigned char)p[j]) || p[j] == '_'))
		j++;
	const char *mn = NULL;
	for (size_t k = 0; g11 && k < TA_ARRAY_LEN(rename11); k++)
		if (strlen(rename11[k][0]) == j - i && !memcmp(p + i, rename11[k][0], j - i))
			mn = rename11[k][1];
	if (mn)
		sb_puts(sb, mn), i = j;
	while (i < n) {
		if (p[i] == '%') {
			size_t e = i + 1;
			while (e < n && p[e] != '%')
				e++;
			const char *tok = p + i + 1;
			size_t tl = e - i - 1;
			if (tl == 3 && !memcmp(tok, "VCC", 3))
				sb_puts(sb, w64 ? "vcc" : "vcc_lo");
			else if (tl == 4 && !memcmp(tok, "EXEC", 4))
				sb_puts(sb, w64 ? "exec" : "exec_lo");
			else if (tl == 3 && !memcmp(tok, "RTN", 3))
				sb_puts(sb, ft->t == TA_TARGET_GFX942 ? "sc0" : "glc");
			else if (tl == 1 && tok[0] == 'W')
				sb_puts(sb, w64 ? "64" : "32");
			else if (tl > 1 && tok[0] == 'M') {
				int r = atoi(tok + 1);
				if (w64)
					sb_printf(sb, "s[%d:%d]", r, r + 1);
				else
					sb_printf(sb, "s%d", r);
			} else
				cr_assert_fail("unknown token %%%.*s%% in a family test body", (int)tl, tok);
			i = e + 1;
			continue;
		}
		sb_putc(sb, p[i++]);
	}
}

static char *body_path(const char *file)
{
	const char *src = getenv("TILEASM_SRCDIR");
	cr_assert(src, "TILEASM_SRCDIR is not set");
	StrBuf sb = {0};
	sb_printf(&sb, "%s/tests/emu/%s", src, file);
	return sb_take(&sb);
}

/* The whole kernel source for ft. */
static char *kernel_source(const FamTarget *ft, const FamCase *c)
{
	int g11 = ft->t == TA_TARGET_GFX1100;
	char *path = body_path(c->file);
	size_t blen = 0;
	char *body = read_file(path, &blen);
	cr_assert(body, "cannot read %s", path);
	free(path);
	StrBuf sb = {0};
	sb_puts(&sb, ".text\n.globl k\n.p2align 8\n.type k,@function\nk:\n");
	sb_printf(&sb, "  %s s[4:7], s[0:1], 0x0\n", g11 ? "s_load_b128" : "s_load_dwordx4");
	sb_printf(&sb, "  %s s8, s[0:1], 0x10\n", g11 ? "s_load_b32" : "s_load_dword");
	sb_puts(&sb, "  s_waitcnt lgkmcnt(0)\n");
	sb_printf(&sb, "  s_mul_i32 s9, s2, %u\n", c->block);
	sb_printf(&sb, "  %s v2, s9, v0\n", g11 ? "v_add_nc_u32" : "v_add_u32");
	sb_printf(&sb, "  v_mul_u32_u24 v1, %d, v2\n", 4 * c->results);
	for (size_t i = 0; i < blen;) {
		size_t e = i;
		while (e < blen && body[e] != '\n')
			e++;
		expand_line(ft, body + i, e - i, &sb);
		sb_putc(&sb, '\n');
		i = e + 1;
	}
	free(body);
	sb_puts(&sb, "  s_endpgm\n.Lend:\n  .size k, .Lend-k\n.rodata\n.p2align 6\n.amdhsa_kernel k\n");
	sb_puts(&sb, "  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_system_sgpr_workgroup_id_x 1\n");
	sb_puts(&sb, "  .amdhsa_kernarg_size 24\n  .amdhsa_next_free_sgpr 64\n");
	sb_printf(&sb, "  .amdhsa_group_segment_fixed_size %u\n", c->lds);
	sb_puts(&sb, "  .amdhsa_float_denorm_mode_32 3\n  .amdhsa_float_denorm_mode_16_64 3\n");
	if (g11)
		sb_printf(&sb, "  .amdhsa_next_free_vgpr 64\n  .amdhsa_wavefront_size32 %d\n", ft->wave64 ? 0 : 1);
	else
		sb_puts(&sb, "  .amdhsa_next_free_vgpr 96\n  .amdhsa_accum_offset 64\n");
	sb_puts(&sb, ".end_amdhsa_kernel\n");
	return sb_take(&sb);
}

char *fam_run_err(const FamTarget *ft, const FamCase *c, uint32_t **out)
{
	*out = NULL;
	char *text = kernel_source(ft, c);
	Target t;
	memset(&t, 0, sizeof t);
	t.id = ft->t;
	SrcFile src = {c->file, text, strlen(text)};
	Diag d;
	diag_init(&d);
	uint8_t *co = NULL;
	size_t colen = 0;
	char *err = NULL;
	EmuDevice *dev = NULL;
	if (co_assemble(&t, ft->wave64, &src, &co, &colen, &d)) {
		StrBuf sb = {0};
		sb_printf(&sb, "%s: assembling %s failed:\n%s", ft->name, c->file, diag_text(&d));
		err = sb_take(&sb);
		goto done;
	}
	dev = emu_create(ft->t);
	cr_assert(dev);
	if (emu_load(dev, co, colen, &d))
		goto fail;
	size_t nout = (size_t)c->results * c->block * c->grid;
	uint64_t o = emu_alloc(dev, nout * 4), i = emu_alloc(dev, c->in_bytes ? c->in_bytes : 4);
	cr_assert(o && i);
	if (c->in_bytes && emu_write(dev, i, c->in, c->in_bytes, &d))
		goto fail;
	struct {
		uint64_t out, in;
		uint32_t n, pad;
	} ka = {o, i, c->n, 0};
	uint32_t grid[3] = {c->grid, 1, 1}, block[3] = {c->block, 1, 1};
	if (emu_launch(dev, "k", grid, block, &ka, sizeof ka, 0, &d))
		goto fail;
	*out = malloc(nout * 4);
	cr_assert(*out);
	if (emu_read(dev, o, *out, nout * 4, &d))
		goto fail;
	goto done;
fail: {
	StrBuf sb = {0};
	sb_printf(&sb, "%s: %s: %s", ft->name, c->file, diag_text(&d));
	err = sb_take(&sb);
	free(*out);
	*out = NULL;
}
done:
	emu_destroy(dev);
	free(co);
	diag_free(&d);
	free(text);
	return err;
}

uint32_t *fam_run(const FamTarget *ft, const FamCase *c)
{
	uint32_t *out;
	char *err = fam_run_err(ft, c, &out);
	if (err) {
		cr_log_error("%s", err);
		free(err);
		cr_assert_fail("%s: %s did not run (see the message above)", ft->name, c->file);
	}
	return out;
}
