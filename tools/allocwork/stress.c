/*
 * stress.c - many threads, random lifetimes, threads that come and go (the
 * pattern of mimalloc-bench's mstress and xmalloc).  All lanes share one
 * array of slots; each operation swaps a fresh block of random size into a
 * random slot and frees the one it took out, which any thread, alive or
 * exited, may have allocated.  Every round runs on new threads.  It
 * stresses frees of other threads' blocks, the reuse of exited threads'
 * memory and what an allocator keeps per thread: peak RSS against the
 * live bytes (slots * average size) is its footprint.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

#define SLOTS_PER_THREAD 2048
#define OPS_PER_ROUND 50000
#define ROUNDS 8

struct block {
	uint64_t size, tag; /* the block's own header: what its freer checks */
};

static _Atomic(struct block *) *slots;
static long nslots;
static bool write_all; /* -w: every byte of each block, not its header and last byte */

/* Mostly small (16..512 B), some medium (to 4 KiB), a few large (to 64 KiB). */
static uint64_t block_size(uint64_t *rng)
{
	uint64_t x = work_rnd(rng), pick = x % 1000;

	x >>= 10;
	if (pick < 900)
		return 16 + x % 497;
	if (pick < 995)
		return 512 + x % 3585;
	return 4096 + x % 61441;
}

static void release(struct work_lane *w, struct block *b)
{
	if (!b)
		return;
	w->res.corrupt |= ((unsigned char *)b)[b->size - 1] != (unsigned char)b->tag;
	free(b);
}

static void *round_of(void *arg)
{
	struct work_lane *w = arg;

	for (long i = 0; i < OPS_PER_ROUND; i++) {
		uint64_t size = block_size(&w->rng), tag = w->rng;
		struct block *b = malloc(size);

		if (!b)
			abort();
		if (write_all)
			memset(b, (unsigned char)tag, size);
		b->size = size;
		b->tag = tag;
		((unsigned char *)b)[size - 1] = (unsigned char)tag;
		w->res.checksum += tag;
		w->res.ops++;
		release(w, atomic_exchange(&slots[work_rnd(&w->rng) % (uint64_t)nslots], b));
	}
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	struct work_lane *lanes = work_lanes_alloc(a->threads, sizeof(*lanes));

	nslots = SLOTS_PER_THREAD * a->threads;
	write_all = a->write_all;
	slots = calloc((size_t)nslots, sizeof(*slots));
	if (!slots)
		abort();
	for (long i = 0; i < a->threads; i++)
		lanes[i].rng = 0xd1b54a32d192ed03ull * (uint64_t)(i + 1);
	for (long k = 0; k < ROUNDS * a->scale; k++)
		if (work_threads(a->threads, round_of, lanes, sizeof(*lanes)))
			abort();
	for (long i = 0; i < nslots; i++)
		release(&lanes[0], atomic_exchange(&slots[i], NULL));
	work_sum(r, lanes, a->threads, sizeof(*lanes));
	free(slots);
	free(lanes);
}

const struct workload work_stress = {
	"stress", "many threads swap random-size blocks into shared slots (random lifetimes, cross-thread frees); new threads every round", run
};
