/*
 * snapshot.c - walking the target's trees and lists through
 * process_vm_readv, with the layout the descriptor gives.
 */
#include "snapshot.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procstat.h"

#define RETRIES 2000
#define REGION_RETRIES 100 /* whole snapshots retaken while the target's regions change under them */
#define CHUNK 1024            /* IOV_MAX: the objects one process_vm_readv reads */
#define MAX_AREAS (32u << 20) /* what a reader holds at most, whatever the regions could */
#define MAX_CACHES (1u << 20) /* thread caches */

static int push(struct area **v, size_t *n, size_t *cap, const struct area *a)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		struct area *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = *a;
	return 0;
}

/* The fields of one vmap_area object, copied out of the target into o (the descriptor says they fit). */
static void decode(const struct uvm_descriptor *d, const unsigned char *o, struct area *a)
{
#define FIELD(off, type) (*(const type *)(o + (off)))
	a->start = FIELD(d->va_start, uint64_t);
	a->end = FIELD(d->va_end, uint64_t);
	a->caller = FIELD(d->va_caller, uint64_t);
	a->flags = FIELD(d->va_flags, uint32_t);
	a->live = FIELD(d->va_live, uint32_t) != 0 && FIELD(d->va_live, uint32_t) != d->va_live_parked; /* parked: cached */
	a->node = (a->flags >> d->va_nid_shift) & 0xff;
	a->vnode = 0;
	a->requested = d->va_requested ? FIELD(d->va_requested, uint64_t) : 0;
#undef FIELD
}

const struct region_info *region_holding(const struct snapshot *s, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = s->nregions;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->regions[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nregions && s->regions[lo].base <= start && end <= s->regions[lo].end ? &s->regions[lo] : NULL;
}

/* Why a could not be an area lying in [lo, hi), or NULL when it could. */
static const char *bad_area(const struct target *t, const struct snapshot *s, const struct area *a, uint64_t lo,
			    uint64_t hi)
{
	uint64_t mask = t->d.page_size - 1;

	if (a->start >= a->end || (a->start & mask) || (a->end & mask))
		return "an empty or unaligned area";
	if (a->start < lo || a->end > hi)
		return "an area out of its tree or list order (overlap or cycle)";
	if (!region_holding(s, a->start, a->end))
		return "an area outside every region";
	return NULL;
}

/* A link to a vmap_area (at offset off in it): its object's address, or 0 when it cannot be one. */
static uint64_t object_of(uint64_t link, uint64_t off)
{
	return link >= off && !((link - off) & 7) ? link - off : 0;
}

static enum target_err from_errno(int err)
{
	return err == ESRCH ? T_NO_PROCESS : err == EPERM ? T_PERMISSION : T_TORN;
}

/*
 * All nodes of a tree, a level at a time: one process_vm_readv reads CHUNK
 * objects of a level, so a walk takes about as many syscalls as the tree has
 * levels (and CHUNKs) and fits between a busy target's changes.  Each node
 * carries the range its ancestors leave it (busy and lazy trees are keyed by
 * start address), so sorting the nodes gives the in-order walk.
 */
struct pending {
	uint64_t node, lo, hi;
};

struct level {
	struct pending *v;
	size_t n, cap;
};

static int level_add(struct level *l, uint64_t node, uint64_t lo, uint64_t hi)
{
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : CHUNK;
		struct pending *p = realloc(l->v, c * sizeof(*p));

		if (!p)
			return -1;
		l->v = p;
		l->cap = c;
	}
	l->v[l->n++] = (struct pending){ node, lo, hi };
	return 0;
}

static enum target_err read_chunk(const struct target *t, const struct pending *p, size_t n, unsigned char *buf)
{
	struct iovec local[CHUNK], remote[CHUNK];
	size_t size = t->d.va_size;
	ssize_t got;

	for (size_t i = 0; i < n; i++) {
		local[i] = (struct iovec){ buf + i * size, size };
		remote[i] = (struct iovec){ (void *)(uintptr_t)p[i].node, size };
	}
	got = process_vm_readv(t->pid, local, n, remote, n, 0);
	if (got == (ssize_t)(n * size))
		return T_OK;
	return got < 0 ? from_errno(errno) : T_TORN;
}

