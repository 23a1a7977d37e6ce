/*
 * sim_svg.c - pictures of what the simulator found (`--svg FILE`):
 *
 *  - a sweep: one panel per series (throttled periods %, added p99 latency
 *    or time to finish) against the swept value, a polyline and its points;
 *  - a run: per group with a quota, a panel of CPU used per period (bars,
 *    in cores) against its quota (a line), periods in which the group
 *    throttled shaded.
 *
 * Plain SVG 1.1, no script, no external reference; every series is a <g>
 * whose id names it (tests and readers find them by id).  Text is escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/sim_sweep.h"
#include "common/helpers.h"

#define W 960
#define PANEL_H 260
#define LEFT 80
#define RIGHT 30
#define TOP 50
#define GAP 70
/* a timeline's least width per period, and its widest picture */
#define TL_BAR_PX 3.0
#define TL_MAX_W 6000

static void escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* A round step for about `ticks` ticks over [0, max]. */
static double nice_step(double max, double ticks)
{
	if (max <= 0)
		return 1;
	double raw = max / ticks, mag = pow(10, floor(log10(raw)));
	double r = raw / mag;
	return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

static void header(FILE *f, int width, int height, const char *title)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"24\" font-size=\"16\">",
		width, height, width, height, LEFT);
	escaped(f, title);
	fputs("</text>\n", f);
}

/* Axes of a panel at y0, width wide, with x in [x0, x1] and y in
 * [0, ymax]: a tick on x every 170 px or so, 5 on y. */
static void axes(FILE *f, int width, int y0, double x0, double x1,
		 double ymax, const char *xlabel, const char *ylabel)
{
	int pw = width - LEFT - RIGHT;
	fprintf(f, "<g class=\"axes\" stroke=\"#444\" fill=\"none\">"
		   "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></g>\n",
		LEFT, y0, pw, PANEL_H);
	double ys = nice_step(ymax, 5);
	for (double v = 0; v <= ymax + ys / 1000; v += ys) {
		double y = y0 + PANEL_H - v / ymax * PANEL_H;
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			   "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
			   "text-anchor=\"end\">%g</text>\n",
			LEFT, y, LEFT + pw, y, LEFT - 6, y + 4, v);
	}
	double span = x1 - x0 > 0 ? x1 - x0 : 1,
	       xs = nice_step(span, (double)pw / 170);
	for (double v = ceil(x0 / xs) * xs; v <= x1 + xs / 1000; v += xs) {
		double x = LEFT + (v - x0) / span * pw;
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g"
			   "</text>\n",
			x, y0 + PANEL_H + 16, v);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", LEFT + pw / 2,
		y0 + PANEL_H + 34);
	escaped(f, xlabel);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\">", LEFT, y0 - 8);
	escaped(f, ylabel);
	fputs("</text>\n", f);
}

int cli_svg_check(const char *path)
{
	/* an existing file opened for writing, not truncated: the runs may
	 * still fail and the old picture should then stay */
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (err == ENOENT) { /* a new file: its directory must take it */
		char dir[4096];
		const char *slash = strrchr(path, '/');
		size_t len = slash ? (size_t)(slash - path) : 0;
		if (len >= sizeof dir)
			len = sizeof dir - 1;
		memcpy(dir, path, len);
		dir[len] = '\0';
		const char *d = !slash ? "." : len ? dir : "/";
		err = access(d, W_OK | X_OK) ? errno : 0;
	}
	if (!err)
		return 0;
	fprintf(stderr, "cfsbw sim: --svg %s: cannot write: %s\n", path,
		strerror(err));
	return 2;
}

static FILE *open_svg(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "cfsbw sim: --svg %s: cannot write: %s\n", path,
			strerror(errno));
	return f;
}

