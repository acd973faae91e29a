/*
 * init.c - start-up and fork.
 *
 * The first call of any uvm_* function sets everything up under
 * pthread_once: options, vmap nodes, the first region.  fork() in a threaded
 * program takes every lock of lib/ in the prepare handler, in the order the
 * code nests them (purge first), so the child starts with consistent trees;
 * the child then re-initialises its locks rather than unlocking locks that
 * other, vanished threads may have been waiting on.
 */
#include "init.h"

#include <errno.h>
#include <pthread.h>
#include <sys/sysinfo.h>

#include "arena.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "purge.h"
#include "vnode.h"

atomic_bool uvm_ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_err;

static void fork_prepare(void)
{
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
}

static void fork_child(void)
{
	meta_fork_child();
	arena_fork_child();
	vn_fork_child();
	purge_fork_child();
}

/* nr_vmap_nodes = clamp(CPUs, 1, 128), as mainline settled on. */
static unsigned node_count(unsigned cpus)
{
	long long opt = option(OPT_NODES);

	if (opt)
		return (unsigned)opt;
	return cpus < VN_MAX_NODES ? cpus : VN_MAX_NODES;
}

static void init_once(void)
{
	int cpus = get_nprocs();

	if (cpus < 1)
		cpus = 1;
	options_init();
	os_init((int)option(OPT_GUARD));
	arena_init();
	purge_init((unsigned)cpus);
	init_err = vn_init(node_count((unsigned)cpus));
	if (!init_err)
		init_err = arena_grow(0, UVM_PAGE_SIZE);
	if (!init_err && pthread_atfork(fork_prepare, fork_parent, fork_child))
		init_err = ENOMEM;
	if (!init_err)
		atomic_store_explicit(&uvm_ready, true, memory_order_release);
}

int init_slow(void)
{
	pthread_once(&once, init_once);
	return init_err;
}
