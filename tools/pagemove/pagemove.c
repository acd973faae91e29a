/*
 * pagemove - what a page costs at its first touch after mremap moved it,
 * against a fresh page and a backed one: 16 MiB written once, moved, then
 * written twice more, with 4 KiB pages (MADV_NOHUGEPAGE) and huge ones
 * (MADV_HUGEPAGE), moved to the same place modulo 2 MiB (the kernel moves
 * whole page tables, and huge pages whole) or 64 KiB off it (entry by
 * entry; a huge page is split first).  Prints GB/s, the median of three
 * runs of each.  Why area.c's reuse_pages places a donor's pages where they
 * lay modulo 2 MiB: docs/measurements.md.
 *
 *   build/tools/pagemove/pagemove
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define SIZE ((size_t)16 << 20)
#define HUGE ((size_t)2 << 20)
#define RUNS 3

enum { FRESH, BACKED, MOVED, COLUMNS };

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* GB/s of one memset of SIZE bytes at p. */
static double write_rate(char *p, int byte)
{
	double t = now();

	memset(p, byte, SIZE);
	return (double)SIZE / (now() - t) / 1e9;
}

/* One run: SIZE bytes written fresh and again, moved by off past a 2 MiB boundary, written once more; rates into r. */
static int run(int advice, size_t off, double r[COLUMNS])
{
	size_t span = 2 * SIZE + 3 * HUGE;
	char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p, *q;

	if (raw == MAP_FAILED)
		return -1;
	p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	madvise(p, span - (size_t)(p - raw), advice);
	r[FRESH] = write_rate(p, 1);
	r[BACKED] = write_rate(p, 2);
	q = mremap(p, SIZE, SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, p + SIZE + HUGE + off);
	if (q == MAP_FAILED) {
		munmap(raw, span);
		return -1;
	}
	r[MOVED] = write_rate(q, 3);
	munmap(raw, span);
	return 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of RUNS runs of each column, printed as one row. */
static int row(const char *label, int advice, size_t off)
{
	double r[RUNS][COLUMNS], col[RUNS];

	for (int i = 0; i < RUNS; i++)
		if (run(advice, off, r[i]))
			return -1;
	printf("%-30s", label);
	for (int c = 0; c < COLUMNS; c++) {
		for (int i = 0; i < RUNS; i++)
			col[i] = r[i][c];
		qsort(col, RUNS, sizeof(col[0]), by_value);
		printf(" %8.2f", col[RUNS / 2]);
	}
	putchar('\n');
	return 0;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: pagemove (no arguments)\n");
		return 2;
	}
	printf("%-30s %8s %8s %8s   (GB/s, median of %d)\n", "pages, move", "fresh", "backed", "moved", RUNS);
	if (row("4 KiB, 2 MiB-congruent", MADV_NOHUGEPAGE, 0) || row("4 KiB, off by 64 KiB", MADV_NOHUGEPAGE, 64 << 10) ||
	    row("THP, 2 MiB-congruent", MADV_HUGEPAGE, 0) || row("THP, off by 64 KiB", MADV_HUGEPAGE, 64 << 10)) {
		perror("pagemove");
		return 1;
	}
	return 0;
}
