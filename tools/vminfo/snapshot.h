/*
 * snapshot.h - one consistent view of a target's allocator: every area of
 * the busy trees (live or resting in a thread cache), the lazily freed ones,
 * the free ranges, the regions and the counters.  Each tree is read whole
 * between two equal, even values of its sequence counter; a walk that raced
 * a change is retried.
 *
 * The target is not trusted: every area must be page-aligned, lie inside
 * one region and inside the range its place in the tree allows, so areas
 * are disjoint, a walk can meet no node twice and visits at most what the
 * regions could hold.  What breaks that while the counter stands still is
 * T_CORRUPT, naming what was wrong.  Memory: about 64 bytes per area (its
 * record, and its place in the walk's queue while a level is read).
 */
#ifndef VMINFO_SNAPSHOT_H
#define VMINFO_SNAPSHOT_H

#include "target.h"

struct area {
	uint64_t start, end, caller;
	uint32_t flags;
	unsigned node; /* NUMA node */
	unsigned vnode; /* the vmap node whose tree it was read from: a read is consistent per vmap node */
	int live;      /* 0: resting in a thread cache */
	uint64_t requested; /* bytes its user asked for (live areas, when the library keeps it; else 0) */
};

struct region_info {
	uint64_t base, end, committed, map;
	uint64_t chunks; /* the chunk table's word (slab headers), 0 without slabs */
	unsigned nid;
};

/* One size class's slabs, from their headers (approximate while their owners run: no counter guards them). */
#define SNAP_CLASSES 64
struct slab_class {
	uint64_t size, slabs, live, free, never_used;
	/* Of free: other threads' frees the slab's owner has not taken back yet, and objects in threads' hands */
	uint64_t waiting, in_hand;
	uint64_t orphans; /* slabs of an exited thread, no other adopted yet (a library that says: have_orphans) */
	uint64_t occupancy[5]; /* slabs by live share: none, below 25 %, 50 %, 75 %, the rest (as uvm_frag_stats) */
};

struct snapshot {
	struct area *busy, *lazy, *free;
	size_t nbusy, nlazy, nfree, cap_busy, cap_lazy, cap_free;
	struct region_info *regions; /* in use (released ones left out), by address */
	unsigned nregions;
	uint64_t max_areas;          /* the most page-aligned areas the regions could hold */
	uint64_t pooled_bytes, pooled_count;
	uint64_t allocs, frees, cache_hits, cache_misses;
	uint64_t mmap_calls, mprotect_calls, madvise_calls, mremap_calls, other_calls;
	uint64_t purges, purged_bytes, slabs;
	uint64_t rss_kb, anon_huge_kb; /* of the regions, from /proc/PID/smaps */
	uint64_t minor_faults, major_faults; /* the whole process's, from /proc/PID/stat */
	struct slab_class classes[SNAP_CLASSES]; /* by size, the first nclasses */
	unsigned nclasses;
	uint64_t slab_free_bytes, slab_meta_bytes, slab_live_bytes;
	uint64_t slabs_unread; /* slab areas whose header could not be read or made no sense */
	int have_orphans;      /* the library says which slabs are orphans (uvm_descriptor.slab_owner) */
	uint64_t *hand;        /* freed objects the live heaps keep in hand (counted used in their slabs), sorted */
	size_t nhand, cap_hand;
	/* The library's own memory outside the regions: heaps, area objects, resident page-map pages (pagemap) */
	int have_metadata;
	uint64_t metadata_bytes;
	/* Live areas' page rounding: usable bytes over the sizes asked for (a library that keeps the size) */
	int have_rounding;
	uint64_t rounding_bytes;
	/* UVM_THP (0: the library does not say; never 1, huge-only 2, always 3, auto 4) and auto's verdict */
	unsigned thp_mode;
	uint64_t thp_huge_ns, thp_small_ns, thp_samples, thp_declined, thp_small;
};

/* The region holding [start, end), or NULL: regions are sorted and disjoint (a binary search). */
const struct region_info *region_holding(const struct snapshot *s, uint64_t start, uint64_t end);

enum target_err snapshot_take(const struct target *t, struct snapshot *s);
void snapshot_free(struct snapshot *s);

#endif
