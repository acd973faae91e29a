/*
 * vminfo - the live state of a process that runs on uvmalloc, read from
 * outside: its areas in the /proc/vmallocinfo format, the unpurged ones, and
 * a summary.  The target does nothing for us: we find its descriptor
 * through its modules' symbol tables and read its memory with
 * process_vm_readv (target.c, snapshot.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "chart.h"
#include "heap.h"
#include "heapprof.h"
#include "json.h"
#include "units.h"
#include "snapshot.h"
#include "svg.h"

enum sort_key { BY_ADDR, BY_SIZE, BY_CALLER };

struct opts {
	pid_t pid;
	int summary_only, json, top, heap, folded, bytes;
	enum sort_key sort;
	double watch;
	const char *svg, *since;
};

/* A live area and its caller's name ("" for none). */
struct line {
	const struct area *a;
	const char *caller;
};

/* Callers' names, one per distinct address: a million areas come from a few hundred callers. */
struct names {
	uint64_t *addr;
	char (*name)[256];
	size_t n;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vminfo [options] PID\n"
		"  --summary          only the summary\n"
		"  --json             JSON instead of text (schema: uvmalloc.vminfo/1, see docs/vminfo.md)\n"
		"  --sort KEY         order of the area lines: addr (default), size, caller\n"
		"  --top N            the N callers (with --heap: stacks) holding the most bytes\n"
		"  --watch SECONDS    print again every SECONDS until interrupted\n"
		"  --svg FILE         also draw each region's address space into FILE (with --heap: a flame graph)\n"
		"  --heap             the heap profile: live sampled allocations by stack (the target samples with\n"
		"                     UVM_PROF_SAMPLE=BYTES; vmtrace --heap turns it on in a running process)\n"
		"  --folded           with --heap: collapsed stacks (frames joined by ';', then bytes) for flame-graph tools\n"
		"  --since FILE       with --heap: what grew since FILE, an earlier --heap --json of the same process\n"
		"  --bytes            sizes in the summary as exact bytes, not KiB, MiB, GiB (JSON is always bytes)\n"
		"  -h, --help         this text\n"
		"  --version          the version\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "summary", no_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "sort", required_argument, NULL, 'o' }, { "top", required_argument, NULL, 't' },
		{ "watch", required_argument, NULL, 'w' }, { "svg", required_argument, NULL, 'g' },
		{ "heap", no_argument, NULL, 'H' }, { "folded", no_argument, NULL, 'F' },
		{ "since", required_argument, NULL, 'S' }, { "bytes", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
	};
	unsigned long long n;
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'V': printf("vminfo (uvmalloc) %s\n", UVM_VERSION); exit(0);
		case 's': o->summary_only = 1; break;
		case 'j': o->json = 1; break;
		case 'o':
			if (!strcmp(optarg, "addr")) o->sort = BY_ADDR;
			else if (!strcmp(optarg, "size")) o->sort = BY_SIZE;
			else if (!strcmp(optarg, "caller")) o->sort = BY_CALLER;
			else { fprintf(stderr, "vminfo: --sort takes addr, size or caller, not %s\n", optarg); return 2; }
			break;
		case 't':
			if (!parse_count(optarg, 1, INT32_MAX, &n)) {
				fprintf(stderr, "vminfo: --top takes a whole number from 1, not %s\n", optarg);
				return 2;
			}
			o->top = (int)n;
			break;
		case 'w':
			if (!parse_seconds(optarg, 0.001, 86400.0 * 366, &o->watch)) {
				fprintf(stderr, "vminfo: --watch takes a number of seconds from 0.001 to a year, not %s\n", optarg);
				return 2;
			}
			break;
		case 'g': o->svg = optarg; break;
		case 'H': o->heap = 1; break;
		case 'F': o->folded = 1; break;
		case 'B': o->bytes = 1; break;
		case 'S': o->since = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if ((o->folded || o->since) && !o->heap) {
		fprintf(stderr, "vminfo: %s needs --heap\n", o->folded ? "--folded" : "--since");
		return 2;
	}
	if (o->heap && (o->summary_only || o->sort != BY_ADDR)) {
		fprintf(stderr, "vminfo: --heap shows stacks, not areas: it takes no %s\n", o->summary_only ? "--summary" : "--sort");
		return 2;
	}
	if (o->folded && o->json) {
		fprintf(stderr, "vminfo: --folded and --json are two formats: choose one\n");
		return 2;
	}
	if (!parse_count(argv[optind], 1, INT32_MAX, &n)) {
		fprintf(stderr, "vminfo: not a process id: %s\n", argv[optind]);
		return 2;
	}
	o->pid = (pid_t)n;
	return 0;
}

