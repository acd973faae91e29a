/*
 * api.h - what the two public edges (api.c: uvm_v*, malloc.c: uvm_malloc
 * family) share: the area allocation with its argument checks and errno,
 * and the abort on a bad pointer.
 */
#ifndef UVM_API_H
#define UVM_API_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "heap.h"
#include "init.h"

/* No request can be larger than a 47-bit user address space; this also keeps every sum below from overflowing. */
#define UVM_MAX_SIZE ((size_t)1 << 47)

#define CALLER() __builtin_extract_return_addr(__builtin_return_address(0))

/*
 * An area of size bytes aligned to align (a power of two), zeroed if zero,
 * on NUMA node node (-1: the thread's).  NULL with errno EINVAL (size 0, bad
 * alignment or node) or ENOMEM.
 */
void *uvm__alloc(size_t size, size_t align, int zero, int node, bool huge, const void *caller);
/* A failed call's result: NULL with errno err.  A call: in line, its call of __errno_location cost an entry's hit a saved register. */
static __attribute__((noinline, cold, unused)) void *fail(int err)
{
	errno = err;
	return NULL;
}

/*
 * The calling thread's heap, made now if it has none once set-up is done;
 * NULL before set-up or past the thread's exit.  An allocation's (whose
 * profile countdown it charges, prof.h: the first allocation may be
 * sampled too) and a free's by a thread that has no heap yet (malloc.c's
 * free_heapless).
 */
static inline struct heap *heap_when_ready(void)
{
	struct heap *h = uvm__heap;

	return likely(h) || !atomic_load_explicit(&uvm_ready, memory_order_acquire) ? h : heap_attach();
}

/*
 * uvm_malloc for C++'s operator new (preload/override_new.c): where it would
 * return NULL, failed(size, caller) is called and returns in its place, so
 * that new calls the new_handler or throws there.
 */
void *uvm__malloc_or(size_t size, void *(*failed)(size_t size, const void *caller));

/* The usable bytes of a live block of the malloc family's or an area (not the start-up buffer's), or 0. */
size_t uvm__live_usable(const void *p);

/* "uvmalloc: fn(): invalid pointer 0x..." on stderr, then abort. */
__attribute__((noreturn, cold)) void uvm__invalid_pointer(const char *fn, const void *p);

#endif
