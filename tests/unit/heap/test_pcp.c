/*
 * tests/unit/heap/test_pcp.c - per-thread order caches (lib/heap/pcp.c): a block freed at
 * order N is the one handed out next at order N, higher orders serve and are
 * trimmed, watermarks grow and drain, decay empties an idle cache, and an
 * exited thread's cache waits, bounded and decaying, for the next thread.
 */
#include "helpers.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/mman.h>
#include <unistd.h>

#include "area.h"
#include "heap.h"
#include "pcp.h"
#include "purge.h"
#include "uvmalloc.h"

static atomic_int worker_state; /* a worker thread's: 1, its cache filled; 2, leave */

static struct uvm_stats stats(void)
{
	struct uvm_stats st;

	uvm_stats(&st);
	return st;
}

/* Areas of many orders freed in one order come back, each at its own order, hottest first. */
Test(pcp, freed_block_is_next_at_its_order)
{
	enum { N = 11 };
	char *p[N], *q[N];

	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc(((size_t)1 << i) * 4096); /* 2^i usable pages + the guard: one block per order */
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	cr_assert_eq(stats().cached_count, N);
	for (int i = N - 1; i >= 0; i--) {
		q[i] = uvm_vmalloc(((size_t)1 << i) * 4096);
		cr_assert_eq(q[i], p[i], "order of %zu pages: got %p, freed %p", (size_t)1 << i, q[i], p[i]);
	}
	cr_assert_eq(stats().cached_count, 0);
	cr_assert_eq(stats().cache_hits, N);
	/* Two blocks of one order: LIFO, the hotter (later freed) first. */
	char *other = uvm_vmalloc(8 * 4096);
	uvm_vfree(q[3]);
	uvm_vfree(other);
	cr_assert_eq(uvm_vmalloc(8 * 4096), other);
	cr_assert_eq(uvm_vmalloc(8 * 4096), q[3]);
}

/* An empty order is served by the next higher one; the block is trimmed and its tail stays cached whole. */
Test(pcp, higher_order_serves_and_is_trimmed)
{
	char *big = uvm_vmalloc(99 * 4096); /* 100 pages: order 6 */
	char *small;
	struct uvm_stats st;

	uvm_vfree(big);
	small = uvm_vmalloc(9 * 4096); /* 10 pages: order 3, empty */
	cr_assert_eq(small, big, "the order-6 block was not used");
	cr_assert_eq(uvm_vsize(small), 9 * 4096);
	st = stats();
	cr_assert_eq(st.cached_count, 1);
	cr_assert_eq(st.cached_bytes, 90 * 4096, "the tail (90 pages) stays cached in one piece");
	cr_assert_eq(uvm_vmalloc(89 * 4096), big + 10 * 4096, "the tail is served at its own order");
}

/*
 * An area of the order lists (PCP_BIN_PAGES pages or more) takes in the
 * cached area after it: a trimmed block is whole again once its head comes
 * back.  Bin-sized areas stay whole as they are (exact reuse) until a
 * miss needs them joined.
 */
Test(pcp, neighbours_merge_back)
{
	char *big = uvm_vmalloc(999 * 4096), *head, *a, *b;

	uvm_vfree(big);
	head = uvm_vmalloc(199 * 4096); /* trimmed: the 800-page tail stays cached */
	cr_assert_eq(head, big);
	uvm_vfree(head);
	cr_assert_eq(stats().cached_count, 1, "head and tail did not merge");
	cr_assert_eq(stats().cached_bytes, 1000 * 4096);
	cr_assert_eq(uvm_vmalloc(999 * 4096), big, "the merged block serves the original size again");
	/* Neighbours of different sizes freed in address order join too: b then a. */
	a = uvm_vmalloc(149 * 4096);
	b = uvm_vmalloc(199 * 4096);
	cr_assert_eq(b, a + 150 * 4096, "b must follow a for this test");
	uvm_vfree(b);
	uvm_vfree(a);
	cr_assert_eq(stats().cached_count, 1, "a and b did not join");
	cr_assert_eq(stats().cached_bytes, 350 * 4096);
	/* Bin-sized neighbours stay apart, each reused exactly. */
	a = uvm_vmalloc(4096);
	b = uvm_vmalloc(2 * 4096);
	uvm_vfree(b);
	uvm_vfree(a);
	cr_assert_eq(stats().cached_count, 3);
	cr_assert_eq(uvm_vmalloc(2 * 4096), b);
	cr_assert_eq(uvm_vmalloc(4096), a);
}

/* Of the areas of an order that fit, the smallest serves: the larger stays whole for a larger request. */
Test(pcp, the_smallest_fit_serves)
{
	char *small = uvm_vmalloc(139 * 4096), *fence = uvm_vmalloc(4096), *large = uvm_vmalloc(249 * 4096);

	uvm_vfree(small);
	uvm_vfree(large); /* the hotter of the two */
	cr_assert_eq(uvm_vmalloc(129 * 4096), small);
	cr_assert_eq(uvm_vmalloc(248 * 4096), large);
	uvm_vfree(fence);
}

/*
 * Bin-sized neighbours are not joined when freed, nor for a bin-sized
 * miss (served fresh, then reused exactly), but a large miss that their
 * sum could serve joins them first (pcp.c's coalesce) and is a hit: the
 * trims' tails of a cache of random sizes would otherwise pile up while
 * every large request fetched fresh memory.
 */
Test(pcp, a_large_miss_coalesces_bin_sized_neighbours)
{
	char *a = uvm_vmalloc(49 * 4096), *b = uvm_vmalloc(59 * 4096), *c = uvm_vmalloc(69 * 4096), *mid, *big;
	struct uvm_stats before, st;

	cr_assert(b == a + 50 * 4096 && c == b + 60 * 4096, "a, b and c must be neighbours for this test");
	uvm_vfree(b);
	uvm_vfree(c);
	uvm_vfree(a);
	before = stats();
	cr_assert_eq(before.cached_count, 3, "bin-sized neighbours were joined when freed");
	mid = uvm_vmalloc(99 * 4096); /* 100 pages: a bin's size */
	st = stats();
	cr_assert_eq(st.cache_misses, before.cache_misses + 1);
	cr_assert_eq(st.cached_count, 3, "a bin-sized miss joined the neighbours");
	before = st;
	big = uvm_vmalloc(149 * 4096); /* 150 pages: more than any of them, less than the 180 they make */
	st = stats();
	cr_assert_eq(big, a, "the joined neighbours did not serve the large miss");
	cr_assert_eq(st.cache_hits, before.cache_hits + 1);
	cr_assert_eq(st.cache_misses, before.cache_misses);
	cr_assert_eq(st.cached_count, 1, "the tail is one area");
	cr_assert_eq(st.cached_bytes, 30 * 4096);
	memset(big, 1, 149 * 4096);
	uvm_vfree(big);
	uvm_vfree(mid);
}

/*
 * Equal neighbours stay apart: a batch of equal blocks freed together (the
 * kernel's kvfree_rcu batches) comes back one for one, with no cut and no
 * join (both are busy-tree updates), and each block is where it was.
 */
Test(pcp, equal_neighbours_stay_apart)
{
	enum { N = 64 };
	char *p[N], *q[N];

	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc(4096);
	for (int i = 1; i < N; i++)
		cr_assert_eq(p[i], p[i - 1] + 8192, "the batch must be contiguous for this test");
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	cr_assert_eq(stats().cached_count, N, "equal neighbours were joined");
	for (int i = 0; i < N; i++)
		q[i] = uvm_vmalloc(4096);
	for (int i = 0; i < N; i++)
		cr_assert_eq(q[i], p[N - 1 - i], "block %d is not the one freed last but %d", i, i);
	for (int i = 0; i < N; i++)
		uvm_vfree(q[i]);
}

/*
 * A cache that holds half its high and more, in many areas of each size it
 * has, yet none as large as a bin-sized request (the trims of random sizes
 * cut its larger areas down): the miss joins one run of cached neighbours
 * to fit, equal ones too, and is a hit; every other area keeps its size.
 * Without it such a miss took fresh pages and grew high by them, and a
 * program of random sizes and thread churn grew its RSS with its run.
 */
Test(pcp, a_fragmented_caches_miss_joins_one_run)
{
	enum { N = 100 }; /* pairs of 4 and 6 pages (guards included): 1000 pages, high is 1024 */
	char *a[N], *b[N], *big;
	struct uvm_stats before, st;

	for (int i = 0; i < N; i++) {
		a[i] = uvm_vmalloc(3 * 4096);
		b[i] = uvm_vmalloc(5 * 4096);
		cr_assert(b[i] == a[i] + 4 * 4096 && (!i || a[i] == b[i - 1] + 6 * 4096), "the pairs must be contiguous for this test");
	}
	for (int i = 0; i < N; i++) {
		uvm_vfree(a[i]);
		uvm_vfree(b[i]);
	}
	before = stats();
	cr_assert_eq(before.cached_count, 2 * N, "bin-sized neighbours were joined when freed");
	cr_assert_eq(pcp_whole_max(11), 15, "the test's sizes assume four pages more at most");
	big = uvm_vmalloc(10 * 4096); /* 11 pages: larger than any cached area, and a run of 16 is more than it takes whole */
	st = stats();
	/* The hottest 6-page area with followers enough: b[N - 1] has none, b[N - 2] has a[N - 1] and b[N - 1] (16 pages). */
	cr_assert_eq(big, b[N - 2], "the run of the hottest area with followers enough did not serve the miss");
	cr_assert_eq(st.cache_hits, before.cache_hits + 1);
	cr_assert_eq(st.cache_misses, before.cache_misses);
	cr_assert_eq(st.cached_count, 2 * N - 3 + 1, "three areas joined, the run's 5-page tail cached, the rest as they were");
	cr_assert_eq(st.cached_bytes, before.cached_bytes - 11 * 4096);
	memset(big, 1, 10 * 4096);
	cr_assert_eq(uvm_vmalloc(4 * 4096), big + 11 * 4096, "the run's tail is not the 5-page area");
	for (int i = 0; i < N - 1; i++)
		cr_assert_eq(uvm_vmalloc(3 * 4096), a[N - 2 - i], "a 4-page area lost its size");
	uvm_vfree(big);
}

