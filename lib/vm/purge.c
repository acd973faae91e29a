/*
 * purge.c - batch the giving back of lazily freed areas.
 *
 * Userspace difference: the kernel's purge batches TLB flushes, here the
 * cost is the madvise syscall (and its TLB shootdown), so adjacent ranges,
 * from every node, are merged into runs, and the runs go back together in
 * one process_madvise (os_release_ranges).  A lazily freed area that goes
 * to a pool is not madvised at all: the pool keeps it backed, so the next
 * allocation of its size reuses the pages with no syscall and no fault.  An
 * area leaves a pool backed-and-reusable only by decay, and then it is given
 * back like any other.  The purge runs inline on the thread whose free
 * crossed the threshold (no helper thread in someone else's program).
 *
 * Userspace difference: a kernel pool holds address ranges whose pages were
 * already freed; ours hold the pages too, so what pools keep is capped at
 * lazy_max_pages, and the rest is given back.
 */
#include "purge.h"

#include <limits.h>
#include <sys/uio.h>

#include "arena.h"
#include "huge.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "trace.h"
#include "vnode.h"
#include "uvmalloc-descriptor.h"

static struct {
	uvm_lock_t lock; /* vmap_purge_lock: one purge at a time */
	size_t lazy_max;
	bool fixed; /* UVM_LAZY_MAX set: lazy_max is the limit, not a cap on purge_retain_max's share */
	uint64_t purges, purged_bytes;
} purge = { .lock = UVM_LOCK_INIT };

static unsigned purge_cpus;

static void set_lazy_max(long long opt)
{

	/*
	 * The kernel's lazy_max_pages(), fls(CPUs) * 32 MiB.  Its lazily freed
	 * ranges have given their pages back already; ours keep them until the
	 * purge (and pools keep them after), so the limit is resident memory:
	 * it caps the share of the busy pages that purge_retain_max allows,
	 * which is what bounds a small program.  An eighth of it (4 MiB per
	 * fls(CPUs)) made a large heap's turnover a cycle of purges and faults:
	 * allocwork churn (400 MiB of 4-16 KiB blocks, half freed and allocated
	 * again each round) took 1.55 s against 1.39 with this cap (median of 5,
	 * 118.5k faults against 111.1k, peak RSS +0.5 %), and python3's workload
	 * repeated 25 times in one process peaked at 257 MB against 241.5 (glibc
	 * 225.5; the reverse of what the smaller cap was chosen on, before
	 * pools and lazy reuse).  No other allocwork workload, Redis, sqlite3
	 * or sort changed its faults or peak RSS.
	 */
	__atomic_store_n(&purge.fixed, opt != 0, __ATOMIC_RELAXED);
	__atomic_store_n(&purge.lazy_max, opt ? (size_t)opt : fls_ul(purge_cpus) * ((32u << 20) >> UVM_PAGE_SHIFT),
			 __ATOMIC_RELAXED);
}

void purge_init(unsigned cpus)
{
	purge_cpus = cpus;
	set_lazy_max(option(OPT_LAZY_MAX));
	option_watch(OPT_LAZY_MAX, set_lazy_max); /* uvm_option_set */
}

size_t purge_lazy_max(void) { return purge.lazy_max; }

/*
 * What lazy lists, and pools, may hold now: a share of the busy areas,
 * between PURGE_RETAIN_MIN and lazy_max (UVM_LAZY_MAX, when set, is the
 * limit as it stands).  A fixed limit made of freed memory a program's
 * largest part: a 3 MiB working set of threads that come and go held 14
 * MiB at its peak, 8 of them pooled for misses that mostly never came.
 * A share keeps large programs' limit where it was (python3's 200 MiB
 * reaches lazy_max) and a small one's retained memory small.
 */
size_t purge_retain_max(void)
{
	size_t share = vn_busy_pages() / PURGE_RETAIN_SHARE;

	if (purge.fixed || share >= purge.lazy_max)
		return purge.lazy_max;
	return share > PURGE_RETAIN_MIN ? share : PURGE_RETAIN_MIN; /* lazy_max is 1024 pages at least */
}

/* Merge two address-sorted lists. */
static void merge_sorted(struct list_head *a, struct list_head *b, struct list_head *out)
{
	while (!list_empty(a) && !list_empty(b)) {
		struct vmap_area *x = list_first_entry(a, struct vmap_area, list);
		struct vmap_area *y = list_first_entry(b, struct vmap_area, list);
		struct vmap_area *m = x->va_start < y->va_start ? x : y;

		list_del(&m->list);
		list_add_tail(&m->list, out);
	}
	list_splice_tail(a, out);
	list_splice_tail(b, out);
}

