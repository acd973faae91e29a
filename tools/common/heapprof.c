/*
 * heapprof.c - printing and comparing heap profiles (heapprof.h).
 */
#include "heapprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int by_bytes(const void *a, const void *b)
{
	double x = ((const struct hp_stack *)a)->bytes, y = ((const struct hp_stack *)b)->bytes;

	return (x < y) - (x > y);
}

/* libstdc++'s demangler (the tools link it): C++ frames read as the program's source names them. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* name's function part demangled and without its symbol version ("@@GLIBC_2.34"), in place (len bytes of room). */
static void tidy(char *name, size_t len)
{
	size_t fn = name[0] == '[' ? 0 : strcspn(name, "+ ");
	char *rest = strdup(name + fn), *at, *plain;
	int status = -1;

	if (!rest || !fn)
		return free(rest);
	name[fn] = 0;
	if ((at = strchr(name, '@')))
		*at = 0;
	plain = name[0] == '_' && name[1] == 'Z' ? __cxa_demangle(name, NULL, NULL, &status) : NULL;
	if (plain && !status)
		snprintf(name, len, "%s%s", plain, rest);
	else
		snprintf(name + strlen(name), len - strlen(name), "%s", rest);
	free(plain);
	free(rest);
}

int hp_name(struct hp_profile *p, hp_namer namer, void *ctx)
{
	size_t total = 0, n = 0;
	uint64_t *addr;

	for (size_t i = 0; i < p->n; i++)
		total += p->st[i].depth;
	addr = malloc((total + 1) * sizeof(*addr));
	p->names = calloc(total + 1, sizeof(*p->names));
	if (!addr || !p->names) {
		free(addr);
		return ENOMEM;
	}
	for (size_t i = 0; i < p->n; i++)
		for (unsigned j = 0; j < p->st[i].depth; j++)
			addr[n++] = p->st[i].frames[j];
	qsort(addr, n, sizeof(*addr), by_u64);
	for (size_t i = 0; i < n; i++)
		if (!i || addr[i] != addr[i - 1]) {
			char buf[512];

			namer(ctx, addr[i], buf, sizeof(buf));
			tidy(buf, sizeof(buf));
			addr[p->nnames] = addr[i];
			if (!(p->names[p->nnames++] = strdup(buf)))
				return free(addr), ENOMEM;
		}
	for (size_t i = 0; i < p->n; i++) {
		struct hp_stack *s = &p->st[i];

		if (!(s->names = malloc((s->depth + 1) * sizeof(*s->names))))
			return free(addr), ENOMEM;
		for (unsigned j = 0; j < s->depth; j++) {
			const uint64_t *at = bsearch(&s->frames[j], addr, p->nnames, sizeof(*addr), by_u64);

			s->names[j] = p->names[at - addr];
		}
	}
	free(addr);
	qsort(p->st, p->n, sizeof(*p->st), by_bytes);
	return 0;
}

void hp_short(const char *name, char *buf, size_t len)
{
	const char *plus = strstr(name, "+0x");
	size_t n = name[0] != '[' && plus ? (size_t)(plus - name) : strlen(name);

	snprintf(buf, len, "%.*s", (int)n, name);
}

/* ----------------------------------------------------------- since */

/*
 * A small JSON reader, enough for an earlier --json however it was
 * reformatted (jq, an editor): strings, numbers, and values skipped whole.
 */
struct reader {
	const char *at;
};

static void blank(struct reader *r)
{
	while (*r->at == ' ' || *r->at == '\n' || *r->at == '\t' || *r->at == '\r')
		r->at++;
}

static bool take(struct reader *r, char c)
{
	blank(r);
	if (*r->at != c)
		return false;
	r->at++;
	return true;
}

/* A string into out (escapes kept as their second character: names and hex numbers have none). */
static bool string(struct reader *r, char *out, size_t len)
{
	size_t n = 0;

	if (!take(r, '"'))
		return false;
	for (; *r->at && *r->at != '"'; r->at++) {
		if (*r->at == '\\' && r->at[1])
			r->at++;
		if (n + 1 < len)
			out[n++] = *r->at;
	}
	out[n] = 0;
	return take(r, '"');
}

