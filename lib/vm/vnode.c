/*
 * vnode.c - per-node busy trees, lazy trees and size-class pools.
 *
 * The fast paths: an allocation served by a pool takes the owner node's
 * pool lock and then its busy lock; a free takes the busy lock and then
 * the lazy lock, both the owner's.  Neither touches the free tree's
 * global lock; the only global word they share is the lazy page count, an
 * atomic (the kernel's vmap_lazy_nr).
 */
#include "vnode.h"

#include <errno.h>
#include <stdatomic.h>

#include "arena.h"
#include "lock.h"
#include "meta.h"
#include "os.h"
#include "uvmalloc-descriptor.h"

/* An address-keyed tree of areas with its lock and what it holds. */
struct va_set {
	uvm_lock_t lock;
	struct rb_root root;
	size_t nr, bytes;
	_Atomic uint64_t seq; /* odd while the tree changes: for readers outside the process (descriptor.h) */
};

struct vmap_pool {
	struct list_head head; /* LIFO: the most recently purged area first */
	size_t len;
};

struct vmap_node {
	struct va_set busy uvm_cacheline_aligned; /* live areas and those in thread caches */
	struct va_set lazy uvm_cacheline_aligned;
	/*
	 * The lazy areas of pool size again, by page count, most recent first
	 * (lazy.lock; linked through va->list, which a lazy area does not use
	 * until the purge takes the tree): vn_pool_get's second look.
	 */
	struct list_head lazy_fit[VN_POOL_PAGES];
	struct {
		uvm_lock_t lock;
		size_t nr, bytes;
		uint64_t hits, misses;
		struct vmap_pool pool[VN_POOL_PAGES];
		/*
		 * The areas of more than VN_POOL_PAGES pages, smallest first (the
		 * kernel pools none: its large areas are rare, and exits leave it
		 * none): vn_pool_get_large's best fit.
		 */
		struct vmap_pool large;
		/*
		 * Bit i: pool[i] holds an area (bit VN_POOL_PAGES: large), so that a
		 * cut (pool_above) finds the larger pools that hold any without a
		 * look at each of the 256: that look was 1 800 instructions a cut,
		 * under the pools' lock (allocwork tasks: 2.5 % of all its
		 * instructions, in 5 600 cuts).
		 */
		uint64_t held[VN_POOL_PAGES / 64 + 1];
		/*
		 * Every pooled area by address (through va->rb, which a pooled area
		 * uses for nothing else; pools.lock, not its own): a pooled area
		 * takes in the pooled areas beside it (pool_merge).
		 */
		struct va_set by_addr;
	} pools uvm_cacheline_aligned;
};

static struct vmap_node *nodes;
static unsigned nr_nodes;
static _Atomic size_t lazy_nr uvm_cacheline_aligned;

#define va_of(node) container_of(node, struct vmap_area, rb)

static void va_set_init(struct va_set *s)
{
	uvm_lock_init(&s->lock);
	s->root.node = NULL;
	s->nr = s->bytes = 0;
}

int vn_init(unsigned nr)
{
	nodes = os_alloc_meta(nr * sizeof(*nodes));
	if (!nodes)
		return ENOMEM;
	nr_nodes = nr;
	for (unsigned i = 0; i < nr; i++) {
		struct vmap_node *vn = &nodes[i];

		va_set_init(&vn->busy);
		va_set_init(&vn->lazy);
		uvm_lock_init(&vn->pools.lock);
		list_init(&vn->pools.large.head);
		va_set_init(&vn->pools.by_addr);
		for (unsigned p = 0; p < VN_POOL_PAGES; p++) {
			list_init(&vn->pools.pool[p].head);
			list_init(&vn->lazy_fit[p]);
		}
	}
	return 0;
}

unsigned vn_count(void) { return nr_nodes; }

/*
 * Userspace difference: threads, not CPUs.  Each thread gets the next node
 * round robin on its first slow-path allocation and keeps it, so up to
 * nr_nodes threads (one per CPU by default) never share a node's locks,
 * and the areas a thread's cache trims and merges are all filed under its
 * own node.  The CPU would not do: a thread's areas outlive its migrations,
 * so their owners would mix and every thread would take every lock.
 */
unsigned vn_owner_id(void)
{
	static _Atomic unsigned next;
	static __thread unsigned id __attribute__((tls_model("initial-exec")));

	if (!id)
		id = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % nr_nodes + 1;
	return id - 1;
}

/*
 * A zone of its own (arena_alloc) keeps a thread's areas together, so that
 * its cache joins what it freed into what it asks for next; but the first
 * touch of a zone costs what touches beside other threads' ranges do not:
 * pages of page table, and a page of the page map and of the chunk table,
 * of its own.  This guest faults a page of a 2 MiB range nothing was
 * touched in at 45-70 us, against 11 us beside touched pages
 * (docs/measurements.md): vmbench's one loop of fix_size on a new thread
 * took 98 us with its first area in its zone, 45 in zone 0 (medians of 11;
 * tcmalloc 16).  So a thread takes its first
 * VN_ZONE_AFTER bytes of fresh ranges from zone 0, the lowest fit beside
 * everyone's, and its own zone once it has shown it needs more: by then it
 * has faulted in pages that cost a hundred times what the zone's first
 * touch adds.
 */
unsigned vn_zone(unsigned owner, size_t size)
{
	static __thread size_t fresh __attribute__((tls_model("initial-exec")));

	if (fresh >= VN_ZONE_AFTER)
		return owner;
	fresh += size;
	return 0;
}

