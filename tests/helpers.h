/* tests/helpers.h - what several test files need: pinning, fault counts, RSS, death with a message. */
#ifndef UVM_TEST_HELPERS_H
#define UVM_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Marsaglia's xorshift64: the tests' random numbers, the same on every run for a seed. */
static inline uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Pools belong to the CPU that allocated: a test of reuse stays on one CPU. */
static inline void pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}

static inline long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

/*
 * Read a byte of every page of the library's code, so that a count of
 * page faults taken next is of the allocator's memory, not of its first
 * run through a page of code: which code pages a test's earlier calls
 * happened to map is an accident of the layout (a change elsewhere in the
 * library moved one purge test's pool hit onto an unmapped page, under
 * AddressSanitizer one run in five).
 */
static inline void prefault_code(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[2] == 'x' && strstr(line, "libuvmalloc"))
			for (unsigned long a = lo; a < hi; a += 4096)
				(void)*(volatile const char *)a;
	}
	fclose(f);
}

/*
 * 256 frames of ~300 bytes: the stack's pages, and under AddressSanitizer
 * the shadow of them, written as deep as an allocation's calls go. Each
 * frame's buffer escapes, so the sanitizer gives it redzones and writes
 * their shadow (a plain large array would only have its shadow read, which
 * maps the zero page and faults again on the write). An allocation that
 * went one stack page deeper than the test's earlier calls (a pool's first
 * use, a heap's adoption) took that fault in the counted window.
 */
static __attribute__((noinline)) void prefault_stack(int depth)
{
	volatile char frame[256];

	__asm__ volatile("" : : "r"(frame) : "memory");
	frame[0] = (char)depth;
	if (depth > 0)
		prefault_stack(depth - 1);
	frame[sizeof(frame) - 1] = 0; /* after the call: no tail call */
}

/* What a test calls right before it counts page faults of its own. */
static inline void prefault_for_counting(void)
{
	prefault_code();
	prefault_stack(256);
}

/*
 * AddressSanitizer's first look at fresh memory faults in its shadow pages:
 * counts of our own faults on fresh memory mean nothing under it.
 */
#ifdef __SANITIZE_ADDRESS__
#define FRESH_FAULTS_COUNTABLE 0
#else
#define FRESH_FAULTS_COUNTABLE 1
#endif

/*
 * Resident bytes of the process, less AddressSanitizer's shadow: on some
 * kernels reading the shadow of memory the test touched makes it resident
 * (32 MiB for 256 MiB touched), which is not ours to give back.
 */
static inline long rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%ld %ld", &pages, &rss), 2);
	fclose(f);
	rss *= 4096;
#ifdef __SANITIZE_ADDRESS__
	{
		char line[256];
		unsigned long lo = 0, hi = 0, kib;
		bool shadow = false;

		f = fopen("/proc/self/smaps", "r");
		cr_assert_not_null(f);
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
				shadow = lo >= 0x7fff8000ul && hi <= 0x10007fff8000ul; /* x86_64 ASan's shadow */
			else if (shadow && sscanf(line, "Rss: %lu kB", &kib) == 1)
				rss -= (long)kib * 1024;
		}
		fclose(f);
	}
#endif
	return rss;
}

/*
 * Run fn in a child whose stderr is captured; the child must die of signal
 * sig and its stderr must contain want.
 */
static inline void expect_death(void (*fn)(void *), void *arg, int sig, const char *want)
{
	int fds[2];
	char buf[512] = { 0 };
	size_t got = 0;
	ssize_t n;
	int status;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn(arg);
		_exit(0);
	}
	close(fds[1]);
	/* Keep the first bytes and drain the rest, so a long report never dies of SIGPIPE. */
	for (char sink[4096]; (n = read(fds[0], got < sizeof(buf) - 1 ? buf + got : sink,
					   got < sizeof(buf) - 1 ? sizeof(buf) - 1 - got : sizeof(sink))) > 0;)
		got += got < sizeof(buf) - 1 ? (size_t)n : 0;
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
#ifdef __SANITIZE_ADDRESS__
	/* AddressSanitizer catches SIGSEGV itself, reports it and exits. */
	if (sig == SIGSEGV && WIFEXITED(status) && strstr(buf, "SEGV"))
		return;
#endif
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig, "child did not die of signal %d (status %#x)", sig, status);
	if (want)
		cr_assert_not_null(strstr(buf, want), "stderr was \"%s\", expected \"%s\"", buf, want);
}

/* One mapping of /proc/self/smaps: its range, VmFlags and the counters the hugepage tests read (kB). */
struct vma_info {
	unsigned long start, end;
	char flags[512];
	long anon_huge_kb, private_hugetlb_kb, kernel_page_kb;
};

static inline void smaps_field(const char *line, const char *name, long *out)
{
	size_t n = strlen(name);

	if (!strncmp(line, name, n) && line[n] == ':')
		*out = strtol(line + n + 1, NULL, 10);
}

/* The mapping that holds addr; false when none does. */
static inline bool vma_of(const void *addr, struct vma_info *vi)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;
	unsigned long a = (unsigned long)addr;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (found)
				break;
			in = a >= s && a < e;
			if (in) {
				memset(vi, 0, sizeof(*vi));
				vi->start = s;
				vi->end = e;
				found = true;
			}
			continue;
		}
		if (!in)
			continue;
		smaps_field(line, "AnonHugePages", &vi->anon_huge_kb);
		smaps_field(line, "Private_Hugetlb", &vi->private_hugetlb_kb);
		smaps_field(line, "KernelPageSize", &vi->kernel_page_kb);
		if (!strncmp(line, "VmFlags:", 8))
			snprintf(vi->flags, sizeof(vi->flags), "%s", line + 8);
	}
	fclose(f);
	return found;
}

/* Whether a module whose path holds name is mapped into this process (/proc/self/maps). */
static inline bool module_mapped(const char *name)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	cr_assert_not_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

/*
 * Whether this kernel takes MADV_DONTNEED through process_madvise for the
 * calling process (PIDFD_SELF_THREAD, Linux 6.14+): the purge's batches
 * are then one call (os_release_ranges), else one madvise a run.
 */
static inline bool kernel_batches_madvise(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec v = { p, 4096 };
	bool ok;

	cr_assert_neq(p, MAP_FAILED);
	ok = syscall(440 /* SYS_process_madvise */, -10000 /* PIDFD_SELF_THREAD */, &v, 1, MADV_DONTNEED, 0) == 4096;
	munmap(p, 4096);
	return ok;
}

/* Whether the kernel may back an MADV_HUGEPAGE range with transparent huge pages. */
static inline bool thp_possible(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return !strstr(buf, "[never]") && buf[0];
}

/* Whether a VmFlags line holds the two-letter flag f ("hg", "nh", "ht"). */
static inline bool vma_has_flag(const struct vma_info *vi, const char *f)
{
	for (const char *p = vi->flags; (p = strstr(p, f)); p += 2)
		if ((p == vi->flags || p[-1] == ' ') && (p[2] == ' ' || p[2] == '\n' || !p[2]))
			return true;
	return false;
}

#endif
