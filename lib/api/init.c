/*
 * init.c - start-up and fork.
 *
 * The first call of any uvm_* function sets everything up under
 * pthread_once: options, NUMA nodes, vmap nodes, free trees, thread caches,
 * the first region.  The fork handlers are
 * registered at load time, before any second thread can exist, and the
 * prepare handler first takes the set-up lock: a fork() racing with the first
 * allocations of other threads waits for the set-up to finish instead of
 * leaving the child half set up.  fork() in a threaded
 * program takes every lock of lib/ in the prepare handler, in the order the
 * code nests them (slabs, then the thread heaps, claimed (heap.h), then purge), so the child starts with consistent trees;
 * the child then re-initialises its locks rather than unlocking locks that
 * other, vanished threads may have been waiting on.
 */
#include "init.h"

#include <pthread.h>
#include <sys/sysinfo.h>

#include "arena.h"
#include "descriptor.h"
#include "heap.h"
#include "huge.h"
#include "lock.h"
#include "meta.h"
#include "numa_node.h"
#include "options.h"
#include "os.h"
#include "pcp.h"
#include "probes.h"
#include "prof.h"
#include "purge.h"
#include "slab.h"
#include "stats.h"
#include "trace.h"
#include "vnode.h"

atomic_bool uvm_ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_err;

static uvm_lock_t init_lock = UVM_LOCK_INIT;

static void fork_prepare(void)
{
	uvm_lock(&init_lock);
	prof_fork_prepare(); /* never held while another lock is taken */
	slab_fork_prepare();
	heap_fork_prepare();
	purge_fork_prepare();
	vn_fork_prepare();
	arena_fork_prepare();
	meta_fork_prepare();
}

static void fork_parent(void)
{
	meta_fork_parent();
	arena_fork_parent();
	vn_fork_parent();
	purge_fork_parent();
	heap_fork_parent();
	slab_fork_parent();
	prof_fork_parent();
	uvm_unlock(&init_lock);
}

static void fork_child(void)
{
	meta_fork_child();
	arena_fork_child();
	vn_fork_child();
	purge_fork_child();
	heap_fork_child();
	slab_fork_child();
	prof_fork_child();
	uvm_lock_init(&init_lock);
}

/* nr_vmap_nodes = clamp(CPUs, 1, 128), as mainline settled on. */
static unsigned node_count(unsigned cpus)
{
	long long opt = option(OPT_NODES);

	if (opt)
		return (unsigned)opt;
	return cpus < VN_MAX_NODES ? cpus : VN_MAX_NODES;
}

static __thread bool initializing __attribute__((tls_model("initial-exec")));

bool init_in_progress_here(void) { return initializing; }

static void init_once(void)
{
	int cpus;

	/* Set-up calls libraries (libnuma, libhugetlbfs, stdio) that may call malloc: that is us, not yet up. */
	initializing = true;
	cpus = get_nprocs();
	if (cpus < 1)
		cpus = 1;
	uvm_lock(&init_lock);
	options_init();
	os_init((int)option(OPT_GUARD));
	huge_init();
	meta_init((unsigned)cpus);
	purge_init((unsigned)cpus);
	init_err = numa_setup();
	if (!init_err)
		init_err = vn_init(node_count((unsigned)cpus));
	if (!init_err)
		init_err = arena_init(numa_nodes());
	if (!init_err)
		init_err = pcp_init(numa_nodes());
	if (!init_err)
		init_err = heap_init(numa_nodes(), (unsigned)cpus);
	if (!init_err)
		init_err = slab_init();
	stats_init();
	trace_init();
	probes_init();
	prof_init();
	if (!init_err)
		init_err = arena_grow(numa_local(), 0, UVM_PAGE_SIZE);
	if (!init_err) {
		descriptor_init();
		atomic_store_explicit(&uvm_ready, true, memory_order_release);
	}
	uvm_unlock(&init_lock);
	initializing = false;
}

int init_slow(void)
{
	pthread_once(&once, init_once);
	return init_err;
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
