/*
 * bench_kill.c - what a limiter leaves behind when it is killed with
 * SIGKILL (issue 16: no process is ever left stopped).
 *
 * A stopped process cannot act on its own signals, so a limiter that
 * stops processes and dies without resuming them leaves them stopped for
 * good.  Two parts:
 *
 *  - The soak: TRIALS (default 1000) runs of `cfsbw run`, each over a
 *    tree chosen at random (busy threads, processes forking short-lived
 *    children, threads that sleep and wake, a shell holding all three),
 *    under v4 or upstream, at a random quota, killed with SIGKILL at a
 *    random moment from 0 to 1.2 s after its start (so also while it
 *    starts the command and while it attaches).  After the kill and a
 *    settling time, every process left below this program is checked in
 *    /proc: a thread in state 'T' or 't' counts its process as left
 *    stopped.  Every trial then kills and reaps all it started.
 *  - The daemon: DAEMON_TRIALS (default 200) of the same, with `cfsbw
 *    daemon` as the tracer: a group /g at a random quota made with `cfsbw
 *    ctl`, the tree started in it by `cfsbw run --group /g`, and the
 *    daemon killed at a random moment from 0 to 1.2 s after that.
 *  - The comparison: cfsbw run and Debian's cpulimit side by side on one
 *    busy process and on a shell with two busy children, killed at
 *    moments 37 ms apart (COMPARE trials per row; cpulimit rows skipped
 *    if it is not installed).
 *
 *   bench_kill [--trials N] [--daemon-trials N] [--compare N] [--seed S]
 *
 * Env: CFSBW_BIN, CFSBW_PROGS; CFSBW_KILL_TRIALS (what `make bench
 * KILL_TRIALS=N` sets) is the default for --trials, and a fifth of it
 * for --daemon-trials.  Prints markdown
 * (bench/README.md, "Killing the limiter").  This program makes itself a
 * child subreaper, so that what a killed limiter leaves is reparented
 * here, found, and ended by its process id.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "programs.h"

#define CPULIMIT "/usr/bin/cpulimit"
#define MAX_PROCS 512
#define KILL_WINDOW_MS 1200
#define SETTLE_MS 150
#define RECHECK_MS 500

enum limiter { L_CFSBW, L_CPULIMIT };

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) < 0)
		;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* xorshift64*: the trials' choices, reproducible with --seed. */
static uint64_t rng_state;

static unsigned rng_below(unsigned n)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (unsigned)((rng_state * UINT64_C(2685821657736338717)) >> 33) % n;
}

/* "pid (comm) S ppid ...": the state and the parent; false if gone. */
static bool read_stat(const char *path, char *state, pid_t *ppid)
{
	char buf[512];
	if (bench_read_file(path, buf, sizeof buf) < 0)
		return false;
	const char *end = strrchr(buf, ')'); /* comm may hold ')' itself */
	int parent;
	if (!end || sscanf(end + 1, " %c %d", state, &parent) != 2)
		return false;
	*ppid = (pid_t)parent;
	return true;
}

/*
 * Every process below root (not root itself), found by walking /proc's
 * parent links: children made by any thread, at any depth.  Returns the
 * count (at most MAX_PROCS).
 */
static size_t descendants(pid_t root, pid_t *out)
{
	static pid_t pids[8192], parents[8192];
	size_t n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < sizeof pids / sizeof pids[0]) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[300], state;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		pid_t ppid;
		if (!read_stat(path, &state, &ppid))
			continue;
		pids[n] = (pid_t)atoi(e->d_name);
		parents[n++] = ppid;
	}
	closedir(d);
	size_t nr = 0;
	bool grew = true;
	while (grew) {
		grew = false;
		for (size_t i = 0; i < n && nr < MAX_PROCS; i++) {
			if (!pids[i])
				continue;
			bool below = parents[i] == root;
			for (size_t k = 0; !below && k < nr; k++)
				below = parents[i] == out[k];
			if (below) {
				out[nr++] = pids[i];
				pids[i] = 0;
				grew = true;
			}
		}
	}
	return nr;
}

/* Whether a thread of pid is stopped right now ('T' or 't'). */
static bool stopped(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return false;
	bool any = false;
	struct dirent *e;
	while (!any && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char stat[320], state;
		pid_t ppid;
		snprintf(stat, sizeof stat, "/proc/%d/task/%s/stat", (int)pid,
			 e->d_name);
		any = read_stat(stat, &state, &ppid) &&
		      (state == 'T' || state == 't');
	}
	closedir(d);
	return any;
}

