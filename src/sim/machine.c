/*
 * machine.c - the simulated CPUs: where each task's time goes, the core's
 * throttling decisions acted out on the CPU queues, picking what runs, sleep
 * and wake-up.  Ticks and the run's events are in run.c, load balancing in
 * balance.c.
 *
 * The core decides; the machine obeys.  A charge (R5) happens wherever
 * Linux updates the running task's time: at each tick, when it sleeps, when
 * it is switched out, before a wake-up on its CPU.  The core's callbacks
 * run with its pool lock held and must not call back into it, so they only
 * record the decision (throttle, unthrottle) here; the machine acts on the
 * record as soon as the core returns (cfsbw_sim__core_drain()), and reschedules
 * the CPUs it touched when the current event is done
 * (cfsbw_sim__process_resched()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

/* ---- task states: where each task's time goes ------------------------ */

void cfsbw_sim__task_set_state(struct cfsbw_sim *s, struct sim_task *t,
			       enum sim_task_state st)
{
	t->state_ns[t->state] += s->now - t->state_since;
	t->state = st;
	t->state_since = s->now;
}

/* ---- bookkeeping of CPUs: idle set, R9 counts, rescheduling ----------- */

static void cpu_set_idle(struct cfsbw_sim *s, unsigned c, bool idle)
{
	struct sim_cpu *cpu = &s->cpus[c];
	if (cpu->idle == idle)
		return;
	if (s->cpu_util) /* its utilisation up to now, at the old state */
		cfsbw_sim__pelt_cpu_util(s, c);
	cpu->idle = idle;
	if (!idle)
		cpu->busy_since = s->now;
	uint64_t bit = UINT64_C(1) << (c % 64);
	if (idle) {
		s->idle_mask[c / 64] |= bit;
		s->nr_idle++;
	} else {
		s->idle_mask[c / 64] &= ~bit;
		s->nr_idle--;
	}
}

/* R9: the count of tasks that can run, as the core keeps it. */
static void cpu_update_nr(struct cfsbw_sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	unsigned nr = cfsbw_rq_nr_running(s->tree, c);
	if ((cpu->nr >= 2) != (nr >= 2)) {
		if (nr >= 2)
			s->nr_overloaded++;
		else
			s->nr_overloaded--;
	}
	cpu->nr = nr;
}

void cfsbw_sim__cpu_resched(struct cfsbw_sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	if (cpu->resched)
		return;
	cpu->resched = true;
	s->resched_list[s->nr_resched++] = c;
}

/* ---- the core's decisions --------------------------------------------- */

static void push_pending(struct cfsbw_sim *s, struct cfsbw_group *cg,
			 unsigned rq, enum sim_pending_op op)
{
	SIM_BUG_ON(s->nr_pending >= s->cap_pending);
	struct sim_pending *p = &s->pending[s->nr_pending++];
	p->g = cfsbw_group_driver_data(cg);
	p->cpu = rq;
	p->op = op;
}

static void cb_throttle(void *ctx, struct cfsbw_group *cg, unsigned rq)
{
	push_pending(ctx, cg, rq, SIM_OP_THROTTLE);
}

static void cb_unthrottle(void *ctx, struct cfsbw_group *cg, unsigned rq)
{
	push_pending(ctx, cg, rq, SIM_OP_UNTHROTTLE);
}

/* A deadline the core asks for in the past fires now, never back in time. */
static void arm_not_before_now(struct cfsbw_sim *s, struct sim_timer *t,
			       int64_t expires_ns)
{
	cfsbw_sim__timer_arm(&s->evq, t,
			     expires_ns < s->now ? s->now : expires_ns);
}

static void cb_period_timer_start(void *ctx, struct cfsbw_group *cg,
				  int64_t expires_ns)
{
	struct sim_group *g = cfsbw_group_driver_data(cg);
	arm_not_before_now(ctx, &g->period_timer, expires_ns);
}

static void cb_slack_timer_start(void *ctx, struct cfsbw_group *cg,
				 int64_t expires_ns)
{
	struct sim_group *g = cfsbw_group_driver_data(cg);
	arm_not_before_now(ctx, &g->slack_timer, expires_ns);
}

const struct cfsbw_ops cfsbw_sim__core_ops = {
	.throttle = cb_throttle,
	.unthrottle = cb_unthrottle,
	.period_timer_start = cb_period_timer_start,
	.slack_timer_start = cb_slack_timer_start,
};

