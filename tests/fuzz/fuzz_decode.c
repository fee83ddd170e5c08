/* fuzz_decode.c — libFuzzer target: the AMD decoder on arbitrary bytes; every
 * decoded instruction must print and stay within the input. */
#include <stdlib.h>

#include "isa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const ta_target targets[] = {TA_TARGET_GFX90A, TA_TARGET_GFX942, TA_TARGET_GFX1100,
	                                    (ta_target)(TA_TARGET_GFX1100 | ISA_WAVE64)};
	ta_target t = targets[data[0] % 4];
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	while (n >= 4) {
		IsaInsn in;
		int len = isa_decode(t, p, n, &in);
		if (len <= 0) {
			p += 4;
			n -= 4;
			continue;
		}
		if ((size_t)len > n)
			abort(); /* consumed more than it was given */
		StrBuf sb = {0};
		isa_print(t, &in, &sb);
		sb_free(&sb);
		p += len;
		n -= (size_t)len;
	}
	return 0;
}
