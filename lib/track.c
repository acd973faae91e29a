/*
 * track.c - the public entry points of a tracking build (track.h): each
 * calls the library's own function and tells the checker what became of
 * the block.  Built only with -Dtrack=valgrind or -Dtrack=asan.
 *
 * realloc and calloc are an allocation, a copy or a clear, and a free
 * here: the library's own copy (pages moved with mremap, or copied into a
 * block the checker still holds freed) and its clear (skipped for fresh
 * pages, or made into freed memory) would leave the checker with the
 * wrong idea of which bytes are defined or addressable.
 */
#define UVM_TRACK_WRAPPERS
#include "track.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "area.h"
#include "slab.h"
#include "uvmalloc.h"

/* The library's own functions, of the public prototypes (track.h renames their definitions). */
#define INNER(name) extern __typeof__(uvm_##name) track_inner_##name;
INNER(malloc) INNER(malloc_caller) INNER(calloc) INNER(realloc) INNER(reallocarray) INNER(free)
INNER(malloc_usable_size) INNER(posix_memalign) INNER(aligned_alloc) INNER(memalign) INNER(vmalloc)
INNER(vzalloc) INNER(vmalloc_huge) INNER(vmalloc_aligned) INNER(vmalloc_node) INNER(vfree) INNER(vrealloc)
INNER(vsize)
#undef INNER

#ifdef UVM_TRACK_VALGRIND
#include <valgrind/memcheck.h>

/* The library's own accesses to freed blocks and to its hidden metadata are not the program's errors. */
static void quiet(void) { VALGRIND_DISABLE_ERROR_REPORTING; }
static void loud(void) { VALGRIND_ENABLE_ERROR_REPORTING; }
static void hide(void *p, size_t n) { VALGRIND_MAKE_MEM_NOACCESS(p, n); }
static void show(void *p, size_t n) { VALGRIND_MAKE_MEM_DEFINED(p, n); }

static void block_made(void *p, size_t size, size_t usable)
{
	hide(p, usable); /* the slack past size stays so */
	VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 0);
}

static void block_gone(void *p, size_t usable)
{
	(void)usable;
	VALGRIND_FREELIKE_BLOCK(p, 0);
}

/* A block's bytes into another: their definedness goes with them, and the old one's slack reads unreported. */
static void copy_out(void *to, void *from, size_t bytes, size_t have)
{
	(void)have;
	quiet();
	memcpy(to, from, bytes);
	loud();
}

/*
 * Metadata is not addressable to memcheck, so its leak scan does not find
 * our area objects' pointers to live blocks (every large block leaked would
 * read as still reachable); our own accesses to it are not reported.
 */
void track_meta(void *p, size_t size)
{
	VALGRIND_MAKE_MEM_NOACCESS(p, size);
	VALGRIND_DISABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, size);
}

void track_meta_gone(void *p, size_t size) { VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, size); }

/*
 * Last of the library's destructors (the lowest priority runs last): the
 * metadata lives to the end, and memcheck warns at exit of every range
 * still excused.  Its accesses from here on (glibc's __libc_freeres at
 * exit frees through us) run inside the entry points' quiet spells.
 */
__attribute__((destructor(101))) static void meta_excused_no_more(void)
{
	VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(0, (uintptr_t)1 << 47);
}

#else /* UVM_TRACK_ASAN */

/*
 * Weak: the sanitizer's runtime comes with the program (-fsanitize=address);
 * a program without it runs the library untracked.  The library itself is
 * not instrumented, so its own accesses to poisoned memory are not checked.
 */
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));

static void quiet(void) {}
static void loud(void) {}

static void hide(void *p, size_t n)
{
	if (__asan_poison_memory_region)
		__asan_poison_memory_region(p, n);
}

static void show(void *p, size_t n)
{
	if (__asan_unpoison_memory_region)
		__asan_unpoison_memory_region(p, n);
}

static void block_made(void *p, size_t size, size_t usable)
{
	hide(p, usable);
	show(p, size);
}

static void block_gone(void *p, size_t usable) { hide(p, usable); }

/* The old block made addressable whole first: the copy runs through the sanitizer's memcpy. */
static void copy_out(void *to, void *from, size_t bytes, size_t have)
{
	show(from, have);
	memcpy(to, from, bytes);
}

void track_meta(void *p, size_t size) { (void)p, (void)size; }
void track_meta_gone(void *p, size_t size) { (void)p, (void)size; }

#endif

