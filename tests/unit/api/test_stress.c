/*
 * tests/unit/api/test_stress.c - threads allocating, filling each block with its own
 * pattern, checking and freeing it, also freeing each other's blocks through
 * a shared exchange; and fork() while other threads allocate.
 */
#include "helpers.h"
#include "drained.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "arena.h"
#include "meta.h"
#include "uvmalloc.h"
#include "vnode.h"

#define THREADS 8
#define LIVE 64
#define EXCHANGE 256

struct block {
	uint64_t *p;
	size_t words;
};

static struct {
	pthread_mutex_t lock;
	struct block slot[EXCHANGE];
} ex = { .lock = PTHREAD_MUTEX_INITIALIZER };

static atomic_long checked;

static uint64_t pattern(const uint64_t *p, size_t i) { return ((uintptr_t)p * 0x9e3779b97f4a7c15ULL) ^ (i * 0x2545f4914f6cdd1dULL); }

/* Write the pattern on the first and last word of every page. */
static void fill(struct block b)
{
	for (size_t i = 0; i < b.words; i += 512) {
		b.p[i] = pattern(b.p, i);
		b.p[(i + 511 < b.words ? i + 511 : b.words - 1)] = pattern(b.p, i + 1);
	}
}

static void check_and_free(struct block b)
{
	for (size_t i = 0; i < b.words; i += 512) {
		cr_assert_eq(b.p[i], pattern(b.p, i), "block %p corrupted at word %zu", (void *)b.p, i);
		cr_assert_eq(b.p[(i + 511 < b.words ? i + 511 : b.words - 1)], pattern(b.p, i + 1));
	}
	atomic_fetch_add(&checked, 1);
	uvm_vfree(b.p);
}

static int nodes = 1; /* UVM_FAKE_NUMA of the run */

/* Mostly pool sizes, some from the tree; some aligned, some huge, some for another node. */
static void *alloc_some(uint64_t r, size_t pages, size_t *align)
{
	*align = 4096;
	if (r % 23 == 0) {
		*align = 2 << 20;
		return uvm_vmalloc_huge(pages * 4096 + (2 << 20));
	}
	if (r % 13 == 0)
		return uvm_vmalloc_node(pages * 4096, (int)((r >> 8) % (uint64_t)(nodes + 1)) - 1);
	if (r % 11 == 0)
		*align = (size_t)4096 << (r % 7);
	return uvm_vmalloc_aligned(pages * 4096, *align);
}

static struct block new_block(uint64_t *rng)
{
	uint64_t r = xorshift(rng);
	size_t pages = r % 16 ? 1 + r % 32 : 200 + r % 900, align;
	struct block b = { alloc_some(r, pages, &align), 0 };

	cr_assert_not_null(b.p);
	b.words = uvm_vsize(b.p) / 8;
	cr_assert_eq((uintptr_t)b.p % align, 0);
	fill(b);
	return b;
}

static void *worker(void *arg)
{
	uint64_t rng = 0x1234567ULL * (uintptr_t)arg + 1;
	struct block live[LIVE] = { 0 };

	for (int it = 0; it < 6000; it++) {
		int k = (int)(xorshift(&rng) % LIVE);

		if (live[k].p) {
			if (xorshift(&rng) % 4 == 0) {
				/* Hand it to whoever comes next; free what was there. */
				pthread_mutex_lock(&ex.lock);
				struct block *slot = &ex.slot[xorshift(&rng) % EXCHANGE], old = *slot;
				*slot = live[k];
				pthread_mutex_unlock(&ex.lock);
				if (old.p)
					check_and_free(old);
			} else {
				check_and_free(live[k]);
			}
		}
		live[k] = new_block(&rng);
	}
	for (int k = 0; k < LIVE; k++)
		if (live[k].p)
			check_and_free(live[k]);
	return NULL;
}

