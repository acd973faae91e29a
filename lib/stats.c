/*
 * stats.c - uvm_stats(): every layer adds its own counters.  Counters live
 * with the data they count, under the same lock, so the fast paths pay no
 * shared atomic for them (the kernel's v7.1 per-page vmstat lesson).
 */
#include <fcntl.h>
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

static int format(char *buf, size_t len)
{
	struct uvm_stats st;

	uvm_stats(&st);
	return snprintf(buf, len,
		"uvmalloc: %llu regions, %.1f MiB reserved, %.1f MiB committed\n"
		"uvmalloc: live    %8llu areas %10.1f MiB (%llu slabs of small objects)\n"
		"uvmalloc: cached  %8llu areas %10.1f MiB in thread caches (hits %llu, misses %llu, drained %llu)\n"
		"uvmalloc: lazy    %8llu areas %10.1f MiB; pooled %llu areas %.1f MiB (hits %llu, misses %llu)\n"
		"uvmalloc: free    %8llu ranges %9.1f MiB, largest %.1f MiB\n"
		"uvmalloc: objects %llu allocated, %llu freed; areas %llu allocated, %llu freed\n"
		"uvmalloc: purges %llu (%.1f MiB given back); syscalls %llu (mmap %llu, mprotect %llu, madvise %llu)\n",
		(unsigned long long)st.regions, mib(st.reserved_bytes), mib(st.committed_bytes),
		(unsigned long long)st.busy_count, mib(st.busy_bytes), (unsigned long long)st.slabs,
		(unsigned long long)st.cached_count, mib(st.cached_bytes), (unsigned long long)st.cache_hits,
		(unsigned long long)st.cache_misses, (unsigned long long)st.cache_drained, (unsigned long long)st.lazy_count,
		mib(st.lazy_bytes), (unsigned long long)st.pooled_count, mib(st.pooled_bytes),
		(unsigned long long)st.pool_hits, (unsigned long long)st.pool_misses, (unsigned long long)st.free_count,
		mib(st.free_bytes), mib(st.largest_free), (unsigned long long)st.small_allocs,
		(unsigned long long)st.small_frees, (unsigned long long)st.allocs, (unsigned long long)st.frees,
		(unsigned long long)st.purges, mib(st.purged_bytes), (unsigned long long)st.syscalls,
		(unsigned long long)st.mmap_calls, (unsigned long long)st.mprotect_calls, (unsigned long long)st.madvise_calls);
}

void uvm_stats_print(FILE *f)
{
	char buf[1024];

	if (format(buf, sizeof(buf)) > 0)
		fputs(buf, f);
}

/*
 * UVM_STATS=1, as MIMALLOC_SHOW_STATS.  The summary goes to a copy of
 * stderr made at set-up: programs such as coreutils close stderr in their
 * atexit handlers, which run before library destructors.
 */
static int stats_fd = -1;

void stats_init(void)
{
	if (option(OPT_STATS))
		stats_fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
}

__attribute__((destructor)) static void stats_at_exit(void)
{
	char buf[1024];
	int n;

	if (stats_fd < 0 || !atomic_load_explicit(&uvm_ready, memory_order_acquire))
		return;
	n = format(buf, sizeof(buf));
	if (n > 0 && write(stats_fd, buf, (size_t)n) < 0)
		return;
}
