/*
 * tests/unit/api/test_malloc.c - the malloc family with glibc's semantics, built
 * twice: linked against libuvmalloc.so calling uvm_malloc & co., and as a
 * plain program calling malloc & co. that meson runs under
 * LD_PRELOAD=libuvmalloc-preload.so (PRELOADED).  Both forms check that the
 * allocator answering is ours.
 */
#include "helpers.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "uvmalloc.h"

/* The tests misuse malloc on purpose: impossible sizes, frees of static objects. */
#pragma GCC diagnostic ignored "-Walloc-size-larger-than="
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#pragma GCC diagnostic ignored "-Wuse-after-free"

#ifdef PRELOADED
#define M(f) f
#else
#define M(f) uvm_##f
#endif

/* uvm_stats through the dynamic symbol table, so the preloaded form need not link us. */
static struct uvm_stats stats(void)
{
	void (*fn)(struct uvm_stats *) = (void (*)(struct uvm_stats *))dlsym(RTLD_DEFAULT, "uvm_stats");
	struct uvm_stats st;

	cr_assert_not_null(fn, "libuvmalloc.so is not loaded: malloc is not ours");
	fn(&st);
	return st;
}

static void *ctor_block;

/* The first malloc of all may come from a constructor, before main. */
__attribute__((constructor)) static void alloc_in_constructor(void)
{
	ctor_block = M(malloc)(100);
	if (ctor_block)
		memset(ctor_block, 7, 100);
}

Test(malloc, the_allocator_is_ours)
{
	uint64_t before = stats().small_allocs;
	void *volatile p = M(malloc)(24); /* volatile: gcc may drop a malloc whose block is never used */

	cr_assert_geq(stats().small_allocs, before + 1); /* preloaded, the runtime may allocate too */
	M(free)(p);
	cr_assert_not_null(ctor_block, "malloc in a constructor failed");
	cr_assert_eq(((char *)ctor_block)[99], 7);
	M(free)(ctor_block);
}

Test(malloc, zero_size_gives_unique_pointers)
{
	void *a = M(malloc)(0), *b = M(malloc)(0);

	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_neq(a, b);
	M(free)(a);
	M(free)(b);
	M(free)(NULL);
}

Test(malloc, impossible_sizes_are_enomem)
{
	errno = 0;
	cr_assert_null(M(malloc)(SIZE_MAX));
	cr_assert_eq(errno, ENOMEM);
	errno = 0;
	cr_assert_null(M(malloc)((size_t)PTRDIFF_MAX + 1));
	cr_assert_eq(errno, ENOMEM);
	errno = 0;
	cr_assert_null(M(calloc)(SIZE_MAX / 2, 3));
	cr_assert_eq(errno, ENOMEM, "calloc overflow");
}

Test(malloc, calloc_is_zero_even_when_reused)
{
	for (size_t size = 8; size <= (1 << 20); size *= 4) {
		unsigned char *p = M(malloc)(size);

		memset(p, 0xff, size);
		M(free)(p);
		p = M(calloc)(1, size);
		for (size_t i = 0; i < size; i++)
			cr_assert_eq(p[i], 0, "calloc(%zu) byte %zu", size, i);
		M(free)(p);
	}
}

Test(malloc, usable_size)
{
	for (size_t size = 1; size < (1 << 22); size = size * 3 + 1) {
		void *p = M(malloc)(size);

		cr_assert_geq(M(malloc_usable_size)(p), size);
		M(free)(p);
	}
	cr_assert_eq(M(malloc_usable_size)(NULL), 0);
}

/*
 * Objects that start on a page are still slab objects: a slab's first one
 * (its 64 KiB base, where the slab's own area starts) and every fourth of
 * 1 KiB.  realloc and malloc_usable_size look for an area first on a page.
 */
