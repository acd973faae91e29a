/*
 * refill.c - a cache server's pattern (Redis, memcached): fill a table
 * with values of random sizes, delete two thirds of them at random, refill
 * with values of another size mix, and again.  The values that survive
 * each cycle pin the memory around them, so an allocator that cannot reuse
 * or give back the holes they leave grows.  The live bytes at the end are
 * reported beside the RSS (live_bytes), so RSS at the end / live is the
 * overhead; the values stay allocated until the process exits.
 */
#include <stdlib.h>

#include "work.h"

#define KEYS 200000
#define CYCLES 4

struct value {
	unsigned char *p;
	uint64_t size, tag;
};

/* Cycle c's mix: sizes 16 B .. 2 KiB, log-uniform, shifted each cycle so holes rarely fit exactly. */
static uint64_t value_size(uint64_t *rng, long c)
{
	uint64_t x = work_rnd(rng), shift = 4 + x % 8;

	return ((uint64_t)1 << shift) + (x >> 8) % ((uint64_t)1 << shift) + (uint64_t)(c % 3) * 8;
}

static void put(struct work_result *r, struct value *v, uint64_t size)
{
	v->p = malloc(size);
	if (!v->p)
		abort();
	v->size = size;
	v->tag = r->ops++;
	work_fill(v->p, size, v->tag);
}

static void drop(struct work_result *r, struct value *v)
{
	r->corrupt |= !work_check(v->p, v->size, v->tag);
	r->checksum += v->p[0] + v->size;
	free(v->p);
	v->p = NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	long keys = KEYS * a->scale;
	struct value *t = calloc((size_t)keys, sizeof(*t));
	uint64_t rng = 0x9fb21c651e98df25ull;

	if (!t)
		abort();
	for (long c = 0; c < CYCLES; c++) {
		for (long k = 0; k < keys; k++)
			if (!t[k].p)
				put(r, &t[k], value_size(&rng, c));
		for (long k = 0; k < keys; k++)
			if (work_rnd(&rng) % 3)
				drop(r, &t[k]);
	}
	for (long k = 0; k < keys; k++)
		if (!t[k].p)
			put(r, &t[k], value_size(&rng, CYCLES));
	/* Held to the end of the process: allocwork's RSS at the end is measured with them live. */
	for (long k = 0; k < keys; k++)
		r->live_bytes += t[k].size;
}

const struct workload work_refill = { "refill", "a cache server: fill 200k values, delete two thirds, refill with another size mix, 4 times", run };