/* ------------------------------------------------------------ summary */

struct summary {
	uint64_t reserved, busy, busy_n, cached, cached_n, lazy, lazy_n, free, free_n, largest;
	double frag;
	/* Below each region's committed top, where holes left between areas are (uvm_frag_stats' span figures). */
	uint64_t span, span_free, span_free_n, span_largest;
	double span_frag;
	uint64_t live, overhead; /* usable bytes of live blocks (areas less guards, slab objects), resident less those */
};

/* The part of free range f below the committed top of the region that holds it (regions are disjoint). */
static uint64_t in_span(const struct snapshot *s, const struct area *f)
{
	const struct region_info *r = region_holding(s, f->start, f->end);

	return r && f->start < r->committed ? (f->end < r->committed ? f->end : r->committed) - f->start : 0;
}

static struct summary summarize(const struct uvm_descriptor *d, const struct snapshot *s)
{
	struct summary m = { 0 };

	for (unsigned i = 0; i < s->nregions; i++)
		m.reserved += s->regions[i].end - s->regions[i].base;
	for (size_t i = 0; i < s->nbusy; i++) {
		uint64_t size = s->busy[i].end - s->busy[i].start;

		if (s->busy[i].live) {
			m.busy += size;
			m.busy_n++;
			if (!(s->busy[i].flags & d->va_flag_slab))
				m.live += size - d->page_size;
		} else {
			m.cached += size;
			m.cached_n++;
		}
	}
	for (size_t i = 0; i < s->nlazy; i++)
		m.lazy += s->lazy[i].end - s->lazy[i].start;
	m.lazy_n = s->nlazy;
	for (size_t i = 0; i < s->nfree; i++) {
		uint64_t size = s->free[i].end - s->free[i].start;

		m.free += size;
		if (size > m.largest)
			m.largest = size;
	}
	m.free_n = s->nfree;
	m.frag = m.free ? 1.0 - (double)m.largest / (double)m.free : 0.0;
	for (unsigned i = 0; i < s->nregions; i++)
		m.span += s->regions[i].committed - s->regions[i].base;
	for (size_t i = 0; i < s->nfree; i++) {
		uint64_t size = in_span(s, &s->free[i]);

		if (!size)
			continue;
		m.span_free += size;
		m.span_free_n++;
		if (size > m.span_largest)
			m.span_largest = size;
	}
	m.span_frag = m.span_free ? 1.0 - (double)m.span_largest / (double)m.span_free : 0.0;
	m.live += s->slab_live_bytes;
	m.overhead = s->rss_kb * 1024 > m.live ? s->rss_kb * 1024 - m.live : 0;
	return m;
}

static const char *flag_word(uint32_t flags, const struct uvm_descriptor *d)
{
	if (flags & d->va_flag_slab)
		return " slab";
	if (flags & d->va_flag_hugetlb)
		return " hugetlb";
	if (flags & d->va_flag_huge)
		return " huge";
	return "";
}

/* ---------------------------------------------------------------- lines */

static int by_addr(const void *x, const void *y)
{
	const struct line *a = x, *b = y;

	return a->a->start < b->a->start ? -1 : a->a->start > b->a->start;
}

