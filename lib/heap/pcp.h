/*
 * pcp.h - per-thread caches of freed areas (the kernel's per-CPU page
 * lists, struct per_cpu_pages), one part of the thread heap (heap.h).
 *
 * A freed area keeps its address range, its pages, its place in its busy
 * tree and its page-map slot; only its live flag drops.  It goes, whole,
 * onto its owner's cache (another thread's free: onto the freeing thread's
 * while that has room, pcp_adopt, else to the owner's inbox): an area of
 * fewer than PCP_BIN_PAGES pages (guard included) onto the bin of its
 * exact page count, a larger one onto the list of its order, hottest
 * first.  An allocation pops its exact bin (the
 * hit path: plain loads and stores on thread-local memory); on a miss it
 * takes in the inbox, then the next larger non-empty bin (a bitmap says
 * which), then the order lists, trimming a larger area to size on the way
 * out; a large request that still misses joins cached neighbours first.
 * Over `high`, the coldest areas drain to the node (lazy lists, then pools
 * or the kernel).
 *
 * Glossary: order k holds areas of 2^k .. 2^(k+1) - 1 pages, guard page
 * included; the last order holds every larger one too.
 */
#ifndef UVM_PCP_H
#define UVM_PCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vmap.h"
#include "uvmalloc.h"

#define PCP_ORDERS 16
#define PCP_BIN_PAGES 128       /* areas of 2..127 pages rest in exact bins */
#define PCP_LISTS (PCP_BIN_PAGES + PCP_ORDERS)
#define PCP_BATCH_PAGES 256     /* drained at once, and the step of decay (1 MiB) */
#define PCP_HIGH_MIN_PAGES 1024 /* high of an active thread never decays below this (4 MiB) */
#define PCP_DECAY_NS 1000000000ull
/*
 * Areas of at most this many pages (256 KiB and a guard page) are parked
 * (pcp.parked): what a heap keeps that another thread's drain cannot take.
 */
#define PCP_PARK_PAGES 65

struct heap;

/*
 * A bin's in-line hits and frees are counted in the bin, each by its own
 * side: the pop adds to pops, the push to spent (its pushes less cap: its
 * frees are cap + spent), and neither writes a word the other writes.
 * (Both used to read-modify-write the cache's page total
 * and the list's count, and each its side's pair of counters in the heap:
 * eight such stores an alloc-free pair, a chain of stores and reloads
 * through every iteration; vmbench fix_size p:1 took 19 % fewer cycles
 * without five of them.)  The slow paths keep count, and the cache's
 * slow_pages, for what they link and unlink; the in-line part not yet
 * folded into them is pushes - pops - folded (pcp_unfolded), which is 0
 * whenever the bin's binmap bit is clear: a search or drain that clears
 * the bit of an empty bin folds it first.  Readers sum the lists.
 *
 * What a bin may take in line is its own too: a push needs pushes - pops
 * below cap, that is pops above spent (pcp_bin_full: one load and one
 * compare with the other in memory, where a count of cap less the pushes
 * took an add and a test besides), so a hit gives its room back by
 * counting itself, and the two sides still share no written word.  A push that
 * finds none takes one area's room from the cache's (struct pcp), so that
 * what the cache holds, its room and every bin's room left never add up
 * to more than high: a loop of one size borrows once, a cycling working
 * set once per area.
 */
struct pcp_list {
	struct list_head head; /* hottest first */
	uint32_t count;        /* areas linked less unlinked by slow paths, modulo 2^32: pcp_unfolded adds the rest */
	uint32_t marked;       /* its bit in binmap is set (bins); always set for an order list, which has no bit */
	uint64_t pops;         /* a bin's in-line hits, all time (an order list's hits are the slow way's) */
	uint64_t spent;        /* the bin's in-line frees (pushes) less cap, modulo 2^64 */
	uint64_t cap;          /* pushes - pops may reach this in line (a bin's) */
	uint64_t folded;       /* pushes - pops when count last took them in */
	/*
	 * The bin's areas its owner parked (pcp.parked), all time, less those
	 * a slow path linked instead: frees, and hits but for the one parked
	 * now.  Also what makes the struct 64 bytes: the hit finds its bin
	 * with one shift, not a multiply by 56 (three instructions).
	 */
	uint64_t parks;
};
_Static_assert(sizeof(struct pcp_list) == 64, "a bin's list is found by a shift");

