/*
 * purge.h - lazy freeing's second half (the kernel's __purge_vmap_area_lazy).
 */
#ifndef UVM_PURGE_H
#define UVM_PURGE_H

#include <stddef.h>

#include "util.h"

#include "uvmalloc.h"

void purge_init(unsigned cpus);
/* lazy_max_pages(): fls(CPUs) * 32 MiB of pages (the kernel's), or UVM_LAZY_MAX. */
size_t purge_lazy_max(void);
/* Retained memory follows the program: an eighth of its busy pages, at least 1 MiB, at most lazy_max. */
#define PURGE_RETAIN_SHARE 8
#define PURGE_RETAIN_MIN ((size_t)256)
#define PURGE_LAZY_HARD 4 /* times the limit: lazy pages past it make a free wait for the purge */
/* Pages lazy lists may hold before a purge, and pools after it: purge_lazy_max() capping the share. */
size_t purge_retain_max(void);

/*
 * Purge every node now.  Pools first decay by a quarter (all of them when
 * full); then lazily freed areas of at most 256 pages refill their owner's
 * pool still backed (not when full, and while pools hold less than
 * lazy_max_pages), and everything else goes back to the
 * kernel, in runs of adjacent ranges (os_release_ranges: one system call
 * for many runs), and into the free tree.
 * (lazy_max_pages here is purge_retain_max().)
 * Returns the pages that left the lazy lists and pools.
 */
size_t purge_now(int full);
/* Free_vmap_area_noflush() for a list of areas still in their busy trees: onto their owners' lazy lists. */
void purge_free_lazily(struct list_head *vas);
/*
 * Frees of areas still backed that no live thread will take in: those of an
 * exited thread (its cache at exit, and its areas freed by others after).
 * They go straight to their owners' pools while the pools hold less than
 * lazy_max_pages (purge_lazy_max), so the next misses of those sizes reuse
 * them with no fault; the rest go lazily.  Pools past purge_retain_max()
 * decay with time (purge_decay).  Userspace difference: the kernel's lazy
 * list exists to batch TLB flushes, which a range that stays mapped does
 * not need.
 */
void purge_free_backed(struct list_head *vas);
/* Once a decay period (pcp_decay): pools past purge_retain_max() lose a quarter, as at a purge. */
void purge_decay(void);

void purge_stats(struct uvm_stats *st);

void purge_fork_prepare(void);
void purge_fork_parent(void);
void purge_fork_child(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void purge_describe(struct uvm_descriptor *d);

#endif
