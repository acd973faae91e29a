/*
 * area.h - alloc_vmap_area / free_vmap_area: one area's way through the
 * thread caches, pools, the free tree, purge and growth, and back.
 */
#ifndef UVM_AREA_H
#define UVM_AREA_H

#include <stdbool.h>

#include "arena.h"
#include "heap.h"
#include "huge.h"
#include "pcp.h"
#include "vmap.h"

/* Everything but the owner's hit (h may be NULL: a thread past its exit). */
struct vmap_area *area_alloc_slow(struct heap *h, size_t usable, size_t align, int node, bool huge_api, int *err);

/* The parked key of an area asked for bytes (1 or more): its usable pages less one (pcp.parked_key). */
static uvm_always_inline uint64_t area_key(size_t bytes) { return (bytes - 1) >> UVM_PAGE_SHIFT; }

/*
 * The owner's pop of an area of pages pages (guard included) for bytes, made live; NULL when its list has none.
 * live: VA_LIVE_BIN (a bin's, which pcp_pop_bin makes VA_LIVE_PARK + k when the area is of the bin's size) or VA_LIVE_LIST.
 */
static uvm_always_inline struct vmap_area *area_pop(struct heap *h, size_t bytes, size_t pages, size_t align, const void *caller,
					 uint32_t live)
{
	struct vmap_area *va;

	if (unlikely(!heap_try_enter(h)))
		return NULL;
	va = live == VA_LIVE_BIN ? pcp_pop_bin(&h->pcp, pages, align, &live) : pcp_pop_order(&h->pcp, pages, align);
	heap_leave(h);
	if (likely(va)) {
		va->caller = caller;
		va->requested = bytes;
		atomic_store_explicit(&va->live, live, memory_order_relaxed);
	}
	return va;
}

/*
 * The hit: a live area of bytes (1 or more) rounded up to pages, aligned to
 * align (at least a page), from the exact bin of h's cache (h: the calling
 * thread's heap, or NULL) when its hottest area is so aligned, with plain
 * loads and stores and no call, so that it compiles to a leaf; NULL when there
 * is none, or bytes is 0 or too large for a bin, or the heap is claimed.
 * The bin is of the NUMA node the thread ran on at its last miss (pcp.hit).
 */
static uvm_always_inline struct vmap_area *area_alloc_hit_aligned(struct heap *h, size_t bytes, size_t align, const void *caller)
{
	if (unlikely(bytes - 1 >= (size_t)(PCP_BIN_PAGES - 2) << UVM_PAGE_SHIFT || !h))
		return NULL;
	return area_pop(h, bytes, ((bytes - 1) >> UVM_PAGE_SHIFT) + 2, align, caller, VA_LIVE_BIN);
}

/*
 * The same for an area too large for a bin: the hottest area of its order
 * list when it has exactly the pages asked for (a program recycling one
 * size of large block), so that it costs a bin's hit and not a search.
 * bytes: from a bin's largest on; a size no area has (one too large for
 * any) finds none, and the slow path says why.
 */
static inline struct vmap_area *area_alloc_hit_large(struct heap *h, size_t bytes, size_t align, const void *caller)
{
	return area_pop(h, bytes, ((bytes - 1) >> UVM_PAGE_SHIFT) + 2, align, caller, VA_LIVE_LIST);
}

/* Either hit, by size, for bytes of 1 or more and h not NULL. */
static inline struct vmap_area *area_alloc_hit_any(struct heap *h, size_t bytes, size_t align, const void *caller)
{
	if (likely(bytes - 1 < (size_t)(PCP_BIN_PAGES - 2) << UVM_PAGE_SHIFT))
		return area_pop(h, bytes, ((bytes - 1) >> UVM_PAGE_SHIFT) + 2, align, caller, VA_LIVE_BIN);
	return area_alloc_hit_large(h, bytes, align, caller);
}

/* Always in line: with two callers in malloc.c, out of line it cost every area hit a saved register. */
static uvm_always_inline struct vmap_area *area_alloc_hit(struct heap *h, size_t bytes, const void *caller)
{
	return area_alloc_hit_aligned(h, bytes, UVM_PAGE_SIZE, caller);
}