static int close_svg(FILE *f, const char *path)
{
	fputs("</svg>\n", f);
	if (fclose(f)) {
		fprintf(stderr, "cfsbw sim: --svg %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	return 0;
}

/* Series colours, the first for the first panel's (throttled periods);
 * distinct for up to 8 lines after it, then round again. */
static const char *const palette[] = {"#2471a3", "#c0392b", "#27ae60",
				      "#8e44ad", "#d35400", "#16a085",
				      "#7f8c8d", "#b7950b", "#2c3e50"};
#define PALETTE_SIZE (sizeof palette / sizeof *palette)

/* Series [first, end) share first's axis: one panel. */
static size_t panel_end(const struct cli_svg_series *series, size_t first,
			size_t nr_series)
{
	size_t end = first + 1;
	while (end < nr_series && !strcmp(series[end].axis, series[first].axis))
		end++;
	return end;
}

/* One series in the panel at y0 scaled to ymax: a polyline and its
 * points, each point's value in its tooltip. */
static void curve(FILE *f, const struct cli_svg_series *se, size_t s,
		  int y0, double ymax, const double *x, size_t n)
{
	double x0 = n ? x[0] : 0, x1 = n ? x[n - 1] : 1;
	double span = x1 - x0 > 0 ? x1 - x0 : 1;
	int pw = W - LEFT - RIGHT;
	fprintf(f, "<g id=\"series-%zu\" class=\"series\" data-title=\"", s);
	escaped(f, se->title);
	fprintf(f, "\" stroke=\"%s\" fill=\"none\" stroke-width=\"2\">\n"
		   "<polyline points=\"",
		palette[s % PALETTE_SIZE]);
	for (size_t i = 0; i < n; i++)
		if (!isnan(se->y[i]))
			fprintf(f, "%.1f,%.1f ", LEFT + (x[i] - x0) / span * pw,
				y0 + PANEL_H - se->y[i] / ymax * PANEL_H);
	fputs("\"/>\n", f);
	for (size_t i = 0; i < n; i++)
		if (!isnan(se->y[i]))
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\">"
				   "<title>%g: %g</title></circle>\n",
				LEFT + (x[i] - x0) / span * pw,
				y0 + PANEL_H - se->y[i] / ymax * PANEL_H, x[i],
				se->y[i]);
	fputs("</g>\n", f);
}

/* The names of a panel's series, in their colours, at its top right, on
 * a white box that keeps the curves and grid lines under it from running
 * through the names (the box's width from the longest name, at about
 * 6.6 px a character of the 12 px sans-serif). */
static void legend(FILE *f, const struct cli_svg_series *series, size_t first,
		   size_t end, int y0)
{
	size_t longest = 0;
	for (size_t s = first; s < end; s++)
		if (strlen(series[s].title) > longest)
			longest = strlen(series[s].title);
	int pw = W - LEFT - RIGHT;
	int bw = (int)((double)longest * 6.6) + 56;
	if (bw > pw - 8)
		bw = pw - 8;
	fputs("<g class=\"legend\">\n", f);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		   "fill=\"white\" fill-opacity=\"0.9\" stroke=\"#ccc\"/>\n",
		W - RIGHT - 4 - bw, y0 + 2, bw, (int)(end - first) * 16 + 6);
	for (size_t s = first; s < end; s++) {
		int y = y0 + 14 + (int)(s - first) * 16;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			   "stroke=\"%s\" stroke-width=\"2\"/>"
			   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
			W - RIGHT - 36, y - 4, W - RIGHT - 12, y - 4,
			palette[s % PALETTE_SIZE], W - RIGHT - 42, y);
		escaped(f, series[s].title);
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
}

