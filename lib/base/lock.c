/*
 * lock.c - the contended halves of lock.h's futex lock.
 */
#include "lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Spins before a sleep, as glibc's adaptive mutex (its default at most
 * 100): a holder on another CPU is usually out within a few hundred
 * instructions, sooner than a futex round trip.
 */
#define LOCK_SPINS 100

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void uvm__lock_wait(uvm_lock_t *l)
{
	for (int i = 0; i < LOCK_SPINS; i++) {
		relax();
		if (!atomic_load_explicit(&l->state, memory_order_relaxed) && uvm_trylock(l))
			return;
	}
	/* 2 from here on: whoever lets go must wake us; it may wake a thread that then finds the lock taken again. */
	while (atomic_exchange_explicit(&l->state, 2, memory_order_acquire))
		syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void uvm__lock_wake(uvm_lock_t *l) { syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }
