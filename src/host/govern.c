/*
 * govern.c - the driver's decisions: what the core's callbacks do to real
 * processes, how a process joins, leaves and moves between groups, and
 * what each ptrace event (born, stopped, exited) means for the group.
 *
 * trace.c reports events and carries out thread operations; cputimer.c
 * charges and arms; group.c keeps the groups' timers and runs their
 * expiries; admit.c takes processes in.  Every decision that ties them together is made here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "host/host_int.h"

static void set_throttled(struct cfsbw_host *h, struct host_proc *p, bool on)
{
	if (p->throttled == on)
		return;
	p->throttled = on;
	if (on)
		h->nr_throttled++;
	else
		h->nr_throttled--;
}

/* ---- stopping and resuming (R7, R10) ---- */

/* Once no interrupt of p's is pending, watch for its sleepers to run. */
static void sleepers_check(struct host_proc *p)
{
	if (!p->throttled || !p->sleepers || p->sleepers_watched ||
	    cfsbw_host__trace_pending_stops(p))
		return;
	cfsbw_host__sleepers_watch(p);
}

void cfsbw_host__stop_proc(struct cfsbw_host *h, struct host_proc *p,
			   bool look)
{
	look = look && p->nr_threads > 1;
	for (struct host_thread *t = p->threads; t; t = t->proc_next) {
		/* Held threads are stopped; listening ones report again on
		 * SIGCONT and are held then. */
		if (t->state != TH_RUNNING || t->interrupt_sent)
			continue;
		if (look && cfsbw_host__thread_asleep(p, t)) {
			p->sleepers = true;
			continue;
		}
		cfsbw_host__thread_interrupt(h, t);
	}
	sleepers_check(p);
}

static void resume_proc(struct host_proc *p)
{
	for (struct host_thread *t = p->threads; t; t = t->proc_next)
		if (t->state == TH_HELD)
			cfsbw_host__thread_cont(t, 0);
}

/* After an event stop: run on, or stay held if the process is throttled. */
static void resume_or_hold(struct host_thread *t)
{
	if (t->proc->throttled)
		t->state = TH_HELD;
	else
		cfsbw_host__thread_cont(t, 0);
}

/* ---- the core's callbacks (run inside core calls: record and act) ---- */

static struct host_proc *proc_of_rq(struct cfsbw_host *h, unsigned rq)
{
	return rq < h->nr_rq ? h->procs[rq] : NULL;
}

static void cb_throttle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct cfsbw_host *h = ctx;
	struct host_proc *p = proc_of_rq(h, rq);
	(void)g; /* g may be an ancestor of p's group (R11): p stops all the same */
	if (!p || !p->grp || p->throttled)
		return;
	/* R7: the process must stop at once; it needs no promise. */
	set_throttled(h, p, true);
	cfsbw_host__reach_drop(p->grp, p);
	if (h->defer_stops) {
		if (!p->stop_deferred) {
			p->stop_deferred = true;
			h->stop_list[h->nr_stop++] = p->rq;
		}
		return;
	}
	cfsbw_host__stop_proc(h, p, true);
}

/*
 * Stops deferred.  At a group's period (or slack) expiry the driver first
 * charges what the group's running processes ran on their promises (R10:
 * it belongs to the period ending), and that charge often spends the
 * account: the process is throttled (R7), and the refresh that follows at
 * once, in the same expiry, unthrottles it.  Stopping it in between cost a
 * PTRACE_INTERRUPT (an interrupt between CPUs), a wake-up for its stop
 * and a PTRACE_CONT, for a stop of a few microseconds: measured with 20
 * groups at 5 ms per 100 ms on a busy machine, 128 of 171 unthrottles
 * came before the throttle's stop (docs/host.md section 11).  So inside
 * an expiry a throttle only marks the process; when the expiry is over,
 * those still throttled are stopped, as the kernel's tick would have
 * found them.  The core saw the same throttle and unthrottle either way.
 */
void cfsbw_host__stops_flush(struct cfsbw_host *h)
{
	h->defer_stops = false;
	while (h->nr_stop) {
		unsigned rq = h->stop_list[--h->nr_stop];
		struct host_proc *p = rq < h->nr_rq ? h->procs[rq] : NULL;
		if (!p || !p->stop_deferred)
			continue;
		p->stop_deferred = false;
		if (p->throttled && p->grp)
			cfsbw_host__stop_proc(h, p, true);
	}
}

