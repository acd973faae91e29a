/*
 * options.c - the table of UVM_* settings and their parsing.
 *
 * Values are numbers with an optional K/M/G/T suffix (powers of 1024).  A
 * value that does not parse keeps the default and says so on stderr.
 */
#define _GNU_SOURCE
#include "options.h"

#include "init.h"
#include "uvmalloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct uvm_option {
	const char *name;
	long long def;
	long long min, max;
	const char *desc;
};

static const struct uvm_option table[OPT__COUNT] = {
	[OPT_ARENA_SIZE] = { "UVM_ARENA_SIZE", 64LL << 30, 64LL << 20, 1LL << 46,
			     "address space reserved per region (another is reserved when one is full)" },
	[OPT_LAZY_MAX] = { "UVM_LAZY_MAX", 0, 0, 1LL << 40,
			   "lazily freed pages that trigger a purge; 0 = fls(CPUs) * 8192 as the kernel's lazy_max_pages()" },
	[OPT_GUARD] = { "UVM_GUARD", 0, 0, 1,
			"1 = install a real guard page after every area (MADV_GUARD_INSTALL, Linux 6.13+) so overflows fault" },
	[OPT_NODES] = { "UVM_NODES", 0, 0, 128, "number of vmap nodes (busy trees, lazy lists, pools); 0 = one per CPU, at most 128" },
};

static long long values[OPT__COUNT];

static int parse(const char *s, long long *out)
{
	char *end;
	long long v = strtoll(s, &end, 0);
	int shift = 0;

	switch (*end) {
	case 'T': case 't': shift += 10; /* fall through */
	case 'G': case 'g': shift += 10; /* fall through */
	case 'M': case 'm': shift += 10; /* fall through */
	case 'K': case 'k': shift += 10; end++; break;
	default: break;
	}
	if (end == s || *end || v < 0 || v > (1LL << 62) >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

static void say_ignored(const char *name, const char *val)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "uvmalloc: ignoring %s=%s (out of range or not a number)\n", name, val);

	if (n > 0 && write(2, msg, (size_t)n) < 0)
		return;
}

void options_init(void)
{
	for (int i = 0; i < OPT__COUNT; i++) {
		const char *s = secure_getenv(table[i].name);
		long long v;

		values[i] = table[i].def;
		if (!s)
			continue;
		if (parse(s, &v) || v < table[i].min || v > table[i].max)
			say_ignored(table[i].name, s);
		else
			values[i] = v;
	}
}

long long option(enum uvm_option_id id) { return values[id]; }

void uvm_settings(FILE *f)
{
	if (uvm_init())
		return;
	for (int i = 0; i < OPT__COUNT; i++)
		fprintf(f, "  %-15s = %-12lld (default %lld) %s\n", table[i].name, values[i], table[i].def, table[i].desc);
}
