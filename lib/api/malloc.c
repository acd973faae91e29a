/*
 * malloc.c - the uvm_malloc family with glibc's semantics: slabs up to
 * UVM_SLAB_MAX, areas above, and the early buffer for the allocations our
 * own set-up makes before the allocator is up.
 *
 * realloc of an area grows or shrinks it in place when it can; otherwise
 * a large one's pages move with mremap (area_copy), a small one is copied.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "track.h" /* first: in a tracking build it renames the entry points defined here */

#include "api.h"
#include "area.h"
#include "heap.h"
#include "init.h"
#include "probes.h"
#include "prof.h"
#include "slab.h"
#include "trace.h"
#include "uvmalloc.h"

/* ------------------------------------------------------- early buffer */

/*
 * While the set-up runs, the libraries it calls may allocate.  Those few
 * allocations come from here: a bump buffer whose objects carry their size
 * in a 16-byte header and are never reused.  Only the set-up thread runs
 * then (others wait in pthread_once), so no lock.  The offsets handed out
 * are recorded, in increasing order, so that a pointer into the buffer that
 * is not one of them (or one freed already) is refused like any other bad
 * pointer, and is never taken for a header.
 */
#define EARLY_SIZE (256 << 10)
#define EARLY_OBJECTS 1024

static struct {
	_Alignas(16) unsigned char buf[EARLY_SIZE];
	size_t used;
	unsigned nr;
	uint32_t start[EARLY_OBJECTS]; /* offsets handed out, increasing */
	atomic_bool freed[EARLY_OBJECTS];
} early;

static bool early_owns(const void *p)
{
	return (const unsigned char *)p >= early.buf && (const unsigned char *)p < early.buf + EARLY_SIZE;
}

static void *early_alloc(size_t size, size_t align)
{
	size_t start = align_up(early.used + 16, align < 16 ? 16 : align);

	if (size > EARLY_SIZE || start + size > EARLY_SIZE || early.nr == EARLY_OBJECTS) {
		errno = ENOMEM;
		return NULL;
	}
	*(size_t *)(early.buf + start - 16) = size;
	early.used = start + size;
	early.start[early.nr++] = (uint32_t)start;
	return early.buf + start;
}

