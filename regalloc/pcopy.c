/* pcopy.c — parallel copy sequentialization.
 *
 * Moves whose destination nobody still needs to read go first (a register
 * that feeds several destinations is read before it is overwritten); what
 * remains once none is ready are disjoint cycles, each rotated with k-1
 * swaps.  No scratch register is needed: VGPR swaps are v_swap_b32 and SGPR
 * swaps three s_xor_b32 (ra.c lowers them).  O(n) after an O(R) setup over
 * the register numbers involved. */
#include "regalloc.h"

#include <stdlib.h>

#define NREG 1024 /* register numbers are < 1024 (SGPR/VGPR/AGPR indexes) */

int pcopy_sequence(const PMove *in, int n, PMove *out)
{
	/* src_of[r] = pending source for destination r (-1 none); readers[r] =
	 * pending moves reading r.  Small fixed tables: n is tiny in practice
	 * but the tables only cost a memset of the touched entries. */
	static const int16_t none = -1;
	int16_t src_of[NREG];
	int16_t readers[NREG];
	int nout = 0;
	for (int i = 0; i < n; i++)
		src_of[in[i].dst] = none, readers[in[i].src] = 0, readers[in[i].dst] = 0,
		src_of[in[i].src] = none;
	int pending = 0;
	for (int i = 0; i < n; i++) {
		if (in[i].dst == in[i].src)
			continue;
		src_of[in[i].dst] = in[i].src;
		readers[in[i].src]++;
		pending++;
	}
	/* Ready stack: destinations with a pending move and no readers. */
	int16_t stack[NREG];
	int sp = 0;
	for (int i = 0; i < n; i++)
		if (src_of[in[i].dst] >= 0 && readers[in[i].dst] == 0)
			stack[sp++] = in[i].dst, readers[in[i].dst] = -1; /* -1: queued */
	for (;;) {
		while (sp) {
			int d = stack[--sp], s = src_of[d];
			out[nout++] = (PMove){(int16_t)d, (int16_t)s, 0};
			src_of[d] = none;
			pending--;
			if (--readers[s] == 0 && src_of[s] >= 0)
				stack[sp++] = (int16_t)s, readers[s] = -1;
		}
		if (!pending)
			break;
		/* Only cycles remain: pick any pending destination and rotate. */
		int start = -1;
		for (int i = 0; i < n && start < 0; i++)
			if (src_of[in[i].dst] >= 0)
				start = in[i].dst;
		int d = start;
		while (src_of[d] != start) {
			int s = src_of[d];
			/* swap(d, s): d now has its value; s holds d's old value,
			 * which is what the cycle's last destination wants. */
			out[nout++] = (PMove){(int16_t)d, (int16_t)s, 1};
			src_of[d] = none;
			pending--;
			d = s;
		}
		src_of[d] = none; /* the last one got its value from the swaps */
		pending--;
		for (int i = 0; i < n; i++)
			if (in[i].src == start || in[i].src == d)
				readers[in[i].src] = 0;
	}
	return nout;
}
