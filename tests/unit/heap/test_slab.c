/*
 * tests/unit/heap/test_slab.c - small objects (lib/heap/slab.c): size classes and
 * alignment, reuse, frees from other threads, empty slabs going back,
 * orphaned slabs adopted after a thread exits, bad and double frees, the
 * free's object test, and the headers: their fast-owner words, and their
 * place in the chunk tables.
 */
#include "helpers.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "area.h"
#include "arena.h"
#include "heap.h"
#include "pcp.h"
#include "purge.h"
#include "slab.h"
#include "uvmalloc.h"

static struct uvm_stats stats(void)
{
	struct uvm_stats st;

	uvm_stats(&st);
	return st;
}

/*
 * Every size gets a block at least that large, 16-byte aligned, from a
 * class at most 25% (or 16 B) larger: every class up to 8 KiB, for
 * UVM_SLAB_MAX may raise the default (the largest class under a page), and
 * above it the sizes slabs serve (9, 10 and 14 KiB: slab_serves).
 */
Test(slab, classes_fit_sizes)
{
	uvm_free(uvm_malloc(1)); /* slab_max() is read at set-up */
	cr_assert_eq(slab_max(), 3584);
	for (size_t size = 1; size <= SLAB_OBJ_MAX; size++) {
		if (size > 8192 && !slab_serves(size, 16))
			continue;
		void *p = slab_alloc(size, 16);
		size_t got = uvm_malloc_usable_size(p);

		cr_assert_eq((uintptr_t)p % 16, 0, "malloc(%zu) = %p", size, p);
		cr_assert_geq(got, size);
		cr_assert_leq(got, size <= 128 ? size + 15 : size + size / 4, "malloc(%zu) got a %zu-byte class", size, got);
		cr_assert_eq(slab_check(p, &got), SLAB_LIVE);
		memset(p, 0xab, size);
		uvm_free(p);
	}
	void *big = uvm_malloc(slab_max() + 1);
	size_t n;
	cr_assert_eq(slab_check(big, &n), SLAB_NONE, "above UVM_SLAB_MAX is an area: no free state inside it");
	cr_assert_eq((uintptr_t)big % 4096, 0);
	uvm_free(big);
}

/* A power of two and a small header, from 256 on, takes the class an eighth above it, not the next quarter. */
Test(slab, a_power_of_two_and_a_header_takes_the_class_an_eighth_above)
{
	static const size_t sizes[][2] = { { 264, 288 }, { 520, 576 }, { 1032, 1152 }, { 2064, 2304 }, { 4368, 4608 },
					   { 1153, 1280 }, { 4609, 5120 } };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = uvm_malloc(sizes[i][0]);

		cr_assert_eq(uvm_malloc_usable_size(p), sizes[i][1], "malloc(%zu) took a %zu-byte class, not %zu", sizes[i][0],
			     uvm_malloc_usable_size(p), sizes[i][1]);
		uvm_free(p);
	}
	cr_assert(!slab_map_class(SLAB_MAP_FIRST - 1) && slab_map_class(uvm__slab_class[4096 / 16 - 1]) &&
			  uvm__slab_class[4096 / 16 - 1] == SLAB_MAP_FIRST,
		  "the map classes start at 4 KiB");
}

/* Whether p is a slab object whose usable size is want. */
static bool slab_object_of(void *p, size_t want)
{
	size_t n = 0;

	return slab_check(p, &n) == SLAB_LIVE && n == want;
}

/*
 * Above UVM_SLAB_MAX, a block comes from a slab where its class is smaller
 * than its size rounded up to pages (4097..7168 B: 4.5, 5, 6 and 7 KiB;
 * 8193..10240: 9 and 10; 12289..14336: 14), and is an area where the pages
 * fit it as well (3585..4096, 7169..8192, 10241..12288, 14337 B and up);
 * the same through every entry (malloc, calloc, aligned_alloc, realloc).
 */
Test(slab, sizes_above_a_page_take_a_class_where_it_wastes_less)
{
	static const struct {
		size_t size, slab; /* the class, or 0: an area */
	} want[] = { { 3585, 0 }, { 4096, 0 }, { 4097, 4608 }, { 4368, 4608 }, { 4609, 5120 }, { 5121, 6144 },
		     { 6145, 7168 }, { 7168, 7168 }, { 7169, 0 }, { 8192, 0 }, { 8193, 9216 }, { 9217, 10240 },
		     { 10240, 10240 }, { 10241, 0 }, { 12288, 0 }, { 12289, 14336 }, { 14336, 14336 }, { 14337, 0 },
		     { 16384, 0 } };

	/* malloc's test of those sizes (slab_fills) says what the rule (slab_serves) says, at every size. */
	uvm_free(uvm_malloc(1)); /* slab_max() is read at set-up */
	for (size_t size = 3585; size <= SLAB_OBJ_MAX; size++)
		cr_assert_eq(slab_fills(size), size > 4096 && slab_serves(size, 16), "slab_fills(%zu) disagrees with slab_serves", size);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t size = want[i].size;
		void *p[4] = { uvm_malloc(size), uvm_calloc(1, size), uvm_aligned_alloc(64, size), uvm_realloc(uvm_malloc(16), size) };

		for (int k = 0; k < 4; k++) {
			size_t n = 0;

			cr_assert_not_null(p[k]);
			if (want[i].slab)
				cr_assert(slab_object_of(p[k], want[i].slab), "entry %d: %zu bytes are not a %zu-byte slab object", k, size,
					  want[i].slab);
			else
				cr_assert(slab_check(p[k], &n) == SLAB_NONE && (uintptr_t)p[k] % 4096 == 0, "entry %d: %zu bytes are not an area",
					  k, size);
			memset(p[k], 0x5a, size);
		}
		for (int k = 0; k < 4; k++)
			uvm_free(p[k]);
	}
}

/* UVM_SLAB_MAX=0: no slabs at all, above a page either. */
static void slabs_off(void) { setenv("UVM_SLAB_MAX", "0", 1); }

Test(slab, no_slab_above_a_page_when_slabs_are_off, .init = slabs_off)
{
	void *p = uvm_malloc(5000), *q = uvm_aligned_alloc(64, 6000);
	size_t n;

	cr_assert(slab_check(p, &n) == SLAB_NONE && (uintptr_t)p % 4096 == 0, "5000 bytes with slabs off are not an area");
	cr_assert(slab_check(q, &n) == SLAB_NONE && (uintptr_t)q % 4096 == 0, "6000 bytes with slabs off are not an area");
	uvm_free(p);
	uvm_free(q);
}

/* The smallest class of at least size bytes that is a multiple of align, or 0. */
static size_t aligned_class(size_t size, size_t align)
{
	for (unsigned c = 0; c < SLAB_CLASSES; c++)
		if (uvm__slab_class_size[c] >= size && !(uvm__slab_class_size[c] % align))
			return uvm__slab_class_size[c];
	return 0;
}

/*
 * Alignments up to a page come from slabs (the smallest class whose size is
 * a multiple of the alignment, through malloc's hit or its slow way alike),
 * not areas.
 */