/* The index of the early object that starts at p (inside the buffer), or -1. */
static long early_find(const void *p)
{
	uint32_t off = (uint32_t)((const unsigned char *)p - early.buf);
	size_t lo = 0, hi = early.nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (early.start[mid] == off)
			return (long)mid;
		if (early.start[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The size of the live early object p, or an abort naming fn. */
static size_t early_size(const char *fn, const void *p)
{
	long i = early_find(p);

	if (i < 0 || atomic_load(&early.freed[i]))
		uvm__invalid_pointer(fn, p);
	return *(const size_t *)((const unsigned char *)p - 16);
}

/* Freeing an early object only marks it (the buffer is never reused); a second free, or a bad pointer, aborts. */
static void early_free(const char *fn, const void *p)
{
	long i = early_find(p);

	if (i < 0 || atomic_exchange(&early.freed[i], true))
		uvm__invalid_pointer(fn, p);
}

/* ------------------------------------------------------------ alloc */

/* malloc(size) aligned to align (a power of two): slabs, or an area. */
static uvm_noinline void *alloc_slow(size_t size, size_t align, int zero, const void *caller)
{
	void *p;

	if (!size)
		size = 1; /* malloc(0) is a unique pointer */
	if (unlikely(!atomic_load_explicit(&uvm_ready, memory_order_acquire))) {
		if (init_in_progress_here())
			return early_alloc(size, align); /* static memory: already zero */
		if (uvm_init())
			return fail(ENOMEM);
	}
	if (size > PTRDIFF_MAX)
		return fail(ENOMEM);
	if (slab_serves(size, align)) {
		p = slab_alloc(size, align);
		if (!p)
			return fail(ENOMEM);
		if (zero)
			memset(p, 0, size);
		return p;
	}
	return uvm__alloc(size, align < UVM_PAGE_SIZE ? UVM_PAGE_SIZE : align, zero, -1, false, caller);
}

/* One call in uvm__trace_sample, while vmtrace samples: timed and reported. */
static uvm_noinline void *alloc_sampled(size_t size, size_t align, int zero, const void *caller)
{
	uint64_t t0 = trace_now_ns();
	void *p = alloc_slow(size, align, zero, caller);

	trace_alloc(size, align, p, caller, t0, 0);
	return p;
}

/* Bytes already counted down: a set-up allocator, a small size, the default alignment, no zeroing first. */
static inline void *alloc_counted(size_t size, size_t align, int zero, const void *caller)
{
	void *p;

	if (unlikely(trace_sample_due()))
		return alloc_sampled(size, align, zero, caller);
	/* uvm_ready first: uvm__slab_max is the set-up's to write until then (another thread may be in it). */
	if (likely(atomic_load_explicit(&uvm_ready, memory_order_acquire) && size - 1 < uvm__slab_max && align <= 16 &&
		   !zero) &&
	    (p = slab_alloc(size, 16)))
		return p;
	return alloc_slow(size, align, zero, caller);
}

/* The countdown ran out: a sample is an area of its own, whatever its size (prof.h). */
static uvm_noinline void *alloc_profiled(size_t size, size_t align, int zero, const void *caller)
{
	if (!prof_take(uvm__heap, size))
		return alloc_counted(size, align, zero, caller);
	size += !size;
	return prof_record(uvm__alloc(size, align < UVM_PAGE_SIZE ? UVM_PAGE_SIZE : align, zero, -1, false, caller), size);
}

static inline void *alloc(size_t size, size_t align, int zero, const void *caller)
{
	struct heap *h = heap_when_ready();

	if (h && prof_due(h, size))
		return alloc_profiled(size, align, zero, caller);
	return alloc_counted(size, align, zero, caller);
}

/* alloc's way behind a call: an entry whose misses are all tail calls saves no register on its hit. */
static uvm_noinline void *alloc_slow_call(size_t size, size_t align, int zero, const void *caller)
{
	return alloc(size, align, zero, caller);
}
static uvm_noinline void *small_counted(size_t size, size_t align, int zero, const void *caller)
{
	return alloc_counted(size, align, zero, caller);
}

static uvm_noinline void *small_profiled(size_t size, size_t align, int zero, const void *caller)
{
	return alloc_profiled(size, align, zero, caller);
}

static uvm_noinline void *malloc_counted(size_t size, const void *caller) { return small_counted(size, 16, 0, caller); }
static uvm_noinline void *malloc_profiled(size_t size, const void *caller) { return small_profiled(size, 16, 0, caller); }

/* An area past every bin: its order list's hit, else the whole way (the countdown taken). */
static uvm_noinline void *malloc_large(struct heap *h, size_t size, const void *caller)
{
	struct vmap_area *va = area_alloc_hit_large(h, size, UVM_PAGE_SIZE, caller);

	return va ? area_handed(h, va, size) : malloc_counted(size, caller);
}

/* The owner's slab hit of class c, counted as asked bytes; NULL on a miss. */
static uvm_always_inline void *small_hit_class(struct heap *h, unsigned c, size_t asked)
{
	void *p = slab_alloc_hit_class(&h->slab, c);

	if (likely(p))
		h->pcp.requested += asked;
	return p;
}

/* The same for size bytes (1..UVM_SLAB_MAX): their class's. */
static uvm_always_inline void *small_hit(struct heap *h, size_t size, size_t asked)
{
	return small_hit_class(h, uvm__slab_class[(size - 1) >> 4], asked);
}

/*
 * calloc's and the aligned entry points' small block in line, as malloc's
 * (c: its class, size: the bytes asked, zero: cleared): the
 * profile's countdown, the hit, else alloc's way, the countdown taken.
 * Through alloc's general way (slab_alloc), calloc+free of 64 bytes took
 * 187 instructions and aligned_alloc(64, 64)+free 231, malloc+free 91.
 * The caller is read on the misses only, as malloc_in does: passed in,
 * read at entry, it held a callee-saved register over the hit
 * (aligned_alloc's three pushes and pops).
 */
static uvm_always_inline void *small_alloc(struct heap *h, unsigned c, size_t size, size_t align, int zero)
{
	void *p;

	if (prof_due(h, size))
		return small_profiled(size, align, zero, CALLER());
	if (likely(p = small_hit_class(h, c, size)))
		return zero ? memset(p, 0, size) : p;
	return small_counted(size, align, zero, CALLER());
}

/* The owner's slab hit missed: straight to another slab of the class (malloc_counted's checks all hold here). */
static uvm_noinline void *malloc_refill(struct heap *h, size_t size, const void *caller)
{
	void *p = slab_alloc_refill(&h->slab, size);

	if (unlikely(!p))
		return malloc_counted(size, caller); /* out of memory: an area, else ENOMEM */
	h->pcp.requested += size;
	return p;
}

/*
 * A size above a page that a class serves with less rounding than an area
 * (slab_fills): the class's hit, else its refill; an area when slabs are off.
 */
static uvm_noinline void *malloc_fill(struct heap *h, size_t size, const void *caller)
{
	void *p;

	if (unlikely(!uvm__slab_max))
		return malloc_counted(size, caller);
	if (likely(p = slab_map_hit(&h->slab, size))) {
		h->pcp.requested += size;
		return p;
	}
	return malloc_refill(h, size, caller);
}

/*
 * The owner's hits in line (a slab's free list, an area's bin) after the
 * profile's countdown; everything else, sampling included, a tail call away.
 * Always in line: CALLER() is then the entry point's caller, read where a
 * miss needs it (as an argument, read at entry, it took a frame and two
 * saved registers on every hit: malloc+free of 64 B 84 -> 92 instructions).
 */
static inline __attribute__((always_inline)) void *malloc_in(size_t size)
{
	struct heap *h = uvm__heap;
	struct vmap_area *va;
	void *p;

	if (likely(h && untraced_alloc())) {
		if (likely(size - 1 < uvm__slab_max)) {
			if (prof_due(h, size))
				return malloc_profiled(size, CALLER());
			if (likely(p = small_hit(h, size, size)))
				return p;
			return malloc_refill(h, size, CALLER());
		} else {
			if (prof_due(h, size))
				return malloc_profiled(size, CALLER());
			/*
			 * The parked area first, for any size of its page count: the
			 * one area just freed goes back warm even to a size a class
			 * serves (the slot holds one area, no kind's supply).  Tested
			 * after, that size's range cost every parked hit 3 instructions.
			 */
			if ((p = area_unpark(h, size, CALLER())))
				return p;
			/* Before the bins: a size a class serves better must not also take areas, or each kind's free ones wait for the other's sizes. */
			if (unlikely(slab_fills(size)))
				return malloc_fill(h, size, CALLER());
			if ((va = area_alloc_hit(h, size, CALLER())))
				return area_handed(h, va, size);
			if (area_past_bins(size))
				return malloc_large(h, size, CALLER());
		}
		return malloc_counted(size, CALLER());
	}
	return alloc_slow_call(size, 16, 0, CALLER());
}

uvm_entry void *uvm_malloc(size_t size) { return malloc_in(size); }

/*
 * operator new's hits are uvm_malloc's own, in line; only what a miss returns
 * is tested, a hit being known not NULL.  Through uvm_malloc_caller (a call
 * via the GOT, and a page or more the general way to name the caller),
 * new+delete of 64 B took 97 instructions, 93 now; of 4 KiB 259, 122 now.
 */
void *uvm__malloc_or(size_t size, void *(*failed)(size_t size, const void *caller))
{
	void *p = malloc_in(size);

	return likely(p) ? p : failed(size, CALLER());
}

/* uvm_malloc itself, called from inside the library without its PLT entry. */
extern __typeof__(uvm_malloc) malloc_here __attribute__((alias(UVM_STR(uvm_malloc)), visibility("hidden")));

/*
 * Small objects record no caller: uvm_malloc's own way; areas the general
 * way, which takes the caller given.  In line for realloc's move, which
 * called the exported entry through its PLT slot.
 */
static inline void *malloc_caller_in(size_t size, const void *caller)
{
	if (likely(size - 1 < uvm__slab_max))
		return malloc_here(size);
	return alloc_slow_call(size, 16, 0, caller);
}

void *uvm_malloc_caller(size_t size, const void *caller) { return malloc_caller_in(size, caller); }

void *uvm_calloc(size_t n, size_t size)
{
	struct heap *h = uvm__heap;
	size_t total;

	if (__builtin_mul_overflow(n, size, &total))
		return fail(ENOMEM);
	if (likely(h && untraced_alloc() && total - 1 < uvm__slab_max))
		return small_alloc(h, uvm__slab_class[(total - 1) >> 4], total, 16, 1);
	return alloc_slow_call(total, 16, 1, CALLER());
}

/* ------------------------------------------------------------- free */

/*
 * The live area that starts at p, or NULL: looked up only on a page.  A
 * slab's first object starts on a page too: its area is the slab's own,
 * which says so.
 */
static struct vmap_area *live_area(const void *p)
{
	struct vmap_area *va;

	if (!((uintptr_t)p & (UVM_PAGE_SIZE - 1)) && (va = area_find((uintptr_t)p)) && !(va->flags & VA_SLAB))
		return va;
	return NULL;
}

/*
 * The live block p (not an early one): its usable bytes into *n (0: none),
 * and its area when it is one.  The area first where there can be one: one
 * page-map lookup, where the slabs' check and then the area's took two
 * (about 30 instructions of every realloc of an area).
 */
static struct vmap_area *live_block(const void *p, size_t *n)
{
	struct vmap_area *va = live_area(p);

	if (va) {
		*n = area_usable(va);
		return va;
	}
	if (slab_check(p, n) != SLAB_LIVE)
		*n = 0; /* no live area starts at p either */
	return NULL;
}

size_t uvm__live_usable(const void *p)
{
	size_t n;

	live_block(p, &n);
	return n;
}

/* The usable size of one of our pointers, or an abort naming fn. */
static size_t usable(const char *fn, void *p)
{
	size_t n;

	if (early_owns(p))
		return early_size(fn, p);
	if (!(n = uvm__live_usable(p)))
		uvm__invalid_pointer(fn, p);
	return n;
}

static uvm_noinline void free_slow(const char *fn, void *p, enum slab_ptr what)
{
	struct vmap_area *va;

	if (what == SLAB_BAD)
		uvm__invalid_pointer(fn, p);
	va = area_take((uintptr_t)p);
	if (unlikely(!va || (va->flags & VA_SLAB)))
		uvm__invalid_pointer(fn, p);
	prof_forget(va);
	area_free(va);
}

static void free_named(const char *fn, void *p)
{
	enum slab_ptr what;

	if (!p)
		return;
	if (early_owns(p)) {
		early_free(fn, p);
		return;
	}
	if (uvm_init())
		return;
	what = slab_free(p);
	if (likely(what == SLAB_LIVE))
		return;
	free_slow(fn, p, what);
}

/* An order list's area of the owner's, or the slow way: a call of its own, so that the bin's free saves no registers. */
static uvm_noinline void free_list(void *p, struct heap *h, struct vmap_area *va)
{
	if (!area_free_own_list(h, va))
		free_named("free", p);
}

/*
 * Not the owner's small object (the caller has a heap and no snapshot is
 * traced), p in region r (NULL: in none): the owner's area, else the slow
 * way.
 */
static uvm_always_inline void free_area_in(void *p, struct heap *h, const struct region *r)
{
	struct vmap_area *va;

	switch (area_free_own_in(h, r, (uintptr_t)p, &va)) {
	case AREA_FREED:
		return;
	case AREA_LIST:
		free_list(p, h, va);
		return;
	case AREA_REPARK:
		area_repark(h, va);
		return;
	case AREA_NOT_MINE:
		break;
	}
	free_named("free", p);
}

/* The same in the first region (region_first), known to hold p: no NULL test of the region. */
static uvm_noinline void free_area_first(void *p, struct heap *h) { free_area_in(p, h, &uvm__regions[0]); }
static uvm_noinline void free_area(void *p, struct heap *h) { free_area_in(p, h, region_of((uintptr_t)p)); }

static void free_heapless(void *p);

/*
 * The owner's free of a small object in line; areas go through a call, so
 * that the small path, the commonest, needs no callee-saved register
 * (their saves and restores were 12 of its instructions).  Snapshots while
 * traced come from the slow way.
 */
uvm_entry void uvm_free(void *p)
{
	struct heap *h = uvm__heap;

	if (likely(h && untraced_snapshot())) {
		struct slab *s;

		switch (slab_free_hit(&h->slab, p, &s)) {
		case SLAB_FREED:
			return;
		case SLAB_SEND_HOME:
			slab_send_home(&h->slab, s, p);
			return;
		case SLAB_EMPTIED:
			slab_release_empty(s);
			return;
		case SLAB_MAP:
			slab_map_free(&h->slab, s, p);
			return;
		case SLAB_AREA:
			free_area_first(p, h); /* the leaf's region test holds */
			return;
		case SLAB_NOT_MINE:
			break;
		}
		free_area(p, h);
		return;
	}
	if (!h)
		free_heapless(p);
	else
		free_named("free", p);
}

/* uvm_free itself, called from inside the library without its PLT entry. */
extern __typeof__(uvm_free) free_here __attribute__((alias(UVM_STR(uvm_free)), visibility("hidden")));

/*
 * A free by a thread that has no heap yet: its heap is made here, as its
 * first allocation would make it, and the free takes the hits.  A thread
 * that only frees (a consumer of other threads' blocks, a reclaimer) took
 * the general way on every free: the page map, the slab's checks and a
 * shared counter's atomic add, 158 instructions a free in allocwork
 * prodcons, whose consumers allocate nothing.  Such a thread keeps no
 * other thread's memory: its hands stay closed until it allocates from
 * their classes (slab.c's hand_open), and its cache takes in no other
 * thread's areas before it allocates (heap_allocated).
 */
static uvm_noinline void free_heapless(void *p)
{
	struct heap *h;

	if (p && !early_owns(p) && (h = heap_when_ready())) {
		slab_hands_close(&h->slab);
		free_here(p);
	} else {
		free_named("free", p);
	}
}

size_t uvm_malloc_usable_size(void *p)
{
	size_t n = slab_live_size(p); /* 0 for NULL, and before set-up (no region) */

	if (likely(n))
		return n;
	if (!p)
		return 0;
	if (uvm_init())
		return 0;
	return usable("malloc_usable_size", p);
}

/* ---------------------------------------------------------- realloc */

/*
 * A block at most twice too big stays where it is (tcmalloc's rule: a move
 * costs an allocation, a copy and a free, and a buffer shrunk by half
 * tends to grow back).
 */
static bool keeps(size_t have, size_t size) { return size <= have && (size >= have / 2 || have == 16); }

/*
 * Whether live area va, of have usable bytes, keeps size bytes (at most
 * PTRDIFF_MAX) where it is: it resizes in place unless it would shrink to
 * less than half and to slab size (it moves into a slab then).  Set-up is
 * done: an area exists.
 */
static bool area_stays(struct vmap_area *va, size_t have, size_t size)
{
	if ((size <= uvm__slab_max && !keeps(have, size)) || area_resize(va, align_up(size, UVM_PAGE_SIZE)))
		return false;
	va->requested = size;
	return true;
}

/* Whether realloc's p, found once, keeps size bytes where it is; *have gets its usable bytes, or an abort names fn. */
static bool stays(const char *fn, void *p, size_t size, size_t *have)
{
	struct vmap_area *va;

	if (early_owns(p)) {
		*have = early_size(fn, p);
		return false;
	}
	va = live_block(p, have);
	if (!*have)
		uvm__invalid_pointer(fn, p);
	return va ? area_stays(va, *have, size) : keeps(*have, size);
}

/* Area to area, pages may move instead of being copied. */
static void copy(void *to, void *from, size_t bytes)
{
	struct vmap_area *src = bytes >= AREA_MOVE_MIN ? area_find((uintptr_t)from) : NULL;
	struct vmap_area *dst = src ? area_find((uintptr_t)to) : NULL;

	if (dst)
		area_copy(src, dst, bytes);
	else
		memcpy(to, from, bytes);
}

static void *realloc_named(const char *fn, void *p, size_t size, const void *caller)
{
	struct vmap_area *va;
	size_t have;
	void *q;

	if (!p)
		return alloc(size, 16, 0, caller);
	if (!size) {
		free_named(fn, p); /* glibc: realloc(p, 0) frees and returns NULL */
		return NULL;
	}
	/*
	 * A live small block (slab_live_size), then a live area: either stays
	 * or moves with no more checks.  An area through stays's checks and
	 * second lookup took vmbench vrealloc's loop of four reallocs 125
	 * instructions more; an area looked up first cost a small block on a
	 * page (half of a 2 KiB class's) 30 more.
	 */
	if ((have = slab_live_size(p))) {
		if (keeps(have, size))
			return p;
	} else if (size <= PTRDIFF_MAX && (va = live_area(p))) {
		if (area_stays(va, have = area_usable(va), size))
			return p;
	} else {
		if (size > PTRDIFF_MAX)
			return fail(ENOMEM);
		if (uvm_init())
			return fail(ENOMEM);
		if (stays(fn, p, size, &have))
			return p;
	}
	/* p is known live now: the move takes malloc's and free's hits. */
	q = malloc_caller_in(size, caller);
	if (!q)
		return NULL;
	copy(q, p, have < size ? have : size);
	free_here(p);
	return q;
}

void *uvm_realloc(void *p, size_t size) { return realloc_named("realloc", p, size, CALLER()); }

void *uvm_reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total))
		return fail(ENOMEM);
	return realloc_named("reallocarray", p, total, CALLER());
}

