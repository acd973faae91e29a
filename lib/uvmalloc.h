/*
 * uvmalloc.h - the public API of libuvmalloc, a userspace allocator built on
 * the design of the Linux kernel's vmalloc.
 *
 * Every function is thread-safe and safe to call after fork().  Sizes are in
 * bytes.  Every area starts on a page boundary (4096) at least and is
 * followed by one guard page of address space, as a kernel vmap_area is.
 *
 * Errors (errno is set, as malloc does):
 *   - an impossible size (larger than the address space can hold, or zero
 *     for the allocation functions) gives NULL with errno ENOMEM / EINVAL;
 *   - an alignment that is not a power of two gives NULL with errno EINVAL;
 *   - running out of address space or memory gives NULL with errno ENOMEM.
 * Passing a pointer that is not the start of a live area (foreign, interior,
 * or already freed) to uvm_vfree, uvm_vrealloc or uvm_vsize prints
 * "uvmalloc: <function>(): invalid pointer 0x..." on stderr and aborts.
 *
 * Settings come from UVM_* environment variables, listed in README.md.
 */
#ifndef UVMALLOC_H
#define UVMALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UVMALLOC_VERSION_MAJOR 0
#define UVMALLOC_VERSION_MINOR 1

#define UVM_API __attribute__((visibility("default")))

/* size bytes of memory, page aligned, contents undefined. NULL + EINVAL for size 0. */
UVM_API void *uvm_vmalloc(size_t size);
/* As uvm_vmalloc, zero-filled (fresh pages are zero already, and faulted in at once below 2 MiB; reused ones are cleared). */
UVM_API void *uvm_vzalloc(size_t size);
/*
 * As uvm_vmalloc, backed by huge pages: an area of 2 MiB or more starts on
 * a 2 MiB boundary and its 2 MiB-aligned body gets transparent huge pages
 * (or hugetlb pages with UVM_HUGETLB=1); the tail keeps small pages, so the
 * size is not rounded up.  A smaller area is plain uvm_vmalloc (as the
 * kernel's vmalloc_huge, whose huge mappings start at 2 MiB).  With
 * UVM_THP=always every area of 2 MiB or more is huge already, and with
 * UVM_THP=auto (the default) while huge pages pay on this host; this one
 * is huge whatever auto judges.  UVM_THP=never makes this plain uvm_vmalloc.
 */
UVM_API void *uvm_vmalloc_huge(size_t size);
/*
 * As uvm_vmalloc, backed on NUMA node `node` (-1: the calling thread's node,
 * which is also what every other function uses).  A node below -1, or not
 * below the number of nodes (UVM_FAKE_NUMA counts), gives NULL + EINVAL.
 */
UVM_API void *uvm_vmalloc_node(size_t size, int node);
/* As uvm_vmalloc, with the start aligned to align (a power of two; below a page means a page). */
UVM_API void *uvm_vmalloc_aligned(size_t size, size_t align);
/*
 * Resize the area at p to size bytes, keeping its contents up to the smaller
 * size.  Grows in place when the address range after the area is free,
 * shrinks in place (the tail is freed), else moves.  p NULL: uvm_vmalloc(size).
 * size 0: frees p and returns NULL (as the kernel's vrealloc).  On failure p is
 * untouched and NULL is returned.
 */
UVM_API void *uvm_vrealloc(void *p, size_t size);
/* Free the area that starts at p.  NULL does nothing. */
UVM_API void uvm_vfree(void *p);
/*
 * Usable bytes of the area that starts at p, guard excluded: its size
 * rounded up to pages, or up to an eighth more (four pages at least) when a
 * cached area that much larger served it whole; 0 for NULL.
 */
UVM_API size_t uvm_vsize(const void *p);

