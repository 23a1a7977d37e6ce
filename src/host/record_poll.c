/*
 * record_poll.c - `cfsbw record` where the kernel refuses perf events
 * (perf_event_paranoid 3, a seccomp filter), or with --poll: the recorded
 * threads' CPU clocks read every millisecond, as the same records
 * (record_int.h) the perf source gives.
 *
 * Each thread's /proc/PID/task/TID/schedstat (its CPU time in ns, the
 * first field) stays open and is read with pread every 1 ms.  A thread
 * whose CPU time grew ran (see poll_sample for how runs are placed); a
 * run ends blocked or preempted as its state says (/proc/.../stat: R is
 * runnable).  The runs add up to the CPU time; a sleep's start and end
 * are within a millisecond, a preemption's within a tick.  Every 5 ms the processes' task directories and each
 * thread's children file are read for new threads and processes: one
 * that lives less than that is missed, and one that is found late has
 * its CPU time so far as one run before its discovery.  The cost is a few
 * microseconds per thread per millisecond (bench/README.md).
 */
#include "host/record_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DISCOVER_EVERY 5 /* ticks */
/* longer than a tick at HZ 100: a runnable thread whose CPU time has not
 * grown for this long was preempted */
#define LAZY_NS 12000000

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t read_exec_ns(int fd)
{
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 'X';
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 'X';
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* comm may hold anything */
	return p && p[1] == ' ' ? p[2] : 'X';
}

static void emit(struct rec_poll *p, rec_raw_fn *fn, void *ctx,
		 enum rec_kind kind, const struct poll_thread *t, int64_t at,
		 bool preempted)
{
	struct rec_raw r;
	memset(&r, 0, sizeof r);
	r.time_ns = at;
	r.seq = p->seq++;
	r.pid = (uint32_t)t->pid;
	r.tid = (uint32_t)t->tid;
	r.parent_tid = (uint32_t)t->parent;
	r.kind = (uint8_t)kind;
	r.preempted = preempted;
	if (kind == REC_COMM)
		memcpy(r.comm, t->comm, sizeof r.comm);
	fn(ctx, &r);
}

/* A thread's name now; true if it changed (exec). */
static bool comm_changed(struct poll_thread *t)
{
	char path[64], buf[32];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)t->pid,
		 (int)t->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!strncmp(buf, t->comm, sizeof t->comm - 1))
		return false;
	snprintf(t->comm, sizeof t->comm, "%.15s", buf);
	return true;
}

static bool tracked(const struct rec_poll *p, pid_t tid)
{
	for (size_t i = 0; i < p->nr; i++)
		if (p->t[i].tid == tid)
			return true;
	return false;
}

int cfsbw_host__poll_add(struct rec_poll *p, pid_t pid, pid_t tid,
			 pid_t parent, bool from_now)
{
	if (tracked(p, tid))
		return 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct poll_thread *q = realloc(p->t, cap * sizeof *q);
		if (!q) {
			close(fd);
			return -ENOMEM;
		}
		p->t = q;
		p->cap = cap;
	}
	struct poll_thread *t = &p->t[p->nr++];
	*t = (struct poll_thread){.pid = pid, .tid = tid, .parent = parent,
				  .fd = fd, .fresh = !from_now};
	if (from_now) { /* already known: only what it runs from now */
		t->exec_ns = read_exec_ns(fd);
		comm_changed(t);
	}
	return 0;
}

/* Threads and child processes of what is tracked that are not, yet; new
 * names of those that are. */
