/*
 * slab.c - size-class slabs carved from vmap areas, owned by threads.
 *
 * The fast paths: malloc pops the thread's hand (its last freed objects
 * of the class, whatever slab they are of), else the local free list of
 * the class's current slab (mimalloc's pages); free pushes onto the hand,
 * the owner's objects and, while their owner runs, other threads' (the
 * thread caches of tcmalloc and glibc); past a full hand an object goes
 * onto its slab's list, or home to another thread's slab's remote list
 * with one CAS, as an orphan's always does.  The slow path bumps through
 * never-used objects, collects remote frees, tries the class's other
 * slabs, adopts an orphan, or takes a new area.  No lock and no syscall on
 * a hit; the only shared lock guards the orphan lists.
 *
 * Double frees are caught as glibc's tcache does: a freed object carries a
 * key in its second word (its slab's mask, made from a random per-process
 * key); a free that finds the key walks the slab's free lists and the
 * threads' hands to be sure before it aborts.  The map classes (a page and
 * more; slab.h) keep bitmaps in the header instead: a set bit is a double
 * free, and no freed object is written but those their owner keeps in
 * hand, which carry the key as a link class's do.
 */
#include "slab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>

#include "area.h"
#include "arena.h"
#include "heap.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "trace.h"
#include "track.h"
#include "uvmalloc-descriptor.h"
#include "vnode.h"

#define NCLASS SLAB_CLASSES
#define SLAB_DECAY_EVERY 64


static uintptr_t uvm__slab_key; /* random per process: the slabs' masks come from it */

/*
 * A slab's mask: the per-process key, its address, and its life, so that an
 * area that is a slab again gets another mask and the free marks left in
 * its never-reused objects by its last life do not match (each would send
 * a free to the list walk).  The key's low bits stay: the mask is odd, so
 * no pointer a program stores looks like it.
 */
static uintptr_t mask_of(const struct slab *s) { return uvm__slab_key ^ (uintptr_t)s ^ ((uintptr_t)s->life * 0x9e3779b97f4a7c15ull << 16); }

void slab_corrupt(const struct slab *s, const char *what, const void *where)
{
	os_abort("uvmalloc: corrupted %s in slab %p at %p (a write past a block or after its free)\n", what, (const void *)s,
		 where);
}

/* The bits of a map class's objects that were carved (the others are never free). */
static uintptr_t carved_bits(const struct slab *s) { return s->carved >= 64 ? ~(uintptr_t)0 : slab_bit(s->carved) - 1; }

/* Whether s's free state names only its objects: its list heads (link classes), its maps' bits (map classes). */
static bool free_state_ok(const struct slab *s)
{
	uintptr_t r = atomic_load_explicit(&s->remote, memory_order_relaxed);

	if (slab_map_class(s->cls))
		return !((s->map | r) & ~carved_bits(s));
	return slab_link_ok(s, s->free) && slab_link_ok(s, slab_remote_head(r));
}

/* Before a slow path trusts a header: its mask, then its free state (no write past a block reaches it, a wild one may). */
static void check_header(const struct slab *s)
{
	if (s->mask != mask_of(s) || !free_state_ok(s))
		slab_corrupt(s, "header", s);
}

/* p, an object of s, freed a second time (a map class's bit was set already). */
static __attribute__((noreturn, cold)) void double_free(const void *p)
{
	os_abort("uvmalloc: free(): invalid pointer %p (freed already)\n", p);
}

static struct {
	uvm_lock_t lock; /* the orphan lists */
	struct list_head orphans[NCLASS];
	_Atomic unsigned nr_orphans[NCLASS];
	uint64_t allocs[NCLASS], frees[NCLASS]; /* of exited threads (the heap registry's lock), and frees past exit (atomic) */
	uint64_t carved;                        /* exited threads' slab_heap.carved: their orphans' bytes (atomic) */
	_Atomic uint64_t slabs;
	_Atomic unsigned lives; /* slabs ever made: each one's life */
	uvm_lock_t late_lock; /* late: the slab heap of threads past their exit */
	struct slab_heap late;
} sl = { .lock = UVM_LOCK_INIT, .late_lock = UVM_LOCK_INIT };

size_t uvm__slab_max;
unsigned char uvm__slab_class[SLAB_OBJ_MAX / 16];

/* ------------------------------------------------------------ classes */

/*
 * Four classes to a power of two, at most 25 % over the size asked for,
 * and from 256 on one more an eighth above each power of two: a block of
 * a power of two and a header (a page and its descriptor, a buffer and
 * its length) took the next quarter, 24 % of it unused.  sqlite3's
 * in-memory journal asks for 1032 bytes a chunk and its page cache for
 * 4368 a page: its peak RSS fell 227 -> 207 MB (glibc 181, RESULTS.md).
 * The price is a class more per power of two that a thread may hold a
 * slab of: allocwork local and stress on 2 threads +3 % peak RSS.  Above
 * 8 KiB there are only the classes that serve a size with less than its
 * pages (slab_serves): 9, 10 and 14 KiB, 7, 6 and 4 objects a slab; and
 * 16 KiB, which serves none but ends the table on a page multiple, so that
 * an aligned request's walk up the classes (slab_class_aligned) stops
 * inside it (12 KiB aligned to 4 KiB walked past 14 KiB without it).
 */
const unsigned short uvm__slab_class_size[SLAB_CLASSES] = {
	16,   32,   48,   64,   80,   96,   112,  128,  160,  192,  224,  256,  288,  320,  384,  448,  512,  576,  640,
	768,  896,  1024, 1152, 1280, 1536, 1792, 2048, 2304, 2560, 3072, 3584, 4096, 4608, 5120, 6144, 7168, 8192,
	9216, 10240, 14336, 16384,
};
/* A page multiple last: slab_class_aligned's walk, for any alignment up to a page, stops inside the table. */
_Static_assert(SLAB_MAP_FIRST < SLAB_CLASSES && SLAB_OBJ_MAX == 16384 && SLAB_OBJ_MAX % UVM_PAGE_SIZE == 0,
	       "the class table ends at SLAB_OBJ_MAX");

/* The class of size bytes (at most SLAB_OBJ_MAX): the one table the hits read too. */
static uvm_always_inline unsigned class_of(size_t size) { return size ? uvm__slab_class[(size - 1) >> 4] : 0; }

static size_t class_size(unsigned cls) { return uvm__slab_class_size[cls]; }

/* The smallest class at least size (1 or more) whose objects all sit on an align boundary. */
static unsigned class_for(size_t size, size_t align)
{
	return likely(align <= 16) ? class_of(size) : slab_class_aligned(size, align); /* every class is a multiple of 16 */
}

/* ------------------------------------------------------------- slabs */