/*
 * The tasks queued below q (the queue of a group on CPU c), waiting or
 * throttled, to the state `to` (the other of the two): those in its heap
 * and, through the group entities on it, in theirs.  A group entity off
 * its queue with tasks is throttled itself (R7) and its tasks stay so.
 * Towards waiting, a queue whose group the core still throttles (R11:
 * itself, or through an ancestor; also a decision not yet acted on, later
 * in the same drain) keeps its tasks throttled, and those below it.  Only
 * the subtree is read, where a walk of the CPU's tasks read every one
 * (and the groups above each).
 */
static void set_queued_states(struct cfsbw_sim *s, struct sim_cfs_rq *q,
			      enum sim_task_state to, unsigned c)
{
	if (to == SIM_TS_WAITING && cfsbw_throttled(q->owner->group->cg, c))
		return;
	enum sim_task_state from =
		to == SIM_TS_THROTTLED ? SIM_TS_WAITING : SIM_TS_THROTTLED;
	if (q->curr && q->curr->on_rq && q->curr->my_q)
		set_queued_states(s, q->curr->my_q, to, c);
	for (struct sim_entity *se = cfsbw_sim__cfs_heap_first(q); se;
	     se = cfsbw_sim__cfs_heap_next(q, se)) {
		if (se->my_q) {
			set_queued_states(s, se->my_q, to, c);
			continue;
		}
		struct sim_task *t = task_of(se);
		if (t->state == from)
			cfsbw_sim__task_set_state(s, t, to);
	}
}

/*
 * R7: g's account on CPU c is throttled: its entity leaves the parent's
 * queue, so nothing below it runs here; the CPU reschedules at once if it
 * was running something below it.
 */
static void do_throttle(struct cfsbw_sim *s, struct sim_group *g, unsigned c)
{
	struct sim_gcpu *gc = &g->pc[c];
	struct sim_cpu *cpu = &s->cpus[c];

	SIM_BUG_ON(gc->throttled);
	gc->throttled = true;
	g->throttles++;
	g->sample_throttles++;
	if (gc->se.on_rq)
		cfsbw_sim__cfs_dequeue_path(s, &gc->se, c);
	cfsbw_sim__cfs_reweight_path(s, g, c); /* R8 */
	set_queued_states(s, &gc->q, SIM_TS_THROTTLED, c);
	if (cpu->curr && group_in_subtree(cpu->curr->g, g))
		cfsbw_sim__cpu_resched(s, c);
	cpu_update_nr(s, c);
}

/*
 * R10/R11: g's account on CPU c has runtime again: its entity rejoins the
 * queue if it has work (R11: it may still wait under a throttled
 * ancestor), and an idle CPU wakes up.
 */
static void do_unthrottle(struct cfsbw_sim *s, struct sim_group *g, unsigned c)
{
	struct sim_gcpu *gc = &g->pc[c];
	struct sim_cpu *cpu = &s->cpus[c];

	SIM_BUG_ON(!gc->throttled);
	gc->throttled = false;
	if (gc->q.nr_running > 0 && !gc->se.on_rq) {
		cfsbw_sim__cfs_place_entity(s, gc->se.cfs_rq, &gc->se);
		cfsbw_sim__cfs_enqueue_path(s, &gc->se, c);
	}
	cfsbw_sim__cfs_reweight_path(s, g, c);
	set_queued_states(s, &gc->q, SIM_TS_WAITING, c);
	cpu_update_nr(s, c);
	if (!cpu->curr && cpu->nr > 0)
		cfsbw_sim__cpu_resched(s, c);
}

/* Act on what the core decided during the call that just returned. */
void cfsbw_sim__drain_pending(struct cfsbw_sim *s)
{
	for (size_t i = 0; i < s->nr_pending; i++) {
		struct sim_pending *p = &s->pending[i];
		if (p->op == SIM_OP_THROTTLE)
			do_throttle(s, p->g, p->cpu);
		else
			do_unthrottle(s, p->g, p->cpu);
	}
	s->nr_pending = 0;
}

/* ---- running time ------------------------------------------------------ */

/*
 * Account the running task's time since it last was: its virtual runtime
 * and that of every group entity above it, the groups' usage, and R5: the
 * charge to its group's accounts, which may throttle it.
 */
