/*
 * report.c - vmtrace's output (report.h).  Rates are differences of the
 * library's own cumulative counters between the snapshots that bound an
 * interval, so they are exact whatever the sampling; fragmentation is
 * 1 - largest free range / total free, from the same snapshot.
 */
#include "report.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sites.h"

_Static_assert(sizeof(struct uvm_stats) == VT_STATS_WORDS * 8, "vmtrace.h's VT_STATS_WORDS is not struct uvm_stats");

#define FIELD(f) { #f, offsetof(struct uvm_stats, f) }
static const struct {
	const char *name;
	size_t off;
} fields[] = {
	FIELD(regions), FIELD(reserved_bytes), FIELD(committed_bytes), FIELD(busy_bytes), FIELD(busy_count),
	FIELD(cached_bytes), FIELD(cached_count), FIELD(lazy_bytes), FIELD(lazy_count), FIELD(pooled_bytes),
	FIELD(pooled_count), FIELD(free_bytes), FIELD(free_count), FIELD(largest_free), FIELD(allocs),
	FIELD(frees), FIELD(cache_hits), FIELD(cache_misses), FIELD(cache_drained), FIELD(slabs),
	FIELD(small_allocs), FIELD(small_frees), FIELD(pool_hits), FIELD(pool_misses), FIELD(purges),
	FIELD(purged_bytes), FIELD(mmap_calls), FIELD(mprotect_calls), FIELD(madvise_calls), FIELD(mremap_calls),
	FIELD(syscalls), FIELD(area_alloc_bytes), FIELD(area_free_bytes), FIELD(small_alloc_bytes),
	FIELD(small_free_bytes),
};
_Static_assert(sizeof(fields) / sizeof(fields[0]) == VT_STATS_WORDS, "a field of struct uvm_stats has no name here");

static const char *const event_names[VT_NR_EVENTS] = {
	[VT_SNAPSHOT] = "snapshots", [VT_ALLOC] = "sampled_allocs", [VT_CACHE_MISS] = "cache_misses",
	[VT_CACHE_DRAIN] = "cache_drained_areas", [VT_CACHE_DRAINED_PAGES] = "cache_drained_pages",
	[VT_POOL_MISS] = "pool_misses", [VT_TREE_ALLOC] = "tree_allocs", [VT_REGION_NEW] = "regions_new",
	[VT_PURGE] = "purges", [VT_PURGE_AREAS] = "purged_areas", [VT_PURGE_BYTES] = "purged_bytes",
	[VT_PURGE_CALLS] = "purge_madvise_calls", [VT_PURGE_NS] = "purge_ns", [VT_SLAB_REFILL] = "slab_refills",
	[VT_SLAB_NEW] = "slabs_new", [VT_SLAB_RELEASE] = "slab_releases", [VT_THP_VERDICT] = "thp_verdicts",
	[VT_THP_SMALL] = "thp_small_verdicts",
};

