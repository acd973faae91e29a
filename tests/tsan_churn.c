/*
 * tests/tsan_churn.c - the allocator's cross-thread paths under
 * ThreadSanitizer (tests/tsan.sh builds and runs it): two threads make the
 * process's first allocations at once (the set-up), then each round a thread
 * allocates objects and exits (its slabs become orphans), two threads free
 * them from both ends (the last free releases an orphan) while five others
 * swap blocks of random size, slab objects (some aligned) and areas, through
 * shared slots, reallocating some of what they take out (remote frees,
 * adoption, thread-exit drains, purges), and shrinking some areas before
 * they go (their owner's cache keeps the tails unfiled: spans, vnode.h).  At the end the
 * counts must balance and no slab may be left.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_start.h"
#include "uvmalloc.h"

#define ROUNDS 10
#define OBJS 4000
#define SLOTS 4096
#define SWAPS 20000

static _Atomic(void *) slots[SLOTS];
static void *objs[OBJS];
static atomic_int go;

static void *make(void *arg)
{
	for (int i = 0; i < OBJS; i++)
		objs[i] = uvm_malloc(64 + (size_t)(i % 7) * 100);
	return arg;
}

static void wait_go(void)
{
	while (!atomic_load(&go))
		;
}

/* The process's first allocations, on two threads at once: one sets the allocator up while the other waits for it. */
static void *first(void *arg)
{
	wait_go();
	uvm_free(uvm_malloc(64));
	return arg;
}

static void *free_half(void *arg)
{
	int from_end = (int)(intptr_t)arg;

	wait_go();
	for (int k = 0; k < OBJS / 2; k++)
		uvm_free(objs[from_end ? OBJS - 1 - k : k]);
	return NULL;
}

static void *swap(void *arg)
{
	unsigned seed = (unsigned)(intptr_t)arg;

	wait_go();
	for (int i = 0; i < SWAPS; i++) {
		unsigned kind = (unsigned)rand_r(&seed) % 50;
		/* Link classes mostly; the map classes (4-8 KiB, whose free state is in the header) and areas one in 25 each. */
		size_t size = kind > 1 ? 16 + (size_t)(rand_r(&seed) % 2000)
				       : kind ? 4000 + (size_t)(rand_r(&seed) % 4000) : 9000 + (size_t)(rand_r(&seed) % 64000);

		void *p = kind % 5 == 2 ? uvm_aligned_alloc((size_t)32 << rand_r(&seed) % 5, size) : uvm_malloc(size);

		/* An area shrunk by its owner: the tail stays unfiled in its cache while another thread frees the head. */
		if (!kind && size > 20000)
			p = uvm_realloc(p, 17000);
		if (i % 2000 == 1999)
			uvm_purge(); /* claims every heap, spans included */

		/* What another thread made, grown or shrunk here one time in five (realloc's size check reads its slab). */
		p = atomic_exchange(&slots[rand_r(&seed) % SLOTS], p);
		if (p && kind % 5 == 3)
			p = uvm_realloc(p, 16 + (size_t)(rand_r(&seed) % 2000));
		uvm_free(p);
	}
	return NULL;
}

int main(void)
{
	struct uvm_stats st;

	pthread_t setup[2];

	for (int i = 0; i < 2; i++)
		thread_start_or_exit("tsan_churn", &setup[i], first, NULL);
	atomic_store(&go, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(setup[i], NULL);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t[8];

		atomic_store(&go, 0);
		thread_start_or_exit("tsan_churn", &t[0], make, NULL);
		pthread_join(t[0], NULL);
		thread_start_or_exit("tsan_churn", &t[1], free_half, (void *)0);
		thread_start_or_exit("tsan_churn", &t[2], free_half, (void *)1);
		for (int i = 3; i < 8; i++)
			thread_start_or_exit("tsan_churn", &t[i], swap, (void *)(intptr_t)(i + r * 8));
		atomic_store(&go, 1);
		for (int i = 1; i < 8; i++)
			pthread_join(t[i], NULL);
	}
	for (int i = 0; i < SLOTS; i++)
		uvm_free(atomic_load(&slots[i]));
	uvm_stats(&st);
	printf("tsan_churn: small allocs %llu, frees %llu, slabs %llu\n", (unsigned long long)st.small_allocs,
	       (unsigned long long)st.small_frees, (unsigned long long)st.slabs);
	return st.small_allocs != st.small_frees || st.slabs != 0;
}
