/* fuzz_diff.c — libFuzzer target, differential and structure-aware: mutates
 * valid Tile IR at the token level (LLVMFuzzerCustomMutator: literals,
 * operators, names taken from the same program, token deletion/duplication,
 * swaps), and for every mutant that verifies and is small, runs kernel 0 on
 * the interpreter and, compiled for an AMD target chosen by the input's hash,
 * on the emulator; every tensor must agree (cmd_run's tolerances).
 *
 * Left out, as not the compiler's fault: programs the interpreter rejects at
 * run time (out of bounds, division by zero, work bound), undefined
 * programs: results that depend on data never written or on the order of
 * blocks, parallel iterations or threads (a race) — the interpreter runs
 * twice, the second time with the other fill of new on-chip buffers and in
 * reverse order (interp_run_poisoned), and the two must agree; the second
 * run also logs which iteration stored each element (INTERP_RACES), which
 * catches the conflicts both orders hide (every iteration stores D[1] = 0
 * while iteration 1 updates D[1]: both orders end with 0, lockstep does not) — and
 * programs a target cannot compile (a diagnostic).  An emulator error on a
 * program the interpreter ran cleanly is a finding, except the emulator's
 * own work bound.
 *
 * Seeds: examples/*.tile, tests/emu/regress/*.tile, tests/lang/*.tile (tools/fuzz). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "fuzz_text.h"
#include "interp.h"
#include "ir.h"
#include "tileasm.h"
#include "util.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* ---- the token-level mutator -------------------------------------------- */

typedef struct {
	uint32_t off, len;
	uint8_t kind; /* 'i' identifier, 'n' number, 'o' operator/punctuation */
} Tk;

static int tokenize(const uint8_t *p, size_t n, Tk *out, int max)
{
	int k = 0;
	for (size_t i = 0; i < n && k < max;) {
		uint8_t c = p[i];
		if (c == '#') {
			while (i < n && p[i] != '\n')
				i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			i++;
			continue;
		}
		size_t j = i + 1;
		uint8_t kind = 'o';
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
			kind = 'i';
			while (j < n && ((p[j] >= 'a' && p[j] <= 'z') || (p[j] >= 'A' && p[j] <= 'Z') || p[j] == '_' ||
			                 (p[j] >= '0' && p[j] <= '9')))
				j++;
		} else if (c >= '0' && c <= '9') {
			kind = 'n';
			while (j < n && ((p[j] >= '0' && p[j] <= '9') || p[j] == '.' || p[j] == 'e' || p[j] == 'x'))
				j++;
		} else if (j < n && strchr("=!<>&|/.", c) && strchr("=<>&|/.", p[j])) {
			j++;
		}
		out[k++] = (Tk){(uint32_t)i, (uint32_t)(j - i), kind};
		i = j;
	}
	return k;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* data[0..size) with token t replaced by rep[0..rlen), into buf (max bytes) */
