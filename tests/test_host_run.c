/*
 * test_host_run.c - cfsbw run holds real processes to their budget.
 *
 * Each test runs `cfsbw run` on a workload for a few seconds and checks the
 * CPU time the workload used as the kernel counts it: the command runs under
 * "workload measure", which prints the rusage (wait4) of the command's whole
 * reaped tree plus its own.  Wall clocks are used only to turn CPU time into
 * cores.
 *
 * What the machine gave is measured, never assumed: this 2-core machine is
 * shared, and a group can get less than its target because other work
 * took the CPUs.  So the checks (CHECK_LIMIT) hold on any load, and
 * together they pin the group to its target whenever the machine lets it
 * run:
 * - each throttled period gave the group its quota, within `below`
 *   (R7, R10: it was stopped only once its runtime was spent);
 * - no busy thread was held stopped longer than its group was throttled,
 *   plus the time cfsbw itself waited for a CPU (the busy threads report
 *   their lives, time on a CPU and time waiting on a runqueue from their
 *   schedstat; what is left is time held: tests/progs/workload.c);
 * - a refresh came every period (R10);
 * - the group got no more than R13 allows, nor more than its target plus
 *   `above`, and cfsbw's usage_ns is the kernel's count.
 * A group that the machine let run is throttled in every period and so
 * gets its target; one that the machine starved was, measurably, not
 * held.  Tolerances, measured (docs/host.md, section 7): see each test.
 */
#include "harness.h"
#include "cfsbw_host.h"
#include "test_host.h"

/* The span the governed processes existed, from cfsbw's --stats, in s. */
static double span_s(const struct run_result *r)
{
	return r->wall_ns ? (double)r->wall_ns / 1e9 : r->wall_s;
}

/*
 * CPU time of the governed processes, by the kernel's count, in s: from
 * "workload measure".  A --pid workload ran before cfsbw took it in, so
 * there cfsbw's usage_ns is used, and the test checks it against the
 * kernel's count of the whole workload (reaped_cpu_ns).
 */
static double governed_s(const struct run_result *r)
{
	if (r->reaped_cpu_ns) /* --pid: checked by the test against usage_ns */
		return (double)r->usage_ns / 1e9;
	const char *p = strstr(r->out, "tree_cpu_us ");
	return p ? (double)atoll(p + 12) / 1e6 : -1.0;
}

/*
 * R13: over a run, a group gets at most its first pool and one quota per
 * refresh.
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
	printf("    unpaid at the end %.1f ms\n", (double)r->unpaid_ns / 1e6);
	printf("    machine: %llu busy threads waited %.1f ms each for a CPU, "
	       "held %.1f ms at most (throttled %.1f ms), cfsbw waited "
	       "%.1f ms\n",
	       (unsigned long long)r->busy_threads,
	       r->busy_threads ? (double)r->busy_wait_ns / 1e6 /
					 (double)r->busy_threads
			       : 0.0,
	       (double)r->busy_max_held_ns / 1e6,
	       (double)r->throttled_time / 1e6,
	       (double)r->cfsbw_wait_ns / 1e6);
}

/* How long cfsbw itself waited for a CPU, in s (its schedstat). */
static double cfsbw_wait_s(const struct run_result *r)
{
	return (double)r->cfsbw_wait_ns / 1e9;
}

/* R13's start-up quota over this run's periods, plus 1 %. */
static double r13_tol(const struct run_result *r)
{
	return 1.0 / (double)(r->nr_periods ? r->nr_periods : 1) + 0.01;
}

