/*
 * account.c - charging execution to local accounts (R5, R6, R7).
 *
 * The fast path (runtime left, not throttled) is a load, a subtract and a
 * store on memory owned by the calling runqueue's thread: no lock, no
 * atomic read-modify-write, no allocation.  Only an account that runs dry
 * takes its pool's lock to ask for a slice (seed 003).
 */
#include "core/bandwidth.h"

/*
 * The slow path of one account: it ran dry, or is throttled and accrues
 * debt.  The policy refills it (R6) or says it must throttle (R7).
 */
static cold_path void account_charge_slow(struct cfsbw_group *g,
					   struct cfsbw_account *a,
				int64_t delta_ns, int64_t now_ns)
{
	spin_lock(&g->pool.lock);
	/*
	 * R13: a debt saturates (cfsbw.h); 0 <= delta_ns <= 2^62.  Saturating
	 * never forgives: hardlimits' offline takes back lent runtime from an
	 * account already at the floor, leaving it below, and a charge there
	 * must not raise it (found by fuzz_files).
	 */
	if (a->runtime_remaining < delta_ns - CFSBW_DEBT_MAX_NS) {
		if (a->runtime_remaining > -CFSBW_DEBT_MAX_NS)
			a->runtime_remaining = -CFSBW_DEBT_MAX_NS;
	} else {
		a->runtime_remaining -= delta_ns;
	}
	/* A throttled account that ran on (a tick's overrun) owes it (R13). */
	if (!account_is_throttled(a) && g->tree->steps->refill(g, a, now_ns))
		cfsbw__account_throttle(g, a, now_ns);
	spin_unlock(&g->pool.lock);
}

/*
 * R6's fast path: true when the charge fit in the runtime held locally.
 * The acquire load pairs with the release in cfsbw__account_unthrottle: once
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
	/*
	 * One compare, as unsigned, finds both a negative delta (ignored) and
	 * one above CFSBW_CHARGE_MAX_NS (charged as that much, cfsbw.h), so
	 * that no sum below can overflow.
	 */
	if (unlikely((uint64_t)delta_ns > (uint64_t)CFSBW_CHARGE_MAX_NS)) {
		if (delta_ns < 0)
			return group_throttled(g, rq);
		delta_ns = CFSBW_CHARGE_MAX_NS;
	}
	/*
	 * R5: this group and every limited ancestor, nothing else.  A zero
	 * charge checks for runtime before a task runs.  R11 on the way: the
	 * accounts charged are those that can throttle g, and one that took
	 * the fast path was not throttled (group_throttled() without a
	 * second walk; a slow path only ever throttles its own account).
	 */
	bool throttled = false;
	for (struct cfsbw_group *b = group_first_limited(g); b; b = b->bw_up) {
		struct cfsbw_account *a = group_acct(b, rq);
		if (!account_charge_fast(a, delta_ns)) {
			account_charge_slow(b, a, delta_ns, now_ns);
			throttled |= atomic_load_explicit(&a->throttled,
							  memory_order_relaxed);
		}
	}
	return throttled;
}

bool cfsbw_throttled(const struct cfsbw_group *g, unsigned rq)
{
	return group_throttled(g, rq);
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
