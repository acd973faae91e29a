/*
 * leaks.c - UVM_LEAKS=1: at exit, the heap profile's sampled allocations
 * still live, by stack, largest first (LeakSanitizer's report, jemalloc's
 * prof_leak), on the stats stream.  Library destructors run after the
 * program's atexit handlers and C++ static destructors, so what they free
 * is no leak.  The estimates are the profile's (prof.h); the exit status is
 * the program's.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "init.h"
#include "options.h"
#include "prof.h"
#include "stats.h"
#include "symbols.h"

#define LEAKS_SHOWN 100 /* stacks printed; the rest are summed on one line */

static void put(int fd, const char *buf, int n)
{
	if (n > 0 && write(fd, buf, (size_t)n) < 0)
		return;
}

static void report_stack(int fd, unsigned rank, const struct prof_stack *s)
{
	char line[512];

	put(fd, line, snprintf(line, sizeof(line), "\n#%u: %.0f bytes in %.0f allocations (%llu samples) from:\n", rank,
			       s->bytes, s->count, (unsigned long long)s->samples));
	if (!s->depth)
		put(fd, line, snprintf(line, sizeof(line), "    (stacks past the profile's %d)\n", PROF_STACKS - 1));
	for (unsigned i = 0; i < s->depth; i++) {
		char name[384];

		symbol_name(s->frames[i], name, sizeof(name));
		put(fd, line, snprintf(line, sizeof(line), "    #%u %s\n", i, name));
	}
}

static void report(int fd, const struct prof_stack *st, size_t n)
{
	double bytes = 0, count = 0, rest_bytes = 0, rest_count = 0;
	unsigned long long samples = 0;
	char line[512];

	for (size_t i = 0; i < n; i++) {
		bytes += st[i].bytes, count += st[i].count, samples += st[i].samples;
		if (i >= LEAKS_SHOWN)
			rest_bytes += st[i].bytes, rest_count += st[i].count;
	}
	put(fd, line, snprintf(line, sizeof(line),
			       "uvmalloc: leaks at exit: %.0f bytes in %.0f allocations from %zu stacks, estimated from %llu "
			       "samples (one per %zu bytes allocated)\n", bytes, count, n, samples, (size_t)uvm__prof_rate));
	for (size_t i = 0; i < n && i < LEAKS_SHOWN; i++)
		report_stack(fd, (unsigned)i + 1, &st[i]);
	if (n > LEAKS_SHOWN)
		put(fd, line, snprintf(line, sizeof(line), "\nand %.0f bytes in %.0f allocations from %zu more stacks\n",
				       rest_bytes, rest_count, n - LEAKS_SHOWN));
}

__attribute__((destructor)) static void leaks_at_exit(void)
{
	static const char line_none[] = "uvmalloc: leaks at exit: none among the sampled allocations\n";
	size_t room = PROF_STACKS * sizeof(struct prof_stack), n;
	struct prof_stack *st;
	int fd = stats_stream();

	if (!option(OPT_LEAKS) || fd < 0 || !atomic_load_explicit(&uvm_ready, memory_order_acquire))
		return;
	st = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (st == MAP_FAILED)
		return;
	n = prof_live_stacks(st, PROF_STACKS);
	if (n)
		report(fd, st, n);
	else
		put(fd, line_none, (int)sizeof(line_none) - 1);
	munmap(st, room);
}