/* One NUMA node's lists: bins by exact page count, then orders. */
struct pcp_node {
	uint64_t binmap[PCP_BIN_PAGES / 64]; /* bit n: bin n may hold areas (set by pushes, cleared by searches) */
	struct pcp_list lists[PCP_LISTS];
};

/* Words the owner writes and other threads read as words (stats, vminfo); nothing here is atomic. */
struct pcp {
	size_t slow_pages;   /* cached pages the slow paths linked less unlinked, modulo 2^64: pcp.c's cached_pages adds the bins' rest */
	size_t high;
	/*
	 * Pages the cache may take before a slow path looks at high again:
	 * what it holds, this and the bins' room left (pcp_list.cap) add up to
	 * high at most.  Order lists' frees take from it and their hits give
	 * back, slow paths' links take and unlinks give, bins are granted
	 * their room from it; when it runs out, the bins' room left is taken
	 * back and it is high less what the cache holds (after a drain when
	 * that is within a batch of high).
	 */
	size_t room;
	size_t missed;       /* pages fetched from the node since the last drain or decay */
	size_t coalesce_credit, coalesce_cost; /* large pages missed since the last coalescing pass, and the areas it looked at (pcp.c) */
	uint64_t ops_at_decay;
	uint64_t hits, misses, frees, drained;        /* hits and frees: the slow way's and an order list's; bins count theirs */
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
	/*
	 * The parked area: the owner's last freed area of a bin's size (up to
	 * PCP_PARK_PAGES), kept out of its bin, live flag VA_PARKED, for the
	 * next allocation of that bin (area.h's area_unpark); the one parked
	 * before goes onto its bin (area_repark).  A loop that frees an area
	 * and asks for its size again (a buffer per request, per line, per
	 * message) passes it through three words at fixed addresses, the hit
	 * returning the start the free stored; through a bin, its pop loaded
	 * the list head the free stored, the area's start from the area, and
	 * the free the area from the page map, each load waiting on the one
	 * before, every iteration.  Claimers never touch it, so neither side
	 * marks the heap busy, and it takes no bin room: it holds one area,
	 * which the owner's next slow path links into its bin (and its exit
	 * drains with the rest): a claimer's drain or decay of an idle
	 * thread's cache leaves that one area, of 256 KiB at most.
	 * uvm_vmalloc+uvm_vfree of 1, 16 and 64 pages: 5.4-5.5 -> 4.4-4.7 ns
	 * a pair, 87 -> 82 instructions; malloc+free of 4 and 64 KiB 5.8 ->
	 * 4.7-5.0 ns, 110 -> 104 (tcmalloc 3.8-3.9).  Only an area of the bin its
	 * size asked for is parked (pcp_live_bin), and only a free of its
	 * size moves it out (area_repark): see there for why.
	 */
	uintptr_t parked;                /* its start, or 0: none */
	/*
	 * Its usable pages less one (a request's (bytes - 1) >> page shift):
	 * the hit's test, with parked not 0 (emptied, the slot keeps it: a
	 * store less a hit).
	 */
	uint64_t parked_key;
	struct vmap_area *parked_va;
	struct pcp_list *parked_list;    /* its bin (its cache): the hit's test */
	struct pcp_node nodes[];
};

/*
 * p's parked area leaves the slot for its bin, where it is counted as the
 * bin's or the slow paths' free, no longer as a park.  Relaxed atomics,
 * plain stores on x86: other threads' counts read the slot (pcp.c's
 * sums_of), and no claim orders those reads.
 */
static inline void pcp_slot_leave(struct pcp *p)
{
	__atomic_store_n(&p->parked_list->parks, p->parked_list->parks - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&p->parked, 0, __ATOMIC_RELAXED);
}

/* Bytes of the per-node lists for nodes NUMA nodes (the heap's size). */
size_t pcp_lists_size(unsigned nodes);
/* Read UVM_PCP and UVM_PCP_HIGH.  0 or an errno. */
int pcp_init(unsigned nodes);
void pcp_heap_init(struct pcp *p);
/* Drain h's caches, inbox and spare objects to the nodes (a fork child's copy of another thread's heap), h busy meanwhile. */
void pcp_heap_exit(struct heap *h);
/*
 * A thread's exit: its inbox and its coldest areas drain to the nodes
 * until the thread's high at most stays (warm: its working set, for the
 * thread that adopts the heap, heap.h), or none, h busy meanwhile; high
 * then decays as an idle thread's does.  Takes no lock a claimer may hold
 * while it waits (the caller's slab exit, which takes the orphan lock,
 * comes first and outside).
 */
