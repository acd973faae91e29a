/*
 * pcp.c - per-thread order caches (the kernel's pcp lists, mm/page_alloc.c).
 *
 * Seeds 000 and 003 are the rules: a block freed at order N goes back to the
 * order-N list whole, never split on free, and allocation tries the pcp
 * lists before anything shared.  Userspace difference: threads, not CPUs;
 * a thread's cache drains when the thread exits, and an idle thread's cache
 * is decayed by whichever thread next takes a slow path, since a preloaded
 * allocator must not start a thread of its own.
 *
 * Watermarks, as the kernel's adaptive pcp high (v6.7): `high` starts at
 * PCP_HIGH_MIN_PAGES; when frees overflow it after the thread missed in its
 * own cache (it had to fetch memory it has now given back: its working set
 * is larger than high), high grows by what it missed, up to UVM_PCP_HIGH.
 * Otherwise the coldest areas drain, round robin over the lists from their
 * tails (free_pcppages_bulk), until PCP_BATCH_PAGES below high.  Every
 * PCP_DECAY_NS, decay_pcp_high(): high falls by 1/8 towards
 * PCP_HIGH_MIN_PAGES, or by a quarter towards 0 for a thread that did
 * nothing since the last decay, and the excess drains.
 */
#include "pcp.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "arena.h"
#include "descriptor.h"
#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "purge.h"
#include "threads.h"
#include "trace.h"
#include "vnode.h"

#define PCP_SCAN 8 /* entries of a list looked at for an exact fit before taking any fit */

struct pcp_list {
	struct list_head head; /* hottest first */
	size_t count;
};

struct pcp {
	atomic_bool locked;  /* the owner on every operation; others only to decay, drain at exit, or fork */
	size_t pages, count; /* cached, all lists */
	size_t high;
	size_t missed;       /* pages fetched from the node since the last drain or decay */
	uint64_t ops, ops_at_decay;
	uint64_t allocs, frees, hits, misses, drained;
	uint64_t alloc_bytes, free_bytes; /* usable bytes of the areas handed out and freed */
	struct list_head link; /* in the registry */
	/*
	 * Area objects that trims take and merges give back, so the thread's
	 * splits and joins stay off the metadata lock (shared by all threads).
	 */
	struct list_head spare;
	size_t nr_spare;
	struct pcp_list lists[]; /* [nid * PCP_ORDERS + order] */
};

static struct {
	struct thr_registry thr; /* the caches; its lock also guards the counters of exited threads */
	uint64_t allocs, frees, hits, misses, drained, alloc_bytes, free_bytes;
	unsigned nodes;
	size_t high_max;
	bool enabled;
	_Atomic uint64_t next_decay;
	_Atomic uint64_t stray_allocs, stray_frees, stray_alloc_bytes, stray_free_bytes; /* from threads past their exit */
} reg = { .thr = THR_REGISTRY_INIT(reg.thr) };

static __thread struct pcp *tls_pcp __attribute__((tls_model("initial-exec")));
static __thread bool tls_exited __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ the lock */

static void pcp_lock(struct pcp *p)
{
	while (atomic_exchange_explicit(&p->locked, true, memory_order_acquire))
		while (atomic_load_explicit(&p->locked, memory_order_relaxed))
			sched_yield(); /* only a decaying or forking thread holds it, briefly */
}

static bool pcp_trylock(struct pcp *p) { return !atomic_exchange_explicit(&p->locked, true, memory_order_acquire); }
static void pcp_unlock(struct pcp *p) { atomic_store_explicit(&p->locked, false, memory_order_release); }

/* ------------------------------------------------------- list handling */

static unsigned order_of(size_t pages)
{
	unsigned k = fls_ul(pages) - 1;

	return k < PCP_ORDERS ? k : PCP_ORDERS - 1;
}

static struct pcp_list *list_of(struct pcp *p, unsigned nid, unsigned order) { return &p->lists[nid * PCP_ORDERS + order]; }
static struct pcp_list *list_of_area(struct pcp *p, const struct vmap_area *va)
{
	return list_of(p, va_nid(va), order_of(va_pages(va)));
}

