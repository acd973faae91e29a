/*
 * stats.c - uvm_stats(): every layer adds its own counters.  Counters live
 * with the data they count, under the same lock, so the fast paths pay no
 * shared atomic for them (the kernel's v7.1 per-page vmstat lesson).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "init.h"
#include "options.h"
#include "os.h"
#include "pcp.h"
#include "slab.h"
#include "stats.h"
#include "thp.h"
#include "purge.h"
#include "uvmalloc.h"
#include "vnode.h"

void uvm_stats(struct uvm_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (uvm_init())
		return;
	arena_stats(st);
	vn_stats(st);
	pcp_stats(st);
	slab_stats(st);
	purge_stats(st);
	os_stats(st);
	/* Busy trees hold cached areas too; under concurrent use the two reads may disagree a little. */
	st->busy_bytes = st->busy_bytes > st->cached_bytes ? st->busy_bytes - st->cached_bytes : 0;
	st->busy_count = st->busy_count > st->cached_count ? st->busy_count - st->cached_count : 0;
}

static double mib(uint64_t bytes) { return (double)bytes / (1 << 20); }
static double share(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }
typedef unsigned long long ull;

static int format_counters(char *buf, size_t len, const struct uvm_stats *s)
{
	return snprintf(buf, len,
		"uvmalloc: %llu regions, %.1f MiB reserved, %.1f MiB committed\n"
		"uvmalloc: live    %8llu areas %10.1f MiB (%llu slabs of small objects)\n"
		"uvmalloc: cached  %8llu areas %10.1f MiB in thread caches (hits %llu, misses %llu, drained %llu)\n"
		"uvmalloc: lazy    %8llu areas %10.1f MiB; pooled %llu areas %.1f MiB (hits %llu, misses %llu)\n"
		"uvmalloc: free    %8llu ranges %9.1f MiB, largest %.1f MiB\n"
		"uvmalloc: objects %llu allocated, %llu freed; areas %llu allocated, %llu freed\n"
		"uvmalloc: purges %llu (%.1f MiB given back); syscalls %llu (mmap %llu, mprotect %llu, madvise %llu, "
		"mremap %llu, other %llu)\n",
		(ull)s->regions, mib(s->reserved_bytes), mib(s->committed_bytes), (ull)s->busy_count, mib(s->busy_bytes),
		(ull)s->slabs, (ull)s->cached_count, mib(s->cached_bytes), (ull)s->cache_hits, (ull)s->cache_misses,
		(ull)s->cache_drained, (ull)s->lazy_count, mib(s->lazy_bytes), (ull)s->pooled_count, mib(s->pooled_bytes),
		(ull)s->pool_hits, (ull)s->pool_misses, (ull)s->free_count, mib(s->free_bytes), mib(s->largest_free),
		(ull)s->small_allocs, (ull)s->small_frees, (ull)s->allocs, (ull)s->frees, (ull)s->purges,
		mib(s->purged_bytes), (ull)s->syscalls, (ull)s->mmap_calls, (ull)s->mprotect_calls, (ull)s->madvise_calls,
		(ull)s->mremap_calls,
		(ull)(s->syscalls - s->mmap_calls - s->mprotect_calls - s->madvise_calls - s->mremap_calls));
}

