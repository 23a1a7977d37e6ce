/*
 * policy_hardlimits.c - Bharata Rao's "CFS hard limits v5" (seeds 009-011), kept
 * as a second policy to compare with v4 on the same work.
 *
 * The group's runtime is per runqueue, as for real-time groups: every
 * account may use hl_runtime of CPU per period (at first, the group's
 * runtime).  The account's runtime_remaining is hl_runtime minus the time
 * used this period.  An account that exceeds its runtime first borrows
 * from the group's other accounts, from each 1/n of its spare runtime,
 * never holding more than a whole period (do_balance_runtime); only then
 * is it throttled.  At each period the time used decays by one runtime per
 * period elapsed, and a throttled account whose used time falls below its
 * runtime runs again.  Borrowed runtime stays where it went until the
 * group is reconfigured or a runqueue goes away, which first reclaims
 * what it lent.
 *
 * Borrowing reads and writes other runqueues' accounts: this policy is
 * meant for single-threaded drivers (the simulator).  Its refresh walks
 * every runqueue, which is one of the costs the v4 design avoids.
 *
 * A property of the design, kept on purpose: the refresh lets a throttled
 * runqueue borrow from runqueues whose used time has already decayed in
 * the same refresh, and then decays its own used time by its enlarged
 * runtime.  The lent runtime is thus counted twice in that refresh, and a
 * saturated group gets a little more than n x runtime per period (2.08
 * cores for 4 x 50 ms / 100 ms at HZ 250 in the simulator).  Seed 011's
 * do_sched_rt_period_timer balances and decays in the same order.
 */
#include "core/bandwidth.h"

/* Borrow for a from the group's other accounts.  Pool lock held. */
static void hardlimits_borrow(struct cfsbw_group *g, struct cfsbw_account *a)
{
	unsigned n = g->tree->nr_rq;
	int64_t period = g->pool.period_ns;

	for (unsigned i = 0; i < n && a->hl_runtime < period; i++) {
		struct cfsbw_account *it = group_acct(g, i);
		if (it == a)
			continue;
		int64_t spare = it->runtime_remaining; /* runtime - time */
		if (spare <= 0)
			continue;
		int64_t diff = spare / (int64_t)n;
		if (a->hl_runtime + diff > period)
			diff = period - a->hl_runtime;
		it->hl_runtime -= diff;
		it->runtime_remaining -= diff;
		a->hl_runtime += diff;
		a->runtime_remaining += diff;
	}
}

/* An account may use its runtime to the last ns; past it, it borrows. */
static bool hardlimits_refill(struct cfsbw_group *g, struct cfsbw_account *a,
			      int64_t now_ns)
{
	cfsbw__pool_start_timer(g, now_ns);
	if (a->runtime_remaining >= 0)
		return false;
	hardlimits_borrow(g, a);
	return a->runtime_remaining < 0;
}

static bool hardlimits_refresh(struct cfsbw_group *g, int64_t overrun,
			       int64_t now_ns)
{
	struct cfsbw_pool *pool = &g->pool;
	bool any_throttled = !list_empty(&pool->throttled);
	bool idle = true;

	pool->stats.nr_periods += (uint64_t)overrun;
	if (any_throttled)
		pool->stats.nr_throttled++;
	for (unsigned rq = 0; rq < g->tree->nr_rq; rq++) {
		struct cfsbw_account *a = group_acct(g, rq);
		bool throttled = account_is_throttled(a);
		if (throttled)
			hardlimits_borrow(g, a);
		int64_t runtime = a->hl_runtime;
		int64_t used = runtime - a->runtime_remaining;
		/* overrun runtimes, saturated: all used time decays */
		int64_t decay = runtime > 0 && overrun > INT64_MAX / runtime
					? INT64_MAX
					: overrun * runtime;
		used -= used < decay ? used : decay;
		if (used < 0)
			used = 0;
		a->runtime_remaining = runtime - used;
		if (used > 0 || a->h_nr_running > 0)
			idle = false;
		if (throttled && a->runtime_remaining > 0)
			cfsbw__account_unthrottle(g, a, now_ns);
	}
	return !idle || !list_empty(&pool->throttled);
}

/* Every account starts with the group's runtime, nothing used. */
static void hardlimits_account_reset(struct cfsbw_group *g,
				     struct cfsbw_account *a)
{
	a->hl_runtime = g->pool.quota_ns;
	a->runtime_remaining = g->pool.quota_ns;
}

/*
 * The runqueue of a goes away: first take back what it lent, or give back
 * what it borrowed (__disable_runtime), then reset it for reuse.
 */
static void hardlimits_offline(struct cfsbw_group *g, struct cfsbw_account *a,
			       int64_t now_ns)
{
	(void)now_ns;
	int64_t want = g->pool.quota_ns - a->hl_runtime;

	for (unsigned i = 0; i < g->tree->nr_rq && want != 0; i++) {
		struct cfsbw_account *it = group_acct(g, i);
		if (it == a)
			continue;
		int64_t diff = want;
		if (want > 0) {
			diff = it->hl_runtime < want ? it->hl_runtime : want;
			if (diff <= 0)
				continue;
		}
		it->hl_runtime -= diff;
		it->runtime_remaining -= diff;
		want -= diff;
	}
	hardlimits_account_reset(g, a);
}

const struct cfsbw_policy_steps cfsbw__policy_hardlimits = {
	.account_reset = hardlimits_account_reset,
	.refill = hardlimits_refill,
	.refresh = hardlimits_refresh,
	.offline = hardlimits_offline,
};
