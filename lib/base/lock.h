/*
 * lock.h - the one lock type of lib/.
 *
 * A pthread mutex: uncontended it is one atomic, contended it sleeps in the
 * kernel instead of burning the core, which matters with 64 threads on 2
 * cores.  It is glibc's adaptive kind: it spins a little before it sleeps,
 * because our critical sections are a few hundred instructions and a futex
 * wait and wake cost more than that (random_size on 2 threads spent 8 % of
 * its time in futex calls with the plain kind).  It never allocates, so it
 * is safe inside malloc.  After fork() the child re-initialises every lock
 * (init.c's fork handlers), never unlocks one it did not take.
 *
 * Lock order: a path that holds one of these takes only locks further
 * down the list, and init.c's fork_prepare takes them all in this order.
 *   1. init_lock (init.c): the set-up, and a fork racing it.
 *   2. the heap profile's unwind lock, then its table lock (prof.c): each
 *      taken with no other held.
 *   3. slab.c: late_lock, then sl.lock (orphaned and late slabs).
 *   4. the heap registry's lock (heap.c), then claims of heaps.  A claim is
 *      no lock but a flag that the owner waits on in heap_enter (heap.h);
 *      a claimer holds it across the drains that take 5 to 8.
 *   5. purge.lock (purge.c); a free only tries it (purge_if_over).
 *   6. a vmap node's pools, busy and lazy locks (vnode.c): outside fork,
 *      one node's and one of the three at a time.
 *   7. the arena's commit_lock, then a NUMA node's free-tree lock (arena.c).
 *   8. meta.lock (meta.c), the metadata pool: innermost.
 * The owner's own paths take none of them: its heap is its own (heap.h).
 */
#ifndef UVM_LOCK_H
#define UVM_LOCK_H

#include <pthread.h>

typedef pthread_mutex_t uvm_lock_t;

#define UVM_LOCK_INIT PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP

static inline void uvm_lock_init(uvm_lock_t *l)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(l, &a);
	pthread_mutexattr_destroy(&a);
}
static inline void uvm_lock(uvm_lock_t *l) { pthread_mutex_lock(l); }
static inline int uvm_trylock(uvm_lock_t *l) { return pthread_mutex_trylock(l) == 0; }
static inline void uvm_unlock(uvm_lock_t *l) { pthread_mutex_unlock(l); }

#endif