static int format_frag(char *buf, size_t len, const struct uvm_frag *f)
{
	int n = snprintf(buf, len,
		"uvmalloc: resident %.1f MiB, live %.1f MiB: overhead %.1f MiB (%.1f %%); held in thread caches %.1f, lazy %.1f, "
		"pools %.1f, free slab objects %.1f, slab tails %.1f MiB; metadata %.1f MiB outside the regions\n"
		"uvmalloc: committed span %.1f MiB: %llu free ranges %.1f MiB, largest %.1f MiB, fragmentation %.4f\n"
		"uvmalloc: requested %.1f MiB, handed out %.1f MiB (rounding %.1f %%) all time; live areas' page rounding %.1f MiB\n"
		"uvmalloc: process resident %.1f MiB, at its peak %.1f MiB; page faults %llu minor, %llu major\n",
		mib(f->resident_bytes), mib(f->live_bytes), mib(f->overhead_bytes), share(f->overhead_bytes, f->resident_bytes),
		mib(f->cached_bytes), mib(f->lazy_bytes), mib(f->pooled_bytes), mib(f->slab_free_bytes),
		mib(f->slab_meta_bytes), mib(f->metadata_bytes), mib(f->span_bytes), (ull)f->span_free_count,
		mib(f->span_free_bytes), mib(f->span_largest_free), f->span_fragmentation, mib(f->requested_bytes),
		mib(f->handed_bytes), share(f->handed_bytes > f->requested_bytes ? f->handed_bytes - f->requested_bytes : 0,
					    f->handed_bytes), mib(f->rounding_bytes), mib(f->process_rss_bytes),
		mib(f->process_peak_rss_bytes), (ull)f->process_minor_faults, (ull)f->process_major_faults);
	bool head = false;

	for (unsigned c = 0; c < UVM_FRAG_CLASSES + UVM_FRAG_CLASSES_MORE && n > 0 && (size_t)n < len; c++) {
		const struct uvm_frag_class *k = uvm_frag_class_at(f, c);

		if (!k->slabs)
			continue;
		if (!head) {
			n += snprintf(buf + n, len - (size_t)n, "uvmalloc: class  slabs     live     free    never  free MiB  "
				      "slabs by use: empty <25%% <50%% <75%% rest\n");
			head = true;
		}
		if ((size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, "uvmalloc: %5llu %6llu %8llu %8llu %8llu %9.2f %20llu %4llu %4llu %4llu %4llu\n",
				      (ull)k->size, (ull)k->slabs, (ull)k->live, (ull)k->free, (ull)k->never_used,
				      mib(k->free * k->size), (ull)k->occupancy[0], (ull)k->occupancy[1], (ull)k->occupancy[2],
				      (ull)k->occupancy[3], (ull)k->occupancy[4]);
	}
	return n;
}


/* UVM_THP=auto's verdict and what it rests on (nothing when no huge first touch was timed). */
static int format_thp(char *buf, size_t len, bool json)
{
	struct thp_stats t;

	thp_stats(&t);
	if (!t.samples)
		return 0;
	if (json)
		return snprintf(buf, len, ",\"thp\":{\"huge_ns\":%llu,\"small_ns\":%llu,\"samples\":%llu,\"declined_bytes\":%llu,"
				"\"pays\":%s}", (ull)t.huge_ns, (ull)t.small_ns, (ull)t.samples, (ull)t.declined,
				t.small ? "false" : "true");
	return snprintf(buf, len, "uvmalloc: huge pages (UVM_THP=auto): first touch %.1f us (mean of %llu timed), 512 small "
			"pages %.1f us: they %s; %.1f MiB got small pages instead\n", (double)t.huge_ns / 1e3,
			(ull)t.samples, (double)t.small_ns * 512 / 1e3, t.small ? "do not pay" : "pay", mib(t.declined));
}

static int format_json(char *buf, size_t len, const struct uvm_stats *s, const struct uvm_frag *f)
{
	int n = snprintf(buf, len,
		"{\"schema\":\"uvmalloc.stats/1\",\"regions\":%llu,\"reserved_bytes\":%llu,\"committed_bytes\":%llu,"
		"\"busy_bytes\":%llu,\"busy_count\":%llu,\"cached_bytes\":%llu,\"cached_count\":%llu,\"lazy_bytes\":%llu,"
		"\"lazy_count\":%llu,\"pooled_bytes\":%llu,\"pooled_count\":%llu,\"free_bytes\":%llu,\"free_count\":%llu,"
		"\"largest_free\":%llu,\"allocs\":%llu,\"frees\":%llu,\"small_allocs\":%llu,\"small_frees\":%llu,"
		"\"slabs\":%llu,\"cache_hits\":%llu,\"cache_misses\":%llu,\"pool_hits\":%llu,\"pool_misses\":%llu,"
		"\"purges\":%llu,\"purged_bytes\":%llu,\"syscalls\":%llu,"
		"\"frag\":{\"resident_bytes\":%llu,\"live_bytes\":%llu,\"overhead_bytes\":%llu,\"cached_bytes\":%llu,"
		"\"lazy_bytes\":%llu,\"pooled_bytes\":%llu,\"slab_free_bytes\":%llu,\"slab_meta_bytes\":%llu,"
		"\"metadata_bytes\":%llu,\"span_bytes\":%llu,\"span_free_bytes\":%llu,\"span_free_count\":%llu,"
		"\"span_largest_free\":%llu,\"span_fragmentation\":%.6f,\"requested_bytes\":%llu,\"handed_bytes\":%llu,"
		"\"rounding_bytes\":%llu,\"process_rss_bytes\":%llu,\"process_peak_rss_bytes\":%llu,"
		"\"process_minor_faults\":%llu,\"process_major_faults\":%llu,\"classes\":[",
		(ull)s->regions, (ull)s->reserved_bytes, (ull)s->committed_bytes, (ull)s->busy_bytes, (ull)s->busy_count,
		(ull)s->cached_bytes, (ull)s->cached_count, (ull)s->lazy_bytes, (ull)s->lazy_count, (ull)s->pooled_bytes,
		(ull)s->pooled_count, (ull)s->free_bytes, (ull)s->free_count, (ull)s->largest_free, (ull)s->allocs,
		(ull)s->frees, (ull)s->small_allocs, (ull)s->small_frees, (ull)s->slabs, (ull)s->cache_hits,
		(ull)s->cache_misses, (ull)s->pool_hits, (ull)s->pool_misses, (ull)s->purges, (ull)s->purged_bytes,
		(ull)s->syscalls, (ull)f->resident_bytes, (ull)f->live_bytes, (ull)f->overhead_bytes, (ull)f->cached_bytes,
		(ull)f->lazy_bytes, (ull)f->pooled_bytes, (ull)f->slab_free_bytes, (ull)f->slab_meta_bytes,
		(ull)f->metadata_bytes, (ull)f->span_bytes, (ull)f->span_free_bytes, (ull)f->span_free_count,
		(ull)f->span_largest_free, f->span_fragmentation, (ull)f->requested_bytes, (ull)f->handed_bytes,
		(ull)f->rounding_bytes, (ull)f->process_rss_bytes, (ull)f->process_peak_rss_bytes, (ull)f->process_minor_faults,
		(ull)f->process_major_faults);
	const char *sep = "";

	for (unsigned c = 0; c < UVM_FRAG_CLASSES + UVM_FRAG_CLASSES_MORE && n > 0 && (size_t)n < len; c++) {
		const struct uvm_frag_class *k = uvm_frag_class_at(f, c);

		if (!k->slabs)
			continue;
		n += snprintf(buf + n, len - (size_t)n,
			      "%s{\"size\":%llu,\"slabs\":%llu,\"live\":%llu,\"free\":%llu,\"never_used\":%llu,"
			      "\"occupancy\":[%llu,%llu,%llu,%llu,%llu]}",
			      sep, (ull)k->size, (ull)k->slabs, (ull)k->live, (ull)k->free, (ull)k->never_used,
			      (ull)k->occupancy[0], (ull)k->occupancy[1], (ull)k->occupancy[2], (ull)k->occupancy[3],
			      (ull)k->occupancy[4]);
		sep = ",";
	}
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "]}");
	if (n > 0 && (size_t)n < len)
		n += format_thp(buf + n, len - (size_t)n, true);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "}\n");
	return n > 0 && (size_t)n < len ? n : -1;
}

