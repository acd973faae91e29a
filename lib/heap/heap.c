/*
 * heap.c - the registry of thread heaps, the owner/claimer protocol
 * (heap.h) and the thread-exit path.
 *
 * Heaps come from metadata memory and are never unmapped: a reader that
 * raced an exit reads a retired heap, not freed memory, and a free that
 * pushes onto an exited owner's inbox pushes onto a heap that still
 * exists.  pthread_setspecific never allocates for keys below 32, and
 * ours is created at set-up, among the first.
 */
#include "heap.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"
#include "os.h"
#include "track.h"
#include "uvmalloc-descriptor.h"

__thread struct heap *uvm__heap __attribute__((tls_model("initial-exec")));
static __thread bool tls_exited __attribute__((tls_model("initial-exec")));

static struct {
	uvm_lock_t lock;         /* live and vacant, and the counters exited threads folded in */
	struct list_head live;   /* every heap: running threads', vacant ones, and in a fork child the dead ones */
	struct list_head vacant; /* heaps of exited threads: the warm ones first, newest first */
	unsigned warm, warm_max; /* vacant heaps that kept their area caches, and how many may (thread_exit) */
	size_t size;            /* of one heap, a page multiple */
	size_t nr;              /* heaps made (never unmapped; backed whole when made, so resident) */
	pthread_key_t key;
	bool claims;            /* membarrier works: other threads' heaps can be claimed */
	bool fork_claimed;      /* the fork in progress claimed every live heap */
} reg = { .lock = UVM_LOCK_INIT, .live = LIST_HEAD_INIT(reg.live), .vacant = LIST_HEAD_INIT(reg.vacant) };

/* ------------------------------------------------------------ claims */

static bool membarrier_register(void)
{
	return !syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
}

