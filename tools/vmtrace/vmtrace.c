/*
 * vmtrace - uvmalloc's allocation behaviour and fragmentation over time,
 * live, from its USDT probes (lib/base/trace.h), with libbpf and a CO-RE BPF
 * skeleton (vmtrace.bpf.c).
 *
 * It attaches to every process that maps the library, to one (-p), or to
 * a command it starts (-- CMD, its children included), and prints an
 * interval line per process from the snapshot probe's counters; at the
 * end, histograms and call sites of the sampled allocations.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <limits.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "heap.h"
#include "procstat.h"
#include "report.h"
#include "sites.h"
#include "target.h"
#include "uvmalloc.h"
#include "vmtrace.h"
#include "vmtrace.skel.h"

enum exit_code {
	EXIT_USAGE = 2,
	EXIT_NOT_PERMITTED = 3, /* needs root or CAP_SYS_ADMIN */
	EXIT_NO_KERNEL_SUPPORT = 4, /* no BTF or no uprobes */
	EXIT_NO_PROCESS = 5,
	EXIT_NO_LIBRARY = 6,
};

struct options {
	pid_t pid;
	double interval, duration;
	bool json, heap;
	unsigned sample;
	unsigned long long heap_sample;
	const char *lib, *svg, *output;
	char **command;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig, stop = 1; }
/* Only to end the main loop's wait (ppoll) when the command stops or ends (target_done). */
static void on_child(int sig) { (void)sig; }

static void usage(FILE *f)
{
	fprintf(f, "usage: vmtrace [-p PID] [-i SECONDS] [-d SECONDS] [--json] [--sample N] [--heap] [--heap-sample BYTES]\n"
		   "               [-o FILE] [--lib PATH] [--svg FILE] [--version] [-- COMMAND [ARG...]]\n"
		   "  (no -p, no COMMAND)  every process that maps the library\n"
		   "  -p, --pid PID            one running process\n"
		   "  -- COMMAND               start COMMAND and follow it and its children until it exits\n"
		   "                           (COMMAND stays under ptrace, exit events only, to name its call sites)\n"
		   "  -i, --interval SECONDS   interval between lines (default 1)\n"
		   "  -d, --duration SECONDS   stop after this long (a COMMAND goes on running, untraced)\n"
		   "  --json        one JSON object per interval, and one at the end\n"
		   "  --sample N    time and report one allocation in N (sizes, latency, call sites); default 0 = off\n"
		   "  --heap        at the end, the sampled allocations made while tracing and not freed, by stack; a process\n"
		   "                that samples none is made to (--heap-sample), within one interval, and put back at the end\n"
		   "  --heap-sample BYTES  the heap profile's mean bytes between samples (default 512K; K, M, G: times 1024...)\n"
		   "  -o, --output FILE    write the report (text or JSON) to FILE, not stdout, apart from a command's output\n"
		   "  --lib PATH    the library to trace, libuvmalloc.so.0 or libuvmalloc-preload.so (default: the one the\n"
		   "                process uses; with a COMMAND, both of vmtrace's own build or install)\n"
		   "  --svg FILE    at the end, a chart per process of its resident and live bytes, the overhead by where\n"
		   "                it is held, and the committed span's fragmentation, one point per interval\n"
		   "exit status: 0 done, 1 failed, 2 usage, 3 not permitted (needs root or CAP_SYS_ADMIN),\n"
		   "  4 kernel without BTF or uprobes, 5 no such process, 6 library not found;\n"
		   "  with -- COMMAND: the command's own status (128 + N when signal N ended it), 127 when it\n"
		   "  could not be started, 0 when -d or Ctrl-C left it running\n");
}

