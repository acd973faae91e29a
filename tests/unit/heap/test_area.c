/*
 * tests/unit/heap/test_area.c - the whole allocation path (lib/heap/area.c): in steady
 * state an alloc + touch + free loop makes no syscall and takes no page
 * fault, for every size from 1 to 512 pages, huge or not; and
 * UVM_POPULATE=1 faults a fresh area in with one call.  Counts, not times.
 */
#include "helpers.h"

#include "os.h"
#include "uvmalloc.h"

static void touch(char *p, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		p[i * 4096] = (char)i;
}

static void steady_state(void *(*alloc)(size_t), const char *what)
{
	enum { WARM = 2, LOOPS = 20 };

	pin_to_cpu0();
	for (size_t n = 1; n <= 512; n++) {
		uint64_t calls;
		long faults;

		for (int i = 0; i < WARM; i++) {
			char *p = alloc(n * 4096);

			touch(p, n);
			uvm_vfree(p);
		}
		calls = os_syscalls();
		faults = minor_faults();
		for (int i = 0; i < LOOPS; i++) {
			char *p = alloc(n * 4096);

			touch(p, n);
			uvm_vfree(p);
		}
		faults = minor_faults() - faults;
		cr_assert_eq(os_syscalls(), calls, "%s of %zu pages: %lu syscalls in %d loops", what, n,
			     (unsigned long)(os_syscalls() - calls), LOOPS);
		cr_assert_eq(faults, 0, "%s of %zu pages: %ld page faults in %d loops", what, n, faults, LOOPS);
	}
}

Test(area, steady_state_needs_no_syscall_and_no_fault) { steady_state(uvm_vmalloc, "uvm_vmalloc"); }
Test(area, steady_state_huge_needs_no_syscall_and_no_fault) { steady_state(uvm_vmalloc_huge, "uvm_vmalloc_huge"); }

static void caches_off(void) { setenv("UVM_PCP", "0", 1); }

/* The same loop without thread caches: pools cover up to 255 usable pages, beyond that every loop faults. */
Test(area, without_caches_large_areas_fault, .init = caches_off)
{
	long faults;

	pin_to_cpu0();
	for (int i = 0; i < 3; i++)
		uvm_vfree(uvm_vmalloc(300 * 4096));
	faults = minor_faults();
	for (int i = 0; i < 10; i++) {
		char *p = uvm_vmalloc(300 * 4096);

		touch(p, 300);
		uvm_vfree(p);
	}
	cr_assert_geq(minor_faults() - faults, 10, "the comparison the caches are for: 300-page loops fault");
}

static void populate(void) { setenv("UVM_POPULATE", "1", 1); }

/* UVM_POPULATE=1: a fresh area arrives backed, so touching it takes no fault. */
Test(area, populate_backs_fresh_areas_in_one_call, .init = populate)
{
	long rss, faults;
	uint64_t madvises;
	struct uvm_stats st;
	char *p;

	uvm_vfree(uvm_vmalloc(4096)); /* set-up and the region's first commit are not what is counted */
	uvm_stats(&st);
	madvises = st.madvise_calls;
	rss = rss_bytes();
	p = uvm_vmalloc(77 * 4096);
	cr_assert_geq(rss_bytes() - rss, 77 * 4096, "the area was not backed at allocation");
	uvm_stats(&st);
	cr_assert_eq(st.madvise_calls - madvises, 1, "populating took %lu madvise calls",
		     (unsigned long)(st.madvise_calls - madvises));
	faults = minor_faults();
	touch(p, 77);
	if (FRESH_FAULTS_COUNTABLE)
		cr_assert_eq(minor_faults() - faults, 0);
	uvm_vfree(p);
}
