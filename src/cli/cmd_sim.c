/*
 * cmd_sim.c - `cfsbw sim`: run a scenario (or replay a trace) in the
 * simulator and report; with --sweep, one run per value of a group's file
 * (sim_sweep.c); with --svg, a picture of it (sim_svg.c).
 *
 * Reading and preparing the scenario is sim_load.c's, shared with `cfsbw
 * plan`.  Every error names the file, the line or the flag and the
 * offending text, and exits with status 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sim_load.h"
#include "cli/sim_sweep.h"

static const char usage[] =
	"usage: cfsbw sim FILE | --replay TRACE [--json] [--timeline FILE.csv]\n"
	"                 [--policy P] [--scheduler S] [--balance-load L]\n"
	"                 [--wake-scan W] [--seed N] [--duration D]\n"
	"                 [--cpus N] [--hz N]\n"
	"                 [--set [GROUP:]FILE=VALUE]...\n"
	"                 [--sweep [GROUP:]FILE=FROM:TO:STEP|V1,V2,...]\n"
	"                 [--svg FILE.svg]\n"
	"\n"
	"Simulate a scenario of groups and tasks on 1..4096 virtual CPUs under a\n"
	"model of Linux's completely fair scheduler, with CFS bandwidth control\n"
	"(quota per period) enforced by the cfsbw core, on a virtual clock.  The\n"
	"same scenario and seed give the same output, byte for byte, everywhere.\n"
	"\n"
	"  FILE               the scenario ('-': standard input)\n"
	"  --replay TRACE     replay a trace (cfsbw record, perf sched timehist,\n"
	"                     rt-app JSON) in one group, /app, until it ends\n"
	"  --wakeups W        with --replay of a recorded trace: progress (each\n"
	"                     wake-up waits for the work done before it, as a\n"
	"                     build's; default) or recorded (at the recorded\n"
	"                     times, as a service's requests: latencies from\n"
	"                     each wake-up to the end of its run)\n"
	"  --set G:FILE=V     write a group's file after the scenario's settings\n"
	"                     (G may be left out when there is one group; *_us\n"
	"                     files take durations: cpu.cfs_quota_us=50ms)\n"
	"  --sweep G:FILE=R   one run per value of R (FROM:TO:STEP or a list),\n"
	"                     on all CPUs; per value: use, throttled periods,\n"
	"                     throttled time, latency added against no limit\n"
	"  --svg F.svg        draw the sweep's curves, or the run's timeline\n"
	"  --json             print one JSON object instead of the text report\n"
	"                     (or the sweep's table)\n"
	"  --timeline F.csv   write one row per group per period: start, CPU\n"
	"                     used, accounts throttled, throttled time\n"
	"  --policy P         v4 | upstream | hardlimits (overrides the file)\n"
	"  --scheduler S      cfs (Linux before 6.6, default) | eevdf (6.6\n"
	"                     and later; overrides the file)\n"
	"  --balance-load L   instant (the weight queued at each balancing\n"
	"                     pass, default) | pelt (Linux's decayed average)\n"
	"  --wake-scan W      all (a woken task takes any idle CPU, the\n"
	"                     default) | util (Linux 6.0 on: the busier the\n"
	"                     CPUs, the less it looks)\n"
	"  --seed N           the random seed (overrides the file)\n"
	"  --duration D       simulated time, e.g. 10s, 500ms (overrides the file)\n"
	"  --cpus N, --hz N   the machine (override the file; --replay: this\n"
	"                     machine's CPUs unless given)\n"
	"  --max-memory SIZE  memory the simulation may use (default 2G; K, M,\n"
	"                     G): beyond it, latencies are counted, not kept\n"
	"\n"
	"Scenario files, one directive per line, '#' starts a comment:\n"
	"  cpus 4                  # 1..4096, default 1\n"
	"  hz 250                  # 100..10000, default 250\n"
	"  duration 10s            # ns, us, ms or s; default 10s\n"
	"  seed 42                 # default 1\n"
	"  policy v4               # v4 | upstream | hardlimits\n"
	"  scheduler eevdf         # cfs (default) | eevdf: Linux 6.6 on\n"
	"  balance_load pelt       # instant (default) | pelt: averaged\n"
	"  wake_scan util          # all (default) | util: Linux 6.0 on\n"
	"  first_period random     # whole (default) | random: 6.4 on | N%\n"
	"  sysctl sched_cfs_bandwidth_slice_us 10000\n"
	"  group /web cpu.cfs_quota_us=100000 cpu.cfs_period_us=500000\n"
	"  task /web busy count=4\n"
	"  task /web duty run=30ms sleep=70ms count=2 # phase=random: out of step\n"
	"  task /db requests rate=200/s service=2ms   # or service=exp:2ms\n"
	"  task /db trace file=steps.csv loop=yes     # run_us,sleep_us lines\n"
	"  task /db trace file=db.trace wakeups=recorded # cfsbw record's\n"
	"\n"
	"The reference is docs/sim.md; examples are in scenarios/.\n"
	"Exit status: 0 done, 2 bad usage or a bad scenario, 1 out of memory.\n";

struct timeline_out {
	FILE *f;
	struct cli_svg_timeline *svg;
};

static void timeline_row(void *ctx, const struct cfsbw_sim_timeline_row *row)
{
	struct timeline_out *t = ctx;
	if (t->svg)
		cli_svg_timeline_add(t->svg, row);
	if (!t->f)
		return;
	int64_t micro = cfsbw_sim_cores_micro(row->used_ns, row->period_ns);
	fprintf(t->f,
		"%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ".%06" PRId64
		",%u,%" PRId64 "\n",
		row->group, row->start_ns, row->period_ns, row->used_ns,
		micro / 1000000, micro % 1000000, row->throttled_accounts,
		row->throttled_time_ns);
}

/* One run: the report, and the timeline as CSV and/or a picture. */
static int single_run(const struct cli_sim_opts *o, bool json,
		      const char *timeline, const char *svg)
{
	struct cfsbw_sim_scenario sc;
	struct timeline_out tl = {0};
	int status = cli_sim_prepare(o, NULL, 0, &sc);
	if (status)
		goto out;
	if (timeline) {
		tl.f = fopen(timeline, "w");
		if (!tl.f) {
			fprintf(stderr, "cfsbw sim: %s: %s\n", timeline,
				strerror(errno));
			status = 2;
			goto out;
		}
		fputs("group,start_ns,period_ns,used_ns,cores,"
		      "throttled_accounts,throttled_time_ns\n",
		      tl.f);
	}
	if (svg && !(tl.svg = cli_svg_timeline_new())) {
		status = 1;
		goto out;
	}
	struct cli_run how = {.report = json ? 2 : 1};
	if (tl.f || tl.svg) {
		how.timeline = timeline_row;
		how.timeline_ctx = &tl;
	}
	if ((status = cli_sim_run(o, &sc, &how, NULL)))
		goto out;
	if (tl.svg && cli_svg_timeline_write(tl.svg, &sc, svg))
		status = 1;
	if (tl.f && fclose(tl.f)) {
		fprintf(stderr, "cfsbw sim: %s: %s\n", timeline, strerror(errno));
		status = 1;
	}
	tl.f = NULL;
	if (fflush(stdout)) {
		fprintf(stderr, "cfsbw sim: standard output: %s\n",
			strerror(errno));
		status = 1;
	}
out:
	if (tl.f)
		fclose(tl.f);
	cli_svg_timeline_free(tl.svg);
	cfsbw_sim_scenario_free(&sc);
	return status;
}

