/*
 * heap.h - the thread heap: everything one thread owns (mimalloc's
 * mi_heap_t).  Its area caches (pcp.h), its slabs (slab.h), their
 * counters, its spare area objects and its inbox of areas other threads
 * freed, found with one TLS load.  One registry, one pthread key, one exit
 * path.
 *
 * The owner works on its heap with plain loads and stores: no lock, no
 * atomic read-modify-write.  Every operation sits between heap_enter() and
 * heap_leave(), which only mark the heap busy.  Another thread that must
 * touch the caches (decay of an idle thread, uvm_purge, fork) claims the
 * heap: it raises `claimed`, then membarrier() makes every running thread
 * execute a full barrier, so either the owner's next heap_enter() sees the
 * claim and waits, or the claimer sees the owner busy and waits for it to
 * leave (the asymmetric Dekker pattern of userspace RCU).  The owner pays
 * two stores and a load per operation; the claimer a syscall, on slow paths
 * only.  Where the kernel lacks membarrier (before 4.14), other threads'
 * caches are never claimed: they drain only at their owner's exit.
 *
 * The inbox (its list, its count and when it filled) is all other threads
 * write: a free of another thread's area that the freeing thread does not
 * keep (pcp_adopt: a large one, or one its cache has no room for) pushes it
 * with one compare-and-swap, and the owner takes the whole list with one
 * exchange on its next miss.  An owner that does not run takes nothing in:
 * at 64 threads on 2 CPUs freeing each other's blocks (allocwork stress,
 * before the freeing thread kept them), sleeping threads' inboxes held
 * 150 MiB of areas at the peak, for 80 MiB live.  So an inbox that has held more than
 * HEAP_INBOX_PAGES for HEAP_INBOX_WAIT_NS takes no more: later frees go
 * to the node's pool, where any running thread's miss finds them, or
 * lazily (stress -t 64: peak RSS 253 -> 231 MB, the medians of 11
 * interleaved runs, its worst run 274 -> 244).  A producer whose consumers
 * free its blocks takes its inbox in on every miss, so its inbox does not
 * age: prodcons is unchanged at 10 ms, but at 4 ms (stress -13 to -19 %)
 * its peak RSS rose 4 % and its faults 7 %.  Heaps are never
 * unmapped; an exited thread's heap is vacant: its slabs are orphaned, but
 * its area cache, still backed, waits (up to the thread's high, decaying
 * as an idle thread's) for the next thread, which adopts the heap: one such
 * warm heap per CPU at most, the others' caches drain whole; one that
 * decay or uvm_purge empties is warm no more (heap_cooled).
 */
#ifndef UVM_HEAP_H
#define UVM_HEAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pcp.h"
#include "slab.h"

struct heap {
	/* First the fields other threads touch at any time: a re-used heap is cleared from busy on. */
	struct vmap_area *_Atomic inbox; /* pushes go on while a new thread takes the heap */
	_Atomic uint64_t inbox_held;     /* pages and areas pushed since the owner last took the inbox (INBOX_AREA_SHIFT) */
	_Atomic uint64_t inbox_full_at;  /* when they passed HEAP_INBOX_PAGES (coarse_ns) */
	atomic_bool retired;             /* its thread is exiting or gone (vacant): frees of its areas go to the node */
	unsigned busy;                   /* the owner is between heap_enter and heap_leave */
	_Atomic unsigned claimed;        /* another thread holds the caches: the owner waits */
	bool dead;                       /* a fork child's copy of another thread's heap: never touched again */
	bool vacant;                     /* its thread exited, no other has adopted it yet (registry lock) */
	bool warm;                       /* vacant with its area cache kept (registry lock): heap.c's thread_exit */
	long prof_left;                  /* bytes until the next sample (prof.h); 0 in a fresh heap: its first call draws */
	long prof_beyond;                /* the drawn gap's bytes past prof_left (prof.c's count_down) */
	size_t prof_rate;                /* the rate the gap was drawn for */
	uint64_t prof_rng;
	struct list_head link;           /* the registry's list of every heap */
	struct list_head vacant_link;    /* the registry's vacant list, while vacant */
	struct slab_heap slab;
	struct pcp pcp;                  /* last: its lists are sized by the NUMA node count */
};

extern __thread struct heap *uvm__heap __attribute__((tls_model("initial-exec")));

/* Set up the registry for nodes NUMA nodes (pcp's lists) on cpus CPUs.  0 or an errno. */
int heap_init(unsigned nodes, unsigned cpus);
struct heap *heap_attach(void);

/* The calling thread's heap, made on first use; NULL once the thread has passed its exit. */
static inline struct heap *heap_self(void)
{
	struct heap *h = uvm__heap;

	return likely(h) ? h : heap_attach();
}

