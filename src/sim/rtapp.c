/*
 * rtapp.c - rt-app JSON files (scheduler-tools/rt-app, doc/tutorial.txt)
 * as a workload to replay: each task (times its `instance`) becomes one
 * simulated thread running its events in order.
 *
 *   global   duration (s; -1: none): every thread exits at its first step
 *            past it.  calibration, default_policy (SCHED_OTHER),
 *            logdir, log_basename, log_size, lock_pages, ftrace, gnuplot,
 *            pi_enabled, io_device, mem_buffer_size, cumulative_slack
 *            tell rt-app how to run or log, not what the tasks need: read,
 *            and without effect here.
 *   tasks    NAME: {instance, loop (-1: forever), delay (us), policy
 *            (SCHED_OTHER), phases: {NAME: {loop, events...}} or events}
 *   events   run / runtime (us of CPU; runtime is wall time in rt-app,
 *            the same when the task has its CPU), sleep (us), timer
 *            {ref, period (us), mode relative|absolute}, one timer per
 *            task; names match by prefix, as rt-app's do (run0, sleep1).
 *
 * Anything else (lock, wait, barrier, fork, mem, iorun, cpus, priority,
 * taskgroup, ...) is an error naming the field and its line: the
 * simulator would replay something other than what the file says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/json.h"
#include "sim/replay.h"

#define MAX_STEPS_PER_TASK 2000000u
/*
 * Events and loop passes a task's loops may expand to.  Steps alone do
 * not bound the expansion: runs with no sleep between them add up in one
 * step, so a phase of {"run", "sleep": 0} looped 3e18 times never filled
 * the steps and its reader spun for ever; nor do events alone, as a phase
 * with no events looped 3e8 times in a task looped 3e4 times spun 9e12
 * passes (both found by fuzz_replay).  Bounded, a step's run or sleep is
 * at most MAX_EVENTS_PER_TASK hours, far from overflow.
 */
#define MAX_EVENTS_PER_TASK (4u * MAX_STEPS_PER_TASK)
#define MAX_US (3600LL * 1000000) /* one hour */

struct rt_builder {
	struct replay *r;
	size_t idx;          /* the thread being built */
	int64_t run_ns;      /* the step being built */
	int64_t sleep_ns;
	int64_t timer_ns;
	bool timer_absolute;
	const char *timer_ref;
	int64_t lead_ns;     /* sleep before the first run */
	bool any_run;
	unsigned nr_events;  /* events and passes so far, all loops counted */
};

static int rfail(struct replay *r, const struct json_value *v,
		 const char *what, const char *why)
{
	return cfsbw_sim__replay_fail(r, v->line, "%s: %s", what, why);
}

static int us_field(struct replay *r, const struct json_value *v,
		    const char *what, int64_t *ns)
{
	long long us;
	if (!cfsbw_sim__json_int(v, &us) || us < 0 || us > MAX_US)
		return rfail(r, v, what,
			     "expected an integer of microseconds, 0..1h");
	*ns = (int64_t)us * 1000;
	return 0;
}

