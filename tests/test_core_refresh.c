/*
 * test_core_refresh.c - the period timer and the refresh (R10),
 * reconfiguration (R4) and the statistics (R12) in the v4 policy, with
 * hand-worked numbers.
 */
#include <errno.h>

#include "core_driver.h"
#include "harness.h"

/* One rq, quota 100 ms / 500 ms, 4 ms ticks: throttled at 100 ms. */
static struct cfsbw_group *throttle_at_100ms(struct drv *d)
{
	struct cfsbw_group *g = drv_group(d, "/g", 100000, 500000);
	drv_enqueue(d, g, 0);
	for (int k = 1; k <= 25; k++) {
		d->now = MS(4) * k;
		drv_charge(d, g, 0, MS(4));
	}
	return g;
}

/*
 * R10/R12 worked example: the timer asked for at the first enqueue (t = 0)
 * expires at 500 ms; the refresh refills the pool to 100 ms, gives the
 * throttled account one slice (10 ms) and unthrottles it at 500 ms:
 * nr_periods 1, nr_throttled 1, throttled_time 500 - 100 = 400 ms.
 */
TEST(refresh_worked_example, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = throttle_at_100ms(&d);
	struct drv_group *dg = drv_of(g);
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_UINT(dg->nr_period_starts, ==, 1);
	ASSERT_INT(dg->period_expiry, ==, MS(500));
	drv_clear(&d);

	drv_advance(&d, MS(500));
	ASSERT_UINT(dg->nr_fires, ==, 1);
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, g, 0), ==, 1);
	ASSERT_INT(d.ev[0].now, ==, MS(500));
	ASSERT_FALSE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(10));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(90));
	/* The task is still runnable: the timer goes on, one period later. */
	ASSERT_INT(dg->period_expiry, ==, MS(1000));

	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 1);
	ASSERT_UINT(st.nr_throttled, ==, 1);
	ASSERT_UINT(st.throttled_time, ==, MS(400));
	char buf[256];
	ASSERT_INT(cfsbw_file_read(g, "cpu.stat", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "nr_periods 1\nnr_throttled 1\nthrottled_time 400000000\n");
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	ASSERT_UINT(dg->nr_double_starts, ==, 0);
	drv_fini(&d);
}

/*
 * R10: throttled accounts are served in the order they throttled, one
 * slice each while the pool lasts.  quota 20 ms, slice 10 ms, 4 rqs:
 * rq2 and rq0 take the two slices; then rq3 (t 8), rq1 (t 10), rq2 (t 12,
 * at 0) and rq0 (t 14, at -1 ms) throttle in that order.  The refresh at
 * 500 ms has 20 ms: rq3 and rq1 run again, rq2 and rq0 wait for 1000 ms.
 */
TEST(refresh_serves_in_throttle_order, "R10")
{
	struct drv d;
	drv_init(&d, 4, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 20000, 500000);
	for (unsigned rq = 0; rq < 4; rq++)
		drv_enqueue(&d, g, rq);
	d.now = MS(4);
	ASSERT_FALSE(drv_charge(&d, g, 2, MS(4)));
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(4)));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	d.now = MS(8);
	ASSERT_TRUE(drv_charge(&d, g, 3, MS(4)));
	d.now = MS(10);
	ASSERT_TRUE(drv_charge(&d, g, 1, MS(4)));
	d.now = MS(12);
	ASSERT_TRUE(drv_charge(&d, g, 2, MS(6)));
	d.now = MS(14);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(7)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(1));
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, g, DRV_ANY_RQ), ==, 4);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 0);
	drv_clear(&d);

	drv_advance(&d, MS(500));
	ASSERT_UINT(d.nev, ==, 2);
	ASSERT_TRUE(d.ev[0].kind == DRV_UNTHROTTLE && d.ev[0].rq == 3);
	ASSERT_TRUE(d.ev[1].kind == DRV_UNTHROTTLE && d.ev[1].rq == 1);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 3), ==, MS(6));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(6));
	ASSERT_TRUE(cfsbw_account_throttled(g, 2));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 3), ==, 1);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 2), ==, 0);
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 1);
	ASSERT_UINT(st.nr_throttled, ==, 1); /* one per refresh, not per rq */
	ASSERT_UINT(st.throttled_time, ==, MS(492) + MS(490));
	drv_clear(&d);

	drv_advance(&d, MS(1000));
	ASSERT_UINT(d.nev, ==, 2);
	ASSERT_TRUE(d.ev[0].kind == DRV_UNTHROTTLE && d.ev[0].rq == 2);
	ASSERT_TRUE(d.ev[1].kind == DRV_UNTHROTTLE && d.ev[1].rq == 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 2), ==, MS(10));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(9));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 2);
	ASSERT_UINT(st.nr_throttled, ==, 2);
	ASSERT_UINT(st.throttled_time, ==, MS(982) + MS(988) + MS(986));
	ASSERT_UINT(st.throttled_time, ==, drv_of(g)->throttled_time);
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/*
 * R10: an account is unthrottled only once its runtime is > 0: quota 1 ms
 * on an account 1 ms in debt (-2 + 1): the first refresh pays the debt
 * (0 left) and it stays throttled; the second gives it 1 ms.
 */
