/*
 * flame.c - a heap profile as a flame graph (heapprof.h): one box per frame,
 * its width the live bytes of the stacks through it, the program's entry at
 * the bottom and the allocating function on top.  Boxes merge by function
 * name, as flame-graph tools do; each has a tooltip with its full frame
 * (function, offset and module) and its bytes.  Plain SVG, no script.
 */
#include "heapprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"

#define WIDTH 1200.0
#define MARGIN 10.0
#define ROW 17.0
#define TOP 44.0
#define CHAR_W 6.6 /* an 11px monospace character */

struct node {
	char name[256];        /* the function (hp_short) */
	const char *full;      /* a frame's full name, for the tooltip */
	double bytes;
	size_t child, next;    /* first child, next sibling: 0 = none (node 0 is the root) */
	unsigned level;
};

struct tree {
	struct node *n;
	size_t nr, cap;
	unsigned depth;
};

static size_t child_named(struct tree *t, size_t parent, const char *name, const char *full)
{
	size_t *link = &t->n[parent].child;

	for (; *link; link = &t->n[*link].next)
		if (!strcmp(t->n[*link].name, name))
			return *link;
	if (t->nr == t->cap) {
		struct node *more = realloc(t->n, (t->cap *= 2) * sizeof(*more));

		if (!more)
			return 0;
		t->n = more;
	}
	memset(&t->n[t->nr], 0, sizeof(t->n[0]));
	snprintf(t->n[t->nr].name, sizeof(t->n[0].name), "%s", name);
	t->n[t->nr].full = full;
	t->n[t->nr].level = t->n[parent].level + 1;
	if (t->n[t->nr].level > t->depth)
		t->depth = t->n[t->nr].level;
	*link = t->nr;
	return t->nr++;
}

static int build(struct tree *t, const struct hp_profile *p)
{
	t->cap = 256;
	t->nr = 1;
	t->n = calloc(t->cap, sizeof(*t->n));
	if (!t->n)
		return ENOMEM;
	snprintf(t->n[0].name, sizeof(t->n[0].name), "all");
	t->n[0].full = "all live sampled allocations";
	for (size_t i = 0; i < p->n; i++) {
		const struct hp_stack *s = &p->st[i];
		size_t at = 0;

		if (s->bytes < 0.5)
			continue;
		t->n[0].bytes += s->bytes;
		for (unsigned j = s->depth; j-- > 0;) {
			char fn[256];

			hp_short(s->names[j], fn, sizeof(fn));
			if (!(at = child_named(t, at, fn, s->names[j])))
				return ENOMEM;
			t->n[at].bytes += s->bytes;
		}
	}
	return 0;
}

/* A warm colour from the name, so a function keeps its colour across graphs. */
static void colour(const char *name, char *buf, size_t len)
{
	unsigned h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	snprintf(buf, len, "hsl(%u,%u%%,%u%%)", h % 55, 65 + (h >> 8) % 25, 55 + (h >> 16) % 12);
}

static void draw(FILE *f, const struct tree *t, size_t at, double x, double scale, double height)
{
	const struct node *n = &t->n[at];
	double w = n->bytes * scale, y = height - MARGIN - ROW * (n->level + 1);
	size_t fits = w > 8 ? (size_t)((w - 6) / CHAR_W) : 0;
	char fill[48];

	if (w < 0.3)
		return; /* too thin to see or point at */
	colour(n->name, fill, sizeof(fill));
	fprintf(f, "<g class=\"frame\"><title>");
	svg_escape(f, n->full);
	fprintf(f, " \xe2\x80\x94 %.0f bytes (%.2f %%)</title>\n", n->bytes, 100 * n->bytes / t->n[0].bytes);
	fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/>", x, y, w, ROW - 1,
		fill);
	if (fits >= 3) {
		char label[256];
		size_t len = strlen(n->name);

		snprintf(label, sizeof(label), "%.*s%s", (int)(len <= fits ? len : fits - 2), n->name, len <= fits ? "" : "..");
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + ROW - 5);
		svg_escape(f, label);
		fprintf(f, "</text>");
	}
	fprintf(f, "</g>\n");
	for (size_t c = n->child; c; c = t->n[c].next) {
		draw(f, t, c, x, scale, height);
		x += t->n[c].bytes * scale;
	}
}

int hp_flame(const char *path, const struct hp_profile *p, const char *title)
{
	struct tree t = { 0 };
	double height;
	FILE *f;
	int err = build(&t, p);

	if (err) {
		free(t.n);
		return err;
	}
	f = fopen(path, "w");
	if (!f) {
		free(t.n);
		return errno;
	}
	height = TOP + ROW * (t.depth + 1) + 2 * MARGIN;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
		   "<style>text { font: 11px monospace; fill: #000; pointer-events: none; } "
		   ".frame rect:hover { stroke: #000; stroke-width: 1; }</style>\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		   "<text x=\"%.0f\" y=\"20\" style=\"font: bold 15px sans-serif\">",
		WIDTH, height, WIDTH, height, MARGIN);
	svg_escape(f, title);
	fprintf(f, "</text>\n<text x=\"%.0f\" y=\"36\" style=\"font: 12px sans-serif; fill: #555\">"
		   "%.0f bytes live (estimated from samples); width = bytes; hover a box for its frame</text>\n",
		MARGIN, t.n[0].bytes);
	if (t.n[0].bytes > 0)
		draw(f, &t, 0, MARGIN, (WIDTH - 2 * MARGIN) / t.n[0].bytes, height);
	fprintf(f, "</svg>\n");
	free(t.n);
	return fclose(f) ? errno : 0;
}
