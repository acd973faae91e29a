/*
 * prof_leaky - the heap profile tests' target (test_prof.py): leaks
 * through a helper, from main and from threads, known bytes each way.
 * Built as C (malloc) and, through prof_leaky.cc, as C++ (new).
 *
 *   prof_leaky [wait]
 * prints "leaked BYTES" (the main's and the threads' stacks' true bytes;
 * keep_big's one 400 000-byte block, an area, comes on top);
 * with wait, then "ready", waits for a line on stdin, leaks again through
 * grow_more, prints "ready" again and waits for a second line.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread_start.h"

#define RECORD 1000
#define MAIN_RECORDS 16000
#define THREADS 4
#define THREAD_RECORDS 4000
#define MORE_RECORDS 12000

struct record {
	char data[RECORD];
};

static struct record *volatile sink; /* keeps the compiler from dropping the leaks */

__attribute__((noinline)) struct record *make_record(void)
{
#ifdef __cplusplus
	struct record *r = new record;
#else
	struct record *r = malloc(sizeof(*r));
#endif
	memset(r, 7, sizeof(*r));
	sink = r;
	return r;
}

__attribute__((noinline)) void leak_records(int n)
{
	for (int i = 0; i < n; i++)
		make_record();
	sink = NULL;
}

__attribute__((noinline)) void grow_more(int n)
{
	for (int i = 0; i < n; i++)
		make_record();
	sink = NULL;
}

/* One block large enough for an area of its own: vminfo's area lines must charge it to this function. */
__attribute__((noinline)) void keep_big(void)
{
#ifdef __cplusplus
	char *p = new char[400000];
#else
	char *p = malloc(400000);
#endif
	p[0] = 1;
	sink = (struct record *)p;
}

/* Not leaked: freed again, so that it must not show. */
__attribute__((noinline)) void churn(void)
{
	for (int i = 0; i < 200000; i++) {
		void *p = malloc((size_t)(i % 4000) + 1);

		memset(p, 1, 1);
		free(p);
	}
}

__attribute__((noinline)) void *worker(void *arg)
{
	(void)arg;
	leak_records(THREAD_RECORDS);
	churn();
	return NULL;
}

static void wait_line(void)
{
	char line[16];

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(1);
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		thread_start_or_exit("prof_leaky", &t[i], worker, NULL);
	leak_records(MAIN_RECORDS);
	keep_big();
	churn();
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("leaked %d %d\n", MAIN_RECORDS * RECORD, THREADS * THREAD_RECORDS * RECORD);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		wait_line();
		grow_more(MORE_RECORDS);
		wait_line();
	}
	return 0;
}
