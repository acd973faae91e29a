/*
 * local.c - thread-local allocation over sizes of every class: each lane
 * keeps a window of live blocks whose sizes are spread evenly over powers
 * of two from 8 B to 8 KiB (then a uniform size within the power), and
 * replaces a random one at each step; no block crosses threads.  It
 * stresses the owner's path across size classes and what each class keeps
 * cached, and scales with threads only as far as the allocator keeps
 * threads apart.
 */
#include <stdlib.h>

#include "work.h"

#define WINDOW 1000
#define OPS_PER_ROUND 200000
#define ROUNDS 5

struct local_lane {
	struct work_lane w;
	struct work_slot slot[WINDOW];
};

/* Log-uniform from 8 B to 8 KiB: each power of two as likely as the next. */
static uint64_t local_size(uint64_t *rng)
{
	uint64_t x = work_rnd(rng), shift = 3 + x % 10;

	return ((uint64_t)1 << shift) + (x >> 8) % ((uint64_t)1 << shift);
}

static void *lane(void *arg)
{
	struct local_lane *l = arg;

	for (long i = 0; i < l->w.rounds * OPS_PER_ROUND; i++) {
		unsigned k = (unsigned)(work_rnd(&l->w.rng) % WINDOW);

		work_replace(&l->w, &l->slot[k], local_size(&l->w.rng));
	}
	for (unsigned k = 0; k < WINDOW; k++)
		free(l->slot[k].p);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct local_lane), lane, 0x2545f4914f6cdd1dull, ROUNDS);
}

const struct workload work_local = { "local", "thread-local blocks of every size class (8 B..8 KiB, log-uniform), each thread on its own", run };