static void unlink_cached(struct pcp *p, struct pcp_list *l, struct vmap_area *va)
{
	list_del(&va->list);
	va->cache = NULL;
	l->count--;
	p->count--;
	p->pages -= va_pages(va);
}

static bool fits(const struct vmap_area *va, size_t pages, size_t align)
{
	/* A hugetlb body can only be split on a 2 MiB boundary: such areas are reused whole or not at all. */
	return va_pages(va) >= pages && !(va->va_start & (align - 1)) &&
	       (va_pages(va) == pages || !(va->flags & VA_HUGETLB));
}

/* The first exact fit among the hottest PCP_SCAN entries, else the first fit among them. */
static struct vmap_area *take_fit(struct pcp *p, struct pcp_list *l, size_t pages, size_t align)
{
	struct vmap_area *va, *fit = NULL;
	unsigned seen = 0;

	list_for_each_entry(va, &l->head, list) {
		if (++seen > PCP_SCAN)
			break;
		if (!fits(va, pages, align))
			continue;
		if (va_pages(va) == pages) {
			fit = va;
			break;
		}
		if (!fit)
			fit = va;
	}
	if (fit)
		unlink_cached(p, l, fit);
	return fit;
}

/*
 * Move the coldest areas onto out until at most target pages stay: the tail
 * of each non-empty list in turn, as free_pcppages_bulk() does.
 */
static void drain_locked(struct pcp *p, size_t target, struct list_head *out)
{
	size_t total = (size_t)reg.nodes * PCP_ORDERS, pages = p->pages;
	uint64_t drained = p->drained;

	for (size_t i = 0; p->pages > target; i = (i + 1) % total) {
		struct pcp_list *l = &p->lists[i];
		struct vmap_area *va;

		if (!l->count)
			continue;
		va = list_entry(l->head.prev, struct vmap_area, list);
		unlink_cached(p, l, va);
		list_add_tail(&va->list, out);
		p->drained++;
	}
	p->missed = 0;
	UVM_TRACE(cache_drain, p->drained - drained, pages - p->pages);
}

/* ---------------------------------------------------- thread lifetime */

/* A zeroed struct pcp made ready (thr_attach's init). */
static void init_pcp(void *obj)
{
	struct pcp *p = obj;

	p->high = PCP_HIGH_MIN_PAGES < reg.high_max ? PCP_HIGH_MIN_PAGES : reg.high_max;
	list_init(&p->spare);
	for (size_t i = 0; i < (size_t)reg.nodes * PCP_ORDERS; i++)
		list_init(&p->lists[i].head);
}

static uvm_noinline struct pcp *self_slow(void)
{
	if (tls_exited)
		return NULL;
	return tls_pcp = thr_attach(&reg.thr, init_pcp);
}

static inline struct pcp *self(void)
{
	struct pcp *p = tls_pcp;

	return likely(p) ? p : self_slow();
}

static void fold_counters(struct pcp *p)
{
	reg.allocs += p->allocs;
	reg.frees += p->frees;
	reg.hits += p->hits;
	reg.misses += p->misses;
	reg.drained += p->drained;
	reg.alloc_bytes += p->alloc_bytes;
	reg.free_bytes += p->free_bytes;
}

/* Unregister p (its lists empty) and keep the struct for the next thread, which starts it afresh. */
static void retire(struct pcp *p)
{
	meta_va_free_list(&p->spare);
	uvm_lock(&reg.thr.lock);
	fold_counters(p);
	thr_retire_locked(&reg.thr, p);
	uvm_unlock(&reg.thr.lock);
}

static void thread_exit(void *arg)
{
	struct pcp *p = arg;
	LIST_HEAD(out);

	pcp_lock(p);
	drain_locked(p, 0, &out);
	pcp_unlock(p);
	purge_free_lazily(&out);
	retire(p);
	/* Frees that later destructors make bypass the cache: nothing would drain it again. */
	tls_pcp = NULL;
	tls_exited = true;
}

int pcp_init(unsigned nodes)
{
	size_t high = (size_t)option(OPT_PCP_HIGH) >> UVM_PAGE_SHIFT;

	reg.nodes = nodes;
	reg.enabled = option(OPT_PCP) && high;
	reg.high_max = high;
	return thr_init(&reg.thr, sizeof(struct pcp) + (size_t)nodes * PCP_ORDERS * sizeof(struct pcp_list),
			offsetof(struct pcp, link), thread_exit);
}

