/*
 * bench_groups.c - the host driver's fixed cost per group per period, in
 * daemon mode (issue 15): N groups, one busy process each, held to Q of
 * CPU per 100 ms period.  Reports the driver's own CPU time per group and
 * period, its wake-ups (signalfd reads are not counted here: the driver's
 * CPU time is the figure), and each group's achieved cores.
 *
 *   bench_groups [--seconds S] [--groups N] [--quota-ms Q]
 *
 * Without --groups / --quota-ms: N in 1, 5, 20 and Q in 1, 5.  Env:
 * CFSBW_PROGS (the workload program).  Prints a markdown table
 * (bench/README.md, "Groups").
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfsbw_host.h"

#define MAX_GROUPS 64
#define PERIOD_US 100000

static const char *workload(void)
{
	static char path[4096];
	const char *d = getenv("CFSBW_PROGS");
	snprintf(path, sizeof path, "%s/workload", d ? d : "build/tests/progs");
	return path;
}

static pid_t start_busy(double seconds)
{
	char secs[32];
	snprintf(secs, sizeof secs, "%.3f", seconds);
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execl(workload(), "workload", "spin", secs, (char *)NULL);
		_exit(126);
	}
	return pid;
}

static int64_t self_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

static void stop_after(void *ctx, int fd)
{
	uint64_t n;
	if (read(fd, &n, sizeof n) == (ssize_t)sizeof n)
		cfsbw_host_stop(ctx);
}

static int run_one(unsigned n, int64_t quota_ms, double seconds)
{
	struct cfsbw_host_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.daemon = true;
	struct cfsbw_host *h;
	int err = cfsbw_host_create(&cfg, &h);
	if (err < 0) {
		fprintf(stderr, "bench_groups: %s\n", strerror(-err));
		return 1;
	}
	struct cfsbw_group *g[MAX_GROUPS];
	pid_t pid[MAX_GROUPS];
	char quota[32], path[32];
	snprintf(quota, sizeof quota, "%lld", (long long)quota_ms * 1000);
	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof path, "/g%u", i);
		int64_t now = cfsbw_host_now_ns();
		if (cfsbw_group_create(cfsbw_host_tree(h), path, &g[i]) ||
		    cfsbw_file_write(g[i], "cpu.cfs_period_us", "100000", now) ||
		    cfsbw_file_write(g[i], "cpu.cfs_quota_us", quota, now))
			return 1;
		pid[i] = start_busy(seconds + 5);
		if (cfsbw_host_place(h, pid[i], g[i]) < 0)
			return 1;
	}
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its = {{0, 0},
				 {(time_t)seconds,
				  (long)((seconds - (double)(time_t)seconds) * 1e9)}};
	timerfd_settime(tfd, 0, &its, NULL);
	cfsbw_host_watch_fd(h, tfd, stop_after, h);
	int64_t cpu0 = self_cpu_ns(), t0 = cfsbw_host_now_ns();
	struct cfsbw_host_result res;
	cfsbw_host_run(h, &res);
	int64_t cpu = self_cpu_ns() - cpu0, wall = cfsbw_host_now_ns() - t0;
	uint64_t periods = 0, throttled = 0;
	double min_cores = 1e9, max_cores = 0;
	for (unsigned i = 0; i < n; i++) {
		struct cfsbw_stats st;
		cfsbw_group_stats(g[i], &st);
		periods += st.nr_periods;
		throttled += st.nr_throttled;
		double c = (double)cfsbw_host_group_usage_ns(h, g[i]) / (double)wall;
		min_cores = c < min_cores ? c : min_cores;
		max_cores = c > max_cores ? c : max_cores;
	}
	printf("| %u | %lld ms | %.1f | %llu/%llu | %.4f-%.4f of %.4f | %.1f | %.2f %% |\n",
	       n, (long long)quota_ms, seconds, (unsigned long long)throttled,
	       (unsigned long long)periods, min_cores, max_cores,
	       (double)quota_ms / 100.0,
	       periods ? (double)cpu / (double)periods / 1e3 : 0.0,
	       100.0 * (double)cpu / (double)res.usage_ns);
	fflush(stdout);
	cfsbw_host_unwatch_fd(h, tfd);
	close(tfd);
	for (unsigned i = 0; i < n; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	cfsbw_host_destroy(h);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 5;
	unsigned only_n = 0;
	int64_t only_q = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--groups"))
			only_n = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--quota-ms"))
			only_q = atoi(argv[i + 1]);
	}
	if (seconds <= 0 || seconds > 600 || only_n > MAX_GROUPS) {
		fprintf(stderr, "usage: bench_groups [--seconds S] [--groups N<=%d] "
				"[--quota-ms Q]\n", MAX_GROUPS);
		return 2;
	}
	printf("| groups | quota / 100 ms | s | throttled / periods | cores per "
	       "group (min-max of target) | driver us per group-period | "
	       "driver / governed |\n|---|---|---|---|---|---|---|\n");
	static const unsigned ns[] = {1, 5, 20};
	static const int64_t qs[] = {1, 5};
	for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
		for (size_t b = 0; b < sizeof qs / sizeof qs[0]; b++) {
			if ((only_n && ns[a] != only_n) || (only_q && qs[b] != only_q))
				continue;
			if (run_one(ns[a], qs[b], seconds))
				return 1;
		}
	}
	if (only_n && only_n != 1 && only_n != 5 && only_n != 20)
		return run_one(only_n, only_q ? only_q : 1, seconds);
	return 0;
}
