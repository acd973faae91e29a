/*
 * tests/unit/vm/test_thp.c - UVM_THP=auto's verdict (lib/vm/thp.c): the
 * judgement of the two means, huge pages while they pay, a look now and
 * then while they do not (one per explore huge pages' worth of candidate
 * bytes, explore doubling after a dear huge page and falling back after a
 * cheap one), the verdict turning back, and a real timed first touch.
 * Each test is a process of its own (Criterion forks), so each starts with
 * no sample.  Samples of 1 s are dear and of 1 ns cheap on any machine:
 * the probe's small faults take microseconds.
 */
#include "helpers.h"

#include <sys/mman.h>

#include "huge.h"
#include "thp.h"

#define MiB ((size_t)1 << 20)
#define DEAR 1000000000u

static struct thp_stats thp(void)
{
	struct thp_stats st;

	thp_stats(&st);
	return st;
}

/* How many of n candidates of bytes each get their look (one huge page); the others must get none. */
static unsigned looks(unsigned n, size_t bytes)
{
	unsigned one = 0;

	for (unsigned i = 0; i < n; i++) {
		enum thp_try t = thp_pays(bytes);

		cr_assert_neq(t, TRY_ALL, "huge pages that do not pay were given whole");
		one += t == TRY_ONE;
	}
	return one;
}

Test(thp, a_huge_page_pays_below_its_512_small_ones)
{
	cr_assert_not(thp_judge(512 * 1000, 1000));
	cr_assert(thp_judge(512 * 1000 + 1, 1000));
	cr_assert_not(thp_judge(170000, 1200), "a huge page from backed memory (170 us) pays");
	cr_assert(thp_judge(4400000, 1800), "a huge page the host backs again (4.4 ms) does not");
}

Test(thp, huge_pages_until_a_sample_says_otherwise)
{
	for (int i = 0; i < 100; i++)
		cr_assert_eq(thp_pays(2 * MiB), TRY_ALL);
	cr_assert_eq(thp().samples, 0);
	cr_assert_eq(thp().declined, 0);
}

Test(thp, a_dear_huge_page_turns_the_verdict_and_cheap_ones_turn_it_back)
{
	int cheap = 0;

	thp_sample(DEAR);
	cr_assert(thp().small, "a huge page of 1 s left huge pages on");
	cr_assert_gt(thp().small_ns, 0, "the small probe did not run");
	/* explore went 8 -> 16 after the dear page: one look per 32 MiB of slabs of 64 KiB. */
	cr_assert_eq(looks(1024, 64 << 10), 2, "64 MiB of slabs were not looked at twice");
	cr_assert_eq(thp().declined, 64 * MiB - 2 * (64 << 10), "declined %llu bytes", (unsigned long long)thp().declined);
	while (thp().small && cheap < 64) {
		thp_sample(1);
		cheap++;
	}
	cr_assert_not(thp().small, "64 cheap huge pages did not turn the verdict back");
	cr_assert_geq(cheap, 3, "one cheap page after a dear one turned the verdict back (%d)", cheap);
	cr_assert_eq(thp_pays(64 << 10), TRY_ALL);
}

Test(thp, looks_thin_out_while_huge_pages_stay_dear_and_come_back_after_a_cheap_one)
{
	for (int i = 0; i < 10; i++)
		thp_sample(DEAR);
	cr_assert_eq(looks(256, 2 * MiB), 4, "explore did not stop at 64 huge pages");
	thp_sample(1); /* cheap by itself, but the mean stays dear */
	cr_assert(thp().small);
	cr_assert_eq(looks(256, 2 * MiB), 32, "explore did not fall back to 8 after a cheap huge page");
}

Test(thp, a_first_touch_is_timed)
{
	char *map = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t p = ((uintptr_t)map + 2 * MiB - 1) & ~(2 * MiB - 1);

	cr_assert_neq(map, MAP_FAILED);
	madvise((void *)p, 2 * MiB, MADV_HUGEPAGE);
	thp_touch(p);
	cr_assert_eq(thp().samples, 1);
	cr_assert_gt(thp().huge_ns, 0);
	cr_assert_gt(thp().small_ns, 0);
	cr_assert_eq(*(volatile char *)p, 0, "the touch changed the page");
	munmap(map, 4 * MiB);
}
