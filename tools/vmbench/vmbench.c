/*
 * vmbench - the kernel's test_vmalloc suite in userspace, on the uvm_*
 * API or, with --api=malloc, on whatever malloc the program runs on.
 *
 * Parameters and output are test_vmalloc's (reference section 5): each
 * worker thread runs the enabled cases in a Sattolo-shuffled order (unless
 * sequential_test_order=1), calls each test_repeat_count times, and
 * "avg" is the wall time of one whole call (all test_loop_count
 * iterations) averaged over the repeats.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "cases.h"
#include "procstat.h"

struct params {
	long run_test_mask, nr_threads, nr_pages, test_loop_count, test_repeat_count;
	bool use_huge, sequential_test_order, json;
	const struct backend *be;
};

struct result {
	long passed, failed, xfailed;
	double avg_usec;
	bool ran;
};

struct worker {
	pthread_t thread;
	unsigned id;
	const struct params *p;
	struct result res[16];
	uint64_t cycles;
};

static pthread_barrier_t start;
static atomic_long calls_done, calls_total;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static bool enabled(const struct params *p, const struct bench_case *c) { return p->run_test_mask & (1L << c->bit); }

static void *work(void *arg)
{
	struct worker *w = arg;
	const struct params *p = w->p;
	unsigned order[16], n = bench_nr_cases;
	struct run r = { p->be, p->test_loop_count, p->nr_pages, p->use_huge, (unsigned)get_nprocs(),
			 0x9e3779b97f4a7c15ull * (w->id + 1) };
	uint64_t t0;

	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	/* Sattolo's shuffle, as test_vmalloc: j < i, so every case moves. */
	for (unsigned i = n - 1; !p->sequential_test_order && i > 0; i--) {
		unsigned j = (unsigned)(rand_r((unsigned *)&r.rng) % i), tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
	}
	pthread_barrier_wait(&start);
	t0 = __rdtsc();
	for (unsigned k = 0; k < n; k++) {
		const struct bench_case *c = &bench_cases[order[k]];
		struct result *res = &w->res[order[k]];
		double t;

		if (!enabled(p, c))
			continue;
		res->ran = true;
		t = now_us();
		for (long rep = 0; rep < p->test_repeat_count; rep++) {
			if (!c->fn(&r))
				res->passed++;
			else if (c->xfail)
				res->xfailed++;
			else
				res->failed++;
			atomic_fetch_add(&calls_done, 1);
		}
		res->avg_usec = (now_us() - t) / (double)p->test_repeat_count;
	}
	w->cycles = __rdtsc() - t0;
	return NULL;
}

/* ------------------------------------------------------------ arguments */

static int set_param(struct params *p, const char *arg)
{
	static const struct {
		const char *name;
		size_t off;
		bool flag;
	} table[] = {
		{ "run_test_mask", offsetof(struct params, run_test_mask), false },
		{ "nr_threads", offsetof(struct params, nr_threads), false },
		{ "nr_pages", offsetof(struct params, nr_pages), false },
		{ "test_loop_count", offsetof(struct params, test_loop_count), false },
		{ "test_repeat_count", offsetof(struct params, test_repeat_count), false },
		{ "use_huge", offsetof(struct params, use_huge), true },
		{ "sequential_test_order", offsetof(struct params, sequential_test_order), true },
	};
	const char *eq = strchr(arg, '=');
	char *end;
	long v;

	if (!eq) {
		fprintf(stderr, "vmbench: unexpected argument %s (parameters are name=value)\n", arg);
		return -1;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].name) != (size_t)(eq - arg) || strncmp(arg, table[i].name, (size_t)(eq - arg)))
			continue;
		/* test_vmalloc's module parameters: a number in any C base, clamped as it clamps them */
		errno = 0;
		v = strtol(eq + 1, &end, 0);
		if (*end || end == eq + 1 || errno) {
			fprintf(stderr, "vmbench: %.*s needs a number, not %s\n", (int)(eq - arg), arg, eq + 1);
			return -1;
		}
		if (table[i].flag)
			*(bool *)((char *)p + table[i].off) = v != 0;
		else
			*(long *)((char *)p + table[i].off) = v;
		return 0;
	}
	fprintf(stderr, "vmbench: unknown parameter %.*s\n", (int)(eq - arg), arg);
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vmbench [--api=uvm|malloc] [--json] [--version] [param=value ...]\n"
		   "  params (test_vmalloc's): run_test_mask (default: every case), nr_threads (1), nr_pages (1),\n"
		   "  use_huge (0), test_loop_count (1000000), test_repeat_count (1), sequential_test_order (0)\n"
		   "  cases, by mask bit:\n");
	for (unsigned i = 0; i < bench_nr_cases; i++)
		fprintf(f, "    %5ld %s%s\n", 1L << bench_cases[i].bit, bench_cases[i].name,
			bench_cases[i].xfail ? " (expected to fail)" : "");
}