/*
 * The checks of every run (see the top): cfsbw saw all the CPU time (R5:
 * short-lived processes included); the group got at most what R13 allows
 * (the pools handed out, and the overrun of its last throttle: what ran
 * past it before cfsbw stopped the processes has no next period to be
 * charged to; cfsbw reports it as unpaid_ns, measured 0-4.8 ms in the
 * sanitizer build with 120 children, and CI once went 7 ms past the
 * pools' bound there, 2026-12-05, so it is held under one quota) and its
 * target plus `above`, with the same unpaid overrun (CI at 430a0c5,
 * 2026-12-07: 2 busy threads beside 30 asleep at 0.2 CPU, sanitizer
 * build, 0.6269 s in a 3.015 s run, 3.96% over the target, of which 7.6
 * ms unpaid at the end: 2.7% without it); it got nearly its quota in
 * each throttled
 * period; a refresh came every period of its 100 ms; and no busy thread
 * was held stopped longer than the group was throttled plus cfsbw's wait.
 * "Nearly", by `below`: under v4 the runtime an exiting process gives
 * back waits in the pool for the next refresh when every other process is
 * throttled (seen once in CI: 1.5296 s against 1.55 s for 31 periods in the
 * sanitizer build, whose short-lived children are slow to start).
 * Those two need cfsbw to run when its timers fire: for each second cfsbw
 * itself waited for a CPU (its schedstat), a period may come late and
 * the group lose up to its target's CPU (measured 2026-12-04 at a load
 * average of 13-16: cfsbw waited 0.1-2.5 s of a 3-5 s run, and upstream's
 * 2 threads at 20 % got 0.26 s in 16 throttled periods of 33 in 5 s).
 */
#define CHECK_LIMIT(r, quota_s, target, below, above)                         \
	do {                                                                   \
		double g_ = governed_s(&(r));                                  \
		double unpaid_ = (double)(r).unpaid_ns / 1e9;                  \
		ASSERT_INT((r).exit_code, ==, 0);                              \
		ASSERT_UINT((r).busy_threads, >=, 1);                          \
		ASSERT_NEAR((double)(r).usage_ns / 1e9, g_, 0.02 * g_ + 0.02); \
		ASSERT_DBL(unpaid_, <=, (quota_s));                            \
		ASSERT_DBL(g_, <=, bound_s(&(r), quota_s) + unpaid_ + 0.01);   \
		ASSERT_DBL(g_, <=,                                             \
			   (1.0 + (above)) * (target)*span_s(&(r)) + unpaid_); \
		ASSERT_DBL(g_, >=, (1.0 - (below)) * (quota_s) *               \
					   (double)(r).nr_throttled - 0.02 -   \
				   (target) * cfsbw_wait_s(&(r)));             \
		ASSERT_DBL((double)(r).nr_periods, >=,                         \
			   (span_s(&(r)) - cfsbw_wait_s(&(r))) / 0.100 - 2.0); \
		ASSERT_DBL(held_excess_s(&(r)), <=, HELD_SLACK_S);             \
	} while (0)

/*
 * host_run for the tests that CHECK_LIMIT: a run whose busy thread was
 * held past that bound is made again, 3 runs at most, and the last is
 * checked (so a cfsbw that holds threads too long fails every time).  In
 * the CI runs of 2026-12-07, 144 of these runs were at +0.0 ms or under,
 * and one was at +77 ms: upstream's 2 threads at 20 %, held 4544.7 ms
 * with 4428.2 ms throttled while cfsbw waited 39.3 ms, beside the other
 * compiler's tests; what held it is not known.
 */
static void host_run_limited(const char *const args[], struct run_result *r)
{
	for (int attempt = 1;; attempt++) {
		host_run(args, r);
		double excess = held_excess_s(r);
		if (excess <= HELD_SLACK_S || attempt == 3)
			return;
		printf("    a busy thread held %.1f ms longer than its group "
		       "was throttled and cfsbw waited: again\n",
		       excess * 1e3);
	}
}

TEST(busy_process_held_to_20_percent, "R6 R7 R10 R13")
{
	const char *args[] = {"--quota", "20ms", "--period", "100ms", "--",
			host_workload(), "measure", host_workload(), "spin",
			"3", NULL};
	struct run_result r;
	host_run_limited(args, &r);
	report("1 busy, 20 %", &r, 0.2);
	CHECK_LIMIT(r, 0.020, 0.2, 0.03, 0.03);
	ASSERT_UINT(r.busy_threads, ==, 1);
}

TEST(two_processes_held_to_1_5_cpus, "R5 R10 R13")
{
	const char *args[] = {"--cpus", "1.5", "--period", "100ms", "--",
			host_workload(), "measure", host_workload(), "procs",
			"2", "3", NULL};
	struct run_result r;
	host_run_limited(args, &r);
	report("2 busy, 1.5 CPUs", &r, 1.5);
	CHECK_LIMIT(r, 0.150, 1.5, 0.03, 0.03);
	ASSERT_UINT(r.busy_threads, ==, 2);
	ASSERT_UINT(r.nr_processes, ==, 4);
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
	host_run_limited(args, r);
}

