/*
 * fidelity_kernel.c - a simulator scenario run on this machine's kernel
 * (see fidelity_kernel.h).
 *
 * Layout: one parent group per benchmark process, cfsbw-fidelity.PID, with
 * cpu.shares 262144 (v2: cpu.weight 10000), the largest the kernel takes:
 * a task outside it weighs 1024 against 262144, so the other work on a
 * shared machine takes about 0.4% of a CPU the scenario wants, not half.
 * A scenario group /a/b is PARENT/a/b; tasks of "/" run in PARENT itself.
 * On cgroup v1 the cpu and cpuacct hierarchies are mounted apart here, so
 * every group is made in both: cpu for the limits and cpu.stat, cpuacct for
 * the usage.
 *
 * Tasks are processes forked from the benchmark, one per task: each joins
 * its group, says so on a pipe and waits on another until all have joined,
 * then runs its workload until it is killed.  They die with the benchmark
 * (PR_SET_PDEATHSIG).
 */
#include "fidelity_kernel.h"
#include "fidelity_tasks.h"
#include "programs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define V1_CPU "/sys/fs/cgroup/cpu"
#define V1_ACCT "/sys/fs/cgroup/cpuacct"
#define V2_ROOT "/sys/fs/cgroup"
#define PREFIX "cfsbw-fidelity."
#define MAX_PROCS 1024
#define MAX_DIRS 256

static int version; /* 1 or 2 */
static char cpu_base[256], acct_base[256];

/* What the signal handler must undo: processes, then groups, deepest last
 * made first removed. */
/* Each task line's latencies, shared with its tasks (one mapping per
 * run). */
static struct fk_latencies *latencies;
static size_t latencies_len;

static pid_t procs[MAX_PROCS];
static size_t proc_line[MAX_PROCS]; /* its task line, sc->tasks[i] */
static volatile sig_atomic_t nr_procs;
static char dirs[MAX_DIRS][320];
static volatile sig_atomic_t nr_dirs;

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int rc = n < 0 ? -errno : 0;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return rc;
}

/* Kill and reap every task, remove every group: async-signal-safe. */
static void undo(void)
{
	for (int i = 0; i < nr_procs; i++)
		kill(procs[i], SIGKILL);
	for (int i = 0; i < nr_procs; i++)
		waitpid(procs[i], NULL, 0);
	nr_procs = 0;
	for (int i = nr_dirs - 1; i >= 0; i--)
		rmdir(dirs[i]);
	nr_dirs = 0;
}

static void on_signal(int sig)
{
	undo();
	rmdir(cpu_base);
	if (version == 1)
		rmdir(acct_base);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int make_dir(const char *path)
{
	if (nr_dirs >= MAX_DIRS)
		return -ENOSPC;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(dirs[nr_dirs], sizeof dirs[0], "%s", path);
	nr_dirs++;
	return 0;
}

/* Remove a dead run's tree, children first (cgroup dirs hold only files
 * the kernel makes, so rmdir is all it takes). */
static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			char sub[512];
			int n = snprintf(sub, sizeof sub, "%s/%s", path,
					 e->d_name);
			if (n < 0 || (size_t)n >= sizeof sub)
				continue; /* no cgroup of ours is that deep */
			remove_tree(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

static void remove_dead_runs(const char *root)
{
	DIR *d = opendir(root);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, PREFIX, strlen(PREFIX)))
			continue;
		long pid = strtol(e->d_name + strlen(PREFIX), NULL, 10);
		if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			char sub[512];
			snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
			remove_tree(sub);
		}
	}
	closedir(d);
}

const char *fk_cgroup_version(void)
{
	return version == 2 ? "cgroup v2" : "cgroup v1";
}

