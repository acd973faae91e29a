/*
 * target.h - another process, seen from outside: its memory through
 * process_vm_readv, its modules and symbols through elfutils' libdwfl, and
 * the uvmalloc descriptor found among them.
 */
#ifndef TOOLS_TARGET_H
#define TOOLS_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uvmalloc-descriptor.h"

struct target {
	pid_t pid;
	struct Dwfl *dwfl;
	uint64_t desc_addr;
	struct uvm_descriptor d;
};

#define SLAB_HEADER_MAX 512u /* a slab header's size: read into buffers of this size */

/* Whether the descriptor describes slab headers (libraries from before them do not). */
static inline int target_has_slabs(const struct uvm_descriptor *d) { return d->slab_header != 0; }

/* Errors, each with its own message and exit status. */
enum target_err {
	T_OK,
	T_NO_PROCESS,  /* no such process, or it exited while we read */
	T_PERMISSION,  /* reading needs the rights of ptrace */
	T_NOT_UVM,     /* no uvm_descriptor in any module */
	T_NOT_READY,   /* the library is loaded but not set up yet */
	T_VERSION,     /* a descriptor version this vminfo does not know */
	T_TORN,        /* the state kept changing under every retry */
	T_CORRUPT,     /* the descriptor or a structure is inconsistent while it stands still */
};

/* Record why the target's state is inconsistent (printf format) for target_strerror; returns T_CORRUPT. */
enum target_err target_corrupt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *target_strerror(enum target_err e, pid_t pid);
/* Find the process, its modules and its descriptor. */
enum target_err target_open(struct target *t, pid_t pid);
void target_close(struct target *t);
/* Copy len bytes at addr in the target; T_NO_PROCESS, T_PERMISSION, or T_TORN for an address that is gone. */
enum target_err target_read(const struct target *t, uint64_t addr, void *buf, size_t len);
/* A uint64_t (or the low bytes of a smaller field) at addr. */
enum target_err target_write(const struct target *t, uint64_t addr, const void *buf, size_t len);
enum target_err target_u64(const struct target *t, uint64_t addr, uint64_t *out);
/* Set the heap profile's sampling rate (bytes, 0 = off) in the target, taking effect at each thread's next allocation. */
enum target_err target_set_prof_rate(const struct target *t, uint64_t rate);
/* "function+0xoff/0xlen [module]" for a code address, or "0x..." when no symbol covers it. */
/* "function+0xOFF/0xSIZE [module]", else "0xADDR [module+0xOFF]" (the offset addr2line takes), else "0xADDR". */
void target_symbol(const struct target *t, uint64_t addr, char *buf, size_t len);
/* A stack's return address ip, named by the call before it: "function+0xOFF [module]", "[module+0xOFF]" or "0xIP". */
void target_frame(const struct target *t, uint64_t ip, char *buf, size_t len);

#endif