Test(malloc, page_aligned_slab_objects_are_slab_objects)
{
	enum { N = 200 };
	static char *p[N];
	int bases = 0, pages = 0;

	for (int i = 0; i < N; i++)
		cr_assert_not_null(p[i] = M(malloc)(1000));
	for (int i = 0; i < N; i++) {
		if ((uintptr_t)p[i] & 4095)
			continue;
		bases += !((uintptr_t)p[i] & 0xffff);
		pages++;
		cr_assert_eq(M(malloc_usable_size)(p[i]), 1024, "%p, on a page: not its class's size", (void *)p[i]);
		p[i][0] = 'x';
		cr_assert_eq(M(realloc)(p[i], 900), p[i], "a 1 KiB object shrunk to 900 bytes moved");
		cr_assert_eq(p[i][0], 'x');
	}
	cr_assert_gt(pages, 40, "%d objects on a page of 200", pages);
	cr_assert_geq(bases, 1, "no slab's first object among 200 of 1 KiB (64 per slab)");
	for (int i = 0; i < N; i++)
		M(free)(p[i]);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed);
}

static void check(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(p[i], (unsigned char)(i * 31 + seed), "byte %zu of %zu", i, n);
}

/* A chain of reallocs through slab classes and areas, up and down, keeps the contents. */
Test(malloc, realloc_keeps_contents)
{
	size_t sizes[] = { 1, 17, 100, 1000, 5000, 8192, 9000, 70000, 1 << 20, 3 << 20, 50000, 300, 20, 4 << 20 };
	size_t have = 0;
	unsigned char *p = M(realloc)(NULL, 1);

	fill(p, 1, 5);
	have = 1;
	for (size_t i = 1; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t keep = have < sizes[i] ? have : sizes[i];

		p = M(realloc)(p, sizes[i]);
		cr_assert_not_null(p);
		check(p, keep, 5);
		fill(p, sizes[i], 5);
		have = sizes[i];
	}
	errno = 0;
	cr_assert_null(M(realloc)(p, SIZE_MAX), "an impossible realloc fails");
	cr_assert_eq(errno, ENOMEM);
	check(p, have, 5); /* and leaves the block alone */
	cr_assert_null(M(realloc)(p, 0), "realloc(p, 0) frees, as glibc's");
}

/*
 * A block at most twice too big stays where it is, an area shrunk to slab
 * size included (and grows back in place); under half, it moves.
 */
Test(malloc, realloc_keeps_a_block_at_most_twice_too_big)
{
	unsigned char *p = M(malloc)(4096), *q;

	fill(p, 4096, 9);
	cr_assert_eq(M(realloc)(p, 2048), p, "an area shrunk by half stays");
	cr_assert_geq(M(malloc_usable_size)(p), 4096);
	check(p, 2048, 9);
	cr_assert_eq(M(realloc)(p, 4096), p, "and grows back in place");
	q = M(realloc)(p, 2047);
	cr_assert_neq(q, p, "under half, it moves into a slab");
	cr_assert_lt(M(malloc_usable_size)(q), 4096);
	check(q, 2047, 9);
	cr_assert_eq(M(realloc)(q, 1024), q, "a slab object shrunk by half stays");
	p = M(realloc)(q, 500);
	cr_assert_neq(p, q, "under half, it moves");
	check(p, 500, 9);
	M(free)(p);
}

Test(malloc, reallocarray_checks_overflow)
{
	void *p = M(malloc)(10);

	errno = 0;
	cr_assert_null(M(reallocarray)(p, SIZE_MAX / 2, 4));
	cr_assert_eq(errno, ENOMEM);
	p = M(reallocarray)(p, 100, 4);
	cr_assert_geq(M(malloc_usable_size)(p), 400);
	M(free)(p);
}

Test(malloc, alignments)
{
	void *p = NULL;
	int saved;

	cr_assert_eq(M(posix_memalign)(&p, 3, 10), EINVAL);
	cr_assert_eq(M(posix_memalign)(&p, 4, 10), EINVAL, "not a multiple of sizeof(void *)");
	cr_assert_eq(M(posix_memalign)(&p, 64, SIZE_MAX), ENOMEM);
	errno = 1234;
	for (size_t align = 8; align <= (1 << 21); align <<= 1) {
		cr_assert_eq(M(posix_memalign)(&p, align, 100), 0);
		cr_assert_eq((uintptr_t)p % align, 0);
		M(free)(p);
	}
	saved = errno;
	cr_assert_eq(saved, 1234, "posix_memalign touched errno");
	errno = 0;
	cr_assert_null(M(aligned_alloc)(24, 48));
	cr_assert_eq(errno, EINVAL);
	p = M(aligned_alloc)(4096, 10);
	cr_assert_eq((uintptr_t)p % 4096, 0);
	M(free)(p);
	p = M(memalign)(100, 10); /* glibc rounds 100 up to 128 */
	cr_assert_eq((uintptr_t)p % 128, 0);
	M(free)(p);
}