void pcp_heap_vacate(struct heap *h, bool warm);
/* Add an exited thread's counters to the process's, and clear them (registry lock held: its heap stays in the walks). */
void pcp_heap_fold(struct pcp *p);

extern uvm_hidden size_t uvm__pcp_high_max; /* UVM_PCP_HIGH in pages; 0: no caching */

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

/*
 * The most pages an area handed out whole for a request of pages pages
 * may have (guard included): for a bin's size an eighth more, and at least
 * four pages more; for a large one a page more (a one-page tail would be a
 * guard page alone).  A larger cached area is trimmed to size (pcp.c's
 * kept_pages).  Cutting every area to the page left tails whose first
 * pages were never touched, and took large areas apart until the largest
 * requests found none: vmbench random_size (1..100 pages, written at the
 * start) faulted 405 pages in, against glibc's 200, and took 1.4x its
 * time; handed out whole, an area keeps its size and its backed pages for
 * the next request of any size it serves.  An eighth is the spacing of
 * the slab classes above 256 bytes: the usable bytes past a request are
 * address space, and pages only where an earlier block wrote them.  The
 * four pages: a shorter tail serves only the smallest areas (malloc's
 * blocks of 4, 8 and 12 KiB; its next area size is 4 pages and a guard),
 * and a program asking for random sizes of 4-64 KiB piled up tails of 2-4
 * pages, cut off areas a little too large, that none of its requests took
 * again (allocwork stress -t 2 -s 16: 260 of them in one thread's cache at
 * its peak, 2.6 MiB resident); its peak RSS went from 17.0 to 15.5 MiB,
 * with 7.8 k page faults against 8.6 k.  A quarter (jemalloc's class
 * spacing) did as much for it, but held more of a program that writes all
 * of its blocks: allocwork buffers (4 KiB-1.2 MiB) peaked at 126.0 MiB
 * against 121.6, where this takes 123.4.  An eighth of a large area is
 * megabytes of backed pages that another request could use: with it,
 * buffers held 2-3 % more at its peak.
 */
static inline size_t pcp_whole_max(size_t pages)
{
	if (pages >= PCP_BIN_PAGES)
		return pages + 1;
	return pages + 1 + (pages >> 3 > 3 ? pages >> 3 : 3);
}

/* A bin's in-line frees, all time, modulo 2^64 (pcp_list.spent). */
static inline uint64_t pcp_pushes(const struct pcp_list *l) { return l->cap + l->spent; }
/* Its in-line frees less hits not yet folded into its count (pcp_list), modulo 2^64. */
static inline uint64_t pcp_unfolded(const struct pcp_list *l) { return pcp_pushes(l) - l->pops - l->folded; }
/* The areas bin l may still take in line (0 or less: none; pushes - pops runs below 0 when hits take slow links). */
static inline int64_t pcp_bin_room(const struct pcp_list *l) { return (int64_t)(l->pops - l->spent); }
/* No room: the in-line free's test, as signed words (neither nears 2^63), so that it is one compare. */
static inline bool pcp_bin_full(const struct pcp_list *l) { return (int64_t)l->pops <= (int64_t)l->spent; }

/*
 * Set the binmap bit of l, va's bin, in line: a call would cost the leaf
 * its registers (so would keeping va's page count for it: it is read again).
 */
static inline void pcp_mark(struct pcp *p, struct pcp_list *l, const struct vmap_area *va)
{
	if (unlikely(!l->marked)) {
		size_t pages = va_pages(va);

		l->marked = 1;
		p->nodes[va_nid(va)].binmap[pages / 64] |= 1ull << (pages % 64);
	}
}

/*
 * Room for one more area va in its bin l, from the cache's (the in-line
 * free of a bin with none left): false when that is out too.  The bin is
 * marked here, so that the in-line push need not look: a bin has room
 * only by borrowing (a hit gives back what a push took, and pops only from
 * a bin that holds areas, which every link marks), and unmark_bin takes
 * back the room of the bins it clears (close_bin).  The look cost the
 * push three instructions.
 */
static inline bool pcp_borrow(struct pcp *p, struct pcp_list *l, const struct vmap_area *va)
{
	size_t pages = va_pages(va);

	if (p->room < pages)
		return false;
	p->room -= pages;
	l->cap++;
	l->spent--;
	pcp_mark(p, l, va);
	return true;
}

