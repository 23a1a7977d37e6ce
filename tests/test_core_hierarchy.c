/*
 * test_core_hierarchy.c - groups in a tree: independent settings (R3),
 * per-rq throttled state (R8), runnable counts (R9), effective throttling
 * (R11), runqueues going away, and the tree's own contract.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_driver.h"
#include "harness.h"

/*
 * R11: /p (10 ms) / c (100 ms).  Three 4 ms charges of c: c keeps 8 ms of
 * its second slice, p's pool is empty after its first slice and p's
 * account ends at -2 ms: p throttles, c cannot run (though c's own account
 * is fine), an unlimited sibling /p/u is throttled with it on that rq
 * only.  p's refresh lets c run again.
 */
TEST(child_blocked_by_parent, "R11")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *p = drv_group(&d, "/p", 10000, 0);
	struct cfsbw_group *c = drv_group(&d, "/p/c", 100000, 0);
	struct cfsbw_group *u = drv_group(&d, "/p/u", -1, 0);
	drv_enqueue(&d, c, 0);
	drv_enqueue(&d, u, 0);
	drv_enqueue(&d, u, 1);
	for (int k = 1; k <= 2; k++) {
		d.now = MS(4) * k;
		ASSERT_FALSE(drv_charge(&d, c, 0, MS(4)));
	}
	d.now = MS(12);
	ASSERT_TRUE(drv_charge(&d, c, 0, MS(4)));
	ASSERT_INT(cfsbw_account_runtime_ns(c, 0), ==, MS(8));
	ASSERT_INT(cfsbw_account_runtime_ns(p, 0), ==, -MS(2));
	ASSERT_FALSE(cfsbw_account_throttled(c, 0));
	ASSERT_TRUE(cfsbw_account_throttled(p, 0));
	ASSERT_TRUE(cfsbw_throttled(c, 0));
	ASSERT_TRUE(cfsbw_throttled(u, 0));
	ASSERT_FALSE(cfsbw_throttled(u, 1));
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, p, 0), ==, 1);
	ASSERT_UINT(drv_count(&d, DRV_THROTTLE, c, DRV_ANY_RQ), ==, 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 1), ==, 1);
	/* A charge on a path through the throttled p says "stop". */
	ASSERT_TRUE(drv_charge(&d, u, 0, 1));
	drv_clear(&d);

	d.now = MS(500);
	drv_fire_period(&d, p);
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, p, 0), ==, 1);
	ASSERT_FALSE(cfsbw_throttled(c, 0));
	ASSERT_FALSE(cfsbw_throttled(u, 0));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 2);
	drv_fire_period(&d, c);
	/* nr_throttled counts the group's own throttling only. */
	struct cfsbw_stats st;
	cfsbw_group_stats(c, &st);
	ASSERT_UINT(st.nr_throttled, ==, 0);
	ASSERT_UINT(st.throttled_time, ==, 0);
	cfsbw_group_stats(p, &st);
	ASSERT_UINT(st.nr_throttled, ==, 1);
	ASSERT_UINT(st.throttled_time, ==, MS(488));
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/*
 * R11: unthrottling a parent does not release a child throttled by
 * itself.  /p (20 ms) / c (5 ms) and /p/s (unlimited): c throttles on its
 * own quota, then s empties p's pool and p throttles.  p's refresh lets s
 * run, not c; c's refresh releases c.
 */
