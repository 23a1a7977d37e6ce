/*
 * test_host_run.c - cfsbw run holds real processes to their budget.
 *
 * Each test runs `cfsbw run` on a workload for a few seconds and checks the
 * CPU time the workload used as the kernel counts it: the command runs under
 * "workload measure", which prints the rusage (wait4) of the command's whole
 * reaped tree plus its own.  Wall clocks are used only to turn CPU time into
 * cores.
 *
 * Tolerances (docs/host.md, section 7), measured: 12 rounds of this file on
 * this 2-core machine while other engineers built and tested, 6 of them
 * with an extra 2-thread busy hog: every run where the group saturated was
 * within -1.4 % .. +1.7 % of its target, and cfsbw's usage_ns within 2 ms
 * of the kernel's count.  The assertions allow 3 % and 2 % + 20 ms.  A
 * group that the machine could not saturate (other load took the CPUs) is
 * checked against R13's bound only, never against the target.
 */
#include "harness.h"
#include "host/host.h"
#include "test_host.h"

/* The span the governed processes existed, from cfsbw's --stats, in s. */
static double span_s(const struct run_result *r)
{
	return r->wall_ns ? (double)r->wall_ns / 1e9 : r->wall_s;
}

/* CPU time of the governed processes, by the kernel's count, in s. */
static double governed_s(const struct run_result *r)
{
	const char *p = strstr(r->out, "tree_cpu_us ");
	return p ? (double)atoll(p + 12) / 1e6 : -1.0;
}

/*
 * R13: over a run, a group gets at most its first pool and one quota per
 * refresh; plus slack_s for the ticks that ran past throttles.
 */
static double bound_s(const struct run_result *r, double quota_s)
{
	return quota_s * (double)(r->nr_periods + 1);
}

static void report(const char *what, const struct run_result *r,
		   double target)
{
	double g = governed_s(r);
	printf("    %s: %.4f cores (target %.2f, %+.2f %%), usage_ns %.4f s, "
	       "kernel %.4f s, periods %llu throttled %llu, self %.1f ms "
	       "(%.2f %% of governed), %llu processes\n",
	       what, g / span_s(r), target,
	       100.0 * (g / span_s(r) - target) / target,
	       (double)r->usage_ns / 1e9, g,
	       (unsigned long long)r->nr_periods,
	       (unsigned long long)r->nr_throttled,
	       (double)r->self_cpu_ns / 1e6,
	       g > 0 ? 100.0 * (double)r->self_cpu_ns / 1e9 / g : 0.0,
	       (unsigned long long)r->nr_processes);
}

/*
 * The checks common to every saturated run: cfsbw saw all the CPU time
 * (R5: short-lived processes included), the group never got more than R13
 * allows, it used nearly its quota in each throttled period, and, when the
 * machine let the group use its quota, it got its target within tol.
 * "Nearly", by the same tol: under v4 the runtime an exiting process gives
 * back waits in the pool for the next refresh when every other process is
 * throttled (seen once in CI: 1.5296 s against 1.55 s for 31 periods in the
 * sanitizer build, whose short-lived children are slow to start).
 */
#define CHECK_LIMIT(r, quota_s, target, tol)                                   \
	do {                                                                   \
		double g_ = governed_s(&(r));                                  \
		ASSERT_INT((r).exit_code, ==, 0);                              \
		ASSERT_NEAR((double)(r).usage_ns / 1e9, g_, 0.02 * g_ + 0.02); \
		ASSERT_TRUE(g_ <= bound_s(&(r), quota_s) + 0.01);              \
		ASSERT_TRUE(g_ >= (1.0 - (tol)) * (quota_s) *                \
					  (double)(r).nr_throttled - 0.02);    \
		if ((r).nr_throttled + 2 >= (r).nr_periods)                    \
			ASSERT_NEAR(g_ / span_s(&(r)), target, (tol) * (target)); \
		else                                                           \
			printf("    machine busy: %llu of %llu periods "       \
			       "throttled, target not checked\n",              \
			       (unsigned long long)(r).nr_throttled,          \
			       (unsigned long long)(r).nr_periods);           \
	} while (0)

TEST(busy_process_held_to_20_percent, "R6 R7 R10 R13")
{
	const char *args[] = {"--quota", "20ms", "--period", "100ms", "--",
			host_workload(), "measure", host_workload(), "spin",
			"3", NULL};
	struct run_result r;
	host_run(args, &r);
	report("1 busy, 20 %", &r, 0.2);
	ASSERT_UINT(r.nr_throttled + 1, >=, r.nr_periods);
	CHECK_LIMIT(r, 0.020, 0.2, 0.03);
}

