/*
 * work.h - the classic allocator workloads of the peer comparison.  Each
 * one calls only malloc & co., so whichever allocator LD_PRELOAD puts
 * under the program runs the identical work, and each returns a checksum
 * that depends only on the work (never on addresses): every allocator must
 * print the same one.
 */
#ifndef ALLOCWORK_WORK_H
#define ALLOCWORK_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct work_args {
	long threads;   /* -t: threads (pairs of threads for prodcons) */
	long scale;     /* -s: multiplies the amount of work */
	bool write_all; /* -w: every byte of each block written, where a workload writes only part of it */
};

struct work_result {
	uint64_t ops;      /* allocations made */
	uint64_t checksum; /* of the contents read back; same on every allocator */
	bool corrupt;      /* a block did not hold what was written into it */
	uint64_t live_bytes; /* what the work still holds when it returns (refill: its table of values) */
};

struct workload {
	const char *name;
	const char *stresses; /* one line for the listing and the README */
	void (*run)(const struct work_args *a, struct work_result *r);
};

extern const struct workload work_larson, work_prodcons, work_mixed, work_realloc, work_frag, work_large, work_stress,
	work_local, work_refill, work_buffers, work_churn, work_batch, work_phases, work_tasks;

/* xorshift64: a cheap, per-thread random stream. */
static inline uint64_t work_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Runs fn(ctx + i * stride) on n threads at once and waits for them. */
int work_threads(long n, void *(*fn)(void *), void *ctx, size_t stride);

/* Adds up n lanes' results: structs stride bytes apart, each starting with its struct work_result. */
void work_sum(struct work_result *r, const void *lanes, long n, size_t stride);

/*
 * What a workload's per-thread lane starts with; work_lanes fills it in.
 * A cache line of its own (work_lanes_alloc): each thread writes its
 * counters and random state on every operation, and lanes 48 bytes apart
 * shared lines, so two threads' operations took turns holding them.
 */
struct work_lane {
	_Alignas(64) struct work_result res;
	uint64_t rng; /* the lane's random stream: seed * (lane + 1) */
	long rounds;  /* the workload's unit of work times -s */
};

/*
 * n zeroed lanes of lane_size bytes (a multiple of 64, as any struct that
 * starts with a work_lane), 64-byte aligned; aborts when out of memory.
 */
void *work_lanes_alloc(long n, size_t lane_size);

/* Runs fn on a->threads zeroed lanes of lane_size bytes, each starting with a struct work_lane, and sums them into r. */
void work_lanes(const struct work_args *a, struct work_result *r, size_t lane_size, void *(*fn)(void *), uint64_t seed,
		long rounds);

/* A live block of a lane's window (larson, local). */
struct work_slot {
	unsigned char *p;
	uint64_t size, tag;
};

/* Check the slot's block, add it to the checksum and free it; the slot is empty after. */
void work_release(struct work_lane *w, struct work_slot *s);
/* Check and free the slot's block, if any, then put a fresh one of size bytes there. */
void work_replace(struct work_lane *w, struct work_slot *s, uint64_t size);
/* Write one byte of every page of the slot's block between its ends (work_fill wrote those). */
void work_write_pages(struct work_slot *s);

/*
 * One round of phases' work (phases.c), tasks' too: an index of objects x 4
 * small blocks, then buffers page-sized buffers with their holders, every
 * page written, half the index erased, and everything freed.
 */
void work_index_round(struct work_lane *w, long objects, long buffers);

/* Writes a block's first and last bytes from a tag; work_check reads them back. */
void work_fill(unsigned char *p, uint64_t size, uint64_t tag);
bool work_check(const unsigned char *p, uint64_t size, uint64_t tag);

#endif
