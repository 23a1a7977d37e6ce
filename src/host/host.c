/*
 * host.c - the host driver: the core's callbacks, CPU clocks and CPU-time
 * timers, the period timer, and the event loop.
 *
 * Each governed process is a runqueue of the core.  The driver charges it
 * (R5) with what its process CPU clock advanced since the last charge, and
 * arms a POSIX CPU-time timer on that same clock (timer_create on another
 * process's CPU clock; the signal comes to us) to expire when the process
 * has used the runtime its local account holds (R6).  The kernel checks
 * CPU timers at every tick of the running process, so the driver learns
 * that an account ran dry within one tick (4 ms at HZ=250), without any
 * polling; it then charges again, and the core either hands out another
 * slice (re-arm) or throttles (R7: the process is stopped, trace.c).  The
 * period timer (R10) is a POSIX timer on CLOCK_MONOTONIC, the clock of
 * "now".
 *
 * Every event is a signal, read from one blocking signalfd: SIGCHLD (ptrace
 * stops and exits), the CPU-timer signal (value: the runqueue), the host
 * timer signal (value: period, slack or --stat-interval), and SIGINT,
 * SIGTERM, SIGHUP.  One read() returns a batch; there is no poll() and no
 * file descriptor per timer (each system call counts: docs/host.md).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
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

static struct timespec ns_to_ts(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / CFSBW_NSEC_PER_SEC),
			      (long)(ns % CFSBW_NSEC_PER_SEC)};
	return ts;
}

static int64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	if (clock_gettime(clock, &ts) < 0)
		return -1;
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

/* Arm a host timer at an absolute CLOCK_MONOTONIC time. */
static void host_timer_at(timer_t t, int64_t expires_ns)
{
	struct itimerspec its = {{0, 0}, ns_to_ts(expires_ns > 0 ? expires_ns : 1)};
	timer_settime(t, TIMER_ABSTIME, &its, NULL);
}

/* A process's promise of pool runtime ("reach", below) is void. */
static void reach_drop(struct cfsbw_host *h, struct host_proc *p)
{
	if (!p->reach_ns)
		return;
	h->reach_ns -= p->reach_ns;
	h->nr_reaching--;
	p->reach_ns = 0;
}

/*
 * A throttled process has threads left asleep, not stopped (trace.c,
 * "sleepers"), and the threads it interrupted have stopped: fire as soon as
 * one of those left runs more than HOST_SLEEPER_MARGIN_NS.  Not earlier:
 * an interrupted thread may run on for up to a tick before it stops (seen
 * here: 4 ms), and a sleeper that only wakes to go back to sleep (a
 * nanosleep restarted after an interrupt) should not stop all the others.
 * A sleeper that does run is stopped within that margin and a tick.
 */
#define HOST_SLEEPER_MARGIN_NS (500 * CFSBW_NSEC_PER_USEC)

void __host_sleepers_watch(struct host_proc *p)
{
	p->sleepers_watched = true;
	int64_t cpu = clock_ns(p->clock);
	if (p->timer_ok && cpu >= 0)
		host_timer_at(p->timer, cpu + HOST_SLEEPER_MARGIN_NS);
	p->armed_cpu_ns = INT64_MAX;
}

/* ---- the core's callbacks (run inside core calls: record and act) ---- */

static void cb_throttle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct cfsbw_host *h = ctx;
	struct host_proc *p = rq < h->nr_rq ? h->procs[rq] : NULL;
	(void)g;
	if (!p || p->throttled)
		return;
	/* R7: the process must stop at once; it needs no promise. */
	p->throttled = true;
	reach_drop(h, p);
	__trace_stop_proc(h, p, true);
}

