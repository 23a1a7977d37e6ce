/*
 * workload.c - what the simulated tasks do (SPEC section 7, the sim issue):
 *
 *  busy      always runnable.
 *  duty      needs run_ns of CPU, then sleeps sleep_ns, and again, from
 *            time 0 or from its phase (fixed, or random within a cycle).
 *            Its latency is the time from the start of a cycle to the end
 *            of its run: run_ns when it has a CPU to itself, more when it
 *            waits or is throttled.
 *  requests  Poisson arrivals (mean gap 1 s / rate), each needing a fixed
 *            or exponentially distributed service time, served in arrival
 *            order from the task's own queue; latency from arrival to
 *            completion.
 *  trace     replays (run, sleep) steps read from a CSV file, or a thread
 *            of a recorded trace, rt-app or perf file (replay.c), once or
 *            in a loop; after its last step the task exits.  Closed loop:
 *            a step runs when the one before it has, so a throttled task's
 *            later steps shift, as the real program's would.  A step that
 *            waits for an rt-app timer records its latency (expiry to the
 *            end of the next run).
 *
 * Randomness comes from the machine's one generator, drawn in event order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

const char *cfsbw_sim_workload_name(enum cfsbw_sim_workload wl)
{
	static const char *const names[] = {
#define SIM_WORKLOAD_NAME(e, name) name,
		CFSBW_SIM_WORKLOAD_MAP(SIM_WORKLOAD_NAME)
#undef SIM_WORKLOAD_NAME
	};
	return (unsigned)wl < CFSBW_SIM_WL_COUNT ? names[wl] : NULL;
}

void cfsbw_sim__workload_init(struct cfsbw_sim *s, struct sim_task *t)
{
	const struct cfsbw_sim_task_spec *ts = t->spec;
	t->workload = (uint8_t)ts->workload;
	t->arrivals_periodic = ts->arrivals_periodic;
	t->service_exp = ts->service_exp;
	t->work_ns = ts->workload == CFSBW_SIM_WL_REQUESTS ? ts->service_ns
							     : ts->run_ns;
	t->gap_ns = ts->workload == CFSBW_SIM_WL_REQUESTS ? ts->mean_gap_ns
							    : ts->sleep_ns;
	cfsbw_sim__task_streams(t->draw, s->sc->seed,
				(uint64_t)(t - s->tasks));
	/* a new task counts as runnable the whole time (pelt.c), from its
	 * first enqueue */
	t->pelt.avg = (uint64_t)NICE_0_LOAD << SIM_PELT_SHIFT;
	t->pelt.period = -1;
}

/* What draws, as cfsbw_sim__workload_start() and requests.c draw: the
 * two must agree (test_sim_scenario's seeds_matter_only_where_drawn). */
bool cfsbw_sim_scenario_is_random(const struct cfsbw_sim_scenario *sc)
{
	/* each group's first period is drawn (whether a group ends up
	 * limited may be a plan's or a sweep's doing: any group counts) */
	if (sc->first_period == CFSBW_SIM_FIRST_PERIOD_RANDOM)
		for (size_t i = 0; i < sc->nr_groups; i++)
			if (strcmp(sc->groups[i].path, "/"))
				return true;
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		const struct cfsbw_sim_task_spec *ts = &sc->tasks[i];
		if (ts->workload == CFSBW_SIM_WL_REQUESTS &&
		    (!ts->arrivals_periodic || ts->service_exp))
			return true;
		if (ts->workload == CFSBW_SIM_WL_DUTY && ts->phase_random)
			return true;
	}
	return false;
}

static void arm_wake(struct cfsbw_sim *s, struct sim_task *t, int64_t when)
{
	cfsbw_sim__timer_arm(&s->evq, &t->wake, when);
}

