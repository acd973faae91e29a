/*
 * backend.c - the two back ends.  The malloc one calls the C library's
 * names, resolved at run time, so LD_PRELOAD decides whose they are.
 */
#include "backend.h"

#include <stdlib.h>

#include "uvmalloc.h"

static void *uvm_small_aligned(size_t size, size_t align) { return uvm_aligned_alloc(align, size); }

const struct backend backend_uvm = {
	.name = "uvm",
	.alloc = uvm_vmalloc,
	.alloc_huge = uvm_vmalloc_huge,
	.alloc_aligned = uvm_vmalloc_aligned,
	.realloc = uvm_vrealloc,
	.free = uvm_vfree,
	.small_aligned = uvm_small_aligned,
	.small_free = uvm_free,
};

static void *m_aligned(size_t size, size_t align)
{
	void *p = NULL;

	return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) ? NULL : p;
}

/* malloc has no huge-page call: the same request through malloc is what a program would make. */
const struct backend backend_malloc = {
	.name = "malloc",
	.alloc = malloc,
	.alloc_huge = malloc,
	.alloc_aligned = m_aligned,
	.realloc = realloc,
	.free = free,
	.small_aligned = m_aligned,
	.small_free = free,
};