/* Sort by va_start: a merge sort on the list itself, nothing allocated. */
static void sort_by_address(struct list_head *head)
{
	LIST_HEAD(left);
	LIST_HEAD(right);
	struct list_head *slow = head->next, *fast = head->next;

	if (list_empty(head) || head->next->next == head)
		return;
	while (fast->next != head && fast->next->next != head) {
		slow = slow->next;
		fast = fast->next->next;
	}
	/* [head->next .. slow] to left, the rest to right. */
	left.next = head->next;
	left.next->prev = &left;
	left.prev = slow;
	right.next = slow->next;
	right.next->prev = &right;
	right.prev = head->prev;
	right.prev->next = &right;
	slow->next = &left;
	list_init(head);
	sort_by_address(&left);
	sort_by_address(&right);
	merge_sorted(&left, &right, head);
}

/*
 * The runs a purge gives back, batched: one system call for up to
 * RUN_BATCH of them, and one more for the huge or newly mapped ones among
 * them, which lose MADV_HUGEPAGE once their pages are given back, so that
 * their VMAs merge again (os_release_ranges, os_nohugepage_ranges).  Guard markers survive
 * MADV_DONTNEED, so ranges going back to the tree lose theirs too.  The
 * batch is static, not on the stack of the free that purges: purges run
 * one at a time (purge.lock), and a fork waits for the one in flight.
 * vmbench full_fit gives about 1 300 separate runs back: batches of 32
 * took 40 calls (and 40 seccomp asks), batches of IOV_MAX take 2.
 */
#define RUN_BATCH IOV_MAX

static struct runs {
	struct iovec release[RUN_BATCH], nohuge[RUN_BATCH];
	size_t n, nnohuge, calls;
} batch;

static void runs_flush(struct runs *b)
{
	b->calls += os_release_ranges(b->release, b->n);
	b->calls += os_nohugepage_ranges(b->nohuge, b->nnohuge);
	b->n = b->nnohuge = 0;
}

/*
 * A run of touching ranges into the batch.  One whose every area was
 * mapped fresh (unback) has no pages and no guard markers to give back,
 * only the MADV_NOHUGEPAGE that a new mapping lacks (allocwork large, whose
 * blocks take pages by mremap: a purge made three calls for each before,
 * now one mmap each and the batch's).
 */
static void runs_add(struct runs *b, uintptr_t start, uintptr_t end, bool huge, bool fresh)
{
	struct iovec run = { (void *)start, end - start };

	if (!fresh)
		b->release[b->n++] = run;
	if (huge || fresh)
		b->nohuge[b->nnohuge++] = run;
	if (b->n == RUN_BATCH || b->nnohuge == RUN_BATCH)
		runs_flush(b);
}

/*
 * Mappings of their own (hugetlb bodies, moved pages) become plain region
 * again, so their VMAs merge back once the run loses MADV_HUGEPAGE (the
 * batch's).  Whether va is a fresh mapping now, whole: a map that failed
 * leaves its pages, which must still be given back (the free tree's memory
 * reads as zero).
 */
static bool unback(struct vmap_area *va)
{
	bool fresh = false;

	huge_unback(va);
	if (va->flags & VA_MOVED) {
		fresh = os_map_fresh(va->va_start, va_size(va)) == 0;
		va->flags &= ~VA_MOVED;
	}
	return fresh;
}

/* Give the pages of a sorted list back to the kernel, as runs of touching ranges; the madvise calls made. */
static size_t release_runs(struct list_head *sorted)
{
	struct vmap_area *va;
	struct runs *b = &batch;
	uintptr_t start = 0, end = 0;
	bool huge = false, fresh = true;

	b->n = b->nnohuge = b->calls = 0;

	list_for_each_entry(va, sorted, list) {
		if (va->va_start != end) {
			if (end)
				runs_add(b, start, end, huge, fresh);
			start = va->va_start;
			huge = false;
			fresh = true;
		}
		fresh &= unback(va);
		huge |= (va->flags & VA_HUGE) != 0;
		end = va->va_end;
		purge.purged_bytes += va_size(va);
	}
	if (end)
		runs_add(b, start, end, huge, fresh);
	runs_flush(b);
	return b->calls;
}