static const struct json_value *member(const struct json_value *o,
				       const char *key)
{
	for (size_t i = 0; i < o->len; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}

static int push_step(struct rt_builder *b, unsigned line)
{
	struct cfsbw_sim_trace_step st = {
		.run_ns = b->run_ns,
		.sleep_ns = b->sleep_ns,
		.timer_ns = b->timer_ns,
		.timer_absolute = b->timer_absolute,
	};
	if (b->r->t->threads[b->idx].nr_steps >= MAX_STEPS_PER_TASK)
		return cfsbw_sim__replay_fail(
			b->r, line,
			"the task expands to more than %u steps: "
			"lower its loops",
			MAX_STEPS_PER_TASK);
	b->run_ns = b->sleep_ns = b->timer_ns = 0;
	return cfsbw_sim__replay_step(b->r, b->idx, &st, line);
}

static int ev_timer(struct rt_builder *b, const struct json_value *v,
		    const char *key)
{
	struct replay *r = b->r;
	if (v->kind != JSON_OBJECT)
		return rfail(r, v, key, "expected {\"ref\", \"period\", "
					"\"mode\"}");
	const char *ref = "";
	int64_t period = 0;
	bool absolute = false;
	for (size_t i = 0; i < v->len; i++) {
		const struct json_value *f = &v->items[i];
		const char *k = v->keys[i];
		int rc;
		if (!strcmp(k, "ref") && f->kind == JSON_STRING) {
			ref = f->text;
		} else if (!strcmp(k, "period")) {
			if ((rc = us_field(r, f, "timer period", &period)))
				return rc;
		} else if (!strcmp(k, "mode") && f->kind == JSON_STRING &&
			   (!strcmp(f->text, "relative") ||
			    !strcmp(f->text, "absolute"))) {
			absolute = !strcmp(f->text, "absolute");
		} else {
			return cfsbw_sim__replay_fail(
				r, f->line,
				"timer field '%s': not supported "
				"(ref: a string, period: us, "
				"mode: relative or absolute)",
				k);
		}
	}
	if (period <= 0)
		return rfail(r, v, key, "a timer needs a period above 0");
	if (b->timer_ref && strcmp(b->timer_ref, ref))
		return cfsbw_sim__replay_fail(
			r, v->line,
			"timer '%s': one timer per task is "
			"supported (this task also uses '%s')",
			ref, b->timer_ref);
	b->timer_ref = ref;
	b->timer_ns = period;
	b->timer_absolute = absolute;
	return 0;
}

/* One more event or loop pass (at line) in the task's budget. */
static int count(struct rt_builder *b, unsigned line)
{
	if (++b->nr_events <= MAX_EVENTS_PER_TASK)
		return 0;
	return cfsbw_sim__replay_fail(b->r, line,
				      "the task expands to more than %u events "
				      "and loop passes: lower its loops",
				      MAX_EVENTS_PER_TASK);
}

/* One event, by the prefix of its name (rt-app: "run0", "sleep1"). */
static int event(struct rt_builder *b, const char *key,
		 const struct json_value *v)
{
	struct replay *r = b->r;
	int64_t ns = 0;
	int rc;
	if ((rc = count(b, v->line)))
		return rc;
	bool runtime = !strncmp(key, "runtime", 7);
	if (runtime || !strncmp(key, "run", 3)) {
		if ((rc = us_field(r, v, key, &ns)))
			return rc;
		if (ns == 0)
			return 0;
		if (b->run_ns && (b->sleep_ns || b->timer_ns) &&
		    (rc = push_step(b, v->line)))
			return rc;
		if (!b->any_run) {
			b->lead_ns = b->sleep_ns; /* before the first run */
			b->sleep_ns = 0;
		}
		b->any_run = true;
		b->run_ns += ns;
		return 0;
	}
	if (!strncmp(key, "sleep", 5)) {
		if ((rc = us_field(r, v, key, &ns)))
			return rc;
		b->sleep_ns += ns;
		return 0;
	}
	if (!strncmp(key, "timer", 5))
		return ev_timer(b, v, key);
	return cfsbw_sim__replay_fail(
		r, v->line,
		"event '%s': not supported by the simulator "
		"(run, runtime, sleep, timer)",
		key);
}

static int loop_count(struct replay *r, const struct json_value *v,
		      long long *n)
{
	if (!cfsbw_sim__json_int(v, n) || *n == 0 || *n < -1)
		return rfail(r, v, "loop", "expected -1 (forever) or a count "
					   "above 0");
	return 0;
}

/* The events of one phase (or of a task without phases), loop times. */
static int phase(struct rt_builder *b, const struct json_value *ph,
		 bool task_level)
{
	struct replay *r = b->r;
	long long loop = 1;
	const struct json_value *l = task_level ? NULL : member(ph, "loop");
	int rc;
	if (l && (rc = loop_count(r, l, &loop)))
		return rc;
	if (loop < 0)
		return rfail(r, l, "loop", "a phase loops a number of times");
	static const char *const task_fields[] = {"instance", "loop", "delay",
						  "policy", "phases"};
	for (long long n = 0; n < loop; n++) {
		if ((rc = count(b, l ? l->line : ph->line)))
			return rc;
		for (size_t i = 0; i < ph->len; i++) {
			const char *k = ph->keys[i];
			bool skip = !strcmp(k, "loop");
			for (size_t f = 0; task_level && f < 5; f++)
				skip |= !strcmp(k, task_fields[f]);
			if (!skip && (rc = event(b, k, &ph->items[i])))
				return rc;
		}
		if (r->t->threads[b->idx].nr_steps >= MAX_STEPS_PER_TASK)
			return push_step(b, ph->line); /* the error */
	}
	return 0;
}

static int check_task_fields(struct replay *r, const struct json_value *task,
			     const char *name)
{
	const struct json_value *pol = member(task, "policy");
	if (pol && (pol->kind != JSON_STRING ||
		    strcmp(pol->text, "SCHED_OTHER")))
		return cfsbw_sim__replay_fail(
			r, pol->line,
			"task %s: policy: only SCHED_OTHER is "
			"modelled",
			name);
	static const char *const unsupported[] = {
		"priority", "cpus", "taskgroup", "nice", "dl-runtime",
		"dl-period", "dl-deadline", "util_min", "util_max", "numa"};
	for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++) {
		const struct json_value *f = member(task, unsupported[i]);
		if (f)
			return cfsbw_sim__replay_fail(
				r, f->line,
				"task %s: field '%s': not "
				"supported by the simulator",
				name, unsupported[i]);
	}
	return 0;
}