static int fail(int code, const char *fmt, const char *arg)
{
	fprintf(stderr, "vmtrace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return code;
}

#define MAX_SECONDS (86400.0 * 366 * 10)

/* One option's value into o; EXIT_USAGE with the reason when it is not one. */
static int option_value(int c, const char *v, struct options *o)
{
	unsigned long long n;

	switch (c) {
	case 'p':
		if (!parse_count(v, 1, INT32_MAX, &n))
			return fail(EXIT_USAGE, "-p needs a process id (a whole number from 1), not %s", v);
		o->pid = (pid_t)n;
		return 0;
	case 'i':
		return parse_seconds(v, 0.01, MAX_SECONDS, &o->interval) ? 0 :
			fail(EXIT_USAGE, "-i needs a number of seconds from 0.01, not %s", v);
	case 'd':
		return parse_seconds(v, 0, MAX_SECONDS, &o->duration) ? 0 :
			fail(EXIT_USAGE, "-d needs a number of seconds from 0 (0 = until the end), not %s", v);
	case 'S':
		if (!parse_count(v, 0, 1ull << 31, &n))
			return fail(EXIT_USAGE, "--sample needs a whole number from 0 to 2147483648, not %s", v);
		o->sample = (unsigned)n;
		return 0;
	case 'L':
		o->lib = v;
		return 0;
	case 'B':
		if (!parse_bytes(v, 1, 1ull << 40, &n))
			return fail(EXIT_USAGE, "--heap-sample needs a number of bytes from 1 to 1T (K, M, G, T: times 1024...), not %s", v);
		o->heap_sample = n;
		return 0;
	case 'o':
		o->output = v;
		return 0;
	default: /* 'G' */
		o->svg = v;
		return 0;
	}
}

/* getopt_long's parse: short and long forms (-i 1, --interval=1), "--" before the command. */
static int parse(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },      { "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' }, { "json", no_argument, NULL, 'J' },
		{ "sample", required_argument, NULL, 'S' },   { "lib", required_argument, NULL, 'L' },
		{ "svg", required_argument, NULL, 'G' },      { "version", no_argument, NULL, 'V' },
		{ "heap", no_argument, NULL, 'H' },           { "heap-sample", required_argument, NULL, 'B' },
		{ "output", required_argument, NULL, 'o' },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, err;

	*o = (struct options){ .interval = 1, .heap_sample = 512 << 10 };
	opterr = 0; /* our messages name the argument and what it takes */
	while ((c = getopt_long(argc, argv, "+:p:i:d:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			o->json = true;
			break;
		case 'H':
			o->heap = true;
			break;
		case 'V':
			printf("vmtrace (uvmalloc) %s\n", UVM_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			return fail(EXIT_USAGE, "%s needs a value", argv[optind - 1]);
		case '?': {
			char opt[3] = { '-', (char)optopt, 0 };

			/* optopt names a short option; a long one is the argument getopt just passed */
			return fail(EXIT_USAGE, "unknown option %s (vmtrace --help lists them)", optopt ? opt : argv[optind - 1]);
		}
		default:
			if ((err = option_value(c, optarg, o)))
				return err;
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return fail(EXIT_USAGE, "unexpected argument %s (a command to start goes after --)", argv[optind]);
		o->command = &argv[optind];
	} else if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
		return fail(EXIT_USAGE, "%s", "-- needs a command to start");
	}
	if (o->pid && o->command)
		return fail(EXIT_USAGE, "%s", "-p and -- COMMAND exclude each other: trace a running process or start one");
	return 0;
}

/* ------------------------------------------------------------ preflight */

static bool has_cap_sys_admin(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return eff & (1ull << 21); /* CAP_SYS_ADMIN */
}

/* What the kernel and our rights must allow, checked before libbpf's own messages would say it less clearly. */
static int preflight(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return fail(EXIT_NO_KERNEL_SUPPORT, "this kernel has no BTF (%s): CO-RE programs cannot load",
			    "/sys/kernel/btf/vmlinux");
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK))
		return fail(EXIT_NO_KERNEL_SUPPORT, "this kernel has no uprobe PMU (%s): USDT probes cannot attach",
			    "/sys/bus/event_source/devices/uprobe");
	if (!has_cap_sys_admin())
		return fail(EXIT_NOT_PERMITTED, "not permitted: creating uprobes needs CAP_SYS_ADMIN (%s)",
			    "run as root; CAP_BPF and CAP_PERFMON are not enough on this kernel");
	return 0;
}

/* ------------------------------------------------------------- library */

/*
 * The libraries that hold the allocator: libuvmalloc-preload.so holds a
 * copy of its own (preload/meson.build), the one a process uses whenever
 * it maps it (its names come first), else libuvmalloc.so's.
 */
struct libs {
	char path[2][PATH_MAX];
	unsigned n;
};

/* The library whose allocator a process uses, from /proc/PID/maps: the preload library if it maps one. */
static bool lib_of(pid_t pid, struct libs *l)
{
	char name[64], line[512], path[400];
	int found = 0; /* 1: libuvmalloc.so, 2: the preload library */
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(name, "r")))
		return false;
	while (found < 2 && fgets(line, sizeof(line), f)) {
		const char *base;
		int which;

		if (sscanf(line, "%*s %*s %*s %*s %*s %399s", path) != 1 || !(base = strrchr(path, '/')))
			continue;
		which = !strncmp(base + 1, "libuvmalloc-preload.so", 22) ? 2 : !strncmp(base + 1, "libuvmalloc.so", 14) ? 1 : 0;
		if (which > found) {
			found = which;
			snprintf(l->path[0], sizeof(l->path[0]), "%s", path);
		}
	}
	fclose(f);
	l->n = found ? 1 : 0;
	return found;
}

