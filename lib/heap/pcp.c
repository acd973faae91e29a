/*
 * pcp.c - per-thread caches of freed areas (the kernel's pcp lists,
 * mm/page_alloc.c).
 *
 * Seeds 000 and 003 are the rules: a block freed at size N goes back to
 * the cache of size N whole, never split on free, and allocation tries the
 * thread's own cache before anything shared.  Userspace differences:
 * threads, not CPUs, own the caches, and small areas rest in bins of their
 * exact page count rather than in order lists, because a hit must cost a
 * pop and not a search; the lists behind the bins are the kernel's orders.
 * A thread's cache drains when the thread exits, and an idle thread's cache
 * is decayed by whichever thread next takes a slow path, since a preloaded
 * allocator must not start a thread of its own.  Coalescing is the node's
 * job (the free tree merges what drains), as it is the buddy's in the
 * kernel; only areas of the order lists take in the cached areas that
 * follow them, where a large block cut into tails would otherwise never
 * serve a large request again, and a large miss first joins the cache's
 * neighbours (coalesce), bins' too.
 *
 * Watermarks, as the kernel's adaptive pcp high (v6.7): `high` starts at
 * PCP_HIGH_MIN_PAGES; when frees overflow it after the thread missed in its
 * own cache (it had to fetch memory it has now given back: its working set
 * is larger than high), high grows by what it missed, up to UVM_PCP_HIGH.
 * Otherwise the coldest areas drain, round robin over the lists from their
 * tails (free_pcppages_bulk), until PCP_BATCH_PAGES below high.  Every
 * PCP_DECAY_NS, decay_pcp_high(): high falls by 1/8 towards
 * PCP_HIGH_MIN_PAGES, or by a quarter towards 0 for a thread that did
 * nothing since the last decay, and the excess drains.
 */
#include "pcp.h"

#include <stdatomic.h>
#include <time.h>

#include "arena.h"
#include "heap.h"
#include "huge.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "purge.h"
#include "slab.h"
#include "trace.h"
#include "vnode.h"
#include "uvmalloc-descriptor.h"

#define PCP_SCAN 8 /* entries of a list looked at for an aligned or exact fit before taking any fit */
#define PCP_SPARE_MAX 32
#define JOIN_LOOKS 1024 /* areas a fragmented cache's miss looks at for a run to join (join_run) */

static struct {
	/* Counters of exited threads (the heap registry's lock) and of threads past their exit (atomics). */
	uint64_t hits, misses, allocs, frees, drained, alloc_pages, free_pages;
	_Atomic uint64_t stray_allocs, stray_frees, stray_alloc_pages, stray_free_pages, stray_requested;
	uint64_t requested;
	unsigned nodes;
	_Atomic uint64_t next_decay;
} reg;

size_t uvm__pcp_high_max;

/* ------------------------------------------------------- list handling */

static void unlink_cached(struct pcp *p, struct vmap_area *va)
{
	list_del(&va->list);
	va->cache = NULL;
	p->nodes[va_nid(va)].lists[pcp_list_index(va_pages(va))].count--;
	p->slow_pages -= va_pages(va);
	p->room += va_pages(va);
}

/* Bin l has no room left in line: cap down to pushes - pops (its frees, cap + spent, stay what they were). */
static void close_bin(struct pcp_list *l)
{
	l->cap -= l->pops - l->spent;
	l->spent = l->pops;
}

/* Bin l of b pages: its room left back to the cache's. */
static void revoke(struct pcp *p, struct pcp_list *l, unsigned b)
{
	int64_t left = pcp_bin_room(l);

	if (left > 0)
		p->room += (size_t)left * b;
	close_bin(l);
}

/* Bin l of b pages: its in-line part folded into its count and the cache's slow pages (pcp_list). */
static void fold_bin(struct pcp *p, struct pcp_list *l, unsigned b)
{
	uint64_t u = pcp_unfolded(l);

	l->count += (uint32_t)u;
	l->folded += u;
	p->slow_pages += (size_t)u * b;
}

/* Bin b of node n, empty, loses its binmap bit; its in-line part folded first, since only marked bins have one. */
static void unmark_bin(struct pcp *p, struct pcp_node *n, unsigned b)
{
	struct pcp_list *l = &n->lists[b];

	fold_bin(p, l, b);
	revoke(p, l, b); /* an unmarked bin has no room left: room is taken back from marked bins only */
	l->marked = 0;
	n->binmap[b / 64] &= ~(1ull << (b % 64));
}

/* fn(p, bin, its pages, arg) for every marked bin of every node (the slow paths' walks: only those have an in-line part). */
static void each_marked_bin(struct pcp *p, void (*fn)(struct pcp *p, struct pcp_list *l, unsigned b, void *arg), void *arg)
{
	for (unsigned nid = 0; nid < reg.nodes; nid++)
		for (unsigned w = 0; w < PCP_BIN_PAGES / 64; w++)
			for (uint64_t bits = p->nodes[nid].binmap[w]; bits; bits &= bits - 1) {
				unsigned b = w * 64 + (unsigned)__builtin_ctzll(bits);

				fn(p, &p->nodes[nid].lists[b], b, arg);
			}
}

static void add_unfolded(struct pcp *p, struct pcp_list *l, unsigned b, void *arg)
{
	(void)p;
	*(size_t *)arg += (size_t)pcp_unfolded(l) * b;
}

/* What the cache holds, in pages: the slow paths' count and the marked bins' in-line rest (the owner's, or a claimer's, look). */
static size_t cached_pages(struct pcp *p)
{
	size_t pages = p->slow_pages;

	each_marked_bin(p, add_unfolded, &pages);
	return pages;
}

static void link_cached(struct pcp *p, struct vmap_area *va)
{
	pcp_link(p, &p->nodes[va_nid(va)], pcp_list_index(va_pages(va)), va);
}

/* Whether va rests in one of p's lists (not live: a live area's cache names the bin it will go back to). */
static bool cached_in(const struct pcp *p, const struct vmap_area *va)
{
	/*
	 * The flag first, with acquire: another thread's free of a live area
	 * (whose cache names its bin) clears cache before it drops the flag, so
	 * a cache read before the flag could name p's list for an area on its
	 * way to p's inbox, and a join then linked it twice (a cycle in the
	 * inbox: tests/unit/api/test_stress.c hung once coalesce joined often).
	 */
	return !atomic_load_explicit(&va->live, memory_order_acquire) &&
	       (uintptr_t)va->cache - (uintptr_t)p < sizeof(*p) + pcp_lists_size(reg.nodes);
}

/*
 * Where in va an area aligned to align can start: its first aligned page,
 * unless that leaves a head of one page, which cannot be an area (a page
 * and its guard at least): then the next.
 */
static uintptr_t aligned_start(const struct vmap_area *va, size_t align)
{
	uintptr_t at = align_up(va->va_start, align);

	return at - va->va_start == UVM_PAGE_SIZE ? at + align : at;
}

