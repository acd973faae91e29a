/*
 * arena.c - regions of reserved address space and the free tree over them.
 *
 * A region is one mmap(PROT_NONE, MAP_NORESERVE).  Userspace difference: the
 * kernel maps pages into its vmalloc space one area at a time; here the
 * region's low part is made read/write ("committed") in growing steps, so the
 * region stays two VMAs (read/write, then PROT_NONE) however many areas it
 * holds, and the lowest-fit search keeps the committed part dense.  Pages are
 * backed by the kernel on first touch and handed back with madvise by purges;
 * the committed boundary never moves down.  A wild access beyond it faults.
 *
 * The last page of every region never enters the free tree, so two regions
 * that the kernel happens to place side by side never merge into one range.
 */
#include "arena.h"

#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"

#define MAX_REGIONS 64
#define COMMIT_STEP_MIN ((uintptr_t)4 << 20)

struct region {
	uintptr_t base, end;
	_Atomic uintptr_t committed; /* [base, committed) is read/write */
};

static struct {
	uvm_lock_t lock; /* the kernel's free_vmap_area_lock: tree, list and counters */
	struct va_tree free;
	size_t free_bytes, free_count;
	uvm_lock_t commit_lock; /* serialises mprotect of a region's boundary */
	struct region regions[MAX_REGIONS];
	_Atomic int nr_regions;
} arena = { .lock = UVM_LOCK_INIT, .free = { { NULL }, LIST_HEAD_INIT(arena.free.list) }, .commit_lock = UVM_LOCK_INIT };

static struct region *region_of(uintptr_t addr)
{
	int n = atomic_load_explicit(&arena.nr_regions, memory_order_acquire);

	for (int i = 0; i < n; i++)
		if (addr >= arena.regions[i].base && addr < arena.regions[i].end)
			return &arena.regions[i];
	return NULL;
}

/* Make [.., end) of r read/write, in steps of 1/8 of what is committed so the mprotect count stays logarithmic. */
static int commit_to(struct region *r, uintptr_t end)
{
	uintptr_t cur, want;
	int err = 0;

	if (end <= atomic_load_explicit(&r->committed, memory_order_acquire))
		return 0;
	uvm_lock(&arena.commit_lock);
	cur = atomic_load_explicit(&r->committed, memory_order_relaxed);
	if (end > cur) {
		uintptr_t step = (cur - r->base) / 8;

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

int arena_alloc(struct vmap_area *va, size_t size, size_t align)
{
	struct vmap_area *spare = meta_va_alloc();
	LIST_HEAD(absorbed);
	uintptr_t addr;
	int err;

	if (!spare)
		return ENOMEM;
	uvm_lock(&arena.lock);
	err = va_alloc(&arena.free, size, align, 0, UINTPTR_MAX, &spare, &absorbed, &addr);
	if (!err) {
		arena.free_bytes -= size;
		arena.free_count += !spare;                 /* a middle split adds a range */
		arena.free_count -= !list_empty(&absorbed); /* a whole fit removes one */
	}
	uvm_unlock(&arena.lock);
	if (spare)
		meta_va_free(spare);
	meta_va_free_list(&absorbed);
	if (err)
		return err;
	err = commit_range(addr, addr + size);
	if (err) {
		give_back_range(addr, addr + size);
		return err;
	}
	va->va_start = addr;
	va->va_end = addr + size;
	return 0;
}

int arena_grow(size_t size, size_t align)
{
	size_t want = (size_t)option(OPT_ARENA_SIZE);
	struct vmap_area *va;
	uintptr_t base;
	LIST_HEAD(list);
	int n, err;

	/* Room for the request at any alignment, plus the separating last page. */
	if (size > SIZE_MAX / 2 || align > SIZE_MAX / 4)
		return ENOMEM;
	if (want < size + align + UVM_PAGE_SIZE)
		want = align_up(size + align + UVM_PAGE_SIZE, (size_t)1 << 30);
	va = meta_va_alloc();
	if (!va)
		return ENOMEM;
	uvm_lock(&arena.commit_lock); /* one grower at a time: regions[] is append-only */
	n = atomic_load_explicit(&arena.nr_regions, memory_order_relaxed);
	err = n == MAX_REGIONS ? ENOMEM : os_reserve(want, &base);
	if (!err) {
		arena.regions[n].base = base;
		arena.regions[n].end = base + want;
		atomic_store_explicit(&arena.regions[n].committed, base, memory_order_relaxed);
		atomic_store_explicit(&arena.nr_regions, n + 1, memory_order_release);
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
	return 0;
}

int arena_extend(struct vmap_area *va, size_t extra)
{
	struct vmap_area *next, *spare = NULL;
	LIST_HEAD(absorbed);
	int err = ENOMEM;

	uvm_lock(&arena.lock);
	next = va_find_free_at(&arena.free, va->va_end);
	if (next && va_size(next) >= extra) {
		err = va_clip(&arena.free, next, va->va_end, extra, &spare, &absorbed);
		arena.free_bytes -= extra;
		arena.free_count -= !list_empty(&absorbed);
	}
	uvm_unlock(&arena.lock);
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

void arena_release(struct list_head *vas)
{
	struct vmap_area *va, *n;
	LIST_HEAD(absorbed);
	LIST_HEAD(refused);

	uvm_lock(&arena.lock);
	list_for_each_entry_safe(va, n, vas, list) {
		list_del(&va->list);
		arena.free_bytes += va_size(va);
		arena.free_count++;
		if (va_merge_or_add(&arena.free, va, &absorbed)) {
			/* Overlap means a range was freed twice: refuse it, as the kernel does. */
			arena.free_bytes -= va_size(va);
			arena.free_count--;
			list_add_tail(&va->list, &refused);
		}
	}
	/* Each absorbed object is one range that merged into a neighbour. */
	list_for_each_entry(va, &absorbed, list)
		arena.free_count--;
	uvm_unlock(&arena.lock);
	meta_va_free_list(&absorbed);
	meta_va_free_list(&refused);
	list_init(vas);
}

void arena_stats(struct uvm_stats *st)
{
	int n = atomic_load_explicit(&arena.nr_regions, memory_order_acquire);

	st->regions = (uint64_t)n;
	for (int i = 0; i < n; i++) {
		st->reserved_bytes += arena.regions[i].end - arena.regions[i].base;
		st->committed_bytes += atomic_load(&arena.regions[i].committed) - arena.regions[i].base;
	}
	uvm_lock(&arena.lock);
	st->free_bytes = arena.free_bytes;
	st->free_count = arena.free_count;
	st->largest_free = va_tree_largest(&arena.free);
	uvm_unlock(&arena.lock);
}

int arena_check(void)
{
	size_t bytes = 0, count = 0;
	struct vmap_area *va;
	int err;

	uvm_lock(&arena.lock);
	err = va_tree_check(&arena.free);
	list_for_each_entry(va, &arena.free.list, list) {
		bytes += va_size(va);
		count++;
	}
	if (bytes != arena.free_bytes || count != arena.free_count)
		err = -1;
	uvm_unlock(&arena.lock);
	return err;
}

void arena_fork_prepare(void)
{
	uvm_lock(&arena.commit_lock);
	uvm_lock(&arena.lock);
}

void arena_fork_parent(void)
{
	uvm_unlock(&arena.lock);
	uvm_unlock(&arena.commit_lock);
}

void arena_fork_child(void)
{
	uvm_lock_init(&arena.lock);
	uvm_lock_init(&arena.commit_lock);
}
