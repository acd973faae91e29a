/*
 * tasks.c - a thread per task, round after round (a server that starts a
 * thread per job, a build tool's workers, a test runner): each of 6 rounds
 * starts THREADS threads at once, each builds phases' index and buffers
 * (work_index_round: about 10 MB, every page written), frees it all and
 * exits.  An allocator that hands an exited thread's memory, still backed,
 * to the next round's threads faults the first round's pages in and no
 * more; one that gives it back at the exit faults every round's in again.
 */
#include <stddef.h>

#include "work.h"

#define OBJECTS 20000 /* per thread, times -s: four small blocks each */
#define BUFFERS 1000  /* per thread, times -s */
#define ROUNDS 6

static void *task(void *arg)
{
	struct work_lane *w = arg;

	work_index_round(w, OBJECTS * w->rounds, BUFFERS * w->rounds);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	for (long round = 0; round < ROUNDS; round++)
		work_lanes(a, r, sizeof(struct work_lane), task, 0x9e3779b97f4a7c15ull + (uint64_t)round, 1);
}

const struct workload work_tasks = { "tasks",
				     "a thread per task, 6 rounds: THREADS threads build ~10 MB each, free it and exit",
				     run };
