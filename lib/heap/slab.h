/*
 * slab.h - small objects (the kmalloc beside our vmalloc).
 *
 * Size classes of 16 bytes up to 128, then four per power of two and one
 * an eighth above each from 256 (slab.c's uvm__slab_class_size), up to UVM_SLAB_MAX
 * (at most 8 KiB), and the classes above a page that are smaller than
 * their sizes' pages, up to 14 KiB (slab_serves); the last, 16 KiB,
 * serves no size and ends slab_class_aligned's walks.  A slab is one 64 KiB vmap area, aligned to
 * 64 KiB, all of it objects; its header is the record of its chunk in the
 * region's chunk table (arena.h), found in O(1) from the pointer's address,
 * and the page map says whether a slab starts at pointer & ~(64 KiB - 1).  Each
 * thread owns its slabs (its slab heap, part of the thread heap, heap.h):
 * it allocates and frees into them with no atomic operation, its last
 * freed objects of each class kept in hand (an array in its heap, reused
 * hottest first: other threads' objects too, while their owners run);
 * what a full hand cannot keep of another thread's, and every free into
 * an orphan, is pushed onto its slab's remote list with one
 * compare-and-swap, and the owner collects them when it runs dry.
 * Classes of 4 KiB and up keep their free state in the slab's header, a
 * bitmap, and write no freed object but those in the owner's hand
 * (slab_map_class).
 * An empty slab goes back to the area caches, and from there to pools and
 * the kernel.  Slabs of an exited thread are orphaned and adopted by the
 * next thread that needs a slab of that class; one that other threads'
 * frees empty first goes to the node's lazy list.  A thread past its exit (a
 * late destructor of the program's) allocates from one shared slab heap
 * under a lock.
 */
#ifndef UVM_SLAB_H
#define UVM_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "util.h"
#include "uvmalloc.h"

#define SLAB_SIZE ((size_t)64 << 10)
/*
 * A slab's area is one chunk, its last page the area's guard page, so that
 * slabs lie side by side: with a guard page past the chunk, each slab took
 * two chunks of address space, half of every huge page that slabs are cut
 * from (SLAB_HUGE_AFTER).  Its objects use that page too, which guards
 * nothing unless UVM_GUARD makes guard pages real (then they stop short).
 */
#define SLAB_AREA_BYTES (SLAB_SIZE - UVM_PAGE_SIZE)
/*
 * A thread whose slabs hold this many bytes of objects takes new slabs from
 * huge pages (area_alloc_stocked): one fault backs 32 slabs.  Past this,
 * the 2 MiB a huge page rounds up to is at most an eighth of what the
 * thread's slabs hold, and a program of few small objects keeps 4 KiB
 * pages (a thread that carved 2 MiB was enough for Redis, but held 3 MiB
 * more of allocwork larson's 7.5).
 */
#define SLAB_HUGE_AFTER ((uint64_t)16 << 20)
#define SLAB_OBJ_MAX ((size_t)16 << 10)
/* 16..128 by 16, 4 per power of two to 8 KiB, 5 an eighth above 256..4096, then 9, 10, 14 and 16 KiB (slab.c) */
#define SLAB_CLASSES (8 + 4 * 6 + 5 + 4)
#define SLAB_MAG 64               /* freed objects a thread keeps in hand per class at most (slab_heap.mag; slab.c's hand_room) */
#define SLAB_MAP_FIRST 31         /* the class of 4 KiB: slab_map_class */

/*
 * Whether class c keeps its free state in its slabs' headers (objects of a
 * page and more, at most 16 to a slab): a bitmap of free objects (the
 * owner's, slab.map) and one of other threads' frees (slab.remote), where
 * the smaller classes link freed objects through their first word.  A freed
 * object is then not written (but in hand, below): a block that a program
 * allocated and never wrote is not faulted in by its free (vmbench full_fit
 * through malloc, 4 KiB objects: 134 MiB of peak RSS with a link in each,
 * 3.7 without), and a freed object's pages could be given back while its
 * slab lives (slab_trim).  The bit is also an exact double-free test, where
 * a link class needs its mark and a walk.  The owner keeps its own freed
 * objects of these classes in hand too, a slab's worth at most, out of the
 * map and marked as a link class's (the mark is what sends a free to look
 * through the hand; a look on every free cost 12 % in time), and frees past
 * a full hand go into the map unwritten.  Without a hand, a class of 4-14
 * KiB has 4-16 objects a slab, and a program freeing at random kept its
 * current slab full: nearly every malloc switched slabs (refill, parking
 * the full one) for the one object a free had just given back.  Random
 * replacement of 4-7 KiB blocks (1 000 live): 59 -> 40-45 ms, tcmalloc 34.
 * (The first hand, in instructions alone: malloc+free of 4 KiB 120 -> 137,
 * allocwork local 184 -> 190 M.)  Its objects stay counted in their slabs,
 * and uvm_purge sends them back to their maps first.  The classes of 1-3.5
 * KiB could keep maps too (at most 64 objects), and were tried again with
 * hands: vmbench pcpu_alloc, whose objects are never written, then faults
 * half as often (4 630 -> 2 360) at 20 MiB of peak RSS against 29, but
 * malloc+free of 1-3.5 KiB costs 93 instructions against 80, and frees
 * past a full hand look through it (64 objects at 1 KiB): allocwork batch
 * 442 -> 714 M instructions (469 M with a read of the mark first, which
 * faults a never-written block in), refill 146 -> 184 M.  Programs write
 * what they allocate, so those classes keep their links.
 */
