/*
 * backend.h - what vmbench allocates with: the uvm_* API, or plain malloc
 * & co. (--api=malloc), so the identical work runs on any allocator put
 * under the program with LD_PRELOAD.
 */
#ifndef VMBENCH_BACKEND_H
#define VMBENCH_BACKEND_H

#include <stddef.h>

struct backend {
	const char *name;
	void *(*alloc)(size_t size);                  /* vmalloc */
	void *(*alloc_huge)(size_t size);             /* vmalloc_huge */
	void *(*alloc_aligned)(size_t size, size_t align); /* __vmalloc_node with an alignment */
	void *(*realloc)(void *p, size_t size);       /* vrealloc */
	void (*free)(void *p);                        /* vfree */
	void *(*small_aligned)(size_t size, size_t align); /* the pcpu_alloc analogue: small objects */
	void (*small_free)(void *p);
};

extern const struct backend backend_uvm, backend_malloc;

#endif
