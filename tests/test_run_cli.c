/*
 * test_run_cli.c - cfsbw run as a command: exit status, signals, never a
 * process left stopped, and every invalid flag value (R2).
 */
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>

#include "harness.h"
#include "test_host.h"

TEST(exit_status_is_the_commands, "cli")
{
	static const struct {
		const char *mode, *arg;
		int want;
	} cases[] = {
		{"exit", "0", 0},   {"exit", "7", 7},    {"exit", "255", 255},
		{"kill", "9", 137}, {"kill", "15", 143}, {"kill", "10", 138},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *args[] = {"--cpus", "0.5", "--", host_workload(),
				      cases[i].mode, cases[i].arg, NULL};
		struct run_result r;
		host_run(args, &r);
		ASSERT_INT(r.exit_code, ==, cases[i].want);
	}
	const char *args[] = {"--", "/nonexistent/cmd", NULL};
	struct run_result r;
	host_run(args, &r);
	ASSERT_INT(r.exit_code, ==, 127);
	ASSERT_TRUE(strstr(r.err, "/nonexistent/cmd") != NULL);
	/* --stats reports it too, with nothing governed, not an empty file. */
	ASSERT_TRUE(r.stats_written);
	ASSERT_INT(r.stats_exit_status, ==, 127);
	ASSERT_UINT(r.nr_processes, ==, 0);
	ASSERT_UINT(r.usage_ns, ==, 0);
	/* A process cfsbw cannot take in: status 1, and no report at all. */
	const char *gone[] = {"--pid", "999999999", NULL};
	host_run(gone, &r);
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_TRUE(!r.stats_written);
}

/* Run cfsbw run args, send cfsbw sig after delay_ms, collect the result. */
/*
 * Start cfsbw with args, send it sig once the workload's trap is in place
 * (it creates the file WORKLOAD_TRAP_READY names; at most 20 s) and
 * delay_ms more, then wait for it; returns the seconds from the signal to
 * cfsbw's end.  A fixed delay alone raced the
 * workload's start: at 10 % of a CPU on a loaded machine a sanitizer
 * build had not installed its handler 400 ms in.
 */
static double run_then_signal(const char *const args[], long delay_ms,
			      int sig, struct run_result *r)
{
	char sp[128], ep[128], op[128], ready[64];
	snprintf(ready, sizeof ready, "/tmp/cfsbw-test-%d-ready", (int)getpid());
	unlink(ready);
	setenv("WORKLOAD_TRAP_READY", ready, 1);
	memset(r, 0, sizeof *r);
	double t0 = host_now_s();
	pid_t pid = host_start(args, sp, ep, op);
	unsetenv("WORKLOAD_TRAP_READY");
	struct timespec ms10 = {0, 10000000};
	for (int i = 0; i < 2000 && access(ready, F_OK) != 0; i++)
		nanosleep(&ms10, NULL);
	unlink(ready);
	struct timespec wait = {delay_ms / 1000, (delay_ms % 1000) * 1000000};
	nanosleep(&wait, NULL);
	double t_sig = host_now_s() - t0;
	kill(pid, sig);
	host_finish(pid, t0, sp, ep, op, r);
	return r->wall_s - t_sig;
}

/*
 * SIGINT, SIGTERM and SIGHUP sent to cfsbw while its command is held
 * stopped most of the time (10 % of a CPU): the command is resumed, gets the
 * signal, handles it, and its exit status is cfsbw's.
 */
TEST(signals_resume_and_reach_the_command, "R10 cli")
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		char signo[8];
		snprintf(signo, sizeof signo, "%d", sigs[i]);
		const char *args[] = {"--quota", "10ms", "--period", "100ms",
				      "--", host_workload(), "trap", signo,
				      "10", NULL};
		struct run_result r;
		double after = run_then_signal(args, 350, sigs[i], &r);
		char want[32];
		snprintf(want, sizeof want, "caught %d", sigs[i]);
		ASSERT_STR(r.out[0] ? strtok(r.out, "\n") : "", want);
		ASSERT_INT(r.exit_code, ==, 3);
		/* Not the 10 s the trap spins: ended by the signal. */
		ASSERT_TRUE(after < 2.0);
	}
}

/* Every process below pid (from the children files), into out. */
static size_t descendants(int pid, int *out, size_t max, size_t n)
{
	char path[96], list[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
	slurp(path, list, sizeof list);
	char *save = NULL;
	for (char *tok = strtok_r(list, " \n", &save); tok && n < max;
	     tok = strtok_r(NULL, " \n", &save)) {
		int child = atoi(tok);
		out[n++] = child;
		n = descendants(child, out, max, n);
	}
	return n;
}

/* Keeps, in place, the pids of pids[0..n) whose command is the workload. */
static size_t workloads_only(int *pids, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		char path[64], comm[32];
		snprintf(path, sizeof path, "/proc/%d/comm", pids[i]);
		slurp(path, comm, sizeof comm);
		if (strcmp(comm, "workload\n") == 0)
			pids[kept++] = pids[i];
	}
	return kept;
}

/* Threads of pid that are stopped ('t' or 'T') right now. */
static int stopped_threads(int pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "ls %s 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	if (!f)
		return 0;
	int tid, stopped = 0;
	while (fscanf(f, "%d", &tid) == 1) {
		char s = proc_state(pid, tid);
		stopped += s == 't' || s == 'T';
	}
	pclose(f);
	return stopped;
}

/*
 * kill -9 of cfsbw while it holds processes stopped, or a crash (SIGSEGV):
 * the kernel detaches the tracees and ends their ptrace stops (a mechanism
 * that does not need cfsbw to run).  Idle parent with 2 busy children, and
 * 4 busy threads, 3 trials each; each trial first checks that something
 * was held stopped.
 */
