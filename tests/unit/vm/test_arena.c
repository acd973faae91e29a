/*
 * tests/unit/vm/test_arena.c - regions (lib/vm/arena.c): a full region is
 * followed by one at least as large as all before it, whose areas are
 * found and freed as the first region's are; an address-space limit caps
 * a region at a quarter of the room it leaves; a request that could not
 * be reserved fails again at once, without asking the kernel.
 */
#include "helpers.h"

#include <errno.h>
#include <stdint.h>

#include "arena.h"
#include "os.h"
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
