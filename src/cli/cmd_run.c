/*
 * cmd_run.c - cfsbw run: hold a command (or running processes) and everything
 * it starts to a CPU quota per period, without root and without cgroups.
 *
 * Flags are translated into writes to the governed group's files (SPEC
 * section 2), so every value goes through the core's validation (R2): a
 * rejected value exits with status 2 and names the flag, the value and the
 * rule.  The driver itself is src/host/.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfsbw.h"
#include "cli/cli.h"
#include "cli/run_stats.h"
#include "cfsbw_host.h"

static const char run_usage[] =
	"usage: cfsbw run [OPTIONS] -- CMD [ARG...]\n"
	"       cfsbw run [OPTIONS] --pid PID[,PID...]\n"
	"       cfsbw run --group PATH [--socket PATH] -- CMD [ARG...]\n"
	"\n"
	"Hold CMD and every process it starts, at any depth, to QUOTA of CPU\n"
	"time per PERIOD (Linux's CFS bandwidth control, done by a tracer: no\n"
	"root, no cgroups).  Exits with CMD's status (128 + N if it died of\n"
	"signal N).\n"
	"\n"
	"Durations take a unit: ns, us, ms or s (\"50ms\", \"1.5s\"); a bare\n"
	"number is microseconds, as in the cgroup files.\n"
	"\n"
	"options:\n"
	"  --quota D         CPU time per period (cpu.cfs_quota_us); at least\n"
	"                    1ms; 'max' or a negative value: no limit\n"
	"                    (default: no limit)\n"
	"  --cpus X          quota = X * period (\"0.5\", \"1.5\"); 'max' or a\n"
	"                    negative number: no limit\n"
	"  --period D        the period (cpu.cfs_period_us), 1ms..1s\n"
	"                    (default: 500ms with v4, 100ms with upstream)\n"
	"  --burst D         unused quota carried over, at most the quota\n"
	"                    (cpu.cfs_burst_us; upstream policy only)\n"
	"  --slice D         runtime a process draws from the pool at a time\n"
	"                    (sched_cfs_bandwidth_slice_us; default: 10ms with\n"
	"                    v4, 5ms with upstream); under v4, keep it well\n"
	"                    under the quota when many processes are short-\n"
	"                    lived, or what they leave waits for the refill\n"
	"  --policy NAME     v4 (default: the seeds' CFS bandwidth control v4)\n"
	"                    or upstream (today's Linux: slack return, burst)\n"
	"  --pid PID[,PID...] take in running processes, their threads,\n"
	"                    their children and every process they start;\n"
	"                    the run ends when all of them have exited\n"
	"  --stats FILE      at exit, write a JSON object: nr_periods,\n"
	"                    nr_throttled, throttled_time (ns), usage_ns,\n"
	"                    wall_ns, self_cpu_ns, ...; '-' for stdout;\n"
	"                    created before CMD starts; if it cannot be\n"
	"                    written (disk full), cfsbw exits 1\n"
	"  --stat-interval D print cpu.stat and the usage to stderr every D\n"
	"  --group PATH      start CMD in group PATH of a running cfsbw daemon\n"
	"                    (no other option: the daemon holds the settings)\n"
	"  --socket PATH     the daemon's socket, with --group (default: as\n"
	"                    cfsbw daemon's)\n"
	"  --wait-all        when CMD exits, keep governing what it left\n"
	"  --strict          with --pid: a process below the given ones that\n"
	"                    cannot be governed is an error (exit 1), not a\n"
	"                    warning\n"
	"                    running, until the last of it exits (as a cgroup\n"
	"                    would); without it, those processes go free\n"
	"  -h, --help        this text\n"
	"\n"
	"examples:\n"
	"  cfsbw run --cpus 0.5 -- make -j8\n"
	"  cfsbw run --quota 100ms --period 500ms -- ./busy   # 20% of a CPU\n"
	"  cfsbw run --cpus 1.5 --policy upstream --stats s.json -- ./server\n"
	"  cfsbw run --cpus 0.2 --pid 1234\n"
	"\n"
	"On SIGINT, SIGTERM or SIGHUP, cfsbw resumes and releases every process,\n"
	"passes the signal to CMD and exits with CMD's status.  If cfsbw is\n"
	"killed, the kernel releases them: no process is ever left stopped.\n"
	"See cfsbw(1) and docs/host.md.\n";

struct run_opts {
	const char *quota, *cpus, *period, *burst, *slice, *policy;
	const char *stats_file, *stat_interval, *pid;
	const char *group, *socket; /* --group: a client of cfsbw daemon */
	bool wait_all;
	bool strict; /* --strict: an ungoverned descendant is an error */
	char **argv;
	int64_t stat_interval_ns;
};

