/* compile.c — ta_compile: the whole pipeline from a verified module to a
 * binary, the binary's launch metadata, and the per-context compile cache.
 *
 *   Tile IR --lower*.c--> SIMT IR --ptx.c-->  PTX text            (sm_80, sm_90a)
 *                                  --amd.c-->  HSA code object      (gfx1100, gfx90a, gfx942)
 *
 * Each backend's own pass list lives in its driver (codegen/ptx/ptx.c,
 * codegen/amd/amd.c); this file only dispatches and packages the result.
 */
#include <stdio.h>
#include <time.h>

#include "amd.h"
#include "api.h"
#include "codeobj.h"
#include "ptx.h"
#include "ptx_sm90.h"

static ta_binary *binary_new(const Target *t, const char *format)
{
	ta_binary *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->refs = 1;
	b->target = *t;
	b->format = format;
	StrBuf sb = {0};
	sb_puts(&sb, target_name(t->id));
	if (t->sramecc)
		sb_printf(&sb, ":sramecc%c", t->sramecc == FEAT_ON ? '+' : '-');
	if (t->xnack)
		sb_printf(&sb, ":xnack%c", t->xnack == FEAT_ON ? '+' : '-');
	snprintf(b->target_name, sizeof b->target_name, "%s", sb.buf ? sb.buf : "?");
	sb_free(&sb);
	return b;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void add_pass(ta_binary *b, const char *name, double ms)
{
	if (b->npasses < TA_MAX_PASSES) {
		b->pass_name[b->npasses] = name;
		b->pass_ms[b->npasses++] = ms;
	}
}

static void binary_free(ta_binary *b)
{
	if (b->ptx_info)
		ptx_info_free(b->ptx_info, b->nkernels);
	free(b->summary);
	free(b->dump);
	free(b->data);
	ir_module_free(b->m);
	arena_free(&b->arena);
	free(b);
}

TA_API void ta_binary_retain(ta_binary *b)
{
	if (b)
		__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
}

TA_API void ta_binary_release(ta_binary *b)
{
	if (b && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
		binary_free(b);
}

/* Argument table in Tile IR order, laid out by ir_arg_layout (the layout
 * both PTX's .param list and the AMD kernarg segment use). */
static ta_arg_info *arg_table(ta_binary *b, const Module *m, int k, uint32_t *size)
{
	const Kernel *kn = &m->kernels.data[k];
	ta_arg_info *a = arena_alloc(&b->arena, ((size_t)kn->nargs + 1) * sizeof *a);
	uint32_t *off = arena_alloc(&b->arena, ((size_t)kn->nargs + 1) * sizeof *off);
	if (!a || !off)
		return NULL;
	*size = ir_arg_layout(m, k, off);
	for (int i = 0; i < kn->nargs; i++) {
		uint32_t sz = ir_arg_size(m, &kn->args[i]);
		if (kn->args[i].buf >= 0) {
			const Buffer *buf = &m->bufs.data[kn->args[i].buf];
			a[i] = (ta_arg_info){buf->name, TA_ARG_TENSOR, buf->dtype, off[i], sz, buf->rank, {0}};
			for (int d = 0; d < buf->rank; d++) {
				const Expr *e = &m->exprs.data[buf->shape[d]];
				const Var *v = e->kind == E_VAR ? &m->vars.data[e->var] : NULL;
				a[i].dims[d] = !v ? e->ival : v->has_value ? v->value : -1 - (int64_t)v->index;
			}
		} else {
			const Var *v = &m->vars.data[kn->args[i].var];
			a[i] = (ta_arg_info){v->name, v->kind == V_SYMBOL ? TA_ARG_SYMBOL : TA_ARG_SCALAR, v->type, off[i], sz,
			                     0, {0}};
		}
	}
	return a;
}

static ta_status package_kernels(ta_binary *b, const Module *m)
{
	b->nkernels = (int)m->kernels.len;
	b->kernels = arena_alloc(&b->arena, m->kernels.len * sizeof *b->kernels);
	if (!b->kernels)
		return TA_ERR_NOMEM;
	for (int k = 0; k < b->nkernels; k++) {
		const Kernel *kn = &m->kernels.data[k];
		ta_kernel_info *ki = &b->kernels[k];
		ki->name = kn->name;
		ki->threads = kn->threads;
		ki->nargs = kn->nargs;
		ki->args = arg_table(b, m, k, &ki->kernarg_size);
		if (!ki->args)
			return TA_ERR_NOMEM;
	}
	return TA_OK;
}

static ta_status compile_ptx(ta_ctx *c, const Module *m, const Target *t, const ta_compile_options *o,
                             ta_binary *b)
{
	StrBuf sb = {0};
	PtxKernelInfo *info = NULL;
	LowerOptions lo = {.nvidia_off = o->nvidia_off};
	if (o->dump_after || o->verify) {
		/* The PTX backend has one pass over the SIMT IR: check or show that. */
		if (simt_dump_module(m, t, &lo, &sb, &c->diag)) {
			sb_free(&sb);
			return TA_ERR_UNSUPPORTED;
		}
		if (o->dump_after && !(b->dump = sb_take(&sb)))
			return TA_ERR_NOMEM;
		sb_free(&sb);
	}
	double t0 = now_ms();
	if (ptx_compile_split(m, t, &lo, &sb, &info, &c->diag)) {
		sb_free(&sb);
		return TA_ERR_UNSUPPORTED;
	}
	add_pass(b, "ptx", now_ms() - t0);
	ta_status st = sb.oom ? TA_ERR_NOMEM : package_kernels(b, m);
	for (int k = 0; st == TA_OK && k < b->nkernels; k++) {
		b->kernels[k].shared_bytes = info[k].smem_bytes;
		const Sm90Launch *l = info[k].sm90;
		if (!l)
			continue;
		/* the sm_90a fast entry: its own module (owned by info, kept with the binary) */
		ta_fast_entry *fe = arena_alloc(&b->arena, sizeof *fe);
		ta_tensor_map_info *tm = arena_alloc(&b->arena, 2 * sizeof *tm);
		if (!fe || !tm) {
			st = TA_ERR_NOMEM;
			break;
		}
		for (int i = 0; i < l->ntmaps && i < 2; i++)
			tm[i] = (ta_tensor_map_info){l->tmaps[i].arg, l->tmaps[i].dtype, l->tmaps[i].rank,
						     {l->tmaps[i].box[0], l->tmaps[i].box[1], l->tmaps[i].box[2]}, l->tmaps[i].swizzle};
		*fe = (ta_fast_entry){l->entry, info[k].sm90_ptx, info[k].sm90_ptx_len, (int)l->threads, l->smem_bytes,
				      l->ntmaps, tm};
		b->kernels[k].fast = fe;
	}
	b->ptx_info = info; /* freed with the binary (nkernels entries) */
	if (st != TA_OK) {
		for (int k = 0; k < b->nkernels; k++)
			b->kernels[k].fast = NULL;
		ptx_info_free(info, (int)m->kernels.len);
		b->ptx_info = NULL;
	}
	b->size = sb.len;
	b->data = (uint8_t *)sb_take(&sb); /* NUL-terminated, as cuModuleLoadData wants */
	return b->data ? st : TA_ERR_NOMEM;
}

static ta_status compile_amd(ta_ctx *c, const Module *m, const Target *t, const ta_compile_options *o,
                             ta_binary *b)
{
	AmdOutput out = {0};
	out.dump_after = o->dump_after;
	out.verify = o->verify;
	if (amd_compile(m, t, &out, &c->diag)) {
		amd_output_free(&out);
		return TA_ERR_UNSUPPORTED;
	}
	ta_status st = package_kernels(b, m);
	for (int p = 0; p < AMD_PASS_COUNT; p++)
		add_pass(b, amd_pass_name[p], out.pass_ms[p]);
	StrBuf sum = {0};
	for (int k = 0; k < out.nkernels; k++) {
		const AmdKernelInfo *s = &out.kernels[k];
		sb_printf(&sum, "; kernel %s: sgprs %d, vgprs %d, agprs %d, lds %d bytes, scratch %d bytes, "
		          "waves/SIMD %d (limited by %s), %d instructions, %d bytes\n",
		          s->name, s->sgprs, s->vgprs, s->agprs, s->lds_bytes, s->scratch_bytes, s->waves,
		          s->waves_limit ? s->waves_limit : "?", s->ninsns, s->code_bytes);
		if (s->notes)
			sb_puts(&sum, s->notes);
	}
	if (sum.oom || !(b->summary = sb_take(&sum)))
		st = TA_ERR_NOMEM;
	if (st == TA_OK && o->dump_after && !(b->dump = sb_take(&out.dump)))
		st = TA_ERR_NOMEM;
	for (int k = 0; st == TA_OK && k < b->nkernels && k < out.nkernels; k++) {
		const AmdKernelInfo *s = &out.kernels[k];
		ta_kernel_info *ki = &b->kernels[k];
		ki->shared_bytes = s->lds_bytes;
		ki->scratch_bytes = s->scratch_bytes;
		ki->sgprs = s->sgprs;
		ki->vgprs = s->vgprs;
		ki->agprs = s->agprs;
		ki->waves_per_simd = s->waves;
	}
	b->data = out.code_object;
	b->size = out.code_object_len;
	out.code_object = NULL;
	amd_output_free(&out);
	return b->data ? st : TA_ERR_NOMEM;
}

/* Compiles a verified module; takes ownership of m (kept for ta_binary_grid). */
typedef struct {
	ta_ctx *c;
	const Module *m;
	const Target *t;
	const ta_compile_options *o;
	ta_binary *b;
	ta_status st;
} CompileJob;

static void compile_job(void *p)
{
	CompileJob *j = p;
	j->st = target_is_amd(j->t->id) ? compile_amd(j->c, j->m, j->t, j->o, j->b) : compile_ptx(j->c, j->m, j->t, j->o, j->b);
}

/* The backends recurse over blocks and expressions: they run on a stack
 * sized for the module (run_with_stack_for). */
static ta_status compile_module(ta_ctx *c, Module *m, const Target *t, const ta_compile_options *o,
                                double frontend_ms, ta_binary **out)
{
	static const ta_compile_options none;
	if (!o)
		o = &none;
	ta_binary *b = binary_new(t, target_is_amd(t->id) ? "hsaco" : "ptx");
	if (!b) {
		ir_module_free(m);
		return TA_ERR_NOMEM;
	}
	b->m = m;
	add_pass(b, "frontend", frontend_ms);
	CompileJob j = {c, m, t, o, b, TA_OK};
	ta_status st = run_with_stack_for(ir_nesting(m), compile_job, &j) ? ta_deep_failed(c) : j.st;
	if (st != TA_OK) {
		binary_free(b);
		return st;
	}
	*out = b;
	return TA_OK;
}

static ta_status parse_target(ta_ctx *c, const char *target, Target *t)
{
	if (!target || target_parse(target, t)) {
		diag_error(&c->diag, "unknown target '%s' (gfx1100, gfx90a, gfx942, sm_80, sm_90a)",
		           target ? target : "(null)");
		return TA_ERR_INVALID;
	}
	return TA_OK;
}

typedef struct {
	Module *m;
	Diag *d;
	int bad;
} VerifyOnlyJob;

static void verify_only_job(void *p)
{
	VerifyOnlyJob *j = p;
	j->bad = ir_verify(j->m, j->d);
}

static ta_status check_options(ta_ctx *c, const Target *t, const ta_compile_options *o);

TA_API ta_status ta_compile(ta_ctx *c, ta_module *tm, const char *target, ta_binary **out)
{
	return ta_compile_with(c, tm, target, NULL, out);
}

TA_API ta_status ta_compile_with(ta_ctx *c, ta_module *tm, const char *target, const ta_compile_options *o,
                                 ta_binary **out)
{
	if (!c || !tm || !out)
		return TA_ERR_INVALID;
	*out = NULL;
	Target t;
	ta_status st = parse_target(c, target, &t);
	if (st == TA_OK)
		st = check_options(c, &t, o);
	if (st != TA_OK)
		return st;
	/* The binary keeps its own copy of the IR, so the caller's module stays
	 * theirs: re-read it from its canonical text. */
	double t0 = now_ms();
	PrintJob pj = {tm->m, {0}};
	if (run_with_stack_for(ir_nesting(tm->m), print_job, &pj)) {
		sb_free(&pj.sb);
		return ta_deep_failed(c);
	}
	StrBuf sb = pj.sb;
	if (sb.oom) {
		sb_free(&sb);
		return TA_ERR_NOMEM;
	}
	Module *m = ir_parse(tm->m->src.name, sb.buf ? sb.buf : "", sb.len, &c->diag);
	sb_free(&sb);
	if (!m)
		return TA_ERR_PARSE;
	/* Specialised symbols print as names; carry their values over by name
	 * (-D gives every symbol of a name the same value). */
	for (size_t v = 0; v < m->vars.len; v++) {
		Var *nv = &m->vars.data[v];
		for (size_t w = 0; nv->kind == V_SYMBOL && w < tm->m->vars.len; w++) {
			const Var *ov = &tm->m->vars.data[w];
			if (ov->kind == V_SYMBOL && ov->has_value && !strcmp(ov->name, nv->name)) {
				nv->has_value = true;
				nv->value = ov->value;
				break;
			}
		}
	}
	VerifyOnlyJob vj = {m, &c->diag, 0};
	if (run_with_stack_for(ir_nesting(m), verify_only_job, &vj)) {
		ir_module_free(m);
		return ta_deep_failed(c);
	}
	if (vj.bad) {
		ir_module_free(m);
		return TA_ERR_VERIFY;
	}
	return compile_module(c, m, &t, o, now_ms() - t0, out);
}

/* ---- cache --------------------------------------------------------------- */

struct CacheEntry {
	uint64_t hash, tick;
	char *key;
	size_t keylen;
	ta_binary *bin;
	size_t bytes; /* entry_bytes */
};

/* What an entry keeps alive: its key (source text and -D values), the code
 * object or PTX, the listing summary and the IR the binary keeps for
 * ta_binary_grid (its node arrays). */
static size_t entry_bytes(size_t keylen, const ta_binary *b)
{
	const Module *m = b->m;
	size_t n = keylen + b->size + (b->summary ? strlen(b->summary) : 0) + sizeof *b;
	if (m)
		n += m->exprs.len * sizeof(Expr) + m->stmts.len * sizeof(Stmt) + m->vars.len * sizeof(Var) +
		     m->bufs.len * sizeof(Buffer) + m->src.len;
	return n;
}

static void evict(ta_ctx *c, size_t i)
{
	c->cache_bytes -= c->cache[i].bytes;
	free(c->cache[i].key);
	ta_binary_release(c->cache[i].bin);
	c->cache[i] = c->cache[--c->cache_len];
}

static size_t lru(const ta_ctx *c)
{
	size_t slot = 0;
	for (size_t i = 1; i < c->cache_len; i++)
		if (c->cache[i].tick < c->cache[slot].tick)
			slot = i;
	return slot;
}

void ta_cache_free(ta_ctx *c)
{
	for (size_t i = 0; i < c->cache_len; i++) {
		free(c->cache[i].key);
		ta_binary_release(c->cache[i].bin);
	}
	free(c->cache);
	c->cache = NULL;
	c->cache_len = 0;
	c->cache_bytes = 0;
}

TA_API ta_status ta_ctx_set_cache_bytes(ta_ctx *c, size_t max_bytes)
{
	if (!c)
		return TA_ERR_INVALID;
	c->cache_max_bytes = max_bytes;
	while (max_bytes && c->cache_len && c->cache_bytes > max_bytes)
		evict(c, lru(c));
	return TA_OK;
}

TA_API void ta_ctx_cache_size(const ta_ctx *c, size_t *entries, size_t *bytes)
{
	if (entries)
		*entries = c ? c->cache_len : 0;
	if (bytes)
		*bytes = c ? c->cache_bytes : 0;
}

TA_API ta_status ta_ctx_set_cache(ta_ctx *c, size_t max_entries)
{
	if (!c)
		return TA_ERR_INVALID;
	ta_cache_free(c);
	c->cache_max = max_entries;
	if (max_entries && !(c->cache = calloc(max_entries, sizeof *c->cache))) {
		c->cache_max = 0;
		return TA_ERR_NOMEM;
	}
	return TA_OK;
}

TA_API void ta_ctx_cache_stats(const ta_ctx *c, uint64_t *hits, uint64_t *misses)
{
	if (hits)
		*hits = c ? c->cache_hits : 0;
	if (misses)
		*misses = c ? c->cache_misses : 0;
}

/* The key is everything that can change the output: tileasm's version, the
 * target string, the -D values in definition order, and the source text.
 * (The file name only appears in diagnostics, and failures are not cached.) */
static char *cache_key(const ta_ctx *c, const char *target, const char *text, size_t len, size_t *klen)
{
	StrBuf sb = {0};
	sb_printf(&sb, "%s\n%s\n", TA_VERSION_STRING, target);
	for (size_t i = 0; i < c->defines.len; i++)
		sb_printf(&sb, "-D%s=%lld\n", c->defines.data[i].name, (long long)c->defines.data[i].value);
	sb_putn(&sb, text, len);
	*klen = sb.len;
	return sb_take(&sb);
}

/* dump_after names a pass of the target's backend. */
static ta_status check_options(ta_ctx *c, const Target *t, const ta_compile_options *o)
{
	if (!o || !o->dump_after)
		return TA_OK;
	for (int p = 0; p < AMD_PASS_COUNT; p++)
		if (!strcmp(o->dump_after, amd_pass_name[p]) && (p == AMD_PASS_LOWER || target_is_amd(t->id)))
			return TA_OK;
	diag_error(&c->diag, "no pass '%s' to dump after (AMD: lower licm isel opt sched regalloc waitcnt hazard emit; "
	           "PTX: lower)", o->dump_after);
	return TA_ERR_INVALID;
}

TA_API ta_status ta_compile_source(ta_ctx *c, const char *filename, const char *text, size_t len,
                                   const char *target, ta_binary **out)
{
	return ta_compile_source_with(c, filename, text, len, target, NULL, out);
}

TA_API ta_status ta_compile_source_with(ta_ctx *c, const char *filename, const char *text, size_t len,
                                        const char *target, const ta_compile_options *o, ta_binary **out)
{
	if (!c || !text || !out)
		return TA_ERR_INVALID;
	*out = NULL;
	size_t klen = 0;
	char *key = NULL;
	uint64_t h = 0;
	/* A dump or a verified compile is one compile's: no cache. */
	int cached = c->cache_max && (!o || (!o->dump_after && !o->verify && !o->nvidia_off));
	if (cached) {
		key = cache_key(c, target ? target : "", text, len, &klen);
		if (!key)
			return TA_ERR_NOMEM;
		h = hash_bytes(HASH_INIT, key, klen);
		for (size_t i = 0; i < c->cache_len; i++) {
			CacheEntry *e = &c->cache[i];
			if (e->hash == h && e->keylen == klen && !memcmp(e->key, key, klen)) {
				e->tick = ++c->cache_tick;
				c->cache_hits++;
				ta_binary_retain(e->bin);
				*out = e->bin;
				free(key);
				return TA_OK;
			}
		}
		c->cache_misses++;
	}
	Target t;
	double t0 = now_ms();
	ta_status st = parse_target(c, target, &t);
	if (st == TA_OK)
		st = check_options(c, &t, o);
	Module *m = st == TA_OK ? ta_frontend(c, filename, text, len, &st) : NULL;
	if (m)
		st = compile_module(c, m, &t, o, now_ms() - t0, out);
	if (st != TA_OK || !cached) {
		free(key);
		return st;
	}
	/* Insert, evicting least recently used entries while full (entries or
	 * bytes); an entry larger than the byte bound on its own is not kept. */
	size_t bytes = entry_bytes(klen, *out);
	if (c->cache_max_bytes && bytes > c->cache_max_bytes) {
		free(key);
		return TA_OK;
	}
	while (c->cache_len && (c->cache_len == c->cache_max ||
				(c->cache_max_bytes && c->cache_bytes + bytes > c->cache_max_bytes)))
		evict(c, lru(c));
	ta_binary_retain(*out);
	c->cache[c->cache_len++] = (CacheEntry){h, ++c->cache_tick, key, klen, *out, bytes};
	c->cache_bytes += bytes;
	return TA_OK;
}

/* ---- queries --------------------------------------------------------------- */

TA_API const char *ta_binary_target(const ta_binary *b) { return b ? b->target_name : NULL; }
TA_API const char *ta_binary_format(const ta_binary *b) { return b ? b->format : NULL; }
TA_API int ta_binary_kernel_count(const ta_binary *b) { return b ? b->nkernels : 0; }

TA_API const void *ta_binary_data(const ta_binary *b, size_t *size)
{
	if (size)
		*size = b ? b->size : 0;
	return b ? b->data : NULL;
}

TA_API const ta_kernel_info *ta_binary_kernel(const ta_binary *b, int i)
{
	return b && i >= 0 && i < b->nkernels ? &b->kernels[i] : NULL;
}

TA_API ta_status ta_binary_grid(const ta_binary *b, int k, const int64_t *vals, uint32_t grid[3])
{
	if (!b || k < 0 || k >= b->nkernels || !grid)
		return TA_ERR_INVALID;
	const Kernel *kn = &b->m->kernels.data[k];
	/* the kernel receives unspecialised shape symbols as i32: a value it
	 * cannot receive gives no grid (issue 18.7) */
	for (int i = 0; i < kn->nargs; i++) {
		int32_t var = kn->args[i].var;
		if (var >= 0 && b->m->vars.data[var].kind == V_SYMBOL && !b->m->vars.data[var].has_value &&
		    (!vals || vals[i] < 0 || vals[i] > INT32_MAX))
			return TA_ERR_INVALID;
	}
	return ir_grid(b->m, k, vals, grid) ? TA_ERR_INVALID : TA_OK;
}

TA_API const char *ta_binary_dump(const ta_binary *b) { return b ? b->dump : NULL; }

TA_API int ta_binary_pass_times(const ta_binary *b, const char **names, double *ms, int max)
{
	int n = 0;
	for (; b && n < b->npasses && n < max; n++) {
		if (names)
			names[n] = b->pass_name[n];
		if (ms)
			ms[n] = b->pass_ms[n];
	}
	return n;
}

TA_API char *ta_binary_listing(ta_ctx *c, const ta_binary *b)
{
	if (!c || !b)
		return NULL;
	StrBuf sb = {0};
	if (!strcmp(b->format, "ptx")) {
		sb_putn(&sb, (const char *)b->data, b->size);
	} else {
		sb_puts(&sb, b->summary ? b->summary : "");
		if (co_source(b->data, b->size, 1, &sb, &c->diag)) {
			sb_free(&sb);
			return NULL;
		}
	}
	if (sb.oom) {
		sb_free(&sb);
		diag_error(&c->diag, "out of memory");
		return NULL;
	}
	return sb_take(&sb);
}
