/*
 * test_sim_parts.c - the simulator's parts on their own, checked against
 * the plain way of computing the same thing: a line's latency percentiles
 * (found by selection) against a full sort; a requests task, against
 * the arithmetic of first come, first served and against the law of its
 * arrivals; the averaged load of `balance_load pelt`, against the same
 * decay in long double.
 */
#include <inttypes.h>
#include <math.h>

#include "harness.h"
#include "cfsbw_sim.h"
#include "sim/sim_int.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The nearest-rank percentile pct / scale of n sorted values. */
static int64_t rank(const int64_t *sorted, size_t n, size_t pct, size_t scale)
{
	return sorted[(n * pct + scale - 1) / scale - 1];
}

#define LAT_MAX 5000u

/*
 * Lines of 1 to 5000 latencies, drawn from few values (many equal), from
 * many, already sorted, in reverse, on both sides of 2^32 ns (kept in
 * 4 bytes below it, in 8 in chunks of their own from it: line_record),
 * one in sixteen above it (many chunks of short ones, one of long ones:
 * the one copied end to end, the other read in place), and all but one
 * far below the largest (a single outlier at the top): p50, p99, p99.9,
 * the maximum and the mean are those of the sorted values, exactly.
 */
TEST(latency_percentiles_are_the_sorted_ranks, "section-7")
{
	static int64_t lat[LAT_MAX], sorted[LAT_MAX];
	struct sim_stream st;
	cfsbw_sim__stream_seed(&st, 3);
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	cfsbw_sim_scenario_init(&sc);
	ASSERT_INT(cfsbw_sim_scenario_parse(
			   &sc, "cpus 1\ntask / duty run=1ms sleep=1ms\n", &err),
		   ==, 0);
	ASSERT_INT(cfsbw_sim_create(&sc, &s, &err), ==, 0);
	struct sim_line *l = &s->lines[0];
	unsigned checked = 0, long_ones = 0;
	const int64_t two32 = (int64_t)1 << 32;
	for (size_t n = 1; n <= LAT_MAX; n = n < 40 ? n + 1 : n * 5 / 4) {
		for (unsigned shape = 0; shape < 7; shape++) {
			for (size_t i = 0; i < n; i++) {
				uint64_t r = cfsbw_sim__stream_next(&st);
				lat[i] = shape == 0 ? (int64_t)(r % 3) * 1000000
							/* many equal */
					 : shape == 1
						 ? (int64_t)(r >> 20) /* spread */
					 : shape == 2 ? (int64_t)i * 7 /* sorted */
					 : shape == 3 ? (int64_t)(n - i) * 7
					 : shape == 4
						 /* around 2^32 */
						 ? two32 - 2 + (int64_t)(r % 5)
					 : shape == 5
						 ? (int64_t)(r % 1000) +
							   (i % 16 ? 0 : two32)
						 /* all but one within 1 ms, one
						  * 2 s: the ranks share the
						  * bottom of the range */
						 : i == n / 2 ? 2000000000
							      : (int64_t)(r % 1000000);
			}
			memcpy(sorted, lat, n * sizeof(*lat));
			qsort(sorted, n, sizeof(*sorted), cmp_i64);
			cfsbw_sim__line_clear(l);
			for (size_t i = 0; i < n; i++)
				cfsbw_sim__line_record(s, l, lat[i]);
			long_ones += (unsigned)l->nr_long;
			cfsbw_sim__line_finish(s, l);
			struct cfsbw_sim_latency got;
			cfsbw_sim__line_latency(l, &got);
			int64_t sum = 0;
			for (size_t i = 0; i < n; i++)
				sum += sorted[i];
			ASSERT_UINT(got.count, ==, n);
			ASSERT_INT(got.p50_ns, ==, rank(sorted, n, 50, 100));
			ASSERT_INT(got.p99_ns, ==, rank(sorted, n, 99, 100));
			ASSERT_INT(got.p999_ns, ==, rank(sorted, n, 999, 1000));
			ASSERT_INT(got.max_ns, ==, sorted[n - 1]);
			ASSERT_INT(got.mean_ns, ==, sum / (int64_t)n);
			checked++;
		}
	}
	ASSERT_UINT(checked, >, 250);
	ASSERT_UINT(long_ones, >, 1000); /* both stores were exercised */
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
}