static inline bool slab_map_class(unsigned c) { return c >= SLAB_MAP_FIRST; }

/*
 * The remote list's head word also counts its objects, in the bits above
 * a user address (regions lie below 2^ARENA_ADDR_BITS, arena.c): the owner takes
 * the whole list with one exchange and needs no walk to count it, and the
 * freer that makes an orphaned slab's count reach its used objects knows
 * the slab is empty.  A map class's remote word is a bitmap of the objects
 * other threads freed, its count the bits set.
 */
#define SLAB_REMOTE_SHIFT ARENA_ADDR_BITS
static inline void *slab_remote_head(uintptr_t r) { return (void *)(r & (((uintptr_t)1 << SLAB_REMOTE_SHIFT) - 1)); }

/*
 * A slab's place among the orphans (slab.orphan): none, orphaned since the
 * last decay, orphaned for a whole decay period, its free pages given back
 * (slab_decay_orphans).
 */
enum slab_orphan { SLAB_OWNED, SLAB_ORPHAN_NEW, SLAB_ORPHAN_AGED, SLAB_ORPHAN_TRIMMED };

/*
 * A slab's header: its chunk's record in the region's chunk table, not in
 * the slab.  Headers in the slabs, at one offset of each, all fell in one
 * set of every cache whose way is 64 KiB or less (this machine's L2: 512
 * KiB, 8 ways), and on a page of their own slab each: a program freeing
 * into many slabs missed on every header, in the cache and in the TLB.
 * The table packs them, 32 to a page, spread over every set; and no write
 * past a block can reach a header.  Its first line holds what the owner's
 * hits read and write; other threads' compare-and-swaps on remote go to
 * the second, so they do not take the owner's line away.
 */
struct slab {
	struct slab_heap *fast;          /* the owner while it has one, plus 1 while a link class's slab is full, else NULL: publish */
	void *free;                      /* local free list, the owner's (a map class's: NULL) */
	uintptr_t mask;                  /* from the key, the slab and its life: links are stored xor it (safe-linking), a freed object's second word holds it */
	uintptr_t base;                  /* the slab's memory: SLAB_SIZE bytes of objects, the first at base */
	unsigned carved, room;           /* objects handed out at some time, of all there are: the rest never used */
	unsigned used, size;
	uint32_t inv;                    /* size is m 2^shift with m odd, inv m's inverse mod 2^32: slab_index */
	uint8_t cls, shift;
	uintptr_t map;                   /* a map class's free objects, the owner's: bit i set while object i is carved and not handed out */
	_Atomic uintptr_t remote;        /* frees by other threads: their count << SLAB_REMOTE_SHIFT | the list's head; a map class's, their bits */
	struct slab_heap *_Atomic owner; /* NULL: orphaned */
	unsigned full;                   /* on the owner's full list; written by the owner, read by other threads' frees (atomics) */
	unsigned orphan;                 /* on an orphan list (sl.lock): enum slab_orphan */
	unsigned orphan_used;            /* used when it was orphaned, which no one changes until it is adopted */
	unsigned life;                   /* which slab this area is: new each time (its mask with it) */
	struct list_head link;           /* the owner's partial or full list, or an orphan list */
	struct vmap_area *va;
};
_Static_assert(offsetof(struct slab, remote) == 64, "the owner's fields fill the header's first line (records are 64-byte aligned)");
_Static_assert(sizeof(struct slab) <= ARENA_CHUNK_BYTES, "a slab header outgrew its chunk record");
_Static_assert(SLAB_SIZE == (size_t)1 << ARENA_CHUNK_SHIFT, "a slab is one chunk of the regions' chunk tables");

