/*
 * sites.c - call sites by name from a copy of a process's mappings (sites.h).
 * Each file's load base is the start of its mapping at file offset 0;
 * elfutils' libdwfl then reads the symbol table from the file itself.
 */
#include "sites.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 256

struct proc_maps {
	size_t n;
	struct {
		uint64_t base, end;
		char path[256];
	} file[MAX_FILES];
};

/* Widen the file's range, or add it when this is its offset-0 mapping. */
static void note_mapping(struct proc_maps *m, uint64_t lo, uint64_t hi, uint64_t off, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->file[i].path, path)) {
			if (hi > m->file[i].end)
				m->file[i].end = hi;
			return;
		}
	if (off || m->n == MAX_FILES)
		return;
	m->file[m->n].base = lo;
	m->file[m->n].end = hi;
	snprintf(m->file[m->n].path, sizeof(m->file[m->n].path), "%s", path);
	m->n++;
}

void maps_capture(struct proc_maps **m, pid_t pid)
{
	char name[64], line[512], path[256];
	struct proc_maps *fresh;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "r");
	if (!f)
		return;
	fresh = calloc(1, sizeof(*fresh));
	while (fresh && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi, off;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %255s", &lo, &hi, &off, path) == 4 &&
		    path[0] == '/')
			note_mapping(fresh, lo, hi, off, path);
	}
	fclose(f);
	if (fresh && fresh->n) {
		free(*m);
		*m = fresh;
	} else {
		free(fresh);
	}
}

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* addr named as a call site ("function+0x12 (file)") or, frame, as a stack's return address (target_frame's form). */
static void name_at(const struct proc_maps *m, uint64_t addr, bool frame, char *buf, size_t len)
{
	uint64_t at = frame ? addr - 1 : addr;

	snprintf(buf, len, "0x%" PRIx64, addr);
	for (size_t i = 0; m && i < m->n; i++) {
		Dwfl *dwfl;
		Dwfl_Module *mod;
		GElf_Off off;
		GElf_Sym sym;
		const char *fn, *file = strrchr(m->file[i].path, '/') + 1;

		if (at < m->file[i].base || at >= m->file[i].end)
			continue;
		dwfl = dwfl_begin(&offline);
		if (!dwfl)
			return;
		mod = dwfl_report_elf(dwfl, file, m->file[i].path, -1, m->file[i].base, false);
		dwfl_report_end(dwfl, NULL, NULL);
		fn = mod ? dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL) : NULL;
		if (fn && frame)
			snprintf(buf, len, "%s+0x%" PRIx64 " [%s]", fn, (uint64_t)off, file);
		else if (fn)
			snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", fn, (uint64_t)off, file);
		else if (frame)
			snprintf(buf, len, "[%s+0x%" PRIx64 "]", file, at - m->file[i].base);
		else
			snprintf(buf, len, "0x%" PRIx64 " (%s+0x%" PRIx64 ")", addr, file, addr - m->file[i].base);
		dwfl_end(dwfl);
		return;
	}
}

void maps_symbol(const struct proc_maps *m, uint64_t addr, char *buf, size_t len) { name_at(m, addr, false, buf, len); }
void maps_frame(const struct proc_maps *m, uint64_t ip, char *buf, size_t len) { name_at(m, ip, true, buf, len); }

void maps_free(struct proc_maps *m) { free(m); }
