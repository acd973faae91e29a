/*
 * lock.h - the one lock type of lib/.
 *
 * A futex lock (Drepper's "Futexes Are Tricky", mutex 2): one word, 0
 * free, 1 held, 2 held with sleepers.  Uncontended it is one
 * compare-and-swap to take and one exchange to let go, in line: glibc's
 * mutex cost about 65 instructions a round (its kind, owner and user
 * count), a third of vrealloc's grow and shrink.  Contended it spins a
 * little, then sleeps in the kernel instead of burning the core, which
 * matters with 64 threads on 2 cores; the spin is there because our
 * critical sections are a few hundred instructions and a futex wait and
 * wake cost more than that (random_size on 2 threads spent 8 % of its time
 * in futex calls with glibc's plain mutex, which never spins).  It never
 * allocates, so it is safe inside malloc.  After fork() the child
 * re-initialises every lock (init.c's fork handlers), never unlocks one it
 * did not take.
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
 *   8. a metadata shard's lock (meta.c): innermost, one at a time
 *      (fork_prepare takes them all, in index order).
 * The owner's own paths take none of them: its heap is its own (heap.h).
 */
#ifndef UVM_LOCK_H
#define UVM_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct {
	_Atomic unsigned state; /* 0 free, 1 held, 2 held and someone may sleep on it */
} uvm_lock_t;

#define UVM_LOCK_INIT { 0 }

static inline void uvm_lock_init(uvm_lock_t *l) { atomic_store_explicit(&l->state, 0, memory_order_relaxed); }

/* The contended halves: spin, then sleep; wake a sleeper. */
void uvm__lock_wait(uvm_lock_t *l);
void uvm__lock_wake(uvm_lock_t *l);

static inline int uvm_trylock(uvm_lock_t *l)
{
	unsigned free = 0;

	return atomic_compare_exchange_strong_explicit(&l->state, &free, 1, memory_order_acquire, memory_order_relaxed);
}

static inline void uvm_lock(uvm_lock_t *l)
{
	if (__builtin_expect(!uvm_trylock(l), 0))
		uvm__lock_wait(l);
}

static inline void uvm_unlock(uvm_lock_t *l)
{
	if (__builtin_expect(atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2, 0))
		uvm__lock_wake(l);
}

/*
 * A seqcount's writer side (the kernel's write_seqcount_begin and _end),
 * for readers in another process (descriptor.h) who retry a walk whose
 * count moved or was odd.  Writers hold the structure's lock, so the count
 * steps with plain stores (begin's fence is the kernel's smp_wmb), not
 * with locked adds: two of those cost a tree change more than its walk.
 */
static inline void uvm_seq_begin(_Atomic uint64_t *seq)
{
	atomic_store_explicit(seq, atomic_load_explicit(seq, memory_order_relaxed) + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static inline void uvm_seq_end(_Atomic uint64_t *seq)
{
	atomic_store_explicit(seq, atomic_load_explicit(seq, memory_order_relaxed) + 1, memory_order_release);
}

#endif
