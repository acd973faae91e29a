/*
 * symbols.c - in-process symbolization (symbols.h).  Module files stay
 * mapped once read: the report runs at exit, and a second stack in the same
 * module must not read its file again.
 */
#include "symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct module {
	char path[256];
	uintptr_t bias;
	const unsigned char *file; /* the whole file, or NULL when it could not be read */
	size_t size;
};

#define MODULES 64
static struct module modules[MODULES];
static unsigned nr_modules;

struct lookup {
	uintptr_t ip;
	char path[256];
	uintptr_t bias;
	bool found;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lookup *l = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && l->ip >= lo && l->ip < lo + ph->p_memsz) {
			/* The program itself has no name here. */
			snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
			l->bias = info->dlpi_addr;
			l->found = true;
			return 1;
		}
	}
	return 0;
}

static struct module *module_of(const struct lookup *l)
{
	struct module *m;
	struct stat st;
	int fd;

	for (unsigned i = 0; i < nr_modules; i++)
		if (modules[i].bias == l->bias && !strcmp(modules[i].path, l->path))
			return &modules[i];
	if (nr_modules == MODULES)
		return NULL;
	m = &modules[nr_modules++];
	snprintf(m->path, sizeof(m->path), "%s", l->path);
	m->bias = l->bias;
	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && (size_t)st.st_size >= sizeof(ElfW(Ehdr))) {
		void *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (f != MAP_FAILED) {
			m->file = f;
			m->size = (size_t)st.st_size;
		}
	}
	if (fd >= 0)
		close(fd);
	return m;
}

/* Does [off, off + len) lie inside the file? */
static bool inside(const struct module *m, uint64_t off, uint64_t len) { return off <= m->size && len <= m->size - off; }

/* The function symbol of table sh (SHT_SYMTAB or SHT_DYNSYM) that holds addr, with its start; NULL if none. */
static const char *in_table(const struct module *m, const ElfW(Shdr) *sh, const ElfW(Shdr) *shdrs, unsigned nr,
			    uintptr_t addr, uintptr_t *start)
{
	const ElfW(Shdr) *str;

	if (sh->sh_link >= nr || sh->sh_entsize != sizeof(ElfW(Sym)) || !inside(m, sh->sh_offset, sh->sh_size))
		return NULL;
	str = &shdrs[sh->sh_link];
	if (!inside(m, str->sh_offset, str->sh_size))
		return NULL;
	for (size_t i = 0; i < sh->sh_size / sizeof(ElfW(Sym)); i++) {
		const ElfW(Sym) *s = (const ElfW(Sym) *)(m->file + sh->sh_offset) + i;

		if (ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_shndx != SHN_UNDEF && addr >= s->st_value &&
		    addr < s->st_value + (s->st_size ? s->st_size : 1) && s->st_name < str->sh_size &&
		    memchr(m->file + str->sh_offset + s->st_name, 0, str->sh_size - s->st_name)) {
			*start = s->st_value;
			return (const char *)m->file + str->sh_offset + s->st_name;
		}
	}
	return NULL;
}

static const char *function_of(const struct module *m, uintptr_t addr, uintptr_t *start)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)m->file;
	const ElfW(Shdr) *shdrs;
	const char *name = NULL;

	if (!m->file || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || !inside(m, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr))))
		return NULL;
	shdrs = (const ElfW(Shdr) *)(m->file + eh->e_shoff);
	for (unsigned pass = 0; pass < 2 && !name; pass++)
		for (unsigned i = 0; i < eh->e_shnum && !name; i++)
			if (shdrs[i].sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
				name = in_table(m, &shdrs[i], shdrs, eh->e_shnum, addr, start);
	return name;
}

/*
 * fn as the source names it: without its symbol version ("@@GLIBC_2.34"),
 * demangled by the program's own libstdc++ when it has one (a C program's
 * report keeps mangled names: it has no C++ frames).
 */
static void tidy(const char *fn, char *out, size_t len)
{
	char *(*demangle)(const char *, char *, size_t *, int *) =
		(char *(*)(const char *, char *, size_t *, int *))dlsym(RTLD_DEFAULT, "__cxa_demangle");
	char *plain = NULL;
	int status = -1;

	snprintf(out, len, "%.*s", (int)strcspn(fn, "@"), fn);
	if (demangle && out[0] == '_' && out[1] == 'Z')
		plain = demangle(out, NULL, NULL, &status);
	if (plain && !status)
		snprintf(out, len, "%s", plain);
	free(plain);
}

void symbol_name(uintptr_t ip, char *buf, size_t len)
{
	struct lookup l = { .ip = ip - 1 };
	const struct module *m;
	const char *base, *fn;
	uintptr_t start = 0;

	dl_iterate_phdr(find_module, &l);
	m = l.found ? module_of(&l) : NULL;
	if (!m) {
		snprintf(buf, len, "0x%lx", (unsigned long)ip);
		return;
	}
	base = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	if (!strcmp(m->path, "/proc/self/exe"))
		base = program_invocation_short_name;
	fn = function_of(m, ip - m->bias - 1, &start);
	if (fn) {
		char name[256];

		tidy(fn, name, sizeof(name));
		snprintf(buf, len, "%s+0x%lx [%s]", name, (unsigned long)(ip - 1 - m->bias - start), base);
	} else
		snprintf(buf, len, "[%s+0x%lx]", base, (unsigned long)(ip - 1 - m->bias));
}
