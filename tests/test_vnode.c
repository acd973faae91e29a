/*
 * tests/test_vnode.c - vmap nodes (lib/vnode.c): a lookup from any byte of an
 * area finds it, across zones and nodes; owners; a second region when the
 * first is full.
 */
#include "helpers.h"

#include <stdint.h>

#include "arena.h"
#include "area.h"
#include "uvmalloc.h"
#include "vnode.h"

static void four_nodes(void) { setenv("UVM_NODES", "4", 1); }

/* An area spanning many 64 KiB zones is filed under its start's node; every interior pointer must find it. */
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

/* Areas start on different zones, so they spread over the nodes' busy trees. */
Test(vnode, busy_areas_spread_over_nodes, .init = four_nodes)
{
	enum { N = 64 };
	char *p[N];
	struct vmap_area buf[N];
	size_t per_node[4], total = 0;

	for (int i = 0; i < N; i++)
		p[i] = uvm_vmalloc(15 * 4096); /* 16 pages with the guard: one zone each */
	for (unsigned id = 0; id < 4; id++) {
		per_node[id] = vn_busy_snapshot(id, 0, buf, N);
		total += per_node[id];
		for (size_t k = 0; k < per_node[id]; k++)
			cr_assert_eq((buf[k].va_start / VN_ZONE_SIZE) % 4, id, "area filed under the wrong node");
	}
	cr_assert_eq(total, N);
	for (unsigned id = 0; id < 4; id++)
		cr_assert_geq(per_node[id], N / 4 - 1, "node %u holds %zu of %d", id, per_node[id], N);
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
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
