/*
 * run.c - the run: the scheduler tick of every busy CPU, the other timers
 * (ends of bursts, wake-ups and arrivals, the core's period and slack
 * timers, timeline samples, balancing passes), and the loop that fires
 * them in order until the scenario's end.
 */
#include "sim/sim_int.h"

static void tick_cpu(struct cfsbw_sim *s, unsigned c)
{
	struct sim_cpu *cpu = &s->cpus[c];
	cfsbw_sim__cpu_update_curr(s, c);
	struct sim_task *t = cpu->curr;
	if (!t)
		return;
	cfsbw_sim__cfs_reweight_path(s, t->g,
				     c); /* update_cfs_shares at the tick */
	/* EEVDF preempts at a tick only when a slice ends: the charge above
	 * asked for that (update_deadline) */
	if (cpu->resched || s->eevdf)
		return;
	for (struct sim_entity *se = &t->se; se; se = se->parent) {
		struct sim_cfs_rq *q = se->cfs_rq;
		if (q->nr_running > 1 &&
		    cfsbw_sim__cfs_check_preempt_tick(s, q, se)) {
			cfsbw_sim__cpu_resched(s, c);
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
static void on_tick(struct cfsbw_sim *s, int64_t when)
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
			cfsbw_sim__process_resched(s);
		}
	}
	if (s->nr_idle < n)
		cfsbw_sim__timer_arm(&s->evq, &s->tick_timer,
				     when + s->tick_ns);
}

static void on_burst(struct cfsbw_sim *s, unsigned c)
{
	cfsbw_sim__cpu_update_curr(s, c);
	struct sim_task *t = s->cpus[c].curr;
	SIM_BUG_ON(!t || t->burst_left > 0);
	cfsbw_sim__workload_burst_done(s, t);
}

/* A group's CPU time now, counting what its running tasks ran so far: its
 * subtree's own times (a group is created after its parent, so the
 * subtree follows it in creation order). */
static int64_t group_usage_now(const struct cfsbw_sim *s,
			       const struct sim_group *g)
{
	int64_t used = 0;
	for (size_t i = g->index; i < s->nr_groups; i++)
		if (group_in_subtree(s->groups[i], g))
			used += s->groups[i]->usage_ns;
	for (unsigned c = 0; c < s->nr_cpus; c++) {
		const struct sim_cpu *cpu = &s->cpus[c];
		if (cpu->curr && group_in_subtree(cpu->curr->g, g))
			used += s->now - cpu->exec_start;
	}
	return used;
}

static void emit_sample(struct cfsbw_sim *s, struct sim_group *g)
{
	struct cfsbw_stats st;
	cfsbw_group_stats(g->cg, &st);
	int64_t used = group_usage_now(s, g);
	struct cfsbw_sim_timeline_row row = {
		.group = cfsbw_group_path(g->cg),
		.start_ns = g->sample_start_ns,
		.period_ns = s->now - g->sample_start_ns,
		.used_ns = used - g->sample_usage_ns,
		.throttled_accounts = (unsigned)g->sample_throttles,
		.throttled_time_ns =
			(int64_t)(st.throttled_time - g->sample_throttled_time),
		.quota_ns = cfsbw_group_quota_ns(g->cg) == CFSBW_RUNTIME_INF
				    ? -1
				    : cfsbw_group_quota_ns(g->cg),
		.quota_period_ns = cfsbw_group_period_ns(g->cg),
	};
	s->timeline(s->timeline_ctx, &row);
	g->sample_start_ns = s->now;
	g->sample_usage_ns = used;
	g->sample_throttles = 0;
	g->sample_throttled_time = st.throttled_time;
}

/* A timer of the core's: fire it, act on its decisions, re-arm it for
 * when the core says (never in the past: time only moves forward). */
static void fire_core_timer(struct cfsbw_sim *s, struct sim_group *g,
			    struct sim_timer *tm,
			    int64_t (*fire)(struct cfsbw_group *, int64_t))
{
	int64_t next = fire(g->cg, s->now);
	cfsbw_sim__core_drain(s);
	if (next != CFSBW_TIMER_STOP)
		cfsbw_sim__timer_arm(&s->evq, tm,
				     next > s->now ? next : s->now + 1);
}

/*
 * Fire timer number num.  Numbers follow register_timers() (setup.c): the
 * CPUs' burst timers, the tasks' wake-up timers, three per group (period,
 * slack, sample), the tick, the balancer; the handler is found from the
 * number alone, without reading the timer, which lies in its owner.
 */
