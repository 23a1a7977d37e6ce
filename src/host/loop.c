/*
 * loop.c - the host driver's event loop and its process-wide state.
 *
 * Every event of the driver's own is a signal, read from one signalfd:
 * SIGCHLD (ptrace stops and exits), the CPU-timer signal (value: the
 * runqueue), the host timer signal (value: which of the driver's timers),
 * and SIGINT, SIGTERM, SIGHUP.  One read() returns a batch.  The caller's
 * descriptors (cfsbw_host_watch_fd: a daemon's FUSE channel, its socket)
 * are watched with epoll beside the signalfd.  With none watched (cfsbw
 * run), the loop blocks in read() on the signalfd alone: one system call
 * per wake-up instead of two (each counts: docs/host.md).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/host_int.h"

int64_t cfsbw_host_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

struct timespec cfsbw_host__ns_to_ts(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / CFSBW_NSEC_PER_SEC),
			      (long)(ns % CFSBW_NSEC_PER_SEC)};
	return ts;
}

int64_t cfsbw_host__clock_ns(clockid_t clock)
{
	struct timespec ts;
	if (clock_gettime(clock, &ts) < 0)
		return -1;
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

/* expires_ns 0: off.  The driver's own timers never refuse valid times. */
void cfsbw_host__timer_at(struct cfsbw_host *h, enum host_timer which,
			  int64_t expires_ns)
{
	struct itimerspec its = {{0, 0}, cfsbw_host__ns_to_ts(expires_ns)};
	int rc = timer_settime(h->timers[which], TIMER_ABSTIME, &its, NULL);
	BUG_ON(rc < 0);
}

static void quiet_set(struct cfsbw_host *h, bool on);

/* ---- watched descriptors ---- */

static struct host_watch *watch_find(struct cfsbw_host *h, int fd)
{
	for (unsigned i = 0; i < h->nr_watches; i++)
		if (h->watches[i].fd == fd)
			return &h->watches[i];
	return NULL;
}

/* The epoll set, made at the first watch: the signalfd is its key -1. */
static int epoll_ready(struct cfsbw_host *h)
{
	if (h->epoll_fd >= 0)
		return 0;
	h->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (h->epoll_fd < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = h->sig_fd};
	if (epoll_ctl(h->epoll_fd, EPOLL_CTL_ADD, h->sig_fd, &ev) < 0) {
		int err = -errno;
		close(h->epoll_fd);
		h->epoll_fd = -1;
	list_init(&h->groups);
		return err;
	}
	return 0;
}