/* One thread's slabs. */
struct slab_heap {
	struct slab *cur[SLAB_CLASSES];
	/*
	 * The next free slot of mag[c], by class: mag[c] + the objects in
	 * hand.  A pointer (jemalloc's cache_bin stack_head), not a count: with
	 * a count, both sides indexed mag[c] by a word the other had just
	 * stored, on the loop-carried chain of every malloc-free loop, and
	 * uvm_malloc+uvm_free of 64 B took 7.5 ns a pair; with the pointer
	 * 3.4 ns, where tcmalloc's malloc+free takes 3.2 (interleaved runs of
	 * 30 M pairs; a model of the two stacks alone showed 7.6 against 3.9).
	 */
	void **top[SLAB_CLASSES];
	/* mag[c] + the objects class c's hand keeps at most (slab.c's hand_room): kept, so that the free's test is one compare with memory */
	void **hand_end[SLAB_CLASSES];
	struct list_head partial[SLAB_CLASSES], full[SLAB_CLASSES];
	/* By class, so that bytes are counts times class sizes: no add of a size on the fast paths. */
	uint64_t allocs[SLAB_CLASSES], frees[SLAB_CLASSES];
	/*
	 * Bytes of objects carved in the slabs this thread owns: its own, and
	 * orphans it adopted, whose bytes come with them.  Summed over heaps and
	 * the exited threads' total, carved less live is the freed objects' bytes.
	 */
	uint64_t carved;
	/*
	 * The thread's freed objects, by class, the hottest last (jemalloc's
	 * tcache bins): the next malloc of the class takes the hottest back,
	 * whatever its slab, with no link to read and check, and a free pushes
	 * it with no link to write.  A slab's free list hands out what was
	 * freed into that slab, often long ago and cold, while the program's
	 * last free was into another.  Objects of other threads' slabs too
	 * (slab_free_hit).  They stay counted in their slabs' used objects until
	 * they go onto their slab's list, or home, at the thread's exit; a free
	 * that finds the hand full goes onto its slab's list (or home) itself.
	 */
	void *mag[SLAB_CLASSES][SLAB_MAG];
	unsigned refills; /* slabs switched to or collected: one in SLAB_DECAY_EVERY looks at the area caches' decay */
	unsigned gc_next;                   /* the class whose hand the next refill looks at (slab.c's hand_gc) */
	uint64_t gc_allocs[SLAB_CLASSES];   /* allocs[c] at that look, the last time */
	uint64_t gc_idle;                   /* bit c: class c made no allocation between its last two looks */
	/*
	 * Bit c: another thread freed into a full slab of class c of this
	 * heap's; the next refill of the class looks at its full slabs.  The
	 * one word other threads write here, last, past the hands: a freer
	 * writes it only when its bit is clear, once a refill of the class.
	 */
	_Atomic uint64_t woken;
};
_Static_assert(SLAB_CLASSES <= 64, "a class is a bit of slab_heap.woken");

void slab_heap_init(struct slab_heap *h);
/* Close the hands of h, a heap just made (its hands empty): its thread's first call was a free, as a consumer's is (slab.c's hand_open). */
void slab_hands_close(struct slab_heap *h);
/* A thread that is gone leaves its slabs to others: empty ones are released, the rest orphaned. */
void slab_heap_exit(struct slab_heap *h);
/* Add an exited thread's counters to the process's, and clear them (the heap registry's lock held). */
void slab_heap_fold(struct slab_heap *h);

/* Read UVM_SLAB_MAX and set up the thread-exit hook.  0 or an errno. */
int slab_init(void);
/* UVM_SLAB_MAX: every size up to it is a slab object (slab_serves says which larger ones are too). */
size_t slab_max(void);
/* Slabs ever made (each one area of SLAB_SIZE usable bytes). */
uint64_t slab_made(void);
extern uvm_hidden size_t uvm__slab_max; /* UVM_SLAB_MAX, read at set-up */