Test(slab, aligned_objects)
{
	for (size_t align = 16; align <= 4096; align <<= 1)
		for (size_t size = 1; size < 3000; size += 37) {
			void *p = uvm_aligned_alloc(align, size), *q = uvm_aligned_alloc(align, size);
			size_t want = aligned_class(size, align);

			cr_assert_eq((uintptr_t)p % align, 0, "aligned_alloc(%zu, %zu) = %p", align, size, p);
			cr_assert_eq((uintptr_t)q % align, 0, "aligned_alloc(%zu, %zu) = %p", align, size, q);
			if (want && want <= slab_max())
				cr_assert_eq(uvm_malloc_usable_size(q), want, "aligned_alloc(%zu, %zu) took %zu bytes, not %zu", align,
					     size, uvm_malloc_usable_size(q), want);
			if (align <= 2048 && size <= 2048)
				cr_assert_lt(uvm_malloc_usable_size(p), 4096, "aligned_alloc(%zu, %zu) is not a slab object", align, size);
			memset(p, 1, size);
			memset(q, 2, size);
			cr_assert_eq(((unsigned char *)p)[size - 1], 1);
			uvm_free(p);
			uvm_free(q);
		}
}

/*
 * Above a page, every alignment up to a page: a slab object of the smallest
 * class that is a multiple of it where slabs serve the size so aligned,
 * else an area; the class walk stays inside the table, whose last class is
 * a page multiple (12 KiB aligned to 4 KiB once walked past it).
 */
Test(slab, aligned_sizes_above_a_page)
{
	for (size_t align = 16; align <= 4096; align <<= 1)
		for (size_t size = 4000; size <= SLAB_OBJ_MAX + 1024; size += 509) {
			void *p = uvm_aligned_alloc(align, size);
			size_t n = 0;

			cr_assert_not_null(p);
			cr_assert_eq((uintptr_t)p % align, 0, "aligned_alloc(%zu, %zu) = %p", align, size, p);
			if (slab_serves_aligned(size, align))
				cr_assert(slab_object_of(p, aligned_class(size, align)), "aligned_alloc(%zu, %zu) is not a %zu-byte object",
					  align, size, aligned_class(size, align));
			else
				cr_assert(slab_check(p, &n) == SLAB_NONE && (uintptr_t)p % 4096 == 0,
					  "aligned_alloc(%zu, %zu) is not an area", align, size);
			memset(p, 3, size);
			uvm_free(p);
		}
}

/* The owner reuses its own frees first (LIFO), with no new slab. */
Test(slab, owner_reuses_its_frees)
{
	void *a = uvm_malloc(40), *b = uvm_malloc(40);
	uint64_t slabs = stats().slabs;

	uvm_free(a);
	uvm_free(b);
	cr_assert_eq(uvm_malloc(40), b);
	cr_assert_eq(uvm_malloc(40), a);
	cr_assert_eq(stats().slabs, slabs);
}

/*
 * A class's hand keeps at most 64 KiB of objects (and at least 2, at most
 * SLAB_MAG): past that a free goes onto its slab's list.  The frees run
 * last to first, so that the current slab's come first: a class of 1 KiB
 * and up keeps a whole slab's worth in hand, so the first slab is full,
 * and its first free moves it back to the partial list and onto that list.
 */
Test(slab, a_hand_keeps_at_most_64_kib_of_a_class)
{
	static const size_t sizes[] = { 64, 1000, 3500 };
	static const unsigned kept[] = { SLAB_MAG, 64, 18 }; /* classes of 64, 1024 and 3584 B */

	for (unsigned k = 0; k < 3; k++) {
		unsigned n = kept[k] + 4, c;
		void *p[SLAB_MAG + 4], *hottest;

		for (unsigned i = 0; i < n; i++) {
			p[i] = uvm_malloc(sizes[k]);
			memset(p[i], 1, sizes[k]);
		}
		c = uvm__slab_class[(sizes[k] - 1) >> 4]; /* the table is filled at set-up, by the first malloc */
		for (unsigned i = n; i--;)
			uvm_free(p[i]);
		cr_assert_eq(slab_hand_held(&uvm__heap->slab, c), kept[k], "class of %zu B: %u in hand", sizes[k],
			     slab_hand_held(&uvm__heap->slab, c));
		/* The next malloc takes the hand's last back, the hottest. */
		hottest = uvm__heap->slab.mag[c][kept[k] - 1];
		p[0] = uvm_malloc(sizes[k]);
		cr_assert_eq(p[0], hottest, "class of %zu B: %p, not the hand's last %p", sizes[k], p[0], hottest);
		uvm_free(p[0]);
	}
}

/*
 * The hand of a class the thread stopped allocating goes back onto its
 * slabs' lists at the third look of hand_gc's rounds of refills over the
 * classes, so that its slabs can empty, and its current slab, emptied, goes
 * back to the area caches; a class still allocating keeps its hand and its
 * slab, and the idle one refills at its next allocation.
 */
Test(slab, an_idle_class_hand_goes_back_to_its_slabs)
{
	enum { IDLE_N = SLAB_MAG + 24, BIG = 3500, REFILLS = 4 * SLAB_CLASSES, PER_SLAB = (64 << 10) / 3584 };
	static void *idle[IDLE_N], *big[REFILLS * PER_SLAB];
	unsigned ci, cb;
	void *busy;

	for (int i = 0; i < IDLE_N; i++)
		idle[i] = uvm_malloc(200);
	for (int i = 0; i < IDLE_N; i++)
		uvm_free(idle[i]);
	ci = uvm__slab_class[(200 - 1) >> 4];
	cb = uvm__slab_class[(64 - 1) >> 4];
	busy = uvm_malloc(64);
	uvm_free(busy);
	cr_assert_eq(slab_hand_held(&uvm__heap->slab, ci), SLAB_MAG);
	for (int i = 0; i < REFILLS * PER_SLAB; i++) { /* a fresh slab every PER_SLAB: a refill each */
		big[i] = uvm_malloc(BIG);
		if (i % PER_SLAB == 0)
			uvm_free(uvm_malloc(64)); /* the 64 B class allocates between looks: its hand stays */
	}
	cr_assert_eq(slab_hand_held(&uvm__heap->slab, ci), 0, "an idle class still holds %u in hand",
		     slab_hand_held(&uvm__heap->slab, ci));
	cr_assert_eq(slab_hand_held(&uvm__heap->slab, cb), 1);
	cr_assert_null(uvm__heap->slab.cur[ci], "an idle class kept its empty slab");
	cr_assert_not_null(uvm__heap->slab.cur[cb]);
	for (int i = 0; i < REFILLS * PER_SLAB; i++)
		uvm_free(big[i]);
	idle[0] = uvm_malloc(200);
	cr_assert_not_null(idle[0]);
	cr_assert_not_null(uvm__heap->slab.cur[ci]);
	memset(idle[0], 1, 200);
	uvm_free(idle[0]);
}

/* A slab whose objects are all freed goes back to the area caches; live objects keep theirs. */
Test(slab, empty_slabs_are_released)
{
	enum { N = 20000 };
	static void *p[N];
	uint64_t before = stats().slabs;

	for (int i = 0; i < N; i++)
		p[i] = uvm_malloc(100);
	cr_assert_geq(stats().slabs, before + N * 112 / (64 << 10));
	for (int i = 0; i < N; i++)
		uvm_free(p[i]);
	/* Left: the current slab, and the first, whose first SLAB_MAG freed objects wait in the hand (slab.h). */
	cr_assert_leq(stats().slabs, before + 2, "%lu slabs left of %lu", (unsigned long)stats().slabs,
		      (unsigned long)before);
	cr_assert_eq(stats().small_allocs - stats().small_frees, 0);
}

