/* util.c — containers and file helpers declared in util.h. */
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int vec_grow_(void **data, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -1;
		ncap *= 2;
	}
	void *p = realloc(*data, ncap * elem);
	if (!p)
		return -1;
	*data = p;
	*cap = ncap;
	return 0;
}

struct ArenaChunk {
	ArenaChunk *next;
	size_t used, size;
	_Alignas(16) unsigned char mem[];
};

void *arena_alloc(Arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	ArenaChunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t csize = size > 16384 ? size : 16384;
		c = malloc(sizeof(ArenaChunk) + csize);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->size = csize;
		a->head = c;
	}
	void *p = c->mem + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

void arena_free(Arena *a)
{
	ArenaChunk *c = a->head;
	while (c) {
		ArenaChunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = NULL;
}

static int sb_reserve(StrBuf *sb, size_t extra)
{
	if (sb->oom)
		return -1;
	if (sb->len + extra + 1 <= sb->cap)
		return 0;
	size_t ncap = sb->cap ? sb->cap : 256;
	while (ncap < sb->len + extra + 1)
		ncap *= 2;
	char *p = realloc(sb->buf, ncap);
	if (!p) {
		sb->oom = 1;
		return -1;
	}
	sb->buf = p;
	sb->cap = ncap;
	return 0;
}

void sb_putn(StrBuf *sb, const char *s, size_t n)
{
	if (sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void sb_putc(StrBuf *sb, char c) { sb_putn(sb, &c, 1); }
void sb_puts(StrBuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap)
{
	/* Format straight into the free space; only an overflow formats twice.
	 * (Code emitters print millions of short lines: one pass matters.) */
	if (sb_reserve(sb, 128))
		return;
	size_t avail = sb->cap - sb->len;
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(sb->buf + sb->len, avail, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		sb->buf[sb->len] = 0;
		return;
	}
	if ((size_t)n >= avail) {
		if (sb_reserve(sb, (size_t)n))
			return;
		vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	}
	sb->len += (size_t)n;
}

void sb_printf(StrBuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

char *sb_take(StrBuf *sb)
{
	char *p = sb->buf;
	if (sb->oom) {
		free(p);
		p = NULL;
	} else if (!p) {
		p = calloc(1, 1);
	}
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
	return p;
}

void sb_free(StrBuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
}

char *read_file(const char *path, size_t *len_out)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	/* fopen opens a directory for reading on Linux and fread then fails:
	 * say EISDIR rather than EIO */
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		errno = EISDIR;
		return NULL;
	}
	/* read straight into the buffer: no large stack array (hosts call this
	 * on small thread stacks) */
	StrBuf sb = {0};
	int err = 0;
	for (;;) {
		if (sb_reserve(&sb, 65536))
			break;
		errno = 0;
		size_t n = fread(sb.buf + sb.len, 1, sb.cap - sb.len - 1, f);
		sb.len += n;
		if (n == 0) {
			if (ferror(f))
				err = errno ? errno : EIO;
			break;
		}
	}
	fclose(f);
	if (err || sb.oom) {
		sb_free(&sb);
		errno = err ? err : ENOMEM;
		return NULL;
	}
	if (len_out)
		*len_out = sb.len;
	sb.buf[sb.len] = 0;
	return sb_take(&sb);
}

typedef struct {
	void (*fn)(void *);
	void *arg;
} DeepJob;

static void *deep_main(void *p)
{
	DeepJob *j = p;
	j->fn(j->arg);
	return NULL;
}

int run_with_stack_for(size_t depth, void (*fn)(void *), void *arg)
{
	if (depth <= DEEP_MIN_DEPTH) {
		fn(arg);
		return 0;
	}
	pthread_attr_t a;
	if (pthread_attr_init(&a))
		return -1;
	size_t size = DEEP_STACK_BASE + depth * DEEP_STACK_PER_LEVEL;
	DeepJob j = {fn, arg};
	pthread_t th;
	int r = pthread_attr_setstacksize(&a, size);
	if (!r)
		r = pthread_create(&th, &a, deep_main, &j);
	pthread_attr_destroy(&a);
	if (r)
		return -1;
	pthread_join(th, NULL);
	return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* -o /dev/null, a FIFO, /dev/stdout: write in place.  Renaming a
		 * temporary over it would replace the device node (as root). */
		FILE *f = fopen(path, "wb");
		if (!f)
			return -1;
		int ok = fwrite(data, 1, len, f) == len;
		ok &= fclose(f) == 0;
		return ok ? 0 : -1;
	}
	size_t pl = strlen(path);
	char *tmp = malloc(pl + 16);
	if (!tmp)
		return -1;
	snprintf(tmp, pl + 16, "%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		free(tmp);
		return -1;
	}
	int ok = fwrite(data, 1, len, f) == len;
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, path) != 0) {
		int e = errno;
		remove(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	free(tmp);
	return 0;
}

uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