void cfsbw_sim__cpu_update_curr(struct cfsbw_sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	struct sim_task *t = cpu->curr;
	if (!t)
		return;
	int64_t delta = s->now - cpu->exec_start;
	if (delta <= 0)
		return;
	cpu->exec_start = s->now;
	if (t->burst_left != INT64_MAX)
		t->burst_left -= delta;
	for (struct sim_entity *se = &t->se; se; se = se->parent) {
		se->sum_exec += delta;
		se->vruntime += cfsbw_sim__cfs_calc_delta_fair(delta, se);
		se->ran = true; /* its queue is left alone: cfs_settle */
		/* EEVDF: its slice used up, it gets a new deadline and the
		 * CPU picks again if another entity waits at that level */
		if (s->eevdf && cfsbw_sim__eevdf_update_deadline(s, se) &&
		    se->cfs_rq->nr_running > 1)
			cfsbw_sim__cpu_resched(s, c);
	}
	t->g->usage_ns += delta; /* its ancestors' at the end of the run */
	s->busy_ns += delta;
	if (cfsbw_charge(t->g->cg, c, delta, s->now))
		cfsbw_sim__cpu_resched(s, c); /* R7: reschedule at once */
	cfsbw_sim__core_drain(s);
}

static void arm_burst(struct cfsbw_sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	struct sim_task *t = cpu->curr;
	if (t->burst_left == INT64_MAX) {
		cfsbw_sim__timer_cancel(&s->evq, &cpu->burst);
		return;
	}
	int64_t left = t->burst_left > 0 ? t->burst_left : 0;
	cfsbw_sim__timer_arm(&s->evq, &cpu->burst, s->now + left);
}

/* ---- joining and leaving a CPU ------------------------------------------ */

void cfsbw_sim__check_preempt_wakeup(struct cfsbw_sim *s, unsigned c,
				     struct sim_task *t)
{
	struct sim_cpu *cpu = &s->cpus[c];
	if (cfsbw_throttled(t->g->cg, c))
		return; /* it waits under a throttled entity (R7) */
	if (!cpu->curr) {
		cfsbw_sim__cpu_resched(s, c);
		return;
	}
	struct sim_entity *se = &t->se, *pse = &cpu->curr->se;
	while (se->depth > pse->depth)
		se = se->parent;
	while (pse->depth > se->depth)
		pse = pse->parent;
	while (se->cfs_rq != pse->cfs_rq) {
		se = se->parent;
		pse = pse->parent;
	}
	/* EEVDF: the woken entity preempts if it is now the pick, curr's
	 * slice protected (check_preempt_wakeup_fair) */
	if (s->eevdf ? cfsbw_sim__eevdf_pick(s, se->cfs_rq, true) == se
		     : cfsbw_sim__cfs_wakeup_preempt(s, pse, se))
		cfsbw_sim__cpu_resched(s, c);
}

void cfsbw_sim__task_attach(struct cfsbw_sim *s, struct sim_task *t, unsigned c)
{
	struct sim_group *g = t->g;
	t->cpu = c;
	t->se.cfs_rq = &g->pc[c].q;
	t->se.parent = g->parent ? &g->pc[c].se : NULL;
	cfsbw_sim__cfs_enqueue_path(s, &t->se, c);
	list_add_head(&s->cpus[c].tasks, &t->link); /* as Linux enqueues */
	if (s->cpu_pelt)
		cfsbw_sim__pelt_task_runnable(s, t, true);
	t->runnable = true;
	cfsbw_task_enqueue(g->cg, c, s->now);
	cfsbw_sim__core_drain(s);
	cpu_update_nr(s, c);
	cfsbw_sim__task_set_state(s, t,
				  cfsbw_throttled(g->cg, c) ? SIM_TS_THROTTLED
							    : SIM_TS_WAITING);
}

void cfsbw_sim__task_detach(struct cfsbw_sim *s, struct sim_task *t)
{
	unsigned c = t->cpu;
	cfsbw_sim__cfs_dequeue_path(s, &t->se, c);
	list_del(&t->link);
	if (s->cpu_pelt)
		cfsbw_sim__pelt_task_runnable(s, t, false);
	t->runnable = false;
	cfsbw_task_dequeue(t->g->cg, c, s->now);
	cfsbw_sim__core_drain(s);
	cpu_update_nr(s, c);
}