static void cb_unthrottle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct cfsbw_host *h = ctx;
	struct host_proc *p = rq < h->nr_rq ? h->procs[rq] : NULL;
	(void)g;
	if (!p)
		return;
	/*
	 * R10: resume, but only once the core has returned and what the
	 * process ran past its throttle (its debt) is charged: a process whose
	 * debt eats the new runtime stays stopped, as an account the kernel's
	 * refresh leaves in the red stays throttled.  Resuming it first would
	 * let it run until it was stopped again: with 32 busy threads, whose
	 * CPU-time timer comes late (see the wall backstop below), the debt
	 * grew each period (0.30 s in 5 s at 0.5 CPU; 0.55 to 0.98 cores
	 * used instead of 0.5).
	 */
	p->throttled = false;
	p->sleepers = false;
	p->sleepers_watched = false;
	p->resume_pending = true;
	if (!p->arm_pending) {
		p->arm_pending = true;
		h->arm_list[h->nr_arm++] = p->rq;
	}
}

static void cb_period_timer_start(void *ctx, struct cfsbw_group *g,
				  int64_t expires_ns)
{
	struct cfsbw_host *h = ctx;
	(void)g;
	h->period_armed = true;
	h->period_expires_ns = expires_ns;
	host_timer_at(h->timers[HOST_TIMER_PERIOD], expires_ns);
}

static void cb_slack_timer_start(void *ctx, struct cfsbw_group *g,
				 int64_t expires_ns)
{
	struct cfsbw_host *h = ctx;
	(void)g;
	host_timer_at(h->timers[HOST_TIMER_SLACK], expires_ns);
}

static const struct cfsbw_ops host_ops = {
	.throttle = cb_throttle,
	.unthrottle = cb_unthrottle,
	.period_timer_start = cb_period_timer_start,
	.slack_timer_start = cb_slack_timer_start,
};

/* ---- processes as runqueues ---- */

/*
 * Reach: how far past its account a process's timer is armed.
 *
 * Armed only for the runtime its account holds, a busy process costs the
 * driver a wake-up, a clock read and a re-arm per slice (5 ms): most of
 * cfsbw's CPU.  So the timer is armed further, by a share of the pool's
 * runtime that nobody has been promised (shared with the running
 * processes that hold no promise, two slices kept for them when there are
 * any): the process may draw that much before the driver needs to look.
 * When it fires, what it ran is charged in pieces of at most a slice, each
 * drawing from the pool as a tick would (R6), so the core sees the same
 * draws, later.  A busy process at 50 % of a CPU, period 100 ms, wakes the
 * driver 3 times a period instead of 7 (docs/host.md, section 2).
 *
 * The promises never add up to more than the pool: when a charge leaves
 * the pool below them (a process without reach drew a slice, or a timer
 * fired late), every promise is taken back (those processes are charged and
 * re-armed); and before the period or slack timer hands the pool out, every
 * process holding a promise is charged first, so that what it ran is drawn
 * from the period it ran in (R10).
 */
static int64_t reach_grant(struct cfsbw_host *h, struct host_proc *p)
{
	/* Processes that may draw, p included, and hold no promise. */
	unsigned active = h->nr_live - h->nr_idle;
	unsigned unpromised = active > h->nr_reaching ? active - h->nr_reaching
						      : 0;
	/* Two slices stay free for the others, if any, and newcomers. */
	int64_t spare = unpromised > 1 ? 2 * cfsbw_tree_slice_ns(h->tree) : 0;
	int64_t avail = cfsbw_group_pool_runtime_ns(h->group) - h->reach_ns;
	if (avail <= spare || !unpromised)
		return 0;
	int64_t share = (avail - spare) / unpromised;
	if (share <= 0)
		return 0; /* reach_drop counts a promise only when it is > 0 */
	p->reach_ns = share;
	h->reach_ns += p->reach_ns;
	h->nr_reaching++;
	return p->reach_ns;
}

