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
 * This file is ptrace as a source of events and a set of operations on
 * threads; what to do with each event is decided in govern.c.  A thread's
 * stops, with PTRACE_SEIZE semantics, are reported as:
 *  - HOST_EV_BORN: a fork, vfork or clone event stop, naming the child;
 *  - HOST_EV_TRAP: PTRACE_EVENT_STOP with SIGTRAP: our interrupt, or a new
 *    tracee's first stop;
 *  - HOST_EV_GROUP_STOP: PTRACE_EVENT_STOP with a stop signal, a group stop
 *    somebody asked for (SIGSTOP, SIGTSTP from the terminal...);
 *  - HOST_EV_SIGNAL: a signal-delivery stop;
 * and its end as HOST_EV_ZOMBIE, then HOST_EV_EXITED.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "host/host_int.h"

/*
 * No exit events: an exiting process is charged as a zombie (govern.c,
 * HOST_EV_ZOMBIE), and each event stop costs a round trip (docs/host.md).
 * Exec events only where a traced exec loses privileges (below).
 */
#define TRACE_OPTIONS                                                          \
	(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE)

/*
 * A set-user-ID, set-group-ID or file-capability program run by a traced
 * process gets no privileges unless its tracer has CAP_SYS_PTRACE (as
 * under strace): passwd then misbehaves with no word why.  So a cfsbw
 * without CAP_SYS_PTRACE asks for exec events, and says so once when a
 * governed process executes such a file (issue 16, item 5).  One more
 * stop per exec, only then; a root cfsbw leaves privileges as they are.
 */
static unsigned long trace_options(struct cfsbw_host *h)
{
	if (!h->exec_watch_known) {
		char status[4096];
		read_file_head("/proc/self/status", status, sizeof status);
		const char *cap = strstr(status, "CapEff:");
		unsigned long long eff = cap ? strtoull(cap + 7, NULL, 16) : 0;
		h->exec_watch = !(eff >> 19 & 1); /* CAP_SYS_PTRACE */
		h->exec_watch_known = true;
	}
	return TRACE_OPTIONS | (h->exec_watch ? PTRACE_O_TRACEEXEC : 0);
}

/* At tid's exec event: the first privileged program run is named, once. */
static void check_exec(struct cfsbw_host *h, pid_t tid)
{
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/%d/exe", (int)tid);
	struct stat st;
	if (h->warned_exec || stat(link, &st) < 0)
		return;
	ssize_t n = readlink(link, path, sizeof path - 1);
	path[n > 0 ? n : 0] = '\0';
	const char *what = st.st_mode & S_ISUID   ? "set-user-ID"
			   : st.st_mode & S_ISGID ? "set-group-ID"
			   : n > 0 && getxattr(path, "security.capability",
					       NULL, 0) > 0
				   ? "file-capability"
				   : NULL;
	if (!what)
		return;
	h->warned_exec = true;
	fprintf(stderr,
		"cfsbw: process %d runs %s, a %s program: traced by cfsbw, "
		"which lacks CAP_SYS_PTRACE, it runs without those privileges "
		"(said once)\n",
		(int)tid, path, what);
}

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

void cfsbw_host__trace_cont(pid_t tid, int sig)
{
	pt(PTRACE_CONT, tid, sig_data(sig));
}

/* Let a thread run on from whatever ptrace stop it is in. */
void cfsbw_host__thread_cont(struct host_thread *t, int sig)
{
	t->state = TH_RUNNING;
	pt(PTRACE_CONT, t->tid, sig_data(sig));
}

/* A group stop: PTRACE_LISTEN keeps it stopped as it would be without us,
 * until SIGCONT. */
void cfsbw_host__thread_listen(struct host_thread *t)
{
	t->state = TH_LISTENING;
	pt(PTRACE_LISTEN, t->tid, 0);
}

/* Send t a PTRACE_INTERRUPT: it stops at once, or when it next runs. */
void cfsbw_host__thread_interrupt(struct cfsbw_host *h, struct host_thread *t)
{
	if (pt(PTRACE_INTERRUPT, t->tid, 0) == 0) {
		t->interrupt_sent = true;
		h->nr_thread_stops++;
	}
}

