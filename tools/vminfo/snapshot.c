/*
 * snapshot.c - walking the target's trees and lists through
 * process_vm_readv, with the layout the descriptor gives.
 */
#include "snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#define RETRIES 2000
#define MAX_DEPTH 128
#define MAX_ITEMS (64u << 20)

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

/* The fields of one vmap_area object, copied out of the target into o. */
static void decode(const struct uvm_descriptor *d, const unsigned char *o, struct area *a)
{
#define FIELD(off, type) (*(const type *)(o + (off)))
	a->start = FIELD(d->va_start, uint64_t);
	a->end = FIELD(d->va_end, uint64_t);
	a->caller = FIELD(d->va_caller, uint64_t);
	a->flags = FIELD(d->va_flags, uint32_t);
	a->live = FIELD(d->va_live, uint32_t) != 0;
	a->node = (a->flags >> d->va_nid_shift) & 0xff;
	a->vnode = 0;
#undef FIELD
}

/* One vmap_area object of the target, decoded, with its list link. */
static enum target_err read_area(const struct target *t, uint64_t va, struct area *a, uint64_t *next)
{
	unsigned char buf[512];
	enum target_err e;

	if (t->d.va_size > sizeof(buf))
		return T_VERSION;
	e = target_read(t, va, buf, t->d.va_size);
	if (e)
		return e;
	decode(&t->d, buf, a);
	*next = *(const uint64_t *)(buf + t->d.va_list);
	return T_OK;
}

struct sink {
	struct area **v;
	size_t *n, *cap;
	unsigned vnode;
};

/*
 * All nodes of a tree, a level at a time: one process_vm_readv reads a whole
 * level (up to IOV_MAX objects), so a walk takes about as many syscalls as
 * the tree is deep and fits between a busy target's changes.  Busy and lazy
 * trees are keyed by start address, so sorting the nodes gives the in-order
 * walk.
 */
#define LEVEL_MAX 1024

