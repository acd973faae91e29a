/*
 * arena.c - regions of reserved address space and the free trees over them.
 *
 * A region is one mmap(PROT_NONE, MAP_NORESERVE) bound to one NUMA node.
 * Userspace difference: the kernel maps pages into its vmalloc space one
 * area at a time; here the region's low part is made read/write
 * ("committed") in growing steps, so the region stays two VMAs (read/write,
 * then PROT_NONE) however many areas it holds, and the lowest-fit search
 * keeps the committed part dense.  Pages are backed by the kernel on first
 * touch and handed back with madvise by purges; the committed boundary never
 * moves down.  A wild access beyond it faults.
 *
 * Each NUMA node has a free tree of its own regions under its own lock (the
 * kernel's free_vmap_area_lock, one per node here), so placement follows
 * from the address.  Userspace difference: each owner (a thread, vnode.h)
 * carves from its own zone of a region first (arena_alloc), where the
 * kernel takes the lowest fit for every CPU: our caches are threads' and
 * join only their own areas, so areas of one thread must lie together.
 * The last page of every region never enters a free tree, so two regions
 * that the kernel happens to place side by side never merge into one
 * range.
 */
#include "arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "huge.h"
#include "lock.h"
#include "meta.h"
#include "numa_node.h"
#include "options.h"
#include "os.h"
#include "trace.h"
#include "track.h"
#include "uvmalloc-descriptor.h"

#define COMMIT_STEP_MIN ((uintptr_t)4 << 20)
#define REGION_MIN ((size_t)64 << 20) /* the smallest region asked for when a larger one is refused */

/* One NUMA node's free space. */
struct free_space {
	uvm_lock_t lock; /* the kernel's free_vmap_area_lock: tree, list and counters */
	struct va_tree tree;
	size_t bytes, count;
	_Atomic uint64_t seq; /* odd while the tree changes: for readers outside the process (descriptor.h) */
} uvm_cacheline_aligned;

static void seq_begin(struct free_space *fs) { uvm_seq_begin(&fs->seq); }
static void seq_end(struct free_space *fs) { uvm_seq_end(&fs->seq); }

struct region uvm__regions[ARENA_MAX_REGIONS];
_Atomic int uvm__nr_regions;

static struct {
	struct free_space *node;
	unsigned nr_nodes;
	uvm_lock_t commit_lock; /* serialises mprotect of a region's boundary and region growth */
	size_t failed_need;      /* the smallest region that could not be reserved lately (commit_lock) */
	uint64_t failed_until;   /* ... until this CLOCK_MONOTONIC_COARSE time */
	size_t failed_free;      /* ... while the free trees held no more than this */
} arena = { .commit_lock = UVM_LOCK_INIT };

int arena_init(unsigned nr)
{
	arena.node = os_alloc_meta(nr * sizeof(*arena.node));
	if (!arena.node)
		return ENOMEM;
	track_meta(uvm__regions, sizeof(uvm__regions)); /* a region's base is its first area's address */
	arena.nr_nodes = nr;
	for (unsigned i = 0; i < nr; i++) {
		uvm_lock_init(&arena.node[i].lock);
		va_tree_init(&arena.node[i].tree);
	}
	return 0;
}

unsigned arena_nid(uintptr_t addr)
{
	struct region *r = region_of(addr);

	return r ? r->nid : 0;
}

static struct free_space *space_of(uintptr_t addr) { return &arena.node[arena_nid(addr)]; }

/*
 * Make [.., end) of r read/write, in steps of half what is committed, so
 * that the mprotect count stays logarithmic and small: each takes the mmap
 * lock for writing, which waits for every page fault in flight, while the
 * threads that need the range wait on commit_lock.  With steps of an
 * eighth, 16 threads starting random_size waited 86 times, 85 of them
 * asleep, the longest waits of any lock.  A step only adds address space
 * that may be written: pages are still backed on first touch.
 */