/*
 * s's fast owner (slab_owned): its owner while it has one, else NULL; a
 * link class's full slab's marked (the owner plus 1).  Rewritten on every
 * change of either, which only slow paths make; the owner's free then needs
 * neither the page map nor the other fields to know the slab is its own and
 * takes frees in line, or a map class's in slab_map_free, which moves a
 * full slab back to the partial list itself.  The mark keeps a full link
 * slab's objects on the hits too: another thread's free keeps them in
 * hand, or sends them home with one CAS, and the owner's goes into its
 * hand, or past a full hand onto the list that moves the slab back
 * (slab_send_home).  Cleared, it sent both the general way, the page map
 * and the checks: allocwork prodcons, whose consumers free the producers'
 * objects soon after the slabs fill, 36.0 -> 32.4 M instructions with
 * heaps for threads that only free (malloc.c's free_heapless), and
 * prodcons -t 2 -s 8 0.82x the time (9 interleaved runs).
 */
static void publish(struct slab *s)
{
	struct slab_heap *h = atomic_load_explicit(&s->owner, memory_order_relaxed);

	uintptr_t f = (uintptr_t)h | (h && s->full && !slab_map_class(s->cls));

	__atomic_store_n(&s->fast, (struct slab_heap *)f, __ATOMIC_RELAXED);
}

/* Atomic: other threads' frees read it (send_home), so that the owner hears of room in a full slab. */
static void set_full(struct slab *s, unsigned full)
{
	__atomic_store_n(&s->full, full, __ATOMIC_SEQ_CST);
	publish(s);
}

/* s, on one of h's lists, onto the partial list of its class, not full. */
static void to_partial(struct slab_heap *h, struct slab *s)
{
	list_del(&s->link);
	list_add(&s->link, &h->partial[s->cls]);
	set_full(s, 0);
}

/* m's inverse mod 2^32, for odd m: Newton's iteration doubles the bits right each step, from 3 (m m = 1 mod 8). */
static uint32_t inverse(uint32_t m)
{
	uint32_t x = m;

	for (int i = 0; i < 4; i++)
		x *= 2 - m * x;
	return x;
}

/* The bytes a slab's objects may fill: its whole chunk, or up to its guard page when that is real. */
static size_t slab_span(void) { return os_guards() ? SLAB_AREA_BYTES : SLAB_SIZE; }

/* A slab's area: cut from a huge page in a thread whose slabs hold SLAB_HUGE_AFTER bytes, when it can be. */
static struct vmap_area *slab_area(struct slab_heap *h)
{
	struct vmap_area *va = NULL;
	int err;

	if (h->carved >= SLAB_HUGE_AFTER && h != &sl.late && !os_guards())
		va = area_alloc_stocked(container_of(h, struct heap, slab), SLAB_AREA_BYTES, SLAB_SIZE);
	return va ? va : area_alloc(SLAB_AREA_BYTES, SLAB_SIZE, -1, false, NULL, &err);
}

static struct slab *new_slab(struct slab_heap *h, unsigned cls)
{
	struct vmap_area *va = slab_area(h);
	size_t span = slab_span(); /* once: a kernel that refuses guard markers turns them off for good at any time */
	struct slab *s;

	if (!va)
		return NULL;
	track_unused((void *)va->va_start, span);
	va->flags |= VA_SLAB;
	area_set_live(va, area_usable(va)); /* VA_LIVE: a slab goes back by slab_release_empty only */
	s = region_chunk(region_of(va->va_start), va->va_start);
	s->base = va->va_start;
	atomic_store_explicit(&s->owner, h, memory_order_relaxed);
	atomic_store_explicit(&s->remote, 0, memory_order_relaxed);
	s->free = NULL;
	s->map = 0;
	s->orphan = SLAB_OWNED;
	s->life = atomic_fetch_add_explicit(&sl.lives, 1, memory_order_relaxed);
	s->mask = mask_of(s);
	s->size = (unsigned)class_size(cls);
	s->shift = (unsigned)__builtin_ctz(s->size);
	s->inv = inverse(s->size >> s->shift);
	s->cls = cls;
	s->carved = 0;
	s->room = (unsigned)(span / s->size);
	s->used = 0;
	s->va = va;
	set_full(s, 0);
	atomic_fetch_add_explicit(&sl.slabs, 1, memory_order_relaxed);
	return s;
}

/* s's carved bytes, which its owner's count holds (an orphan's: the exited threads' total). */
static uint64_t carved_bytes(const struct slab *s) { return (uint64_t)s->carved * s->size; }

/*
 * A released slab's carved bytes leave the count that holds them: its
 * owner's, who releases it (the late heap's under its lock), or for an
 * orphan, released by whichever thread freed its last object, the exited
 * threads' total.  Taken off the releasing thread's own count, they made a
 * thread that emptied others' orphans read as one with a negative heap,
 * or, unsigned, a huge one (allocwork stress on 2 threads then cut slabs
 * from huge pages: 11.5 MiB at its peak against 9.7).
 */
static void uncount_carved(const struct slab *s)
{
	struct slab_heap *o = atomic_load_explicit(&s->owner, memory_order_relaxed);

	if (o)
		o->carved -= carved_bytes(s);
	else
		__atomic_fetch_sub(&sl.carved, carved_bytes(s), __ATOMIC_RELAXED);
}

/* An empty slab's header taken down: its area, taken (area_take), for the caller to free. */
static struct vmap_area *slab_retire(struct slab *s)
{
	struct vmap_area *va;

	check_header(s);
	va = s->va;
	uncount_carved(s);
	list_del(&s->link);
	atomic_store_explicit(&s->owner, NULL, memory_order_relaxed);
	publish(s);
	atomic_fetch_sub_explicit(&sl.slabs, 1, memory_order_relaxed);
	UVM_TRACE(slab_release, s->size);
	va->flags &= ~VA_SLAB;
	return area_take(va->va_start);
}

/* The area goes back through the same door a user's would: the thread's cache first. */
void slab_release_empty(struct slab *s) { area_free(slab_retire(s)); }

/*
 * A map class's remote frees into its map.  A bit in both was freed twice,
 * by the owner and by another thread at once (each tests the other's bit
 * first, but the two tests can pass together).
 */
static void collect_map(struct slab *s, uintptr_t r)
{
	if (unlikely(r & s->map))
		double_free((void *)(s->base + (size_t)__builtin_ctzl(r & s->map) * s->size));
	__atomic_store_n(&s->map, s->map | r, __ATOMIC_RELAXED);
}

/*
 * Move the remote frees onto the local list: onto an empty one (the slow
 * path's case) as they are, with no walk, so no remotely freed object is
 * touched before it is handed out again; onto a non-empty one (a thread's
 * exit) through their tail.
 */