/*
 * Whether va holds an area of pages pages aligned to align: at its start,
 * or further in, its head then cut off (cut_head).  Not only at its start:
 * a coalesced run of cached areas rarely starts on a slab's 64 KiB, and
 * every aligned request (slabs, huge bodies, aligned_alloc) missed in a
 * cache of such runs and took fresh pages while they stayed idle.
 */
static bool fits(const struct vmap_area *va, size_t pages, size_t align)
{
	/*
	 * At its start only: a hugetlb body, which splits only on 2 MiB
	 * boundaries (reused whole or not at all), and a huge body, whose miss
	 * moves cached areas' page tables under a fresh one (area.c's
	 * reuse_pages): windows cut for it left heads and tails that later
	 * large requests missed (allocwork large -s 4: 10.3 k -> 14.4 k faults,
	 * 0.73 -> 0.99 s).
	 */
	if (align >= HUGE_SIZE || (va->flags & VA_HUGETLB))
		return va_pages(va) >= pages && !(va->va_start & (align - 1)) &&
		       (va_pages(va) == pages || !(va->flags & VA_HUGETLB));
	/*
	 * Two kinds of piece serve slabs only.  One of a huge page that slabs
	 * are cut from (area_alloc_stocked): its pages are all backed, so an
	 * area cut from it for anything else would hold its guard page resident
	 * (allocwork churn's blocks of 1-4 pages: 1.36x the peak RSS).  And a
	 * whole slab's piece (64 KiB on its boundary, an emptied slab's chunk):
	 * cut for a block, it left the next slab request nothing whole, and
	 * that request took fresh pages while the cache held hundreds of
	 * smaller pieces (allocwork stress: 515 of its 4 563 slab requests
	 * carved fresh; kept whole, 8 % fewer faults and 6 % less peak RSS, the
	 * same time).  A block of its size still takes such a piece off its
	 * bin's head on a hit; a block of 15 pages that happens to lie on
	 * 64 KiB waits for its size or a slab like any such piece.
	 */
	if (align < SLAB_SIZE &&
	    ((va->flags & VA_DENSE) || (va_size(va) == SLAB_SIZE && !(va->va_start & (SLAB_SIZE - 1)))))
		return false;
	return aligned_start(va, align) + (pages << UVM_PAGE_SHIFT) <= va->va_end;
}

/* The first exact fit among the hottest PCP_SCAN entries, else the smallest fit among them (best fit keeps large areas whole). */
static struct vmap_area *take_fit(struct pcp *p, struct pcp_list *l, size_t pages, size_t align)
{
	struct vmap_area *va, *fit = NULL;
	unsigned seen = 0;

	list_for_each_entry(va, &l->head, list) {
		if (++seen > PCP_SCAN)
			break;
		if (!fits(va, pages, align))
			continue;
		if (va_pages(va) == pages) {
			fit = va;
			break;
		}
		if (!fit || va_pages(va) < va_pages(fit))
			fit = va;
	}
	if (fit)
		unlink_cached(p, fit);
	return fit;
}

/* The next non-empty bin from bin i on, or PCP_BIN_PAGES; the stale bits it passes are cleared. */
static unsigned next_bin(struct pcp *p, struct pcp_node *n, unsigned i)
{
	unsigned b;

	while ((b = (unsigned)bitmap_next(n->binmap, i, PCP_BIN_PAGES)) < PCP_BIN_PAGES) {
		if (!list_empty(&n->lists[b].head))
			return b;
		unmark_bin(p, n, b);
		i = b + 1;
	}
	return PCP_BIN_PAGES;
}

/* Any cached area of node nid that fits: the exact bin, larger bins smallest first, then the orders. */
static struct vmap_area *search(struct pcp *p, unsigned nid, size_t pages, size_t align)
{
	struct pcp_node *n = &p->nodes[nid];
	struct vmap_area *va = NULL;

	for (unsigned i = next_bin(p, n, (unsigned)pages); i < PCP_BIN_PAGES && !va; i = next_bin(p, n, i + 1))
		va = take_fit(p, &n->lists[i], pages, align);
	for (unsigned k = pcp_order(pages); k < PCP_ORDERS && !va; k++)
		va = take_fit(p, &n->lists[PCP_BIN_PAGES + k], pages, align);
	return va;
}

/*
 * va, out of the cache, onto out for the node: filed and holding only its
 * own range first (vnode.h's spans), while the heap is still held.
 */
static void leave(struct vmap_area *va, struct list_head *out)
{
	vn_busy_cut(va);
	list_add_tail(&va->list, out);
}

/* List l's coldest area onto out, its pages off *have; false when l is empty. */
static bool drain_tail(struct pcp *p, struct pcp_list *l, size_t *have, struct list_head *out)
{
	struct vmap_area *va;

	if (list_empty(&l->head))
		return false;
	va = list_entry(l->head.prev, struct vmap_area, list);
	*have -= va_pages(va);
	unlink_cached(p, va);
	leave(va, out);
	p->drained++;
	return true;
}

/*
 * One tail from each of node n's non-empty lists while over target: the
 * bins the binmap names (a stale bit is cleared on the way), then the
 * orders, so that a round costs the lists that hold areas and not all
 * PCP_LISTS (a thread's exit drained 512 cached pages in 1.5 M
 * instructions, looking at every empty list once per area).
 */
static void drain_round(struct pcp *p, struct pcp_node *n, size_t *have, size_t target, struct list_head *out)
{
	for (unsigned w = 0; w < PCP_BIN_PAGES / 64; w++)
		for (uint64_t bits = n->binmap[w]; bits && *have > target; bits &= bits - 1) {
			unsigned b = w * 64 + (unsigned)__builtin_ctzll(bits);

			if (!drain_tail(p, &n->lists[b], have, out))
				unmark_bin(p, n, b);
		}
	for (unsigned i = PCP_BIN_PAGES; i < PCP_LISTS && *have > target; i++)
		drain_tail(p, &n->lists[i], have, out);
}

/*
 * Move the coldest areas onto out until at most target pages stay: the tail
 * of each non-empty list in turn, as free_pcppages_bulk() does.  have: what
 * the cache holds (cached_pages); what it holds after.
 */
static size_t drain_locked(struct pcp *p, size_t have, size_t target, struct list_head *out)
{
	size_t pages = have;
	uint64_t drained = p->drained, before;

	do { /* a round that drains nothing ends it, whatever the counts say */
		before = p->drained;
		for (unsigned nid = 0; nid < reg.nodes && have > target; nid++)
			drain_round(p, &p->nodes[nid], &have, target, out);
	} while (have > target && p->drained != before);
	p->missed = 0;
	UVM_TRACE(cache_drain, p->drained - drained, pages - have);
	return have;
}

static void close_marked(struct pcp *p, struct pcp_list *l, unsigned b, void *arg)
{
	(void)p, (void)b, (void)arg;
	close_bin(l);
}

/* Every bin's room left taken back, and the cache's room set to high less have (what the cache holds). */
static void set_room(struct pcp *p, size_t have)
{
	each_marked_bin(p, close_marked, NULL);
	p->room = have < p->high ? p->high - have : 0;
}

