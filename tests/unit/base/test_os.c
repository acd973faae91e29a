/*
 * tests/unit/base/test_os.c - the OS contract (lib/base/os.c), on its own: a reservation
 * is inaccessible until committed, committed pages are backed only when
 * touched, a release gives them back and reads as zero, a move carries the
 * bytes without copying them, and every call is counted (and only calls
 * are: mincore and /proc reads are not).
 */
#include "helpers.h"

#include <errno.h>
#include <setjmp.h>
#include <sys/mman.h>

#include "os.h"
#include "util.h"

#define MIB ((size_t)1 << 20)

static sigjmp_buf jump;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jump, 1);
}

/* Whether a write to p faults. */
static bool write_faults(volatile char *p)
{
	struct sigaction sa = { .sa_handler = on_segv }, old;
	bool faulted;

	sigaction(SIGSEGV, &sa, &old);
	faulted = sigsetjmp(jump, 1) != 0;
	if (!faulted)
		*p = 1;
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

Test(os, a_reservation_is_inaccessible_until_committed_and_backed_only_when_touched)
{
	uintptr_t base;
	uint64_t calls = os_syscalls();

	cr_assert_eq(os_reserve(64 * MIB, &base), 0);
	cr_assert_eq(base % UVM_PAGE_SIZE, 0);
	cr_assert(write_faults((char *)base), "a reserved page must not be writable");
	cr_assert_eq(os_commit(base, 4 * MIB), 0);
	cr_assert_eq(os_resident(base, 4 * MIB), 0, "committing touches nothing");
	memset((void *)base, 7, 2 * MIB + 1);
	cr_assert_geq(os_resident(base, 4 * MIB), 2 * MIB + UVM_PAGE_SIZE);
	cr_assert(write_faults((char *)base + 4 * MIB), "past the committed part is still reserved only");
	cr_assert_eq(os_syscalls() - calls, 3, "reserve (mmap, and the prctl naming it) and commit: three calls; mincore is not counted");
	os_unreserve(base, 64 * MIB);
}

Test(os, a_release_gives_pages_back_and_reads_as_zero)
{
	uintptr_t base;

	cr_assert_eq(os_reserve(16 * MIB, &base), 0);
	cr_assert_eq(os_commit(base, 16 * MIB), 0);
	memset((void *)base, 0x5a, 8 * MIB);
	cr_assert_eq(os_release(base, 8 * MIB), 0);
	cr_assert_eq(os_resident(base, 8 * MIB), 0);
	for (size_t i = 0; i < 8 * MIB; i += UVM_PAGE_SIZE)
		cr_assert_eq(((char *)base)[i], 0, "released page at +%zu reads %d", i, ((char *)base)[i]);
	cr_assert_not(write_faults((char *)base), "a released range stays committed");
	os_unreserve(base, 16 * MIB);
}

Test(os, a_move_carries_the_bytes_and_leaves_empty_pages)
{
	uintptr_t base;
	size_t n = 2 * MIB;
	int err;

	cr_assert_eq(os_reserve(16 * MIB, &base), 0);
	cr_assert_eq(os_commit(base, 16 * MIB), 0);
	for (size_t i = 0; i < n; i++)
		((unsigned char *)base)[i] = (unsigned char)(i * 7);
	err = os_move(base, base + 8 * MIB, n);
	if (err == ENOMEM)
		cr_skip_test("the kernel refused the move (vm.max_map_count)");
	cr_assert_eq(err, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(((unsigned char *)base)[8 * MIB + i], (unsigned char)(i * 7), "byte %zu", i);
	cr_assert_eq(os_resident(base, n), 0, "the source is left empty");
	cr_assert_eq(((char *)base)[0], 0);
	os_unreserve(base, 16 * MIB);
}

Test(os, metadata_memory_is_backed_as_touched)
{
	char *p = os_alloc_meta(4 * MIB);

	cr_assert_not_null(p);
	cr_assert_eq(os_resident((uintptr_t)p, 4 * MIB), 0);
	p[0] = 1;
	p[3 * MIB] = 1;
	cr_assert_eq(os_resident((uintptr_t)p, 4 * MIB), 2 * UVM_PAGE_SIZE);
	os_free_meta(p, 4 * MIB);
}

Test(os, the_process_rss_follows_touched_memory_and_keeps_its_peak)
{
	uint64_t rss0, peak0, rss1, peak1, rss2, peak2;
	size_t n = 32 * MIB;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	os_process_rss(&rss0, &peak0);
	cr_assert_gt(rss0, 0);
	cr_assert_geq(peak0, rss0);
	memset(p, 1, n);
	os_process_rss(&rss1, &peak1);
	cr_assert_geq(rss1, rss0 + n - MIB, "rss %llu after touching %zu more", (unsigned long long)rss1, n);
	munmap(p, n);
	os_process_rss(&rss2, &peak2);
	cr_assert_lt(rss2, rss1 - n / 2);
	/* The kernel sums its RSS counters per CPU: both figures may lag by a few pages. */
	cr_assert_geq(peak2 + MIB, rss1, "the peak is kept: %llu after %llu", (unsigned long long)peak2, (unsigned long long)rss1);
}

Test(os, calls_are_counted_by_kind)
{
	struct uvm_stats before = { 0 }, after = { 0 };
	uintptr_t base;

	os_stats(&before);
	cr_assert_eq(os_reserve(8 * MIB, &base), 0);
	cr_assert_eq(os_commit(base, 8 * MIB), 0);
	cr_assert_eq(os_release(base, MIB), 0);
	os_stats(&after);
	cr_assert_eq(after.mmap_calls - before.mmap_calls, 1);
	cr_assert_eq(after.mprotect_calls - before.mprotect_calls, 1);
	cr_assert_eq(after.madvise_calls - before.madvise_calls, 1);
	os_unreserve(base, 8 * MIB);
}
