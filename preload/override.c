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
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
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

/*
 * glibc's tuning calls have nothing to tune here (our settings are the
 * UVM_* variables and uvm_option_set): accepted and ignored, 1 as glibc
 * returns for a parameter it takes, so that a program setting M_ARENA_MAX
 * or M_MMAP_THRESHOLD runs on unchanged.
 */
EXPORT int mallopt(int param, int value)
{
	(void)param;
	(void)value;
	return 1;
}

/* One <size> of malloc_info's per class with freed objects (glibc's bins of free chunks); the freed objects counted. */
static uint64_t info_sizes(FILE *fp, const struct uvm_frag *f)
{
	uint64_t from = 1, count = 0;

	for (unsigned i = 0; i < UVM_FRAG_CLASSES + UVM_FRAG_CLASSES_MORE; i++) {
		const struct uvm_frag_class *c = uvm_frag_class_at(f, i);

		if (!c->size)
			continue;
		if (c->free)
			fprintf(fp, "<size from=\"%" PRIu64 "\" to=\"%" PRIu64 "\" total=\"%" PRIu64 "\" count=\"%" PRIu64 "\"/>\n",
				from, c->size, c->free * c->size, c->free);
		count += c->free;
		from = c->size + 1;
	}
	return count;
}

/* The figures malloc_info writes for one heap and again for the process: rest_* the freed objects and areas held. */
static void info_totals(FILE *fp, const struct uvm_frag *f, uint64_t rest_count, uint64_t rest_bytes, bool process)
{
	fprintf(fp, "<total type=\"fast\" count=\"0\" size=\"0\"/>\n");
	fprintf(fp, "<total type=\"rest\" count=\"%" PRIu64 "\" size=\"%" PRIu64 "\"/>\n", rest_count, rest_bytes);
	if (process)
		fprintf(fp, "<total type=\"mmap\" count=\"0\" size=\"0\"/>\n");
	fprintf(fp, "<system type=\"current\" size=\"%" PRIu64 "\"/>\n", f->span_bytes);
	fprintf(fp, "<system type=\"max\" size=\"%" PRIu64 "\"/>\n", f->span_bytes);
	fprintf(fp, "<aspace type=\"total\" size=\"%" PRIu64 "\"/>\n", f->span_bytes);
	fprintf(fp, "<aspace type=\"mprotect\" size=\"%" PRIu64 "\"/>\n", f->span_bytes);
}

/*
 * glibc's XML report, in its schema (version 1), with our figures: the
 * whole process as heap 0 (threads' heaps are not arenas one could name),
 * freed slab objects by class as its <sizes>, and as its free "rest" those
 * with the freed areas still held (thread caches, lazy lists, pools).  The
 * system and address-space sizes are the committed part of the regions,
 * which only grows (hence max); no block is a mapping of its own (mmap 0).
 * Left to glibc, it described glibc's own arena, empty under the preload.
 */
EXPORT int malloc_info(int options, FILE *fp)
{
	struct uvm_frag f;
	struct uvm_stats st;
	uint64_t count, bytes;

	if (options || !fp) {
		errno = EINVAL;
		return -1;
	}
	if (uvm_frag_stats(&f, sizeof(f)))
		return -1;
	uvm_stats(&st);
	fputs("<malloc version=\"1\">\n<heap nr=\"0\">\n<sizes>\n", fp);
	count = info_sizes(fp, &f) + st.cached_count + st.lazy_count + st.pooled_count;
	bytes = f.slab_free_bytes + f.cached_bytes + f.lazy_bytes + f.pooled_bytes;
	fputs("</sizes>\n", fp);
	info_totals(fp, &f, count, bytes, false);
	fputs("</heap>\n", fp);
	info_totals(fp, &f, count, bytes, true);
	fputs("</malloc>\n", fp);
	return 0;
}

/*
 * glibc's own names for the family, public since 2.2.5 (a wrapper of
 * malloc calls them for "the real one"), and cfree, which binaries built
 * before glibc 2.26 still call: ours too, so that what one of them
 * allocates the others free.  Left to glibc, __libc_malloc's block was a
 * bad pointer to our free, and our block one to __libc_free (mimalloc and
 * tcmalloc define them; Debian's jemalloc does not and aborts the same
 * way).  In a -static program they also keep libc.a's malloc.o out, which
 * defines malloc itself: the link failed on a multiple definition whenever
 * the program called any of its names (mallopt, malloc_info).  In the
 * preload library the first six are uvm_ functions under a third name
 * (preload/meson.build).
 */
#define ALIAS(f) __attribute__((alias(#f), copy(f))) /* copy: f's attributes (malloc, alloc_size...), as -Wmissing-attributes asks */
EXPORT void *__libc_malloc(size_t size) ALIAS(malloc);
EXPORT void __libc_free(void *p) ALIAS(free);
EXPORT void cfree(void *p) ALIAS(free);
EXPORT void *__libc_calloc(size_t n, size_t size) ALIAS(calloc);
EXPORT void *__libc_realloc(void *p, size_t size) ALIAS(realloc);
EXPORT void *__libc_memalign(size_t align, size_t size) ALIAS(memalign);
EXPORT void *__libc_valloc(size_t size) ALIAS(valloc);
EXPORT void *__libc_pvalloc(size_t size) ALIAS(pvalloc);
EXPORT struct mallinfo __libc_mallinfo(void) __attribute__((alias("mallinfo"))); /* no copy: it would copy the deprecation */
EXPORT int __libc_mallopt(int param, int value) ALIAS(mallopt);