/*
 * Wall backstop.  The kernel delivers a process CPU-time timer late when
 * the process has more busy threads than CPUs: measured at 0.5 CPU on 2
 * CPUs, the driver found the process past its expiry by 2 ms of CPU
 * (median) with 1 thread, 3.5 ms with 2, 19 ms with 4, 57 ms with 16 and
 * 92 ms with 32, while its own CLOCK_MONOTONIC timers came within 0.04 ms.
 * (The expiry runs as task work of the thread whose tick saw it, and that
 * thread may be preempted first while the others run on.)  So when a
 * multi-threaded process's timer comes more than HOST_TIMER_LATE_NS late,
 * the driver also looks, on its own clock, at the earliest moment the
 * process could spend its runtime with every CPU: CPU left / CPUs.  The
 * look charges and re-arms both timers, as an expiry does.  A look that
 * finds the process used less than half of that was not needed (its
 * threads sleep more than they run), and the backstop goes off again: a
 * pool of 32 mostly idle threads must not wake the driver for nothing.
 * What is left is the driver's own wake-up among the busy threads: with 64
 * of them on 2 CPUs the look came 2-8 ms late in the median and 30-90 ms
 * at worst (neither nice -5 nor a 100 us sched_attr slice for the driver
 * changed that), so a period's use is its quota in the median and up to
 * three quotas at worst, paid back from the next ones.
 */
#define HOST_TIMER_LATE_NS (8 * CFSBW_NSEC_PER_MSEC) /* two ticks at HZ=250 */
/* Looks closer together than this would only cost wake-ups. */
#define HOST_BACKSTOP_MIN_NS (200 * CFSBW_NSEC_PER_USEC)

static void wall_backstop_arm(struct cfsbw_host *h, struct host_proc *p,
			      int64_t left)
{
	if (!p->wall_ok) {
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = h->cputimer_signo;
		sev.sigev_value.sival_int = (int)(p->rq | HOST_WALL_BIT);
		p->wall_ok = timer_create(CLOCK_MONOTONIC, &sev,
					  &p->wall_timer) == 0;
		if (!p->wall_ok)
			return;
	}
	int64_t wall = left / h->nr_cpus;
	if (wall < HOST_BACKSTOP_MIN_NS)
		wall = HOST_BACKSTOP_MIN_NS;
	p->wall_left_ns = left;
	struct itimerspec its = {{0, 0}, ns_to_ts(wall)};
	timer_settime(p->wall_timer, 0, &its, NULL);
}

/*
 * R6: expire when p has used the runtime its account holds, and its reach.
 * An account with nothing (a new process: "nothing assigned", R4) expires
 * at p's next tick, when the first charge draws a slice.
 */
static void cputimer_arm(struct cfsbw_host *h, struct host_proc *p)
{
	reach_drop(h, p);
	if (!p->timer_ok)
		return;
	int64_t left = cfsbw_account_runtime_ns(h->group, p->rq);
	struct itimerspec its = {{0, 0}, {0, 0}};
	if (p->idle) {
		/* An idle process: wake up at its next tick of CPU (R9). */
		left = 1;
	} else if (left != CFSBW_RUNTIME_INF) {
		/* A debt (left < 0) is drawn first, from the reach. */
		left += reach_grant(h, p);
	}
	p->armed_cpu_ns = INT64_MAX;
	if (left != CFSBW_RUNTIME_INF) {
		p->armed_cpu_ns = p->last_cpu_ns + (left > 0 ? left : 1);
		its.it_value = ns_to_ts(p->armed_cpu_ns);
	}
	timer_settime(p->timer, TIMER_ABSTIME, &its, NULL);
	if (p->backstop && !p->idle && left != CFSBW_RUNTIME_INF)
		wall_backstop_arm(h, p, left > 0 ? left : 1);
}

/* Charge every process holding a promise, marked to be re-armed after. */
static void reach_take_back(struct cfsbw_host *h)
{
	if (!h->reach_ns)
		return;
	h->reach_revoking = true;
	for (unsigned rq = 0; rq < h->nr_rq && h->reach_ns; rq++) {
		struct host_proc *p = h->procs[rq];
		if (!p || !p->reach_ns)
			continue;
		reach_drop(h, p);
		p->resync = true;
		__host_proc_charge(h, p, false);
	}
	h->reach_revoking = false;
}

static void reach_rearm(struct cfsbw_host *h)
{
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (!p || !p->resync)
			continue;
		p->resync = false;
		if (!p->throttled)
			cputimer_arm(h, p);
	}
}

