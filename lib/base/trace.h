/*
 * trace.h - USDT probes, provider "uvmalloc", for tools/vmtrace and any
 * USDT-aware tool (bpftrace, perf, SystemTap).
 *
 * Every probe has a semaphore, hidden in this library so that a program
 * that links it cannot copy it away from the kernel's reach (a COPY
 * relocation would make a probe attached to a running process never
 * fire).  Untraced, a probe costs the test of its semaphore; its arguments
 * are not even computed.  The probe sites are sdt.h's 1-byte nops: with
 * 5-byte nops, which Linux 6.18 rewrites into a call to a trampoline (4x
 * cheaper when traced), a traced process that forked while tracing had its
 * children killed by SIGSEGV (tests/test_vmtrace.py keeps that case).
 *
 * A traced probe costs microseconds, so the always-on probes sit on slow
 * paths only.  Per-allocation probes fire for one call in
 * uvm__trace_sample, a number the tracer writes into the process (0, the
 * default: never).  The snapshot probe carries the library's own
 * counters (struct uvm_stats), so a tracer's counts are exact however
 * sparsely it samples.
 *
 * Probes and their arguments:
 *   snapshot(struct uvm_stats *)          at most every UVM_TRACE_INTERVAL_NS, from slow paths, and at exit;
 *                                          the struct is followed by a struct uvm_span (arena.h), then
 *                                          the bytes of freed slab objects (slab_free_bytes), bytes
 *                                          requested and handed out all time, and metadata (frag.h)
 *   alloc(size, align, ptr, caller, ns, api)  sampled; ns measured by the library; api 1 = uvm_v*, 0 = malloc family
 *   cache_miss(pages, nid)                 a thread cache had nothing that fits
 *   cache_drain(areas, pages)              a thread cache gave its coldest areas back to the node
 *   pool_miss(pages)                        no pooled area fits: the free tree is next
 *   tree_alloc(start, size, align)          an area carved from the free tree
 *   region_new(start, size, nid)            a new region reserved
 *   purge(areas, bytes, madvise_calls, ns)  a purge, timed by the library
 *   slab_refill(object_size, source)        a class took a slab from outside the thread: 1 orphan, 2 new
 *                                           (not when it moves to another slab of its own: that is too frequent)
 *   slab_release(object_size)               an empty slab went back to the area cache
 *   prof_alloc(ptr, size, bytes, hash, depth, frames)  a heap profile's sample (prof.h): the bytes it stands
 *                                           for, its stack's hash, and its depth return addresses at frames
 *   prof_free(ptr)                          a sampled block freed
 *   thp_verdict(pays, huge_ns, small_ns)    UVM_THP=auto judged for the first time, or turned: whether huge
 *                                           pages pay (1, 0), from the running means of a huge and a small
 *                                           page's first touch (thp.c)
 */
#ifndef UVM_TRACE_H
#define UVM_TRACE_H

#define _SDT_HAS_SEMAPHORES 1
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define UVM_TRACE_INTERVAL_NS (10 * 1000 * 1000)

#define UVM_TRACE_SEMAPHORE(name) uvmalloc_##name##_semaphore
#define UVM_TRACE_DECLARE(name) extern volatile unsigned short UVM_TRACE_SEMAPHORE(name) __attribute__((visibility("hidden")))

UVM_TRACE_DECLARE(snapshot);
UVM_TRACE_DECLARE(alloc);
UVM_TRACE_DECLARE(cache_miss);
UVM_TRACE_DECLARE(cache_drain);
UVM_TRACE_DECLARE(pool_miss);
UVM_TRACE_DECLARE(tree_alloc);
UVM_TRACE_DECLARE(region_new);
UVM_TRACE_DECLARE(purge);
UVM_TRACE_DECLARE(slab_refill);
UVM_TRACE_DECLARE(slab_release);
UVM_TRACE_DECLARE(prof_alloc);
UVM_TRACE_DECLARE(prof_free);
UVM_TRACE_DECLARE(thp_verdict);

#define UVM_TRACED(name) unlikely(UVM_TRACE_SEMAPHORE(name))

/*
 * untraced_alloc(), untraced_snapshot(): whether no one traces the
 * probe, for the entry points' hit paths.  On x86-64 one compare of the
 * semaphore in memory and one jump: the compiler loads the volatile into
 * a register and tests it there, an instruction more a call.
 */
#if defined(__x86_64__) && __GNUC__ >= 11
#define UVM_UNTRACED_FN(name)                                                                                   \
	static inline bool untraced_##name(void)                                                                \
	{                                                                                                       \
		asm goto("cmpw $0, %0\n\tjne %l[traced]" : : "m"(UVM_TRACE_SEMAPHORE(name)) : "cc" : traced); \
		return true;                                                                                    \
	traced:                                                                                                 \
		__attribute__((cold));                                                                          \
		return false;                                                                                   \
	}
#else
#define UVM_UNTRACED_FN(name) \
	static inline bool untraced_##name(void) { return !UVM_TRACED(name); }
#endif
UVM_UNTRACED_FN(alloc)
UVM_UNTRACED_FN(snapshot)

/* Fire probe name with its arguments, which are evaluated only while someone traces it. */
#define UVM_TRACE(name, ...)                                    \
	do {                                                    \
		if (UVM_TRACED(name))                           \
			STAP_PROBEV(uvmalloc, name, __VA_ARGS__); \
	} while (0)

/* One allocation in uvm__trace_sample is timed and reported (alloc probe); UVM_TRACE_SAMPLE sets it first. */
extern uvm_hidden volatile unsigned uvm__trace_sample;
void trace_init(void);
/* The sampling countdown of probes.h's trace_sample_due. */
extern __thread unsigned trace_countdown __attribute__((tls_model("initial-exec")));
uint64_t trace_now_ns(void);
void trace_alloc(size_t size, size_t align, const void *p, const void *caller, uint64_t t0, int api);

/*
 * The snapshot probe, if traced and due.  Call it only where this thread
 * holds no lock of the library: it takes them all to read the counters.
 */
void trace_snapshot_slow(bool force);
/* Who reads and sends a snapshot's figures (probes.c, set-up): a layer above every caller of trace_snapshot. */
void trace_on_snapshot(void (*send)(void));
extern __thread unsigned trace_ticks __attribute__((tls_model("initial-exec")));
static inline void trace_snapshot(void)
{
	/* Slow paths can be frequent (a slab's bump allocations): look at the clock on one call in 64. */
	if (UVM_TRACED(snapshot) && !(++trace_ticks & 63))
		trace_snapshot_slow(false);
}

#endif