static void run_stress(void)
{
	pthread_t t[THREADS];
	struct uvm_stats st;
	const char *fake = getenv("UVM_FAKE_NUMA");

	nodes = fake ? atoi(fake) : 1;
	setenv("UVM_LAZY_MAX", "4096", 1); /* purge often */
	for (long i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, worker, (void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < EXCHANGE; i++)
		if (ex.slot[i].p)
			check_and_free(ex.slot[i]);
	uvm_stats(&st);
	cr_assert_eq(st.busy_count, 0);
	cr_assert_eq(st.allocs, st.frees);
	cr_assert_eq((long)st.allocs, atomic_load(&checked));
	cr_assert_gt(st.purges, 0);
	uvm_purge();
	assert_all_given_back();
}

Test(stress, threads_free_each_others_blocks, .timeout = 240) { run_stress(); }

/* Small caches drain and trim all the time; three pretend NUMA nodes split every tree, cache and pool. */
static void small_caches_three_nodes(void)
{
	setenv("UVM_PCP_HIGH", "1M", 1);
	setenv("UVM_FAKE_NUMA", "3", 1);
}

Test(stress, small_caches_on_three_nodes, .init = small_caches_three_nodes, .timeout = 240) { run_stress(); }

static void caches_off(void) { setenv("UVM_PCP", "0", 1); }

Test(stress, without_thread_caches, .init = caches_off, .timeout = 240) { run_stress(); }

static atomic_bool stop;

static void *churn(void *arg)
{
	uint64_t rng = (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		struct block b = new_block(&rng);

		check_and_free(b);
	}
	return NULL;
}

/* The child of a fork taken while other threads allocate: allocate, purge, and check. */
static int child_work(void)
{
	uint64_t rng = 99;
	struct block b[32];

	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 32; i++)
			b[i] = new_block(&rng);
		for (int i = 0; i < 32; i++)
			check_and_free(b[i]);
	}
	uvm_purge();
	return arena_check() == 0 ? 0 : 3;
}

Test(stress, fork_while_threads_allocate, .timeout = 240)
{
	pthread_t t[4];

	setenv("UVM_LAZY_MAX", "2048", 1);
	for (long i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, churn, (void *)(i + 7)), 0);
	for (int f = 0; f < 30; f++) {
		int status;
		pid_t pid = fork();

		cr_assert_geq(pid, 0);
		if (!pid)
			_exit(child_work());
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d ended with status %#x", f, status);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(arena_check(), 0);
}

/*
 * Large blocks grown in place into their thread's cached neighbours
 * (vrealloc and realloc), freed by other threads through shared slots, while
 * uvm_purge claims every heap and drains it.  A neighbour drained between
 * the grower's look and its unlink was once unlinked twice: the cache's page
 * count ran below zero and the next drain spun forever (Criterion's timeout
 * catches that); each block's contents are checked at its free.
 */
#define LSLOTS 64
static _Atomic(uint64_t *) lslot[LSLOTS];

static void lcheck(uint64_t *p)
{
	size_t n = (size_t)p[0];

	for (size_t i = 1; i < n / 8; i += 509)
		cr_assert_eq(p[i], n ^ i, "block %p of %zu bytes: word %zu changed", (void *)p, n, i);
}

static void lfill(uint64_t *p, size_t n)
{
	p[0] = n;
	for (size_t i = 1; i < n / 8; i += 509)
		p[i] = n ^ i;
}

/* rounds rounds of the large blocks' churn, from seed rng. */
static void large_rounds(uint64_t rng, int rounds)
{
	for (int r = 0; r < rounds; r++) {
		int api = xorshift(&rng) & 1;
		size_t pages = xorshift(&rng) % 4 ? 128 + (xorshift(&rng) % 4) * 256 : 128 + xorshift(&rng) % 2000;
		size_t n = pages * 4096 - xorshift(&rng) % 4000, m;
		uint64_t *p = api ? uvm_vmalloc(n) : uvm_malloc(n), *old;

		cr_assert_not_null(p);
		lfill(p, n);
		if (xorshift(&rng) % 3 == 0) {
			m = n + (xorshift(&rng) % 8) * 4096;
			p = api ? uvm_vrealloc(p, m) : uvm_realloc(p, m);
			cr_assert_not_null(p);
			lcheck(p);
			lfill(p, m);
		}
		old = atomic_exchange(&lslot[xorshift(&rng) % LSLOTS], p);
		if (old) {
			lcheck(old);
			uvm_free(old); /* often another thread's */
		}
		if (xorshift(&rng) % 50 == 0)
			uvm_purge();
	}
}

static void *large_worker(void *arg)
{
	large_rounds((uintptr_t)arg, 3000);
	return NULL;
}

