/*
 * pcp.h - per-thread order caches of freed areas (the kernel's per-CPU page
 * lists, struct per_cpu_pages).
 *
 * A freed area keeps its address range, its pages and its place in its busy
 * tree; it only leaves the page map (arena.h), so it is no longer a live
 * area.  It goes, whole, onto the freeing thread's list of its order and its
 * NUMA node, hottest first, if that thread owns it; another thread's area
 * goes back to its owner's pool instead (area_free).  An allocation looks
 * at its own order, then the higher ones; a larger area found there is
 * trimmed to size on the way out.
 * Over `high`, the coldest areas drain to the node (lazy lists, then pools
 * or the kernel).  The hit path takes only the thread's own cache lock,
 * which another thread takes only to decay an idle cache or to fork.
 *
 * Glossary: order k holds areas of 2^k .. 2^(k+1) - 1 pages, guard page
 * included; the last order holds every larger one too.
 */
#ifndef UVM_PCP_H
#define UVM_PCP_H

#include <stdbool.h>

#include "vmap.h"
#include "uvmalloc.h"

#define PCP_ORDERS 16
#define PCP_BATCH_PAGES 256   /* drained at once, and the step of decay (1 MiB) */
#define PCP_HIGH_MIN_PAGES 1024 /* high of an active thread never decays below this (4 MiB) */
#define PCP_DECAY_NS 1000000000ull

/* Set up for nodes NUMA nodes; reads UVM_PCP and UVM_PCP_HIGH.  0 or an errno. */
int pcp_init(unsigned nodes);

/*
 * A cached area of node nid with exactly pages pages (guard included) whose
 * start is aligned to align, or a larger one trimmed to that; NULL on a miss.
 * The area is still in its busy tree, and not in the page map.
 */
struct vmap_area *pcp_get(unsigned nid, size_t pages, size_t align);
/* Cache an area a user freed (out of the page map, still in its busy tree).  False: the caller frees it to the node. */
bool pcp_put(struct vmap_area *va);
/* Count an allocation or free that did not go through the cache (so stats stay exact). */
void pcp_count_alloc(size_t bytes);
void pcp_count_free(size_t bytes);

/* Decay every thread's high watermark once PCP_DECAY_NS has passed since the last time; slow paths call it. */
void pcp_decay_maybe(void);
/* One decay step over every cache now (tests; pcp_decay_maybe's work). */
void pcp_decay(void);
/* Drain every thread's cache to the nodes (uvm_purge, and before giving up on memory). */
void pcp_drain_all(void);
/* This thread's high watermark in pages (tests). */
size_t pcp_high(void);

void pcp_stats(struct uvm_stats *st);

void pcp_fork_prepare(void);
void pcp_fork_parent(void);
void pcp_fork_child(void);

#endif
