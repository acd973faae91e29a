/*
 * area.c - the life of one area (the kernel's alloc_vmap_area,
 * vm_area_alloc_pages and free_vmap_area_noflush).
 *
 * Allocation, in the order seed 003 asks for: the thread's own cache, its
 * exact bin first, then larger areas (pcp.c); then the owner node's pool of
 * the exact page count, or for a large area the smallest pooled large one
 * of any node, cut to size in the cache; then the NUMA node's free tree (a fresh range: it
 * gets its huge body or its pages populated here); then, when the tree is
 * full, every cache drained and a full purge, and the tree again; then a new
 * region.  The owner is recorded even when the pool missed, so the area's
 * free feeds that pool later ("populate pools based on demand").
 *
 * The page map (arena.h) finds the area that starts at a pointer with no
 * lock; the area's own live flag tells a first free from a double one.  The
 * area remembers the thread heap that allocated it: that thread's free goes
 * to its cache, another thread's to that heap's inbox (heap.h).  On the hit
 * path only the area's own object and the thread's heap are written, so
 * threads share no cache line there.
 */
#include "area.h"

#include <errno.h>
#include <string.h>

#include "arena.h"
#include "heap.h"
#include "huge.h"
#include "meta.h"
#include "numa_node.h"
#include "options.h"
#include "os.h"
#include "pcp.h"
#include "purge.h"
#include "thp.h"
#include "trace.h"
#include "vnode.h"

static void guard_install(uintptr_t page) { os_guard_install(page, UVM_PAGE_SIZE); }
static void guard_remove(uintptr_t page) { os_guard_remove(page, UVM_PAGE_SIZE); }

size_t area_reclaim_and_purge(void)
{
	pcp_drain_all();
	return purge_now(1);
}

static int tree_alloc(unsigned nid, unsigned zone, struct vmap_area *va, size_t size, size_t align)
{
	int err = arena_alloc(nid, zone, va, size, align);

	/*
	 * reclaim_and_purge_vmap_areas(): what waits in caches, lazily or in
	 * pools may make room, unless the request is larger than the node's
	 * regions could ever hold: then the failure path stays cheap.
	 */
	if (err == ENOMEM && size <= arena_reserved(nid)) {
		if (area_reclaim_and_purge())
			err = arena_alloc(nid, zone, va, size, align);
	}
	if (err == ENOMEM && !arena_grow(nid, size, align))
		err = arena_alloc(nid, zone, va, size, align);
	return err;
}

/*
 * A fresh range from the free tree: unbacked, so its huge body or its
 * population is decided now.  *time_first (written for a huge kind only):
 * what thp.c wants of the body's first page (huge_back).
 */
static struct vmap_area *alloc_fresh(unsigned nid, unsigned owner, size_t size, size_t align, enum huge_kind huge,
				      enum huge_time *time_first, int *err)
{
	struct vmap_area *va = meta_va_alloc();

	if (!va) {
		*err = ENOMEM;
		return NULL;
	}
	*err = tree_alloc(nid, vn_zone(owner, size), va, size, align);
	if (*err) {
		meta_va_free(va);
		return NULL;
	}
	UVM_TRACE(tree_alloc, va->va_start, size, align);
	va->flags = 0;
	va_set_nid(va, nid);
	if (huge)
		*time_first = huge_back(va, huge);
	if (option(OPT_POPULATE))
		os_populate(va->va_start, area_usable(va));
	guard_install(va->va_end - UVM_PAGE_SIZE);
	return va;
}

/*
 * The buddy's part for large blocks: a fresh block takes the pages of the
 * cache's smaller large blocks that fit in it whole (pcp_take_smaller),
 * largest first, with mremap, instead of having the kernel zero new ones;
 * their ranges are left unbacked for the node to take back.  A program
 * recycling large blocks of varied sizes keeps its memory (tcmalloc does
 * it by cutting spans).
 *
 * Each donor's pages land where they lay modulo 2 MiB, so that the kernel
 * moves whole page tables (and huge pages whole) and not page by page:
 * pages moved one by one cost this guest a fault each at their next touch
 * (16 MiB written after such a move: 0.73 GB/s, against 0.35 fresh and 18
 * backed; docs/measurements.md), and a huge page moved off its alignment
 * is split first.  The gap that leaves (under 2 MiB a donor) is fresh.
 */
