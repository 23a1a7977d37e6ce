/*
 * record.c - `cfsbw record`: run and sleep intervals of real threads, from
 * the kernel's context-switch records (record.h, record_perf.c).
 *
 * A command is started blocked on a pipe, its events opened with
 * enable_on_exec, then released: recording starts at its exec.  A running
 * process gets events on each of its threads, listed from /proc/PID/task
 * until a pass finds no new one (threads created meanwhile inherit the
 * events of the thread that created them).
 *
 * The rings are read into a pending list when one is a quarter full, when
 * the process ends, or at least every second: waking rarely keeps the
 * cost low (1000 switches a second are 48 KB of records and one wake-up).
 * Records of one thread on different CPUs are in different rings, so the
 * list is sorted by time and only records older than 20 ms are applied
 * (the kernel writes a record microseconds after its time stamp).  A
 * switch in opens a run, a switch out closes it (P if preempted), an exit
 * closes it too (the kernel writes EXIT before the last switch out, and no
 * switch record after).  Runs are kept, 24 bytes each, and written sorted
 * by start at the end.
 */
#include "host/record.h"
#include "host/record_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfsbw.h"

#define SETTLE_NS 20000000 /* records older than this are all read */
#define MIN_PASS_NS 50000000 /* the rings are read at most this often */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

static int64_t self_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

static int64_t tv_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * CFSBW_NSEC_PER_SEC +
	       (int64_t)tv->tv_usec * 1000;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap * 2 : 256;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static void add_line(struct recorder *rec, enum line_kind kind, uint32_t th,
		     int64_t start, int64_t end, bool preempted)
{
	if (!grow((void **)&rec->lines, &rec->cap_lines, rec->nr_lines + 1,
		  sizeof *rec->lines)) {
		rec->oom = true;
		return;
	}
	rec->lines[rec->nr_lines++] = (struct line){
		start, end, th, (uint8_t)kind, (uint8_t)preempted};
}

static size_t slot_of(const struct recorder *rec, pid_t tid)
{
	return ((size_t)(uint32_t)tid * 2654435761u) & (rec->index_cap - 1);
}

/* The live thread tid, or -1. */
static long find_thread(const struct recorder *rec, pid_t tid)
{
	if (!rec->index_cap)
		return -1;
	for (size_t s = slot_of(rec, tid);; s = (s + 1) & (rec->index_cap - 1)) {
		uint32_t v = rec->index[s];
		if (!v)
			return -1;
		if (rec->threads[v - 1].tid == tid)
			return (long)v - 1;
	}
}

static bool index_put(struct recorder *rec, pid_t tid, uint32_t v)
{
	size_t s = slot_of(rec, tid);
	while (rec->index[s] && rec->threads[rec->index[s] - 1].tid != tid)
		s = (s + 1) & (rec->index_cap - 1);
	rec->index[s] = v;
	return true;
}

/* A thread seen for the first time (or a tid used again after an exit). */
static long new_thread(struct recorder *rec, pid_t tid, pid_t pid,
		       const char *comm, int64_t t)
{
	if (!grow((void **)&rec->threads, &rec->cap_threads,
		  rec->nr_threads + 1, sizeof *rec->threads)) {
		rec->oom = true;
		return -1;
	}
	if ((rec->nr_threads + 1) * 2 > rec->index_cap) {
		size_t cap = rec->index_cap ? rec->index_cap * 2 : 1024;
		uint32_t *ix = calloc(cap, sizeof *ix);
		if (!ix) {
			rec->oom = true;
			return -1;
		}
		free(rec->index);
		rec->index = ix;
		rec->index_cap = cap;
		for (size_t i = 0; i < rec->nr_threads; i++)
			if (!rec->threads[i].exited)
				index_put(rec, rec->threads[i].tid,
					  (uint32_t)i + 1);
	}
	size_t i = rec->nr_threads++;
	struct thread *th = &rec->threads[i];
	memset(th, 0, sizeof *th);
	th->tid = tid;
	th->pid = pid;
	snprintf(th->comm, sizeof th->comm, "%s", comm ? comm : "-");
	th->first_ns = t;
	th->in_ns = -1;
	index_put(rec, tid, (uint32_t)i + 1);
	add_line(rec, L_THREAD, (uint32_t)i, t, t, false);
	return (long)i;
}

static long thread_for(struct recorder *rec, pid_t tid, pid_t pid, int64_t t)
{
	long i = find_thread(rec, tid);
	return i >= 0 ? i : new_thread(rec, tid, pid, NULL, t);
}

