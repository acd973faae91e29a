/*
 * tests/unit/vm/test_purge.c - lazy freeing, pools and purge (lib/vm/vnode.c,
 * lib/vm/purge.c), with the thread caches off: reuse without syscalls or
 * faults, the threshold, batching into merged madvise runs, decay, and RSS
 * really falling.
 */
#include "helpers.h"

#include "arena.h"
#include "os.h"
#include "purge.h"
#include "uvmalloc.h"
#include "vnode.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static struct uvm_stats stats(void)
{
	struct uvm_stats st;

	uvm_stats(&st);
	return st;
}

/* These tests are about the node layer: thread caches (test_pcp.c) would keep frees from reaching it. */
static void node_layer(void) { setenv("UVM_PCP", "0", 1); }

static void no_auto_purge(void)
{
	node_layer();
	setenv("UVM_LAZY_MAX", "1000000", 1);
}

enum { REUSED = 100, REUSED_PAGES = 3 };
static char *first[REUSED], *again[REUSED], *fence[REUSED];

/*
 * An area that stays live after the one allocated before it, so that the
 * pools cannot join their neighbours (vnode.c's pool_merge): the tests
 * below count areas.
 */
static char *fenced(size_t bytes, char **fence_slot)
{
	char *p = uvm_vmalloc(bytes);

	*fence_slot = uvm_vmalloc(4096);
	cr_assert(p && *fence_slot);
	return p;
}

/* REUSED areas of REUSED_PAGES pages into first, each fenced, written, then freed (to the lazy lists: caches are off). */
static void free_written(void)
{
	pin_to_cpu0();
	for (int i = 0; i < REUSED; i++) {
		first[i] = fenced(REUSED_PAGES * 4096, &fence[i]);
		memset(first[i], 0x5a, REUSED_PAGES * 4096);
	}
	for (int i = 0; i < REUSED; i++)
		uvm_vfree(first[i]);
}

/* As many areas again, written: every one of first's, with no syscall, no page fault and a pool hit each (from). */
static void reused_as_they_were(const char *from)
{
	memset(again, 0, sizeof(again)); /* the test's own first touches are not ours to count */
	prefault_for_counting();
	uint64_t calls = os_syscalls(), hits = stats().pool_hits;
	long faults = minor_faults();
	for (int i = 0; i < REUSED; i++) {
		again[i] = uvm_vmalloc(REUSED_PAGES * 4096);
		memset(again[i], 0xa5, REUSED_PAGES * 4096);
	}
	long faulted = minor_faults() - faults;
	cr_assert_eq(os_syscalls(), calls, "reuse made %lu syscalls", (unsigned long)(os_syscalls() - calls));
	cr_assert_eq(faulted, 0, "reuse took %ld page faults", faulted);
	cr_assert_eq(stats().pool_hits - hits, REUSED, "%s: reuses count as pool hits", from);
	for (int i = 0; i < REUSED; i++) {
		int found = 0;

		for (int k = 0; k < REUSED && !found; k++)
			found = again[i] == first[k];
		cr_assert(found, "%p did not come from %s", again[i], from);
	}
}

/* A purged area comes back from its pool: no syscall, no page fault, same addresses. */
Test(purge, pool_reuse_without_syscalls_or_faults, .init = no_auto_purge)
{
	free_written();
	purge_now(0);
	cr_assert_eq(stats().pooled_count, REUSED);
	cr_assert_eq(stats().lazy_count, 0);
	reused_as_they_were("the pool");
}

/*
 * Before any purge, a request that misses its pool takes a lazily freed
 * area of its exact size: still backed, so no syscall and no page fault;
 * an area of another size stays lazy.
 */
Test(purge, lazy_areas_are_reused_before_the_purge, .init = no_auto_purge)
{
	free_written();
	cr_assert_eq(stats().lazy_count, REUSED);
	cr_assert_eq(stats().pooled_count, 0);
	uvm_vfree(uvm_vmalloc((REUSED_PAGES + 1) * 4096));
	cr_assert_eq(stats().lazy_count, REUSED + 1, "a lazy area of another size was taken");
	reused_as_they_were("the lazy list");
	cr_assert_eq(stats().lazy_count, 1, "only the other size's area is still lazy");
}

