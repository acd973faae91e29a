/*
 * args.h - strict parsing of the tools' numeric arguments: a whole number, a
 * number of bytes or a finite number of seconds inside a range, nothing else (no sign where
 * none belongs, no trailing junk, no overflow, no NaN or infinity).
 */
#ifndef TOOLS_ARGS_H
#define TOOLS_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* A whole decimal number in [min, max]. */
static inline bool parse_count(const char *v, unsigned long long min, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	return *v >= '0' && *v <= '9' && !*end && !errno && *out >= min && *out <= max;
}

/* A number of bytes in [min, max]: a whole number with an optional K, M, G or T (powers of 1024, as UVM_* settings). */
static inline bool parse_bytes(const char *v, unsigned long long min, unsigned long long max, unsigned long long *out)
{
	static const char units[] = "KMGT";
	unsigned long long n;
	char *end;
	int shift = 0;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end) {
		for (int i = 0; units[i]; i++)
			if (*end == units[i] || *end == units[i] + 32)
				shift = 10 * (i + 1);
		if (!shift || end[1])
			return false;
	}
	if (*v < '0' || *v > '9' || errno || n > (~0ull >> shift))
		return false;
	*out = n << shift;
	return *out >= min && *out <= max;
}

/* A finite number of seconds in [min, max]. */
static inline bool parse_seconds(const char *v, double min, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return end != v && !*end && !errno && *out >= min && *out <= max; /* NaN fails every comparison */
}

#endif
