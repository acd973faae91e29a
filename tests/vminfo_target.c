/*
 * tests/vminfo_target.c - a process for vminfo to read.  Modes:
 *   areas:   allocates areas of known sizes from known functions (the big
 *            ones a little short of whole pages), frees some (one on a
 *            thread that allocates nothing),
 *            prints what it holds and its own uvm_stats, then waits for stdin
 *            to close;
 *   hammer:  4 threads allocate and free without pause until stdin closes;
 *   grow:    hammer, and a fifth thread adds a region every 150 ms (up to 14)
 *            with areas larger than all regions so far;
 *   idle:    links uvmalloc but never allocates, waits for stdin to close;
 *   many N:  holds N live one-page areas, waits for stdin to close;
 *   holes:   1000 areas of 64 KiB, every other one freed and purged, then 200
 *            KiB blocks that cannot use the holes; prints its span figures;
 *   spans:   six areas shrunk twice by vrealloc, their tails kept in the
 *            thread's cache unfiled (vnode.h); prints its uvm_stats;
 *   slabs:   fills four slabs of 32-byte objects, frees three of every four
 *            objects in each, prints its uvm_frag_stats live bytes, waits;
 *   orphans: a thread allocates ORPHAN_OBJECTS of 96 bytes (two slabs) and
 *            exits, leaving them orphaned; every tenth is then freed here
 *            (home to its orphan, waiting there), and it waits;
 *   huge:    HUGE_AREAS areas of 3 MiB, each written, so that under
 *            UVM_THP=auto the one that crosses 16 MiB of huge bodies has its
 *            first touch timed, and waits;
 *   corrupt: holds areas in the busy, lazy and free structures, then for
 *            each line "c KIND SEED" overwrites one word of its own
 *            allocator state that SEED picks, "r" puts it back; it answers
 *            each with "ready".  KIND: desc (a word of uvm_descriptor),
 *            busy, lazy (of a tree node), free (of a free-list entry),
 *            region, count (of regions), cache (the thread-cache list),
 *            seq (a tree's sequence counter), any (one of these at random),
 *            garbage (64 random bytes over an object of any of these).  Reading must not
 *            change what is read: the process allocates nothing after the
 *            first corruption and leaves with _exit.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "descriptor.h"
#include "thread_start.h"
#include "uvmalloc.h"

extern struct uvm_descriptor uvm_descriptor;

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
	struct uvm_frag f;

	uvm_stats(&st);
	uvm_frag_stats(&f, sizeof(f));
	printf("stats span_bytes=%lu span_free_bytes=%lu span_free_count=%lu span_largest_free=%lu ", (unsigned long)f.span_bytes,
	       (unsigned long)f.span_free_bytes, (unsigned long)f.span_free_count, (unsigned long)f.span_largest_free);
	printf("rounding_bytes=%lu metadata_bytes=%lu ", (unsigned long)f.rounding_bytes, (unsigned long)f.metadata_bytes);
	printf("busy_bytes=%lu busy_count=%lu cached_bytes=%lu cached_count=%lu lazy_bytes=%lu lazy_count=%lu "
	       "pooled_bytes=%lu pooled_count=%lu free_bytes=%lu free_count=%lu largest_free=%lu purges=%lu "
	       "madvise_calls=%lu mmap_calls=%lu slabs=%lu allocs=%lu frees=%lu\n",
	       (unsigned long)st.busy_bytes, (unsigned long)st.busy_count, (unsigned long)st.cached_bytes,
	       (unsigned long)st.cached_count, (unsigned long)st.lazy_bytes, (unsigned long)st.lazy_count,
	       (unsigned long)st.pooled_bytes, (unsigned long)st.pooled_count, (unsigned long)st.free_bytes,
	       (unsigned long)st.free_count, (unsigned long)st.largest_free, (unsigned long)st.purges,
	       (unsigned long)st.madvise_calls, (unsigned long)st.mmap_calls, (unsigned long)st.slabs,
	       (unsigned long)st.allocs, (unsigned long)st.frees);
}

/* A thread that only frees: it never makes a heap, so its frees count in the library's shared counters. */
static void *free_only(void *p)
{
	uvm_vfree(p);
	return NULL;
}