static int commit_to(struct region *r, uintptr_t end)
{
	uintptr_t cur, want;
	int err = 0;

	if (end <= atomic_load_explicit(&r->committed, memory_order_acquire))
		return 0;
	uvm_lock(&arena.commit_lock);
	cur = atomic_load_explicit(&r->committed, memory_order_relaxed);
	if (end > cur) {
		uintptr_t step = (cur - r->base) / 2;

		want = align_up(end > cur + COMMIT_STEP_MIN ? end : cur + COMMIT_STEP_MIN, COMMIT_STEP_MIN);
		if (want < cur + step)
			want = align_up(cur + step, COMMIT_STEP_MIN);
		if (want > r->end)
			want = r->end;
		err = os_commit(cur, want - cur);
		if (!err)
			atomic_store_explicit(&r->committed, want, memory_order_release);
	}
	uvm_unlock(&arena.commit_lock);
	return err;
}

static int commit_range(uintptr_t start, uintptr_t end)
{
	struct region *r = region_of(start);

	return r ? commit_to(r, end) : EFAULT;
}

/* Hand [start, end) back to the free tree with an object of its own. */
static void give_back_range(uintptr_t start, uintptr_t end)
{
	struct vmap_area *va = meta_va_alloc();
	LIST_HEAD(list);

	if (!va)
		return; /* only address space is lost, never memory */
	va->va_start = start;
	va->va_end = end;
	list_add(&va->list, &list);
	arena_release(&list);
}

/*
 * Where zone z starts in r: zones are ARENA_ZONE_BYTES apart from the
 * region's base, wrapping where the region holds fewer of them.
 */
static uintptr_t zone_start(const struct region *r, unsigned zone)
{
	uintptr_t zones = (r->end - r->base) / ARENA_ZONE_BYTES;

	return r->base + (zones > 1 ? zone % zones : 0) * ARENA_ZONE_BYTES;
}

/*
 * The lowest fit at or above zone's start in one of nid's regions, else
 * the lowest fit anywhere (fs locked): zone 0 starts at a region's base,
 * so its first try is the plain lowest fit.
 */
static int carve(struct free_space *fs, unsigned nid, unsigned zone, size_t size, size_t align,
		 struct vmap_area **spare, struct list_head *absorbed, uintptr_t *addr)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_acquire);

	for (int k = 0; zone && k < n; k++) {
		const struct region *r = &uvm__regions[k];

		if (r->nid == nid && r->base != r->end &&
		    !va_alloc(&fs->tree, size, align, zone_start(r, zone), r->end, spare, absorbed, addr))
			return 0;
	}
	return va_alloc(&fs->tree, size, align, 0, UINTPTR_MAX, spare, absorbed, addr);
}

/* size bytes aligned to align from fs's tree (carve's way, or the plain lowest fit when zone is 0) at *addr. */
static int take_range(struct free_space *fs, unsigned nid, unsigned zone, size_t size, size_t align, uintptr_t *addr)
{
	struct vmap_area *spare = meta_va_alloc();
	LIST_HEAD(absorbed);
	int err;

	if (!spare)
		return ENOMEM;
	uvm_lock(&fs->lock);
	seq_begin(fs);
	err = carve(fs, nid, zone, size, align, &spare, &absorbed, addr);
	if (!err) {
		fs->bytes -= size;
		fs->count += !spare;                 /* a middle split adds a range */
		fs->count -= !list_empty(&absorbed); /* a whole fit removes one */
	}
	seq_end(fs);
	uvm_unlock(&fs->lock);
	if (spare)
		meta_va_free(spare);
	meta_va_free_list(&absorbed);
	return err;
}

int arena_alloc(unsigned nid, unsigned zone, struct vmap_area *va, size_t size, size_t align)
{
	struct free_space *fs = &arena.node[nid];
	uintptr_t addr;
	int err = take_range(fs, nid, zone, size, align, &addr);

	if (err)
		return err;
	err = commit_range(addr, addr + size);
	if (err) {
		give_back_range(addr, addr + size);
		/* A zone's range may lie past what the kernel will commit (strict overcommit): the lowest fit may not. */
		return zone ? arena_alloc(nid, 0, va, size, align) : err;
	}
	va->va_start = addr;
	va->va_end = addr + size;
	return 0;
}

/* Reserve a region and its page map, bind it, and publish it. */
/*
 * A region's page map starts half a page into its mapping.  The slot of a
 * region's first page, which holds the first area every program makes
 * (the free tree hands out its lowest range first), would otherwise sit at
 * the same page offset as that area's first bytes, the ones programs write
 * most: a load of the slot while such a store is in flight waits for it
 * (4K aliasing), 3 ns of an 18 ns alloc+free pair here.
 */
