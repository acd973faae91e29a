// SPDX-License-Identifier: GPL-2.0
/*
 * vmtrace.bpf.c - the BPF side of vmtrace: handlers for uvmalloc's USDT
 * probes (lib/base/trace.h).  Everything is aggregated in maps the loader reads
 * each interval; nothing is sent per event, so a traced probe costs only
 * its trap.  GPL: BPF_CORE_READ needs bpf_probe_read_kernel.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "vmtrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load: 0 traces every process. */
const volatile int target_tgid = 0;
const volatile bool follow_children = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct vt_snap);
} snaps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VT_NR_EVENTS);
	__type(key, __u32);
	__type(value, __u64);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VT_HIST);
	__type(key, __u32);
	__type(value, __u64);
} size_hist SEC(".maps"), latency_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VT_MAX_SITES);
	__type(key, struct vt_site);
	__type(value, struct vt_site_val);
} sites SEC(".maps");

/* A blank snapshot to insert from: too large for the BPF stack next to everything else. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vt_snap);
} blank SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VT_MAX_BLOCKS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vt_block);
	__type(value, struct vt_block_val);
} heap_blocks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VT_MAX_STACKS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vt_stack_key);
	__type(value, struct vt_stack);
} heap_stacks SEC(".maps");

/* A stack being copied: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vt_stack);
} stack_scratch SEC(".maps");

static __u32 current_tgid(void) { return bpf_get_current_pid_tgid() >> 32; }

/* The target itself, or (following children) one of its descendants: the parents are read with CO-RE. */
static bool wanted(void)
{
	struct task_struct *t;
	__u32 tgid = current_tgid();

	if (!target_tgid || tgid == (__u32)target_tgid)
		return true;
	if (!follow_children)
		return false;
	t = (struct task_struct *)bpf_get_current_task();
	for (int i = 0; i < VT_ANCESTORS; i++) {
		int parent;

		t = BPF_CORE_READ(t, real_parent);
		if (!t)
			return false;
		parent = BPF_CORE_READ(t, tgid);
		if (parent == target_tgid)
			return true;
		if (parent <= 1)
			return false;
	}
	return false;
}

static void add(__u32 event, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&events, &event);

	if (v)
		*v += n;
}

/* The number of significant bits of x (clang 14's BPF back end cannot lower __builtin_clzll). */
static __u32 bits(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) { x >>= 32; n += 32; }
	if (x >> 16) { x >>= 16; n += 16; }
	if (x >> 8) { x >>= 8; n += 8; }
	if (x >> 4) { x >>= 4; n += 4; }
	if (x >> 2) { x >>= 2; n += 2; }
	if (x >> 1) { x >>= 1; n += 1; }
	return n + (__u32)x;
}

static void hist(void *map, __u64 x)
{
	__u32 bucket = bits(x); /* bucket b holds [2^(b-1), 2^b) */
	__u64 *v;

	if (bucket >= VT_HIST)
		bucket = VT_HIST - 1;
	v = bpf_map_lookup_elem(map, &bucket);
	if (v)
		*v += 1;
}

SEC("usdt")
int BPF_USDT(on_snapshot, void *st)
{
	__u32 tgid = current_tgid(), zero = 0;
	struct vt_snap *v;

	if (!wanted())
		return 0;
	v = bpf_map_lookup_elem(&snaps, &tgid);
	if (!v) {
		struct vt_snap *b = bpf_map_lookup_elem(&blank, &zero);

		if (!b)
			return 0;
		bpf_map_update_elem(&snaps, &tgid, b, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&snaps, &tgid);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->seq, 1);
	bpf_probe_read_user(v->words, sizeof(v->words), st);
	v->ns = bpf_ktime_get_ns();
	__sync_fetch_and_add(&v->seq, 1);
	add(VT_SNAPSHOT, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_alloc, __u64 size, __u64 align, __u64 ptr, __u64 caller, __u64 ns, int api)
{
	struct vt_site key = { .tgid = current_tgid(), .api = (unsigned)api, .caller = caller };
	struct vt_site_val *v, one = { size, 1 };

	if (!wanted() || !ptr)
		return 0;
	add(VT_ALLOC, 1);
	hist(&size_hist, size);
	hist(&latency_hist, ns);
	v = bpf_map_lookup_elem(&sites, &key);
	if (v) {
		__sync_fetch_and_add(&v->bytes, size);
		__sync_fetch_and_add(&v->count, 1);
	} else {
		bpf_map_update_elem(&sites, &key, &one, BPF_NOEXIST);
	}
	return 0;
}

/* --heap: a sample's block outstanding until its free; its stack copied from the process on first sight. */
SEC("usdt")
int BPF_USDT(on_prof_alloc, __u64 ptr, __u64 size, __u64 bytes, __u64 hash, __u32 depth, __u64 frames)
{
	struct vt_block key = { .tgid = current_tgid(), .ptr = ptr };
	struct vt_block_val v = { hash, bytes, size };
	struct vt_stack_key sk = { .tgid = key.tgid, .hash = hash };
	struct vt_stack *s;
	__u32 zero = 0;

	if (!wanted())
		return 0;
	bpf_map_update_elem(&heap_blocks, &key, &v, BPF_ANY);
	if (bpf_map_lookup_elem(&heap_stacks, &sk) || !(s = bpf_map_lookup_elem(&stack_scratch, &zero)))
		return 0;
	s->depth = depth < VT_DEPTH ? depth : VT_DEPTH;
	/* The whole array: the entry in the process always has VT_DEPTH slots, and a constant size passes the verifier. */
	if (bpf_probe_read_user(s->frames, sizeof(s->frames), (const void *)frames))
		return 0;
	bpf_map_update_elem(&heap_stacks, &sk, s, BPF_NOEXIST);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_prof_free, __u64 ptr)
{
	struct vt_block key = { .tgid = current_tgid(), .ptr = ptr };

	if (wanted())
		bpf_map_delete_elem(&heap_blocks, &key);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_cache_miss, __u64 pages, int nid)
{
	if (wanted())
		add(VT_CACHE_MISS, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_cache_drain, __u64 areas, __u64 pages)
{
	if (wanted()) {
		add(VT_CACHE_DRAIN, areas);
		add(VT_CACHE_DRAINED_PAGES, pages);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(on_pool_miss, __u64 pages)
{
	if (wanted())
		add(VT_POOL_MISS, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_tree_alloc, __u64 start, __u64 size, __u64 align)
{
	if (wanted())
		add(VT_TREE_ALLOC, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_region_new, __u64 start, __u64 size, int nid)
{
	if (wanted())
		add(VT_REGION_NEW, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_purge, __u64 areas, __u64 bytes, __u64 calls, __u64 ns)
{
	if (!wanted())
		return 0;
	add(VT_PURGE, 1);
	add(VT_PURGE_AREAS, areas);
	add(VT_PURGE_BYTES, bytes);
	add(VT_PURGE_CALLS, calls);
	add(VT_PURGE_NS, ns);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_slab_refill, int size, int source)
{
	if (!wanted())
		return 0;
	add(VT_SLAB_REFILL, 1);
	if (source == 2)
		add(VT_SLAB_NEW, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_slab_release, int size)
{
	if (wanted())
		add(VT_SLAB_RELEASE, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_thp_verdict, int pays, __u64 huge_ns, __u64 small_ns)
{
	if (!wanted())
		return 0;
	add(VT_THP_VERDICT, 1);
	if (!pays)
		add(VT_THP_SMALL, 1);
	return 0;
}
