/*
 * run_stats.c - cfsbw run's reports (run_stats.h): the --stats JSON object
 * with cpu.stat (R12), the usage and cfsbw's own cost, and the
 * --stat-interval lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfsbw.h"
#include "cli/run_stats.h"

/*
 * --stats FILE is opened before the command starts, so that a path that
 * cannot be written is a usage error (status 2) now, not a lost report
 * after an hour's run.
 */
FILE *cli_run_stats_open(const char *path)
{
	if (!strcmp(path, "-"))
		return stdout;
	FILE *f = fopen(path, "we"); /* 'e': the command must not inherit it */
	if (!f)
		fprintf(stderr,
			"cfsbw run: --stats %s: %s (a file to write the "
			"statistics to, or '-' for stdout)\n",
			path, strerror(errno));
	return f;
}

/*
 * cfsbw could not run the command at all (status 1 or 2): no report, and
 * no empty file where one is expected.  Only a regular file is removed: a
 * FIFO or /dev/stderr is not ours to unlink.
 */
void cli_run_stats_discard(FILE *f, const char *path)
{
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size == 0)
		unlink(path);
	fclose(f);
}

int cli_run_stats_write(FILE *f, const char *path, struct cfsbw_host *h,
			const struct cfsbw_host_result *r)
{
	struct cfsbw_group *g = cfsbw_host_group(h);
	int64_t quota = cfsbw_group_quota_ns(g);
	int n = fprintf(f,
		"{\"nr_periods\": %" PRIu64 ", \"nr_throttled\": %" PRIu64
		", \"throttled_time\": %" PRIu64 ", \"usage_ns\": %" PRIu64
		", \"wall_ns\": %" PRIu64 ", \"self_cpu_ns\": %" PRIu64
		", \"quota_us\": %" PRId64 ", \"period_us\": %" PRId64
		", \"policy\": \"%s\", \"nr_processes\": %" PRIu64
		", \"nr_thread_stops\": %" PRIu64 ", \"nr_ungoverned\": %u"
		", \"unpaid_ns\": %" PRIu64 ", \"exit_status\": %d}\n",
		r->stats.nr_periods, r->stats.nr_throttled,
		r->stats.throttled_time, r->usage_ns, r->wall_ns,
		r->self_cpu_ns,
		quota == CFSBW_RUNTIME_INF ? (int64_t)-1
					   : quota / CFSBW_NSEC_PER_USEC,
		cfsbw_group_period_ns(g) / CFSBW_NSEC_PER_USEC,
		cfsbw_policy_name(cfsbw_tree_policy(cfsbw_host_tree(h))),
		r->nr_processes, r->nr_thread_stops,
		cfsbw_host_nr_ungoverned(h), r->unpaid_ns, r->exit_status);
	/*
	 * A lost report is a failure (issue 16): a full disk, /dev/full, a
	 * closed or full standard output.  The error may come at the write,
	 * the flush or the close.
	 */
	int err = n < 0 ? errno : 0;
	if (fflush(f) != 0 && !err)
		err = errno;
	if (ferror(f) && !err)
		err = EIO;
	if (f != stdout && fclose(f) != 0 && !err)
		err = errno;
	if (!err)
		return 0;
	fprintf(stderr,
		"cfsbw run: --stats %s: %s: the report is lost (the command "
		"exited with status %d)\n",
		path, strerror(err), r->exit_status);
	return -1;
}

/* --stat-interval: cpu.stat and the usage so far, on stderr. */
void cli_run_print_stat(void *ctx, struct cfsbw_host *h)
{
	int64_t *start = ctx;
	char buf[512];
	int64_t wall = cfsbw_host_now_ns() - *start;
	uint64_t usage = cfsbw_host_usage_ns(h);
	if (cfsbw_file_read(cfsbw_host_group(h), "cpu.stat", buf, sizeof buf) < 0)
		buf[0] = '\0';
	for (char *c = buf; *c; c++)
		if (*c == '\n')
			*c = c[1] ? ' ' : '\0';
	unsigned live = cfsbw_host_nr_live(h);
	fprintf(stderr,
		"cfsbw: %.3f s: usage %.3f s (%.3f CPUs), %u process%s, %s\n",
		(double)wall / 1e9, (double)usage / 1e9,
		wall > 0 ? (double)usage / (double)wall : 0.0, live,
		live == 1 ? "" : "es", buf);
}
