/*
 * trace.c - ptrace: how the driver finds every process of the group, reads
 * the CPU time of those that exit, and stops and resumes them.
 *
 * Why ptrace (docs/host.md has the measurements):
 *  - Discovery: with PTRACE_O_TRACEFORK/VFORK/CLONE every descendant is
 *    born traced and reported before it runs an instruction of its own, at
 *    any depth, without privilege and without scanning /proc.
 *  - Short-lived processes: an exited process stays a zombie until its
 *    tracer has seen its exit, and a zombie's process CPU clock still
 *    reads, exit costs included, so a child that lives a millisecond is
 *    charged in full (R5).
 *  - Stopping: PTRACE_INTERRUPT puts one thread in a ptrace stop (12 us
 *    round trip measured, against 191 us for SIGSTOP/SIGCONT).  Unlike
 *    SIGSTOP it is invisible to the process's parent and its shell, and it
 *    cannot outlive the driver: when the tracer dies, of SIGKILL too, the
 *    kernel detaches its tracees and wakes those in a ptrace stop.
 *
 * A thread's stops, with PTRACE_SEIZE semantics:
 *  - fork, vfork and clone event stops: the new tracee is adopted, then
 *    the thread is resumed, unless its process is throttled, in which case
 *    it stays in that stop (held until the refresh);
 *  - PTRACE_EVENT_STOP with SIGTRAP: our interrupt, or a new tracee's first
 *    stop: held when the process is throttled, resumed otherwise;
 *  - PTRACE_EVENT_STOP with a stop signal: a group stop somebody asked for
 *    (SIGSTOP, SIGTSTP from the terminal...): PTRACE_LISTEN keeps it
 *    stopped as it would be without us, until SIGCONT;
 *  - signal-delivery stop: the signal is passed on unchanged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/host_int.h"

/*
 * No exit or exec events: an exiting process is charged as a zombie
 * (__trace_reap), and each event stop costs a round trip (docs/host.md).
 */
#define TRACE_OPTIONS                                                          \
	(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE)

static long pt(enum __ptrace_request req, pid_t tid, unsigned long data)
{
	return ptrace(req, tid, (void *)0, (void *)data);
}

