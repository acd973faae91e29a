/*
 * lock.h - the one lock type of lib/.
 *
 * A pthread mutex: uncontended it is one atomic, contended it sleeps in the
 * kernel instead of burning the core, which matters with 64 threads on 2
 * cores.  It never allocates, so it is safe inside malloc.  After fork() the
 * child re-initialises every lock (see fork.c), never unlocks one it did not
 * take.
 */
#ifndef UVM_LOCK_H
#define UVM_LOCK_H

#include <pthread.h>

typedef pthread_mutex_t uvm_lock_t;

#define UVM_LOCK_INIT PTHREAD_MUTEX_INITIALIZER

static inline void uvm_lock_init(uvm_lock_t *l) { pthread_mutex_init(l, NULL); }
static inline void uvm_lock(uvm_lock_t *l) { pthread_mutex_lock(l); }
static inline int uvm_trylock(uvm_lock_t *l) { return pthread_mutex_trylock(l) == 0; }
static inline void uvm_unlock(uvm_lock_t *l) { pthread_mutex_unlock(l); }

#endif