struct sink {
	struct area **v;
	size_t *n, *cap;
	unsigned vnode;
	const char *what; /* "busy tree", "lazy tree" */
};

/*
 * The thread-cached areas in the span of a busy tree's entry, [at, end)
 * (version 6): unfiled, in no tree, found one after the other through the
 * page map.  Their thread splits and joins them with no counter to retry
 * on, so each is believed only if it starts where the last ended and ends
 * inside the span; what cannot be read so counts as one cached range.
 */
static int push_span(const struct target *t, const struct snapshot *s, struct sink *out, const struct area *owner,
		     uint64_t end)
{
	static unsigned char obj[512]; /* va_size is at most 512 (target.c) */
	const struct uvm_descriptor *d = &t->d;
	const struct region_info *r = region_holding(s, owner->end, end);
	uint64_t at = owner->end, slot;
	struct area u;

	while (at < end && r && r->map && !target_u64(t, r->map + (at - r->base) / d->page_size * 8, &slot) && slot &&
	       !target_read(t, slot, obj, d->va_size)) {
		decode(d, obj, &u);
		if (u.start != at || u.end <= at || u.end > end || ((u.end - at) & (d->page_size - 1)))
			break;
		u.live = 0;
		u.vnode = owner->vnode;
		if (push(out->v, out->n, out->cap, &u))
			return -1;
		at = u.end;
	}
	u = (struct area){ .start = at, .end = end, .node = owner->node, .vnode = owner->vnode }; /* no kind: a cached range */
	return at < end ? push(out->v, out->n, out->cap, &u) : 0;
}

/* One level's nodes: their areas to out, their children to next. */
static enum target_err walk_level(const struct target *t, const struct snapshot *s, const struct level *cur,
				  struct level *next, struct sink *out)
{
	static unsigned char buf[CHUNK * 512]; /* va_size is at most 512 (target.c) */
	const struct uvm_descriptor *d = &t->d;
	enum target_err e;

	for (size_t i = 0; i < cur->n; i += CHUNK) {
		size_t k = cur->n - i < CHUNK ? cur->n - i : CHUNK;

		if ((e = read_chunk(t, cur->v + i, k, buf)))
			return e == T_TORN ? target_corrupt("%s: a node that cannot be read", out->what) : e;
		for (size_t j = 0; j < k; j++) {
			const unsigned char *o = buf + j * d->va_size;
			const struct pending *p = &cur->v[i + j];
			uint64_t left = *(const uint64_t *)(o + d->va_left), right = *(const uint64_t *)(o + d->va_right);
			const char *bad;
			struct area a, span;

			decode(d, o, &a);
			a.vnode = out->vnode;
			/* The entry's range: the area and its span, the thread-cached areas its thread split off it (version 6). */
			span = a;
			if (d->va_span_end && *(const uint64_t *)(o + d->va_span_end) > a.end)
				span.end = *(const uint64_t *)(o + d->va_span_end);
			if ((bad = bad_area(t, s, &span, p->lo, p->hi)) || (bad = bad_area(t, s, &a, p->lo, p->hi)))
				return target_corrupt("%s: %s at 0x%llx", out->what, bad, (unsigned long long)p->node);
			if ((left && !object_of(left, d->va_rb)) || (right && !object_of(right, d->va_rb)))
				return target_corrupt("%s: a misaligned link at 0x%llx", out->what, (unsigned long long)p->node);
			if (push(out->v, out->n, out->cap, &a) || (span.end > a.end && push_span(t, s, out, &a, span.end)) ||
			    (left && level_add(next, left - d->va_rb, p->lo, a.start)) ||
			    (right && level_add(next, right - d->va_rb, span.end, p->hi)))
				return target_corrupt("%s: more areas than vminfo can hold", out->what);
		}
	}
	return T_OK;
}

