/*
 * test_core_limits.c - the core at the edges of its numbers (issue 16):
 * the largest runtime fired many periods late, debts from huge charges, a
 * clock near INT64_MAX.  cfsbw.h states what the core does there; each
 * test checks it, and each failed before the core saturated.
 */
#include "core_driver.h"
#include "harness.h"

#define MAX_QUOTA_US ((INT64_C(1) << 44) - 1)
#define DEBT_FLOOR_NS (-CFSBW_DEBT_MAX_NS)

/*
 * hardlimits: an account with the largest runtime (2^44-1 us), throttled,
 * whose refresh comes 600 periods late: 600 runtimes of decay clear all
 * it used (the product, 1.06e19 ns, does not fit in 64 bits).
 */
TEST(hardlimits_late_refresh_of_largest_runtime, "hardlimits R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = drv_group(&d, "/g", MAX_QUOTA_US, 1000000);
	int64_t runtime = MAX_QUOTA_US * CFSBW_NSEC_PER_USEC;
	drv_enqueue(&d, g, 0);
	ASSERT_TRUE(drv_charge(&d, g, 0, runtime + 1));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	int64_t expiry = drv_of(g)->period_expiry;
	ASSERT_INT(expiry, ==, CFSBW_NSEC_PER_SEC);

	int64_t late = expiry + 599 * CFSBW_NSEC_PER_SEC;
	ASSERT_INT(cfsbw_period_timer_fire(g, late), ==,
		   late + CFSBW_NSEC_PER_SEC);
	ASSERT_INT(drv_stat_field(g, "nr_periods"), ==, 600);
	ASSERT_FALSE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, runtime);
	drv_fini(&d);
}

/*
 * R13: a throttled account that keeps being charged owes what it ran, but
 * the debt saturates at 2^62 ns (cfsbw.h): three charges of 2^62 ns do not
 * wrap it into credit, and a refresh leaves it throttled.
 */
TEST(debt_saturates_at_2_pow_62, "R13")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 1000, 100000);
	drv_enqueue(&d, g, 0);
	d.now = MS(2);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(2)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(1));
	for (int i = 0; i < 3; i++)
		ASSERT_TRUE(cfsbw_charge(g, 0, INT64_C(1) << 62, d.now));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, DEBT_FLOOR_NS);
	ASSERT_INT(cfsbw_runtime_left_ns(g, 0), ==, DEBT_FLOOR_NS);

	drv_advance(&d, MS(100));
	ASSERT_UINT(drv_of(g)->nr_fires, ==, 1);
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==,
		   DEBT_FLOOR_NS + MS(1));
	drv_fini(&d);
}

/*
 * A charge above CFSBW_CHARGE_MAX_NS counts as that much: on a hardlimits
 * account left 50 ms in debt, unthrottled, when the runqueue it borrowed
 * from went away, a charge of INT64_MAX ns throttles it instead of
 * wrapping the subtraction into credit.
 */
TEST(huge_charge_on_an_account_in_debt, "hardlimits R5 R13")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 1000000);
	drv_enqueue(&d, g, 0);
	drv_enqueue(&d, g, 1);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(150))); /* borrows 50 ms */
	cfsbw_rq_offline(d.tree, 1, d.now);          /* takes them back */
	ASSERT_FALSE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(50));
	ASSERT_TRUE(cfsbw_charge(g, 0, INT64_MAX, d.now));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), <, 0);
	drv_fini(&d);
}

/*
 * R13: saturating a debt never forgives any of it.  A hardlimits account
 * at the floor after huge charges has borrowed from another runqueue;
 * that runqueue goes away and takes back what it lent, which leaves the
 * account below the floor.  A further charge must not raise it to the
 * floor: that would give the group runtime outside a refresh (fuzz_files
 * found it, tests/fuzz/corpus/files/charge-below-debt-floor).
 */