/*
 * A request every 1 ms needing 2 ms, alone on one CPU for 2 s: request k
 * arrives at k ms and, served in arrival order, ends at 2 (k + 1) ms, so
 * its latency is k + 2 ms.  999 are served (2 to 1000 ms: p50 501 ms,
 * p99 991 ms) while the queue grows to 1001 (counted, not stored: each
 * request is drawn when the one before it ends).
 */
TEST(requests_are_served_in_arrival_order, "section-7")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	cfsbw_sim_scenario_init(&sc);
	ASSERT_INT(cfsbw_sim_scenario_parse(
			   &sc,
			   "cpus 1\nduration 2s\n"
			   "task / requests rate=1000/s arrivals=periodic "
			   "service=2ms\n",
			   &err),
		   ==, 0);
	ASSERT_INT(cfsbw_sim_create(&sc, &s, &err), ==, 0);
	ASSERT_INT(cfsbw_sim_run(s), ==, 0);
	struct cfsbw_sim_line_result l;
	cfsbw_sim_line_result(s, 0, &l);
	ASSERT_UINT(l.completed, ==, 999);
	ASSERT_UINT(l.pending, ==, 1001);
	ASSERT_INT(l.latency.p50_ns, ==, 501 * CFSBW_NSEC_PER_MSEC);
	ASSERT_INT(l.latency.p99_ns, ==, 991 * CFSBW_NSEC_PER_MSEC);
	ASSERT_INT(l.latency.max_ns, ==, 1000 * CFSBW_NSEC_PER_MSEC);
	ASSERT_INT(l.latency.mean_ns, ==, 501 * CFSBW_NSEC_PER_MSEC);
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
}

/* One task of periodic requests alone on one CPU for 60 s. */
static void run_periodic(const char *rate_and_service,
			 struct cfsbw_sim_line_result *l)
{
	char text[256];
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	snprintf(text, sizeof text,
		 "cpus 1\nduration 60s\n"
		 "task / requests arrivals=periodic %s\n",
		 rate_and_service);
	cfsbw_sim_scenario_init(&sc);
	memset(l, 0, sizeof(*l));
	if (cfsbw_sim_scenario_parse(&sc, text, &err) == 0 &&
	    cfsbw_sim_create(&sc, &s, &err) == 0 && cfsbw_sim_run(s) == 0)
		cfsbw_sim_line_result(s, 0, l);
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
}

/*
 * Requests of seconds (the run ends before 60 s, so one that would end
 * then is still queued).  A request every second needing 2 s: request k
 * ends at 2 (k + 1) s, latency k + 2 s; 29 served (2 to 30 s: p50 16 s)
 * and 31 queued.  A request every second needing 5 s, a service time
 * over 32 bits of nanoseconds: request k ends at 5 (k + 1) s, latency
 * 4 k + 5 s; 11 served (5 to 45 s: p50 25 s) and 49 queued.
 */
TEST(requests_over_seconds_keep_their_times, "section-7")
{
	struct cfsbw_sim_line_result l;
	run_periodic("rate=1/s service=2s", &l);
	ASSERT_UINT(l.completed, ==, 29);
	ASSERT_UINT(l.pending, ==, 31);
	ASSERT_INT(l.latency.p50_ns, ==, 16 * CFSBW_NSEC_PER_SEC);
	ASSERT_INT(l.latency.max_ns, ==, 30 * CFSBW_NSEC_PER_SEC);
	run_periodic("rate=1/s service=5s", &l);
	ASSERT_UINT(l.completed, ==, 11);
	ASSERT_UINT(l.pending, ==, 49);
	ASSERT_INT(l.latency.p50_ns, ==, 25 * CFSBW_NSEC_PER_SEC);
	ASSERT_INT(l.latency.max_ns, ==, 45 * CFSBW_NSEC_PER_SEC);
}