/* Every thread of the process runs a full memory barrier before this returns. */
static bool membarrier_all(void)
{
	return !syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/* heap_try_enter failed: h is not busy; wait for the claim to end, then mark it busy for good. */
void heap_enter_slow(struct heap *h)
{
	do {
		while (atomic_load_explicit(&h->claimed, memory_order_acquire))
			sched_yield(); /* a claim lasts one decay, drain or fork */
		__atomic_store_n(&h->busy, 1, __ATOMIC_RELAXED);
		atomic_thread_fence(memory_order_seq_cst); /* this path may pay for a real fence */
		if (!atomic_load_explicit(&h->claimed, memory_order_acquire))
			return;
		__atomic_store_n(&h->busy, 0, __ATOMIC_RELEASE);
	} while (true);
}

/* Claim every live heap (under the registry lock): true when they are all held. */
static bool claim_all(void)
{
	struct heap *h;

	if (!reg.claims)
		return false;
	list_for_each_entry(h, &reg.live, link)
		atomic_store_explicit(&h->claimed, 1, memory_order_relaxed);
	if (!membarrier_all()) {
		list_for_each_entry(h, &reg.live, link)
			atomic_store_explicit(&h->claimed, 0, memory_order_release);
		return false;
	}
	list_for_each_entry(h, &reg.live, link)
		while (__atomic_load_n(&h->busy, __ATOMIC_ACQUIRE))
			sched_yield();
	return true;
}

static void release_all(void)
{
	struct heap *h;

	list_for_each_entry(h, &reg.live, link)
		atomic_store_explicit(&h->claimed, 0, memory_order_release);
}

void heap_for_each_claimed(void (*fn)(struct heap *h, bool owned, void *arg), void *arg)
{
	struct heap *h;
	bool all;

	uvm_lock(&reg.lock);
	all = claim_all();
	/*
	 * Without claims only the caller's own heap is safe, it is not inside
	 * an operation now, and the vacant ones: no thread runs them, and
	 * adopting one takes the lock this walk holds.
	 */
	list_for_each_entry(h, &reg.live, link)
		fn(h, !h->dead && (all || h == uvm__heap || h->vacant), arg);
	if (all)
		release_all();
	uvm_unlock(&reg.lock);
}

void heap_cooled(struct heap *h)
{
	if (!h->vacant || !h->warm)
		return;
	h->warm = false;
	reg.warm--;
	list_del(&h->vacant_link);
	list_add_tail(&h->vacant_link, &reg.vacant);
}

void heap_for_each_live(void (*fn)(struct heap *h, void *arg), void *arg)
{
	struct heap *h;

	uvm_lock(&reg.lock);
	list_for_each_entry(h, &reg.live, link)
		fn(h, arg);
	uvm_unlock(&reg.lock);
}

size_t heap_bytes(void) { return __atomic_load_n(&reg.nr, __ATOMIC_RELAXED) * reg.size; }

/* ------------------------------------------------------------- inbox */

/* Has h's inbox held more than HEAP_INBOX_PAGES for HEAP_INBOX_WAIT_NS? */
static bool inbox_stale(struct heap *h)
{
	uint64_t full_at;

	if (inbox_pages(atomic_load_explicit(&h->inbox_held, memory_order_relaxed)) < HEAP_INBOX_PAGES)
		return false;
	full_at = atomic_load_explicit(&h->inbox_full_at, memory_order_relaxed);
	return full_at && coarse_ns() - full_at > HEAP_INBOX_WAIT_NS;
}

/*
 * The count and the list change apart (a take may fall between a push's
 * two steps), so the bound is approximate; nothing is lost either way.
 */
bool heap_inbox_push(struct heap *h, struct vmap_area *va, bool always)
{
	size_t pages = va_pages(va), held;
	struct vmap_area *head;

	if (!always && inbox_stale(h))
		return false;
	held = inbox_pages(atomic_fetch_add_explicit(&h->inbox_held, pages + ((uint64_t)1 << INBOX_AREA_SHIFT),
						     memory_order_relaxed));
	if (held < HEAP_INBOX_PAGES && held + pages >= HEAP_INBOX_PAGES)
		atomic_store_explicit(&h->inbox_full_at, coarse_ns(), memory_order_relaxed);
	head = atomic_load_explicit(&h->inbox, memory_order_relaxed);
	do
		va->list.next = head ? &head->list : NULL;
	while (!atomic_compare_exchange_weak_explicit(&h->inbox, &head, va, memory_order_release, memory_order_relaxed));
	return true;
}

bool heap_inbox_take(struct heap *h, struct list_head *out)
{
	struct vmap_area *va, *next;

	if (!atomic_load_explicit(&h->inbox, memory_order_relaxed))
		return false;
	atomic_store_explicit(&h->inbox_held, 0, memory_order_relaxed);
	atomic_store_explicit(&h->inbox_full_at, 0, memory_order_relaxed);
	for (va = atomic_exchange_explicit(&h->inbox, NULL, memory_order_acquire); va; va = next) {
		next = va->list.next ? list_entry(va->list.next, struct vmap_area, list) : NULL;
		list_add_tail(&va->list, out);
	}
	return true;
}

/* ------------------------------------------------------ thread life */

static void thread_exit(void *arg)
{
	struct heap *h = arg;
	bool warm;

	track_quiet(); /* collecting remote frees walks freed objects */
	pcp_heap_unspan(h); /* before it is retired: other threads free its areas to the node from then on */
	/* Before the inbox drains: a free that still pushed after this sees it and takes the inbox back (pcp.c). */
	atomic_store(&h->retired, true);
	/* Slabs first: the empty ones go back to the area cache, which the next thread gets. */
	slab_heap_exit(&h->slab);
	/*
	 * One warm heap per CPU at most: a program replacing its threads runs
	 * that many at once, and the rest of its exits drain whole to the
	 * nodes, where every thread's misses find them.  (Each exit kept its
	 * cache: 64 threads of allocwork local on 2 CPUs ended with 142 MiB in
	 * the caches of exited threads no new thread would adopt, for 30 MiB
	 * live, and a peak RSS 2.9x jemalloc's.)
	 */
	uvm_lock(&reg.lock);
	warm = reg.warm < reg.warm_max;
	reg.warm += warm;
	uvm_unlock(&reg.lock);
	pcp_heap_vacate(h, warm);
	uvm_lock(&reg.lock);
	slab_heap_fold(&h->slab);
	pcp_heap_fold(&h->pcp);
	h->vacant = true;
	h->warm = warm;
	if (warm)
		list_add(&h->vacant_link, &reg.vacant);
	else
		list_add_tail(&h->vacant_link, &reg.vacant);
	uvm_unlock(&reg.lock);
	/* Later destructors of the program still allocate and free: they go without a heap (slab.c, pcp.c). */
	uvm__heap = NULL;
	tls_exited = true;
	track_loud();
}

/*
 * At load time, not at set-up: the kernel makes a process that registers
 * while other threads run wait for an RCU grace period (10-15 ms here: the
 * first uvm_* call of a program that had started its threads paid it), and
 * answers a single-threaded one, as a process still loading is, at once.
 */
__attribute__((constructor)) static void heap_register(void) { reg.claims = membarrier_register(); }

int heap_init(unsigned nodes, unsigned cpus)
{
	reg.warm_max = cpus;
	reg.size = align_up(sizeof(struct heap) + pcp_lists_size(nodes), UVM_PAGE_SIZE);
	return pthread_key_create(&reg.key, thread_exit);
}

/*
 * A vacant heap for the calling thread: everything but its area cache (and
 * spare area objects) starts afresh.  That cache, still backed, spares the
 * next thread of a program whose threads come and go the faults of what
 * its exited thread had given back: allocwork stress -s 4 (new threads
 * every round) missed 2045 times and made 2908 madvise calls when each
 * exit drained its cache to the nodes, 655 and 1165 with it kept, with
 * half the page faults.  Until then the heap stays retired: other threads'
 * frees of its areas go to the node, as they did (an inbox no thread takes
 * in would hold them past every limit).  Busy meanwhile: a decay or purge
 * may claim it as soon as it is off the vacant list.
 */
static void adopt(struct heap *h)
{
	heap_enter(h);
	h->prof_left = 0;
	h->prof_beyond = 0;
	h->prof_rate = 0;
	h->prof_rng = 0;
	memset(&h->slab, 0, sizeof(h->slab));
	slab_heap_init(&h->slab);
	atomic_store(&h->retired, false);
	heap_leave(h);
}

struct heap *heap_attach(void)
{
	struct heap *h = NULL;

	if (tls_exited)
		return NULL;
	uvm_lock(&reg.lock);
	if (!list_empty(&reg.vacant)) {
		h = list_first_entry(&reg.vacant, struct heap, vacant_link);
		list_del(&h->vacant_link);
		h->vacant = false;
		reg.warm -= h->warm;
		h->warm = false;
	}
	uvm_unlock(&reg.lock);
	if (h) {
		adopt(h);
	} else {
		if (!(h = os_alloc_meta_backed(reg.size))) /* zero-filled */
			return NULL;
		__atomic_fetch_add(&reg.nr, 1, __ATOMIC_RELAXED);
		atomic_store(&h->retired, false);
		slab_heap_init(&h->slab);
		pcp_heap_init(&h->pcp);
		uvm_lock(&reg.lock);
		list_add_tail(&h->link, &reg.live);
		uvm_unlock(&reg.lock);
	}
	pthread_setspecific(reg.key, h);
	return uvm__heap = h;
}

/* -------------------------------------------------------------- fork */

/* Every heap held, so that the child's copies of other threads' heaps are consistent and can be drained. */
void heap_fork_prepare(void)
{
	uvm_lock(&reg.lock);
	reg.fork_claimed = claim_all();
}

void heap_fork_parent(void)
{
	if (reg.fork_claimed)
		release_all();
	uvm_unlock(&reg.lock);
}

/*
 * The other threads are gone in the child.  Their area caches drain to the
 * nodes when the fork held them (consistent); their heaps stay, dead, on
 * the live list: their slabs still name them as owners, so frees into those
 * slabs go the remote way and never touch a heap no thread runs.
 */
void heap_fork_child(void)
{
	struct heap *h;

	uvm_lock_init(&reg.lock);
	reg.claims = membarrier_register();
	list_for_each_entry(h, &reg.live, link) {
		atomic_store_explicit(&h->claimed, 0, memory_order_relaxed);
		if (h == uvm__heap || h->dead || h->vacant) /* a vacant heap is whole: the child's threads adopt it */
			continue;
		if (reg.fork_claimed)
			pcp_heap_exit(h);
		h->dead = true;
	}
}

void heap_describe(struct uvm_descriptor *d)
{
	d->pcp_live = (uintptr_t)&reg.live;
	d->pcp_link = offsetof(struct heap, link);
	d->heap_nr = (uintptr_t)&reg.nr;
	d->heap_bytes = reg.size;
	d->heap_prof_left = offsetof(struct heap, prof_left);
}