static size_t reuse_pages(struct vmap_area *va, struct list_head *donors)
{
	size_t end = area_usable(va); /* [0, end) of the block is still to fill, from the end down */
	struct vmap_area *d;

	if (va->flags & VA_HUGETLB)
		return end;
	/* From the end: a realloc's move fills the block's start with the old block's pages (area_copy). */
	list_for_each_entry(d, donors, list) { /* largest first, none hugetlb: pcp_take_smaller's order */
		size_t lag = (d->va_start - va->va_start) & (HUGE_SIZE - 1), n = area_usable(d) < end ? area_usable(d) : end, to;

		if (lag >= end)
			break;
		to = end - n >= lag ? end - n - ((end - n - lag) & (HUGE_SIZE - 1)) : lag;
		n = n < end - to ? n : end - to;
		va->flags |= VA_MOVED | VA_REUSED; /* a VMA of its own until purged; old data, so zeroing must memset */
		if (os_move(d->va_start, va->va_start + to, n))
			break;
		end = to;
	}
	return end;
}

/*
 * UVM_THP=auto times the first huge page of a fresh huge area that
 * huge_back picked: the program's first touch would fault it whole anyway.
 * Not where donors' pages filled it (fresh is what they left at the start).
 * A realloc's move then finds it backed and copies (area_copy): huge_back
 * picks few areas while huge pages pay.  Then the rest of a body that
 * waited for the sample.
 */
static void time_first_huge(struct vmap_area *va, enum huge_time wanted, size_t fresh)
{
	if (wanted != HUGE_UNTIMED && fresh >= HUGE_SIZE)
		thp_touch(va->va_start);
	if (wanted == HUGE_TIME_FIRST)
		huge_back_rest(va);
}

/* va, from a pool or the free tree, into its owner's busy tree as h's (the heap its frees feed). */
static void file_new(struct heap *h, struct vmap_area *va, unsigned owner)
{
	va_set_owner(va, owner);
	va->heap = uvm__pcp_high_max ? h : NULL; /* without caches, no heap takes frees in */
	va->cache = NULL;
	vn_busy_insert(va);
}

/* h's cached area of pages pages aligned to align on node nid, out of the cache (it may hold old data), or NULL. */
static struct vmap_area *cache_take(struct heap *h, unsigned nid, size_t pages, size_t align)
{
	struct vmap_area *va = pcp_get(h, nid, pages, align);

	if (va) {
		va->flags |= VA_REUSED;
		trace_snapshot(); /* a program that only ever hits its caches still sends snapshots */
	}
	return va;
}

/* An area of exactly pages pages from the pools (still backed), filed as h's (h may be NULL); or NULL. */
static struct vmap_area *pool_take(struct heap *h, unsigned nid, unsigned owner, size_t pages, size_t align)
{
	struct vmap_area *va = vn_pool_get(owner, pages, align, nid);

	if (va) {
		va->flags |= VA_REUSED;
		file_new(h, va, owner);
		pcp_count_alloc(h, pages);
		trace_snapshot();
	}
	return va;
}

/* va, a range no cache holds (fresh or pooled), filed as h's and into h's cache whole. */
static void stock(struct heap *h, struct vmap_area *va, unsigned owner)
{
	file_new(h, va, owner);
	pcp_stock(h, va);
}

/*
 * For h's miss of pages pages (more than a pool of one size holds): an
 * exited thread's large area from the pools, cut to size in h's cache as a
 * cached area is, its tail left cached (the buddy's expand()); or NULL.
 * An area larger than a cache may hold is not taken.
 */
static struct vmap_area *pool_take_large(struct heap *h, unsigned nid, unsigned owner, size_t pages, size_t align)
{
	struct vmap_area *va;

	if (pages > uvm__pcp_high_max || !(va = vn_pool_get_large(owner, pages, uvm__pcp_high_max, align, nid)))
		return NULL;
	stock(h, va, owner);
	return cache_take(h, nid, pages, align);
}

