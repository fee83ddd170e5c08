/* test_verify.c — the AMD pass list: the SIMT and MIR verifiers run after
 * every pass on every example and target (AmdOutput.verify), they reject
 * broken IR, --dump-after gives each pass's IR, and verifying or dumping
 * changes no byte of the code object. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd.h"
#include "testutil.h"

static const char *const examples[] = {"vector_add", "reduce_sum", "softmax", "rmsnorm", "layernorm",
				       "gemm", "gemm_bf16_tn", "mha_fwd"};
static const ta_target amd_targets[] = {TA_TARGET_GFX1100, TA_TARGET_GFX90A, TA_TARGET_GFX942};

static Module *load(const char *name)
{
	char rel[512];
	snprintf(rel, sizeof rel, "examples/%s.tile", name);
	return load_src(rel, NULL, 0);
}

static void compile(const Module *m, ta_target tg, AmdOutput *out)
{
	Target t;
	cr_assert_eq(target_parse(target_name(tg), &t), 0);
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_compile(m, &t, out, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
}

Test(verify, every_pass_of_every_example)
{
	for (size_t e = 0; e < sizeof examples / sizeof *examples; e++) {
		Module *m = load(examples[e]);
		for (size_t t = 0; t < sizeof amd_targets / sizeof *amd_targets; t++) {
			AmdOutput plain = {0}, checked = {0};
			compile(m, amd_targets[t], &plain);
			checked.verify = 1;
			compile(m, amd_targets[t], &checked);
			cr_assert(plain.code_object_len == checked.code_object_len &&
					  !memcmp(plain.code_object, checked.code_object, plain.code_object_len),
				  "%s %s: verifying changed the code object", examples[e], target_name(amd_targets[t]));
			amd_output_free(&plain);
			amd_output_free(&checked);
		}
		ir_module_free(m);
	}
}

Test(verify, dump_after_each_pass)
{
	Module *m = load("softmax");
	AmdOutput ref = {0};
	compile(m, TA_TARGET_GFX942, &ref);
	for (int p = 0; p < AMD_PASS_COUNT; p++) {
		AmdOutput out = {0};
		out.dump_after = amd_pass_name[p];
		compile(m, TA_TARGET_GFX942, &out);
		char head[64];
		snprintf(head, sizeof head, "; after %s: softmax\n", amd_pass_name[p]);
		cr_assert(out.dump.buf && !strncmp(out.dump.buf, head, strlen(head)), "%s: dump starts '%.40s'",
			  amd_pass_name[p], out.dump.buf ? out.dump.buf : "");
		/* SIMT after lower and licm, virtual MIR up to sched, physical after. */
		const char *want = p <= AMD_PASS_LICM ? "func softmax threads(" : p < AMD_PASS_RA ? "%v" : "v0";
		cr_assert(strstr(out.dump.buf, want), "%s: no '%s' in the dump", amd_pass_name[p], want);
		if (p >= AMD_PASS_RA)
			cr_assert(!strstr(out.dump.buf, "%v"), "%s: virtual registers left", amd_pass_name[p]);
		cr_assert(out.code_object_len == ref.code_object_len &&
			  !memcmp(out.code_object, ref.code_object, ref.code_object_len));
		amd_output_free(&out);
	}
	amd_output_free(&ref);
	ir_module_free(m);
}

