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
		self_cpu_ns, nr_processes, nr_thread_stops;
	bool stats_written;  /* the --stats file held something */
	int stats_exit_status;
};

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
static inline pid_t host_start(const char *const args[], char *stats_path,
			       char *err_path, char *out_path)
{
	static unsigned seq;
	snprintf(stats_path, 128, "/tmp/cfsbw-test-%d-%u.json", (int)getpid(), seq);
	snprintf(err_path, 128, "/tmp/cfsbw-test-%d-%u.err", (int)getpid(), seq);
	snprintf(out_path, 128, "/tmp/cfsbw-test-%d-%u.out", (int)getpid(), seq++);
	unlink(stats_path);
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
	r->stats_written = json[0] != '\0';
	r->stats_exit_status = (int)json_u64(json, "exit_status");
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
