/*
 * chart.c - the SVG line chart of chart.h.  Each series is one polyline
 * with a <title> (a browser's tooltip) naming it and its last and largest
 * values, and each point a small circle whose tooltip gives its time and
 * value, so a reader can point at any sample.
 */
#include "chart.h"

#include <stdlib.h>

static const struct {
	const char *name, *colour;
} series[CH_ALL] = {
	[CH_RSS] = { "resident", "#222222" },          [CH_LIVE] = { "live", "#2f6fd6" },
	[CH_CACHED] = { "thread caches", "#23b39b" },  [CH_LAZY] = { "lazy", "#f08c1c" },
	[CH_POOLED] = { "pools", "#9b59b6" },           [CH_SLAB_FREE] = { "free slab objects", "#c0392b" },
	[CH_META] = { "metadata", "#b7950b" },
	[CH_FRAG] = { "fragmentation (right axis)", "#7f8c8d" },
};

int chart_add(struct chart *c, const struct chart_point *pt)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct chart_point *p = realloc(c->p, cap * sizeof(*p));

		if (!p)
			return -1;
		c->p = p;
		c->cap = cap;
	}
	c->p[c->n++] = *pt;
	return 0;
}

void chart_free(struct chart *c)
{
	free(c->p);
	c->p = NULL;
	c->n = c->cap = 0;
}

void svg_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static double mib(double bytes) { return bytes / (1 << 20); }

/* The axis' top: the largest byte value in MiB, rounded up to 1, 2, 4 or 8 times a power of ten, or the next power. */
static double top_of(const struct chart *c)
{
	double most = 0, step = 1;

	for (size_t i = 0; i < c->n; i++)
		for (int s = 0; s < CH_BYTES; s++)
			if (c->p[i].v[s] > most)
				most = c->p[i].v[s];
	most = mib(most);
	while (step * 10 < most)
		step *= 10;
	for (int k = 1; k <= 10; k *= 2) /* 1, 2, 4, 8: then 10 */
		if (step * k >= most)
			return step * k;
	return step * 10;
}

void chart_draw(FILE *f, const struct chart *c, double x, double y, double width, double height, const char *title)
{
	double t0 = c->n ? c->p[0].t : 0, t1 = c->n ? c->p[c->n - 1].t : 1, top = top_of(c);
	double plot_y = y + 30, plot_h = height - 90;

	if (t1 <= t0)
		t1 = t0 + 1;
	fprintf(f, "<g>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"15\">", x, y + 16);
	svg_escape(f, title);
	fprintf(f, "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n", x,
		plot_y, width, plot_h);
	for (int i = 0; i <= 4; i++) {
		double gy = plot_y + plot_h - plot_h * i / 4;

		fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, gy, x + width, gy);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g MiB</text>\n", x - 4, gy + 4,
			top * i / 4);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\">%.2f</text>\n", x + width + 4, gy + 4, i / 4.0);
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%.1f s</text>\n",
			x + width * i / 4, plot_y + plot_h + 14, (t1 - t0) * i / 4);
	}
	for (int s = 0, shown = 0; s < CH_ALL; s++) {
		double scale = s == CH_FRAG ? 1 : top * (1 << 20), last = -1, most = -1;
		size_t known = 0;

		for (size_t i = 0; i < c->n; i++)
			known += c->p[i].v[s] >= 0;
		if (!known) /* a figure this tool does not have */
			continue;
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"", series[s].colour,
			s == CH_RSS ? "2.5" : "1.5");
		for (size_t i = 0; i < c->n; i++)
			if (c->p[i].v[s] >= 0) {
				fprintf(f, "%.1f,%.1f ", x + width * (c->p[i].t - t0) / (t1 - t0),
					plot_y + plot_h - plot_h * c->p[i].v[s] / scale);
				last = c->p[i].v[s];
				most = last > most ? last : most;
			}
		if (s == CH_FRAG)
			fprintf(f, "\"><title>%s: last %.4f, highest %.4f</title></polyline>\n", series[s].name, last, most);
		else
			fprintf(f, "\"><title>%s: last %.2f MiB, highest %.2f MiB</title></polyline>\n", series[s].name, mib(last),
				mib(most));
		for (size_t i = 0; i < c->n; i++)
			if (c->p[i].v[s] >= 0)
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"><title>%.2f s: %s %.*f%s</title></circle>\n",
					x + width * (c->p[i].t - t0) / (t1 - t0), plot_y + plot_h - plot_h * c->p[i].v[s] / scale,
					series[s].colour, c->p[i].t - t0, series[s].name, s == CH_FRAG ? 4 : 2,
					s == CH_FRAG ? c->p[i].v[s] : mib(c->p[i].v[s]), s == CH_FRAG ? "" : " MiB");
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x + (double)(shown % 4) * 190,
			plot_y + plot_h + 24 + (double)(shown / 4) * 18, series[s].colour);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">%s</text>\n", x + (double)(shown % 4) * 190 + 16,
			plot_y + plot_h + 34 + (double)(shown / 4) * 18, series[s].name);
		shown++;
	}
	fprintf(f, "</g>\n");
}

int chart_write(const char *path, const struct chart *c, const char *title)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1280\" height=\"400\" font-family=\"sans-serif\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	chart_draw(f, c, 70, 10, 1140, 390, title);
	fprintf(f, "</svg>\n");
	return fclose(f) ? -1 : 0;
}
