/*
 * meta.h - lib/'s own object pool for struct vmap_area (the kernel's
 * vmap_area_cachep).  Objects come from os_alloc_meta() chunks and are never
 * handed back to the kernel; a free object is reused by the next alloc of
 * the same thread's shard, or of another once that shard's run out.
 */
#ifndef UVM_META_H
#define UVM_META_H

#include "vmap.h"

/* One shard per CPU (at most 64): set-up, before any thread takes an object. */
void meta_init(unsigned cpus);
struct vmap_area *meta_va_alloc(void);
void meta_va_free(struct vmap_area *va);
/* Up to n objects onto head (linked by va->list) under one lock hold: the number taken, fewer only when out of memory. */
size_t meta_va_alloc_list(struct list_head *head, size_t n);
/* Free every VA on the list (linked by va->list) under one lock hold. */
void meta_va_free_list(struct list_head *head);
/* Objects handed out and not freed (tests check for leaks with it). */
size_t meta_va_live(void);
/* Bytes of objects ever carved from chunks: touched, so resident (the rest of a chunk is not). */
size_t meta_bytes(void);

void meta_fork_prepare(void);
void meta_fork_parent(void);
void meta_fork_child(void);

/* Its part of the exported descriptor (descriptor.c). */
struct uvm_descriptor;
void meta_describe(struct uvm_descriptor *d);

#endif