TEST(unthrottle_needs_positive_runtime, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 1000, 0);
	drv_enqueue(&d, g, 0);
	d.now = MS(2);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(2)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(1));
	drv_advance(&d, MS(500));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, g, 0), ==, 0);
	drv_advance(&d, MS(1000));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(1));
	ASSERT_FALSE(cfsbw_account_throttled(g, 0));
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 2);
	ASSERT_UINT(st.nr_throttled, ==, 2);
	ASSERT_UINT(st.throttled_time, ==, MS(998));
	drv_fini(&d);
}

/* R10: an expiry late by k periods counts k periods (and one throttled
 * refresh in v4); the pool is refilled to quota, not k times quota. */
TEST(late_expiry_counts_overrun, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = throttle_at_100ms(&d);
	d.now = MS(1750); /* expiry 500 ms, late by 2.5 periods: k = 3 */
	int64_t next = drv_fire_period(&d, g);
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 3);
	ASSERT_UINT(st.nr_throttled, ==, 1);
	ASSERT_UINT(st.throttled_time, ==, MS(1650));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(90));
	ASSERT_INT(next, >, MS(1750));
	ASSERT_INT(next, <=, MS(2250));
	drv_fini(&d);
}

/* R10: the timer starts at the first enqueue, once; it stops after a
 * refresh that finds no runnable task; the next enqueue starts it again. */
TEST(timer_start_and_stop, "R10")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 0);
	struct cfsbw_group *u = drv_group(&d, "/u", -1, 0);
	struct drv_group *dg = drv_of(g);
	ASSERT_UINT(dg->nr_period_starts, ==, 0);
	d.now = MS(3);
	drv_enqueue(&d, u, 0);
	ASSERT_UINT(drv_of(u)->nr_period_starts, ==, 0); /* unlimited */
	drv_enqueue(&d, g, 0);
	drv_enqueue(&d, g, 1);
	drv_enqueue(&d, g, 1);
	ASSERT_UINT(dg->nr_period_starts, ==, 1);
	ASSERT_INT(dg->period_expiry, >, MS(3));
	ASSERT_INT(dg->period_expiry, <=, MS(503));
	int64_t first = dg->period_expiry;
	d.now = MS(7);
	drv_charge(&d, g, 1, MS(4));
	drv_dequeue(&d, g, 0);
	drv_dequeue(&d, g, 1);
	/* A task left on rq 1: the refresh keeps the timer. */
	drv_advance(&d, first);
	ASSERT_INT(dg->period_expiry, ==, first + MS(500));
	drv_dequeue(&d, g, 1);
	drv_advance(&d, first + MS(500));
	ASSERT_INT(dg->period_expiry, ==, -1); /* stopped */
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 2);
	ASSERT_UINT(st.nr_throttled, ==, 0);
	/* Nothing fires while stopped; an enqueue starts it again. */
	drv_advance(&d, MS(5000));
	d.now = MS(5001);
	drv_enqueue(&d, g, 1);
	ASSERT_UINT(dg->nr_period_starts, ==, 2);
	ASSERT_INT(dg->period_expiry, >, MS(5001));
	ASSERT_INT(dg->period_expiry, <=, MS(5501));
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 2);
	ASSERT_UINT(dg->nr_double_starts, ==, 0);
	drv_fini(&d);
}

/* R10/R11: a task of an unlimited child is runnable in its limited
 * parent too: the parent's timer starts. */
TEST(timer_starts_for_limited_ancestor, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *p = drv_group(&d, "/p", 50000, 0);
	struct cfsbw_group *c = drv_group(&d, "/p/c", -1, 0);
	drv_enqueue(&d, c, 0);
	ASSERT_UINT(drv_of(p)->nr_period_starts, ==, 1);
	drv_fini(&d);
}

/*
 * R4: a quota write refills the pool, resets every account (v4: nothing
 * assigned) and unthrottles at once, counting the throttled time; the
 * statistics are kept.
 */
