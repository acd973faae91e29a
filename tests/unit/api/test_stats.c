/*
 * tests/unit/api/test_stats.c - the counters (lib/api/stats.c) summed over every thread
 * heap, the exited ones' folded in: after threads that allocate, hand
 * blocks to each other, free them and exit, every all-time counter pair
 * balances exactly (areas, small objects, their bytes), and the printed
 * summary is the struct's.
 */
#include "helpers.h"

#include <pthread.h>

#include "uvmalloc.h"

#define THREADS 4
#define BLOCKS 4000

static void *exchange[THREADS][BLOCKS];
static pthread_barrier_t halfway;

/* Thread i allocates its row (small objects and areas), then frees the next thread's row. */
static void *work(void *arg)
{
	int me = (int)(intptr_t)arg, next = (me + 1) % THREADS;

	for (int i = 0; i < BLOCKS; i++) {
		size_t size = i % 5 ? (size_t)(i * 37 % 3000) + 1 : (size_t)(i % 7 + 3) * 4096; /* areas: above UVM_SLAB_MAX */

		exchange[me][i] = uvm_malloc(size);
		memset(exchange[me][i], me, size < 64 ? size : 64);
	}
	pthread_barrier_wait(&halfway);
	for (int i = 0; i < BLOCKS; i++)
		uvm_free(exchange[next][i]);
	return NULL;
}

Test(stats, counters_balance_after_threads_free_each_others_blocks_and_exit)
{
	struct uvm_stats a, b;
	pthread_t t[THREADS];

	uvm_free(uvm_malloc(1)); /* set up, so that the first snapshot is the baseline */
	uvm_stats(&a);
	pthread_barrier_init(&halfway, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, work, (void *)(intptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	uvm_stats(&b);
	cr_assert_eq(b.small_allocs - a.small_allocs, b.small_frees - a.small_frees, "small: %llu allocated, %llu freed",
		     (unsigned long long)(b.small_allocs - a.small_allocs), (unsigned long long)(b.small_frees - a.small_frees));
	cr_assert_eq(b.small_allocs - a.small_allocs, THREADS * BLOCKS * 4 / 5);
	cr_assert_eq(b.small_alloc_bytes - a.small_alloc_bytes, b.small_free_bytes - a.small_free_bytes);
	/* Areas: the users' blocks, and slabs made and released on the way (both count as areas). */
	cr_assert_eq(b.allocs - a.allocs, b.frees - a.frees + (b.slabs - a.slabs), "areas: %llu allocated, %llu freed, %lld slabs more",
		     (unsigned long long)(b.allocs - a.allocs), (unsigned long long)(b.frees - a.frees), (long long)(b.slabs - a.slabs));
	cr_assert_geq(b.allocs - a.allocs, THREADS * BLOCKS / 5);
	cr_assert_eq(b.busy_count - b.slabs, a.busy_count - a.slabs, "no user area is left live");
}

Test(stats, the_printed_summary_is_the_structs)
{
	struct uvm_stats st;
	char *buf = NULL, want[64];
	size_t len = 0;
	void *p = uvm_vmalloc(5 * 4096);
	FILE *f = open_memstream(&buf, &len);

	uvm_stats(&st);
	uvm_stats_print(f);
	fclose(f);
	snprintf(want, sizeof(want), "%llu areas", (unsigned long long)st.busy_count);
	cr_assert(strstr(buf, want), "the summary names %s:\n%s", want, buf);
	cr_assert(strstr(buf, "reserved"), "%s", buf);
	free(buf);
	uvm_vfree(p);
}