static void collect(struct slab *s)
{
	uintptr_t r = atomic_exchange_explicit(&s->remote, 0, memory_order_acquire);
	void *head = slab_remote_head(r), *tail = head, *next;

	check_header(s);
	s->used -= slab_remote_count(s->cls, r);
	if (slab_map_class(s->cls)) {
		collect_map(s, r);
		return;
	}
	if (!head)
		return;
	if (s->free) {
		while ((next = slab_link(s, tail))) {
			if (!slab_link_ok(s, next))
				slab_corrupt(s, "remote free list", tail);
			tail = next;
		}
		slab_set_link(s, tail, s->free);
	}
	s->free = head;
}

/* Whether s has freed objects to hand out: on its list, or in its map (a map class's list is always empty, a link class's map). */
static bool has_free(const struct slab *s) { return s->free || s->map; }

static bool has_room(struct slab *s)
{
	if (!has_free(s) && atomic_load_explicit(&s->remote, memory_order_relaxed))
		collect(s);
	return has_free(s) || s->carved < s->room;
}

/* ------------------------------------------------------------ heaps */

/*
 * An orphan no thread will collect: the free that brings its remote count
 * to its used objects (which nobody changes while it is orphaned) empties
 * it, and releases it, unless a thread adopted it meanwhile.  Its area goes
 * to the node lazily, not into the freeing thread's cache: it was no part
 * of that thread's working set, and a cache kept such slabs for a new slab
 * that the adoption of other orphans made rare.  Threads that come and go
 * while freeing each other's blocks (allocwork stress -t 2 -s 16) held 50
 * of them, 3 MiB, in one cache at the peak; lazily, any thread's slab miss
 * still takes one before the next purge, and the purge bounds the rest:
 * stress -t 2 -s 16 15.5 -> 14.9 MiB (with -w 18.0 -> 17.1, 10 % fewer
 * faults), stress -t 64 250 -> 222 MiB, larson -t 2 8.3 -> 7.8, prodcons
 * 4.2 -> 4.0, at the same times.
 */
static void release_orphan(struct slab *s)
{
	bool empty;

	uvm_lock(&sl.lock);
	empty = s->orphan && slab_remote_count(s->cls, atomic_load_explicit(&s->remote, memory_order_acquire)) == s->used;
	if (empty) {
		list_del(&s->link);
		s->orphan = SLAB_OWNED;
		atomic_fetch_sub_explicit(&sl.nr_orphans[s->cls], 1, memory_order_relaxed);
	}
	uvm_unlock(&sl.lock);
	if (empty)
		area_free_lazily(slab_retire(s));
}

/*
 * The objects class c's hand keeps: SLAB_MAG, or fewer where SLAB_MAG of
 * them would be more than SLAB_HAND_BYTES (32 of 2 KiB, 18 of 3.5 KiB),
 * at least 2.  The objects in a hand stay counted in their slabs, which
 * they keep resident: a small hand kept fewer slabs of a class half used
 * (allocwork local on 2 threads: 7.6 MiB of peak RSS with 16 objects and
 * 8 KiB a class, 8.1 with 64 and 64 KiB).  But the hand is what a malloc
 * reuses hottest first: past it a free goes onto its slab's list, handed
 * out only when that slab is current again, long after its lines left the
 * cache.  A program whose frees and mallocs of a class wander apart by
 * more than the hand holds (tens of objects live per class, freed at
 * random) touched cold blocks: with the larger hands (9 interleaved runs,
 * medians) local 0.069 -> 0.058 s, larson 0.063 -> 0.054 s and 12.3 ->
 * 9.6 MiB (fewer of its frees went onto lists and home), stress 0.51 ->
 * 0.49 s and 18.9 -> 17.8 MiB; mixed, batch, refill, tasks, prodcons the
 * same.  tcmalloc's thread lists grow to thousands of objects.
 */
#define SLAB_HAND_BYTES ((size_t)64 << 10)

static unsigned hand_room(unsigned c)
{
	size_t n = SLAB_HAND_BYTES / class_size(c);

	return n > SLAB_MAG ? SLAB_MAG : n < 2 ? 2 : (unsigned)n;
}

/*
 * A hand keeps objects for its thread's next mallocs of the class: in a
 * heap made by a free (a consumer's, malloc.c's free_heapless) it is
 * closed (no room, slab_hands_close) until the thread allocates from the
 * class, opened by that class's slow-path allocation.  A thread that frees
 * what others allocate then sends their objects home, where its hands
 * held them from their owners: allocwork prodcons -t 8, 11.0 MiB of peak
 * RSS with open hands, 10.6 closed (10.2 with no heaps).  Closing as well
 * a hand that fills with other threads' objects while its thread takes
 * none back cost allocwork stress -t 2 a quarter more page faults (the
 * freers carved fresh objects instead) and saved prodcons nothing.
 */
static void hand_open(struct slab_heap *h, unsigned c) { h->hand_end[c] = h->mag[c] + hand_room(c); }

void slab_hands_close(struct slab_heap *h)
{
	for (unsigned c = 0; c < NCLASS; c++)
		h->hand_end[c] = h->mag[c];
}

void slab_heap_init(struct slab_heap *h)
{
	for (unsigned c = 0; c < NCLASS; c++) {
		list_init(&h->partial[c]);
		list_init(&h->full[c]);
		h->top[c] = h->mag[c];
		hand_open(h, c);
	}
	atomic_store_explicit(&h->woken, 0, memory_order_relaxed);
}

static void hand_flush(struct slab_heap *h, unsigned c);

void slab_heap_exit(struct slab_heap *h)
{
	for (unsigned c = 0; c < NCLASS; c++)
		hand_flush(h, c); /* first: the slabs' used counts say which are empty */
	for (unsigned c = 0; c < NCLASS; c++) {
		struct slab *s, *n;
		LIST_HEAD(all);

		list_splice_tail(&h->partial[c], &all);
		list_splice_tail(&h->full[c], &all);
		h->cur[c] = NULL;
		list_for_each_entry_safe(s, n, &all, link) {
			collect(s);
			if (!s->used) {
				slab_release_empty(s);
				continue;
			}
			list_del(&s->link);
			__atomic_store_n(&s->orphan_used, s->used, __ATOMIC_RELAXED);
			atomic_store_explicit(&s->owner, NULL, memory_order_release);
			publish(s); /* before an adopter may write its own heap there */
			uvm_lock(&sl.lock);
			s->orphan = SLAB_ORPHAN_NEW;
			list_add_tail(&s->link, &sl.orphans[c]);
			atomic_fetch_add_explicit(&sl.nr_orphans[c], 1, memory_order_relaxed);
			uvm_unlock(&sl.lock);
			/* Its last remote free may have come before it was an orphan, and found none to release. */
			if (slab_remote_count(c, atomic_load_explicit(&s->remote, memory_order_acquire)) ==
			    __atomic_load_n(&s->orphan_used, __ATOMIC_RELAXED))
				release_orphan(s);
		}
	}
}