static bool any_case(const struct params *p)
{
	for (unsigned i = 0; i < bench_nr_cases; i++)
		if (enabled(p, &bench_cases[i]))
			return true;
	return false;
}

static int parse(int argc, char **argv, struct params *p)
{
	*p = (struct params){ .nr_threads = 1, .nr_pages = 1, .test_loop_count = 1000000, .test_repeat_count = 1,
			      .be = &backend_uvm };
	for (unsigned i = 0; i < bench_nr_cases; i++)
		p->run_test_mask |= 1L << bench_cases[i].bit;
	static const struct option longopts[] = {
		{ "api", required_argument, NULL, 'A' }, { "json", no_argument, NULL, 'J' },
		{ "version", no_argument, NULL, 'V' },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'A':
			if (!strcmp(optarg, "uvm") || !strcmp(optarg, "malloc")) {
				p->be = optarg[0] == 'u' ? &backend_uvm : &backend_malloc;
				break;
			}
			fprintf(stderr, "vmbench: --api takes uvm or malloc, not %s\n", optarg);
			return 2;
		case 'J':
			p->json = true;
			break;
		case 'V':
			printf("vmbench (uvmalloc) %s\n", UVM_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			fprintf(stderr, "vmbench: %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "vmbench: unknown option %s (vmbench --help lists them)\n",
				optopt ? (char[]){ '-', (char)optopt, 0 } : argv[optind - 1]);
			return 2;
		}
	}
	for (int i = optind; i < argc; i++)
		if (set_param(p, argv[i]))
			return 2;
	if (!any_case(p)) {
		fprintf(stderr, "vmbench: run_test_mask=%ld selects no case\n", p->run_test_mask);
		usage(stderr);
		return 2;
	}
	/* As test_vmalloc clamps them. */
	if (p->nr_threads < 1)
		p->nr_threads = 1;
	if (p->nr_threads > 1024)
		p->nr_threads = 1024;
	if (p->nr_pages < 1)
		p->nr_pages = 1;
	if (p->test_loop_count < 1)
		p->test_loop_count = 1;
	if (p->test_repeat_count < 1)
		p->test_repeat_count = 1;
	return 0;
}

/* ---------------------------------------------------------------- output */

static void print_text(const struct worker *w, long n)
{
	for (long i = 0; i < n; i++) {
		for (unsigned k = 0; k < bench_nr_cases; k++) {
			const struct result *r = &w[i].res[k];

			if (r->ran)
				printf("Summary: %s passed: %ld failed: %ld xfailed: %ld repeat: %ld loops: %ld avg: %.0f usec\n",
				       bench_cases[k].name, r->passed, r->failed, r->xfailed, w[i].p->test_repeat_count,
				       w[i].p->test_loop_count, r->avg_usec);
		}
		printf("All test took worker%ld=%llu cycles\n", i, (unsigned long long)w[i].cycles);
	}
}

