/*
 * balance.c - load balancing (R8, R9): moving queued tasks between CPUs,
 * when a CPU is about to idle (newidle) and at periodic passes that pair
 * the most loaded CPUs with the least loaded.
 *
 * Load is the weight queued at a CPU's root, so a throttled group's tasks,
 * off their CPUs' queues, weigh nothing (R8), and no task moves whose group
 * is throttled on either side (throttled_lb_pair).
 */
#include "sim/sim_int.h"

static void migrate_task(struct cfsbw_sim *s, struct sim_task *t, unsigned dst,
			 bool newidle)
{
	unsigned src = t->cpu;
	if (s->cpu_pelt) /* its average goes with it */
		cfsbw_sim__pelt_task_moves(s, t, src, dst);
	cfsbw_sim__task_detach(s, t);
	if (s->eevdf) {
		/* it keeps its lag: placed on dst's queue as if waking */
		cfsbw_sim__cpu_update_curr(s, dst);
		t->se.cfs_rq = &t->g->pc[dst].q;
		cfsbw_sim__cfs_place_entity(s, t->se.cfs_rq, &t->se);
	} else {
		cfsbw_sim__task_renormalize(t, src, dst);
		cfsbw_sim__cpu_update_curr(s, dst);
	}
	cfsbw_sim__task_attach(s, t, dst);
	t->migrations++;
	t->line->migrations++;
	s->migrations++;
	if (!newidle)
		cfsbw_sim__check_preempt_wakeup(s, dst, t);
}

/* Balancing attempts that may fail in a row before a cache-hot task
 * moves all the same (the domain's cache_nice_tries, 1 for the domains
 * of cores that share a cache). */
#define CACHE_NICE_TRIES 1u

/*
 * A task that ran on its CPU within the last migration_cost is cache hot
 * there (task_hot): moving it would cost it its cache.  A task that never
 * ran is cold.  last_ran_ns is at most now, so the sum cannot overflow.
 */
static bool task_hot(const struct cfsbw_sim *s, const struct sim_task *t)
{
	int64_t cost = s->sc->migration_cost_ns; /* not scaled, as Linux's */
	return cost > 0 && t->last_ran_ns > s->now - cost;
}

/*
 * Whether queued task t may move from src to dst.  R8: never the running
 * task, never a task under a throttled entity on either side
 * (throttled_lb_pair): it could not run on src and would wait under the
 * same limit on dst.  On src, the task's own state says it (a queued task
 * is SIM_TS_THROTTLED exactly while the core throttles its group there,
 * itself or through an ancestor: task_attach, schedule_cpu,
 * set_queued_states), read from the line the list walk is on: many of
 * the tasks a balancing pass looks at are throttled, and asking the core
 * read a line of its accounts for each.  Last, a cache-hot task
 * stays unless balancing towards dst has failed more than
 * CACHE_NICE_TRIES times in a row (can_migrate_task): without that, a
 * CPU going idle pulls over the task that was preempted a moment ago,
 * and the tasks of a few busy CPUs migrate many times a second, where
 * Linux's stay put.
 */
static bool can_migrate(const struct cfsbw_sim *s, const struct sim_task *t,
			unsigned src, unsigned dst)
{
	return t != s->cpus[src].curr && t->state != SIM_TS_THROTTLED &&
	       !cfsbw_throttled(t->g->cg, dst) &&
	       (s->balance_failed[dst] > CACHE_NICE_TRIES || !task_hot(s, t));
}

static bool pull_task(struct cfsbw_sim *s, unsigned src, unsigned dst,
		      uint64_t diff, bool newidle);

/*
 * A CPU about to idle pulls from the busiest CPU of its domain (newidle
 * balance; SIM_DOMAIN_CPUS, sim_int.h): the cost of going idle stays
 * bounded on 4096 CPUs; the periodic pass covers the whole machine.
 */

bool cfsbw_sim__balance_newidle(struct cfsbw_sim *s, unsigned dst)
{
	if (s->nr_overloaded == 0)
		return false;
	unsigned best = UINT32_MAX, best_nr = 1;
	unsigned d = dst / SIM_DOMAIN_CPUS, first = d * SIM_DOMAIN_CPUS;
	unsigned last = first + cfsbw_sim__domain_span(s, d);
	for (unsigned c = first; c < last; c++) {
		if (c != dst && s->cpus[c].nr > best_nr) {
			best = c;
			best_nr = s->cpus[c].nr;
		}
	}
	return best != UINT32_MAX && pull_task(s, best, dst, UINT64_MAX, true);
}

/* Sift v[i] down the max-heap v[0..n). */
static void sift_down_u64(uint64_t *v, size_t i, size_t n)
{
	uint64_t x = v[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && v[c + 1] > v[c])
			c++;
		if (v[c] <= x)
			break;
		v[i] = v[c];
		i = c;
	}
	v[i] = x;
}