/* Distinct pages of p[0..n) (in address order, as a fresh slab carves them). */
static long pages_of(char **p, int n)
{
	long pages = 0;

	for (int i = 0; i < n; i++)
		pages += i == 0 || (uintptr_t)p[i] >> 12 != (uintptr_t)p[i - 1] >> 12;
	return pages;
}

enum { FRESH_N = 256 }; /* objects of 1 KiB: 64 pages, four fresh slabs */

/* Page faults of FRESH_N fresh objects into p, malloced, asked their size if ask, then written. */
static long fresh_faults(char **p, bool ask)
{
	struct rusage before, after;

	getrusage(RUSAGE_THREAD, &before);
	for (int i = 0; i < FRESH_N; i++) {
		p[i] = uvm_malloc(1024);
		if (ask)
			cr_assert_geq(uvm_malloc_usable_size(p[i]), 1024);
		memset(p[i], 0x5a, 1024);
	}
	getrusage(RUSAGE_THREAD, &after);
	return after.ru_minflt - before.ru_minflt;
}

/*
 * A fresh object's page faults once, when malloc carves it (slab_bump
 * writes its free mark): a malloc_usable_size before the program's first
 * write (Redis asks after every malloc) does not map the zero page for that
 * write to fault the page again, and freeing objects the program never
 * wrote faults nothing.
 */
Test(slab, a_fresh_objects_page_faults_once)
{
	static char *p[FRESH_N], *q[FRESH_N], *r[FRESH_N];
	long plain = fresh_faults(p, false), asked = fresh_faults(q, true), pages = pages_of(q, FRESH_N), faults;
	struct rusage before, after;

	cr_assert_geq(plain, pages / 2, "the objects' pages were not fresh: %ld faults for %ld pages", plain, pages);
	/* A page each more with the read first (64); a few allow a sanitizer's shadow pages. */
	cr_assert_leq(asked, plain + pages / 4, "%ld faults for %ld fresh pages asked their size, %ld not asked", asked,
		      pages, plain);
	for (int i = 0; i < FRESH_N; i++)
		r[i] = uvm_malloc(1024);
	getrusage(RUSAGE_THREAD, &before);
	for (int i = 0; i < FRESH_N; i++)
		uvm_free(r[i]);
	getrusage(RUSAGE_THREAD, &after);
	faults = after.ru_minflt - before.ru_minflt;
	cr_assert_leq(faults, pages_of(r, FRESH_N) / 4, "%ld faults freeing objects never written", faults);
	for (int i = 0; i < FRESH_N; i++) {
		uvm_free(p[i]);
		uvm_free(q[i]);
	}
}

/* The map classes are slabs' only with UVM_SLAB_MAX raised to 8K (slab_map_class). */
static void map_classes_on(void) { setenv("UVM_SLAB_MAX", "8192", 1); }

/*
 * The classes of a page and more keep their free state in the header
 * (slab_map_class): freeing objects the program never wrote faults in
 * only those the hand keeps (a slab's worth, whose free marks are written:
 * their pages twice, the mark's read and its write), and the owner gets
 * them back, the hand's hottest first, then each slab's lowest.
 */
Test(slab, map_classes_never_write_freed_objects, .init = map_classes_on)
{
	enum { N = 64 };
	static char *p[N];
	unsigned char vec[2];
	struct rusage before, after;
	struct slab_heap *h;
	unsigned c, room;

	for (int i = 0; i < N; i++) {
		p[i] = uvm_malloc(8000);
		cr_assert_eq(slab_check(p[i], &(size_t){ 0 }), SLAB_LIVE, "8000 bytes are a slab object");
	}
	h = &uvm__heap->slab;
	c = uvm__slab_class[(8000 - 1) >> 4];
	room = (unsigned)(h->hand_end[c] - h->mag[c]);
	cr_assert_lt(room, N / 2);
	getrusage(RUSAGE_THREAD, &before);
	for (int i = 0; i < N; i++)
		uvm_free(p[i]);
	getrusage(RUSAGE_THREAD, &after);
	cr_assert_leq(after.ru_minflt - before.ru_minflt, 2 * room + 4, "%ld faults freeing %d never-written objects",
		      after.ru_minflt - before.ru_minflt, N);
	for (int i = (int)room + 1; i < N; i++) { /* the hand's slab stays, the others were released */
		cr_assert_eq(mincore((void *)((uintptr_t)p[i] & ~(uintptr_t)4095), 8192, vec), 0);
		cr_assert_eq((vec[0] | vec[1]) & 1, 0, "the free of %p wrote into it", (void *)p[i]);
	}
	/* The first frees went into the hand, the rest into the maps. */
	char *q[N];

	cr_assert_eq(slab_hand_held(h, c), room);
	for (unsigned i = 0; i < room + 8; i++)
		q[i] = uvm_malloc(8000);
	for (unsigned i = 0; i < room; i++)
		cr_assert_eq(q[i], p[room - 1 - i], "the hand's hottest first");
	for (unsigned i = room + 1; i < room + 8; i++)
		cr_assert_gt((uintptr_t)q[i], (uintptr_t)q[i - 1], "then a slab's lowest free object first");
	for (unsigned i = 0; i < room + 8; i++)
		uvm_free(q[i]);
}

/* Whether none of [p, p + len) (whole pages) is resident. */
static bool gone(const void *p, size_t len)
{
	unsigned char vec[4];

	cr_assert_leq(len, sizeof(vec) * 4096);
	cr_assert_eq(mincore((void *)p, len, vec), 0);
	for (size_t i = 0; i < len / 4096; i++)
		if (vec[i] & 1)
			return false;
	return true;
}

static bool holds(const char *p, size_t len, char c)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != c)
			return false;
	return true;
}

/* uvm_purge (malloc_trim) gives back the pages of the caller's free map-class objects, while their slabs live. */
Test(slab, purge_gives_back_free_pages_of_live_slabs, .init = map_classes_on)
{
	enum { N = 32 };
	static char *p[N];

	for (int i = 0; i < N; i++)
		memset(p[i] = uvm_malloc(8192), i + 1, 8192);
	for (int i = 1; i < N; i += 2)
		uvm_free(p[i]);
	cr_assert_not(gone(p[1], 8192), "written, freed: still resident before the purge");
	uvm_purge();
	for (int i = 0; i < N; i++) {
		if (i % 2) {
			cr_assert(gone(p[i], 8192), "the free object %p kept its pages", (void *)p[i]);
		} else {
			cr_assert(holds(p[i], 8192, (char)(i + 1)), "the live object %p changed", (void *)p[i]);
			cr_assert_not(gone(p[i], 8192));
		}
	}
	for (int i = 0; i < N; i += 2)
		uvm_free(p[i]);
}

static char *left[32];

/* The objects keep_two_a_slab leaves live: two of each slab's eight. */
static bool left_live(int i) { return i % 8 < 2; }

