/*
 * cputimer.c - CPU clocks and CPU-time timers: how the driver learns what a
 * process ran without polling, and charges it (R5, R6).
 *
 * Each governed process is a runqueue of the core.  The driver charges it
 * (R5) with what its process CPU clock advanced since the last charge, and
 * arms a POSIX CPU-time timer on that same clock (timer_create on another
 * process's CPU clock; the signal comes to the driver) to expire when the
 * process has used the runtime its accounts hold (R6).  The kernel checks
 * CPU timers at every tick of the running process, so the driver learns
 * that an account ran dry within one tick (4 ms at HZ=250); it then charges
 * again, and the core either hands out another slice (re-arm) or throttles
 * (R7: the process is stopped, govern.c).
 *
 * Two refinements live here: the "reach" ledger (a timer armed past the
 * account, for runtime of the pool promised to the process) and the wall
 * backstop (a CLOCK_MONOTONIC timer for a process whose CPU-time timer
 * comes late).
 */
#include <errno.h>
#include <string.h>

#include "host/host_int.h"

/* Set a timer; only a timer of a process that is gone may refuse. */
static void settime(timer_t t, int flags, const struct itimerspec *its)
{
	if (timer_settime(t, flags, its, NULL) < 0)
		BUG_ON(errno != ESRCH);
}

int cfsbw_host__cputimer_create(struct cfsbw_host *h, struct host_proc *p)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = h->cputimer_signo;
	sev.sigev_value.sival_int = (int)p->rq;
	p->timer_ok = timer_create(p->clock, &sev, &p->timer) == 0;
	return p->timer_ok ? 0 : -errno;
}

void cfsbw_host__cputimer_delete(struct host_proc *p)
{
	if (p->timer_ok)
		timer_delete(p->timer);
	p->timer_ok = false;
	if (p->wall_ok)
		timer_delete(p->wall_timer);
	p->wall_ok = false;
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

void cfsbw_host__sleepers_watch(struct host_proc *p)
{
	p->sleepers_watched = true;
	int64_t cpu = cfsbw_host__clock_ns(p->clock);
	if (p->timer_ok && cpu >= 0) {
		struct itimerspec its = {
			{0, 0},
			cfsbw_host__ns_to_ts(cpu + HOST_SLEEPER_MARGIN_NS)};
		settime(p->timer, TIMER_ABSTIME, &its);
	}
	p->armed_cpu_ns = INT64_MAX;
}

/* ---- reach ---- */

void cfsbw_host__reach_drop(struct host_group *grp, struct host_proc *p)
{
	if (!p->reach_ns)
		return;
	grp->reach_ns -= p->reach_ns;
	grp->nr_reaching--;
	p->reach_ns = 0;
}

/* A limited group above g: its pool bounds g's processes too (R11). */
static bool limited_above(const struct cfsbw_group *g)
{
	for (g = cfsbw_group_parent(g); g; g = cfsbw_group_parent(g))
		if (cfsbw_group_quota_ns(g) != CFSBW_RUNTIME_INF)
			return true;
	return false;
}

/*
 * Reach: how far past its account a process's timer is armed.
 *
 * Armed only for the runtime its account holds, a busy process costs the
 * driver a wake-up, a clock read and a re-arm per slice (5 ms): most of
 * cfsbw's CPU.  So the timer is armed further, by a share of the pool's
 * runtime that nobody has been promised (shared with the group's running
 * processes that hold no promise, two slices kept for them when there are
 * any): the process may draw that much before the driver needs to look.
 * When it fires, what it ran is charged in pieces shorter than a slice, each
 * drawing from the pool as a tick would (R6), so the core sees the same
 * draws, later.  A busy process at 50 % of a CPU, period 100 ms, wakes the
 * driver 3 times a period instead of 7 (docs/host.md, section 2).
 *
 * The promises never add up to more than the pool: when a charge leaves
 * the pool below them (a process without reach drew a slice, or a timer
 * fired late), every promise of the group is taken back (those processes
 * are charged and re-armed); and before the period or slack timer hands
 * the pool out, every process holding a promise is charged first, so that
 * what it ran is drawn from the period it ran in (R10).  A group under a
 * limited ancestor gets no reach: the ancestor's pool is shared with other
 * groups, whose charges this ledger does not see.
 *
 * Why the ledger is the driver's and not the core's: a promise is runtime
 * the core still counts as the pool's, which any other runqueue may draw
 * (R6); taking it into the account instead would change what the others
 * can draw within the period, and so the policy.  The core would need a
 * "reserved" figure per pool that draws leave alone; the driver keeps that
 * figure here, per group, and checks it after each of its own core calls.
 */
static int64_t reach_grant(struct cfsbw_host *h, struct host_proc *p)
{
	struct host_group *grp = p->grp;
	/* Processes that may draw, p included, and hold no promise. */
	unsigned active = grp->nr_procs - grp->nr_idle;
	unsigned unpromised = active > grp->nr_reaching
				      ? active - grp->nr_reaching
				      : 0;
	if (!unpromised || limited_above(grp->g))
		return 0;
	/* Two slices stay free for the others, if any, and newcomers. */
	int64_t spare = unpromised > 1 ? 2 * cfsbw_tree_slice_ns(h->tree) : 0;
	int64_t avail = cfsbw_group_pool_runtime_ns(grp->g) - grp->reach_ns;
	if (avail <= spare)
		return 0;
	int64_t share = (avail - spare) / unpromised;
	if (share <= 0)
		return 0; /* reach_drop counts a promise only when it is > 0 */
	p->reach_ns = share;
	grp->reach_ns += p->reach_ns;
	grp->nr_reaching++;
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
			return; /* the CPU-time timer alone, as before */
	}
	int64_t wall = left / h->nr_cpus;
	if (wall < HOST_BACKSTOP_MIN_NS)
		wall = HOST_BACKSTOP_MIN_NS;
	p->wall_left_ns = left;
	struct itimerspec its = {{0, 0}, cfsbw_host__ns_to_ts(wall)};
	settime(p->wall_timer, 0, &its);
}

