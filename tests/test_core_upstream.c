/*
 * test_core_upstream.c - the upstream policy (SPEC section 6,
 * reference/linux-upstream.md section 3): slack return keeping 1 ms, the
 * 5 ms slack timer and its 7 ms / 2 ms windows, refresh giving
 * -runtime_remaining + 1, nr_throttled += overrun, burst.
 *
 * Where the amount a slice request takes differs between designs, the
 * tests read it back and check the rule's arithmetic on what they read.
 */
#include <errno.h>

#include "core_driver.h"
#include "harness.h"

/*
 * Three rqs, quota 20 ms, slice 5 ms.  rq0 and rq2 each take a slice;
 * rq1 takes one and then is charged exactly enough to empty the pool and
 * end 1 ms in debt: throttled.  Returns the group.
 */
static struct cfsbw_group *slack_setup(struct drv *d, int64_t t0)
{
	struct cfsbw_group *g = drv_group(d, "/g", 20000, 0);
	for (unsigned rq = 0; rq < 3; rq++)
		drv_enqueue(d, g, rq);
	d->now = t0 + MS(1);
	for (unsigned rq = 0; rq < 3; rq++)
		drv_charge(d, g, rq, MS(1));
	int64_t pool = cfsbw_group_pool_runtime_ns(g);
	int64_t rr1 = cfsbw_account_runtime_ns(g, 1);
	d->now = t0 + MS(12);
	drv_charge(d, g, 1, rr1 + pool + MS(1));
	return g;
}

/*
 * Slack: an account that goes idle returns all but 1 ms; once the pool
 * holds more than a slice and something is throttled, a 5 ms slack timer
 * starts; at expiry it gives the throttled account -runtime + 1.
 */
TEST(slack_return_and_timer, "upstream")
{
	struct drv d;
	drv_init(&d, 3, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = slack_setup(&d, 0);
	struct drv_group *dg = drv_of(g);
	ASSERT_TRUE(cfsbw_account_throttled(g, 1));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, -MS(1));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_INT(dg->period_expiry, >=, MS(50)); /* the refresh is far */

	int64_t rr0 = cfsbw_account_runtime_ns(g, 0);
	ASSERT_INT(rr0, >, MS(1));
	ASSERT_INT(rr0, <=, MS(5));
	d.now = MS(13);
	drv_dequeue(&d, g, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(1));
	int64_t pool = cfsbw_group_pool_runtime_ns(g);
	ASSERT_INT(pool, ==, rr0 - MS(1));
	/* The pool does not hold more than a slice: no slack timer. */
	ASSERT_UINT(dg->nr_slack_starts, ==, 0);

	int64_t rr2 = cfsbw_account_runtime_ns(g, 2);
	d.now = MS(14);
	drv_dequeue(&d, g, 2);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 2), ==, MS(1));
	pool += rr2 - MS(1);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, pool);
	ASSERT_INT(pool, >, MS(5));
	ASSERT_UINT(dg->nr_slack_starts, ==, 1);
	ASSERT_INT(dg->slack_expiry, ==, MS(19));
	ASSERT_TRUE(cfsbw_account_throttled(g, 1));
	drv_clear(&d);

	drv_advance(&d, MS(19));
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, g, 1), ==, 1);
	ASSERT_INT(d.ev[0].now, ==, MS(19));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, 1);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, pool - MS(1) - 1);
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/*
 * upstream: a runqueue that goes away (a process that exited) gives back
 * all it held, and that return starts the slack timer as an idle
 * account's does, so the throttled account gets it 5 ms later rather than
 * at the refresh.
 */
TEST(offline_return_starts_slack_timer, "upstream")
{
	struct drv d;
	drv_init(&d, 3, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = slack_setup(&d, 0);
	struct drv_group *dg = drv_of(g);
	ASSERT_TRUE(cfsbw_account_throttled(g, 1));
	int64_t held = cfsbw_account_runtime_ns(g, 0) +
		       cfsbw_account_runtime_ns(g, 2);
	ASSERT_INT(held, >, MS(5));
	drv_clear(&d);
	cfsbw_rq_offline(d.tree, 0, MS(13));
	cfsbw_rq_offline(d.tree, 2, MS(13));
	/* cfsbw.h: the slack timer is the only callback rq_offline fires. */
	ASSERT_UINT(d.nev, ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, held);
	ASSERT_UINT(dg->nr_slack_starts, ==, 1);
	ASSERT_INT(dg->slack_expiry, ==, MS(18));
	drv_clear(&d);
	drv_advance(&d, MS(18));
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, g, 1), ==, 1);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, 1);
	drv_fini(&d);
}

