/*
 * tests/unit/api/test_api.c - the public API through libuvmalloc.so: results, errno
 * on bad input, aborts naming the function and pointer, vrealloc, guard
 * pages, vmallocinfo and stats.
 */
#include "helpers.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "uvmalloc.h"

Test(api, vmalloc_is_page_aligned_and_usable)
{
	for (size_t size = 1; size < (8u << 20); size = size * 3 + 1) {
		unsigned char *p = uvm_vmalloc(size);

		cr_assert_not_null(p);
		cr_assert_eq((uintptr_t)p % 4096, 0);
		cr_assert_eq(uvm_vsize(p), (size + 4095) & ~(size_t)4095);
		memset(p, 0x77, uvm_vsize(p));
		uvm_vfree(p);
	}
	uvm_vfree(NULL);
	cr_assert_eq(uvm_vsize(NULL), 0);
}

Test(api, vzalloc_is_zero)
{
	for (int round = 0; round < 50; round++) {
		unsigned char *p = uvm_vzalloc(3 * 4096);

		for (int i = 0; i < 3 * 4096; i++)
			cr_assert_eq(p[i], 0);
		memset(p, 0xff, 3 * 4096);
		uvm_vfree(p);
		uvm_purge();
	}
}

/* An area the entry points' own hit recycled (which leaves the reused flag alone) is cleared when vzalloc's hit takes it. */
Test(api, vzalloc_clears_an_area_uvm_vmalloc_recycled)
{
	unsigned char *p = uvm_vmalloc(3 * 4096), *q, *r;

	memset(p, 0x5a, 3 * 4096);
	uvm_vfree(p);
	q = uvm_vmalloc(3 * 4096);
	cr_assert_eq(q, p, "the second allocation did not hit the cache");
	memset(q, 0xa5, 3 * 4096);
	uvm_vfree(q);
	r = uvm_vzalloc(3 * 4096);
	cr_assert_eq(r, p, "vzalloc did not hit the cache");
	for (int i = 0; i < 3 * 4096; i++)
		cr_assert_eq(r[i], 0, "byte %d of a recycled area is %#x", i, r[i]);
	uvm_vfree(r);
}

/* Pages of [p, p + bytes) resident. */
static size_t resident_pages(const void *p, size_t bytes)
{
	static unsigned char vec[1024];
	size_t n = 0;

	cr_assert_leq(bytes >> 12, sizeof(vec));
	cr_assert_eq(mincore((void *)p, bytes, vec), 0);
	for (size_t i = 0; i < bytes >> 12; i++)
		n += vec[i] & 1;
	return n;
}

/*
 * A zeroing allocation's fresh area below 2 MiB is faulted in at once (read
 * first, each page would map the zero page and fault again on its write);
 * a larger one is left to fault in as touched.  Each test is a process of
 * its own: both areas are fresh.
 */
Test(api, vzalloc_populates_a_fresh_area_below_a_huge_page)
{
	size_t small = (1u << 20) + 3 * 4096, large = (3u << 20) + 5 * 4096;
	unsigned char *p = uvm_vzalloc(small), *q = uvm_vzalloc(large);

	cr_assert_eq(resident_pages(p, small), small >> 12, "a fresh %zu-byte vzalloc left pages unbacked", small);
	/* Its end: UVM_THP=auto times its first huge page by touching it. */
	cr_assert_eq(resident_pages(q + large - 4 * 4096, 4 * 4096), 0, "a fresh %zu-byte vzalloc was backed before a touch", large);
	for (size_t i = 0; i < small; i += 512)
		cr_assert_eq(p[i], 0);
	uvm_vfree(p);
	uvm_vfree(q);
}