TEST(charge_below_the_debt_floor_forgives_nothing, "hardlimits R13")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = drv_group(&d, "/g", 100000, 1000000);
	drv_enqueue(&d, g, 0);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(150))); /* borrows 50 ms */
	/* 2^62 ns more: at the floor, then borrows half of rq 1's 50 ms */
	ASSERT_TRUE(cfsbw_charge(g, 0, CFSBW_CHARGE_MAX_NS, d.now));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, DEBT_FLOOR_NS + MS(25));
	cfsbw_rq_offline(d.tree, 1, d.now); /* takes its 75 ms back */
	int64_t below = cfsbw_account_runtime_ns(g, 0);
	ASSERT_INT(below, ==, DEBT_FLOOR_NS - MS(50));
	ASSERT_TRUE(cfsbw_charge(g, 0, CFSBW_CHARGE_MAX_NS, d.now));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, below);
	ASSERT_TRUE(cfsbw_charge(g, 0, MS(1), d.now));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, below);
	drv_fini(&d);
}

/*
 * R12 near the end of the clock: throttled_time sums each runqueue's
 * throttled stretch, so three runqueues throttled from the start of the
 * clock to near INT64_MAX add up past 2^64 ns.  The sum saturates at
 * UINT64_MAX rather than wrap into a smaller number: cpu.stat never
 * decreases (fuzz_files found the wrap,
 * tests/fuzz/corpus/files/throttled-time-wraps).
 */
TEST(throttled_time_saturates_at_uint64_max, "R12")
{
	struct drv d;
	drv_init(&d, 3, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 1000, 100000);
	for (unsigned rq = 0; rq < 3; rq++) {
		drv_enqueue(&d, g, rq);
		ASSERT_TRUE(drv_charge(&d, g, rq, MS(2)));
	}
	d.now = INT64_MAX - MS(1);
	/* R4: a write unthrottles every account at once. */
	ASSERT_INT(cfsbw_file_write(g, "cpu.cfs_quota_us", "2000", d.now), ==, 0);
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.throttled_time, ==, UINT64_MAX);
	drv_fini(&d);
}

/*
 * R10 near the end of time: a period timer started 10 ms before INT64_MAX
 * is asked for at INT64_MAX (the expiry saturates, cfsbw.h), and its fire
 * there asks for INT64_MAX again, never for a time in the past.
 */
TEST(period_timer_near_int64_max, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 50000, 100000);
	d.now = INT64_MAX - MS(10);
	drv_enqueue(&d, g, 0);
	ASSERT_INT(drv_of(g)->period_expiry, ==, INT64_MAX);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(5)));
	ASSERT_INT(cfsbw_period_timer_fire(g, INT64_MAX), ==, INT64_MAX);
	ASSERT_INT(drv_stat_field(g, "nr_periods"), ==, 1);
	drv_fini(&d);
}

/*
 * R10: a stopped timer restarted near INT64_MAX keeps its grid as far as
 * it can: the next grid point is past INT64_MAX, so it is asked for at
 * INT64_MAX.
 */
TEST(period_timer_restart_near_int64_max, "R10")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 50000, 100000);
	drv_enqueue(&d, g, 0);
	drv_dequeue(&d, g, 0);
	drv_advance(&d, MS(100)); /* idle: the timer stops */
	ASSERT_INT(drv_of(g)->period_expiry, ==, -1);
	d.now = INT64_MAX - MS(1);
	drv_enqueue(&d, g, 0);
	ASSERT_INT(drv_of(g)->period_expiry, ==, INT64_MAX);
	drv_fini(&d);
}

TEST_MAIN(TEST_ENTRY(hardlimits_late_refresh_of_largest_runtime)
	  TEST_ENTRY(debt_saturates_at_2_pow_62)
	  TEST_ENTRY(huge_charge_on_an_account_in_debt)
	  TEST_ENTRY(charge_below_the_debt_floor_forgives_nothing)
	  TEST_ENTRY(throttled_time_saturates_at_uint64_max)
	  TEST_ENTRY(period_timer_near_int64_max)
	  TEST_ENTRY(period_timer_restart_near_int64_max))
