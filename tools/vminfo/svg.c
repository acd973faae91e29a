/*
 * svg.c - one horizontal bar per region, covering the region up to its
 * committed end (the part ever used; the rest is untouched reservation).
 * Pooled areas are in no tree and on no list a reader walks, so the bar is
 * painted pooled first and everything a reader does see is drawn over it:
 * free ranges, busy, thread-cached and lazy areas.  An area narrower than a
 * pixel still gets one, so nothing live is invisible.
 */
#include "svg.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#define WIDTH 1200.0
#define LEFT 40.0
#define BAR 36.0
#define ROW 90.0
#define TOP 70.0

static const struct {
	const char *name, *colour;
} kinds[] = {
	{ "busy", "#2f6fd6" }, { "thread-cached", "#23b39b" }, { "lazy (unpurged)", "#f08c1c" },
	{ "pooled", "#9b59b6" }, { "free", "#e4e4e4" },
};
enum { BUSY, CACHED, LAZY, POOLED, FREE };

struct bar {
	double y;
	uint64_t base, end;
};

/* One range, with a tooltip naming its state, size, place and caller (name may be NULL). */
static void rect(FILE *f, const struct bar *b, uint64_t start, uint64_t end, int kind, const char *name)
{
	double span = (double)(b->end - b->base), x, w;
	uint64_t size = end - start, at = start;

	if (end <= b->base || start >= b->end)
		return;
	if (start < b->base)
		start = b->base;
	if (end > b->end)
		end = b->end;
	x = LEFT + (double)(start - b->base) / span * WIDTH;
	w = (double)(end - start) / span * WIDTH;
	if (kind == POOLED) { /* the background: pools are on no list a reader walks */
		fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>pooled: what no "
			"busy, thread-cached, lazy or free range covers</title></rect>\n", x, b->y, w, BAR, kinds[kind].colour);
		return;
	}
	fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>%s %llu bytes at 0x%llx",
		x, b->y, w < 1 ? 1 : w, BAR, kinds[kind].colour, kinds[kind].name, (unsigned long long)size,
		(unsigned long long)at);
	if (end - start < size)
		fprintf(f, " (%llu of them below the committed top)", (unsigned long long)(end - start));
	if (name && *name) {
		fputs(", from ", f);
		svg_escape(f, name);
	}
	fputs("</title></rect>\n", f);
}

static void scale(FILE *f, const struct bar *b)
{
	for (int i = 0; i <= 4; i++) {
		double x = LEFT + WIDTH * i / 4;
		double mib = (double)(b->end - b->base) * i / 4 / (1 << 20);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x, b->y + BAR,
			x, b->y + BAR + 6);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%.1f MiB</text>\n", x,
			b->y + BAR + 18, mib);
	}
}

static void legend(FILE *f, double y)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		double x = LEFT + (double)i * 180;

		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#555\"/>\n", x, y,
			kinds[i].colour);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\">%s</text>\n", x + 20, y + 12, kinds[i].name);
	}
}

#define CHART 400.0

int svg_write(const char *path, const struct target *t, const struct snapshot *s, const struct chart *history,
	      svg_caller_fn *caller, const void *ctx)
{
	char tmp[4096];
	FILE *f;
	double top = history && history->n > 1 ? CHART : 0, height = top + TOP + ROW * (s->nregions ? s->nregions : 1) + 20;
	char title[96];

	/* Written aside and renamed over path: --watch rewrites it while someone may be looking at it. */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!(f = fopen(tmp, "w")))
		return -1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\">\n",
		WIDTH + 2 * LEFT, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	if (top) {
		snprintf(title, sizeof(title), "uvmalloc memory of process %d over %zu reads (vminfo --watch)", (int)t->pid,
			 history->n);
		chart_draw(f, history, LEFT + 30, 10, WIDTH - 60, CHART - 10, title);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"16\">uvmalloc address space of process %d</text>\n", LEFT,
		top + 22, (int)t->pid);
	legend(f, top + 34);
	for (unsigned r = 0; r < s->nregions; r++) {
		struct bar b = { top + TOP + ROW * r + 16, s->regions[r].base, s->regions[r].committed };

		if (b.end <= b.base)
			b.end = b.base + t->d.page_size;
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\">region %u, NUMA node %u: 0x%llx, %.1f MiB committed "
			"of %.1f MiB reserved</text>\n", LEFT, b.y - 5, r, s->regions[r].nid, (unsigned long long)b.base,
			(double)(s->regions[r].committed - b.base) / (1 << 20),
			(double)(s->regions[r].end - b.base) / (1 << 20));
		/* Pooled areas are on no list a reader walks: what is not drawn over is pooled (or a region's last page). */
		rect(f, &b, b.base, b.end, POOLED, NULL);
		for (size_t i = 0; i < s->nfree; i++)
			rect(f, &b, s->free[i].start, s->free[i].end, FREE, NULL);
		for (size_t i = 0; i < s->nbusy; i++)
			rect(f, &b, s->busy[i].start, s->busy[i].end, s->busy[i].live ? BUSY : CACHED,
			     s->busy[i].live && s->busy[i].caller ? caller(ctx, s->busy[i].caller) : NULL);
		for (size_t i = 0; i < s->nlazy; i++)
			rect(f, &b, s->lazy[i].start, s->lazy[i].end, LAZY, NULL);
		fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n", LEFT,
			b.y, WIDTH, BAR);
		scale(f, &b);
	}
	fprintf(f, "</svg>\n");
	if (fclose(f)) {
		unlink(tmp);
		return -1;
	}
	return rename(tmp, path);
}