static void run_ends(struct recorder *rec, long i, int64_t t, bool preempted)
{
	struct thread *th = &rec->threads[i];
	if (th->in_ns < 0)
		return;
	if (t > th->in_ns)
		add_line(rec, L_RUN, (uint32_t)i, th->in_ns, t, preempted);
	th->in_ns = -1;
}

static void thread_exits(struct recorder *rec, long i, int64_t t)
{
	struct thread *th = &rec->threads[i];
	run_ends(rec, i, t, false);
	add_line(rec, L_EXIT, (uint32_t)i, t, t, false);
	th->exited = true;
	/* the tid may be used again: drop it from the index */
	uint32_t *ix = rec->index;
	size_t cap = rec->index_cap;
	for (size_t s = slot_of(rec, th->tid); ix[s]; s = (s + 1) & (cap - 1))
		if (ix[s] == (uint32_t)i + 1) {
			/* re-insert the rest of the cluster */
			ix[s] = 0;
			for (size_t n = (s + 1) & (cap - 1); ix[n];
			     n = (n + 1) & (cap - 1)) {
				uint32_t v = ix[n];
				ix[n] = 0;
				index_put(rec, rec->threads[v - 1].tid, v);
			}
			break;
		}
}

/* Apply one record, in time order, to the thread table and the lines. */
static void apply(struct recorder *rec, const struct rec_raw *x)
{
	int64_t t = x->time_ns - rec->t0;
	if (t < 0)
		t = 0;
	long i;
	switch ((enum rec_kind)x->kind) {
	case REC_SWITCH_IN:
		i = thread_for(rec, (pid_t)x->tid, (pid_t)x->pid, t);
		if (i >= 0)
			rec->threads[i].in_ns = t;
		return;
	case REC_SWITCH_OUT:
		i = thread_for(rec, (pid_t)x->tid, (pid_t)x->pid, t);
		if (i < 0)
			return;
		/* out with no in: it was running when recording began */
		if (rec->threads[i].in_ns < 0)
			rec->threads[i].in_ns = rec->threads[i].first_ns;
		run_ends(rec, i, t, x->preempted);
		return;
	case REC_FORK: {
		long parent = find_thread(rec, (pid_t)x->parent_tid);
		long old = find_thread(rec, (pid_t)x->tid);
		if (old >= 0)
			thread_exits(rec, old, t);
		new_thread(rec, (pid_t)x->tid, (pid_t)x->pid,
			   parent >= 0 ? rec->threads[parent].comm : NULL, t);
		return;
	}
	case REC_EXIT:
		i = find_thread(rec, (pid_t)x->tid);
		if (i >= 0)
			thread_exits(rec, i, t);
		return;
	case REC_COMM:
		i = thread_for(rec, (pid_t)x->tid, (pid_t)x->pid, t);
		if (i < 0)
			return;
		snprintf(rec->threads[i].comm, sizeof rec->threads[i].comm,
			 "%s", x->comm);
		/* a thread that calls exec runs: the command, whose events
		 * start at its exec, has its first run start here */
		if (x->exec && rec->threads[i].in_ns < 0)
			rec->threads[i].in_ns = t;
		return;
	}
}

