/* The uvm_* API from a parent project's dependency('uvmalloc'). */
#include <stdio.h>
#include <string.h>

#include "uvmalloc.h"

int main(void)
{
	char *p = uvm_vmalloc(10000);

	if (!p || uvm_vsize(p) != 12288)
		return 1;
	memset(p, 1, 10000);
	uvm_vfree(p);
	printf("api %s\n", uvm_version());
	return 0;
}
