/*
 * churn.c - a large heap that turns over: a table of page-sized blocks (4
 * to 16 KiB, not page multiples: page buffers, cache entries, a
 * database's pages), every page written; each round frees a random half
 * of them and allocates the half again, at other sizes, and writes it.
 * The freed half is several hundred MiB: an allocator that gives it back
 * (or caps what a thread keeps) faults every page of it in again each
 * round, one that keeps it backed reuses it.  Peak RSS against the live
 * bytes (40 000 blocks of 10 KiB on average, about 400 MiB) says whether
 * what it keeps stays within what was live.
 */
#include <stdlib.h>

#include "work.h"

#define BLOCKS 40000
#define ROUNDS 4

static uint64_t block_size(uint64_t *rng) { return 4096 + work_rnd(rng) % (3 * 4096); }

/* A fresh block of a random size into s, every page written. */
static void put(struct work_lane *w, struct work_slot *s)
{
	work_replace(w, s, block_size(&w->rng));
	work_write_pages(s);
}

static void *lane(void *arg)
{
	struct work_lane *w = arg;
	struct work_slot *slot = calloc(BLOCKS, sizeof(*slot));

	if (!slot)
		abort();
	for (long k = 0; k < BLOCKS; k++)
		put(w, &slot[k]);
	for (long r = 0; r < w->rounds; r++) {
		for (long k = 0; k < BLOCKS; k++)
			if (!(work_rnd(&w->rng) & 1))
				work_release(w, &slot[k]);
		for (long k = 0; k < BLOCKS; k++)
			if (!slot[k].p)
				put(w, &slot[k]);
	}
	for (long k = 0; k < BLOCKS; k++)
		work_release(w, &slot[k]);
	free(slot);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct work_lane), lane, 0x5851f42d4c957f2dull, ROUNDS);
}

const struct workload work_churn = { "churn", "40k blocks of 4-16 KiB, every page written; each round frees a random half and allocates it again",
				     run };