/*
 * Whether slabs serve size bytes (1 or more) aligned to align: every size
 * up to UVM_SLAB_MAX, and above it and above a page, up to SLAB_OBJ_MAX, a
 * size whose class is smaller than the size rounded up to pages, which an
 * area would hold: 4097..7168 B, in the classes of 4.5, 5, 6 and 7 KiB, and
 * 8193..10240 and 12289..14336 in those of 9, 10 and 14 KiB.  An area there
 * holds up to a page more than its class, all of it resident once the
 * block's end is written: sqlite's page cache asks for 4368 bytes a page,
 * and its peak RSS was 1.56x glibc's with those blocks as areas of 8 KiB
 * (RESULTS.md); allocwork churn (4-16 KiB blocks) held 7 % more pages than
 * mimalloc with the 8-16 KiB ones as areas.  A size that fills its pages
 * (3585..4096, 7169..8192, 10241..12288, 14337 and up) stays an area, whose
 * recycling loop is 12 % faster than a slab's and which realloc grows in
 * place.  UVM_SLAB_MAX=0: no slabs at all.
 */
bool slab_serves_aligned(size_t size, size_t align);
/*
 * Those sizes above a page, in KiB steps (bit k: sizes 1024 k + 1 .. 1024 (k + 1)): 4097..7168,
 * 8193..10240 and 12289..14336, the classes of 4.5, 5, 6, 7, 9, 10 and 14 KiB.
 */
#define SLAB_FILL_STEPS 0x3370u
/* Whether size is one of those (slabs on or not): a compare and a bit test, test_slab checks it against slab_serves. */
static inline bool slab_fills(size_t size)
{
	return size - (UVM_PAGE_SIZE + 1) < SLAB_OBJ_MAX - UVM_PAGE_SIZE && (SLAB_FILL_STEPS >> ((size - 1) >> 10) & 1);
}

static inline bool slab_serves(size_t size, size_t align)
{
	if (__builtin_expect(align <= 16 && size <= uvm__slab_max, 1)) /* every class is a multiple of 16 */
		return true;
	return slab_serves_aligned(size, align);
}
extern uvm_hidden unsigned char uvm__slab_class[SLAB_OBJ_MAX / 16]; /* class of sizes 16 i + 1 .. 16 (i + 1), by i */
extern uvm_hidden const unsigned short uvm__slab_class_size[SLAB_CLASSES]; /* each class's object size */

/*
 * The smallest class of at least size bytes (1..SLAB_OBJ_MAX) whose objects
 * all sit on align boundaries (a power of two, at most SLAB_OBJ_MAX): one
 * whose size is a multiple of align, slabs being 64 KiB aligned.  Few
 * classes are passed over: every class is a multiple of 16, and of 64 from
 * 320 on.
 */
static inline unsigned slab_class_aligned(size_t size, size_t align)
{
	unsigned c = uvm__slab_class[(size - 1) >> 4];

	while (uvm__slab_class_size[c] & (align - 1))
		c++;
	return c;
}

/*
 * That class, for the hits, where slabs serve size bytes (1 or more) up to
 * UVM_SLAB_MAX aligned to align, at most a page (slab_serves_aligned's
 * first case); else SLAB_CLASSES.
 */
static inline unsigned slab_aligned_class(size_t size, size_t align)
{
	unsigned c;

	if (size - 1 >= uvm__slab_max || align > UVM_PAGE_SIZE)
		return SLAB_CLASSES;
	c = slab_class_aligned(size, align);
	return uvm__slab_class_size[c] <= uvm__slab_max ? c : SLAB_CLASSES;
}

/*
 * Safe-linking, as glibc's: a free object's link to the next is stored xor
 * its slab's mask, which mixes a per-process random key with the slab's
 * address, so that a stray write (a use after free, an overflow into a
 * freed neighbour) cannot plant a pointer malloc would hand out.  The
 * stored word is also rotated by half its width, so that an overflow of its
 * first bytes lands in the high half of the pointer.  Every link read is
 * checked to lie on a 16-byte boundary inside the slab, past its header,
 * before it is used; a bad one aborts naming the slab (slab_corrupt).
 */
static inline uintptr_t slab_rot(uintptr_t v) { return (v >> 32) | (v << 32); }
static inline void *slab_link(const struct slab *s, const void *obj) { return (void *)(slab_rot(*(const uintptr_t *)obj) ^ s->mask); }
static inline void slab_set_link(const struct slab *s, void *obj, const void *next)
{
	*(uintptr_t *)obj = slab_rot((uintptr_t)next ^ s->mask);
}

/* next is NULL (the list's end), or 16-byte aligned inside s's slab: one rotate folds both tests. */
static inline bool slab_link_ok(const struct slab *s, const void *next)
{
	uintptr_t off = (uintptr_t)next - s->base;

	return !next || ((off >> 4) | (off << 60)) < SLAB_SIZE / 16;
}

