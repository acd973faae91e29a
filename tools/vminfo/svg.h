/*
 * svg.h - a picture of each region's address space: busy, thread-cached,
 * lazy, pooled and free ranges in distinct colours, with a legend and a scale,
 * and under vminfo --watch the chart of the reads so far.
 */
#ifndef VMINFO_SVG_H
#define VMINFO_SVG_H

#include "chart.h"
#include "snapshot.h"

/* The caller's name of an area's caller address (NULL: none to give). */
typedef const char *svg_caller_fn(const void *ctx, uint64_t caller);

/*
 * Write the picture to path, every range with a tooltip (its state, size,
 * address and, for a live area, its caller); above it, when history holds
 * two reads or more (vminfo --watch), the chart of them.  -1 with errno
 * set when the file cannot be written.
 */
int svg_write(const char *path, const struct target *t, const struct snapshot *s, const struct chart *history,
	      svg_caller_fn *caller, const void *ctx);

#endif