static unsigned long sig_data(int sig)
{
	return (unsigned long)(unsigned)sig;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/* Let a thread run on from whatever ptrace stop it is in. */
static void thread_cont(struct host_thread *t, int sig)
{
	t->state = TH_RUNNING;
	pt(PTRACE_CONT, t->tid, sig_data(sig));
}

/* After an event stop: run on, or stay held if the process is throttled. */
static void thread_resume_or_hold(struct host_thread *t)
{
	if (t->proc->throttled)
		t->state = TH_HELD;
	else
		thread_cont(t, 0);
}

/* Send t a PTRACE_INTERRUPT: it stops at once, or when it next runs. */
static void thread_interrupt(struct cfsbw_host *h, struct host_thread *t)
{
	if (pt(PTRACE_INTERRUPT, t->tid, 0) == 0) {
		t->interrupt_sent = true;
		h->nr_thread_stops++;
	}
}

/*
 * Sleepers.  A throttle used to interrupt every thread of the process, and
 * a thread asleep (in a futex, a poll, a nanosleep) is woken by the
 * interrupt, reports its stop, and is resumed at the refresh, to go back
 * to sleep: measured, a process with 2 busy threads and 30 asleep at 0.5
 * CPU cost cfsbw 62 ms of CPU in 5 s instead of 17 ms with the 2 alone
 * (about 30 us per sleeping thread and throttle, mostly the interrupts
 * between virtual CPUs of a wake-up and a resume).  The kernel does not
 * touch a sleeping task either: it is on no runqueue, and is held only if
 * it wakes while its group is throttled.  So a thread that its
 * /proc/PID/task/TID/stat shows asleep ('S' or 'D') is left alone.  Once
 * the interrupted threads have stopped, the process's CPU-time timer is
 * armed to fire when it runs again (host.c, __host_sleepers_watch): only a
 * sleeper can; then every thread is interrupted, with no more looks.  What
 * it ran by then is charged as a debt (R13).
 *
 * A look costs a pread of a kept file (2.2 us here; open, read and close
 * 6.4 us).  A thread found running at two looks in a row is interrupted
 * without a look at its next HOST_LOOK_EVERY - 1 throttles: a busy thread
 * stays busy, and 32 busy threads would otherwise cost 70 us of looks each
 * period.  Two looks, not one: a thread of a pool caught on its way to
 * sleep (just made, or between two requests) would otherwise be woken and
 * stopped at 7 throttles for nothing.  Processes with one thread are not
 * looked at: that thread is what the CPU-time timer saw running, most of
 * the time.
 */
#define HOST_LOOK_EVERY 8

/* The state field of a /proc stat line, "pid (comm) S ppid ...", or NULL. */
static const char *stat_state(const char *buf)
{
	const char *end = strrchr(buf, ')'); /* comm may hold ')' itself */
	return end && end[1] == ' ' ? end + 2 : NULL;
}

static bool thread_asleep(struct host_proc *p, struct host_thread *t)
{
	if (t->running_looks >= 2 && t->unlooked < HOST_LOOK_EVERY - 1) {
		t->unlooked++;
		return false;
	}
	t->unlooked = 0;
	if (t->stat_fd < 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat",
			 (int)p->pid, (int)t->tid);
		t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	char buf[512];
	ssize_t n = t->stat_fd < 0 ? -1
				   : pread(t->stat_fd, buf, sizeof buf - 1, 0);
	const char *state = NULL;
	if (n > 0) {
		buf[n] = '\0';
		state = stat_state(buf);
	}
	bool asleep = state && (*state == 'S' || *state == 'D');
	if (asleep)
		t->running_looks = 0;
	else if (t->running_looks < 2)
		t->running_looks++;
	return asleep;
}

unsigned __trace_pending_stops(const struct host_proc *p)
{
	unsigned n = 0;
	for (const struct host_thread *t = p->threads; t; t = t->proc_next)
		n += t->interrupt_sent;
	return n;
}

/* Once no interrupt of p's is pending, watch for its sleepers to run. */
static void sleepers_check(struct host_proc *p)
{
	if (!p->throttled || !p->sleepers || p->sleepers_watched ||
	    __trace_pending_stops(p))
		return;
	__host_sleepers_watch(p);
}

void __trace_stop_proc(struct cfsbw_host *h, struct host_proc *p, bool look)
{
	look = look && p->nr_threads > 1;
	for (struct host_thread *t = p->threads; t; t = t->proc_next) {
		/* Held threads are stopped; listening ones report again on
		 * SIGCONT and are held then. */
		if (t->state != TH_RUNNING || t->interrupt_sent)
			continue;
		if (look && thread_asleep(p, t)) {
			p->sleepers = true;
			continue;
		}
		thread_interrupt(h, t);
	}
	sleepers_check(p);
}

void __trace_resume_proc(struct cfsbw_host *h, struct host_proc *p)
{
	(void)h;
	for (struct host_thread *t = p->threads; t; t = t->proc_next)
		if (t->state == TH_HELD)
			thread_cont(t, 0);
}

/* Is tid a thread of process pid (rather than a process of its own)? */
static bool tid_in_process(pid_t pid, pid_t tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/* The parent of process pid, from /proc; 0 if it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *state = stat_state(buf);
	long ppid = 0;
	if (!state || sscanf(state, "%*c %ld", &ppid) != 1 || ppid < 0)
		return 0;
	return (pid_t)ppid;
}

bool cfsbw_host_is_ancestor(pid_t pid)
{
	pid_t p = getppid();
	/* A bounded walk: /proc may change under it. */
	for (int depth = 0; p > 0 && depth < 1024; depth++) {
		if (p == pid)
			return true;
		p = parent_of(p);
	}
	return false;
}

static void warn_full(struct cfsbw_host *h)
{
	if (h->warned_full)
		return;
	h->warned_full = true;
	fprintf(stderr,
		"cfsbw: more than %u processes at once: new ones run ungoverned\n",
		HOST_NR_RQ_MAX);
}

/*
 * A tracee was born (fork, vfork or clone event of parent): put it in the
 * table, as a thread of parent or as a process of its own, and let it run.
 */
static void adopt(struct cfsbw_host *h, struct host_proc *parent, pid_t tid,
		  int event)
{
	bool held = __early_take(h, tid);
	if (__thread_find(h, tid))
		return;
	bool is_thread = event == PTRACE_EVENT_CLONE &&
			 tid_in_process(parent->pid, tid);
	struct host_thread *t;
	if (is_thread) {
		t = __thread_new(h, parent, tid);
		if (!t)
			goto untracked;
	} else {
		struct host_proc *p = __proc_new(h, tid);
		if (!p) {
			warn_full(h);
			goto untracked;
		}
		t = __thread_new(h, p, tid);
		if (!t || __host_proc_join(h, p, true) < 0) {
			__proc_free(h, p);
			goto untracked;
		}
	}
	if (held) {
		thread_resume_or_hold(t);
	} else if (t->proc->throttled) {
		/*
		 * Its first stop is still to come (a tracee born of an event
		 * always reports one) and will be held, as after an interrupt:
		 * no PTRACE_INTERRUPT needed.
		 */
		t->state = TH_RUNNING;
		t->interrupt_sent = true;
	}
	return;

untracked:
	/* Out of memory or runqueues: never leave it stopped. */
	if (held)
		pt(PTRACE_DETACH, tid, 0);
}

/* The process is gone: give its runqueue back (R13) and forget it. */
static void proc_gone(struct cfsbw_host *h, struct host_proc *p)
{
	if (p->pid == h->root_pid)
		h->root_gone = true;
	if (p->extra_root) {
		p->extra_root = false;
		h->nr_extra_roots--;
	}
	__host_proc_leave(h, p);
	__proc_free(h, p);
}

/*
 * The command's exit status, recorded once: once it is gone, its pid may
 * be a new process's (--wait-all keeps the run going).
 */
static void note_root_exit(struct cfsbw_host *h, pid_t tid, int status)
{
	if (tid != h->root_pid || h->root_gone)
		return;
	h->root_status = status;
	h->root_gone = true;
}

static void on_exit_status(struct cfsbw_host *h, pid_t tid, int status)
{
	struct host_thread *t = __thread_find(h, tid);
	note_root_exit(h, tid, status);
	if (!t)
		return;
	struct host_proc *p = t->proc;
	/* The leader is reported last: its exit is the process's. */
	if (__thread_forget(h, t) || tid == p->pid)
		proc_gone(h, p);
	else
		sleepers_check(p); /* t may have had an interrupt pending */
}

static void on_stop_of(struct cfsbw_host *h, struct host_thread *t,
		       pid_t tid, int status)
{
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	unsigned long msg = 0;

	if (!t) {
		/*
		 * A new tracee's first stop, ahead of its creator's event: hold
		 * it until we know whose it is, so that none of its CPU time
		 * escapes (a child may live less than a tick).
		 */
		if (event == PTRACE_EVENT_STOP && __proc_room(h) &&
		    __early_add(h, tid, cfsbw_host_now_ns()))
			return;
		pt(PTRACE_CONT, tid, event ? 0 : sig_data(sig));
		return;
	}
	struct host_proc *p = t->proc;
	/*
	 * Any ptrace stop clears a pending PTRACE_INTERRUPT (the kernel's
	 * ptrace_stop(): "any trap clears pending STOP trap"): a thread sent
	 * one while inside clone() reports the clone event and never the
	 * interrupt.  Left set, the flag made every later throttle skip that
	 * thread, and it ran free: a process making 32 threads while being
	 * throttled used 1.0 CPU of 0.5 from then on.
	 */
	t->interrupt_sent = false;

	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (pt(PTRACE_GETEVENTMSG, tid, (unsigned long)&msg) == 0)
			adopt(h, p, (pid_t)msg, event);
		thread_resume_or_hold(t);
		return;
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig)) {
			t->state = TH_LISTENING;
			pt(PTRACE_LISTEN, tid, 0);
		} else {
			thread_resume_or_hold(t);
		}
		return;
	case 0:
		/* Signal-delivery stop: pass the signal on, as sent. */
		thread_cont(t, sig);
		if (p->throttled)
			thread_interrupt(h, t);
		return;
	default:
		thread_cont(t, 0);
		return;
	}
}

