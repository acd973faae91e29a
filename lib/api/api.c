/*
 * api.c - the public edges: argument checks, errno, abort messages, zeroing
 * and vrealloc.  Everything below returns error codes; only this file turns
 * them into NULL/errno or an abort.
 */
#include <errno.h>
#include <stdlib.h>

#include "track.h" /* first: in a tracking build it renames the entry points defined here */

#include "api.h"
#include "area.h"
#include "huge.h"
#include "init.h"
#include "numa_node.h"
#include "os.h"
#include "pcp.h"
#include "probes.h"
#include "prof.h"
#include "slab.h"
#include "trace.h"
#include "uvmalloc.h"

/* No request can be larger than a 47-bit user address space; this also keeps every sum below from overflowing. */

__attribute__((noreturn, cold)) void uvm__invalid_pointer(const char *fn, const void *p)
{
	os_abort("uvmalloc: %s(): invalid pointer %p\n", fn, p);
}

/* Every allocation of an area funnels here, malloc's large ones too. */
void *uvm__alloc(size_t size, size_t align, int zero, int node, bool huge, const void *caller)
{
	struct vmap_area *va;
	int err;

	if (unlikely(!size))
		return fail(EINVAL);
	if (unlikely(!is_pow2(align)))
		return fail(EINVAL);
	if (unlikely(size > UVM_MAX_SIZE || align > UVM_MAX_SIZE))
		return fail(ENOMEM);
	if (unlikely((err = uvm_init())))
		return fail(err);
	if (align < UVM_PAGE_SIZE)
		align = UVM_PAGE_SIZE;
	if (unlikely(node >= 0 && (unsigned)node >= uvm__numa_nodes))
		return fail(EINVAL);
	va = area_alloc(align_up(size, UVM_PAGE_SIZE), align, node, huge, caller, &err);
	if (unlikely(!va))
		return fail(err);
	va->requested = size;
	pcp_count_request(uvm__heap, size);
	if (zero)
		area_zero(va);
	return (void *)va->va_start;
}

/* The uvm_v* entry points: uvm__alloc, but one call in uvm__trace_sample is timed and reported while vmtrace samples. */
static uvm_noinline void *alloc_sampled(size_t size, size_t align, int zero, int node, bool huge, const void *caller)
{
	uint64_t t0 = trace_now_ns();
	void *p = uvm__alloc(size, align, zero, node, huge, caller);

	trace_alloc(size, align, p, caller, t0, 1);
	return p;
}

/* uvm__alloc, timed and reported when this call is vmtrace's sample. */
static inline void *alloc_counted(size_t size, size_t align, int zero, int node, bool huge, const void *caller)
{
	if (unlikely(trace_sample_due()))
		return alloc_sampled(size, align, zero, node, huge, caller);
	return uvm__alloc(size, align, zero, node, huge, caller);
}

/*
 * The profile's countdown ran out (prof.h).  Not a sample (profiling off:
 * the countdown runs out every PROF_RECHECK bytes all the same, and a
 * thread's first call finds it out), the call is still vmtrace's to
 * count: it went untimed, one sample lost per heap and per 64 MiB.
 */
static uvm_noinline void *alloc_profiled(size_t size, size_t align, int zero, int node, bool huge, const void *caller)
{
	if (!prof_take(uvm__heap, size))
		return alloc_counted(size, align, zero, node, huge, caller);
	return prof_record(uvm__alloc(size, align, zero, node, huge, caller), size);
}

static inline void *api_alloc(size_t size, size_t align, int zero, int node, bool huge, const void *caller)
{
	struct heap *h = heap_when_ready();

	if (h && prof_due(h, size))
		return alloc_profiled(size, align, zero, node, huge, caller);
	return alloc_counted(size, align, zero, node, huge, caller);
}

static uvm_noinline void *vmalloc_slow(size_t size, bool huge, const void *caller)
{
	return api_alloc(size, UVM_PAGE_SIZE, 0, -1, huge, caller);
}

/* The bin missed, or the area is past every bin: its order list's hit, then the whole way (the countdown taken). */
static uvm_noinline void *vmalloc_counted(size_t size, bool huge, const void *caller)
{
	struct heap *h = uvm__heap;
	struct vmap_area *va;

	if (area_past_bins(size) && (va = area_alloc_hit_large(h, size, huge ? uvm__huge_api_align : UVM_PAGE_SIZE, caller)))
		return area_handed(h, va, size);
	return uvm__alloc(size, UVM_PAGE_SIZE, 0, -1, huge, caller);
}

static uvm_noinline void *vmalloc_profiled(size_t size, bool huge, const void *caller)
{
	return alloc_profiled(size, UVM_PAGE_SIZE, 0, -1, huge, caller);
}

/*
 * The profile's countdown and the hit in line, everything else (and
 * sampling, while vmtrace samples) a tail call away.  Always inline: with a
 * third call in uvm_vmalloc_huge the compiler stopped inlining it into
 * uvm_vmalloc, whose pair took 108 instructions instead of 99.
 */