void slab_heap_fold(struct slab_heap *h)
{
	__atomic_fetch_add(&sl.carved, h->carved, __ATOMIC_RELAXED);
	for (unsigned c = 0; c < NCLASS; c++) {
		sl.allocs[c] += h->allocs[c];
		/* also counted lock-free by exited threads */
		__atomic_fetch_add(&sl.frees[c], h->frees[c], __ATOMIC_RELAXED);
		h->allocs[c] = h->frees[c] = 0;
	}
	h->carved = 0;
}

int slab_init(void)
{
	struct timespec ts;

	uvm__slab_max = (size_t)option(OPT_SLAB_MAX);
	for (unsigned c = 0; c < NCLASS; c++)
		list_init(&sl.orphans[c]);
	/* Random per process: the slabs' masks, which mark freed objects and key the free lists' safe-linking, come from it. */
	if (getrandom(&uvm__slab_key, sizeof(uvm__slab_key), GRND_NONBLOCK) != (ssize_t)sizeof(uvm__slab_key)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uvm__slab_key = ((uintptr_t)&sl * 0x9e3779b97f4a7c15ull) ^ ((uintptr_t)ts.tv_nsec << 17) ^ (uintptr_t)ts.tv_sec;
	}
	uvm__slab_key |= 1;
	for (size_t i = 0, c = 0; i < SLAB_OBJ_MAX / 16; i++) {
		while (uvm__slab_class_size[c] < i * 16 + 16)
			c++;
		uvm__slab_class[i] = (unsigned char)c;
	}
	slab_heap_init(&sl.late);
	return 0;
}

size_t slab_max(void) { return uvm__slab_max; }

uint64_t slab_made(void) { return atomic_load_explicit(&sl.lives, memory_order_relaxed); }

bool slab_serves_aligned(size_t size, size_t align)
{
	if (slab_aligned_class(size, align) < SLAB_CLASSES)
		return true;
	if (!uvm__slab_max || size <= UVM_PAGE_SIZE || size > SLAB_OBJ_MAX || align > UVM_PAGE_SIZE)
		return false;
	return class_size(class_for(size, align)) < align_up(size, UVM_PAGE_SIZE);
}

/* ------------------------------------------------------- allocation */

static struct slab *adopt(struct slab_heap *h, unsigned c)
{
	struct slab *s = NULL;

	if (!atomic_load_explicit(&sl.nr_orphans[c], memory_order_relaxed))
		return NULL;
	uvm_lock(&sl.lock);
	if (!list_empty(&sl.orphans[c])) {
		s = list_first_entry(&sl.orphans[c], struct slab, link);
		list_del(&s->link);
		s->orphan = SLAB_OWNED;
		atomic_fetch_sub_explicit(&sl.nr_orphans[c], 1, memory_order_relaxed);
	}
	uvm_unlock(&sl.lock);
	if (s) {
		/* Nobody carves an orphan: its bytes move from the exited threads' total to h as they stand. */
		__atomic_fetch_sub(&sl.carved, carved_bytes(s), __ATOMIC_RELAXED);
		h->carved += carved_bytes(s);
		atomic_store_explicit(&s->owner, h, memory_order_seq_cst); /* before the look at its remote word: send_home */
		publish(s);
	}
	return s;
}

/*
 * s, h's slab of no room (on no list), onto h's full list, unless another
 * thread's free reached it meanwhile: then onto the partial list, those
 * frees collected (false).  The full flag's store and the remote word's load, both
 * sequentially consistent, pair with send_home's push and load of the
 * flag: either this load sees the push, or that freer sees the flag and
 * wakes h (slab_heap.woken).
 */
static bool park_full(struct slab_heap *h, struct slab *s)
{
	list_add(&s->link, &h->full[s->cls]);
	set_full(s, 1);
	if (likely(!atomic_load_explicit(&s->remote, memory_order_seq_cst)))
		return true;
	to_partial(h, s);
	collect(s);
	return false;
}

/*
 * The full slabs of class c that other threads freed into since h last
 * looked, onto the partial list: all of them at once, and only when a
 * freer said so.  (A look at every full slab on each refill made a heap
 * that only grows quadratic: allocwork refill, 350 full slabs of its
 * largest class, spent 14 % of its time reading their headers.)  The
 * flag is cleared before the look, so a free the look misses sets it again.
 */
static void wake_full(struct slab_heap *h, unsigned c)
{
	uint64_t bit = (uint64_t)1 << c;
	struct slab *s, *n;

	if (likely(!(atomic_load_explicit(&h->woken, memory_order_relaxed) & bit)))
		return;
	atomic_fetch_and_explicit(&h->woken, ~bit, memory_order_seq_cst);
	list_for_each_entry_safe(s, n, &h->full[c], link)
		if (has_room(s))
			to_partial(h, s);
}

/* A slab of class c with room: a partial one, a full one that others freed into, an orphan, or a new one. */
static struct slab *refill(struct slab_heap *h, unsigned c)
{
	struct slab *s, *n;

	wake_full(h, c);
	list_for_each_entry_safe(s, n, &h->partial[c], link) {
		if (has_room(s))
			return s;
		list_del(&s->link);
		if (!park_full(h, s))
			return s;
	}
	/* An orphan may have no room yet: it is ours now all the same, on the full list until frees reach it. */
	while ((s = adopt(h, c))) {
		if (has_room(s)) {
			set_full(s, 0);
			list_add(&s->link, &h->partial[c]);
			break;
		}
		if (!park_full(h, s))
			break;
	}
	if (s) {
		UVM_TRACE(slab_refill, s->size, 1);
	} else if ((s = new_slab(h, c))) {
		UVM_TRACE(slab_refill, s->size, 2);
		list_add(&s->link, &h->partial[c]);
	}
	return s;
}

/* A free object of s (its list or map not empty), taken. */
static void *take(struct slab *s) { return slab_map_class(s->cls) ? slab_map_take(s) : slab_pop(s); }

/* An idle class c's hand onto its slabs' lists, and its current slab, if that empties, back to the area caches. */
static void idle_slab_release(struct slab_heap *h, unsigned c)
{
	struct slab *s;

	if (h->top[c] != h->mag[c])
		hand_flush(h, c);
	s = h->cur[c];
	if (s && !s->used) {
		h->cur[c] = NULL;
		slab_release_empty(s);
	}
}

/*
 * A hand keeps the slabs of its objects resident, and one of a class the
 * thread no longer allocates keeps them so for good: allocwork batch
 * (bursts of one size, then all freed) kept the last slab of every burst's
 * class, as much of it touched as the burst was long.  Each refill looks
 * at one class's hand, round robin (jemalloc's tcache GC, one bin an
 * event): if the class made no allocation over its last two rounds, its
 * hand goes back onto its slabs' lists, and a slab that empties goes back
 * to the area caches, for any class.  batch: peak RSS 4.0 -> 3.8 MiB,
 * 634 -> 554 faults; after one idle round instead, the rare classes of
 * allocwork stress (threads that swap blocks, new threads every round)
 * lost their hands too often: on 8 threads 50.9 -> 52.8 MiB.  Its current
 * slab goes too when that empties: kept, its touched pages served that
 * class alone, where the thread's next slab of any class takes them from
 * the cache (batch 3.7 -> 3.5 MiB, 587 -> 548 faults; the class's next
 * allocation refills).  Nothing on the fast paths: they count the
 * allocations already.
 */
