/*
 * bench_kill.c - what a limiter leaves behind when it is killed with
 * SIGKILL: cfsbw run and Debian's cpulimit, side by side, on the same
 * workloads.
 *
 * A stopped process cannot act on its own signals, so a limiter that
 * stops processes and dies without resuming them leaves them stopped for
 * good (SPEC section 7: never).  Each trial starts a workload under a
 * limit of 20 % (one busy process, or a shell with two busy children),
 * sends the limiter SIGKILL at a moment that moves through the period
 * from trial to trial, waits 200 ms, and counts the workload's processes
 * with a thread still stopped ('T' or 't' in /proc).
 *
 *   bench_kill [--trials N]
 *
 * Env: CFSBW_BIN, CFSBW_PROGS.  Prints a markdown table (bench/README.md,
 * "Killing the limiter").  This program makes itself a child subreaper,
 * so that what a killed limiter leaves is reaped here.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "programs.h"

#define CPULIMIT "/usr/bin/cpulimit"
#define MAX_TREE 16

enum limiter { L_CFSBW, L_CPULIMIT };

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* pid's children, then theirs, into out[n..]; returns the new count. */
static size_t tree(pid_t pid, pid_t *out, size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid,
		 (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return n;
	int child;
	size_t first = n;
	while (n < MAX_TREE && fscanf(f, "%d", &child) == 1)
		out[n++] = (pid_t)child;
	fclose(f);
	size_t last = n;
	for (size_t i = first; i < last; i++)
		n = tree(out[i], out, n);
	return n;
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
		char stat[320], buf[512];
		snprintf(stat, sizeof stat, "/proc/%d/task/%s/stat", (int)pid,
			 e->d_name);
		FILE *f = fopen(stat, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* "tid (comm) S ...": comm may hold ')' itself. */
		const char *end = strrchr(buf, ')');
		any = end && (end[2] == 'T' || end[2] == 't');
	}
	closedir(d);
	return any;
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
 * One trial: returns how many of the workload's processes were left
 * stopped 200 ms after the limiter's SIGKILL, or -1 if it did not start;
 * *held says whether one was stopped just before the kill.
 */
static int trial(enum limiter l, bool two, long kill_after_ms, bool *held)
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
	pid_t procs[MAX_TREE];
	size_t nr;
	if (l == L_CFSBW) {
		nr = tree(limiter, procs, 0); /* the command and its children */
	} else {
		/* Not cpulimit's children: those are -m's monitors. */
		procs[0] = root;
		nr = tree(root, procs, 1);
	}
	/* The kill should come while something is held: look just before. */
	*held = false;
	for (size_t i = 0; i < nr; i++)
		*held = *held || stopped(procs[i]);
	kill(limiter, SIGKILL);
	waitpid(limiter, NULL, 0);
	sleep_ms(200);
	int left = 0;
	for (size_t i = 0; i < nr; i++)
		left += stopped(procs[i]);
	/* End it all: what cpulimit -m left, then the workload. */
	if (system("pkill -x -KILL cpulimit >/dev/null 2>&1") != 0) {
		/* none left */
	}
	for (size_t i = 0; i < nr; i++) {
		kill(procs[i], SIGKILL);
		kill(procs[i], SIGCONT);
	}
	while (waitpid(-1, NULL, 0) > 0)
		;
	return nr ? left : -1;
}

int main(int argc, char **argv)
{
	int trials = 8;
	for (int i = 1; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--trials"))
			trials = atoi(argv[i + 1]);
	if (trials < 1)
		trials = 1;
	/* Orphans of a killed limiter come to us, to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	bool have_cpulimit = access(CPULIMIT, X_OK) == 0;

	printf("## Killing the limiter\n\n");
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
				int k = trial((enum limiter)l, two, 300 + 37 * t,
					      &held);
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
	return 0;
}