static int task(struct replay *r, const char *name,
		const struct json_value *task, int64_t end_ns)
{
	if (task->kind != JSON_OBJECT)
		return cfsbw_sim__replay_fail(r, task->line,
					      "task %s: expected an "
					      "object",
					      name);
	int rc = check_task_fields(r, task, name);
	if (rc)
		return rc;
	long long instances = 1, loop = 1;
	int64_t delay = 0;
	const struct json_value *v, *phases = member(task, "phases");
	if ((v = member(task, "instance")) &&
	    (!cfsbw_sim__json_int(v, &instances) || instances < 1 ||
	     instances > CFSBW_SIM_MAX_COUNT))
		return rfail(r, v, "instance", "expected 1..1000000");
	const struct json_value *v_loop = member(task, "loop");
	if (v_loop && (rc = loop_count(r, v_loop, &loop)))
		return rc;
	if ((v = member(task, "delay")) && (rc = us_field(r, v, "delay",
							 &delay)))
		return rc;
	if (phases && phases->kind != JSON_OBJECT)
		return rfail(r, phases, "phases", "expected an object");
	struct rt_builder b = {.r = r};
	if ((rc = cfsbw_sim__replay_new_thread(r, 0, name, task->line, &b.idx)))
		return rc;
	for (long long n = 0; n < (loop < 0 ? 1 : loop); n++) {
		if ((rc = count(&b, v_loop ? v_loop->line : task->line)))
			return rc;
		if (!phases) {
			rc = phase(&b, task, true);
		} else {
			for (size_t i = 0; !rc && i < phases->len; i++)
				rc = phases->items[i].kind == JSON_OBJECT
					     ? phase(&b, &phases->items[i], false)
					     : rfail(r, &phases->items[i],
						     phases->keys[i],
						     "a phase is an object");
		}
		if (rc)
			return rc;
	}
	struct cfsbw_sim_trace_thread *th = &r->t->threads[b.idx];
	if (!b.any_run)
		return cfsbw_sim__replay_fail(
			r, task->line, "task %s: no run or runtime event",
			name);
	/* a sleep before the first run delays the start; in a loop, it
	 * also follows the last step, before the loop begins again */
	if (loop < 0) {
		b.sleep_ns += b.lead_ns;
	}
	if ((rc = push_step(&b, task->line)))
		return rc;
	th = &r->t->threads[b.idx];
	th->start_ns = delay + b.lead_ns;
	th->end_ns = end_ns;
	th->loop = loop < 0;
	for (long long i = 1; i < instances; i++) {
		size_t k;
		if ((rc = cfsbw_sim__replay_new_thread(r, i, name, task->line,
						       &k)))
			return rc;
		struct cfsbw_sim_trace_thread *first = &r->t->threads[b.idx];
		struct cfsbw_sim_trace_thread *copy = &r->t->threads[k];
		copy->start_ns = first->start_ns;
		copy->end_ns = end_ns;
		copy->loop = first->loop;
		copy->steps = first->steps;
		copy->nr_steps = first->nr_steps;
		copy->shared_steps = true;
	}
	return 0;
}