#define STATS_TEXT 8192

/* The summary (json: one JSON object), what UVM_STATS and uvm_stats_print write. */
static int format(char *buf, size_t len, bool json)
{
	struct uvm_stats st;
	struct uvm_frag f;
	int n;

	uvm_stats(&st);
	uvm_frag_stats(&f, sizeof(f));
	if (json)
		return format_json(buf, len, &st, &f);
	n = format_counters(buf, len, &st);
	if (n > 0 && (size_t)n < len)
		n += format_frag(buf + n, len - (size_t)n, &f);
	if (n > 0 && (size_t)n < len)
		n += format_thp(buf + n, len - (size_t)n, false);
	return n > 0 && (size_t)n < len ? n : -1;
}

void uvm_stats_print(FILE *f)
{
	char buf[STATS_TEXT];

	if (format(buf, sizeof(buf), false) > 0)
		fputs(buf, f);
}

/*
 * UVM_STATS=1, as MIMALLOC_SHOW_STATS.  The summary goes to a copy of
 * stderr made at set-up: programs such as coreutils close stderr in their
 * atexit handlers, which run before library destructors.
 */
static int stats_fd = -1;

/* UVM_STATS at set-up, and turned on later by uvm_option_set: the copy of stderr is made then. */
static void stats_set(long long mode)
{
	if ((mode || option(OPT_LEAKS)) && stats_fd < 0)
		stats_fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
}

int stats_stream(void) { return stats_fd; }

void stats_init(void)
{
	stats_set(option(OPT_STATS));
	option_watch(OPT_STATS, stats_set);
}

__attribute__((destructor)) static void stats_at_exit(void)
{
	char buf[STATS_TEXT];
	int n;

	if (stats_fd < 0 || !option(OPT_STATS) || !atomic_load_explicit(&uvm_ready, memory_order_acquire))
		return;
	n = format(buf, sizeof(buf), option(OPT_STATS) == STATS_JSON);
	if (n > 0 && write(stats_fd, buf, (size_t)n) < 0)
		return;
}