/* ------------------------------------------------------------ fast paths */

static bool cacheable(const struct pcp *p, const struct vmap_area *va)
{
	return p && reg.enabled && va_pages(va) <= reg.high_max;
}

/* Usable bytes of an area (its guard page left out): what the byte counters count. */
static size_t usable(const struct vmap_area *va) { return va_size(va) - UVM_PAGE_SIZE; }

/* The pages a hit on va for pages keeps: a one-page tail could never serve an area (a guard and nothing usable). */
static size_t kept_pages(const struct vmap_area *va, size_t pages) { return va_pages(va) < pages + 2 ? va_pages(va) : pages; }

/* Cache va as p's hottest area of its order; over high, grow high or drain the coldest onto out. */
static void put_locked(struct pcp *p, struct vmap_area *va, struct list_head *out)
{
	struct pcp_list *l = list_of_area(p, va);

	list_add(&va->list, &l->head);
	va->cache = p;
	l->count++;
	p->count++;
	p->pages += va_pages(va);
	if (p->high < PCP_HIGH_MIN_PAGES && PCP_HIGH_MIN_PAGES <= reg.high_max)
		p->high = PCP_HIGH_MIN_PAGES; /* a decayed thread is busy again */
	if (p->pages > p->high && p->missed) {
		p->high = p->high + p->missed < reg.high_max ? p->high + p->missed : reg.high_max;
		p->missed = 0;
	}
	if (p->pages > p->high)
		drain_locked(p, p->high > PCP_BATCH_PAGES ? p->high - PCP_BATCH_PAGES : 0, out);
}

/* A spare area object, under p's lock: the thread's own, else a fresh one. */
static struct vmap_area *spare_get(struct pcp *p)
{
	struct vmap_area *va;

	if (!p->nr_spare)
		return meta_va_alloc();
	va = list_first_entry(&p->spare, struct vmap_area, list);
	list_del(&va->list);
	p->nr_spare--;
	return va;
}

#define PCP_SPARE_MAX 32

static void spare_put(struct pcp *p, struct vmap_area *va)
{
	if (p->nr_spare >= PCP_SPARE_MAX) {
		meta_va_free(va);
		return;
	}
	list_add(&va->list, &p->spare);
	p->nr_spare++;
}

/* A larger area than asked for is cut to size (the buddy's expand()); the tail stays cached, whole. */
static void trim(struct pcp *p, struct vmap_area *va, size_t pages)
{
	struct vmap_area *tail;
	LIST_HEAD(out);

	if (kept_pages(va, pages) == va_pages(va))
		return;
	pcp_lock(p);
	tail = spare_get(p);
	pcp_unlock(p);
	if (!tail)
		return; /* out of metadata: the whole area is handed out */
	vn_busy_split(va, va->va_start + (pages << UVM_PAGE_SHIFT), tail);
	pcp_lock(p);
	put_locked(p, tail, &out);
	pcp_unlock(p);
	purge_free_lazily(&out);
}

/* The cached area of p that starts right where va ends, if it can join va. */
static struct vmap_area *mergeable_next(struct pcp *p, const struct vmap_area *va)
{
	va_slot_t *slot = arena_slot(va->va_end);
	struct vmap_area *next = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;

	if (!next || next->cache != p || next->va_start != va->va_end || atomic_load(&next->live))
		return NULL;
	/* A hugetlb body splits and joins only on 2 MiB boundaries; slabs are never cached. */
	if ((va->flags | next->flags) & VA_HUGETLB)
		return NULL;
	/*
	 * Equal neighbours stay apart: they are a batch of equal requests (an
	 * array of buffers, a deferred-free batch), which come back as such and
	 * fit exactly, where a joined block would be cut again at every one.
	 */
	if (va_size(next) == va_size(va))
		return NULL;
	return next;
}

/*
 * The buddy allocator's coalescing: a freed area takes in the cached areas
 * that follow it, so trimmed tails and neighbours freed earlier become one
 * block again instead of fragments no request fits.
 */
