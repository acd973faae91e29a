/*
 * tests/drained.h - the end state of a test that freed everything and
 * purged, for tests that link the library's internals: every cache, lazy
 * list and pool empty, every reserved byte free again (less each region's
 * guard page), and no area object leaked.
 */
#ifndef UVM_TEST_DRAINED_H
#define UVM_TEST_DRAINED_H

#include <criterion/criterion.h>

#include "arena.h"
#include "meta.h"
#include "uvmalloc.h"

/* After uvm_purge(), with nothing live. */
static inline void assert_all_given_back(void)
{
	struct uvm_stats st;

	cr_assert_eq(arena_check(), 0, "a free tree is out of order, unbalanced or miscounted");
	uvm_stats(&st);
	cr_assert_eq(st.cached_count + st.lazy_count + st.pooled_count, 0);
	cr_assert_eq(st.free_bytes, st.reserved_bytes - st.regions * 4096);
	/* With nothing busy, cached, lazy or pooled, each area object left is a free range. */
	cr_assert_eq(meta_va_live(), st.free_count, "%zu area objects live for %lu free ranges", meta_va_live(),
		     (unsigned long)st.free_count);
}

#endif
