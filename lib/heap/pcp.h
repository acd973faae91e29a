/*
 * pcp.h - per-thread caches of freed areas (the kernel's per-CPU page
 * lists, struct per_cpu_pages), one part of the thread heap (heap.h).
 *
 * A freed area keeps its address range, its pages, its place in its busy
 * tree and its page-map slot; only its live flag drops.  It goes, whole,
 * onto its owner's cache: an area of fewer than PCP_BIN_PAGES pages (guard
 * included) onto the bin of its exact page count, a larger one onto the
 * list of its order, hottest first.  An allocation pops its exact bin (the
 * hit path: plain loads and stores on thread-local memory); on a miss it
 * takes in the inbox, then the next larger non-empty bin (a bitmap says
 * which), then the order lists, trimming a larger area to size on the way
 * out.  Over `high`, the coldest areas drain to the node (lazy lists, then
 * pools or the kernel).
 *
 * Glossary: order k holds areas of 2^k .. 2^(k+1) - 1 pages, guard page
 * included; the last order holds every larger one too.
 */
#ifndef UVM_PCP_H
#define UVM_PCP_H

#include <stdbool.h>
#include <stdint.h>

#include "vmap.h"
#include "uvmalloc.h"

#define PCP_ORDERS 16
#define PCP_BIN_PAGES 128       /* areas of 2..127 pages rest in exact bins */
#define PCP_LISTS (PCP_BIN_PAGES + PCP_ORDERS)
#define PCP_BATCH_PAGES 256     /* drained at once, and the step of decay (1 MiB) */
#define PCP_HIGH_MIN_PAGES 1024 /* high of an active thread never decays below this (4 MiB) */
#define PCP_DECAY_NS 1000000000ull

struct heap;

struct pcp_list {
	struct list_head head; /* hottest first */
	uint32_t count;
	uint32_t marked;       /* its bit in binmap is set (bins); always set for an order list, which has no bit */
};

/* One NUMA node's lists: bins by exact page count, then orders. */
struct pcp_node {
	uint64_t binmap[PCP_BIN_PAGES / 64]; /* bit n: bin n may hold areas (set by pushes, cleared by searches) */
	struct pcp_list lists[PCP_LISTS];
};

/* Words the owner writes and other threads read as words (stats, vminfo); nothing here is atomic. */
struct pcp {
	size_t pages;        /* cached, all lists */
	size_t high;
	size_t missed;       /* pages fetched from the node since the last drain or decay */
	uint64_t ops_at_decay;
	uint64_t hits, misses, frees, drained;
	uint64_t allocs;                              /* those the cache missed: hits + allocs is all of them */
	uint64_t alloc_pages, free_pages; /* of the areas handed out and freed, guard pages included: the usable bytes
					   * are (pages - areas) pages, so a hit adds a page count it has already */
	uint64_t requested;               /* bytes asked for by this thread's malloc and uvm_v* calls (uvm_frag_stats) */
	/*
	 * Area objects that trims take and merges give back, so the thread's
	 * splits and joins stay off the metadata lock (shared by all threads).
	 */
	struct list_head spare;
	size_t nr_spare;
	/*
	 * The lists the in-line hits pop: those of the NUMA node the thread ran
	 * on at its last miss (each miss looks the node up; a hit reads no CPU
	 * number), so that a hit on a machine of several nodes costs what it
	 * costs on one: a thread that moved gets its old node's areas until its
	 * next miss.
	 */
	struct pcp_node *hit;
	struct pcp_node nodes[];
};

/* Bytes of the per-node lists for nodes NUMA nodes (the heap's size). */
size_t pcp_lists_size(unsigned nodes);
/* Read UVM_PCP and UVM_PCP_HIGH.  0 or an errno. */
int pcp_init(unsigned nodes);
void pcp_heap_init(struct pcp *p);
/* Drain h's caches, inbox and spare objects to the nodes (a fork child's copy of another thread's heap), h busy meanwhile. */
void pcp_heap_exit(struct heap *h);
/*
 * A thread's exit: its inbox and its coldest areas drain to the nodes
 * until PCP_VACANT_PAGES at most stay, for the thread that adopts the heap
 * (heap.h), h busy meanwhile; high becomes what stayed, to decay as an
 * idle thread's does.  4 MiB: a new thread's high (PCP_HIGH_MIN_PAGES).
 * Takes no lock a claimer may hold while it waits (the caller's slab exit,
 * which takes the orphan lock, comes first and outside).
 */
#define PCP_VACANT_PAGES PCP_HIGH_MIN_PAGES
void pcp_heap_vacate(struct heap *h);
/* Add an exited thread's counters to the process's, and clear them (registry lock held: its heap stays in the walks). */
void pcp_heap_fold(struct pcp *p);

extern size_t uvm__pcp_high_max; /* UVM_PCP_HIGH in pages; 0: no caching */

/* The order of an area of pages pages (the last order takes every larger one). */
static inline unsigned pcp_order(size_t pages)
{
	unsigned k = (unsigned)(63 - __builtin_clzll(pages));

	return k < PCP_ORDERS ? k : PCP_ORDERS - 1;
}

/* The list an area of pages pages rests on: its bin below PCP_BIN_PAGES, else its order's. */
static inline unsigned pcp_list_index(size_t pages)
{
	return pages < PCP_BIN_PAGES ? (unsigned)pages : PCP_BIN_PAGES + pcp_order(pages);
}