#define MAP_OFFSET (UVM_PAGE_SIZE / 2)

/* The page map, then the chunk table from a page boundary (two chunks more: an unaligned region's ends lie in chunks of their own). */
static size_t slots_bytes(size_t region_bytes) { return align_up((region_bytes >> UVM_PAGE_SHIFT << 3) + UVM_PAGE_SIZE, UVM_PAGE_SIZE); }
static size_t map_bytes(size_t region_bytes) { return slots_bytes(region_bytes) + ((region_bytes >> ARENA_CHUNK_SHIFT) + 2) * ARENA_CHUNK_BYTES; }
static void *map_start(const struct region *r) { return (char *)r->map - MAP_OFFSET; }

static int add_region(unsigned nid, size_t size, uintptr_t *base)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_relaxed);
	struct region *r = &uvm__regions[n];
	int err;

	if (n == ARENA_MAX_REGIONS)
		return ENOMEM;
	r->map = os_alloc_meta(map_bytes(size));
	if (!r->map)
		return ENOMEM;
	r->map = (va_slot_t *)((char *)r->map + MAP_OFFSET);
	err = os_reserve(size, base);
	if (!err && *base + size > (uintptr_t)1 << ARENA_ADDR_BITS) {
		os_unreserve(*base, size); /* only with 5-level page tables and a hint, which we never give */
		err = ENOMEM;
	}
	if (err) {
		os_free_meta(map_start(r), map_bytes(size));
		return err;
	}
	/* THP faults only where an area asks for them (huge.c): never on a region as a whole. */
	os_hugepage(*base, size, 0);
	numa_bind_region(*base, size, nid);
	r->base = *base;
	r->end = *base + size;
	r->size = size;
	r->nid = nid;
	r->slots = (uintptr_t)r->map - (*base >> UVM_PAGE_SHIFT) * sizeof(va_slot_t);
	r->chunks = (uintptr_t)map_start(r) + slots_bytes(size) - (*base >> ARENA_CHUNK_SHIFT) * ARENA_CHUNK_BYTES;
	atomic_store_explicit(&r->committed, *base, memory_order_relaxed);
	atomic_store_explicit(&uvm__nr_regions, n + 1, memory_order_release);
	return 0;
}

/*
 * The address space RLIMIT_AS still allows (its limit less the process's
 * size now), or SIZE_MAX without a limit.  Read with plain syscalls: this
 * runs inside malloc.
 */
static size_t as_room(void)
{
	struct rlimit lim;
	char buf[64] = { 0 };
	unsigned long long pages;
	int fd;

	if (getrlimit(RLIMIT_AS, &lim) || lim.rlim_cur == RLIM_INFINITY)
		return SIZE_MAX;
	fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) <= 0 || sscanf(buf, "%llu", &pages) != 1)
		pages = 0;
	close(fd);
	return lim.rlim_cur > pages * UVM_PAGE_SIZE ? (size_t)(lim.rlim_cur - pages * UVM_PAGE_SIZE) : 0;
}

size_t arena_reserved(unsigned nid)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_acquire);
	size_t total = 0;

	for (int i = 0; i < n; i++)
		if (uvm__regions[i].nid == nid)
			total += uvm__regions[i].end - uvm__regions[i].base;
	return total;
}

/*
 * How much a new region of NUMA node nid asks for: UVM_ARENA_SIZE, or as
 * much as the node's regions so far, so that the ARENA_MAX_REGIONS slots
 * cover any address space however small the first; at most a quarter of
 * what RLIMIT_AS leaves (its page map takes 1/512 more), so that the
 * program and its libraries keep room; never less than need.
 */
static size_t region_size(unsigned nid, size_t need)
{
	size_t want = (size_t)option(OPT_ARENA_SIZE), total = arena_reserved(nid), room = as_room();

	if (want < total)
		want = total;
	if (want > room / 4)
		want = align_down(room / 4, HUGE_SIZE);
	if (want < need)
		want = room == SIZE_MAX ? align_up(need, (size_t)1 << 30) : need;
	return want;
}

