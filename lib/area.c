/*
 * area.c - the life of one area (the kernel's alloc_vmap_area and
 * free_vmap_area_noflush).
 *
 * Allocation: the owner node's pool of the exact page count (fast path: two
 * node locks, no syscall, pages still backed), else the free tree (slow path:
 * global lock), else a full purge and the tree again, else a new region.
 * The owner is recorded even when the pool missed, so the area's free feeds
 * that pool later ("populate pools based on demand").
 */
#include "area.h"

#include <errno.h>

#include "arena.h"
#include "meta.h"
#include "os.h"
#include "purge.h"
#include "vnode.h"

static void guard_install(uintptr_t page) { os_guard_install(page, UVM_PAGE_SIZE); }
static void guard_remove(uintptr_t page) { os_guard_remove(page, UVM_PAGE_SIZE); }

static uvm_noinline struct vmap_area *alloc_from_tree(size_t size, size_t align, int *err)
{
	struct vmap_area *va = meta_va_alloc();

	if (!va) {
		*err = ENOMEM;
		return NULL;
	}
	*err = arena_alloc(va, size, align);
	/* reclaim_and_purge_vmap_areas(): what waits lazily or in pools may make room. */
	if (*err == ENOMEM && purge_now(1))
		*err = arena_alloc(va, size, align);
	if (*err == ENOMEM && !arena_grow(size, align))
		*err = arena_alloc(va, size, align);
	if (*err) {
		meta_va_free(va);
		return NULL;
	}
	va->flags = 0;
	guard_install(va->va_end - UVM_PAGE_SIZE);
	return va;
}

struct vmap_area *area_alloc(size_t usable, size_t align, const void *caller, int *err)
{
	size_t size = usable + UVM_PAGE_SIZE;
	unsigned owner = vn_owner_id();
	struct vmap_area *va = NULL;

	if (size <= VN_POOL_PAGES * UVM_PAGE_SIZE)
		va = vn_pool_get(owner, size >> UVM_PAGE_SHIFT, align);
	if (va)
		va->flags |= VA_FROM_POOL;
	else if (!(va = alloc_from_tree(size, align, err)))
		return NULL;
	va_set_owner(va, owner);
	va->caller = caller;
	vn_busy_insert(va);
	return va;
}

void area_free(struct vmap_area *va)
{
	purge_if_over(vn_lazy_add(va));
}

/* Cut the tail [new_end, va_end) off as an area of its own and free it lazily. */
static int shrink(struct vmap_area *va, uintptr_t new_end)
{
	struct vmap_area *tail = meta_va_alloc();

	if (!tail)
		return ENOMEM;
	*tail = *va;
	tail->va_start = new_end;
	vn_busy_resize(va, new_end);
	guard_install(new_end - UVM_PAGE_SIZE);
	area_free(tail);
	return 0;
}

static int grow(struct vmap_area *va, uintptr_t new_end)
{
	uintptr_t old_guard = va->va_end - UVM_PAGE_SIZE;
	struct vmap_area probe = *va;
	int err = arena_extend(&probe, new_end - va->va_end);

	if (err)
		return err;
	guard_remove(old_guard);
	vn_busy_resize(va, new_end);
	guard_install(new_end - UVM_PAGE_SIZE);
	return 0;
}

int area_resize(struct vmap_area *va, size_t usable)
{
	uintptr_t new_end = va->va_start + usable + UVM_PAGE_SIZE;

	if (new_end == va->va_end)
		return 0;
	return new_end < va->va_end ? shrink(va, new_end) : grow(va, new_end);
}