void track_unused(void *p, size_t size) { hide(p, size); }
void track_own(void *p, size_t size) { show(p, size); }
void track_inside(void) { quiet(); }
void track_outside(void) { loud(); }

/* The usable bytes of a live block of ours, or 0 (not ours, or not live: the library's free says why). */
static size_t usable_of(const void *p)
{
	struct vmap_area *va;
	size_t n;

	switch (slab_check(p, &n)) {
	case SLAB_LIVE:
		return n;
	case SLAB_BAD:
		return 0;
	case SLAB_NONE:
		break;
	}
	va = area_find((uintptr_t)p);
	return va && !(va->flags & VA_SLAB) ? area_usable(va) : 0;
}

/* After an allocation that ran quiet: the block, if any, announced; then loud again. */
static void *made(void *p, size_t size)
{
	if (p) {
		size_t usable = usable_of(p);

		block_made(p, size, usable > size ? usable : size);
	}
	loud();
	return p;
}

static void gone(void *p)
{
	size_t usable;

	if (!p)
		return;
	quiet();
	usable = usable_of(p);
	loud();
	block_gone(p, usable);
}

/* Each allocation runs quiet, and made() speaks again. */
#define ALLOC(call, size) (quiet(), made(call, size))

void *uvm_malloc(size_t size) { return ALLOC(track_inner_malloc_caller(size, __builtin_return_address(0)), size); }
void *uvm_malloc_caller(size_t size, const void *caller) { return ALLOC(track_inner_malloc_caller(size, caller), size); }
void *uvm_aligned_alloc(size_t align, size_t size) { return ALLOC(track_inner_aligned_alloc(align, size), size); }
void *uvm_memalign(size_t align, size_t size) { return ALLOC(track_inner_memalign(align, size), size); }
void *uvm_vmalloc(size_t size) { return ALLOC(track_inner_vmalloc(size), size); }
void *uvm_vmalloc_huge(size_t size) { return ALLOC(track_inner_vmalloc_huge(size), size); }
void *uvm_vmalloc_aligned(size_t size, size_t align) { return ALLOC(track_inner_vmalloc_aligned(size, align), size); }
void *uvm_vmalloc_node(size_t size, int node) { return ALLOC(track_inner_vmalloc_node(size, node), size); }

int uvm_posix_memalign(void **out, size_t align, size_t size)
{
	void *p = NULL;
	int err;

	quiet();
	err = track_inner_posix_memalign(&p, align, size);
	made(p, size);
	if (!err)
		*out = p;
	return err;
}

/* Cleared by the program's side, so the checker sees every byte defined. */
static void *cleared(void *p, size_t size)
{
	if (p)
		memset(p, 0, size);
	return p;
}

void *uvm_calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return cleared(uvm_malloc(total), total);
}

void *uvm_vzalloc(size_t size) { return cleared(uvm_vmalloc(size), size); }

void uvm_free(void *p)
{
	gone(p);
	quiet();
	track_inner_free(p);
	loud();
}

void uvm_vfree(void *p)
{
	gone(p);
	quiet();
	track_inner_vfree(p);
	loud();
}

/* A measure of a block, which reads the library's side of it. */
size_t uvm_malloc_usable_size(void *p)
{
	size_t n;

	quiet();
	n = track_inner_malloc_usable_size(p);
	loud();
	return n;
}

size_t uvm_vsize(const void *p)
{
	size_t n;

	quiet();
	n = track_inner_vsize(p);
	loud();
	return n;
}

/* The move of a resize, always: a new block, the old one's bytes copied (copy_out), the old one freed. */
static void *moved(void *p, size_t size, size_t have, void *(*alloc)(size_t), void (*release)(void *))
{
	void *q = alloc(size);

	if (!q)
		return NULL;
	copy_out(q, p, have < size ? have : size, have);
	release(p);
	return q;
}

void *uvm_realloc(void *p, size_t size)
{
	if (!p)
		return uvm_malloc(size);
	if (!size) {
		uvm_free(p); /* glibc: realloc(p, 0) frees and returns NULL */
		return NULL;
	}
	return moved(p, size, uvm_malloc_usable_size(p), uvm_malloc, uvm_free);
}

void *uvm_reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return uvm_realloc(p, total);
}

void *uvm_vrealloc(void *p, size_t size)
{
	if (!p)
		return uvm_vmalloc(size);
	if (!size) {
		uvm_vfree(p);
		return NULL;
	}
	return moved(p, size, uvm_vsize(p), uvm_vmalloc, uvm_vfree);
}
