/*
 * tests/vminfo_target.c - a process for vminfo to read.  Modes:
 *   areas:   allocates areas of known sizes from known functions, frees some,
 *            prints what it holds and its own uvm_stats, then waits for stdin
 *            to close;
 *   hammer:  4 threads allocate and free without pause until stdin closes;
 *   idle:    links uvmalloc but never allocates, waits for stdin to close.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uvmalloc.h"

__attribute__((noinline)) void *alloc_small_records(size_t size)
{
	void *p = uvm_vmalloc(size);

	memset(p, 1, size);
	return p;
}

__attribute__((noinline)) void *alloc_big_table(size_t size)
{
	void *p = uvm_vmalloc(size);

	memset(p, 2, 4096);
	return p;
}

static void wait_for_stdin(void)
{
	char c;

	while (read(0, &c, 1) > 0)
		;
}

static void print_stats(void)
{
	struct uvm_stats st;

	uvm_stats(&st);
	printf("stats busy_bytes=%lu busy_count=%lu cached_bytes=%lu cached_count=%lu lazy_bytes=%lu lazy_count=%lu "
	       "pooled_bytes=%lu pooled_count=%lu free_bytes=%lu free_count=%lu largest_free=%lu purges=%lu "
	       "madvise_calls=%lu mmap_calls=%lu slabs=%lu allocs=%lu frees=%lu\n",
	       (unsigned long)st.busy_bytes, (unsigned long)st.busy_count, (unsigned long)st.cached_bytes,
	       (unsigned long)st.cached_count, (unsigned long)st.lazy_bytes, (unsigned long)st.lazy_count,
	       (unsigned long)st.pooled_bytes, (unsigned long)st.pooled_count, (unsigned long)st.free_bytes,
	       (unsigned long)st.free_count, (unsigned long)st.largest_free, (unsigned long)st.purges,
	       (unsigned long)st.madvise_calls, (unsigned long)st.mmap_calls, (unsigned long)st.slabs,
	       (unsigned long)st.allocs, (unsigned long)st.frees);
}

static void areas(void)
{
	void *small[6], *big[2];

	for (int i = 0; i < 6; i++)
		small[i] = alloc_small_records((size_t)(i + 1) * 4096);
	for (int i = 0; i < 2; i++)
		big[i] = alloc_big_table((size_t)(i + 1) << 20);
	uvm_vfree(small[1]);
	uvm_vfree(small[3]);
	for (int i = 0; i < 6; i++)
		if (i != 1 && i != 3)
			printf("area %p %zu alloc_small_records\n", small[i], (size_t)(i + 1) * 4096);
	for (int i = 0; i < 2; i++)
		printf("area %p %zu alloc_big_table\n", big[i], (size_t)(i + 1) << 20);
	printf("freed %p %zu\nfreed %p %zu\n", small[1], (size_t)2 * 4096, small[3], (size_t)4 * 4096);
	print_stats();
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
}

static atomic_bool stop;

static void *churn(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	void *live[64] = { 0 };

	while (!atomic_load(&stop)) {
		int k = rand_r(&seed) % 64;

		uvm_vfree(live[k]);
		live[k] = uvm_vmalloc((size_t)(rand_r(&seed) % 300 + 1) * 4096);
		if (rand_r(&seed) % 3 == 0) {
			void *m = uvm_malloc((size_t)(rand_r(&seed) % 5000) + 1);
			uvm_free(m);
		}
	}
	for (int k = 0; k < 64; k++)
		uvm_vfree(live[k]);
	return NULL;
}

static void hammer(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churn, (void *)(i + 1));
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "areas";

	if (!strcmp(mode, "hammer"))
		hammer();
	else if (!strcmp(mode, "idle")) {
		printf("ready\n");
		fflush(stdout);
		wait_for_stdin();
	} else
		areas();
	return 0;
}
