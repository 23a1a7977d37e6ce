/*
 * test_host.h - running `cfsbw run` from the host tests: the command is
 * found in CFSBW_BIN and the workload program in CFSBW_PROGS (make test
 * sets both).  Header-only so that each test program stays one file.
 */
#ifndef CFSBW_TEST_HOST_H
#define CFSBW_TEST_HOST_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct run_result {
	int status;          /* wait status of cfsbw */
	int exit_code;       /* shell convention: code or 128 + signal */
	double wall_s;       /* measured by the test */
	double tree_cpu_s;   /* rusage of cfsbw and every reaped descendant */
	char err[8192];      /* cfsbw's stderr */
	char out[4096];      /* cfsbw's stdout */
	/* --stats fields (0 when absent) */
	uint64_t nr_periods, nr_throttled, throttled_time, usage_ns, wall_ns,
		self_cpu_ns, nr_processes, nr_thread_stops, nr_ungoverned,
		unpaid_ns;
	bool stats_written;  /* the --stats file held something */
	int stats_exit_status;
	/*
	 * What the machine gave the busy threads of "workload spin" and
	 * "workload procs" (tests/progs/workload.c, CFSBW_SCHED_LOG): their
	 * count, time on a CPU, waiting on a runqueue and held stopped by
	 * cfsbw, and the most one thread was held, in ns.
	 */
	uint64_t busy_threads, busy_run_ns, busy_wait_ns, busy_held_ns,
		busy_max_held_ns;
	/* cfsbw's own time waiting for a CPU (its schedstat), in ns. */
	uint64_t cfsbw_wait_ns;
	/* --pid tests: the kernel's count of the workloads' CPU, in ns. */
	uint64_t reaped_cpu_ns;
};

/*
 * How much longer than its group was throttled a busy thread may be held,
 * beyond cfsbw's own wait for a CPU: stopping and resuming it (a
 * PTRACE_CONT per thread at each refresh, 30-40 us here, docs/host.md
 * section 3) and holding a new process until its parent's fork event
 * names it.  Measured: see HELD_SLACK_S's figures in docs/host.md,
 * section 7.
 */
#define HELD_SLACK_S 0.05

/* How much longer than its group was throttled, and than cfsbw waited
 * for a CPU, a busy thread was held, in s: what the timing checks bound
 * by HELD_SLACK_S. */
static inline double held_excess_s(const struct run_result *r)
{
	return (double)r->busy_max_held_ns / 1e9 -
	       (double)(r->throttled_time + r->cfsbw_wait_ns) / 1e9;
}

static inline double host_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline const char *host_bin(void)
{
	const char *b = getenv("CFSBW_BIN");
	return b ? b : "build/cfsbw";
}

/* The workload program (tests/progs/workload.c). */
static inline const char *host_workload(void)
{
	static char path[4096];
	const char *d = getenv("CFSBW_PROGS");
	snprintf(path, sizeof path, "%s/workload", d ? d : "build/tests/progs");
	return path;
}

static inline uint64_t json_u64(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *p = strstr(json, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

static inline void slurp(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/*
 * Start `cfsbw run --stats FILE args...`; returns its pid.  Output goes to
 * temporary files read by host_finish().
 */
static inline void sched_log_path(const char *stats_path, char *path)
{
	snprintf(path, 136, "%s.sched", stats_path);
}

/* Adds up the lines of a CFSBW_SCHED_LOG file into r, then removes it. */
static inline void sched_log_read(const char *path, struct run_result *r)
{
	FILE *f = fopen(path, "r");
	unsigned long long n, run, wait, held, max_held;
	while (f && fscanf(f, "busy %llu run_ns %llu wait_ns %llu held_ns %llu "
			   "max_held_ns %llu\n", &n, &run, &wait, &held,
			   &max_held) == 5) {
		r->busy_threads += n;
		r->busy_held_ns += held;
		if (max_held > r->busy_max_held_ns)
			r->busy_max_held_ns = max_held;
		r->busy_run_ns += run;
		r->busy_wait_ns += wait;
	}
	if (f)
		fclose(f);
	unlink(path);
}

/* In a child: become the workload, with args after "workload". */
static inline _Noreturn void host_exec_workload(const char *const args[])
{
	char *argv[16];
	int n = 0;
	argv[n++] = (char *)(uintptr_t)"workload";
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)(uintptr_t)args[i];
	argv[n] = NULL;
	execv(host_workload(), argv);
	_exit(127);
}

/*
 * For --pid tests: start the workload with args (after "workload") outside
 * cfsbw, its busy threads reporting to sched_path (CFSBW_SCHED_LOG).
 */
static inline pid_t host_spawn_workload(const char *const args[],
					const char *sched_path)
{
	fflush(stdout);
	fflush(stderr);
	int fd = open(sched_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("CFSBW_SCHED_LOG", sched_path, 1);
		host_exec_workload(args);
	}
	return pid;
}

/*
 * For tests that run a host driver in their own process: start the
 * workload with args as a child, not traced, with an empty signal mask
 * (the driver blocks its signals in this process; a workload must not
 * inherit that).
 */
static inline pid_t host_fork_workload(const char *const args[])
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		host_exec_workload(args);
	}
	return pid;
}