/* Run a scenario text; line `line`'s result, and the run's events. */
static int run_line(const char *text, size_t line,
		    struct cfsbw_sim_line_result *l, uint64_t *events)
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	struct cfsbw_sim_totals tot;
	cfsbw_sim_scenario_init(&sc);
	memset(l, 0, sizeof(*l));
	int rc = cfsbw_sim_scenario_parse(&sc, text, &err);
	if (!rc)
		rc = cfsbw_sim_create(&sc, &s, &err);
	if (!rc)
		rc = cfsbw_sim_run(s);
	if (!rc) {
		cfsbw_sim_line_result(s, line, l);
		cfsbw_sim_totals(s, &tot);
		*events = tot.events;
	}
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
	return rc;
}

/*
 * Section 7's requests: Poisson arrivals of rate R.  A task's arrivals
 * and service times come from streams of its own (requests.c), so they
 * are the same whatever its group's limit lets it serve: at 1000/s of
 * exp:2ms on one CPU beside a busy task, 10 s, the arrivals (served plus
 * queued) are one number at every quota, unlimited included, and another
 * under another seed.  Their count is Poisson: 10,000 with a spread of
 * 100, so within 5 spreads.  Every arrival is an event of the model,
 * whether it woke the task (a timer) or found it busy (drawn when the
 * request before it ended, or counted at the end): the events are at
 * least the arrivals and the ticks.
 */
TEST(requests_arrive_the_same_whatever_the_limit, "section-7")
{
	static const char *const quotas[] = {"10000", "50000", "-1"};
	uint64_t arrived[4], served[4], events;
	struct cfsbw_sim_line_result l;
	char text[512];
	for (unsigned i = 0; i < 4; i++) {
		snprintf(text, sizeof text,
			 "cpus 1\nduration 10s\nseed %u\n"
			 "group /a cpu.cfs_quota_us=%s\n"
			 "task /a requests rate=1000/s service=exp:2ms\n"
			 "task / busy\n",
			 i < 3 ? 7u : 8u, quotas[i < 3 ? i : 0]);
		ASSERT_INT(run_line(text, 0, &l, &events), ==, 0);
		arrived[i] = l.completed + l.pending;
		served[i] = l.completed;
		printf("    seed %u quota %s: %" PRIu64 " served, %" PRIu64
		       " queued, %" PRIu64 " events\n",
		       i < 3 ? 7u : 8u, quotas[i < 3 ? i : 0], l.completed,
		       l.pending, events);
		ASSERT_UINT(arrived[i], >=, 9500);
		ASSERT_UINT(arrived[i], <=, 10500);
		/* 250 ticks a second while the CPU is busy */
		ASSERT_UINT(events, >=, arrived[i] + 2400);
		if (i > 0 && i < 3) {
			ASSERT_UINT(arrived[i], ==, arrived[0]);
			/* a larger quota serves more of them */
			ASSERT_UINT(served[i], >, served[i - 1]);
		}
	}
	ASSERT_UINT(arrived[3], !=, arrived[0]);
}

/* Exact sums for the EEVDF checks. */
__extension__ typedef __int128 i128;