/* Allocates and writes 32 objects of 8 KiB (four slabs), frees all but two of each slab, and exits. */
static void *keep_two_a_slab(void *arg)
{
	(void)arg;
	for (int i = 0; i < 32; i++)
		memset(left[i] = uvm_malloc(8192), i + 1, 8192);
	for (int i = 0; i < 32; i++)
		if (!left_live(i))
			uvm_free(left[i]);
	return NULL;
}

/* Whether the free objects of keep_two_a_slab's slabs are all gone (or all still resident), and its live ones intact (but skip). */
static void check_left(bool freed_gone, int skip)
{
	for (int i = 0; i < 32; i++) {
		if (i == skip)
			continue;
		if (!left_live(i))
			cr_assert_eq(gone(left[i], 8192), freed_gone, "the free object %p of an orphan %s its pages", (void *)left[i],
				     freed_gone ? "kept" : "lost");
		else
			cr_assert(holds(left[i], 8192, (char)(i + 1)), "the live object %p changed", (void *)left[i]);
	}
}

static void orphan_two_a_slab(void)
{
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, keep_two_a_slab, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
}

static void free_left(void)
{
	for (int i = 0; i < 32; i++)
		if (left_live(i) && left[i])
			uvm_free(left[i]);
}

/*
 * An exited thread's orphans keep their free objects' pages for the thread
 * that adopts them, until they have waited out a whole decay period: the
 * first decay ages them, the second gives their free pages back.
 */
Test(slab, orphans_free_pages_go_once_they_wait_out_a_decay, .init = map_classes_on)
{
	orphan_two_a_slab();
	check_left(false, -1);
	pcp_decay();
	check_left(false, -1);
	pcp_decay();
	check_left(true, -1);
	free_left();
}

/* uvm_purge (malloc_trim) gives back the orphans' free pages at once, other threads' frees into them included. */
Test(slab, purge_gives_back_free_pages_of_orphans, .init = map_classes_on)
{
	orphan_two_a_slab();
	uvm_free(left[1]); /* a remote free into an orphan: its bit, not its map */
	cr_assert_not(gone(left[1], 8192));
	uvm_purge();
	cr_assert(gone(left[1], 8192), "an orphan's object freed by another thread kept its pages");
	left[1] = NULL;
	check_left(true, 1);
	free_left();
}

#define XN 5000
static void *handed[XN];

static void *free_all(void *arg)
{
	(void)arg;
	for (int i = 0; i < XN; i++)
		uvm_free(handed[i]);
	return NULL;
}

