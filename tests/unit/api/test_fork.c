/*
 * tests/unit/api/test_fork.c - fork (lib/api/init.c's handlers, and every
 * layer's fork_prepare/parent/child): in a child, the blocks of the
 * parent's other threads, whose heaps no thread runs there, are freed and
 * never handed out twice; a child forks again; a fork while another
 * thread purges and frees leaves a child that allocates, purges and checks
 * out.  Other layers' fork cases sit with them: the metadata pool
 * (test_meta), the heap profile (test_prof), the malloc family and
 * threads churning (test_malloc, test_stress).
 */
#include "helpers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "arena.h"
#include "uvmalloc.h"

enum { N = 200 };

/* One child, run to its end: its exit status, which must be 0. */
static void in_child(int (*fn)(void *), void *arg, const char *what)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (!pid)
		_exit(fn(arg));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child ended with status %#x", what, status);
}

struct theirs {
	void *small[N], *area[N];
	atomic_int ready, leave;
};

/* Another thread's blocks, small and areas, kept live while it waits, alive, for the parent to fork. */
static void *allocate_and_wait(void *arg)
{
	struct theirs *t = arg;

	for (int i = 0; i < N; i++) {
		t->small[i] = memset(uvm_malloc(48), 0x11, 48);
		t->area[i] = memset(uvm_vmalloc((size_t)(1 + i % 7) * 4096), 0x22, 4096);
	}
	atomic_store(&t->ready, 1);
	while (!atomic_load(&t->leave))
		sched_yield();
	for (int i = 0; i < N; i++) {
		uvm_free(t->small[i]);
		uvm_vfree(t->area[i]);
	}
	return NULL;
}

static bool among(void *p, void *const *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

/* Frees the other thread's blocks, then allocates: nothing freed there may come back while ours live. */
static int free_theirs(void *arg)
{
	struct theirs *t = arg;
	static void *mine[2 * N];

	for (int i = 0; i < N; i++) {
		if (((unsigned char *)t->small[i])[47] != 0x11 || ((unsigned char *)t->area[i])[4095] != 0x22)
			return 2;
		uvm_free(t->small[i]);
		uvm_vfree(t->area[i]);
	}
	for (int i = 0; i < N; i++) {
		mine[2 * i] = memset(uvm_malloc(48), 0x33, 48);
		mine[2 * i + 1] = memset(uvm_vmalloc((size_t)(1 + i % 7) * 4096), 0x44, 4096);
	}
	for (int i = 0; i < 2 * N; i++)
		if (among(mine[i], mine + i + 1, 2 * N - i - 1))
			return 3; /* handed out twice */
	for (int i = 0; i < N; i++) {
		uvm_free(mine[2 * i]);
		uvm_vfree(mine[2 * i + 1]);
	}
	uvm_purge();
	return arena_check() ? 4 : 0;
}

Test(fork, a_child_frees_the_blocks_of_the_parents_other_threads)
{
	static struct theirs t;
	pthread_t th;

	cr_assert_not_null(uvm_malloc(10));
	cr_assert_eq(pthread_create(&th, NULL, allocate_and_wait, &t), 0);
	while (!atomic_load(&t.ready))
		sched_yield();
	in_child(free_theirs, &t, "free_theirs");
	atomic_store(&t.leave, 1);
	pthread_join(th, NULL);
	cr_assert_eq(arena_check(), 0);
}

static int grandchild(void *arg)
{
	char *p = uvm_malloc(100), *q = uvm_vmalloc(20000);

	(void)arg;
	if (!p || !q)
		return 2;
	memset(p, 1, 100);
	memset(q, 2, 20000);
	uvm_free(p);
	uvm_vfree(q);
	return arena_check() ? 3 : 0;
}

static int child_forks_again(void *arg)
{
	int status;
	pid_t pid;

	if (grandchild(arg))
		return 5;
	pid = fork();
	if (pid < 0)
		return 6;
	if (!pid)
		_exit(grandchild(arg));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 7;
	return WEXITSTATUS(status);
}

Test(fork, a_child_forks_again)
{
	cr_assert_not_null(uvm_malloc(10));
	in_child(child_forks_again, NULL, "child_forks_again");
}

static atomic_bool stop;

/* Purges, which take every heap and every node, beside frees of areas of every size. */
static void *purge_and_free(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		uvm_vfree(uvm_vmalloc((size_t)(1 + i % 300) * 4096));
		if (!(i % 16))
			uvm_purge();
	}
	return NULL;
}

Test(fork, a_fork_while_another_thread_purges)
{
	pthread_t th;

	cr_assert_not_null(uvm_malloc(10));
	cr_assert_eq(pthread_create(&th, NULL, purge_and_free, NULL), 0);
	for (int i = 0; i < 30; i++)
		in_child(grandchild, NULL, "grandchild");
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	cr_assert_eq(arena_check(), 0);
}
