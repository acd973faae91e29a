/*
 * override.c - malloc & co. of libuvmalloc-preload.so and .a, the only
 * place where they are defined.  Each is the uvm_malloc function of the
 * same meaning.  The preload library holds the whole allocator and exports
 * the uvm_* API as well: a program that also links libuvmalloc.so, and is
 * preloaded, finds every name in the preloaded library first, hence one
 * heap.  In that library the first nine below are the uvm_ functions
 * themselves under a second name (preload/meson.build: a call lands on the
 * allocator with no jump between); their definitions here serve the
 * static archive.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uvmalloc.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t size) { return uvm_malloc(size); }
EXPORT void free(void *p) { uvm_free(p); }
EXPORT void *calloc(size_t n, size_t size) { return uvm_calloc(n, size); }
EXPORT void *realloc(void *p, size_t size) { return uvm_realloc(p, size); }
EXPORT void *reallocarray(void *p, size_t n, size_t size) { return uvm_reallocarray(p, n, size); }
EXPORT int posix_memalign(void **out, size_t align, size_t size) { return uvm_posix_memalign(out, align, size); }
EXPORT void *aligned_alloc(size_t align, size_t size) { return uvm_aligned_alloc(align, size); }
EXPORT void *memalign(size_t align, size_t size) { return uvm_memalign(align, size); }
EXPORT size_t malloc_usable_size(void *p) { return uvm_malloc_usable_size(p); }

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

EXPORT void *valloc(size_t size) { return uvm_memalign(page_size(), size); }

EXPORT void *pvalloc(size_t size)
{
	size_t page = page_size();

	if (size > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return uvm_memalign(page, (size + page - 1) & ~(page - 1));
}

/* glibc's malloc_trim: give back what can be given back; 1 = something was released. */
EXPORT int malloc_trim(size_t pad)
{
	(void)pad;
	uvm_purge();
	return 1;
}

static struct mallinfo2 info2(void)
{
	struct uvm_stats st;
	struct mallinfo2 mi;

	uvm_stats(&st);
	memset(&mi, 0, sizeof(mi));
	mi.arena = st.committed_bytes;                               /* address space made usable */
	mi.hblks = st.busy_count;                                    /* live areas, slabs included */
	mi.hblkhd = st.busy_bytes;
	mi.uordblks = st.busy_bytes;                                 /* in use */
	mi.fordblks = st.cached_bytes + st.lazy_bytes + st.pooled_bytes; /* freed, still held */
	mi.keepcost = st.largest_free;
	return mi;
}

EXPORT struct mallinfo2 mallinfo2(void) { return info2(); }

/* The old int-sized form, still called by some programs; values saturate. */
EXPORT struct mallinfo mallinfo(void)
{
	struct mallinfo2 m2 = info2();
	struct mallinfo mi;

	memset(&mi, 0, sizeof(mi));
#define SAT(x) ((x) > (size_t)__INT_MAX__ ? __INT_MAX__ : (int)(x))
	mi.arena = SAT(m2.arena);
	mi.hblks = SAT(m2.hblks);
	mi.hblkhd = SAT(m2.hblkhd);
	mi.uordblks = SAT(m2.uordblks);
	mi.fordblks = SAT(m2.fordblks);
	mi.keepcost = SAT(m2.keepcost);
#undef SAT
	return mi;
}

EXPORT void malloc_stats(void) { uvm_stats_print(stderr); }