/*
 * The libraries of vmtrace's own build or install, which programs of the
 * same build or install map, linked or preloaded: the build tree's while
 * vmtrace runs from the build tree, else the installed ones (paths fixed
 * at build time); those that exist.
 */
static bool own_libraries(struct libs *l)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	bool built;

	if (n < 0)
		return false;
	self[n] = 0;
	built = !strncmp(self, VT_BUILD_ROOT "/", strlen(VT_BUILD_ROOT "/"));
	l->n = 0;
	if (realpath(built ? VT_BUILD_LIB : VT_INSTALLED_LIB, l->path[l->n]))
		l->n++;
	if (realpath(built ? VT_BUILD_PRELOAD : VT_INSTALLED_PRELOAD, l->path[l->n]))
		l->n++;
	return l->n > 0;
}

static int find_library(const struct options *o, struct libs *l)
{
	if (o->lib) {
		if (access(o->lib, R_OK))
			return fail(EXIT_NO_LIBRARY, "library not found: %s", o->lib);
		snprintf(l->path[0], sizeof(l->path[0]), "%s", o->lib);
		l->n = 1;
		return 0;
	}
	if (o->pid) {
		if (kill(o->pid, 0) && errno == ESRCH)
			return fail(EXIT_NO_PROCESS, "no process %s", "with that pid");
		if (!lib_of(o->pid, l))
			return fail(EXIT_NO_LIBRARY, "library not found: the process maps no libuvmalloc.so (%s)",
				    "is it linked with the library, or started with libuvmalloc-preload.so?");
		return 0;
	}
	if (!own_libraries(l))
		return fail(EXIT_NO_LIBRARY, "library not found: %s", "give it with --lib");
	return 0;
}

/* ------------------------------------------------------------- command */