/* Add a region for node nid of the size region_size gives, halving it while the kernel refuses, down to need. */
static int reserve(unsigned nid, size_t need, uintptr_t *base, size_t *size)
{
	size_t want = region_size(nid, need), floor = need < REGION_MIN ? REGION_MIN : need;
	int err;

	/*
	 * An address-space limit (ulimit -v, valgrind) refuses 64 GiB: ask for
	 * less, halving down to REGION_MIN, then for just what is needed, so
	 * the last of the room serves a small request too.
	 */
	while ((err = add_region(nid, want, base)) == ENOMEM && want > need)
		want = want / 2 >= floor ? align_down(want / 2, UVM_PAGE_SIZE) : need;
	*size = want;
	return err;
}

/*
 * Give back region r if its free tree holds it whole (the separating last
 * page aside): no area, cached, lazy or pooled one included, lives in it.
 * Called under commit_lock, which every region change and commit takes.
 */
static int release_if_unused(struct region *r)
{
	struct free_space *fs = &arena.node[r->nid];
	uintptr_t base = r->base, end = r->end;
	struct vmap_area *va, *spare = NULL;
	LIST_HEAD(absorbed);

	uvm_lock(&fs->lock);
	va = va_find_free_at(&fs->tree, base);
	if (va && va->va_end == end - UVM_PAGE_SIZE) {
		seq_begin(fs);
		fs->bytes -= va_size(va);
		fs->count--;
		va_clip(&fs->tree, va, base, va_size(va), &spare, &absorbed);
		__atomic_store_n(&r->size, 0, __ATOMIC_RELEASE); /* lock-free lookups now match nothing here */
		__atomic_store_n(&r->end, base, __ATOMIC_RELEASE);
		seq_end(fs);
	}
	uvm_unlock(&fs->lock);
	if (list_empty(&absorbed))
		return 0;
	meta_va_free_list(&absorbed);
	os_unreserve(base, end - base);
	os_free_meta(map_start(r), map_bytes(end - base));
	return 1;
}

/* Give back every region no area lives in; how many. */
static int release_unused(void)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_relaxed), released = 0;

	for (int i = 0; i < n; i++)
		if (uvm__regions[i].base != uvm__regions[i].end)
			released += release_if_unused(&uvm__regions[i]);
	return released;
}

/* Bytes in all free trees, read without their locks: a hint that frees came back. */
static size_t free_total(void)
{
	size_t total = 0;

	for (unsigned i = 0; i < arena.nr_nodes; i++)
		total += __atomic_load_n(&arena.node[i].bytes, __ATOMIC_RELAXED);
	return total;
}

/* Did a request this large fail lately, with nothing given back since that could make regions unused? */
static bool failed_lately(size_t need)
{
	return need >= arena.failed_need && coarse_ns() < arena.failed_until && free_total() <= arena.failed_free;
}

int arena_grow(unsigned nid, size_t size, size_t align)
{
	struct vmap_area *va;
	uintptr_t base;
	size_t need, want;
	LIST_HEAD(list);
	int err;

	/* Room for the request at any alignment, plus the separating last page. */
	if (size > SIZE_MAX / 2 || align > SIZE_MAX / 4)
		return ENOMEM;
	need = align_up(size + align + UVM_PAGE_SIZE, UVM_PAGE_SIZE);
	va = meta_va_alloc();
	if (!va)
		return ENOMEM;
	uvm_lock(&arena.commit_lock); /* one grower at a time: regions[] is append-only */
	if (failed_lately(need)) {
		err = ENOMEM;
	} else {
		err = reserve(nid, need, &base, &want);
		if (err == ENOMEM && release_unused())
			err = reserve(nid, need, &base, &want);
		if (err) {
			arena.failed_need = need;
			arena.failed_until = coarse_ns() + ARENA_RETRY_NS;
			arena.failed_free = free_total();
		}
	}
	uvm_unlock(&arena.commit_lock);
	if (err) {
		meta_va_free(va);
		return err;
	}
	va->va_start = base;
	va->va_end = base + want - UVM_PAGE_SIZE;
	list_add(&va->list, &list);
	arena_release(&list);
	UVM_TRACE(region_new, base, want, nid);
	return 0;
}