static void large_slots_free(void)
{
	for (int k = 0; k < LSLOTS; k++)
		if (lslot[k]) {
			lcheck(lslot[k]);
			uvm_free(lslot[k]);
			lslot[k] = NULL;
		}
}

Test(stress, large_blocks_grow_into_neighbours_while_purges_drain, .timeout = 240)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, large_worker, (void *)(i * 7919 + 1)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	large_slots_free();
	cr_assert_eq(arena_check(), 0);
}

static void *large_short_worker(void *arg)
{
	large_rounds((uintptr_t)arg, 60);
	return NULL;
}

/*
 * The same churn on threads that come and go: 4 at a time, each replaced
 * by a new one when it exits, 60 threads in all.  An exit drains its cache
 * and pools what it held, large areas too (vn_pool_get_large), while the
 * others free its blocks (to the node now), purge, and miss into those
 * pools; a new thread adopts a warm vacant heap.
 */
Test(stress, large_blocks_across_thread_exits, .timeout = 240)
{
	pthread_t t[4];
	long made = 0;

	for (int i = 0; i < 4; i++, made++)
		cr_assert_eq(pthread_create(&t[i], NULL, large_short_worker, (void *)(made * 7919 + 5)), 0);
	for (int k = 0; k < 56; k++, made++) {
		pthread_join(t[k % 4], NULL);
		cr_assert_eq(pthread_create(&t[k % 4], NULL, large_short_worker, (void *)(made * 7919 + 5)), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	large_slots_free();
	cr_assert_eq(vn_busy_check(), 0);
	cr_assert_eq(arena_check(), 0);
}

/*
 * Spans (vnode.h): buffers shrunk and grown again by their owner (the tails
 * stay unfiled in its cache), cut from larger cached areas (trims), handed
 * to other threads through shared slots and freed there, while uvm_purge
 * claims every heap and drains it and threads exit and new ones adopt their
 * heaps.  Each buffer's contents are checked at every step; at the end
 * every busy tree must be well formed, each span tiled by its unfiled areas
 * (vn_busy_check), and the free trees whole (arena_check).
 */
#define SSLOTS 32
static _Atomic(uint64_t *) sslot[SSLOTS];

static void *span_worker(void *arg)
{
	uint64_t rng = (uintptr_t)arg;

	for (int r = 0; r < 2000; r++) {
		size_t n = (1 + xorshift(&rng) % 24) * 4096 - xorshift(&rng) % 100, m;
		uint64_t *p = uvm_vmalloc(n), *old;

		cr_assert_not_null(p);
		lfill(p, n);
		for (int k = 0; k < 4; k++) {
			size_t had = (size_t)p[0];

			/* down to a page or two, then up again: the shrink's tail is what the growth takes back */
			m = k & 1 ? n : (1 + xorshift(&rng) % 2) * 4096;
			p = uvm_vrealloc(p, m);
			cr_assert_not_null(p);
			for (size_t i = 1; i < (had < m ? had : m) / 8; i += 509)
				cr_assert_eq(p[i], had ^ i, "vrealloc to %zu bytes lost word %zu of %zu", m, i, had);
			lfill(p, m);
		}
		old = atomic_exchange(&sslot[xorshift(&rng) % SSLOTS], p);
		if (old) {
			lcheck(old);
			uvm_vfree(old); /* often another thread's, whose tails its own cache holds */
		}
		if (xorshift(&rng) % 200 == 0)
			uvm_purge();
	}
	return NULL;
}

Test(stress, spans_of_shrunk_buffers_across_threads_purges_and_exits, .timeout = 120)
{
	for (int round = 0; round < 4; round++) {
		pthread_t t[4];

		for (long i = 0; i < 4; i++)
			cr_assert_eq(pthread_create(&t[i], NULL, span_worker, (void *)(round * 1000 + i * 7919 + 1)), 0);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		cr_assert_eq(vn_busy_check(), 0, "round %d: a busy tree or a span is broken", round);
	}
	for (int k = 0; k < SSLOTS; k++)
		if (sslot[k]) {
			lcheck(sslot[k]);
			uvm_vfree(sslot[k]);
		}
	uvm_purge();
	cr_assert_eq(vn_busy_check(), 0);
	cr_assert_eq(arena_check(), 0);
}