/* Parse argv; returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, struct run_opts *o)
{
	static const struct {
		const char *name;
		size_t off;
	} flags[] = {
		{"--quota", offsetof(struct run_opts, quota)},
		{"--cpus", offsetof(struct run_opts, cpus)},
		{"--period", offsetof(struct run_opts, period)},
		{"--burst", offsetof(struct run_opts, burst)},
		{"--slice", offsetof(struct run_opts, slice)},
		{"--policy", offsetof(struct run_opts, policy)},
		{"--stats", offsetof(struct run_opts, stats_file)},
		{"--stat-interval", offsetof(struct run_opts, stat_interval)},
		{"--pid", offsetof(struct run_opts, pid)},
		{"--group", offsetof(struct run_opts, group)},
		{"--socket", offsetof(struct run_opts, socket)},
	};
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (cli_options_end(argv, &i))
			break;
		if (cli_is_help(a, run_usage))
			return 0;
		if (!strcmp(a, "--wait-all")) {
			o->wait_all = true;
			continue;
		}
		if (!strcmp(a, "--strict")) {
			o->strict = true;
			continue;
		}
		size_t k;
		for (k = 0; k < sizeof flags / sizeof flags[0]; k++) {
			size_t n = strlen(flags[k].name);
			if (strncmp(a, flags[k].name, n) != 0 ||
			    (a[n] != '\0' && a[n] != '='))
				continue;
			const char *val;
			if (a[n] == '=') {
				val = a + n + 1;
			} else if (i + 1 < argc && strcmp(argv[i + 1], "--") != 0) {
				/* "--" ends the options: "--cpus -- make" lost
				 * its value rather than meaning "--cpus --". */
				val = argv[++i];
			} else {
				return cli_bad_usage("run", "%s needs a value", flags[k].name);
			}
			*(const char **)(void *)((char *)o + flags[k].off) = val;
			break;
		}
		if (k == sizeof flags / sizeof flags[0])
			return cli_bad_usage("run", "unknown option '%s'", a);
	}
	o->argv = argv + i;
	if (o->strict && !o->pid)
		return cli_bad_usage("run", "--strict needs --pid: a command's children "
				 "are all traced from birth");
	if (o->group) {
		/* The group's settings are the daemon's (cfsbw ctl set). */
		if (o->quota || o->cpus || o->period || o->burst || o->slice ||
		    o->policy || o->stats_file || o->stat_interval || o->pid ||
		    o->wait_all)
			return cli_bad_usage("run", "--group takes no other option but "
					 "--socket: the group's settings are "
					 "the daemon's (cfsbw ctl set)");
		if (!o->argv[0])
			return cli_bad_usage("run", "no command given: cfsbw run --group "
					 "PATH -- CMD [ARG...]");
		return -1; /* cli_run_main runs it: parsing starts nothing */
	}
	if (o->socket)
		return cli_bad_usage("run", "--socket goes with --group");
	if (o->pid && o->argv[0])
		return cli_bad_usage("run", "--pid takes no command (got '%s')", o->argv[0]);
	if (!o->pid && !o->argv[0])
		return cli_bad_usage("run", "no command given: "
				     "cfsbw run [OPTIONS] -- CMD [ARG...]");
	if (o->quota && o->cpus)
		return cli_bad_usage("run", "--quota and --cpus both set the quota: give one");
	return -1;
}

static int bad_value(const char *flag, const char *value, const char *file,
		     int err, const char *why)
{
	fprintf(stderr, "cfsbw run: %s %s: %s%s%s (%s)\n", flag, value,
		file ? file : "", file ? ": " : "", strerror(-err),
		why ? why : cfsbw_file_rule(file));
	return 2;
}

/*
 * A flag's duration as the microsecond integer its file takes.  A bare
 * number is passed on as written, so that the file's own parser (R2:
 * trailing garbage, 64-bit overflow) judges it exactly as the kernel would.
 * TEXT is the part of VALUE to convert; messages name the whole VALUE.
 */
