/*
 * replay.c - recorded runs into the steps a `trace` task replays, for
 * every trace format (replay.h says how), and the choice of format.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/helpers.h"
#include "sim/replay.h"

#define MAX_THREADS 1000000u /* CFSBW_SIM_MAX_COUNT: one task each */
#define MAX_STEPS_TOTAL 50000000u

struct replay_state {
	int64_t run_ns;  /* the step being built: CPU so far */
	int64_t last_end_ns; /* -1: no run yet */
	bool last_blocked;
	bool exited;
	size_t cap_steps;
	/* recorded: when each step's run ended and the thread woke after it
	 * (-1: it exited), for the progress ties (replay_gates()) */
	int64_t *ends, *wakes;
	size_t cap_times;
};

void cfsbw_sim__replay_init(struct replay *r, struct cfsbw_sim_task_spec *t,
			    struct cfsbw_sim_error *err)
{
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->err = err;
	cfsbw_sim_trace_threads_free(t);
	if (err) {
		err->line = 0;
		err->msg[0] = '\0';
	}
}

int cfsbw_sim__replay_fail(struct replay *r, unsigned line, const char *fmt,
			   ...)
{
	if (r->err) {
		va_list ap;
		va_start(ap, fmt);
		r->err->line = line;
		vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int replay_oom(struct replay *r, unsigned line)
{
	if (r->err) {
		r->err->line = line;
		snprintf(r->err->msg, sizeof(r->err->msg), "out of memory");
	}
	return -ENOMEM;
}

static size_t hash_slot(int64_t key, size_t cap)
{
	uint64_t h = (uint64_t)key * UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(h >> 32) & (cap - 1);
}

bool cfsbw_sim__replay_find_thread(const struct replay *r, int64_t tid,
				   size_t *idx)
{
	if (!r->hcap)
		return false;
	for (size_t i = hash_slot(tid, r->hcap);; i = (i + 1) & (r->hcap - 1)) {
		if (!r->vals[i])
			return false;
		if (r->keys[i] == tid) {
			*idx = r->vals[i] - 1;
			return true;
		}
	}
}

static bool hash_put(struct replay *r, int64_t tid, size_t idx)
{
	if (2 * (r->hlen + 1) > r->hcap) {
		size_t ncap = r->hcap ? 2 * r->hcap : 64;
		int64_t *nk = calloc(ncap, sizeof(*nk));
		size_t *nv = calloc(ncap, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return false;
		}
		for (size_t i = 0; i < r->hcap; i++) {
			if (!r->vals[i])
				continue;
			size_t j = hash_slot(r->keys[i], ncap);
			while (nv[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = r->keys[i];
			nv[j] = r->vals[i];
		}
		free(r->keys);
		free(r->vals);
		r->keys = nk;
		r->vals = nv;
		r->hcap = ncap;
	}
	size_t i = hash_slot(tid, r->hcap);
	while (r->vals[i] && r->keys[i] != tid)
		i = (i + 1) & (r->hcap - 1);
	if (!r->vals[i])
		r->hlen++;
	r->keys[i] = tid;
	r->vals[i] = idx + 1;
	return true;
}

int cfsbw_sim__replay_new_thread(struct replay *r, int64_t tid,
				 const char *name, unsigned line, size_t *idx)
{
	struct cfsbw_sim_task_spec *t = r->t;
	if (t->nr_threads == MAX_THREADS)
		return cfsbw_sim__replay_fail(r, line, "more than %u threads",
					      MAX_THREADS);
	/* Two arrays, one capacity: r->cap moves only once both have room. */
	size_t threads_cap = r->cap, st_cap = r->cap;
	struct cfsbw_sim_trace_thread *nt = array_room(
		t->threads, t->nr_threads, &threads_cap, sizeof(*nt), 16);
	if (!nt)
		return replay_oom(r, line);
	t->threads = nt;
	struct replay_state *ns =
		array_room(r->st, t->nr_threads, &st_cap, sizeof(*ns), 16);
	if (!ns)
		return replay_oom(r, line);
	r->st = ns;
	r->cap = threads_cap;
	size_t i = t->nr_threads;
	struct cfsbw_sim_trace_thread *th = &t->threads[i];
	memset(th, 0, sizeof(*th));
	th->start_gate_progress_ns = -1;
	memset(&r->st[i], 0, sizeof(r->st[i]));
	r->st[i].last_end_ns = -1;
	size_t n = strlen(name) + 24;
	if (!(th->name = malloc(n)))
		return replay_oom(r, line);
	snprintf(th->name, n, "%s/%lld", name, (long long)tid);
	t->nr_threads++;
	r->nr_st = t->nr_threads;
	if (!hash_put(r, tid, i))
		return replay_oom(r, line);
	*idx = i;
	return 0;
}

void cfsbw_sim__replay_exit(struct replay *r, size_t idx)
{
	r->st[idx].exited = true;
}

bool cfsbw_sim__replay_exited(const struct replay *r, size_t idx)
{
	return r->st[idx].exited;
}

int cfsbw_sim__replay_step(struct replay *r, size_t idx,
			   const struct cfsbw_sim_trace_step *step,
			   unsigned line)
{
	struct cfsbw_sim_trace_thread *th = &r->t->threads[idx];
	struct replay_state *st = &r->st[idx];
	if (th->nr_steps == st->cap_steps && th->nr_steps >= MAX_STEPS_TOTAL)
		return cfsbw_sim__replay_fail(r, line, "more than %u steps",
					      MAX_STEPS_TOTAL);
	struct cfsbw_sim_trace_step *ns = array_room(
		th->steps, th->nr_steps, &st->cap_steps, sizeof(*ns), 16);
	if (!ns)
		return replay_oom(r, line);
	th->steps = ns;
	th->steps[th->nr_steps] = *step;
	th->steps[th->nr_steps].gate_progress_ns = -1;
	th->nr_steps++;
	return 0;
}

/* The recorded end and wake-up of thread idx's last step. */
static int record_times(struct replay *r, size_t idx, int64_t end_ns,
			int64_t wake_ns, unsigned line)
{
	struct replay_state *st = &r->st[idx];
	size_t n = r->t->threads[idx].nr_steps; /* the step is in already */
	if (n > st->cap_times) {
		size_t ncap = st->cap_times ? 2 * st->cap_times : 16;
		while (ncap < n)
			ncap *= 2;
		int64_t *ne = realloc(st->ends, ncap * sizeof(*ne));
		if (ne)
			st->ends = ne;
		int64_t *nw = ne ? realloc(st->wakes, ncap * sizeof(*nw)) : NULL;
		if (!nw)
			return replay_oom(r, line);
		st->wakes = nw;
		st->cap_times = ncap;
	}
	st->ends[n - 1] = end_ns;
	st->wakes[n - 1] = wake_ns;
	return 0;
}

int cfsbw_sim__replay_run(struct replay *r, size_t idx, int64_t start_ns,
			  int64_t end_ns, int64_t ready_ns, bool blocked,
			  unsigned line)
{
	struct cfsbw_sim_trace_thread *th = &r->t->threads[idx];
	struct replay_state *st = &r->st[idx];
	if (end_ns < start_ns)
		return cfsbw_sim__replay_fail(
			r, line,
			"a run that ends (%lld) before it "
			"starts (%lld)",
			(long long)end_ns, (long long)start_ns);
	if (st->last_end_ns >= 0 && start_ns < st->last_end_ns)
		return cfsbw_sim__replay_fail(
			r, line,
			"thread %s: a run at %lld ns, before its "
			"previous run ended (%lld ns)",
			th->name, (long long)start_ns,
			(long long)st->last_end_ns);
	if (end_ns == start_ns) {
		/* no CPU: only whether the thread blocked counts */
		if (st->last_end_ns >= 0 && blocked && !st->last_blocked) {
			st->last_blocked = true;
			st->last_end_ns = end_ns;
		}
		return 0;
	}
	if (ready_ns < 0 || ready_ns > start_ns)
		ready_ns = start_ns;
	if (st->last_end_ns < 0) {
		th->start_ns = ready_ns;
		st->run_ns = end_ns - start_ns;
	} else if (!st->last_blocked) {
		st->run_ns += end_ns - start_ns; /* the gap was a wait */
	} else {
		if (ready_ns < st->last_end_ns)
			ready_ns = st->last_end_ns;
		struct cfsbw_sim_trace_step step = {
			.run_ns = st->run_ns,
			.sleep_ns = ready_ns - st->last_end_ns,
		};
		int rc = cfsbw_sim__replay_step(r, idx, &step, line);
		if (!rc)
			rc = record_times(r, idx, st->last_end_ns, ready_ns, line);
		if (rc)
			return rc;
		st->run_ns = end_ns - start_ns;
	}
	st->last_end_ns = end_ns;
	st->last_blocked = blocked;
	return 0;
}

struct done_at {
	int64_t end_ns, run_ns;
};

static int cmp_done(const void *a, const void *b)
{
	const struct done_at *x = a, *y = b;
	return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* How much CPU the trace's steps had completed by time when (sorted
 * prefix sums), and when the last of those completed (0: none). */
static void progress_at(const struct done_at *d, const int64_t *sum,
			size_t n, int64_t origin, int64_t when,
			int64_t *progress, int64_t *since)
{
	size_t lo = 0, hi = n; /* first index ending after when */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d[mid].end_ns <= when)
			lo = mid + 1;
		else
			hi = mid;
	}
	*progress = lo ? sum[lo - 1] : 0;
	*since = lo ? d[lo - 1].end_ns : origin;
}

/*
 * Tie each recorded wake-up (and thread start) to the progress of the
 * whole trace at that moment: the CPU of all steps completed by then,
 * plus the time since the last of them completed.  Replayed under a limit,
 * a parent that waited for its children waits for their work, and a
 * process forked after some work starts after that work, however long
 * the work takes now.  Without memory for it, wake-ups stay plain sleeps.
 */
static void replay_gates(struct replay *r, int64_t origin)
{
	struct cfsbw_sim_task_spec *t = r->t;
	size_t n = 0;
	for (size_t i = 0; i < t->nr_threads; i++) {
		if (!r->st[i].ends && t->threads[i].nr_steps)
			return; /* a thread without recorded times */
		n += t->threads[i].nr_steps;
	}
	struct done_at *d = malloc((n ? n : 1) * sizeof(*d));
	int64_t *sum = malloc((n ? n : 1) * sizeof(*sum));
	if (!d || !sum) {
		free(d);
		free(sum);
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < t->nr_threads; i++)
		for (size_t j = 0; j < t->threads[i].nr_steps; j++)
			d[k++] = (struct done_at){r->st[i].ends[j],
						  t->threads[i].steps[j].run_ns};
	qsort(d, n, sizeof(*d), cmp_done);
	for (size_t j = 0; j < n; j++)
		sum[j] = d[j].run_ns + (j ? sum[j - 1] : 0);
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct cfsbw_sim_trace_thread *th = &t->threads[i];
		int64_t p, since;
		progress_at(d, sum, n, origin, th->start_ns, &p, &since);
		th->start_gate_progress_ns = p;
		th->start_gate_lag_ns = th->start_ns - since;
		for (size_t j = 0; j < th->nr_steps; j++) {
			int64_t wake = r->st[i].wakes[j];
			if (wake < 0)
				continue;
			progress_at(d, sum, n, origin, wake, &p, &since);
			th->steps[j].gate_progress_ns = p;
			th->steps[j].gate_lag_ns = wake - since;
		}
	}
	t->trace_gated = true;
	free(d);
	free(sum);
}

/* The traces wakeups=recorded can replay: those that hold the times of
 * their wake-ups (what a refusal says first). */
#define OPEN_NEEDS_RECORDING                                                  \
	"wakeups=recorded replays a recorded trace (cfsbw record, perf "      \
	"sched timehist); "

/*
 * wakeups=recorded (open loop): each thread wakes at the times it woke in
 * the recording, whatever the replay has done by then, as a service's
 * requests arrive whether it keeps up or not.  A step's wait becomes an
 * absolute timer (workload.c): the wake-up after step j comes the
 * recorded gap after the one before it (the thread's start for the
 * first), on a grid from the thread's start, so a thread still busy at
 * its next wake-up runs that step at once and the wait counts in its
 * latency.
 */
static int replay_open(struct replay *r)
{
	struct cfsbw_sim_task_spec *t = r->t;
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct cfsbw_sim_trace_thread *th = &t->threads[i];
		if (th->nr_steps && !r->st[i].wakes)
			return cfsbw_sim__replay_fail(
				r, 0,
				"wakeups=recorded: thread %s has no recorded "
				"wake-up times",
				th->name);
		int64_t last = th->start_ns;
		for (size_t j = 0; j < th->nr_steps; j++) {
			int64_t wake = r->st[i].wakes[j];
			if (wake < 0)
				continue; /* it exited after this step */
			if (wake <= last) /* each step ran, then woke */
				return cfsbw_sim__replay_fail(
					r, 0,
					"thread %s: a wake-up at %lld ns, not "
					"after the one before (%lld ns)",
					th->name, (long long)wake,
					(long long)last);
			th->steps[j].timer_ns = wake - last;
			th->steps[j].timer_absolute = true;
			th->steps[j].sleep_ns = 0;
			last = wake;
		}
	}
	return 0;
}

