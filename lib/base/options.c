/*
 * options.c - the table of UVM_* settings and their parsing.
 *
 * Values are numbers with an optional K/M/G/T suffix (powers of 1024),
 * except for a count of pages, whose suffix would read as bytes (1M pages is
 * 4 GiB).  A value that does not parse keeps the default and says so on
 * stderr, with what the setting takes; a UVM_* variable that is no setting
 * is named too.
 */
#include "options.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "util.h"

struct uvm_option {
	const char *name;
	long long def;
	long long min, max;
	const char *desc;
	const char *const *words; /* a keyword setting: words[v] names value v */
	bool live;                /* uvm_option_set may change it while the program runs */
	bool pages;               /* a count of pages: no K/M/G/T suffix */
};

static const char *const thp_words[] = { "never", "huge-only", "always", "auto", NULL };
static const char *const stats_words[] = { "0", "1", "json", NULL };
static const char *const unwind_words[] = { "auto", "libgcc", NULL };

static const struct uvm_option table[OPT__COUNT] = {
	[OPT_ARENA_SIZE] = { "UVM_ARENA_SIZE", 64LL << 30, 64LL << 20, 1LL << 44,
			     "address space reserved per region (another, as large as all before it, when one is full; at most a quarter of what RLIMIT_AS leaves)" },
	[OPT_LAZY_MAX] = { "UVM_LAZY_MAX", 0, 0, 1LL << 40,
			   "lazily freed pages (a count, no K/M/G suffix) that trigger a purge, and the cap of pools; 0 = an eighth of the busy pages, "
			   "between 256 and fls(CPUs) * 8192 (the kernel's lazy_max_pages())", .live = true,
			   .pages = true },
	[OPT_GUARD] = { "UVM_GUARD", 0, 0, 1,
			"1 = install a real guard page after every area (MADV_GUARD_INSTALL, Linux 6.13+) so overflows fault" },
	[OPT_NODES] = { "UVM_NODES", 0, 0, 128, "number of vmap nodes (busy trees, lazy lists, pools); 0 = one per CPU, at most 128" },
	[OPT_PCP] = { "UVM_PCP", 1, 0, 1, "1 = per-thread caches of freed, still backed areas (bins and order lists); 0 = every free goes to the node" },
	[OPT_PCP_HIGH] = { "UVM_PCP_HIGH", 4LL << 30, 0, 1LL << 40,
			   "most bytes one thread's cache may grow to (its high watermark adapts between 4M and this)", .live = true },
	[OPT_THP] = { "UVM_THP", THP_AUTO, 0, THP_AUTO,
		      "transparent huge pages: always = every area of 2M or more, and slabs cut from 2M huge pages; auto = the same while "
		      "a huge page's first touch, timed as the program runs, costs less than its 512 small pages'; "
		      "huge-only = uvm_vmalloc_huge areas of 2M or more; never",
		      thp_words },
	[OPT_HUGETLB] = { "UVM_HUGETLB", 0, 0, 1,
			  "1 = back the 2M-aligned body of huge areas with the kernel's hugetlb pool (libhugetlbfs, opened then), THP when it is empty" },
	[OPT_POPULATE] = { "UVM_POPULATE", 0, 0, 1,
			   "1 = fault fresh areas in with one MADV_POPULATE_WRITE instead of one fault per page", .live = true },
	[OPT_FAKE_NUMA] = { "UVM_FAKE_NUMA", 0, 0, 64,
			    "split the address space into N pretend NUMA nodes (for tests on one-node machines); 0 = the real nodes" },
	[OPT_SLAB_MAX] = { "UVM_SLAB_MAX", 3584, 0, 8 << 10,
			   "largest malloc served from slabs (at most 8K; the classes of a page and more keep their free state in the slab's header); larger ones get areas of their own, "
			   "except 4097-7168, 8193-10240 and 12289-14336 bytes, which take the 4.5-7, 9, 10 and 14 KiB classes (smaller than their pages); 0 = no slabs at all" },
	[OPT_STATS] = { "UVM_STATS", 0, 0, 2,
			"1 = print a summary of the allocator's statistics, overhead and fragmentation on stderr at exit; "
			"json = the same as one JSON object", stats_words, .live = true },
	[OPT_TRACE_SAMPLE] = { "UVM_TRACE_SAMPLE", 0, 0, 1LL << 31,
			       "while vmtrace traces the alloc probe, time and report one allocation in N; 0 = none "
			       "(vmtrace --sample sets it)", .live = true },
	[OPT_PROF_SAMPLE] = { "UVM_PROF_SAMPLE", 0, 0, 1LL << 40,
			      "heap profile: sample one allocation per N bytes allocated on average, with its full stack, "
			      "for vminfo --heap, vmtrace --heap and UVM_LEAKS (512K costs a few per cent); 0 = off", .live = true },
	[OPT_LEAKS] = { "UVM_LEAKS", 0, 0, 1,
			"1 = at exit, print the sampled allocations still live, by stack, on stderr (sampling at 512K "
			"when UVM_PROF_SAMPLE is 0)" },
	[OPT_PROF_UNWIND] = { "UVM_PROF_UNWIND", UNWIND_AUTO, 0, 1,
			      "the heap profile's unwinder: auto = libunwind's where libunwind8 is installed, else libgcc's; "
			      "libgcc = always libgcc's (slower, no libunwind loaded)", unwind_words },
};