static int by_start(const void *x, const void *y)
{
	const struct area *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* A red-black tree of n nodes is at most 2 log2(n + 1) deep. */
static unsigned depth_limit(uint64_t n)
{
	unsigned bits = 1;

	while (n >>= 1)
		bits++;
	return 2 * bits + 2;
}

static enum target_err walk(const struct target *t, const struct snapshot *s, uint64_t root, struct sink *out)
{
	struct level cur = { 0 }, next = { 0 }, swap;
	size_t mark = *out->n;
	unsigned depth = 0, limit = depth_limit(s->max_areas);
	enum target_err e = T_OK;

	if (root && !object_of(root, t->d.va_rb))
		e = target_corrupt("%s: a misaligned root", out->what);
	else if (root && level_add(&cur, root - t->d.va_rb, 0, UINT64_MAX))
		e = target_corrupt("%s: more areas than vminfo can hold", out->what);
	while (!e && cur.n) {
		if (++depth > limit || *out->n - mark + cur.n > s->max_areas) {
			e = target_corrupt("%s: deeper or larger than the regions allow", out->what);
			break;
		}
		next.n = 0;
		e = walk_level(t, s, &cur, &next, out);
		swap = cur, cur = next, next = swap;
	}
	free(cur.v);
	free(next.v);
	if (!e)
		qsort(*out->v + mark, *out->n - mark, sizeof(struct area), by_start);
	return e;
}

/*
 * Retry read until it meets two equal, even values of the counter at
 * seq_addr.  What read found wrong stands (T_CORRUPT) only when the counter
 * did not move; a counter that stays at one odd value is a writer that
 * never finishes.
 */
static enum target_err consistent(const struct target *t, uint64_t seq_addr, const char *what,
				  enum target_err (*read)(const struct target *, const struct snapshot *, uint64_t, void *),
				  const struct snapshot *s, uint64_t arg, void *out, void (*reset)(void *))
{
	uint64_t first = 0;
	int stuck = 1;

	for (int try = 0; try < RETRIES; try++) {
		uint64_t seq1, seq2;
		enum target_err e = target_u64(t, seq_addr, &seq1);

		if (e)
			return e == T_TORN ? target_corrupt("%s: its sequence counter cannot be read", what) : e;
		if (!try)
			first = seq1;
		stuck &= seq1 == first;
		if (!(seq1 & 1)) {
			e = read(t, s, arg, out);
			if (e == T_NO_PROCESS || e == T_PERMISSION)
				return e;
			if (!target_u64(t, seq_addr, &seq2) && seq1 == seq2)
				return e;
		}
		reset(out);
		usleep(try < 10 ? 0 : 100);
	}
	return stuck && (first & 1) ? target_corrupt("%s: its sequence counter stays odd", what) : T_TORN;
}

struct tree_read {
	struct sink sink;
	size_t mark;
};

static enum target_err tree_once(const struct target *t, const struct snapshot *s, uint64_t root_addr, void *arg)
{
	struct tree_read *r = arg;
	uint64_t root;
	enum target_err e = target_u64(t, root_addr, &root);

	if (e)
		return e == T_TORN ? target_corrupt("%s: its root cannot be read", r->sink.what) : e;
	return walk(t, s, root, &r->sink);
}

static void tree_reset(void *arg)
{
	struct tree_read *r = arg;

	*r->sink.n = r->mark;
}

static enum target_err read_tree(const struct target *t, const struct snapshot *s, uint64_t root_addr,
				 uint64_t seq_addr, struct sink *out)
{
	struct tree_read r = { *out, *out->n };

	return consistent(t, seq_addr, out->what, tree_once, s, root_addr, &r, tree_reset);
}

struct free_read {
	struct snapshot *s;
	size_t mark;
};

/* The address-ordered free list of one NUMA node: each range must start at or after the last one's end. */
static enum target_err free_once(const struct target *t, const struct snapshot *s, uint64_t space, void *arg)
{
	struct free_read *r = arg;
	const struct uvm_descriptor *d = &t->d;
	uint64_t head = space + d->space_list, next, prev_end = 0;
	unsigned char buf[512];
	enum target_err e = target_u64(t, head, &next);

	while (!e && next != head) {
		uint64_t va = object_of(next, d->va_list);
		const char *bad;
		struct area a;

		if (!va)
			return target_corrupt("free list: a misaligned link 0x%llx", (unsigned long long)next);
		if (s->nfree - r->mark >= s->max_areas)
			return target_corrupt("free list: longer than the regions allow");
		if ((e = target_read(t, va, buf, d->va_size)))
			break;
		decode(d, buf, &a);
		next = *(const uint64_t *)(buf + d->va_list);
		if ((bad = bad_area(t, s, &a, prev_end, UINT64_MAX)))
			return target_corrupt("free list: %s at 0x%llx", bad, (unsigned long long)va);
		prev_end = a.end;
		if (push(&r->s->free, &r->s->nfree, &r->s->cap_free, &a))
			return target_corrupt("free list: more ranges than vminfo can hold");
	}
	return e == T_TORN ? target_corrupt("free list: an entry that cannot be read") : e;
}

static void free_reset(void *arg)
{
	struct free_read *r = arg;

	r->s->nfree = r->mark;
}

static enum target_err read_free(const struct target *t, uint64_t space, struct snapshot *s)
{
	struct free_read r = { s, s->nfree };

	return consistent(t, space + t->d.space_seq, "free list", free_once, s, space, &r, free_reset);
}

static int by_base(const void *x, const void *y)
{
	const struct region_info *a = x, *b = y;

	return a->base < b->base ? -1 : a->base > b->base;
}

/* The regions in use, sorted and checked: aligned, disjoint, each of a known NUMA node. */
static enum target_err read_regions(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t n, total = 0, mask = d->page_size - 1;
	unsigned char *buf;
	enum target_err e = target_u64(t, d->nr_regions, &n);

	if (e)
		return e == T_TORN ? target_corrupt("nr_regions cannot be read") : e;
	n &= 0xffffffffu; /* an int */
	if (n > d->max_regions)
		return target_corrupt("nr_regions %llu above max_regions", (unsigned long long)n);
	buf = malloc(n * d->region_size + 1);
	s->regions = calloc(n + 1, sizeof(*s->regions));
	if (!buf || !s->regions) {
		free(buf);
		return target_corrupt("no memory for %llu regions", (unsigned long long)n);
	}
	if ((e = target_read(t, d->regions, buf, n * d->region_size))) {
		free(buf);
		return e == T_TORN ? target_corrupt("the regions cannot be read") : e;
	}
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *o = buf + i * d->region_size;
		struct region_info r = { *(const uint64_t *)(o + d->region_base), *(const uint64_t *)(o + d->region_end),
					 *(const uint64_t *)(o + d->region_committed),
					 d->region_map ? *(const uint64_t *)(o + d->region_map) : 0,
					 target_has_slabs(d) ? *(const uint64_t *)(o + d->region_chunks) : 0,
					 *(const uint32_t *)(o + d->region_nid) };

		if (r.base == r.end)
			continue; /* released */
		if (r.base > r.end || (r.base & mask) || (r.end & mask) || r.committed < r.base || r.committed > r.end ||
		    r.nid >= d->nr_spaces) {
			free(buf);
			return target_corrupt("region %llu: bounds, commit mark or node out of range", (unsigned long long)i);
		}
		s->regions[s->nregions++] = r;
	}
	free(buf);
	qsort(s->regions, s->nregions, sizeof(*s->regions), by_base);
	for (unsigned i = 0; i < s->nregions; i++) {
		if (i && s->regions[i].base < s->regions[i - 1].end)
			return target_corrupt("regions %u and %u overlap", i - 1, i);
		total += (s->regions[i].end - s->regions[i].base) / d->page_size;
	}
	s->max_areas = total < MAX_AREAS ? total : MAX_AREAS;
	return T_OK;
}