uvm_noinline struct vmap_area *area_alloc_slow(struct heap *h, size_t usable, size_t align, int node, bool huge_api,
					       int *err)
{
	unsigned nid = node < 0 ? numa_local() : (unsigned)node;
	size_t size = usable + UVM_PAGE_SIZE, pages = size >> UVM_PAGE_SHIFT;
	enum huge_kind huge = huge_wanted(usable, huge_api);
	unsigned owner = vn_owner_id();
	struct vmap_area *va = NULL;
	enum huge_time time_first = HUGE_UNTIMED;
	LIST_HEAD(donors);

	if (h && node < 0)
		h->pcp.hit = &h->pcp.nodes[nid]; /* the node the hits pop from, until the next miss */

	if (huge && align < HUGE_SIZE)
		align = HUGE_SIZE;
	if (h && (va = cache_take(h, nid, pages, align)))
		return va;
	pcp_decay_maybe();
	if (pages <= VN_POOL_PAGES)
		va = pool_take(h, nid, owner, pages, align);
	else if (h)
		va = pool_take_large(h, nid, owner, pages, align);
	if (va)
		return va;
	UVM_TRACE(pool_miss, pages);
	/*
	 * A large fresh range is faulted in page by page while lazily freed
	 * areas still hold their pages: give those back first, so that a
	 * program recycling large blocks holds its live blocks and its cache,
	 * not the lazy list's backlog besides.
	 */
	if (size >= HUGE_SIZE && vn_lazy_pages() >= HUGE_SIZE >> UVM_PAGE_SHIFT)
		purge_now(0);
	if (h && pages >= PCP_LARGE_PAGES)
		pcp_take_smaller(h, pages, &donors);
	if ((va = alloc_fresh(nid, owner, size, align, huge, &time_first, err)))
		time_first_huge(va, time_first, reuse_pages(va, &donors));
	purge_free_lazily(&donors); /* unbacked now, unless they could not move */
	if (!va)
		return NULL;
	file_new(h, va, owner);
	pcp_count_alloc(h, va_pages(va));
	trace_snapshot();
	return va;
}

/*
 * A fresh 2 MiB-aligned range into h's cache whole (an order list's area),
 * backed by one huge page, for slabs to be cut from: one fault where pages
 * faulted one by one cost this guest 11 us each (machine-facts); under
 * UVM_THP=auto, only while huge pages pay, and the fault is timed for the
 * verdict.  The huge page is faulted in under MADV_HUGEPAGE, which then
 * goes: the range's VMA
 * merges with its region again, however its pieces are given back later
 * (a piece purged under the advice split the VMA around it), and
 * khugepaged, which leaves NOHUGEPAGE ranges alone, never fills a purged
 * piece's hole again.  The first page is the next slab's anyway.  bytes:
 * the slab's, which alone gets small pages when huge ones do not pay.
 */
static bool stock_huge(struct heap *h, unsigned nid, size_t bytes)
{
	enum huge_kind kind = huge_wanted(HUGE_SIZE, false);
	unsigned owner = vn_owner_id();
	struct vmap_area *va;
	int err;

	if (kind == HUGE_NONE || (HUGE_SIZE >> UVM_PAGE_SHIFT) + 1 > uvm__pcp_high_max ||
	    (kind == HUGE_IF_PAYS && thp_pays(bytes) == TRY_NONE) ||
	    !(va = alloc_fresh(nid, owner, HUGE_SIZE + UVM_PAGE_SIZE, HUGE_SIZE, HUGE_NONE, NULL, &err)))
		return false;
	if (!os_hugepage(va->va_start, HUGE_SIZE, 1)) {
		huge_touch(va->va_start, kind);
		os_hugepage(va->va_start, HUGE_SIZE, 0);
	}
	va->flags |= VA_DENSE;
	va->caller = NULL;
	stock(h, va, owner);
	return true;
}

struct vmap_area *area_alloc_stocked(struct heap *h, size_t usable, size_t align)
{
	unsigned nid = numa_local();
	size_t pages = (usable >> UVM_PAGE_SHIFT) + 1;
	struct vmap_area *va;

	h->pcp.hit = &h->pcp.nodes[nid];
	va = cache_take(h, nid, pages, align);
	/*
	 * A pooled area of the size before a fresh huge page: a piece that a
	 * drain gave up and a purge pooled, or an exited thread's slab.  A
	 * program whose phases overflow the cache between rounds sent its
	 * pieces there and faulted new huge pages in for the next round's
	 * slabs (allocwork phases -s 2: 91 -> 86 huge pages, peak RSS 203.9 ->
	 * 196.3 MiB, the same time).
	 */
	if (!va)
		va = pool_take(h, nid, vn_owner_id(), pages, align);
	if (!va && stock_huge(h, nid, pages << UVM_PAGE_SHIFT))
		va = cache_take(h, nid, pages, align);
	if (!va)
		return NULL;
	va->caller = NULL;
	area_set_live(va, usable);
	return va;
}

bool area_free_own_list(struct heap *h, struct vmap_area *va) { return area_push_own(h, va, false); }