static int global(struct replay *r, const struct json_value *g,
		  int64_t *end_ns)
{
	static const char *const no_effect[] = {
		"calibration", "default_policy", "logdir", "log_basename",
		"log_size", "lock_pages", "ftrace", "gnuplot", "pi_enabled",
		"io_device", "mem_buffer_size", "cumulative_slack"};
	if (g->kind != JSON_OBJECT)
		return rfail(r, g, "global", "expected an object");
	for (size_t i = 0; i < g->len; i++) {
		const char *k = g->keys[i];
		const struct json_value *v = &g->items[i];
		long long s;
		if (!strcmp(k, "duration")) {
			if (!cfsbw_sim__json_int(v, &s) || s < -1 || s == 0 ||
			    s > 30LL * 86400)
				return rfail(r, v, "duration",
					     "expected -1 or seconds above 0");
			*end_ns = s < 0 ? 0 : (int64_t)s * 1000000000;
			continue;
		}
		if (!strcmp(k, "default_policy") &&
		    (v->kind != JSON_STRING || strcmp(v->text, "SCHED_OTHER")))
			return rfail(r, v, "default_policy",
				     "only SCHED_OTHER is modelled");
		bool known = false;
		for (size_t n = 0; n < sizeof no_effect / sizeof *no_effect; n++)
			known |= !strcmp(k, no_effect[n]);
		if (!known)
			return cfsbw_sim__replay_fail(
				r, v->line,
				"global field '%s': not supported "
				"by the simulator",
				k);
	}
	return 0;
}

int cfsbw_sim_replay_parse_rtapp(struct cfsbw_sim_task_spec *t,
				 const char *text, struct cfsbw_sim_error *err)
{
	struct replay r;
	struct json_value root;
	cfsbw_sim__replay_init(&r, t, err);
	int rc = cfsbw_sim__json_parse(text, &root, err);
	if (rc)
		return rc;
	const struct json_value *tasks = NULL;
	int64_t end_ns = 0;
	if (root.kind != JSON_OBJECT) {
		rc = rfail(&r, &root, "rt-app file", "expected an object");
		goto out;
	}
	for (size_t i = 0; !rc && i < root.len; i++) {
		if (!strcmp(root.keys[i], "global"))
			rc = global(&r, &root.items[i], &end_ns);
		else if (!strcmp(root.keys[i], "tasks"))
			tasks = &root.items[i];
		else
			rc = cfsbw_sim__replay_fail(
				&r, root.items[i].line,
				"field '%s': not supported by the "
				"simulator (global, tasks)",
				root.keys[i]);
	}
	if (rc)
		goto out;
	if (!tasks || tasks->kind != JSON_OBJECT || !tasks->len) {
		rc = rfail(&r, tasks ? tasks : &root, "tasks",
			   "expected an object of one or more tasks");
		goto out;
	}
	for (size_t i = 0; !rc && i < tasks->len; i++)
		rc = task(&r, tasks->keys[i], &tasks->items[i], end_ns);
	if (!rc)
		rc = cfsbw_sim__replay_finish(&r, "rt-app", false);
out:
	cfsbw_sim__replay_done(&r, rc);
	cfsbw_sim__json_free(&root);
	return rc;
}