/* The promises exceed the pool: take them all back. */
static void reach_check(struct cfsbw_host *h)
{
	if (h->reach_ns && !h->reach_revoking &&
	    cfsbw_group_pool_runtime_ns(h->group) < h->reach_ns) {
		reach_take_back(h);
		reach_rearm(h);
	}
}

/* Charge p up to cpu, its CPU clock as just read. */
static void proc_charge_to(struct cfsbw_host *h, struct host_proc *p,
			   int64_t cpu, bool arm)
{
	if (cpu < 0)
		return; /* reaped: charged as a zombie, in __trace_reap */
	int64_t delta = cpu > p->last_cpu_ns ? cpu - p->last_cpu_ns : 0;
	p->last_cpu_ns += delta;
	h->usage_ns += (uint64_t)delta;
	int64_t now = cfsbw_host_now_ns();
	if (delta > 0) {
		p->active_seq = h->period_seq;
		if (p->idle) {
			/* R9, R10: runnable again (the period timer restarts). */
			p->idle = false;
			h->nr_idle--;
			p->enqueued = true;
			cfsbw_task_enqueue(h->group, p->rq, now);
		}
	}
	delta += h->debt_ns;
	h->debt_ns = 0;
	/*
	 * R5, R6: the kernel charges at every tick, so an account that runs
	 * dry asks for one slice having used at most a tick more, and its debt
	 * is under a slice: the one slice a v4 refresh gives (R10) clears it.
	 * The driver learns later than a tick when the machine is busy or the
	 * process has several threads, so it charges in pieces of at most a
	 * slice (each piece that empties the account draws a slice, as ticks
	 * would), and what the process ran past the moment it was throttled is
	 * kept as its own debt, charged in pieces once it runs again: from the
	 * next period's pool, so nothing is lost (R13) and no refresh is
	 * wasted on a debt of several slices.
	 */
	delta += p->debt_ns;
	p->debt_ns = 0;
	int64_t slice = cfsbw_tree_slice_ns(h->tree);
	while (delta > 0) {
		int64_t piece = delta < slice ? delta : slice;
		if (p->throttled)
			break;
		delta -= piece;
		cfsbw_charge(h->group, p->rq, piece, now);
	}
	p->debt_ns += delta;
	/* Its promise is drawn; did it draw others' too? */
	reach_drop(h, p);
	reach_check(h);
	if (arm && !p->throttled)
		cputimer_arm(h, p);
}

void __host_proc_charge(struct cfsbw_host *h, struct host_proc *p, bool arm)
{
	proc_charge_to(h, p, clock_ns(p->clock), arm);
}

void __host_run_arm_list(struct cfsbw_host *h)
{
	while (h->nr_arm) {
		unsigned rq = h->arm_list[--h->nr_arm];
		struct host_proc *p = h->procs[rq];
		if (!p || !p->arm_pending)
			continue;
		p->arm_pending = false;
		__host_proc_charge(h, p, true);
		if (p->resume_pending) {
			p->resume_pending = false;
			if (!p->throttled)
				__trace_resume_proc(h, p);
		}
	}
}

int __host_proc_join(struct cfsbw_host *h, struct host_proc *p,
		     bool charge_past)
{
	/*
	 * The process CPU clock of pid, as the kernel's ABI encodes it
	 * (MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)); clock_getcpuclockid
	 * would cost a system call to check what the first read checks.
	 */
	p->clock = (clockid_t)((~(unsigned)p->pid << 3) | 2u);
	if (charge_past) {
		/* A new child: all its CPU time is the group's (R5). */
		p->last_cpu_ns = 0;
	} else {
		p->last_cpu_ns = clock_ns(p->clock);
		if (p->last_cpu_ns < 0)
			return -ESRCH;
	}
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = h->cputimer_signo;
	sev.sigev_value.sival_int = (int)p->rq;
	p->timer_ok = timer_create(p->clock, &sev, &p->timer) == 0;
	p->throttled = false;
	p->arm_pending = false;
	p->resume_pending = false;
	h->nr_processes++;
	if (!h->start_ns)
		h->start_ns = cfsbw_host_now_ns();
	/* R9, R10: runnable from now on (the period timer starts); R6: a
	 * zero charge draws its first slice before it runs. */
	int64_t now = cfsbw_host_now_ns();
	cfsbw_task_enqueue(h->group, p->rq, now);
	p->enqueued = true;
	p->idle = false;
	p->active_seq = h->period_seq;
	cfsbw_charge(h->group, p->rq, 0, now);
	/* That slice may have come out of others' promises. */
	reach_check(h);
	if (!p->throttled)
		cputimer_arm(h, p);
	return 0;
}

