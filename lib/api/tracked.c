/*
 * tracked.c - the public entry points of a tracking build (track.h): each
 * calls the library's own function and tells the checker what became of
 * the block (track.c).  Built only with -Dtrack=valgrind or -Dtrack=asan.
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

#include "api.h"
#include "uvmalloc.h"

/* The library's own functions, of the public prototypes (track.h renames their definitions). */
#define INNER(name) extern __typeof__(uvm_##name) track_inner_##name;
INNER(malloc) INNER(malloc_caller) INNER(calloc) INNER(realloc) INNER(reallocarray) INNER(free)
INNER(malloc_usable_size) INNER(posix_memalign) INNER(aligned_alloc) INNER(memalign) INNER(vmalloc)
INNER(vzalloc) INNER(vmalloc_huge) INNER(vmalloc_aligned) INNER(vmalloc_node) INNER(vfree) INNER(vrealloc)
INNER(vsize)
#undef INNER

/* After an allocation that ran quiet: the block, if any, announced; then loud again. */
static void *made(void *p, size_t size)
{
	if (p) {
		size_t usable = uvm__live_usable(p);

		track_block_made(p, size, usable > size ? usable : size);
	}
	track_loud();
	return p;
}

static void gone(void *p)
{
	size_t usable;

	if (!p)
		return;
	track_quiet();
	usable = uvm__live_usable(p);
	track_loud();
	track_block_gone(p, usable);
}

/* Each allocation runs quiet, and made() speaks again. */
#define ALLOC(call, size) (track_quiet(), made(call, size))

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

	track_quiet();
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
	track_quiet();
	track_inner_free(p);
	track_loud();
}

void uvm_vfree(void *p)
{
	gone(p);
	track_quiet();
	track_inner_vfree(p);
	track_loud();
}

/* A measure of a block, which reads the library's side of it. */
size_t uvm_malloc_usable_size(void *p)
{
	size_t n;

	track_quiet();
	n = track_inner_malloc_usable_size(p);
	track_loud();
	return n;
}

size_t uvm_vsize(const void *p)
{
	size_t n;

	track_quiet();
	n = track_inner_vsize(p);
	track_loud();
	return n;
}

/* The move of a resize, always: a new block, the old one's bytes copied (track_copy), the old one freed. */
static void *moved(void *p, size_t size, size_t have, void *(*alloc)(size_t), void (*release)(void *))
{
	void *q = alloc(size);

	if (!q)
		return NULL;
	track_copy(q, p, have < size ? have : size, have);
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