static int by_size(const void *x, const void *y)
{
	const struct line *a = x, *b = y;
	uint64_t sa = a->a->end - a->a->start, sb = b->a->end - b->a->start;

	return sa > sb ? -1 : sa < sb ? 1 : by_addr(x, y);
}

static int by_caller(const void *x, const void *y)
{
	const struct line *a = x, *b = y;
	int c = strcmp(a->caller, b->caller);

	return c ? c : by_addr(x, y);
}

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Symbolize each distinct caller of the live areas once. */
static int names_of(const struct target *t, const struct snapshot *s, struct names *nm)
{
	size_t k = 0;

	nm->addr = malloc((s->nbusy + 1) * sizeof(*nm->addr));
	if (!nm->addr)
		return -1;
	for (size_t i = 0; i < s->nbusy; i++)
		if (s->busy[i].live && s->busy[i].caller)
			nm->addr[k++] = s->busy[i].caller;
	qsort(nm->addr, k, sizeof(*nm->addr), by_u64);
	nm->n = 0;
	for (size_t i = 0; i < k; i++)
		if (!nm->n || nm->addr[nm->n - 1] != nm->addr[i])
			nm->addr[nm->n++] = nm->addr[i];
	nm->name = malloc((nm->n + 1) * sizeof(*nm->name));
	if (!nm->name)
		return -1;
	for (size_t i = 0; i < nm->n; i++)
		target_symbol(t, nm->addr[i], nm->name[i], sizeof(nm->name[i]));
	return 0;
}

static const char *name_of(const struct names *nm, uint64_t caller)
{
	const uint64_t *at = caller ? bsearch(&caller, nm->addr, nm->n, sizeof(*nm->addr), by_u64) : NULL;

	return at ? nm->name[at - nm->addr] : "";
}

static struct line *live_lines(const struct snapshot *s, const struct names *nm, enum sort_key key, size_t *n)
{
	struct line *l = calloc(s->nbusy ? s->nbusy : 1, sizeof(*l));

	*n = 0;
	if (!l)
		return NULL;
	for (size_t i = 0; i < s->nbusy; i++)
		if (s->busy[i].live)
			l[(*n)++] = (struct line){ &s->busy[i], name_of(nm, s->busy[i].caller) };
	qsort(l, *n, sizeof(*l), key == BY_SIZE ? by_size : key == BY_CALLER ? by_caller : by_addr);
	return l;
}

struct caller_total {
	const char *caller;
	uint64_t bytes, count;
};

static int by_bytes(const void *x, const void *y)
{
	const struct caller_total *a = x, *b = y;

	return a->bytes > b->bytes ? -1 : a->bytes < b->bytes;
}

/* Callers by bytes held: lines sorted by caller, folded. */
static size_t top_callers(struct line *l, size_t n, struct caller_total *out)
{
	size_t k = 0;

	qsort(l, n, sizeof(*l), by_caller);
	for (size_t i = 0; i < n; i++) {
		if (!k || strcmp(out[k - 1].caller, l[i].caller))
			out[k++] = (struct caller_total){ l[i].caller, 0, 0 };
		out[k - 1].bytes += l[i].a->end - l[i].a->start;
		out[k - 1].count++;
	}
	qsort(out, k, sizeof(*out), by_bytes);
	return k;
}

/* ----------------------------------------------------------------- text */

static void print_area(const struct uvm_descriptor *d, const struct line *l)
{
	const struct area *a = l->a;
	uint64_t pages = (a->end - a->start) / d->page_size - 1;

	printf("0x%016llx-0x%016llx %7llu%s%s pages=%llu vmalloc%s N%u=%llu\n", (unsigned long long)a->start,
	       (unsigned long long)a->end, (unsigned long long)(a->end - a->start), l->caller[0] ? " " : "", l->caller,
	       (unsigned long long)pages, flag_word(a->flags, d), a->node, (unsigned long long)pages);
}