__attribute__((noreturn, cold)) void slab_corrupt(const struct slab *s, const char *what, const void *where);

/* The slab at base in region r, or NULL: the page map must name a slab area starting there. */
static inline struct slab *slab_at(const struct region *r, uintptr_t base)
{
	struct vmap_area *va = atomic_load_explicit(region_slot(r, base), memory_order_acquire);

	if (!va || va->va_start != base || !(va->flags & VA_SLAB))
		return NULL;
	return region_chunk(r, base);
}


/* The slab that p lies in, or NULL: the page map must name a slab area at p's 64 KiB boundary. */
static inline struct slab *slab_of(const void *p)
{
	uintptr_t base = (uintptr_t)p & ~(SLAB_SIZE - 1);
	struct region *r = region_of(base);

	return r ? slab_at(r, base) : NULL;
}

/*
 * The index of p (in s) among s's objects when p starts one; otherwise a
 * number past every object.  Divisibility by a multiply (Hacker's Delight
 * 10-16): for size m 2^shift with m odd, d (p's offset in the slab) times
 * m's inverse mod 2^32, rotated right by shift, is d / size when size
 * divides d, and above (2^32 - 1) / size >= 2^19 otherwise.  One compare
 * then also tests the boundary.
 */
static inline uint32_t slab_index(const struct slab *s, const void *p)
{
	uint32_t d = (uint32_t)((uintptr_t)p & (SLAB_SIZE - 1)), x = d * s->inv;

	return (x >> s->shift) | (x << ((32 - s->shift) & 31));
}

/* Object i's bit in a map class's bitmaps. */
static inline uintptr_t slab_bit(uint32_t i) { return (uintptr_t)1 << i; }

/* Whether a map class's object of s with this bit is free: in the owner's map or the remote word (read racily by other threads). */
static inline bool slab_map_freed(const struct slab *s, uintptr_t bit)
{
	return (__atomic_load_n(&s->map, __ATOMIC_RELAXED) | atomic_load_explicit(&s->remote, memory_order_relaxed)) & bit;
}

/* The objects on the remote word r of a slab of class c (passed by a caller that may no longer read the slab). */
static inline unsigned slab_remote_count(unsigned c, uintptr_t r)
{
	return slab_map_class(c) ? (unsigned)__builtin_popcountl(r) : (unsigned)(r >> SLAB_REMOTE_SHIFT);
}

/* Whether p (in s) is an object of s that was handed out at some time. */
static inline bool slab_object(const struct slab *s, const void *p)
{
	/* Relaxed: another thread's free reads it while the owner carves (it only grows). */
	return slab_index(s, p) < __atomic_load_n(&s->carved, __ATOMIC_RELAXED);
}

/*
 * A never-used object of s, carved in line (a program filling its heap
 * would otherwise take the slow way once per object), or NULL when none is
 * left.  A link class's object has its free mark written here, where its
 * user's first write would have faulted its page in anyway: a read of the
 * mark first (malloc_usable_size, which Redis calls after every malloc,
 * before it writes the block) mapped the zero page, and the user's write
 * then faulted the page a second time (Redis filled with 300k values: 179k
 * faults, against 130k under tcmalloc).  A map class's object stays
 * unwritten: no free state lies in it, and a block never written is never
 * faulted in (slab_map_class).
 */
static inline void *slab_bump(struct slab_heap *h, struct slab *s)
{
	void *p;

	if (s->carved >= s->room)
		return NULL;
	p = (void *)(s->base + (size_t)s->carved * s->size);
	if (!slab_map_class(s->cls))
		((uintptr_t *)p)[1] = 0; /* not marked free */
	__atomic_store_n(&s->carved, s->carved + 1, __ATOMIC_RELAXED);
	h->carved += s->size;
	return p;
}

/* The head p of s's free list, popped: next is its checked link.  p was written when freed, so clearing its mark faults nothing. */
static inline void *slab_take(struct slab *s, void *p, void *next)
{
	s->free = next;
	((uintptr_t *)p)[1] = 0; /* no longer marked free */
	return p;
}

/* The head of s's free list (not empty), popped and checked. */
static inline void *slab_pop(struct slab *s)
{
	void *p = s->free, *next = slab_link(s, p);

	if (unlikely(!slab_link_ok(s, next)))
		slab_corrupt(s, "free list", p);
	return slab_take(s, p, next);
}

/*
 * The free of p, an object of s (checked; another running thread's) that
 * stays in no hand of h's (full, or a map class's, whose hands keep their
 * owners' objects only): home to s.
 */
