/*
 * info.c - uvm_vmallocinfo(): this process's /proc/vmallocinfo.
 *
 * Areas are copied out of each node in small batches under its lock and
 * printed with the lock dropped: printing may allocate, and a lock held
 * across an allocation of our own would deadlock once we are malloc.  As in
 * the kernel since v6.9, output is sorted within a node, not across nodes.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "init.h"
#include "uvmalloc.h"
#include "vnode.h"

#define BATCH 32

typedef size_t (*snapshot_fn)(unsigned id, uintptr_t after, struct vmap_area *buf, size_t max);

/* %pS: symbol+0xoff/0xlen [module], or the raw address when no symbol covers it. */
static void print_caller(FILE *f, const void *caller)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (dladdr1(caller, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname && sym) {
		const char *mod = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;

		fprintf(f, " %s+0x%lx/0x%lx [%s]", info.dli_sname, (unsigned long)((uintptr_t)caller - (uintptr_t)info.dli_saddr),
			(unsigned long)sym->st_size, mod ? mod + 1 : info.dli_fname ? info.dli_fname : "?");
	} else {
		fprintf(f, " %p", caller);
	}
}

static void print_busy(FILE *f, const struct vmap_area *va)
{
	fprintf(f, "0x%016lx-0x%016lx %7lu", (unsigned long)va->va_start, (unsigned long)va->va_end, (unsigned long)va_size(va));
	if (va->caller)
		print_caller(f, va->caller);
	fprintf(f, " pages=%lu vmalloc%s N%u=%lu\n", (unsigned long)va_pages(va) - 1,
		va->flags & VA_SLAB	 ? " slab"
		: va->flags & VA_HUGETLB ? " hugetlb"
		: va->flags & VA_HUGE	 ? " huge"
					 : "",
		va_nid(va),
		(unsigned long)va_pages(va) - 1);
}

static void print_lazy(FILE *f, const struct vmap_area *va)
{
	fprintf(f, "0x%016lx-0x%016lx %7lu unpurged vm_area\n", (unsigned long)va->va_start, (unsigned long)va->va_end,
		(unsigned long)va_size(va));
}

static void print_all(FILE *f, snapshot_fn snap, void (*print)(FILE *, const struct vmap_area *))
{
	struct vmap_area buf[BATCH];

	for (unsigned id = 0; id < vn_count(); id++) {
		uintptr_t after = 0;
		size_t n;

		do {
			n = snap(id, after, buf, BATCH);
			for (size_t i = 0; i < n; i++)
				print(f, &buf[i]);
			if (n)
				after = buf[n - 1].va_start;
		} while (n == BATCH);
	}
}

void uvm_vmallocinfo(FILE *f)
{
	if (uvm_init())
		return;
	print_all(f, vn_busy_snapshot, print_busy);
	print_all(f, vn_lazy_snapshot, print_lazy);
}