/* A size in the summary: units for a person, or exact bytes with --bytes (units.h); each call its own buffer. */
static const char *sz(uint64_t v, bool exact)
{
	static char pool[24][SIZE_TEXT];
	static unsigned next;

	return size_text(pool[next++ % 24], v, exact);
}

/* UVM_THP's words by the descriptor's thp_mode less one (options.c's, which a tool cannot link). */
static const char *const thp_modes[] = { "never", "huge-only", "always", "auto" };
enum { THP_MODE_AUTO = 4 };

/* UVM_THP, and under auto whether huge pages pay and what the verdict rests on. */
static void print_thp(const struct snapshot *s, bool exact)
{
	if (!s->thp_mode)
		return;
	printf("  huge pages    UVM_THP=%s", thp_modes[s->thp_mode - 1]);
	if (s->thp_mode == THP_MODE_AUTO && !s->thp_samples)
		printf(": none timed yet, so they pay");
	else if (s->thp_mode == THP_MODE_AUTO)
		printf(": they %s (first touch %.1f us, running mean of %llu timed; 512 small pages %.1f us); "
		       "%s of candidates got small pages", s->thp_small ? "do not pay" : "pay", (double)s->thp_huge_ns / 1e3,
		       (unsigned long long)s->thp_samples, (double)s->thp_small_ns * 512 / 1e3, sz(s->thp_declined, exact));
	printf("\n");
}

static void print_summary(const struct snapshot *s, const struct summary *m, bool exact)
{
	typedef unsigned long long ull;

	printf("summary:\n"
	       "  reserved      %12s in %u regions\n"
	       "  busy          %12s in %llu areas (%llu slabs)\n"
	       "  thread-cached %12s in %llu areas\n"
	       "  lazy          %12s in %llu areas (unpurged)\n"
	       "  pooled        %12s in %llu areas\n"
	       "  free          %12s in %llu ranges, largest %s\n"
	       "  committed     %12s: %llu free ranges of %s in it, largest %s\n"
	       "  fragmentation %12.4f (1 - largest free / free, in the committed span; %.4f over the whole reservation)\n"
	       "  rss           %12s in the regions, AnonHugePages %s; the process's page faults so far %llu minor, %llu major\n"
	       "  areas %llu allocated, %llu freed (slab objects: the class table below); cache hits %llu, misses %llu\n"
	       "  purges %llu (%s given back); syscalls: mmap %llu, mprotect %llu, madvise %llu, mremap %llu, other %llu\n",
	       sz(m->reserved, exact), s->nregions, sz(m->busy, exact), (ull)m->busy_n, (ull)s->slabs,
	       sz(m->cached, exact), (ull)m->cached_n, sz(m->lazy, exact), (ull)m->lazy_n, sz(s->pooled_bytes, exact),
	       (ull)s->pooled_count, sz(m->free, exact), (ull)m->free_n, sz(m->largest, exact), sz(m->span, exact),
	       (ull)m->span_free_n, sz(m->span_free, exact), sz(m->span_largest, exact), m->span_frag, m->frag,
	       sz(s->rss_kb * 1024, exact), sz(s->anon_huge_kb * 1024, exact), (ull)s->minor_faults, (ull)s->major_faults,
	       (ull)s->allocs, (ull)s->frees,
	       (ull)s->cache_hits, (ull)s->cache_misses, (ull)s->purges, sz(s->purged_bytes, exact), (ull)s->mmap_calls,
	       (ull)s->mprotect_calls, (ull)s->madvise_calls, (ull)s->mremap_calls, (ull)s->other_calls);
	printf("  overhead      %12s of the resident (%.1f %%) hold no live block (live %s): held in thread caches %s,\n"
	       "                lazily %s, in pools %s; free slab objects %s, slab tails %s\n",
	       sz(m->overhead, exact), s->rss_kb ? 100.0 * (double)m->overhead / (double)(s->rss_kb * 1024) : 0.0,
	       sz(m->live, exact), sz(m->cached, exact), sz(m->lazy, exact), sz(s->pooled_bytes, exact),
	       sz(s->slab_free_bytes, exact), sz(s->slab_meta_bytes, exact));
	if (s->have_rounding)
		printf("  rounding      %12s of the live areas' pages over the sizes asked for\n", sz(s->rounding_bytes, exact));
	if (s->have_metadata)
		printf("  metadata      %12s outside the regions (thread heaps, area objects, page maps)\n",
		       sz(s->metadata_bytes, exact));
	print_thp(s, exact);
	if (!s->nclasses)
		return;
	printf("slabs by size class (from their headers; orphans: their threads exited; of the free objects, those\n"
	       "other threads freed that wait for their slab's owner, and those in threads' hands; slabs by live share:\n"
	       "empty, <25%%, <50%%, <75%%, the rest):\n"
	       "   size  slabs orphans      live      free   waiting   in hand     never  free bytes  empty <25%% <50%% <75%%  rest\n");
	for (unsigned i = 0; i < s->nclasses; i++) {
		const struct slab_class *k = &s->classes[i];
		char orphans[24] = "-";

		if (s->have_orphans)
			snprintf(orphans, sizeof(orphans), "%llu", (unsigned long long)k->orphans);
		printf("  %5llu %6llu %7s %9llu %9llu %9llu %9llu %9llu %11llu  %5llu %4llu %4llu %4llu %5llu\n",
		       (unsigned long long)k->size, (unsigned long long)k->slabs, orphans, (unsigned long long)k->live,
		       (unsigned long long)k->free, (unsigned long long)k->waiting, (unsigned long long)k->in_hand,
		       (unsigned long long)k->never_used, (unsigned long long)(k->free * k->size),
		       (unsigned long long)k->occupancy[0], (unsigned long long)k->occupancy[1],
		       (unsigned long long)k->occupancy[2], (unsigned long long)k->occupancy[3],
		       (unsigned long long)k->occupancy[4]);
	}
	if (s->slabs_unread)
		printf("  (%llu slabs whose header could not be read)\n", (unsigned long long)s->slabs_unread);
}

