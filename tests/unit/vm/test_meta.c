/*
 * tests/unit/vm/test_meta.c - the metadata pool (lib/vm/meta.c) on its own: objects
 * are distinct, a freed one is the next handed out, the live count
 * balances (what the other tests' leak checks rely on), a list frees
 * whole, threads share the pool without losing an object, and a fork
 * child's pool works although another thread held its lock.
 */
#include "helpers.h"

#include <pthread.h>

#include "init.h"
#include "meta.h"

#define N 20000

Test(meta, objects_are_distinct_and_a_freed_one_comes_back_first)
{
	static struct vmap_area *v[N];
	size_t live = meta_va_live();
	struct vmap_area *again;

	for (int i = 0; i < N; i++) {
		v[i] = meta_va_alloc();
		cr_assert_not_null(v[i]);
		memset(v[i], 0xa5, sizeof(*v[i])); /* objects must not overlap: a later check would see it */
		v[i]->va_start = (uintptr_t)i;
	}
	for (int i = 0; i < N; i++)
		cr_assert_eq(v[i]->va_start, (uintptr_t)i, "object %d was overwritten", i);
	cr_assert_eq(meta_va_live(), live + N);
	meta_va_free(v[123]);
	again = meta_va_alloc();
	cr_assert_eq(again, v[123], "the pool hands out the object freed last");
	for (int i = 0; i < N; i++)
		meta_va_free(v[i]);
	cr_assert_eq(meta_va_live(), live);
}

Test(meta, a_list_frees_whole)
{
	LIST_HEAD(list);
	size_t live = meta_va_live(), bytes;

	for (int i = 0; i < 1000; i++) {
		struct vmap_area *va = meta_va_alloc();

		list_add(&va->list, &list);
	}
	bytes = meta_bytes();
	cr_assert_geq(bytes, 1000 * sizeof(struct vmap_area), "carved bytes count what was handed out");
	meta_va_free_list(&list);
	cr_assert_eq(meta_va_live(), live);
	for (int i = 0; i < 1000; i++)
		meta_va_free(meta_va_alloc());
	cr_assert_eq(meta_bytes(), bytes, "freed objects are reused before anything new is carved");
}

static void *churn(void *arg)
{
	struct vmap_area *mine[64];

	(void)arg;
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 64; i++) {
			mine[i] = meta_va_alloc();
			mine[i]->va_end = (uintptr_t)mine[i];
		}
		for (int i = 0; i < 64; i++) {
			cr_assert_eq(mine[i]->va_end, (uintptr_t)mine[i], "another thread holds this object too");
			meta_va_free(mine[i]);
		}
	}
	return NULL;
}

Test(meta, threads_share_the_pool_without_losing_an_object)
{
	pthread_t t[4];
	size_t live = meta_va_live();

	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, churn, NULL), 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	cr_assert_eq(meta_va_live(), live);
}

static volatile bool stop;

static void *busy(void *arg)
{
	(void)arg;
	while (!stop)
		meta_va_free(meta_va_alloc());
	return NULL;
}

Test(meta, a_fork_child_allocates_although_another_thread_was_in_the_pool)
{
	pthread_t t;

	cr_assert_eq(uvm_init(), 0, "the library's fork handlers come with its set-up");
	cr_assert_eq(pthread_create(&t, NULL, busy, NULL), 0);
	for (int i = 0; i < 20; i++) {
		int status;
		pid_t pid;

		pid = fork();
		if (!pid) {
			for (int j = 0; j < 1000; j++)
				meta_va_free(meta_va_alloc());
			_exit(0);
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && !WEXITSTATUS(status), "the child could not use the pool");
	}
	stop = true;
	pthread_join(t, NULL);
}
