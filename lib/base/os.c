/*
 * os.c - the only file of lib/ that talks to the kernel's memory manager.
 */
#include "os.h"

#include "numa_node.h"
#include "track.h"
#include "util.h"
#include "uvmalloc-descriptor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <numaif.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* glibc 2.36 predates these; the kernel numbers are fixed ABI. */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#ifndef PIDFD_SELF_THREAD
#define PIDFD_SELF_THREAD -10000 /* Linux 6.14+: the calling thread, no descriptor (its mm is the process's) */
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

static _Atomic uint64_t nr_mmap, nr_mprotect, nr_madvise, nr_mremap, nr_other; /* other: prctl, mbind */
static atomic_bool guards; /* UVM_GUARD=1 and the kernel has not refused it */
static atomic_bool filtered; /* a seccomp filter seen: no process_madvise, one madvise a range */
static atomic_bool refused_release, refused_guard, refused_nohuge; /* process_madvise refused that advice: one madvise a range */

static inline void count(_Atomic uint64_t *c) { atomic_fetch_add_explicit(c, 1, memory_order_relaxed); }

int os_reserve(size_t size, uintptr_t *base)
{
	void *p;

	count(&nr_mmap);
	p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return ENOMEM;
	/* Best effort: kernels without CONFIG_ANON_VMA_NAME answer EINVAL, and the region is then plain [anon]. */
	count(&nr_other);
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, size, (unsigned long)"uvmalloc");
	*base = (uintptr_t)p;
	return 0;
}

void os_unreserve(uintptr_t base, size_t size)
{
	count(&nr_mmap);
	munmap((void *)base, size);
}

int os_commit(uintptr_t addr, size_t size)
{
	count(&nr_mprotect);
	return mprotect((void *)addr, size, PROT_READ | PROT_WRITE) ? ENOMEM : 0;
}

/* The ranges r[0..n) advised one madvise each (the errors ignored: a purge has no one to tell); the calls. */
static size_t advise_each(const struct iovec *r, size_t n, int advice)
{
	for (size_t i = 0; i < n; i++) {
		count(&nr_madvise);
		madvise(r[i].iov_base, r[i].iov_len, advice);
	}
	return n;
}

/*
 * Whether process_madvise may be tried: not under a seccomp filter, which
 * may answer a system call it does not know by killing the process (every
 * filter lets madvise through: every allocator makes it).  Asked before
 * each batch, since a program may install a filter at any time.
 */
static bool vector_allowed(atomic_bool *refused)
{
	if (atomic_load_explicit(refused, memory_order_relaxed) || atomic_load_explicit(&filtered, memory_order_relaxed))
		return false;
	count(&nr_other);
	if (prctl(PR_GET_SECCOMP) == 0)
		return true;
	atomic_store_explicit(&filtered, true, memory_order_relaxed);
	return false;
}

/*
 * One process_madvise for the ranges r[0..n) (n <= IOV_MAX), on this
 * process (PIDFD_SELF_THREAD): the ranges it did not advise.  The kernel
 * advises the ranges in order and stops at an error, so the bytes it
 * reports are whole ranges, and the first one left may be partly done,
 * which advising again costs nothing but the call.  An error before any
 * range is the first range's (an mlocked one answers EINVAL), or a
 * refusal of the call itself (before Linux 6.14, or a kernel whose
 * process_madvise does not take the advice): advise_ranges tells them
 * apart by the first range's own madvise.
 */
static size_t advise_vector(const struct iovec *r, size_t n, int advice)
{
	ssize_t done;
	size_t i = 0;

	count(&nr_madvise);
	done = syscall(SYS_process_madvise, PIDFD_SELF_THREAD, r, n, advice, 0);
	if (done < 0)
		return n;
	for (; i < n && (size_t)done >= r[i].iov_len; i++)
		done -= (ssize_t)r[i].iov_len;
	return n - i;
}

/* The ranges r[0..n) advised, in batches where the kernel takes them; the madvise calls made. */
static size_t advise_ranges(const struct iovec *r, size_t n, int advice, atomic_bool *refused)
{
	int saved = errno; /* a free's purge leaves the program's errno as it found it */
	size_t calls = 0;

	while (n > 1 && vector_allowed(refused)) {
		size_t k = n < IOV_MAX ? n : IOV_MAX, left = advise_vector(r, k, advice);

		calls++;
		if (left == k) {
			/* Nothing done: a refusal of the call, for good, if the first range takes its madvise. */
			count(&nr_madvise);
			if (!madvise(r[0].iov_base, r[0].iov_len, advice))
				atomic_store_explicit(refused, true, memory_order_relaxed);
			calls++;
			left--;
		}
		r += k - left;
		n -= k - left;
		if (left)
			break;
	}
	calls += advise_each(r, n, advice);
	errno = saved;
	return calls;
}

