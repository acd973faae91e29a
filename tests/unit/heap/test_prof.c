/*
 * tests/unit/heap/test_prof.c - the heap profile (lib/heap/prof.h) against a model: blocks
 * of known sizes kept live through named helpers must be estimated within
 * a bound their sample count sets, a block of the rate or more always
 * sampled with its exact size, frees (own, another thread's, realloc's)
 * must take blocks out, a sampled block must keep the malloc family's
 * contract (usable size, realloc, double free aborting with its pointer),
 * and the rate must reach running threads.
 */
#include "helpers.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>

#include "prof.h"
#include "uvmalloc.h"

#define MAX_STACKS 256
static struct prof_stack stacks[MAX_STACKS];

/* Is the function named fn among s's frames? */
static bool through(const struct prof_stack *s, const char *fn)
{
	for (unsigned i = 0; i < s->depth; i++) {
		Dl_info info;

		if (dladdr((void *)(uintptr_t)(s->frames[i] - 1), &info) && info.dli_sname && !strcmp(info.dli_sname, fn))
			return true;
	}
	return false;
}

/* The live profile's estimated bytes, count and samples of the stacks through fn. */
static double live(const char *fn, double *count, uint64_t *samples)
{
	size_t n = prof_live_stacks(stacks, MAX_STACKS);
	double bytes = 0, c = 0;
	uint64_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (through(&stacks[i], fn))
			bytes += stacks[i].bytes, c += stacks[i].count, k += stacks[i].samples;
	if (count)
		*count = c;
	if (samples)
		*samples = k;
	return bytes;
}

static void rate(long long bytes) { cr_assert_eq(uvm_option_set("UVM_PROF_SAMPLE", bytes), 0); }

/* n blocks of size into v, through a frame of their own: the stacks through it hold the blocks and nothing else. */
__attribute__((noinline)) void keep_blocks(void **v, size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		v[i] = uvm_malloc(size);
		memset(v[i], 1, size < 64 ? size : 64);
	}
}

/*
 * The blocks' array is allocated here, outside keep_blocks: allocated in
 * it, the array was one more sample of its stacks, which the estimates
 * counted as blocks (small_blocks_are_estimated_without_bias: 320 KB more
 * than its 4 MB, always; the exact counts of the other cases, by chance).
 */
static void **new_blocks(size_t n, size_t size)
{
	void **v = uvm_malloc(n * sizeof(*v));

	keep_blocks(v, n, size);
	return v;
}

static void free_blocks(void **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		uvm_free(v[i]);
	uvm_free(v);
}

#define PROF_TEST_RATE ((size_t)64 << 10)

/*
 * n blocks of size at rate 64K, kept and freed in rounds until about 1000
 * samples were due: the mean estimate within 5 standard errors of the
 * truth.  The error is the one the expected sample count E sets (Poisson:
 * the truth over sqrt(E)), not the observed count's: a bound from the
 * observed count tightens as a round's count runs high, and 4 of them
 * from one round of 61 samples failed one run in 1500 with an unbiased
 * sampler (400 runs: 61.4 samples a round, variance 55.7, mean estimate
 * 1.007x the truth).  Five errors from 1000 samples fail about one run in
 * a million, and a bias of 20 % in the estimate fails them (tried).
 */
static void estimate(size_t n, size_t size)
{
	double share = -expm1(-(double)size / (double)PROF_TEST_RATE), due = (double)n * share;
	unsigned rounds = (unsigned)ceil(1000 / due);
	double bytes = 0, count = 0, truth = (double)(n * size) * rounds, expected = due * rounds;
	uint64_t samples = 0;

	rate((long long)PROF_TEST_RATE);
	for (unsigned r = 0; r < rounds; r++) {
		void **v = new_blocks(n, size);
		double b, c;
		uint64_t k;

		b = live("keep_blocks", &c, &k);
		bytes += b, count += c, samples += k;
		free_blocks(v, n);
		cr_assert_eq(live("keep_blocks", NULL, &k), 0, "every block freed leaves the profile");
		cr_assert_eq(k, 0);
	}
	cr_assert_gt(samples, expected / 2, "%u x %zu x %zu: %llu samples, %.0f due", rounds, n, size,
		     (unsigned long long)samples, expected);
	cr_assert_lt(fabs(bytes - truth), 5 * truth / sqrt(expected), "%u rounds of %zu blocks of %zu: estimated %.0f bytes of %.0f from %llu samples",
		     rounds, n, size, bytes, truth, (unsigned long long)samples);
	cr_assert_lt(fabs(count - (double)n * rounds), 5 * (double)n * rounds / sqrt(expected), "count %.0f of %zu", count, n * rounds);
}

Test(prof, small_blocks_are_estimated_without_bias) { estimate(40000, 100); }
Test(prof, page_sized_blocks_are_estimated_without_bias) { estimate(4000, 5000); }
/* Under the rate, where the countdown runs in pieces short of it (prof.c's count_down): sampled at 61 %, not always. */
Test(prof, blocks_just_under_the_rate_are_estimated_without_bias) { estimate(200, 60 << 10); }

