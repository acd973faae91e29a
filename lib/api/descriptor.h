/*
 * descriptor.h - the library's side of the exported uvm_descriptor
 * (uvmalloc-descriptor.h, installed): each layer describes its own part
 * (its X_describe, declared in its own header), and set-up fills it.
 */
#ifndef UVM_DESCRIPTOR_H
#define UVM_DESCRIPTOR_H

#include "uvmalloc-descriptor.h"

/* Fill the descriptor once set-up is done; each layer describes its own part. */
void descriptor_init(void);

#endif
