/*
 * machine.c - the simulated machine: CPUs, their ticks, sleep and wake-up,
 * the core's throttling decisions acted out on the CPU queues, and load
 * balancing.
 *
 * The core decides; the machine obeys.  A charge (R5) happens wherever
 * Linux updates the running task's time: at each tick, when it sleeps, when
 * it is switched out, before a wake-up on its CPU.  The core's callbacks
 * run with its pool lock held and must not call back into it, so they only
 * record the decision (throttle, unthrottle) here; the machine acts on the
 * record as soon as the core returns (drain()), and reschedules the CPUs it
 * touched when the current event is done (process_resched()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

/* ---- task states: where each task's time goes ------------------------ */

void __task_set_state(struct sim *s, struct sim_task *t,
		      enum sim_task_state st)
{
	t->line->state_ns[t->state] += s->now - t->state_since;
	t->state = st;
	t->state_since = s->now;
}

static bool group_in_subtree(const struct sim_group *a,
			     const struct sim_group *top)
{
	while (a && a->depth > top->depth)
		a = a->parent;
	return a == top;
}

/* ---- bookkeeping of CPUs: idle set, R9 counts, rescheduling ----------- */

static void cpu_set_idle(struct sim *s, unsigned c, bool idle)
{
	struct sim_cpu *cpu = &s->cpus[c];
	if (cpu->idle == idle)
		return;
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
static void cpu_update_nr(struct sim *s, unsigned c)
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

static void resched_cpu(struct sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	if (cpu->resched)
		return;
	cpu->resched = true;
	s->resched_list[s->nr_resched++] = c;
}

/* ---- the core's decisions --------------------------------------------- */

static void push_pending(struct sim *s, struct cfsbw_group *cg, unsigned rq,
			 enum sim_pending_op op)
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

static void cb_period_timer_start(void *ctx, struct cfsbw_group *cg,
				  int64_t expires_ns)
{
	struct sim *s = ctx;
	struct sim_group *g = cfsbw_group_driver_data(cg);
	__timer_arm(&s->evq, &g->period_timer,
		    expires_ns < s->now ? s->now : expires_ns);
}

static void cb_slack_timer_start(void *ctx, struct cfsbw_group *cg,
				 int64_t expires_ns)
{
	struct sim *s = ctx;
	struct sim_group *g = cfsbw_group_driver_data(cg);
	__timer_arm(&s->evq, &g->slack_timer,
		    expires_ns < s->now ? s->now : expires_ns);
}

const struct cfsbw_ops __sim_core_ops = {
	.throttle = cb_throttle,
	.unthrottle = cb_unthrottle,
	.period_timer_start = cb_period_timer_start,
	.slack_timer_start = cb_slack_timer_start,
};

/*
 * R7: g's account on CPU c is throttled: its entity leaves the parent's
 * queue, so nothing below it runs here; the CPU reschedules at once if it
 * was running something below it.
 */
static void do_throttle(struct sim *s, struct sim_group *g, unsigned c)
{
	struct sim_gcpu *gc = &g->pc[c];
	struct sim_cpu *cpu = &s->cpus[c];

	SIM_BUG_ON(gc->throttled);
	gc->throttled = true;
	g->throttles++;
	g->sample_throttles++;
	if (gc->se.on_rq)
		__cfs_dequeue_path(s, &gc->se, c);
	__cfs_reweight_path(s, g, c); /* R8 */
	list_for_each_entry(t, &cpu->tasks, struct sim_task, link) {
		if (t->state == SIM_TS_WAITING && group_in_subtree(t->g, g))
			__task_set_state(s, t, SIM_TS_THROTTLED);
	}
	if (cpu->curr && group_in_subtree(cpu->curr->g, g))
		resched_cpu(s, c);
	cpu_update_nr(s, c);
}

/*
 * R10/R11: g's account on CPU c has runtime again: its entity rejoins the
 * queue if it has work (R11: it may still wait under a throttled
 * ancestor), and an idle CPU wakes up.
 */
static void do_unthrottle(struct sim *s, struct sim_group *g, unsigned c)
{
	struct sim_gcpu *gc = &g->pc[c];
	struct sim_cpu *cpu = &s->cpus[c];

	SIM_BUG_ON(!gc->throttled);
	gc->throttled = false;
	if (gc->q.nr_running > 0 && !gc->se.on_rq) {
		__cfs_place_entity(s, gc->se.cfs_rq, &gc->se);
		__cfs_enqueue_path(s, &gc->se, c);
	}
	__cfs_reweight_path(s, g, c);
	list_for_each_entry(t, &cpu->tasks, struct sim_task, link) {
		if (t->state == SIM_TS_THROTTLED && group_in_subtree(t->g, g) &&
		    !cfsbw_throttled(t->g->cg, c))
			__task_set_state(s, t, SIM_TS_WAITING);
	}
	cpu_update_nr(s, c);
	if (!cpu->curr && cpu->nr > 0)
		resched_cpu(s, c);
}

/* Act on what the core decided during the call that just returned. */
static void drain(struct sim *s)
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
static void update_curr(struct sim *s, unsigned c)
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
		se->vruntime += __cfs_calc_delta_fair(delta, se);
		__cfs_update_min_vruntime(se->cfs_rq);
	}
	for (struct sim_group *g = t->g; g; g = g->parent)
		g->usage_ns += delta;
	cpu->busy_ns += delta;
	s->busy_ns += delta;
	if (cfsbw_charge(t->g->cg, c, delta, s->now))
		resched_cpu(s, c); /* R7: reschedule at once */
	drain(s);
}