/*
 * Pooled areas take in their pooled neighbours, and a miss that no pool
 * of its size serves is cut from a larger pooled area, aligned as asked:
 * still backed but for the pooled areas' guard pages, and with no
 * syscall.  Pieces that an exit drained fit few requests alone (vnode.c's
 * pool_merge).
 */
/* The guard pages of areas of 3 pages laid side by side from lo that the pages [p, p + pages) cover. */
static long guards_in(uintptr_t lo, const char *p, long pages)
{
	long n = 0;

	for (long i = 0; i < pages; i++)
		n += (((uintptr_t)p - lo) / 4096 + (uintptr_t)i) % 3 == 2;
	return n;
}

Test(purge, pooled_neighbours_join_and_serve_any_size, .init = no_auto_purge)
{
	enum { N = 32, PAGES = 3 };
	char *p[N], *q[2];
	uintptr_t lo, hi;

	pin_to_cpu0();
	for (int i = 0; i < N; i++) {
		p[i] = uvm_vmalloc((PAGES - 1) * 4096);
		memset(p[i], 0x5a, (PAGES - 1) * 4096);
		cr_assert(i == 0 || p[i] == p[i - 1] + PAGES * 4096, "the areas do not lie side by side");
	}
	lo = (uintptr_t)p[0];
	hi = lo + N * PAGES * 4096;
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	purge_now(0);
	cr_assert_eq(stats().pooled_count, 1, "%lu pooled areas, not one", (unsigned long)stats().pooled_count);
	cr_assert_eq(stats().pooled_bytes, N * PAGES * 4096);
	prefault_for_counting();
	uint64_t calls = os_syscalls(), hits = stats().pool_hits;
	long faults = minor_faults();
	q[0] = uvm_vmalloc(4 * 4096);                 /* 5 pages: no pool of that size */
	q[1] = uvm_vmalloc_aligned(15 * 4096, 65536); /* a slab's shape */
	if (q[0] && q[1]) {
		memset(q[0], 1, 4 * 4096);
		memset(q[1], 1, 15 * 4096);
	}
	faults = minor_faults() - faults; /* before any assertion: a passing one reports to Criterion's runner, which allocates */
	cr_assert(q[0] && q[1]);
	/* Backed but for the pooled areas' guard pages, which no one wrote: only those fault. */
	cr_assert_leq(faults, guards_in(lo, q[0], 4) + guards_in(lo, q[1], 15), "the cut areas faulted %ld pages", faults);
	cr_assert_eq(os_syscalls(), calls, "the cuts made %lu syscalls", (unsigned long)(os_syscalls() - calls));
	cr_assert_eq(stats().pool_hits, hits + 2);
	for (int k = 0; k < 2; k++)
		cr_assert((uintptr_t)q[k] >= lo && (uintptr_t)q[k] < hi, "%p is not from the pooled range", (void *)q[k]);
	cr_assert_eq((uintptr_t)q[1] % 65536, 0);
	cr_assert_eq(vn_busy_check(), 0, "the cut areas broke their busy tree");
	cr_assert_eq(stats().pooled_bytes, (N * PAGES - 5 - 16) * 4096, "the cuts' pieces stay pooled");
	uvm_vfree(q[0]);
	uvm_vfree(q[1]);
	cr_assert_eq(arena_check(), 0);
}

static void two_nodes_no_auto_purge(void)
{
	no_auto_purge();
	setenv("UVM_NODES", "2", 1);
}

static void *free_written_then_exit(void *arg)
{
	free_written();
	return arg;
}

/*
 * A miss that finds its own node's pool and lazy areas empty takes another
 * node's pooled area: an exited thread's areas pool in its node, and the
 * next thread draws the next node.
 */