/*
 * The malloc family, with glibc's semantics: objects up to UVM_SLAB_MAX
 * come from per-thread slabs, larger ones are areas of their own (page
 * aligned, as uvm_vmalloc's).  malloc(0) returns a unique pointer; a size
 * or count product too large gives NULL + ENOMEM; a bad alignment gives
 * EINVAL (returned by uvm_posix_memalign, errno for the others).
 * uvm_realloc(p, 0) frees p and returns NULL, as glibc does.  A pointer
 * that is not one of ours, or already freed, aborts with
 * "uvmalloc: free(): invalid pointer 0x..." (realloc(), malloc_usable_size() likewise).
 * Every block is at least 16-byte aligned.  libuvmalloc-preload.so makes
 * these the program's malloc, free, ... and C++ new/delete.
 */
UVM_API void *uvm_malloc(size_t size);
UVM_API void *uvm_calloc(size_t n, size_t size);
UVM_API void *uvm_realloc(void *p, size_t size);
UVM_API void *uvm_reallocarray(void *p, size_t n, size_t size);
UVM_API void uvm_free(void *p);
UVM_API int uvm_posix_memalign(void **out, size_t align, size_t size);
UVM_API void *uvm_aligned_alloc(size_t align, size_t size);
/* An alignment that is not a power of two is rounded up to one, as glibc does. */
UVM_API void *uvm_memalign(size_t align, size_t size);
/* Bytes usable in the block at p (its size class or its pages); 0 for NULL. */
UVM_API size_t uvm_malloc_usable_size(void *p);
/*
 * uvm_malloc for a wrapper (operator new, a pool's own allocation
 * function): the block is charged to caller, usually the wrapper's
 * __builtin_return_address(0), in uvm_vmallocinfo and vminfo's area lines,
 * instead of to the wrapper.  (Heap profiles record whole stacks and skip
 * no wrapper of the program's own.)
 */
UVM_API void *uvm_malloc_caller(size_t size, const void *caller);

/*
 * Purge now: every thread's cache drains (but for another running thread's
 * last freed area of up to 256 KiB, which only that thread takes out of its
 * slot: its next slow path or its exit drains it), and every lazily freed
 * and pooled area goes back to the kernel and to the free tree; the calling thread's
 * free small objects of a page and more (4.5-7, 9, 10 and 14 KiB, and 4-8
 * KiB where UVM_SLAB_MAX makes them slab objects) give their pages back
 * while their slabs live.
 */
UVM_API void uvm_purge(void);

/*
 * This process's areas in the /proc/vmallocinfo format: one line per live
 * area ("0xSTART-0xEND SIZE caller pages=N vmalloc [huge|hugetlb] N<node>=<pages>"),
 * SIZE counting the guard page, then one "unpurged vm_area" line per lazily
 * freed area.  Areas resting in thread caches are not listed.
 */
UVM_API void uvm_vmallocinfo(FILE *f);

/*
 * A snapshot of the allocator.  Byte counts are address space and include
 * each area's guard page, as /proc/vmallocinfo's sizes do.
 */
