/*
 * test_daemon_procs.h - what the tests of the daemon with real processes
 * share: busy workloads stopped at the end, the daemon's files read over
 * its socket (works without /dev/fuse), windows aligned on period
 * boundaries.  Header-only, as test_daemon.h.
 */
#ifndef CFSBW_TEST_DAEMON_PROCS_H
#define CFSBW_TEST_DAEMON_PROCS_H

#include <dirent.h>
#include <stdarg.h>
#include <sys/prctl.h>

#include "daemon/daemon.h"
#include "test_daemon.h"

static pid_t busy_pids[8];
static unsigned nr_busy;

/* workload spin SECONDS THREADS, killed by stop_all(). */
static inline pid_t busy(int seconds, int threads)
{
	char s[16], t[16];
	snprintf(s, sizeof s, "%d", seconds);
	snprintf(t, sizeof t, "%d", threads);
	const char *argv[] = {host_workload(), "spin", s, t, NULL};
	pid_t pid = dmn_spawn(argv, NULL, NULL);
	busy_pids[nr_busy++] = pid;
	return pid;
}

static inline void stop_all(void)
{
	for (unsigned i = 0; i < nr_busy; i++) {
		kill(busy_pids[i], SIGKILL);
		waitpid(busy_pids[i], NULL, 0);
	}
	nr_busy = 0;
}

/*
 * One request over the daemon's socket (works without /dev/fuse too): the
 * reply's status (0, a positive errno, or negative when unreachable) and,
 * on 0, its text in *reply (the caller frees it).
 */
static inline int dmn_ask(const struct dmn *m, char **reply, const char *fmt,
			  ...) __attribute__((format(printf, 3, 4)));
static inline int dmn_ask(const struct dmn *m, char **reply, const char *fmt,
			  ...)
{
	char req[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(req, sizeof req, fmt, ap);
	va_end(ap);
	*reply = NULL;
	int fd = cfsbw_daemon_connect(m->sock);
	if (fd < 0)
		return fd;
	int st = cfsbw_daemon_call(fd, req, reply);
	close(fd);
	if (st) {
		free(*reply);
		*reply = NULL;
	}
	return st;
}

/* A number from a file of the daemon: the file's first number, or the one
 * after key; -1 when it cannot be read. */
static inline int64_t get_num(const struct dmn *m, const char *group,
			      const char *file, const char *key)
{
	char *reply;
	int64_t v = -1;
	if (dmn_ask(m, &reply, "get %s %s", group, file) == 0) {
		const char *p = key ? strstr(reply, key) : reply;
		if (p)
			v = strtoll(p + (key ? strlen(key) : 0), NULL, 10);
	}
	free(reply);
	return v;
}

/* cgroup.procs of group through the socket: its length, or -1. */
static inline int dmn_read_ctl(const struct dmn *m, const char *group,
			       char *buf, size_t size)
{
	char *reply;
	int n = dmn_ask(m, &reply, "get %s cgroup.procs", group) == 0
			? snprintf(buf, size, "%s", reply)
			: -1;
	free(reply);
	return n;
}

static inline int ctl(const struct dmn *m, const char *request)
{
	char *reply;
	int st = dmn_ask(m, &reply, "%s", request);
	free(reply);
	return st;
}

/* One group's line of the "stat" request: its figures at one instant. */
struct gstat {
	int64_t nr_periods, nr_throttled, usage_ns;
};

static inline int group_stat(const struct dmn *m, const char *group,
			     struct gstat *g)
{
	char *reply;
	long long q, per, np, nt, tt, u;
	/* After the header: "PATH quota period nr_periods nr_throttled
	 * throttled_time usage nr_procs". */
	const char *line = dmn_ask(m, &reply, "stat %s", group) == 0
				   ? strchr(reply, '\n')
				   : NULL;
	int n = line ? sscanf(line + 1, "%*s %lld %lld %lld %lld %lld %lld", &q,
			      &per, &np, &nt, &tt, &u)
		     : 0;
	free(reply);
	if (n != 6)
		return -1;
	g->nr_periods = np;
	g->nr_throttled = nt;
	g->usage_ns = u;
	return 0;
}

/* Sleep until group's nr_periods steps (2 s at most); *g is then. */
static inline int next_boundary_stat(const struct dmn *m, const char *group,
			      struct gstat *g)
{
	struct gstat g0;
	if (group_stat(m, group, &g0))
		return -1;
	for (int i = 0; i < 4000; i++) {
		if (group_stat(m, group, g))
			return -1;
		if (g->nr_periods != g0.nr_periods)
			return 0;
		usleep(500);
	}
	return -1;
}

/*
 * CPU time group used per period over k whole periods, in ms: the window
 * starts and ends when nr_periods steps, its usage read in the same reply.
 * *thr: the periods it was throttled in.
 */
static inline double usage_per_period_ms(const struct dmn *m, const char *group,
				  int k, int64_t *thr)
{
	struct gstat a, b;
	if (next_boundary_stat(m, group, &a))
		return -1;
	for (int i = 0; i < k; i++)
		if (next_boundary_stat(m, group, &b))
			return -1;
	*thr = b.nr_throttled - a.nr_throttled;
	return (double)(b.usage_ns - a.usage_ns) / 1e6 /
	       (double)(b.nr_periods - a.nr_periods);
}

static inline int write_pid(const struct dmn *m, const char *group, pid_t pid)
{
	char text[32];
	snprintf(text, sizeof text, "%d\n", (int)pid);
	return dmn_write(m, group, "cgroup.procs", text);
}

static inline char proc_state_any(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	char state = '?';
	if (!d)
		return state;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char st = proc_state((int)pid, atoi(e->d_name));
		if (state == '?' || st == 't')
			state = st;
	}
	closedir(d);
	return state;
}

#endif