static void areas(void)
{
	void *small[6], *big[2];
	pthread_t t;

	for (int i = 0; i < 6; i++)
		small[i] = alloc_small_records((size_t)(i + 1) * 4096);
	for (int i = 0; i < 2; i++) /* 1000 and 2000 bytes short of whole pages: the live rounding is 3000 */
		big[i] = alloc_big_table(((size_t)(i + 1) << 20) - 1000 * (size_t)(i + 1));
	uvm_vfree(small[1]);
	if (pthread_create(&t, NULL, free_only, small[3]) || pthread_join(t, NULL))
		abort();
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
static atomic_int started;

static void *churn(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	void *live[64] = { 0 };
	int counted = 0;

	while (!atomic_load(&stop)) {
		int k = rand_r(&seed) % 64;

		uvm_vfree(live[k]);
		live[k] = uvm_vmalloc((size_t)(rand_r(&seed) % 300 + 1) * 4096);
		if (!counted) {
			atomic_fetch_add(&started, 1);
			counted = 1;
		}
		if (rand_r(&seed) % 3 == 0) {
			void *m = uvm_malloc((size_t)(rand_r(&seed) % 5000) + 1);
			uvm_free(m);
		}
	}
	for (int k = 0; k < 64; k++)
		uvm_vfree(live[k]);
	return NULL;
}

/*
 * An area as large as all regions together, every 50 ms, until there are
 * GROW_REGIONS regions: none fits in the regions there are, so each adds
 * one (untouched, so nothing but address space and page-map reservations).
 */
#define GROW_REGIONS 14

static void *grow(void *arg)
{
	struct uvm_stats st;

	(void)arg;
	do {
		/*
		 * Slow enough for several whole reads while it grows: a read of
		 * the hammered target takes 100-300 ms on 2 CPUs, and at 50 ms a
		 * region a loaded CI machine read it only twice before it was done.
		 */
		usleep(150000);
		uvm_stats(&st);
	} while (!atomic_load(&stop) && st.regions < GROW_REGIONS && uvm_vmalloc(st.reserved_bytes));
	return NULL;
}

static void hammer(bool growing)
{
	pthread_t t[4], g;

	if (growing)
		thread_start_or_exit("vminfo_target", &g, grow, NULL);
	for (long i = 0; i < 4; i++)
		thread_start_or_exit("vminfo_target", &t[i], churn, (void *)(i + 1));
	/* Ready once every thread has allocated: before that vminfo may rightly say "not allocated yet". */
	while (atomic_load(&started) < 4)
		sched_yield();
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (growing)
		pthread_join(g, NULL);
}

static void many(long n)
{
	void **p = calloc((size_t)n, sizeof(*p));

	for (long i = 0; i < n; i++)
		if (!(p[i] = uvm_vmalloc(4096)))
			abort();
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
}

/* ------------------------------------------------------------ corrupt */

#define WORD(addr) (*(uint64_t *)(uintptr_t)(addr))
#define MAX_PICKS 4096

/* Addresses (of objects) of a tree's nodes, in preorder, from its root link. */
static size_t tree_nodes(uint64_t link, uint64_t *out, size_t n)
{
	const struct uvm_descriptor *d = &uvm_descriptor;

	if (!link || n >= MAX_PICKS)
		return n;
	out[n++] = link - d->va_rb;
	n = tree_nodes(WORD(link - d->va_rb + d->va_left), out, n);
	return tree_nodes(WORD(link - d->va_rb + d->va_right), out, n);
}

/* The objects of a structure of the kind named, and which of their words a reader uses. */
static size_t objects(const char *kind, uint64_t *obj, uint64_t *words, size_t *nwords)
{
	const struct uvm_descriptor *d = &uvm_descriptor;
	uint64_t node = d->nodes, space = d->spaces, head;
	size_t n = 0;

	*nwords = 0;
	if (!strcmp(kind, "desc")) {
		obj[0] = (uintptr_t)d;
		for (uint64_t off = 8; off < sizeof(*d); off += 8)
			words[(*nwords)++] = off;
		return 1;
	}
	if (!strcmp(kind, "busy") || !strcmp(kind, "lazy")) {
		uint64_t va_words[] = { d->va_start, d->va_end, d->va_left, d->va_right, d->va_flags, d->va_caller };

		memcpy(words, va_words, sizeof(va_words));
		*nwords = 6;
		return tree_nodes(WORD(node + (kind[0] == 'b' ? d->busy_root : d->lazy_root)), obj, 0);
	}
	if (!strcmp(kind, "free")) {
		head = space + d->space_list;
		words[0] = d->va_start, words[1] = d->va_end, words[2] = d->va_list;
		*nwords = 3;
		for (uint64_t l = WORD(head); l != head && n < MAX_PICKS; l = WORD(l))
			obj[n++] = l - d->va_list;
		return n;
	}
	if (!strcmp(kind, "region")) {
		words[0] = d->region_base, words[1] = d->region_end, words[2] = d->region_committed, words[3] = d->region_nid;
		*nwords = 4;
		for (int i = 0; i < *(int *)(uintptr_t)d->nr_regions; i++)
			obj[n++] = d->regions + (uint64_t)i * d->region_size;
		return n;
	}
	if (!strcmp(kind, "count")) {
		obj[0] = d->nr_regions;
		words[0] = 0;
		*nwords = 1;
		return 1;
	}
	if (!strcmp(kind, "cache")) {
		words[0] = 0;
		*nwords = 1;
		for (uint64_t l = WORD(d->pcp_live); l != d->pcp_live && n < MAX_PICKS; l = WORD(l))
			obj[n++] = l;
		return n;
	}
	if (!strcmp(kind, "seq")) {
		words[0] = d->busy_seq, words[1] = d->lazy_seq;
		*nwords = 2;
		obj[0] = node;
		return 1;
	}
	return 0;
}

/* A value meant to break a reader: limits, bit flips, a neighbour's address, the object's own. */
static uint64_t nasty(unsigned *seed, uint64_t old, uint64_t self, const uint64_t *obj, size_t n)
{
	uint64_t r = (uint64_t)rand_r(seed) << 33 ^ (uint64_t)rand_r(seed) << 11 ^ (uint64_t)rand_r(seed);

	switch (rand_r(seed) % 10) {
	case 0: return 0;
	case 1: return ~0ull;
	case 2: return 1;
	case 3: return old ^ (1ull << (r % 64));
	case 4: return old + 4096;
	case 5: return old - 4096;
	case 6: return obj[r % n] + uvm_descriptor.va_rb;
	case 7: return self + (r % 64) * 8;
	case 8: return old * 4097;
	default: return r;
	}
}

#define GARBAGE 64 /* bytes of random garbage */

static uint64_t saved_addr;
static unsigned char saved[GARBAGE];
static size_t saved_len;

static void corrupt_one(const char *kind, unsigned seed)
{
	static const char *kinds[] = { "desc", "busy", "lazy", "free", "region", "count", "cache", "seq" };
	static uint64_t obj[MAX_PICKS + 1];
	uint64_t words[64], addr, o;
	int garbage = !strcmp(kind, "garbage");
	size_t nwords, n;

	if (garbage || !strcmp(kind, "any"))
		kind = kinds[rand_r(&seed) % 8];
	n = objects(kind, obj, words, &nwords);
	if (!n)
		return;
	o = obj[rand_r(&seed) % n];
	addr = garbage ? o + (!strcmp(kind, "desc") ? 8 : 0) : o + words[rand_r(&seed) % nwords];
	saved_addr = addr;
	saved_len = garbage ? GARBAGE : 8;
	memcpy(saved, (void *)(uintptr_t)addr, saved_len);
	if (garbage)
		for (size_t i = 0; i < GARBAGE; i++)
			((unsigned char *)(uintptr_t)addr)[i] = (unsigned char)rand_r(&seed);
	else if (!strcmp(kind, "seq"))
		WORD(addr) |= 1; /* a writer that never finishes */
	else
		WORD(addr) = nasty(&seed, WORD(addr), addr, obj, n);
}

static void corrupt(void)
{
	void *keep[200];
	char line[128], kind[16];
	unsigned seed;

	/* Live areas in the busy tree, freed ones in the lazy tree, and a free list of several ranges. */
	for (int i = 0; i < 200; i++)
		keep[i] = alloc_small_records((size_t)(i % 7 + 1) * 4096);
	for (int i = 0; i < 200; i += 3)
		uvm_vfree(keep[i]);
	uvm_purge();
	for (int i = 1; i < 200; i += 3)
		uvm_vfree(keep[i]);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "c %15s %u", kind, &seed) == 2)
			corrupt_one(kind, seed);
		else if (line[0] == 'r' && saved_addr)
			memcpy((void *)(uintptr_t)saved_addr, saved, saved_len);
		printf("ready\n");
		fflush(stdout);
	}
	_exit(0);
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return (x > y) - (x < y);
}

