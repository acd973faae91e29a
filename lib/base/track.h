/*
 * track.h - telling a memory checker where the blocks are (mimalloc's
 * track.h): valgrind's memcheck or AddressSanitizer, chosen when the
 * library is built (meson -Dtrack=valgrind or -Dtrack=asan; none, the
 * default, compiles every hook to nothing).
 *
 * A checker sees the blocks of a program's own malloc; ours it sees as one
 * mapping, unless each allocation and free is announced.  So in a tracking
 * build every entry point of uvmalloc.h that hands out, frees or measures a
 * block is a wrapper (tracked.c) around the library's own function, which
 * this header renames for the two files that define them (api.c,
 * malloc.c).  The fast paths themselves are unchanged: a tracking build is
 * a build for finding bugs, not for speed.
 *
 * What the checker then sees of a block: the bytes asked for are
 * addressable; its rounding slack, a freed block and a slab's never-used
 * objects are not.  The library's own reads and writes of freed memory
 * (slab free-list links) are its business: memcheck does not report them
 * (the wrappers run the library with error reporting off), and under ASan
 * the library is not instrumented.  memcheck's leak check sees no pointer
 * of ours to a live block: our metadata is invisible to its scan.
 */
#ifndef UVM_TRACK_H
#define UVM_TRACK_H

#include <stddef.h>

#if defined(UVM_TRACK_VALGRIND) || defined(UVM_TRACK_ASAN)
#define UVM_TRACK 1
#else
#define UVM_TRACK 0
#endif

#if UVM_TRACK && !defined(UVM_TRACK_WRAPPERS)
/* The library's own entry points; tracked.c defines the public names. */
#define uvm_malloc track_inner_malloc
#define uvm_malloc_caller track_inner_malloc_caller
#define uvm_calloc track_inner_calloc
#define uvm_realloc track_inner_realloc
#define uvm_reallocarray track_inner_reallocarray
#define uvm_free track_inner_free
#define uvm_malloc_usable_size track_inner_malloc_usable_size
#define uvm_posix_memalign track_inner_posix_memalign
#define uvm_aligned_alloc track_inner_aligned_alloc
#define uvm_memalign track_inner_memalign
#define uvm_vmalloc track_inner_vmalloc
#define uvm_vzalloc track_inner_vzalloc
#define uvm_vmalloc_huge track_inner_vmalloc_huge
#define uvm_vmalloc_aligned track_inner_vmalloc_aligned
#define uvm_vmalloc_node track_inner_vmalloc_node
#define uvm_vfree track_inner_vfree
#define uvm_vrealloc track_inner_vrealloc
#define uvm_vsize track_inner_vsize
#endif

#if UVM_TRACK
/* Memory the library carved for blocks that none has used yet (a new slab's objects): not addressable. */
void track_unused(void *p, size_t size);
/* A mapping of metadata (area objects, heaps, page maps): out of memcheck's sight, leak scan included. */
void track_meta(void *p, size_t size);
void track_meta_gone(void *p, size_t size);
/* Around library code that touches freed blocks and our metadata: memcheck reports none of it (tracked.c, a thread's exit). */
void track_quiet(void);
void track_loud(void);
/* A block handed out (size bytes asked for, usable bytes in all), freed, and one's bytes copied into another. */
void track_block_made(void *p, size_t size, size_t usable);
void track_block_gone(void *p, size_t usable);
void track_copy(void *to, void *from, size_t bytes, size_t have);
#else
static inline void track_unused(void *p, size_t size) { (void)p, (void)size; }
static inline void track_meta(void *p, size_t size) { (void)p, (void)size; }
static inline void track_meta_gone(void *p, size_t size) { (void)p, (void)size; }
static inline void track_quiet(void) {}
static inline void track_loud(void) {}
#endif

#endif
