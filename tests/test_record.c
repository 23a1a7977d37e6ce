/*
 * test_record.c - cfsbw record: what it writes against what the recorded
 * processes did, the trace format's rules, exit status, bad flags, and
 * recording without root.
 *
 * Tolerances, measured on the 2-vCPU development VM at load averages of 2
 * to 15 (other builds and tests running):
 *  - the runs of a trace add up to the recorded tree's CPU time (wait4
 *    rusage) within 0.2% for busy threads and 0.9% for a fork-heavy tree
 *    (the last microseconds of an exiting process come after its EXIT
 *    record); asserted within 3% + 5 ms;
 *  - a 5 ms burst of CPU shows as 5.0 ms of runs (median over 30 to 50
 *    bursts, 5.00 to 5.03 ms measured), asserted within 0.5 ms;
 *  - a 15 ms sleep shows as a gap of 15 ms plus the wait for a CPU after
 *    the wake-up, which the recorder does not see: the shortest gap
 *    15.07 ms, the 10th percentile 15.08 to 16.3 ms and the median 18.9 ms
 *    at load averages of 20 (15.06 / 15.08 / 15.3 ms idle); asserted: the
 *    shortest in [15, 16] ms, in one of 3 tries.
 * Where the kernel refuses perf events (perf_event_paranoid 3, or a
 * container whose seccomp filter blocks perf_event_open), cfsbw record
 * reads CPU clocks every millisecond instead: the tests check that it says
 * so, and allow that millisecond in times (as the --poll test does).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "test_host.h"

#define MAX_TIDS 256

struct rec_run {
	int status, exit_code;
	char err[4096];
	char out[4096];
};

/* Run `cfsbw record args...` as the user uid (-1: as we are). */
static void record(const char *const args[], uid_t uid, const char *bin,
		   struct rec_run *r)
{
	char ep[] = "/tmp/cfsbw-test-rec-errXXXXXX";
	char op[] = "/tmp/cfsbw-test-rec-outXXXXXX";
	int efd = mkstemp(ep), ofd = mkstemp(op);
	memset(r, 0, sizeof *r);
	const char *argv[32] = {bin, "record"};
	size_t n = 2;
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(efd, 2);
		dup2(ofd, 1);
		if (uid != (uid_t)-1 &&
		    (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		     setresuid(uid, uid, uid)))
			_exit(99);
		execv(bin, (char *const *)(uintptr_t)argv);
		_exit(98);
	}
	waitpid(pid, &r->status, 0);
	r->exit_code = WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status)
					       : WEXITSTATUS(r->status);
	close(efd);
	close(ofd);
	slurp(ep, r->err, sizeof r->err);
	slurp(op, r->out, sizeof r->out);
	unlink(ep);
	unlink(op);
}

/* A trace, read and checked against the format's rules (TRACE-FORMAT). */
#define MAX_RUNS 20000
struct trace {
	char why[256]; /* empty: well formed */
	unsigned nr_threads, nr_exits, nr_runs;
	int tids[MAX_TIDS], pids[MAX_TIDS];
	int64_t last_end[MAX_TIDS];
	bool exited[MAX_TIDS];
	int64_t run_total_ns, end_ns;
	double counted_ns; /* its comment's count of the kernel's; -1: none */
	/* the runs of one thread, for cycle checks */
	int watch_tid;
	unsigned nr_watched;
	int64_t w_start[MAX_RUNS], w_end[MAX_RUNS];
	bool w_preempted[MAX_RUNS];
};

static int tid_index(struct trace *t, int tid)
{
	for (unsigned i = 0; i < t->nr_threads && i < MAX_TIDS; i++)
		if (t->tids[i] == tid && !t->exited[i])
			return (int)i;
	return -1;
}

