/*
 * buffers.c - a server's buffers: each thread keeps a window of live
 * buffers of 1 to 300 pages (4 KiB to 1.2 MiB, uniform in pages, not page
 * multiples), replaces one at random at each step and writes every page of
 * the new one (requests read into, responses built).  The sizes are too
 * varied to be reused one for one, so an allocator either keeps freed
 * pages backed and reuses them across sizes, or gives them back and has
 * every page of the next buffer faulted in again: page faults and peak
 * RSS against the live bytes (a window of 64 x 600 KiB per thread) say
 * which.
 */
#include <stdlib.h>

#include "work.h"

#define WINDOW 64
#define MAX_PAGES 300
#define OPS_PER_ROUND 2000
#define ROUNDS 4

struct buffers_lane {
	struct work_lane w;
	struct work_slot slot[WINDOW];
};

static void *lane(void *arg)
{
	struct buffers_lane *l = arg;

	for (long i = 0; i < l->w.rounds * OPS_PER_ROUND; i++) {
		struct work_slot *s = &l->slot[work_rnd(&l->w.rng) % WINDOW];
		uint64_t size = (1 + work_rnd(&l->w.rng) % MAX_PAGES) * 4096 - 100;

		work_replace(&l->w, s, size);
		work_write_pages(s);
	}
	for (unsigned k = 0; k < WINDOW; k++) {
		l->w.res.corrupt |= !work_check(l->slot[k].p, l->slot[k].size, l->slot[k].tag);
		free(l->slot[k].p);
	}
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct buffers_lane), lane, 0x9e3779b97f4a7c15ull, ROUNDS);
}

const struct workload work_buffers = { "buffers", "buffers of 4 KiB-1.2 MiB replaced at random, every page written, one window per thread",
				       run };