static void on_stop(struct cfsbw_host *h, pid_t tid, int status)
{
	struct host_thread *t = __thread_find(h, tid);
	on_stop_of(h, t, tid, status);
	/* t is still there: a stop does not free it. */
	if (t)
		sleepers_check(t->proc);
}

static void release_untracked(pid_t tid)
{
	pt(PTRACE_DETACH, tid, 0);
}

/*
 * Reports are read with waitid, stops first (consumed at once: a ptrace
 * stop's siginfo carries the same code as wait4's status), then exits,
 * which are first looked at without being consumed (WNOWAIT): a process
 * whose leader has exited is a zombie whose CPU clock still reads, now
 * including what its exit cost (tearing down its memory: half a
 * millisecond here), so it is charged in full (R5) before it is reaped.
 */
void __trace_reap(struct cfsbw_host *h)
{
	siginfo_t si;
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WSTOPPED | __WALL | WNOHANG) < 0 ||
		    si.si_pid == 0)
			break;
		on_stop(h, si.si_pid, (si.si_status << 8) | 0x7f);
	}
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si,
			   WEXITED | __WALL | WNOHANG | WNOWAIT) < 0 ||
		    si.si_pid == 0)
			break;
		pid_t tid = si.si_pid;
		bool exited = si.si_code == CLD_EXITED ||
			      si.si_code == CLD_KILLED ||
			      si.si_code == CLD_DUMPED;
		struct host_thread *t = __thread_find(h, tid);
		if (exited && t && t->proc->pid == tid)
			__host_proc_charge(h, t->proc, false);
		/* A tracee's stops are reported even without WSTOPPED: one
		 * may have come since the first loop. */
		int status;
		if (waitpid(tid, &status, __WALL | WNOHANG) <= 0)
			break;
		if (WIFSTOPPED(status))
			on_stop(h, tid, status);
		else if (WIFEXITED(status) || WIFSIGNALED(status))
			on_exit_status(h, tid, status);
	}
	/*
	 * A held tid whose creator never names it is let go after a while;
	 * the timer makes sure that happens even if no other report comes.
	 */
	if (h->nr_early) {
		int64_t next = __early_expire(h, cfsbw_host_now_ns(),
					      release_untracked);
		if (next)
			__host_early_timer(h, next);
	}
}