int fk_setup(char *err, size_t errlen)
{
	char buf[256];
	if (access(V1_CPU "/cpu.shares", F_OK) == 0 &&
	    access(V1_ACCT "/cpuacct.usage", F_OK) == 0) {
		version = 1;
		snprintf(cpu_base, sizeof cpu_base, V1_CPU "/" PREFIX "%d",
			 (int)getpid());
		snprintf(acct_base, sizeof acct_base, V1_ACCT "/" PREFIX "%d",
			 (int)getpid());
	} else if (read_str(V2_ROOT "/cgroup.controllers", buf, sizeof buf) ==
			   0 &&
		   strstr(buf, "cpu")) {
		version = 2;
		snprintf(cpu_base, sizeof cpu_base, V2_ROOT "/" PREFIX "%d",
			 (int)getpid());
	} else {
		snprintf(err, errlen, "no cgroup cpu controller at " V1_CPU
				      " (with " V1_ACCT ") or " V2_ROOT);
		return -1;
	}
	remove_dead_runs(version == 1 ? V1_CPU : V2_ROOT);
	if (version == 1)
		remove_dead_runs(V1_ACCT);
	if (version == 2)
		bench_write_file(V2_ROOT "/cgroup.subtree_control", "+cpu");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	int rc = mkdir(cpu_base, 0755) < 0 ? -errno : 0;
	if (!rc && version == 1)
		rc = mkdir(acct_base, 0755) < 0 ? -errno : 0;
	if (!rc) {
		char f[320];
		snprintf(f, sizeof f, "%s/%s", cpu_base,
			 version == 1 ? "cpu.shares" : "cpu.weight");
		rc = bench_write_file(f, version == 1 ? "262144" : "10000");
		if (!rc && version == 2) {
			snprintf(f, sizeof f, "%s/cgroup.subtree_control",
				 cpu_base);
			rc = bench_write_file(f, "+cpu");
		}
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", cpu_base, strerror(-rc));
		fk_teardown();
		return -1;
	}
	return 0;
}

void fk_teardown(void)
{
	undo();
	rmdir(cpu_base);
	if (version == 1)
		rmdir(acct_base);
}

/* Write one scenario setting; v2 gets the v1 files translated. */
static int write_setting(const char *dir, const struct cfsbw_sim_setting *st,
			 char *v2_max, size_t v2_len)
{
	char f[400], v[64];
	const char *file = st->file, *val = st->value;
	if (version == 2) {
		char quota[32] = "max", period[32] = "100000";
		sscanf(v2_max, "%31s %31s", quota, period);
		if (!strcmp(file, "cpu.cfs_quota_us")) {
			long long q = strtoll(val, NULL, 10);
			snprintf(v2_max, v2_len, "%s %s",
				 q < 0 ? "max" : val, period);
			file = "cpu.max", val = v2_max;
		} else if (!strcmp(file, "cpu.cfs_period_us")) {
			snprintf(v2_max, v2_len, "%s %s", quota, val);
			file = "cpu.max", val = v2_max;
		} else if (!strcmp(file, "cpu.shares")) {
			/* the kernel's own mapping of shares to weight */
			unsigned long long s = strtoull(val, NULL, 10);
			snprintf(v, sizeof v, "%llu",
				 1 + (s - 2) * 9999 / 262142);
			file = "cpu.weight", val = v;
		} else if (!strcmp(file, "cpu.cfs_burst_us")) {
			file = "cpu.max.burst";
		}
	} else if (!strcmp(file, "cpu.max")) {
		char q[32] = "", p[32] = "100000";
		sscanf(val, "%31s %31s", q, p);
		snprintf(f, sizeof f, "%s/cpu.cfs_period_us", dir);
		int rc = bench_write_file(f, p);
		if (rc)
			return rc;
		file = "cpu.cfs_quota_us";
		val = strcmp(q, "max") ? q : "-1";
		snprintf(v, sizeof v, "%s", val);
		val = v;
	}
	if (strncmp(file, "cpu.", 4) || strchr(file, '/') ||
	    !strcmp(file, "cpu.cfs_runtime_us"))
		return -EOPNOTSUPP;
	snprintf(f, sizeof f, "%s/%s", dir, file);
	return bench_write_file(f, val);
}

