/*
 * tests/unit/base/test_trace.c - the probes' sampling (lib/base/trace.h) without a
 * tracer: a probe's semaphore, which the kernel raises while a tracer is
 * attached, is raised by hand (its probe site is a nop either way).
 * Untraced, nothing is due whatever the period; traced, a thread's first
 * call is sampled and then one in uvm__trace_sample; period 0 samples none
 * and looks again later; the period vmtrace writes is taken at the next
 * count-down.
 */
#include "helpers.h"

#include <pthread.h>

#include "probes.h"
#include "uvmalloc.h"

/* The pattern of n calls: 'x' sampled, '.' not. */
static void pattern(char *out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = trace_sample_due() ? 'x' : '.';
	out[n] = 0;
}

Test(trace, untraced_nothing_is_due)
{
	char got[16];

	cr_assert_eq(uvm_option_set("UVM_TRACE_SAMPLE", 1), 0);
	UVM_TRACE_SEMAPHORE(alloc) = 0;
	pattern(got, 10);
	cr_assert_str_eq(got, "..........");
}

Test(trace, traced_the_first_call_then_one_in_n)
{
	char got[16];

	cr_assert_eq(uvm_option_set("UVM_TRACE_SAMPLE", 3), 0);
	UVM_TRACE_SEMAPHORE(alloc) = 1;
	pattern(got, 10);
	UVM_TRACE_SEMAPHORE(alloc) = 0;
	cr_assert_str_eq(got, "x..x..x..x");
}

static void *other_thread(void *arg)
{
	pattern(arg, 4);
	return NULL;
}

Test(trace, each_thread_counts_down_on_its_own)
{
	char mine[8], theirs[8];
	pthread_t t;

	cr_assert_eq(uvm_option_set("UVM_TRACE_SAMPLE", 4), 0);
	UVM_TRACE_SEMAPHORE(alloc) = 1;
	pattern(mine, 2);
	cr_assert_eq(pthread_create(&t, NULL, other_thread, theirs), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	UVM_TRACE_SEMAPHORE(alloc) = 0;
	cr_assert_str_eq(mine, "x.");
	cr_assert_str_eq(theirs, "x...", "another thread's first call is its own first");
}

Test(trace, period_zero_samples_none_and_a_new_period_is_taken_at_the_next_look)
{
	char got[4201];

	cr_assert_eq(uvm_option_set("UVM_TRACE_SAMPLE", 0), 0);
	UVM_TRACE_SEMAPHORE(alloc) = 1;
	pattern(got, 100);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(got[i], '.', "period 0 sampled call %d", i);
	/* vmtrace -p writes the period after attaching: it is read when the count-down (4096 at period 0) runs out. */
	uvm__trace_sample = 2;
	pattern(got, 4200);
	UVM_TRACE_SEMAPHORE(alloc) = 0;
	cr_assert_not_null(strchr(got, 'x'), "the period written in was never taken");
	cr_assert_eq(strchr(got, 'x') - got, 4096 - 100, "taken when the count-down of 4096 ran out");
	cr_assert_eq(got[4096 - 100 + 2], 'x', "then one in 2");
}
