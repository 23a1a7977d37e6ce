/*
 * test_core_accounting.c - defaults (R1), charging (R5), slices (R6) and
 * throttling (R7), with hand-worked numbers, through the public API.
 */
#include <errno.h>

#include "core_driver.h"
#include "harness.h"

TEST(defaults_v4, "R1")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 0, 0);
	ASSERT_INT(cfsbw_tree_slice_ns(d.tree), ==, MS(10));
	ASSERT_INT(cfsbw_group_period_ns(g), ==, MS(500));
	ASSERT_INT(cfsbw_group_quota_ns(g), ==, CFSBW_RUNTIME_INF);
	ASSERT_INT(cfsbw_group_quota_ns(cfsbw_tree_root(d.tree)), ==,
		   CFSBW_RUNTIME_INF);
	ASSERT_UINT(cfsbw_group_shares(g), ==, 1024);
	char buf[64];
	ASSERT_INT(cfsbw_file_read(g, "cpu.cfs_period_us", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "500000\n");
	ASSERT_INT(cfsbw_file_read(g, "cpu.cfs_quota_us", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "-1\n");
	ASSERT_INT(cfsbw_sysctl_read(d.tree, "sched_cfs_bandwidth_slice_us",
				     buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "10000\n");
	/* Unlimited accounts hold "infinite" runtime and never throttle. */
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, CFSBW_RUNTIME_INF);
	drv_fini(&d);
}

TEST(defaults_upstream, "R1")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/g", 0, 0);
	ASSERT_INT(cfsbw_tree_slice_ns(d.tree), ==, MS(5));
	ASSERT_INT(cfsbw_group_period_ns(g), ==, MS(100));
	ASSERT_INT(cfsbw_group_quota_ns(g), ==, CFSBW_RUNTIME_INF);
	ASSERT_INT(cfsbw_group_burst_ns(g), ==, 0);
	drv_fini(&d);
}

/*
 * R6: each time the account reaches <= 0 it takes min(slice, pool) from the
 * pool (v4: one slice, not "refill up to a slice").  quota 25 ms, slice
 * 10 ms:
 *   charge 4  -> -4, takes 10 -> 6,  pool 15
 *   charge 7  -> -1, takes 10 -> 9,  pool 5
 *   charge 3  ->  6 (no request: runtime still > 0), pool 5
 *   charge 7  -> -1, takes min(10, 5) = 5 -> 4, pool 0
 * and the charge that leaves it at 0 with the pool empty throttles (R7).
 */
TEST(slice_request_min_slice_pool, "R6")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 25000, 0);
	drv_enqueue(&d, g, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(25));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);

	d.now = MS(4);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(4)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(6));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(15));

	d.now = MS(11);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(7)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(9));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(5));

	d.now = MS(14);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(3)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(6));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(5));

	d.now = MS(21);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(7)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(4));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, NULL, DRV_ANY_RQ), ==, 0);

	d.now = MS(25);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(4)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	drv_fini(&d);
}

/* R6: the slice is the sysctl's value, read at each request. */
TEST(slice_follows_sysctl, "R6")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	ASSERT_INT(cfsbw_sysctl_write(d.tree, "sched_cfs_bandwidth_slice_us",
				      "3000\n"), ==, 0);
	ASSERT_INT(cfsbw_tree_slice_ns(d.tree), ==, MS(3));
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 0);
	drv_enqueue(&d, g, 0);
	d.now = MS(1);
	drv_charge(&d, g, 0, MS(1));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(2));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(97));
	ASSERT_INT(cfsbw_sysctl_write(d.tree, "sched_cfs_bandwidth_slice_us",
				      "0"), ==, -EINVAL);
	ASSERT_INT(cfsbw_tree_slice_ns(d.tree), ==, MS(3));
	drv_fini(&d);
}

/* R6: while runtime_remaining stays > 0 the pool is not touched. */
TEST(no_request_while_positive, "R6")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 0);
	drv_enqueue(&d, g, 0);
	d.now = US(1);
	drv_charge(&d, g, 0, US(1));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(90));
	for (int i = 0; i < 9; i++) {
		d.now += US(1000);
		ASSERT_FALSE(drv_charge(&d, g, 0, US(1000)));
	}
	/* 10 ms - 1 us - 9 ms = 999 us left, still from the first slice. */
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, US(999));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(90));
	drv_fini(&d);
}

