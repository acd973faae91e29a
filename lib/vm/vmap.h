/*
 * vmap.h - struct vmap_area and the free-space tree (kernel mm/vmalloc.c §
 * "free vmap_area tree").
 *
 * Glossary, used across lib/:
 *   VA / area   a half-open address range [va_start, va_end) in a region;
 *               a busy area's last page is its guard page.
 *   free tree   every free range of every region: an rb-tree keyed by
 *               address, augmented with subtree_max_size, plus the same
 *               ranges on an address-sorted list for O(1) neighbours.
 *   busy/lazy   an area handed out / freed but not yet purged (vnode.h).
 *
 * This file is pure data-structure code: no locks, no allocation.  VA objects
 * come in from the caller, and objects freed by merging go out on a list the
 * caller returns to the metadata pool after dropping its lock.
 */
#ifndef UVM_VMAP_H
#define UVM_VMAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rbtree.h"
#include "util.h"

/*
 * va->flags: bits 0..7 state, bits 8..15 the NUMA node of its pages,
 * bits 16.. owner vmap node id + 1 (0: none), as the kernel's vn_id encoding.
 */
#define VA_REUSED 0x1u  /* handed out again from a cache or pool: may hold old data, zeroing must memset (set where a zeroing allocation may take it: area_alloc and the slow path, not the entry points' hits) */
#define VA_HUGE 0x2u    /* its 2 MiB-aligned body is MADV_HUGEPAGE */
#define VA_HUGETLB 0x4u /* its 2 MiB-aligned body is mapped from the hugetlb pool */
#define VA_SLAB 0x8u    /* a slab of small objects (slab.c), not a user's area */
#define VA_MOVED 0x10u  /* holds pages mremap moved in: a VMA of its own until given back */
#define VA_PROF 0x20u  /* a sampled allocation of the heap profile (prof.h): its owner's frees take the slow path */
#define VA_UNFILED 0x40u /* cached, in no busy tree of its own: inside its span owner's range (vnode.h) */
#define VA_DENSE 0x80u   /* cut from a huge page taken for slabs (area_alloc_stocked): it serves slabs only (pcp.c) */
#define VA_NID_SHIFT 8

/*
 * An area's states, the one table of them (a file that moves areas between
 * states names the move; the busy trees and the page map go together: an
 * area is in its region's page map exactly while it is in a busy tree):
 *
 *   state       linked in                              page map  live          va->cache
 *   free        its NUMA node's free tree (arena.c)    no        0             NULL
 *   live        a vmap node's busy tree (vnode.c)      yes       VA_LIVE_BIN   its bin or list, for
 *                                                                VA_LIVE_PARK  the owner's in-line free
 *                                                                VA_LIVE_LIST
 *                                                                VA_LIVE       NULL (another heap's,
 *                                                                              too large, a slab, sampled)
 *   cached      busy tree, and a bin or order list     yes       0             that list (pcp.c)
 *               of its heap's cache; or, unfiled
 *               (VA_UNFILED), only inside the busy-tree
 *               range of the area before it (its span,
 *               vnode.h), and that list
 *   in transit  busy tree (another thread's free,      yes       VA_FREEING    the owner's list, until
 *               area_take to free_foreign)                                     free_foreign clears it
 *   parked      busy tree, and its heap's parked slot  yes       VA_PARKED     its bin (pcp.h's parked)
 *   inbox       busy tree, and its owner's inbox       yes       0             NULL
 *   lazy        its vmap node's lazy tree (purge.c)    no        0             NULL
 *   pooled      its vmap node's pool list (vnode.c)    no        0             NULL
 *
 * live -> cached, parked, inbox or lazy/pooled is a free (area.c); cached
 * or parked -> live a hit; parked -> cached the owner's next slow path, or
 * its next free of another area; cached -> lazy/pooled a drain or decay;
 * lazy -> free a purge; pooled -> live a pool hit; free -> live a carve
 * from the tree.
 *
 * va->live: 0 when no user owns it (cached, lazy, pooled, in an inbox).
 * VA_LIVE_BIN: a user's, and its owner heap's thread may free it straight
 * onto a bin of its cache (bin size, caching on, not a slab), which that
 * free tells from a single comparison; VA_LIVE_PARK + k: the same, and
 * parked by that free when the slot is empty; VA_LIVE_LIST: the same for an
 * order list (a larger area), whose free also looks for a neighbour to
 * join first; VA_LIVE: any other user's area.
 * The owner's thread clears it with a plain store, others by exchange.
 */
#define VA_LIVE 1u
#define VA_LIVE_BIN 2u
#define VA_LIVE_LIST 3u
/*
 * Another thread's free in progress (area_take to free_foreign): neither
 * live nor cached.  While it ran with the flag already 0, the area still
 * named its owner's list in va->cache, and the owner, joining its cached
 * neighbours (pcp_put, vrealloc), took it for a cached one and unlinked an
 * area that was on no list.
 */
#define VA_FREEING 4u
/* Its owner's last freed area, in no list (pcp.h's parked): neither live nor cached, as VA_FREEING. */
#define VA_PARKED 5u
/*
 * VA_LIVE_PARK + k: as VA_LIVE_BIN, for an area of k + 2 pages (k usable
 * pages less one: pcp.h's parked key) handed out for a size of that
 * bin, which its owner's free may park (area.h's area_free_own_in).  Set
 * where the area is handed out, which knows both sizes already: the free
 * reads the key with the live word, where it loaded the size asked for
 * and tested it against the area's end and the park limit (11
 * instructions).  With the profile's countdown (prof.c's count_down),
 * uvm_vmalloc+uvm_vfree of a page took 82 -> 68 instructions and 4.16 ->
 * 3.93 ns, malloc+free of 4 KiB 104 -> 91 and 4.58 -> 3.77 ns (tcmalloc
 * 3.64; tools/hotpath, pinned, medians of 7 interleaved runs).
 */
