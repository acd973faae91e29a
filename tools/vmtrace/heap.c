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

/* The stack of (tgid, hash) in p, added when new with its frames from the stacks map; NULL when out of memory. */
static struct hp_stack *stack_of(struct hp_profile *p, size_t *cap, int stacks_fd, unsigned tgid, uint64_t hash)
{
	struct vt_stack_key key = { .tgid = tgid, .hash = hash };
	struct vt_stack v;
	struct hp_stack *s;

	for (size_t i = 0; i < p->n; i++)
		if (p->st[i].hash == hash)
			return &p->st[i];
	if (p->n == *cap) {
		struct hp_stack *more = realloc(p->st, (*cap = *cap ? 2 * *cap : 16) * sizeof(*more));

		if (!more)
			return NULL;
		p->st = more;
	}
	s = &p->st[p->n++];
	memset(s, 0, sizeof(*s));
	s->hash = hash;
	if (!bpf_map_lookup_elem(stacks_fd, &key, &v)) {
		s->depth = v.depth < HP_DEPTH ? v.depth : HP_DEPTH;
		memcpy(s->frames, v.frames, s->depth * sizeof(s->frames[0]));
	}
	return s;
}

/* Every outstanding block of process tgid into p. */
static void gather(struct hp_profile *p, int blocks_fd, int stacks_fd, unsigned tgid)
{
	struct vt_block key, next, *prev = NULL;
	size_t cap = 0;

	while (!bpf_map_get_next_key(blocks_fd, prev, &next)) {
		struct vt_block_val v;
		struct hp_stack *s;

		key = next;
		prev = &key;
		if (key.tgid != tgid || bpf_map_lookup_elem(blocks_fd, &key, &v) || !v.size)
			continue;
		if (!(s = stack_of(p, &cap, stacks_fd, tgid, v.hash)))
			return;
		s->bytes += (double)v.bytes;
		s->count += (double)v.bytes / (double)v.size;
		s->samples++;
	}
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
