/* malloc from a parent project's dependency('uvmalloc-override'): malloc_stats must be uvmalloc's. */
#include <malloc.h>
#include <stdlib.h>

int main(void)
{
	free(malloc(100));
	malloc_stats();
	return 0;
}
