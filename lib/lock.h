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
