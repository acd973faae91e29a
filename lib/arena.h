/*
 * arena.h - the regions (the kernel's vmalloc space) and the one free tree
 * that spans them, under its own lock.  Only slow paths come here: an
 * allocation that no pool could serve, and purges giving ranges back.
 */
#ifndef UVM_ARENA_H
#define UVM_ARENA_H

#include "vmap.h"
#include "uvmalloc.h"

/*
 * Carve size bytes aligned to align out of the free tree into va
 * (va_start/va_end set) and commit it.  ENOMEM when nothing fits: the caller
 * purges or grows and tries again.
 */
int arena_alloc(struct vmap_area *va, size_t size, size_t align);
/* Reserve another region that can hold size bytes aligned to align. */
int arena_grow(size_t size, size_t align);
/* Extend the busy area va upward by extra bytes if the range after it is free (vrealloc). */
int arena_extend(struct vmap_area *va, size_t extra);
/* Merge every VA on the list back into the free tree; absorbed objects go back to meta. */
void arena_release(struct list_head *vas);

void arena_stats(struct uvm_stats *st);
/* 0 if the free tree passes va_tree_check and agrees with the free counters (test oracle). */
int arena_check(void);

void arena_fork_prepare(void);
void arena_fork_parent(void);
void arena_fork_child(void);

#endif
