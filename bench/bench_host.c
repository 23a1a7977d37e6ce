/*
 * bench_host.c - host enforcement, side by side: cfsbw run, the kernel's own
 * CFS bandwidth control (a cgroup v1 cpu group, when this machine lets us
 * make one), and Debian's cpulimit, on the same workloads in one run.
 *
 * For each workload and limiter: achieved cores (the workload tree's CPU
 * time by the kernel's count, from wait4's rusage, over its wall time),
 * the error against the target (min(limit, demand, CPUs)), and the
 * limiter's own CPU time.  The bursty workload (30 ms of CPU, 70 ms asleep)
 * also reports how long each burst took in wall time, median and max.
 *
 *   bench_host [--seconds S] [--only NAME]
 *
 * Env: CFSBW_BIN (the command), CFSBW_PROGS (the workload program).  The
 * cgroup, under /sys/fs/cgroup/cpu, is used only here, never by cfsbw.
 * Prints a markdown table (bench/README.md, "Host enforcement").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "programs.h"

#define CGROUP_DIR "/sys/fs/cgroup/cpu/cfsbw-bench"
#define CPULIMIT "/usr/bin/cpulimit"
#define PERIOD_US 100000

struct workload {
	const char *name;
	const char *what;
	double limit;  /* CPUs */
	double demand; /* CPUs it would use alone */
	bool multi;    /* several processes: cpulimit needs -m */
	const char *args[6]; /* after "workload"; "S" is the duration */
};

static const struct workload workloads[] = {
	{"busy1", "1 busy process", 0.2, 1, false, {"spin", "S"}},
	{"busy4", "4 busy processes", 1.5, 4, true, {"procs", "4", "S"}},
	{"threads4", "1 process, 4 threads", 0.5, 4, false, {"spin", "S", "4"}},
	/* More busy threads than CPUs: the kernel's CPU-time timer comes late
	 * (docs/host.md, section 8). */
	{"threads32", "1 process, 32 threads", 0.5, 32, false,
	 {"spin", "S", "32"}},
	/* A thread pool: the sleepers are not stopped at each throttle
	 * (docs/host.md, section 4). */
	{"pool", "1 process, 2 busy + 30 asleep threads", 0.5, 2, false,
	 {"spin", "S", "2", "30"}},
	{"bursty", "30 ms busy / 70 ms asleep", 0.2, 0.3, false,
	 {"bursty", "30", "70", "S"}},
	{"forky", "fork-heavy: 2 live children of 20 ms CPU", 0.5, 2, true,
	 {"forky", "2", "20", "S"}},
};

enum limiter { L_NONE, L_CFSBW, L_KERNEL, L_CPULIMIT, L_COUNT };
static const char *const limiter_names[] = {"none", "cfsbw", "kernel CFS",
					    "cpulimit"};

struct result {
	bool ok;
	double cores, own_ms, wall_s;
	long burst_median_us, burst_max_us;
	unsigned long long nr_periods, nr_throttled;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static bool cgroup_setup(double limit)
{
	mkdir(CGROUP_DIR, 0755);
	char q[32];
	snprintf(q, sizeof q, "%d", (int)(limit * PERIOD_US + 0.5));
	return bench_write_file(CGROUP_DIR "/cpu.cfs_period_us", "100000") == 0 &&
	       bench_write_file(CGROUP_DIR "/cpu.cfs_quota_us", q) == 0;
}

static void cgroup_stat(struct result *r)
{
	FILE *f = fopen(CGROUP_DIR "/cpu.stat", "r");
	if (!f)
		return;
	char key[64];
	unsigned long long v;
	while (fscanf(f, "%63s %llu", key, &v) == 2) {
		if (!strcmp(key, "nr_periods"))
			r->nr_periods = v;
		else if (!strcmp(key, "nr_throttled"))
			r->nr_throttled = v;
	}
	fclose(f);
}

static void cgroup_remove(void)
{
	rmdir(CGROUP_DIR);
}

/* One run: the workload under one limiter. */
static struct result run_one(const struct workload *w, enum limiter l,
			     const char *seconds)
{
	struct result r;
	memset(&r, 0, sizeof r);
	const char *argv[24];
	int n = 0;
	char quota[32], pct[16], stats[64];
	snprintf(quota, sizeof quota, "%dus", (int)(w->limit * PERIOD_US + 0.5));
	snprintf(pct, sizeof pct, "%d", (int)(w->limit * 100 + 0.5));
	snprintf(stats, sizeof stats, "/tmp/bench-host-%d.json", (int)getpid());

	if (l == L_CFSBW) {
		argv[n++] = bench_cfsbw_bin();
		argv[n++] = "run";
		argv[n++] = "--quota";
		argv[n++] = quota;
		argv[n++] = "--period";
		argv[n++] = "100ms";
		argv[n++] = "--stats";
		argv[n++] = stats;
		argv[n++] = "--";
	}
	if (l == L_KERNEL && !cgroup_setup(w->limit))
		return r;
	argv[n++] = bench_workload_path();
	for (int i = 0; w->args[i]; i++)
		argv[n++] = strcmp(w->args[i], "S") ? w->args[i] : seconds;
	argv[n] = NULL;

	int out[2];
	if (pipe(out) < 0)
		return r;
	fflush(stdout);
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		close(out[0]);
		dup2(out[1], 1);
		/* the workload's own chatter ("forky: N children") */
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 2);
		if (l == L_KERNEL) {
			char me[16];
			snprintf(me, sizeof me, "%d", (int)getpid());
			bench_write_file(CGROUP_DIR "/cgroup.procs", me);
		}
		bench_execv(argv);
		_exit(127);
	}
	close(out[1]);
	pid_t lim = -1;
	if (l == L_CPULIMIT) {
		lim = fork();
		if (lim == 0) {
			char target[16];
			snprintf(target, sizeof target, "%d", (int)pid);
			int devnull = open("/dev/null", O_WRONLY);
			dup2(devnull, 1);
			dup2(devnull, 2);
			if (w->multi)
				execl(CPULIMIT, CPULIMIT, "-p", target, "-l", pct,
				      "-z", "-q", "-m", (char *)NULL);
			else
				execl(CPULIMIT, CPULIMIT, "-p", target, "-l", pct,
				      "-z", "-q", (char *)NULL);
			_exit(127);
		}
	}
	char text[512];
	bench_read_all(out[0], text, sizeof text);
	int status;
	struct rusage ru;
	wait4(pid, &status, 0, &ru);
	r.wall_s = now_s() - t0;
	double cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
	if (lim > 0) {
		struct rusage lr;
		int ls;
		/* cpulimit -z exits when its target does; do not wait long. */
		for (int i = 0; i < 300; i++) {
			if (wait4(lim, &ls, WNOHANG, &lr) == lim)
				break;
			if (i == 299) {
				kill(lim, SIGTERM);
				wait4(lim, &ls, 0, &lr);
			}
			struct timespec ms10 = {0, 10000000};
			nanosleep(&ms10, NULL);
		}
		r.own_ms = (tv_s(lr.ru_utime) + tv_s(lr.ru_stime)) * 1e3;
		/* cpulimit -m leaves per-child monitors behind: end them. */
		if (system("pkill -x -TERM cpulimit >/dev/null 2>&1") != 0) {
			/* none left */
		}
	}
	if (l == L_CFSBW) {
		char json[2048];
		bench_stats_take(stats, json, sizeof json);
		double self = (double)bench_json_u64(json, "self_cpu_ns") / 1e9;
		cpu -= self; /* rusage covered cfsbw and its tree */
		r.own_ms = self * 1e3;
		r.nr_periods = bench_json_u64(json, "nr_periods");
		r.nr_throttled = bench_json_u64(json, "nr_throttled");
	}
	if (l == L_KERNEL) {
		cgroup_stat(&r);
		cgroup_remove();
	}
	r.cores = cpu / r.wall_s;
	char *b = strstr(text, "median_us ");
	if (b)
		r.burst_median_us = atol(b + 10);
	b = strstr(text, "max_us ");
	if (b)
		r.burst_max_us = atol(b + 7);
	r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	return r;
}