int cfsbw_sim__replay_finish(struct replay *r, const char *format,
			     bool from_zero)
{
	struct cfsbw_sim_task_spec *t = r->t;
	size_t kept = 0;
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct cfsbw_sim_trace_thread *th = &t->threads[i];
		if (r->st && r->st[i].run_ns > 0) {
			struct cfsbw_sim_trace_step step = {
				.run_ns = r->st[i].run_ns};
			int rc = cfsbw_sim__replay_step(r, i, &step, 0);
			if (!rc)
				rc = record_times(r, i, r->st[i].last_end_ns, -1, 0);
			if (rc)
				return rc;
			r->st[i].run_ns = 0;
		}
		if (!th->nr_steps) { /* never ran: nothing to replay */
			free(th->name);
			th->name = NULL;
			continue;
		}
		if (th->start_ns < first)
			first = th->start_ns;
	}
	if (t->trace_open) {
		if (!strcmp(format, "rt-app"))
			return cfsbw_sim__replay_fail(
				r, 0,
				"%san rt-app file's tasks keep their own "
				"timers",
				OPEN_NEEDS_RECORDING);
		int rc = replay_open(r);
		if (rc)
			return rc;
	} else if (r->st) {
		replay_gates(r, from_zero && first != INT64_MAX ? first : 0);
	}
	for (size_t i = 0; i < t->nr_threads; i++)
		if (t->threads[i].nr_steps)
			t->threads[kept++] = t->threads[i];
	t->nr_threads = kept;
	if (!kept)
		return cfsbw_sim__replay_fail(r, 0,
					      "no thread runs in the trace");
	if (from_zero && first != 0)
		for (size_t i = 0; i < kept; i++)
			t->threads[i].start_ns -= first;
	if ((uint64_t)t->count * kept > CFSBW_SIM_MAX_COUNT)
		return cfsbw_sim__replay_fail(
			r, 0,
			"count=%u times %zu threads: more than %u "
			"tasks",
			t->count, kept, CFSBW_SIM_MAX_COUNT);
	t->count *= (unsigned)kept;
	t->trace_format = format;
	return 0;
}

