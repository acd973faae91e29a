/*
 * heap.c - vmtrace --heap's report (heap.h).
 */
#include "heap.h"

#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "sites.h"
#include "target.h"

void heap_start(struct proc *p, uint64_t rate)
{
	struct target t;
	uint64_t now = 0;

	if (p->heap_rate || target_open(&t, p->pid) != T_OK)
		return;
	if (t.d.prof_rate && !target_u64(&t, t.d.prof_rate, &now) && !now && !target_set_prof_rate(&t, rate)) {
		now = rate;
		p->heap_set = true;
	}
	p->heap_rate = now;
	target_close(&t);
}

void heap_stop(struct report *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct target t;

		if (!r->procs[i].heap_set || target_open(&t, r->procs[i].pid) != T_OK)
			continue;
		target_set_prof_rate(&t, 0);
		target_close(&t);
	}
}

/* One outstanding block of a process, as the stacks are grouped: by its stack's hash. */
struct block {
	uint64_t hash, bytes, size;
};

static int by_hash(const void *a, const void *b)
{
	uint64_t x = ((const struct block *)a)->hash, y = ((const struct block *)b)->hash;

	return (x > y) - (x < y);
}

/* Process tgid's outstanding blocks, sorted by stack; *n of them (NULL when out of memory or none). */
static struct block *blocks_of(int blocks_fd, unsigned tgid, size_t *n)
{
	struct vt_block key, next, *prev = NULL;
	struct block *v = NULL;
	size_t cap = 0;

	*n = 0;
	while (!bpf_map_get_next_key(blocks_fd, prev, &next)) {
		struct vt_block_val val;

		key = next;
		prev = &key;
		if (key.tgid != tgid || bpf_map_lookup_elem(blocks_fd, &key, &val) || !val.size)
			continue;
		if (*n == cap) {
			struct block *more = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*more));

			if (!more)
				break;
			v = more;
		}
		v[(*n)++] = (struct block){ val.hash, val.bytes, val.size };
	}
	qsort(v, *n, sizeof(*v), by_hash);
	return v;
}

/* A new stack of p for hash, its frames from the stacks map (none if the BPF side could not copy them). */
static void stack_start(struct hp_profile *p, int stacks_fd, unsigned tgid, uint64_t hash)
{
	struct vt_stack_key key = { .tgid = tgid, .hash = hash };
	struct hp_stack *s = &p->st[p->n++];
	struct vt_stack v;

	s->hash = hash;
	if (!bpf_map_lookup_elem(stacks_fd, &key, &v)) {
		s->depth = v.depth < HP_DEPTH ? v.depth : HP_DEPTH;
		memcpy(s->frames, v.frames, s->depth * sizeof(s->frames[0]));
	}
}

/* Every outstanding block of process tgid into p: one stack per run of equal hashes. */
static void gather(struct hp_profile *p, int blocks_fd, int stacks_fd, unsigned tgid)
{
	size_t n, runs = 0;
	struct block *b = blocks_of(blocks_fd, tgid, &n);

	for (size_t i = 0; i < n; i++)
		runs += !i || b[i].hash != b[i - 1].hash;
	if (n && !(p->st = calloc(runs, sizeof(*p->st))))
		n = 0;
	for (size_t i = 0; i < n; i++) {
		struct hp_stack *s;

		if (!i || b[i].hash != b[i - 1].hash)
			stack_start(p, stacks_fd, tgid, b[i].hash);
		s = &p->st[p->n - 1];
		s->bytes += (double)b[i].bytes;
		s->count += (double)b[i].bytes / (double)b[i].size;
		s->samples++;
	}
	free(b);
}

static void frame_name(void *maps, uint64_t ip, char *buf, size_t len) { maps_frame(maps, ip, buf, len); }

void heap_report(struct report *r, int blocks_fd, int stacks_fd, int top)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc *pr = &r->procs[i];
		struct hp_profile p = { .rate = pr->heap_rate };
		char what[128];

		gather(&p, blocks_fd, stacks_fd, (unsigned)pr->pid);
		if (hp_name(&p, frame_name, pr->maps)) {
			fprintf(stderr, "vmtrace: out of memory for the heap profile of %d\n", (int)pr->pid);
		} else if (r->json) {
			hp_json(r->out, &p, (long)pr->pid, top);
		} else {
			snprintf(what, sizeof(what), "\noutstanding sampled allocations of process %d, made while traced",
				 (int)pr->pid);
			hp_text(r->out, &p, what, top);
		}
		hp_free(&p);
	}
}