static bool number(struct reader *r, double *out)
{
	char *end;

	blank(r);
	*out = strtod(r->at, &end);
	if (end == r->at)
		return false;
	r->at = end;
	return true;
}

static bool value(struct reader *r)
{
	char sink[64];
	double d;

	blank(r);
	if (*r->at == '"')
		return string(r, sink, sizeof(sink));
	if (*r->at == '{' || *r->at == '[') {
		char close = *r->at == '{' ? '}' : ']';

		r->at++;
		if (take(r, close))
			return true;
		do {
			if (close == '}' && (!string(r, sink, sizeof(sink)) || !take(r, ':')))
				return false;
			if (!value(r))
				return false;
		} while (take(r, ','));
		return take(r, close);
	}
	for (const char *word = "true\0false\0null\0"; *word; word += strlen(word) + 1)
		if (!strncmp(r->at, word, strlen(word)))
			return r->at += strlen(word), true;
	return number(r, &d);
}

/* One object of "stacks": its hash, bytes and count subtracted from p's stack of that hash. */
static bool stack(struct reader *r, struct hp_profile *p)
{
	char key[32], hash[32] = "";
	double bytes = 0, count = 0;

	if (!take(r, '{'))
		return false;
	if (take(r, '}'))
		return true;
	do {
		bool ok;

		if (!string(r, key, sizeof(key)) || !take(r, ':'))
			return false;
		ok = !strcmp(key, "hash") ? string(r, hash, sizeof(hash)) : !strcmp(key, "bytes") ? number(r, &bytes)
			: !strcmp(key, "count") ? number(r, &count) : value(r);
		if (!ok)
			return false;
	} while (take(r, ','));
	for (size_t i = 0; hash[0] && i < p->n; i++)
		if (p->st[i].hash == strtoull(hash, NULL, 16)) {
			p->st[i].bytes -= bytes;
			p->st[i].count -= count;
		}
	return take(r, '}');
}

/* An earlier --json's stacks subtracted from p's: -1 unless it is a uvmalloc.heap/1 object. */
static int subtract(struct hp_profile *p, const char *text)
{
	struct reader r = { text };
	char key[32], schema[64] = "";

	if (!take(&r, '{'))
		return -1;
	do {
		if (!string(&r, key, sizeof(key)) || !take(&r, ':'))
			return -1;
		if (!strcmp(key, "schema")) {
			if (!string(&r, schema, sizeof(schema)) || strcmp(schema, "uvmalloc.heap/1"))
				return -1;
		} else if (!strcmp(key, "stacks")) {
			if (!take(&r, '['))
				return -1;
			if (!take(&r, ']')) {
				do
					if (!stack(&r, p))
						return -1;
				while (take(&r, ','));
				if (!take(&r, ']'))
					return -1;
			}
		} else if (!value(&r)) {
			return -1;
		}
	} while (take(&r, ','));
	return take(&r, '}') && schema[0] ? 0 : -1;
}

int hp_since(struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	size_t len = 0, kept = 0;
	char *text = NULL;
	int bad;

	if (!f || getdelim(&text, &len, 0, f) < 0) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
		if (f)
			fclose(f);
		free(text);
		return -1;
	}
	fclose(f);
	bad = subtract(p, text);
	free(text);
	if (bad) {
		snprintf(err, errlen, "%s is not a heap profile (vminfo --heap --json)", path);
		return -1;
	}
	for (size_t i = 0; i < p->n; i++)
		if (p->st[i].bytes >= 0.5)
			p->st[kept++] = p->st[i];
		else
			free(p->st[i].names);
	p->n = kept;
	p->since = path;
	qsort(p->st, p->n, sizeof(*p->st), by_bytes);
	return 0;
}

/* ---------------------------------------------------------- output */