/* Frees by another thread land on the slabs' remote lists; the owner collects and reuses them. */
Test(slab, remote_frees_are_collected)
{
	pthread_t t;

	for (int i = 0; i < XN; i++) {
		handed[i] = uvm_malloc(64);
		memset(handed[i], 1, 64);
	}
	uint64_t slabs = stats().slabs;
	cr_assert_eq(pthread_create(&t, NULL, free_all, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	for (int i = 0; i < XN; i++)
		handed[i] = uvm_malloc(64);
	cr_assert_leq(stats().slabs, slabs, "remote frees were not reused");
	for (int i = 0; i < XN; i++)
		uvm_free(handed[i]);
}

struct kept {
	void *freed[8], *got[8];
};

static void *free_then_allocate(void *arg)
{
	struct kept *k = arg;

	uvm_free(uvm_malloc(16)); /* a heap of its own: a thread that never allocates has no hand (its frees go home) */
	for (int i = 0; i < 8; i++)
		uvm_free(k->freed[i]);
	for (int i = 0; i < 8; i++)
		k->got[i] = uvm_malloc(96);
	for (int i = 0; i < 8; i++)
		uvm_free(k->got[i]);
	return NULL;
}

/*
 * A thread that frees another thread's objects keeps them, hottest first,
 * while their owner runs: its next mallocs of the class get them back (as
 * tcmalloc's and glibc's thread caches do), with their lines still in its
 * cache, instead of sending each home to be used there.
 */
Test(slab, the_freer_keeps_another_threads_objects)
{
	struct kept k;
	pthread_t t;

	for (int i = 0; i < 8; i++) {
		k.freed[i] = uvm_malloc(96);
		memset(k.freed[i], 1, 96);
	}
	cr_assert_eq(pthread_create(&t, NULL, free_then_allocate, &k), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(k.got[i], k.freed[7 - i], "malloc %d on the freeing thread got %p, not %p", i, k.got[i],
			     k.freed[7 - i]);
	cr_assert_eq(stats().small_allocs - stats().small_frees, 0);
}

struct only_frees {
	void *freed[8];
	bool had_heap, kept;
};

/* A thread whose first call is a free: its heap, and what its hand for the objects' class holds once it freed them. */
static void *only_free(void *arg)
{
	struct only_frees *o = arg;
	unsigned c = slab_of(o->freed[0])->cls;

	for (int i = 0; i < 8; i++)
		uvm_free(o->freed[i]);
	o->had_heap = uvm__heap != NULL;
	o->kept = o->had_heap && uvm__heap->slab.top[c] != uvm__heap->slab.mag[c];
	return NULL;
}

/*
 * A thread whose first call is a free gets a heap there, so that its frees
 * take the hit's way, but keeps no other thread's objects in hand: a
 * consumer would hold them from their owner unused.  They go home, where
 * the owner's next mallocs take them back.
 */
Test(slab, a_thread_that_only_frees_sends_objects_home)
{
	struct only_frees o = { .had_heap = false };
	void *back[8];
	pthread_t t;

	for (int i = 0; i < 8; i++)
		o.freed[i] = uvm_malloc(176);
	cr_assert_eq(pthread_create(&t, NULL, only_free, &o), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert(o.had_heap, "a thread's first free made it no heap");
	cr_assert_not(o.kept, "a thread that only frees kept another thread's objects in hand");
	for (int i = 0; i < 8; i++) {
		bool known = false;

		back[i] = uvm_malloc(176);
		for (int j = 0; j < 8; j++)
			known |= back[i] == o.freed[j];
		cr_assert(known, "malloc %d got %p, none of the objects the other thread sent home", i, back[i]);
	}
	for (int i = 0; i < 8; i++)
		uvm_free(back[i]);
	cr_assert_eq(stats().small_allocs - stats().small_frees, 0);
}

/* Objects of size bytes into p (room for n) until one lies past the first one's slab, which is full then: how many. */
static unsigned fill_a_slab(char **p, unsigned n, size_t size)
{
	struct slab *first;
	unsigned i;

	p[0] = uvm_malloc(size);
	first = slab_of(p[0]);
	for (i = 1; i < n && slab_of(p[i - 1]) == first; i++)
		p[i] = uvm_malloc(size);
	cr_assert_lt(i, n);
	cr_assert(first->full, "the first slab's %u objects are all out", first->room);
	return i;
}

struct full_free {
	void *obj, *got;
};

/* Frees an object of another thread's full slab, having allocated before (its hand is open), and allocates again. */
static void *free_full_then_allocate(void *arg)
{
	struct full_free *f = arg;

	uvm_free(uvm_malloc(336));
	uvm_free(f->obj);
	f->got = uvm_malloc(336);
	return NULL;
}

/*
 * Another thread's object in a full slab takes the free's hit as any other
 * does (the header's fast owner is marked, not cleared): into the freer's
 * hand, whose next malloc takes it back.  The owner's slab stays full, its
 * object counted live in the hand.
 */
Test(slab, another_threads_free_into_a_full_slab_takes_the_hit)
{
	enum { N = 400 };
	static char *p[N];
	struct full_free f;
	pthread_t t;
	unsigned i = fill_a_slab(p, N, 336);

	f.obj = p[0];
	cr_assert_eq(pthread_create(&t, NULL, free_full_then_allocate, &f), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(f.got, p[0], "the freeing thread did not keep an object of a full slab");
	p[0] = f.got;
	for (unsigned j = 0; j < i; j++)
		uvm_free(p[j]);
	cr_assert_eq(stats().small_allocs - stats().small_frees, 0);
}

/*
 * A slab that others freed into hands those objects out again before it
 * touches one it never used: its current slab, with room left, takes back
 * the remote frees and carves nothing (a program whose frees are mostly
 * other threads' would otherwise touch every slab whole).
 */
Test(slab, remote_frees_come_before_fresh_objects)
{
	enum { N = 64 };
	void *before[N];
	pthread_t t;

	for (int i = 0; i < XN; i++)
		handed[i] = NULL;
	for (int i = 0; i < N; i++) {
		handed[i] = before[i] = uvm_malloc(256); /* a fresh class: one slab with room for 240 */
		memset(before[i], 1, 256);
	}
	cr_assert_eq(pthread_create(&t, NULL, free_all, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	for (int i = 0; i < N; i++) {
		void *p = uvm_malloc(256);
		bool reused = false;

		for (int k = 0; k < N && !reused; k++)
			reused = p == before[k];
		cr_assert(reused, "allocation %d carved %p while %d remote frees waited", i, p, N - i);
		handed[i] = p;
	}
	for (int i = 0; i < N; i++)
		uvm_free(handed[i]);
}

static void *alloc_and_exit(void *arg)
{
	for (int i = 0; i < XN; i++)
		handed[i] = uvm_malloc(48);
	return arg;
}

/* The bytes of objects carved in the calling thread's slabs (slab_heap.carved, which SLAB_HUGE_AFTER is measured on). */
static uint64_t my_carved(void)
{
	uvm_free(uvm_malloc(48)); /* set up, and this thread's heap made: its hand keeps the object */
	return heap_self()->slab.carved;
}

/*
 * A thread exits with live objects: its slabs are orphaned, freed into, and
 * adopted by the next thread, whose count of slab bytes takes theirs.
 */
Test(slab, orphans_are_adopted)
{
	pthread_t t;
	uint64_t slabs, carved = my_carved();

	cr_assert_eq(pthread_create(&t, NULL, alloc_and_exit, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	slabs = stats().slabs;
	cr_assert_gt(slabs, 0);
	for (int i = 0; i < XN; i++)
		uvm_free(handed[i]);
	for (int i = 0; i < XN; i++)
		handed[i] = uvm_malloc(48);
	cr_assert_leq(stats().slabs, slabs, "orphaned slabs were not adopted");
	cr_assert_eq(stats().small_allocs - stats().small_frees, XN);
	cr_assert_geq(my_carved() - carved, (uint64_t)XN * 48, "the adopter's count holds %lu bytes of its %d objects",
		      (unsigned long)(my_carved() - carved), XN * 48);
}

/*
 * An orphan's last object freed by another thread releases it: no slab
 * stays behind an exited thread, and the freeing thread's count of slab
 * bytes stays its own.
 */
Test(slab, orphans_emptied_by_remote_frees_are_released)
{
	pthread_t t;
	uint64_t carved = my_carved(), before = stats().slabs;

	cr_assert_eq(pthread_create(&t, NULL, alloc_and_exit, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_geq(stats().slabs, before + XN * 48 / (64 << 10), "the exited thread's slabs are orphans");
	for (int i = 0; i < XN; i++)
		uvm_free(handed[i]);
	cr_assert_eq(stats().slabs, before, "%lu orphaned slabs left after their last frees",
		     (unsigned long)(stats().slabs - before));
	cr_assert_eq(stats().small_allocs - stats().small_frees, 0);
	cr_assert_eq(my_carved(), carved, "releasing others' orphans moved this thread's count by %ld bytes",
		     (long)(my_carved() - carved));
}

/*
 * An orphan emptied by another thread's frees goes to the node lazily, not
 * into the freeing thread's cache: it was no part of that thread's working
 * set, and any thread's slab miss may take it until the next purge.
 */
Test(slab, an_emptied_orphan_goes_lazily_not_into_the_freers_cache)
{
	pthread_t t;
	struct uvm_stats before, after;
	uint64_t released;

	my_carved(); /* this thread's heap made: its cache could take areas in */
	cr_assert_eq(pthread_create(&t, NULL, alloc_and_exit, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	before = stats();
	for (int i = 0; i < XN; i++)
		uvm_free(handed[i]);
	after = stats();
	released = before.slabs - after.slabs;
	cr_assert_geq(released, XN * 48 / (64 << 10), "only %lu orphans were released", (unsigned long)released);
	cr_assert_eq(after.cached_count, before.cached_count, "the freeing thread's cache took %ld of the orphans' areas",
		     (long)(after.cached_count - before.cached_count));
	cr_assert_geq(after.lazy_bytes + after.purged_bytes - before.lazy_bytes - before.purged_bytes, released << 16,
		      "the released orphans' areas are not on the lazy lists (or purged from them)");
}

/*
 * Orphans freed into, adopted and released at once: makers exit with live
 * objects, two freers return them from both ends while an adopter allocates
 * the same class.  Every slab must end released or owned, never lost or
 * freed twice: the counts balance and the slabs come back to where they were.
 */
#define RN 3000
static void *race_objs[RN];
static atomic_int race_go;

static void *race_make(void *arg)
{
	for (int i = 0; i < RN; i++)
		race_objs[i] = uvm_malloc(96);
	return arg;
}

static void *race_free(void *arg)
{
	int dir = (int)(intptr_t)arg;

	while (!atomic_load(&race_go))
		;
	for (int k = 0; k < RN / 2; k++)
		uvm_free(race_objs[dir ? RN - 1 - k : k]);
	return NULL;
}

static void *race_adopt(void *arg)
{
	static void *mine[RN];

	while (!atomic_load(&race_go))
		;
	for (int i = 0; i < RN; i++)
		mine[i] = uvm_malloc(96);
	for (int i = 0; i < RN; i++)
		uvm_free(mine[i]);
	return arg;
}

Test(slab, orphans_race_their_adoption_and_release)
{
	uint64_t before = stats().slabs;

	for (int round = 0; round < 40; round++) {
		pthread_t t[4];

		atomic_store(&race_go, 0);
		cr_assert_eq(pthread_create(&t[0], NULL, race_make, NULL), 0);
		cr_assert_eq(pthread_join(t[0], NULL), 0);
		cr_assert_eq(pthread_create(&t[1], NULL, race_free, (void *)0), 0);
		cr_assert_eq(pthread_create(&t[2], NULL, race_free, (void *)1), 0);
		cr_assert_eq(pthread_create(&t[3], NULL, race_adopt, NULL), 0);
		atomic_store(&race_go, 1);
		for (int i = 1; i < 4; i++)
			cr_assert_eq(pthread_join(t[i], NULL), 0);
		cr_assert_eq(stats().small_allocs - stats().small_frees, 0, "round %d", round);
	}
	cr_assert_leq(stats().slabs, before + 1, "%lu slabs left", (unsigned long)(stats().slabs - before));
}

static void double_free(void *arg)
{
	void *p = uvm_malloc(32);

	(void)arg;
	uvm_free(p);
	uvm_free(p);
}

static void interior_free(void *arg)
{
	char *p = uvm_malloc(64);

	(void)arg;
	uvm_free(p + 16);
}

/* The object after the last one carved: inside a live slab, on a boundary, but never handed out. */
static void never_carved_free(void *arg)
{
	char *p = uvm_malloc(64);
	struct slab *s = slab_of(p);

	(void)arg;
	uvm_free((char *)s->base + (size_t)s->carved * s->size);
}

static void foreign_free(void *arg)
{
	static char not_ours[64];

	(void)arg;
	uvm_free(not_ours + 16);
}

static void realloc_after_free(void *arg)
{
	void *volatile p = uvm_malloc(32);

	(void)arg;
	uvm_free(p);
	if (uvm_realloc(p, 40))
		return;
}

/* arg: the block's size (a map class's from 4097 bytes: its bit in the owner's map says it is free). */
static void usable_size_after_free(void *arg)
{
	void *volatile p = uvm_malloc((size_t)arg);

	uvm_free(p);
	if (uvm_malloc_usable_size(p))
		return;
}

static void interior_usable_size(void *arg)
{
	char *p = uvm_malloc(64);

	(void)arg;
	if (uvm_malloc_usable_size(p + 16))
		return;
}

static sem_t kept;

static void *free_and_stay(void *p)
{
	uvm_free(uvm_malloc(16));
	uvm_free(p);
	sem_post(&kept);
	for (;;)
		pause(); /* alive: its hand keeps p */
	return NULL;
}

/* An object of this thread's that another thread has freed and keeps in its hand (slab_free_hit). */
static void *kept_by_another(void)
{
	void *p = uvm_malloc(64);
	pthread_t t;

	sem_init(&kept, 0, 0);
	cr_assert_eq(pthread_create(&t, NULL, free_and_stay, p), 0);
	sem_wait(&kept);
	return p;
}

/* A double free of such an object. */
static void double_free_across_threads(void *arg)
{
	(void)arg;
	uvm_free(kept_by_another());
}

/* The size of such an object: marked, then found in that hand. */
static void usable_size_across_threads(void *arg)
{
	(void)arg;
	if (uvm_malloc_usable_size(kept_by_another()))
		return;
}

/* A map class's object (a page or more) freed twice by its owner: its bit is set already. */
static void map_double_free(void *arg)
{
	void *volatile p = uvm_malloc(4096);

	(void)arg;
	uvm_free(p);
	uvm_free(p);
}

/* Freed by the owner, or by another thread: the second free sees the first's bit. */
static void *free_one(void *p)
{
	uvm_free(p);
	return NULL;
}

/* Freed by another thread (its remote bit), then by the owner. */
static void map_double_free_across_threads(void *arg)
{
	void *p = uvm_malloc(6000);
	pthread_t t;

	(void)arg;
	if (pthread_create(&t, NULL, free_one, p) || pthread_join(t, NULL))
		return;
	uvm_free(p);
}

/* Freed by the owner, then by another thread. */
static void map_remote_double_free(void *arg)
{
	void *p = uvm_malloc(8192);
	pthread_t t;

	(void)arg;
	uvm_free(p);
	if (pthread_create(&t, NULL, free_one, p) || pthread_join(t, NULL))
		return;
}

/* Freed twice by its owner past a full hand: the first free set its bit in the map. */
static void map_double_free_past_the_hand(void *arg)
{
	enum { N = 32 };
	void *x[N], *volatile p = uvm_malloc(8000);
	struct slab_heap *h = &uvm__heap->slab; /* after the first malloc, which makes the heap */
	unsigned c = slab_of(p)->cls;

	(void)arg;
	for (unsigned k = 0; k < (unsigned)(h->hand_end[c] - h->mag[c]) && k < N; k++)
		x[k] = uvm_malloc(8000);
	for (unsigned k = 0; k < (unsigned)(h->hand_end[c] - h->mag[c]) && k < N; k++)
		uvm_free(x[k]);
	if (h->top[c] != h->hand_end[c])
		return; /* no death: the test fails */
	uvm_free(p);
	uvm_free(p);
}

Test(slab, map_double_frees_abort_naming_the_pointer, .init = map_classes_on)
{
	expect_death(map_double_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(map_double_free_past_the_hand, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(map_double_free_across_threads, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(map_remote_double_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
}

Test(slab, bad_frees_abort_naming_the_pointer)
{
	expect_death(double_free_across_threads, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(realloc_after_free, NULL, SIGABRT, "uvmalloc: realloc(): invalid pointer 0x");
	expect_death(usable_size_after_free, (void *)32, SIGABRT, "uvmalloc: malloc_usable_size(): invalid pointer 0x");
	expect_death(usable_size_across_threads, NULL, SIGABRT, "uvmalloc: malloc_usable_size(): invalid pointer 0x");
	expect_death(interior_usable_size, NULL, SIGABRT, "uvmalloc: malloc_usable_size(): invalid pointer 0x");
	expect_death(usable_size_after_free, (void *)5000, SIGABRT, "uvmalloc: malloc_usable_size(): invalid pointer 0x");
	expect_death(double_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(interior_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(never_carved_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(foreign_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
}

/* User data that happens to hold the free key in its second word is no double free. */
Test(slab, key_lookalike_is_not_a_double_free)
{
	uintptr_t *a = uvm_malloc(32), *b;

	uvm_free(a); /* a's second word is now the key */
	b = uvm_malloc(32);
	cr_assert_eq(b, a);
	uintptr_t key = 0;
	uvm_free(b);
	key = a[1];
	b = uvm_malloc(32);
	b[1] = key; /* the program stores the same value */
	cr_assert_eq(uvm_malloc_usable_size(b), 32, "a live object whose data looks like the key has its size");
	uvm_free(b); /* must not abort */
}

/*
 * The free's object test (slab_index) against division, for every class
 * and every 16-byte offset of a slab: an object's start gives its index,
 * anything else (the header, an object's inside) a number past every
 * object.
 */
Test(slab, object_index_is_exact)
{
	for (size_t size = 16; size <= SLAB_OBJ_MAX; size += 16) {
		void *p = uvm_malloc(size);
		struct slab *s = slab_of(p);

		if (!s) { /* an area: UVM_SLAB_MAX is below this size */
			uvm_free(p);
			break;
		}
		cr_assert_eq(s->base, (uintptr_t)p & ~(SLAB_SIZE - 1));
		cr_assert_leq((size_t)s->room * s->size, SLAB_SIZE);
		for (uintptr_t off = 0; off < SLAB_SIZE; off += 16) {
			uint32_t got = slab_index(s, (void *)(s->base + off));

			if (off % s->size == 0)
				cr_assert_eq(got, off / s->size, "class %u, offset %zu", s->size, (size_t)off);
			else
				cr_assert_geq(got, s->room, "class %u, offset %zu: index %u", s->size, (size_t)off, got);
		}
		uvm_free(p);
	}
}

/* The fast owner in the header of p's chunk. */
static void *chunk_word(const void *p)
{
	struct region *r = region_of((uintptr_t)p);

	cr_assert_not_null(r);
	return ((struct slab *)region_chunk(r, (uintptr_t)p))->fast;
}

static void *orphan_one(void *arg)
{
	*(void **)arg = uvm_malloc(48);
	return NULL;
}

/*
 * A slab's header names its owner as the fast owner while the slab is its
 * owner's, marked (its low bit) while the slab is full, NULL otherwise:
 * orphaned, or released.  The owner's free in line trusts nothing else.
 */
Test(slab, fast_owners_follow_their_slabs)
{
	enum { N = 3000 };
	static char *p[N];
	struct slab_heap *me;
	struct slab *first;
	pthread_t t;
	void *orphaned;
	unsigned i;

	p[0] = uvm_malloc(272);
	me = &uvm__heap->slab;
	first = slab_of(p[0]);
	cr_assert_eq(chunk_word((void *)first->base), me);
	for (i = 1; slab_of(p[i - 1]) == first; i++) /* past the first slab's room: it goes full */
		p[i] = uvm_malloc(272);
	cr_assert_lt(i, N);
	cr_assert_eq(chunk_word((void *)first->base), (char *)me + 1, "a full slab names its owner, marked");
	cr_assert_eq(chunk_word(p[i - 1]), me);
	for (unsigned j = i; j < i + SLAB_MAG; j++) /* freed first: they fill the hand, so the first slab's objects go onto its list */
		p[j] = uvm_malloc(272);
	for (unsigned j = i; j < i + SLAB_MAG; j++)
		uvm_free(p[j]);
	uvm_free(p[0]); /* past the full hand: onto its list, which moves the slab back to the partial list */
	cr_assert_eq(chunk_word((void *)first->base), me);
	cr_assert_not(first->full);
	for (unsigned j = 1; j < i - 1; j++)
		uvm_free(p[j]);
	cr_assert_null(chunk_word((void *)first->base), "a released slab keeps its owner word");
	uvm_free(p[i - 1]);

	cr_assert_eq(pthread_create(&t, NULL, orphan_one, &orphaned), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_null(chunk_word(orphaned), "an orphan keeps its exited owner's word");
	p[0] = uvm_malloc(48); /* adopts it */
	cr_assert_eq(slab_of(p[0]), slab_of(orphaned));
	cr_assert_eq(chunk_word(orphaned), me);
	uvm_free(orphaned);
	uvm_free(p[0]);
}

/* A map class's full slab keeps its owner word: the owner's free in line moves it back to the partial list. */
Test(slab, map_class_full_slabs_keep_their_fast_owner, .init = map_classes_on)
{
	enum { N = 64 };
	static char *p[N];
	unsigned i = fill_a_slab(p, N, 8000);
	struct slab *first = slab_of(p[0]);

	cr_assert_eq(chunk_word(p[0]), &uvm__heap->slab, "a map class's full slab keeps its owner word");
	/* Into the hand while it has room (the slab stays full), past it into the map. */
	struct slab_heap *h = &uvm__heap->slab;
	unsigned c = first->cls, room = (unsigned)(h->hand_end[c] - h->mag[c]);
	static char *x[N];

	for (unsigned k = 0; k < room; k++)
		x[k] = uvm_malloc(8000);
	for (unsigned k = 0; k < room; k++)
		uvm_free(x[k]);
	cr_assert(first->full);
	cr_assert_eq(slab_hand_held(h, c), room);
	uvm_free(p[0]);
	cr_assert_not(first->full, "the owner's free past a full hand moved it back to the partial list");
	cr_assert_eq(first->map, 1, "object 0 is free in its map");
	for (unsigned j = 1; j < i; j++)
		uvm_free(p[j]);
}

/*
 * Headers live in the regions' chunk tables, not in the slabs: a slab's
 * first object starts at its base, headers of slabs side by side are
 * neighbours in the table, and a write before a slab's first object (an
 * underflow) reaches no header: the slab keeps working.
 */
Test(slab, headers_live_out_of_the_slabs)
{
	char *first = NULL, *p, *q;
	struct slab *s;

	/* Not at its region's start, whose page before is not the region's. */
	for (int n = 0; !first && n < 5000; n++)
		if (((uintptr_t)(p = uvm_malloc(48)) & (SLAB_SIZE - 1)) == 0 && (uintptr_t)p != region_of((uintptr_t)p)->base)
			first = p;
	cr_assert_not_null(first, "no slab's first object at its base");
	s = slab_of(first);
	cr_assert_eq(s->base, (uintptr_t)first);
	cr_assert_eq((uintptr_t)s, (uintptr_t)region_chunk(region_of(s->base), s->base));
	cr_assert(s->base - (uintptr_t)s >= SLAB_SIZE || (uintptr_t)s - s->base >= SLAB_SIZE, "the header lies in its slab");
	memset(first - 64, 'U', 64); /* the page before an area is a guard page or free space: no one's */
	for (int i = 0; i < 2000; i++)
		cr_assert_not_null(uvm_malloc(48));
	uvm_free(first);
	q = uvm_malloc(48);
	cr_assert_not_null(q);
	uvm_free(q);
}

/*
 * A slab's area is one chunk, its last page included (slab.h): a slab of
 * 16-byte objects holds SLAB_SIZE / 16 of them, and a thread's slabs lie a
 * chunk apart, where a guard page past each chunk put them two apart.
 */
Test(slab, slabs_fill_whole_chunks_side_by_side)
{
	enum { N = 4 * (SLAB_SIZE / 16) };
	static char *p[N];
	int switches = 0, adjacent = 0;

	for (int i = 0; i < N; i++)
		cr_assert_not_null(p[i] = uvm_malloc(16));
	for (int i = 1; i < N; i++) {
		struct slab *a = slab_of(p[i - 1]), *b = slab_of(p[i]);

		if (a == b)
			continue;
		switches++;
		cr_assert_eq(a->room, SLAB_SIZE / 16, "a slab of 16-byte objects holds %u", a->room);
		cr_assert_eq(va_size(area_find(a->base)), SLAB_SIZE, "a slab's area is not its chunk");
		adjacent += b->base == a->base + SLAB_SIZE;
	}
	cr_assert_geq(switches, 3);
	cr_assert_eq(adjacent, switches, "%d of %d slabs follow the one before", adjacent, switches);
	for (int i = 0; i < N; i++)
		uvm_free(p[i]);
}

enum { PAST_HUGE = (int)((SLAB_HUGE_AFTER + (4u << 20)) / 1024) }; /* 1 KiB objects: 4 MiB past SLAB_HUGE_AFTER */

/* Huge pages whatever UVM_THP=auto would judge of this host: the tests below look at them. */
static void thp_always(void) { setenv("UVM_THP", "always", 1); }

/* PAST_HUGE objects of 1 KiB, each written, into an array of their own (an area: no slab of theirs). */
static char **carve_past_huge(void)
{
	char **p = uvm_vmalloc(PAST_HUGE * sizeof(*p));

	cr_assert_not_null(p);
	for (int i = 0; i < PAST_HUGE; i++) {
		cr_assert_not_null(p[i] = uvm_malloc(1024));
		p[i][0] = 1;
	}
	return p;
}

static void free_past_huge(char **p)
{
	for (int i = 0; i < PAST_HUGE; i++)
		uvm_free(p[i]);
	uvm_vfree(p);
	cr_assert_eq(stats().small_allocs, stats().small_frees);
}

static bool dense_slab(const void *obj)
{
	return area_find(slab_of(obj)->base)->flags & VA_DENSE;
}

/*
 * A thread whose slabs hold SLAB_HUGE_AFTER bytes cuts its next slabs from
 * huge pages (area_alloc_stocked): 32 to a 2 MiB page, which one fault
 * backs, its MADV_HUGEPAGE gone again (no VMA of its own).  A piece of such
 * a page left in the cache serves slabs only: an area cut from it would
 * hold its guard page resident.
 */
Test(slab, slabs_past_huge_after_are_cut_from_huge_pages, .init = thp_always)
{
	char **p = carve_past_huge(), *small;
	struct vma_info vi;

	cr_assert_not(dense_slab(p[0]), "the first slabs are not on small pages");
	cr_assert(dense_slab(p[PAST_HUGE - 1]), "a slab past SLAB_HUGE_AFTER is not cut from a huge page");
	cr_assert_eq(slab_of(p[PAST_HUGE - 1])->base % (2u << 20) % SLAB_SIZE, 0);
	cr_assert(vma_of(p[PAST_HUGE - 1], &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"), "the advice stayed: %s", vi.flags);
	cr_assert_gt(vi.end - vi.start, 2u << 20, "the huge page kept a mapping of its own");
	if (thp_possible())
		cr_assert_gt(vi.anon_huge_kb, 0, "no huge page backs the slabs");
	small = uvm_vmalloc(3 * 4096);
	cr_assert_not_null(small);
	cr_assert_not(area_find((uintptr_t)small)->flags & VA_DENSE, "an area was cut from a slabs' huge page");
	uvm_vfree(small);
	free_past_huge(p);
}

/*
 * Past SLAB_HUGE_AFTER, a slab whose cache has no piece left takes a
 * pooled slab-sized area (an exited thread's, or a drained piece a purge
 * pooled) before it faults a fresh huge page in: a program whose phases
 * drain its cache between rounds stocked 81 huge pages where the pools
 * held the pieces it had given up.
 */
Test(slab, past_huge_after_a_pooled_area_comes_before_a_fresh_huge_page, .init = thp_always)
{
	char **p = carve_past_huge();
	struct slab *s = slab_of(p[PAST_HUGE - 200]), *next;
	uint64_t hits;
	char *q[2 * SLAB_SIZE / 1024];
	int n = 0;

	cr_assert(dense_slab(p[PAST_HUGE - 200]));
	for (int i = 0; i < SLAB_MAG; i++) /* the hand filled first, so that the frees below reach their slab */
		cr_assert_not_null(q[i] = uvm_malloc(1024));
	next = slab_of(q[SLAB_MAG - 1]); /* the current slab */
	for (int i = 0; i < SLAB_MAG; i++)
		uvm_free(q[i]);
	for (int i = 0; i < PAST_HUGE; i++) /* then one whole slab emptied: released to the cache */
		if (p[i] && slab_of(p[i]) == s) {
			uvm_free(p[i]);
			p[i] = NULL;
		}
	cr_assert_gt(stats().cached_count, 0, "the emptied slab was not released");
	pcp_drain_all();
	purge_now(0);
	cr_assert_gt(stats().pooled_count, 0, "no slab-sized area was pooled");
	hits = stats().pool_hits;
	do { /* past the current slab's room */
		cr_assert_not_null(q[n] = uvm_malloc(1024));
	} while (slab_of(q[n++]) == next && n < (int)(sizeof(q) / sizeof(q[0])));
	cr_assert_neq(slab_of(q[n - 1]), next, "no new slab after %d objects", n);
	cr_assert_gt(stats().pool_hits, hits, "the new slab took a fresh huge page, not a pooled area");
	while (n)
		uvm_free(q[--n]);
	for (int i = 0; i < PAST_HUGE; i++)
		if (!p[i])
			cr_assert_not_null(p[i] = uvm_malloc(1024));
	free_past_huge(p);
}

/*
 * A program's rounds (allocwork phases): each builds SLAB_HUGE_AFTER and
 * 8 MiB more of small objects, the later slabs cut from huge pages, then
 * buffers of 1-3 pages, and frees everything.  The next round is served
 * from the cache: the stocked huge pages count as fetched, so the free
 * burst grows high instead of draining them (high stopped at what the slab
 * requests asked for, 16 pages each of 513).  (That the buffers do not
 * join a stock's piece at the next round's large miss, test_pcp's
 * a_slab_stocks_piece_joins_no_other_area.)
 */
Test(slab, a_round_of_stocked_slabs_and_buffers_serves_the_next, .init = thp_always)
{
	enum { OBJS = (int)((SLAB_HUGE_AFTER + (8u << 20)) / 1024), BUFS = 300 };
	char **p = uvm_vmalloc(OBJS * sizeof(*p)), *buf[BUFS], *big;
	struct uvm_stats before;

	cr_assert_not_null(p);
	for (int round = 0; round < 2; round++) {
		before = stats();
		/* A large miss first (a size the cache does not hold, a page more than the last round's): the cache coalesces. */
		cr_assert_not_null(big = uvm_vmalloc((4u << 20) + (size_t)round * 4096));
		for (int i = 0; i < OBJS; i++) {
			cr_assert_not_null(p[i] = uvm_malloc(1024));
			p[i][0] = 1;
		}
		for (int i = 0; i < BUFS; i++)
			cr_assert_not_null(buf[i] = uvm_vmalloc((size_t)(1 + i % 3) * 4096));
		if (round) {
			cr_assert_eq(stats().pool_misses, before.pool_misses + (stats().cache_misses - before.cache_misses),
				     "pool misses are cache misses");
			/*
			 * Its large block misses, and a few buffers: a whole slab's
			 * piece waits for a slab (pcp.c's fits), so a buffer that
			 * only such a piece would hold takes fresh pages (5 of 300).
			 */
			cr_assert_leq(stats().cache_misses - before.cache_misses, 1 + BUFS / 30,
				      "%llu of the second round's areas missed the cache",
				      (unsigned long long)(stats().cache_misses - before.cache_misses));
		}
		for (int i = 0; i < BUFS; i++)
			uvm_vfree(buf[i]);
		for (int i = 0; i < OBJS; i++)
			uvm_free(p[i]);
		uvm_vfree(big);
		cr_assert_eq(stats().cache_drained, before.cache_drained, "round %d drained its cache", round);
	}
	uvm_vfree(p);
}

static void thp_never(void) { setenv("UVM_THP", "never", 1); }

/* UVM_THP=never: every slab stays on small pages. */
Test(slab, slabs_stay_small_when_thp_is_off, .init = thp_never)
{
	char **p = carve_past_huge();
	struct vma_info vi;

	cr_assert_not(dense_slab(p[PAST_HUGE - 1]), "a slab is cut from a huge page with UVM_THP=never");
	cr_assert(vma_of(p[PAST_HUGE - 1], &vi));
	cr_assert_eq(vi.anon_huge_kb, 0, "a huge page with UVM_THP=never");
	free_past_huge(p);
}