/* --replay without --cpus: this machine's CPUs, as the trace saw them. */
static const char *machine_cpus(char *buf, size_t size)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(buf, size, "%ld", n < 1 ? 1L : n > 4096 ? 4096L : n);
	return buf;
}

struct sim_cmdline {
	const char *timeline, *sweep, *svg;
	struct cli_sim_opts o;
	bool json;
};

/*
 * The command line into *c; returns -1 to go on, or an exit status.  A
 * function of its own so that tests/fuzz/ can call it.
 */
static int parse_args(int argc, char **argv, struct sim_cmdline *c)
{
	const char *timeline = NULL, *sweep = NULL, *svg = NULL;
	struct cli_sim_opts o = {.cmd = "sim"};
	bool json = false;

	const struct cli_opt opts[] = {
		{"--timeline", &timeline}, {"--sweep", &sweep},
		{"--svg", &svg},	   {"--policy", &o.policy},
		{"--scheduler", &o.scheduler},
		{"--balance-load", &o.balance_load},
		{"--wake-scan", &o.wake_scan},
		{"--seed", &o.seed},	   {"--duration", &o.duration},
		{"--cpus", &o.cpus},	   {"--hz", &o.hz},
		{"--max-memory", &o.max_memory}, {"--wakeups", &o.wakeups},
		{NULL, NULL},
	};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = cli_opt_value(opts, a);
		if (cli_is_help(a, usage)) {
			return 0;
		} else if (!strcmp(a, "--json")) {
			json = true;
			continue;
		} else if (slot) {
			/* the value follows */
		} else if (!strcmp(a, "--replay") || !strcmp(a, "--set")) {
			if (i + 1 >= argc)
				break;
			if (a[2] == 'r') {
				if (o.file) {
					fprintf(stderr, "cfsbw sim: one scenario or "
							"trace at a time ('%s')\n",
						argv[i + 1]);
					return 2;
				}
				o.file = argv[++i];
				o.replay = true;
				continue;
			}
			if (o.nr_sets == CLI_MAX_SETS) {
				fprintf(stderr, "cfsbw sim: at most %d --set\n",
					CLI_MAX_SETS);
				return 2;
			}
			if (cli_set_parse("sim", "--set", argv[++i],
					  &o.sets[o.nr_sets++]))
				return 2;
			continue;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "cfsbw sim: unknown option '%s'\n\n%s", a,
				usage);
			return 2;
		} else if (!o.file) {
			o.file = a;
			continue;
		} else {
			fprintf(stderr, "cfsbw sim: one scenario at a time ('%s')\n",
				a);
			return 2;
		}
		if (i + 1 >= argc)
			break;
		*slot = argv[++i];
	}
	if (argc > 1 && !strncmp(argv[argc - 1], "--", 2) &&
	    strcmp(argv[argc - 1], "--json")) {
		fprintf(stderr, "cfsbw sim: %s needs a value\n", argv[argc - 1]);
		return 2;
	}
	if (!o.file) {
		fputs(usage, stderr);
		return 2;
	}
	if (sweep && !strcmp(o.file, "-")) {
		fprintf(stderr, "cfsbw sim: --sweep reads the scenario once per "
				"run: name a file, not '-'\n");
		return 2;
	}
	c->timeline = timeline;
	c->sweep = sweep;
	c->svg = svg;
	c->o = o;
	c->json = json;
	return -1;
}

int cli_sim_main(int argc, char **argv)
{
	struct sim_cmdline c;
	char cpus_buf[24];
	int rc = parse_args(argc, argv, &c);
	if (rc >= 0)
		return rc;
	if (c.o.replay && !c.o.cpus)
		c.o.cpus = machine_cpus(cpus_buf, sizeof cpus_buf);
	if (c.svg && cli_svg_check(c.svg))
		return 2;
	if (c.sweep)
		return cli_sweep_main(&c.o, c.sweep, c.svg, c.json);
	return single_run(&c.o, c.json, c.timeline, c.svg);
}
