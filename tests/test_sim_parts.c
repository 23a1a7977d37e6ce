/*
 * test_sim_parts.c - the simulator's parts on their own, checked against
 * the plain way of computing the same thing: a line's latency percentiles
 * (found by selection) against a full sort; a requests task, against
 * the arithmetic of first come, first served and against the law of its
 * arrivals.
 */
#include <inttypes.h>

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
 * 4 bytes below it, in 8 in a list of their own from it: line_record),
 * and all but one far below the largest (a single outlier at the top):
 * p50, p99, p99.9, the maximum and the mean are those of the sorted
 * values, exactly.
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
		for (unsigned shape = 0; shape < 6; shape++) {
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

TEST_MAIN(TEST_ENTRY(latency_percentiles_are_the_sorted_ranks)
	  TEST_ENTRY(requests_are_served_in_arrival_order)
	  TEST_ENTRY(requests_over_seconds_keep_their_times)
	  TEST_ENTRY(requests_arrive_the_same_whatever_the_limit))