static i128 floor_div(i128 a, i128 b)
{
	i128 q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* deadline order (virtual time wraps), ties to vruntime, then id */
static bool plain_before(const struct sim_entity *a, const struct sim_entity *b)
{
	if (a->deadline != b->deadline)
		return vtime_diff(a->deadline, b->deadline) < 0;
	if (a->vruntime != b->vruntime)
		return vtime_diff(a->vruntime, b->vruntime) < 0;
	return a->id < b->id;
}

#define EV_N 48u

/*
 * EEVDF's queue (eevdf.c), 3000 random queues of 1 to 48 entities:
 * weights from 2 (MIN_SHARES) to 262144, virtual runtimes and deadlines
 * within 2^34 ns of min_vruntime (17 s of a NICE_0 task's time), which
 * sits just below INT64_MAX so that virtual time wraps inside the queue;
 * a running entity (curr) or none, its slice protected or not.  Against
 * the plain sums in 128 bits: V is the floor of the weighted mean of
 * every queued entity's vruntime, curr included; an entity is eligible
 * exactly when its vruntime is not past the mean; the pick is the
 * eligible entity with the earliest deadline, curr included, or curr
 * itself while eligible and protected; a placed entity starts at V minus
 * its lag scaled by (load + w) / load; a leaving one keeps V - vruntime,
 * clamped to a slice or a tick of its own virtual time; a reweight keeps
 * the entity's lag and the time to its deadline in real time (truncated),
 * so that V moves only by what the floors of V and of the new lag leave.
 */
TEST(eevdf_queue_matches_the_plain_sums, "section-7")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	cfsbw_sim_scenario_init(&sc);
	ASSERT_INT(cfsbw_sim_scenario_parse(
			   &sc, "cpus 1\nhz 250\nscheduler eevdf\n"
				"task / busy count=49\n",
			   &err),
		   ==, 0);
	ASSERT_INT(cfsbw_sim_create(&sc, &s, &err), ==, 0);
	ASSERT_TRUE(s->eevdf);
	ASSERT_INT(s->base_slice_ns, ==, 700000); /* 1 CPU: factor 1 */
	struct sim_gcpu *owner = &s->groups[0]->pc[0];
	struct sim_cfs_rq *q = &owner->q;
	struct sim_stream st;
	cfsbw_sim__stream_seed(&st, 11);
	const int64_t m = INT64_MAX - ((int64_t)1 << 33);
	unsigned picks_curr = 0, picks_heap = 0, protected_kept = 0;
	for (unsigned round = 0; round < 3000; round++) {
		cfsbw_sim__cfs_rq_init(q, owner);
		q->min_vruntime = m;
		unsigned n = 1 + (unsigned)(cfsbw_sim__stream_next(&st) % EV_N);
		struct sim_entity *e[EV_N];
		for (unsigned i = 0; i < n; i++) {
			struct sim_entity *se = &s->tasks[i].se;
			uint64_t r = cfsbw_sim__stream_next(&st);
			se->on_rq = false;
			se->ran = false;
			se->cfs_rq = q;
			/* few distinct values now and then: ties */
			int64_t span = round % 3 == 0 ? 4 : (int64_t)1 << 34;
			se->weight = 2 + (r % 262143);
			se->vruntime = (int64_t)((uint64_t)m +
				(uint64_t)((int64_t)((r >> 20) % (uint64_t)(2 * span)) - span));
			se->deadline = (int64_t)((uint64_t)se->vruntime +
				(cfsbw_sim__stream_next(&st) % (uint64_t)span));
			se->vlag = 0;
			cfsbw_sim__cfs_enqueue_entity(s, q, se);
			e[i] = se;
		}
		/* a curr, in one round in three none; protected or not */
		struct sim_entity *curr = NULL;
		uint64_t r = cfsbw_sim__stream_next(&st);
		if (r % 3) {
			curr = e[r % n];
			cfsbw_sim__cfs_take_entity(s, q, curr);
			if (r & 64)
				curr->vlag = curr->deadline - 1; /* slice over */
		}

		/* V and eligibility */
		i128 sum = 0, load = 0;
		for (unsigned i = 0; i < n; i++) {
			sum += (i128)e[i]->weight *
			       (i128)vtime_diff(e[i]->vruntime, m);
			load += e[i]->weight;
		}
		int64_t v = vtime_add(m, (int64_t)floor_div(sum, load));
		ASSERT_INT(cfsbw_sim__eevdf_avg(q), ==, v);

		/* the pick, with and without curr's protection */
		for (int protect = 0; protect < 2; protect++) {
			struct sim_entity *want = NULL;
			bool curr_ok = curr &&
				       sum >= (i128)vtime_diff(curr->vruntime, m) * load;
			if (protect && curr_ok && curr->vlag == curr->deadline) {
				want = curr;
				protected_kept++;
			} else {
				for (unsigned i = 0; i < n; i++) {
					bool ok = sum >= (i128)vtime_diff(
						e[i]->vruntime, m) * load;
					if (e[i] == curr && !curr_ok)
						ok = false;
					if (ok && (!want || plain_before(e[i], want)))
						want = e[i];
				}
			}
			struct sim_entity *got = cfsbw_sim__eevdf_pick(s, q, protect);
			if (got != want)
				TEST_FAIL_AT("round %u, %u entities, protect %d: "
					     "picked id %u, the sums say %u",
					     round, n, protect,
					     got ? got->id : 0, want ? want->id : 0);
			ASSERT_TRUE(got == want);
			picks_curr += got == curr;
			picks_heap += got != curr;
		}

		/* a newcomer with lag L and weight w: V - L * (load + w) / load */
		struct sim_entity *x = &s->tasks[EV_N].se;
		x->on_rq = false;
		x->weight = 2 + (cfsbw_sim__stream_next(&st) % 262143);
		x->vlag = (int64_t)(cfsbw_sim__stream_next(&st) % 2000001) - 1000000;
		int64_t lag = x->vlag;
		cfsbw_sim__eevdf_place(s, q, x, false);
		int64_t want_v = vtime_add(
			v, -(int64_t)((i128)lag * (load + x->weight) / load));
		ASSERT_INT(x->vruntime, ==, want_v);
		ASSERT_INT(vtime_diff(x->deadline, x->vruntime), ==,
			   (int64_t)(700000 * NICE_0_LOAD / x->weight));
		ASSERT_INT(x->vlag, ==, 0);

		/* a leaving entity's lag, clamped to max(2 slices, a tick) */
		struct sim_entity *y = e[cfsbw_sim__stream_next(&st) % n];
		int64_t limit = (int64_t)(4000000 * (uint64_t)NICE_0_LOAD / y->weight);
		i128 l = (i128)vtime_diff(v, y->vruntime);
		int64_t want_lag = l < -limit ? -limit : l > limit ? limit : (int64_t)l;
		int64_t keep = y->vlag;
		cfsbw_sim__eevdf_save_lag(s, q, y);
		ASSERT_INT(y->vlag, ==, want_lag);
		y->vlag = keep;

		/* a queued entity's new weight: its lag and the time to its
		 * deadline are kept in real time, truncated towards zero; V
		 * moves only by the floors: with sum = load * (V - m) + f and
		 * w2 * new lag = w1 * lag - r, V' = V + floor((f + r) / load') */
		struct sim_entity *z = e[cfsbw_sim__stream_next(&st) % n];
		uint64_t w1 = z->weight, w2 = 2 + (cfsbw_sim__stream_next(&st) % 262143);
		int64_t zlag = vtime_diff(v, z->vruntime);
		int64_t zleft = vtime_diff(z->deadline, v);
		int64_t t = (int64_t)((i128)zlag * w1 / w2);
		i128 rem = (i128)zlag * w1 - (i128)w2 * t;
		i128 f = sum - load * (i128)vtime_diff(v, m);
		cfsbw_sim__cfs_reweight_eevdf(s, z, w2);
		ASSERT_UINT(z->weight, ==, w2);
		ASSERT_UINT(q->load, ==, (uint64_t)(load - w1 + w2));
		ASSERT_INT(z->vruntime, ==, vtime_add(v, -t));
		ASSERT_INT(z->deadline, ==,
			   vtime_add(v, (int64_t)((i128)zleft * w1 / w2)));
		ASSERT_INT(cfsbw_sim__eevdf_avg(q), ==,
			   vtime_add(v, (int64_t)floor_div(f + rem,
							  load - w1 + w2)));
	}
	/* not vacuous: both kinds of answer, and protection, were seen */
	ASSERT_UINT(picks_curr, >, 300);
	ASSERT_UINT(picks_heap, >, 3000);
	ASSERT_UINT(protected_kept, >, 100);
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
}