/* Volatile pointers: freeing a static object is undefined, and gcc may drop such a call. */
static void free_foreign(void *arg)
{
	static long not_ours[8];
	void *volatile p = &not_ours[2];

	(void)arg;
	M(free)(p);
}

static void double_free_big(void *arg)
{
	void *volatile p = M(malloc)(100000);

	(void)arg;
	M(free)(p);
	M(free)(p);
}

static void realloc_foreign(void *arg)
{
	static long not_ours[8];
	void *volatile p = &not_ours[2];

	(void)arg;
	if (M(realloc)(p, 100))
		return;
}

Test(malloc, bad_pointers_abort_naming_them)
{
	expect_death(free_foreign, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(double_free_big, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(realloc_foreign, NULL, SIGABRT, "uvmalloc: realloc(): invalid pointer 0x");
}

/* ------------------------------------------------------------ threads */

#define PER 4000
static void *exchange[4][PER];

static void *producer(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < PER; i++) {
		exchange[t][i] = M(malloc)((size_t)(i % 300) + 1);
		fill(exchange[t][i], (size_t)(i % 300) + 1, (unsigned)t);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < PER; i++) {
		check(exchange[t][i], (size_t)(i % 300) + 1, (unsigned)t);
		M(free)(exchange[t][i]);
	}
	return NULL;
}

/* Blocks made by one thread are freed by another after the maker exited; the counts balance. */
Test(malloc, threads_free_each_others_blocks)
{
	pthread_t t[4];
	struct uvm_stats before = stats(), after;

	for (long i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, producer, (void *)i), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (long i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, consumer, (void *)((i + 1) % 4)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	after = stats();
#ifndef PRELOADED /* preloaded, pthread_create's own allocations count too */
	cr_assert_eq(after.small_allocs - before.small_allocs, after.small_frees - before.small_frees);
#endif
	cr_assert_geq(after.small_frees - before.small_frees, 4 * PER);
}

static void *spin(void *arg)
{
	atomic_bool *stop = arg;

	while (!atomic_load(stop))
		M(free)(M(malloc)(64));
	return NULL;
}

/* fork() while another thread allocates: the child can allocate, free and exec. */
Test(malloc, fork_in_a_threaded_program)
{
	static atomic_bool stop;
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, spin, &stop), 0);
	for (int i = 0; i < 20; i++) {
		int status;
		pid_t pid = fork();

		if (!pid) {
			void *p = M(malloc)(5000), *q = M(malloc)(40);

			M(free)(p);
			M(free)(q);
			if (i % 2)
				execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %#x", i, status);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
}

#ifdef PRELOADED
/* Code in a dlopen()ed library allocates through the same heap; its blocks free from here. */
Test(malloc, dlopened_code_allocates_from_us)
{
	void *h = dlopen(DL_ALLOC_PATH, RTLD_NOW);
	void *(*make)(size_t);
	uint64_t before;
	char *p;

	cr_assert_not_null(h, "%s", dlerror());
	make = (void *(*)(size_t))dlsym(h, "dl_alloc_make");
	cr_assert_not_null(make);
	before = stats().small_allocs;
	p = make(50);
	cr_assert_geq(stats().small_allocs, before + 1);
	cr_assert_eq(p[49], 'x');
	M(free)(p);
	dlclose(h);
}

/* The glibc extras programs call. */
Test(malloc, glibc_extras)
{
	struct mallinfo2 mi;
	void *p = valloc(100), *q = pvalloc(5000);

	cr_assert_eq((uintptr_t)p % 4096, 0);
	cr_assert_eq((uintptr_t)q % 4096, 0);
	cr_assert_geq(malloc_usable_size(q), 8192);
	mi = mallinfo2();
	cr_assert_gt(mi.uordblks, 0);
	free(p);
	free(q);
	cr_assert_eq(malloc_trim(0), 1);
	cr_assert_eq(stats().cached_count + stats().lazy_count + stats().pooled_count, 0, "malloc_trim purges");
}

/* glibc's own names for the family, which programs call for "the real malloc": ours, one heap with malloc's. */
void *__libc_malloc(size_t size);
void __libc_free(void *p);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);

Test(malloc, glibc_internal_names_are_ours)
{
	uint64_t before = stats().small_allocs;
	char *a = __libc_malloc(100), *b = malloc(100), *c = __libc_calloc(10, 10), *d;
	void (*cfree)(void *);

	cr_assert(a && b && c);
	cr_assert_geq(stats().small_allocs, before + 3, "__libc_malloc and __libc_calloc are not ours");
	for (int i = 0; i < 100; i++)
		cr_assert_eq(c[i], 0);
	strcpy(a, "from __libc_malloc");
	a = realloc(a, 5000); /* another allocator's block would abort here */
	cr_assert_str_eq(a, "from __libc_malloc");
	b = __libc_realloc(b, 200);
	cr_assert_not_null(b);
	d = __libc_memalign(256, 40);
	cr_assert_eq((uintptr_t)d % 256, 0);
	free(a);
	__libc_free(b);
	/* cfree: a compat symbol of glibc's that no new program links, as an old binary finds it. */
	cfree = (void (*)(void *))dlsym(RTLD_DEFAULT, "cfree");
	cr_assert_not_null(cfree);
	cfree(c);
	free(d);
	a = __libc_valloc(10);
	b = __libc_pvalloc(10);
	cr_assert_eq((uintptr_t)a % 4096, 0);
	cr_assert_eq((uintptr_t)b % 4096, 0);
	before = stats().small_frees + stats().frees;
	__libc_free(a);
	free(b);
	cr_assert_geq(stats().small_frees + stats().frees, before + 2);
}

/* mallopt is taken and ignored; malloc_info writes glibc's XML with our figures, and refuses options. */
Test(malloc, mallopt_and_malloc_info)
{
	/* keep: p's slab stays, not emptied and released; volatile: gcc may drop a malloc whose block is never used */
	char *buf = NULL, *volatile p = malloc(13000), *volatile keep = malloc(13000);
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned long long current = 0;
	const char *at;

	cr_assert_eq(mallopt(M_ARENA_MAX, 1), 1);
	cr_assert_eq(mallopt(M_MMAP_THRESHOLD, 1 << 20), 1);
	cr_assert_not_null(f);
	free(p); /* a freed object of the 14 KiB class, which the stream's buffers stay short of: a <size> line */
	errno = 0;
	cr_assert_eq(malloc_info(1, f), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(malloc_info(0, f), 0);
	fclose(f);
	free(keep);
	static const char head[] = "<malloc version=\"1\">\n<heap nr=\"0\">\n<sizes>\n";

	cr_assert(!strncmp(buf, head, sizeof(head) - 1), "%s", buf);
	cr_assert_not_null(strstr(buf, "to=\"14336\""), "no freed 14 KiB objects in: %s", buf);
	cr_assert_not_null(at = strstr(buf, "<system type=\"current\" size=\""), "%s", buf);
	cr_assert_eq(sscanf(at, "<system type=\"current\" size=\"%llu\"", &current), 1);
	/* The committed span then, which only grows; glibc's arena, unused, would read 0. */
	cr_assert(current > 0 && current <= stats().committed_bytes, "malloc_info's system size is not ours: %s", buf);
	cr_assert_not_null(strstr(buf, "<total type=\"mmap\" count=\"0\" size=\"0\"/>\n"), "%s", buf);
	cr_assert_not_null(strstr(buf, "</malloc>\n"), "%s", buf);
	free(buf);
}

/* malloc_stats prints our summary on stderr. */
Test(malloc, malloc_stats_prints_ours)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	char buf[2048] = "";
	size_t n;

	cr_assert_not_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	malloc_stats();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = 0;
	fclose(tmp);
	cr_assert_not_null(strstr(buf, "uvmalloc: objects "), "malloc_stats printed: %s", buf);
}
#endif

#ifndef PRELOADED
static int count_vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	for (int c; (c = fgetc(f)) != EOF;)
		n += c == '\n';
	fclose(f);
	return n;
}

