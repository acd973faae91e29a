/*
 * uvmalloc-descriptor.h - what a reader outside the process (vminfo, vmtrace,
 * or a tool of your own) needs to find and walk the allocator's state in
 * another process's memory.  Installed beside uvmalloc.h; the library fills
 * it (lib/api/descriptor.c) and never includes a reader's code.
 *
 * The library exports one data symbol, uvm_descriptor, found through the
 * target's /proc/PID/maps and the ELF symbol table of the module that holds
 * it.  It holds the layout of the structures a reader walks (offsets and
 * sizes, so a reader never compiles in our struct layouts) and the
 * addresses of their roots.  Every field is a uint64_t in the target's
 * byte order; `version` changes whenever a field changes meaning, and a
 * reader refuses versions it does not know.  The target does nothing for a
 * reader: no thread, no signal.  Trees carry sequence counters, odd while a
 * writer changes them, so a reader retries a walk that raced a change.
 */
#ifndef UVMALLOC_DESCRIPTOR_H
#define UVMALLOC_DESCRIPTOR_H

#include <stdint.h>

#define UVM_DESCRIPTOR_MAGIC "uvmdesc"
/*
 * 2: a slab's carved and room count objects, no longer bytes; its header is in the region's chunk table.
 * 3: a thread cache's bins count their in-line hits and frees in the lists (pcp_list_pops, and
 *    pcp_list_cap less pcp_list_left), no longer in pcp_hits and pcp_frees.
 * 4: a slab of objects of slab_map_size bytes or more keeps a bitmap of other threads' frees in its
 *    remote word (their count is its bits set), not a count above remote_shift.
 * 5: a thread heap's hands are counted by a pointer per class to the first empty slot (heap_hand_top),
 *    no longer by a uint32_t count.
 * 6: a busy area's tree entry may hold more than the area: up to its span's end (va_span_end, when
 *    larger than its end), the thread-cached areas its thread split off it and keeps unfiled.
 * 7: a bin's in-line frees are pcp_list_cap plus pcp_list_spent, which replaces pcp_list_left
 *    (cap less them).
 * 8: an area's live word may read va_live_parked: its thread's parked area, cached, not live; a
 *    bin's in-line frees add its pcp_list_parks, and so do its in-line hits, but for the area parked
 *    now (pcp_parked, pcp_parked_list).
 */
#define UVM_DESCRIPTOR_VERSION 8

struct uvm_descriptor {
	char magic[8];          /* UVM_DESCRIPTOR_MAGIC, NUL-terminated */
	uint64_t version, size; /* UVM_DESCRIPTOR_VERSION, sizeof(struct uvm_descriptor) */
	uint64_t ready;         /* 1 once the fields below are filled (set-up done) */
	uint64_t page_size;

	/* struct vmap_area: its size and the offsets of what a reader uses */
	uint64_t va_size, va_start, va_end, va_rb, va_left, va_right, va_caller, va_flags, va_live, va_list;
	uint64_t va_flag_huge, va_flag_hugetlb, va_flag_slab, va_nid_shift;

	/* regions: an array of max_regions, the first *nr_regions (an int) in use */
	uint64_t regions, nr_regions, max_regions, region_size, region_base, region_end, region_committed, region_nid;

	/* vmap nodes: an array of nr_nodes, each with a busy and a lazy tree (rb_root) and pool totals */
	uint64_t nodes, nr_nodes, node_size;
	uint64_t busy_root, busy_seq, busy_nr, busy_bytes;
	uint64_t lazy_root, lazy_seq, lazy_nr, lazy_bytes;
	uint64_t pool_nr, pool_bytes;

	/* free space, one per NUMA node: an address-ordered list of free areas (list_head) and counters */
	uint64_t spaces, nr_spaces, space_size, space_list, space_seq, space_bytes, space_count;

	/* thread caches: a list_head of live caches, their fields, and the counters folded in by exited threads */
	uint64_t pcp_live, pcp_link, pcp_pages, pcp_count, pcp_hits, pcp_misses, pcp_allocs, pcp_frees;
	uint64_t pcp_exited_allocs, pcp_exited_frees, pcp_exited_hits, pcp_exited_misses;

	/* counters (addresses of uint64_t) */
	uint64_t os_mmap, os_mprotect, os_madvise, os_mremap, os_other;
	uint64_t purges, purged_bytes, slabs;

	/* appended after version 1 shipped (readers check size): the sampling period vmtrace writes, a uint32_t */
	uint64_t trace_sample;

	/*
	 * Appended later: a slab's header, at the start of every slab area, its
	 * size (what a reader copies), its 32-bit fields used (objects out,
	 * remote frees not taken back included), carved (objects handed out at
	 * some time), room (objects in all) and objsize, and the remote word
	 * (its count above remote_shift).  No sequence counter guards it: a
	 * reader's view of a busy slab is approximate.  The header is not in
	 * the slab: it is the record of the slab's chunk in its region's chunk
	 * table, at the region's chunks word (whose offset in struct region is
	 * region_chunks) plus (start >> chunk_shift) * chunk_bytes.
	 */
	uint64_t slab_size, slab_header, slab_used, slab_carved, slab_room, slab_objsize, slab_remote, slab_remote_shift;
	uint64_t region_chunks, chunk_shift, chunk_bytes;