static void take(void *ctx, const struct rec_raw *x)
{
	struct recorder *rec = ctx;
	if (!grow((void **)&rec->pending, &rec->cap_pending,
		  rec->nr_pending + 1, sizeof *rec->pending)) {
		rec->oom = true;
		return;
	}
	rec->pending[rec->nr_pending++] = *x;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct rec_raw *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Read the rings; apply what is older than cutoff (all: INT64_MAX). */
static void read_records(struct recorder *rec, int64_t cutoff)
{
	cfsbw_host__perf_drain(&rec->perf, take, rec);
	if (!rec->nr_pending)
		return; /* pending may be NULL: no qsort or memmove of it */
	qsort(rec->pending, rec->nr_pending, sizeof *rec->pending, cmp_raw);
	size_t n = 0;
	while (n < rec->nr_pending && rec->pending[n].time_ns < cutoff)
		apply(rec, &rec->pending[n++]);
	memmove(rec->pending, rec->pending + n,
		(rec->nr_pending - n) * sizeof *rec->pending);
	rec->nr_pending -= n;
}
static void read_comm(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid,
		 (int)tid);
	FILE *f = fopen(path, "r");
	snprintf(out, len, "-");
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

/* Every thread of pid: an event each, until a pass finds no new one. */
static int attach_threads(struct recorder *rec, pid_t pid, char *err,
			  size_t errlen)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	for (bool added = true; added;) {
		added = false;
		DIR *d = opendir(path);
		if (!d) {
			snprintf(err, errlen, "no process %d", (int)pid);
			return -1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0 || find_thread(rec, tid) >= 0)
				continue;
			int rc = rec->polling
				 ? cfsbw_host__poll_add(&rec->poll, pid, tid,
							pid, true)
				 : cfsbw_host__perf_open(&rec->perf, tid, false,
							 err, errlen);
			if (rc == -ESRCH || rc == -ENOENT)
				continue; /* it ended meanwhile */
			if (rc) {
				if (rec->polling)
					snprintf(err, errlen, "/proc/%d/task/%d:"
						 " %s", (int)pid, (int)tid,
						 strerror(-rc));
				closedir(d);
				return -1;
			}
			char comm[16];
			read_comm(pid, tid, comm, sizeof comm);
			/* its trace starts at 0, but a switch out with no
			 * switch in before it closes a run that began no
			 * earlier than now: the thread may have waited for
			 * a CPU between 0 and its event's opening */
			long i = new_thread(rec, tid, pid, comm, 0);
			if (i >= 0)
				rec->threads[i].first_ns = mono_ns() - rec->t0;
			added = true;
		}
		closedir(d);
	}
	return 0;
}