static void cb_unthrottle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct cfsbw_host *h = ctx;
	struct host_proc *p = proc_of_rq(h, rq);
	(void)g;
	if (!p || !p->grp)
		return;
	/*
	 * R10: resume, but only once the core has returned and what the
	 * process ran past its throttle (its debt) is charged: a process whose
	 * debt eats the new runtime stays stopped, as an account the kernel's
	 * refresh leaves in the red stays throttled.  Resuming it first would
	 * let it run until it was stopped again: with 32 busy threads, whose
	 * CPU-time timer comes late (cputimer.c, the wall backstop), the debt
	 * grew each period (0.30 s in 5 s at 0.5 CPU; 0.55 to 0.98 cores
	 * used instead of 0.5).
	 */
	set_throttled(h, p, false);
	p->sleepers = false;
	p->sleepers_watched = false;
	p->resume_pending = true;
	if (!p->arm_pending) {
		p->arm_pending = true;
		h->arm_list[h->nr_arm++] = p->rq;
	}
}

/* The core asks for one of g's two timers; both are armed the same way. */
static void group_timer_start(struct cfsbw_host *h, struct cfsbw_group *g,
			      enum host_gtimer_kind kind, int64_t expires_ns)
{
	struct host_group *grp = cfsbw_host__group_get(h, g);
	if (!grp) {
		fprintf(stderr, "cfsbw: %s: out of memory for its timer: "
				"its pool is not refilled\n",
			cfsbw_group_path(g));
		return;
	}
	cfsbw_host__gtimer_set(h, grp, kind, expires_ns);
}

static void cb_period_timer_start(void *ctx, struct cfsbw_group *g,
				  int64_t expires_ns)
{
	group_timer_start(ctx, g, HOST_GT_PERIOD, expires_ns);
}

static void cb_slack_timer_start(void *ctx, struct cfsbw_group *g,
				 int64_t expires_ns)
{
	group_timer_start(ctx, g, HOST_GT_SLACK, expires_ns);
}

const struct cfsbw_ops cfsbw_host__ops = {
	.throttle = cb_throttle,
	.unthrottle = cb_unthrottle,
	.period_timer_start = cb_period_timer_start,
	.slack_timer_start = cb_slack_timer_start,
};

void cfsbw_host__run_arm_list(struct cfsbw_host *h)
{
	while (h->nr_arm) {
		unsigned rq = h->arm_list[--h->nr_arm];
		struct host_proc *p = h->procs[rq];
		if (!p || !p->arm_pending || !p->grp)
			continue;
		p->arm_pending = false;
		/* R11: another account on its path may still hold it. */
		if (cfsbw_throttled(p->grp->g, p->rq)) {
			p->resume_pending = false;
			set_throttled(h, p, true);
			continue;
		}
		cfsbw_host__charge(h, p, true);
		if (p->resume_pending) {
			p->resume_pending = false;
			if (!p->throttled)
				resume_proc(p);
		}
	}
}

/* ---- processes as runqueues in groups ---- */

/* p enters grp's accounts on its runqueue (R9, R10; R6 first slice). */
static void core_enter(struct cfsbw_host *h, struct host_proc *p,
		       struct host_group *grp)
{
	cfsbw_host__group_add_proc(grp, p);
	int64_t now = cfsbw_host_now_ns();
	p->enqueued = true;
	p->idle = false;
	p->active_seq = grp->period_seq;
	/* R9, R10: runnable from now on (the period timer starts); R6: a
	 * zero charge draws its first slice before it runs. */
	cfsbw_task_enqueue(grp->g, p->rq, now);
	cfsbw_charge(grp->g, p->rq, 0, now);
	/* That slice may have come out of others' promises. */
	cfsbw_host__reach_check(h, grp);
	if (!p->throttled)
		cfsbw_host__cputimer_arm(h, p);
}

/* p leaves its group's accounts; its runqueue goes offline (R13). */
static void core_exit(struct cfsbw_host *h, struct host_proc *p)
{
	struct host_group *grp = p->grp;
	int64_t now = cfsbw_host_now_ns();
	cfsbw_host__reach_drop(grp, p);
	p->resync = false;
	if (p->idle)
		grp->nr_idle--;
	p->idle = false;
	/*
	 * R13: cfsbw_rq_offline returns unused runtime to the pool but forgets
	 * a debt (runtime used past the account's, by at most a tick); carry
	 * it to the group's next charge so that whole runs stay within the
	 * quota.
	 */
	int64_t left = cfsbw_account_runtime_ns(grp->g, p->rq);
	if (left < 0 && left != CFSBW_RUNTIME_INF)
		grp->debt_ns += -left;
	grp->debt_ns += p->debt_ns;
	p->debt_ns = 0;
	if (p->enqueued)
		cfsbw_task_dequeue(grp->g, p->rq, now);
	p->enqueued = false;
	cfsbw_rq_offline(h->tree, p->rq, now);
	p->arm_pending = false;
	p->resume_pending = false;
	set_throttled(h, p, false);
	p->sleepers = false;
	p->sleepers_watched = false;
	cfsbw_host__group_del_proc(grp, p);
}