TEST(kill_9_leaves_nothing_stopped, "R10 SPEC-7")
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* The crash trials must not leave core files behind. */
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);
	static const char *const workloads[][3] = {
		{"procs", "2", "10"},
		{"spin", "10", "4"},
	};
	for (int trial = 0; trial < 6; trial++) {
		const char *const *w = workloads[trial % 2];
		/* 1 % of a CPU: held even when a loaded machine gives the
		 * group only a few % (0.06 CPU at a load average of 18). */
		const char *args[] = {"--quota", "1ms", "--period", "100ms",
				      "--", host_workload(), w[0], w[1], w[2],
				      NULL};
		char sp[128], ep[128], op[128];
		struct run_result r;
		memset(&r, 0, sizeof r);
		double t0 = host_now_s();
		pid_t pid = host_start(args, sp, ep, op);
		struct timespec ms20 = {0, 20000000};
		int pids[64];
		size_t n = 0;
		int seen_stopped = 0;
		/* Up to 1 s: the group is stopped 99 % of the time. */
		for (int i = 0; i < 50 && !seen_stopped; i++) {
			nanosleep(&ms20, NULL);
			n = descendants(pid, pids, 64, 0);
			for (size_t k = 0; k < n; k++)
				seen_stopped += stopped_threads(pids[k]);
		}
		n = descendants(pid, pids, 64, 0);
		int sig = trial < 4 ? SIGKILL : SIGSEGV;
		kill(pid, sig);
		host_finish(pid, t0, sp, ep, op, &r);
		/* A sanitizer build reports the crash and exits 1 instead. */
		if (sig == SIGKILL)
			ASSERT_INT(r.exit_code, ==, 128 + sig);
		else
			ASSERT_INT(r.exit_code, !=, 0);
		nanosleep(&ms20, NULL);
		nanosleep(&ms20, NULL);
		int left = 0;
		for (size_t k = 0; k < n; k++)
			left += stopped_threads(pids[k]);
		for (size_t k = 0; k < n; k++)
			kill(pids[k], SIGKILL);
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
		ASSERT_TRUE(n >= 1);
		ASSERT_TRUE(seen_stopped > 0);
		ASSERT_INT(left, ==, 0);
	}
	/* The orphans were ours to reap; all of them are gone by now. */
	for (int i = 0; i < 100 && waitpid(-1, NULL, __WALL) > 0; i++)
		;
}

/*
 * R2: every invalid value is rejected by the file interface (or, for the
 * command's own flags, by the command), with status 2, the flag and the
 * value in the message, and the command never started.
 */
TEST(invalid_values_exit_2_naming_flag_and_value, "R2")
{
	static const struct {
		const char *flag, *value, *why;
	} bad[] = {
		{"--quota", "500", "Invalid argument"},
		{"--quota", "999us", "Invalid argument"},
		{"--quota", "0", "Invalid argument"},
		{"--quota", "abc", "Invalid argument"},
		{"--quota", "5000x", "Invalid argument"},
		{"--quota", "1.5us", "Invalid argument"},
		{"--quota", "17592186044416", "Invalid argument"},
		{"--quota", "18446744073709551615", "out of range"},
		{"--quota", "", "Invalid argument"},
		{"--period", "0", "Invalid argument"},
		{"--period", "999", "Invalid argument"},
		{"--period", "1000001", "Invalid argument"},
		{"--period", "2s", "Invalid argument"},
		{"--period", "100ms!", "Invalid argument"},
		{"--cpus", "0", "Invalid argument"},
		{"--cpus", "0.001", "Invalid argument"},
		{"--cpus", "abc", "Invalid argument"},
		{"--cpus", "1e300", "out of range"},
		{"--cpus", "-0", "Invalid argument"},   /* -0 is 0, not negative */
		{"--cpus", "-abc", "Invalid argument"}, /* not a negative number */
		{"--cpus", "0x1p-1", "Invalid argument"},
		{"--cpus", " 0.5", "Invalid argument"},
		{"--quota", "-abc", "Invalid argument"},
		{"--burst", "10ms", "upstream"},
		{"--slice", "0", "Invalid argument"},
		{"--slice", "x", "Invalid argument"},
		{"--policy", "fast", "Invalid argument"},
		{"--policy", "hardlimits", "Invalid argument"},
		{"--stat-interval", "abc", "Invalid argument"},
		{"--pid", "abc", "Invalid argument"},
		{"--pid", "0", "Invalid argument"},
		{"--pid", " 5", "Invalid argument"},
		{"--pid", "5,", "Invalid argument"},
		{"--pid", ",5", "Invalid argument"},
		{"--pid", "5,,6", "Invalid argument"},
		{"--pid", "5;6", "Invalid argument"},
		/* Checked before the command starts, not lost after it. */
		{"--stats", "/nonexistent/dir/s.json", "No such file"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *args[] = {bad[i].flag, bad[i].value, "--",
				      host_workload(), "spin", "5", NULL};
		if (!strcmp(bad[i].flag, "--pid"))
			args[2] = NULL; /* --pid takes no command */
		struct run_result r;
		host_run(args, &r);
		if (r.exit_code != 2 || !strstr(r.err, bad[i].flag) ||
		    !strstr(r.err, bad[i].value) || !strstr(r.err, bad[i].why))
			printf("    %s '%s': status %d, stderr: %s", bad[i].flag,
			       bad[i].value, r.exit_code, r.err);
		ASSERT_INT(r.exit_code, ==, 2);
		ASSERT_TRUE(strstr(r.err, bad[i].flag) != NULL);
		ASSERT_TRUE(strstr(r.err, bad[i].value) != NULL);
		ASSERT_TRUE(strstr(r.err, bad[i].why) != NULL);
		ASSERT_TRUE(r.wall_s < 1.0);
	}
	/* A burst above the quota, in the policy that has bursts. */
	const char *burst[] = {"--policy", "upstream", "--quota", "10ms",
			       "--burst", "20ms", "--", host_workload(),
			       "exit", "0", NULL};
	struct run_result r;
	host_run(burst, &r);
	ASSERT_INT(r.exit_code, ==, 2);
	ASSERT_TRUE(strstr(r.err, "--burst 20ms") != NULL);
	/* Usage errors. */
	const char *usage[][4] = {
		{"--bogus", "--", "true", NULL},
		{"--quota", NULL, NULL, NULL},
		{"--quota", "10ms", NULL, NULL},
		{"--quota", "10ms", "--cpus", "1"},
		{"--pid", "1", "true", NULL},
		{"--cpus", "--", "true", NULL}, /* "--" is not a value */
	};
	for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
		host_run(usage[i], &r);
		ASSERT_INT(r.exit_code, ==, 2);
		ASSERT_TRUE(strlen(r.err) > 0);
	}
}