static int duration_text_of(const char *flag, const char *value,
			    const char *text, const char *file, char *out,
			    size_t size)
{
	bool digits_only = *text != '\0';
	for (const char *q = text; *q; q++)
		if (*q < '0' || *q > '9')
			digits_only = false;
	if (digits_only) {
		snprintf(out, size, "%s", text);
		return 0;
	}
	int64_t ns;
	int err = cfsbw_parse_duration(text, CFSBW_NSEC_PER_USEC, &ns);
	if (err < 0)
		return bad_value(flag, value, file, err,
				 "not a duration: a number with an optional "
				 "unit ns, us, ms or s; a bare number is "
				 "microseconds");
	if (ns % CFSBW_NSEC_PER_USEC)
		return bad_value(flag, value, file, -EINVAL,
				 "the cgroup files take whole microseconds");
	snprintf(out, size, "%" PRId64, ns / CFSBW_NSEC_PER_USEC);
	return 0;
}

static int duration_text(const char *flag, const char *value, const char *file,
			 char *out, size_t size)
{
	return duration_text_of(flag, value, value, file, out, size);
}

static int write_file(struct cfsbw_group *g, const char *flag,
		      const char *value, const char *file, const char *text)
{
	int err = cfsbw_file_write(g, file, text, cfsbw_host_now_ns());
	if (err == -ENOENT)
		return bad_value(flag, value, file, err,
				 "this file exists only in the upstream policy: "
				 "add --policy upstream");
	if (err < 0)
		return bad_value(flag, value, file, err, NULL);
	return 0;
}

/*
 * A number of CPUs as people write one: decimal, with an optional fraction
 * and exponent ("0.5", "2", "1e-1").  strtod alone would also take leading
 * spaces, hexadecimal, "inf" and "nan", which no one means here.
 */
static int parse_cpus(const char *v, double *cpus)
{
	if (!*v || strspn(v, "0123456789.eE+-") != strlen(v) ||
	    !(v[0] == '-' || v[0] == '.' || (v[0] >= '0' && v[0] <= '9')))
		return -EINVAL;
	char *end;
	errno = 0;
	*cpus = strtod(v, &end);
	if (end == v || *end || !isfinite(*cpus))
		return -EINVAL;
	return 0;
}

/* Apply the bandwidth flags as file writes; returns 0 or exit status 2. */
static int configure(struct cfsbw_host *h, const struct run_opts *o)
{
	struct cfsbw_group *g = cfsbw_host_group(h);
	char text[64];
	int rc;

	if (o->slice) {
		rc = duration_text("--slice", o->slice,
				   "sched_cfs_bandwidth_slice_us", text,
				   sizeof text);
		if (rc)
			return rc;
		int err = cfsbw_sysctl_write(cfsbw_host_tree(h),
					     "sched_cfs_bandwidth_slice_us", text);
		if (err < 0)
			return bad_value("--slice", o->slice,
					 "sched_cfs_bandwidth_slice_us", err, NULL);
	}
	if (o->period) {
		rc = duration_text("--period", o->period, "cpu.cfs_period_us",
				   text, sizeof text);
		if (rc || (rc = write_file(g, "--period", o->period,
					   "cpu.cfs_period_us", text)))
			return rc;
	}
	if (o->quota) {
		if (!strcmp(o->quota, "max")) {
			snprintf(text, sizeof text, "-1");
		} else if (o->quota[0] == '-') {
			/* Any negative value means no limit (R2), if it is one. */
			rc = duration_text_of("--quota", o->quota, o->quota + 1,
					      "cpu.cfs_quota_us", text + 1,
					      sizeof text - 1);
			if (rc)
				return rc;
			text[0] = '-';
		} else {
			rc = duration_text("--quota", o->quota, "cpu.cfs_quota_us",
					   text, sizeof text);
			if (rc)
				return rc;
		}
		rc = write_file(g, "--quota", o->quota, "cpu.cfs_quota_us", text);
		if (rc)
			return rc;
	}
	if (o->cpus) {
		double cpus = -1; /* 'max': as a negative number */
		if (strcmp(o->cpus, "max") != 0 && parse_cpus(o->cpus, &cpus) < 0)
			return bad_value("--cpus", o->cpus, NULL, -EINVAL,
					 "a number of CPUs such as 0.5 or 2; "
					 "'max' or a negative number: no limit");
		if (cpus < 0) {
			/* As a negative quota: no limit (R2).  "-0" is 0. */
			snprintf(text, sizeof text, "-1");
		} else {
			double period_us = (double)cfsbw_group_period_ns(g) /
					   (double)CFSBW_NSEC_PER_USEC;
			double quota_us = round(cpus * period_us);
			if (quota_us >= 9.2e18)
				return bad_value("--cpus", o->cpus,
						 "cpu.cfs_quota_us", -ERANGE,
						 "quota = CPUs x period does not "
						 "fit in 64 bits");
			snprintf(text, sizeof text, "%" PRId64, (int64_t)quota_us);
		}
		int err = cfsbw_file_write(g, "cpu.cfs_quota_us", text,
					   cfsbw_host_now_ns());
		if (err < 0) {
			char why[320];
			snprintf(why, sizeof why,
				 "quota = %s x period %" PRId64 " us = %s us; %s",
				 o->cpus,
				 cfsbw_group_period_ns(g) / CFSBW_NSEC_PER_USEC,
				 text, cfsbw_file_rule("cpu.cfs_quota_us"));
			return bad_value("--cpus", o->cpus, "cpu.cfs_quota_us",
					 err, why);
		}
	}
	if (o->burst) {
		rc = duration_text("--burst", o->burst, "cpu.cfs_burst_us", text,
				   sizeof text);
		if (rc || (rc = write_file(g, "--burst", o->burst,
					   "cpu.cfs_burst_us", text)))
			return rc;
	}
	return 0;
}