TEST(two_processes_held_to_1_5_cpus, "R5 R10 R13")
{
	const char *args[] = {"--cpus", "1.5", "--period", "100ms", "--",
			host_workload(), "measure", host_workload(), "procs",
			"2", "3", NULL};
	struct run_result r;
	host_run(args, &r);
	report("2 busy, 1.5 CPUs", &r, 1.5);
	ASSERT_UINT(r.nr_processes, ==, 4);
	CHECK_LIMIT(r, 0.150, 1.5, 0.03);
}

/*
 * One process of `threads` busy threads for 3 s, held to `cpus` CPUs,
 * beside `sleepers` threads that sleep, or wake every `wake_ms` to spin
 * 0.3 ms ("0": they sleep throughout).
 */
static void run_spinning_threads(const char *cpus, const char *threads,
				 const char *sleepers, const char *wake_ms,
				 struct run_result *r)
{
	const char *args[] = {"--cpus", cpus, "--period", "100ms", "--",
			host_workload(), "measure", host_workload(), "spin",
			"3", threads, sleepers, wake_ms, NULL};
	host_run(args, r);
}

TEST(four_threads_held_to_one_cpu, "R5 R7 R10")
{
	struct run_result r;
	run_spinning_threads("1", "4", "0", "0", &r);
	report("4 threads, 1 CPU", &r, 1.0);
	CHECK_LIMIT(r, 0.100, 1.0, 0.03);
}

/*
 * More busy threads than CPUs: 32 on this machine's 2, created while the
 * process is already being throttled.  Before 2026-12-04 the group used
 * 0.55-1.0 CPU of 0.5 here: a thread interrupted inside clone() lost its
 * interrupt and ran free, the kernel's CPU-time timer came late (92 ms of
 * CPU past the expiry, in the median), and a process was resumed before
 * its debt was charged; paying a debt back also held the threads stopped
 * past their end (5.8 s for 3 s of spinning).  docs/host.md, section 8.
 * R7: throttled when the runtime is spent; R13: never more than a quota a
 * period over the run, and no debt left to hold the process after its work
 * is done.
 */
TEST(many_threads_held_to_half_a_cpu, "R7 R10 R13")
{
	struct run_result r;
	run_spinning_threads("0.5", "32", "0", "0", &r);
	report("32 threads, 0.5 CPU", &r, 0.5);
	CHECK_LIMIT(r, 0.050, 0.5, 0.03);
	/* The threads end at 3 s; each needs a moment of CPU to see it, and
	 * held ones wait for a refresh: a few periods, not seconds. */
	ASSERT_TRUE(span_s(&r) < 3.6);
}

/*
 * R7 holds a throttled group's runnable tasks; the kernel leaves its
 * sleeping ones alone, and so does the driver (docs/host.md, section 4):
 * 2 busy threads beside 30 asleep are stopped at each throttle, the 30
 * are not.  Stopping all 32 cost cfsbw 62 ms of CPU in 5 s instead of
 * 25 ms.  Measured: 60 stops in 30 throttles, the 2 busy threads' (7
 * runs, and 3 beside a busy hog).  Bound: those, plus each of the 32 at
 * the end, when the sleepers wake to exit, and at the start, when a
 * throttle may find them still on their way to sleep: in the sanitizer
 * build beside a hog, where making the threads is slow, up to 9 times
 * each before a thread had to be found running twice to be taken for a
 * busy one (136 stops in 31 throttles).  Stopping every thread would be
 * 32 a throttle, about 960.
 */
TEST(sleeping_threads_left_alone, "R7 R13")
{
	struct run_result r;
	run_spinning_threads("0.5", "2", "30", "0", &r);
	report("2 busy + 30 asleep, 0.5 CPU", &r, 0.5);
	printf("    %llu threads stopped in %llu throttles\n",
	       (unsigned long long)r.nr_thread_stops,
	       (unsigned long long)r.nr_throttled);
	CHECK_LIMIT(r, 0.050, 0.5, 0.03);
	ASSERT_UINT(r.nr_throttled, >=, 5);
	ASSERT_UINT(r.nr_thread_stops, <=, 2 * r.nr_throttled + 9 * 32);
}

/*
 * The same, with sleepers that wake every 3 ms for 0.3 ms of CPU: each
 * throttle finds most of them asleep and leaves them, and one that wakes
 * before the refresh is caught by the process's CPU-time timer and every
 * thread is stopped then.  R7, R13: the group is held to its quota all
 * the same.
 */