/* Every area of p's cache onto out. */
static void drain_all_locked(struct pcp *p, struct list_head *out)
{
	set_room(p, drain_locked(p, cached_pages(p), 0, out));
}

/*
 * Out of room, the cache holding have pages: a decayed thread busy again
 * gets its minimum high back, and within a batch of high, a thread that
 * missed grows high, else the coldest drain to a batch below it, so that a
 * cache held near high by other sizes does not send every free of the one
 * in use the slow way.  Then room again.
 */
static void reroom(struct pcp *p, size_t have, struct list_head *out)
{
	if (p->high < PCP_HIGH_MIN_PAGES && PCP_HIGH_MIN_PAGES <= uvm__pcp_high_max)
		p->high = PCP_HIGH_MIN_PAGES;
	if (have + PCP_BATCH_PAGES > p->high && p->missed) {
		p->high = p->high + p->missed < uvm__pcp_high_max ? p->high + p->missed : uvm__pcp_high_max;
		p->missed = 0;
	}
	if (have + PCP_BATCH_PAGES > p->high)
		have = drain_locked(p, have, p->high > PCP_BATCH_PAGES ? p->high - PCP_BATCH_PAGES : 0, out);
	set_room(p, have);
}

/* pages just linked by a slow path, taken from room; when it runs out, reroom. */
static void admit(struct pcp *p, size_t pages, struct list_head *out)
{
	if (p->room >= pages)
		p->room -= pages;
	else
		reroom(p, cached_pages(p), out);
}

/*
 * p's parked area into its bin, as a slow path's free, so that the
 * slow paths' searches, joins and drains see it (the owner's, its heap
 * held: a claimer never touches the slot).  Its free moves from the bin's
 * parks to the slow paths' count.
 */
static void unpark(struct pcp *p, struct list_head *out)
{
	struct vmap_area *va = p->parked_va;
	size_t pages;

	if (!p->parked)
		return;
	pages = va_pages(va);
	pcp_slot_leave(p);
	p->frees++;
	p->free_pages += pages;
	atomic_store_explicit(&va->live, 0, memory_order_relaxed);
	link_cached(p, va);
	admit(p, pages, out);
}

/* A claimed heap's parked area into its bin when the heap is the caller's own: only its owner may take it. */
static void unpark_own(struct heap *h, struct list_head *out)
{
	if (h == uvm__heap)
		unpark(&h->pcp, out);
}

/*
 * h's inbox onto out, for the node.  An area there may still span cached
 * areas of h (a live area's shrink left them): cut free where h is held,
 * else pushed back for whoever holds h next (an unheld heap's spans may
 * move under us).
 */
static void inbox_out(struct heap *h, bool held, struct list_head *out)
{
	struct vmap_area *va, *n;
	LIST_HEAD(in);

	if (!heap_inbox_take(h, &in))
		return;
	list_for_each_entry_safe(va, n, &in, list) {
		list_del(&va->list);
		if (!va_spans(va))
			list_add_tail(&va->list, out);
		else if (held)
			leave(va, out);
		else
			heap_inbox_push(h, va, true);
	}
}

/* ---------------------------------------------------- thread lifetime */

void pcp_heap_init(struct pcp *p)
{
	p->high = PCP_HIGH_MIN_PAGES < uvm__pcp_high_max ? PCP_HIGH_MIN_PAGES : uvm__pcp_high_max;
	p->room = p->high;
	p->hit = &p->nodes[0];
	list_init(&p->spare);
	for (unsigned nid = 0; nid < reg.nodes; nid++)
		for (unsigned i = 0; i < PCP_LISTS; i++) {
			list_init(&p->nodes[nid].lists[i].head);
			p->nodes[nid].lists[i].marked = i >= PCP_BIN_PAGES; /* no bit in binmap: pcp_push must not set one */
		}
}

/*
 * Busy while the caches drain, as every change to them is: a fork (or a
 * decay) claims the heap and waits, instead of copying a cache halfway
 * through its drain into the child, whose own drain of it then never
 * ended (tests/mt under load: a list count and the page count that
 * disagreed).  A fork child's drain of a dead heap finds its claim
 * cleared.
 */
void pcp_heap_exit(struct heap *h)
{
	LIST_HEAD(out);

	heap_enter(h);
	unpark(&h->pcp, &out);
	drain_all_locked(&h->pcp, &out);
	inbox_out(h, true, &out);
	purge_free_backed(&out);
	meta_va_free_list(&h->pcp.spare);
	h->pcp.nr_spare = 0;
	heap_leave(h);
}

static void file_unfiled(struct pcp *p, struct pcp_list *l, unsigned b, void *arg)
{
	struct vmap_area *va;

	(void)p, (void)b, (void)arg;
	list_for_each_entry(va, &l->head, list)
		if (va->flags & VA_UNFILED)
			vn_busy_file(va);
}

/*
 * A retired heap's areas go to the node when other threads free them, and
 * no thread holds its heap to cut their spans: so none is left.  The
 * owner's unlocked splits and joins end here (its exit splits nothing).
 */
void pcp_heap_unspan(struct heap *h)
{
	struct pcp *p = &h->pcp;

	heap_enter(h);
	each_marked_bin(p, file_unfiled, NULL);
	for (unsigned nid = 0; nid < reg.nodes; nid++)
		for (unsigned k = 0; k < PCP_ORDERS; k++)
			file_unfiled(p, &p->nodes[nid].lists[PCP_BIN_PAGES + k], PCP_BIN_PAGES + k, NULL);
	heap_leave(h);
}

/*
 * A warm exit keeps the thread's high, its working set, and not a new
 * thread's 4 MiB: a program that runs a thread per task hands each next
 * thread the pages the last one used, where the drained rest went to the
 * node's lazy list, over its limit, and was purged (a C++ program of 4
 * threads a round, 40 MB each: 233 k -> 145 k faults, 2.3 -> 1.7 s, peak
 * RSS 175 -> 189 MB; allocwork local and stress at 64 threads unchanged).
 * An unadopted one decays by a quarter a step, as an idle thread's.  What
 * a warm exit does not keep (its inbox, and its cache past high: the empty
 * slabs its slab heap has just given back) goes to the node lazily, as a
 * running thread's drains do: into the pools, where a cold exit's whole
 * cache goes for the threads no warm heap awaits, every round of a program
 * replacing its threads added it, and the pools grew with the run
 * (allocwork stress on 2 threads, -s 16 and 30: peak RSS 19.5 and 20.8
 * MB, 16.9 and 18.2 lazily, as many faults; tasks the same).
 */
void pcp_heap_vacate(struct heap *h, bool warm)
{
	struct pcp *p = &h->pcp;
	LIST_HEAD(out);

	heap_enter(h);
	unpark(p, &out);
	inbox_out(h, true, &out);
	set_room(p, drain_locked(p, cached_pages(p), warm ? p->high : 0, &out));
	heap_leave(h);
	if (warm)
		purge_free_lazily(&out);
	else
		purge_free_backed(&out);
}

