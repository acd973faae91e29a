/*
 * procstat.h - what the benchmark tools report of their own process, read
 * from /proc/self: the peak and current resident set.  A parent cannot
 * measure the peak for them: wait4()'s ru_maxrss keeps the high-water mark
 * of the process that forked and exec'd them (a 13 MiB Python driver made
 * every run look 13 MiB), while VmHWM belongs to the program's own mm.
 */
#ifndef TOOLS_PROCSTAT_H
#define TOOLS_PROCSTAT_H

#include <stdio.h>
#include <string.h>

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

#endif