static int join_group(const char *cpu_dir, const char *acct_dir)
{
	char f[400], me[32];
	snprintf(me, sizeof me, "%d", (int)getpid());
	snprintf(f, sizeof f, "%s/cgroup.procs", cpu_dir);
	int rc = bench_write_file(f, me);
	if (!rc && version == 1) {
		snprintf(f, sizeof f, "%s/cgroup.procs", acct_dir);
		rc = bench_write_file(f, me);
	}
	return rc;
}

/* Busy and steal time of the whole machine, from /proc/stat's cpu line. */
static void machine_time(int64_t *busy_ns, int64_t *steal_ns)
{
	char buf[512];
	unsigned long long v[8] = {0};
	*busy_ns = *steal_ns = 0;
	if (read_str("/proc/stat", buf, sizeof buf) ||
	    sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return;
	int64_t tick_ns = 1000000000 / sysconf(_SC_CLK_TCK);
	/* user nice system [idle iowait] irq softirq; steal apart */
	*busy_ns = (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6]) * tick_ns;
	*steal_ns = (int64_t)v[7] * tick_ns;
}

static int64_t stat_field(const char *text, const char *key)
{
	const char *p = text;
	size_t n = strlen(key);
	while ((p = strstr(p, key))) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
		p += n;
	}
	return 0;
}

/* The group's counters now: usage and cpu.stat, in ns. */
static void snapshot(const char *cpu_dir, const char *acct_dir,
		     struct fk_group *g)
{
	char f[400], buf[1024];
	memset(g, 0, sizeof *g);
	g->first_refresh_ns = -1;
	snprintf(f, sizeof f, "%s/cpu.stat", cpu_dir);
	if (read_str(f, buf, sizeof buf))
		return;
	g->nr_periods = (uint64_t)stat_field(buf, "nr_periods");
	g->nr_throttled = (uint64_t)stat_field(buf, "nr_throttled");
	if (version == 1) {
		g->throttled_ns = stat_field(buf, "throttled_time");
		snprintf(f, sizeof f, "%s/cpuacct.usage", acct_dir);
		if (!read_str(f, buf, sizeof buf))
			g->usage_ns = strtoll(buf, NULL, 10);
	} else {
		g->throttled_ns = stat_field(buf, "throttled_usec") * 1000;
		g->usage_ns = stat_field(buf, "usage_usec") * 1000;
	}
}

static void group_dirs(const char *path, char *cpu_dir, char *acct_dir,
		       size_t len)
{
	if (!strcmp(path, "/"))
		path = "";
	snprintf(cpu_dir, len, "%s%s", cpu_base, path);
	snprintf(acct_dir, len, "%s%s", acct_base, path);
}

static bool measure_first_refresh;

void fk_measure_first_refresh(bool on)
{
	measure_first_refresh = on;
}

/* Whether the group of cpu_dir has a quota (v1's cpu.cfs_quota_us, v2's
 * cpu.max). */
static bool group_limited(const char *cpu_dir)
{
	char f[400], buf[64];
	snprintf(f, sizeof f, "%s/%s", cpu_dir,
		 version == 1 ? "cpu.cfs_quota_us" : "cpu.max");
	if (read_str(f, buf, sizeof buf))
		return false;
	return version == 1 ? strtoll(buf, NULL, 10) >= 0
			    : strncmp(buf, "max", 3) != 0;
}

/*
 * From t0, the start, read the cpu.stat of each limited group every 1 ms
 * until its nr_periods passes start[i]'s count, and note when, in
 * start[i].first_refresh_ns: its period grid's phase, where in a period
 * the kernel refreshes it, which the simulator draws unless told.  At
 * most until stop_ns; each group is read only until its first refresh.
 */
