/*
 * test_daemon_rates.c - seed 008's three examples and issue 15's two-level
 * hierarchy on real busy processes, typed as the seed types them (mkdir,
 * echo) on cfsbw daemon's mount.
 *
 * Rates are measured over windows that start and end on period boundaries
 * (the moment cpu.stat's nr_periods steps), so a throttled group's usage
 * over k periods is k quotas, not k quotas plus or minus one.  Tolerances
 * are stated where they are asserted, with the figures measured on this
 * 2-core VM, shared with other work (a window is retried up to 3 times when
 * the machine gave less than the limit: the limit is an upper bound).
 */
#include "harness.h"
#include "test_daemon_procs.h"

/*
 * Seed 008's three examples, typed as the seed types them (mkdir, echo the
 * quota, echo the period) on the mount, with a process of two busy threads
 * placed by echo PID > cgroup.procs.  A window of `periods` periods counts
 * when the group was throttled in each of them, that is when the machine
 * gave it at least its quota: then the usage per period is the quota
 * within 3% (the host's overrun, measured +0.2..1.5% here).  A window's
 * end may hold one throttle's overrun that the period after it repays
 * (R13): 13.3 ms once over 4 periods of /twenty's 100 ms (a fresh-clone CI
 * run of 2026-12-05, nothing else running; 97.8..102.6 ms a period in 6
 * runs after it), so /twenty counts 8 periods, where one such overrun is
 * under 2% of the quota.  On this 2-core VM, shared with
 * other work (load 10-20 at times), the 2-CPU limit and even the 1-CPU one
 * may not bind: the window is retried, 3 times in all; a limit that never
 * bound is still checked from above (never more than the quota + 3%), and the log
 * says so with the figures.
 */
static void seed_example(const char *group, const char *quota_us,
			 double quota_ms, int periods)
{
	struct dmn m;
	START(&m, NULL);
	ASSERT_INT(mkdir(dmn_path(&m, group, NULL), 0755), ==, 0);
	ASSERT_INT(dmn_write(&m, group, "cpu.cfs_quota_us", quota_us), ==, 0);
	ASSERT_INT(dmn_write(&m, group, "cpu.cfs_period_us", "500000\n"), ==, 0);
	pid_t pid = busy(60, 2);
	ASSERT_INT(write_pid(&m, group, pid), ==, 0);
	double per = 0, worst = 0, best_bound = -1;
	for (int attempt = 0; attempt < 3 && best_bound < quota_ms * 0.97;
	     attempt++) {
		int64_t thr = -1;
		per = usage_per_period_ms(&m, group, periods, &thr);
		printf("    %s: %.1f ms per 500 ms period (quota %.0f ms), "
		       "throttled in %lld of %d\n", group, per, quota_ms,
		       (long long)thr, periods);
		if (per < 0)
			break;
		if (per > worst)
			worst = per;
		if (thr >= periods && per > best_bound)
			best_bound = per;
	}
	stop_all();
	ASSERT_INT(dmn_stop(&m), ==, 0);
	dmn_clean(&m);
	ASSERT_TRUE(per >= 0);
	ASSERT_TRUE(worst <= quota_ms * 1.03);
	/* A window throttled in every period that falls short is retried
	 * too: its ends may cut a throttle's overrun, charged in the period
	 * before and paid back in the first one counted (13 ms short over 4
	 * periods of /twenty once, beside a 2-thread busy loop). */
	if (best_bound >= 0)
		ASSERT_TRUE(best_bound >= quota_ms * 0.97);
	else
		printf("    the machine never gave %s its quota: checked from "
		       "above only\n", group);
}

TEST(seed008_one_cpu, "seed 008 example 1, SPEC 5")
{
	SKIP_WITHOUT_FUSE();
	seed_example("/one", "500000\n", 500, 4);
}

TEST(seed008_two_cpus, "seed 008 example 2, SPEC 5")
{
	SKIP_WITHOUT_FUSE();
	seed_example("/two", "1000000\n", 1000, 4);
}

