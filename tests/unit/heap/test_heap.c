/*
 * tests/unit/heap/test_heap.c - thread heaps (lib/heap/heap.c): a thread
 * gets its heap at its first allocation; an exited thread's heap is the
 * next thread's, so threads that come and go use no more heaps than run
 * at once; what an exited thread counted stays counted; areas it
 * allocated and others free later are not lost.
 */
#include "helpers.h"

#include <pthread.h>
#include <stdint.h>

#include "arena.h"
#include "heap.h"
#include "uvmalloc.h"

static struct uvm_stats stats(void)
{
	struct uvm_stats st;

	uvm_stats(&st);
	return st;
}

struct seen {
	struct heap *before, *after;
	void *keep[16];
};

static void *allocate_and_look(void *arg)
{
	struct seen *s = arg;

	s->before = uvm__heap;
	for (int i = 0; i < 16; i++)
		s->keep[i] = uvm_vmalloc((size_t)(i + 1) * 4096);
	s->after = uvm__heap;
	return NULL;
}

static struct seen run_thread(void)
{
	struct seen s = { 0 };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, allocate_and_look, &s), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	return s;
}

static void free_kept(struct seen *s)
{
	for (int i = 0; i < 16; i++)
		uvm_vfree(s->keep[i]);
}

Test(heap, a_thread_gets_its_heap_at_its_first_allocation)
{
	struct seen s;

	cr_assert_not_null(uvm_malloc(10));
	s = run_thread();
	cr_assert_null(s.before, "a thread had a heap before it allocated");
	cr_assert_not_null(s.after);
	cr_assert_neq(s.after, uvm__heap, "two threads share a heap");
	free_kept(&s);
}

/* Threads one after another: the same heap each time, and the heaps' memory does not grow. */
Test(heap, an_exited_threads_heap_is_the_next_threads)
{
	struct seen first, s;
	size_t bytes;

	cr_assert_not_null(uvm_malloc(10));
	first = run_thread();
	free_kept(&first);
	bytes = heap_bytes();
	for (int i = 0; i < 100; i++) {
		s = run_thread();
		cr_assert_eq(s.after, first.after, "thread %d got another heap", i);
		free_kept(&s);
	}
	cr_assert_eq(heap_bytes(), bytes, "heaps grew from %zu to %zu bytes over 100 threads", bytes, heap_bytes());
}

/* An exited thread's counts stay in the totals, and the areas it left live are freed by another thread. */
Test(heap, an_exited_threads_counts_and_areas_are_not_lost)
{
	uint64_t allocs, frees;
	struct seen s;

	cr_assert_not_null(uvm_malloc(10));
	allocs = stats().allocs;
	frees = stats().frees;
	s = run_thread();
	cr_assert_eq(stats().allocs - allocs, 16, "the exited thread's 16 allocations are not counted");
	free_kept(&s);
	cr_assert_eq(stats().frees - frees, 16);
	uvm_purge();
	cr_assert_eq(stats().busy_count - stats().cached_count, stats().slabs, "areas left live or cached after the frees");
	cr_assert_eq(arena_check(), 0);
}