/*
 * R6: expire when p has used the runtime its accounts hold (the least over
 * its limited path, R11), and its reach.  An account with nothing (a new
 * process: "nothing assigned", R4) expires at p's next tick, when the
 * first charge draws a slice.
 */
void cfsbw_host__cputimer_arm(struct cfsbw_host *h, struct host_proc *p)
{
	cfsbw_host__reach_drop(p->grp, p);
	/* Armed now: a re-arm owed since a promise was taken back is paid
	 * (the refresh armed it; reach_rearm would set the same again). */
	p->resync = false;
	if (!p->timer_ok)
		return;
	int64_t left = cfsbw_runtime_left_ns(p->grp->g, p->rq);
	struct itimerspec its = {{0, 0}, {0, 0}};
	(void)h;
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
		its.it_value = cfsbw_host__ns_to_ts(p->armed_cpu_ns);
	}
	settime(p->timer, TIMER_ABSTIME, &its);
	if (p->backstop && !p->idle && left != CFSBW_RUNTIME_INF)
		wall_backstop_arm(h, p, left > 0 ? left : 1);
}

/* Charge every process of grp holding a promise, marked to be re-armed. */
void cfsbw_host__reach_take_back(struct cfsbw_host *h, struct host_group *grp)
{
	if (!grp->reach_ns)
		return;
	grp->reach_revoking = true;
	list_for_each_entry(p, &grp->procs, struct host_proc, grp_link) {
		if (!grp->reach_ns)
			break;
		if (!p->reach_ns)
			continue;
		cfsbw_host__reach_drop(grp, p);
		p->resync = true;
		cfsbw_host__charge(h, p, false);
	}
	grp->reach_revoking = false;
}

void cfsbw_host__reach_rearm(struct cfsbw_host *h, struct host_group *grp)
{
	list_for_each_entry(p, &grp->procs, struct host_proc, grp_link) {
		if (!p->resync)
			continue;
		p->resync = false;
		if (!p->throttled)
			cfsbw_host__cputimer_arm(h, p);
	}
}

/* The promises exceed the pool: take them all back. */
void cfsbw_host__reach_check(struct cfsbw_host *h, struct host_group *grp)
{
	if (grp->reach_ns && !grp->reach_revoking &&
	    cfsbw_group_pool_runtime_ns(grp->g) < grp->reach_ns) {
		cfsbw_host__reach_take_back(h, grp);
		cfsbw_host__reach_rearm(h, grp);
	}
}

/* ---- charging ---- */