void slab_send_home(struct slab_heap *h, struct slab *s, void *p);

/* The lowest free object of s, a map class's slab whose map is not empty, taken. */
static inline void *slab_map_take(struct slab *s)
{
	uintptr_t m = s->map;

	__atomic_store_n(&s->map, m & (m - 1), __ATOMIC_RELAXED); /* relaxed: other threads' double-free tests read it */
	return (void *)(s->base + (size_t)__builtin_ctzl(m) * s->size);
}

/* The objects in h's hand for class c; bounded, for other threads' racy reads. */
static inline unsigned slab_hand_held(const struct slab_heap *h, unsigned c)
{
	uintptr_t n = ((uintptr_t)__atomic_load_n(&h->top[c], __ATOMIC_RELAXED) - (uintptr_t)h->mag[c]) / sizeof(void *);

	return n < SLAB_MAG ? (unsigned)n : SLAB_MAG;
}

/* The hottest object of h's hand for class c (not empty). */
static inline void *slab_hand_pop(struct slab_heap *h, unsigned c)
{
	void *p = *--h->top[c];

	((uintptr_t *)p)[1] = 0; /* no longer marked free */
	h->allocs[c]++;
	return p;
}

/*
 * The owner's hit, as a leaf: an object of class c, the hottest of h's
 * hand for the class, else popped from the free list of the class's
 * current slab of h, or NULL (the caller takes slab_alloc's way).
 */
static uvm_always_inline void *slab_alloc_hit_class(struct slab_heap *h, unsigned c)
{
	struct slab *s = h->cur[c];
	void *p;

	if (h->top[c] != h->mag[c])
		return slab_hand_pop(h, c);
	if (unlikely(!s))
		return NULL;
	if (likely(p = s->free)) {
		void *next = slab_link(s, p);

		/* A bad link goes the slow way, whose pop aborts on it: no call here, which would need the stack aligned. */
		if (unlikely(!slab_link_ok(s, next)))
			return NULL;
		slab_take(s, p, next);
	} else if (s->map) { /* a map class's list is always empty, a link class's map: no class test on a pop */
		p = slab_map_take(s);
	} else if (atomic_load_explicit(&s->remote, memory_order_relaxed) || (p = slab_bump(h, s)) == NULL) {
		return NULL; /* other threads' frees are reused before a never-used object is touched (slab_alloc's way) */
	}
	s->used++;
	h->allocs[c]++;
	return p;
}

/*
 * The owner's hit of a map class, for a size above a page that slabs
 * serve (slab_fills): the hottest object of h's hand for the class, else
 * the lowest free object of the class's current slab, or NULL.  Such a
 * class keeps no free list, so this skips slab_alloc_hit_class's look at
 * it (malloc+free of 5000 bytes 142 -> 133 instructions).
 */
static uvm_always_inline void *slab_map_hit(struct slab_heap *h, size_t size)
{
	unsigned c = uvm__slab_class[(size - 1) >> 4];
	struct slab *s = h->cur[c];
	void *p;

	if (h->top[c] != h->mag[c])
		return slab_hand_pop(h, c);
	if (unlikely(!s || !s->map))
		return NULL;
	p = slab_map_take(s);
	s->used++;
	h->allocs[c]++;
	return p;
}

/* Whether s, just freed into by its owner h, is empty and not the current slab of its class: to be released. */
static inline bool slab_emptied(const struct slab_heap *h, const struct slab *s) { return !s->used && s != h->cur[s->cls]; }
/* Give an empty slab back to the area cache (slab_free_hit's, a thread's exit). */
void slab_release_empty(struct slab *s);

