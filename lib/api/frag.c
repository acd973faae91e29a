/*
 * frag.c - uvm_frag_stats(): where resident memory that holds no live data
 * sits, and how broken up the used address space is.
 *
 * The kernel's /proc/vmallocinfo answers "what is allocated"; a user of an
 * allocator asks "what do I pay for it".  The old figure, 1 - largest free /
 * free over the whole reservation, could not move: a fresh 64 GiB region
 * kept it near 0 whatever the heap held.  Here free ranges count only below
 * each region's committed top, where holes between live areas are, and
 * every byte of resident memory that is not a live block is put where it
 * sits: thread caches, lazy lists, pools, freed slab objects, slab tails,
 * or metadata outside the regions.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "frag.h"

#include "arena.h"
#include "heap.h"
#include "init.h"
#include "meta.h"
#include "os.h"
#include "pcp.h"
#include "slab.h"
#include "vnode.h"
#include "uvmalloc.h"

/* Usable bytes of live blocks: areas that are not slabs, less their guard pages, and slab objects at class size. */
static uint64_t live_bytes(const struct uvm_stats *st, const struct uvm_frag *f)
{
	uint64_t slab_area = SLAB_SIZE, objects = 0, areas, area_bytes;

	for (unsigned c = 0; c < UVM_FRAG_CLASSES + UVM_FRAG_CLASSES_MORE; c++)
		objects += uvm_frag_class_at(f, c)->live * uvm_frag_class_at(f, c)->size;
	areas = st->busy_count > st->slabs ? st->busy_count - st->slabs : 0;
	area_bytes = st->busy_bytes > st->slabs * slab_area ? st->busy_bytes - st->slabs * slab_area : 0;
	return (area_bytes > areas * UVM_PAGE_SIZE ? area_bytes - areas * UVM_PAGE_SIZE : 0) + objects;
}

uint64_t frag_metadata_bytes(void) { return heap_bytes() + meta_bytes() + arena_map_resident(); }

uint64_t frag_handed_bytes(const struct uvm_stats *st)
{
	return st->small_alloc_bytes + st->area_alloc_bytes - slab_made() * SLAB_AREA_BYTES;
}

int uvm_frag_stats(struct uvm_frag *out, size_t size)
{
	struct uvm_frag f;
	struct uvm_stats st;
	struct uvm_span sp;

	if (size < offsetof(struct uvm_frag, span_bytes))
		return EINVAL;
	memset(&f, 0, sizeof(f));
	if (!uvm_init()) {
		slab_frag(&f);
		uvm_stats(&st);
		arena_span(&sp);
		f.span_bytes = sp.bytes;
		f.span_free_bytes = sp.free_bytes;
		f.span_free_count = sp.free_count;
		f.span_largest_free = sp.largest;
		f.span_fragmentation = sp.free_bytes ? 1.0 - (double)sp.largest / (double)sp.free_bytes : 0;
		f.resident_bytes = arena_resident();
		f.live_bytes = live_bytes(&st, &f);
		f.overhead_bytes = f.resident_bytes > f.live_bytes ? f.resident_bytes - f.live_bytes : 0;
		f.cached_bytes = st.cached_bytes;
		f.lazy_bytes = st.lazy_bytes;
		f.pooled_bytes = st.pooled_bytes;
		f.rounding_bytes = vn_busy_rounding();
		os_process_rss(&f.process_rss_bytes, &f.process_peak_rss_bytes);
		os_process_faults(&f.process_minor_faults, &f.process_major_faults);
		f.metadata_bytes = frag_metadata_bytes();
		f.requested_bytes = pcp_requested();
		f.handed_bytes = frag_handed_bytes(&st);
	}
	memcpy(out, &f, size < sizeof(f) ? size : sizeof(f));
	return 0;
}
