/*
 * period.c - what happens at a timer's expiry (R10, seeds 002 and 005) and
 * at a reconfiguration (R4).  The mechanism is here; what a refresh does
 * is the policy's step.
 *
 * The core owns no timer: it asks the driver to arm one
 * (ops.period_timer_start, ops.slack_timer_start) and the driver reports
 * the expiry (cfsbw_period_timer_fire, cfsbw_slack_timer_fire).  The cost
 * of a refresh grows with the number of throttled accounts, never with
 * the number of runqueues or groups (hardlimits' refresh excepted: it
 * walks every runqueue, as seed 011 does).
 */
#include "core/bandwidth.h"

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
	int64_t overrun;
	pool->expires_ns = time_forward(pool->expires_ns, now_ns,
					pool->period_ns, &overrun);

	if (g->tree->steps->refresh(g, overrun, now_ns))
		next = pool->expires_ns;
	else
		atomic_store_explicit(&pool->timer_active, false,
				      memory_order_relaxed);
out:
	spin_unlock(&pool->lock);
	return next;
}

int64_t cfsbw_slack_timer_fire(struct cfsbw_group *g, int64_t now_ns)
{
	int64_t (*fire)(struct cfsbw_group *, int64_t) =
		g->tree->steps->slack_timer_fire;
	int64_t next = CFSBW_TIMER_STOP;

	if (fire) {
		spin_lock(&g->pool.lock);
		next = fire(g, now_ns);
		spin_unlock(&g->pool.lock);
	}
	return next;
}

/*
 * R4: a new period, quota or burst.  The pool starts full (or as the
 * policy refills it: upstream), every account starts afresh (a limited
 * one with nothing assigned), and every throttled account runs again at
 * once.  Statistics are kept (R12).  Validation (R2)
 * is the caller's: files.c.
 */
int cfsbw__group_set_bandwidth(struct cfsbw_group *g, int64_t period_ns,
			       int64_t quota_ns, int64_t burst_ns,
			       int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	bool was_limited = group_limited(g);

	spin_lock(&pool->lock);
	pool->period_ns = period_ns;
	pool->quota_ns = quota_ns;
	group_set_bw_first(g);
	pool->burst_ns = burst_ns;
	if (g->tree->steps->reconfigure_pool) {
		g->tree->steps->reconfigure_pool(g, was_limited);
	} else {
		pool->runtime = quota_ns;
		pool->runtime_snap = quota_ns;
	}
	pool->idle = false;
	for (unsigned rq = 0; rq < g->tree->nr_rq; rq++)
		account_reset(g, group_acct(g, rq));
	while (!list_empty(&pool->throttled))
		cfsbw__account_unthrottle(
			g,
			list_first_entry(&pool->throttled, struct cfsbw_account,
					 throttled_link),
			now_ns);
	if (group_limited(g) &&
	    atomic_load_explicit(&pool->nr_busy, memory_order_relaxed) > 0)
		cfsbw__pool_start_timer(g, now_ns);
	spin_unlock(&pool->lock);

	if (was_limited != group_limited(g)) {
		/* R5: the accounts below start or stop being charged here. */
		unsigned busy = 0;
		for (unsigned rq = 0; rq < g->tree->nr_rq; rq++)
			busy += group_acct(g, rq)->h_nr_running > 0;
		atomic_store_explicit(&pool->nr_busy,
				      group_limited(g) ? busy : 0,
				      memory_order_relaxed);
		cfsbw__group_update_bw_links(g);
		if (group_limited(g) && busy) {
			spin_lock(&pool->lock);
			cfsbw__pool_start_timer(g, now_ns);
			spin_unlock(&pool->lock);
		}
	}
	return 0;
}