/* A program that frees what it allocated gets its RSS back. */
Test(malloc, rss_comes_back)
{
	enum { N = 200000 };
	static void *p[N];
	long before, peak;

	uvm_free(uvm_malloc(1));
	before = rss_bytes();
	for (int i = 0; i < N; i++) {
		p[i] = uvm_malloc((size_t)(i % 2000) + 1);
		memset(p[i], 1, (size_t)(i % 2000) + 1);
	}
	for (int i = 0; i < 20; i++) {
		void *big = uvm_malloc(10 << 20);
		memset(big, 1, 10 << 20);
		uvm_free(big);
	}
	peak = rss_bytes();
	cr_assert_gt(peak - before, 150 << 20);
	for (int i = 0; i < N; i++)
		uvm_free(p[i]);
	uvm_purge();
	cr_assert_lt(rss_bytes() - before, 8 << 20, "RSS %ld MiB above the start after freeing %ld MiB",
		     (rss_bytes() - before) >> 20, (peak - before) >> 20);
}

/* Under the preload library, a program linked with libuvmalloc.so has one heap: malloc's blocks are uvm's. */
Test(malloc, one_heap_when_linked_and_preloaded)
{
	const char *pre = getenv("LD_PRELOAD");
	void *a, *b;

	if (!pre || !strstr(pre, "libuvmalloc-preload"))
		cr_skip_test("run without the preload library (the malloc-linked-and-preloaded test runs it with)");
	a = malloc(100);
	b = uvm_malloc(100);
	uvm_free(a);
	free(b);
}

