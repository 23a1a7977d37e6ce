/*
 * pool.c - a group's pool (R6): runtime taken from it, runtime given back
 * to it, and the period timer that refills it, armed through the driver
 * (ops.period_timer_start).  The bottom of the core's files: it calls none
 * of the others.  Every function here runs with the pool lock held.
 */
#include "core/bandwidth.h"

/* R6: take up to want_ns from the pool. */
int64_t cfsbw__pool_take(struct cfsbw_group *g, int64_t want_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	int64_t amount = want_ns < pool->runtime ? want_ns : pool->runtime;
	if (amount <= 0)
		return 0;
	pool->runtime -= amount;
	return amount;
}

/*
 * R6: a that ran dry asks the pool for want_ns (and the period timer
 * starts, R10, if it is not running).
 */
void cfsbw__pool_assign(struct cfsbw_group *g, struct cfsbw_account *a,
			int64_t want_ns, int64_t now_ns)
{
	cfsbw__pool_start_timer(g, now_ns);
	a->runtime_remaining += cfsbw__pool_take(g, want_ns);
}

/*
 * Runtime an account gives back goes to the pool, never beyond what a
 * period may hand out (R13).
 */
void cfsbw__pool_return(struct cfsbw_group *g, int64_t amount_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	int64_t cap = pool->quota_ns + pool->burst_ns;

	pool->runtime = pool->runtime > cap - amount_ns ? cap
							: pool->runtime + amount_ns;
}

/*
 * R10: start the period timer if it is not running.  A restarted timer
 * keeps its grid: it fires at the first multiple of the period, counted
 * from its last expiry, that is still ahead (hrtimer_forward).  A first
 * start is one period from now, or, with the tree's periods aligned, on
 * the grid counted from time 0 (cfsbw_tree_align_periods), or on the
 * group's own grid (cfsbw_group_set_period_phase): its phase if that is
 * still ahead, as hrtimer_forward leaves an expiry in the future.
 */
/*
 * A first start's expiry: one period from now, or on a grid, the group's
 * own (its phase) or, with the tree's periods aligned, every group's
 * (phase 0): the phase itself while it is still ahead, even more than a
 * period ahead (Linux's timer armed under the period a group had when
 * its quota was set, forwarded by the new one only from its first
 * expiry), else the grid's first point after now.
 */
static int64_t first_expiry(const struct cfsbw_group *g, int64_t now_ns)
{
	int64_t period = g->pool.period_ns;
	int64_t phase = g->tree->align_periods ? 0 : g->pool.phase_ns;
	if (phase < 0)
		return time_add_sat(now_ns, period);
	return phase > now_ns ? phase
			      : time_forward(phase, now_ns, period, NULL);
}

void cfsbw__pool_start_timer(struct cfsbw_group *g, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	if (!group_limited(g) ||
	    atomic_load_explicit(&pool->timer_active, memory_order_relaxed))
		return;
	if (pool->expires_ns == 0)
		pool->expires_ns = first_expiry(g, now_ns);
	else if (pool->expires_ns <= now_ns)
		pool->expires_ns = time_forward(pool->expires_ns, now_ns,
						pool->period_ns, NULL);
	atomic_store_explicit(&pool->timer_active, true, memory_order_relaxed);
	if (g->tree->ops.period_timer_start)
		g->tree->ops.period_timer_start(g->tree->ctx, g, pool->expires_ns);
}