static size_t count_stopped(const pid_t *procs, size_t nr)
{
	size_t n = 0;
	for (size_t i = 0; i < nr; i++)
		n += stopped(procs[i]);
	return n;
}

static pid_t spawn(const char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		bench_execv(argv);
		_exit(127);
	}
	return pid;
}

/*
 * End everything below this program, by process id: SIGKILL (and SIGCONT,
 * which a stopped process needs to die at once), reap, and look again for
 * what the dead left to us, until nothing is left.
 */
static void end_all(void)
{
	pid_t self = getpid(), procs[MAX_PROCS];
	for (int round = 0; round < 100; round++) {
		size_t nr = descendants(self, procs);
		for (size_t i = 0; i < nr; i++) {
			kill(procs[i], SIGKILL);
			kill(procs[i], SIGCONT);
		}
		while (waitpid(-1, NULL, nr ? 0 : WNOHANG) > 0)
			;
		if (!nr)
			return;
	}
	fprintf(stderr, "bench_kill: processes below us would not end\n");
	exit(1);
}

/* ---- the soak ---- */

struct workload {
	const char *name;
	const char *script; /* sh -c SCRIPT WORKLOAD */
};

static const struct workload soak_workloads[] = {
	{"2 busy threads", "exec \"$0\" spin 30 2"},
	{"forking: 4 children at a time, 20 ms each",
	 "exec \"$0\" forky 4 20 30"},
	{"sleeping: 1 busy + 6 threads waking every 3 ms",
	 "exec \"$0\" spin 30 1 6 3"},
	{"bursty: 5 ms of CPU, 20 ms asleep", "exec \"$0\" bursty 5 20 30"},
	{"a shell: busy, forking, bursty, sleep",
	 "\"$0\" spin 30 1 & \"$0\" forky 3 10 30 & "
	 "\"$0\" bursty 5 20 30 >/dev/null & sleep 30 & wait"},
};
#define NR_SOAK (sizeof soak_workloads / sizeof soak_workloads[0])

struct soak_row {
	unsigned trials, holding, bad, left;
	unsigned long long procs_seen;
};

