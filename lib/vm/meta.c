/*
 * meta.c - the vmap_area object pool.  It sits under the free tree's slow
 * path only: an area reused from a pool brings its own object back.
 */
#include "meta.h"

#include <stdint.h>

#include "lock.h"
#include "os.h"
#include "uvmalloc-descriptor.h"

#define META_CHUNK (256 * 1024)
/*
 * One object per 128 bytes: two cache lines, the unit the adjacent-line
 * prefetcher moves.  Areas of different threads are written on every
 * cache hit (list links, caller, live flag); packed at 72 bytes, neighbours
 * shared lines and a 1-page alloc/free loop ran 4x slower per thread at 2
 * threads than at 1 on a 16-core machine, against flat scaling padded.
 */
#define META_OBJ_SIZE 128
_Static_assert(sizeof(struct vmap_area) <= META_OBJ_SIZE, "vmap_area outgrew its slot");

static struct {
	uvm_lock_t lock;
	struct vmap_area *free; /* singly linked through va_start */
	char *bump, *end;
	size_t live, carved;
} meta = { .lock = UVM_LOCK_INIT };

static struct vmap_area *carve(void)
{
	struct vmap_area *va;

	if (meta.bump == meta.end) {
		char *chunk = os_alloc_meta(META_CHUNK);

		if (!chunk)
			return NULL;
		meta.bump = chunk;
		meta.end = chunk + META_CHUNK / META_OBJ_SIZE * META_OBJ_SIZE;
	}
	va = (struct vmap_area *)meta.bump;
	meta.bump += META_OBJ_SIZE;
	meta.carved++;
	return va;
}

struct vmap_area *meta_va_alloc(void)
{
	struct vmap_area *va;

	uvm_lock(&meta.lock);
	va = meta.free;
	if (va)
		meta.free = (struct vmap_area *)va->va_start;
	else
		va = carve();
	if (va)
		meta.live++;
	uvm_unlock(&meta.lock);
	return va;
}

static void push_free(struct vmap_area *va)
{
	va->va_start = (uintptr_t)meta.free;
	meta.free = va;
	meta.live--;
}

void meta_va_free(struct vmap_area *va)
{
	uvm_lock(&meta.lock);
	push_free(va);
	uvm_unlock(&meta.lock);
}

void meta_va_free_list(struct list_head *head)
{
	struct vmap_area *va, *n;

	if (list_empty(head))
		return;
	uvm_lock(&meta.lock);
	list_for_each_entry_safe(va, n, head, list)
		push_free(va);
	uvm_unlock(&meta.lock);
	list_init(head);
}

size_t meta_va_live(void)
{
	size_t n;

	uvm_lock(&meta.lock);
	n = meta.live;
	uvm_unlock(&meta.lock);
	return n;
}

size_t meta_bytes(void)
{
	size_t n;

	uvm_lock(&meta.lock);
	n = meta.carved * META_OBJ_SIZE;
	uvm_unlock(&meta.lock);
	return n;
}

void meta_describe(struct uvm_descriptor *d)
{
	d->meta_carved = (uintptr_t)&meta.carved;
	d->meta_obj_size = META_OBJ_SIZE;
}

void meta_fork_prepare(void) { uvm_lock(&meta.lock); }
void meta_fork_parent(void) { uvm_unlock(&meta.lock); }
void meta_fork_child(void) { uvm_lock_init(&meta.lock); }