/* Seize every thread of pid, repeating until none appears that we lack. */
static int seize_threads(struct cfsbw_host *h, struct host_proc *p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
	bool added = true;
	int err = 0;
	while (added) {
		added = false;
		DIR *d = opendir(path);
		if (!d)
			return -errno;
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || __thread_find(h, tid))
				continue;
			if (pt(PTRACE_SEIZE, tid, TRACE_OPTIONS) < 0) {
				/*
				 * ESRCH: gone.  EPERM on a thread other than
				 * the leader, which we hold: a thread created
				 * since, traced already by the clone event
				 * that will name it (threads share the
				 * leader's credentials, so it is not a lack
				 * of permission).
				 */
				bool ours = errno == EPERM && tid != p->pid &&
					    p->threads;
				if (errno != ESRCH && !ours && !err)
					err = -errno;
				continue;
			}
			if (!__thread_new(h, p, tid)) {
				pt(PTRACE_DETACH, tid, 0);
				err = -ENOMEM;
				continue;
			}
			added = true;
		}
		closedir(d);
		if (err)
			return err;
	}
	return 0;
}

/* Take in a running process and, recursively, its children. */
static int seize_tree(struct cfsbw_host *h, pid_t pid, unsigned depth)
{
	if (__thread_find(h, pid))
		return 0;
	struct host_proc *p = __proc_new(h, pid);
	if (!p)
		return -ENOMEM;
	int err = seize_threads(h, p);
	if (err < 0 || !p->threads)
		goto fail;
	err = __host_proc_join(h, p, false);
	if (err < 0)
		goto fail;
	if (depth > 64)
		return 0;
	/* Children that exist already (best effort: they may come and go). */
	for (struct host_thread *t = p->threads; t; t = t->proc_next) {
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task/%d/children",
			 (int)pid, (int)t->tid);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		int child;
		while (fscanf(f, "%d", &child) == 1)
			seize_tree(h, (pid_t)child, depth + 1);
		fclose(f);
	}
	return 0;

fail:
	for (struct host_thread *t = p->threads; t; t = t->proc_next)
		pt(PTRACE_DETACH, t->tid, 0);
	__proc_free(h, p);
	return err < 0 ? err : -ESRCH;
}

int __trace_attach(struct cfsbw_host *h, pid_t pid)
{
	h->root_pid = pid;
	h->root_is_child = false;
	return seize_tree(h, pid, 0);
}

int __trace_attach_more(struct cfsbw_host *h, pid_t pid)
{
	/* It may be governed already: a descendant of one given before. */
	int err = seize_tree(h, pid, 0);
	if (err < 0)
		return err;
	struct host_thread *t = __thread_find(h, pid);
	if (!t)
		return -ESRCH;
	struct host_proc *p = t->proc;
	if (p->pid != h->root_pid && !p->extra_root) {
		p->extra_root = true;
		h->nr_extra_roots++;
	}
	return 0;
}