TEST(own_throttle_survives_parent_unthrottle, "R11")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *p = drv_group(&d, "/p", 20000, 0);
	struct cfsbw_group *c = drv_group(&d, "/p/c", 5000, 0);
	struct cfsbw_group *s = drv_group(&d, "/p/s", -1, 0);
	drv_enqueue(&d, c, 0);
	drv_enqueue(&d, s, 0);
	d.now = MS(6);
	ASSERT_TRUE(drv_charge(&d, c, 0, MS(6))); /* c: -6+5; p: -6+10 */
	ASSERT_TRUE(cfsbw_account_throttled(c, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(p, 0), ==, MS(4));
	d.now = MS(10);
	ASSERT_FALSE(drv_charge(&d, s, 0, MS(4))); /* p: 0 -> 10, pool 0 */
	d.now = MS(22);
	ASSERT_TRUE(drv_charge(&d, s, 0, MS(12))); /* p: -2 */
	ASSERT_TRUE(cfsbw_account_throttled(p, 0));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 0);

	d.now = MS(500);
	drv_fire_period(&d, p);
	ASSERT_FALSE(cfsbw_account_throttled(p, 0));
	ASSERT_FALSE(cfsbw_throttled(s, 0));
	ASSERT_TRUE(cfsbw_throttled(c, 0));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 1);
	drv_fire_period(&d, c);
	ASSERT_FALSE(cfsbw_throttled(c, 0));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 2);
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/* R11: a group created under a throttled parent starts throttled there. */
TEST(new_child_of_throttled_parent, "R11")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *p = drv_group(&d, "/p", 1000, 0);
	drv_enqueue(&d, p, 1);
	d.now = MS(1);
	ASSERT_TRUE(drv_charge(&d, p, 1, MS(1))); /* -1 + 1 = 0 */
	struct cfsbw_group *c = drv_group(&d, "/p/c", -1, 0);
	ASSERT_TRUE(cfsbw_throttled(c, 1));
	ASSERT_FALSE(cfsbw_throttled(c, 0));
	ASSERT_FALSE(cfsbw_account_throttled(c, 1));
	drv_enqueue(&d, c, 1);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 1), ==, 0);
	drv_advance(&d, MS(500));
	ASSERT_FALSE(cfsbw_throttled(c, 1));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 1), ==, 2);
	drv_fini(&d);
}

/*
 * R11 through groups without a limit, and R4 on the way: /a (1 ms) over
 * /a/b (unlimited) over /a/b/c (unlimited).  a throttles on rq 0: c,
 * two levels down with no limit between, is throttled there and not on
 * rq 1.  Then b gets a limit of its own and keeps c throttled while a
 * is; a made unlimited (R4: its throttled accounts run again at once)
 * lets c run, b being fine.
 */
TEST(throttled_through_unlimited_groups, "R11 R4")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *a = drv_group(&d, "/a", 1000, 0);
	struct cfsbw_group *b = drv_group(&d, "/a/b", -1, 0);
	struct cfsbw_group *c = drv_group(&d, "/a/b/c", -1, 0);
	drv_enqueue(&d, c, 0);
	drv_enqueue(&d, c, 1);
	d.now = MS(2);
	ASSERT_TRUE(drv_charge(&d, c, 0, MS(2))); /* a: -2 + 1 */
	ASSERT_TRUE(cfsbw_account_throttled(a, 0));
	ASSERT_FALSE(cfsbw_account_throttled(b, 0));
	ASSERT_FALSE(cfsbw_account_throttled(c, 0));
	ASSERT_TRUE(cfsbw_throttled(b, 0));
	ASSERT_TRUE(cfsbw_throttled(c, 0));
	ASSERT_FALSE(cfsbw_throttled(c, 1));
	ASSERT_FALSE(cfsbw_throttled(a, 1));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 0);

	ASSERT_INT(drv_write(&d, b, "cpu.cfs_quota_us", "50000"), ==, 0);
	ASSERT_FALSE(cfsbw_account_throttled(b, 0));
	ASSERT_TRUE(cfsbw_throttled(c, 0));
	ASSERT_TRUE(drv_charge(&d, c, 0, 0)); /* still a's to give */

	ASSERT_INT(drv_write(&d, a, "cpu.cfs_quota_us", "-1"), ==, 0);
	ASSERT_FALSE(cfsbw_account_throttled(a, 0));
	ASSERT_FALSE(cfsbw_throttled(b, 0));
	ASSERT_FALSE(cfsbw_throttled(c, 0));
	ASSERT_UINT(drv_count(&d, DRV_UNTHROTTLE, a, 0), ==, 1);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 1);
	ASSERT_FALSE(drv_charge(&d, c, 0, MS(1))); /* b's 50 ms now */
	ASSERT_UINT(d.nr_bad_events, ==, 0);
	drv_fini(&d);
}

/* R8: the throttled state the drivers' balancing and fair-share code read
 * is per rq: other rqs of the same groups are untouched. */
