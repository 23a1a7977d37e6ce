/*
 * test_core_grow.c - a tree whose runqueue count grows while it runs
 * (cfsbw_tree_set_nr_rq), as the host driver's does when a command has more
 * live processes than runqueues: accounts move, and nothing may notice.
 */
#include <errno.h>

#include "cfsbw.h"
#include "harness.h"

#define MS(x) ((int64_t)(x) * CFSBW_NSEC_PER_MSEC)

static unsigned unthrottled[16];
static unsigned nr_unthrottled;
static int64_t expires = -1;

static void on_unthrottle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	(void)ctx;
	(void)g;
	if (nr_unthrottled < 16)
		unthrottled[nr_unthrottled++] = rq;
}

static void on_timer(void *ctx, struct cfsbw_group *g, int64_t at)
{
	(void)ctx;
	(void)g;
	expires = at;
}

static const struct cfsbw_ops ops = {.unthrottle = on_unthrottle,
				     .period_timer_start = on_timer};

/* Fails every allocation once armed: for the error paths of growth. */
static int fail_allocs;

static void *test_alloc(size_t size, size_t align, void *ctx)
{
	(void)ctx;
	if (fail_allocs)
		return NULL;
	size_t rounded = (size + align - 1) / align * align;
	void *p = aligned_alloc(align, rounded);
	if (p)
		memset(p, 0, rounded);
	return p;
}

static void test_free(void *p, void *ctx)
{
	(void)ctx;
	free(p);
}

static const struct cfsbw_allocator failing = {test_alloc, test_free, NULL};

static struct cfsbw_tree *tree_with(unsigned nr_rq, enum cfsbw_policy policy)
{
	struct cfsbw_tree_config cfg = {.nr_rq = nr_rq,
					.policy = policy,
					.ops = &ops,
					.allocator = &failing};
	struct cfsbw_tree *tree = NULL;
	nr_unthrottled = 0;
	expires = -1;
	fail_allocs = 0;
	if (cfsbw_tree_create(&cfg, &tree))
		return NULL;
	return tree;
}

/*
 * R7, R10: /g has 10 ms per 100 ms, slices of 5 ms.  rq 1 runs 4 ms (one
 * slice: 1 ms left, pool 5 ms), 2 ms (a second slice: 4 ms left, pool
 * empty), then 5 ms: 1 ms in debt, throttled at 11 ms.  rq 0 runs 1 ms on
 * nothing and throttles at 12 ms.  The tree grows from 2 to 200
 * runqueues; rq 150 throttles at 14 ms.  The refresh hands out two slices
 * in the order the accounts throttled, across the move: rq 1, rq 0; rq
 * 150 waits.
 */
TEST(growth_keeps_accounts_and_throttle_order, "R7 R10")
{
	struct cfsbw_tree *tree = tree_with(2, CFSBW_POLICY_V4);
	struct cfsbw_group *g;
	ASSERT_TRUE(tree != NULL);
	ASSERT_INT(cfsbw_sysctl_write(tree, "sched_cfs_bandwidth_slice_us",
				      "5000"),
		   ==, 0);
	ASSERT_INT(cfsbw_group_create(tree, "/g", &g), ==, 0);
	ASSERT_INT(cfsbw_file_write(g, "cpu.cfs_period_us", "100000", 0), ==, 0);
	ASSERT_INT(cfsbw_file_write(g, "cpu.cfs_quota_us", "10000", 0), ==, 0);
	cfsbw_task_enqueue(g, 1, 0);
	cfsbw_task_enqueue(g, 0, 0);
	ASSERT_FALSE(cfsbw_charge(g, 1, MS(4), MS(4)));
	ASSERT_FALSE(cfsbw_charge(g, 1, MS(2), MS(6)));
	ASSERT_INT(cfsbw_group_pool_runtime_ns(g), ==, 0);
	ASSERT_TRUE(cfsbw_charge(g, 1, MS(5), MS(11)));
	ASSERT_TRUE(cfsbw_charge(g, 0, MS(1), MS(12)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 0), ==, -MS(1));

	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, 200), ==, 0);
	ASSERT_UINT(cfsbw_tree_nr_rq(tree), ==, 200);
	/* What the accounts held survived the move. */
	ASSERT_TRUE(cfsbw_account_throttled(g, 1));
	ASSERT_TRUE(cfsbw_account_throttled(g, 0));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, -MS(1));
	ASSERT_UINT(cfsbw_group_h_nr_running(g, 0), ==, 1);
	ASSERT_UINT(cfsbw_rq_nr_running(tree, 0), ==, 0);

	cfsbw_task_enqueue(g, 150, MS(13));
	ASSERT_TRUE(cfsbw_charge(g, 150, MS(1), MS(14)));
	ASSERT_INT(expires, ==, MS(100));
	ASSERT_INT(cfsbw_period_timer_fire(g, MS(100)), ==, MS(200));
	ASSERT_UINT(nr_unthrottled, ==, 2);
	ASSERT_UINT(unthrottled[0], ==, 1);
	ASSERT_UINT(unthrottled[1], ==, 0);
	ASSERT_TRUE(cfsbw_account_throttled(g, 150));
	struct cfsbw_stats st;
	cfsbw_group_stats(g, &st);
	/* R12: rq 1 from 11 ms, rq 0 from 12 ms, both to 100 ms. */
	ASSERT_UINT(st.throttled_time, ==, MS(89) + MS(88));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 1), ==, MS(4));
	cfsbw_tree_free(tree);
}