int arena_extend(struct vmap_area *va, size_t extra)
{
	struct free_space *fs = space_of(va->va_start);
	struct vmap_area *next, *spare = NULL;
	LIST_HEAD(absorbed);
	int err = ENOMEM;

	uvm_lock(&fs->lock);
	seq_begin(fs);
	next = va_find_free_at(&fs->tree, va->va_end);
	if (next && va_size(next) >= extra) {
		err = va_clip(&fs->tree, next, va->va_end, extra, &spare, &absorbed);
		fs->bytes -= extra;
		fs->count -= !list_empty(&absorbed);
	}
	seq_end(fs);
	uvm_unlock(&fs->lock);
	meta_va_free_list(&absorbed);
	if (err)
		return err;
	err = commit_range(va->va_end, va->va_end + extra);
	if (err) {
		give_back_range(va->va_end, va->va_end + extra);
		return err;
	}
	va->va_end += extra;
	return 0;
}

/* Merge va into fs (locked); a range freed twice is refused, as the kernel does, and goes on refused. */
static void release_one(struct free_space *fs, struct vmap_area *va, struct list_head *absorbed,
			struct list_head *refused)
{
	struct vmap_area *a;
	int err;

	seq_begin(fs);
	err = va_merge_or_add(&fs->tree, va, absorbed);
	if (!err) {
		fs->bytes += va_size(va);
		fs->count++;
		/* Each object absorbed is one range that merged into a neighbour. */
		list_for_each_entry(a, absorbed, list)
			fs->count--;
	}
	seq_end(fs);
	if (err)
		list_add_tail(&va->list, refused);
}

void arena_release(struct list_head *vas)
{
	struct vmap_area *va, *n;
	struct free_space *locked = NULL;
	LIST_HEAD(absorbed);
	LIST_HEAD(dead);

	/* Lists come sorted by address, so the lock changes only where a node's regions end. */
	list_for_each_entry_safe(va, n, vas, list) {
		struct free_space *fs = space_of(va->va_start);
		LIST_HEAD(merged);

		if (fs != locked) {
			if (locked)
				uvm_unlock(&locked->lock);
			uvm_lock(&fs->lock);
			locked = fs;
		}
		list_del(&va->list);
		release_one(fs, va, &merged, &dead);
		list_splice_tail(&merged, &absorbed);
	}
	if (locked)
		uvm_unlock(&locked->lock);
	meta_va_free_list(&absorbed);
	meta_va_free_list(&dead);
	list_init(vas);
}

void arena_stats(struct uvm_stats *st)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_acquire);

	for (int i = 0; i < n; i++) {
		if (uvm__regions[i].base == uvm__regions[i].end)
			continue; /* given back */
		st->regions++;
		st->reserved_bytes += uvm__regions[i].end - uvm__regions[i].base;
		st->committed_bytes += atomic_load(&uvm__regions[i].committed) - uvm__regions[i].base;
	}
	for (unsigned i = 0; i < arena.nr_nodes; i++) {
		struct free_space *fs = &arena.node[i];
		size_t largest;

		uvm_lock(&fs->lock);
		st->free_bytes += fs->bytes;
		st->free_count += fs->count;
		largest = va_tree_largest(&fs->tree);
		uvm_unlock(&fs->lock);
		if (largest > st->largest_free)
			st->largest_free = largest;
	}
}

/*
 * Above a region's committed top nothing is allocated, so all of it lies in
 * the one free range that reaches the top: the span's free figures are the
 * node's totals less that range's part above the top, and its largest range
 * is a tree query, O(regions log n) in all, cheap enough for every snapshot.
 */
void arena_span(struct uvm_span *sp)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_acquire);

	memset(sp, 0, sizeof(*sp));
	for (unsigned i = 0; i < arena.nr_nodes; i++) {
		struct free_space *fs = &arena.node[i];

		uvm_lock(&fs->lock);
		sp->free_bytes += fs->bytes;
		sp->free_count += fs->count;
		for (int k = 0; k < n; k++) {
			const struct region *r = &uvm__regions[k];
			uintptr_t top = atomic_load(&r->committed);
			const struct vmap_area *va;
			size_t largest;

			if (r->nid != i || r->base == r->end)
				continue; /* another node's, or given back */
			if ((va = va_containing(&fs->tree.root, top))) {
				sp->free_bytes -= va->va_end - top;
				sp->free_count -= va->va_start == top;
			}
			largest = va_tree_largest_in(&fs->tree, r->base, top);
			if (largest > sp->largest)
				sp->largest = largest;
		}
		uvm_unlock(&fs->lock);
	}
	for (int k = 0; k < n; k++)
		if (uvm__regions[k].base != uvm__regions[k].end)
			sp->bytes += atomic_load(&uvm__regions[k].committed) - uvm__regions[k].base;
}