static void merge_next(struct pcp *p, struct vmap_area *va)
{
	struct vmap_area *next;

	while ((next = mergeable_next(p, va))) {
		unlink_cached(p, list_of_area(p, next), next);
		os_guard_remove(va->va_end - UVM_PAGE_SIZE, UVM_PAGE_SIZE); /* va's guard page is inside now */
		va->flags |= next->flags & (VA_HUGE | VA_MOVED | VA_REUSED);
		vn_busy_erase(next);
		vn_busy_resize(va, next->va_end);
		spare_put(p, next);
	}
}

bool pcp_put(struct vmap_area *va)
{
	struct pcp *p = self();
	LIST_HEAD(out);

	if (!cacheable(p, va)) {
		pcp_count_free(usable(va));
		return false;
	}
	pcp_lock(p);
	p->ops++;
	p->frees++;
	p->free_bytes += usable(va);
	merge_next(p, va);
	put_locked(p, va, &out);
	pcp_unlock(p);
	purge_free_lazily(&out);
	return true;
}

struct vmap_area *pcp_get(unsigned nid, size_t pages, size_t align)
{
	struct pcp *p;
	struct vmap_area *va = NULL;

	if (!reg.enabled || !(p = self()))
		return NULL;
	pcp_lock(p);
	p->ops++;
	if (p->count)
		for (unsigned k = order_of(pages); k < PCP_ORDERS && !va; k++)
			va = take_fit(p, list_of(p, nid, k), pages, align);
	if (va) {
		p->hits++;
		p->allocs++;
		p->alloc_bytes += (kept_pages(va, pages) - 1) << UVM_PAGE_SHIFT;
	} else {
		p->misses++;
		p->missed += pages;
	}
	pcp_unlock(p);
	if (va)
		trim(p, va, pages);
	else
		UVM_TRACE(cache_miss, pages, nid);
	trace_snapshot(); /* a program that only ever hits its caches still sends snapshots */
	return va;
}