/*
 * R7 worked example: quota 100 ms / period 500 ms, slice 10 ms, one rq,
 * 4 ms ticks.  Ten slices take the pool to 0 at the 1st, 4th, 6th, ...
 * tick; the 25th tick (t = 100 ms) leaves the account at 0 with nothing to
 * take: throttle, and the charge says "stop".  Nothing throttles before.
 */
TEST(throttle_when_pool_empty, "R7")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 500000);
	drv_enqueue(&d, g, 0);
	for (int k = 1; k <= 24; k++) {
		d.now = MS(4) * k;
		ASSERT_FALSE(drv_charge(&d, g, 0, MS(4)));
		ASSERT_FALSE(cfsbw_throttled(g, 0));
	}
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(4));
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, NULL, DRV_ANY_RQ), ==, 0);
	d.now = MS(100);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(4)));
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, g, 0), ==, 1);
	ASSERT_UINT(d.nev, ==, 1);
	ASSERT_INT(d.ev[0].now, ==, MS(100));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_TRUE(cfsbw_throttled(g, 0));
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/* R7: an account that overruns (goes below 0) and finds an empty pool
 * throttles with its debt; the account on another rq is not affected. */
TEST(throttle_is_per_rq, "R7")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 10000, 0);
	drv_enqueue(&d, g, 0);
	drv_enqueue(&d, g, 1);
	d.now = MS(3);
	ASSERT_FALSE(drv_charge(&d, g, 1, MS(3))); /* rq1 takes all 10 ms */
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(7));
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(3))); /* rq0: -3, pool empty */
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(3));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_FALSE(cfsbw_account_throttled(g, 1));
	ASSERT_FALSE(cfsbw_throttled(g, 1));
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, g, 0), ==, 1);
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, g, 1), ==, 0);
	/* rq1 runs on with its local runtime. */
	d.now = MS(9);
	ASSERT_FALSE(drv_charge(&d, g, 1, MS(6)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(1));
	drv_fini(&d);
}

/*
 * R5: a charge goes to the group and every ancestor with a finite quota,
 * and skips unlimited ones.  /a (20 ms) / b (unlimited) / c (30 ms): a
 * charge of c takes a slice from c's and a's pools; b has no account.
 */
TEST(charge_goes_to_limited_ancestors, "R5")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *a = drv_group(&d, "/a", 20000, 0);
	struct cfsbw_group *b = drv_group(&d, "/a/b", -1, 0);
	struct cfsbw_group *c = drv_group(&d, "/a/b/c", 30000, 0);
	drv_enqueue(&d, c, 1);
	d.now = MS(2);
	ASSERT_FALSE(drv_charge(&d, c, 1, MS(2)));
	ASSERT_INT(cfsbw_account_runtime_ns(c, 1), ==, MS(8));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(c), ==, MS(20));
	ASSERT_INT(cfsbw_account_runtime_ns(a, 1), ==, MS(8));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(a), ==, MS(10));
	ASSERT_INT(cfsbw_account_runtime_ns(b, 1), ==, CFSBW_RUNTIME_INF);
	/* Nothing on rq 0. */
	ASSERT_INT(cfsbw_account_runtime_ns(c, 0), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(a, 0), ==, 0);
	/* A charge of the unlimited b draws from a only. */
	drv_enqueue(&d, b, 0);
	d.now = MS(3);
	ASSERT_FALSE(drv_charge(&d, b, 0, MS(1)));
	ASSERT_INT(cfsbw_account_runtime_ns(a, 0), ==, MS(9));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(a), ==, 0);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(c), ==, MS(20));
	drv_fini(&d);
}

/* R5: unlimited groups are never throttled, whatever they are charged. */
TEST(unlimited_never_throttles, "R5")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", -1, 0);
	drv_enqueue(&d, g, 0);
	for (int k = 1; k <= 1000; k++) {
		d.now = MS(4) * k;
		ASSERT_FALSE(drv_charge(&d, g, 0, MS(4)));
	}
	ASSERT_FALSE(cfsbw_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, CFSBW_RUNTIME_INF);
	ASSERT_UINT(d.nev_total, ==, 0);
	drv_fini(&d);
}

/* R7/R9: tasks that wake on a throttled account queue up behind it; they
 * do not count as runnable on the rq until it unthrottles. */