TEST(throttled_state_is_per_rq, "R8")
{
	struct drv d;
	drv_init(&d, 3, CFSBW_POLICY_V4);
	struct cfsbw_group *p = drv_group(&d, "/p", 10000, 0);
	struct cfsbw_group *c = drv_group(&d, "/p/c", -1, 0);
	for (unsigned rq = 0; rq < 3; rq++)
		drv_enqueue(&d, c, rq);
	d.now = MS(12);
	ASSERT_TRUE(drv_charge(&d, c, 2, MS(12)));
	for (unsigned rq = 0; rq < 2; rq++) {
		ASSERT_FALSE(cfsbw_throttled(c, rq));
		ASSERT_FALSE(cfsbw_throttled(p, rq));
		ASSERT_UINT(cfsbw_rq_nr_running(d.tree, rq), ==, 1);
	}
	ASSERT_TRUE(cfsbw_throttled(c, 2));
	ASSERT_TRUE(cfsbw_throttled(p, 2));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 2), ==, 0);
	drv_fini(&d);
}

/*
 * R9: the rq's count of runnable tasks leaves out tasks under a throttled
 * account, through nested throttling, wakeups and sleeps under a throttled
 * account, and puts them back at unthrottle.  Checked against the test's
 * own model at every step.
 */
TEST(nr_running_follows_throttling, "R9")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *root = cfsbw_tree_root(d.tree);
	struct cfsbw_group *p = drv_group(&d, "/p", 10000, 0);
	struct cfsbw_group *c = drv_group(&d, "/p/c", 5000, 0);
	struct cfsbw_group *u = drv_group(&d, "/p/u", -1, 0);
	drv_enqueue(&d, root, 0);
	drv_enqueue(&d, p, 0);
	drv_enqueue(&d, c, 0);
	drv_enqueue(&d, c, 0);
	drv_enqueue(&d, u, 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 5);
	ASSERT_UINT(cfsbw_group_h_nr_running(p, 0), ==, 4);
	ASSERT_UINT(cfsbw_group_h_nr_running(c, 0), ==, 2);

	d.now = MS(6); /* c: -6+5 = -1 throttles; p: -6+10 = 4 */
	ASSERT_TRUE(drv_charge(&d, c, 0, MS(6)));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 3);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, drv_model_nr_running(&d, 0));
	ASSERT_UINT(cfsbw_group_h_nr_running(c, 0), ==, 2);
	ASSERT_UINT(cfsbw_group_h_nr_running(p, 0), ==, 2);

	drv_enqueue(&d, c, 0); /* wakes behind the throttled c */
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 3);
	ASSERT_UINT(cfsbw_group_h_nr_running(c, 0), ==, 3);
	d.now = MS(12); /* p: 4 - 6 -> takes its last 0 ms: throttles */
	ASSERT_TRUE(drv_charge(&d, u, 0, MS(6)));
	ASSERT_TRUE(cfsbw_account_throttled(p, 0));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 1);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, drv_model_nr_running(&d, 0));
	drv_dequeue(&d, u, 0); /* sleeps under the throttled p */
	drv_dequeue(&d, c, 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 1);

	d.now = MS(500);
	drv_fire_period(&d, p); /* root + p's own task */
	ASSERT_FALSE(cfsbw_account_throttled(p, 0));
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 2);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, drv_model_nr_running(&d, 0));
	drv_fire_period(&d, c); /* and c's two */
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, 4);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 0), ==, drv_model_nr_running(&d, 0));
	ASSERT_UINT(cfsbw_group_h_nr_running(p, 0), ==, 3);
	ASSERT_UINT(cfsbw_group_h_nr_running(cfsbw_tree_root(d.tree), 0), ==, 4);
	drv_fini(&d);
}

/*
 * R3: each group's quota and period are set independently: a child may
 * ask for more than its parent, writes to one never change the other, and
 * the tightest limit on the path binds.
 */
TEST(settings_are_independent, "R3")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *p = drv_group(&d, "/p", 20000, 100000);
	struct cfsbw_group *c = drv_group(&d, "/p/c", 200000, 0);
	ASSERT_INT(cfsbw_group_quota_ns(c), ==, MS(200));
	ASSERT_INT(cfsbw_group_period_ns(c), ==, MS(500));
	ASSERT_INT(drv_write(&d, p, "cpu.cfs_quota_us", "30000"), ==, 0);
	ASSERT_INT(drv_write(&d, p, "cpu.cfs_period_us", "250000"), ==, 0);
	ASSERT_INT(cfsbw_group_quota_ns(c), ==, MS(200));
	ASSERT_INT(cfsbw_group_period_ns(c), ==, MS(500));
	ASSERT_INT(drv_write(&d, c, "cpu.cfs_quota_us", "-1"), ==, 0);
	ASSERT_INT(cfsbw_group_quota_ns(p), ==, MS(30));
	ASSERT_INT(cfsbw_group_period_ns(p), ==, MS(250));
	drv_fini(&d);
}