/* A machine from a scenario, its tasks started and the first picks
 * made, as cfsbw_sim_run begins, with time left at 0 for the caller. */
static struct cfsbw_sim *started(const char *text,
				 struct cfsbw_sim_scenario *sc)
{
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	cfsbw_sim_scenario_init(sc);
	if (cfsbw_sim_scenario_parse(sc, text, &err) != 0 ||
	    cfsbw_sim_create(sc, &s, &err) != 0)
		return NULL;
	for (size_t i = 0; i < s->nr_tasks; i++)
		cfsbw_sim__workload_start(s, &s->tasks[i]);
	cfsbw_sim__process_resched(s);
	return s;
}

/* At time t, CPU 0 picks again (a reschedule, as a tick's). */
static void pick_again_at(struct cfsbw_sim *s, int64_t t)
{
	s->now = t;
	cfsbw_sim__cpu_resched(s, 0);
	cfsbw_sim__process_resched(s);
}

/*
 * SPEC section 7, picking as Linux has since 3.15 (pick_next_task_fair):
 * the running path competes where it is, and only the entities below the
 * first queue the old and the new path share are put back and started.
 * A group's entity above it stays its queue's current entity without
 * going through the heap, and its slice runs on from when it was first
 * picked (prev_sum_exec): /a's two tasks take turns, /a's slice counts
 * both.  A task picked again keeps its own slice's start too.  Both
 * schedulers (under EEVDF the start of the protected slice, vlag, is
 * what stays).
 */
