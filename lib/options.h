/*
 * options.h - every UVM_* setting, from one table (options.c).  The README
 * list and `uvmdemo --help` print from the same table.
 */
#ifndef UVM_OPTIONS_H
#define UVM_OPTIONS_H

#include <stdio.h>

enum uvm_option_id {
	OPT_ARENA_SIZE, /* bytes of address space per region */
	OPT_LAZY_MAX,   /* lazily freed pages before a purge; 0 = kernel formula */
	OPT_GUARD,      /* 1 = real guard pages with MADV_GUARD_INSTALL */
	OPT_NODES,      /* vmap nodes; 0 = one per CPU, at most 128 */
	OPT__COUNT
};

/* Read the environment (secure_getenv: ignored in setuid programs).  Once, at init. */
void options_init(void);
long long option(enum uvm_option_id id);


#endif
