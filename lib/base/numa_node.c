/*
 * numa_node.c - which node a thread is on, and binding regions to nodes.
 *
 * The policy is MPOL_PREFERRED, as vmalloc_node() prefers a node but falls
 * back to others rather than fail (no __GFP_THISNODE).  libnuma's own
 * set-up allocates, so everything here runs once, at init.
 */
#include "numa_node.h"

#include <errno.h>
#include <numa.h>
#include <sched.h>

#include "options.h"
#include "os.h"

static struct {
	unsigned nodes;        /* nodes areas can be placed on */
	unsigned fake;         /* UVM_FAKE_NUMA, 0 when real */
	unsigned cpus;         /* entries of cpu_node */
	unsigned char *cpu_node;
	int real;              /* libnuma works and the machine has more than one node */
} numa;

unsigned uvm__numa_nodes = 1; /* numa.nodes, for numa_local's inline test */

int numa_setup(void)
{
	unsigned fake = (unsigned)option(OPT_FAKE_NUMA);
	int cpus = numa_num_configured_cpus();

	numa.real = !fake && numa_available() >= 0 && numa_max_node() > 0;
	numa.fake = fake;
	numa.nodes = fake ? fake : numa.real ? (unsigned)numa_max_node() + 1 : 1;
	if (numa.nodes > NUMA_MAX_NODES)
		numa.nodes = NUMA_MAX_NODES;
	uvm__numa_nodes = numa.nodes;
	numa.cpus = cpus > 0 ? (unsigned)cpus : 1;
	numa.cpu_node = os_alloc_meta(numa.cpus);
	if (!numa.cpu_node)
		return ENOMEM;
	for (unsigned c = 0; c < numa.cpus; c++) {
		int node = fake ? (int)(c % fake) : numa.real ? numa_node_of_cpu((int)c) : 0;

		numa.cpu_node[c] = node < 0 || (unsigned)node >= numa.nodes ? 0 : (unsigned char)node;
	}
	return 0;
}

unsigned numa_nodes(void) { return numa.nodes; }

unsigned numa_local_slow(void)
{
	int cpu = sched_getcpu();


	return cpu < 0 || (unsigned)cpu >= numa.cpus ? 0 : numa.cpu_node[cpu];
}

void numa_bind_region(uintptr_t base, size_t size, unsigned nid)
{
	/* A fake node binds to the one real node: the call and its cost are real, the placement trivially so. */
	if (numa.real || numa.fake)
		os_bind(base, size, numa.real ? nid : 0);
}
