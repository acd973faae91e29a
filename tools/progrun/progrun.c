/*
 * progrun - run a program once and report what vmcompare compares of it:
 * its wall time, its own peak RSS, and a checksum of its standard output,
 * so that runs under different allocators can be checked against each
 * other.  One JSON object, with allocwork's fields.
 *
 * vmcompare cannot take a program's peak RSS from wait4() itself: Linux
 * keeps the high-water mark of the process that forked across exec, and
 * vmcompare, a Python process, is larger than some programs it runs.  This
 * tool forks the program from a process of a few hundred KiB, and the
 * program's ru_maxrss is its own.
 *
 *   progrun [--stdin FILE] -- PROGRAM [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: progrun [--stdin FILE] [--version] -- PROGRAM [ARG...]\n"
		   "  runs PROGRAM once and prints one JSON object: seconds (wall time), peak_rss_kib (the\n"
		   "  program's own), minor_faults, checksum (FNV-1a of its standard output), corrupt (false)\n"
		   "  --stdin FILE  the program's standard input (default: /dev/null)\n"
		   "  exit status: the program's; 2 for a bad command line\n");
}

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "progrun: %s%s (progrun --help says what it takes)\n", what, arg);
	return 2;
}

/* The child: stdin from in, stdout into the pipe, then the program. */
static void child(const char *in, int out[2], char **argv)
{
	int fd = open(in, O_RDONLY);

	if (fd < 0 || dup2(fd, 0) < 0 || dup2(out[1], 1) < 0) {
		fprintf(stderr, "progrun: %s: %s\n", in, strerror(errno));
		_exit(127);
	}
	close(fd);
	close(out[0]);
	close(out[1]);
	execvp(argv[0], argv);
	fprintf(stderr, "progrun: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stdin", required_argument, NULL, 'i' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = "/dev/null";
	uint64_t sum = 0xcbf29ce484222325ull;
	struct timespec t0, t1;
	struct rusage ru;
	unsigned char buf[65536];
	int out[2], status, c;
	ssize_t n;
	pid_t pid;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("progrun (uvmalloc) %s\n", UVM_VERSION);
			return 0;
		case ':':
			return usage_error("a value is needed after ", argv[optind - 1]);
		default:
			return usage_error("unknown option ", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("a program to run is needed", "");
	if (pipe(out))
		return perror("progrun: pipe"), 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return perror("progrun: fork"), 1;
	if (!pid)
		child(in, out, argv + optind);
	close(out[1]);
	while ((n = read(out[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		for (ssize_t i = 0; i < n; i++)
			sum = (sum ^ buf[i]) * 0x100000001b3ull;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return perror("progrun: wait4"), 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "progrun: %s %s %d\n", argv[optind], WIFEXITED(status) ? "exited" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	printf("{\"seconds\": %.6f, \"peak_rss_kib\": %ld, \"minor_faults\": %ld, \"checksum\": \"%016" PRIx64
	       "\", \"corrupt\": false}\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, ru.ru_maxrss, ru.ru_minflt, sum);
	return 0;
}
