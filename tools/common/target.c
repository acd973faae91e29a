/*
 * target.c - reading another process: process_vm_readv for memory (and
 * process_vm_writev for the one word vmtrace sets), libdwfl for its
 * modules, symbol tables and the descriptor's address.
 */
#include "target.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

const char *target_strerror(enum target_err e, pid_t pid)
{
	static char msg[256];

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

struct find_ctx {
	uint64_t addr;
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
			ctx->addr = addr;
			return DWARF_CB_ABORT;
		}
	}
	return DWARF_CB_OK;
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
	if (!ctx.addr)
		return alive(pid) ? T_NOT_UVM : T_NO_PROCESS;
	t->desc_addr = ctx.addr;
	e = target_read(t, ctx.addr, &t->d, sizeof(t->d));
	if (e)
		return e;
	if (memcmp(t->d.magic, UVM_DESCRIPTOR_MAGIC, sizeof(UVM_DESCRIPTOR_MAGIC)))
		return T_NOT_UVM;
	if (!t->d.ready)
		return T_NOT_READY;
	if (t->d.version != UVM_DESCRIPTOR_VERSION || t->d.size < sizeof(t->d))
		return T_VERSION;
	return T_OK;
}

void target_close(struct target *t)
{
	if (t->dwfl)
		dwfl_end(t->dwfl);
	t->dwfl = NULL;
}

void target_symbol(const struct target *t, uint64_t addr, char *buf, size_t len)
{
	Dwfl_Module *mod = dwfl_addrmodule(t->dwfl, addr);
	const char *name = NULL, *modname = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;

	if (mod) {
		name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
		modname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	}
	if (!name) {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
		return;
	}
	if (modname && strrchr(modname, '/'))
		modname = strrchr(modname, '/') + 1;
	snprintf(buf, len, "%s+0x%llx/0x%llx [%s]", name, (unsigned long long)off, (unsigned long long)sym.st_size,
		 modname ? modname : "?");
}