static void watch_first_refresh(const struct cfsbw_sim_scenario *sc,
				struct fk_group *start, int64_t t0,
				int64_t stop_ns)
{
	static const struct timespec ms = {0, 1000000};
	char cpu_dir[320], acct_dir[320], f[400], buf[1024];
	size_t left = 0;
	for (size_t i = 0; i < sc->nr_groups; i++) {
		group_dirs(sc->groups[i].path, cpu_dir, acct_dir,
			   sizeof cpu_dir);
		/* -2: to watch */
		start[i].first_refresh_ns =
			strcmp(sc->groups[i].path, "/") &&
					group_limited(cpu_dir)
				? -2
				: -1;
		left += start[i].first_refresh_ns == -2;
	}
	while (left && now_ns(CLOCK_MONOTONIC) < stop_ns) {
		for (size_t i = 0; i < sc->nr_groups; i++) {
			if (start[i].first_refresh_ns != -2)
				continue;
			group_dirs(sc->groups[i].path, cpu_dir, acct_dir,
				   sizeof cpu_dir);
			snprintf(f, sizeof f, "%s/cpu.stat", cpu_dir);
			if (read_str(f, buf, sizeof buf) ||
			    (uint64_t)stat_field(buf, "nr_periods") <=
				    start[i].nr_periods)
				continue;
			start[i].first_refresh_ns =
				now_ns(CLOCK_MONOTONIC) - t0;
			left--;
		}
		nanosleep(&ms, NULL);
	}
	for (size_t i = 0; i < sc->nr_groups; i++)
		if (start[i].first_refresh_ns == -2)
			start[i].first_refresh_ns = -1;
}