static void hand_gc(struct slab_heap *h)
{
	unsigned c = h->gc_next;

	h->gc_next = c + 1 == NCLASS ? 0 : c + 1;
	if (h->allocs[c] != h->gc_allocs[c]) {
		h->gc_idle &= ~((uint64_t)1 << c);
	} else if (!(h->gc_idle & (uint64_t)1 << c)) {
		h->gc_idle |= (uint64_t)1 << c;
	} else {
		idle_slab_release(h, c);
	}
	h->gc_allocs[c] = h->allocs[c];
}

/* Past the current slab's end (the hits pop and carve in line): another slab with room, then its object. */
static uvm_noinline void *alloc_slow(struct slab_heap *h, unsigned c)
{
	struct slab *s = h->cur[c];

	hand_open(h, c);
	if (!s || !has_room(s)) {
		/*
		 * A program of small objects rarely misses in its area caches, the
		 * other place that decays idle threads' caches: without this, a
		 * worker that went idle kept its whole cache while others worked.
		 * One refill in SLAB_DECAY_EVERY: the clock read cost a refill a
		 * tenth of its time (larson, where one malloc in eight refills).
		 */
		if (!(++h->refills % SLAB_DECAY_EVERY))
			pcp_decay_maybe();
		hand_gc(h);
		s = refill(h, c);
		if (!s)
			return NULL;
		h->cur[c] = s;
		trace_snapshot();
	}
	check_header(s);
	return has_free(s) ? take(s) : slab_bump(h, s);
}

static void *alloc_in(struct slab_heap *h, unsigned c)
{
	struct slab *s = h->cur[c];
	void *p;

	if (h->top[c] != h->mag[c])
		return slab_hand_pop(h, c);
	p = likely(s && has_free(s)) ? take(s) : alloc_slow(h, c);

	if (!p)
		return NULL;
	h->cur[c]->used++;
	h->allocs[c]++;
	return p;
}

void *slab_alloc_refill(struct slab_heap *h, size_t size) { return alloc_in(h, class_of(size)); }

/* A thread past its exit: the shared late heap, under its lock. */
static uvm_noinline void *alloc_late(unsigned c)
{
	void *p;

	uvm_lock(&sl.late_lock);
	p = alloc_in(&sl.late, c);
	uvm_unlock(&sl.late_lock);
	return p;
}

void *slab_alloc(size_t size, size_t align)
{
	struct heap *h = heap_self();
	unsigned c = class_for(size, align);
	void *p = likely(h) ? alloc_in(&h->slab, c) : alloc_late(c);

	if (p)
		pcp_count_request(h, size);
	return p;
}

/* ------------------------------------------------------------- free */

/*
 * Whether p is on a free list of s.  Another thread's lists may change under
 * the walk, so it never leaves the slab and never takes more steps than the
 * slab has objects: a torn list ends the walk, it cannot send it astray.
 */
static bool on_list(const struct slab *s, const void *p, const void *list)
{
	const char *lo = (const char *)s->base, *hi = lo + SLAB_SIZE;

	for (size_t steps = SLAB_SIZE / s->size; list && steps; steps--, list = slab_link(s, list)) {
		if ((const char *)list < lo || (const char *)list >= hi)
			return false;
		if (list == p)
			return true;
	}
	return false;
}

struct hand_look {
	const void *p;
	unsigned cls;
	bool found;
};

/* Whether p is in h's hand for class c: h's own look, or another thread's, racy and bounded by the hand's size. */
static bool hand_has(const struct slab_heap *h, unsigned c, const void *p)
{
	unsigned n = slab_hand_held(h, c);

	for (unsigned i = 0; i < n; i++)
		if (__atomic_load_n(&h->mag[c][i], __ATOMIC_RELAXED) == p)
			return true;
	return false;
}

static void look_in_hand(struct heap *th, void *arg)
{
	struct hand_look *l = arg;

	l->found = l->found || hand_has(&th->slab, l->cls, l->p);
}

/*
 * Whether p is in a thread's hand (slab_heap.mag): any thread's, since a
 * freer keeps other threads' objects (slab_free_hit).  A look at other
 * threads' hands is racy but safe (heaps are never unmapped, the count
 * bounds the look): a double free it misses is one that races that
 * thread's own malloc of p.  Only a free that finds the key comes here.
 */
static bool in_hand(const struct slab *s, const void *p)
{
	struct hand_look l = { p, s->cls, false };

	heap_for_each_live(look_in_hand, &l);
	return l.found;
}

/*
 * Whether p, a map class's object of s, is in its owner's hand (only the
 * owner keeps a map class's objects in hand, and its exit sends them back
 * first): a walk of at most a slab's worth of pointers, with no read of p,
 * which may never have been written.
 */
bool slab_map_in_hand(const struct slab *s, const void *p)
{
	const struct slab_heap *o = atomic_load_explicit(&s->owner, memory_order_relaxed);

	return o && hand_has(o, s->cls, p);
}

/* The key says "maybe freed already"; the lists and the hands say for sure (user data may hold the key by chance). */
static bool already_free(struct slab *s, const void *p)
{
	return on_list(s, p, s->free) ||
	       on_list(s, p, slab_remote_head(atomic_load_explicit(&s->remote, memory_order_acquire))) || in_hand(s, p);
}

/*
 * A map class's p into s's remote bitmap with one atomic or; the objects
 * on it after.  Its bit set there, or in the owner's map, is a double free.
 * The owner's map is read racily: a bit the owner cleared by handing p out
 * again was cleared before p reached this thread.
 */
static unsigned free_remote_map(struct slab *s, const void *p)
{
	uintptr_t bit = slab_bit(slab_index(s, p)), old;

	if (__atomic_load_n(&s->map, __ATOMIC_RELAXED) & bit)
		double_free(p);
	old = atomic_fetch_or_explicit(&s->remote, bit, memory_order_seq_cst);
	if (old & bit)
		double_free(p);
	return (unsigned)__builtin_popcountl(old | bit);
}

