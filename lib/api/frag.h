/*
 * frag.h - the figures of uvm_frag_stats that are cheap enough for every
 * snapshot the trace probe hands out (trace.c).
 */
#ifndef UVM_FRAG_H
#define UVM_FRAG_H

#include <stdint.h>

#include "uvmalloc.h"

/* Thread heaps, area objects and the resident part of the page maps: the allocator's own memory outside the regions. */
uint64_t frag_metadata_bytes(void);
/* Usable bytes handed out for sized requests, all time: objects at class size, areas less the slabs' own (st: uvm_stats now). */
uint64_t frag_handed_bytes(const struct uvm_stats *st);

#endif
