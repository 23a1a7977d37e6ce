/*
 * sim_load.h - what `cfsbw sim` and `cfsbw plan` share: a scenario (or a
 * trace to replay) read from files, the command line's overrides and group
 * settings applied, traces loaded, memory under a budget, and one run with
 * its answer (a struct cfsbw_sim_point).  Every error is printed here, naming
 * the file, line or flag; the functions return the exit status to use.
 */
#ifndef CFSBW_CLI_SIM_LOAD_H
#define CFSBW_CLI_SIM_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "cfsbw_sim.h"

#define CLI_MAX_SETS 16

/* One "[GROUP:]FILE=VALUE": a group file written after the scenario's. */
struct cli_set {
	char group[256]; /* "": the scenario's only group below the root */
	char file[64];
	char value[64];
};

struct cli_sim_opts {
	const char *cmd;     /* "sim" or "plan", for messages */
	const char *file;    /* the scenario, or the trace with replay */
	bool replay;         /* --replay TRACE: one group /app, until done */
	const char *wakeups; /* --wakeups progress|recorded, with --replay */
	const char *policy, *scheduler, *balance_load, *wake_scan, *seed,
		*duration, *cpus, *hz;
	const char *max_memory;
	struct cli_set sets[CLI_MAX_SETS];
	size_t nr_sets;
};

/* Parse "[GROUP:]FILE=VALUE" (durations with a unit become us for *_us
 * files); prints the error naming flag and returns 2, or 0. */
int cli_set_parse(const char *cmd, const char *flag, const char *arg,
		  struct cli_set *out);
/* A value for file: "10ms" into "10000" for *_us files, digits as they
 * are; false if neither. */
bool cli_set_value(const char *file, const char *text, char *out,
		   size_t size);

/*
 * Read, parse and prepare sc for a run: the opts' settings, then extra
 * (a sweep's value, a plan's candidate).  Returns 0, else the exit status
 * (2 bad input, 1 no memory) after printing why.
 */
int cli_sim_prepare(const struct cli_sim_opts *o, const struct cli_set *extra,
		    size_t nr_extra, struct cfsbw_sim_scenario *sc);
/* The group a set names: its own, or the only one below the root. */
const char *cli_set_group(const struct cli_set *s,
			  const struct cfsbw_sim_scenario *sc);
/* "no group below the root", or "3 groups: /a, /a/b, /c": for the
 * error that asks for one. */
void cli_groups_text(const struct cfsbw_sim_scenario *sc, char *buf,
		     size_t size);

/*
 * Build and run a prepared scenario, then measure group into *pt (group
 * NULL: skip).  report: print the text (or JSON) report to stdout;
 * timeline: rows to that callback.  Returns 0 or the exit status.
 */
struct cli_run {
	const char *group;
	int report;          /* 0 none, 1 text, 2 JSON */
	cfsbw_sim_timeline_fn *timeline;
	void *timeline_ctx;
};
int cli_sim_run(const struct cli_sim_opts *o, struct cfsbw_sim_scenario *sc,
		const struct cli_run *how, struct cfsbw_sim_point *pt);

#endif
