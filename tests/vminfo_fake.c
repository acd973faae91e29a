/* tests/vminfo_fake.c - a process with a uvm_descriptor of a version no vminfo knows; it waits for stdin to close. */
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "descriptor.h"

__attribute__((visibility("default"))) struct uvm_descriptor uvm_descriptor = {
	.magic = UVM_DESCRIPTOR_MAGIC, .version = 999, .size = sizeof(struct uvm_descriptor), .ready = 1,
};

int main(void)
{
	char c;

	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