static void print_text(const struct target *t, const struct snapshot *s, struct line *l, size_t n, const struct opts *o)
{
	struct summary m = summarize(&t->d, s);

	if (!o->summary_only) {
		for (size_t i = 0; i < n; i++)
			print_area(&t->d, &l[i]);
		for (size_t i = 0; i < s->nlazy; i++)
			printf("0x%016llx-0x%016llx %7llu unpurged vm_area\n", (unsigned long long)s->lazy[i].start,
			       (unsigned long long)s->lazy[i].end, (unsigned long long)(s->lazy[i].end - s->lazy[i].start));
	}
	print_summary(s, &m, o->bytes);
	if (o->top) {
		struct caller_total *tot = calloc(n ? n : 1, sizeof(*tot));
		size_t k = tot ? top_callers(l, n, tot) : 0;

		printf("top callers by bytes:\n");
		for (size_t i = 0; i < k && i < (size_t)o->top; i++)
			printf("  %14llu bytes %6llu areas  %s\n", (unsigned long long)tot[i].bytes,
			       (unsigned long long)tot[i].count, tot[i].caller[0] ? tot[i].caller : "(slabs and internal)");
		free(tot);
	}
}

/* ----------------------------------------------------------------- json */

/* ,"name":v, or null when the target's library does not keep it. */
static void json_known(const char *name, int have, uint64_t v)
{
	if (have)
		printf(",\"%s\":%llu", name, (unsigned long long)v);
	else
		printf(",\"%s\":null", name);
}