/*
 * Brent's cycle finding: a list that comes back to an entry it passed meets
 * the saved entry within twice the cycle's length.
 */
struct cycle {
	uint64_t saved;
	size_t power, steps;
};

static int cycle_step(struct cycle *c, uint64_t p)
{
	if (p == c->saved)
		return 1;
	if (++c->steps == c->power) {
		c->saved = p;
		c->power *= 2;
		c->steps = 0;
	}
	return 0;
}

/*
 * Per-thread counters: the live caches' plus what exited threads folded in.
 * Approximate while threads come and go: the list has no sequence counter,
 * so an entry that cannot be read ends the walk; a cycle is corruption.
 */
/* Heap p's hands (its freed objects kept per class) onto s->hand; an unreadable one is left out. */
static void read_hand(const struct target *t, struct snapshot *s, uint64_t p)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t top[256], row[256];

	if (!d->hand_size || target_read(t, p + d->heap_hand_top, top, d->hand_classes * sizeof(top[0])))
		return;
	for (uint64_t c = 0; c < d->hand_classes; c++) {
		uint64_t first = p + d->heap_hand + c * d->hand_size * 8, k = (top[c] - first) / 8;

		k = k < d->hand_size ? k : d->hand_size; /* a torn or stale pointer: bounded */
		if (!k || target_read(t, first, row, k * 8))
			continue;
		if (s->nhand + k > s->cap_hand) {
			size_t cap = 2 * s->cap_hand + d->hand_classes * d->hand_size; /* room for a heap's hands more */
			uint64_t *v = realloc(s->hand, cap * sizeof(*v));

			if (!v)
				return;
			s->hand = v;
			s->cap_hand = cap;
		}
		memcpy(s->hand + s->nhand, row, k * 8);
		s->nhand += k;
	}
}

