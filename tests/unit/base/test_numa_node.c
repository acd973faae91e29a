/*
 * tests/unit/base/test_numa_node.c - NUMA placement (lib/base/numa_node.c, per-node free trees in
 * lib/vm/arena.c): uvm_vmalloc_node, the thread's own node by default, caches
 * and pools kept per node, N<node>= in vmallocinfo.  UVM_FAKE_NUMA=2 runs
 * every path on a one-node machine; on a real multi-node machine the pages'
 * nodes are checked with get_mempolicy.
 */
#include "helpers.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>

#include "arena.h"
#include "purge.h"
#include "uvmalloc.h"

static void two_fake_nodes(void) { setenv("UVM_FAKE_NUMA", "2", 1); }

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}

Test(numa, vmalloc_node_places_on_that_node, .init = two_fake_nodes)
{
	char *a = uvm_vmalloc_node(64 << 10, 1), *b = uvm_vmalloc_node(64 << 10, 0);
	char *buf = NULL, line[128];
	size_t len = 0;
	FILE *f;

	cr_assert_eq(arena_nid((uintptr_t)a), 1);
	cr_assert_eq(arena_nid((uintptr_t)b), 0);
	errno = 0;
	cr_assert_null(uvm_vmalloc_node(4096, 2));
	cr_assert_eq(errno, EINVAL, "node 2 of 2");
	f = open_memstream(&buf, &len);
	uvm_vmallocinfo(f);
	fclose(f);
	snprintf(line, sizeof(line), "0x%016lx-0x%016lx   69632 ", (unsigned long)a, (unsigned long)a + 69632);
	cr_assert_not_null(strstr(buf, line), "no line for a in:\n%s", buf);
	cr_assert_not_null(strstr(strstr(buf, line), "pages=16 vmalloc N1=16\n"), "no N1=16 for a in:\n%s", buf);
	free(buf);
}

/* By default an area goes on the node of the CPU the thread runs on (fake nodes: CPU c is node c % 2). */
Test(numa, default_is_the_threads_node, .init = two_fake_nodes)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs 2 CPUs to put a thread on fake node 1");
	pin_to(1);
	cr_assert_eq(arena_nid((uintptr_t)uvm_vmalloc(4096)), 1);
	pin_to(0);
	cr_assert_eq(arena_nid((uintptr_t)uvm_vmalloc(4096)), 0);
	cr_assert_eq(arena_nid((uintptr_t)uvm_vmalloc_node(4096, -1)), 0);
}

/* A cached area of node 1 serves node 1 only. */
Test(numa, thread_caches_are_per_node, .init = two_fake_nodes)
{
	char *a = uvm_vmalloc_node(8 << 10, 1);

	uvm_vfree(a);
	char *b = uvm_vmalloc_node(8 << 10, 0);
	cr_assert_neq(b, a, "node 0 got node 1's area");
	cr_assert_eq(uvm_vmalloc_node(8 << 10, 1), a);
}

static void fake_nodes_no_caches(void)
{
	two_fake_nodes();
	setenv("UVM_PCP", "0", 1);
}

/* Pools hold areas of both nodes; a pool hit must be on the asked-for node. */
Test(numa, pools_serve_the_right_node, .init = fake_nodes_no_caches)
{
	char *a = uvm_vmalloc_node(8 << 10, 1);

	pin_to(0);
	uvm_vfree(a);
	purge_now(0);
	char *b = uvm_vmalloc_node(8 << 10, 0);
	cr_assert_neq(b, a, "node 0 got node 1's pooled area");
	cr_assert_eq(uvm_vmalloc_node(8 << 10, 1), a);
}

/* Regions are bound with mbind; on a machine with several nodes the pages really are there. */
Test(numa, pages_are_on_the_node, .init = two_fake_nodes)
{
	int mode = -1;
	char *p = uvm_vmalloc_node(1 << 20, 1);

	p[0] = 1;
	cr_assert_eq(get_mempolicy(&mode, NULL, 0, p, MPOL_F_ADDR), 0);
	cr_assert_eq(mode, MPOL_PREFERRED, "the fake node's region is not bound (mode %d)", mode);
	if (numa_available() < 0 || numa_max_node() < 1)
		cr_skip_test("one real NUMA node: binding checked, placement on other nodes not");
}

/* Real nodes (no fake): each node's area has its pages on that node. */
Test(numa, real_placement)
{
	if (numa_available() < 0 || numa_max_node() < 1)
		cr_skip_test("one real NUMA node: nothing to place elsewhere");
	for (int node = 0; node <= numa_max_node(); node++) {
		int where = -1;
		char *p;

		if (!numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node))
			continue;
		p = uvm_vmalloc_node(1 << 20, node);
		cr_assert_not_null(p);
		memset(p, 1, 1 << 20);
		cr_assert_eq(get_mempolicy(&where, NULL, 0, p, MPOL_F_NODE | MPOL_F_ADDR), 0);
		cr_assert_eq(where, node, "area for node %d has its pages on node %d", node, where);
	}
}
