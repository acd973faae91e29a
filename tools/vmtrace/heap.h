/*
 * heap.h - vmtrace --heap: the sampled allocations made while tracing and
 * not yet freed (bcc memleak -o's question), by stack, per process, from
 * the prof_alloc and prof_free probes.  The BPF side keeps each outstanding
 * block and copies each stack once from the process (vmtrace.bpf.c); this
 * side groups them and names the frames in the mappings it copied while
 * the process ran, so a command that exited is still named.
 */
#ifndef VMTRACE_HEAP_H
#define VMTRACE_HEAP_H

#include "report.h"

/* Print each traced process's outstanding allocations by stack (top stacks each), from the maps' fds. */
void heap_report(struct report *r, int blocks_fd, int stacks_fd, int top);
/* The rate a running process samples at: its own, else rate written in (--heap-sample). */
void heap_start(struct proc *p, uint64_t rate);
/* Put back the rate of each process heap_start wrote it into. */
void heap_stop(struct report *r);

#endif
