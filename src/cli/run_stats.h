/*
 * run_stats.h - cfsbw run's --stats report: opened before the command
 * starts, written once at the end, and a report that cannot be written is
 * a failure (issue 16).
 */
#ifndef CFSBW_CLI_RUN_STATS_H
#define CFSBW_CLI_RUN_STATS_H

#include <stdio.h>

#include "cfsbw_host.h"

/* The file, or stdout for "-"; NULL (and a message) if it cannot be made. */
FILE *cli_run_stats_open(const char *path);
/* No report after all (cfsbw could not run): close, and remove an empty
 * regular file. */
void cli_run_stats_discard(FILE *f, const char *path);
/* Write the report and close f; 0, or -1 with a message naming path, the
 * error and the command's status. */
int cli_run_stats_write(FILE *f, const char *path, struct cfsbw_host *h,
			const struct cfsbw_host_result *r);

/* --stat-interval's callback (cfsbw_host_config.on_stat); ctx: the run's
 * start, an int64_t of cfsbw_host_now_ns(). */
void cli_run_print_stat(void *ctx, struct cfsbw_host *h);

#endif
