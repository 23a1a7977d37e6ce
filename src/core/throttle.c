/*
 * throttle.c - an account throttled (R7) and released (R10, R4), in the
 * order it throttled: the pool's throttled list, the driver's callbacks,
 * and the throttled time (R12).  Every function here runs with the pool
 * lock held.
 *
 * Ownership, as in seed 003: while an account is throttled it belongs to
 * its pool; the release store of "throttled = 0" hands it back to its
 * runqueue's thread after the refill is visible.
 */
#include "core/bandwidth.h"

/*
 * R7: a has run dry and the pool could not refill it.  Its group's entity
 * on this runqueue must leave the runqueue; everything below follows (R11).
 */
void cfsbw__account_throttle(struct cfsbw_group *g, struct cfsbw_account *a,
			     int64_t now_ns)
{
	unsigned rq = a->rq;

	BUG_ON(account_is_throttled(a));
	atomic_store_explicit(&a->throttled, 1, memory_order_relaxed);
	a->throttled_clock = g->tree->info->throttled_clock_needs_tasks &&
					     a->h_nr_running == 0
				     ? CFSBW_CLOCK_STOPPED
				     : now_ns;
	list_add_tail(&g->pool.throttled, &a->throttled_link);
	cfsbw__hierarchy_throttle(g, rq, now_ns);
	if (g->tree->ops.throttle)
		g->tree->ops.throttle(g->tree->ctx, g, rq);
}

/* a leaves the throttled list; R12: its throttled time is counted now. */
static void account_leave_throttled(struct cfsbw_group *g,
				    struct cfsbw_account *a, int64_t now_ns)
{
	BUG_ON(!account_is_throttled(a));
	if (a->throttled_clock != CFSBW_CLOCK_STOPPED && now_ns > a->throttled_clock)
		stat_add_sat(&g->pool.stats.throttled_time,
			     (uint64_t)(now_ns - a->throttled_clock));
	list_del(&a->throttled_link);
}

/* R10/R4: a may run again. */
void cfsbw__account_unthrottle(struct cfsbw_group *g, struct cfsbw_account *a,
			       int64_t now_ns)
{
	unsigned rq = a->rq;

	account_leave_throttled(g, a, now_ns);
	cfsbw__hierarchy_unthrottle(g, rq, now_ns);
	atomic_store_explicit(&a->throttled, 0, memory_order_release);
	if (g->tree->ops.unthrottle)
		g->tree->ops.unthrottle(g->tree->ctx, g, rq);
}

/*
 * a's runqueue goes away (cfsbw_rq_offline): a is released with no
 * callback and no walk of the hierarchy, whose counts on that runqueue
 * the caller resets.
 */
void cfsbw__account_forget_throttle(struct cfsbw_group *g,
				    struct cfsbw_account *a, int64_t now_ns)
{
	account_leave_throttled(g, a, now_ns);
	atomic_store_explicit(&a->throttled, 0, memory_order_release);
}

/*
 * R10: hand the pool out to throttled accounts in the order they
 * throttled, while it lasts; an account whose runtime turns positive runs
 * again.  Each asks for a slice, or (debts) for exactly what clears its
 * debt, plus 1 ns.
 */
static void distribute(struct cfsbw_group *g, bool debts, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	list_for_each_entry_safe(a, &pool->throttled, struct cfsbw_account,
				 throttled_link) {
		if (pool->runtime <= 0)
			break;
		int64_t want = debts ? 1 - a->runtime_remaining
				     : g->tree->slice_ns;
		a->runtime_remaining += cfsbw__pool_take(g, want);
		if (a->runtime_remaining > 0)
			cfsbw__account_unthrottle(g, a, now_ns);
	}
}

/* v4 (seed 005): one slice each. */
void cfsbw__distribute_slices(struct cfsbw_group *g, int64_t now_ns)
{
	distribute(g, false, now_ns);
}

/* upstream (distribute_cfs_runtime): -runtime_remaining + 1 each. */
void cfsbw__distribute_debts(struct cfsbw_group *g, int64_t now_ns)
{
	distribute(g, true, now_ns);
}