/*
 * A cache's counts with its bins' in-line parts added to the slow paths'
 * (hits, frees, alloc_pages, free_pages; the areas and pages it holds),
 * read as words: other threads read them racily, so every bin is summed,
 * marked or not.
 */
struct bin_sums {
	uint64_t hits, frees, alloc_pages, free_pages, count, pages;
};

static uint64_t word(const uint64_t *w) { return __atomic_load_n(w, __ATOMIC_RELAXED); }

static struct bin_sums sums_of(const struct pcp *p)
{
	struct bin_sums c = { word(&p->hits), word(&p->frees), word(&p->alloc_pages), word(&p->free_pages), 0,
			      __atomic_load_n(&p->slow_pages, __ATOMIC_RELAXED) };
	/* The parked area's bin, if one is parked: its hits are its parks less that one. */
	const struct pcp_list *parked = __atomic_load_n(&p->parked, __ATOMIC_RELAXED) ? __atomic_load_n(&p->parked_list, __ATOMIC_RELAXED) : NULL;

	for (unsigned nid = 0; nid < reg.nodes; nid++)
		for (unsigned i = 0; i < PCP_LISTS; i++) {
			const struct pcp_list *l = &p->nodes[nid].lists[i];
			uint64_t pops = word(&l->pops), pushes = word(&l->cap) + word(&l->spent), u = pushes - pops - word(&l->folded);
			uint64_t parks = word(&l->parks), here = parks && l == parked;

			c.count += (uint32_t)(__atomic_load_n(&l->count, __ATOMIC_RELAXED) + (uint32_t)u) + here;
			if (i >= PCP_BIN_PAGES)
				continue;
			c.hits += pops + parks - here;
			c.frees += pushes + parks;
			c.alloc_pages += (pops + parks - here) * i;
			c.free_pages += (pushes + parks) * i;
			c.pages += (u + here) * i;
		}
	return c;
}

void pcp_heap_fold(struct pcp *p)
{
	struct bin_sums c = sums_of(p);

	reg.hits += c.hits;
	reg.misses += p->misses;
	reg.allocs += c.hits + p->allocs; /* the process's count is of all allocations */
	reg.frees += c.frees;
	reg.drained += p->drained;
	reg.alloc_pages += c.alloc_pages;
	reg.free_pages += c.free_pages;
	reg.requested += p->requested;
	/* The cache stays (a vacant heap's): its bins' in-line parts go into the slow counts, and their counters start again. */
	for (unsigned nid = 0; nid < reg.nodes; nid++)
		for (unsigned i = 0; i < PCP_BIN_PAGES; i++) {
			struct pcp_list *l = &p->nodes[nid].lists[i];

			fold_bin(p, l, i);
			l->pops = l->spent = l->cap = l->folded = l->parks = 0;
		}
	p->hits = p->misses = p->allocs = p->frees = p->drained = 0;
	p->alloc_pages = p->free_pages = p->requested = 0;
	p->missed = 0;
	p->ops_at_decay = 0; /* idle from here on, to decay (decay_one) */
}

size_t pcp_lists_size(unsigned nodes) { return (size_t)nodes * sizeof(struct pcp_node); }

/* UVM_PCP_HIGH, at set-up and from uvm_option_set (caches off stay off: their heaps hold no areas). */
static void set_high_max(long long bytes)
{
	if (option(OPT_PCP))
		__atomic_store_n(&uvm__pcp_high_max, (size_t)bytes >> UVM_PAGE_SHIFT, __ATOMIC_RELAXED);
}

int pcp_init(unsigned nodes)
{
	reg.nodes = nodes;
	set_high_max(option(OPT_PCP_HIGH));
	option_watch(OPT_PCP_HIGH, set_high_max);
	return 0;
}

/* ------------------------------------------------------- trims, merges */

/* The pages a hit on va for pages keeps: all of them within pcp_whole_max. */
static size_t kept_pages(const struct vmap_area *va, size_t pages) { return va_pages(va) <= pcp_whole_max(pages) ? va_pages(va) : pages; }

/*
 * A spare area object, the owner inside its heap: the thread's own, else a
 * batch of fresh ones (half the most it keeps, so that a thread whose
 * splits outnumber its joins, or the reverse, takes the pool's lock once a
 * batch: the kernel's per-CPU page lists' batch against their high).
 */
static struct vmap_area *spare_get(struct pcp *p)
{
	struct vmap_area *va;

	if (!p->nr_spare && !(p->nr_spare = meta_va_alloc_list(&p->spare, PCP_SPARE_MAX / 2)))
		return NULL;
	va = list_first_entry(&p->spare, struct vmap_area, list);
	list_del(&va->list);
	p->nr_spare--;
	return va;
}

/* One more spare; past the most kept, the coldest half back to the pool. */
static void spare_put(struct pcp *p, struct vmap_area *va)
{
	LIST_HEAD(out);

	list_add(&va->list, &p->spare);
	if (++p->nr_spare <= PCP_SPARE_MAX)
		return;
	while (p->nr_spare > PCP_SPARE_MAX / 2) {
		struct list_head *coldest = p->spare.prev;

		list_del(coldest);
		list_add(coldest, &out);
		p->nr_spare--;
	}
	meta_va_free_list(&out);
}

struct vmap_area *pcp_spare(struct heap *h)
{
	struct vmap_area *va;

	heap_enter(h);
	va = spare_get(&h->pcp);
	heap_leave(h);
	return va;
}

/*
 * va cut at at: va keeps what lies before, the spare tail (unfiled,
 * vnode.h) the rest.  Inside the heap, as every change to a span.
 */
static void split(struct heap *h, struct vmap_area *va, uintptr_t at, struct vmap_area *tail)
{
	if (unlikely(atomic_load(&h->retired))) /* past pcp_heap_unspan: filed, the locked way */
		vn_busy_split(va, at, tail);
	else
		vn_busy_split_local(va, at, tail);
}

/*
 * A larger area than asked for is cut to size (the buddy's expand()); the
 * tail stays cached, whole, and unfiled (vnode.h): no lock.
 */
static void trim(struct heap *h, struct vmap_area *va, size_t pages, struct list_head *out)
{
	struct pcp *p = &h->pcp;
	struct vmap_area *tail;

	if (kept_pages(va, pages) == va_pages(va))
		return;
	tail = spare_get(p);
	if (!tail)
		return; /* out of metadata: the whole area is handed out */
	split(h, va, va->va_start + (pages << UVM_PAGE_SHIFT), tail);
	link_cached(p, tail);
	admit(p, va_pages(tail), out);
}

/*
 * va found for an aligned request (fits) that starts past va's start: its
 * head stays cached as an area of its own, and the rest, which starts
 * aligned, is returned; NULL, and va cached again, when out of metadata.
 */
static struct vmap_area *cut_head(struct heap *h, struct vmap_area *va, size_t align, struct list_head *out)
{
	uintptr_t at = aligned_start(va, align);
	struct pcp *p = &h->pcp;
	struct vmap_area *rest;

