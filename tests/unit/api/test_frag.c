/*
 * tests/unit/api/test_frag.c - uvm_frag_stats (lib/api/frag.c): workloads of a known
 * shape, and the figures checked against a count the test makes itself:
 * holes between live areas in the committed span, slab occupancy and free
 * bytes, resident overhead before and after a purge, request rounding (all
 * time, and live areas' page rounding), the slabs of running threads read
 * as they change, and the text summary agreeing with the struct.
 */
#include "helpers.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "slab.h"
#include "uvmalloc.h"

static struct uvm_frag frag(void)
{
	struct uvm_frag f;

	cr_assert_eq(uvm_frag_stats(&f, sizeof(f)), 0);
	return f;
}

#define AREAS 1000
#define AREA (64 << 10)
#define HOLE (AREA + 4096) /* an area's guard page goes with it */

/*
 * 1000 areas of 64 KiB, every other one freed and purged: 500 holes between
 * live areas, which 200 KiB blocks cannot use.  The committed span shows
 * them; the whole reservation's figure could not.
 */
Test(frag, holes_between_live_areas_show_in_the_committed_span)
{
	static char *p[AREAS], *big[20];
	struct uvm_frag f0 = frag(), f;

	for (int i = 0; i < AREAS; i++)
		p[i] = uvm_vmalloc(AREA);
	for (int i = 1; i < AREAS; i += 2)
		uvm_vfree(p[i]);
	uvm_purge(); /* out of the thread cache, through the lazy list, into the free tree */
	for (int i = 0; i < 20; i++)
		big[i] = uvm_vmalloc(200 << 10);
	f = frag();
	/* Each freed area lies between two live ones: a range of its own, exactly its size. */
	cr_assert_geq(f.span_free_count, f0.span_free_count + 500 - 2, "%llu free ranges", (unsigned long long)f.span_free_count);
	cr_assert_geq(f.span_free_bytes, 500ull * HOLE);
	/* The top: one commit step at most, half the span before it (arena.c), so a third of the span after. */
	cr_assert_lt(f.span_free_bytes - 500ull * HOLE, f.span_bytes / 3 + ((uint64_t)4 << 20), "more free in the span than the holes and the top: %llu of %llu, largest %llu", (unsigned long long)f.span_free_bytes, (unsigned long long)f.span_bytes, (unsigned long long)f.span_largest_free);
	cr_assert_leq(f.span_bytes, (uint64_t)128 << 20);
	double expect = 1.0 - (double)f.span_largest_free / (double)f.span_free_bytes;
	cr_assert_float_eq(f.span_fragmentation, expect, 1e-9);
	/* The largest free range is the top or one hole: every other hole counts as fragmented. */
	cr_assert_geq(f.span_fragmentation, 499.0 * HOLE / (double)f.span_free_bytes - 1e-9, "the holes do not show as fragmentation");
	for (int i = 0; i < 20; i++)
		cr_assert(big[i] > p[AREAS - 2], "a 200 KiB block fit a 68 KiB hole"); /* above the last live area */

	for (int i = 0; i < AREAS; i += 2)
		uvm_vfree(p[i]);
	for (int i = 0; i < 20; i++)
		uvm_vfree(big[i]);
	uvm_purge();
	f = frag();
	cr_assert_leq(f.span_free_count, f0.span_free_count + 1, "the holes did not merge back");
	cr_assert_lt(f.span_fragmentation, 0.5);
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return (x > y) - (x < y);
}

#define SLABS 4
#define MAX_OBJECTS (SLABS * SLAB_SIZE / 32)

