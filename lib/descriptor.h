/*
 * descriptor.h - the library's side of the exported uvm_descriptor
 * (uvmalloc-descriptor.h, installed): each layer describes its own part.
 */
#ifndef UVM_DESCRIPTOR_H
#define UVM_DESCRIPTOR_H

#include "uvmalloc-descriptor.h"

/* Fill the descriptor once set-up is done; each layer describes its own part. */
void descriptor_init(void);

void vn_describe(struct uvm_descriptor *d);
void arena_describe(struct uvm_descriptor *d);
void pcp_describe(struct uvm_descriptor *d);
void heap_describe(struct uvm_descriptor *d);
void os_describe(struct uvm_descriptor *d);
void purge_describe(struct uvm_descriptor *d);
void slab_describe(struct uvm_descriptor *d);
void meta_describe(struct uvm_descriptor *d);
void prof_describe(struct uvm_descriptor *d);

#endif