void __host_proc_leave(struct cfsbw_host *h, struct host_proc *p)
{
	int64_t now = cfsbw_host_now_ns();
	if (p->timer_ok)
		timer_delete(p->timer);
	p->timer_ok = false;
	if (p->wall_ok)
		timer_delete(p->wall_timer);
	p->wall_ok = false;
	reach_drop(h, p);
	p->resync = false;
	if (p->idle)
		h->nr_idle--;
	p->idle = false;
	/*
	 * R13: cfsbw_rq_offline returns unused runtime to the pool but forgets
	 * a debt (runtime used past the account's, by at most a tick); carry
	 * it to the next charge so that whole runs stay within the quota.
	 */
	int64_t left = cfsbw_account_runtime_ns(h->group, p->rq);
	if (left < 0)
		h->debt_ns += -left;
	h->debt_ns += p->debt_ns;
	p->debt_ns = 0;
	if (p->enqueued)
		cfsbw_task_dequeue(h->group, p->rq, now);
	p->enqueued = false;
	cfsbw_rq_offline(h->tree, p->rq, now);
	p->arm_pending = false;
	p->resume_pending = false;
	p->throttled = false;
	p->sleepers = false;
	p->sleepers_watched = false;
}

/* ---- life cycle ---- */

int cfsbw_host_create(const struct cfsbw_host_config *cfg,
		      struct cfsbw_host **out)
{
	/*
	 * Hard limits (seeds 009-011) bound a group by its runqueues' shares,
	 * which processes do not have here, and the reach's promises assume a
	 * pool that only the period timer refills.
	 */
	if (cfg->policy >= CFSBW_POLICY_COUNT ||
	    cfg->policy == CFSBW_POLICY_HARDLIMITS)
		return -EINVAL;
	struct cfsbw_host *h = calloc(1, sizeof(*h));
	int err = -ENOMEM;
	if (!h)
		goto fail_alloc;
	h->cfg = *cfg;
	h->sig_fd = -1;
	h->cputimer_signo = SIGRTMIN + 2;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	h->nr_cpus = cpus > 0 ? (unsigned)cpus : 1;
	h->timer_signo = SIGRTMIN + 3;
	err = __proc_table_init(h);
	if (err < 0)
		goto fail_table;

	struct cfsbw_tree_config tc = {
		.nr_rq = h->nr_rq,
		.policy = cfg->policy,
		.ops = &host_ops,
		.ctx = h,
	};
	err = cfsbw_tree_create(&tc, &h->tree);
	if (err < 0)
		goto fail_tree;
	err = cfsbw_group_create(h->tree, "/run", &h->group);
	if (err < 0)
		goto fail_group;

	for (int i = 0; i < HOST_NR_TIMERS; i++) {
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = h->timer_signo;
		sev.sigev_value.sival_int = i;
		if (timer_create(CLOCK_MONOTONIC, &sev, &h->timers[i]) < 0) {
			err = -errno;
			goto fail_timers;
		}
		h->nr_timers = i + 1;
	}