static void discover(struct rec_poll *p, rec_raw_fn *fn, void *ctx,
		     int64_t now)
{
	char path[96], buf[4096];
	size_t n = p->nr; /* what is added now is looked at next time */
	for (size_t i = 0; i < n; i++) {
		if (!p->t[i].fresh && comm_changed(&p->t[i]))
			emit(p, fn, ctx, REC_COMM, &p->t[i], now, false);
		struct poll_thread *t = &p->t[i];
		if (t->tid == t->pid) {
			snprintf(path, sizeof path, "/proc/%d/task", (int)t->pid);
			DIR *d = opendir(path);
			struct dirent *e;
			while (d && (e = readdir(d))) {
				pid_t tid = (pid_t)atoi(e->d_name);
				if (tid > 0)
					cfsbw_host__poll_add(p, t->pid, tid,
							     t->pid, false);
			}
			if (d)
				closedir(d);
		}
		snprintf(path, sizeof path, "/proc/%d/task/%d/children",
			 (int)p->t[i].pid, (int)p->t[i].tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t k = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[k > 0 ? k : 0] = '\0';
		pid_t parent = p->t[i].tid;
		for (char *s = buf, *end; *s; s = end) {
			long c = strtol(s, &end, 10);
			if (end == s)
				break;
			if (c > 0)
				cfsbw_host__poll_add(p, (pid_t)c, (pid_t)c,
						     parent, false);
		}
	}
}

/*
 * The kernel brings a thread's CPU time (schedstat) up to date when it
 * switches and at its ticks, not when it is read: a running thread's time
 * grows in steps of a tick.  So an open run is kept as its start and the
 * CPU time it has grown since (end_guess = start + that), ends when the
 * thread is found not runnable (its time was brought up to date when it
 * blocked) or has not grown for LAZY_NS while runnable (preempted), and a
 * step that cannot fit since the run's end opens a new run.
 */
void cfsbw_host__poll_sample(struct rec_poll *p, rec_raw_fn *fn, void *ctx)
{
	int64_t now = mono_ns();
	if (p->tick++ % DISCOVER_EVERY == 0)
		discover(p, fn, ctx, now);
	for (size_t i = 0; i < p->nr;) {
		struct poll_thread *t = &p->t[i];
		int64_t exec = read_exec_ns(t->fd);
		if (exec < 0) {
			/* gone: a running thread ends where its CPU time was
			 * last brought up to date (guessing more overcounted
			 * short processes, read as zombies with all of it) */
			int64_t at = t->running ? t->end_guess : now;
			if (t->running)
				emit(p, fn, ctx, REC_SWITCH_OUT, t, at, false);
			emit(p, fn, ctx, REC_EXIT, t, at, false);
			close(t->fd);
			p->t[i] = p->t[--p->nr];
			continue;
		}
		int64_t grew = exec - t->exec_ns;
		if (t->fresh) { /* found: its CPU time so far, as one run */
			t->fresh = false;
			comm_changed(t);
			int64_t born = now - grew;
			emit(p, fn, ctx, REC_FORK, t, born, false);
			emit(p, fn, ctx, REC_COMM, t, born, false);
			t->last_out = born;
			if (grew > 0) {
				emit(p, fn, ctx, REC_SWITCH_IN, t, born, false);
				t->running = true;
				t->end_guess = now;
			}
		} else if (grew > 0 && t->running &&
			   now - grew <= t->end_guess + LAZY_NS) {
			t->end_guess += grew; /* it went on */
			if (t->end_guess > now)
				t->end_guess = now;
		} else if (grew > 0) {
			if (t->running) { /* a gap: it waited in between */
				emit(p, fn, ctx, REC_SWITCH_OUT, t, t->end_guess,
				     true);
				t->last_out = t->end_guess;
			}
			int64_t at = now - grew < t->last_out ? t->last_out
							      : now - grew;
			emit(p, fn, ctx, REC_SWITCH_IN, t, at, false);
			t->running = true;
			t->end_guess = at + grew;
		} else if (t->running) {
			char st = thread_state(t->pid, t->tid);
			if (st != 'R' || now - t->end_guess > LAZY_NS) {
				emit(p, fn, ctx, REC_SWITCH_OUT, t, t->end_guess,
				     st == 'R');
				t->running = false;
				t->last_out = t->end_guess;
			}
		}
		t->exec_ns = exec;
		i++;
	}
	p->last_ns = now;
}

void cfsbw_host__poll_close(struct rec_poll *p)
{
	for (size_t i = 0; i < p->nr; i++)
		close(p->t[i].fd);
	free(p->t);
	memset(p, 0, sizeof *p);
}
