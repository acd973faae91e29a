/*
 * arena.h - the regions (the kernel's vmalloc space) and, per NUMA node, the
 * free tree over that node's regions, each under its own lock.  Only slow
 * paths come here: an allocation no cache or pool could serve, and purges
 * giving ranges back.
 *
 * Each region also carries its page map: one word per page, holding the
 * area of a busy tree (live, or resting in a thread cache) that starts at
 * that page, else NULL.  It turns a pointer into its area with no lock
 * (free, vsize).  It is written only when an area enters or leaves a busy
 * tree, never on a cache hit: slots of small neighbouring areas share cache
 * lines, and writing them from several threads would bounce the lines.
 *
 * And its chunk table: ARENA_CHUNK_BYTES per 64 KiB chunk, which this
 * layer only allocates (zeroed) and the heap layer fills (slab.h: the
 * header of the slab that starts there).  Dense, so the headers of a
 * program's slabs share few pages and spread over every cache set, and
 * out of the slabs, so no write past a block reaches one.
 */
#ifndef UVM_ARENA_H
#define UVM_ARENA_H

#include <stdatomic.h>

#include "vmap.h"
#include "uvmalloc.h"

#define ARENA_MAX_REGIONS 256
#define ARENA_ADDR_BITS 48 /* every region lies below 2^48: slab.h packs a count above its addresses */
#define ARENA_CHUNK_SHIFT 16
#define ARENA_CHUNK_BYTES 128

typedef struct vmap_area *_Atomic va_slot_t;

struct region {
	uintptr_t base;
	uintptr_t size; /* end - base, kept for lookups (a free tests it, one subtraction fewer); 0 once given back */
	uintptr_t end;
	_Atomic uintptr_t committed; /* [base, committed) is read/write */
	va_slot_t *map;              /* one slot per page of [base, end) */
	unsigned nid;                /* the NUMA node it is bound to */
	uintptr_t chunks;            /* the chunk table, less base's chunk number of records: chunk addr >> ARENA_CHUNK_SHIFT's record is at that index */
	uintptr_t slots;             /* map less base's page number of slots, the same way: a lookup subtracts no base */
};

/*
 * Append-only: a region, once published, never moves.  One given back
 * (arena_grow, under an address-space limit) stays in its slot, empty
 * (end == base), and its slot is never reused: lookups read these without
 * a lock, and a slot rewritten in place could match another region's
 * addresses halfway through.
 */
extern uvm_hidden struct region uvm__regions[ARENA_MAX_REGIONS];
extern uvm_hidden _Atomic int uvm__nr_regions;

/*
 * Whether addr lies in the first region.  Most programs never need a
 * second: the frees' leaves test this one and take the others a call
 * away, so that the first region's fields are constant addresses, not a
 * register the walk needs (a register copy in uvm_vfree, a NULL test in free's area leaf).
 */
static inline bool region_first(uintptr_t addr) { return addr - uvm__regions[0].base < uvm__regions[0].size; }

static inline struct region *region_of(uintptr_t addr)
{
	int n;

	/* The first is tried before the count is read. */
	if (likely(region_first(addr)))
		return &uvm__regions[0];
	n = atomic_load_explicit(&uvm__nr_regions, memory_order_acquire);
	for (int i = 1; i < n; i++)
		if (addr - uvm__regions[i].base < uvm__regions[i].size)
			return &uvm__regions[i];
	return NULL;
}

/* The page-map slot of the page at addr, in r, the region that holds it. */
static inline va_slot_t *region_slot(const struct region *r, uintptr_t addr)
{
	return (va_slot_t *)(r->slots + (addr >> UVM_PAGE_SHIFT) * sizeof(va_slot_t));
}

/* The chunk-table record of the 64 KiB chunk at addr, in r, the region that holds it. */
static inline void *region_chunk(const struct region *r, uintptr_t addr)
{
	return (void *)(r->chunks + (addr >> ARENA_CHUNK_SHIFT) * ARENA_CHUNK_BYTES);
}

/* The page-map slot of the page at addr, or NULL when no region holds it. */
static inline va_slot_t *arena_slot(uintptr_t addr)
{
	struct region *r = region_of(addr);

	return r ? region_slot(r, addr) : NULL;
}

/* Set up one free tree per NUMA node (nr of them).  0 or ENOMEM. */
int arena_init(unsigned nr);
/*
 * Carve size bytes aligned to align out of node nid's free tree into va
 * (va_start/va_end set) and commit it.  ENOMEM when nothing fits: the caller
 * purges or grows and tries again.
 *
 * zone: the lowest fit at or above the zone's start in one of the node's
 * regions (zone z starts z * ARENA_ZONE_BYTES above a region's base,
 * modulo the zones the region holds), else the lowest fit anywhere.  The
 * caller passes its owner's zone (vnode.h's vn_zone: 0 for a thread's
 * first VN_ZONE_AFTER bytes), so that each thread's areas lie
 * together: a thread's cache can then join the areas it freed into the
 * ranges its next requests need, where lowest-fit carving for all threads
 * at once laid their areas side by side and no cache could join its own
 * (allocwork buffers, 16 threads on 16 owners: 15 % less peak RSS, 20 %
 * less time).  Zone 0 is the plain lowest fit, which a program with one
 * thread keeps.
 */
#define ARENA_ZONE_BYTES ((uintptr_t)64 << 20)
int arena_alloc(unsigned nid, unsigned zone, struct vmap_area *va, size_t size, size_t align);
/* Bytes of address space node nid's regions hold in all. */
size_t arena_reserved(unsigned nid);
/*
 * Reserve another region for node nid that can hold size bytes aligned to
 * align.  When the kernel refuses (RLIMIT_AS), the regions no area lives in
 * are given back and the reservation is tried again.  A request at least
 * as large as one that failed in the last ARENA_RETRY_NS fails again at
 * once, without asking the kernel, unless the free trees grew since.
 */
#define ARENA_RETRY_NS (10 * 1000 * 1000)
int arena_grow(unsigned nid, size_t size, size_t align);
/* Extend the busy area va upward by extra bytes if the range after it is free (vrealloc). */
int arena_extend(struct vmap_area *va, size_t extra);
/* Merge every VA on the list back into its node's free tree; absorbed objects go back to meta. */
void arena_release(struct list_head *vas);
/* The NUMA node of the region that holds addr. */
unsigned arena_nid(uintptr_t addr);

void arena_stats(struct uvm_stats *st);
/* The address space below the regions' committed tops, where holes between areas count. */
struct uvm_span {
	uint64_t bytes;      /* committed, all regions */
	uint64_t free_bytes; /* of the free ranges, cut at the committed tops */
	uint64_t free_count;
	uint64_t largest;
};
void arena_span(struct uvm_span *sp);
/* Resident bytes of the regions' committed parts, and of their page maps and chunk tables. */
size_t arena_resident(void);
size_t arena_map_resident(void);
/* 0 if every free tree passes va_tree_check and agrees with its counters (test oracle). */
int arena_check(void);

void arena_fork_prepare(void);
void arena_fork_parent(void);
void arena_fork_child(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void arena_describe(struct uvm_descriptor *d);

#endif