/*
 * A cache of few areas of each size (a program asking for random sizes,
 * freeing each at once: every size it uses is cached once) is not joined
 * for a miss, however full: its areas serve their sizes exactly, and
 * joins there only made cuts that missed again (vmbench random_size, 5x
 * its time).  The miss takes fresh pages.
 */
Test(pcp, a_cache_of_few_areas_a_size_is_not_joined)
{
	enum { N = 30 }; /* sizes of 6..35 pages (guards included): 615 pages, more than half of high */
	char *p[N];
	struct uvm_stats before, st;

	for (int i = 0; i < N; i++) {
		p[i] = uvm_vmalloc((size_t)(5 + i) * 4096);
		cr_assert(!i || p[i] == p[i - 1] + (size_t)(5 + i) * 4096, "the areas must be contiguous for this test");
	}
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	before = stats();
	cr_assert_eq(before.cached_count, N);
	uvm_vfree(uvm_vmalloc(59 * 4096)); /* 60 pages: larger than any, less than two neighbours make */
	st = stats();
	cr_assert_eq(st.cache_misses, before.cache_misses + 1, "the miss was served from the cache");
	cr_assert_eq(st.cached_count, N + 1, "cached areas were joined");
}

/* Byte counters balance: a hit that keeps a block one page too big counts the page it hands out. */
Test(pcp, byte_counters_balance)
{
	char *p = uvm_vmalloc(10 * 4096), *q;
	struct uvm_stats before, st;

	uvm_vfree(p);
	before = stats();
	q = uvm_vmalloc(9 * 4096); /* the cached 11-page block is not cut: its tail would be one page */
	cr_assert_eq(q, p);
	uvm_vfree(q);
	st = stats();
	cr_assert_eq(st.area_alloc_bytes - before.area_alloc_bytes, 10 * 4096, "the hit handed out 10 usable pages");
	cr_assert_eq(st.area_free_bytes - before.area_free_bytes, 10 * 4096);
	cr_assert_eq(st.area_alloc_bytes, st.area_free_bytes, "nothing is live, so as many bytes were freed as allocated");
}

/* Alignment is honoured: a cached block whose start is not aligned is not handed out for an aligned request. */
Test(pcp, alignment_is_respected)
{
	char *p = uvm_vmalloc_aligned(4096, 4096);
	char *q;

	if (((uintptr_t)p & ((1 << 20) - 1)) == 0) /* happens to be 1 MiB aligned: take another */
		p = uvm_vmalloc(4096);
	uvm_vfree(p);
	q = uvm_vmalloc_aligned(4096, 1 << 20);
	cr_assert_eq((uintptr_t)q & ((1 << 20) - 1), 0);
	cr_assert_neq(q, p);
}

/*
 * An aligned request takes an aligned window inside a larger cached area
 * whose start is not aligned (a slab's 64 KiB in a coalesced run): a hit,
 * the head before the window cached as an area of its own.  Before, such a
 * request missed and faulted fresh pages in while the run stayed idle.
 */
Test(pcp, an_aligned_request_is_cut_out_of_a_larger_area)
{
	enum { ALIGN = 64 << 10, PAGES = 40 };
	char *big = NULL, *held[4], *q;
	uintptr_t head;
	int n = 0;
	struct uvm_stats before;

	/* One whose start is not 64 KiB aligned, with room for an aligned 16 pages and a head of 2 or more. */
	while (n < 4 && (held[n] = uvm_vmalloc(PAGES * 4096)) && ((uintptr_t)held[n] % ALIGN == 0 || (uintptr_t)held[n] % ALIGN == ALIGN - 4096))
		n++;
	cr_assert_lt(n, 4);
	big = held[n];
	uvm_vfree(big);
	before = stats();
	q = uvm_vmalloc_aligned(16 * 4096, ALIGN);
	cr_assert_eq((uintptr_t)q % ALIGN, 0);
	cr_assert(q > big && q + 16 * 4096 < big + PAGES * 4096, "%p is not inside the cached %p", (void *)q, (void *)big);
	cr_assert_eq(stats().cache_hits, before.cache_hits + 1);
	head = (uintptr_t)(q - big) / 4096; /* the head's pages, its guard the last */
	cr_assert_eq(uvm_vmalloc((head - 1) * 4096), big, "the head is not cached whole");
	uvm_vfree(big);
	uvm_vfree(q);
	while (n--)
		uvm_vfree(held[n]);
}

/* A small high, and no purge to take drained areas away from where the test counts them. */
static void small_high(void)
{
	setenv("UVM_PCP_HIGH", "8M", 1);
	setenv("UVM_LAZY_MAX", "1000000", 1);
}

/* Frees beyond high grow it by what the thread missed, up to UVM_PCP_HIGH; the rest drains to the node. */
Test(pcp, watermark_grows_then_drains, .init = small_high)
{
	enum { N = 64, PAGES = 64 }; /* 64 x 65 pages = 16.25 MiB with guards */
	char *p[N];
	struct uvm_stats st;

	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc((PAGES - 1) * 4096 + 4096);
	cr_assert_eq(pcp_high(), 1024, "high starts at 4 MiB");
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	st = stats();
	cr_assert_eq(pcp_high(), 2048, "high grew to UVM_PCP_HIGH (8 MiB), not beyond");
	cr_assert_leq(st.cached_bytes, 2048 * 4096);
	cr_assert_geq(st.cached_bytes, (2048 - PCP_BATCH_PAGES - 65) * 4096, "drains go a batch below high, no further");
	cr_assert_eq(st.cached_count + st.cache_drained, N);
	cr_assert_eq(st.lazy_count + st.pooled_count, st.cache_drained, "drained areas went to the node");
	/* The coldest drained: the last freed (hottest) are the ones still cached. */
	cr_assert_eq(uvm_vmalloc((PAGES - 1) * 4096 + 4096), p[N - 1]);
}

/* A cycle that fits under UVM_PCP_HIGH settles: after one cycle of growth, nothing drains. */
Test(pcp, working_set_settles_without_drains)
{
	enum { N = 40, SIZE = 256 << 10 }; /* 10 MiB per cycle, more than the initial high */
	char *p[N];
	uint64_t drained = 0;

	for (int cycle = 0; cycle < 4; cycle++) {
		for (int i = 0; i < N; i++)
			p[i] = uvm_vmalloc(SIZE);
		for (int i = 0; i < N; i++)
			uvm_vfree(p[i]);
		if (cycle == 1)
			drained = stats().cache_drained;
	}
	cr_assert_eq(stats().cache_drained, drained, "cycles after the first drained again");
	cr_assert_eq(stats().cached_bytes, N * (SIZE + 4096), "the whole working set stays cached (merged or not)");
}

/* Decay: an idle thread's high falls by a quarter (at least a batch) per step, to 0, and its cache drains. */
Test(pcp, decay_empties_an_idle_cache)
{
	enum { N = 16 };
	char *p[N];
	size_t high, steps = 0;

	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc(63 * 4096);
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	cr_assert_eq(stats().cached_count, N);
	pcp_decay(); /* the thread was busy since the cache began: high stays at least 4 MiB */
	cr_assert_eq(stats().cached_count, N);
	high = pcp_high();
	cr_assert_geq(high, PCP_HIGH_MIN_PAGES);
	while (stats().cached_count && steps < 64) {
		pcp_decay(); /* idle from now on */
		steps++;
		cr_assert_leq(pcp_high(), high - (high / 4 > PCP_BATCH_PAGES ? high / 4 : PCP_BATCH_PAGES));
		high = pcp_high();
		cr_assert_leq(stats().cached_bytes, high * 4096);
	}
	cr_assert_eq(stats().cached_bytes, 0, "an idle cache did not empty in %zu decay steps", steps);
	cr_assert_leq(steps, 8);
	/* Busy again: high is back at its minimum, and frees cache again (the first is parked, the second takes room). */
	p[0] = uvm_vmalloc(4096);
	p[1] = uvm_vmalloc(4096);
	uvm_vfree(p[0]);
	uvm_vfree(p[1]);
	cr_assert_eq(stats().cached_count, 2);
	cr_assert_eq(pcp_high(), PCP_HIGH_MIN_PAGES);
}

static void *alloc_touch_free_and_exit(void *arg)
{
	char *p[10];

	(void)arg;
	for (int i = 0; i < 10; i++) {
		p[i] = uvm_vmalloc((size_t)(i + 1) * 4096);
		memset(p[i], 7, (size_t)(i + 1) * 4096);
	}
	for (int i = 0; i < 10; i++)
		uvm_vfree(p[i]);
	return NULL;
}

struct again {
	long faults;
	uint64_t hits;
	int unwritten;
};