/* The node an area is filed under while it is busy or lazy: its owner's, fixed from allocation to free. */
static struct vmap_node *owner_node(const struct vmap_area *va) { return &nodes[va_owner(va) % nr_nodes]; }

/* ------------------------------------------------------ address-keyed sets */

static void seq_begin(struct va_set *s) { uvm_seq_begin(&s->seq); }
static void seq_end(struct va_set *s) { uvm_seq_end(&s->seq); }

/* va into s at link, under parent (where a search for its address ends). */
static void set_link(struct va_set *s, struct vmap_area *va, struct rb_node *parent, struct rb_node **link)
{
	seq_begin(s);
	rb_link_node(&va->rb, parent, link);
	rb_insert(&va->rb, &s->root, NULL);
	s->nr++;
	__atomic_store_n(&s->bytes, s->bytes + (va_tree_end(va) - va->va_start), __ATOMIC_RELAXED); /* vn_busy_pages reads it unlocked */
	seq_end(s);
}

static void set_insert(struct va_set *s, struct vmap_area *va)
{
	struct rb_node **link = &s->root.node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = va->va_start < va_of(parent)->va_start ? &parent->left : &parent->right;
	}
	set_link(s, va, parent, link);
}

/*
 * va into s right after prev, its neighbour below (no area lies between
 * them): where a search for va's address ends, found from prev, not from
 * the root (a split's tail; a search took one dependent load per level,
 * a cache miss each in a heap of many areas).
 */
static void set_insert_after(struct va_set *s, struct vmap_area *prev, struct vmap_area *va)
{
	struct rb_node *parent = &prev->rb, **link = &parent->right;

	if (*link) {
		for (parent = *link; parent->left; parent = parent->left)
			;
		link = &parent->left;
	}
	set_link(s, va, parent, link);
}

static void set_erase(struct va_set *s, struct vmap_area *va)
{
	seq_begin(s);
	rb_erase(&va->rb, &s->root, NULL);
	s->nr--;
	__atomic_store_n(&s->bytes, s->bytes - (va_tree_end(va) - va->va_start), __ATOMIC_RELAXED);
	seq_end(s);
}

/* Live: a user's, not resting in a thread cache, parked or on its way to one (vmap.h's va_owned). */
static bool is_live(const struct vmap_area *va) { return va_owned(atomic_load_explicit(&va->live, memory_order_relaxed)); }

