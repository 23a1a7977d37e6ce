/*
 * test_core_threads.c - the core used as its contract says a
 * multi-threaded driver may use it (seed 003's model): one thread per
 * runqueue charges its own accounts with no lock of its own, while a timer
 * thread refreshes the pool.  Checks R13 (no more CPU than the quota handed
 * out plus one charge of overrun per runqueue), R7/R10 (every runqueue is
 * throttled and unthrottled, and makes progress), and R12 (statistics add
 * up).  Run it under -fsanitize=thread to check the memory ordering.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "cfsbw.h"
#include "harness.h"

#define NR_RQ 4
#define DELTA_NS (50 * CFSBW_NSEC_PER_USEC)
#define QUOTA_US 2000 /* per period: 40 charges of 50 us */
#define REFRESHES 3000

struct threads_ctx {
	struct cfsbw_group *g;
	atomic_long consumed_ns[NR_RQ];
	atomic_int throttles[NR_RQ];
	atomic_int unthrottles[NR_RQ];
	atomic_bool stop;
	atomic_llong expires;
};

static struct threads_ctx ctx;

static void on_throttle(void *c, struct cfsbw_group *g, unsigned rq)
{
	(void)c;
	(void)g;
	atomic_fetch_add(&ctx.throttles[rq], 1);
}

static void on_unthrottle(void *c, struct cfsbw_group *g, unsigned rq)
{
	(void)c;
	(void)g;
	atomic_fetch_add(&ctx.unthrottles[rq], 1);
}

static void on_timer(void *c, struct cfsbw_group *g, int64_t expires_ns)
{
	(void)c;
	(void)g;
	atomic_store(&ctx.expires, expires_ns);
}

/* A runqueue: run a task of g for DELTA_NS whenever not throttled. */
static void *rq_thread(void *arg)
{
	unsigned rq = (unsigned)(uintptr_t)arg;
	int64_t clock = 0;
	cfsbw_task_enqueue(ctx.g, rq, 0);
	while (!atomic_load(&ctx.stop)) {
		if (cfsbw_throttled(ctx.g, rq)) {
			sched_yield();
			continue;
		}
		clock += DELTA_NS;
		atomic_fetch_add(&ctx.consumed_ns[rq], DELTA_NS);
		cfsbw_charge(ctx.g, rq, DELTA_NS, clock);
	}
	return NULL;
}

TEST(concurrent_charges_and_refreshes, "R13 R10 R12")
{
	struct cfsbw_ops ops = {.throttle = on_throttle,
				.unthrottle = on_unthrottle,
				.period_timer_start = on_timer};
	struct cfsbw_tree_config cfg = {.nr_rq = NR_RQ, .ops = &ops};
	struct cfsbw_tree *tree;
	pthread_t th[NR_RQ];
	char text[32];

	memset(&ctx, 0, sizeof ctx);
	atomic_store(&ctx.expires, -1);
	ASSERT_INT(cfsbw_tree_create(&cfg, &tree), ==, 0);
	ASSERT_INT(cfsbw_sysctl_write(tree, "sched_cfs_bandwidth_slice_us",
				      "100"),
		   ==, 0);
	ASSERT_INT(cfsbw_group_create(tree, "/g", &ctx.g), ==, 0);
	snprintf(text, sizeof text, "%d", QUOTA_US);
	ASSERT_INT(cfsbw_file_write(ctx.g, "cpu.cfs_period_us", "10000", 0), ==,
		   0);
	ASSERT_INT(cfsbw_file_write(ctx.g, "cpu.cfs_quota_us", text, 0), ==, 0);

	for (unsigned rq = 0; rq < NR_RQ; rq++)
		pthread_create(&th[rq], NULL, rq_thread, (void *)(uintptr_t)rq);

	/*
	 * The timer thread: refresh once every runqueue waits.  Only then is
	 * the pool sure to be empty: a v4 refresh sets the pool to the quota
	 * and drops what was left, which the sum below would count as handed
	 * out.  (It used to wait at most 200 yields; on a loaded machine under
	 * ThreadSanitizer it once refreshed early and 16 ms went uncounted.)
	 */
	int refreshes = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (refreshes < REFRESHES) {
		int64_t expires = atomic_load(&ctx.expires);
		if (expires < 0) {
			sched_yield();
			continue;
		}
		for (;;) {
			int waiting = 0;
			for (unsigned rq = 0; rq < NR_RQ; rq++)
				waiting += cfsbw_throttled(ctx.g, rq);
			if (waiting == NR_RQ)
				break;
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			/* Every runqueue drains a 2 ms pool in 40 charges. */
			if (t.tv_sec - t0.tv_sec > 120) {
				atomic_store(&ctx.stop, true);
				for (unsigned rq = 0; rq < NR_RQ; rq++)
					pthread_join(th[rq], NULL);
				TEST_FAIL_AT("runqueues never all throttled "
					     "in %d s", 120);
				return;
			}
			sched_yield();
		}
		int64_t next = cfsbw_period_timer_fire(ctx.g, expires);
		ASSERT_INT(next, ==, expires + 10 * CFSBW_NSEC_PER_MSEC);
		atomic_store(&ctx.expires, next);
		refreshes++;
	}
	atomic_store(&ctx.stop, true);
	for (unsigned rq = 0; rq < NR_RQ; rq++)
		pthread_join(th[rq], NULL);

	struct cfsbw_stats st;
	cfsbw_group_stats(ctx.g, &st);
	long consumed = 0, held = 0;
	for (unsigned rq = 0; rq < NR_RQ; rq++) {
		consumed += atomic_load(&ctx.consumed_ns[rq]);
		held += (long)cfsbw_account_runtime_ns(ctx.g, rq);
		/* R7/R10: every runqueue took part, throttled and came back. */
		ASSERT_INT(atomic_load(&ctx.consumed_ns[rq]), >, 0);
		ASSERT_INT(atomic_load(&ctx.throttles[rq]), >, 0);
		ASSERT_INT(atomic_load(&ctx.unthrottles[rq]), >=,
			   atomic_load(&ctx.throttles[rq]) - 1);
	}
	/*
	 * R13: what ran is what the pool handed out (the first full pool plus
	 * one quota per refresh, less what is left in it) less what the
	 * accounts still hold; a negative holding is one charge of overrun.
	 */
	long quota_ns = QUOTA_US * CFSBW_NSEC_PER_USEC;
	long handed = quota_ns * (REFRESHES + 1) -
		      (long)cfsbw_group_pool_runtime_ns(ctx.g);
	ASSERT_INT(consumed + held, ==, handed);
	ASSERT_INT(consumed, <=, handed + NR_RQ * DELTA_NS);
	ASSERT_INT(held, >=, -(long)NR_RQ * DELTA_NS);
	/* R12: every refresh counted; throttling seen in most of them. */
	ASSERT_UINT(st.nr_periods, ==, REFRESHES);
	ASSERT_UINT(st.nr_throttled, >, REFRESHES / 2);
	ASSERT_UINT(st.nr_throttled, <=, st.nr_periods);
	cfsbw_tree_free(tree);
}

TEST_MAIN(TEST_ENTRY(concurrent_charges_and_refreshes))