void cfsbw_host__thread_detach(pid_t tid, int sig)
{
	pt(PTRACE_DETACH, tid, sig_data(sig));
}

unsigned cfsbw_host__trace_pending_stops(const struct host_proc *p)
{
	unsigned n = 0;
	for (const struct host_thread *t = p->threads; t; t = t->proc_next)
		n += t->interrupt_sent;
	return n;
}

int cfsbw_host__trace_seize_threads(struct cfsbw_host *h, struct host_proc *p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
	bool added = true;
	int err = 0;
	while (added) {
		added = false;
		DIR *d = opendir(path);
		if (!d)
			return errno == ENOENT ? -ESRCH : -errno;
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = cfsbw_host__pid_of_text(de->d_name);
			if (tid <= 0 || cfsbw_host__thread_find(h, tid))
				continue;
			if (pt(PTRACE_SEIZE, tid, trace_options(h)) < 0) {
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
			if (!cfsbw_host__thread_new(h, p, tid)) {
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

/* ---- reports ---- */

static bool decode(struct cfsbw_host *h, pid_t tid, int status,
		   struct host_trace_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->tid = tid;
	ev->status = status;
	if (!WIFSTOPPED(status)) {
		ev->kind = HOST_EV_EXITED;
		return true;
	}
	int event = status >> 16;
	ev->sig = WSTOPSIG(status);
	unsigned long msg = 0;
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		ev->kind = HOST_EV_BORN;
		if (pt(PTRACE_GETEVENTMSG, tid, (unsigned long)&msg) == 0 &&
		    msg > 0 && msg <= INT32_MAX)
			ev->child = (pid_t)msg;
		ev->child_is_thread = ev->child && event == PTRACE_EVENT_CLONE &&
				      cfsbw_host__tid_in_process(tid, ev->child);
		break;
	case PTRACE_EVENT_STOP:
		ev->kind = is_stop_signal(ev->sig) ? HOST_EV_GROUP_STOP
						   : HOST_EV_TRAP;
		break;
	case 0:
		ev->kind = HOST_EV_SIGNAL;
		break;
	case PTRACE_EVENT_EXEC:
		check_exec(h, tid);
		ev->kind = HOST_EV_OTHER_STOP; /* resumed at once */
		break;
	default:
		ev->kind = HOST_EV_OTHER_STOP;
		break;
	}
	return true;
}

/*
 * Reports are read with waitid, stops first (consumed at once: a ptrace
 * stop's siginfo carries the same code as wait4's status), then exits,
 * which are first looked at without being consumed (WNOWAIT): a process
 * whose leader has exited is a zombie whose CPU clock still reads, now
 * including what its exit cost (tearing down its memory: half a
 * millisecond here), so it can be charged in full (R5) before it is
 * reaped, at the next call.
 */
bool cfsbw_host__trace_next(struct cfsbw_host *h, struct host_trace_event *ev)
{
	siginfo_t si;
	int status;
	pid_t tid = h->trace_pending;
	if (tid) {
		h->trace_pending = 0;
		/* A tracee's stops are reported even without WSTOPPED: one
		 * may have come since it was peeked at. */
		if (waitpid(tid, &status, __WALL | WNOHANG) <= 0)
			return false;
		h->trace_peek_both = WIFSTOPPED(status);
		return decode(h, tid, status, ev);
	}
	/*
	 * After a stop, stops and exits are looked at with one call: most
	 * SIGCHLDs carry one stop (a throttle's), and the look that finds
	 * nothing more is then one system call, not two (one of about 15 per
	 * group and period, docs/host.md section 11).
	 */
	int flags = WEXITED | __WALL | WNOHANG | WNOWAIT;
	if (h->trace_peek_both) {
		flags |= WSTOPPED;
	} else {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WSTOPPED | __WALL | WNOHANG) == 0 &&
		    si.si_pid != 0) {
			h->trace_peek_both = true;
			return decode(h, si.si_pid,
				      (si.si_status << 8) | 0x7f, ev);
		}
	}
	h->trace_peek_both = false;
	si.si_pid = 0;
	if (waitid(P_ALL, 0, &si, flags) < 0 || si.si_pid == 0)
		return false;
	tid = si.si_pid;
	h->trace_pending = tid;
	if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
	    si.si_code == CLD_DUMPED) {
		memset(ev, 0, sizeof *ev);
		ev->kind = HOST_EV_ZOMBIE;
		ev->tid = tid;
		return true;
	}
	return cfsbw_host__trace_next(h, ev);
}