TEST(four_threads_held_to_one_cpu, "R5 R7 R10")
{
	struct run_result r;
	run_spinning_threads("1", "4", "0", "0", &r);
	report("4 threads, 1 CPU", &r, 1.0);
	CHECK_LIMIT(r, 0.100, 1.0, 0.03, 0.03);
	ASSERT_UINT(r.busy_threads, ==, 4);
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
	CHECK_LIMIT(r, 0.050, 0.5, 0.03, 0.03);
	/* The threads end at 3 s; each needs a moment of CPU to see it, and
	 * held ones wait for a refresh: a few periods, not seconds, and the
	 * time cfsbw waited for a CPU to resume them. */
	ASSERT_DBL(span_s(&r), <, 3.6 + cfsbw_wait_s(&r));
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
	for (int attempt = 1;; attempt++) {
		run_spinning_threads("0.2", "2", "30", "0", &r);
		report("2 busy + 30 asleep, 0.2 CPU", &r, 0.2);
		CHECK_LIMIT(r, 0.020, 0.2, 0.03, 0.03);
		printf("    %llu threads stopped in %llu throttles\n",
		       (unsigned long long)r.nr_thread_stops,
		       (unsigned long long)r.nr_throttled);
		ASSERT_UINT(r.busy_threads, ==, 2);
		/*
		 * The stops are counted against throttles: with fewer than
		 * 5 (a machine that gave the 2 busy threads less than 0.2
		 * CPU: at a load average of 13 they got 0.18-0.37 of 0.5),
		 * the bound below says nothing, so the run is made again,
		 * 3 times at most.
		 */
		if (r.nr_throttled >= 5 || attempt == 3)
			break;
		printf("    %llu throttles: again\n",
		       (unsigned long long)r.nr_throttled);
	}
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
	CHECK_LIMIT(r, 0.050, 0.5, 0.03, 0.03);
	ASSERT_UINT(r.busy_threads, ==, 1);
}

/*
 * A shell that starts busy children living 10 ms each, three at a time,
 * 40 times: 120 processes, each charged from its birth to its exit (a
 * count, not 3 s of them: how many fit in 3 s at half a CPU went from
 * about 150 down to 48 with the machine's load and the build).
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
		"i=0; while [ $i -lt 40 ]; do "
		"\"$0\" spin 0.01 & \"$0\" spin 0.01 & \"$0\" spin 0.01; wait; "
		"i=$((i + 1)); done";
	const char *args[] = {"--cpus", "0.5", "--period", "100ms",
			      "--slice", "2ms", "--",
			      host_workload(), "measure", "sh", "-c", script,
			      host_workload(), NULL};
	/*
	 * Above the target, what R13 allows for this many periods (the
	 * start-up quota, +3.3 % in 30) plus 1 %: the sanitizer build, slower
	 * to see each process's runtime spent, uses most of it (+1.7 ..
	 * +2.6 % in 9 runs, against -0.6 .. +0.8 % for gcc and clang).
	 * Below it, 3 %, where the 10 ms slice fell (above).
	 */
	struct run_result r;
	host_run_limited(args, &r);
	report("shell, short children, 0.5 CPU", &r, 0.5);
	CHECK_LIMIT(r, 0.050, 0.5, 0.03, r13_tol(&r));
	ASSERT_UINT(r.nr_processes, >=, 120);
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
	/*
	 * A run of about 20 periods: R13's start-up quota alone is +5 % of
	 * the target, and since no thread stays running with a lost interrupt
	 * and debts are charged before a resume (2026-12-04), the group uses
	 * it (+0.2 .. +4.2 % in 10 runs).  So the target is checked within
	 * what R13 allows for this many periods, plus 1 %.
	 */
	struct run_result r;
	host_run_limited(args, &r);
	report("120 children at once, upstream, 0.5 CPU", &r, 0.5);
	CHECK_LIMIT(r, 0.050, 0.5, r13_tol(&r), r13_tol(&r));
	ASSERT_UINT(r.nr_processes, >=, 121);
	ASSERT_TRUE(strstr(r.err, "ungoverned") == NULL);
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
	char sched[64];
	snprintf(sched, sizeof sched, "/tmp/cfsbw-test-%d-pid.sched",
		 (int)getpid());
	const char *work[] = {"spin", "3", NULL};
	pid_t w = host_spawn_workload(work, sched);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)w);
	const char *args[] = {"--quota", "20ms", "--period", "100ms", "--pid", pid,
			NULL};
	struct run_result r;
	host_run(args, &r);
	int status = host_reap_workload(w, sched, &r);
	report("--pid, 1 busy, 20 %", &r, 0.2);
	/* A sibling of cfsbw does not wait for it: no warning (cli). */
	ASSERT_TRUE(strstr(r.err, "ancestor") == NULL);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_LIMIT(r, 0.020, 0.2, 0.03, 0.03);
	ASSERT_UINT(r.busy_threads, ==, 1);
	/* Never more than the kernel counted for the whole workload. */
	ASSERT_UINT(r.usage_ns, <=, r.reaped_cpu_ns + 2000000);
}