/* Run argv to its end; its exit status, or -1. */
static int run_wait(const char *const argv[])
{
	pid_t pid = spawn(argv);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A daemon for one trial, its socket at sock, with group /g at quota:
 * its pid, or -1 if it did not come up within 3 s.
 */
static pid_t daemon_start(const char *sock, const char *policy,
			  const char *quota)
{
	const char *argv[] = {bench_cfsbw_bin(), "daemon", "--socket", sock,
			      "--policy", policy, NULL};
	pid_t d = spawn(argv);
	if (d < 0)
		return -1;
	for (int i = 0; i < 300 && access(sock, F_OK) != 0; i++)
		sleep_ms(10);
	const char *mkdir_argv[] = {bench_cfsbw_bin(), "ctl", "--socket",
				    sock, "mkdir", "/g", NULL};
	const char *set_argv[] = {bench_cfsbw_bin(), "ctl", "--socket", sock,
				  "set", "/g", "cpu.cfs_quota_us", quota, NULL};
	if (access(sock, F_OK) != 0 || run_wait(mkdir_argv) != 0 ||
	    run_wait(set_argv) != 0) {
		kill(d, SIGKILL);
		waitpid(d, NULL, 0);
		return -1;
	}
	return d;
}

/* with_daemon: cfsbw daemon is the tracer (and what is killed). */
static int soak(unsigned trials, unsigned long long seed, bool with_daemon)
{
	static const char *const policies[] = {"v4", "upstream"};
	static const char *const quotas[] = {"5ms", "20ms", "50ms", "150ms"};
	static const char *const quotas_us[] = {"5000", "20000", "50000",
						"150000"};
	char sock[64];
	snprintf(sock, sizeof sock, "/tmp/bench_kill-%d.sock", (int)getpid());
	struct soak_row rows[NR_SOAK];
	memset(rows, 0, sizeof rows);
	unsigned nr_fail = 0;
	int64_t start = now_ms();
	pid_t self = getpid(), procs[MAX_PROCS];

	for (unsigned t = 0; t < trials; t++) {
		unsigned w = rng_below(NR_SOAK);
		const char *policy = policies[rng_below(2)];
		unsigned q = rng_below(4);
		const char *quota = quotas[q];
		long kill_ms = (long)rng_below(KILL_WINDOW_MS + 1);
		const char *argv[] = {bench_cfsbw_bin(), "run", "--policy",
				      policy, "--quota", quota, "--period",
				      "100ms", "--", "/bin/sh", "-c",
				      soak_workloads[w].script,
				      bench_workload_path(), NULL};
		const char *group_argv[] = {bench_cfsbw_bin(), "run", "--group",
					    "/g", "--socket", sock, "--",
					    "/bin/sh", "-c",
					    soak_workloads[w].script,
					    bench_workload_path(), NULL};
		pid_t limiter;
		if (with_daemon) {
			unlink(sock);
			limiter = daemon_start(sock, policy, quotas_us[q]);
			if (limiter > 0)
				spawn(group_argv);
		} else {
			limiter = spawn(argv);
		}
		if (limiter < 0) {
			nr_fail++;
			end_all();
			continue;
		}
		sleep_ms(kill_ms);
		/* Held just before the kill?  (the kill should find some) */
		size_t nr = with_daemon ? descendants(self, procs)
					: descendants(limiter, procs);
		rows[w].holding += count_stopped(procs, nr) > 0;
		kill(limiter, SIGKILL);
		waitpid(limiter, NULL, 0);
		sleep_ms(SETTLE_MS);
		/* Everything below us now: the limiter's orphans, reparented. */
		nr = descendants(self, procs);
		size_t left = count_stopped(procs, nr);
		if (left) {
			/* Stopped for good, or caught in passing?  Look again. */
			sleep_ms(RECHECK_MS);
			left = count_stopped(procs, nr);
			if (left)
				fprintf(stderr,
					"bench_kill: %strial %u (%s, %s, quota "
					"%s, kill at %ld ms): %zu of %zu "
					"processes left stopped\n",
					with_daemon ? "daemon " : "", t,
					soak_workloads[w].name, policy, quota,
					kill_ms, left, nr);
		}
		rows[w].trials++;
		rows[w].bad += left > 0;
		rows[w].left += (unsigned)left;
		rows[w].procs_seen += nr;
		end_all();
	}
	unlink(sock);
	int64_t took = now_ms() - start;

	if (with_daemon)
		printf("## Killing cfsbw daemon: the soak\n\n"
		       "`make bench` (bench/bench_kill.c, %u trials, seed %llu): "
		       "SIGKILL to `cfsbw daemon` at a random moment 0 to %d "
		       "ms after `cfsbw run --group /g` starts a random tree in "
		       "its group (v4 or upstream, quota 5 to 150 ms per "
		       "100 ms);",
		       trials, seed, KILL_WINDOW_MS);
	else
		printf("## Killing cfsbw run: the soak\n\n"
		       "`make bench` (bench/bench_kill.c, KILL_TRIALS=%u, seed "
		       "%llu): SIGKILL to `cfsbw run` at a random moment 0 to "
		       "%d ms after its start, over a random tree (v4 or "
		       "upstream, quota 5 to 150 ms per 100 ms);",
		       trials, seed, KILL_WINDOW_MS);
	printf(" %d ms later, the processes left with a thread in state T or "
	       "t (looked at again %d ms later).  %u trials in %.1f s.\n\n",
	       SETTLE_MS, RECHECK_MS, trials - nr_fail, (double)took / 1000.0);
	printf("| workload | trials | killed while holding a process | "
	       "processes found after the kill | trials leaving a process "
	       "stopped | processes left stopped |\n");
	printf("|---|---|---|---|---|---|\n");
	struct soak_row all = {0, 0, 0, 0, 0};
	for (size_t w = 0; w < NR_SOAK; w++) {
		const struct soak_row *r = &rows[w];
		printf("| %s | %u | %u | %llu | %u | %u |\n",
		       soak_workloads[w].name, r->trials, r->holding,
		       r->procs_seen, r->bad, r->left);
		all.trials += r->trials;
		all.holding += r->holding;
		all.procs_seen += r->procs_seen;
		all.bad += r->bad;
		all.left += r->left;
	}
	printf("| **all** | %u | %u | %llu | %u | %u |\n\n", all.trials,
	       all.holding, all.procs_seen, all.bad, all.left);
	fflush(stdout);
	return all.left ? 1 : 0;
}

/* ---- the comparison with cpulimit ---- */

/*
 * One trial: returns how many of the workload's processes were left
 * stopped 200 ms after the limiter's SIGKILL, or -1 if it did not start;
 * *held says whether one was stopped just before the kill.
 */
static int compare_trial(enum limiter l, bool two, long kill_after_ms,
			 bool *held)
{
	const char *wl = bench_workload_path();
	const char *script = "\"$0\" spin 30 1 & \"$0\" spin 30 1 & wait";
	const char *cmd_one[] = {wl, "spin", "30", "1", NULL};
	const char *cmd_two[] = {"/bin/sh", "-c", script, wl, NULL};
	const char *const *cmd = two ? cmd_two : cmd_one;

	pid_t limiter, root = 0;
	if (l == L_CFSBW) {
		const char *argv[16] = {bench_cfsbw_bin(), "run", "--quota",
					"20ms", "--period", "100ms", "--"};
		for (int i = 0, n = 7; cmd[i]; i++)
			argv[n++] = cmd[i];
		limiter = spawn(argv);
	} else {
		root = spawn(cmd);
		char target[16];
		snprintf(target, sizeof target, "%d", (int)root);
		const char *argv[] = {CPULIMIT, "-p", target, "-l", "20", "-z",
				      "-q", two ? "-m" : NULL, NULL};
		limiter = spawn(argv);
	}
	sleep_ms(kill_after_ms);
	pid_t procs[MAX_PROCS];
	size_t nr;
	if (l == L_CFSBW) {
		nr = descendants(limiter, procs); /* the command, its children */
	} else {
		/* Not cpulimit's children: those are -m's monitors. */
		procs[0] = root;
		nr = 1 + descendants(root, procs + 1);
	}
	/* The kill should come while something is held: look just before. */
	*held = count_stopped(procs, nr) > 0;
	kill(limiter, SIGKILL);
	waitpid(limiter, NULL, 0);
	sleep_ms(200);
	int left = (int)count_stopped(procs, nr);
	end_all(); /* the workload, and what cpulimit -m left */
	return nr ? left : -1;
}

static void compare(int trials)
{
	bool have_cpulimit = access(CPULIMIT, X_OK) == 0;
	printf("## Killing the limiter: cfsbw and cpulimit\n\n");
	printf("`make bench` (bench/bench_kill.c): SIGKILL to the limiter "
	       "%d times per row, 300 to %d ms after the start (limit 20 %% "
	       "of a CPU, period 100 ms), then the workload's processes "
	       "still stopped 200 ms later.%s\n\n",
	       trials, 300 + 37 * (trials - 1),
	       have_cpulimit ? "" : " No cpulimit: its rows skipped.");
	printf("| limiter | workload | trials | killed while holding a "
	       "process | trials leaving a process stopped | processes left "
	       "stopped |\n");
	printf("|---|---|---|---|---|---|\n");
	static const char *const names[] = {"cfsbw", "cpulimit"};
	for (int l = L_CFSBW; l <= L_CPULIMIT; l++) {
		if (l == L_CPULIMIT && !have_cpulimit)
			continue;
		for (int two = 0; two <= 1; two++) {
			int bad = 0, left = 0, done = 0, holding = 0;
			for (int t = 0; t < trials; t++) {
				bool held;
				int k = compare_trial((enum limiter)l, two,
						      300 + 37 * t, &held);
				if (k < 0)
					continue;
				done++;
				holding += held;
				left += k;
				bad += k > 0;
			}
			printf("| %s | %s | %d | %d | %d | %d |\n", names[l],
			       two ? "a shell and 2 busy children"
				   : "1 busy process",
			       done, holding, bad, left);
			fflush(stdout);
		}
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *env = getenv("CFSBW_KILL_TRIALS");
	long trials = env && *env ? atol(env) : 1000;
	long daemon_trials = -1; /* a fifth of trials */
	long compare_trials = 8;
	unsigned long long seed = 1;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--trials"))
			trials = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--daemon-trials"))
			daemon_trials = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--compare"))
			compare_trials = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 10);
	}
	if (daemon_trials < 0)
		daemon_trials = trials / 5;
	if (trials < 0 || compare_trials < 0) {
		fprintf(stderr, "bench_kill: --trials and --compare take a "
				"count >= 0\n");
		return 2;
	}
	rng_state = seed ? seed : 1;
	/* Orphans of a killed limiter come to us, to be found and reaped. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("bench_kill: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	int rc = 0;
	if (trials)
		rc = soak((unsigned)trials, seed, false);
	if (daemon_trials && soak((unsigned)daemon_trials, seed, true))
		rc = 1;
	if (compare_trials)
		compare((int)compare_trials);
	return rc;
}