size_t arena_map_resident(void)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_acquire);
	size_t bytes = 0;

	for (int i = 0; i < n; i++) {
		const struct region *r = &uvm__regions[i];
		uintptr_t top, chunks;

		if (r->base == r->end)
			continue;
		/* Slots and chunk records are written only for areas, which lie below the committed top: the maps above it were never touched. */
		top = atomic_load(&r->committed);
		chunks = align_down((uintptr_t)region_chunk(r, r->base), UVM_PAGE_SIZE);
		bytes += os_resident((uintptr_t)map_start(r),
				     align_up(MAP_OFFSET + ((top - r->base) >> UVM_PAGE_SHIFT << 3), UVM_PAGE_SIZE));
		bytes += os_resident(chunks, align_up((uintptr_t)region_chunk(r, top) + ARENA_CHUNK_BYTES, UVM_PAGE_SIZE) - chunks);
	}
	return bytes;
}

size_t arena_resident(void)
{
	int n = atomic_load_explicit(&uvm__nr_regions, memory_order_acquire);
	size_t bytes = 0;

	for (int i = 0; i < n; i++)
		if (uvm__regions[i].base != uvm__regions[i].end)
			bytes += os_resident(uvm__regions[i].base, atomic_load(&uvm__regions[i].committed) - uvm__regions[i].base);
	return bytes;
}

static int check_space(struct free_space *fs)
{
	size_t bytes = 0, count = 0;
	struct vmap_area *va;
	int err;

	uvm_lock(&fs->lock);
	err = va_tree_check(&fs->tree);
	list_for_each_entry(va, &fs->tree.list, list) {
		bytes += va_size(va);
		count++;
		if (space_of(va->va_start) != fs)
			err = -1;
	}
	if (bytes != fs->bytes || count != fs->count)
		err = -1;
	uvm_unlock(&fs->lock);
	return err;
}

int arena_check(void)
{
	int err = 0;

	for (unsigned i = 0; i < arena.nr_nodes && !err; i++)
		err = check_space(&arena.node[i]);
	return err;
}

void arena_fork_prepare(void)
{
	uvm_lock(&arena.commit_lock);
	for (unsigned i = 0; i < arena.nr_nodes; i++)
		uvm_lock(&arena.node[i].lock);
}

void arena_fork_parent(void)
{
	for (unsigned i = 0; i < arena.nr_nodes; i++)
		uvm_unlock(&arena.node[i].lock);
	uvm_unlock(&arena.commit_lock);
}

void arena_fork_child(void)
{
	for (unsigned i = 0; i < arena.nr_nodes; i++)
		uvm_lock_init(&arena.node[i].lock);
	uvm_lock_init(&arena.commit_lock);
}

void arena_describe(struct uvm_descriptor *d)
{
	d->regions = (uintptr_t)uvm__regions;
	d->nr_regions = (uintptr_t)&uvm__nr_regions;
	d->max_regions = ARENA_MAX_REGIONS;
	d->region_size = sizeof(struct region);
	d->region_base = offsetof(struct region, base);
	d->region_end = offsetof(struct region, end);
	d->region_committed = offsetof(struct region, committed);
	d->region_nid = offsetof(struct region, nid);
	d->region_map = offsetof(struct region, map);
	d->spaces = (uintptr_t)arena.node;
	d->nr_spaces = arena.nr_nodes;
	d->space_size = sizeof(struct free_space);
	d->space_list = offsetof(struct free_space, tree.list);
	d->space_seq = offsetof(struct free_space, seq);
	d->space_bytes = offsetof(struct free_space, bytes);
	d->space_count = offsetof(struct free_space, count);
}
