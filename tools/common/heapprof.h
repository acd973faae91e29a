/*
 * heapprof.h - a heap profile as the tools show it: live sampled
 * allocations by stack (lib/heap/prof.h's stack table, read by vminfo from the
 * process, or vmtrace's outstanding blocks from the probes), printed as
 * text, JSON (schema uvmalloc.heap/1), collapsed stacks for flame-graph
 * tools, or drawn as a flame graph (flame.c), and compared with an earlier
 * JSON profile (--since).
 */
#ifndef TOOLS_HEAPPROF_H
#define TOOLS_HEAPPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HP_DEPTH 64

struct hp_stack {
	uint64_t hash;
	double bytes, count;  /* estimated live bytes and allocations */
	uint64_t samples;     /* sampled blocks behind the estimate */
	unsigned depth;
	uint64_t frames[HP_DEPTH]; /* return addresses, innermost first */
	const char **names;   /* hp_name's: each frame's full name */
};

struct hp_profile {
	struct hp_stack *st;
	size_t n;
	uint64_t rate;        /* the sampling rate, bytes */
	const char *since;    /* the earlier profile subtracted (hp_since), or NULL */
	char **names;         /* the distinct names, owned */
	size_t nnames;
};

/* "function+0xOFF [module]", "[module+0xOFF]" or "0xIP" for return address ip. */
typedef void (*hp_namer)(void *ctx, uint64_t ip, char *buf, size_t len);

/* Name every frame (each distinct address once) and sort the stacks by bytes, largest first.  0 or ENOMEM. */
int hp_name(struct hp_profile *p, hp_namer namer, void *ctx);
/* A frame's function alone (what flame graphs merge on): the name up to "+0x", or the whole bracketed form. */
void hp_short(const char *name, char *buf, size_t len);
/*
 * Subtract the profile in the JSON file path (an earlier --json of the same
 * process), stack by stack (by hash); keep what grew.  0, or -1 with why
 * in err.
 */
int hp_since(struct hp_profile *p, const char *path, char *err, size_t errlen);
void hp_text(FILE *f, const struct hp_profile *p, const char *what, int top);
void hp_json(FILE *f, const struct hp_profile *p, long pid, int top);
void hp_folded(FILE *f, const struct hp_profile *p);
/* The flame graph, root at the bottom, as an SVG file with a tooltip per frame (flame.c).  0 or an errno. */
int hp_flame(const char *path, const struct hp_profile *p, const char *title);
void hp_free(struct hp_profile *p);

#endif