size_t os_discard_ranges(const struct iovec *r, size_t n) { return advise_ranges(r, n, MADV_DONTNEED, &refused_release); }

size_t os_release_ranges(const struct iovec *r, size_t n)
{
	size_t calls = os_discard_ranges(r, n);

	if (atomic_load_explicit(&guards, memory_order_relaxed))
		calls += advise_ranges(r, n, MADV_GUARD_REMOVE, &refused_guard);
	return calls;
}

size_t os_nohugepage_ranges(const struct iovec *r, size_t n) { return advise_ranges(r, n, MADV_NOHUGEPAGE, &refused_nohuge); }

static void *map_meta(size_t size, int flags)
{
	void *p;

	count(&nr_mmap);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	track_meta(p, size);
	return p;
}

void *os_alloc_meta(size_t size) { return map_meta(size, MAP_NORESERVE); }

void *os_alloc_meta_backed(size_t size) { return map_meta(size, MAP_POPULATE); }

void os_free_meta(void *p, size_t size)
{
	count(&nr_mmap);
	track_meta_gone(p, size);
	munmap(p, size);
}

int os_hugepage(uintptr_t addr, size_t size, int huge)
{
	count(&nr_madvise);
	return madvise((void *)addr, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) ? errno : 0;
}

int os_populate(uintptr_t addr, size_t size)
{
	count(&nr_madvise);
	return madvise((void *)addr, size, MADV_POPULATE_WRITE) ? errno : 0;
}

int os_map_fresh(uintptr_t addr, size_t size)
{
	count(&nr_mmap);
	if (mmap((void *)addr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		return errno;
	return 0;
}

/* Plain anonymous pages over [addr, addr + size), as a committed part of a region has. */
int os_remap_plain(uintptr_t addr, size_t size)
{
	int err = os_map_fresh(addr, size);

	/* The same VMA flags as the region around it, so the kernel can merge them again. */
	return err ? err : os_hugepage(addr, size, 0);
}

int os_remap_hugetlb(uintptr_t addr, size_t size)
{
	void *p;

	count(&nr_mmap);
	p = mmap((void *)addr, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0);
	if (p != MAP_FAILED)
		return 0;
	/* Whether a failed MAP_FIXED left the old pages is kernel-dependent: put plain ones back either way. */
	return os_remap_plain(addr, size) ? EFAULT : ENOMEM;
}

/*
 * MREMAP_DONTUNMAP (Linux 5.7+) leaves the source mapped, empty: no hole
 * between the move and a mapping put back over it (which vm.max_map_count
 * can refuse, and the caller then copied from the hole), and one call
 * instead of three.  Older kernels refuse it (EINVAL): then the plain move.
 */
static atomic_bool refused_dontunmap;

int os_move(uintptr_t from, uintptr_t to, size_t size)
{
	int err;

	count(&nr_mremap);
	if (!atomic_load_explicit(&refused_dontunmap, memory_order_relaxed)) {
		if (mremap((void *)from, size, size, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, (void *)to) !=
		    MAP_FAILED)
			return 0;
		if (errno != EINVAL)
			return errno;
		atomic_store_explicit(&refused_dontunmap, true, memory_order_relaxed);
	}
	if (mremap((void *)from, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)to) == MAP_FAILED)
		return errno;
	/* The source is a hole in the region now: plain pages again, so the region stays whole. */
	err = os_remap_plain(from, size);
	if (err)
		os_abort("uvmalloc: pages moved from %p, but the range could not be mapped again (errno %d)\n", (void *)from,
			 err);
	return 0;
}

void os_bind(uintptr_t addr, size_t size, unsigned node)
{
	unsigned long mask[(NUMA_MAX_NODES + 63) / 64] = { 0 };

	mask[node / 64] = 1ul << (node % 64);
	count(&nr_other);
	/*
	 * Best effort, as first-touch placement is: a refusal leaves the default
	 * policy.  The system call, not libnuma's wrapper: libnuma is opened only
	 * where a second node is (numa_node.c).
	 */
	if (syscall(SYS_mbind, addr, size, MPOL_PREFERRED, mask, NUMA_MAX_NODES + 1, 0))
		return;
}

void os_init(int guard_pages) { atomic_store(&guards, guard_pages != 0); }

bool os_guards(void) { return atomic_load_explicit(&guards, memory_order_relaxed); }

void os_abort(const char *fmt, ...)
{
	char msg[192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n > 0 && write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1) < 0)
		abort();
	abort();
}

