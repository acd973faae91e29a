/*
 * stats.c - uvm_stats(): every layer adds its own counters.  Counters live
 * with the data they count, under the same lock, so the fast paths pay no
 * shared atomic for them (the kernel's v7.1 per-page vmstat lesson).
 */
#include <string.h>

#include "arena.h"
#include "init.h"
#include "os.h"
#include "pcp.h"
#include "purge.h"
#include "uvmalloc.h"
#include "vnode.h"

void uvm_stats(struct uvm_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (uvm_init())
		return;
	arena_stats(st);
	vn_stats(st);
	pcp_stats(st);
	purge_stats(st);
	os_stats(st);
	/* Busy trees hold cached areas too; under concurrent use the two reads may disagree a little. */
	st->busy_bytes = st->busy_bytes > st->cached_bytes ? st->busy_bytes - st->cached_bytes : 0;
	st->busy_count = st->busy_count > st->cached_count ? st->busy_count - st->cached_count : 0;
}