static void print_json(const struct target *t, const struct snapshot *s, struct line *l, size_t n, const struct opts *o)
{
	struct summary m = summarize(&t->d, s);

	printf("{\"schema\":\"uvmalloc.vminfo/1\",\"pid\":%d,\"time\":%lld,\"areas\":[", (int)t->pid, (long long)time(NULL));
	for (size_t i = 0; i < n && !o->summary_only; i++) {
		const struct area *a = l[i].a;
		const char *f = flag_word(a->flags, &t->d);

		printf("%s{\"start\":%llu,\"end\":%llu,\"size\":%llu,\"pages\":%llu,\"node\":%u,\"vnode\":%u,"
		       "\"kind\":\"%s\",\"caller\":", i ? "," : "",
		       (unsigned long long)a->start, (unsigned long long)a->end, (unsigned long long)(a->end - a->start),
		       (unsigned long long)((a->end - a->start) / t->d.page_size - 1), a->node, a->vnode, *f ? f + 1 : "vmalloc");
		json_string(stdout, l[i].caller);
		printf(",\"caller_address\":%llu}", (unsigned long long)a->caller);
	}
	printf("],\"unpurged\":[");
	for (size_t i = 0; i < s->nlazy && !o->summary_only; i++)
		printf("%s{\"start\":%llu,\"end\":%llu,\"size\":%llu,\"vnode\":%u}", i ? "," : "",
		       (unsigned long long)s->lazy[i].start, (unsigned long long)s->lazy[i].end,
		       (unsigned long long)(s->lazy[i].end - s->lazy[i].start), s->lazy[i].vnode);
	printf("],\"summary\":{\"regions\":%u,\"reserved_bytes\":%llu,\"busy_bytes\":%llu,\"busy_count\":%llu,"
	       "\"cached_bytes\":%llu,\"cached_count\":%llu,\"lazy_bytes\":%llu,\"lazy_count\":%llu,"
	       "\"pooled_bytes\":%llu,\"pooled_count\":%llu,\"free_bytes\":%llu,\"free_count\":%llu,"
	       "\"largest_free\":%llu,\"fragmentation\":%.6f,\"span_bytes\":%llu,\"span_free_bytes\":%llu,"
	       "\"span_free_count\":%llu,\"span_largest_free\":%llu,\"span_fragmentation\":%.6f,\"rss_kb\":%llu,\"anon_huge_kb\":%llu,"
	       "\"minor_faults\":%llu,\"major_faults\":%llu,\"slabs\":%llu,"
	       "\"allocs\":%llu,\"frees\":%llu,\"cache_hits\":%llu,\"cache_misses\":%llu,\"purges\":%llu,"
	       "\"purged_bytes\":%llu,\"mmap_calls\":%llu,\"mprotect_calls\":%llu,\"madvise_calls\":%llu,"
	       "\"mremap_calls\":%llu,\"live_bytes\":%llu,\"overhead_bytes\":%llu,\"slab_free_bytes\":%llu,"
	       "\"slab_meta_bytes\":%llu,\"slabs_unread\":%llu",
	       s->nregions, (unsigned long long)m.reserved, (unsigned long long)m.busy, (unsigned long long)m.busy_n,
	       (unsigned long long)m.cached, (unsigned long long)m.cached_n, (unsigned long long)m.lazy,
	       (unsigned long long)m.lazy_n, (unsigned long long)s->pooled_bytes, (unsigned long long)s->pooled_count,
	       (unsigned long long)m.free, (unsigned long long)m.free_n, (unsigned long long)m.largest, m.frag,
	       (unsigned long long)m.span, (unsigned long long)m.span_free, (unsigned long long)m.span_free_n,
	       (unsigned long long)m.span_largest, m.span_frag, (unsigned long long)s->rss_kb, (unsigned long long)s->anon_huge_kb,
	       (unsigned long long)s->minor_faults, (unsigned long long)s->major_faults, (unsigned long long)s->slabs,
	       (unsigned long long)s->allocs, (unsigned long long)s->frees, (unsigned long long)s->cache_hits,
	       (unsigned long long)s->cache_misses, (unsigned long long)s->purges, (unsigned long long)s->purged_bytes,
	       (unsigned long long)s->mmap_calls, (unsigned long long)s->mprotect_calls,
	       (unsigned long long)s->madvise_calls, (unsigned long long)s->mremap_calls, (unsigned long long)m.live,
	       (unsigned long long)m.overhead, (unsigned long long)s->slab_free_bytes, (unsigned long long)s->slab_meta_bytes,
	       (unsigned long long)s->slabs_unread);
	json_known("metadata_bytes", s->have_metadata, s->metadata_bytes);
	json_known("rounding_bytes", s->have_rounding, s->rounding_bytes);
	if (s->thp_mode)
		printf(",\"thp\":{\"mode\":\"%s\",\"pays\":%s,\"huge_ns\":%llu,\"small_ns\":%llu,\"samples\":%llu,"
		       "\"declined_bytes\":%llu}", thp_modes[s->thp_mode - 1], s->thp_small ? "false" : "true",
		       (unsigned long long)s->thp_huge_ns, (unsigned long long)s->thp_small_ns,
		       (unsigned long long)s->thp_samples, (unsigned long long)s->thp_declined);
	else
		printf(",\"thp\":null");
	printf(",\"classes\":[");
	for (unsigned i = 0; i < s->nclasses; i++) {
		const struct slab_class *k = &s->classes[i];

		printf("%s{\"size\":%llu,\"slabs\":%llu,\"live\":%llu,\"free\":%llu,\"waiting\":%llu,\"in_hand\":%llu,"
		       "\"never_used\":%llu,\"occupancy\":[%llu,%llu,%llu,%llu,%llu]",
		       i ? "," : "", (unsigned long long)k->size, (unsigned long long)k->slabs, (unsigned long long)k->live,
		       (unsigned long long)k->free, (unsigned long long)k->waiting, (unsigned long long)k->in_hand,
		       (unsigned long long)k->never_used, (unsigned long long)k->occupancy[0],
		       (unsigned long long)k->occupancy[1], (unsigned long long)k->occupancy[2],
		       (unsigned long long)k->occupancy[3], (unsigned long long)k->occupancy[4]);
		json_known("orphans", s->have_orphans, k->orphans);
		printf("}");
	}
	printf("]}");
	if (o->top) {
		struct caller_total *tot = calloc(n ? n : 1, sizeof(*tot));
		size_t k = tot ? top_callers(l, n, tot) : 0;

		printf(",\"top\":[");
		for (size_t i = 0; i < k && i < (size_t)o->top; i++) {
			printf("%s{\"caller\":", i ? "," : "");
			json_string(stdout, tot[i].caller);
			printf(",\"bytes\":%llu,\"count\":%llu}", (unsigned long long)tot[i].bytes, (unsigned long long)tot[i].count);
		}
		printf("]");
		free(tot);
	}
	printf("}\n");
}