TEST(waking_sleepers_held, "R7 R13")
{
	struct run_result r;
	run_spinning_threads("0.5", "1", "8", "3", &r);
	report("1 busy + 8 waking every 3 ms, 0.5 CPU", &r, 0.5);
	CHECK_LIMIT(r, 0.050, 0.5, 0.03);
}

/*
 * A shell that starts busy children living 10 ms each, three at a time,
 * for 3 s: hundreds of processes, each charged from its birth to its exit.
 * With a 2 ms slice: under v4 a child that exits gives back what is left
 * of its slice, and that waits in the pool for the next refresh while the
 * others are throttled (the seeds' stranding, docs/host.md section 8).
 * With v4's default 10 ms slice, as long as a child's whole CPU, the
 * group got 0.457-0.490 CPU of 0.5 (-2.0 .. -8.6 %, 5 runs) on the VM of
 * 2026-12-04 07:50, where a child costs less CPU to start than it did on
 * the old one (-1.4 .. +0.6 % there); with 2 ms, +0.2 .. +0.9 % (4 runs).
 */
TEST(shell_with_short_lived_children, "R5 R13")
{
	/* The workload's path is the script's $0. */
	const char *script =
		"end=$(( $(date +%s%N) / 1000000 + 3000 )); "
		"while [ $(( $(date +%s%N) / 1000000 )) -lt $end ]; do "
		"\"$0\" spin 0.01 & \"$0\" spin 0.01 & \"$0\" spin 0.01; wait; "
		"done";
	const char *args[] = {"--cpus", "0.5", "--period", "100ms",
			      "--slice", "2ms", "--",
			      host_workload(), "measure", "sh", "-c", script,
			      host_workload(), NULL};
	struct run_result r;
	host_run(args, &r);
	report("shell, short children, 0.5 CPU", &r, 0.5);
	ASSERT_UINT(r.nr_processes, >=, 50);
	/*
	 * Above the target, what R13 allows for this many periods (the
	 * start-up quota, +3.3 % in 30) plus 1 %: the sanitizer build, slower
	 * to see each process's runtime spent, uses most of it (+1.7 ..
	 * +2.6 % in 9 runs, against -0.6 .. +0.8 % for gcc and clang).
	 * Below it, 3 %, where the 10 ms slice fell (above).
	 */
	double tol = 1.0 / (double)(r.nr_periods ? r.nr_periods : 1) + 0.01;
	CHECK_LIMIT(r, 0.050, 0.5, tol);
	if (r.nr_throttled + 2 >= r.nr_periods)
		ASSERT_TRUE(governed_s(&r) / span_s(&r) >= 0.97 * 0.5);
}

/*
 * R5: more live processes than the driver's first runqueues (64): 120
 * children at once, 10 ms of CPU each, so the runqueues grow under load.
 * Every one is governed (none "run ungoverned"), every nanosecond is
 * charged, and the group gets its quota.  Under the upstream policy: with
 * 120 runqueues on 2 CPUs, v4 leaves the runtime that exiting processes
 * give back in the pool until the next refresh (-2.4 % here; the seeds'
 * stranding, scenarios/stranded-slices.sim), where upstream's slack timer
 * hands it on (+0.1 %).
 */
TEST(many_live_processes_all_governed, "R5 R13")
{
	const char *script = "i=0; while [ $i -lt 120 ]; do "
			     "\"$0\" spin 0.01 & i=$((i + 1)); done; wait";
	const char *args[] = {"--policy", "upstream", "--cpus", "0.5",
			      "--period", "100ms", "--", host_workload(),
			      "measure", "sh", "-c", script, host_workload(),
			      NULL};
	struct run_result r;
	host_run(args, &r);
	report("120 children at once, upstream, 0.5 CPU", &r, 0.5);
	ASSERT_UINT(r.nr_processes, >=, 121);
	ASSERT_TRUE(strstr(r.err, "ungoverned") == NULL);
	/*
	 * A run of about 20 periods: R13's start-up quota alone is +5 % of
	 * the target, and since no thread stays running with a lost interrupt
	 * and debts are charged before a resume (2026-12-04), the group uses
	 * it (+0.2 .. +4.2 % in 10 runs).  So the target is checked within
	 * what R13 allows for this many periods, plus 1 %.
	 */
	double tol = 1.0 / (double)(r.nr_periods ? r.nr_periods : 1) + 0.01;
	CHECK_LIMIT(r, 0.050, 0.5, tol);
}

