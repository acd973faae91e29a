/*
 * prodcons.c - producer/consumer pairs: one thread allocates and fills
 * blocks and hands them over a ring; the other checks and frees them.
 * Every free is of another, living thread's block, the pattern of a
 * pipeline or a message queue.  It stresses remote frees and how soon the
 * producer gets that memory back.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "work.h"

#define RING 1024
#define ITEMS 125000

struct pc_pair {
	struct work_result res;
	_Alignas(64) _Atomic uint64_t head; /* written by the producer */
	_Alignas(64) _Atomic uint64_t tail; /* written by the consumer */
	_Alignas(64) unsigned char *ring[RING];
	uint64_t items, seed;
};

struct pc_role {
	struct pc_pair *pair;
	bool producer;
};

/* Mostly small messages, one in 64 of up to 64 KiB. */
static uint64_t message_size(uint64_t *rng)
{
	uint64_t x = work_rnd(rng);

	return (x & 63) ? 16 + (x >> 8) % 1024 : 4096 + (x >> 8) % 61440;
}

static void produce(struct pc_pair *p)
{
	uint64_t rng = p->seed;

	for (uint64_t i = 0; i < p->items; i++) {
		uint64_t size = message_size(&rng);
		unsigned char *b = malloc(size);

		if (!b)
			abort();
		*(uint64_t *)b = size;
		work_fill(b + 8, size - 8, i);
		while (i - atomic_load_explicit(&p->tail, memory_order_acquire) >= RING)
			sched_yield();
		p->ring[i % RING] = b;
		atomic_store_explicit(&p->head, i + 1, memory_order_release);
	}
	p->res.ops = p->items;
}

static void consume(struct pc_pair *p)
{
	for (uint64_t i = 0; i < p->items; i++) {
		unsigned char *b;

		while (atomic_load_explicit(&p->head, memory_order_acquire) == i)
			sched_yield();
		b = p->ring[i % RING];
		p->res.corrupt |= !work_check(b + 8, *(uint64_t *)b - 8, i);
		p->res.checksum += *(uint64_t *)b;
		free(b);
		atomic_store_explicit(&p->tail, i + 1, memory_order_release);
	}
}

static void *role(void *arg)
{
	struct pc_role *r = arg;

	if (r->producer)
		produce(r->pair);
	else
		consume(r->pair);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	long pairs = a->threads > 1 ? a->threads / 2 : 1;
	struct pc_pair *pc = aligned_alloc(64, sizeof(*pc) * (size_t)pairs);
	struct pc_role *roles = calloc((size_t)pairs * 2, sizeof(*roles));

	if (!pc || !roles)
		abort();
	for (long i = 0; i < pairs; i++) {
		pc[i] = (struct pc_pair){ .items = (uint64_t)(ITEMS * a->scale), .seed = 0x2545f4914f6cdd1dull * (uint64_t)(i + 1) };
		roles[2 * i] = (struct pc_role){ &pc[i], true };
		roles[2 * i + 1] = (struct pc_role){ &pc[i], false };
	}
	if (work_threads(pairs * 2, role, roles, sizeof(*roles)))
		abort();
	work_sum(r, pc, pairs, sizeof(*pc));
	free(roles);
	free(pc);
}

const struct workload work_prodcons = { "prodcons", "producer/consumer pairs: every block is freed by another living thread", run };
