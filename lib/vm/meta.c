/*
 * meta.c - the vmap_area object pool, in shards.
 *
 * Every thread takes and frees objects through a shard of its own (round
 * robin over one shard per CPU), the kernel's per-CPU slab caches in
 * place of vmap_area_cachep's one lock: a split, a miss or a purge of one
 * thread then seldom meets another's.  On 16 cores, random_size's
 * threads waited on the single pool lock 2 100 times in a 6 ms run (a
 * fifth of them asleep in the kernel), the most of any lock.  A short
 * shard takes the other shards' free objects before it carves, so objects
 * that one thread freed (a purge's merges, a consumer's frees of a
 * producer's objects) serve the others, and the pool grows with the
 * objects in use, not with the shards or the objects handed over.
 */
#include "meta.h"

#include <stdint.h>

#include "lock.h"
#include "os.h"
#include "uvmalloc-descriptor.h"

#define META_CHUNK (256 * 1024)
/*
 * One object per 128 bytes: two cache lines, the unit the adjacent-line
 * prefetcher moves.  Areas of different threads are written on every
 * cache hit (list links, caller, live flag); packed at 72 bytes, neighbours
 * shared lines and a 1-page alloc/free loop ran 4x slower per thread at 2
 * threads than at 1 on a 16-core machine, against flat scaling padded.
 */
#define META_OBJ_SIZE 128
_Static_assert(sizeof(struct vmap_area) <= META_OBJ_SIZE, "vmap_area outgrew its slot");
/*
 * A chunk's pages are populated a step ahead of the carving, one
 * MADV_POPULATE_WRITE for the next 128 objects, not faulted in one by one
 * as each page's first object is written: this guest writes fresh memory
 * at 1.7x the rate populated (docs/measurements.md, UVM_POPULATE), and
 * a program that makes many areas grows this pool by a page every 32
 * objects (vmbench long_busy_list, 15 000 areas made at its start: 10.3 ->
 * 8.1 ms; full_fit 24.0 -> 18.3).  Four pages a step in a shard's first
 * chunk, sixteen in the next: steps of 64 KiB throughout measured the same
 * time with a quarter of the calls (these come only as the pool grows), but
 * held 0.1 MiB more in allocwork batch and mixed, small programs whose peak
 * RSS is glibc's plus a few hundred KiB; a pool past its first chunk
 * serves 2 048 areas and more, beside which a step is little.
 */
#define META_POPULATE_STEP ((size_t)16 << 10)
#define META_POPULATE_STEP_MORE ((size_t)64 << 10)
_Static_assert(META_CHUNK % META_POPULATE_STEP_MORE == 0 && META_POPULATE_STEP_MORE % META_POPULATE_STEP == 0 &&
		       META_POPULATE_STEP % META_OBJ_SIZE == 0,
	       "steps tile a chunk");
#define META_SHARDS_MAX 64
#define META_BATCH 16 /* objects a short shard takes beyond its need, so that the next takes stay in it */

struct meta_shard {
	uvm_lock_t lock;
	struct vmap_area *free;   /* singly linked through va_start */
	_Atomic size_t nr_free;   /* read unlocked by shards looking for objects to take */
	char *bump, *end;         /* this shard's chunk */
	size_t step;              /* populated at a time (META_POPULATE_STEP, then _MORE) */
	size_t live;              /* handed out less freed here, modulo 2^64: only the sum is a count */
} __attribute__((aligned(64)));

static struct meta_shard shards[META_SHARDS_MAX]; /* zeroed: UVM_LOCK_INIT */
static unsigned nr_shards = 1;
static _Atomic size_t carved; /* objects ever carved, all shards (vminfo reads it) */

void meta_init(unsigned cpus) { nr_shards = cpus < 1 ? 1 : cpus < META_SHARDS_MAX ? cpus : META_SHARDS_MAX; }

static unsigned own_index(void)
{
	static _Atomic unsigned next;
	static __thread unsigned id __attribute__((tls_model("initial-exec")));

	if (!id)
		id = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % nr_shards + 1;
	return id - 1;
}

static size_t free_count(const struct meta_shard *s) { return atomic_load_explicit(&s->nr_free, memory_order_relaxed); }

/* The free count moves under the shard's lock; a plain store, since only gather's peek reads it unlocked. */
static void set_free_count(struct meta_shard *s, size_t n) { atomic_store_explicit(&s->nr_free, n, memory_order_relaxed); }

static void push(struct meta_shard *s, struct vmap_area *va)
{
	va->va_start = (uintptr_t)s->free;
	s->free = va;
	set_free_count(s, free_count(s) + 1);
}

static struct vmap_area *pop(struct meta_shard *s)
{
	struct vmap_area *va = s->free;

	if (va) {
		s->free = (struct vmap_area *)va->va_start;
		set_free_count(s, free_count(s) - 1);
	}
	return va;
}

/*
 * Up to want objects from other shards, in one sweep, chained through
 * va_start; none of the caller's locks held, so waiting for a busy shard
 * is safe (one lock at a time).  Waiting, not only trying: a shard that
 * skipped a busy one carved instead, and a producer whose objects a
 * consumer thread frees grew the pool with every one handed over on 16
 * cores (test_meta).
 */
