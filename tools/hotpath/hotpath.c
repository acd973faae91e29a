/*
 * hotpath - a steady loop of allocate-then-free pairs that every allocator
 * serves from its thread cache, for counting instructions per pair under
 * callgrind (tools/hotpath/hotpath.sh).  Nothing else runs in the loop, so
 * the difference of two runs' totals divided by the difference of their
 * loop counts is the cost of one pair, start-up excluded.  It also prints
 * the loop's time per pair in nanoseconds (CLOCK_MONOTONIC), which
 * hotpath.sh takes from runs of its own, outside callgrind: instructions
 * alone miss the stalls of a loop-carried chain through memory (the slab
 * hands' count cost 2x the time at 3 % more instructions).
 *
 *   hotpath uvm PAGES LOOPS     uvm_vmalloc(PAGES pages) + uvm_vfree
 *   hotpath malloc BYTES LOOPS  malloc(BYTES) + free (the allocator LD_PRELOAD picks)
 *   hotpath slab BYTES LOOPS    uvm_malloc(BYTES) + uvm_free
 *   hotpath calloc BYTES LOOPS  calloc(1, BYTES) + free
 *   hotpath aligned BYTES LOOPS aligned_alloc(64, BYTES) + free
 *   hotpath realloc BYTES LOOPS malloc(BYTES), realloc to twice that, free: a triple
 *   hotpath usable BYTES LOOPS  malloc(BYTES), malloc_usable_size of it (Redis's way), free
 *   hotpath new BYTES LOOPS     C++'s operator new(BYTES) + operator delete, the process's
 *                               (hotpath is C: the preloaded allocator's, which has them)
 *   hotpath null BYTES LOOPS    a function that returns a static buffer + one that does nothing:
 *                               the loop's own cost, which hotpath.sh takes off the others
 *
 * The last four reach the allocator through a function of this file's,
 * whose call the counts include (a few instructions).
 * A warm-up pair runs first, so the loop measures hits only.  Prints the
 * nanoseconds per pair of the loop.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uvmalloc.h"

static void *vm_alloc(size_t n) { return uvm_vmalloc(n * 4096); }
static void *calloc_one(size_t n) { return calloc(1, n); }
static void *aligned_64(size_t n) { return aligned_alloc(64, n); }

static void *grown(size_t n)
{
	void *p = malloc(n), *q = p ? realloc(p, 2 * n) : NULL;

	if (p && !q)
		free(p);
	return q;
}

static void *asked(size_t n)
{
	void *p = malloc(n);

	if (p && malloc_usable_size(p) < n) {
		fprintf(stderr, "hotpath: malloc_usable_size says less than was asked\n");
		exit(1);
	}
	return p;
}

static char null_block[64];

static __attribute__((noinline)) void *null_alloc(size_t n)
{
	(void)n;
	return null_block;
}

static __attribute__((noinline)) void null_free(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

/* One allocate, touch and free: false (said) when the allocation failed.  In line: the loop is this and nothing else. */
static inline __attribute__((always_inline)) bool pair(void *(*alloc)(size_t), void (*release)(void *), size_t n)
{
	char *p = alloc(n);

	if (!p) {
		perror("hotpath");
		return false;
	}
	*(volatile char *)p = 1;
	release(p);
	return true;
}

/* The process's operator new and delete (mangled names; no C++ runtime here): false when it has none. */
static bool cxx_new(void *(**alloc)(size_t), void (**release)(void *))
{
	*(void **)alloc = dlsym(RTLD_DEFAULT, "_Znwm");
	*(void **)release = dlsym(RTLD_DEFAULT, "_ZdlPv");
	return *alloc && *release;
}

int main(int argc, char **argv)
{
	void *(*alloc)(size_t) = malloc;
	void (*release)(void *) = free;
	struct timespec t0, t1;
	char *end;
	size_t n;
	long loops;

	if (argc != 4) {
		fprintf(stderr, "usage: hotpath uvm|malloc|slab|calloc|aligned|realloc|usable|new|null SIZE LOOPS\n");
		return 2;
	}
	n = strtoul(argv[2], &end, 10);
	if (*end || !n || (loops = strtol(argv[3], &end, 10)) < 0 || *end) {
		fprintf(stderr, "hotpath: bad SIZE or LOOPS\n");
		return 2;
	}
	if (!strcmp(argv[1], "uvm")) {
		alloc = vm_alloc;
		release = uvm_vfree;
	} else if (!strcmp(argv[1], "null")) {
		alloc = null_alloc;
		release = null_free;
	} else if (!strcmp(argv[1], "slab")) {
		alloc = uvm_malloc;
		release = uvm_free;
	} else if (!strcmp(argv[1], "calloc")) {
		alloc = calloc_one;
	} else if (!strcmp(argv[1], "aligned")) {
		alloc = aligned_64;
	} else if (!strcmp(argv[1], "realloc")) {
		alloc = grown;
	} else if (!strcmp(argv[1], "usable")) {
		alloc = asked;
	} else if (!strcmp(argv[1], "new")) {
		if (!cxx_new(&alloc, &release)) {
			fprintf(stderr, "hotpath: no operator new in this process (preload an allocator that has one)\n");
			return 2;
		}
	} else if (strcmp(argv[1], "malloc")) {
		fprintf(stderr, "hotpath: unknown kind %s\n", argv[1]);
		return 2;
	}
	if (!pair(alloc, release, n)) /* the warm-up: the loop measures hits only */
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < loops; i++)
		if (!pair(alloc, release, n))
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.2f\n", loops ? ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)loops : 0.0);
	return 0;
}