/*
 * Seed 008: a group whose tasks use less than the quota is never throttled.
 * 10 % of a CPU against 0.5 CPU; the 200 ms period leaves room for a
 * sanitizer build's start-up (43 ms of CPU for the two processes).
 */
TEST(group_below_quota_never_throttled, "R10 R12")
{
	const char *args[] = {"--quota", "100ms", "--period", "200ms", "--",
			host_workload(), "measure", host_workload(), "bursty",
			"10", "90", "2", NULL};
	struct run_result r;
	host_run(args, &r);
	report("bursty 10/90 ms, 0.5 CPU", &r, 0.1);
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_UINT(r.nr_periods, >=, 8);
	ASSERT_UINT(r.nr_throttled, ==, 0);
	ASSERT_UINT(r.throttled_time, ==, 0);
}

/* --pid: a process started elsewhere, taken in while it runs. */
TEST(attached_process_held_to_20_percent, "R5 R10")
{
	fflush(stdout);
	pid_t w = fork();
	if (w == 0) {
		execl(host_workload(), "workload", "spin", "3", (char *)NULL);
		_exit(127);
	}
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)w);
	const char *args[] = {"--quota", "20ms", "--period", "100ms", "--pid", pid,
			NULL};
	struct run_result r;
	host_run(args, &r);
	int status;
	waitpid(w, &status, 0);
	double cores = (double)r.usage_ns / (double)r.wall_ns;
	printf("    --pid: %.4f cores by usage_ns, %llu/%llu throttled\n",
	       cores, (unsigned long long)r.nr_throttled,
	       (unsigned long long)r.nr_periods);
	ASSERT_INT(r.exit_code, ==, 0);
	/* A sibling of cfsbw does not wait for it: no warning (cli). */
	ASSERT_TRUE(strstr(r.err, "ancestor") == NULL);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_TRUE((double)r.usage_ns / 1e9 <= 0.020 * (double)(r.nr_periods + 1) + 0.01);
	ASSERT_NEAR(cores, 0.2, 0.03 * 0.2);
}

/*
 * --pid A,B: two running processes in one group, as a cgroup's
 * cgroup.procs may hold both.  A spins 2 s and B 3 s, each wanting a whole
 * CPU: together they are held to 0.3 CPU (R5: one pool for both), and the
 * run lasts until the last of them exits, not the first.
 */
