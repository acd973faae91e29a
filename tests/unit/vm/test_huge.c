/*
 * tests/unit/vm/test_huge.c - huge bodies (lib/vm/huge.c): 2 MiB alignment, MADV_HUGEPAGE
 * on the body and small pages on the tail (seed 002), the UVM_THP modes
 * (auto's verdict itself in test_thp.c),
 * VMAs merging back after a purge, hugetlb pages from the pool and the
 * fallback to THP when the pool is empty.  Checked in /proc/self/smaps.
 */
#include "helpers.h"

#include <fcntl.h>

#include "huge.h"
#include "thp.h"
#include "uvmalloc.h"

#define MiB ((size_t)1 << 20)
#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"

static int count_vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	cr_assert_not_null(f);
	for (int c; (c = fgetc(f)) != EOF;)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The body [p, p + body) is one MADV_HUGEPAGE mapping; what follows it is not. */
static void expect_huge_body(const char *p, size_t body)
{
	struct vma_info vi;

	cr_assert_eq((uintptr_t)p % (2 * MiB), 0, "%p is not 2 MiB aligned", p);
	cr_assert(vma_of(p, &vi));
	cr_assert_eq(vi.start, (unsigned long)p, "the body's mapping does not start at the area");
	cr_assert_eq(vi.end, (unsigned long)p + body, "the body's mapping is %lu bytes, not %zu", vi.end - vi.start, body);
	cr_assert(vma_has_flag(&vi, "hg"), "no MADV_HUGEPAGE on the body: %s", vi.flags);
	cr_assert(vma_of(p + body, &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"), "the tail must keep small pages: %s", vi.flags);
}

Test(huge, body_gets_huge_pages_and_tail_small_ones)
{
	size_t size = 4 * MiB + 3 * 4096;
	char *p = uvm_vmalloc_huge(size);
	struct vma_info vi;

	cr_assert_not_null(p);
	cr_assert_eq(uvm_vsize(p), size, "the size is not rounded up to 2 MiB");
	expect_huge_body(p, 4 * MiB);
	if (!thp_possible())
		cr_skip_test("transparent hugepages are off on this kernel: placement checked, backing not");
	long faults = minor_faults();
	memset(p, 1, size);
	if (FRESH_FAULTS_COUNTABLE)
		cr_assert_leq(minor_faults() - faults, 2 + 3 + 2, "4 MiB body + 3 tail pages took %ld faults",
			      minor_faults() - faults);
	cr_assert(vma_of(p, &vi));
	cr_assert_eq(vi.anon_huge_kb, 4096, "AnonHugePages of the body is %ld kB", vi.anon_huge_kb);
	cr_assert(vma_of(p + 4 * MiB, &vi));
	cr_assert_eq(vi.anon_huge_kb, 0, "the tail got a huge page");
	uvm_vfree(p);
}

/*
 * Under 2 MiB of usable pages there is no 2 MiB-aligned body: the area is
 * uvm_vmalloc's (as the kernel's vmalloc_huge), page aligned, no huge page,
 * and the bin's hit serves either call.
 */
Test(huge, small_huge_area_is_a_plain_one)
{
	char *p = uvm_vmalloc_huge(100 << 10), *q, *r;
	struct vma_info vi;

	cr_assert_not_null(p);
	cr_assert(vma_of(p, &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"), "less than 2 MiB has no huge body");
	q = uvm_vmalloc(100 << 10); /* a neighbour: p's own alignment is not what the test is about */
	uvm_vfree(p);
	cr_assert_eq(uvm_vmalloc(100 << 10), p, "uvm_vmalloc did not reuse a small huge area");
	uvm_vfree(q);
	cr_assert_eq(uvm_vmalloc_huge(100 << 10), q, "uvm_vmalloc_huge did not reuse a plain area");
	r = uvm_vmalloc_huge(2 * MiB - 4096); /* the largest that stays plain */
	cr_assert_not_null(r);
	cr_assert_neq((uintptr_t)r % (2 * MiB), 0, "2 MiB less a page was 2 MiB aligned: it has no body either");
	uvm_vfree(r);
}

static void always(void) { setenv("UVM_THP", "always", 1); }

/* UVM_THP=always: every area of 2 MiB or more is huge, through any function. */
Test(huge, always_makes_large_vmalloc_huge, .init = always)
{
	char *p = uvm_vmalloc(3 * MiB);

	expect_huge_body(p, 2 * MiB);
	uvm_vfree(p);
}

/*
 * UVM_THP=auto (the default) while huge pages do not pay (dear samples fed
 * in): a fresh 8 MiB area gets small pages, counted as declined; once they
 * pay, areas of 3 MiB get their huge bodies of 2 MiB, and the one that
 * crosses 16 MiB of them has its first page touched and timed.
 */
Test(huge, auto_leaves_areas_small_while_huge_pages_do_not_pay)
{
	struct thp_stats st;
	struct vma_info vi;
	uint64_t samples;
	char *p, *q[8];

	for (int i = 0; i < 10; i++)
		thp_sample(1000000000u); /* explore at 64: no look before 128 MiB of candidates */
	cr_assert_not_null(p = uvm_vmalloc(8 * MiB));
	cr_assert(vma_of(p, &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"), "an area got huge pages that do not pay: %s", vi.flags);
	thp_stats(&st);
	cr_assert_geq(st.declined, 6 * MiB, "the area's body was not counted as declined");
	while (st.small) {
		thp_sample(1);
		thp_stats(&st);
	}
	samples = st.samples;
	for (int i = 0; i < 8; i++) { /* fresh: all live, and p holds the only area the cache could give */
		cr_assert_not_null(q[i] = uvm_vmalloc(3 * MiB));
		expect_huge_body(q[i], 2 * MiB);
		thp_stats(&st);
		cr_assert_eq(st.samples, samples + (i == 7), "area %d: %llu first touches timed, not one per 16 MiB of bodies",
			     i, (unsigned long long)(st.samples - samples));
	}
	for (int i = 0; i < 8; i++)
		uvm_vfree(q[i]);
	uvm_vfree(p);
}

/*
 * A timed area's body waits for its sample (UVM_THP=auto): the process's
 * first huge candidate, 8 MiB with no sample taken yet, has its first huge
 * page touched and timed, and the rest of its body is backed huge only if
 * huge pages pay after that sample (this host's first touches decide which).
 */
Test(huge, auto_times_a_first_page_before_backing_the_rest)
{
	struct thp_stats st;
	struct vma_info vi;
	char *p = uvm_vmalloc(8 * MiB);

	cr_assert_not_null(p);
	thp_stats(&st);
	cr_assert_eq(st.samples, 1, "the process's first huge area: %llu first touches timed",
		     (unsigned long long)st.samples);
	if (thp_huge_now()) {
		expect_huge_body(p, 8 * MiB);
	} else {
		expect_huge_body(p, 2 * MiB);
		cr_assert(vma_of(p + 8 * MiB - 4096, &vi));
		cr_assert_eq(vi.start, (unsigned long)p + 2 * MiB, "the rest of the body is not one mapping");
		cr_assert_not(vma_has_flag(&vi, "hg"), "the rest was backed huge though huge pages do not pay: %s", vi.flags);
	}
	uvm_vfree(p);
}

/*
 * A huge area grown in place: the part of its new body past its old end
 * gets huge pages while they pay, and small ones once they do not (auto).
 * A cheap sample first: the process's first huge area would otherwise be
 * timed, and this host's first touch would decide the verdict.
 */
Test(huge, auto_grows_a_body_huge_only_while_huge_pages_pay)
{
	char *p;
	struct vma_info vi;

	thp_sample(1);
	p = uvm_vmalloc(3 * MiB);

	expect_huge_body(p, 2 * MiB);
	cr_assert_eq(uvm_vrealloc(p, 5 * MiB), p, "the area did not grow in place");
	cr_assert(vma_of(p + 3 * MiB + 4096, &vi));
	cr_assert(vma_has_flag(&vi, "hg"), "the growth got no huge pages while they pay: %s", vi.flags);
	for (int i = 0; i < 10; i++)
		thp_sample(1000000000u);
	cr_assert_eq(uvm_vrealloc(p, 9 * MiB), p, "the area did not grow in place");
	cr_assert(vma_of(p + 5 * MiB + 4096, &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"), "the growth got huge pages that do not pay: %s", vi.flags);
	uvm_vfree(p);
}

static void huge_only(void) { setenv("UVM_THP", "huge-only", 1); }

Test(huge, huge_only_leaves_plain_vmalloc_small, .init = huge_only)
{
	char *p = uvm_vmalloc(5 * MiB), *h = uvm_vmalloc_huge(5 * MiB);
	struct vma_info vi;

	cr_assert(vma_of(p, &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"));
	expect_huge_body(h, 4 * MiB);
	uvm_vfree(p);
	uvm_vfree(h);
}

static void never(void) { setenv("UVM_THP", "never", 1); }

Test(huge, never_means_no_huge_pages, .init = never)
{
	char *h = uvm_vmalloc_huge(5 * MiB);
	struct vma_info vi;

	cr_assert(vma_of(h, &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"));
	cr_assert(vma_has_flag(&vi, "nh"), "regions are MADV_NOHUGEPAGE as a whole: %s", vi.flags);
	uvm_vfree(h);
}

/* After a purge the body is MADV_NOHUGEPAGE again and its mapping merges with the region: VMAs do not pile up. */
Test(huge, purged_bodies_merge_back)
{
	enum { N = 20 };
	char *p[N];
	int before;
	struct vma_info vi;

	uvm_vfree(uvm_vmalloc(4096));
	before = count_vmas();
	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc_huge(2 * MiB + 4096 * (size_t)(i + 1));
	cr_assert_geq(count_vmas(), before + N, "each huge area has a body mapping");
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	uvm_purge();
	cr_assert_eq(count_vmas(), before, "%d mappings before, %d after the purge", before, count_vmas());
	cr_assert(vma_of(p[0], &vi));
	cr_assert_not(vma_has_flag(&vi, "hg"));
}

/* ---------------------------------------------------------------- hugetlb */

static long read_nr_hugepages(void)
{
	long n = -1;
	FILE *f = fopen(NR_HUGEPAGES, "r");

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static bool write_nr_hugepages(long n)
{
	FILE *f = fopen(NR_HUGEPAGES, "w");
	bool ok;

	if (!f)
		return false;
	ok = fprintf(f, "%ld\n", n) > 0;
	return fclose(f) == 0 && ok;
}

static void use_hugetlb(void) { setenv("UVM_HUGETLB", "1", 1); }

/*
 * Hugetlb pages when the pool has them; plain pages again once purged, and
 * the pool gets them back.  False when the pool cannot be grown here.
 */
static bool body_from_the_pool(void)
{
	long had = read_nr_hugepages();
	struct vma_info vi;
	char *p;

	if (had < 0 || !write_nr_hugepages(had + 2) || read_nr_hugepages() < had + 2) {
		if (had >= 0)
			write_nr_hugepages(had);
		return false;
	}
	long free_before = huge_pool_free();
	p = uvm_vmalloc_huge(4 * MiB + 4096);
	cr_assert_not_null(p);
	cr_assert(vma_of(p, &vi));
	cr_assert(vma_has_flag(&vi, "ht"), "the body is not a hugetlb mapping: %s", vi.flags);
	cr_assert_eq(vi.kernel_page_kb, 2048);
	cr_assert_eq(vi.end - vi.start, 4 * MiB);
	memset(p, 7, 4 * MiB + 4096);
	cr_assert(vma_of(p, &vi));
	cr_assert_eq(vi.private_hugetlb_kb, 4096, "Private_Hugetlb is %ld kB", vi.private_hugetlb_kb);
	cr_assert(vma_of(p + 4 * MiB, &vi));
	cr_assert_eq(vi.kernel_page_kb, 4, "the tail keeps small pages");
	uvm_vfree(p);
	uvm_purge();
	cr_assert(vma_of(p, &vi));
	cr_assert_not(vma_has_flag(&vi, "ht"), "a purged body stays hugetlb");
	cr_assert_eq(huge_pool_free(), free_before, "the pool did not get its pages back");
	write_nr_hugepages(had);
	return true;
}

/* An empty pool is no failure: the body falls back to THP.  False when the pool cannot be emptied here. */
static bool thp_when_the_pool_is_empty(void)
{
	long had = read_nr_hugepages();
	bool emptied = had > 0 && write_nr_hugepages(0);
	char *p;

	if (huge_pool_free() > 0)
		return false;
	p = uvm_vmalloc_huge(4 * MiB);
	cr_assert_not_null(p, "an empty pool made the allocation fail");
	expect_huge_body(p, 4 * MiB);
	memset(p, 1, 4 * MiB);
	uvm_vfree(p);
	if (emptied)
		write_nr_hugepages(had);
	return true;
}

/*
 * Both in one case, one after the other: the pool is the machine's, and as
 * two cases run in parallel one emptied it under the other, which then
 * failed and left its two pages in the pool for good.
 */
Test(huge, hugetlb_body_from_the_pool_and_thp_without, .init = use_hugetlb)
{
	bool grew = body_from_the_pool(), emptied = thp_when_the_pool_is_empty();

	if (!grew && !emptied)
		cr_skip_test("cannot resize the hugetlb pool through " NR_HUGEPAGES " (needs root and free memory)");
}

/* libhugetlbfs is opened for UVM_HUGETLB only: linked, its constructor read /proc/mounts at every program's start. */
Test(huge, libhugetlbfs_stays_out_without_hugetlb)
{
	uvm_free(uvm_malloc(64));
	cr_assert_not(module_mapped("libhugetlbfs"), "libhugetlbfs is loaded though UVM_HUGETLB is off");
}

Test(huge, libhugetlbfs_answers_for_hugetlb, .init = use_hugetlb)
{
	uvm_free(uvm_malloc(64));
	cr_assert(module_mapped("libhugetlbfs"), "UVM_HUGETLB=1 did not open libhugetlbfs");
}