/* Counted in the thread's own struct, or in shared atomics once the thread is past its exit. */
static void count_op(bool alloc, size_t bytes)
{
	struct pcp *p = tls_exited ? NULL : self();

	if (!p) {
		atomic_fetch_add_explicit(alloc ? &reg.stray_allocs : &reg.stray_frees, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(alloc ? &reg.stray_alloc_bytes : &reg.stray_free_bytes, bytes, memory_order_relaxed);
		return;
	}
	pcp_lock(p);
	p->ops++;
	*(alloc ? &p->allocs : &p->frees) += 1;
	*(alloc ? &p->alloc_bytes : &p->free_bytes) += bytes;
	pcp_unlock(p);
}

void pcp_count_alloc(size_t bytes) { count_op(true, bytes); }
void pcp_count_free(size_t bytes) { count_op(false, bytes); }

/* ------------------------------------------------------------- decay */

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* The coarse clock is read in the vDSO: no syscall. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void decay_one(struct pcp *p, struct list_head *out)
{
	size_t step;

	if (p->ops == p->ops_at_decay) {
		step = p->high / 4 > PCP_BATCH_PAGES ? p->high / 4 : PCP_BATCH_PAGES;
		p->high = p->high > step ? p->high - step : 0;
	} else if (p->high > PCP_HIGH_MIN_PAGES) {
		step = p->high / 8;
		p->high = p->high - step > PCP_HIGH_MIN_PAGES ? p->high - step : PCP_HIGH_MIN_PAGES;
	}
	p->ops_at_decay = p->ops;
	p->missed = 0;
	if (p->pages > p->high)
		drain_locked(p, p->high, out);
}

void pcp_decay(void)
{
	LIST_HEAD(out);
	struct pcp *p;

	uvm_lock(&reg.thr.lock);
	list_for_each_entry(p, &reg.thr.live, link) {
		/* A busy owner is plainly not idle: skip it rather than wait. */
		if (!pcp_trylock(p))
			continue;
		decay_one(p, &out);
		pcp_unlock(p);
	}
	uvm_unlock(&reg.thr.lock);
	purge_free_lazily(&out);
}

void pcp_decay_maybe(void)
{
	uint64_t now = now_ns(), due = atomic_load_explicit(&reg.next_decay, memory_order_relaxed);

	if (now < due || !atomic_compare_exchange_strong(&reg.next_decay, &due, now + PCP_DECAY_NS))
		return;
	pcp_decay();
}

void pcp_drain_all(void)
{
	LIST_HEAD(out);
	LIST_HEAD(spares);
	struct pcp *p;

	uvm_lock(&reg.thr.lock);
	list_for_each_entry(p, &reg.thr.live, link) {
		pcp_lock(p);
		drain_locked(p, 0, &out);
		list_splice_tail(&p->spare, &spares);
		p->nr_spare = 0;
		pcp_unlock(p);
	}
	uvm_unlock(&reg.thr.lock);
	purge_free_lazily(&out);
	meta_va_free_list(&spares);
}

size_t pcp_high(void)
{
	struct pcp *p = self();

	return p ? p->high : 0;
}

/* ------------------------------------------------------------- stats */

void pcp_stats(struct uvm_stats *st)
{
	struct pcp *p;

	uvm_lock(&reg.thr.lock);
	st->allocs += reg.allocs;
	st->frees += reg.frees;
	st->cache_hits += reg.hits;
	st->cache_misses += reg.misses;
	st->cache_drained += reg.drained;
	st->area_alloc_bytes += reg.alloc_bytes;
	st->area_free_bytes += reg.free_bytes;
	list_for_each_entry(p, &reg.thr.live, link) {
		pcp_lock(p);
		st->allocs += p->allocs;
		st->frees += p->frees;
		st->cache_hits += p->hits;
		st->cache_misses += p->misses;
		st->cache_drained += p->drained;
		st->area_alloc_bytes += p->alloc_bytes;
		st->area_free_bytes += p->free_bytes;
		st->cached_bytes += p->pages << UVM_PAGE_SHIFT;
		st->cached_count += p->count;
		pcp_unlock(p);
	}
	uvm_unlock(&reg.thr.lock);
	st->allocs += atomic_load_explicit(&reg.stray_allocs, memory_order_relaxed);
	st->frees += atomic_load_explicit(&reg.stray_frees, memory_order_relaxed);
	st->area_alloc_bytes += atomic_load_explicit(&reg.stray_alloc_bytes, memory_order_relaxed);
	st->area_free_bytes += atomic_load_explicit(&reg.stray_free_bytes, memory_order_relaxed);
}

/* -------------------------------------------------------------- fork */

void pcp_fork_prepare(void)
{
	struct pcp *p;

	uvm_lock(&reg.thr.lock);
	list_for_each_entry(p, &reg.thr.live, link)
		pcp_lock(p);
}

void pcp_fork_parent(void)
{
	struct pcp *p;

	list_for_each_entry(p, &reg.thr.live, link)
		pcp_unlock(p);
	uvm_unlock(&reg.thr.lock);
}

/* The other threads are gone in the child: their caches drain to the nodes, their counters fold in. */
void pcp_fork_child(void)
{
	struct pcp *p, *n;
	LIST_HEAD(out);

	uvm_lock_init(&reg.thr.lock);
	list_for_each_entry_safe(p, n, &reg.thr.live, link) {
		pcp_unlock(p);
		if (p == tls_pcp)
			continue;
		drain_locked(p, 0, &out);
		retire(p);
	}
	purge_free_lazily(&out);
}

void pcp_describe(struct uvm_descriptor *d)
{
	d->pcp_live = (uintptr_t)&reg.thr.live;
	d->pcp_link = offsetof(struct pcp, link);
	d->pcp_pages = offsetof(struct pcp, pages);
	d->pcp_count = offsetof(struct pcp, count);
	d->pcp_hits = offsetof(struct pcp, hits);
	d->pcp_misses = offsetof(struct pcp, misses);
	d->pcp_allocs = offsetof(struct pcp, allocs);
	d->pcp_frees = offsetof(struct pcp, frees);
	d->pcp_exited_allocs = (uintptr_t)&reg.allocs;
	d->pcp_exited_frees = (uintptr_t)&reg.frees;
	d->pcp_exited_hits = (uintptr_t)&reg.hits;
	d->pcp_exited_misses = (uintptr_t)&reg.misses;
}
