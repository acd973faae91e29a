/*
 * tests/unit/base/test_lock.c - lock.h's futex lock under contention heavy
 * enough that waiters run out of spins and sleep: every increment of a
 * plain counter survives (exclusion), every sleeper is woken (a lost
 * wake-up hangs the test until its timeout), and the lock ends free.
 */
#include "helpers.h"

#include <pthread.h>
#include <unistd.h>

#include "lock.h"

#define THREADS 16
#define ROUNDS 3000
#define HOLD_EVERY 64 /* every so many rounds a holder sleeps 50 us, so that the others sleep too */

static uvm_lock_t lock = UVM_LOCK_INIT;
static unsigned long counter; /* plain: only the lock keeps its increments whole */
static _Atomic bool slept; /* some waiter found the lock marked as slept on (state 2) */

static void *contend(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		unsigned long c;

		uvm_lock(&lock);
		c = counter;
		if (atomic_load(&lock.state) == 2)
			atomic_store(&slept, true);
		if (i % HOLD_EVERY == 0)
			usleep(50);
		counter = c + 1;
		uvm_unlock(&lock);
	}
	return NULL;
}

Test(lock, excludes_and_wakes_every_sleeper, .timeout = 120)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, contend, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(counter, (unsigned long)THREADS * ROUNDS, "lost increments: %lu of %lu", counter,
		     (unsigned long)THREADS * ROUNDS);
	cr_assert_eq(atomic_load(&lock.state), 0, "the lock is still held");
	cr_assert(atomic_load(&slept), "no waiter ever slept: the futex path went untested");
}
