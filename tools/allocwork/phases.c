/*
 * phases.c - a program's phases, round after round (a compiler's passes
 * over its files, a batch job's steps, a server's requests of one kind
 * then another): each round builds an index of small objects (tree nodes
 * and their keys, hash nodes and their short vectors, the buckets grown by
 * doubling), then a set of page-sized buffers (4-11 KiB, every page
 * written), erases half of the tree, and frees everything.  Every round
 * does the same work, so an allocator that serves a round from what the
 * round before freed holds the first round's peak; one whose cache keeps
 * the freed memory in the shape of the last phase (blocks of a few pages
 * where the next phase wants whole slabs) faults fresh pages in and grows
 * with the rounds.  It is C++'s containers' pattern (std::map of strings,
 * std::unordered_map of vectors, a vector of buffers), in C.
 */
#include <stdlib.h>
#include <string.h>

#include "work.h"

#define OBJECTS 100000 /* per round, times -s: four small blocks each */
#define BUFFERS 8000   /* per round, times -s */
#define ROUNDS 3

enum { NODE, KEY, HASH_NODE, VECTOR, KINDS };

static uint64_t object_size(int kind, long i, uint64_t *rng)
{
	switch (kind) {
	case NODE:
		return 48;
	case KEY:
		return 24 + work_rnd(rng) % 40;
	case HASH_NODE:
		return 40;
	default:
		return 4 * (uint64_t)(1 + i % 9);
	}
}

/*
 * The buckets, doubled when full (a hash table's rehash): a new array, the
 * old copied and freed, as C++'s containers grow (never by realloc).
 */
static void **bucket(void **buckets, long i, long *cap)
{
	void **grown;

	if (i < *cap)
		return buckets;
	*cap = *cap ? 2 * *cap : 64;
	grown = malloc((size_t)*cap * sizeof(*grown));
	if (!grown)
		abort();
	if (buckets)
		memcpy(grown, buckets, (size_t)i * sizeof(*grown));
	free(buckets);
	return grown;
}

void work_index_round(struct work_lane *w, long objects, long buffers)
{
	struct work_slot *obj = calloc((size_t)(objects * KINDS), sizeof(*obj)), *buf = calloc((size_t)(2 * buffers), sizeof(*buf));
	void **buckets = NULL;
	long cap = 0;

	if (!obj || !buf)
		abort();
	for (long i = 0; i < objects; i++) {
		for (int k = 0; k < KINDS; k++)
			work_replace(w, &obj[i * KINDS + k], object_size(k, i, &w->rng));
		buckets = bucket(buckets, i, &cap);
		buckets[i] = obj[i * KINDS + HASH_NODE].p;
	}
	for (long j = 0; j < buffers; j++) { /* each with its holder: a vector's 24 bytes */
		work_replace(w, &buf[2 * j], 24);
		work_replace(w, &buf[2 * j + 1], 4096 + (uint64_t)(j % 8) * 1024);
		work_write_pages(&buf[2 * j + 1]);
	}
	for (long i = 0; i < objects; i += 2) { /* half the tree erased */
		work_release(w, &obj[i * KINDS + NODE]);
		work_release(w, &obj[i * KINDS + KEY]);
	}
	/* The round's end: its buffers, then its index, freed in the order a scope's destructors run. */
	for (long j = 0; j < 2 * buffers; j++)
		work_release(w, &buf[j]);
	for (long i = 0; i < objects * KINDS; i++)
		if (obj[i].p)
			work_release(w, &obj[i]);
	w->res.checksum += (uint64_t)cap;
	free(buckets);
	free(obj);
	free(buf);
}

static void run(const struct work_args *a, struct work_result *r)
{
	struct work_lane w = { .rng = 0x2545f4914f6cdd1dull };

	for (long round = 0; round < ROUNDS; round++)
		work_index_round(&w, OBJECTS * a->scale, BUFFERS * a->scale);
	*r = w.res;
}

const struct workload work_phases = { "phases",
				      "a program's phases, 3 rounds: an index of small objects, then page-sized buffers, all freed",
				      run };
