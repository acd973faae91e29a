/*
 * cases.c - test_vmalloc's cases.  Every case only allocates, touches one
 * byte and frees, as the kernel's do: the numbers measure the allocator's
 * recycling, not the memory.
 *
 * Userspace analogues: pcpu_alloc_test becomes small objects of random
 * size and alignment (the uvm_malloc family or posix_memalign), and the
 * kvfree_rcu tests become deferred frees: blocks queue up and are freed in
 * batches once a "grace period" (a full batch) has passed; the one-argument
 * form keeps the queue in a side array, the two-argument form links the
 * blocks through a head embedded in them.  vm_map_ram and no_block have no
 * userspace meaning and are left out.
 */
#include "cases.h"

#include <stdlib.h>
#include <string.h>

#define PAGE 4096ul
#define DEFER_BATCH 512

static uint64_t rnd(struct run *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

/* uniform in [lo, hi] */
static long uniform(struct run *r, long lo, long hi) { return lo + (long)(rnd(r) % (uint64_t)(hi - lo + 1)); }

static int fix_size(struct run *r)
{
	size_t size = (size_t)r->nr_pages * PAGE;

	for (long i = 0; i < r->loops; i++) {
		char *p = r->use_huge ? r->be->alloc_huge(size) : r->be->alloc(size);

		if (!p)
			return -1;
		*p = 1;
		r->be->free(p);
	}
	return 0;
}

static int full_fit(struct run *r)
{
	long junk_n = (long)(32 - __builtin_clz(r->cpus)) * (long)((32ul << 20) / PAGE); /* lazy_max_pages */
	void **ptr = malloc((size_t)junk_n * sizeof(void *)), **junk = malloc((size_t)junk_n * sizeof(void *));
	int rv = 0;

	if (!ptr || !junk) {
		free(ptr);
		free(junk);
		return -1;
	}
	for (long i = 0; i < junk_n; i++) {
		ptr[i] = r->be->alloc(PAGE);
		junk[i] = r->be->alloc(PAGE);
	}
	for (long i = 0; i < junk_n; i++)
		r->be->free(junk[i]);
	for (long i = 0; i < r->loops; i++) {
		char *tmp = r->be->alloc(PAGE);

		if (!tmp) {
			rv = -1;
			break;
		}
		*tmp = 1;
		r->be->free(tmp);
	}
	for (long i = 0; i < junk_n; i++)
		r->be->free(ptr[i]);
	free(ptr);
	free(junk);
	return rv;
}

static int long_busy_list(struct run *r)
{
	enum { N = 15000 };
	void **ptr = malloc(N * sizeof(void *));
	int rv = 0;

	if (!ptr)
		return -1;
	for (int i = 0; i < N; i++)
		ptr[i] = r->be->alloc(PAGE);
	for (long i = 0; i < r->loops; i++) {
		char *a = r->be->alloc(100 * PAGE), *b = r->be->alloc(PAGE);

		if (!a || !b) {
			if (a)
				r->be->free(a);
			rv = -1;
			break;
		}
		a[0] = 0;
		b[0] = 1;
		r->be->free(a);
		r->be->free(b);
	}
	for (int i = 0; i < N; i++)
		r->be->free(ptr[i]);
	free(ptr);
	return rv;
}

static int random_size(struct run *r)
{
	for (long i = 0; i < r->loops; i++) {
		char *p = r->be->alloc((size_t)uniform(r, 1, 100) * PAGE);

		if (!p)
			return -1;
		*p = 1;
		r->be->free(p);
	}
	return 0;
}

/* __GFP_ZERO: the block is zeroed, as the kernel's is. */
static int aligned_zeroed(struct run *r, size_t size, size_t align)
{
	char *p = r->be->alloc_aligned(size, align);

	if (!p)
		return -1;
	memset(p, 0, size);
	r->be->free(p);
	return 0;
}

/* THREAD_ALIGN << 1 on x86-64: 32 KiB. */
static int fix_align(struct run *r)
{
	for (long i = 0; i < r->loops; i++)
		if (aligned_zeroed(r, 5 * PAGE, 32 << 10))
			return -1;
	return 0;
}

static int random_size_align(struct run *r)
{
	for (long i = 0; i < r->loops; i++) {
		unsigned byte = (unsigned)(rnd(r) & 0xff); /* size and alignment from the same byte, as the kernel's */

		if (aligned_zeroed(r, ((byte % 10) + 1) * PAGE, (size_t)1 << (byte % 23)))
			return -1;
	}
	return 0;
}

/* Expected to fail: alignments grow until the address space cannot hold one. */
static int align_shift(struct run *r)
{
	for (unsigned i = 0; i < 64; i++) {
		char *p = r->be->alloc_aligned(PAGE, (size_t)1 << i);

		if (!p)
			return -1;
		r->be->free(p);
	}
	return 0;
}

static int pcpu_alloc(struct run *r)
{
	enum { N = 35000 };
	void **pcpu = r->be->alloc(N * sizeof(void *));
	int rv = 0;

	if (!pcpu)
		return -1;
	for (int i = 0; i < N; i++) {
		pcpu[i] = r->be->small_aligned((size_t)uniform(r, 1, PAGE / 4), (size_t)1 << uniform(r, 1, 11));
		if (!pcpu[i])
			rv = -1;
	}
	for (int i = 0; i < N; i++)
		if (pcpu[i])
			r->be->small_free(pcpu[i]);
	r->be->free(pcpu);
	return rv;
}

/* kvfree_rcu(p): the queue is a side array; a full one is a grace period, freed in one batch. */
static int deferred_1_arg(struct run *r)
{
	void *queue[DEFER_BATCH];
	int n = 0;

	for (long i = 0; i < r->loops; i++) {
		char *p = r->be->alloc(PAGE);

		if (!p)
			return -1;
		p[sizeof(void *)] = 'a';
		queue[n++] = p;
		if (n == DEFER_BATCH)
			while (n)
				r->be->free(queue[--n]);
	}
	while (n)
		r->be->free(queue[--n]);
	return 0;
}

/* kvfree_rcu(p, rcu): the blocks are linked through a head embedded in them. */
static int deferred_2_arg(struct run *r)
{
	void *head = NULL;
	int n = 0;

	for (long i = 0; i < r->loops; i++) {
		char *p = r->be->alloc(PAGE);

		if (!p)
			return -1;
		p[sizeof(void *)] = 'a';
		*(void **)p = head;
		head = p;
		if (++n == DEFER_BATCH)
			for (; n; n--) {
				void *next = *(void **)head;

				r->be->free(head);
				head = next;
			}
	}
	while (head) {
		void *next = *(void **)head;

		r->be->free(head);
		head = next;
	}
	return 0;
}

static int vrealloc_case(struct run *r)
{
	for (long i = 0; i < r->loops; i++) {
		char *p = r->be->alloc(PAGE);
		static const size_t steps[] = { 4 * PAGE, PAGE, PAGE / 2, PAGE };

		if (!p)
			return -1;
		p[0] = 'a';
		for (unsigned k = 0; k < 4; k++) {
			char *q = r->be->realloc(p, steps[k]);

			if (!q || q[0] != 'a') {
				r->be->free(q ? q : p);
				return -1;
			}
			p = q;
		}
		r->be->free(p);
	}
	return 0;
}

const struct bench_case bench_cases[] = {
	{ "fix_size_alloc_test", 0, false, fix_size },
	{ "full_fit_alloc_test", 1, false, full_fit },
	{ "long_busy_list_alloc_test", 2, false, long_busy_list },
	{ "random_size_alloc_test", 3, false, random_size },
	{ "fix_align_alloc_test", 4, false, fix_align },
	{ "random_size_align_alloc_test", 5, false, random_size_align },
	{ "align_shift_alloc_test", 6, true, align_shift },
	{ "pcpu_alloc_test", 7, false, pcpu_alloc },
	{ "kvfree_rcu_1_arg_vmalloc_test", 8, false, deferred_1_arg },
	{ "kvfree_rcu_2_arg_vmalloc_test", 9, false, deferred_2_arg },
	{ "vrealloc_test", 12, false, vrealloc_case },
};
const unsigned bench_nr_cases = sizeof(bench_cases) / sizeof(bench_cases[0]);