TEST(a_pick_keeps_the_shared_part_of_the_running_path, "section-7")
{
	static const char *const sched[] = {"cfs", "eevdf"};
	for (unsigned k = 0; k < 2; k++) {
		char text[160];
		snprintf(text, sizeof text,
			 "cpus 1\nhz 250\nscheduler %s\ngroup /a\n"
			 "task /a busy count=2\n",
			 sched[k]);
		struct cfsbw_sim_scenario sc;
		struct cfsbw_sim *s = started(text, &sc);
		ASSERT_TRUE(s != NULL);
		struct sim_cfs_rq *root = &s->groups[0]->pc[0].q;
		struct sim_entity *a = &s->groups[1]->pc[0].se;
		struct sim_task *first = s->cpus[0].curr;
		ASSERT_TRUE(first != NULL && first->g == s->groups[1]);
		ASSERT_TRUE(root->curr == a && root->root == NULL);
		int64_t a_start = a->prev_sum_exec, a_vlag = a->vlag;

		/* 2 ms later the other task of /a runs: a switch inside /a */
		pick_again_at(s, 2000000);
		struct sim_task *second = s->cpus[0].curr;
		ASSERT_TRUE(second != NULL && second != first);
		ASSERT_INT(a->sum_exec, ==, 2000000);
		ASSERT_TRUE(root->curr == a && root->root == NULL);
		if (k == 0)
			ASSERT_INT(a->prev_sum_exec, ==, a_start);
		else
			ASSERT_INT(a->vlag, ==, a_vlag);
		/* the task switched in starts its slice, the one out is
		 * queued */
		if (k == 0)
			ASSERT_INT(second->se.prev_sum_exec, ==,
				   second->se.sum_exec);
		ASSERT_TRUE(first->se.on_rq && a->my_q->curr == &second->se);
		cfsbw_sim_free(s);
		cfsbw_sim_scenario_free(&sc);
	}

	/* one task alone, picked again after 3 ms: its slice runs on */
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim *s = started("cpus 1\nhz 250\ntask / busy\n", &sc);
	ASSERT_TRUE(s != NULL);
	struct sim_task *t = s->cpus[0].curr;
	ASSERT_TRUE(t != NULL);
	pick_again_at(s, 3000000);
	ASSERT_TRUE(s->cpus[0].curr == t);
	ASSERT_INT(t->se.sum_exec, ==, 3000000);
	ASSERT_INT(t->se.prev_sum_exec, ==, 0);
	ASSERT_UINT(s->switches, ==, 1); /* the first pick only */
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
}

/* CPU c of a machine made but not started counts as running a task. */
static void mark_busy(struct cfsbw_sim *s, unsigned c)
{
	s->cpus[c].idle = false;
	s->idle_mask[c / 64] &= ~(UINT64_C(1) << (c % 64));
	s->nr_idle--;
}

/*
 * wake_scan util, as Linux since 6.0 (select_idle_sibling with SIS_UTIL):
 * how many CPUs a waking task whose CPU is busy may look at, from its
 * domain's averaged utilisation: span * (1 - (x * 1.17)^2) rounded down,
 * x the CPUs' average out of 1024 (by hand: on 2 CPUs one CPU up to
 * x = 619, none from 620; on 64, 42 at x = 512, 1 at 868, none from
 * 869).  Then
 * the pick itself: the previous CPU if idle; else the CPU the task last
 * woke from (recent_used_cpu) if idle and in its domain; else the next
 * CPUs in order, only as many as the depth; else stay.  Under wake_scan
 * all, the first idle CPU whatever the utilisation.
 */