/* R3/R11: the tightest limit on the path binds: c (50 ms / 500 ms) under
 * p (20 ms / 500 ms) gets 20 ms a period on a busy rq; with the numbers
 * swapped it gets 20 ms too, now by its own quota. */
TEST(tightest_limit_binds, "R3")
{
	for (int swap = 0; swap < 2; swap++) {
		struct drv d;
		drv_init(&d, 1, CFSBW_POLICY_V4);
		struct cfsbw_group *p =
			drv_group(&d, "/p", swap ? 50000 : 20000, 0);
		struct cfsbw_group *c =
			drv_group(&d, "/p/c", swap ? 20000 : 50000, 0);
		drv_enqueue(&d, c, 0);
		drv_run_busy(&d, c, 1, MS(1), MS(500) * 8);
		/* 8 whole periods: 8 x 20 ms, within one 1 ms tick. */
		ASSERT_NEAR(drv_of(c)->consumed, MS(160), MS(1));
		struct cfsbw_stats sp, sc;
		cfsbw_group_stats(p, &sp);
		cfsbw_group_stats(c, &sc);
		ASSERT_UINT(swap ? sc.nr_throttled : sp.nr_throttled, ==, 7);
		ASSERT_UINT(swap ? sp.nr_throttled : sc.nr_throttled, ==, 0);
		drv_fini(&d);
	}
}

/* A runqueue that goes away returns its accounts' runtime to the pools,
 * unthrottles them (counting the time) and forgets its tasks (R9, R12). */
TEST(rq_offline_returns_and_forgets, "R9,R12")
{
	struct drv d;
	drv_init(&d, 2, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/g", 15000, 0);
	drv_enqueue(&d, g, 0);
	drv_enqueue(&d, g, 1);
	drv_enqueue(&d, g, 1);
	d.now = MS(4);
	drv_charge(&d, g, 1, MS(4)); /* rq1: 6 ms, pool 5 */
	d.now = MS(10);
	ASSERT_TRUE(drv_charge(&d, g, 0, MS(10))); /* rq0: -5, pool 0 */
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	drv_clear(&d);
	d.now = MS(20);
	cfsbw_rq_offline(d.tree, 1, d.now);
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, MS(6));
	ASSERT_UINT(cfsbw_group_h_nr_running(g, 1), ==, 0);
	ASSERT_UINT(cfsbw_rq_nr_running(d.tree, 1), ==, 0);
	ASSERT_UINT(d.nev, ==, 0);
	/* Whether the driver hears of it is the header's open detail: the
	 * rq is gone.  The account is unthrottled and its time counted. */
	cfsbw_rq_offline(d.tree, 0, d.now);
	ASSERT_FALSE(cfsbw_account_throttled(g, 0));
	ASSERT_FALSE(cfsbw_throttled(g, 0));
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	ASSERT_UINT(st.throttled_time, ==, MS(10));
	/* No task is left: a refresh stops the timer, a destroy succeeds. */
	drv_of(g)->tasks[0] = drv_of(g)->tasks[1] = 0;
	drv_advance(&d, MS(500));
	ASSERT_INT(drv_of(g)->period_expiry, ==, -1);
	ASSERT_INT(cfsbw_group_destroy(g), ==, 0);
	drv_fini(&d);
}

