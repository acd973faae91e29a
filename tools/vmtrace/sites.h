/*
 * sites.h - naming the call sites of sampled allocations, even after the
 * process is gone: its file mappings are copied from /proc/PID/maps while
 * it runs, and the names are looked up offline in those files.
 */
#ifndef VMTRACE_SITES_H
#define VMTRACE_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_maps;

/* Copy (again) the file mappings of pid; keeps the last good copy when the process is gone. */
void maps_capture(struct proc_maps **m, pid_t pid);
/* "function+0x12 (file)" for addr in the copied mappings, else "0xADDR (file+0xOFF)", else its hex value. */
void maps_symbol(const struct proc_maps *m, uint64_t addr, char *buf, size_t len);
/* A stack's return address: "function+0xOFF [file]", "[file+0xOFF]" or "0xIP" (as vminfo names frames). */
void maps_frame(const struct proc_maps *m, uint64_t ip, char *buf, size_t len);
void maps_free(struct proc_maps *m);

#endif
