/*
 * tests/unit/api/test_malloc_stress.c - a long randomized run of the malloc family:
 * threads x sizes from 1 byte to 64 MiB (malloc, calloc, aligned_alloc) x
 * realloc chains x frees by other threads, every block's content checked
 * before it is resized or freed.
 */
#include "helpers.h"

#include <pthread.h>
#include <stdint.h>

#include "uvmalloc.h"

#define THREADS 4
#define SLOTS 256
#define OPS 30000
#define SHARED 64

struct block {
	unsigned char *p;
	size_t size;
	uint32_t seed;
};

static struct {
	pthread_mutex_t lock;
	struct block slot[SHARED];
} shared = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Mostly small, some medium, a few large, rarely huge. */
static size_t random_size(uint64_t *rng)
{
	uint64_t r = xorshift(rng), pick = r % 1000;

	if (pick < 700)
		return 1 + (r >> 10) % 256;
	if (pick < 900)
		return 257 + (r >> 10) % 8000;
	if (pick < 995)
		return 8193 + (r >> 10) % (1 << 20);
	return (1 << 20) + (r >> 10) % (63 << 20);
}

/*
 * The bytes a block of size bytes carries its pattern in: all of a small
 * block, the edges and one byte per page of a large one.  fn sees those
 * below limit (a realloc keeps a prefix).
 */
static void each_checked(size_t size, size_t limit, void (*fn)(unsigned char *, size_t, uint32_t), unsigned char *p,
			 uint32_t seed)
{
	size_t i;

	if (size <= 16384) {
		for (i = 0; i < size && i < limit; i++)
			fn(p, i, seed);
		return;
	}
	for (i = 0; i < 4096; i++) {
		if (i < limit)
			fn(p, i, seed);
		if (size - 1 - i < limit)
			fn(p, size - 1 - i, seed);
	}
	for (i = 4096; i < size - 4096 && i < limit; i += 4093)
		fn(p, i, seed);
}

static unsigned char byte_at(size_t i, uint32_t seed) { return (unsigned char)((i * 2654435761u) >> 13 ^ seed); }
static void put(unsigned char *p, size_t i, uint32_t seed) { p[i] = byte_at(i, seed); }
static void get(unsigned char *p, size_t i, uint32_t seed)
{
	if (p[i] != byte_at(i, seed))
		cr_assert_fail("block %p: byte %zu is %#x, expected %#x", (void *)p, i, p[i], byte_at(i, seed));
}

static void fill(struct block *b) { each_checked(b->size, b->size, put, b->p, b->seed); }
static void verify(const struct block *b) { each_checked(b->size, b->size, get, b->p, b->seed); }

static void drop(struct block *b)
{
	if (!b->p)
		return;
	verify(b);
	uvm_free(b->p);
	b->p = NULL;
}

static void *worker(void *arg)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
	static __thread struct block mine[SLOTS];

	for (int op = 0; op < OPS; op++) {
		struct block *b = &mine[xorshift(&rng) % SLOTS];
		uint64_t what = xorshift(&rng) % 10;

		if (what < 4 || !b->p) { /* new block */
			drop(b);
			b->size = random_size(&rng);
			b->seed = (uint32_t)xorshift(&rng);
			size_t align = (size_t)16 << xorshift(&rng) % 9;

			b->p = what == 0 ? uvm_calloc(1, b->size) : what == 1 ? uvm_aligned_alloc(align, b->size) : uvm_malloc(b->size);
			cr_assert_not_null(b->p);
			if (what == 1)
				cr_assert_eq((uintptr_t)b->p % align, 0, "aligned_alloc(%zu, %zu) = %p", align, b->size, (void *)b->p);
			if (what == 0)
				for (size_t i = 0; i < b->size; i += b->size > 16384 ? 4093 : 1)
					cr_assert_eq(b->p[i], 0, "calloc byte %zu", i);
			fill(b);
		} else if (what < 7) { /* realloc: the common prefix survives */
			size_t size = random_size(&rng);

			verify(b);
			b->p = uvm_realloc(b->p, size);
			cr_assert_not_null(b->p);
			each_checked(b->size, size, get, b->p, b->seed);
			b->size = size;
			fill(b);
		} else if (what < 9) { /* hand it to another thread, take what was there */
			struct block got;

			pthread_mutex_lock(&shared.lock);
			struct block *s = &shared.slot[xorshift(&rng) % SHARED];
			got = *s;
			*s = *b;
			pthread_mutex_unlock(&shared.lock);
			*b = got;
		} else {
			drop(b);
		}
	}
	for (int i = 0; i < SLOTS; i++)
		drop(&mine[i]);
	return NULL;
}

Test(malloc_stress, threads_sizes_reallocs_and_cross_frees, .timeout = 600)
{
	pthread_t t[THREADS];
	struct uvm_stats st;

	for (long i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < SHARED; i++)
		drop(&shared.slot[i]);
	uvm_purge();
	uvm_stats(&st);
	cr_assert_eq(st.small_allocs, st.small_frees, "small objects leaked");
	cr_assert_eq(st.busy_count, st.slabs, "only slabs may stay live");
}
