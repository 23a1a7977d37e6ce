/*
 * cmd_demo.c - cfsbw demo: the three examples of seed 008 (1 CPU, 2 CPUs, 20 %
 * of a CPU, all with a 500 ms period) on real busy processes held by the
 * host driver, then the same in the simulator, in one table.
 *
 * The busy processes are cfsbw itself ("cfsbw demo --spin N SECONDS", not
 * documented), so the demo needs nothing but the command.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfsbw.h"
#include "cli/cli.h"
#include "common/helpers.h"
#include "cfsbw_host.h"
#include "cfsbw_sim.h"

#define DEMO_PERIOD_US INT64_C(500000)
#define DEMO_SECONDS 4

static const char demo_usage[] =
	"usage: cfsbw demo [--seconds N]\n"
	"\n"
	"The three examples of Linux's CFS bandwidth control documentation (seed\n"
	"008): a group limited to 1 CPU, to 2 CPUs (at most this machine's), and\n"
	"to 20 %% of one CPU, each with a 500 ms period.  Each runs for N seconds\n"
	"(default %d) on real busy processes held by cfsbw run's driver, then in\n"
	"the simulator, and one table compares what each achieved with what the\n"
	"quota promises.  Nothing is left running.\n";

struct demo_example {
	const char *name;
	double cpus; /* quota / period */
};

struct demo_row {
	const char *how, *name;
	int64_t quota_us;
	double expected, achieved;
	struct cfsbw_stats stats;
};

/* Busy processes for the demo: n - 1 children and this one, for s seconds. */
static int demo_spin(int n, double seconds)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double end = (double)t0.tv_sec + (double)t0.tv_nsec / 1e9 + seconds;
	for (int i = 1; i < n; i++)
		if (fork() == 0)
			break;
	for (;;) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)t.tv_sec + (double)t.tv_nsec / 1e9 >= end)
			break;
	}
	while (wait(NULL) > 0)
		;
	/* Traced processes: skip exit handlers (a sanitizer's leak check
	 * would try to ptrace this process and fail). */
	fflush(NULL);
	_exit(0);
}

/* --spin N SECONDS, checked: the demo's own busy processes. */
static int demo_spin_args(const char *n_text, const char *s_text)
{
	uint64_t n;
	char *end;
	errno = 0;
	double seconds = strtod(s_text, &end);
	if (parse_u64(n_text, &n) < 0 || n < 1 || n > 1024 || errno ||
	    end == s_text || *end || !(seconds >= 0 && seconds <= 3600)) {
		fprintf(stderr, "cfsbw demo: --spin %s %s: Invalid argument "
				"(1..1024 processes, 0..3600 seconds)\n",
			n_text, s_text);
		return 2;
	}
	return demo_spin((int)n, seconds);
}

static bool demo_machine_busy;

static void print_row(const struct demo_row *r)
{
	double err = 100.0 * (r->achieved - r->expected) / r->expected;
	/* Not held back by its quota: the machine gave it less (note *). */
	bool busy = r->stats.nr_throttled * 2 < r->stats.nr_periods &&
		    r->achieved < 0.98 * r->expected;
	printf("%-5s %-16s %8.0f ms %6.0f ms %8.2f %8.3f %+7.1f %%%s %10" PRIu64
	       " %12" PRIu64 " %12.3f s\n",
	       r->how, r->name, (double)r->quota_us / 1000.0,
	       (double)DEMO_PERIOD_US / 1000.0, r->expected, r->achieved, err,
	       busy ? "*" : " ", r->stats.nr_periods, r->stats.nr_throttled,
	       (double)r->stats.throttled_time / 1e9);
	if (busy)
		demo_machine_busy = true;
	fflush(stdout);
}

/* One example on real processes.  Returns 0, or 130 after SIGINT & co. */
static int demo_host(const struct demo_example *ex, int64_t quota_us,
		     unsigned busy, int seconds)
{
	struct cfsbw_host_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.policy = CFSBW_POLICY_V4;
	struct cfsbw_host *h;
	int err = cfsbw_host_create(&cfg, &h);
	if (err < 0) {
		fprintf(stderr, "cfsbw demo: %s\n", strerror(-err));
		return 1;
	}
	char quota[32], period[32], nbusy[16], secs[16];
	snprintf(quota, sizeof quota, "%" PRId64, quota_us);
	snprintf(period, sizeof period, "%" PRId64, DEMO_PERIOD_US);
	snprintf(nbusy, sizeof nbusy, "%u", busy);
	snprintf(secs, sizeof secs, "%d", seconds);
	struct cfsbw_group *g = cfsbw_host_group(h);
	int64_t now = cfsbw_host_now_ns();
	if (cfsbw_file_write(g, "cpu.cfs_period_us", period, now) < 0 ||
	    cfsbw_file_write(g, "cpu.cfs_quota_us", quota, now) < 0) {
		fprintf(stderr, "cfsbw demo: cannot set %s us / %s us\n", quota,
			period);
		cfsbw_host_destroy(h);
		return 1;
	}
	char *argv[] = {(char[]){"/proc/self/exe"}, (char[]){"demo"},
			(char[]){"--spin"}, nbusy, secs, NULL};
	int rc = 0;
	struct cfsbw_host_result res;
	err = cfsbw_host_spawn(h, argv);
	if (err == 0)
		err = cfsbw_host_run(h, &res);
	if (err < 0) {
		fprintf(stderr, "cfsbw demo: cannot run busy processes: %s\n",
			strerror(-err));
		rc = 1;
	} else if (res.signal_received) {
		rc = 128 + res.signal_received;
	} else {
		struct demo_row row = {
			"host", ex->name, quota_us, ex->cpus,
			res.wall_ns ? (double)res.usage_ns / (double)res.wall_ns
				    : 0.0,
			res.stats};
		print_row(&row);
	}
	cfsbw_host_destroy(h);
	return rc;
}

