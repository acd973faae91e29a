/*
 * target.c - reading another process: process_vm_readv for memory (and
 * process_vm_writev for the words vmtrace sets), libdwfl for its
 * modules, symbol tables and the descriptor's address.
 */
#include "target.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static char corrupt_why[192];

enum target_err target_corrupt(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(corrupt_why, sizeof(corrupt_why), fmt, ap);
	va_end(ap);
	return T_CORRUPT;
}

const char *target_strerror(enum target_err e, pid_t pid)
{
	static char msg[384];

	switch (e) {
	case T_OK:
		return "no error";
	case T_NO_PROCESS:
		snprintf(msg, sizeof(msg), "no such process: %d (or it exited while being read)", (int)pid);
		break;
	case T_PERMISSION:
		snprintf(msg, sizeof(msg),
			 "permission denied reading process %d: reading another process needs the rights of ptrace "
			 "(the same user and kernel.yama.ptrace_scope allowing it, or CAP_SYS_PTRACE)",
			 (int)pid);
		break;
	case T_NOT_UVM:
		snprintf(msg, sizeof(msg), "process %d does not use uvmalloc (no uvm_descriptor symbol in any of its modules)",
			 (int)pid);
		break;
	case T_NOT_READY:
		snprintf(msg, sizeof(msg), "process %d has uvmalloc loaded but has not allocated yet", (int)pid);
		break;
	case T_VERSION:
		snprintf(msg, sizeof(msg), "process %d has a uvmalloc descriptor of a version this vminfo does not know "
			 "(it reads version %d)", (int)pid, UVM_DESCRIPTOR_VERSION);
		break;
	case T_TORN:
		snprintf(msg, sizeof(msg), "process %d changed its allocator state under every retry: try again", (int)pid);
		break;
	case T_CORRUPT:
		snprintf(msg, sizeof(msg), "process %d has an inconsistent allocator state (%s): its memory may be corrupted",
			 (int)pid, corrupt_why);
		break;
	}
	return msg;
}

static enum target_err from_errno(int err)
{
	switch (err) {
	case ESRCH:
	case ENOENT:
		return T_NO_PROCESS;
	case EPERM:
	case EACCES:
		return T_PERMISSION;
	default:
		return T_TORN;
	}
}

enum target_err target_read(const struct target *t, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return T_OK;
	return n < 0 ? from_errno(errno) : T_TORN;
}

