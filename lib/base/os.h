/*
 * os.h - every mmap/mprotect/madvise/mbind/prctl call of lib/ goes through here:
 * our "buddy allocator".  Each call is counted, so stats and tests can prove a
 * path made none.  Functions return 0 or an errno value.
 */
#ifndef UVM_OS_H
#define UVM_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uvmalloc.h"

/* Reserve size bytes of address space: PROT_NONE, MAP_NORESERVE, named "uvmalloc" where the kernel can. */
int os_reserve(size_t size, uintptr_t *base);
/* Give a reservation back to the kernel whole (munmap): its pages and its address space. */
void os_unreserve(uintptr_t base, size_t size);
/* Make [addr, addr + size) of a reservation readable and writable (no page is touched). */
int os_commit(uintptr_t addr, size_t size);
/* Bytes of [addr, addr + size) (page aligned) that are resident now (mincore; no syscall counted: stats only). */
size_t os_resident(uintptr_t addr, size_t size);
/*
 * The whole process's resident bytes now and at their peak (VmRSS and
 * VmHWM of /proc/self/status: unlike ru_maxrss, not the forking parent's
 * mark carried across exec); 0 when unreadable.  No allocation.
 */
void os_process_rss(uint64_t *rss, uint64_t *peak);
/* The process's minor and major page faults so far (getrusage). */
void os_process_faults(uint64_t *minor, uint64_t *major);
/* Plain read/write anonymous memory for lib/'s own metadata, backed as it is touched. */
void *os_alloc_meta(size_t size);
/*
 * The same, for metadata its caller writes whole at once (a thread heap):
 * backed by the same system call (MAP_POPULATE), where each page's first
 * touch would be a fault of its own.
 */
void *os_alloc_meta_backed(size_t size);

/* Unmap metadata memory (the page map of a region that could not be reserved, or was given back). */
void os_free_meta(void *p, size_t size);
/* MADV_HUGEPAGE (huge) or MADV_NOHUGEPAGE over a range: the VMA flag THP faults obey. */
int os_hugepage(uintptr_t addr, size_t size, int huge);
/* Fault [addr, addr + size) in with one MADV_POPULATE_WRITE (Linux 5.14+). */
int os_populate(uintptr_t addr, size_t size);
/*
 * Replace [addr, addr + size) (2 MiB aligned) by pages of the hugetlb pool.
 * ENOMEM when the pool cannot give them; the range then holds plain pages again.
 */
int os_remap_hugetlb(uintptr_t addr, size_t size);
struct iovec;
/*
 * Give the pages of the ranges r[0..n) back (they read as zeroes
 * afterwards), and their guard markers (os_guard_remove): one
 * process_madvise per IOV_MAX ranges (a whole purge in one system call, as
 * the kernel's purge flushes the TLB once for all its merged ranges), or
 * one madvise each where that call is refused (before Linux 6.14) or a
 * seccomp filter is installed (a prctl per batch asks, counted as the
 * calls are).  Returns the madvise calls made (process_madvise counts as
 * one).
 */
size_t os_release_ranges(const struct iovec *r, size_t n);
/* The message (printf's format) on stderr with no allocation, then abort(): the bad pointers' and corruptions' end. */
__attribute__((noreturn, cold, format(printf, 1, 2))) void os_abort(const char *fmt, ...);
/* The pages of the ranges r[0..n) back, as os_release_ranges, where no guard marker can be (inside a slab); the calls made. */
size_t os_discard_ranges(const struct iovec *r, size_t n);
/* MADV_NOHUGEPAGE over the ranges r[0..n), batched as os_release_ranges batches; the calls made. */
size_t os_nohugepage_ranges(const struct iovec *r, size_t n);
/*
 * Fresh empty anonymous pages over [addr, addr + size) (mmap MAP_FIXED),
 * without the MADV_NOHUGEPAGE that makes the range merge with its region
 * again: for a caller that batches those (os_nohugepage_ranges).
 */
int os_map_fresh(uintptr_t addr, size_t size);
/* Give a hugetlb range back: plain, empty, MADV_NOHUGEPAGE pages as around it. */
int os_remap_plain(uintptr_t addr, size_t size);
/*
 * Move the pages of [from, from + size) to [to, to + size) (mremap, no copy),
 * replacing what was there; from is left as plain empty pages.  0 or an
 * errno, nothing moved (ENOMEM when vm.max_map_count is reached: the caller
 * copies instead).
 */
int os_move(uintptr_t from, uintptr_t to, size_t size);
/* Prefer NUMA node `node` for the pages of [addr, addr + size) (mbind, MPOL_PREFERRED). */
void os_bind(uintptr_t addr, size_t size, unsigned node);

/* Turn real guard pages on or off (UVM_GUARD); off, the guard calls below do nothing. */
void os_init(int guard_pages);
/* Whether guard pages are real (UVM_GUARD, and the kernel took the first marker). */
bool os_guards(void);
/*
 * Guard pages (MADV_GUARD_INSTALL, Linux 6.13+): an access faults.  Where the
 * kernel lacks it, os_guard_install says so once on stderr, returns ENOSYS
 * and turns guard pages off for good.
 */
int os_guard_install(uintptr_t addr, size_t size);
int os_guard_remove(uintptr_t addr, size_t size);

/* Add the call counters into st (the os_* fields). */
void os_stats(struct uvm_stats *st);
/* Every syscall lib/ made so far: the number a fast path must leave unchanged. */
uint64_t os_syscalls(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void os_describe(struct uvm_descriptor *d);

#endif