/*
 * A large realloc that cannot grow in place moves its pages with mremap; a
 * purge gives them back (a fresh mapping over the block, no madvise of its
 * own) and merges the VMAs back.  The process's first huge area comes
 * first: under UVM_THP=auto its first page is touched and timed, and a
 * realloc's move into it would find that page backed and copy.
 */
Test(malloc, large_realloc_moves_pages_without_copying)
{
	struct uvm_stats st0, st;
	unsigned char *first = uvm_malloc(3 << 20), *p = uvm_malloc(1 << 20), *blocker, vec[(8 << 20) >> 12];
	int vmas;

	uvm_free(uvm_malloc(1)); /* set up before counting */
	vmas = count_vmas();
	fill(p, 1 << 20, 9);
	blocker = uvm_malloc(64 << 10); /* the range after p is taken: no growth in place */
	uvm_stats(&st0);
	p = uvm_realloc(p, 8 << 20);
	uvm_stats(&st);
	cr_assert_eq(st.mremap_calls - st0.mremap_calls, 1, "the pages were copied, not moved");
	check(p, 1 << 20, 9);
	fill(p, 8 << 20, 3);
	check(p, 8 << 20, 3);
	uvm_free(p);
	uvm_free(blocker);
	uvm_purge();
	cr_assert_leq(count_vmas(), vmas, "%d mappings before, %d after the purge", vmas, count_vmas());
	uvm_free(first);
	cr_assert_eq(mincore(p, 8 << 20, vec), 0);
	for (size_t i = 0; i < sizeof(vec); i++)
		cr_assert_eq(vec[i] & 1, 0, "page %zu of the moved block is still resident after the purge", i);
}
#endif

/*
 * A program's own thread-exit destructor, on a key made after ours (so it
 * runs after our cleanup), still allocates and frees: every size works,
 * and nothing it frees is lost.
 */
static const size_t late_sizes[] = { 1, 16, 24, 64, 100, 512, 1024, 2048, 4096, 8192, 65536, 1 << 20 };
static pthread_key_t late_key;

static void late_destructor(void *arg)
{
	int *served = arg;

	for (size_t i = 0; i < sizeof(late_sizes) / sizeof(late_sizes[0]); i++) {
		char *p = M(malloc)(late_sizes[i]);

		if (!p)
			continue;
		memset(p, 0x5a, late_sizes[i]);
		M(free)(p);
		char *q = M(calloc)(1, late_sizes[i]);

		if (q && q[late_sizes[i] - 1] == 0)
			++*served;
		M(free)(q);
	}
}