static uvm_always_inline void *vmalloc_fast(size_t size, size_t align, bool huge, const void *caller)
{
	struct heap *h = uvm__heap;
	struct vmap_area *va;
	void *p;

	if (likely(h && untraced_alloc())) {
		if (prof_due(h, size))
			return vmalloc_profiled(size, huge, caller);
		/* A parked area is of a page-aligned size: a huge one (align above a page) is larger than any. */
		if ((p = area_unpark(h, size, caller)))
			return p;
		if (likely(va = area_alloc_hit_aligned(h, size, align, caller)))
			return area_handed(h, va, size);
		return vmalloc_counted(size, huge, caller);
	}
	return vmalloc_slow(size, huge, caller);
}

uvm_entry void *uvm_vmalloc(size_t size) { return vmalloc_fast(size, UVM_PAGE_SIZE, false, CALLER()); }
void *uvm_vzalloc(size_t size) { return api_alloc(size, UVM_PAGE_SIZE, 1, -1, false, CALLER()); }
/*
 * As the kernel's vmalloc_huge, whose huge mappings start at PMD_SIZE: an
 * area whose usable pages stay under 2 MiB holds no 2 MiB-aligned body, so
 * it is uvm_vmalloc's.  (Aligning it to 2 MiB anyway cost 2 MiB of address
 * space an area and the hit an alignment test: fix_size h:1 p:64 took 1.16x
 * the cycles of h:0, for no huge page.)  A larger one starts on a 2 MiB
 * boundary: the hit takes its list's hottest if it is so aligned.
 */
void *uvm_vmalloc_huge(size_t size)
{
	if (size - 1 < HUGE_SIZE - UVM_PAGE_SIZE)
		return vmalloc_fast(size, UVM_PAGE_SIZE, false, CALLER());
	return vmalloc_fast(size, uvm__huge_api_align, true, CALLER());
}
void *uvm_vmalloc_aligned(size_t size, size_t align) { return api_alloc(size, align, 0, -1, false, CALLER()); }

void *uvm_vmalloc_node(size_t size, int node)
{
	if (node < -1)
		return fail(EINVAL);
	return api_alloc(size, UVM_PAGE_SIZE, 0, node, false, CALLER());
}

/* The live area that starts at p, or an abort naming fn: only uvm_* pointers come here. */
static struct vmap_area *busy_area(const char *fn, const void *p, int take)
{
	struct vmap_area *va = NULL;

	if (!uvm_init())
		va = take ? area_take((uintptr_t)p) : area_find((uintptr_t)p);
	/* A slab is an area of ours, not of the caller's. */
	if (unlikely(!va || (va->flags & VA_SLAB)))
		uvm__invalid_pointer(fn, p);
	return va;
}

static uvm_noinline void vfree_slow(void *p)
{
	struct vmap_area *va;

	if (p) {
		va = busy_area("uvm_vfree", p, 1);
		prof_forget(va);
		area_free(va);
	}
}

/* An order list's area of the owner's, or the slow way. */
static uvm_noinline void vfree_list(void *p, struct vmap_area *va)
{
	if (!area_free_own_list(uvm__heap, va))
		vfree_slow(p);
}

/* The free of p, in region r (NULL: none): the owner's bin in line, an order list's or anything else a call away. */
static uvm_always_inline void vfree_in(void *p, const struct region *r)
{
	struct vmap_area *va;

	switch (area_free_own_in(uvm__heap, r, (uintptr_t)p, &va)) {
	case AREA_FREED:
		return;
	case AREA_LIST:
		vfree_list(p, va);
		return;
	case AREA_REPARK:
		area_repark(uvm__heap, va);
		return;
	case AREA_NOT_MINE:
		break;
	}
	vfree_slow(p);
}

/* p past the first region (or NULL): its region found by the walk. */
static uvm_noinline void vfree_far(void *p) { vfree_in(p, region_of((uintptr_t)p)); }

uvm_entry void uvm_vfree(void *p)
{
	if (likely(region_first((uintptr_t)p)))
		vfree_in(p, &uvm__regions[0]);
	else
		vfree_far(p);
}

/* uvm_vfree itself, called from inside the library without its PLT entry. */
extern __typeof__(uvm_vfree) vfree_here __attribute__((alias(UVM_STR(uvm_vfree)), visibility("hidden")));

size_t uvm_vsize(const void *p)
{
	return p ? area_usable(busy_area("uvm_vsize", p, 0)) : 0;
}

void *uvm_vrealloc(void *p, size_t size)
{
	struct vmap_area *va;
	size_t usable;
	void *q;

	if (!p)
		return api_alloc(size, UVM_PAGE_SIZE, 0, -1, false, CALLER());
	va = busy_area("uvm_vrealloc", p, 0);
	if (!size) {
		vfree_here(p);
		return NULL;
	}
	if (size > UVM_MAX_SIZE)
		return fail(ENOMEM);
	usable = align_up(size, UVM_PAGE_SIZE);
	if (!area_resize(va, usable)) {
		va->requested = size;
		return p;
	}
	q = api_alloc(size, UVM_PAGE_SIZE, 0, (int)va_nid(va), false, va->caller);
	if (!q)
		return NULL;
	area_copy(va, area_find((uintptr_t)q), area_usable(va) < usable ? area_usable(va) : usable);
	vfree_here(p);
	return q;
}

void uvm_purge(void)
{
	if (uvm_init())
		return;
	slab_trim();
	area_reclaim_and_purge();
}
