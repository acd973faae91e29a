/*
 * probes.h - the parts of the probes (trace.h) that need the whole
 * library up: the alloc probe's sampling, which may be a program's first
 * call and brings the library up, and the snapshot's figures, read from
 * every layer (probes.c registers them with trace.c at set-up).
 */
#ifndef UVM_PROBES_H
#define UVM_PROBES_H

#include <stdbool.h>

#include "trace.h"

/* Register the snapshot's sender (set-up). */
void probes_init(void);

/* The countdown ran out (or never started): whether to sample this call; the countdown starts again. */
bool trace_sample_restart(void);

/* Per thread, so sampling shares no cache line; a thread's first call is sampled. */
static inline bool trace_sample_due(void)
{
	return UVM_TRACED(alloc) && (trace_countdown <= 1 ? trace_sample_restart() : (--trace_countdown, false));
}

#endif