/* Push p onto s's remote list with one CAS (a map class's: its bit); the list's count after it. */
static unsigned free_remote(struct slab *s, void *p)
{
	uintptr_t old, new;

	if (slab_map_class(s->cls))
		return free_remote_map(s, p);
	old = atomic_load_explicit(&s->remote, memory_order_relaxed);
	do {
		slab_set_link(s, p, slab_remote_head(old));
		new = ((old >> SLAB_REMOTE_SHIFT) + 1) << SLAB_REMOTE_SHIFT | (uintptr_t)p;
	} while (!atomic_compare_exchange_weak_explicit(&s->remote, &old, new, memory_order_seq_cst, memory_order_relaxed));
	return (unsigned)(new >> SLAB_REMOTE_SHIFT); /* not slab_remote_count: s may be another slab already */
}

/*
 * After a push onto s's remote word: if s sits on its owner's full list,
 * tell the owner that class c has room there (slab_heap.woken), so that
 * its refills need not look at every full slab.  The owner and the flag
 * are read after the push (sequentially consistent, as the push), so an
 * owner that marks s full or adopts it and then misses the push is seen
 * here (park_full, adopt).  s may be another slab by now: its owner then
 * looks once for nothing.
 */
static void wake_owner(struct slab *s, unsigned c)
{
	struct slab_heap *o = atomic_load_explicit(&s->owner, memory_order_seq_cst);
	uint64_t bit = (uint64_t)1 << c;

	if (o && __atomic_load_n(&s->full, __ATOMIC_SEQ_CST) && !(atomic_load_explicit(&o->woken, memory_order_relaxed) & bit))
		atomic_fetch_or_explicit(&o->woken, bit, memory_order_seq_cst);
}

/* p, freed, home to its slab s of another thread (or an orphan): its remote list, and s released if that emptied an orphan. */
static void send_home(struct slab *s, void *p)
{
	unsigned c = s->cls;
	bool orphan = !atomic_load_explicit(&s->owner, memory_order_acquire);
	unsigned last = orphan ? __atomic_load_n(&s->orphan_used, __ATOMIC_RELAXED) : 0;

	/*
	 * All that is read of s is read before the push: once p is pushed,
	 * others may empty s, release it and make its area a new slab.  The
	 * owner's own count is never read: an adopter may be changing it.
	 */
	if (free_remote(s, p) == last && orphan)
		release_orphan(s); /* under the orphan lock, which finds out whether s is still the orphan */
	wake_owner(s, c);
}

/* What a free into h's slab s changes of s's state, its used count already lowered: a full slab has room, an empty one goes. */
static void freed_into(struct slab_heap *h, struct slab *s)
{
	if (s->full)
		to_partial(h, s);
	if (slab_emptied(h, s))
		slab_release_empty(s);
}

/* p (marked free, counted freed) onto its slab s's local list or map (s checked), and what that changes of s's state. */
static void list_local(struct slab_heap *h, struct slab *s, void *p)
{
	if (slab_map_class(s->cls)) {
		__atomic_store_n(&s->map, s->map | slab_bit(slab_index(s, p)), __ATOMIC_RELAXED);
	} else {
		slab_set_link(s, p, s->free);
		s->free = p;
	}
	s->used--;
	freed_into(h, s);
}

/* p (marked free, counted freed) out of h's hands: onto its slab s's list if h owns s, else home. */
static void put_back(struct slab_heap *h, struct slab *s, void *p)
{
	if (atomic_load_explicit(&s->owner, memory_order_relaxed) == h)
		list_local(h, s, p);
	else
		send_home(s, p);
}

/*
 * Every object of h's hand for class c back onto its slab's list (the
 * thread's exit, or an idle class's: hand_gc; they were counted freed when
 * they went in).  They were
 * checked as the owner's own then: their slabs are their chunks' records,
 * trusted as the owner's free in line trusts them (no header check).
 */
static void hand_flush(struct slab_heap *h, unsigned c)
{
	for (void **q = h->mag[c]; q < h->top[c]; q++) {
		if (slab_map_class(c))
			((uintptr_t *)*q)[1] = 0; /* unmarked in the map: the next free of it need not look through the hand */
		put_back(h, region_chunk(region_of((uintptr_t)*q), (uintptr_t)*q), *q);
	}
	h->top[c] = h->mag[c];
}

/*
 * The free of another running thread's object into a full hand (or of a
 * map class's, which only its owner's hand keeps): home, as the owner's
 * own goes onto its slab's list (slab_list_own).  Making room for it
 * instead (the hand's older half onto their lists, the rest moved down)
 * cost allocwork refill, whose deletes of two thirds of its values
 * overflow every hand, 9 % more instructions (170 M against 156 M, with
 * hands of 16); after such a burst the hand still holds recent objects,
 * and the slabs' lists the rest, newest first.  The owner's own object of
 * a full slab past a full hand comes here too (publish's mark): onto its
 * list, which moves the slab back to the partial list.
 */
uvm_noinline void slab_send_home(struct slab_heap *h, struct slab *s, void *p)
{
	unsigned c = s->cls; /* read before the push, after which s may be released (send_home) */

	if (!slab_map_class(c))
		((uintptr_t *)p)[1] = s->mask;
	h->frees[c]++;
	put_back(h, s, p);
}

void slab_map_free(struct slab_heap *h, struct slab *s, void *p)
{
	uintptr_t bit = slab_bit(slab_index(s, p));
	unsigned c = s->cls;

	if (__atomic_load_n(&s->fast, __ATOMIC_RELAXED) != h) {
		if (slab_map_in_hand(s, p))
			double_free(p);
		slab_send_home(h, s, p);
		return;
	}
	/* The owner's map, read only once h knows it is s's owner. */
	if (unlikely(slab_map_freed(s, bit)))
		double_free(p);
	h->frees[c]++;
	/* Past a full hand (slab_free_hit pushes the rest), p stays unwritten: the hand is looked through instead. */
	if (unlikely(hand_has(h, c, p)))
		double_free(p);
	__atomic_store_n(&s->map, s->map | bit, __ATOMIC_RELAXED);
	/*
	 * An emptied current slab stays as it is (a free-and-malloc loop's
	 * case), even full: only a failed refill leaves a full slab current,
	 * and a refill finds it on the full list once it has room.
	 */
	if (unlikely(!--s->used ? s != h->cur[c] : s->full))
		freed_into(h, s);
}

/* The owner's free (slab_free's way) of p, marked free: into its hand unless that is full, s is (list moves) or keeps a map. */
static void free_local(struct slab_heap *h, struct slab *s, void *p)
{
	unsigned c = s->cls;

	h->frees[c]++;
	if (s->full || h->top[c] == h->hand_end[c] || slab_map_class(c)) {
		check_header(s);
		list_local(h, s, p); /* a full slab goes back to the partial list */
	} else {
		*h->top[c]++ = p;
	}
}

static enum slab_ptr check(const void *p, struct slab **out)
{
	struct slab *s = slab_of(p);

