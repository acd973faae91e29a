/*
 * tests/unit/heap/test_spans.c - the thread-local splits and joins of cached
 * areas (spans, lib/vm/vnode.h) checked against a model, one step at a
 * time: blocks allocated, shrunk and grown in place (vrealloc), freed by
 * their own thread or by another, while the second thread is replaced
 * (exits and adoptions) and purges drain every cache.  Two actor threads
 * run the steps in lockstep, so that between two steps nothing moves and
 * the busy trees, the spans' tiling and every live block can be checked
 * exactly: the model is each block's address, size and fill, and no two
 * live blocks may overlap.  Again across three busy trees and two pretend
 * NUMA nodes, where an adopted cache joins areas filed in different trees.
 */
#include "helpers.h"
#include "drained.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>

#include "uvmalloc.h"
#include "vnode.h"

#define SLOTS 48
#define STEPS 12000
#define PAGE 4096ul

struct block {
	uint64_t *p;
	size_t bytes;
	uint64_t seed; /* what its words were filled from */
};

static struct block slot[SLOTS];
static uint64_t rng = 0x5eed5ba115ull;

static uint64_t next(void) { return xorshift(&rng); }

static uint64_t word_of(uint64_t seed, size_t i) { return (seed + i) * 0x9e3779b97f4a7c15ull; }

/*
 * The first and last word of every page, and the block's last word (what a
 * stray split, guard or purge would hit), of those below limit bytes.
 */
static void each_checked_word(const struct block *b, size_t limit, void (*fn)(uint64_t *w, uint64_t want))
{
	size_t words = b->bytes / 8, below = limit / 8;

	for (size_t i = 0; i < words && i < below; i += PAGE / 8) {
		size_t last = i + PAGE / 8 - 1 < words ? i + PAGE / 8 - 1 : words - 1;

		fn(&b->p[i], word_of(b->seed, i));
		if (last < below)
			fn(&b->p[last], word_of(b->seed, last));
	}
}

static void put_word(uint64_t *w, uint64_t want) { *w = want; }
static void check_word(uint64_t *w, uint64_t want) { cr_assert_eq(*w, want, "word at %p changed", (void *)w); }

static void fill(struct block *b)
{
	b->seed = next();
	each_checked_word(b, b->bytes, put_word);
}

/* Mostly bin sizes, whose trims leave spans; some of the order lists'. */
static size_t some_bytes(void)
{
	uint64_t r = next();
	size_t pages = r % 8 ? 1 + r % 40 : 64 + r % 400;

	return pages * PAGE - (r >> 20) % 2048;
}

/* ------------------------------------------------------------ actors */

struct actor {
	pthread_t t;
	sem_t go, done;
	void (*step)(int k);
	int k;
	bool quit;
};

static struct actor actor[2];

static void *actor_main(void *arg)
{
	struct actor *a = arg;

	for (;;) {
		sem_wait(&a->go);
		if (a->quit)
			return NULL;
		a->step(a->k);
		sem_post(&a->done);
	}
}

static void actor_start(struct actor *a)
{
	a->quit = false;
	sem_init(&a->go, 0, 0);
	sem_init(&a->done, 0, 0);
	cr_assert_eq(pthread_create(&a->t, NULL, actor_main, a), 0);
}

/* A thread exit: its cache's spans are filed on the way out. */
static void actor_stop(struct actor *a)
{
	a->quit = true;
	sem_post(&a->go);
	cr_assert_eq(pthread_join(a->t, NULL), 0);
	sem_destroy(&a->go);
	sem_destroy(&a->done);
}

/* The next actor adopts the exited one's heap, and frees what its predecessor allocated. */
static void actor_replace(struct actor *a)
{
	actor_stop(a);
	actor_start(a);
}

static void run_on(struct actor *a, void (*step)(int k), int k)
{
	a->step = step;
	a->k = k;
	sem_post(&a->go);
	sem_wait(&a->done);
}

/* ------------------------------------------------------------- steps */

static int numa_nodes = 1; /* UVM_FAKE_NUMA of the run */