/*
 * A duty task's sleep ends the scenario's wakeup_latency after it was due:
 * Linux lets a normal task's timer fire up to its timer slack (50 us)
 * late, and an idle CPU takes its time to wake.  Its latency still counts
 * from when the sleep was due (t->cycle_start).  Without it a cycle as
 * long as the period stays in step with it forever, which the kernel's
 * never does (docs/sim.md, "Fidelity").  Traces keep their own sleeps: a
 * recorded one already holds the latency of the machine it ran on.
 */
static void arm_sleep_end(struct cfsbw_sim *s, struct sim_task *t,
			  int64_t due)
{
	arm_wake(s, t, due + s->sc->wakeup_latency_ns);
}

/* A task has no more work: it leaves the machine for good. */
static void task_exit(struct cfsbw_sim *s, struct sim_task *t)
{
	t->exited = true;
	t->line->exited++;
	t->line->last_exit_ns = s->now;
	s->nr_exited++;
}

/*
 * Recorded traces: a wake-up waits for the whole line's progress (the CPU
 * of its completed steps) to reach a gate, then for a lag, as recorded.
 * Waiters are kept in gate order; each completed step releases those whose
 * gate it reached.
 */
static void gate_wait(struct cfsbw_sim *s, struct sim_task *t, int64_t gate,
		      int64_t lag)
{
	struct sim_line *l = t->line;
	if (gate <= l->progress_ns) {
		arm_wake(s, t, s->now + lag);
		return;
	}
	t->gate_ns = gate;
	t->gate_lag_ns = lag;
	struct sim_task **p = &l->gated;
	while (*p && (*p)->gate_ns <= gate)
		p = &(*p)->gate_next;
	t->gate_next = *p;
	*p = t;
}

static void gate_release(struct cfsbw_sim *s, struct sim_line *l)
{
	while (l->gated && l->gated->gate_ns <= l->progress_ns) {
		struct sim_task *t = l->gated;
		l->gated = t->gate_next;
		t->gate_next = NULL;
		arm_wake(s, t, s->now + t->gate_lag_ns);
	}
}

/* ---- the life of a task ------------------------------------------------ */

void cfsbw_sim__workload_start(struct cfsbw_sim *s, struct sim_task *t)
{
	const struct cfsbw_sim_task_spec *ts = t->spec;
	t->cycle_start = s->now;
	switch (ts->workload) {
	case CFSBW_SIM_WL_BUSY:
		t->burst_left = INT64_MAX;
		cfsbw_sim__task_wake(s, t);
		break;
	case CFSBW_SIM_WL_DUTY: {
		/* phase: the first cycle starts later, the tasks of one line
		 * out of step with each other when it is random */
		int64_t phase = ts->phase_ns, cycle = ts->run_ns + ts->sleep_ns;
		if (ts->phase_random)
			phase = (int64_t)(cfsbw_sim__stream_next(&t->draw[0]) %
					  (uint64_t)cycle);
		if (phase > 0) {
			t->cycle_start = s->now + phase;
			arm_sleep_end(s, t, t->cycle_start);
			break;
		}
		t->burst_left = ts->run_ns;
		cfsbw_sim__task_wake(s, t);
		break;
	}
	case CFSBW_SIM_WL_REQUESTS:
		cfsbw_sim__req_start(s, t);
		break;
	case CFSBW_SIM_WL_TRACE:
		t->timer_next_ns = -1;
		if (t->nr_steps == 0) {
			task_exit(s, t);
			break;
		}
		/* latency is recorded for runs a timer starts: the first run
		 * of a periodic task too, from its start, and every run of an
		 * open-loop replay (a thread that runs once and exits, as a
		 * thread per request does, included) */
		t->cycle_start = t->steps[0].timer_ns > 0 ||
					 t->steps[t->nr_steps - 1].timer_ns > 0 ||
					 t->spec->trace_open
				 ? t->start_ns
				 : -1;
		if (t->gated && t->start_gate_ns > 0) {
			gate_wait(s, t, t->start_gate_ns, t->start_gate_lag_ns);
			break;
		}
		if (t->start_ns > s->now) {
			arm_wake(s, t, t->start_ns);
			break;
		}
		t->burst_left = t->steps[0].run_ns;
		cfsbw_sim__task_wake(s, t);
		break;
	case CFSBW_SIM_WL_COUNT:
		SIM_BUG_ON(1);
	}
}

