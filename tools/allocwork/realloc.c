/*
 * realloc.c - large reallocs: several buffers grow in turn, a quarter at a
 * time, from 64 KiB to 32 MiB, as vectors and string builders do, with
 * every new page written; then each shrinks to 1 KiB and is freed.
 * Because the buffers interleave, growth in place is rarely free.  It
 * stresses moving pages (mremap) against copying them, and faults.
 */
#include <stdlib.h>

#include "work.h"

#define BUFFERS 4
#define START (64ul << 10)
#define LIMIT (32ul << 20)
#define ROUNDS 1

struct grow_buf {
	unsigned char *p;
	uint64_t size;
};

/* One byte per page of the new part, and the old part's last byte checked. */
static bool grow(struct grow_buf *b, uint64_t to, uint64_t *sum)
{
	unsigned char *q = realloc(b->p, to);
	bool ok;

	if (!q)
		abort();
	ok = q[b->size - 1] == (unsigned char)(b->size - 1) && q[0] == 0xa5;
	for (uint64_t off = b->size; off < to; off += 4096)
		q[off] = (unsigned char)off;
	q[to - 1] = (unsigned char)(to - 1);
	*sum += q[b->size - 1];
	b->p = q;
	b->size = to;
	return ok;
}

static void *lane(void *arg)
{
	struct work_lane *l = arg;
	struct work_result *r = &l->res;

	for (long round = 0; round < l->rounds; round++) {
		struct grow_buf buf[BUFFERS];

		for (int i = 0; i < BUFFERS; i++) {
			buf[i] = (struct grow_buf){ malloc(START), START };
			if (!buf[i].p)
				abort();
			buf[i].p[0] = 0xa5;
			buf[i].p[START - 1] = (unsigned char)(START - 1);
		}
		for (uint64_t size = START; size < LIMIT; size += size / 4)
			for (int i = 0; i < BUFFERS; i++, r->ops++)
				r->corrupt |= !grow(&buf[i], size + size / 4, &r->checksum);
		for (int i = 0; i < BUFFERS; i++, r->ops++) {
			unsigned char *q = realloc(buf[i].p, 1024);

			r->corrupt |= !q || q[0] != 0xa5;
			free(q);
		}
	}
	return NULL;
}

static void run(const struct work_args *a, struct work_result *r)
{
	work_lanes(a, r, sizeof(struct work_lane), lane, 0, ROUNDS);
}

const struct workload work_realloc = { "realloc", "buffers grown by realloc from 64 KiB to 32 MiB, every page written", run };