static int make_groups(const struct cfsbw_sim_scenario *sc, char *err,
		       size_t errlen)
{
	char cpu_dir[320], acct_dir[320];
	for (size_t i = 0; i < sc->nr_groups; i++) {
		const struct cfsbw_sim_group_spec *g = &sc->groups[i];
		group_dirs(g->path, cpu_dir, acct_dir, sizeof cpu_dir);
		if (!strcmp(g->path, "/")) {
			if (g->nr_settings) {
				snprintf(err, errlen, "line %u: the root group "
					 "is the benchmark's parent: its files "
					 "stay as they are", g->line);
				return -1;
			}
			continue;
		}
		int rc = make_dir(cpu_dir);
		if (!rc && version == 1)
			rc = make_dir(acct_dir);
		char v2_max[80] = "max 100000";
		for (size_t k = 0; !rc && k < g->nr_settings; k++) {
			rc = write_setting(cpu_dir, &g->settings[k], v2_max,
					   sizeof v2_max);
			if (rc) {
				snprintf(err, errlen, "line %u: %s=%s: %s",
					 g->line, g->settings[k].file,
					 g->settings[k].value, strerror(-rc));
				return -1;
			}
		}
		if (!rc && version == 2) {
			char f[400];
			snprintf(f, sizeof f, "%s/cgroup.subtree_control",
				 cpu_dir);
			bench_write_file(f, "+cpu");
		}
		if (rc) {
			snprintf(err, errlen, "line %u: %s: %s", g->line,
				 cpu_dir, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* Does a group of sc sit below path?  ("/" has every group below it.) */
static bool has_children(const struct cfsbw_sim_scenario *sc,
			 const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < sc->nr_groups; i++) {
		const char *g = sc->groups[i].path;
		if (!strcmp(path, "/") ? strcmp(g, "/") != 0
				       : !strncmp(g, path, n) && g[n] == '/')
			return true;
	}
	return false;
}

/* Task instances that draw random numbers (in the simulator too). */
static int start_tasks(const struct cfsbw_sim_scenario *sc, uint64_t seed,
		       int ready_rd, int ready_wr, int go_rd, int go_wr,
		       char *err, size_t errlen)
{
	char cpu_dir[320], acct_dir[320];
	/*
	 * Each task draws what the simulator draws for it with this seed
	 * (each of its tasks has streams of its own): the same phases,
	 * arrivals and service times on both sides, so the two are compared
	 * on the same sample, not on two samples of a process whose spread
	 * over 5 s is wider than the targets (docs/sim.md).
	 */
	uint64_t index = 0;
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		const struct cfsbw_sim_task_spec *t = &sc->tasks[i];
		if (t->workload == CFSBW_SIM_WL_TRACE) {
			snprintf(err, errlen, "line %u: trace workloads run "
				 "in the simulator only", t->line);
			return -1;
		}
		if (version == 2 && has_children(sc, t->group)) {
			snprintf(err, errlen, "line %u: %s has groups below it:"
				 " cgroup v2 takes tasks in leaf groups only",
				 t->line, t->group);
			return -1;
		}
		group_dirs(t->group, cpu_dir, acct_dir, sizeof cpu_dir);
		for (unsigned k = 0; k < t->count; k++) {
			if (nr_procs >= MAX_PROCS) {
				snprintf(err, errlen, "line %u: more than %d "
					 "tasks", t->line, MAX_PROCS);
				return -1;
			}
			pid_t pid = fork();
			if (pid < 0) {
				snprintf(err, errlen, "fork: %s",
					 strerror(errno));
				return -1;
			}
			if (pid == 0) {
				signal(SIGINT, SIG_DFL);
				signal(SIGTERM, SIG_DFL);
				signal(SIGHUP, SIG_DFL);
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				/* the simulator's sleeps end on time: no
				 * 50 us of timer slack */
				prctl(PR_SET_TIMERSLACK, 1UL);
				close(ready_rd);
				close(go_wr);
				char c = join_group(cpu_dir, acct_dir) ? 'E'
								       : 'k';
				if (write(ready_wr, &c, 1) != 1 || c == 'E')
					_exit(2);
				if (read(go_rd, &c, 1) < 0)
					_exit(2);
				fk_task_main(t, seed, index, &latencies[i]);
			}
			index++;
			proc_line[nr_procs] = i;
			procs[nr_procs] = pid;
			nr_procs++;
		}
	}
	return 0;
}

/*
 * A task's migrations (se.nr_migrations in /proc/PID/sched) and time
 * runnable but waiting for a CPU (run_delay, the second field of
 * /proc/PID/schedstat).  False when either file is missing (a kernel
 * without schedstats or sched debugging).
 */
static bool task_sched(pid_t pid, uint64_t *migrations, int64_t *run_delay)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/sched", (int)pid);
	if (read_str(path, buf, sizeof buf))
		return false;
	const char *m = strstr(buf, "se.nr_migrations");
	const char *colon = m ? strchr(m, ':') : NULL;
	if (!colon)
		return false;
	*migrations = strtoull(colon + 1, NULL, 10);
	snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
	unsigned long long run, delay;
	if (read_str(path, buf, sizeof buf) ||
	    sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return false;
	*run_delay = (int64_t)delay;
	return true;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentiles of a line's latencies, as the simulator's. */
static void percentiles(struct fk_latencies *l, struct fk_line *out)
{
	uint64_t n = __atomic_load_n(&l->count, __ATOMIC_RELAXED);
	if (n > FK_MAX_LATENCIES)
		n = FK_MAX_LATENCIES;
	out->count = n;
	out->p50_ns = out->p99_ns = 0;
	if (!n)
		return;
	qsort(l->ns, n, sizeof l->ns[0], cmp_i64);
	out->p50_ns = l->ns[(n * 50 + 99) / 100 - 1];
	out->p99_ns = l->ns[(n * 99 + 99) / 100 - 1];
}

int fk_run(const struct cfsbw_sim_scenario *sc, int64_t duration_ns,
	   uint64_t seed, struct fk_group *groups, struct fk_line *lines,
	   struct fk_load *load, char *err, size_t errlen)
{
	int ready[2], go[2], rc = -1;
	char buf[128], cpu_dir[320], acct_dir[320];
	memset(load, 0, sizeof *load);
	latencies_len = (sc->nr_tasks ? sc->nr_tasks : 1) * sizeof *latencies;
	latencies = mmap(NULL, latencies_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (latencies == MAP_FAILED) {
		latencies = NULL;
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if (make_groups(sc, err, errlen) ||
	    start_tasks(sc, seed, ready[0], ready[1], go[0], go[1], err,
			errlen))
		goto out;
	close(ready[1]);
	ready[1] = -1;
	for (int i = 0; i < nr_procs; i++) {
		char c;
		if (read(ready[0], &c, 1) != 1 || c != 'k') {
			snprintf(err, errlen, "a task could not join its "
				 "group");
			goto out;
		}
	}
	if (!read_str("/proc/loadavg", buf, sizeof buf))
		load->loadavg1 = strtod(buf, NULL);
	struct fk_group *start = calloc(sc->nr_groups + 1, sizeof *start);
	if (!start) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	int64_t busy0, steal0, busy1, steal1;
	for (size_t i = 0; i < sc->nr_groups; i++) {
		group_dirs(sc->groups[i].path, cpu_dir, acct_dir,
			   sizeof cpu_dir);
		snapshot(cpu_dir, acct_dir, &start[i]);
	}
	snapshot(cpu_base, acct_base, &start[sc->nr_groups]);
	static uint64_t mig0[MAX_PROCS];
	static int64_t delay0[MAX_PROCS];
	bool sched_ok = true;
	for (int i = 0; i < nr_procs; i++)
		sched_ok &= task_sched(procs[i], &mig0[i], &delay0[i]);
	machine_time(&busy0, &steal0);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	close(go[1]); /* every task starts */
	go[1] = -1;
	if (measure_first_refresh) {
		int64_t stop = t0 + 1100 * 1000000LL;
		watch_first_refresh(sc, start, t0,
				    stop < t0 + duration_ns ? stop
							    : t0 + duration_ns);
	}
	fk_sleep_until(t0 + duration_ns);
	int64_t wall = now_ns(CLOCK_MONOTONIC) - t0;
	struct fk_group all;
	for (size_t i = 0; i < sc->nr_groups; i++) {
		group_dirs(sc->groups[i].path, cpu_dir, acct_dir,
			   sizeof cpu_dir);
		snapshot(cpu_dir, acct_dir, &groups[i]);
		groups[i].first_refresh_ns = start[i].first_refresh_ns;
	}
	snapshot(cpu_base, acct_base, &all);
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		lines[i].migrations = 0;
		lines[i].run_delay_ns = 0;
	}
	for (int i = 0; i < nr_procs; i++) {
		uint64_t mig;
		int64_t delay;
		if (!task_sched(procs[i], &mig, &delay)) {
			sched_ok = false;
			continue;
		}
		lines[proc_line[i]].migrations += mig - mig0[i];
		lines[proc_line[i]].run_delay_ns += delay - delay0[i];
	}
	for (size_t i = 0; i < sc->nr_tasks; i++)
		lines[i].sched_read = sched_ok;

	machine_time(&busy1, &steal1);
	for (size_t i = 0; i < sc->nr_groups; i++) {
		groups[i].usage_ns -= start[i].usage_ns;
		groups[i].nr_periods -= start[i].nr_periods;
		groups[i].nr_throttled -= start[i].nr_throttled;
		groups[i].throttled_ns -= start[i].throttled_ns;
	}
	int64_t ours = all.usage_ns - start[sc->nr_groups].usage_ns;
	free(start);
	load->others_cores = (double)(busy1 - busy0 - ours) / (double)wall;
	if (load->others_cores < 0)
		load->others_cores = 0;
	load->steal_cores = (double)(steal1 - steal0) / (double)wall;
	load->wall_ns = wall;
	load->scenario_cores = (double)ours / (double)wall;
	rc = 0;
out:
	undo();
	if (!rc)
		for (size_t i = 0; i < sc->nr_tasks; i++)
			percentiles(&latencies[i], &lines[i]);
	munmap(latencies, latencies_len);
	latencies = NULL;
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
	}
	return rc;
}