static void read_trace(const char *path, struct trace *t)
{
	static char line[512];
	int watch = t->watch_tid;
	memset(t, 0, sizeof *t);
	t->watch_tid = watch;
	t->counted_ns = -1;
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(t->why, sizeof t->why, "%s: %s", path, strerror(errno));
		return;
	}
	unsigned no = 0;
	int64_t last_start = 0;
	bool ended = false;
	while (fgets(line, sizeof line, f)) {
		no++;
		int tid, pid;
		long long a, b;
		char comm[64], p[8];
		int n;
		if (no == 1) {
			if (strcmp(line, "cfsbw-trace 1\n"))
				snprintf(t->why, sizeof t->why,
					 "line 1 is not 'cfsbw-trace 1'");
		} else if (line[0] == '#') {
			if (!strncmp(line, "# the kernel counted ", 21))
				t->counted_ns = strtod(line + 21, NULL);
			continue;
		} else if (ended) {
			snprintf(t->why, sizeof t->why, "line %u after end", no);
		} else if (sscanf(line, "thread %d %d %63s", &tid, &pid, comm) ==
			   3) {
			if (t->nr_threads < MAX_TIDS) {
				t->tids[t->nr_threads] = tid;
				t->pids[t->nr_threads] = pid;
				t->last_end[t->nr_threads] = 0;
			}
			t->nr_threads++;
		} else if ((n = sscanf(line, "run %d %lld %lld %7s", &tid, &a,
				       &b, p)) >= 3) {
			int i = tid_index(t, tid);
			if (i < 0 && t->nr_threads < MAX_TIDS)
				snprintf(t->why, sizeof t->why,
					 "line %u: run of undeclared %d", no,
					 tid);
			else if (b < a || a < last_start ||
				 (i >= 0 && a < t->last_end[i]))
				snprintf(t->why, sizeof t->why,
					 "line %u: out of order: %.200s", no,
					 line);
			if (i >= 0)
				t->last_end[i] = b;
			last_start = a;
			t->nr_runs++;
			t->run_total_ns += b - a;
			if (tid == t->watch_tid && t->nr_watched < MAX_RUNS) {
				t->w_start[t->nr_watched] = a;
				t->w_end[t->nr_watched] = b;
				t->w_preempted[t->nr_watched++] =
					n == 4 && !strcmp(p, "P");
			}
		} else if (sscanf(line, "exit %d %lld", &tid, &a) == 2) {
			int i = tid_index(t, tid);
			if (i >= 0) {
				if (a < t->last_end[i])
					snprintf(t->why, sizeof t->why,
						 "line %u: exit before its last"
						 " run ends", no);
				t->exited[i] = true;
			}
			t->nr_exits++;
		} else if (sscanf(line, "end %lld", &a) == 1) {
			t->end_ns = a;
			ended = true;
		} else {
			snprintf(t->why, sizeof t->why, "line %u: unknown: %.200s",
				 no, line);
		}
		if (t->why[0])
			break;
	}
	fclose(f);
	if (!t->why[0] && !ended)
		snprintf(t->why, sizeof t->why, "no end line");
}

/* Can this process record itself?  The kernel's answer, asked as
 * cfsbw asks it. */
