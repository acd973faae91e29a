/*
 * options.h - every UVM_* setting, from one table (options.c).  The README's
 * table and `uvmdemo --help` print from the same table.
 */
#ifndef UVM_OPTIONS_H
#define UVM_OPTIONS_H

#include <stdio.h>

enum uvm_option_id {
	OPT_ARENA_SIZE, /* bytes of address space per region */
	OPT_LAZY_MAX,   /* lazily freed pages before a purge; 0 = kernel formula */
	OPT_GUARD,      /* 1 = real guard pages with MADV_GUARD_INSTALL */
	OPT_NODES,      /* vmap nodes; 0 = one per CPU, at most 128 */
	OPT_PCP,        /* 0 = no per-thread caches */
	OPT_PCP_HIGH,   /* bytes: the most a thread's cache may grow to */
	OPT_THP,        /* enum thp_mode */
	OPT_HUGETLB,    /* 1 = hugetlb pool pages for huge bodies */
	OPT_POPULATE,   /* 1 = MADV_POPULATE_WRITE fresh areas */
	OPT_FAKE_NUMA,  /* N pretend NUMA nodes; 0 = real */
	OPT_SLAB_MAX,   /* bytes: the largest malloc served by slabs */
	OPT_STATS,      /* 1 = print statistics at exit (preload) */
	OPT_TRACE_SAMPLE, /* initial uvm__trace_sample (vmtrace sets it for a command it starts) */
	OPT_PROF_SAMPLE,  /* bytes: the heap profile's mean sampling gap; 0 = off */
	OPT_LEAKS,        /* 1 = report the live sampled allocations at exit */
	OPT_PROF_UNWIND,  /* enum prof_unwind */
	OPT__COUNT
};

enum thp_mode { THP_NEVER, THP_HUGE_ONLY, THP_ALWAYS, THP_AUTO };
enum stats_mode { STATS_OFF, STATS_TEXT_MODE, STATS_JSON };
enum prof_unwind { UNWIND_AUTO, UNWIND_LIBGCC };

/* Read the environment (secure_getenv: ignored in setuid programs).  Once, at init. */
void options_init(void);
long long option(enum uvm_option_id id);
/* Call fn with the new value whenever uvm_option_set changes id (one watcher a setting: the layer that keeps a copy). */
void option_watch(enum uvm_option_id id, void (*fn)(long long value));
/* The id of the setting called name (with or without its UVM_ prefix), or -1. */
int option_find(const char *name);
/* uvm_option_set's change of a running setting: 0, EPERM (fixed at set-up) or EINVAL (out of range). */
int option_change(enum uvm_option_id id, long long value);
/* Every setting, its value, default and meaning, one line each (uvm_settings). */
void option_print(FILE *f);


#endif