void cfsbw_sim__replay_done(struct replay *r, int rc)
{
	for (size_t i = 0; r->st && i < r->nr_st; i++) {
		free(r->st[i].ends);
		free(r->st[i].wakes);
	}
	free(r->st);
	free(r->keys);
	free(r->vals);
	r->st = NULL;
	r->keys = NULL;
	r->vals = NULL;
	if (rc)
		cfsbw_sim_trace_threads_free(r->t);
}

bool cfsbw_sim__replay_line(const char **p, char *buf, size_t cap,
			    unsigned *line, bool *too_long)
{
	const char *s = *p;
	if (!*s)
		return false;
	const char *eol = strchr(s, '\n');
	size_t n = eol ? (size_t)(eol - s) : strlen(s);
	*p = s + n + (eol ? 1 : 0);
	(*line)++;
	*too_long = n >= cap;
	if (*too_long)
		n = cap - 1;
	memcpy(buf, s, n);
	if (n && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	return true;
}

int cfsbw_sim__replay_split(char *buf, char **tok, int max)
{
	int nt = 0;
	for (char *q = buf; *q;) {
		while (*q == ' ' || *q == '\t')
			*q++ = '\0';
		if (!*q)
			break;
		if (nt == max)
			return -1;
		tok[nt++] = q;
		while (*q && *q != ' ' && *q != '\t')
			q++;
	}
	return nt;
}

bool cfsbw_sim__replay_u64(const char *s, uint64_t *out)
{
	return *s >= '0' && *s <= '9' && parse_u64(s, out) == 0;
}

void cfsbw_sim_trace_threads_free(struct cfsbw_sim_task_spec *t)
{
	for (size_t i = 0; i < t->nr_threads; i++) {
		free(t->threads[i].name);
		if (!t->threads[i].shared_steps)
			free(t->threads[i].steps);
	}
	free(t->threads);
	t->threads = NULL;
	t->nr_threads = 0;
}

/* The first line that is not blank or a '#' comment. */
static const char *first_line(const char *text)
{
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p == '\n') {
			p++;
			continue;
		}
		if (*p != '#')
			return p;
		const char *eol = strchr(p, '\n');
		if (!eol)
			return p + strlen(p);
		p = eol + 1;
	}
	return p;
}