/* Slack returns nothing when the account holds 1 ms or less. */
TEST(slack_keeps_min_runtime, "upstream")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/g", 20000, 0);
	drv_enqueue(&d, g, 0);
	d.now = MS(1);
	drv_charge(&d, g, 0, MS(1));
	int64_t rr = cfsbw_account_runtime_ns(g, 0);
	d.now = MS(1) + rr - US(500);
	drv_charge(&d, g, 0, rr - US(500)); /* leaves 500 us */
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, US(500));
	int64_t pool = cfsbw_group_pool_runtime_ns(g);
	drv_dequeue(&d, g, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, US(500));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, pool);
	drv_fini(&d);
}

/* Every account on the path that goes idle returns its slack: a task of
 * /p/c leaves rq 0, and both c's and p's accounts keep 1 ms. */
TEST(slack_returned_by_idle_ancestor, "upstream")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *p = drv_group(&d, "/p", 50000, 0);
	struct cfsbw_group *c = drv_group(&d, "/p/c", 20000, 0);
	drv_enqueue(&d, c, 0);
	d.now = MS(1);
	drv_charge(&d, c, 0, MS(1));
	int64_t rp = cfsbw_account_runtime_ns(p, 0);
	int64_t rc = cfsbw_account_runtime_ns(c, 0);
	ASSERT_INT(rp, >, MS(1));
	ASSERT_INT(rc, >, MS(1));
	int64_t pool_p = cfsbw_group_pool_runtime_ns(p);
	int64_t pool_c = cfsbw_group_pool_runtime_ns(c);
	drv_dequeue(&d, c, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(c, 0), ==, MS(1));
	ASSERT_INT(cfsbw_account_runtime_ns(p, 0), ==, MS(1));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(c), ==, pool_c + rc - MS(1));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(p), ==, pool_p + rp - MS(1));
	drv_fini(&d);
}

/* An ancestor that still has tasks on the rq keeps its runtime. */
TEST(slack_not_returned_by_busy_ancestor, "upstream")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *p = drv_group(&d, "/p", 50000, 0);
	struct cfsbw_group *c = drv_group(&d, "/p/c", 20000, 0);
	drv_enqueue(&d, c, 0);
	drv_enqueue(&d, p, 0);
	d.now = MS(1);
	drv_charge(&d, c, 0, MS(1));
	int64_t rp = cfsbw_account_runtime_ns(p, 0);
	drv_dequeue(&d, c, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(c, 0), ==, MS(1));
	ASSERT_INT(cfsbw_account_runtime_ns(p, 0), ==, rp);
	drv_fini(&d);
}

/* No slack timer within 7 ms (5 + 2) of the refresh. */
TEST(slack_not_started_near_refresh, "upstream")
{
	struct drv d;
	drv_init(&d, 3, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = slack_setup(&d, MS(80));
	struct drv_group *dg = drv_of(g);
	int64_t refresh = dg->period_expiry;
	ASSERT_INT(refresh, >, MS(93) + MS(1));
	d.now = refresh - MS(7) + US(1);
	drv_dequeue(&d, g, 0);
	drv_dequeue(&d, g, 2);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), >, MS(5));
	ASSERT_UINT(dg->nr_slack_starts, ==, 0);
	drv_fini(&d);
}

/* The slack handler does nothing when the refresh is less than 2 ms away
 * (a slack timer that fired late). */
TEST(slack_handler_skips_near_refresh, "upstream")
{
	struct drv d;
	drv_init(&d, 3, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = slack_setup(&d, MS(70));
	struct drv_group *dg = drv_of(g);
	int64_t refresh = dg->period_expiry;
	d.now = refresh - MS(8);
	drv_dequeue(&d, g, 0);
	drv_dequeue(&d, g, 2);
	ASSERT_UINT(dg->nr_slack_starts, ==, 1);
	int64_t pool = cfsbw_group_pool_runtime_ns(g);
	drv_clear(&d);
	d.now = refresh - MS(1);
	cfsbw_slack_timer_fire(g, d.now);
	ASSERT_UINT(d.nev, ==, 0);
	ASSERT_TRUE(cfsbw_account_throttled(g, 1));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, pool);
	drv_fini(&d);
}