	/*
	 * An ignored SIGCHLD (inherited from whoever started us) would be
	 * discarded, not queued, and tracees' zombies reaped before we could
	 * read their clocks: take the default disposition while we run.
	 */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &dfl, &h->old_chld);
	/* Every event is read from the signalfd, never by a handler. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, h->cputimer_signo);
	sigaddset(&set, h->timer_signo);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &h->old_mask);
	h->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (h->sig_fd < 0) {
		err = -errno;
		goto fail_sigfd;
	}
	*out = h;
	return 0;

fail_sigfd:
	sigprocmask(SIG_SETMASK, &h->old_mask, NULL);
	sigaction(SIGCHLD, &h->old_chld, NULL);
fail_timers:
	for (int i = 0; i < h->nr_timers; i++)
		timer_delete(h->timers[i]);
fail_group:
	cfsbw_tree_free(h->tree);
fail_tree:
	__proc_table_free(h);
fail_table:
	free(h);
fail_alloc:
	return err;
}

void cfsbw_host_destroy(struct cfsbw_host *h)
{
	if (!h)
		return;
	if (h->nr_threads || h->nr_early)
		__trace_detach_all(h);
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (p && p->timer_ok)
			timer_delete(p->timer);
		if (p && p->wall_ok)
			timer_delete(p->wall_timer);
	}
	close(h->sig_fd);
	for (int i = 0; i < h->nr_timers; i++)
		timer_delete(h->timers[i]);
	sigaction(SIGCHLD, &h->old_chld, NULL);
	sigprocmask(SIG_SETMASK, &h->old_mask, NULL);
	cfsbw_tree_free(h->tree);
	__proc_table_free(h);
	free(h);
}

struct cfsbw_group *cfsbw_host_group(struct cfsbw_host *h)
{
	return h->group;
}

struct cfsbw_tree *cfsbw_host_tree(struct cfsbw_host *h)
{
	return h->tree;
}

uint64_t cfsbw_host_usage_ns(const struct cfsbw_host *h)
{
	return h->usage_ns;
}

unsigned cfsbw_host_nr_live(const struct cfsbw_host *h)
{
	return h->nr_live;
}

int cfsbw_host_spawn(struct cfsbw_host *h, char *const argv[])
{
	if (h->root_pid)
		return -EBUSY;
	return __trace_spawn(h, argv);
}

int cfsbw_host_attach(struct cfsbw_host *h, pid_t pid)
{
	if (h->root_pid && h->root_is_child)
		return -EBUSY;
	if (pid <= 0)
		return -ESRCH;
	if (h->root_pid)
		return __trace_attach_more(h, pid);
	int err = __trace_attach(h, pid);
	if (err < 0)
		h->root_pid = 0;
	return err;
}

/* ---- the event loop ---- */

static void charge_all(struct cfsbw_host *h)
{
	for (unsigned rq = 0; rq < h->nr_rq; rq++)
		if (h->procs[rq])
			__host_proc_charge(h, h->procs[rq], !h->procs[rq]->throttled);
	__host_run_arm_list(h);
}

/*
 * R9, R10: the driver cannot see a process fall asleep without polling, so
 * at each expiry it looks at the processes whose CPU time did not grow
 * during the whole period before (their timers did not fire: one clock read
 * each, and only for them).  Those that still have not run are dequeued as
 * idle, and their CPU-time timer is armed for their next tick of CPU, which
 * enqueues them again.  When every process of the group sleeps, the period
 * timer stops, as the kernel's does, and nr_periods stops counting.
 */
static void idle_scan(struct cfsbw_host *h)
{
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (!p || p->idle || p->throttled || !p->enqueued ||
		    p->active_seq + 1 >= h->period_seq)
			continue;
		int64_t cpu = clock_ns(p->clock);
		if (cpu < 0)
			continue;
		if (cpu > p->last_cpu_ns) {
			__host_proc_charge(h, p, true);
			continue;
		}
		p->idle = true;
		h->nr_idle++;
		p->enqueued = false;
		cfsbw_task_dequeue(h->group, p->rq, cfsbw_host_now_ns());
		cputimer_arm(h, p);
	}
}

static void on_period_timer(struct cfsbw_host *h)
{
	if (!h->period_armed)
		return; /* a stale expiry: the core stopped the timer since */
	h->period_seq++;
	/* What ran on promises belongs to the period ending (R10). */
	reach_take_back(h);
	idle_scan(h);
	int64_t now = cfsbw_host_now_ns();
	int64_t next = cfsbw_period_timer_fire(h->group, now);
	if (next == CFSBW_TIMER_STOP) {
		h->period_armed = false;
	} else {
		h->period_expires_ns = next;
		host_timer_at(h->timers[HOST_TIMER_PERIOD], next);
	}
	/* R10: resumed processes are charged what they ran and re-armed. */
	__host_run_arm_list(h);
	reach_rearm(h);
	reach_check(h);
}

