/*
 * tests/unit/vm/test_vnode.c - vmap nodes (lib/vm/vnode.c): a lookup from any byte of an
 * area finds it across nodes; busy areas filed under their owner thread's
 * node; a second region when the first is full.
 */
#include "helpers.h"

#include <pthread.h>
#include <stdint.h>

#include "arena.h"
#include "area.h"
#include "uvmalloc.h"
#include "vnode.h"

static void four_nodes(void) { setenv("UVM_NODES", "4", 1); }

/* Every pointer into an area, of any size, finds it whichever node it is filed under. */
Test(vnode, lookup_from_any_pointer_into_an_area, .init = four_nodes)
{
	size_t sizes[] = { 4096, 15 * 4096, 16 * 4096, 100 * 4096, 1000 * 4096 };
	char *p[5];

	for (int i = 0; i < 5; i++)
		p[i] = uvm_vmalloc(sizes[i]);
	cr_assert_eq(vn_count(), 4);
	for (int i = 0; i < 5; i++) {
		/* every page, the guard page included, and the last byte */
		for (size_t off = 0; off <= sizes[i] + 4095; off += off + 4096 <= sizes[i] + 4095 ? 4096 : 4095) {
			struct vmap_area va;

			cr_assert(vn_busy_lookup((uintptr_t)p[i] + off, &va), "area %d not found at offset %zu", i, off);
			cr_assert_eq(va.va_start, (uintptr_t)p[i]);
			cr_assert_eq(va.va_end, (uintptr_t)p[i] + sizes[i] + 4096);
			if (off == sizes[i] + 4095)
				break;
		}
	}
	struct vmap_area va;
	uvm_vfree(p[3]);
	cr_assert_not(vn_busy_lookup((uintptr_t)p[3] + 5000, &va), "a freed area is not busy");
	cr_assert_not(vn_busy_lookup((uintptr_t)&va, &va), "a stack address is not ours");
	cr_assert_null(area_find((uintptr_t)p[4] + 4096), "only a start finds an area exactly");
	cr_assert_not_null(area_find((uintptr_t)p[4]));
}

/* A thread's areas are filed under its own node; the next thread gets the next node. */
static void *alloc_some(void *arg)
{
	char **p = arg;

	for (int i = 0; i < 16; i++)
		p[i] = uvm_vmalloc(15 * 4096);
	return NULL;
}

static size_t filed_under(unsigned id, char **p, int n)
{
	struct vmap_area buf[64];
	size_t k = vn_busy_snapshot(id, 0, buf, 64), found = 0;

	for (size_t j = 0; j < k; j++)
		for (int i = 0; i < n; i++)
			found += buf[j].va_start == (uintptr_t)p[i];
	return found;
}

Test(vnode, busy_areas_filed_by_owner_thread, .init = four_nodes)
{
	char *mine[16], *theirs[16];
	pthread_t t;
	unsigned me;

	alloc_some(mine);
	me = vn_owner_id();
	cr_assert_eq(pthread_create(&t, NULL, alloc_some, theirs), 0);
	pthread_join(t, NULL);
	cr_assert_eq(filed_under(me, mine, 16), 16, "my areas are not all under my node %u", me);
	cr_assert_eq(filed_under((me + 1) % 4, theirs, 16), 16, "the next thread's areas are not under node %u", (me + 1) % 4);
	for (unsigned id = 0; id < 4; id++)
		if (id != me)
			cr_assert_eq(filed_under(id, mine, 16), 0);
	for (int i = 0; i < 16; i++) {
		uvm_vfree(mine[i]);
		uvm_vfree(theirs[i]);
	}
}

static void small_regions(void) { setenv("UVM_ARENA_SIZE", "64M", 1); }

/* When a region is full another is reserved, and both serve. */
Test(vnode, second_region_when_the_first_is_full, .init = small_regions)
{
	char *p[12];
	struct uvm_stats st;

	for (int i = 0; i < 12; i++) {
		p[i] = uvm_vmalloc(10 << 20);
		cr_assert_not_null(p[i]);
		p[i][(10 << 20) - 1] = 1;
	}
	uvm_stats(&st);
	cr_assert_geq(st.regions, 2);
	cr_assert_eq(st.reserved_bytes % (64 << 20), 0);
	for (int i = 0; i < 12; i++)
		uvm_vfree(p[i]);
	uvm_purge();
	cr_assert_eq(arena_check(), 0);
	uvm_stats(&st);
	cr_assert_eq(st.free_bytes, st.reserved_bytes - st.regions * 4096);
}
