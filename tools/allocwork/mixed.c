/*
 * mixed.c - many small objects of mixed lifetimes, as an interpreter or a
 * compiler makes them: one in twenty lives to the end, about half of the
 * rest die at once and the others live through the next few thousand
 * allocations.
 * Sizes are mostly tiny with a tail up to 4 KiB.  It stresses the small
 * object fast path and how tightly long-lived objects pack (peak RSS).
 */
#include <stdlib.h>

#include "work.h"

#define ALLOCS 250000
#define MEDIUM 8192

struct mixed_obj {
	unsigned char *p;
	uint64_t size, tag;
};

static uint64_t object_size(uint64_t *rng)
{
	uint64_t x = work_rnd(rng), pick = x % 100;

	x >>= 8;
	if (pick < 70)
		return 8 + x % 57;
	return pick < 95 ? 64 + x % 449 : 512 + x % 3585;
}

static void retire(struct work_lane *l, struct mixed_obj *o)
{
	l->res.corrupt |= !work_check(o->p, o->size, o->tag);
	l->res.checksum += o->p[0];
	free(o->p);
}

static void *lane(void *arg)
{
	struct work_lane *l = arg;
	struct mixed_obj *ring = calloc(MEDIUM, sizeof(*ring)), *kept = malloc(sizeof(*kept) * (size_t)(l->rounds / 20 + 1));
	long nkept = 0;

	if (!ring || !kept)
		abort();
	for (long i = 0; i < l->rounds; i++) {
		uint64_t size = object_size(&l->rng), life = work_rnd(&l->rng) % 19;
		struct mixed_obj o = { malloc(size), size, (uint64_t)i };

		if (!o.p)
			abort();
		work_fill(o.p, o.size, o.tag);
		if (i % 20 == 19) {
			kept[nkept++] = o;
		} else if (life < 10) {
			retire(l, &o);
		} else {
			struct mixed_obj *slot = &ring[i % MEDIUM];

			if (slot->p)
				retire(l, slot);
			*slot = o;
		}
	}
	for (long i = 0; i < MEDIUM; i++)
		if (ring[i].p)
			retire(l, &ring[i]);
	for (long i = 0; i < nkept; i++)
		retire(l, &kept[i]);
	l->res.ops = (uint64_t)l->rounds;
	free(ring);
	free(kept);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct work_lane), lane, 0x9e3779b97f4a7c15ull * 7, ALLOCS);
}

const struct workload work_mixed = { "mixed", "small objects of mixed lifetimes (8 B - 4 KiB): fast path and packing", run };