int cli_svg_sweep_write(const char *path, const char *title,
			const char *x_label, const double *x, size_t n,
			const struct cli_svg_series *series, size_t nr_series)
{
	size_t nr_panels = 0;
	for (size_t s = 0; s < nr_series; s = panel_end(series, s, nr_series))
		nr_panels++;
	FILE *f = open_svg(path);
	if (!f)
		return 1;
	int height = TOP + (int)nr_panels * (PANEL_H + GAP) + 10;
	header(f, W, height, title);
	double x0 = n ? x[0] : 0, x1 = n ? x[n - 1] : 1;
	int y0 = TOP;
	for (size_t first = 0, end; first < nr_series;
	     first = end, y0 += PANEL_H + GAP) {
		end = panel_end(series, first, nr_series);
		double ymax = 0;
		for (size_t s = first; s < end; s++)
			for (size_t i = 0; i < n; i++)
				if (!isnan(series[s].y[i]) && series[s].y[i] > ymax)
					ymax = series[s].y[i];
		ymax = ymax > 0 ? ymax * 1.1 : 1;
		/* one series: its own name on the axis; several: the
		 * axis's, and a legend */
		char yl[160];
		snprintf(yl, sizeof yl, "%s (%s)",
			 end - first == 1 ? series[first].title
					  : series[first].axis,
			 series[first].unit);
		axes(f, W, y0, x0, x1, ymax, x_label, yl);
		for (size_t s = first; s < end; s++)
			curve(f, &series[s], s, y0, ymax, x, n);
		if (end - first > 1)
			legend(f, series, first, end, y0);
	}
	return close_svg(f, path);
}

/* ---- a run's timeline -------------------------------------------------- */

struct tl_row {
	int64_t start_ns, period_ns, used_ns;
	unsigned throttled;
	int64_t quota_ns, quota_period_ns; /* quota -1: none */
};

struct tl_group {
	char *path;
	struct tl_row *rows;
	size_t n, cap;
};

struct cli_svg_timeline {
	struct tl_group *groups;
	size_t n, cap;
	bool oom;
};

struct cli_svg_timeline *cli_svg_timeline_new(void)
{
	return calloc(1, sizeof(struct cli_svg_timeline));
}

void cli_svg_timeline_add(struct cli_svg_timeline *t,
			  const struct cfsbw_sim_timeline_row *row)
{
	struct tl_group *g = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->groups[i].path, row->group))
			g = &t->groups[i];
	if (!g) {
		struct tl_group *ng =
			array_room(t->groups, t->n, &t->cap, sizeof(*ng), 8);
		if (!ng) {
			t->oom = true;
			return;
		}
		t->groups = ng;
		g = &t->groups[t->n];
		memset(g, 0, sizeof(*g));
		if (!(g->path = strdup(row->group))) {
			t->oom = true;
			return;
		}
		t->n++;
	}
	struct tl_row *nr = array_room(g->rows, g->n, &g->cap, sizeof(*nr), 64);
	if (!nr) {
		t->oom = true;
		return;
	}
	g->rows = nr;
	g->rows[g->n++] = (struct tl_row){row->start_ns, row->period_ns,
					  row->used_ns, row->throttled_accounts,
					  row->quota_ns, row->quota_period_ns};
}

void cli_svg_timeline_free(struct cli_svg_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->groups[i].path);
		free(t->groups[i].rows);
	}
	free(t->groups);
	free(t);
}

/* A period's quota in cores (-1: none): per the group's period, which
 * the run's last, shorter, row is not. */
static double quota_of(const struct tl_row *r)
{
	return r->quota_ns < 0 || r->quota_period_ns <= 0
		       ? -1
		       : (double)r->quota_ns / (double)r->quota_period_ns;
}