/*
 * A free, as a leaf: p into h's hand for its class (slab_heap.mag) when p
 * is an object of a slab with a running owner, h or another thread, that
 * is not marked free (slab_free checks those for sure): SLAB_FREED.  Past
 * a full hand, an object of h's own slab that is not full goes onto its
 * slab's list in line (a program freeing a structure frees many in a row:
 * that was a call and an owner test more, 30 instructions a free, on
 * every free of such a burst after the first 16): SLAB_FREED, or
 * SLAB_EMPTIED when that emptied a slab that is not the current one (the
 * caller releases it, slab_release_empty).  Another thread's object past
 * a full hand is SLAB_SEND_HOME, with its slab in *s (the caller's tail
 * call of slab_send_home sends it home), as is h's own of a full slab
 * (slab_send_home lists it, which moves the slab back to the partial
 * list).  A map class's object goes into the hand as a link class's does
 * when it is h's own and the hand has room (slab_map_handable); otherwise
 * it is SLAB_MAP, with its slab in *s (the caller's tail call of
 * slab_map_free frees it: into the map unwritten, or home).
 * SLAB_NOT_MINE (nothing done):
 * slab_free decides; SLAB_AREA the same, p known to lie in the first
 * region in a chunk with no fast owner (an area's, most often: the
 * caller's area free starts from that region).  Not the slab itself: the
 * caller's test of a returned pointer cost two instructions, and a call in
 * here its saved registers.
 *
 * The freer keeps another thread's object, as tcmalloc's and glibc's
 * thread caches do: its next malloc of the class gets it back while its
 * line is still in the freer's cache, where sending it home (a remote
 * free, the owner's collect, the owner's next use) moved the line from
 * core to core twice (allocwork stress, whose frees are half another
 * thread's: 0.77x the time; larson 0.94x).  An orphan's objects (no fast
 * owner) still go home the slow way, so that orphans empty and are
 * released instead of circulating through hands.
 */
enum slab_hit { SLAB_NOT_MINE, SLAB_AREA, SLAB_FREED, SLAB_SEND_HOME, SLAB_EMPTIED, SLAB_MAP };

/* p, h's own object of s (not full: s->fast is h), marked free onto s's list past a full hand. */
static inline enum slab_hit slab_list_own(struct slab_heap *h, struct slab *s, void *p)
{
	unsigned c = s->cls;

	((uintptr_t *)p)[1] = s->mask; /* marked free */
	slab_set_link(s, p, s->free);
	s->free = p;
	h->frees[c]++;
	return unlikely(!--s->used && s != h->cur[c]) ? SLAB_EMPTIED : SLAB_FREED;
}

/*
 * The free of p, an object of s (checked; a map class's, with a running
 * owner) that slab_free_hit did not keep in hand: into s's map if s is
 * h's, else home; a double free aborts naming p.  A call of its own, so
 * that the link classes' leaf keeps no register for it.
 */
void slab_map_free(struct slab_heap *h, struct slab *s, void *p);

/*
 * Whether p, a map class's object of s, goes into h's hand on its free in
 * line: s is h's, the hand has room, and p is in neither of s's maps (a
 * double free, which slab_map_free names).  The leaf's look at p's mark
 * then tells whether it is in the hand already.  In line, where it was
 * slab_map_free's first case: malloc+free of 5000 bytes 125 -> 113
 * instructions (callgrind), the link classes' leaf unchanged (its order,
 * this test before the mark's, keeps it from a saved register).
 */
static inline bool slab_map_handable(const struct slab_heap *h, const struct slab *s, const void *p)
{
	return __atomic_load_n(&s->fast, __ATOMIC_RELAXED) == h && h->top[s->cls] != h->hand_end[s->cls] &&
	       !slab_map_freed(s, slab_bit(slab_index(s, p)));
}

static inline enum slab_hit slab_free_hit(struct slab_heap *h, void *p, struct slab **s)
{
	unsigned c;
	void **t;

	uintptr_t a = (uintptr_t)p;
	const struct region *r = &uvm__regions[0];

	/*
	 * The header of p's chunk names a fast owner only while the owner runs,
	 * marked (plus 1) while a link class's slab is full, so that only an
	 * owner's free of a slab that is not full compares equal to the owner
	 * (slab.c's publish keeps it so); a chunk that is no slab has NULL, so
	 * a relaxed load and a test are enough.  The first region only, with no
	 * loop over the others, whose registers the leaf cannot afford: a
	 * pointer in a later region takes the slow way, which finds its slab
	 * all the same.
	 */
	if (a - r->base >= r->size)
		return SLAB_NOT_MINE;
	*s = region_chunk(r, a);
	if (!__atomic_load_n(&(*s)->fast, __ATOMIC_RELAXED))
		return SLAB_AREA;
	if (!slab_object(*s, p))
		return SLAB_NOT_MINE;
	if (unlikely(slab_map_class(c = (*s)->cls)) && !slab_map_handable(h, *s, p))
		return SLAB_MAP;
	/*
	 * A link class's page is resident: its carving wrote the mark
	 * (slab_bump).  A map class's goes into the hand marked as a link
	 * class's, so that only a free that finds the mark looks through the
	 * hand (a look on every free, its trip count unpredictable, took
	 * allocwork-like random frees of 4-7 KiB 12 % longer); the mark is
	 * written anyway, so its read faults only a block never written.
	 */
	if (((uintptr_t *)p)[1] == (*s)->mask)
		return SLAB_NOT_MINE;
	if (unlikely((t = h->top[c]) == h->hand_end[c])) {
		/* Only h changes a fast owner that is h (slab.c's publish): the load is stable. */
		if (__atomic_load_n(&(*s)->fast, __ATOMIC_RELAXED) == h)
			return slab_list_own(h, *s, p);
		return SLAB_SEND_HOME;
	}
	((uintptr_t *)p)[1] = (*s)->mask; /* marked free */
	*t = p;
	h->top[c] = t + 1;
	h->frees[c]++;
	return SLAB_FREED;
}

