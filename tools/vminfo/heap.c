/*
 * heap.c - reading a target's heap profile (heap.h).
 */
#include "heap.h"

#include <stdlib.h>
#include <string.h>

#define READ_TRIES 50

/* One stack entry of the target's layout, as the tools keep it. */
static void decode(const struct uvm_descriptor *d, const unsigned char *e, struct hp_stack *s)
{
	uint32_t depth;

	memset(s, 0, sizeof(*s));
	memcpy(&s->hash, e + d->prof_hash, 8);
	memcpy(&depth, e + d->prof_depth_off, 4);
	memcpy(&s->bytes, e + d->prof_bytes, 8);
	memcpy(&s->count, e + d->prof_count, 8);
	memcpy(&s->samples, e + d->prof_samples, 8);
	s->depth = depth < d->prof_depth && depth < HP_DEPTH ? depth : (d->prof_depth < HP_DEPTH ? (unsigned)d->prof_depth : HP_DEPTH);
	memcpy(s->frames, e + d->prof_frames, s->depth * 8);
}

/* The table whole into buf (nr entries), or T_TORN when a writer ran meanwhile. */
static enum target_err read_once(const struct target *t, uint64_t table, unsigned char **buf, uint64_t *nr)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t before, after;
	enum target_err e;

	if ((e = target_u64(t, d->prof_seq, &before)) || (e = target_u64(t, d->prof_nr, nr)))
		return e;
	if (before & 1)
		return T_TORN;
	if (*nr > (1u << 20))
		return target_corrupt("heap profile: %llu stacks", (unsigned long long)*nr);
	free(*buf);
	*buf = malloc(*nr * d->prof_stack_size + 1);
	if (!*buf)
		return target_corrupt("heap profile: no memory for %llu stacks", (unsigned long long)*nr);
	if (*nr && (e = target_read(t, table, *buf, *nr * d->prof_stack_size)))
		return e;
	if ((e = target_u64(t, d->prof_seq, &after)))
		return e;
	return after == before ? T_OK : T_TORN;
}

enum target_err heap_read(const struct target *t, struct hp_profile *p)
{
	const struct uvm_descriptor *d = &t->d;
	unsigned char *buf = NULL;
	uint64_t table = 0, nr = 0, rate = 0;
	enum target_err e = T_TORN;

	memset(p, 0, sizeof(*p));
	if (!d->prof_stack_size)
		return T_VERSION;
	if ((e = target_u64(t, d->prof_rate, &rate)) || (e = target_u64(t, d->prof_stacks, &table)))
		return e;
	p->rate = rate;
	if (!table)
		return T_OK; /* nothing sampled yet */
	for (int i = 0; i < READ_TRIES && (e = read_once(t, table, &buf, &nr)) == T_TORN; i++)
		;
	if (!e && !(p->st = calloc(nr + 1, sizeof(*p->st))))
		e = target_corrupt("heap profile: no memory for %llu stacks", (unsigned long long)nr);
	for (uint64_t i = 0; !e && i < nr; i++) {
		decode(d, buf + i * d->prof_stack_size, &p->st[p->n]);
		if (p->st[p->n].samples)
			p->n++;
	}
	free(buf);
	return e;
}
