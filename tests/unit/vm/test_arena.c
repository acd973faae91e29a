/*
 * tests/unit/vm/test_arena.c - regions (lib/vm/arena.c): a full region is
 * followed by one at least as large as all before it, whose areas are
 * found and freed as the first region's are (to their owner's cache in
 * line too); an address-space limit caps
 * a region at a quarter of the room it leaves; a request that could not
 * be reserved fails again at once, without asking the kernel; a
 * thread's first fresh bytes lie beside everyone's (zone 0), the rest
 * together in its owner's own zone, and a region too small for zones
 * serves every owner from its base.
 */
#include "helpers.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "arena.h"
#include "os.h"
#include "vnode.h"
#include "uvmalloc.h"

static struct uvm_stats stats(void)
{
	struct uvm_stats st;

	uvm_stats(&st);
	return st;
}

static void small_regions(void) { setenv("UVM_ARENA_SIZE", "64M", 1); }

/* A 4 GiB address-space limit, before the library's set-up (its first allocation) reads it. */
static void limit_address_space(void)
{
	struct rlimit lim;

#ifdef __SANITIZE_ADDRESS__
	cr_skip_test("AddressSanitizer's shadow memory cannot live under an RLIMIT_AS limit");
#endif
	getrlimit(RLIMIT_AS, &lim);
	lim.rlim_cur = (rlim_t)4 << 30;
	cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
}

Test(arena, a_full_region_is_followed_by_one_as_large_as_all_before, .init = small_regions)
{
	char *first = uvm_vmalloc(4096), *big, *bigger;
	uint64_t reserved;

	cr_assert_not_null(first);
	cr_assert_eq(stats().regions, 1);
	cr_assert_eq(stats().reserved_bytes, (uint64_t)64 << 20);
	big = uvm_vmalloc((size_t)64 << 20); /* cannot fit beside first in 64 MiB */
	cr_assert_not_null(big);
	cr_assert_eq(stats().regions, 2);
	reserved = stats().reserved_bytes;
	cr_assert_geq(reserved - ((uint64_t)64 << 20), (uint64_t)64 << 20, "the second region is smaller than the first");
	bigger = uvm_vmalloc(reserved); /* larger than both together */
	cr_assert_not_null(bigger);
	cr_assert_eq(stats().regions, 3);
	cr_assert_geq(stats().reserved_bytes - reserved, reserved, "the third region is smaller than the two before");
	/* Areas of later regions are found from their pointers and freed as any. */
	cr_assert_eq(uvm_vsize(big), (size_t)64 << 20);
	cr_assert_eq(uvm_vsize(bigger), reserved);
	big[0] = bigger[0] = 1;
	uvm_vfree(bigger);
	uvm_vfree(big);
	uvm_vfree(first);
	uvm_purge();
	cr_assert_eq(stats().busy_count - stats().cached_count, 0);
	cr_assert_eq(arena_check(), 0);
}

/*
 * The owner's free of an area in a later region caches it in line as the
 * first region's do (uvm_vfree tests the first region and walks the
 * others through a call): its size hits it again, with no miss.
 */
Test(arena, a_later_regions_area_goes_to_its_owners_cache, .init = small_regions)
{
	char *fill = uvm_vmalloc((size_t)56 << 20), *far = NULL, *blocks[64];
	uint64_t misses;

	cr_assert_not_null(fill);
	for (int i = 0; i < 64; i++) {
		blocks[i] = uvm_vmalloc((size_t)256 << 10);
		cr_assert_not_null(blocks[i]);
		if (!far && !region_first((uintptr_t)blocks[i]))
			far = blocks[i];
	}
	cr_assert_not_null(far, "64 areas of 256 KiB all fit beside 56 MiB in a 64 MiB region");
	cr_assert_gt(stats().regions, 1);
	misses = stats().cache_misses;
	uvm_vfree(far);
	cr_assert_eq(uvm_vmalloc((size_t)256 << 10), far, "a later region's area left its owner's cache");
	cr_assert_eq(stats().cache_misses, misses);
	for (int i = 0; i < 64; i++)
		uvm_vfree(blocks[i]);
	uvm_vfree(fill);
	cr_assert_eq(arena_check(), 0);
}

/* Under RLIMIT_AS a region leaves the program and its libraries three quarters of the room. */
Test(arena, an_address_space_limit_caps_the_region)
{
	limit_address_space();
	cr_assert_not_null(uvm_malloc(100));
	cr_assert_eq(stats().regions, 1);
	cr_assert_leq(stats().reserved_bytes, (uint64_t)1 << 30, "a region of %llu bytes under a 4 GiB limit",
		      (unsigned long long)stats().reserved_bytes);
	cr_assert_geq(stats().reserved_bytes, (uint64_t)64 << 20);
}