void cfsbw_host__charge_to(struct cfsbw_host *h, struct host_proc *p,
			   int64_t cpu, bool arm)
{
	if (cpu < 0)
		return; /* reaped: charged as a zombie (govern.c) */
	struct host_group *grp = p->grp;
	int64_t delta = cpu > p->last_cpu_ns ? cpu - p->last_cpu_ns : 0;
	p->last_cpu_ns += delta;
	h->usage_ns += (uint64_t)delta;
	/* cpuacct.usage of the group and every ancestor (made with it). */
	for (struct host_group *a = grp; a; a = a->parent)
		a->usage_ns += (uint64_t)delta;
	int64_t now = cfsbw_host_now_ns();
	if (delta > 0) {
		p->active_seq = cfsbw_host__clock_group(p)->period_seq;
		if (p->idle) {
			/* R9, R10: runnable again (the period timer restarts). */
			p->idle = false;
			grp->nr_idle--;
			p->enqueued = true;
			cfsbw_task_enqueue(grp->g, p->rq, now);
		}
	}
	delta += grp->debt_ns;
	grp->debt_ns = 0;
	/*
	 * R5, R6: the kernel charges at every tick, so an account that runs
	 * dry asks for one slice having used at most a tick more, and its debt
	 * is under a slice: the one slice a v4 refresh gives (R10) clears it.
	 * The driver learns later than a tick when the machine is busy or the
	 * process has several threads, so it charges in pieces shorter than a
	 * slice (each piece that empties the account draws a slice, as ticks
	 * would), and what the process ran past the moment it was throttled is
	 * kept as its own debt, charged in pieces once it runs again: from the
	 * next period's pool, so nothing is lost (R13) and no refresh is
	 * wasted on a debt of several slices.  A piece is 1 ns short of a
	 * slice, as a tick is shorter than one: the slice it draws (R6) then
	 * leaves the account above zero whenever the pool has it.  A whole
	 * slice charged to an account at zero (as a quota write leaves it,
	 * R4) drew a slice and left it at zero: throttled again (R7) with
	 * 890 ms in the pool, and held for the rest of the period.
	 */
	delta += p->debt_ns;
	p->debt_ns = 0;
	int64_t piece_max_ns = cfsbw_tree_slice_ns(h->tree) - 1;
	while (delta > 0) {
		int64_t piece = delta < piece_max_ns ? delta : piece_max_ns;
		if (p->throttled)
			break;
		delta -= piece;
		cfsbw_charge(grp->g, p->rq, piece, now);
	}
	p->debt_ns += delta;
	/* Its promise is drawn; did it draw others' too? */
	cfsbw_host__reach_drop(grp, p);
	cfsbw_host__reach_check(h, grp);
	if (arm && !p->throttled)
		cfsbw_host__cputimer_arm(h, p);
}

void cfsbw_host__charge(struct cfsbw_host *h, struct host_proc *p, bool arm)
{
	cfsbw_host__charge_to(h, p, cfsbw_host__clock_ns(p->clock), arm);
}

/* A one-shot timer has expired and was not armed again since. */
static bool timer_fired(timer_t t)
{
	struct itimerspec cur;
	return timer_gettime(t, &cur) == 0 && !cur.it_value.tv_sec &&
	       !cur.it_value.tv_nsec;
}

void cfsbw_host__cputimer_fired(struct cfsbw_host *h, int value)
{
	bool wall = value & HOST_WALL_BIT;
	int rq = value & ~HOST_WALL_BIT;
	if (rq < 0 || (unsigned)rq >= h->nr_rq)
		return;
	struct host_proc *p = h->procs[rq];
	if (!p || !p->grp)
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
			cfsbw_host__stop_proc(h, p, false);
		}
		return;
	}
	/* A wall timer re-armed since it fired: stale, and says nothing. */
	if (wall && !(p->wall_ok && timer_fired(p->wall_timer)))
		return;
	/* One read serves the checks below and the charge. */
	int64_t cpu = cfsbw_host__clock_ns(p->clock);
	if (wall) {
		if (cpu >= 0 && cpu - p->last_cpu_ns < p->wall_left_ns / 2)
			p->backstop = false; /* its threads mostly sleep */
	} else if (p->nr_threads > 1 && !p->backstop) {
		if (cpu >= 0 && p->armed_cpu_ns != INT64_MAX &&
		    cpu - p->armed_cpu_ns > HOST_TIMER_LATE_NS)
			p->backstop = true; /* wall backstop, above */
	}
	cfsbw_host__charge_to(h, p, cpu, true);
	cfsbw_host__run_arm_list(h);
}