TEST(reconfig_resets_and_unthrottles, "R4")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 10000, 0);
	drv_enqueue(&d, g, 0);
	drv_enqueue(&d, g, 1);
	d.now = MS(4);
	drv_charge(&d, g, 1, MS(4)); /* rq1 holds 6 ms, pool 0 */
	d.now = MS(100);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(4)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(6));
	drv_advance(&d, MS(500));
	d.now = MS(600);
	ASSERT_TRUE(drv_charge(&d, g, 1, MS(30))); /* -24, pool had 0 */
	struct cfsbw_stats before;
	cfsbw_group_stats(g, &before);
	drv_clear(&d);

	d.now = MS(700);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "50000\n"), ==, 0);
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, g, 1), ==, 1);
	ASSERT_UINT(d.nev, ==, 1);
	ASSERT_FALSE(cfsbw_throttled(g, 1));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(50));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, 0);
	struct cfsbw_stats after;
	cfsbw_group_stats(g, &after);
	ASSERT_UINT(after.nr_periods, ==, before.nr_periods);
	ASSERT_UINT(after.nr_throttled, ==, before.nr_throttled);
	ASSERT_UINT(after.throttled_time, ==, before.throttled_time + MS(100));
	ASSERT_UINT(d.nr_bad_events, ==, 0);

	/* A period write does the same. */
	d.now = MS(710);
	drv_charge(&d, g, 0, MS(3));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(40));
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_period_us", "250000"), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(50));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	ASSERT_INT(cfsbw_group_period_ns(g), ==, MS(250));

	/* Unlimited: accounts hold infinite runtime. */
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "-1"), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, CFSBW_RUNTIME_INF);
	d.now = MS(2000);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(1000)));
	drv_fini(&d);
}

/* R4/R2: a rejected write changes nothing: the throttled account stays
 * throttled, the pool and accounts keep their values, no callback. */
TEST(rejected_write_changes_nothing, "R4")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = throttle_at_100ms(&d);
	drv_clear(&d);
	d.now = MS(200);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "999"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_period_us", "2000000"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "abc"), ==, -EINVAL);
	ASSERT_UINT(d.nev, ==, 0);
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	ASSERT_INT(cfsbw_group_quota_ns(g), ==, MS(100));
	drv_fini(&d);
}

/* R12: throttled_time sums over accounts, so it can exceed wall time; the
 * statistics never go backwards across refreshes and writes. */
TEST(stats_sum_over_rqs, "R12")
{
	struct drv d;
	drv_init(&d, 4, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 1000, 0); /* 1 ms */
	for (unsigned rq = 0; rq < 4; rq++)
		drv_enqueue(&d, g, rq);
	d.now = MS(1);
	for (unsigned rq = 0; rq < 4; rq++)
		ASSERT_TRUE(drv_charge(&d, g, rq, MS(1)));
	/* Each refresh has 1 ms for four accounts in debt: they take turns. */
	struct cfsbw_stats prev = {0}, st;
	for (int p = 1; p <= 6; p++) {
		drv_advance(&d, MS(500) * p);
		cfsbw_group_stats(g, &st);
		ASSERT_UINT(st.nr_periods, ==, (unsigned)p);
		ASSERT_UINT(st.nr_throttled, ==, (unsigned)p);
		ASSERT_UINT(st.throttled_time, >=, prev.throttled_time);
		ASSERT_UINT(st.throttled_time, ==, drv_of(g)->throttled_time);
		prev = st;
		/* The unthrottled rq runs its 1 ms and throttles again. */
		d.now = MS(500) * p + MS(1);
		for (unsigned rq = 0; rq < 4; rq++)
			if (!cfsbw_throttled(g, rq))
				ASSERT_TRUE(drv_charge(&d, g, rq, MS(1)));
	}
	/* Closed intervals after 3 s of 4 rqs: 499 + 1499 + 2499 ms. */
	ASSERT_UINT(st.throttled_time, >, MS(3000));
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "-1"), ==, 0);
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, prev.nr_periods);
	ASSERT_UINT(st.throttled_time, >=, prev.throttled_time);
	ASSERT_UINT(st.throttled_time, ==, drv_of(g)->throttled_time);
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/* R12: a group that never throttles has nr_throttled 0 and throttled
 * time 0, and cpu.stat rejects writes. */
TEST(stats_untouched_without_throttling, "R12")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 0);
	drv_enqueue(&d, g, 0);
	/* 50 ms of 100 ms per period, in 5 ms ticks. */
	for (int p = 0; p < 4; p++) {
		for (int k = 1; k <= 10; k++) {
			d.now = MS(500) * p + MS(5) * k;
			ASSERT_FALSE(drv_charge(&d, g, 0, MS(5)));
		}
		drv_advance(&d, MS(500) * (p + 1));
	}
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 4);
	ASSERT_UINT(st.nr_throttled, ==, 0);
	ASSERT_UINT(st.throttled_time, ==, 0);
	ASSERT_INT(drv_write(&d, g, "cpu.stat", "0"), ==, -EINVAL);
	drv_fini(&d);
}

