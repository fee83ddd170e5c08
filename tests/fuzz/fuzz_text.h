/* fuzz_text.h — the one copy of libFuzzer's input into a NUL-terminated buffer
 * that the text-reading fuzz targets share. libFuzzer's data is not
 * terminated, and the parsers (and strtol in fuzz_diff's mutator) read up to a
 * NUL, so each target needs its own terminated copy.
 * Header-only (static inline) so that every fuzz target, each one executable of
 * one source file in meson.build, can use it without another object. */
#ifndef TILEASM_FUZZ_TEXT_H
#define TILEASM_FUZZ_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'ed copy of data[0..size) followed by a NUL (size + 1 bytes), or
 * NULL when out of memory; the caller frees it. */
static inline char *fuzz_text_dup(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return NULL;
	if (size)
		memcpy(text, data, size);
	text[size] = 0;
	return text;
}

#endif