/* ----------------------------------------------------------------- main */

static const char *caller_name(const void *nm, uint64_t caller) { return name_of(nm, caller); }

/* The reads so far, under --watch: the chart above the picture of --svg. */
static struct chart history;

static void add_point(const struct snapshot *s, const struct summary *m)
{
	struct timespec now;
	struct chart_point pt;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pt.t = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	pt.v[CH_RSS] = (double)s->rss_kb * 1024;
	pt.v[CH_LIVE] = (double)m->live;
	pt.v[CH_CACHED] = (double)m->cached;
	pt.v[CH_LAZY] = (double)m->lazy;
	pt.v[CH_POOLED] = (double)s->pooled_bytes;
	pt.v[CH_SLAB_FREE] = (double)s->slab_free_bytes;
	pt.v[CH_META] = s->have_metadata ? (double)s->metadata_bytes : -1;
	pt.v[CH_FRAG] = m->span_frag;
	chart_add(&history, &pt);
}

static void frame_name(void *t, uint64_t ip, char *buf, size_t len) { target_frame(t, ip, buf, len); }

/* --heap: the profile, in the format asked for, and its flame graph. */
static int report_heap(const struct opts *o)
{
	struct hp_profile p = { 0 };
	struct target t;
	enum target_err e = target_open(&t, o->pid);
	char why[512], title[128];
	int err = 0;

	if (!e)
		e = heap_read(&t, &p);
	if (e == T_VERSION) {
		fprintf(stderr, "vminfo: process %d runs a uvmalloc that keeps no heap profile\n", (int)o->pid);
		err = 10 + (int)e;
	} else if (e) {
		fprintf(stderr, "vminfo: %s\n", target_strerror(e, o->pid));
		err = 10 + (int)e;
	} else if (o->since && hp_since(&p, o->since, why, sizeof(why))) {
		fprintf(stderr, "vminfo: --since: %s\n", why);
		err = 2;
	} else if (hp_name(&p, frame_name, &t)) {
		fprintf(stderr, "vminfo: out of memory for %zu stacks\n", p.n);
		err = 1;
	} else {
		if (o->json)
			hp_json(stdout, &p, (long)o->pid, o->top);
		else if (o->folded)
			hp_folded(stdout, &p);
		else if (!p.rate && !p.n)
			printf("process %d samples no allocations: run it with UVM_PROF_SAMPLE=BYTES (524288 is a good start), "
			       "or turn it on with vmtrace --heap\n", (int)o->pid);
		else
			hp_text(stdout, &p, "heap profile", o->top);
		snprintf(title, sizeof(title), "uvmalloc heap profile of process %d%s", (int)o->pid, o->since ? " (growth)" : "");
		if (o->svg && (err = hp_flame(o->svg, &p, title))) {
			fprintf(stderr, "vminfo: cannot write %s: %s\n", o->svg, strerror(err));
			err = 1;
		}
		fflush(stdout);
	}
	hp_free(&p);
	target_close(&t);
	return err;
}

