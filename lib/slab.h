/*
 * slab.h - small objects (the kmalloc beside our vmalloc).
 *
 * Size classes of 16 bytes up to 128, then four per power of two up to
 * UVM_SLAB_MAX (at most 8 KiB).  A slab is one 64 KiB vmap area, aligned to
 * 64 KiB, with its header in its first 128 bytes; the slab of any pointer
 * is found in O(1) from the page map at pointer & ~(64 KiB - 1).  Each
 * thread owns its slabs (its slab heap, part of the thread heap, heap.h):
 * it allocates and frees into them with no
 * atomic operation; other threads push their frees onto a slab's remote list
 * with one compare-and-swap, and the owner collects them when it runs dry.
 * An empty slab goes back to the area caches, and from there to pools and
 * the kernel.  Slabs of an exited thread are orphaned and adopted by the
 * next thread that needs a slab of that class.  A thread past its exit (a
 * late destructor of the program's) allocates from one shared slab heap
 * under a lock.
 */
#ifndef UVM_SLAB_H
#define UVM_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "uvmalloc.h"

#define SLAB_SIZE ((size_t)64 << 10)
#define SLAB_OBJ_MAX ((size_t)8 << 10)
#define SLAB_CLASSES (8 + 4 * 6) /* 16..128 by 16, then 4 per power of two up to 8 KiB */

struct slab;

/* One thread's slabs. */
struct slab_heap {
	struct slab *cur[SLAB_CLASSES];
	struct list_head partial[SLAB_CLASSES], full[SLAB_CLASSES];
	/* By class, so that bytes are counts times class sizes: no add of a size on the fast paths. */
	uint64_t allocs[SLAB_CLASSES], frees[SLAB_CLASSES];
};

void slab_heap_init(struct slab_heap *h);
/* A thread that is gone leaves its slabs to others: empty ones are released, the rest orphaned. */
void slab_heap_exit(struct slab_heap *h);
/* Add an exited thread's counters to the process's (the heap registry's lock held). */
void slab_heap_fold(struct slab_heap *h);

/* Read UVM_SLAB_MAX and set up the thread-exit hook.  0 or an errno. */
int slab_init(void);
/* The largest size slabs serve (UVM_SLAB_MAX); larger requests are areas. */
size_t slab_max(void);
extern size_t uvm__slab_max; /* UVM_SLAB_MAX, read at set-up */

bool slab_serves_aligned(size_t size, size_t align);

/* Whether slabs serve size bytes aligned to align (1..UVM_SLAB_MAX, alignment at most 128). */
static inline bool slab_serves(size_t size, size_t align)
{
	if (__builtin_expect(align <= 16, 1)) /* every class is a multiple of 16 */
		return size <= uvm__slab_max;
	return slab_serves_aligned(size, align);
}
/* An object of at least size bytes aligned to align, for a request slab_serves; NULL when out of memory. */
void *slab_alloc(size_t size, size_t align);
/* What a pointer is to the slabs. */
enum slab_ptr {
	SLAB_NONE, /* in no slab: an area's, or nobody's */
	SLAB_BAD,  /* in a slab, but not the start of an allocated object (interior, never handed out, or freed) */
	SLAB_LIVE, /* an allocated object */
};

/* Classify p; for SLAB_LIVE, *usable gets its object size. */
enum slab_ptr slab_check(const void *p, size_t *usable);
/* Free p if it is SLAB_LIVE; returns what p was. */
enum slab_ptr slab_free(void *p);

void slab_stats(struct uvm_stats *st);
void slab_fork_prepare(void);
void slab_fork_parent(void);
void slab_fork_child(void);

#endif