static struct proc *find(struct report *r, pid_t pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

struct proc *report_proc(struct report *r, pid_t pid)
{
	struct proc *found = find(r, pid);

	if (found)
		return found;
	if (r->nprocs == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct proc *p = realloc(r->procs, cap * sizeof(*p));

		if (!p)
			return NULL;
		r->procs = p;
		r->cap = cap;
	}
	memset(&r->procs[r->nprocs], 0, sizeof(r->procs[0]));
	r->procs[r->nprocs].pid = pid;
	return &r->procs[r->nprocs++];
}

/* ------------------------------------------------------------ intervals */

struct rates {
	double objs, areas, ofrees, afrees, bytes_in, bytes_out;
	uint64_t purges, purged_pages;
	double faults;                    /* the process's minor page faults a second, the allocator's or not */
	double cache_hit, pool_hit, frag; /* ratios; < 0: nothing to measure */
	double span_frag;                 /* 1 - largest / free bytes in the committed span (uvm_frag_stats') */
	double rounding;                  /* of the interval's sized requests, handed out less requested over handed out */
};

enum { SPAN_BYTES, SPAN_FREE, SPAN_COUNT, SPAN_LARGEST, SLAB_FREE, REQUESTED, HANDED, METADATA };

static double ratio(uint64_t hits, uint64_t misses) { return hits + misses ? (double)hits / (double)(hits + misses) : -1; }

static double fragmentation(const struct uvm_stats *s)
{
	return s->free_bytes ? 1.0 - (double)s->largest_free / (double)s->free_bytes : 0;
}

/* The same ratio within the committed span, from a snapshot's span words. */
static double span_fragmentation(const uint64_t *sp)
{
	return sp[SPAN_FREE] ? 1.0 - (double)sp[SPAN_LARGEST] / (double)sp[SPAN_FREE] : 0;
}

/* Handed out less requested over handed out, for words w and base words b (zeros: all time); < 0 when nothing was handed out. */
static double rounding(const uint64_t *w, const uint64_t *b)
{
	uint64_t handed = w[HANDED] - b[HANDED], requested = w[REQUESTED] - b[REQUESTED];

	return handed ? (double)(handed > requested ? handed - requested : 0) / (double)handed : -1;
}

static void rates_of(const struct proc *p, struct rates *out)
{
	const struct uvm_stats *a = &p->base, *b = &p->last;
	double dt = p->last_ns > p->base_ns ? (double)(p->last_ns - p->base_ns) / 1e9 : 1e-9;

	out->objs = (double)(b->small_allocs - a->small_allocs) / dt;
	out->areas = (double)(b->allocs - a->allocs) / dt;
	out->ofrees = (double)(b->small_frees - a->small_frees) / dt;
	out->afrees = (double)(b->frees - a->frees) / dt;
	out->bytes_in = (double)(b->small_alloc_bytes + b->area_alloc_bytes - a->small_alloc_bytes - a->area_alloc_bytes) / dt;
	out->bytes_out = (double)(b->small_free_bytes + b->area_free_bytes - a->small_free_bytes - a->area_free_bytes) / dt;
	out->purges = b->purges - a->purges;
	out->purged_pages = (b->purged_bytes - a->purged_bytes) / 4096;
	out->faults = (double)(p->faults - p->faults_base) / dt;
	out->cache_hit = ratio(b->cache_hits - a->cache_hits, b->cache_misses - a->cache_misses);
	out->pool_hit = ratio(b->pool_hits - a->pool_hits, b->pool_misses - a->pool_misses);
	out->frag = fragmentation(b);
	out->span_frag = span_fragmentation(p->span);
	out->rounding = rounding(p->span, p->span_base);
}

/* The interval's point on the process's chart: a process already gone has no resident size to give. */
static void chart_point(struct proc *p, double t, const struct rates *x)
{
	struct chart_point pt = { .t = t };

	pt.v[CH_RSS] = p->rss_bytes ? (double)p->rss_bytes : -1;
	pt.v[CH_LIVE] = (double)p->last.busy_bytes;
	pt.v[CH_CACHED] = (double)p->last.cached_bytes;
	pt.v[CH_LAZY] = (double)p->last.lazy_bytes;
	pt.v[CH_POOLED] = (double)p->last.pooled_bytes;
	pt.v[CH_SLAB_FREE] = (double)p->span[SLAB_FREE];
	pt.v[CH_META] = (double)p->span[METADATA];
	pt.v[CH_FRAG] = x->span_frag;
	chart_add(&p->chart, &pt);
}

static const char *human(double v, char *buf, size_t len)
{
	static const char unit[] = " KMGT";
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, u ? "%.2f%c" : "%.0f", v, unit[u]);
	return buf;
}

static const char *mib(double bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f MiB", bytes / (1 << 20));
	return buf;
}

static const char *percent(double r, char *buf, size_t len)
{
	if (r < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100 * r);
	return buf;
}

static void text_line(FILE *f, double t, const struct proc *p, const struct rates *x)
{
	char a[16], b[16], c[16], d[16], e[24], g[24], h[24], i[24], j[16], k[16], l[24], m[24], n[24], o[24], q[24], u[16], v[16];

	fprintf(f,
		"%6.1fs pid %-7d allocs %s/s obj + %s/s areas, frees %s/s + %s/s  +%s/s -%s/s  live %s lazy %s  "
		"purges %llu (%llu pages)  faults %s/s  hits cache %s pool %s  rss %s cached %s pooled %s metadata %s rounding %s  "
		"frag %.3g in %llu ranges of the committed %s (%.3g over the reservation)\n",
		t, (int)p->pid, human(x->objs, a, sizeof(a)), human(x->areas, b, sizeof(b)), human(x->ofrees, c, sizeof(c)),
		human(x->afrees, d, sizeof(d)), mib(x->bytes_in, e, sizeof(e)), mib(x->bytes_out, g, sizeof(g)),
		mib((double)p->last.busy_bytes, h, sizeof(h)), mib((double)p->last.lazy_bytes, i, sizeof(i)),
		(unsigned long long)x->purges, (unsigned long long)x->purged_pages, human(x->faults, v, sizeof(v)),
		percent(x->cache_hit, j, sizeof(j)),
		percent(x->pool_hit, k, sizeof(k)), mib((double)p->rss_bytes, l, sizeof(l)),
		mib((double)p->last.cached_bytes, m, sizeof(m)), mib((double)p->last.pooled_bytes, n, sizeof(n)),
		mib((double)p->span[METADATA], q, sizeof(q)), percent(x->rounding, u, sizeof(u)), x->span_frag, (unsigned long long)p->span[SPAN_COUNT], mib((double)p->span[SPAN_BYTES], o, sizeof(o)), x->frag);
}

