/*
 * account.c - charging execution to local accounts (R5, R6, R7), and the
 * throttle/unthrottle pair.
 *
 * The fast path (runtime left, not throttled) is a load, a subtract and a
 * store on memory owned by the calling runqueue's thread: no lock, no
 * atomic read-modify-write, no allocation.  Only an account that runs dry
 * takes its pool's lock to ask for a slice (seed 003).
 */
#include <errno.h>

#include "core/bandwidth.h"

/*
 * R7: a has run dry and the pool could not refill it.  Its group's entity
 * on this runqueue must leave the runqueue; everything below follows (R11).
 * Caller holds the pool lock.
 */
void __account_throttle(struct cfsbw_group *g, struct cfsbw_account *a,
			int64_t now_ns)
{
	unsigned rq = a->rq;

	BUG_ON(account_is_throttled(a));
	atomic_store_explicit(&a->throttled, 1, memory_order_relaxed);
	a->throttled_clock = now_ns;
	list_add_tail(&g->pool.throttled, &a->throttled_link);
	__hierarchy_throttle(g, rq);
	if (g->tree->ops.throttle)
		g->tree->ops.throttle(g->tree->ctx, g, rq);
}

/*
 * R10/R4: a may run again.  R12: its throttled time is counted now.
 * The release store hands the account back to its runqueue's thread after
 * the refill is visible.  Caller holds the pool lock.
 */
void __account_unthrottle(struct cfsbw_group *g, struct cfsbw_account *a,
			  int64_t now_ns)
{
	unsigned rq = a->rq;

	BUG_ON(!account_is_throttled(a));
	if (now_ns > a->throttled_clock)
		g->pool.stats.throttled_time +=
			(uint64_t)(now_ns - a->throttled_clock);
	list_del(&a->throttled_link);
	__hierarchy_unthrottle(g, rq, now_ns);
	atomic_store_explicit(&a->throttled, 0, memory_order_release);
	if (g->tree->ops.unthrottle)
		g->tree->ops.unthrottle(g->tree->ctx, g, rq);
}

/*
 * R6: ask the pool for runtime.  v4 moves one slice, min(slice, pool)
 * (seed 003); upstream tops the account up to a slice, paying its debt
 * first (__assign_cfs_rq_runtime).  Starts the period timer if needed.
 * Caller holds the pool lock.
 */
static void account_assign(struct cfsbw_group *g, struct cfsbw_account *a,
			   int64_t now_ns)
{
	struct cfsbw_tree *tree = g->tree;
	int64_t want = tree->slice_ns;

	if (tree->policy == CFSBW_POLICY_UPSTREAM)
		want -= a->runtime_remaining;
	__pool_start_timer(g, now_ns);
	a->runtime_remaining += __pool_take(g, want);
	g->pool.idle = false;
}

/*
 * The slow path of one account: it ran dry (or is throttled and accrues
 * debt).  Returns true when the account is throttled afterwards.
 */
static bool account_charge_slow(struct cfsbw_group *g, struct cfsbw_account *a,
				int64_t delta_ns, int64_t now_ns)
{
	bool throttled;

	spin_lock(&g->pool.lock);
	a->runtime_remaining -= delta_ns;
	if (account_is_throttled(a)) {
		/* Ran past its throttle (a tick's overrun): a debt (R13). */
		throttled = true;
	} else if (g->tree->policy == CFSBW_POLICY_HARDLIMITS) {
		throttled = __hardlimits_charge(g, a, now_ns);
	} else {
		if (a->runtime_remaining <= 0)
			account_assign(g, a, now_ns);
		if (a->runtime_remaining <= 0)
			__account_throttle(g, a, now_ns);
		throttled = a->runtime_remaining <= 0;
	}
	spin_unlock(&g->pool.lock);
	return throttled;
}

/*
 * R6's fast path: true when the charge fit in the runtime held locally.
 * The acquire load pairs with the release in __account_unthrottle: once
 * "not throttled" is seen, runtime_remaining is this thread's alone.
 */
static inline bool account_charge_fast(struct cfsbw_account *a,
				       int64_t delta_ns)
{
	if (likely(!account_is_throttled(a))) {
		int64_t left = a->runtime_remaining - delta_ns;
		if (likely(left > 0)) {
			a->runtime_remaining = left;
			return true;
		}
	}
	return false;
}

bool cfsbw_charge(struct cfsbw_group *g, unsigned rq, int64_t delta_ns,
		  int64_t now_ns)
{
	BUG_ON(rq >= g->tree->nr_rq);
	/* A zero charge checks for runtime before a task runs. */
	if (likely(delta_ns >= 0)) {
		/* R5: this group and every limited ancestor, nothing else. */
		for (struct cfsbw_group *b = group_first_limited(g); b;
		     b = b->bw_up) {
			struct cfsbw_account *a = group_acct(b, rq);
			if (!account_charge_fast(a, delta_ns))
				account_charge_slow(b, a, delta_ns, now_ns);
		}
	}
	/* R11: throttled itself or through any ancestor. */
	return atomic_load_explicit(&group_acct(g, rq)->throttle_count,
				    memory_order_relaxed) > 0;
}

bool cfsbw_throttled(const struct cfsbw_group *g, unsigned rq)
{
	return atomic_load_explicit(&group_acct(g, rq)->throttle_count,
				    memory_order_relaxed) > 0;
}

bool cfsbw_account_throttled(const struct cfsbw_group *g, unsigned rq)
{
	return account_is_throttled(group_acct(g, rq));
}

int64_t cfsbw_account_runtime_ns(const struct cfsbw_group *g, unsigned rq)
{
	if (!group_limited(g))
		return CFSBW_RUNTIME_INF;
	return group_acct(g, rq)->runtime_remaining;
}

int64_t cfsbw_runtime_left_ns(struct cfsbw_group *g, unsigned rq)
{
	int64_t left = CFSBW_RUNTIME_INF;
	for (struct cfsbw_group *b = group_first_limited(g); b; b = b->bw_up) {
		int64_t r = group_acct(b, rq)->runtime_remaining;
		if (r < left)
			left = r;
	}
	return left;
}
