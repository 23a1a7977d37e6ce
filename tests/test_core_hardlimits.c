/*
 * test_core_hardlimits.c - the hardlimits policy (SPEC section 6, seeds
 * 009-011): runtime per runqueue each period, borrowing 1/n of the other
 * accounts' spare runtime before throttling, never more than a period,
 * and a runqueue that goes away takes back what it lent.
 */
#include <errno.h>

#include "core_driver.h"
#include "harness.h"

static struct cfsbw_group *hl_group(struct drv *d, const char *runtime_us,
				    const char *period_us)
{
	struct cfsbw_group *g = drv_group(d, "/g", 0, 0);
	if (drv_write(d, g, "cpu.cfs_period_us", period_us) ||
	    drv_write(d, g, "cpu.cfs_runtime_us", runtime_us))
		return NULL;
	return g;
}

TEST(hardlimits_files, "hardlimits")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = drv_group(&d, "/g", 0, 0);
	char buf[32];
	ASSERT_INT(cfsbw_file_read(g, "cpu.cfs_runtime_us", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "-1\n");
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_runtime_us", "100000"), ==, 0);
	ASSERT_INT(cfsbw_file_read(g, "cpu.cfs_runtime_us", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "100000\n");
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_runtime_us", "999"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_burst_us", "0"), ==, -ENOENT);
	/* Every account holds the whole runtime. */
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(100));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(100));
	drv_fini(&d);
}

/*
 * One rq (nothing to borrow), runtime 100 ms / 500 ms, 4 ms ticks: the
 * account reaches exactly 0 at 100 ms and runs on; the tick at 104 ms
 * exceeds the runtime: throttled.  The refresh at 500 ms gives the rq its
 * runtime again (less the 4 ms overrun) and unthrottles it.
 */
TEST(runtime_per_rq_each_period, "hardlimits")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = hl_group(&d, "100000", "500000");
	ASSERT_TRUE(g != NULL);
	drv_enqueue(&d, g, 0);
	for (int k = 1; k <= 25; k++) {
		d.now = MS(4) * k;
		ASSERT_FALSE(drv_charge(&d, g, 0, MS(4)));
	}
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	d.now = MS(104);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(4)));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(4));
	drv_advance(&d, MS(500));
	ASSERT_FALSE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(96));
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.nr_periods, ==, 1);
	ASSERT_UINT(st.nr_throttled, ==, 1);
	ASSERT_UINT(st.throttled_time, ==, MS(396));
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/*
 * Borrowing: 4 rqs, runtime 100 ms.  rq0 runs 104 ms: 4 ms over.  It
 * takes 1/4 of each other account's 100 ms spare (25 ms each) before it
 * would throttle: 75 ms held by rq0, 75 ms left on each of the others.
 */
TEST(borrow_one_nth_of_spare, "hardlimits")
{
	struct drv d;
	drv_init(&d, 4, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = hl_group(&d, "100000", "500000");
	ASSERT_TRUE(g != NULL);
	drv_enqueue(&d, g, 0);
	/* Using exactly its runtime is not exceeding it: no borrowing. */
	d.now = MS(100);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(100)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(100));
	d.now = MS(104);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(4)));
	ASSERT_FALSE(cfsbw_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(71));
	for (unsigned rq = 1; rq < 4; rq++)
		ASSERT_INT(cfsbw_account_runtime_ns(g, rq), ==, MS(75));
	ASSERT_UINT(d.nev_total, ==, 0);
	drv_fini(&d);
}

/*
 * Never more than a period: 2 rqs, runtime 400 ms of 500 ms.  rq0 runs
 * 404 ms; half of rq1's 400 ms spare would give it 600 ms: it takes only
 * 100 ms, up to the period.  Then 100 ms more exceeds the period: nothing
 * more may be borrowed, and it throttles though rq1 has 300 ms spare.
 */
TEST(borrow_never_beyond_period, "hardlimits")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = hl_group(&d, "400000", "500000");
	ASSERT_TRUE(g != NULL);
	drv_enqueue(&d, g, 0);
	d.now = MS(404);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(404)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(96));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(300));
	d.now = MS(499);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(100)));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(300));
	drv_fini(&d);
}

/* A runqueue that goes away first takes back what it lent: rq0 borrowed
 * 50 ms from rq1; rq1 goes offline and rq0 is back to its own 100 ms. */
TEST(offline_reclaims_lent_runtime, "hardlimits")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g = hl_group(&d, "100000", "500000");
	ASSERT_TRUE(g != NULL);
	drv_enqueue(&d, g, 0);
	d.now = MS(104);
	ASSERT_FALSE(drv_charge(&d, g, 0, MS(104)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, MS(46));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(50));
	cfsbw_rq_offline(d.tree, 1, d.now);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(4));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(100));
	drv_fini(&d);
}

TEST_MAIN(TEST_ENTRY(hardlimits_files) TEST_ENTRY(runtime_per_rq_each_period)
	  TEST_ENTRY(borrow_one_nth_of_spare)
	  TEST_ENTRY(borrow_never_beyond_period)
	  TEST_ENTRY(offline_reclaims_lent_runtime))