/* v4 has no slack: an account that goes idle keeps its runtime. */
TEST(v4_keeps_runtime_when_idle, "R6")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 20000, 0);
	drv_enqueue(&d, g, 0);
	d.now = MS(1);
	drv_charge(&d, g, 0, MS(1));
	drv_dequeue(&d, g, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(9));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(10));
	ASSERT_UINT(drv_of(g)->nr_slack_starts, ==, 0);
	drv_fini(&d);
}

/*
 * Refresh: each throttled account receives -runtime_remaining + 1, in
 * throttle order, and the pool keeps the rest; nr_throttled counts the
 * overrun (here 3 periods late).
 */
TEST(refresh_gives_debt_plus_one, "upstream")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/g", 30000, 0);
	struct drv_group *dg = drv_of(g);
	drv_enqueue(&d, g, 0);
	drv_enqueue(&d, g, 1);
	/* Busy on both rqs, 1 ms ticks, until both are throttled. */
	for (int k = 1; k < 100; k++) {
		d.now = MS(k);
		for (unsigned rq = 0; rq < 2; rq++)
			if (!cfsbw_throttled(g, rq))
				drv_charge(&d, g, rq, MS(1));
	}
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_TRUE(cfsbw_account_throttled(g, 1));
	int64_t rr0 = cfsbw_account_runtime_ns(g, 0);
	int64_t rr1 = cfsbw_account_runtime_ns(g, 1);
	ASSERT_INT(rr0, <=, 0);
	ASSERT_INT(rr1, <=, 0);
	ASSERT_INT(dg->period_expiry, ==, MS(100));
	drv_clear(&d);
	d.now = MS(320); /* late by 2.2 periods: k = 3 */
	int64_t next = drv_fire_period(&d, g);
	ASSERT_INT(next, >, MS(320));
	ASSERT_INT(next, <=, MS(420));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 1);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, 1);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(30) + rr0 + rr1 - 2);
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, g, DRV_ANY_RQ), ==, 2);
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 3);
	ASSERT_UINT(st.nr_throttled, ==, 3);
	drv_fini(&d);
}

/*
 * Burst: quota 100 ms, burst 50 ms.  The write of the burst refills the
 * pool as a refresh does: min(100 + 100, 150) = 150 ms.  Period 1 uses
 * about 30 ms: the refill is min(left + quota, quota + burst) = 150 ms
 * again.  Period 2 drains
 * all 150 ms on two rqs: the refill is 100 ms and the 50 ms drawn above
 * quota count as one burst: nr_bursts 1, burst_time 50 ms.
 */
TEST(burst_accumulates_and_counts, "upstream")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 100000);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_burst_us", "50000"), ==, 0);
	ASSERT_INT(cfsbw_group_burst_ns(g), ==, MS(50));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(150));
	drv_enqueue(&d, g, 0);
	for (int k = 1; k <= 30; k++) {
		d.now = MS(k);
		drv_charge(&d, g, 0, MS(1));
	}
	int64_t left = cfsbw_group_pool_runtime_ns(g);
	ASSERT_INT(left, >=, MS(60));
	drv_advance(&d, MS(100));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(150));
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_bursts, ==, 0);

	drv_enqueue(&d, g, 1);
	for (int k = 101; k < 200; k++) {
		d.now = MS(k);
		for (unsigned rq = 0; rq < 2; rq++)
			if (!cfsbw_throttled(g, rq))
				drv_charge(&d, g, rq, MS(1));
	}
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_TRUE(cfsbw_account_throttled(g, 0) || cfsbw_account_throttled(g, 1));
	int64_t debt = 0;
	for (unsigned rq = 0; rq < 2; rq++)
		if (cfsbw_account_throttled(g, rq))
			debt += -cfsbw_account_runtime_ns(g, rq) + 1;
	drv_advance(&d, MS(200));
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_bursts, ==, 1);
	ASSERT_UINT(st.burst_time, ==, MS(50));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(100) - debt);
	ASSERT_INT(drv_stat_field(g, "nr_bursts"), ==, 1);
	ASSERT_INT(drv_stat_field(g, "burst_time"), ==, MS(50));
	drv_fini(&d);
}