Test(purge, a_miss_takes_another_nodes_pooled_area, .init = two_nodes_no_auto_purge)
{
	pthread_t t;

	uvm_vfree(uvm_vmalloc(4096)); /* this thread's node first: the next thread draws the other */
	purge_now(1);
	cr_assert_eq(pthread_create(&t, NULL, free_written_then_exit, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	purge_now(0);
	cr_assert_eq(stats().pooled_count, REUSED, "%lu areas pooled", (unsigned long)stats().pooled_count);
	reused_as_they_were("the other node's pool");
}

/* Crossing lazy_max_pages runs exactly one purge, which empties every lazy list. */
Test(purge, threshold_triggers_one_batched_purge, .init = node_layer)
{
	enum { N = 600 };
	static char *p[N], *fences[N];

	setenv("UVM_LAZY_MAX", "1000", 1);
	pin_to_cpu0();
	for (int i = 0; i < N; i++)
		p[i] = fenced(4096, &fences[i]); /* 2 pages with the guard */
	cr_assert_eq(purge_lazy_max(), 1000);
	for (int i = 0; i < 500; i++)
		uvm_vfree(p[i]);
	cr_assert_eq(stats().purges, 0, "purged below the threshold");
	cr_assert_eq(stats().lazy_count, 500);
	uvm_vfree(p[500]); /* 1002 pages > 1000 */
	cr_assert_eq(stats().purges, 1);
	cr_assert_eq(stats().lazy_count, 0);
	cr_assert_eq(stats().pooled_count, 500, "pools hold lazy_max pages at most: 500 areas of 2 pages");
	for (int i = 501; i < N; i++)
		uvm_vfree(p[i]);
	cr_assert_eq(stats().purges, 1);
	cr_assert_eq(arena_check(), 0);
}

/* The purge another thread is running: held by the test, so frees find it busy. */
enum { BLOCKED_N = 2000, BLOCKED_PAGES = 4 };
static char *blocked_area[BLOCKED_N];
static atomic_int blocked_freed;

static void *free_blocked_areas(void *arg)
{
	(void)arg;
	for (int i = 0; i < BLOCKED_N; i++) {
		uvm_vfree(blocked_area[i]);
		atomic_fetch_add(&blocked_freed, 1);
	}
	return NULL;
}

/*
 * While a purge runs, frees go on lazily without waiting for it, but only
 * up to PURGE_LAZY_HARD times the limit: past it they wait.  Unbounded,
 * a few threads freeing outran a purging one and the lazy lists grew to
 * hundreds of GiB.
 */
Test(purge, frees_wait_for_a_purge_past_the_hard_limit, .init = no_auto_purge)
{
	size_t bound;
	pthread_t t;

	setenv("UVM_LAZY_MAX", "256", 1);
	for (int i = 0; i < BLOCKED_N; i++)
		cr_assert_not_null(blocked_area[i] = uvm_vmalloc((BLOCKED_PAGES - 1) * 4096));
	bound = PURGE_LAZY_HARD * purge_lazy_max() + BLOCKED_PAGES;
	purge_fork_prepare(); /* takes the purge lock, as a running purge holds it */
	cr_assert_eq(pthread_create(&t, NULL, free_blocked_areas, NULL), 0);
	usleep(300000);
	cr_assert_lt(atomic_load(&blocked_freed), BLOCKED_N, "every free went through while a purge ran");
	cr_assert_gt(vn_lazy_pages(), purge_lazy_max(), "frees did not go on past the limit without waiting");
	cr_assert_leq(vn_lazy_pages(), bound, "%zu lazy pages while a purge ran", vn_lazy_pages());
	purge_fork_parent();
	pthread_join(t, NULL);
	cr_assert_leq(vn_lazy_pages(), bound);
	cr_assert_eq(arena_check(), 0);
}

/* Lazily freed areas of a small program (what it frees: 2-page areas): N of them, the first `freed` freed. */
static void free_some(char **p, int n, int freed)
{
	for (int i = 0; i < n; i++)
		p[i] = uvm_vmalloc(4096);
	for (int i = 0; i < freed; i++)
		uvm_vfree(p[i]);
}

/* With UVM_LAZY_MAX unset, a small program's lazy lists and pools hold PURGE_RETAIN_MIN pages, not lazy_max. */
Test(purge, a_small_program_retains_little, .init = node_layer)
{
	enum { N = 200, FREED = 150 };
	static char *p[N];

	unsetenv("UVM_LAZY_MAX");
	pin_to_cpu0();
	free_some(p, N, FREED);
	cr_assert_gt(purge_lazy_max(), PURGE_RETAIN_MIN);
	cr_assert_eq(purge_retain_max(), PURGE_RETAIN_MIN, "50 live areas: the floor");
	cr_assert_eq(stats().purges, 1, "300 lazy pages crossed the 256-page floor once");
	cr_assert_leq((stats().lazy_bytes + stats().pooled_bytes) / 4096, 2 * PURGE_RETAIN_MIN);
	cr_assert_leq(stats().pooled_bytes / 4096, PURGE_RETAIN_MIN);
	cr_assert_eq(arena_check(), 0);
}

/* The same frees beside a large live area: an eighth of the busy pages may wait, so none is purged. */
Test(purge, a_large_program_retains_its_share, .init = node_layer)
{
	enum { N = 200, FREED = 150 };
	static char *p[N];
	char *big;

	unsetenv("UVM_LAZY_MAX");
	pin_to_cpu0();
	big = uvm_vmalloc((size_t)64 << 20); /* 16 385 busy pages, never touched */
	cr_assert_not_null(big);
	free_some(p, N, FREED);
	cr_assert_eq(purge_retain_max(), purge_lazy_max() < 16485 / 8 ? purge_lazy_max() : 16485 / 8);
	cr_assert_eq(stats().purges, 0);
	cr_assert_eq(stats().lazy_count, FREED);
	uvm_vfree(big);
}

/*
 * A large heap's share is capped by the kernel's lazy_max_pages(), not an
 * eighth of it: beside 1 GiB busy, 42 MiB freed lazily wait for their reuse
 * (with a cap of fls(CPUs) * 4 MiB, a large heap's turnover was a cycle of
 * purges and faults).
 */
Test(purge, a_large_heaps_share_reaches_the_kernels_lazy_max, .init = node_layer)
{
	enum { N = 640, PAGES = 16 };
	static char *p[N];
	char *big;
	size_t cpus_bits = 0;

	unsetenv("UVM_LAZY_MAX");
	pin_to_cpu0();
	big = uvm_vmalloc((size_t)1 << 30); /* 262 145 busy pages, never touched */
	cr_assert_not_null(big);
	for (long c = sysconf(_SC_NPROCESSORS_ONLN); c; c >>= 1)
		cpus_bits++;
	cr_assert_eq(purge_lazy_max(), cpus_bits * ((32u << 20) / 4096), "lazy_max_pages() is the kernel's fls(CPUs) * 32 MiB");
	for (int i = 0; i < N; i++)
		cr_assert_not_null(p[i] = uvm_vmalloc(PAGES * 4096));
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	cr_assert_eq(stats().purges, 0, "%d lazy pages purged beside 262 145 busy", N * (PAGES + 1));
	cr_assert_eq(stats().lazy_count, N);
	uvm_vfree(big);
	cr_assert_eq(arena_check(), 0);
}

/* Adjacent lazily freed areas too big for a pool leave in one madvise. */
Test(purge, adjacent_ranges_merge_into_one_madvise, .init = no_auto_purge)
{
	enum { N = 8 };
	char *p[N];

	for (int i = 0; i < N; i++) {
		p[i] = uvm_vmalloc(300 * 4096);
		p[i][0] = 1;
		if (i)
			cr_assert_eq(p[i], p[i - 1] + 301 * 4096, "fresh areas are not contiguous");
	}
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	uint64_t before = stats().madvise_calls;
	purge_now(0);
	cr_assert_eq(stats().madvise_calls - before, 1);
	cr_assert_eq(stats().purged_bytes, N * 301 * 4096);
	cr_assert_eq(arena_check(), 0);
}

/* Runs that do not touch (a live area between each two) go back together: one call for the purge, where the kernel batches. */
Test(purge, separate_runs_go_back_in_one_call, .init = no_auto_purge)
{
	enum { N = 16 };
	char *p[2 * N];
	long rss;

	for (int i = 0; i < 2 * N; i++) {
		p[i] = uvm_vmalloc(300 * 4096);
		memset(p[i], 1, 300 * 4096);
	}
	for (int i = 0; i < 2 * N; i += 2)
		uvm_vfree(p[i]);
	uint64_t before = stats().madvise_calls;
	rss = rss_bytes();
	purge_now(1);
	if (kernel_batches_madvise())
		cr_assert_eq(stats().madvise_calls - before, 1);
	else
		cr_assert_geq(stats().madvise_calls - before, N); /* one each, and the refused batch */
	cr_assert_eq(stats().purged_bytes, N * 301 * 4096);
	cr_assert_lt(rss_bytes(), rss - N * 280 * 4096, "the runs' pages were not all given back");
	for (int i = 1; i < 2 * N; i += 2)
		cr_assert_eq(p[i][0] + p[i][300 * 4096 - 1], 2, "a live area between the runs lost its bytes");
	for (int i = 1; i < 2 * N; i += 2)
		uvm_vfree(p[i]);
	cr_assert_eq(arena_check(), 0);
}

/* More runs than a batch holds (IOV_MAX): one call a batch, every run given back. */
Test(purge, more_runs_than_a_batch_take_a_call_a_batch, .init = no_auto_purge)
{
	enum { N = IOV_MAX + 100 };
	static char *p[2 * N];

	for (int i = 0; i < 2 * N; i++) {
		p[i] = uvm_vmalloc(4096);
		p[i][0] = 1;
	}
	for (int i = 0; i < 2 * N; i += 2)
		uvm_vfree(p[i]);
	uint64_t before = stats().madvise_calls, purged = stats().purged_bytes;
	purge_now(1);
	if (kernel_batches_madvise())
		cr_assert_eq(stats().madvise_calls - before, 2);
	else
		cr_assert_geq(stats().madvise_calls - before, N);
	cr_assert_geq(stats().purged_bytes - purged, (uint64_t)N * 2 * 4096);
	for (int i = 1; i < 2 * N; i += 2) {
		cr_assert_eq(p[i][0], 1, "a live area between the runs lost its byte");
		uvm_vfree(p[i]);
	}
	cr_assert_eq(arena_check(), 0);
}

/*
 * Each purge decays every pool by a quarter, rounded up, so that a pool's
 * last few areas go too (rounded down, three waited for a full purge); a
 * full purge empties them.
 */
Test(purge, pools_decay, .init = no_auto_purge)
{
	enum { N = 100 };
	char *p[N], *fences[N];
	int purges = 0;

	pin_to_cpu0();
	for (int i = 0; i < N; i++)
		p[i] = fenced(5 * 4096, &fences[i]);
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	purge_now(0);
	cr_assert_eq(stats().pooled_count, N);
	purge_now(0);
	cr_assert_eq(stats().pooled_count, 75);
	purge_now(0);
	cr_assert_eq(stats().pooled_count, 56);
	while (stats().pooled_count && purges++ < 16)
		purge_now(0);
	cr_assert_eq(stats().pooled_count, 0, "%lu areas stayed pooled through %d purges", (unsigned long)stats().pooled_count,
		     purges);
	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc(5 * 4096);
	for (int i = 0; i < N; i++) {
		uvm_vfree(p[i]);
		uvm_vfree(fences[i]);
	}
	purge_now(0);
	uvm_purge();
	cr_assert_eq(stats().pooled_count, 0);
	cr_assert_eq(stats().lazy_count, 0);
	cr_assert_eq(stats().busy_count, 0);
	cr_assert_eq(arena_check(), 0);
}

/* uvm_vzalloc of a pooled (dirty) area still returns zeroes. */
Test(purge, vzalloc_clears_pooled_memory, .init = no_auto_purge)
{
	pin_to_cpu0();
	unsigned char *p = uvm_vmalloc(7 * 4096);
	memset(p, 0xee, 7 * 4096);
	uvm_vfree(p);
	purge_now(0);
	unsigned char *q = uvm_vzalloc(7 * 4096);
	cr_assert_eq(q, p, "expected the pooled area back");
	for (int i = 0; i < 7 * 4096; i++)
		cr_assert_eq(q[i], 0, "byte %d not zero", i);
}

/* Memory is really given back: RSS falls after freeing and purging 256 MiB. */
Test(purge, rss_falls_after_purge)
{
	enum { N = 64, SZ = 4 << 20 };
	char *p[N];
	long base = rss_bytes();

	for (int i = 0; i < N; i++) {
		p[i] = uvm_vmalloc(SZ);
		memset(p[i], 1, SZ);
	}
	long full = rss_bytes();
	cr_assert_gt(full - base, 250L << 20, "RSS grew by %ld only", full - base);
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	uvm_purge();
	long after = rss_bytes();
	cr_assert_lt(after - base, 8L << 20, "RSS still %ld MiB above the start", (after - base) >> 20);
	cr_assert_eq(stats().busy_count, 0);
	cr_assert_eq(stats().pooled_bytes + stats().lazy_bytes, 0);
}