static void lowered(const Module *m, SimtFunc *f)
{
	Target t;
	cr_assert_eq(target_parse("gfx942", &t), 0);
	Diag d;
	diag_init(&d);
	cr_assert_eq(lower_kernel(m, 0, &t, f, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
	cr_assert_eq(simt_verify(f, NULL), 0);
}

static size_t find_simt(const SimtFunc *f, int op)
{
	for (size_t i = 0; i < f->code.len; i++)
		if (f->code.data[i].op == op)
			return i;
	cr_assert_fail("no op %d", op);
	return 0;
}

static void expect_simt_error(SimtFunc *f, size_t i, SInst bad, const char *msg)
{
	SInst keep = f->code.data[i];
	f->code.data[i] = bad;
	StrBuf err = {0};
	cr_expect_eq(simt_verify(f, &err), -1, "accepted: %s", msg);
	cr_expect(err.buf && strstr(err.buf, msg), "'%s' not in '%s'", msg, err.buf ? err.buf : "");
	sb_free(&err);
	f->code.data[i] = keep;
	cr_assert_eq(simt_verify(f, NULL), 0);
}

Test(verify, simt_rejects_broken_code)
{
	Module *m = load("softmax");
	SimtFunc f;
	lowered(m, &f);
	size_t bra = find_simt(&f, SI_BRA), ld = find_simt(&f, SI_LD), setp = find_simt(&f, SI_SETP);
	SInst x = f.code.data[ld];
	x.a = (int32_t)f.regs.len;
	expect_simt_error(&f, ld, x, "out of range");
	x = f.code.data[bra];
	x.imm = f.nlabels;
	expect_simt_error(&f, bra, x, "label L");
	x = f.code.data[bra];
	x.guard = f.code.data[ld].a; /* an i64 address, not a predicate */
	expect_simt_error(&f, bra, x, "is not a predicate");
	x = f.code.data[setp];
	x.dst = f.code.data[ld].a;
	expect_simt_error(&f, setp, x, "not a predicate");
	size_t lab = find_simt(&f, SI_LABEL);
	x = f.code.data[lab];
	x.op = SI_RET; /* the label disappears: its branches dangle */
	int used = 0;
	for (size_t i = 0; i < f.code.len; i++)
		used |= f.code.data[i].op == SI_BRA && f.code.data[i].imm == f.code.data[lab].imm;
	if (used)
		expect_simt_error(&f, lab, x, "not defined");
	x = f.code.data[ld];
	x.vec = 3;
	expect_simt_error(&f, ld, x, "vector width");
	simt_free(&f);
	ir_module_free(m);
}

Test(verify, mir_rejects_broken_code)
{
	Module *m = load("vector_add");
	SimtFunc sf;
	lowered(m, &sf);
	Target t;
	cr_assert_eq(target_parse("gfx942", &t), 0);
	AmdAbi abi = {0};
	for (int dm = 0; dm < 3; dm++)
		abi.wgid_sgpr[dm] = 2 + dm;
	cr_assert_eq(amd_kernarg_layout(&sf, &abi), 0);
	MFunc mf;
	mir_init(&mf, t.id);
	Diag d;
	diag_init(&d);
	cr_assert_eq(amd_isel(&sf, &t, &abi, &mf, &d), 0, "%s", diag_text(&d));
	diag_free(&d);
	cr_assert_eq(mir_verify(&mf, false, NULL), 0);
	StrBuf err = {0};
	cr_expect_eq(mir_verify(&mf, true, &err), -1, "virtual code accepted as physical");
	cr_expect(err.buf && (strstr(err.buf, "virtual operands") || strstr(err.buf, "pseudo")), "%s", err.buf);
	sb_free(&err);
	/* a virtual operand naming a vreg that does not exist */
	size_t i = 0;
	while (i < mf.insns.len && !mf.insns.data[i].vmask)
		i++;
	cr_assert(i < mf.insns.len);
	MInst *mi = &mf.insns.data[i];
	int k = __builtin_ctz(mi->vmask), keep = mi->vr[k];
	mi->vr[k] = (int)mf.vregs.len;
	cr_expect_eq(mir_verify(&mf, false, &err), -1);
	cr_expect(err.buf && strstr(err.buf, "out of range"), "%s", err.buf);
	sb_free(&err);
	/* dwords beyond the vreg */
	mi->vr[k] = keep;
	uint8_t sub = mi->sub[k];
	mi->sub[k] = mf.vregs.data[keep].size;
	cr_expect_eq(mir_verify(&mf, false, &err), -1);
	cr_expect(err.buf && strstr(err.buf, "dwords"), "%s", err.buf);
	sb_free(&err);
	mi->sub[k] = sub;
	/* a gap between blocks */
	cr_assert(mf.blocks.len >= 2);
	mf.blocks.data[1].first++;
	cr_expect_eq(mir_verify(&mf, false, &err), -1);
	cr_expect(err.buf && strstr(err.buf, "block 1"), "%s", err.buf);
	sb_free(&err);
	mf.blocks.data[1].first--;
	/* a successor that is not a block */
	int32_t s0 = mf.blocks.data[0].succ[0];
	mf.blocks.data[0].succ[0] = (int32_t)mf.blocks.len;
	cr_expect_eq(mir_verify(&mf, false, &err), -1);
	cr_expect(err.buf && strstr(err.buf, "successor"), "%s", err.buf);
	sb_free(&err);
	mf.blocks.data[0].succ[0] = s0;
	cr_assert_eq(mir_verify(&mf, false, NULL), 0);
	mir_free(&mf);
	free(abi.param_offset);
	simt_free(&sf);
	ir_module_free(m);
}