/* Four full slabs of 32-byte objects, three of every four freed in each: a quarter full, and the free bytes exact. */
Test(frag, slab_occupancy_and_free_bytes)
{
	static uintptr_t p[MAX_OBJECTS];
	struct uvm_frag f;
	struct uvm_stats st;
	unsigned cls = 0, n = 0, total = 0, slabs = 0, kept = 0;
	uintptr_t last = 0;

	/* A fresh process: the class's slabs fill one after the other, each to its room. */
	while (slabs < SLABS || n < total) {
		uintptr_t base;

		p[n] = (uintptr_t)uvm_malloc(32);
		base = p[n++] & ~(SLAB_SIZE - 1);
		if (base != last) {
			cr_assert_lt(slabs, SLABS, "slab %u is not whole", slabs);
			slabs++;
			total += SLAB_SIZE / 32; /* objects fill a slab: its header is in the region's chunk table */
			last = base;
		}
	}
	qsort(p, n, sizeof(p[0]), by_address);
	f = frag();
	while (f.classes[cls].size != 32)
		cls++;
	cr_assert_eq(f.classes[cls].slabs, SLABS);
	cr_assert_eq(f.classes[cls].live, n);
	cr_assert_eq(f.classes[cls].occupancy[4], SLABS, "full slabs are not in the top bucket");

	/* Every fourth object of each slab stays, its first among them: at least a quarter of it. */
	for (unsigned i = 0, j = 0; i < n; i++, j++) {
		if (i && (p[i] ^ p[i - 1]) >= SLAB_SIZE)
			j = 0;
		if (j % 4)
			uvm_free((void *)p[i]);
		else
			p[kept++] = p[i];
	}
	f = frag();
	cr_assert_eq(f.classes[cls].slabs, SLABS);
	cr_assert_eq(f.classes[cls].live, kept);
	cr_assert_eq(f.classes[cls].free, n - kept);
	cr_assert_eq(f.classes[cls].never_used, 0);
	cr_assert_eq(f.classes[cls].occupancy[2], SLABS, "25 %% full slabs are not in the 25-50 %% bucket");
	cr_assert_geq(f.slab_free_bytes, (uint64_t)(n - kept) * 32);
	uvm_stats(&st);
	cr_assert_eq(slab_free_bytes(&st), f.slab_free_bytes, "the counters (snapshots) and the walk disagree");

	for (unsigned i = 0; i < kept; i++)
		uvm_free((void *)p[i]);
	f = frag();
	uvm_stats(&st);
	cr_assert_eq(slab_free_bytes(&st), f.slab_free_bytes, "the counters forgot a released slab");
	cr_assert_eq(f.classes[cls].live, 0);
	/* The current one stays, and the first, whose first 16 freed objects wait in the hand (slab.h). */
	cr_assert_eq(f.classes[cls].slabs, 2, "emptied slabs were not released");
	cr_assert_eq(f.classes[cls].occupancy[0], 2);
}

/* Areas freed into the thread cache are resident overhead; a purge gives them back and the figures say so. */
Test(frag, resident_overhead_falls_after_a_purge)
{
	enum { N = 100 };
	static char *p[N];
	struct uvm_frag f0 = frag(), f1, f2;

	for (int i = 0; i < N; i++) {
		p[i] = uvm_vmalloc(AREA);
		memset(p[i], 1, AREA);
	}
	f1 = frag();
	cr_assert_geq(f1.live_bytes - f0.live_bytes, (uint64_t)N * AREA);
	cr_assert_geq(f1.resident_bytes - f0.resident_bytes, (uint64_t)N * AREA);
	for (int i = 0; i < N; i++)
		uvm_vfree(p[i]);
	f2 = frag();
	cr_assert_eq(f2.live_bytes, f0.live_bytes);
	cr_assert_geq(f2.cached_bytes + f2.lazy_bytes + f2.pooled_bytes, (uint64_t)N * HOLE);
	cr_assert_geq(f2.overhead_bytes, (uint64_t)N * AREA, "freed, backed areas are not overhead");
	uvm_purge();
	f1 = frag();
	cr_assert_eq(f1.cached_bytes + f1.lazy_bytes + f1.pooled_bytes, 0);
	cr_assert_leq(f1.resident_bytes + (uint64_t)N * AREA, f2.resident_bytes, "the purge gave back too little");
	cr_assert_leq(f1.overhead_bytes + (uint64_t)N * AREA, f2.overhead_bytes);
}

