/*
 * policy_upstream.c - today's Linux (linux-upstream.md): an account that
 * runs dry is topped up to a slice, paying its debt first; unused quota
 * carries over up to the burst, and a write of the bandwidth refills the
 * pool as a refresh does; each refresh gives a throttled account exactly
 * what clears its debt; an account that goes idle returns its slack,
 * which a slack timer hands on to throttled accounts; the period timer
 * stops after a whole period with no draw from the pool.
 * Defaults (R1, in policy.c's list): period 100 ms, slice 5 ms.
 */
#include "core/bandwidth.h"

/* upstream's constants (linux-upstream.md section 2). */
#define MIN_CFS_RQ_RUNTIME_NS (1 * CFSBW_NSEC_PER_MSEC)
#define MIN_BANDWIDTH_EXPIRATION_NS (2 * CFSBW_NSEC_PER_MSEC)
#define CFS_BANDWIDTH_SLACK_PERIOD_NS (5 * CFSBW_NSEC_PER_MSEC)

/* R6: top the account up to a slice, its debt first
 * (__assign_cfs_rq_runtime). */
static bool upstream_refill(struct cfsbw_group *g, struct cfsbw_account *a,
			    int64_t now_ns)
{
	if (a->runtime_remaining <= 0) {
		cfsbw__pool_assign(g, a, g->tree->slice_ns - a->runtime_remaining,
				   now_ns);
		g->pool.idle = false;
	}
	return a->runtime_remaining <= 0;
}

/*
 * A quota on top of what is left, up to quota + burst: unused quota
 * carries over up to the burst (R13's + burst).  What was drawn beyond a
 * quota since the last refill counts as a burst
 * (__refill_cfs_bandwidth_runtime).
 */
static void pool_refill(struct cfsbw_pool *pool)
{
	int64_t runtime = pool->runtime + pool->quota_ns;
	int64_t over = pool->runtime_snap - runtime;
	if (over > 0) {
		stat_add_sat(&pool->stats.burst_time, (uint64_t)over);
		pool->stats.nr_bursts++;
	}
	int64_t cap = pool->quota_ns + pool->burst_ns;
	pool->runtime = runtime < cap ? runtime : cap;
	pool->runtime_snap = pool->runtime;
}

/*
 * R4: Linux refills at a write as at a refresh (tg_set_cfs_bandwidth), it
 * does not set the pool to a quota: writing the quota and then the burst
 * starts a group with quota + burst, and a write in the middle of a
 * period adds a quota to what is left.  Without a burst that is a full
 * quota, as in the other policies.  A group that was unlimited starts
 * from an empty pool, as a new group does in Linux.
 */
static void upstream_reconfigure_pool(struct cfsbw_group *g, bool was_limited)
{
	struct cfsbw_pool *pool = &g->pool;

	if (!group_limited(g)) {
		pool->runtime = pool->quota_ns;
		pool->runtime_snap = pool->quota_ns;
		return;
	}
	if (!was_limited) {
		pool->runtime = 0;
		pool->runtime_snap = 0;
	}
	pool_refill(pool);
}

static bool upstream_refresh(struct cfsbw_group *g, int64_t overrun,
			     int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	bool throttled = !list_empty(&pool->throttled);

	pool->stats.nr_periods += (uint64_t)overrun;
	pool_refill(pool);
	/* Stop after one whole period with no draw from the pool. */
	if (pool->idle && !throttled)
		return false;
	if (!throttled) {
		pool->idle = true;
		return true;
	}
	pool->stats.nr_throttled += (uint64_t)overrun;
	cfsbw__distribute_debts(g, now_ns);
	return true;
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
 * Runtime given back: a slack timer hands it on to throttled accounts
 * when the pool holds more than a slice, unless the refresh is near
 * (return_cfs_rq_runtime).  Pool lock held.
 */
static void return_runtime(struct cfsbw_group *g, int64_t amount_ns,
			   int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	cfsbw__pool_return(g, amount_ns);
	if (pool->runtime > g->tree->slice_ns && !list_empty(&pool->throttled) &&
	    !pool->slack_started &&
	    !refresh_within(pool, now_ns,
			    CFS_BANDWIDTH_SLACK_PERIOD_NS +
				    MIN_BANDWIDTH_EXPIRATION_NS)) {
		pool->slack_started = true;
		pool->slack_expires_ns =
			time_add_sat(now_ns, CFS_BANDWIDTH_SLACK_PERIOD_NS);
		if (g->tree->ops.slack_timer_start)
			g->tree->ops.slack_timer_start(g->tree->ctx, g,
						       pool->slack_expires_ns);
	}
}

static void upstream_offline(struct cfsbw_group *g, struct cfsbw_account *a,
			     int64_t now_ns)
{
	if (a->runtime_remaining > 0)
		return_runtime(g, a->runtime_remaining, now_ns);
	a->runtime_remaining = 0;
}

/* An account with no runnable tasks keeps 1 ms and returns the rest. */
static void upstream_went_idle(struct cfsbw_group *g, struct cfsbw_account *a,
			       int64_t now_ns)
{
	int64_t slack = a->runtime_remaining - MIN_CFS_RQ_RUNTIME_NS;

	if (slack <= 0)
		return;
	spin_lock(&g->pool.lock);
	if (!account_is_throttled(a)) {
		a->runtime_remaining -= slack;
		return_runtime(g, slack, now_ns);
	}
	spin_unlock(&g->pool.lock);
}

static int64_t upstream_slack_timer_fire(struct cfsbw_group *g, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	if (pool->slack_started && now_ns < pool->slack_expires_ns)
		return pool->slack_expires_ns;
	pool->slack_started = false;
	/* The period timer is about to refill anyway: leave it to that. */
	if (group_limited(g) &&
	    !refresh_within(pool, now_ns, MIN_BANDWIDTH_EXPIRATION_NS) &&
	    pool->runtime > g->tree->slice_ns)
		cfsbw__distribute_debts(g, now_ns);
	return CFSBW_TIMER_STOP;
}

const struct cfsbw_policy_steps cfsbw__policy_upstream = {
	/* account_reset NULL: an account starts with nothing assigned. */
	.reconfigure_pool = upstream_reconfigure_pool,
	.refill = upstream_refill,
	.refresh = upstream_refresh,
	.offline = upstream_offline,
	.went_idle = upstream_went_idle,
	.slack_timer_fire = upstream_slack_timer_fire,
};
