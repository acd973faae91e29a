/*
 * tests/unit/vm/test_vnode.c - vmap nodes (lib/vm/vnode.c): a lookup from any byte of an
 * area finds it across nodes; busy areas filed under their owner thread's
 * node; a second region when the first is full; the busy trees well formed
 * through splits and joins.
 */
#include "helpers.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

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

struct churn_lane {
	unsigned seed;
	int bad; /* blocks whose busy area did not match the model */
};

/*
 * Blocks of 1..40 pages grown and shrunk in place (vrealloc: joins with
 * cached neighbours, splits of tails) and allocated from trimmed cached
 * areas (splits), each checked at the end against the size it was given.
 */
static void *split_and_join(void *arg)
{
	enum { SLOTS = 64, OPS = 20000 };
	struct churn_lane *l = arg;
	char *p[SLOTS] = { 0 };
	size_t size[SLOTS] = { 0 };

	for (int i = 0; i < OPS; i++) {
		unsigned k = (unsigned)rand_r(&l->seed) % SLOTS, what = (unsigned)rand_r(&l->seed) % 3;
		size_t n = (1 + (size_t)rand_r(&l->seed) % 40) * 4096;

		if (!p[k]) {
			p[k] = uvm_vmalloc(n);
			size[k] = n;
		} else if (what == 0) {
			uvm_vfree(p[k]);
			p[k] = NULL;
		} else {
			p[k] = uvm_vrealloc(p[k], n);
			size[k] = n;
		}
	}
	for (int k = 0; k < SLOTS; k++) {
		struct vmap_area va;

		if (!p[k])
			continue;
		/* A cached area up to an eighth larger (four pages at least) is handed out whole (pcp_whole_max): a block may have that more. */
		l->bad += !vn_busy_lookup((uintptr_t)p[k], &va) || va.va_start != (uintptr_t)p[k] ||
			  va.va_end < va.va_start + size[k] + 4096 ||
			  va.va_end > va.va_start + pcp_whole_max(size[k] / 4096 + 1) * 4096 ||
			  uvm_vsize(p[k]) != va.va_end - va.va_start - 4096;
		uvm_vfree(p[k]);
	}
	return NULL;
}

/* The busy trees stay ordered, balanced and counted while two threads split and join their areas. */
Test(vnode, busy_trees_stay_well_formed_through_splits_and_joins)
{
	struct churn_lane l[2] = { { 1, 0 }, { 2, 0 } };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, split_and_join, &l[1]), 0);
	split_and_join(&l[0]);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(l[0].bad + l[1].bad, 0, "%d blocks' busy areas did not match their sizes", l[0].bad + l[1].bad);
	cr_assert_eq(vn_busy_check(), 0, "a busy tree is out of order, unbalanced or miscounted");
}