/* Carry t's virtual runtime over, relative to the queues' minimums. */
void cfsbw_sim__task_renormalize(struct sim_task *t, unsigned from, unsigned to)
{
	struct sim_cfs_rq *a = &t->g->pc[from].q, *b = &t->g->pc[to].q;
	cfsbw_sim__cfs_settle(a);
	cfsbw_sim__cfs_settle(b);
	t->se.vruntime = t->se.vruntime - a->min_vruntime + b->min_vruntime;
}

/* ---- scheduling ------------------------------------------------------- */

/* prev stopped running on CPU c: waiting for it, or, runnable under a
 * group the core throttles there, throttled. */
static void switched_out(struct cfsbw_sim *s, unsigned c,
			 struct sim_task *prev)
{
	if (prev->runnable)
		cfsbw_sim__task_set_state(s, prev,
					  cfsbw_throttled(prev->g->cg, c)
						  ? SIM_TS_THROTTLED
						  : SIM_TS_WAITING);
}

/* t, picked, runs on CPU c, where prev ran (NULL: none). */
SIM_ALWAYS_INLINE void run_task(struct cfsbw_sim *s, unsigned c,
			       struct sim_task *prev, struct sim_task *t)
{
	struct sim_cpu *cpu = &s->cpus[c];
	cpu->curr = t;
	cpu->exec_start = s->now;
	if (t != prev)
		s->switches++;
	/* the list runs from the most recently run (Linux's cfs_tasks):
	 * balancing looks from the other end (pull_task) */
	list_move_head(&cpu->tasks, &t->link);
	cfsbw_sim__task_set_state(s, t, SIM_TS_RUNNING);
	cpu_set_idle(s, c, false);
	arm_burst(s, c);
	if (!timer_armed(&s->evq, &s->tick_timer))
		cfsbw_sim__timer_arm(&s->evq, &s->tick_timer,
				     (s->now / s->tick_ns + 1) * s->tick_ns);
}

/*
 * Pick what runs next on CPU c.  With something to run and a task
 * running, the running path competes where it is and only its part below
 * the new path's is put back (cfs_pick_from, cfs_switch_path: Linux's
 * pick_next_task_fair since 3.15); else the running task is put back and
 * the pick goes from the root, level by level down to a task, after a
 * CPU about to idle has tried to pull one.  R9: whether there is anything
 * to run is the core's hierarchical count, and the model's queues must
 * agree with it.
 */
void cfsbw_sim__schedule_cpu(struct cfsbw_sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	struct sim_task *prev = cpu->curr;
	struct sim_cfs_rq *rq = &s->groups[0]->pc[c].q;

	if (prev) {
		cfsbw_sim__cpu_update_curr(s, c);
		prev->last_ran_ns = s->now;
		/* Something to run: the running path stays where it is
		 * picked again (cfs_switch_path) */
		if (cfsbw_rq_nr_running(s->tree, c) > 0) {
			struct sim_entity *se = cfsbw_sim__cfs_pick_from(s, rq);
			struct sim_task *t = task_of(se);
			if (t != prev) {
				cfsbw_sim__cfs_switch_path(s, &prev->se, se);
				switched_out(s, c, prev);
			}
			run_task(s, c, prev, t);
			return;
		}
		for (struct sim_entity *se = &prev->se; se; se = se->parent)
			cfsbw_sim__cfs_put_entity(s, se->cfs_rq, se);
		cpu->curr = NULL;
		switched_out(s, c, prev);
	}
	for (;;) {
		unsigned nr = cfsbw_rq_nr_running(s->tree, c);
		SIM_BUG_ON((nr == 0) != (rq->nr_running == 0));
		if (nr > 0)
			break;
		if (cfsbw_sim__balance_newidle(s, c))
			continue;
		cpu_set_idle(s, c, true); /* no tick when idle */
		cfsbw_sim__timer_cancel(&s->evq, &cpu->burst);
		return;
	}
	struct sim_cfs_rq *q = rq;
	struct sim_entity *se;
	for (;;) {
		se = s->eevdf ? cfsbw_sim__eevdf_pick(s, q, false)
			      : cfsbw_sim__cfs_first(q);
		SIM_BUG_ON(!se);
		cfsbw_sim__cfs_take_entity(s, q, se);
		if (!se->my_q)
			break;
		q = se->my_q;
	}
	run_task(s, c, prev, task_of(se));
}

void cfsbw_sim__resched_cpus(struct cfsbw_sim *s)
{
	while (s->nr_resched > 0) {
		unsigned c = s->resched_list[--s->nr_resched];
		s->cpus[c].resched = false;
		cfsbw_sim__schedule_cpu(s, c);
	}
}