static void json_ratio(FILE *f, const char *name, double r)
{
	if (r < 0)
		fprintf(f, ",\"%s\":null", name);
	else
		fprintf(f, ",\"%s\":%.4f", name, r);
}

static void json_proc(FILE *f, const struct proc *p, const struct rates *x)
{
	fprintf(f,
		"{\"pid\":%d,\"span_s\":%.4f,\"allocs_per_s\":%.1f,\"area_allocs_per_s\":%.1f,\"frees_per_s\":%.1f,\"area_frees_per_s\":%.1f,"
		"\"bytes_allocated_per_s\":%.0f,\"bytes_freed_per_s\":%.0f,\"live_bytes\":%llu,\"lazy_bytes\":%llu,"
		"\"purges\":%llu,\"pages_purged\":%llu,\"minor_faults_per_s\":%.1f",
		(int)p->pid, (double)(p->last_ns - p->base_ns) / 1e9, x->objs, x->areas, x->ofrees, x->afrees, x->bytes_in, x->bytes_out,
		(unsigned long long)p->last.busy_bytes, (unsigned long long)p->last.lazy_bytes, (unsigned long long)x->purges,
		(unsigned long long)x->purged_pages, x->faults);
	json_ratio(f, "cache_hit_ratio", x->cache_hit);
	json_ratio(f, "pool_hit_ratio", x->pool_hit);
	json_ratio(f, "rounding", x->rounding);
	fprintf(f, ",\"fragmentation\":%.6f,\"free_bytes\":%llu,\"largest_free\":%llu,\"free_ranges\":%llu", x->frag,
		(unsigned long long)p->last.free_bytes, (unsigned long long)p->last.largest_free,
		(unsigned long long)p->last.free_count);
	fprintf(f, ",\"rss_bytes\":%llu,\"cached_bytes\":%llu,\"pooled_bytes\":%llu,\"slab_free_bytes\":%llu,\"span_bytes\":%llu,"
		"\"span_free_bytes\":%llu,\"span_free_count\":%llu,\"span_largest_free\":%llu,\"span_fragmentation\":%.6f,"
		"\"requested_bytes\":%llu,\"handed_bytes\":%llu,\"metadata_bytes\":%llu}",
		(unsigned long long)p->rss_bytes, (unsigned long long)p->last.cached_bytes,
		(unsigned long long)p->last.pooled_bytes, (unsigned long long)p->span[SLAB_FREE],
		(unsigned long long)p->span[SPAN_BYTES],
		(unsigned long long)p->span[SPAN_FREE], (unsigned long long)p->span[SPAN_COUNT],
		(unsigned long long)p->span[SPAN_LARGEST], x->span_frag, (unsigned long long)p->span[REQUESTED],
		(unsigned long long)p->span[HANDED], (unsigned long long)p->span[METADATA]);
}

static void json_events(FILE *f, const uint64_t *now, const uint64_t *base)
{
	fprintf(f, "\"events\":{");
	for (int e = 0; e < VT_NR_EVENTS; e++)
		fprintf(f, "%s\"%s\":%llu", e ? "," : "", event_names[e], (unsigned long long)(now[e] - base[e]));
	fprintf(f, "}");
}