	if (at == va->va_start)
		return va;
	rest = spare_get(p);
	if (rest)
		split(h, va, at, rest);
	link_cached(p, va);
	admit(p, va_pages(va), out);
	return rest;
}

/* The cached area of p that starts right where va ends, if it may join va at all. */
static struct vmap_area *follower(struct pcp *p, const struct vmap_area *va)
{
	va_slot_t *slot = arena_slot(va->va_end);
	struct vmap_area *next = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;

	if (!next || !cached_in(p, next) || next->va_start != va->va_end)
		return NULL;
	/* A hugetlb body splits and joins only on 2 MiB boundaries; slabs are never cached. */
	if ((va->flags | next->flags) & VA_HUGETLB)
		return NULL;
	/*
	 * A slab stock's piece and another area stay apart: joined, the other
	 * took the piece's flag and served slabs only (fits), so that buffers
	 * freed beside a stock were lost to buffer requests (allocwork phases:
	 * a round's buffers joined to its stocks at the next round's large miss,
	 * and 70 % of the next round's buffers faulted fresh pages in).
	 */
	if ((va->flags ^ next->flags) & VA_DENSE)
		return NULL;
	return next;
}

/* The same, if it joins va of its own accord (an order list's free, a coalescing pass). */
static struct vmap_area *mergeable_next(struct pcp *p, const struct vmap_area *va)
{
	struct vmap_area *next = follower(p, va);

	/*
	 * Equal neighbours stay apart: they are a batch of equal requests (an
	 * array of buffers, a deferred-free batch), which come back as such and
	 * fit exactly, where a joined block would be cut again at every one.
	 */
	return next && va_size(next) != va_size(va) ? next : NULL;
}

bool pcp_joins_next(struct pcp *p, const struct vmap_area *va) { return mergeable_next(p, va) != NULL; }

/* The cached area next, right after va, out of its list and into va. */
static void join(struct pcp *p, struct vmap_area *va, struct vmap_area *next)
{
	unlink_cached(p, next);
	os_guard_remove(va->va_end - UVM_PAGE_SIZE, UVM_PAGE_SIZE); /* va's guard page is inside now */
	va->flags |= next->flags & (VA_HUGE | VA_MOVED | VA_REUSED);
	vn_busy_join(va, next);
	spare_put(p, next);
}

/*
 * The buddy allocator's coalescing, for areas of the order lists: a freed
 * area takes in the cached areas that follow it, so trimmed tails and
 * neighbours freed earlier become one block again.
 */
static void merge_next(struct pcp *p, struct vmap_area *va)
{
	struct vmap_area *next;

	while ((next = mergeable_next(p, va)))
		join(p, va, next);
}

/*
 * Delayed coalescing (jemalloc's, for its dirty extents): a bin's free is
 * a push and never looks at its neighbours, so the tails that trims leave
 * in the bins pile up, each too small for the large requests that miss
 * while the cache holds many times their size (allocwork buffers, sizes of
 * 1..300 pages: a miss for 300 pages with 20 k pages cached in 1500 areas,
 * none of them larger than 296 pages; every such miss is fresh memory, so
 * peak RSS grew with the run).  On such a miss, every area of node nid's
 * lists takes in the cached areas that follow it, as an order list's free
 * does (equal neighbours stay apart), and goes back onto the list of its
 * new size.  Each area's follower is found through the page map, so the
 * pass costs one look per area; coalesce_due says when it is worth one.
 * buffers: peak RSS 175 -> 132 MiB, 278 -> 155 MiB over a 30 times longer
 * run, and no slower.
 */
static void coalesce(struct pcp *p, unsigned nid)
{
	struct pcp_node *n = &p->nodes[nid];
	struct vmap_area *va;
	size_t areas = 0;
	LIST_HEAD(all);

	for (unsigned i = 0; i < PCP_LISTS; i++)
		list_splice_tail(&n->lists[i].head, &all); /* each stays counted in its list until it is unlinked */
	/* Coldest first, each back at the head of its list: a list's order of heat is kept. */
	while (!list_empty(&all)) {
		va = list_entry(all.prev, struct vmap_area, list);
		unlink_cached(p, va);
		merge_next(p, va); /* followers still on all come off it */
		link_cached(p, va);
		p->room -= va_pages(va); /* what its unlinks gave back */
		areas++;
	}
	p->coalesce_credit = 0;
	p->coalesce_cost = areas;
}

/*
 * vrealloc's growth into the thread's own cache: the cached area that
 * starts where the live area va ends and reaches end or beyond (a shrink's
 * tail, or a neighbour freed earlier) joins va.  False when there is none.
 */
bool pcp_absorb_next(struct heap *h, struct vmap_area *va, uintptr_t end)
{
	struct pcp *p = &h->pcp;
	va_slot_t *slot = arena_slot(va->va_end);
	struct vmap_area *next;

	/*
	 * Looked at inside the heap: a claimer (uvm_purge, decay) may drain the
	 * neighbour between a look from outside and the unlink, which then
	 * unlinked it a second time (a list's count and the cache's pages ran
	 * below zero, and the next drain spun forever).
	 */
	heap_enter(h);
	next = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
	if (!next || !cached_in(p, next) || next->va_start != va->va_end || next->va_end < end ||
	    ((va->flags | next->flags) & VA_HUGETLB)) {
		heap_leave(h);
		return false;
	}
	unlink_cached(p, next);
	p->alloc_pages += va_pages(next); /* live bytes grow by all of it, its guard page included: no area more */
	os_guard_remove(va->va_end - UVM_PAGE_SIZE, UVM_PAGE_SIZE);
	va->flags |= next->flags & (VA_HUGE | VA_MOVED | VA_REUSED);
	vn_busy_join(va, next); /* a shrink's tail is unfiled: a store, in the heap */
	spare_put(p, next);
	heap_leave(h);
	return true;
}

/* ------------------------------------------------------------ fast paths */

/* A free of va into p, counted (the heap held, va no larger than high's cap). */
static void put_held(struct pcp *p, struct vmap_area *va, struct list_head *out)
{
	size_t pages = va_pages(va);

	if (likely(pages < PCP_BIN_PAGES)) {
		va->cache = pcp_list_of(p, va);
		pcp_push(p, va);
		admit(p, pages, out);
	} else {
		p->frees++;
		p->free_pages += pages;
		merge_next(p, va);
		link_cached(p, va);
		admit(p, va_pages(va), out);
	}
}

/* va into the cache of h, which the caller entered: then h left, and what the cache drained to the node. */
static void put_and_leave(struct heap *h, struct vmap_area *va)
{
	LIST_HEAD(out);

	put_held(&h->pcp, va, &out);
	heap_leave(h);
	purge_free_lazily(&out);
}

bool pcp_put(struct heap *h, struct vmap_area *va)
{
	size_t pages = va_pages(va);

	if (pages > uvm__pcp_high_max) {
		pcp_count_free(h, pages);
		if (va_spans(va)) { /* to the node: only the holder of its heap, this thread, can cut its span */
			heap_enter(h);
			vn_busy_cut(va);
			heap_leave(h);
		}
		return false;
	}
	heap_enter(h);
	put_and_leave(h, va);
	return true;
}