/* Start COMMAND held at a gate, so the probes are attached before its first allocation. */
static pid_t spawn(char **command, unsigned sample, unsigned long long heap_sample, int *gate)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c, buf[24];

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		close(fds[0]);
		if (sample) {
			snprintf(buf, sizeof(buf), "%u", sample);
			setenv("UVM_TRACE_SAMPLE", buf, 1);
		}
		if (heap_sample) { /* the command's own setting, if it has one, wins */
			snprintf(buf, sizeof(buf), "%llu", heap_sample);
			setenv("UVM_PROF_SAMPLE", buf, 0);
		}
		execvp(command[0], command);
		fprintf(stderr, "vmtrace: cannot run %s: %s\n", command[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*gate = fds[1];
	return pid;
}

/* -------------------------------------------------------------- attach */

#define NPROBES 13

/*
 * Every probe of lib, its links into links (NULL: the skeleton's own, which
 * vmtrace_bpf__destroy detaches; the caller detaches the others).
 */
static int attach(struct vmtrace_bpf *skel, pid_t pid, const char *lib, unsigned sample, bool heap, struct bpf_link **links)
{
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
		const char *probe;
	} probes[] = {
		{ skel->progs.on_snapshot, &skel->links.on_snapshot, "snapshot" },
		{ skel->progs.on_alloc, &skel->links.on_alloc, "alloc" },
		{ skel->progs.on_cache_miss, &skel->links.on_cache_miss, "cache_miss" },
		{ skel->progs.on_cache_drain, &skel->links.on_cache_drain, "cache_drain" },
		{ skel->progs.on_pool_miss, &skel->links.on_pool_miss, "pool_miss" },
		{ skel->progs.on_tree_alloc, &skel->links.on_tree_alloc, "tree_alloc" },
		{ skel->progs.on_region_new, &skel->links.on_region_new, "region_new" },
		{ skel->progs.on_purge, &skel->links.on_purge, "purge" },
		{ skel->progs.on_slab_refill, &skel->links.on_slab_refill, "slab_refill" },
		{ skel->progs.on_slab_release, &skel->links.on_slab_release, "slab_release" },
		{ skel->progs.on_prof_alloc, &skel->links.on_prof_alloc, "prof_alloc" },
		{ skel->progs.on_prof_free, &skel->links.on_prof_free, "prof_free" },
		{ skel->progs.on_thp_verdict, &skel->links.on_thp_verdict, "thp_verdict" },
	};
	_Static_assert(sizeof(probes) / sizeof(probes[0]) == NPROBES, "NPROBES sizes the second library's links");

	for (size_t i = 0; i < NPROBES; i++) {
		struct bpf_link **link = links ? &links[i] : probes[i].link;

		/* Unattached, the alloc probe's semaphore stays 0 and malloc does not even count down. */
		if (!sample && probes[i].link == &skel->links.on_alloc)
			continue;
		if (!heap && (probes[i].link == &skel->links.on_prof_alloc || probes[i].link == &skel->links.on_prof_free))
			continue;
		*link = bpf_program__attach_usdt(probes[i].prog, pid ? pid : -1, lib, "uvmalloc", probes[i].probe, NULL);
		if (!*link) {
			int err = -errno;

			if (err == -EPERM || err == -EACCES)
				return fail(EXIT_NOT_PERMITTED, "not permitted to attach uprobes: %s", "needs CAP_SYS_ADMIN");
			/* A library from before the probe: its process is traced without it. */
			if (err == -ENOENT && probes[i].link == &skel->links.on_thp_verdict)
				continue;
			if (err == -ENOENT)
				return fail(EXIT_NO_LIBRARY, "the library has no uvmalloc USDT probes: %s", lib);
			fprintf(stderr, "vmtrace: cannot attach uvmalloc:%s in %s: %s\n", probes[i].probe, lib, strerror(-err));
			return 1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- maps */

/* Resident bytes of a process (the second field of /proc/PID/statm, in pages), or 0 once it is gone. */
static uint64_t rss_of(pid_t pid)
{
	char path[64];
	unsigned long long size, resident;
	FILE *f;
	int got;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	got = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	return got == 2 ? resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static void read_snapshots(struct vmtrace_bpf *skel, struct report *r)
{
	int fd = bpf_map__fd(skel->maps.snaps);
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct vt_snap a, b;
		struct proc *p;
		uint64_t major;

		key = next;
		prev = &key;
		/* Read twice with the same even sequence: a copy the BPF side was not writing. */
		for (int tries = 0; tries < 10; tries++) {
			if (bpf_map_lookup_elem(fd, &key, &a) || bpf_map_lookup_elem(fd, &key, &b))
				break;
			if (!(a.seq & 1) && a.seq == b.seq && !memcmp(a.words, b.words, sizeof(a.words)))
				break;
		}
		if ((a.seq & 1) || !(p = report_proc(r, (pid_t)key)) || a.seq == p->snapshots)
			continue;
		p->snapshots = a.seq;
		memcpy(&p->last, a.words, sizeof(p->last));
		memcpy(p->span, a.words + VT_STATS_WORDS, sizeof(p->span));
		p->rss_bytes = rss_of(p->pid);
		proc_faults(p->pid, &p->faults, &major); /* a process already gone keeps its last count */
		p->last_ns = a.ns;
		p->fresh = true;
		if (!p->have_base) {
			p->base_ns = r->zero_base ? r->start_ns : a.ns;
			if (!r->zero_base) {
				p->faults_base = p->faults;
				p->base = p->last;
				memcpy(p->span_base, p->span, sizeof(p->span));
			}
			p->have_base = true;
		}
	}
}

static void sum_percpu(struct bpf_map *map, uint64_t *out, unsigned n)
{
	int cpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(map);
	uint64_t *v = calloc((size_t)cpus, sizeof(*v));

	for (unsigned k = 0; v && k < n; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (int c = 0; c < cpus; c++)
			out[k] += v[c];
	}
	free(v);
}

static int by_bytes(const void *a, const void *b)
{
	const struct vt_site_row *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* The top n sites by bytes (all of them sorted, the caller prints n). */
static size_t read_sites(struct vmtrace_bpf *skel, struct vt_site_row **out)
{
	int fd = bpf_map__fd(skel->maps.sites);
	struct vt_site key, next, *prev = NULL;
	struct vt_site_row *rows = NULL;
	size_t n = 0, cap = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct vt_site_val v;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (n == cap) {
			struct vt_site_row *grown = realloc(rows, (cap = cap ? cap * 2 : 64) * sizeof(*rows));

			if (!grown)
				break;
			rows = grown;
		}
		rows[n++] = (struct vt_site_row){ (pid_t)key.tgid, (int)key.api, key.caller, v.bytes, v.count };
	}
	if (n)
		qsort(rows, n, sizeof(*rows), by_bytes);
	*out = rows;
	return n;
}

/* --sample for a process already running: written into it through its descriptor. */
static void set_sample(struct proc *p, unsigned sample)
{
	struct target t;
	uint32_t v = sample;

	if (p->sample_set || target_open(&t, p->pid) != T_OK)
		return;
	if (t.d.size >= sizeof(t.d) && t.d.trace_sample && target_write(&t, t.d.trace_sample, &v, sizeof(v)) == T_OK)
		p->sample_set = true;
	target_close(&t);
}

/*
 * Keep each process's mappings (to name call sites after it exits: on
 * first sight, then every interval for later dlopens) and give it the
 * sampling period.
 */
static void visit_processes(struct report *r, const struct options *o, bool interval)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc *p = &r->procs[i];

		if (p->gone || (!interval && p->maps))
			continue;
		if (kill(p->pid, 0) && errno == ESRCH) {
			p->gone = true;
			continue;
		}
		maps_capture(&p->maps, p->pid);
		if (o->sample && !o->command)
			set_sample(p, o->sample);
		if (o->heap)
			heap_start(p, o->heap_sample);
	}
}

/* ---------------------------------------------------------------- main */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Whether the target has ended.  The command is traced (PTRACE_SEIZE with
 * PTRACE_O_TRACEEXIT, where ptrace is allowed: follow), so that it stops
 * on its way out with its mappings still in place: *exiting says so, and
 * the caller reads them before letting it go.  A command that ran between
 * two of the loop's looks left no mappings to name its call sites after
 * (the test's workload, under load, 1 run in 8).  Its other stops are its
 * signals, handed back to it, or a group stop, kept until SIGCONT.
 */
static bool target_done(const struct options *o, pid_t child, bool traced, int *status, bool *exiting)
{
	*exiting = false;
	if (!child)
		return o->pid && kill(o->pid, 0) && errno == ESRCH;
	if (waitpid(child, status, WNOHANG) != child)
		return false;
	if (!traced || !WIFSTOPPED(*status))
		return true;
	if (*status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
		*exiting = true;
	else if (*status >> 16 == PTRACE_EVENT_STOP)
		ptrace(PTRACE_LISTEN, child, 0, 0);
	else
		ptrace(PTRACE_CONT, child, 0, (void *)(long)WSTOPSIG(*status));
	return false;
}

static void collect(struct vmtrace_bpf *skel, struct report *r, const struct options *o, bool interval)
{
	read_snapshots(skel, r);
	sum_percpu(skel->maps.events, r->events, VT_NR_EVENTS);
	visit_processes(r, o, interval);
}

static void finish(struct vmtrace_bpf *skel, struct report *r, const struct options *o)
{
	struct vt_hists h;
	struct vt_site_row *sites;
	size_t n;

	sum_percpu(skel->maps.size_hist, h.size, VT_HIST);
	sum_percpu(skel->maps.latency_hist, h.latency, VT_HIST);
	n = read_sites(skel, &sites);
	report_final(r, &h, sites, n < 10 ? n : 10);
	free(sites);
	if (o->heap) {
		heap_stop(r);
		heap_report(r, bpf_map__fd(skel->maps.heap_blocks), bpf_map__fd(skel->maps.heap_stacks), 20);
	}
}

#define LOOK_NS (20 * 1000 * 1000) /* between two looks at the maps (new processes, their mappings) */

static int run(struct vmtrace_bpf *skel, struct report *r, const struct options *o, pid_t child, bool traced, int gate,
	       const sigset_t *waiting)
{
	double start = now_s(), last = start, looked = start;
	int status = 0;
	bool done = false, target_exited = false, exiting;

	r->start_ns = (uint64_t)(start * 1e9);
	if (gate >= 0) {
		if (write(gate, "g", 1) != 1)
			return 1;
		close(gate);
	}
	if (o->pid)
		report_proc(r, o->pid);
	while (!done) {
		struct timespec pause = { 0, LOOK_NS };
		double t = now_s();

		target_exited = target_done(o, child, traced, &status, &exiting);
		if (exiting) {
			collect(skel, r, o, true); /* its last snapshots, and its mappings while it has them */
			ptrace(PTRACE_CONT, child, 0, 0);
			continue;
		}
		done = stop || target_exited || (o->duration && t - start >= o->duration);
		if (done || t - last >= o->interval) {
			collect(skel, r, o, true);
			if (t - last >= 0.001)
				report_interval(r, t - start, t - last);
			last = looked = t;
		} else if (t - looked >= LOOK_NS / 1e9) { /* not on every stop of a command that takes many signals */
			collect(skel, r, o, false);
			looked = t;
		}
		/* SIGCHLD (blocked elsewhere) ends the wait at once: the command's stops cost it no sleep of ours. */
		if (!done)
			ppoll(NULL, 0, &pause, waiting);
	}
	finish(skel, r, o);
	/* A command still running at -d or Ctrl-C goes on, untraced, once the probes detach: its status is not ours to wait for. */
	if (!child || !target_exited)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) && !o->json)
		fprintf(r->out, "\n%s exited with status %d\n", o->command[0], WEXITSTATUS(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	struct options o;
	struct report r = { .out = stdout };
	struct vmtrace_bpf *skel;
	struct libs libs;
	struct bpf_link *more[NPROBES] = { NULL }; /* the second library's */
	pid_t child = 0;
	bool traced = false;
	int gate = -1, err = parse(argc, argv, &o);

	if (err || (err = preflight()) || (err = find_library(&o, &libs)))
		return err;
	r.json = o.json;
	r.svg = o.svg;
	if (o.output && !(r.out = fopen(o.output, "w")))
		return fail(1, "cannot write the report: %s", strerror(errno));
	skel = vmtrace_bpf__open();
	if (!skel)
		return fail(1, "cannot open the BPF object: %s", strerror(errno));
	if (o.command) {
		child = spawn(o.command, o.sample, o.heap ? o.heap_sample : 0, &gate);
		if (child < 0)
			return fail(1, "cannot start the command: %s", strerror(errno));
		/* Not allowed (a seccomp filter, Yama at 3): its call sites may then go unnamed if it is short-lived. */
		traced = !ptrace(PTRACE_SEIZE, child, 0, (void *)(long)PTRACE_O_TRACEEXIT);
		skel->rodata->target_tgid = child;
		skel->rodata->follow_children = true;
		r.zero_base = true;
	} else {
		skel->rodata->target_tgid = o.pid;
	}
	if (vmtrace_bpf__load(skel)) {
		err = errno == EPERM || errno == EACCES
			      ? fail(EXIT_NOT_PERMITTED, "not permitted to load BPF programs: %s", "needs CAP_SYS_ADMIN")
			      : fail(1, "cannot load the BPF programs: %s", strerror(errno));
	} else {
		/* A command is followed into its children: attach to every process, keep the family in BPF. */
		err = attach(skel, o.command ? 0 : o.pid, libs.path[0], o.sample, o.heap, NULL);
		if (!err && libs.n > 1)
			err = attach(skel, o.command ? 0 : o.pid, libs.path[1], o.sample, o.heap, more);
	}
	if (!err) {
		struct sigaction sa = { .sa_handler = on_child };
		sigset_t chld, waiting;

		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		sigaction(SIGCHLD, &sa, NULL);
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, &waiting); /* after the fork: the command's mask is its own */
		if (!o.json)
			fprintf(stderr, "vmtrace: tracing %s%s%s%s; Ctrl-C to stop\n", libs.path[0], libs.n > 1 ? " and " : "",
				libs.n > 1 ? libs.path[1] : "",
				o.command ? " in the command and its children" : o.pid ? " in one process" : " in every process");
		err = run(skel, &r, &o, child, traced, gate, &waiting);
	} else if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	for (size_t i = 0; i < NPROBES; i++)
		bpf_link__destroy(more[i]);
	vmtrace_bpf__destroy(skel);
	for (size_t i = 0; i < r.nprocs; i++) {
		maps_free(r.procs[i].maps);
		chart_free(&r.procs[i].chart);
	}
	free(r.procs);
	if (r.out != stdout && fclose(r.out) && !err)
		err = fail(1, "cannot write the report: %s", strerror(errno));
	return err;
}
