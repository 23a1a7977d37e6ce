/*
 * period.c - the pool's clockwork: the period timer that refills the pool
 * and unthrottles (R10, seeds 002 and 005), the upstream policy's slack
 * timer and burst, and reconfiguration (R4).
 *
 * The core owns no timer: it asks the driver to arm one
 * (ops.period_timer_start) and the driver reports the expiry
 * (cfsbw_period_timer_fire).  The cost of a refresh grows with the number
 * of throttled accounts, never with the number of runqueues or groups.
 */
#include <errno.h>

#include "core/bandwidth.h"

/* upstream's constants (linux-upstream.md section 2). */
#define MIN_CFS_RQ_RUNTIME_NS (1 * CFSBW_NSEC_PER_MSEC)
#define MIN_BANDWIDTH_EXPIRATION_NS (2 * CFSBW_NSEC_PER_MSEC)
#define CFS_BANDWIDTH_SLACK_PERIOD_NS (5 * CFSBW_NSEC_PER_MSEC)

/*
 * R6: take up to want_ns from the pool.  Caller holds the pool lock.
 */
int64_t __pool_take(struct cfsbw_group *g, int64_t want_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	int64_t amount = want_ns < pool->runtime ? want_ns : pool->runtime;
	if (amount <= 0)
		return 0;
	pool->runtime -= amount;
	return amount;
}

/*
 * R10: start the period timer if it is not running.  A restarted timer
 * keeps its grid: it fires at the first multiple of the period, counted
 * from its last expiry, that is still ahead (hrtimer_forward).  Caller
 * holds the pool lock.
 */
void __pool_start_timer(struct cfsbw_group *g, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	if (!group_limited(g) ||
	    atomic_load_explicit(&pool->timer_active, memory_order_relaxed))
		return;
	if (pool->expires_ns == 0) {
		pool->expires_ns = now_ns + pool->period_ns;
	} else if (pool->expires_ns <= now_ns) {
		int64_t missed = (now_ns - pool->expires_ns) / pool->period_ns + 1;
		pool->expires_ns += missed * pool->period_ns;
	}
	atomic_store_explicit(&pool->timer_active, true, memory_order_relaxed);
	if (g->tree->ops.period_timer_start)
		g->tree->ops.period_timer_start(g->tree->ctx, g, pool->expires_ns);
}

/*
 * R10: hand the pool out to throttled accounts in the order they
 * throttled, while it lasts; an account whose runtime turns positive runs
 * again.  v4 gives each one slice (seed 005); upstream gives exactly what
 * clears its debt, plus 1 ns.  Caller holds the pool lock.
 */
static void pool_distribute(struct cfsbw_group *g, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	list_for_each_entry_safe(a, &pool->throttled, struct cfsbw_account,
				 throttled_link) {
		if (pool->runtime <= 0)
			break;
		int64_t want = g->tree->policy == CFSBW_POLICY_UPSTREAM
				       ? 1 - a->runtime_remaining
				       : g->tree->slice_ns;
		a->runtime_remaining += __pool_take(g, want);
		if (a->runtime_remaining > 0)
			__account_unthrottle(g, a, now_ns);
	}
}

/*
 * The refill at a period boundary.  Returns false when the timer may stop.
 * Caller holds the pool lock.
 */
static bool pool_refresh(struct cfsbw_group *g, int64_t overrun,
			 int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	bool throttled = !list_empty(&pool->throttled);

	pool->stats.nr_periods += (uint64_t)overrun;

	if (g->tree->policy == CFSBW_POLICY_UPSTREAM) {
		/* Unused quota carries over up to the burst (R13's + burst). */
		int64_t runtime = pool->runtime + pool->quota_ns;
		int64_t over = pool->runtime_snap - runtime;
		if (over > 0) {
			pool->stats.burst_time += (uint64_t)over;
			pool->stats.nr_bursts++;
		}
		int64_t cap = pool->quota_ns + pool->burst_ns;
		pool->runtime = runtime < cap ? runtime : cap;
		pool->runtime_snap = pool->runtime;
		/* Stop after one whole period with no draw from the pool. */
		if (pool->idle && !throttled)
			return false;
		if (!throttled) {
			pool->idle = true;
			return true;
		}
		pool->stats.nr_throttled += (uint64_t)overrun;
		pool_distribute(g, now_ns);
		return true;
	}

	/* v4 (seeds 005, 006): a full pool, one count per refresh. */
	pool->runtime = pool->quota_ns;
	if (throttled) {
		pool->stats.nr_throttled++;
		pool_distribute(g, now_ns);
	}
	/* Idle: no runqueue has tasks of the group, and none waits. */
	return atomic_load_explicit(&pool->nr_busy, memory_order_relaxed) > 0 ||
	       !list_empty(&pool->throttled);
}

int64_t cfsbw_period_timer_fire(struct cfsbw_group *g, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	int64_t next = CFSBW_TIMER_STOP;

	spin_lock(&pool->lock);
	if (!atomic_load_explicit(&pool->timer_active, memory_order_relaxed))
		goto out;
	if (now_ns < pool->expires_ns) {
		/* Early: the driver's timer fired before its time. */
		next = pool->expires_ns;
		goto out;
	}
	if (!group_limited(g)) {
		atomic_store_explicit(&pool->timer_active, false,
				      memory_order_relaxed);
		goto out;
	}
	/* R10: an expiry late by k periods counts k. */
	int64_t overrun = (now_ns - pool->expires_ns) / pool->period_ns + 1;
	pool->expires_ns += overrun * pool->period_ns;

	bool active = g->tree->policy == CFSBW_POLICY_HARDLIMITS
			      ? __hardlimits_refresh(g, overrun, now_ns)
			      : pool_refresh(g, overrun, now_ns);
	if (active)
		next = pool->expires_ns;
	else
		atomic_store_explicit(&pool->timer_active, false,
				      memory_order_relaxed);
out:
	spin_unlock(&pool->lock);
	return next;
}