static size_t purge_locked(int full)
{
	LIST_HEAD(lazy);
	LIST_HEAD(release);
	struct vmap_area *va, *n;
	size_t lazy_pages = 0, decayed = 0, pooled, calls, areas = 0, bytes = purge.purged_bytes, retain = purge_retain_max();
	uint64_t t0 = UVM_TRACED(purge) ? trace_now_ns() : 0;

	for (unsigned id = 0; id < vn_count(); id++) {
		vn_pool_decay(id, full, &release);
		lazy_pages += vn_lazy_detach(id, &lazy);
	}
	list_for_each_entry(va, &release, list)
		decayed += va_pages(va);
	pooled = vn_pooled_pages();
	list_for_each_entry_safe(va, n, &lazy, list) {
		list_del(&va->list);
		if (!full && va_pages(va) <= VN_POOL_PAGES && pooled + va_pages(va) <= retain) {
			pooled += va_pages(va);
			vn_pool_put(va);
		} else {
			list_add_tail(&va->list, &release);
		}
	}
	sort_by_address(&release);
	if (UVM_TRACED(purge))
		list_for_each_entry(va, &release, list)
			areas++;
	calls = release_runs(&release);
	arena_release(&release);
	vn_lazy_sub(lazy_pages);
	purge.purges++;
	UVM_TRACE(purge, areas, purge.purged_bytes - bytes, calls, trace_now_ns() - t0);
	return decayed + lazy_pages;
}

size_t purge_now(int full)
{
	size_t pages;

	uvm_lock(&purge.lock);
	pages = purge_locked(full);
	uvm_unlock(&purge.lock);
	return pages;
}

/*
 * A purge when lazy pages pass the limit, unless one runs already: a free
 * does not wait for it (the trylock).  Past PURGE_LAZY_HARD times the
 * limit it does wait, and purges what is still over after the wait.  A
 * purge costs more per area than a free, so a few threads freeing while
 * one purges outran it without bound: four churning threads on two CPUs
 * left 28-200 GiB of areas lazy, with their pages, and the regions grew
 * to 1 TiB in 12 s.
 */
static void purge_if_over(size_t lazy)
{
	size_t floor = purge.lazy_max < PURGE_RETAIN_MIN ? purge.lazy_max : PURGE_RETAIN_MIN, limit;

	/* The floor first: the share is a walk over the nodes. */
	if (lazy <= floor || lazy <= (limit = purge_retain_max()))
		return;
	if (!uvm_trylock(&purge.lock)) {
		if (lazy <= PURGE_LAZY_HARD * limit)
			return;
		uvm_lock(&purge.lock);
		if (vn_lazy_pages() <= limit) {
			uvm_unlock(&purge.lock); /* the purge it waited for took them */
			return;
		}
	}
	purge_locked(0);
	uvm_unlock(&purge.lock);
}

/*
 * Every area of vas out of its busy tree: into a pool while pooling is
 * allowed and there is room, else lazy.  Room up to lazy_max, not the busy
 * share: a backed free brings a working set that no live thread holds and
 * the next threads' misses take back with no fault, where the share (of
 * the pages still busy, few once the exiting thread had freed its own)
 * sent most of it lazily to the next purge.  allocwork tasks (6 rounds of
 * 4 threads on 2 CPUs, 10 MB each) faulted every round's pages in again.
 * Large areas too (vn_pool_get_large): a thread per task that callocs a
 * table of 2 MB read it before writing it, and each fresh page took a
 * fault for the read (the zero page) and another, with a TLB flush on
 * every CPU of the process, for the write.  A hugetlb body stays out.
 */
static void free_areas(struct list_head *vas, bool pooling)
{
	struct vmap_area *va, *n;
	size_t pooled, lazy = 0, retain;

	if (list_empty(vas))
		return;
	pooled = pooling ? vn_pooled_pages() : 0;
	retain = pooling ? purge.lazy_max : 0;
	list_for_each_entry_safe(va, n, vas, list) {
		list_del(&va->list);
		vn_busy_erase(va);
		if (!(va->flags & VA_HUGETLB) && pooled + va_pages(va) <= retain) {
			pooled += va_pages(va);
			vn_pool_put(va);
		} else {
			lazy = vn_lazy_add(va);
		}
	}
	purge_if_over(lazy);
}

void purge_free_lazily(struct list_head *vas) { free_areas(vas, false); }
void purge_free_backed(struct list_head *vas) { free_areas(vas, true); }

/* What exits pooled past the share waits a few decay periods for new threads, no longer. */
void purge_decay(void)
{
	if (vn_pooled_pages() > purge_retain_max())
		purge_now(0);
}

void purge_stats(struct uvm_stats *st)
{
	uvm_lock(&purge.lock);
	st->purges = purge.purges;
	st->purged_bytes = purge.purged_bytes;
	uvm_unlock(&purge.lock);
}

void purge_fork_prepare(void) { uvm_lock(&purge.lock); }
void purge_fork_parent(void) { uvm_unlock(&purge.lock); }
void purge_fork_child(void) { uvm_lock_init(&purge.lock); }

void purge_describe(struct uvm_descriptor *d)
{
	d->purges = (uintptr_t)&purge.purges;
	d->purged_bytes = (uintptr_t)&purge.purged_bytes;
}