TEST(attached_processes_share_one_quota, "R5 R10 R13 cli")
{
	fflush(stdout);
	pid_t w[2];
	const char *secs[2] = {"2", "3"};
	for (int i = 0; i < 2; i++) {
		w[i] = fork();
		if (w[i] == 0) {
			execl(host_workload(), "workload", "spin", secs[i],
			      (char *)NULL);
			_exit(127);
		}
	}
	char pids[32];
	snprintf(pids, sizeof pids, "%d,%d", (int)w[0], (int)w[1]);
	const char *args[] = {"--cpus", "0.3", "--period", "100ms", "--pid",
			      pids, NULL};
	struct run_result r;
	host_run(args, &r);
	for (int i = 0; i < 2; i++) {
		int status;
		waitpid(w[i], &status, 0);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	double cores = (double)r.usage_ns / (double)r.wall_ns;
	printf("    --pid A,B: %.4f cores by usage_ns over %.2f s, %llu/%llu "
	       "throttled\n",
	       cores, span_s(&r), (unsigned long long)r.nr_throttled,
	       (unsigned long long)r.nr_periods);
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_UINT(r.nr_processes, ==, 2);
	ASSERT_TRUE(span_s(&r) > 2.7);
	ASSERT_TRUE((double)r.usage_ns / 1e9 <=
		    0.030 * (double)(r.nr_periods + 1) + 0.01);
	ASSERT_NEAR(cores, 0.3, 0.03 * 0.3);
}

/*
 * --pid on a process that creates threads all the time: a thread born while
 * cfsbw reads the process's task list is already its tracee (the clone
 * event of a thread it holds), and seizing it again fails with EPERM.  That
 * once made 2 of 20 attaches fail; each must succeed and hold the limit.
 */
TEST(attach_to_a_process_making_threads, "R5 R13 cli")
{
	for (int i = 0; i < 6; i++) {
		fflush(stdout);
		pid_t w = fork();
		if (w == 0) {
			execl(host_workload(), "workload", "churn", "2", "0.2",
			      "0.8", (char *)NULL);
			_exit(127);
		}
		struct timespec settle = {0, 50 * 1000000};
		nanosleep(&settle, NULL);
		char pid[16];
		snprintf(pid, sizeof pid, "%d", (int)w);
		const char *args[] = {"--cpus", "0.5", "--period", "50ms",
				      "--pid", pid, NULL};
		struct run_result r;
		host_run(args, &r);
		int status;
		waitpid(w, &status, 0);
		ASSERT_INT(r.exit_code, ==, 0);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		/* R13, and a tick per period past the throttle. */
		double used = (double)r.usage_ns / 1e9;
		double quotas = 0.025 * (double)r.nr_periods;
		ASSERT_TRUE(used <= 0.025 * (double)(r.nr_periods + 1) + 0.01);
		ASSERT_UINT(r.nr_processes, ==, 1);
		ASSERT_TRUE(r.usage_ns > 0);
		/*
		 * Alone, the process wants more than its quota and is
		 * throttled.  Beside a 2-thread busy hog it got 0.27 CPU of
		 * its 0.5 (each thread it makes waits for cfsbw, which waits
		 * for a CPU): never throttled, rightly.  In the sanitizer
		 * build beside that hog it once used more than 80 % of its
		 * quotas and was still never throttled, as a group short of
		 * its quota should not be.  So throttling is checked only
		 * when it used its quotas in full (alone it uses them and
		 * R13's start-up quota: 1.003-1.061 of them in 6 runs).
		 */
		if (used >= quotas)
			ASSERT_UINT(r.nr_throttled, >=, 1);
		else
			printf("    machine busy: %.3f s used of %.3f s of "
			       "quotas, throttling not checked\n",
			       used, quotas);
	}
}

/*
 * The upstream policy's refresh pays debts (-runtime + 1).  It also takes
 * back the slice the sleeping "measure" wrapper drew at birth (v4 leaves it
 * stranded there, seed 003), so the group can use all of the start-up quota
 * R13 allows: +3.3 % over 3 s (+1.7..+2.8 % measured), so this run is 5 s
 * long (+2 %), and 4 % is allowed.
 */
TEST(upstream_policy_holds_20_percent, "R10 R13 section-6")
{
	const char *args[] = {"--policy", "upstream", "--quota", "20ms",
			      "--period", "100ms", "--", host_workload(),
			      "measure", host_workload(), "spin", "5", "2",
			      NULL};
	struct run_result r;
	host_run(args, &r);
	report("upstream, 2 threads, 20 %", &r, 0.2);
	CHECK_LIMIT(r, 0.020, 0.2, 0.04);
}

/*
 * The library refuses what it cannot govern: hard limits (seeds 009-011)
 * cap a group by runqueue shares that processes do not have.
 */
TEST(host_refuses_the_hard_limits_policy, "section-6 cli")
{
	struct cfsbw_host_config cfg;
	memset(&cfg, 0, sizeof cfg);
	struct cfsbw_host *h = NULL;
	cfg.policy = CFSBW_POLICY_HARDLIMITS;
	ASSERT_INT(cfsbw_host_create(&cfg, &h), ==, -EINVAL);
	ASSERT_TRUE(h == NULL);
	cfg.policy = CFSBW_POLICY_COUNT;
	ASSERT_INT(cfsbw_host_create(&cfg, &h), ==, -EINVAL);
	cfg.policy = CFSBW_POLICY_UPSTREAM;
	ASSERT_INT(cfsbw_host_create(&cfg, &h), ==, 0);
	cfsbw_host_destroy(h);
}

TEST_MAIN(TEST_ENTRY(busy_process_held_to_20_percent)
	  TEST_ENTRY(two_processes_held_to_1_5_cpus)
	  TEST_ENTRY(four_threads_held_to_one_cpu)
	  TEST_ENTRY(sleeping_threads_left_alone)
	  TEST_ENTRY(waking_sleepers_held)
	  TEST_ENTRY(many_threads_held_to_half_a_cpu)
	  TEST_ENTRY(shell_with_short_lived_children)
	  TEST_ENTRY(many_live_processes_all_governed)
	  TEST_ENTRY(group_below_quota_never_throttled)
	  TEST_ENTRY(attached_process_held_to_20_percent)
	  TEST_ENTRY(attached_processes_share_one_quota)
	  TEST_ENTRY(attach_to_a_process_making_threads)
	  TEST_ENTRY(upstream_policy_holds_20_percent)
	  TEST_ENTRY(host_refuses_the_hard_limits_policy))