static void *allocate_then_exit(void *arg)
{
	M(free)(M(malloc)(32)); /* the thread's heap exists before the key's value does */
	pthread_setspecific(late_key, arg);
	return NULL;
}

Test(malloc, late_thread_exit_destructor_allocates)
{
	int served = 0;
	pthread_t t;
	struct uvm_stats before, mid = { 0 }, after;

	M(free)(M(malloc)(32)); /* our key first */
	cr_assert_eq(pthread_key_create(&late_key, late_destructor), 0);
	before = stats();
	for (int round = 0; round < 20; round++) {
		if (round == 5)
			mid = stats();
		served = 0;
		cr_assert_eq(pthread_create(&t, NULL, allocate_then_exit, &served), 0);
		cr_assert_eq(pthread_join(t, NULL), 0);
		cr_assert_eq(served, (int)(sizeof(late_sizes) / sizeof(late_sizes[0])), "round %d: %d sizes served", round, served);
	}
	after = stats();
	/* Small: the 8 sizes up to UVM_SLAB_MAX (3584 by default), each malloc and calloc, 20 rounds. */
	cr_assert_geq(after.small_allocs - before.small_allocs, 20 * 2 * 8, "the late allocations were not ours");
#ifndef PRELOADED /* preloaded, pthread_create's own allocations count too */
	cr_assert_eq(after.small_allocs - before.small_allocs, after.small_frees - before.small_frees, "late small frees were lost");
	/* Areas live afterwards: the slabs the late heap keeps, nothing else. */
	cr_assert_eq((after.allocs - after.frees) - (before.allocs - before.frees), after.slabs - before.slabs,
		     "late area frees were lost");
#endif
	/* Late objects come from one shared heap that takes its frees back: its slabs stop growing. */
	cr_assert_leq(after.slabs, mid.slabs, "late allocations leak slabs: %llu after 5 rounds, %llu after 20",
		      (unsigned long long)mid.slabs, (unsigned long long)after.slabs);
	pthread_key_delete(late_key);
}

/*
 * Heap metadata inside freed objects (safe-linking): a stray write into a
 * freed object's link (a use after free, an overflow into a freed
 * neighbour, an underflow into a slab's header) aborts with a message that
 * names the corruption, instead of handing out a planted pointer or
 * crashing.
 */
static char planted[64] __attribute__((aligned(16)));
/* Through volatile pointers: the compiler may drop a malloc whose result is unused, or a write after free. */
static void *(*volatile xmalloc)(size_t) = M(malloc);
static void (*volatile xfree)(void *) = M(free);

static void scribble(void *p, int c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i] = (char)c;
}

/*
 * The thread's hand (slab.h: its last freed objects of a class, kept as
 * pointers in its heap) reads no link: a use after free of an object in it
 * corrupts nothing.  These cases free HAND_OUT objects of the class before
 * their targets, which fills the hand, so that the targets go onto their
 * slab's list, where links are kept and checked.
 */
enum { HAND_OUT = 64 };

static void alloc_n(void **v, size_t size)
{
	for (int i = 0; i < HAND_OUT; i++)
		if (!(v[i] = xmalloc(size)))
			_exit(4);
}

static void free_n(void **v)
{
	for (int i = 0; i < HAND_OUT; i++)
		xfree(v[i]);
}

static void uaf_plants_a_pointer(void *arg)
{
	char *p = xmalloc(32), *q = xmalloc(32);
	void *more[HAND_OUT];

	(void)arg;
	alloc_n(more, 32);
	free_n(more);
	xfree(p);
	xfree(q);
	*(void *volatile *)q = planted; /* a use after free writes an address where the link was */
	for (int i = 0; i < 10000; i++)
		if (xmalloc(32) == planted)
			_exit(3); /* the planted address was handed out */
}