/* ---- sleep and wake-up -------------------------------------------------- */

/*
 * wake_scan util, Linux's select_idle_sibling since 6.0, t's previous CPU
 * busy: the CPU it was on when it last got here (recent_used_cpu) if idle
 * and in its domain, else the next CPUs of its domain in order, as many
 * as the domain's utilisation at the last balancing pass allows
 * (SIS_UTIL: none from 85% busy, on 2 CPUs from 61%), else prev.
 * A busy machine leaves a woken task on its busy CPU beside an idle one
 * until balancing moves something there (docs/sim.md, "Fidelity").
 */
static unsigned select_cpu_util(struct cfsbw_sim *s, struct sim_task *t)
{
	unsigned prev = t->cpu, recent = t->recent_cpu;
	unsigned d = prev / SIM_DOMAIN_CPUS, first = d * SIM_DOMAIN_CPUS;
	unsigned span = cfsbw_sim__domain_span(s, d);
	t->recent_cpu = prev; /* whether or not any CPU is idle */
	if (s->nr_idle == 0)
		return prev;
	if (recent != prev && recent - first < span && s->cpus[recent].idle)
		return recent;
	unsigned nr = s->idle_scan[d];
	for (unsigned k = 1; k <= span && nr > 0; k++, nr--) {
		unsigned c = first + (prev - first + k) % span;
		if (s->cpus[c].idle)
			return c;
	}
	return prev;
}

/* Its previous CPU if idle, else (wake_scan all) the first idle CPU after
 * it, else prev. */
unsigned cfsbw_sim__select_cpu(struct cfsbw_sim *s, struct sim_task *t)
{
	unsigned prev = t->cpu, n = s->nr_cpus;
	if (s->cpus[prev].idle)
		return prev;
	if (s->idle_scan)
		return select_cpu_util(s, t);
	if (s->nr_idle == 0)
		return prev;
	unsigned words = (n + 63) / 64;
	unsigned start = (prev + 1) % n;
	for (unsigned k = 0; k <= words; k++) {
		unsigned w = (start / 64 + k) % words;
		uint64_t bits = s->idle_mask[w];
		if (k == 0)
			bits &= ~UINT64_C(0) << (start % 64);
		if (bits)
			return w * 64 + sim_ctz64(bits);
	}
	return prev;
}

void cfsbw_sim__task_wake(struct cfsbw_sim *s, struct sim_task *t)
{
	SIM_BUG_ON(t->runnable || t->exited);
	unsigned prev = t->cpu, c = cfsbw_sim__select_cpu(s, t);
	if (c != prev) {
		if (s->cpu_pelt) /* its average goes with it */
			cfsbw_sim__pelt_task_moves(s, t, prev, c);
		cfsbw_sim__task_renormalize(t, prev, c);
		t->migrations++;
		t->line->migrations++;
	}
	cfsbw_sim__cpu_update_curr(s, c);
	t->se.cfs_rq = &t->g->pc[c].q;
	if (s->eevdf) /* a task that never ran joins as a new one */
		cfsbw_sim__eevdf_place(s, t->se.cfs_rq, &t->se,
				       t->last_ran_ns == INT64_MIN);
	else
		cfsbw_sim__cfs_place_entity(s, t->se.cfs_rq, &t->se);
	cfsbw_sim__task_attach(s, t, c);
	cfsbw_sim__check_preempt_wakeup(s, c, t);
}

/* t stops being runnable (the caller updated its CPU's time). */
void cfsbw_sim__task_sleep(struct cfsbw_sim *s, struct sim_task *t)
{
	unsigned c = t->cpu;
	cfsbw_sim__task_detach(s, t);
	cfsbw_sim__task_set_state(s, t, SIM_TS_SLEEPING);
	if (s->cpus[c].curr == t)
		cfsbw_sim__cpu_resched(s, c);
}

/* The running task goes on with a new burst without sleeping. */
void cfsbw_sim__task_continue(struct cfsbw_sim *s, struct sim_task *t)
{
	if (s->cpus[t->cpu].curr == t)
		arm_burst(s, t->cpu);
}

/* A CPU at time 0: idle, nothing queued, no burst. */
void cfsbw_sim__cpu_init(struct cfsbw_sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	list_init(&cpu->tasks);
	cfsbw_sim__timer_init(&cpu->burst, SIM_T_BURST);
	cpu_set_idle(s, c, true);
}