/* A reservation the kernel refused is not asked for again for a while, unless frees made room since. */
Test(arena, a_refused_request_fails_again_without_a_syscall)
{
	uint64_t calls;

	limit_address_space();
	cr_assert_not_null(uvm_malloc(100));
	errno = 0;
	cr_assert_null(uvm_vmalloc((size_t)8 << 30));
	cr_assert_eq(errno, ENOMEM);
	calls = os_syscalls();
	cr_assert_null(uvm_vmalloc((size_t)8 << 30));
	cr_assert_eq(errno, ENOMEM);
	cr_assert_eq(os_syscalls(), calls, "the refused request asked the kernel again at once");
	cr_assert_not_null(uvm_vmalloc(4096), "a small request still succeeds");
	cr_assert_eq(arena_check(), 0);
}

static void four_nodes(void) { setenv("UVM_NODES", "4", 1); }
static void four_nodes_small_regions(void)
{
	four_nodes();
	small_regions();
}

#define ZONE_AREA (15 * 4096) /* 16 pages with the guard */

struct zone_lane {
	char *first; /* the area of VN_ZONE_AFTER bytes, guard included, that another thread takes first */
	char *p[4];
	unsigned owner;
};

static void *alloc_four(void *arg)
{
	struct zone_lane *l = arg;

	for (int i = 0; i < 4; i++)
		cr_assert_not_null(l->p[i] = uvm_vmalloc(ZONE_AREA));
	l->owner = vn_owner_id();
	return NULL;
}

static void *alloc_first_then_four(void *arg)
{
	struct zone_lane *l = arg;

	cr_assert_not_null(l->first = uvm_vmalloc(VN_ZONE_AFTER - 4096));
	return alloc_four(l);
}

/* Run alloc_first_then_four on a thread of its own (the next owner), joined. */
static void alloc_four_elsewhere(struct zone_lane *l)
{
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, alloc_first_then_four, l), 0);
	pthread_join(t, NULL);
}

static bool in_zone(const char *p, unsigned owner)
{
	uintptr_t start = uvm__regions[0].base + owner * ARENA_ZONE_BYTES;

	return (uintptr_t)p >= start && (uintptr_t)p < start + ARENA_ZONE_BYTES;
}

static void free_lane(struct zone_lane *l)
{
	uvm_vfree(l->first);
	for (int i = 0; i < 4; i++)
		uvm_vfree(l->p[i]);
}

/*
 * Another thread's first VN_ZONE_AFTER bytes land beside mine, in zone 0
 * (no page table of a zone of its own for a thread that may need no more),
 * its carves after that in its own zone; mine stay side by side, in mine.
 */
Test(arena, each_owner_carves_its_own_zone_after_its_first_bytes, .init = four_nodes)
{
	struct zone_lane mine[2] = { 0 }, theirs = { 0 };

	alloc_four(&mine[0]);
	alloc_four_elsewhere(&theirs);
	alloc_four(&mine[1]);
	cr_assert_neq(theirs.owner, mine[0].owner);
	cr_assert_eq(theirs.first, mine[0].p[3] + ZONE_AREA + 4096, "their first area %p is not the lowest fit beside mine",
		     (void *)theirs.first);
	for (int i = 0; i < 8; i++) {
		char *p = mine[i / 4].p[i % 4];

		cr_assert(in_zone(p, mine[0].owner), "my area %d at %p is out of my zone %u", i, (void *)p, mine[0].owner);
		if (i == 4) /* their first area lies between my two fours */
			cr_assert_eq(p, theirs.first + VN_ZONE_AFTER, "my area 4 is not the lowest fit after their first");
		else if (i)
			cr_assert_eq(p, mine[(i - 1) / 4].p[(i - 1) % 4] + ZONE_AREA + 4096, "my area %d is not beside the one before", i);
	}
	for (int i = 0; i < 4; i++)
		cr_assert(in_zone(theirs.p[i], theirs.owner), "their area %d at %p is out of zone %u", i, (void *)theirs.p[i],
			  theirs.owner);
	free_lane(&mine[0]);
	free_lane(&mine[1]);
	free_lane(&theirs);
	uvm_purge();
	cr_assert_eq(arena_check(), 0);
}

/* A region of one zone's size serves every owner from its base, as the lowest fit. */
Test(arena, a_region_of_one_zone_serves_every_owner_from_its_base, .init = four_nodes_small_regions)
{
	struct zone_lane mine = { 0 }, theirs = { 0 };

	alloc_four(&mine);
	alloc_four_elsewhere(&theirs);
	cr_assert_neq(theirs.owner, mine.owner);
	cr_assert_eq(theirs.first, mine.p[3] + ZONE_AREA + 4096, "the next owner's first area is not the next lowest fit");
	cr_assert_eq(theirs.p[0], theirs.first + VN_ZONE_AFTER, "the next owner's carves past its first bytes are not the next lowest fit");
	free_lane(&mine);
	free_lane(&theirs);
	cr_assert_eq(arena_check(), 0);
}
