/*
 * svg.h - a picture of each region's address space: busy, thread-cached,
 * lazy, pooled and free ranges in distinct colours, with a legend and a scale.
 */
#ifndef VMINFO_SVG_H
#define VMINFO_SVG_H

#include "snapshot.h"

/* Write the picture to path; -1 with errno set when the file cannot be written. */
int svg_write(const char *path, const struct target *t, const struct snapshot *s);

#endif
