/*
 * uvmdemo - a small program on the uvm_* API: a log store whose buffers grow
 * with uvm_vrealloc, next to records of mixed sizes and lifetimes, the mix a
 * vmalloc user makes.  It prints what it computed, then the allocator's own
 * view: /proc/vmallocinfo-style lines and the statistics.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "args.h"
#include "uvmalloc.h"

#define NR_LOGS 32
#define NR_RECORDS 512

struct log {
	char *buf;
	size_t len, cap;
};

static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Append a line, growing the buffer by doubling through uvm_vrealloc. */
void log_append(struct log *l, const char *line)
{
	size_t n = strlen(line);

	if (l->len + n > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		char *p = uvm_vrealloc(l->buf, cap);

		if (!p) {
			perror("uvm_vrealloc");
			exit(1);
		}
		l->buf = p;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, line, n);
	l->len += n;
}

/* A record: a page-multiple buffer filled with a checkable pattern. */
unsigned char *record_new(size_t size, unsigned char tag)
{
	unsigned char *p = uvm_vmalloc(size);

	if (!p) {
		perror("uvm_vmalloc");
		exit(1);
	}
	memset(p, tag, size);
	return p;
}

#define MAX_COUNT 1000000ull /* rounds or lines: a million rounds of 200 lines is hours already */

static void usage(void)
{
	printf("usage: uvmdemo [--rounds N] [--lines N] [--version]\n"
	       "  --rounds N  rounds of record churn (default 200)\n"
	       "  --lines N   log lines written per round (default 200)\n"
	       "settings (environment):\n");
	uvm_settings(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "rounds", 1, 0, 'r' }, { "lines", 1, 0, 'l' }, { "help", 0, 0, 'h' },
					      { "version", 0, 0, 'V' }, { 0, 0, 0, 0 } };
	struct log logs[NR_LOGS] = { 0 };
	unsigned char *rec[NR_RECORDS] = { 0 };
	size_t rec_size[NR_RECORDS] = { 0 };
	unsigned long rounds = 200, lines = 200, checksum = 0;
	struct uvm_stats st;
	struct rusage ru;
	struct timespec t0, t1;
	char line[128];
	int c;

	while ((c = getopt_long(argc, argv, "r:l:h", opts, NULL)) != -1) {
		unsigned long long n;

		if ((c == 'r' || c == 'l') && !parse_count(optarg, 0, MAX_COUNT, &n)) {
			fprintf(stderr, "uvmdemo: --%s needs a whole number from 0 to %llu, not %s\n", c == 'r' ? "rounds" : "lines",
				MAX_COUNT, optarg);
			return 2;
		}
		if (c == 'V') {
			printf("uvmdemo (uvmalloc) %s, running on libuvmalloc %s\n", UVM_VERSION, uvm_version());
			return 0;
		}
		if (c == 'r')
			rounds = (unsigned long)n;
		else if (c == 'l')
			lines = (unsigned long)n;
		else {
			usage();
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uvmdemo: unexpected argument %s\n", argv[optind]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long r = 0; r < rounds; r++) {
		for (unsigned long i = 0; i < lines; i++) {
			struct log *l = &logs[next_rand() % NR_LOGS];

			snprintf(line, sizeof(line), "round %lu line %lu value %llu\n", r, i, next_rand() % 1000000);
			log_append(l, line);
		}
		for (int i = 0; i < NR_RECORDS / 4; i++) {
			unsigned k = (unsigned)(next_rand() % NR_RECORDS);

			if (rec[k]) {
				checksum += rec[k][rec_size[k] - 1];
				uvm_vfree(rec[k]);
			}
			rec_size[k] = 1 + next_rand() % (next_rand() % 8 ? 16384 : 1 << 20);
			rec[k] = record_new(rec_size[k], (unsigned char)k);
		}
		if (r % 50 == 49) { /* a log rotates: its buffer is freed and starts again */
			struct log *l = &logs[next_rand() % NR_LOGS];

			checksum += l->len;
			uvm_vfree(l->buf);
			memset(l, 0, sizeof(*l));
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int i = 0; i < NR_LOGS; i++)
		checksum += logs[i].len;
	getrusage(RUSAGE_SELF, &ru);
	printf("uvmdemo: %lu rounds, checksum %lu, %.3f s, %ld minor faults\n\n", rounds, checksum,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, ru.ru_minflt);

	printf("--- uvm_vmallocinfo (live areas, then unpurged) ---\n");
	uvm_vmallocinfo(stdout);
	uvm_stats(&st);
	printf("\n--- uvm_stats ---\n"
	       "regions %llu, reserved %llu MiB, committed %llu MiB\n"
	       "busy  %8llu areas %10llu bytes\n"
	       "cache %8llu areas %10llu bytes (hits %llu, misses %llu, drained %llu)\n"
	       "lazy  %8llu areas %10llu bytes\n"
	       "pool  %8llu areas %10llu bytes\n"
	       "free  %8llu ranges %9llu bytes, largest %llu\n"
	       "allocs %llu frees %llu pool hits %llu misses %llu purges %llu purged %llu bytes\n"
	       "syscalls %llu (mmap %llu mprotect %llu madvise %llu)\n",
	       (unsigned long long)st.regions, (unsigned long long)st.reserved_bytes >> 20,
	       (unsigned long long)st.committed_bytes >> 20, (unsigned long long)st.busy_count,
	       (unsigned long long)st.busy_bytes, (unsigned long long)st.cached_count, (unsigned long long)st.cached_bytes,
	       (unsigned long long)st.cache_hits, (unsigned long long)st.cache_misses, (unsigned long long)st.cache_drained,
	       (unsigned long long)st.lazy_count, (unsigned long long)st.lazy_bytes,
	       (unsigned long long)st.pooled_count, (unsigned long long)st.pooled_bytes, (unsigned long long)st.free_count,
	       (unsigned long long)st.free_bytes, (unsigned long long)st.largest_free, (unsigned long long)st.allocs,
	       (unsigned long long)st.frees, (unsigned long long)st.pool_hits, (unsigned long long)st.pool_misses,
	       (unsigned long long)st.purges, (unsigned long long)st.purged_bytes, (unsigned long long)st.syscalls,
	       (unsigned long long)st.mmap_calls, (unsigned long long)st.mprotect_calls, (unsigned long long)st.madvise_calls);
	for (int i = 0; i < NR_RECORDS; i++)
		uvm_vfree(rec[i]);
	for (int i = 0; i < NR_LOGS; i++)
		uvm_vfree(logs[i].buf);
	return 0;
}