void report_interval(struct report *r, double t, double dt)
{
	bool first = true;

	if (r->json)
		fprintf(r->out, "{\"t\":%.3f,\"interval_s\":%.3f,\"processes\":[", t, dt);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc *p = &r->procs[i];
		struct rates x;

		if (!p->have_base || !p->fresh)
			continue;
		rates_of(p, &x);
		chart_point(p, t, &x);
		if (r->json) {
			fprintf(r->out, "%s", first ? "" : ",");
			json_proc(r->out, p, &x);
		} else {
			text_line(r->out, t, p, &x);
		}
		first = false;
		p->base = p->last;
		memcpy(p->span_base, p->span, sizeof(p->span));
		p->base_ns = p->last_ns;
		p->faults_base = p->faults;
		p->fresh = false;
	}
	if (r->json) {
		fprintf(r->out, "],");
		json_events(r->out, r->events, r->events_base);
		fprintf(r->out, "}\n");
	} else if (first) {
		fprintf(r->out, "%6.1fs (no snapshot from a traced uvmalloc process in this interval)\n", t);
	}
	memcpy(r->events_base, r->events, sizeof(r->events));
	fflush(r->out);
}

/* ------------------------------------------------------------------ end */

static void text_hist(FILE *f, const char *title, const char *unit, const uint64_t *h)
{
	uint64_t max = 0, total = 0;
	int lo = VT_HIST, hi = -1;

	for (int b = 0; b < VT_HIST; b++) {
		total += h[b];
		if (h[b] > max)
			max = h[b];
		if (h[b] && b < lo)
			lo = b;
		if (h[b])
			hi = b;
	}
	fprintf(f, "\n%s (%llu sampled):\n", title, (unsigned long long)total);
	for (int b = lo; b <= hi; b++) {
		unsigned long long from = b ? 1ull << (b - 1) : 0, to = b ? (1ull << b) - 1 : 0;
		int bar = max ? (int)(40 * h[b] / max) : 0;

		fprintf(f, "  %12llu .. %-12llu %-2s %10llu |%.*s\n", from, to, unit, (unsigned long long)h[b], bar,
			"########################################");
	}
}

static void json_hist(FILE *f, const char *name, const uint64_t *h)
{
	fprintf(f, ",\"%s\":[", name);
	for (int b = 0; b < VT_HIST; b++)
		fprintf(f, "%s%llu", b ? "," : "", (unsigned long long)h[b]);
	fprintf(f, "]");
}

static void json_stats(FILE *f, const struct uvm_stats *s)
{
	fprintf(f, "{");
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", fields[i].name,
			(unsigned long long)*(const uint64_t *)((const char *)s + fields[i].off));
	fprintf(f, "}");
}

static void site_name(struct report *r, const struct vt_site_row *s, char *buf, size_t len)
{
	struct proc *p = find(r, s->pid);

	maps_symbol(p ? p->maps : NULL, s->caller, buf, len);
}

#define CHART_H 400.0
#define CHARTS_MAX 16

/* --svg: one chart per process that sent two snapshots or more, the first CHARTS_MAX of them. */
static void write_svg(const struct report *r)
{
	size_t k = 0;
	FILE *f = fopen(r->svg, "w");

	for (size_t i = 0; i < r->nprocs; i++)
		k += r->procs[i].chart.n > 1;
	k = k < CHARTS_MAX ? k : CHARTS_MAX;
	if (f) {
		fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1280\" height=\"%.0f\" font-family=\"sans-serif\">\n"
			   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", CHART_H * (double)(k ? k : 1));
		if (!k)
			fprintf(f, "<text x=\"20\" y=\"30\" font-size=\"15\">no process sent two snapshots</text>\n");
		for (size_t i = 0, row = 0; i < r->nprocs && row < k; i++) {
			char title[128];

			if (r->procs[i].chart.n < 2)
				continue;
			snprintf(title, sizeof(title), "uvmalloc memory of process %d over time (vmtrace)", (int)r->procs[i].pid);
			chart_draw(f, &r->procs[i].chart, 70, CHART_H * (double)row++ + 10, 1140, CHART_H - 10, title);
		}
		fprintf(f, "</svg>\n");
	}
	if (!f || fclose(f))
		fprintf(stderr, "vmtrace: cannot write %s: %s\n", r->svg, strerror(errno));
}