enum target_err target_write(const struct target *t, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(t->pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return T_OK;
	return n < 0 ? from_errno(errno) : T_TORN;
}

enum target_err target_u64(const struct target *t, uint64_t addr, uint64_t *out)
{
	*out = 0;
	return target_read(t, addr, out, sizeof(*out));
}

/*
 * The uvm_descriptor symbols of a process's modules: two when it maps both
 * libuvmalloc.so and libuvmalloc-preload.so, which holds a copy of the
 * allocator of its own; the one in use is the one that is ready (the other
 * never sets up).
 */
#define MAX_COPIES 4
struct find_ctx {
	uint64_t addr[MAX_COPIES];
	unsigned n;
};

static int find_descriptor(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr base, void *arg)
{
	struct find_ctx *ctx = arg;
	int n = dwfl_module_getsymtab(mod);

	(void)user, (void)name, (void)base;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (s && !strcmp(s, "uvm_descriptor") && GELF_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_shndx != SHN_UNDEF) {
			ctx->addr[ctx->n++] = addr;
			break;
		}
	}
	return ctx->n < MAX_COPIES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* A process that exited may linger as a zombie with no mappings: that is no process to read. */
static int alive(pid_t pid)
{
	char path[64], buf[512], *state;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	state = strrchr(buf, ')');
	return state && state[1] == ' ' && state[2] != 'Z' && state[2] != 'X';
}

/*
 * Limits no real layout comes near; they keep every later offset, product
 * and loop of a hostile descriptor in range.
 */
#define LAYOUT_MAX (1u << 20) /* a structure's size */
#define OBJECT_MAX 512u       /* a vmap_area's size: read into buffers of this size */
#define COUNT_MAX 4096u       /* regions, vmap nodes, NUMA nodes */
#define REGION_MAX 4096u      /* a region's size: the array of them is read whole */

/* Does a field of width bytes at offset off lie inside a structure of size bytes? */
static int fits(uint64_t off, uint64_t width, uint64_t size) { return size <= LAYOUT_MAX && off <= size - width && width <= size; }

#define NEED(cond, what) \
	do { \
		if (!(cond)) \
			return target_corrupt("descriptor: %s", what); \
	} while (0)

/* Every size, offset and count a reader will trust, range-checked once. */
static enum target_err check_descriptor(const struct uvm_descriptor *d)
{
	uint64_t vs = d->va_size, rs = d->region_size, ns = d->node_size, ss = d->space_size;

	NEED(d->page_size >= 4096 && d->page_size <= (1u << 30) && !(d->page_size & (d->page_size - 1)),
	     "page_size is not a power of two from 4 KiB to 1 GiB");
	NEED(vs >= 16 && vs <= OBJECT_MAX, "va_size out of range");
	NEED(fits(d->va_start, 8, vs) && fits(d->va_end, 8, vs) && fits(d->va_rb, 8, vs) && fits(d->va_left, 8, vs) &&
		     fits(d->va_right, 8, vs) && fits(d->va_caller, 8, vs) && fits(d->va_list, 8, vs) &&
		     fits(d->va_flags, 4, vs) && fits(d->va_live, 4, vs),
	     "a vmap_area field lies outside va_size");
	NEED(!d->va_requested || fits(d->va_requested, 8, vs), "va_requested lies outside va_size");
	NEED(!d->va_span_end || fits(d->va_span_end, 8, vs), "va_span_end lies outside va_size");
	NEED(!d->region_map || fits(d->region_map, 8, d->region_size), "region_map lies outside region_size");
	NEED(d->va_nid_shift < 32, "va_nid_shift out of range");
	NEED(d->thp_mode <= 4, "thp_mode out of range");
	NEED(!d->prof_stack_size ||
		     (d->prof_depth <= 4096 && fits(d->prof_hash, 8, d->prof_stack_size) &&
		      fits(d->prof_depth_off, 4, d->prof_stack_size) && fits(d->prof_bytes, 8, d->prof_stack_size) &&
		      fits(d->prof_count, 8, d->prof_stack_size) && fits(d->prof_samples, 8, d->prof_stack_size) &&
		      fits(d->prof_frames, 8 * d->prof_depth, d->prof_stack_size)),
	     "a heap profile stack field lies outside prof_stack_size");
	NEED(d->max_regions >= 1 && d->max_regions <= COUNT_MAX, "max_regions out of range");
	NEED(rs <= REGION_MAX, "region_size out of range");
	NEED(fits(d->region_base, 8, rs) && fits(d->region_end, 8, rs) && fits(d->region_committed, 8, rs) &&
		     fits(d->region_nid, 4, rs),
	     "a region field lies outside region_size");
	NEED(d->nr_nodes >= 1 && d->nr_nodes <= COUNT_MAX, "nr_nodes out of range");
	NEED(fits(d->busy_root, 8, ns) && fits(d->busy_seq, 8, ns) && fits(d->busy_nr, 8, ns) &&
		     fits(d->lazy_root, 8, ns) && fits(d->lazy_seq, 8, ns) && fits(d->lazy_nr, 8, ns) &&
		     fits(d->pool_nr, 8, ns) && fits(d->pool_bytes, 8, ns),
	     "a vmap node field lies outside node_size");
	NEED(d->nr_spaces >= 1 && d->nr_spaces <= COUNT_MAX, "nr_spaces out of range");
	NEED(fits(d->space_list, 16, ss) && fits(d->space_seq, 8, ss) && fits(d->space_count, 8, ss),
	     "a free-space field lies outside space_size");
	NEED(d->pcp_link < LAYOUT_MAX && d->pcp_hits < LAYOUT_MAX && d->pcp_misses < LAYOUT_MAX &&
		     d->pcp_allocs < LAYOUT_MAX && d->pcp_frees < LAYOUT_MAX,
	     "a thread cache field offset out of range");
	NEED(!d->hand_size || (d->hand_size <= 256 && d->hand_classes <= 256 && d->heap_hand_top < LAYOUT_MAX &&
				d->heap_hand < LAYOUT_MAX),
	     "a heap's hand out of range");
	if (target_has_slabs(d)) {
		uint64_t hs = d->slab_header;

		NEED(d->slab_size >= 4096 && d->slab_size <= (1u << 20) && !(d->slab_size & (d->slab_size - 1)),
		     "slab_size is not a power of two from 4 KiB to 1 MiB");
		NEED(hs >= 16 && hs <= SLAB_HEADER_MAX, "slab_header out of range");
		NEED(fits(d->slab_used, 4, hs) && fits(d->slab_carved, 4, hs) && fits(d->slab_room, 4, hs) &&
			     fits(d->slab_objsize, 4, hs) && fits(d->slab_remote, 8, hs) &&
			     (!d->slab_owner || fits(d->slab_owner, 8, hs)),
		     "a slab header field lies outside slab_header");
		NEED(d->slab_remote_shift >= 32 && d->slab_remote_shift < 64, "slab_remote_shift out of range");
		NEED(fits(d->region_chunks, 8, d->region_size), "region_chunks lies outside region_size");
		NEED((uint64_t)1 << d->chunk_shift == d->slab_size && d->chunk_bytes >= hs && d->chunk_bytes <= SLAB_HEADER_MAX,
		     "chunk_shift or chunk_bytes out of range");
	}
	return T_OK;
}

enum target_err target_open(struct target *t, pid_t pid)
{
	struct find_ctx ctx = { 0 };
	enum target_err e;
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->dwfl = dwfl_begin(&callbacks);
	if (!t->dwfl)
		return T_NO_PROCESS;
	err = dwfl_linux_proc_report(t->dwfl, pid);
	dwfl_report_end(t->dwfl, NULL, NULL);
	if (err)
		return from_errno(err);
	dwfl_getmodules(t->dwfl, find_descriptor, &ctx, 0);
	if (!ctx.n)
		return alive(pid) ? T_NOT_UVM : T_NO_PROCESS;
	for (unsigned i = ctx.n; i--;) { /* the one that is ready (one copy sets up), else the first */
		t->desc_addr = ctx.addr[i];
		e = target_read(t, ctx.addr[i], &t->d, sizeof(t->d));
		if (e)
			return e;
		if (t->d.ready && !memcmp(t->d.magic, UVM_DESCRIPTOR_MAGIC, sizeof(UVM_DESCRIPTOR_MAGIC)))
			break;
	}
	if (memcmp(t->d.magic, UVM_DESCRIPTOR_MAGIC, sizeof(UVM_DESCRIPTOR_MAGIC)))
		return T_NOT_UVM;
	if (!t->d.ready)
		return T_NOT_READY;
	if (t->d.version != UVM_DESCRIPTOR_VERSION || t->d.size < offsetof(struct uvm_descriptor, slab_size))
		return T_VERSION;
	if (t->d.size < sizeof(t->d)) /* a library from before the slab fields: what it lacks reads as absent */
		memset((char *)&t->d + t->d.size, 0, sizeof(t->d) - t->d.size);
	return check_descriptor(&t->d);
}

enum target_err target_set_prof_rate(const struct target *t, uint64_t rate)
{
	const struct uvm_descriptor *d = &t->d;
	uint64_t next, zero = 0;
	enum target_err e;

	if (!d->prof_rate || !d->heap_prof_left)
		return T_VERSION;
	if ((e = target_write(t, d->prof_rate, &rate, sizeof(rate))) || (e = target_u64(t, d->pcp_live, &next)))
		return e;
	/* Every live heap's countdown to 0: its thread's next allocation draws at the new rate (lib/heap/prof.h). */
	for (unsigned n = 0; next != d->pcp_live && n < (1u << 20); n++) {
		if ((e = target_write(t, next - d->pcp_link + d->heap_prof_left, &zero, sizeof(zero))))
			return e;
		if ((e = target_u64(t, next, &next)))
			return e;
	}
	return T_OK;
}

void target_close(struct target *t)
{
	if (t->dwfl)
		dwfl_end(t->dwfl);
	t->dwfl = NULL;
}

/* What target_symbol and target_frame print: addr's function, its module and the offsets. */
struct place {
	const char *name, *module; /* NULL: none found */
	GElf_Off off;              /* into the function */
	uint64_t size;             /* the function's */
	uint64_t file_off;         /* into the module's own addresses (addr2line's), when it has a module */
};

static struct place place_of(const struct target *t, uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(t->dwfl, addr);
	struct place p = { 0 };
	Dwarf_Addr bias = 0;
	GElf_Sym sym;

	if (!mod)
		return p;
	p.name = dwfl_module_addrinfo(mod, addr, &p.off, &sym, NULL, NULL, NULL);
	p.size = p.name ? sym.st_size : 0;
	p.module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (p.module && strrchr(p.module, '/'))
		p.module = strrchr(p.module, '/') + 1;
	if (!dwfl_module_getelf(mod, &bias))
		dwfl_module_info(mod, NULL, &bias, NULL, NULL, NULL, NULL, NULL);
	p.file_off = addr - bias;
	return p;
}

void target_symbol(const struct target *t, uint64_t addr, char *buf, size_t len)
{
	struct place p = place_of(t, addr);

	if (p.name)
		snprintf(buf, len, "%s+0x%llx/0x%llx [%s]", p.name, (unsigned long long)p.off, (unsigned long long)p.size,
			 p.module ? p.module : "?");
	else if (p.module)
		snprintf(buf, len, "0x%llx [%s+0x%llx]", (unsigned long long)addr, p.module, (unsigned long long)p.file_off);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}

void target_frame(const struct target *t, uint64_t ip, char *buf, size_t len)
{
	struct place p = place_of(t, ip - 1);

	if (p.name)
		snprintf(buf, len, "%s+0x%llx [%s]", p.name, (unsigned long long)p.off, p.module ? p.module : "?");
	else if (p.module)
		snprintf(buf, len, "[%s+0x%llx]", p.module, (unsigned long long)p.file_off);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)ip);
}
