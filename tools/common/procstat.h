/*
 * procstat.h - what the tools read of a process in /proc: the benchmarks
 * their own peak and current resident set, vminfo and vmtrace another
 * process's page faults.  A parent cannot
 * measure the peak for them: wait4()'s ru_maxrss keeps the high-water mark
 * of the process that forked and exec'd them (a 13 MiB Python driver made
 * every run look 13 MiB), while VmHWM belongs to the program's own mm.
 */
#ifndef TOOLS_PROCSTAT_H
#define TOOLS_PROCSTAT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* A "Name:  N kB" field of /proc/self/status, in KiB; -1 if absent. */
static inline long proc_status_kib(const char *name)
{
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			if (sscanf(line + n + 1, "%ld", &v) != 1)
				v = -1;
			break;
		}
	fclose(f);
	return v;
}

static inline long peak_rss_kib(void) { return proc_status_kib("VmHWM"); }
static inline long rss_kib(void) { return proc_status_kib("VmRSS"); }

/*
 * Process pid's minor and major page faults so far, fields 10 and 12 of
 * /proc/PID/stat, counted after the command name's closing parenthesis (a
 * name may hold spaces and parentheses).  0, or -1 once it is gone.
 */
static inline int proc_faults(pid_t pid, uint64_t *minor, uint64_t *major)
{
	char path[64], buf[1024], *p;
	unsigned long long min, maj;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* After the name: state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt */
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &min, &maj) != 2)
		return -1;
	*minor = min;
	*major = maj;
	return 0;
}

#endif