void report_final(struct report *r, const struct vt_hists *h, struct vt_site_row *sites, size_t n)
{
	char name[512];

	if (r->svg)
		write_svg(r);
	if (r->json) {
		fprintf(r->out, "{\"final\":true,\"processes\":[");
		for (size_t i = 0; i < r->nprocs; i++) {
			fprintf(r->out, "%s{\"pid\":%d,\"fragmentation\":%.6f,\"stats\":", i ? "," : "", (int)r->procs[i].pid,
				fragmentation(&r->procs[i].last));
			json_stats(r->out, &r->procs[i].last);
			const uint64_t *sp = r->procs[i].span;
			fprintf(r->out, ",\"span\":{\"bytes\":%llu,\"free_bytes\":%llu,\"free_count\":%llu,\"largest_free\":%llu},"
				"\"slab_free_bytes\":%llu,\"requested_bytes\":%llu,\"handed_bytes\":%llu,\"metadata_bytes\":%llu}",
				(unsigned long long)sp[SPAN_BYTES], (unsigned long long)sp[SPAN_FREE],
				(unsigned long long)sp[SPAN_COUNT], (unsigned long long)sp[SPAN_LARGEST],
				(unsigned long long)sp[SLAB_FREE], (unsigned long long)sp[REQUESTED],
				(unsigned long long)sp[HANDED], (unsigned long long)sp[METADATA]);
		}
		fprintf(r->out, "]");
		json_hist(r->out, "size_hist", h->size);
		json_hist(r->out, "latency_ns_hist", h->latency);
		fprintf(r->out, ",\"sites\":[");
		for (size_t i = 0; i < n; i++) {
			site_name(r, &sites[i], name, sizeof(name));
			fprintf(r->out, "%s{\"pid\":%d,\"api\":%s,\"caller\":\"0x%llx\",\"symbol\":\"%s\",\"bytes\":%llu,\"count\":%llu}",
				i ? "," : "", (int)sites[i].pid, sites[i].api ? "true" : "false",
				(unsigned long long)sites[i].caller, name, (unsigned long long)sites[i].bytes,
				(unsigned long long)sites[i].count);
		}
		fprintf(r->out, "],");
		memset(r->events_base, 0, sizeof(r->events_base));
		json_events(r->out, r->events, r->events_base);
		fprintf(r->out, "}\n");
		return;
	}
	fprintf(r->out, "\nTotals (the library's counters at the last snapshot):\n");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct uvm_stats *s = &r->procs[i].last;
		const uint64_t *sp = r->procs[i].span;
		static const uint64_t none[VT_SPAN_WORDS];
		double all_time = rounding(sp, none);

		fprintf(r->out,
			"  pid %d: %llu objects and %llu areas allocated, %llu and %llu freed; %llu purges (%llu MiB back); "
			"in the committed %llu bytes, %llu bytes free in %llu ranges, largest %llu: fragmentation %.3g "
			"(%.3g over the reservation); requested %llu bytes, handed out %llu (rounding %.3g); metadata %llu bytes\n",
			(int)r->procs[i].pid, (unsigned long long)s->small_allocs, (unsigned long long)s->allocs,
			(unsigned long long)s->small_frees, (unsigned long long)s->frees, (unsigned long long)s->purges,
			(unsigned long long)(s->purged_bytes >> 20), (unsigned long long)sp[SPAN_BYTES],
			(unsigned long long)sp[SPAN_FREE], (unsigned long long)sp[SPAN_COUNT], (unsigned long long)sp[SPAN_LARGEST],
			span_fragmentation(sp), fragmentation(s), (unsigned long long)sp[REQUESTED],
			(unsigned long long)sp[HANDED], all_time < 0 ? 0 : all_time, (unsigned long long)sp[METADATA]);
	}
	if (r->events[VT_THP_VERDICT])
		fprintf(r->out, "  huge pages (UVM_THP=auto): %llu verdicts (the first, then each turn), %llu of them that "
			"huge pages do not pay\n", (unsigned long long)r->events[VT_THP_VERDICT],
			(unsigned long long)r->events[VT_THP_SMALL]);
	text_hist(r->out, "Allocation sizes", "B", h->size);
	text_hist(r->out, "Allocation latency, measured by the library", "ns", h->latency);
	fprintf(r->out, "\nTop call sites by sampled bytes:\n");
	for (size_t i = 0; i < n; i++) {
		site_name(r, &sites[i], name, sizeof(name));
		fprintf(r->out, "  %12llu B %9llu calls  pid %d %s%s\n", (unsigned long long)sites[i].bytes,
			(unsigned long long)sites[i].count, (int)sites[i].pid, name, sites[i].api ? " [uvm_v*]" : "");
	}
	if (!n)
		fprintf(r->out, "  (none: sampling is off; vmtrace --sample N)\n");
}