#define VA_LIVE_PARK 8u
/* Whether a live word's value is a user's (VA_LIVE, VA_LIVE_BIN, VA_LIVE_LIST, VA_LIVE_PARK + k). */
static inline bool va_owned(uint32_t live) { return live - 1 < VA_LIVE_LIST || live >= VA_LIVE_PARK; }
#define VA_OWNER_SHIFT 16

struct vmap_area {
	/* The first cache line holds what a thread cache's hit and the owner's free touch; the trees' fields follow. */
	uintptr_t va_start;
	struct list_head list;  /* free list, lazy list, pool list or a private list */
	union {
		size_t subtree_max_size; /* free tree only */
		const void *caller;      /* busy and lazy only: who allocated it */
	};
	uint32_t flags;
	_Atomic uint32_t live; /* VA_LIVE, VA_LIVE_BIN, VA_LIVE_LIST or VA_LIVE_PARK + k while a user owns it, VA_FREEING, VA_PARKED, else 0 */
	void *cache;           /* the thread cache (pcp.c) it rests in, or NULL */
	struct heap *heap;     /* the thread heap that allocated it, whose cache its free feeds (heap.h); NULL: none */
	size_t requested;      /* live: the bytes its user asked for (its page rounding is uvm_frag's rounding_bytes) */
	uintptr_t va_end;
	struct rb_node rb;      /* free tree, or a node's busy tree */
	/*
	 * A filed busy area's span: its busy-tree entry holds [va_start,
	 * span_end), its own pages and then the unfiled cached areas that its
	 * thread split off it, so that those splits and their joins take no
	 * lock (vnode.h).  0, or va_end, when it holds only its own.
	 */
	uintptr_t span_end;
};
_Static_assert(offsetof(struct vmap_area, va_end) == 64, "a hit's fields fill the object's first line");

static inline size_t va_size(const struct vmap_area *va) { return va->va_end - va->va_start; }
/* The end of the range an area's busy-tree entry holds: its span's, or its own (vnode.h). */
static inline uintptr_t va_tree_end(const struct vmap_area *va)
{
	/*
	 * The end first: an unlocked split (vn_busy_split_local) stores the
	 * span's end and then the area's, so a new end read here brings the
	 * span with it, and the range never reads short.
	 */
	uintptr_t end = __atomic_load_n(&va->va_end, __ATOMIC_ACQUIRE), span = __atomic_load_n(&va->span_end, __ATOMIC_RELAXED);

	return span > end ? span : end;
}
static inline size_t va_pages(const struct vmap_area *va) { return va_size(va) >> UVM_PAGE_SHIFT; }
static inline unsigned va_nid(const struct vmap_area *va) { return (va->flags >> VA_NID_SHIFT) & 0xff; }

struct va_tree {
	struct rb_root root;
	struct list_head list; /* every free VA in address order */
};

void va_tree_init(struct va_tree *t);

/* Largest free range in the tree (the root's subtree_max_size). */
size_t va_tree_largest(const struct va_tree *t);
/* The largest part of a free range that lies inside [lo, hi), in O(log n). */
size_t va_tree_largest_in(const struct va_tree *t, uintptr_t lo, uintptr_t hi);
/* The area of an address-ordered tree of disjoint areas (a free tree's, a busy tree's) that holds addr, or NULL. */
struct vmap_area *va_containing(const struct rb_root *root, uintptr_t addr);

/*
 * Carve [*addr, *addr + size) with *addr aligned to align and inside
 * [vstart, vend) out of the lowest-addressed free range that can host it.
 * A split in the middle needs a second VA object: *spare is used (and set to
 * NULL) then; a range used whole leaves the tree and its object goes on
 * absorbed.  Returns 0, or ENOMEM when nothing fits (or no spare was given
 * for a split).
 */
int va_alloc(struct va_tree *t, size_t size, size_t align, uintptr_t vstart, uintptr_t vend,
	     struct vmap_area **spare, struct list_head *absorbed, uintptr_t *addr);

/*
 * Give [va_start, va_end) back: merge with the free neighbours on both sides
 * or link va on its own.  Objects absorbed by the merge go on absorbed.
 * Returns EEXIST (and links nothing) if va overlaps a free range.
 */
int va_merge_or_add(struct va_tree *t, struct vmap_area *va, struct list_head *absorbed);

/* The free VA that starts exactly at addr, or NULL (vrealloc's grow in place). */
struct vmap_area *va_find_free_at(const struct va_tree *t, uintptr_t addr);

/* Clip [addr, addr + size) out of the free range va (which must contain it); see va_alloc for spare. */
int va_clip(struct va_tree *t, struct vmap_area *va, uintptr_t addr, size_t size, struct vmap_area **spare,
	    struct list_head *absorbed);

/* --- debug oracles (the kernel's DEBUG_AUGMENT_* checks), used by tests --- */

/* 0 if the tree and list agree, are sorted, never overlap or touch, and every subtree_max_size is right. */
int va_tree_check(const struct va_tree *t);
/* The answer va_alloc would give, by a linear scan of the list (no pruning). */
struct vmap_area *va_lowest_match_linear(const struct va_tree *t, size_t size, size_t align, uintptr_t vstart);
/* The exact lowest fit by the tree search without the size + align - 1 pruning (the kernel's check mode). */
struct vmap_area *va_lowest_match(const struct va_tree *t, size_t size, size_t align, uintptr_t vstart);

#endif
