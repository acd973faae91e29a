/*
 * tests/thread_start.h - pthread_create for the tests' own programs (the
 * unit tests assert it with Criterion): a thread the system refuses
 * (EAGAIN under a loaded machine's limits) ends the program naming it,
 * where a join of the unset pthread_t crashed with no word of why.
 */
#ifndef UVM_TEST_THREAD_START_H
#define UVM_TEST_THREAD_START_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void thread_start_or_exit(const char *prog, pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(err));
		exit(1);
	}
}

#endif
