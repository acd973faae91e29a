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
/* Whether an area gets huge pages: asked (uvm_vmalloc_huge, UVM_THP=always, hugetlb), if they pay (auto), or not. */
enum huge_kind { HUGE_NONE, HUGE_IF_PAYS, HUGE_ASKED };
/* The kind for an area of usable bytes: uvm_vmalloc_huge's are asked unless never (api.c sends it only areas of 2 MiB or more), the others by UVM_THP. */
enum huge_kind huge_wanted(size_t usable, bool huge_api);
/* The start alignment of a uvm_vmalloc_huge area (2 MiB or more): HUGE_SIZE, or a page where huge pages are off. */
extern uvm_hidden size_t uvm__huge_api_align;
/*
 * What huge_back leaves to its caller: nothing; the body's first huge page
 * to touch and time (thp.c wants a sample); or that, and then the rest of
 * the body to back once the sample is in (huge_back_rest).
 */
enum huge_time { HUGE_UNTIMED, HUGE_TIME, HUGE_TIME_FIRST };
/*
 * Give the fresh area va (aligned to HUGE_SIZE) its huge body, setting
 * VA_HUGE or VA_HUGETLB; an if-pays kind asks thp.c first.
 */
enum huge_time huge_back(struct vmap_area *va, enum huge_kind kind);
/* A HUGE_TIME_FIRST area's body past its first huge page: huge if huge pages pay now (its sample in, or none taken). */
void huge_back_rest(struct vmap_area *va);
/* Whether a huge area's growth in place gets huge pages too: not under UVM_THP=auto while they do not pay. */
bool huge_grow_pays(void);
/* The first touch of the huge page at addr, timed into UVM_THP=auto's verdict for an if-pays kind. */
void huge_touch(uintptr_t addr, enum huge_kind kind);
/* The body of va: [*start, *end), empty when the area holds no full 2 MiB. */
void huge_body(const struct vmap_area *va, uintptr_t *start, uintptr_t *end);
/* Before the pages of a run are given back: hugetlb bodies become plain pages again. */
void huge_unback(struct vmap_area *va);
/* Its part of the exported descriptor: the UVM_THP mode and auto's verdict (thp.c). */
struct uvm_descriptor;
void huge_describe(struct uvm_descriptor *d);
/* Hugetlb pages free in the pool for us (free minus reserved), from sysfs. */
long huge_pool_free(void);

#endif