bool pcp_shrink(struct heap *h, struct vmap_area *va, uintptr_t at)
{
	struct pcp *p = &h->pcp;
	size_t pages = (va->va_end - at) >> UVM_PAGE_SHIFT;
	struct vmap_area *tail;
	LIST_HEAD(out);

	if (pages > uvm__pcp_high_max || va->heap != h || atomic_load(&h->retired))
		return false;
	heap_enter(h);
	tail = spare_get(p);
	if (!tail) {
		heap_leave(h);
		return false;
	}
	vn_busy_split_local(va, at, tail);
	/* The tail is freed as an area of its own: allocs - frees stays the live count. */
	p->allocs++;
	p->alloc_pages += pages;
	put_held(p, tail, &out);
	heap_leave(h);
	purge_free_lazily(&out);
	return true;
}

/*
 * The freeing thread keeps another thread's area, as the slabs' hands keep
 * other threads' objects (slab.h) and tcmalloc's thread caches what their
 * thread frees: a thread that frees as much as it allocates then reuses
 * what it frees, pages and all.  Sent back to its owner, an area came back
 * to a thread whose cache, fed by whichever threads freed its blocks, ran
 * dry and full in turns, while the others' overflowed to the nodes, to be
 * purged: allocwork stress (threads that swap blocks of 16 B-64 KiB
 * through shared slots, each round on new threads), every byte of its
 * blocks written (-w), took 37.0k page faults on 8 threads and 165k on 32, now
 * 21.3k and 110k (time -27 % and -19 %, peak RSS -13 % and -8 %; tcmalloc
 * 6.5k and 21.8k).  A cache with no room left, and a large area (an order
 * list's, 512 KiB and up), still send it home (the owner's inbox): a
 * consumer that never allocates hoards no more than its cache's room, and
 * a producer of large blocks gets them back.  An area whose owner has
 * exited has no home: kept whatever the room, the cache drains what it
 * cannot hold.
 */
bool pcp_adopt(struct heap *h, struct vmap_area *va)
{
	size_t pages = va_pages(va);

	/* A span is cut only where its heap is held (vnode.h): a spanning area goes home whatever the room. */
	if (!h || !va->heap || atomic_load(&h->retired) || pages > uvm__pcp_high_max || va_spans(va) || !heap_allocated(h))
		return false;
	heap_enter(h); /* room is the claimers' too (decay, uvm_purge) */
	if (!atomic_load(&va->heap->retired) && (pages >= PCP_BIN_PAGES || h->pcp.room < pages)) {
		heap_leave(h);
		return false;
	}
	va->heap = h;
	put_and_leave(h, va);
	return true;
}

void pcp_stock(struct heap *h, struct vmap_area *va)
{
	LIST_HEAD(out);

	heap_enter(h);
	/*
	 * Fetched from the node, as a miss's pages are: what high grows by when
	 * the thread's frees overflow it (reroom).  Counted by the request
	 * alone (a slab's 16 pages of a 513-page huge stock), a program whose
	 * slabs came from stocks drained a round's freed slabs at the end of
	 * every round and faulted them in again in the next (allocwork phases
	 * -s 4: high stopped at 212 MiB of a 360 MiB round).
	 */
	h->pcp.missed += va_pages(va);
	link_cached(&h->pcp, va);
	admit(&h->pcp, va_pages(va), &out);
	heap_leave(h);
	purge_free_lazily(&out);
}

bool pcp_give_back(struct vmap_area *va)
{
	struct heap *owner = va->heap;
	LIST_HEAD(out);

	/* A spanning area goes to its owner whatever the inbox holds: only a holder of the heap can cut its span. */
	if (atomic_load(&owner->retired) || !heap_inbox_push(owner, va, va_spans(va)))
		return false;
	/* The owner began its exit after our look: its exit may have drained the inbox already, so drain it here. */
	if (unlikely(atomic_load(&owner->retired))) {
		inbox_out(owner, false, &out);
		purge_free_lazily(&out);
	}
	return true;
}

/* Areas of h that other threads freed, back into h's cache (their frees were counted where they happened). */
static void take_inbox(struct heap *h)
{
	struct vmap_area *va, *n;
	size_t pages = 0;
	LIST_HEAD(in);
	LIST_HEAD(out);

	if (!heap_inbox_take(h, &in))
		return;
	heap_enter(h);
	list_for_each_entry_safe(va, n, &in, list) {
		list_del(&va->list);
		if (va_pages(va) <= uvm__pcp_high_max) {
			link_cached(&h->pcp, va);
			pages += va_pages(va);
		} else {
			leave(va, &out);
		}
	}
	admit(&h->pcp, pages, &out);
	heap_leave(h);
	purge_free_lazily(&out);
}

/*
 * The largest cached large block whose usable pages are at most room and
 * can move (hugetlb bodies move only whole), or NULL.  Lists from the
 * highest order down: a block found in one outgrows every lower order's.
 */
static struct vmap_area *largest_within(struct pcp *p, size_t room)
{
	struct vmap_area *va, *best = NULL;

	for (unsigned nid = 0; nid < reg.nodes; nid++)
		for (unsigned k = pcp_order(room + 1) + 1; k-- > pcp_order(PCP_LARGE_PAGES);) {
			list_for_each_entry(va, &p->nodes[nid].lists[PCP_BIN_PAGES + k].head, list)
				if (va_pages(va) - 1 <= room && !(va->flags & VA_HUGETLB) && (!best || va_pages(va) > va_pages(best)))
					best = va;
			if (best && va_pages(best) >= (size_t)1 << k)
				break;
		}
	return best;
}

/*
 * The cached large blocks whose pages a fresh block of pages pages takes,
 * onto out: largest first, each only while the block has room for all of
 * its pages.  A donor moved in part gave the rest of its pages back, and
 * one not moved at all went back whole: shedding every smaller block, as
 * this did, left allocwork large (5-25 MiB blocks recycled) holding
 * 122 MiB at its peak but faulting 230 MiB in; the others stay cached.
 */
static void shed_smaller(struct pcp *p, size_t pages, struct list_head *out)
{
	size_t room = pages - 1;
	struct vmap_area *va;

	while ((va = largest_within(p, room))) {
		room -= va_pages(va) - 1;
		unlink_cached(p, va);
		leave(va, out);
		p->drained++;
	}
}

void pcp_take_smaller(struct heap *h, size_t pages, struct list_head *out)
{
	heap_enter(h);
	shed_smaller(&h->pcp, pages, out);
	heap_leave(h);
}

/* A miss of pages pages credited: whether the misses since the last pass pay for one (as many pages as it looked at areas). */
static bool coalesce_paid(struct pcp *p, size_t pages)
{
	p->coalesce_credit += pages;
	return p->coalesce_credit >= p->coalesce_cost;
}

