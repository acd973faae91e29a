/*
 * numa_node.c - which node a thread is on, and binding regions to nodes.
 *
 * The policy is MPOL_PREFERRED, as vmalloc_node() prefers a node but falls
 * back to others rather than fail (no __GFP_THISNODE).  libnuma's own
 * set-up allocates, so everything here runs once, at init.
 *
 * libnuma is opened only on a machine with a second node, not linked: its
 * constructor read sysfs and asked the kernel for the policy at the start
 * of every program under the preload, on one-node machines too, where it
 * has nothing to say (0.22 ms added to a 0.8 ms /bin/true).
 */
#include "numa_node.h"

#include <dlfcn.h>
#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/sysinfo.h>
#include <unistd.h>

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

/* The libnuma calls the set-up makes, found in the library opened. */
struct libnuma {
	__typeof__(numa_available) *available;
	__typeof__(numa_max_node) *max_node;
	__typeof__(numa_num_configured_cpus) *configured_cpus;
	__typeof__(numa_node_of_cpu) *node_of_cpu;
};

/* Whether the machine has a second node and libnuma, opened, agrees; its calls into *f. */
static bool open_libnuma(struct libnuma *f)
{
	void *lib;

	if (access("/sys/devices/system/node/node1", F_OK) || !(lib = dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL)))
		return false;
	f->available = (__typeof__(f->available))dlsym(lib, "numa_available");
	f->max_node = (__typeof__(f->max_node))dlsym(lib, "numa_max_node");
	f->configured_cpus = (__typeof__(f->configured_cpus))dlsym(lib, "numa_num_configured_cpus");
	f->node_of_cpu = (__typeof__(f->node_of_cpu))dlsym(lib, "numa_node_of_cpu");
	return f->available && f->max_node && f->configured_cpus && f->node_of_cpu && f->available() >= 0 && f->max_node() > 0;
}

int numa_setup(void)
{
	unsigned fake = (unsigned)option(OPT_FAKE_NUMA);
	struct libnuma f;
	int cpus;

	numa.real = !fake && open_libnuma(&f);
	cpus = numa.real ? f.configured_cpus() : get_nprocs_conf();
	numa.fake = fake;
	numa.nodes = fake ? fake : numa.real ? (unsigned)f.max_node() + 1 : 1;
	if (numa.nodes > NUMA_MAX_NODES)
		numa.nodes = NUMA_MAX_NODES;
	uvm__numa_nodes = numa.nodes;
	numa.cpus = cpus > 0 ? (unsigned)cpus : 1;
	numa.cpu_node = os_alloc_meta(numa.cpus);
	if (!numa.cpu_node)
		return ENOMEM;
	for (unsigned c = 0; c < numa.cpus; c++) {
		int node = fake ? (int)(c % fake) : numa.real ? f.node_of_cpu((int)c) : 0;

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
