/*
 * descriptor.c - the exported uvm_descriptor (see descriptor.h): filled
 * once, at the end of set-up, and never written again.
 */
#include "descriptor.h"

#include <stddef.h>
#include <stdatomic.h>
#include <string.h>

#include "arena.h"
#include "heap.h"
#include "huge.h"
#include "meta.h"
#include "os.h"
#include "pcp.h"
#include "prof.h"
#include "purge.h"
#include "slab.h"
#include "trace.h"
#include "uvmalloc.h"
#include "vmap.h"
#include "vnode.h"

UVM_API struct uvm_descriptor uvm_descriptor = { .magic = UVM_DESCRIPTOR_MAGIC };

void descriptor_init(void)
{
	struct uvm_descriptor *d = &uvm_descriptor;

	d->version = UVM_DESCRIPTOR_VERSION;
	d->size = sizeof(*d);
	d->page_size = UVM_PAGE_SIZE;
	d->va_size = sizeof(struct vmap_area);
	d->va_start = offsetof(struct vmap_area, va_start);
	d->va_end = offsetof(struct vmap_area, va_end);
	d->va_rb = offsetof(struct vmap_area, rb); /* tree links point at the rb member */
	d->va_left = offsetof(struct vmap_area, rb.left);
	d->va_right = offsetof(struct vmap_area, rb.right);
	d->va_caller = offsetof(struct vmap_area, caller);
	d->va_flags = offsetof(struct vmap_area, flags);
	d->va_live = offsetof(struct vmap_area, live);
	d->va_list = offsetof(struct vmap_area, list);
	d->va_requested = offsetof(struct vmap_area, requested);
	d->va_span_end = offsetof(struct vmap_area, span_end);
	d->va_flag_huge = VA_HUGE;
	d->va_flag_hugetlb = VA_HUGETLB;
	d->va_flag_slab = VA_SLAB;
	d->va_nid_shift = VA_NID_SHIFT;
	vn_describe(d);
	arena_describe(d);
	pcp_describe(d);
	os_describe(d);
	purge_describe(d);
	slab_describe(d);
	meta_describe(d);
	prof_describe(d);
	huge_describe(d);
	d->trace_sample = (uintptr_t)&uvm__trace_sample;
	__atomic_store_n(&d->ready, 1, __ATOMIC_RELEASE);
}