/* Whether the descriptor's layout of a heap's cache lists fits in a node of at most max bytes (a corrupt one is left out). */
static bool bins_described(const struct uvm_descriptor *d, uint64_t max)
{
	uint64_t size = d->pcp_list_size;

	return d->pcp_node_size && d->pcp_node_size <= max && size >= 8 && size <= d->pcp_node_size &&
	       d->pcp_lists_per_node <= d->pcp_node_size / size && d->pcp_node_lists <= d->pcp_node_size &&
	       d->pcp_lists_per_node * size <= d->pcp_node_size - d->pcp_node_lists && d->pcp_list_pops <= size - 8 &&
	       d->pcp_list_cap <= size - 8 && d->pcp_list_spent <= size - 8 && d->pcp_list_parks <= size - 8 &&
	       d->pcp_nr_nodes <= 1024;
}

/*
 * Heap p's bins' in-line hits and frees (pcp_list_pops and pcp_list_parks
 * less its parked area's; pcp_list_cap plus pcp_list_spent and
 * pcp_list_parks) onto s's counters; an unreadable node is left out.
 */
static void read_bins(const struct target *t, struct snapshot *s, uint64_t p)
{
	const struct uvm_descriptor *d = &t->d;
	unsigned char node[16384];
	uint64_t parked = 0, parked_list = 0;

	if (!bins_described(d, sizeof(node)))
		return;
	if (target_u64(t, p + d->pcp_parked, &parked) || (parked && target_u64(t, p + d->pcp_parked_list, &parked_list)))
		parked = 0;
	for (uint64_t n = 0; n < d->pcp_nr_nodes; n++) {
		uint64_t at = p + d->pcp_nodes + n * d->pcp_node_size;

		if (target_read(t, at, node, d->pcp_node_size))
			continue;
		for (uint64_t i = 0; i < d->pcp_lists_per_node; i++) {
			uint64_t off = d->pcp_node_lists + i * d->pcp_list_size, pops, cap, spent, parks, here;
			const unsigned char *l = node + off;

			memcpy(&pops, l + d->pcp_list_pops, 8);
			memcpy(&cap, l + d->pcp_list_cap, 8);
			memcpy(&spent, l + d->pcp_list_spent, 8);
			memcpy(&parks, l + d->pcp_list_parks, 8);
			here = parked && parks && parked_list == at + off;
			s->cache_hits += pops + parks - here;
			s->allocs += pops + parks - here;
			s->frees += cap + spent + parks;
		}
	}
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static enum target_err read_caches(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t next, v;
	struct cycle c = { d->pcp_live, 1, 0 };
	enum target_err e;

	if ((e = target_u64(t, d->pcp_exited_allocs, &s->allocs)) || (e = target_u64(t, d->pcp_exited_frees, &s->frees)) ||
	    (e = target_u64(t, d->pcp_exited_hits, &s->cache_hits)) ||
	    (e = target_u64(t, d->pcp_exited_misses, &s->cache_misses)) || (e = target_u64(t, d->pcp_live, &next)))
		return e == T_TORN ? target_corrupt("the thread caches' counters cannot be read") : e;
	/* Those of threads with no heap (one that only frees, or one past its exit); a library without the fields has 0. */
	if (d->pcp_stray_allocs && !target_u64(t, d->pcp_stray_allocs, &v))
		s->allocs += v;
	if (d->pcp_stray_frees && !target_u64(t, d->pcp_stray_frees, &v))
		s->frees += v;
	for (size_t n = 0; next != d->pcp_live; n++) {
		uint64_t p = next - d->pcp_link;

		if (n == MAX_CACHES || (n && cycle_step(&c, next)))
			return target_corrupt("the list of thread caches loops or has over %u entries", MAX_CACHES);
		if ((next & 7) || target_u64(t, p + d->pcp_allocs, &v))
			break;
		s->allocs += v; /* a thread's allocs are those its cache missed, its hits are the rest */
		if (!target_u64(t, p + d->pcp_frees, &v))
			s->frees += v;
		if (!target_u64(t, p + d->pcp_hits, &v)) {
			s->cache_hits += v;
			s->allocs += v;
		}
		if (!target_u64(t, p + d->pcp_misses, &v))
			s->cache_misses += v;
		read_bins(t, s, p);
		read_hand(t, s, p);
		if (target_u64(t, next, &next))
			break;
	}
	if (s->nhand)
		qsort(s->hand, s->nhand, sizeof(*s->hand), by_u64);
	return T_OK;
}

/* Objects of s->hand in [start, end). */
static uint64_t in_hand(const struct snapshot *s, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = s->nhand, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->hand[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < s->nhand && s->hand[lo] < end)
		lo++;
	return lo - first;
}

static enum target_err read_counters(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	enum target_err e;

	if ((e = target_u64(t, d->os_mmap, &s->mmap_calls)) || (e = target_u64(t, d->os_mprotect, &s->mprotect_calls)) ||
	    (e = target_u64(t, d->os_madvise, &s->madvise_calls)) || (e = target_u64(t, d->os_mremap, &s->mremap_calls)) ||
	    (e = target_u64(t, d->os_other, &s->other_calls)) || (e = target_u64(t, d->purges, &s->purges)) ||
	    (e = target_u64(t, d->purged_bytes, &s->purged_bytes)) || (e = target_u64(t, d->slabs, &s->slabs)))
		return e == T_TORN ? target_corrupt("a counter cannot be read") : e;
	if (d->thp_mode &&
	    ((e = target_u64(t, d->thp_huge_ns, &s->thp_huge_ns)) || (e = target_u64(t, d->thp_small_ns, &s->thp_small_ns)) ||
	     (e = target_u64(t, d->thp_samples, &s->thp_samples)) || (e = target_u64(t, d->thp_declined, &s->thp_declined)) ||
	     (e = target_u64(t, d->thp_small, &s->thp_small))))
		return e == T_TORN ? target_corrupt("the huge-page verdict cannot be read") : e;
	s->thp_mode = (unsigned)d->thp_mode;
	return read_caches(t, s);
}

/* The class of object size size, added in size order when new; NULL when all SNAP_CLASSES are taken. */
static struct slab_class *class_of(struct snapshot *s, uint64_t size)
{
	unsigned i = 0;

	while (i < s->nclasses && s->classes[i].size < size)
		i++;
	if (i < s->nclasses && s->classes[i].size == size)
		return &s->classes[i];
	if (s->nclasses == SNAP_CLASSES)
		return NULL;
	memmove(&s->classes[i + 1], &s->classes[i], (s->nclasses - i) * sizeof(s->classes[0]));
	memset(&s->classes[i], 0, sizeof(s->classes[0]));
	s->classes[i].size = size;
	s->nclasses++;
	return &s->classes[i];
}

/*
 * One slab's header into its class.  Its words are read together but its
 * owner may be changing them: each is bounded by what the slab can hold,
 * and a header that breaks a bound is counted unread, never believed.
 */
static void read_slab(const struct target *t, struct snapshot *s, const struct area *a)
{
	const struct uvm_descriptor *d = &t->d;
	unsigned char h[SLAB_HEADER_MAX];
	uint32_t used, carved, room, size;
	uint64_t remote, objs, live, waiting, held;
	bool orphan;
	struct slab_class *k;
	const struct region_info *r = region_holding(s, a->start, a->end);

#define FIELD(off, type) (*(const type *)(h + (off)))
	if (!r || a->end - a->start < d->slab_size ||
	    target_read(t, r->chunks + (a->start >> d->chunk_shift) * d->chunk_bytes, h, d->slab_header)) {
		s->slabs_unread++;
		return;
	}
	used = FIELD(d->slab_used, uint32_t);
	carved = FIELD(d->slab_carved, uint32_t);
	room = FIELD(d->slab_room, uint32_t);
	size = FIELD(d->slab_objsize, uint32_t);
	remote = FIELD(d->slab_remote, uint64_t);
	orphan = d->slab_owner && !FIELD(d->slab_owner, uint64_t); /* no owner: its thread exited */
#undef FIELD
	if (size < 16 || size % 16 || size > d->slab_size || !room || (uint64_t)room * size > d->slab_size || carved > room ||
	    !(k = class_of(s, size))) {
		s->slabs_unread++;
		return;
	}
	objs = room;
	waiting = d->slab_map_size && size >= d->slab_map_size ? (uint64_t)__builtin_popcountll(remote)
							       : remote >> d->slab_remote_shift;
	held = in_hand(s, a->start, a->start + d->slab_size);
	live = used > waiting + held ? used - waiting - held : 0;
	if (live > carved)
		live = carved;
	/* Counted out of the free objects, each bounded by what is left of them: a racing read can break the sum. */
	waiting = waiting < carved - live ? waiting : carved - live;
	held = held < carved - live - waiting ? held : carved - live - waiting;
	k->slabs++;
	k->orphans += orphan;
	k->live += live;
	k->free += carved - live;
	k->waiting += waiting;
	k->in_hand += held;
	k->never_used += objs - carved;
	k->occupancy[live ? 1 + live * 4 / objs - (live == objs) : 0]++;
	s->slab_live_bytes += live * size;
	s->slab_free_bytes += (carved - live) * size;
	s->slab_meta_bytes += d->slab_size - room * size;
}

static void read_slabs(const struct target *t, struct snapshot *s)
{
	if (!target_has_slabs(&t->d))
		return;
	s->have_orphans = t->d.slab_owner != 0;
	for (size_t i = 0; i < s->nbusy; i++)
		if (s->busy[i].live && (s->busy[i].flags & t->d.va_flag_slab))
			read_slab(t, s, &s->busy[i]);
}

/* RSS and AnonHugePages of the mappings inside the regions. */
static void read_smaps(pid_t pid, struct snapshot *s)
{
	char path[64], line[512];
	FILE *f;
	int in = 0;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		long kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = 0;
			for (unsigned i = 0; i < s->nregions; i++)
				in |= lo >= s->regions[i].base && hi <= s->regions[i].end;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			s->rss_kb += (uint64_t)kb;
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			s->anon_huge_kb += (uint64_t)kb;
	}
	fclose(f);
}

