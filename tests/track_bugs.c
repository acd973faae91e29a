/*
 * tests/track_bugs.c CASE - one memory error of each kind a checker should
 * report in blocks of uvmalloc's (tests/test_track.sh), or none; the line
 * of each error is marked with its case's name after an @:
 *   clean           every block freed, realloc and calloc bytes checked
 *   overflow        a write one byte past a 13-byte small block
 *   big-overflow    one byte past a 10000-byte area
 *   use-after-free  a read of a freed small block
 *   leaks           4 small blocks of 100 bytes and one area of 50000 lost
 *   double-free     a small block freed twice
 *   malloc-overflow the overflow through malloc (run preloaded)
 *   uninit          a branch on bytes a block never had written
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uvmalloc.h"

static int is(const char *a, const char *b) { return !strcmp(a, b); }

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "clean";
	char *p = uvm_malloc(13), *big = uvm_vmalloc(10000), *keep, *area;
	volatile char sink = 0;

	/* A failed allocation first, in every case: the checker must go on reporting after it. */
	if (uvm_malloc((size_t)-1 / 2) || uvm_vmalloc((size_t)-1 / 2))
		return puts("an impossible size was given"), 4;
	memset(p, 1, 13);
	memset(big, 2, 10000);
	if (is(what, "overflow"))
		p[13] = 1; /* @overflow */
	if (is(what, "big-overflow"))
		big[10000] = 1; /* @big-overflow */
	uvm_free(p);
	uvm_vfree(big);
	if (is(what, "use-after-free"))
		sink = p[0]; /* @use-after-free */
	if (is(what, "double-free")) {
		char *q = uvm_malloc(40);

		uvm_free(q);
		uvm_free(q); /* @double-free */
	}
	if (is(what, "leaks")) {
		for (int i = 0; i < 4; i++)
			memset(uvm_malloc(100), 0, 100);
		memset(uvm_vmalloc(50000), 0, 50000);
	}
	if (is(what, "malloc-overflow")) {
		volatile char *m = malloc(24); /* volatile: a store right before free is otherwise dropped */

		m[24] = 1; /* @malloc-overflow */
		free((void *)m);
	}
	if (is(what, "uninit")) {
		char *u = uvm_malloc(64);

		if (u[10]) /* @uninit */
			sink = 1;
		uvm_free(u);
	}
	/* Bytes survive realloc's move both ways; calloc's are zero. */
	keep = uvm_calloc(10, 10);
	memcpy(keep, "tracked", 8);
	keep = uvm_realloc(keep, 300);
	keep = uvm_realloc(keep, 20);
	area = memcpy(uvm_vmalloc(5000), keep, 20);
	uvm_free(keep);
	keep = uvm_vrealloc(area, 90000);
	if (strcmp(keep, "tracked") || keep[9] || keep[19])
		return puts("realloc lost bytes"), 3;
	uvm_vfree(keep);
	(void)sink;
	return 0;
}