	if (!s)
		return SLAB_NONE;
	if (!slab_object(s, p))
		return SLAB_BAD;
	if (slab_map_class(s->cls)) {
		if (slab_map_freed(s, slab_bit(slab_index(s, p))) || slab_map_in_hand(s, p))
			return SLAB_BAD;
	} else if (((const uintptr_t *)p)[1] == s->mask && already_free(s, p)) {
		return SLAB_BAD;
	}
	*out = s;
	return SLAB_LIVE;
}

enum slab_ptr slab_check(const void *p, size_t *usable)
{
	struct slab *s;
	enum slab_ptr what = check(p, &s);

	if (what == SLAB_LIVE)
		*usable = s->size;
	return what;
}

enum slab_ptr slab_free(void *p)
{
	struct slab *s;
	struct heap *th = uvm__heap;
	struct slab_heap *h = th ? &th->slab : NULL;
	enum slab_ptr what = check(p, &s);

	if (what != SLAB_LIVE)
		return what;
	if (!slab_map_class(s->cls))
		((uintptr_t *)p)[1] = s->mask;
	if (h && atomic_load_explicit(&s->owner, memory_order_relaxed) == h) {
		free_local(h, s, p);
		trace_snapshot(); /* a phase that only frees still sends snapshots */
	} else {
		unsigned cls = s->cls; /* read before the push, after which s may be released (send_home) */

		send_home(s, p);
		if (h)
			h->frees[cls]++;
		else
			__atomic_fetch_add(&sl.frees[cls], 1, __ATOMIC_RELAXED);
	}
	return SLAB_LIVE;
}

/* ------------------------------------------------------------- trim */

/*
 * The pages of a map class's free objects back to the kernel: they hold no
 * free state (slab_map_class), so a freed block's pages can go while its
 * slab lives, as glibc's malloc_trim gives back the free pages inside its
 * heap.  Only the owner reads its maps, so a thread trims its own slabs,
 * at uvm_purge (malloc_trim); an orphan's map changes only when a thread
 * adopts it, under sl.lock, so the trim of orphans holds that lock through
 * its madvise: no adopter hands out an object whose pages are going.
 * Orphans are trimmed at uvm_purge, and by decay once they have waited a
 * whole decay period (1-2 s) with no thread adopting them.  (Each exit
 * trimmed its own slabs before orphaning them, but a program whose threads
 * come and go has the next thread adopt them at once and fault those pages
 * in again: allocwork stress -s 4, 64 threads in 32 rounds, took 5 900
 * page faults, tcmalloc 2 850; 5 150 without, at the same peak RSS.)
 * Only pages wholly inside a run of free objects go: a page shared
 * with a neighbour may hold its live bytes.
 */
#define TRIM_BATCH 64

struct trim {
	struct iovec r[TRIM_BATCH];
	size_t n;
};

static void trim_flush(struct trim *t)
{
	if (t->n)
		os_discard_ranges(t->r, t->n);
	t->n = 0;
}

/* The free run [lo, hi) of a slab into t, joined to the run before it when they touch. */
static void trim_run(struct trim *t, uintptr_t lo, uintptr_t hi)
{
	struct iovec *last = t->n ? &t->r[t->n - 1] : NULL;

	lo = align_up(lo, UVM_PAGE_SIZE);
	hi = align_down(hi, UVM_PAGE_SIZE);
	if (lo >= hi)
		return;
	if (last && (uintptr_t)last->iov_base + last->iov_len == lo) {
		last->iov_len += hi - lo;
		return;
	}
	if (t->n == TRIM_BATCH)
		trim_flush(t);
	t->r[t->n++] = (struct iovec){ (void *)lo, hi - lo };
}

/* The pages of s's free objects free (a bitmap by object) into t, a run of touching free objects at a time (s: a map class's). */
static void trim_slab(struct trim *t, const struct slab *s, uintptr_t free)
{
	uintptr_t m = free;

	while (m) {
		unsigned first = (unsigned)__builtin_ctzl(m), end = first;

		while (end < 64 && (m >> end & 1))
			end++;
		trim_run(t, s->base + (uintptr_t)first * s->size, s->base + (uintptr_t)end * s->size);
		m &= end < 64 ? ~(slab_bit(end) - 1) : 0;
	}
}

/* The map classes' slabs on list into t, other threads' frees collected first; one that empties goes (not the current one). */
static void trim_list(struct trim *t, struct slab_heap *h, struct list_head *list)
{
	struct slab *s, *n;

	list_for_each_entry_safe(s, n, list, link) {
		collect(s);
		if (slab_emptied(h, s))
			slab_release_empty(s);
		else
			trim_slab(t, s, s->map);
	}
}

/* Every map class's slab of h (its owner calling), its hand first back in the maps: objects in hand are not free there. */
static void trim_heap(struct slab_heap *h)
{
	struct trim t = { .n = 0 };

	for (unsigned c = SLAB_MAP_FIRST; c < NCLASS; c++) {
		hand_flush(h, c);
		trim_list(&t, h, &h->partial[c]);
		trim_list(&t, h, &h->full[c]);
	}
	trim_flush(&t);
}

/*
 * The orphans of the map classes, each aged by one decay (all: trimmed
 * whatever their age).  An orphan's free objects are those of its map and,
 * since it was orphaned, of its remote bits: no one takes either until it
 * is adopted.
 */
static void trim_orphans(bool all)
{
	struct trim t = { .n = 0 };
	struct slab *s;
	unsigned c;

	for (c = SLAB_MAP_FIRST; c < NCLASS; c++)
		if (atomic_load_explicit(&sl.nr_orphans[c], memory_order_relaxed))
			break;
	if (c == NCLASS)
		return;
	uvm_lock(&sl.lock);
	for (; c < NCLASS; c++) {
		list_for_each_entry(s, &sl.orphans[c], link) {
			if (s->orphan == SLAB_ORPHAN_NEW && !all) {
				s->orphan = SLAB_ORPHAN_AGED;
			} else if (s->orphan == SLAB_ORPHAN_AGED || all) {
				trim_slab(&t, s, s->map | atomic_load_explicit(&s->remote, memory_order_acquire));
				s->orphan = SLAB_ORPHAN_TRIMMED;
			}
		}
	}
	trim_flush(&t);
	uvm_unlock(&sl.lock);
}

void slab_trim(void)
{
	struct heap *th = uvm__heap;

	if (th)
		trim_heap(&th->slab);
	trim_orphans(true);
}

void slab_decay_orphans(void) { trim_orphans(false); }

/* ------------------------------------------------------ stats, fork */

_Static_assert(NCLASS <= UVM_FRAG_CLASSES + UVM_FRAG_CLASSES_MORE, "struct uvm_frag has too few classes");