/*
 * Whether h's thread has allocated: an area past its cache, or a slab.  A
 * thread that only frees (heap.c) takes no other thread's areas into its
 * cache (pcp_adopt), where it would keep them from their owners unused:
 * allocwork prodcons -t 8, whose consumers allocate nothing, 10.3 -> 13.7
 * MiB of peak RSS.  A thread that allocates does (stress -t 2 -s 4: 15.2
 * MiB with a rule of areas only, where its threads' first frees come before
 * their first area, 13.9 without).
 */
static inline bool heap_allocated(const struct heap *h) { return h->pcp.misses || h->pcp.allocs || h->slab.refills; }

void heap_enter_slow(struct heap *h);

/* Mark h busy unless it is claimed: false (and nothing held) then.  The inline hit paths, which must not call out. */
static inline bool heap_try_enter(struct heap *h)
{
	__atomic_store_n(&h->busy, 1, __ATOMIC_RELAXED);
	atomic_signal_fence(memory_order_seq_cst); /* the claimer's membarrier orders this store before the load */
#if defined(__x86_64__) && __GNUC__ >= 11 && !defined(__SANITIZE_THREAD__)
	/*
	 * One compare of the flag in memory and one jump: the compiler loads an
	 * atomic into a register and tests it there (an instruction more on
	 * each side of a pair).  The memory clobber keeps it an acquire: no load
	 * of the caches may move above it (an x86 load is one).  ThreadSanitizer
	 * sees no acquire in an asm, so its builds take the atomic.
	 */
	asm goto("cmpl $0, %0\n\tjne %l[claimed]" : : "m"(h->claimed) : "cc", "memory" : claimed);
	return true;
claimed:
	__attribute__((cold));
#else
	if (likely(!atomic_load_explicit(&h->claimed, memory_order_acquire)))
		return true;
#endif
	__atomic_store_n(&h->busy, 0, __ATOMIC_RELEASE);
	return false;
}

/* Mark h busy, waiting out a claim. */
static inline void heap_enter(struct heap *h)
{
	if (unlikely(!heap_try_enter(h)))
		heap_enter_slow(h);
}

static inline void heap_leave(struct heap *h)
{
	__atomic_store_n(&h->busy, 0, __ATOMIC_RELEASE);
}

#define HEAP_INBOX_PAGES 64

/*
 * heap.inbox_held: the pages pushed in its low INBOX_AREA_SHIFT bits, the
 * areas above, so that a push counts both with one atomic add and a
 * reader (uvm_stats, which counts them as cached) gets a pair that goes
 * together.  2^40 pages is more than any address space; the area count
 * only wraps past 2^24 pushes with no take, and only it.
 */
#define INBOX_AREA_SHIFT 40
static inline uint64_t inbox_pages(uint64_t held) { return held & (((uint64_t)1 << INBOX_AREA_SHIFT) - 1); }
static inline uint64_t inbox_areas(uint64_t held) { return held >> INBOX_AREA_SHIFT; }
#define HEAP_INBOX_WAIT_NS (10 * 1000 * 1000ull)
/*
 * Push an area another thread freed onto its owner's inbox; false (nothing
 * pushed) when the inbox has held more than HEAP_INBOX_PAGES for
 * HEAP_INBOX_WAIT_NS without its owner taking it in, unless always (an area
 * whose span only a holder of h may cut, vnode.h).
 */
bool heap_inbox_push(struct heap *h, struct vmap_area *va, bool always);
/* Move the whole inbox onto out (the owner, or anyone for a heap no thread owns); false if it was empty. */
bool heap_inbox_take(struct heap *h, struct list_head *out);

/*
 * Registry walks for other threads, under the registry lock: fn(h, owned,
 * arg) for every heap.  owned: h is claimed (its owner kept out), vacant,
 * or the caller's own, so its caches may be used; otherwise (claims
 * impossible, a dead heap) only its inbox may.
 */
void heap_for_each_claimed(void (*fn)(struct heap *h, bool owned, void *arg), void *arg);
/*
 * A warm vacant heap whose area cache a walk of heap_for_each_claimed
 * emptied (decay, uvm_purge): warm no more, so that it holds none of the
 * warm places a later exit may take, and behind the warm ones for adoption.
 */
void heap_cooled(struct heap *h);
/*
 * fn(h, arg) for every heap (running threads', vacant ones, a fork
 * child's dead ones), unclaimed: counters are read racily, as words.  A
 * vacant heap's counters were folded into the process's, and cleared, at
 * its thread's exit.
 */
void heap_for_each_live(void (*fn)(struct heap *h, void *arg), void *arg);

/* Bytes of all heaps made. */
size_t heap_bytes(void);

void heap_fork_prepare(void);
void heap_fork_parent(void);
void heap_fork_child(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void heap_describe(struct uvm_descriptor *d);

#endif