TEST(a_busy_domain_cuts_the_wake_up_search_short, "section-7 issue-14")
{
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(0, 2), ==, 2);
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(2 * 619, 2), ==, 1);
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(2 * 620, 2), ==, 0);
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(2 * 1024, 2), ==, 0);
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(64 * 512, 64), ==, 42);
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(64 * 868, 64), ==, 1);
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(64 * 869, 64), ==, 0);
	/* more than busy all the time counts as busy all the time */
	ASSERT_UINT(cfsbw_sim__idle_scan_depth(UINT64_C(1) << 40, 64), ==, 0);
	unsigned last = 64;
	for (uint64_t x = 0; x <= 1024; x++) { /* never more with more use */
		unsigned d = cfsbw_sim__idle_scan_depth(64 * x, 64);
		ASSERT_UINT(d, <=, last);
		last = d;
	}

	for (unsigned util = 0; util < 2; util++) {
		char text[96];
		snprintf(text, sizeof text, "cpus 128\nwake_scan %s\n"
			 "task / busy\n", util ? "util" : "all");
		struct cfsbw_sim_scenario sc;
		struct cfsbw_sim_error err;
		struct cfsbw_sim *s = NULL;
		cfsbw_sim_scenario_init(&sc);
		ASSERT_INT(cfsbw_sim_scenario_parse(&sc, text, &err), ==, 0);
		ASSERT_INT(cfsbw_sim_create(&sc, &s, &err), ==, 0);
		ASSERT_TRUE((s->idle_scan != NULL) == (util == 1));
		struct sim_task *t = &s->tasks[0];
		t->cpu = 5;
		t->recent_cpu = 5;
		/* its CPU idle: there */
		ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 5);
		mark_busy(s, 5);
		mark_busy(s, 6);
		/* CPUs 7.. idle; the domain is 0..63 */
		if (!util) {
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 7);
		} else {
			/* before a pass: the whole domain */
			ASSERT_UINT(s->idle_scan[0], ==, 64);
			s->idle_scan[0] = 0; /* a busy domain */
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 5);
			s->idle_scan[0] = 1; /* looks at 6 only */
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 5);
			s->idle_scan[0] = 2; /* 6, then 7 */
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 7);
			/* the CPU it last woke from, idle: there first */
			s->idle_scan[0] = 0;
			t->recent_cpu = 40;
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 40);
			ASSERT_UINT(t->recent_cpu, ==, 5); /* now its prev */
			/* not in its domain: not taken */
			t->recent_cpu = 100;
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 5);
			/* the scan wraps round its domain, not beyond */
			t->cpu = 63;
			t->recent_cpu = 63;
			mark_busy(s, 63);
			s->idle_scan[0] = 1;
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 0);
			/* every CPU busy: it stays, and its recent CPU becomes
			 * the one it stays on all the same */
			for (unsigned c = 0; c < 128; c++)
				if (s->cpus[c].idle)
					mark_busy(s, c);
			ASSERT_UINT(s->nr_idle, ==, 0);
			t->cpu = 5;
			t->recent_cpu = 40;
			ASSERT_UINT(cfsbw_sim__select_cpu(s, t), ==, 5);
			ASSERT_UINT(t->recent_cpu, ==, 5);
		}
		cfsbw_sim_free(s);
		cfsbw_sim_scenario_free(&sc);
	}
}

/*
 * balance_load pelt (pelt.c): an average keeps y^n of its distance to its
 * input after n periods of 1024 us, y^32 = 1/2, as Linux's PELT: from 0
 * under a load of 1024, 512 after 32 periods (32.768 ms), 768 after 64;
 * nothing moves within a period; after 2048 periods it is its input.
 * Against held + (avg - held) * 2^(-n/32) in long double for 20000 random
 * averages, inputs and gaps (both ways, up to 2^40 of load): within 2
 * fixed-point units plus 2^-30 of the distance decayed (the table's
 * fractions are rounded down to 2^-32).
 */