/*
 * --pid A,B: two running processes in one group, as a cgroup's
 * cgroup.procs may hold both.  A spins 2 s and B 3 s, each wanting a whole
 * CPU: together they are held to 0.3 CPU (R5: one pool for both), and the
 * run lasts until the last of them exits, not the first.
 */
TEST(attached_processes_share_one_quota, "R5 R10 R13 cli")
{
	char sched[64];
	snprintf(sched, sizeof sched, "/tmp/cfsbw-test-%d-pids.sched",
		 (int)getpid());
	pid_t w[2];
	const char *work[2][3] = {{"spin", "2", NULL}, {"spin", "3", NULL}};
	for (int i = 0; i < 2; i++)
		w[i] = host_spawn_workload(work[i], sched);
	char pids[32];
	snprintf(pids, sizeof pids, "%d,%d", (int)w[0], (int)w[1]);
	const char *args[] = {"--cpus", "0.3", "--period", "100ms", "--pid",
			      pids, NULL};
	struct run_result r;
	host_run(args, &r);
	int status[2];
	for (int i = 0; i < 2; i++)
		status[i] = host_reap_workload(w[i], i ? sched : NULL, &r);
	report("--pid A,B, 2 busy, 0.3 CPU", &r, 0.3);
	for (int i = 0; i < 2; i++)
		ASSERT_TRUE(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0);
	ASSERT_UINT(r.nr_processes, ==, 2);
	ASSERT_TRUE(span_s(&r) > 2.7);
	CHECK_LIMIT(r, 0.030, 0.3, 0.03, 0.03);
	ASSERT_UINT(r.busy_threads, ==, 2);
	ASSERT_UINT(r.usage_ns, <=, r.reaped_cpu_ns + 2000000);
}

/*
 * --pid on a process that creates threads all the time: a thread born while
 * cfsbw reads the process's task list is already its tracee (the clone
 * event of a thread it holds), and seizing it again fails with EPERM.  That
 * once made 2 of 20 attaches fail; each must succeed and hold the limit.
 */
