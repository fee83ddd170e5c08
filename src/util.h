/* util.h — small containers shared by every layer: growable arrays, an arena,
 * a string buffer.  No global state; every allocation failure is reported to
 * the caller (functions return 0/-1 or NULL) rather than aborting. */
#ifndef TILEASM_UTIL_H
#define TILEASM_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TA_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TA_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TA_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Growable array of T: `VEC(int) v = {0}; if (vec_push(&v, 3)) fail;`.
 * vec_push evaluates to nonzero on allocation failure. */
#define VEC(T) struct { T *data; size_t len, cap; }
int vec_grow_(void **data, size_t *cap, size_t need, size_t elem);
#define vec_reserve(v, n) \
	((n) > (v)->cap ? vec_grow_((void **)&(v)->data, &(v)->cap, (n), sizeof(*(v)->data)) : 0)
#define vec_push(v, x) \
	(vec_reserve((v), (v)->len + 1) ? -1 : ((v)->data[(v)->len++] = (x), 0))
#define vec_free(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

/* Arena: bump allocator freed as a whole.  Used for IR nodes so a module is
 * released in one call and no node leaks on an error path. */
typedef struct ArenaChunk ArenaChunk;
typedef struct {
	ArenaChunk *head;
} Arena;
void *arena_alloc(Arena *a, size_t size);        /* zeroed, 16-byte aligned */
char *arena_strndup(Arena *a, const char *s, size_t n);
void arena_free(Arena *a);

/* String buffer; on allocation failure it sets `oom` and keeps going so
 * callers check once at the end. */
typedef struct {
	char *buf;
	size_t len, cap;
	int oom;
} StrBuf;
void sb_putc(StrBuf *sb, char c);
void sb_puts(StrBuf *sb, const char *s);
void sb_putn(StrBuf *sb, const char *s, size_t n);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
char *sb_take(StrBuf *sb); /* returns the NUL-terminated buffer (caller frees), resets sb */
void sb_free(StrBuf *sb);

/* Whole-file I/O.  write_file_atomic writes to a temporary and renames, so a
 * failed compile never leaves a partial output file behind. */
char *read_file(const char *path, size_t *len_out); /* NUL-terminated; NULL + errno on failure */
int write_file_atomic(const char *path, const void *data, size_t len);

/* The passes after the parser recurse over blocks and expression trees (up to
 * ~700 bytes of stack per level at -O2).  run_with_stack_for runs fn(arg)
 * directly when a module nests at most DEEP_MIN_DEPTH levels (ir_nesting),
 * and otherwise on a thread of its own whose stack is sized for `depth`
 * levels, so a host's small thread stack (64 KiB) never holds that
 * recursion.  -1 (fn not run) if no thread could be created. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DEEP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DEEP_SANITIZED 1
#endif
#endif
#ifdef DEEP_SANITIZED /* sanitizers make frames several times larger */
#define DEEP_MIN_DEPTH 4
#define DEEP_STACK_BASE (4u << 20)
#define DEEP_STACK_PER_LEVEL (32u << 10)
#else
#define DEEP_MIN_DEPTH 16
#define DEEP_STACK_BASE (1u << 20)
#define DEEP_STACK_PER_LEVEL (8u << 10)
#endif
int run_with_stack_for(size_t depth, void (*fn)(void *), void *arg);

/* 64-bit FNV-1a, for cache keys and deterministic hashing. */
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);
#define HASH_INIT 0xcbf29ce484222325ull

#endif