/* Resident pages holding any of [addr, addr + len) in pid, from /proc/PID/pagemap (bit 63: present); -1 when it cannot be read. */
static int64_t resident_pages(int fd, uint64_t addr, uint64_t len, uint64_t page)
{
	uint64_t entry[512], first = addr / page, n = (addr % page + len + page - 1) / page;
	int64_t pages = 0;

	for (uint64_t done = 0; done < n;) {
		size_t want = n - done < 512 ? (size_t)(n - done) : 512;
		ssize_t got = pread(fd, entry, want * sizeof(entry[0]), (off_t)((first + done) * sizeof(entry[0])));

		if (got <= 0 || got % (ssize_t)sizeof(entry[0]))
			return -1;
		for (ssize_t i = 0; i < got / (ssize_t)sizeof(entry[0]); i++)
			pages += entry[i] >> 63;
		done += (uint64_t)got / sizeof(entry[0]);
	}
	return pages;
}

/*
 * The library's metadata, as uvm_frag_stats counts it: heaps and area
 * objects from their counters, and the page maps' and chunk tables'
 * resident pages below each committed top (no slot or record above it is
 * ever written).
 */
static void read_metadata(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t heaps, objects, bytes;
	char path[64];
	int fd;

	if (!d->heap_nr || !d->meta_carved || !d->region_map || target_u64(t, d->heap_nr, &heaps) ||
	    target_u64(t, d->meta_carved, &objects))
		return;
	bytes = heaps * d->heap_bytes + objects * d->meta_obj_size;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)t->pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return;
	for (unsigned i = 0; i < s->nregions; i++) {
		const struct region_info *r = &s->regions[i];
		int64_t pages = resident_pages(fd, r->map, (r->committed - r->base) / d->page_size * 8, d->page_size);

		if (pages >= 0 && r->chunks) { /* and the chunk table's records below the committed top (the slab headers) */
			uint64_t lo = r->chunks + (r->base >> d->chunk_shift) * d->chunk_bytes;
			uint64_t hi = r->chunks + ((r->committed >> d->chunk_shift) + 1) * d->chunk_bytes;
			int64_t more = resident_pages(fd, lo, hi - lo, d->page_size);

			pages = more < 0 ? more : pages + more;
		}
		if (pages < 0) {
			close(fd);
			return;
		}
		bytes += (uint64_t)pages * d->page_size;
	}
	close(fd);
	s->metadata_bytes = bytes;
	s->have_metadata = 1;
}