static size_t splice(const uint8_t *data, size_t size, const Tk *t, const char *rep, size_t rlen, uint8_t *buf,
                     size_t max)
{
	size_t n = t->off + rlen + (size - t->off - t->len);
	if (n > max)
		return 0;
	memmove(buf, data, t->off);
	memcpy(buf + t->off, rep, rlen);
	memcpy(buf + t->off + rlen, data + t->off + t->len, size - t->off - t->len);
	return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	enum { MAXTK = 8192 };
	static const char *const ops[] = {"+", "-", "*", "/", "//", "%", "<", "<=", ">", ">=", "==", "!=",
	                                  "&&", "||", "&", "|", "^", "<<", ">>", "!", "~", "(", ")", ","};
	static const char *const nums[] = {"0", "1", "2", "3", "-1", "7", "8", "16", "31", "32", "33", "64",
	                                   "127", "128", "255", "256", "1024", "0.0", "1.0", "-1.0", "0.5",
	                                   "1e30", "1e-30", "inf", "nan", "2147483647"};
	Tk *tk = malloc(MAXTK * sizeof *tk);
	/* terminated: strtol of a number token at the end stops at the NUL */
	uint8_t *src = (uint8_t *)fuzz_text_dup(data, size);
	if (!tk || !src) {
		free(tk);
		free(src);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	uint32_t s = seed | 1;
	int nt = tokenize(src, size, tk, MAXTK);
	size_t out = 0;
	if (nt > 0 && rnd(&s) % 16) {
		const Tk *t = &tk[rnd(&s) % (uint32_t)nt];
		const Tk *o = &tk[rnd(&s) % (uint32_t)nt]; /* another token of the program */
		char rep[64];
		size_t rl = 0;
		switch (rnd(&s) % 7) {
		case 0: /* a literal */
			rl = (size_t)snprintf(rep, sizeof rep, "%s", nums[rnd(&s) % (sizeof nums / sizeof *nums)]);
			break;
		case 1: /* an operator */
			rl = (size_t)snprintf(rep, sizeof rep, "%s", ops[rnd(&s) % (sizeof ops / sizeof *ops)]);
			break;
		case 2: /* a number nearby */
			if (t->kind == 'n') {
				long v = strtol((const char *)src + t->off, NULL, 0);
				rl = (size_t)snprintf(rep, sizeof rep, "%ld", v + (long)(rnd(&s) % 5) - 2);
			}
			break;
		case 3: /* a token of the same kind from elsewhere (names, above all) */
			if (o->kind == t->kind && o->len < sizeof rep) {
				memcpy(rep, src + o->off, o->len);
				rl = o->len;
			}
			break;
		case 4: /* delete */
			rl = 0;
			break;
		case 5: /* duplicate, with the token after it */
			if (t->len + o->len + 2 < sizeof rep) {
				memcpy(rep, src + t->off, t->len);
				rep[t->len] = ' ';
				memcpy(rep + t->len + 1, src + o->off, o->len);
				rl = t->len + 1 + o->len;
			}
			break;
		default: /* swap two tokens: t gets o's text (o keeps its own) */
			if (o->len < sizeof rep) {
				memcpy(rep, src + o->off, o->len);
				rl = o->len;
			}
			break;
		}
		out = splice(src, size, t, rep, rl, data, max_size);
	}
	free(tk);
	free(src);
	return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

/* ---- the differential run ------------------------------------------------- */

static int64_t block_work(const Module *m, int k, const Block *b, const int64_t *vals, int depth)
{
	int64_t total = 0;
	for (int i = 0; i < b->n; i++) {
		const Stmt *s = &m->stmts.data[b->ids[i]];
		int64_t trip = 1, lo, hi;
		if (depth > 64)
			return INT64_MAX / 4;
		if (s->kind == S_FOR) {
			if (ir_eval_i64(m, k, s->lo, vals, &lo) || ir_eval_i64(m, k, s->hi, vals, &hi))
				return INT64_MAX / 4;
			trip = hi > lo ? hi - lo : 0;
		} else if (s->kind == S_PARALLEL) {
			for (int v = 0; v < s->nvars && trip <= (1 << 16); v++) {
				int64_t e;
				if (ir_eval_i64(m, k, s->extents[v], vals, &e))
					return INT64_MAX / 4;
				trip *= e > 0 ? e : 0;
			}
		}
		int64_t inner = 1 + block_work(m, k, &s->body, vals, depth + 1) + block_work(m, k, &s->els, vals, depth + 1);
		if (trip > (1 << 16) || inner > (1 << 16))
			return INT64_MAX / 4;
		total += trip * inner;
		if (total > (1 << 18))
			return INT64_MAX / 4;
	}
	return total;
}

static bool close_enough(DType t, const void *got, const void *want, int64_t n)
{
	double atol = 0, rtol = 0;
	switch (t) {
	case DT_F16: atol = 2e-3, rtol = 1e-2; break;
	case DT_BF16: atol = 1e-2, rtol = 3e-2; break;
	case DT_FP8E4M3: case DT_FP8E5M2: case DT_FP8E4M3FNUZ: case DT_FP8E5M2FNUZ: atol = 6e-2, rtol = 2.5e-1; break;
	case DT_F32: atol = 1e-4, rtol = 1e-4; break;
	case DT_F64: atol = 1e-10, rtol = 1e-10; break;
	default: break;
	}
	for (int64_t i = 0; i < n; i++) {
		if (!dtype_is_float(t)) {
			if (dt_get_int(t, got, i) != dt_get_int(t, want, i))
				return false;
			continue;
		}
		double gv = dt_get_double(t, got, i), wv = dt_get_double(t, want, i);
		if (isnan(gv) && isnan(wv))
			continue;
		if (isinf(gv) || isinf(wv) || isnan(gv) || isnan(wv)) {
			if (gv != wv)
				return false;
			continue;
		}
		if (fabs(gv - wv) > atol + rtol * fabs(wv))
			return false;
	}
	return true;
}

enum { MAXARGS = 16, MAXELEMS = 4096 };

/* What happened to the inputs, printed at exit (the harness's own state). */
static struct {
	unsigned long inputs, verified, sized, undefined, races, compiled, compared;
} st;

static void print_stats(void)
{
	fprintf(stderr, "fuzz_diff: %lu inputs, %lu verified, %lu small enough, %lu undefined (left out; %lu of them races "
	        "the race log caught), %lu compiled, %lu compared with the emulator\n", st.inputs, st.verified, st.sized,
	        st.undefined, st.races, st.compiled,
	        st.compared);
}

typedef struct {
	InterpArg ia[MAXARGS];
	void *init[MAXARGS];
	size_t bytes[MAXARGS];
} Args;

static void args_free(Args *a, int n)
{
	for (int i = 0; i < n; i++) {
		free(a->ia[i].data);
		free(a->init[i]);
	}
}

/* Fresh copies of the inputs into a->ia[].data. */
static void args_reset(Args *a, int n)
{
	for (int i = 0; i < n; i++)
		if (a->init[i])
			memcpy(a->ia[i].data, a->init[i], a->bytes[i]);
}

static void differential(const Module *m, const char *text, size_t len, const uint8_t *data, size_t size)
{
	const Kernel *kn = &m->kernels.data[0];
	int n = kn->nargs;
	if (n > MAXARGS || kn->threads > 256)
		return;
	Args a;
	memset(&a, 0, sizeof a);
	uint32_t rs = (uint32_t)hash_bytes(HASH_INIT, data, size) | 1;
	for (int i = 0; i < n; i++) {
		int32_t var = kn->args[i].var;
		bool is_bool = var >= 0 && m->vars.data[var].type == DT_BOOL;
		a.ia[i].ival = is_bool ? rnd(&rs) % 2 : 1 + (int64_t)(rnd(&rs) % 40); /* symbols, integer scalars */
		a.ia[i].fval = (double)(int)(rnd(&rs) % 9) * 0.25 - 1.0;
	}
	for (int i = 0; i < n; i++) {
		int b = kn->args[i].buf;
		if (b < 0)
			continue;
		int64_t e = interp_tensor_elems(m, 0, a.ia, i);
		DType dt = (DType)m->bufs.data[b].dtype;
		if (e < 0 || e > MAXELEMS)
			goto out;
		a.bytes[i] = (size_t)dtype_storage_bytes(dt, e);
		a.ia[i].bytes = a.bytes[i];
		a.ia[i].data = calloc(1, a.bytes[i] ? a.bytes[i] : 1);
		a.init[i] = calloc(1, a.bytes[i] ? a.bytes[i] : 1);
		if (!a.ia[i].data || !a.init[i])
			goto out;
		for (int64_t j = 0; j < e; j++) { /* small values that stay exact in every dtype */
			int v = (int)(rnd(&rs) % 9) - 4;
			if (dtype_is_float(dt))
				dt_set_double(dt, a.init[i], j, v * 0.5);
			else
				dt_set_int(dt, a.init[i], j, dt == DT_BOOL ? v > 0 : v);
		}
	}
	int64_t vals[MAXARGS], grid = 1;
	for (int i = 0; i < n; i++)
		vals[i] = a.ia[i].ival;
	for (int g = 0; g < kn->ngrid; g++) {
		int64_t v;
		if (ir_eval_i64(m, 0, kn->grid[g], vals, &v) || v < 0 || v > 16)
			goto out;
		grid *= v;
	}
	int64_t work = block_work(m, 0, &kn->body, vals, 0);
	if (work > (1 << 18) || grid * work > (1 << 18))
		goto out;
	st.sized++;
	/* the reference, twice (the second in another fill and order) */
	void *ref[MAXARGS] = {0};
	Diag d;
	diag_init(&d);
	bool defined = true;
	for (int pass = 0; pass < 2 && defined; pass++) {
		args_reset(&a, n);
		unsigned mode = pass == 1 ? INTERP_POISON_ALT | INTERP_REVERSE | INTERP_RACES : 0;
		if (interp_run_poisoned(m, 0, a.ia, 1u << 22, mode, &d)) {
			defined = false;
			st.races += pass == 1 && strstr(diag_text(&d), "race: ") != NULL;
			break;
		}
		for (int i = 0; i < n; i++) {
			if (!a.init[i])
				continue;
			int b = kn->args[i].buf;
			if (pass == 0) {
				ref[i] = malloc(a.bytes[i] ? a.bytes[i] : 1);
				if (!ref[i]) {
					defined = false;
					break;
				}
				memcpy(ref[i], a.ia[i].data, a.bytes[i]);
			} else if (memcmp(ref[i], a.ia[i].data, a.bytes[i]) &&
			           !close_enough((DType)m->bufs.data[b].dtype, a.ia[i].data, ref[i],
			                         interp_tensor_elems(m, 0, a.ia, i))) {
				defined = false; /* reads what it never wrote, or races */
			}
		}
	}
	diag_free(&d);
	st.undefined += !defined;
	if (defined) {
		static const char *const targets[] = {"gfx942", "gfx90a", "gfx1100"};
		const char *tg = targets[hash_bytes(0x9e3779b97f4a7c15ull, data, size) % 3];
		ta_ctx *c = ta_ctx_create();
		ta_binary *bin = NULL;
		ta_runner *r = NULL;
		if (c && ta_compile_source(c, "diff.tile", text, len, tg, &bin) == TA_OK &&
		    ta_runner_open(c, "emu", 0, &r) == TA_OK) {
			st.compiled++;
			args_reset(&a, n);
			ta_value v[MAXARGS];
			for (int i = 0; i < n; i++)
				v[i] = (ta_value){a.ia[i].data, a.ia[i].bytes, a.ia[i].ival, a.ia[i].fval};
			ta_status ls = ta_launch(c, r, bin, 0, v, NULL);
			if (ls != TA_OK) {
				if (!strstr(ta_ctx_diagnostics(c), "work bound exceeded") &&
				    !strstr(ta_ctx_diagnostics(c), "instruction limit")) {
					fprintf(stderr, "fuzz_diff: %s: the emulator failed where the interpreter did not:\n%s\n", tg,
					        ta_ctx_diagnostics(c));
					abort();
				}
			} else {
				st.compared++;
				for (int i = 0; i < n; i++) {
					if (!a.init[i])
						continue;
					DType dt = (DType)m->bufs.data[kn->args[i].buf].dtype;
					if (!close_enough(dt, a.ia[i].data, ref[i], interp_tensor_elems(m, 0, a.ia, i))) {
						fprintf(stderr, "fuzz_diff: %s: tensor %d (%s) differs from the interpreter\n", tg, i,
						        dtype_name(dt));
						abort();
					}
				}
			}
		}
		ta_runner_close(r);
		ta_binary_release(bin);
		ta_ctx_destroy(c);
	}
	for (int i = 0; i < n; i++)
		free(ref[i]);
out:
	args_free(&a, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!st.inputs++)
		atexit(print_stats);
	if (size > 16384)
		return 0;
	char *text = fuzz_text_dup(data, size);
	if (!text)
		return 0;
	Diag d;
	diag_init(&d);
	Module *m = ir_parse("diff.tile", text, size, &d);
	if (m && ir_verify(m, &d) == 0 && m->kernels.len > 0) {
		st.verified++;
		differential(m, text, size, data, size);
	}
	ir_module_free(m);
	diag_free(&d);
	free(text);
	return 0;
}