int __trace_spawn(struct cfsbw_host *h, char *const argv[])
{
	int go[2], report[2];
	int err;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(report, O_CLOEXEC) < 0) {
		err = -errno;
		goto fail_report;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail_fork;
	}
	if (pid == 0) {
		/* The command: wait until it is traced, then exec. */
		char c;
		close(go[1]);
		close(report[0]);
		sigaction(SIGCHLD, &h->old_chld, NULL);
		sigprocmask(SIG_SETMASK, &h->old_mask, NULL);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(report[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	close(go[0]);
	close(report[1]);
	h->root_pid = pid;
	h->root_is_child = true;
	if (pt(PTRACE_SEIZE, pid, TRACE_OPTIONS) < 0) {
		err = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto fail_seize;
	}
	struct host_proc *p = __proc_new(h, pid);
	if (!p || !__thread_new(h, p, pid)) {
		err = -ENOMEM;
		goto fail_proc;
	}
	err = __host_proc_join(h, p, true);
	if (err < 0)
		goto fail_proc;
	close(go[1]); /* go */

	int e = 0;
	ssize_t n;
	while ((n = read(report[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n == (ssize_t)sizeof e && e) {
		/* exec failed: the child exits 127; reap it here. */
		while (!h->root_gone) {
			int status;
			pid_t r = waitpid(pid, &status, __WALL);
			if (r < 0)
				break;
			if (WIFSTOPPED(status))
				pt(PTRACE_CONT, pid, 0);
			else
				on_exit_status(h, pid, status);
		}
		/* -EPERM means "not allowed to trace" (below), not exec's. */
		return e == EPERM ? -EACCES : -e;
	}
	return 0;

fail_proc:
	if (p)
		__proc_free(h, p);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
fail_seize:
	close(go[1]);
	close(report[0]);
	return err;
fail_fork:
	close(report[0]);
	close(report[1]);
fail_report:
	close(go[0]);
	close(go[1]);
	return err;
}

/*
 * Resume and detach every tracee.  Threads in a ptrace stop are detached at
 * once; running ones are interrupted first (PTRACE_DETACH needs a stopped
 * tracee), and pending signals are passed on with the detach.  Children
 * born meanwhile are detached when they first stop.  Whatever is still
 * attached after two seconds is detached by the kernel when we exit.
 */
void __trace_detach_all(struct cfsbw_host *h)
{
	unsigned expected = 0; /* children announced, first stop not seen */

	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (!p)
			continue;
		__host_proc_charge(h, p, false);
		p->throttled = false;
		for (struct host_thread *t = p->threads; t; t = t->proc_next) {
			if (t->state != TH_RUNNING) {
				pt(PTRACE_DETACH, t->tid, 0);
				t->state = TH_HELD; /* forgotten below */
			} else if (pt(PTRACE_INTERRUPT, t->tid, 0) < 0 &&
				   errno == ESRCH) {
				/* Not our tracee any more: gone without a
				 * report (the old tid of a thread that called
				 * execve).  Nothing to wait for. */
				t->state = TH_HELD;
			}
		}
	}
	/* Forget every thread detached above. */
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (!p)
			continue;
		struct host_thread *t = p->threads, *next;
		for (; t; t = next) {
			next = t->proc_next;
			if (t->state == TH_HELD)
				__thread_forget(h, t);
		}
	}
	for (unsigned i = 0; i < h->nr_early; i++)
		pt(PTRACE_DETACH, h->early[i], 0);
	h->nr_early = 0;

	int64_t deadline = cfsbw_host_now_ns() + 2 * CFSBW_NSEC_PER_SEC;
	while ((h->nr_threads || expected) && cfsbw_host_now_ns() < deadline) {
		int status;
		pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (tid < 0)
			break;
		if (tid == 0) {
			struct timespec ms = {0, 1000000};
			nanosleep(&ms, NULL);
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			note_root_exit(h, tid, status);
			struct host_thread *t = __thread_find(h, tid);
			if (t)
				__thread_forget(h, t);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		int event = status >> 16;
		int sig = WSTOPSIG(status);
		struct host_thread *t = __thread_find(h, tid);
		if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
		    event == PTRACE_EVENT_CLONE)
			expected++;
		if (!t && event == PTRACE_EVENT_STOP && expected)
			expected--;
		if (t)
			__thread_forget(h, t);
		/* A group stop stays a group stop after the detach. */
		pt(PTRACE_DETACH, tid, event ? 0 : sig_data(sig));
	}
	/* Processes now empty leave the core. */
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (p && !p->threads)
			proc_gone(h, p);
	}
}
