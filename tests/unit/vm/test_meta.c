/*
 * tests/unit/vm/test_meta.c - the metadata pool (lib/vm/meta.c) on its own: objects
 * are distinct, a freed one is the next handed out, the live count
 * balances (what the other tests' leak checks rely on), a list frees
 * whole, threads share the pool without losing an object, objects one
 * thread's shard holds serve another's before it carves, and a fork
 * child's pool works although another thread held its lock; fresh
 * objects come with their pages populated.
 */
#include "helpers.h"

#include <pthread.h>

#include "init.h"
#include "meta.h"
#include "os.h"

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

/*
 * A shard's fresh objects come with their pages populated a step ahead of
 * the carving: one madvise a step (16 KiB in its first chunk, 64 KiB in the
 * next), where each page would otherwise take a fault at its first object
 * (meta.c).
 */
Test(meta, fresh_objects_are_populated_a_step_at_a_time)
{
	enum { M = 6144, CHUNK = 256 << 10 };
	static struct vmap_area *v[M];
	size_t bytes = meta_bytes(), carved, steps, chunks;
	uint64_t calls = os_syscalls();

	cr_assert_eq(bytes, 0, "the count below starts from a pool that has carved nothing");
	for (int i = 0; i < M; i++)
		cr_assert_not_null(v[i] = meta_va_alloc());
	carved = meta_bytes() - bytes;
	calls = os_syscalls() - calls;
	cr_assert_gt(carved, 2 * CHUNK, "%d objects carved %zu bytes", M, carved);
	/* The first chunk in steps of 16 KiB, the rest in steps of 64 KiB; and each chunk's own mapping. */
	steps = CHUNK / (16 << 10) + (carved - CHUNK + (64 << 10) - 1) / (64 << 10);
	chunks = (carved + CHUNK - 1) / CHUNK;
	cr_assert_eq(calls, steps + chunks, "%zu bytes carved in %zu chunks and %zu steps with %lu system calls", carved, chunks,
		     steps, (unsigned long)calls);
	for (int i = 0; i < M; i++)
		meta_va_free(v[i]);
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

	meta_init(4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, churn, NULL), 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	cr_assert_eq(meta_va_live(), live);
}

Test(meta, objects_one_thread_freed_serve_another_before_any_is_carved)
{
	static struct vmap_area *v[N];
	size_t live = meta_va_live(), bytes;
	pthread_t t;

	meta_init(4);
	cr_assert_eq(pthread_create(&t, NULL, churn, NULL), 0); /* its shard ends with free objects */
	cr_assert_eq(pthread_join(t, NULL), 0);
	bytes = meta_bytes();
	for (int i = 0; i < 64; i++)
		v[i] = meta_va_alloc(); /* another shard: empty, so it takes the first thread's */
	cr_assert_eq(meta_bytes(), bytes, "a shard carved while another held free objects");
	for (int i = 0; i < 64; i++)
		meta_va_free(v[i]);
	cr_assert_eq(meta_va_live(), live);
}

/*
 * Objects allocated on one thread and freed on another: the first's shard
 * keeps running empty and taking the second's back while it frees more.
 */
#define HANDOFF 256
static struct vmap_area *_Atomic handoff[HANDOFF];

static void *consume(void *arg)
{
	(void)arg;
	for (int done = 0; done < 200 * HANDOFF;) {
		for (int i = 0; i < HANDOFF; i++) {
			struct vmap_area *va = atomic_exchange(&handoff[i], NULL);

			if (!va)
				continue;
			cr_assert_eq(va->va_end, (uintptr_t)va, "an object handed over twice");
			va->va_end = 0;
			meta_va_free(va);
			done++;
		}
	}
	return NULL;
}

Test(meta, objects_freed_by_another_thread_come_back_to_their_allocator)
{
	size_t live = meta_va_live();
	pthread_t t;

	meta_init(4);
	cr_assert_eq(pthread_create(&t, NULL, consume, NULL), 0);
	for (int made = 0; made < 200 * HANDOFF;) {
		for (int i = 0; i < HANDOFF && made < 200 * HANDOFF; i++) {
			struct vmap_area *va;

			if (atomic_load(&handoff[i]))
				continue;
			va = meta_va_alloc();
			cr_assert_not_null(va);
			cr_assert_neq(va->va_end, (uintptr_t)va, "an object handed out while still in use");
			va->va_end = (uintptr_t)va;
			atomic_store(&handoff[i], va);
			made++;
		}
	}
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(meta_va_live(), live);
	cr_assert_leq(meta_bytes(), 4 * (HANDOFF + 64) * sizeof(struct vmap_area) + 64 * 1024,
		      "the pool grew with the objects handed over, not with the objects in use: %zu bytes", meta_bytes());
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
