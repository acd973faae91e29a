/*
 * trace.c - the probes' semaphores, the sampling countdown and the
 * periodic snapshot (trace.h).
 */
#include "trace.h"

#include <stdatomic.h>
#include <time.h>

#include "arena.h"
#include "frag.h"
#include "init.h"
#include "options.h"
#include "pcp.h"
#include "slab.h"
#include "uvmalloc.h"

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

/* The countdown ran out (or never started): sample this call and count down again. */
bool trace_sample_restart(void)
{
	unsigned every;

	/* The first allocation of a traced program comes before set-up has read UVM_TRACE_SAMPLE. */
	if (unlikely(!atomic_load_explicit(&uvm_ready, memory_order_acquire)) && !init_in_progress_here())
		uvm_init();
	every = uvm__trace_sample;
	/* Unset yet (vmtrace -p writes it just after it attaches): look again a few thousand calls on. */
	trace_countdown = every ? every : 4096;
	return every != 0;
}

void trace_alloc(size_t size, size_t align, const void *p, const void *caller, uint64_t t0, int api)
{
	uint64_t ns = trace_now_ns() - t0;

	STAP_PROBEV(uvmalloc, alloc, size, align, p, caller, ns, api);
	trace_snapshot();
}

void trace_snapshot_slow(bool force)
{
	uint64_t now = trace_now_ns(), due = atomic_load_explicit(&next_snapshot, memory_order_relaxed);
	/*
	 * What the probe hands over: the counters, then the committed span's free
	 * figures, freed slab objects' bytes, request rounding and metadata.
	 */
	struct {
		struct uvm_stats st;
		struct uvm_span span;
		uint64_t slab_free_bytes;
		uint64_t requested_bytes, handed_bytes, metadata_bytes;
	} snap;

	/* One thread per interval: the one that moves the deadline. */
	if (!force && (now < due || !atomic_compare_exchange_strong(&next_snapshot, &due, now + UVM_TRACE_INTERVAL_NS)))
		return;
	uvm_stats(&snap.st);
	arena_span(&snap.span);
	snap.slab_free_bytes = slab_free_bytes(&snap.st);
	snap.requested_bytes = pcp_requested();
	snap.handed_bytes = frag_handed_bytes(&snap.st);
	snap.metadata_bytes = frag_metadata_bytes();
	STAP_PROBEV(uvmalloc, snapshot, &snap);
}

/* The last counters, so that a tracer's totals are the program's own at exit (exit(), not _exit() or a signal). */
__attribute__((destructor)) static void trace_at_exit(void)
{
	if (UVM_TRACED(snapshot) && atomic_load_explicit(&uvm_ready, memory_order_acquire))
		trace_snapshot_slow(true);
}