/* Said once, by whichever thread saw the refusal first. */
static void say_guard_missing(void)
{
	static const char msg[] = "uvmalloc: UVM_GUARD=1 but this kernel has no MADV_GUARD_INSTALL (Linux 6.13+): "
				  "going on without guard pages\n";

	if (atomic_exchange(&guards, false) && write(2, msg, sizeof(msg) - 1) < 0)
		return;
}

int os_guard_install(uintptr_t addr, size_t size)
{
	if (!atomic_load_explicit(&guards, memory_order_relaxed))
		return 0;
	count(&nr_madvise);
	if (!madvise((void *)addr, size, MADV_GUARD_INSTALL))
		return 0;
	if (errno != EINVAL)
		return errno;
	say_guard_missing();
	return ENOSYS;
}

int os_guard_remove(uintptr_t addr, size_t size)
{
	if (!atomic_load_explicit(&guards, memory_order_relaxed))
		return 0;
	count(&nr_madvise);
	return madvise((void *)addr, size, MADV_GUARD_REMOVE) ? errno : 0;
}

/* The kB figure after "key" in a /proc status text, in bytes; 0 if absent. */
static uint64_t status_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	uint64_t kb = 0;

	if (!p)
		return 0;
	for (p += strlen(key); *p == ' ' || *p == '\t'; p++)
		;
	for (; *p >= '0' && *p <= '9'; p++)
		kb = kb * 10 + (uint64_t)(*p - '0');
	return kb << 10;
}

void os_process_rss(uint64_t *rss, uint64_t *peak)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	*rss = status_kb(buf, "VmRSS:");
	*peak = status_kb(buf, "VmHWM:");
}

void os_process_faults(uint64_t *minor, uint64_t *major)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		memset(&ru, 0, sizeof(ru));
	*minor = (uint64_t)ru.ru_minflt;
	*major = (uint64_t)ru.ru_majflt;
}

size_t os_resident(uintptr_t addr, size_t size)
{
	unsigned char vec[4096];
	size_t pages = 0;

	for (size_t done = 0; done < size;) {
		size_t len = size - done < sizeof(vec) * UVM_PAGE_SIZE ? size - done : sizeof(vec) * UVM_PAGE_SIZE;

		if (mincore((void *)(addr + done), len, vec))
			break;
		for (size_t i = 0; i < len >> UVM_PAGE_SHIFT; i++)
			pages += vec[i] & 1;
		done += len;
	}
	return pages << UVM_PAGE_SHIFT;
}

void os_stats(struct uvm_stats *st)
{
	st->mmap_calls = atomic_load_explicit(&nr_mmap, memory_order_relaxed);
	st->mremap_calls = atomic_load_explicit(&nr_mremap, memory_order_relaxed);
	st->mprotect_calls = atomic_load_explicit(&nr_mprotect, memory_order_relaxed);
	st->madvise_calls = atomic_load_explicit(&nr_madvise, memory_order_relaxed);
	st->syscalls = os_syscalls();
}

uint64_t os_syscalls(void)
{
	return atomic_load_explicit(&nr_mmap, memory_order_relaxed) +
	       atomic_load_explicit(&nr_mprotect, memory_order_relaxed) +
	       atomic_load_explicit(&nr_madvise, memory_order_relaxed) +
	       atomic_load_explicit(&nr_mremap, memory_order_relaxed) + atomic_load_explicit(&nr_other, memory_order_relaxed);
}

void os_describe(struct uvm_descriptor *d)
{
	d->os_mmap = (uintptr_t)&nr_mmap;
	d->os_mprotect = (uintptr_t)&nr_mprotect;
	d->os_madvise = (uintptr_t)&nr_madvise;
	d->os_mremap = (uintptr_t)&nr_mremap;
	d->os_other = (uintptr_t)&nr_other;
}