/* The tree's contract (cfsbw.h): paths, errors, order of children. */
TEST(tree_paths_and_errors, "R3")
{
	struct cfsbw_tree *t = NULL;
	struct cfsbw_tree_config bad_cfg = {.nr_rq = 0};
	ASSERT_INT(cfsbw_tree_create(&bad_cfg, &t), ==, -EINVAL);
	bad_cfg.nr_rq = CFSBW_MAX_RQ + 1;
	ASSERT_INT(cfsbw_tree_create(&bad_cfg, &t), ==, -EINVAL);
	bad_cfg.nr_rq = 1;
	bad_cfg.policy = CFSBW_POLICY_COUNT;
	ASSERT_INT(cfsbw_tree_create(&bad_cfg, &t), ==, -EINVAL);
	ASSERT_TRUE(t == NULL);

	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = NULL;
	ASSERT_INT(cfsbw_group_create(d.tree, "/a", &g), ==, 0);
	ASSERT_STR(cfsbw_group_path(g), "/a");
	ASSERT_UINT(cfsbw_group_depth(g), ==, 1);
	ASSERT_INT(cfsbw_group_create(d.tree, "/a", NULL), ==, -EEXIST);
	ASSERT_INT(cfsbw_group_create(d.tree, "/", NULL), ==, -EEXIST);
	ASSERT_INT(cfsbw_group_create(d.tree, "/x/y", NULL), ==, -ENOENT);
	static const char *const bad[] = {"", "a", "/a/", "//b", "/.",
					  "/..", "/a/..", "/a b", "/a\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ASSERT_INT(cfsbw_group_create(d.tree, bad[i], NULL), ==, -EINVAL);
	char name[80] = "/";
	memset(name + 1, 'n', 64);
	ASSERT_INT(cfsbw_group_create(d.tree, name, NULL), ==, 0);
	name[65] = 'n';
	ASSERT_INT(cfsbw_group_create(d.tree, name, NULL), ==, -EINVAL);
	ASSERT_INT(cfsbw_group_create(d.tree, "/a/b", NULL), ==, 0);
	ASSERT_INT(cfsbw_group_create(d.tree, "/a/c.d_e-1", NULL), ==, 0);
	struct cfsbw_group *b = cfsbw_group_find(d.tree, "/a/b");
	ASSERT_TRUE(b && cfsbw_group_parent(b) == g);
	ASSERT_TRUE(cfsbw_group_first_child(g) == b);
	ASSERT_STR(cfsbw_group_path(cfsbw_group_next_sibling(b)), "/a/c.d_e-1");
	ASSERT_TRUE(cfsbw_group_find(d.tree, "/a/zz") == NULL);
	ASSERT_TRUE(cfsbw_group_find(d.tree, "/") == cfsbw_tree_root(d.tree));
	/* Destroy: not the root, not with children, not with tasks. */
	ASSERT_INT(cfsbw_group_destroy(cfsbw_tree_root(d.tree)), ==, -EBUSY);
	ASSERT_INT(cfsbw_group_destroy(g), ==, -EBUSY);
	cfsbw_task_enqueue(b, 0, 0);
	ASSERT_INT(cfsbw_group_destroy(b), ==, -EBUSY);
	cfsbw_task_dequeue(b, 0, 0);
	ASSERT_INT(cfsbw_group_destroy(b), ==, 0);
	ASSERT_TRUE(cfsbw_group_find(d.tree, "/a/b") == NULL);
	ASSERT_STR(cfsbw_group_path(cfsbw_group_first_child(g)), "/a/c.d_e-1");
	drv_fini(&d);
}

/*
 * R3's paths among many siblings (names.c): 3000 groups under the root and
 * 3000 under one of them, with one name under two parents; each is found
 * by its path, every third destroyed in a scattered order is gone, the
 * others still found, and the children's order stays the creation order
 * (cgroupfs lists a directory in that order; the daemon's ls does too).
 */
#define MANY 3000

TEST(many_siblings_found_by_path, "R3")
{
	static struct cfsbw_group *top[MANY], *low[MANY];
	struct drv d;
	char path[64];
	drv_init(&d, 2, CFSBW_POLICY_V4);
	for (int i = 0; i < MANY; i++) {
		snprintf(path, sizeof path, "/n%d", i);
		ASSERT_INT(cfsbw_group_create(d.tree, path, &top[i]), ==, 0);
	}
	for (int i = 0; i < MANY; i++) {
		snprintf(path, sizeof path, "/n7/c%d", i);
		ASSERT_INT(cfsbw_group_create(d.tree, path, &low[i]), ==, 0);
	}
	/* one name under two parents: two groups */
	struct cfsbw_group *x1, *x2;
	ASSERT_INT(cfsbw_group_create(d.tree, "/n1/c5", &x1), ==, 0);
	ASSERT_INT(cfsbw_group_create(d.tree, "/n2/c5", &x2), ==, 0);
	ASSERT_TRUE(x1 != x2 && cfsbw_group_find(d.tree, "/n7/c5") == low[5]);
	ASSERT_TRUE(cfsbw_group_find(d.tree, "/n1/c5") == x1);
	ASSERT_INT(cfsbw_group_create(d.tree, "/n2/c5", NULL), ==, -EEXIST);
	ASSERT_INT(cfsbw_group_destroy(x1), ==, 0);
	ASSERT_INT(cfsbw_group_destroy(x2), ==, 0);
	/* every third of the low ones, in a scattered order */
	for (int k = 0; k < MANY; k++) {
		int i = (int)(((unsigned)k * 7919u) % MANY);
		if (i % 3 == 0)
			ASSERT_INT(cfsbw_group_destroy(low[i]), ==, 0);
	}
	for (int i = 0; i < MANY; i++) {
		snprintf(path, sizeof path, "/n%d", i);
		ASSERT_TRUE(cfsbw_group_find(d.tree, path) == top[i]);
		snprintf(path, sizeof path, "/n7/c%d", i);
		struct cfsbw_group *f = cfsbw_group_find(d.tree, path);
		ASSERT_TRUE(i % 3 == 0 ? f == NULL : f == low[i]);
	}
	int n = 0, last = -1;
	for (struct cfsbw_group *c = cfsbw_group_first_child(top[7]); c;
	     c = cfsbw_group_next_sibling(c)) {
		int i = atoi(cfsbw_group_path(c) + strlen("/n7/c"));
		ASSERT_INT(i, >, last);
		ASSERT_INT(i % 3, !=, 0);
		last = i;
		n++;
	}
	ASSERT_INT(n, ==, MANY - MANY / 3);
	/* a destroyed name can be created again, last in order */
	ASSERT_INT(cfsbw_group_create(d.tree, "/n7/c0", &low[0]), ==, 0);
	struct cfsbw_group *c = cfsbw_group_first_child(top[7]);
	while (cfsbw_group_next_sibling(c))
		c = cfsbw_group_next_sibling(c);
	ASSERT_TRUE(c == low[0]);
	ASSERT_TRUE(cfsbw_group_find(d.tree, "/n7/c0") == low[0]);
	drv_fini(&d);
}

/*
 * R10 with R11: /p (200 ms per 100 ms, never short) over /p/c (10 ms per
 * 100 ms).  c throttles at 12 ms; its task vanishes from p's counts, so
 * at 100 ms p's refresh finds no runnable task and stops p's timer.  c's
 * refresh at the same instant unthrottles c: its task is runnable under p
 * again, which must start p's timer at once (for 200 ms, on its grid), not
 * only when p next asks its pool for a slice.
 */
TEST(child_unthrottle_restarts_parent_timer, "R10 R11")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *p = drv_group(&d, "/p", 200000, 100000);
	struct cfsbw_group *c = drv_group(&d, "/p/c", 10000, 100000);
	drv_enqueue(&d, c, 0);
	ASSERT_UINT(drv_of(p)->nr_period_starts, ==, 1);
	for (int k = 1; k <= 3; k++) {
		d.now = MS(4) * k;
		drv_charge(&d, c, 0, MS(4));
	}
	ASSERT_TRUE(cfsbw_account_throttled(c, 0));
	ASSERT_UINT(cfsbw_group_h_nr_running(p, 0), ==, 0);
	drv_advance(&d, MS(100));
	ASSERT_FALSE(cfsbw_throttled(c, 0));
	ASSERT_UINT(cfsbw_group_h_nr_running(p, 0), ==, 1);
	ASSERT_UINT(drv_of(p)->nr_period_starts, ==, 2);
	ASSERT_INT(drv_of(p)->period_expiry, ==, MS(200));
	drv_advance(&d, MS(200));
	ASSERT_INT(drv_stat_field(p, "nr_periods"), ==, 2);
	drv_fini(&d);
}

TEST_MAIN(TEST_ENTRY(child_blocked_by_parent)
	  TEST_ENTRY(own_throttle_survives_parent_unthrottle)
	  TEST_ENTRY(new_child_of_throttled_parent)
	  TEST_ENTRY(throttled_through_unlimited_groups)
	  TEST_ENTRY(throttled_state_is_per_rq)
	  TEST_ENTRY(nr_running_follows_throttling)
	  TEST_ENTRY(settings_are_independent) TEST_ENTRY(tightest_limit_binds)
	  TEST_ENTRY(rq_offline_returns_and_forgets)
	  TEST_ENTRY(tree_paths_and_errors)
	  TEST_ENTRY(many_siblings_found_by_path)
	  TEST_ENTRY(child_unthrottle_restarts_parent_timer))