static void print_json(const struct worker *w, long n, const struct params *p)
{
	printf("{\"schema\":\"uvmalloc.vmbench/1\",\"api\":\"%s\",\"params\":{\"run_test_mask\":%ld,\"nr_threads\":%ld,"
	       "\"nr_pages\":%ld,\"use_huge\":%d,\"test_loop_count\":%ld,\"test_repeat_count\":%ld,"
	       "\"sequential_test_order\":%d},\"workers\":[",
	       p->be->name, p->run_test_mask, p->nr_threads, p->nr_pages, p->use_huge, p->test_loop_count,
	       p->test_repeat_count, p->sequential_test_order);
	for (long i = 0; i < n; i++) {
		bool first = true;

		printf("%s{\"worker\":%ld,\"cycles\":%llu,\"tests\":[", i ? "," : "", i, (unsigned long long)w[i].cycles);
		for (unsigned k = 0; k < bench_nr_cases; k++) {
			const struct result *r = &w[i].res[k];

			if (!r->ran)
				continue;
			printf("%s{\"name\":\"%s\",\"passed\":%ld,\"failed\":%ld,\"xfailed\":%ld,\"avg_usec\":%.3f}",
			       first ? "" : ",", bench_cases[k].name, r->passed, r->failed, r->xfailed, r->avg_usec);
			first = false;
		}
		printf("]}");
	}
	printf("],\"peak_rss_kib\":%ld}\n", peak_rss_kib());
}

/* A progress line on stderr once a run has taken more than two seconds. */
static void progress(struct worker *w, long n)
{
	double t0 = now_us(), next = t0 + 2e6;
	bool shown = false;

	for (;;) {
		long done = atomic_load(&calls_done), total = atomic_load(&calls_total);
		struct timespec ts = { 0, 10 * 1000 * 1000 }; /* short runs end promptly */

		if (done >= total)
			break;
		if (now_us() >= next) {
			fprintf(stderr, "\rvmbench: %ld of %ld test calls done, %.0f s", done, total, (now_us() - t0) / 1e6);
			shown = true;
			next += 5e5;
		}
		nanosleep(&ts, NULL);
	}
	if (shown)
		fprintf(stderr, "\n");
	for (long i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
}

int main(int argc, char **argv)
{
	struct params p;
	struct worker *w;
	char *warm;
	long per_worker = 0;
	int err = parse(argc, argv, &p);

	if (err)
		return err;
	w = calloc((size_t)p.nr_threads, sizeof(*w));
	if (!w)
		return 1;
	for (unsigned k = 0; k < bench_nr_cases; k++)
		per_worker += enabled(&p, &bench_cases[k]) ? p.test_repeat_count : 0;
	atomic_store(&calls_total, per_worker * p.nr_threads);
	/*
	 * One allocation before any worker starts: a preloaded allocator has
	 * set itself up before main (the loader and libc call malloc), and the
	 * uvm_* API sets itself up at its first call, which would otherwise
	 * fall inside the first case's time (0.3-0.6 ms: a quarter of a
	 * 200 000-loop fix_size run).  The block is written: a preloaded
	 * allocator's first pages were written by the C library's start-up,
	 * the API's were not, and the first write of a worker then paid the
	 * page table of the API's heap alone (45-70 us on a virtual machine
	 * that shadows page tables: most of the gap on a 50 000-loop row).
	 * Each worker's own first allocation (a thread cache, a thread heap)
	 * is still timed, for every allocator.
	 */
	warm = p.be->alloc(4096);
	if (!warm)
		return 1;
	*(volatile char *)warm = 1;
	p.be->free(warm);
	pthread_barrier_init(&start, NULL, (unsigned)p.nr_threads);
	for (long i = 0; i < p.nr_threads; i++) {
		w[i].id = (unsigned)i;
		w[i].p = &p;
		if (pthread_create(&w[i].thread, NULL, work, &w[i])) {
			fprintf(stderr, "vmbench: cannot start worker %ld\n", i);
			return 1;
		}
	}
	progress(w, p.nr_threads);
	if (p.json)
		print_json(w, p.nr_threads, &p);
	else
		print_text(w, p.nr_threads);
	for (long i = 0; i < p.nr_threads; i++)
		for (unsigned k = 0; k < bench_nr_cases; k++)
			if (w[i].res[k].failed)
				err = 1;
	free(w);
	return err;
}