static void on_slack_timer(struct cfsbw_host *h)
{
	reach_take_back(h);
	int64_t next = cfsbw_slack_timer_fire(h->group, cfsbw_host_now_ns());
	if (next != CFSBW_TIMER_STOP)
		host_timer_at(h->timers[HOST_TIMER_SLACK], next);
	__host_run_arm_list(h);
	reach_rearm(h);
	reach_check(h);
}

static void on_stat_timer(struct cfsbw_host *h)
{
	charge_all(h);
	if (h->cfg.on_stat)
		h->cfg.on_stat(h->cfg.ctx, h);
}

void __host_early_timer(struct cfsbw_host *h, int64_t at_ns)
{
	host_timer_at(h->timers[HOST_TIMER_EARLY], at_ns);
}

static void on_host_timer(struct cfsbw_host *h, int which)
{
	switch (which) {
	case HOST_TIMER_PERIOD:
		on_period_timer(h);
		break;
	case HOST_TIMER_SLACK:
		on_slack_timer(h);
		break;
	case HOST_TIMER_STAT:
		on_stat_timer(h);
		break;
	case HOST_TIMER_EARLY:
		__trace_reap(h);
		break;
	default:
		break;
	}
}

/* A one-shot timer has expired and was not armed again since. */
static bool timer_fired(timer_t t)
{
	struct itimerspec cur;
	return timer_gettime(t, &cur) == 0 && !cur.it_value.tv_sec &&
	       !cur.it_value.tv_nsec;
}

static void on_cputimer(struct cfsbw_host *h, int value)
{
	bool wall = value & HOST_WALL_BIT;
	int rq = value & ~HOST_WALL_BIT;
	if (rq < 0 || (unsigned)rq >= h->nr_rq)
		return;
	struct host_proc *p = h->procs[rq];
	if (!p)
		return; /* stale: the process left */
	if (p->throttled) {
		/*
		 * A sleeper ran (trace.c, "sleepers"): stop every thread.  A
		 * signal from before the throttle is stale: the timer is still
		 * armed for the sleepers, or not yet.
		 */
		if (!wall && p->sleepers_watched && p->timer_ok &&
		    timer_fired(p->timer)) {
			p->sleepers = false;
			__trace_stop_proc(h, p, false);
		}
		return;
	}
	/* A wall timer re-armed since it fired: stale, and says nothing. */
	if (wall && !(p->wall_ok && timer_fired(p->wall_timer)))
		return;
	/* One read serves the checks below and the charge. */
	int64_t cpu = clock_ns(p->clock);
	if (wall) {
		if (cpu >= 0 && cpu - p->last_cpu_ns < p->wall_left_ns / 2)
			p->backstop = false; /* its threads mostly sleep */
	} else if (p->nr_threads > 1 && !p->backstop) {
		if (cpu >= 0 && p->armed_cpu_ns != INT64_MAX &&
		    cpu - p->armed_cpu_ns > HOST_TIMER_LATE_NS)
			p->backstop = true; /* wall backstop, above */
	}
	proc_charge_to(h, p, cpu, true);
	__host_run_arm_list(h);
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
	if (!h->nr_live || h->nr_early)
		return false;
	unsigned pending = 0;
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		const struct host_proc *p = h->procs[rq];
		if (!p)
			continue;
		if (!p->throttled || p->sleepers)
			return false;
		pending += __trace_pending_stops(p);
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
	if (sigaction(SIGCHLD, &sa, NULL) == 0)
		h->quiet = on;
}

/*
 * Wait for signals and handle a batch; returns the first of SIGINT,
 * SIGTERM, SIGHUP (and whether a process sent it, rather than the
 * terminal), or 0.  The first read blocks; more are read only when a batch
 * filled the buffer.
 */
