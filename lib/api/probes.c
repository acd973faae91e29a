/*
 * probes.c - what the probes read of the whole library (probes.h): the
 * alloc probe's sampling set-up and the snapshot's figures.
 */
#include "probes.h"

#include <stdatomic.h>

#include "arena.h"
#include "frag.h"
#include "init.h"
#include "pcp.h"
#include "slab.h"
#include "uvmalloc.h"

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

static void send_snapshot(void)
{
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

	uvm_stats(&snap.st);
	arena_span(&snap.span);
	snap.slab_free_bytes = slab_free_bytes(&snap.st);
	snap.requested_bytes = pcp_requested();
	snap.handed_bytes = frag_handed_bytes(&snap.st);
	snap.metadata_bytes = frag_metadata_bytes();
	STAP_PROBEV(uvmalloc, snapshot, &snap);
}

void probes_init(void) { trace_on_snapshot(send_snapshot); }

/* The last counters, so that a tracer's totals are the program's own at exit (exit(), not _exit() or a signal). */
__attribute__((destructor)) static void trace_at_exit(void)
{
	if (UVM_TRACED(snapshot) && atomic_load_explicit(&uvm_ready, memory_order_acquire))
		trace_snapshot_slow(true);
}