void cfsbw_sim__workload_wake_timer(struct cfsbw_sim *s, struct sim_task *t)
{
	switch ((enum cfsbw_sim_workload)t->workload) {
	case CFSBW_SIM_WL_DUTY:
		t->burst_left = t->work_ns; /* cycle_start: when it was due */
		cfsbw_sim__task_wake(s, t);
		break;
	case CFSBW_SIM_WL_TRACE:
		t->burst_left = t->steps[t->trace_pos].run_ns;
		cfsbw_sim__task_wake(s, t);
		break;
	case CFSBW_SIM_WL_REQUESTS:
		cfsbw_sim__req_arrival(s, t);
		break;
	case CFSBW_SIM_WL_BUSY:
	case CFSBW_SIM_WL_COUNT:
		SIM_BUG_ON(1);
	}
}

/*
 * The running trace task t finished a step's run: the latency of a run
 * that followed a timer's expiry, then the step's sleep or the timer's
 * next expiry (relative: a late task's next period starts now; absolute:
 * it stays on the grid from the task's start, so a late task runs at once
 * and its latency counts how late it is), then the next step.
 */
static void trace_step_done(struct cfsbw_sim *s, struct sim_task *t)
{
	struct sim_line *l = t->line;
	const struct cfsbw_sim_trace_step *st = &t->steps[t->trace_pos];
	l->completed++;
	l->progress_ns += st->run_ns;
	if (t->cycle_start >= 0)
		cfsbw_sim__line_record(s, l, s->now - t->cycle_start);
	t->cycle_start = -1;
	int64_t wake = s->now + st->sleep_ns;
	bool gate = t->gated && st->gate_progress_ns >= 0 &&
		    t->trace_pos + 1 < t->nr_steps;
	if (st->timer_ns > 0) {
		if (t->timer_next_ns < 0)
			t->timer_next_ns = t->start_ns;
		wake = t->timer_next_ns + st->timer_ns;
		if (wake < s->now && !st->timer_absolute)
			wake = s->now;
		t->timer_next_ns = wake;
		t->cycle_start = wake;
	}
	bool over = t->end_ns > 0 && wake >= t->end_ns;
	if (++t->trace_pos == t->nr_steps || over) {
		if (!t->steps_loop || over) {
			cfsbw_sim__task_sleep(s, t);
			task_exit(s, t);
			if (t->gated)
				gate_release(s, l);
			return;
		}
		t->trace_pos = 0;
	}
	t->burst_left = t->steps[t->trace_pos].run_ns;
	if (gate) {
		cfsbw_sim__task_sleep(s, t);
		gate_wait(s, t, st->gate_progress_ns, st->gate_lag_ns);
	} else if (wake <= s->now) {
		cfsbw_sim__task_continue(s, t);
	} else {
		cfsbw_sim__task_sleep(s, t);
		arm_wake(s, t, wake);
	}
	if (t->gated)
		gate_release(s, l);
}

void cfsbw_sim__workload_burst_done(struct cfsbw_sim *s, struct sim_task *t)
{
	struct sim_line *l = t->line;
	switch ((enum cfsbw_sim_workload)t->workload) {
	case CFSBW_SIM_WL_DUTY:
		l->completed++;
		cfsbw_sim__line_record(s, l, s->now - t->cycle_start);
		cfsbw_sim__task_sleep(s, t);
		t->cycle_start = s->now + t->gap_ns;
		arm_sleep_end(s, t, t->cycle_start);
		break;
	case CFSBW_SIM_WL_REQUESTS:
		cfsbw_sim__req_done(s, t);
		break;
	case CFSBW_SIM_WL_TRACE:
		trace_step_done(s, t);
		break;
	case CFSBW_SIM_WL_BUSY:
	case CFSBW_SIM_WL_COUNT:
		SIM_BUG_ON(1);
	}
}