TEST(pelt_average_decays_by_half_every_32_periods, "section-7 issue-14")
{
	const int64_t P = SIM_PELT_PERIOD_NS;
	const uint64_t one = UINT64_C(1) << SIM_PELT_SHIFT;
	struct sim_pelt p = {0, 0};
	cfsbw_sim__pelt_advance(&p, P - 1, 1024); /* the same period */
	ASSERT_UINT(p.avg, ==, 0);
	cfsbw_sim__pelt_advance(&p, 32 * P, 1024);
	ASSERT_UINT(p.avg / one, >=, 511);
	ASSERT_UINT(p.avg / one, <=, 512);
	ASSERT_INT(p.period, ==, 32);
	cfsbw_sim__pelt_advance(&p, 64 * P + P / 2, 1024);
	ASSERT_UINT(p.avg / one, >=, 767);
	ASSERT_UINT(p.avg / one, <=, 768);
	/* asleep: halves towards 0 */
	struct sim_pelt q = {1024 * one, 0};
	cfsbw_sim__pelt_advance(&q, 32 * P, 0);
	ASSERT_UINT(q.avg / one, >=, 511);
	ASSERT_UINT(q.avg / one, <=, 512);
	cfsbw_sim__pelt_advance(&q, (32 + 2048) * P, 0);
	ASSERT_UINT(q.avg, ==, 0);

	struct sim_stream st;
	cfsbw_sim__stream_seed(&st, 14);
	for (int i = 0; i < 20000; i++) {
		uint64_t a = cfsbw_sim__stream_next(&st) >> (64 - 40 - 10);
		uint64_t held = cfsbw_sim__stream_next(&st) >> (64 - 40);
		int64_t n = (int64_t)(cfsbw_sim__stream_next(&st) % 2200);
		int64_t start = (int64_t)(cfsbw_sim__stream_next(&st) % 1000);
		struct sim_pelt r = {a, start};
		cfsbw_sim__pelt_advance(&r, (start + n) * P + P / 3, held);
		long double h = (long double)held * (long double)one;
		long double want =
			h + ((long double)a - h) * exp2l(-(long double)n / 32);
		long double err = fabsl((long double)r.avg - want);
		ASSERT_TRUE(err <= 2 + fabsl((long double)a - h) / 0x1p30L);
		ASSERT_INT(r.period, ==, start + n);
	}

	/* A task counts as runnable the whole time from its first wake-up,
	 * however late (Linux at wake_up_new_task): a duty task that starts
	 * 100 ms in and moves at once carries all of its 1024, not what
	 * 100 ms of decay would have left of it. */
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	cfsbw_sim_scenario_init(&sc);
	ASSERT_INT(cfsbw_sim_scenario_parse(&sc,
					    "cpus 2\nbalance_load pelt\n"
					    "task / duty run=1ms sleep=1ms "
					    "phase=100ms\n",
					    &err),
		   ==, 0);
	ASSERT_INT(cfsbw_sim_create(&sc, &s, &err), ==, 0);
	s->now = 100 * CFSBW_NSEC_PER_MSEC;
	ASSERT_UINT(cfsbw_sim__pelt_task_load(s, &s->tasks[0], NICE_0_LOAD),
		    ==, (uint64_t)NICE_0_LOAD << SIM_PELT_SHIFT);
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
}

TEST_MAIN(TEST_ENTRY(latency_percentiles_are_the_sorted_ranks)
	  TEST_ENTRY(requests_are_served_in_arrival_order)
	  TEST_ENTRY(requests_over_seconds_keep_their_times)
	  TEST_ENTRY(requests_arrive_the_same_whatever_the_limit)
	  TEST_ENTRY(eevdf_queue_matches_the_plain_sums)
	  TEST_ENTRY(a_pick_keeps_the_shared_part_of_the_running_path)
	  TEST_ENTRY(a_busy_domain_cuts_the_wake_up_search_short)
	  TEST_ENTRY(pelt_average_decays_by_half_every_32_periods))