/* Bytes asked for against bytes handed out: a class's and a page's rounding, counted exactly. */
Test(frag, request_rounding_is_counted)
{
	struct uvm_frag f0 = frag(), f;
	void *p[1000], *v;

	for (int i = 0; i < 1000; i++)
		p[i] = uvm_malloc(100); /* the 112-byte class */
	v = uvm_vmalloc(5000);          /* two pages */
	f = frag();
	cr_assert_eq(f.requested_bytes - f0.requested_bytes, 1000 * 100 + 5000);
	cr_assert_eq(f.handed_bytes - f0.handed_bytes, 1000 * 112 + 8192);
	for (int i = 0; i < 1000; i++)
		uvm_free(p[i]);
	uvm_vfree(v);
}

/*
 * Live areas' page rounding: usable bytes over what was asked, whatever
 * way the area came (a fresh one, a cache hit, malloc's large blocks, an
 * in-place realloc or vrealloc), and none once they are freed.
 */
Test(frag, live_rounding_follows_the_areas)
{
	uint64_t base = frag().rounding_bytes;
	void *a = uvm_vmalloc(5000), *b, *c, *d;

	cr_assert_eq(frag().rounding_bytes - base, 8192 - 5000);
	uvm_vfree(a);
	cr_assert_eq(frag().rounding_bytes, base, "a freed area still counted");
	a = uvm_vmalloc(5001); /* the same bin: a hit */
	b = uvm_malloc(100000); /* 25 pages */
	c = uvm_vmalloc_aligned(3000, 1 << 16);
	cr_assert_eq(frag().rounding_bytes - base, (8192 - 5001) + (25 * 4096 - 100000) + (4096 - 3000));
	d = uvm_realloc(b, 100001); /* in place: the same pages */
	cr_assert_eq(d, b);
	a = uvm_vrealloc(a, 7000);
	cr_assert_eq(frag().rounding_bytes - base, (8192 - 7000) + (25 * 4096 - 100001) + (4096 - 3000));
	uvm_vfree(a);
	uvm_free(d);
	uvm_vfree(c);
	cr_assert_eq(frag().rounding_bytes, base);
}

/* The process's resident bytes and their peak: a 64 MiB block written and given back stays in the peak. */
Test(frag, process_peak_rss_keeps_the_high_water_mark)
{
	struct uvm_frag f0 = frag(), f;
	char *p = uvm_vmalloc(64 << 20);

	memset(p, 1, 64 << 20);
	uvm_vfree(p);
	uvm_purge();
	f = frag();
	cr_assert_gt(f0.process_rss_bytes, 0);
	cr_assert_geq(f0.process_peak_rss_bytes, f0.process_rss_bytes);
	cr_assert_geq(f.process_peak_rss_bytes, f0.process_rss_bytes + ((uint64_t)60 << 20), "the peak missed the block");
	cr_assert_lt(f.process_rss_bytes, f.process_peak_rss_bytes - ((uint64_t)32 << 20), "the block is still resident");
}

/* uvm_stats_print's text into buf, and its line that starts with start (there must be one). */
static const char *summary_line(char *buf, size_t len, const char *start)
{
	FILE *out = fmemopen(buf, len - 1, "w");
	const char *line;

	memset(buf, 0, len);
	uvm_stats_print(out);
	fclose(out);
	line = strstr(buf, start);
	cr_assert_not_null(line, "%s", buf);
	return line;
}

/*
 * The process's page faults: each fresh page written is a minor fault (the
 * area is under 2 MiB, so no huge page takes several at once), and the
 * summary prints the count, which only grows.
 */
Test(frag, process_faults_count_fresh_pages)
{
	char buf[16384];
	struct uvm_frag f0 = frag(), f;
	char *p = uvm_vmalloc(256 * 4096);
	const char *line;
	unsigned long long minor, major;

	cr_assert_not_null(p);
	for (size_t i = 0; i < 256; i++)
		p[i * 4096] = 1;
	f = frag();
	cr_assert_geq(f.process_minor_faults, f0.process_minor_faults + 256, "%llu -> %llu",
		      (unsigned long long)f0.process_minor_faults, (unsigned long long)f.process_minor_faults);
	uvm_vfree(p);
	line = summary_line(buf, sizeof(buf), "uvmalloc: process resident");
	cr_assert_eq(sscanf(line, "uvmalloc: process resident %*f MiB, at its peak %*f MiB; page faults %llu minor, %llu major",
			    &minor, &major), 2, "%s", line);
	cr_assert_geq(minor, f.process_minor_faults);
	cr_assert_geq(major, f.process_major_faults);
}

