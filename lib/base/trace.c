/*
 * trace.c - the probes' semaphores, the sampling countdown and the
 * snapshot's deadline (trace.h).  What a snapshot carries is read by a
 * layer above (probes.c), which registers itself: the slow paths that send
 * snapshots lie below it.
 */
#include "trace.h"

#include <stdatomic.h>
#include <time.h>

#include "options.h"

/* The kernel increments a semaphore while a tracer is attached to its probe; sdt.h finds them by name. */
#define UVM_TRACE_DEFINE(name) \
	volatile unsigned short UVM_TRACE_SEMAPHORE(name) __attribute__((section(".probes"), visibility("hidden")))

UVM_TRACE_DEFINE(snapshot);
UVM_TRACE_DEFINE(alloc);
UVM_TRACE_DEFINE(cache_miss);
UVM_TRACE_DEFINE(cache_drain);
UVM_TRACE_DEFINE(pool_miss);
UVM_TRACE_DEFINE(tree_alloc);
UVM_TRACE_DEFINE(region_new);
UVM_TRACE_DEFINE(purge);
UVM_TRACE_DEFINE(slab_refill);
UVM_TRACE_DEFINE(slab_release);
UVM_TRACE_DEFINE(prof_alloc);
UVM_TRACE_DEFINE(prof_free);
UVM_TRACE_DEFINE(thp_verdict);

/* Written by vmtrace --sample N (through the descriptor, which holds its address). */
volatile unsigned uvm__trace_sample;

static void set_sample(long long every) { uvm__trace_sample = (unsigned)every; }

void trace_init(void)
{
	set_sample(option(OPT_TRACE_SAMPLE));
	option_watch(OPT_TRACE_SAMPLE, set_sample);
}

__thread unsigned trace_countdown __attribute__((tls_model("initial-exec")));
__thread unsigned trace_ticks __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t next_snapshot;

uint64_t trace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void trace_alloc(size_t size, size_t align, const void *p, const void *caller, uint64_t t0, int api)
{
	uint64_t ns = trace_now_ns() - t0;

	STAP_PROBEV(uvmalloc, alloc, size, align, p, caller, ns, api);
	trace_snapshot();
}

static void (*snapshot_send)(void);

void trace_on_snapshot(void (*send)(void)) { snapshot_send = send; }

void trace_snapshot_slow(bool force)
{
	uint64_t now = trace_now_ns(), due = atomic_load_explicit(&next_snapshot, memory_order_relaxed);

	/* One thread per interval: the one that moves the deadline. */
	if (!force && (now < due || !atomic_compare_exchange_strong(&next_snapshot, &due, now + UVM_TRACE_INTERVAL_NS)))
		return;
	if (snapshot_send)
		snapshot_send();
}