TEST(wakeup_under_throttled_account, "R7")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 5000, 0);
	drv_enqueue(&d, g, 0);
	drv_enqueue(&d, cfsbw_tree_root(d.tree), 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 2);
	d.now = MS(6);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(6)));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 1);
	drv_enqueue(&d, g, 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 1);
	ASSERT_UINT(cfsbw_group_h_nr_running(g, 0), ==, 2);
	ASSERT_TRUE(cfsbw_throttled(g, 0));
	drv_fini(&d);
}

/*
 * R5, R6: cfsbw_runtime_left_ns is the least runtime_remaining over the
 * limited groups on g's path: /a (quota 25 ms) above /a/b (unlimited)
 * above /a/b/c (quota 12 ms); v4, slice 10 ms.
 *   nothing limited on the path (/, /x)       -> INF
 *   c's first check: c takes 10, a takes 10   -> min(10, 10) = 10
 *   c runs 4                                  -> min(6, 6) = 6
 *   a task of /a runs 5 (a only)              -> min(6, 1) = 1 for c, b
 *   c runs 3: a runs dry and takes 10 -> 8    -> min(3, 8) = 3
 *   c runs 5: c takes min(10, 2) = 2 -> 0     -> throttled, <= 0
 * and each answer is on its own runqueue only.
 */
TEST(runtime_left_is_least_on_the_path, "R5 R6")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *a = drv_group(&d, "/a", 25000, 0);
	struct cfsbw_group *b = drv_group(&d, "/a/b", -1, 0);
	struct cfsbw_group *c = drv_group(&d, "/a/b/c", 12000, 0);
	struct cfsbw_group *x = drv_group(&d, "/x", -1, 0);
	ASSERT_INT(cfsbw_runtime_left_ns(cfsbw_tree_root(d.tree), 0), ==,
		   CFSBW_RUNTIME_INF);
	ASSERT_INT(cfsbw_runtime_left_ns(x, 0), ==, CFSBW_RUNTIME_INF);
	/* Limited groups hold nothing until a charge asks. */
	ASSERT_INT(cfsbw_runtime_left_ns(c, 0), ==, 0);

	drv_enqueue(&d, c, 0);
	ASSERT_FALSE(drv_charge(&d, c, 0, 0));
	ASSERT_INT(cfsbw_runtime_left_ns(c, 0), ==, MS(10));
	ASSERT_INT(cfsbw_runtime_left_ns(b, 0), ==, MS(10));
	ASSERT_INT(cfsbw_runtime_left_ns(c, 1), ==, 0);
	ASSERT_FALSE(drv_charge(&d, c, 0, MS(4)));
	ASSERT_INT(cfsbw_runtime_left_ns(c, 0), ==, MS(6));

	drv_enqueue(&d, a, 0);
	ASSERT_FALSE(drv_charge(&d, a, 0, MS(5)));
	ASSERT_INT(cfsbw_runtime_left_ns(c, 0), ==, MS(1));
	ASSERT_INT(cfsbw_runtime_left_ns(b, 0), ==, MS(1));
	ASSERT_INT(cfsbw_runtime_left_ns(a, 0), ==, MS(1));

	ASSERT_FALSE(drv_charge(&d, c, 0, MS(3)));
	ASSERT_INT(cfsbw_account_runtime_ns(a, 0), ==, MS(8));
	ASSERT_INT(cfsbw_runtime_left_ns(c, 0), ==, MS(3));

	ASSERT_TRUE(drv_charge(&d, c, 0, MS(5)));
	ASSERT_TRUE(cfsbw_account_throttled(c, 0));
	ASSERT_INT(cfsbw_runtime_left_ns(c, 0), <=, 0);
	ASSERT_INT(cfsbw_runtime_left_ns(c, 0), ==, 0);
	ASSERT_INT(cfsbw_runtime_left_ns(a, 0), ==, MS(3));
	ASSERT_INT(cfsbw_runtime_left_ns(c, 1), ==, 0);
	drv_fini(&d);
}

TEST_MAIN(TEST_ENTRY(defaults_v4) TEST_ENTRY(defaults_upstream)
	  TEST_ENTRY(slice_request_min_slice_pool)
	  TEST_ENTRY(slice_follows_sysctl) TEST_ENTRY(no_request_while_positive)
	  TEST_ENTRY(throttle_when_pool_empty) TEST_ENTRY(throttle_is_per_rq)
	  TEST_ENTRY(charge_goes_to_limited_ancestors)
	  TEST_ENTRY(unlimited_never_throttles)
	  TEST_ENTRY(wakeup_under_throttled_account)
	  TEST_ENTRY(runtime_left_is_least_on_the_path))