static int handle_signals(struct cfsbw_host *h, bool *from_process)
{
	struct signalfd_siginfo si[32];
	int stop_sig = 0;
	bool chld = false;
	for (;;) {
		ssize_t n = read(h->sig_fd, si, sizeof si);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (h->quiet) {
			/* Stops came without a signal: read them first. */
			quiet_set(h, false);
			__trace_reap(h);
		}
		size_t count = (size_t)n / sizeof si[0];
		for (size_t i = 0; i < count; i++) {
			int signo = (int)si[i].ssi_signo;
			if (signo == SIGCHLD) {
				chld = true;
			} else if (signo == h->cputimer_signo) {
				on_cputimer(h, si[i].ssi_int);
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
		struct pollfd pfd = {h->sig_fd, POLLIN, 0};
		if (poll(&pfd, 1, 0) != 1)
			break;
	}
	if (chld)
		__trace_reap(h);
	quiet_set(h, quiet_due(h));
	return stop_sig;
}

/*
 * The command (or every attached process) has exited and, with wait_all,
 * so has every descendant.
 */
static bool run_over(const struct cfsbw_host *h)
{
	if (!h->root_gone || h->nr_extra_roots)
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
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid > 0) {
			if (WIFSTOPPED(status)) {
				int ev = status >> 16;
				ptrace(PTRACE_DETACH, pid, (void *)0,
				       (void *)(unsigned long)(ev ? 0 : WSTOPSIG(status)));
			} else if (pid == h->root_pid) {
				h->root_status = status;
				return;
			}
			continue;
		}
		if (pid < 0 && errno == ECHILD)
			return;
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
	int64_t self = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	return self > 0 ? (uint64_t)self : 0;
}

void cfsbw_host_result_unstarted(int status, struct cfsbw_host_result *res)
{
	memset(res, 0, sizeof *res);
	res->self_cpu_ns = self_cpu_ns();
	res->exit_status = status;
}

int cfsbw_host_run(struct cfsbw_host *h, struct cfsbw_host_result *res)
{
	memset(res, 0, sizeof *res);
	if (!h->root_pid)
		return -EINVAL;
	if (h->cfg.stat_interval_ns > 0) {
		struct itimerspec its = {ns_to_ts(h->cfg.stat_interval_ns),
					 ns_to_ts(h->cfg.stat_interval_ns)};
		timer_settime(h->timers[HOST_TIMER_STAT], 0, &its, NULL);
	}
	int sig = 0;
	bool from_process = false;
	/* A SIGCHLD may have come before the loop: look first. */
	__trace_reap(h);
	while (!run_over(h) && !sig)
		sig = handle_signals(h, &from_process);
	quiet_set(h, false); /* what follows waits for stops too */
	/*
	 * --wait-all, the command gone: a signal sent to cfsbw is meant for
	 * the processes it governs; send it while they are still our tracees
	 * (an exited tracee waits for us, so no pid here can be reused).
	 */
	bool root_exited = h->root_gone; /* detaching below forgets it too */
	if (sig && from_process && root_exited && h->cfg.wait_all)
		signal_all(h, sig);
	struct itimerspec off = {{0, 0}, {0, 0}};
	timer_settime(h->timers[HOST_TIMER_STAT], 0, &off, NULL);
	int64_t end = cfsbw_host_now_ns();
	charge_all(h);
	cfsbw_group_stats(h->group, &res->stats);
	/* The run is over: whatever is left goes free (docs/host.md). */
	__trace_detach_all(h);
	if (sig) {
		/* With wait_all the command may be gone, its pid reused. */
		if (!root_exited)
			wait_command(h, sig, from_process);
		res->signal_received = sig;
	}
	res->usage_ns = h->usage_ns;
	res->wall_ns = h->start_ns ? (uint64_t)(end - h->start_ns) : 0;
	res->self_cpu_ns = self_cpu_ns();
	res->nr_processes = h->nr_processes;
	res->nr_thread_stops = h->nr_thread_stops;
	if (sig && !h->root_is_child)
		res->exit_status = 128 + sig;
	else
		res->exit_status = shell_status(h->root_status);
	return 0;
}