void area_repark(struct heap *h, struct vmap_area *va)
{
	struct pcp *p = &h->pcp;
	uint64_t key = p->parked_key;

	if (likely(area_push_own(h, p->parked_va, true))) {
		/*
		 * Of one bin, the commonest (a burst of one size): only the area
		 * changes, its key, bin and the bin's parks stay.  As a leave and
		 * a park, vmbench kvfree_rcu_1_arg took 10 instructions more a free.
		 */
		if (va->cache == p->parked_list) {
			atomic_store_explicit(&va->live, VA_PARKED, memory_order_relaxed);
			p->parked_va = va;
			__atomic_store_n(&p->parked, va->va_start, __ATOMIC_RELAXED);
			return;
		}
		pcp_slot_leave(p); /* its free counted once: by the push */
		area_park(h, va, va->va_start, key);
		return;
	}
	if (area_push_own(h, va, true))
		return;
	atomic_store_explicit(&va->live, 0, memory_order_relaxed); /* area_take's step: the owner's own live area */
	area_free(va);
}

/*
 * Another thread's area: into this thread's cache as its own, when it has
 * room (pcp_adopt), else to its owner's inbox (pcp.c); one whose owner has
 * exited, or whose inbox went stale (heap.h), backed to its node's pool,
 * where the next threads' misses find it (lazily, it would wait for a
 * purge while they fault fresh ranges in); one no heap owns (no caches),
 * lazily to the node.
 */
/* va, in no cache now, to its node: into a pool still backed, else onto its lazy list. */
static void to_node(struct vmap_area *va, bool backed)
{
	LIST_HEAD(one);

	list_add(&va->list, &one);
	if (backed)
		purge_free_backed(&one);
	else
		purge_free_lazily(&one);
}

static uvm_noinline void free_foreign(struct heap *h, struct vmap_area *va)
{
	va->cache = NULL; /* in no cache: the inbox's areas are not to be merged */
	atomic_store_explicit(&va->live, 0, memory_order_release); /* only now: VA_FREEING */
	if (pcp_adopt(h, va))
		return;
	pcp_count_free(h, va_pages(va));
	if (va->heap && pcp_give_back(va))
		return;
	to_node(va, va->heap != NULL);
}

void area_free_lazily(struct vmap_area *va)
{
	va->cache = NULL;
	atomic_store_explicit(&va->live, 0, memory_order_release); /* after the cache: free_foreign's order */
	pcp_count_free(uvm__heap, va_pages(va));
	to_node(va, false);
}

void area_free(struct vmap_area *va)
{
	struct heap *h = uvm__heap;

	if (unlikely(!h || va->heap != h)) {
		free_foreign(h, va);
		return;
	}
	if (likely(pcp_put(h, va)))
		return;
	va->cache = NULL;
	to_node(va, false);
}

/*
 * The owner's thread is the only one that frees its own area without a
 * race worth an atomic: a double free there finds the flag down.  Another
 * thread's free may race a third's, so it takes the flag by exchange.
 */
struct vmap_area *area_take(uintptr_t addr)
{
	struct vmap_area *va = area_at(addr);
	struct heap *h = uvm__heap;

	if (!va)
		return NULL;
	if (likely(h && va->heap == h)) {
		uint32_t live = atomic_load_explicit(&va->live, memory_order_relaxed);

		if (unlikely(!va_owned(live)))
			return NULL;
		atomic_store_explicit(&va->live, 0, memory_order_relaxed);
		return va;
	}
	/* Not 0 until free_foreign has cleared va->cache (VA_FREEING says why). */
	for (uint32_t live = atomic_load_explicit(&va->live, memory_order_relaxed);;) {
		if (!va_owned(live))
			return NULL;
		if (atomic_compare_exchange_weak_explicit(&va->live, &live, VA_FREEING, memory_order_acq_rel,
							  memory_order_relaxed))
			return va;
	}
}

struct vmap_area *area_find(uintptr_t addr)
{
	struct vmap_area *va = area_at(addr);

	return va && va_owned(atomic_load_explicit(&va->live, memory_order_acquire)) ? va : NULL;
}

/*
 * A fresh area is populated, not left to fault page by page, because
 * programs read zeroed memory before they write it (a table's a[i]++, a
 * slot's `if (!s->p) s->p = ...`): each page read first maps the shared
 * zero page and faults again on the write, and once the program has
 * threads that copy-on-write flushes the TLB of every CPU it runs on (an
 * IPI each).  allocwork tasks (4 threads a round, each callocs 1.9 MB and
 * reads each slot before it fills it) spent 11 % of its time in those
 * flushes; populated, 77 -> 69 ms and 600 fewer faults (mimalloc 59 ms).
 * Larger areas fault in as touched: a sparse table of many megabytes
 * would be backed whole; below a huge page, sparse use costs at most what
 * THP's first touch of an aligned 2 MiB backs anyway.  tcmalloc's calloc
 * writes every byte at every size.  UVM_POPULATE did it at the carve.
 */