static int report(const struct opts *o)
{
	struct target t;
	struct snapshot s = { 0 };
	struct names nm = { 0 };
	enum target_err e = target_open(&t, o->pid);
	struct line *l = NULL;
	size_t n = 0;
	int err = 0;

	if (!e)
		e = snapshot_take(&t, &s);
	if (e) {
		fprintf(stderr, "vminfo: %s\n", target_strerror(e, o->pid));
		err = 10 + (int)e;
	} else if (names_of(&t, &s, &nm) || !(l = live_lines(&s, &nm, o->sort, &n))) {
		fprintf(stderr, "vminfo: out of memory for %zu areas\n", s.nbusy);
		err = 1;
	} else {
		if (o->json)
			print_json(&t, &s, l, n, o);
		else
			print_text(&t, &s, l, n, o);
		if (o->watch) {
			struct summary m = summarize(&t.d, &s);

			add_point(&s, &m);
		}
		if (o->svg && svg_write(o->svg, &t, &s, &history, caller_name, &nm)) {
			fprintf(stderr, "vminfo: cannot write %s: %s\n", o->svg, strerror(errno));
			err = 1;
		}
		fflush(stdout);
	}
	free(l);
	free(nm.addr);
	free(nm.name);
	snapshot_free(&s);
	target_close(&t);
	return err;
}

int main(int argc, char **argv)
{
	struct opts o;
	int err = parse(argc, argv, &o);

	if (err)
		return err;
	if (o.heap && !o.watch)
		return report_heap(&o);
	if (!o.watch)
		return report(&o);
	for (;;) {
		struct timespec ts = { (time_t)o.watch, (long)((o.watch - (double)(time_t)o.watch) * 1e9) };
		char when[64];
		time_t now = time(NULL);

		if (!o.json && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&now)))
			printf("read at %s\n", when); /* JSON carries its own "time" */
		if ((err = o.heap ? report_heap(&o) : report(&o)))
			return err;
		if (!o.json)
			printf("\n");
		fflush(stdout);
		nanosleep(&ts, NULL);
	}
}