/* Ascending, in place: heapsort, no allocation and no comparison calls
 * (the C library's qsort allocated a buffer at every balancing pass). */
static void sort_u64(uint64_t *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down_u64(v, i, n);
	for (size_t end = n; end > 1; end--) {
		uint64_t top = v[0];
		v[0] = v[end - 1];
		v[end - 1] = top;
		sift_down_u64(v, 0, end - 1);
	}
}

/*
 * A CPU's load: the weights queued at its root, running entity included
 * (weighted_cpuload).  Throttled entities are off the queue: R8.  Under
 * balance_load pelt, their decayed average (pelt.c), and 0 for an idle
 * CPU: Linux fills an idle CPU by counting tasks, whatever its average
 * (calculate_imbalance, a group with spare capacity).
 */
static uint64_t cpu_load(struct cfsbw_sim *s, unsigned c)
{
	if (s->cpu_pelt)
		return s->cpus[c].nr == 0 ? 0 : cfsbw_sim__pelt_cpu_load(s, c);
	return s->groups[0]->pc[c].q.load;
}

/* What task t adds to its CPU's load: its weight, scaled at each level by
 * the share its queue's group entity has of it (task_h_load). */
uint64_t cfsbw_sim__task_h_load(const struct sim_task *t)
{
	uint64_t h = t->se.weight;
	for (const struct sim_entity *se = &t->se; se->parent;
	     se = se->parent) {
		uint64_t load = se->cfs_rq->load;
		h = load ? h * se->parent->weight / load : h;
	}
	return h;
}

/* What moving t takes off its CPU's load, as cpu_load counts it. */
static uint64_t moved_load(struct cfsbw_sim *s, struct sim_task *t)
{
	uint64_t h = cfsbw_sim__task_h_load(t);
	return s->cpu_pelt ? cfsbw_sim__pelt_task_load(s, t, h) >>
				     SIM_PELT_SHIFT
			   : h;
}

/* The most tasks one balancing attempt looks at (Linux's
 * sysctl_sched_nr_migrate). */
#define NR_MIGRATE 32u

/*
 * Pull one queued task that may move from src to dst (can_migrate).  With
 * a bound diff (the two CPUs' difference in load), only one whose load is
 * at most half of it (detach_tasks: a task's load up to the imbalance,
 * half the difference), so that moving it cannot swap the roles and send
 * it back at the next pass; UINT64_MAX: any task (newidle, or an empty
 * dst).
 *
 * As detach_tasks looks: from the least recently run task (the list's
 * tail, run_task), at as many tasks as src can run (its R9 count, up to
 * NR_MIGRATE), each one passed over going to the head, so that the next
 * attempt starts further on.  A throttled group's tasks stay on the list
 * and count against that budget: a CPU going idle beside a waiting task
 * often finds only them and stays idle until a later pass, where looking
 * through the whole list pulled the waiting task at once (docs/sim.md,
 * "Fidelity": `10`'s `/rest`).
 */
static bool pull_task(struct cfsbw_sim *s, unsigned src, unsigned dst,
		      uint64_t diff, bool newidle)
{
	struct sim_cpu *from = &s->cpus[src];
	struct list_head *head = &from->tasks;
	unsigned budget = from->nr < NR_MIGRATE ? from->nr : NR_MIGRATE;
	for (unsigned loop = 0; loop < budget && !list_empty(head); loop++) {
		struct sim_task *t =
			list_entry(head->prev, struct sim_task, link);
		if (!can_migrate(s, t, src, dst) ||
		    (diff != UINT64_MAX && 2 * moved_load(s, t) > diff)) {
			list_move_head(head, &t->link);
			continue;
		}
		migrate_task(s, t, dst, newidle);
		return true;
	}
	return false;
}

/* Loads within 17% of each other count as balanced (imbalance_pct). */
#define IMBALANCE_PCT 117u
/* Busy CPUs balance one pass in BUSY_FACTOR: a task is moved off a busy
 * CPU far less often than onto an idle one.  Linux balances a busy CPU
 * every balance_interval (the domain's CPUs in ms) times busy_factor
 * (16): 32 ms on 2 CPUs, 8 passes of 4 ms here.  At 32 passes (128 ms)
 * the model left a 1-CPU tenant spread over both CPUs beside an unlimited
 * task, idling a quarter of a CPU, where the kernel gathers the tenant's
 * tasks on one CPU within the first tenth of a second (docs/sim.md,
 * "Fidelity"). */
#define BUSY_FACTOR 8u

/* A periodic pass found dst out of balance and moved nothing to it: one
 * more failure in a row (nr_balance_failed), counted once a pass. */
static void balance_failed(struct cfsbw_sim *s, unsigned dst)
{
	if (s->balance_failed_pass[dst] == s->balance_passes)
		return;
	s->balance_failed_pass[dst] = s->balance_passes;
	if (s->balance_failed[dst]++ == 0)
		s->nr_balance_failing++;
}