static struct vmap_area *gather(unsigned self, size_t want)
{
	struct vmap_area *chain = NULL, *va;

	for (unsigned i = 1; i < nr_shards && want; i++) {
		struct meta_shard *from = &shards[(self + i) % nr_shards];

		if (!free_count(from))
			continue;
		uvm_lock(&from->lock);
		for (; want && (va = pop(from)); want--) {
			va->va_start = (uintptr_t)chain;
			chain = va;
		}
		uvm_unlock(&from->lock);
	}
	return chain;
}

/* A fresh object from s's chunk, or NULL when out of memory (carve_to counts it in carved). */
static struct vmap_area *carve(struct meta_shard *s)
{
	struct vmap_area *va;

	if (s->bump == s->end) {
		char *chunk = os_alloc_meta(META_CHUNK);

		if (!chunk)
			return NULL;
		s->step = s->bump ? META_POPULATE_STEP_MORE : META_POPULATE_STEP; /* s->bump: a chunk before this one */
		s->bump = chunk;
		s->end = chunk + META_CHUNK / META_OBJ_SIZE * META_OBJ_SIZE;
	}
	va = (struct vmap_area *)s->bump;
	if (!((size_t)(s->end - s->bump) % s->step))
		os_populate((uintptr_t)s->bump, s->step); /* a kernel without it (before 5.14) faults the pages in as before */
	s->bump += META_OBJ_SIZE;
	return va;
}

/* Fresh objects into shard s (its lock held) until it has n free, or memory runs out. */
static void carve_to(struct meta_shard *s, size_t n)
{
	size_t have = free_count(s), fresh = 0;
	struct vmap_area *va;

	for (; have < n && (va = carve(s)); have++, fresh++)
		push(s, va);
	atomic_fetch_add_explicit(&carved, fresh, memory_order_relaxed);
}

/*
 * At least n free objects in shard s if memory allows (its lock held, and
 * dropped meanwhile): other shards' free objects first, else fresh ones, a
 * batch more either way so that the next takes stay in it.
 */
static void refill(struct meta_shard *s, unsigned self, size_t n)
{
	struct vmap_area *chain, *va;

	uvm_unlock(&s->lock);
	chain = gather(self, n + META_BATCH);
	uvm_lock(&s->lock);
	for (; chain; chain = va) {
		va = (struct vmap_area *)chain->va_start;
		push(s, chain);
	}
	if (free_count(s) < n)
		carve_to(s, n + META_BATCH);
}

struct vmap_area *meta_va_alloc(void)
{
	unsigned self = own_index();
	struct meta_shard *s = &shards[self];
	struct vmap_area *va;

	uvm_lock(&s->lock);
	if (!s->free)
		refill(s, self, 1);
	if ((va = pop(s)))
		s->live++;
	uvm_unlock(&s->lock);
	return va;
}

/* A thread cache's refill of its spares: its splits take a shard's lock once a batch, not once a split. */
size_t meta_va_alloc_list(struct list_head *head, size_t n)
{
	unsigned self = own_index();
	struct meta_shard *s = &shards[self];
	struct vmap_area *va;
	size_t got = 0;

	uvm_lock(&s->lock);
	if (free_count(s) < n)
		refill(s, self, n);
	for (; got < n && (va = pop(s)); got++)
		list_add(&va->list, head);
	s->live += got;
	uvm_unlock(&s->lock);
	return got;
}

void meta_va_free(struct vmap_area *va)
{
	struct meta_shard *s = &shards[own_index()];

	uvm_lock(&s->lock);
	push(s, va);
	s->live--;
	uvm_unlock(&s->lock);
}

void meta_va_free_list(struct list_head *head)
{
	struct meta_shard *s;
	struct vmap_area *va, *n;

	if (list_empty(head))
		return;
	s = &shards[own_index()];
	uvm_lock(&s->lock);
	list_for_each_entry_safe(va, n, head, list) {
		push(s, va);
		s->live--;
	}
	uvm_unlock(&s->lock);
	list_init(head);
}

size_t meta_va_live(void)
{
	size_t n = 0;

	for (unsigned i = 0; i < META_SHARDS_MAX; i++) {
		uvm_lock(&shards[i].lock);
		n += shards[i].live;
		uvm_unlock(&shards[i].lock);
	}
	return n;
}

size_t meta_bytes(void) { return atomic_load_explicit(&carved, memory_order_relaxed) * META_OBJ_SIZE; }

void meta_describe(struct uvm_descriptor *d)
{
	d->meta_carved = (uintptr_t)&carved;
	d->meta_obj_size = META_OBJ_SIZE;
}

/* Every shard, in index order: no other path holds two. */
void meta_fork_prepare(void)
{
	for (unsigned i = 0; i < META_SHARDS_MAX; i++)
		uvm_lock(&shards[i].lock);
}

void meta_fork_parent(void)
{
	for (unsigned i = META_SHARDS_MAX; i-- > 0;)
		uvm_unlock(&shards[i].lock);
}

void meta_fork_child(void)
{
	for (unsigned i = 0; i < META_SHARDS_MAX; i++)
		uvm_lock_init(&shards[i].lock);
}