int cli_svg_timeline_write(struct cli_svg_timeline *t,
			   const struct cfsbw_sim_scenario *sc,
			   const char *path)
{
	if (t->oom) {
		fprintf(stderr,
			"cfsbw sim: --svg %s: out of memory for the picture\n",
			path);
		return 1;
	}
	size_t shown = 0, periods = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->groups[i].path, "/"))
			continue;
		shown++;
		if (t->groups[i].n > periods)
			periods = t->groups[i].n;
	}
	/* at least TL_BAR_PX per period, so that a long run's bars stay
	 * bars (600 periods of a minute in the usual 850 px were 1.4 px
	 * each): wider than a screen then, up to TL_MAX_W */
	double bars_px = (double)periods * TL_BAR_PX;
	if (bars_px > TL_MAX_W - LEFT - RIGHT)
		bars_px = TL_MAX_W - LEFT - RIGHT;
	int width = bars_px > W - LEFT - RIGHT ? LEFT + RIGHT + (int)bars_px
					       : W;
	FILE *f = open_svg(path);
	if (!f)
		return 1;
	int height = TOP + (int)(shown ? shown : 1) * (PANEL_H + GAP) + 10;
	/* hardlimits: the runtime is each CPU's (SPEC 6) */
	header(f, width, height,
	       sc->policy == CFSBW_POLICY_HARDLIMITS
		       ? "CPU used per period (bars), runtime of each CPU "
			 "(line), throttled periods (shaded)"
		       : "CPU used per period (bars), quota (line), "
			 "throttled periods (shaded)");
	int pw = width - LEFT - RIGHT, panel = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tl_group *g = &t->groups[i];
		if (!strcmp(g->path, "/") || !g->n)
			continue;
		int y0 = TOP + panel++ * (PANEL_H + GAP);
		double end = (double)(g->rows[g->n - 1].start_ns +
				      g->rows[g->n - 1].period_ns) / 1e9;
		double ymax = 0;
		bool limited = false;
		for (size_t k = 0; k < g->n; k++) {
			const struct tl_row *r = &g->rows[k];
			double c = r->period_ns ? (double)r->used_ns /
							  (double)r->period_ns
						: 0,
			       q = quota_of(r);
			if (c > ymax)
				ymax = c;
			if (q > ymax)
				ymax = q;
			limited |= q >= 0;
		}
		ymax = ymax > 0 ? ymax * 1.15 : 1;
		char yl[300];
		snprintf(yl, sizeof yl, "%s: cores used per period", g->path);
		axes(f, width, y0, 0, end, ymax, "time (s)", yl);
		fprintf(f, "<g id=\"throttled-");
		escaped(f, g->path);
		fputs("\" class=\"throttled\" fill=\"#f5b7b1\">\n", f);
		for (size_t k = 0; k < g->n; k++) {
			const struct tl_row *r = &g->rows[k];
			if (!r->throttled)
				continue;
			fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
				   "height=\"%d\"/>\n",
				LEFT + (double)r->start_ns / 1e9 / end * pw, y0,
				(double)r->period_ns / 1e9 / end * pw, PANEL_H);
		}
		fprintf(f, "</g>\n<g id=\"used-");
		escaped(f, g->path);
		fputs("\" class=\"used\" fill=\"#2471a3\">\n", f);
		for (size_t k = 0; k < g->n; k++) {
			const struct tl_row *r = &g->rows[k];
			double c = r->period_ns ? (double)r->used_ns /
							  (double)r->period_ns
						: 0;
			double h = c / ymax * PANEL_H;
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				   "height=\"%.2f\"/>\n",
				LEFT + (double)r->start_ns / 1e9 / end * pw,
				y0 + PANEL_H - h,
				(double)r->period_ns / 1e9 / end * pw * 0.85, h);
		}
		fputs("</g>\n", f);
		if (limited) {
			/* the quota in force in each period, as steps (the
			 * group's own, from the run: a default period or a
			 * --set is what the core had) */
			fprintf(f, "<g id=\"quota-");
			escaped(f, g->path);
			fprintf(f, "\" class=\"quota\" data-cores=\"%g\" "
				   "stroke=\"#c0392b\" stroke-width=\"2\" "
				   "stroke-dasharray=\"6 4\" fill=\"none\">"
				   "<polyline points=\"",
				quota_of(&g->rows[g->n - 1]));
			for (size_t k = 0; k < g->n; k++) {
				const struct tl_row *r = &g->rows[k];
				double q = quota_of(r);
				if (q < 0)
					continue;
				double y = y0 + PANEL_H - q / ymax * PANEL_H;
				fprintf(f, "%.2f,%.2f %.2f,%.2f ",
					LEFT + (double)r->start_ns / 1e9 / end *
						       pw,
					y,
					LEFT + (double)(r->start_ns +
							r->period_ns) /
						       1e9 / end * pw,
					y);
			}
			fputs("\"/></g>\n", f);
		}
	}
	return close_svg(f, path);
}