/*
 * After a miss for pages pages: whether to coalesce first.  Only for a
 * large request (an order list's), whose fresh pages are the costliest to
 * fault in and to hold; the bins' own misses are served fresh and reused
 * exactly from then on (a pass on each of them joined areas that the next
 * requests cut again: random_size took 8x the time).  Only when the cache
 * holds as many pages, and paid for: the pages missed since the last pass
 * must be as many as that pass looked at areas.
 */
static bool coalesce_due(struct pcp *p, size_t pages)
{
	return pages >= PCP_BIN_PAGES && coalesce_paid(p, pages) && cached_pages(p) >= pages;
}

/* The pages of va and of the cached areas that follow it, counted until they reach pages. */
static size_t run_pages(struct pcp *p, const struct vmap_area *va, size_t pages)
{
	size_t run = va_pages(va);

	while (run < pages && (va = follower(p, va)))
		run += va_pages(va);
	return run;
}

/*
 * One run of node nid's cached neighbours joined into an area of pages
 * pages or more, for a bin's miss: the first area of the smaller bins,
 * largest bin first, whose followers make up the pages (equal ones too:
 * the request needs them now).  Only that run: the rest keep their sizes
 * for the requests that fit them exactly.  Looks at JOIN_LOOKS areas at
 * most, a few page-map reads each, where the miss it spares faults its
 * pages in at 11 us each.
 */
static bool join_run(struct pcp *p, unsigned nid, size_t pages)
{
	struct pcp_node *n = &p->nodes[nid];
	struct vmap_area *va;
	unsigned looked = 0;

	for (size_t b = pages - 1; b >= 2; b--)
		list_for_each_entry(va, &n->lists[b].head, list) {
			if (looked++ == JOIN_LOOKS)
				return false;
			if (run_pages(p, va, pages) < pages)
				continue;
			unlink_cached(p, va);
			while (va_pages(va) < pages)
				join(p, va, follower(p, va));
			link_cached(p, va);
			p->room -= va_pages(va); /* what its unlinks gave back */
			return true;
		}
	return false;
}

/* What a cache holds: its pages (cached_pages), and its bins' areas and how many bins hold any. */
struct shape {
	size_t pages, areas, bins;
};

static void add_shape(struct pcp *p, struct pcp_list *l, unsigned b, void *arg)
{
	struct shape *sh = arg;
	uint32_t n = l->count + (uint32_t)pcp_unfolded(l);

	add_unfolded(p, l, b, &sh->pages);
	if (n) {
		sh->areas += n;
		sh->bins++;
	}
}

/*
 * Whether a bin's miss for pages pages aligned to align (a page: a slab's
 * miss says nothing of the cache's sizes) is one of a fragmented cache:
 * one that holds half its high or more, in many areas of each size it has
 * (8 on average), yet none as large as this.  The trims of a program
 * freeing and asking for random sizes cut its larger areas down, and each
 * such miss took fresh pages and grew high by them: allocwork stress on 2
 * threads (blocks of 16 B-64 KiB swapped between threads that are
 * replaced every round) held more the longer it ran, 9.7, 26.4, 31.5 and
 * 37.2 MB at its peak at -s 1, 16, 30 and 60, where joining fits for such
 * misses holds 9.6, 18.0, 23.0 and 28.7, with as many faults (mimalloc
 * 18.4-18.9 MB at -s 16-60, tcmalloc 15.1-15.8, glibc 7.5).  A cache of few
 * areas per size (vmbench random_size: 86 areas of as many sizes) hits
 * exactly, and a join there only made cuts that missed again (5x its time).
 */
static bool fragmented(struct pcp *p, size_t pages, size_t align)
{
	struct shape sh = { p->slow_pages, 0, 0 };

	if (pages >= PCP_BIN_PAGES || align > UVM_PAGE_SIZE)
		return false;
	each_marked_bin(p, add_shape, &sh); /* one walk: cached_pages's and the shape's */
	return sh.pages >= p->high / 2 && sh.areas >= 8 * sh.bins;
}

/*
 * A fragmented cache's miss: one run joined to fit (join_run), else, when
 * none makes up the pages and the misses since the last pass paid for one
 * (coalesce_paid, as a large miss's), a coalescing pass.  The run first: a pass
 * joins every neighbour, a new thread's inherited buffers too, and
 * the next requests cut them again at other boundaries (allocwork tasks:
 * 6 % more faults and peak RSS when every such miss made a pass).
 */
static struct vmap_area *defragment(struct pcp *p, unsigned nid, size_t pages, size_t align)
{
	if (!fragmented(p, pages, align))
		return NULL;
	if (!join_run(p, nid, pages)) {
		if (!coalesce_paid(p, pages))
			return NULL;
		coalesce(p, nid);
	}
	return search(p, nid, pages, align);
}

struct vmap_area *pcp_get(struct heap *h, unsigned nid, size_t pages, size_t align)
{
	struct pcp *p = &h->pcp;
	struct vmap_area *va;
	LIST_HEAD(out);

	if (!uvm__pcp_high_max)
		return NULL;
	take_inbox(h);
	heap_enter(h);
	unpark(p, &out);
	va = search(p, nid, pages, align);
	if (!va && coalesce_due(p, pages)) {
		coalesce(p, nid);
		va = search(p, nid, pages, align);
	}
	if (!va)
		va = defragment(p, nid, pages, align);
	if (va)
		va = cut_head(h, va, align, &out);
	if (va) {
		p->hits++;
		p->alloc_pages += kept_pages(va, pages);
		if (va->flags & VA_UNFILED) /* handed out: into the tree */
			vn_busy_file(va);
		trim(h, va, pages, &out);
	} else {
		p->misses++;
		p->missed += pages;
	}
	heap_leave(h);
	purge_free_lazily(&out);
	if (!va)
		UVM_TRACE(cache_miss, pages, nid);
	return va;
}

/*
 * Counted in the thread's own heap, or in shared atomics once the thread is
 * past its exit.  Inside heap_enter: decay reads the counters of a claimed
 * heap.  Callers are slow paths outside any heap_enter of their own.
 */