/* The text summary prints the struct's figures. */
Test(frag, text_summary_agrees)
{
	char buf[16384];
	unsigned long long ranges;
	double fragmentation;
	const char *line;
	struct uvm_frag f;

	for (int i = 0; i < 10; i++)
		uvm_vfree(uvm_vmalloc(AREA));
	uvm_purge();
	f = frag();
	line = summary_line(buf, sizeof(buf), "uvmalloc: committed span");
	cr_assert_eq(sscanf(line, "uvmalloc: committed span %*f MiB: %llu free ranges %*f MiB, largest %*f MiB, fragmentation %lf",
			    &ranges, &fragmentation), 2, "%s", line);
	cr_assert_eq(ranges, f.span_free_count);
	cr_assert_float_eq(fragmentation, f.span_fragmentation, 1e-4);
	cr_assert_not_null(strstr(buf, "uvmalloc: resident"));
}

/* An older caller's smaller struct gets its prefix; a struct too small for the resident figures is refused. */
Test(frag, size_is_the_version)
{
	struct uvm_frag f;

	memset(&f, 0xee, sizeof(f));
	cr_assert_eq(uvm_frag_stats(&f, offsetof(struct uvm_frag, span_bytes)), 0);
	cr_assert_neq(f.resident_bytes, 0xeeeeeeeeeeeeeeeeull);
	cr_assert_eq(f.span_bytes, 0xeeeeeeeeeeeeeeeeull, "wrote past the size it was given");
	cr_assert_eq(uvm_frag_stats(&f, 8), EINVAL);
}

static atomic_bool churn_stop;
static atomic_int churning; /* threads past their first round */

/* Small objects of every class replaced at random: refills, list moves and releases in the owner's slabs. */
static void *churn(void *arg)
{
	static _Thread_local void *slot[2048];
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (bool first = true; !atomic_load(&churn_stop); first = false) {
		for (int i = 0; i < 10000; i++) {
			unsigned k = (unsigned)rand_r(&seed) % 2048;

			uvm_free(slot[k]);
			slot[k] = uvm_malloc(1 + (size_t)rand_r(&seed) % 3584);
		}
		if (first)
			atomic_fetch_add(&churning, 1);
	}
	for (int k = 0; k < 2048; k++)
		uvm_free(slot[k]);
	return NULL;
}

/*
 * The figures read every slab, other running threads' too, while their
 * owners move them between lists: each slab read counts all its room once
 * (live, free or never used), whatever it was doing.
 */
Test(frag, slabs_read_while_their_owners_run)
{
	pthread_t t[2];
	unsigned seen = 0;

	uvm_free(uvm_malloc(1));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)), 0);
	while (atomic_load(&churning) < 2) /* under load the reads below could all come before the threads' first slab */
		sched_yield();
	for (int r = 0; r < 300; r++) {
		struct uvm_frag f = frag();

		for (unsigned c = 0; c < UVM_FRAG_CLASSES && f.classes[c].size; c++) {
			const struct uvm_frag_class *k = &f.classes[c];

			cr_assert_eq(k->live + k->free + k->never_used, k->slabs * (SLAB_SIZE / k->size),
				     "class %llu: %llu slabs hold %llu live, %llu free, %llu never used", (unsigned long long)k->size,
				     (unsigned long long)k->slabs, (unsigned long long)k->live, (unsigned long long)k->free,
				     (unsigned long long)k->never_used);
			seen += k->slabs > 0;
		}
	}
	atomic_store(&churn_stop, true);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	cr_assert_gt(seen, 300, "the running threads' slabs were not read");
}
