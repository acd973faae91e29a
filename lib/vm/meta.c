/*
 * meta.c - the vmap_area object pool, in shards.
 *
 * Every thread takes and frees objects through a shard of its own (round
 * robin over one shard per CPU), the kernel's per-CPU slab caches in
 * place of vmap_area_cachep's one lock: a split, a miss or a purge of one
 * thread then never waits on another's.  On 16 cores, random_size's
 * threads waited on the single pool lock 2 100 times in a 6 ms run (a
 * fifth of them asleep in the kernel), the most of any lock.  An empty
 * shard takes a batch from another before it carves, so objects that one
 * thread freed (a purge's merges, an exited thread's splits) serve the
 * others, and the pool grows with the objects in use, not with the shards.
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
#define META_SHARDS_MAX 64
#define META_STEAL 16 /* objects an empty shard takes from another at a time */

struct meta_shard {
	uvm_lock_t lock;
	struct vmap_area *free;   /* singly linked through va_start */
	_Atomic size_t nr_free;   /* read unlocked by shards looking for objects to take */
	char *bump, *end;         /* this shard's chunk */
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

static void push(struct meta_shard *s, struct vmap_area *va)
{
	va->va_start = (uintptr_t)s->free;
	s->free = va;
	atomic_store_explicit(&s->nr_free, atomic_load_explicit(&s->nr_free, memory_order_relaxed) + 1, memory_order_relaxed);
}

static struct vmap_area *pop(struct meta_shard *s)
{
	struct vmap_area *va = s->free;

	if (va) {
		s->free = (struct vmap_area *)va->va_start;
		atomic_store_explicit(&s->nr_free, atomic_load_explicit(&s->nr_free, memory_order_relaxed) - 1,
				      memory_order_relaxed);
	}
	return va;
}

/*
 * Up to want objects for shard s (its lock held) from others that have
 * some and are not busy, in one sweep: only tried, never waited for, so
 * two empty shards cannot wait on each other.
 */
static void steal(struct meta_shard *s, unsigned self, size_t want)
{
	for (unsigned i = 1; i < nr_shards && want; i++) {
		struct meta_shard *from = &shards[(self + i) % nr_shards];
		struct vmap_area *va;

		if (!atomic_load_explicit(&from->nr_free, memory_order_relaxed) || !uvm_trylock(&from->lock))
			continue;
		for (unsigned n = 0; n < META_STEAL && want && (va = pop(from)); n++, want--)
			push(s, va);
		uvm_unlock(&from->lock);
	}
}

/* A fresh object from s's chunk, or NULL when out of memory (fill counts it in carved). */
static struct vmap_area *carve(struct meta_shard *s)
{
	struct vmap_area *va;

	if (s->bump == s->end) {
		char *chunk = os_alloc_meta(META_CHUNK);

		if (!chunk)
			return NULL;
		s->bump = chunk;
		s->end = chunk + META_CHUNK / META_OBJ_SIZE * META_OBJ_SIZE;
	}
	va = (struct vmap_area *)s->bump;
	s->bump += META_OBJ_SIZE;
	return va;
}

/*
 * At least n free objects in shard s (its lock held) if memory allows:
 * other shards' first, else fresh ones; a batch more either way, so that
 * the next takes stay here.
 */
static void fill(struct meta_shard *s, unsigned self, size_t n)
{
	size_t have = atomic_load_explicit(&s->nr_free, memory_order_relaxed), fresh = 0;
	struct vmap_area *va;

	if (have >= n)
		return;
	steal(s, self, n - have + META_STEAL);
	have = atomic_load_explicit(&s->nr_free, memory_order_relaxed);
	if (have >= n)
		return;
	for (; have < n + META_STEAL && (va = carve(s)); have++, fresh++)
		push(s, va);
	atomic_fetch_add_explicit(&carved, fresh, memory_order_relaxed);
}

/* Up to n objects onto head from shard s: fewer only when out of memory. */
static size_t take(struct meta_shard *s, unsigned self, struct list_head *head, size_t n)
{
	struct vmap_area *va;
	size_t got = 0;

	uvm_lock(&s->lock);
	fill(s, self, n);
	for (; got < n && (va = pop(s)); got++)
		list_add(&va->list, head);
	s->live += got;
	uvm_unlock(&s->lock);
	return got;
}

struct vmap_area *meta_va_alloc(void)
{
	unsigned self = own_index();
	LIST_HEAD(one);

	return take(&shards[self], self, &one, 1) ? list_first_entry(&one, struct vmap_area, list) : NULL;
}

/* A thread cache's refill of its spares: its splits take a shard's lock once a batch, not once a split. */
size_t meta_va_alloc_list(struct list_head *head, size_t n)
{
	unsigned self = own_index();

	return take(&shards[self], self, head, n);
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

/* Every shard, in index order: a holder of one only tries another (steal). */
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
