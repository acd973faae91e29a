/*
 * tests/unit/vm/test_vmap.c - the free tree (lib/vm/vmap.c) under random operation
 * sequences, checked after every step against a page bitmap model: no
 * overlap, sorted, no two touching free ranges, subtree_max_size right
 * everywhere, and the lowest fit equal to a linear scan's answer for
 * alignments from 1 byte to 1 GiB.  Addresses are arithmetic only.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmap.h"

#define PG UVM_PAGE_SIZE
/* 64 MiB straddling a 1 GiB boundary, so 1 GiB alignment has exactly one candidate. */
#define BASE (((uintptr_t)3 << 30) - ((uintptr_t)32 << 20))
#define NPAGES (16384)

static struct vmap_area *new_va(uintptr_t s, uintptr_t e)
{
	struct vmap_area *va = calloc(1, sizeof(*va));

	va->va_start = s;
	va->va_end = e;
	return va;
}

static void free_list(struct list_head *h)
{
	struct vmap_area *va, *n;

	list_for_each_entry_safe(va, n, h, list)
		free(va);
	list_init(h);
}

/* The model: 1 = free page, 0 = busy or outside every region. */
static unsigned char model[NPAGES];

static uintptr_t page_addr(size_t i) { return BASE + i * PG; }

/* The free list must be exactly the model's maximal runs of free pages. */
static void check_against_model(const struct va_tree *t)
{
	struct vmap_area *va;
	size_t i = 0;

	cr_assert_eq(va_tree_check(t), 0, "tree self-check failed");
	list_for_each_entry(va, &t->list, list) {
		while (i < NPAGES && !model[i])
			i++;
		cr_assert_lt(i, NPAGES, "tree has a free range the model lacks");
		cr_assert_eq(va->va_start, page_addr(i), "free range starts at %#lx, model at %#lx",
			     (unsigned long)va->va_start, (unsigned long)page_addr(i));
		while (i < NPAGES && model[i])
			i++;
		cr_assert_eq(va->va_end, page_addr(i), "free range ends at %#lx, model at %#lx (not merged?)",
			     (unsigned long)va->va_end, (unsigned long)page_addr(i));
	}
	while (i < NPAGES && !model[i])
		i++;
	cr_assert_eq(i, NPAGES, "model has a free page the tree lacks");
}

