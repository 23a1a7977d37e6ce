/*
 * test_core_examples.c - the seeds' three examples (SPEC section 5, seed
 * 008) driven through the core with a scripted clock: period 500 ms,
 * quota 500 ms / 1000 ms / 100 ms, on 1, 2 and 64 runqueues, each with a
 * busy task charged every 4 ms tick (HZ 250; and 1 ms, HZ 1000) for 10
 * simulated seconds; and the upstream policy at half a CPU.
 */
#include "core_driver.h"
#include "harness.h"

#define RUN_END MS(10000)

static const unsigned example_rqs[] = {1, 2, 64};

struct example {
	enum cfsbw_policy policy;
	int64_t period, quota, tick;
	unsigned nr_rq;
};

/*
 * Runs one example and checks it.
 *  - Rate: the runtime the pool hands out, quota minus what is left just
 *    before each refresh, is min(quota / period, nr_rq) CPUs within 0.5%.
 *  - Consumed CPU (R13): at most what was handed out plus one tick per rq,
 *    at least that minus one slice per rq (runtime still held).  On 1 and
 *    2 rqs that is within 0.5% of the rate; on 64 rqs the accounts' debt
 *    and leftovers (up to 64 x 14 ms) take more than 10 s to average out.
 *  - Statistics: nr_periods counts the 20 refreshes; a saturated group
 *    (quota below nr_rq x period) throttles in every one of them, an
 *    unsaturated one in none; throttled_time is exactly the rq time that
 *    was neither run nor still throttled at the end (every rq is always
 *    either running or throttled).
 */
static void check_example(struct drv *dp, struct cfsbw_group *g,
			  const struct example *ex, int64_t handed)
{
	const int64_t quota = ex->quota, period = ex->period, tick = ex->tick;
	const unsigned nr_rq = ex->nr_rq;
	struct drv_group *dg = drv_of(g);
	int64_t consumed = dg->consumed;
	double want = (double)quota / (double)period;
	if (want > nr_rq)
		want = nr_rq;
	double handed_cpus = (double)handed / (double)RUN_END;
	ASSERT_NEAR(handed_cpus, want, want * 0.005);
	ASSERT_INT(consumed, <=, handed + (int64_t)nr_rq * tick);
	ASSERT_INT(consumed, >=, handed - (int64_t)nr_rq * MS(10));
	if (nr_rq <= 2)
		ASSERT_NEAR((double)consumed / (double)RUN_END, want, want * 0.005);

	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, RUN_END / period);
	ASSERT_UINT(st.nr_periods, ==, dg->nr_fires);
	if (quota < period * nr_rq)
		ASSERT_UINT(st.nr_throttled, ==, st.nr_periods);
	else if (quota > period * nr_rq)
		ASSERT_UINT(st.nr_throttled, ==, 0);

	int64_t open = 0;
	for (unsigned rq = 0; rq < nr_rq; rq++)
		if (dg->throttled_since[rq] >= 0)
			open += dp->now - dg->throttled_since[rq];
	int64_t rq_time = (int64_t)nr_rq * RUN_END;
	ASSERT_INT((int64_t)st.throttled_time, ==, rq_time - consumed - open);
	ASSERT_UINT(st.throttled_time, ==, dg->throttled_time);
	ASSERT_UINT(dp->nr_bad_events, ==, 0);
	ASSERT_UINT(dg->nr_double_starts, ==, 0);
}

static void run_example(const struct example *ex)
{
	struct drv d;
	drv_init(&d, ex->nr_rq, ex->policy);
	struct cfsbw_group *g =
		drv_group(&d, "/g", ex->quota / CFSBW_NSEC_PER_USEC,
			  ex->period / CFSBW_NSEC_PER_USEC);
	for (unsigned rq = 0; rq < ex->nr_rq; rq++)
		drv_enqueue(&d, g, rq);
	int64_t handed = 0;
	for (int64_t end = ex->period; end <= RUN_END; end += ex->period) {
		/* Every tick up to the period's end, then its refresh. */
		drv_run_busy(&d, g, ex->nr_rq, ex->tick, end);
		handed += ex->quota - cfsbw_group_pool_runtime_ns(g);
		drv_advance(&d, end);
	}
	check_example(&d, g, ex, handed);
	drv_fini(&d);
}

/* On 1, 2 and 64 rqs, at HZ 250 and HZ 1000. */
static void run_examples(enum cfsbw_policy policy, int64_t period,
			 int64_t quota)
{
	static const int64_t ticks[] = {MS(4), MS(1)};
	for (size_t t = 0; t < 2; t++) {
		for (size_t i = 0; i < sizeof example_rqs / sizeof example_rqs[0]; i++) {
			struct example ex = {policy, period, quota, ticks[t],
					     example_rqs[i]};
			run_example(&ex);
			if (test_failed) {
				fprintf(stderr, "    %s: quota %lld ms / %lld ms on %u rqs, tick %lld ms\n",
					cfsbw_policy_name(policy),
					(long long)(quota / CFSBW_NSEC_PER_MSEC),
					(long long)(period / CFSBW_NSEC_PER_MSEC),
					ex.nr_rq,
					(long long)(ex.tick / CFSBW_NSEC_PER_MSEC));
				return;
			}
		}
	}
}

/* Example 1: quota = period = 500 ms is 1.00 CPU. */
TEST(example_one_cpu, "R13")
{
	run_examples(CFSBW_POLICY_V4, MS(500), MS(500));
}

/* Example 2: quota 1000 ms per 500 ms is 2.00 CPUs (1.00 on one rq). */
TEST(example_two_cpus, "R13")
{
	run_examples(CFSBW_POLICY_V4, MS(500), MS(1000));
}

/* Example 3: quota 100 ms per 500 ms is 0.20 CPU. */
TEST(example_fifth_of_a_cpu, "R13")
{
	run_examples(CFSBW_POLICY_V4, MS(500), MS(100));
}

/* The same rates in the upstream policy: half a CPU, 50 ms per 100 ms. */
TEST(example_upstream_half_cpu, "upstream")
{
	run_examples(CFSBW_POLICY_UPSTREAM, MS(100), MS(50));
}

/*
 * Section 5: a group whose tasks use less than the quota is never
 * throttled.  Two rqs, each task runs one 4 ms tick in three (0.67 CPU)
 * under a 1.00 CPU limit, sleeping in between.
 */
TEST(under_quota_never_throttled, "R12")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 500000, 500000);
	const int64_t tick = MS(4);
	for (int64_t k = 1; k * tick <= RUN_END; k++) {
		drv_advance(&d, k * tick - tick);
		if (k % 3 != 0)
			continue;
		for (unsigned rq = 0; rq < 2; rq++)
			drv_enqueue(&d, g, rq);
		d.now = k * tick;
		for (unsigned rq = 0; rq < 2; rq++) {
			ASSERT_FALSE(drv_charge(&d, g, rq, tick));
			drv_dequeue(&d, g, rq);
		}
	}
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_throttled, ==, 0);
	ASSERT_UINT(st.throttled_time, ==, 0);
	ASSERT_UINT(st.nr_periods, >=, 19);
	ASSERT_UINT(d.nev_total, ==, 0);
	ASSERT_NEAR((double)drv_of(g)->consumed / (double)RUN_END, 2.0 / 3.0, 0.01);
	drv_fini(&d);
}

TEST_MAIN(TEST_ENTRY(example_one_cpu) TEST_ENTRY(example_two_cpus)
	  TEST_ENTRY(example_fifth_of_a_cpu)
	  TEST_ENTRY(example_upstream_half_cpu)
	  TEST_ENTRY(under_quota_never_throttled))
