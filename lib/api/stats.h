/*
 * stats.h - uvm_stats() gathers every layer's counters; UVM_STATS=1 prints
 * them at exit.
 */
#ifndef UVM_STATS_H
#define UVM_STATS_H

/* Keep a copy of stderr for the reports at exit, when UVM_STATS or UVM_LEAKS asks for one. */
void stats_init(void);
/* That copy (the stats stream), or -1. */
int stats_stream(void);

#endif