/* Start argv blocked on a pipe; its event is opened before it may exec. */
static pid_t start_command(char *const *argv, int *go_wr, int *exec_err_rd)
{
	int go[2], ee[2];
	if (pipe2(go, O_CLOEXEC))
		return -1;
	if (pipe2(ee, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		close(ee[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		int e = errno;
		if (write(ee[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(ee[1]);
	if (pid < 0) {
		close(go[1]);
		close(ee[0]);
		return -1;
	}
	*go_wr = go[1];
	*exec_err_rd = ee[0];
	return pid;
}

static void recorder_free(struct recorder *rec)
{
	cfsbw_host__perf_close(&rec->perf);
	cfsbw_host__poll_close(&rec->poll);
	free(rec->pending);
	free(rec->threads);
	free(rec->index);
	free(rec->lines);
}

/*
 * Does the kernel refuse perf events on pid?  Asked with the events
 * cfsbw record uses; the answer (what perf_event_paranoid needs) in note.
 */
static bool perf_refused(pid_t pid, char *note, size_t len)
{
	struct rec_perf probe;
	if (cfsbw_host__perf_init(&probe))
		return false;
	int rc = cfsbw_host__perf_open(&probe, pid, false, note, len);
	cfsbw_host__perf_close(&probe);
	if (rc == -ESRCH)
		note[0] = '\0';
	return rc && rc != -ESRCH;
}

int cfsbw_host_record(const struct cfsbw_host_record_config *c,
		      struct cfsbw_host_record_result *r, char *err,
		      size_t errlen)
{
	struct recorder rec;
	memset(&rec, 0, sizeof rec);
	memset(r, 0, sizeof *r);
	r->tree_cpu_ns = -1;
	int64_t cpu0 = self_cpu_ns();
	pid_t child = 0;
	int go = -1, exec_err = -1, rc = -1, pidfd = -1;
	struct sigaction sa, old[3];
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
	stop_signal = 0;
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);

	if (cfsbw_host__perf_init(&rec.perf)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rec.polling = c->poll || perf_refused(c->pid ? c->pid : getpid(),
					      r->note, sizeof r->note);
	r->polled = rec.polling;
	if (c->pid) {
		rec.t0 = mono_ns();
		if (attach_threads(&rec, c->pid, err, errlen))
			goto out;
	} else {
		child = start_command(c->argv, &go, &exec_err);
		if (child < 0) {
			snprintf(err, errlen, "fork: %s", strerror(errno));
			goto out;
		}
		if (rec.polling ? cfsbw_host__poll_add(&rec.poll, child, child,
						       0, true)
				: cfsbw_host__perf_open(&rec.perf, child, true,
							err, errlen)) {
			if (rec.polling)
				snprintf(err, errlen, "/proc/%d: %s",
					 (int)child, strerror(errno));
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			child = 0;
			goto out;
		}
		const char *base = strrchr(c->argv[0], '/');
		new_thread(&rec, child, child, base ? base + 1 : c->argv[0],
			   0);
		rec.t0 = mono_ns();
		if (write(go, "g", 1) != 1) {
			snprintf(err, errlen, "start: %s", strerror(errno));
			goto out;
		}
		close(go);
		go = -1;
		int e;
		if (read(exec_err, &e, sizeof e) == (ssize_t)sizeof e) {
			snprintf(err, errlen, "%s: %s", c->argv[0], strerror(e));
			r->exit_status = e == ENOENT ? 127 : 126;
			waitpid(child, NULL, 0);
			child = 0;
			goto out;
		}
	}

	int64_t deadline = c->duration_ns > 0 ? rec.t0 + c->duration_ns : 0,
		last_pass = 0;
	pidfd = (int)syscall(SYS_pidfd_open, child ? child : c->pid, 0);
	int64_t tick = mono_ns();
	for (;;) {
		if (rec.polling)
			cfsbw_host__poll_sample(&rec.poll, take, &rec);
		if (!rec.polling || rec.poll.tick % 16 == 0)
			read_records(&rec, mono_ns() - SETTLE_NS);
		if (rec.oom) {
			snprintf(err, errlen, "out of memory for the trace");
			goto out;
		}
		if (child) {
			int st;
			struct rusage ru;
			pid_t w = wait4(child, &st, WNOHANG, &ru);
			if (w == child) {
				r->exited = true;
				r->tree_cpu_ns = tv_ns(&ru.ru_utime) +
						 tv_ns(&ru.ru_stime);
				r->exit_status = WIFSIGNALED(st)
						 ? 128 + WTERMSIG(st)
						 : WEXITSTATUS(st);
				child = 0;
				break;
			}
			if (stop_signal) {
				/* the command decides: recording goes on
				 * until it ends */
				kill(child, stop_signal);
				stop_signal = 0;
			}
		} else if (kill(c->pid, 0) < 0 && errno == ESRCH) {
			r->exited = true;
			break;
		} else if (stop_signal) {
			break;
		}
		if (deadline && mono_ns() >= deadline)
			break;
		if (rec.polling) { /* the next millisecond, or now if late */
			int64_t now = mono_ns();
			tick = tick + POLL_TICK_NS > now ? tick + POLL_TICK_NS
							 : now;
			struct timespec ts = {(time_t)(tick / CFSBW_NSEC_PER_SEC),
					      (long)(tick % CFSBW_NSEC_PER_SEC)};
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
					NULL);
			continue;
		}
		/* wake when a ring is a quarter full, the process ends, or
		 * at the deadline (without a pidfd, every 100 ms); the rings
		 * at most every 50 ms: every exiting child wakes a poller */
		int64_t now = mono_ns(), wait_ms = pidfd >= 0 ? 1000 : 100;
		if (deadline && (deadline - now) / 1000000 + 1 < wait_ms)
			wait_ms = (deadline - now) / 1000000 + 1;
		if (now < last_pass + MIN_PASS_NS) {
			int64_t quiet = (last_pass + MIN_PASS_NS - now) / 1000000 + 1;
			struct pollfd pf = {pidfd, POLLIN, 0};
			if (poll(&pf, pidfd >= 0, (int)(quiet < wait_ms ? quiet : wait_ms)) > 0)
				continue; /* it ended */
		}
		cfsbw_host__perf_wait(&rec.perf, pidfd, (int)wait_ms);
		last_pass = mono_ns();
	}
	int64_t end = mono_ns() - rec.t0;
	read_records(&rec, INT64_MAX);
	/* threads still running when recording stops: cut at the end */
	for (size_t i = 0; i < rec.nr_threads; i++)
		if (!rec.threads[i].exited && rec.threads[i].in_ns >= 0)
			run_ends(&rec, (long)i, end, true);
	if (rec.oom) {
		snprintf(err, errlen, "out of memory for the trace");
		goto out;
	}
	r->lost = rec.perf.lost;
	r->length_ns = end;
	if (cfsbw_host__record_write(&rec, c, end, r)) {
		snprintf(err, errlen, "writing the trace: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (child > 0) {
		/* recording stopped before the command ended (--duration):
		 * it goes on, unrecorded; wait for it as a shell would */
		recorder_free(&rec);
		memset(&rec, 0, sizeof rec);
		int st;
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
		r->exit_status = WIFSIGNALED(st) ? 128 + WTERMSIG(st)
						 : WEXITSTATUS(st);
		r->exited = true;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (go >= 0)
		close(go);
	if (exec_err >= 0)
		close(exec_err);
	recorder_free(&rec);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	r->own_cpu_ns = self_cpu_ns() - cpu0;
	return rc;
}
