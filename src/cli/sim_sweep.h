/*
 * sim_sweep.h - `cfsbw sim --sweep` and what `cfsbw plan` shares with it:
 * runs spread over the machine's CPUs in worker processes, results in the
 * order of the values whatever order the workers finish in (sim_sweep.c);
 * and the pictures (sim_svg.c).
 */
#ifndef CFSBW_CLI_SIM_SWEEP_H
#define CFSBW_CLI_SIM_SWEEP_H

#include "cli/sim_load.h"

/* Run job(i) for i in [0, n) in worker processes (as many as CPUs), each
 * filling out[i]; on a terminal, "cfsbw LABEL: 3 of 21 done" on standard
 * error meanwhile (label NULL: never).  Returns 0, or the first failing
 * job's exit status. */
typedef int cli_job_fn(size_t i, void *ctx, struct cfsbw_sim_point *out);
/* The workers cli_parallel() runs n jobs in: the CPUs, at most n, at most
 * 64. */
size_t cli_parallel_workers(size_t n);
int cli_parallel(size_t n, cli_job_fn *job, void *ctx,
		 struct cfsbw_sim_point *out, const char *label);

int cli_sweep_main(const struct cli_sim_opts *o, const char *sweep,
		   const char *svg, bool json);

/* The task lines a sweep's table has columns for, and a plan prints: a
 * point holds up to CFSBW_SIM_POINT_MAX_LINES, which --json shows and a
 * plan checks, but a row of 64 lines' latencies is no table. */
#define CLI_TABLE_LINES 8u
/* The lines of p a table prints: the first CLI_TABLE_LINES. */
size_t cli_shown_lines(const struct cfsbw_sim_point *p);

/* One point as a JSON object on standard output: the group's figures,
 * then its lines with what the limit added against base (the unlimited
 * run); value: the swept file's value ("-1": unlimited). */
void cli_json_point(const char *value, const struct cfsbw_sim_point *p,
		    const struct cfsbw_sim_point *base);

/* Fixed-point text: ns as ms with 3 decimals, signed ("+172.000"). */
const char *cli_fmt_ms(char *buf, size_t size, int64_t ns, bool sign);

/* sim_svg.c: the sweep as curves (throttled % and added p99 against the
 * value), and one run's timeline per limited group.  Consecutive series
 * with the same axis share a panel, each its own colour, named in a
 * legend when there are several. */
struct cli_svg_series {
	const char *title;  /* "added p99 latency, line 16" */
	const char *axis;   /* its panel's, "added p99 latency" */
	const char *unit;   /* "ms" */
	const double *y;    /* [n]; NaN: no value */
};
/* Whether path can be written, asked before the runs that draw it, so
 * that a picture that cannot be saved does not cost them: 0, or prints
 * why not (naming --svg and path) and returns 2. */
int cli_svg_check(const char *path);
int cli_svg_sweep_write(const char *path, const char *title,
			const char *x_label, const double *x, size_t n,
			const struct cli_svg_series *series, size_t nr_series);

struct cli_svg_timeline;
struct cli_svg_timeline *cli_svg_timeline_new(void);
void cli_svg_timeline_add(struct cli_svg_timeline *t,
			  const struct cfsbw_sim_timeline_row *row);
int cli_svg_timeline_write(struct cli_svg_timeline *t,
			   const struct cfsbw_sim_scenario *sc,
			   const char *path);
void cli_svg_timeline_free(struct cli_svg_timeline *t);

#endif
