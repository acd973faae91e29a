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

static void print_busy(const struct vmap_area *va, void *out)
{
	FILE *f = out;

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

static void print_lazy(const struct vmap_area *va, void *f)
{
	fprintf(f, "0x%016lx-0x%016lx %7lu unpurged vm_area\n", (unsigned long)va->va_start, (unsigned long)va->va_end,
		(unsigned long)va_size(va));
}

void uvm_vmallocinfo(FILE *f)
{
	if (uvm_init())
		return;
	vn_snapshot_each(vn_busy_snapshot, print_busy, f);
	vn_snapshot_each(vn_lazy_snapshot, print_lazy, f);
}