/* Mostly the thread's own NUMA node; with pretend nodes, one block in four on a node asked for. */
static void step_alloc(int k)
{
	uint64_t r = next();

	slot[k].bytes = some_bytes();
	slot[k].p = numa_nodes > 1 && r % 4 == 0 ? uvm_vmalloc_node(slot[k].bytes, (int)(r >> 8) % numa_nodes)
						: uvm_vmalloc(slot[k].bytes);
	cr_assert_not_null(slot[k].p);
	cr_assert_geq(uvm_vsize(slot[k].p), slot[k].bytes);
	fill(&slot[k]);
}

static void step_free(int k)
{
	each_checked_word(&slot[k], slot[k].bytes, check_word);
	uvm_vfree(slot[k].p);
	slot[k].p = NULL;
}

/* A shrink or a grow, in place or moved: the kept part must keep its words. */
static void step_realloc(int k)
{
	size_t bytes = some_bytes();

	slot[k].p = uvm_vrealloc(slot[k].p, bytes);
	cr_assert_not_null(slot[k].p);
	cr_assert_geq(uvm_vsize(slot[k].p), bytes);
	each_checked_word(&slot[k], bytes, check_word);
	slot[k].bytes = bytes;
	fill(&slot[k]);
}

static void step_purge(int k)
{
	(void)k;
	uvm_purge();
}

/* ------------------------------------------------------------ checks */

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct block *)a)->p, y = (uintptr_t)((const struct block *)b)->p;

	return x < y ? -1 : x > y;
}

/* Every live block whole, none overlapping another or its guard page, and the trees and spans well formed. */
static void check_all(int step)
{
	struct block live[SLOTS];
	int n = 0;

	for (int k = 0; k < SLOTS; k++)
		if (slot[k].p) {
			each_checked_word(&slot[k], slot[k].bytes, check_word);
			live[n++] = slot[k];
		}
	qsort(live, (size_t)n, sizeof(live[0]), by_address);
	for (int i = 1; i < n; i++)
		cr_assert_leq((uintptr_t)live[i - 1].p + uvm_vsize(live[i - 1].p) + PAGE, (uintptr_t)live[i].p,
			      "step %d: blocks %p and %p overlap", step, (void *)live[i - 1].p, (void *)live[i].p);
	cr_assert_eq(vn_busy_check(), 0, "step %d: a busy tree or a span is broken", step);
}

static void run_model(void)
{
	struct uvm_stats st;

	actor_start(&actor[0]);
	actor_start(&actor[1]);
	for (int step = 0; step < STEPS; step++) {
		int k = (int)(next() % SLOTS);
		struct actor *a = &actor[next() % 2]; /* the block's own thread, or the other one */
		uint64_t r = next() % 16;

		if (!slot[k].p)
			run_on(a, step_alloc, k);
		else if (r < 7)
			run_on(a, step_realloc, k);
		else if (r < 15)
			run_on(a, step_free, k);
		else
			run_on(a, step_purge, k);
		if (step % 500 == 499)
			actor_replace(&actor[1]);
		if (step % 50 == 0)
			check_all(step);
	}
	check_all(STEPS);
	for (int k = 0; k < SLOTS; k++)
		if (slot[k].p)
			run_on(&actor[0], step_free, k);
	actor_stop(&actor[0]);
	actor_stop(&actor[1]);
	uvm_purge();
	cr_assert_eq(vn_busy_check(), 0);
	uvm_stats(&st);
	cr_assert_eq(st.busy_count, 0);
	cr_assert_eq(st.allocs, st.frees);
	assert_all_given_back();
}

Test(spans, splits_and_joins_match_a_model_through_exits_and_purges, .timeout = 240) { run_model(); }

/* Areas filed in three nodes' busy trees (joins across trees), and placed on two pretend NUMA nodes. */
static void three_vmap_nodes_two_numa_nodes(void)
{
	setenv("UVM_NODES", "3", 1);
	setenv("UVM_FAKE_NUMA", "2", 1);
	numa_nodes = 2;
}

Test(spans, the_model_holds_across_busy_trees_and_numa_nodes, .init = three_vmap_nodes_two_numa_nodes, .timeout = 240)
{
	run_model();
}