/* List i of node n: bins by page count below PCP_BIN_PAGES, then orders.  A slow path's link. */
static inline void pcp_link(struct pcp *p, struct pcp_node *n, unsigned i, struct vmap_area *va)
{
	list_add(&va->list, &n->lists[i].head);
	va->cache = &n->lists[i];
	n->lists[i].count++;
	pcp_mark(p, &n->lists[i], va); /* an order list is marked for good: binmap covers bins only */
	p->slow_pages += va_pages(va);
}

/*
 * va, the first of l, out of it: the hit's unlink (no list_del: nothing of
 * va needs clearing).  Its prev is l's head, so the head's link is stored
 * at an address known up front, not one loaded from va, which the free
 * just before wrote (vmbench fix_size p:1 and p:16 took 3-4 % less time).
 */
static inline void pcp_unlink_hot(struct pcp_list *l, struct vmap_area *va)
{
	struct list_head *next = va->list.next;

	l->head.next = next;
	next->prev = &l->head;
}

/*
 * The nearest marked bin above bin l of node n whose areas a request of
 * l's pages takes whole (pcp_whole_max), or NULL: the binmap's 64 bits
 * from the byte that holds bin pages + 1 on (the window is at most 16
 * bits, 23 with its offset in that byte), a shift, a mask and a bit scan.
 * The load may read past the binmap into the lists, whose bits the mask
 * drops.  Its list may be empty (a stale bit): the caller looks.  The
 * page count comes from l: kept in a register for this, it cost the hit
 * two moves; the two words shifted as one cost it two more.
 */
static inline struct pcp_list *pcp_bin_above(struct pcp_node *n, const struct pcp_list *l)
{
	_Static_assert(offsetof(struct pcp_node, binmap) == 0 && sizeof(n->binmap) + sizeof(uint64_t) <= sizeof(*n),
		       "a load at any byte of the binmap stays in the node");
	size_t pages = (size_t)(l - n->lists), first = pages + 1;
	size_t last = pcp_whole_max(pages) < PCP_BIN_PAGES ? pcp_whole_max(pages) : PCP_BIN_PAGES - 1;
	uint64_t bits;

	memcpy(&bits, (const unsigned char *)n->binmap + first / 8, sizeof(bits));
	bits = bits >> (first % 8) & ((1ull << (last - pages)) - 1);
	return bits ? &n->lists[first + (size_t)__builtin_ctzll(bits)] : NULL;
}

/*
 * The live word of an owner's bin area of pages pages (guard included)
 * handed out for a size of its bin: VA_LIVE_PARK + its key, parkable, up
 * to PCP_PARK_PAGES.  An area of a bin above, handed out whole
 * (pcp_pop_bin), stays VA_LIVE_BIN: it goes back to its own bin, where
 * the next such request takes it in line; parked, only a request of its
 * own bin's size would.
 */
static inline uint32_t pcp_live_bin(size_t pages)
{
	return pages <= PCP_PARK_PAGES ? VA_LIVE_PARK + (uint32_t)(pages - 2) : VA_LIVE_BIN;
}

/*
 * The hit: the hottest cached area of the bin of pages pages (guard
 * included, less than PCP_BIN_PAGES) of p's hit lists if it starts on an
 * align boundary (a page always does), or NULL; *live set to its
 * pcp_live_bin when it is of the bin's own size (the caller's, VA_LIVE_BIN,
 * left for one of a bin above: in the path that knows, where a test of the
 * area's size cost the hits a saved register).  The caller is the owner,
 * between heap_enter and heap_leave.  va->cache keeps naming the list: the
 * area goes back there when its owner frees it (VA_LIVE_BIN), and the live
 * flag tells it from a cached one.
 *
 * An empty bin takes the hottest area of the nearest bin above it that
 * the slow path would hand out whole too (pcp_whole_max).  It goes back
 * to its own bin when freed, so a size whose bin no free ever fills (the
 * sizes above serving it) would take the slow path on every allocation:
 * 18 % of vmbench random_size's, 342 instructions each, with one page of
 * slack; a third of them with an eighth.
 */
static uvm_always_inline struct vmap_area *pcp_pop_bin(struct pcp *p, size_t pages, size_t align, uint32_t *live)
{
	struct pcp_list *l = &p->hit->lists[pages];
	struct vmap_area *va;

	if (list_empty(&l->head)) {
		l = pcp_bin_above(p->hit, l);
		if (!l || list_empty(&l->head))
			return NULL;
	} else {
		*live = pcp_live_bin(pages);
	}
	va = list_first_entry(&l->head, struct vmap_area, list);
	/* An unfiled area is filed before it is handed out (vnode.h): the slow way's. */
	if (unlikely(va->flags & VA_UNFILED) || (align > UVM_PAGE_SIZE && (va->va_start & (align - 1))))
		return NULL;
	pcp_unlink_hot(l, va);
	l->pops++;
	return va;
}