/* R2: 'max' and any negative quota mean no limit; valid edges pass. */
TEST(unlimited_and_edge_values_accepted, "R2")
{
	static const char *const good[][2] = {
		{"--quota", "max"},       {"--quota", "-1"},
		{"--quota", "-5ms"},      {"--cpus", "max"},
		{"--quota", "1000"},      {"--quota", "1ms"},
		{"--period", "1000000"},  {"--period", "1ms"},
		{"--cpus", "2.5"},        {"--slice", "1"},
		{"--policy", "upstream"}, {"--stat-interval", "10ms"},
		{"--cpus", "-0.5"},       {"--cpus", ".5"},
		{"--cpus", "5e-1"},
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		const char *args[] = {good[i][0], good[i][1], "--",
				      host_workload(), "exit", "0", NULL};
		struct run_result r;
		host_run(args, &r);
		if (r.exit_code != 0)
			printf("    %s %s: %s", good[i][0], good[i][1], r.err);
		ASSERT_INT(r.exit_code, ==, 0);
	}
}

TEST(help_describes_the_options, "cli")
{
	const char *args[] = {"--help", NULL};
	struct run_result r;
	host_run(args, &r);
	ASSERT_INT(r.exit_code, ==, 0);
	static const char *const words[] = {
		"--quota", "--cpus",  "--period",        "--burst",   "--slice",
		"--policy", "--pid",  "--stats", "--stat-interval", "--wait-all"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		ASSERT_TRUE(strstr(r.out, words[i]) != NULL);
}

/* --stats writes every field the issue names; --stat-interval reports. */
TEST(stats_file_and_stat_interval, "R12 cli")
{
	/*
	 * 2 ms a period: at a load average of 18 (2026-12-04) a busy thread
	 * got 0.06-0.2 CPU, and at 20 ms it was throttled only twice in
	 * 0.5 s; it must be throttled for throttled_time to count.
	 */
	const char *args[] = {"--quota", "2ms", "--period", "100ms",
			      "--stat-interval", "100ms", "--",
			      host_workload(), "spin", "0.5", NULL};
	struct run_result r;
	host_run(args, &r);
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_UINT(r.nr_periods, >=, 4);
	ASSERT_UINT(r.nr_throttled, >=, 3);
	ASSERT_UINT(r.throttled_time, >, 0);
	/*
	 * R13: the start-up quota and one a period, each used in full, and
	 * what the process ran past its last throttle (unpaid_ns, charged to
	 * no period: CI's sanitizer build once went 0.64 ms past the pools
	 * and the 4 ms). Unpaid is one throttle's lateness: 0.6-4.8 ms over
	 * 12 sanitizer runs beside a fuzzer (2026-12-05), so 15 ms at most.
	 */
	printf("    usage %.2f ms over %u periods, unpaid %.2f ms\n",
	       (double)r.usage_ns / 1e6, (unsigned)r.nr_periods,
	       (double)r.unpaid_ns / 1e6);
	ASSERT_UINT(r.usage_ns, >=, 2000000 * r.nr_throttled * 97 / 100);
	ASSERT_UINT(r.unpaid_ns, <=, 15000000);
	ASSERT_UINT(r.usage_ns, <=,
		    2000000 * (r.nr_periods + 1) + r.unpaid_ns + 4000000);
	ASSERT_UINT(r.wall_ns, >, 400000000);
	ASSERT_UINT(r.self_cpu_ns, >, 0);
	/* About one report per 100 ms, each with cpu.stat's lines. */
	int reports = 0;
	for (const char *p = r.err; (p = strstr(p, "nr_throttled")); p++)
		reports++;
	ASSERT_INT(reports, >=, 3);
	ASSERT_TRUE(strstr(r.err, "usage") != NULL);
	ASSERT_TRUE(strstr(r.err, "throttled_time") != NULL);
	/* the one spinning process, counted in the singular */
	ASSERT_TRUE(strstr(r.err, ", 1 process, nr_periods") != NULL);
}

/*
 * Time one process was runnable, on a CPU or waiting for one, from its
 * schedstat, in ns (-1 when gone): what a stop (the user's or cfsbw's)
 * takes away, whatever else the machine runs.
 */
static long long runnable_ns(int pid)
{
	char path[64], buf[128];
	snprintf(path, sizeof path, "/proc/%d/schedstat", pid);
	slurp(path, buf, sizeof buf);
	long long run, wait;
	return sscanf(buf, "%lld %lld", &run, &wait) == 2 ? run + wait : -1;
}

/*
 * Job control is the user's, as without cfsbw: a SIGSTOP from outside
 * stops a governed process until SIGCONT (a group stop kept with
 * PTRACE_LISTEN, never ended by the period refresh), then it is governed
 * again.
 */
TEST(user_stop_and_continue_pass_through, "R10 cli")
{
	const char *args[] = {"--cpus", "0.5", "--period", "100ms", "--",
			      host_workload(), "spin", "2", NULL};
	char sp[128], ep[128], op[128];
	struct run_result r;
	memset(&r, 0, sizeof r);
	double t0 = host_now_s();
	pid_t pid = host_start(args, sp, ep, op);
	struct timespec ms = {0, 300000000};
	nanosleep(&ms, NULL);
	int child[4];
	size_t n = descendants(pid, child, 4, 0);
	ASSERT_TRUE(n >= 1);
	kill(child[0], SIGSTOP);
	nanosleep(&ms, NULL);
	long long a = runnable_ns(child[0]);
	nanosleep(&ms, NULL);
	long long b = runnable_ns(child[0]);
	kill(child[0], SIGCONT);
	nanosleep(&ms, NULL);
	long long c = runnable_ns(child[0]);
	host_finish(pid, t0, sp, ep, op, &r);
	printf("    runnable: +%lld us in 300 ms stopped; +%lld us in 300 ms "
	       "continued\n", (b - a) / 1000, (c - b) / 1000);
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_INT(b - a, <, 1000000);   /* stopped: under a ms runnable */
	/*
	 * Governed again at 0.5 CPU: runnable (running, or waiting for a
	 * CPU on a busy machine) about half the time, not stopped; at least
	 * a third, for the refresh that resumes it.
	 */
	ASSERT_INT(c - b, >, 100000000);
}

/*
 * --wait-all: the command exits at once, leaving a process with 2 busy
 * threads; cfsbw keeps it in the group (R5: its CPU is charged; R13: the
 * group stays within its quota) until it exits 1.5 s later, then exits
 * with the command's status.  Without the flag, cfsbw ends with the
 * command and what it left goes free (as timeout(1) does).
 */
TEST(wait_all_keeps_governing_what_the_command_leaves, "R5 R13 cli")
{
	const char *script = "\"$0\" spin 1.5 2 & exit 3";
	const char *args[] = {"--quota", "50ms", "--period", "100ms",
			      "--wait-all", "--", "sh", "-c", script,
			      host_workload(), NULL};
	struct run_result r;
	host_run(args, &r);
	printf("    --wait-all: %.3f s, usage %.3f s over %u periods "
	       "(%u throttled, %.1f ms), %u processes, held %.1f ms at most, "
	       "cfsbw waited %.1f ms\n",
	       r.wall_s, (double)r.usage_ns / 1e9, (unsigned)r.nr_periods,
	       (unsigned)r.nr_throttled, (double)r.throttled_time / 1e6,
	       (unsigned)r.nr_processes, (double)r.busy_max_held_ns / 1e6,
	       (double)r.cfsbw_wait_ns / 1e6);
	ASSERT_INT(r.exit_code, ==, 3);
	ASSERT_TRUE(r.wall_s >= 1.4);
	ASSERT_UINT(r.nr_processes, >=, 2);
	/*
	 * R13: at most one quota per period, plus the full pool at start and
	 * what ran past the last throttle (unpaid_ns, at most one quota).
	 */
	ASSERT_UINT(r.unpaid_ns, <=, 50000000);
	ASSERT_UINT(r.usage_ns, <=,
		    50000000 * (r.nr_periods + 1) + r.unpaid_ns + 10000000);
	/*
	 * Each throttled period gave the group its quota (3 %, as in
	 * test_host_run.c), and the 2 busy threads were held no longer than
	 * the group was throttled (plus cfsbw's own wait for a CPU and 50 ms
	 * to stop and resume them, HELD_SLACK_S): the machine, not
	 * cfsbw, decided how much of the target it got.
	 */
	ASSERT_UINT(r.busy_threads, ==, 2);
	ASSERT_DBL((double)r.usage_ns / 1e9, >=,
		   0.97 * 0.050 * (double)r.nr_throttled - 0.02 -
			   0.5 * (double)r.cfsbw_wait_ns / 1e9);
	ASSERT_DBL(held_excess_s(&r), <=, HELD_SLACK_S);

	const char *quick = "\"$0\" spin 3 & exit 3";
	const char *free_args[] = {"--quota", "50ms", "--period", "100ms",
				   "--", "sh", "-c", quick, host_workload(),
				   NULL};
	host_run(free_args, &r);
	ASSERT_INT(r.exit_code, ==, 3);
	/* Not the 3 s of what it left (0.25 s alone; 2 s on a loaded one). */
	ASSERT_TRUE(r.wall_s < 2.0);
}

/*
 * --wait-all, the command gone: a SIGTERM sent to cfsbw reaches what the
 * command left (held at 10 % of a CPU), which handles it; cfsbw exits with
 * the command's status.
 */
TEST(wait_all_passes_a_signal_to_what_is_left, "R10 cli")
{
	char caught[64];
	snprintf(caught, sizeof caught, "/tmp/cfsbw-test-%d-caught",
		 (int)getpid());
	unlink(caught);
	const char *script = "\"$0\" trap 15 10 > \"$1\" & exit 0";
	const char *args[] = {"--quota", "10ms", "--period", "100ms",
			      "--wait-all", "--", "sh", "-c", script,
			      host_workload(), caught, NULL};
	struct run_result r;
	double after = run_then_signal(args, 400, SIGTERM, &r);
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_TRUE(after < 2.0);
	/* The trap prints once it has run: give it a moment after cfsbw. */
	char out[256] = "";
	for (int i = 0; i < 40 && !strstr(out, "caught 15"); i++) {
		struct timespec ms50 = {0, 50000000};
		nanosleep(&ms50, NULL);
		slurp(caught, out, sizeof out);
	}
	unlink(caught);
	ASSERT_TRUE(strstr(out, "caught 15") != NULL);
	while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
		;
}

/*
 * `cfsbw run --pid $$` from a shell that waits for it: neither would end
 * before a Ctrl-C, so cfsbw says so at once, naming the flag and the pid,
 * and still governs it; SIGINT then ends the run (128 + 2) with the shell
 * resumed.  No terminal here, so cfsbw cannot see it is in the background.
 */
TEST(pid_of_its_own_shell_warns, "cli")
{
	char err[128];
	snprintf(err, sizeof err, "/tmp/cfsbw-test-%d-ancestor.err",
		 (int)getpid());
	const char *script = "\"$0\" run --cpus 0.5 --pid $$ 2>\"$1\" & "
			     "c=$!; sleep 0.3; kill -INT $c; wait $c";
	fflush(stdout);
	pid_t sh = fork();
	if (sh == 0) {
		execl("/bin/sh", "sh", "-c", script, host_bin(), err,
		      (char *)NULL);
		_exit(127);
	}
	int status;
	ASSERT_INT(waitpid(sh, &status, 0), ==, sh);
	char text[512];
	slurp(err, text, sizeof text);
	unlink(err);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_INT(WEXITSTATUS(status), ==, 130);
	char want[64];
	snprintf(want, sizeof want, "--pid %d is an ancestor of cfsbw",
		 (int)sh);
	ASSERT_TRUE(strstr(text, want) != NULL);
	ASSERT_TRUE(strstr(text, "Ctrl-C") != NULL);
}

/* Waits up to ms for one of pids' threads to be seen in a stop (t or T). */
static bool seen_held(const int *pids, size_t n, int ms)
{
	struct timespec ms10 = {0, 10000000};
	for (int i = 0; i < ms / 10; i++) {
		for (size_t k = 0; k < n; k++)
			if (stopped_threads(pids[k]) > 0)
				return true;
		nanosleep(&ms10, NULL);
	}
	return false;
}

/*
 * SPEC 7, issue 16: cfsbw itself stopped (SIGSTOP; a debugger holding it
 * is the same state, t instead of T) while it holds its command stopped at
 * 1 % of a CPU.  Its watchdog sees it stopped for a second and kills it:
 * the command runs again (unlimited, as after kill -9), and cfsbw's status
 * is 128 + SIGKILL.  The promise (man/cfsbw.1): held no more than about
 * 1.25 s after the stop; 2.5 s is allowed here for a loaded machine.
 */
TEST(stopped_cfsbw_releases_what_it_held, "SPEC-7 cli")
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	const char *args[] = {"--quota", "1ms", "--period", "100ms", "--",
			      host_workload(), "spin", "20", NULL};
	char sp[128], ep[128], op[128], err[1024];
	pid_t pid = host_start(args, sp, ep, op);
	int child[4];
	size_t n = 0;
	struct timespec ms20 = {0, 20000000};
	/*
	 * Only the workload counts: cfsbw's watchdog is started with a
	 * double fork, and its middle process (cfsbw's child until cfsbw
	 * reaps it) and the watchdog below it can be seen for a moment.
	 */
	for (int i = 0; i < 50 && n == 0; i++) {
		nanosleep(&ms20, NULL);
		n = workloads_only(child, descendants(pid, child, 4, 0));
	}
	ASSERT_UINT(n, ==, 1);
	ASSERT_TRUE(seen_held(child, n, 2000));
	kill(pid, SIGSTOP);
	double stopped_at = host_now_s();
	/* cfsbw ends within 2.5 s of its stop, killed by its watchdog. */
	int status = 0;
	pid_t done = 0;
	while (!done && host_now_s() - stopped_at < 2.5) {
		nanosleep(&ms20, NULL);
		done = waitpid(pid, &status, WNOHANG);
	}
	double ended_after = host_now_s() - stopped_at;
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	/* The command runs again: runnable, not stopped. */
	struct timespec ms200 = {0, 200000000};
	nanosleep(&ms200, NULL);
	long long a = runnable_ns(child[0]);
	nanosleep(&ms200, NULL);
	long long b = runnable_ns(child[0]);
	int held = stopped_threads(child[0]);
	kill(child[0], SIGKILL);
	waitpid(child[0], NULL, 0);
	slurp(ep, err, sizeof err);
	char sched[136];
	sched_log_path(sp, sched);
	unlink(sched);
	unlink(sp);
	unlink(ep);
	unlink(op);
	printf("    cfsbw ended %.2f s after its stop; the command runnable "
	       "%lld ms of 200 after\n", ended_after, (b - a) / 1000000);
	ASSERT_TRUE(done == pid);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT_TRUE(ended_after >= 0.95);
	ASSERT_TRUE(strstr(err, "watchdog") != NULL);
	ASSERT_INT(held, ==, 0);
	ASSERT_INT(b - a, >, 100000000);
}