Test(prof, a_block_of_the_rate_or_more_is_always_sampled_with_its_size)
{
	uint64_t samples;
	double count;
	void **v;

	rate(64 << 10);
	v = new_blocks(40, 64 << 10);
	cr_assert_eq(live("keep_blocks", &count, &samples), 40.0 * (64 << 10));
	cr_assert_eq(samples, 40);
	cr_assert_eq(count, 40);
	free_blocks(v, 40);
}

Test(prof, off_samples_nothing)
{
	uint64_t samples;
	void **v;

	rate(0);
	v = new_blocks(2000, 1 << 20);
	live("keep_blocks", NULL, &samples);
	cr_assert_eq(samples, 0);
	free_blocks(v, 2000);
}

__attribute__((noinline)) void *sampled_block(size_t size)
{
	char *p;

	rate(1); /* every allocation */
	p = uvm_malloc(size);
	p[0] = 0; /* not a tail call: this frame must be on the stack */
	return p;
}

Test(prof, a_sampled_small_block_keeps_the_malloc_contract)
{
	char *p = sampled_block(24), *q;
	uint64_t samples;

	rate(0);
	live("sampled_block", NULL, &samples);
	cr_assert_eq(samples, 1);
	cr_assert_geq(uvm_malloc_usable_size(p), 24);
	memset(p, 'x', 24);
	q = uvm_realloc(p, 10000);
	cr_assert_not_null(q);
	for (int i = 0; i < 24; i++)
		cr_assert_eq(q[i], 'x');
	uvm_free(q);
	live("sampled_block", NULL, &samples);
	cr_assert_eq(samples, 0, "realloc's move freed the sampled block");
}

static void free_twice(void *arg)
{
	uvm_free(arg);
	uvm_free(arg);
}

Test(prof, a_sampled_block_freed_twice_aborts_naming_it)
{
	void *p = sampled_block(40);
	char want[64];

	rate(0);
	snprintf(want, sizeof(want), "invalid pointer %p", p);
	expect_death(free_twice, p, SIGABRT, want);
	uvm_free(p);
}

static void *free_all(void *arg)
{
	free_blocks(arg, 3000);
	return NULL;
}

Test(prof, another_threads_free_takes_blocks_out)
{
	void **v;
	uint64_t samples;
	pthread_t t;

	rate(16 << 10);
	v = new_blocks(3000, 2000);
	live("keep_blocks", NULL, &samples);
	cr_assert_gt(samples, 100);
	cr_assert_eq(pthread_create(&t, NULL, free_all, v), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	live("keep_blocks", NULL, &samples);
	cr_assert_eq(samples, 0);
}

__attribute__((noinline)) void *keep_areas(void)
{
	char *p = uvm_vmalloc(3 << 20);

	p[0] = 0; /* not a tail call */
	return p;
}

Test(prof, areas_of_the_api_are_sampled_and_dropped_by_vfree)
{
	void *p;
	uint64_t samples;

	rate(1 << 20);
	p = keep_areas();
	cr_assert_eq(live("keep_areas", NULL, &samples), 3 << 20);
	uvm_vfree(p);
	live("keep_areas", NULL, &samples);
	cr_assert_eq(samples, 0);
}

static void *thread_keeps(void *arg)
{
	(void)arg;
	return new_blocks(1, 1 << 20);
}

static void *thread_waits_then_keeps(void *arg)
{
	pthread_barrier_t *b = arg;

	uvm_free(uvm_malloc(100)); /* this thread's heap exists, its countdown drawn for the old rate */
	pthread_barrier_wait(b);
	pthread_barrier_wait(b);
	return thread_keeps(NULL);
}

Test(prof, a_new_rate_reaches_a_running_thread_at_its_next_allocation)
{
	pthread_barrier_t b;
	pthread_t t;
	void **v;
	uint64_t samples;

	rate(0);
	pthread_barrier_init(&b, NULL, 2);
	cr_assert_eq(pthread_create(&t, NULL, thread_waits_then_keeps, &b), 0);
	pthread_barrier_wait(&b);
	rate(1 << 20);
	pthread_barrier_wait(&b);
	cr_assert_eq(pthread_join(t, (void **)&v), 0);
	cr_assert_eq(live("keep_blocks", NULL, &samples), 1 << 20, "the 1 MiB block, always sampled at a 1 MiB rate");
	free_blocks(v, 1);
}

Test(prof, a_fork_child_samples_and_frees)
{
	pid_t pid;
	int status;

	rate(4096);
	pid = fork();
	if (!pid) {
		void **v = new_blocks(500, 3000);
		uint64_t samples;

		live("keep_blocks", NULL, &samples);
		free_blocks(v, 500);
		_exit(samples > 10 && live("keep_blocks", NULL, NULL) == 0 ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
