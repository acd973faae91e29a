/*
 * units.h - sizes for a person, one convention for the tools' text: B, KiB,
 * MiB, GiB and TiB with three significant digits ("1.50 MiB", "64.0 GiB"),
 * or, with a tool's --bytes, the exact count ("1572864 B").  JSON always
 * carries exact bytes.
 */
#ifndef TOOLS_UNITS_H
#define TOOLS_UNITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIZE_TEXT 24

/* v into buf (SIZE_TEXT bytes) and buf back. */
static inline const char *size_text(char *buf, uint64_t v, bool exact)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	int u = 0;

	if (exact || v < 1024) {
		snprintf(buf, SIZE_TEXT, "%llu B", (unsigned long long)v);
		return buf;
	}
	while (x >= 1024 && u < 4)
		x /= 1024, u++;
	snprintf(buf, SIZE_TEXT, x < 10 ? "%.2f %s" : x < 100 ? "%.1f %s" : "%.0f %s", x, unit[u]);
	return buf;
}

#endif