static void holes(void)
{
	static void *p[1000];
	struct uvm_frag f;

	for (int i = 0; i < 1000; i++)
		p[i] = uvm_vmalloc(64 << 10);
	for (int i = 1; i < 1000; i += 2)
		uvm_vfree(p[i]);
	uvm_purge();
	for (int i = 0; i < 20; i++)
		if (!uvm_vmalloc(200 << 10))
			abort();
	uvm_frag_stats(&f, sizeof(f));
	printf("frag span_free_count=%lu span_largest_free=%lu\n", (unsigned long)f.span_free_count,
	       (unsigned long)f.span_largest_free);
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
}

/*
 * Six areas of 64 pages shrunk to 32 and then to 4: each leaves two tails
 * cached unfiled in its span (vnode.h).  Six: the next area's miss then
 * finds a cache of few areas a size, which it leaves as it is (ten made it
 * a fragmented one, whose miss joins neighbours: pcp.c's defragment).
 */
static void spans(void)
{
	for (int i = 0; i < 6; i++) {
		void *p = uvm_vmalloc(64 << 12);

		p = uvm_vrealloc(p, 32 << 12);
		p = uvm_vrealloc(p, 4 << 12);
		printf("area %p %d alloc\n", p, 4 << 12);
	}
	print_stats();
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
}