int main(int argc, char **argv)
{
	const char *seconds = "5";
	const char *only = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = argv[i + 1];
		else if (!strcmp(argv[i], "--only"))
			only = argv[i + 1];
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	bool have_cgroup = access("/sys/fs/cgroup/cpu", W_OK) == 0 &&
			   cgroup_setup(1.0);
	cgroup_remove();
	bool have_cpulimit = access(CPULIMIT, X_OK) == 0;

	printf("## Host enforcement\n\n");
	printf("`make bench` (bench/bench_host.c): %s s per run, period 100 ms, "
	       "%ld CPUs; achieved = the workload tree's CPU time (wait4 rusage) "
	       "/ wall time; target = min(limit, demand, CPUs); own CPU = the "
	       "limiter's CPU time (the kernel's is inside the kernel).%s%s\n\n",
	       seconds, ncpu, have_cgroup ? "" : " No cgroup: kernel column skipped.",
	       have_cpulimit ? "" : " No cpulimit: its column skipped.");
	printf("| workload | limit | target | limiter | achieved cores | error "
	       "| own CPU ms (%% of governed) | nr_periods / nr_throttled "
	       "| burst wall ms median / max |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
		const struct workload *w = &workloads[i];
		if (only && strcmp(only, w->name))
			continue;
		double target = w->limit;
		if (w->demand < target)
			target = w->demand;
		if ((double)ncpu < target)
			target = (double)ncpu;
		for (int l = 0; l < L_COUNT; l++) {
			if (l == L_NONE && strcmp(w->name, "bursty"))
				continue; /* the unlimited burst is the baseline */
			if ((l == L_KERNEL && !have_cgroup) ||
			    (l == L_CPULIMIT && !have_cpulimit))
				continue;
			struct result r = run_one(w, (enum limiter)l, seconds);
			double err = 100.0 * (r.cores - target) / target;
			char stat[64] = "";
			if (l == L_CFSBW || l == L_KERNEL)
				snprintf(stat, sizeof stat, "%llu / %llu",
					 r.nr_periods, r.nr_throttled);
			char burst[64] = "";
			if (r.burst_median_us)
				snprintf(burst, sizeof burst, "%.1f / %.1f",
					 (double)r.burst_median_us / 1e3,
					 (double)r.burst_max_us / 1e3);
			char own[64] = "–";
			if (l == L_CFSBW || l == L_CPULIMIT)
				snprintf(own, sizeof own, "%.1f (%.2f %%)",
					 r.own_ms,
					 100.0 * r.own_ms / 1e3 /
						 (r.cores * r.wall_s));
			char limit[32] = "none";
			if (l != L_NONE)
				snprintf(limit, sizeof limit, "%.2f CPU",
					 w->limit);
			printf("| %s (%s) | %s | %.2f | %s | %.3f | %+.1f %%%s | %s | %s | %s |\n",
			       w->name, w->what, limit,
			       l == L_NONE ? w->demand : target,
			       limiter_names[l], r.cores,
			       l == L_NONE ? 0.0 : err, r.ok ? "" : " (failed)",
			       own, stat, burst);
			fflush(stdout);
		}
	}
	return 0;
}
