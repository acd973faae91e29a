/*
 * tests/override_prog.c - a program linked with uvmalloc-override, not
 * preloaded: its malloc must be uvmalloc's, dynamically and with -static.
 * malloc_stats() says whose (uvmalloc's prints "uvmalloc:" lines, glibc's
 * "Arena 0:").  It calls mallopt and malloc_info too: with -static, a
 * name only libc.a's malloc.o defined pulled that in, and its malloc
 * clashed with ours (a multiple definition).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	static void *p[1000];

	for (int i = 0; i < 1000; i++) {
		p[i] = malloc(100);
		if (!p[i])
			return 1;
		memset(p[i], i, 100);
	}
	for (int i = 0; i < 1000; i++)
		free(p[i]);
	if (mallopt(M_ARENA_MAX, 1) != 1 || malloc_info(0, stdout))
		return 1;
	malloc_stats();
	return 0;
}