#define PER_SLAB ((64u << 10) / 32) /* 32-byte objects fill a slab: its header is in the region's chunk table (slab.h) */

static void quarter_full_slabs(void)
{
	static uintptr_t p[4 * (64 << 10) / 32];
	struct uvm_frag f;
	unsigned n = 0, total = 0, slabs = 0, kept = 0;
	uintptr_t last = 0;

	/* Four whole slabs, one after the other (a fresh process), then every fourth object of each kept, its first among them. */
	while (slabs < 4 || n < total) {
		p[n] = (uintptr_t)uvm_malloc(32);
		if ((p[n] & ~(uintptr_t)0xffff) != last) {
			last = p[n] & ~(uintptr_t)0xffff;
			slabs++;
			total += PER_SLAB;
		}
		n++;
	}
	qsort(p, n, sizeof(p[0]), by_address);
	for (unsigned i = 0, j = 0; i < n; i++, j++) {
		if (i && (p[i] ^ p[i - 1]) > 0xffff)
			j = 0;
		if (j % 4)
			uvm_free((void *)p[i]);
		else
			kept++;
	}
	uvm_frag_stats(&f, sizeof(f));
	printf("frag live_bytes=%lu slab_free_bytes=%lu objects=%u kept=%u\n", (unsigned long)f.live_bytes,
	       (unsigned long)f.slab_free_bytes, n, kept);
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
}

#define ORPHAN_OBJECTS 1000 /* of 96 bytes: a slab holds 682 */

static void *allocate_and_exit(void *arg)
{
	void **p = arg;

	for (unsigned i = 0; i < ORPHAN_OBJECTS; i++) {
		p[i] = uvm_malloc(96);
		memset(p[i], 1, 96);
	}
	return NULL;
}

static void orphans(void)
{
	static void *p[ORPHAN_OBJECTS];
	unsigned freed = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, allocate_and_exit, p) || pthread_join(t, NULL))
		abort();
	for (unsigned i = 0; i < ORPHAN_OBJECTS; i += 10, freed++)
		uvm_free(p[i]);
	printf("orphans objects=%u freed=%u\n", ORPHAN_OBJECTS, freed);
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
}

enum { HUGE_AREAS = 8 };

static void huge_areas(void)
{
	static char *p[HUGE_AREAS];

	for (int i = 0; i < HUGE_AREAS; i++) {
		if (!(p[i] = uvm_vmalloc(3 << 20)))
			abort();
		memset(p[i], 1, 3 << 20);
	}
	printf("huge areas=%d\n", HUGE_AREAS);
	printf("ready\n");
	fflush(stdout);
	wait_for_stdin();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "areas";

	if (!strcmp(mode, "hammer") || !strcmp(mode, "grow"))
		hammer(!strcmp(mode, "grow"));
	else if (!strcmp(mode, "many") && argc > 2)
		many(atol(argv[2]));
	else if (!strcmp(mode, "corrupt"))
		corrupt();
	else if (!strcmp(mode, "slabs"))
		quarter_full_slabs();
	else if (!strcmp(mode, "orphans"))
		orphans();
	else if (!strcmp(mode, "holes"))
		holes();
	else if (!strcmp(mode, "huge"))
		huge_areas();
	else if (!strcmp(mode, "spans"))
		spans();
	else if (!strcmp(mode, "idle")) {
		printf("ready\n");
		fflush(stdout);
		wait_for_stdin();
	} else
		areas();
	return 0;
}