/* The model's longest run of free pages inside [lo, hi) (page indexes), in bytes. */
static size_t model_largest_in(size_t lo, size_t hi)
{
	size_t best = 0, run = 0;

	for (size_t i = lo; i < hi; i++) {
		run = model[i] ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best * PG;
}

/* va_tree_largest_in and va_containing against the model, for a few random windows. */
static void check_windows(const struct va_tree *t)
{
	for (int k = 0; k < 4; k++) {
		size_t lo = (size_t)rand() % NPAGES, hi = lo + (size_t)rand() % (NPAGES - lo + 1);
		struct vmap_area *va = va_containing(&t->root, page_addr(lo));

		cr_assert_eq(va_tree_largest_in(t, page_addr(lo), page_addr(hi)), model_largest_in(lo, hi),
			     "largest free inside pages [%zu, %zu)", lo, hi);
		cr_assert_eq(va != NULL, model[lo] != 0, "containing page %zu", lo);
		if (va)
			cr_assert(va->va_start <= page_addr(lo) && page_addr(lo) < va->va_end);
	}
}

/* The model's own lowest aligned fit: a linear scan over pages. */
static int model_lowest_fit(size_t pages, size_t align, uintptr_t *addr)
{
	for (size_t i = 0; i < NPAGES;) {
		size_t run;

		if (!model[i]) {
			i++;
			continue;
		}
		for (run = 0; i + run < NPAGES && model[i + run]; run++)
			;
		uintptr_t s = align_up(page_addr(i), align);
		if (s >= page_addr(i) && s + pages * PG <= page_addr(i + run)) {
			*addr = s;
			return 0;
		}
		i += run;
	}
	return ENOMEM;
}

static void mark(uintptr_t addr, size_t pages, unsigned char v)
{
	size_t first = (addr - BASE) / PG;

	for (size_t k = 0; k < pages; k++) {
		cr_assert_neq(model[first + k], v, "page %zu already in that state: overlap", first + k);
		model[first + k] = v;
	}
}

struct block {
	uintptr_t addr;
	size_t pages;
};

static void seed_regions(struct va_tree *t)
{
	struct list_head absorbed = LIST_HEAD_INIT(absorbed);
	/* Three regions with holes between them that never belong to us. */
	static const size_t regions[][2] = { { 0, 6000 }, { 6001, 12000 }, { 12100, NPAGES } };

	memset(model, 0, sizeof(model));
	for (size_t r = 0; r < 3; r++) {
		cr_assert_eq(va_merge_or_add(t, new_va(page_addr(regions[r][0]), page_addr(regions[r][1])), &absorbed), 0);
		memset(model + regions[r][0], 1, regions[r][1] - regions[r][0]);
	}
	cr_assert(list_empty(&absorbed));
}

static void random_run(unsigned seed, int steps)
{
	struct va_tree t;
	struct list_head absorbed = LIST_HEAD_INIT(absorbed);
	static struct block blocks[8192];
	size_t nblocks = 0;
	struct vmap_area *spare = NULL;

	srand(seed);
	va_tree_init(&t);
	seed_regions(&t);
	check_against_model(&t);
	for (int s = 0; s < steps; s++) {
		if (nblocks < 8192 && (rand() % 100 < 55 || !nblocks)) {
			size_t pages = 1 + (size_t)(rand() % (rand() % 4 ? 16 : 700));
			size_t align = (size_t)1 << (rand() % 31); /* 1 byte .. 1 GiB */
			uintptr_t want = 0, got = 0;
			int mres = model_lowest_fit(pages, align, &want);
			struct vmap_area *lin = va_lowest_match_linear(&t, pages * PG, align, 0);
			struct vmap_area *exact = va_lowest_match(&t, pages * PG, align, 0);

			/* The exact tree search and the linear list scan agree with each other and the model. */
			cr_assert_eq(exact, lin, "tree search and linear scan disagree (pages %zu align %zu)", pages, align);
			cr_assert_eq(!lin, mres == ENOMEM);
			if (lin)
				cr_assert_eq(align_up(lin->va_start, align), want);
			if (!spare)
				spare = new_va(0, 0);
			int err = va_alloc(&t, pages * PG, align, 0, UINTPTR_MAX, &spare, &absorbed, &got);
			if (err) {
				/* The size + align - 1 pruning may only miss when no block that large exists. */
				cr_assert_eq(err, ENOMEM);
				struct vmap_area *big = va_lowest_match_linear(&t, pages * PG + align - 1, 1, 0);
				cr_assert(align <= PG ? mres == ENOMEM : big == NULL || big->va_end - big->va_start < pages * PG + align - 1,
					  "va_alloc failed though a block of size + align - 1 exists");
			} else {
				cr_assert_eq(got % align, 0);
				if (align <= PG)
					cr_assert_eq(got, want, "lowest fit %#lx, model says %#lx", (unsigned long)got, (unsigned long)want);
				else
					cr_assert_geq(got, want);
				mark(got, pages, 0);
				blocks[nblocks++] = (struct block){ got, pages };
			}
			free_list(&absorbed);
		} else {
			size_t k = (size_t)rand() % nblocks;
			struct block b = blocks[k];

			blocks[k] = blocks[--nblocks];
			cr_assert_eq(va_merge_or_add(&t, new_va(b.addr, b.addr + b.pages * PG), &absorbed), 0);
			mark(b.addr, b.pages, 1);
			free_list(&absorbed);
		}
		check_against_model(&t);
		check_windows(&t);
	}
	/* Free everything: the tree must fold back to the three regions. */
	while (nblocks) {
		struct block b = blocks[--nblocks];

		cr_assert_eq(va_merge_or_add(&t, new_va(b.addr, b.addr + b.pages * PG), &absorbed), 0);
		mark(b.addr, b.pages, 1);
		free_list(&absorbed);
	}
	check_against_model(&t);
	size_t n = 0;
	struct vmap_area *va;
	list_for_each_entry(va, &t.list, list)
		n++;
	cr_assert_eq(n, 3);
	free(spare);
}

Test(vmap, random_vs_model_1) { random_run(1, 6000); }
Test(vmap, random_vs_model_2) { random_run(2, 6000); }
Test(vmap, random_vs_model_3) { random_run(3, 6000); }

/* The four clip cases, each by hand. */
Test(vmap, clip_cases)
{
	struct va_tree t;
	struct list_head absorbed = LIST_HEAD_INIT(absorbed);
	struct vmap_area *va = new_va(0x100000, 0x110000), *spare = new_va(0, 0);

	va_tree_init(&t);
	cr_assert_eq(va_merge_or_add(&t, va, &absorbed), 0);
	/* LE: take the first page. */
	cr_assert_eq(va_clip(&t, va, 0x100000, PG, &spare, &absorbed), 0);
	cr_assert_eq(va->va_start, 0x101000);
	/* RE: take the last page. */
	cr_assert_eq(va_clip(&t, va, 0x10f000, PG, &spare, &absorbed), 0);
	cr_assert_eq(va->va_end, 0x10f000);
	/* NE without a spare: refused, tree untouched. */
	struct vmap_area *none = NULL;
	cr_assert_eq(va_clip(&t, va, 0x104000, PG, &none, &absorbed), ENOMEM);
	/* NE: split in two. */
	cr_assert_eq(va_clip(&t, va, 0x104000, PG, &spare, &absorbed), 0);
	cr_assert_null(spare);
	cr_assert_eq(va_tree_check(&t), 0);
	struct vmap_area *left = list_first_entry(&t.list, struct vmap_area, list);
	cr_assert_eq(left->va_start, 0x101000);
	cr_assert_eq(left->va_end, 0x104000);
	cr_assert_eq(va->va_start, 0x105000);
	/* Outside: nothing fits. */
	cr_assert_eq(va_clip(&t, va, 0x200000, PG, &spare, &absorbed), EINVAL);
	/* FL: the whole left range. */
	cr_assert_eq(va_clip(&t, left, 0x101000, 3 * PG, &spare, &absorbed), 0);
	cr_assert(!list_empty(&absorbed));
	cr_assert_eq(va_tree_check(&t), 0);
	cr_assert_eq(va_tree_largest(&t), 0x10f000 - 0x105000);
	free_list(&absorbed);
}

/* merge_or_add: alone, with next, with prev, with both; overlap refused. */
Test(vmap, merge_cases)
{
	struct va_tree t;
	struct list_head absorbed = LIST_HEAD_INIT(absorbed);

	va_tree_init(&t);
	cr_assert_eq(va_merge_or_add(&t, new_va(0x10000, 0x20000), &absorbed), 0);
	cr_assert_eq(va_merge_or_add(&t, new_va(0x40000, 0x50000), &absorbed), 0);
	cr_assert(list_empty(&absorbed));
	/* next: [0x30000,0x40000) joins the range above it. */
	cr_assert_eq(va_merge_or_add(&t, new_va(0x30000, 0x40000), &absorbed), 0);
	/* prev: [0x50000,0x58000) joins the range below it. */
	cr_assert_eq(va_merge_or_add(&t, new_va(0x50000, 0x58000), &absorbed), 0);
	cr_assert_eq(va_tree_check(&t), 0);
	/* overlap: refused, nothing changes. */
	struct vmap_area *dup = new_va(0x1f000, 0x21000);
	cr_assert_eq(va_merge_or_add(&t, dup, &absorbed), EEXIST);
	free(dup);
	/* both: the gap closes and one range is left. */
	cr_assert_eq(va_merge_or_add(&t, new_va(0x20000, 0x30000), &absorbed), 0);
	cr_assert_eq(va_tree_check(&t), 0);
	struct vmap_area *only = list_first_entry(&t.list, struct vmap_area, list);
	cr_assert_eq(only->list.next, &t.list);
	cr_assert_eq(only->va_start, 0x10000);
	cr_assert_eq(only->va_end, 0x58000);
	cr_assert_eq(va_tree_largest(&t), 0x48000);
	free_list(&absorbed);
}

/* An exact window (vend - vstart == size) with big alignment is served without the inflation. */
Test(vmap, exact_window)
{
	struct va_tree t;
	struct list_head absorbed = LIST_HEAD_INIT(absorbed);
	struct vmap_area *spare = new_va(0, 0);
	uintptr_t got;

	va_tree_init(&t);
	cr_assert_eq(va_merge_or_add(&t, new_va(0x200000, 0x400000), &absorbed), 0);
	cr_assert_eq(va_alloc(&t, 0x200000, 0x200000, 0x200000, 0x400000, &spare, &absorbed, &got), 0);
	cr_assert_eq(got, 0x200000);
	cr_assert_null(t.root.node);
	free(spare);
	free_list(&absorbed);
}