int cfsbw_sim_replay_parse(struct cfsbw_sim_task_spec *t, const char *text,
			   struct cfsbw_sim_error *err)
{
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	/* a cfsbw trace, or one that lost its first line */
	static const char *const records[] = {"cfsbw-trace", "thread ", "run ",
					      "exit ", "end "};
	for (size_t i = 0; i < sizeof records / sizeof *records; i++)
		if (!strncmp(text, records[i], strlen(records[i])))
			return cfsbw_sim_replay_parse_cfsbw(t, text, err);
	if (*p == '{' || !strncmp(p, "/*", 2) || !strncmp(p, "//", 2))
		return cfsbw_sim_replay_parse_rtapp(t, text, err);
	const char *l = first_line(text);
	const char *eol = strchr(l, '\n');
	size_t n = eol ? (size_t)(eol - l) : strlen(l);
	/* perf sched timehist starts with its header (or, before it, a line
	 * saying the samples have no call chains) */
	static const char *const perf_starts[] = {"Samples do not have",
						  "time    cpu", "time cpu"};
	for (size_t i = 0; i < sizeof perf_starts / sizeof *perf_starts; i++) {
		const char *hit = strstr(l, perf_starts[i]);
		if (hit && (size_t)(hit - l) < n)
			return cfsbw_sim_replay_parse_perf(t, text, err);
	}
	if (t->trace_open) {
		if (err) {
			err->line = 0;
			snprintf(err->msg, sizeof(err->msg),
				 "%sa CSV trace has durations, not the times "
				 "of its wake-ups",
				 OPEN_NEEDS_RECORDING);
		}
		return -EINVAL;
	}
	int rc = cfsbw_sim_trace_parse(t, text, err);
	if (!rc)
		t->trace_format = "csv";
	return rc;
}