struct uvm_stats {
	uint64_t regions;        /* reserved regions */
	uint64_t reserved_bytes; /* address space reserved in all regions */
	uint64_t committed_bytes;/* part of it made readable/writable so far */
	uint64_t busy_bytes;     /* live areas (handed out, not freed) */
	uint64_t busy_count;
	uint64_t cached_bytes;   /* freed into per-thread caches (or onto their inboxes by other threads): still backed, reusable without a lock */
	uint64_t cached_count;
	uint64_t lazy_bytes;     /* freed, waiting for the next purge (may still be backed) */
	uint64_t lazy_count;
	uint64_t pooled_bytes;   /* purged into per-node pools: still backed, reusable without a syscall */
	uint64_t pooled_count;
	uint64_t free_bytes;     /* in the free tree (not backed) */
	uint64_t free_count;     /* free ranges */
	uint64_t largest_free;   /* largest free range */
	uint64_t allocs;         /* successful allocations, all time */
	uint64_t frees;
	uint64_t cache_hits;     /* allocations served from the thread's own cache */
	uint64_t cache_misses;   /* allocations that went on to the pools */
	uint64_t cache_drained;  /* areas drained from thread caches to the nodes */
	uint64_t slabs;          /* slabs (64 KiB areas of small objects), counted in busy above */
	uint64_t small_allocs;   /* malloc-family objects served by slabs, all time */
	uint64_t small_frees;
	uint64_t pool_hits;      /* allocations served from a node pool, or from its lazily freed areas before a purge */
	uint64_t pool_misses;    /* allocations that went to the free tree */
	uint64_t purges;         /* purges run */
	uint64_t purged_bytes;   /* bytes given back to the kernel by purges */
	uint64_t mmap_calls;     /* syscalls made by the library, by kind */
	uint64_t mprotect_calls;
	uint64_t madvise_calls;  /* a process_madvise (a purge's batch of ranges) counts as one */
	uint64_t mremap_calls;   /* realloc moving pages instead of copying them */
	uint64_t syscalls;       /* all of them (including prctl) */
	uint64_t area_alloc_bytes;  /* usable bytes of the areas handed out, all time (slabs' areas included) */
	uint64_t area_free_bytes;   /* and freed (an in-place realloc is not counted) */
	uint64_t small_alloc_bytes; /* bytes of the slab objects handed out (their class size), all time */
	uint64_t small_free_bytes;
};

/* Fill *st with a snapshot (each node consistent in itself). */
UVM_API void uvm_stats(struct uvm_stats *st);

/*
 * Fragmentation and overhead: where resident memory that holds no live data
 * sits, how broken up the used part of the address space is, and how full
 * the slabs of each size class are.  Every figure is counted exactly at the
 * call (the thread caches are held still for it), so it costs a walk of the
 * slabs and free ranges and one mincore() per region: a figure for people
 * and tools, not for a hot loop.
 */
#define UVM_FRAG_CLASSES 32      /* classes[]: the smallest classes, by size */
#define UVM_FRAG_CLASSES_MORE 16 /* classes_more[]: the next ones, appended since (a class's size 0: none) */
struct uvm_frag_class {
	uint64_t size;         /* object size; 0: a class this build does not have */
	uint64_t slabs;        /* slabs of the class (an orphan, a thread's, or the late heap's) */
	uint64_t live;         /* objects handed out and not freed */
	uint64_t free;         /* freed objects, taken back or waiting on a remote list: touched, so resident */
	uint64_t never_used;   /* objects never handed out: untouched, not resident */
	uint64_t occupancy[5]; /* slabs by live share of their objects: none, below 25 %, below 50 %, below 75 %, the rest */
};

