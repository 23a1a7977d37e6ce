/*
 * budget.c - how many events a scenario asks for, before it runs (issue
 * 16): a run's time is its events (a few million a second on this
 * machine), and a scenario can ask for more than anyone would wait for:
 * `duty run=1ns sleep=0ns` is two events per simulated nanosecond.  Each
 * source of events is counted from above: every busy CPU's tick, every
 * cycle of a duty task (its wake-up and the end of its run), every request
 * (its arrival and its completion), every step of a trace, every period
 * and slack timer of a limited group, every balancing pass.  A scenario
 * over its budget (max_events, CFSBW_SIM_DEFAULT_MAX_EVENTS unless it says
 * otherwise) is refused, naming the line that asks for the most.
 *
 * Arithmetic saturates: the point is to refuse absurd numbers, not to
 * overflow computing them.
 */
#include <errno.h>
#include <inttypes.h>

#include "sim/sim_int.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* Cycles of cycle_ns that start within duration_ns: at most this many. */
static uint64_t cycles(int64_t duration_ns, int64_t cycle_ns)
{
	if (cycle_ns < 1)
		cycle_ns = 1;
	return (uint64_t)(duration_ns / cycle_ns) + 1;
}

/* Events of one replayed thread (or a plain trace): two per step, once,
 * or once per pass of its steps when it loops, up to its own end if it
 * has one (end_ns, 0: none): an rt-app task looped for ever under a
 * global duration runs that long, not the day a replay is given to end. */
static uint64_t trace_events(const struct cfsbw_sim_trace_step *steps,
			     size_t n, bool loop, int64_t end_ns,
			     int64_t duration_ns)
{
	uint64_t per_pass = sat_mul(2, (uint64_t)n);
	if (!loop)
		return per_pass;
	if (end_ns > 0 && end_ns < duration_ns)
		duration_ns = end_ns;
	int64_t pass_ns = 0;
	for (size_t i = 0; i < n && pass_ns < duration_ns; i++)
		pass_ns += steps[i].run_ns + steps[i].sleep_ns;
	return sat_mul(per_pass, cycles(duration_ns, pass_ns));
}

static uint64_t line_events(const struct cfsbw_sim_task_spec *t,
			    int64_t duration_ns)
{
	uint64_t per_task = 0;
	switch (t->workload) {
	case CFSBW_SIM_WL_BUSY:
		break; /* switched at ticks, counted with them */
	case CFSBW_SIM_WL_DUTY:
		per_task = sat_mul(2, cycles(duration_ns,
					     t->run_ns + t->sleep_ns));
		break;
	case CFSBW_SIM_WL_REQUESTS:
		per_task = sat_mul(2, cycles(duration_ns, t->mean_gap_ns));
		break;
	case CFSBW_SIM_WL_TRACE:
		if (t->nr_threads) {
			uint64_t sum = 0;
			for (size_t i = 0; i < t->nr_threads; i++)
				sum = sat_add(sum, trace_events(
							   t->threads[i].steps,
							   t->threads[i].nr_steps,
							   t->threads[i].loop,
							   t->threads[i].end_ns,
							   duration_ns));
			/* count is N times nr_threads: each thread N times */
			return sat_mul(sum, t->count / t->nr_threads + 1);
		}
		per_task = trace_events(t->trace, t->trace_len, t->trace_loop,
					0, duration_ns);
		break;
	case CFSBW_SIM_WL_COUNT:
		break;
	}
	return sat_mul(per_task, t->count);
}

int cfsbw_sim__check_budget(const struct cfsbw_sim *s,
			    struct cfsbw_sim_error *err)
{
	const struct cfsbw_sim_scenario *sc = s->sc;
	int64_t d = sc->duration_ns;
	uint64_t ticks = sat_mul(cycles(d, s->tick_ns), s->nr_cpus);
	uint64_t total = sat_add(ticks, cycles(d, s->balance_ns));
	/* A replay run until its threads exit gives a day as its duration,
	 * an end it does not reach: count its steps, not a day of ticks. */
	if (sc->until_done)
		total = ticks = 0;
	for (size_t i = 0; i < s->nr_groups && !sc->until_done; i++) {
		struct cfsbw_group *cg = s->groups[i]->cg;
		if (cfsbw_group_quota_ns(cg) == CFSBW_RUNTIME_INF)
			continue;
		/* the refresh, and the slack timer at most every 1 ms */
		total = sat_add(total, cycles(d, cfsbw_group_period_ns(cg)));
		total = sat_add(total, cycles(d, CFSBW_NSEC_PER_MSEC));
	}
	uint64_t worst = 0;
	size_t worst_i = 0;
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		uint64_t e = line_events(&sc->tasks[i], d);
		total = sat_add(total, e);
		if (e > worst) {
			worst = e;
			worst_i = i;
		}
	}
	if (total <= sc->max_events)
		return 0;
	if (err && worst >= ticks) {
		const struct cfsbw_sim_task_spec *t = &sc->tasks[worst_i];
		err->line = t->line;
		snprintf(err->msg, sizeof(err->msg),
			 "task %s %s: about %" PRIu64 " events over %" PRId64
			 " ms simulated (two per cycle of each task), and the "
			 "run %" PRIu64 " in all: over the budget of %" PRIu64
			 " events (max_events N raises it; a run takes about "
			 "a second per 5 million)",
			 t->group, t->text, worst, d / CFSBW_NSEC_PER_MSEC,
			 total, sc->max_events);
	} else if (err) {
		err->line = 0;
		snprintf(err->msg, sizeof(err->msg),
			 "%u CPUs ticking %u times a second for %" PRId64
			 " ms: about %" PRIu64 " events, %" PRIu64
			 " in all: over the budget of %" PRIu64
			 " events (max_events N raises it; a run takes about "
			 "a second per 5 million)",
			 s->nr_cpus, sc->hz, d / CFSBW_NSEC_PER_MSEC, ticks,
			 total, sc->max_events);
	}
	return -EINVAL;
}
