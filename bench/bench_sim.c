/*
 * bench_sim.c - how fast the simulator runs: simulated events per second
 * of wall time, on one core, for
 *   - the case: 64 CPUs, 200 groups (two levels, two in three
 *     limited), 1000 tasks (busy, duty, Poisson requests), 60 s simulated;
 *   - ticks: 1024 CPUs of busy tasks in one limited group at HZ 1000, where
 *     the tick, the charge (R5) and the refresh (R10) dominate;
 *   - wake-ups: 8 CPUs, 2000 short duty tasks, where sleep, wake-up
 *     placement and preemption dominate;
 *   - 4096 CPUs: 9000 tasks, a group limited to 1000 CPUs, where idle
 *     CPUs, balancing and refreshes of 4096 accounts weigh;
 *   - tenants: 64 CPUs, one group limited to 16 CPUs over 2000 groups of
 *     one duty task each (a daemon's tenants under one limit), where the
 *     limited group throttles and is released on every CPU every period,
 *     with two thousand groups below it.
 * An event is one timer the machine fires (a CPU's tick, the end of a
 * burst, a wake-up or arrival, a period or slack timer, a balancing pass).
 * Each figure is the best of REPEATS runs, in wall time and in the
 * thread's CPU time (what a shared machine distorts less: time the thread
 * waited for a CPU is not counted).  `bench_sim CASE...` runs only
 * the cases named (issue, ticks, wakeups, 4096cpus, tenants): to compare
 * two builds
 * case by case, alternately (bench/README.md).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfsbw_sim.h"

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

/* A growable text buffer for generated scenarios. */
struct text {
	char *p;
	size_t len, cap;
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void add(struct text *t, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->cap + (size_t)n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		if (!t->p) {
			fputs("bench_sim: out of memory\n", stderr);
			exit(1);
		}
	}
	memcpy(t->p + t->len, line, (size_t)n + 1);
	t->len += (size_t)n;
}

#define REPEATS 3

/* The cases named on the command line; none: every case. */
static char **only;
static int nr_only;

static bool wanted(const char *name)
{
	for (int i = 0; i < nr_only; i++)
		if (!strcmp(only[i], name))
			return true;
	return nr_only == 0;
}

/* Run the scenario REPEATS times; report the fastest, to shed the noise
 * of a shared machine.  Every repeat must process the same events. */
static void run(const char *name, const char *text)
{
	struct cfsbw_sim_totals tot;
	int64_t best = INT64_MAX, best_cpu = INT64_MAX;
	uint64_t events = 0;
	size_t nr_groups = 0, nr_lines = 0;

	if (!wanted(name))
		return;
	for (int rep = 0; rep < REPEATS; rep++) {
		struct cfsbw_sim_scenario sc;
		struct cfsbw_sim_error err;
		struct cfsbw_sim *s;
		cfsbw_sim_scenario_init(&sc);
		if (cfsbw_sim_scenario_parse(&sc, text, &err) ||
		    cfsbw_sim_create(&sc, &s, &err)) {
			fprintf(stderr, "bench_sim: %s: line %u: %s\n", name,
				err.line, err.msg);
			exit(1);
		}
		int64_t t0 = clock_ns(CLOCK_MONOTONIC);
		int64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		cfsbw_sim_run(s);
		int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		int64_t wall = clock_ns(CLOCK_MONOTONIC) - t0;
		cfsbw_sim_totals(s, &tot);
		if (rep && tot.events != events) {
			fprintf(stderr, "bench_sim: %s: not deterministic\n",
				name);
			exit(1);
		}
		events = tot.events;
		nr_groups = cfsbw_sim_nr_groups(s);
		nr_lines = cfsbw_sim_nr_lines(s);
		best = wall < best ? wall : best;
		best_cpu = cpu < best_cpu ? cpu : best_cpu;
		cfsbw_sim_free(s);
		cfsbw_sim_scenario_free(&sc);
	}
	double secs = (double)best / 1e9, cpu_secs = (double)best_cpu / 1e9;
	printf("sim %-9s %4u CPUs %4zu groups %5zu task lines %4" PRId64
	       " s simulated: %9" PRIu64 " events in %6.3f s wall = "
	       "%5.2f M events/s, %6.1f simulated s per wall s; %6.3f s CPU = "
	       "%5.2f M events/CPU s (best of %d)\n",
	       name, tot.nr_cpus, nr_groups, nr_lines,
	       tot.duration_ns / CFSBW_NSEC_PER_SEC, events, secs,
	       (double)events / secs / 1e6, (double)tot.duration_ns / 1e9 / secs,
	       cpu_secs, (double)events / cpu_secs / 1e6, REPEATS);
}