struct uvm_frag {
	/* Resident memory (bytes) */
	uint64_t resident_bytes;    /* of the regions, from mincore(): what the allocator holds in RAM */
	uint64_t live_bytes;        /* usable bytes of live blocks: areas less their guard pages, objects at class size */
	uint64_t overhead_bytes;    /* resident - live (0 if negative: live blocks a program never touched) */
	uint64_t cached_bytes;      /* kinds of overhead: areas in thread caches (backed, maybe not all touched) */
	uint64_t lazy_bytes;        /* lazily freed areas before their purge */
	uint64_t pooled_bytes;      /* areas in pools */
	uint64_t slab_free_bytes;   /* freed objects in slabs (the classes' free * size) */
	uint64_t slab_meta_bytes;   /* slabs' tails too small for an object (their headers are metadata, in the regions' chunk tables) */
	uint64_t metadata_bytes;    /* thread heaps, area objects and the resident part of the page maps and chunk tables: outside the regions */
	/* The address space below each region's committed top, where holes between areas count */
	uint64_t span_bytes;        /* committed, all regions */
	uint64_t span_free_bytes;   /* free ranges (the free trees' ranges, clipped at the committed tops) */
	uint64_t span_free_count;
	uint64_t span_largest_free;
	double span_fragmentation;  /* 1 - largest / free bytes, in the committed span; 0 when nothing is free */
	/* Request rounding, all time, of the allocations whose size was asked for (malloc family and uvm_*) */
	uint64_t requested_bytes;   /* sizes asked for */
	uint64_t handed_bytes;      /* usable bytes handed out for them */
	struct uvm_frag_class classes[UVM_FRAG_CLASSES];
	/*
	 * Appended: the page rounding of live areas, usable bytes over the sizes
	 * asked for (part of live_bytes; touched, it is resident).  Slab objects'
	 * rounding is only known all time (requested_bytes): a freed object's
	 * size is not kept.
	 */
	uint64_t rounding_bytes;
	/* Appended: the whole process's resident bytes (VmRSS) and their peak so far (VmHWM), the allocator's or not */
	uint64_t process_rss_bytes, process_peak_rss_bytes;
	/* Appended: the classes past classes[]'s last (there are 41: the 4.5-16 KiB ones are here), in size order */
	struct uvm_frag_class classes_more[UVM_FRAG_CLASSES_MORE];
	/*
	 * Appended: the whole process's page faults so far (getrusage), the
	 * allocator's or not: minor ones map a page in, major ones read one
	 * from disk.  A program in its steady state should add none.
	 */
	uint64_t process_minor_faults, process_major_faults;
};

/* Class i of *f, 0 .. UVM_FRAG_CLASSES + UVM_FRAG_CLASSES_MORE - 1: classes[] first, then classes_more[]. */
static inline const struct uvm_frag_class *uvm_frag_class_at(const struct uvm_frag *f, unsigned i)
{
	return i < UVM_FRAG_CLASSES ? &f->classes[i] : &f->classes_more[i - UVM_FRAG_CLASSES];
}

/*
 * Fill the first size bytes of *f: pass sizeof(struct uvm_frag) as the
 * caller's header has it.  Fields are only ever added after the last one,
 * so a program built against an older header gets what it knows.  0, or
 * EINVAL when size does not reach past the resident figures.
 */
UVM_API int uvm_frag_stats(struct uvm_frag *f, size_t size);

/*
 * A summary of uvm_stats for people, on f.  With UVM_STATS=1 it is printed
 * on stderr at exit.
 */
UVM_API void uvm_stats_print(FILE *f);

/* The library's version, "MAJOR.MINOR.PATCH" (what the program runs on, which may be newer than it was built with). */
UVM_API const char *uvm_version(void);

/* Print every UVM_* setting: name, value in force, default, what it does. */
UVM_API void uvm_settings(FILE *f);

/*
 * A setting by its name, with or without the UVM_ prefix ("UVM_LAZY_MAX"
 * or "LAZY_MAX"): the value in force into *value; a keyword setting gives
 * its word's index (UVM_THP: never 0, huge-only 1, always 2, auto 3; UVM_STATS:
 * json 2).  0, ENOENT for no such setting, or the set-up's error.
 */
UVM_API int uvm_option_get(const char *name, long long *value);

/*
 * Change a setting while the program runs, in the units of its variable
 * (bytes, pages, counts).  These can change: UVM_LAZY_MAX (from the next
 * free that counts lazy pages), UVM_PCP_HIGH (how far thread caches may
 * grow, from their next overflow: a lower one drains them as they overflow
 * or decay, not at once), UVM_POPULATE (fresh areas from now on),
 * UVM_STATS (what exit prints) and UVM_TRACE_SAMPLE.  The rest shape the
 * address space, the caches and the slabs at set-up and stay.  0; ENOENT
 * for no such setting, EPERM for one that cannot change, EINVAL for a value
 * outside its range (uvm_settings and the README give them).
 */
UVM_API int uvm_option_set(const char *name, long long value);

#ifdef __cplusplus
}
#endif

#endif
