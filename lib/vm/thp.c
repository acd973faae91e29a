/*
 * thp.c - UVM_THP=auto: whether a huge page pays on this host, judged while
 * the program runs.
 *
 * A huge page stands for 512 small faults.  On most hosts its first touch
 * costs ~30x less per byte than theirs (machine-facts), but a virtual
 * machine that gives its free memory back to its host (free page reporting,
 * balloons) has the host back and clear all 2 MiB again at the guest's
 * first touch: 4.4 ms on such a host, against 512 x 1.2-1.8 us for small
 * pages, while a huge page from memory the host still backed took 170 us
 * there.  Which memory a huge page comes from changes as the program runs,
 * so no verdict is final:
 *  - huge first touches made here are timed into a running mean: every
 *    slab stock's page, which is faulted here anyway, and the first page of
 *    the process's first fresh huge area and of the one that crosses each
 *    TIME_EVERY_BYTES of them (the program's first touch would fault it
 *    whole, but a realloc's move would have put the old pages there
 *    instead); such an area's body past that page waits for the sample
 *    (huge.c's huge_back_rest);
 *  - a probe of a few small pages, faulted and given back, times small
 *    faults: at the first huge sample, then every PROBE_EVERY samples;
 *  - huge pages pay while their mean stays below 512 small faults';
 *  - while they do not, a candidate still gets one huge page (an area's
 *    first, whatever its size) once per `explore` huge pages' worth of
 *    candidates, to see whether they pay again (counted in bytes: a slab
 *    declined a stock counts its 64 KiB, an area its body); explore
 *    doubles, up to EXPLORE_MAX, after each huge page that did not pay by
 *    itself, so a host where they never pay wastes little, and falls back
 *    to EXPLORE_MIN after one that did.
 * The counters are shared by all threads with relaxed loads and stores: a
 * lost update costs one sample, and all of this runs beside a fault and a
 * system call, never on a hit.
 */
#include "thp.h"

#include <stdatomic.h>
#include <stddef.h>
#include <sys/uio.h>

#include "os.h"
#include "trace.h"
#include "uvmalloc-descriptor.h"
#include "util.h"

#define PROBE_PAGES 4
#define PROBE_EVERY 16
#define EXPLORE_MIN 8
#define EXPLORE_MAX 64
#define SMALL_PER_HUGE 512 /* 2 MiB in 4 KiB pages */
#define HUGE_BYTES ((uint64_t)SMALL_PER_HUGE * UVM_PAGE_SIZE)
#define TIME_EVERY_BYTES (8 * HUGE_BYTES)

static struct {
	_Atomic uint64_t huge_ns;    /* running mean of a huge page's first touch; 0: none yet */
	_Atomic uint64_t small_ns;   /* of a small page's, from the probe; 0: none yet */
	_Atomic uint64_t samples;    /* huge first touches timed */
	_Atomic uint64_t small;      /* the verdict, 0 or 1: huge pages cost more than small ones */
	_Atomic uint64_t candidates; /* bytes of the candidates seen while huge pages did not pay */
	_Atomic uint64_t declined;   /* of those that got small pages */
	atomic_uint explore;         /* one huge page per explore huge pages' worth of candidates, while they do not pay */
	_Atomic uint64_t area_bytes; /* huge area bodies given while huge pages pay */
	_Atomic(char *) probe;       /* PROBE_PAGES small pages, mapped at the first probe */
} thp = { .explore = EXPLORE_MIN };

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

/*
 * A running mean that follows the host within a few samples: each new one
 * weighs half.  One cold huge page after warm ones (4.4 ms after 170 us)
 * turns the verdict; three warm ones turn it back.
 */
static uint64_t mean_in(_Atomic uint64_t *mean, uint64_t ns)
{
	uint64_t old = atomic_load_explicit(mean, memory_order_relaxed), now = old ? (old + ns) / 2 : ns;

	atomic_store_explicit(mean, now, memory_order_relaxed);
	return now;
}