int cfsbw_host_watch_fd(struct cfsbw_host *h, int fd, cfsbw_host_fd_fn *fn,
			void *ctx)
{
	if (fd < 0 || fd == h->sig_fd)
		return -EBADF;
	if (watch_find(h, fd))
		return -EEXIST;
	int err = epoll_ready(h);
	if (err < 0)
		return err;
	if (h->nr_watches == h->watches_cap) {
		unsigned cap = h->watches_cap ? 2 * h->watches_cap : 8;
		struct host_watch *w = realloc(h->watches, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		h->watches = w;
		h->watches_cap = cap;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	if (epoll_ctl(h->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	h->watches[h->nr_watches++] = (struct host_watch){fd, fn, ctx};
	return 0;
}

int cfsbw_host_unwatch_fd(struct cfsbw_host *h, int fd)
{
	struct host_watch *w = watch_find(h, fd);
	if (!w)
		return -ENOENT;
	/* Closed already by the caller: the kernel dropped it from the set. */
	epoll_ctl(h->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
	*w = h->watches[--h->nr_watches];
	return 0;
}

/* Every group's promises against its pool, after a configuration write. */
static void groups_check(struct cfsbw_host *h)
{
	list_for_each_entry(grp, &h->groups, struct host_group, all_link)
		cfsbw_host__reach_check(h, grp);
}

static void on_watched(struct cfsbw_host *h, int fd)
{
	struct host_watch *w = watch_find(h, fd);
	if (!w)
		return; /* unwatched by an earlier callback of this batch */
	if (h->quiet) {
		/*
		 * Stops came without a signal: read them first, so that
		 * threads the callback's writes unthrottle are known to be
		 * held, and are resumed (R4).
		 */
		quiet_set(h, false);
		cfsbw_host__reap(h);
	}
	w->fn(w->ctx, fd);
	/* R4: a write that unthrottled a group resumes its processes now. */
	cfsbw_host__run_arm_list(h);
	groups_check(h);
}

/* ---- signals ---- */

static void on_host_timer(struct cfsbw_host *h, int which)
{
	switch (which) {
	case HOST_TIMER_GROUPS:
		cfsbw_host__gtimers_run(h, cfsbw_host_now_ns());
		break;
	case HOST_TIMER_STAT:
		cfsbw_host__charge_all(h);
		if (h->cfg.on_stat)
			h->cfg.on_stat(h->cfg.ctx, h);
		break;
	case HOST_TIMER_EARLY:
		cfsbw_host__early_fired(h);
		break;
	default:
		break;
	}
}

/*
 * Quiet while every process is throttled and a burst of stops is coming.
 * The threads are then held, or interrupted and about to stop, and none
 * of their stops needs an answer before the refresh: each would only wake
 * the driver to note it.  So SIGCHLD is made to carry exits only
 * (SA_NOCLDSTOP, which covers ptrace stops too), and the stops are read
 * first thing at the next wake-up, the refresh's at the latest.  A signal
 * sent to a held thread waits for the refresh either way (a thread in a
 * ptrace stop takes it only once resumed).  32 busy threads at 0.5 CPU,
 * stopping one after another at each throttle, cost 2.8 ms less in 5 s
 * (median of 8 paired runs, 7 of 8 lower).  Only for a burst: with one
 * busy process or four it saved nothing, and with 120 short-lived
 * children under the upstream policy, going quiet at every throttle left
 * the group about 20 ms closer to R13's bound per run beside a busy hog
 * (3-54 ms from it against 38-70 ms, 6 paired runs; with the minimum
 * below, 14-58 against 19-60 ms).  Not with sleepers left running
 * (their process's timer is armed once the others have stopped), nor with
 * a new tracee waiting to be named.
 */
#define HOST_QUIET_MIN_STOPS 4

static bool quiet_due(const struct cfsbw_host *h)
{
	if (!h->nr_live || h->nr_early || h->nr_throttled < h->nr_live)
		return false;
	unsigned pending = 0;
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		const struct host_proc *p = h->procs[rq];
		if (!p)
			continue;
		if (!p->throttled || p->sleepers)
			return false;
		pending += cfsbw_host__trace_pending_stops(p);
	}
	return pending >= HOST_QUIET_MIN_STOPS;
}

static void quiet_set(struct cfsbw_host *h, bool on)
{
	if (h->quiet == on)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = on ? SA_NOCLDSTOP : 0;
	/* A failure keeps SIGCHLD as it is: every stop still wakes us. */
	if (sigaction(SIGCHLD, &sa, NULL) == 0)
		h->quiet = on;
}

/*
 * Handle the signals pending on the signalfd (block: wait for the first);
 * returns the first of SIGINT, SIGTERM, SIGHUP (and whether a process sent
 * it, rather than the terminal), or 0.  More are read only when a batch
 * filled the buffer.
 */
static int handle_signals(struct cfsbw_host *h, bool block, bool *from_process)
{
	struct signalfd_siginfo si[32];
	int stop_sig = 0;
	bool chld = false;
	for (;;) {
		if (!block) {
			struct pollfd pfd = {h->sig_fd, POLLIN, 0};
			if (poll(&pfd, 1, 0) != 1)
				break;
		}
		block = false;
		ssize_t n = read(h->sig_fd, si, sizeof si);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (h->quiet) {
			/* Stops came without a signal: read them first. */
			quiet_set(h, false);
			cfsbw_host__reap(h);
		}
		size_t count = (size_t)n / sizeof si[0];
		for (size_t i = 0; i < count; i++) {
			int signo = (int)si[i].ssi_signo;
			if (signo == SIGCHLD) {
				chld = true;
			} else if (signo == h->cputimer_signo) {
				cfsbw_host__cputimer_fired(h, si[i].ssi_int);
			} else if (signo == h->timer_signo) {
				on_host_timer(h, si[i].ssi_int);
			} else if (!stop_sig) {
				stop_sig = signo;
				*from_process = si[i].ssi_code == SI_USER ||
						si[i].ssi_code == SI_QUEUE ||
						si[i].ssi_code == SI_TKILL;
			}
		}
		if (count < sizeof si / sizeof si[0])
			break;
	}
	if (chld)
		cfsbw_host__reap(h);
	return stop_sig;
}

/* One wake-up: signals, then the watched descriptors that are ready. */
static int loop_once(struct cfsbw_host *h, bool *from_process)
{
	int sig = 0;
	if (!h->nr_watches) {
		sig = handle_signals(h, true, from_process);
	} else {
		struct epoll_event evs[16];
		int n = epoll_wait(h->epoll_fd, evs, 16, -1);
		if (n < 0 && errno != EINTR)
			BUG_ON(n < 0);
		bool signals = false;
		for (int i = 0; i < n; i++)
			signals |= evs[i].data.fd == h->sig_fd;
		if (signals) /* readable: the first read does not block */
			sig = handle_signals(h, true, from_process);
		for (int i = 0; i < n && !sig; i++)
			if (evs[i].data.fd != h->sig_fd)
				on_watched(h, evs[i].data.fd);
	}
	quiet_set(h, quiet_due(h));
	cfsbw_host__gtimers_sync(h);
	return sig;
}

/*
 * The command (or every attached process) has exited and, with wait_all,
 * so has every descendant.  A daemon runs until it is told to stop.
 */
static bool run_over(const struct cfsbw_host *h)
{
	if (h->stop_requested)
		return true;
	if (h->cfg.daemon || !h->root_gone || h->nr_extra_roots)
		return false;
	return !h->cfg.wait_all || (h->nr_live == 0 && h->nr_early == 0);
}

static void signal_all(struct cfsbw_host *h, int sig)
{
	for (unsigned rq = 0; rq < h->nr_rq; rq++)
		if (h->procs[rq])
			kill(h->procs[rq]->pid, sig);
}

static int shell_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/*
 * After SIGINT/SIGTERM/SIGHUP: everything is resumed and detached; wait for
 * the command (our child), passing on further signals, and detach any
 * tracee that still reports a stop.
 */
static void wait_command(struct cfsbw_host *h, int sig, bool from_process)
{
	if (!h->root_is_child) {
		h->root_status = sig; /* exit 128 + sig, below */
		return;
	}
	if (from_process)
		kill(h->root_pid, sig);
	while (cfsbw_host__trace_wait_root(h) == 0) {
		/* Sleep until a signal: SIGCHLD when the command exits. */
		struct signalfd_siginfo si[32];
		ssize_t n = read(h->sig_fd, si, sizeof si);
		for (ssize_t i = 0; i < n / (ssize_t)sizeof si[0]; i++) {
			int s = (int)si[i].ssi_signo;
			if ((s == SIGINT || s == SIGTERM || s == SIGHUP) &&
			    si[i].ssi_code == SI_USER)
				kill(h->root_pid, s);
		}
	}
}

/* CPU time the driver has used, from the fork that started it. */
static uint64_t self_cpu_ns(void)
{
	int64_t self = cfsbw_host__clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	return self > 0 ? (uint64_t)self : 0;
}

void cfsbw_host_result_unstarted(int status, struct cfsbw_host_result *res)
{
	memset(res, 0, sizeof *res);
	res->self_cpu_ns = self_cpu_ns();
	res->exit_status = status;
}

static void stat_timer_set(struct cfsbw_host *h, int64_t interval_ns)
{
	struct itimerspec its = {cfsbw_host__ns_to_ts(interval_ns),
				 cfsbw_host__ns_to_ts(interval_ns)};
	int rc = timer_settime(h->timers[HOST_TIMER_STAT], 0, &its, NULL);
	BUG_ON(rc < 0);
}

int cfsbw_host_run(struct cfsbw_host *h, struct cfsbw_host_result *res)
{
	memset(res, 0, sizeof *res);
	if (!h->root_pid && !h->cfg.daemon)
		return -EINVAL;
	h->stop_requested = false;
	if (h->cfg.stat_interval_ns > 0)
		stat_timer_set(h, h->cfg.stat_interval_ns);
	int sig = 0;
	bool from_process = false;
	/* A SIGCHLD may have come before the loop: look first. */
	cfsbw_host__reap(h);
	cfsbw_host__gtimers_sync(h);
	if (!h->start_ns)
		h->start_ns = cfsbw_host_now_ns();
	while (!run_over(h) && !sig)
		sig = loop_once(h, &from_process);
	quiet_set(h, false); /* what follows waits for stops too */
	/*
	 * --wait-all, the command gone: a signal sent to cfsbw is meant for
	 * the processes it governs; send it while they are still our tracees
	 * (an exited tracee waits for us, so no pid here can be reused).
	 */
	bool root_exited = h->root_gone; /* detaching below forgets it too */
	if (sig && from_process && root_exited && h->cfg.wait_all &&
	    !h->cfg.daemon)
		signal_all(h, sig);
	stat_timer_set(h, 0);
	int64_t end = cfsbw_host_now_ns();
	cfsbw_host__charge_all(h);
	cfsbw_group_stats(h->group ? h->group : cfsbw_tree_root(h->tree),
			  &res->stats);
	res->unpaid_ns = cfsbw_host__unpaid_ns(h);
	/* The run is over: whatever is left goes free (docs/host.md). */
	cfsbw_host__release_all(h);
	if (sig) {
		/* With wait_all the command may be gone, its pid reused. */
		if (!root_exited && h->root_pid)
			wait_command(h, sig, from_process);
		res->signal_received = sig;
	}
	res->usage_ns = h->usage_ns;
	res->wall_ns = (uint64_t)(end - h->start_ns);
	res->self_cpu_ns = self_cpu_ns();
	res->nr_processes = h->nr_processes;
	res->nr_thread_stops = h->nr_thread_stops;
	if (sig && !h->root_is_child)
		res->exit_status = 128 + sig;
	else
		res->exit_status = h->root_pid ? shell_status(h->root_status) : 0;
	return 0;
}
