/*
 * huge.h - which areas get huge pages, and how (the kernel's vmalloc_huge
 * and vm_area_alloc_pages with a PMD order).
 *
 * A huge area starts on a 2 MiB boundary; its body, the 2 MiB-aligned part
 * before the guard page, gets huge pages: MADV_HUGEPAGE (THP), or with
 * UVM_HUGETLB=1 pages of the kernel's hugetlb pool while it has some.  The
 * tail after the body keeps small pages: the size is never rounded up to
 * 2 MiB (seed 002).
 */
#ifndef UVM_HUGE_H
#define UVM_HUGE_H

#include <stdbool.h>

#include "vmap.h"

#define HUGE_SIZE ((size_t)2 << 20)

/* Read UVM_THP and UVM_HUGETLB; ask libhugetlbfs whether 2 MiB hugetlb pages exist. */
void huge_init(void);
/* Whether an area of usable bytes gets huge pages: always for uvm_vmalloc_huge (unless never; api.c sends it only areas of 2 MiB or more), by UVM_THP otherwise. */
bool huge_wanted(size_t usable, bool huge_api);
/* The start alignment of a uvm_vmalloc_huge area (2 MiB or more): HUGE_SIZE, or a page where huge pages are off. */
extern uvm_hidden size_t uvm__huge_api_align;
/* Give the fresh area va (aligned to HUGE_SIZE) its huge body, setting VA_HUGE or VA_HUGETLB. */
void huge_back(struct vmap_area *va);
/* The body of va: [*start, *end), empty when the area holds no full 2 MiB. */
void huge_body(const struct vmap_area *va, uintptr_t *start, uintptr_t *end);
/* Before the pages of a run are given back: hugetlb bodies become plain pages again. */
void huge_unback(struct vmap_area *va);
/* Hugetlb pages free in the pool for us (free minus reserved), from sysfs. */
long huge_pool_free(void);

#endif
