/*
 * tests/unit/base/test_options.c - settings while the program runs (lib/base/options.c):
 * uvm_option_get reads what is in force, uvm_option_set changes what may
 * change and reaches the layer that keeps a copy, and refuses an unknown
 * name, a setting fixed at set-up and a value out of range, keeping the
 * old value.
 */
#include "helpers.h"

#include <errno.h>

#include "pcp.h"
#include "purge.h"
#include "trace.h"
#include "uvmalloc.h"

extern volatile unsigned uvm__trace_sample;

static long long get(const char *name)
{
	long long v = -1;

	cr_assert_eq(uvm_option_get(name, &v), 0, "%s", name);
	return v;
}

Test(options, get_reads_the_value_in_force_with_or_without_the_prefix)
{
	cr_assert_eq(get("UVM_SLAB_MAX"), 3584);
	cr_assert_eq(get("SLAB_MAX"), 3584);
	cr_assert_eq(get("UVM_THP"), 3, "a keyword setting gives its word's index (auto)");
	cr_assert_eq(uvm_option_get("UVM_STAT", &(long long){ 0 }), ENOENT);
	cr_assert_eq(uvm_option_get(NULL, &(long long){ 0 }), ENOENT);
}

Test(options, set_reaches_the_layers)
{
	cr_assert_eq(uvm_option_set("UVM_LAZY_MAX", 300), 0);
	cr_assert_eq(get("LAZY_MAX"), 300);
	cr_assert_eq(purge_lazy_max(), 300);
	cr_assert_eq(uvm_option_set("LAZY_MAX", 0), 0, "back to the adaptive limit");
	cr_assert_gt(purge_lazy_max(), 300);

	cr_assert_eq(uvm_option_set("UVM_PCP_HIGH", 1 << 20), 0);
	cr_assert_eq(uvm__pcp_high_max, 256, "the caches' cap in pages");
	cr_assert_eq(uvm_option_set("UVM_PCP_HIGH", 64 << 20), 0);

	cr_assert_eq(uvm_option_set("UVM_TRACE_SAMPLE", 7), 0);
	cr_assert_eq(uvm__trace_sample, 7);
	cr_assert_eq(uvm_option_set("UVM_TRACE_SAMPLE", 0), 0);

	cr_assert_eq(uvm_option_set("UVM_POPULATE", 1), 0);
	void *p = uvm_vmalloc(1 << 20); /* populated: works either way, and must not break */
	cr_assert_not_null(p);
	uvm_vfree(p);
	cr_assert_eq(uvm_option_set("UVM_POPULATE", 0), 0);
}

Test(options, refusals_keep_the_old_value)
{
	cr_assert_eq(uvm_option_set("UVM_NOPE", 1), ENOENT);
	cr_assert_eq(uvm_option_set("UVM_SLAB_MAX", 1024), EPERM, "slab classes are laid out at set-up");
	cr_assert_eq(get("UVM_SLAB_MAX"), 3584);
	cr_assert_eq(uvm_option_set("UVM_ARENA_SIZE", 1LL << 30), EPERM);
	cr_assert_eq(uvm_option_set("UVM_LAZY_MAX", -1), EINVAL);
	cr_assert_eq(uvm_option_set("UVM_LAZY_MAX", (1LL << 40) + 1), EINVAL);
	cr_assert_eq(uvm_option_set("UVM_STATS", 3), EINVAL);
	cr_assert_eq(get("UVM_STATS"), 0);
}