static bool kernel_allows_recording(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;
	a.sample_id_all = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.inherit = 1;
	long fd = syscall(SYS_perf_event_open, &a, 0, 0, -1, 0);
	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

/*
 * Where the kernel refuses perf events, cfsbw record says why and reads
 * CPU clocks every millisecond instead: r's stderr must say so, and the
 * checks below allow that millisecond.
 */
static bool says_it_polled(const struct rec_run *r)
{
	return strstr(r->err, "perf_event_open") != NULL &&
	       strstr(r->err, "every 1 ms instead") != NULL;
}

/* Slack for times: none with perf events, 1 ms when polling. */
static int64_t time_slack_ns(bool poll)
{
	return poll || !kernel_allows_recording() ? 1000000 : 0;
}

static int median_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t median(int64_t *v, unsigned n)
{
	qsort(v, n, sizeof *v, median_cmp);
	return n ? v[n / 2] : 0;
}

/*
 * CPU time of every thread of pid so far, in ns: its process CPU clock,
 * which the kernel brings up to date for a thread on a CPU as it reads
 * it.  (schedstat is not: a running thread's lags up to a tick, 4 ms at
 * HZ 250, which made a spinning pair look up to 8 ms short.)
 */
static int64_t threads_cpu_ns(pid_t pid)
{
	clockid_t clock;
	struct timespec ts;
	if (clock_getcpuclockid(pid, &clock) || clock_gettime(clock, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * The machine's stolen time so far, in ns (/proc/stat, the sum over CPUs
 * in 1/USER_HZ s).  A virtual CPU's hypervisor may run something else
 * while a thread is on it: the thread's CPU clock leaves that time out
 * (paravirt steal accounting), the switch records it runs between do not.
 */
static int64_t steal_ns(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = {0};
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) : 0;
	if (f)
		fclose(f);
	if (n != 8)
		return -1;
	return (int64_t)v[7] * (1000000000 / sysconf(_SC_CLK_TCK));
}

/* The recorded tree's CPU time that `workload measure` printed; -1 if
 * it printed none. */
static double tree_cpu_ns(const struct rec_run *r)
{
	const char *p = strstr(r->out, "tree_cpu_us ");
	return p ? strtod(p + 12, NULL) * 1e3 : -1;
}

/* Read the trace at path; unless it is ill-formed, its runs against the
 * tree's CPU time: within 3% + slack_ns, else why in t->why. */
static void runs_against_tree(const char *path, const struct rec_run *r,
			      struct trace *t, double slack_ns)
{
	t->watch_tid = 0;
	read_trace(path, t);
	double cpu = tree_cpu_ns(r), got = (double)t->run_total_ns;
	if (!t->why[0] && (cpu < 0 || got < cpu - 0.03 * cpu - slack_ns ||
			   got > cpu + 0.03 * cpu + slack_ns))
		snprintf(t->why, sizeof t->why, "runs add up to %.0f ns, the "
			 "tree's CPU time is %.0f ns", got, cpu);
}

/*
 * What cfsbw record says the kernel counted for the command's processes
 * (its wait4), against `workload measure`'s own count of the same tree:
 * measure's wait4 of its child plus its own rusage, so cfsbw's figure is
 * that and measure's exit after it (under 1 ms over 6 runs, gcc and ASan
 * builds, 2026-12-07: allowed 2 ms and 1%).  And the share it prints is
 * the trace's runs over it, in the summary and in the trace's comment (to
 * 0.2 points: it prints one decimal, and the count to the millisecond).
 * 0, or why in why.
 */
static int kernel_count_told(const struct rec_run *r, const struct trace *t,
			     char *why, size_t n)
{
	const char *p = strstr(r->err, "% of the ");
	const char *q = strstr(r->err, " s the kernel counted)");
	double tree = tree_cpu_ns(r);
	if (!p || !q || q < p || tree < 0)
		return snprintf(why, n, "no kernel count told:\n%s", r->err);
	double counted = strtod(p + 9, NULL) * 1e9;
	const char *s = p;
	while (s > r->err && s[-1] != '(')
		s--;
	double pct = strtod(s, NULL);
	double want = 100.0 * (double)t->run_total_ns / counted;
	if (counted < tree - 1e6 || counted > tree * 1.01 + 2e6 ||
	    pct < want - 0.2 || pct > want + 0.2)
		return snprintf(why, n, "the kernel counted %.0f ns and %.1f%% "
				"recorded, said cfsbw; measure %.0f ns, runs "
				"%.1f%%", counted, pct, tree, want);
	if (t->counted_ns < counted - 1e6 || t->counted_ns > counted + 1e6)
		return snprintf(why, n, "the trace's comment says %.0f ns, the "
				"summary %.0f", t->counted_ns, counted);
	return 0;
}

/* One trace file per test process: several `make test` may run at once
 * on a shared machine. */
static const char *trace_file(void)
{
	static char path[64];
	if (!path[0])
		snprintf(path, sizeof path, "/tmp/cfsbw-test-record-%d.trace",
			 (int)getpid());
	return path;
}

TEST(runs_add_up_to_the_cpu_time, "record")
{
	/* 2 busy threads for 1 s, then a tree of short-lived processes */
	static const char *const modes[][6] = {
		{"spin", "1", "2", NULL},
		{"forky", "2", "20", "0.6", NULL},
	};
	for (size_t m = 0; m < 2; m++) {
		const char *args[16] = {"-o", trace_file(), "--",
					host_workload(), "measure",
					host_workload()};
		size_t n = 6;
		for (size_t k = 0; modes[m][k]; k++)
			args[n++] = modes[m][k];
		args[n] = NULL;
		struct rec_run r;
		record(args, (uid_t)-1, host_bin(), &r);
		if (!kernel_allows_recording())
			ASSERT_TRUE(says_it_polled(&r));
		ASSERT_INT(r.exit_code, ==, 0);
		static struct trace t;
		/*
		 * Each process's runs miss a little of its CPU time: about
		 * 0.6-0.8 ms per process, measured (gcc build, 2026-12-05:
		 * 8, 28, 34, 36 and 82 children short by 12.0, 21.6, 22.8,
		 * 25.0 and 54.7 ms; the sanitizer build under load by 28 and
		 * 41 ms for about 35), part of starting or ending a process
		 * that its switch records do not cover; not found yet.  So
		 * 1.5 ms a thread beside the 3% and the 5 ms; a child
		 * missing altogether is caught by the exits below.
		 */
		read_trace(trace_file(), &t);
		double per_thread_ns = 1.5e6 * (double)t.nr_threads;
		runs_against_tree(trace_file(), &r, &t,
				  5e6 + per_thread_ns +
					  5.0 * (double)time_slack_ns(false));
		ASSERT_STR(t.why, "");
		char why[4352] = "";
		kernel_count_told(&r, &t, why, sizeof why);
		ASSERT_STR(why, "");
		ASSERT_UINT(t.nr_exits, ==, t.nr_threads);
		if (m == 0)
			ASSERT_UINT(t.nr_threads, ==, 3); /* measure, 2 threads */
		else
			ASSERT_UINT(t.nr_threads, >=, 4);
	}
	unlink(trace_file());
}

/* Run lengths and sleep lengths against a known cycle. */
/*
 * One recording of `workload bursty 5 15 1`: 0 if its bursts and sleeps
 * are as recorded as they ran, else what is wrong in why.
 */
static int duty_cycle_once(bool poll, char *why, size_t n)
{
	const char *with_perf[] = {"-o", trace_file(), "--", host_workload(),
				   "bursty", "5", "15", "1", NULL};
	const char *polled[] = {"--poll", "-o", trace_file(), "--",
				host_workload(), "bursty", "5", "15", "1",
				NULL};
	const char *const *args = poll ? polled : with_perf;
	/* with --poll, times are within a millisecond */
	int64_t slack = time_slack_ns(poll);
	static struct rec_run r;
	static struct trace t;
	static int64_t burst[MAX_RUNS], gap[MAX_RUNS];
	record(args, (uid_t)-1, host_bin(), &r);
	t.watch_tid = 0;
	read_trace(trace_file(), &t);
	if (r.exit_code || t.why[0] || t.nr_threads != 1)
		return snprintf(why, n, "status %d, %u threads: %s",
				r.exit_code, t.nr_threads, t.why);
	t.watch_tid = t.tids[0];
	read_trace(trace_file(), &t);
	/* a burst: the runs up to one that blocked; a sleep: the gap after */
	unsigned nb = 0, ng = 0;
	int64_t cpu = 0;
	for (unsigned i = 0; i < t.nr_watched; i++) {
		cpu += t.w_end[i] - t.w_start[i];
		if (t.w_preempted[i])
			continue;
		burst[nb++] = cpu;
		cpu = 0;
		if (i + 1 < t.nr_watched)
			gap[ng++] = t.w_start[i + 1] - t.w_end[i];
	}
	/* as many bursts as the workload counted (it prints "bursts N"),
	 * plus the stretch from the last sleep to its exit */
	const char *bp = strstr(r.out, "bursts ");
	unsigned want = bp ? (unsigned)strtoul(bp + 7, NULL, 10) : 0;
	/* polled, two bursts merge when the poller itself waited out a
	 * whole sleep for the CPU (2 of 20 under ASan at load 17) */
	unsigned least = slack ? want - want / 5 : want;
	if (want < 5 || nb < least || nb > want + 1 || ng < 5)
		return snprintf(why, n, "%u bursts recorded, %u done", nb,
				want);
	int64_t b = median(burst, nb);
	qsort(gap, ng, sizeof *gap, median_cmp);
	/* A gap is the sleep plus the wait for a CPU after the wake-up:
	 * never under 15 ms (nanosleep), and on time at least once. */
	/* polled, the poller waits for the CPU too, and a run it sees late
	 * is placed late: sleeps look shorter or longer by milliseconds on
	 * a loaded machine (at load 23: least 6.7 to 12.2 ms, median 15.3 to
	 * 19.0 ms), so the median, within 1 ms below and the wake-up's wait
	 * above (as for perf: 18.9 ms at load 20) */
	int64_t g = slack ? gap[ng / 2] : gap[0];
	int64_t g_max = slack ? 21000000 : 16000000;
	if (b < 4500000 - slack || b > 5500000 + slack ||
	    g < 15000000 - slack || g > g_max)
		return snprintf(why, n, "median burst %lld ns, shortest sleep "
				"%lld ns", (long long)b, (long long)g);
	return 0;
}

TEST(runs_and_sleeps_follow_the_duty_cycle, "record")
{
	/* the shortest sleep depends on one wake-up being on time: on a
	 * loaded machine, up to 3 tries */
	char why[512] = "";
	int tries = 0;
	while (tries++ < 3 && duty_cycle_once(false, why, sizeof why))
		;
	if (tries > 3)
		TEST_FAIL_AT("3 tries: %s", why);
	unlink(trace_file());
}

/*
 * The fallback where the kernel refuses perf events, forced with --poll:
 * CPU clocks read every millisecond.  Measured: runs add up to the tree's
 * CPU time within -1.4 to +2.7% (busy threads, a fork-heavy tree), bursts
 * of 5 ms as with perf, sleeps
 * of 15 ms with a median of 15.3 to 19.0 ms at load 23; asserted within
 * 3% + 10 ms, and the cycle as in duty_cycle_once.
 */
TEST(polling_fallback_within_a_millisecond, "record")
{
	const char *args[] = {"--poll", "-o", trace_file(), "--",
			      host_workload(), "measure", host_workload(),
			      "spin", "1", "2", NULL};
	struct rec_run r;
	record(args, (uid_t)-1, host_bin(), &r);
	ASSERT_INT(r.exit_code, ==, 0);
	static struct trace t;
	runs_against_tree(trace_file(), &r, &t, 1e7);
	ASSERT_STR(t.why, "");
	ASSERT_UINT(t.nr_threads, ==, 3);
	char why[512] = "";
	int tries = 0;
	while (tries++ < 3 && duty_cycle_once(true, why, sizeof why))
		;
	if (tries > 3)
		TEST_FAIL_AT("3 tries: %s", why);
	unlink(trace_file());
}

TEST(exit_status_passes_through, "record cli")
{
	static const struct {
		const char *mode, *arg;
		int want;
	} cases[] = {{"exit", "0", 0}, {"exit", "7", 7}, {"kill", "9", 137}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *args[] = {"-o", trace_file(), "--", host_workload(),
				      cases[i].mode, cases[i].arg, NULL};
		struct rec_run r;
		record(args, (uid_t)-1, host_bin(), &r);
		ASSERT_INT(r.exit_code, ==, cases[i].want);
		/* one thread, said in the singular */
		if (i == 0)
			ASSERT_TRUE(strstr(r.err, "record: 1 thread, ") != NULL);
	}
	const char *none[] = {"-o", trace_file(), "--", "/nonexistent/cmd", NULL};
	struct rec_run r;
	record(none, (uid_t)-1, host_bin(), &r);
	ASSERT_INT(r.exit_code, ==, 127);
	ASSERT_TRUE(strstr(r.err, "/nonexistent/cmd") != NULL);
	unlink(trace_file());
}

TEST(bad_flags_are_named, "record cli")
{
	static const struct {
		const char *args[6];
		const char *says;
	} cases[] = {
		{{NULL}, "no command"},
		{{"--duration", "abc", "--", "true", NULL}, "--duration abc"},
		{{"--duration", "0", "--", "true", NULL}, "--duration 0"},
		{{"--duration", NULL}, "--duration needs"},
		{{"--pid", "0", NULL}, "--pid 0"},
		{{"--pid", "12x", NULL}, "--pid 12x"},
		{{"--pid", "1", "true", NULL}, "--pid takes no command"},
		{{"--frobnicate", NULL}, "unknown option '--frobnicate'"},
		{{"--poll", NULL}, "no command"},
		{{"-o", "/nonexistent/dir/t", "--", "true", NULL},
		 "-o /nonexistent/dir/t"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rec_run r;
		record(cases[i].args, (uid_t)-1, host_bin(), &r);
		ASSERT_INT(r.exit_code, ==, 2);
		if (!strstr(r.err, cases[i].says)) {
			TEST_FAIL_AT("'%s' not in: %s", cases[i].says, r.err);
			return;
		}
	}
	const char *gone[] = {"--pid", "999999999", NULL};
	struct rec_run r;
	record(gone, (uid_t)-1, host_bin(), &r);
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_TRUE(strstr(r.err, "999999999") != NULL);
}

/* --pid: a running process, for a time; it goes on afterwards. */
TEST(records_a_running_process_for_a_time, "record")
{
	pid_t pid = fork();
	if (pid == 0) {
		execl(host_workload(), "workload", "spin", "3", "2",
		      (char *)NULL);
		_exit(98);
	}
	char ps[16];
	snprintf(ps, sizeof ps, "%d", (int)pid);
	struct timespec settle = {0, 100000000};
	nanosleep(&settle, NULL); /* its threads exist */
	const char *args[] = {"-o", trace_file(), "--duration", "500ms",
			      "--pid", ps, NULL};
	struct rec_run r;
	double t0 = host_now_s();
	int64_t cpu0 = threads_cpu_ns(pid), steal0 = steal_ns();
	record(args, (uid_t)-1, host_bin(), &r);
	int64_t cpu1 = threads_cpu_ns(pid), cpu = cpu1 - cpu0;
	int64_t stolen = steal_ns() - steal0;
	double wall = host_now_s() - t0;
	bool alive = kill(pid, 0) == 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (!kernel_allows_recording())
		ASSERT_TRUE(says_it_polled(&r));
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_TRUE(alive);
	ASSERT_TRUE(cpu0 >= 0 && cpu1 >= 0 && steal0 >= 0);
	ASSERT_TRUE(wall < 2.0);
	static struct trace t;
	t.watch_tid = 0;
	read_trace(trace_file(), &t);
	ASSERT_STR(t.why, "");
	ASSERT_UINT(t.nr_threads, ==, 2);
	ASSERT_INT(t.pids[0], ==, pid);
	ASSERT_INT(t.pids[1], ==, pid);
	/* at least the 500 ms asked, at most as long as cfsbw ran (it may
	 * get the CPU late on a loaded machine: 560 ms at load 20) */
	ASSERT_INT(t.end_ns, >=, 500000000);
	ASSERT_INT(t.end_ns, <=, (int64_t)(wall * 1e9));
	/* what the threads ran while cfsbw recorded, at most what they ran
	 * from before it started to after it ended, with the time the
	 * hypervisor stole meanwhile (to 10 ms: 1/USER_HZ; 20 ms of steal
	 * beside a busy loop gave 2.3 ms over the CPU clock); at least a
	 * quarter of that in the share of the time the trace covers (cfsbw's
	 * start and exit take the rest, longer on a loaded machine) */
	ASSERT_INT(t.run_total_ns, <=, cpu + stolen + 11000000);
	ASSERT_NEAR((double)t.run_total_ns,
		    (double)cpu * (double)t.end_ns / (wall * 1e9),
		    0.75 * (double)cpu * (double)t.end_ns / (wall * 1e9));
	unlink(trace_file());
}

/* Without root: as "nobody" when the test runs as root. */
TEST(records_without_root, "record")
{
	char dir[] = "/tmp/cfsbw-test-rec-XXXXXX";
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	chmod(dir, 0777);
	char bin[64], prog[64], out[64];
	snprintf(bin, sizeof bin, "%s/cfsbw", dir);
	snprintf(prog, sizeof prog, "%s/workload", dir);
	snprintf(out, sizeof out, "%s/t.trace", dir);
	/* copies nobody can read, in a directory nobody can write */
	char cmd[16384];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && cp '%s' '%s' && chmod 755 "
		 "'%s' '%s'", host_bin(), bin, host_workload(), prog, bin,
		 prog);
	ASSERT_INT(system(cmd), ==, 0);
	uid_t uid = geteuid() == 0 ? 65534 : (uid_t)-1;
	const char *args[] = {"-o", out, "--", prog, "measure", prog, "spin",
			      "0.3", NULL};
	struct rec_run r;
	record(args, uid, bin, &r);
	static struct trace t;
	runs_against_tree(out, &r, &t, 5e6 + 5.0 * (double)time_slack_ns(false));
	unlink(out);
	unlink(bin);
	unlink(prog);
	rmdir(dir);
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_STR(t.why, "");
}

TEST_MAIN(TEST_ENTRY(runs_add_up_to_the_cpu_time)
	  TEST_ENTRY(runs_and_sleeps_follow_the_duty_cycle)
	  TEST_ENTRY(polling_fallback_within_a_millisecond)
	  TEST_ENTRY(exit_status_passes_through)
	  TEST_ENTRY(bad_flags_are_named)
	  TEST_ENTRY(records_a_running_process_for_a_time)
	  TEST_ENTRY(records_without_root))