/*
 * R10, cfsbw_tree_align_periods: with periods aligned, a first start at
 * 123 ms expires on the grid of 100 ms periods (200 ms), not a period
 * later (223 ms); a second group started at 150 ms expires with it; a
 * group started before the call keeps its phase.
 */
TEST(aligned_periods_start_on_the_grid, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *before = drv_group(&d, "/before", 10000, 100000);
	d.now = MS(7);
	drv_enqueue(&d, before, 0);
	ASSERT_INT(drv_of(before)->period_expiry, ==, MS(107));
	cfsbw_tree_align_periods(d.tree, true);
	struct cfsbw_group *a = drv_group(&d, "/a", 10000, 100000);
	struct cfsbw_group *b = drv_group(&d, "/b", 10000, 100000);
	d.now = MS(123);
	drv_enqueue(&d, a, 0);
	d.now = MS(150);
	drv_enqueue(&d, b, 0);
	ASSERT_INT(drv_of(a)->period_expiry, ==, MS(200));
	ASSERT_INT(drv_of(b)->period_expiry, ==, MS(200));
	ASSERT_INT(drv_of(before)->period_expiry, ==, MS(107));
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/*
 * R10 as Linux since 6.4 (cfsbw_group_set_period_phase): a group whose
 * grid is 30 ms + k * 100 ms, started at 123 ms, first expires at 130 ms
 * (a first period of 7 ms), then every 100 ms; started at 10 ms, at its
 * phase, 30 ms, still ahead; a phase of 250 ms, more than a period
 * ahead of 123 ms, is kept (a first period of 127 ms, as Linux's timer
 * armed under a longer period), then every 100 ms; one already passed
 * (30 ms at 123) is the grid's next point; a negative phase is the
 * default, a whole period after the start; a timer that started before
 * keeps its grid.
 */
TEST(a_phase_puts_the_first_expiry_on_the_groups_grid, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *a = drv_group(&d, "/a", 10000, 100000);
	struct cfsbw_group *b = drv_group(&d, "/b", 10000, 100000);
	struct cfsbw_group *c = drv_group(&d, "/c", 10000, 100000);
	struct cfsbw_group *e = drv_group(&d, "/e", 10000, 100000);
	struct cfsbw_group *f = drv_group(&d, "/f", 10000, 100000);
	cfsbw_group_set_period_phase(a, MS(30));
	cfsbw_group_set_period_phase(b, MS(30));
	cfsbw_group_set_period_phase(c, MS(250));
	cfsbw_group_set_period_phase(e, -1);
	d.now = MS(10);
	drv_enqueue(&d, b, 0);
	drv_enqueue(&d, f, 0);
	cfsbw_group_set_period_phase(f, MS(30)); /* started: no effect */
	d.now = MS(123);
	drv_enqueue(&d, a, 0);
	drv_enqueue(&d, c, 0);
	drv_enqueue(&d, e, 0);
	ASSERT_INT(drv_of(a)->period_expiry, ==, MS(130));
	ASSERT_INT(drv_of(b)->period_expiry, ==, MS(30));
	ASSERT_INT(drv_of(c)->period_expiry, ==, MS(250));
	ASSERT_INT(drv_of(e)->period_expiry, ==, MS(223));
	ASSERT_INT(drv_of(f)->period_expiry, ==, MS(110));
	drv_advance(&d, MS(131));
	ASSERT_INT(drv_of(a)->period_expiry, ==, MS(230));
	struct cfsbw_stats st;
	cfsbw_group_stats(a, &st);
	ASSERT_UINT(st.nr_periods, ==, 1);
	drv_advance(&d, MS(251));
	ASSERT_INT(drv_of(c)->period_expiry, ==, MS(350));
	cfsbw_group_stats(c, &st);
	ASSERT_UINT(st.nr_periods, ==, 1);
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

TEST_MAIN(TEST_ENTRY(refresh_worked_example)
	  TEST_ENTRY(refresh_serves_in_throttle_order)
	  TEST_ENTRY(unthrottle_needs_positive_runtime)
	  TEST_ENTRY(late_expiry_counts_overrun)
	  TEST_ENTRY(timer_start_and_stop)
	  TEST_ENTRY(timer_starts_for_limited_ancestor)
	  TEST_ENTRY(reconfig_resets_and_unthrottles)
	  TEST_ENTRY(rejected_write_changes_nothing)
	  TEST_ENTRY(stats_sum_over_rqs)
	  TEST_ENTRY(stats_untouched_without_throttling)
	  TEST_ENTRY(aligned_periods_start_on_the_grid)
	  TEST_ENTRY(a_phase_puts_the_first_expiry_on_the_groups_grid))