/*
 * The owner's hit of its parked area (pcp.h) for bytes (1 or more) when it
 * is of bytes' page count, made live as caller's and counted: its start,
 * or NULL.  Plain loads and stores of h and the area, no claim test:
 * claimers never touch the parked area.  The NUMA node is not asked: a
 * thread that moved gets its old node's area until its next miss, as the
 * bins' hits do (pcp.hit).
 */
static uvm_always_inline void *area_unpark(struct heap *h, size_t bytes, const void *caller)
{
	struct pcp *p = &h->pcp;
	struct vmap_area *va;
	uintptr_t a;

	if (area_key(bytes) != p->parked_key || !(a = p->parked))
		return NULL;
	__atomic_store_n(&p->parked, 0, __ATOMIC_RELAXED); /* the key stays: pcp.parked_key */
	/*
	 * Counted first: last, its add and return were the slab hit's, and
	 * malloc's area path jumped back into that path to share them.
	 */
	p->requested += bytes;
	va = p->parked_va;
	va->caller = caller;
	va->requested = bytes;
	atomic_store_explicit(&va->live, VA_LIVE_PARK + (uint32_t)area_key(bytes), memory_order_relaxed);
	return (void *)a;
}

/* An entry point's hit of size bytes handed out: counted as asked for in h (uvm_frag_stats), its address. */
static inline void *area_handed(struct heap *h, const struct vmap_area *va, size_t size)
{
	h->pcp.requested += size;
	return (void *)va->va_start;
}

/* Whether an area of bytes is past every bin, for an order list's hit (area_alloc_hit_large). */
static inline bool area_past_bins(size_t bytes) { return bytes > (size_t)(PCP_BIN_PAGES - 2) << UVM_PAGE_SHIFT; }

/*
 * Make va live for usable bytes asked (a page multiple): VA_LIVE_BIN,
 * VA_LIVE_PARK + k (a bin's of the size asked) or VA_LIVE_LIST, with
 * va->cache naming the list its owner's free puts it on, when its owner
 * is this thread's heap and it is a cacheable user area, not sampled
 * (prof.h); VA_LIVE otherwise.  Again whenever its size changes.
 */
static inline void area_set_live(struct vmap_area *va, size_t usable)
{
	struct heap *h = uvm__heap;
	size_t pages = va_pages(va);
	bool own = h && va->heap == h && pages <= uvm__pcp_high_max && !(va->flags & (VA_SLAB | VA_PROF));
	uint32_t live = VA_LIVE;

	if (own && pages >= PCP_BIN_PAGES)
		live = VA_LIVE_LIST;
	else if (own)
		live = va_size(va) == usable + UVM_PAGE_SIZE ? pcp_live_bin(pages) : VA_LIVE_BIN; /* whole from a larger bin: not parked */
	va->cache = own ? pcp_list_of(&h->pcp, va) : NULL;
	atomic_store_explicit(&va->live, live, memory_order_relaxed);
}

/*
 * A live area with usable bytes (a page multiple) plus its guard page,
 * aligned to align (a power of two, at least a page), on NUMA node node (-1:
 * the calling thread's).  huge_api: asked for through uvm_vmalloc_huge.
 * NULL with *err set to ENOMEM when no address space or metadata is left.
 *
 * Huge-page policy, alignment and explicit NUMA placement only matter on
 * a miss.
 */
static inline struct vmap_area *area_alloc(size_t usable, size_t align, int node, bool huge_api, const void *caller,
					   int *err)
{
	struct vmap_area *va = NULL;

	/* A huge area is one aligned as the slow path aligns it (pcp_get reuses any such area, as this does). */
	if (likely(align == UVM_PAGE_SIZE && node < 0)) {
		size_t hit_align = huge_api ? uvm__huge_api_align : UVM_PAGE_SIZE;
		struct heap *h = uvm__heap;

		va = likely(h) ? area_alloc_hit_any(h, usable, hit_align, caller) : NULL;
		/* Here, not in area_pop: the entry points' own hits never zero, and a store less is an instruction less. */
		if (va)
			va->flags |= VA_REUSED;
	}
	if (unlikely(!va) && (va = area_alloc_slow(heap_self(), usable, align, node, huge_api, err))) {
		va->caller = caller;
		area_set_live(va, usable);
	}
	return va;
}