TEST(seed008_twenty_percent, "seed 008 example 3, SPEC 5")
{
	SKIP_WITHOUT_FUSE();
	seed_example("/twenty", "100000\n", 100, 8);
}

/*
 * The two-level hierarchy of issue 15: /tenant 1 CPU, /tenant/web 0.75,
 * /tenant/batch unlimited, two busy threads in each leaf.  The tenant gets
 * its CPU (R5, R11: both leaves charge it), web at most 0.75 of it.
 */
TEST(hierarchy_tenant_web_batch, "R5 R11, SPEC 8")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	ASSERT_INT(mkdir(dmn_path(&m, "/tenant", NULL), 0755), ==, 0);
	ASSERT_INT(mkdir(dmn_path(&m, "/tenant/web", NULL), 0755), ==, 0);
	ASSERT_INT(mkdir(dmn_path(&m, "/tenant/batch", NULL), 0755), ==, 0);
	ASSERT_INT(dmn_write(&m, "/tenant", "cpu.cfs_period_us", "100000"), ==, 0);
	ASSERT_INT(dmn_write(&m, "/tenant", "cpu.cfs_quota_us", "100000"), ==, 0);
	ASSERT_INT(dmn_write(&m, "/tenant/web", "cpu.cfs_period_us", "100000"),
		   ==, 0);
	ASSERT_INT(dmn_write(&m, "/tenant/web", "cpu.cfs_quota_us", "75000"), ==,
		   0);
	ASSERT_INT(write_pid(&m, "/tenant/web", busy(60, 2)), ==, 0);
	ASSERT_INT(write_pid(&m, "/tenant/batch", busy(60, 2)), ==, 0);
	/*
	 * A window over the bound is measured again, and so is one throttled
	 * in every period that falls short (as seed_example does): its ends
	 * may cut a throttle's overrun, charged in the period before and paid
	 * back in the first one counted (CI's sanitizer build once saw
	 * /tenant at 103.0 ms, 2026-12-05; CI's clang build at 97.0 ms,
	 * rounded, 2026-12-07).  The last window is checked from above, the
	 * best window throttled in every period from below.
	 */
	/* /web's window is not aligned to its own periods: +1 period's
	 * worth (7.5 ms over 10) of slack. */
	const double web_max = 75 * 1.03 + 7.5;
	double tenant = 0, web = 0, best = -1, best_web = 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		int64_t thr = -1;
		int64_t w0 = get_num(&m, "/tenant/web", "cpuacct.usage", NULL);
		tenant = usage_per_period_ms(&m, "/tenant", 10, &thr);
		int64_t w1 = get_num(&m, "/tenant/web", "cpuacct.usage", NULL);
		web = (double)(w1 - w0) / 1e6 / 10;
		printf("    per 100 ms: /tenant %.1f ms, /tenant/web %.1f ms, "
		       "/tenant/batch %.1f ms; /tenant throttled in %lld of 10\n",
		       tenant, web, tenant - web, (long long)thr);
		bool over = tenant > 103 || web > web_max;
		if (thr >= 10 && tenant > best) {
			best = tenant;
			best_web = web;
		}
		if (!over && best >= 97)
			break;
	}
	stop_all();
	ASSERT_INT(dmn_stop(&m), ==, 0);
	dmn_clean(&m);
	ASSERT_TRUE(tenant <= 103);
	ASSERT_TRUE(web <= web_max);
	if (best >= 0) {
		ASSERT_TRUE(best >= 97);
		ASSERT_TRUE(best - best_web >= 10); /* batch is not starved */
	} else {
		printf("    the machine never gave /tenant its CPU: checked "
		       "from above only\n");
	}
}

/* The one-letter state of every thread of pid: 't' if any is stopped. */

TEST_MAIN(TEST_ENTRY(seed008_one_cpu)
	  TEST_ENTRY(seed008_two_cpus)
	  TEST_ENTRY(seed008_twenty_percent)
	  TEST_ENTRY(hierarchy_tenant_web_batch))
