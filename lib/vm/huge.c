/*
 * huge.c - huge bodies for huge areas: THP by madvise, or hugetlb pages.
 *
 * Userspace difference: the kernel maps a PMD per 2 MiB of the body; here
 * the body's VMA gets MADV_HUGEPAGE before any page is touched, so the first
 * touch of each 2 MiB faults one huge page (machine-facts: ~30x cheaper per
 * byte than 4 KiB faults; where a host makes it dearer, UVM_THP=auto,
 * thp.c, sees it and leaves areas small).  Regions are MADV_NOHUGEPAGE as a whole
 * (arena.c), so only bodies get huge pages, and a body given back flips to
 * NOHUGEPAGE again: its VMA merges with the region around it, and the count
 * of VMAs stays at two or three per live huge area, far from
 * vm.max_map_count.  Pools and thread caches keep a huge area whole and
 * backed, so reusing one costs no fault at all.
 *
 * hugetlb: the body is replaced by a MAP_HUGETLB mapping (MAP_FIXED) when
 * the pool has enough free pages; if it has not, or the mapping fails, the
 * area falls back to THP, never to failure.
 */
#include "huge.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h> /* hugetlbfs.h uses size_t without it */
#include <hugetlbfs.h>
#include <stdlib.h>
#include <unistd.h>

#include "options.h"
#include "os.h"
#include "thp.h"
#include "uvmalloc-descriptor.h"

#define HUGETLB_SYSFS "/sys/kernel/mm/hugepages/hugepages-2048kB/"

static struct {
	enum thp_mode thp;
	bool hugetlb; /* UVM_HUGETLB=1 and the kernel offers 2 MiB hugetlb pages */
} huge;

/*
 * Asked of libhugetlbfs, opened here and only when UVM_HUGETLB asks for its
 * pages: linked, its constructor read /proc/meminfo and the whole of
 * /proc/mounts at the start of every program under the preload, UVM_HUGETLB
 * or not (0.6 ms added to a 0.8 ms /bin/true).  Without the library, no
 * hugetlb pages: bodies are THP's.
 */
static bool hugetlb_2m_supported(void)
{
	void *lib = dlopen("libhugetlbfs.so.0", RTLD_NOW | RTLD_LOCAL);
	__typeof__(gethugepagesizes) *sizes_of = lib ? (__typeof__(gethugepagesizes) *)dlsym(lib, "gethugepagesizes") : NULL;
	long sizes[8];
	int n = sizes_of ? sizes_of(sizes, 8) : 0;

	for (int i = 0; i < n; i++)
		if (sizes[i] == (long)HUGE_SIZE)
			return true;
	return false;
}

size_t uvm__huge_api_align = UVM_PAGE_SIZE;

void huge_describe(struct uvm_descriptor *d)
{
	d->thp_mode = (uint64_t)huge.thp + 1;
	thp_describe(d);
}

void huge_init(void)
{
	huge.thp = (enum thp_mode)option(OPT_THP);
	huge.hugetlb = option(OPT_HUGETLB) && hugetlb_2m_supported();
	uvm__huge_api_align = huge_wanted(0, true) != HUGE_NONE ? HUGE_SIZE : UVM_PAGE_SIZE;
}

enum huge_kind huge_wanted(size_t usable, bool huge_api)
{
	if (huge_api)
		return huge.thp == THP_NEVER && !huge.hugetlb ? HUGE_NONE : HUGE_ASKED;
	if (usable < HUGE_SIZE)
		return HUGE_NONE;
	if (huge.hugetlb || huge.thp == THP_ALWAYS)
		return HUGE_ASKED;
	return huge.thp == THP_AUTO ? HUGE_IF_PAYS : HUGE_NONE;
}

void huge_body(const struct vmap_area *va, uintptr_t *start, uintptr_t *end)
{
	*start = va->va_start;
	*end = align_down(va->va_end - UVM_PAGE_SIZE, HUGE_SIZE);
	if (*end < *start)
		*end = *start;
}

/* A number from a sysfs file, -1 when it cannot be read; no stdio, so no allocation. */
static long read_long(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

long huge_pool_free(void)
{
	long free_pages = read_long(HUGETLB_SYSFS "free_hugepages");
	long resv = read_long(HUGETLB_SYSFS "resv_hugepages");

	return free_pages < 0 || resv < 0 ? 0 : free_pages - resv;
}

/*
 * A timed area's body is backed huge a page at first: the rest waits for
 * the sample (huge_back_rest), so that a first touch that costs more than
 * its small pages (a host that took the memory back, UVM_THP=auto's case)
 * is paid once, not for every huge page of the area.  GNU sort's buffer of
 * 2 GiB (written 100 MiB of it), its whole body advised before its first
 * page was timed: each of those huge pages took 4.4 ms on a cold host, 0.36
 * s against 0.29 with small pages.
 */
enum huge_time huge_back(struct vmap_area *va, enum huge_kind kind)
{
	enum thp_try t = TRY_ALL;
	uintptr_t start, end;
	bool timed, first;

	huge_body(va, &start, &end);
	if (start == end || (huge.thp == THP_NEVER && !huge.hugetlb))
		return HUGE_UNTIMED;
	if (huge.hugetlb && huge_pool_free() >= (long)((end - start) / HUGE_SIZE) && !os_remap_hugetlb(start, end - start)) {
		va->flags |= VA_HUGETLB;
		return HUGE_UNTIMED;
	}
	if (huge.thp == THP_NEVER || (kind == HUGE_IF_PAYS && (t = thp_pays(end - start)) == TRY_NONE))
		return HUGE_UNTIMED;
	if (t == TRY_ONE)
		end = start + HUGE_SIZE; /* a look: one huge page, whatever the area's size */
	/* A populated area is faulted in whole now: no first touch to time, no sample to wait for. */
	timed = kind == HUGE_IF_PAYS && !option(OPT_POPULATE) && (t == TRY_ONE || thp_time_due(end - start));
	first = timed && end - start > HUGE_SIZE;
	if (os_hugepage(start, first ? HUGE_SIZE : end - start, 1))
		return HUGE_UNTIMED;
	va->flags |= VA_HUGE;
	return first ? HUGE_TIME_FIRST : timed ? HUGE_TIME : HUGE_UNTIMED;
}

void huge_back_rest(struct vmap_area *va)
{
	uintptr_t start, end;

	huge_body(va, &start, &end);
	if (thp_huge_now())
		os_hugepage(start + HUGE_SIZE, end - start - HUGE_SIZE, 1); /* refused: small pages, as any failed advice */
}

bool huge_grow_pays(void) { return huge.thp != THP_AUTO || thp_huge_now(); }

void huge_touch(uintptr_t addr, enum huge_kind kind)
{
	if (kind == HUGE_IF_PAYS)
		thp_touch(addr);
	else
		*(volatile char *)addr = 0;
}

void huge_unback(struct vmap_area *va)
{
	uintptr_t start, end;

	if (!(va->flags & VA_HUGETLB))
		return;
	huge_body(va, &start, &end);
	os_remap_plain(start, end - start);
	va->flags &= ~VA_HUGETLB;
}