static void totals(const struct hp_profile *p, double *bytes, double *count, uint64_t *samples)
{
	*bytes = *count = 0, *samples = 0;
	for (size_t i = 0; i < p->n; i++)
		*bytes += p->st[i].bytes, *count += p->st[i].count, *samples += p->st[i].samples;
}

static size_t shown(const struct hp_profile *p, int top) { return top > 0 && (size_t)top < p->n ? (size_t)top : p->n; }

void hp_text(FILE *f, const struct hp_profile *p, const char *what, int top)
{
	double bytes, count;
	uint64_t samples;
	char rate[64] = "";

	totals(p, &bytes, &count, &samples);
	if (p->rate)
		snprintf(rate, sizeof(rate), " (one per %" PRIu64 " bytes allocated)", p->rate);
	if (p->since)
		fprintf(f, "%s grown since %s: %.0f bytes in %.0f allocations from %zu stacks\n", what, p->since, bytes,
			count, p->n);
	else
		fprintf(f, "%s: %.0f bytes in %.0f allocations from %zu stacks, estimated from %" PRIu64 " samples%s\n", what,
			bytes, count, p->n, samples, rate);
	for (size_t i = 0; i < shown(p, top); i++) {
		const struct hp_stack *s = &p->st[i];

		fprintf(f, "\n#%zu: %.0f bytes in %.0f allocations (%" PRIu64 " samples, %.1f %%) from:\n", i + 1, s->bytes,
			s->count, s->samples, bytes > 0 ? 100 * s->bytes / bytes : 0);
		if (!s->depth)
			fprintf(f, "    (no stack: the profile's table was full, or no unwinder)\n");
		for (unsigned j = 0; j < s->depth; j++)
			fprintf(f, "    #%u %s\n", j, s->names[j]);
	}
	if (shown(p, top) < p->n)
		fprintf(f, "\n(%zu more stacks; --top N shows N)\n", p->n - shown(p, top));
}

void hp_json(FILE *f, const struct hp_profile *p, long pid, int top)
{
	double bytes, count;
	uint64_t samples;

	totals(p, &bytes, &count, &samples);
	fprintf(f, "{\"schema\":\"uvmalloc.heap/1\",\"pid\":%ld,\"rate\":%" PRIu64 ",\"since\":", pid, p->rate);
	if (p->since)
		json_string(f, p->since);
	else
		fputs("null", f);
	fprintf(f, ",\"bytes\":%.0f,\"count\":%.0f,\"samples\":%" PRIu64 ",\"stacks\":[", bytes, count, samples);
	for (size_t i = 0; i < shown(p, top); i++) {
		const struct hp_stack *s = &p->st[i];

		fprintf(f, "%s{\"hash\":\"0x%016" PRIx64 "\",\"bytes\":%.0f,\"count\":%.0f,\"samples\":%" PRIu64 ",\"frames\":[",
			i ? "," : "", s->hash, s->bytes, s->count, s->samples);
		for (unsigned j = 0; j < s->depth; j++) {
			fprintf(f, "%s{\"ip\":\"0x%" PRIx64 "\",\"name\":", j ? "," : "", s->frames[j]);
			json_string(f, s->names[j]);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

void hp_folded(FILE *f, const struct hp_profile *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct hp_stack *s = &p->st[i];

		if (s->bytes < 0.5)
			continue;
		/* Root first, frames joined by ';', then the weight: Brendan Gregg's collapsed format. */
		for (unsigned j = s->depth; j-- > 0;) {
			char fn[512];

			hp_short(s->names[j], fn, sizeof(fn));
			for (char *c = fn; *c; c++)
				if (*c == ';' || *c == ' ')
					*c = '_';
			fprintf(f, "%s%s", fn, j ? ";" : "");
		}
		fprintf(f, "%s %.0f\n", s->depth ? "" : "[no stack]", s->bytes);
	}
}

void hp_free(struct hp_profile *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->st[i].names);
	for (size_t i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->names);
	free(p->st);
	memset(p, 0, sizeof(*p));
}
