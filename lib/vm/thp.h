/*
 * thp.h - UVM_THP=auto's verdict: whether a huge page's first touch costs
 * less than the 512 small faults it stands for, judged from timed first
 * touches as the program runs (thp.c).
 */
#ifndef UVM_THP_H
#define UVM_THP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the next fresh candidate of bytes gets: huge pages while they pay; while they do not, none, or now and then one huge page. */
enum thp_try { TRY_NONE, TRY_ONE, TRY_ALL };
enum thp_try thp_pays(size_t bytes);
/* The verdict as it stands, counting no candidate: whether huge pages pay. */
bool thp_huge_now(void);
/*
 * Whether a fresh huge area of bytes given while huge pages pay has its
 * first page timed: one per 16 MiB of them, and any while none has been
 * (a process's first large buffer would otherwise be backed blind).
 */
bool thp_time_due(size_t bytes);
/* Touch the huge page at addr (MADV_HUGEPAGE, not yet faulted) first, timed: a sample for the verdict. */
void thp_touch(uintptr_t addr);
/* A huge first touch of ns nanoseconds into the verdict (thp_touch's; tests feed their own). */
void thp_sample(uint64_t ns);
/* The verdict from the two means: true when a huge page costs more than its small pages. */
bool thp_judge(uint64_t huge_ns, uint64_t small_ns);

/* The verdict and what it rests on, read racily (UVM_STATS). */
struct thp_stats {
	uint64_t huge_ns;  /* running mean of a huge page's first touch; 0: none timed */
	uint64_t small_ns; /* of a small page's (the probe) */
	uint64_t samples;  /* huge first touches timed */
	uint64_t declined; /* bytes of candidates given small pages because huge ones did not pay */
	bool small;        /* the verdict now */
};
void thp_stats(struct thp_stats *st);
/* Its part of the exported descriptor (descriptor.c): where the verdict's counters are. */
struct uvm_descriptor;
void thp_describe(struct uvm_descriptor *d);

#endif