static void uaf_writes_bytes(void *arg)
{
	char *p = xmalloc(64), *q = xmalloc(64);
	void *more[HAND_OUT];

	(void)arg;
	alloc_n(more, 64);
	free_n(more);
	xfree(p);
	xfree(q);
	scribble(q, 'G', 64);
	/* q's slab may not be the class's current one (the runtime allocates too): allocate until it is used. */
	for (int i = 0; i < 10000; i++)
		if (!xmalloc(64))
			_exit(4);
}

static void overflow_into_freed_neighbour(void *arg)
{
	size_t n = (size_t)arg;
	char *a = xmalloc(48), *b = xmalloc(48);
	void *more[HAND_OUT];

	if (b != a + 48)
		_exit(4); /* the layout this case needs */
	alloc_n(more, 48);
	free_n(more);
	xfree(b);
	scribble(a, 'A', 48);
	/*
	 * Then n bytes past a, each changed for sure: 'A' again was the byte
	 * already there one run in 256 (the link is mangled with a random key),
	 * which corrupted nothing and made the case fail.
	 */
	for (size_t i = 0; i < n; i++)
		((volatile unsigned char *)b)[i] ^= 0xff;
	for (int i = 0; i < 10000; i++)
		if (!xmalloc(48))
			_exit(4);
	_exit(3); /* served from a corrupted list */
}

Test(malloc, freed_objects_links_are_checked)
{
	expect_death(uaf_plants_a_pointer, NULL, SIGABRT, "uvmalloc: corrupted free list in slab 0x");
	expect_death(uaf_writes_bytes, NULL, SIGABRT, "uvmalloc: corrupted free list in slab 0x");
	expect_death(overflow_into_freed_neighbour, (void *)1, SIGABRT, "uvmalloc: corrupted free list in slab 0x");
	expect_death(overflow_into_freed_neighbour, (void *)8, SIGABRT, "uvmalloc: corrupted free list in slab 0x");
	expect_death(overflow_into_freed_neighbour, (void *)64, SIGABRT, "uvmalloc: corrupted");
}

/*
 * The set-up's own allocations come from a static start-up buffer.  This
 * program interposes a libc function that the set-up calls first
 * (get_nprocs) and allocates in it, so it holds a pointer the buffer handed
 * out: bad pointers into the buffer abort like any other, and the good one
 * reallocs and frees once.  (It was a libnuma call, which the set-up makes
 * only where a second node is, since libnuma is opened there alone.)
 */
static void *early_block;

int get_nprocs(void)
{
	static int (*real)(void);

	if (!early_block && (early_block = M(malloc)(24)))
		memset(early_block, 0x6b, 24);
	if (!real)
		real = (int (*)(void))dlsym(RTLD_NEXT, "get_nprocs");
	return real ? real() : 1;
}

static void early_interior_free(void *arg)
{
	(void)arg;
	xfree((char *)early_block + 8);
}

static void early_header_realloc(void *arg)
{
	(void)arg;
	if (M(realloc)((char *)early_block - 16, 64))
		_exit(3);
}

static void early_double_free(void *arg)
{
	(void)arg;
	xfree(early_block);
	xfree(early_block);
}

Test(malloc, start_up_buffer_pointers)
{
	char *q;

	cr_assert_not_null(early_block, "the set-up made no allocation through the interposed get_nprocs");
	expect_death(early_interior_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	expect_death(early_header_realloc, NULL, SIGABRT, "uvmalloc: realloc(): invalid pointer 0x");
	expect_death(early_double_free, NULL, SIGABRT, "uvmalloc: free(): invalid pointer 0x");
	cr_assert_geq(M(malloc_usable_size)(early_block), 24);
	q = M(realloc)(early_block, 4096);
	cr_assert_not_null(q);
	for (int i = 0; i < 24; i++)
		cr_assert_eq(q[i], 0x6b, "byte %d lost in the move out of the start-up buffer", i);
	M(free)(q);
}

/*
 * libnuma is opened only where a second node is: linked, its constructor
 * read sysfs at the start of every program, one-node machines too.
 */
Test(malloc, libnuma_stays_out_on_one_node)
{
	if (!access("/sys/devices/system/node/node1", F_OK))
		cr_skip_test("this machine has a second node: libnuma is opened");
	M(free)(M(malloc)(64));
	cr_assert_not(module_mapped("libnuma"), "libnuma is loaded on a one-node machine");
}