/*
 * The figures below read slab headers that their owners change as they
 * read: every word with a relaxed load, bounded by what the slab can hold
 * (vminfo reads them so from another process).  They walked the owners'
 * partial and full lists, under claims that hold an owner's area caches
 * but not its slabs, whose slow paths move slabs between those lists with
 * no claim to wait on: a walk could follow a slab onto another list
 * (ThreadSanitizer, uvm_frag_stats beside tests/tsan_churn.c's threads).
 * The slabs are the busy trees' slab areas, which the nodes' locks hold
 * still while they are copied.
 */
/*
 * Objects of the slab at base in h's hand (h: its owner, or NULL).  Another
 * thread's hand may hold some too (slab_free_hit): those count live here,
 * at most SLAB_MAG a class in each other thread, until it uses them or
 * sends them home.
 */
static unsigned in_hand_of(const struct slab_heap *h, unsigned c, uintptr_t base)
{
	unsigned n = 0, held = h ? slab_hand_held(h, c) : 0;

	for (unsigned i = 0; i < held; i++)
		n += (uintptr_t)__atomic_load_n(&h->mag[c][i], __ATOMIC_RELAXED) - base < SLAB_SIZE;
	return n;
}

/* Class c's figures in f, to fill (uvm_frag_class_at's, writable). */
static struct uvm_frag_class *frag_class(struct uvm_frag *f, unsigned c) { return (struct uvm_frag_class *)uvm_frag_class_at(f, c); }

/*
 * The slab at base into its class's figures: live = used less the remote
 * frees not yet taken back and the objects in its owner's hand.  A header
 * caught being rewritten (its class, room or counts out of bounds) is left
 * out.
 */
static void frag_header(struct uvm_frag *f, uintptr_t base)
{
	const struct region *r = region_of(base);
	const struct slab *s = r ? region_chunk(r, base) : NULL;
	unsigned c, room, carved, used;
	uint64_t pending, live;
	size_t span;
	struct uvm_frag_class *k;

	if (!s)
		return;
	c = __atomic_load_n(&s->cls, __ATOMIC_RELAXED);
	room = __atomic_load_n(&s->room, __ATOMIC_RELAXED);
	carved = __atomic_load_n(&s->carved, __ATOMIC_RELAXED);
	used = __atomic_load_n(&s->used, __ATOMIC_RELAXED);
	if (c >= NCLASS)
		return;
	/* Either span: a kernel that refuses guard markers turns them off after slabs were made short of theirs. */
	span = room == SLAB_SIZE / class_size(c) ? SLAB_SIZE : SLAB_AREA_BYTES;
	if (room != span / class_size(c) || carved > room || used > room)
		return;
	pending = slab_remote_count(c, atomic_load_explicit(&s->remote, memory_order_relaxed)) +
		  in_hand_of(atomic_load_explicit(&s->owner, memory_order_relaxed), c, base);
	live = used > pending ? used - pending : 0;
	if (live > carved)
		live = carved;
	k = frag_class(f, c);
	k->slabs++;
	k->live += live;
	k->free += carved - live;
	k->never_used += room - carved;
	k->occupancy[live ? 1 + live * 4 / room - (live == room) : 0]++;
	f->slab_free_bytes += (carved - live) * class_size(c);
	f->slab_meta_bytes += span - room * class_size(c);
}

static void frag_area(const struct vmap_area *va, void *f)
{
	if (va->flags & VA_SLAB)
		frag_header(f, va->va_start);
}

void slab_frag(struct uvm_frag *f)
{
	for (unsigned c = 0; c < NCLASS; c++)
		frag_class(f, c)->size = class_size(c);
	vn_snapshot_each(vn_busy_snapshot, frag_area, f);
}

static void count_classes(struct uvm_stats *st, const uint64_t *allocs, const uint64_t *frees)
{
	for (unsigned c = 0; c < NCLASS; c++) {
		uint64_t a = __atomic_load_n(&allocs[c], __ATOMIC_RELAXED), f = __atomic_load_n(&frees[c], __ATOMIC_RELAXED);

		st->small_allocs += a;
		st->small_frees += f;
		st->small_alloc_bytes += a * class_size(c);
		st->small_free_bytes += f * class_size(c);
	}
}

static void stats_one(struct heap *h, void *arg)
{
	count_classes(arg, h->slab.allocs, h->slab.frees);
}

static void carved_one(struct heap *h, void *arg) { *(uint64_t *)arg += h->slab.carved; }

uint64_t slab_free_bytes(const struct uvm_stats *st)
{
	uint64_t carved = __atomic_load_n(&sl.carved, __ATOMIC_RELAXED);

	heap_for_each_live(carved_one, &carved);
	uvm_lock(&sl.late_lock);
	carved += sl.late.carved;
	uvm_unlock(&sl.late_lock);
	carved -= st->small_alloc_bytes - st->small_free_bytes; /* less the live objects' bytes */
	return (int64_t)carved > 0 ? carved : 0;
}

void slab_stats(struct uvm_stats *st)
{
	heap_for_each_live(stats_one, st);
	count_classes(st, sl.allocs, sl.frees);
	uvm_lock(&sl.late_lock);
	count_classes(st, sl.late.allocs, sl.late.frees);
	uvm_unlock(&sl.late_lock);
	st->slabs = atomic_load_explicit(&sl.slabs, memory_order_relaxed);
}

void slab_fork_prepare(void)
{
	uvm_lock(&sl.late_lock);
	uvm_lock(&sl.lock);
}

void slab_fork_parent(void)
{
	uvm_unlock(&sl.lock);
	uvm_unlock(&sl.late_lock);
}

/*
 * The other threads' slab heaps stay with their dead heaps (heap.c): their
 * slabs stay owned by no live thread, and the child's frees into them go
 * to the remote lists and are never reused.
 */
void slab_fork_child(void)
{
	uvm_lock_init(&sl.lock);
	uvm_lock_init(&sl.late_lock);
}

void slab_describe(struct uvm_descriptor *d)
{
	d->heap_hand_top = offsetof(struct heap, slab) + offsetof(struct slab_heap, top);
	d->heap_hand = offsetof(struct heap, slab) + offsetof(struct slab_heap, mag);
	d->hand_size = SLAB_MAG;
	d->hand_classes = NCLASS;
	d->slabs = (uintptr_t)&sl.slabs;
	d->slab_size = SLAB_SIZE;
	d->slab_header = sizeof(struct slab);
	d->slab_used = offsetof(struct slab, used);
	d->slab_carved = offsetof(struct slab, carved);
	d->slab_room = offsetof(struct slab, room);
	d->slab_objsize = offsetof(struct slab, size);
	d->slab_remote = offsetof(struct slab, remote);
	d->slab_owner = offsetof(struct slab, owner);
	d->slab_remote_shift = SLAB_REMOTE_SHIFT;
	d->slab_map_size = class_size(SLAB_MAP_FIRST);
	d->region_chunks = offsetof(struct region, chunks);
	d->chunk_shift = ARENA_CHUNK_SHIFT;
	d->chunk_bytes = ARENA_CHUNK_BYTES;
}