/* Whether p, a map class's object of s, is in its owner's hand (slab.c): a walk of its pointers, no read of p. */
bool slab_map_in_hand(const struct slab *s, const void *p);

/*
 * Whether a map class's object i of s, whose running owner is o, may be free:
 * freed into a map, or its owner holds objects of the class in hand
 * (slab_check's walk of the hand tells; a call here cost every small
 * block's malloc_usable_size 6 instructions of saved registers).
 */
static inline bool slab_map_unsure(const struct slab *s, const struct slab_heap *o, uint32_t i)
{
	return slab_map_freed(s, slab_bit(i)) || __atomic_load_n(&o->top[s->cls], __ATOMIC_RELAXED) != o->mag[s->cls];
}

/*
 * The usable size of p when p is surely a live object of a slab with a
 * running owner in the first region, else 0 (slab_check decides).
 * malloc_usable_size's way: Redis asks it after every malloc and before
 * every free, and the whole check took 100 instructions a call.  Every
 * freed link-class object carries its mark, so an object without it is
 * live; one with it may be too (user data that looks like it), which
 * slab_check's walk tells.  A map class's object is live when
 * neither of its slab's maps has its bit (slab_map_freed).
 */
static inline size_t slab_live_size(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	const struct region *r = &uvm__regions[0];
	const struct slab *s;
	const struct slab_heap *o;
	uint32_t i;

	if (a - r->base >= r->size)
		return 0;
	s = region_chunk(r, a);
	if (!(o = __atomic_load_n(&s->fast, __ATOMIC_RELAXED)))
		return 0;
	i = slab_index(s, p);
	if (i >= __atomic_load_n(&s->carved, __ATOMIC_RELAXED) ||
	    (slab_map_class(s->cls) ? slab_map_unsure(s, o, i) : ((const uintptr_t *)p)[1] == s->mask))
		return 0;
	return s->size;
}

/* An object of at least size bytes aligned to align, for a request slab_serves; NULL when out of memory. */
void *slab_alloc(size_t size, size_t align);
/*
 * After slab_alloc_hit_class missed: an object of size bytes (1..UVM_SLAB_MAX,
 * 16-byte aligned) from another slab of its class, h's owner calling (the
 * refill without slab_alloc's checks and lookups again); NULL when out of
 * memory.
 */
void *slab_alloc_refill(struct slab_heap *h, size_t size);
/* What a pointer is to the slabs. */
enum slab_ptr {
	SLAB_NONE, /* in no slab: an area's, or nobody's */
	SLAB_BAD,  /* in a slab, but not the start of an allocated object (interior, never handed out, or freed) */
	SLAB_LIVE, /* an allocated object */
};

/* Classify p; for SLAB_LIVE, *usable gets its object size. */
enum slab_ptr slab_check(const void *p, size_t *usable);
/* Free p if it is SLAB_LIVE; returns what p was. */
enum slab_ptr slab_free(void *p);

/*
 * The pages of the free objects of a page and more (the map classes') back
 * to the kernel, while their slabs live: the calling thread's and every
 * orphan's (uvm_purge's part of the slabs).
 */
void slab_trim(void);
/* The same for the orphans that no thread adopted for a whole decay period (pcp_decay, once a second). */
void slab_decay_orphans(void);

void slab_stats(struct uvm_stats *st);
/* Bytes of freed objects in slabs, from the counters and st's live objects (a snapshot's figure; uvm_frag_stats walks the slabs). */
uint64_t slab_free_bytes(const struct uvm_stats *st);
/* Every slab's objects into f's classes, occupancy and slab figures: its header read with no lock, as its owner changes it (bounded words). */
void slab_frag(struct uvm_frag *f);
void slab_fork_prepare(void);
void slab_fork_parent(void);
void slab_fork_child(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void slab_describe(struct uvm_descriptor *d);

#endif
