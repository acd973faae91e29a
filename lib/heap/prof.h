/*
 * prof.h - heap profiles: allocations sampled by bytes, each kept with its
 * full call stack until it is freed (jemalloc's prof, tcmalloc's
 * HEAPPROFILE).
 *
 * Sampling is a Poisson process over the bytes a thread allocates, of mean
 * rate bytes (UVM_PROF_SAMPLE): every thread counts down its own draw of an
 * exponential gap and samples the allocation that crosses zero, so an
 * allocation of size s is sampled with probability 1 - exp(-s / rate),
 * independently of all others, and one of rate bytes or more always.  A
 * sample stands for size / that probability bytes (its weight), which makes
 * the live bytes estimated per stack unbiased.  Unsampled, an allocation
 * costs the countdown's subtraction and test, which an allocation of rate
 * bytes or more always fails (prof.c's count_down).
 * A new rate (uvm_option_set, or vmtrace --heap writing it in) zeroes every
 * live heap's countdown, so each thread's next allocation draws again.
 * That store races the owner's subtraction and may be lost: sampling off,
 * the countdown still runs out every PROF_RECHECK bytes, to look again.
 *
 * A sampled allocation is always an area of its own, a small object too
 * (tcmalloc's way), marked VA_PROF and live as VA_LIVE, so that the owner's
 * in-line frees pass it to the slow path, where prof_forget drops it.
 * Stacks are unwound from DWARF CFI (Debian's programs keep no frame
 * pointers): libunwind's unwinder where installed, else libgcc's (prof.c);
 * the leading frames inside this library are left out, so a stack starts
 * at the program's call.
 *
 * The stack table is what readers outside the process walk (vminfo --heap,
 * through the descriptor; vmtrace --heap copies a stack on the prof_alloc
 * probe): an array of struct prof_stack, entries never moved or reused,
 * each with the estimated live bytes and count of its sampled blocks, and a
 * sequence counter, odd while a writer changes it.
 */
#ifndef UVM_PROF_H
#define UVM_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap.h"
#include "util.h"
#include "vmap.h"

#define PROF_DEPTH 64           /* frames kept per stack */
#define PROF_STACKS 16384       /* distinct stacks; later ones count in the last entry, which has no frames */
#define PROF_RECHECK ((long)64 << 20) /* sampling off: bytes between a thread's looks at the rate */
#define PROF_LEAKS_RATE (512 << 10) /* UVM_LEAKS=1's rate when UVM_PROF_SAMPLE is 0 */

struct prof_stack {
	uint64_t hash;
	uint32_t depth, pad;
	double bytes, count; /* estimated live bytes and allocations of its sampled blocks */
	uint64_t samples;    /* its sampled blocks now live */
	uint64_t frames[PROF_DEPTH]; /* return addresses, innermost first */
};

/* Mean bytes between samples, 0 = off: UVM_PROF_SAMPLE, uvm_option_set, or vmtrace writing it in. */
extern uvm_hidden volatile size_t uvm__prof_rate;

/*
 * The countdown: true when this allocation of size bytes must ask
 * prof_take.  On x86-64 one subtraction from memory and one jump: the
 * compiler, left to itself, merges the two paths' subtractions into a
 * load, a subtraction, a store and a test (3 more instructions per call).
 */
static inline bool prof_due(struct heap *h, size_t size)
{
#if defined(__x86_64__) && __GNUC__ >= 11
	asm goto("subq %1, %0\n\tjs %l[due]" : "+m"(h->prof_left) : "r"(size) : "cc" : due);
	return false;
due:
	__attribute__((cold));
	return true;
#else
	return unlikely((h->prof_left -= (long)size) < 0);
#endif
}

/* After prof_due: whether to sample this allocation (the countdown drawn again when it ran out, or the rate changed). */
bool prof_take(struct heap *h, size_t size);
/* The sampled allocation p (an area, or NULL when it failed) of size bytes asked: its stack recorded.  Returns p. */
void *prof_record(void *p, size_t size);
void prof_drop(struct vmap_area *va);
/* Every free of an area, once it is taken: a sampled block leaves the profile. */
static inline void prof_forget(struct vmap_area *va)
{
	if (unlikely(va->flags & VA_PROF))
		prof_drop(va);
}

void prof_init(void);
/*
 * A copy of the live stacks (samples > 0), largest estimate first, into
 * out (room for max); the number copied.  Under the table's lock: for the
 * exit report and tests, not for readers in other processes.
 */
size_t prof_live_stacks(struct prof_stack *out, size_t max);

void prof_fork_prepare(void);
void prof_fork_parent(void);
void prof_fork_child(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void prof_describe(struct uvm_descriptor *d);

#endif