static void on_timer(struct cfsbw_sim *s, uint32_t num)
{
	uint32_t n = s->nr_cpus, tasks = n + (uint32_t)s->nr_tasks;
	if (num < n) {
		on_burst(s, num);
		return;
	}
	if (num < tasks) {
		cfsbw_sim__workload_wake_timer(s, &s->tasks[num - n]);
		return;
	}
	uint32_t k = num - tasks, gi = k / 3;
	if (gi >= s->nr_groups) {
		if (k == 3 * s->nr_groups) { /* the tick, counted per CPU */
			s->events--;
			on_tick(s, s->now);
		} else {
			cfsbw_sim__balance(s);
			cfsbw_sim__timer_arm(&s->evq, &s->balance_timer,
					     s->now + s->balance_ns);
		}
		return;
	}
	struct sim_group *g = s->groups[gi];
	switch (k % 3) {
	case 0: /* R10: the refresh */
		fire_core_timer(s, g, &g->period_timer, cfsbw_period_timer_fire);
		break;
	case 1:
		fire_core_timer(s, g, &g->slack_timer, cfsbw_slack_timer_fire);
		break;
	default:
		/* the timeline's own timer: not an event of the model, so the
		 * report is the same with and without --timeline (issue 16) */
		s->events--;
		emit_sample(s, g);
		cfsbw_sim__timer_arm(&s->evq, &g->sample_timer,
				     s->now + cfsbw_group_period_ns(g->cg));
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
static void refresh_shares(struct cfsbw_sim *s)
{
	for (size_t i = s->nr_groups; i-- > 1;)
		for (unsigned c = 0; c < s->nr_cpus; c++)
			cfsbw_sim__cfs_reweight_group(s, s->groups[i], c);
}

void cfsbw_sim_set_timeline(struct cfsbw_sim *s, cfsbw_sim_timeline_fn *fn,
			    void *ctx)
{
	s->timeline = fn;
	s->timeline_ctx = ctx;
}

int cfsbw_sim_run(struct cfsbw_sim *s)
{
	SIM_BUG_ON(s->now != 0 || s->events != 0);
	for (size_t i = 0; i < s->nr_tasks; i++)
		cfsbw_sim__workload_start(s, &s->tasks[i]);
	refresh_shares(s);
	/* Averages as Linux starts them: a new task as runnable the whole
	 * time (init_entity_runnable_average), so each CPU at the load it
	 * starts with */
	if (s->cpu_pelt)
		for (unsigned c = 0; c < s->nr_cpus; c++)
			s->cpu_pelt[c].avg = s->groups[0]->pc[c].q.load
					     << SIM_PELT_SHIFT;
	cfsbw_sim__process_resched(s);
	if (s->nr_cpus > 1)
		cfsbw_sim__timer_arm(&s->evq, &s->balance_timer, s->balance_ns);
	/* a timeline row per period, on the group's grid: a first period
	 * cut short or drawn longer (first_period) has a first row as long */
	for (size_t i = 0; s->timeline && i < s->nr_groups; i++) {
		struct sim_group *g = s->groups[i];
		int64_t period = cfsbw_group_period_ns(g->cg);
		int64_t phase = cfsbw_group_period_phase_ns(g->cg);
		cfsbw_sim__timer_arm(&s->evq, &g->sample_timer,
				     phase > 0 ? phase : period);
	}

	/*
	 * The earliest timer stays in the heap while it fires: most handlers
	 * re-arm their own timer (ticks, arrivals, refreshes), which then
	 * moves it in place, one sift instead of a removal and an insertion.
	 * One the handler left alone (same sequence number) is removed.
	 */
	struct sim_evq *q = &s->evq;
	uint32_t num;
	while ((num = cfsbw_sim__evq_peek_num(q)) != SIM_EVQ_NONE &&
	       q->rec[num].when < s->end_ns) {
		uint64_t seq = q->rec[num].seq;
		s->now = q->rec[num].when;
		s->events++;
		on_timer(s, num);
		if (q->rec[num].where && q->rec[num].seq == seq)
			cfsbw_sim__evq_cancel_num(q, num);
		cfsbw_sim__process_resched(s);
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
		cfsbw_sim__cpu_update_curr(s, c);
	for (size_t i = 0; i < s->nr_tasks; i++) {
		struct sim_task *t = &s->tasks[i];
		cfsbw_sim__task_set_state(s, t, t->state);
		for (unsigned k = 0; k < SIM_TS_COUNT; k++)
			t->line->state_ns[k] += t->state_ns[k];
		if (t->workload == CFSBW_SIM_WL_REQUESTS)
			t->line->pending += cfsbw_sim__req_pending(s, t);
	}
	if (s->timeline)
		for (size_t i = 0; i < s->nr_groups; i++)
			if (s->groups[i]->sample_start_ns < s->end_ns)
				emit_sample(s, s->groups[i]);
	/* each group's usage becomes its subtree's: children after their
	 * parents in creation order, so added up from the last */
	for (size_t i = s->nr_groups; i-- > 1;)
		s->groups[i]->parent->usage_ns += s->groups[i]->usage_ns;
	for (size_t i = 0; i < s->nr_lines; i++)
		cfsbw_sim__line_finish(s, &s->lines[i]);
	return 0;
}