/*
 * The same for an order list's hottest area, if it has exactly pages pages
 * (a program recycling one size of large block); anything else is the
 * slow path's (pcp_get: a search and a trim).  Counted as the slow paths
 * count: an order list's pages vary, so its count and pages are kept.
 */
static inline struct vmap_area *pcp_pop_order(struct pcp *p, size_t pages, size_t align)
{
	struct pcp_list *l = &p->hit->lists[PCP_BIN_PAGES + pcp_order(pages)];
	struct vmap_area *va;

	if (!l->count)
		return NULL;
	va = list_first_entry(&l->head, struct vmap_area, list);
	if (va_pages(va) != pages || (va->flags & VA_UNFILED) || (align > UVM_PAGE_SIZE && (va->va_start & (align - 1))))
		return NULL;
	pcp_unlink_hot(l, va);
	l->count--;
	p->slow_pages -= pages;
	p->room += pages;
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
 * The owner's free of its own area of bin size onto its bin l, which
 * va->cache names (pcp_list_of), between heap_enter and heap_leave; the
 * caller saw to the bin's room (pcp_bin_room, pcp_borrow).
 */
static inline void pcp_push_bin(struct pcp_list *l, struct vmap_area *va)
{
	list_add(&va->list, &l->head);
	l->spent++; /* marked already: a bin with room is (pcp_borrow) */
}

/*
 * The same for any list, counted as the slow paths count (an order list's
 * in-line free, and pcp_put's); the caller sees to high (room) and to an
 * order list's joins.  An order list's marked is set for good at its
 * heap's start: binmap covers bins only.
 */
static inline void pcp_push(struct pcp *p, struct vmap_area *va)
{
	struct pcp_list *l = va->cache;
	size_t pages = va_pages(va);

	list_add(&va->list, &l->head);
	l->count++;
	pcp_mark(p, l, va);
	p->slow_pages += pages;
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
 * A miss for a large block of pages pages: cached large blocks whose pages
 * all fit in it and can move (not hugetlb), largest first, out of h's
 * cache onto the tail of out in that order (area.c moves their pages into
 * the new block, then frees their ranges to the node).
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
 * vrealloc's shrink of h's own live area va to end at page address at: the
 * tail cut off unfiled (vnode.h) and cached, as freed, with no lock; a
 * grow of va finds it there (pcp_absorb_next).  False (nothing done) when
 * the tail could not be cached: the caller cuts it the filed way.
 */
bool pcp_shrink(struct heap *h, struct vmap_area *va, uintptr_t at);
/* The heap's cached areas all filed (unfiled ones, vnode.h), before its thread's exit makes it retired. */
void pcp_heap_unspan(struct heap *h);
/*
 * Another thread's area va, not live, freed by the calling thread, whose
 * heap is h (NULL: it never allocated, and keeps nothing): into h's cache
 * as h's own while the cache has room for it, for an area of a bin's size,
 * or whatever the room when va's owner has exited (pcp.c says why); never
 * one that spans (vnode.h), nor with no caches, nor past h's exit.  False
 * (nothing done): the caller sends va to its owner, or to the node.
 */
bool pcp_adopt(struct heap *h, struct vmap_area *va);
/*
 * A fresh area into h's cache (at most uvm__pcp_high_max pages), counted as
 * neither an allocation nor a free: stock for the next hits to cut
 * (area_alloc_stocked).
 */
void pcp_stock(struct heap *h, struct vmap_area *va);
/*
 * Another thread's free of va: onto its owner heap's inbox, for the
 * owner's next miss.  False when the owner is exiting or gone, or its
 * inbox went stale (heap.h): the caller frees va to the node.
 */
bool pcp_give_back(struct vmap_area *va);
/* Count size bytes asked for by a slow path's allocation; h may be NULL. */
void pcp_count_request(struct heap *h, size_t size);
/* Bytes asked for by every allocation so far, all threads. */
uint64_t pcp_requested(void);
/* Count an allocation or free of an area of pages pages that did not go through the cache (so stats stay exact); h may be NULL. */
void pcp_count_alloc(struct heap *h, size_t pages);
void pcp_count_free(struct heap *h, size_t pages);

/* Decay every thread's high watermark, and age the orphan slabs (slab_decay_orphans), once PCP_DECAY_NS has passed since the last time; slow paths call it. */
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
