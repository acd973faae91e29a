/*
 * larson.c - Larson and Krishnan's server simulation.  Each lane keeps an
 * array of live blocks and replaces random ones with blocks of random
 * size; every generation runs on a new thread, so most frees hit blocks
 * that a thread which has since exited allocated.  It stresses small
 * allocations, frees of other (dead) threads' blocks and the reuse of
 * their memory.
 */
#include <pthread.h>
#include <stdlib.h>

#include "work.h"

#define SLOTS 4096
#define MIN_SIZE 8
#define MAX_SIZE 1000
#define GENERATIONS 2
#define OPS_PER_GENERATION 100000

struct larson_lane {
	struct work_lane w; /* rounds: generations */
	struct work_slot slot[SLOTS];
};

static void *generation(void *arg)
{
	struct larson_lane *l = arg;

	for (long i = 0; i < OPS_PER_GENERATION; i++) {
		unsigned k = (unsigned)(work_rnd(&l->w.rng) % SLOTS);

		work_replace(&l->w, &l->slot[k], MIN_SIZE + work_rnd(&l->w.rng) % (MAX_SIZE - MIN_SIZE + 1));
	}
	return NULL;
}

/* A lane hands its blocks to a fresh thread each generation, as Larson's threads do when they exit. */
static void *lane(void *arg)
{
	struct larson_lane *l = arg;

	for (long g = 0; g < l->w.rounds; g++)
		if (work_threads(1, generation, l, 0))
			abort();
	for (unsigned k = 0; k < SLOTS; k++)
		free(l->slot[k].p);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct larson_lane), lane, 0x9e3779b97f4a7c15ull, GENERATIONS);
}

const struct workload work_larson = { "larson", "server simulation: small blocks freed by the next thread, after their owner exited", run };
