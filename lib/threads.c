/*
 * threads.c - the registry of per-thread structs.  Structs are never
 * unmapped: a reader that raced an exit reads a retired struct, not freed
 * memory.  pthread_setspecific never allocates for keys below 32, and ours
 * are created at set-up, among the first.
 */
#include "threads.h"

#include <string.h>

#include "os.h"

int thr_init(struct thr_registry *r, size_t size, size_t link, void (*on_exit)(void *))
{
	r->size = align_up(size, UVM_PAGE_SIZE);
	r->link = link;
	return pthread_key_create(&r->key, on_exit);
}

static struct list_head *link_of(const struct thr_registry *r, void *obj) { return (struct list_head *)((char *)obj + r->link); }

void *thr_attach(struct thr_registry *r, void (*init)(void *))
{
	void *obj = NULL;

	uvm_lock(&r->lock);
	if (!list_empty(&r->spare)) {
		struct list_head *l = r->spare.next;

		list_del(l);
		obj = (char *)l - r->link;
	}
	uvm_unlock(&r->lock);
	if (!obj && !(obj = os_alloc_meta(r->size)))
		return NULL;
	memset(obj, 0, r->size);
	init(obj);
	uvm_lock(&r->lock);
	list_add_tail(link_of(r, obj), &r->live);
	uvm_unlock(&r->lock);
	pthread_setspecific(r->key, obj);
	return obj;
}

void thr_retire_locked(struct thr_registry *r, void *obj)
{
	list_del(link_of(r, obj));
	list_add(link_of(r, obj), &r->spare);
}
