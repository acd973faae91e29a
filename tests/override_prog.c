/*
 * tests/override_prog.c - a program linked with uvmalloc-override, not
 * preloaded: its malloc must be uvmalloc's, dynamically and with -static.
 * malloc_stats() says whose (uvmalloc's prints "uvmalloc:" lines, glibc's
 * "Arena 0:").
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
	malloc_stats();
	return 0;
}
