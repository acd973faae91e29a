/* tests/dl_alloc.c - a library that test_malloc dlopen()s: its allocations must be ours too. */
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) void *dl_alloc_make(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 'x', n);
	return p;
}
