/*
 * numa_node.h - NUMA nodes (the kernel's numa_node_id() and vmalloc_node());
 * named so as not to hide libnuma's <numa.h>.
 *
 * Each NUMA node owns its own regions of address space and its own free
 * tree (arena.c), bound to the node with mbind, so where an area's pages
 * live follows from its address.  With UVM_FAKE_NUMA=N a one-node machine
 * is split into N pretend nodes, all bound to the one real node, so every
 * per-node path runs in the tests.
 */
#ifndef UVM_NUMA_NODE_H
#define UVM_NUMA_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define NUMA_MAX_NODES 64

/* Learn the nodes and the CPU-to-node map (libnuma, where a second node is), or set up the fake ones.  0 or ENOMEM. */
int numa_setup(void);
/* Nodes areas can be placed on: the real ones, or UVM_FAKE_NUMA. */
unsigned numa_nodes(void);
/* The node of the CPU the calling thread runs on (no syscall: sched_getcpu reads rseq). */
unsigned numa_local_slow(void);
extern uvm_hidden unsigned uvm__numa_nodes;
/* The NUMA node the calling thread runs on; no call on a one-node machine (every allocation asks). */
static inline unsigned numa_local(void) { return uvm__numa_nodes == 1 ? 0 : numa_local_slow(); }
/* Bind the pages of a new region to node nid (MPOL_PREFERRED).  Nothing to do on a one-node machine. */
void numa_bind_region(uintptr_t base, size_t size, unsigned nid);

#endif