/*
 * A live area of usable bytes aligned to align from h's cache, which takes
 * a fresh huge page in when it has none: for a thread that makes many areas
 * of one size (slabs, slab.h's SLAB_HUGE_AFTER).  NULL when the cache has
 * none and no huge page could be had (THP off, UVM_THP huge-only or never,
 * or auto while huge pages do not pay);
 * the caller then takes area_alloc's way.  The area may hold old data.
 */
struct vmap_area *area_alloc_stocked(struct heap *h, size_t usable, size_t align);

/*
 * The area in a busy tree that starts at addr (live or cached), or NULL;
 * addr lies in region r, or r is NULL: in none.  An unaligned addr reads
 * its page's slot and is no area's start, so the frees' leaves test no
 * alignment (two instructions of uvm_vfree's and of free's for an area).
 */
static inline struct vmap_area *area_at_in(const struct region *r, uintptr_t addr)
{
	struct vmap_area *va = r ? atomic_load_explicit(region_slot(r, addr), memory_order_acquire) : NULL;

	/* A stale slot may name a recycled object: objects are never unmapped, so reading it is safe. */
	return va && va->va_start == addr ? va : NULL;
}

/* The same, the region found; an unaligned addr skips the search. */
static inline struct vmap_area *area_at(uintptr_t addr) { return area_at_in(addr & (UVM_PAGE_SIZE - 1) ? NULL : region_of(addr), addr); }

/*
 * Push h's own area va, its live flag checked, onto its list (bin: a bin's)
 * unless the cache has no room left for it (the slow path looks at high,
 * grows it or drains), or, for an order list, a cached neighbour waits to
 * be joined (pcp_put's way): false then.
 */
static uvm_always_inline bool area_push_own(struct heap *h, struct vmap_area *va, bool bin)
{
	struct pcp_list *l = va->cache;

	if (!heap_try_enter(h))
		return false;
	if (bin ? unlikely(pcp_bin_full(l)) && !pcp_borrow(&h->pcp, l, va)
		: h->pcp.room < va_pages(va) || pcp_joins_next(&h->pcp, va)) {
		heap_leave(h);
		return false;
	}
	atomic_store_explicit(&va->live, 0, memory_order_relaxed);
	if (bin) {
		pcp_push_bin(l, va);
	} else {
		h->pcp.room -= va_pages(va);
		pcp_push(&h->pcp, va);
	}
	heap_leave(h);
	return true;
}

/* h's own live area va at addr, of parked key key, parked (the parked slot empty), its free counted in its bin. */
static uvm_always_inline void area_park(struct heap *h, struct vmap_area *va, uintptr_t addr, uint64_t key)
{
	struct pcp *p = &h->pcp;
	struct pcp_list *l = va->cache;

	atomic_store_explicit(&va->live, VA_PARKED, memory_order_relaxed);
	word_inc(&l->parks); /* read by claimers' sums: a park marks no heap busy */
	p->parked_va = va;
	__atomic_store_n(&p->parked_list, l, __ATOMIC_RELAXED);
	__atomic_store_n(&p->parked, addr, __ATOMIC_RELAXED);
	__atomic_store_n(&p->parked_key, key, __ATOMIC_RELAXED);
}

/*
 * The owner's free (h: the calling thread's heap, or NULL) of its own live
 * area of bin size, as a leaf: parked when it may be and the slot is
 * empty, else onto its bin: AREA_FREED when done.  AREA_REPARK: the slot
 * holds an area of its size, for the caller's tail call of area_repark
 * (the last freed of a size must be the next handed out); AREA_LIST:
 * an order list's area of h's, in *va, for the caller's tail call of
 * area_free_own_list (a call in here would cost the leaf the registers
 * that keep the pointer).  AREA_NOT_MINE (nothing done): area_take and
 * area_free decide, report a bad pointer, wait out a claim, or drain a
 * cache that this free would take over high.
 */
