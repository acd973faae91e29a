/*
 * threads.h - structs that each thread owns one of (its area cache, its
 * slab heap): made on the thread's first use, registered so other threads
 * can see them (decay, stats, fork, readers from outside), handed to a
 * destructor when the thread exits, and kept for the next thread after.
 */
#ifndef UVM_THREADS_H
#define UVM_THREADS_H

#include <pthread.h>

#include "lock.h"
#include "util.h"

struct thr_registry {
	uvm_lock_t lock;        /* live and spare; an owner may guard more of its own under it */
	struct list_head live;  /* the link member of every registered struct */
	struct list_head spare; /* structs of exited threads */
	size_t size;            /* of one struct, a page multiple */
	size_t link;            /* offset of the struct's list_head */
	pthread_key_t key;
};

#define THR_REGISTRY_INIT(r) { .lock = UVM_LOCK_INIT, .live = LIST_HEAD_INIT((r).live), .spare = LIST_HEAD_INIT((r).spare) }

/* Set the struct size and link offset; on_exit gets a thread's struct when the thread exits.  0 or an errno. */
int thr_init(struct thr_registry *r, size_t size, size_t link, void (*on_exit)(void *));
/* A zeroed struct for the calling thread, set up by init before it is registered; NULL when out of memory. */
void *thr_attach(struct thr_registry *r, void (*init)(void *));
/* Unregister obj and keep it for the next thread.  The caller holds r->lock. */
void thr_retire_locked(struct thr_registry *r, void *obj);

#endif