/* The same example in the simulator, on as many virtual CPUs. */
static int demo_sim(const struct demo_example *ex, int64_t quota_us,
		    unsigned busy, unsigned cpus, int seconds)
{
	char text[512];
	snprintf(text, sizeof text,
		 "cpus %u\nhz 250\nduration %ds\nseed 1\npolicy v4\n"
		 "group /g cpu.cfs_quota_us=%" PRId64
		 " cpu.cfs_period_us=%" PRId64 "\n"
		 "task /g busy count=%u\n",
		 cpus, seconds, quota_us, DEMO_PERIOD_US, busy);
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error serr;
	struct cfsbw_sim *s = NULL;
	int rc = 1;
	cfsbw_sim_scenario_init(&sc);
	if (cfsbw_sim_scenario_parse(&sc, text, &serr) < 0)
		goto out_scenario;
	if (cfsbw_sim_create(&sc, &s, &serr) < 0)
		goto out_scenario;
	if (cfsbw_sim_run(s) < 0)
		goto out_sim;
	struct cfsbw_sim_group_result gr;
	if (cfsbw_sim_group_result_by_path(s, "/g", &gr) < 0)
		goto out_sim;
	struct demo_row row = {
		"sim", ex->name, quota_us, ex->cpus,
		(double)gr.usage_ns / ((double)seconds * 1e9), gr.stats};
	print_row(&row);
	rc = 0;
out_sim:
	cfsbw_sim_free(s);
out_scenario:
	if (rc)
		fprintf(stderr, "cfsbw demo: simulator: %u: %s\n", serr.line,
			serr.msg);
	cfsbw_sim_scenario_free(&sc);
	return rc;
}

int cli_demo_main(int argc, char **argv)
{
	int seconds = DEMO_SECONDS;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--spin") && i + 2 < argc)
			return demo_spin_args(argv[i + 1], argv[i + 2]);
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf(demo_usage, DEMO_SECONDS);
			return 0;
		}
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > 600) {
				fprintf(stderr, "cfsbw demo: --seconds %s: "
						"Invalid argument (1..600)\n",
					argv[i]);
				return 2;
			}
			seconds = (int)v;
			continue;
		}
		fprintf(stderr, "cfsbw demo: unknown argument '%s'\n%s",
			argv[i], "usage: cfsbw demo [--seconds N]\n");
		return 2;
	}

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	/* Seed 008's second example needs two CPUs: clamp to the machine. */
	double two = ncpu < 2 ? (double)ncpu : 2.0;
	char two_name[32];
	snprintf(two_name, sizeof two_name, ncpu < 2 ? "2 CPUs (as %ld)" : "2 CPUs",
		 ncpu);
	const struct demo_example examples[] = {
		{"1 CPU", 1.0},
		{two_name, two},
		{"20 % of a CPU", 0.2},
	};
	/* More busy processes than CPUs: every group is saturated (SPEC 5). */
	unsigned busy = (unsigned)ncpu + 1;

	printf("cfsbw demo: seed 008's examples, period 500 ms, %u busy "
	       "processes each, on this %ld-CPU machine\n"
	       "(host: real processes held by `cfsbw run` for %d s; sim: the "
	       "simulator, same machine and load)\n\n",
	       busy, ncpu, seconds);
	printf("%-5s %-16s %11s %9s %8s %8s %10s %10s %12s %14s\n", "", "example",
	       "quota", "period", "expected", "achieved", "error",
	       "nr_periods", "nr_throttled", "throttled_time");
	fflush(stdout);
	size_t n = sizeof examples / sizeof examples[0];
	for (size_t i = 0; i < n; i++) {
		int64_t quota_us = (int64_t)(examples[i].cpus *
					     (double)DEMO_PERIOD_US + 0.5);
		int rc = demo_host(&examples[i], quota_us, busy, seconds);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t quota_us = (int64_t)(examples[i].cpus *
					     (double)DEMO_PERIOD_US + 0.5);
		if (demo_sim(&examples[i], quota_us, busy, (unsigned)ncpu,
			     seconds))
			return 1;
	}
	if (demo_machine_busy)
		printf("\n* the quota did not bind (few periods throttled): other "
		       "work on this machine\n  left the group less CPU than its "
		       "quota.");
	printf("\nhost rows start with the pool full (R4), so a saturated group "
	       "may get one quota more\nthan nr_periods quotas (R13): up to "
	       "+1/nr_periods over the target.");
	printf("\nachieved = CPU time used / wall time; throttled_time sums "
	       "the time each process\n(host) or CPU (sim) spent throttled, "
	       "so it can exceed the wall time (R12).\n");
	return 0;
}