void area_zero(struct vmap_area *va)
{
	if (va->flags & VA_REUSED)
		memset((void *)va->va_start, 0, area_usable(va));
	else if (area_usable(va) < HUGE_SIZE && !option(OPT_POPULATE)) /* no huge body to leave alone below that */
		os_populate(va->va_start, area_usable(va));
}

/* ----------------------------------------------------------- vrealloc */

void area_copy(struct vmap_area *from, struct vmap_area *to, size_t bytes)
{
	size_t pages = align_down(bytes, UVM_PAGE_SIZE);

	/*
	 * hugetlb mappings move only whole, aligned: those are copied.  Whether
	 * to's start is backed is asked of the kernel: a reused block holds
	 * its donors' pages where they fell (reuse_pages).  Moving pages one
	 * by one (an area under 2 MiB) costs this guest a fault each at their
	 * next touch (measurements.md), but copying instead held both blocks
	 * at once: allocwork realloc 17 % faster, its peak RSS 9.5 % higher.
	 */
	if (pages >= AREA_MOVE_MIN && (pages >= AREA_MOVE_MIN_BACKED || !os_resident(to->va_start, UVM_PAGE_SIZE)) &&
	    !((from->flags | to->flags) & VA_HUGETLB) &&
	    !os_move(from->va_start, to->va_start, pages)) {
		to->flags |= VA_MOVED;
		memcpy((void *)(to->va_start + pages), (void *)(from->va_start + pages), bytes - pages);
		return;
	}
	memcpy((void *)to->va_start, (void *)from->va_start, bytes);
}

/* Cut the tail [new_end, va_end) off as an area of its own and free it. */
static int shrink(struct vmap_area *va, uintptr_t new_end)
{
	struct vmap_area *tail;

	/* A hugetlb body splits only on a 2 MiB boundary: such an area moves instead. */
	if (va->flags & VA_HUGETLB)
		return ENOMEM;
	/* The owner keeps the tail in its cache, unfiled: a shrink and grow of one buffer take no lock. */
	if (uvm__heap && pcp_shrink(uvm__heap, va, new_end))
		return 0;
	/* The thread's spare objects first: vrealloc's shrink and grow stay off the metadata lock. */
	tail = uvm__heap ? pcp_spare(uvm__heap) : meta_va_alloc();
	if (!tail)
		return ENOMEM;
	vn_busy_split(va, new_end, tail);
	pcp_count_alloc(uvm__heap, va_pages(tail)); /* the tail is freed as an area of its own: keep allocs - frees = live */
	area_free(tail);
	return 0;
}

/* Grow into the thread's own cached neighbour (a tail an earlier shrink cut off), then back to size. */
static bool grow_cached(struct vmap_area *va, uintptr_t new_end)
{
	struct heap *h = uvm__heap;

	if (!h || va->heap != h || !pcp_absorb_next(h, va, new_end))
		return false;
	if (va->va_end > new_end)
		shrink(va, new_end); /* out of metadata: va keeps the whole neighbour */
	return true;
}

/*
 * The thread's own cached neighbour first: a program that grows and
 * shrinks one buffer finds its last shrink's tail there, and the free
 * tree, whose lock and walk a look costs, cannot hold the range then.
 */
static int grow(struct vmap_area *va, uintptr_t new_end)
{
	uintptr_t old_end = va->va_end, start, end;
	/* Its range only: its tree links are the node's, which other threads' inserts rebalance. */
	struct vmap_area probe = { .va_start = va->va_start, .va_end = va->va_end };

	if (grow_cached(va, new_end))
		return 0;
	if (arena_extend(&probe, new_end - va->va_end))
		return ENOMEM;
	guard_remove(old_end - UVM_PAGE_SIZE);
	vn_busy_resize(va, new_end);
	huge_body(va, &start, &end);
	if ((va->flags & VA_HUGE) && end > old_end && huge_grow_pays())
		os_hugepage(old_end, end - old_end, 1);
	if (option(OPT_POPULATE))
		os_populate(old_end, new_end - old_end - UVM_PAGE_SIZE);
	guard_install(new_end - UVM_PAGE_SIZE);
	return 0;
}

int area_resize(struct vmap_area *va, size_t usable)
{
	uintptr_t new_end = va->va_start + usable + UVM_PAGE_SIZE;
	int err;

	if (new_end == va->va_end)
		return 0;
	err = new_end < va->va_end ? shrink(va, new_end) : grow(va, new_end);
	if (!err)
		area_set_live(va, usable);
	return err;
}