Test(api, bad_sizes_and_alignments)
{
	errno = 0;
	cr_assert_null(uvm_vmalloc(0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(uvm_vmalloc(SIZE_MAX));
	cr_assert_eq(errno, ENOMEM);
	errno = 0;
	cr_assert_null(uvm_vzalloc(SIZE_MAX - 4095));
	cr_assert_eq(errno, ENOMEM);
	errno = 0;
	cr_assert_null(uvm_vmalloc(((size_t)1 << 47) + 1));
	cr_assert_eq(errno, ENOMEM);
	errno = 0;
	cr_assert_null(uvm_vmalloc_aligned(4096, 3 * 4096));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(uvm_vmalloc_aligned(4096, 0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(uvm_vmalloc_node(4096, -2));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(uvm_vrealloc(NULL, SIZE_MAX));
	cr_assert_eq(errno, ENOMEM);
}

Test(api, alignments_from_one_byte_to_one_gib)
{
	for (int shift = 0; shift <= 30; shift++) {
		size_t align = (size_t)1 << shift;
		char *p = uvm_vmalloc_aligned(5 * 4096, align);

		cr_assert_not_null(p, "align %zu", align);
		cr_assert_eq((uintptr_t)p % (align < 4096 ? 4096 : align), 0);
		p[0] = 1;
		p[5 * 4096 - 1] = 2;
		uvm_vfree(p);
	}
}

/* Running out of address space is NULL + ENOMEM, never a crash. */
Test(api, address_space_exhaustion_is_enomem)
{
	struct rlimit rl;

#ifdef __SANITIZE_ADDRESS__
	cr_skip_test("AddressSanitizer's shadow memory cannot live under an RLIMIT_AS limit");
#endif
	cr_assert_not_null(uvm_vmalloc(4096)); /* the first region exists */
	getrlimit(RLIMIT_AS, &rl);
	rl.rlim_cur = (rlim_t)128 << 30;
	cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
	errno = 0;
	cr_assert_null(uvm_vmalloc((size_t)256 << 30));
	cr_assert_eq(errno, ENOMEM);
	cr_assert_not_null(uvm_vmalloc(4096), "the allocator still works afterwards");
}

Test(api, vrealloc_grows_in_place_when_free_after)
{
	char *p = uvm_vmalloc(4096);
	memset(p, 'a', 4096);
	char *q = uvm_vrealloc(p, 64 * 4096);
	cr_assert_eq(q, p, "the range after a fresh area is free: grow in place");
	cr_assert_eq(uvm_vsize(q), 64 * 4096);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(q[i], 'a');
	memset(q, 'b', 64 * 4096);
	/* shrink in place: the tail is freed, the head kept */
	char *r = uvm_vrealloc(q, 2 * 4096);
	cr_assert_eq(r, q);
	cr_assert_eq(uvm_vsize(r), 2 * 4096);
	cr_assert_eq(r[2 * 4096 - 1], 'b');
	uvm_vfree(r);
}

Test(api, vrealloc_moves_when_blocked)
{
	char *a = uvm_vmalloc(2 * 4096);
	char *b = uvm_vmalloc(4096); /* sits right after a's guard page */
	cr_assert_eq(b, a + 3 * 4096);
	for (int i = 0; i < 2 * 4096; i++)
		a[i] = (char)i;
	char *c = uvm_vrealloc(a, 32 * 4096);
	cr_assert_neq(c, a);
	for (int i = 0; i < 2 * 4096; i++)
		cr_assert_eq(c[i], (char)i);
	struct uvm_stats st;
	uvm_stats(&st);
	cr_assert_eq(st.busy_count, 2, "the old area must be freed");
	cr_assert_null(uvm_vrealloc(c, 0), "size 0 frees");
	uvm_stats(&st);
	cr_assert_eq(st.busy_count, 1);
	char *d = uvm_vrealloc(NULL, 4096);
	cr_assert_not_null(d);
	uvm_vfree(d);
	uvm_vfree(b);
}

static void double_free(void *arg)
{
	(void)arg;
	char *p = uvm_vmalloc(4096);
	uvm_vfree(p);
	uvm_vfree(p);
}

static void interior_free(void *arg)
{
	(void)arg;
	char *p = uvm_vmalloc(8192);
	uvm_vfree(p + 4096);
}

static void foreign_free(void *arg)
{
	uvm_vmalloc(4096);
	uvm_vfree(arg);
}

static void bad_vsize(void *arg)
{
	uvm_vmalloc(4096);
	uvm_vsize(arg);
}

static void bad_vrealloc(void *arg)
{
	uvm_vmalloc(4096);
	uvm_vrealloc(arg, 100);
}

Test(api, invalid_frees_abort_with_the_pointer)
{
	int local;
	char want[96];

	expect_death(double_free, NULL, SIGABRT, "uvmalloc: uvm_vfree(): invalid pointer 0x");
	expect_death(interior_free, NULL, SIGABRT, "uvmalloc: uvm_vfree(): invalid pointer 0x");
	snprintf(want, sizeof(want), "uvmalloc: uvm_vfree(): invalid pointer %p", (void *)&local);
	expect_death(foreign_free, &local, SIGABRT, want);
	snprintf(want, sizeof(want), "uvmalloc: uvm_vsize(): invalid pointer %p", (void *)&local);
	expect_death(bad_vsize, &local, SIGABRT, want);
	snprintf(want, sizeof(want), "uvmalloc: uvm_vrealloc(): invalid pointer %p", (void *)&local);
	expect_death(bad_vrealloc, &local, SIGABRT, want);
}

/* Does this kernel know MADV_GUARD_INSTALL (102)? */
static int kernel_has_guards(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok = !madvise(p, 4096, 102);

	munmap(p, 4096);
	return ok;
}

static void overflow_into_guard(void *arg)
{
	(void)arg;
	setenv("UVM_GUARD", "1", 1);
	char *p = uvm_vmalloc(4096);
	p[4095] = 1;
	p[4096] = 1; /* the guard page */
}

static void overflow_into_pooled_guard(void *arg)
{
	(void)arg;
	setenv("UVM_GUARD", "1", 1);
	char *p = uvm_vmalloc(2 * 4096);
	uvm_vfree(p);
	uvm_purge();
	p = uvm_vmalloc(2 * 4096);
	p = uvm_vrealloc(p, 4096); /* shrinking moves the guard down */
	p[4096] = 1;
}

Test(api, guard_page_faults_with_uvm_guard)
{
	if (!kernel_has_guards())
		cr_skip_test("kernel lacks MADV_GUARD_INSTALL (Linux 6.13+)");
	expect_death(overflow_into_guard, NULL, SIGSEGV, NULL);
	expect_death(overflow_into_pooled_guard, NULL, SIGSEGV, NULL);
}

/* Non-static so that dladdr can name it in vmallocinfo; the touch after the call keeps it from being a tail call. */
__attribute__((noinline)) char *alloc_from_here(size_t size)
{
	char *p = uvm_vmalloc(size);

	p[0] = 1;
	return p;
}

static void no_thread_caches(void) { setenv("UVM_PCP", "0", 1); }

/* Without thread caches a freed area goes straight to its node's lazy list, where vmallocinfo shows it. */
Test(api, vmallocinfo_lists_live_then_unpurged, .init = no_thread_caches)
{
	char *buf = NULL;
	size_t len = 0;
	char line[256];
	char *a = alloc_from_here(3 * 4096), *b = alloc_from_here(4096);
	FILE *f;

	uvm_vfree(b);
	f = open_memstream(&buf, &len);
	uvm_vmallocinfo(f);
	fclose(f);
	snprintf(line, sizeof(line), "0x%016lx-0x%016lx   16384 alloc_from_here+0x", (unsigned long)(uintptr_t)a,
		 (unsigned long)(uintptr_t)a + 16384);
	cr_assert_not_null(strstr(buf, line), "no line for a in:\n%s", buf);
	cr_assert_not_null(strstr(buf, "pages=3 vmalloc N0=3\n"));
	cr_assert_not_null(strstr(buf, "] pages=3 vmalloc N0=3\n"), "no [module] after the caller");
	snprintf(line, sizeof(line), "0x%016lx-0x%016lx    8192 unpurged vm_area\n", (unsigned long)(uintptr_t)b,
		 (unsigned long)(uintptr_t)b + 8192);
	cr_assert_not_null(strstr(buf, line), "no unpurged line for b in:\n%s", buf);
	cr_assert_lt(strstr(buf, "alloc_from_here"), strstr(buf, "unpurged"), "live areas come first");
	free(buf);
}

Test(api, stats_follow_the_areas)
{
	struct uvm_stats st0, st;
	char *p[10];

	uvm_stats(&st0);
	for (int i = 0; i < 10; i++)
		p[i] = uvm_vmalloc((size_t)(i + 1) * 4096);
	uvm_stats(&st);
	cr_assert_eq(st.busy_count - st0.busy_count, 10);
	cr_assert_eq(st.busy_bytes - st0.busy_bytes, (55 + 10) * 4096);
	cr_assert_eq(st.allocs - st0.allocs, 10);
	cr_assert_geq(st.regions, 1);
	cr_assert_geq(st.reserved_bytes, (uint64_t)64 << 30);
	for (int i = 0; i < 10; i++)
		uvm_vfree(p[i]);
	uvm_stats(&st);
	cr_assert_eq(st.busy_count, st0.busy_count);
	cr_assert_eq(st.frees - st0.frees, 10);
	cr_assert_eq(st.cached_count, 10, "freed areas rest in this thread's cache");
	cr_assert_eq(st.cached_bytes, (55 + 10) * 4096);
	cr_assert_eq(st.lazy_count + st.pooled_count, 0);
	uvm_purge();
	uvm_stats(&st);
	cr_assert_eq(st.lazy_count + st.pooled_count + st.cached_count, 0);
	cr_assert_eq(st.free_bytes, st.reserved_bytes - st.regions * 4096 - st.busy_bytes);
}

Test(api, settings_lists_every_option)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	uvm_settings(f);
	fclose(f);
	cr_assert_not_null(strstr(buf, "UVM_ARENA_SIZE"));
	cr_assert_not_null(strstr(buf, "UVM_LAZY_MAX"));
	cr_assert_not_null(strstr(buf, "UVM_GUARD"));
	cr_assert_not_null(strstr(buf, "UVM_NODES"));
	free(buf);
}

/* The running library's version is the project's, MAJOR.MINOR.PATCH. */
Test(api, version)
{
	unsigned a, b, c;

	cr_assert_str_eq(uvm_version(), UVM_VERSION);
	cr_assert_eq(sscanf(uvm_version(), "%u.%u.%u", &a, &b, &c), 3);
}