int cfsbw_host__proc_join(struct cfsbw_host *h, struct host_proc *p,
			  struct host_group *grp, bool charge_past)
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
		p->last_cpu_ns = cfsbw_host__clock_ns(p->clock);
		if (p->last_cpu_ns < 0)
			return -ESRCH;
	}
	int err = cfsbw_host__cputimer_create(h, p);
	if (err < 0)
		return err;
	p->arm_pending = false;
	p->resume_pending = false;
	h->nr_processes++;
	if (!h->start_ns)
		h->start_ns = cfsbw_host_now_ns();
	core_enter(h, p, grp);
	return 0;
}

void cfsbw_host__proc_leave(struct cfsbw_host *h, struct host_proc *p)
{
	cfsbw_host__cputimer_delete(p);
	if (p->grp)
		core_exit(h, p);
}

/*
 * SPEC section 8: a governed process moves to grp.  What it used so far is
 * charged to its old group (R5), its runqueue goes offline there (R13),
 * and it enters grp on the same runqueue number (cfsbw_rq_offline frees it
 * for reuse), so its timers stay as they are.  Held threads stay held if
 * grp throttles it at once; otherwise they resume.
 */
void cfsbw_host__proc_move(struct cfsbw_host *h, struct host_proc *p,
			  struct host_group *grp)
{
	if (p->grp == grp)
		return;
	cfsbw_host__charge(h, p, false);
	core_exit(h, p);
	core_enter(h, p, grp);
	if (!p->throttled)
		resume_proc(p);
	cfsbw_host__run_arm_list(h);
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
	cfsbw_host__proc_leave(h, p);
	cfsbw_host__proc_free(h, p);
}

void cfsbw_host__charge_all(struct cfsbw_host *h)
{
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (p && p->grp)
			cfsbw_host__charge(h, p, !p->throttled);
	}
	cfsbw_host__run_arm_list(h);
}

/*
 * A debt waits in three places: the group's (left by a process that
 * exited), a process's own (read while it was throttled), and its
 * account's runtime below zero (the overrun of its last charge).
 */
uint64_t cfsbw_host__unpaid_ns(const struct cfsbw_host *h)
{
	uint64_t sum = 0;
	list_for_each_entry(grp, &h->groups, struct host_group, all_link)
		sum += (uint64_t)grp->debt_ns;
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		const struct host_proc *p = h->procs[rq];
		if (!p || !p->grp)
			continue;
		sum += (uint64_t)p->debt_ns;
		int64_t left = cfsbw_account_runtime_ns(p->grp->g, p->rq);
		if (left < 0)
			sum += (uint64_t)-left;
	}
	return sum;
}

void cfsbw_host_charge_now(struct cfsbw_host *h)
{
	cfsbw_host__charge_all(h);
	cfsbw_host__gtimers_sync(h);
}