/* List i of node n: bins by page count below PCP_BIN_PAGES, then orders. */
static inline void pcp_link(struct pcp *p, struct pcp_node *n, unsigned i, struct vmap_area *va)
{
	list_add(&va->list, &n->lists[i].head);
	va->cache = &n->lists[i];
	n->lists[i].count++;
	if (i < PCP_BIN_PAGES && !n->lists[i].marked) {
		n->lists[i].marked = 1;
		n->binmap[i / 64] |= 1ull << (i % 64);
	}
	p->pages += va_pages(va);
}

/*
 * The hit: the hottest cached area of p's hit lists' list for pages pages
 * (guard included) if it has exactly that many and starts on an align
 * boundary (a page always does), or NULL.  A bin's areas all fit; an order
 * list's hottest fits when a program recycles one size, and anything else
 * is the slow path's (pcp_get: a search and a trim).
 * The caller is the owner, between heap_enter and heap_leave.  va->cache
 * keeps naming the list: the area goes back there when its owner frees it
 * (VA_LIVE_BIN), and the live flag tells it from a cached one.
 */
static inline struct vmap_area *pcp_pop(struct pcp *p, size_t pages, size_t align)
{
	struct pcp_list *l = &p->hit->lists[pcp_list_index(pages)];
	struct vmap_area *va;

	if (!l->count)
		return NULL;
	va = list_first_entry(&l->head, struct vmap_area, list);
	if (pages >= PCP_BIN_PAGES && va_pages(va) != pages)
		return NULL;
	if (align > UVM_PAGE_SIZE && (va->va_start & (align - 1)))
		return NULL;
	va->list.prev->next = va->list.next;
	va->list.next->prev = va->list.prev;
	l->count--;
	p->pages -= pages;
	p->hits++;
	p->alloc_pages += pages;
	return va;
}

/* The list of va's page count and node in p: where a VA_LIVE_BIN area's va->cache points. */
static inline struct pcp_list *pcp_list_of(struct pcp *p, const struct vmap_area *va)
{
	return &p->nodes[va_nid(va)].lists[pcp_list_index(va_pages(va))];
}


/*
 * The owner's free of its own area onto its list, which va->cache names
 * (pcp_list_of), between heap_enter and heap_leave.  The caller sees to
 * high, and to an order list's joins (pcp_put).  An order list's marked
 * is set for good at its heap's start: binmap covers bins only.
 */
static inline void pcp_push(struct pcp *p, struct vmap_area *va)
{
	struct pcp_list *l = va->cache;
	size_t pages = va_pages(va);

	list_add(&va->list, &l->head);
	l->count++;
	if (unlikely(!l->marked)) { /* in line: a call would cost the leaf its registers */
		l->marked = 1;
		p->nodes[va_nid(va)].binmap[pages / 64] |= 1ull << (pages % 64);
	}
	p->pages += pages;
	p->frees++;
	p->free_pages += pages;
}

/*
 * The same for any size and alignment, trimming a larger area to size; it
 * also takes in the inbox.  NULL on a miss.  The area is still in its busy
 * tree and its page-map slot, not live.  The caller is the owner, outside
 * heap_enter.
 */
struct vmap_area *pcp_get(struct heap *h, unsigned nid, size_t pages, size_t align);
#define PCP_LARGE_PAGES 512 /* 2 MiB: from here on a miss reuses the pages of the cache's smaller blocks */
/*
 * A miss for a large block of pages pages: the cached large blocks too
 * small for it, out of h's cache onto out (area.c moves their pages into
 * the new block, then frees them to the node).
 */
void pcp_take_smaller(struct heap *h, size_t pages, struct list_head *out);
/* An unused area object from h's spares (else from the metadata pool), for a split; NULL when out of memory. */
struct vmap_area *pcp_spare(struct heap *h);
/* Whether pcp_put would join to va the cached area that follows it (p held: between heap_enter and heap_leave). */
bool pcp_joins_next(struct pcp *p, const struct vmap_area *va);
/* Join to the live area va (h's own) the cached area right after it, if it reaches end: true if done. */
bool pcp_absorb_next(struct heap *h, struct vmap_area *va, uintptr_t end);
/* Cache an area h's thread freed, its own (not live, still in its busy tree).  False: the caller frees it to the node. */
bool pcp_put(struct heap *h, struct vmap_area *va);
/*
 * Another thread's free of va: onto its owner heap's inbox, for the
 * owner's next miss.  False when the owner is exiting or gone: the caller
 * frees va to the node.
 */
bool pcp_give_back(struct vmap_area *va);
/* Count size bytes asked for by a slow path's allocation; h may be NULL. */
void pcp_count_request(struct heap *h, size_t size);
/* Bytes asked for by every allocation so far, all threads. */
uint64_t pcp_requested(void);
/* Count an allocation or free of an area of pages pages that did not go through the cache (so stats stay exact); h may be NULL. */
void pcp_count_alloc(struct heap *h, size_t pages);
void pcp_count_free(struct heap *h, size_t pages);

/* Decay every thread's high watermark once PCP_DECAY_NS has passed since the last time; slow paths call it. */
void pcp_decay_maybe(void);
/* One decay step over every cache now (tests; pcp_decay_maybe's work). */
void pcp_decay(void);
/* Drain every thread's cache and inbox to the nodes (uvm_purge, and before giving up on memory). */
void pcp_drain_all(void);
/* This thread's high watermark in pages (tests). */
size_t pcp_high(void);

void pcp_stats(struct uvm_stats *st);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void pcp_describe(struct uvm_descriptor *d);

#endif