static void arm_burst(struct sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	struct sim_task *t = cpu->curr;
	if (t->burst_left == INT64_MAX) {
		__timer_cancel(&s->evq, &cpu->burst);
		return;
	}
	int64_t left = t->burst_left > 0 ? t->burst_left : 0;
	__timer_arm(&s->evq, &cpu->burst, s->now + left);
}

/* ---- migration and load balancing (R8) --------------------------------- */

static void check_preempt_wakeup(struct sim *s, unsigned c,
				 struct sim_task *t)
{
	struct sim_cpu *cpu = &s->cpus[c];
	if (cfsbw_throttled(t->g->cg, c))
		return; /* it waits under a throttled entity (R7) */
	if (!cpu->curr) {
		resched_cpu(s, c);
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
	if (__cfs_wakeup_preempt(s, pse, se))
		resched_cpu(s, c);
}

static void attach_task(struct sim *s, struct sim_task *t, unsigned c)
{
	struct sim_group *g = t->g;
	t->cpu = c;
	t->se.cfs_rq = &g->pc[c].q;
	t->se.parent = g->parent ? &g->pc[c].se : NULL;
	__cfs_enqueue_path(s, &t->se, c);
	list_add_tail(&s->cpus[c].tasks, &t->link);
	t->runnable = true;
	cfsbw_task_enqueue(g->cg, c, s->now);
	drain(s);
	cpu_update_nr(s, c);
	__task_set_state(s, t, cfsbw_throttled(g->cg, c) ? SIM_TS_THROTTLED
							 : SIM_TS_WAITING);
}

static void detach_task(struct sim *s, struct sim_task *t)
{
	unsigned c = t->cpu;
	__cfs_dequeue_path(s, &t->se, c);
	list_del(&t->link);
	t->runnable = false;
	cfsbw_task_dequeue(t->g->cg, c, s->now);
	drain(s);
	cpu_update_nr(s, c);
}

/* Carry t's virtual runtime over, relative to the queues' minimums. */
static void renormalize(struct sim_task *t, unsigned from, unsigned to)
{
	t->se.vruntime = t->se.vruntime - t->g->pc[from].q.min_vruntime +
			 t->g->pc[to].q.min_vruntime;
}

static void migrate_task(struct sim *s, struct sim_task *t, unsigned dst,
			 bool newidle)
{
	unsigned src = t->cpu;
	detach_task(s, t);
	renormalize(t, src, dst);
	update_curr(s, dst);
	attach_task(s, t, dst);
	t->migrations++;
	t->line->migrations++;
	s->migrations++;
	if (!newidle)
		check_preempt_wakeup(s, dst, t);
}

/*
 * Whether queued task t may move from src to dst.  R8: never the running
 * task, never a task under a throttled entity on either side
 * (throttled_lb_pair): it could not run on src and would wait under the
 * same limit on dst.
 */
static bool can_migrate(const struct sim *s, const struct sim_task *t,
			unsigned src, unsigned dst)
{
	return t != s->cpus[src].curr && !cfsbw_throttled(t->g->cg, src) &&
	       !cfsbw_throttled(t->g->cg, dst);
}

static bool pull_task(struct sim *s, unsigned src, unsigned dst, uint64_t diff,
		      bool newidle);

/*
 * A CPU about to idle pulls from the busiest CPU of its domain (newidle
 * balance).  A domain is SIM_DOMAIN_CPUS neighbouring CPUs, like the
 * cache-sharing domains Linux balances first: the cost of going idle stays
 * bounded on 4096 CPUs; the periodic pass covers the whole machine.
 */
#define SIM_DOMAIN_CPUS 64u

static bool newidle_pull(struct sim *s, unsigned dst)
{
	if (s->nr_overloaded == 0)
		return false;
	unsigned best = UINT32_MAX, best_nr = 1;
	unsigned first = dst - dst % SIM_DOMAIN_CPUS;
	unsigned last = first + SIM_DOMAIN_CPUS < s->nr_cpus
				? first + SIM_DOMAIN_CPUS
				: s->nr_cpus;
	for (unsigned c = first; c < last; c++) {
		if (c != dst && s->cpus[c].nr > best_nr) {
			best = c;
			best_nr = s->cpus[c].nr;
		}
	}
	return best != UINT32_MAX && pull_task(s, best, dst, UINT64_MAX, true);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* A CPU's load: the weights queued at its root, running entity included
 * (weighted_cpuload).  Throttled entities are off the queue: R8. */
static uint64_t cpu_load(const struct sim *s, unsigned c)
{
	return s->groups[0]->pc[c].q.load;
}

/* What task t adds to its CPU's load: its weight, scaled at each level by
 * the share its queue's group entity has of it (task_h_load). */
static uint64_t task_h_load(const struct sim_task *t)
{
	uint64_t h = t->se.weight;
	for (const struct sim_entity *se = &t->se; se->parent; se = se->parent) {
		uint64_t load = se->cfs_rq->load;
		h = load ? h * se->parent->weight / load : h;
	}
	return h;
}

/*
 * Pull one queued task that may move from src to dst (can_migrate).  With
 * a bound diff (the two CPUs' difference in load), only one whose load is
 * under half of it, so that moving it cannot swap the roles and send it
 * back at the next pass; UINT64_MAX: any task (newidle, or an empty dst).
 */
static bool pull_task(struct sim *s, unsigned src, unsigned dst, uint64_t diff,
		      bool newidle)
{
	struct sim_cpu *from = &s->cpus[src];
	list_for_each_entry(t, &from->tasks, struct sim_task, link) {
		if (!can_migrate(s, t, src, dst))
			continue;
		if (diff != UINT64_MAX && 2 * task_h_load(t) >= diff)
			continue;
		migrate_task(s, t, dst, newidle);
		return true;
	}
	return false;
}

/* Loads within 17% of each other count as balanced (imbalance_pct). */
#define IMBALANCE_PCT 117u
/* Busy CPUs balance one pass in BUSY_FACTOR (Linux's busy_factor): a
 * task is moved off a busy CPU far less often than onto an idle one. */
#define BUSY_FACTOR 32u

/*
 * Periodic balancing, by load as Linux does: sort the CPUs by load, then
 * pair the most loaded with the least loaded and move one task per pair
 * while they are out of balance.  An idle CPU takes any queued task from
 * a CPU with two or more that can run (R9), at every pass; a busy one, at
 * one pass in BUSY_FACTOR, only a task that narrows the difference.  Keys
 * are (load, cpu), a total order, so any sort gives the same pairs.
 */
static void balance(struct sim *s)
{
	unsigned n = s->nr_cpus;
	bool busy_pass = ++s->balance_passes % BUSY_FACTOR == 0;
	if (s->nr_overloaded == 0 || (!busy_pass && s->nr_idle == 0))
		return; /* no CPU has a task to spare, or none to take it */
	uint64_t lo_load = UINT64_MAX, hi_load = 0;
	for (unsigned c = 0; c < n; c++) {
		uint64_t load = cpu_load(s, c);
		lo_load = load < lo_load ? load : lo_load;
		hi_load = load > hi_load ? load : hi_load;
		s->sort_keys[c] = load << 13 | c; /* c < 8192; loads < 2^50 */
	}
	if (hi_load * 100 <= lo_load * IMBALANCE_PCT)
		return;
	qsort(s->sort_keys, n, sizeof(*s->sort_keys), cmp_u64);
	unsigned lo = 0, hi = n - 1;
	while (lo < hi) {
		unsigned dst = (unsigned)(s->sort_keys[lo] & 8191u);
		unsigned src = (unsigned)(s->sort_keys[hi] & 8191u);
		uint64_t ls = cpu_load(s, src), ld = cpu_load(s, dst);
		if (ls * 100 <= ld * IMBALANCE_PCT)
			break;
		if (s->cpus[dst].nr > 0 && !busy_pass)
			break; /* the idle CPUs are served */
		bool moved = false;
		if (s->cpus[src].nr >= 2)
			moved = pull_task(s, src, dst,
					  s->cpus[dst].nr == 0 ? UINT64_MAX
							       : ls - ld,
					  false);
		if (moved)
			lo++;
		else
			hi--;
	}
}

/* ---- scheduling ------------------------------------------------------- */

/*
 * Put the running task back, then run the leftmost entity, level by level
 * down to a task.  R9: whether there is anything to run is the core's
 * hierarchical count, and the model's queues must agree with it.
 */
static void schedule(struct sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	struct sim_task *prev = cpu->curr;
	struct sim_cfs_rq *rq = &s->groups[0]->pc[c].q;

	if (prev) {
		update_curr(s, c);
		for (struct sim_entity *se = &prev->se; se; se = se->parent)
			__cfs_put_entity(se->cfs_rq, se);
		cpu->curr = NULL;
		if (prev->runnable)
			__task_set_state(s, prev,
					 cfsbw_throttled(prev->g->cg, c)
						 ? SIM_TS_THROTTLED
						 : SIM_TS_WAITING);
	}
	for (;;) {
		unsigned nr = cfsbw_rq_nr_running(s->tree, c);
		SIM_BUG_ON((nr == 0) != (rq->nr_running == 0));
		if (nr > 0)
			break;
		if (newidle_pull(s, c))
			continue;
		cpu_set_idle(s, c, true); /* no tick when idle */
		__timer_cancel(&s->evq, &cpu->burst);
		return;
	}
	struct sim_cfs_rq *q = rq;
	struct sim_entity *se;
	for (;;) {
		se = __cfs_first(q);
		SIM_BUG_ON(!se);
		__cfs_take_entity(q, se);
		if (!se->my_q)
			break;
		q = se->my_q;
	}
	struct sim_task *t = task_of(se);
	cpu->curr = t;
	cpu->exec_start = s->now;
	if (t != prev) {
		cpu->switches++;
		s->switches++;
	}
	__task_set_state(s, t, SIM_TS_RUNNING);
	cpu_set_idle(s, c, false);
	arm_burst(s, c);
	if (!timer_armed(&s->evq, &s->tick_timer))
		__timer_arm(&s->evq, &s->tick_timer,
			    (s->now / s->tick_ns + 1) * s->tick_ns);
}

static void process_resched(struct sim *s)
{
	while (s->nr_resched > 0) {
		unsigned c = s->resched_list[--s->nr_resched];
		s->cpus[c].resched = false;
		schedule(s, c);
	}
}

/* ---- sleep and wake-up -------------------------------------------------- */

/* Its previous CPU if idle, else the first idle CPU after it, else prev. */
static unsigned select_cpu(const struct sim *s, const struct sim_task *t)
{
	unsigned prev = t->cpu, n = s->nr_cpus;
	if (s->cpus[prev].idle || s->nr_idle == 0)
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

void __task_wake(struct sim *s, struct sim_task *t)
{
	SIM_BUG_ON(t->runnable || t->exited);
	unsigned prev = t->cpu, c = select_cpu(s, t);
	if (c != prev) {
		renormalize(t, prev, c);
		t->migrations++;
		t->line->migrations++;
	}
	update_curr(s, c);
	t->se.cfs_rq = &t->g->pc[c].q;
	__cfs_place_entity(s, t->se.cfs_rq, &t->se);
	attach_task(s, t, c);
	check_preempt_wakeup(s, c, t);
}

/* t stops being runnable (the caller updated its CPU's time). */
void __task_sleep(struct sim *s, struct sim_task *t)
{
	unsigned c = t->cpu;
	detach_task(s, t);
	__task_set_state(s, t, SIM_TS_SLEEPING);
	if (s->cpus[c].curr == t)
		resched_cpu(s, c);
}

/* The running task goes on with a new burst without sleeping. */
void __task_continue(struct sim *s, struct sim_task *t)
{
	if (s->cpus[t->cpu].curr == t)
		arm_burst(s, t->cpu);
}

/* ---- events ------------------------------------------------------------- */

static void tick_cpu(struct sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	update_curr(s, c);
	struct sim_task *t = cpu->curr;
	if (!t)
		return;
	__cfs_reweight_path(s, t->g, c); /* update_cfs_shares at the tick */
	if (cpu->resched)
		return;
	for (struct sim_entity *se = &t->se; se; se = se->parent) {
		struct sim_cfs_rq *q = se->cfs_rq;
		if (q->nr_running > 1 && __cfs_check_preempt_tick(s, q, se)) {
			resched_cpu(s, c);
			break;
		}
	}
}

/*
 * The scheduler tick.  Every CPU's tick falls on the same boundaries
 * (multiples of 1/HZ, Linux without skew_tick), so one timer serves them
 * all and visits the busy CPUs in CPU order; an idle CPU has no tick
 * (NO_HZ).  Each CPU's tick counts as one event.
 */
static void on_tick(struct sim *s, int64_t when)
{
	unsigned n = s->nr_cpus, words = (n + 63) / 64;
	for (unsigned w = 0; w < words; w++) {
		uint64_t busy = ~s->idle_mask[w];
		if (w == words - 1 && n % 64)
			busy &= (UINT64_C(1) << (n % 64)) - 1;
		while (busy) {
			unsigned b = sim_ctz64(busy);
			busy &= busy - 1;
			unsigned c = w * 64 + b;
			/* a CPU that woke at this very instant ticks first at
			 * the next boundary, as if it had armed its own tick */
			if (s->cpus[c].idle || s->cpus[c].busy_since == when)
				continue;
			s->events++;
			tick_cpu(s, c);
			process_resched(s);
		}
	}
	if (s->nr_idle < n)
		__timer_arm(&s->evq, &s->tick_timer, when + s->tick_ns);
}

static void on_burst(struct sim *s, unsigned c)
{
	update_curr(s, c);
	struct sim_task *t = s->cpus[c].curr;
	SIM_BUG_ON(!t || t->burst_left > 0);
	__workload_burst_done(s, t);
}

/* A group's CPU time now, counting what its running tasks ran so far. */
static int64_t group_usage_now(const struct sim *s, const struct sim_group *g)
{
	int64_t used = g->usage_ns;
	for (unsigned c = 0; c < s->nr_cpus; c++) {
		const struct sim_cpu *cpu = &s->cpus[c];
		if (cpu->curr && group_in_subtree(cpu->curr->g, g))
			used += s->now - cpu->exec_start;
	}
	return used;
}

static void emit_sample(struct sim *s, struct sim_group *g)
{
	struct cfsbw_stats st;
	cfsbw_group_stats(g->cg, &st);
	int64_t used = group_usage_now(s, g);
	struct sim_timeline_row row = {
		.group = cfsbw_group_path(g->cg),
		.start_ns = g->sample_start_ns,
		.period_ns = s->now - g->sample_start_ns,
		.used_ns = used - g->sample_usage_ns,
		.throttled_accounts = (unsigned)g->sample_throttles,
		.throttled_time_ns =
			(int64_t)(st.throttled_time - g->sample_throttled_time),
	};
	s->timeline(s->timeline_ctx, &row);
	g->sample_start_ns = s->now;
	g->sample_usage_ns = used;
	g->sample_throttles = 0;
	g->sample_throttled_time = st.throttled_time;
}

/* A timer of the core's: fire it, act on its decisions, re-arm it for
 * when the core says (never in the past: time only moves forward). */
static void fire_core_timer(struct sim *s, struct sim_timer *tm,
			    int64_t (*fire)(struct cfsbw_group *, int64_t))
{
	int64_t next = fire(s->groups[tm->id]->cg, s->now);
	drain(s);
	if (next != CFSBW_TIMER_STOP)
		__timer_arm(&s->evq, tm, next > s->now ? next : s->now + 1);
}

static void on_timer(struct sim *s, struct sim_timer *tm)
{
	switch ((enum sim_timer_kind)tm->kind) {
	case SIM_T_TICK:
		s->events--; /* counted per CPU */
		on_tick(s, tm->when);
		break;
	case SIM_T_BURST:
		on_burst(s, tm->id);
		break;
	case SIM_T_WAKE:
		__workload_wake_timer(s, &s->tasks[tm->id]);
		break;
	case SIM_T_PERIOD: /* R10: the refresh */
		fire_core_timer(s, tm, cfsbw_period_timer_fire);
		break;
	case SIM_T_SLACK:
		fire_core_timer(s, tm, cfsbw_slack_timer_fire);
		break;
	case SIM_T_SAMPLE: {
		struct sim_group *g = s->groups[tm->id];
		emit_sample(s, g);
		__timer_arm(&s->evq, &g->sample_timer,
			    s->now + cfsbw_group_period_ns(g->cg));
		break;
	}
	case SIM_T_BALANCE:
		balance(s);
		__timer_arm(&s->evq, &s->balance_timer, s->now + s->balance_ns);
		break;
	}
}

/*
 * Every group's weight on every CPU from the current loads, children
 * before parents (a child's weight is part of its parent's queue load).
 * Weights are otherwise updated lazily, on the CPU and path that changes;
 * at time 0 every task arrived at once and the first CPUs' weights were
 * computed before the group's later tasks existed.
 */
static void refresh_shares(struct sim *s)
{
	for (size_t i = s->nr_groups; i-- > 1;)
		for (unsigned c = 0; c < s->nr_cpus; c++)
			__cfs_reweight_group(s->groups[i], c);
}

void sim_set_timeline(struct sim *s, sim_timeline_fn *fn, void *ctx)
{
	s->timeline = fn;
	s->timeline_ctx = ctx;
}

int sim_run(struct sim *s)
{
	SIM_BUG_ON(s->now != 0 || s->events != 0);
	for (size_t i = 0; i < s->nr_tasks; i++)
		__workload_start(s, &s->tasks[i]);
	refresh_shares(s);
	process_resched(s);
	if (s->nr_cpus > 1)
		__timer_arm(&s->evq, &s->balance_timer, s->balance_ns);
	if (s->timeline)
		for (size_t i = 0; i < s->nr_groups; i++)
			__timer_arm(&s->evq, &s->groups[i]->sample_timer,
				    cfsbw_group_period_ns(s->groups[i]->cg));

	/*
	 * The earliest timer stays in the heap while it fires: most handlers
	 * re-arm their own timer (ticks, arrivals, refreshes), which then
	 * moves it in place, one sift instead of a removal and an insertion.
	 * One the handler left alone (same sequence number) is removed.
	 */
	struct sim_timer *tm;
	while ((tm = __evq_peek(&s->evq)) && tm->when < s->end_ns) {
		uint64_t seq = tm->seq;
		s->now = tm->when;
		s->events++;
		on_timer(s, tm);
		if (timer_armed(&s->evq, tm) && tm->seq == seq)
			__timer_cancel(&s->evq, tm);
		process_resched(s);
		/* a replay ends with its last thread (docs/sim.md) */
		if (s->sc->until_done && s->nr_exited == s->nr_tasks) {
			s->end_ns = s->now;
			break;
		}
	}

	/* The end: account the running tasks' last stretch and every
	 * task's current state up to it. */
	s->now = s->end_ns;
	for (unsigned c = 0; c < s->nr_cpus; c++)
		update_curr(s, c);
	for (size_t i = 0; i < s->nr_tasks; i++) {
		struct sim_task *t = &s->tasks[i];
		__task_set_state(s, t, t->state);
		t->line->pending += t->rq_len;
	}
	if (s->timeline)
		for (size_t i = 0; i < s->nr_groups; i++)
			if (s->groups[i]->sample_start_ns < s->end_ns)
				emit_sample(s, s->groups[i]);
	for (size_t i = 0; i < s->nr_lines; i++)
		__line_finish(s, &s->lines[i]);
	return 0;
}

/* A CPU at time 0: idle, nothing queued, no burst. */
void __cpu_init(struct sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	list_init(&cpu->tasks);
	__timer_init(&cpu->burst, SIM_T_BURST, c);
	cpu_set_idle(s, c, true);
}