static int by_start(const void *x, const void *y)
{
	const struct area *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

static enum target_err read_level(const struct target *t, const uint64_t *nodes, size_t n, unsigned char *buf)
{
	struct iovec local[LEVEL_MAX], remote[LEVEL_MAX];
	size_t size = t->d.va_size;
	ssize_t got;

	for (size_t i = 0; i < n; i++) {
		local[i] = (struct iovec){ buf + i * size, size };
		remote[i] = (struct iovec){ (void *)(uintptr_t)(nodes[i] - t->d.va_rb), size };
	}
	got = process_vm_readv(t->pid, local, n, remote, n, 0);
	if (got == (ssize_t)(n * size))
		return T_OK;
	return got < 0 && (errno == ESRCH || errno == EPERM) ? (errno == ESRCH ? T_NO_PROCESS : T_PERMISSION) : T_TORN;
}

static enum target_err walk(const struct target *t, uint64_t root, struct sink *out, size_t budget)
{
	static uint64_t level[LEVEL_MAX], next[LEVEL_MAX];
	static unsigned char buf[LEVEL_MAX * 512];
	size_t n = root ? 1 : 0, mark = *out->n;
	enum target_err e;

	if (t->d.va_size > 512)
		return T_VERSION;
	level[0] = root;
	for (unsigned depth = 0; n; depth++) {
		size_t m = 0;

		if (depth > MAX_DEPTH || n > budget)
			return T_TORN;
		budget -= n;
		if ((e = read_level(t, level, n, buf)))
			return e;
		for (size_t i = 0; i < n; i++) {
			const unsigned char *o = buf + i * t->d.va_size;
			uint64_t kids[2] = { *(const uint64_t *)(o + t->d.va_left), *(const uint64_t *)(o + t->d.va_right) };
			struct area a;

			decode(&t->d, o, &a);
			a.vnode = out->vnode;
			if (push(out->v, out->n, out->cap, &a))
				return T_TORN;
			for (int k = 0; k < 2; k++)
				if (kids[k]) {
					if (m == LEVEL_MAX)
						return T_TORN;
					next[m++] = kids[k];
				}
		}
		memcpy(level, next, m * sizeof(level[0]));
		n = m;
	}
	qsort(*out->v + mark, *out->n - mark, sizeof(struct area), by_start);
	return T_OK;
}

/*
 * How many items a walk may visit: what the structure's own counter says,
 * with room for changes.  A walk that raced a writer can meet links that no
 * longer make a tree; the budget ends it, and the sequence check discards it.
 */
static size_t budget_of(const struct target *t, uint64_t count_addr)
{
	uint64_t n;

	if (target_u64(t, count_addr, &n) || n > MAX_ITEMS)
		return MAX_ITEMS;
	return (size_t)n * 2 + 64;
}

/* A whole tree between two equal, even sequence values. */
static enum target_err read_tree(const struct target *t, uint64_t root_addr, uint64_t seq_addr, uint64_t nr_addr,
				 struct sink *out)
{
	size_t mark = *out->n;

	for (int try = 0; try < RETRIES; try++) {
		uint64_t seq1, seq2, root;
		size_t budget = budget_of(t, nr_addr);
		enum target_err e = target_u64(t, seq_addr, &seq1);

		if (!e && !(seq1 & 1))
			e = target_u64(t, root_addr, &root);
		if (!e && !(seq1 & 1))
			e = walk(t, root, out, budget);
		if (e == T_NO_PROCESS || e == T_PERMISSION || e == T_VERSION)
			return e;
		if (!e && !(seq1 & 1) && !target_u64(t, seq_addr, &seq2) && seq1 == seq2)
			return T_OK;
		*out->n = mark;
		usleep(try < 10 ? 0 : 100);
	}
	return T_TORN;
}

/* The free list of one NUMA node, also between equal sequence values. */
static enum target_err read_free(const struct target *t, uint64_t space, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t head = space + d->space_list;
	size_t mark = s->nfree;

	for (int try = 0; try < RETRIES; try++) {
		uint64_t seq1, seq2, next;
		size_t budget = budget_of(t, space + d->space_count);
		enum target_err e = target_u64(t, space + d->space_seq, &seq1);

		if (!e && !(seq1 & 1))
			e = target_u64(t, head, &next);
		while (!e && !(seq1 & 1) && next != head) {
			struct area a;

			if (!budget--) {
				e = T_TORN;
				break;
			}
			e = read_area(t, next - d->va_list, &a, &next);
			if (!e && push(&s->free, &s->nfree, &s->cap_free, &a))
				e = T_TORN;
		}
		if (e == T_NO_PROCESS || e == T_PERMISSION)
			return e;
		if (!e && !(seq1 & 1) && !target_u64(t, space + d->space_seq, &seq2) && seq1 == seq2)
			return T_OK;
		s->nfree = mark;
		usleep(try < 10 ? 0 : 100);
	}
	return T_TORN;
}

static enum target_err read_regions(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t n;
	enum target_err e = target_u64(t, d->nr_regions, &n);

	n &= 0xffffffffu; /* an int */
	if (e)
		return e;
	if (n > d->max_regions || n > 64)
		return T_TORN;
	for (unsigned i = 0; i < n; i++) {
		uint64_t r = d->regions + i * d->region_size, nid;

		if ((e = target_u64(t, r + d->region_base, &s->regions[i].base)) ||
		    (e = target_u64(t, r + d->region_end, &s->regions[i].end)) ||
		    (e = target_u64(t, r + d->region_committed, &s->regions[i].committed)) ||
		    (e = target_u64(t, r + d->region_nid, &nid)))
			return e;
		s->regions[i].nid = (unsigned)(nid & 0xffffffffu);
	}
	s->nregions = (unsigned)n;
	return T_OK;
}

/* Per-thread counters: the live caches' plus what exited threads folded in.  Approximate while threads come and go. */
static enum target_err read_caches(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t next, v;
	size_t budget = 1 << 20;
	enum target_err e;

	if ((e = target_u64(t, d->pcp_exited_allocs, &s->allocs)) || (e = target_u64(t, d->pcp_exited_frees, &s->frees)) ||
	    (e = target_u64(t, d->pcp_exited_hits, &s->cache_hits)) ||
	    (e = target_u64(t, d->pcp_exited_misses, &s->cache_misses)) || (e = target_u64(t, d->pcp_live, &next)))
		return e;
	while (next != d->pcp_live && budget--) {
		uint64_t p = next - d->pcp_link;

		if (target_u64(t, p + d->pcp_allocs, &v))
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
		if (target_u64(t, next, &next))
			break;
	}
	return T_OK;
}

static enum target_err read_counters(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	enum target_err e;

	if ((e = target_u64(t, d->os_mmap, &s->mmap_calls)) || (e = target_u64(t, d->os_mprotect, &s->mprotect_calls)) ||
	    (e = target_u64(t, d->os_madvise, &s->madvise_calls)) || (e = target_u64(t, d->os_mremap, &s->mremap_calls)) ||
	    (e = target_u64(t, d->os_other, &s->other_calls)) || (e = target_u64(t, d->purges, &s->purges)) ||
	    (e = target_u64(t, d->purged_bytes, &s->purged_bytes)) || (e = target_u64(t, d->slabs, &s->slabs)))
		return e;
	return read_caches(t, s);
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

enum target_err snapshot_take(const struct target *t, struct snapshot *s)
{
	const struct uvm_descriptor *d = &t->d;
	struct sink busy = { &s->busy, &s->nbusy, &s->cap_busy, 0 }, lazy = { &s->lazy, &s->nlazy, &s->cap_lazy, 0 };
	enum target_err e;

	if ((e = read_regions(t, s)))
		return e;
	for (uint64_t i = 0; i < d->nr_nodes; i++) {
		uint64_t node = d->nodes + i * d->node_size, v;

		busy.vnode = lazy.vnode = (unsigned)i;
		if ((e = read_tree(t, node + d->busy_root, node + d->busy_seq, node + d->busy_nr, &busy)) ||
		    (e = read_tree(t, node + d->lazy_root, node + d->lazy_seq, node + d->lazy_nr, &lazy)))
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
	read_smaps(t->pid, s);
	return T_OK;
}

void snapshot_free(struct snapshot *s)
{
	free(s->busy);
	free(s->lazy);
	free(s->free);
	memset(s, 0, sizeof(*s));
}
