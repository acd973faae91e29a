/*
 * cases.h - the test_vmalloc cases that mean something in userspace, one
 * loop iteration each exactly as the kernel's lib/test_vmalloc.c does them.
 */
#ifndef VMBENCH_CASES_H
#define VMBENCH_CASES_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

struct run {
	const struct backend *be;
	long loops;      /* test_loop_count */
	long nr_pages;   /* nr_pages, at least 1 */
	bool use_huge;
	unsigned cpus;   /* for full_fit's lazy_max_pages */
	uint64_t rng;    /* per worker */
};

struct bench_case {
	const char *name;
	unsigned bit;      /* run_test_mask bit index */
	bool xfail;        /* expected to fail (align_shift) */
	int (*fn)(struct run *r);
};

/* In mask-bit order; cases without a userspace meaning (vm_map_ram, no_block) are absent. */
extern const struct bench_case bench_cases[];
extern const unsigned bench_nr_cases;

#endif
