/*
 * vnode.h - vmap nodes (the kernel's struct vmap_node, v6.9+).
 *
 * Busy trees, lazy lists and pools are all partitioned by owner: the node
 * of the thread that allocated the area (each thread takes the next node
 * round robin and keeps it; the kernel's is the CPU's), so a freed area
 * comes back to the node that asked for it.  The kernel files busy areas by
 * address zone instead, so that find_vmap_area() knows which tree to
 * search; here the page map (arena_slot) finds an area from a pointer
 * without any tree, and filing by owner keeps a thread's node locks its own:
 * random_size on 2 threads ran at 21 % of one thread's speed per thread
 * when both threads' areas interleaved over both zone-keyed trees.
 * Each of the three parts has its own lock; no path takes two node locks at
 * once.
 */
#ifndef UVM_VNODE_H
#define UVM_VNODE_H

#include "vmap.h"
#include "uvmalloc.h"

#define VN_POOL_PAGES 256 /* a pool per page count for areas of 1..256 pages, guard included (MAX_VA_SIZE_PAGES); one more for larger ones */
#define VN_MAX_NODES 128

/* Set up nr nodes (1..VN_MAX_NODES) from metadata memory.  0 or ENOMEM. */
int vn_init(unsigned nr);
unsigned vn_count(void);

/* The owner slot for an allocation made now: the calling thread's node. */
unsigned vn_owner_id(void);
/*
 * The zone (arena_alloc) for a fresh range of size bytes taken now by the
 * calling thread, whose owner slot is owner: zone 0 until the thread has
 * taken VN_ZONE_AFTER bytes of fresh ranges, then its owner's (vnode.c).
 */
#define VN_ZONE_AFTER ((size_t)256 << 10)
unsigned vn_zone(unsigned owner, size_t size);
static inline unsigned va_owner(const struct vmap_area *va) { return (va->flags >> VA_OWNER_SHIFT) - 1; }
static inline void va_set_owner(struct vmap_area *va, unsigned id)
{
	va->flags = (va->flags & ((1u << VA_OWNER_SHIFT) - 1)) | ((id + 1) << VA_OWNER_SHIFT);
}
static inline void va_set_nid(struct vmap_area *va, unsigned nid)
{
	va->flags = (va->flags & ~(0xffu << VA_NID_SHIFT)) | (nid << VA_NID_SHIFT);
}

/*
 * Busy side: live areas, and the ones resting in thread caches (pcp.h).  An
 * area in a busy tree is also in its region's page map (arena.h).
 */
void vn_busy_insert(struct vmap_area *va);
void vn_busy_erase(struct vmap_area *va);
/*
 * Copy the live area that contains addr (any byte of it, guard included)
 * into *out.  True if found.  The tests' oracle for the page map (which
 * finds an area from its start only, in O(1)); the library does not need it.
 */
int vn_busy_lookup(uintptr_t addr, struct vmap_area *out);
/* Pages of all busy trees (live and thread-cached areas, guards included), read without their locks. */
size_t vn_busy_pages(void);
/* Page rounding of the live user areas: their usable bytes less what their users asked for (a walk of every busy tree). */
size_t vn_busy_rounding(void);
/* Move the end of busy area va (vrealloc), keeping the node's byte count right. */
void vn_busy_resize(struct vmap_area *va, uintptr_t new_end);
/*
 * Cut filed busy area va at page address at: va keeps [va_start, at) with
 * a new guard page, and tail, an unused area object the caller provides,
 * becomes the filed busy area (same flags, owner and caller, not live) of
 * [at, va_end), and takes over the rest of va's span.
 */
void vn_busy_split(struct vmap_area *va, uintptr_t at, struct vmap_area *tail);

/*
 * Spans (the thread-local splits and joins).  A thread that cuts
 * an area and keeps the tail in its own cache need not file the tail: the
 * area's busy-tree entry keeps the range it held (va->span_end), and the
 * tail lies in it unfiled (VA_UNFILED), in the page map but in no tree.  A
 * join of an unfiled neighbour is then a store too.  So vrealloc's shrink
 * and grow of one buffer, and a trim of a cached area, take no node lock.
 * The rules:
 *  - [va_end, span_end) of a filed area is tiled by unfiled areas, all
 *    cached in its heap's cache;
 *  - an unfiled area is never live, in an inbox, lazy or pooled: it is filed
 *    first (vn_busy_file), or cut free (vn_busy_cut) when it leaves;
 *  - a span changes only where its heap is held (its owner inside the heap,
 *    or a claimer): an unlocked change and a locked one never meet.
 * Readers of the trees take span_end as the entry's end (va_tree_end):
 * vminfo shows the unfiled part of a span as thread-cached.
 */