/* R9, R11: new runqueues start empty and unthrottled, even under a
 * parent throttled elsewhere, and count their tasks from then on. */
TEST(new_runqueues_start_empty, "R9 R11")
{
	struct cfsbw_tree *tree = tree_with(1, CFSBW_POLICY_V4);
	struct cfsbw_group *p, *c;
	ASSERT_TRUE(tree != NULL);
	ASSERT_INT(cfsbw_group_create(tree, "/p", &p), ==, 0);
	ASSERT_INT(cfsbw_group_create(tree, "/p/c", &c), ==, 0);
	ASSERT_INT(cfsbw_file_write(p, "cpu.cfs_quota_us", "1000", 0), ==, 0);
	cfsbw_task_enqueue(c, 0, 0);
	ASSERT_TRUE(cfsbw_charge(c, 0, MS(20), MS(20)));
	ASSERT_TRUE(cfsbw_throttled(c, 0));

	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, 65), ==, 0);
	ASSERT_TRUE(cfsbw_throttled(c, 0));
	for (unsigned rq = 1; rq < 65; rq++) {
		ASSERT_FALSE(cfsbw_throttled(c, rq));
		ASSERT_UINT(cfsbw_rq_nr_running(tree, rq), ==, 0);
		ASSERT_INT(cfsbw_account_runtime_ns(p, rq), ==, 0);
	}
	cfsbw_task_enqueue(c, 64, MS(21));
	ASSERT_UINT(cfsbw_rq_nr_running(tree, 64), ==, 1);
	ASSERT_UINT(cfsbw_group_h_nr_running(p, 64), ==, 1);
	/* The pool is dry: rq 64 throttles at its first check. */
	ASSERT_TRUE(cfsbw_charge(c, 64, 0, MS(21)));
	ASSERT_TRUE(cfsbw_account_throttled(p, 64));
	ASSERT_UINT(cfsbw_rq_nr_running(tree, 64), ==, 0);
	cfsbw_tree_free(tree);
}

/* hardlimits: a new runqueue's account gets the group's runtime. */
TEST(new_runqueue_gets_hardlimits_runtime, "section-6")
{
	struct cfsbw_tree *tree = tree_with(2, CFSBW_POLICY_HARDLIMITS);
	struct cfsbw_group *g;
	ASSERT_TRUE(tree != NULL);
	ASSERT_INT(cfsbw_group_create(tree, "/g", &g), ==, 0);
	ASSERT_INT(cfsbw_file_write(g, "cpu.cfs_runtime_us", "30000", 0), ==, 0);
	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, 3), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 2), ==, MS(30));
	ASSERT_FALSE(cfsbw_charge(g, 2, MS(30), MS(30)));
	cfsbw_tree_free(tree);
}

/* Errors change nothing: shrinking, beyond the maximum, out of memory. */
TEST(growth_errors_change_nothing, "R2")
{
	struct cfsbw_tree *tree = tree_with(4, CFSBW_POLICY_V4);
	struct cfsbw_group *g;
	ASSERT_TRUE(tree != NULL);
	ASSERT_INT(cfsbw_group_create(tree, "/g", &g), ==, 0);
	ASSERT_INT(cfsbw_group_create(tree, "/g/h", NULL), ==, 0);
	ASSERT_INT(cfsbw_file_write(g, "cpu.cfs_quota_us", "50000", 0), ==, 0);
	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, 3), ==, -EINVAL);
	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, CFSBW_MAX_RQ + 1), ==, -EINVAL);
	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, 4), ==, 0);
	fail_allocs = 1;
	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, 1000), ==, -ENOMEM);
	fail_allocs = 0;
	ASSERT_UINT(cfsbw_tree_nr_rq(tree), ==, 4);
	cfsbw_task_enqueue(g, 3, 0);
	ASSERT_FALSE(cfsbw_charge(g, 3, MS(4), MS(4)));
	ASSERT_INT(cfsbw_account_runtime_ns(g, 3), ==, MS(6));
	ASSERT_INT(cfsbw_tree_set_nr_rq(tree, 1000), ==, 0);
	ASSERT_INT(cfsbw_account_runtime_ns(g, 3), ==, MS(6));
	ASSERT_UINT(cfsbw_group_h_nr_running(g, 3), ==, 1);
	cfsbw_tree_free(tree);
}

TEST_MAIN(TEST_ENTRY(growth_keeps_accounts_and_throttle_order)
	  TEST_ENTRY(new_runqueues_start_empty)
	  TEST_ENTRY(new_runqueue_gets_hardlimits_runtime)
	  TEST_ENTRY(growth_errors_change_nothing))
