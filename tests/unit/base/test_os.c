/*
 * tests/unit/base/test_os.c - the OS contract (lib/base/os.c), on its own: a reservation
 * is inaccessible until committed, committed pages are backed only when
 * touched, a release gives them back and reads as zero (many ranges in one
 * call where the kernel takes it), a move carries the bytes without
 * copying them, and every call is counted (and only calls are: mincore and
 * /proc reads are not).
 */
#include "helpers.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>

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
	cr_assert_eq(os_release_ranges(&(struct iovec){ (void *)base, 8 * MIB }, 1), 1);
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
	cr_assert_eq(os_release_ranges(&(struct iovec){ (void *)base, MIB }, 1), 1);
	os_stats(&after);
	cr_assert_eq(after.mmap_calls - before.mmap_calls, 1);
	cr_assert_eq(after.mprotect_calls - before.mprotect_calls, 1);
	cr_assert_eq(after.madvise_calls - before.madvise_calls, 1);
	os_unreserve(base, 8 * MIB);
}

enum { RANGE_PAGES = 4 };

/* Ranges r[0..n) of RANGE_PAGES pages, each followed by a page they leave alone, all written with 0x5a; the base. */
static uintptr_t written_ranges(struct iovec *r, size_t n)
{
	uintptr_t base;
	size_t stride = (RANGE_PAGES + 1) * UVM_PAGE_SIZE;

	cr_assert_eq(os_reserve(n * stride, &base), 0);
	cr_assert_eq(os_commit(base, n * stride), 0);
	memset((void *)base, 0x5a, n * stride);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct iovec){ (void *)(base + i * stride), RANGE_PAGES * UVM_PAGE_SIZE };
	return base;
}

/* Whether range i reads as zero, given back (released) or still holds its bytes; the page after it holds them either way. */
static void assert_range(const struct iovec *r, size_t i, bool released)
{
	const unsigned char *p = r[i].iov_base;

	cr_assert_eq(os_resident((uintptr_t)p, r[i].iov_len), released ? 0 : r[i].iov_len, "range %zu", i);
	cr_assert_eq(p[0], released ? 0 : 0x5a, "range %zu", i);
	cr_assert_eq(p[r[i].iov_len - 1], released ? 0 : 0x5a, "range %zu", i);
	cr_assert_eq(p[r[i].iov_len], 0x5a, "the page after range %zu was given back too", i);
}

/*
 * n ranges released: the madvise calls counted are those returned, and
 * want; want 0, at least n (a kernel that refuses the batch: one call
 * each, and the refused one).
 */
static void release_counted(const struct iovec *r, size_t n, size_t want)
{
	struct uvm_stats before = { 0 }, after = { 0 };
	size_t calls;

	os_stats(&before);
	errno = EXDEV;
	calls = os_release_ranges(r, n);
	cr_assert_eq(errno, EXDEV, "a release changed errno");
	os_stats(&after);
	cr_assert_eq(after.madvise_calls - before.madvise_calls, calls);
	if (want)
		cr_assert_eq(calls, want);
	else
		cr_assert_geq(calls, n);
}

Test(os, many_ranges_go_back_in_one_call)
{
	enum { N = 100 };
	struct iovec r[N];
	uintptr_t base = written_ranges(r, N);

	release_counted(r, N, kernel_batches_madvise() ? 1 : 0);
	for (size_t i = 0; i < N; i++)
		assert_range(r, i, true);
	os_unreserve(base, N * (RANGE_PAGES + 1) * UVM_PAGE_SIZE);
}

/*
 * A range the kernel refuses (mlocked: MADV_DONTNEED answers EINVAL) stops
 * a batch where it is: the ranges after it go one by one, and batching
 * stays on for the next release, the refused range first in its batch too
 * (the call's error is then that range's, not a refusal of the call).
 */
static void release_around_locked(size_t locked)
{
	enum { N = 5 };
	struct iovec r[N];
	uintptr_t base = written_ranges(r, N);
	bool batches = kernel_batches_madvise();

	/* The system call: AddressSanitizer's mlock interceptor locks nothing. */
	cr_assert_eq(syscall(SYS_mlock, r[locked].iov_base, r[locked].iov_len), 0, "mlock: %s", strerror(errno));
	release_counted(r, N, batches ? 1 + N - locked : 0);
	for (size_t i = 0; i < N; i++)
		assert_range(r, i, i != locked);
	syscall(SYS_munlock, r[locked].iov_base, r[locked].iov_len);
	memset((void *)base, 0x5a, N * (RANGE_PAGES + 1) * UVM_PAGE_SIZE);
	release_counted(r, N, batches ? 1 : 0);
	os_unreserve(base, N * (RANGE_PAGES + 1) * UVM_PAGE_SIZE);
}

Test(os, a_refused_range_leaves_the_others_released)
{
	release_around_locked(2);
	release_around_locked(0);
}

/* Under a seccomp filter (this one allows everything) no process_madvise is made: one madvise a range. */
Test(os, under_a_seccomp_filter_ranges_go_back_one_by_one)
{
	enum { N = 8 };
	struct iovec r[N];
	uintptr_t base = written_ranges(r, N);
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };

	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0, "seccomp: %s", strerror(errno));
	release_counted(r, N, N);
	for (size_t i = 0; i < N; i++)
		assert_range(r, i, true);
	os_unreserve(base, N * (RANGE_PAGES + 1) * UVM_PAGE_SIZE);
}
