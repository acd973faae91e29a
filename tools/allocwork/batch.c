/*
 * batch.c - bursts of one size: n blocks allocated, each touched, then all
 * freed in the order they came, over and over, for sizes of 16 B to 1 KiB
 * and n of 25 to 1 600 (glibc's benchtests/bench-malloc-simple, the loop
 * issue 14 measured at 1.6x the best peer).  A program building and
 * dropping a list, a tree or a message does this.  Each burst of 16 or
 * more outgrows a small per-class thread cache, so it stresses the small
 * object paths past it: a slab's free list and its refills, or a peer's
 * central lists.
 */
#include <stdlib.h>
#include <string.h>

#include "work.h"

/*
 * Pairs per (size, burst) per unit of work: about 1.3 ms each on a fast
 * allocator here, and up to 0.45 s on glibc's, whose larger bursts give
 * the heap's top back and fault it in again (340 000 faults at -s 4).
 */
#define PAIRS 250000

static const uint32_t sizes[] = { 16, 64, 256, 1024 };
static const uint32_t bursts[] = { 25, 100, 400, 1600 };
#define BURST_MAX 1600

static bool write_all; /* -w: every byte of each block, not only its first */

/* iters bursts of n blocks of size bytes; the first byte of each written (every byte: -w), read back before its free. */
static void burst(struct work_lane *l, unsigned char **blk, uint32_t size, uint32_t n, long iters)
{
	for (long it = 0; it < iters; it++) {
		for (uint32_t i = 0; i < n; i++) {
			if (!(blk[i] = malloc(size)))
				abort();
			if (write_all)
				memset(blk[i], (unsigned char)(i + (uint32_t)it), size);
			else
				blk[i][0] = (unsigned char)(i + (uint32_t)it);
		}
		for (uint32_t i = 0; i < n; i++) {
			l->res.corrupt |= blk[i][0] != (unsigned char)(i + (uint32_t)it);
			l->res.checksum += blk[i][0];
			free(blk[i]);
		}
	}
	l->res.ops += (uint64_t)iters * n;
}

static void *lane(void *arg)
{
	struct work_lane *l = arg;
	unsigned char **blk = malloc(BURST_MAX * sizeof(*blk));

	if (!blk)
		abort();
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t b = 0; b < sizeof(bursts) / sizeof(bursts[0]); b++)
			burst(l, blk, sizes[s], bursts[b], l->rounds * PAIRS / bursts[b]);
	free(blk);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	write_all = a->write_all;
	work_lanes(a, r, sizeof(struct work_lane), lane, 1, 1);
}

const struct workload work_batch = { "batch", "bursts of one size: n blocks (16 B - 1 KiB, n 25 - 1600) allocated, then all freed",
				     run };