/*
 * `cfsbw run --pid $$` typed at a shell: the run lasts until the shell
 * exits, and the shell waits for cfsbw, so neither would end before a
 * Ctrl-C.  Say so at once.  Started in the background of a terminal (its
 * process group not the terminal's foreground one), cfsbw is not waited
 * for, and nothing is said; without a terminal it cannot tell, and warns.
 */
static void warn_if_waiting_for_us(pid_t pid)
{
	if (!cfsbw_host_is_ancestor(pid))
		return;
	pid_t fg = tcgetpgrp(STDIN_FILENO);
	if (fg > 0 && fg != getpgrp())
		return;
	fprintf(stderr,
		"cfsbw run: --pid %d is an ancestor of cfsbw (its shell?): "
		"the run lasts until it exits, so if it waits for cfsbw "
		"neither ends; stop the run with Ctrl-C, or start cfsbw in "
		"the background (&) to govern it\n",
		(int)pid);
}

/*
 * --pid PID[,PID...]: the processes a group starts with, as a cgroup's
 * cgroup.procs may hold several.  Each is a positive decimal integer.
 */
#define RUN_MAX_PIDS 256
#define RUN_MAX_PIDS_TEXT "256"

static int parse_pids(const char *text, pid_t *pids, unsigned *nr)
{
	const char *s = text;
	*nr = 0;
	for (;;) {
		if (*s < '0' || *s > '9' || *nr == RUN_MAX_PIDS)
			return -EINVAL;
		char *end;
		errno = 0;
		long pid = strtol(s, &end, 10);
		if (errno || pid <= 0 || pid > INT32_MAX)
			return -EINVAL;
		pids[(*nr)++] = (pid_t)pid;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
}

/*
 * --pid: says which processes below the given ones could not be taken in,
 * and why (issue 16); with --strict that is an error: returns true, and
 * the caller releases everything taken in so far.
 */
static bool report_ungoverned(struct cfsbw_host *h, bool strict)
{
	unsigned n = cfsbw_host_nr_ungoverned(h);
	for (unsigned i = 0; i < n; i++) {
		const char *why;
		pid_t pid = cfsbw_host_ungoverned(h, i, &why);
		if (!pid) {
			fprintf(stderr, "cfsbw run: --pid: %u more processes "
					"are not governed\n", n - i);
			break;
		}
		fprintf(stderr, "cfsbw run: --pid: process %d is not governed "
				"(its children are, where they can be): %s\n",
			(int)pid, why);
	}
	if (n && strict)
		fprintf(stderr, "cfsbw run: --strict: %u process%s cannot be "
				"governed, so none is\n", n, n > 1 ? "es" : "");
	return n && strict;
}

/*
 * The flags the host driver takes before it starts (--policy,
 * --stat-interval, --pid) into *cfg and pids; returns 0 or exit status 2.
 * A function of its own so that tests/fuzz/ can call it.
 */
static int parse_host_flags(const struct run_opts *o,
			    struct cfsbw_host_config *cfg, pid_t *pids,
			    unsigned *nr_pids)
{
	if (o->policy) {
		int err = cfsbw_policy_parse(o->policy, &cfg->policy);
		if (err < 0 || cfg->policy == CFSBW_POLICY_HARDLIMITS)
			return bad_value("--policy", o->policy, NULL, -EINVAL,
					 "the host driver knows v4 and upstream");
	}
	if (o->stat_interval) {
		int err = cfsbw_parse_duration(o->stat_interval,
					       CFSBW_NSEC_PER_USEC,
					       &cfg->stat_interval_ns);
		if (err < 0 || cfg->stat_interval_ns < CFSBW_NSEC_PER_MSEC)
			return bad_value("--stat-interval", o->stat_interval,
					 NULL, err < 0 ? err : -EINVAL,
					 "a duration of at least 1ms");
	}
	if (o->pid && parse_pids(o->pid, pids, nr_pids) < 0)
		return bad_value("--pid", o->pid, NULL, -EINVAL,
				 "process ids, positive integers, separated "
				 "by commas, at most " RUN_MAX_PIDS_TEXT);
	return 0;
}

int cli_run_main(int argc, char **argv)
{
	struct run_opts o;
	memset(&o, 0, sizeof o);
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.group)
		return cli_run_group(o.group, o.socket, o.argv);

	struct cfsbw_host_config cfg;
	memset(&cfg, 0, sizeof cfg);
	pid_t pids[RUN_MAX_PIDS];
	unsigned nr_pids = 0;
	rc = parse_host_flags(&o, &cfg, pids, &nr_pids);
	if (rc)
		return rc;

	int64_t start = cfsbw_host_now_ns();
	cfg.on_stat = cli_run_print_stat;
	cfg.ctx = &start;
	cfg.wait_all = o.wait_all;
	struct cfsbw_host *h;
	struct cfsbw_host_result res;
	FILE *stats = NULL;
	int err = cfsbw_host_create(&cfg, &h);
	if (err < 0) {
		fprintf(stderr, "cfsbw run: cannot start: %s\n", strerror(-err));
		return 1;
	}
	rc = configure(h, &o);
	if (rc)
		goto out;

	if (o.stats_file && !(stats = cli_run_stats_open(o.stats_file))) {
		rc = 2;
		goto out;
	}

	/* A stopped cfsbw must not hold its processes for long. */
	err = cli_watchdog_start();
	if (err < 0)
		fprintf(stderr, "cfsbw run: no watchdog: %s\n", strerror(-err));

	start = cfsbw_host_now_ns();
	if (o.pid) {
		for (unsigned i = 0; i < nr_pids; i++) {
			warn_if_waiting_for_us(pids[i]);
			err = cfsbw_host_attach(h, pids[i]);
			if (err >= 0)
				continue;
			fprintf(stderr,
				"cfsbw run: --pid %d: cannot trace it: %s\n",
				(int)pids[i],
				err == -ENOENT ? "No such process"
				: err == -EPERM ? cfsbw_host_place_reason(h)
						: strerror(-err));
			rc = 1;
			goto out;
		}
		if (report_ungoverned(h, o.strict)) {
			rc = 1;
			goto out;
		}
	} else {
		err = cfsbw_host_spawn(h, o.argv);
		if (err == -EPERM || err == -ENOMEM) {
			fprintf(stderr, "cfsbw run: cannot govern %s: %s%s\n",
				o.argv[0], strerror(-err),
				err == -EPERM ? " (ptrace is not allowed here, "
						"or cfsbw is itself traced)"
					      : "");
			rc = 1;
			goto out;
		}
		char why[512];
		if (err == -ENOENT && cli_exec_cause(o.argv[0], why, sizeof why))
			fprintf(stderr, "cfsbw run: %s\n", why);
		else if (err < 0)
			fprintf(stderr, "cfsbw run: %s: %s\n", o.argv[0],
				strerror(-err));
		if (err < 0) {
			/*
			 * The command's status, as a shell gives it: the
			 * report says so too, with nothing governed, rather
			 * than leaving an empty file for a script to parse.
			 */
			cfsbw_host_result_unstarted(err == -ENOENT ? 127 : 126,
						    &res);
			goto report;
		}
	}
	err = cfsbw_host_run(h, &res);
	if (err < 0) {
		fprintf(stderr, "cfsbw run: %s\n", strerror(-err));
		rc = 1;
		goto out;
	}
report:
	rc = res.exit_status;
	if (stats) {
		/* The report is lost: status 1, whatever the command's. */
		if (cli_run_stats_write(stats, o.stats_file, h, &res) < 0)
			rc = 1;
		stats = NULL;
	}
out:
	if (stats && stats != stdout)
		cli_run_stats_discard(stats, o.stats_file);
	cfsbw_host_destroy(h);
	return rc;
}