TEST(attach_to_a_process_making_threads, "R5 R13 cli")
{
	for (int i = 0, attempt = 1; i < 6; i++) {
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
		const char *args[] = {"--cpus", "0.1", "--period", "50ms",
				      "--pid", pid, NULL};
		struct run_result r;
		host_run(args, &r);
		int status;
		struct rusage ru;
		while (wait4(w, &status, 0, &ru) < 0 && errno == EINTR)
			;
		ASSERT_INT(r.exit_code, ==, 0);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		/*
		 * cfsbw charged no more than the kernel counted for the whole
		 * workload, its 50 ms before the attach included (as in the
		 * other --pid tests: an over-use here would be a charge
		 * counted twice, not CPU time the workload had).
		 */
		uint64_t kernel_ns =
			(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
				1000000000u +
			(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) *
				1000u;
		ASSERT_UINT(r.usage_ns, <=, kernel_ns + 2000000);
		/*
		 * R13, and what ran past the last throttle, not yet paid
		 * back: up to a tick (4 ms) for each of its 3 threads, and
		 * the tick of the clock read (0.086 s against 0.085 s once
		 * with 10 ms, at a load average of 19).  Not cfsbw's wait
		 * for a CPU: each new thread stops at its clone event until
		 * cfsbw answers, so a late cfsbw holds this workload.
		 * Measured 2026-12-04, 241 attaches beside a 2-thread busy
		 * loop (gcc and clang): over 5 ms * (periods + 1) by
		 * +0.0165 s at most, while cfsbw waited 0.05-0.40 s; the
		 * excess grew with the threads made and the periods
		 * throttled (correlation +0.6) and fell as cfsbw waited
		 * more (-0.54).  Quiet (240 attaches): +0.0053 s at most.
		 * Beside one busy thread, once +0.0214 s (gcc: 0.0964 s in
		 * 14 periods, 13 throttled, 383 threads, cfsbw waited
		 * 99 ms); CI once +0.0258 s (clang: 0.1008 s in 14
		 * periods, 456 threads).  Not explained yet, so not allowed
		 * to pass: such an attach is made again (2 seen on
		 * 2026-12-04, none in the 241 above; 3 attempts in all for
		 * the test, then it fails).
		 */
		double used = (double)r.usage_ns / 1e9;
		double excess = used - 0.005 * (double)(r.nr_periods + 1);
		printf("    attach %d: %.4f s used in %llu periods of 5 ms "
		       "quota, %llu throttled, cfsbw waited %.1f ms, "
		       "excess %.4f s\n",
		       i, used, (unsigned long long)r.nr_periods,
		       (unsigned long long)r.nr_throttled,
		       (double)r.cfsbw_wait_ns / 1e6, excess);
		printf("    unpaid at the end %.4f s\n",
		       (double)r.unpaid_ns / 1e9);
		if (excess > 0.02 && attempt < 3) {
			printf("    over by more than 0.02 s: again\n");
			attempt++;
			i--;
			continue;
		}
		ASSERT_DBL(excess, <=, 0.02);
		ASSERT_UINT(r.nr_processes, ==, 1);
		ASSERT_TRUE(r.usage_ns > 0);
		/*
		 * The process wants more than its quota and is throttled.
		 * It wants about 0.5 CPU alone; beside a 2-thread busy hog
		 * it got 0.27 (each thread it makes waits for cfsbw, which
		 * waits for a CPU), at a load average of 13 0.18-0.45
		 * (2026-12-04): at 0.5 CPU it was then never throttled,
		 * rightly, so the quota is 0.1 CPU.  A run that the machine
		 * kept from its quota even so is made again, 3 times at
		 * most in all, then the test fails.
		 */
		if (r.nr_throttled == 0 && attempt < 3) {
			printf("    not throttled: again\n");
			attempt++;
			i--;
			continue;
		}
		ASSERT_UINT(r.nr_throttled, >=, 1);
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
	host_run_limited(args, &r);
	report("upstream, 2 threads, 20 %", &r, 0.2);
	CHECK_LIMIT(r, 0.020, 0.2, 0.04, 0.04);
	ASSERT_UINT(r.busy_threads, ==, 2);
}

/*
 * Upstream with a burst (R13's + burst): a server that sleeps between
 * requests leaves quota unused, and the kernel carries it over, since a
 * runqueue that goes idle gives its runtime back to the pool at once.
 * `workload server 10 10 20` (the same seeded requests every run, 0.11
 * CPU on average) under 26 ms and a 26 ms burst per 100 ms: before the
 * driver returned a sleeping process's runtime at the period's end, it
 * was throttled in 19 of 138 and 20 of 141 periods (14%); after, 14 of
 * 164 and 10 of 161 (6 to 9%); in the kernel's cgroup, over 60 s, 27 of
 * 529 (5%).  Up to 3 tries: a loaded machine delays the server's work.
 */
TEST(burst_carries_over_for_a_sleeping_server, "R13 section-6")
{
	const char *args[] = {"--policy", "upstream", "--quota", "26ms",
			      "--burst", "26ms", "--period", "100ms", "--",
			      host_workload(), "server", "10", "10", "20",
			      NULL};
	struct run_result r;
	double share = 1;
	for (int tries = 0; tries < 3 && share > 0.11; tries++) {
		host_run(args, &r);
		ASSERT_INT(r.exit_code, ==, 0);
		ASSERT_UINT(r.nr_periods, >=, 100);
		share = (double)r.nr_throttled / (double)r.nr_periods;
		printf("    throttled in %llu of %llu periods; %s",
		       (unsigned long long)r.nr_throttled,
		       (unsigned long long)r.nr_periods, r.out);
	}
	ASSERT_TRUE(share <= 0.11);
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
	  TEST_ENTRY(burst_carries_over_for_a_sleeping_server)
	  TEST_ENTRY(host_refuses_the_hard_limits_policy))
