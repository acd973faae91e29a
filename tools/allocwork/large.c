/*
 * large.c - large blocks recycled: a handful of slots each hold a block of
 * 5 to 25 MiB; at every step one slot, chosen at random, frees its block
 * and takes a new one of a random size, then every page of it is written
 * (image buffers, decoded frames, request bodies).  The live total stays
 * near slots x 15 MiB, so an allocator that keeps freed large blocks
 * backed reuses them with no page fault, and one that gives them back to
 * the kernel at once faults every page in again.
 */
#include <stdlib.h>
#include <string.h>

#include "work.h"

#define SLOTS 6
#define MIN_MB 5
#define MAX_MB 25
#define STEPS 60

static void *lane(void *arg)
{
	struct work_lane *l = arg;
	struct work_result *r = &l->res;
	unsigned char *slot[SLOTS] = { 0 };
	uint64_t size[SLOTS] = { 0 };

	for (long step = 0; step < STEPS * l->rounds; step++, r->ops++) {
		int k = (int)(work_rnd(&l->rng) % SLOTS);
		uint64_t mb = MIN_MB + work_rnd(&l->rng) % (MAX_MB - MIN_MB + 1);

		if (slot[k]) {
			r->corrupt |= !work_check(slot[k], size[k], size[k] + (uint64_t)k);
			r->checksum += slot[k][size[k] / 2];
			free(slot[k]);
		}
		size[k] = (mb << 20) - 64 * (uint64_t)k; /* not a page multiple: as a program asks */
		slot[k] = malloc(size[k]);
		if (!slot[k])
			abort();
		memset(slot[k], (int)(step & 0xff), size[k]);
		work_fill(slot[k], size[k], size[k] + (uint64_t)k);
	}
	for (int k = 0; k < SLOTS; k++)
		free(slot[k]);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct work_lane), lane, 0x1a63ull, 1);
}

const struct workload work_large = { "large", "a handful of 5-25 MiB blocks freed and reallocated at random, every page written",
				     run };
