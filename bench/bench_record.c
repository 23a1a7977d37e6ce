/*
 * bench_record.c - what `cfsbw record` costs, as ratios against the same
 * workload unrecorded, run side by side (alternating, best of REPEATS):
 *  - own: cfsbw record's own CPU time (its wait4 rusage less the
 *    recorded tree's, which `workload measure` prints) over the CPU time
 *    it recorded (the sum of the trace's runs): issue 14 asks for under 1%;
 *  - tree: the recorded tree's CPU time per unit of work (a burst, a
 *    child), recorded over unrecorded: what the kernel's records cost the
 *    recorded threads (the workloads run for a wall time, so only work
 *    counted in units compares);
 *  - the trace's runs over the tree's CPU time (how much of it the trace
 *    holds).
 * Workloads: 2 busy threads (few switches), bursts of 1 ms every 2 ms
 * (1000 switches a second), a tree of 2 live children that spin 5 ms and
 * exit (fork-heavy, like a build); then the first two with --poll (the
 * fallback that reads CPU clocks every millisecond).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "programs.h"

#define REPEATS 3
/* One trace file per run of the benchmark. */
static char trace[64];

struct sample {
	double total_s; /* the child's rusage: cfsbw (if any) and the tree */
	double tree_s;  /* the tree, as `workload measure` printed it */
	double runs_s;  /* the trace's runs */
	double units;   /* bursts done or children forked (0: not counted) */
};

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double trace_runs_s(void)
{
	FILE *f = fopen(trace, "r");
	char line[256];
	double s = 0;
	while (f && fgets(line, sizeof line, f)) {
		long long a, b;
		int tid;
		if (sscanf(line, "run %d %lld %lld", &tid, &a, &b) == 3)
			s += (double)(b - a) / 1e9;
	}
	if (f)
		fclose(f);
	return s;
}

static int run_once(const char *const work[], int recorded, struct sample *s)
{
	const char *argv[24];
	size_t n = 0;
	if (recorded) {
		argv[n++] = bench_cfsbw_bin();
		argv[n++] = "record";
		if (recorded == 2)
			argv[n++] = "--poll";
		argv[n++] = "-o";
		argv[n++] = trace;
		argv[n++] = "--";
	}
	argv[n++] = bench_workload_path();
	argv[n++] = "measure";
	argv[n++] = bench_workload_path();
	for (size_t i = 0; work[i] && n < 23; i++)
		argv[n++] = work[i];
	argv[n] = NULL;
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		bench_execv(argv);
		_exit(127);
	}
	close(p[1]);
	char out[4096];
	bench_read_all(p[0], out, sizeof out);
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return -1;
	const char *t = strstr(out, "tree_cpu_us ");
	if (!t)
		return -1;
	s->total_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
	s->tree_s = strtod(t + 12, NULL) / 1e6;
	s->runs_s = recorded ? trace_runs_s() : 0;
	const char *u = strstr(out, "bursts ");
	const char *f = strstr(out, "forky: ");
	s->units = u ? strtod(u + 7, NULL) : f ? strtod(f + 7, NULL) : 0;
	return 0;
}

int main(void)
{
	static const char *const work[][6] = {
		{"spin", "2", "2", NULL},
		{"bursty", "1", "1", "2", NULL},
		{"forky", "2", "5", "2", NULL},
		{"spin", "2", "2", NULL},
		{"bursty", "1", "1", "2", NULL},
	};
	static const char *const names[] = {
		"2 busy threads, 2 s",
		"1 ms bursts every 2 ms, 2 s",
		"fork-heavy: 5 ms children, 2 s",
		"--poll: 2 busy threads, 2 s",
		"--poll: 1 ms bursts, 2 s",
	};
	snprintf(trace, sizeof trace, "/tmp/cfsbw-bench-record-%d.trace",
		 (int)getpid());
	printf("cfsbw record: its cost against the same workload unrecorded "
	       "(best of %d, alternating)\n\n", REPEATS);
	printf("%-32s %10s %10s %10s %9s %9s %9s\n", "workload", "tree cpu s",
	       "recorded", "own cpu s", "own/rec", "unit r/u", "runs/tree");
	for (size_t w = 0; w < sizeof work / sizeof work[0]; w++) {
		struct sample best_u = {1e9, 1e9, 0, 0}, best_r = {1e9, 1e9, 0, 0};
		double best_own = 1e9;
		for (int i = 0; i < REPEATS; i++) {
			struct sample u, r;
			if (run_once(work[w], 0, &u) ||
			    run_once(work[w], w < 3 ? 1 : 2, &r)) {
				fprintf(stderr, "bench_record: %s: a run "
					"failed\n", names[w]);
				return 1;
			}
			if (u.units > 0 && u.tree_s / u.units <
					       best_u.tree_s / best_u.units)
				best_u = u;
			else if (u.units <= 0 && u.tree_s < best_u.tree_s)
				best_u = u;
			/* cfsbw's own CPU: the whole less the tree */
			double own = r.total_s - r.tree_s;
			if (own < best_own)
				best_own = own;
			if (r.units > 0 && r.tree_s / r.units <
					       best_r.tree_s / best_r.units)
				best_r = r;
			else if (r.units <= 0 && r.tree_s < best_r.tree_s)
				best_r = r;
		}
		char ratio[16] = "-";
		if (best_u.units > 0 && best_r.units > 0)
			snprintf(ratio, sizeof ratio, "%.3f",
				 best_r.tree_s / best_r.units /
					 (best_u.tree_s / best_u.units));
		printf("%-32s %10.3f %10.3f %10.4f %8.2f%% %9s %9.3f\n",
		       names[w], best_u.tree_s, best_r.tree_s, best_own,
		       100 * best_own / best_r.runs_s, ratio,
		       best_r.runs_s / best_r.tree_s);
	}
	unlink(trace);
	return 0;
}