/*
 * A Ctrl-Z stops cfsbw's whole process group, its watchdog with it: the
 * job stays stopped as a whole, nothing is killed, and once continued the
 * run ends as it would have (status 0), however long it was stopped.
 */
TEST(stopped_job_stays_whole, "SPEC-7 cli")
{
	char err[128];
	snprintf(err, sizeof err, "/tmp/cfsbw-test-%d-job.err", (int)getpid());
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(e, 2);
		execl(host_bin(), "cfsbw", "run", "--cpus", "0.5", "--",
		      host_workload(), "spin", "1", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	struct timespec ms300 = {0, 300000000};
	nanosleep(&ms300, NULL);
	killpg(pid, SIGSTOP);
	struct timespec s2 = {2, 0};
	nanosleep(&s2, NULL);
	int status = 0;
	pid_t early = waitpid(pid, &status, WNOHANG);
	killpg(pid, SIGCONT);
	if (!early)
		waitpid(pid, &status, 0);
	char text[512];
	slurp(err, text, sizeof text);
	unlink(err);
	ASSERT_INT(early, ==, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_TRUE(strstr(text, "watchdog") == NULL);
}

/* cfsbw run args... with its stderr in err; returns its exit status. */
static int run_cfsbw_err(const char *const args[], char *err, size_t size)
{
	struct run_result r;
	host_run(args, &r);
	snprintf(err, size, "%s", r.err);
	return r.exit_code;
}

/*
 * `cfsbw run args...` without CAP_SYS_PTRACE, its stderr into errfile:
 * as nobody (setpriv) when the test is root, else as the test's own
 * user.  Returns its wait status.
 */
static int run_unprivileged(const char *const args[], const char *errfile)
{
	const char *argv[16];
	int n = 0;
	if (geteuid() == 0) {
		static const char *const setpriv[] = {
			"setpriv", "--reuid=65534", "--regid=65534",
			"--clear-groups"};
		for (size_t i = 0; i < 4; i++)
			argv[n++] = setpriv[i];
	}
	argv[n++] = host_bin();
	argv[n++] = "run";
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int e = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(e, 2);
		char *cargv[16];
		memcpy(cargv, argv, sizeof cargv);
		execvp(cargv[0], cargv);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return status;
}

/* A kernel thread's pid (PF_KTHREAD in /proc/PID/stat), or 0 if none. */
static int kernel_thread(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;
	while (d && !found && (de = readdir(d))) {
		int pid = atoi(de->d_name);
		char path[64], stat[512];
		snprintf(path, sizeof path, "/proc/%d/stat", pid);
		if (pid <= 0)
			continue;
		slurp(path, stat, sizeof stat);
		const char *p = strrchr(stat, ')');
		unsigned flags = 0;
		if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) == 1 &&
		    (flags & 0x00200000u))
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * Issue 16, item 5: ptrace says "Operation not permitted" for a zombie,
 * for cfsbw itself, for a kernel thread, for a process traced already and
 * for another user's; cfsbw names which, and exits 1.
 */
TEST(pid_errors_name_the_cause, "cli")
{
	char err[8192], pid[16];
	/* A zombie: a child of ours that exited, not reaped. */
	fflush(stdout);
	pid_t z = fork();
	if (z == 0)
		_exit(0);
	for (int i = 0; i < 100 && proc_state(z, z) != 'Z'; i++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	snprintf(pid, sizeof pid, "%d", (int)z);
	const char *zombie[] = {"--pid", pid, NULL};
	int rc = run_cfsbw_err(zombie, err, sizeof err);
	waitpid(z, NULL, 0);
	printf("    %s", err);
	ASSERT_INT(rc, ==, 1);
	ASSERT_TRUE(strstr(err, "zombie") != NULL);

	/* A kernel thread. */
	int k = kernel_thread();
	ASSERT_INT(k, >, 0);
	snprintf(pid, sizeof pid, "%d", k);
	const char *kthread[] = {"--pid", pid, NULL};
	rc = run_cfsbw_err(kthread, err, sizeof err);
	printf("    %s", err);
	ASSERT_INT(rc, ==, 1);
	ASSERT_TRUE(strstr(err, "kernel thread") != NULL);

	/* Traced already: by this test. */
	pid_t t = fork();
	if (t == 0) {
		execl(host_workload(), "workload", "spin", "5", (char *)NULL);
		_exit(127);
	}
	ASSERT_INT(ptrace(PTRACE_SEIZE, t, NULL, NULL), ==, 0);
	snprintf(pid, sizeof pid, "%d", (int)t);
	const char *traced[] = {"--pid", pid, NULL};
	rc = run_cfsbw_err(traced, err, sizeof err);
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	printf("    %s", err);
	char want[64];
	snprintf(want, sizeof want, "already traced by pid %d",
		 (int)getpid());
	ASSERT_INT(rc, ==, 1);
	ASSERT_TRUE(strstr(err, want) != NULL);

	/* cfsbw itself: a shell that becomes cfsbw, given its own pid. */
	char errfile[96];
	snprintf(errfile, sizeof errfile, "/tmp/cfsbw-test-%d-self.err",
		 (int)getpid());
	fflush(stdout);
	pid_t sh = fork();
	if (sh == 0) {
		execl("/bin/sh", "sh", "-c", "exec \"$0\" run --pid $$ 2>\"$1\"",
		      host_bin(), errfile, (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(sh, &status, 0);
	slurp(errfile, err, sizeof err);
	unlink(errfile);
	printf("    %s", err);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	ASSERT_TRUE(strstr(err, "cfsbw itself") != NULL);

	/*
	 * Another user's: root's process seen from cfsbw run as nobody
	 * (setpriv); not root, init's.
	 */
	pid_t o = 1;
	if (geteuid() == 0) {
		o = fork();
		if (o == 0) {
			execl(host_workload(), "workload", "spin", "5",
			      (char *)NULL);
			_exit(127);
		}
	}
	snprintf(pid, sizeof pid, "%d", (int)o);
	snprintf(errfile, sizeof errfile, "/tmp/cfsbw-test-%d-user.err",
		 (int)getpid());
	const char *by_pid[] = {"--pid", pid, NULL};
	status = run_unprivileged(by_pid, errfile);
	if (o != 1) {
		kill(o, SIGKILL);
		waitpid(o, NULL, 0);
	}
	slurp(errfile, err, sizeof err);
	unlink(errfile);
	printf("    %s", err);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	ASSERT_TRUE(strstr(err, "another user's process") != NULL);
}

/*
 * Issue 16, item 5: exec says "No such file or directory" for a script
 * whose #! interpreter is missing, as for a missing command; cfsbw names
 * the interpreter (status 127, as a shell's).
 */
TEST(bad_interpreter_named, "cli")
{
	char script[96], err[8192];
	snprintf(script, sizeof script, "/tmp/cfsbw-test-%d-script",
		 (int)getpid());
	FILE *f = fopen(script, "w");
	ASSERT_TRUE(f != NULL);
	fputs("#!/nonexistent/interpreter -x\necho hi\n", f);
	fclose(f);
	chmod(script, 0755);
	const char *args[] = {"--", script, NULL};
	int rc = run_cfsbw_err(args, err, sizeof err);
	unlink(script);
	printf("    %s", err);
	ASSERT_INT(rc, ==, 127);
	ASSERT_TRUE(strstr(err, "bad interpreter '/nonexistent/interpreter'") !=
		    NULL);
	ASSERT_TRUE(strstr(err, script) != NULL);
}

/* Waits up to 2 s for want descendants of pid (at most 4), into tree. */
static size_t wait_descendants(pid_t pid, int tree[4], size_t want)
{
	size_t n = 0;
	struct timespec ms20 = {0, 20000000};
	for (int i = 0; i < 100 && n < want; i++) {
		nanosleep(&ms20, NULL);
		n = descendants(pid, tree, 4, 0);
	}
	return n;
}

/* A process's tracer, from its status (0: none; -1: gone). */
static int tracer_of(int pid)
{
	char path[64], status[2048];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	slurp(path, status, sizeof status);
	const char *p = strstr(status, "TracerPid:");
	return p ? atoi(p + 10) : -1;
}

/*
 * Issue 16, item 1: --pid A where A's child B cannot be traced (here: this
 * test traces it; under a set-user-ID program it would be another user's)
 * and B's child C can.  cfsbw governs A and C, says that B is not governed
 * and why, and counts it in --stats; with --strict that is an error (exit
 * 1) and no process is left traced or stopped.  Before, C ran ungoverned
 * without a word (nr_processes 1).
 */
TEST(pid_descends_past_what_it_cannot_trace, "R5 cli")
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (int strict = 0; strict < 2; strict++) {
		/* A: a shell waiting for B, an idle parent of busy C. */
		fflush(stdout);
		pid_t a = fork();
		if (a == 0) {
			execl("/bin/sh", "sh", "-c", "\"$0\" procs 1 30; :",
			      host_workload(), (char *)NULL);
			_exit(127);
		}
		int tree[4];
		size_t n = wait_descendants(a, tree, 2);
		struct timespec ms20 = {0, 20000000};
		ASSERT_UINT(n, ==, 2);
		pid_t b = tree[0], c = tree[1];
		ASSERT_INT(ptrace(PTRACE_SEIZE, b, NULL, NULL), ==, 0);
		char pid[16];
		snprintf(pid, sizeof pid, "%d", (int)a);
		const char *args[] = {"--cpus", "0.2", "--pid", pid,
				      strict ? "--strict" : NULL, NULL};
		char sp[128], ep[128], op[128];
		struct run_result r;
		memset(&r, 0, sizeof r);
		double t0 = host_now_s();
		pid_t cfsbw = host_start(args, sp, ep, op);
		int c_tracer = 0, a_tracer = 0, a_state = '?', c_state = '?';
		if (strict) {
			/* It gives up at once; then nothing is held. */
			host_finish(cfsbw, t0, sp, ep, op, &r);
			nanosleep(&ms20, NULL);
			a_tracer = tracer_of(a);
			c_tracer = tracer_of(c);
			a_state = proc_state(a, a);
			c_state = proc_state(c, c);
		} else {
			for (int i = 0; i < 100 && c_tracer != cfsbw; i++) {
				nanosleep(&ms20, NULL);
				c_tracer = tracer_of(c);
			}
		}
		/* End the tree: C killed, B let go of when its SIGCHLD stops it. */
		kill(c, SIGKILL);
		int st;
		waitpid(b, &st, __WALL);
		ptrace(PTRACE_DETACH, b, NULL, NULL);
		if (!strict)
			host_finish(cfsbw, t0, sp, ep, op, &r);
		kill(a, SIGKILL);
		kill(b, SIGKILL);
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
		printf("    %s%s", strict ? "--strict: " : "", r.err);
		char want[96];
		snprintf(want, sizeof want,
			 "process %d is not governed (its children are, where "
			 "they can be): already traced by pid %d",
			 (int)b, (int)getpid());
		ASSERT_TRUE(strstr(r.err, want) != NULL);
		if (!strict) {
			ASSERT_INT(r.exit_code, ==, 0);
			ASSERT_INT(c_tracer, ==, cfsbw);
			ASSERT_UINT(r.nr_processes, ==, 2);
			ASSERT_UINT(r.nr_ungoverned, ==, 1);
		} else {
			ASSERT_INT(r.exit_code, ==, 1);
			ASSERT_TRUE(strstr(r.err, "--strict") != NULL);
			/* Nothing left traced or stopped by cfsbw. */
			ASSERT_INT(a_tracer, ==, 0);
			ASSERT_INT(c_tracer, ==, 0);
			ASSERT_TRUE(a_state != 't' && a_state != 'T');
			ASSERT_TRUE(c_state != 't' && c_state != 'T');
		}
	}
}

/* Copies file to copy with mode; 0 or -1. */
static int copy_file(const char *file, const char *copy, mode_t mode)
{
	FILE *in = fopen(file, "rb"), *out = fopen(copy, "wb");
	char buf[65536];
	size_t n;
	while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	int rc = in && out ? 0 : -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	return rc == 0 ? chmod(copy, mode) : -1;
}

/*
 * Issue 16, item 5: a set-user-ID program run under a cfsbw without
 * CAP_SYS_PTRACE runs without its privileges, as under strace; cfsbw says
 * so, once however many times it runs.  Root's cfsbw keeps the
 * privileges (docs/host.md section 3) and says nothing.  As root the test
 * runs cfsbw as nobody (setpriv); otherwise as itself, on its own
 * set-user-ID copy.
 */
TEST(privileged_exec_warned_once, "cli")
{
	char suid[96], errfile[96], err[4096];
	snprintf(suid, sizeof suid, "/tmp/cfsbw-test-%d-suid", (int)getpid());
	snprintf(errfile, sizeof errfile, "/tmp/cfsbw-test-%d-suid.err",
		 (int)getpid());
	ASSERT_INT(copy_file(host_workload(), suid, 04755), ==, 0);
	char script[256];
	snprintf(script, sizeof script, "%s exit 0; %s exit 0; true", suid,
		 suid);
	const char *cmd[] = {"--", "sh", "-c", script, NULL};
	int status = run_unprivileged(cmd, errfile);
	slurp(errfile, err, sizeof err);
	printf("    %s", err);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	const char *w = strstr(err, "a set-user-ID program");
	ASSERT_TRUE(w != NULL);
	ASSERT_TRUE(strstr(w + 21, "set-user-ID program") == NULL); /* once */
	ASSERT_TRUE(strstr(err, suid) != NULL);
	if (geteuid() == 0) {
		const char *args[] = {"--", suid, "exit", "0", NULL};
		struct run_result r;
		host_run(args, &r);
		ASSERT_INT(r.exit_code, ==, 0);
		ASSERT_TRUE(strstr(r.err, "set-user-ID") == NULL);
	}
	unlink(suid);
	unlink(errfile);
}

/*
 * Issue 16, item 1, as reported: a user's shell runs a set-user-ID-root
 * program whose child drops back to the user and starts a busy grandchild.
 * cfsbw run by that user (nobody here), --pid of the shell: the program
 * and its child cannot be traced (another user's; one that changed its
 * credentials), the grandchild can.  Before, only the shell was governed
 * and the grandchild ran at a whole CPU against 0.2.  Needs root to make
 * the set-user-ID-root program (make test runs as root in CI).
 */
TEST(pid_governs_past_a_setuid_program, "R5 cli")
{
	ASSERT_INT(geteuid(), ==, 0); /* to make a set-user-ID-root file */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	char suid[96], errfile[96], stats[96], err[4096], json[1024];
	snprintf(suid, sizeof suid, "/tmp/cfsbw-test-%d-dropper",
		 (int)getpid());
	snprintf(errfile, sizeof errfile, "/tmp/cfsbw-test-%d-dropper.err",
		 (int)getpid());
	snprintf(stats, sizeof stats, "/tmp/cfsbw-test-%d-dropper.json",
		 (int)getpid());
	ASSERT_INT(copy_file(host_workload(), suid, 04755), ==, 0);
	fflush(stdout);
	pid_t sh = fork();
	if (sh == 0) {
		execlp("setpriv", "setpriv", "--reuid=65534", "--regid=65534",
		       "--clear-groups", "sh", "-c", "\"$0\" dropper 2 \"$1\"; :",
		       suid, host_workload(), (char *)NULL);
		_exit(127);
	}
	int tree[4];
	size_t n = wait_descendants(sh, tree, 3);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)sh);
	unlink(stats);
	const char *args[] = {"--cpus", "0.2", "--stats", stats, "--pid", pid,
			      NULL};
	int status = run_unprivileged(args, errfile);
	slurp(errfile, err, sizeof err);
	slurp(stats, json, sizeof json);
	waitpid(sh, NULL, 0);
	while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
		;
	unlink(suid);
	unlink(errfile);
	unlink(stats);
	printf("    %s    %s", err, json);
	ASSERT_UINT(n, ==, 3);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The shell and the grandchild governed; the two between, said. */
	ASSERT_UINT(json_u64(json, "nr_processes"), ==, 2);
	ASSERT_UINT(json_u64(json, "nr_ungoverned"), ==, 2);
	ASSERT_TRUE(strstr(err, "another user's process") != NULL);
	ASSERT_TRUE(strstr(err, "changed its credentials") != NULL);
	/* Held to 0.2 CPU (R13), and charged: it ran. */
	uint64_t usage = json_u64(json, "usage_ns"), periods =
		json_u64(json, "nr_periods"),
		 quota_ns = json_u64(json, "quota_us") * 1000;
	ASSERT_UINT(usage, <=, quota_ns * (periods + 1) + 10000000);
	ASSERT_UINT(usage, >, 0);
}

TEST_MAIN(TEST_ENTRY(exit_status_is_the_commands)
	  TEST_ENTRY(signals_resume_and_reach_the_command)
	  TEST_ENTRY(kill_9_leaves_nothing_stopped)
	  TEST_ENTRY(invalid_values_exit_2_naming_flag_and_value)
	  TEST_ENTRY(unlimited_and_edge_values_accepted)
	  TEST_ENTRY(help_describes_the_options)
	  TEST_ENTRY(stats_file_and_stat_interval)
	  TEST_ENTRY(user_stop_and_continue_pass_through)
	  TEST_ENTRY(wait_all_keeps_governing_what_the_command_leaves)
	  TEST_ENTRY(wait_all_passes_a_signal_to_what_is_left)
	  TEST_ENTRY(pid_of_its_own_shell_warns)
	  TEST_ENTRY(stopped_cfsbw_releases_what_it_held)
	  TEST_ENTRY(stopped_job_stays_whole)
	  TEST_ENTRY(pid_errors_name_the_cause)
	  TEST_ENTRY(bad_interpreter_named)
	  TEST_ENTRY(pid_descends_past_what_it_cannot_trace)
	  TEST_ENTRY(privileged_exec_warned_once)
	  TEST_ENTRY(pid_governs_past_a_setuid_program))
