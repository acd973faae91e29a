/*
 * tests/vmtrace_target.c - a workload with known counts for the vmtrace
 * test: small objects and areas, some areas kept so that the free tree
 * has holes after a purge, eight of 3 MiB (one huge-page verdict under
 * UVM_THP=auto), then its own uvm_stats as JSON on stdout.
 * Nothing touches the allocator after that (stdio is glibc's here), so
 * the snapshot the library sends at exit must carry the same counters.
 * With --loop SECONDS it first allocates and frees for that long, printing
 * "ready" at the start, so that a tracer can attach to it with -p.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uvmalloc.h"

#define OBJECTS 20000
#define AREAS 200
/* Fresh areas of 3 MiB, a 2 MiB huge body each: UVM_THP=auto times the one that crosses 16 MiB of bodies. */
#define HUGE_AREAS 8

#define FIELDS(X)                                                                                              \
	X(busy_bytes) X(busy_count) X(cached_bytes) X(lazy_bytes) X(pooled_bytes) X(free_bytes) X(free_count) \
	X(largest_free) X(allocs) X(frees) X(cache_hits) X(cache_misses) X(small_allocs) X(small_frees)        \
	X(pool_hits) X(pool_misses) X(purges) X(purged_bytes) X(madvise_calls) X(area_alloc_bytes)             \
	X(area_free_bytes) X(small_alloc_bytes) X(small_free_bytes)
#define PRINT(f) printf("%s\"%s\":%llu", first ? "" : ",", #f, (unsigned long long)st.f), first = 0;

static void loop(double seconds)
{
	struct timespec t0, t;

	printf("ready\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			uvm_free(uvm_malloc(1 + (size_t)i % 500));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	static void *obj[OBJECTS], *area[AREAS];
	struct uvm_stats st;
	struct uvm_frag f;
	int first = 1;

	if (argc == 3 && !strcmp(argv[1], "--loop"))
		loop(atof(argv[2]));
	for (int i = 0; i < OBJECTS; i++)
		obj[i] = uvm_malloc(1 + (size_t)i % 1000);
	for (int i = 0; i < OBJECTS; i++)
		uvm_free(obj[i]);
	for (int i = 0; i < AREAS; i++)
		area[i] = uvm_vmalloc((size_t)(1 + i % 7) * 16 * 4096);
	for (int i = 0; i < HUGE_AREAS; i++) /* kept to the end */
		if (!uvm_vmalloc(3 << 20))
			abort();
	/* Every other area freed and purged: holes between the live ones. */
	for (int i = 0; i < AREAS; i += 2)
		uvm_vfree(area[i]);
	uvm_purge();
	uvm_stats(&st);
	uvm_frag_stats(&f, sizeof(f));
	printf("{\"calls\":%d,", OBJECTS + AREAS + HUGE_AREAS); /* allocation calls, --loop not counted */
	FIELDS(PRINT)
	printf(",\"span\":{\"bytes\":%llu,\"free_bytes\":%llu,\"free_count\":%llu,\"largest_free\":%llu},"
	       "\"slab_free_bytes\":%llu,\"requested_bytes\":%llu,\"handed_bytes\":%llu,\"metadata_bytes\":%llu}\n",
	       (unsigned long long)f.span_bytes, (unsigned long long)f.span_free_bytes,
	       (unsigned long long)f.span_free_count, (unsigned long long)f.span_largest_free,
	       (unsigned long long)f.slab_free_bytes, (unsigned long long)f.requested_bytes,
	       (unsigned long long)f.handed_bytes, (unsigned long long)f.metadata_bytes);
	return 0;
}