static void count_op(struct heap *h, bool alloc, size_t pages)
{
	if (!h) {
		atomic_fetch_add_explicit(alloc ? &reg.stray_allocs : &reg.stray_frees, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(alloc ? &reg.stray_alloc_pages : &reg.stray_free_pages, pages, memory_order_relaxed);
		return;
	}
	heap_enter(h);
	*(alloc ? &h->pcp.allocs : &h->pcp.frees) += 1;
	*(alloc ? &h->pcp.alloc_pages : &h->pcp.free_pages) += pages;
	heap_leave(h);
}

void pcp_count_alloc(struct heap *h, size_t pages) { count_op(h, true, pages); }

/* A plain add: only the owner writes its word, and readers take it as a word (as every counter here). */
void pcp_count_request(struct heap *h, size_t size)
{
	if (h)
		h->pcp.requested += size;
	else
		atomic_fetch_add_explicit(&reg.stray_requested, size, memory_order_relaxed);
}

static void requested_one(struct heap *h, void *arg) { *(uint64_t *)arg += h->pcp.requested; }

uint64_t pcp_requested(void)
{
	uint64_t n = 0;

	heap_for_each_live(requested_one, &n);
	return n + reg.requested + atomic_load_explicit(&reg.stray_requested, memory_order_relaxed);
}
void pcp_count_free(struct heap *h, size_t pages) { count_op(h, false, pages); }

/* ------------------------------------------------------------- decay */

static uint64_t ops_of(const struct pcp *p)
{
	struct bin_sums c = sums_of(p);

	return c.hits + p->misses + c.frees;
}

static void decay_one(struct heap *h, bool owned, void *arg)
{
	struct pcp *p = &h->pcp;
	struct list_head *out = arg;
	size_t step, have;

	inbox_out(h, owned, out);
	if (!owned)
		return;
	unpark_own(h, out);
	if (ops_of(p) == p->ops_at_decay) {
		step = p->high / 4 > PCP_BATCH_PAGES ? p->high / 4 : PCP_BATCH_PAGES;
		p->high = p->high > step ? p->high - step : 0;
	} else if (p->high > PCP_HIGH_MIN_PAGES) {
		step = p->high / 8;
		p->high = p->high - step > PCP_HIGH_MIN_PAGES ? p->high - step : PCP_HIGH_MIN_PAGES;
	}
	p->ops_at_decay = ops_of(p);
	p->missed = 0;
	have = drain_locked(p, cached_pages(p), p->high, out);
	set_room(p, have);
	if (!have)
		heap_cooled(h);
}

void pcp_decay(void)
{
	LIST_HEAD(out);

	heap_for_each_claimed(decay_one, &out);
	purge_free_lazily(&out);
	purge_decay();
	slab_decay_orphans();
}

void pcp_decay_maybe(void)
{
	uint64_t now = coarse_ns(), due = atomic_load_explicit(&reg.next_decay, memory_order_relaxed);

	if (now < due || !atomic_compare_exchange_strong(&reg.next_decay, &due, now + PCP_DECAY_NS))
		return;
	pcp_decay();
}

struct drain_all {
	struct list_head out, spares;
};

static void drain_one(struct heap *h, bool owned, void *arg)
{
	struct drain_all *d = arg;

	inbox_out(h, owned, &d->out);
	if (!owned)
		return;
	unpark_own(h, &d->out);
	drain_all_locked(&h->pcp, &d->out);
	heap_cooled(h);
	list_splice_tail(&h->pcp.spare, &d->spares);
	h->pcp.nr_spare = 0;
}

void pcp_drain_all(void)
{
	struct drain_all d = { LIST_HEAD_INIT(d.out), LIST_HEAD_INIT(d.spares) };

	heap_for_each_claimed(drain_one, &d);
	purge_free_lazily(&d.out);
	meta_va_free_list(&d.spares);
}

size_t pcp_high(void)
{
	struct heap *h = heap_self();

	return h ? h->pcp.high : 0;
}

/* ------------------------------------------------------------- stats */

static void stats_one(struct heap *h, void *arg)
{
	const struct pcp *p = &h->pcp;
	struct uvm_stats *st = arg;
	struct bin_sums c = sums_of(p);
	uint64_t allocs = c.hits + word(&p->allocs);

	st->allocs += allocs;
	st->frees += c.frees;
	st->cache_hits += c.hits;
	st->cache_misses += word(&p->misses);
	st->cache_drained += word(&p->drained);
	st->area_alloc_bytes += (c.alloc_pages - allocs) << UVM_PAGE_SHIFT;
	st->area_free_bytes += (c.free_pages - c.frees) << UVM_PAGE_SHIFT;
	/*
	 * Areas other threads freed and the owner has not taken in yet: not
	 * live, so cached, as vminfo counts them (their live flag is down).
	 * A push that raced a take (between its count and its link: heap.c)
	 * leaves the count an area off until the owner's next take; with no
	 * such race it is exact.
	 */
	uint64_t inbox = atomic_load_explicit(&h->inbox_held, memory_order_relaxed);

	st->cached_bytes += (c.pages + inbox_pages(inbox)) << UVM_PAGE_SHIFT;
	st->cached_count += c.count + inbox_areas(inbox);
}

void pcp_stats(struct uvm_stats *st)
{
	/* Exited threads' totals, read as words (a thread exiting now may count twice or not at all). */
	heap_for_each_live(stats_one, st);
	uint64_t allocs = reg.allocs + atomic_load_explicit(&reg.stray_allocs, memory_order_relaxed);
	uint64_t frees = reg.frees + atomic_load_explicit(&reg.stray_frees, memory_order_relaxed);

	st->allocs += allocs;
	st->frees += frees;
	st->cache_hits += reg.hits;
	st->cache_misses += reg.misses;
	st->cache_drained += reg.drained;
	st->area_alloc_bytes +=
		(reg.alloc_pages + atomic_load_explicit(&reg.stray_alloc_pages, memory_order_relaxed) - allocs) << UVM_PAGE_SHIFT;
	st->area_free_bytes +=
		(reg.free_pages + atomic_load_explicit(&reg.stray_free_pages, memory_order_relaxed) - frees) << UVM_PAGE_SHIFT;
}

void pcp_describe(struct uvm_descriptor *d)
{
	size_t base = offsetof(struct heap, pcp);

	heap_describe(d);
	d->pcp_pages = d->pcp_count = 0; /* no longer kept: readers sum the lists */
	d->pcp_hits = base + offsetof(struct pcp, hits);
	d->pcp_misses = base + offsetof(struct pcp, misses);
	d->pcp_allocs = base + offsetof(struct pcp, allocs);
	d->pcp_frees = base + offsetof(struct pcp, frees);
	d->pcp_exited_allocs = (uintptr_t)&reg.allocs;
	d->pcp_exited_frees = (uintptr_t)&reg.frees;
	d->pcp_exited_hits = (uintptr_t)&reg.hits;
	d->pcp_exited_misses = (uintptr_t)&reg.misses;
	d->pcp_stray_allocs = (uintptr_t)&reg.stray_allocs;
	d->pcp_stray_frees = (uintptr_t)&reg.stray_frees;
	d->pcp_nodes = base + offsetof(struct pcp, nodes);
	d->pcp_nr_nodes = reg.nodes;
	d->pcp_node_size = sizeof(struct pcp_node);
	d->pcp_node_lists = offsetof(struct pcp_node, lists);
	d->pcp_lists_per_node = PCP_LISTS;
	d->pcp_list_size = sizeof(struct pcp_list);
	d->pcp_list_pops = offsetof(struct pcp_list, pops);
	d->pcp_list_cap = offsetof(struct pcp_list, cap);
	d->pcp_list_spent = offsetof(struct pcp_list, spent);
	d->va_live_parked = VA_PARKED;
	d->pcp_list_parks = offsetof(struct pcp_list, parks);
	d->pcp_parked = base + offsetof(struct pcp, parked);
	d->pcp_parked_list = base + offsetof(struct pcp, parked_list);
}
