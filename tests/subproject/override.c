/*
 * malloc from a parent project's dependency('uvmalloc-override'): malloc_stats must be uvmalloc's.
 * The override holds the uvm_* API too, on the same heap: a block of one is freed by the other.
 */
#include <malloc.h>
#include <stdlib.h>

#include "uvmalloc.h"

int main(void)
{
	free(malloc(100));
	free(uvm_malloc(100));
	uvm_free(malloc(100));
	malloc_stats();
	return 0;
}