/* True when the next refresh is less than min_ns away. */
static bool refresh_within(const struct cfsbw_pool *pool, int64_t now_ns,
			   int64_t min_ns)
{
	if (!atomic_load_explicit(&pool->timer_active, memory_order_relaxed))
		return false;
	return pool->expires_ns - now_ns < min_ns;
}

/*
 * Runtime an account gives back goes to the pool, never beyond what a
 * period may hand out (R13).  upstream: a slack timer hands it on to
 * throttled accounts when the pool holds more than a slice, unless the
 * refresh is near (return_cfs_rq_runtime).  Caller holds the pool lock.
 */
void __pool_return(struct cfsbw_group *g, int64_t amount_ns, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	int64_t cap = pool->quota_ns + pool->burst_ns;

	pool->runtime = pool->runtime > cap - amount_ns ? cap
							: pool->runtime + amount_ns;
	if (g->tree->policy == CFSBW_POLICY_UPSTREAM &&
	    pool->runtime > g->tree->slice_ns && !list_empty(&pool->throttled) &&
	    !pool->slack_started &&
	    !refresh_within(pool, now_ns,
			    CFS_BANDWIDTH_SLACK_PERIOD_NS +
				    MIN_BANDWIDTH_EXPIRATION_NS)) {
		pool->slack_started = true;
		pool->slack_expires_ns = now_ns + CFS_BANDWIDTH_SLACK_PERIOD_NS;
		if (g->tree->ops.slack_timer_start)
			g->tree->ops.slack_timer_start(g->tree->ctx, g,
						       pool->slack_expires_ns);
	}
}

/*
 * upstream: an account with no runnable tasks keeps 1 ms and returns the
 * rest (return_cfs_rq_runtime).
 */
void __upstream_return_slack(struct cfsbw_group *g, struct cfsbw_account *a,
			     int64_t now_ns)
{
	int64_t slack = a->runtime_remaining - MIN_CFS_RQ_RUNTIME_NS;

	if (slack <= 0)
		return;
	spin_lock(&g->pool.lock);
	if (!account_is_throttled(a)) {
		a->runtime_remaining -= slack;
		__pool_return(g, slack, now_ns);
	}
	spin_unlock(&g->pool.lock);
}

int64_t cfsbw_slack_timer_fire(struct cfsbw_group *g, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	spin_lock(&pool->lock);
	if (pool->slack_started && now_ns < pool->slack_expires_ns) {
		int64_t next = pool->slack_expires_ns;
		spin_unlock(&pool->lock);
		return next;
	}
	pool->slack_started = false;
	/* The period timer is about to refill anyway: leave it to that. */
	if (group_limited(g) &&
	    !refresh_within(pool, now_ns, MIN_BANDWIDTH_EXPIRATION_NS) &&
	    pool->runtime > g->tree->slice_ns)
		pool_distribute(g, now_ns);
	spin_unlock(&pool->lock);
	return CFSBW_TIMER_STOP;
}

/*
 * R4: a new period, quota or burst.  The pool starts full, every account
 * starts afresh (a limited one with nothing assigned), and every throttled
 * account runs again at once.  Statistics are kept (R12).  Validation (R2)
 * is the caller's: files.c.
 */
int __group_set_bandwidth(struct cfsbw_group *g, int64_t period_ns,
			  int64_t quota_ns, int64_t burst_ns, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	bool was_limited = group_limited(g);

	spin_lock(&pool->lock);
	pool->period_ns = period_ns;
	pool->quota_ns = quota_ns;
	pool->burst_ns = burst_ns;
	pool->runtime = quota_ns;
	pool->runtime_snap = quota_ns;
	pool->idle = false;
	if (g->tree->policy == CFSBW_POLICY_HARDLIMITS)
		__hardlimits_reset(g);
	else
		for (unsigned rq = 0; rq < g->tree->nr_rq; rq++)
			group_acct(g, rq)->runtime_remaining = 0;
	while (!list_empty(&pool->throttled)) {
		struct cfsbw_account *a = list_first_entry(
			&pool->throttled, struct cfsbw_account, throttled_link);
		__account_unthrottle(g, a, now_ns);
	}
	if (group_limited(g) &&
	    atomic_load_explicit(&pool->nr_busy, memory_order_relaxed) > 0)
		__pool_start_timer(g, now_ns);
	spin_unlock(&pool->lock);

	if (was_limited != group_limited(g)) {
		/* R5: the accounts below start or stop being charged here. */
		unsigned busy = 0;
		for (unsigned rq = 0; rq < g->tree->nr_rq; rq++)
			busy += group_acct(g, rq)->h_nr_running > 0;
		atomic_store_explicit(&pool->nr_busy,
				      group_limited(g) ? busy : 0,
				      memory_order_relaxed);
		__group_update_bw_links(g);
		if (group_limited(g) && busy) {
			spin_lock(&pool->lock);
			__pool_start_timer(g, now_ns);
			spin_unlock(&pool->lock);
		}
	}
	return 0;
}