/* ---- spawning ---- */

int cfsbw_host__trace_spawn_start(struct cfsbw_host *h, char *const argv[],
				  struct host_spawn *sp)
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
	sp->pid = pid;
	sp->go_fd = go[1];
	sp->report_fd = report[0];
	if (pt(PTRACE_SEIZE, pid, trace_options(h)) < 0) {
		err = -errno;
		cfsbw_host__trace_spawn_abort(sp);
		return err;
	}
	return 0;

fail_fork:
	close(report[0]);
	close(report[1]);
fail_report:
	close(go[0]);
	close(go[1]);
	return err;
}

void cfsbw_host__trace_spawn_abort(struct host_spawn *sp)
{
	kill(sp->pid, SIGKILL);
	while (waitpid(sp->pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	close(sp->go_fd);
	close(sp->report_fd);
}

int cfsbw_host__trace_spawn_go(struct host_spawn *sp, int *status)
{
	close(sp->go_fd); /* go */
	int e = 0;
	ssize_t n;
	while ((n = read(sp->report_fd, &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(sp->report_fd);
	if (n != (ssize_t)sizeof e || !e)
		return 0;
	/* exec failed: the child exits 127; reap it here. */
	*status = 127 << 8;
	for (;;) {
		int st;
		pid_t r = waitpid(sp->pid, &st, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (!WIFSTOPPED(st)) {
			*status = st;
			break;
		}
		pt(PTRACE_CONT, sp->pid, 0);
	}
	/* -EPERM means "not allowed to trace" (cfsbw_host_spawn), not exec's. */
	return e == EPERM ? -EACCES : -e;
}

/* ---- letting go ---- */

static void note_root_exit(struct cfsbw_host *h, pid_t tid, int status)
{
	if (tid != h->root_pid || h->root_gone)
		return;
	h->root_status = status;
	h->root_gone = true;
}

/*
 * Resume and detach every tracee.  Threads in a ptrace stop are detached at
 * once; running ones are interrupted first (PTRACE_DETACH needs a stopped
 * tracee), and pending signals are passed on with the detach.  Children
 * born meanwhile are detached when they first stop.  Whatever is still
 * attached after two seconds is detached by the kernel when we exit.
 */
void cfsbw_host__trace_detach_all(struct cfsbw_host *h)
{
	unsigned expected = 0; /* children announced, first stop not seen */

	h->trace_pending = 0;
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (!p)
			continue;
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
				cfsbw_host__thread_forget(h, t);
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
			struct host_thread *t = cfsbw_host__thread_find(h, tid);
			if (t)
				cfsbw_host__thread_forget(h, t);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		int event = status >> 16;
		int sig = WSTOPSIG(status);
		struct host_thread *t = cfsbw_host__thread_find(h, tid);
		if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
		    event == PTRACE_EVENT_CLONE)
			expected++;
		if (!t && event == PTRACE_EVENT_STOP && expected)
			expected--;
		if (t)
			cfsbw_host__thread_forget(h, t);
		/* A group stop stays a group stop after the detach. */
		pt(PTRACE_DETACH, tid, event ? 0 : sig_data(sig));
	}
}

int cfsbw_host__trace_wait_root(struct cfsbw_host *h)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid == 0)
			return 0;
		if (pid < 0)
			return errno == EINTR ? 0 : -1;
		if (WIFSTOPPED(status)) {
			int ev = status >> 16;
			pt(PTRACE_DETACH, pid, ev ? 0 : sig_data(WSTOPSIG(status)));
		} else if (pid == h->root_pid) {
			h->root_status = status;
			return 1;
		}
	}
}
