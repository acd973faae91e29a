/*
 * heap.h - a target's heap profile (lib/heap/prof.h), read from its memory: the
 * stack table whole between two equal, even values of its sequence
 * counter, retried when a sample or free raced the read.
 */
#ifndef VMINFO_HEAP_H
#define VMINFO_HEAP_H

#include "heapprof.h"
#include "target.h"

/* Into p (its stacks with live samples, unnamed); T_VERSION when the library keeps no profile. */
enum target_err heap_read(const struct target *t, struct hp_profile *p);

#endif
