/*
 * stats.h - uvm_stats() gathers every layer's counters; UVM_STATS=1 prints
 * them at exit.
 */
#ifndef UVM_STATS_H
#define UVM_STATS_H

/* Keep a copy of stderr for the summary at exit, when UVM_STATS=1. */
void stats_init(void);

#endif