/*
 * Reaps a workload from host_spawn_workload: its sched log (unless
 * sched_path is NULL: several workloads may share one) and the
 * kernel's count of its CPU time (its rusage) are added to r; returns its
 * wait status.
 */
static inline int host_reap_workload(pid_t pid, const char *sched_path,
				     struct run_result *r)
{
	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	r->reaped_cpu_ns += (uint64_t)ru.ru_utime.tv_sec * 1000000000u +
			    (uint64_t)ru.ru_utime.tv_usec * 1000u +
			    (uint64_t)ru.ru_stime.tv_sec * 1000000000u +
			    (uint64_t)ru.ru_stime.tv_usec * 1000u;
	if (sched_path)
		sched_log_read(sched_path, r);
	return status;
}

static inline pid_t host_start(const char *const args[], char *stats_path,
			       char *err_path, char *out_path)
{
	static unsigned seq;
	snprintf(stats_path, 128, "/tmp/cfsbw-test-%d-%u.json", (int)getpid(), seq);
	snprintf(err_path, 128, "/tmp/cfsbw-test-%d-%u.err", (int)getpid(), seq);
	snprintf(out_path, 128, "/tmp/cfsbw-test-%d-%u.out", (int)getpid(), seq++);
	char sched_path[136];
	sched_log_path(stats_path, sched_path);
	unlink(stats_path);
	/* Created here, empty: the workload only appends to it. */
	int fd = open(sched_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	const char *argv[64];
	int n = 0;
	argv[n++] = host_bin();
	argv[n++] = "run";
	argv[n++] = "--stats";
	argv[n++] = stats_path;
	for (int i = 0; args[i] && n < 62; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(e, 2);
		dup2(o, 1);
		setenv("CFSBW_SCHED_LOG", sched_path, 1);
		/* execv's argv is char *const[]; the strings are not written. */
		char *cargv[64];
		memcpy(cargv, argv, sizeof cargv);
		execv(argv[0], cargv);
		_exit(126);
	}
	return pid;
}

static inline void host_finish(pid_t pid, double t0, const char *stats_path,
			       const char *err_path, const char *out_path,
			       struct run_result *r)
{
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	/* cfsbw's schedstat, read while it is a zombie, before the reap. */
	siginfo_t si;
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 &&
	       errno == EINTR)
		;
	char path[64], sched[128];
	snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
	slurp(path, sched, sizeof sched);
	unsigned long long on_cpu = 0, waited = 0;
	if (sscanf(sched, "%llu %llu", &on_cpu, &waited) == 2)
		r->cfsbw_wait_ns = waited;
	while (wait4(pid, &r->status, 0, &ru) < 0 && errno == EINTR)
		;
	r->wall_s = host_now_s() - t0;
	r->tree_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	r->exit_code = WIFEXITED(r->status) ? WEXITSTATUS(r->status)
					    : 128 + WTERMSIG(r->status);
	slurp(err_path, r->err, sizeof r->err);
	slurp(out_path, r->out, sizeof r->out);
	char json[4096];
	slurp(stats_path, json, sizeof json);
	r->nr_periods = json_u64(json, "nr_periods");
	r->nr_throttled = json_u64(json, "nr_throttled");
	r->throttled_time = json_u64(json, "throttled_time");
	r->usage_ns = json_u64(json, "usage_ns");
	r->wall_ns = json_u64(json, "wall_ns");
	r->self_cpu_ns = json_u64(json, "self_cpu_ns");
	r->nr_processes = json_u64(json, "nr_processes");
	r->nr_thread_stops = json_u64(json, "nr_thread_stops");
	r->nr_ungoverned = json_u64(json, "nr_ungoverned");
	r->unpaid_ns = json_u64(json, "unpaid_ns");
	r->stats_written = json[0] != '\0';
	r->stats_exit_status = (int)json_u64(json, "exit_status");
	char sched_path[136];
	sched_log_path(stats_path, sched_path);
	sched_log_read(sched_path, r);
	unlink(stats_path);
	unlink(err_path);
	unlink(out_path);
}

/* Run `cfsbw run --stats FILE args...` to completion. */
static inline void host_run(const char *const args[], struct run_result *r)
{
	char sp[128], ep[128], op[128];
	memset(r, 0, sizeof *r);
	double t0 = host_now_s();
	pid_t pid = host_start(args, sp, ep, op);
	host_finish(pid, t0, sp, ep, op, r);
}

/* The one-letter state of a process or thread ('?' when gone). */
static inline char proc_state(int pid, int tid)
{
	char path[96], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	slurp(path, buf, sizeof buf);
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

#endif