	/*
	 * Appended later (0: not described): a vmap_area's requested bytes (a
	 * size_t), the metadata counters (addresses of a size_t each: thread
	 * heaps made, area objects carved) and the bytes of one of each, and
	 * the offset of a region's page-map pointer.
	 */
	uint64_t va_requested, heap_nr, heap_bytes, meta_carved, meta_obj_size, region_map;

	/*
	 * Appended later (0: no heap profile): the address of the sampling
	 * rate (a size_t, which vmtrace --heap writes), of the stack table's
	 * pointer (NULL until the first sample), of its count of stacks and of
	 * its sequence counter (uint64_t each); one stack's size and the
	 * offsets of its hash (uint64_t), depth (uint32_t), estimated live
	 * bytes and count (doubles), live samples (uint64_t) and frames
	 * (prof_depth uint64_t return addresses, innermost first).
	 */
	uint64_t prof_rate, prof_stacks, prof_nr, prof_seq, prof_stack_size;
	uint64_t prof_hash, prof_depth_off, prof_bytes, prof_count, prof_samples, prof_frames, prof_depth;
	/* ...and the offset of a thread heap's countdown (a long): a reader that writes the rate zeroes it in every live heap. */
	uint64_t heap_prof_left;

	/*
	 * Appended later (0: no hands): a thread heap's hands, the freed small
	 * objects it keeps per class, still counted used in their slabs: the
	 * offsets in a heap of the pointers (hand_classes rows of hand_size),
	 * which a reader takes out of its slabs' live objects, and of
	 * hand_classes pointers to each row's first empty slot (version 5; a
	 * uint32_t count before).
	 */
	uint64_t heap_hand_top, heap_hand, hand_size, hand_classes;

	/*
	 * Appended in version 3: a thread heap's cache lists, pcp_nr_nodes
	 * nodes of pcp_node_size bytes from offset pcp_nodes in the heap, each
	 * with pcp_lists_per_node lists of pcp_list_size bytes from
	 * pcp_node_lists; a list's pops (uint64_t) are the heap's in-line hits
	 * of that bin, to add to pcp_hits (and the allocations), and its cap
	 * less its left (uint64_t each, modulo 2^64) its in-line frees, to add
	 * to pcp_frees.
	 */
	uint64_t pcp_nodes, pcp_nr_nodes, pcp_node_size, pcp_node_lists, pcp_lists_per_node, pcp_list_size;
	uint64_t pcp_list_pops, pcp_list_cap, pcp_list_spent;

	/* Appended in version 4: the smallest object size whose slabs' remote words are bitmaps (0: none). */
	uint64_t slab_map_size;

	/*
	 * Appended in version 6: the offset of a vmap_area's span end (a
	 * uint64_t).  A busy tree's entry holds [start, max(end, span end)):
	 * past its end lie areas of its thread's cache, thread-cached bytes.
	 */
	uint64_t va_span_end;

	/*
	 * Appended later (a descriptor whose size stops short has none): the
	 * addresses of the area allocations and frees counted by threads with
	 * no heap, one that only frees (a consumer of other threads' blocks)
	 * or one past its exit (uint64_t each), to add to pcp_exited_allocs
	 * and pcp_exited_frees.
	 */
	uint64_t pcp_stray_allocs, pcp_stray_frees;

	/*
	 * Appended in version 8: the live word's value of a parked area (its
	 * thread's last freed area, kept out of its bin: thread-cached); the
	 * offset in a cache list of its parks (a uint64_t: areas parked, all
	 * time, which its heap's frees count and its hits too, less one while
	 * the heap's parked area is of that list); and the offsets in a thread
	 * heap of its parked area's start (a uint64_t, 0: none) and of the
	 * address of that area's list.
	 */
	uint64_t va_live_parked, pcp_list_parks, pcp_parked, pcp_parked_list;

	/*
	 * Appended later (0: not described): the offset in a slab's header of
	 * its owner, the slab heap of the thread it belongs to (a pointer);
	 * NULL: an orphan, left by a thread that exited, until another adopts
	 * it.
	 */
	uint64_t slab_owner;

	/*
	 * Appended later (0: not described): UVM_THP plus one (never 1,
	 * huge-only 2, always 3, auto 4), and the addresses of auto's verdict
	 * (uint64_t each): the running means of a huge page's first touch and
	 * of a small page's, in nanoseconds (0: none timed yet), the huge first
	 * touches timed, the bytes of candidates given small pages, and 1
	 * while huge pages do not pay.
	 */
	uint64_t thp_mode, thp_huge_ns, thp_small_ns, thp_samples, thp_declined, thp_small;
};

#endif
