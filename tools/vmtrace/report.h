/*
 * report.h - what vmtrace prints: per interval, for each traced process,
 * rates and state computed from the library's own counters (the snapshot
 * probe); at the end, totals, the log2 histograms of the sampled
 * allocations and the top call sites by bytes.
 */
#ifndef VMTRACE_REPORT_H
#define VMTRACE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "chart.h"
#include "uvmalloc.h"
#include "vmtrace.h"

struct proc_maps;

struct proc {
	pid_t pid;
	bool have_base, fresh, sample_set, gone;
	bool heap_set;               /* --heap wrote its rate into the process (put back to 0 at the end) */
	uint64_t heap_rate;          /* the process's heap profile rate while traced (0: not known) */
	struct uvm_stats base, last; /* the interval's start, and the latest snapshot */
	uint64_t span[VT_SPAN_WORDS]; /* the latest snapshot's committed span: bytes, free bytes, free ranges, largest;
				       * then freed slab objects' bytes, requested and handed out bytes, metadata */
	uint64_t span_base[VT_SPAN_WORDS]; /* the same at the interval's start */
	uint64_t rss_bytes;           /* the process's resident memory when the snapshot was read */
	uint64_t faults, faults_base; /* its minor page faults then (/proc/PID/stat), and at the interval's start */
	struct chart chart;           /* one point per interval, for --svg */
	uint64_t base_ns, last_ns;   /* when they were taken (CLOCK_MONOTONIC, as bpf_ktime_get_ns) */
	uint64_t snapshots;          /* snapshot sequence seen last (odd values skipped) */
	struct proc_maps *maps;
};

struct report {
	FILE *out;
	bool json;
	bool zero_base;    /* processes started under vmtrace: counts from zero, not from the first snapshot */
	const char *svg;   /* --svg: the chart of every process's intervals, written at the end */
	uint64_t start_ns; /* and when they started */
	struct proc *procs;
	size_t nprocs, cap;
	uint64_t events[VT_NR_EVENTS], events_base[VT_NR_EVENTS];
};

struct proc *report_proc(struct report *r, pid_t pid);
/*
 * Print the interval of dt seconds that ends t seconds after the start: a
 * line for each process that sent a snapshot during it, its rates taken
 * over the time between its snapshots (a process on its fast paths alone
 * may send none for a while); then start the next interval.
 */
void report_interval(struct report *r, double t, double dt);
struct vt_hists {
	uint64_t size[VT_HIST], latency[VT_HIST];
};
struct vt_site_row {
	pid_t pid;
	int api;
	uint64_t caller, bytes, count;
};
/* The end: totals per process, histograms and the top sites (sorted by bytes, n of them). */
void report_final(struct report *r, const struct vt_hists *h, struct vt_site_row *sites, size_t n);

#endif