/* ---- ptrace events ---- */

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
 * A tracee was born to parent (fork, vfork or clone event): a thread of
 * parent's process, or a process of its own in parent's group (R5: its
 * CPU time is the group's from its first instruction).  Let it run.
 */
static void adopt(struct cfsbw_host *h, struct host_proc *parent, pid_t tid,
		  bool is_thread)
{
	bool held = cfsbw_host__early_take(h, tid);
	if (cfsbw_host__thread_find(h, tid))
		return;
	struct host_thread *t;
	if (is_thread) {
		t = cfsbw_host__thread_new(h, parent, tid);
		if (!t)
			goto untracked;
	} else {
		struct host_proc *p = cfsbw_host__proc_new(h, tid);
		if (!p) {
			warn_full(h);
			goto untracked;
		}
		t = cfsbw_host__thread_new(h, p, tid);
		if (!t || cfsbw_host__proc_join(h, p, parent->grp, true) < 0) {
			cfsbw_host__proc_leave(h, p);
			cfsbw_host__proc_free(h, p);
			goto untracked;
		}
	}
	if (held) {
		resume_or_hold(t);
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
		cfsbw_host__thread_detach(tid, 0);
}

/* The command's exit status, recorded once (its pid may be reused). */
static void note_root_exit(struct cfsbw_host *h, pid_t tid, int status)
{
	if (tid != h->root_pid || h->root_gone)
		return;
	h->root_status = status;
	h->root_gone = true;
}

void cfsbw_host__on_exited(struct cfsbw_host *h, pid_t tid, int status)
{
	struct host_thread *t = cfsbw_host__thread_find(h, tid);
	note_root_exit(h, tid, status);
	if (!t)
		return;
	struct host_proc *p = t->proc;
	/* The leader is reported last: its exit is the process's. */
	if (cfsbw_host__thread_forget(h, t) || tid == p->pid)
		proc_gone(h, p);
	else
		sleepers_check(p); /* t may have had an interrupt pending */
}

static void on_stopped(struct cfsbw_host *h, const struct host_trace_event *ev)
{
	struct host_thread *t = cfsbw_host__thread_find(h, ev->tid);
	if (!t) {
		/*
		 * A new tracee's first stop, ahead of its creator's event: hold
		 * it until we know whose it is, so that none of its CPU time
		 * escapes (a child may live less than a tick).
		 */
		if (ev->kind == HOST_EV_TRAP && cfsbw_host__proc_room(h) &&
		    cfsbw_host__early_add(h, ev->tid, cfsbw_host_now_ns()))
			return;
		cfsbw_host__trace_cont(ev->tid,
				       ev->kind == HOST_EV_SIGNAL ? ev->sig : 0);
		return;
	}
	/*
	 * Any ptrace stop clears a pending PTRACE_INTERRUPT (the kernel's
	 * ptrace_stop(): "any trap clears pending STOP trap"): a thread sent
	 * one while inside clone() reports the clone event and never the
	 * interrupt.  Left set, the flag made every later throttle skip that
	 * thread, and it ran free: a process making 32 threads while being
	 * throttled used 1.0 CPU of 0.5 from then on.
	 */
	t->interrupt_sent = false;
	switch (ev->kind) {
	case HOST_EV_BORN:
		if (ev->child > 0)
			adopt(h, t->proc, ev->child, ev->child_is_thread);
		resume_or_hold(t);
		break;
	case HOST_EV_TRAP:
		resume_or_hold(t);
		break;
	case HOST_EV_GROUP_STOP:
		/* Somebody stopped it (SIGSTOP, ^Z): it stays stopped as it
		 * would without us, until SIGCONT. */
		cfsbw_host__thread_listen(t);
		break;
	case HOST_EV_SIGNAL:
		/* Signal-delivery stop: pass the signal on, as sent. */
		cfsbw_host__thread_cont(t, ev->sig);
		if (t->proc->throttled)
			cfsbw_host__thread_interrupt(h, t);
		break;
	case HOST_EV_OTHER_STOP:
	case HOST_EV_ZOMBIE:
	case HOST_EV_EXITED:
		cfsbw_host__thread_cont(t, 0);
		break;
	}
	/* t is still there: a stop does not free it. */
	sleepers_check(t->proc);
}

static void release_untracked(pid_t tid)
{
	cfsbw_host__thread_detach(tid, 0);
}

void cfsbw_host__reap(struct cfsbw_host *h)
{
	struct host_trace_event ev;
	while (cfsbw_host__trace_next(h, &ev)) {
		switch (ev.kind) {
		case HOST_EV_ZOMBIE: {
			/* R5: a zombie's clock reads, its exit's cost included:
			 * charge it in full before it is reaped. */
			struct host_thread *t = cfsbw_host__thread_find(h, ev.tid);
			if (t && t->proc->pid == ev.tid && t->proc->grp)
				cfsbw_host__charge(h, t->proc, false);
			break;
		}
		case HOST_EV_EXITED:
			cfsbw_host__on_exited(h, ev.tid, ev.status);
			break;
		case HOST_EV_BORN:
		case HOST_EV_TRAP:
		case HOST_EV_GROUP_STOP:
		case HOST_EV_SIGNAL:
		case HOST_EV_OTHER_STOP:
			on_stopped(h, &ev);
			break;
		}
	}
	/*
	 * A held tid whose creator never names it is let go after a while;
	 * the timer makes sure that happens even if no other report comes.
	 */
	if (h->nr_early) {
		int64_t next = cfsbw_host__early_expire(h, cfsbw_host_now_ns(),
							release_untracked);
		if (next)
			cfsbw_host__timer_at(h, HOST_TIMER_EARLY, next);
	}
}

void cfsbw_host__early_fired(struct cfsbw_host *h)
{
	cfsbw_host__reap(h);
}

/* ---- letting go ---- */

void cfsbw_host__release_all(struct cfsbw_host *h)
{
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (!p)
			continue;
		if (p->grp)
			cfsbw_host__charge(h, p, false);
		set_throttled(h, p, false);
	}
	cfsbw_host__trace_detach_all(h);
	/* Processes now empty leave the core. */
	for (unsigned rq = 0; rq < h->nr_rq; rq++) {
		struct host_proc *p = h->procs[rq];
		if (p && !p->threads)
			proc_gone(h, p);
	}
}