/* dst took a task, or was found in balance: its count starts again. */
static void balance_done(struct cfsbw_sim *s, unsigned dst)
{
	if (s->balance_failed[dst] > 0) {
		s->balance_failed[dst] = 0;
		s->nr_balance_failing--;
	}
}

/* The end of a pass: the CPUs it balanced for (all of them on a busy
 * pass, the idle ones on the others) that did not fail in it were found
 * in balance.  Nothing to do while no CPU has failed (most passes). */
static void balance_pass_done(struct cfsbw_sim *s, bool busy_pass)
{
	if (s->nr_balance_failing == 0)
		return;
	for (unsigned c = 0; c < s->nr_cpus; c++)
		if (s->balance_failed_pass[c] != s->balance_passes &&
		    (busy_pass || s->cpus[c].nr == 0))
			balance_done(s, c);
}

/*
 * SIS_UTIL (Linux's update_idle_cpu_scan): of a domain of span CPUs whose
 * utilisations add up to sum_util, the CPUs a waking task may look at for
 * an idle one: span * (1 - (x * 117 / 100)^2), x the CPUs' average
 * utilisation out of 1024, rounded down as the kernel's integers do: none
 * near x = 1024 * 100 / 117 (85%), where a domain is overloaded
 * (imbalance_pct; on 64 CPUs from x = 869), and on 2 CPUs from x = 620
 * (61%).
 */
unsigned cfsbw_sim__idle_scan_depth(uint64_t sum_util, unsigned span)
{
	const uint64_t pct = 117; /* the domain's imbalance_pct */
	uint64_t x = sum_util / span;
	if (x > NICE_0_LOAD)
		x = NICE_0_LOAD; /* a CPU is at most busy all the time */
	uint64_t tmp = x * x * pct * pct / (10000 * NICE_0_LOAD);
	if (tmp > NICE_0_LOAD)
		tmp = NICE_0_LOAD;
	return (unsigned)((NICE_0_LOAD - tmp) * span / NICE_0_LOAD);
}

/* wake_scan util: each domain's scan depth from its utilisation now, as
 * the kernel's periodic balancing of a cache domain leaves it. */
static void update_idle_scan(struct cfsbw_sim *s)
{
	for (unsigned d = 0; d * SIM_DOMAIN_CPUS < s->nr_cpus; d++) {
		unsigned first = d * SIM_DOMAIN_CPUS;
		unsigned span = cfsbw_sim__domain_span(s, d);
		uint64_t sum = 0;
		for (unsigned c = first; c < first + span; c++)
			sum += cfsbw_sim__pelt_cpu_util(s, c);
		s->idle_scan[d] = cfsbw_sim__idle_scan_depth(sum, span);
	}
}

/*
 * Periodic balancing, by load as Linux does: sort the CPUs by load, then
 * pair the most loaded with the least loaded and move one task per pair
 * while they are out of balance.  An idle CPU takes any queued task from
 * a CPU with two or more that can run (R9), at every pass; a busy one, at
 * one pass in BUSY_FACTOR, only a task that narrows the difference.  Keys
 * are (load, cpu), a total order, so any sort gives the same pairs.  A
 * destination that a pass finds out of balance and can give nothing (its
 * candidates cache hot, throttled or too heavy) counts a failure; one
 * that takes a task or is in balance starts again from none.
 */
void cfsbw_sim__balance(struct cfsbw_sim *s)
{
	unsigned n = s->nr_cpus;
	if (s->idle_scan)
		update_idle_scan(s);
	bool busy_pass = ++s->balance_passes % BUSY_FACTOR == 0;
	if (!busy_pass && s->nr_idle == 0)
		return; /* no CPU to take a task: no pass */
	if (s->nr_overloaded == 0) {
		balance_pass_done(s, busy_pass); /* no CPU has one to spare */
		return;
	}
	uint64_t lo_load = UINT64_MAX, hi_load = 0;
	for (unsigned c = 0; c < n; c++) {
		uint64_t load = cpu_load(s, c);
		lo_load = load < lo_load ? load : lo_load;
		hi_load = load > hi_load ? load : hi_load;
		s->sort_keys[c] = load << 13 | c; /* c < 8192; loads < 2^50 */
	}
	if (hi_load * 100 <= lo_load * IMBALANCE_PCT) {
		balance_pass_done(s, busy_pass);
		return;
	}
	sort_u64(s->sort_keys, n);
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
		if (s->cpus[src].nr >= 2) {
			moved = pull_task(s, src, dst,
					  s->cpus[dst].nr == 0 ? UINT64_MAX
							       : ls - ld,
					  false);
			if (moved)
				balance_done(s, dst);
			else
				balance_failed(s, dst);
		}
		if (moved)
			lo++;
		else
			hi--;
	}
	balance_pass_done(s, busy_pass);
}