/* vn_busy_split for a tail that stays in va's heap's cache: unfiled, no lock (va's heap held). */
void vn_busy_split_local(struct vmap_area *va, uintptr_t at, struct vmap_area *tail);
/* Unfiled area va into its node's busy tree, the span it lay in cut there (va's heap held). */
void vn_busy_file(struct vmap_area *va);
/* va filed and holding only its own range, so that it can leave its heap's cache (va's heap held). */
void vn_busy_cut(struct vmap_area *va);
/*
 * Whether va's tree range runs past its own end; read in va_tree_end's
 * order, for the same reason, and span_end with acquire: the cut of a span
 * (resize_locked's release) comes before what a thread that sees it cut
 * then does with va (another thread's free takes it as its own, pcp_adopt).
 */
static inline bool va_spans(const struct vmap_area *va)
{
	uintptr_t end = __atomic_load_n(&va->va_end, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&va->span_end, __ATOMIC_ACQUIRE) > end;
}
/*
 * The reverse of a split: busy area next, which starts where va ends,
 * leaves the page map and (filed) its tree, and va reaches next's end.  An
 * unfiled next is already inside va's span: no lock.  Otherwise one lock
 * round when both are filed in one node, as a thread's own neighbours
 * mostly are.  va's heap held, when next is unfiled or va is.
 */
void vn_busy_join(struct vmap_area *va, struct vmap_area *next);

/* Lazy side.  vn_lazy_add returns the pages now waiting in all nodes (the kernel's vmap_lazy_nr). */
size_t vn_lazy_add(struct vmap_area *va);
/* Move node id's lazy list onto out; returns its pages. */
size_t vn_lazy_detach(unsigned id, struct list_head *out);
/* Pages waiting on all lazy lists now. */
size_t vn_lazy_pages(void);
/* Subtract purged pages from the global lazy count. */
void vn_lazy_sub(size_t pages);

/*
 * Pools.  vn_pool_get takes an area of exactly pages pages on NUMA node nid whose start is aligned to align, from
 * node id's pool, else from its lazy areas (before the purge takes them), else from another node's pool, else cuts
 * one from a larger pooled area that holds such a window (the rest stays pooled); or NULL.  A pooled area takes in
 * the pooled areas beside it (vn_pool_put), so pieces join into ranges any size can be cut from.
 */
struct vmap_area *vn_pool_get(unsigned id, size_t pages, size_t align, unsigned nid);
/*
 * An area of pages to max pages (more than VN_POOL_PAGES) on NUMA node nid
 * whose start is aligned to align, the smallest in any node's pool of
 * large areas; or NULL.  Exits pool large areas too (purge_free_backed),
 * for the next threads: the caller cuts the area to size (area.c).
 */
struct vmap_area *vn_pool_get_large(unsigned id, size_t pages, size_t max, size_t align, unsigned nid);
/* Into its owner node's pool of its page count, or of large areas, joined with the pooled areas right before and after it. */
void vn_pool_put(struct vmap_area *va);
/* Pages held in all pools. */
size_t vn_pooled_pages(void);
/*
 * Move 1/4 of each pool, rounded up (all of it when full), onto out, most
 * recently added first (decay_va_pool_node, which rounds down: a pool of one
 * to three areas then waits for a full purge, and exits fill pools of many
 * sizes, purge.h); the large areas' pool the largest first.
 */
void vn_pool_decay(unsigned id, int full, struct list_head *out);

/* Iteration (vmallocinfo, the slabs' figures): copy up to max live (or lazy) areas of node id with va_start > after into buf. */
size_t vn_busy_snapshot(unsigned id, uintptr_t after, struct vmap_area *buf, size_t max);
/* Every busy tree well formed: red-black, in address order with no overlap, its count and bytes its areas' (tests).  0 or -1. */
int vn_busy_check(void);
size_t vn_lazy_snapshot(unsigned id, uintptr_t after, struct vmap_area *buf, size_t max);
typedef size_t (*vn_snapshot_fn)(unsigned id, uintptr_t after, struct vmap_area *buf, size_t max);
/*
 * fn(copy, arg) for every area snap gives (vn_busy_snapshot: the live ones,
 * vn_lazy_snapshot: the lazy ones), node by node in address order: copied
 * in small batches under the node's lock, fn called with it dropped (fn may
 * allocate, and a lock of ours held across our own malloc would deadlock).
 */
void vn_snapshot_each(vn_snapshot_fn snap, void (*fn)(const struct vmap_area *va, void *arg), void *arg);

/* Add the node counters (busy including cached, lazy, pooled, pool hits/misses) into st. */
void vn_stats(struct uvm_stats *st);

void vn_fork_prepare(void);
void vn_fork_parent(void);
void vn_fork_child(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void vn_describe(struct uvm_descriptor *d);

#endif
