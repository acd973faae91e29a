/*
 * util.h - the small vocabulary every layer of lib/ shares: page arithmetic,
 * an intrusive doubly linked list (the kernel's list_head) and branch hints.
 *
 * Nothing here allocates: lib/ will be malloc, so it can never call malloc.
 */
#ifndef UVM_UTIL_H
#define UVM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define UVM_PAGE_SHIFT 12
#define UVM_PAGE_SIZE ((size_t)1 << UVM_PAGE_SHIFT)

/* The name a macro expands to, as a string (an alias attribute names the renamed function, track.h). */
#define UVM_STR_(x) #x
#define UVM_STR(x) UVM_STR_(x)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define uvm_noinline __attribute__((noinline))
#define uvm_always_inline inline __attribute__((always_inline))
/*
 * An entry point of the hit paths, started on a cache line: where it began
 * 16 bytes further on, after unrelated code grew, malloc+free of 64 B took
 * 3.95 ns a pair instead of 3.70, the same instructions.
 */
#define uvm_entry __attribute__((aligned(64)))
#define uvm_cacheline_aligned __attribute__((aligned(64)))
/*
 * On a declaration of the library's own data: -fvisibility=hidden marks
 * only definitions, so a declared variable was read through the GOT (its
 * address loaded, then the value: a free's region test and a malloc's
 * slab bound one instruction each more than one RIP-relative load).
 */
#define uvm_hidden __attribute__((visibility("hidden")))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* CLOCK_MONOTONIC_COARSE in ns: read in the vDSO, no syscall; for slow paths' rate limits. */
static inline uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * One more in a counter that only its owner writes and other threads read
 * as a word (relaxed loads): on x86-64 one add to memory, which those
 * readers see whole; a relaxed atomic store of the sum took a load and a
 * store more (malloc+free of 4 KiB parked 3 % slower).  ThreadSanitizer
 * does not see the asm's write: the read's race is this design's.
 */
static inline void word_inc(uint64_t *w)
{
#if defined(__x86_64__)
	asm("addq $1, %0" : "+m"(*w));
#else
	__atomic_store_n(w, *w + 1, __ATOMIC_RELAXED);
#endif
}

static inline bool is_pow2(size_t x) { return x && !(x & (x - 1)); }

/* Round up to a power-of-two boundary; the caller checks for overflow. */
static inline uintptr_t align_up(uintptr_t x, size_t a) { return (x + a - 1) & ~(uintptr_t)(a - 1); }
static inline uintptr_t align_down(uintptr_t x, size_t a) { return x & ~(uintptr_t)(a - 1); }

static inline size_t bytes_to_pages(size_t bytes) { return (bytes + UVM_PAGE_SIZE - 1) >> UVM_PAGE_SHIFT; }

/* fls(): index of the highest set bit, 1-based; fls(0) == 0 (as the kernel's). */
static inline unsigned fls_ul(unsigned long x) { return x ? (unsigned)(64 - __builtin_clzl(x)) : 0; }

/* The first bit set in the bitmap map (64-bit words) from bit i on, or n when none lies below bit n. */
static inline size_t bitmap_next(const uint64_t *map, size_t i, size_t n)
{
	while (i < n) {
		uint64_t w = map[i / 64] & (~(uint64_t)0 << (i % 64));

		if (w) {
			size_t b = (i & ~(size_t)63) + (size_t)__builtin_ctzll(w);

			return b < n ? b : n;
		}
		i = (i & ~(size_t)63) + 64;
	}
	return n;
}

/* ---------------------------------------------------------------- lists */

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void list_init(struct list_head *h) { h->next = h->prev = h; }
static inline bool list_empty(const struct list_head *h) { return h->next == h; }

static inline void list_insert_between(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert n right after pos. */
static inline void list_add(struct list_head *n, struct list_head *pos) { list_insert_between(n, pos, pos->next); }
/* Insert n right before pos (at the tail when pos is the head). */
static inline void list_add_tail(struct list_head *n, struct list_head *pos) { list_insert_between(n, pos->prev, pos); }

static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

/* Move every entry of from to the tail of to; from ends empty. */
static inline void list_splice_tail(struct list_head *from, struct list_head *to)
{
	if (list_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	list_init(from);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)
#define list_for_each_entry(pos, head, member)                                  \
	for (pos = list_entry((head)->next, __typeof__(*pos), member);          \
	     &pos->member != (head);                                            \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member)                         \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),          \
	     n = list_entry(pos->member.next, __typeof__(*pos), member);        \
	     &pos->member != (head);                                            \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#endif
