/*
 * allocwork - runs one classic allocator workload on plain malloc & co.
 * and reports what it did and how long the work took (start-up excluded).
 * tools/vmcompare runs it under each allocator in turn.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "procstat.h"
#include "work.h"

static const struct workload *const workloads[] = { &work_larson, &work_prodcons, &work_mixed, &work_realloc, &work_frag,
						       &work_large,  &work_stress,   &work_local, &work_refill, &work_buffers, &work_churn,
						       &work_batch, &work_phases, &work_tasks };
#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

int work_threads(long n, void *(*fn)(void *), void *ctx, size_t stride)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	long started = 0;
	int err = 0;

	if (!t)
		return -1;
	for (; started < n && !err; started++)
		err = pthread_create(&t[started], NULL, fn, (char *)ctx + (size_t)started * stride);
	if (err)
		started--;
	for (long i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	return err;
}

void work_sum(struct work_result *r, const void *lanes, long n, size_t stride)
{
	for (long i = 0; i < n; i++) {
		const struct work_result *l = (const void *)((const char *)lanes + (size_t)i * stride);

		r->ops += l->ops;
		r->checksum += l->checksum;
		r->corrupt |= l->corrupt;
		r->live_bytes += l->live_bytes;
	}
}

void *work_lanes_alloc(long n, size_t lane_size)
{
	void *lanes = aligned_alloc(64, (size_t)n * lane_size);

	if (!lanes)
		abort();
	return memset(lanes, 0, (size_t)n * lane_size);
}

void work_lanes(const struct work_args *a, struct work_result *r, size_t lane_size, void *(*fn)(void *), uint64_t seed,
		long rounds)
{
	char *lanes = work_lanes_alloc(a->threads, lane_size);

	for (long i = 0; i < a->threads; i++) {
		struct work_lane *l = (struct work_lane *)(lanes + (size_t)i * lane_size);

		l->rng = seed * (uint64_t)(i + 1);
		l->rounds = rounds * a->scale;
	}
	if (work_threads(a->threads, fn, lanes, lane_size))
		abort();
	work_sum(r, lanes, a->threads, lane_size);
	free(lanes);
}

void work_fill(unsigned char *p, uint64_t size, uint64_t tag)
{
	p[0] = (unsigned char)tag;
	p[size - 1] = (unsigned char)(tag >> 8);
}

bool work_check(const unsigned char *p, uint64_t size, uint64_t tag)
{
	return p[0] == (unsigned char)tag && p[size - 1] == (unsigned char)(tag >> 8);
}

void work_release(struct work_lane *w, struct work_slot *s)
{
	w->res.corrupt |= !work_check(s->p, s->size, s->tag);
	w->res.checksum += s->p[0];
	free(s->p);
	s->p = NULL;
}

void work_write_pages(struct work_slot *s)
{
	for (uint64_t off = 4096; off < s->size - 1; off += 4096) /* work_fill wrote the ends */
		s->p[off] = (unsigned char)off;
}

void work_replace(struct work_lane *w, struct work_slot *s, uint64_t size)
{
	if (s->p)
		work_release(w, s);
	s->p = malloc(size);
	if (!s->p)
		abort();
	s->size = size;
	s->tag = w->res.ops++;
	work_fill(s->p, size, s->tag);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: allocwork [-t THREADS] [-s SCALE] [-w] [--json] [--version] WORKLOAD\n"
		   "  -t, --threads THREADS  threads (prodcons: THREADS/2 producer/consumer pairs), 1 to 4096; default 1\n"
		   "  -s, --scale SCALE      multiplies the amount of work, 1 to 4096; default 1\n"
		   "  -w, --write-all        write every byte of each block (stress writes its header and last byte,\n"
		   "                         batch its first byte; the other workloads write every page of theirs)\n"
		   "  --json                 one JSON object instead of a line of text\n"
		   "  workloads:\n");
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		fprintf(f, "    %-9s %s\n", workloads[i]->name, workloads[i]->stresses);
}

/* The workload called name, or NULL. */
static const struct workload *workload_named(const char *name)
{
	for (size_t k = 0; k < NR_WORKLOADS; k++)
		if (!strcmp(name, workloads[k]->name))
			return workloads[k];
	return NULL;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "allocwork: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (allocwork --help lists what it takes)\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' }, { "scale", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'J' },          { "version", no_argument, NULL, 'V' },
		{ "write-all", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
	};
	struct work_args a = { 1, 1, false };
	const struct workload *w;
	struct work_result r = { 0 };
	struct timespec t0, t1;
	bool json = false;
	unsigned long long v;
	double secs;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:s:wh", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
		case 's':
			if (!parse_count(optarg, 1, 4096, &v))
				return usage_error(c == 't' ? "-t needs a whole number from 1 to 4096, not %s"
							    : "-s needs a whole number from 1 to 4096, not %s", optarg);
			*(c == 't' ? &a.threads : &a.scale) = (long)v;
			break;
		case 'J':
			json = true;
			break;
		case 'w':
			a.write_all = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("allocwork (uvmalloc) %s\n", UVM_VERSION);
			return 0;
		case ':':
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option %s", optopt ? (char[]){ '-', (char)optopt, 0 } : argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("%s", optind == argc ? "a workload is needed" : "one workload at a time");
	if (!(w = workload_named(argv[optind])))
		return usage_error("unknown workload %s", argv[optind]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	w->run(&a, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (json)
		printf("{\"schema\":\"uvmalloc.allocwork/1\",\"workload\":\"%s\",\"threads\":%ld,\"scale\":%ld,"
		       "\"write_all\":%s,\"ops\":%llu,\"seconds\":%.6f,\"checksum\":\"%016llx\",\"peak_rss_kib\":%ld,\"rss_end_kib\":%ld,"
		       "\"live_bytes\":%llu,\"corrupt\":%s}\n",
		       w->name, a.threads, a.scale, a.write_all ? "true" : "false", (unsigned long long)r.ops, secs, (unsigned long long)r.checksum,
		       peak_rss_kib(), rss_kib(), (unsigned long long)r.live_bytes, r.corrupt ? "true" : "false");
	else
		printf("%s: %llu allocations in %.3f s (%.1f M/s), checksum %016llx, peak RSS %ld KiB, at the end %ld KiB "
		       "holding %llu KiB%s\n",
		       w->name, (unsigned long long)r.ops, secs, (double)r.ops / secs / 1e6, (unsigned long long)r.checksum,
		       peak_rss_kib(), rss_kib(), (unsigned long long)(r.live_bytes >> 10), r.corrupt ? ", CORRUPT" : "");
	if (r.corrupt)
		fprintf(stderr, "allocwork: %s: a block did not hold what was written into it\n", w->name);
	return r.corrupt ? 1 : 0;
}