/* -------------------------------------------------------- alignment */

/*
 * size bytes aligned to align (a power of two): where a slab class serves
 * them (slab_aligned_class) in line; else alloc's way.  The class found is
 * the one popped: found again from its size, a third dependent load stood
 * between the request and the hand (aligned_alloc(64, 64)+free 5.1 ns).
 */
static uvm_always_inline void *aligned(size_t size, size_t align)
{
	struct heap *h = uvm__heap;
	unsigned c;

	if (likely(h && untraced_alloc()) && (c = slab_aligned_class(size, align)) < SLAB_CLASSES)
		return small_alloc(h, c, size, align, 0);
	return alloc_slow_call(size, align, 0, CALLER());
}

int uvm_posix_memalign(void **out, size_t align, size_t size)
{
	int saved = errno, err;
	void *p;

	if (!is_pow2(align) || align % sizeof(void *))
		return EINVAL;
	p = aligned(size, align);
	err = p ? 0 : errno;
	errno = saved; /* posix_memalign reports through its result, not errno */
	if (p)
		*out = p;
	return err;
}

void *uvm_aligned_alloc(size_t align, size_t size)
{
	if (!is_pow2(align))
		return fail(EINVAL);
	return aligned(size, align);
}

void *uvm_memalign(size_t align, size_t size)
{
	/* glibc rounds an alignment that is not a power of two up to one. */
	if (align > UVM_MAX_SIZE)
		return fail(EINVAL);
	if (!is_pow2(align))
		align = align ? (size_t)1 << fls_ul(align) : 1;
	return aligned(size, align);
}