/* Live user areas' usable bytes over their requested sizes. */
static void count_rounding(const struct uvm_descriptor *d, struct snapshot *s)
{
	if (!d->va_requested)
		return;
	for (size_t i = 0; i < s->nbusy; i++) {
		const struct area *a = &s->busy[i];
		uint64_t usable = a->end - a->start - d->page_size;

		if (a->live && !(a->flags & d->va_flag_slab) && a->requested < usable)
			s->rounding_bytes += usable - a->requested;
	}
	s->have_rounding = 1;
}

static enum target_err snapshot_once(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	struct sink busy = { &s->busy, &s->nbusy, &s->cap_busy, 0, "busy tree" };
	struct sink lazy = { &s->lazy, &s->nlazy, &s->cap_lazy, 0, "lazy tree" };
	enum target_err e;

	if ((e = read_regions(t, s)))
		return e;
	for (uint64_t i = 0; i < d->nr_nodes; i++) {
		uint64_t node = d->nodes + i * d->node_size, v;

		busy.vnode = lazy.vnode = (unsigned)i;
		if ((e = read_tree(t, s, node + d->busy_root, node + d->busy_seq, &busy)) ||
		    (e = read_tree(t, s, node + d->lazy_root, node + d->lazy_seq, &lazy)))
			return e;
		if (!target_u64(t, node + d->pool_bytes, &v))
			s->pooled_bytes += v;
		if (!target_u64(t, node + d->pool_nr, &v))
			s->pooled_count += v;
	}
	for (uint64_t i = 0; i < d->nr_spaces; i++)
		if ((e = read_free(t, d->spaces + i * d->space_size, s)))
			return e;
	if ((e = read_counters(t, s)))
		return e;
	read_slabs(t, s);
	read_smaps(t->pid, s);
	proc_faults(t->pid, &s->minor_faults, &s->major_faults);
	read_metadata(t, s);
	count_rounding(d, s);
	return T_OK;
}

void snapshot_free(struct snapshot *s)
{
	free(s->busy);
	free(s->lazy);
	free(s->free);
	free(s->regions);
	free(s->hand);
	memset(s, 0, sizeof(*s));
}

/* Whether the target's regions are no longer those s read: one was added or released since. */
static bool regions_moved(const struct target *t, const struct snapshot *s)
{
	struct snapshot now = { 0 };
	bool moved = read_regions(t, &now) || now.nregions != s->nregions;

	for (unsigned i = 0; !moved && i < s->nregions; i++)
		moved = now.regions[i].base != s->regions[i].base || now.regions[i].end != s->regions[i].end;
	free(now.regions);
	return moved;
}

/*
 * The regions are read once, before the trees, and have no sequence
 * counter: a program that grows while it is read has areas in a region
 * the snapshot does not know, which reads as corruption.  So an
 * inconsistency stands only when the regions stayed as they were.
 */
enum target_err snapshot_take(const struct target *t, struct snapshot *s)
{
	for (int try = 0;; try++) {
		enum target_err e = snapshot_once(t, s);

		if (e != T_CORRUPT || try == REGION_RETRIES || !regions_moved(t, s))
			return e;
		snapshot_free(s);
	}
}