enum area_hit { AREA_NOT_MINE, AREA_FREED, AREA_LIST, AREA_REPARK };

static uvm_always_inline enum area_hit area_free_own_in(struct heap *h, const struct region *r, uintptr_t addr, struct vmap_area **va)
{
	uint32_t live;

	*va = area_at_in(r, addr);
	/* A heap-less area never reads VA_LIVE_BIN or VA_LIVE_LIST: no test of h. */
	if (!*va || (*va)->heap != h)
		return AREA_NOT_MINE;
	live = atomic_load_explicit(&(*va)->live, memory_order_relaxed);
	if (likely(live >= VA_LIVE_PARK)) {
		uint64_t key = live - VA_LIVE_PARK;

		if (!h->pcp.parked) {
			area_park(h, *va, addr, key);
			return AREA_FREED;
		}
		if (key == h->pcp.parked_key)
			return AREA_REPARK;
	} else if (live != VA_LIVE_BIN) {
		return live == VA_LIVE_LIST ? AREA_LIST : AREA_NOT_MINE;
	}
	return area_push_own(h, *va, true) ? AREA_FREED : AREA_NOT_MINE;
}

/*
 * The owner's free of its own live area va of bin size while another of
 * its size is parked: that one onto its bin and va parked in its place
 * (LIFO: the last freed is the next handed out), or va onto its bin when
 * the other could not go (its bin full, the heap claimed), else the slow
 * way's free.  Whole, so that the frees' leaves tail-call it with no frame
 * of their own (a wrapper that took the slow way on failure cost 9
 * instructions more a free).  An area of another size goes onto its bin,
 * the slot as it is: moving the parked one out on every free of a program
 * of many sizes cost vmbench random_size 22 % more time, kvfree_rcu 12 %.
 */
void area_repark(struct heap *h, struct vmap_area *va);

/* The owner's free of its own live area va of an order list, unless a cached neighbour follows it (pcp_put joins those): true if done. */
bool area_free_own_list(struct heap *h, struct vmap_area *va);

/* reclaim_and_purge_vmap_areas(): every thread cache drained, then a full purge; the pages that left. */
size_t area_reclaim_and_purge(void);
/* Free an area area_take returned: to the thread's cache, its owner's inbox, or the node's lazy list. */
void area_free(struct vmap_area *va);
/*
 * Free an area area_take returned that no running thread's working set
 * holds, the calling thread's included: onto its node's lazy list, still
 * backed, where any thread's miss of its shape may take it until the next
 * purge (slab.c's release_orphan says why).
 */
void area_free_lazily(struct vmap_area *va);
/* The live area that starts at addr, made not live (free's first step); NULL if none. */
struct vmap_area *area_take(uintptr_t addr);
/* The live area that starts at addr, or NULL. */
struct vmap_area *area_find(uintptr_t addr);
/*
 * Realloc's move: the first bytes of from into to.  Whole pages move with
 * mremap instead of being copied from AREA_MOVE_MIN on when to is fresh
 * (memcpy would fault in every page of it), from AREA_MOVE_MIN_BACKED on
 * when to is already backed (mremap must free its pages); measured in
 * docs/measurements.md.  The kernel may refuse (vm.max_map_count): then memcpy.
 */
#define AREA_MOVE_MIN ((size_t)64 << 10)
#define AREA_MOVE_MIN_BACKED ((size_t)16 << 20)
void area_copy(struct vmap_area *from, struct vmap_area *to, size_t bytes);
/* A zeroing allocation's area va, cleared: a reused one memset, a fresh one (zero already) below a huge page faulted in whole. */
void area_zero(struct vmap_area *va);
/* Change a live area's usable size in place (vrealloc): shrink, or grow into the free range after it.  0 or ENOMEM. */
int area_resize(struct vmap_area *va, size_t usable);

static inline size_t area_usable(const struct vmap_area *va) { return va_size(va) - UVM_PAGE_SIZE; }

#endif
