/*
 * init.h - bringing lib/ up once, and keeping it whole across fork().
 */
#ifndef UVM_INIT_H
#define UVM_INIT_H

#include <stdatomic.h>

#include "util.h"

extern uvm_hidden atomic_bool uvm_ready;

int init_slow(void);
/* True on the thread running the set-up, while it runs (malloc then serves from a static buffer). */
bool init_in_progress_here(void);

/* 0 when the allocator is up; else the errno that kept it down.  One load on the fast path. */
static inline int uvm_init(void)
{
	if (likely(atomic_load_explicit(&uvm_ready, memory_order_acquire)))
		return 0;
	return init_slow();
}

#endif
