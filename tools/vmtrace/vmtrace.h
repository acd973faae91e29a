/*
 * vmtrace.h - what the BPF side (vmtrace.bpf.c) and the loader (vmtrace.c)
 * share: map value layouts and event numbers.  Plain C types only: the
 * BPF side sees the kernel's types through vmlinux.h, not libc's.
 */
#ifndef VMTRACE_H
#define VMTRACE_H

/* struct uvm_stats as 64-bit words; the loader checks the size against uvmalloc.h. */
#define VT_STATS_WORDS 35
/* What follows it in a snapshot: the committed span's bytes, free bytes, free ranges and largest free range,
 * then the bytes of freed slab objects, the bytes requested and handed out all time, and metadata bytes. */
#define VT_SPAN_WORDS 8
#define VT_HIST 64      /* log2 buckets */
#define VT_MAX_PROCS 4096
#define VT_MAX_SITES 16384
#define VT_ANCESTORS 8  /* how far up a process's parents "follow children" looks */
#define VT_MAX_BLOCKS 262144 /* outstanding sampled blocks (--heap) */
#define VT_MAX_STACKS 16384
#define VT_DEPTH 64     /* lib/heap/prof.h's PROF_DEPTH */

enum vmtrace_event {
	VT_SNAPSHOT,
	VT_ALLOC,        /* sampled allocations */
	VT_CACHE_MISS,
	VT_CACHE_DRAIN,
	VT_CACHE_DRAINED_PAGES,
	VT_POOL_MISS,
	VT_TREE_ALLOC,
	VT_REGION_NEW,
	VT_PURGE,
	VT_PURGE_AREAS,
	VT_PURGE_BYTES,
	VT_PURGE_CALLS,
	VT_PURGE_NS,
	VT_SLAB_REFILL,
	VT_SLAB_NEW,     /* refills that took a new slab */
	VT_SLAB_RELEASE,
	VT_THP_VERDICT,  /* UVM_THP=auto's verdicts: its first, then each turn */
	VT_THP_SMALL,    /* those that said huge pages do not pay */
	VT_NR_EVENTS
};

/* The latest snapshot of one process. */
struct vt_snap {
	unsigned long long seq; /* odd while the BPF side writes */
	unsigned long long ns;  /* bpf_ktime_get_ns() when it came */
	unsigned long long words[VT_STATS_WORDS + VT_SPAN_WORDS];
};

struct vt_site {
	unsigned int tgid, api;
	unsigned long long caller;
};

struct vt_site_val {
	unsigned long long bytes, count;
};

/* --heap: a sampled block outstanding, and a stack seen, per process. */
struct vt_block {
	unsigned int tgid, pad;
	unsigned long long ptr;
};

struct vt_block_val {
	unsigned long long hash, bytes, size; /* bytes: what the sample stands for */
};

struct vt_stack_key {
	unsigned int tgid, pad;
	unsigned long long hash;
};

struct vt_stack {
	unsigned int depth, pad;
	unsigned long long frames[VT_DEPTH];
};

#endif