/* Copy up to max areas of s starting above after (only live ones when live_only) into buf. */
static size_t set_snapshot(struct va_set *s, uintptr_t after, struct vmap_area *buf, size_t max, bool live_only)
{
	const struct rb_node *n, *first = NULL;
	size_t k = 0;

	uvm_lock(&s->lock);
	for (n = s->root.node; n;) {
		if (va_of(n)->va_start > after) {
			first = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	for (n = first; n && k < max; n = rb_next(n))
		if (!live_only || is_live(va_of(n)))
			buf[k++] = *va_of(n);
	uvm_unlock(&s->lock);
	return k;
}

/* ------------------------------------------------------------------ busy */

void vn_busy_insert(struct vmap_area *va)
{
	struct vmap_node *vn = owner_node(va);

	va->span_end = 0;
	uvm_lock(&vn->busy.lock);
	set_insert(&vn->busy, va);
	uvm_unlock(&vn->busy.lock);
	atomic_store_explicit(arena_slot(va->va_start), va, memory_order_release);
}

/* A broken rule of the spans (vnode.h) is a bug of ours: better an abort naming it than a tree that lies. */
static void span_check(bool ok, const char *what, const struct vmap_area *va)
{
	if (unlikely(!ok))
		os_abort("uvmalloc: internal error: %s (area %#lx-%#lx, span to %#lx, flags %#x)\n", what,
			 (unsigned long)va->va_start, (unsigned long)va->va_end, (unsigned long)va->span_end, va->flags);
}

void vn_busy_erase(struct vmap_area *va)
{
	struct vmap_node *vn = owner_node(va);

	span_check(!(va->flags & VA_UNFILED) && !va_spans(va), "an area left its busy tree with its span", va);
	atomic_store_explicit(arena_slot(va->va_start), NULL, memory_order_relaxed);
	uvm_lock(&vn->busy.lock);
	set_erase(&vn->busy, va);
	uvm_unlock(&vn->busy.lock);
}

/*
 * find_vmap_area() for any byte of an area: every node may hold it, so each
 * is asked (the page map is the fast way, from an area's start).  An area
 * in a thread cache holds addr too, but is free as far as users are
 * concerned.
 */
int vn_busy_lookup(uintptr_t addr, struct vmap_area *out)
{
	for (unsigned id = 0; id < nr_nodes; id++) {
		struct vmap_node *vn = &nodes[id];
		struct vmap_area *va;
		bool live = false;

		uvm_lock(&vn->busy.lock);
		va = va_containing(&vn->busy.root, addr);
		if (va && (live = is_live(va)))
			*out = *va;
		uvm_unlock(&vn->busy.lock);
		if (va)
			return live;
	}
	return 0;
}

/*
 * Filed va's own end and its span's (0: none) set, the tree's byte count
 * following (lock held).  Its end is stored only when it moves: a span
 * owner that another thread is freeing has its span cut by its own thread,
 * and its end must not be written under that free's read.
 */
static void resize_locked(struct va_set *s, struct vmap_area *va, uintptr_t new_end, uintptr_t span_end)
{
	uintptr_t old = va_tree_end(va), end = va->va_end, span = span_end > new_end ? span_end : 0;

	seq_begin(s);
	__atomic_store_n(&s->bytes, s->bytes - old + (span ? span : new_end), __ATOMIC_RELAXED);
	/* Release, after every read of va: a thread that sees a span cut may take va as its own (pcp_adopt). */
	__atomic_store_n(&va->span_end, span, __ATOMIC_RELEASE);
	if (new_end != end)
		__atomic_store_n(&va->va_end, new_end, __ATOMIC_RELAXED);
	seq_end(s);
}

void vn_busy_resize(struct vmap_area *va, uintptr_t new_end)
{
	struct vmap_node *vn = owner_node(va);

	span_check(!(va->flags & VA_UNFILED) && !va_spans(va), "a span resized as an area", va);
	uvm_lock(&vn->busy.lock);
	resize_locked(&vn->busy, va, new_end, 0);
	uvm_unlock(&vn->busy.lock);
}

/* The filed area of s whose range holds addr: an unfiled area's span owner (lock held). */
static struct vmap_area *span_owner(struct va_set *s, uintptr_t addr)
{
	const struct rb_node *n = s->root.node;

	while (n) {
		struct vmap_area *va = va_of(n);

		if (addr < va->va_start)
			n = n->left;
		else if (addr >= va_tree_end(va))
			n = n->right;
		else
			return va;
	}
	return NULL;
}

/* Unfiled va into s, taking the rest of its span owner's range from va's start on (lock held). */
static void file_locked(struct va_set *s, struct vmap_area *va)
{
	struct vmap_area *owner = span_owner(s, va->va_start);
	uintptr_t end;

	span_check(owner && owner != va && va_spans(owner), "an unfiled area outside every span", va);
	end = owner->span_end;
	resize_locked(s, owner, owner->va_end, va->va_start);
	va->span_end = end;
	va->flags &= ~VA_UNFILED;
	set_insert_after(s, owner, va);
}

void vn_busy_file(struct vmap_area *va)
{
	struct vmap_node *vn = owner_node(va);

	uvm_lock(&vn->busy.lock);
	file_locked(&vn->busy, va);
	uvm_unlock(&vn->busy.lock);
}

void vn_busy_cut(struct vmap_area *va)
{
	struct vmap_node *vn = owner_node(va);
	struct vmap_area *next;

	if (!(va->flags & VA_UNFILED) && !va_spans(va))
		return;
	uvm_lock(&vn->busy.lock);
	if (va->flags & VA_UNFILED)
		file_locked(&vn->busy, va);
	if (va_spans(va)) {
		/* What follows va in its span is an unfiled area of the same heap, found from its start. */
		next = atomic_load_explicit(arena_slot(va->va_end), memory_order_relaxed);
		span_check(next && (next->flags & VA_UNFILED) && next->va_start == va->va_end, "a span with a hole", va);
		file_locked(&vn->busy, next);
	}
	uvm_unlock(&vn->busy.lock);
}

void vn_busy_split_local(struct vmap_area *va, uintptr_t at, struct vmap_area *tail)
{
	*tail = (struct vmap_area){ .va_start = at, .va_end = va->va_end, .caller = va->caller,
				    .flags = va->flags | VA_UNFILED, .cache = va->cache, .heap = va->heap };
	os_guard_install(at - UVM_PAGE_SIZE, UVM_PAGE_SIZE);
	/* A filed va keeps its tree range as its span: set first, so that a reader never sees the range shrink. */
	if (!(va->flags & VA_UNFILED) && !va_spans(va))
		__atomic_store_n(&va->span_end, va->va_end, __ATOMIC_RELEASE);
	__atomic_store_n(&va->va_end, at, __ATOMIC_RELEASE);
	atomic_store_explicit(arena_slot(tail->va_start), tail, memory_order_release);
}

/* One lock round for both changes: vrealloc's shrink and every trim split, so each costs one and not two. */
void vn_busy_split(struct vmap_area *va, uintptr_t at, struct vmap_area *tail)
{
	struct vmap_node *vn = owner_node(va);

	/*
	 * Field by field, not a struct copy: va's tree links change under the
	 * busy lock while other areas are inserted and erased around it, and
	 * the tail gets links of its own on insertion anyway.
	 */
	span_check(!(va->flags & VA_UNFILED), "an unfiled area split as a filed one", va);
	*tail = (struct vmap_area){ .va_start = at, .va_end = va->va_end, .caller = va->caller, .flags = va->flags,
				    .cache = va->cache, .heap = va->heap }; /* not live: the caller frees or caches it */
	os_guard_install(at - UVM_PAGE_SIZE, UVM_PAGE_SIZE); /* no longer the user's: va is being cut */
	uvm_lock(&vn->busy.lock);
	tail->span_end = va->span_end; /* read under the lock: a cut of the span's last area moves it */
	resize_locked(&vn->busy, va, at, 0);
	set_insert_after(&vn->busy, va, tail);
	uvm_unlock(&vn->busy.lock);
	atomic_store_explicit(arena_slot(tail->va_start), tail, memory_order_release);
}

/* va, filed or not, reaches end, and its tree range (its own or its span owner's) reaches tree_end (lock held). */
static void reach_locked(struct va_set *s, struct vmap_area *va, uintptr_t end, uintptr_t tree_end)
{
	struct vmap_area *owner = va->flags & VA_UNFILED ? span_owner(s, va->va_start) : va;

	span_check(owner != NULL, "an unfiled area outside every span", va);
	if (owner == va) {
		resize_locked(s, va, end, tree_end);
		return;
	}
	__atomic_store_n(&va->va_end, end, __ATOMIC_RELAXED);
	resize_locked(s, owner, owner->va_end, tree_end);
}

void vn_busy_join(struct vmap_area *va, struct vmap_area *next)
{
	struct vmap_node *vn = owner_node(va);
	uintptr_t end = next->va_end, tree_end;

	atomic_store_explicit(arena_slot(next->va_start), NULL, memory_order_relaxed);
	if (next->flags & VA_UNFILED) { /* in va's span already: va's heap is held, so nothing else moves it */
		__atomic_store_n(&va->va_end, end, __ATOMIC_RELEASE);
		return;
	}
	if (owner_node(next) != vn) { /* allocated on another CPU's node: filed there, its span too */
		struct vmap_node *other = owner_node(next);

		uvm_lock(&other->busy.lock);
		if (va_spans(next)) /* an unfiled area finds its span in its own node's tree: next's rest stays there */
			file_locked(&other->busy, atomic_load_explicit(arena_slot(end), memory_order_relaxed));
		set_erase(&other->busy, next);
		uvm_unlock(&other->busy.lock);
		uvm_lock(&vn->busy.lock);
		reach_locked(&vn->busy, va, end, end);
		uvm_unlock(&vn->busy.lock);
		return;
	}
	uvm_lock(&vn->busy.lock);
	tree_end = va_tree_end(next);
	set_erase(&vn->busy, next);
	reach_locked(&vn->busy, va, end, tree_end);
	uvm_unlock(&vn->busy.lock);
}

/* The rest of va's span tiled by unfiled areas (the tests' look, at rest: the span's heap is not held). */
static bool span_tiled(const struct vmap_area *va)
{
	uintptr_t at = va->va_end;

	while (at < va_tree_end(va)) {
		const struct vmap_area *u = atomic_load_explicit(arena_slot(at), memory_order_acquire);

		if (!u || u->va_start != at || !(u->flags & VA_UNFILED) || u->va_end <= at)
			return false;
		at = u->va_end;
	}
	return at == va_tree_end(va);
}

static int set_check(struct va_set *s)
{
	const struct rb_node *n;
	uintptr_t end = 0;
	size_t nr = 0, bytes = 0;
	int err;

	uvm_lock(&s->lock);
	err = rb_check(&s->root) < 0 ? -1 : 0;
	for (n = rb_first(&s->root); n; n = rb_next(n)) {
		const struct vmap_area *va = va_of(n);

		if (va->va_start < end || va->va_end <= va->va_start || (va->flags & VA_UNFILED) || !span_tiled(va))
			err = -1;
		end = va_tree_end(va);
		nr++;
		bytes += end - va->va_start;
	}
	if (nr != s->nr || bytes != s->bytes)
		err = -1;
	uvm_unlock(&s->lock);
	return err;
}

int vn_busy_check(void)
{
	int err = 0;

	for (unsigned i = 0; i < nr_nodes; i++)
		err |= set_check(&nodes[i].busy);
	return err;
}

size_t vn_busy_snapshot(unsigned id, uintptr_t after, struct vmap_area *buf, size_t max)
{
	return set_snapshot(&nodes[id].busy, after, buf, max, true);
}

#define SNAPSHOT_BATCH 32

void vn_snapshot_each(vn_snapshot_fn snap, void (*fn)(const struct vmap_area *va, void *arg), void *arg)
{
	struct vmap_area buf[SNAPSHOT_BATCH];

	for (unsigned id = 0; id < nr_nodes; id++) {
		uintptr_t after = 0;
		size_t n;

		do {
			n = snap(id, after, buf, SNAPSHOT_BATCH);
			for (size_t i = 0; i < n; i++)
				fn(&buf[i], arg);
			if (n)
				after = buf[n - 1].va_start;
		} while (n == SNAPSHOT_BATCH);
	}
}

/* ------------------------------------------------------------------ lazy */

size_t vn_lazy_add(struct vmap_area *va)
{
	struct vmap_node *vn = owner_node(va);
	size_t pages = va_pages(va); /* once the lock is let go, a purge may merge va away and free it */

	uvm_lock(&vn->lazy.lock);
	set_insert(&vn->lazy, va);
	if (pages <= VN_POOL_PAGES)
		list_add(&va->list, &vn->lazy_fit[pages - 1]);
	uvm_unlock(&vn->lazy.lock);
	return atomic_fetch_add_explicit(&lazy_nr, pages, memory_order_relaxed) + pages;
}

static void tree_to_list(struct rb_node *n, struct list_head *out)
{
	while (n) {
		tree_to_list(n->left, out);
		list_add_tail(&va_of(n)->list, out);
		n = n->right;
	}
}

size_t vn_lazy_detach(unsigned id, struct list_head *out)
{
	struct va_set *s = &nodes[id].lazy;
	struct rb_node *root;
	size_t bytes;

	uvm_lock(&s->lock);
	seq_begin(s);
	root = s->root.node;
	bytes = s->bytes;
	s->root.node = NULL;
	s->nr = s->bytes = 0;
	seq_end(s);
	for (unsigned p = 0; root && p < VN_POOL_PAGES; p++) /* an empty tree's lists are empty */
		list_init(&nodes[id].lazy_fit[p]);
	uvm_unlock(&s->lock);
	tree_to_list(root, out);
	return bytes >> UVM_PAGE_SHIFT;
}

size_t vn_lazy_pages(void) { return atomic_load_explicit(&lazy_nr, memory_order_relaxed); }

void vn_lazy_sub(size_t pages) { atomic_fetch_sub_explicit(&lazy_nr, pages, memory_order_relaxed); }

size_t vn_lazy_snapshot(unsigned id, uintptr_t after, struct vmap_area *buf, size_t max)
{
	return set_snapshot(&nodes[id].lazy, after, buf, max, false);
}

/* ----------------------------------------------------------------- pools */

/*
 * An area of va's size into (dir 1) or out of (dir -1) pool vp of vn (its
 * lock held), and the address tree: the counts that lock-free readers
 * peek at (vn_pool_get's len, vn_pooled_pages's bytes) are stored
 * atomically.
 */
static void pool_count(struct vmap_node *vn, struct vmap_pool *vp, struct vmap_area *va, int dir)
{
	if (dir > 0)
		set_insert(&vn->pools.by_addr, va);
	else
		set_erase(&vn->pools.by_addr, va);
	size_t i = vp == &vn->pools.large ? VN_POOL_PAGES : (size_t)(vp - vn->pools.pool);

	__atomic_store_n(&vp->len, vp->len + dir, __ATOMIC_RELAXED);
	if (vp->len)
		vn->pools.held[i / 64] |= (uint64_t)1 << (i % 64);
	else
		vn->pools.held[i / 64] &= ~((uint64_t)1 << (i % 64));
	vn->pools.nr += dir;
	__atomic_store_n(&vn->pools.bytes, vn->pools.bytes + (size_t)dir * va_size(va), __ATOMIC_RELAXED);
}

/* Whether pool or lazy area va serves a request aligned to align on NUMA node nid. */
static bool fits(const struct vmap_area *va, size_t align, unsigned nid)
{
	return !(va->va_start & (align - 1)) && va_nid(va) == nid;
}

#define VN_LAZY_SCAN 8 /* lazy or pooled areas of a size looked at for one of the alignment and node asked for */

/*
 * A lazily freed area of exactly pages pages, taken off its lazy tree
 * before the purge gives its pages back: still backed (unless its pages
 * moved into a large block: then as fresh as a new range).  The kernel's
 * lazy ranges must wait for their TLB flush; ours are our own mapped
 * pages.  A program whose threads free each other's blocks after their
 * owners exit sent them lazily once the pools were full (their share of
 * the busy pages), purged them, and faulted fresh ranges in for the same
 * sizes: allocwork stress -t 2 -s 40 left 2 000 slab-sized areas lazy
 * in 3 s while 3 200 new slabs missed the pools.
 */
static struct vmap_area *lazy_get(struct vmap_node *vn, size_t pages, size_t align, unsigned nid)
{
	struct list_head *head = &vn->lazy_fit[pages - 1];
	struct vmap_area *va, *found = NULL;
	unsigned seen = 0;

	uvm_lock(&vn->lazy.lock);
	list_for_each_entry(va, head, list) {
		if (fits(va, align, nid)) {
			found = va;
			break;
		}
		if (++seen == VN_LAZY_SCAN)
			break;
	}
	if (found) {
		list_del(&found->list);
		set_erase(&vn->lazy, found);
	}
	uvm_unlock(&vn->lazy.lock);
	if (found)
		atomic_fetch_sub_explicit(&lazy_nr, pages, memory_order_relaxed);
	return found;
}

/* va into the large pool vp, after the smaller areas and before those of its size (the most recent first). */
static void large_put(struct vmap_pool *vp, struct vmap_area *va)
{
	struct vmap_area *at;

	list_for_each_entry(at, &vp->head, list)
		if (va_pages(at) >= va_pages(va))
			break;
	list_add_tail(&va->list, &at->list);
}

/* The pool of vn that an area of va's size rests in. */
static struct vmap_pool *pool_of(struct vmap_node *vn, const struct vmap_area *va)
{
	return va_pages(va) > VN_POOL_PAGES ? &vn->pools.large : &vn->pools.pool[va_pages(va) - 1];
}

/* va into its pool of vn (pools.lock held), holding its own range only: merges and cuts change its end. */
static void pool_link(struct vmap_node *vn, struct vmap_area *va)
{
	struct vmap_pool *vp = pool_of(vn, va);

	va->span_end = 0;
	if (vp == &vn->pools.large)
		large_put(vp, va);
	else
		list_add(&va->list, &vp->head);
	pool_count(vn, vp, va, 1);
}

/* Pooled area va out of its pool of vn (pools.lock held). */
static void pool_unlink(struct vmap_node *vn, struct vmap_area *va)
{
	list_del(&va->list);
	pool_count(vn, pool_of(vn, va), va, -1);
}

/*
 * node_pool_del_va(): node vn's pool of pages pages, its first entry only;
 * one misaligned or on another NUMA node goes to the tail.
 */
static struct vmap_area *pool_first(struct vmap_node *vn, size_t pages, size_t align, unsigned nid)
{
	struct vmap_pool *vp = &vn->pools.pool[pages - 1];
	struct vmap_area *va = NULL;

	if (!__atomic_load_n(&vp->len, __ATOMIC_RELAXED))
		return NULL;
	uvm_lock(&vn->pools.lock);
	if (!list_empty(&vp->head)) {
		va = list_first_entry(&vp->head, struct vmap_area, list);
		if (!fits(va, align, nid)) {
			list_del(&va->list);
			list_add_tail(&va->list, &vp->head);
			va = NULL;
		} else {
			pool_unlink(vn, va);
		}
	}
	uvm_unlock(&vn->pools.lock);
	return va;
}

/* The pooled area of vn that holds the byte at addr, or NULL. */
static struct vmap_area *pool_holding(struct vmap_node *vn, uintptr_t addr) { return va_containing(&vn->pools.by_addr.root, addr); }

/*
 * Whether pooled area va may be cut and joined: not a huge body (cut only
 * on 2 MiB boundaries), nor pages mremap moved in (a VMA of their own), nor
 * a piece of slabs' huge page (slabs only).
 */
static bool pool_plain(const struct vmap_area *va) { return !(va->flags & (VA_HUGE | VA_HUGETLB | VA_MOVED | VA_DENSE)); }

/* Whether pooled areas a and b, b right after a, may be one: plain, of one NUMA node. */
static bool pool_joinable(const struct vmap_area *a, const struct vmap_area *b)
{
	return va_nid(a) == va_nid(b) && pool_plain(a) && pool_plain(b);
}

/*
 * The buddy's coalescing, for backed pages: va, not yet pooled, takes in
 * the pooled areas right before and after it; their objects go onto
 * absorbed (pools.lock held).  Exits drain their caches into the pools in
 * pieces, the heads and tails that cuts left, which alone fit few later
 * requests (a slab wants 16 pages on a 64 KiB boundary): allocwork stress
 * with 8 threads on 2 CPUs held 39-49 MiB in some 3 000 pooled areas,
 * mostly of 1-4 pages, while its misses carved 300 MiB of fresh ranges;
 * runs of those pieces could hold a slab for 40-60 % of their pages.
 * Joined as they are pooled, not later: joined only at a miss (the lowest
 * run that holds its window), or at each purge, stress kept more pooled
 * at its peak than with no joins at all (83.5 and 81.8 MiB against 75.2).
 */
static void pool_merge(struct vmap_node *vn, struct vmap_area *va, struct list_head *absorbed)
{
	struct vmap_area *prev = pool_holding(vn, va->va_start - 1), *next = pool_holding(vn, va->va_end);

	/* Pooled areas never overlap va: one holding the byte before it ends at its start, one holding its end starts there. */
	if (prev && pool_joinable(prev, va)) {
		pool_unlink(vn, prev);
		os_guard_remove(prev->va_end - UVM_PAGE_SIZE, UVM_PAGE_SIZE); /* inside now */
		va->va_start = prev->va_start;
		list_add(&prev->list, absorbed);
	}
	if (next && pool_joinable(va, next)) {
		pool_unlink(vn, next);
		os_guard_remove(va->va_end - UVM_PAGE_SIZE, UVM_PAGE_SIZE);
		va->va_end = next->va_end;
		list_add(&next->list, absorbed);
	}
}

void vn_pool_put(struct vmap_area *va)
{
	struct vmap_node *vn = owner_node(va);
	LIST_HEAD(absorbed);

	uvm_lock(&vn->pools.lock);
	pool_merge(vn, va, &absorbed);
	pool_link(vn, va);
	uvm_unlock(&vn->pools.lock);
	meta_va_free_list(&absorbed);
}

/* Where a window aligned to align starts in pooled area va: its first boundary (0 past the address space). */
static uintptr_t window_start(const struct vmap_area *va, size_t align) { return (va->va_start + align - 1) & ~(align - 1); }

/* Whether pooled area va holds pages pages from a boundary of align on, on NUMA node nid. */
static bool window_fits(const struct vmap_area *va, size_t pages, size_t align, unsigned nid)
{
	uintptr_t at = window_start(va, align);

	return va_nid(va) == nid && pool_plain(va) && at >= va->va_start && at + (pages << UVM_PAGE_SHIFT) <= va->va_end;
}

/* Pooled area va, out of its pool, cut at at: the piece on one side of at (head: before it) back into vn's pools, va keeps the other. */
static void pool_cut_off(struct vmap_node *vn, struct vmap_area *va, uintptr_t at, bool head, struct vmap_area *piece)
{
	*piece = (struct vmap_area){ .va_start = head ? va->va_start : at, .va_end = head ? at : va->va_end, .flags = va->flags };
	os_guard_install(at - UVM_PAGE_SIZE, UVM_PAGE_SIZE); /* the last page before at is a guard page now */
	if (head)
		va->va_start = at;
	else
		va->va_end = at;
	pool_link(vn, piece);
}

/* The first pool of vn from pool[i] on (VN_POOL_PAGES: large) that holds an area, or past VN_POOL_PAGES (pools.lock held). */
static size_t next_held(const struct vmap_node *vn, size_t i) { return bitmap_next(vn->pools.held, i, VN_POOL_PAGES + 1); }

/* The first of node vn's larger pooled areas that holds a window of pages at align on nid, the smallest pools first, or NULL. */
static struct vmap_area *pool_above(struct vmap_node *vn, size_t pages, size_t align, unsigned nid)
{
	struct vmap_area *va;

	for (size_t i = next_held(vn, pages); i <= VN_POOL_PAGES; i = next_held(vn, i + 1)) {
		struct vmap_pool *vp = i < VN_POOL_PAGES ? &vn->pools.pool[i] : &vn->pools.large;
		unsigned seen = 0;

		list_for_each_entry(va, &vp->head, list) {
			if (window_fits(va, pages, align, nid))
				return va;
			if (++seen == VN_LAZY_SCAN)
				break;
		}
	}
	return NULL;
}

/*
 * When no pool of its size holds an area for a request of pages pages
 * aligned to align on nid: the first of node vn's larger pooled areas
 * that holds such a window (pool_above), cut to it; what lies before and
 * after stays pooled (pieces: two unused objects, those it takes set to
 * NULL).  Pooled areas take in their neighbours (pool_merge), so the
 * pieces that exits drain fit requests of any size.
 */
static struct vmap_area *pool_cut(struct vmap_node *vn, size_t pages, size_t align, unsigned nid, struct vmap_area **pieces)
{
	struct vmap_area *va;
	uintptr_t at;

	uvm_lock(&vn->pools.lock);
	if ((va = pool_above(vn, pages, align, nid))) {
		pool_unlink(vn, va);
		at = window_start(va, align);
		if (at != va->va_start) {
			pool_cut_off(vn, va, at, true, pieces[0]);
			pieces[0] = NULL;
		}
		if (va->va_end != at + (pages << UVM_PAGE_SHIFT)) {
			pool_cut_off(vn, va, at + (pages << UVM_PAGE_SHIFT), false, pieces[1]);
			pieces[1] = NULL;
		}
	}
	uvm_unlock(&vn->pools.lock);
	return va;
}

/* pool_cut over every node, node id's first, with the objects it may need; NULL when the pools are empty or out of objects. */
static struct vmap_area *pool_cut_any(unsigned id, size_t pages, size_t align, unsigned nid)
{
	struct vmap_area *va = NULL, *pieces[2];

	if (!vn_pooled_pages())
		return NULL;
	pieces[0] = meta_va_alloc();
	pieces[1] = meta_va_alloc();
	for (unsigned i = 0; i < nr_nodes && !va && pieces[0] && pieces[1]; i++)
		va = pool_cut(&nodes[(id + i) % nr_nodes], pages, align, nid, pieces);
	for (int k = 0; k < 2; k++)
		if (pieces[k])
			meta_va_free(pieces[k]);
	return va;
}

/*
 * Node id's pool, then its lazy areas, then the other nodes' pools, then a
 * larger pooled area cut to size (pool_cut).  The
 * kernel looks at its own node's only, whose pools its own frees fill;
 * ours are filled by exits too, each to the exiting thread's node, and a
 * new thread draws the next node round robin: allocwork tasks (4 threads a
 * round on 2 nodes) ran half its rounds with the other node's pools full
 * of the sizes it missed, faulted them in fresh and held both (peak RSS
 * 58 or 69 MB, as the threads drew their nodes).  A look at a pool whose
 * count reads 0 takes no lock.
 */
struct vmap_area *vn_pool_get(unsigned id, size_t pages, size_t align, unsigned nid)
{
	struct vmap_area *va = pool_first(&nodes[id], pages, align, nid);

	if (!va)
		va = lazy_get(&nodes[id], pages, align, nid);
	for (unsigned i = 1; i < nr_nodes && !va; i++)
		va = pool_first(&nodes[(id + i) % nr_nodes], pages, align, nid);
	if (!va)
		va = pool_cut_any(id, pages, align, nid);
	__atomic_fetch_add(va ? &nodes[id].pools.hits : &nodes[id].pools.misses, 1, __ATOMIC_RELAXED);
	return va;
}

/* The smallest area of node vn's large pool of pages to max pages that serves align on nid, or NULL (its lock held). */
static struct vmap_area *large_fit(struct vmap_node *vn, size_t pages, size_t max, size_t align, unsigned nid)
{
	struct vmap_area *va;

	list_for_each_entry(va, &vn->pools.large.head, list) {
		if (va_pages(va) > max)
			break;
		if (va_pages(va) >= pages && fits(va, align, nid))
			return va;
	}
	return NULL;
}

/*
 * The pages of that area of node vn's, or 0, read under the lock, since
 * another thread may take and cut it; taken out into *take unless take is
 * NULL (a look).
 */
static size_t large_look(struct vmap_node *vn, size_t pages, size_t max, size_t align, unsigned nid, struct vmap_area **take)
{
	struct vmap_area *va;
	size_t fit;

	if (!__atomic_load_n(&vn->pools.large.len, __ATOMIC_RELAXED))
		return 0;
	uvm_lock(&vn->pools.lock);
	va = large_fit(vn, pages, max, align, nid);
	fit = va ? va_pages(va) : 0;
	if (va && take) {
		pool_unlink(vn, va);
		*take = va;
	}
	uvm_unlock(&vn->pools.lock);
	return fit;
}

/*
 * The best fit over every node's large pool: a thread draws its node
 * round robin, so the next thread's node is seldom the exited one's, and
 * a large miss faults in hundreds of pages, where a look at each node
 * costs a lock.  A first look finds the node, a second takes its best
 * (another thread may have taken the one seen: then a miss, as if the
 * other had come first).
 */
struct vmap_area *vn_pool_get_large(unsigned id, size_t pages, size_t max, size_t align, unsigned nid)
{
	struct vmap_area *va = NULL;
	unsigned best = 0;
	size_t fit = max + 1, f;

	for (unsigned i = 0; i < nr_nodes; i++) {
		unsigned k = (id + i) % nr_nodes;

		if ((f = large_look(&nodes[k], pages, fit - 1, align, nid, NULL))) {
			best = k;
			fit = f;
		}
	}
	if (fit <= max)
		large_look(&nodes[best], pages, max, align, nid, &va);
	__atomic_fetch_add(va ? &nodes[id].pools.hits : &nodes[id].pools.misses, 1, __ATOMIC_RELAXED);
	return va;
}

size_t vn_busy_pages(void)
{
	size_t bytes = 0;

	for (unsigned i = 0; i < nr_nodes; i++)
		bytes += __atomic_load_n(&nodes[i].busy.bytes, __ATOMIC_RELAXED);
	return bytes >> UVM_PAGE_SHIFT;
}

size_t vn_busy_rounding(void)
{
	size_t bytes = 0;

	for (unsigned i = 0; i < nr_nodes; i++) {
		struct va_set *s = &nodes[i].busy;

		uvm_lock(&s->lock);
		for (const struct rb_node *n = rb_first(&s->root); n; n = rb_next(n)) {
			const struct vmap_area *va = va_of(n);
			size_t usable = va_size(va) - UVM_PAGE_SIZE;

			if (is_live(va) && !(va->flags & VA_SLAB) && va->requested < usable)
				bytes += usable - va->requested;
		}
		uvm_unlock(&s->lock);
	}
	return bytes;
}

size_t vn_pooled_pages(void)
{
	size_t bytes = 0;

	/* Unlocked, as vn_busy_pages: every free of a batch asks, and locking each node's pools queued 16 threads on them. */
	for (unsigned i = 0; i < nr_nodes; i++)
		bytes += __atomic_load_n(&nodes[i].pools.bytes, __ATOMIC_RELAXED);
	return bytes >> UVM_PAGE_SHIFT;
}

/* The same for vn's large pool (its lock held): the largest first, which give the most back. */
static void large_decay(struct vmap_node *vn, int full, struct list_head *out)
{
	struct vmap_pool *vp = &vn->pools.large;

	for (size_t n = full ? vp->len : (vp->len + 3) >> 2; n; n--) {
		struct vmap_area *va = list_last_entry(&vp->head, struct vmap_area, list);

		pool_unlink(vn, va);
		list_add_tail(&va->list, out);
	}
}

void vn_pool_decay(unsigned id, int full, struct list_head *out)
{
	struct vmap_node *vn = &nodes[id];

	uvm_lock(&vn->pools.lock);
	for (unsigned p = 0; p < VN_POOL_PAGES && vn->pools.nr; p++) {
		struct vmap_pool *vp = &vn->pools.pool[p];
		size_t n = full ? vp->len : (vp->len + 3) >> 2;

		for (; n; n--) {
			struct vmap_area *va = list_first_entry(&vp->head, struct vmap_area, list);

			pool_unlink(vn, va);
			list_add_tail(&va->list, out);
		}
	}
	large_decay(vn, full, out);
	uvm_unlock(&vn->pools.lock);
}

/* ----------------------------------------------------------------- stats */

void vn_stats(struct uvm_stats *st)
{
	for (unsigned i = 0; i < nr_nodes; i++) {
		struct vmap_node *vn = &nodes[i];

		uvm_lock(&vn->busy.lock);
		st->busy_bytes += vn->busy.bytes;
		st->busy_count += vn->busy.nr;
		uvm_unlock(&vn->busy.lock);
		uvm_lock(&vn->lazy.lock);
		st->lazy_bytes += vn->lazy.bytes;
		st->lazy_count += vn->lazy.nr;
		uvm_unlock(&vn->lazy.lock);
		uvm_lock(&vn->pools.lock);
		st->pooled_bytes += vn->pools.bytes;
		st->pooled_count += vn->pools.nr;
		st->pool_hits += __atomic_load_n(&vn->pools.hits, __ATOMIC_RELAXED);
		st->pool_misses += __atomic_load_n(&vn->pools.misses, __ATOMIC_RELAXED);
		uvm_unlock(&vn->pools.lock);
	}
}

/* ------------------------------------------------------------------ fork */

void vn_fork_prepare(void)
{
	for (unsigned i = 0; i < nr_nodes; i++) {
		uvm_lock(&nodes[i].pools.lock);
		uvm_lock(&nodes[i].busy.lock);
		uvm_lock(&nodes[i].lazy.lock);
	}
}

void vn_fork_parent(void)
{
	for (unsigned i = 0; i < nr_nodes; i++) {
		uvm_unlock(&nodes[i].lazy.lock);
		uvm_unlock(&nodes[i].busy.lock);
		uvm_unlock(&nodes[i].pools.lock);
	}
}

void vn_fork_child(void)
{
	for (unsigned i = 0; i < nr_nodes; i++) {
		uvm_lock_init(&nodes[i].lazy.lock);
		uvm_lock_init(&nodes[i].busy.lock);
		uvm_lock_init(&nodes[i].pools.lock);
	}
}

/* ------------------------------------------------------------ descriptor */

void vn_describe(struct uvm_descriptor *d)
{
	d->nodes = (uintptr_t)nodes;
	d->nr_nodes = nr_nodes;
	d->node_size = sizeof(struct vmap_node);
	d->busy_root = offsetof(struct vmap_node, busy.root);
	d->busy_seq = offsetof(struct vmap_node, busy.seq);
	d->busy_nr = offsetof(struct vmap_node, busy.nr);
	d->busy_bytes = offsetof(struct vmap_node, busy.bytes);
	d->lazy_root = offsetof(struct vmap_node, lazy.root);
	d->lazy_seq = offsetof(struct vmap_node, lazy.seq);
	d->lazy_nr = offsetof(struct vmap_node, lazy.nr);
	d->lazy_bytes = offsetof(struct vmap_node, lazy.bytes);
	d->pool_nr = offsetof(struct vmap_node, pools.nr);
	d->pool_bytes = offsetof(struct vmap_node, pools.bytes);
}