/*
 * R4 in the upstream policy: a write of quota, period or burst refills the
 * pool as a refresh does, min(left + quota, quota + burst)
 * (tg_set_cfs_bandwidth calls __refill_cfs_bandwidth_runtime; SPEC
 * section 6, linux-upstream.md section 3), and counts a draw above the
 * quota since the last refill as a burst.  Quota 20 ms, period 100 ms:
 * writing a 20 ms burst after the quota starts the group with 40 ms, so
 * a 30 ms burst of CPU at once runs unthrottled (fidelity 14-burst: the
 * kernel's first 30 ms run does).  Without a burst a write gives exactly
 * a quota, as in v4; from unlimited, the pool starts empty.
 */
TEST(reconfig_refills_up_to_burst, "R4 upstream")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/g", 20000, 100000);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(20));
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_burst_us", "20000"), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(40));
	/* Already full: another write keeps quota + burst, no more. */
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_period_us", "100000"), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(40));

	/* 30 ms of CPU in the first period: never throttled. */
	drv_enqueue(&d, g, 0);
	for (int k = 1; k <= 30; k++) {
		d.now = MS(k);
		ASSERT_FALSE(drv_charge(&d, g, 0, MS(1)));
	}
	int64_t pool = cfsbw_group_pool_runtime_ns(g);
	int64_t held = cfsbw_account_runtime_ns(g, 0);
	ASSERT_INT(pool + held, ==, MS(10));

	/* A write in the middle of the period adds a quota to what is left
	 * in the pool (the account's runtime is reset, R4); the 10 ms drawn
	 * above the quota since the last refill count as a burst. */
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "20000"), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, pool + MS(20));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_bursts, ==, 1);
	ASSERT_UINT(st.burst_time, ==, MS(20) - pool);

	/* Without a burst: a full quota, never more. */
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_burst_us", "0"), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(20));
	/* From unlimited: a quota on an empty pool, burst or not. */
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "-1"), ==, 0);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "30000"), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(30));
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_burst_us", "5000"), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(35));
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/*
 * The period timer stops after one whole period with no draw from the
 * pool and nothing throttled, runnable tasks or not (linux-upstream.md:
 * "If idle and nothing is throttled, stop"); the next draw restarts it.
 */
TEST(timer_stops_after_idle_period, "upstream")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/g", 50000, 100000);
	struct drv_group *dg = drv_of(g);
	drv_enqueue(&d, g, 0);
	ASSERT_INT(dg->period_expiry, ==, MS(100));
	d.now = MS(10);
	drv_charge(&d, g, 0, MS(1)); /* a draw in the first period */
	drv_advance(&d, MS(100));
	ASSERT_INT(dg->period_expiry, ==, MS(200));
	drv_advance(&d, MS(200)); /* no draw since 100 ms */
	ASSERT_INT(dg->period_expiry, ==, -1);
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 2);
	/* A draw starts it again, within a period. */
	d.now = MS(250);
	int64_t rr = cfsbw_account_runtime_ns(g, 0);
	drv_charge(&d, g, 0, rr);
	ASSERT_UINT(dg->nr_period_starts, ==, 2);
	ASSERT_INT(dg->period_expiry, >, MS(250));
	ASSERT_INT(dg->period_expiry, <=, MS(350));
	ASSERT_UINT(dg->nr_double_starts, ==, 0);
	drv_fini(&d);
}

/* Without burst the pool never holds more than quota, however idle. */
TEST(no_burst_no_accumulation, "upstream")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 100000);
	drv_enqueue(&d, g, 0);
	for (int p = 0; p < 3; p++) {
		d.now = MS(100) * p + MS(1);
		drv_charge(&d, g, 0, MS(1));
		drv_advance(&d, MS(100) * (p + 1));
		ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(100));
	}
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_bursts, ==, 0);
	ASSERT_UINT(st.burst_time, ==, 0);
	drv_fini(&d);
}

TEST_MAIN(TEST_ENTRY(slack_return_and_timer) TEST_ENTRY(slack_keeps_min_runtime)
	  TEST_ENTRY(offline_return_starts_slack_timer)
	  TEST_ENTRY(slack_returned_by_idle_ancestor)
	  TEST_ENTRY(slack_not_returned_by_busy_ancestor)
	  TEST_ENTRY(slack_not_started_near_refresh)
	  TEST_ENTRY(slack_handler_skips_near_refresh)
	  TEST_ENTRY(v4_keeps_runtime_when_idle)
	  TEST_ENTRY(refresh_gives_debt_plus_one)
	  TEST_ENTRY(burst_accumulates_and_counts)
	  TEST_ENTRY(reconfig_refills_up_to_burst)
	  TEST_ENTRY(timer_stops_after_idle_period)
	  TEST_ENTRY(no_burst_no_accumulation))
