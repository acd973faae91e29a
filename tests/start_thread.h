/*
 * tests/start_thread.h - pthread_create for the tests' own programs (the
 * unit tests have helpers.h's thread_start): a thread the system refuses
 * (EAGAIN under a loaded machine's limits) ends the program naming it,
 * where a join of the unset pthread_t crashed with no word of why.
 */
#ifndef UVM_TEST_START_THREAD_H
#define UVM_TEST_START_THREAD_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void start_thread(const char *prog, pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(err));
		exit(1);
	}
}

#endif
