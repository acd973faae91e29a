/*
 * area.h - alloc_vmap_area / free_vmap_area: one area's way through the
 * thread caches, pools, the free tree, purge and growth, and back.
 */
#ifndef UVM_AREA_H
#define UVM_AREA_H

#include <stdbool.h>

#include "vmap.h"

/*
 * A live area with usable bytes (a page multiple) plus its guard page,
 * aligned to align (a power of two, at least a page), on NUMA node node (-1:
 * the calling thread's).  huge_api: asked for through uvm_vmalloc_huge.
 * NULL with *err set to ENOMEM when no address space or metadata is left.
 */
struct vmap_area *area_alloc(size_t usable, size_t align, int node, bool huge_api, const void *caller, int *err);
/* Free an area area_take returned: to the thread's cache, or to its owner's lazy list. */
void area_free(struct vmap_area *va);
/* The live area that starts at addr, made not live (free's first step); NULL if none. */
struct vmap_area *area_take(uintptr_t addr);
/* The live area that starts at addr, or NULL. */
struct vmap_area *area_find(uintptr_t addr);
/*
 * Realloc's move: the first bytes of from into to.  Whole pages move with
 * mremap instead of being copied from AREA_MOVE_MIN on when to is fresh
 * (memcpy would fault in every page of it), from AREA_MOVE_MIN_BACKED on
 * when to is already backed (mremap must free its pages); measured in the
 * README.  The kernel may refuse (vm.max_map_count): then memcpy.
 */
#define AREA_MOVE_MIN ((size_t)64 << 10)
#define AREA_MOVE_MIN_BACKED ((size_t)16 << 20)
void area_copy(struct vmap_area *from, struct vmap_area *to, size_t bytes);
/* Change a live area's usable size in place (vrealloc): shrink, or grow into the free range after it.  0 or ENOMEM. */
int area_resize(struct vmap_area *va, size_t usable);

static inline size_t area_usable(const struct vmap_area *va) { return va_size(va) - UVM_PAGE_SIZE; }

#endif
