/*
 * chart.h - one process's memory over time as an SVG line chart: bytes on
 * the left axis (resident, live, and what the overhead is held in), the
 * committed span's fragmentation on the right (0 to 1).  vmtrace draws it
 * from its intervals, vminfo --watch from its reads.
 */
#ifndef TOOLS_CHART_H
#define TOOLS_CHART_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum chart_series { CH_RSS, CH_LIVE, CH_CACHED, CH_LAZY, CH_POOLED, CH_SLAB_FREE, CH_META, CH_BYTES, CH_FRAG = CH_BYTES, CH_ALL };

struct chart_point {
	double t;          /* seconds */
	double v[CH_ALL];  /* bytes, then the fragmentation ratio; a value < 0 is not known and not drawn */
};

struct chart {
	struct chart_point *p;
	size_t n, cap;
};

/* Append a point; -1 when out of memory (the chart keeps what it had). */
int chart_add(struct chart *c, const struct chart_point *pt);
void chart_free(struct chart *c);
/* Draw c as a <g> at (x, y), width by height, titled title; its height is what it takes. */
void chart_draw(FILE *f, const struct chart *c, double x, double y, double width, double height, const char *title);
/* A whole SVG document of one chart; -1 with errno set when path cannot be written. */
int chart_write(const char *path, const struct chart *c, const char *title);
/* Write s into an SVG text or attribute, with & < > and " escaped. */
void svg_escape(FILE *f, const char *s);

#endif
