/*
 * area.h - alloc_vmap_area / free_vmap_area: one area's way through pools,
 * the free tree, purge and growth, and back through the lazy lists.
 */
#ifndef UVM_AREA_H
#define UVM_AREA_H

#include "vmap.h"

/*
 * A busy area with usable bytes (a page multiple) plus its guard page,
 * aligned to align (a power of two, at least a page).  NULL with *err set to
 * ENOMEM when no address space or metadata is left.
 */
struct vmap_area *area_alloc(size_t usable, size_t align, const void *caller, int *err);
/* Free a busy area that has left its busy tree: it goes to its owner's lazy list. */
void area_free(struct vmap_area *va);
/* Change a busy area's usable size in place (vrealloc): shrink, or grow into the free range after it.  0 or ENOMEM. */
int area_resize(struct vmap_area *va, size_t usable);

static inline size_t area_usable(const struct vmap_area *va) { return va_size(va) - UVM_PAGE_SIZE; }

#endif
