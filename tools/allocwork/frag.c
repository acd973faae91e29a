/*
 * frag.c - a fragmentation-heavy mix.  Each phase fills memory with tiny
 * objects and frees every other one, then asks for medium objects that
 * the holes cannot hold, then large ones; a few of each kind survive into
 * a pool of long-lived objects that replaces a random member at a time.
 * The survivors pin scattered pages, so an allocator that cannot reuse
 * holes or give back the pages around them shows it in its peak RSS.
 */
#include <stdlib.h>

#include "work.h"

#define SMALL 200000
#define MEDIUM 20000
#define LARGE 400
#define SURVIVORS 16384
#define PHASES 1

struct frag_obj {
	unsigned char *p;
	uint64_t size, tag;
};

struct frag_lane {
	struct work_lane w; /* rounds: phases */
	struct frag_obj survivor[SURVIVORS];
	struct frag_obj obj[SMALL + MEDIUM + LARGE];
};

static void release(struct frag_lane *l, struct frag_obj *o)
{
	if (!o->p)
		return;
	l->w.res.corrupt |= !work_check(o->p, o->size, o->tag);
	l->w.res.checksum += o->p[0];
	free(o->p);
	o->p = NULL;
}

/* Allocates objects [from, from + n) of sizes in [min, min + span). */
static void fill(struct frag_lane *l, long from, long n, uint64_t min, uint64_t span)
{
	for (long i = from; i < from + n; i++) {
		struct frag_obj *o = &l->obj[i];

		o->size = min + work_rnd(&l->w.rng) % span;
		o->tag = l->w.res.ops++;
		o->p = malloc(o->size);
		if (!o->p)
			abort();
		work_fill(o->p, o->size, o->tag);
		/* Large objects are used, not just held: one byte a page. */
		for (uint64_t off = 4096; off + 1 < o->size; off += 4096)
			o->p[off] = 0;
	}
}

/* Frees objects [from, n) with a step; every keep-th of them survives instead. */
static void thin(struct frag_lane *l, long from, long n, long step, long keep)
{
	for (long i = from, k = 0; i < n; i += step, k++) {
		if (keep && k % keep == 0) {
			struct frag_obj *s = &l->survivor[work_rnd(&l->w.rng) % SURVIVORS];

			release(l, s);
			*s = l->obj[i];
			l->obj[i].p = NULL;
		} else {
			release(l, &l->obj[i]);
		}
	}
}

static void *lane(void *arg)
{
	struct frag_lane *l = arg;

	for (long ph = 0; ph < l->w.rounds; ph++) {
		/* The medium and large objects come while the holes are still fenced in. */
		fill(l, 0, SMALL, 16, 113);
		thin(l, 1, SMALL, 2, 0);
		fill(l, SMALL, MEDIUM, 256, 1793);
		thin(l, 0, SMALL, 2, 16);
		fill(l, SMALL + MEDIUM, LARGE, 8192, 253952);
		thin(l, SMALL, SMALL + MEDIUM, 1, 8);
		thin(l, SMALL + MEDIUM, SMALL + MEDIUM + LARGE, 1, 10);
	}
	for (long i = 0; i < SURVIVORS; i++)
		release(l, &l->survivor[i]);
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct frag_lane), lane, 0xda942042e4dd58b5ull, PHASES);
}

const struct workload work_frag = { "frag", "holes fenced in by survivors, then larger requests: reuse of holes and peak RSS", run };