/* Fault PROBE_PAGES small pages in, timed, and give them back for the next probe. */
static void probe_small(void)
{
	char *p = LOAD(thp.probe);
	struct iovec r;
	uint64_t t;

	if (!p) {
		char *fresh = os_alloc_meta(PROBE_PAGES * UVM_PAGE_SIZE), *none = NULL;

		if (!fresh)
			return;
		if (!atomic_compare_exchange_strong(&thp.probe, &none, fresh))
			os_free_meta(fresh, PROBE_PAGES * UVM_PAGE_SIZE);
		p = LOAD(thp.probe);
	}
	t = trace_now_ns();
	for (int i = 0; i < PROBE_PAGES; i++)
		((volatile char *)p)[i * UVM_PAGE_SIZE] = 1;
	mean_in(&thp.small_ns, (trace_now_ns() - t) / PROBE_PAGES);
	r = (struct iovec){ .iov_base = p, .iov_len = PROBE_PAGES * UVM_PAGE_SIZE };
	os_discard_ranges(&r, 1);
}

bool thp_judge(uint64_t huge_ns, uint64_t small_ns) { return huge_ns > SMALL_PER_HUGE * small_ns; }

void thp_sample(uint64_t ns)
{
	uint64_t n = atomic_fetch_add_explicit(&thp.samples, 1, memory_order_relaxed), huge_ns, small_ns;
	bool small;

	huge_ns = mean_in(&thp.huge_ns, ns);
	if (n % PROBE_EVERY == 0 || !LOAD(thp.small_ns))
		probe_small();
	if (!(small_ns = LOAD(thp.small_ns)))
		return; /* no probe memory: judge nothing, keep huge pages */
	small = thp_judge(huge_ns, small_ns);
	if (!n || small != LOAD(thp.small))
		UVM_TRACE(thp_verdict, !small, huge_ns, small_ns);
	STORE(thp.small, small);
	/* Look again soon after a huge page that paid by itself, seldom after one that did not. */
	if (!thp_judge(ns, small_ns))
		STORE(thp.explore, EXPLORE_MIN);
	else if (LOAD(thp.explore) < EXPLORE_MAX)
		STORE(thp.explore, 2 * LOAD(thp.explore));
}

void thp_touch(uintptr_t addr)
{
	uint64_t t = trace_now_ns();

	*(volatile char *)addr = 0;
	thp_sample(trace_now_ns() - t);
}

bool thp_huge_now(void) { return !LOAD(thp.small); }

enum thp_try thp_pays(size_t bytes)
{
	uint64_t n, every;

	if (!LOAD(thp.small))
		return TRY_ALL;
	n = atomic_fetch_add_explicit(&thp.candidates, bytes, memory_order_relaxed);
	every = LOAD(thp.explore) * HUGE_BYTES;
	if (n / every != (n + bytes) / every)
		return TRY_ONE;
	atomic_fetch_add_explicit(&thp.declined, bytes, memory_order_relaxed);
	return TRY_NONE;
}

bool thp_time_due(size_t bytes)
{
	uint64_t n = atomic_fetch_add_explicit(&thp.area_bytes, bytes, memory_order_relaxed);

	return !LOAD(thp.samples) || n / TIME_EVERY_BYTES != (n + bytes) / TIME_EVERY_BYTES;
}

void thp_stats(struct thp_stats *st)
{
	st->huge_ns = LOAD(thp.huge_ns);
	st->small_ns = LOAD(thp.small_ns);
	st->samples = LOAD(thp.samples);
	st->declined = LOAD(thp.declined);
	st->small = LOAD(thp.small);
}

void thp_describe(struct uvm_descriptor *d)
{
	d->thp_huge_ns = (uintptr_t)&thp.huge_ns;
	d->thp_small_ns = (uintptr_t)&thp.small_ns;
	d->thp_samples = (uintptr_t)&thp.samples;
	d->thp_declined = (uintptr_t)&thp.declined;
	d->thp_small = (uintptr_t)&thp.small;
}
