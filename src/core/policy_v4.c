/*
 * policy_v4.c - Paul Turner's CFS Bandwidth Control v4 (seeds 002-008):
 * an account that runs dry takes one slice from the pool; each refresh
 * fills the pool to the quota and gives each throttled account a slice,
 * in the order they throttled; the period timer stops when no account of
 * the group has work.  Defaults (R1, in policy.c's list): period 500 ms,
 * slice 10 ms.
 */
#include "core/bandwidth.h"

/* R6: one slice, min(slice, pool) (seed 003). */
static bool v4_refill(struct cfsbw_group *g, struct cfsbw_account *a,
		      int64_t now_ns)
{
	if (a->runtime_remaining <= 0)
		cfsbw__pool_assign(g, a, g->tree->slice_ns, now_ns);
	return a->runtime_remaining <= 0;
}

/* Seeds 005, 006: a full pool, one count per refresh. */
static bool v4_refresh(struct cfsbw_group *g, int64_t overrun, int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;

	pool->stats.nr_periods += (uint64_t)overrun;
	pool->runtime = pool->quota_ns;
	if (!list_empty(&pool->throttled)) {
		pool->stats.nr_throttled++;
		cfsbw__distribute_slices(g, now_ns);
	}
	/* Idle: no runqueue has tasks of the group, and none waits. */
	return atomic_load_explicit(&pool->nr_busy, memory_order_relaxed) > 0 ||
	       !list_empty(&pool->throttled);
}

/*
 * Unused runtime goes back to the pool (a process that lived 2 ms must not
 * strand the rest of its slice); a debt is forgotten.
 */
static void v4_offline(struct cfsbw_group *g, struct cfsbw_account *a,
		       int64_t now_ns)
{
	(void)now_ns;
	if (a->runtime_remaining > 0)
		cfsbw__pool_return(g, a->runtime_remaining);
	a->runtime_remaining = 0;
}

const struct cfsbw_policy_steps cfsbw__policy_v4 = {
	/* account_reset NULL: an account starts with nothing assigned. */
	.refill = v4_refill,
	.refresh = v4_refresh,
	.offline = v4_offline,
};