int main(int argc, char **argv)
{
	struct text t = {0};

	only = argv + 1;
	nr_only = argc - 1;
	for (int i = 0; i < nr_only; i++)
		if (strcmp(only[i], "issue") && strcmp(only[i], "ticks") &&
		    strcmp(only[i], "wakeups") && strcmp(only[i], "4096cpus") &&
		    strcmp(only[i], "tenants")) {
			fprintf(stderr,
				"bench_sim: no case %s (issue, ticks, wakeups, "
				"4096cpus, tenants)\n",
				only[i]);
			return 2;
		}

	/* The case. */
	add(&t, "cpus 64\nhz 250\nduration 60s\nseed 7\n");
	for (int i = 0; i < 200; i++) {
		char path[64];
		if (i < 20)
			snprintf(path, sizeof path, "/g%d", i);
		else
			snprintf(path, sizeof path, "/g%d/g%d", i % 20, i);
		if (i % 3 == 0)
			add(&t, "group %s\n", path);
		else
			add(&t, "group %s cpu.cfs_quota_us=%d cpu.cfs_period_us=100000\n",
			    path, 20000 + (i % 7) * 30000);
	}
	for (int i = 0; i < 1000; i++) {
		int g = i % 200;
		char path[64];
		if (g < 20)
			snprintf(path, sizeof path, "/g%d", g);
		else
			snprintf(path, sizeof path, "/g%d/g%d", g % 20, g);
		if (i % 3 == 0)
			add(&t, "task %s busy\n", path);
		else if (i % 3 == 1)
			add(&t, "task %s duty run=3ms sleep=20ms\n", path);
		else
			add(&t, "task %s requests rate=100/s service=exp:2ms\n",
			    path);
	}
	run("issue", t.p);

	t.len = 0;
	add(&t, "cpus 1024\nhz 1000\nduration 5s\n"
		"group /g cpu.cfs_quota_us=512000000 cpu.cfs_period_us=1000000\n"
		"task /g busy count=2048\n");
	run("ticks", t.p);

	t.len = 0;
	add(&t, "cpus 8\nhz 1000\nduration 10s\n"
		"group /g cpu.cfs_quota_us=400000 cpu.cfs_period_us=100000\n"
		"task /g duty run=100us sleep=1ms count=1000\n"
		"task / duty run=50us sleep=2ms count=1000\n");
	run("wakeups", t.p);

	t.len = 0;
	add(&t, "cpus 4096\nhz 250\nduration 5s\n"
		"group /a cpu.cfs_quota_us=100000000 cpu.cfs_period_us=100000\n"
		"group /b\n"
		"task /a busy count=5000\n"
		"task /b duty run=2ms sleep=8ms phase=random count=3000\n"
		"task / requests rate=10/s service=exp:5ms count=1000\n");
	run("4096cpus", t.p);

	t.len = 0;
	add(&t, "cpus 64\nhz 250\nduration 10s\n"
		"group /tenants cpu.cfs_quota_us=1600000 "
		"cpu.cfs_period_us=100000\n");
	for (int i = 0; i < 2000; i++)
		add(&t, "group /tenants/t%d\n"
			"task /tenants/t%d duty run=2ms sleep=30ms\n",
		    i, i);
	run("tenants", t.p);
	free(t.p);
	return 0;
}