/* The same sizes again on the next thread: its hits, its faults, and whether the pages came back written. */
static void *alloc_the_same_again(void *arg)
{
	struct again *a = arg;
	struct uvm_stats st;
	char *p[10];
	long faults = minor_faults();

	uvm_stats(&st);
	a->hits = st.cache_hits;
	for (int i = 0; i < 10; i++) {
		p[i] = uvm_vmalloc((size_t)(i + 1) * 4096);
		a->unwritten += p[i][(size_t)i * 4096] != 7;
	}
	a->faults = minor_faults() - faults;
	uvm_stats(&st);
	a->hits = st.cache_hits - a->hits;
	for (int i = 0; i < 10; i++)
		uvm_vfree(p[i]);
	return NULL;
}

/*
 * An exited thread's cache stays, backed, in its heap, and the next thread
 * adopts it: the same sizes are hits there with no page fault.  Its
 * counters survive it; a purge empties the cache of a heap no thread runs.
 */
Test(pcp, an_exited_threads_cache_is_the_next_threads)
{
	pthread_t t;
	struct uvm_stats before, st;
	struct again a = { 0 };

	uvm_free(uvm_malloc(1)); /* this thread's own heap first, so that the next thread is the one to adopt */
	before = stats();
	cr_assert_eq(pthread_create(&t, NULL, alloc_touch_free_and_exit, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	st = stats();
	cr_assert_eq(st.cached_count - before.cached_count, 10, "the exited thread's cache did not stay");
	cr_assert_eq(st.lazy_count + st.pooled_count, before.lazy_count + before.pooled_count);
	cr_assert_eq(st.allocs - before.allocs, 10);
	cr_assert_eq(st.frees - before.frees, 10);
	cr_assert_eq(pthread_create(&t, NULL, alloc_the_same_again, &a), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(a.hits, 10, "the next thread hit its cache %lu times of 10", (unsigned long)a.hits);
	cr_assert_eq(a.unwritten, 0, "areas came back without their pages");
	/* Under AddressSanitizer, adopting the heap clears its slab state through memset's look at fresh shadow pages. */
	cr_assert_leq(a.faults, FRESH_FAULTS_COUNTABLE ? 0 : 2, "%ld page faults", a.faults);
	cr_assert_eq(stats().cached_count - before.cached_count, 10);
	uvm_purge();
	cr_assert_eq(stats().cached_count, 0, "a purge left a vacant heap's cache");
}

/* A thread that caches far more than a new thread's high (4 MiB), and grows its own past it. */
static void *cache_a_lot_and_exit(void *arg)
{
	enum { N = 600 };
	static char *p[N];

	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc(3 * 4096); /* 4 pages with the guard: 2400 pages cached, high grown past 1024 */
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	*(size_t *)arg = stats().cached_bytes;
	return NULL;
}

/*
 * An exited thread's heap keeps its cache down to the thread's high (the
 * working set it had to fetch again), not to a new thread's 4 MiB: a
 * program that runs a thread per task hands each new thread the pages the
 * last one used (a C++ program of 4 threads a round, 40 MB each: 233 k
 * page faults against 145 k).  Decay takes back what no thread adopts.
 */
Test(pcp, an_exited_thread_keeps_its_working_set_warm)
{
	pthread_t t;
	size_t had, kept, before = stats().cached_bytes;

	cr_assert_eq(pthread_create(&t, NULL, cache_a_lot_and_exit, &had), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	kept = stats().cached_bytes - before;
	cr_assert_gt(had - before, PCP_HIGH_MIN_PAGES * 4096, "the thread cached only %zu bytes", had - before);
	cr_assert_gt(kept, PCP_HIGH_MIN_PAGES * 4096, "its exit kept only %zu of %zu bytes", kept, had - before);
	cr_assert_leq(kept, had - before);
}

static pthread_barrier_t all_cached;

/* alloc_touch_free_and_exit, leaving only once every thread of the test has its cache. */
static void *cache_then_exit_together(void *arg)
{
	alloc_touch_free_and_exit(arg);
	pthread_barrier_wait(&all_cached);
	return NULL;
}

/* n threads of fn, which waits on all_cached before it exits, joined. */
static void exit_together(unsigned n, void *(*fn)(void *))
{
	pthread_t t[n];

	cr_assert_eq(pthread_barrier_init(&all_cached, NULL, n), 0);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, fn, NULL), 0);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	cr_assert_eq(pthread_barrier_destroy(&all_cached), 0);
}

/* n threads that each cache 10 areas and exit together, joined. */
static void cache_and_exit_together(unsigned n) { exit_together(n, cache_then_exit_together); }

/*
 * Threads that exit together leave at most one warm heap per CPU: the
 * others drain whole to the nodes (a program that ends its 64 workers at
 * once would otherwise keep 64 caches no thread adopts).  The next thread
 * adopts a warm one.
 */
Test(pcp, at_most_one_warm_vacant_heap_per_cpu)
{
	unsigned cpus = (unsigned)get_nprocs(), n = cpus + 3;
	pthread_t t;
	struct again a = { 0 };
	uint64_t before;

	uvm_free(uvm_malloc(1)); /* this thread's own heap first */
	before = stats().cached_count;
	cache_and_exit_together(n);
	cr_assert_eq(stats().cached_count - before, 10 * cpus, "%u threads exited together and left %lu cached areas, not %u",
		     n, (unsigned long)(stats().cached_count - before), 10 * cpus);
	cr_assert_eq(pthread_create(&t, NULL, alloc_the_same_again, &a), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(a.hits, 10, "the next thread adopted a cold heap: %lu hits of 10", (unsigned long)a.hits);
}

enum { SET_AREAS = 40, SET_PAGES = 8 }; /* a working set of 1.25 MiB, guard pages included: past the pools' share of nothing busy */

/* A working set cached, its pages written, and the exit once every thread of the test has its own. */
static void *cache_a_set_then_exit_together(void *arg)
{
	char *p[SET_AREAS];

	for (int i = 0; i < SET_AREAS; i++) {
		p[i] = uvm_vmalloc((SET_PAGES - 1) * 4096);
		cr_assert_not_null(p[i]);
		memset(p[i], 7, (SET_PAGES - 1) * 4096);
	}
	for (int i = 0; i < SET_AREAS; i++)
		uvm_vfree(p[i]);
	pthread_barrier_wait(&all_cached);
	return arg;
}

/*
 * The threads that exit past the warm places leave their caches to the
 * node pools, backed, however little stays busy: the next threads' misses
 * take them with no fault (purge_free_backed).  Pools past the busy share
 * give them back within a few decay periods (purge_decay).
 */
Test(pcp, cold_exits_pool_their_working_sets_until_decay)
{
	unsigned steps = 0;
	uint64_t before, set = (uint64_t)SET_AREAS * SET_PAGES * 4096;

	uvm_free(uvm_malloc(1)); /* this thread's own heap first */
	uvm_purge();
	before = stats().pooled_bytes;
	exit_together((unsigned)get_nprocs() + 2, cache_a_set_then_exit_together);
	cr_assert_geq(stats().pooled_bytes - before, 2 * set, "two cold exits pooled %" PRIu64 " bytes of their %" PRIu64,
		      stats().pooled_bytes - before, 2 * set);
	while (stats().pooled_bytes > purge_retain_max() * 4096 && steps++ < 16)
		pcp_decay();
	cr_assert_leq(stats().pooled_bytes, purge_retain_max() * 4096, "pools still hold %" PRIu64 " bytes after %u decays",
		      stats().pooled_bytes, steps);
}

/* Pages of each thread's large areas (more than a pool of one size holds, VN_POOL_PAGES; under a huge page), and the miss's. */
static const unsigned large_pages[] = { 300, 500, 400 };
enum { LARGE_ASKED = 350, LARGE_FIT = 2, LARGE_THREADS = 64 };
static char *_Atomic exited_large[LARGE_THREADS][3];
static atomic_uint nr_exited_large;
static pthread_mutex_t placing = PTHREAD_MUTEX_INITIALIZER;

/* Large areas written and freed, their addresses noted, and the exit once every thread of the test has them cached. */
static void *cache_large_areas_then_exit_together(void *arg)
{
	unsigned me = atomic_fetch_add(&nr_exited_large, 1) % LARGE_THREADS;

	/*
	 * One thread at a time, so that no other thread's area lands between
	 * an area and its fence: pooled, the two would join (a CI run under
	 * load once took such a join for the best fit).
	 */
	pthread_mutex_lock(&placing);
	for (unsigned k = 0; k < 3; k++) {
		char *p = uvm_vmalloc((large_pages[k] - 1) * 4096);

		cr_assert_not_null(p);
		memset(p, 7, (large_pages[k] - 1) * 4096);
		exited_large[me][k] = p;
		cr_assert_not_null(uvm_vmalloc(4096)); /* a fence, live to the end: pooled neighbours join (vnode.c's pool_merge) */
	}
	pthread_mutex_unlock(&placing);
	for (unsigned k = 0; k < 3; k++)
		uvm_vfree(exited_large[me][k]);
	pthread_barrier_wait(&all_cached);
	return arg;
}

/*
 * An exited thread's large areas wait in the pools too, and a later miss
 * of a large size takes the smallest that holds it, cut to size, still
 * backed: no page of it faults again (a thread per task that allocates a
 * large table).  Decay gives the rest back.
 */
Test(pcp, cold_exits_pool_large_areas_for_later_misses)
{
	unsigned n = (unsigned)get_nprocs() + 2, steps = 0;
	char *q[2];

	cr_assert_leq(n, LARGE_THREADS);
	uvm_free(uvm_malloc(1)); /* this thread's own heap first */
	uvm_purge();
	exit_together(n, cache_large_areas_then_exit_together);
	cr_assert_geq(stats().pooled_bytes, 2ull * (300 + 500 + 400) * 4096, "two cold exits pooled %" PRIu64 " bytes",
		      stats().pooled_bytes);
	/* Two misses: a first fit would take an area of 500 pages for one of them, in whichever order the pool holds them. */
	for (int k = 0; k < 2; k++) {
		uint64_t hits = stats().pool_hits;
		bool best = false;
		long faults;

		q[k] = uvm_vmalloc((LARGE_ASKED - 1) * 4096);
		cr_assert_not_null(q[k]);
		cr_assert_eq(stats().pool_hits, hits + 1, "miss %d did not take a pooled area", k);
		for (unsigned i = 0; i < n; i++)
			best |= q[k] >= exited_large[i][LARGE_FIT] && q[k] < exited_large[i][LARGE_FIT] + large_pages[LARGE_FIT] * 4096;
		cr_assert(best, "%p is in none of the exited threads' areas of %u pages", (void *)q[k], large_pages[LARGE_FIT]);
		faults = minor_faults();
		memset(q[k], 1, (LARGE_ASKED - 1) * 4096);
		cr_assert_eq(minor_faults(), faults, "%ld of its %d pages faulted in again", minor_faults() - faults,
			     LARGE_ASKED - 1);
	}
	uvm_vfree(q[0]);
	uvm_vfree(q[1]);
	while (stats().pooled_bytes && steps++ < 16)
		purge_now(0);
	cr_assert_eq(stats().pooled_bytes, 0, "pools still hold %" PRIu64 " bytes after %u purges", stats().pooled_bytes, steps);
}

static pthread_barrier_t started, decayed;

/* A heap of its own before the first batch exits (so adopting none of its heaps); cache and exit once their caches decayed. */
static void *wait_then_cache_and_exit(void *arg)
{
	void *p = uvm_vmalloc(4096); /* live through the decay (nothing cached to decay), then its first allocation's */

	pthread_barrier_wait(&started);
	pthread_barrier_wait(&decayed);
	uvm_vfree(p);
	return cache_then_exit_together(arg);
}

/*
 * A warm vacant heap that decay emptied is warm no more: threads that exit
 * after it keep their caches warm, up to one per CPU again, rather than
 * finding every warm place held by an empty heap.
 */
Test(pcp, a_decayed_warm_heap_holds_no_warm_place)
{
	unsigned cpus = (unsigned)get_nprocs(), steps = 0;
	pthread_t second[cpus];
	uint64_t before;

	uvm_free(uvm_malloc(1)); /* this thread's own heap first */
	cr_assert_eq(pthread_barrier_init(&started, NULL, cpus + 1), 0);
	cr_assert_eq(pthread_barrier_init(&decayed, NULL, cpus + 1), 0);
	for (unsigned i = 0; i < cpus; i++)
		cr_assert_eq(pthread_create(&second[i], NULL, wait_then_cache_and_exit, NULL), 0);
	pthread_barrier_wait(&started);
	before = stats().cached_count;
	cache_and_exit_together(cpus);
	cr_assert_eq(stats().cached_count - before, 10 * cpus, "the first batch left no warm heaps");
	while (stats().cached_count > before && steps++ < 16)
		pcp_decay();
	cr_assert_eq(stats().cached_count, before, "the first batch's caches did not decay");
	cr_assert_eq(pthread_barrier_init(&all_cached, NULL, cpus), 0); /* the second batch's own wait */
	pthread_barrier_wait(&decayed);
	for (unsigned i = 0; i < cpus; i++)
		cr_assert_eq(pthread_join(second[i], NULL), 0);
	cr_assert_eq(stats().cached_count - before, 10 * cpus,
		     "the second batch left %lu cached areas, not %u: the decayed heaps still held the warm places",
		     (unsigned long)(stats().cached_count - before), 10 * cpus);
}

/* A vacant heap decays as an idle thread's cache does: empty within a few steps. */
Test(pcp, a_vacant_heaps_cache_decays)
{
	pthread_t t;
	unsigned steps = 0;

	cr_assert_eq(pthread_create(&t, NULL, alloc_touch_free_and_exit, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(stats().cached_count, 10);
	while (stats().cached_count && steps < 16) {
		pcp_decay();
		steps++;
	}
	cr_assert_eq(stats().cached_count, 0, "a vacant heap's cache did not empty in %u decay steps", steps);
	cr_assert_leq(steps, 5);
}

static void *alloc_touch_and_exit(void *arg)
{
	char **p = arg;

	for (int i = 0; i < 10; i++) {
		p[i] = uvm_vmalloc(3 * 4096);
		memset(p[i], 7, 3 * 4096);
	}
	uvm_vfree(p[0]); /* into its cache: its heap keeps it */
	return NULL;
}

static void *alloc_one(void *arg)
{
	struct again *a = arg;
	long faults;
	char *p;

	prefault_for_counting();
	faults = minor_faults();
	p = uvm_vmalloc(3 * 4096);

	a->unwritten = p[4096] != 7;
	a->faults = minor_faults() - faults;
	uvm_vfree(p);
	return NULL;
}

/*
 * An exited thread's areas stay backed for the threads after it: the
 * areas another thread frees later go into that thread's cache (not the
 * lazy lists, which wait for a purge), and its next misses of their size
 * reuse them with no page fault; what it had cached, its heap's next
 * thread does.
 */
static void one_vmap_node(void) { setenv("UVM_NODES", "1", 1); }

Test(pcp, an_exited_threads_areas_are_reused_backed, .init = one_vmap_node)
{
	char *p[10], *q[10], kept[9];
	pthread_t t;
	struct uvm_stats before, st;
	struct again a = { 0 };

	uvm_free(uvm_malloc(1)); /* this thread's own heap first: its allocations below would adopt the vacant one */
	before = stats();
	/* One vmap node: pools are per node, and threads are spread over the nodes (one per CPU by default). */
	cr_assert_eq(pthread_create(&t, NULL, alloc_touch_and_exit, p), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	for (int i = 1; i < 10; i++)
		uvm_vfree(p[i]);
	st = stats();
	cr_assert_eq(st.pooled_count, before.pooled_count, "the exited thread's areas went to a pool");
	/* Nine in this thread's cache, one in the exited thread's vacant heap. */
	cr_assert_eq(st.cached_count - before.cached_count, 10, "the freeing thread did not keep them, or the heap its cache");
	cr_assert_eq(st.lazy_count, before.lazy_count);
	prefault_for_counting();
	long faults = minor_faults();
	for (int i = 0; i < 9; i++) {
		q[i] = uvm_vmalloc(3 * 4096);
		kept[i] = q[i][4096];
	}
	/* Asserted after the count: a passing assertion reports to Criterion's runner, whose allocations may fault. */
	faults = minor_faults() - faults;
	for (int i = 0; i < 9; i++)
		cr_assert_eq(kept[i], 7, "%p came back without its pages", q[i]);
	cr_assert_eq(faults, 0);
	cr_assert_eq(pthread_create(&t, NULL, alloc_one, &a), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(a.unwritten, 0, "the next thread's area came back without its pages");
	cr_assert_eq(a.faults, 0, "%ld page faults", a.faults);
	for (int i = 0; i < 9; i++)
		uvm_vfree(q[i]);
}

static void *free_it(void *p)
{
	uvm_vfree(p);
	return uvm_vmalloc(5 * 4096);
}

/* free_it, from a thread that has allocated before (one whose first call is a free keeps nothing: heap_allocated). */
static void *alloc_then_free_it(void *p)
{
	uvm_free(uvm_malloc(1));
	return free_it(p);
}

/* p, its first byte 1, freed by a new thread running fn: what fn allocated after. */
static char *freed_elsewhere(char *p, void *(*fn)(void *))
{
	pthread_t t;
	void *got;

	p[0] = 1;
	cr_assert_eq(pthread_create(&t, NULL, fn, p), 0);
	cr_assert_eq(pthread_join(t, &got), 0);
	return got;
}

/*
 * Another thread's free of an area of a bin's size goes into the freeing
 * thread's cache, as that thread's own would (pcp_adopt): its next
 * allocation of the size gets it back, pages and all.
 */
Test(pcp, a_freeing_thread_keeps_another_threads_area)
{
	char *p = uvm_vmalloc(5 * 4096), *got;
	struct uvm_stats before = stats(), st;

	got = freed_elsewhere(p, alloc_then_free_it);
	cr_assert_eq(got, p, "the freeing thread did not keep another thread's area");
	cr_assert_eq(got[0], 1, "the pages were given back on the way");
	st = stats();
	cr_assert_eq(st.pooled_count, before.pooled_count);
	cr_assert_eq(st.lazy_count, before.lazy_count);
	uvm_vfree(got);
}

/*
 * p (5 pages, its first byte 1), freed by another thread that allocated
 * got after: the owner's next allocation of the size (uvm_vmalloc's, with
 * api; else malloc's) gets it back with its pages.  Both are freed.
 */
static void back_home(char *p, char *got, bool api, const char *kept)
{
	char *q;

	cr_assert_neq(got, p, "%s", kept);
	q = api ? uvm_vmalloc(5 * 4096) : uvm_malloc(5 * 4096);
	cr_assert_eq(q, p, "the owner did not get its area back");
	cr_assert_eq(q[0], 1, "the pages were given back on the way");
	if (api) {
		uvm_vfree(q);
		uvm_vfree(got);
	} else {
		uvm_free(q);
		uvm_free(got);
	}
}

/* The malloc family's free_it: a thread's first free makes its heap there (malloc.c's free_heapless). */
static void *free_it_malloc(void *p)
{
	uvm_free(p);
	return uvm_malloc(5 * 4096);
}

/*
 * A thread whose first call is a free does not keep another thread's area
 * (heap_allocated): it goes to its owner, whose next allocation of the
 * size gets it back.  A consumer would otherwise fill its cache with
 * areas it never uses.
 */
Test(pcp, a_thread_that_only_frees_keeps_no_area)
{
	char *p = uvm_malloc(5 * 4096);

	back_home(p, freed_elsewhere(p, free_it_malloc), false, "a thread that had only freed kept another thread's area");
}

static void *free_big(void *p)
{
	uvm_vfree(p);
	return uvm_vmalloc(200 * 4096);
}

/*
 * A large area (an order list's) another thread frees goes back to its
 * owner (its heap's inbox, pages and all), whose next miss takes the inbox
 * in: a producer of large blocks gets them back from a consumer.
 */
Test(pcp, a_large_area_goes_back_to_its_owner)
{
	char *p = uvm_vmalloc(200 * 4096), *q, *got;
	struct uvm_stats before = stats(), st;

	got = freed_elsewhere(p, free_big);
	cr_assert_neq(got, p, "the freeing thread kept another thread's large area");
	st = stats();
	cr_assert_eq(st.pooled_count, before.pooled_count, "the area went to a pool, not its owner");
	/* In the owner's inbox, which stats count as its cache (the freeing thread's holds nothing: got is live). */
	cr_assert_eq(st.cached_count, before.cached_count + 1, "the area is not waiting in a cache");
	q = uvm_vmalloc(200 * 4096);
	cr_assert_eq(q, p, "the owner did not get its area back");
	cr_assert_eq(q[0], 1, "the pages were given back on the way");
	uvm_vfree(q);
	uvm_vfree(got);
}

/* The freeing threads' caches below: 4 pages of room, less than one area of 5 pages and its guard. */
static void small_caches(void) { cr_assert_eq(uvm_option_set("UVM_PCP_HIGH", 4 * 4096), 0); }
static void default_caches(void) { cr_assert_eq(uvm_option_set("UVM_PCP_HIGH", 4LL << 30), 0); }

/*
 * A freeing thread whose cache has no room for another thread's area sends
 * it back to its owner: a consumer that never allocates hoards no more
 * than its cache's room.
 */
Test(pcp, a_full_cache_sends_the_area_to_its_owner)
{
	char *p = uvm_vmalloc(5 * 4096), *got;

	small_caches();
	got = freed_elsewhere(p, alloc_then_free_it);
	default_caches();
	back_home(p, got, true, "the freeing thread kept an area it had no room for");
}

static pthread_barrier_t handed;
static char *handed_area;

/* A large area (its owner's inbox takes it back when another thread frees it), handed over; exits once it is freed. */
static void *hand_over_and_exit(void *arg)
{
	(void)arg;
	handed_area = uvm_vmalloc(200 * 4096);
	handed_area[0] = 1;
	pthread_barrier_wait(&handed);
	pthread_barrier_wait(&handed);
	return NULL;
}

/*
 * A warm exit keeps its high for the next thread; what else it holds
 * (its inbox: areas other threads freed home, and any cache past high)
 * goes to the node lazily, as a running thread's drain does, not into the
 * pools: with every exit of a program that replaces its threads filling
 * them, the pools grew its footprint with its run (allocwork stress, 2
 * threads, -s 16 and 30: peak RSS 19.5 and 20.8 MB, 16.9 and 18.2 now).
 */
Test(pcp, a_warm_exit_sends_its_inbox_lazily, .init = small_high)
{
	pthread_t t;
	struct uvm_stats before, after;

	cr_assert_eq(pthread_barrier_init(&handed, NULL, 2), 0);
	cr_assert_eq(pthread_create(&t, NULL, hand_over_and_exit, NULL), 0);
	pthread_barrier_wait(&handed);
	uvm_vfree(handed_area); /* home, to the owner's inbox */
	before = stats();
	pthread_barrier_wait(&handed);
	cr_assert_eq(pthread_join(t, NULL), 0);
	after = stats();
	cr_assert_eq(after.pooled_bytes, before.pooled_bytes, "a warm exit pooled %" PRIu64 " bytes",
		     after.pooled_bytes - before.pooled_bytes);
	cr_assert_eq(after.lazy_bytes - before.lazy_bytes, 201 * 4096, "the inbox did not go lazily (guard page counted)");
	cr_assert_eq(pthread_barrier_destroy(&handed), 0);
}

struct free_later {
	char **p;
	int first, all;
};

/* Frees first areas, waits past HEAP_INBOX_WAIT_NS (and a coarse clock tick), frees the rest. */
static void *free_then_wait(void *arg)
{
	struct free_later *f = arg;

	for (int i = 0; i < f->all; i++) {
		if (i == f->first)
			usleep(30 * 1000);
		uvm_vfree(f->p[i]);
	}
	return NULL;
}

/*
 * An inbox its owner has not taken in for HEAP_INBOX_WAIT_NS, holding more
 * than HEAP_INBOX_PAGES, takes no more: later frees go to the node's pool,
 * where any thread finds them, instead of waiting on a thread that does not
 * allocate.  What the inbox holds still comes back to the owner.
 */
Test(pcp, a_stale_inbox_sends_frees_to_the_node)
{
	enum { FIRST = 12, ALL = 20 }; /* 6 pages each: the inbox passes 64 pages at the 11th */
	char *p[ALL], *q;
	struct free_later f = { p, FIRST, ALL };
	struct uvm_stats before, st;
	int pooled;
	pthread_t t;

	for (int i = 0; i < ALL; i++) {
		p[i] = uvm_vmalloc(5 * 4096);
		p[i][0] = (char)i;
		cr_assert_not_null(uvm_vmalloc(4096)); /* a fence, live to the end: pooled neighbours join, and this counts areas */
	}
	before = stats();
	/* A thread that only frees has no heap, and keeps nothing: every free is the inbox's, or the node's. */
	cr_assert_eq(pthread_create(&t, NULL, free_then_wait, &f), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	st = stats();
	pooled = (int)(st.pooled_count - before.pooled_count);
	/* The 12th free too, if the freeing thread waited 10 ms before it (a loaded machine): the inbox was full. */
	cr_assert(pooled == ALL - FIRST || pooled == ALL - FIRST + 1, "%d of the frees after the wait were pooled", pooled);
	cr_assert_eq(st.cached_count, before.cached_count + (ALL - pooled), "the inbox's areas count as cached");
	for (int i = 0, seen = 0; i < ALL; i++) {
		q = uvm_vmalloc(5 * 4096);
		if (i < ALL - pooled) {
			cr_assert(q[0] >= 0 && q[0] < FIRST && !(seen & 1 << q[0]), "allocation %d is not one of the inbox's areas", i);
			seen |= 1 << q[0];
		}
		p[i] = q;
	}
	for (int i = 0; i < ALL; i++)
		uvm_vfree(p[i]);
}

/* A cached area holds its last user's data: uvm_vzalloc clears it when it comes back. */
Test(pcp, vzalloc_of_a_cached_area_is_zero)
{
	char *p = uvm_vmalloc(3 * 4096), *q;

	memset(p, 0x5a, 3 * 4096);
	uvm_vfree(p);
	q = uvm_vzalloc(3 * 4096);
	cr_assert_eq(q, p);
	for (size_t i = 0; i < 3 * 4096; i++)
		cr_assert_eq(q[i], 0, "byte %zu of a reused area is %#x", i, q[i]);
}

static void caches_off(void) { setenv("UVM_PCP", "0", 1); }

Test(pcp, off_means_no_caching, .init = caches_off)
{
	uvm_vfree(uvm_vmalloc(4096));
	cr_assert_eq(stats().cached_count, 0);
	cr_assert_eq(stats().lazy_count, 1);
	cr_assert_eq(stats().cache_hits, 0);
}

/* A double free is caught even though the first free left the area cached and in its busy tree. */
static void double_free(void *arg)
{
	char *p = uvm_vmalloc(arg ? 1 << 20 : 4096); /* a bin's area, or an order list's */

	uvm_vfree(p);
	uvm_vfree(p);
}

Test(pcp, double_free_of_a_cached_area_aborts)
{
	expect_death(double_free, NULL, SIGABRT, "uvmalloc: uvm_vfree(): invalid pointer 0x");
	expect_death(double_free, "large", SIGABRT, "uvmalloc: uvm_vfree(): invalid pointer 0x");
}

static enum slot { EMPTY, PARKED, CACHED } slot_of(const void *p)
{
	const struct pcp *c = &uvm__heap->pcp;

	if (c->parked == (uintptr_t)p) {
		cr_assert_eq(c->parked_va->va_start, (uintptr_t)p);
		cr_assert_eq(atomic_load(&c->parked_va->live), VA_PARKED);
		return PARKED;
	}
	return area_find((uintptr_t)p) ? EMPTY : CACHED;
}

/*
 * The last area a thread frees is parked, out of its bin, and the next
 * allocation of its size takes it back in line, counted as a hit: a loop
 * of one size touches no list.  The next free of another area sends the
 * parked one onto its bin, LIFO: the last freed is handed out first.
 */
Test(pcp, a_freed_area_is_parked_and_taken_back)
{
	char *a = uvm_vmalloc(4096), *b = uvm_vmalloc(7 * 4096);
	struct uvm_stats st = stats();
	uint64_t slow_hits = uvm__heap->pcp.hits;

	for (int i = 0; i < 100; i++) {
		uvm_vfree(a);
		cr_assert_eq(slot_of(a), PARKED);
		cr_assert_eq(stats().cached_count, st.cached_count + 1, "a parked area is cached");
		cr_assert_eq(stats().cached_bytes, st.cached_bytes + 2 * 4096);
		cr_assert_eq(uvm_vmalloc(4096), a, "round %d: not the parked area", i);
		cr_assert_eq(slot_of(a), EMPTY);
		cr_assert_eq(atomic_load(&area_find((uintptr_t)a)->live), VA_LIVE_PARK + 0, "parkable, of key 0 (one page)");
	}
	cr_assert_eq(stats().cache_hits - st.cache_hits, 100);
	cr_assert_eq(stats().frees - st.frees, 100);
	cr_assert_eq(stats().cache_misses, st.cache_misses);
	cr_assert_eq(uvm__heap->pcp.hits, slow_hits, "the slow way served some");
	uvm_vfree(a);
	uvm_vfree(b); /* a stays parked, b onto its bin */
	cr_assert_eq(slot_of(a), PARKED);
	cr_assert_eq(slot_of(b), CACHED);
	cr_assert_eq(stats().cached_count, st.cached_count + 2);
	cr_assert_eq(uvm_vmalloc(7 * 4096), b, "the parked area served another size");
	cr_assert_eq(uvm_vmalloc(4096), a);
	cr_assert_eq(stats().cache_hits - st.cache_hits, 102);
	cr_assert_eq(stats().frees - st.frees, 102);
	/* Two of one size: the later freed is parked in place of the other, which goes onto its bin (LIFO). */
	b = uvm_vmalloc(4096);
	uvm_vfree(a);
	uvm_vfree(b);
	cr_assert_eq(slot_of(b), PARKED);
	cr_assert_eq(slot_of(a), CACHED);
	cr_assert_eq(stats().cached_count, st.cached_count + 2);
	cr_assert_eq(uvm_vmalloc(4096), b, "not the hotter first");
	cr_assert_eq(uvm_vmalloc(4096), a);
	cr_assert_eq(stats().cache_hits - st.cache_hits, 104);
	cr_assert_eq(stats().frees - st.frees, 104);
	uvm_vfree(a);
	uvm_vfree(b);
	/* Through malloc too. */
	a = uvm_malloc(12000); /* an area: a size that fills its pages (slab_fills) */
	uvm_free(a);
	cr_assert_eq(slot_of(a), PARKED);
	cr_assert_eq(uvm_malloc(12000), a);
	uvm_free(a);
	/* The parked area serves any size of its page count, even one a class serves (9 KiB: slab_fills). */
	size_t n = 0;

	cr_assert(slab_fills(9216));
	cr_assert_eq(uvm_malloc(9216), a, "the warm area just freed was passed over");
	cr_assert_eq(uvm_malloc_usable_size(a), 12288);
	uvm_free(a);
	cr_assert_eq(slot_of(a), PARKED);
	b = uvm_malloc(9216); /* the slot taken, then a size of the 9 KiB class: a slab object */
	cr_assert_eq(b, a);
	a = uvm_malloc(9216);
	cr_assert(slab_check(a, &n) == SLAB_LIVE && n == 9216, "9 KiB with nothing parked is not a slab object");
	uvm_free(a);
	uvm_free(b);
}

/*
 * A piece of a slabs' huge page (VA_DENSE, area_alloc_stocked) and a cached
 * area beside it never join: joined, the other would take the piece's flag
 * and serve slabs only (allocwork phases: a round's buffers, carved after
 * its last huge page, joined to it at the next round's large miss, and the
 * next round's buffers faulted fresh pages in).
 */
Test(pcp, a_slab_stocks_piece_joins_no_other_area)
{
	char *decoy = uvm_vmalloc(4096), *whole = uvm_vmalloc(15 * 4096), *head;
	struct vmap_area *va;
	bool joins, dense_joins;

	cr_assert_not_null(decoy);
	cr_assert_not_null(whole);
	uvm_vfree(whole);
	uvm_vfree(decoy); /* parked in whole's place: whole waits in its bin */
	head = uvm_vmalloc(3 * 4096); /* cut from whole: its tail stays cached right after it */
	cr_assert_eq(head, whole, "the request was not cut from the cached area");
	va = area_find((uintptr_t)head);
	cr_assert_not_null(va);
	heap_enter(uvm__heap);
	joins = pcp_joins_next(&uvm__heap->pcp, va);
	va->flags |= VA_DENSE;
	dense_joins = pcp_joins_next(&uvm__heap->pcp, va);
	va->flags &= ~VA_DENSE;
	heap_leave(uvm__heap);
	cr_assert(joins, "the cut's tail would not join its head");
	cr_assert_not(dense_joins, "a stock's piece would join another area");
	uvm_vfree(head);
}

/* Only an area of the bin its size takes, up to PCP_PARK_PAGES, is parked: others go onto their bins. */
Test(pcp, only_an_exact_bins_area_is_parked)
{
	char *big = uvm_vmalloc((PCP_PARK_PAGES - 1) * 4096), *bigger = uvm_vmalloc(PCP_PARK_PAGES * 4096), *p, *q;

	uvm_vfree(bigger);
	cr_assert_eq(slot_of(bigger), CACHED, "an area over PCP_PARK_PAGES was parked");
	uvm_vfree(big);
	cr_assert_eq(slot_of(big), PARKED);
	cr_assert_eq(uvm_vmalloc((PCP_PARK_PAGES - 1) * 4096), big);
	p = uvm_vmalloc(5 * 4096); /* 6 pages */
	uvm_vfree(p);
	q = uvm_vmalloc(4 * 4096); /* a miss links p into its bin, and takes it whole (pcp_whole_max) */
	cr_assert_eq(q, p);
	uvm_vfree(q);
	cr_assert_eq(slot_of(q), CACHED, "an area handed out from the bin above was parked");
	uvm_vfree(big);
	uvm_vfree(uvm_vmalloc(PCP_PARK_PAGES * 4096));
}

static void use_after_park(void *arg)
{
	char *p = uvm_vmalloc(4096);

	uvm_vfree(p);
	if (arg)
		uvm_vsize(p);
	else
		uvm_vfree(p);
}

Test(pcp, a_parked_area_is_a_freed_one)
{
	expect_death(use_after_park, NULL, SIGABRT, "uvmalloc: uvm_vfree(): invalid pointer 0x");
	expect_death(use_after_park, "size", SIGABRT, "uvmalloc: uvm_vsize(): invalid pointer 0x");
}

/* A miss links the parked area into its bin first: the search trims it to size (14 pages: no slab's piece, below). */
Test(pcp, a_miss_sees_the_parked_area)
{
	char *p = uvm_vmalloc(13 * 4096), *q;
	uint64_t misses = stats().cache_misses;

	uvm_vfree(p);
	cr_assert_eq(slot_of(p), PARKED);
	q = uvm_vmalloc(4 * 4096);
	cr_assert_eq(q, p, "the miss did not take the parked area");
	cr_assert_eq(stats().cache_misses, misses, "a fresh range was taken");
	cr_assert_eq(uvm__heap->pcp.parked, 0);
	uvm_vfree(q);
}

/*
 * A whole slab's piece (64 KiB on its boundary) waits for a slab: a smaller
 * block's miss takes other pages, and the next slab request takes it whole.
 */
Test(pcp, a_slab_piece_is_not_cut_for_a_block)
{
	char *decoy = uvm_vmalloc(4096), *piece = uvm_vmalloc_aligned(15 * 4096, 65536), *block, *slab;

	cr_assert_not_null(decoy);
	cr_assert_not_null(piece);
	cr_assert_eq((uintptr_t)piece % 65536, 0);
	uvm_vfree(decoy);
	uvm_vfree(piece); /* the decoy is parked: the piece goes onto its bin */
	cr_assert_eq(slot_of(piece), CACHED);
	block = uvm_vmalloc(3 * 4096);
	cr_assert_not_null(block);
	cr_assert(block < piece || block >= piece + 65536, "a 4-page block was cut from the slab's piece");
	slab = uvm_vmalloc_aligned(15 * 4096, 65536);
	cr_assert_eq(slab, piece, "the slab-shaped request did not take the piece whole");
	uvm_vfree(slab);
	uvm_vfree(block);
}

static void *park_and_wait(void *arg)
{
	char *p = uvm_vmalloc(3 * 4096);

	*(char **)arg = p;
	uvm_vfree(p);
	atomic_store(&worker_state, 1);
	while (atomic_load(&worker_state) != 2)
		usleep(1000);
	cr_assert_eq(uvm_vmalloc(3 * 4096), p, "the parked area left its thread");
	uvm_vfree(p);
	return NULL;
}

/*
 * Another thread's drain (uvm_purge) leaves a running thread its parked
 * area, the one thing in its cache no claimer touches; the thread's exit
 * drains it with the rest.
 */
Test(pcp, a_claimers_drain_leaves_the_parked_area)
{
	char *p;
	pthread_t t;

	atomic_store(&worker_state, 0);
	cr_assert_eq(pthread_create(&t, NULL, park_and_wait, &p), 0);
	while (atomic_load(&worker_state) != 1)
		usleep(1000);
	uvm_purge();
	cr_assert_eq(stats().cached_count, 1, "the purge took %s", stats().cached_count ? "more" : "the parked area");
	cr_assert_eq(stats().cached_bytes, 4 * 4096);
	atomic_store(&worker_state, 2);
	pthread_join(t, NULL);
	uvm_purge();
	cr_assert_eq(stats().cached_count, 0, "the exit left the parked area");
}

/*
 * A large block recycled at one size goes in line both ways, as a bin's
 * does: its area is live for its order list (VA_LIVE_LIST), and each round
 * is a cache hit on the same block.  One with a cached neighbour after it
 * still takes the slow way, which joins them (neighbours_merge_back).
 */
Test(pcp, a_large_block_recycled_at_one_size_stays_in_line)
{
	char *p = uvm_vmalloc(1 << 20), *q;
	uint64_t hits = stats().cache_hits, misses = stats().cache_misses;

	cr_assert_eq(atomic_load(&area_find((uintptr_t)p)->live), VA_LIVE_LIST);
	for (int i = 0; i < 100; i++) {
		uvm_vfree(p);
		q = uvm_vmalloc(1 << 20);
		cr_assert_eq(q, p, "round %d: another block", i);
		cr_assert_eq(atomic_load(&area_find((uintptr_t)q)->live), VA_LIVE_LIST);
	}
	cr_assert_eq(stats().cache_hits - hits, 100);
	cr_assert_eq(stats().cache_misses, misses);
	uvm_vfree(p);
	/* In line too through malloc. */
	p = uvm_malloc(1 << 20);
	uvm_free(p);
	cr_assert_eq(uvm_malloc(1 << 20), p);
	uvm_free(p);
}

/*
 * A size whose bin is empty takes the next bin's area whole, in line (no
 * slow-way hit), and the area goes back to its own bin: a size the next
 * one up serves stays in line however often it comes.
 */
Test(pcp, an_empty_bin_takes_the_next_bins_area_in_line)
{
	char *p = uvm_vmalloc(5 * 4096), *decoy = uvm_vmalloc(4096), *q; /* 6 pages with the guard */
	uint64_t slow_hits, misses;

	uvm_vfree(decoy); /* parked: p, of another size, goes onto its bin */
	uvm_vfree(p);
	slow_hits = uvm__heap->pcp.hits;
	misses = stats().cache_misses;
	for (int i = 0; i < 10; i++) {
		q = uvm_vmalloc(4 * 4096); /* the bin of 5 pages is empty */
		cr_assert_eq(q, p, "round %d: not the next bin's area", i);
		cr_assert_eq(uvm_vsize(q), 5 * 4096, "handed out whole");
		cr_assert_eq(atomic_load(&area_find((uintptr_t)q)->live), VA_LIVE_BIN);
		uvm_vfree(q);
	}
	cr_assert_eq(uvm__heap->pcp.hits, slow_hits, "the slow way served %llu of them",
		     (unsigned long long)(uvm__heap->pcp.hits - slow_hits));
	cr_assert_eq(stats().cache_misses, misses);
	cr_assert_eq(uvm_vmalloc(5 * 4096), p, "not back in its own bin");
	uvm_vfree(p);
	cr_assert_eq(uvm_vmalloc(4096), decoy);
	uvm_vfree(decoy);
}

/*
 * Only an area of the size asked for is parked: one handed out whole from
 * the bin above goes back to its own bin though the slot is empty, and one
 * resized in place is parked under its new size (the live word's key,
 * vmap.h's VA_LIVE_PARK, follows the area, not the first request).
 */
Test(pcp, only_an_area_of_the_size_asked_for_is_parked)
{
	char *p = uvm_vmalloc(5 * 4096), *decoy = uvm_vmalloc(4096), *q;

	cr_assert_eq(atomic_load(&area_find((uintptr_t)p)->live), VA_LIVE_PARK + 4);
	uvm_vfree(decoy);
	uvm_vfree(p); /* onto its bin: the slot holds decoy */
	cr_assert_eq(uvm_vmalloc(4096), decoy, "the slot emptied");
	q = uvm_vmalloc(4 * 4096);
	cr_assert_eq(q, p, "not the next bin's area");
	cr_assert_eq(atomic_load(&area_find((uintptr_t)q)->live), VA_LIVE_BIN);
	uvm_vfree(q);
	cr_assert_eq(slot_of(q), CACHED, "parked though larger than asked for");
	cr_assert_eq(uvm_vmalloc(5 * 4096), p, "not back in its own bin");
	cr_assert_eq(uvm_vrealloc(p, 2 * 4096), p, "not shrunk in place");
	cr_assert_eq(atomic_load(&area_find((uintptr_t)p)->live), VA_LIVE_PARK + 1, "not the key of its new size");
	uvm_vfree(p);
	cr_assert_eq(slot_of(p), PARKED);
	cr_assert_eq(uvm_vmalloc(2 * 4096), p, "not parked under its new size");
	uvm_vfree(p);
	uvm_vfree(decoy);
}

/*
 * An area at most an eighth larger than asked for (pcp_whole_max) is
 * handed out whole, in line, from the nearest such bin, whichever binmap
 * word holds it; a larger one is the slow way's and is trimmed to size.
 */
Test(pcp, an_area_an_eighth_larger_is_handed_out_whole_in_line)
{
	char *a = uvm_vmalloc(65 * 4096), *fence = uvm_vmalloc(4096), *b = uvm_vmalloc(68 * 4096), *q, *r;
	uint64_t slow_hits;

	cr_assert_eq(pcp_whole_max(61), 69, "the test's sizes assume an eighth");
	uvm_vfree(b); /* 69 pages with the guard: bin 69, in the binmap's second word */
	slow_hits = uvm__heap->pcp.hits;
	q = uvm_vmalloc(60 * 4096); /* 61 pages: its bin, in the first word, is empty */
	cr_assert_eq(q, b, "not the next word's bin");
	cr_assert_eq(uvm_vsize(q), 68 * 4096, "not handed out whole");
	uvm_vfree(q);
	uvm_vfree(a); /* 66 pages */
	q = uvm_vmalloc(60 * 4096);
	cr_assert_eq(q, a, "not the nearest bin's area");
	cr_assert_eq(uvm_vsize(q), 65 * 4096);
	cr_assert_eq(uvm__heap->pcp.hits, slow_hits, "the slow way served %llu of them",
		     (unsigned long long)(uvm__heap->pcp.hits - slow_hits));
	r = uvm_vmalloc(59 * 4096); /* 60 pages: 69 is more than an eighth over */
	cr_assert_eq(r, b, "the cached area was not used");
	cr_assert_eq(uvm_vsize(r), 59 * 4096, "not trimmed to size");
	cr_assert_eq(uvm__heap->pcp.hits, slow_hits + 1, "not the slow way's");
	cr_assert_eq(stats().cached_bytes, 9 * 4096, "the tail is not cached");
	uvm_vfree(r);
	uvm_vfree(q);
	uvm_vfree(fence);
}

/*
 * A small request takes a cached area up to four pages larger whole, where
 * an eighth is less than that: a shorter tail cut off would serve only the
 * smallest areas (malloc's blocks of 4, 8 and 12 KiB), and a program of
 * random sizes piled such tails up in its cache.  A larger one is trimmed.
 */
Test(pcp, a_small_request_takes_an_area_up_to_four_pages_larger_whole)
{
	char *p = uvm_vmalloc(5 * 4096), *fence = uvm_vmalloc(4096), *q, *r;

	cr_assert_eq(pcp_whole_max(2), 6, "the test's sizes assume four pages more");
	uvm_vfree(p); /* 6 pages with the guard */
	q = uvm_vmalloc(4096); /* 2 pages */
	cr_assert_eq(q, p, "the cached area was not used");
	cr_assert_eq(uvm_vsize(q), 5 * 4096, "a tail of four pages was cut off");
	cr_assert_eq(stats().cached_bytes, 0);
	p = uvm_vmalloc(6 * 4096); /* 7 pages: five more than 2 */
	uvm_vfree(p);
	r = uvm_vmalloc(4096);
	cr_assert_eq(r, p, "the cached area was not used");
	cr_assert_eq(uvm_vsize(r), 4096, "an area five pages larger was not trimmed");
	cr_assert_eq(stats().cached_bytes, 5 * 4096, "the tail is not cached");
	uvm_vfree(r);
	uvm_vfree(q);
	uvm_vfree(fence);
}

/*
 * A bin whose bit a search cleared (it found the bin empty) is marked
 * again by the next in-line free into it, so the slow paths still see
 * the area: the search finds it, and a drain takes it.
 */
Test(pcp, an_in_line_free_marks_a_bin_a_search_cleared)
{
	struct pcp_node *n;
	char *p = uvm_vmalloc(3 * 4096), *decoy = uvm_vmalloc(4096), *q; /* 4 pages with the guard */

	pin_to_cpu0();
	uvm_vfree(decoy); /* parked: p, of another size, goes onto its bin in line */
	uvm_vfree(p);
	cr_assert_eq(uvm_vmalloc(3 * 4096), p); /* a hit: the bin is empty, its bit still set */
	n = uvm__heap->pcp.hit;
	q = uvm_vmalloc_aligned(3 * 4096, 1 << 20); /* a miss: the search finds the bin empty and clears its bit */
	cr_assert_not_null(q);
	cr_assert_not(n->binmap[0] & (1ull << 4), "the search left the empty bin's bit");
	cr_assert_leq(pcp_bin_room(&n->lists[4]), 0, "a bin without its bit has room");
	decoy = uvm_vmalloc(4096);
	uvm_vfree(decoy); /* parked (the miss linked the one parked before into its bin) */
	uvm_vfree(p);     /* onto its bin in line */
	cr_assert(n->binmap[0] & (1ull << 4), "the in-line free left its bin unmarked");
	cr_assert_eq(uvm_vmalloc_aligned(3 * 4096, 4096), p, "the slow way did not find the area");
	uvm_vfree(p);
	uvm_vfree(q);
	uvm_purge();
	cr_assert_eq(stats().cached_count, 0, "a drain left an area in the cache");
}

/* vrealloc grows into the tail an earlier shrink left in the thread's own cache: in place, no miss. */
Test(pcp, vrealloc_grows_into_its_own_cached_tail)
{
	char *p = uvm_vmalloc(4 * 4096), *fence = uvm_vmalloc(4096), *q;
	struct uvm_stats before, st;

	cr_assert_eq(fence, p + 5 * 4096, "the fence must follow p for this test");
	p[0] = 'a';
	cr_assert_eq(uvm_vrealloc(p, 4096), p);
	before = stats();
	cr_assert_eq(before.cached_count, 1, "the shrink's tail is not cached");
	q = uvm_vrealloc(p, 4 * 4096);
	st = stats();
	cr_assert_eq(q, p, "did not grow in place into its cached tail");
	cr_assert_eq(q[0], 'a');
	cr_assert_eq(uvm_vsize(q), 4 * 4096);
	cr_assert_eq(st.cached_count, 0);
	cr_assert_eq(st.cache_misses, before.cache_misses);
	cr_assert_eq(st.area_alloc_bytes - st.area_free_bytes, before.area_alloc_bytes - before.area_free_bytes + 3 * 4096,
		     "live bytes did not grow by the tail");
	uvm_vfree(q);
	uvm_vfree(fence);
}

/*
 * A miss for a large block sheds the cached large blocks too small for it,
 * and the node gives them back before the new one is faulted in: a program
 * recycling large blocks of varied sizes holds its live blocks, not idle
 * ones beside them.  Small cached areas stay.
 */
Test(pcp, a_large_miss_sheds_smaller_large_blocks)
{
	char *small = uvm_vmalloc(4096), *a = uvm_vmalloc(3 << 20), *b;
	struct uvm_stats st;

	memset(a, 1, 3 << 20);
	uvm_vfree(a);
	uvm_vfree(small);
	st = stats();
	cr_assert_eq(st.cached_count, 2);
	b = uvm_vmalloc(5 << 20);
	st = stats();
	cr_assert_eq(st.cached_count, 1, "the 3 MiB block is still cached");
	cr_assert_eq(st.cached_bytes, 2 * 4096, "the small area was shed too");
	cr_assert_eq(st.lazy_bytes, 0, "the shed block was not given back before the fresh one");
	cr_assert_eq(uvm_vmalloc(4096), small);
	uvm_vfree(b);
}

static size_t resident(const void *p, size_t bytes)
{
	static unsigned char vec[(8 << 20) / 4096];
	size_t n = 0;

	cr_assert_eq(mincore((void *)p, bytes, vec), 0);
	for (size_t i = 0; i < bytes / 4096; i++)
		n += vec[i] & 1;
	return n * 4096;
}

/*
 * A large miss takes the pages of the smaller cached block instead of
 * having fresh ones zeroed: the new block's last 3 MiB (its start is where
 * a realloc moves the old block's pages) are resident before it is touched
 * and hold the old bytes; a calloc'd block so made is zero.
 */
static void thp_always(void) { setenv("UVM_THP", "always", 1); }

/* (UVM_THP=auto may touch and time a fresh block's first huge page: always, whose huge pages these are, does not.) */
Test(pcp, a_large_miss_reuses_the_smaller_blocks_pages, .init = thp_always)
{
	char *a = uvm_vmalloc(3 << 20), *b;

	memset(a, 7, 3 << 20);
	uvm_vfree(a);
	b = uvm_vmalloc(5 << 20);
	cr_assert_neq(b, a);
	cr_assert_geq(resident(b + (2 << 20), 3 << 20), (size_t)3 << 20, "the 3 MiB block's pages did not move in");
	cr_assert_eq(resident(b, 2 << 20), 0, "the new block's start is backed: it was to be fresh");
	cr_assert_eq(resident(a, 3 << 20), 0, "the old range still holds pages");
	for (size_t i = 2u << 20; i < (5u << 20); i += 4096)
		cr_assert_eq(b[i], 7);
	uvm_vfree(b);
	b = uvm_malloc(4 << 20);
	memset(b, 9, 4 << 20);
	uvm_free(b);
	a = uvm_calloc(1, 6 << 20);
	for (size_t i = 0; i < (6u << 20); i += 512)
		cr_assert_eq(a[i], 0, "byte %zu of a calloc'd block is not zero", i);
	uvm_free(a);
}

/*
 * A large miss takes only the cached blocks whose pages all fit in it,
 * largest first: a block that would fit only in part (the rest of its
 * pages given back) stays cached and backed, for the next request of its
 * size.
 */
Test(pcp, a_large_miss_takes_only_the_blocks_that_fit_whole)
{
	enum { KIB = 1024, A = 2304 * KIB, B = 2048 * KIB, C = 3072 * KIB }; /* both cached under high: 4 MiB and B's miss */
	char *a = uvm_vmalloc(A), *b = uvm_vmalloc(B), *c;
	struct uvm_stats st;

	memset(a, 7, A);
	memset(b, 8, B);
	uvm_vfree(a);
	uvm_vfree(b);
	cr_assert_eq(stats().cached_count, 2);
	c = uvm_vmalloc(C); /* a's pages fit, then 768 KiB of room: not b's */
	st = stats();
	cr_assert_eq(st.cached_count, 1, "%" PRIu64 " areas cached, not b alone", st.cached_count);
	cr_assert_eq(st.cached_bytes, B + 4096, "b left the cache");
	cr_assert_eq(resident(b, B), (size_t)B, "b lost pages");
	/* Both start on a 2 MiB boundary, so a's pages keep their place modulo 2 MiB: c's start. */
	cr_assert_eq(resident(c, A), (size_t)A, "a's pages did not move in, to where they lay modulo 2 MiB");
	cr_assert_eq(resident(c + A, C - A), 0, "the rest of c is backed: it was to be fresh");
	cr_assert_eq(uvm_vmalloc(B), b, "the cached b did not serve its size");
	uvm_vfree(b);
	uvm_vfree(c);
}

/* A worker fills its cache with 64 areas of 16 pages (the 4 MiB high a thread starts with), then waits, alive. */

static void *fill_cache_and_wait(void *arg)
{
	char *p[64];

	(void)arg;
	for (int i = 0; i < 64; i++)
		p[i] = memset(uvm_vmalloc(15 * 4096), 1, 15 * 4096);
	for (int i = 0; i < 64; i++)
		uvm_vfree(p[i]);
	atomic_store(&worker_state, 1);
	while (atomic_load(&worker_state) != 2)
		usleep(1000);
	return NULL;
}

/*
 * While it waits, the main thread only allocates small objects, which
 * never miss in an area cache: their slabs' refills decay the idle
 * worker's cache all the same (before, nothing did until the worker exited).
 */
Test(pcp, small_objects_of_other_threads_decay_an_idle_cache)
{
	static void *window[20000];
	uint64_t filled, bound;
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, fill_cache_and_wait, NULL), 0);
	while (atomic_load(&worker_state) != 1)
		usleep(1000);
	filled = stats().cached_bytes;
	cr_assert_geq(filled, (uint64_t)64 * 16 * 4096 * 9 / 10, "the worker cached %llu bytes",
		      (unsigned long long)filled);
	bound = filled * 3 / 4 + 16 * 4096; /* one idle decay step: a quarter of high, and the parked area stays */
	for (int round = 0; round < 300 && stats().cached_bytes > bound; round++) {
		for (int i = 0; i < 20000; i++) {
			uvm_free(window[i]);
			window[i] = uvm_malloc(16 + (size_t)(i % 7) * 80);
		}
		usleep(10000);
	}
	cr_assert_leq(stats().cached_bytes, bound, "the idle worker's cache kept %llu of %llu bytes",
		      (unsigned long long)stats().cached_bytes, (unsigned long long)filled);
	for (int i = 0; i < 20000; i++)
		uvm_free(window[i]);
	atomic_store(&worker_state, 2);
	pthread_join(t, NULL);
}

static void two_pretend_nodes(void) { setenv("UVM_FAKE_NUMA", "2", 1); }

/*
 * On a machine of several NUMA nodes the hits are in line too, from the
 * bins of the node the thread ran on at its last miss (they missed there
 * always, a search of the node's cache each time).  CPU c is pretend node
 * c mod 2: the thread runs on the last CPU, of node 1 on a machine of two.
 */
Test(pcp, hits_follow_the_node_of_the_last_miss, .init = two_pretend_nodes)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned node = (unsigned)((cpus - 1) % 2);
	cpu_set_t one;
	uint64_t hits;
	struct heap *h;
	void *p;

	CPU_ZERO(&one);
	CPU_SET(cpus - 1, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	p = uvm_vmalloc(4096); /* a miss: the hits' node is this one's */
	h = uvm__heap;
	cr_assert_eq(h->pcp.hit, &h->pcp.nodes[node]);
	uvm_vfree(p);
	hits = stats().cache_hits;
	for (int i = 0; i < 100; i++) {
		void *q = uvm_vmalloc(4096);

		cr_assert_eq(q, p);
		uvm_vfree(q);
	}
	cr_assert_eq(stats().cache_hits - hits, 100);
}