static long long values[OPT__COUNT];
static void (*watchers[OPT__COUNT])(long long value);

static int parse_word(const char *const *words, const char *s, long long *out)
{
	for (long long v = 0; words[v]; v++)
		if (!strcmp(words[v], s)) {
			*out = v;
			return 0;
		}
	return -1;
}

static int parse(const char *s, bool suffix, long long *out)
{
	char *end;
	long long v = strtoll(s, &end, 0);
	int shift = 0;

	switch (suffix ? *end : 0) {
	case 'T': case 't': shift += 10; /* fall through */
	case 'G': case 'g': shift += 10; /* fall through */
	case 'M': case 'm': shift += 10; /* fall through */
	case 'K': case 'k': shift += 10; end++; break;
	default: break;
	}
	if (end == s || *end || v < 0 || v > (1LL << 62) >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

/* msg as snprintf made it into a buffer of size bytes: n is what it wanted to write, maybe more than fits. */
static void say(const char *msg, int n, size_t size)
{
	if (n > 0 && write(2, msg, (size_t)n < size ? (size_t)n : size - 1) < 0)
		return;
}

/* A refused value: the setting keeps its default, and the message says what it takes. */
static void say_ignored(const struct uvm_option *o, const char *val)
{
	char msg[512], words[160] = "";
	int n;

	if (o->words) {
		for (int v = 0; o->words[v]; v++)
			snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s", v ? ", " : "", o->words[v]);
		n = snprintf(msg, sizeof(msg), "uvmalloc: ignoring %s=%s: it takes one of %s\n", o->name, val, words);
	} else if (o->pages) {
		n = snprintf(msg, sizeof(msg), "uvmalloc: ignoring %s=%s: it takes a whole number of pages from %lld to %lld "
			     "(a count of %zu-byte pages, so no K, M, G or T)\n", o->name, val, o->min, o->max, UVM_PAGE_SIZE);
	} else {
		n = snprintf(msg, sizeof(msg), "uvmalloc: ignoring %s=%s: it takes a whole number from %lld to %lld "
			     "(K, M, G or T: times 1024, 1024^2...)\n", o->name, val, o->min, o->max);
	}
	say(msg, n, sizeof(msg));
}

/* A UVM_* variable no setting has (a typo such as UVM_STAT=1): said once, at set-up. */
static void say_unknown(void)
{
	extern char **environ;

	for (char **e = environ; e && *e; e++) {
		size_t len = strcspn(*e, "=");
		bool known = false;
		char msg[256];

		if (strncmp(*e, "UVM_", 4))
			continue;
		for (int i = 0; i < OPT__COUNT && !known; i++)
			known = strlen(table[i].name) == len && !strncmp(table[i].name, *e, len);
		if (!known)
			say(msg, snprintf(msg, sizeof(msg), "uvmalloc: unknown setting %.*s, ignored (uvmdemo --help "
					  "lists them)\n", (int)(len < 64 ? len : 64), *e), sizeof(msg));
	}
}

void options_init(void)
{
	for (int i = 0; i < OPT__COUNT; i++) {
		const char *s = secure_getenv(table[i].name);
		long long v;

		values[i] = table[i].def;
		if (!s)
			continue;
		if ((table[i].words ? parse_word(table[i].words, s, &v) : parse(s, !table[i].pages, &v)) || v < table[i].min ||
		    v > table[i].max)
			say_ignored(&table[i], s);
		else
			values[i] = v;
	}
	if (!getauxval(AT_SECURE)) /* setuid programs read no setting: nothing to warn about either */
		say_unknown();
}

long long option(enum uvm_option_id id) { return __atomic_load_n(&values[id], __ATOMIC_RELAXED); }

void option_watch(enum uvm_option_id id, void (*fn)(long long value)) { watchers[id] = fn; }

int option_find(const char *name)
{
	for (int i = 0; name && i < OPT__COUNT; i++)
		if (!strcmp(table[i].name, name) || !strcmp(table[i].name + 4, name))
			return i;
	return -1;
}

int option_change(enum uvm_option_id id, long long value)
{
	if (!table[id].live)
		return EPERM;
	if (value < table[id].min || value > table[id].max)
		return EINVAL;
	__atomic_store_n(&values[id], value, __ATOMIC_RELAXED);
	if (watchers[id])
		watchers[id](value);
	return 0;
}

void option_print(FILE *f)
{
	for (int i = 0; i < OPT__COUNT; i++) {
		const char *const *w = table[i].words;

		if (w)
			fprintf(f, "  %-15s = %-12s (default %s) %s\n", table[i].name, w[values[i]], w[table[i].def], table[i].desc);
		else
			fprintf(f, "  %-15s = %-12lld (default %lld) %s\n", table[i].name, values[i], table[i].def,
				table[i].desc);
	}
}
