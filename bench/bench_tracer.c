/*
 * bench_tracer.c - what cfsbw costs per governed process, against a bare
 * ptrace tracer run side by side on the same fork-heavy tree.
 *
 * Any tracer that finds every descendant with PTRACE_O_TRACEFORK pays, per
 * process, for three resumes (the parent at its fork event, the child at
 * its first stop, the parent at the SIGCHLD stop its child's reap brings)
 * and a reap, with the wake-ups they need (docs/host.md, sections 3 and 7).
 * The bare tracer here does that and nothing else: no clocks, no timers,
 * no accounting.  cfsbw runs the same tree under a limit it never reaches
 * (2 CPUs for a tree that uses about one), so its timers and accounting
 * run but nothing is throttled.  The ratio of the two is cfsbw's own share
 * of the per-process cost; the bare figure is the floor of the mechanism
 * on this machine.
 *
 *   bench_tracer [--seconds S] [--rounds N]
 *
 * Env: CFSBW_BIN (the command), CFSBW_PROGS (the workload program).
 * Prints a markdown table (bench/README.md, "Per-process cost").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "programs.h"

struct tracer_result {
	bool ok;
	unsigned long processes;
	double cpu_ms; /* the tracer's own CPU time, from its fork */
};

static int64_t process_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void quiet(void)
{
	int devnull = open("/dev/null", O_WRONLY);
	if (devnull >= 0) {
		dup2(devnull, 1);
		dup2(devnull, 2);
	}
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/*
 * The bare tracer, in a process of its own so that its CPU time is its
 * own: start argv traced, resume every stop, reap every exit, until no
 * tracee is left.  Reports "processes cpu_ns" on fd report.
 */
static _Noreturn void bare_tracer(const char *const argv[], int report)
{
	int go[2];
	if (pipe(go) < 0)
		_exit(1);
	pid_t root = fork();
	if (root < 0)
		_exit(1);
	if (root == 0) {
		char c;
		close(go[1]);
		quiet();
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		bench_execv(argv);
		_exit(127);
	}
	close(go[0]);
	if (ptrace(PTRACE_SEIZE, root, NULL,
		   (void *)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			    PTRACE_O_TRACECLONE)) < 0)
		_exit(1);
	if (write(go[1], "g", 1) != 1)
		_exit(1);
	close(go[1]);

	unsigned long processes = 0;
	int root_status = -1;
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: no tracee and no child left */
		}
		if (WIFSTOPPED(status)) {
			int event = status >> 16;
			int sig = WSTOPSIG(status);
			if (event == PTRACE_EVENT_STOP && is_stop_signal(sig))
				ptrace(PTRACE_LISTEN, pid, NULL, NULL);
			else
				ptrace(PTRACE_CONT, pid, NULL,
				       (void *)(uintptr_t)(event ? 0 : sig));
			continue;
		}
		processes++;
		if (pid == root)
			root_status = status;
	}
	char line[64];
	int n = snprintf(line, sizeof line, "%lu %lld %d\n", processes,
			 (long long)process_cpu_ns(),
			 WIFEXITED(root_status) && !WEXITSTATUS(root_status));
	if (write(report, line, (size_t)n) != n)
		_exit(1);
	_exit(0);
}

static struct tracer_result run_bare(const char *const argv[])
{
	struct tracer_result r = {false, 0, 0};
	int out[2];
	if (pipe(out) < 0)
		return r;
	pid_t t = fork();
	if (t < 0) {
		close(out[0]);
		close(out[1]);
		return r;
	}
	if (t == 0) {
		close(out[0]);
		bare_tracer(argv, out[1]);
	}
	close(out[1]);
	char line[64] = "";
	ssize_t n = read(out[0], line, sizeof line - 1);
	close(out[0]);
	int status;
	waitpid(t, &status, 0);
	unsigned long processes;
	long long cpu_ns;
	int ok;
	if (n > 0 && sscanf(line, "%lu %lld %d", &processes, &cpu_ns, &ok) == 3) {
		r.ok = ok && WIFEXITED(status) && !WEXITSTATUS(status);
		r.processes = processes;
		r.cpu_ms = (double)cpu_ns / 1e6;
	}
	return r;
}

/* wargv: the workload's nw words (and a NULL after them). */
static struct tracer_result run_cfsbw(const char *const wargv[], size_t nw)
{
	struct tracer_result r = {false, 0, 0};
	char stats[64];
	snprintf(stats, sizeof stats, "/tmp/bench-tracer-%d.json", (int)getpid());
	const char *argv[16];
	int n = 0;
	argv[n++] = bench_cfsbw_bin();
	argv[n++] = "run";
	argv[n++] = "--cpus";
	argv[n++] = "2";
	argv[n++] = "--period";
	argv[n++] = "100ms";
	argv[n++] = "--stats";
	argv[n++] = stats;
	argv[n++] = "--";
	for (size_t i = 0; i < nw && n < 15; i++)
		argv[n++] = wargv[i];
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return r;
	if (pid == 0) {
		quiet();
		bench_execv(argv);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	char json[2048];
	bench_stats_take(stats, json, sizeof json);
	r.ok = WIFEXITED(status) && !WEXITSTATUS(status) && json[0];
	r.processes = (unsigned long)bench_json_u64(json, "nr_processes");
	r.cpu_ms = (double)bench_json_u64(json, "self_cpu_ns") / 1e6;
	return r;
}

static double per_process_us(struct tracer_result r)
{
	return r.processes ? r.cpu_ms * 1e3 / (double)r.processes : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *seconds = "5";
	int rounds = 3;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = argv[i + 1];
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
	}
	if (rounds < 1 || rounds > 20)
		rounds = 3;
	/* 1 live child at a time, each spinning 2 ms of CPU. */
	const char *wargv[] = {bench_workload_path(), "forky", "1", "2", seconds,
			       NULL};

	printf("## Per-process cost\n\n");
	printf("`make bench` (bench/bench_tracer.c): `workload forky 1 2 %s` "
	       "(one live child at a time, each 2 ms of CPU), under a bare "
	       "ptrace tracer (the resumes and reaps ptrace forces, nothing "
	       "else) and under `cfsbw run --cpus 2` (a limit it never "
	       "reaches), in turn, %d rounds; tracer CPU from its fork.\n\n",
	       seconds, rounds);
	printf("| round | tracer | processes | tracer CPU ms | µs per process "
	       "|\n|---|---|---|---|---|\n");
	double ratio[20];
	for (int i = 0; i < rounds; i++) {
		struct tracer_result b = run_bare(wargv);
		struct tracer_result c =
			run_cfsbw(wargv, sizeof(wargv) / sizeof(wargv[0]) - 1);
		printf("| %d | bare ptrace | %lu | %.1f | %.1f%s |\n", i + 1,
		       b.processes, b.cpu_ms, per_process_us(b),
		       b.ok ? "" : " (failed)");
		printf("| %d | cfsbw | %lu | %.1f | %.1f%s |\n", i + 1,
		       c.processes, c.cpu_ms, per_process_us(c),
		       c.ok ? "" : " (failed)");
		fflush(stdout);
		ratio[i] = per_process_us(b) > 0
				   ? per_process_us(c) / per_process_us(b)
				   : 0;
	}
	qsort(ratio, (size_t)rounds, sizeof ratio[0], cmp_double);
	printf("\ncfsbw / bare ptrace, per process: median %.2f (%.2f … "
	       "%.2f)\n\n",
	       ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
	return 0;
}
